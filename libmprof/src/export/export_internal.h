/*
 * mprof — what the exports share: the kernels a set of traces selects, a
 * file name, and the writers (docs/EXPORT.md). Internal to
 * export/.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_EXPORT_INTERNAL_H
#define MPROF_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mprof/export.h"

/* selected[t][k]: whether kernel k of trace t passes opts->kernel. */
typedef struct mprof__export_selection {
  unsigned char **selected;
  size_t count;
} mprof__export_selection;

/* What, besides the GPU work's own time bounds and the NVTX ranges, may
 * start a trace's time axis (mprof__export_origin()). */
enum {
  MPROF__ORIGIN_API_CALLS = 1u << 0,
  MPROF__ORIGIN_SPANS = 1u << 1,
  MPROF__ORIGIN_PM_SAMPLES = 1u << 2
};

/* The earliest start of @p count traces (0 when they hold nothing): their
 * time bounds, NVTX ranges and the records @p with names. Each export's
 * time axis starts there. */
uint64_t mprof__export_origin(const mprof_diagnosis *const *traces,
                              size_t count, unsigned with);

/* The file name of @p path, without its directory. */
static inline const char *mprof__export_base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Trace Event Format (Chrome, Perfetto), export_trace_events.c; @p events
 * receives the number of events written. */
int mprof__export_trace_events(FILE *f, const mprof_diagnosis *const *traces,
                               size_t count, const mprof__export_selection *sel,
                               size_t *events);

/* Perfetto's protobuf trace, export_perfetto.c; @p events receives the
 * number of track events written. */
int mprof__export_perfetto(FILE *f, const mprof_diagnosis *const *traces,
                           size_t count, const mprof__export_selection *sel,
                           size_t *events);

/* Kineto's JSON (torch.profiler), export_kineto.c: one trace of one
 * process; @p events receives the number of events written. */
int mprof__export_kineto(FILE *f, const mprof_diagnosis *const *traces,
                         size_t count, const mprof__export_selection *sel,
                         size_t *events);

/* speedscope, export_speedscope.c. */
int mprof__export_speedscope(FILE *f, const mprof_diagnosis *const *traces,
                             size_t count, const mprof__export_selection *sel,
                             int filtered, mprof_export_report *rep);

/* SQLite (export_sqlite.c, built with libsqlite3): the database at
 * @p path, a new empty file the caller renames when this succeeds. */
int mprof__export_sqlite(const char *path, const mprof_diagnosis *const *traces,
                         size_t count, const mprof__export_selection *sel,
                         const mprof_export_options *opts,
                         mprof_export_report *rep);

#endif
