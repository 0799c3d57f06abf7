/*
 * mprof-render — the Flame and Raster views: a kernel's sampled SASS laid
 * out left to right in instruction offset order, each instruction as wide
 * as its share of the samples.
 *
 *   Flame:  one lane per instruction category (memory, arithmetic, tensor,
 *           control, sync, other); an instruction sits in its category's
 *           lane, darker the hotter it is.
 *   Raster: one lane per stall family; an instruction's cell in a lane is
 *           as dark as the share of its samples in that family, so the ink
 *           in a cell follows the samples.
 *
 * x is not time: samples say where warps were, not when. Instructions
 * narrower than a pixel merge into one column, so the cost follows pixels.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

#define HEADER 52.0
#define AXIS 34.0
#define GUTTER 178.0
#define PAD 12.0

/* A column: one instruction at least a pixel wide, or consecutive
 * narrower ones merged. */
typedef struct segment {
  double x0, x1;
  size_t first, last; /* pcs [first, last) */
  size_t hottest;     /* the pc with the most samples */
  uint64_t samples;
  uint64_t category[MPROF_CAT_COUNT];
  uint64_t family[MPROF_FAM_COUNT];
} segment;

typedef struct lanes_layout {
  double left, right, top, bottom, lane_h;
  int lanes;
} lanes_layout;

static void lanes_layout_init(lanes_layout *l, int tab, double width,
                              double height) {
  l->left = GUTTER;
  l->right = fmax(GUTTER + 10, width - PAD);
  l->top = HEADER;
  l->bottom = fmax(HEADER + 10, height - AXIS);
  l->lanes = tab == MPROF_RENDER_FLAME ? MPROF_CAT_COUNT : MPROF_FAM_COUNT;
  l->lane_h = (l->bottom - l->top) / l->lanes;
}

/* The columns of @p k across [left, right); caller frees *out. */
static size_t build_segments(const mprof_render_kernel *k, double left,
                             double right, segment **out) {
  *out = NULL;
  if (!k->stats->samples)
    return 0;
  segment *segs =
      (segment *)calloc(k->pc_count ? k->pc_count : 1, sizeof *segs);
  if (!segs)
    return 0;
  double scale = (right - left) / (double)k->stats->samples;
  size_t n = 0;
  uint64_t before = 0;
  segment *open = NULL;
  for (size_t i = 0; i < k->pc_count; i++) {
    const mprof_render_pc *pc = &k->pcs[i];
    if (!pc->samples)
      continue;
    double x0 = left + (double)before * scale;
    before += pc->samples;
    double x1 = left + (double)before * scale;
    /* Start a new column unless this instruction and the open column are
     * both narrower than a pixel and share it. */
    if (!open || x1 - x0 >= 1.0 || open->x1 - open->x0 >= 1.0 ||
        x1 - open->x0 > 1.0) {
      open = &segs[n++];
      open->x0 = x0;
      open->first = i;
      open->hottest = i;
    }
    open->x1 = x1;
    open->last = i + 1;
    open->samples += pc->samples;
    open->category[pc->category] += pc->samples;
    for (int f = 0; f < MPROF_FAM_COUNT; f++)
      open->family[f] += pc->family[f];
    if (pc->samples > k->pcs[open->hottest].samples)
      open->hottest = i;
  }
  *out = segs;
  return n;
}

static void header(cairo_t *cr, const mprof_render_kernel *k, int tab,
                   double width) {
  char text[512], samples[32];
  rd_fill_rect(cr, PAD, 12, 6, 18, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  snprintf(text, sizeof text, "%s \u2014 %s",
           tab == MPROF_RENDER_FLAME ? "Flame" : "Raster", k->short_name);
  rd_text_fit(cr, PAD + 12, 27, width - 2 * PAD - 12, text);
  mprof_format_count(samples, sizeof samples, k->stats->samples);
  snprintf(text, sizeof text,
           tab == MPROF_RENDER_FLAME
               ? "Sampled SASS by instruction category: x = instruction "
                 "offset order, width = samples (%zu instructions, %s "
                 "samples), darker = hotter"
               : "Sampled SASS by stall family: x = instruction offset "
                 "order, width = samples (%zu instructions, %s samples), "
                 "darker = larger share of the instruction's samples",
           k->pc_count, samples);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11, 0, 0);
  rd_text_fit(cr, PAD, 45, width - 2 * PAD, text);
}

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (rd_no_samples(cr, k, width, height))
    return;
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  header(cr, k, tab, width);
  lanes_layout l;
  lanes_layout_init(&l, tab, width, height);
  segment *segs;
  size_t n = build_segments(k, l.left, l.right, &segs);

  /* Lane backgrounds and labels with each lane's share. */
  for (int lane = 0; lane < l.lanes; lane++) {
    double y = l.top + lane * l.lane_h;
    rd_fill_rect(cr, 0, y, width, l.lane_h, lane % 2 ? 0xf3f4f7 : 0xfafbfc);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
      total += tab == MPROF_RENDER_FLAME ? segs[i].category[lane]
                                         : segs[i].family[lane];
    uint32_t color = tab == MPROF_RENDER_FLAME
                         ? mprof_render_category_color(lane)
                         : mprof_render_family_color(lane);
    rd_fill_rect(cr, PAD, y + 4, 4, l.lane_h - 8, color);
    char pct[16];
    mprof_format_percent(pct, sizeof pct,
                         (double)total / (double)k->stats->samples);
    rd_rgb(cr, RD_TEXT);
    double fs = fmin(12.0, fmax(8.0, l.lane_h * 0.3));
    rd_font(cr, fs, 1, 0);
    double ty = y + l.lane_h / 2 + (l.lane_h >= 2.6 * fs ? -1 : fs * 0.35);
    rd_text_fit(cr, PAD + 10, ty, GUTTER - PAD - 16,
                tab == MPROF_RENDER_FLAME ? mprof_render_category_title(lane)
                                          : mprof_render_family_title(lane));
    if (l.lane_h >= 2.6 * fs) {
      rd_rgb(cr, RD_TEXT_DIM);
      rd_font(cr, fs - 1, 0, 0);
      rd_text(cr, PAD + 10, ty + fs + 2, pct);
    }
  }
  rd_vline(cr, l.left - 1, l.top, l.bottom, RD_RULE);

  /* The instructions. */
  uint64_t hottest = k->pcs[k->hot[0]].samples;
  for (size_t i = 0; i < n; i++) {
    const segment *s = &segs[i];
    double x0 = floor(s->x0), x1 = fmax(x0 + 1, floor(s->x1));
    if (x1 > l.right)
      x1 = l.right;
    for (int lane = 0; lane < l.lanes; lane++) {
      uint64_t v =
          tab == MPROF_RENDER_FLAME ? s->category[lane] : s->family[lane];
      if (!v)
        continue;
      double intensity;
      uint32_t base;
      if (tab == MPROF_RENDER_FLAME) {
        intensity = sqrt((double)k->pcs[s->hottest].samples / (double)hottest);
        base = mprof_render_category_color(lane);
      } else {
        intensity = (double)v / (double)s->samples;
        base = mprof_render_family_color(lane);
      }
      double y = l.top + lane * l.lane_h;
      rd_rgb(cr, rd_lighten(base, (tab == MPROF_RENDER_FLAME ? 0.8 : 0.92) *
                                      (1.0 - intensity)));
      cairo_rectangle(cr, x0, y + 2, x1 - x0, l.lane_h - 4);
      cairo_fill(cr);
    }
    /* Instruction boundaries and opcodes where there is room. */
    if (x1 - x0 >= 4) {
      rd_rgba(cr, 0xffffff, 0.9);
      cairo_rectangle(cr, x1 - 1, l.top, 1, l.bottom - l.top);
      cairo_fill(cr);
    }
    const mprof_render_pc *pc = &k->pcs[s->hottest];
    if (tab == MPROF_RENDER_FLAME && s->last - s->first == 1 && x1 - x0 >= 34 &&
        l.lane_h >= 14 && pc->insn) {
      double y = l.top + pc->category * l.lane_h;
      /* White on the darkest cells. */
      double intensity = sqrt((double)pc->samples / (double)hottest);
      rd_rgb(cr, intensity > 0.8 ? 0xffffff : RD_TEXT);
      rd_font(cr, fmin(11, l.lane_h - 6), 0, 1);
      rd_text_fit(cr, x0 + 3, y + l.lane_h / 2 + 4, x1 - x0 - 6,
                  pc->insn->opcode);
    }
  }

  /* The axis: instruction offsets at column edges, at least 90 px apart. */
  rd_hline(cr, l.left, l.right, l.bottom, RD_RULE);
  rd_font(cr, 10, 0, 1);
  double last_label = -1e9;
  for (size_t i = 0; i < n; i++) {
    double x = floor(segs[i].x0);
    if (x - last_label < 90)
      continue;
    char text[32];
    snprintf(text, sizeof text, "0x%04x", k->pcs[segs[i].first].offset);
    rd_fill_rect(cr, x, l.bottom, 1, 5, RD_TEXT_DIM);
    rd_text(cr, x + 2, l.bottom + 15, text);
    last_label = x;
  }
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 0);
  rd_text_fit(cr, PAD, l.bottom + 15, GUTTER - PAD - 6, "offset order \u2192");
  free(segs);
}

static void hit_test(const mprof_render_model *model,
                     const mprof_render_view *view, int tab, double width,
                     double height, double x, double y, mprof_render_hit *hit) {
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (!k || !k->stats->samples)
    return;
  lanes_layout l;
  lanes_layout_init(&l, tab, width, height);
  if (y < l.top || y >= l.bottom)
    return;
  hit->kernel = view->kernel;
  hit->lane = (int)floor((y - l.top) / l.lane_h);
  if (hit->lane >= l.lanes)
    hit->lane = l.lanes - 1;
  hit->kind = MPROF_HIT_LANE;
  if (x < l.left)
    return;
  segment *segs;
  size_t n = build_segments(k, l.left, l.right, &segs);
  for (size_t i = 0; i < n; i++) {
    double x0 = floor(segs[i].x0), x1 = fmax(x0 + 1, floor(segs[i].x1));
    if (x < x0 || x >= x1)
      continue;
    uint64_t v = tab == MPROF_RENDER_FLAME ? segs[i].category[hit->lane]
                                           : segs[i].family[hit->lane];
    if (v) {
      hit->kind = MPROF_HIT_PC;
      /* In Flame, the hottest instruction of this lane in the column. */
      size_t best = segs[i].hottest;
      if (tab == MPROF_RENDER_FLAME) {
        best = segs[i].first;
        for (size_t p = segs[i].first; p < segs[i].last; p++)
          if ((int)k->pcs[p].category == hit->lane &&
              ((int)k->pcs[best].category != hit->lane ||
               k->pcs[p].samples > k->pcs[best].samples))
            best = p;
      }
      hit->pc = (int)best;
    }
    break;
  }
  free(segs);
}

/* Flame and Raster share their x layout: instructions in offset order,
 * each as wide as its share of the samples. */
const rs_tab_view rs_lanes_tab = {.draw = draw, .hit = hit_test};
