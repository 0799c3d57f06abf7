/*
 * mprof — `mprof summary --by-range`: GPU time per NVTX range, inclusive
 * and exclusive, as a tree, in XML (docs/SUMMARY-SCHEMA.md), JSON or a
 * table for people; with a kernel pattern, each range's kernels.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "mprof/names.h"
#include "mprof/ranges.h"
#include "mprof/status.h"
#include "report_internal.h"

typedef struct ranges_view {
  const mprof_range_times *times;
  const mprof_range_totals *totals;
  size_t count, shown;
  double omitted_share;
  /* With a kernel pattern: the rows with a kernel that matches, and per
   * row which of its kernels do (NULL: every row, no kernels listed). */
  size_t *rows;
  size_t row_count;
  unsigned char **picked;
  /* The kernels' short names, unique among those of every range: name
   * row_offset[row] + k is kernel k of row row. */
  mprof_name_set *names;
  size_t *row_offset;
} ranges_view;

/* Row @p i of those the view lists. */
static size_t view_row(const ranges_view *v, size_t i) {
  return v->rows ? v->rows[i] : i;
}

/* ---- XML and JSON ------------------------------------------------------- */

typedef struct kernels_ctx {
  const ranges_view *v;
  size_t row;
} kernels_ctx;

/* Picked kernel @p i of the row, and its short name in *@p short_name. */
static const mprof_range_kernel *picked_kernel(const kernels_ctx *c, size_t i,
                                               const char **short_name) {
  size_t n = mprof_range_times_kernel_count(c->v->times, c->row);
  for (size_t j = 0; j < n; j++)
    if (c->v->picked[c->row][j] && i-- == 0) {
      *short_name =
          mprof_name_set_short(c->v->names, c->v->row_offset[c->row] + j);
      return mprof_range_times_kernel(c->v->times, c->row, j);
    }
  return NULL;
}

static size_t picked_count(const ranges_view *v, size_t row) {
  size_t n = 0, count = mprof_range_times_kernel_count(v->times, row);
  for (size_t j = 0; j < count; j++)
    n += v->picked[row][j];
  return n;
}

static void kernel_fields(mprof__fields *o, const void *ctx, size_t i) {
  const char *short_name;
  const mprof_range_kernel *k =
      picked_kernel((const kernels_ctx *)ctx, i, &short_name);
  mprof__report_kernel_names(o, k->name, short_name, k->mangled,
                             MPROF_INDEX_NONE);
  mprof__fields_u64(o, "launches", k->launches);
  mprof__fields_u64(o, "kernel_ns", k->kernel_ns);
}

/* Range @p i of those shown, ranked by its place in the tree. */
static void range_fields(mprof__fields *o, const void *view, size_t i) {
  const ranges_view *v = (const ranges_view *)view;
  size_t at = view_row(v, i);
  const mprof_range_time *r = mprof_range_times_get(v->times, at);
  mprof__fields_u64(o, "rank", at + 1);
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
  mprof__fields_num(o, "inclusive_share", r->inclusive_share, 4);
  mprof__fields_u64(o, "inclusive_ns", r->inclusive_ns);
  mprof__fields_u64(o, "inclusive_launches", r->inclusive_launches);
  mprof__fields_u64(o, "inclusive_copy_ns", r->inclusive_copy_ns);
  mprof__fields_u64(o, "inclusive_copies", r->inclusive_copies);
  mprof__fields_u64(o, "borrowed_launches", r->borrowed_launches);
  mprof__fields_u64(o, "depth", r->depth);
  mprof__fields_str(o, "parent", r->parent);
  mprof__fields_str(o, "parent_domain",
                    r->parent && *r->parent_domain ? r->parent_domain : NULL);
  if (v->picked) {
    kernels_ctx c = {v, at};
    mprof__report_records(o, "kernel", "kernels", picked_count(v, at),
                          kernel_fields, &c);
  }
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
  mprof__fields_u64(&x, "borrowed_launches", t->borrowed_launches);
  mprof__fields_u64(&x, "borrowed_ns", t->borrowed_ns);
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
  mprof__fields_u64(&x, "matched", v->row_count);
  mprof__fields_u64(&x, "shown", v->shown);
  mprof__fields_u64(&x, "omitted", v->row_count - v->shown);
  mprof__fields_num(&x, "omitted_share", v->omitted_share, 4);
  mprof__report_records(&x, "range", "items", v->shown, range_fields, v);
  mprof__fields_close(&x);
  mprof__fields_close(&doc);
}

/* ---- text --------------------------------------------------------------- */

static void text_kernels(FILE *f, const ranges_view *v, size_t row,
                         size_t indent, const mprof__style *st) {
  kernels_ctx c = {v, row};
  for (size_t i = 0; i < picked_count(v, row); i++) {
    const char *short_name;
    const mprof_range_kernel *k = picked_kernel(&c, i, &short_name);
    char t[32], n[32];
    mprof_format_duration(t, sizeof t, (double)k->kernel_ns);
    mprof_format_count(n, sizeof n, k->launches);
    fprintf(f, "%6s %10s %10s %9s %7s %7s  %*s%s· %s%s\n", "", "", t, n, "", "",
            (int)indent, "", st->dim, short_name, st->reset);
  }
}

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
  fprintf(f, "%s%6s %10s %10s %9s %7s %7s  %s%s\n", st->dim, "incl %",
          "inclusive", "exclusive", "launches", "copies", "ranges", "range",
          st->reset);
  for (size_t i = 0; i < v->shown; i++) {
    size_t at = view_row(v, i);
    const mprof_range_time *r = mprof_range_times_get(v->times, at);
    char p[32], in[32], ex[32], n[32], cp[32], count[32];
    mprof_format_percent(p, sizeof p, r->inclusive_share);
    mprof_format_duration(in, sizeof in, (double)r->inclusive_ns);
    mprof_format_duration(ex, sizeof ex, (double)r->kernel_ns);
    mprof_format_count(n, sizeof n, r->launches);
    mprof_format_count(cp, sizeof cp, r->copies);
    mprof_format_count(count, sizeof count, r->instances);
    size_t indent = 2 * (size_t)(r->depth < 16 ? r->depth : 16);
    fprintf(f, "%6s %10s %10s %9s %7s %7s  %*s%s%s%s", p, in, ex, n, cp, count,
            (int)indent, "", st->bold, r->name, st->reset);
    if (*r->domain)
      fprintf(f, " %s(%s)%s", st->dim, r->domain, st->reset);
    /* A capture cut short: ranges still open end at the cut. */
    if (r->open_instances && r->open_instances == r->instances) {
      fprintf(f, " %s· open at the cut%s", st->yellow, st->reset);
    } else if (r->open_instances) {
      mprof_format_count(count, sizeof count, r->open_instances);
      fprintf(f, " %s· %s open at the cut%s", st->yellow, count, st->reset);
    }
    fputc('\n', f);
    if (v->picked)
      text_kernels(f, v, at, indent + 2, st);
  }
  if (v->row_count > v->shown) {
    mprof_format_percent(a, sizeof a, v->omitted_share);
    fprintf(f,
            "%s(%zu more ranges, %s of kernel time exclusive; --all lists "
            "them)%s\n",
            st->dim, v->row_count - v->shown, a, st->reset);
  }
  double outside =
      t->kernel_ns ? (double)t->outside_ns / (double)t->kernel_ns : 0.0;
  double unmatched =
      t->kernel_ns ? (double)t->unmatched_ns / (double)t->kernel_ns : 0.0;
  double borrowed =
      t->kernel_ns ? (double)t->borrowed_ns / (double)t->kernel_ns : 0.0;
  mprof_format_percent(a, sizeof a, outside);
  mprof_format_percent(b, sizeof b, unmatched);
  mprof_format_percent(c, sizeof c, borrowed);
  fprintf(f,
          "%soutside every range: %s of kernel time; without an API call: "
          "%s; launched by a thread with no range open, in a range open on "
          "another thread of its process: %s%s\n",
          st->dim, a, b, c, st->reset);
}

/* ---- selection ---------------------------------------------------------- */

/* Every (range, kernel) pair as one list, for mprof__select(). */
typedef struct pairs {
  const mprof_range_times *times;
  size_t *row, *kernel;
} pairs;

static void pair_names(const void *ctx, size_t i, const char **name,
                       const char **mangled) {
  const pairs *p = (const pairs *)ctx;
  const mprof_range_kernel *k =
      mprof_range_times_kernel(p->times, p->row[i], p->kernel[i]);
  *name = k->name;
  *mangled = k->mangled;
}

/* The rows and kernels that @p pattern picks. */
static int select_kernels(ranges_view *v, const char *pattern) {
  size_t total = 0;
  for (size_t r = 0; r < v->count; r++)
    total += mprof_range_times_kernel_count(v->times, r);
  pairs p = {v->times, (size_t *)malloc((total ? total : 1) * sizeof(size_t)),
             (size_t *)malloc((total ? total : 1) * sizeof(size_t))};
  v->rows = (size_t *)calloc(v->count ? v->count : 1, sizeof *v->rows);
  v->row_offset =
      (size_t *)calloc(v->count ? v->count : 1, sizeof *v->row_offset);
  const char **names =
      (const char **)malloc((total ? total : 1) * sizeof *names);
  v->picked =
      (unsigned char **)calloc(v->count ? v->count : 1, sizeof *v->picked);
  int rc = p.row && p.kernel && v->rows && v->picked && v->row_offset && names
               ? 0
               : MPROF_ENOMEM;
  size_t at = 0;
  for (size_t r = 0; r < v->count && !rc; r++) {
    size_t n = mprof_range_times_kernel_count(v->times, r);
    v->row_offset[r] = at;
    v->picked[r] = (unsigned char *)calloc(n ? n : 1, 1);
    if (!v->picked[r])
      rc = MPROF_ENOMEM;
    for (size_t k = 0; k < n; k++, at++) {
      p.row[at] = r;
      p.kernel[at] = k;
      names[at] = mprof_range_times_kernel(v->times, r, k)->name;
    }
  }
  size_t *found = NULL, count = 0;
  if (!rc)
    rc = mprof_name_set_build(&v->names, names, total);
  free(names);
  if (!rc)
    rc = mprof__select(&found, &count, total, pair_names, &p, pattern);
  if (rc == MPROF_ENOTFOUND)
    rc = mprof__error_set(MPROF_ENOTFOUND,
                          "%s: no kernel issued inside a range matches '%s'",
                          mprof__range_times_path(v->times), pattern);
  for (size_t i = 0; i < count; i++)
    v->picked[p.row[found[i]]][p.kernel[found[i]]] = 1;
  for (size_t r = 0; r < v->count && !rc; r++)
    if (picked_count(v, r))
      v->rows[v->row_count++] = r;
  free(found);
  free(p.row);
  free(p.kernel);
  return rc;
}

static void view_free(ranges_view *v) {
  for (size_t r = 0; v->picked && r < v->count; r++)
    free(v->picked[r]);
  free(v->picked);
  free(v->rows);
  free(v->row_offset);
  mprof_name_set_free(v->names);
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
  v.row_count = v.count;
  if (opts->kernel && *opts->kernel) {
    v.row_count = 0;
    rc = select_kernels(&v, opts->kernel);
    if (rc) {
      view_free(&v);
      return rc;
    }
  }
  v.shown = v.row_count < opts->max_kernels ? v.row_count : opts->max_kernels;
  for (size_t i = v.shown; i < v.row_count; i++)
    v.omitted_share += mprof_range_times_get(times, view_row(&v, i))->share;
  mprof__style style;
  mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
  if (opts->format == MPROF_REPORT_TEXT)
    text_ranges(out, &v, &style);
  else
    ranges_fields(out, &v, opts->format == MPROF_REPORT_JSON);
  view_free(&v);
  return mprof__report_flush(out, "ranges");
}
