/*
 * mprof — what the summary's writers share (summary_view.c): the view of a
 * report, computed once, and the helpers every format asks.
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

/* META @p key of process @p p, "?" when unknown. */
const char *mprof__summary_process_meta(const mprof__summary_view *v,
                                        uint32_t p, const char *key);
/* "pid 202, rank 1 on node1" for a kernel of one process of a set; "2
 * processes" for one of several; "" in the trace of one process. */
void mprof__summary_process_label(char *out, size_t size,
                                  const mprof__summary_view *v,
                                  const mprof_kernel_stats *s);
size_t mprof__summary_stalls_shown(const mprof_kernel_diagnosis *k);
/* Which dimensions XML and JSON show: those from spans only in traces
 * that have spans. */
int mprof__summary_dimension_shown(const mprof__summary_view *v,
                                   const mprof_dimension *dim);
/* Speed of light: whether the trace has PM samples. */
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

/* A megakernel's summary (summary_mega.c): of a trace imported from a
 * Megakernels MKPROF, per instruction type, GPU and SM. */
typedef struct mprof__mega_type {
  const char *name; /* owned by the trace */
  uint64_t instructions, time_ns;
  uint64_t unit_ns[3]; /* loader, consumer, storer busy within them */
} mprof__mega_type;
typedef struct mprof__mega_sm {
  uint32_t gpu, sm;
  uint64_t instructions, busy_ns, start, finish;
} mprof__mega_sm;
typedef struct mprof__mega_gpu {
  uint32_t sms, last_sm;
  uint64_t instructions, busy_ns, start, finish, tail_ns;
  uint64_t min_busy_ns, median_busy_ns, max_busy_ns;
} mprof__mega_gpu;
typedef struct mprof__mega {
  size_t type_count;
  mprof__mega_type *types;
  uint64_t *type_gpu_ns; /* [type][gpu] */
  uint32_t gpu_count;    /* device ids 0..gpu_count-1 */
  mprof__mega_gpu *gpus;
  size_t sm_count;
  mprof__mega_sm *sms;
  uint64_t *sm_type_ns; /* [sm][type] */
  uint64_t instructions, time_ns, unit_ns[3];
} mprof__mega;
/* 1 with @p m filled for a trace imported from MKPROF with spans, else 0
 * (and nothing to free). */
int mprof__mega_build(mprof__mega *m, const mprof_trace *t);
void mprof__mega_free(mprof__mega *m);
void mprof__mega_text(FILE *f, const mprof__mega *m, const mprof__style *st);
void mprof__mega_fields(mprof__fields *doc, const mprof__mega *m);

/* The formats: XML or JSON (summary_fields.c), text (summary_text.c). */
void mprof__summary_fields(FILE *f, const mprof__summary_view *v, int json);
void mprof__summary_text(FILE *f, const mprof__summary_view *v,
                         const mprof__style *st);

#endif
