/*
 * Tests of the capture window's state machine (producers/cupti/capture.c):
 * every option's exact meaning, against a fake clock and made-up events.
 *
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "capture.h"

#define ON MPROF_CUPTI_CAPTURE_ON
#define OFF MPROF_CUPTI_CAPTURE_OFF
#define SAME MPROF_CUPTI_CAPTURE_SAME
#define MS 1000000ull
#define S 1000000000ull

static mprof_cupti_capture_settings settings(const char *range) {
  mprof_cupti_capture_settings s;
  memset(&s, 0, sizeof s);
  char why[256] = "";
  assert_int_equal(mprof_cupti_capture_parse_range(&s, range, why, sizeof why),
                   0);
  return s;
}

static void start(mprof_cupti_capture *c, const mprof_cupti_capture_settings *s,
                  const char *kernel_regex) {
  char why[256] = "";
  assert_int_equal(
      mprof_cupti_capture_init(c, s, kernel_regex, why, sizeof why), 0);
}

/* One step of a training loop on thread 7: push "step", two launches'
 * worth of nesting ("fwd" inside), pop. Returns what the push did, and what
 * the pop did in *pop_change. */
static mprof_cupti_capture_change step(mprof_cupti_capture *c, uint64_t now,
                                       mprof_cupti_capture_change *pop_change) {
  mprof_cupti_capture_change push =
      mprof_cupti_capture_push(c, 7, "step", NULL, now);
  assert_int_equal(mprof_cupti_capture_push(c, 7, "fwd", NULL, now + 1), SAME);
  assert_int_equal(mprof_cupti_capture_pop(c, 7, now + 2), SAME);
  *pop_change = mprof_cupti_capture_pop(c, 7, now + 3);
  return push;
}

static void test_parse_range(void **state) {
  (void)state;
  mprof_cupti_capture_settings s;
  char why[256];
  memset(&s, 0, sizeof s);
  assert_int_equal(mprof_cupti_capture_parse_range(&s, "none", why, sizeof why),
                   0);
  assert_int_equal(s.trigger, MPROF_CAPTURE_WHOLE);
  assert_int_equal(
      mprof_cupti_capture_parse_range(&s, "cudaProfilerApi", why, sizeof why),
      0);
  assert_int_equal(s.trigger, MPROF_CAPTURE_PROFILER_API);
  assert_int_equal(
      mprof_cupti_capture_parse_range(&s, "nvtx:step", why, sizeof why), 0);
  assert_int_equal(s.trigger, MPROF_CAPTURE_NVTX);
  assert_string_equal(s.nvtx_name, "step");
  assert_string_equal(s.nvtx_domain, "");
  assert_int_equal(s.nvtx_regex, 0);
  assert_string_equal(s.spec, "nvtx:step");
  assert_int_equal(mprof_cupti_capture_parse_range(&s, "nvtx:my step@Torch",
                                                   why, sizeof why),
                   0);
  assert_string_equal(s.nvtx_name, "my step");
  assert_string_equal(s.nvtx_domain, "Torch");
  /* A regex may hold '@' and '/': the domain follows the closing slash. */
  assert_int_equal(
      mprof_cupti_capture_parse_range(&s, "nvtx:/^a@b/c$/@*", why, sizeof why),
      0);
  assert_string_equal(s.nvtx_name, "^a@b/c$");
  assert_string_equal(s.nvtx_domain, "*");
  assert_int_equal(s.nvtx_regex, 1);

  static const struct {
    const char *text, *why;
  } bad[] = {
      {"cudaprofilerapi", "is not none, cudaProfilerApi"},
      {"nvtx:", "names no range"},
      {"nvtx:@dom", "names no range"},
      {"nvtx:step@", "names no domain after '@'"},
      {"nvtx:/step", "opens a /REGEX/ it does not close"},
      {"nvtx:/st(ep/", "does not compile"},
      {"nvtx:/step/x", "has 'x' after its /REGEX/"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why[0] = '\0';
    assert_int_equal(
        mprof_cupti_capture_parse_range(&s, bad[i].text, why, sizeof why), -1);
    if (!strstr(why, bad[i].why))
      fail_msg("'%s': '%s' lacks '%s'", bad[i].text, why, bad[i].why);
  }
}

/* --capture-range nvtx:step --range-skip 100 --range-count 3: steps 101-103
 * recorded (on at their push, off at their pop), nothing before or after. */
static void test_nvtx_skip_count(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("nvtx:step");
  s.range_skip = 100;
  s.range_count = 3;
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  assert_int_equal(mprof_cupti_capture_begin(&c, 0), SAME);
  int ons = 0, offs = 0;
  for (int i = 0; i < 200; i++) {
    mprof_cupti_capture_change pop;
    mprof_cupti_capture_change push = step(&c, (uint64_t)(i + 1) * MS, &pop);
    int recorded = i >= 100 && i < 103;
    assert_int_equal(push, recorded ? ON : SAME);
    assert_int_equal(pop, recorded ? OFF : SAME);
    assert_int_equal(c.recording, 0);
    ons += push == ON;
    offs += pop == OFF;
  }
  assert_int_equal(ons, 3);
  assert_int_equal(offs, 3);
  assert_int_equal(mprof_cupti_capture_finish(&c, 300 * MS), SAME);
  mprof_capture_record r;
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.trigger, MPROF_CAPTURE_NVTX);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_RANGE_COUNT);
  assert_int_equal(r.recorded, 3);
  assert_int_equal(r.seen, 103); /* nothing is counted once it is over */
  assert_int_equal(r.skip, 100);
  assert_int_equal(r.count, 3);
  assert_int_equal(r.pieces, 3);
  assert_int_equal(r.start, 101 * MS);   /* the 101st step's push */
  assert_int_equal(r.end, 103 * MS + 3); /* the 103rd step's pop */
  assert_true(mprof_cupti_capture_settled(&c));
  mprof_cupti_capture_free(&c);
}

/* A "step" inside a "step" (nested, or on another thread while one is
 * open) neither counts nor ends the outer one; another name or domain never
 * counts. */
static void test_nvtx_nesting(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("nvtx:step");
  s.range_skip = 1;
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  /* Skipped range 1, with a nested step and one on thread 8. */
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", NULL, 1), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", NULL, 2), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 8, "step", NULL, 3), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 8, 4), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 5), SAME);
  assert_int_equal(c.range_open, 1); /* the outer one is still open */
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 6), SAME);
  assert_int_equal(c.ranges_seen, 1);
  /* Not ours: another name, a domain, a pop with no push. */
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "steps", NULL, 7), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 8), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", "Torch", 9), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 10), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 9, 11), SAME);
  assert_int_equal(c.ranges_seen, 1);
  /* Range 2 is recorded; its nested step and thread 8's pop leave it on. */
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", NULL, 12), ON);
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", NULL, 13), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 14), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 8, "step", NULL, 15), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 8, 16), SAME);
  assert_int_equal(c.recording, 1);
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 17), OFF);
  /* Count 0: every later range is recorded too. */
  assert_int_equal(mprof_cupti_capture_push(&c, 8, "step", NULL, 18), ON);
  assert_int_equal(mprof_cupti_capture_pop(&c, 8, 19), OFF);
  assert_int_equal(mprof_cupti_capture_finish(&c, 20), SAME);
  assert_int_equal(c.end, MPROF_CAPTURE_END_EXIT);
  assert_int_equal(c.ranges_recorded, 2);
  mprof_cupti_capture_free(&c);
}

/* Domains: "@Torch" only that domain, "@*" any, none the default one;
 * regex names; start/end ranges by id. */
static void test_nvtx_domains_regex_ids(void **state) {
  (void)state;
  mprof_cupti_capture c;
  mprof_cupti_capture_settings s = settings("nvtx:step@Torch");
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_push(&c, 1, "step", NULL, 1), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 1, 2), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 1, "step", "Torch", 3), ON);
  assert_int_equal(mprof_cupti_capture_pop(&c, 1, 4), OFF);
  mprof_cupti_capture_free(&c);

  s = settings("nvtx:/^step [0-9]+$/@*");
  s.range_count = 2;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_push(&c, 1, "step x", "A", 1), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 1, 2), SAME);
  assert_int_equal(mprof_cupti_capture_push(&c, 1, "step 12", "A", 3), ON);
  assert_int_equal(mprof_cupti_capture_pop(&c, 1, 4), OFF);
  /* nvtxRangeStart/End: ended by id, from any thread. */
  assert_int_equal(mprof_cupti_capture_start_range(&c, 55, "step 13", NULL, 5),
                   ON);
  assert_int_equal(mprof_cupti_capture_end_range(&c, 54, 6), SAME);
  assert_int_equal(mprof_cupti_capture_pop(&c, 1, 7), SAME);
  assert_int_equal(mprof_cupti_capture_end_range(&c, 55, 8), OFF);
  assert_int_equal(c.end, MPROF_CAPTURE_END_RANGE_COUNT);
  assert_int_equal(mprof_cupti_capture_start_range(&c, 56, "step 14", NULL, 9),
                   SAME);
  mprof_cupti_capture_free(&c);
}

/* cudaProfilerApi: pairs are ranges; a second start or a stray stop is
 * ignored (the runtime's cudaProfilerStart calls the driver's too). */
static void test_profiler_api(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("cudaProfilerApi");
  s.range_skip = 1;
  s.range_count = 2;
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_profiler_stop(&c, 1), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 2), SAME); /* skip */
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 3), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_stop(&c, 4), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_stop(&c, 5), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 6), ON);
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 7), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_stop(&c, 8), OFF);
  assert_int_equal(mprof_cupti_capture_profiler_stop(&c, 9), SAME);
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 10), ON);
  /* The program ends inside its last range: the window ends with it. */
  assert_int_equal(mprof_cupti_capture_finish(&c, 11), OFF);
  mprof_capture_record r;
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_EXIT);
  assert_int_equal(r.start, 6);
  assert_int_equal(r.end, 11);
  assert_int_equal(r.pieces, 2);
  assert_int_equal(r.recorded, 2);
  mprof_cupti_capture_free(&c);
  /* NVTX events mean nothing to a cudaProfilerApi window, nor the reverse. */
  s = settings("cudaProfilerApi");
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_push(&c, 1, "step", NULL, 1), SAME);
  mprof_cupti_capture_free(&c);
  s = settings("nvtx:step");
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_profiler_start(&c, 1), SAME);
  mprof_cupti_capture_free(&c);
}

/* --delay and --duration against the clock: the whole run from 2 s to 5 s. */
static void test_delay_duration(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("none");
  s.delay_ns = 2 * S;
  s.duration_ns = 3 * S;
  assert_true(mprof_cupti_capture_wanted(&s));
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  assert_int_equal(mprof_cupti_capture_begin(&c, 10 * S), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 11 * S), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 12 * S - 1), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 12 * S), ON);
  assert_int_equal(mprof_cupti_capture_tick(&c, 14 * S), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 15 * S - 1), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 15 * S), OFF);
  assert_int_equal(mprof_cupti_capture_tick(&c, 16 * S), SAME);
  assert_int_equal(mprof_cupti_capture_finish(&c, 17 * S), SAME);
  assert_int_equal(c.end, MPROF_CAPTURE_END_DURATION);
  mprof_cupti_capture_free(&c);

  /* No delay: on at once. */
  s = settings("none");
  s.duration_ns = 1 * S;
  start(&c, &s, NULL);
  assert_int_equal(mprof_cupti_capture_begin(&c, 5), ON);
  mprof_cupti_capture_free(&c);

  /* With ranges: those begun before the delay are not counted as skipped;
   * the duration, from the first recorded range, ends the window between
   * ranges or inside one (at the first event past it). */
  s = settings("nvtx:step");
  s.delay_ns = 10 * MS;
  s.range_skip = 1;
  s.duration_ns = 25 * MS;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  mprof_cupti_capture_change pop;
  for (int ms = 0; ms < 10; ms++) /* before the delay */
    assert_int_equal(step(&c, (uint64_t)ms * MS, &pop), SAME);
  assert_int_equal(c.ranges_seen, 0);
  assert_int_equal(step(&c, 10 * MS, &pop), SAME); /* skipped */
  assert_int_equal(step(&c, 20 * MS, &pop), ON);   /* window opens at 20 ms */
  assert_int_equal(pop, OFF);
  assert_int_equal(step(&c, 30 * MS, &pop), ON);
  assert_int_equal(pop, OFF);
  assert_int_equal(mprof_cupti_capture_push(&c, 7, "step", NULL, 40 * MS), ON);
  assert_int_equal(mprof_cupti_capture_tick(&c, 45 * MS), OFF); /* 25 ms */
  assert_int_equal(mprof_cupti_capture_pop(&c, 7, 46 * MS), SAME);
  assert_int_equal(c.end, MPROF_CAPTURE_END_DURATION);
  assert_int_equal(c.ranges_recorded, 3);
  mprof_cupti_capture_free(&c);
}

/* --kernel-skip/--kernel-count count only the launches --kernel matches;
 * the window holds exactly kernel_count of them. */
static void test_kernel_skip_count(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("none");
  s.kernel_skip = 2;
  s.kernel_count = 3;
  mprof_cupti_capture c;
  start(&c, &s, "gemm");
  assert_int_equal(mprof_cupti_capture_begin(&c, 0), SAME);
  static const struct {
    const char *name;
    mprof_cupti_capture_change change;
  } launches[] = {
      {"_Z4gemmv", SAME},                     /* 1: skipped */
      {"_Z4relu", SAME},                      /* not counted */
      {"_Z4gemmv", SAME},                     /* 2: skipped */
      {"_Z4relu", SAME},  {"_Z6gemm_tv", ON}, /* 3: first recorded */
      {"_Z4relu", SAME},                      /* inside the window */
      {"_Z4gemmv", SAME},                     /* 4 */
      {"_Z4gemmv", SAME},                     /* 5: the last recorded */
      {"_Z4relu", SAME},  {"_Z4gemmv", OFF},  /* 6: off before it launches */
      {"_Z4gemmv", SAME},
  };
  for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++)
    assert_int_equal(
        mprof_cupti_capture_kernel(&c, launches[i].name, (uint64_t)i + 1),
        launches[i].change);
  mprof_capture_record r;
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.trigger, MPROF_CAPTURE_KERNELS);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_KERNEL_COUNT);
  assert_int_equal(r.recorded, 3);
  assert_int_equal(r.start, 5);
  assert_int_equal(r.end, 10);
  mprof_cupti_capture_free(&c);

  /* Without --kernel every launch counts; no count: on to the end. */
  s = settings("none");
  s.kernel_skip = 1;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_kernel(&c, "a", 1), SAME);
  assert_int_equal(mprof_cupti_capture_kernel(&c, "b", 2), ON);
  assert_int_equal(mprof_cupti_capture_kernel(&c, "c", 3), SAME);
  assert_int_equal(mprof_cupti_capture_finish(&c, 4), OFF);
  assert_int_equal(c.end, MPROF_CAPTURE_END_EXIT);
  assert_int_equal(c.kernels_recorded, 2);
  mprof_cupti_capture_free(&c);
}

/* --max-size ends the window for good when the file reaches it, even
 * between ranges; before the window opens it keeps it from ever opening. */
static void test_max_size(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("none");
  s.max_bytes = 1000;
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  assert_int_equal(mprof_cupti_capture_begin(&c, 0), ON);
  assert_int_equal(mprof_cupti_capture_bytes(&c, 999, 1), SAME);
  assert_int_equal(mprof_cupti_capture_bytes(&c, 1000, 2), OFF);
  assert_int_equal(mprof_cupti_capture_bytes(&c, 2000, 3), SAME);
  assert_int_equal(mprof_cupti_capture_tick(&c, 4), SAME);
  assert_int_equal(mprof_cupti_capture_finish(&c, 5), SAME);
  mprof_capture_record r;
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_MAX_SIZE);
  assert_int_equal(r.max_bytes, 1000);
  assert_int_equal(r.end, 2);
  mprof_cupti_capture_free(&c);

  s = settings("nvtx:step");
  s.max_bytes = 1000;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  assert_int_equal(mprof_cupti_capture_bytes(&c, 5000, 1), SAME);
  mprof_cupti_capture_change pop;
  assert_int_equal(step(&c, 2, &pop), SAME);
  assert_int_equal(mprof_cupti_capture_finish(&c, 9), SAME);
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_MAX_SIZE);
  assert_int_equal(r.start, 0);
  assert_int_equal(r.pieces, 0);
  mprof_cupti_capture_free(&c);
}

/* Fewer ranges than --range-skip: the window never opened, and says so. */
static void test_never_opened(void **state) {
  (void)state;
  mprof_cupti_capture_settings s = settings("nvtx:step");
  s.range_skip = 1000;
  mprof_cupti_capture c;
  start(&c, &s, NULL);
  mprof_cupti_capture_begin(&c, 0);
  mprof_cupti_capture_change pop;
  for (int i = 0; i < 37; i++)
    assert_int_equal(step(&c, (uint64_t)i * 10, &pop), SAME);
  assert_int_equal(mprof_cupti_capture_finish(&c, 1000), SAME);
  mprof_capture_record r;
  mprof_cupti_capture_record(&c, &r);
  assert_int_equal(r.end_reason, MPROF_CAPTURE_END_NEVER_OPENED);
  assert_int_equal(r.seen, 37);
  assert_int_equal(r.recorded, 0);
  assert_false(mprof_cupti_capture_wanted(&(mprof_cupti_capture_settings){0}));
  mprof_cupti_capture_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_range),
      cmocka_unit_test(test_nvtx_skip_count),
      cmocka_unit_test(test_nvtx_nesting),
      cmocka_unit_test(test_nvtx_domains_regex_ids),
      cmocka_unit_test(test_profiler_api),
      cmocka_unit_test(test_delay_duration),
      cmocka_unit_test(test_kernel_skip_count),
      cmocka_unit_test(test_max_size),
      cmocka_unit_test(test_never_opened),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
