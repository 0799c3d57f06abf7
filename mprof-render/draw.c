/*
 * mprof-render — drawing helpers, the view dispatcher, and PNG/SVG output.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cairo-svg.h>
#ifdef MPROF_RENDER_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

#include "render_internal.h"

/* ---- errors --------------------------------------------------------------
 */

static _Thread_local char error_message[1024];

const char *mprof_render_error(void) { return error_message; }

int mprof_render__fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_message, sizeof error_message, fmt, ap);
  va_end(ap);
  return -1;
}

void mprof_render_shutdown(void) {
  cairo_debug_reset_static_data();
#ifdef MPROF_RENDER_HAVE_FONTCONFIG
  FcFini();
#endif
}

/* ---- colours and text ---------------------------------------------------
 */

void rd_rgb(cairo_t *cr, uint32_t rgb) { rd_rgba(cr, rgb, 1.0); }

void rd_rgba(cairo_t *cr, uint32_t rgb, double alpha) {
  cairo_set_source_rgba(cr, ((rgb >> 16) & 0xff) / 255.0,
                        ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0,
                        alpha);
}

static uint32_t mix(uint32_t rgb, uint32_t with, double amount) {
  uint32_t out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    double a = (rgb >> shift) & 0xff, b = (with >> shift) & 0xff;
    uint32_t c = (uint32_t)lround(a + (b - a) * amount);
    out |= (c > 255 ? 255 : c) << shift;
  }
  return out;
}

uint32_t rd_lighten(uint32_t rgb, double amount) {
  return mix(rgb, 0xffffff, amount);
}

uint32_t rd_darken(uint32_t rgb, double amount) {
  return mix(rgb, 0x000000, amount);
}

void rd_font(cairo_t *cr, double size, int bold, int mono) {
  cairo_select_font_face(
      cr, mono ? RD_FONT_MONO : RD_FONT_SANS, CAIRO_FONT_SLANT_NORMAL,
      bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

double rd_text_width(cairo_t *cr, const char *text) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, text, &e);
  return e.x_advance;
}

double rd_text(cairo_t *cr, double x, double y, const char *text) {
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, text);
  return rd_text_width(cr, text);
}

double rd_text_right(cairo_t *cr, double right, double y, const char *text) {
  double w = rd_text_width(cr, text);
  cairo_move_to(cr, right - w, y);
  cairo_show_text(cr, text);
  return w;
}

/* Bytes of the UTF-8 prefix of @p text at most @p n bytes long that ends on
 * a character boundary. */
static size_t utf8_cut(const char *text, size_t n) {
  while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
    n--;
  return n;
}

double rd_text_fit(cairo_t *cr, double x, double y, double max_width,
                   const char *text) {
  if (max_width <= 0)
    return 0;
  double w = rd_text_width(cr, text);
  if (w <= max_width)
    return rd_text(cr, x, y, text);
  const char *ellipsis = "\u2026";
  double ew = rd_text_width(cr, ellipsis);
  if (ew > max_width)
    return 0;
  /* Guess the prefix from the average width of a byte, then step to the
   * longest that fits with the ellipsis: a few measurements, not a
   * bisection's worth. */
  char buf[512];
  size_t len = strlen(text);
  if (len > sizeof buf - 8)
    len = sizeof buf - 8;
  size_t n = (size_t)((max_width - ew) / (w / (double)strlen(text)));
  if (n > len)
    n = len;
  for (int step = 0;; step++) {
    size_t cut = utf8_cut(text, n);
    memcpy(buf, text, cut);
    strcpy(buf + cut, ellipsis);
    double bw = rd_text_width(cr, buf);
    if (bw > max_width) {
      if (n == 0)
        return 0;
      n = cut > 0 ? cut - 1 : 0; /* too long: shorten */
      continue;
    }
    /* Fits: one longer? (at most a few steps; the guess is close) */
    if (step < 6 && cut < len) {
      size_t next = utf8_cut(text, cut + 1) > cut ? cut + 1 : cut + 2;
      while (next < len && ((unsigned char)text[next] & 0xc0) == 0x80)
        next++;
      char probe[512];
      memcpy(probe, text, next);
      strcpy(probe + next, ellipsis);
      if (rd_text_width(cr, probe) <= max_width) {
        n = next;
        continue;
      }
    }
    return rd_text(cr, x, y, buf);
  }
}

int rd_text_wrap(cairo_t *cr, double x, double y, double max_width,
                 double line_height, const char *text) {
  int lines = 0;
  const char *p = text ? text : "";
  char line[1024];
  while (*p) {
    /* The longest run of words that fits; a word longer than the line is
     * cut with an ellipsis. */
    size_t best = 0, n = 0;
    while (p[n] && n < sizeof line - 1) {
      size_t end = n;
      while (p[end] && p[end] != ' ' && end < sizeof line - 1)
        end++;
      memcpy(line, p, end);
      line[end] = '\0';
      if (best && rd_text_width(cr, line) > max_width)
        break;
      best = end;
      n = end;
      while (p[n] == ' ')
        n++;
      if (rd_text_width(cr, line) > max_width)
        break;
    }
    if (!best)
      best = n ? n : strlen(p);
    memcpy(line, p, best);
    line[best] = '\0';
    rd_text_fit(cr, x, y + lines * line_height, max_width, line);
    lines++;
    p += best;
    while (*p == ' ')
      p++;
  }
  return lines;
}

void rd_fill_rect(cairo_t *cr, double x, double y, double w, double h,
                  uint32_t rgb) {
  rd_rgb(cr, rgb);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

void rd_hline(cairo_t *cr, double x0, double x1, double y, uint32_t rgb) {
  rd_fill_rect(cr, x0, floor(y), x1 - x0, 1, rgb);
}

void rd_vline(cairo_t *cr, double x, double y0, double y1, uint32_t rgb) {
  rd_fill_rect(cr, floor(x), y0, 1, y1 - y0, rgb);
}

void rd_format_count(char *buf, size_t size, uint64_t value) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
  size_t out = 0;
  for (int i = 0; i < n && out + 2 < size; i++) {
    if (i && (n - i) % 3 == 0)
      buf[out++] = ',';
    buf[out++] = digits[i];
  }
  buf[out < size ? out : size - 1] = '\0';
}

void rd_format_percent(char *buf, size_t size, double fraction) {
  double p = fraction * 100.0;
  if (p >= 9.95 || p == 0.0)
    snprintf(buf, size, "%.1f%%", p);
  else if (p >= 0.095)
    snprintf(buf, size, "%.2f%%", p);
  else
    snprintf(buf, size, "<0.1%%");
}

void mprof_render_format_duration(char *buf, size_t size, double ns) {
  const char *unit = "ns";
  double v = ns;
  if (fabs(ns) >= 1e9) {
    v = ns / 1e9;
    unit = "s";
  } else if (fabs(ns) >= 1e6) {
    v = ns / 1e6;
    unit = "ms";
  } else if (fabs(ns) >= 1e3) {
    v = ns / 1e3;
    unit = "\u00b5s";
  }
  if (strcmp(unit, "ns") == 0)
    snprintf(buf, size, "%.0f ns", v);
  else if (fabs(v) >= 100)
    snprintf(buf, size, "%.1f %s", v, unit);
  else if (fabs(v) >= 10)
    snprintf(buf, size, "%.2f %s", v, unit);
  else
    snprintf(buf, size, "%.3f %s", v, unit);
}

const char *rd_short_name(char *buf, size_t size, const char *name) {
  /* Cut at the '(' that opens the argument list: the first one outside
   * template brackets. "void f<(int)3>(int)" keeps its template. */
  int depth = 0;
  size_t n = 0;
  for (; name[n]; n++) {
    if (name[n] == '<')
      depth++;
    else if (name[n] == '>' && depth > 0)
      depth--;
    else if (name[n] == '(' && depth == 0 && n > 0)
      break;
  }
  const char *start = name;
  /* Drop a leading return type ("void "). */
  if (strncmp(start, "void ", 5) == 0 && n > 5) {
    start += 5;
    n -= 5;
  }
  if (n >= size)
    n = size - 1;
  memcpy(buf, start, n);
  buf[n] = '\0';
  return buf;
}

void rd_format_sass(char *buf, size_t size, const mprof_sass_instruction *in) {
  if (!in) {
    snprintf(buf, size, "(no SASS)");
    return;
  }
  snprintf(buf, size, "%s%s%s%s%s", in->predicate ? in->predicate : "",
           in->predicate && *in->predicate ? " " : "",
           in->opcode ? in->opcode : "",
           in->operands && *in->operands ? " " : "",
           in->operands ? in->operands : "");
}

void rd_format_line(char *buf, size_t size, const mprof_sass_instruction *in) {
  if (!in || !in->line) {
    snprintf(buf, size, "%s", "");
    return;
  }
  const char *file = in->file ? in->file : "";
  const char *slash = strrchr(file, '/');
  snprintf(buf, size, "%s:%u", slash ? slash + 1 : (*file ? file : "line"),
           in->line);
}

uint32_t rd_state_color(int state) {
  switch (state) {
  case 1: return RD_STATE_OK;
  case 2: return RD_STATE_MINOR;
  case 3: return RD_STATE_ISSUE;
  default: return RD_STATE_UNKNOWN;
  }
}

const char *rd_state_name(int state) {
  switch (state) {
  case 1: return "ok";
  case 2: return "minor";
  case 3: return "issue";
  default: return "unknown";
  }
}

void rd_no_kernel(cairo_t *cr, double width, double height) {
  mprof_render_draw_message(
      cr, width, height, "No kernel selected",
      "Pick a kernel in the top bar, or double-click a launch in Trace.");
}

void mprof_render_draw_message(cairo_t *cr, double width, double height,
                               const char *title, const char *message) {
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 18, 1, 0);
  double y = height / 2 - 10;
  double tw = rd_text_width(cr, title);
  rd_text(cr, fmax(12, (width - tw) / 2), y, title);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 13, 0, 0);
  /* Wrap the message at spaces to the width. */
  const char *p = message ? message : "";
  double max_w = fmax(40, width - 48);
  y += 26;
  while (*p) {
    char line[512];
    size_t best = 0, n = 0;
    while (p[n] && n < sizeof line - 1) {
      memcpy(line, p, n + 1);
      line[n + 1] = '\0';
      if (rd_text_width(cr, line) > max_w)
        break;
      n++;
      if (p[n] == ' ' || p[n] == '\0')
        best = n;
    }
    if (!best)
      best = n ? n : 1;
    memcpy(line, p, best);
    line[best] = '\0';
    double lw = rd_text_width(cr, line);
    rd_text(cr, fmax(12, (width - lw) / 2), y, line);
    y += 18;
    p += best;
    while (*p == ' ')
      p++;
  }
}

/* ---- the dispatcher -----------------------------------------------------
 */

void mprof_render_draw(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_view *view, int tab, double width,
                       double height) {
  if (width < 1 || height < 1)
    return;
  cairo_save(cr);
  cairo_rectangle(cr, 0, 0, width, height);
  cairo_clip(cr);
  if (!model) {
    mprof_render_draw_message(cr, width, height, "No trace", "");
    cairo_restore(cr);
    return;
  }
  switch (tab) {
  case MPROF_RENDER_TRACE:
    mprof_render__draw_trace(cr, model, view, width, height);
    break;
  case MPROF_RENDER_SUMMARY:
    mprof_render__draw_summary(cr, model, view, width, height);
    break;
  case MPROF_RENDER_HOTSPOTS:
    mprof_render__draw_hotspots(cr, model, view, width, height);
    break;
  case MPROF_RENDER_FLAME:
  case MPROF_RENDER_RASTER:
    mprof_render__draw_lanes(cr, model, view, tab, width, height);
    break;
  case MPROF_RENDER_MEGA:
    mprof_render__draw_mega(cr, model, view, width, height);
    break;
  case MPROF_RENDER_DENSITY:
    mprof_render__draw_density(cr, model, view, width, height);
    break;
  case MPROF_RENDER_ACTIVITY:
    mprof_render__draw_activity(cr, model, view, width, height);
    break;
  default:
    mprof_render_draw_message(cr, width, height, "Unknown view", "");
    break;
  }
  cairo_restore(cr);
}

double mprof_render_content_height(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   double width) {
  if (!model)
    return 0;
  switch (tab) {
  case MPROF_RENDER_TRACE: return mprof_render__trace_content(model, view);
  case MPROF_RENDER_HOTSPOTS:
    return mprof_render__hotspots_content(model, view);
  case MPROF_RENDER_MEGA:
  case MPROF_RENDER_DENSITY:
    return mprof_render__mega_content(model, view, tab);
  case MPROF_RENDER_ACTIVITY:
    return mprof_render__activity_content(model, view);
  case MPROF_RENDER_SUMMARY: {
    /* Lay the page out on a scratch surface: the height is where the last
     * line ended. */
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = cairo_create(s);
    mprof_render_view v = *view;
    v.scroll_y = 0;
    double h = mprof_render__draw_summary(cr, model, &v, width, 1);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    return h;
  }
  default: return 0;
  }
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
  if (!model || x < 0 || y < 0 || x >= width || y >= height)
    return;
  switch (tab) {
  case MPROF_RENDER_TRACE:
    mprof_render__hit_trace(model, view, width, height, x, y, hit);
    break;
  case MPROF_RENDER_HOTSPOTS:
    mprof_render__hit_hotspots(model, view, width, height, x, y, hit);
    break;
  case MPROF_RENDER_FLAME:
  case MPROF_RENDER_RASTER:
    mprof_render__hit_lanes(model, view, tab, width, height, x, y, hit);
    break;
  case MPROF_RENDER_MEGA:
    mprof_render__hit_mega(model, view, width, height, x, y, hit);
    break;
  case MPROF_RENDER_DENSITY:
    mprof_render__hit_density(model, view, width, height, x, y, hit);
    break;
  case MPROF_RENDER_ACTIVITY:
    mprof_render__hit_activity(model, view, width, height, x, y, hit);
    break;
  default: break;
  }
}

void mprof_render_tab_layout(const mprof_render_model *model,
                             const mprof_render_view *view, int tab,
                             double width, double height,
                             mprof_render_layout *out) {
  out->left = MPROF_RENDER_GUTTER;
  out->right = width > out->left + 1 ? width : out->left + 1;
  out->top = MPROF_RENDER_RULER;
  out->bottom = height > out->top + 1 ? height : out->top + 1;
  if (mprof_render_tab_is_span(tab)) {
    out->top = mprof_render__span_header(NULL, model, view, tab, width, 0);
    out->bottom =
        height - RS_AXIS > out->top + 1 ? height - RS_AXIS : out->top + 1;
  }
}

void mprof_render_view_zoom_tab_rows(mprof_render_view *view,
                                     const mprof_render_model *model, int tab,
                                     double factor, double y, double rows_px) {
  if (tab == MPROF_RENDER_TRACE) {
    mprof_render_view_zoom_rows(view, factor, y);
    return;
  }
  double old = mprof_render__row_unit(model, view, tab, rows_px);
  double h = old * factor;
  double floor_px = tab == MPROF_RENDER_ACTIVITY ? 3.0 : 1.0;
  /* Never smaller than what fits: the fitted view is the zoomed-out end. */
  view->sm_height = tab == MPROF_RENDER_ACTIVITY ? view->sm_height : 0;
  double fit;
  if (tab == MPROF_RENDER_ACTIVITY) {
    double saved = view->activity_height;
    view->activity_height = 0;
    fit = mprof_render__row_unit(model, view, tab, rows_px);
    view->activity_height = saved;
  } else {
    fit = mprof_render__row_unit(model, view, tab, rows_px);
  }
  if (h < fit)
    h = fit;
  if (h < floor_px)
    h = floor_px;
  if (h > 2000)
    h = 2000;
  double content_y = view->scroll_y + y;
  if (tab == MPROF_RENDER_ACTIVITY)
    view->activity_height = h <= fit ? 0 : h;
  else
    view->sm_height = h <= fit ? 0 : h;
  view->scroll_y = h <= fit ? 0 : content_y * (h / old) - y;
  if (view->scroll_y < 0)
    view->scroll_y = 0;
}

/* ---- files ---------------------------------------------------------------
 */

static int has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), s = strlen(suffix);
  return n >= s && strcasecmp(path + n - s, suffix) == 0;
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
  cairo_surface_t *surface =
      svg ? cairo_svg_surface_create(path, width, height)
          : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    int rc = mprof_render__fail(
        "%s: %s", path, cairo_status_to_string(cairo_surface_status(surface)));
    cairo_surface_destroy(surface);
    return rc;
  }
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw(cr, model, view, tab, width, height);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status == CAIRO_STATUS_SUCCESS) {
    if (svg) {
      cairo_surface_finish(surface);
      status = cairo_surface_status(surface);
    } else {
      status = cairo_surface_write_to_png(surface, path);
    }
  }
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    return mprof_render__fail("%s: %s", path, cairo_status_to_string(status));
  return 0;
}
