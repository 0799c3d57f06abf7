/*
 * mprof — the summary report as XML (docs/SUMMARY-SCHEMA.md) and JSON
 * (docs/summary.schema.json): one walk over the view, its fields written
 * as XML attributes or JSON members through base/text.h's mprof__fields.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/set.h"
#include "report_internal.h"
#include "summary_internal.h"

/* ---- the trace, its devices and processes -------------------------------- */

static void trace_fields(mprof__fields *o, const mprof__summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t launches = mprof__trace_records(t, MPROF_SECTION_LAUNCHES);
  uint64_t first, last;
  mprof_trace_time_bounds(t, &first, &last);
  const char *pc_mode = mprof_trace_meta(t, "pc.mode");
  mprof__fields_str(o, "path", mprof_trace_path(t));
  mprof__fields_u64(o, "bytes", mprof_trace_file_size(t));
  mprof__fields_u64(o, "launches", launches);
  mprof__fields_u64(o, "kernels", mprof_join_kernel_count(v->join));
  mprof__fields_u64(o, "kernel_time_ns", mprof_join_kernel_time(v->join));
  mprof__fields_u64(o, "span_ns", last - first);
  mprof__fields_u64(o, "samples", mprof_join_sample_total(v->join));
  mprof__fields_str(o, "pc_mode", pc_mode ? pc_mode : "unknown");
  mprof__fields_str(o, "sidecar",
                    mprof_join_sidecar(v->join) ? "present" : "absent");
}

/* The DEVICES index of GPU @p gpu: the devices of a set's processes that
 * are one GPU are listed once, as the first of them. */
static size_t gpu_device(const mprof__summary_view *v, size_t gpu) {
  size_t devices;
  mprof_trace_devices(v->trace, &devices);
  for (size_t d = 0; d < devices; d++)
    if (mprof_join_device_as(v->join, (uint32_t)d) == d && gpu-- == 0)
      return d;
  return 0; /* not reached: records() asks for the GPUs there are */
}

static void device_fields(mprof__fields *o, const void *view, size_t gpu) {
  const mprof__summary_view *v = (const mprof__summary_view *)view;
  size_t devices, i = gpu_device(v, gpu);
  const mprof_device_record *dev = mprof_trace_devices(v->trace, &devices);
  char cc[24];
  snprintf(cc, sizeof cc, "%u.%u", dev[i].cc_major, dev[i].cc_minor);
  mprof__fields_u64(o, "index", i);
  mprof__fields_u64(o, "id", dev[i].id);
  mprof__fields_str(o, "name", mprof_trace_string(v->trace, dev[i].name));
  mprof__fields_str(o, "cc", cc);
  mprof__fields_u64(o, "sms", dev[i].sm_count);
}

static void process_fields(mprof__fields *o, const void *view, size_t i) {
  static const char *const keys[] = {"pid", "ppid", "host", "rank", "path"};
  const mprof__summary_view *v = (const mprof__summary_view *)view;
  mprof__fields_u64(o, "index", i);
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    mprof__fields_str(o, keys[k],
                      mprof__summary_process_meta(v, (uint32_t)i, keys[k]));
}

/* ---- speed of light (PM samples) ----------------------------------------- */

/* Counters shown, in order; the clock is left to the JSON. */
static const uint32_t sol_counters[] = {
    MPROF_COUNTER_DRAM,      MPROF_COUNTER_DRAM_BYTES,
    MPROF_COUNTER_L2,        MPROF_COUNTER_L2_BYTES,
    MPROF_COUNTER_SM_ACTIVE, MPROF_COUNTER_WARPS_ACTIVE,
    MPROF_COUNTER_ISSUE,     MPROF_COUNTER_TENSOR,
    MPROF_COUNTER_FMA,       MPROF_COUNTER_ALU,
    MPROF_COUNTER_CLOCK,     MPROF_COUNTER_L2_THROUGHPUT,
    MPROF_COUNTER_L1TEX,     MPROF_COUNTER_SM_THROUGHPUT};

static const char *sol_status(const mprof_kernel_throughput *t) {
  return t->samples ? "measured" : t->partial ? "too_short" : "not_sampled";
}

void mprof__summary_throughput(mprof__fields *parent,
                               const mprof_kernel_throughput *t) {
  mprof__fields o;
  mprof__fields_open(&o, parent, "throughput", "throughput");
  mprof__fields_str(&o, "status", sol_status(t));
  mprof__fields_u64(&o, "samples", t->samples);
  mprof__fields_u64(&o, "partial_samples", t->partial);
  mprof__fields_u64(&o, "interval_ns", t->interval_ns);
  mprof__fields_num(&o, "shared", t->samples ? t->shared : NAN, 4);
  for (size_t i = 0; i < sizeof sol_counters / sizeof sol_counters[0]; i++) {
    uint32_t c = sol_counters[i];
    /* Percentages become fractions in XML and JSON, like every share. */
    int fraction = strcmp(mprof_counter_unit(c), "percent") == 0;
    double value = t->samples ? t->value[c] / (fraction ? 100.0 : 1.0) : NAN;
    mprof__fields_num(&o, mprof_counter_key(c), value, fraction ? 4 : 0);
  }
  mprof__fields_close(&o);
}

/* ---- a kernel ------------------------------------------------------------ */

static void kernel_fields(mprof__fields *o, const mprof__summary_view *v,
                          size_t rank, const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  mprof__fields_u64(o, "rank", rank);
  mprof__report_kernel_names(o, s->name,
                             mprof_join_kernel_short(v->join, k->kernel),
                             s->mangled, s->device_id);
  if (mprof_trace_process_count(v->trace) > 1) {
    if (s->process_count) /* 0: a set merged before processes were kept */
      mprof__fields_u64(o, "processes", s->process_count);
    if (s->process != MPROF_INDEX_NONE) {
      mprof__fields_u64(o, "process", s->process);
      mprof__fields_str(o, "pid",
                        mprof__summary_process_meta(v, s->process, "pid"));
      mprof__fields_str(o, "host",
                        mprof__summary_process_meta(v, s->process, "host"));
      mprof__fields_str(o, "process_rank",
                        mprof__summary_process_meta(v, s->process, "rank"));
    }
  }
  if (s->flags & MPROF_KERNEL_MPROF_OWN)
    mprof__fields_raw(o, "mprof_own", "true");
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

static void verdict(mprof__fields *parent, const mprof_kernel_diagnosis *k) {
  mprof__fields o;
  mprof__fields_open(&o, parent, "verdict", "verdict");
  mprof__fields_str(&o, "dimension",
                    k->verdict_dimension < MPROF_DIM_COUNT_
                        ? mprof_dimension_key(k->verdict_dimension)
                    : o.json ? NULL
                             : "none");
  mprof__fields_str(&o, "state", mprof_state_name(k->verdict_state));
  if (k->roof)
    mprof__fields_str(&o, "roof", k->roof);
  if (k->verdict_dimension < MPROF_DIM_COUNT_) {
    mprof__fields_num(&o, "gain", k->gain, 4);
    mprof__fields_str(&o, "gain_bound", mprof_gain_bound_name(k->gain_bound));
    mprof__fields_str(&o, "gain_of", k->gain_of_stream ? "stream" : "kernel");
    mprof__fields_num(&o, "saved_ns", k->saved_ns, 0);
  }
  mprof__fields_text(&o, "text", k->verdict);
  mprof__fields_close(&o);
}

/* A grid, block or cluster: "1,2,3" in XML, [1,2,3] in JSON. */
static void dims3(mprof__fields *o, const char *name, const uint32_t v[3]) {
  char text[48];
  snprintf(text, sizeof text, "%s%u,%u,%u%s", o->json ? "[" : "", v[0], v[1],
           v[2], o->json ? "]" : "");
  mprof__fields_raw(o, name, text);
}

static void shape_fields(mprof__fields *o, const mprof_shape_stats *s,
                         const mprof_occupancy *occ, uint64_t kernel_total) {
  dims3(o, "grid", s->grid);
  dims3(o, "block", s->block);
  if (o->json || s->cluster[0] || s->cluster[1] || s->cluster[2])
    dims3(o, "cluster", s->cluster); /* XML: only a cluster launch's */
  mprof__fields_u64(o, "registers", s->registers);
  mprof__fields_u64(o, "static_shared", s->static_shared);
  mprof__fields_u64(o, "dynamic_shared", s->dynamic_shared);
  mprof__fields_u64(o, "launches", s->launches);
  mprof__fields_num(
      o, "share", kernel_total ? (double)s->total_ns / (double)kernel_total : 0,
      4);
  mprof__fields_num(o, "mean_ns", s->mean_ns, 0);
  if (!occ->known) {
    mprof__fields_str(o, "occupancy", NULL);
    return;
  }
  /* An object in JSON; in XML attributes of the shape, the theoretical
   * occupancy named "occupancy". */
  mprof__fields x;
  mprof__fields_open(&x, o, NULL, "occupancy");
  mprof__fields_num(&x, o->json ? "theoretical" : "occupancy", occ->theoretical,
                    4);
  mprof__fields_u64(&x, "blocks_per_sm", occ->blocks_per_sm);
  if (o->json) {
    mprof__fields_u64(&x, "active_warps", occ->active_warps);
    mprof__fields_u64(&x, "max_warps", occ->max_warps);
  }
  mprof__fields_str(&x, "limiter", mprof_occupancy_limiter_name(occ->limiter));
  mprof__fields_num(&x, "waves", occ->blocks_per_sm ? occ->waves : NAN, 3);
  mprof__fields_num(&x, "tail_efficiency",
                    occ->blocks_per_sm ? occ->tail_efficiency : NAN, 4);
  mprof__fields_close(&x);
}

static void shapes(mprof__fields *parent, const mprof__summary_view *v,
                   const mprof_kernel_diagnosis *k) {
  size_t count;
  const mprof_shape_stats *shape =
      mprof_join_shapes(v->join, k->kernel, &count);
  size_t shown = count < SHAPES_SHOWN ? count : SHAPES_SHOWN;
  mprof__fields o, items, x;
  mprof__fields_open(&o, parent, "shapes", "shapes");
  mprof__fields_u64(&o, "count", count);
  mprof__report_shown(&o, shown, count);
  mprof__fields_expand(&o);
  mprof__fields_list(&items, &o, NULL, "items");
  for (size_t i = 0; i < shown; i++) {
    mprof__fields_open(&x, &items, "shape", NULL);
    shape_fields(&x, &shape[i], mprof_kernel_diagnosis_shape(k, i),
                 k->stats->total_ns);
    mprof__fields_close(&x);
  }
  mprof__fields_close(&items);
  mprof__fields_close(&o);
}

/* Metrics printed with decimals; the others are whole numbers. */
static int metric_integral(const mprof_metric *metric) {
  return strcmp(metric->unit, "fraction") != 0 &&
         strcmp(metric->unit, "waves") != 0 &&
         strcmp(metric->unit, "ratio") != 0;
}

/* The dimensions by key: an object in JSON, <dimension name=...> in XML,
 * whose metrics are its attributes. */
static void dimensions(mprof__fields *parent, const mprof__summary_view *v,
                       const mprof_kernel_diagnosis *k) {
  mprof__fields o, d, metrics;
  mprof__fields_open(&o, parent, "dimensions", "dimensions");
  mprof__fields_expand(&o);
  for (size_t i = 0; i < k->dimension_count; i++) {
    const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(k, i);
    if (!mprof__summary_dimension_shown(v, dim))
      continue;
    mprof__fields_open(&d, &o, "dimension", mprof_dimension_key(dim->id));
    if (!d.json)
      mprof__fields_str(&d, "name", mprof_dimension_key(dim->id));
    mprof__fields_str(&d, "state", mprof_state_name(dim->state));
    mprof__fields_num(&d, "cost", dim->cost, 4);
    mprof__fields_num(&d, "gain", dim->gain, 4);
    mprof__fields_str(&d, "gain_bound", mprof_gain_bound_name(dim->gain_bound));
    mprof__fields_num(&d, "saved_ns", dim->saved_ns, 0);
    mprof__fields_text(&d, "detail", dim->detail);
    mprof__fields_open(&metrics, &d, NULL, "metrics");
    for (size_t m = 0; m < dim->metric_count; m++) {
      const mprof_metric *metric = &dim->metrics[m];
      mprof__fields_num(&metrics, metric->name, metric->value,
                        metric_integral(metric) ? 0 : 4);
    }
    mprof__fields_close(&metrics);
    mprof__fields_close(&d);
  }
  mprof__fields_close(&o);
}

static void reason_fields(mprof__fields *o, const void *kernel, size_t i) {
  const mprof_reason_share *r =
      &((const mprof_kernel_diagnosis *)kernel)->stalls[i];
  mprof__fields_str(o, "name", r->reason);
  mprof__fields_str(o, "dimension",
                    mprof__report_reason_dimension(r->dimension));
  mprof__fields_num(o, "share", r->share, 4);
  mprof__fields_u64(o, "samples", r->samples);
}

static void stalls(mprof__fields *parent, const mprof_kernel_diagnosis *k) {
  size_t shown = mprof__summary_stalls_shown(k);
  mprof__fields o;
  mprof__fields_open(&o, parent, "stalls", "stalls");
  mprof__fields_u64(&o, "samples", k->stats->samples);
  mprof__fields_u64(&o, "not_issued", k->stats->not_issued);
  mprof__fields_num(&o, "issue_active",
                    k->issue_active >= 0 ? k->issue_active : NAN, 4);
  mprof__fields_num(&o, "other_share", k->other_share, 4);
  if (!o.json) /* JSON's reasons array says how many are shown */
    mprof__fields_u64(&o, "reasons", k->stall_count);
  mprof__report_shown(&o, shown, k->stall_count);
  mprof__report_records(&o, "reason", "reasons", shown, reason_fields, k);
  mprof__fields_close(&o);
}

static void hot_reason_fields(mprof__fields *o, const void *hot, size_t i) {
  const mprof_reason_share *r =
      &((const mprof_hot_instruction *)hot)->reasons[i];
  mprof__fields_str(o, "name", r->reason);
  mprof__fields_num(o, "share", r->share, 4);
}

static void hot_fields(mprof__fields *o, const void *kernel, size_t i) {
  const mprof_hot_instruction *h =
      mprof_kernel_diagnosis_hot((const mprof_kernel_diagnosis *)kernel, i);
  char crc[32];
  snprintf(crc, sizeof crc, "0x%llx", (unsigned long long)h->cubin_crc);
  mprof__fields_hex(o, "offset", h->offset);
  mprof__fields_num(o, "share", h->share, 4);
  mprof__fields_u64(o, "samples", h->samples);
  mprof__fields_str(o, "sass", *h->sass ? h->sass : NULL);
  mprof__fields_str(o, "file", *h->file ? h->file : NULL);
  mprof__fields_num(o, "line", *h->file ? (double)h->line : NAN, 0);
  mprof__fields_str(o, "cubin_crc", crc);
  mprof__report_records(o, "reason", "reasons", h->reason_count,
                        hot_reason_fields, h);
}

static void hot(mprof__fields *parent, const mprof__summary_view *v,
                const mprof_kernel_diagnosis *k) {
  size_t shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  mprof__fields o;
  mprof__fields_open(&o, parent, "hot-instructions", "hot");
  mprof__fields_u64(&o, "sampled_pcs", k->stats->pc_count);
  mprof__report_shown(&o, shown, k->stats->pc_count);
  mprof__report_records(&o, "instruction", "instructions", shown, hot_fields,
                        k);
  mprof__fields_close(&o);
}

static void access_fields(mprof__fields *o, const void *order, size_t i) {
  const mprof_memory_stats *x = ((const mprof_memory_stats *const *)order)[i];
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

/* The counted memory accesses (`record blocks --memory`), when there are. */
static void memory(mprof__fields *parent, const mprof__summary_view *v,
                   const mprof_kernel_diagnosis *k) {
  mprof__summary_memory mv;
  if (!mprof__summary_memory_view_build(&mv, v, k))
    return;
  mprof__fields o;
  mprof__fields_open(&o, parent, "memory", "memory");
  mprof__fields_u64(&o, "instructions", mv.count);
  mprof__report_shown(&o, mv.shown, mv.count);
  mprof__fields_u64(&o, "warp_accesses", mv.warps);
  mprof__fields_u64(&o, "bytes", mv.bytes);
  mprof__fields_u64(&o, "sectors", mv.sectors);
  mprof__fields_num(&o, "efficiency", mv.efficiency, 4);
  mprof__fields_expand(&o);
  mprof__report_records(&o, "access", "accesses", mv.shown, access_fields,
                        mv.order);
  mprof__fields_close(&o);
  free(mv.order);
}

/* Kernel @p i of the view, ranked i + 1. */
static void kernel(mprof__fields *o, const void *view, size_t i) {
  const mprof__summary_view *v = (const mprof__summary_view *)view;
  const mprof_kernel_diagnosis *k =
      mprof_diagnosis_kernel(v->d, v->selected[i]);
  mprof__fields x, notes;
  kernel_fields(o, v, i + 1, k);
  verdict(o, k);
  if (mprof__summary_sol_shown(v))
    mprof__summary_throughput(o, k->throughput);
  shapes(o, v, k);
  dimensions(o, v, k);
  stalls(o, k);
  hot(o, v, k);
  memory(o, v, k);
  /* Strings in JSON, <note> elements in XML. */
  mprof__fields_list(&notes, o, NULL, "notes");
  for (size_t n = 0; n < k->note_count; n++) {
    if (notes.json) {
      mprof__fields_str(&notes, NULL, k->notes[n]);
      continue;
    }
    mprof__fields_open(&x, &notes, "note", NULL);
    mprof__fields_text(&x, NULL, k->notes[n]);
    mprof__fields_close(&x);
  }
  mprof__fields_close(&notes);
}

/* ---- the report ---------------------------------------------------------- */

static void note_fields(mprof__fields *o, const void *diagnosis, size_t i) {
  const mprof_note *n =
      mprof_diagnosis_note((const mprof_diagnosis *)diagnosis, i);
  mprof__fields_str(o, "key", n->key);
  mprof__fields_text(o, "text", n->text);
}

void mprof__summary_fields(FILE *f, const mprof__summary_view *v, int json) {
  mprof__fields doc, x;
  mprof__report_document(&doc, f, json, "mprof-summary", 1);
  mprof__fields_open(&x, &doc, "trace", "trace");
  trace_fields(&x, v);
  mprof__fields_close(&x);
  size_t processes = mprof_trace_process_count(v->trace);
  mprof__report_records(&doc, "device", "devices",
                        mprof_join_gpu_count(v->join), device_fields, v);
  if (processes > 1)
    mprof__report_records(&doc, "process", "processes", processes,
                          process_fields, v);
  mprof__report_records(&doc, "note", "notes", mprof_diagnosis_note_count(v->d),
                        note_fields, v->d);
  mprof__mega mega;
  if (mprof__mega_build(&mega, v->trace)) {
    mprof__mega_fields(&doc, &mega);
    mprof__mega_free(&mega);
  }
  if (v->shown) {
    const mprof_kernel_diagnosis *top =
        mprof_diagnosis_kernel(v->d, v->selected[0]);
    mprof__fields_open(&x, &doc, "headline", "headline");
    mprof__fields_str(&x, "kernel", top->stats->name);
    mprof__fields_num(&x, "share", top->stats->share, 4);
    mprof__fields_text(&x, "text", top->verdict);
    mprof__fields_close(&x);
  } else {
    mprof__fields_str(&doc, "headline", NULL);
  }
  mprof__fields_open(&x, &doc, "kernels", "kernels");
  mprof__fields_u64(&x, "matched", v->matched);
  mprof__fields_u64(&x, "shown", v->shown);
  mprof__fields_u64(&x, "omitted", v->matched - v->shown);
  mprof__fields_num(&x, "omitted_share", v->omitted_share, 4);
  mprof__fields_str(&x, "filter",
                    v->opts->kernel && *v->opts->kernel ? v->opts->kernel
                                                        : NULL);
  mprof__report_records(&x, "kernel", "items", v->shown, kernel, v);
  mprof__fields_close(&x);
  mprof__fields_close(&doc);
}
