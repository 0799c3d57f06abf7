/*
 * mprof — the diff report: XML (docs/SUMMARY-SCHEMA.md, "mprof diff"),
 * JSON (docs/diff.schema.json) and a text panel.
 *
 * Bounded like the summary: max_kernels kernels, STALLS_SHOWN stall shifts,
 * the dimensions that changed and max_hot hot instructions per kernel.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/diff.h"
#include "mprof/names.h"
#include "mprof/version.h"
#include "analysis/diff_internal.h"
#include "report_internal.h"

#define STALLS_SHOWN 6
#define STALL_MIN_DELTA 0.005 /* smaller shifts are counted as omitted */
#define COST_MIN_DELTA                                                         \
  0.05 /* dimensions whose cost moved less and whose                           \
          state held are left out */

typedef struct diff_view {
  const mprof_diff *diff;
  const mprof_diagnosis *base, *candidate;
  const mprof_report_options *opts;
  double fail_above;
  size_t *selected;
  size_t matched, shown;
} diff_view;

static size_t stall_shifts_shown(const mprof_kernel_change *c) {
  size_t n = 0;
  if (!c->stalls_compared)
    return 0;
  while (n < c->stall_change_count && n < STALLS_SHOWN &&
         fabs(c->stall_changes[n].candidate_share -
              c->stall_changes[n].base_share) >= STALL_MIN_DELTA)
    n++;
  return n;
}

static int dimension_moved(const mprof_dimension_change *d) {
  return d->base_state != d->candidate_state ||
         fabs(d->candidate_cost - d->base_cost) >= COST_MIN_DELTA;
}

static size_t hot_shown(const diff_view *v, const mprof_kernel_change *c) {
  return c->hot_change_count < v->opts->max_hot ? c->hot_change_count
                                                : v->opts->max_hot;
}

static const char *hot_match_name(uint32_t mode) {
  return mode == MPROF_HOT_BY_OFFSET ? "offset"
         : mode == MPROF_HOT_BY_LINE ? "line"
                                     : "none";
}

static const char *verdict_key(const mprof_kernel_diagnosis *k) {
  return k && k->verdict_dimension < MPROF_DIM_COUNT_
             ? mprof_dimension_key(k->verdict_dimension)
             : "none";
}

static const mprof_join *side_join(const mprof_diagnosis *d) {
  return mprof_diagnosis_join(d);
}

/* ---- fields both formats write ------------------------------------------ */

static void trace_fields(mprof__fields *o, const mprof_diagnosis *d) {
  const mprof_join *j = side_join(d);
  const mprof_trace *t = mprof_join_trace(j);
  size_t launches;
  mprof_trace_launches(t, &launches);
  mprof__fields_str(o, "path", mprof_trace_path(t));
  mprof__fields_u64(o, "launches", launches);
  mprof__fields_u64(o, "kernels", mprof_join_kernel_count(j));
  mprof__fields_u64(o, "kernel_time_ns", mprof_join_kernel_time(j));
  mprof__fields_u64(o, "samples", mprof_join_sample_total(j));
  mprof__fields_str(o, "sidecar", mprof_join_sidecar(j) ? "present" : "absent");
}

/* @p k's measured throughput when its side's trace has PM samples (the
 * diff then shows it as the summary does); NULL otherwise. */
static const mprof_kernel_throughput *
side_throughput(const mprof_diagnosis *d, const mprof_kernel_diagnosis *k) {
  return k && k->throughput &&
                 mprof_throughput_available(mprof_diagnosis_throughput(d))
             ? k->throughput
             : NULL;
}

/* One side of a kernel's change; no verdict is "none" in XML, null in
 * JSON. */
static void side_fields(mprof__fields *o, const mprof_kernel_diagnosis *k) {
  mprof__fields_u64(o, "launches", k->stats->launches);
  mprof__fields_num(o, "mean_ns", k->stats->mean_ns, 0);
  mprof__fields_num(o, "stddev_ns", k->stats->stddev_ns, 0);
  mprof__fields_u64(o, "median_ns", k->stats->median_ns);
  mprof__fields_u64(o, "total_ns", k->stats->total_ns);
  mprof__fields_u64(o, "samples", k->stats->samples);
  const char *verdict = verdict_key(k);
  mprof__fields_str(o, "verdict",
                    o->json && strcmp(verdict, "none") == 0 ? NULL : verdict);
}

static void reason_fields(mprof__fields *o, const mprof_stall_change *s) {
  mprof__fields_str(o, "name", s->reason);
  mprof__fields_str(o, "dimension",
                    s->dimension < MPROF_DIM_COUNT_
                        ? mprof_dimension_key(s->dimension)
                        : "other");
  mprof__fields_num(o, "base_share", s->base_share, 4);
  mprof__fields_num(o, "candidate_share", s->candidate_share, 4);
}

static void dimension_fields(mprof__fields *o,
                             const mprof_dimension_change *d) {
  mprof__fields_str(o, "name", mprof_dimension_key(d->dimension));
  mprof__fields_str(o, "base_state", mprof_state_name(d->base_state));
  mprof__fields_str(o, "candidate_state", mprof_state_name(d->candidate_state));
  mprof__fields_num(o, "base_cost", d->base_cost, 4);
  mprof__fields_num(o, "candidate_cost", d->candidate_cost, 4);
}

static void hot_fields(mprof__fields *o, const mprof_hot_change *h) {
  mprof__fields_hex(o, "offset", h->offset);
  mprof__fields_str(o, "sass", *h->sass ? h->sass : NULL);
  mprof__fields_str(o, "file", *h->file ? h->file : NULL);
  mprof__fields_num(o, "line", *h->file ? (double)h->line : NAN, 0);
  mprof__fields_num(o, "base_share", h->base_share >= 0 ? h->base_share : NAN,
                    4);
  mprof__fields_num(o, "candidate_share",
                    h->candidate_share >= 0 ? h->candidate_share : NAN, 4);
}

/* ---- XML ---------------------------------------------------------------- */

static void xml_trace(FILE *f, const char *element, const mprof_diagnosis *d) {
  fprintf(f, "  <%s", element);
  mprof__fields o = {f, 0, 0};
  trace_fields(&o, d);
  fputs("/>\n", f);
}

static void xml_side(FILE *f, const char *element, const mprof_diagnosis *d,
                     const mprof_kernel_diagnosis *k) {
  if (!k)
    return;
  fprintf(f, "      <%s", element);
  mprof__fields o = {f, 0, 0};
  side_fields(&o, k);
  const mprof_kernel_throughput *t = side_throughput(d, k);
  if (!t) {
    fputs("/>\n", f);
    return;
  }
  fputs(">\n        <throughput", f);
  mprof__summary_throughput_fields(&o, t);
  fprintf(f, "/>\n      </%s>\n", element);
}

static void xml_kernel(FILE *f, const diff_view *v,
                       const mprof_kernel_change *c) {
  fputs("    <kernel", f);
  char short_name[256];
  mprof__xml_attr(f, "name", c->name);
  mprof__xml_attr(f, "short_name",
                  mprof_name_short(short_name, sizeof short_name, c->name));
  mprof__xml_attr(f, "mangled", c->mangled);
  if (c->device_id != MPROF_INDEX_NONE)
    mprof__xml_attr_u64(f, "device", c->device_id);
  mprof__xml_attr(f, "change", mprof_change_name(c->change));
  mprof__xml_attr(f, "significant", c->significant ? "true" : "false");
  if (c->base && c->candidate) {
    mprof__xml_attr_num(f, "mean_change", c->mean_change, 4);
    if (c->noise >= 0)
      mprof__xml_attr_num(f, "noise", c->noise, 4);
    mprof__xml_attr_num(f, "t", c->t, 2);
    mprof__xml_attr_num(f, "dof", c->dof, 1);
    mprof__xml_attr_num(f, "p_value", c->p_value, 6);
  }
  fprintf(f, " total_delta_ns=\"%lld\"", (long long)c->total_delta_ns);
  mprof__xml_attr_num(f, "total_change", c->total_change, 4);
  fputs(">\n      <summary>", f);
  mprof__xml_escape(f, c->summary);
  fputs("</summary>\n", f);
  xml_side(f, "base", v->base, c->base);
  xml_side(f, "candidate", v->candidate, c->candidate);
  if (c->base && c->candidate) {
    size_t shown = stall_shifts_shown(c);
    fputs("      <stalls", f);
    mprof__xml_attr(f, "compared", c->stalls_compared ? "true" : "false");
    mprof__xml_attr_u64(f, "shown", shown);
    mprof__xml_attr_u64(f, "omitted", c->stall_change_count - shown);
    fputs(shown ? ">\n" : "/>\n", f);
    for (size_t i = 0; i < shown; i++) {
      fputs("        <reason", f);
      mprof__fields o = {f, 0, 0};
      reason_fields(&o, &c->stall_changes[i]);
      fputs("/>\n", f);
    }
    if (shown)
      fputs("      </stalls>\n", f);
    size_t moved = 0;
    for (size_t i = 0; i < c->dimension_change_count; i++)
      moved += (size_t)dimension_moved(&c->dimension_changes[i]);
    fputs("      <dimensions", f);
    mprof__xml_attr_u64(f, "changed", moved);
    fputs(moved ? ">\n" : "/>\n", f);
    for (size_t i = 0; i < c->dimension_change_count; i++) {
      const mprof_dimension_change *d = &c->dimension_changes[i];
      if (!dimension_moved(d))
        continue;
      fputs("        <dimension", f);
      mprof__fields o = {f, 0, 0};
      dimension_fields(&o, d);
      fputs("/>\n", f);
    }
    if (moved)
      fputs("      </dimensions>\n", f);
    size_t hot = hot_shown(v, c);
    if (c->stalls_compared) {
      fputs("      <hot-instructions", f);
      mprof__xml_attr(f, "match", hot_match_name(c->hot_match));
      mprof__xml_attr_u64(f, "shown", hot);
      mprof__xml_attr_u64(f, "omitted", c->hot_change_count - hot);
      fputs(hot ? ">\n" : "/>\n", f);
      for (size_t i = 0; i < hot; i++) {
        fputs("        <instruction", f);
        mprof__fields o = {f, 0, 0};
        hot_fields(&o, &c->hot_changes[i]);
        fputs("/>\n", f);
      }
      if (hot)
        fputs("      </hot-instructions>\n", f);
    }
  }
  fputs("    </kernel>\n", f);
}

static void xml_diff(FILE *f, const diff_view *v) {
  uint64_t tb, tk;
  mprof_diff_totals(v->diff, &tb, &tk);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mprof-diff", f);
  mprof__xml_attr_u64(f, "schema", 1);
  mprof__xml_attr(f, "mprof_version", MPROF_VERSION_STRING);
  fputs(">\n", f);
  xml_trace(f, "base", v->base);
  xml_trace(f, "candidate", v->candidate);
  fputs("  <totals", f);
  mprof__xml_attr_u64(f, "base_ns", tb);
  mprof__xml_attr_u64(f, "candidate_ns", tk);
  fprintf(f, " delta_ns=\"%lld\"", (long long)tk - (long long)tb);
  mprof__xml_attr_num(f, "change", tb ? ((double)tk - (double)tb) / tb : 0, 4);
  fputs("/>\n", f);
  if (v->fail_above >= 0) {
    size_t tripped = mprof_diff_gate(v->diff, v->fail_above);
    fputs("  <gate", f);
    mprof__xml_attr_num(f, "fail_above_percent", v->fail_above, 2);
    mprof__xml_attr(f, "tripped", tripped ? "true" : "false");
    mprof__xml_attr_u64(f, "kernels", tripped);
    fputs("/>\n", f);
  }
  size_t counts[5] = {0};
  for (size_t i = 0; i < v->matched; i++)
    counts[mprof_diff_kernel(v->diff, v->selected[i])->change]++;
  fputs("  <kernels", f);
  mprof__xml_attr_u64(f, "matched", v->matched);
  mprof__xml_attr_u64(f, "shown", v->shown);
  mprof__xml_attr_u64(f, "omitted", v->matched - v->shown);
  mprof__xml_attr_u64(f, "slower", counts[MPROF_CHANGE_SLOWER]);
  mprof__xml_attr_u64(f, "faster", counts[MPROF_CHANGE_FASTER]);
  mprof__xml_attr_u64(f, "noise", counts[MPROF_CHANGE_NOISE]);
  mprof__xml_attr_u64(f, "only_base", counts[MPROF_CHANGE_ONLY_BASE]);
  mprof__xml_attr_u64(f, "only_candidate", counts[MPROF_CHANGE_ONLY_CANDIDATE]);
  if (v->opts->kernel && *v->opts->kernel)
    mprof__xml_attr(f, "filter", v->opts->kernel);
  fputs(v->shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < v->shown; i++)
    xml_kernel(f, v, mprof_diff_kernel(v->diff, v->selected[i]));
  if (v->shown)
    fputs("  </kernels>\n", f);
  fputs("</mprof-diff>\n", f);
}

/* ---- JSON --------------------------------------------------------------- */

static void key(FILE *f, const char *k) {
  mprof__json_string(f, k);
  fputc(':', f);
}

static void num(FILE *f, const char *k, double value, int digits,
                const char *after) {
  key(f, k);
  mprof__json_num(f, value, digits);
  fputs(after, f);
}

static void str(FILE *f, const char *k, const char *value, const char *after) {
  key(f, k);
  mprof__json_string(f, value);
  fputs(after, f);
}

static void json_trace(FILE *f, const mprof_diagnosis *d) {
  fputc('{', f);
  mprof__fields o = {f, 1, 0};
  trace_fields(&o, d);
  fputc('}', f);
}

static void json_side(FILE *f, const mprof_diagnosis *d,
                      const mprof_kernel_diagnosis *k) {
  if (!k) {
    fputs("null", f);
    return;
  }
  fputc('{', f);
  mprof__fields o = {f, 1, 0};
  side_fields(&o, k);
  const mprof_kernel_throughput *t = side_throughput(d, k);
  if (t) {
    fputs(",\"throughput\":{", f);
    mprof__fields inner = {f, 1, 0};
    mprof__summary_throughput_fields(&inner, t);
    fputc('}', f);
  }
  fputc('}', f);
}

static void json_kernel(FILE *f, const diff_view *v,
                        const mprof_kernel_change *c) {
  int both = c->base && c->candidate;
  fputc('{', f);
  char short_name[256];
  str(f, "name", c->name, ",");
  str(f, "short_name", mprof_name_short(short_name, sizeof short_name, c->name),
      ",");
  str(f, "mangled", c->mangled, ",");
  key(f, "device");
  if (c->device_id != MPROF_INDEX_NONE)
    fprintf(f, "%u,", c->device_id);
  else
    fputs("null,", f);
  str(f, "change", mprof_change_name(c->change), ",");
  key(f, "significant");
  fputs(c->significant ? "true," : "false,", f);
  str(f, "summary", c->summary, ",");
  num(f, "mean_change", both ? c->mean_change : NAN, 4, ",");
  num(f, "noise", both && c->noise >= 0 ? c->noise : NAN, 4, ",");
  num(f, "t", both ? c->t : NAN, 2, ",");
  num(f, "dof", both && c->dof > 0 ? c->dof : NAN, 1, ",");
  num(f, "p_value", both ? c->p_value : NAN, 6, ",");
  key(f, "total_delta_ns");
  fprintf(f, "%lld,", (long long)c->total_delta_ns);
  num(f, "total_change", c->total_change, 4, ",");
  key(f, "base");
  json_side(f, v->base, c->base);
  fputc(',', f);
  key(f, "candidate");
  json_side(f, v->candidate, c->candidate);
  fputc(',', f);
  key(f, "stalls");
  if (!both) {
    fputs("null,", f);
  } else {
    size_t shown = stall_shifts_shown(c);
    fputc('{', f);
    key(f, "compared");
    fputs(c->stalls_compared ? "true," : "false,", f);
    num(f, "omitted", (double)(c->stall_change_count - shown), 0, ",");
    key(f, "reasons");
    fputc('[', f);
    for (size_t i = 0; i < shown; i++) {
      fputc('{', f);
      mprof__fields o = {f, 1, 0};
      reason_fields(&o, &c->stall_changes[i]);
      fputs(i + 1 < shown ? "}," : "}", f);
    }
    fputs("]},", f);
  }
  key(f, "dimensions");
  fputc('[', f);
  int first = 1;
  for (size_t i = 0; both && i < c->dimension_change_count; i++) {
    const mprof_dimension_change *d = &c->dimension_changes[i];
    if (!dimension_moved(d))
      continue;
    if (!first)
      fputc(',', f);
    first = 0;
    fputc('{', f);
    mprof__fields o = {f, 1, 0};
    dimension_fields(&o, d);
    fputc('}', f);
  }
  fputs("],", f);
  key(f, "hot");
  if (!both || !c->stalls_compared) {
    fputs("null}", f);
    return;
  }
  size_t hot = hot_shown(v, c);
  fputc('{', f);
  str(f, "match", hot_match_name(c->hot_match), ",");
  num(f, "omitted", (double)(c->hot_change_count - hot), 0, ",");
  key(f, "instructions");
  fputc('[', f);
  for (size_t i = 0; i < hot; i++) {
    fputc('{', f);
    mprof__fields o = {f, 1, 0};
    hot_fields(&o, &c->hot_changes[i]);
    fputs(i + 1 < hot ? "}," : "}", f);
  }
  fputs("]}}", f);
}

static void json_diff(FILE *f, const diff_view *v) {
  uint64_t tb, tk;
  mprof_diff_totals(v->diff, &tb, &tk);
  fputc('{', f);
  str(f, "kind", "mprof-diff", ",");
  num(f, "schema", 1, 0, ",");
  str(f, "mprof_version", MPROF_VERSION_STRING, ",");
  key(f, "base");
  json_trace(f, v->base);
  fputc(',', f);
  key(f, "candidate");
  json_trace(f, v->candidate);
  fputc(',', f);
  key(f, "totals");
  fputc('{', f);
  num(f, "base_ns", (double)tb, 0, ",");
  num(f, "candidate_ns", (double)tk, 0, ",");
  key(f, "delta_ns");
  fprintf(f, "%lld,", (long long)tk - (long long)tb);
  num(f, "change", tb ? ((double)tk - (double)tb) / tb : 0, 4, "},");
  key(f, "gate");
  if (v->fail_above >= 0) {
    size_t tripped = mprof_diff_gate(v->diff, v->fail_above);
    fputc('{', f);
    num(f, "fail_above_percent", v->fail_above, 2, ",");
    key(f, "tripped");
    fputs(tripped ? "true," : "false,", f);
    num(f, "kernels", (double)tripped, 0, "},");
  } else {
    fputs("null,", f);
  }
  size_t counts[5] = {0};
  for (size_t i = 0; i < v->matched; i++)
    counts[mprof_diff_kernel(v->diff, v->selected[i])->change]++;
  key(f, "kernels");
  fputc('{', f);
  num(f, "matched", (double)v->matched, 0, ",");
  num(f, "shown", (double)v->shown, 0, ",");
  num(f, "omitted", (double)(v->matched - v->shown), 0, ",");
  num(f, "slower", (double)counts[MPROF_CHANGE_SLOWER], 0, ",");
  num(f, "faster", (double)counts[MPROF_CHANGE_FASTER], 0, ",");
  num(f, "noise", (double)counts[MPROF_CHANGE_NOISE], 0, ",");
  num(f, "only_base", (double)counts[MPROF_CHANGE_ONLY_BASE], 0, ",");
  num(f, "only_candidate", (double)counts[MPROF_CHANGE_ONLY_CANDIDATE], 0, ",");
  str(f, "filter", v->opts->kernel && *v->opts->kernel ? v->opts->kernel : NULL,
      ",");
  key(f, "items");
  fputc('[', f);
  for (size_t i = 0; i < v->shown; i++) {
    json_kernel(f, v, mprof_diff_kernel(v->diff, v->selected[i]));
    if (i + 1 < v->shown)
      fputc(',', f);
  }
  fputs("]}}\n", f);
}

/* ---- text --------------------------------------------------------------- */

/* The name a person reads: the short one, unless MPROF_REPORT_FULL_NAMES
 * or another kernel shown has the same short name (overloads, as
 * "sgemm_tiled(int, ...)" beside "sgemm_tiled(int, ..., launch)"). */
static const char *diff_text_name(const diff_view *v,
                                  const mprof_kernel_change *c, char *name,
                                  size_t size) {
  char other[256];
  if (v->opts->flags & MPROF_REPORT_FULL_NAMES)
    return c->name;
  mprof_name_short(name, size, c->name);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_kernel_change *o = mprof_diff_kernel(v->diff, v->selected[i]);
    if (strcmp(o->name, c->name) != 0 &&
        strcmp(mprof_name_short(other, sizeof other, o->name), name) == 0)
      return c->name;
  }
  return name;
}

/* "speed of light: DRAM 90.0% -> 45.0%, ..." when both sides measured the
 * kernel: the counters of the summary's line, those both sides have. */
static void text_speed_of_light(FILE *f, const mprof_kernel_throughput *a,
                                const mprof_kernel_throughput *b) {
  if (!a || !b || !a->samples || !b->samples)
    return;
  const char *sep = "    speed of light:";
  for (size_t i = 0; i < MPROF__SOL_TEXT_COUNT; i++) {
    uint32_t c = mprof__sol_text[i].counter;
    double x = a->value[c], y = b->value[c];
    if (isnan(x) || isnan(y))
      continue;
    char p[32], q[32];
    mprof_format_percent(p, sizeof p, x / 100.0);
    mprof_format_percent(q, sizeof q, y / 100.0);
    fprintf(f, "%s %s %s -> %s", sep, mprof__sol_text[i].label, p, q);
    sep = ",";
  }
  if (*sep == ',')
    fputc('\n', f);
}

static void text_diff(FILE *f, const diff_view *v, const mprof__style *st) {
  uint64_t tb, tk;
  mprof_diff_totals(v->diff, &tb, &tk);
  char a[32], b[32];
  mprof_format_duration(a, sizeof a, (double)tb);
  mprof_format_duration(b, sizeof b, (double)tk);
  fprintf(f, "%smprof diff%s %s -> %s\n", st->bold, st->reset,
          mprof_trace_path(mprof_join_trace(side_join(v->base))),
          mprof_trace_path(mprof_join_trace(side_join(v->candidate))));
  fprintf(f, "kernel time %s -> %s (%+.1f%%)\n", a, b,
          tb ? 100.0 * ((double)tk - (double)tb) / (double)tb : 0.0);
  if (v->fail_above >= 0) {
    size_t tripped = mprof_diff_gate(v->diff, v->fail_above);
    fprintf(f, "%sgate --fail-above %.4g%%: %s%s\n",
            tripped ? st->red : st->green, v->fail_above,
            tripped ? "TRIPPED" : "passed", st->reset);
  }
  fputc('\n', f);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(v->diff, v->selected[i]);
    const char *color = c->change == MPROF_CHANGE_SLOWER   ? st->red
                        : c->change == MPROF_CHANGE_FASTER ? st->green
                        : c->change == MPROF_CHANGE_NOISE  ? st->dim
                                                           : st->yellow;
    char name[256];
    fprintf(f, "%s%-14s%s %s%s%s", color, mprof_change_name(c->change),
            st->reset, st->bold, diff_text_name(v, c, name, sizeof name),
            st->reset);
    if (c->device_id != MPROF_INDEX_NONE)
      fprintf(f, " %s(device %u)%s", st->dim, c->device_id, st->reset);
    fprintf(f, "\n    %s\n", c->summary);
    size_t shifts = stall_shifts_shown(c);
    if (shifts) {
      fputs("    stalls:", f);
      for (size_t s = 0; s < shifts && s < 4; s++) {
        mprof_format_percent(a, sizeof a, c->stall_changes[s].base_share);
        mprof_format_percent(b, sizeof b, c->stall_changes[s].candidate_share);
        fprintf(f, "%s %s %s -> %s", s ? "," : "", c->stall_changes[s].reason,
                a, b);
      }
      fputc('\n', f);
    }
    text_speed_of_light(f, side_throughput(v->base, c->base),
                        side_throughput(v->candidate, c->candidate));
    size_t hot = hot_shown(v, c);
    for (size_t h = 0; h < hot && h < 3; h++) {
      const mprof_hot_change *x = &c->hot_changes[h];
      if (x->base_share >= 0)
        mprof_format_percent(a, sizeof a, x->base_share);
      else
        snprintf(a, sizeof a, "-");
      if (x->candidate_share >= 0)
        mprof_format_percent(b, sizeof b, x->candidate_share);
      else
        snprintf(b, sizeof b, "-");
      fprintf(f, "    %s0x%05x%s %6s -> %-6s %s", st->cyan, x->offset,
              st->reset, a, b, *x->sass ? x->sass : "");
      if (*x->file)
        fprintf(f, " %s%s:%u%s", st->dim, x->file, x->line, st->reset);
      fputc('\n', f);
    }
  }
  if (v->matched > v->shown)
    fprintf(f, "%s(%zu more kernels; --top N shows more)%s\n", st->dim,
            v->matched - v->shown, st->reset);
}

int mprof_diff_write(FILE *out, const mprof_diff *diff,
                     const mprof_report_options *opts,
                     double fail_above_percent) {
  mprof_report_options defaults = MPROF_REPORT_OPTIONS_INIT;
  if (!out || !diff)
    return mprof__error_set(MPROF_EINVAL, "mprof_diff_write: NULL argument");
  if (!opts)
    opts = &defaults;
  int rc = mprof__report_options_check(opts);
  if (rc)
    return rc;
  diff_view v;
  memset(&v, 0, sizeof v);
  v.diff = diff;
  v.opts = opts;
  v.fail_above = fail_above_percent;
  size_t n = mprof_diff_kernel_count(diff);
  v.base = mprof__diff_base(diff);
  v.candidate = mprof__diff_candidate(diff);
  int exact = 0;
  for (size_t i = 0; opts->kernel && i < n && !exact; i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(diff, i);
    exact = strcmp(c->name, opts->kernel) == 0 ||
            strcmp(c->mangled, opts->kernel) == 0;
  }
  mprof__matcher m;
  rc = mprof__matcher_init(&m, opts->kernel, exact);
  if (rc)
    return rc;
  v.selected = (size_t *)malloc((n ? n : 1) * sizeof *v.selected);
  if (!v.selected) {
    mprof__matcher_free(&m);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(diff, i);
    if (mprof__matcher_test(&m, c->name, c->mangled))
      v.selected[v.matched++] = i;
  }
  mprof__matcher_free(&m);
  if (!v.matched && opts->kernel && *opts->kernel) {
    free(v.selected);
    return mprof__error_set(MPROF_ENOTFOUND,
                            "no kernel of either trace matches '%s'",
                            opts->kernel);
  }
  v.shown = v.matched < opts->max_kernels ? v.matched : opts->max_kernels;
  mprof__style style;
  switch (opts->format) {
  case MPROF_REPORT_JSON: json_diff(out, &v); break;
  case MPROF_REPORT_TEXT:
    mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
    text_diff(out, &v, &style);
    break;
  default: xml_diff(out, &v); break;
  }
  free(v.selected);
  if (fflush(out) != 0 || ferror(out))
    return mprof__error_set(MPROF_EIO, "cannot write the diff: output error");
  return 0;
}
