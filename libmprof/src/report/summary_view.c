/*
 * mprof — the summary report's shared view: processes of a set, which stalls,
 * dimensions and metrics show, speed of light, and the memory accesses
 * busiest first.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/names.h"
#include "mprof/version.h"
#include "report_internal.h"
#include "summary_internal.h"

/* ---- the processes of a merged set ------------------------------------- */

/* META @p key of process @p p, "?" when unknown. */
static const char *process_meta(const mprof__summary_view *v, uint32_t p,
                                const char *key) {
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
  snprintf(out, size, "pid %s%s%s on %s", process_meta(v, s->process, "pid"),
           rank && *rank ? ", rank " : "", rank && *rank ? rank : "",
           process_meta(v, s->process, "host"));
}

size_t mprof__summary_stalls_shown(const mprof_kernel_diagnosis *k) {
  size_t n = 0;
  while (n < k->stall_count && n < STALLS_SHOWN &&
         k->stalls[n].share >= STALL_MIN_SHARE)
    n++;
  return n;
}

static const char *reason_dimension_key(uint32_t dimension) {
  return dimension < MPROF_DIM_COUNT_ ? mprof_dimension_key(dimension)
                                      : "other";
}

/* Dimensions from spans appear only in traces that have spans. */
int mprof__summary_dimension_shown(const mprof__summary_view *v,
                                   const mprof_dimension *dim) {
  size_t spans;
  if (dim->id < MPROF_DIM_FIRST_SPAN)
    return 1;
  mprof_trace_spans(v->trace, &spans);
  return spans > 0;
}

/* Metrics printed with decimals; the others are whole numbers. */
int mprof__summary_metric_integral(const mprof_metric *metric) {
  return strcmp(metric->unit, "fraction") != 0 &&
         strcmp(metric->unit, "waves") != 0 &&
         strcmp(metric->unit, "ratio") != 0;
}

static const char *sidecar_state(const mprof__summary_view *v) {
  return mprof_join_sidecar(v->join) ? "present" : "absent";
}

static uint64_t trace_span(const mprof_trace *t) {
  uint64_t a, b;
  mprof_trace_time_bounds(t, &a, &b);
  return b - a;
}

void mprof__summary_trace_fields(mprof__fields *o,
                                 const mprof__summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t launches;
  mprof_trace_launches(t, &launches);
  const char *pc_mode = mprof_trace_meta(t, "pc.mode");
  mprof__fields_str(o, "path", mprof_trace_path(t));
  mprof__fields_u64(o, "bytes", mprof_trace_file_size(t));
  mprof__fields_u64(o, "launches", launches);
  mprof__fields_u64(o, "kernels", mprof_join_kernel_count(v->join));
  mprof__fields_u64(o, "kernel_time_ns", mprof_join_kernel_time(v->join));
  mprof__fields_u64(o, "span_ns", trace_span(t));
  mprof__fields_u64(o, "samples", mprof_join_sample_total(v->join));
  mprof__fields_str(o, "pc_mode", pc_mode ? pc_mode : "unknown");
  mprof__fields_str(o, "sidecar", sidecar_state(v));
}

void mprof__summary_device_fields(mprof__fields *o,
                                  const mprof__summary_view *v, size_t i) {
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(v->trace, &devices);
  if (i >= devices)
    return;
  char cc[24];
  snprintf(cc, sizeof cc, "%u.%u", dev[i].cc_major, dev[i].cc_minor);
  mprof__fields_u64(o, "index", i);
  mprof__fields_u64(o, "id", dev[i].id);
  mprof__fields_str(o, "name", mprof_trace_string(v->trace, dev[i].name));
  mprof__fields_str(o, "cc", cc);
  mprof__fields_u64(o, "sms", dev[i].sm_count);
}

void mprof__summary_process_fields(mprof__fields *o,
                                   const mprof__summary_view *v, size_t i) {
  static const char *const keys[] = {"pid", "ppid", "host", "rank", "path"};
  mprof__fields_u64(o, "index", i);
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    mprof__fields_str(o, keys[k], process_meta(v, (uint32_t)i, keys[k]));
}

/* ---- speed of light (PM samples) ----------------------------------------- */

/* Counters shown, in order; the clock is left to the JSON. */
const uint32_t mprof__summary_sol_counters[] = {
    MPROF_COUNTER_DRAM,      MPROF_COUNTER_DRAM_BYTES,
    MPROF_COUNTER_L2,        MPROF_COUNTER_L2_BYTES,
    MPROF_COUNTER_SM_ACTIVE, MPROF_COUNTER_WARPS_ACTIVE,
    MPROF_COUNTER_ISSUE,     MPROF_COUNTER_TENSOR,
    MPROF_COUNTER_FMA,       MPROF_COUNTER_ALU,
    MPROF_COUNTER_CLOCK};

const mprof__sol_label mprof__sol_text[MPROF__SOL_TEXT_COUNT] = {
    {MPROF_COUNTER_DRAM, "DRAM"},     {MPROF_COUNTER_L2, "L2"},
    {MPROF_COUNTER_SM_ACTIVE, "SMs"}, {MPROF_COUNTER_WARPS_ACTIVE, "warps"},
    {MPROF_COUNTER_ISSUE, "issue"},   {MPROF_COUNTER_TENSOR, "tensor"},
    {MPROF_COUNTER_FMA, "FMA"}};

int mprof__summary_sol_shown(const mprof__summary_view *v) {
  return mprof_throughput_available(mprof_diagnosis_throughput(v->d));
}

/* Percentages become fractions in XML and JSON, like every share. */
static double sol_value(const mprof_kernel_throughput *t, uint32_t c) {
  double x = t->value[c];
  return strcmp(mprof_counter_unit(c), "percent") == 0 ? x / 100.0 : x;
}

static const char *sol_status(const mprof_kernel_throughput *t) {
  return t->samples ? "measured" : t->partial ? "too_short" : "not_sampled";
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

void mprof__summary_throughput_fields(mprof__fields *o,
                                      const mprof_kernel_throughput *t) {
  mprof__fields_str(o, "status", sol_status(t));
  mprof__fields_u64(o, "samples", t->samples);
  mprof__fields_u64(o, "partial_samples", t->partial);
  mprof__fields_u64(o, "interval_ns", t->interval_ns);
  mprof__fields_num(o, "shared", t->samples ? t->shared : NAN, 4);
  for (size_t i = 0; i < MPROF__SUMMARY_SOL_COUNT; i++) {
    uint32_t c = mprof__summary_sol_counters[i];
    int fraction = strcmp(mprof_counter_unit(c), "percent") == 0;
    double value = t->samples && !isnan(t->value[c]) ? sol_value(t, c) : NAN;
    mprof__fields_num(o, mprof_counter_key(c), value, fraction ? 4 : 0);
  }
}

void mprof__summary_memory_fields(mprof__fields *o,
                                  const mprof__summary_memory *mv) {
  mprof__fields_u64(o, "instructions", mv->count);
  if (!o->json) /* JSON's accesses array says how many are shown */
    mprof__fields_u64(o, "shown", mv->shown);
  mprof__fields_u64(o, "omitted", mv->count - mv->shown);
  mprof__fields_u64(o, "warp_accesses", mv->warps);
  mprof__fields_u64(o, "bytes", mv->bytes);
  mprof__fields_u64(o, "sectors", mv->sectors);
  mprof__fields_num(o, "efficiency", mv->efficiency, 4);
}

void mprof__summary_access_fields(mprof__fields *o,
                                  const mprof_memory_stats *x) {
  mprof__fields_hex(o, "offset", x->offset);
  mprof__fields_str(o, "kind", mprof_memory_kind_name(x->flags));
  mprof__fields_u64(o, "access_size", x->access_size);
  mprof__fields_u64(o, "warp_accesses", x->warp_accesses);
  mprof__fields_u64(o, "thread_accesses", x->thread_accesses);
  mprof__fields_u64(o, "bytes", x->bytes);
  mprof__fields_u64(o, "sectors", x->sectors);
  mprof__fields_num(o, "efficiency", x->efficiency, 4);
  mprof__fields_str(
      o, "sass",
      x->instruction && x->instruction->opcode ? x->instruction->opcode : NULL);
}

void mprof__summary_kernel_fields(mprof__fields *o,
                                  const mprof__summary_view *v, size_t rank,
                                  const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  char short_name[256];
  mprof__fields_u64(o, "rank", rank);
  mprof__fields_str(o, "name", s->name);
  mprof__fields_str(o, "short_name",
                    mprof_name_short(short_name, sizeof short_name, s->name));
  mprof__fields_str(o, "mangled", s->mangled);
  mprof__fields_num(
      o, "device",
      s->device_id != MPROF_INDEX_NONE ? (double)s->device_id : NAN, 0);
  if (mprof_trace_process_count(v->trace) > 1) {
    if (s->process_count) /* 0: a set merged before processes were kept */
      mprof__fields_u64(o, "processes", s->process_count);
    if (s->process != MPROF_INDEX_NONE) {
      mprof__fields_u64(o, "process", s->process);
      mprof__fields_str(o, "pid", process_meta(v, s->process, "pid"));
      mprof__fields_str(o, "host", process_meta(v, s->process, "host"));
      mprof__fields_str(o, "process_rank", process_meta(v, s->process, "rank"));
    }
  }
  mprof__fields_num(o, "share", s->share, 4);
  mprof__fields_num(o, "device_share", s->device_share, 4);
  mprof__fields_u64(o, "launches", s->launches);
  mprof__fields_u64(o, "total_ns", s->total_ns);
  mprof__fields_num(o, "mean_ns", s->mean_ns, 0);
  mprof__fields_u64(o, "median_ns", s->median_ns);
  mprof__fields_u64(o, "p90_ns", s->p90_ns);
  mprof__fields_u64(o, "min_ns", s->min_ns);
  mprof__fields_u64(o, "max_ns", s->max_ns);
  mprof__fields_num(o, "stddev_ns", s->stddev_ns, 0);
  mprof__fields_u64(o, "samples", s->samples);
}

void mprof__summary_stalls_fields(mprof__fields *o,
                                  const mprof_kernel_diagnosis *k,
                                  size_t shown) {
  mprof__fields_u64(o, "samples", k->stats->samples);
  mprof__fields_u64(o, "not_issued", k->stats->not_issued);
  mprof__fields_num(o, "issue_active",
                    k->issue_active >= 0 ? k->issue_active : NAN, 4);
  mprof__fields_num(o, "other_share", k->other_share, 4);
  if (!o->json) { /* JSON's reasons array says how many are shown */
    mprof__fields_u64(o, "reasons", k->stall_count);
    mprof__fields_u64(o, "shown", shown);
  }
  mprof__fields_u64(o, "omitted", k->stall_count - shown);
}

void mprof__summary_stall_fields(mprof__fields *o,
                                 const mprof_reason_share *r) {
  mprof__fields_str(o, "name", r->reason);
  mprof__fields_str(o, "dimension", reason_dimension_key(r->dimension));
  mprof__fields_num(o, "share", r->share, 4);
  mprof__fields_u64(o, "samples", r->samples);
}

void mprof__summary_hot_header_fields(mprof__fields *o,
                                      const mprof_kernel_diagnosis *k,
                                      size_t shown) {
  mprof__fields_u64(o, "sampled_pcs", k->stats->pc_count);
  if (!o->json)
    mprof__fields_u64(o, "shown", shown);
  mprof__fields_u64(o, "omitted", k->stats->pc_count - shown);
}

void mprof__summary_hot_fields(mprof__fields *o,
                               const mprof_hot_instruction *h) {
  char crc[32];
  snprintf(crc, sizeof crc, "0x%llx", (unsigned long long)h->cubin_crc);
  mprof__fields_hex(o, "offset", h->offset);
  mprof__fields_num(o, "share", h->share, 4);
  mprof__fields_u64(o, "samples", h->samples);
  mprof__fields_str(o, "sass", *h->sass ? h->sass : NULL);
  mprof__fields_str(o, "file", *h->file ? h->file : NULL);
  mprof__fields_num(o, "line", *h->file ? (double)h->line : NAN, 0);
  mprof__fields_str(o, "cubin_crc", crc);
}
