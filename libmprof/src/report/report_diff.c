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

/* @p k's measured throughput when its side's trace has PM samples (the
 * diff then shows it as the summary does); NULL otherwise. */
static const mprof_kernel_throughput *
side_throughput(const mprof_diagnosis *d, const mprof_kernel_diagnosis *k) {
  return k && k->throughput &&
                 mprof_throughput_available(mprof_diagnosis_throughput(d))
             ? k->throughput
             : NULL;
}

/* ---- XML and JSON ------------------------------------------------------- */

static void reason_fields(mprof__fields *o, const void *change, size_t i) {
  const mprof_stall_change *s =
      &((const mprof_kernel_change *)change)->stall_changes[i];
  mprof__fields_str(o, "name", s->reason);
  mprof__fields_str(o, "dimension",
                    mprof__report_reason_dimension(s->dimension));
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

static void hot_fields(mprof__fields *o, const void *change, size_t i) {
  const mprof_hot_change *h =
      &((const mprof_kernel_change *)change)->hot_changes[i];
  mprof__fields_hex(o, "offset", h->offset);
  mprof__fields_str(o, "sass", *h->sass ? h->sass : NULL);
  mprof__fields_str(o, "file", *h->file ? h->file : NULL);
  mprof__fields_num(o, "line", *h->file ? (double)h->line : NAN, 0);
  mprof__fields_num(o, "base_share", h->base_share >= 0 ? h->base_share : NAN,
                    4);
  mprof__fields_num(o, "candidate_share",
                    h->candidate_share >= 0 ? h->candidate_share : NAN, 4);
}

/* A signed count: total_delta_ns, delta_ns. */
static void fields_i64(mprof__fields *o, const char *name, long long value) {
  char text[24];
  snprintf(text, sizeof text, "%lld", value);
  mprof__fields_raw(o, name, text);
}

static void trace(mprof__fields *parent, const char *name,
                  const mprof_diagnosis *d) {
  const mprof_join *j = mprof_diagnosis_join(d);
  const mprof_trace *t = mprof_join_trace(j);
  size_t launches;
  mprof_trace_launches(t, &launches);
  mprof__fields o;
  mprof__fields_open(&o, parent, name, name);
  mprof__fields_str(&o, "path", mprof_trace_path(t));
  mprof__fields_u64(&o, "launches", launches);
  mprof__fields_u64(&o, "kernels", mprof_join_kernel_count(j));
  mprof__fields_u64(&o, "kernel_time_ns", mprof_join_kernel_time(j));
  mprof__fields_u64(&o, "samples", mprof_join_sample_total(j));
  mprof__fields_str(&o, "sidecar",
                    mprof_join_sidecar(j) ? "present" : "absent");
  mprof__fields_close(&o);
}

/* One side of a kernel's change, with its measured throughput; null in
 * JSON (left out in XML) where the kernel did not run. No verdict is
 * "none" in XML, null in JSON. */
static void side(mprof__fields *parent, const char *name,
                 const mprof_diagnosis *d, const mprof_kernel_diagnosis *k) {
  if (!k) {
    mprof__fields_str(parent, name, NULL);
    return;
  }
  mprof__fields o;
  mprof__fields_open(&o, parent, name, name);
  mprof__fields_u64(&o, "launches", k->stats->launches);
  mprof__fields_num(&o, "mean_ns", k->stats->mean_ns, 0);
  mprof__fields_num(&o, "stddev_ns", k->stats->stddev_ns, 0);
  mprof__fields_u64(&o, "median_ns", k->stats->median_ns);
  mprof__fields_u64(&o, "total_ns", k->stats->total_ns);
  mprof__fields_u64(&o, "samples", k->stats->samples);
  mprof__fields_str(&o, "verdict",
                    k->verdict_dimension < MPROF_DIM_COUNT_
                        ? mprof_dimension_key(k->verdict_dimension)
                    : o.json ? NULL
                             : "none");
  const mprof_kernel_throughput *t = side_throughput(d, k);
  if (t)
    mprof__summary_throughput(&o, t);
  mprof__fields_close(&o);
}

/* The stall shifts, the dimensions that moved and the hot instructions of
 * a kernel both sides ran. */
static void shifts(mprof__fields *o, const diff_view *v,
                   const mprof_kernel_change *c) {
  size_t shown = stall_shifts_shown(c), moved = 0, hot = hot_shown(v, c);
  mprof__fields s, list, x;
  mprof__fields_open(&s, o, "stalls", "stalls");
  mprof__fields_raw(&s, "compared", c->stalls_compared ? "true" : "false");
  mprof__report_shown(&s, shown, c->stall_change_count);
  mprof__report_records(&s, "reason", "reasons", shown, reason_fields, c);
  mprof__fields_close(&s);
  for (size_t i = 0; i < c->dimension_change_count; i++)
    moved += (size_t)dimension_moved(&c->dimension_changes[i]);
  mprof__fields_list(&list, o, "dimensions", "dimensions");
  if (!list.json)
    mprof__fields_u64(&list, "changed", moved);
  for (size_t i = 0; i < c->dimension_change_count; i++) {
    if (!dimension_moved(&c->dimension_changes[i]))
      continue;
    mprof__fields_open(&x, &list, "dimension", NULL);
    dimension_fields(&x, &c->dimension_changes[i]);
    mprof__fields_close(&x);
  }
  mprof__fields_close(&list);
  if (!c->stalls_compared) {
    mprof__fields_str(o, "hot", NULL);
    return;
  }
  mprof__fields_open(&s, o, "hot-instructions", "hot");
  mprof__fields_str(&s, "match", hot_match_name(c->hot_match));
  mprof__report_shown(&s, hot, c->hot_change_count);
  mprof__report_records(&s, "instruction", "instructions", hot, hot_fields, c);
  mprof__fields_close(&s);
}

/* Kernel @p i of the view. */
static void kernel(mprof__fields *o, const void *view, size_t i) {
  const diff_view *v = (const diff_view *)view;
  const mprof_kernel_change *c = mprof_diff_kernel(v->diff, v->selected[i]);
  int both = c->base && c->candidate;
  mprof__fields x;
  mprof__report_kernel_names(o, c->name, NULL, c->mangled, c->device_id);
  mprof__fields_str(o, "change", mprof_change_name(c->change));
  mprof__fields_raw(o, "significant", c->significant ? "true" : "false");
  if (o->json) /* XML: the <summary> element */
    mprof__fields_str(o, "summary", c->summary);
  mprof__fields_num(o, "mean_change", both ? c->mean_change : NAN, 4);
  mprof__fields_num(o, "noise", both && c->noise >= 0 ? c->noise : NAN, 4);
  mprof__fields_num(o, "t", both ? c->t : NAN, 2);
  /* Without degrees of freedom (one launch a side): absent, or null. */
  mprof__fields_num(o, "dof", both && c->dof > 0 ? c->dof : NAN, 1);
  mprof__fields_num(o, "p_value", both ? c->p_value : NAN, 6);
  fields_i64(o, "total_delta_ns", (long long)c->total_delta_ns);
  mprof__fields_num(o, "total_change", c->total_change, 4);
  if (!o->json) {
    mprof__fields_open(&x, o, "summary", NULL);
    mprof__fields_text(&x, NULL, c->summary);
    mprof__fields_close(&x);
  }
  side(o, "base", v->base, c->base);
  side(o, "candidate", v->candidate, c->candidate);
  if (both) {
    shifts(o, v, c);
  } else if (o->json) {
    mprof__fields_str(o, "stalls", NULL);
    mprof__fields_list(&x, o, NULL, "dimensions");
    mprof__fields_close(&x);
    mprof__fields_str(o, "hot", NULL);
  }
}

static void diff_fields(FILE *f, const diff_view *v, int json) {
  uint64_t tb, tk;
  mprof_diff_totals(v->diff, &tb, &tk);
  mprof__fields doc, x;
  mprof__report_document(&doc, f, json, "mprof-diff", 1);
  trace(&doc, "base", v->base);
  trace(&doc, "candidate", v->candidate);
  mprof__fields_open(&x, &doc, "totals", "totals");
  mprof__fields_u64(&x, "base_ns", tb);
  mprof__fields_u64(&x, "candidate_ns", tk);
  fields_i64(&x, "delta_ns", (long long)tk - (long long)tb);
  mprof__fields_num(&x, "change", tb ? ((double)tk - (double)tb) / tb : 0, 4);
  mprof__fields_close(&x);
  if (v->fail_above >= 0) {
    size_t tripped = mprof_diff_gate(v->diff, v->fail_above);
    mprof__fields_open(&x, &doc, "gate", "gate");
    mprof__fields_num(&x, "fail_above_percent", v->fail_above, 2);
    mprof__fields_raw(&x, "tripped", tripped ? "true" : "false");
    mprof__fields_u64(&x, "kernels", tripped);
    mprof__fields_close(&x);
  } else {
    mprof__fields_str(&doc, "gate", NULL);
  }
  size_t counts[5] = {0};
  for (size_t i = 0; i < v->matched; i++)
    counts[mprof_diff_kernel(v->diff, v->selected[i])->change]++;
  mprof__fields_open(&x, &doc, "kernels", "kernels");
  mprof__fields_u64(&x, "matched", v->matched);
  mprof__fields_u64(&x, "shown", v->shown);
  mprof__fields_u64(&x, "omitted", v->matched - v->shown);
  mprof__fields_u64(&x, "slower", counts[MPROF_CHANGE_SLOWER]);
  mprof__fields_u64(&x, "faster", counts[MPROF_CHANGE_FASTER]);
  mprof__fields_u64(&x, "noise", counts[MPROF_CHANGE_NOISE]);
  mprof__fields_u64(&x, "only_base", counts[MPROF_CHANGE_ONLY_BASE]);
  mprof__fields_u64(&x, "only_candidate", counts[MPROF_CHANGE_ONLY_CANDIDATE]);
  mprof__fields_str(&x, "filter",
                    v->opts->kernel && *v->opts->kernel ? v->opts->kernel
                                                        : NULL);
  mprof__report_records(&x, "kernel", "items", v->shown, kernel, v);
  mprof__fields_close(&x);
  mprof__fields_close(&doc);
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
  fprintf(
      f, "%smprof diff%s %s -> %s\n", st->bold, st->reset,
      mprof_trace_path(mprof_join_trace(mprof_diagnosis_join(v->base))),
      mprof_trace_path(mprof_join_trace(mprof_diagnosis_join(v->candidate))));
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
    fprintf(f, "%s(%zu more kernel%s; --top N shows more)%s\n", st->dim,
            v->matched - v->shown, mprof__plural(v->matched - v->shown),
            st->reset);
}

static void change_names(const void *diff, size_t i, const char **name,
                         const char **mangled) {
  const mprof_kernel_change *c = mprof_diff_kernel((const mprof_diff *)diff, i);
  *name = c->name;
  *mangled = c->mangled;
}

int mprof_diff_write(FILE *out, const mprof_diff *diff,
                     const mprof_report_options *opts,
                     double fail_above_percent) {
  if (!out || !diff)
    return mprof__error_set(MPROF_EINVAL, "mprof_diff_write: NULL argument");
  int rc = mprof__report_options_check(&opts);
  if (rc)
    return rc;
  diff_view v;
  memset(&v, 0, sizeof v);
  v.diff = diff;
  v.opts = opts;
  v.fail_above = fail_above_percent;
  mprof__diff_sides(diff, &v.base, &v.candidate);
  rc = mprof__select(&v.selected, &v.matched, mprof_diff_kernel_count(diff),
                     change_names, diff, opts->kernel);
  if (rc == MPROF_ENOTFOUND)
    return mprof__error_set(MPROF_ENOTFOUND,
                            "no kernel of either trace matches '%s'",
                            opts->kernel);
  if (rc)
    return rc;
  v.shown = v.matched < opts->max_kernels ? v.matched : opts->max_kernels;
  mprof__style style;
  mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
  if (opts->format == MPROF_REPORT_TEXT)
    text_diff(out, &v, &style);
  else
    diff_fields(out, &v, opts->format == MPROF_REPORT_JSON);
  free(v.selected);
  return mprof__report_flush(out, "diff");
}
