/*
 * mprof-render — what the files of the Trace view share: the rows' layout,
 * the boxes of a stream row, the items of an NVTX, API or counter row, and
 * the pieces each file draws. Internal to mprof-render.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_VIEW_TRACE_H
#define MPROF_RENDER_VIEW_TRACE_H

#include "render_internal.h"

#define MEMOP_COLOR 0x6b7f99u
#define COPY_LABEL_PX 30.0 /* copies at least this wide get a label */
#define GRID_COLOR 0xe3e5eau
#define ROW_ODD 0xf3f4f7u
#define GRID_MAX 64
#define INSET_LINE 12.0
#define INSET_MIN_WIDTH 110.0
#define INSET_MAX_LINES 8
/* Launches at least this wide carry their kernel's name (when 4
 * characters of it fit: mprof_render_kernel_label), merged runs their
 * count. */
#define LABEL_PX 24.0
#define MERGED_LABEL_PX 40.0
/* Launches narrower than this many pixels merge. */
#define MERGE_PX 2.0

/* Boxes at least this wide get a darker edge (merged runs: twice as
 * wide), so that neighbours stay apart. */
#define EDGE_PX 5.0

#define API_RUNTIME_COLOR 0x6cc3b5u
#define API_DRIVER_COLOR 0xb3a6d9u
#define FLOW_HOVER_COLOR 0x3b3f47u

/* The Trace rows that show below the ruler and above @p height, top to
 * bottom: rt_walk_next() steps to the next one (0 when done). */
typedef struct row_walk {
  const mprof_render_model *model;
  const mprof_render_view *view;
  size_t next, rows;
  double y, height;
  size_t index; /* the current row */
  const mprof_render_row *row;
  double top, h;
  int folded; /* the band above folds or hides its rows */
} row_walk;

/* The height of all the rows at the view's row height. */
double mprof_render__trace_content(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   double width);
double rt_row_height(const mprof_render_row *row,
                     const mprof_render_view *view);
int rt_is_band(const mprof_render_row *row);
/* The height of row @p index as drawn in a pass from the top: 0 when it is
 * hidden or folded into its band. @p folded carries the band's state down
 * the pass (start it at 0). */
double rt_row_height_at(const mprof_render_model *model,
                        const mprof_render_view *view, size_t index,
                        int *folded);
row_walk rt_walk_rows(const mprof_render_model *model,
                      const mprof_render_view *view, size_t rows,
                      double height);
int rt_walk_next(row_walk *w);

/* Snap a box to whole pixels inside the time area, at least 1 px wide. */
int rt_snap(double *x0, double *x1, double left, double right);
double rt_luminance(uint32_t rgb);

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

/* The LOD key: runs of merged launches keep to one kernel where they can.
 * @p data is a box_list, or a struct that starts with one. */
int rt_box_key(size_t position, void *data);
void rt_list_init(box_list *list, const mprof_render_model *model,
                  uint32_t stream);
void rt_collect_row(box_list *list, const mprof_render_model *model,
                    uint32_t stream, const mprof_render_timemap *map);
uint32_t rt_kernel_color(const mprof_render_model *model, int kernel);
void rt_paint_boxes(cairo_t *cr, const mprof_render_model *model,
                    const box_list *list, double left, double right, double y,
                    double h, uint32_t background, const int *grid,
                    size_t grid_count, const unsigned char *match);

/* Kernel labels, measured once per frame and font size: a frame may
 * label thousands of launches of a handful of kernels. */
typedef struct label_cache {
  double font_size;
  size_t count;
  char **text;
  double *width; /* < 0: not measured yet */
} label_cache;

void rt_label_cache_free(label_cache *c);
void rt_label_fit(cairo_t *cr, label_cache *c, const mprof_render_model *model,
                  int kernel, double x, double y, double max_width);
void rt_draw_inset(cairo_t *cr, const mprof_render_kernel *k, double x0,
                   double x1, double y, double h);
void rt_draw_memops(cairo_t *cr, const mprof_render_model *model,
                    uint32_t stream, const mprof_render_timemap *map, double y,
                    double h, double left, double right, int dimmed);

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

row_items rt_items_of(const mprof_render_model *model,
                      const mprof_render_row *row);
size_t rt_first_reaching(const row_items *it, size_t from, int64_t t);

/* The interval of the @p i-th item: its record's start, and its end from
 * the row's ends (never before the start). */
static inline void rt_item_span(const row_items *it, size_t i, int64_t *a,
                                int64_t *b) {
  uint32_t idx = it->order[i];
  *a = rs_clamp_ns(it->kind == MPROF_ROW_RANGES ? it->ranges[idx].start
                   : it->kind == MPROF_ROW_API  ? it->calls[idx].start
                                                : it->pm[idx].start);
  *b = it->end[i];
}

void rt_draw_intervals(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_row *row,
                       const mprof_render_timemap *map, double y, double h,
                       double left, double right, int64_t selected_call,
                       const char *search);
void rt_draw_flow(cairo_t *cr, const mprof_render_model *model,
                  const mprof_render_view *view,
                  const mprof_render_timemap *map, int64_t launch,
                  uint32_t color);
void rt_draw_counter(cairo_t *cr, const mprof_render_model *model,
                     const mprof_render_row *row,
                     const mprof_render_timemap *map, double y, double h,
                     double left, double right);
/* The kernels @p search matches, a byte each (kernel_count of them; the
 * caller frees it); NULL without a search (everything matches) or out of
 * memory. */
unsigned char *rt_search_kernels(const mprof_render_model *model,
                                 const char *search);
int rt_range_matches(const mprof_render_model *model, uint32_t range,
                     const char *search);
/* What a search leaves dimmed: lighter, towards the background. */
#define SEARCH_DIM 0.78

void rt_draw_selection_panel(cairo_t *cr, const mprof_render_model *model,
                             const mprof_render_view *view, double left,
                             double right, double height);

#endif
