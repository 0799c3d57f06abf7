/*
 * mprof — the summary report as JSON (docs/summary.schema.json).
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
  json_key(f, "throughput");
  fputc('{', f);
  mprof__fields o = {f, 1, 0};
  mprof__summary_throughput_fields(&o, k->throughput);
  fputs("},", f);
}

static void json_memory(FILE *f, const mprof__summary_view *v,
                        const mprof_kernel_diagnosis *k) {
  mprof__summary_memory mv;
  if (!mprof__summary_memory_view_build(&mv, v, k))
    return;
  json_key(f, "memory");
  fputc('{', f);
  mprof__fields o = {f, 1, 0};
  mprof__summary_memory_fields(&o, &mv);
  fputc(',', f);
  json_key(f, "accesses");
  fputc('[', f);
  for (size_t i = 0; i < mv.shown; i++) {
    fputc('{', f);
    mprof__fields x = {f, 1, 0};
    mprof__summary_access_fields(&x, mv.order[i]);
    fputs(i + 1 < mv.shown ? "}," : "}", f);
  }
  fputs("]},", f);
  free(mv.order);
}

static void json_kernel(FILE *f, const mprof__summary_view *v, size_t rank,
                        const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  fputc('{', f);
  mprof__fields head = {f, 1, 0};
  mprof__summary_kernel_fields(&head, v, rank, k);
  fputc(',', f);
  json_key(f, "verdict");
  fputc('{', f);
  json_key(f, "dimension");
  if (k->verdict_dimension < MPROF_DIM_COUNT_)
    mprof__json_string(f, mprof_dimension_key(k->verdict_dimension));
  else
    fputs("null", f);
  fputc(',', f);
  json_str(f, "state", mprof_state_name(k->verdict_state), 1);
  if (k->roof)
    json_str(f, "roof", k->roof, 1);
  json_str(f, "text", k->verdict, 0);
  fputs("},", f);
  if (mprof__summary_sol_shown(v))
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
    if (!mprof__summary_dimension_shown(v, dim))
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
      int integral = mprof__summary_metric_integral(metric);
      json_num(f, metric->name, metric->value, integral ? 0 : 4,
               m + 1 < dim->metric_count);
    }
    fputs("}}", f);
  }
  fputs("},", f);

  size_t stall_shown = mprof__summary_stalls_shown(k);
  json_key(f, "stalls");
  fputc('{', f);
  mprof__fields stalls = {f, 1, 0};
  mprof__summary_stalls_fields(&stalls, k, stall_shown);
  fputc(',', f);
  json_key(f, "reasons");
  fputc('[', f);
  for (size_t i = 0; i < stall_shown; i++) {
    fputc('{', f);
    mprof__fields r = {f, 1, 0};
    mprof__summary_stall_fields(&r, &k->stalls[i]);
    fputs(i + 1 < stall_shown ? "}," : "}", f);
  }
  fputs("]},", f);

  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  json_key(f, "hot");
  fputc('{', f);
  mprof__fields hot = {f, 1, 0};
  mprof__summary_hot_header_fields(&hot, k, hot_shown);
  fputc(',', f);
  json_key(f, "instructions");
  fputc('[', f);
  for (size_t i = 0; i < hot_shown; i++) {
    const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
    fputc('{', f);
    mprof__fields x = {f, 1, 0};
    mprof__summary_hot_fields(&x, h);
    fputc(',', f);
    json_key(f, "reasons");
    fputc('[', f);
    for (size_t r = 0; r < h->reason_count; r++) {
      fputc('{', f);
      mprof__fields rs = {f, 1, 0};
      mprof__fields_str(&rs, "name", h->reasons[r].reason);
      mprof__fields_num(&rs, "share", h->reasons[r].share, 4);
      fputs(r + 1 < h->reason_count ? "}," : "}", f);
    }
    fputs(i + 1 < hot_shown ? "]}," : "]}", f);
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

/* "KEY":[{...},...], one object of @p fields for each of @p count. */
static void json_objects(FILE *f, const char *key, size_t count,
                         const mprof__summary_view *v,
                         void (*fields)(mprof__fields *,
                                        const mprof__summary_view *, size_t)) {
  json_key(f, key);
  fputc('[', f);
  for (size_t i = 0; i < count; i++) {
    fputc('{', f);
    mprof__fields o = {f, 1, 0};
    fields(&o, v, i);
    fputs(i + 1 < count ? "}," : "}", f);
  }
  fputs("],", f);
}

void mprof__summary_json(FILE *f, const mprof__summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t devices;
  mprof_trace_devices(t, &devices);
  fputc('{', f);
  json_str(f, "kind", "mprof-summary", 1);
  json_u64(f, "schema", 1, 1);
  json_str(f, "mprof_version", MPROF_VERSION_STRING, 1);
  json_key(f, "trace");
  fputc('{', f);
  mprof__fields o = {f, 1, 0};
  mprof__summary_trace_fields(&o, v);
  fputs("},", f);
  json_objects(f, "devices", devices, v, mprof__summary_device_fields);
  size_t processes = mprof_trace_process_count(t);
  if (processes > 1)
    json_objects(f, "processes", processes, v, mprof__summary_process_fields);
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
