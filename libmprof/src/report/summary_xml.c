/*
 * mprof — the summary report as XML (docs/SUMMARY-SCHEMA.md).
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

static void xml_throughput(FILE *f, const mprof_kernel_diagnosis *k) {
  fputs("      <throughput", f);
  mprof__fields o = {f, 0, 0};
  mprof__summary_throughput_fields(&o, k->throughput);
  fputs("/>\n", f);
}

static void xml_memory(FILE *f, const mprof__summary_view *v,
                       const mprof_kernel_diagnosis *k) {
  mprof__summary_memory mv;
  if (!mprof__summary_memory_view_build(&mv, v, k))
    return;
  fputs("      <memory", f);
  mprof__fields o = {f, 0, 0};
  mprof__summary_memory_fields(&o, &mv);
  fputs(">\n", f);
  for (size_t i = 0; i < mv.shown; i++) {
    fputs("        <access", f);
    mprof__summary_access_fields(&o, mv.order[i]);
    fputs("/>\n", f);
  }
  fputs("      </memory>\n", f);
  free(mv.order);
}

static void xml_kernel(FILE *f, const mprof__summary_view *v, size_t rank,
                       const mprof_kernel_diagnosis *k) {
  const mprof_kernel_stats *s = k->stats;
  fputs("    <kernel", f);
  mprof__fields o = {f, 0, 0};
  mprof__summary_kernel_fields(&o, v, rank, k);
  fputs(">\n      <verdict", f);
  mprof__xml_attr(f, "dimension",
                  k->verdict_dimension < MPROF_DIM_COUNT_
                      ? mprof_dimension_key(k->verdict_dimension)
                      : "none");
  mprof__xml_attr(f, "state", mprof_state_name(k->verdict_state));
  if (k->roof)
    mprof__xml_attr(f, "roof", k->roof);
  fputs(">", f);
  mprof__xml_escape(f, k->verdict);
  fputs("</verdict>\n", f);
  if (mprof__summary_sol_shown(v))
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
    if (!mprof__summary_dimension_shown(v, dim))
      continue;
    fputs("        <dimension", f);
    mprof__xml_attr(f, "name", mprof_dimension_key(dim->id));
    mprof__xml_attr(f, "state", mprof_state_name(dim->state));
    mprof__xml_attr_num(f, "cost", dim->cost, 4);
    for (size_t m = 0; m < dim->metric_count; m++) {
      const mprof_metric *metric = &dim->metrics[m];
      int integral = mprof__summary_metric_integral(metric);
      mprof__xml_attr_num(f, metric->name, metric->value, integral ? 0 : 4);
    }
    fputs(">", f);
    mprof__xml_escape(f, dim->detail);
    fputs("</dimension>\n", f);
  }
  fputs("      </dimensions>\n", f);

  size_t stall_shown = mprof__summary_stalls_shown(k);
  fputs("      <stalls", f);
  mprof__summary_stalls_fields(&o, k, stall_shown);
  fputs(stall_shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < stall_shown; i++) {
    fputs("        <reason", f);
    mprof__summary_stall_fields(&o, &k->stalls[i]);
    fputs("/>\n", f);
  }
  if (stall_shown)
    fputs("      </stalls>\n", f);

  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  fputs("      <hot-instructions", f);
  mprof__summary_hot_header_fields(&o, k, hot_shown);
  fputs(hot_shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < hot_shown; i++) {
    const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
    fputs("        <instruction", f);
    mprof__summary_hot_fields(&o, h);
    fputs(h->reason_count ? ">\n" : "/>\n", f);
    for (size_t r = 0; r < h->reason_count; r++) {
      fputs("          <reason", f);
      mprof__fields_str(&o, "name", h->reasons[r].reason);
      mprof__fields_num(&o, "share", h->reasons[r].share, 4);
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

void mprof__summary_xml(FILE *f, const mprof__summary_view *v) {
  const mprof_trace *t = v->trace;
  size_t devices;
  mprof_trace_devices(t, &devices);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mprof-summary", f);
  mprof__xml_attr_u64(f, "schema", 1);
  mprof__xml_attr(f, "mprof_version", MPROF_VERSION_STRING);
  fputs(">\n  <trace", f);
  mprof__fields o = {f, 0, 0};
  mprof__summary_trace_fields(&o, v);
  fputs("/>\n", f);
  for (size_t i = 0; i < devices; i++) {
    fputs("  <device", f);
    mprof__summary_device_fields(&o, v, i);
    fputs("/>\n", f);
  }
  size_t processes = mprof_trace_process_count(t);
  for (size_t i = 0; processes > 1 && i < processes; i++) {
    fputs("  <process", f);
    mprof__summary_process_fields(&o, v, i);
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
