/*
 * mprof-render — the Hotspots view: a kernel's instructions ranked by
 * sample share, with SASS, source line and a stall breakdown bar per
 * instruction. There is no time axis: PC samples say where warps were, not
 * when. When the kernel's global-memory accesses were counted (`record
 * blocks --memory`), each instruction also shows the share of the bytes of
 * the 32-byte sectors it touched that its threads asked for (sector
 * efficiency) beside its stall bar; a kernel with counts and no PC samples
 * lists its memory instructions, busiest first.
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

#define SECTORS_W 118.0 /* the sector-efficiency column, when shown */

typedef struct columns {
  double rank, share, samples, offset, sass, line, sectors, stalls, stalls_w;
} columns;

static void layout(columns *c, double width, int memory) {
  c->rank = PAD;
  c->share = PAD + 34;
  c->samples = c->share + 110;
  c->offset = c->samples + 80;
  c->sass = c->offset + 66;
  c->stalls_w = floor(fmin(260, fmax(120, width * 0.22))); /* whole pixels */
  c->stalls = width - PAD - c->stalls_w;
  c->sectors = memory ? c->stalls - SECTORS_W : c->stalls;
  c->line = c->sectors - 150;
  if (c->line < c->sass + 160) {
    c->line = c->sass + 160;
    c->sectors = c->line + 150;
    c->stalls = c->sectors + (memory ? SECTORS_W : 0);
  }
}

/* The kernel's counted memory instructions (none: 0). */
static size_t memory_of(const mprof_render_model *m, const mprof_render_view *v,
                        const mprof_memory_stats **out) {
  size_t count = 0;
  *out = v->kernel >= 0 ? mprof_join_memory(m->join, (size_t)v->kernel, &count)
                        : NULL;
  return count;
}

/* One instruction's sector efficiency: a bar as wide as the share of the
 * sector bytes used, amber below half, and the share. */
static void sectors_cell(cairo_t *cr, double x, double y,
                         const mprof_memory_stats *mem) {
  char text[32];
  rd_font(cr, 11, 0, 1);
  if (!mem) {
    rd_rgb(cr, RD_TEXT_DIM);
    rd_text(cr, x, y + 15, "-");
    return;
  }
  double w = 46;
  rd_fill_rect(cr, x, y + 5, w, ROW - 10, 0xe3e6ec);
  rd_fill_rect(cr, x, y + 5, fmax(1, w * fmin(1, mem->efficiency)), ROW - 10,
               mem->efficiency < 0.5 ? 0xe0a030 : 0x4f9d69);
  rd_rgb(cr, RD_TEXT);
  mprof_format_percent(text, sizeof text, mem->efficiency);
  rd_text(cr, x + w + 6, y + 15, text);
}

/* The header: the kernel's colour and name, then @p totals after it; the
 * line below is the caller's. */
static void header(cairo_t *cr, const mprof_render_kernel *k, double width,
                   const char *totals) {
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_BACKGROUND);
  rd_fill_rect(cr, PAD, 12, 6, 18, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  double w = rd_kernel_fit(cr, PAD + 12, 27, width * 0.55, k);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11.5, 0, 0);
  rd_text_fit(cr, PAD + 24 + w, 27, width - (PAD + 24 + w) - PAD, totals);
}

/* The column titles over the table; "sectors used" when @p sectors. */
static void column_titles(cairo_t *cr, const columns *c, double width,
                          const char *share, const char *count, int sectors,
                          const char *last) {
  rd_fill_rect(cr, 0, HEADER, width, TABLE_HEAD, RD_PANEL);
  rd_hline(cr, 0, width, TOP - 1, RD_RULE);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 1, 0);
  double ty = HEADER + 15;
  rd_text_right(cr, c->share - 8, ty, "#");
  rd_text(cr, c->share, ty, share);
  rd_text_right(cr, c->offset - 14, ty, count);
  rd_text(cr, c->offset, ty, "offset");
  rd_text(cr, c->sass, ty, "SASS");
  rd_text(cr, c->line, ty, "source");
  if (sectors)
    rd_text(cr, c->sectors, ty, "sectors used");
  rd_text(cr, c->stalls, ty, last);
}

/* The cells every table row starts with, row @p i at @p y: its rank, a
 * bar @p bar_w px wide in @p bar_color, @p share, @p count, the offset,
 * the @p sass text and the source line of @p insn. */
static void row_cells(cairo_t *cr, const columns *c, double width, size_t i,
                      double y, double bar_w, uint32_t bar_color, double share,
                      uint64_t count, uint32_t offset, const char *sass,
                      const mprof_sass_instruction *insn) {
  char text[1024];
  double base = y + 15;
  if (i % 2)
    rd_fill_rect(cr, 0, y, width, ROW, 0xf2f3f6);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11, 0, 1);
  snprintf(text, sizeof text, "%zu", i + 1);
  rd_text_right(cr, c->share - 8, base, text);
  rd_fill_rect(cr, c->share, y + 5, fmax(1, bar_w), ROW - 10, bar_color);
  rd_rgb(cr, RD_TEXT);
  mprof_format_percent(text, sizeof text, share);
  rd_text(cr, c->share + 52, base, text);
  mprof_format_count(text, sizeof text, count);
  rd_text_right(cr, c->offset - 14, base, text);
  snprintf(text, sizeof text, "0x%04x", offset);
  rd_text(cr, c->offset, base, text);
  rd_text_fit(cr, c->sass, base, c->line - c->sass - 10, sass);
  rd_format_line(text, sizeof text, insn);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_name_fit(cr, c->line, base, c->sectors - c->line - 10, *text ? text : "-");
}

/* A kernel with counted memory accesses and no PC samples (`record blocks
 * --memory`): its memory instructions, busiest first. */
static void draw_memory_only(cairo_t *cr, const mprof_render_model *model,
                             const mprof_render_view *view,
                             const mprof_render_kernel *k, size_t count,
                             double width, double height) {
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  const mprof_memory_stats **order =
      (const mprof_memory_stats **)malloc(count * sizeof *order);
  if (!order)
    return;
  mprof_join_memory_busiest(model->join, (size_t)view->kernel, order, count);
  uint64_t total;
  double efficiency = mprof_join_memory_totals(
      model->join, (size_t)view->kernel, &total, NULL, NULL);
  columns c;
  layout(&c, width, 1);
  char text[1024];
  double max_warps = (double)order[0]->warp_accesses;
  cairo_save(cr);
  cairo_rectangle(cr, 0, TOP, width, fmax(0, height - TOP));
  cairo_clip(cr);
  size_t first = view->scroll_y > 0 ? (size_t)floor(view->scroll_y / ROW) : 0;
  for (size_t i = first; i < count; i++) {
    double y = TOP + (double)i * ROW - view->scroll_y;
    if (y > height)
      break;
    const mprof_memory_stats *x = order[i];
    if (x->instruction)
      rd_format_sass(text, sizeof text, x->instruction);
    else
      snprintf(text, sizeof text, "%s, %u B per thread",
               mprof_memory_kind_name(x->flags), x->access_size);
    /* The reader lets every count be 0: no share or mean is then NaN. */
    double warps = (double)(x->warp_accesses ? x->warp_accesses : 1);
    row_cells(cr, &c, width, i, y,
              max_warps > 0 ? 46 * (double)x->warp_accesses / max_warps : 0,
              0x5b7db8, total ? (double)x->warp_accesses / (double)total : 0,
              x->warp_accesses, x->offset, text, x->instruction);
    sectors_cell(cr, c.sectors, y, x);
    snprintf(text, sizeof text, "%.0f B asked, %.1f sectors per warp",
             (double)x->bytes / warps, (double)x->sectors / warps);
    rd_rgb(cr, RD_TEXT_DIM);
    rd_text_fit(cr, c.stalls, y + 15, c.stalls_w, text);
  }
  cairo_restore(cr);
  free(order);

  char warps[32], eff[32];
  mprof_format_count(warps, sizeof warps, total);
  mprof_format_percent(eff, sizeof eff, efficiency);
  snprintf(text, sizeof text,
           "%zu instructions with global-memory accesses, %s warp accesses, "
           "sector efficiency %s",
           count, warps, eff);
  header(cr, k, width, text);
  rd_text_fit(cr, PAD, 50, width - 2 * PAD,
              "Counted on the device for every access (record blocks "
              "--memory); no PC samples, so no stall breakdown.");
  column_titles(cr, &c, width, "accesses", "warp", 1, "per warp access");
}

static double content(const mprof_render_model *model,
                      const mprof_render_view *view, int tab, double width) {
  (void)tab;
  (void)width;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  const mprof_memory_stats *mem;
  size_t rows = k ? k->pc_count : 0;
  if (k && !k->stats->samples)
    rows = memory_of(model, view, &mem);
  return TOP + (double)rows * ROW + PAD;
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
  size_t count;
  const mprof_reason_samples *rs =
      mprof_join_kernel_reasons(m->join, (size_t)(k - m->kernels), &count);
  uint64_t sums[256];
  for (size_t j = 0; j < n; j++)
    sums[j] = mprof_render__reason_samples(rs, count, order[j]);
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

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  const mprof_memory_stats *mem = NULL;
  size_t mem_count = k ? memory_of(model, view, &mem) : 0;
  if (k && !k->stats->samples && mem_count) {
    draw_memory_only(cr, model, view, k, mem_count, width, height);
    return;
  }
  if (rd_no_samples(cr, k, width, height))
    return;
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  char text[1024];
  columns c;
  layout(&c, width, mem_count > 0);
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
    rd_format_sass(text, sizeof text, pc->insn);
    row_cells(cr, &c, width, i, y, 46 * pc->samples / max_samples,
              mprof_render_category_color((int)pc->category),
              (double)pc->samples / (double)k->stats->samples, pc->samples,
              pc->offset, text, pc->insn);
    if (mem_count)
      sectors_cell(cr, c.sectors, y,
                   mprof_join_memory_find(model->join, (size_t)view->kernel,
                                          pc->offset));
    /* The stall breakdown: as long as the instruction's samples relative
     * to the hottest one, split by reason. */
    double bx = c.stalls, bw = c.stalls_w * pc->samples / max_samples;
    for (size_t j = 0; j < nr && pc->samples; j++) {
      uint64_t v = mprof_render__reason_samples(
          pc->stats->reasons, pc->stats->reason_count, order[j]);
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
  char samples[32];
  mprof_format_count(samples, sizeof samples, k->stats->samples);
  snprintf(text, sizeof text, "%zu instructions sampled, %s samples%s",
           k->pc_count, samples,
           k->stats->function ? "" : " (no SASS: no sidecar)");
  header(cr, k, width, text);
  legend(cr, model, k, PAD, 50, width - PAD);
  column_titles(cr, &c, width, "share", "samples", mem_count != 0,
                "stall breakdown");
}

static void hit_test(const mprof_render_model *model,
                     const mprof_render_view *view, int tab, double width,
                     double height, double x, double y, mprof_render_hit *hit) {
  (void)tab;
  (void)width;
  (void)height;
  (void)x;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (!k || y < TOP)
    return;
  hit->kernel = view->kernel;
  double at = floor((y - TOP + view->scroll_y) / ROW);
  if (at < 0 || at >= (double)k->pc_count)
    return; /* memory-only rows (no PC samples) have no instruction hit */
  hit->kind = MPROF_HIT_PC;
  hit->pc = (int)k->hot[(size_t)at];
}

const rs_tab_view rs_hotspots_tab = {
    .draw = draw, .hit = hit_test, .content = content};
