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

uint32_t rs_gpu_tint(uint32_t gpu, uint32_t sm) {
  uint32_t tint = gpu_tints[gpu % 8];
  return sm % 2 ? rd_darken(tint, 0.035) : tint;
}

/* ---- the pixel buffer ---------------------------------------------------- */

int rs_canvas_init(rs_canvas *c, double width, double height, uint32_t bg) {
  memset(c, 0, sizeof *c);
  c->w = (int)ceil(width);
  c->h = (int)ceil(height);
  if (c->w <= 0 || c->h <= 0)
    return -1;
  c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->w, c->h);
  if (cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(c->surface);
    c->surface = NULL;
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
}

/* Column colours from a cover: the item's colour, lighter where merged, a
 * darker first column on bars at least 5 px wide. */
void rs_cover_colors(const mprof_render_column *cols, size_t n,
                     uint32_t (*color_of)(int64_t item, void *data), void *data,
                     uint32_t *out) {
  size_t c = 0;
  while (c < n) {
    if (cols[c].item < 0) {
      out[c++] = RS_NONE;
      continue;
    }
    size_t e = c + 1;
    while (e < n && cols[e].item == cols[c].item &&
           cols[e].merged == cols[c].merged)
      e++;
    uint32_t rgb = color_of(cols[c].item, data);
    if (cols[c].merged)
      rgb = rd_lighten(rgb, 0.35);
    for (size_t k = c; k < e; k++)
      out[k] = rgb;
    if (e - c >= 5 && !cols[c].merged)
      out[c] = rd_darken(rgb, 0.3);
    c = e;
  }
}

/* ---- the header, banners and axis ---------------------------------------- */

#define HEADER 46.0
#define BANNER 24.0

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
  if (!f->group && view->kernel < 0 && m->none_group >= 0)
    f->group = &m->groups[m->none_group];
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
  if (f->group)
    f->origin = f->group->start_ns;
  else {
    const rs_launch_track *t = mprof_render__launch_track(m, view->kernel);
    int64_t origin, end;
    mprof_render_model_bounds(m, &origin, &end);
    f->origin = t ? t->start[0] : origin;
  }
}

/* One line of text in a banner across the width. */
static void banner(cairo_t *cr, double y, double width, uint32_t bg,
                   uint32_t fg, const char *bold, const char *text) {
  rd_fill_rect(cr, 0, y, width, BANNER, bg);
  rd_hline(cr, 0, width, y + BANNER - 1, rd_darken(bg, 0.2));
  rd_rgb(cr, fg);
  rd_font(cr, 12, 1, 0);
  double w = rd_text(cr, 10, y + 16, bold);
  rd_font(cr, 12, 0, 0);
  rd_text_fit(cr, 10 + w + 6, y + 16, width - w - 26, text);
}

double mprof_render__span_header(cairo_t *cr, const mprof_render_model *m,
                                 const mprof_render_view *view, int tab,
                                 double width, int draw) {
  rs_frame f;
  rs_frame_init(&f, m, view, tab, width, 1000);
  if (!draw || !cr)
    return f.layout.top;
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_PANEL);
  rd_hline(cr, 0, width, HEADER - 1, RD_RULE);
  const mprof_render_kernel *k =
      view->kernel >= 0 ? mprof_render_kernel_at(m, (size_t)view->kernel)
                        : NULL;
  char name[512], title[768], count[32], info[512];
  snprintf(title, sizeof title, "%s \u2014 %s", mprof_render_tab_title(tab),
           k ? rd_short_name(name, sizeof name, k->name)
             : (f.group ? "spans of no launch" : "no kernel"));
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 14, 1, 0);
  rd_text_fit(cr, 12, 19, width - 24, title);
  const char *source = mprof_trace_meta(m->trace, "capture.mode");
  if (f.group) {
    char gpus[32] = "";
    rd_format_count(count, sizeof count, f.group->span_count);
    if (f.group->gpu_count > 1)
      snprintf(gpus, sizeof gpus, " of %u GPUs", f.group->gpu_count);
    snprintf(info, sizeof info, "%s: %s spans on %zu SMs%s \u00b7 %s",
             f.demo ? "synthetic" : "measured", count, f.group->sm_count, gpus,
             source && strcmp(source, "mkprof") == 0 ? "imported from MKPROF"
             : f.demo                                ? "synthetic demo"
                      : "source instrumentation");
  } else {
    snprintf(
        info, sizeof info,
        "projected from %s launches and PC samples (the trace has no "
        "activity spans for this kernel)",
        k ? (rd_format_count(count, sizeof count, k->stats->launches), count)
          : "0");
  }
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11, 0, 0);
  rd_text_fit(cr, 12, 37, width * 0.55, info);
  double y = HEADER;
  if (f.projected) {
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
               "record source` or open a .mkprof.");
    banner(cr, y, width, RS_BANNER_PROJECTED, 0x5a3d00,
           "Projected from PC samples, not measured.", text);
    y += BANNER;
  } else if (f.demo) {
    banner(cr, y, width, RS_BANNER_DEMO, 0x2f1d5c, "Synthetic demo data.",
           "Generated by `mprof --demo-activity` (mprof synth: 8 SMs, 2 "
           "blocks each at a time, 4 warps per block, phases with "
           "instructions inside); not recorded on a GPU.");
    y += BANNER;
  }
  return y;
}

size_t mprof_render__tick_xs(const mprof_render_timemap *map, int64_t origin,
                             int *xs, size_t max) {
  int64_t step = mprof_render_tick_step(map, 110);
  int64_t rel = map->start_ns - origin;
  int64_t first = rel / step * step;
  if (first < rel)
    first += step;
  size_t n = 0;
  for (int64_t t = first; origin + t <= map->end_ns && n < max; t += step) {
    double x = floor(mprof_render_time_to_x(map, origin + t));
    if (x >= map->x)
      xs[n++] = (int)x;
  }
  return n;
}

static void format_tick(char *buf, size_t size, int64_t offset, int64_t step) {
  double magnitude = fmax(fabs((double)offset), (double)step);
  double unit = 1;
  const char *name = "ns";
  if (magnitude >= 1e9) {
    unit = 1e9;
    name = "s";
  } else if (magnitude >= 1e6) {
    unit = 1e6;
    name = "ms";
  } else if (magnitude >= 1e3) {
    unit = 1e3;
    name = "\u00b5s";
  }
  int decimals = 0;
  double s = (double)step / unit;
  while (s < 0.999 && decimals < 9) {
    s *= 10;
    decimals++;
  }
  snprintf(buf, size, "%s%.*f %s", offset < 0 ? "-" : "+", decimals,
           fabs((double)offset) / unit, name);
}

void mprof_render__time_axis(cairo_t *cr, const mprof_render_timemap *map,
                             int64_t origin, double left, double right,
                             double y, double width) {
  rd_fill_rect(cr, 0, y, width, RS_AXIS, RD_PANEL);
  rd_hline(cr, 0, width, y, RD_RULE);
  int64_t step = mprof_render_tick_step(map, 110);
  int64_t rel = map->start_ns - origin;
  int64_t first = rel / step * step;
  if (first < rel)
    first += step;
  rd_font(cr, 10.5, 0, 0);
  for (int64_t t = first; origin + t <= map->end_ns; t += step) {
    double x = floor(mprof_render_time_to_x(map, origin + t));
    if (x < left || x >= right)
      continue;
    rd_rgb(cr, RD_TEXT_DIM);
    cairo_rectangle(cr, x, y + 1, 1, 6);
    cairo_fill(cr);
    char label[48];
    format_tick(label, sizeof label, t, step);
    rd_rgb(cr, RD_TEXT);
    rd_text(cr, x + 3, y + 18, label);
  }
  char span[48], text[96];
  mprof_render_format_duration(span, sizeof span,
                               (double)(map->end_ns - map->start_ns));
  snprintf(text, sizeof text, "%s visible", span);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_text_fit(cr, 6, y + 18, left - 10, text);
}

/* ---- SMs of a frame --------------------------------------------------------
 */

/* The SMs a projection covers: every SM of each device the kernel's name
 * ran on. */
size_t rs_projected_sms(const mprof_render_model *m, int kernel, rs_psm *out,
                        size_t max) {
  const mprof_render_kernel *k =
      kernel >= 0 ? mprof_render_kernel_at(m, (size_t)kernel) : NULL;
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
          strcmp(m->kernels[i].stats->mangled, k->stats->mangled) == 0)
        kd = (int)i;
    if (kd < 0 || !m->kernels[kd].stats->launches)
      continue;
    uint32_t sms = dev[d].sm_count ? dev[d].sm_count : 1;
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
  return rs_projected_sms(f->model, f->kernel, NULL, 0);
}

double mprof_render__row_unit(const mprof_render_model *m,
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

/* Row units of a band: separator 0.5, loader 1, consumer 2, storer 1,
 * other 1. */
static const double row_units[RS_ROWS] = {0.5, 1, 2, 1, 1};

/* The rows a band shows, and their y offsets in units. */
size_t rs_band_rows(const rs_group *g, int *rows, double *offset,
                    double *units) {
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
  *units = at;
  return n;
}

static const char *row_title(int row, int projected) {
  static const char *const measured[RS_ROWS] = {"separator", "loader",
                                                "consumer", "storer", "other"};
  static const char *const guessed[RS_ROWS] = {"launch", "memory", "compute",
                                               "sync & other", ""};
  return projected ? guessed[row] : measured[row];
}

/* ---- projection ------------------------------------------------------------
 */

/* Blocks per SM, warps per block and max warps of a kernel's main shape. */
static void projection_shape(const mprof_render_model *m, int kernel,
                             uint32_t *blocks_per_sm, uint32_t *warps_per_block,
                             uint32_t *max_warps) {
  *blocks_per_sm = 1;
  *warps_per_block = 1;
  *max_warps = 1;
  const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)kernel);
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
  *warps_per_block = (uint32_t)((threads + warp - 1) / warp);
  *max_warps = d && d->max_warps_per_sm     ? d->max_warps_per_sm
               : d && d->max_threads_per_sm ? d->max_threads_per_sm / warp
                                            : 64;
  mprof_occupancy occ;
  if (d && mprof_occupancy_compute(&occ, d, k->shape) == 0 && occ.known &&
      occ.blocks_per_sm) {
    *blocks_per_sm = occ.blocks_per_sm;
    return;
  }
  uint32_t by_warps = *max_warps / (*warps_per_block ? *warps_per_block : 1);
  *blocks_per_sm = by_warps ? by_warps : 1;
}

void rs_projection_init(rs_projection *p, const mprof_render_model *m,
                        int kernel) {
  memset(p, 0, sizeof *p);
  p->kernel = kernel;
  p->track = mprof_render__launch_track(m, kernel);
  projection_shape(m, kernel, &p->blocks_per_sm, &p->warps_per_block,
                   &p->max_warps);
  const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)kernel);
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

/* Blocks of launch @p launch on SM @p sm of @p sm_count at time @p t:
 * ceil(grid / slots) waves of equal length; the last one partial, its
 * blocks on the first SMs. */
uint32_t rs_projected_blocks(const rs_projection *p,
                             const mprof_render_model *m, uint32_t launch,
                             uint32_t sm, uint32_t sm_count, int64_t t,
                             uint32_t *wave_out, uint32_t *waves_out) {
  size_t n, shapes;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  const mprof_shape_record *sh = mprof_trace_shapes(m->trace, &shapes);
  if (launch >= n)
    return 0;
  l += launch;
  int64_t start = (int64_t)l->start, end = (int64_t)l->end;
  if (t < start || t >= end || end <= start)
    return 0;
  const mprof_shape_record *s = &sh[l->shape];
  uint64_t grid = (uint64_t)(s->grid[0] ? s->grid[0] : 1) *
                  (s->grid[1] ? s->grid[1] : 1) * (s->grid[2] ? s->grid[2] : 1);
  uint64_t slots = (uint64_t)sm_count * p->blocks_per_sm;
  uint64_t waves = (grid + slots - 1) / slots;
  if (!waves)
    waves = 1;
  uint64_t wave =
      (uint64_t)((double)(t - start) / (double)(end - start) * (double)waves);
  if (wave >= waves)
    wave = waves - 1;
  if (wave_out)
    *wave_out = (uint32_t)wave;
  if (waves_out)
    *waves_out = (uint32_t)(waves > UINT32_MAX ? UINT32_MAX : waves);
  if (wave + 1 < waves)
    return p->blocks_per_sm;
  uint64_t left = grid - (waves - 1) * slots; /* blocks in the last wave */
  uint64_t each = left / sm_count, extra = left % sm_count;
  uint64_t blocks = each + (sm < extra ? 1 : 0);
  return (uint32_t)(blocks > p->blocks_per_sm ? p->blocks_per_sm : blocks);
}

void rs_wave_columns(const rs_projection *p, const mprof_render_model *m,
                     const int64_t *launch_at, const int64_t *t, size_t n,
                     uint32_t sm_count, rs_wave_column *out) {
  size_t launches, shapes;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &launches);
  const mprof_shape_record *sh = mprof_trace_shapes(m->trace, &shapes);
  uint64_t slots = (uint64_t)(sm_count ? sm_count : 1) * p->blocks_per_sm;
  for (size_t i = 0; i < n; i++) {
    rs_wave_column *c = &out[i];
    memset(c, 0, sizeof *c);
    if (launch_at[i] < 0 || (size_t)launch_at[i] >= launches)
      continue;
    const mprof_launch_record *x = &l[launch_at[i]];
    int64_t start = (int64_t)x->start, end = (int64_t)x->end;
    if (t[i] < start || t[i] >= end || end <= start)
      continue;
    const mprof_shape_record *s = &sh[x->shape];
    uint64_t grid = (uint64_t)(s->grid[0] ? s->grid[0] : 1) *
                    (s->grid[1] ? s->grid[1] : 1) *
                    (s->grid[2] ? s->grid[2] : 1);
    uint64_t waves = (grid + slots - 1) / slots;
    if (!waves)
      waves = 1;
    uint64_t wave = (uint64_t)((double)(t[i] - start) / (double)(end - start) *
                               (double)waves);
    c->valid = 1;
    if (wave + 1 < waves) {
      c->full = 1;
      continue;
    }
    uint64_t left = grid - (waves - 1) * slots;
    uint64_t each = left / (sm_count ? sm_count : 1);
    c->each = each > UINT32_MAX ? UINT32_MAX : (uint32_t)each;
    c->extra = (uint32_t)(left % (sm_count ? sm_count : 1));
  }
}

double rs_projected_occupancy(const rs_projection *p, uint32_t blocks) {
  double warps = (double)blocks * p->warps_per_block;
  double occ = warps / (double)(p->max_warps ? p->max_warps : 1);
  return occ > 1 ? 1 : occ;
}

/* ---- drawing --------------------------------------------------------------
 */

typedef struct color_ctx {
  const mprof_render_model *m;
  const uint32_t *idx; /* track index -> SPANS index */
} color_ctx;

static uint32_t span_color(int64_t item, void *data) {
  const color_ctx *c = (const color_ctx *)data;
  const mprof_span_record *sp = mprof_trace_spans(c->m->trace, NULL);
  return rs_region_color(c->m, sp[c->idx[item]].region);
}

/* Cover one track into @p colors (RS_NONE where nothing), via @p cols. */
void rs_track_colors(const rs_frame *f, const mprof_render_track *track,
                     const uint32_t *idx, size_t columns,
                     mprof_render_column *cols, uint32_t *colors) {
  mprof_render_track_cover(track, &f->map, columns, cols);
  color_ctx ctx = {f->model, idx};
  rs_cover_colors(cols, columns, span_color, &ctx, colors);
}

/* Grid lines into a background row of the canvas. */
static void grid_columns(rs_canvas *c, const int *xs, size_t n, int left,
                         int y0, int y1, uint32_t rgb) {
  for (size_t i = 0; i < n; i++)
    rs_canvas_fill(c, xs[i] - left, xs[i] - left + 1, y0, y1, rgb);
}

static void draw_measured(rs_canvas *c, const rs_frame *f, double band,
                          int detailed, size_t first, size_t last,
                          const int *grid, size_t grid_count) {
  const rs_group *g = f->group;
  size_t columns = (size_t)c->w;
  mprof_render_column *cols =
      (mprof_render_column *)malloc(columns * sizeof *cols);
  uint32_t *colors = (uint32_t *)malloc(columns * sizeof *colors);
  if (!cols || !colors) {
    free(cols);
    free(colors);
    return;
  }
  int rows[RS_ROWS];
  double offset[RS_ROWS], units;
  size_t row_count = rs_band_rows(g, rows, offset, &units);
  double unit = band / units;
  double y_base = -f->view->scroll_y;
  int left = (int)f->layout.left;
  for (size_t s = first; s < last; s++) {
    const rs_sm *sm = &g->sms[s];
    double y = y_base + (double)s * band;
    int y0 = (int)floor(y), y1 = (int)floor(y + band);
    uint32_t tint = rs_gpu_tint(sm->gpu, sm->sm);
    rs_canvas_fill(c, 0, c->w, y0, y1, tint);
    grid_columns(c, grid, grid_count, left, y0, y1, rd_darken(tint, 0.06));
    if (!detailed) {
      mprof_render_track t = {g->all_start + sm->first,
                              g->all_max_end + sm->first, sm->count};
      rs_track_colors(f, &t, g->all_idx + sm->first, columns, cols, colors);
      int pad = band >= 4 ? 1 : 0;
      rs_canvas_columns(c, colors, y0 + pad, y1 - (band >= 6 ? 1 : 0));
      continue;
    }
    for (size_t r = 0; r < row_count; r++) {
      const rs_lanes *lanes = &sm->rows[rows[r]];
      int ry0 = (int)floor(y + offset[r] * unit);
      int ry1 = (int)floor(y + (offset[r] + row_units[rows[r]]) * unit);
      if (rows[r] == RS_SEPARATOR)
        rs_canvas_fill(c, 0, c->w, ry0, ry1, rd_darken(tint, 0.12));
      if (!lanes->lanes)
        continue;
      double row_px = ry1 - ry0;
      uint32_t shown = mprof_render_lanes_shown(lanes->lanes, row_px - 1);
      double lane_h = (row_px - 1) / shown;
      for (uint32_t l = 0; l < lanes->lanes; l++) {
        uint32_t d = l < shown ? l : shown - 1;
        mprof_render_track t =
            rs_lane_track(lanes, g->lane_first, g->row_start, g->row_end, l);
        size_t at = lanes->first + g->lane_first[lanes->lane_at + l];
        rs_track_colors(f, &t, g->row_idx + at, columns, cols, colors);
        int ly0 = ry0 + (int)floor(d * lane_h);
        int ly1 = ry0 + (int)floor((d + 1) * lane_h);
        if (ly1 - ly0 >= 4)
          ly1--; /* a gap between sub-lanes */
        rs_canvas_columns(c, colors, ly0, ly1 > ly0 ? ly1 : ly0 + 1);
      }
    }
  }
  free(cols);
  free(colors);
}

static void draw_projected(rs_canvas *c, const rs_frame *f, double band,
                           int detailed, const rs_psm *sms, size_t first,
                           size_t last, const int *grid, size_t grid_count) {
  const mprof_render_model *m = f->model;
  size_t columns = (size_t)c->w;
  mprof_render_column *cols =
      (mprof_render_column *)malloc(columns * sizeof *cols);
  uint32_t *colors = (uint32_t *)malloc(columns * sizeof *colors);
  int64_t *launch_at = (int64_t *)malloc(columns * sizeof *launch_at);
  int64_t *mid = (int64_t *)malloc(columns * sizeof *mid);
  rs_wave_column *waves = (rs_wave_column *)malloc(columns * sizeof *waves);
  uint32_t *bar = (uint32_t *)malloc(columns * sizeof *bar);
  if (!cols || !colors || !launch_at || !mid || !waves || !bar) {
    free(cols);
    free(colors);
    free(launch_at);
    free(mid);
    free(waves);
    free(bar);
    return;
  }
  for (size_t x = 0; x < columns; x++)
    mid[x] = mprof_render_x_to_time(&f->map, f->layout.left + x + 0.5);
  /* Colours by blocks on the SM, 0..blocks per SM. */
  uint32_t shade[257];
  int rows[RS_ROWS];
  double offset[RS_ROWS], units;
  size_t row_count = rs_band_rows(NULL, rows, offset, &units);
  double unit = band / units;
  double y_base = -f->view->scroll_y;
  int left = (int)f->layout.left;
  static const uint32_t family_of_row[RS_ROWS] = {
      0, 0xb04a3c /* memory */, 0x3f7fbf /* compute */, 0x8a63b8 /* sync */, 0};
  int current_kernel = -2;
  rs_projection p;
  memset(&p, 0, sizeof p);
  for (size_t s = first; s < last; s++) {
    const rs_psm *sm = &sms[s];
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
    grid_columns(c, grid, grid_count, left, y0, y1, rd_darken(tint, 0.06));
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
        for (size_t r = 0; r < row_count; r++)
          if (rows[r] == RS_CONSUMER)
            rs_canvas_columns(
                c, colors, (int)floor(y + offset[r] * unit),
                (int)floor(y + (offset[r] + row_units[rows[r]]) * unit) - 1);
      }
      continue;
    }
    /* Rows: the launch in the separator, then memory / compute / other
     * bars as tall as their share of the kernel's samples. */
    for (size_t r = 0; r < row_count; r++) {
      int ry0 = (int)floor(y + offset[r] * unit);
      int ry1 = (int)floor(y + (offset[r] + row_units[rows[r]]) * unit);
      if (rows[r] == RS_SEPARATOR) {
        rs_canvas_fill(c, 0, c->w, ry0, ry1, rd_darken(tint, 0.12));
        uint32_t launch_rgb = rd_lighten(k ? k->color : 0x888888, 0.3);
        for (size_t x = 0; x < columns; x++)
          bar[x] = launch_at[x] >= 0 ? launch_rgb : RS_NONE;
        rs_canvas_columns(c, bar, ry0, ry1);
        continue;
      }
      /* As strong as the share: a faint bar for a rare stall. */
      double share = p.share[rows[r] - 1];
      uint32_t rgb = rd_lighten(family_of_row[rows[r]], 0.85 * (1.0 - share));
      for (size_t x = 0; x < columns; x++)
        bar[x] = colors[x] == RS_NONE ? RS_NONE : rgb;
      rs_canvas_columns(c, bar, ry0, ry1 - 1 > ry0 ? ry1 - 1 : ry1);
    }
  }
  free(cols);
  free(colors);
  free(launch_at);
  free(mid);
  free(waves);
  free(bar);
}

/* Labels in the gutter: SMs (and their rows when there is room). */
static void draw_labels(cairo_t *cr, const rs_frame *f, double band,
                        int detailed, size_t first, size_t last,
                        const rs_psm *psm) {
  const mprof_render_layout *l = &f->layout;
  rd_fill_rect(cr, 0, l->top, l->left, l->bottom - l->top, RD_PANEL);
  rd_vline(cr, l->left - 1, l->top, l->bottom, RD_RULE);
  cairo_save(cr);
  cairo_rectangle(cr, 0, l->top, l->left - 1, l->bottom - l->top);
  cairo_clip(cr);
  int rows[RS_ROWS];
  double offset[RS_ROWS], units;
  size_t row_count = rs_band_rows(f->group, rows, offset, &units);
  double unit = band / units;
  double label_every = band >= 12 ? 1 : ceil(13.0 / band);
  uint32_t gpu_count = f->group ? f->group->gpu_count : 0;
  if (!f->group)
    for (size_t s = 0; psm && s < last; s++)
      gpu_count = psm[s].gpu + 1 > gpu_count ? psm[s].gpu + 1 : gpu_count;
  for (size_t s = first; s < last; s++) {
    uint32_t gpu = f->group ? f->group->sms[s].gpu : psm[s].gpu;
    uint32_t sm = f->group ? f->group->sms[s].sm : psm[s].sm;
    double y = l->top - f->view->scroll_y + (double)s * band;
    /* A GPU's colour chip down its bands. */
    rd_fill_rect(cr, 2, floor(y), 5, ceil(band),
                 rd_darken(gpu_tints[gpu % 8], 0.25));
    if (fmod((double)s, label_every) != 0 && band < 12)
      continue;
    char text[64];
    rs_sm_label(text, sizeof text, gpu_count, gpu, sm);
    double fs = fmin(11.0, fmax(8.0, band - 2));
    rd_rgb(cr, RD_TEXT);
    rd_font(cr, fs, 0, 0);
    double ty = band >= 12 ? y + fmin(band, 24) / 2 + 4 : y + band / 2 + 4;
    rd_text_fit(cr, 12, ty, 70, text);
    if (!detailed || unit < 9)
      continue;
    rd_rgb(cr, RD_TEXT_DIM);
    rd_font(cr, fmin(10, unit * row_units[RS_CONSUMER] - 2), 0, 0);
    for (size_t r = 0; r < row_count; r++) {
      if (rows[r] == RS_SEPARATOR)
        continue;
      double ry = y + (offset[r] + row_units[rows[r]] / 2) * unit + 4;
      rd_text_right(cr, l->left - 8, ry, row_title(rows[r], f->projected));
    }
  }
  cairo_restore(cr);
}

/* The regions' colours in the header's second line, right of the info. */
static void draw_legend(cairo_t *cr, const rs_frame *f, double width) {
  const mprof_render_model *m = f->model;
  double x = width * 0.58, y = 37;
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
  size_t regions;
  const mprof_region_record *rg = mprof_trace_regions(m->trace, &regions);
  for (size_t r = 0; r < regions && x < width - 60; r++) {
    rd_fill_rect(cr, x, y - 9, 10, 10, rs_region_color(m, (uint32_t)r));
    rd_rgb(cr, RD_TEXT);
    x += 14 +
         rd_text_fit(cr, x + 14, y, width - x - 30,
                     mprof_trace_string(m->trace, rg[r].name)) +
         12;
  }
}

double mprof_render__mega_content(const mprof_render_model *m,
                                  const mprof_render_view *view, int tab) {
  if (!(view->sm_height > 0))
    return 0;
  rs_frame f;
  rs_frame_init(&f, m, view, tab, 1000, 1000);
  return view->sm_height * (double)rs_frame_sm_count(&f);
}

void mprof_render__draw_mega(cairo_t *cr, const mprof_render_model *m,
                             const mprof_render_view *view, double width,
                             double height) {
  if (view->kernel < 0 && m->none_group < 0) {
    rd_no_kernel(cr, width, height);
    return;
  }
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  rs_frame f;
  rs_frame_init(&f, m, view, MPROF_RENDER_MEGA, width, height);
  const mprof_render_layout *l = &f.layout;
  double rows_px = l->bottom - l->top;
  size_t sm_count = rs_frame_sm_count(&f);
  rs_psm *psm = NULL;
  if (f.projected && sm_count) {
    psm = (rs_psm *)malloc(sm_count * sizeof *psm);
    if (!psm)
      return;
    rs_projected_sms(m, f.kernel, psm, sm_count);
  }
  if (!sm_count) {
    mprof_render__span_header(cr, m, view, MPROF_RENDER_MEGA, width, 1);
    rd_rgb(cr, RD_TEXT_DIM);
    rd_font(cr, 13, 0, 0);
    rd_text_fit(cr, 24, l->top + 40, width - 48,
                "Nothing to project: this kernel has no launches.");
    free(psm);
    return;
  }
  double band = mprof_render__row_unit(m, view, MPROF_RENDER_MEGA, rows_px);
  int rows[RS_ROWS];
  double offset[RS_ROWS], units;
  rs_band_rows(f.group, rows, offset, &units);
  int detailed = mprof_render_mega_detailed(band, units);
  size_t first = (size_t)fmax(0, floor(view->scroll_y / band));
  size_t last = (size_t)fmax(0, ceil((view->scroll_y + rows_px) / band));
  if (last > sm_count)
    last = sm_count;
  rs_canvas c;
  if (rs_canvas_init(&c, l->right - l->left, rows_px, RD_BACKGROUND) == 0) {
    int grid[64];
    size_t grid_count = mprof_render__tick_xs(&f.map, f.origin, grid, 64);
    grid_columns(&c, grid, grid_count, (int)l->left, 0, c.h, 0xe3e5ea);
    if (f.group)
      draw_measured(&c, &f, band, detailed, first, last, grid, grid_count);
    else
      draw_projected(&c, &f, band, detailed, psm, first, last, grid,
                     grid_count);
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
      cairo_rectangle(cr, x0, l->top, x1 - x0, rows_px);
      cairo_fill(cr);
    }
  }
  draw_labels(cr, &f, band, detailed, first, last, psm);
  mprof_render__span_header(cr, m, view, MPROF_RENDER_MEGA, width, 1);
  draw_legend(cr, &f, width);
  /* How it is drawn, for the reader. */
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 0);
  rd_text_right(cr, width - 10, 19,
                detailed ? "rows per SM (zoom rows out: one bar per SM)"
                         : "one bar per SM (Ctrl+wheel: rows per SM)");
  mprof_render__time_axis(cr, &f.map, f.origin, l->left, l->right, l->bottom,
                          width);
  free(psm);
}

/* ---- hit-testing -----------------------------------------------------------
 */

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
    size_t a = 0, b = track->count;
    while (a < b) {
      size_t mid = a + (b - a) / 2;
      if (track->start[mid] < hit->t1)
        a = mid + 1;
      else
        b = mid;
    }
    size_t starts_before = a;
    a = 0;
    b = track->count;
    while (a < b) {
      size_t mid = a + (b - a) / 2;
      if (track->max_end[mid] <= hit->t0)
        a = mid + 1;
      else
        b = mid;
    }
    hit->spans = starts_before > a ? starts_before - a : 1;
    hit->kind = hit->spans > 1 ? MPROF_HIT_SPANS : MPROF_HIT_SPAN;
  } else {
    hit->kind = MPROF_HIT_SPAN;
    hit->spans = 1;
  }
  return 1;
}

void mprof_render__hit_mega(const mprof_render_model *m,
                            const mprof_render_view *view, double width,
                            double height, double x, double y,
                            mprof_render_hit *hit) {
  rs_frame f;
  rs_frame_init(&f, m, view, MPROF_RENDER_MEGA, width, height);
  const mprof_render_layout *l = &f.layout;
  hit->time_ns = mprof_render_x_to_time(&f.map, x);
  if (y < l->top || y >= l->bottom) {
    hit->kind =
        y >= l->bottom && x >= l->left ? MPROF_HIT_RULER : MPROF_HIT_NONE;
    return;
  }
  double rows_px = l->bottom - l->top;
  double band = mprof_render__row_unit(m, view, MPROF_RENDER_MEGA, rows_px);
  size_t sm_count = rs_frame_sm_count(&f);
  double content_y = y - l->top + view->scroll_y;
  size_t s = (size_t)floor(content_y / band);
  if (content_y < 0 || s >= sm_count)
    return;
  int rows[RS_ROWS];
  double offset[RS_ROWS], units;
  size_t row_count = rs_band_rows(f.group, rows, offset, &units);
  int detailed = mprof_render_mega_detailed(band, units);
  double in_band = content_y - (double)s * band;
  double unit = band / units;
  int row = -1;
  double row_y = 0, row_px = band;
  if (detailed)
    for (size_t r = 0; r < row_count; r++) {
      double a = floor(offset[r] * unit);
      double b = floor((offset[r] + row_units[rows[r]]) * unit);
      if (in_band >= a && in_band < b) {
        row = rows[r];
        row_y = a;
        row_px = b - a;
      }
    }
  hit->role = row < 0               ? -1
              : row == RS_SEPARATOR ? MPROF_ROLE_SEPARATOR
              : row == RS_LOADER    ? MPROF_ROLE_LOADER
              : row == RS_CONSUMER  ? MPROF_ROLE_CONSUMER
              : row == RS_STORER    ? MPROF_ROLE_STORER
                                    : MPROF_ROLE_OTHER;
  hit->t0 = hit->t1 = hit->time_ns;
  if (f.projected) {
    rs_psm *psm = (rs_psm *)malloc(sm_count * sizeof *psm);
    if (!psm)
      return;
    rs_projected_sms(m, f.kernel, psm, sm_count);
    hit->device = psm[s].device;
    hit->sm = psm[s].sm;
    hit->kernel = psm[s].kernel;
    hit->kind = x < l->left ? MPROF_HIT_LABEL : MPROF_HIT_SM;
    if (x >= l->left) {
      rs_projection p;
      rs_projection_init(&p, m, psm[s].kernel);
      if (p.track) {
        size_t i = rs_first_ending_after(p.track->max_end, 0, p.track->count,
                                         hit->time_ns);
        if (i < p.track->count && p.track->start[i] <= hit->time_ns) {
          uint32_t wave = 0, waves = 0;
          uint32_t blocks =
              rs_projected_blocks(&p, m, p.track->idx[i], psm[s].sm,
                                  psm[s].sm_count, hit->time_ns, &wave, &waves);
          hit->launch = p.track->idx[i];
          hit->first = wave;
          hit->last = waves;
          hit->value = rs_projected_occupancy(&p, blocks);
          hit->spans = blocks;
          hit->kind = MPROF_HIT_PROJECTED;
        }
      }
    }
    free(psm);
    return;
  }
  const rs_group *g = f.group;
  const rs_sm *sm = &g->sms[s];
  hit->device = sm->device;
  hit->sm = sm->sm;
  hit->kernel = view->kernel;
  hit->kind = x < l->left ? MPROF_HIT_LABEL : MPROF_HIT_SM;
  if (x < l->left)
    return;
  if (!detailed) {
    mprof_render_track t = {g->all_start + sm->first,
                            g->all_max_end + sm->first, sm->count};
    rs_hit_track(&f, &t, g->all_idx + sm->first, x, hit);
    return;
  }
  if (row < 0)
    return;
  const rs_lanes *lanes = &sm->rows[row];
  if (!lanes->lanes)
    return;
  uint32_t shown = mprof_render_lanes_shown(lanes->lanes, row_px - 1);
  double lane_h = (row_px - 1) / shown;
  uint32_t d = (uint32_t)fmax(0, floor((in_band - row_y) / lane_h));
  if (d >= shown)
    d = shown - 1;
  uint32_t to = d + 1 == shown ? lanes->lanes : d + 1;
  for (uint32_t lane = d; lane < to; lane++) {
    mprof_render_track t =
        rs_lane_track(lanes, g->lane_first, g->row_start, g->row_end, lane);
    size_t at = lanes->first + g->lane_first[lanes->lane_at + lane];
    if (rs_hit_track(&f, &t, g->row_idx + at, x, hit))
      return;
  }
}

/* ---- fitting the view ------------------------------------------------------
 */

void mprof_render_view_open_span_tab(mprof_render_view *view,
                                     const mprof_render_model *m,
                                     int keep_kernel) {
  if (!view || !m)
    return;
  if (!keep_kernel)
    view->kernel = mprof_render_span_kernel(m, view->kernel);
  mprof_render_view_fit_spans(view, m);
}

void mprof_render_view_fit_spans(mprof_render_view *view,
                                 const mprof_render_model *m) {
  if (!view || !m)
    return;
  int64_t a = 0, b = 0;
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  const rs_group *g = mprof_render__group(m, view->kernel);
  if (!g && view->kernel < 0 && m->none_group >= 0)
    g = &m->groups[m->none_group];
  const mprof_render_kernel *k =
      view->kernel >= 0 ? mprof_render_kernel_at(m, (size_t)view->kernel)
                        : NULL;
  int selected = -1;
  if (view->launch >= 0 && (size_t)view->launch < n && k) {
    int lk = mprof_render_launch_kernel(m, (size_t)view->launch);
    if (lk >= 0 &&
        strcmp(m->kernels[lk].stats->mangled, k->stats->mangled) == 0)
      selected = (int)view->launch;
  }
  if (selected >= 0) {
    a = (int64_t)l[selected].start;
    b = (int64_t)l[selected].end;
  } else if (g) {
    a = g->start_ns;
    b = g->end_ns;
  } else {
    /* Projected: the kernel's longest launch shows its waves. */
    const rs_launch_track *t = mprof_render__launch_track(m, view->kernel);
    uint64_t longest = 0;
    for (size_t i = 0; t && i < t->count; i++) {
      const mprof_launch_record *x = &l[t->idx[i]];
      if (x->end - x->start > longest || i == 0) {
        longest = x->end - x->start;
        a = (int64_t)x->start;
        b = (int64_t)x->end;
      }
    }
  }
  if (b <= a)
    return;
  int64_t margin = (b - a) / 40 + 1;
  mprof_render_limits limits;
  mprof_render_model_limits(m, &limits);
  view->start_ns = a - margin;
  view->end_ns = b + margin;
  mprof_render_view_clamp(view, &limits);
}

int64_t mprof_render_span_origin(const mprof_render_model *m,
                                 const mprof_render_view *view) {
  rs_frame f;
  rs_frame_init(&f, m, view, MPROF_RENDER_MEGA, 1000, 1000);
  return f.origin;
}

double mprof_render_row_unit(const mprof_render_model *m,
                             const mprof_render_view *view, int tab,
                             double rows_px) {
  return mprof_render__row_unit(m, view, tab, rows_px);
}
