/*
 * mprof-render — the Source tab: the file of a kernel's hottest line, line
 * by line, each with a bar of its share of the kernel's PC samples, a strip
 * of its stall mix (the Hotspots colours, stacked in the same order) and
 * its code; under every sampled line, its sampled SASS instructions. The
 * numbers are libmprof's per-line analysis (lines.h); the text is the
 * trace's embedded copy or the file on disk (sources.h).
 *
 * The view says which of the kernel's files is shown (source_file), which
 * line is marked (source_line: where navigation went) and what is searched
 * (source_find: its matches are marked in the code). A kernel without a
 * line table (a library's: cuBLAS, cuDNN) says so once, in the header, and
 * lists its sampled SASS by offset instead.
 *
 * Only the rows on screen are drawn.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
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
#define MARK_W 4.0        /* the marked line's bar, at the left edge */
#define FOUND 0xffd84du   /* behind a match of the search */

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
  /* No line has a number (a library kernel): the sampled SASS of line 0,
   * by offset, is the page. */
  const mprof_line_stats *sass_only;
  uint64_t max_instruction; /* sass_only: the most samples of one */
} src_page;

/* A file of the kernel with line numbers. */
typedef struct src_file {
  const char *path;
  uint64_t samples;
  double share;
  size_t first; /* its first line in the lines' order: ties go by it */
} src_file;

static int by_samples(const void *a, const void *b) {
  const src_file *x = (const src_file *)a, *y = (const src_file *)b;
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The files of @p lines that have numbered lines, most samples first;
 * *count gets how many. The caller frees; NULL when none. */
static src_file *files_of(const mprof_lines *lines, size_t *count) {
  *count = 0;
  size_t n = mprof_lines_file_count(lines);
  src_file *files = n ? (src_file *)calloc(n, sizeof *files) : NULL;
  if (!files)
    return NULL;
  for (size_t f = 0; f < n; f++)
    files[f].first = SIZE_MAX;
  for (size_t i = 0; i < mprof_lines_count(lines); i++) {
    const mprof_line_stats *s = mprof_lines_at(lines, i);
    if (!s->line || s->file_index >= n)
      continue;
    src_file *f = &files[s->file_index];
    f->path = s->file;
    f->samples += s->samples;
    f->share += s->share;
    if (f->first == SIZE_MAX)
      f->first = i;
  }
  size_t kept = 0;
  for (size_t f = 0; f < n; f++)
    if (files[f].path)
      files[kept++] = files[f];
  qsort(files, kept, sizeof *files, by_samples);
  *count = kept;
  if (!kept) {
    free(files);
    return NULL;
  }
  return files;
}

/* The file the tab shows for @p view: its source_file, else that of the
 * kernel's hottest line with a number. */
static int page_of(const mprof_render_model *m, const mprof_render_view *view,
                   src_page *p) {
  memset(p, 0, sizeof *p);
  p->lines = mprof_render__lines(m, view->kernel);
  p->sources = mprof_render__sources(m);
  for (size_t i = 0; p->lines && i < mprof_lines_count(p->lines); i++) {
    const mprof_line_stats *s = mprof_lines_at(p->lines, i);
    if (!p->file && s->line)
      p->file = s->file;
    if (s->samples > p->max_samples)
      p->max_samples = s->samples;
  }
  if (p->file && view->source_file > 0) {
    size_t n;
    src_file *files = files_of(p->lines, &n);
    if (files && (size_t)view->source_file <= n)
      p->file = files[view->source_file - 1].path;
    free(files);
  }
  if (p->file) {
    p->text_lines = mprof_sources_line_count(p->sources, p->file);
    return 1;
  }
  /* Only line 0: a kernel without a line table. Its SASS, when sampled. */
  for (size_t i = 0; p->lines && i < mprof_lines_count(p->lines); i++)
    if (mprof_lines_at(p->lines, i)->samples)
      p->sass_only = mprof_lines_at(p->lines, i);
  for (size_t i = 0;
       p->sass_only && i < mprof_lines_instruction_count(p->lines); i++) {
    const mprof_line_instruction *in = mprof_lines_instruction_at(p->lines, i);
    if (in->samples > p->max_instruction)
      p->max_instruction = in->samples;
  }
  return p->sass_only != NULL;
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
  if (p->sass_only) {
    size_t n = mprof_lines_instruction_count(p->lines), r = 0;
    src_row *rows = (src_row *)calloc(n + 1, sizeof *rows);
    for (size_t i = 0; rows && i < n; i++) {
      const mprof_line_instruction *in =
          mprof_lines_instruction_at(p->lines, i);
      if (in && in->samples) {
        rows[r].stats = p->sass_only;
        rows[r++].in = in;
      }
    }
    *count = r;
    return rows;
  }
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

/* A stall mix (@p count reasons, @p samples plain samples in all) as a
 * strip @p w wide: the plain reasons, in the Hotspots order (by Raster
 * family), each as wide as its share. */
static void stall_strip(cairo_t *cr, const mprof_render_model *m,
                        const mprof_reason_samples *reasons, size_t count,
                        uint64_t samples, double x, double y, double w,
                        double h) {
  rd_fill_rect(cr, x, y, w, h, 0xe6e8ee);
  if (!samples)
    return;
  for (int f = 0; f < MPROF_FAM_COUNT; f++)
    for (size_t j = 0; j < count; j++) {
      const mprof_reason_samples *rs = &reasons[j];
      const mprof_render_reason *r = mprof_render_reason_at(m, rs->reason);
      if (!r || r->not_issued || (int)r->family != f)
        continue;
      double part = w * (double)rs->samples / (double)samples;
      rd_fill_rect(cr, x, y, part, h, r->color);
      x += part;
    }
}

/* Where @p needle first occurs in @p text (@p len bytes), ignoring ASCII
 * case; -1 when it does not (or @p needle is empty). */
static long find_in(const char *text, size_t len, const char *needle) {
  size_t n = strlen(needle);
  if (!n || n > len)
    return -1;
  for (size_t i = 0; i + n <= len; i++) {
    size_t k = 0;
    while (k < n && tolower((unsigned char)text[i + k]) ==
                        tolower((unsigned char)needle[k]))
      k++;
    if (k == n)
      return (long)i;
  }
  return -1;
}

/* The code of line @p line of the page's file, or NULL. */
static const char *code_of(const src_page *p, uint32_t line, size_t *len) {
  *len = 0;
  return p->text_lines && line
             ? mprof_sources_line(p->sources, p->file, line, len)
             : NULL;
}

static void draw_row(cairo_t *cr, const mprof_render_model *m,
                     const mprof_render_view *view, const src_page *p,
                     const src_row *row, double y, double width) {
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
    if (view->source_pc && in->offset + 1u == view->source_pc)
      rd_fill_rect(cr, 0, y, MARK_W, ROW, RD_SELECTION);
    double share = s->samples ? (double)in->samples / (double)s->samples : 0.0;
    /* Under a line, half a line's bar at most; a page of SASS alone
     * scales them to its hottest. */
    double bar = p->sass_only && p->max_instruction
                     ? (double)in->samples / (double)p->max_instruction
                     : share * 0.5;
    rd_fill_rect(cr, X_BAR, y + 6, fmax(1, BAR_W * bar), ROW - 12, 0x9aa3b5);
    mprof_format_percent(text, sizeof text, share);
    rd_text(cr, X_SHARE, base, text);
    double x = X_CODE;
    char offset[32];
    snprintf(offset, sizeof offset, "0x%04x", in->offset);
    if (p->sass_only && in->pc) {
      /* A page of SASS alone: each instruction's stall mix in the
       * column, its offset before its text. */
      stall_strip(cr, m, in->pc->reasons, in->pc->reason_count, in->pc->samples,
                  X_STALL, y + 4, STALL_W, ROW - 8);
      rd_rgb(cr, RD_TEXT_DIM);
      x += rd_text(cr, X_CODE, base, offset) + 12;
    } else {
      rd_text(cr, X_STALL, base, offset);
    }
    if (in->instruction && *in->instruction->opcode)
      rd_format_sass(text, sizeof text, in->instruction);
    else
      snprintf(text, sizeof text, "(no SASS text: mprof sass adds it)");
    rd_rgb(cr, RD_TEXT);
    rd_text_fit(cr, x, base, width - x - PAD, text);
    return;
  }
  if (s && s->samples)
    rd_fill_rect(cr, 0, y, width, ROW, HOT_ROW);
  if (view->source_line && row->line == view->source_line)
    rd_fill_rect(cr, 0, y, MARK_W, ROW, RD_SELECTION);
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
    stall_strip(cr, m, s->reasons, s->reason_count, s->samples, X_STALL, y + 3,
                STALL_W, ROW - 6);
  } else if (s) {
    /* Code of the kernel that was never sampled: a thin mark. */
    rd_fill_rect(cr, X_BAR, y + ROW / 2 - 1, 4, 2, RD_RULE);
  }
  size_t len = 0;
  const char *code = code_of(p, row->line, &len);
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
  long at = code ? find_in(text, len, view->source_find) : -1;
  if (at >= 0) {
    /* The match, marked behind its text (when it is within the width). */
    size_t n = strlen(view->source_find);
    char saved = text[at + (long)n];
    text[at + (long)n] = '\0';
    double to = rd_text_width(cr, text);
    text[at + (long)n] = saved;
    saved = text[at];
    text[at] = '\0';
    double from = rd_text_width(cr, text);
    text[at] = saved;
    double right = width - PAD;
    if (X_CODE + from < right)
      rd_fill_rect(cr, X_CODE + from, y + 2, fmin(to, right - X_CODE) - from,
                   ROW - 4, FOUND);
  }
  rd_rgb(cr, s && s->samples ? RD_TEXT : 0x3c4048);
  rd_text_fit(cr, X_CODE, base, width - X_CODE - PAD, text);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/* Lines of the page's file whose code holds @p needle. */
static size_t count_found(const src_page *p, const char *needle) {
  size_t found = 0, len;
  for (uint32_t line = 1; *needle && line <= p->text_lines; line++) {
    const char *code = code_of(p, line, &len);
    found += code && find_in(code, len, needle) >= 0;
  }
  return found;
}

/* The header: the kernel, the file and where its text came from, the
 * other files with their shares (the picker's choices) and what the search
 * found; then the column titles. A kernel without a line table says so
 * here, once. */
static void header(cairo_t *cr, const mprof_render_kernel *k,
                   const mprof_render_view *view, const src_page *p,
                   double width) {
  char text[1024], share[32], samples[32];
  rd_fill_rect(cr, 0, 0, width, HEADER, RD_BACKGROUND);
  rd_fill_rect(cr, PAD, 12, 6, 18, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 15, 1, 0);
  double w = rd_kernel_fit(cr, PAD + 12, 27, width * 0.45, k);
  mprof_format_count(samples, sizeof samples, mprof_lines_samples(p->lines));
  if (p->sass_only) {
    snprintf(text, sizeof text, "%s samples \u00b7 no source lines", samples);
  } else {
    double in_file = 0;
    for (size_t i = 0; i < mprof_lines_count(p->lines); i++) {
      const mprof_line_stats *s = mprof_lines_at(p->lines, i);
      if (s->line && strcmp(s->file, p->file) == 0)
        in_file += s->share;
    }
    int state = mprof_sources_state(p->sources, p->file);
    mprof_format_percent(share, sizeof share, in_file);
    snprintf(text, sizeof text, "%s: %s of %s samples \u00b7 %s",
             base_name(p->file), share, samples,
             state == MPROF_SOURCE_EMBEDDED ? "code from the trace"
             : state == MPROF_SOURCE_DISK   ? "code from disk"
             : state == MPROF_SOURCE_MISSING
                 ? "code missing when recorded"
                 : "code not found (mprof sass --source-root DIR)");
  }
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 11.5, 0, 0);
  rd_text_fit(cr, PAD + 24 + w, 27, width - (PAD + 24 + w) - PAD, text);
  double right = width - PAD;
  if (!p->sass_only && view->source_find[0]) {
    /* What the search found, at the right of the second line. */
    size_t found = count_found(p, view->source_find);
    char what[192];
    snprintf(what, sizeof what, "\u201c%.120s\u201d: %zu line%s",
             view->source_find, found, found == 1 ? "" : "s");
    double fw = rd_text_width(cr, what);
    rd_fill_rect(cr, right - fw - 6, 38, fw + 12, 17, found ? FOUND : RD_PANEL);
    rd_rgb(cr, RD_TEXT);
    rd_text(cr, right - fw, 50, what);
    rd_rgb(cr, RD_TEXT_DIM);
    right -= fw + 18;
  }
  if (p->sass_only) {
    rd_text_fit(cr, PAD, 50, right - PAD,
                "Its code has no line table (library kernels such as cuBLAS "
                "and cuDNN ship without one; build yours with nvcc "
                "-lineinfo): its sampled SASS, by offset.");
  } else {
    /* The other files of the kernel, by share: the picker's choices. */
    size_t at = 0, n;
    text[0] = '\0';
    src_file *files = files_of(p->lines, &n);
    for (size_t f = 0; f < n && at < sizeof text - 64; f++) {
      if (strcmp(files[f].path, p->file) == 0)
        continue;
      mprof_format_percent(share, sizeof share, files[f].share);
      at += (size_t)snprintf(
          text + at, sizeof text - at, "%s%s %s",
          at ? " \u00b7 " : "also: ", base_name(files[f].path), share);
    }
    free(files);
    rd_text_fit(cr, PAD, 50, right - PAD, text);
  }
  rd_fill_rect(cr, 0, HEADER, width, TABLE_HEAD, RD_PANEL);
  rd_hline(cr, 0, width, TOP - 1, RD_RULE);
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 1, 0);
  double ty = HEADER + 15;
  if (p->sass_only) {
    rd_text(cr, X_BAR, ty, "share");
    rd_text(cr, X_STALL, ty, "stall mix");
    rd_text(cr, X_CODE, ty, "offset and sampled SASS, by offset");
    return;
  }
  rd_text_right(cr, X_LINE, ty, "line");
  rd_text(cr, X_BAR, ty, "share");
  rd_text(cr, X_STALL, ty, "stall mix");
  rd_text(cr, X_CODE, ty, "code, with the sampled SASS of each hot line");
}

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (rd_no_samples(cr, k, width, height))
    return;
  src_page p;
  if (!page_of(model, view, &p)) {
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
    draw_row(cr, model, view, &p, &rows[i], y, width);
  }
  cairo_restore(cr);
  free(rows);
  header(cr, k, view, &p, width);
}

static double content(const mprof_render_model *model,
                      const mprof_render_view *view, int tab, double width) {
  (void)tab;
  (void)width;
  src_page p;
  if (!rs_kernel(model, view->kernel) || !page_of(model, view, &p))
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
  if (!k || y < TOP || !page_of(model, view, &p))
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

/* ---- navigation ---------------------------------------------------------
 */

/* The row of line @p line of the page (a line row, not an instruction),
 * or -1. */
static long row_of_line(const src_page *p, uint32_t line) {
  size_t count;
  src_row *rows = page_rows(p, &count);
  long found = -1;
  for (size_t i = 0; rows && line && i < count; i++)
    if (!rows[i].in && !rows[i].more && rows[i].line == line) {
      found = (long)i;
      break;
    }
  free(rows);
  return found;
}

/* The row of the instruction at @p offset, or -1. */
static long row_of_pc(const src_page *p, uint32_t offset) {
  size_t count;
  src_row *rows = page_rows(p, &count);
  long found = -1;
  for (size_t i = 0; rows && i < count; i++)
    if (rows[i].in && rows[i].in->offset == offset) {
      found = (long)i;
      break;
    }
  free(rows);
  return found;
}

/* The position (1-based, the view's source_file) of @p path among the
 * kernel's files; 0 when it has none such. */
static int32_t file_number(const mprof_lines *lines, const char *path) {
  size_t n;
  src_file *files = files_of(lines, &n);
  int32_t number = 0;
  for (size_t f = 0; f < n && !number; f++)
    if (strcmp(files[f].path, path) == 0)
      number = (int32_t)f + 1;
  free(files);
  return number;
}

size_t mprof_render_source_file_count(const mprof_render_model *model,
                                      int kernel) {
  size_t n = 0;
  free(files_of(mprof_render__lines(model, kernel), &n));
  return n;
}

const char *mprof_render_source_file_at(const mprof_render_model *model,
                                        int kernel, size_t index,
                                        double *share) {
  size_t n;
  src_file *files = files_of(mprof_render__lines(model, kernel), &n);
  const char *path = index < n ? files[index].path : NULL;
  if (share)
    *share = index < n ? files[index].share : 0;
  free(files);
  return path;
}

int32_t mprof_render_source_file_find(const mprof_render_model *model,
                                      int kernel, const char *name) {
  size_t n, len = strlen(name);
  src_file *files = files_of(mprof_render__lines(model, kernel), &n);
  int32_t number = 0;
  for (size_t f = 0; f < n && !number && len; f++) {
    size_t plen = strlen(files[f].path);
    if (strcmp(files[f].path, name) == 0 ||
        (plen > len && files[f].path[plen - len - 1] == '/' &&
         strcmp(files[f].path + plen - len, name) == 0))
      number = (int32_t)f + 1;
  }
  free(files);
  return number;
}

/* The kernel's sampled lines with a number, hottest first (the lines'
 * order): *count of them, indices for mprof_lines_at(). Caller frees. */
static size_t *hot_lines(const mprof_lines *lines, size_t *count) {
  *count = 0;
  size_t n = mprof_lines_count(lines);
  size_t *hot = (size_t *)calloc(n + 1, sizeof *hot);
  for (size_t i = 0; hot && i < n; i++) {
    const mprof_line_stats *s = mprof_lines_at(lines, i);
    if (s->line && s->samples)
      hot[(*count)++] = i;
  }
  return hot;
}

/* The sampled instructions of kernel @p k (its hot list's head). */
static size_t hot_pcs(const mprof_render_kernel *k) {
  size_t n = 0;
  while (k && n < k->pc_count && k->pcs[k->hot[n]].samples)
    n++;
  return n;
}

size_t mprof_render_source_hot_count(const mprof_render_model *model,
                                     int kernel) {
  size_t n = 0;
  free(hot_lines(mprof_render__lines(model, kernel), &n));
  if (!n && !mprof_render_source_file_count(model, kernel))
    n = hot_pcs(rs_kernel(model, kernel));
  return n;
}

/* mprof_render_view_source_hot() on a kernel without lines: its sampled
 * instructions, most samples first. */
static int sass_hot(mprof_render_view *view, const mprof_render_kernel *k,
                    int step) {
  size_t n = hot_pcs(k);
  if (!n)
    return -1;
  long rank = -1;
  for (size_t r = 0; step && view->source_pc && r < n && rank < 0; r++)
    if (k->pcs[k->hot[r]].offset + 1u == view->source_pc)
      rank = (long)r;
  long to = rank < 0 ? (step < 0 ? (long)n - 1 : 0)
                     : ((rank + step) % (long)n + (long)n) % (long)n;
  view->source_file = 0;
  view->source_line = 0;
  view->source_pc = k->pcs[k->hot[to]].offset + 1;
  return (int)to;
}

int mprof_render_view_source_line(mprof_render_view *view,
                                  const mprof_render_model *model, int32_t file,
                                  uint32_t line) {
  src_page p;
  mprof_render_view v = *view;
  v.source_file = file;
  if (file < 0 ||
      (size_t)file > mprof_render_source_file_count(model, view->kernel) ||
      !rs_kernel(model, v.kernel) || !page_of(model, &v, &p) || p.sass_only)
    return -1;
  /* Line 0: the file's hottest line (the lines go hottest first), else
   * its first. */
  for (size_t i = 0; !line && i < mprof_lines_count(p.lines); i++) {
    const mprof_line_stats *s = mprof_lines_at(p.lines, i);
    if (s->line && strcmp(s->file, p.file) == 0)
      line = s->line;
  }
  if (row_of_line(&p, line) < 0)
    return -1;
  view->source_file = file;
  view->source_line = line;
  view->source_pc = 0;
  return 0;
}

int mprof_render_view_source_hot(mprof_render_view *view,
                                 const mprof_render_model *model, int step) {
  const mprof_lines *lines = mprof_render__lines(model, view->kernel);
  size_t n = 0;
  size_t *hot = lines ? hot_lines(lines, &n) : NULL;
  if (!hot || !n) {
    free(hot);
    return lines && !mprof_render_source_file_count(model, view->kernel)
               ? sass_hot(view, rs_kernel(model, view->kernel), step)
               : -1;
  }
  /* The rank of the marked line, when it is a hot one. */
  long rank = -1;
  src_page p;
  if (step && view->source_line && page_of(model, view, &p) && p.file)
    for (size_t r = 0; r < n && rank < 0; r++) {
      const mprof_line_stats *s = mprof_lines_at(lines, hot[r]);
      if (s->line == view->source_line && strcmp(s->file, p.file) == 0)
        rank = (long)r;
    }
  long to = rank < 0 ? (step < 0 ? (long)n - 1 : 0)
                     : ((rank + step) % (long)n + (long)n) % (long)n;
  const mprof_line_stats *s = mprof_lines_at(lines, hot[to]);
  free(hot);
  view->source_file = file_number(lines, s->file);
  view->source_line = s->line;
  view->source_pc = 0;
  return (int)to;
}

int mprof_render_view_source_pc(mprof_render_view *view,
                                const mprof_render_model *model,
                                uint32_t offset) {
  const mprof_lines *lines = mprof_render__lines(model, view->kernel);
  const mprof_line_instruction *in =
      lines ? mprof_lines_instruction_find(lines, offset) : NULL;
  const mprof_line_stats *s = in ? mprof_lines_at(lines, in->line_index) : NULL;
  if (!s || !s->line) {
    /* Without a line, the instruction itself on a page of SASS alone. */
    if (in && !mprof_render_source_file_count(model, view->kernel)) {
      view->source_file = 0;
      view->source_line = 0;
      view->source_pc = offset + 1;
    }
    return -1;
  }
  view->source_file = file_number(lines, s->file);
  view->source_line = s->line;
  view->source_pc = offset + 1; /* marked under its line when shown */
  return 0;
}

size_t mprof_render_view_source_find(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     const char *text, int direction) {
  snprintf(view->source_find, sizeof view->source_find, "%s", text);
  src_page p;
  if (!rs_kernel(model, view->kernel) || !page_of(model, view, &p) ||
      p.sass_only)
    return 0;
  size_t found = count_found(&p, view->source_find);
  if (!found)
    return 0;
  /* From the marked line (itself included when the search only grew),
   * round the file. */
  uint32_t n = p.text_lines, from = view->source_line ? view->source_line : 1;
  if (from > n)
    from = n;
  int step = direction < 0 ? -1 : 1;
  uint32_t line = from;
  if (direction != 0)
    line = (uint32_t)(((long)from - 1 + step + (long)n) % (long)n) + 1;
  for (uint32_t tried = 0; tried < n; tried++) {
    size_t len;
    const char *code = code_of(&p, line, &len);
    if (code && find_in(code, len, view->source_find) >= 0) {
      view->source_file = file_number(p.lines, p.file);
      view->source_line = line;
      view->source_pc = 0;
      break;
    }
    line = (uint32_t)(((long)line - 1 + step + (long)n) % (long)n) + 1;
  }
  return found;
}

void mprof_render_view_source_scroll(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     double height) {
  src_page p;
  if (!rs_kernel(model, view->kernel) || !page_of(model, view, &p))
    return;
  long row = p.sass_only
                 ? (view->source_pc ? row_of_pc(&p, view->source_pc - 1) : -1)
                 : row_of_line(&p, view->source_line);
  if (row < 0)
    return;
  double y = (double)row * ROW, visible = height - TOP;
  /* Left where it is when the line is in view; else a quarter down. */
  if (y >= view->scroll_y && y + ROW <= view->scroll_y + visible)
    return;
  view->scroll_y = fmax(0, y - visible / 4);
}

void mprof_render_view_open_source_tab(mprof_render_view *view,
                                       const mprof_render_model *model,
                                       double height) {
  if (!view || !rs_kernel(model, view->kernel) ||
      mprof_render_view_source_hot(view, model, 0) < 0)
    return;
  src_page p;
  long row = !page_of(model, view, &p) ? -1
             : p.sass_only             ? row_of_pc(&p, view->source_pc - 1)
                                       : row_of_line(&p, view->source_line);
  double y = (double)(row > 0 ? row : 0) * ROW, visible = height - TOP;
  /* No scroll while the hottest line is in the top half. */
  view->scroll_y = y + ROW > visible / 2 ? fmax(0, y - visible / 4) : 0;
}

const rs_tab_view rs_source_tab = {
    .draw = draw, .hit = hit_test, .content = content};
