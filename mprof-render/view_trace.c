/*
 * mprof-render — the Trace view: launches on per-device/per-stream rows
 * under a time ruler, NVTX, API and counter rows, the selected range; and
 * hit-testing. Its pieces: trace_layout.c (rows), trace_boxes.c (launches,
 * inset, copies), trace_intervals.c (NVTX and API rows, flows),
 * trace_counters.c (PM counters), trace_panel.c (the selection panel).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

/* ---- the ruler -----------------------------------------------------------
 */

/* The grid behind the launches. */
static void draw_grid(cairo_t *cr, const int *xs, size_t n, double top,
                      double bottom) {
  rd_rgb(cr, GRID_COLOR);
  for (size_t i = 0; i < n; i++)
    cairo_rectangle(cr, xs[i], top, 1, bottom - top);
  cairo_fill(cr);
}

#define PROCESS_COLOR 0x8a4fc7u
/* The capture window (CAPTURE): a band along the ruler's top edge. */
#define WINDOW_COLOR 0x2e9e5bu
#define WINDOW_BAND 4

/* Ticks at round multiples of the step after the start of the GPU
 * activity; the first in view is labelled with its time since that start,
 * the others relative to it ("+20 us"), so every label stays short
 * however deep the zoom. Where the process started: a line when it is in
 * view, else a pointer at the left edge with how much earlier it was. */
static void draw_ruler(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_timemap *map, double width) {
  int64_t origin, end;
  mprof_render_model_bounds(model, &origin, &end);
  rd_fill_rect(cr, 0, 0, width, MPROF_RENDER_RULER, RD_PANEL);
  rd_hline(cr, 0, width, MPROF_RENDER_RULER - 1, RD_RULE);
  int64_t step = mprof_render_tick_step(map, MPROF_RENDER_TICK_PX);
  int64_t first = mprof_render__first_tick(map, origin, step);
  int64_t offsets[64];
  int xs[64];
  size_t n = mprof_render__ticks(map, origin, step, offsets, xs, 64);
  double free_from = map->x; /* labels start right of this */
  int64_t process = mprof_render_model_process_start(model);
  /* The base: the first tick at or after the start of the activity. */
  size_t base = 0;
  while (base + 1 < n && offsets[base] < 0)
    base++;
  for (size_t i = 0; i < n; i++) {
    rd_fill_rect(cr, xs[i], MPROF_RENDER_RULER - 7, 1, 6, RD_TEXT_DIM);
    if (xs[i] + 3 < free_from)
      continue;
    char label[48];
    if (i == base) {
      /* The base, in bold: its time since the activity started. */
      char tick[48];
      mprof_format_tick(tick, sizeof tick, (double)offsets[i], (double)step);
      snprintf(label, sizeof label, "%s", tick[0] == '+' ? tick + 1 : tick);
      rd_font(cr, 10.5, 1, 0);
    } else {
      mprof_format_tick(label, sizeof label,
                        (double)rs_sub_ns(offsets[i], offsets[base]),
                        (double)step);
      rd_font(cr, 10.5, 0, 0);
    }
    rd_rgb(cr, RD_TEXT);
    free_from = xs[i] + 3 + rd_text(cr, xs[i] + 3, 13, label) + 6;
  }
  /* Sub-ticks at a fifth of the step. */
  int64_t sub = step / 5;
  if (sub > 0) {
    rd_rgb(cr, RD_TEXT_DIM);
    /* Five per tick, and a tick is at least MPROF_RENDER_TICK_PX wide. */
    int64_t t = rs_sub_ns(first, step);
    for (int i = 0; i < 5 * 66 && rs_add_ns(origin, t) <= map->end_ns;
         i++, t = rs_add_ns(t, sub)) {
      double x = floor(mprof_render_time_to_x(map, rs_add_ns(origin, t)));
      if (x < map->x)
        continue;
      cairo_rectangle(cr, x, MPROF_RENDER_RULER - 4, 1, 3);
    }
    cairo_fill(cr);
  }
  if (process > 0 && process >= map->start_ns && process <= map->end_ns) {
    double x = floor(mprof_render_time_to_x(map, process));
    rd_fill_rect(cr, x, 0, 2, MPROF_RENDER_RULER, PROCESS_COLOR);
    rd_font(cr, 10, 1, 0);
    rd_rgb(cr, PROCESS_COLOR);
    rd_text(cr, x + 4, 22, "process start");
  }
}

/* Where each process was recorded with a capture window (`record
 * --capture-range`, ...): a band along the top of the ruler from the
 * window's start to its end (the end of the view while still open), so
 * that idle lead-in and gaps between its pieces read as outside it. */
static void draw_capture_windows(cairo_t *cr, const mprof_render_model *model,
                                 const mprof_render_timemap *map) {
  size_t n = 0;
  const mprof_capture_record *c =
      mprof_trace_captures(mprof_render_model_trace(model), &n);
  for (size_t i = 0; i < n; i++) {
    if (!c[i].start)
      continue; /* never opened */
    int64_t start = (int64_t)c[i].start;
    int64_t end = c[i].end ? (int64_t)c[i].end : map->end_ns;
    if (end < map->start_ns || start > map->end_ns)
      continue;
    double x0 = fmax(map->x, floor(mprof_render_time_to_x(map, start)));
    double x1 = ceil(mprof_render_time_to_x(map, end));
    rd_fill_rect(cr, x0, 0, fmax(2, x1 - x0), WINDOW_BAND, WINDOW_COLOR);
  }
}

/* The process start across the rows, when it is in view. */
static void draw_process_line(cairo_t *cr, const mprof_render_model *model,
                              const mprof_render_timemap *map, double height) {
  int64_t process = mprof_render_model_process_start(model);
  if (process <= 0 || process < map->start_ns || process > map->end_ns)
    return;
  double x = floor(mprof_render_time_to_x(map, process));
  rd_rgba(cr, PROCESS_COLOR, 0.8);
  for (double y = MPROF_RENDER_RULER; y < height; y += 8)
    cairo_rectangle(cr, x, y, 2, 4);
  cairo_fill(cr);
}

/* ---- the view ------------------------------------------------------------
 */

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  size_t rows = mprof_render_row_count(model);
  if (!rows) {
    mprof_render_draw_message(cr, width, height, "Nothing to show",
                              "This trace has no kernel launches or copies.");
    return;
  }
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, view, width);
  double left = MPROF_RENDER_GUTTER, right = width;
  const mprof_trace *trace = mprof_render_model_trace(model);
  const mprof_launch_record *launches = mprof_trace_launches(trace, NULL);
  const mprof_render_kernel *selected = rs_kernel(model, view->kernel);
  int64_t selected_call =
      view->launch >= 0
          ? mprof_render_launch_api_call(model, (size_t)view->launch)
          : -1;

  cairo_save(cr);
  cairo_rectangle(cr, 0, MPROF_RENDER_RULER, width,
                  height - MPROF_RENDER_RULER);
  cairo_clip(cr);
  box_list list;
  memset(&list, 0, sizeof list);
  label_cache labels;
  memset(&labels, 0, sizeof labels);
  /* A search: the kernels it matches; the others are dimmed. */
  unsigned char *match = rt_search_kernels(model, view->search);
  /* Row backgrounds, then the time grid, then what happened on them. */
  for (row_walk w = rt_walk_rows(model, view, rows, height);
       rt_walk_next(&w);) {
    size_t r = w.index;
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (rt_is_band(row)) {
      rd_fill_rect(cr, 0, top, width, h, 0xe4e7ee);
      rd_hline(cr, 0, width, top + h - 1, RD_RULE);
      continue;
    }
    if (r % 2)
      rd_fill_rect(cr, left, top, right - left, h, ROW_ODD);
    rd_hline(cr, left, right, top + h - 1, 0xe6e8ec);
  }
  int grid[GRID_MAX];
  int64_t origin, end;
  mprof_render_model_bounds(model, &origin, &end);
  size_t grid_count = mprof_render__tick_xs(&map, origin, grid, GRID_MAX);
  draw_grid(cr, grid, grid_count, MPROF_RENDER_RULER, height);
  for (row_walk w = rt_walk_rows(model, view, rows, height);
       rt_walk_next(&w);) {
    size_t r = w.index;
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (row->kind == MPROF_ROW_RANGES || row->kind == MPROF_ROW_API) {
      rt_draw_intervals(cr, model, row, &map, top + 1, h - 3, left, right,
                        selected_call, view->search);
      continue;
    }
    if (row->kind == MPROF_ROW_COUNTER) {
      rt_draw_counter(cr, model, row, &map, top + 1, h - 2, left, right);
      continue;
    }
    if (row->kind != MPROF_ROW_STREAM)
      continue;
    double pad = h >= 10 ? 2 : (h >= 4 ? 1 : 0);
    double by = top + pad, bh = h - 2 * pad - 1;
    rt_collect_row(&list, model, row->stream, &map);
    rt_paint_boxes(cr, model, &list, left, right, by, bh,
                   r % 2 ? ROW_ODD : RD_BACKGROUND, grid, grid_count, match);
    rt_draw_memops(cr, model, row->stream, &map, by, bh, left, right,
                   match != NULL);
    /* Selection outlines, insets and labels: only boxes wide enough to
     * carry them, at most width / 5 per row. */
    double font_size = fmin(11.0, bh - 3);
    rd_font(cr, font_size, 0, 0);
    for (size_t i = 0; i < list.count; i++) {
      draw_box *b = &list.items[i];
      double x0 = b->x0, x1 = b->x1;
      if (!rt_snap(&x0, &x1, left, right) || x1 - x0 < EDGE_PX)
        continue;
      int is_selected_kernel =
          selected && !b->merged && b->kernel == view->kernel;
      int is_selected_launch = 0;
      if (!b->merged && view->launch >= 0) {
        const mprof_launch_record *l =
            mprof_trace_stream_launch(trace, row->stream, b->first);
        is_selected_launch = (int64_t)(l - launches) == view->launch;
      }
      if (is_selected_launch || is_selected_kernel) {
        if (is_selected_launch) {
          rd_rgb(cr, RD_SELECTION);
          cairo_set_line_width(cr, 2.5);
        } else {
          rd_rgb(cr, rd_darken(rt_kernel_color(model, b->kernel), 0.5));
          cairo_set_line_width(cr, 1.5);
        }
        cairo_rectangle(cr, x0 + 0.5, by + 0.5, x1 - x0 - 1, bh - 1);
        cairo_stroke(cr);
      }
      double label_y = by + bh / 2 + 4;
      int lines = is_selected_kernel
                      ? mprof_render__inset_lines(selected, x1 - x0, bh)
                      : 0;
      if (lines) {
        rt_draw_inset(cr, selected, x0, x1, by, bh);
        rd_font(cr, font_size, 0, 0);
        /* The name goes under the inset when there is room. */
        double below = by + 2 + 4 + lines * INSET_LINE;
        if (by + bh - below < 16)
          continue;
        label_y = below + (by + bh - below) / 2 + 4;
      }
      if (bh < 11 || x1 - x0 < (b->merged ? MERGED_LABEL_PX : LABEL_PX))
        continue;
      if (match && (b->kernel < 0 || !match[b->kernel]))
        continue; /* dimmed by the search: no name */
      uint32_t fill = b->merged
                          ? rd_lighten(rt_kernel_color(model, b->kernel), 0.45)
                          : rt_kernel_color(model, b->kernel);
      rd_rgb(cr, rt_luminance(fill) > 0.6 ? RD_TEXT : 0xffffff);
      if (b->merged) {
        char count[32], label[64];
        mprof_format_count(count, sizeof count, b->last - b->first);
        snprintf(label, sizeof label, "%s launches", count);
        rd_text_fit(cr, x0 + 4, label_y, x1 - x0 - 8, label);
      } else {
        rt_label_fit(cr, &labels, model, b->kernel, x0 + 4, label_y,
                     x1 - x0 - 8);
      }
    }
  }
  free(list.items);
  free(match);
  rt_label_cache_free(&labels);
  draw_process_line(cr, model, &map, height);
  if (view->hover_launch != view->launch)
    rt_draw_flow(cr, model, view, &map, view->hover_launch, FLOW_HOVER_COLOR);
  rt_draw_flow(cr, model, view, &map, view->launch, RD_SELECTION);

  /* The selected time range, snapped to the time area: over the rows
   * with its panel, and on the ruler below. */
  int selection = view->sel_end_ns > view->sel_start_ns;
  double sel_x0 = mprof_render_time_to_x(&map, view->sel_start_ns);
  double sel_x1 = mprof_render_time_to_x(&map, view->sel_end_ns);
  int sel_shown = selection && rt_snap(&sel_x0, &sel_x1, left, right);
  if (sel_shown) {
    rd_rgba(cr, RD_SELECTION, 0.15);
    cairo_rectangle(cr, sel_x0, MPROF_RENDER_RULER, sel_x1 - sel_x0, height);
    cairo_fill(cr);
  }
  if (selection && !view->no_selection_panel)
    rt_draw_selection_panel(cr, model, view, left, right, height);
  cairo_restore(cr);

  /* Row labels over the gutter (pass 0), then device names across their
   * bands (pass 1): the gutter is too narrow for them. */
  rd_fill_rect(cr, 0, MPROF_RENDER_RULER, left, height, RD_PANEL);
  rd_vline(cr, left - 1, MPROF_RENDER_RULER, height, RD_RULE);
  for (int names = 0; names < 2; names++) {
    cairo_save(cr);
    cairo_rectangle(cr, 0, MPROF_RENDER_RULER, names ? width : left - 1,
                    height - MPROF_RENDER_RULER);
    cairo_clip(cr);
    for (row_walk w = rt_walk_rows(model, view, rows, height);
         rt_walk_next(&w);) {
      const mprof_render_row *row = w.row;
      double h = w.h, top = w.top;
      if (names && rt_is_band(row)) {
        /* A band folds its rows away (a click on it): its triangle says
         * which way, and how many rows under it are hidden. */
        int folded =
            view->row_state && (view->row_state[w.index] & MPROF_ROW_COLLAPSED);
        rd_rgb(cr, RD_TEXT_DIM);
        rd_font(cr, 10, 0, 0);
        rd_text(cr, 4, top + h / 2 + 4, folded ? "\u25b8" : "\u25be");
        rd_rgb(cr, RD_TEXT);
        rd_font(cr, 11, 1, 0);
        double lw =
            rd_text_fit(cr, 16, top + h / 2 + 4, width - 22, row->label);
        size_t hidden = mprof_render_band_hidden(model, view, w.index);
        if (hidden) {
          char note[64];
          snprintf(note, sizeof note, "%zu row%s hidden", hidden,
                   hidden == 1 ? "" : "s");
          rd_rgb(cr, RD_TEXT_DIM);
          rd_font(cr, 10, 0, 0);
          rd_text_fit(cr, 16 + lw + 10, top + h / 2 + 4, width - lw - 40, note);
        }
      } else if (!names && rt_is_band(row)) {
        rd_fill_rect(cr, 0, top, left, h, 0xe4e7ee); /* named in pass 1 */
      } else if (!names && h >= 9) {
        rd_rgb(cr, row->kind == MPROF_ROW_STREAM ? RD_TEXT : RD_TEXT_DIM);
        rd_font(cr, fmin(row->kind == MPROF_ROW_STREAM ? 11.0 : 10.0, h - 2), 0,
                0);
        rd_text_fit(cr, 14, top + h / 2 + 4, left - 20, row->label);
      }
    }
    cairo_restore(cr);
  }

  draw_ruler(cr, model, &map, width);
  draw_capture_windows(cr, model, &map);
  /* The selected range on the ruler, with its length. */
  if (sel_shown) {
    rd_rgba(cr, RD_SELECTION, 0.35);
    cairo_rectangle(cr, sel_x0, MPROF_RENDER_RULER - 6, sel_x1 - sel_x0, 5);
    cairo_fill(cr);
    char span[48];
    mprof_format_duration(
        span, sizeof span,
        (double)rs_sub_ns(view->sel_end_ns, view->sel_start_ns));
    /* Centred on the selection, below the tick labels. */
    rd_font(cr, 9, 1, 0);
    double w = rd_text_width(cr, span);
    double tx = fmin(fmax((sel_x0 + sel_x1 - w) / 2, left + 2), right - w - 4);
    rd_fill_rect(cr, tx - 3, 14, w + 6, MPROF_RENDER_RULER - 15, RD_PANEL);
    rd_rgb(cr, RD_SELECTION);
    rd_text(cr, tx, MPROF_RENDER_RULER - 3, span);
  }
  rd_fill_rect(cr, 0, 0, left, MPROF_RENDER_RULER, RD_PANEL);
  rd_vline(cr, left - 1, 0, MPROF_RENDER_RULER, RD_RULE);
  rd_hline(cr, 0, left, MPROF_RENDER_RULER - 1, RD_RULE);
  char span[48];
  mprof_format_duration(span, sizeof span,
                        (double)rs_sub_ns(view->end_ns, view->start_ns));
  rd_rgb(cr, RD_TEXT_DIM);
  char text[160];
  if (view->start_ns > origin || view->end_ns < end) {
    /* Part of the GPU activity: of how much (0 shows it all). */
    char all[48];
    mprof_format_duration(all, sizeof all, (double)rs_sub_ns(end, origin));
    snprintf(text, sizeof text, "%s of %s visible", span, all);
  } else {
    snprintf(text, sizeof text, "%s visible", span);
  }
  /* Where the process started, when that was before the view. */
  int64_t process = mprof_render_model_process_start(model);
  if (process > 0 && process < view->start_ns && process < origin) {
    rd_font(cr, 10, 0, 0);
    rd_text_fit(cr, 6, 11, left - 10, text);
    char d[48];
    mprof_format_duration(d, sizeof d, (double)(origin - process));
    snprintf(text, sizeof text, "\u25c2 process start %s before", d);
    rd_font(cr, 9.5, 0, 0);
    rd_rgb(cr, PROCESS_COLOR);
    rd_text_fit(cr, 6, 21, left - 10, text);
  } else {
    rd_font(cr, 10.5, 0, 0);
    rd_text_fit(cr, 6, 15, left - 10, text);
  }
}

/* ---- hit-testing ---------------------------------------------------------
 */

typedef struct hit_search {
  box_list list; /* first: the LOD key reads it */
  double x;
  int found;
  mprof_render_box box;
  double best_distance;
} hit_search;

static void find_box(const mprof_render_box *box, void *data) {
  hit_search *s = (hit_search *)data;
  /* Snap like drawing does, with a pixel of slack for thin boxes. */
  double x0 = floor(box->x0), x1 = ceil(box->x1);
  if (x1 - x0 < 1)
    x1 = x0 + 1;
  double d = s->x < x0 ? x0 - s->x : (s->x >= x1 ? s->x - x1 + 1 : 0);
  if (d <= 1.0 && (!s->found || d < s->best_distance)) {
    s->found = 1;
    s->box = *box;
    s->best_distance = d;
  }
}

static void hit_test(const mprof_render_model *model,
                     const mprof_render_view *view, int tab, double width,
                     double height, double x, double y, mprof_render_hit *hit) {
  (void)tab;
  (void)height;
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, view, width);
  hit->time_ns = mprof_render_x_to_time(&map, x);
  if (y < MPROF_RENDER_RULER) {
    hit->kind = x >= MPROF_RENDER_GUTTER ? MPROF_HIT_RULER : MPROF_HIT_NONE;
    return;
  }
  int r = mprof_render_row_at_y(model, view,
                                y - MPROF_RENDER_RULER + view->scroll_y);
  if (r < 0)
    return;
  const mprof_render_row *row = mprof_render_row_at(model, (size_t)r);
  hit->row = r;
  hit->stream = row->stream;
  if (x < MPROF_RENDER_GUTTER) {
    hit->kind = MPROF_HIT_LABEL;
    return;
  }
  if (row->kind == MPROF_ROW_RANGES || row->kind == MPROF_ROW_COUNTER ||
      row->kind == MPROF_ROW_API) {
    /* The item under the pointer, a pixel of slack for thin ones; the one
     * that covers the pointer's own instant wins. */
    int64_t t0 = mprof_render_x_to_time(&map, x - 1);
    int64_t t1 = mprof_render_x_to_time(&map, x + 1);
    hit->kind = MPROF_HIT_ROW;
    int64_t best = -1;
    row_items it = rt_items_of(model, row);
    for (size_t i = rt_first_reaching(&it, 0, t0); i < it.count; i++) {
      uint32_t idx = it.order[i];
      int64_t a, b;
      rt_item_span(&it, i, &a, &b);
      if (a > t1)
        break;
      if (best < 0 || (a <= hit->time_ns && b >= hit->time_ns))
        best = idx;
    }
    if (best < 0)
      return;
    hit->item = best;
    if (row->kind == MPROF_ROW_RANGES) {
      hit->kind = MPROF_HIT_RANGE;
    } else if (row->kind == MPROF_ROW_COUNTER) {
      hit->kind = MPROF_HIT_COUNTER;
      hit->value = it.pm[best].value[row->column];
    } else {
      hit->kind = MPROF_HIT_API;
      hit->launch = mprof_render_api_call_launch(model, (size_t)best);
      if (hit->launch >= 0)
        hit->kernel = mprof_render_launch_kernel(model, (size_t)hit->launch);
    }
    return;
  }
  if (row->kind != MPROF_ROW_STREAM) {
    hit->kind = MPROF_HIT_ROW;
    return;
  }
  const mprof_trace *trace = mprof_render_model_trace(model);
  hit_search s;
  memset(&s, 0, sizeof s);
  rt_list_init(&s.list, model, row->stream);
  s.x = x;
  mprof_render_lod_visit(trace, row->stream, &map, MERGE_PX, rt_box_key,
                         find_box, &s);
  const mprof_launch_record *launches = mprof_trace_launches(trace, NULL);
  if (s.found) {
    const mprof_launch_record *l =
        mprof_trace_stream_launch(trace, row->stream, s.box.first);
    hit->kind = s.box.merged ? MPROF_HIT_MERGED : MPROF_HIT_LAUNCH;
    hit->first = s.box.first;
    hit->last = s.box.last;
    hit->launch = (int64_t)(l - launches);
    hit->kernel = mprof_render_launch_kernel(model, (size_t)hit->launch);
    /* Inside the inset of a selected kernel's launch: which instruction. */
    if (!s.box.merged && hit->kernel == view->kernel) {
      const mprof_render_kernel *k =
          mprof_render_kernel_at(model, (size_t)hit->kernel);
      double x0 = s.box.x0, x1 = s.box.x1;
      if (rt_snap(&x0, &x1, MPROF_RENDER_GUTTER, width)) {
        double h;
        double top = MPROF_RENDER_RULER - view->scroll_y +
                     mprof_render_row_top(model, view, (size_t)r, &h);
        double pad = h >= 10 ? 2 : (h >= 4 ? 1 : 0);
        double by = top + pad, bh = h - 2 * pad - 1;
        int lines = mprof_render__inset_lines(k, x1 - x0, bh);
        int line = (int)floor((y - (by + 4)) / INSET_LINE);
        if (lines && line >= 0 && line < lines && x >= x0 + 2 && x < x1 - 2) {
          hit->kind = MPROF_HIT_PC;
          hit->pc = (int)k->hot[line];
        }
      }
    }
    return;
  }
  /* A memop under the pointer? */
  const mprof_memop_record *mo = mprof_trace_memops(trace, NULL);
  size_t first, last;
  rs_stream_memops(model, row->stream, &first, &last);
  for (size_t i = first; i < last; i++) {
    const mprof_memop_record *m = &mo[model->memop_order[i]];
    double x0 = mprof_render_time_to_x(&map, rs_clamp_ns(m->start));
    double x1 = mprof_render_time_to_x(&map, rs_clamp_end(m->start, m->end));
    if (x >= floor(x0) - 1 && x <= ceil(x1) + 1) {
      hit->kind = MPROF_HIT_MEMOP;
      hit->memop = (int64_t)model->memop_order[i];
      return;
    }
    if (x0 > x + 2)
      break;
  }
  hit->kind = MPROF_HIT_ROW;
}

const rs_tab_view rs_trace_tab = {
    .draw = draw, .hit = hit_test, .content = mprof_render__trace_content};
