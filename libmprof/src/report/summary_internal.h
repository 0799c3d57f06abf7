/*
 * mprof — what the summary's three writers share (mprof__summary_view.c): the
 * view of a report, computed once, and the helpers every format asks.
 * Internal to report/.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SUMMARY_INTERNAL_H
#define MPROF_SUMMARY_INTERNAL_H

#include <stdio.h>

#include "report_internal.h"

#define SHAPES_SHOWN 3
#define STALLS_SHOWN 8
#define STALL_MIN_SHARE 0.01 /* smaller reasons are counted as omitted */

/* What the report shows, computed once for all three formats. */
typedef struct mprof__summary_view {
  const mprof_diagnosis *d;
  const mprof_join *join;
  const mprof_trace *trace;
  const mprof_report_options *opts;
  size_t *selected;
  size_t matched, shown;
  double omitted_share;
} mprof__summary_view;

/* "pid 202, rank 1 on node1" for a kernel of one process of a set; "2
 * processes" for one of several; "" in the trace of one process. */
void mprof__summary_process_label(char *out, size_t size,
                                  const mprof__summary_view *v,
                                  const mprof_kernel_stats *s);
size_t mprof__summary_stalls_shown(const mprof_kernel_diagnosis *k);
/* Dimensions from spans appear only in traces that have spans. */
int mprof__summary_dimension_shown(const mprof__summary_view *v,
                                   const mprof_dimension *dim);
/* Metrics printed with decimals; the others are whole numbers. */
int mprof__summary_metric_integral(const mprof_metric *metric);

/* The fields of the report's trace, its device @p i and its process @p i,
 * the same in the JSON and the XML report. */
void mprof__summary_trace_fields(mprof__fields *o,
                                 const mprof__summary_view *v);
void mprof__summary_device_fields(mprof__fields *o,
                                  const mprof__summary_view *v, size_t i);
void mprof__summary_process_fields(mprof__fields *o,
                                   const mprof__summary_view *v, size_t i);

static inline const mprof_device_record *
mprof__summary_kernel_device(const mprof__summary_view *v,
                             const mprof_kernel_stats *ks) {
  size_t n;
  const mprof_device_record *dev = mprof_trace_devices(v->trace, &n);
  return ks->device < n ? &dev[ks->device] : NULL;
}

/* Speed of light (PM samples): the counters shown, in order; the clock is
 * left to the JSON. */
#define MPROF__SUMMARY_SOL_COUNT 11
extern const uint32_t mprof__summary_sol_counters[MPROF__SUMMARY_SOL_COUNT];
int mprof__summary_sol_shown(const mprof__summary_view *v);

/* The kernel's counted memory instructions, busiest first, and their
 * totals; NULL (count 0) when none were counted. The caller frees. */
typedef struct mprof__summary_memory {
  const mprof_memory_stats **order;
  size_t count, shown;
  uint64_t warps, bytes, sectors;
  double efficiency; /* sector efficiency of them all */
} mprof__summary_memory;
int mprof__summary_memory_view_build(mprof__summary_memory *mv,
                                     const mprof__summary_view *v,
                                     const mprof_kernel_diagnosis *k);

/* A kernel's rank, names, device, process and launch statistics. */
void mprof__summary_kernel_fields(mprof__fields *o,
                                  const mprof__summary_view *v, size_t rank,
                                  const mprof_kernel_diagnosis *k);
/* A kernel's stall header (@p shown reasons listed) and one reason; its
 * hot-instruction header and one hot instruction. */
void mprof__summary_stalls_fields(mprof__fields *o,
                                  const mprof_kernel_diagnosis *k,
                                  size_t shown);
void mprof__summary_stall_fields(mprof__fields *o, const mprof_reason_share *r);
void mprof__summary_hot_header_fields(mprof__fields *o,
                                      const mprof_kernel_diagnosis *k,
                                      size_t shown);
void mprof__summary_hot_fields(mprof__fields *o,
                               const mprof_hot_instruction *h);
/* A kernel's counted memory accesses and one access, the same in the JSON
 * and the XML report. */
void mprof__summary_memory_fields(mprof__fields *o,
                                  const mprof__summary_memory *mv);
void mprof__summary_access_fields(mprof__fields *o,
                                  const mprof_memory_stats *x);

/* The three formats: summary_xml.c, summary_json.c, summary_text.c. */
void mprof__summary_xml(FILE *f, const mprof__summary_view *v);
void mprof__summary_json(FILE *f, const mprof__summary_view *v);
void mprof__summary_text(FILE *f, const mprof__summary_view *v,
                         const mprof__style *st);

#endif
