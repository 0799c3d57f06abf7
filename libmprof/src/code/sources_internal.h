/*
 * mprof — what sources.c (reading) and sources_embed.c (the SOURCES
 * section) share. Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SOURCES_INTERNAL_H
#define MPROF_SOURCES_INTERNAL_H

#include <stddef.h>

#include "mprof/trace.h"

/* Files larger than this are neither read nor embedded. */
#define MPROF__SOURCE_MAX_BYTES (16u << 20)

/* The bytes of the regular file @p path (NUL-terminated; caller frees) and
 * their count in *size; NULL when it cannot be read or is too large. */
char *mprof__sources_read_file(const char *path, size_t *size);

/* The text of @p path from disk, tried through @p roots (sources.h) and
 * then as it is; *found (may be NULL; caller frees) gets the path read. */
char *mprof__sources_find(const char *path, const char *const *roots,
                          size_t root_count, size_t *size, char **found);

/* The embedded text of @p path in @p trace (caller frees), NULL when the
 * trace keeps none; *listed is 1 when the trace lists @p path (embedded or
 * missing at record time). */
char *mprof__sources_embedded(const mprof_trace *trace, const char *path,
                              size_t *size, int *listed);

/* The SOURCES entries of @p trace: *out (caller frees) gets @p count
 * listings whose paths are in *paths (caller frees); none: NULL and 0.
 * MPROF_ENOMEM. */
struct mprof_source_listing;
int mprof__sources_list(const mprof_trace *trace,
                        struct mprof_source_listing **out, size_t *count,
                        char **paths);

#endif /* MPROF_SOURCES_INTERNAL_H */
