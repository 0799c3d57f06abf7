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

#include "report_internal.h"

/* ---- kernel selection --------------------------------------------------- */

int mprof__matcher_init(mprof__matcher *m, const char *pattern, int exact) {
  memset(m, 0, sizeof *m);
  if (!pattern || !*pattern)
    return 0;
  m->pattern = pattern;
  if (exact)
    return 0;
  regex_t *re = (regex_t *)malloc(sizeof *re);
  if (!re)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc) {
    char why[256];
    regerror(rc, re, why, sizeof why);
    free(re);
    m->pattern = NULL;
    return mprof__error_set(MPROF_EINVAL,
                            "--kernel '%s' is neither a kernel name nor a "
                            "valid regular expression: %s",
                            pattern, why);
  }
  m->regex = 1;
  m->compiled = re;
  return 0;
}

int mprof__matcher_test(const mprof__matcher *m, const char *name,
                        const char *mangled) {
  if (!m->pattern)
    return 1;
  if (!m->regex)
    return strcmp(name, m->pattern) == 0 || strcmp(mangled, m->pattern) == 0;
  const regex_t *re = (const regex_t *)m->compiled;
  return regexec(re, name, 0, NULL, 0) == 0 ||
         regexec(re, mangled, 0, NULL, 0) == 0;
}

void mprof__matcher_free(mprof__matcher *m) {
  if (m->compiled) {
    regfree((regex_t *)m->compiled);
    free(m->compiled);
  }
  memset(m, 0, sizeof *m);
}

int mprof__select_kernels(size_t **out, size_t *count, const mprof_join *join,
                          const char *pattern) {
  size_t n = mprof_join_kernel_count(join);
  *out = NULL;
  *count = 0;
  int exact = 0;
  for (size_t k = 0; pattern && k < n && !exact; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
    exact = strcmp(ks->mangled, pattern) == 0 || strcmp(ks->name, pattern) == 0;
  }
  mprof__matcher m;
  int rc = mprof__matcher_init(&m, pattern, exact);
  if (rc)
    return rc;
  size_t *list = (size_t *)malloc((n ? n : 1) * sizeof *list);
  if (!list) {
    mprof__matcher_free(&m);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  size_t found = 0;
  for (size_t k = 0; k < n; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
    if (mprof__matcher_test(&m, ks->name, ks->mangled))
      list[found++] = k;
  }
  mprof__matcher_free(&m);
  if (!found && pattern && *pattern) {
    const mprof_kernel_stats *top = mprof_join_kernel(join, 0);
    free(list);
    if (top)
      return mprof__error_set(MPROF_ENOTFOUND,
                              "%s: no kernel matches '%s' (%zu kernels; the "
                              "dominant one is '%s')",
                              mprof_trace_path(mprof_join_trace(join)), pattern,
                              n, top->name);
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s: no kernel matches '%s' (the trace has no "
                            "kernels)",
                            mprof_trace_path(mprof_join_trace(join)), pattern);
  }
  *out = list;
  *count = found;
  return 0;
}

int mprof__report_options_check(const mprof_report_options *opts) {
  if (opts->version != MPROF_REPORT_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "report options version %u is not supported (%u)",
                            opts->version, MPROF_REPORT_OPTIONS_VERSION);
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
