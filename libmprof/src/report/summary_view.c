/*
 * mprof — the summary report's shared view: processes of a set, which stalls
 * and dimensions show, speed of light, and the memory accesses busiest
 * first.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "summary_internal.h"

/* ---- the processes of a merged set ------------------------------------- */

const char *mprof__summary_process_meta(const mprof__summary_view *v,
                                        uint32_t p, const char *key) {
  const char *value = mprof_trace_process_meta(v->trace, p, key);
  return value && *value ? value : "?";
}

/* "pid 202, rank 1 on node1" for a kernel of one process of a set; "2
 * processes" for one of several; "" in the trace of one process. */
void mprof__summary_process_label(char *out, size_t size,
                                  const mprof__summary_view *v,
                                  const mprof_kernel_stats *s) {
  *out = '\0';
  if (mprof_trace_process_count(v->trace) < 2)
    return;
  if (s->process == MPROF_INDEX_NONE) {
    if (s->process_count > 1)
      snprintf(out, size, "%u processes", s->process_count);
    return;
  }
  const char *rank = mprof_trace_process_meta(v->trace, s->process, "rank");
  snprintf(out, size, "pid %s%s%s on %s",
           mprof__summary_process_meta(v, s->process, "pid"),
           rank && *rank ? ", rank " : "", rank && *rank ? rank : "",
           mprof__summary_process_meta(v, s->process, "host"));
}

size_t mprof__summary_stalls_shown(const mprof_kernel_diagnosis *k) {
  size_t n = 0;
  while (n < k->stall_count && n < STALLS_SHOWN &&
         k->stalls[n].share >= STALL_MIN_SHARE)
    n++;
  return n;
}

/* XML and JSON: every dimension, but those from spans only in traces that
 * have spans. The text (and the viewer) show fewer, as
 * mprof_diagnosis_dimension_reported() says. */
int mprof__summary_dimension_shown(const mprof__summary_view *v,
                                   const mprof_dimension *dim) {
  size_t spans;
  if (dim->id < MPROF_DIM_FIRST_SPAN)
    return 1;
  mprof_trace_spans(v->trace, &spans);
  return spans > 0;
}

/* ---- speed of light (PM samples) ----------------------------------------- */

/* Labels name the quantity: "L2" is ncu's "L2 Cache Throughput" (the
 * busiest L2 unit), "L2 sectors" the sector throughput mprof samples by
 * default, "L1/shared" ncu's "L1/TEX Cache Throughput", "compute" its
 * "Compute (SM) Throughput" (docs/DIAGNOSIS.md, "Speed of light"). */
const mprof__sol_label mprof__sol_text[MPROF__SOL_TEXT_COUNT] = {
    {MPROF_COUNTER_DRAM, "DRAM"},     {MPROF_COUNTER_L2_THROUGHPUT, "L2"},
    {MPROF_COUNTER_L2, "L2 sectors"}, {MPROF_COUNTER_L1TEX, "L1/shared"},
    {MPROF_COUNTER_SM_ACTIVE, "SMs"}, {MPROF_COUNTER_WARPS_ACTIVE, "warps"},
    {MPROF_COUNTER_ISSUE, "issue"},   {MPROF_COUNTER_TENSOR, "tensor"},
    {MPROF_COUNTER_FMA, "FMA"},       {MPROF_COUNTER_SM_THROUGHPUT, "compute"}};

int mprof__summary_sol_shown(const mprof__summary_view *v) {
  return mprof_throughput_available(mprof_diagnosis_throughput(v->d));
}

/* The join orders and sums them (mprof_join_memory_busiest(),
 * mprof_join_memory_totals()); the report keeps max_hot of them. */
int mprof__summary_memory_view_build(mprof__summary_memory *mv,
                                     const mprof__summary_view *v,
                                     const mprof_kernel_diagnosis *k) {
  memset(mv, 0, sizeof *mv);
  size_t count = mprof_join_memory_busiest(v->join, k->kernel, NULL, 0);
  if (!count)
    return 0;
  mv->order = (const mprof_memory_stats **)malloc(count * sizeof *mv->order);
  if (!mv->order)
    return 0;
  mprof_join_memory_busiest(v->join, k->kernel, mv->order, count);
  mv->efficiency = mprof_join_memory_totals(v->join, k->kernel, &mv->warps,
                                            &mv->bytes, &mv->sectors);
  mv->count = count;
  mv->shown = count < v->opts->max_hot ? count : v->opts->max_hot;
  return 1;
}
