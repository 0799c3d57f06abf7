/*
 * mprof — the exports: the entry points and the kernel selection. The
 * writers are in export_trace_events.c (Trace Event JSON),
 * export_perfetto.c (Perfetto protobuf), export_kineto.c (Kineto JSON),
 * export_speedscope.c and export_sqlite.c.
 *
 * The layout of both files, and why, is in docs/EXPORT.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "mprof/error.h"
#include "mprof/export.h"
#include "report/report_internal.h"
#include "export/export_internal.h"

MPROF__VERSIONS(export_options, "export options",
                MPROF__END_OF(mprof_export_options, kernel),
                MPROF__END_OF(mprof_export_options, progress_userdata));

int mprof_export_options_init(mprof_export_options *opts, unsigned version) {
  mprof_export_options init = MPROF_EXPORT_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &export_options);
}

/* ---- kernel selection over a set of traces ------------------------------ */

static void selection_free(mprof__export_selection *s) {
  for (size_t t = 0; t < s->count; t++)
    free(s->selected[t]);
  free(s->selected);
  memset(s, 0, sizeof *s);
}

static int selection_build(mprof__export_selection *s,
                           const mprof_diagnosis *const *traces, size_t count,
                           const char *pattern) {
  memset(s, 0, sizeof *s);
  s->selected =
      (unsigned char **)calloc(count ? count : 1, sizeof *s->selected);
  if (!s->selected)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  s->count = count;
  size_t matched = 0;
  int first_error = MPROF_OK;
  char first_message[512] = "";
  for (size_t t = 0; t < count; t++) {
    const mprof_join *join = mprof_diagnosis_join(traces[t]);
    size_t n = mprof_join_kernel_count(join);
    s->selected[t] = (unsigned char *)calloc(n ? n : 1, 1);
    if (!s->selected[t]) {
      selection_free(s);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    size_t *list = NULL, found = 0;
    int rc = mprof__select_kernels(&list, &found, join, pattern);
    if (rc == MPROF_ENOTFOUND) {
      /* Another trace of the set may hold it; keep the first message. */
      if (!first_error) {
        first_error = rc;
        snprintf(first_message, sizeof first_message, "%s", mprof_error_last());
      }
      continue;
    }
    if (rc) {
      selection_free(s);
      return rc;
    }
    for (size_t i = 0; i < found; i++)
      s->selected[t][list[i]] = 1;
    matched += found;
    free(list);
  }
  if (!matched && first_error) {
    selection_free(s);
    return mprof__error_set(first_error, "%s", first_message);
  }
  return MPROF_OK;
}

/* ---- entry points -------------------------------------------------------- */

MPROF__VERSIONS(report_versions, "export report",
                MPROF__END_OF(mprof_export_report, frames),
                MPROF__END_OF(mprof_export_report, rows));

/* The options as the current version, from @p opts of any version it
 * reads (NULL: the defaults). Returns MPROF_EVERSION, MPROF_EINVAL. */
static int options_read(mprof_export_options *out,
                        const mprof_export_options *opts) {
  static const mprof_export_options defaults = MPROF_EXPORT_OPTIONS_INIT;
  opts = mprof__options_or_defaults(opts, &defaults, 1,
                                    MPROF_EXPORT_OPTIONS_VERSION, "export");
  if (!opts)
    return MPROF_EVERSION;
  *out = defaults;
  memcpy(out, opts, mprof__version_size(&export_options, opts->version));
  out->version = MPROF_EXPORT_OPTIONS_VERSION;
  if (out->format > MPROF_EXPORT_KINETO)
    return mprof__error_set(MPROF_EINVAL, "export: unknown format %u",
                            out->format);
  return MPROF_OK;
}

static int traces_check(const mprof_diagnosis *const *traces, size_t count) {
  if (!traces || !count)
    return mprof__error_set(MPROF_EINVAL, "export: no trace to export");
  for (size_t t = 0; t < count; t++)
    if (!traces[t])
      return mprof__error_set(MPROF_EINVAL, "export: trace %zu is NULL", t);
  return MPROF_OK;
}

int mprof_export_write(FILE *out, const mprof_diagnosis *const *traces,
                       size_t count, const mprof_export_options *options,
                       mprof_export_report *report) {
  mprof_export_options o;
  const mprof_export_options *opts = &o;
  int rc = options_read(&o, options);
  if (rc)
    return rc;
  if (mprof__result_check(report, &report_versions))
    return MPROF_EVERSION;
  if (opts->format == MPROF_EXPORT_SQLITE)
    return mprof__error_set(MPROF_EINVAL,
                            "export: an SQLite database is written to a file "
                            "(mprof_export_file), not to a stream");
  if (!out)
    return mprof__error_set(MPROF_EINVAL, "export: no trace to export");
  if ((rc = traces_check(traces, count)))
    return rc;
  mprof__export_selection sel;
  rc = selection_build(&sel, traces, count, opts->kernel);
  if (rc)
    return rc;
  mprof_export_report rep = MPROF_EXPORT_REPORT_INIT;
  if (opts->format == MPROF_EXPORT_SPEEDSCOPE)
    rc = mprof__export_speedscope(out, traces, count, &sel,
                                  opts->kernel != NULL, &rep);
  else if (opts->format == MPROF_EXPORT_PERFETTO)
    rc = mprof__export_perfetto(out, traces, count, &sel, &rep.events);
  else if (opts->format == MPROF_EXPORT_KINETO)
    rc = mprof__export_kineto(out, traces, count, &sel, &rep.events);
  else
    rc = mprof__export_trace_events(out, traces, count, &sel, &rep.events);
  selection_free(&sel);
  if (!rc && (fflush(out) != 0 || ferror(out)))
    rc = mprof__error_set(MPROF_EIO, "export: writing failed: %s",
                          strerror(errno));
  if (!rc && report)
    mprof__result_store(report, &rep, &report_versions);
  return rc;
}

int mprof_export_file(const char *path, const mprof_diagnosis *const *traces,
                      size_t count, const mprof_export_options *opts,
                      mprof_export_report *report) {
  if (!path || !*path)
    return mprof__error_set(MPROF_EINVAL, "export: no output file");
  mprof_export_options o;
  int rc = options_read(&o, opts);
  if (!rc && mprof__result_check(report, &report_versions))
    rc = MPROF_EVERSION;
  if (!rc)
    rc = traces_check(traces, count);
  if (rc)
    return rc;
  if (o.format == MPROF_EXPORT_SQLITE) {
#ifndef MPROF_HAVE_SQLITE
    return mprof__error_set(MPROF_EUNSUPPORTED,
                            "export: this mprof was built without SQLite: "
                            "install libsqlite3-dev and rebuild it for "
                            "--format sqlite");
#else
    mprof__export_selection sel;
    if ((rc = selection_build(&sel, traces, count, o.kernel)))
      return rc;
    mprof__file_out fo;
    if ((rc = mprof__file_out_open(&fo, path))) {
      selection_free(&sel);
      return rc;
    }
    mprof_export_report rep = MPROF_EXPORT_REPORT_INIT;
    /* SQLite writes the partial file through its own descriptor; closing
     * ours syncs and renames it once the database is complete. */
    rc = mprof__export_sqlite(fo.partial, traces, count, &sel, &o, &rep);
    selection_free(&sel);
    int close_rc = mprof__file_out_close(&fo, !rc);
    if (!rc && !close_rc && report)
      mprof__result_store(report, &rep, &report_versions);
    return rc ? rc : close_rc;
#endif
  }
  mprof__file_out fo;
  rc = mprof__file_out_open(&fo, path);
  if (rc)
    return rc;
  rc = mprof_export_write(fo.f, traces, count, opts, report);
  int close_rc = mprof__file_out_close(&fo, !rc);
  return rc ? rc : close_rc;
}

uint64_t mprof__export_origin(const mprof_diagnosis *const *traces,
                              size_t count, unsigned with) {
  uint64_t origin = UINT64_MAX;
  for (size_t t = 0; t < count; t++) {
    const mprof_trace *trace =
        mprof_join_trace(mprof_diagnosis_join(traces[t]));
    uint64_t start, end;
    mprof_trace_time_bounds(trace, &start, &end);
    if (start || end)
      origin = start < origin ? start : origin;
    size_t n;
    const mprof_range_record *r = mprof_trace_ranges(trace, &n);
    for (size_t i = 0; i < n; i++)
      origin = r[i].start < origin ? r[i].start : origin;
    if (with & MPROF__ORIGIN_API_CALLS) {
      const mprof_api_call_record *c = mprof_trace_api_calls(trace, &n);
      for (size_t i = 0; i < n; i++)
        origin = c[i].start < origin ? c[i].start : origin;
    }
    if (with & MPROF__ORIGIN_SPANS) {
      const mprof_span_record *s = mprof_trace_spans(trace, &n);
      for (size_t i = 0; i < n; i++)
        origin = s[i].start < origin ? s[i].start : origin;
    }
    if (with & MPROF__ORIGIN_PM_SAMPLES) {
      const mprof_pm_sample_record *pm = mprof_trace_pm_samples(trace, &n);
      for (size_t i = 0; i < n; i++)
        origin = pm[i].start < origin ? pm[i].start : origin;
    }
  }
  return origin == UINT64_MAX ? 0 : origin;
}
