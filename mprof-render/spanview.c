/*
 * mprof-render — what Mega, Density and Activity share: the frame of a
 * span view (its kernel, group, layout and time map), the pixel buffer
 * painted once, the header, banners and time axis, the SMs and their
 * labels, the projection of a trace without spans, the rows' heights and
 * the layout of every timeline tab. The span views call this file; it
 * calls none of them.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_spans.h"

/* Light tints per GPU, after the Megakernels viewer's 8 dark ones. */
static const uint32_t gpu_tints[8] = {0xe7edf6, 0xe6f2e4, 0xf6e9e4, 0xefe8f5,
                                      0xf5f0dc, 0xe2f1f1, 0xf4e6ee, 0xececec};

void rs_sm_label(char *buf, size_t size, uint32_t gpu_count, uint32_t gpu,
                 uint32_t sm) {
  if (gpu_count > 1)
    snprintf(buf, size, "GPU %u \u00b7 SM %u", gpu, sm);
  else
    snprintf(buf, size, "SM %u", sm);
}

void rs_sm_label_fit(cairo_t *cr, char *buf, size_t size, double max_width,
                     uint32_t gpu_count, uint32_t gpu, uint32_t sm) {
  rs_sm_label(buf, size, gpu_count, gpu, sm);
  if (gpu_count > 1 && rd_text_width(cr, buf) > max_width)
    snprintf(buf, size, "G%u SM%u", gpu, sm);
}

uint32_t rs_gpu_tint(uint32_t gpu, uint32_t sm) {
  uint32_t tint = gpu_tints[gpu % 8];
  return sm % 2 ? rd_darken(tint, 0.035) : tint;
}

/* ---- the pixel buffer ---------------------------------------------------- */

int rs_canvas_init(rs_canvas *c, double width, double height, uint32_t bg) {
  memset(c, 0, sizeof *c);
  if (!(width >= 1 && width <= 65536 && height >= 1 && height <= 65536))
    return -1;
  c->w = (int)ceil(width);
  c->h = (int)ceil(height);
  c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->w, c->h);
  c->cols = (mprof_render_column *)malloc((size_t)c->w * sizeof *c->cols);
  c->colors = (uint32_t *)malloc((size_t)c->w * sizeof *c->colors);
  if (cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS || !c->cols ||
      !c->colors) {
    rs_canvas_free(c);
    return -1;
  }
  cairo_surface_flush(c->surface);
  c->px = (uint32_t *)cairo_image_surface_get_data(c->surface);
  c->stride = cairo_image_surface_get_stride(c->surface) / 4;
  for (int x = 0; x < c->w; x++)
    c->px[x] = 0xff000000u | bg;
  for (int y = 1; y < c->h; y++)
    memcpy(c->px + (size_t)y * c->stride, c->px, (size_t)c->w * 4);
  return 0;
}

void rs_canvas_fill(rs_canvas *c, int x0, int x1, int y0, int y1,
                    uint32_t rgb) {
  if (x0 < 0)
    x0 = 0;
  if (y0 < 0)
    y0 = 0;
  if (x1 > c->w)
    x1 = c->w;
  if (y1 > c->h)
    y1 = c->h;
  if (x0 >= x1 || y0 >= y1)
    return;
  uint32_t v = 0xff000000u | rgb;
  uint32_t *row = c->px + (size_t)y0 * c->stride;
  for (int x = x0; x < x1; x++)
    row[x] = v;
  for (int y = y0 + 1; y < y1; y++)
    memcpy(c->px + (size_t)y * c->stride + x0, row + x0, (size_t)(x1 - x0) * 4);
}

/* Column colours (RS_NONE: leave) over rows [y0, y1). */
void rs_canvas_columns(rs_canvas *c, const uint32_t *colors, int y0, int y1) {
  if (y0 < 0)
    y0 = 0;
  if (y1 > c->h)
    y1 = c->h;
  if (y0 >= y1)
    return;
  uint32_t *row = c->px + (size_t)y0 * c->stride;
  for (int x = 0; x < c->w; x++)
    if (colors[x] != RS_NONE)
      row[x] = 0xff000000u | colors[x];
  for (int y = y0 + 1; y < y1; y++) {
    uint32_t *dst = c->px + (size_t)y * c->stride;
    for (int x = 0; x < c->w; x++)
      if (colors[x] != RS_NONE)
        dst[x] = row[x];
  }
}

void rs_canvas_grid(rs_canvas *c, const rs_frame *f, int y0, int y1,
                    uint32_t rgb) {
  int left = (int)f->layout.left;
  for (size_t i = 0; i < f->grid_count; i++)
    rs_canvas_fill(c, f->grid[i] - left, f->grid[i] - left + 1, y0, y1, rgb);
}

void rs_canvas_paint(cairo_t *cr, rs_canvas *c, double x, double y) {
  if (!c->surface)
    return;
  cairo_surface_mark_dirty(c->surface);
  cairo_save(cr);
  cairo_rectangle(cr, x, y, c->w, c->h);
  cairo_clip(cr);
  cairo_set_source_surface(cr, c->surface, x, y);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
}

void rs_canvas_free(rs_canvas *c) {
  if (c->surface)
    cairo_surface_destroy(c->surface);
  c->surface = NULL;
  free(c->cols);
  free(c->colors);
  c->cols = NULL;
  c->colors = NULL;
}

/* ---- the header, banners and axis ---------------------------------------- */

#define HEADER 46.0
#define BANNER 24.0
#define RS_AXIS 30.0 /* px of time axis at the bottom */

int64_t rs_span_origin(const mprof_render_model *m, int kernel) {
  const rs_group *g = mprof_render__group(m, kernel);
  const rs_launch_track *t = mprof_render__launch_track(m, kernel);
  int64_t start, end;
  mprof_render_model_bounds(m, &start, &end);
  return g ? g->start_ns : t ? t->start[0] : start;
}

/* What a span tab shows and how it knows it. */
void rs_frame_init(rs_frame *f, const mprof_render_model *m,
                   const mprof_render_view *view, int tab, double width,
                   double height) {
  memset(f, 0, sizeof *f);
  f->model = m;
  f->view = view;
  f->tab = tab;
  f->kernel = view->kernel;
  f->group = mprof_render__group(m, view->kernel);
  f->projected = !f->group && tab != MPROF_RENDER_ACTIVITY;
  f->demo = mprof_render_model_is_demo(m);
  double top = HEADER;
  if (f->projected || f->demo)
    top += BANNER;
  f->layout.left = MPROF_RENDER_GUTTER;
  f->layout.right = fmax(MPROF_RENDER_GUTTER + 1, width);
  f->layout.top = top;
  f->layout.bottom = fmax(top + 1, height - RS_AXIS);
  mprof_render_timemap_init(&f->map, view->start_ns, view->end_ns,
                            f->layout.left, f->layout.right - f->layout.left);
  f->origin = rs_span_origin(m, view->kernel);
  f->grid_count = mprof_render__tick_xs(&f->map, f->origin, f->grid, 64);
}

/* One line of text in a banner across the width, under the header. */
static void banner(cairo_t *cr, double width, uint32_t bg, uint32_t fg,
                   const char *bold, const char *text) {
  double y = HEADER;
  rd_fill_rect(cr, 0, y, width, BANNER, bg);
  rd_hline(cr, 0, width, y + BANNER - 1, rd_darken(bg, 0.2));
  rd_rgb(cr, fg);
  rd_font(cr, 12, 1, 0);
  double w = rd_text(cr, 10, y + 16, bold);
  rd_font(cr, 12, 0, 0);
  rd_text_fit(cr, 10 + w + 6, y + 16, width - w - 26, text);
}

double rs_span_header(cairo_t *cr, const rs_frame *f, double width) {
  const mprof_render_model *m = f->model;
  const mprof_render_view *view = f->view;
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_PANEL);
  rd_hline(cr, 0, width, HEADER - 1, RD_RULE);
  const mprof_render_kernel *k = rs_kernel(m, view->kernel);
  char title[768], count[32], info[512];
  snprintf(title, sizeof title, "%s \u2014 %s", mprof_render_tab_title(f->tab),
           k ? k->short_name : (f->group ? "spans of no launch" : "no kernel"));
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 14, 1, 0);
  rd_text_fit(cr, 12, 19, width - 24, title);
  const char *source = mprof_trace_meta(m->trace, "capture.mode");
  if (f->group) {
    char gpus[32] = "";
    mprof_format_count(count, sizeof count, f->group->span_count);
    if (f->group->gpu_count > 1)
      snprintf(gpus, sizeof gpus, " of %u GPUs", f->group->gpu_count);
    snprintf(info, sizeof info, "%s: %s spans on %zu SMs%s \u00b7 %s",
             f->demo ? "synthetic" : "measured", count, f->group->sm_count,
             gpus,
             source && strcmp(source, "mkprof") == 0 ? "imported from MKPROF"
             : f->demo                               ? "synthetic demo"
             : mprof_trace_meta(m->trace, "blocks.producer")
                 ? "every block, by Compute Sanitizer patches (mprof record "
                   "blocks)"
                 : "source instrumentation");
  } else {
    snprintf(
        info, sizeof info,
        "projected from %s launches and PC samples (the trace has no "
        "activity spans for this kernel)",
        k ? (mprof_format_count(count, sizeof count, k->stats->launches), count)
          : "0");
  }
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11, 0, 0);
  double info_end = 12 + rd_text_fit(cr, 12, 37, width * 0.55, info);
  if (f->projected) {
    char text[512];
    size_t with = 0;
    for (size_t i = 0; i < m->kernel_count; i++)
      with += m->kernel_group[i] >= 0;
    if (with)
      snprintf(text, sizeof text,
               "%zu other kernel%s of this trace %s measured spans: pick %s "
               "in the kernel list.",
               with, with == 1 ? "" : "s", with == 1 ? "has" : "have",
               with == 1 ? "it" : "one");
    else
      snprintf(text, sizeof text,
               "SM occupancy from each launch's grid and waves, rows from "
               "the stall mix. For measured spans, record with `mprof "
               "record blocks` (any kernel) or `mprof record source`, or "
               "open a .mkprof.");
    banner(cr, width, MPROF_RENDER_BANNER_PROJECTED, 0x5a3d00,
           "Projected from PC samples, not measured.", text);
  } else if (f->demo) {
    banner(cr, width, MPROF_RENDER_BANNER_DEMO, 0x2f1d5c,
           "Synthetic demo data.",
           "Generated by `mprof --demo-activity` (mprof synth: 8 SMs, 2 "
           "blocks each at a time, 4 warps per block, phases with "
           "instructions inside); not recorded on a GPU.");
  }
  return info_end;
}

void rs_time_axis(cairo_t *cr, const rs_frame *f, double width) {
  const mprof_render_timemap *map = &f->map;
  double left = f->layout.left, right = f->layout.right, y = f->layout.bottom;
  rd_fill_rect(cr, 0, y, width, RS_AXIS, RD_PANEL);
  rd_hline(cr, 0, width, y, RD_RULE);
  int64_t step = mprof_render_tick_step(map, MPROF_RENDER_TICK_PX);
  int64_t offsets[64];
  int xs[64];
  size_t n = mprof_render__ticks(map, f->origin, step, offsets, xs, 64);
  rd_font(cr, 10.5, 0, 0);
  for (size_t i = 0; i < n; i++) {
    double x = xs[i];
    if (x < left || x >= right)
      continue;
    rd_fill_rect(cr, x, y + 1, 1, 6, RD_TEXT_DIM);
    char label[48];
    mprof_format_tick(label, sizeof label, (double)offsets[i], (double)step);
    rd_rgb(cr, RD_TEXT);
    rd_text(cr, x + 3, y + 18, label);
  }
  char span[48], text[96];
  mprof_format_duration(span, sizeof span,
                        (double)rs_sub_ns(map->end_ns, map->start_ns));
  snprintf(text, sizeof text, "%s visible", span);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_text_fit(cr, 6, y + 18, left - 10, text);
}

/* ---- SMs of a frame --------------------------------------------------------
 */

/* The SMs a projection covers: every SM of each device the kernel's name
 * ran on, at most RS_SM_MAX of a device (a larger sm_count is a corrupt
 * record: the waves are spread over RS_SM_MAX) and RS_SM_ROWS_MAX in all
 * (later devices are left out). */
static size_t projected_sms(const mprof_render_model *m, int kernel,
                            rs_psm *out, size_t max) {
  const mprof_render_kernel *k = rs_kernel(m, kernel);
  if (!k)
    return 0;
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  size_t n = 0;
  uint32_t gpu = 0;
  for (size_t d = 0; d < devices; d++) {
    int kd = -1;
    for (size_t i = 0; i < m->kernel_count && kd < 0; i++)
      if (m->kernels[i].stats->device == d &&
          m->name_first[i] == m->name_first[kernel])
        kd = (int)i;
    if (kd < 0 || !m->kernels[kd].stats->launches)
      continue;
    uint32_t sms = dev[d].sm_count ? dev[d].sm_count : 1;
    if (sms > RS_SM_MAX)
      sms = RS_SM_MAX;
    if (n + sms > RS_SM_ROWS_MAX)
      break;
    for (uint32_t s = 0; s < sms; s++) {
      if (out && n < max) {
        out[n].device = (uint32_t)d;
        out[n].gpu = gpu;
        out[n].sm = s;
        out[n].sm_count = sms;
        out[n].kernel = kd;
      }
      n++;
    }
    gpu++;
  }
  return n;
}

size_t rs_frame_sm_count(const rs_frame *f) {
  if (f->group)
    return f->group->sm_count;
  return projected_sms(f->model, f->kernel, NULL, 0);
}

/* How many GPUs the frame's SMs are on (projected: by GPU, the last one's
 * rank is the highest). */
static uint32_t frame_gpus(const rs_frame *f, const rs_psm *psm, size_t count) {
  if (f->group)
    return f->group->gpu_count;
  return psm && count ? psm[count - 1].gpu + 1 : 0;
}

void rs_gutter_begin(cairo_t *cr, const rs_frame *f) {
  const mprof_render_layout *l = &f->layout;
  rd_fill_rect(cr, 0, l->top, l->left, l->bottom - l->top, RD_PANEL);
  rd_vline(cr, l->left - 1, l->top, l->bottom, RD_RULE);
  cairo_save(cr);
  cairo_rectangle(cr, 0, l->top, l->left - 1, l->bottom - l->top);
  cairo_clip(cr);
}

int rs_gutter_label(cairo_t *cr, const rs_frame *f, size_t row, double unit,
                    int chip, uint32_t gpu, const char *text,
                    double max_width) {
  double y = f->layout.top - f->view->scroll_y + (double)row * unit;
  if (chip)
    rd_fill_rect(cr, 2, floor(y), 5, ceil(unit),
                 rd_darken(rs_gpu_tint(gpu, 0), 0.25));
  double every = unit >= 12 ? 1 : ceil(13.0 / unit);
  if (fmod((double)row, every) != 0)
    return 0;
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, fmin(11, fmax(8, unit - 2)), 0, 0);
  rd_text_fit(cr, 12, y + fmin(unit, 24) / 2 + 4, max_width, text);
  return 1;
}

void rs_sm_gutter(cairo_t *cr, const rs_frame *f, const rs_sm_rows *rows,
                  double max_width) {
  const rs_psm *psm = rows->psm;
  rs_gutter_begin(cr, f);
  uint32_t gpus = frame_gpus(f, psm, rows->count);
  for (size_t s = rows->first; s < rows->last; s++) {
    uint32_t gpu = f->group ? f->group->sms[s].gpu : psm[s].gpu;
    uint32_t sm = f->group ? f->group->sms[s].sm : psm[s].sm;
    char text[64];
    rd_font(cr, fmin(11, fmax(8, rows->band - 2)), 0, 0); /* as drawn */
    rs_sm_label_fit(cr, text, sizeof text, max_width, gpus, gpu, sm);
    rs_gutter_label(cr, f, s, rows->band, 1, gpu, text, max_width);
  }
}

/* The SMs of a projected frame (NULL when measured, or none): the
 * caller's to free. *count is rs_frame_sm_count(). */
static rs_psm *frame_psms(const rs_frame *f, size_t *count) {
  *count = rs_frame_sm_count(f);
  if (!f->projected || !*count)
    return NULL;
  rs_psm *psm = (rs_psm *)malloc(*count * sizeof *psm);
  if (psm)
    projected_sms(f->model, f->kernel, psm, *count);
  return psm;
}

size_t rs_visible_rows(double scroll_y, double rows_px, double unit,
                       size_t count, size_t *first) {
  /* In doubles until inside [0, count]: a huge scroll is past the end. */
  double n = (double)count;
  *first = (size_t)fmin(n, fmax(0, floor(scroll_y / unit)));
  size_t last = (size_t)fmin(n, fmax(0, ceil((scroll_y + rows_px) / unit)));
  return last;
}

int rs_sm_frame_begin(cairo_t *cr, rs_frame *f, rs_sm_rows *rows,
                      const mprof_render_model *m,
                      const mprof_render_view *view, int tab, double width,
                      double height) {
  if (view->kernel < 0 && m->none_group < 0) {
    rd_no_kernel(cr, width, height);
    return 0;
  }
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  rs_frame_init(f, m, view, tab, width, height);
  rows->px = f->layout.bottom - f->layout.top;
  rows->psm = frame_psms(f, &rows->count);
  if (f->projected && rows->count && !rows->psm)
    return 0;
  rows->band = mprof_render_row_unit(m, view, tab, rows->px);
  rows->last = rs_visible_rows(view->scroll_y, rows->px, rows->band,
                               rows->count, &rows->first);
  return 1;
}

void rs_span_hit(const rs_tab_view *t, const mprof_render_model *m,
                 const mprof_render_view *view, int tab, double width,
                 double height, double x, double y, mprof_render_hit *hit) {
  rs_frame f;
  rs_frame_init(&f, m, view, tab, width, height);
  const mprof_render_layout *l = &f.layout;
  size_t count = t->rows(&f);
  hit->time_ns = mprof_render_x_to_time(&f.map, x);
  if (y < l->top || y >= l->bottom) {
    hit->kind = count && y >= l->bottom && x >= l->left ? MPROF_HIT_RULER
                                                        : MPROF_HIT_NONE;
    return;
  }
  double unit = mprof_render_row_unit(m, view, tab, l->bottom - l->top);
  double content_y = y - l->top + view->scroll_y;
  size_t row = (size_t)floor(content_y / unit);
  if (content_y >= 0 && row < count)
    t->row_hit(&f, row, unit, content_y - (double)row * unit, x, hit);
}

double mprof_render_row_unit(const mprof_render_model *m,
                             const mprof_render_view *view, int tab,
                             double rows_px) {
  if (tab == MPROF_RENDER_ACTIVITY) {
    if (view->activity_height > 0)
      return view->activity_height;
    double rows = (double)mprof_render__activity_rows(m, view);
    return rows > 0 ? fmax(3.0, rows_px / rows) : 14.0;
  }
  if (view->sm_height > 0)
    return view->sm_height;
  rs_frame f;
  rs_frame_init(&f, m, view, tab, 1000, 1000);
  size_t n = rs_frame_sm_count(&f);
  return n ? fmax(1.0, rows_px / (double)n) : 20.0;
}

/* ---- projection ------------------------------------------------------------
 */

/* Blocks per SM, warps per block and max warps of @p k's main shape. */
static void projection_shape(rs_projection *p, const mprof_render_model *m,
                             const mprof_render_kernel *k) {
  p->blocks_per_sm = 1;
  p->warps_per_block = 1;
  p->max_warps = 1;
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  if (!k || !k->shape)
    return;
  const mprof_device_record *d =
      k->stats->device < devices ? &dev[k->stats->device] : NULL;
  uint64_t threads = (uint64_t)(k->shape->block[0] ? k->shape->block[0] : 1) *
                     (k->shape->block[1] ? k->shape->block[1] : 1) *
                     (k->shape->block[2] ? k->shape->block[2] : 1);
  uint32_t warp = d && d->warp_size ? d->warp_size : 32;
  p->warps_per_block = (uint32_t)((threads + warp - 1) / warp);
  p->max_warps = d && d->max_warps_per_sm     ? d->max_warps_per_sm
                 : d && d->max_threads_per_sm ? d->max_threads_per_sm / warp
                                              : 64;
  mprof_occupancy occ = MPROF_OCCUPANCY_INIT;
  if (d && mprof_occupancy_compute(&occ, d, k->shape) == 0 && occ.known &&
      occ.blocks_per_sm) {
    p->blocks_per_sm = occ.blocks_per_sm;
    return;
  }
  uint32_t by_warps =
      p->max_warps / (p->warps_per_block ? p->warps_per_block : 1);
  p->blocks_per_sm = by_warps ? by_warps : 1;
}

void rs_projection_init(rs_projection *p, const mprof_render_model *m,
                        int kernel) {
  memset(p, 0, sizeof *p);
  p->kernel = kernel;
  p->track = mprof_render__launch_track(m, kernel);
  const mprof_render_kernel *k = rs_kernel(m, kernel);
  projection_shape(p, m, k);
  if (k && k->stats->samples) {
    double total = (double)k->stats->samples;
    p->share[0] = (double)(k->family[MPROF_FAM_MEMORY_LATENCY] +
                           k->family[MPROF_FAM_MEMORY_THROUGHPUT] +
                           k->family[MPROF_FAM_MIO]) /
                  total;
    p->share[1] =
        (double)(k->family[MPROF_FAM_COMPUTE] + k->family[MPROF_FAM_ISSUED]) /
        total;
    p->share[2] = 1.0 - p->share[0] - p->share[1];
    if (p->share[2] < 0)
      p->share[2] = 0;
    p->sampled = 1;
  }
}

/* The wave of launch @p launch at time @p t over @p sm_count SMs, into
 * @p c (not valid when the launch does not run then): ceil(grid / slots)
 * waves of equal length, the last one partial with its blocks on the
 * first SMs; *wave of *waves. */
static void wave_at(const rs_projection *p, const mprof_render_model *m,
                    int64_t launch, int64_t t, uint32_t sm_count,
                    rs_wave_column *c, uint64_t *wave, uint64_t *waves) {
  size_t launches;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &launches);
  const mprof_shape_record *sh = mprof_trace_shapes(m->trace, NULL);
  memset(c, 0, sizeof *c);
  if (launch < 0 || (size_t)launch >= launches)
    return;
  l += launch;
  int64_t start = rs_clamp_ns(l->start), end = rs_clamp_end(l->start, l->end);
  if (t < start || t >= end || end <= start)
    return;
  const mprof_shape_record *s = &sh[l->shape];
  uint64_t grid = (uint64_t)(s->grid[0] ? s->grid[0] : 1) *
                  (s->grid[1] ? s->grid[1] : 1) * (s->grid[2] ? s->grid[2] : 1);
  uint32_t sms = sm_count ? sm_count : 1;
  uint64_t slots = (uint64_t)sms * p->blocks_per_sm;
  *waves = (grid + slots - 1) / slots;
  if (!*waves)
    *waves = 1;
  /* Compared as a double first: *waves near 2^64 rounds up to it. */
  double at = (double)(t - start) / (double)(end - start) * (double)*waves;
  *wave = at < (double)*waves ? (uint64_t)at : *waves - 1;
  if (*wave >= *waves)
    *wave = *waves - 1;
  c->valid = 1;
  if (*wave + 1 < *waves) {
    c->full = 1;
    return;
  }
  uint64_t left = grid - (*waves - 1) * slots; /* blocks in the last wave */
  uint64_t each = left / sms;
  c->each = each > UINT32_MAX ? UINT32_MAX : (uint32_t)each;
  c->extra = (uint32_t)(left % sms);
}

uint32_t rs_projected_blocks(const rs_projection *p,
                             const mprof_render_model *m, uint32_t launch,
                             uint32_t sm, uint32_t sm_count, int64_t t,
                             uint32_t *wave_out, uint32_t *waves_out) {
  rs_wave_column c;
  uint64_t wave = 0, waves = 0;
  wave_at(p, m, launch, t, sm_count, &c, &wave, &waves);
  if (!c.valid)
    return 0;
  if (wave_out)
    *wave_out = (uint32_t)wave;
  if (waves_out)
    *waves_out = (uint32_t)(waves > UINT32_MAX ? UINT32_MAX : waves);
  return rs_wave_blocks(&c, p->blocks_per_sm, sm);
}

void rs_wave_columns(const rs_projection *p, const mprof_render_model *m,
                     const int64_t *launch_at, const int64_t *t, size_t n,
                     uint32_t sm_count, rs_wave_column *out) {
  for (size_t i = 0; i < n; i++) {
    uint64_t wave, waves;
    wave_at(p, m, launch_at[i], t[i], sm_count, &out[i], &wave, &waves);
  }
}

int64_t rs_projected_launch(const rs_projection *p, int64_t t) {
  if (!p->track)
    return -1;
  size_t i = rs_first_ending_after(p->track->max_end, 0, p->track->count, t);
  return i < p->track->count && p->track->start[i] <= t
             ? (int64_t)p->track->idx[i]
             : -1;
}

void rs_hit_projected(const rs_frame *f, size_t s, double x, int64_t t,
                      int kind, mprof_render_hit *hit) {
  size_t count;
  rs_psm *psm = frame_psms(f, &count);
  if (!psm)
    return;
  const rs_psm *sm = &psm[s];
  hit->device = sm->device;
  hit->sm = sm->sm;
  hit->kernel = sm->kernel;
  hit->kind = x < f->layout.left ? MPROF_HIT_LABEL : kind;
  rs_projection p;
  rs_projection_init(&p, f->model, sm->kernel);
  int64_t launch = x < f->layout.left ? -1 : rs_projected_launch(&p, t);
  if (launch >= 0) {
    uint32_t wave = 0, waves = 0;
    uint32_t blocks = rs_projected_blocks(
        &p, f->model, (uint32_t)launch, sm->sm, sm->sm_count, t, &wave, &waves);
    hit->launch = launch;
    hit->first = wave;
    hit->last = waves;
    hit->spans = blocks;
    hit->value = rs_projected_occupancy(&p, blocks);
    hit->kind = MPROF_HIT_PROJECTED;
  }
  free(psm);
}

double rs_projected_occupancy(const rs_projection *p, uint32_t blocks) {
  double warps = (double)blocks * p->warps_per_block;
  double occ = warps / (double)(p->max_warps ? p->max_warps : 1);
  return occ > 1 ? 1 : occ;
}

/* ---- tracks ---------------------------------------------------------- */

void rs_canvas_track(rs_canvas *cv, const rs_frame *f,
                     const mprof_render_track *track, const uint32_t *idx,
                     int y0, int y1) {
  size_t columns = (size_t)cv->w;
  mprof_render_column *cols = cv->cols;
  uint32_t *colors = cv->colors;
  mprof_render_track_cover(track, &f->map, columns, cols);
  const mprof_span_record *sp = mprof_trace_spans(f->model->trace, NULL);
  size_t c = 0;
  while (c < columns) {
    if (cols[c].item < 0) {
      colors[c++] = RS_NONE;
      continue;
    }
    size_t e = c + 1;
    while (e < columns && cols[e].item == cols[c].item &&
           cols[e].merged == cols[c].merged)
      e++;
    uint32_t rgb = rs_region_color(f->model, sp[idx[cols[c].item]].region);
    if (cols[c].merged)
      rgb = rd_lighten(rgb, 0.35);
    for (size_t k = c; k < e; k++)
      colors[k] = rgb;
    if (e - c >= 5 && !cols[c].merged)
      colors[c] = rd_darken(rgb, 0.3);
    c = e;
  }
  rs_canvas_columns(cv, colors, y0, y1);
}

/* The span of @p track (ids through @p idx) under column @p x, with a
 * pixel of slack; fills @p hit (SPAN, or SPANS when merged). 1 if found. */
int rs_hit_track(const rs_frame *f, const mprof_render_track *track,
                 const uint32_t *idx, double x, mprof_render_hit *hit) {
  double col = floor(x - f->layout.left);
  mprof_render_timemap map;
  mprof_render_timemap_init(
      &map, mprof_render_x_to_time(&f->map, f->layout.left + col - 1),
      mprof_render_x_to_time(&f->map, f->layout.left + col + 2), 0, 3);
  mprof_render_column cols[3];
  mprof_render_track_cover(track, &map, 3, cols);
  int pick = cols[1].item >= 0 ? 1 : (cols[0].item >= 0 ? 0 : 2);
  if (cols[pick].item < 0)
    return 0;
  hit->span = (int64_t)idx[cols[pick].item];
  hit->t0 = mprof_render_x_to_time(&f->map, f->layout.left + col);
  hit->t1 = mprof_render_x_to_time(&f->map, f->layout.left + col + 1);
  if (cols[pick].merged) {
    /* Spans that meet the column: starts before its end, minus those
     * whose running end is at or before its start. */
    size_t a;
    RS_LOWER_BOUND(a, 0, track->count, i, track->start[i] < hit->t1);
    size_t ended =
        rs_first_ending_after(track->max_end, 0, track->count, hit->t0);
    hit->spans = a > ended ? a - ended : 1;
    hit->kind = hit->spans > 1 ? MPROF_HIT_SPANS : MPROF_HIT_SPAN;
  } else {
    hit->kind = MPROF_HIT_SPAN;
    hit->spans = 1;
  }
  return 1;
}

/* Lane @p lane of @p lanes: its spans as a track, *idx their SPANS ids. */
static mprof_render_track lane_track(const rs_lanes *lanes,
                                     const rs_lane_set *set, uint32_t lane,
                                     const uint32_t **idx) {
  size_t a = lanes->first + set->lane_first[lanes->lane_at + lane];
  size_t b = lanes->first + set->lane_first[lanes->lane_at + lane + 1];
  mprof_render_track t = {set->start + a, set->end + a, b - a};
  *idx = set->idx + a;
  return t;
}

void rs_draw_lanes(rs_canvas *c, const rs_frame *f, const rs_lanes *lanes,
                   const rs_lane_set *set, int y0, double px) {
  if (!lanes->lanes)
    return;
  uint32_t shown = mprof_render_lanes_shown(lanes->lanes, px);
  double lane_h = px / shown;
  for (uint32_t l = 0; l < lanes->lanes; l++) {
    uint32_t d = l < shown ? l : shown - 1;
    const uint32_t *idx;
    mprof_render_track t = lane_track(lanes, set, l, &idx);
    int ly0 = y0 + (int)floor(d * lane_h);
    int ly1 = y0 + (int)floor((d + 1) * lane_h);
    if (ly1 - ly0 >= 4)
      ly1--; /* a gap between sub-lanes */
    rs_canvas_track(c, f, &t, idx, ly0, ly1 > ly0 ? ly1 : ly0 + 1);
  }
}

int rs_hit_lanes(const rs_frame *f, const rs_lanes *lanes,
                 const rs_lane_set *set, double px, double inside, double x,
                 mprof_render_hit *hit) {
  if (!lanes->lanes)
    return 0;
  uint32_t shown = mprof_render_lanes_shown(lanes->lanes, px);
  double lane_h = px / shown;
  uint32_t d = (uint32_t)fmax(0, floor(inside / lane_h));
  if (d >= shown)
    d = shown - 1;
  /* The last lane shown holds those that do not fit. */
  uint32_t to = d + 1 == shown ? lanes->lanes : d + 1;
  for (uint32_t lane = d; lane < to; lane++) {
    const uint32_t *idx;
    mprof_render_track t = lane_track(lanes, set, lane, &idx);
    if (rs_hit_track(f, &t, idx, x, hit))
      return 1;
  }
  return 0;
}

/* ---- rows and layout -------------------------------------------------- */

const rs_activity *rs_activity_of(const rs_frame *f) {
  if (!f->group)
    return NULL;
  return mprof_render__activity(f->model, (int)(f->group - f->model->groups),
                                f->view->activity_rows);
}

size_t mprof_render__activity_rows(const mprof_render_model *m,
                                   const mprof_render_view *view) {
  rs_frame f;
  rs_frame_init(&f, m, view, MPROF_RENDER_ACTIVITY, 1000, 1000);
  const rs_activity *a = rs_activity_of(&f);
  return a ? a->level[0].row_count : 0;
}

double mprof_render__activity_content(const mprof_render_model *m,
                                      const mprof_render_view *view, int tab,
                                      double width) {
  (void)tab;
  (void)width;
  if (!(view->activity_height > 0))
    return 0;
  return view->activity_height * (double)mprof_render__activity_rows(m, view);
}

double mprof_render__mega_content(const mprof_render_model *m,
                                  const mprof_render_view *view, int tab,
                                  double width) {
  (void)width;
  if (!(view->sm_height > 0))
    return 0;
  rs_frame f;
  rs_frame_init(&f, m, view, tab, 1000, 1000);
  return view->sm_height * (double)rs_frame_sm_count(&f);
}

int64_t mprof_render_span_origin(const mprof_render_model *m,
                                 const mprof_render_view *view) {
  return rs_span_origin(m, view->kernel);
}

void mprof_render_tab_layout(const mprof_render_model *model,
                             const mprof_render_view *view, int tab,
                             double width, double height,
                             mprof_render_layout *out) {
  if (mprof_render_tab_is_span(tab)) { /* under the header, over the axis */
    rs_frame f;
    rs_frame_init(&f, model, view, tab, width, height);
    *out = f.layout;
    return;
  }
  out->left = MPROF_RENDER_GUTTER;
  out->right = width > out->left + 1 ? width : out->left + 1;
  out->top = MPROF_RENDER_RULER;
  out->bottom = height > out->top + 1 ? height : out->top + 1;
}

void mprof_render_view_zoom_tab_rows(mprof_render_view *view,
                                     const mprof_render_model *model, int tab,
                                     double factor, double y, double rows_px) {
  if (tab == MPROF_RENDER_TRACE) {
    mprof_render_view_zoom_rows(view, factor, y);
    return;
  }
  double old = mprof_render_row_unit(model, view, tab, rows_px);
  double h = old * factor;
  double floor_px = tab == MPROF_RENDER_ACTIVITY ? 3.0 : 1.0;
  /* Never smaller than what fits: the fitted view is the zoomed-out end. */
  double *height =
      tab == MPROF_RENDER_ACTIVITY ? &view->activity_height : &view->sm_height;
  *height = 0;
  double fit = mprof_render_row_unit(model, view, tab, rows_px);
  if (h < fit)
    h = fit;
  if (h < floor_px)
    h = floor_px;
  if (h > 2000)
    h = 2000;
  double content_y = view->scroll_y + y;
  *height = h <= fit ? 0 : h;
  view->scroll_y = h <= fit ? 0 : content_y * (h / old) - y;
  if (view->scroll_y < 0)
    view->scroll_y = 0;
}
