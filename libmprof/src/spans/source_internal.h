/*
 * mprof — internal: what the .source reader, the alignment, the merge and
 * the trace built from a .source alone share.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SPANS_SOURCE_INTERNAL_H
#define MPROF_SPANS_SOURCE_INTERNAL_H

#include "mprof/source.h"
#include "mprof/writer.h"

/* The path @p f was opened from. */
const char *mprof__source_file_path(const mprof_source_file *f);

/* The regions of @p f appended to REGIONS, in their order. */
int mprof__source_write_regions(mprof_writer *w, const mprof_source_file *f);

/* The SPANS record of @p r: its SM, block, warp and payload, with the
 * times, launch and region the caller maps them to. */
mprof_span_record mprof__source_span(const mprof_source_file_record *r,
                                     uint64_t start, uint64_t end,
                                     uint32_t launch, uint32_t region);

/* qsort() order of int64_t values. */
int mprof__compare_i64(const void *a, const void *b);

#endif /* MPROF_SPANS_SOURCE_INTERNAL_H */
