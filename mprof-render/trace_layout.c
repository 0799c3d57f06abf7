/*
 * mprof-render — the Trace view's layout: row heights, the rows in view, the
 * time map, snapping boxes to pixels, and the items of NVTX, API and
 * counter rows in time order.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

/* ---- layout ------------------------------------------------------------
 */

double rt_row_height(const mprof_render_row *row,
                     const mprof_render_view *view) {
  switch (row->kind) {
  case MPROF_ROW_DEVICE:
  case MPROF_ROW_THREAD: return MPROF_RENDER_DEVICE_ROW;
  case MPROF_ROW_RANGES:
  case MPROF_ROW_API: return MPROF_RENDER_RANGE_ROW;
  case MPROF_ROW_COUNTER: return MPROF_RENDER_COUNTER_ROW;
  default: return view->row_height;
  }
}

int rt_is_band(const mprof_render_row *row) {
  return row->kind == MPROF_ROW_DEVICE || row->kind == MPROF_ROW_THREAD;
}

double rt_row_height_at(const mprof_render_model *model,
                        const mprof_render_view *view, size_t index,
                        int *folded) {
  const mprof_render_row *row = mprof_render_row_at(model, index);
  uint8_t state = view->row_state ? view->row_state[index] : 0;
  if (rt_is_band(row)) {
    *folded = state & MPROF_ROW_HIDDEN      ? 2
              : state & MPROF_ROW_COLLAPSED ? 1
                                            : 0;
    return *folded == 2 ? 0 : rt_row_height(row, view);
  }
  if (*folded || (state & MPROF_ROW_HIDDEN))
    return 0;
  return rt_row_height(row, view);
}

int mprof_render_row_band(const mprof_render_model *model, size_t row) {
  size_t n = mprof_render_row_count(model);
  if (row >= n)
    return -1;
  for (size_t i = row + 1; i-- > 0;)
    if (rt_is_band(mprof_render_row_at(model, i)))
      return (int)i;
  return -1;
}

int mprof_render_row_shown(const mprof_render_model *model,
                           const mprof_render_view *view, size_t row) {
  if (row >= mprof_render_row_count(model))
    return 0;
  if (!view->row_state)
    return 1;
  int band = mprof_render_row_band(model, row), folded = 0;
  if (band >= 0 && (size_t)band != row)
    rt_row_height_at(model, view, (size_t)band, &folded);
  return rt_row_height_at(model, view, row, &folded) > 0;
}

size_t mprof_render_band_hidden(const mprof_render_model *model,
                                const mprof_render_view *view, size_t band) {
  size_t n = mprof_render_row_count(model), hidden = 0;
  if (!view->row_state || band >= n ||
      !rt_is_band(mprof_render_row_at(model, band)))
    return 0;
  for (size_t i = band + 1; i < n && !rt_is_band(mprof_render_row_at(model, i));
       i++)
    hidden += (view->row_state[i] & MPROF_ROW_HIDDEN) != 0;
  return hidden;
}

row_walk rt_walk_rows(const mprof_render_model *model,
                      const mprof_render_view *view, size_t rows,
                      double height) {
  row_walk w;
  memset(&w, 0, sizeof w);
  w.model = model;
  w.view = view;
  w.rows = rows;
  w.height = height;
  w.y = MPROF_RENDER_RULER - view->scroll_y;
  return w;
}

int rt_walk_next(row_walk *w) {
  while (w->next < w->rows && w->y < w->height) {
    w->index = w->next++;
    w->row = mprof_render_row_at(w->model, w->index);
    w->h = rt_row_height_at(w->model, w->view, w->index, &w->folded);
    w->top = w->y;
    w->y += w->h;
    if (w->h > 0 && w->y >= MPROF_RENDER_RULER)
      return 1;
  }
  return 0;
}

void mprof_render_trace_timemap(mprof_render_timemap *map,
                                const mprof_render_view *view, double width) {
  mprof_render_timemap_init(map, view->start_ns, view->end_ns,
                            MPROF_RENDER_GUTTER,
                            fmax(1.0, width - MPROF_RENDER_GUTTER));
}

double mprof_render_row_top(const mprof_render_model *model,
                            const mprof_render_view *view, size_t row,
                            double *height) {
  double y = 0;
  int folded = 0;
  size_t n = mprof_render_row_count(model);
  for (size_t i = 0; i < n && i < row; i++)
    y += rt_row_height_at(model, view, i, &folded);
  if (height)
    *height = row < n ? rt_row_height_at(model, view, row, &folded) : 0.0;
  return y;
}

int mprof_render_row_at_y(const mprof_render_model *model,
                          const mprof_render_view *view, double y) {
  if (y < 0)
    return -1;
  double top = 0;
  int folded = 0;
  size_t n = mprof_render_row_count(model);
  for (size_t i = 0; i < n; i++) {
    double h = rt_row_height_at(model, view, i, &folded);
    if (y < top + h)
      return (int)i;
    top += h;
  }
  return -1;
}

double mprof_render__trace_content(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   double width) {
  (void)tab;
  (void)width;
  return mprof_render_row_top(model, view, mprof_render_row_count(model), NULL);
}

/* Snap a box to whole pixels inside the time area, at least 1 px wide. */
int rt_snap(double *x0, double *x1, double left, double right) {
  double a = floor(fmax(*x0, left)), b = ceil(fmin(*x1, right));
  if (b - a < 1)
    b = a + 1;
  if (a >= right || b <= left)
    return 0;
  *x0 = a;
  *x1 = b;
  return 1;
}

double rt_luminance(uint32_t rgb) {
  return (0.299 * ((rgb >> 16) & 0xff) + 0.587 * ((rgb >> 8) & 0xff) +
          0.114 * (rgb & 0xff)) /
         255.0;
}

/* ---- the items of a range, API or counter row ---------------------------
 */

row_items rt_items_of(const mprof_render_model *model,
                      const mprof_render_row *row) {
  row_items it;
  memset(&it, 0, sizeof it);
  const mprof_trace *trace = mprof_render_model_trace(model);
  it.kind = row->kind;
  it.count = row->count;
  it.ranges = mprof_trace_ranges(trace, NULL);
  it.calls = mprof_trace_api_calls(trace, NULL);
  it.pm = mprof_trace_pm_samples(trace, NULL);
  if (row->kind == MPROF_ROW_RANGES) {
    it.order = model->range_order + row->first;
    it.end = model->range_end + row->first;
  } else if (row->kind == MPROF_ROW_API) {
    it.order = model->api_order + row->first;
    it.end = model->api_end + row->first;
  } else if (row->kind == MPROF_ROW_COUNTER) {
    it.order = model->pm_order + row->first;
    it.end = model->pm_end + row->first;
  } else {
    it.count = 0;
  }
  return it;
}

/* The first item at or after @p from whose end reaches @p t: items of a
 * row never overlap, so their ends ascend with their starts, and the next
 * item to draw is usually near @p from. */
size_t rt_first_reaching(const row_items *it, size_t from, int64_t t) {
  if (from >= it->count)
    return it->count;
  return rs_first_ending_after(it->end, from, it->count, t - 1);
}
