/*
 * mprof tests — every documented diagnosis threshold at its boundary: a
 * value at the threshold, just below and just above it gives the state
 * docs/DIAGNOSIS.md says ("minor from 20%": 20% is minor, 19.9% is not;
 * "issue below 25%": 25% is not), and the diff's. The stall thresholds are
 * read from the
 * table in docs/DIAGNOSIS.md; the others are written here as the page
 * states them, each with its section. Each case first checks that the
 * planted value came out exactly (the premise), then the state.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analysis_util.h"

#include <math.h>

/* ---- planted kernels ------------------------------------------------------
 */

/* Reasons a case can plant, by the names CUPTI gives them; "future_reason"
 * is one no table knows (the `other` bucket: it fills a kernel's samples
 * up without adding to a dimension). */
static const char *const reason_names[] = {
    "long_scoreboard",    "lg_throttle", "mio_throttle",
    "math_pipe_throttle", "barrier",     "branch_resolving",
    "dispatch_stall",     "selected",    "future_reason"};
enum { REASON_COUNT = sizeof reason_names / sizeof reason_names[0] };

static uint32_t reason_index(const char *name) {
  for (uint32_t r = 0; r < REASON_COUNT; r++)
    if (strcmp(reason_names[r], name) == 0)
      return r;
  fail_msg("no planted reason %s", name);
  return 0;
}

/* One kernel, alone on its stream: @p launches runs of @p duration ns with
 * @p gap ns between them, of one shape; @p samples of @p reason and
 * @p filler of future_reason. */
typedef struct planted {
  uint32_t block, registers, dynamic_shared, grid;
  uint32_t launches;
  uint64_t duration, gap;
  const char *reason;
  uint32_t samples, filler;
  const char *reason2; /* a second reason, or NULL */
  uint32_t samples2;
} planted;

/* A kernel that no threshold catches: 8 blocks of 256 threads per SM
 * (100% occupancy) in 8 full waves, ten runs back to back. */
static planted healthy(void) {
  planted p = {256, 32, 0, 132 * 8 * 8, 10, 1000, 0, NULL, 0, 0, NULL, 0};
  return p;
}

static void kernel_name(char *out, size_t size, size_t k) {
  snprintf(out, size, "planted_kernel_%zu", k);
}

static void write_planted(const char *path, const planted *p, size_t count) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  for (uint32_t r = 0; r < REASON_COUNT; r++) {
    char full[128];
    snprintf(full, sizeof full, REASON("%s"), reason_names[r]);
    tt_reason(w, d, r, full);
  }
  for (size_t k = 0; k < count; k++) {
    char name[64];
    kernel_name(name, sizeof name, k);
    uint32_t st = tt_stream(w, d, 100 + (uint32_t)k);
    uint32_t ki = tt_kernel(w, name, name, d, p[k].registers, 0, 0x10 + k);
    uint32_t sh = tt_shape(w, ki, p[k].grid, p[k].block, p[k].dynamic_shared);
    uint64_t t = 1000000;
    for (uint32_t i = 0; i < p[k].launches; i++) {
      tt_launch(w, sh, st, t, t + p[k].duration);
      t += p[k].duration + p[k].gap;
    }
    if (p[k].samples)
      tt_sample(w, d, name, 0x10 + k, 0x100, reason_index(p[k].reason),
                p[k].samples);
    if (p[k].filler)
      tt_sample(w, d, name, 0x10 + k, 0x110, reason_index("future_reason"),
                p[k].filler);
    if (p[k].samples2)
      tt_sample(w, d, name, 0x10 + k, 0x120, reason_index(p[k].reason2),
                p[k].samples2);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static const mprof_kernel_diagnosis *kernel_at(const tt_analysis *a, size_t k) {
  char name[64];
  kernel_name(name, sizeof name, k);
  uint32_t index = mprof_join_find_kernel(a->join, name, MPROF_INDEX_NONE);
  assert_int_not_equal(index, MPROF_INDEX_NONE);
  return mprof_diagnosis_kernel(a->diagnosis, index);
}

static double metric(const mprof_dimension *d, const char *name) {
  for (size_t i = 0; i < d->metric_count; i++)
    if (strcmp(d->metrics[i].name, name) == 0)
      return d->metrics[i].value;
  fail_msg("%s has no metric %s", mprof_dimension_key(d->id), name);
  return NAN;
}

/* Dimension @p dim of kernel @p k: metric @p name is exactly @p value (the
 * premise) and the state is @p state. */
static void expect_near(const tt_analysis *a, size_t k, uint32_t dim,
                        const char *name, double value, double tolerance,
                        uint32_t state, const char *what) {
  const mprof_dimension *d = &kernel_at(a, k)->dimensions[dim];
  double got = metric(d, name);
  if (!(fabs(got - value) <= tolerance))
    fail_msg("%s: %s %s is %.17g, planted %.17g", what,
             mprof_dimension_key(dim), name, got, value);
  if (d->state != state)
    fail_msg("%s: %s %s %.17g is %s, expected %s", what,
             mprof_dimension_key(dim), name, value, mprof_state_name(d->state),
             mprof_state_name(state));
}

static void expect(const tt_analysis *a, size_t k, uint32_t dim,
                   const char *name, double value, uint32_t state,
                   const char *what) {
  expect_near(a, k, dim, name, value, 0.0, state, what);
}

/* ---- stall dimensions -----------------------------------------------------
 */

/* A dimension's row of docs/DIAGNOSIS.md's threshold table, and a reason the
 * same page maps to it. */
typedef struct stall_row {
  const char *title; /* as the page's table names it */
  uint32_t dim;
  const char *reason;
  double minor, issue; /* read from the page */
} stall_row;

static stall_row stall_rows[] = {
    {"memory latency", MPROF_DIM_MEMORY_LATENCY, "long_scoreboard", 0, 0},
    {"memory throughput", MPROF_DIM_MEMORY_THROUGHPUT, "lg_throttle", 0, 0},
    {"shared memory / MIO", MPROF_DIM_SHARED_MIO, "mio_throttle", 0, 0},
    {"compute pipes", MPROF_DIM_COMPUTE, "math_pipe_throttle", 0, 0},
    {"synchronisation", MPROF_DIM_SYNC, "barrier", 0, 0},
    {"instruction fetch / branching", MPROF_DIM_FETCH_BRANCH,
     "branch_resolving", 0, 0},
    {"scheduling", MPROF_DIM_SCHEDULING, "dispatch_stall", 0, 0},
};
enum { STALL_ROWS = sizeof stall_rows / sizeof stall_rows[0] };

/* "| memory latency | 20% | 40% | why |" under "### Stall dimensions". */
static void read_stall_thresholds(void) {
  size_t size = 0;
  char *page = (char *)test_read_file(tt_doc("DIAGNOSIS.md"), &size);
  assert_non_null(page);
  page = (char *)realloc(page, size + 1);
  page[size] = 0;
  const char *section = strstr(page, "### Stall dimensions");
  assert_non_null(section);
  for (size_t r = 0; r < STALL_ROWS; r++) {
    char row[128];
    snprintf(row, sizeof row, "\n| %s | ", stall_rows[r].title);
    const char *at = strstr(section, row);
    if (!at)
      fail_msg("docs/DIAGNOSIS.md has no threshold row for %s",
               stall_rows[r].title);
    int minor, issue;
    assert_int_equal(sscanf(at + strlen(row), "%d%% | %d%% |", &minor, &issue),
                     2);
    stall_rows[r].minor = minor / 100.0;
    stall_rows[r].issue = issue / 100.0;
  }
  free(page);
}

/* Of 1000 samples, the dimension's reason at each threshold, one sample
 * below and one above: ok / minor / minor and minor / issue / issue. */
static void test_stall_thresholds(void **state) {
  (void)state;
  read_stall_thresholds();
  planted p[STALL_ROWS * 6];
  size_t n = 0;
  for (size_t r = 0; r < STALL_ROWS; r++)
    for (int t = 0; t < 2; t++)
      for (int step = -1; step <= 1; step++) {
        double threshold = t ? stall_rows[r].issue : stall_rows[r].minor;
        uint32_t c = (uint32_t)lround(threshold * 1000) + (uint32_t)step;
        p[n] = healthy();
        p[n].reason = stall_rows[r].reason;
        p[n].samples = c;
        p[n].filler = 1000 - c;
        n++;
      }
  const char *path = test_path("stall-thresholds.mprof");
  write_planted(path, p, n);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  n = 0;
  for (size_t r = 0; r < STALL_ROWS; r++)
    for (int t = 0; t < 2; t++)
      for (int step = -1; step <= 1; step++) {
        uint32_t want =
            t == 0 ? (step < 0 ? MPROF_STATE_OK : MPROF_STATE_MINOR)
                   : (step < 0 ? MPROF_STATE_MINOR : MPROF_STATE_ISSUE);
        char what[128];
        snprintf(what, sizeof what, "%s at %u of 1000 samples",
                 stall_rows[r].reason, p[n].samples);
        expect(&a, n, stall_rows[r].dim, "share", p[n].samples / 1000.0, want,
               what);
        n++;
      }
  tt_release(&a);
  unlink(path);
}

/* "a kernel with fewer than 50 plain-reason samples has its stall
 * dimensions unknown" (§4, Samples needed). */
static void test_min_samples(void **state) {
  (void)state;
  planted p[3];
  for (int i = 0; i < 3; i++) {
    p[i] = healthy();
    p[i].reason = "long_scoreboard";
    p[i].samples = 49 + (uint32_t)i;
  }
  const char *path = test_path("min-samples.mprof");
  write_planted(path, p, 3);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t k = 0; k < 3; k++) {
    const mprof_dimension *d =
        &kernel_at(&a, k)->dimensions[MPROF_DIM_MEMORY_LATENCY];
    uint32_t want = k == 0 ? MPROF_STATE_UNKNOWN : MPROF_STATE_ISSUE;
    if (d->state != want)
      fail_msg("%u samples: memory latency %s, expected %s", p[k].samples,
               mprof_state_name(d->state), mprof_state_name(want));
  }
  tt_release(&a);
  unlink(path);
}

/* ---- occupancy ------------------------------------------------------------
 */

/* 128-thread blocks (4 of 64 warps) with dynamic shared memory sized so
 * that exactly @p blocks fit an SM (§4 Occupancy: 1 KiB reserved, 128-byte
 * units, 233472 bytes per SM). */
static planted occupancy_kernel(uint32_t blocks) {
  planted p = healthy();
  p.block = 128;
  p.dynamic_shared = 233472 / blocks / 128 * 128 - 1024;
  p.grid = 132 * blocks * 4;
  return p;
}

/* "issue below 25%, minor below 50%": 3, 4, 5 blocks of 4 warps (18.75%,
 * 25%, 31.25%) and 7, 8, 9 (43.75%, 50%, 56.25%). */
static void test_occupancy_thresholds(void **state) {
  (void)state;
  static const struct {
    uint32_t blocks, state;
  } cases[] = {
      {3, MPROF_STATE_ISSUE}, {4, MPROF_STATE_MINOR}, {5, MPROF_STATE_MINOR},
      {7, MPROF_STATE_MINOR}, {8, MPROF_STATE_OK},    {9, MPROF_STATE_OK},
  };
  enum { N = sizeof cases / sizeof cases[0] };
  planted p[N];
  for (size_t i = 0; i < N; i++)
    p[i] = occupancy_kernel(cases[i].blocks);
  const char *path = test_path("occupancy-thresholds.mprof");
  write_planted(path, p, N);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t i = 0; i < N; i++) {
    char what[64];
    snprintf(what, sizeof what, "%u blocks of 4 warps", cases[i].blocks);
    expect(&a, i, MPROF_DIM_OCCUPANCY, "weighted", cases[i].blocks * 4 / 64.0,
           cases[i].state, what);
    /* Cost: (50% - occupancy) / 50% below 50%, else 0. */
    double occupancy = cases[i].blocks * 4 / 64.0;
    double cost = occupancy < 0.5 ? (0.5 - occupancy) / 0.5 : 0.0;
    assert_true(fabs(kernel_at(&a, i)->dimensions[MPROF_DIM_OCCUPANCY].cost -
                     cost) < 1e-12);
  }
  tt_release(&a);
  unlink(path);
}

/* "issue → minor when selected + not_selected + math_pipe_throttle are at
 * least 50% of samples"; and the occupancy gain is the latency stalls
 * (long_scoreboard + wait + short_scoreboard) x (1 - occupancy / the
 * occupancy the fix reaches) (§4 Estimated gain). Every kernel here runs
 * one 256-thread block of 255-register threads per SM: 12.5%, in a grid of
 * 4 blocks per SM, which reaches 50%: the latency stalls x 0.75. */
static void test_busy_pipes_and_latency_bound(void **state) {
  (void)state;
  static const struct {
    const char *reason;
    uint32_t samples;
    uint32_t state;
    double cost;
  } cases[] = {
      {"selected", 499, MPROF_STATE_ISSUE, 0.0},
      {"selected", 500, MPROF_STATE_MINOR, 0.0},
      {"selected", 501, MPROF_STATE_MINOR, 0.0},
      {"long_scoreboard", 499, MPROF_STATE_ISSUE, 0.499 * 0.75},
      {"long_scoreboard", 500, MPROF_STATE_ISSUE, 0.5 * 0.75},
      {"long_scoreboard", 501, MPROF_STATE_ISSUE, 0.501 * 0.75},
      /* Both: excused, and the gain is the latency half's. */
      {"selected", 500, MPROF_STATE_MINOR, 0.5 * 0.75},
  };
  enum { N = sizeof cases / sizeof cases[0] };
  planted p[N];
  for (size_t i = 0; i < N; i++) {
    p[i] = healthy();
    p[i].registers = 255;
    p[i].grid = 132 * 4;
    p[i].reason = cases[i].reason;
    p[i].samples = cases[i].samples;
    p[i].filler = 1000 - cases[i].samples;
    if (i == N - 1) {
      p[i].filler = 0;
      p[i].reason2 = "long_scoreboard";
      p[i].samples2 = 500;
    }
  }
  const char *path = test_path("busy-pipes.mprof");
  write_planted(path, p, N);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t i = 0; i < N; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s at %u of 1000", cases[i].reason,
             cases[i].samples);
    expect(&a, i, MPROF_DIM_OCCUPANCY, "weighted", 0.125, cases[i].state, what);
    /* The gain: the latency stalls x (1 - 12.5% / 50%). */
    const mprof_dimension *d =
        &kernel_at(&a, i)->dimensions[MPROF_DIM_OCCUPANCY];
    if (fabs(d->cost - cases[i].cost) > 1e-12)
      fail_msg("%s: occupancy gain %.6f, expected %.6f", what, d->cost,
               cases[i].cost);
  }
  tt_release(&a);
  unlink(path);
}

/* ---- tail effect ----------------------------------------------------------
 */

/* "issue below 75%, minor below 90%" of tail efficiency = waves /
 * ceil(waves); one 1024-thread block per SM, 132 SMs: 197, 198, 199 blocks
 * (1.49, 1.5, 1.51 waves) and 593, 594, 595 (4.49, 4.5, 4.51 waves). */
static void test_tail_thresholds(void **state) {
  (void)state;
  static const struct {
    uint32_t grid, state;
  } cases[] = {
      {197, MPROF_STATE_ISSUE}, {198, MPROF_STATE_MINOR},
      {199, MPROF_STATE_MINOR}, {593, MPROF_STATE_MINOR},
      {594, MPROF_STATE_OK},    {595, MPROF_STATE_OK},
  };
  enum { N = sizeof cases / sizeof cases[0] };
  planted p[N];
  for (size_t i = 0; i < N; i++) {
    p[i] = healthy();
    p[i].block = 1024;
    p[i].registers = 64;
    p[i].grid = cases[i].grid;
  }
  const char *path = test_path("tail-thresholds.mprof");
  write_planted(path, p, N);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t i = 0; i < N; i++) {
    double waves = cases[i].grid / 132.0;
    char what[64];
    snprintf(what, sizeof what, "%u blocks on 132 SMs", cases[i].grid);
    expect(&a, i, MPROF_DIM_TAIL, "efficiency", waves / ceil(waves),
           cases[i].state, what);
  }
  tt_release(&a);
  unlink(path);
}

/* ---- launch overhead ------------------------------------------------------
 */

/* "minor from 20%, issue from 50%" of median gap / (median gap + median
 * run): 1 us runs with 249, 250, 251 ns and 999, 1000, 1001 ns gaps; two
 * runs back to back are ok and a single run unknown. A median gap of 50 us
 * or more reads "Starved", less "Launch-bound". */
static void test_launch_thresholds(void **state) {
  (void)state;
  static const struct {
    uint32_t launches;
    uint64_t gap;
    uint32_t state;
  } cases[] = {
      {10, 249, MPROF_STATE_OK},      {10, 250, MPROF_STATE_MINOR},
      {10, 251, MPROF_STATE_MINOR},   {10, 999, MPROF_STATE_MINOR},
      {10, 1000, MPROF_STATE_ISSUE},  {10, 1001, MPROF_STATE_ISSUE},
      {2, 0, MPROF_STATE_OK},         {1, 0, MPROF_STATE_UNKNOWN},
      {10, 49999, MPROF_STATE_ISSUE}, {10, 50000, MPROF_STATE_ISSUE},
      {10, 50001, MPROF_STATE_ISSUE},
  };
  enum { N = sizeof cases / sizeof cases[0] };
  planted p[N];
  for (size_t i = 0; i < N; i++) {
    p[i] = healthy();
    p[i].launches = cases[i].launches;
    p[i].gap = cases[i].gap;
  }
  const char *path = test_path("launch-thresholds.mprof");
  write_planted(path, p, N);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t i = 0; i < N; i++) {
    char what[64];
    snprintf(what, sizeof what, "%u runs of 1 us, %llu ns apart",
             cases[i].launches, (unsigned long long)cases[i].gap);
    const mprof_kernel_diagnosis *k = kernel_at(&a, i);
    const mprof_dimension *d = &k->dimensions[MPROF_DIM_LAUNCH];
    if (cases[i].gap) {
      double idle = cases[i].gap / (cases[i].gap + 1000.0);
      expect(&a, i, MPROF_DIM_LAUNCH, "idle_fraction", idle, cases[i].state,
             what);
    } else if (d->state != cases[i].state) {
      fail_msg("%s: %s, expected %s", what, mprof_state_name(d->state),
               mprof_state_name(cases[i].state));
    }
    if (cases[i].gap >= 49999) {
      assert_int_equal(k->verdict_dimension, MPROF_DIM_LAUNCH);
      const char *head = cases[i].gap >= 50000 ? "Starved:" : "Launch-bound:";
      if (strncmp(k->verdict, head, strlen(head)) != 0)
        fail_msg("%s: verdict \"%s\", expected it to begin \"%s\"", what,
                 k->verdict, head);
    }
  }
  tt_release(&a);
  unlink(path);
}

/* ---- SM load balance and SM tail (spans) ----------------------------------
 */

/* One launch per kernel, each alone on its stream, with one span on each of
 * two SMs: busy @p busy[0] and @p busy[1] ns, ending @p end[0] and
 * @p end[1] ns after the launch starts (the launch lasts @p extent). */
typedef struct span_case {
  uint64_t busy[2], end[2], extent;
} span_case;

static void write_spans(const char *path, const span_case *c, size_t count) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  for (size_t k = 0; k < count; k++) {
    char name[64];
    kernel_name(name, sizeof name, k);
    uint32_t st = tt_stream(w, d, 100 + (uint32_t)k);
    uint32_t ki = tt_kernel(w, name, name, d, 32, 0, 0x10 + k);
    uint32_t sh = tt_shape(w, ki, 132 * 8, 256, 0);
    uint64_t start = 1000000 + k * 100000;
    tt_launch(w, sh, st, start, start + c[k].extent);
    for (uint32_t sm = 0; sm < 2; sm++) {
      mprof_span_record sp = {start + c[k].end[sm] - c[k].busy[sm],
                              start + c[k].end[sm],
                              (uint32_t)k,
                              sm,
                              sm,
                              MPROF_INDEX_NONE,
                              MPROF_INDEX_NONE,
                              0,
                              0};
      assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp),
                       0);
    }
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* SM load balance "minor from 1.15, issue from 1.5" of the busiest SM's busy
 * time over the mean SM's: busy 2299/1701 ... 3001/999 ns (mean 2000) in a
 * launch of 4096 ns. SM tail "minor from 10%, issue from 25%" of (last
 * finish - median finish) / the launch: the second SM ending 999 ... 2501
 * ns before the first, in a launch of 10000 ns. */
static void test_span_thresholds(void **state) {
  (void)state;
  static const uint64_t busiest[] = {2299, 2300, 2301, 2999, 3000, 3001};
  static const uint64_t early[] = {999, 1000, 1001, 2499, 2500, 2501};
  static const uint32_t states[] = {MPROF_STATE_OK,    MPROF_STATE_MINOR,
                                    MPROF_STATE_MINOR, MPROF_STATE_MINOR,
                                    MPROF_STATE_ISSUE, MPROF_STATE_ISSUE};
  span_case c[12];
  for (size_t i = 0; i < 6; i++) {
    c[i] = (span_case){{busiest[i], 4000 - busiest[i]}, {4096, 4096}, 4096};
    c[6 + i] = (span_case){
        {10000, 10000 - early[i]}, {10000, 10000 - early[i]}, 10000};
  }
  const char *path = test_path("span-thresholds.mprof");
  write_spans(path, c, 12);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t i = 0; i < 6; i++) {
    char what[64];
    snprintf(what, sizeof what, "SMs busy %llu and %llu ns",
             (unsigned long long)busiest[i],
             (unsigned long long)(4000 - busiest[i]));
    expect(&a, i, MPROF_DIM_SM_BALANCE, "imbalance", busiest[i] / 2000.0,
           states[i], what);
    snprintf(what, sizeof what, "an SM ending %llu ns early of 10000",
             (unsigned long long)early[i]);
    expect(&a, 6 + i, MPROF_DIM_SM_TAIL, "tail_fraction", early[i] / 10000.0,
           states[i], what);
  }
  tt_release(&a);
  unlink(path);
}

/* ---- roofs (PM counters) --------------------------------------------------
 */

#define US 1000ull

/* Kernels one after another on one stream, one 100 us run each, 200 us
 * apart, PM-sampled every 10 us: DRAM at @p dram[k] % (and the tensor pipe
 * at @p tensor[k] % when given) in the windows inside kernel k's run. */
static void write_pm(const char *path, const planted *p, const float *dram,
                     const float *tensor, size_t count) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t st = tt_stream(w, d, 7);
  for (uint32_t r = 0; r < REASON_COUNT; r++) {
    char full[128];
    snprintf(full, sizeof full, REASON("%s"), reason_names[r]);
    tt_reason(w, d, r, full);
  }
  for (size_t k = 0; k < count; k++) {
    char name[64];
    kernel_name(name, sizeof name, k);
    uint32_t ki = tt_kernel(w, name, name, d, p[k].registers, 0, 0);
    uint32_t sh = tt_shape(w, ki, p[k].grid, p[k].block, p[k].dynamic_shared);
    tt_launch(w, sh, st, k * 200 * US, k * 200 * US + 100 * US);
    if (p[k].samples)
      tt_sample(w, d, name, 0, 0x100, reason_index(p[k].reason), p[k].samples);
    if (p[k].filler)
      tt_sample(w, d, name, 0, 0x110, reason_index("future_reason"),
                p[k].filler);
  }
  tt_pm_metric(w, d, 0,
               "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
               "percent", 10 * US);
  tt_pm_metric(w, d, 1,
               "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_"
               "sustained_elapsed",
               "percent", 10 * US);
  for (uint64_t t = 0; t < count * 200 * US; t += 10 * US) {
    size_t k = t / (200 * US);
    int inside = t - k * 200 * US < 100 * US;
    float values[2] = {inside ? dram[k] : 0.0f,
                       inside && tensor ? tensor[k] : 0.0f};
    tt_pm_sample(w, d, t, t + 10 * US, 2, values);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* "A resource at 60% of its peak or more is the kernel's roof", and "when
 * no dimension's gain reaches 25%, the verdict is the roof itself": DRAM at
 * 59.99%, 60% and 60.01% with nothing else to gain, then DRAM at 62% with
 * a synchronisation gain of 24.9%, 25% and 25.1% (barrier samples; the
 * DRAM floor holds it to 38%, above them). */
static void test_roof_thresholds(void **state) {
  (void)state;
  planted p[6];
  static const float dram[6] = {59.99f, 60.0f, 60.01f, 62.0f, 62.0f, 62.0f};
  for (size_t k = 0; k < 6; k++)
    p[k] = healthy();
  for (size_t k = 3; k < 6; k++) {
    p[k].reason = "barrier";
    p[k].samples = 249 + (uint32_t)(k - 3);
    p[k].filler = 1000 - p[k].samples;
  }
  const char *path = test_path("roof-thresholds.mprof");
  write_pm(path, p, dram, NULL, 6);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  for (size_t k = 0; k < 6; k++) {
    const mprof_kernel_diagnosis *kd = kernel_at(&a, k);
    assert_non_null(kd->throughput);
    assert_true(kd->throughput->samples > 0);
    /* The roof from 60%; over a gain from 25%, the gain. */
    int roof = k < 3 ? dram[k] >= 60.0f : p[k].samples < 250;
    if (roof) {
      if (!kd->roof || strcmp(kd->roof, "dram") != 0)
        fail_msg("kernel %zu (DRAM %.2f%%, %u barrier samples): no DRAM roof "
                 "in the verdict: %s",
                 k, dram[k], p[k].samples, kd->verdict);
      assert_int_equal(kd->verdict_dimension, MPROF_DIM_MEMORY_THROUGHPUT);
    } else if (kd->roof) {
      fail_msg("kernel %zu (DRAM %.2f%%, %u barrier samples): verdict at the "
               "%s roof: %s",
               k, dram[k], p[k].samples, kd->roof, kd->verdict);
    }
    if (k >= 3) {
      const mprof_dimension *sync = &kd->dimensions[MPROF_DIM_SYNC];
      assert_true(fabs(sync->cost - p[k].samples / 1000.0) < 1e-12);
      if (!roof)
        assert_int_equal(kd->verdict_dimension, MPROF_DIM_SYNC);
    }
  }
  tt_release(&a);
  unlink(path);
}

/* A tensor-core kernel (HMMA in its SASS): compute is "minor at 60% or
 * more" of tensor-pipe use while SMs are active, "else issue". */
static void test_tensor_threshold(void **state) {
  (void)state;
  planted p[3];
  static const float dram[3] = {1.0f, 1.0f, 1.0f};
  static const float tensor[3] = {59.99f, 60.0f, 60.01f};
  for (size_t k = 0; k < 3; k++)
    p[k] = healthy();
  const char *path = test_path("tensor-threshold.mprof");
  write_pm(path, p, dram, tensor, 3);
  /* The sidecar: each kernel's code holds an HMMA. */
  char sidecar_path[1100];
  snprintf(sidecar_path, sizeof sidecar_path, "%s.pc.json", path);
  FILE *f = fopen(sidecar_path, "w");
  assert_non_null(f);
  fprintf(f, "{\"format\": \"mprof-pc-sidecar\", \"version\": 1,\n"
             " \"stall_reasons\": [], \"files\": [],\n \"functions\": [\n");
  for (size_t k = 0; k < 3; k++) {
    char name[64];
    kernel_name(name, sizeof name, k);
    fprintf(f,
            "  {\"name\": \"%s\", \"demangled\": \"%s\", \"cubin_crc\": "
            "\"0000000000000000\", \"function_index\": 4294967295, "
            "\"device\": 0, \"registers\": 32, \"static_shared\": 0, "
            "\"size\": 32, \"sass_state\": \"present\", \"sass_error\": "
            "\"\",\n   \"instructions\": [[0, \"\", \"HMMA.16816.F32\", "
            "\"R0, R4, R8, R0\", -1, 0], [16, \"\", \"EXIT\", \"\", -1, 0]],\n"
            "   \"pcs\": []}%s\n",
            name, name, k < 2 ? "," : "");
  }
  fprintf(f, " ]}\n");
  fclose(f);
  mprof_sidecar *sc = NULL;
  if (mprof_sidecar_load(&sc, sidecar_path) != 0)
    fail_msg("sidecar: %s", mprof_error_last());
  tt_analysis a;
  tt_analyse(&a, path, sc);
  for (size_t k = 0; k < 3; k++) {
    const mprof_kernel_diagnosis *kd = kernel_at(&a, k);
    assert_true(kd->tensor_core);
    char what[64];
    snprintf(what, sizeof what, "tensor pipe at %.2f%%", tensor[k]);
    /* A mean over PM windows: the premise within rounding. */
    expect_near(&a, k, MPROF_DIM_COMPUTE, "tensor_active", tensor[k] / 100.0,
                1e-12, k == 0 ? MPROF_STATE_ISSUE : MPROF_STATE_MINOR, what);
  }
  tt_release(&a);
  mprof_sidecar_free(sc);
  unlink(sidecar_path);
  unlink(path);
}

/* ---- diff -----------------------------------------------------------------
 */

/* docs/DIAGNOSIS.md §5: a change counts when p < 0.001 "and the mean moved
 * by at least min_change = 1%"; "with a single launch on either side ...
 * the change counts from 5 x min_change = 5%"; the gate trips on a kernel
 * "up by more than PCT percent". Runs of 1000 ns in the base, without
 * spread (so p is 0 for any change), in the candidate: */
static void test_diff_thresholds(void **state) {
  (void)state;
  static const struct {
    uint32_t launches;
    uint64_t candidate_ns;
    uint32_t change;
  } cases[] = {
      {1, 1049, MPROF_CHANGE_NOISE},   {1, 1050, MPROF_CHANGE_SLOWER},
      {1, 1051, MPROF_CHANGE_SLOWER},  {10, 1009, MPROF_CHANGE_NOISE},
      {10, 1010, MPROF_CHANGE_SLOWER}, {10, 1011, MPROF_CHANGE_SLOWER},
      {10, 1100, MPROF_CHANGE_SLOWER}, {10, 990, MPROF_CHANGE_FASTER},
  };
  enum { N = sizeof cases / sizeof cases[0] };
  planted base[N], candidate[N];
  for (size_t i = 0; i < N; i++) {
    base[i] = healthy();
    base[i].launches = cases[i].launches;
    candidate[i] = base[i];
    candidate[i].duration = cases[i].candidate_ns;
  }
  const char *base_path = test_path("diff-base.mprof");
  char candidate_path[1024];
  snprintf(candidate_path, sizeof candidate_path, "%s",
           test_path("diff-candidate.mprof"));
  write_planted(base_path, base, N);
  write_planted(candidate_path, candidate, N);
  tt_analysis a, b;
  tt_analyse(&a, base_path, NULL);
  tt_analyse(&b, candidate_path, NULL);
  mprof_diff *diff;
  assert_int_equal(mprof_diff_run(&diff, a.diagnosis, b.diagnosis, NULL), 0);
  assert_int_equal(mprof_diff_kernel_count(diff), N);
  for (size_t k = 0; k < N; k++) {
    char name[64];
    kernel_name(name, sizeof name, k);
    const mprof_kernel_change *c = NULL;
    for (size_t i = 0; i < N; i++)
      if (strcmp(mprof_diff_kernel(diff, i)->mangled, name) == 0)
        c = mprof_diff_kernel(diff, i);
    assert_non_null(c);
    double change = ((double)cases[k].candidate_ns - 1000.0) / 1000.0;
    if (c->mean_change != change)
      fail_msg("%s: mean change %.17g, planted %.17g", name, c->mean_change,
               change);
    if (c->change != cases[k].change)
      fail_msg("%u launches of 1000 -> %llu ns: change %u, expected %u",
               cases[k].launches, (unsigned long long)cases[k].candidate_ns,
               c->change, cases[k].change);
  }
  /* The gate counts the slower kernels up by more than PCT: +10% is not
   * more than 10%, nor +5% than 5%, nor +1% than 1%. */
  assert_int_equal(mprof_diff_gate(diff, 10.0), 0);
  assert_int_equal(mprof_diff_gate(diff, 9.9), 1);
  assert_int_equal(mprof_diff_gate(diff, 5.0), 2);
  assert_int_equal(mprof_diff_gate(diff, 4.9), 3);
  assert_int_equal(mprof_diff_gate(diff, 1.0), 4);
  assert_int_equal(mprof_diff_gate(diff, 0.9), 5);
  mprof_diff_free(diff);
  tt_release(&b);
  tt_release(&a);
  unlink(base_path);
  unlink(candidate_path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stall_thresholds),
      cmocka_unit_test(test_min_samples),
      cmocka_unit_test(test_occupancy_thresholds),
      cmocka_unit_test(test_busy_pipes_and_latency_bound),
      cmocka_unit_test(test_tail_thresholds),
      cmocka_unit_test(test_launch_thresholds),
      cmocka_unit_test(test_span_thresholds),
      cmocka_unit_test(test_roof_thresholds),
      cmocka_unit_test(test_tensor_threshold),
      cmocka_unit_test(test_diff_thresholds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
