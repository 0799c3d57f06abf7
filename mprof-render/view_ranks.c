/*
 * mprof-render — the Ranks tab: a set of traces, one per rank, as a rank x
 * step heat map. A cell is one rank's step, coloured by its time (what
 * libmprof's straggler search ranks: compute, plus idle time when the job
 * has collectives) against the median rank of that step, on Density's heat
 * scale: the hottest colour is the cell furthest above its median. The
 * stragglers' rank labels are marked, and their slowest step's cell is
 * outlined. A click on a cell opens that step on the Trace
 * (mprof_render_view_open_rank_step()).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mprof/ranks.h>

#include "render_internal.h"

#define PAD 16.0
#define HEADER 58.0   /* title, legend */
#define STEP_ROW 20.0 /* step numbers above the cells */
#define TOP (HEADER + STEP_ROW)
#define LEFT 132.0 /* rank labels */
#define CELL_H 24.0

#define STRAGGLER 0xc62828u /* the mark of a straggler's label */

/* The heat of a step @p ratio times its median's: 0.5x and below coolest,
 * the job's largest ratio (at least 1.5x) hottest. */
static double heat(const rs_ranks *r, double ratio) {
  double top = r->max_ratio > 1.5 ? r->max_ratio : 1.5;
  double v = (ratio - 0.5) / (top - 0.5);
  return 0.02 + 0.98 * (v < 0 ? 0 : v > 1 ? 1 : v);
}

static double cell_width(const rs_ranks *r, double width) {
  double w = (width - LEFT - PAD) / (double)(r->steps ? r->steps : 1);
  return w < 4 ? 4 : floor(w);
}

/* 1 when step @p step of rank @p rank is a straggler's slowest step. */
static int is_straggler_cell(const rs_ranks *r, size_t rank, size_t step) {
  const mprof_rank_step *st = mprof_ranks_step(r->ranks, rank, step);
  for (size_t i = 0; st && i < mprof_ranks_straggler_count(r->ranks); i++) {
    const mprof_straggler *s = mprof_ranks_straggler(r->ranks, i);
    if (s->rank_index == rank && s->step == st->step)
      return 1;
  }
  return 0;
}

static void rank_label(char *buf, size_t size, const mprof_rank_info *info,
                       size_t index) {
  if (info->rank >= 0)
    snprintf(buf, size, "rank %lld", (long long)info->rank);
  else
    snprintf(buf, size, "trace %zu", index);
}

static void legend(cairo_t *cr, const rs_ranks *r, double x, double y) {
  const double w = 160;
  for (int i = 0; i < (int)w; i++) {
    /* The last column is the hottest a cell can be. */
    double top = r->max_ratio > 1.5 ? r->max_ratio : 1.5;
    double ratio = 0.5 + i / (w - 1) * (top - 0.5);
    rd_fill_rect(cr, x + i, y, 1, 12,
                 mprof_render_density_color(heat(r, ratio)));
  }
  char text[64];
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 0);
  rd_text_right(cr, x - 6, y + 10, "0.5x");
  /* Where the median rank's time falls. */
  double top = r->max_ratio > 1.5 ? r->max_ratio : 1.5;
  double at = x + floor((1.0 - 0.5) / (top - 0.5) * (w - 1)) + 0.5;
  rd_vline(cr, at, y - 3, y + 15, RD_TEXT);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_text(cr, at - rd_text_width(cr, "median") / 2, y + 27, "median");
  snprintf(text, sizeof text, "%.1fx the step's median rank",
           r->max_ratio > 1.5 ? r->max_ratio : 1.5);
  rd_text(cr, x + w + 6, y + 10, text);
}

static void draw(cairo_t *cr, const mprof_render_model *m,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  const rs_ranks *r = mprof_render__ranks(m);
  if (!r || !r->count) {
    mprof_render_draw_message(cr, width, height, "No ranks to compare",
                              r ? r->problem : "out of memory");
    return;
  }
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  char text[256];
  size_t stragglers = mprof_ranks_straggler_count(r->ranks);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  snprintf(text, sizeof text, "%zu ranks x %zu steps", r->count, r->steps);
  rd_text(cr, PAD, 24, text);
  rd_font(cr, 11.5, 0, 0);
  rd_rgb(cr, stragglers ? STRAGGLER : RD_TEXT_DIM);
  if (stragglers) {
    const mprof_straggler *s = mprof_ranks_straggler(r->ranks, 0);
    snprintf(text, sizeof text,
             "%zu straggler%s; the slowest: rank %lld in step %llu, %+.0f%% "
             "against the median rank",
             stragglers, stragglers == 1 ? "" : "s", (long long)s->rank,
             (unsigned long long)s->step, s->excess * 100);
  } else {
    const mprof_ranks_options defaults = MPROF_RANKS_OPTIONS_INIT;
    snprintf(text, sizeof text,
             "no straggler: every step within %.0f%% of "
             "its median rank",
             defaults.threshold * 100);
  }
  rd_text_fit(cr, PAD, 44, width - 2 * PAD - 360, text);
  legend(cr, r, width - PAD - 160 - 170, 16);

  double cw = cell_width(r, width);
  /* Step numbers, as many as fit. */
  rd_font(cr, 10.5, 0, 0);
  rd_rgb(cr, RD_TEXT_DIM);
  double label_w = rd_text_width(cr, "000") + 8;
  size_t every = cw >= label_w ? 1 : (size_t)ceil(label_w / cw);
  for (size_t s = 0; s < r->steps; s += every) {
    const mprof_rank_step *st = NULL;
    for (size_t i = 0; i < r->count && !st; i++)
      st = mprof_ranks_step(r->ranks, i, s);
    snprintf(text, sizeof text, "%llu",
             st ? (unsigned long long)st->step : (unsigned long long)s);
    double x = LEFT + (double)s * cw + cw / 2 - rd_text_width(cr, text) / 2;
    rd_text(cr, x, HEADER + 14, text);
  }
  rd_text_right(cr, LEFT - 8, HEADER + 14, "step");

  cairo_save(cr);
  cairo_rectangle(cr, 0, TOP, width, height - TOP);
  cairo_clip(cr);
  for (size_t i = 0; i < r->count; i++) {
    double y = TOP + (double)i * CELL_H - view->scroll_y;
    if (y + CELL_H < TOP || y > height)
      continue;
    const mprof_rank_info *info = mprof_ranks_rank(r->ranks, i);
    rank_label(text, sizeof text, info, i);
    rd_font(cr, 11.5, info->straggler != 0, 0);
    rd_rgb(cr, info->straggler ? STRAGGLER : RD_TEXT);
    rd_text_right(cr, LEFT - 8, y + CELL_H / 2 + 4, text);
    if (info->straggler)
      rd_fill_rect(cr, PAD - 8, y + 6, 4, CELL_H - 12, STRAGGLER);
    for (size_t s = 0; s < r->steps; s++) {
      double x = LEFT + (double)s * cw;
      double ratio = r->ratio[i * r->steps + s];
      uint32_t rgb =
          isnan(ratio) ? RD_PANEL : mprof_render_density_color(heat(r, ratio));
      rd_fill_rect(cr, x, y, cw - (cw > 6 ? 1 : 0), CELL_H - 1, rgb);
      if (is_straggler_cell(r, i, s)) {
        /* White inside the cell: seen on the hottest colour and the
         * coolest alike, and the cell's centre keeps its heat. */
        rd_rgb(cr, 0xffffffu);
        cairo_set_line_width(cr, 2);
        cairo_rectangle(cr, x + 2, y + 2, cw - (cw > 6 ? 1 : 0) - 4,
                        CELL_H - 5);
        cairo_stroke(cr);
      }
    }
  }
  cairo_restore(cr);
}

static void hit_test(const mprof_render_model *m, const mprof_render_view *view,
                     int tab, double width, double height, double x, double y,
                     mprof_render_hit *hit) {
  (void)tab;
  (void)height;
  const rs_ranks *r = mprof_render__ranks(m);
  if (!r || !r->count || y < TOP || x < LEFT)
    return;
  double cw = cell_width(r, width);
  double row = floor((y - TOP + view->scroll_y) / CELL_H);
  double col = floor((x - LEFT) / cw);
  if (row < 0 || row >= (double)r->count || col < 0 || col >= (double)r->steps)
    return;
  size_t i = (size_t)row, s = (size_t)col;
  if (!mprof_ranks_step(r->ranks, i, s))
    return;
  hit->kind = MPROF_HIT_RANK_STEP;
  hit->rank_index = (int64_t)i;
  hit->step_index = (int64_t)s;
  hit->value = r->ratio[i * r->steps + s];
  if (mprof_render_rank_step_range(m, i, s, &hit->t0, &hit->t1))
    hit->t0 = hit->t1 = 0;
}

static double content(const mprof_render_model *m,
                      const mprof_render_view *view, int tab, double width) {
  (void)view;
  (void)tab;
  (void)width;
  const rs_ranks *r = mprof_render__ranks(m);
  return r && r->count ? TOP + (double)r->count * CELL_H + PAD : 0;
}

const rs_tab_view rs_ranks_tab = {
    .draw = draw, .hit = hit_test, .content = content};

int mprof_render_view_open_rank_step(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     size_t rank_index, size_t step_index) {
  int64_t start, end;
  if (!view ||
      mprof_render_rank_step_range(model, rank_index, step_index, &start, &end))
    return -1;
  if (end <= start)
    end = start + 1;
  int64_t margin = (end - start) / 20 + 1;
  view->sel_start_ns = start;
  view->sel_end_ns = end;
  view->start_ns = rs_sub_ns(start, margin);
  view->end_ns = rs_add_ns(end, margin);
  mprof_render_limits limits;
  mprof_render_model_limits(model, &limits);
  mprof_render_view_clamp(view, &limits);
  uint32_t stream = mprof_render__rank_first_stream(model, rank_index);
  uint32_t row = stream != MPROF_INDEX_NONE && model->stream_row
                     ? model->stream_row[stream]
                     : MPROF_INDEX_NONE;
  if (row != MPROF_INDEX_NONE) {
    int band = mprof_render_row_band(model, row);
    double h;
    view->scroll_y =
        mprof_render_row_top(model, view, band >= 0 ? (size_t)band : row, &h);
  }
  return 0;
}
