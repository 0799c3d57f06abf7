/*
 * mprof-render — a tab as text people can paste: the Summary as the panel
 * `mprof summary --human` prints for the kernel, the Hotspots as a table
 * with a tab between columns (a spreadsheet takes it as it is), the
 * Trace's selected range as its panel lists it. The viewer's Copy action
 * puts it on the clipboard; the pixels stay the views'.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

/* The panel `mprof summary --human --full-names` prints for kernel @p k. */
static char *summary_text(const mprof_render_model *m,
                          const mprof_render_kernel *k) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out)
    return NULL;
  mprof_report_options opts = MPROF_REPORT_OPTIONS_INIT;
  opts.format = MPROF_REPORT_TEXT;
  opts.flags = MPROF_REPORT_FULL_NAMES;
  opts.kernel = k->stats->mangled; /* equal names first: no pattern */
  opts.max_kernels = m->kernel_count;
  opts.max_hot = 10;
  int rc = mprof_diagnosis_write(out, m->diagnosis, &opts);
  if (fclose(out) || rc) {
    mprof_error_clear();
    free(text);
    return NULL;
  }
  return text;
}

/* Grow @p *text (of @p *size, @p *used written) by a printf. 0, or -1 out
 * of memory (and @p *text freed). */
static int append(char **text, size_t *size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char **text, size_t *size, size_t *used, const char *fmt,
                  ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*text + *used, *size - *used, fmt, ap);
    va_end(ap);
    if (n < 0) {
      free(*text);
      *text = NULL;
      return -1;
    }
    if ((size_t)n < *size - *used) {
      *used += (size_t)n;
      return 0;
    }
    size_t grown = 2 * *size + (size_t)n;
    char *bigger = (char *)realloc(*text, grown);
    if (!bigger) {
      free(*text);
      *text = NULL;
      return -1;
    }
    *text = bigger;
    *size = grown;
  }
}

/* The Hotspots of kernel @p k, as the view lists them (hottest first):
 * rank, share, samples, offset, SASS, source line and its three largest
 * stall reasons. */
static char *hotspots_text(const mprof_render_model *m,
                           const mprof_render_kernel *k) {
  if (!k->stats->samples || !k->pc_count)
    return NULL;
  size_t size = 4096, used = 0;
  char *text = (char *)malloc(size);
  if (!text)
    return NULL;
  char samples[32];
  mprof_format_count(samples, sizeof samples, k->stats->samples);
  if (append(&text, &size, &used,
             "%s\n%zu instructions sampled, %s samples\n"
             "#\tshare\tsamples\toffset\tSASS\tsource\tstalls\n",
             k->name, k->pc_count, samples))
    return NULL;
  for (size_t i = 0; i < k->pc_count; i++) {
    const mprof_render_pc *pc = &k->pcs[k->hot[i]];
    char sass[512], line[512], share[16], count[32], stalls[512] = "";
    rd_format_sass(sass, sizeof sass, pc->insn);
    rd_format_line(line, sizeof line, pc->insn);
    mprof_format_percent(share, sizeof share,
                         (double)pc->samples / (double)k->stats->samples);
    mprof_format_count(count, sizeof count, pc->samples);
    mprof_render__pc_reasons(m, pc, 3, stalls, sizeof stalls);
    if (append(&text, &size, &used, "%zu\t%s\t%s\t0x%04x\t%s\t%s\t%s\n", i + 1,
               share, count, pc->offset, sass, *line ? line : "-", stalls))
      return NULL;
  }
  return text;
}

char *mprof_render_tab_text(const mprof_render_model *model,
                            const mprof_render_view *view, int tab) {
  if (!model || !view)
    return NULL;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  switch (tab) {
  case MPROF_RENDER_TRACE: return mprof_render_selection_text(model, view);
  case MPROF_RENDER_SUMMARY: return k ? summary_text(model, k) : NULL;
  case MPROF_RENDER_HOTSPOTS: return k ? hotspots_text(model, k) : NULL;
  default: return NULL;
  }
}
