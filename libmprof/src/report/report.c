/*
 * mprof — what the summary and diff reports share: kernel selection and
 * the colours of the text panel.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/names.h"
#include "mprof/version.h"
#include "report_internal.h"

/* ---- kernel selection --------------------------------------------------- */

/* An exact name, or one that matches @p re. */
static int matches(const char *pattern, const regex_t *re, const char *name) {
  return re ? regexec(re, name, 0, NULL, 0) == 0 : strcmp(name, pattern) == 0;
}

int mprof__select(size_t **out, size_t *found, size_t count,
                  mprof__names_fn names, const void *ctx, const char *pattern) {
  *out = NULL;
  *found = 0;
  int all = !pattern || !*pattern, exact = 0;
  const char *name, *mangled;
  for (size_t i = 0; !all && i < count && !exact; i++) {
    names(ctx, i, &name, &mangled);
    exact = matches(pattern, NULL, name) || matches(pattern, NULL, mangled);
  }
  regex_t compiled, *re = NULL;
  if (!all && !exact) {
    int rc = regcomp(&compiled, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc) {
      char why[256];
      regerror(rc, &compiled, why, sizeof why);
      return mprof__error_set(MPROF_EINVAL,
                              "--kernel '%s' is neither a kernel name nor a "
                              "valid regular expression: %s",
                              pattern, why);
    }
    re = &compiled;
  }
  size_t *list = (size_t *)malloc((count ? count : 1) * sizeof *list);
  size_t n = 0;
  for (size_t i = 0; list && i < count; i++) {
    names(ctx, i, &name, &mangled);
    if (all || matches(pattern, re, name) || matches(pattern, re, mangled))
      list[n++] = i;
  }
  if (re)
    regfree(re);
  if (!list)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  if (!n && !all) {
    free(list);
    return MPROF_ENOTFOUND;
  }
  *out = list;
  *found = n;
  return 0;
}

static void kernel_names(const void *join, size_t k, const char **name,
                         const char **mangled) {
  const mprof_kernel_stats *ks = mprof_join_kernel((const mprof_join *)join, k);
  *name = ks->name;
  *mangled = ks->mangled;
}

int mprof__select_kernels(size_t **out, size_t *count, const mprof_join *join,
                          const char *pattern) {
  size_t n = mprof_join_kernel_count(join);
  int rc = mprof__select(out, count, n, kernel_names, join, pattern);
  if (rc != MPROF_ENOTFOUND)
    return rc;
  const mprof_kernel_stats *top = mprof_join_kernel(join, 0);
  if (top)
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s: no kernel matches '%s' (%zu kernel%s; the "
                            "dominant one is '%s')",
                            mprof_trace_path(mprof_join_trace(join)), pattern,
                            n, mprof__plural(n), top->name);
  return mprof__error_set(MPROF_ENOTFOUND,
                          "%s: no kernel matches '%s' (the trace has no "
                          "kernels)",
                          mprof_trace_path(mprof_join_trace(join)), pattern);
}

int mprof__report_options_check(const mprof_report_options **options) {
  static const mprof_report_options defaults = MPROF_REPORT_OPTIONS_INIT;
  const mprof_report_options *opts = mprof__options_or_defaults(
      *options, &defaults, MPROF_REPORT_OPTIONS_VERSION,
      MPROF_REPORT_OPTIONS_VERSION, "report");
  if (!opts)
    return MPROF_EVERSION;
  *options = opts;
  if (opts->format > MPROF_REPORT_TEXT)
    return mprof__error_set(MPROF_EINVAL, "unknown report format %u",
                            opts->format);
  return 0;
}

/* ---- colours ------------------------------------------------------------ */

void mprof__style_init(mprof__style *style, int color) {
  if (color) {
    style->bold = "\x1b[1m";
    style->dim = "\x1b[2m";
    style->red = "\x1b[1;31m";
    style->yellow = "\x1b[33m";
    style->green = "\x1b[32m";
    style->cyan = "\x1b[36m";
    style->reset = "\x1b[0m";
  } else {
    style->bold = style->dim = style->red = style->yellow = style->green =
        style->cyan = style->reset = "";
  }
}

const char *mprof__state_color(const mprof__style *style, uint32_t state) {
  switch (state) {
  case MPROF_STATE_ISSUE: return style->red;
  case MPROF_STATE_MINOR: return style->yellow;
  case MPROF_STATE_OK: return style->green;
  default: return style->dim;
  }
}

int mprof__report_flush(FILE *out, const char *what) {
  if (fflush(out) != 0 || ferror(out))
    return mprof__error_set(MPROF_EIO, "cannot write the %s: output error",
                            what);
  return 0;
}

void mprof__report_document(mprof__fields *doc, FILE *f, int json,
                            const char *root, int kind) {
  mprof__fields_document(doc, f, json, root);
  if (json && kind)
    mprof__fields_str(doc, "kind", root);
  mprof__fields_u64(doc, "schema", 1);
  mprof__fields_str(doc, "mprof_version", MPROF_VERSION_STRING);
}

void mprof__report_shown(mprof__fields *o, size_t shown, size_t count) {
  if (!o->json)
    mprof__fields_u64(o, "shown", shown);
  mprof__fields_u64(o, "omitted", count - shown);
}

const char *mprof__report_reason_dimension(uint32_t dimension) {
  return dimension < MPROF_DIM_COUNT_ ? mprof_dimension_key(dimension)
                                      : "other";
}

void mprof__report_kernel_names(mprof__fields *o, const char *name,
                                const char *short_name, const char *mangled,
                                uint32_t device_id) {
  char buf[256];
  mprof__fields_str(o, "name", name);
  mprof__fields_str(o, "short_name",
                    short_name ? short_name
                               : mprof_name_short(buf, sizeof buf, name));
  mprof__fields_str(o, "mangled", mangled);
  mprof__fields_num(o, "device",
                    device_id != MPROF_INDEX_NONE ? (double)device_id : NAN, 0);
}

void mprof__report_records(mprof__fields *parent, const char *element,
                           const char *name, size_t count,
                           mprof__record_fn fields, const void *ctx) {
  mprof__fields list, x;
  mprof__fields_list(&list, parent, NULL, name);
  for (size_t i = 0; i < count; i++) {
    mprof__fields_open(&x, &list, element, NULL);
    fields(&x, ctx, i);
    mprof__fields_close(&x);
  }
  mprof__fields_close(&list);
}
