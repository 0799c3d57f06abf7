/*
 * mprof tests — the Source tab on real nvcc output: the lines fixture
 * (tests/data/lines, lines_fixture.h) with its sources embedded, drawn
 * offscreen and checked by its pixels: the hottest line highlighted with a
 * full share bar and its stall mix, its sampled instructions under it,
 * nothing highlighted elsewhere; a kernel without a line table gets a
 * message page; an instruction row hits its PC.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "analysis_util.h"
#include "lines_fixture.h"
#include "test_render_fixture.h"

#define W 1200
#define H 700
/* The tab's layout (view_source.c). */
#define TOP 88
#define ROW 18
#define X_BAR 72
#define BAR_W 60
#define X_STALL (X_BAR + BAR_W + 6 + 52)
#define STALL_W 110
#define HOT_ROW 0xfff4d6u
#define SASS_ROW 0xf6f7f9u
#define BAR 0x3d7cf0u
#define FOUND 0xffd84du

static mprof_render_model *open_embedded(const char *name, int embed) {
  const char *trace = write_trace_at(test_path(name), 1);
  if (embed) {
    const char *root = data_dir();
    mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
    so.roots = &root;
    so.root_count = 1;
    assert_int_equal(mprof_sources_embed(trace, &so, NULL), 0);
  }
  mprof_render_model *m = NULL;
  if (mprof_render_model_open(&m, trace, NULL))
    fail_msg("%s", mprof_render_error());
  return m;
}

/* The model's index of the kernel named @p mangled. */
static int32_t kernel_named(const mprof_render_model *m, const char *mangled) {
  for (size_t i = 0; i < mprof_render_kernel_count(m); i++)
    if (strcmp(mprof_render_kernel_at(m, i)->stats->mangled, mangled) == 0)
      return (int32_t)i;
  fail_msg("no kernel %s", mangled);
  return -1;
}

static uint32_t reason_color(const mprof_render_model *m, const char *name) {
  for (size_t r = 0; r < mprof_render_reason_count(m); r++)
    if (strcmp(mprof_render_reason_at(m, r)->name, name) == 0)
      return mprof_render_reason_at(m, r)->color;
  fail_msg("no reason %s", name);
  return 0;
}

static void test_source_tab_hot_line(void **state) {
  (void)state;
  mprof_render_model *m = open_embedded("source-tab.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel_named(m, INLINE_K);
  assert_int_equal(mprof_render_tab_parse("source"), MPROF_RENDER_SOURCE);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  fix_save(&img, "source.png");
  /* The header's file is the hottest line's, lines_math.cuh: its 14
   * lines, and under line @square its two sampled instructions. */
  uint32_t square = marker("lines_math.cuh", "square");
  int hot_y = TOP + ROW * (int)(square - 1) + ROW / 2;
  assert_int_equal(fix_pixel(&img, W - 20, hot_y), HOT_ROW);
  /* The hottest line's share bar is the full width. */
  int len = 0;
  while (fix_pixel(&img, X_BAR + len, hot_y) == BAR)
    len++;
  assert_true(abs(len - BAR_W) <= 1);
  /* Its stall mix: long_scoreboard 60 of 65 samples, barrier 5. */
  uint32_t lsb = reason_color(m, "long_scoreboard");
  uint32_t bar = reason_color(m, "barrier");
  size_t lsb_px = 0, bar_px = 0;
  for (int x = X_STALL; x < X_STALL + STALL_W; x++) {
    lsb_px += fix_pixel(&img, x, hot_y) == lsb;
    bar_px += fix_pixel(&img, x, hot_y) == bar;
  }
  assert_true(fabs((double)lsb_px - STALL_W * 60.0 / 65) <= 2);
  assert_true(fabs((double)bar_px - STALL_W * 5.0 / 65) <= 2);
  /* Two instruction rows under it, then line square + 1, not hot. */
  assert_int_equal(fix_pixel(&img, W - 20, hot_y + ROW), SASS_ROW);
  assert_int_equal(fix_pixel(&img, W - 20, hot_y + 2 * ROW), SASS_ROW);
  assert_int_equal(fix_pixel(&img, W - 20, hot_y + 3 * ROW),
                   fix_pixel(&img, W - 1, H - 1));
  /* No other line of the file is hot: one row of highlight. */
  size_t hot = 0;
  for (int y = TOP; y < H; y++)
    hot += fix_pixel(&img, W - 20, y) == HOT_ROW;
  assert_int_equal(hot, ROW);
  /* The text is embedded: every line of the file is a row, plus two. */
  assert_true(fabs(mprof_render_content_height(m, &v, MPROF_RENDER_SOURCE, W) -
                   (TOP + (14 + 2) * ROW + 16)) < 0.5);
  /* The first instruction row is the PC at 0x6b0. */
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_SOURCE, W, H, 400, hot_y + ROW,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  const mprof_render_kernel *k = mprof_render_kernel_at(m, v.kernel);
  assert_int_equal(k->pcs[hit.pc].offset, 0x6b0);
  fix_free(&img);
  /* Opened in a short view, the tab scrolls the hottest line to a quarter
   * of its height; in a tall one it stays at the top. */
  mprof_render_view_open_source_tab(&v, m, H);
  assert_true(v.scroll_y == 0);
  int short_h = 200;
  mprof_render_view_open_source_tab(&v, m, short_h);
  double visible = short_h - TOP;
  assert_true(fabs(v.scroll_y - (ROW * (square - 1) - visible / 4)) < 0.5);
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, short_h);
  int shown_y = (int)(TOP + visible / 4) + ROW / 2;
  assert_int_equal(fix_pixel(&img, W - 20, shown_y), HOT_ROW);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* Without the text (not embedded, not on disk), only the lines the table
 * names are rows; the hot line is still first among them. */
static void test_source_tab_without_text(void **state) {
  (void)state;
  mprof_render_model *m = open_embedded("source-tab-bare.mprof", 0);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel_named(m, INLINE_K);
  double with_text = TOP + (14 + 2) * ROW + 16;
  double height = mprof_render_content_height(m, &v, MPROF_RENDER_SOURCE, W);
  assert_true(height > TOP && height < with_text);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  assert_int_equal(fix_pixel(&img, W - 20, TOP + ROW / 2), HOT_ROW);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* A kernel whose code the trace did not keep (as a library kernel's,
 * without a line table): the header says so once, and its sampled SASS is
 * the page, an instruction a row, by offset; nothing to navigate to. */
static void test_source_tab_no_line_table(void **state) {
  (void)state;
  mprof_render_model *m = open_embedded("source-tab-nocode.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel_named(m, "_Z7nocodev");
  assert_true(v.kernel >= 0);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  fix_save(&img, "source-nocode.png");
  double busy;
  assert_true(fix_colors(&img, &busy) > 8); /* the header's text */
  assert_int_equal(fix_count(&img, HOT_ROW), 0);
  assert_int_equal(fix_count(&img, BAR), 0);
  /* One row, its one sampled instruction, 0x40; below it the page ends. */
  assert_true(fabs(mprof_render_content_height(m, &v, MPROF_RENDER_SOURCE, W) -
                   (TOP + ROW + 16)) < 0.5);
  assert_int_equal(fix_pixel(&img, W - 20, TOP + ROW / 2), SASS_ROW);
  /* Its stall mix: all long_scoreboard. */
  assert_int_equal(fix_pixel(&img, X_STALL + STALL_W / 2, TOP + ROW / 2),
                   reason_color(m, "long_scoreboard"));
  assert_int_equal(fix_pixel(&img, W - 20, TOP + ROW + ROW / 2),
                   fix_pixel(&img, W - 1, H - 1));
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_SOURCE, W, H, 400, TOP + ROW / 2,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  assert_int_equal(mprof_render_kernel_at(m, v.kernel)->pcs[hit.pc].offset,
                   0x40);
  /* No file, no line to go to: navigation goes through its sampled
   * instructions, and marks them. */
  assert_int_equal(mprof_render_source_file_count(m, v.kernel), 0);
  assert_int_equal(mprof_render_source_hot_count(m, v.kernel), 1);
  assert_int_not_equal(fix_pixel(&img, 1, TOP + ROW / 2), BAR);
  fix_free(&img);
  assert_int_equal(mprof_render_view_source_hot(&v, m, 0), 0);
  assert_int_equal(v.source_pc, 0x40 + 1);
  assert_int_equal(mprof_render_view_source_hot(&v, m, 1), 0);
  assert_int_equal(mprof_render_view_source_line(&v, m, 0, 0), -1);
  assert_int_equal(mprof_render_view_source_find(&v, m, "x", 0), 0);
  assert_int_equal(v.source_line, 0);
  v.source_pc = 0;
  assert_int_equal(mprof_render_view_source_pc(&v, m, 0x40), -1);
  assert_int_equal(v.source_pc, 0x40 + 1);
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  assert_int_equal(fix_pixel(&img, 1, TOP + ROW / 2), BAR);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* The row of line @p line of lines_kernels.cu on the Source tab of
 * lines_inline: the lines before it, and the instruction row under each
 * sampled line before it (@inline-index and @inline-call have one). */
static int cu_row(uint32_t line) {
  int row = (int)line - 1;
  row += line > marker("lines_kernels.cu", "inline-index");
  row += line > marker("lines_kernels.cu", "inline-call");
  return row;
}

static size_t count_in_row(const fix_image *img, int row, uint32_t color) {
  size_t n = 0;
  for (int y = TOP + ROW * row; y < TOP + ROW * (row + 1); y++)
    for (int x = 0; x < W; x++)
      n += fix_pixel(img, x, y) == color;
  return n;
}

/* Hottest, next hottest round the list (into the other file and back), a
 * file by name, an instruction's line, and the search, each drawn. */
static void test_source_tab_navigation(void **state) {
  (void)state;
  mprof_render_model *m = open_embedded("source-tab-nav.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel_named(m, INLINE_K);
  uint32_t square = marker("lines_math.cuh", "square");
  uint32_t call = marker("lines_kernels.cu", "inline-call");
  uint32_t index = marker("lines_kernels.cu", "inline-index");
  /* Two files, the header first (65 of 80 samples); three hot lines. */
  assert_int_equal(mprof_render_source_file_count(m, v.kernel), 2);
  double share;
  assert_string_equal(mprof_render_source_file_at(m, v.kernel, 0, &share), CUH);
  assert_true(fabs(share - 65.0 / 80) < 1e-9);
  assert_string_equal(mprof_render_source_file_at(m, v.kernel, 1, NULL), CU);
  assert_null(mprof_render_source_file_at(m, v.kernel, 2, NULL));
  assert_int_equal(mprof_render_source_file_find(m, v.kernel, CU), 2);
  assert_int_equal(mprof_render_source_file_find(m, v.kernel, "lines_math.cuh"),
                   1);
  assert_int_equal(
      mprof_render_source_file_find(m, v.kernel, "lines/lines_kernels.cu"), 2);
  assert_int_equal(mprof_render_source_file_find(m, v.kernel, "kernels.cu"), 0);
  assert_int_equal(mprof_render_source_hot_count(m, v.kernel), 3);
  /* Opened: the hottest line marked, in the header. */
  mprof_render_view_open_source_tab(&v, m, H);
  assert_int_equal(v.source_file, 1);
  assert_int_equal(v.source_line, square);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  assert_int_equal(fix_pixel(&img, 1, TOP + ROW * (int)(square - 1) + ROW / 2),
                   BAR);
  fix_free(&img);
  /* Next hottest: the call line, in the .cu file, marked there alone. */
  assert_int_equal(mprof_render_view_source_hot(&v, m, 1), 1);
  assert_int_equal(v.source_file, 2);
  assert_int_equal(v.source_line, call);
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  fix_save(&img, "source-next.png");
  int call_y = TOP + ROW * cu_row(call) + ROW / 2;
  assert_int_equal(fix_pixel(&img, 1, call_y), BAR);
  assert_int_equal(fix_pixel(&img, W - 20, call_y), HOT_ROW);
  size_t marked = 0;
  for (int y = TOP; y < H; y++)
    marked += fix_pixel(&img, 1, y) == BAR;
  assert_int_equal(marked, ROW);
  fix_free(&img);
  /* The .cu file's 23 lines and its two instruction rows. */
  assert_true(fabs(mprof_render_content_height(m, &v, MPROF_RENDER_SOURCE, W) -
                   (TOP + (23 + 2) * ROW + 16)) < 0.5);
  /* Round the list: the index line, the hottest again, and back. */
  assert_int_equal(mprof_render_view_source_hot(&v, m, 1), 2);
  assert_int_equal(v.source_line, index);
  assert_int_equal(mprof_render_view_source_hot(&v, m, 1), 0);
  assert_int_equal(v.source_file, 1);
  assert_int_equal(v.source_line, square);
  assert_int_equal(mprof_render_view_source_hot(&v, m, -1), 2);
  assert_int_equal(v.source_line, index);
  /* An instruction's line: 0x6c0 (lm_square inlined) is the header's;
   * 0x6f0 is the call line. */
  assert_int_equal(mprof_render_view_source_pc(&v, m, 0x6c0), 0);
  assert_int_equal(v.source_file, 1);
  assert_int_equal(v.source_line, square);
  assert_int_equal(mprof_render_view_source_pc(&v, m, 0x6f0), 0);
  assert_int_equal(v.source_file, 2);
  assert_int_equal(v.source_line, call);
  /* The instruction clicked is marked too, on its row under the line. */
  assert_int_equal(v.source_pc, 0x6f0 + 1);
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  assert_int_equal(fix_pixel(&img, 1, call_y), BAR);
  assert_int_equal(fix_pixel(&img, 1, call_y + ROW), BAR);
  assert_int_equal(fix_pixel(&img, 1, call_y + 2 * ROW),
                   fix_pixel(&img, W - 1, H - 1));
  fix_free(&img);
  /* A file at its hottest line; a line it does not have changes nothing. */
  assert_int_equal(mprof_render_view_source_line(&v, m, 1, 0), 0);
  assert_int_equal(v.source_line, square);
  assert_int_equal(mprof_render_view_source_line(&v, m, 2, 0), 0);
  assert_int_equal(v.source_line, call);
  assert_int_equal(mprof_render_view_source_line(&v, m, 2, 24), -1);
  assert_int_equal(mprof_render_view_source_line(&v, m, 3, 1), -1);
  assert_int_equal(v.source_file, 2);
  assert_int_equal(v.source_line, call);
  /* Search "ACC" (lines 19, 21, 22 hold it, case aside): as typed it
   * stays on the call line; then the next, round the file, and back. */
  assert_int_equal(mprof_render_view_source_find(&v, m, "ACC", 0), 3);
  assert_int_equal(v.source_line, call);
  assert_int_equal(mprof_render_view_source_find(&v, m, "ACC", 1), 3);
  assert_int_equal(v.source_line, 22);
  assert_int_equal(mprof_render_view_source_find(&v, m, "ACC", 1), 3);
  assert_int_equal(v.source_line, 19);
  assert_int_equal(mprof_render_view_source_find(&v, m, "ACC", -1), 3);
  assert_int_equal(v.source_line, 22);
  /* Its matches are marked on their rows, and counted in the header. */
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  fix_save(&img, "source-find.png");
  assert_true(count_in_row(&img, cu_row(19), FOUND) > 100);
  assert_true(count_in_row(&img, cu_row(22), FOUND) > 100);
  assert_int_equal(count_in_row(&img, cu_row(20), FOUND), 0);
  size_t header = 0;
  for (int y = 0; y < TOP; y++)
    for (int x = W / 2; x < W; x++)
      header += fix_pixel(&img, x, y) == FOUND;
  assert_true(header > 100);
  fix_free(&img);
  /* Nothing found: the marked line stays, nothing is marked. */
  assert_int_equal(mprof_render_view_source_find(&v, m, "no such code", 0), 0);
  assert_int_equal(v.source_line, 22);
  img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  assert_int_equal(count_in_row(&img, cu_row(19), FOUND), 0);
  fix_free(&img);
  /* A short view scrolls the marked line into sight, a quarter down. */
  v.scroll_y = 0;
  mprof_render_view_source_scroll(&v, m, 200);
  assert_true(fabs(v.scroll_y - (ROW * cu_row(22) - (200 - TOP) / 4.0)) < 0.5);
  double kept = v.scroll_y;
  mprof_render_view_source_scroll(&v, m, 200);
  assert_true(v.scroll_y == kept);
  mprof_render_model_free(m);
}

/* ---- CUB: template code maps to the header lines ------------------------ */

#define CUB_K "_Z13lines_cub_sumPKfPfi"
#define CUB_CRC 0xc0bull
#define SHFL_H "cub/warp/specializations/warp_reduce_shfl.cuh"
#define REDUCE_H "cub/block/specializations/block_reduce_warp_reductions.cuh"

/* A trace of lines_cub_sum (tests/data/lines/lines_cub.cubin, nvcc
 * -lineinfo of a cub::BlockReduce) with one sample at each of its
 * instructions; *cubin_out gets the cubin, parsed, for the expected lines.
 */
static mprof_render_model *open_cub(mprof_sass_cubin **cubin_out,
                                    const mprof_sass_function **fn_out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lines_cub.cubin", data_dir());
  size_t size = 0;
  unsigned char *bytes = test_read_file(path, &size);
  assert_non_null(bytes);
  assert_int_equal(mprof_sass_cubin_open(cubin_out, bytes, size, NULL), 0);
  const mprof_sass_function *fn = mprof_sass_cubin_find(*cubin_out, CUB_K);
  assert_non_null(fn);
  *fn_out = fn;
  const char *trace = test_path("source-tab-cub.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, trace, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t k = tt_kernel(w, CUB_K, "lines_cub_sum(float const*, float*, int)",
                         d, 32, 0, CUB_CRC);
  tt_launch(w, tt_shape(w, k, 64, 128, 0), tt_stream(w, d, 7), 1000000,
            1010000);
  tt_reason(w, d, 6, REASON("long_scoreboard"));
  uint32_t step = mprof_sass_cubin_instruction_size(*cubin_out);
  for (uint32_t offset = 0; offset < fn->size; offset += step)
    tt_sample(w, d, CUB_K, CUB_CRC, offset, 6, 1);
  mprof_cubin_record cr = {CUB_CRC, 0, 0, size, d, MPROF_CUBIN_KEPT_WHOLE};
  assert_int_equal(mprof_writer_cubin(w, &cr, bytes, size), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  free(bytes);
  mprof_render_model *m = NULL;
  if (mprof_render_model_open(&m, trace, NULL))
    fail_msg("%s", mprof_render_error());
  return m;
}

/* The samples the line table puts in files whose path ends in @p suffix
 * (one per instruction). */
static uint64_t table_samples(const mprof_sass_cubin *cubin,
                              const mprof_sass_function *fn,
                              const char *suffix) {
  uint64_t n = 0;
  uint32_t step = mprof_sass_cubin_instruction_size(cubin);
  for (uint32_t offset = 0; offset < fn->size; offset += step) {
    const char *file = "";
    uint32_t line = mprof_sass_cubin_line(cubin, fn, offset, &file);
    size_t a = strlen(file), b = strlen(suffix);
    n += line && a >= b && strcmp(file + a - b, suffix) == 0;
  }
  return n;
}

/* A kernel of CUB code: its lines are CUB's header lines, each header a
 * file of its own beside the .cu file (not folded into the call line),
 * which the Source tab lists, shows and navigates into. */
static void test_source_tab_cub_headers(void **state) {
  (void)state;
  mprof_sass_cubin *cubin;
  const mprof_sass_function *fn;
  mprof_render_model *m = open_cub(&cubin, &fn);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel_named(m, CUB_K);
  /* The .cu file, CUB's two headers and CCCL's others. */
  size_t files = mprof_render_source_file_count(m, v.kernel);
  assert_true(files >= 4);
  int32_t shfl = mprof_render_source_file_find(m, v.kernel, SHFL_H);
  int32_t reduce = mprof_render_source_file_find(m, v.kernel, REDUCE_H);
  int32_t cu = mprof_render_source_file_find(m, v.kernel, "lines_cub.cu");
  assert_true(shfl > 0 && reduce > 0 && cu > 0);
  /* Each file has the samples its instructions have by the line table. */
  double share;
  uint64_t total = fn->size / mprof_sass_cubin_instruction_size(cubin);
  assert_non_null(mprof_render_source_file_at(m, v.kernel, shfl - 1, &share));
  assert_true(table_samples(cubin, fn, SHFL_H) >= 5);
  assert_true(fabs(share - (double)table_samples(cubin, fn, SHFL_H) /
                               (double)total) < 1e-9);
  mprof_render_source_file_at(m, v.kernel, reduce - 1, &share);
  assert_true(table_samples(cubin, fn, REDUCE_H) >= 5);
  assert_true(fabs(share - (double)table_samples(cubin, fn, REDUCE_H) /
                               (double)total) < 1e-9);
  mprof_render_source_file_at(m, v.kernel, cu - 1, &share);
  assert_true(fabs(share - (double)table_samples(cubin, fn, "lines_cub.cu") /
                               (double)total) < 1e-9);
  /* The shuffle header at its hottest line: a hot row, marked. */
  assert_int_equal(mprof_render_view_source_line(&v, m, shfl, 0), 0);
  uint32_t hot = v.source_line;
  assert_true(hot > 0);
  const char *file = "";
  uint32_t step = mprof_sass_cubin_instruction_size(cubin);
  int found = 0;
  for (uint32_t offset = 0; offset < fn->size && !found; offset += step)
    if (mprof_sass_cubin_line(cubin, fn, offset, &file) == hot &&
        strstr(file, SHFL_H)) {
      /* An instruction of that line leads back to it. */
      v.source_line = 0;
      assert_int_equal(mprof_render_view_source_pc(&v, m, offset), 0);
      assert_int_equal(v.source_file, shfl);
      assert_int_equal(v.source_line, hot);
      found = 1;
    }
  assert_true(found);
  mprof_render_view_source_scroll(&v, m, H);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SOURCE, W, H);
  fix_save(&img, "source-cub.png");
  assert_true(fix_count(&img, HOT_ROW) > 0);
  assert_true(fix_count(&img, BAR) > 0);
  fix_free(&img);
  /* Where CUB's headers are on this machine (as they were where it was
   * built), the line is CUB's shuffle code. */
  size_t len = 0;
  const char *path = mprof_render_source_file_at(m, v.kernel, shfl - 1, NULL);
  FILE *f = fopen(path, "r");
  if (f) {
    fclose(f);
    mprof_sources *sources = NULL;
    assert_int_equal(
        mprof_sources_open(&sources, mprof_render_model_trace(m), NULL), 0);
    const char *code = mprof_sources_line(sources, path, hot, &len);
    assert_non_null(code);
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)len, code);
    assert_non_null(strstr(text, "shfl"));
    mprof_sources_free(sources);
  } else {
    printf("(CUB's headers are not at %s: their text is not checked)\n", path);
  }
  mprof_sass_cubin_free(cubin);
  mprof_render_model_free(m);
}

int main(void) {
  (void)fix_open; /* the shared fixture's trace is not used here */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_source_tab_hot_line),
      cmocka_unit_test(test_source_tab_without_text),
      cmocka_unit_test(test_source_tab_no_line_table),
      cmocka_unit_test(test_source_tab_navigation),
      cmocka_unit_test(test_source_tab_cub_headers),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
