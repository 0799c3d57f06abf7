/*
 * mprof-render — the Trace view's NVTX range and CUDA API rows, and the flow
 * arrow from an API call to the launch it issued.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

/* Ranges without a colour of their own: soft, told apart by name. */
static const uint32_t range_palette[] = {0x9ecae1, 0xa1d99b, 0xfdd0a2,
                                         0xdadaeb, 0xfcbba1, 0xc7e9c0,
                                         0xd9d9d9, 0xf2d7ee};

uint32_t rs_range_color(const mprof_range_record *r) {
  if (r->color & 0xffffffu)
    return r->color & 0xffffffu;
  uint32_t h = r->name * 2654435761u;
  return range_palette[(h >> 16) %
                       (sizeof range_palette / sizeof range_palette[0])];
}

/* NVTX ranges (their colours, their names) or CUDA API calls (by API,
 * with their function names) of one row. */
void rt_draw_intervals(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_row *row,
                       const mprof_render_timemap *map, double y, double h,
                       double left, double right, int64_t selected_call,
                       const char *search) {
  const mprof_trace *trace = mprof_render_model_trace(model);
  double last_px = -1e9;
  double run_x0 = 0, run_x1 = 0; /* narrow items not yet filled */
  uint32_t run_fill = 0;
  rd_font(cr, fmin(10.5, h - 4), 0, 0);
  row_items it = rt_items_of(model, row);
  size_t next = 0;
  for (size_t i = rt_first_reaching(&it, 0, map->start_ns); i < it.count;
       i = next) {
    next = i + 1;
    uint32_t idx = it.order[i];
    int64_t a, b;
    rt_item_span(&it, i, &a, &b);
    if (a > map->end_ns)
      break;
    double x0 = mprof_render_time_to_x(map, a);
    double x1 = mprof_render_time_to_x(map, b);
    if (x1 - x0 < 1) {
      /* Items that end inside this pixel column cannot show: skip them by
       * one search, so a row costs its pixels, not its items. */
      size_t skip = rt_first_reaching(
          &it, next, mprof_render_x_to_time(map, floor(x0) + 1));
      if (skip > next)
        next = skip;
    }
    if (floor(x0) < last_px && x1 - x0 < 1)
      continue; /* another on the same pixel */
    if (!rt_snap(&x0, &x1, left, right))
      continue;
    last_px = x1;
    uint32_t fill;
    const char *name;
    if (row->kind == MPROF_ROW_RANGES) {
      fill = rs_range_color(&it.ranges[idx]);
      name = mprof_trace_string(trace, it.ranges[idx].name);
    } else {
      fill = it.calls[idx].kind == MPROF_API_DRIVER ? API_DRIVER_COLOR
                                                    : API_RUNTIME_COLOR;
      name = mprof_trace_string(trace, it.calls[idx].name);
    }
    int dimmed = search && *search && !mprof_render_name_matches(name, search);
    if (dimmed)
      fill = rd_lighten(fill, SEARCH_DIM);
    /* Narrow items of one colour that touch merge into one rectangle:
     * one fill per run, not per item. */
    int wide = x1 - x0 >= EDGE_PX ||
               (row->kind == MPROF_ROW_API && (int64_t)idx == selected_call);
    if (run_x1 > run_x0 && (wide || fill != run_fill || x0 > run_x1)) {
      rd_fill_rect(cr, run_x0, y, run_x1 - run_x0, h, run_fill);
      run_x0 = run_x1 = 0;
    }
    if (!wide) {
      if (run_x1 <= run_x0)
        run_x0 = x0;
      run_x1 = x1;
      run_fill = fill;
      continue;
    }
    rd_fill_rect(cr, x0, y, x1 - x0, h, fill);
    if (row->kind == MPROF_ROW_API && (int64_t)idx == selected_call) {
      rd_rgb(cr, RD_SELECTION);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, x0 + 1, y + 1, fmax(x1 - x0 - 2, 1), h - 2);
      cairo_stroke(cr);
    } else if (x1 - x0 >= EDGE_PX) {
      rd_rgb(cr, rd_darken(fill, 0.3));
      cairo_set_line_width(cr, 1);
      cairo_rectangle(cr, x0 + 0.5, y + 0.5, x1 - x0 - 1, h - 1);
      cairo_stroke(cr);
    }
    if (x1 - x0 >= 24 && h >= 10 && !dimmed) {
      rd_rgb(cr, rt_luminance(fill) > 0.55 ? RD_TEXT : 0xffffff);
      rd_text_fit(cr, x0 + 3, y + h / 2 + 3.5, x1 - x0 - 6, name);
    }
  }
  if (run_x1 > run_x0)
    rd_fill_rect(cr, run_x0, y, run_x1 - run_x0, h, run_fill);
}

/* ---- flow: from an API call to the launch it issued --------------------
 */

/* An arrow from the CUDA API call that issued @p launch to the launch's
 * start, when both are known: a curve leaving the call's row and arriving
 * at the top (or bottom) of the launch's box. */
void rt_draw_flow(cairo_t *cr, const mprof_render_model *model,
                  const mprof_render_view *view,
                  const mprof_render_timemap *map, int64_t launch,
                  uint32_t color) {
  if (launch < 0)
    return;
  int64_t call = mprof_render_launch_api_call(model, (size_t)launch);
  size_t n;
  const mprof_trace *trace = mprof_render_model_trace(model);
  const mprof_launch_record *l = mprof_trace_launches(trace, &n);
  if (call < 0 || (size_t)launch >= n)
    return;
  l += launch;
  const mprof_api_call_record *c = mprof_trace_api_calls(trace, &n) + call;
  uint32_t from_row = model->api_row[call];
  uint32_t to_row = model->stream_row[l->stream];
  if (from_row == MPROF_INDEX_NONE || to_row == MPROF_INDEX_NONE)
    return;
  double fh, th;
  double base = MPROF_RENDER_RULER - view->scroll_y;
  double ft = base + mprof_render_row_top(model, view, from_row, &fh);
  double tt = base + mprof_render_row_top(model, view, to_row, &th);
  if (fh <= 0 || th <= 0)
    return; /* a row folded away */
  /* Ends far off the view stay a little outside it: Cairo's coordinates
   * are 24.8 fixed point. */
  double far = map->x + map->width + 1e5;
  double xa = mprof_render_time_to_x(
      map, rs_mid_ns(rs_clamp_ns(c->start), rs_clamp_end(c->start, c->end)));
  double xl = mprof_render_time_to_x(map, rs_clamp_ns(l->start));
  xa = fmax(-1e5, fmin(far, xa));
  xl = fmax(-1e5, fmin(far, xl));
  double ya = from_row < to_row ? ft + fh - 2 : ft + 2;
  double yl = from_row < to_row ? tt + 2 : tt + th - 2;
  double ym = (ya + yl) / 2;
  rd_rgb(cr, color);
  cairo_set_line_width(cr, 2);
  cairo_move_to(cr, xa, ya);
  cairo_curve_to(cr, xa, ym, xl, ym, xl, yl);
  cairo_stroke(cr);
  /* The head, pointing into the launch. */
  double d = from_row < to_row ? -1 : 1;
  cairo_move_to(cr, xl, yl);
  cairo_line_to(cr, xl - 4, yl + 7 * d);
  cairo_line_to(cr, xl + 4, yl + 7 * d);
  cairo_close_path(cr);
  cairo_fill(cr);
  /* The call's end of it: a dot. */
  cairo_arc(cr, xa, ya, 2.5, 0, 2 * M_PI);
  cairo_fill(cr);
}
