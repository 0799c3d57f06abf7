/*
 * mprof-render — the Trace view's PM counter tracks: each counter as a filled
 * area, 0..100% of peak.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

uint32_t rs_counter_color(uint32_t counter) {
  switch (counter) {
  case MPROF_COUNTER_DRAM:
  case MPROF_COUNTER_L2:
    return mprof_render_family_color(MPROF_FAM_MEMORY_THROUGHPUT);
  case MPROF_COUNTER_TENSOR:
  case MPROF_COUNTER_FMA:
  case MPROF_COUNTER_ALU: return mprof_render_family_color(MPROF_FAM_COMPUTE);
  case MPROF_COUNTER_ISSUE: return mprof_render_family_color(MPROF_FAM_ISSUED);
  default: return mprof_render_family_color(MPROF_FAM_SCHEDULING);
  }
}

/* Raise the columns of [start, end) (at least one) to value @p v, kept
 * in 0..100; NaN (not measured) raises none. */
static void raise_columns(float *top, int width,
                          const mprof_render_timemap *map, double left,
                          int64_t start, int64_t end, float v) {
  if (isnan(v))
    return;
  v = v < 0 ? 0 : (v > 100 ? 100 : v);
  /* Held inside the strip before they become ints: a window far off the
   * view maps far off it. */
  double x0 = fmin(fmax(mprof_render_time_to_x(map, start) - left, 0), width);
  double x1 = fmax(fmin(mprof_render_time_to_x(map, end) - left, width), 0);
  int a = (int)floor(x0), e = (int)ceil(x1);
  if (e <= a)
    e = a + 1;
  for (int x = a; x < e && x < width; x++)
    if (v > top[x])
      top[x] = v;
}

/* A counter as a filled area, 0..100% of peak over the row's height: per
 * pixel column the highest window that meets it, so that a short burst
 * never vanishes when zoomed out. */
void rt_draw_counter(cairo_t *cr, const mprof_render_model *model,
                     const mprof_render_row *row,
                     const mprof_render_timemap *map, double y, double h,
                     double left, double right) {
  int width = (int)ceil(right - left), rows = (int)floor(h);
  if (width <= 0 || rows < 3 || row->column < 0)
    return;
  float *top = (float *)malloc((size_t)width * sizeof *top);
  if (!top)
    return;
  for (int x = 0; x < width; x++)
    top[x] = -1;
  row_items it = rt_items_of(model, row);
  size_t from = rt_first_reaching(&it, 0, map->start_ns);
  size_t to = rt_first_reaching(&it, from, map->end_ns);
  int bucketed =
      to - from > (size_t)(4 * width) && row->device != MPROF_INDEX_NONE;
  if (bucketed) {
    /* Many windows per pixel: the highest of each bucket of windows
     * instead, found once at open; a bucket's value covers its whole span
     * (at most a pixel or so past its highest window). */
    size_t first = model->pm_bucket_first[row->device];
    size_t b_end = model->pm_bucket_first[row->device + 1];
    for (size_t b = first + from / RS_PM_BUCKET; b < b_end; b++) {
      if (model->pm_bucket_start[b] > map->end_ns)
        break;
      raise_columns(
          top, width, map, left, model->pm_bucket_start[b],
          model->pm_bucket_end[b],
          model->pm_bucket_max[b * MPROF_PM_MAX_METRICS + row->column]);
    }
  }
  for (size_t i = bucketed ? row->count : from; i < row->count; i++) {
    const mprof_pm_sample_record *w = &it.pm[it.order[i]];
    if (rs_clamp_ns(w->start) > map->end_ns)
      break;
    raise_columns(top, width, map, left, rs_clamp_ns(w->start),
                  rs_clamp_ns(w->end), w->value[row->column]);
  }
  /* Painted pixel by pixel into a translucent strip laid over the row (a
   * path of thousands of jagged segments costs Cairo far more): the area
   * under each column's value, and its outline, a pixel wide, joining each
   * column's top to the previous one's. */
  cairo_surface_t *strip =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, rows);
  if (cairo_surface_status(strip) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(strip);
    free(top);
    return;
  }
  cairo_surface_flush(strip);
  unsigned char *data = cairo_image_surface_get_data(strip);
  int stride = cairo_image_surface_get_stride(strip);
  memset(data, 0, (size_t)stride * (size_t)rows);
  uint32_t color = rs_counter_color(row->counter);
  uint32_t line = rd_darken(color, 0.2);
  /* Premultiplied: the area at 45% opacity, the line opaque. */
  const double alpha = 0.45;
  uint32_t area = ((uint32_t)(alpha * 255 + 0.5) << 24) |
                  ((uint32_t)(((color >> 16) & 0xff) * alpha + 0.5) << 16) |
                  ((uint32_t)(((color >> 8) & 0xff) * alpha + 0.5) << 8) |
                  (uint32_t)((color & 0xff) * alpha + 0.5);
  uint32_t edge = 0xff000000u | line;
  double scale = (rows - 3) / 100.0;
  int base = rows - 1, prev = -1;
  for (int x = 0; x < width; x++) {
    if (top[x] < 0) {
      prev = -1;
      continue;
    }
    int ty = base - (int)lround(top[x] * scale);
    for (int yy = ty; yy <= base; yy++)
      ((uint32_t *)(data + (size_t)yy * (size_t)stride))[x] = area;
    int lo = ty, hi = ty;
    if (prev >= 0) {
      lo = prev < ty ? prev : ty;
      hi = prev > ty ? prev : ty;
    }
    for (int yy = lo; yy <= hi; yy++)
      ((uint32_t *)(data + (size_t)yy * (size_t)stride))[x] = edge;
    prev = ty;
  }
  cairo_surface_mark_dirty(strip);
  cairo_set_source_surface(cr, strip, left, y);
  cairo_paint(cr);
  cairo_surface_destroy(strip);
  free(top);
  /* The scale: 100% at the top. */
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 8.5, 0, 0);
  rd_text_right(cr, right - 3, y + 9, "100%");
}
