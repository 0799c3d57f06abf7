/*
 * mprof — the summary report: XML (docs/SUMMARY-SCHEMA.md), JSON
 * (docs/summary.schema.json) and a text panel for people.
 *
 * Bounded by default: at most max_kernels kernels, max_hot hot
 * instructions, SHAPES_SHOWN shapes and STALLS_SHOWN stall reasons per
 * kernel; whatever is left out is counted in an `omitted` attribute.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/names.h"
#include "mprof/version.h"
#include "report_internal.h"

#define SHAPES_SHOWN 3
#define STALLS_SHOWN 8
#define STALL_MIN_SHARE 0.01 /* smaller reasons are counted as omitted */

int mprof_report_options_init(mprof_report_options *opts, unsigned version) {
  if (!opts)
    return mprof__error_set(MPROF_EINVAL, "mprof_report_options_init: NULL");
  if (version != MPROF_REPORT_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "report options version %u is not supported (%u)",
                            version, MPROF_REPORT_OPTIONS_VERSION);
  mprof_report_options init = MPROF_REPORT_OPTIONS_INIT;
  *opts = init;
  return 0;
}

/* What the report shows, computed once for all three formats. */
typedef struct summary_view {
  const mprof_diagnosis *d;
  const mprof_join *join;
  const mprof_trace *trace;
  const mprof_report_options *opts;
  size_t *selected;
  size_t matched, shown;
  double omitted_share;
} summary_view;

/* ---- the processes of a merged set ------------------------------------- */

/* META @p key of process @p p, "?" when unknown. */
static const char *process_meta(const summary_view *v, uint32_t p,
                                const char *key) {
  const char *value = mprof_trace_process_meta(v->trace, p, key);
  return value && *value ? value : "?";
}

/* "pid 202, rank 1 on node1" for a kernel of one process of a set; "2
 * processes" for one of several; "" in the trace of one process. */
static void process_label(char *out, size_t size, const summary_view *v,
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

static size_t stalls_shown(const mprof_kernel_diagnosis *k) {
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
static int dimension_shown(const summary_view *v, const mprof_dimension *dim) {
  size_t spans;
  if (dim->id < MPROF_DIM_FIRST_SPAN)
    return 1;
  mprof_trace_spans(v->trace, &spans);
  return spans > 0;
}

/* Metrics printed with decimals; the others are whole numbers. */
static int metric_integral(const mprof_metric *metric) {
  return strcmp(metric->unit, "fraction") != 0 &&
         strcmp(metric->unit, "waves") != 0 &&
         strcmp(metric->unit, "ratio") != 0;
}

static const char *sidecar_state(const summary_view *v) {
  return mprof_join_sidecar(v->join) ? "present" : "absent";
}

static uint64_t trace_span(const mprof_trace *t) {
  uint64_t a, b;
  mprof_trace_time_bounds(t, &a, &b);
  return b - a;
}

static inline const mprof_device_record *
kernel_device(const summary_view *v, const mprof_kernel_stats *ks) {
  size_t n;
  const mprof_device_record *dev = mprof_trace_devices(v->trace, &n);
  return ks->device < n ? &dev[ks->device] : NULL;
}

/* ---- XML ---------------------------------------------------------------- */

static void xml_dims3(FILE *f, const char *name, const uint32_t v[3]) {
  fprintf(f, " %s=\"%u,%u,%u\"", name, v[0], v[1], v[2]);
}

static void xml_shape(FILE *f, const mprof_shape_stats *s,
                      const mprof_occupancy *o, uint64_t kernel_total) {
  fputs("        <shape", f);
  xml_dims3(f, "grid", s->grid);
  xml_dims3(f, "block", s->block);
  if (s->cluster[0] || s->cluster[1] || s->cluster[2])
    xml_dims3(f, "cluster", s->cluster);
  mprof__xml_attr_u64(f, "registers", s->registers);
  mprof__xml_attr_u64(f, "static_shared", s->static_shared);
  mprof__xml_attr_u64(f, "dynamic_shared", s->dynamic_shared);
  mprof__xml_attr_u64(f, "launches", s->launches);
  mprof__xml_attr_num(f, "share",
                      kernel_total ? (double)s->total_ns / kernel_total : 0, 4);
  mprof__xml_attr_num(f, "mean_ns", s->mean_ns, 0);
  if (o->known) {
    mprof__xml_attr_num(f, "occupancy", o->theoretical, 4);
    mprof__xml_attr_u64(f, "blocks_per_sm", o->blocks_per_sm);
    mprof__xml_attr(f, "limiter", mprof_occupancy_limiter_name(o->limiter));
    if (o->blocks_per_sm) {
      mprof__xml_attr_num(f, "waves", o->waves, 3);
      mprof__xml_attr_num(f, "tail_efficiency", o->tail_efficiency, 4);
    }
  }
  fputs("/>\n", f);
}

/* ---- speed of light (PM samples) ----------------------------------------- */

/* Counters shown, in order; the clock is left to the JSON. */
static const uint32_t sol_counters[] = {
    MPROF_COUNTER_DRAM,      MPROF_COUNTER_DRAM_BYTES,
    MPROF_COUNTER_L2,        MPROF_COUNTER_L2_BYTES,
    MPROF_COUNTER_SM_ACTIVE, MPROF_COUNTER_WARPS_ACTIVE,
    MPROF_COUNTER_ISSUE,     MPROF_COUNTER_TENSOR,
    MPROF_COUNTER_FMA,       MPROF_COUNTER_ALU,
    MPROF_COUNTER_CLOCK};

static int sol_shown(const summary_view *v) {
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

static void xml_throughput(FILE *f, const mprof_kernel_diagnosis *k) {
  const mprof_kernel_throughput *t = k->throughput;
  fputs("      <throughput", f);
  mprof__xml_attr(f, "status", sol_status(t));
  mprof__xml_attr_u64(f, "samples", t->samples);
  mprof__xml_attr_u64(f, "partial_samples", t->partial);
  mprof__xml_attr_u64(f, "interval_ns", t->interval_ns);
  if (t->samples) {
    mprof__xml_attr_num(f, "shared", t->shared, 4);
    for (size_t i = 0; i < sizeof sol_counters / sizeof sol_counters[0]; i++) {
      uint32_t c = sol_counters[i];
      if (isnan(t->value[c]))
        continue;
      int fraction = strcmp(mprof_counter_unit(c), "percent") == 0;
      mprof__xml_attr_num(f, mprof_counter_key(c), sol_value(t, c),
                          fraction ? 4 : 0);
    }
  }
  fputs("/>\n", f);
}

static void text_throughput(FILE *f, const mprof_kernel_diagnosis *k,
                            const mprof__style *st) {
  const mprof_kernel_throughput *t = k->throughput;
  char iv[32];
  mprof_format_duration(iv, sizeof iv, (double)t->interval_ns);
  if (!t->samples) {
    fprintf(f,
            "│ %sspeed of light: too short to measure (no run spans a whole "
            "%s PM sample)%s\n",
            st->dim, iv, st->reset);
    return;
  }
  fputs("│ speed of light:", f);
  const char *sep = " ";
  static const uint32_t shown[] = {
      MPROF_COUNTER_DRAM,         MPROF_COUNTER_L2,    MPROF_COUNTER_SM_ACTIVE,
      MPROF_COUNTER_WARPS_ACTIVE, MPROF_COUNTER_ISSUE, MPROF_COUNTER_TENSOR,
      MPROF_COUNTER_FMA};
  static const char *const labels[] = {"DRAM",  "L2",     "SMs", "warps",
                                       "issue", "tensor", "FMA"};
  for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
    double x = t->value[shown[i]];
    if (isnan(x))
      continue;
    char p[32];
    mprof_format_percent(p, sizeof p, x / 100.0);
    fprintf(f, "%s%s %s", sep, labels[i], p);
    uint32_t bytes = shown[i] == MPROF_COUNTER_DRAM ? MPROF_COUNTER_DRAM_BYTES
                     : shown[i] == MPROF_COUNTER_L2 ? MPROF_COUNTER_L2_BYTES
                                                    : MPROF_INDEX_NONE;
    if (bytes != MPROF_INDEX_NONE && !isnan(t->value[bytes]))
      fprintf(f, " (%.2f TB/s)", t->value[bytes] / 1e12);
    sep = " · ";
  }
  char n[32];
  mprof_format_count(n, sizeof n, t->samples);
  fprintf(f, " %s· %s samples of %s%s%s\n", st->dim, n, iv,
          t->shared > 0.05 ? ", shared with other kernels" : "", st->reset);
}

/* "load", "store", "atomic", ... for MPROF_MEMORY_* flags. */
static const char *memory_kind(uint32_t flags) {
  if (flags & MPROF_MEMORY_ATOMIC_SYSTEM)
    return "atomic";
  if ((flags & MPROF_MEMORY_READ) && (flags & MPROF_MEMORY_WRITE))
    return "load+store";
  if (flags & MPROF_MEMORY_WRITE)
    return "store";
  if (flags & MPROF_MEMORY_PREFETCH)
    return "prefetch";
  return "load";
}

static int compare_memory_warps(const void *a, const void *b) {
  const mprof_memory_stats *x = *(const mprof_memory_stats *const *)a;
  const mprof_memory_stats *y = *(const mprof_memory_stats *const *)b;
  if (x->warp_accesses != y->warp_accesses)
    return x->warp_accesses > y->warp_accesses ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The kernel's counted memory instructions, busiest first, and their
 * totals; NULL (count 0) when none were counted. The caller frees. */
typedef struct memory_view {
  const mprof_memory_stats **order;
  size_t count, shown;
  uint64_t warps, bytes, sectors;
} memory_view;

static int memory_view_build(memory_view *mv, const summary_view *v,
                             const mprof_kernel_diagnosis *k) {
  memset(mv, 0, sizeof *mv);
  size_t count;
  const mprof_memory_stats *m = mprof_join_memory(v->join, k->kernel, &count);
  if (!count)
    return 0;
  mv->order = (const mprof_memory_stats **)malloc(count * sizeof *mv->order);
  if (!mv->order)
    return 0;
  for (size_t i = 0; i < count; i++) {
    mv->order[i] = &m[i];
    mv->warps += m[i].warp_accesses;
    mv->bytes += m[i].bytes;
    mv->sectors += m[i].sectors;
  }
  qsort(mv->order, count, sizeof *mv->order, compare_memory_warps);
  mv->count = count;
  mv->shown = count < v->opts->max_hot ? count : v->opts->max_hot;
  return 1;
}

static double memory_efficiency(uint64_t bytes, uint64_t sectors) {
  return sectors ? (double)bytes / (32.0 * (double)sectors) : 0;
}

static void xml_memory(FILE *f, const summary_view *v,
                       const mprof_kernel_diagnosis *k) {
  memory_view mv;
  if (!memory_view_build(&mv, v, k))
    return;
  fputs("      <memory", f);
  mprof__xml_attr_u64(f, "instructions", mv.count);
  mprof__xml_attr_u64(f, "shown", mv.shown);
  mprof__xml_attr_u64(f, "omitted", mv.count - mv.shown);
  mprof__xml_attr_u64(f, "warp_accesses", mv.warps);
  mprof__xml_attr_u64(f, "bytes", mv.bytes);
  mprof__xml_attr_u64(f, "sectors", mv.sectors);
  mprof__xml_attr_num(f, "efficiency", memory_efficiency(mv.bytes, mv.sectors),
                      4);
  fputs(">\n", f);
  for (size_t i = 0; i < mv.shown; i++) {
    const mprof_memory_stats *x = mv.order[i];
    fprintf(f, "        <access offset=\"0x%x\"", x->offset);
    mprof__xml_attr(f, "kind", memory_kind(x->flags));
    mprof__xml_attr_u64(f, "access_size", x->access_size);
    mprof__xml_attr_u64(f, "warp_accesses", x->warp_accesses);
    mprof__xml_attr_u64(f, "thread_accesses", x->thread_accesses);
    mprof__xml_attr_u64(f, "bytes", x->bytes);
    mprof__xml_attr_u64(f, "sectors", x->sectors);
    mprof__xml_attr_num(f, "efficiency", x->efficiency, 4);
    if (x->instruction && x->instruction->opcode)
      mprof__xml_attr(f, "sass", x->instruction->opcode);
    fputs("/>\n", f);
  }
  fputs("      </memory>\n", f);
  free(mv.order);
}

static void xml_kernel(FILE *f, const summary_view *v, size_t rank,
                       const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  fputs("    <kernel", f);
  mprof__xml_attr_u64(f, "rank", rank);
  char short_name[256];
  mprof__xml_attr(f, "name", s->name);
  mprof__xml_attr(f, "short_name",
                  mprof_name_short(short_name, sizeof short_name, s->name));
  mprof__xml_attr(f, "mangled", s->mangled);
  if (s->device_id != MPROF_INDEX_NONE)
    mprof__xml_attr_u64(f, "device", s->device_id);
  if (mprof_trace_process_count(v->trace) > 1) {
    if (s->process_count) /* 0: a set merged before processes were kept */
      mprof__xml_attr_u64(f, "processes", s->process_count);
    if (s->process != MPROF_INDEX_NONE) {
      mprof__xml_attr_u64(f, "process", s->process);
      mprof__xml_attr(f, "pid", process_meta(v, s->process, "pid"));
      mprof__xml_attr(f, "host", process_meta(v, s->process, "host"));
      mprof__xml_attr(f, "process_rank", process_meta(v, s->process, "rank"));
    }
  }
  mprof__xml_attr_num(f, "share", s->share, 4);
  mprof__xml_attr_num(f, "device_share", s->device_share, 4);
  mprof__xml_attr_u64(f, "launches", s->launches);
  mprof__xml_attr_u64(f, "total_ns", s->total_ns);
  mprof__xml_attr_num(f, "mean_ns", s->mean_ns, 0);
  mprof__xml_attr_u64(f, "median_ns", s->median_ns);
  mprof__xml_attr_u64(f, "p90_ns", s->p90_ns);
  mprof__xml_attr_u64(f, "min_ns", s->min_ns);
  mprof__xml_attr_u64(f, "max_ns", s->max_ns);
  mprof__xml_attr_num(f, "stddev_ns", s->stddev_ns, 0);
  mprof__xml_attr_u64(f, "samples", s->samples);
  fputs(">\n      <verdict", f);
  mprof__xml_attr(f, "dimension",
                  k->verdict_dimension < MPROF_DIM_COUNT_
                      ? mprof_dimension_key(k->verdict_dimension)
                      : "none");
  mprof__xml_attr(f, "state", mprof_state_name(k->verdict_state));
  fputs(">", f);
  mprof__xml_escape(f, k->verdict);
  fputs("</verdict>\n", f);
  if (sol_shown(v))
    xml_throughput(f, k);

  size_t shape_count;
  const mprof_shape_stats *shapes =
      mprof_join_shapes(v->join, k->kernel, &shape_count);
  size_t shown = shape_count < SHAPES_SHOWN ? shape_count : SHAPES_SHOWN;
  fprintf(f, "      <shapes count=\"%zu\" shown=\"%zu\" omitted=\"%zu\">\n",
          shape_count, shown, shape_count - shown);
  for (size_t i = 0; i < shown; i++)
    xml_shape(f, &shapes[i], mprof_kernel_diagnosis_shape(k, i), s->total_ns);
  fputs("      </shapes>\n      <dimensions>\n", f);
  for (size_t i = 0; i < k->dimension_count; i++) {
    const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(k, i);
    if (!dimension_shown(v, dim))
      continue;
    fputs("        <dimension", f);
    mprof__xml_attr(f, "name", mprof_dimension_key(dim->id));
    mprof__xml_attr(f, "state", mprof_state_name(dim->state));
    mprof__xml_attr_num(f, "cost", dim->cost, 4);
    for (size_t m = 0; m < dim->metric_count; m++) {
      const mprof_metric *metric = &dim->metrics[m];
      int integral = metric_integral(metric);
      mprof__xml_attr_num(f, metric->name, metric->value, integral ? 0 : 4);
    }
    fputs(">", f);
    mprof__xml_escape(f, dim->detail);
    fputs("</dimension>\n", f);
  }
  fputs("      </dimensions>\n", f);

  size_t stall_shown = stalls_shown(k);
  fputs("      <stalls", f);
  mprof__xml_attr_u64(f, "samples", s->samples);
  mprof__xml_attr_u64(f, "not_issued", s->not_issued);
  if (k->issue_active >= 0)
    mprof__xml_attr_num(f, "issue_active", k->issue_active, 4);
  mprof__xml_attr_num(f, "other_share", k->other_share, 4);
  mprof__xml_attr_u64(f, "reasons", k->stall_count);
  mprof__xml_attr_u64(f, "shown", stall_shown);
  mprof__xml_attr_u64(f, "omitted", k->stall_count - stall_shown);
  fputs(stall_shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < stall_shown; i++) {
    fputs("        <reason", f);
    mprof__xml_attr(f, "name", k->stalls[i].reason);
    mprof__xml_attr(f, "dimension",
                    reason_dimension_key(k->stalls[i].dimension));
    mprof__xml_attr_num(f, "share", k->stalls[i].share, 4);
    mprof__xml_attr_u64(f, "samples", k->stalls[i].samples);
    fputs("/>\n", f);
  }
  if (stall_shown)
    fputs("      </stalls>\n", f);

  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  fputs("      <hot-instructions", f);
  mprof__xml_attr_u64(f, "sampled_pcs", s->pc_count);
  mprof__xml_attr_u64(f, "shown", hot_shown);
  mprof__xml_attr_u64(f, "omitted", s->pc_count - hot_shown);
  fputs(hot_shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < hot_shown; i++) {
    const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
    fprintf(f, "        <instruction offset=\"0x%x\"", h->offset);
    mprof__xml_attr_num(f, "share", h->share, 4);
    mprof__xml_attr_u64(f, "samples", h->samples);
    if (*h->sass)
      mprof__xml_attr(f, "sass", h->sass);
    if (*h->file) {
      mprof__xml_attr(f, "file", h->file);
      mprof__xml_attr_u64(f, "line", h->line);
    }
    fprintf(f, " cubin_crc=\"0x%llx\"", (unsigned long long)h->cubin_crc);
    fputs(h->reason_count ? ">\n" : "/>\n", f);
    for (size_t r = 0; r < h->reason_count; r++) {
      fputs("          <reason", f);
      mprof__xml_attr(f, "name", h->reasons[r].reason);
      mprof__xml_attr_num(f, "share", h->reasons[r].share, 4);
      fputs("/>\n", f);
    }
    if (h->reason_count)
      fputs("        </instruction>\n", f);
  }
  if (hot_shown)
    fputs("      </hot-instructions>\n", f);
  xml_memory(f, v, k);
  for (size_t i = 0; i < k->note_count; i++) {
    fputs("      <note>", f);
    mprof__xml_escape(f, k->notes[i]);
    fputs("</note>\n", f);
  }
  fputs("    </kernel>\n", f);
}

static void xml_summary(FILE *f, const summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t launches, devices;
  mprof_trace_launches(t, &launches);
  const mprof_device_record *dev = mprof_trace_devices(t, &devices);
  const char *pc_mode = mprof_trace_meta(t, "pc.mode");
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mprof-summary", f);
  mprof__xml_attr_u64(f, "schema", 1);
  mprof__xml_attr(f, "mprof_version", MPROF_VERSION_STRING);
  fputs(">\n  <trace", f);
  mprof__xml_attr(f, "path", mprof_trace_path(t));
  mprof__xml_attr_u64(f, "bytes", mprof_trace_file_size(t));
  mprof__xml_attr_u64(f, "launches", launches);
  mprof__xml_attr_u64(f, "kernels", mprof_join_kernel_count(v->join));
  mprof__xml_attr_u64(f, "kernel_time_ns", mprof_join_kernel_time(v->join));
  mprof__xml_attr_u64(f, "span_ns", trace_span(t));
  mprof__xml_attr_u64(f, "samples", mprof_join_sample_total(v->join));
  mprof__xml_attr(f, "pc_mode", pc_mode ? pc_mode : "unknown");
  mprof__xml_attr(f, "sidecar", sidecar_state(v));
  fputs("/>\n", f);
  for (size_t i = 0; i < devices; i++) {
    fputs("  <device", f);
    mprof__xml_attr_u64(f, "index", i);
    mprof__xml_attr_u64(f, "id", dev[i].id);
    mprof__xml_attr(f, "name", mprof_trace_string(t, dev[i].name));
    fprintf(f, " cc=\"%u.%u\"", dev[i].cc_major, dev[i].cc_minor);
    mprof__xml_attr_u64(f, "sms", dev[i].sm_count);
    fputs("/>\n", f);
  }
  size_t processes = mprof_trace_process_count(t);
  for (size_t i = 0; processes > 1 && i < processes; i++) {
    fputs("  <process", f);
    mprof__xml_attr_u64(f, "index", i);
    static const char *const keys[] = {"pid", "ppid", "host", "rank", "path"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      mprof__xml_attr(f, keys[k], process_meta(v, (uint32_t)i, keys[k]));
    fputs("/>\n", f);
  }
  for (size_t i = 0; i < mprof_diagnosis_note_count(v->d); i++) {
    const mprof_note *n = mprof_diagnosis_note(v->d, i);
    fputs("  <note", f);
    mprof__xml_attr(f, "key", n->key);
    fputs(">", f);
    mprof__xml_escape(f, n->text);
    fputs("</note>\n", f);
  }
  if (v->shown) {
    const mprof_kernel_diagnosis *top =
        mprof_diagnosis_kernel(v->d, v->selected[0]);
    fputs("  <headline", f);
    mprof__xml_attr(f, "kernel", top->stats->name);
    mprof__xml_attr_num(f, "share", top->stats->share, 4);
    fputs(">", f);
    mprof__xml_escape(f, top->verdict);
    fputs("</headline>\n", f);
  }
  fputs("  <kernels", f);
  mprof__xml_attr_u64(f, "matched", v->matched);
  mprof__xml_attr_u64(f, "shown", v->shown);
  mprof__xml_attr_u64(f, "omitted", v->matched - v->shown);
  mprof__xml_attr_num(f, "omitted_share", v->omitted_share, 4);
  if (v->opts->kernel && *v->opts->kernel)
    mprof__xml_attr(f, "filter", v->opts->kernel);
  fputs(v->shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < v->shown; i++)
    xml_kernel(f, v, i + 1, mprof_diagnosis_kernel(v->d, v->selected[i]));
  if (v->shown)
    fputs("  </kernels>\n", f);
  fputs("</mprof-summary>\n", f);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_key(FILE *f, const char *key) {
  mprof__json_string(f, key);
  fputc(':', f);
}

static void json_u64(FILE *f, const char *key, uint64_t value, int comma) {
  json_key(f, key);
  fprintf(f, "%llu%s", (unsigned long long)value, comma ? "," : "");
}

static void json_num(FILE *f, const char *key, double value, int digits,
                     int comma) {
  json_key(f, key);
  mprof__json_num(f, value, digits);
  if (comma)
    fputc(',', f);
}

static void json_str(FILE *f, const char *key, const char *value, int comma) {
  json_key(f, key);
  mprof__json_string(f, value);
  if (comma)
    fputc(',', f);
}

static void json_dims3(FILE *f, const char *key, const uint32_t v[3]) {
  json_key(f, key);
  fprintf(f, "[%u,%u,%u],", v[0], v[1], v[2]);
}

static void json_throughput(FILE *f, const mprof_kernel_diagnosis *k) {
  const mprof_kernel_throughput *t = k->throughput;
  json_key(f, "throughput");
  fputc('{', f);
  json_str(f, "status", sol_status(t), 1);
  json_u64(f, "samples", t->samples, 1);
  json_u64(f, "partial_samples", t->partial, 1);
  json_u64(f, "interval_ns", t->interval_ns, 1);
  json_key(f, "shared");
  if (t->samples)
    fprintf(f, "%.4f", t->shared);
  else
    fputs("null", f);
  for (size_t i = 0; i < sizeof sol_counters / sizeof sol_counters[0]; i++) {
    uint32_t c = sol_counters[i];
    int fraction = strcmp(mprof_counter_unit(c), "percent") == 0;
    fputc(',', f);
    json_key(f, mprof_counter_key(c));
    if (isnan(t->value[c]))
      fputs("null", f);
    else
      fprintf(f, fraction ? "%.4f" : "%.0f", sol_value(t, c));
  }
  fputs("},", f);
}

static void json_memory(FILE *f, const summary_view *v,
                        const mprof_kernel_diagnosis *k) {
  memory_view mv;
  if (!memory_view_build(&mv, v, k))
    return;
  json_key(f, "memory");
  fputc('{', f);
  json_u64(f, "instructions", mv.count, 1);
  json_u64(f, "omitted", mv.count - mv.shown, 1);
  json_u64(f, "warp_accesses", mv.warps, 1);
  json_u64(f, "bytes", mv.bytes, 1);
  json_u64(f, "sectors", mv.sectors, 1);
  json_num(f, "efficiency", memory_efficiency(mv.bytes, mv.sectors), 4, 1);
  json_key(f, "accesses");
  fputc('[', f);
  for (size_t i = 0; i < mv.shown; i++) {
    const mprof_memory_stats *x = mv.order[i];
    fputc('{', f);
    json_u64(f, "offset", x->offset, 1);
    json_str(f, "kind", memory_kind(x->flags), 1);
    json_u64(f, "access_size", x->access_size, 1);
    json_u64(f, "warp_accesses", x->warp_accesses, 1);
    json_u64(f, "thread_accesses", x->thread_accesses, 1);
    json_u64(f, "bytes", x->bytes, 1);
    json_u64(f, "sectors", x->sectors, 1);
    json_num(f, "efficiency", x->efficiency, 4, 1);
    json_key(f, "sass");
    mprof__json_string(f, x->instruction && x->instruction->opcode
                              ? x->instruction->opcode
                              : NULL);
    fputc('}', f);
    if (i + 1 < mv.shown)
      fputc(',', f);
  }
  fputs("]},", f);
  free(mv.order);
}

static void json_kernel(FILE *f, const summary_view *v, size_t rank,
                        const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  fputc('{', f);
  json_u64(f, "rank", rank, 1);
  char short_name[256];
  json_str(f, "name", s->name, 1);
  json_str(f, "short_name",
           mprof_name_short(short_name, sizeof short_name, s->name), 1);
  json_str(f, "mangled", s->mangled, 1);
  json_key(f, "device");
  if (s->device_id != MPROF_INDEX_NONE)
    fprintf(f, "%u,", s->device_id);
  else
    fputs("null,", f);
  if (mprof_trace_process_count(v->trace) > 1) {
    if (s->process_count)
      json_u64(f, "processes", s->process_count, 1);
    if (s->process != MPROF_INDEX_NONE) {
      json_u64(f, "process", s->process, 1);
      json_str(f, "pid", process_meta(v, s->process, "pid"), 1);
      json_str(f, "host", process_meta(v, s->process, "host"), 1);
      json_str(f, "process_rank", process_meta(v, s->process, "rank"), 1);
    }
  }
  json_num(f, "share", s->share, 4, 1);
  json_num(f, "device_share", s->device_share, 4, 1);
  json_u64(f, "launches", s->launches, 1);
  json_u64(f, "total_ns", s->total_ns, 1);
  json_num(f, "mean_ns", s->mean_ns, 0, 1);
  json_u64(f, "median_ns", s->median_ns, 1);
  json_u64(f, "p90_ns", s->p90_ns, 1);
  json_u64(f, "min_ns", s->min_ns, 1);
  json_u64(f, "max_ns", s->max_ns, 1);
  json_num(f, "stddev_ns", s->stddev_ns, 0, 1);
  json_u64(f, "samples", s->samples, 1);
  json_key(f, "verdict");
  fputc('{', f);
  json_key(f, "dimension");
  if (k->verdict_dimension < MPROF_DIM_COUNT_)
    mprof__json_string(f, mprof_dimension_key(k->verdict_dimension));
  else
    fputs("null", f);
  fputc(',', f);
  json_str(f, "state", mprof_state_name(k->verdict_state), 1);
  json_str(f, "text", k->verdict, 0);
  fputs("},", f);
  if (sol_shown(v))
    json_throughput(f, k);

  size_t shape_count;
  const mprof_shape_stats *shapes =
      mprof_join_shapes(v->join, k->kernel, &shape_count);
  size_t shown = shape_count < SHAPES_SHOWN ? shape_count : SHAPES_SHOWN;
  json_key(f, "shapes");
  fputc('{', f);
  json_u64(f, "count", shape_count, 1);
  json_u64(f, "omitted", shape_count - shown, 1);
  json_key(f, "items");
  fputc('[', f);
  for (size_t i = 0; i < shown; i++) {
    const mprof_shape_stats *sh = &shapes[i];
    const mprof_occupancy *o = mprof_kernel_diagnosis_shape(k, i);
    fputc('{', f);
    json_dims3(f, "grid", sh->grid);
    json_dims3(f, "block", sh->block);
    json_dims3(f, "cluster", sh->cluster);
    json_u64(f, "registers", sh->registers, 1);
    json_u64(f, "static_shared", sh->static_shared, 1);
    json_u64(f, "dynamic_shared", sh->dynamic_shared, 1);
    json_u64(f, "launches", sh->launches, 1);
    json_num(f, "share",
             s->total_ns ? (double)sh->total_ns / (double)s->total_ns : 0, 4,
             1);
    json_num(f, "mean_ns", sh->mean_ns, 0, 1);
    json_key(f, "occupancy");
    if (o->known) {
      fputc('{', f);
      json_num(f, "theoretical", o->theoretical, 4, 1);
      json_u64(f, "blocks_per_sm", o->blocks_per_sm, 1);
      json_u64(f, "active_warps", o->active_warps, 1);
      json_u64(f, "max_warps", o->max_warps, 1);
      json_str(f, "limiter", mprof_occupancy_limiter_name(o->limiter), 1);
      json_num(f, "waves", o->blocks_per_sm ? o->waves : NAN, 3, 1);
      json_num(f, "tail_efficiency",
               o->blocks_per_sm ? o->tail_efficiency : NAN, 4, 0);
      fputc('}', f);
    } else {
      fputs("null", f);
    }
    fputc('}', f);
    if (i + 1 < shown)
      fputc(',', f);
  }
  fputs("]},", f);

  json_key(f, "dimensions");
  fputc('{', f);
  int first_dimension = 1;
  for (size_t i = 0; i < k->dimension_count; i++) {
    const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(k, i);
    if (!dimension_shown(v, dim))
      continue;
    if (!first_dimension)
      fputc(',', f);
    first_dimension = 0;
    json_key(f, mprof_dimension_key(dim->id));
    fputc('{', f);
    json_str(f, "state", mprof_state_name(dim->state), 1);
    json_num(f, "cost", dim->cost, 4, 1);
    json_str(f, "detail", dim->detail, 1);
    json_key(f, "metrics");
    fputc('{', f);
    for (size_t m = 0; m < dim->metric_count; m++) {
      const mprof_metric *metric = &dim->metrics[m];
      int integral = metric_integral(metric);
      json_num(f, metric->name, metric->value, integral ? 0 : 4,
               m + 1 < dim->metric_count);
    }
    fputs("}}", f);
  }
  fputs("},", f);

  size_t stall_shown = stalls_shown(k);
  json_key(f, "stalls");
  fputc('{', f);
  json_u64(f, "samples", s->samples, 1);
  json_u64(f, "not_issued", s->not_issued, 1);
  json_num(f, "issue_active", k->issue_active >= 0 ? k->issue_active : NAN, 4,
           1);
  json_num(f, "other_share", k->other_share, 4, 1);
  json_u64(f, "omitted", k->stall_count - stall_shown, 1);
  json_key(f, "reasons");
  fputc('[', f);
  for (size_t i = 0; i < stall_shown; i++) {
    fputc('{', f);
    json_str(f, "name", k->stalls[i].reason, 1);
    json_str(f, "dimension", reason_dimension_key(k->stalls[i].dimension), 1);
    json_num(f, "share", k->stalls[i].share, 4, 1);
    json_u64(f, "samples", k->stalls[i].samples, 0);
    fputc('}', f);
    if (i + 1 < stall_shown)
      fputc(',', f);
  }
  fputs("]},", f);

  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  json_key(f, "hot");
  fputc('{', f);
  json_u64(f, "sampled_pcs", s->pc_count, 1);
  json_u64(f, "omitted", s->pc_count - hot_shown, 1);
  json_key(f, "instructions");
  fputc('[', f);
  for (size_t i = 0; i < hot_shown; i++) {
    const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
    fputc('{', f);
    json_u64(f, "offset", h->offset, 1);
    json_num(f, "share", h->share, 4, 1);
    json_u64(f, "samples", h->samples, 1);
    json_key(f, "sass");
    mprof__json_string(f, *h->sass ? h->sass : NULL);
    fputc(',', f);
    json_key(f, "file");
    mprof__json_string(f, *h->file ? h->file : NULL);
    fputc(',', f);
    json_key(f, "line");
    if (*h->file)
      fprintf(f, "%u,", h->line);
    else
      fputs("null,", f);
    json_key(f, "cubin_crc");
    fprintf(f, "\"0x%llx\",", (unsigned long long)h->cubin_crc);
    json_key(f, "reasons");
    fputc('[', f);
    for (size_t r = 0; r < h->reason_count; r++) {
      fputc('{', f);
      json_str(f, "name", h->reasons[r].reason, 1);
      json_num(f, "share", h->reasons[r].share, 4, 0);
      fputc('}', f);
      if (r + 1 < h->reason_count)
        fputc(',', f);
    }
    fputs("]}", f);
    if (i + 1 < hot_shown)
      fputc(',', f);
  }
  fputs("]},", f);
  json_memory(f, v, k);
  json_key(f, "notes");
  fputc('[', f);
  for (size_t i = 0; i < k->note_count; i++) {
    mprof__json_string(f, k->notes[i]);
    if (i + 1 < k->note_count)
      fputc(',', f);
  }
  fputs("]}", f);
}

static void json_summary(FILE *f, const summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t launches, devices;
  mprof_trace_launches(t, &launches);
  const mprof_device_record *dev = mprof_trace_devices(t, &devices);
  const char *pc_mode = mprof_trace_meta(t, "pc.mode");
  fputc('{', f);
  json_str(f, "kind", "mprof-summary", 1);
  json_u64(f, "schema", 1, 1);
  json_str(f, "mprof_version", MPROF_VERSION_STRING, 1);
  json_key(f, "trace");
  fputc('{', f);
  json_str(f, "path", mprof_trace_path(t), 1);
  json_u64(f, "bytes", mprof_trace_file_size(t), 1);
  json_u64(f, "launches", launches, 1);
  json_u64(f, "kernels", mprof_join_kernel_count(v->join), 1);
  json_u64(f, "kernel_time_ns", mprof_join_kernel_time(v->join), 1);
  json_u64(f, "span_ns", trace_span(t), 1);
  json_u64(f, "samples", mprof_join_sample_total(v->join), 1);
  json_str(f, "pc_mode", pc_mode ? pc_mode : "unknown", 1);
  json_str(f, "sidecar", sidecar_state(v), 0);
  fputs("},", f);
  json_key(f, "devices");
  fputc('[', f);
  for (size_t i = 0; i < devices; i++) {
    fputc('{', f);
    json_u64(f, "index", i, 1);
    json_u64(f, "id", dev[i].id, 1);
    json_str(f, "name", mprof_trace_string(t, dev[i].name), 1);
    json_key(f, "cc");
    fprintf(f, "\"%u.%u\",", dev[i].cc_major, dev[i].cc_minor);
    json_u64(f, "sms", dev[i].sm_count, 0);
    fputc('}', f);
    if (i + 1 < devices)
      fputc(',', f);
  }
  fputs("],", f);
  size_t processes = mprof_trace_process_count(t);
  if (processes > 1) {
    json_key(f, "processes");
    fputc('[', f);
    for (size_t i = 0; i < processes; i++) {
      fputc('{', f);
      json_u64(f, "index", i, 1);
      static const char *const keys[] = {"pid", "ppid", "host", "rank", "path"};
      for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        json_str(f, keys[k], process_meta(v, (uint32_t)i, keys[k]), k < 4);
      fputs(i + 1 < processes ? "}," : "}", f);
    }
    fputs("],", f);
  }
  json_key(f, "notes");
  fputc('[', f);
  size_t notes = mprof_diagnosis_note_count(v->d);
  for (size_t i = 0; i < notes; i++) {
    const mprof_note *n = mprof_diagnosis_note(v->d, i);
    fputc('{', f);
    json_str(f, "key", n->key, 1);
    json_str(f, "text", n->text, 0);
    fputc('}', f);
    if (i + 1 < notes)
      fputc(',', f);
  }
  fputs("],", f);
  json_key(f, "headline");
  if (v->shown) {
    const mprof_kernel_diagnosis *top =
        mprof_diagnosis_kernel(v->d, v->selected[0]);
    fputc('{', f);
    json_str(f, "kernel", top->stats->name, 1);
    json_num(f, "share", top->stats->share, 4, 1);
    json_str(f, "text", top->verdict, 0);
    fputs("},", f);
  } else {
    fputs("null,", f);
  }
  json_key(f, "kernels");
  fputc('{', f);
  json_u64(f, "matched", v->matched, 1);
  json_u64(f, "shown", v->shown, 1);
  json_u64(f, "omitted", v->matched - v->shown, 1);
  json_num(f, "omitted_share", v->omitted_share, 4, 1);
  json_str(f, "filter",
           v->opts->kernel && *v->opts->kernel ? v->opts->kernel : NULL, 1);
  json_key(f, "items");
  fputc('[', f);
  for (size_t i = 0; i < v->shown; i++) {
    json_kernel(f, v, i + 1, mprof_diagnosis_kernel(v->d, v->selected[i]));
    if (i + 1 < v->shown)
      fputc(',', f);
  }
  fputs("]}}\n", f);
}

/* ---- text panel --------------------------------------------------------- */

/* The name people read: mprof_name_short()'s unless MPROF_REPORT_FULL_NAMES. */
static const char *text_name(const summary_view *v, char *buf, size_t size,
                             const char *name) {
  if (v->opts->flags & MPROF_REPORT_FULL_NAMES)
    return name;
  return mprof_name_short(buf, size, name);
}

/* The kernel's global-memory accesses per instruction (`record blocks
 * --memory`), busiest first: what each warp access asked for against the
 * 32-byte sectors it touched. */
static void text_memory(FILE *f, const summary_view *v,
                        const mprof_kernel_diagnosis *k,
                        const mprof__style *st) {
  memory_view mv;
  if (!memory_view_build(&mv, v, k))
    return;
  char n[32], p[32];
  mprof_format_count(n, sizeof n, mv.warps);
  mprof_format_percent(p, sizeof p, memory_efficiency(mv.bytes, mv.sectors));
  fprintf(f,
          "│   %sglobal memory%s (counted, every access): %s warp accesses "
          "· sector efficiency %s\n",
          st->bold, st->reset, n, p);
  for (size_t i = 0; i < mv.shown; i++) {
    const mprof_memory_stats *x = mv.order[i];
    const char *sass = x->instruction && x->instruction->opcode
                           ? x->instruction->opcode
                           : "(no SASS)";
    double per_warp = (double)x->bytes / (double)x->warp_accesses;
    double sectors_per_warp = (double)x->sectors / (double)x->warp_accesses;
    mprof_format_count(n, sizeof n, x->warp_accesses);
    mprof_format_percent(p, sizeof p, x->efficiency);
    fprintf(f,
            "│     %s0x%05x%s %-10s %-26s %s%6s%s sectors used · %7.1f B "
            "asked / %4.1f sectors per warp · %s warp accesses\n",
            st->cyan, x->offset, st->reset, memory_kind(x->flags), sass,
            x->efficiency < 0.5 ? st->yellow : "", p, st->reset, per_warp,
            sectors_per_warp, n);
  }
  if (mv.count > mv.shown)
    fprintf(f, "│     %s(%zu more instructions with memory accesses)%s\n",
            st->dim, mv.count - mv.shown, st->reset);
  free(mv.order);
}

static void text_kernel(FILE *f, const summary_view *v, size_t rank,
                        const mprof_kernel_diagnosis *k,
                        const mprof__style *st) {
  const mprof_kernel_stats *s = k->stats;
  char a[32], b[32], c[32], d[32], e[32], g[32], n[32], p[32], name[256];
  mprof_format_percent(p, sizeof p, s->share);
  fprintf(f, "%s┌ #%zu %s%s", st->cyan, rank, st->reset, st->bold);
  fputs(text_name(v, name, sizeof name, s->name), f);
  fprintf(f, "%s", st->reset);
  if (s->device_id != MPROF_INDEX_NONE)
    fprintf(f, "  %s· device %u%s", st->dim, s->device_id, st->reset);
  char process[256];
  process_label(process, sizeof process, v, s);
  if (*process)
    fprintf(f, "  %s· %s%s", st->dim, process, st->reset);
  fprintf(f, "  %s· %s of GPU time%s\n", st->dim, p, st->reset);
  mprof_format_count(n, sizeof n, s->launches);
  mprof_format_duration(a, sizeof a, (double)s->total_ns);
  mprof_format_duration(b, sizeof b, s->mean_ns);
  mprof_format_duration(c, sizeof c, (double)s->median_ns);
  mprof_format_duration(d, sizeof d, (double)s->p90_ns);
  mprof_format_duration(e, sizeof e, (double)s->min_ns);
  mprof_format_duration(g, sizeof g, (double)s->max_ns);
  fprintf(f,
          "│ %s launch%s · total %s · mean %s · median %s · p90 %s · min %s "
          "· max %s\n",
          n, s->launches == 1 ? "" : "es", a, b, c, d, e, g);
  size_t shape_count;
  const mprof_shape_stats *shapes =
      mprof_join_shapes(v->join, k->kernel, &shape_count);
  size_t shown = shape_count < SHAPES_SHOWN ? shape_count : SHAPES_SHOWN;
  for (size_t i = 0; i < shown; i++) {
    const mprof_shape_stats *sh = &shapes[i];
    const mprof_occupancy *o = mprof_kernel_diagnosis_shape(k, i);
    fprintf(f, "│ grid %u×%u×%u block %u×%u×%u · %u regs · %u B smem",
            sh->grid[0], sh->grid[1], sh->grid[2], sh->block[0], sh->block[1],
            sh->block[2], sh->registers,
            sh->static_shared + sh->dynamic_shared);
    if (o->known && o->blocks_per_sm) {
      mprof_format_percent(p, sizeof p, o->theoretical);
      fprintf(f, " · occupancy %s (%s) · %.2f waves", p,
              mprof_occupancy_limiter_name(o->limiter), o->waves);
    }
    if (shape_count > 1) {
      mprof_format_percent(
          p, sizeof p, s->total_ns ? (double)sh->total_ns / s->total_ns : 0);
      fprintf(f, " · %s of its time", p);
    }
    fputc('\n', f);
  }
  if (shape_count > shown)
    fprintf(f, "│ %s(%zu more shapes)%s\n", st->dim, shape_count - shown,
            st->reset);
  if (sol_shown(v))
    text_throughput(f, k, st);
  fprintf(f, "│ %s▶%s %s%s%s\n", mprof__state_color(st, k->verdict_state),
          st->reset, st->bold, k->verdict, st->reset);
  for (size_t i = 0; i < k->dimension_count; i++) {
    const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(k, i);
    if (!dimension_shown(v, dim))
      continue;
    char state[16];
    snprintf(state, sizeof state, "%s", mprof_state_name(dim->state));
    if (dim->state == MPROF_STATE_ISSUE)
      snprintf(state, sizeof state, "ISSUE");
    fprintf(f, "│   %-30s %s%-7s%s %s%s%s\n", mprof_dimension_title(dim->id),
            mprof__state_color(st, dim->state), state, st->reset,
            dim->state == MPROF_STATE_OK || dim->state == MPROF_STATE_UNKNOWN
                ? st->dim
                : "",
            dim->detail, st->reset);
  }
  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  if (hot_shown) {
    fprintf(f, "│   %shot instructions%s (%zu of %zu sampled)\n", st->bold,
            st->reset, hot_shown, s->pc_count);
    for (size_t i = 0; i < hot_shown; i++) {
      const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
      mprof_format_percent(p, sizeof p, h->share);
      fprintf(f, "│     %s0x%05x%s %6s  %-36s", st->cyan, h->offset, st->reset,
              p, *h->sass ? h->sass : "(no SASS)");
      if (*h->file)
        fprintf(f, " %s%s:%u%s", st->dim, h->file, h->line, st->reset);
      for (size_t r = 0; r < h->reason_count; r++) {
        mprof_format_percent(p, sizeof p, h->reasons[r].share);
        fprintf(f, "%s%s %s", r ? " · " : "  ", h->reasons[r].reason, p);
      }
      fputc('\n', f);
    }
    if (s->pc_count > hot_shown)
      fprintf(f, "│     %s(%zu more sampled instructions)%s\n", st->dim,
              s->pc_count - hot_shown, st->reset);
  }
  text_memory(f, v, k, st);
  for (size_t i = 0; i < k->note_count; i++)
    fprintf(f, "│ %s! %s%s\n", st->yellow, k->notes[i], st->reset);
  fputs("└\n", f);
}

/* The head of a verdict sentence: "Memory-latency bound" of
 * "Memory-latency bound: 89.9% of warp samples ...". */
static int verdict_head(const char *verdict) {
  size_t n = strncmp(verdict, "minor: ", 7) == 0 ? strlen(verdict)
                                                 : strcspn(verdict, ":;.");
  return (int)(n > 40 ? 40 : n);
}

/* One line per kernel: share, launches, mean, verdict, estimated gain and
 * the name last, so a long name never pushes the numbers out of line. */
static void text_brief(FILE *f, const summary_view *v, const mprof__style *st) {
  size_t devices;
  mprof_trace_devices(v->trace, &devices);
  fprintf(f, "%s%6s %9s %10s  %-28s %6s  %s%s\n", st->dim, "share", "launches",
          "mean", "verdict", "gain", "kernel", st->reset);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_kernel_diagnosis *k =
        mprof_diagnosis_kernel(v->d, v->selected[i]);
    const mprof_kernel_stats *s = k->stats;
    char p[32], n[32], m[32], name[256];
    mprof_format_percent(p, sizeof p, s->share);
    mprof_format_count(n, sizeof n, s->launches);
    mprof_format_duration(m, sizeof m, s->mean_ns);
    /* The verdict's head; for a minor one ("No clear bottleneck; the
     * largest is minor: ..."), "minor: " and its dimension. */
    char minor[48];
    const char *verdict = k->verdict;
    if (k->verdict_state == MPROF_STATE_MINOR &&
        k->verdict_dimension < MPROF_DIM_COUNT_) {
      const char *title = mprof_dimension_title(k->verdict_dimension);
      const char *slash = strstr(title, " /");
      snprintf(minor, sizeof minor, "minor: %.*s",
               (int)(slash ? (size_t)(slash - title) : strlen(title)), title);
      verdict = minor;
    }
    int head = verdict_head(verdict);
    /* The estimated gain of the verdict's dimension (its cost: a share of
     * the kernel's stream time), "-" when the verdict names none. */
    char gain[32] = "-";
    for (size_t d = 0; d < k->dimension_count; d++)
      if (k->dimensions[d].id == k->verdict_dimension &&
          (k->dimensions[d].state == MPROF_STATE_ISSUE ||
           k->dimensions[d].state == MPROF_STATE_MINOR))
        mprof_format_percent(gain, sizeof gain, k->dimensions[d].cost);
    fprintf(f, "%6s %9s %10s  %s%-28.*s%s %6s  %s%s%s", p, n, m,
            mprof__state_color(st, k->verdict_state), head < 28 ? head : 28,
            verdict, st->reset, gain, st->bold,
            text_name(v, name, sizeof name, s->name), st->reset);
    char process[256];
    process_label(process, sizeof process, v, s);
    if (devices > 1 && s->device_id != MPROF_INDEX_NONE)
      fprintf(f, " %s(device %u%s%s)%s", st->dim, s->device_id,
              *process ? ", " : "", process, st->reset);
    else if (*process)
      fprintf(f, " %s(%s)%s", st->dim, process, st->reset);
    fputc('\n', f);
  }
}

static void text_summary(FILE *f, const summary_view *v,
                         const mprof__style *st) {
  const mprof_trace *t = v->trace;
  size_t launches, devices;
  mprof_trace_launches(t, &launches);
  mprof_trace_devices(t, &devices);
  char n[32], a[32], b[32];
  mprof_format_count(n, sizeof n, launches);
  mprof_format_duration(a, sizeof a, (double)mprof_join_kernel_time(v->join));
  mprof_format_count(b, sizeof b, mprof_join_sample_total(v->join));
  fprintf(f,
          "%smprof summary%s %s · %zu device%s · %s launches · %s kernel "
          "time · %s PC samples",
          st->bold, st->reset, mprof_trace_path(t), devices,
          devices == 1 ? "" : "s", n, a, b);
  size_t processes = mprof_trace_process_count(t);
  if (processes > 1)
    fprintf(f, " · %zu processes", processes);
  fputc('\n', f);
  for (size_t i = 0; i < mprof_diagnosis_note_count(v->d); i++)
    fprintf(f, "%s! %s%s\n", st->yellow, mprof_diagnosis_note(v->d, i)->text,
            st->reset);
  fputc('\n', f);
  int brief = (v->opts->flags & MPROF_REPORT_BRIEF) != 0;
  if (brief)
    text_brief(f, v, st);
  for (size_t i = 0; i < v->shown && !brief; i++) {
    text_kernel(f, v, i + 1, mprof_diagnosis_kernel(v->d, v->selected[i]), st);
    fputc('\n', f);
  }
  if (v->matched > v->shown) {
    mprof_format_percent(a, sizeof a, v->omitted_share);
    fprintf(f, "%s(%zu more kernels, %s of GPU time; %s)%s\n", st->dim,
            v->matched - v->shown, a,
            brief ? "--all lists them" : "--top N shows more", st->reset);
  }
  if (brief && v->shown)
    fprintf(f, "%s--top N or --kernel NAME: the diagnosis of each kernel%s\n",
            st->dim, st->reset);
}

int mprof_diagnosis_write(FILE *out, const mprof_diagnosis *diagnosis,
                          const mprof_report_options *opts) {
  mprof_report_options defaults = MPROF_REPORT_OPTIONS_INIT;
  if (!out || !diagnosis)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_diagnosis_write: NULL argument");
  if (!opts)
    opts = &defaults;
  int rc = mprof__report_options_check(opts);
  if (rc)
    return rc;
  summary_view v;
  memset(&v, 0, sizeof v);
  v.d = diagnosis;
  v.join = mprof_diagnosis_join(diagnosis);
  v.trace = mprof_join_trace(v.join);
  v.opts = opts;
  rc = mprof__select_kernels(&v.selected, &v.matched, v.join, opts->kernel);
  if (rc)
    return rc;
  v.shown = v.matched < opts->max_kernels ? v.matched : opts->max_kernels;
  for (size_t i = v.shown; i < v.matched; i++)
    v.omitted_share += mprof_join_kernel(v.join, v.selected[i])->share;
  mprof__style style;
  switch (opts->format) {
  case MPROF_REPORT_JSON: json_summary(out, &v); break;
  case MPROF_REPORT_TEXT:
    mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
    text_summary(out, &v, &style);
    break;
  default: xml_summary(out, &v); break;
  }
  free(v.selected);
  if (fflush(out) != 0 || ferror(out))
    return mprof__error_set(MPROF_EIO, "cannot write the summary: %s",
                            "output error");
  return 0;
}
