/*
 * mprof tests — every view drawn offscreen and checked by its pixels:
 * launches where their times put them, the inset inside a wide launch,
 * the bars of Summary and Hotspots, the lanes of Flame and Raster, and
 * PNG/SVG files. The same views are drawn for every real trace in
 * samples/ (skipped when there is none).
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <math.h>

#include "analysis_util.h"
#include "test_render_fixture.h"
#include "mprof/synth.h"

#define W 1168
#define H 420

static mprof_render_view view_of(const mprof_render_model *m, int64_t start,
                                 int64_t end) {
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = FIX_T0 + start;
  v.end_ns = FIX_T0 + end;
  return v;
}

/* A y inside the boxes of Trace row @p row, above their labels. */
static int row_y(const mprof_render_model *m, const mprof_render_view *v,
                 size_t row) {
  double h;
  double top = mprof_render_row_top(m, v, row, &h);
  return (int)(MPROF_RENDER_RULER + top + 5);
}

static void test_trace_puts_launches_at_their_times(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-trace.mprof", 1);
  const uint32_t k0 = mprof_render_kernel_at(m, 0)->color;
  const uint32_t k1 = mprof_render_kernel_at(m, 1)->color;
  mprof_render_view v = view_of(m, 0, 50000); /* 50 ns per pixel */
  v.kernel = -1;                              /* no selection outlines */
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace.png");
  int y1 = row_y(m, &v, 1), y2 = row_y(m, &v, 2);
  const int x0 = (int)MPROF_RENDER_GUTTER;
  /* K0 at 5000..9000 ns: pixels 100..179 of the time area. */
  assert_int_equal(fix_pixel(&img, x0 + 102, y1), k0);
  assert_int_equal(fix_pixel(&img, x0 + 140, y1), k0);
  assert_int_equal(fix_pixel(&img, x0 + 177, y1), k0);
  assert_int_not_equal(fix_pixel(&img, x0 + 98, y1), k0);
  assert_int_not_equal(fix_pixel(&img, x0 + 182, y1), k0);
  /* K0 at 1000..2000: 20..39. */
  assert_int_equal(fix_pixel(&img, x0 + 30, y1), k0);
  assert_int_not_equal(fix_pixel(&img, x0 + 17, y1), k0);
  /* K1 at 10000..30000 on the same row: 200..599. */
  assert_int_equal(fix_pixel(&img, x0 + 400, y1), k1);
  /* K1 on stream 8 at 3000..8000: 60..159, and nothing of it on row 1 at
   * 160+. */
  assert_int_equal(fix_pixel(&img, x0 + 110, y2), k1);
  assert_int_not_equal(fix_pixel(&img, x0 + 170, y2), k1);
  /* The memcpy at 2500..4000 (50..79) in its own colour, not a kernel's. */
  int middle = y1 + (int)(v.row_height / 2) - 5;
  uint32_t copy = fix_pixel(&img, x0 + 65, middle);
  assert_int_not_equal(copy, k0);
  assert_int_not_equal(copy, k1);
  assert_int_not_equal(copy, fix_pixel(&img, x0 + 90, middle));
  fix_free(&img);
  /* A selected range (40..45 us: 800..900 px) tints what is under it. */
  v.sel_start_ns = FIX_T0 + 40000;
  v.sel_end_ns = FIX_T0 + 45000;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  uint32_t in = fix_pixel(&img, x0 + 850, y2 + 20);
  uint32_t out = fix_pixel(&img, x0 + 950, y2 + 20);
  assert_int_not_equal(in, out);
  assert_true((in & 0xff) > (in >> 16)); /* bluer than red */
  v.sel_start_ns = v.sel_end_ns = 0;
  /* The gutter holds labels, the ruler ticks: not blank. */
  double busy;
  assert_true(fix_colors(&img, &busy) > 20);
  fix_free(&img);

  /* Zoomed out to the whole trace, the 10000 tiny launches (100..300 us of
   * 500) merge into boxes of K0's lighter colour; the row is not empty
   * there. Panned so that nothing is in view, the row is empty. */
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  int xm = (int)mprof_render_time_to_x(&map, FIX_T0 + 200000);
  uint32_t merged = fix_pixel(&img, xm, y1);
  assert_int_not_equal(merged, k0);
  assert_int_not_equal(merged, fix_pixel(&img, W - 2, y1));
  fix_free(&img);
  mprof_render_model_free(m);
}

static void test_trace_inset_shows_hottest_instructions(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-inset.mprof", 1);
  mprof_render_view v = view_of(m, 390000, 510000); /* K0 100 us wide */
  v.row_height = 120;
  v.kernel = 0;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-inset.png");
  double h;
  int top = (int)(MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 1, &h));
  /* The inset: a light panel inside the launch, its first bar (the
   * hottest instruction, all long_scoreboard) in memory-latency red, its
   * second (FFMA, math) in compute blue. The bars start 2 px into the
   * panel, and line i at 6 + 12 i px below the row top + 2. */
  const int x = 168 + 83 + 2 + 2 + 2 + 5; /* launch starts at 83 px */
  assert_int_equal(fix_pixel(&img, x, top + 2 + 4 + 1 + 4),
                   mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY));
  assert_int_equal(fix_pixel(&img, x, top + 2 + 4 + 12 + 1 + 4),
                   mprof_render_family_color(MPROF_FAM_COMPUTE));
  /* The longest bar is the hottest: red runs further right than blue. */
  int red = 0, blue = 0;
  for (int dx = 0; dx < 120; dx++) {
    red += fix_pixel(&img, x + dx, top + 9) ==
           mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY);
    blue += fix_pixel(&img, x + dx, top + 21) ==
            mprof_render_family_color(MPROF_FAM_COMPUTE);
  }
  assert_true(red > blue && blue > 0);
  fix_free(&img);
  /* With a narrow launch (zoomed out) there is no inset: no red. */
  v = view_of(m, 0, 2000000);
  v.row_height = 120;
  v.kernel = 0;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_equal(
      fix_count(&img, mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY)), 0);
  fix_free(&img);
  mprof_render_model_free(m);
}

static void test_summary_shows_the_kernel(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-summary.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  assert_int_equal(v.kernel, 0); /* opens on the dominant kernel */
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SUMMARY, W, 900);
  fix_save(&img, "summary.png");
  double busy;
  assert_true(fix_colors(&img, &busy) > 30);
  assert_true(busy > 0.03);
  /* The kernel's colour swatch by its name. */
  assert_int_equal(fix_pixel(&img, 26, 30),
                   mprof_render_kernel_at(m, 0)->color);
  /* The stall mix bar: memory latency 600 of 1050 samples, about 57% of
   * the bar (1120 px wide, 22 px tall), compute 300 (29%). */
  size_t red =
      fix_count(&img, mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY));
  size_t blue = fix_count(&img, mprof_render_family_color(MPROF_FAM_COMPUTE));
  double bar = (W - 48) * 22.0;
  assert_true(red > 0.55 * bar && red < 0.62 * bar);
  assert_true(blue > 0.27 * bar && blue < 0.32 * bar);
  fix_free(&img);
  /* The second kernel: its own colour, no memory latency at all. */
  v.kernel = 1;
  img = fix_draw(m, &v, MPROF_RENDER_SUMMARY, W, 900);
  assert_int_equal(fix_pixel(&img, 26, 30),
                   mprof_render_kernel_at(m, 1)->color);
  assert_int_equal(
      fix_count(&img, mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY)), 0);
  fix_free(&img);
  /* No kernel selected: a message, still not blank. */
  v.kernel = -1;
  img = fix_draw(m, &v, MPROF_RENDER_SUMMARY, W, 400);
  assert_true(fix_colors(&img, &busy) > 5);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* The Summary page of a PM-sampled kernel: a speed-of-light bar per
 * counter, filled to its measured share of the peak (DRAM 78.8%, SMs 50%
 * of a 360 px bar), and a mark beside each of the trace's own notes (the
 * "!" lines of `mprof summary`). Without counters, no bars. */
#define SOL_BLUE 0x4a7fb5u  /* RD_SOL */
#define NOTE_MARK 0xd98e04u /* RD_NOTE */
static void test_summary_speed_of_light_and_notes(void **state) {
  (void)state;
  const char *path = test_path("views-sol.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0), s = tt_stream(w, d, 7);
  uint32_t shape = tt_shape(w, tt_kernel(w, FIX_K0, "", d, 0, 0, 0), 0, 0, 0);
  fix_launch(w, s, shape, 0, 200000);
  const char *metrics[2] = {
      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
  for (uint32_t c = 0; c < 2; c++)
    tt_pm_metric(w, d, c, metrics[c], "percent", 10000);
  const float values[2] = {78.8f, 50.0f};
  for (int i = 0; i < 20; i++)
    tt_pm_sample(w, d, (uint64_t)(FIX_T0 + i * 10000),
                 (uint64_t)(FIX_T0 + (i + 1) * 10000), 2, values);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_render_model *m = NULL;
  if (mprof_render_model_open(&m, path, NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_SUMMARY, W, 1600);
  fix_save(&img, "summary-sol.png");
  /* The longest run of the bar colour on each row: the bars' fills. */
  int dram = 0, sm = 0;
  for (int y = 0; y < img.height; y++) {
    int run = 0;
    for (int x = 0; x < img.width; x++)
      run += fix_pixel(&img, x, y) == SOL_BLUE;
    dram += run == 284; /* round(360 * 0.788) */
    sm += run == 180;
  }
  assert_true(dram >= 10); /* the 12 px bar's rows */
  assert_true(sm >= 10);
  /* One mark per trace note, down the left margin. */
  size_t notes = mprof_diagnosis_note_count(mprof_render_model_diagnosis(m));
  assert_true(notes >= 1); /* no PC samples, at least */
  size_t marks = 0;
  for (int y = 1; y < img.height; y++)
    marks += fix_pixel(&img, 25, y) == NOTE_MARK &&
             fix_pixel(&img, 25, y - 1) != NOTE_MARK;
  assert_int_equal(marks, notes);
  fix_free(&img);
  mprof_render_model_free(m);
  /* A trace without PM samples: no speed-of-light bars. */
  m = fix_open("views-summary.mprof", 1);
  mprof_render_view_init(&v, m);
  img = fix_draw(m, &v, MPROF_RENDER_SUMMARY, W, 1600);
  assert_int_equal(fix_count(&img, SOL_BLUE), 0);
  fix_free(&img);
  mprof_render_model_free(m);
}

static void test_hotspots_rank_instructions(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-hotspots.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_HOTSPOTS, W, H);
  fix_save(&img, "hotspots.png");
  /* Rows under an 88 px header, 22 px each; the share bar (category
   * colour) at x 50: LDG (memory), FFMA (arithmetic), BAR (sync), HMMA
   * (tensor), with lengths in proportion to their samples. */
  static const int category[4] = {MPROF_CAT_MEMORY, MPROF_CAT_ARITH,
                                  MPROF_CAT_SYNC, MPROF_CAT_TENSOR};
  static const double samples[4] = {600, 300, 100, 50};
  for (int row = 0; row < 4; row++) {
    int y = 88 + 22 * row + 11;
    uint32_t c = mprof_render_category_color(category[row]);
    assert_int_equal(fix_pixel(&img, 51, y), c);
    int len = 0;
    while (fix_pixel(&img, 50 + len, y) == c)
      len++;
    assert_true(fabs(len - 46 * samples[row] / 600) <= 1.5);
  }
  /* The stall breakdown of the hottest row: long_scoreboard's colour over
   * the whole bar; the not-issued twin is not stacked on it. */
  const mprof_render_reason *long_sb = NULL;
  for (size_t r = 0; r < mprof_render_reason_count(m); r++)
    if (strcmp(mprof_render_reason_at(m, r)->name, "long_scoreboard") == 0)
      long_sb = mprof_render_reason_at(m, r);
  assert_non_null(long_sb);
  size_t in_row = 0;
  for (int x = 0; x < W; x++)
    in_row += fix_pixel(&img, x, 88 + 11) == long_sb->color;
  double stalls_w = fmin(260, fmax(120, W * 0.22));
  assert_true(fabs((double)in_row - stalls_w) <= 2);
  /* Nothing below the fourth row. */
  assert_int_equal(fix_pixel(&img, 51, 88 + 22 * 4 + 11),
                   fix_pixel(&img, W - 1, H - 1));
  /* Beside the stall bars, the counted memory accesses: the LDG (row 1)
   * uses 12.5% of its sectors (an amber bar of 46 px x 0.125), the store
   * at 0x30 (row 3) all of them (green, 46 px), the FFMA (row 2) has no
   * counts. */
  int sectors_x = (int)(W - 16 - floor(stalls_w) - 118);
  size_t amber = 0, green = 0, row2 = 0;
  for (int x = sectors_x; x < sectors_x + 46; x++) {
    amber += fix_pixel(&img, x, 88 + 11) == 0xe0a030;
    green += fix_pixel(&img, x, 88 + 2 * 22 + 11) == 0x4f9d69;
    row2 += fix_pixel(&img, x, 88 + 22 + 11) == 0xe0a030 ||
            fix_pixel(&img, x, 88 + 22 + 11) == 0x4f9d69;
  }
  assert_true(amber >= 5 && amber <= 7);
  assert_int_equal(green, 46);
  assert_int_equal(row2, 0);
  /* Hovering the LDG says so in words. */
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_HOTSPOTS, W, H, 300, 88 + 11, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  char words[1024];
  mprof_render_hit_describe(m, &hit, words, sizeof words);
  assert_non_null(strstr(words, "memory: 12.5% of its sectors used (128 B "
                                "asked, 32.0 sectors per warp access, 100 "
                                "warp accesses)"));
  fix_free(&img);
  /* A kernel without SASS (K1) still ranks its PCs. */
  v.kernel = 1;
  img = fix_draw(m, &v, MPROF_RENDER_HOTSPOTS, W, H);
  assert_int_equal(fix_pixel(&img, 51, 88 + 11),
                   mprof_render_category_color(MPROF_CAT_OTHER));
  fix_free(&img);
  mprof_render_model_free(m);
}

/* A tab as text to copy: the Hotspots as a table, every instruction in
 * the view's order with its share, offset and SASS; the Summary as the
 * summary's panel of the kernel; the Trace's selected range; nothing for
 * a painted-only tab. */
static void test_tab_text(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-text.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)v.kernel);
  char *text = mprof_render_tab_text(m, &v, MPROF_RENDER_HOTSPOTS);
  assert_non_null(text);
  assert_non_null(strstr(text, "#\tshare\tsamples\toffset\tSASS"));
  static const char *const opcodes[4] = {"LDG", "FFMA", "BAR", "HMMA"};
  static const uint64_t samples[4] = {600, 300, 100, 50};
  const char *at = text;
  for (int row = 0; row < 4; row++) {
    char start[16], share[16];
    snprintf(start, sizeof start, "\n%d\t", row + 1);
    at = strstr(at, start);
    assert_non_null(at);
    const char *end = strchr(at + 1, '\n');
    assert_non_null(end);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(end - at - 1), at + 1);
    mprof_format_percent(share, sizeof share,
                         (double)samples[row] / (double)k->stats->samples);
    char want[64];
    snprintf(want, sizeof want, "\t%s\t%llu\t0x", share,
             (unsigned long long)samples[row]);
    assert_non_null(strstr(line, want));
    assert_non_null(strstr(line, opcodes[row]));
  }
  assert_null(strstr(at + 1, "\n5\t")); /* four instructions, no more */
  free(text);
  text = mprof_render_tab_text(m, &v, MPROF_RENDER_SUMMARY);
  assert_non_null(text);
  /* The name as `mprof summary` prints it: the trace's. */
  assert_non_null(strstr(text, k->stats->name));
  assert_non_null(strstr(text, "launches"));
  free(text);
  /* The Trace: its selected range, nothing without one. */
  assert_null(mprof_render_tab_text(m, &v, MPROF_RENDER_TRACE));
  v.sel_start_ns = FIX_T0;
  v.sel_end_ns = FIX_T0 + 1000000000;
  text = mprof_render_tab_text(m, &v, MPROF_RENDER_TRACE);
  char *selection = mprof_render_selection_text(m, &v);
  assert_non_null(text);
  assert_string_equal(text, selection);
  free(text);
  free(selection);
  assert_null(mprof_render_tab_text(m, &v, MPROF_RENDER_FLAME));
  mprof_render_model_free(m);
}

/* A source column too narrow for its file's name cuts the name in the
 * middle: the ":line" at its end stays, so two traces whose lines differ
 * draw differently (cut at the end, both read "a_long_…"). */
static void test_source_keeps_its_line(void **state) {
  (void)state;
  static const int tabs[2] = {MPROF_RENDER_HOTSPOTS, MPROF_RENDER_SUMMARY};
  fix_source_file = "/home/someone/projects/a_rather_long_folder_name/"
                    "and_a_source_file_with_a_name_longer_than_any_column_"
                    "of_the_viewer_would_hold_transformer_forward.cu";
  for (int t = 0; t < 2; t++) {
    fix_image img[2];
    for (int i = 0; i < 2; i++) {
      fix_line_base = i ? 100 : 0; /* :12 against :112 */
      mprof_render_model *m = fix_open("views-source-line.mprof", 1);
      mprof_render_view v;
      mprof_render_view_init(&v, m);
      img[i] = fix_draw(m, &v, tabs[t], W, 4 * H); /* Summary's lines: low */
      mprof_render_model_free(m);
    }
    fix_save(&img[1],
             t ? "source-line-summary.png" : "source-line-hotspots.png");
    size_t differ = 0;
    for (int y = 0; y < 4 * H; y++)
      for (int x = 0; x < W; x++)
        differ += fix_pixel(&img[0], x, y) != fix_pixel(&img[1], x, y);
    assert_true(differ > 0);
    fix_free(&img[0]);
    fix_free(&img[1]);
  }
  fix_source_file = "k.cu";
  fix_line_base = 0;
}

/* A kernel whose memory accesses were counted (`record blocks --memory`)
 * and that has no PC samples: Hotspots lists its memory instructions,
 * busiest first, with their share of the accesses and sector efficiency. */
static void test_hotspots_memory_only(void **state) {
  (void)state;
  const char *path = test_path("views-memory.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, "_Z14memory_patternPKfPfj");
  kr.function_index = MPROF_INDEX_NONE;
  kr.device = MPROF_INDEX_NONE;
  uint32_t ki, shi, st;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = ki;
  sh.grid[0] = sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 256;
  sh.block[1] = sh.block[2] = 1;
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  mprof_stream_record s = {MPROF_INDEX_NONE, 0, 0, 0};
  assert_int_equal(mprof_writer_intern(w, &st, MPROF_SECTION_STREAMS, &s), 0);
  mprof_launch_record l = {1000, 5000, shi, st, 1, 0, 0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  /* 0x40: coalesced load, 800 warp accesses; 0x50: stride-32 load, 200. */
  mprof_memory_access_record ma[2] = {
      {ki, 0x50, MPROF_MEMORY_READ, 4, 200, 6400, 25600, 6400},
      {ki, 0x40, MPROF_MEMORY_READ, 4, 800, 25600, 102400, 3200}};
  for (int i = 0; i < 2; i++)
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma[i]), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_render_model *m = NULL;
  assert_int_equal(mprof_render_model_open(&m, path, NULL), 0);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  assert_true(mprof_render_content_height(m, &v, MPROF_RENDER_HOTSPOTS, W) >=
              88 + 2 * 22);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_HOTSPOTS, W, H);
  fix_save(&img, "hotspots-memory.png");
  /* Row 1 is 0x40 (80% of the accesses: a full 46 px bar), row 2 0x50
   * (a quarter of it); their sector efficiency 100% and 12.5%. */
  int len[2] = {0, 0};
  for (int row = 0; row < 2; row++)
    while (fix_pixel(&img, 50 + len[row], 88 + 22 * row + 11) == 0x5b7db8)
      len[row]++;
  assert_int_equal(len[0], 46);
  assert_true(abs(len[1] - 46 / 4) <= 1);
  double stalls_w = fmin(260, fmax(120, W * 0.22));
  int sectors_x = (int)(W - 16 - floor(stalls_w) - 118);
  size_t green = 0, amber = 0;
  for (int x = sectors_x; x < sectors_x + 46; x++) {
    green += fix_pixel(&img, x, 88 + 11) == 0x4f9d69;
    amber += fix_pixel(&img, x, 88 + 22 + 11) == 0xe0a030;
  }
  assert_int_equal(green, 46);
  assert_true(amber >= 5 && amber <= 7);
  /* Nothing below the second row. */
  assert_int_equal(fix_pixel(&img, 51, 88 + 2 * 22 + 11),
                   fix_pixel(&img, W - 1, H - 1));
  fix_free(&img);
  mprof_render_model_free(m);
}

/* The lane (row band) index at y of a Flame/Raster drawing: lanes are
 * equal bands between a 52 px header and a 34 px axis. */
static int lane_middle(int lane, int lanes) {
  double lane_h = (H - 34.0 - 52.0) / lanes;
  return (int)(52.0 + lane_h * lane + lane_h / 2);
}

static void test_flame_and_raster_lanes(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-lanes.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  /* x: 178 .. W-12 spread over 1050 samples in offset order: 0x10 (600),
   * 0x20 (300), 0x30 (100), 0x40 (50). */
  double left = 178, right = W - 12, scale = (right - left) / 1050.0;
  int x10 = (int)(left + 300 * scale), x20 = (int)(left + 750 * scale),
      x30 = (int)(left + 950 * scale), x40 = (int)(left + 1025 * scale);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_FLAME, W, H);
  fix_save(&img, "flame.png");
  int n = MPROF_CAT_COUNT;
  /* The hottest instruction at full strength in its lane... */
  assert_int_equal(fix_pixel(&img, x10, lane_middle(MPROF_CAT_MEMORY, n)),
                   mprof_render_category_color(MPROF_CAT_MEMORY));
  /* ...the others in theirs, lighter; no instruction in another lane. */
  uint32_t bg_arith = fix_pixel(&img, x10, lane_middle(MPROF_CAT_ARITH, n));
  assert_int_not_equal(fix_pixel(&img, x20, lane_middle(MPROF_CAT_ARITH, n)),
                       bg_arith);
  assert_int_not_equal(fix_pixel(&img, x30, lane_middle(MPROF_CAT_SYNC, n)),
                       fix_pixel(&img, x10, lane_middle(MPROF_CAT_SYNC, n)));
  assert_int_not_equal(fix_pixel(&img, x40, lane_middle(MPROF_CAT_TENSOR, n)),
                       fix_pixel(&img, x10, lane_middle(MPROF_CAT_TENSOR, n)));
  assert_int_equal(fix_pixel(&img, x10, lane_middle(MPROF_CAT_CONTROL, n)),
                   fix_pixel(&img, x20, lane_middle(MPROF_CAT_CONTROL, n)));
  fix_free(&img);

  img = fix_draw(m, &v, MPROF_RENDER_RASTER, W, H);
  fix_save(&img, "raster.png");
  n = MPROF_FAM_COUNT;
  /* Every sample of 0x10 is long_scoreboard and every one of 0x20 math:
   * full-strength cells, and nothing else in those columns. */
  assert_int_equal(
      fix_pixel(&img, x10, lane_middle(MPROF_FAM_MEMORY_LATENCY, n)),
      mprof_render_family_color(MPROF_FAM_MEMORY_LATENCY));
  assert_int_equal(fix_pixel(&img, x20, lane_middle(MPROF_FAM_COMPUTE, n)),
                   mprof_render_family_color(MPROF_FAM_COMPUTE));
  assert_int_equal(fix_pixel(&img, x30, lane_middle(MPROF_FAM_SYNC, n)),
                   mprof_render_family_color(MPROF_FAM_SYNC));
  assert_int_equal(fix_pixel(&img, x40, lane_middle(MPROF_FAM_ISSUED, n)),
                   mprof_render_family_color(MPROF_FAM_ISSUED));
  assert_int_not_equal(fix_pixel(&img, x10, lane_middle(MPROF_FAM_COMPUTE, n)),
                       mprof_render_family_color(MPROF_FAM_COMPUTE));
  /* No throughput stalls at all: that lane is empty in every column. */
  int lane = lane_middle(MPROF_FAM_MEMORY_THROUGHPUT, n);
  uint32_t empty = fix_pixel(&img, W - 5, lane);
  assert_int_equal(fix_pixel(&img, x10, lane), empty);
  assert_int_equal(fix_pixel(&img, x20, lane), empty);
  assert_int_equal(fix_pixel(&img, x30, lane), empty);
  assert_int_equal(fix_pixel(&img, x40, lane), empty);
  fix_free(&img);
  mprof_render_model_free(m);
}

static void test_files_png_and_svg(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("views-files.mprof", 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  const char *png = test_path("out.png");
  const char *svg = test_path("out.svg");
  for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++) {
    assert_int_equal(mprof_render_write(m, &v, tab, 800, 500, png), 0);
    size_t size;
    unsigned char *data = test_read_file(png, &size);
    assert_non_null(data);
    assert_true(size > 1000);
    assert_memory_equal(data, "\x89PNG\r\n\x1a\n", 8);
    free(data);
    assert_int_equal(mprof_render_write(m, &v, tab, 800, 500, svg), 0);
    data = test_read_file(svg, &size);
    assert_non_null(data);
    assert_non_null(strstr((const char *)data, "<svg"));
    /* Text stays text, to search and copy: <text> elements, no glyph
     * outlines (Cairo's <symbol id="glyph...">), and no marker left of
     * the way rd_text() hands text to the SVG. */
    assert_non_null(strstr((const char *)data, "<text "));
    assert_null(strstr((const char *)data, "glyph"));
    assert_null(strstr((const char *)data, "fill-opacity:0.0117647"));
    if (tab == MPROF_RENDER_SUMMARY) {
      char name[512];
      snprintf(name, sizeof name, ">%s</text>",
               mprof_render_kernel_at(m, (size_t)v.kernel)->short_name);
      if (!strstr((const char *)data, name))
        fail_msg("the Summary's SVG has no %s", name);
    }
    free(data);
  }
  assert_int_equal(mprof_render_write(m, &v, 0, 800, 500, test_path("x.jpg")),
                   -1);
  assert_non_null(strstr(mprof_render_error(), ".png or .svg"));
  assert_int_equal(
      mprof_render_write(m, &v, 0, 800, 500, "/nonexistent/dir/x.png"), -1);
  assert_non_null(strstr(mprof_render_error(), "/nonexistent/dir/x.png"));
  assert_int_equal(mprof_render_write(m, &v, 0, 5, 500, png), -1);
  mprof_render_model_free(m);
}

static void test_empty_trace_draws_messages(void **state) {
  (void)state;
  /* A trace with nothing in it opens, and every view says so. */
  const char *path = test_path("empty.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_render_model *m;
  assert_int_equal(mprof_render_model_open(&m, path, NULL), 0);
  assert_int_equal(mprof_render_kernel_count(m), 0);
  assert_int_equal(mprof_render_row_count(m), 0);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  assert_int_equal(v.kernel, -1);
  for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++) {
    fix_image img = fix_draw(m, &v, tab, 640, 400);
    double busy;
    assert_true(fix_colors(&img, &busy) > 5); /* a message, not nothing */
    fix_free(&img);
    mprof_render_hit hit;
    mprof_render_hit_test(m, &v, tab, 640, 400, 320, 200, &hit);
    char text[256];
    mprof_render_hit_describe(m, &hit, text, sizeof text);
  }
  mprof_render_model_free(m);
}

/* Every view of @p path at two sizes and three zooms: drawn, not blank. */
static void draw_everything(const char *path) {
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  mprof_render_limits l;
  mprof_render_model_limits(m, &l);
  char name[256];
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++) {
    fix_image img = fix_draw(m, &v, tab, 1280, 800);
    double busy;
    size_t colors = fix_colors(&img, &busy);
    printf("  %s %-8s %4zu colours, %4.1f%% drawn\n", base,
           mprof_render_tab_key(tab), colors, 100 * busy);
    assert_true(colors > 8);
    /* Activity of a kernel without spans is a message (anything drawn),
     * and so are the PC-sample tabs of a kernel without PC samples (a
     * --pm on trace): a line of text, not a view. */
    const mprof_render_kernel *k = mprof_render_kernel_at(m, v.kernel);
    int pc_tab = tab == MPROF_RENDER_HOTSPOTS || tab == MPROF_RENDER_FLAME ||
                 tab == MPROF_RENDER_RASTER || tab == MPROF_RENDER_SOURCE;
    int no_spans = tab == MPROF_RENDER_ACTIVITY &&
                   !mprof_render_kernel_span_count(m, v.kernel);
    if (!no_spans)
      assert_true(busy > (pc_tab && k && !k->stats->samples ? 0.001 : 0.005));
    snprintf(name, sizeof name, "%s-%s.png", base, mprof_render_tab_key(tab));
    fix_save(&img, name);
    fix_free(&img);
    img = fix_draw(m, &v, tab, 320, 200); /* small windows draw too */
    fix_free(&img);
  }
  for (int zoom = 0; zoom < 3; zoom++) {
    mprof_render_view_zoom(&v, &l, 0.3, 50);
    fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, 1280, 800);
    double busy;
    assert_true(fix_colors(&img, &busy) > 8);
    fix_free(&img);
  }
  mprof_render_model_free(m);
}

static void test_synthetic_traces_draw(void **state) {
  (void)state;
  /* Synthetic traces with their made-up SASS: every scenario. */
  for (uint32_t scenario = 0; scenario <= MPROF_SYNTH_LAUNCH_GAPS;
       scenario += 3) {
    char path[1024];
    snprintf(path, sizeof path, "%s", test_path("synth.mprof"));
    mprof_synth_options opts;
    mprof_synth_options_init(&opts, MPROF_SYNTH_OPTIONS_VERSION);
    opts.launches = 20000;
    opts.devices = 2;
    opts.scenario = scenario;
    assert_int_equal(mprof_synth_write(path, &opts), 0);
    assert_int_equal(mprof_synth_write_sidecar(path, NULL), 0);
    draw_everything(path);
  }
}

static void test_real_samples_draw(void **state) {
  (void)state;
  size_t found = fix_each_sample(draw_everything);
  if (!found)
    fail_msg("no recorded sample in samples/");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace_puts_launches_at_their_times),
      cmocka_unit_test(test_trace_inset_shows_hottest_instructions),
      cmocka_unit_test(test_summary_shows_the_kernel),
      cmocka_unit_test(test_hotspots_rank_instructions),
      cmocka_unit_test(test_hotspots_memory_only),
      cmocka_unit_test(test_tab_text),
      cmocka_unit_test(test_source_keeps_its_line),
      cmocka_unit_test(test_flame_and_raster_lanes),
      cmocka_unit_test(test_files_png_and_svg),
      cmocka_unit_test(test_summary_speed_of_light_and_notes),
      cmocka_unit_test(test_empty_trace_draws_messages),
      cmocka_unit_test(test_synthetic_traces_draw),
      cmocka_unit_test(test_real_samples_draw),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
