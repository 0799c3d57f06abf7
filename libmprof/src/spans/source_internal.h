/*
 * mprof — internal: what the .source reader, the alignment and the merge
 * share.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SPANS_SOURCE_INTERNAL_H
#define MPROF_SPANS_SOURCE_INTERNAL_H

#include "mprof/source.h"

/* The path @p f was opened from. */
const char *mprof__source_file_path(const mprof_source_file *f);

/* qsort() order of int64_t values. */
int mprof__compare_i64(const void *a, const void *b);

#endif /* MPROF_SPANS_SOURCE_INTERNAL_H */
