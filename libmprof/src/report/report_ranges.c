/*
 * mprof — `mprof summary --by-range`: GPU time per innermost NVTX range as
 * XML (docs/SUMMARY-SCHEMA.md), JSON or a table for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "mprof/ranges.h"
#include "mprof/status.h"
#include "report_internal.h"

typedef struct ranges_view {
  const mprof_range_times *times;
  const mprof_range_totals *totals;
  size_t count, shown;
  double omitted_share;
} ranges_view;

/* ---- XML and JSON ------------------------------------------------------- */

/* Range @p i, ranked i + 1. */
static void range_fields(mprof__fields *o, const void *times, size_t i) {
  const mprof_range_time *r =
      mprof_range_times_get((const mprof_range_times *)times, i);
  mprof__fields_u64(o, "rank", i + 1);
  mprof__fields_str(o, "name", r->name);
  mprof__fields_str(o, "domain", *r->domain ? r->domain : NULL);
  mprof__fields_num(o, "share", r->share, 4);
  mprof__fields_u64(o, "kernel_ns", r->kernel_ns);
  mprof__fields_u64(o, "launches", r->launches);
  mprof__fields_u64(o, "copy_ns", r->copy_ns);
  mprof__fields_u64(o, "copies", r->copies);
  mprof__fields_u64(o, "instances", r->instances);
  mprof__fields_u64(o, "host_ns", r->host_ns);
  mprof__fields_u64(o, "open_at_cut", r->open_instances);
}

static void ranges_fields(FILE *f, const ranges_view *v, int json) {
  const mprof_range_totals *t = v->totals;
  const char *missing = mprof_range_times_missing(v->times);
  mprof__fields doc, x;
  mprof__report_document(&doc, f, json, "mprof-ranges", 0);
  mprof__fields_open(&x, &doc, "trace", "trace");
  mprof__fields_str(&x, "path", mprof__range_times_path(v->times));
  mprof__fields_u64(&x, "range_records", t->range_records);
  mprof__fields_u64(&x, "api_calls", t->api_calls);
  mprof__fields_u64(&x, "launches", t->launches);
  mprof__fields_u64(&x, "kernel_time_ns", t->kernel_ns);
  mprof__fields_u64(&x, "in_ranges_launches", t->in_ranges_launches);
  mprof__fields_u64(&x, "in_ranges_ns", t->in_ranges_ns);
  mprof__fields_u64(&x, "outside_launches", t->outside_launches);
  mprof__fields_u64(&x, "outside_ns", t->outside_ns);
  mprof__fields_u64(&x, "unmatched_launches", t->unmatched_launches);
  mprof__fields_u64(&x, "unmatched_ns", t->unmatched_ns);
  mprof__fields_close(&x);
  /* Why there are no ranges: a member in JSON (null when there are), a
   * <note key="ranges"> in XML. */
  if (json) {
    mprof__fields_str(&doc, "note", missing);
  } else if (missing) {
    mprof__fields_open(&x, &doc, "note", NULL);
    mprof__fields_str(&x, "key", "ranges");
    mprof__fields_text(&x, NULL, missing);
    mprof__fields_close(&x);
  }
  mprof__fields_open(&x, &doc, "ranges", "ranges");
  mprof__fields_u64(&x, "matched", v->count);
  mprof__fields_u64(&x, "shown", v->shown);
  mprof__fields_u64(&x, "omitted", v->count - v->shown);
  mprof__fields_num(&x, "omitted_share", v->omitted_share, 4);
  mprof__report_records(&x, "range", "items", v->shown, range_fields, v->times);
  mprof__fields_close(&x);
  mprof__fields_close(&doc);
}

/* ---- text --------------------------------------------------------------- */

static void text_ranges(FILE *f, const ranges_view *v, const mprof__style *st) {
  const mprof_range_totals *t = v->totals;
  const char *missing = mprof_range_times_missing(v->times);
  char a[32], b[32], c[32];
  mprof_format_count(a, sizeof a, t->range_records);
  mprof_format_count(b, sizeof b, t->api_calls);
  mprof_format_duration(c, sizeof c, (double)t->kernel_ns);
  fprintf(f,
          "%smprof summary --by-range%s %s · %s ranges · %s API calls · %s "
          "kernel time\n",
          st->bold, st->reset, mprof__range_times_path(v->times), a, b, c);
  if (missing) {
    fprintf(f, "%s! %s%s\n", st->yellow, missing, st->reset);
    return;
  }
  fputc('\n', f);
  fprintf(f, "%s%6s %10s %9s %10s %9s  %s%s\n", st->dim, "share", "kernels",
          "launches", "copies", "ranges", "range", st->reset);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_range_time *r = mprof_range_times_get(v->times, i);
    char p[32], k[32], n[32], cp[32], in[32];
    mprof_format_percent(p, sizeof p, r->share);
    mprof_format_duration(k, sizeof k, (double)r->kernel_ns);
    mprof_format_count(n, sizeof n, r->launches);
    mprof_format_duration(cp, sizeof cp, (double)r->copy_ns);
    mprof_format_count(in, sizeof in, r->instances);
    fprintf(f, "%6s %10s %9s %10s %9s  %s%s%s", p, k, n, cp, in, st->bold,
            r->name, st->reset);
    if (*r->domain)
      fprintf(f, " %s(%s)%s", st->dim, r->domain, st->reset);
    /* A capture cut short: ranges still open end at the cut. */
    if (r->open_instances && r->open_instances == r->instances) {
      fprintf(f, " %s· open at the cut%s", st->yellow, st->reset);
    } else if (r->open_instances) {
      mprof_format_count(in, sizeof in, r->open_instances);
      fprintf(f, " %s· %s open at the cut%s", st->yellow, in, st->reset);
    }
    fputc('\n', f);
  }
  if (v->count > v->shown) {
    mprof_format_percent(a, sizeof a, v->omitted_share);
    fprintf(f, "%s(%zu more ranges, %s of kernel time; --all lists them)%s\n",
            st->dim, v->count - v->shown, a, st->reset);
  }
  double outside =
      t->kernel_ns ? (double)t->outside_ns / (double)t->kernel_ns : 0.0;
  double unmatched =
      t->kernel_ns ? (double)t->unmatched_ns / (double)t->kernel_ns : 0.0;
  mprof_format_percent(a, sizeof a, outside);
  mprof_format_percent(b, sizeof b, unmatched);
  fprintf(f,
          "%soutside every range: %s of kernel time; without an API call: "
          "%s%s\n",
          st->dim, a, b, st->reset);
}

int mprof_range_times_write(FILE *out, const mprof_range_times *times,
                            const mprof_report_options *opts) {
  if (!out || !times)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_range_times_write: NULL argument");
  int rc = mprof__report_options_check(&opts);
  if (rc)
    return rc;
  ranges_view v;
  memset(&v, 0, sizeof v);
  v.times = times;
  v.totals = mprof_range_times_totals(times);
  v.count = mprof_range_times_count(times);
  v.shown = v.count < opts->max_kernels ? v.count : opts->max_kernels;
  for (size_t i = v.shown; i < v.count; i++)
    v.omitted_share += mprof_range_times_get(times, i)->share;
  mprof__style style;
  mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
  if (opts->format == MPROF_REPORT_TEXT)
    text_ranges(out, &v, &style);
  else
    ranges_fields(out, &v, opts->format == MPROF_REPORT_JSON);
  return mprof__report_flush(out, "ranges");
}
