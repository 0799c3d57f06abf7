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
