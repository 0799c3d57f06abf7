/*
 * mprof-render — what the views share and the model's insides. Never
 * installed; only files of mprof-gtk/render include it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_INTERNAL_H
#define MPROF_RENDER_INTERNAL_H

#include <stdarg.h>

#include "render.h"

#ifdef MPROF_RENDER_HAVE_DIAGNOSE
#include <mprof/diagnose.h>
#include <mprof/join.h>
#endif

struct mprof_render_model {
  mprof_trace *trace;
  mprof_sidecar *sidecar;
  char note[4608];
  int64_t start_ns, end_ns;

  size_t kernel_count;
  mprof_render_kernel *kernels;
  int32_t *shape_kernel; /* SHAPES index -> kernel index */
  char **owned_names;    /* demangled names, one per kernel (or NULL) */

  size_t reason_count;
  mprof_render_reason *reasons;
  char **reason_names;

  size_t row_count;
  mprof_render_row *rows;
  char **row_labels;

  /* Memops per stream, by start: stream s owns
   * memop_order[memop_first[s] .. memop_first[s + 1]). */
  size_t *memop_first;
  uint32_t *memop_order;
  uint64_t *memop_longest; /* per stream, ns */

  /* Storage behind the kernels' pcs, hot and reason arrays. */
  mprof_render_pc *pc_storage;
  uint32_t *hot_storage;
  uint64_t *reason_storage;

#ifdef MPROF_RENDER_HAVE_DIAGNOSE
  /* Built on first use: the diagnosis is what `mprof summary` prints. */
  int diagnosis_tried;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
#endif
};

/* ---- errors ------------------------------------------------------------- */

int mprof_render__fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* ---- the diagnosis, when libmprof has one ----------------------------- */

typedef struct render_dimension {
  const char *title;
  int state; /* 0 unknown, 1 ok, 2 minor, 3 issue */
  const char *detail;
} render_dimension;

typedef struct render_diagnosis {
  const char *verdict;
  int verdict_state;
  size_t dimension_count;
  render_dimension dimensions[16];
  double occupancy;    /* theoretical, 0..1; < 0 unknown */
  const char *limiter; /* what limits it ("registers"); "" unknown */
  double waves;        /* of the shape with the most time; < 0 unknown */
  uint64_t median_ns, p90_ns;
  size_t note_count;
  const char *notes[8];
} render_diagnosis;

/* Fill @p out for kernel @p kernel; 0 when libmprof's diagnosis is
 * available, -1 when not (this build or this kernel). */
int mprof_render__diagnosis(const mprof_render_model *model, int kernel,
                            render_diagnosis *out);

/* ---- drawing helpers (draw.c) ------------------------------------------ */

#define RD_FONT_SANS "DejaVu Sans"
#define RD_FONT_MONO "DejaVu Sans Mono"

#define RD_BACKGROUND 0xfbfbfcu
#define RD_TEXT 0x1d1f24u
#define RD_TEXT_DIM 0x6a6f7au
#define RD_RULE 0xd5d8deu
#define RD_PANEL 0xf0f1f4u
#define RD_SELECTION 0x3d7cf0u

#define RD_STATE_OK 0x2e9e4fu
#define RD_STATE_MINOR 0xe0a21au
#define RD_STATE_ISSUE 0xd9412eu
#define RD_STATE_UNKNOWN 0x9aa0a8u

void rd_rgb(cairo_t *cr, uint32_t rgb);
void rd_rgba(cairo_t *cr, uint32_t rgb, double alpha);
/* @p rgb mixed with white by @p amount (0 = unchanged, 1 = white). */
uint32_t rd_lighten(uint32_t rgb, double amount);
uint32_t rd_darken(uint32_t rgb, double amount);
void rd_font(cairo_t *cr, double size, int bold, int mono);
double rd_text_width(cairo_t *cr, const char *text);
/* Draw @p text with its baseline at @p y; returns its width. */
double rd_text(cairo_t *cr, double x, double y, const char *text);
/* Draw @p text cut with an ellipsis to fit @p max_width; returns the width
 * drawn (0 when nothing fits). */
double rd_text_fit(cairo_t *cr, double x, double y, double max_width,
                   const char *text);
double rd_text_right(cairo_t *cr, double right, double y, const char *text);
/* Draw @p text wrapped at spaces to @p max_width, first baseline at @p y,
 * lines @p line_height apart; returns the number of lines. */
int rd_text_wrap(cairo_t *cr, double x, double y, double max_width,
                 double line_height, const char *text);
void rd_fill_rect(cairo_t *cr, double x, double y, double w, double h,
                  uint32_t rgb);
void rd_hline(cairo_t *cr, double x0, double x1, double y, uint32_t rgb);
void rd_vline(cairo_t *cr, double x, double y0, double y1, uint32_t rgb);
/* "1,234,567" */
void rd_format_count(char *buf, size_t size, uint64_t value);
/* "12.3%" */
void rd_format_percent(char *buf, size_t size, double fraction);
/* The display name of a kernel up to its argument list, in @p buf. */
const char *rd_short_name(char *buf, size_t size, const char *name);
/* "@P0 LDG.E.128 R4, [R2.64]" */
void rd_format_sass(char *buf, size_t size, const mprof_sass_instruction *in);
/* "file.cu:42" (base name), "" when unknown. */
void rd_format_line(char *buf, size_t size, const mprof_sass_instruction *in);
/* A kernel-less panel: "Select a kernel..." */
void rd_no_kernel(cairo_t *cr, double width, double height);
uint32_t rd_state_color(int state);
const char *rd_state_name(int state);

/* ---- views ---------------------------------------------------------- */

void mprof_render__draw_trace(cairo_t *cr, const mprof_render_model *model,
                              const mprof_render_view *view, double width,
                              double height);
double mprof_render__trace_content(const mprof_render_model *model,
                                   const mprof_render_view *view);
void mprof_render__hit_trace(const mprof_render_model *model,
                             const mprof_render_view *view, double width,
                             double height, double x, double y,
                             mprof_render_hit *hit);

double mprof_render__draw_summary(cairo_t *cr, const mprof_render_model *model,
                                  const mprof_render_view *view, double width,
                                  double height);

void mprof_render__draw_hotspots(cairo_t *cr, const mprof_render_model *model,
                                 const mprof_render_view *view, double width,
                                 double height);
double mprof_render__hotspots_content(const mprof_render_model *model,
                                      const mprof_render_view *view);
void mprof_render__hit_hotspots(const mprof_render_model *model,
                                const mprof_render_view *view, double width,
                                double height, double x, double y,
                                mprof_render_hit *hit);

/* Flame and Raster share their x layout: instructions in offset order,
 * each as wide as its share of the samples. */
void mprof_render__draw_lanes(cairo_t *cr, const mprof_render_model *model,
                              const mprof_render_view *view, int tab,
                              double width, double height);
void mprof_render__hit_lanes(const mprof_render_model *model,
                             const mprof_render_view *view, int tab,
                             double width, double height, double x, double y,
                             mprof_render_hit *hit);

/* The inline PC/SASS inset of a launch box (view_trace.c): how many lines
 * fit in a box of @p w x @p h, 0 when it is too small. */
int mprof_render__inset_lines(const mprof_render_kernel *kernel, double w,
                              double h);

#endif /* MPROF_RENDER_INTERNAL_H */
