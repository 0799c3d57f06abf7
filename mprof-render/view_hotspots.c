/*
 * mprof-render — the Hotspots view: a kernel's instructions ranked by
 * sample share, with SASS, source line and a stall breakdown bar per
 * instruction. There is no time axis: PC samples say where warps were, not
 * when.
 *
 * Rows are drawn only where they are visible, so a kernel with a hundred
 * thousand sampled instructions costs what a screenful costs.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

#define HEADER 66.0
#define TABLE_HEAD 22.0
#define ROW 22.0
#define TOP (HEADER + TABLE_HEAD)
#define PAD 16.0

typedef struct columns {
  double rank, share, samples, offset, sass, line, stalls, stalls_w;
} columns;

static void layout(columns *c, double width) {
  c->rank = PAD;
  c->share = PAD + 34;
  c->samples = c->share + 110;
  c->offset = c->samples + 80;
  c->sass = c->offset + 66;
  c->stalls_w = fmin(260, fmax(120, width * 0.22));
  c->stalls = width - PAD - c->stalls_w;
  c->line = c->stalls - 150;
  if (c->line < c->sass + 160) {
    c->line = c->sass + 160;
    c->stalls = c->line + 150;
  }
}

static const mprof_render_kernel *selected_kernel(const mprof_render_model *m,
                                                  const mprof_render_view *v) {
  return v->kernel >= 0 ? mprof_render_kernel_at(m, (size_t)v->kernel) : NULL;
}

double mprof_render__hotspots_content(const mprof_render_model *model,
                                      const mprof_render_view *view) {
  const mprof_render_kernel *k = selected_kernel(model, view);
  return TOP + (k ? (double)k->pc_count : 0) * ROW + PAD;
}

/* Reasons in family order, so that every bar stacks its colours alike. */
static size_t reason_order(const mprof_render_model *m, size_t *order,
                           size_t max) {
  size_t n = 0;
  for (int f = 0; f < MPROF_FAM_COUNT; f++)
    for (size_t r = 0; r < mprof_render_reason_count(m) && n < max; r++) {
      const mprof_render_reason *reason = mprof_render_reason_at(m, r);
      if (!reason->not_issued && (int)reason->family == f)
        order[n++] = r;
    }
  return n;
}

static void legend(cairo_t *cr, const mprof_render_model *m,
                   const mprof_render_kernel *k, double x, double y,
                   double right) {
  size_t order[256];
  size_t n = reason_order(m, order, 256);
  uint64_t sums[256];
  for (size_t j = 0; j < n; j++)
    sums[j] = mprof_render__kernel_reason(m, k, order[j]);
  rd_font(cr, 10.5, 0, 0);
  double lx = x;
  for (size_t j = 0; j < n; j++) {
    if (!sums[j])
      continue;
    const mprof_render_reason *r = mprof_render_reason_at(m, order[j]);
    double w = rd_text_width(cr, r->name) + 24;
    if (lx + w > right) {
      if (y > 50)
        break; /* two lines at most */
      lx = x;
      y += 15;
    }
    rd_fill_rect(cr, lx, y - 9, 10, 10, r->color);
    rd_rgb(cr, RD_TEXT);
    rd_text(cr, lx + 14, y, r->name);
    lx += w;
  }
}

void mprof_render__draw_hotspots(cairo_t *cr, const mprof_render_model *model,
                                 const mprof_render_view *view, double width,
                                 double height) {
  const mprof_render_kernel *k = selected_kernel(model, view);
  if (rd_no_samples(cr, k, width, height))
    return;
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  char buf[1024], text[1024];
  columns c;
  layout(&c, width);
  size_t order[256];
  size_t nr = reason_order(model, order, 256);
  double max_samples = (double)k->pcs[k->hot[0]].samples;

  /* Rows first, clipped below the header; the header is drawn over. */
  cairo_save(cr);
  cairo_rectangle(cr, 0, TOP, width, fmax(0, height - TOP));
  cairo_clip(cr);
  size_t first = view->scroll_y > 0 ? (size_t)floor(view->scroll_y / ROW) : 0;
  for (size_t i = first; i < k->pc_count; i++) {
    double y = TOP + (double)i * ROW - view->scroll_y;
    if (y > height)
      break;
    const mprof_render_pc *pc = &k->pcs[k->hot[i]];
    if (i % 2)
      rd_fill_rect(cr, 0, y, width, ROW, 0xf2f3f6);
    double base = y + 15;
    double share = (double)pc->samples / (double)k->stats->samples;
    rd_rgb(cr, RD_TEXT_DIM);
    rd_font(cr, 11, 0, 1);
    snprintf(text, sizeof text, "%zu", i + 1);
    rd_text_right(cr, c.share - 8, base, text);
    rd_fill_rect(cr, c.share, y + 5, fmax(1, 46 * pc->samples / max_samples),
                 ROW - 10, mprof_render_category_color((int)pc->category));
    rd_rgb(cr, RD_TEXT);
    mprof_format_percent(text, sizeof text, share);
    rd_text(cr, c.share + 52, base, text);
    mprof_format_count(text, sizeof text, pc->samples);
    rd_text_right(cr, c.offset - 14, base, text);
    snprintf(text, sizeof text, "0x%04x", pc->offset);
    rd_text(cr, c.offset, base, text);
    rd_format_sass(text, sizeof text, pc->insn);
    rd_text_fit(cr, c.sass, base, c.line - c.sass - 10, text);
    rd_format_line(text, sizeof text, pc->insn);
    rd_rgb(cr, RD_TEXT_DIM);
    rd_text_fit(cr, c.line, base, c.stalls - c.line - 10, *text ? text : "-");
    /* The stall breakdown: as long as the instruction's samples relative
     * to the hottest one, split by reason. */
    double bx = c.stalls, bw = c.stalls_w * pc->samples / max_samples;
    for (size_t j = 0; j < nr && pc->samples; j++) {
      uint64_t v = mprof_render__pc_reason(pc, order[j]);
      if (!v)
        continue;
      double w = bw * (double)v / (double)pc->samples;
      rd_fill_rect(cr, bx, y + 4, w, ROW - 8,
                   mprof_render_reason_at(model, order[j])->color);
      bx += w;
    }
  }
  cairo_restore(cr);

  /* Header: kernel, totals, legend; then the column titles. */
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_BACKGROUND);
  rd_fill_rect(cr, PAD, 12, 6, 18, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  double w = rd_text_fit(cr, PAD + 12, 27, width * 0.55,
                         mprof_render_short_name(buf, sizeof buf, k->name));
  char samples[32];
  mprof_format_count(samples, sizeof samples, k->stats->samples);
  snprintf(text, sizeof text, "%zu instructions sampled, %s samples%s",
           k->pc_count, samples,
           k->stats->function ? "" : " (no SASS: no sidecar)");
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11.5, 0, 0);
  rd_text_fit(cr, PAD + 24 + w, 27, width - (PAD + 24 + w) - PAD, text);
  legend(cr, model, k, PAD, 50, width - PAD);
  rd_fill_rect(cr, 0, HEADER, width, TABLE_HEAD, RD_PANEL);
  rd_hline(cr, 0, width, TOP - 1, RD_RULE);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 1, 0);
  double ty = HEADER + 15;
  rd_text_right(cr, c.share - 8, ty, "#");
  rd_text(cr, c.share, ty, "share");
  rd_text_right(cr, c.offset - 14, ty, "samples");
  rd_text(cr, c.offset, ty, "offset");
  rd_text(cr, c.sass, ty, "SASS");
  rd_text(cr, c.line, ty, "source");
  rd_text(cr, c.stalls, ty, "stall breakdown");
}

void mprof_render__hit_hotspots(const mprof_render_model *model,
                                const mprof_render_view *view, double width,
                                double height, double x, double y,
                                mprof_render_hit *hit) {
  (void)width;
  (void)height;
  (void)x;
  const mprof_render_kernel *k = selected_kernel(model, view);
  if (!k || y < TOP)
    return;
  hit->kernel = view->kernel;
  double at = floor((y - TOP + view->scroll_y) / ROW);
  if (at < 0 || at >= (double)k->pc_count)
    return;
  hit->kind = MPROF_HIT_PC;
  hit->pc = (int)k->hot[(size_t)at];
}
