/*
 * mprof-render — the launches of a Trace stream row: boxes merged by level of
 * detail and painted per pixel, kernel labels, the PC/SASS inset inside wide
 * launches of the selected kernel, and copies (memops).
 *
 * A frame visits, per visible row, the boxes that mprof_render_lod_visit()
 * finds (bounded by the row's pixels), then fills them with one path per
 * colour: cost grows with pixels, not launches.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_trace.h"

/* ---- the boxes of a row --------------------------------------------------
 */

static int launch_kernel(const box_list *list, size_t position) {
  const mprof_launch_record *l =
      mprof_trace_stream_launch(list->trace, list->stream, position);
  return mprof_render_launch_kernel(list->model, (size_t)(l - list->launches));
}

/* The LOD key: runs of merged launches keep to one kernel where they can.
 * @p data is a box_list, or a struct that starts with one. */
int rt_box_key(size_t position, void *data) {
  return launch_kernel((const box_list *)data, position);
}

static void collect_box(const mprof_render_box *box, void *data) {
  box_list *list = (box_list *)data;
  if (list->count == list->capacity) {
    size_t cap = list->capacity ? list->capacity * 2 : 256;
    draw_box *grown = (draw_box *)realloc(list->items, cap * sizeof *grown);
    if (!grown)
      return;
    list->items = grown;
    list->capacity = cap;
  }
  draw_box *d = &list->items[list->count++];
  d->x0 = box->x0;
  d->x1 = box->x1;
  d->first = box->first;
  d->last = box->last;
  d->merged = box->merged;
  d->kernel = launch_kernel(list, box->first);
  if (box->merged) {
    /* The colour of a run: the kernel most of three probes agree on. */
    int mid = launch_kernel(list, box->first + (box->last - box->first) / 2);
    int end = launch_kernel(list, box->last - 1);
    if (mid == end)
      d->kernel = mid;
  }
}

void rt_list_init(box_list *list, const mprof_render_model *model,
                  uint32_t stream) {
  list->model = model;
  list->trace = mprof_render_model_trace(model);
  list->stream = stream;
  list->launches = mprof_trace_launches(list->trace, NULL);
  list->count = 0;
}

void rt_collect_row(box_list *list, const mprof_render_model *model,
                    uint32_t stream, const mprof_render_timemap *map) {
  rt_list_init(list, model, stream);
  mprof_render_lod_visit(list->trace, stream, map, MERGE_PX, rt_box_key,
                         collect_box, list);
}

uint32_t rt_kernel_color(const mprof_render_model *model, int kernel) {
  const mprof_render_kernel *k = mprof_render_kernel_at(model, (size_t)kernel);
  return k ? k->color : 0x999999u;
}

/* Paint a row's boxes pixel by pixel into a strip three pixels tall (top
 * edge, body, bottom edge) over the row's background and grid, then
 * stretch it over the row in three copies. Filling and stroking thousands of
 * small rectangles through Cairo's path machinery costs ten times more. Singles
 * take their kernel's colour, merged runs a lighter shade of it. */
void rt_paint_boxes(cairo_t *cr, const mprof_render_model *model,
                    const box_list *list, double left, double right, double y,
                    double h, uint32_t background, const int *grid,
                    size_t grid_count, const unsigned char *match) {
  int width = (int)ceil(right - left);
  if (width <= 0 || h < 1 || !list->count)
    return;
  /* A new strip per row: a recording target (GTK's) keeps a reference to
   * each source it was given. */
  cairo_surface_t *strip =
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, 3);
  if (cairo_surface_status(strip) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(strip);
    return;
  }
  cairo_surface_flush(strip);
  unsigned char *data = cairo_image_surface_get_data(strip);
  int stride = cairo_image_surface_get_stride(strip);
  uint32_t *top = (uint32_t *)data;
  uint32_t *body = (uint32_t *)(data + stride);
  uint32_t *bottom = (uint32_t *)(data + 2 * stride);
  /* Opaque: the row's background and grid, then the boxes over them, so
   * that the composite is a plain copy. */
  for (int x = 0; x < width; x++)
    top[x] = background;
  for (size_t i = 0; i < grid_count; i++) {
    int gx = grid[i] - (int)left;
    if (gx >= 0 && gx < width)
      top[gx] = GRID_COLOR;
  }
  memcpy(body, top, (size_t)width * 4);
  memcpy(bottom, top, (size_t)width * 4);
  int last_kernel = -2, last_merged = -1;
  uint32_t fill = 0, edge = 0;
  for (size_t i = 0; i < list->count; i++) {
    const draw_box *b = &list->items[i];
    double x0 = b->x0, x1 = b->x1;
    if (!rt_snap(&x0, &x1, left, right))
      continue;
    if (b->kernel != last_kernel || b->merged != last_merged) {
      uint32_t rgb = rt_kernel_color(model, b->kernel);
      if (b->merged)
        rgb = rd_lighten(rgb, 0.45);
      if (match && (b->kernel < 0 || !match[b->kernel]))
        rgb = rd_lighten(rgb, SEARCH_DIM);
      fill = 0xff000000u | rgb;
      edge = 0xff000000u | rd_darken(rgb, 0.25);
      last_kernel = b->kernel;
      last_merged = b->merged;
    }
    int a = (int)(x0 - left), e = (int)(x1 - left);
    if (a < 0)
      a = 0;
    if (e > width)
      e = width;
    int edged = x1 - x0 >= (b->merged ? 2 * EDGE_PX : EDGE_PX) && h >= 5;
    uint32_t rim = edged ? edge : fill;
    for (int x = a; x < e; x++) {
      top[x] = bottom[x] = rim;
      body[x] = fill;
    }
    if (edged)
      body[a] = body[e - 1] = edge;
  }
  cairo_surface_mark_dirty(strip);
  /* Top row, body stretched, bottom row; rows under 3 px: the body. */
  struct {
    int src;
    double y, h;
  } parts[3] = {{0, y, 1}, {1, y + 1, h - 2}, {2, y + h - 1, 1}};
  int first = 0, count = 3;
  if (h < 3) {
    parts[1].y = y;
    parts[1].h = h;
    first = 1;
    count = 1;
  }
  for (int p = first; p < first + count; p++) {
    cairo_save(cr);
    cairo_rectangle(cr, left, parts[p].y, width, parts[p].h);
    cairo_clip(cr);
    cairo_translate(cr, left, parts[p].y);
    cairo_scale(cr, 1, parts[p].h);
    cairo_set_source_surface(cr, strip, 0, -parts[p].src);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
  }
  cairo_surface_destroy(strip);
}

void rt_label_cache_free(label_cache *c) {
  for (size_t i = 0; i < c->count; i++)
    free(c->text[i]);
  free(c->text);
  free(c->width);
  memset(c, 0, sizeof *c);
}

const char *mprof_render_kernel_label(const mprof_render_model *model,
                                      int kernel, cairo_t *cr, double max_width,
                                      char *buf, size_t size) {
  if (!size)
    return buf;
  buf[0] = '\0';
  const mprof_render_kernel *k = rs_kernel(model, kernel);
  if (!k)
    return buf;
  if (!cr) {
    snprintf(buf, size, "%s", k->short_name);
    return buf;
  }
  rd_kernel_fit_text(cr, max_width, k, buf, size);
  /* Fewer than RD_LABEL_MIN_CHARS characters (the ellipsis counted) tell
   * nothing apart: no label. */
  size_t chars = 0;
  for (const char *p = buf; *p; p++)
    chars += ((unsigned char)*p & 0xc0) != 0x80;
  if (chars < RD_LABEL_MIN_CHARS)
    buf[0] = '\0';
  return buf;
}

void rt_label_fit(cairo_t *cr, label_cache *c, const mprof_render_model *model,
                  int kernel, double x, double y, double max_width) {
  size_t n = mprof_render_kernel_count(model);
  cairo_matrix_t font;
  cairo_get_font_matrix(cr, &font);
  double size = font.xx;
  if (c->count != n || c->font_size != size) {
    rt_label_cache_free(c);
    c->text = (char **)calloc(n ? n : 1, sizeof(char *));
    c->width = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!c->text || !c->width) {
      rt_label_cache_free(c);
      return;
    }
    c->count = n;
    c->font_size = size;
    for (size_t i = 0; i < n; i++)
      c->width[i] = -1;
  }
  if (kernel < 0 || (size_t)kernel >= n)
    return;
  if (c->width[kernel] < 0) {
    c->text[kernel] =
        strdup(mprof_render_kernel_at(model, (size_t)kernel)->short_name);
    c->width[kernel] = c->text[kernel] ? rd_text_width(cr, c->text[kernel]) : 0;
  }
  if (!c->text[kernel])
    return;
  if (c->width[kernel] <= max_width) {
    rd_text(cr, x, y, c->text[kernel]);
    return;
  }
  char label[1024];
  mprof_render_kernel_label(model, kernel, cr, max_width, label, sizeof label);
  if (*label)
    rd_text(cr, x, y, label);
}

/* ---- the inset ----------------------------------------------------------
 */

int mprof_render__inset_lines(const mprof_render_kernel *k, double w,
                              double h) {
  if (!k || !k->pc_count || !k->stats->samples || w < INSET_MIN_WIDTH)
    return 0;
  int lines = (int)floor((h - 6) / INSET_LINE);
  if (lines < 1)
    return 0;
  if (lines > INSET_MAX_LINES)
    lines = INSET_MAX_LINES;
  if ((size_t)lines > k->pc_count)
    lines = (int)k->pc_count;
  return lines;
}

static int dominant_family(const mprof_render_pc *pc) {
  int best = 0;
  for (int f = 1; f < MPROF_FAM_COUNT; f++)
    if (pc->family[f] > pc->family[best])
      best = f;
  return best;
}

void rt_draw_inset(cairo_t *cr, const mprof_render_kernel *k, double x0,
                   double x1, double y, double h) {
  int lines = mprof_render__inset_lines(k, x1 - x0, h);
  if (!lines)
    return;
  double px = x0 + 2, py = y + 2, pw = x1 - x0 - 4, ph = 4 + lines * INSET_LINE;
  rd_rgba(cr, 0xffffff, 0.88);
  cairo_rectangle(cr, px, py, pw, ph);
  cairo_fill(cr);
  double max_share = (double)k->pcs[k->hot[0]].samples /
                     (double)(k->stats->samples ? k->stats->samples : 1);
  double bar_w = fmin(80.0, pw * 0.3);
  rd_font(cr, 9.5, 0, 1);
  for (int i = 0; i < lines; i++) {
    const mprof_render_pc *pc = &k->pcs[k->hot[i]];
    double share = (double)pc->samples / (double)k->stats->samples;
    double ly = py + 2 + i * INSET_LINE;
    double w = max_share > 0 ? bar_w * share / max_share : 0;
    rd_fill_rect(cr, px + 2, ly + 1, fmax(1.0, w), INSET_LINE - 3,
                 mprof_render_family_color(dominant_family(pc)));
    char text[160], pct[16];
    mprof_format_percent(pct, sizeof pct, share);
    if (pc->insn)
      snprintf(text, sizeof text, "%6s %s", pct, pc->insn->opcode);
    else
      snprintf(text, sizeof text, "%6s +0x%04x", pct, pc->offset);
    rd_rgb(cr, RD_TEXT);
    rd_text_fit(cr, px + bar_w + 6, ly + INSET_LINE - 3,
                px + pw - (px + bar_w + 6) - 2, text);
  }
}

/* ---- memops --------------------------------------------------------------
 */

const char *mprof_render_memop_label(const mprof_render_model *model,
                                     size_t memop, cairo_t *cr,
                                     double max_width, char *buf, size_t size) {
  if (!size)
    return buf;
  buf[0] = '\0';
  size_t n;
  const mprof_memop_record *mo =
      mprof_trace_memops(mprof_render_model_trace(model), &n);
  if (memop >= n)
    return buf;
  mo += memop;
  char bytes[32], rate[32];
  mprof_format_bytes(bytes, sizeof bytes, (double)mo->bytes);
  rate[0] = '\0';
  if (mo->end > mo->start && mo->bytes)
    mprof_format_bandwidth(rate, sizeof rate,
                           (double)mo->bytes * 1e9 /
                               (double)(mo->end - mo->start));
  /* Longest first; the first that fits. */
  char options[3][128];
  snprintf(options[0], sizeof options[0], "%s %s%s%s", rd_copy_kind_name(mo),
           bytes, *rate ? " " : "", rate);
  snprintf(options[1], sizeof options[1], "%s %s", rd_copy_kind_name(mo),
           bytes);
  snprintf(options[2], sizeof options[2], "%s", rd_copy_kind_name(mo));
  for (int i = 0; i < 3; i++)
    if (!cr || rd_text_width(cr, options[i]) <= max_width) {
      snprintf(buf, size, "%s", options[i]);
      break;
    }
  return buf;
}

/* The x span of memop @p i of memop_order: 0 when it starts after the
 * view. */
static int memop_x(const mprof_render_model *model,
                   const mprof_memop_record *mo, size_t i,
                   const mprof_render_timemap *map, double *x0, double *x1) {
  const mprof_memop_record *m = &mo[model->memop_order[i]];
  if (rs_clamp_ns(m->start) > map->end_ns)
    return 0;
  *x0 = mprof_render_time_to_x(map, rs_clamp_ns(m->start));
  *x1 = mprof_render_time_to_x(map, rs_clamp_end(m->start, m->end));
  return 1;
}

void rt_draw_memops(cairo_t *cr, const mprof_render_model *model,
                    uint32_t stream, const mprof_render_timemap *map, double y,
                    double h, double left, double right, int dimmed) {
  const mprof_memop_record *mo =
      mprof_trace_memops(mprof_render_model_trace(model), NULL);
  size_t lo, hi;
  int64_t longest = rs_stream_memops(model, stream, &lo, &hi);
  if (lo == hi)
    return;
  int64_t from = rs_sub_ns(map->start_ns, longest);
  /* Binary search the first memop that may reach into view. */
  size_t a;
  RS_LOWER_BOUND(a, lo, hi, i,
                 rs_clamp_ns(mo[model->memop_order[i]].start) < from);
  /* Bars first (one path), then the labels of those wide enough. */
  double last_px = -1e9;
  size_t labelled = 0;
  double x0, x1;
  rd_rgb(cr, dimmed ? rd_lighten(MEMOP_COLOR, SEARCH_DIM) : MEMOP_COLOR);
  for (size_t i = a; i < hi && memop_x(model, mo, i, map, &x0, &x1); i++) {
    if (floor(x0) < last_px && x1 - x0 < 1)
      continue; /* another on the same pixel */
    if (!rt_snap(&x0, &x1, left, right))
      continue;
    cairo_rectangle(cr, x0, y, x1 - x0, h);
    last_px = x1;
    labelled += x1 - x0 >= COPY_LABEL_PX;
  }
  cairo_fill(cr);
  if (!labelled || h < 11 || dimmed)
    return;
  double font_size = fmin(11.0, h - 3);
  rd_font(cr, font_size, 0, 0);
  rd_rgb(cr, 0xffffff);
  for (size_t i = a; i < hi && memop_x(model, mo, i, map, &x0, &x1); i++) {
    if (x1 - x0 < COPY_LABEL_PX || !rt_snap(&x0, &x1, left, right) ||
        x1 - x0 < COPY_LABEL_PX)
      continue;
    char label[128];
    mprof_render_memop_label(model, model->memop_order[i], cr, x1 - x0 - 8,
                             label, sizeof label);
    if (*label)
      rd_text(cr, x0 + 4, y + h / 2 + font_size * 0.36, label);
  }
}
