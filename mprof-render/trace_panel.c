/*
 * mprof-render — the Trace view's panel of the selected time range: its
 * totals and its kernels, from libmprof's window over the join.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

/* ---- the selected range --------------------------------------------------
 */

#define PANEL_LINE 15.0
#define PANEL_KERNELS 6

char *mprof_render_selection_text(const mprof_render_model *model,
                                  const mprof_render_view *view) {
  if (!model || !view || view->sel_end_ns <= view->sel_start_ns)
    return NULL;
  mprof_window *w = NULL;
  if (mprof_window_build(
          &w, mprof_render_model_join(model),
          (uint64_t)(view->sel_start_ns > 0 ? view->sel_start_ns : 0),
          (uint64_t)(view->sel_end_ns > 0 ? view->sel_end_ns : 0))) {
    mprof_error_clear();
    return NULL;
  }
  const mprof_window_totals *t = mprof_window_totals_of(w);
  size_t kernels = mprof_window_kernel_count(w);
  size_t size = 256 + kernels * 1200, used = 0;
  char *text = (char *)malloc(size);
  if (!text) {
    mprof_window_free(w);
    return NULL;
  }
  char span[32], count[32], gpu[32], pct[16];
  mprof_format_duration(
      span, sizeof span,
      (double)rs_sub_ns(view->sel_end_ns, view->sel_start_ns));
  mprof_format_count(count, sizeof count, t->launches);
  mprof_format_duration(gpu, sizeof gpu, (double)t->gpu_ns);
  used += (size_t)snprintf(text, size,
                           "%s selected: %s launches of %zu kernel%s, %s of "
                           "GPU time\n",
                           span, count, kernels, kernels == 1 ? "" : "s", gpu);
  for (size_t i = 0; i < kernels && used < size; i++) {
    const mprof_window_kernel *k = mprof_window_kernel_at(w, i);
    const mprof_render_kernel *rk = mprof_render_kernel_at(model, k->kernel);
    mprof_format_count(count, sizeof count, k->launches);
    mprof_format_duration(gpu, sizeof gpu, (double)k->gpu_ns);
    mprof_format_percent(pct, sizeof pct,
                         t->gpu_ns ? (double)k->gpu_ns / (double)t->gpu_ns
                                   : 0.0);
    used +=
        (size_t)snprintf(text + used, size - used, "%9s \u00d7 %10s %6s  %s\n",
                         count, gpu, pct, rk ? rk->short_name : "?");
  }
  mprof_window_free(w);
  return text;
}

/* What the selected range holds, from libmprof's window over the join:
 * totals, then its kernels by time with launches, GPU time and share,
 * in a panel at the bottom right of the time area. */
void rt_draw_selection_panel(cairo_t *cr, const mprof_render_model *model,
                             const mprof_render_view *view, double left,
                             double right, double height) {
  mprof_window *w = NULL;
  if (mprof_window_build(
          &w, mprof_render_model_join(model),
          (uint64_t)(view->sel_start_ns > 0 ? view->sel_start_ns : 0),
          (uint64_t)(view->sel_end_ns > 0 ? view->sel_end_ns : 0))) {
    mprof_error_clear();
    return;
  }
  const mprof_window_totals *t = mprof_window_totals_of(w);
  size_t kernels = mprof_window_kernel_count(w);
  /* Every kernel, as far as the rows' height goes: a drawing cannot
   * scroll (the viewer lists them all under the Trace instead). */
  double room = height - MPROF_RENDER_RULER - 8 - 16 - 2 * PANEL_LINE;
  size_t fit = room > 0 ? (size_t)(room / PANEL_LINE) : 0;
  if (fit < PANEL_KERNELS)
    fit = PANEL_KERNELS;
  size_t shown = kernels <= fit + 1 ? kernels : fit;
  int more = kernels > shown;
  double pw = fmin(560.0, right - left - 16);
  double ph = 10 + PANEL_LINE * (double)(1 + shown + (size_t)more) + 6;
  if (pw < 200 || ph > height - MPROF_RENDER_RULER - 8) {
    mprof_window_free(w);
    return;
  }
  double px = right - pw - 8, py = height - ph - 8;
  rd_rgba(cr, 0xffffff, 0.94);
  cairo_rectangle(cr, px, py, pw, ph);
  cairo_fill(cr);
  rd_rgb(cr, RD_SELECTION);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, px + 0.5, py + 0.5, pw - 1, ph - 1);
  cairo_stroke(cr);
  char span[32], count[32], gpu[32], text[256];
  mprof_format_duration(
      span, sizeof span,
      (double)rs_sub_ns(view->sel_end_ns, view->sel_start_ns));
  mprof_format_count(count, sizeof count, t->launches);
  mprof_format_duration(gpu, sizeof gpu, (double)t->gpu_ns);
  int used = snprintf(text, sizeof text,
                      "%s selected: %s launches of %zu kernel%s, %s of GPU "
                      "time",
                      span, count, kernels, kernels == 1 ? "" : "s", gpu);
  if (t->copies && used > 0 && (size_t)used < sizeof text) {
    char bytes[32];
    mprof_format_bytes(bytes, sizeof bytes, (double)t->copy_bytes);
    snprintf(text + used, sizeof text - (size_t)used, "; %llu cop%s, %s",
             (unsigned long long)t->copies, t->copies == 1 ? "y" : "ies",
             bytes);
  }
  double y = py + 6 + 11;
  rd_font(cr, 10.5, 1, 0);
  rd_rgb(cr, RD_TEXT);
  rd_text_fit(cr, px + 8, y, pw - 16, text);
  rd_font(cr, 10.5, 0, 0);
  double col_share = px + pw - 8, col_time = col_share - 56,
         col_count = col_time - 78;
  for (size_t i = 0; i < shown; i++) {
    const mprof_window_kernel *k = mprof_window_kernel_at(w, i);
    const mprof_render_kernel *rk = mprof_render_kernel_at(model, k->kernel);
    y += PANEL_LINE;
    rd_fill_rect(cr, px + 8, y - 9, 10, 10, rk ? rk->color : 0x999999u);
    char pct[16];
    rd_rgb(cr, RD_TEXT);
    rd_kernel_fit(cr, px + 24, y, col_count - 90 - (px + 24), rk);
    mprof_format_count(count, sizeof count, k->launches);
    snprintf(text, sizeof text, "%s \u00d7", count);
    rd_text_right(cr, col_count, y, text);
    mprof_format_duration(gpu, sizeof gpu, (double)k->gpu_ns);
    rd_text_right(cr, col_time, y, gpu);
    mprof_format_percent(pct, sizeof pct,
                         t->gpu_ns ? (double)k->gpu_ns / (double)t->gpu_ns
                                   : 0.0);
    rd_text_right(cr, col_share, y, pct);
  }
  if (more) {
    y += PANEL_LINE;
    rd_rgb(cr, RD_TEXT_DIM);
    snprintf(text, sizeof text, "and %zu more", kernels - shown);
    rd_text(cr, px + 24, y, text);
  }
  mprof_window_free(w);
}
