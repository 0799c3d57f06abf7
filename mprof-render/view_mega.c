/*
 * mprof-render — the Mega view: the Megakernels viewer's grammar for the
 * activity spans of one kernel.
 *
 *   - one band per SM, tinted by GPU (8 tints), SMs in (GPU, SM) order;
 *   - zoomed out (a row unit under MPROF_RENDER_MEGA_UNIT_MIN px): one bar
 *     per SM, whatever covers each pixel column, runs below a pixel merged
 *     (lighter);
 *   - zoomed in: separator / loader / consumer (double height) / storer
 *     (/ other) rows by the regions' roles, overlapping spans stacked in
 *     greedy sub-lanes;
 *   - a time axis at the bottom, ticks after the kernel's first span;
 *   - hover: the span's region, SM, block, warp, times, payload, and for
 *     MKPROF imports the instruction's decoded params.
 *
 * A trace without spans gets a projection from its launches (waves of
 * blocks over the SMs) and PC samples (the stall mix), under a banner that
 * says it is not measured.
 *
 * Everything lands in one pixel buffer painted once: per visible row and
 * lane, mprof_render_track_cover() finds each pixel column's span with a
 * binary search per bar. The frame costs pixels, not spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_spans.h"

/* Row units of a band: separator 0.5, loader 1, consumer 2, storer 1,
 * other 1. */
static const double row_units[RS_ROWS] = {0.5, 1, 2, 1, 1};

/* One SM's band: the rows it shows (RS_*), their offsets and its height
 * in row units, and how many pixels a unit is. */
typedef struct band_layout {
  int rows[RS_ROWS];
  double offset[RS_ROWS];
  size_t count;
  double units, unit;
} band_layout;

/* The rows a band of @p band_px pixels shows for group @p g (NULL:
 * projected). */
static void band_layout_init(band_layout *b, const rs_group *g,
                             double band_px) {
  int *rows = b->rows;
  double *offset = b->offset;
  size_t n = 0;
  double at = 0;
  for (int r = 0; r < RS_ROWS; r++) {
    int shown;
    if (!g) /* projected: separator, memory, compute, sync & other */
      shown = r != RS_OTHER;
    else if (r == RS_SEPARATOR)
      shown = 1;
    else if (!g->role_rows)
      shown = r == RS_CONSUMER;
    else
      shown = r != RS_OTHER || g->has_row[RS_OTHER];
    if (!shown)
      continue;
    rows[n] = r;
    offset[n] = at;
    at += row_units[r];
    n++;
  }
  b->count = n;
  b->units = at;
  b->unit = band_px / at;
}

/* Row @p r's top and bottom in pixels below its band's top. */
static double band_row_top(const band_layout *b, size_t r) {
  return b->offset[r] * b->unit;
}
static double band_row_end(const band_layout *b, size_t r) {
  return (b->offset[r] + row_units[b->rows[r]]) * b->unit;
}

static const char *row_title(int row, int projected) {
  static const char *const measured[RS_ROWS] = {"separator", "loader",
                                                "consumer", "storer", "other"};
  static const char *const guessed[RS_ROWS] = {"launch", "memory", "compute",
                                               "sync & other", ""};
  return projected ? guessed[row] : measured[row];
}

/* ---- drawing --------------------------------------------------------------
 */

static void draw_measured(rs_canvas *c, const rs_frame *f,
                          const rs_sm_rows *sms, int detailed) {
  const rs_group *g = f->group;
  double band = sms->band;
  band_layout bl;
  band_layout_init(&bl, g, band);
  double y_base = -f->view->scroll_y;
  rs_lane_set rows = {g->lane_first, g->row_idx, g->row_start, g->row_end};
  for (size_t s = sms->first; s < sms->last; s++) {
    const rs_sm *sm = &g->sms[s];
    double y = y_base + (double)s * band;
    int y0 = (int)floor(y), y1 = (int)floor(y + band);
    uint32_t tint = rs_gpu_tint(sm->gpu, sm->sm);
    rs_canvas_fill(c, 0, c->w, y0, y1, tint);
    rs_canvas_grid(c, f, y0, y1, rd_darken(tint, 0.06));
    if (!detailed) {
      mprof_render_track t = {g->all_start + sm->first,
                              g->all_max_end + sm->first, sm->count};
      int pad = band >= 4 ? 1 : 0;
      rs_canvas_track(c, f, &t, g->all_idx + sm->first, y0 + pad,
                      y1 - (band >= 6 ? 1 : 0));
      continue;
    }
    for (size_t r = 0; r < bl.count; r++) {
      int ry0 = (int)floor(y + band_row_top(&bl, r));
      int ry1 = (int)floor(y + band_row_end(&bl, r));
      if (bl.rows[r] == RS_SEPARATOR)
        rs_canvas_fill(c, 0, c->w, ry0, ry1, rd_darken(tint, 0.12));
      rs_draw_lanes(c, f, &sm->rows[bl.rows[r]], &rows, ry0, ry1 - ry0 - 1);
    }
  }
}

static void draw_projected(rs_canvas *c, const rs_frame *f,
                           const rs_sm_rows *sms, int detailed) {
  const mprof_render_model *m = f->model;
  double band = sms->band;
  size_t columns = (size_t)c->w;
  mprof_render_column *cols = c->cols;
  uint32_t *colors = c->colors;
  int64_t *launch_at = (int64_t *)malloc(columns * sizeof *launch_at);
  int64_t *mid = (int64_t *)malloc(columns * sizeof *mid);
  rs_wave_column *waves = (rs_wave_column *)malloc(columns * sizeof *waves);
  uint32_t *bar = (uint32_t *)malloc(columns * sizeof *bar);
  if (!launch_at || !mid || !waves || !bar)
    goto out;
  for (size_t x = 0; x < columns; x++)
    mid[x] = mprof_render_x_to_time(&f->map, f->layout.left + x + 0.5);
  /* Colours by blocks on the SM, 0..blocks per SM. */
  uint32_t shade[257];
  band_layout bl;
  band_layout_init(&bl, NULL, band);
  double y_base = -f->view->scroll_y;
  static const uint32_t family_of_row[RS_ROWS] = {
      0, 0xb04a3c /* memory */, 0x3f7fbf /* compute */, 0x8a63b8 /* sync */, 0};
  int current_kernel = -2;
  rs_projection p;
  memset(&p, 0, sizeof p);
  for (size_t s = sms->first; s < sms->last; s++) {
    const rs_psm *sm = &sms->psm[s];
    if (sm->kernel != current_kernel) {
      current_kernel = sm->kernel;
      rs_projection_init(&p, m, sm->kernel);
      /* Which launch covers each column, once per device. */
      if (p.track) {
        mprof_render_track t = {p.track->start, p.track->max_end,
                                p.track->count};
        mprof_render_track_cover(&t, &f->map, columns, cols);
        for (size_t x = 0; x < columns; x++)
          launch_at[x] =
              cols[x].item >= 0 ? (int64_t)p.track->idx[cols[x].item] : -1;
      } else {
        for (size_t x = 0; x < columns; x++)
          launch_at[x] = -1;
      }
      rs_wave_columns(&p, m, launch_at, mid, columns, sm->sm_count, waves);
      const mprof_render_kernel *kc =
          mprof_render_kernel_at(m, (size_t)sm->kernel);
      for (uint32_t b = 0; b <= p.blocks_per_sm && b < 257; b++)
        shade[b] = rd_lighten(kc ? kc->color : 0x888888,
                              0.7 * (1.0 - rs_projected_occupancy(&p, b)));
    }
    const mprof_render_kernel *k =
        mprof_render_kernel_at(m, (size_t)sm->kernel);
    double y = y_base + (double)s * band;
    int y0 = (int)floor(y), y1 = (int)floor(y + band);
    uint32_t tint = rs_gpu_tint(sm->gpu, sm->sm);
    rs_canvas_fill(c, 0, c->w, y0, y1, tint);
    rs_canvas_grid(c, f, y0, y1, rd_darken(tint, 0.06));
    /* Occupancy per column. */
    for (size_t x = 0; x < columns; x++) {
      uint32_t blocks = rs_wave_blocks(&waves[x], p.blocks_per_sm, sm->sm);
      colors[x] =
          !blocks ? RS_NONE
          : blocks < 257
              ? shade[blocks]
              : rd_lighten(k ? k->color : 0x888888,
                           0.7 * (1.0 - rs_projected_occupancy(&p, blocks)));
    }
    if (!detailed || !p.sampled) {
      int pad = band >= 4 ? 1 : 0;
      if (!detailed)
        rs_canvas_columns(c, colors, y0 + pad, y1 - (band >= 6 ? 1 : 0));
      else {
        /* No stall mix: occupancy alone, in the compute row. */
        for (size_t r = 0; r < bl.count; r++)
          if (bl.rows[r] == RS_CONSUMER)
            rs_canvas_columns(c, colors, (int)floor(y + band_row_top(&bl, r)),
                              (int)floor(y + band_row_end(&bl, r)) - 1);
      }
      continue;
    }
    /* Rows: the launch in the separator, then memory / compute / other
     * bars as tall as their share of the kernel's samples. */
    for (size_t r = 0; r < bl.count; r++) {
      int ry0 = (int)floor(y + band_row_top(&bl, r));
      int ry1 = (int)floor(y + band_row_end(&bl, r));
      if (bl.rows[r] == RS_SEPARATOR) {
        rs_canvas_fill(c, 0, c->w, ry0, ry1, rd_darken(tint, 0.12));
        uint32_t launch_rgb = rd_lighten(k ? k->color : 0x888888, 0.3);
        for (size_t x = 0; x < columns; x++)
          bar[x] = launch_at[x] >= 0 ? launch_rgb : RS_NONE;
        rs_canvas_columns(c, bar, ry0, ry1);
        continue;
      }
      /* As strong as the share: a faint bar for a rare stall. */
      double share = p.share[bl.rows[r] - 1];
      uint32_t rgb =
          rd_lighten(family_of_row[bl.rows[r]], 0.85 * (1.0 - share));
      for (size_t x = 0; x < columns; x++)
        bar[x] = colors[x] == RS_NONE ? RS_NONE : rgb;
      rs_canvas_columns(c, bar, ry0, ry1 - 1 > ry0 ? ry1 - 1 : ry1);
    }
  }
out:
  free(launch_at);
  free(mid);
  free(waves);
  free(bar);
}

/* Labels in the gutter: SMs (and their rows when there is room). */
static void draw_labels(cairo_t *cr, const rs_frame *f, const rs_sm_rows *sms,
                        int detailed) {
  const mprof_render_layout *l = &f->layout;
  band_layout bl;
  band_layout_init(&bl, f->group, sms->band);
  /* The SM labels take the gutter but for the row titles right of them. */
  int titles = detailed && bl.unit >= 9;
  double title_font = fmin(10, bl.unit * row_units[RS_CONSUMER] - 2);
  double widest = 0;
  rd_font(cr, title_font, 0, 0);
  for (size_t r = 0; titles && r < bl.count; r++)
    if (bl.rows[r] != RS_SEPARATOR)
      widest =
          fmax(widest, rd_text_width(cr, row_title(bl.rows[r], f->projected)));
  rs_sm_gutter(cr, f, sms, l->left - 20 - (titles ? widest + 10 : 0));
  /* Tall enough for row titles is tall enough for every SM's label. */
  for (size_t s = sms->first; titles && s < sms->last; s++) {
    double y = l->top - f->view->scroll_y + (double)s * sms->band;
    rd_rgb(cr, RD_TEXT_DIM);
    rd_font(cr, title_font, 0, 0);
    for (size_t r = 0; r < bl.count; r++) {
      if (bl.rows[r] == RS_SEPARATOR)
        continue;
      double ry = y + (bl.offset[r] + row_units[bl.rows[r]] / 2) * bl.unit + 4;
      rd_text_right(cr, l->left - 8, ry, row_title(bl.rows[r], f->projected));
    }
  }
  cairo_restore(cr);
}

/* The legend's entries: each region name once (an instruction type of a
 * .mkprof is a region per unit it used), in order, with its first
 * region's colour. Returns how many; @p names and @p colors hold @p max. */
static size_t legend_entries(const mprof_render_model *m, const char **names,
                             uint32_t *colors, size_t max) {
  size_t regions, n = 0;
  const mprof_region_record *rg = mprof_trace_regions(m->trace, &regions);
  for (size_t r = 0; r < regions && n < max; r++) {
    const char *name = mprof_trace_string(m->trace, rg[r].name);
    size_t i = 0;
    while (i < n && strcmp(names[i], name) != 0)
      i++;
    if (i < n)
      continue;
    names[n] = name;
    colors[n++] = rs_region_color(m, (uint32_t)r);
  }
  return n;
}

#define LEGEND_MAX 256 /* entries shown; a trace of more regions says so */

/* The regions' colours: in the header's second line right of the info when
 * they all fit there, else in a box over the top right of the plot, in as
 * many lines as they take, so that every name shows once, whole. */
static void draw_legend(cairo_t *cr, const rs_frame *f, double width,
                        double info_end) {
  const mprof_render_model *m = f->model;
  double x = fmax(info_end + 24, width * 0.4), y = 37;
  rd_font(cr, 10.5, 0, 0);
  if (f->projected) {
    static const struct {
      const char *name;
      uint32_t color;
    } items[3] = {{"memory stalls", 0xb04a3c},
                  {"compute / issue", 0x3f7fbf},
                  {"sync & other", 0x8a63b8}};
    for (int i = 0; i < 3 && x < width - 60; i++) {
      rd_fill_rect(cr, x, y - 9, 10, 10, items[i].color);
      rd_rgb(cr, RD_TEXT);
      x += 14 + rd_text(cr, x + 14, y, items[i].name) + 12;
    }
    return;
  }
  static const char *names[LEGEND_MAX];
  static uint32_t colors[LEGEND_MAX];
  size_t regions;
  mprof_trace_regions(m->trace, &regions);
  size_t n = legend_entries(m, names, colors, LEGEND_MAX);
  double need = 0, widest = 0;
  for (size_t i = 0; i < n; i++) {
    double w = rd_text_width(cr, names[i]);
    need += 14 + w + 12;
    widest = fmax(widest, 14 + w + 12);
  }
  if (x + need <= width - 10 && regions <= LEGEND_MAX) {
    for (size_t i = 0; i < n; i++) {
      rd_fill_rect(cr, x, y - 9, 10, 10, colors[i]);
      rd_rgb(cr, RD_TEXT);
      x += 14 + rd_text(cr, x + 14, y, names[i]) + 12;
    }
    return;
  }
  /* The box: entries in columns of the widest one's width. */
  const mprof_render_layout *l = &f->layout;
  double room = fmax(120, (l->right - l->left) * 0.6);
  widest = fmin(widest, room);
  size_t columns = (size_t)fmax(1, floor(room / widest));
  if (columns > n)
    columns = n;
  size_t lines = (n + columns - 1) / columns + (regions > LEGEND_MAX);
  double line = 16, bw = columns * widest + 8, bh = lines * line + 8;
  double bx = l->right - bw - 8, by = l->top + 8;
  rd_rgba(cr, RD_PANEL, 0.94);
  cairo_rectangle(cr, bx, by, bw, bh);
  cairo_fill(cr);
  rd_rgb(cr, RD_RULE);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, bx + 0.5, by + 0.5, bw - 1, bh - 1);
  cairo_stroke(cr);
  for (size_t i = 0; i < n; i++) {
    double ex = bx + 4 + (double)(i % columns) * widest;
    double ey = by + 4 + (double)(i / columns) * line + 12;
    rd_fill_rect(cr, ex, ey - 9, 10, 10, colors[i]);
    rd_rgb(cr, RD_TEXT);
    rd_text_fit(cr, ex + 14, ey, widest - 14 - 8, names[i]);
  }
  if (regions > LEGEND_MAX) {
    char more[64];
    snprintf(more, sizeof more, "(the first %d regions of %zu)", LEGEND_MAX,
             regions);
    rd_rgb(cr, RD_TEXT_DIM);
    rd_text(cr, bx + 4, by + 4 + (double)(lines - 1) * line + 12, more);
  }
}

static void draw(cairo_t *cr, const mprof_render_model *m,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  rs_frame f;
  rs_sm_rows sms;
  if (!rs_sm_frame_begin(cr, &f, &sms, m, view, tab, width, height))
    return;
  const mprof_render_layout *l = &f.layout;
  if (!sms.count) {
    rs_span_header(cr, &f, width);
    rd_rgb(cr, RD_TEXT_DIM);
    rd_font(cr, 13, 0, 0);
    rd_text_fit(cr, 24, l->top + 40, width - 48,
                "Nothing to project: this kernel has no launches.");
    free(sms.psm);
    return;
  }
  band_layout bl;
  band_layout_init(&bl, f.group, sms.band);
  int detailed = mprof_render_mega_detailed(sms.band, bl.units);
  rs_canvas c;
  if (rs_canvas_init(&c, l->right - l->left, sms.px, RD_BACKGROUND) == 0) {
    rs_canvas_grid(&c, &f, 0, c.h, 0xe3e5ea);
    if (f.group)
      draw_measured(&c, &f, &sms, detailed);
    else
      draw_projected(&c, &f, &sms, detailed);
    rs_canvas_paint(cr, &c, l->left, l->top);
    rs_canvas_free(&c);
  }
  /* The selected time range. */
  if (view->sel_end_ns > view->sel_start_ns) {
    double x0 =
        fmax(l->left, mprof_render_time_to_x(&f.map, view->sel_start_ns));
    double x1 =
        fmin(l->right, mprof_render_time_to_x(&f.map, view->sel_end_ns));
    if (x1 > x0) {
      rd_rgba(cr, RD_SELECTION, 0.15);
      cairo_rectangle(cr, x0, l->top, x1 - x0, sms.px);
      cairo_fill(cr);
    }
  }
  draw_labels(cr, &f, &sms, detailed);
  double info_end = rs_span_header(cr, &f, width);
  draw_legend(cr, &f, width, info_end);
  /* How it is drawn, for the reader. */
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 0);
  rd_text_right(cr, width - 10, 19,
                detailed ? "rows per SM (zoom rows out: one bar per SM)"
                         : "one bar per SM (Ctrl+wheel: rows per SM)");
  rs_time_axis(cr, &f, width);
  free(sms.psm);
}

/* ---- hit-testing -----------------------------------------------------------
 */

static void row_hit(const rs_frame *f, size_t s, double band, double in_band,
                    double x, mprof_render_hit *hit) {
  const mprof_render_layout *l = &f->layout;
  band_layout bl;
  band_layout_init(&bl, f->group, band);
  int detailed = mprof_render_mega_detailed(band, bl.units);
  int row = -1;
  double row_y = 0, row_px = band;
  if (detailed)
    for (size_t r = 0; r < bl.count; r++) {
      double top = floor(band_row_top(&bl, r));
      double end = floor(band_row_end(&bl, r));
      if (in_band >= top && in_band < end) {
        row = bl.rows[r];
        row_y = top;
        row_px = end - top;
      }
    }
  static const int roles[RS_ROWS] = {MPROF_ROLE_SEPARATOR, MPROF_ROLE_LOADER,
                                     MPROF_ROLE_CONSUMER, MPROF_ROLE_STORER,
                                     MPROF_ROLE_OTHER};
  hit->role = row < 0 ? -1 : roles[row];
  hit->t0 = hit->t1 = hit->time_ns;
  if (f->projected) {
    rs_hit_projected(f, s, x, hit->time_ns, MPROF_HIT_SM, hit);
    return;
  }
  const rs_group *g = f->group;
  const rs_sm *sm = &g->sms[s];
  hit->device = sm->device;
  hit->sm = sm->sm;
  hit->kernel = f->view->kernel;
  hit->kind = x < l->left ? MPROF_HIT_LABEL : MPROF_HIT_SM;
  if (x < l->left)
    return;
  if (!detailed) {
    mprof_render_track t = {g->all_start + sm->first,
                            g->all_max_end + sm->first, sm->count};
    rs_hit_track(f, &t, g->all_idx + sm->first, x, hit);
    return;
  }
  if (row < 0)
    return;
  rs_lane_set rows = {g->lane_first, g->row_idx, g->row_start, g->row_end};
  rs_hit_lanes(f, &sm->rows[row], &rows, row_px - 1, in_band - row_y, x, hit);
}

const rs_tab_view rs_mega_tab = {.draw = draw,
                                 .content = mprof_render__mega_content,
                                 .rows = rs_frame_sm_count,
                                 .row_hit = row_hit};
