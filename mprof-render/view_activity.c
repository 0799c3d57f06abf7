/*
 * mprof-render — the Activity view: the spans of one kernel as an SM /
 * block / warp hierarchy.
 *
 *   Rows   SM: one row per SM, its blocks' spans stacked in sub-lanes;
 *          block: one row per (launch, block); warp: one per (launch,
 *          block, warp).
 *   Depth  phase: the outermost spans of each recorder; instruction: the
 *          innermost (spans with nothing inside); auto: phases until the
 *          median phase is 30 px wide, then what is inside them.
 *
 * `mprof --demo-activity` shows it on synthetic data (and says so); it
 * works on any trace with spans. Same drawing as Mega: a pixel buffer,
 * one binary search per bar.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_spans.h"

#define AUTO_OPEN_PX 30.0

/* The level drawn: phases (0) or instructions (1). */
static int level_of(const rs_frame *f, const rs_activity *a) {
  switch (f->view->activity_depth) {
  case MPROF_ACTIVITY_PHASE: return 0;
  case MPROF_ACTIVITY_INSTRUCTION: return 1;
  default:
    return a->level[0].median_ns >
                   AUTO_OPEN_PX * mprof_render_ns_per_px(&f->map)
               ? 1
               : 0;
  }
}

static void row_label(char *buf, size_t size, const rs_activity_row *r,
                      int rows, uint32_t gpu_count) {
  char sm[48];
  rs_sm_label(sm, sizeof sm, gpu_count, r->gpu, r->sm);
  if (rows == MPROF_ACTIVITY_SM)
    snprintf(buf, size, "%s", sm);
  else if (r->warp == MPROF_INDEX_NONE)
    snprintf(buf, size, "block %u \u00b7 %s", r->block, sm);
  else
    snprintf(buf, size, "b%u w%u \u00b7 %s", r->block, r->warp, sm);
}

/* "Rows: SM | block | warp    Depth: auto | phase | instruction", the
 * current ones on a dark chip: the switches, as a picture. */
static void switches(cairo_t *cr, const rs_frame *f, int level, double width) {
  double x = width * 0.45, y = 37;
  rd_font(cr, 10.5, 0, 0);
  for (int group = 0; group < 2; group++) {
    rd_rgb(cr, RD_TEXT_DIM);
    x += rd_text(cr, x, y, group ? "Depth:" : "Rows:") + 6;
    int count = group ? MPROF_ACTIVITY_DEPTH_COUNT : MPROF_ACTIVITY_ROWS_COUNT;
    int current = group ? f->view->activity_depth : f->view->activity_rows;
    for (int i = 0; i < count; i++) {
      char text[48];
      const char *key = group ? mprof_render_activity_depth_key(i)
                              : mprof_render_activity_rows_key(i);
      if (group && i == MPROF_ACTIVITY_AUTO && current == i)
        snprintf(text, sizeof text, "auto (%s)",
                 level ? "instruction" : "phase");
      else
        snprintf(text, sizeof text, "%s", key);
      double w = rd_text_width(cr, text);
      if (i == current) {
        rd_fill_rect(cr, x - 3, y - 11, w + 6, 15, 0x4b5563);
        rd_rgb(cr, 0xffffff);
      } else {
        rd_rgb(cr, RD_TEXT);
      }
      rd_text(cr, x, y, text);
      x += w + 10;
    }
    x += 16;
  }
}

static void draw(cairo_t *cr, const mprof_render_model *m,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  rs_frame f;
  rs_frame_init(&f, m, view, tab, width, height);
  const rs_activity *a = rs_activity_of(&f);
  if (!a) {
    mprof_render_draw_message(
        cr, width, height, "No activity spans",
        mprof_render_model_has_spans(m)
            ? "This kernel has no spans: pick one that has (the kernel "
              "list), or see `mprof --demo-activity`."
            : "This trace has no activity spans. Record with `mprof record "
              "blocks` (every block of any kernel) or `mprof record "
              "source`, open a .mkprof, or see the synthetic `mprof "
              "--demo-activity`.");
    return;
  }
  int level = level_of(&f, a);
  const rs_activity_level *lv = &a->level[level];
  const mprof_render_layout *l = &f.layout;
  double rows_px = l->bottom - l->top;
  double unit = mprof_render_row_unit(m, view, tab, rows_px);
  size_t first, last = rs_visible_rows(view->scroll_y, rows_px, unit,
                                       lv->row_count, &first);
  rs_canvas c;
  if (rs_canvas_init(&c, l->right - l->left, rows_px, RD_BACKGROUND) == 0) {
    rs_lane_set lanes = {lv->lane_first, lv->idx, lv->start, lv->end};
    for (size_t s = first; s < last; s++) {
      const rs_activity_row *r = &lv->rows[s];
      double y = -view->scroll_y + (double)s * unit;
      int y0 = (int)floor(y), y1 = (int)floor(y + unit);
      uint32_t tint = rs_gpu_tint(r->gpu, (uint32_t)s);
      rs_canvas_fill(&c, 0, c.w, y0, y1, tint);
      rs_canvas_grid(&c, &f, y0, y1, rd_darken(tint, 0.06));
      double row_px = y1 - y0 - (unit >= 5 ? 1 : 0);
      if (mprof_render_lanes_shown(r->lanes.lanes, row_px) < r->lanes.lanes) {
        /* Sub-lanes too thin: one bar for the row, whatever covers each
         * pixel, as Mega does for an SM. */
        mprof_render_track t = {lv->all_start + r->first,
                                lv->all_max_end + r->first, r->spans};
        rs_canvas_track(&c, &f, &t, lv->all_idx + r->first, y0,
                        y0 + (int)row_px > y0 ? y0 + (int)row_px : y0 + 1);
        continue;
      }
      rs_draw_lanes(&c, &f, &r->lanes, &lanes, y0, row_px);
    }
    rs_canvas_paint(cr, &c, l->left, l->top);
    rs_canvas_free(&c);
  }
  /* Labels. */
  rs_gutter_begin(cr, &f);
  for (size_t s = first; s < last; s++) {
    char text[96];
    row_label(text, sizeof text, &lv->rows[s], view->activity_rows,
              f.group->gpu_count);
    rs_gutter_label(cr, &f, s, unit, f.group->gpu_count > 1, lv->rows[s].gpu,
                    text, l->left - 20);
  }
  cairo_restore(cr);
  rs_span_header(cr, &f, width);
  switches(cr, &f, level, width);
  rs_time_axis(cr, &f, width);
}

/* The level the frame shows, or NULL (no spans). */
static const rs_activity_level *shown_level(const rs_frame *f) {
  const rs_activity *a = rs_activity_of(f);
  return a ? &a->level[level_of(f, a)] : NULL;
}

static size_t row_count(const rs_frame *f) {
  const rs_activity_level *lv = shown_level(f);
  return lv ? lv->row_count : 0;
}

static void row_hit(const rs_frame *f, size_t s, double unit, double inside,
                    double x, mprof_render_hit *hit) {
  const mprof_render_layout *l = &f->layout;
  const rs_activity_level *lv = shown_level(f);
  const rs_activity_row *r = &lv->rows[s];
  hit->device = r->device;
  hit->sm = r->sm;
  hit->kernel = f->view->kernel;
  hit->row_key = (int64_t)s;
  hit->kind = x < l->left ? MPROF_HIT_LABEL : MPROF_HIT_SM;
  if (x < l->left || !r->lanes.lanes)
    return;
  double y0 = floor(-f->view->scroll_y + (double)s * unit);
  double y1 = floor(-f->view->scroll_y + (double)(s + 1) * unit);
  double row_px = y1 - y0 - (unit >= 5 ? 1 : 0);
  uint32_t shown = mprof_render_lanes_shown(r->lanes.lanes, row_px);
  if (shown < r->lanes.lanes) {
    mprof_render_track t = {lv->all_start + r->first,
                            lv->all_max_end + r->first, r->spans};
    rs_hit_track(f, &t, lv->all_idx + r->first, x, hit);
    return;
  }
  rs_lane_set lanes = {lv->lane_first, lv->idx, lv->start, lv->end};
  rs_hit_lanes(f, &r->lanes, &lanes, row_px, inside, x, hit);
}

const rs_tab_view rs_activity_tab = {.draw = draw,
                                     .content = mprof_render__activity_content,
                                     .rows = row_count,
                                     .row_hit = row_hit};
