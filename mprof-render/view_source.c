/*
 * mprof-render — the Source tab: the file of a kernel's hottest line, line
 * by line, each with a bar of its share of the kernel's PC samples, a strip
 * of its stall mix (the Hotspots colours, stacked in the same order) and
 * its code; under every sampled line, its sampled SASS instructions. The
 * numbers are libmprof's per-line analysis (lines.h); the text is the
 * trace's embedded copy or the file on disk (sources.h).
 *
 * Only the rows on screen are drawn.
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
#define TOP (HEADER + TABLE_HEAD)
#define ROW 18.0
#define PAD 16.0
#define SASS_SHOWN 6 /* sampled instructions unfolded under a line */

/* Where the columns start. */
#define X_LINE (PAD + 44) /* right edge of the line number */
#define X_BAR (PAD + 56)  /* share bar, BAR_W wide */
#define BAR_W 60.0
#define X_SHARE (X_BAR + BAR_W + 6)
#define X_STALL (X_SHARE + 52) /* stall strip, STALL_W wide */
#define STALL_W 110.0
#define X_CODE (X_STALL + STALL_W + 14)

#define HOT_ROW 0xfff4d6u /* background of a sampled line */

/* A row of the tab: a source line, or a sampled instruction under one. */
typedef struct src_row {
  uint32_t line;                    /* line number (both kinds) */
  const mprof_line_stats *stats;    /* the line's numbers; NULL: none */
  const mprof_line_instruction *in; /* an instruction row; NULL: a line */
  size_t more;                      /* "N more" row after the instructions */
} src_row;

typedef struct src_page {
  const mprof_lines *lines;
  mprof_sources *sources;
  const char *file;    /* the file shown; NULL: nothing to show */
  uint32_t text_lines; /* lines of its text; 0 when not available */
  uint64_t max_samples;
} src_page;

/* The file the tab shows for @p lines: that of the hottest line with a
 * number. */
static int page_of(const mprof_render_model *m, int kernel, src_page *p) {
  memset(p, 0, sizeof *p);
  p->lines = mprof_render__lines(m, kernel);
  p->sources = mprof_render__sources(m);
  for (size_t i = 0; p->lines && i < mprof_lines_count(p->lines); i++) {
    const mprof_line_stats *s = mprof_lines_at(p->lines, i);
    if (!p->file && s->line)
      p->file = s->file;
    if (s->samples > p->max_samples)
      p->max_samples = s->samples;
  }
  if (p->file)
    p->text_lines = mprof_sources_line_count(p->sources, p->file);
  return p->file != NULL;
}

static int by_line_number(const void *a, const void *b) {
  const mprof_line_stats *x = *(const mprof_line_stats *const *)a;
  const mprof_line_stats *y = *(const mprof_line_stats *const *)b;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* The rows of @p p, in order: every line of the text (or, without it,
 * every line the table names), each sampled line followed by its sampled
 * instructions. *count gets how many; the caller frees. */
static src_row *page_rows(const src_page *p, size_t *count) {
  *count = 0;
  size_t n = mprof_lines_count(p->lines), known = 0;
  const mprof_line_stats **mine =
      (const mprof_line_stats **)calloc(n + 1, sizeof *mine);
  if (!mine)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const mprof_line_stats *s = mprof_lines_at(p->lines, i);
    if (s->line && strcmp(s->file, p->file) == 0)
      mine[known++] = s;
  }
  qsort(mine, known, sizeof *mine, by_line_number);
  size_t extra = 0;
  for (size_t i = 0; i < known; i++)
    extra += mine[i]->samples ? SASS_SHOWN + 1 : 0;
  size_t cap = (p->text_lines ? p->text_lines : known) + extra + 1;
  src_row *rows = (src_row *)calloc(cap, sizeof *rows);
  if (!rows) {
    free(mine);
    return NULL;
  }
  size_t r = 0, k = 0;
  uint32_t last = p->text_lines ? p->text_lines : 0;
  for (uint32_t line = 1; p->text_lines ? line <= last : k < known; line++) {
    if (!p->text_lines)
      line = mine[k]->line;
    const mprof_line_stats *s = NULL;
    while (k < known && mine[k]->line < line)
      k++;
    if (k < known && mine[k]->line == line)
      s = mine[k++];
    rows[r].line = line;
    rows[r++].stats = s;
    if (!s || !s->samples)
      continue;
    size_t shown = 0, sampled = 0;
    for (size_t i = 0; i < s->instruction_count; i++) {
      const mprof_line_instruction *in =
          mprof_lines_instruction_find(p->lines, s->offsets[i]);
      if (!in || !in->samples)
        continue;
      sampled++;
      if (shown < SASS_SHOWN) {
        rows[r].line = line;
        rows[r].stats = s;
        rows[r++].in = in;
        shown++;
      }
    }
    if (sampled > shown) {
      rows[r].line = line;
      rows[r].stats = s;
      rows[r++].more = sampled - shown;
    }
    if (!p->text_lines && k >= known)
      break;
  }
  free(mine);
  *count = r;
  return rows;
}

/* The stall mix of @p s as a strip @p w wide: its plain reasons, in the
 * Hotspots order (by Raster family), each as wide as its share. */
static void stall_strip(cairo_t *cr, const mprof_render_model *m,
                        const mprof_line_stats *s, double x, double y, double w,
                        double h) {
  rd_fill_rect(cr, x, y, w, h, 0xe6e8ee);
  if (!s->samples)
    return;
  for (int f = 0; f < MPROF_FAM_COUNT; f++)
    for (size_t j = 0; j < s->reason_count; j++) {
      const mprof_reason_samples *rs = mprof_line_reason(s, j);
      const mprof_render_reason *r = mprof_render_reason_at(m, rs->reason);
      if (!r || r->not_issued || (int)r->family != f)
        continue;
      double part = w * (double)rs->samples / (double)s->samples;
      rd_fill_rect(cr, x, y, part, h, r->color);
      x += part;
    }
}

static void draw_row(cairo_t *cr, const mprof_render_model *m,
                     const src_page *p, const src_row *row, double y,
                     double width) {
  char text[1024];
  double base = y + 13;
  const mprof_line_stats *s = row->stats;
  if (row->in || row->more) {
    /* A sampled instruction of the line above, indented under its code. */
    rd_fill_rect(cr, X_BAR, y, width - X_BAR, ROW, 0xf6f7f9);
    rd_font(cr, 10.5, 0, 1);
    rd_rgb(cr, RD_TEXT_DIM);
    if (row->more) {
      snprintf(text, sizeof text, "(%zu more sampled instructions)", row->more);
      rd_text(cr, X_CODE, base, text);
      return;
    }
    const mprof_line_instruction *in = row->in;
    double share = s->samples ? (double)in->samples / (double)s->samples : 0.0;
    rd_fill_rect(cr, X_BAR, y + 6, fmax(1, BAR_W * share * 0.5), ROW - 12,
                 0x9aa3b5);
    mprof_format_percent(text, sizeof text, share);
    rd_text(cr, X_SHARE, base, text);
    snprintf(text, sizeof text, "0x%04x", in->offset);
    rd_text(cr, X_STALL, base, text);
    if (in->instruction && *in->instruction->opcode)
      rd_format_sass(text, sizeof text, in->instruction);
    else
      snprintf(text, sizeof text, "(no SASS text: mprof sass adds it)");
    rd_rgb(cr, RD_TEXT);
    rd_text_fit(cr, X_CODE, base, width - X_CODE - PAD, text);
    return;
  }
  if (s && s->samples)
    rd_fill_rect(cr, 0, y, width, ROW, HOT_ROW);
  rd_font(cr, 10.5, 0, 1);
  rd_rgb(cr, RD_TEXT_DIM);
  snprintf(text, sizeof text, "%u", row->line);
  rd_text_right(cr, X_LINE, base, text);
  if (s && s->samples) {
    double w = p->max_samples
                   ? BAR_W * (double)s->samples / (double)p->max_samples
                   : 0;
    rd_fill_rect(cr, X_BAR, y + 3, fmax(1, w), ROW - 6, RD_SELECTION);
    rd_rgb(cr, RD_TEXT);
    mprof_format_percent(text, sizeof text, s->share);
    rd_text(cr, X_SHARE, base, text);
    stall_strip(cr, m, s, X_STALL, y + 3, STALL_W, ROW - 6);
  } else if (s) {
    /* Code of the kernel that was never sampled: a thin mark. */
    rd_fill_rect(cr, X_BAR, y + ROW / 2 - 1, 4, 2, RD_RULE);
  }
  size_t len = 0;
  const char *code =
      p->text_lines ? mprof_sources_line(p->sources, p->file, row->line, &len)
                    : NULL;
  if (code) {
    if (len >= sizeof text)
      len = sizeof text - 1;
    /* Tabs as spaces: Cairo draws a tab as nothing. */
    for (size_t i = 0; i < len; i++)
      text[i] = code[i] == '\t' ? ' ' : code[i];
    text[len] = '\0';
  } else {
    snprintf(text, sizeof text, "%s", p->text_lines ? "" : "...");
  }
  rd_rgb(cr, s && s->samples ? RD_TEXT : 0x3c4048);
  rd_text_fit(cr, X_CODE, base, width - X_CODE - PAD, text);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/* The header: the kernel, the file and where its text came from, the
 * other files with their shares; then the column titles. */
static void header(cairo_t *cr, const mprof_render_model *m,
                   const mprof_render_kernel *k, const src_page *p,
                   double width) {
  char text[1024], share[32], samples[32];
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_BACKGROUND);
  rd_fill_rect(cr, PAD, 12, 6, 18, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  double w = rd_kernel_fit(cr, PAD + 12, 27, width * 0.45, k);
  double in_file = 0;
  for (size_t i = 0; i < mprof_lines_count(p->lines); i++) {
    const mprof_line_stats *s = mprof_lines_at(p->lines, i);
    if (s->line && strcmp(s->file, p->file) == 0)
      in_file += s->share;
  }
  int state = mprof_sources_state(p->sources, p->file);
  mprof_format_percent(share, sizeof share, in_file);
  mprof_format_count(samples, sizeof samples, mprof_lines_samples(p->lines));
  snprintf(text, sizeof text, "%s: %s of %s samples · %s", base_name(p->file),
           share, samples,
           state == MPROF_SOURCE_EMBEDDED ? "code from the trace"
           : state == MPROF_SOURCE_DISK   ? "code from disk"
           : state == MPROF_SOURCE_MISSING
               ? "code missing when recorded"
               : "code not found (mprof sass --source-root DIR)");
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11.5, 0, 0);
  rd_text_fit(cr, PAD + 24 + w, 27, width - (PAD + 24 + w) - PAD, text);
  /* The other files of the kernel, by share: the picker's choices. */
  size_t at = (size_t)snprintf(text, sizeof text, "%s", "");
  for (size_t f = 0; f < mprof_lines_file_count(p->lines); f++) {
    const char *file = mprof_lines_file(p->lines, f);
    if (!*file || strcmp(file, p->file) == 0 || at >= sizeof text - 64)
      continue;
    double s = 0;
    for (size_t i = 0; i < mprof_lines_count(p->lines); i++)
      if (mprof_lines_at(p->lines, i)->file_index == f)
        s += mprof_lines_at(p->lines, i)->share;
    mprof_format_percent(share, sizeof share, s);
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%s %s",
                           at ? " · " : "also: ", base_name(file), share);
  }
  rd_text_fit(cr, PAD, 50, width - 2 * PAD, text);
  rd_fill_rect(cr, 0, HEADER, width, TABLE_HEAD, RD_PANEL);
  rd_hline(cr, 0, width, TOP - 1, RD_RULE);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 1, 0);
  double ty = HEADER + 15;
  rd_text_right(cr, X_LINE, ty, "line");
  rd_text(cr, X_BAR, ty, "share");
  rd_text(cr, X_STALL, ty, "stall mix");
  rd_text(cr, X_CODE, ty, "code, with the sampled SASS of each hot line");
  (void)m;
}

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (rd_no_samples(cr, k, width, height))
    return;
  src_page p;
  if (!page_of(model, view->kernel, &p)) {
    char title[1024];
    snprintf(title, sizeof title, "No source lines for %s", k->short_name);
    mprof_render_draw_message(
        cr, width, height, title,
        "Its code has no line table: build it with nvcc -lineinfo (library "
        "kernels such as cuBLAS have none). Its SASS is in Hotspots.");
    return;
  }
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  size_t count;
  src_row *rows = page_rows(&p, &count);
  if (!rows)
    return;
  cairo_save(cr);
  cairo_rectangle(cr, 0, TOP, width, fmax(0, height - TOP));
  cairo_clip(cr);
  size_t first = view->scroll_y > 0 ? (size_t)floor(view->scroll_y / ROW) : 0;
  for (size_t i = first; i < count; i++) {
    double y = TOP + (double)i * ROW - view->scroll_y;
    if (y > height)
      break;
    draw_row(cr, model, &p, &rows[i], y, width);
  }
  cairo_restore(cr);
  free(rows);
  header(cr, model, k, &p, width);
}

static double content(const mprof_render_model *model,
                      const mprof_render_view *view, int tab, double width) {
  (void)tab;
  (void)width;
  src_page p;
  if (!rs_kernel(model, view->kernel) || !page_of(model, view->kernel, &p))
    return 0;
  size_t count;
  free(page_rows(&p, &count));
  return TOP + (double)count * ROW + PAD;
}

/* An instruction row is the instruction's PC (as in Hotspots). */
static void hit_test(const mprof_render_model *model,
                     const mprof_render_view *view, int tab, double width,
                     double height, double x, double y, mprof_render_hit *hit) {
  (void)tab;
  (void)width;
  (void)height;
  (void)x;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  src_page p;
  if (!k || y < TOP || !page_of(model, view->kernel, &p))
    return;
  hit->kernel = view->kernel;
  size_t count;
  src_row *rows = page_rows(&p, &count);
  double at = floor((y - TOP + view->scroll_y) / ROW);
  if (rows && at >= 0 && at < (double)count && rows[(size_t)at].in) {
    uint32_t offset = rows[(size_t)at].in->offset;
    for (size_t i = 0; i < k->pc_count; i++)
      if (k->pcs[i].offset == offset) {
        hit->kind = MPROF_HIT_PC;
        hit->pc = (int)i;
        break;
      }
  }
  free(rows);
}

void mprof_render_view_open_source_tab(mprof_render_view *view,
                                       const mprof_render_model *model,
                                       double height) {
  src_page p;
  if (!view || !rs_kernel(model, view->kernel) ||
      !page_of(model, view->kernel, &p))
    return;
  const mprof_line_stats *hot = mprof_lines_at(p.lines, 0);
  size_t count;
  src_row *rows = page_rows(&p, &count);
  double y = 0;
  for (size_t i = 0; rows && i < count; i++)
    if (!rows[i].in && !rows[i].more && rows[i].stats == hot) {
      y = (double)i * ROW;
      break;
    }
  free(rows);
  double visible = height - TOP;
  view->scroll_y = y + ROW > visible / 2 ? fmax(0, y - visible / 4) : 0;
}

const rs_tab_view rs_source_tab = {
    .draw = draw, .hit = hit_test, .content = content};
