/*
 * GPU time per innermost NVTX range (mprof/ranges.h) on traces written with
 * the writer: nesting, unnamed ranges, instantaneous markers, ranges of
 * another thread, calls outside every range and launches without a call.
 *
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mprof/mprof.h"

static const char *test_path(const char *name) {
  static char path[4096];
  const char *dir = getenv("MPROF_TEST_TMP");
  snprintf(path, sizeof path, "%s/ranges-%ld-%s", dir && *dir ? dir : "/tmp",
           (long)getpid(), name);
  return path;
}

typedef struct range_spec {
  const char *name, *domain;
  uint32_t thread;
  uint64_t start, end;
  uint32_t depth;
  uint32_t flags;
} range_spec;

typedef struct call_spec {
  uint32_t thread;
  uint64_t start;
  uint32_t correlation;
} call_spec;

static const range_spec ranges[] = {
    {"load", "io", 100, 0, 900, 0}, /* opened before the first CUDA call */
    {"step", "", 100, 1000, 10000, 0, MPROF_RANGE_FLAG_OPEN}, /* at a cut */
    {"forward", "", 100, 1100, 5000, 1},
    {"attn", "", 100, 1200, 2000, 2},
    {"mark", "", 100, 3000, 3000, 2}, /* instantaneous: holds nothing */
    {"backward", "", 100, 5000, 9000, 1},
    {"", "", 100, 6000, 7000, 2}, /* unnamed: its parent counts */
    {"forward", "", 200, 1000, 3000, 0, MPROF_RANGE_FLAG_OPEN},
    /* A capture window's piece, as the CUPTI producer writes it: opened
     * after forward, it would be the innermost range of call 2; it is
     * mprof's own and holds nothing. */
    {"mprof window #1", "mprof", 100, 1140, 1600, 0},
};

static const call_spec calls[] = {
    {100, 500, 1},   /* load (domain io) */
    {100, 1150, 2},  /* forward */
    {100, 1500, 3},  /* attn */
    {100, 2000, 4},  /* forward: attn ended at 2000 */
    {100, 6500, 5},  /* backward, through the unnamed range */
    {100, 9500, 6},  /* step */
    {100, 12000, 7}, /* outside every range */
    {200, 1500, 8},  /* forward, on the other thread */
    {200, 1600, 9},  /* the copy, in forward */
    /* A thread with no range of its own (PyTorch's autograd thread): the
     * innermost range open on any thread then, attn on 100. */
    {300, 1300, 10},
};

/* Launch of correlation i + 1 lasts durations[i]; correlation 99 has no
 * call. */
static const uint64_t durations[] = {10, 100, 200, 300, 400, 500, 600, 700};

static void write_trace(const char *path, int with_ranges, int with_calls) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  uint32_t d, s, k, sh;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  mprof_stream_record st = {d, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, "_Z6kernelv");
  kr.device = d;
  assert_int_equal(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = k;
  assert_int_equal(mprof_writer_intern(w, &sh, MPROF_SECTION_SHAPES, &shape),
                   0);
  uint64_t t = 20000;
  for (uint32_t i = 0; i < 8; i++, t += 1000) {
    mprof_launch_record l = {t, t + durations[i], sh, s, i + 1, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_launch_record orphan = {t, t + 50, sh, s, 99, 0, 0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &orphan), 0);
  t += 1000;
  mprof_launch_record borrowed = {t, t + 800, sh, s, 10, 0, 0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &borrowed), 0);
  mprof_memop_record mo;
  memset(&mo, 0, sizeof mo);
  mo.start = 30000;
  mo.end = 30080;
  mo.bytes = 4096;
  mo.stream = s;
  mo.correlation_id = 9;
  mo.kind = MPROF_MEMOP_MEMCPY;
  mo.copy_kind = MPROF_COPY_HTOD;
  mo.src_device = MPROF_INDEX_NONE;
  mo.dst_device = 0;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo), 0);
  for (size_t i = 0; with_ranges && i < sizeof ranges / sizeof ranges[0]; i++) {
    mprof_range_record r;
    memset(&r, 0, sizeof r);
    r.start = ranges[i].start;
    r.end = ranges[i].end;
    r.name = mprof_writer_string(w, ranges[i].name);
    r.domain = mprof_writer_string(w, ranges[i].domain);
    r.thread_id = ranges[i].thread;
    r.depth = ranges[i].depth;
    r.flags = ranges[i].flags;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
  }
  /* Calls in an order other than time: the join must not depend on it. */
  for (size_t j = 0; with_calls && j < sizeof calls / sizeof calls[0]; j++) {
    size_t i = sizeof calls / sizeof calls[0] - 1 - j;
    mprof_api_call_record c = {calls[i].start,
                               calls[i].start + 5,
                               calls[i].correlation,
                               calls[i].thread,
                               mprof_writer_string(w, "cudaLaunchKernel"),
                               MPROF_API_RUNTIME};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c),
                     0);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static mprof_range_times *build(const char *path, mprof_trace **trace) {
  assert_int_equal(mprof_trace_open(trace, path, NULL), 0);
  mprof_range_times *times = NULL;
  assert_int_equal(mprof_range_times_build(&times, *trace), 0);
  return times;
}

static const mprof_range_time *row(const mprof_range_times *times,
                                   const char *name) {
  for (size_t i = 0; i < mprof_range_times_count(times); i++)
    if (strcmp(mprof_range_times_get(times, i)->name, name) == 0)
      return mprof_range_times_get(times, i);
  fail_msg("no range %s", name);
  return NULL;
}

static void test_innermost_range_gets_the_time(void **state) {
  (void)state;
  const char *path = test_path("nested.mprof");
  write_trace(path, 1, 1);
  mprof_trace *trace;
  mprof_range_times *times = build(path, &trace);
  /* The result outlives its trace. */
  mprof_trace_free(trace);
  assert_null(mprof_range_times_missing(times));
  assert_int_equal(mprof_range_times_count(times), 6);
  /* A tree, parent first, by inclusive time: step holds backward; forward
   * is in step on thread 100 and at the top on 200, so it is not step's
   * child; attn is always in forward; load and mark stand alone. */
  static const char *order[] = {"step", "backward", "forward",
                                "attn", "load",     "mark"};
  static const char *parents[] = {NULL, "step", NULL, "forward", NULL, NULL};
  static const uint32_t depths[] = {0, 1, 0, 1, 0, 0};
  for (size_t i = 0; i < 6; i++) {
    const mprof_range_time *r = mprof_range_times_get(times, i);
    assert_string_equal(r->name, order[i]);
    if (parents[i])
      assert_string_equal(r->parent, parents[i]);
    else
      assert_null(r->parent);
    assert_int_equal(r->depth, depths[i]);
  }
  assert_null(mprof_range_times_get(times, 6));
  /* Inclusive: nested ranges' time too, each launch once per name. */
  assert_int_equal(row(times, "step")->inclusive_ns,
                   100 + 200 + 300 + 800 + 400 + 500);
  assert_int_equal(row(times, "step")->inclusive_launches, 6);
  assert_int_equal(row(times, "forward")->inclusive_ns,
                   100 + 200 + 300 + 700 + 800);
  assert_int_equal(row(times, "forward")->inclusive_copies, 1);
  assert_int_equal(row(times, "attn")->inclusive_ns, 1000);
  /* The launch of thread 300, which had no range open: attn's, borrowed. */
  assert_int_equal(row(times, "attn")->kernel_ns, 200 + 800);
  assert_int_equal(row(times, "attn")->launches, 2);
  assert_int_equal(row(times, "attn")->borrowed_launches, 1);
  assert_int_equal(row(times, "forward")->borrowed_launches, 0);
  /* Each range's kernels: the one kernel, its launches. */
  assert_int_equal(mprof_range_times_kernel_count(times, 3), 1);
  assert_string_equal(mprof_range_times_kernel(times, 3, 0)->mangled,
                      "_Z6kernelv");
  assert_int_equal(mprof_range_times_kernel(times, 3, 0)->launches, 2);
  assert_int_equal(mprof_range_times_kernel(times, 3, 0)->kernel_ns, 1000);
  assert_null(mprof_range_times_kernel(times, 3, 1));
  assert_int_equal(mprof_range_times_kernel_count(times, 5), 0);
  assert_null(mprof_range_times_kernel(times, 6, 0));

  const mprof_range_time *f = row(times, "forward");
  assert_int_equal(f->launches, 3);
  assert_int_equal(f->kernel_ns, 100 + 300 + 700);
  assert_int_equal(f->copies, 1);
  assert_int_equal(f->copy_ns, 80);
  assert_int_equal(f->instances, 2);
  assert_int_equal(f->open_instances, 1);
  assert_int_equal(row(times, "step")->open_instances, 1);
  assert_int_equal(row(times, "backward")->open_instances, 0);
  assert_int_equal(f->host_ns, 3900 + 2000);
  assert_string_equal(f->domain, "");
  assert_true(f->share > 1100.0 / 3660 - 1e-9 &&
              f->share < 1100.0 / 3660 + 1e-9);
  assert_int_equal(row(times, "backward")->kernel_ns, 400);
  assert_int_equal(row(times, "backward")->launches, 1);
  assert_int_equal(row(times, "step")->kernel_ns, 500);
  const mprof_range_time *load = row(times, "load");
  assert_int_equal(load->kernel_ns, 10);
  assert_string_equal(load->domain, "io");
  assert_int_equal(row(times, "mark")->kernel_ns, 0);
  assert_int_equal(row(times, "mark")->instances, 1);

  const mprof_range_totals *t = mprof_range_times_totals(times);
  assert_int_equal(t->range_records, 9); /* mprof's own one included */
  assert_int_equal(t->api_calls, 10);
  assert_int_equal(t->launches, 10);
  assert_int_equal(t->kernel_ns, 3660);
  assert_int_equal(t->in_ranges_launches, 8);
  assert_int_equal(t->in_ranges_ns, 3010);
  assert_int_equal(t->borrowed_launches, 1);
  assert_int_equal(t->borrowed_ns, 800);
  assert_int_equal(t->outside_launches, 1);
  assert_int_equal(t->outside_ns, 600);
  assert_int_equal(t->unmatched_launches, 1);
  assert_int_equal(t->unmatched_ns, 50);

  /* The reports carry the same numbers. */
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.max_kernels = 2;
  assert_int_equal(mprof_range_times_write(out, times, &ro), 0);
  fclose(out);
  assert_non_null(strstr(text, "<range rank=\"1\" name=\"step\" "
                               "share=\"0.1366\" kernel_ns=\"500\""));
  assert_non_null(strstr(text, "<range rank=\"2\" name=\"backward\" "
                               "share=\"0.1093\" kernel_ns=\"400\" "
                               "launches=\"1\" copy_ns=\"0\" copies=\"0\" "
                               "instances=\"1\" host_ns=\"4000\" "
                               "open_at_cut=\"0\" inclusive_share=\"0.1093\" "
                               "inclusive_ns=\"400\" inclusive_launches=\"1\" "
                               "inclusive_copy_ns=\"0\" inclusive_copies=\"0\" "
                               "borrowed_launches=\"0\" depth=\"1\" "
                               "parent=\"step\"/>"));
  assert_non_null(strstr(text, "matched=\"6\" shown=\"2\" omitted=\"4\""));
  assert_non_null(strstr(text, "outside_ns=\"600\""));
  assert_non_null(strstr(text, "borrowed_ns=\"800\""));
  assert_null(strstr(text, "name=\"forward\""));
  free(text);
  out = open_memstream(&text, &size);
  ro.format = MPROF_REPORT_JSON;
  ro.max_kernels = 10;
  assert_int_equal(mprof_range_times_write(out, times, &ro), 0);
  fclose(out);
  assert_non_null(strstr(text, "{\"rank\":5,\"name\":\"load\",\"domain\":"
                               "\"io\",\"share\":0.0027,\"kernel_ns\":10"));
  assert_non_null(strstr(text, "\"note\":null"));
  free(text);
  out = open_memstream(&text, &size);
  ro.format = MPROF_REPORT_TEXT;
  assert_int_equal(mprof_range_times_write(out, times, &ro), 0);
  fclose(out);
  /* forward: 57.4% inclusive (2.1 us of 3.66 us), 1.1 us exclusive; attn
   * indented under it. */
  assert_non_null(strstr(text, " 57.4%     2.1 us     1.1 us         3       1 "
                               "      2  forward · 1 open at the cut\n"
                               " 27.3%       1 us       1 us         2       0 "
                               "      1    attn\n"));
  assert_non_null(strstr(text, "launched by a thread with no range open, in "
                               "a range open on another thread of its "
                               "process: 21.9%"));
  assert_non_null(strstr(text, "load (io)"));
  /* Ranges still open at a cut say so. */
  assert_non_null(strstr(text, "forward · 1 open at the cut\n"));
  assert_non_null(strstr(text, "step · open at the cut\n"));
  assert_null(strstr(text, "backward ·"));
  free(text);
  /* --kernel: each range lists its kernels that match; none matching is
   * an error that names the pattern. */
  out = open_memstream(&text, &size);
  ro.kernel = "kernel";
  assert_int_equal(mprof_range_times_write(out, times, &ro), 0);
  fclose(out);
  assert_non_null(strstr(text, "      1    attn\n"
                               "                        1 us         2"
                               "                      · kernel\n"));
  assert_null(strstr(text, "mark")); /* no kernel: left out */
  free(text);
  out = open_memstream(&text, &size);
  ro.kernel = "^nothing$";
  assert_int_equal(mprof_range_times_write(out, times, &ro), MPROF_ENOTFOUND);
  fclose(out);
  free(text);
  assert_non_null(
      strstr(mprof_error_last(),
             "no kernel issued inside a range matches '^nothing$'"));
  mprof_range_times_free(times);
  unlink(path);
}

/* Without ranges, or without API calls, a one-line reason and no rows. */
static void test_missing_ranges_or_calls(void **state) {
  (void)state;
  const char *path = test_path("missing.mprof");
  for (int with_ranges = 0; with_ranges < 2; with_ranges++) {
    write_trace(path, with_ranges, !with_ranges);
    mprof_trace *trace;
    mprof_range_times *times = build(path, &trace);
    const char *why = mprof_range_times_missing(times);
    assert_non_null(why);
    assert_non_null(strstr(why, with_ranges ? "no API calls" : "no NVTX"));
    assert_null(strchr(why, '\n'));
    const mprof_range_totals *t = mprof_range_times_totals(times);
    assert_int_equal(t->in_ranges_launches, 0);
    assert_int_equal(t->launches, 10);
    /* Without calls no launch has one; with calls but no ranges all but
     * the orphan were issued outside every range. */
    assert_int_equal(t->unmatched_launches, with_ranges ? 10 : 1);
    assert_int_equal(t->outside_launches, with_ranges ? 0 : 9);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
    ro.format = MPROF_REPORT_TEXT;
    assert_int_equal(mprof_range_times_write(out, times, &ro), 0);
    fclose(out);
    assert_non_null(strstr(text, why));
    free(text);
    mprof_range_times_free(times);
    mprof_trace_free(trace);
  }
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_innermost_range_gets_the_time),
      cmocka_unit_test(test_missing_ranges_or_calls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
