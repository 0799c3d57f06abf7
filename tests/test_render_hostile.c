/*
 * mprof tests — traces the reader accepts but no GPU would write, drawn on
 * every tab: a copy of no stream, a launch that ends near 2^64 ns, and a
 * device that claims the most SMs the reader accepts (MPROF_DEVICE_SM_MAX,
 * the views' RS_SM_MAX). Each must draw what it holds (a "No stream" row
 * for the copy; the device's SMs, at most RS_SM_MAX) without crashing,
 * tripping a sanitizer or asking for gigabytes. Devices claiming 2^28 or
 * 2^32 - 1 SMs (5.2 and 80 GB asked for once) no longer open: one line
 * names the record.
 *
 * `test_render_hostile --write DIR` writes the five traces into DIR, for
 * tests/gui/test_render_hostile.sh (`mprof view --render` on each under a
 * memory limit).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <sys/resource.h>

#include "test_render_fixture.h"

#define T0 1700000000000000000ull
#define K0 "_Z6stagedPf"   /* has spans: Mega, Density, Activity measured */
#define K1 "_Z7computePfi" /* has none: projected */
#define CRC 0x77ull
#define NEAR_END (UINT64_MAX - 5)

/* What makes a trace hostile; zero is a plain one. */
typedef struct hostile {
  uint32_t sm_count; /* DEVICES sm_count (132 when 0) */
  int stream_none;   /* a copy and a memset of no stream */
  int end_near_max;  /* a launch (and more) ending near 2^64 */
} hostile;

static uint32_t string(mprof_writer *w, const char *s) {
  return mprof_writer_string(w, s);
}

static void append(mprof_writer *w, mprof_section_type type, const void *rec) {
  if (mprof_writer_append(w, NULL, type, rec))
    fail_msg("append to %s: %s", mprof_section_name(type), mprof_error_last());
}

static void launch(mprof_writer *w, uint32_t stream, uint32_t shape,
                   uint64_t start, uint64_t end, uint32_t correlation) {
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.start = start;
  l.end = end;
  l.shape = shape;
  l.stream = stream;
  l.correlation_id = correlation;
  append(w, MPROF_SECTION_LAUNCHES, &l);
  /* The CUDA API call that issued it, on host thread 11. */
  mprof_api_call_record c;
  memset(&c, 0, sizeof c);
  c.start = start > T0 + 400 ? start - 400 : start;
  c.end = c.start + 300;
  c.correlation_id = correlation;
  c.thread_id = 11;
  c.name = string(w, "cudaLaunchKernel");
  c.kind = MPROF_API_RUNTIME;
  append(w, MPROF_SECTION_API_CALLS, &c);
}

static void memop(mprof_writer *w, uint32_t stream, uint16_t kind,
                  uint16_t copy_kind, uint64_t start, uint64_t end,
                  uint32_t correlation) {
  mprof_memop_record mo;
  memset(&mo, 0, sizeof mo);
  mo.start = start;
  mo.end = end;
  mo.bytes = 1u << 20;
  mo.stream = stream;
  mo.correlation_id = correlation;
  mo.kind = kind;
  mo.copy_kind = kind == MPROF_MEMOP_MEMCPY ? copy_kind : 0;
  mo.src_device = copy_kind == MPROF_COPY_HTOD ? MPROF_INDEX_NONE : 0;
  mo.dst_device = copy_kind == MPROF_COPY_DTOH ? MPROF_INDEX_NONE : 0;
  append(w, MPROF_SECTION_MEMOPS, &mo);
}

static void span(mprof_writer *w, uint64_t start, uint64_t end,
                 uint32_t launch_index, uint32_t sm, uint32_t block,
                 uint32_t region) {
  mprof_span_record s;
  memset(&s, 0, sizeof s);
  s.start = start;
  s.end = end;
  s.launch = launch_index;
  s.sm = sm;
  s.block = block;
  s.warp = MPROF_INDEX_NONE;
  s.region = region;
  append(w, MPROF_SECTION_SPANS, &s);
}

static void sample(mprof_writer *w, const char *kernel, uint32_t offset,
                   uint32_t reason, uint32_t samples) {
  mprof_pc_sample_record pc;
  memset(&pc, 0, sizeof pc);
  pc.cubin_crc = CRC;
  pc.function_name = string(w, kernel);
  pc.function_index = strcmp(kernel, K0) == 0 ? 1 : 2;
  pc.pc_offset = offset;
  pc.stall_reason = reason;
  pc.samples = samples;
  pc.drain = 1;
  append(w, MPROF_SECTION_PC_SAMPLES, &pc);
}

/* One GPU, one stream, K0's two launches with spans on SMs 0..3, K1's
 * two without, a copy, NVTX ranges, API calls and PC samples: something
 * on every tab. Times are ns after T0. */
static void write_trace(const char *path, const hostile *h) {
  mprof_writer *w;
  if (mprof_writer_open(&w, path, NULL))
    fail_msg("%s", mprof_error_last());
  uint32_t d = tt_h200(w, 0, h->sm_count ? h->sm_count : 132, 0);
  mprof_stream_record st = {d, 1, 7, 0};
  uint32_t s;
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  uint32_t shape[2];
  fix_kernels(w, d, K0, K1, CRC, shape);
  launch(w, s, shape[0], T0 + 1000, T0 + 9000, 1);
  launch(w, s, shape[1], T0 + 10000, T0 + 30000, 2);
  launch(w, s, shape[0], T0 + 31000, T0 + 39000, 3);
  launch(w, s, shape[1], T0 + 40000, h->end_near_max ? NEAR_END : T0 + 60000,
         4);
  memop(w, s, MPROF_MEMOP_MEMCPY, MPROF_COPY_HTOD, T0 + 200, T0 + 900, 5);
  if (h->stream_none) {
    memop(w, MPROF_INDEX_NONE, MPROF_MEMOP_MEMCPY, MPROF_COPY_DTOH, T0 + 62000,
          T0 + 70000, 6);
    memop(w, MPROF_INDEX_NONE, MPROF_MEMOP_MEMSET, 0, T0 + 71000, T0 + 72000,
          7);
  }
  /* NVTX: a step around everything, a range inside it. */
  mprof_range_record r;
  memset(&r, 0, sizeof r);
  r.start = T0;
  r.end = h->end_near_max ? UINT64_MAX : T0 + 75000;
  r.name = string(w, "step");
  r.thread_id = 11;
  append(w, MPROF_SECTION_RANGES, &r);
  r.start = T0 + 1000;
  r.end = T0 + 30000;
  r.name = string(w, "forward");
  r.depth = 1;
  append(w, MPROF_SECTION_RANGES, &r);
  /* Spans of K0 (launches 0 and 2): load, mma, store on SMs 0..3. */
  static const char *const region_names[3] = {"load", "mma", "store"};
  static const uint32_t roles[3] = {MPROF_ROLE_LOADER, MPROF_ROLE_CONSUMER,
                                    MPROF_ROLE_STORER};
  for (uint32_t i = 0; i < 3; i++) {
    mprof_region_record rg = {string(w, region_names[i]), 0, roles[i], 0};
    append(w, MPROF_SECTION_REGIONS, &rg);
  }
  for (uint32_t l = 0; l < 2; l++) {
    uint64_t base = l ? T0 + 31000 : T0 + 1000;
    for (uint32_t sm = 0; sm < 4; sm++)
      for (uint32_t phase = 0; phase < 3; phase++)
        span(w, base + 2000 * phase + 100 * sm,
             base + 2000 * phase + 100 * sm + 1800, l ? 2 : 0, sm, sm, phase);
  }
  if (h->end_near_max)
    span(w, T0 + 39000, NEAR_END, 2, 0, 9, 1);
  static const char *const reasons[3] = {
      "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
      "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
      "smsp__pcsamp_warps_issue_stalled_barrier"};
  for (uint32_t i = 0; i < 3; i++) {
    mprof_stall_reason_record sr = {d, i, string(w, reasons[i]), 0};
    append(w, MPROF_SECTION_STALL_REASONS, &sr);
  }
  sample(w, K0, 0x10, 0, 600);
  sample(w, K0, 0x20, 1, 300);
  sample(w, K0, 0x30, 2, 100);
  sample(w, K1, 0x10, 1, 500);
  sample(w, K1, 0x40, 0, 200);
  /* PM counters: DRAM and SMs active, a window every 4 us. */
  static const char *const metrics[2] = {
      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
  for (uint32_t c = 0; c < 2; c++) {
    mprof_pm_metric_record pm = {
        d, c, string(w, metrics[c]), string(w, "percent"), 4000, 0};
    append(w, MPROF_SECTION_PM_METRICS, &pm);
  }
  for (uint32_t i = 0; i < 16; i++) {
    mprof_pm_sample_record ps;
    memset(&ps, 0, sizeof ps);
    ps.start = T0 + 4000ull * i;
    ps.end = h->end_near_max && i == 15 ? NEAR_END : ps.start + 4000;
    ps.device = d;
    for (int c = 0; c < MPROF_PM_MAX_METRICS; c++)
      ps.value[c] = c < 2 ? (float)(10 + 5 * ((i + (uint32_t)c) % 12)) : NAN;
    append(w, MPROF_SECTION_PM_SAMPLES, &ps);
  }
  if (mprof_writer_finish(w))
    fail_msg("%s", mprof_error_last());
}

static const struct {
  const char *name;
  hostile h;
} traces[] = {
    {"stream-none.mprof", {0, 1, 0}},
    {"end-near-max.mprof", {0, 0, 1}},
    {"sms-bound.mprof", {MPROF_DEVICE_SM_MAX, 0, 0}},
    {"sms-2e28.mprof", {1u << 28, 0, 0}},
    {"sms-max.mprof", {UINT32_MAX, 0, 0}},
    {"plain.mprof", {0, 0, 0}}, /* the control; not written by --write */
};
#define TRACE_COUNT (sizeof traces / sizeof traces[0])

/* ---- the tests ---------------------------------------------------------- */

#define W 800
#define H 400
#define MEMOP_COLOR 0x6b7f99u /* view_trace.h */
/* What the span views believe a device has at most (RS_SM_MAX). */
#define SM_MAX MPROF_DEVICE_SM_MAX

/* Without ASan (whose shadow memory is virtual), hold the process to
 * 1 GiB of address space: before the SM counts were bounded, a Mega or
 * Density view of a device claiming 2^28 SMs asked for 5.2 GB (nothing
 * drew), 2^32 - 1 for 80 GB. Under ASan, run.sh's and the sanitizer's
 * own limits on one allocation catch that. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static int limit_memory(void **state) {
  (void)state;
#ifndef UNDER_ASAN
  struct rlimit r = {1ull << 30, 1ull << 30};
  assert_int_equal(setrlimit(RLIMIT_AS, &r), 0);
#endif
  return 0;
}

static mprof_render_model *open_trace(const char *name) {
  for (size_t i = 0; i < TRACE_COUNT; i++)
    if (strcmp(traces[i].name, name) == 0) {
      const char *path = test_path(name);
      write_trace(path, &traces[i].h);
      mprof_render_model *m = NULL;
      if (mprof_render_model_open(&m, path, NULL))
        fail_msg("%s", mprof_render_error());
      return m;
    }
  fail_msg("no trace %s", name);
  return NULL;
}

static int kernel_named(const mprof_render_model *m, const char *mangled) {
  int k = mprof_render_kernel_find(m, mangled);
  assert_true(k >= 0);
  return k;
}

/* @p tab of @p m as `mprof view --render --tab` draws it (a span tab on
 * @p kernel, or the kernel it opens on when -1): something on it, more
 * than a message page. */
static void assert_draws(const mprof_render_model *m, int tab, int kernel) {
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  if (kernel >= 0)
    v.kernel = kernel;
  if (mprof_render_tab_is_span(tab))
    mprof_render_view_open_span_tab(&v, m, kernel >= 0);
  fix_image img = fix_draw(m, &v, tab, 320, 200);
  double ink;
  size_t colors = fix_colors(&img, &ink);
  if (colors < 16 || ink < 0.02)
    fail_msg("%s: %zu colours, %.1f%% ink: blank", mprof_render_tab_key(tab),
             colors, 100 * ink);
  fix_free(&img);
}

static void assert_every_tab_draws(const mprof_render_model *m) {
  for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++)
    assert_draws(m, tab, -1);
  /* The span tabs of the kernel without spans: projected. */
  assert_draws(m, MPROF_RENDER_MEGA, kernel_named(m, K1));
  assert_draws(m, MPROF_RENDER_DENSITY, kernel_named(m, K1));
}

/* The row of copies of no stream, or -1. */
static int no_stream_row(const mprof_render_model *m) {
  for (size_t r = 0; r < mprof_render_row_count(m); r++) {
    const mprof_render_row *row = mprof_render_row_at(m, r);
    if (row->kind == MPROF_ROW_STREAM && row->stream == MPROF_INDEX_NONE)
      return (int)r;
  }
  return -1;
}

/* A copy whose stream is NONE (the reader accepts it) is drawn where it
 * happened, on a "copies" row under a last "No stream" band, and hovering
 * it names it; it crashed every tab at open. */
static void test_copy_of_no_stream(void **state) {
  (void)state;
  mprof_render_model *m = open_trace("stream-none.mprof");
  int r = no_stream_row(m);
  assert_true(r > 0);
  assert_int_equal(r + 1, (int)mprof_render_row_count(m));
  assert_string_equal(mprof_render_row_at(m, (size_t)r)->label, "copies");
  const mprof_render_row *band = mprof_render_row_at(m, (size_t)r - 1);
  assert_int_equal(band->kind, MPROF_ROW_DEVICE);
  assert_string_equal(band->label, "No stream");
  /* The DtoH copy at 62..70 us, in the middle of its row. */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  int x = (int)mprof_render_time_to_x(&map, (int64_t)(T0 + 66000));
  double h, top = mprof_render_row_top(m, &v, (size_t)r, &h);
  int y = (int)(MPROF_RENDER_RULER + top + h / 2);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_equal(fix_pixel(&img, x, y), MEMOP_COLOR);
  /* Nothing there before the copies. */
  int before = (int)mprof_render_time_to_x(&map, (int64_t)(T0 + 30000));
  assert_int_not_equal(fix_pixel(&img, before, y), MEMOP_COLOR);
  fix_free(&img);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, x, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_MEMOP);
  assert_int_equal(hit.memop, 1); /* MEMOPS record 1: the DtoH */
  assert_int_equal(hit.stream, MPROF_INDEX_NONE);
  char text[512];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "DtoH"));
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 20, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LABEL);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_string_equal(
      text, "No stream: 2 copies and memsets recorded without a stream");
  assert_every_tab_draws(m);
  mprof_render_model_free(m);
  /* A trace whose copies all have a stream has no such row. */
  m = fix_open("hostile-fixture.mprof", 1);
  assert_int_equal(no_stream_row(m), -1);
  mprof_render_model_free(m);
}

/* A launch (and a range, a span, a PM window) ending near 2^64 ns: the
 * limits, zooming and panning stay ordered and inside the int64 range
 * (UBSan: a signed overflow in mprof_render_model_limits on every tab),
 * and the launch shows reaching to the end of the view. */
static void test_launch_ending_near_2_64(void **state) {
  (void)state;
  mprof_render_model *m = open_trace("end-near-max.mprof");
  mprof_render_limits l;
  mprof_render_model_limits(m, &l);
  assert_true(l.min_ns < (int64_t)T0);
  assert_true(l.max_ns > l.min_ns + (int64_t)T0); /* far past the start */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  assert_true(v.end_ns > v.start_ns);
  /* Zoomed in at the right edge, panned past it, out again. */
  mprof_render_view_zoom(&v, &l, 1.0, 1e9);
  assert_true(v.end_ns <= l.max_ns && v.end_ns > v.start_ns);
  mprof_render_view_pan(&v, &l, 1e12);
  assert_true(v.end_ns <= l.max_ns && v.start_ns >= l.min_ns);
  mprof_render_view_zoom(&v, &l, 0.0, 1e-30);
  assert_true(v.start_ns == l.min_ns && v.end_ns == l.max_ns);
  /* The whole trace: the long launch of K1 covers the right of its row. */
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  int row = -1;
  for (size_t r = 0; r < mprof_render_row_count(m) && row < 0; r++)
    if (mprof_render_row_at(m, r)->kind == MPROF_ROW_STREAM)
      row = (int)r;
  assert_true(row >= 0);
  double h, top = mprof_render_row_top(m, &v, (size_t)row, &h);
  int y = (int)(MPROF_RENDER_RULER + top + h / 2);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, W * 3 / 4, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LAUNCH);
  assert_int_equal(hit.launch, 3);
  assert_int_equal(hit.kernel, kernel_named(m, K1));
  char text[512];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "compute"));
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_equal(fix_pixel(&img, W * 3 / 4, y),
                   mprof_render_kernel_at(m, (size_t)hit.kernel)->color);
  fix_free(&img);
  /* Hovering far right on the ruler and a selection across everything. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, W - 1, 5, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_RULER);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  v.sel_start_ns = INT64_MIN;
  v.sel_end_ns = INT64_MAX;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_free(&img);
  assert_every_tab_draws(m);
  mprof_render_model_free(m);
}

/* Rows of @p tab for @p kernel at one pixel per SM. */
static double sm_rows(const mprof_render_model *m, int tab, int kernel) {
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = kernel;
  v.sm_height = 1;
  return mprof_render_content_height(m, &v, tab, W);
}

/* A device's SMs as rows of the span views, @p measured for the kernel with
 * spans and @p projected for the one without, and every tab draws in
 * bounded memory. */
static void check_sm_claim(const char *trace, double measured,
                           double projected) {
  mprof_render_model *m = open_trace(trace);
  int k0 = kernel_named(m, K0), k1 = kernel_named(m, K1);
  for (int tab = MPROF_RENDER_MEGA; tab <= MPROF_RENDER_DENSITY; tab++) {
    assert_true(sm_rows(m, tab, k0) == measured);
    assert_true(sm_rows(m, tab, k1) == projected);
  }
  assert_every_tab_draws(m);
  mprof_render_model_free(m);
}

static void test_device_of_the_most_sms(void **state) {
  (void)state;
  /* All of them, idle ones too, as for any device: no more than RS_SM_MAX
   * (the bound is the reader's). */
  check_sm_claim("sms-bound.mprof", SM_MAX, SM_MAX);
}

/* Past MPROF_DEVICE_SM_MAX the reader refuses the trace in one line, so
 * the views never size anything by the claim. */
static void expect_refused_claim(const char *name, uint32_t sms) {
  for (size_t i = 0; i < TRACE_COUNT; i++)
    if (strcmp(traces[i].name, name) == 0) {
      const char *path = test_path(name);
      write_trace(path, &traces[i].h);
      mprof_render_model *m = NULL;
      assert_int_not_equal(mprof_render_model_open(&m, path, NULL), 0);
      assert_null(m);
      char want[128];
      snprintf(want, sizeof want, "record 0: sm_count %u is above %u, ", sms,
               MPROF_DEVICE_SM_MAX);
      if (!strstr(mprof_render_error(), want))
        fail_msg("'%s' lacks '%s'", mprof_render_error(), want);
      return;
    }
  fail_msg("no trace %s", name);
}

static void test_device_of_2_28_sms(void **state) {
  (void)state;
  expect_refused_claim("sms-2e28.mprof", 1u << 28);
}

static void test_device_of_2_32_sms(void **state) {
  (void)state;
  expect_refused_claim("sms-max.mprof", UINT32_MAX);
}

static void test_device_of_132_sms(void **state) {
  (void)state;
  check_sm_claim("plain.mprof", 132, 132);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write") == 0) {
    for (size_t i = 0; i + 1 < TRACE_COUNT; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[2], traces[i].name);
      write_trace(path, &traces[i].h);
    }
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_of_no_stream),
      cmocka_unit_test(test_launch_ending_near_2_64),
      cmocka_unit_test(test_device_of_the_most_sms),
      cmocka_unit_test(test_device_of_2_28_sms),
      cmocka_unit_test(test_device_of_2_32_sms),
      cmocka_unit_test(test_device_of_132_sms),
  };
  int failed = cmocka_run_group_tests(tests, limit_memory, NULL);
  mprof_render_shutdown();
  return failed;
}
