/*
 * mprof tests — the span views: the arithmetic behind them (pixel columns
 * of a track, greedy sub-lanes, Mega's level of detail), and their pixels:
 * Mega's SM bands, rows, sub-lanes and merged runs where the spans are,
 * Density's cells, the banner on projected (PC-only) data, MKPROF imports
 * with their decoded params, the synthetic activity demo, and every sample
 * in samples/ that holds spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "analysis_util.h"
#include "megakernels_fixture.h"
#include "test_render_fixture.h"
#include "mprof/synth.h"

/* ---- arithmetic ------------------------------------------------------------
 */

/* 10 ns per pixel over [0, 1000): column c is [10c, 10c + 10). */
static mprof_render_timemap ten_ns_map(void) {
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, 0, 1000, 0, 100);
  return map;
}

static void test_cover_finds_each_column(void **state) {
  (void)state;
  /* [100, 200) wide; [205, 207) inside one column; [500, 800) wide with
   * [520, 530) nested inside it; nothing else. */
  static const int64_t start[] = {100, 205, 500, 520};
  static const int64_t end[] = {200, 207, 800, 530};
  int64_t max_end[4];
  int64_t run = INT64_MIN;
  for (int i = 0; i < 4; i++)
    max_end[i] = run = end[i] > run ? end[i] : run;
  mprof_render_track track = {start, max_end, 4};
  mprof_render_timemap map = ten_ns_map();
  mprof_render_column cols[100];
  size_t searches = mprof_render_track_cover(&track, &map, 100, cols);
  for (int c = 0; c < 100; c++) {
    int64_t want = c >= 10 && c < 20   ? 0
                   : c == 20           ? 1
                   : c >= 50 && c < 80 ? 2
                                       : -1;
    if (cols[c].item != want)
      fail_msg("column %d: item %lld, expected %lld", c,
               (long long)cols[c].item, (long long)want);
  }
  /* The narrow one is a run below a pixel; so is the column where the
   * nested span starts; the wide ones are not. */
  assert_true(cols[20].merged);
  assert_false(cols[15].merged);
  assert_true(cols[52].merged);
  assert_false(cols[60].merged);
  /* One search per bar and per gap: not one per column. */
  assert_true(searches <= 6);
}

static void test_cover_costs_columns_not_intervals(void **state) {
  (void)state;
  /* A million 1-ns intervals 2 ns apart: 1000 columns of 2000 ns... */
  size_t n = 1000000;
  int64_t *start = (int64_t *)malloc(n * sizeof *start);
  int64_t *end = (int64_t *)malloc(n * sizeof *end);
  for (size_t i = 0; i < n; i++) {
    start[i] = 2 * (int64_t)i;
    end[i] = start[i] + 1;
  }
  mprof_render_track track = {start, end, n};
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, 0, 2000000, 0, 1000);
  mprof_render_column *cols =
      (mprof_render_column *)malloc(1000 * sizeof *cols);
  size_t searches = mprof_render_track_cover(&track, &map, 1000, cols);
  /* ...each column meets 1000 of them: merged, found with one search. */
  assert_true(searches <= 1001);
  for (int c = 0; c < 1000; c++) {
    assert_true(cols[c].item >= 0);
    assert_true(cols[c].merged);
    assert_true(start[cols[c].item] >= 2000 * c &&
                start[cols[c].item] < 2000 * (c + 1));
  }
  /* Zoomed onto 100 ns: each interval its own 10-px bar, gaps between. */
  mprof_render_timemap_init(&map, 1000, 1100, 0, 1000);
  searches = mprof_render_track_cover(&track, &map, 1000, cols);
  assert_int_equal(cols[5].item, 500);
  assert_false(cols[5].merged);
  assert_int_equal(cols[15].item, -1);
  assert_int_equal(cols[25].item, 501);
  assert_true(searches <= 101);
  free(cols);
  free(start);
  free(end);
}

static void test_lanes_are_greedy(void **state) {
  (void)state;
  /* By start: a [0,10) b [5,15) c [10,20) d [12,13) e [30,40). c reuses
   * a's lane (it starts as a ends), d needs a third, e the first again. */
  static const int64_t start[] = {0, 5, 10, 12, 30};
  static const int64_t end[] = {10, 15, 20, 13, 40};
  uint32_t lane[5];
  assert_int_equal(mprof_render_assign_lanes(start, end, 5, lane), 3);
  assert_int_equal(lane[0], 0);
  assert_int_equal(lane[1], 1);
  assert_int_equal(lane[2], 0);
  assert_int_equal(lane[3], 2);
  assert_int_equal(lane[4], 0);
  assert_int_equal(mprof_render_assign_lanes(start, end, 0, lane), 0);
  /* 100 spans on top of each other: 100 lanes (past the 64 kept on the
   * stack). */
  int64_t s[100], e[100];
  uint32_t l[100];
  for (int i = 0; i < 100; i++) {
    s[i] = i;
    e[i] = 1000;
  }
  assert_int_equal(mprof_render_assign_lanes(s, e, 100, l), 100);
  assert_int_equal(l[99], 99);
  /* Mega's switch: rows from 3 px a unit; lanes folded at 2 px each. */
  assert_true(mprof_render_mega_detailed(13.5, 4.5));
  assert_false(mprof_render_mega_detailed(13.4, 4.5));
  assert_int_equal(mprof_render_lanes_shown(2, 57), 2);
  assert_int_equal(mprof_render_lanes_shown(40, 20), 10);
  assert_int_equal(mprof_render_lanes_shown(5, 1), 1);
  assert_int_equal(mprof_render_lanes_shown(0, 30), 0);
}

/* ---- a trace with spans whose every pixel is known -------------------------
 *
 * One launch [0, 10000) on a 4-SM GPU. SM 0: load [1000,3000), mma
 * [3000,7000) (payload 42), store [7000,8000), all block 5. SM 1: one mma
 * [100,105). SM 2: mma [2000,4000) and, overlapping, mma [2500,5000). SM 3:
 * 1000 mma of 1 ns every 2 ns from 4000.
 */

#define C_LOAD 0xc03020u
#define C_MMA 0x20a040u
#define C_STORE 0x3050d0u

static void put_span(mprof_writer *w, uint32_t sm, uint32_t region,
                     int64_t start, int64_t end, uint64_t payload) {
  mprof_span_record sp;
  memset(&sp, 0, sizeof sp);
  sp.start = (uint64_t)(FIX_T0 + start);
  sp.end = (uint64_t)(FIX_T0 + end);
  sp.launch = 0;
  sp.sm = sm;
  sp.block = 5;
  sp.warp = MPROF_INDEX_NONE;
  sp.region = region;
  sp.payload = payload;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp), 0);
}

/* A trace with one kernel @p mangled of @p sms blocks of 128 threads on a
 * tiny GPU of @p sms SMs: its stream in *@p stream, its shape in *@p shape. */
static mprof_writer *write_kernel_head(const char *path, const char *mangled,
                                       uint32_t sms, uint32_t *stream,
                                       uint32_t *shape) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "tiny GPU");
  dev.cc_major = 9;
  dev.sm_count = sms;
  dev.warp_size = 32;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_sm = 2048;
  dev.max_warps_per_sm = 64;
  uint32_t d;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  *stream = tt_stream(w, d, 7);
  *shape = tt_shape(w, tt_kernel(w, mangled, "", d, 0, 0, 0), sms, 128, 0);
  return w;
}

static const char *write_span_trace(void) {
  const char *path = test_path("spans.mprof");
  uint32_t s, sh, r[3];
  mprof_writer *w = write_kernel_head(path, "_Z4megav", 4, &s, &sh);
  fix_launch(w, s, sh, 0, 10000);
  static const struct {
    const char *name;
    uint32_t role, color;
  } regions[3] = {{"load", MPROF_ROLE_LOADER, 0xff000000u | C_LOAD},
                  {"mma", MPROF_ROLE_CONSUMER, 0xff000000u | C_MMA},
                  {"store", MPROF_ROLE_STORER, 0xff000000u | C_STORE}};
  for (int i = 0; i < 3; i++) {
    mprof_region_record rr = {mprof_writer_string(w, regions[i].name),
                              regions[i].color, regions[i].role, 0};
    assert_int_equal(mprof_writer_append(w, &r[i], MPROF_SECTION_REGIONS, &rr),
                     0);
  }
  put_span(w, 0, r[0], 1000, 3000, 1);
  put_span(w, 0, r[1], 3000, 7000, 42);
  put_span(w, 0, r[2], 7000, 8000, 3);
  put_span(w, 1, r[1], 100, 105, 0);
  put_span(w, 2, r[1], 2000, 4000, 0);
  put_span(w, 2, r[1], 2500, 5000, 0);
  for (int i = 0; i < 1000; i++)
    put_span(w, 3, r[1], 4000 + 2 * i, 4001 + 2 * i, 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

/* The view of [0, 10000) on 1000 px: 10 ns per pixel. */
#define W (168 + 1000)
#define H 600

static mprof_render_view span_view(const mprof_render_model *m) {
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 10000;
  return v;
}

static int x_of(int64_t t) { return 168 + (int)(t / 10); }

/* Middle of Mega row @p row (0 separator, 1 loader, 2 consumer, 3 storer)
 * of SM @p sm; with @p lane / @p lanes inside the row. */
static int mega_y(const mprof_render_model *m, const mprof_render_view *v,
                  int sm, int row, int lane, int lanes) {
  static const double offset[] = {0, 0.5, 1.5, 3.5, 4.5};
  mprof_render_layout l;
  mprof_render_tab_layout(m, v, MPROF_RENDER_MEGA, W, H, &l);
  double band =
      mprof_render_row_unit(m, v, MPROF_RENDER_MEGA, l.bottom - l.top);
  double unit = band / 4.5, y = l.top + band * sm;
  double y0 = floor(y + offset[row] * unit);
  double y1 = floor(y + offset[row + 1] * unit);
  double lane_h = (y1 - y0 - 1) / lanes;
  return (int)(y0 + lane_h * lane + lane_h / 2);
}

static uint32_t lighten(uint32_t rgb, double amount) {
  uint32_t out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    double c = (rgb >> shift) & 0xff;
    out |= (uint32_t)lround(c + (255 - c) * amount) << shift;
  }
  return out;
}

static void test_mega_draws_spans_where_they_are(void **state) {
  (void)state;
  mprof_render_model *m;
  assert_int_equal(mprof_render_model_open(&m, write_span_trace(), NULL), 0);
  assert_true(mprof_render_model_has_spans(m));
  assert_int_equal(mprof_render_kernel_span_count(m, 0), 1006);
  mprof_render_view v = span_view(m);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_MEGA, W, H);
  fix_save(&img, "mega.png");
  /* SM 0: each span in its role's row, at its time. */
  assert_int_equal(fix_pixel(&img, x_of(2000), mega_y(m, &v, 0, 1, 0, 1)),
                   C_LOAD);
  assert_int_equal(fix_pixel(&img, x_of(5000), mega_y(m, &v, 0, 2, 0, 1)),
                   C_MMA);
  assert_int_equal(fix_pixel(&img, x_of(7500), mega_y(m, &v, 0, 3, 0, 1)),
                   C_STORE);
  /* Nothing where nothing ran: not in the other rows, not after 8000. */
  assert_int_not_equal(fix_pixel(&img, x_of(2000), mega_y(m, &v, 0, 2, 0, 1)),
                       C_MMA);
  assert_int_not_equal(fix_pixel(&img, x_of(5000), mega_y(m, &v, 0, 1, 0, 1)),
                       C_LOAD);
  uint32_t empty = fix_pixel(&img, x_of(9000), mega_y(m, &v, 0, 2, 0, 1));
  assert_int_not_equal(empty, C_MMA);
  assert_int_not_equal(empty, C_STORE);
  /* SM 2: the overlapping pair in two sub-lanes. */
  int lane0 = mega_y(m, &v, 2, 2, 0, 2), lane1 = mega_y(m, &v, 2, 2, 1, 2);
  assert_int_equal(fix_pixel(&img, x_of(2200), lane0), C_MMA);
  assert_int_not_equal(fix_pixel(&img, x_of(2200), lane1), C_MMA);
  assert_int_equal(fix_pixel(&img, x_of(3000), lane0), C_MMA);
  assert_int_equal(fix_pixel(&img, x_of(3000), lane1), C_MMA);
  assert_int_not_equal(fix_pixel(&img, x_of(4500), lane0), C_MMA);
  assert_int_equal(fix_pixel(&img, x_of(4500), lane1), C_MMA);
  /* SM 3: five spans a pixel, merged into one lighter run. */
  assert_int_equal(fix_pixel(&img, x_of(5000), mega_y(m, &v, 3, 2, 0, 1)),
                   lighten(C_MMA, 0.35));
  assert_int_not_equal(fix_pixel(&img, x_of(7000), mega_y(m, &v, 3, 2, 0, 1)),
                       lighten(C_MMA, 0.35));
  /* Measured: no banner under the header. */
  assert_int_not_equal(fix_pixel(&img, W - 5, 46 + 5),
                       MPROF_RENDER_BANNER_PROJECTED);
  fix_free(&img);

  /* Zoomed out (6 px per SM): one bar per SM, whatever covers each pixel. */
  v.sm_height = 6;
  img = fix_draw(m, &v, MPROF_RENDER_MEGA, W, H);
  fix_save(&img, "mega-bars.png");
  mprof_render_layout l;
  mprof_render_tab_layout(m, &v, MPROF_RENDER_MEGA, W, H, &l);
  int y0 = (int)l.top + 3;
  assert_int_equal(fix_pixel(&img, x_of(2000), y0), C_LOAD);
  assert_int_equal(fix_pixel(&img, x_of(5000), y0), C_MMA);
  assert_int_equal(fix_pixel(&img, x_of(7500), y0), C_STORE);
  assert_int_equal(fix_pixel(&img, x_of(5000), y0 + 18), /* SM 3 */
                   lighten(C_MMA, 0.35));
  assert_int_not_equal(fix_pixel(&img, x_of(5000), y0 + 6), C_MMA); /* SM 1 */
  fix_free(&img);

  /* Hover: the span, its place and payload. */
  v.sm_height = 0;
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, W, H, x_of(5000),
                        mega_y(m, &v, 0, 2, 0, 1), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_SPAN);
  assert_int_equal(hit.span, 1);
  assert_int_equal(hit.sm, 0);
  assert_int_equal(hit.role, MPROF_ROLE_CONSUMER);
  char text[1024];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "mma (consumer)"));
  /* After the kernel's first span (SM 1's, at 100), and into its launch. */
  assert_non_null(strstr(text, "4 us at +2.9 us (3 us into launch 0)"));
  assert_non_null(strstr(text, "SM 0 \u00b7 block 5"));
  assert_non_null(strstr(text, "payload 42 (0x2a)"));
  mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, W, H, x_of(5000),
                        mega_y(m, &v, 3, 2, 0, 1), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_SPANS);
  assert_true(hit.spans >= 4 && hit.spans <= 6);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "zoom in"));
  mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, W, H, 20,
                        mega_y(m, &v, 1, 2, 0, 1), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LABEL);
  assert_int_equal(hit.sm, 1);
  /* The fit: the kernel's spans, with a margin. */
  mprof_render_view_fit_spans(&v, m);
  assert_true(v.start_ns < FIX_T0 + 100 && v.start_ns > FIX_T0 - 400);
  assert_true(v.end_ns > FIX_T0 + 8000 && v.end_ns < FIX_T0 + 8400);
  mprof_render_model_free(m);
}

/* Measured launches far apart (one per training step): the fit is the
 * kernel's longest launch, not the whole stretch in which its blocks are
 * slivers; launches back to back still fit together. */
static const char *write_sparse_launches(const char *name, int64_t gap) {
  const char *path = test_path(name);
  uint32_t s, sh, r;
  mprof_writer *w = write_kernel_head(path, "_Z4stepv", 2, &s, &sh);
  mprof_region_record rr = {mprof_writer_string(w, "block"), 0xff3050d0u,
                            MPROF_ROLE_CONSUMER, 0};
  assert_int_equal(mprof_writer_append(w, &r, MPROF_SECTION_REGIONS, &rr), 0);
  /* Launch 0: [0, 3000); launch 1: [gap, gap + 5000), the longer one. */
  fix_launch(w, s, sh, 0, 3000);
  fix_launch(w, s, sh, gap, gap + 5000);
  for (uint32_t launch = 0; launch < 2; launch++)
    for (uint32_t sm = 0; sm < 2; sm++) {
      mprof_span_record sp;
      memset(&sp, 0, sizeof sp);
      int64_t at = launch ? gap : 0, len = launch ? 5000 : 3000;
      sp.start = (uint64_t)(FIX_T0 + at);
      sp.end = (uint64_t)(FIX_T0 + at + len);
      sp.launch = launch;
      sp.sm = sm;
      sp.block = sm;
      sp.warp = MPROF_INDEX_NONE;
      sp.region = r;
      assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp),
                       0);
    }
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

static void test_fit_far_apart_launches(void **state) {
  (void)state;
  mprof_render_model *m;
  if (mprof_render_model_open(
          &m, write_sparse_launches("sparse.mprof", 1000000), NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  mprof_render_view_fit_spans(&v, m);
  /* The longer launch [1000000, 1005000), with its margin. */
  assert_true(v.start_ns > FIX_T0 + 999000 && v.start_ns < FIX_T0 + 1000000);
  assert_true(v.end_ns > FIX_T0 + 1005000 && v.end_ns < FIX_T0 + 1006000);
  mprof_render_model_free(m);
  /* Back to back: both launches. */
  if (mprof_render_model_open(&m, write_sparse_launches("dense.mprof", 3000),
                              NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view_init(&v, m);
  mprof_render_view_fit_spans(&v, m);
  assert_true(v.start_ns < FIX_T0 && v.end_ns > FIX_T0 + 8000);
  mprof_render_model_free(m);
}

/* Colours within a few steps of each other per channel (fine buckets
 * round a share by a percent or two). */
static int near(uint32_t a, uint32_t b) {
  for (int shift = 16; shift >= 0; shift -= 8) {
    int d = (int)((a >> shift) & 0xff) - (int)((b >> shift) & 0xff);
    if (d < -8 || d > 8)
      return 0;
  }
  return 1;
}

static void test_density_colours_busy_share(void **state) {
  (void)state;
  mprof_render_model *m;
  assert_int_equal(mprof_render_model_open(&m, write_span_trace(), NULL), 0);
  mprof_render_view v = span_view(m);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_DENSITY, W, H);
  fix_save(&img, "density.png");
  mprof_render_layout l;
  mprof_render_tab_layout(m, &v, MPROF_RENDER_DENSITY, W, H, &l);
  double band =
      mprof_render_row_unit(m, &v, MPROF_RENDER_DENSITY, l.bottom - l.top);
  assert_true(fabs(band - (l.bottom - l.top) / 4) < 1e-9);
#define ROW(sm) ((int)(l.top + band * (sm) + band / 2))
  /* Cells are 2 px = 20 ns. SM 0 busy 1000..8000: full cells dark. */
  assert_int_equal(fix_pixel(&img, x_of(5000), ROW(0)),
                   mprof_render_density_color(1.0));
  assert_int_equal(fix_pixel(&img, x_of(9000), ROW(0)),
                   mprof_render_density_color(0.0));
  /* SM 1: [100, 105) is a quarter of the cell [100, 120). */
  assert_int_equal(fix_pixel(&img, x_of(100), ROW(1)),
                   mprof_render_density_color(0.25));
  /* SM 2: the union of its two spans, 2000..5000. */
  assert_int_equal(fix_pixel(&img, x_of(4500), ROW(2)),
                   mprof_render_density_color(1.0));
  assert_int_equal(fix_pixel(&img, x_of(5500), ROW(2)),
                   mprof_render_density_color(0.0));
  /* SM 3: 1-ns spans every 2 ns: half busy. */
  assert_true(near(fix_pixel(&img, x_of(5000), ROW(3)),
                   mprof_render_density_color(0.5)));
  assert_int_not_equal(mprof_render_density_color(0.5),
                       mprof_render_density_color(1.0));
  fix_free(&img);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_DENSITY, W, H, x_of(5000), ROW(3),
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_CELL);
  assert_true(fabs(hit.value - 0.5) < 0.03);
  char text[512];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "spans at once"));
  assert_non_null(strstr(text, "SM 3"));
  assert_non_null(strstr(text, "measured"));
  /* Zoomed in below the fine buckets (2 px = 1 ns): from the spans
   * themselves, SM 3's cells alternate busy and idle. */
  v.start_ns = FIX_T0 + 4500;
  v.end_ns = FIX_T0 + 5000;
  img = fix_draw(m, &v, MPROF_RENDER_DENSITY, W, H);
  assert_int_equal(fix_pixel(&img, 168 + 800, ROW(3)), /* [4900, 4901) */
                   mprof_render_density_color(1.0));
  assert_int_equal(fix_pixel(&img, 168 + 802, ROW(3)), /* [4901, 4902) */
                   mprof_render_density_color(0.0));
  assert_int_equal(fix_pixel(&img, 168 + 802, ROW(0)),
                   mprof_render_density_color(1.0));
#undef ROW
  fix_free(&img);
  mprof_render_model_free(m);
}

/* ---- projected: a trace without spans
 * ---------------------------------------- */

static void test_projected_views_say_so(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("pc.mprof", 1);
  assert_false(mprof_render_model_has_spans(m));
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = 1; /* compute: 264 blocks of 256 threads, one wave */
  mprof_render_view_fit_spans(&v, m);
  /* Its longest launch, [50000, 90000). */
  assert_true(v.start_ns < FIX_T0 + 50000 && v.end_ns > FIX_T0 + 90000);
  assert_true(v.end_ns - v.start_ns < 45000);
  for (int tab = MPROF_RENDER_MEGA; tab <= MPROF_RENDER_DENSITY; tab++) {
    fix_image img = fix_draw(m, &v, tab, 1280, 800);
    fix_save(&img, tab == MPROF_RENDER_MEGA ? "projected-mega.png"
                                            : "projected-density.png");
    /* The banner across the view under the header. */
    assert_int_equal(fix_pixel(&img, 1275, 46 + 5),
                     MPROF_RENDER_BANNER_PROJECTED);
    assert_int_equal(fix_pixel(&img, 1275, 46 + 20),
                     MPROF_RENDER_BANNER_PROJECTED);
    double busy;
    assert_true(fix_colors(&img, &busy) > 20);
    fix_free(&img);
  }
  /* Every SM holds two blocks of 8 warps of 64: 25% of the warp slots. */
  mprof_render_layout l;
  mprof_render_tab_layout(m, &v, MPROF_RENDER_DENSITY, 1280, 800, &l);
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, v.start_ns, v.end_ns, l.left,
                            l.right - l.left);
  double x = mprof_render_time_to_x(&map, FIX_T0 + 70000);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_DENSITY, 1280, 800, x, l.top + 2,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PROJECTED);
  assert_true(fabs(hit.value - 0.25) < 1e-9);
  char text[512];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "not measured"));
  /* The time counts from where the axis counts: the kernel's first launch,
   * [3000, 8000) here, not the trace's start. */
  assert_int_equal(mprof_render_span_origin(m, &v), FIX_T0 + 3000);
  char when[64], at[80];
  mprof_format_duration(when, sizeof when,
                        (double)(hit.time_ns - (FIX_T0 + 3000)));
  snprintf(at, sizeof at, " at +%s ", when);
  assert_non_null(strstr(text, at));
  fix_image img = fix_draw(m, &v, MPROF_RENDER_DENSITY, 1280, 800);
  assert_int_equal(fix_pixel(&img, (int)x, (int)l.top + 2),
                   mprof_render_density_color(0.25));
  fix_free(&img);
  mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, 1280, 800, x, l.top + 2,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PROJECTED);
  mprof_render_model_free(m);
}

/* ---- MKPROF
 * ------------------------------------------------------------------- */

/* A Megakernels file (as tests/test_mkprof.c builds it): processor 0's
 * first instruction is type 1 with params layer_idx 3, start_block 10,
 * end_block 20, its loader bar [1200, 3000), consumer bar [3000, 8000). */
static const char mk_config[] =
    "{\"format_version\":\"1.2\",\"instruction_types\":{"
    "\"1\":{\"name\":\"RMS Append\",\"color\":\"#ff7f0e\","
    "\"params\":{\"1\":\"layer_idx\",\"2\":\"start_block\",\"3\":"
    "\"end_block\"}}},"
    "\"instruction_format\":{\"instruction_length\":32,\"timing_length\":128},"
    "\"functional_units\":{"
    "\"0\":{\"name\":\"Loader\",\"event_range\":{\"start\":16,\"end\":47},"
    "\"height_multiplier\":1.0,\"special_events\":{\"start\":8,\"end\":9}},"
    "\"1\":{\"name\":\"Consumer\",\"event_range\":{\"start\":48,\"end\":79},"
    "\"height_multiplier\":2.0,\"special_events\":{\"start\":12,\"end\":13}},"
    "\"2\":{\"name\":\"Storer\",\"event_range\":{\"start\":112,\"end\":127},"
    "\"height_multiplier\":1.0,\"special_events\":{\"start\":14,\"end\":15}}},"
    "\"main_functional_unit\":1,"
    "\"num_gpus\":1,\"total_processors\":2,\"max_instructions\":2,"
    "\"time_unit_flag\":1,\"has_events_flag\":1}";

static const char *write_mkprof(void) {
  enum { P = 2, I = 2, L = 32, T = 128 };
  static int32_t ins[P * I * L];
  static uint32_t starts[P * I], ends[P * I], ev[P * I * T];
  ins[0] = 1;
  ins[1] = 3;
  ins[2] = 10;
  ins[3] = 20;
  starts[0] = 1000;
  ends[0] = 9000;
  ev[8] = 1200;
  ev[9] = 3000;
  ev[12] = 3000;
  ev[13] = 8000;
  size_t head = 10 + strlen(mk_config), pad = (4 - head % 4) % 4;
  size_t size =
      head + pad + sizeof ins + sizeof starts + sizeof ends + sizeof ev;
  unsigned char *bytes = (unsigned char *)calloc(1, size);
  unsigned char *p = bytes;
  memcpy(p, "MKPROF1.2\n", 10);
  memcpy(p + 10, mk_config, strlen(mk_config));
  p += head + pad;
  memcpy(p, ins, sizeof ins);
  p += sizeof ins;
  memcpy(p, starts, sizeof starts);
  p += sizeof starts;
  memcpy(p, ends, sizeof ends);
  p += sizeof ends;
  memcpy(p, ev, sizeof ev);
  const char *path = test_path("tiny.mkprof");
  assert_int_equal(test_write_file(path, bytes, size), 0);
  free(bytes);
  return path;
}

static void test_mkprof_opens_with_params(void **state) {
  (void)state;
  mprof_render_model *m;
  if (mprof_render_model_open(&m, write_mkprof(), NULL))
    fail_msg("%s", mprof_render_error());
  assert_true(mprof_render_model_has_spans(m));
  assert_int_equal(mprof_render_kernel_span_count(m, 0), 2);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = 0;
  v.end_ns = 10000;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_MEGA, W, H);
  fix_save(&img, "mkprof-mega.png");
  /* 2 SMs; the type's colour in SM 0's loader and consumer rows. */
  assert_int_equal(fix_pixel(&img, x_of(2000), mega_y(m, &v, 0, 1, 0, 1)),
                   0xff7f0e);
  assert_int_equal(fix_pixel(&img, x_of(5000), mega_y(m, &v, 0, 2, 0, 1)),
                   0xff7f0e);
  fix_free(&img);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, W, H, x_of(5000),
                        mega_y(m, &v, 0, 2, 0, 1), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_SPAN);
  char text[1024];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "RMS Append (consumer)"));
  assert_non_null(strstr(text, "instruction 0, type RMS Append (opcode 1)"));
  assert_non_null(
      strstr(text, "params: layer_idx=3, start_block=10, end_block=20"));
  mprof_render_model_free(m);
  /* A bad MKPROF file: one error naming it. */
  const char *bad = test_path("bad.mkprof");
  assert_int_equal(test_write_file(bad, "MKPROF1.2\n{\"x\":", 15), 0);
  assert_int_not_equal(mprof_render_model_open(&m, bad, NULL), 0);
  assert_non_null(strstr(mprof_render_error(), "bad.mkprof"));
}

/* ---- a megakernel, as the Megakernels converter writes it ---------------
 */

/* What a view drew: every string, as drawn. */
typedef struct seen_text {
  char text[64 * 4][96];
  size_t count;
} seen_text;

static seen_text *drawn;

static void see(void *ctx, const char *text, double x, double y, double width) {
  (void)ctx;
  (void)x;
  (void)y;
  (void)width;
  if (drawn->count < 64 * 4)
    snprintf(drawn->text[drawn->count++], sizeof drawn->text[0], "%s", text);
}

static size_t times_drawn(const char *text) {
  size_t n = 0;
  for (size_t i = 0; i < drawn->count; i++)
    n += strcmp(drawn->text[i], text) == 0;
  return n;
}

static size_t drawn_starting(const char *prefix) {
  size_t n = 0;
  for (size_t i = 0; i < drawn->count; i++)
    n += strncmp(drawn->text[i], prefix, strlen(prefix)) == 0;
  return n;
}

static void draw_seen(const mprof_render_model *m, const mprof_render_view *v,
                      int tab, int width, int height, const char *png) {
  drawn->count = 0;
  mprof_render_observe_text(see, NULL);
  fix_image img = fix_draw(m, v, tab, width, height);
  mprof_render_observe_text(NULL, NULL);
  fix_save(&img, png);
  fix_free(&img);
}

/* A .mkprof opens on Mega; its legend names each of the 9 instruction
 * types once and whole (not once per unit, not stopping after a few),
 * wide or narrow; every SM's label is whole ("GPU 1 · SM 15", not
 * "GPU 1 · S…"); the Summary names the GPUs without the compute
 * capability and clock the format does not hold. */
static void test_megakernel_legend_and_labels(void **state) {
  (void)state;
  static const char *const types[] = {
      "Attn Norm",           "QKV Rope",           "Partial Attention",
      "Attention Reduction", "O Proj Residual",    "MLP Norm",
      "Upgate SiLU",         "Down Proj Residual", "RMS LM Head"};
  const char *path = test_path("megakernels.mkprof");
  assert_int_equal(megakernels_fixture_write(path), 0);
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL))
    fail_msg("%s", mprof_render_error());
  assert_int_equal(mprof_render_model_first_tab(m), MPROF_RENDER_MEGA);
  drawn = (seen_text *)calloc(1, sizeof *drawn);
  assert_non_null(drawn);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  mprof_render_view_open_span_tab(&v, m, 0);
  static const struct {
    int width, height;
    double sm_height; /* 0: the SMs fit the view */
    const char *png;
  } sizes[] = {{1600, 1000, 0, "megakernels-mega.png"},
               {1000, 700, 0, "megakernels-mega-narrow.png"},
               {1000, 700, 60, "megakernels-mega-rows.png"}};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    v.sm_height = sizes[z].sm_height;
    v.scroll_y = 0;
    draw_seen(m, &v, MPROF_RENDER_MEGA, sizes[z].width, sizes[z].height,
              sizes[z].png);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
      if (times_drawn(types[t]) != 1)
        fail_msg("%dx%d: '%s' drawn %zu times", sizes[z].width, sizes[z].height,
                 types[t], times_drawn(types[t]));
    for (size_t i = 0; i < drawn->count; i++)
      if (strncmp(drawn->text[i], "GPU ", 4) == 0 &&
          strstr(drawn->text[i], "\u2026"))
        fail_msg("%dx%d: an SM label cut to '%s'", sizes[z].width,
                 sizes[z].height, drawn->text[i]);
    /* The SMs that fit show their labels, GPU 0's first. */
    assert_int_equal(times_drawn("GPU 0 \u00b7 SM 0"), 1);
    if (!sizes[z].sm_height) {
      for (uint32_t g = 0; g < MEGAKERNELS_GPUS; g++)
        for (uint32_t sm = 0; sm < MEGAKERNELS_SMS_PER_GPU; sm++) {
          char label[32];
          snprintf(label, sizeof label, "GPU %u \u00b7 SM %u", g, sm);
          if (times_drawn(label) != 1)
            fail_msg("%dx%d: '%s' drawn %zu times", sizes[z].width,
                     sizes[z].height, label, times_drawn(label));
        }
    } else {
      assert_int_equal(times_drawn("consumer"), drawn_starting("GPU 0 "));
    }
  }
  v.sm_height = 0;
  draw_seen(m, &v, MPROF_RENDER_SUMMARY, 1600, 1000, "megakernels-summary.png");
  assert_true(drawn_starting("GPU 1 MKPROF GPU 1 (16 SMs)") == 1 ||
              drawn_starting("GPU 0 MKPROF GPU 0 (16 SMs)") == 1);
  for (size_t i = 0; i < drawn->count; i++)
    if (strstr(drawn->text[i], "sm_00") || strstr(drawn->text[i], "GHz") ||
        strstr(drawn->text[i], "PC sampl") || strstr(drawn->text[i], "unknown"))
      fail_msg("the Summary of a .mkprof says '%s'", drawn->text[i]);
  free(drawn);
  mprof_render_model_free(m);
}

/* ---- the demo
 * ---------------------------------------------------------------- */

static void test_demo_activity(void **state) {
  (void)state;
  mprof_render_model *m;
  if (mprof_render_model_open_demo(&m))
    fail_msg("%s", mprof_render_error());
  assert_true(mprof_render_model_is_demo(m));
  assert_true(mprof_render_model_has_spans(m));
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = mprof_render_span_kernel(m, v.kernel);
  mprof_render_view_fit_spans(&v, m);
  fix_image by[3];
  for (int rows = 0; rows < MPROF_ACTIVITY_ROWS_COUNT; rows++) {
    v.activity_rows = rows;
    by[rows] = fix_draw(m, &v, MPROF_RENDER_ACTIVITY, 1280, 800);
    char name[64];
    snprintf(name, sizeof name, "demo-%s.png",
             mprof_render_activity_rows_key(rows));
    fix_save(&by[rows], name);
    /* Marked synthetic on screen. */
    assert_int_equal(fix_pixel(&by[rows], 1275, 46 + 5),
                     MPROF_RENDER_BANNER_DEMO);
    double busy;
    assert_true(fix_colors(&by[rows], &busy) > 20);
    assert_true(busy > 0.3);
  }
  /* Rows by SM, block and warp are three pictures. */
  size_t differ = 0;
  for (int y = 100; y < 760; y += 3)
    for (int x = 200; x < 1270; x += 7)
      differ += fix_pixel(&by[0], x, y) != fix_pixel(&by[2], x, y);
  assert_true(differ > 1000);
  for (int i = 0; i < 3; i++)
    fix_free(&by[i]);
  /* Depth: phases, then the instructions inside them. */
  v.activity_rows = MPROF_ACTIVITY_SM;
  mprof_render_limits lim;
  mprof_render_model_limits(m, &lim);
  mprof_render_view_zoom(&v, &lim, 0.1, 20);
  v.activity_depth = MPROF_ACTIVITY_PHASE;
  fix_image phase = fix_draw(m, &v, MPROF_RENDER_ACTIVITY, 1280, 800);
  v.activity_depth = MPROF_ACTIVITY_INSTRUCTION;
  fix_image insn = fix_draw(m, &v, MPROF_RENDER_ACTIVITY, 1280, 800);
  v.activity_depth = MPROF_ACTIVITY_AUTO;
  fix_image autod = fix_draw(m, &v, MPROF_RENDER_ACTIVITY, 1280, 800);
  fix_save(&phase, "demo-phase.png");
  fix_save(&insn, "demo-instruction.png");
  /* The phase colours ("load", "mma") in one, the instructions' (LDG,
   * HMMA) in the other. */
  assert_true(fix_count(&phase, 0x59a14f) > 1000);
  assert_int_equal(fix_count(&insn, 0x59a14f), 0);
  assert_true(fix_count(&insn, 0x8cd17d) > 1000);
  /* Zoomed in 20x, auto opens the phases. */
  assert_true(fix_count(&autod, 0x8cd17d) > 1000);
  fix_free(&phase);
  fix_free(&insn);
  fix_free(&autod);
  /* Headless, to a file. */
  const char *png = test_path("demo.png");
  assert_int_equal(
      mprof_render_write(m, &v, MPROF_RENDER_ACTIVITY, 800, 500, png), 0);
  size_t size;
  unsigned char *bytes = test_read_file(png, &size);
  assert_non_null(bytes);
  assert_true(size > 5000);
  free(bytes);
  mprof_render_model_free(m);
}

/* ---- Activity of two GPUs ------------------------------------------------
 */

/* The distinct colours in the time area of one row (a few: tint and grid
 * lines; many more where spans are drawn). */
static size_t row_colours(const fix_image *img, const mprof_render_layout *l,
                          double y0, double y1) {
  uint32_t seen[32];
  size_t n = 0;
  for (int y = (int)ceil(y0); y < (int)floor(y1) && n < 32; y++)
    for (int x = (int)l->left + 1; x < (int)l->right - 1 && n < 32; x++) {
      uint32_t c = fix_pixel(img, x, y);
      size_t i = 0;
      while (i < n && seen[i] != c)
        i++;
      if (i == n)
        seen[n++] = c;
    }
  return n;
}

/* Spans of two GPUs exported by `mprof mkprof export` (MKPROF1.2, devices
 * side by side) and opened again: Activity by SM shows every SM of both,
 * GPU 0 then GPU 1, each in SM order, labelled with its GPU, and the
 * spans on the SMs that ran them. */
static void test_activity_two_gpus(void **state) {
  (void)state;
  char trace[1024], mkprof[1024];
  snprintf(trace, sizeof trace, "%s", test_path("two-gpus.mprof"));
  snprintf(mkprof, sizeof mkprof, "%s", test_path("two-gpus.mkprof"));
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.seed = 3;
  opts.devices = 2;
  opts.launches = 20;
  opts.kernels = 2;
  opts.spans = 3000;
  opts.span_sms = 16; /* spans on SMs 0..15 of each GPU */
  assert_int_equal(mprof_synth_write(trace, &opts), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  assert_int_equal(mprof_mkprof_export(t, mkprof, NULL, NULL), 0);
  mprof_trace_free(t);

  mprof_render_model *m;
  if (mprof_render_model_open(&m, mkprof, NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = mprof_render_span_kernel(m, v.kernel);
  mprof_render_view_fit_spans(&v, m);
  v.activity_rows = MPROF_ACTIVITY_SM;
  v.activity_height = 6;
  enum { WIDE = 1280, TALL = 1800, SMS = 132, ROWS = 2 * SMS };
  /* Every SM of both GPUs has its row (the exporter writes 132 per GPU,
   * the SM count of the synthetic H200s). */
  assert_int_equal(
      (int)mprof_render_content_height(m, &v, MPROF_RENDER_ACTIVITY, WIDE),
      ROWS * 6);
  mprof_render_layout l;
  mprof_render_tab_layout(m, &v, MPROF_RENDER_ACTIVITY, WIDE, TALL, &l);
  assert_true(l.bottom - l.top >= ROWS * 6);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_ACTIVITY, WIDE, TALL);
  fix_save(&img, "two-gpus-activity.png");
  uint32_t chip[2] = {fix_pixel(&img, 4, (int)l.top + 3),
                      fix_pixel(&img, 4, (int)l.top + SMS * 6 + 3)};
  assert_int_not_equal(chip[0], chip[1]);
  for (int r = 0; r < ROWS; r++) {
    uint32_t gpu = r < SMS ? 0 : 1, sm = (uint32_t)(r % SMS);
    double y = l.top + r * 6.0;
    /* The label under the pointer names the row's GPU and SM, in order. */
    mprof_render_hit hit;
    mprof_render_hit_test(m, &v, MPROF_RENDER_ACTIVITY, WIDE, TALL, 20, y + 3,
                          &hit);
    assert_int_equal(hit.kind, MPROF_HIT_LABEL);
    assert_int_equal(hit.device, gpu);
    assert_int_equal(hit.sm, sm);
    char text[256], want[64];
    mprof_render_hit_describe(m, &hit, text, sizeof text);
    snprintf(want, sizeof want, "GPU %u \u00b7 SM %u at ", gpu, sm);
    if (strncmp(text, want, strlen(want)) != 0)
      fail_msg("row %d: '%s', expected '%s...'", r, text, want);
    /* Its GPU's colour chip, and spans only where they ran. */
    assert_int_equal(fix_pixel(&img, 4, (int)y + 3), chip[gpu]);
    size_t colours = row_colours(&img, &l, y, y + 5);
    if (sm < 16 ? colours < 4 : colours > 3)
      fail_msg("row %d (GPU %u SM %u): %zu colours", r, gpu, sm, colours);
  }
  fix_free(&img);
  mprof_render_model_free(m);
}

/* ---- samples ----------------------------------------------------------------
 */

/* Mega, Density and Activity of a trace with spans: measured, not blank,
 * and a hover somewhere finds a span. */
static void check_sample(const char *path) {
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL))
    fail_msg("%s", mprof_render_error());
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = mprof_render_span_kernel(m, v.kernel);
  mprof_render_view_fit_spans(&v, m);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (int tab = MPROF_RENDER_MEGA; tab <= MPROF_RENDER_ACTIVITY; tab++) {
    fix_image img = fix_draw(m, &v, tab, 1280, 800);
    double busy;
    size_t colors = fix_colors(&img, &busy);
    printf("  %s %-8s %4zu colours, %4.1f%% drawn\n", base,
           mprof_render_tab_key(tab), colors, 100 * busy);
    assert_true(colors > 8);
    assert_true(busy > 0.05);
    assert_int_not_equal(fix_pixel(&img, 1275, 46 + 5),
                         MPROF_RENDER_BANNER_PROJECTED);
    char name[512];
    snprintf(name, sizeof name, "%.400s-%s.png", base,
             mprof_render_tab_key(tab));
    fix_save(&img, name);
    fix_free(&img);
  }
  /* Somewhere in Mega, a span under the pointer. */
  int found = 0;
  for (int y = 60; y < 760 && !found; y += 4)
    for (int x = 180; x < 1270 && !found; x += 9) {
      mprof_render_hit hit;
      mprof_render_hit_test(m, &v, MPROF_RENDER_MEGA, 1280, 800, x, y, &hit);
      if (hit.kind == MPROF_HIT_SPAN || hit.kind == MPROF_HIT_SPANS) {
        char text[1024];
        assert_true(mprof_render_hit_describe(m, &hit, text, sizeof text) > 10);
        found = 1;
      }
    }
  assert_true(found);
  mprof_render_model_free(m);
}

static void test_samples_with_spans(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/samples", root && *root ? root : ".");
  DIR *d = opendir(dir);
  size_t with = 0, without = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    int mprof = n > 6 && strcmp(e->d_name + n - 6, ".mprof") == 0;
    int mkprof = n > 7 && strcmp(e->d_name + n - 7, ".mkprof") == 0;
    if (!mprof && !mkprof)
      continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mprof_render_model *m;
    if (mprof_render_model_open(&m, path, NULL))
      fail_msg("%s", mprof_render_error());
    int spans = mprof_render_model_has_spans(m);
    if (!spans) {
      /* PC only: projected, and it says so. */
      mprof_render_view v;
      mprof_render_view_init(&v, m);
      mprof_render_view_fit_spans(&v, m);
      fix_image img = fix_draw(m, &v, MPROF_RENDER_MEGA, 1280, 800);
      assert_int_equal(fix_pixel(&img, 1275, 46 + 5),
                       MPROF_RENDER_BANNER_PROJECTED);
      fix_free(&img);
      without++;
    }
    mprof_render_model_free(m);
    if (spans) {
      check_sample(path);
      with++;
    }
  }
  if (d)
    closedir(d);
  printf("  samples: %zu with spans, %zu projected\n", with, without);
  /* samples/gemm_source.mprof has spans; none found is a broken tree. */
  if (!with)
    fail_msg("no sample with spans in samples/");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cover_finds_each_column),
      cmocka_unit_test(test_cover_costs_columns_not_intervals),
      cmocka_unit_test(test_lanes_are_greedy),
      cmocka_unit_test(test_fit_far_apart_launches),
      cmocka_unit_test(test_mega_draws_spans_where_they_are),
      cmocka_unit_test(test_density_colours_busy_share),
      cmocka_unit_test(test_projected_views_say_so),
      cmocka_unit_test(test_mkprof_opens_with_params),
      cmocka_unit_test(test_megakernel_legend_and_labels),
      cmocka_unit_test(test_demo_activity),
      cmocka_unit_test(test_activity_two_gpus),
      cmocka_unit_test(test_samples_with_spans),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
