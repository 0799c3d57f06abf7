/*
 * mprof-render — the Trace view: launches on per-device/per-stream rows
 * under a time ruler, with the PC/SASS inset inside wide launches of the
 * selected kernel.
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

#include "render_internal.h"

#define MEMOP_COLOR 0x6b7f99u
#define COPY_LABEL_PX 30.0 /* copies at least this wide get a label */
#define GRID_COLOR 0xe3e5eau
#define ROW_ODD 0xf3f4f7u
#define GRID_MAX 64
#define INSET_LINE 12.0
#define INSET_MIN_WIDTH 110.0
#define INSET_MAX_LINES 8

/* ---- layout ------------------------------------------------------------
 */

static double row_height(const mprof_render_row *row,
                         const mprof_render_view *view) {
  switch (row->kind) {
  case MPROF_ROW_DEVICE:
  case MPROF_ROW_THREAD: return MPROF_RENDER_DEVICE_ROW;
  case MPROF_ROW_RANGES:
  case MPROF_ROW_API: return MPROF_RENDER_RANGE_ROW;
  case MPROF_ROW_COUNTER: return MPROF_RENDER_COUNTER_ROW;
  default: return view->row_height;
  }
}

static int is_band(const mprof_render_row *row) {
  return row->kind == MPROF_ROW_DEVICE || row->kind == MPROF_ROW_THREAD;
}

/* The Trace rows that show below the ruler and above @p height, top to
 * bottom: walk_next() steps to the next one (0 when done). */
typedef struct row_walk {
  const mprof_render_model *model;
  const mprof_render_view *view;
  size_t next, rows;
  double y, height;
  size_t index; /* the current row */
  const mprof_render_row *row;
  double top, h;
} row_walk;

static row_walk walk_rows(const mprof_render_model *model,
                          const mprof_render_view *view, size_t rows,
                          double height) {
  row_walk w;
  memset(&w, 0, sizeof w);
  w.model = model;
  w.view = view;
  w.rows = rows;
  w.height = height;
  w.y = MPROF_RENDER_RULER - view->scroll_y;
  return w;
}

static int walk_next(row_walk *w) {
  while (w->next < w->rows && w->y < w->height) {
    w->index = w->next++;
    w->row = mprof_render_row_at(w->model, w->index);
    w->h = row_height(w->row, w->view);
    w->top = w->y;
    w->y += w->h;
    if (w->y >= MPROF_RENDER_RULER)
      return 1;
  }
  return 0;
}

void mprof_render_trace_timemap(mprof_render_timemap *map,
                                const mprof_render_view *view, double width) {
  mprof_render_timemap_init(map, view->start_ns, view->end_ns,
                            MPROF_RENDER_GUTTER,
                            fmax(1.0, width - MPROF_RENDER_GUTTER));
}

double mprof_render_row_top(const mprof_render_model *model,
                            const mprof_render_view *view, size_t row,
                            double *height) {
  double y = 0;
  size_t n = mprof_render_row_count(model);
  for (size_t i = 0; i < n && i < row; i++)
    y += row_height(mprof_render_row_at(model, i), view);
  if (height)
    *height = row < n ? row_height(mprof_render_row_at(model, row), view) : 0.0;
  return y;
}

int mprof_render_row_at_y(const mprof_render_model *model,
                          const mprof_render_view *view, double y) {
  if (y < 0)
    return -1;
  double top = 0;
  size_t n = mprof_render_row_count(model);
  for (size_t i = 0; i < n; i++) {
    double h = row_height(mprof_render_row_at(model, i), view);
    if (y < top + h)
      return (int)i;
    top += h;
  }
  return -1;
}

double mprof_render__trace_content(const mprof_render_model *model,
                                   const mprof_render_view *view) {
  return mprof_render_row_top(model, view, mprof_render_row_count(model), NULL);
}

/* ---- the boxes of a row --------------------------------------------------
 */

typedef struct draw_box {
  double x0, x1;
  size_t first, last;
  int kernel;
  int merged;
} draw_box;

typedef struct box_list {
  const mprof_render_model *model;
  const mprof_trace *trace;
  uint32_t stream;
  const mprof_launch_record *launches;
  draw_box *items;
  size_t count, capacity;
} box_list;

static int launch_kernel(const box_list *list, size_t position) {
  const mprof_launch_record *l =
      mprof_trace_stream_launch(list->trace, list->stream, position);
  return mprof_render_launch_kernel(list->model, (size_t)(l - list->launches));
}

/* The LOD key: runs of merged launches keep to one kernel where they can.
 * @p data is a box_list, or a struct that starts with one. */
static int box_key(size_t position, void *data) {
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

static void list_init(box_list *list, const mprof_render_model *model,
                      uint32_t stream) {
  size_t n;
  list->model = model;
  list->trace = mprof_render_model_trace(model);
  list->stream = stream;
  list->launches = mprof_trace_launches(list->trace, &n);
  list->count = 0;
}

/* Launches narrower than this many pixels merge. */
#define MERGE_PX 2.0

static void collect_row(box_list *list, const mprof_render_model *model,
                        uint32_t stream, const mprof_render_timemap *map) {
  list_init(list, model, stream);
  mprof_render_lod_visit(list->trace, stream, map, MERGE_PX, box_key,
                         collect_box, list);
}

static uint32_t kernel_color(const mprof_render_model *model, int kernel) {
  const mprof_render_kernel *k = mprof_render_kernel_at(model, (size_t)kernel);
  return k ? k->color : 0x999999u;
}

/* Snap a box to whole pixels inside the time area, at least 1 px wide. */
static int snap(double *x0, double *x1, double left, double right) {
  double a = floor(fmax(*x0, left)), b = ceil(fmin(*x1, right));
  if (b - a < 1)
    b = a + 1;
  if (a >= right || b <= left)
    return 0;
  *x0 = a;
  *x1 = b;
  return 1;
}

static double luminance(uint32_t rgb) {
  return (0.299 * ((rgb >> 16) & 0xff) + 0.587 * ((rgb >> 8) & 0xff) +
          0.114 * (rgb & 0xff)) /
         255.0;
}

/* Boxes at least this wide get a darker edge (merged runs: twice as
 * wide), so that neighbours stay apart. */
#define EDGE_PX 5.0

/* Paint a row's boxes pixel by pixel into a strip three pixels tall (top
 * edge, body, bottom edge) over the row's background and grid, then
 * stretch it over the row in three copies. Filling and stroking thousands of
 * small rectangles through Cairo's path machinery costs ten times more. Singles
 * take their kernel's colour, merged runs a lighter shade of it. */
static void paint_boxes(cairo_t *cr, const mprof_render_model *model,
                        const box_list *list, double left, double right,
                        double y, double h, uint32_t background,
                        const int *grid, size_t grid_count) {
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
    if (!snap(&x0, &x1, left, right))
      continue;
    if (b->kernel != last_kernel || b->merged != last_merged) {
      uint32_t rgb = kernel_color(model, b->kernel);
      if (b->merged)
        rgb = rd_lighten(rgb, 0.45);
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

/* Kernel labels, measured once per frame and font size: a frame may
 * label thousands of launches of a handful of kernels. */
typedef struct label_cache {
  double font_size;
  size_t count;
  char **text;
  double *width; /* < 0: not measured yet */
} label_cache;

static void label_cache_free(label_cache *c) {
  for (size_t i = 0; i < c->count; i++)
    free(c->text[i]);
  free(c->text);
  free(c->width);
  memset(c, 0, sizeof *c);
}

static void label_fit(cairo_t *cr, label_cache *c,
                      const mprof_render_model *model, int kernel, double x,
                      double y, double max_width) {
  size_t n = mprof_render_kernel_count(model);
  cairo_matrix_t font;
  cairo_get_font_matrix(cr, &font);
  double size = font.xx;
  if (c->count != n || c->font_size != size) {
    label_cache_free(c);
    c->text = (char **)calloc(n ? n : 1, sizeof(char *));
    c->width = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!c->text || !c->width) {
      label_cache_free(c);
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
    char buf[512];
    c->text[kernel] = strdup(mprof_render_short_name(
        buf, sizeof buf, mprof_render_kernel_at(model, (size_t)kernel)->name));
    c->width[kernel] = c->text[kernel] ? rd_text_width(cr, c->text[kernel]) : 0;
  }
  if (!c->text[kernel])
    return;
  if (c->width[kernel] <= max_width)
    rd_text(cr, x, y, c->text[kernel]);
  else
    rd_text_fit(cr, x, y, max_width, c->text[kernel]);
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

static void draw_inset(cairo_t *cr, const mprof_render_kernel *k, double x0,
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
    rd_rgb(cr, mprof_render_family_color(dominant_family(pc)));
    cairo_rectangle(cr, px + 2, ly + 1, fmax(1.0, w), INSET_LINE - 3);
    cairo_fill(cr);
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

static void draw_memops(cairo_t *cr, const mprof_render_model *model,
                        uint32_t stream, const mprof_render_timemap *map,
                        double y, double h, double left, double right) {
  size_t n;
  const mprof_memop_record *mo =
      mprof_trace_memops(mprof_render_model_trace(model), &n);
  size_t lo = model->memop_first[stream], hi = model->memop_first[stream + 1];
  if (lo == hi)
    return;
  int64_t from = map->start_ns - (int64_t)model->memop_longest[stream];
  /* Binary search the first memop that may reach into view. */
  size_t a = lo, b = hi;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if ((int64_t)mo[model->memop_order[mid]].start < from)
      a = mid + 1;
    else
      b = mid;
  }
  /* Bars first (one path), then the labels of those wide enough. */
  double last_px = -1e9;
  size_t labelled = 0;
  rd_rgb(cr, MEMOP_COLOR);
  for (size_t i = a; i < hi; i++) {
    const mprof_memop_record *m = &mo[model->memop_order[i]];
    if ((int64_t)m->start > map->end_ns)
      break;
    double x0 = mprof_render_time_to_x(map, (int64_t)m->start);
    double x1 = mprof_render_time_to_x(map, (int64_t)m->end);
    if (floor(x0) < last_px && x1 - x0 < 1)
      continue; /* another on the same pixel */
    if (!snap(&x0, &x1, left, right))
      continue;
    cairo_rectangle(cr, x0, y, x1 - x0, h);
    last_px = x1;
    labelled += x1 - x0 >= COPY_LABEL_PX;
  }
  cairo_fill(cr);
  if (!labelled || h < 11)
    return;
  double font_size = fmin(11.0, h - 3);
  rd_font(cr, font_size, 0, 0);
  rd_rgb(cr, 0xffffff);
  for (size_t i = a; i < hi; i++) {
    const mprof_memop_record *m = &mo[model->memop_order[i]];
    if ((int64_t)m->start > map->end_ns)
      break;
    double x0 = mprof_render_time_to_x(map, (int64_t)m->start);
    double x1 = mprof_render_time_to_x(map, (int64_t)m->end);
    if (x1 - x0 < COPY_LABEL_PX || !snap(&x0, &x1, left, right) ||
        x1 - x0 < COPY_LABEL_PX)
      continue;
    char label[128];
    mprof_render_memop_label(model, model->memop_order[i], cr, x1 - x0 - 8,
                             label, sizeof label);
    if (*label)
      rd_text(cr, x0 + 4, y + h / 2 + font_size * 0.36, label);
  }
}

/* ---- NVTX ranges and counter tracks ------------------------------------
 */

/* Ranges without a colour of their own: soft, told apart by name. */
static const uint32_t range_palette[] = {0x9ecae1, 0xa1d99b, 0xfdd0a2,
                                         0xdadaeb, 0xfcbba1, 0xc7e9c0,
                                         0xd9d9d9, 0xf2d7ee};

uint32_t rs_range_color(const mprof_range_record *r) {
  if (r->color & 0xffffffu)
    return r->color & 0xffffffu;
  uint32_t h = r->name * 2654435761u;
  return range_palette[(h >> 16) %
                       (sizeof range_palette / sizeof range_palette[0])];
}

/* The items of a RANGES, API or COUNTER row, with their records at hand:
 * a frame looks at many of them. */
typedef struct row_items {
  uint32_t kind;
  const uint32_t *order; /* record indices, by start */
  const int64_t *end;    /* their ends, ascending */
  size_t count;
  const mprof_range_record *ranges;
  const mprof_api_call_record *calls;
  const mprof_pm_sample_record *pm;
} row_items;

static row_items items_of(const mprof_render_model *model,
                          const mprof_render_row *row) {
  row_items it;
  memset(&it, 0, sizeof it);
  const mprof_trace *trace = mprof_render_model_trace(model);
  size_t n;
  it.kind = row->kind;
  it.count = row->count;
  it.ranges = mprof_trace_ranges(trace, &n);
  it.calls = mprof_trace_api_calls(trace, &n);
  it.pm = mprof_trace_pm_samples(trace, &n);
  if (row->kind == MPROF_ROW_RANGES) {
    it.order = model->range_order + row->first;
    it.end = model->range_end + row->first;
  } else if (row->kind == MPROF_ROW_API) {
    it.order = model->api_order + row->first;
    it.end = model->api_end + row->first;
  } else if (row->kind == MPROF_ROW_COUNTER) {
    it.order = model->pm_order + row->first;
    it.end = model->pm_end + row->first;
  } else {
    it.count = 0;
  }
  return it;
}

/* The interval of the @p i-th item. */
static inline void item_span(const row_items *it, size_t i, int64_t *a,
                             int64_t *b) {
  uint32_t idx = it->order[i];
  uint64_t s, e;
  if (it->kind == MPROF_ROW_RANGES) {
    s = it->ranges[idx].start;
    e = it->ranges[idx].end;
  } else if (it->kind == MPROF_ROW_API) {
    s = it->calls[idx].start;
    e = it->calls[idx].end;
  } else {
    s = it->pm[idx].start;
    e = it->pm[idx].end;
  }
  *a = rs_clamp_ns(s);
  *b = rs_clamp_ns(e > s ? e : s);
}

/* The first item at or after @p from whose end reaches @p t: items of a
 * row never overlap, so their ends ascend with their starts. Gallops from
 * @p from, then bisects: the next item to draw is usually near. */
static size_t first_reaching(const row_items *it, size_t from, int64_t t) {
  const int64_t *end = it->end;
  if (from >= it->count || end[from] >= t)
    return from < it->count ? from : it->count;
  size_t lo = from, step = 1; /* invariant: end[lo] < t */
  while (lo + step < it->count && end[lo + step] < t) {
    lo += step;
    step *= 2;
  }
  size_t hi = lo + step < it->count ? lo + step : it->count;
  lo++;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (end[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

#define API_RUNTIME_COLOR 0x6cc3b5u
#define API_DRIVER_COLOR 0xb3a6d9u
#define FLOW_HOVER_COLOR 0x3b3f47u

/* NVTX ranges (their colours, their names) or CUDA API calls (by API,
 * with their function names) of one row. */
static void draw_intervals(cairo_t *cr, const mprof_render_model *model,
                           const mprof_render_row *row,
                           const mprof_render_timemap *map, double y, double h,
                           double left, double right, int64_t selected_call) {
  const mprof_trace *trace = mprof_render_model_trace(model);
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &n);
  double last_px = -1e9;
  double run_x0 = 0, run_x1 = 0; /* narrow items not yet filled */
  uint32_t run_fill = 0;
  rd_font(cr, fmin(10.5, h - 4), 0, 0);
  row_items it = items_of(model, row);
  size_t next = 0;
  for (size_t i = first_reaching(&it, 0, map->start_ns); i < it.count;
       i = next) {
    next = i + 1;
    uint32_t idx = it.order[i];
    int64_t a, b;
    item_span(&it, i, &a, &b);
    if (a > map->end_ns)
      break;
    double x0 = mprof_render_time_to_x(map, a);
    double x1 = mprof_render_time_to_x(map, b);
    if (x1 - x0 < 1) {
      /* Items that end inside this pixel column cannot show: skip them by
       * one search, so a row costs its pixels, not its items. */
      size_t skip =
          first_reaching(&it, next, mprof_render_x_to_time(map, floor(x0) + 1));
      if (skip > next)
        next = skip;
    }
    if (floor(x0) < last_px && x1 - x0 < 1)
      continue; /* another on the same pixel */
    if (!snap(&x0, &x1, left, right))
      continue;
    last_px = x1;
    uint32_t fill;
    const char *name;
    if (row->kind == MPROF_ROW_RANGES) {
      fill = rs_range_color(&ranges[idx]);
      name = mprof_trace_string(trace, ranges[idx].name);
    } else {
      fill = calls[idx].kind == MPROF_API_DRIVER ? API_DRIVER_COLOR
                                                 : API_RUNTIME_COLOR;
      name = mprof_trace_string(trace, calls[idx].name);
    }
    /* Narrow items of one colour that touch merge into one rectangle:
     * one fill per run, not per item. */
    int wide = x1 - x0 >= EDGE_PX ||
               (row->kind == MPROF_ROW_API && (int64_t)idx == selected_call);
    if (run_x1 > run_x0 && (wide || fill != run_fill || x0 > run_x1)) {
      rd_fill_rect(cr, run_x0, y, run_x1 - run_x0, h, run_fill);
      run_x0 = run_x1 = 0;
    }
    if (!wide) {
      if (run_x1 <= run_x0)
        run_x0 = x0;
      run_x1 = x1;
      run_fill = fill;
      continue;
    }
    rd_fill_rect(cr, x0, y, x1 - x0, h, fill);
    if (row->kind == MPROF_ROW_API && (int64_t)idx == selected_call) {
      rd_rgb(cr, RD_SELECTION);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, x0 + 1, y + 1, fmax(x1 - x0 - 2, 1), h - 2);
      cairo_stroke(cr);
    } else if (x1 - x0 >= EDGE_PX) {
      rd_rgb(cr, rd_darken(fill, 0.3));
      cairo_set_line_width(cr, 1);
      cairo_rectangle(cr, x0 + 0.5, y + 0.5, x1 - x0 - 1, h - 1);
      cairo_stroke(cr);
    }
    if (x1 - x0 >= 24 && h >= 10) {
      rd_rgb(cr, luminance(fill) > 0.55 ? RD_TEXT : 0xffffff);
      rd_text_fit(cr, x0 + 3, y + h / 2 + 3.5, x1 - x0 - 6, name);
    }
  }
  if (run_x1 > run_x0)
    rd_fill_rect(cr, run_x0, y, run_x1 - run_x0, h, run_fill);
}

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

/* A counter as a filled area, 0..100% of peak over the row's height: per
 * pixel column the highest window that meets it, so that a short burst
 * never vanishes when zoomed out. */
static void draw_counter(cairo_t *cr, const mprof_render_model *model,
                         const mprof_render_row *row,
                         const mprof_render_timemap *map, double y, double h,
                         double left, double right) {
  int width = (int)ceil(right - left);
  if (width <= 0 || row->column < 0)
    return;
  float *top = (float *)malloc((size_t)width * sizeof *top);
  if (!top)
    return;
  for (int x = 0; x < width; x++)
    top[x] = -1;
  size_t n;
  const mprof_pm_sample_record *pm =
      mprof_trace_pm_samples(mprof_render_model_trace(model), &n);
  row_items it = items_of(model, row);
  size_t from = first_reaching(&it, 0, map->start_ns);
  size_t to = first_reaching(&it, from, map->end_ns);
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
      float v = model->pm_bucket_max[b * MPROF_PM_MAX_METRICS + row->column];
      if (isnan(v))
        continue;
      v = v < 0 ? 0 : (v > 100 ? 100 : v);
      double x0 = mprof_render_time_to_x(map, model->pm_bucket_start[b]) - left;
      double x1 = mprof_render_time_to_x(map, model->pm_bucket_end[b]) - left;
      int a = (int)floor(fmax(x0, 0)), e = (int)ceil(fmin(x1, width));
      if (e <= a)
        e = a + 1;
      for (int x = a; x < e && x < width; x++)
        if (v > top[x])
          top[x] = v;
    }
  }
  for (size_t i = bucketed ? row->count : from; i < row->count; i++) {
    const mprof_pm_sample_record *w = &pm[mprof_render_row_item(model, row, i)];
    if (rs_clamp_ns(w->start) > map->end_ns)
      break;
    float v = w->value[row->column];
    if (isnan(v))
      continue;
    if (v < 0)
      v = 0;
    if (v > 100)
      v = 100;
    double x0 = mprof_render_time_to_x(map, rs_clamp_ns(w->start)) - left;
    double x1 = mprof_render_time_to_x(map, rs_clamp_ns(w->end)) - left;
    int a = (int)floor(fmax(x0, 0)), b = (int)ceil(fmin(x1, width));
    if (b <= a)
      b = a + 1;
    for (int x = a; x < b && x < width; x++)
      if (v > top[x])
        top[x] = v;
  }
  /* Painted pixel by pixel into a translucent strip laid over the row (a
   * path of thousands of jagged segments costs Cairo far more): the area
   * under each column's value, and its outline, a pixel wide, joining each
   * column's top to the previous one's. */
  int rows = (int)floor(h);
  if (rows < 3) {
    free(top);
    return;
  }
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

/* Ticks at round multiples of the step after the start of the GPU
 * activity; the first in view is labelled with its time since that start,
 * the others relative to it ("+20 us"), so every label stays short
 * however deep the zoom. Where the process started: a line when it is in
 * view, else a pointer at the left edge with how much earlier it was. */
static void draw_ruler(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_timemap *map, double width,
                       double height) {
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
    rd_rgb(cr, RD_TEXT_DIM);
    cairo_rectangle(cr, xs[i], MPROF_RENDER_RULER - 7, 1, 6);
    cairo_fill(cr);
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
                        (double)(offsets[i] - offsets[base]), (double)step);
      rd_font(cr, 10.5, 0, 0);
    }
    rd_rgb(cr, RD_TEXT);
    free_from = xs[i] + 3 + rd_text(cr, xs[i] + 3, 13, label) + 6;
  }
  /* Sub-ticks at a fifth of the step. */
  int64_t sub = step / 5;
  if (sub > 0) {
    rd_rgb(cr, RD_TEXT_DIM);
    for (int64_t t = first - step; origin + t <= map->end_ns; t += sub) {
      double x = floor(mprof_render_time_to_x(map, origin + t));
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
  (void)height;
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

/* ---- the selected range --------------------------------------------------
 */

#define PANEL_LINE 15.0
#define PANEL_KERNELS 6

/* What the selected range holds, from libmprof's window over the join:
 * totals, then its kernels by time with launches, GPU time and share,
 * in a panel at the bottom right of the time area. */
static void draw_selection_panel(cairo_t *cr, const mprof_render_model *model,
                                 const mprof_render_view *view, double left,
                                 double right, double height) {
  mprof_window *w = NULL;
  if (mprof_window_build(&w, mprof_render_model_join(model),
                         (uint64_t)view->sel_start_ns,
                         (uint64_t)view->sel_end_ns)) {
    mprof_error_clear();
    return;
  }
  const mprof_window_totals *t = mprof_window_totals_of(w);
  size_t kernels = mprof_window_kernel_count(w);
  size_t shown = kernels < PANEL_KERNELS ? kernels : PANEL_KERNELS;
  int more = kernels > shown;
  double pw = fmin(560.0, right - left - 16);
  double ph = 10 + PANEL_LINE * (double)(1 + shown + (size_t)more) + 6;
  if (pw < 200 || ph > height - MPROF_RENDER_RULER - 8) {
    mprof_window_free(w);
    return;
  }
  double px = right - pw - 8, py = height - ph - 8;
  rd_rgba(cr, 0xffffff, 0.94);
  cairo_rectangle(cr, px, py, pw, ph);
  cairo_fill(cr);
  rd_rgb(cr, RD_SELECTION);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, px + 0.5, py + 0.5, pw - 1, ph - 1);
  cairo_stroke(cr);
  char span[32], count[32], gpu[32], text[256];
  mprof_format_duration(span, sizeof span,
                        (double)(view->sel_end_ns - view->sel_start_ns));
  mprof_format_count(count, sizeof count, t->launches);
  mprof_format_duration(gpu, sizeof gpu, (double)t->gpu_ns);
  int used = snprintf(text, sizeof text,
                      "%s selected: %s launches of %zu kernel%s, %s of GPU "
                      "time",
                      span, count, kernels, kernels == 1 ? "" : "s", gpu);
  if (t->copies && used > 0 && (size_t)used < sizeof text) {
    char bytes[32];
    mprof_format_bytes(bytes, sizeof bytes, (double)t->copy_bytes);
    snprintf(text + used, sizeof text - (size_t)used, "; %llu cop%s, %s",
             (unsigned long long)t->copies, t->copies == 1 ? "y" : "ies",
             bytes);
  }
  double y = py + 6 + 11;
  rd_font(cr, 10.5, 1, 0);
  rd_rgb(cr, RD_TEXT);
  rd_text_fit(cr, px + 8, y, pw - 16, text);
  rd_font(cr, 10.5, 0, 0);
  double col_share = px + pw - 8, col_time = col_share - 56,
         col_count = col_time - 78;
  for (size_t i = 0; i < shown; i++) {
    const mprof_window_kernel *k = mprof_window_kernel_at(w, i);
    const mprof_render_kernel *rk = mprof_render_kernel_at(model, k->kernel);
    y += PANEL_LINE;
    rd_fill_rect(cr, px + 8, y - 9, 10, 10, rk ? rk->color : 0x999999u);
    char name[512], pct[16];
    rd_rgb(cr, RD_TEXT);
    rd_text_fit(cr, px + 24, y, col_count - 90 - (px + 24),
                rk ? mprof_render_short_name(name, sizeof name, rk->name)
                   : "?");
    mprof_format_count(count, sizeof count, k->launches);
    snprintf(text, sizeof text, "%s \u00d7", count);
    rd_text_right(cr, col_count, y, text);
    mprof_format_duration(gpu, sizeof gpu, (double)k->gpu_ns);
    rd_text_right(cr, col_time, y, gpu);
    mprof_format_percent(pct, sizeof pct,
                         t->gpu_ns ? (double)k->gpu_ns / (double)t->gpu_ns
                                   : 0.0);
    rd_text_right(cr, col_share, y, pct);
  }
  if (more) {
    y += PANEL_LINE;
    rd_rgb(cr, RD_TEXT_DIM);
    snprintf(text, sizeof text, "and %zu more", kernels - shown);
    rd_text(cr, px + 24, y, text);
  }
  mprof_window_free(w);
}

/* ---- flow: from an API call to the launch it issued --------------------
 */

/* An arrow from the CUDA API call that issued @p launch to the launch's
 * start, when both are known: a curve leaving the call's row and arriving
 * at the top (or bottom) of the launch's box. */
static void draw_flow(cairo_t *cr, const mprof_render_model *model,
                      const mprof_render_view *view,
                      const mprof_render_timemap *map, int64_t launch,
                      uint32_t color) {
  if (launch < 0)
    return;
  int64_t call = mprof_render_launch_api_call(model, (size_t)launch);
  size_t n;
  const mprof_trace *trace = mprof_render_model_trace(model);
  const mprof_launch_record *l = mprof_trace_launches(trace, &n);
  if (call < 0 || (size_t)launch >= n)
    return;
  l += launch;
  const mprof_api_call_record *c = mprof_trace_api_calls(trace, &n) + call;
  uint32_t from_row = model->api_row[call];
  uint32_t to_row = model->stream_row[l->stream];
  if (from_row == MPROF_INDEX_NONE || to_row == MPROF_INDEX_NONE)
    return;
  double fh, th;
  double base = MPROF_RENDER_RULER - view->scroll_y;
  double ft = base + mprof_render_row_top(model, view, from_row, &fh);
  double tt = base + mprof_render_row_top(model, view, to_row, &th);
  int64_t c_end = rs_clamp_ns(c->end > c->start ? c->end : c->start);
  double xa = mprof_render_time_to_x(
      map, rs_clamp_ns(c->start) + (c_end - rs_clamp_ns(c->start)) / 2);
  double xl = mprof_render_time_to_x(map, rs_clamp_ns(l->start));
  double ya = from_row < to_row ? ft + fh - 2 : ft + 2;
  double yl = from_row < to_row ? tt + 2 : tt + th - 2;
  double ym = (ya + yl) / 2;
  rd_rgb(cr, color);
  cairo_set_line_width(cr, 2);
  cairo_move_to(cr, xa, ya);
  cairo_curve_to(cr, xa, ym, xl, ym, xl, yl);
  cairo_stroke(cr);
  /* The head, pointing into the launch. */
  double d = from_row < to_row ? -1 : 1;
  cairo_move_to(cr, xl, yl);
  cairo_line_to(cr, xl - 4, yl + 7 * d);
  cairo_line_to(cr, xl + 4, yl + 7 * d);
  cairo_close_path(cr);
  cairo_fill(cr);
  /* The call's end of it: a dot. */
  cairo_arc(cr, xa, ya, 2.5, 0, 2 * M_PI);
  cairo_fill(cr);
}

/* ---- the view ------------------------------------------------------------
 */

void mprof_render__draw_trace(cairo_t *cr, const mprof_render_model *model,
                              const mprof_render_view *view, double width,
                              double height) {
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
  size_t launch_total;
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_total);
  const mprof_render_kernel *selected = mprof_render_kernel_at(
      model, (size_t)(view->kernel >= 0 ? view->kernel : 0));
  if (view->kernel < 0)
    selected = NULL;
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
  /* Row backgrounds, then the time grid, then what happened on them. */
  for (row_walk w = walk_rows(model, view, rows, height); walk_next(&w);) {
    size_t r = w.index;
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (is_band(row)) {
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
  for (row_walk w = walk_rows(model, view, rows, height); walk_next(&w);) {
    size_t r = w.index;
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (row->kind == MPROF_ROW_RANGES || row->kind == MPROF_ROW_API) {
      draw_intervals(cr, model, row, &map, top + 1, h - 3, left, right,
                     selected_call);
      continue;
    }
    if (row->kind == MPROF_ROW_COUNTER) {
      draw_counter(cr, model, row, &map, top + 1, h - 2, left, right);
      continue;
    }
    if (row->kind != MPROF_ROW_STREAM)
      continue;
    double pad = h >= 10 ? 2 : (h >= 4 ? 1 : 0);
    double by = top + pad, bh = h - 2 * pad - 1;
    collect_row(&list, model, row->stream, &map);
    paint_boxes(cr, model, &list, left, right, by, bh,
                r % 2 ? ROW_ODD : RD_BACKGROUND, grid, grid_count);
    draw_memops(cr, model, row->stream, &map, by, bh, left, right);
    /* Selection outlines, insets and labels: only boxes wide enough to
     * carry them, at most width / 5 per row. */
    double font_size = fmin(11.0, bh - 3);
    rd_font(cr, font_size, 0, 0);
    for (size_t i = 0; i < list.count; i++) {
      draw_box *b = &list.items[i];
      double x0 = b->x0, x1 = b->x1;
      if (!snap(&x0, &x1, left, right) || x1 - x0 < EDGE_PX)
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
          rd_rgb(cr, rd_darken(kernel_color(model, b->kernel), 0.5));
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
        draw_inset(cr, selected, x0, x1, by, bh);
        rd_font(cr, font_size, 0, 0);
        /* The name goes under the inset when there is room. */
        double below = by + 2 + 4 + lines * INSET_LINE;
        if (by + bh - below < 16)
          continue;
        label_y = below + (by + bh - below) / 2 + 4;
      }
      if (x1 - x0 < 40 || bh < 11)
        continue;
      uint32_t fill = b->merged
                          ? rd_lighten(kernel_color(model, b->kernel), 0.45)
                          : kernel_color(model, b->kernel);
      rd_rgb(cr, luminance(fill) > 0.6 ? RD_TEXT : 0xffffff);
      if (b->merged) {
        char count[32], label[64];
        mprof_format_count(count, sizeof count, b->last - b->first);
        snprintf(label, sizeof label, "%s launches", count);
        rd_text_fit(cr, x0 + 4, label_y, x1 - x0 - 8, label);
      } else {
        label_fit(cr, &labels, model, b->kernel, x0 + 4, label_y, x1 - x0 - 8);
      }
    }
  }
  free(list.items);
  label_cache_free(&labels);
  draw_process_line(cr, model, &map, height);
  if (view->hover_launch != view->launch)
    draw_flow(cr, model, view, &map, view->hover_launch, FLOW_HOVER_COLOR);
  draw_flow(cr, model, view, &map, view->launch, RD_SELECTION);

  /* The selected time range. */
  if (view->sel_end_ns > view->sel_start_ns) {
    double x0 = mprof_render_time_to_x(&map, view->sel_start_ns);
    double x1 = mprof_render_time_to_x(&map, view->sel_end_ns);
    if (snap(&x0, &x1, left, right)) {
      rd_rgba(cr, RD_SELECTION, 0.15);
      cairo_rectangle(cr, x0, MPROF_RENDER_RULER, x1 - x0, height);
      cairo_fill(cr);
    }
    draw_selection_panel(cr, model, view, left, right, height);
  }
  cairo_restore(cr);

  /* Row labels over the gutter. */
  rd_fill_rect(cr, 0, MPROF_RENDER_RULER, left, height, RD_PANEL);
  rd_vline(cr, left - 1, MPROF_RENDER_RULER, height, RD_RULE);
  cairo_save(cr);
  cairo_rectangle(cr, 0, MPROF_RENDER_RULER, left - 1,
                  height - MPROF_RENDER_RULER);
  cairo_clip(cr);
  for (row_walk w = walk_rows(model, view, rows, height); walk_next(&w);) {
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (is_band(row)) {
      rd_fill_rect(cr, 0, top, left, h, 0xe4e7ee);
      continue; /* its name is written across the band, below */
    }
    if (h < 9)
      continue;
    rd_rgb(cr, row->kind == MPROF_ROW_STREAM ? RD_TEXT : RD_TEXT_DIM);
    rd_font(cr, fmin(row->kind == MPROF_ROW_STREAM ? 11.0 : 10.0, h - 2), 0, 0);
    rd_text_fit(cr, 14, top + h / 2 + 4, left - 20, row->label);
  }
  cairo_restore(cr);

  /* Device names across their bands: the gutter is too narrow for them. */
  cairo_save(cr);
  cairo_rectangle(cr, 0, MPROF_RENDER_RULER, width,
                  height - MPROF_RENDER_RULER);
  cairo_clip(cr);
  for (row_walk w = walk_rows(model, view, rows, height); walk_next(&w);) {
    const mprof_render_row *row = w.row;
    double h = w.h, top = w.top;
    if (!is_band(row))
      continue;
    rd_rgb(cr, RD_TEXT);
    rd_font(cr, 11, 1, 0);
    rd_text_fit(cr, 6, top + h / 2 + 4, width - 12, row->label);
  }
  cairo_restore(cr);

  draw_ruler(cr, model, &map, width, height);
  /* The selected range on the ruler, with its length. */
  if (view->sel_end_ns > view->sel_start_ns) {
    double x0 = mprof_render_time_to_x(&map, view->sel_start_ns);
    double x1 = mprof_render_time_to_x(&map, view->sel_end_ns);
    if (snap(&x0, &x1, left, right)) {
      rd_rgba(cr, RD_SELECTION, 0.35);
      cairo_rectangle(cr, x0, MPROF_RENDER_RULER - 6, x1 - x0, 5);
      cairo_fill(cr);
      char span[48];
      mprof_format_duration(span, sizeof span,
                            (double)(view->sel_end_ns - view->sel_start_ns));
      /* Centred on the selection, below the tick labels. */
      rd_font(cr, 9, 1, 0);
      double w = rd_text_width(cr, span);
      double tx = fmin(fmax((x0 + x1 - w) / 2, left + 2), right - w - 4);
      rd_fill_rect(cr, tx - 3, 14, w + 6, MPROF_RENDER_RULER - 15, RD_PANEL);
      rd_rgb(cr, RD_SELECTION);
      rd_text(cr, tx, MPROF_RENDER_RULER - 3, span);
    }
  }
  rd_fill_rect(cr, 0, 0, left, MPROF_RENDER_RULER, RD_PANEL);
  rd_vline(cr, left - 1, 0, MPROF_RENDER_RULER, RD_RULE);
  rd_hline(cr, 0, left, MPROF_RENDER_RULER - 1, RD_RULE);
  char span[48];
  mprof_format_duration(span, sizeof span,
                        (double)(view->end_ns - view->start_ns));
  rd_rgb(cr, RD_TEXT_DIM);
  char text[96];
  snprintf(text, sizeof text, "%s visible", span);
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

void mprof_render__hit_trace(const mprof_render_model *model,
                             const mprof_render_view *view, double width,
                             double height, double x, double y,
                             mprof_render_hit *hit) {
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
    row_items it = items_of(model, row);
    for (size_t i = first_reaching(&it, 0, t0); i < it.count; i++) {
      uint32_t idx = it.order[i];
      int64_t a, b;
      item_span(&it, i, &a, &b);
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
      size_t n;
      const mprof_pm_sample_record *pm =
          mprof_trace_pm_samples(mprof_render_model_trace(model), &n);
      hit->kind = MPROF_HIT_COUNTER;
      hit->value = pm[best].value[row->column];
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
  list_init(&s.list, model, row->stream);
  s.x = x;
  mprof_render_lod_visit(trace, row->stream, &map, MERGE_PX, box_key, find_box,
                         &s);
  size_t n;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &n);
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
      if (snap(&x0, &x1, MPROF_RENDER_GUTTER, width)) {
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
  size_t mcount;
  const mprof_memop_record *mo = mprof_trace_memops(trace, &mcount);
  for (size_t i = model->memop_first[row->stream];
       i < model->memop_first[row->stream + 1]; i++) {
    const mprof_memop_record *m = &mo[model->memop_order[i]];
    double x0 = mprof_render_time_to_x(&map, (int64_t)m->start);
    double x1 = mprof_render_time_to_x(&map, (int64_t)m->end);
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
