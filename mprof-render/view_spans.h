/*
 * mprof-render — what Mega, Density and Activity share (spanview.c): the
 * frame of a span view, a pixel buffer painted once, and the projection of
 * a trace without spans. Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_VIEW_SPANS_H
#define MPROF_RENDER_VIEW_SPANS_H

#include "render_internal.h"

#define RS_NONE 0xff000000u /* a column colour: draw nothing */

/* A pixel buffer (RGB24) for the rows of a span view, and a row of
 * scratch: per column, the span found and its colour. */
typedef struct rs_canvas {
  cairo_surface_t *surface;
  uint32_t *px;
  int w, h, stride;
  mprof_render_column *cols;
  uint32_t *colors;
} rs_canvas;

int rs_canvas_init(rs_canvas *c, double width, double height, uint32_t bg);
void rs_canvas_fill(rs_canvas *c, int x0, int x1, int y0, int y1, uint32_t rgb);
void rs_canvas_columns(rs_canvas *c, const uint32_t *colors, int y0, int y1);
void rs_canvas_paint(cairo_t *cr, rs_canvas *c, double x, double y);
void rs_canvas_free(rs_canvas *c);

/* What a span view shows in this frame. */
typedef struct rs_frame {
  const mprof_render_model *model;
  const mprof_render_view *view;
  int tab;
  int kernel;
  const rs_group *group; /* NULL: projected (or nothing) */
  int projected;
  int demo;
  mprof_render_layout layout;
  mprof_render_timemap map;
  int64_t origin; /* the axis counts from here */
  int grid[64];   /* the x of the ticks after it: the time grid */
  size_t grid_count;
} rs_frame;

/* A one-pixel line at each x of the frame's grid (window x, the layout's
 * left at column 0) over rows [y0, y1). */
void rs_canvas_grid(rs_canvas *c, const rs_frame *f, int y0, int y1,
                    uint32_t rgb);

void rs_frame_init(rs_frame *f, const mprof_render_model *m,
                   const mprof_render_view *view, int tab, double width,
                   double height);
/* The header (title, legend) and banners over a span view, and the time
 * axis under it (ticks after the frame's origin). The header returns the
 * x where its second line's text ends. */
double rs_span_header(cairo_t *cr, const rs_frame *f, double width);
void rs_time_axis(cairo_t *cr, const rs_frame *f, double width);
size_t rs_frame_sm_count(const rs_frame *f);
/* The row labels on the left of a span view: rs_gutter_begin() paints the
 * gutter and clips to it (the caller restores the context); then per row,
 * rs_gutter_label() draws its GPU's colour chip (when @p chip) and
 * @p text (every row from 12 px up, else every few): 1 when it wrote the
 * text. */
void rs_gutter_begin(cairo_t *cr, const rs_frame *f);
int rs_gutter_label(cairo_t *cr, const rs_frame *f, size_t row, double unit,
                    int chip, uint32_t gpu, const char *text, double max_width);
/* The SM rows of Mega and Density in a frame. */
struct rs_psm;
typedef struct rs_sm_rows {
  struct rs_psm *psm; /* a projected frame's SMs: the caller's to free */
  size_t count;       /* SMs */
  double px;          /* the rows' height */
  double band;        /* px per SM */
  size_t first, last; /* the rows that show: [first, last) */
} rs_sm_rows;
/* Drawing Mega or Density starts here: the "no kernel" page (0), or the
 * background, @p f and @p rows (1; 0 out of memory). */
int rs_sm_frame_begin(cairo_t *cr, rs_frame *f, rs_sm_rows *rows,
                      const mprof_render_model *m,
                      const mprof_render_view *view, int tab, double width,
                      double height);
/* The gutter with the labels of the rows that show, clipped to the
 * gutter until the caller restores @p cr. */
void rs_sm_gutter(cairo_t *cr, const rs_frame *f, const rs_sm_rows *rows,
                  double max_width);
/* Of @p count rows @p unit px tall, those [*first, returned) that show in
 * @p rows_px px scrolled by @p scroll_y. */
size_t rs_visible_rows(double scroll_y, double rows_px, double unit,
                       size_t count, size_t *first);
/* The height of the rows of Mega or Density (@p tab) and of Activity at
 * the view's row height; 0 when they fit the view (no row height set). */
double mprof_render__mega_content(const mprof_render_model *model,
                                  const mprof_render_view *view, int tab,
                                  double width);
double mprof_render__activity_content(const mprof_render_model *model,
                                      const mprof_render_view *view, int tab,
                                      double width);
/* The Activity rows of the frame's group, or NULL (no spans). */
const rs_activity *rs_activity_of(const rs_frame *f);
uint32_t rs_gpu_tint(uint32_t gpu, uint32_t sm);
/* "GPU 1 · SM 5" among several GPUs (by rank), else "SM 5". */
void rs_sm_label(char *buf, size_t size, uint32_t gpu_count, uint32_t gpu,
                 uint32_t sm);
/* rs_sm_label(), or where that is wider than @p max_width in @p cr's font,
 * the short "G1 SM5"; what is drawn is never cut to "GPU 1 · S…". */
void rs_sm_label_fit(cairo_t *cr, char *buf, size_t size, double max_width,
                     uint32_t gpu_count, uint32_t gpu, uint32_t sm);
/* Track @p track (spans @p idx) over canvas rows [y0, y1): each span its
 * region's colour, lighter where merged, a darker first column on bars
 * at least 5 px wide. */
void rs_canvas_track(rs_canvas *c, const rs_frame *f,
                     const mprof_render_track *track, const uint32_t *idx,
                     int y0, int y1);
int rs_hit_track(const rs_frame *f, const mprof_render_track *track,
                 const uint32_t *idx, double x, mprof_render_hit *hit);

/* Where the sub-lanes of rs_lanes rows live: per lane offsets, and the
 * spans' SPANS ids, starts and ends (Mega's rows, an Activity level). */
typedef struct rs_lane_set {
  const size_t *lane_first;
  const uint32_t *idx;
  const int64_t *start, *end;
} rs_lane_set;

/* The sub-lanes of @p lanes in a row @p px tall from canvas row @p y0,
 * each its share of the height; those that do not fit drawn into the
 * last one shown. */
void rs_draw_lanes(rs_canvas *c, const rs_frame *f, const rs_lanes *lanes,
                   const rs_lane_set *set, int y0, double px);
/* The span under @p x in those lanes, @p inside px below the row's top:
 * fills @p hit as rs_hit_track(); 1 if found. */
int rs_hit_lanes(const rs_frame *f, const rs_lanes *lanes,
                 const rs_lane_set *set, double px, double inside, double x,
                 mprof_render_hit *hit);

/* An SM of a projection. */
typedef struct rs_psm rs_psm;
struct rs_psm {
  uint32_t device, gpu, sm, sm_count;
  int kernel; /* the kernel of that name on that device */
};

/* A kernel's projection: blocks per SM and the stall mix. */
typedef struct rs_projection {
  int kernel;
  const rs_launch_track *track;
  uint32_t blocks_per_sm, warps_per_block, max_warps;
  int sampled;
  double share[3]; /* memory, compute, other: of the plain samples */
} rs_projection;

void rs_projection_init(rs_projection *p, const mprof_render_model *m,
                        int kernel);
uint32_t rs_projected_blocks(const rs_projection *p,
                             const mprof_render_model *m, uint32_t launch,
                             uint32_t sm, uint32_t sm_count, int64_t t,
                             uint32_t *wave, uint32_t *waves);
double rs_projected_occupancy(const rs_projection *p, uint32_t blocks);
/* The launch of the projection's kernel that runs at @p t, or -1. */
int64_t rs_projected_launch(const rs_projection *p, int64_t t);
/* Row @p s of a projected frame under (@p x, time @p t): its device, SM
 * and kernel, LABEL left of the rows, else @p kind, or PROJECTED with the
 * launch, wave, blocks and occupancy when a launch runs at @p t. */
void rs_hit_projected(const rs_frame *f, size_t s, double x, int64_t t,
                      int kind, mprof_render_hit *hit);

/* The wave under one pixel column, for every SM at once: all SMs hold
 * blocks_per_sm blocks (full), or the last wave's `each` plus one for the
 * first `extra` SMs. */
typedef struct rs_wave_column {
  int valid;
  int full;
  uint32_t each, extra;
} rs_wave_column;

/* The waves of @p n columns: launch @p launch_at[i] (or -1) at @p t[i]. */
void rs_wave_columns(const rs_projection *p, const mprof_render_model *m,
                     const int64_t *launch_at, const int64_t *t, size_t n,
                     uint32_t sm_count, rs_wave_column *out);

static inline uint32_t rs_wave_blocks(const rs_wave_column *c, uint32_t bps,
                                      uint32_t sm) {
  if (!c->valid)
    return 0;
  if (c->full)
    return bps;
  uint32_t b = c->each + (sm < c->extra ? 1u : 0u);
  return b < bps ? b : bps;
}

#endif /* MPROF_RENDER_VIEW_SPANS_H */
