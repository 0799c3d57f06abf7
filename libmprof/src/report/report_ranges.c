/*
 * mprof — `mprof summary --by-range`: GPU time per innermost NVTX range as
 * XML (docs/SUMMARY-SCHEMA.md), JSON or a table for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "mprof/ranges.h"
#include "mprof/status.h"
#include "mprof/version.h"
#include "report_internal.h"

typedef struct ranges_view {
  const mprof_range_times *times;
  const mprof_range_totals *totals;
  size_t count, shown;
  double omitted_share;
} ranges_view;

/* ---- XML ---------------------------------------------------------------- */

static void xml_ranges(FILE *f, const ranges_view *v) {
  const mprof_range_totals *t = v->totals;
  const char *missing = mprof_range_times_missing(v->times);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mprof-ranges", f);
  mprof__xml_attr_u64(f, "schema", 1);
  mprof__xml_attr(f, "mprof_version", MPROF_VERSION_STRING);
  fputs(">\n  <trace", f);
  mprof__xml_attr(f, "path", mprof__range_times_path(v->times));
  mprof__xml_attr_u64(f, "range_records", t->range_records);
  mprof__xml_attr_u64(f, "api_calls", t->api_calls);
  mprof__xml_attr_u64(f, "launches", t->launches);
  mprof__xml_attr_u64(f, "kernel_time_ns", t->kernel_ns);
  mprof__xml_attr_u64(f, "in_ranges_launches", t->in_ranges_launches);
  mprof__xml_attr_u64(f, "in_ranges_ns", t->in_ranges_ns);
  mprof__xml_attr_u64(f, "outside_launches", t->outside_launches);
  mprof__xml_attr_u64(f, "outside_ns", t->outside_ns);
  mprof__xml_attr_u64(f, "unmatched_launches", t->unmatched_launches);
  mprof__xml_attr_u64(f, "unmatched_ns", t->unmatched_ns);
  fputs("/>\n", f);
  if (missing) {
    fputs("  <note key=\"ranges\">", f);
    mprof__xml_escape(f, missing);
    fputs("</note>\n", f);
  }
  fputs("  <ranges", f);
  mprof__xml_attr_u64(f, "matched", v->count);
  mprof__xml_attr_u64(f, "shown", v->shown);
  mprof__xml_attr_u64(f, "omitted", v->count - v->shown);
  mprof__xml_attr_num(f, "omitted_share", v->omitted_share, 4);
  fputs(v->shown ? ">\n" : "/>\n", f);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_range_time *r = mprof_range_times_get(v->times, i);
    fputs("    <range", f);
    mprof__xml_attr_u64(f, "rank", i + 1);
    mprof__xml_attr(f, "name", r->name);
    if (*r->domain)
      mprof__xml_attr(f, "domain", r->domain);
    mprof__xml_attr_num(f, "share", r->share, 4);
    mprof__xml_attr_u64(f, "kernel_ns", r->kernel_ns);
    mprof__xml_attr_u64(f, "launches", r->launches);
    mprof__xml_attr_u64(f, "copy_ns", r->copy_ns);
    mprof__xml_attr_u64(f, "copies", r->copies);
    mprof__xml_attr_u64(f, "instances", r->instances);
    mprof__xml_attr_u64(f, "host_ns", r->host_ns);
    fputs("/>\n", f);
  }
  if (v->shown)
    fputs("  </ranges>\n", f);
  fputs("</mprof-ranges>\n", f);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_u64(FILE *f, const char *key, uint64_t value) {
  fputc(',', f);
  mprof__json_string(f, key);
  fprintf(f, ":%llu", (unsigned long long)value);
}

static void json_ranges(FILE *f, const ranges_view *v) {
  const mprof_range_totals *t = v->totals;
  const char *missing = mprof_range_times_missing(v->times);
  fputs("{\"schema\":1,\"mprof_version\":", f);
  mprof__json_string(f, MPROF_VERSION_STRING);
  fputs(",\"trace\":{\"path\":", f);
  mprof__json_string(f, mprof__range_times_path(v->times));
  json_u64(f, "range_records", t->range_records);
  json_u64(f, "api_calls", t->api_calls);
  json_u64(f, "launches", t->launches);
  json_u64(f, "kernel_time_ns", t->kernel_ns);
  json_u64(f, "in_ranges_launches", t->in_ranges_launches);
  json_u64(f, "in_ranges_ns", t->in_ranges_ns);
  json_u64(f, "outside_launches", t->outside_launches);
  json_u64(f, "outside_ns", t->outside_ns);
  json_u64(f, "unmatched_launches", t->unmatched_launches);
  json_u64(f, "unmatched_ns", t->unmatched_ns);
  fputs("},\"note\":", f);
  if (missing)
    mprof__json_string(f, missing);
  else
    fputs("null", f);
  fputs(",\"ranges\":{", f);
  fprintf(f, "\"matched\":%zu,\"shown\":%zu,\"omitted\":%zu", v->count,
          v->shown, v->count - v->shown);
  fputs(",\"omitted_share\":", f);
  mprof__json_num(f, v->omitted_share, 4);
  fputs(",\"items\":[", f);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_range_time *r = mprof_range_times_get(v->times, i);
    fprintf(f, "%s{\"rank\":%zu,\"name\":", i ? "," : "", i + 1);
    mprof__json_string(f, r->name);
    fputs(",\"domain\":", f);
    if (*r->domain)
      mprof__json_string(f, r->domain);
    else
      fputs("null", f);
    fputs(",\"share\":", f);
    mprof__json_num(f, r->share, 4);
    json_u64(f, "kernel_ns", r->kernel_ns);
    json_u64(f, "launches", r->launches);
    json_u64(f, "copy_ns", r->copy_ns);
    json_u64(f, "copies", r->copies);
    json_u64(f, "instances", r->instances);
    json_u64(f, "host_ns", r->host_ns);
    fputc('}', f);
  }
  fputs("]}}\n", f);
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
  mprof_report_options defaults = MPROF_REPORT_OPTIONS_INIT;
  if (!out || !times)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_range_times_write: NULL argument");
  if (!opts)
    opts = &defaults;
  int rc = mprof__report_options_check(opts);
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
  switch (opts->format) {
  case MPROF_REPORT_JSON: json_ranges(out, &v); break;
  case MPROF_REPORT_TEXT:
    mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
    text_ranges(out, &v, &style);
    break;
  default: xml_ranges(out, &v); break;
  }
  if (fflush(out) != 0 || ferror(out))
    return mprof__error_set(MPROF_EIO, "cannot write the ranges: %s",
                            "output error");
  return 0;
}
