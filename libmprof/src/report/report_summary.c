/*
 * mprof — the summary report: XML (docs/SUMMARY-SCHEMA.md), JSON
 * (docs/summary.schema.json) and a text panel for people.
 *
 * Bounded by default: at most max_kernels kernels, max_hot hot
 * instructions, SHAPES_SHOWN shapes and STALLS_SHOWN stall reasons per
 * kernel; whatever is left out is counted in an `omitted` attribute.
 *
 * The view they share is in summary_view.c; XML and JSON are written by
 * summary_fields.c, the text panel by summary_text.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "summary_internal.h"

MPROF__VERSIONS(report_options, "report options",
                MPROF__END_OF(mprof_report_options, kernel));

int mprof_report_options_init(mprof_report_options *opts, unsigned version) {
  mprof_report_options init = MPROF_REPORT_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &report_options);
}

/* Kernels by the estimated time their verdict's fix saves, largest first;
 * unknown savings (a roof, "?") after every known one; ties keep the
 * GPU-time order. */
typedef struct saved_rank {
  double saved;
  size_t order, kernel;
} saved_rank;

static int by_saved(const void *pa, const void *pb) {
  const saved_rank *a = (const saved_rank *)pa, *b = (const saved_rank *)pb;
  if (a->saved != b->saved)
    return a->saved > b->saved ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static int sort_by_saved(size_t *selected, size_t count,
                         const mprof_diagnosis *d) {
  saved_rank *r = (saved_rank *)malloc((count ? count : 1) * sizeof *r);
  if (!r)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < count; i++) {
    double saved = mprof_diagnosis_kernel(d, selected[i])->saved_ns;
    r[i] = (saved_rank){isnan(saved) ? -1.0 : saved, i, selected[i]};
  }
  qsort(r, count, sizeof *r, by_saved);
  for (size_t i = 0; i < count; i++)
    selected[i] = r[i].kernel;
  free(r);
  return 0;
}

int mprof_diagnosis_write(FILE *out, const mprof_diagnosis *diagnosis,
                          const mprof_report_options *opts) {
  if (!out || !diagnosis)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_diagnosis_write: NULL argument");
  int rc = mprof__report_options_check(&opts);
  if (rc)
    return rc;
  mprof__summary_view v;
  memset(&v, 0, sizeof v);
  v.d = diagnosis;
  v.join = mprof_diagnosis_join(diagnosis);
  v.trace = mprof_join_trace(v.join);
  v.opts = opts;
  rc = mprof__select_kernels(&v.selected, &v.matched, v.join, opts->kernel);
  if (rc)
    return rc;
  if ((opts->flags & MPROF_REPORT_SORT_SAVED) &&
      (rc = sort_by_saved(v.selected, v.matched, diagnosis)) != 0) {
    free(v.selected);
    return rc;
  }
  v.shown = v.matched < opts->max_kernels ? v.matched : opts->max_kernels;
  for (size_t i = v.shown; i < v.matched; i++)
    v.omitted_share += mprof_join_kernel(v.join, v.selected[i])->share;
  mprof__style style;
  mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
  if (opts->format == MPROF_REPORT_TEXT)
    mprof__summary_text(out, &v, &style);
  else
    mprof__summary_fields(out, &v, opts->format == MPROF_REPORT_JSON);
  free(v.selected);
  return mprof__report_flush(out, "summary");
}
