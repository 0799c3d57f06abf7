/*
 * mprof-render — what every view draws with: errors, colours, text, the
 * plain message page, and the short forms of names, SASS and lines.
 * The lowest layer of the renderer: it calls no other file of it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int mprof_render__oom(void) { return mprof_render__fail("out of memory"); }

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

/* Bytes of the UTF-8 character at @p s (1 to 4) when Cairo takes it:
 * shortest form, no surrogate, at most U+10FFFF; 0 otherwise. */
static size_t utf8_char(const unsigned char *s) {
  if (s[0] < 0x80)
    return 1;
  size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
  if (!n || s[0] >= 0xf8)
    return 0;
  uint32_t c = s[0] & (0x7fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0; /* also stops at the NUL */
    c = c << 6 | (s[i] & 0x3fu);
  }
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
    return 0;
  return n;
}

/* @p text, or when it is not valid UTF-8 (a trace's strings are what its
 * writer made them), a copy in @p buf with U+FFFD for each byte that
 * starts no character: Cairo refuses such text and stops drawing. */
static const char *drawable(const char *text, char *buf, size_t size) {
  const unsigned char *s = (const unsigned char *)text;
  size_t at = 0;
  while (s[at]) {
    size_t n = utf8_char(s + at);
    if (!n)
      break;
    at += n;
  }
  if (!s[at])
    return text;
  size_t out = 0;
  for (at = 0; s[at] && out + 4 < size;) {
    size_t n = utf8_char(s + at);
    if (n) {
      memcpy(buf + out, s + at, n);
      out += n;
      at += n;
    } else {
      memcpy(buf + out, "\xef\xbf\xbd", 3);
      out += 3;
      at++;
    }
  }
  buf[out] = '\0';
  return buf;
}

void rd_utf8_repair(char *text) {
  unsigned char *s = (unsigned char *)text;
  while (*s) {
    size_t n = utf8_char(s);
    if (!n)
      *s = '?', n = 1;
    s += n;
  }
}

double rd_text_width(cairo_t *cr, const char *text) {
  char buf[1024];
  cairo_text_extents_t e;
  cairo_text_extents(cr, drawable(text, buf, sizeof buf), &e);
  return e.x_advance;
}

/* ---- text as text in SVG -------------------------------------------------
 *
 * Cairo's SVG surface draws text as glyph outlines, which no one can search
 * or copy. So on a surface rd_svg_text_begin() marked, rd_text() keeps the
 * text, its place, font and colour in a list and draws in its stead a
 * marker: a rectangle over the text's box in a colour that numbers it, at
 * an alpha nothing else uses. Cairo writes the marker where the text would
 * have been, in paint order, inside the groups and clips it is drawn in (or
 * not at all when clipped away), and rd_svg_text_finish() puts a <text>
 * element in each marker's place.
 */

#define SVG_MARK_ALPHA (3.0 / 255.0)

typedef struct svg_text {
  char *text;
  double x, y;  /* baseline start, device space */
  double size;  /* font size, device space */
  double width; /* advance, device space: the text keeps Cairo's width */
  double r, g, b, a;
  int bold, italic, mono;
} svg_text;

typedef struct svg_texts {
  svg_text *items;
  size_t count, capacity;
} svg_texts;

static const cairo_user_data_key_t svg_texts_key;

static void svg_texts_free(void *data) {
  svg_texts *list = (svg_texts *)data;
  for (size_t i = 0; list && i < list->count; i++)
    free(list->items[i].text);
  if (list)
    free(list->items);
  free(list);
}

int rd_svg_text_begin(cairo_surface_t *svg) {
  svg_texts *list = (svg_texts *)calloc(1, sizeof *list);
  if (!list ||
      cairo_surface_set_user_data(svg, &svg_texts_key, list, svg_texts_free)) {
    free(list);
    return mprof_render__oom();
  }
  return 0;
}

/* Keep @p text for the SVG and draw its marker; 0 when @p cr does not draw
 * to a marked surface or the text cannot be kept (it is then drawn). */
static int svg_text_keep(cairo_t *cr, double x, double y, const char *text,
                         double width) {
  svg_texts *list = (svg_texts *)cairo_surface_get_user_data(
      cairo_get_target(cr), &svg_texts_key);
  double r, g, b, a;
  cairo_font_face_t *face = cairo_get_font_face(cr);
  if (!list || !*text || list->count >= 0xffffff ||
      cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a) !=
          CAIRO_STATUS_SUCCESS ||
      cairo_font_face_get_type(face) != CAIRO_FONT_TYPE_TOY)
    return 0;
  if (list->count == list->capacity) {
    size_t cap = list->capacity ? list->capacity * 2 : 256;
    svg_text *grown = (svg_text *)realloc(list->items, cap * sizeof *grown);
    if (!grown)
      return 0;
    list->items = grown;
    list->capacity = cap;
  }
  svg_text *t = &list->items[list->count];
  if (!(t->text = strdup(text)))
    return 0;
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  cairo_matrix_t font;
  cairo_get_font_matrix(cr, &font);
  double size_x = 0, size = font.yy, advance = width, zero = 0;
  cairo_user_to_device_distance(cr, &size_x, &size);
  cairo_user_to_device_distance(cr, &advance, &zero);
  t->x = x;
  t->y = y;
  cairo_user_to_device(cr, &t->x, &t->y);
  t->size = fabs(size);
  t->width = advance;
  t->r = r, t->g = g, t->b = b, t->a = a;
  t->bold = cairo_toy_font_face_get_weight(face) == CAIRO_FONT_WEIGHT_BOLD;
  t->italic = cairo_toy_font_face_get_slant(face) != CAIRO_FONT_SLANT_NORMAL;
  t->mono = strcmp(cairo_toy_font_face_get_family(face), RD_FONT_MONO) == 0;
  /* The marker: the text's box, its colour the text's number. */
  size_t n = list->count++;
  cairo_save(cr);
  cairo_new_path(cr);
  cairo_rectangle(cr, x, y - fe.ascent, width > 0 ? width : 1,
                  fe.ascent + fe.descent);
  cairo_set_source_rgba(cr, (double)(n >> 16 & 0xff) / 255.0,
                        (double)(n >> 8 & 0xff) / 255.0,
                        (double)(n & 0xff) / 255.0, SVG_MARK_ALPHA);
  cairo_fill(cr);
  cairo_restore(cr);
  return 1;
}

/* The number after @p key in [from, to), or -1. */
static double number_after(const char *from, const char *to, const char *key) {
  size_t k = strlen(key);
  for (const char *p = from; p + k <= to; p++)
    if (memcmp(p, key, k) == 0)
      return strtod(p + k, NULL);
  return -1;
}

/* The text a marker element [from, to) stands for, or NULL. */
static const svg_text *marker_text(const svg_texts *list, const char *from,
                                   const char *to) {
  double alpha = number_after(from, to, "fill-opacity:");
  if (alpha < 0)
    alpha = number_after(from, to, "fill-opacity=\"");
  if (fabs(alpha - SVG_MARK_ALPHA) > 1e-5)
    return NULL;
  const char *rgb = NULL;
  for (const char *p = from; p + 4 <= to && !rgb; p++)
    if (memcmp(p, "rgb(", 4) == 0)
      rgb = p + 4;
  if (!rgb)
    return NULL;
  size_t n = 0;
  char *end;
  for (int c = 0; c < 3; c++) {
    double v = strtod(rgb, &end);
    if (end == rgb || end >= to)
      return NULL;
    int percent = *end == '%';
    long level = lround(percent ? v * 255.0 / 100.0 : v);
    if (level < 0 || level > 255)
      return NULL;
    n = n << 8 | (size_t)level;
    rgb = end + percent;
    while (rgb < to && (*rgb == ',' || *rgb == ' '))
      rgb++;
  }
  return n < list->count ? &list->items[n] : NULL;
}

static void write_escaped(FILE *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    default:
      /* XML 1.0 has no place for control characters. */
      fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
    }
  }
}

static void write_text(FILE *out, const svg_text *t) {
  fprintf(out,
          "<text x=\"%.2f\" y=\"%.2f\" textLength=\"%.2f\" "
          "lengthAdjust=\"spacingAndGlyphs\" xml:space=\"preserve\" "
          "style=\"font-family:'%s',%s;font-size:%.2fpx;font-weight:%s;"
          "font-style:%s;fill:rgb(%d,%d,%d);fill-opacity:%.3f\">",
          t->x, t->y, t->width, t->mono ? RD_FONT_MONO : RD_FONT_SANS,
          t->mono ? "monospace" : "sans-serif", t->size,
          t->bold ? "bold" : "normal", t->italic ? "italic" : "normal",
          (int)lround(t->r * 255), (int)lround(t->g * 255),
          (int)lround(t->b * 255), t->a);
  write_escaped(out, t->text);
  fputs("</text>", out);
}

int rd_svg_text_finish(cairo_surface_t *svg, const char *in, size_t size,
                       FILE *out) {
  const svg_texts *list =
      (const svg_texts *)cairo_surface_get_user_data(svg, &svg_texts_key);
  const char *p = in, *end = in + size;
  while (p < end) {
    const char *open = list ? memmem(p, (size_t)(end - p), "<path", 5) : NULL;
    if (!open) {
      fwrite(p, 1, (size_t)(end - p), out);
      break;
    }
    const char *close = memmem(open, (size_t)(end - open), "/>", 2);
    if (!close)
      close = end - 2;
    close += 2;
    const svg_text *t = marker_text(list, open, close);
    fwrite(p, 1, (size_t)((t ? open : close) - p), out);
    if (t)
      write_text(out, t);
    p = close;
  }
  return ferror(out) ? -1 : 0;
}

static mprof_render_text_fn text_observer;
static void *text_observer_ctx;

void mprof_render_observe_text(mprof_render_text_fn fn, void *ctx) {
  text_observer = fn;
  text_observer_ctx = ctx;
}

double rd_text(cairo_t *cr, double x, double y, const char *text) {
  char buf[1024];
  text = drawable(text, buf, sizeof buf);
  double width = rd_text_width(cr, text);
  if (text_observer) {
    /* Where it lands on the surface, whatever the transformation. */
    double ux = x, uy = y;
    cairo_user_to_device(cr, &ux, &uy);
    text_observer(text_observer_ctx, text, ux, uy, width);
  }
  if (svg_text_keep(cr, x, y, text, width))
    return width;
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, text);
  return width;
}

double rd_text_right(cairo_t *cr, double right, double y, const char *text) {
  return rd_text(cr, right - rd_text_width(cr, text), y, text);
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

/* Copies the first line of @p p wrapped at spaces to @p max_width into
 * @p line: the longest run of words that fits, or the first word alone when
 * even that is too wide (the caller cuts it with an ellipsis). Returns the
 * bytes of @p p it took, with the spaces after them. @p p is not empty. */
static size_t wrap_line(cairo_t *cr, const char *p, double max_width,
                        char *line, size_t size) {
  size_t best = 0, n = 0;
  while (p[n] && n < size - 1) {
    size_t end = n;
    while (p[end] && p[end] != ' ' && end < size - 1)
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
    best = n;
  memcpy(line, p, best);
  line[best] = '\0';
  while (p[best] == ' ')
    best++;
  return best;
}

int rd_text_wrap(cairo_t *cr, double x, double y, double max_width,
                 double line_height, const char *text) {
  int lines = 0;
  char line[1024];
  for (const char *p = text ? text : ""; *p; lines++) {
    p += wrap_line(cr, p, max_width, line, sizeof line);
    rd_text_fit(cr, x, y + lines * line_height, max_width, line);
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

const char *rd_copy_kind_name(const mprof_memop_record *mo) {
  const char *kind = mprof_copy_kind_name(mo->copy_kind);
  return mo->kind == MPROF_MEMOP_MEMSET ? "memset" : *kind ? kind : "memcpy";
}

/* @p text (or short name @p index of @p set) cut in the middle to the most
 * characters that fit @p max_width, into @p out: a bisection over the
 * character budget, each step one libmprof cut and one measurement. ""
 * when not even the ellipsis fits. */
static void name_fit_text(cairo_t *cr, double max_width, const char *text,
                          const mprof_name_set *set, size_t index, char *out,
                          size_t size) {
  out[0] = '\0';
  if (max_width <= 0 || !text || !size)
    return;
  if (rd_text_width(cr, text) <= max_width) {
    snprintf(out, size, "%s", text);
    return;
  }
  char buf[1024];
  size_t lo = 0, hi = 0; /* lo fits (0 always does), hi does not */
  for (const char *p = text; *p; p++)
    hi += ((unsigned char)*p & 0xc0) != 0x80;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (set)
      mprof_name_set_fit(set, index, buf, sizeof buf, mid);
    else
      mprof_name_middle(buf, sizeof buf, text, mid);
    if (rd_text_width(cr, buf) <= max_width) {
      lo = mid;
      snprintf(out, size, "%s", buf);
    } else {
      hi = mid;
    }
  }
}

static double name_fit(cairo_t *cr, double x, double y, double max_width,
                       const char *text, const mprof_name_set *set,
                       size_t index) {
  char best[1024];
  name_fit_text(cr, max_width, text, set, index, best, sizeof best);
  return *best ? rd_text(cr, x, y, best) : 0;
}

void rd_kernel_fit_text(cairo_t *cr, double max_width,
                        const mprof_render_kernel *k, char *buf, size_t size) {
  if (k)
    name_fit_text(cr, max_width, k->short_name, k->short_names, k->index, buf,
                  size);
  else if (size)
    buf[0] = '\0';
}

double rd_kernel_fit(cairo_t *cr, double x, double y, double max_width,
                     const mprof_render_kernel *k) {
  if (!k)
    return name_fit(cr, x, y, max_width, "?", NULL, 0);
  return name_fit(cr, x, y, max_width, k->short_name, k->short_names, k->index);
}

double rd_name_fit(cairo_t *cr, double x, double y, double max_width,
                   const char *text) {
  return name_fit(cr, x, y, max_width, text, NULL, 0);
}

const char *mprof_render_short_name(char *buf, size_t size, const char *name) {
  return mprof_name_short(buf, size, name);
}

void rd_format_sass(char *buf, size_t size, const mprof_sass_instruction *in) {
  if (in)
    mprof_sass_instruction_text(buf, size, in);
  else
    snprintf(buf, size, "(no SASS)");
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

void rd_no_kernel(cairo_t *cr, double width, double height) {
  mprof_render_draw_message(
      cr, width, height, "No kernel selected",
      "Pick a kernel in the top bar, or double-click a launch in Trace.");
}

int rd_no_samples(cairo_t *cr, const mprof_render_kernel *k, double width,
                  double height) {
  if (!k) {
    rd_no_kernel(cr, width, height);
    return 1;
  }
  if (k->stats->samples)
    return 0;
  char text[1280];
  snprintf(text, sizeof text,
           "%s has no PC samples. Record with --pc-mode continuous (the "
           "default) or serialized.",
           k->short_name);
  mprof_render_draw_message(cr, width, height, "No PC samples", text);
  return 1;
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
  /* Wrap the message at spaces to the width, each line centred. */
  double max_w = fmax(40, width - 48);
  char line[512];
  y += 26;
  for (const char *p = message ? message : ""; *p; y += 18) {
    p += wrap_line(cr, p, max_w, line, sizeof line);
    double lw = fmin(rd_text_width(cr, line), max_w);
    rd_text_fit(cr, fmax(12, (width - lw) / 2), y, max_w, line);
  }
}
