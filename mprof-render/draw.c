/*
 * mprof-render — the dispatcher: each tab's drawing, content height and
 * hit-testing, and PNG/SVG output. The top layer of the renderer: no other
 * file of it calls this one.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cairo-svg.h>

#include "render_internal.h"

/* ---- the dispatcher -----------------------------------------------------
 */

static const rs_tab_view *const tab_views[MPROF_RENDER_TAB_COUNT] = {
    [MPROF_RENDER_TRACE] = &rs_trace_tab,
    [MPROF_RENDER_SUMMARY] = &rs_summary_tab,
    [MPROF_RENDER_HOTSPOTS] = &rs_hotspots_tab,
    [MPROF_RENDER_FLAME] = &rs_lanes_tab,
    [MPROF_RENDER_RASTER] = &rs_lanes_tab,
    [MPROF_RENDER_MEGA] = &rs_mega_tab,
    [MPROF_RENDER_DENSITY] = &rs_density_tab,
    [MPROF_RENDER_ACTIVITY] = &rs_activity_tab,
    [MPROF_RENDER_SOURCE] = &rs_source_tab};

static const rs_tab_view *tab_view(int tab) {
  return tab >= 0 && tab < MPROF_RENDER_TAB_COUNT ? tab_views[tab] : NULL;
}

void mprof_render_draw(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_view *view, int tab, double width,
                       double height) {
  if (width < 1 || height < 1)
    return;
  cairo_save(cr);
  cairo_rectangle(cr, 0, 0, width, height);
  cairo_clip(cr);
  if (!model)
    mprof_render_draw_message(cr, width, height, "No trace", "");
  else if (!tab_view(tab))
    mprof_render_draw_message(cr, width, height, "Unknown view", "");
  else
    tab_view(tab)->draw(cr, model, view, tab, width, height);
  cairo_restore(cr);
}

double mprof_render_content_height(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   double width) {
  const rs_tab_view *t = tab_view(tab);
  return model && t && t->content ? t->content(model, view, tab, width) : 0;
}

void mprof_render_hit_test(const mprof_render_model *model,
                           const mprof_render_view *view, int tab, double width,
                           double height, double x, double y,
                           mprof_render_hit *hit) {
  memset(hit, 0, sizeof *hit);
  hit->kind = MPROF_HIT_NONE;
  hit->tab = tab;
  hit->row = -1;
  hit->launch = -1;
  hit->memop = -1;
  hit->kernel = -1;
  hit->pc = -1;
  hit->lane = -1;
  hit->span = -1;
  hit->device = MPROF_INDEX_NONE;
  hit->role = -1;
  hit->row_key = -1;
  hit->item = -1;
  const rs_tab_view *t = tab_view(tab);
  if (!model || !t || x < 0 || y < 0 || x >= width || y >= height)
    return;
  if (t->row_hit)
    rs_span_hit(t, model, view, tab, width, height, x, y, hit);
  else if (t->hit)
    t->hit(model, view, tab, width, height, x, y, hit);
}

/* ---- files ---------------------------------------------------------------
 */

static int has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), s = strlen(suffix);
  return n >= s && strcasecmp(path + n - s, suffix) == 0;
}

/* Draw @p tab on a new image surface; NULL with the error set. */
static cairo_surface_t *draw_image(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   int width, int height) {
  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_status_t status = cairo_surface_status(surface);
  if (status == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(surface);
    mprof_render_draw(cr, model, view, tab, width, height);
    status = cairo_status(cr);
    cairo_destroy(cr);
  }
  if (status != CAIRO_STATUS_SUCCESS) {
    mprof_render__fail("drawing: %s", cairo_status_to_string(status));
    cairo_surface_destroy(surface);
    return NULL;
  }
  return surface;
}

typedef struct png_buffer {
  unsigned char *data;
  size_t size, cap;
} png_buffer;

static cairo_status_t png_append(void *closure, const unsigned char *data,
                                 unsigned int length) {
  png_buffer *b = (png_buffer *)closure;
  if (b->size + length > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->size + length)
      cap *= 2;
    unsigned char *grown = (unsigned char *)realloc(b->data, cap);
    if (!grown)
      return CAIRO_STATUS_NO_MEMORY;
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->size, data, length);
  b->size += length;
  return CAIRO_STATUS_SUCCESS;
}

int mprof_render_write_png(const mprof_render_model *model,
                           const mprof_render_view *view, int tab, int width,
                           int height, unsigned char **out, size_t *size) {
  if (!model || !view || !out || !size)
    return mprof_render__fail("mprof_render_write_png: NULL argument");
  *out = NULL;
  *size = 0;
  if (width < 16 || height < 16 || width > 16384 || height > 16384)
    return mprof_render__fail("size %dx%d is out of range (16..16384)", width,
                              height);
  cairo_surface_t *surface = draw_image(model, view, tab, width, height);
  if (!surface)
    return -1;
  png_buffer b = {NULL, 0, 0};
  cairo_status_t status =
      cairo_surface_write_to_png_stream(surface, png_append, &b);
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    free(b.data);
    return mprof_render__fail("PNG: %s", cairo_status_to_string(status));
  }
  *out = b.data;
  *size = b.size;
  return 0;
}

int mprof_render_write(const mprof_render_model *model,
                       const mprof_render_view *view, int tab, int width,
                       int height, const char *path) {
  if (!model || !view || !path)
    return mprof_render__fail("mprof_render_write: NULL argument");
  if (width < 16 || height < 16 || width > 16384 || height > 16384)
    return mprof_render__fail("%s: size %dx%d is out of range (16..16384)",
                              path, width, height);
  int svg = has_suffix(path, ".svg");
  if (!svg && !has_suffix(path, ".png"))
    return mprof_render__fail("%s: the file name must end in .png or .svg",
                              path);
  /* Check that the file can be written before drawing anything: Cairo's
   * own messages do not name the file. */
  FILE *probe = fopen(path, "wb");
  if (!probe)
    return mprof_render__fail("%s: cannot write: %s", path, strerror(errno));
  fclose(probe);
  if (!svg) {
    cairo_surface_t *image = draw_image(model, view, tab, width, height);
    if (!image) {
      char why[512];
      snprintf(why, sizeof why, "%s", mprof_render_error());
      return mprof_render__fail("%s: %s", path, why);
    }
    cairo_status_t status = cairo_surface_write_to_png(image, path);
    cairo_surface_destroy(image);
    if (status != CAIRO_STATUS_SUCCESS)
      return mprof_render__fail("%s: %s", path, cairo_status_to_string(status));
    return 0;
  }
  /* Cairo writes the SVG into memory; its text markers become <text>
   * elements on the way to the file (rd_svg_text_begin). */
  png_buffer b = {NULL, 0, 0};
  cairo_surface_t *surface =
      cairo_svg_surface_create_for_stream(png_append, &b, width, height);
  cairo_status_t status = cairo_surface_status(surface);
  if (status == CAIRO_STATUS_SUCCESS && rd_svg_text_begin(surface)) {
    cairo_surface_destroy(surface);
    free(b.data);
    return -1;
  }
  if (status == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(surface);
    mprof_render_draw(cr, model, view, tab, width, height);
    status = cairo_status(cr);
    cairo_destroy(cr);
  }
  if (status == CAIRO_STATUS_SUCCESS) {
    cairo_surface_finish(surface);
    status = cairo_surface_status(surface);
  }
  int rc = 0;
  if (status != CAIRO_STATUS_SUCCESS) {
    rc = mprof_render__fail("%s: %s", path, cairo_status_to_string(status));
  } else {
    FILE *out = fopen(path, "wb");
    if (!out ||
        rd_svg_text_finish(surface, (const char *)b.data, b.size, out) ||
        fclose(out)) {
      int err = errno;
      rc = mprof_render__fail("%s: cannot write: %s", path, strerror(err));
      out = NULL;
    }
  }
  cairo_surface_destroy(surface);
  free(b.data);
  return rc;
}
