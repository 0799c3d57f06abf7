/*
 * mprof tests — PM samples joined to kernels (speed of light) and the
 * verdict ranked by estimated gain, on small synthetic traces whose every
 * number is planted, so the arithmetic of docs/DIAGNOSIS.md can be checked
 * exactly.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analysis_util.h"

#include <math.h>

#include "json_schema.h"

static void tt_check_schema(const char *text, const char *schema) {
  char why[1024];
  if (json_schema_validate_text(tt_doc(schema), text, why, sizeof why) != 0)
    fail_msg("JSON does not match %s: %s", schema, why);
}

/* Kernels of the planted trace. */
enum { K_STREAM, K_CHASE, K_TINY, K_LIB, K_L2, K_LATE, K_COUNT };
static const char *const names[K_COUNT] = {
    "_Z6streamPfS_",
    "_Z5chasePj",
    "_Z4tinyPf",
    "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_kernel",
    "_Z8l2streamPf",
    "_Z4latePf"};

#define US 1000ull

/* A trace of one H200-like device: stream (100 us at 90% DRAM), chase
 * (100 us at 3% DRAM), tiny (ten 2 us runs with 18 us gaps) and a
 * library-named kernel whose 255 registers limit it to one block per SM,
 * l2stream (100 us at 58% of the L2's peak, what the H200's L2
 * sustains), and late (100 us after the last PM sample: not sampled).
 * All of them stall on long_scoreboard. PM samples every 10 us when
 * @p with_pm. */
/* The planted launches before K_LATE: [start, end) in ns. */
static const uint64_t planted_runs[][3] = {{K_STREAM, 1000, 101 * US},
                                           {K_CHASE, 102 * US, 202 * US},
                                           {K_LIB, 483 * US, 583 * US},
                                           {K_L2, 601 * US, 701 * US}};

/* What a PM window [t0, t1) reads of a counter whose level while kernel k
 * runs is level[k] (0 while idle; the tiny kernel's runs add nothing). */
static float planted_level(uint64_t t0, uint64_t t1,
                           const float level[K_COUNT]) {
  double sum = 0;
  for (size_t i = 0; i < sizeof planted_runs / sizeof planted_runs[0]; i++) {
    uint64_t a = planted_runs[i][1] > t0 ? planted_runs[i][1] : t0;
    uint64_t b = planted_runs[i][2] < t1 ? planted_runs[i][2] : t1;
    if (b > a)
      sum += level[planted_runs[i][0]] * (double)(b - a);
  }
  return (float)(sum / (double)(t1 - t0));
}

/* @p dram: the stream kernel's measured DRAM throughput (% of peak). */
static void write_planted_at(const char *path, int with_pm, float dram) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t shape[K_COUNT];
  for (int k = 0; k < K_COUNT; k++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, names[k]);
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d;
    kr.registers = k == K_LIB ? 255 : 32;
    uint32_t ki;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = k == K_TINY ? 264 : 1056; /* 2 and 8 full waves */
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 256;
    sh.block[1] = sh.block[2] = 1;
    assert_int_equal(
        mprof_writer_intern(w, &shape[k], MPROF_SECTION_SHAPES, &sh), 0);
  }
  /* Launches, in stream order. */
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.stream = s;
  l.start = 1000, l.end = 101 * US, l.shape = shape[K_STREAM];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  l.start = 102 * US, l.end = 202 * US, l.shape = shape[K_CHASE];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  for (int i = 0; i < 10; i++) {
    l.start = 300 * US + (uint64_t)i * 20 * US;
    l.end = l.start + 2 * US;
    l.shape = shape[K_TINY];
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  l.start = 483 * US, l.end = 583 * US, l.shape = shape[K_LIB];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  l.start = 601 * US, l.end = 701 * US, l.shape = shape[K_L2];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  l.start = 800 * US, l.end = 900 * US, l.shape = shape[K_LATE];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  /* PC samples: everything waits on long_scoreboard. */
  mprof_stall_reason_record sr = {
      d, 1,
      mprof_writer_string(w,
                          "smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
      0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
  mprof_stall_reason_record sel = {
      d, 2, mprof_writer_string(w, "smsp__pcsamp_warps_issue_stalled_selected"),
      0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sel), 0);
  for (int k = 0; k < K_COUNT; k++) {
    /* The library kernel issues 40% of the time: latency-bound, but with
     * its few warps (one block per SM) as the cause. */
    mprof_pc_sample_record pc = {0, mprof_writer_string(w, names[k]), 0, 0x100,
                                 1, k == K_LIB ? 600 : 1000,          0, d,
                                 1};
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc), 0);
    if (k == K_LIB) {
      pc.stall_reason = 2;
      pc.samples = 400;
      assert_int_equal(
          mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc), 0);
    }
  }
  if (with_pm) {
    /* 4: SMs active as the ratio of its TriageCompute name */
    const char *const metrics[] = {
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__bytes.sum.per_second",
        "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        with_pm == 4 ? "TPC.TriageCompute.sm__cycles_active.avg.per_cycle_"
                       "elapsed"
                     : "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_"
        "elapsed"};
    for (uint32_t c = 0; c < 5; c++)
      tt_pm_metric(w, d, c, metrics[c], c == 1 ? "byte/second" : "percent",
                   10 * US);
    /* Each window holds what the kernels did in it: a kernel's level
     * times the share of the window it ran in. */
    const float sm = with_pm == 4 ? 0.99f : 99.0f;
    const float level[5][K_COUNT] = {
        /* stream, chase, tiny, lib, l2 */
        {dram, 3.0f, 0.0f, 0.0f, 0.0f},
        {4.3e12f, 1.4e11f, 0.0f, 0.0f, 0.0f},
        {45.0f, 0.0f, 0.0f, 0.0f, 58.0f},
        /* 3: CUPTI's evaluation out of scale, as seen with some metric
         * sets on GH100 */
        {with_pm == 3 ? 16640.0f : sm, sm, 0.0f, sm, sm},
        {0.0f, 0.0f, 0.0f, 10.0f, 0.0f}};
    for (uint64_t t = 0; t < 720 * US; t += 10 * US) {
      float values[5];
      for (int c = 0; c < 5; c++)
        values[c] = planted_level(t, t + 10 * US, level[c]);
      tt_pm_sample(w, d, t, t + 10 * US, 5, values);
    }
    /* 2: the decode fell behind three times. */
    if (with_pm == 2)
      assert_int_equal(mprof_writer_drop(w, MPROF_DROP_PM_OVERFLOW, d, 3), 0);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void write_planted(const char *path, int with_pm) {
  write_planted_at(path, with_pm, 90.0f);
}

typedef struct opened {
  mprof_trace *trace;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
} opened;

/* The trace at @p path, joined and diagnosed. */
static void open_at(opened *o, const char *path) {
  assert_int_equal(mprof_trace_open(&o->trace, path, NULL), 0);
  assert_int_equal(mprof_join_build(&o->join, o->trace, NULL), 0);
  assert_int_equal(mprof_diagnose(&o->diagnosis, o->join, NULL), 0);
}

static void open_planted(opened *o, int with_pm) {
  const char *path = test_path(with_pm == 4   ? "pm-ratio.mprof"
                               : with_pm == 3 ? "pm-scale.mprof"
                               : with_pm == 2 ? "pm-lost.mprof"
                               : with_pm      ? "pm.mprof"
                                              : "nopm.mprof");
  write_planted(path, with_pm);
  open_at(o, path);
}

static void close_planted(opened *o) {
  mprof_diagnosis_free(o->diagnosis);
  mprof_join_free(o->join);
  mprof_trace_free(o->trace);
}

static const mprof_kernel_diagnosis *kernel(const opened *o, int k) {
  uint32_t i = mprof_join_find_kernel(o->join, names[k], MPROF_INDEX_NONE);
  assert_true(i != MPROF_INDEX_NONE);
  return mprof_diagnosis_kernel(o->diagnosis, i);
}

static void test_counter_names(void **state) {
  (void)state;
  assert_int_equal(mprof_counter_from_metric(
                       "gpu__dram_throughput.avg.pct_of_peak_sustained_"
                       "elapsed"),
                   MPROF_COUNTER_DRAM);
  /* A TriageCompute group prefix names the same counter. */
  assert_int_equal(
      mprof_counter_from_metric("TPC.TriageCompute.sm__inst_executed_pipe_fma_"
                                "realtime.avg.pct_of_peak_sustained_elapsed"),
      MPROF_COUNTER_FMA);
  assert_int_equal(mprof_counter_from_metric("sm__throughput.avg.pct"),
                   MPROF_INDEX_NONE);
  /* ncu's compute throughput, by the name PM sampling takes */
  assert_int_equal(mprof_counter_from_metric("TriageCompute.sm__throughput."
                                             "avg.pct_of_peak_sustained_"
                                             "elapsed"),
                   MPROF_COUNTER_SM_THROUGHPUT);
  /* ncu's L2 Cache Throughput by its plain name only: the TriageCompute
   * one is another quantity */
  assert_int_equal(mprof_counter_from_metric(
                       "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
                   MPROF_COUNTER_L2_THROUGHPUT);
  assert_int_equal(
      mprof_counter_from_metric("LTS.TriageCompute.lts__throughput.avg.pct_of_"
                                "peak_sustained_elapsed"),
      MPROF_INDEX_NONE);
  assert_int_equal(mprof_counter_from_metric(
                       "LTS.TriageCompute.lts__t_sector_throughput.avg.pct_"
                       "of_peak_sustained_elapsed"),
                   MPROF_COUNTER_L2);
  assert_string_equal(mprof_counter_key(MPROF_COUNTER_L2), "l2");
  assert_string_equal(mprof_counter_key(MPROF_COUNTER_COUNT_), "");
  assert_int_equal(mprof_counter_bandwidth(MPROF_COUNTER_DRAM),
                   MPROF_COUNTER_DRAM_BYTES);
  assert_int_equal(mprof_counter_bandwidth(MPROF_COUNTER_L2),
                   MPROF_COUNTER_L2_BYTES);
  assert_int_equal(mprof_counter_bandwidth(MPROF_COUNTER_SM_ACTIVE),
                   MPROF_INDEX_NONE);
}

/* Windows wholly inside a run count; the others are partial; a kernel
 * shorter than the interval is too short to measure. */
static void test_join_samples_to_launches(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 1);
  const mprof_throughput *t = mprof_diagnosis_throughput(o.diagnosis);
  assert_true(mprof_throughput_available(t));
  assert_int_equal(mprof_throughput_interval(t), 10 * US);
  assert_null(mprof_throughput_missing(t));
  const mprof_kernel_throughput *s = kernel(&o, K_STREAM)->throughput;
  /* [1 us, 101 us) holds the windows starting at 10..90 us: nine; the
   * windows at 0 and 100 us overlap it partly. */
  assert_int_equal(s->samples, 9);
  assert_int_equal(s->partial, 2);
  assert_int_equal(s->covered_ns, 90 * US);
  assert_true(fabs(s->value[MPROF_COUNTER_DRAM] - 90.0) < 1e-6);
  assert_true(fabs(s->value[MPROF_COUNTER_DRAM_BYTES] - 4.3e12) < 1e6);
  assert_true(s->shared == 0);
  /* Not sampled with these metrics: NaN. */
  assert_true(isnan(s->value[MPROF_COUNTER_TENSOR]));
  const mprof_kernel_throughput *c = kernel(&o, K_CHASE)->throughput;
  assert_int_equal(c->samples, 9);
  assert_true(fabs(c->value[MPROF_COUNTER_DRAM] - 3.0) < 1e-6);
  const mprof_kernel_throughput *tiny = kernel(&o, K_TINY)->throughput;
  assert_int_equal(tiny->samples, 0);
  assert_int_equal(tiny->partial, 10);
  assert_true(isnan(tiny->value[MPROF_COUNTER_DRAM]));
  close_planted(&o);
}

/* A percentage far above 100 is no measurement (GH100 gave SMs active at
 * 16,640% for some metric sets): that counter is unknown for the kernel,
 * the others still read. */
/* The note of a key, or NULL. */
static const mprof_note *note(const opened *o, const char *key) {
  for (size_t i = 0; i < mprof_diagnosis_note_count(o->diagnosis); i++)
    if (strcmp(mprof_diagnosis_note(o->diagnosis, i)->key, key) == 0)
      return mprof_diagnosis_note(o->diagnosis, i);
  return NULL;
}

static void test_percent_out_of_scale(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 3);
  const mprof_kernel_throughput *s = kernel(&o, K_STREAM)->throughput;
  assert_int_equal(s->samples, 9);
  assert_true(isnan(s->value[MPROF_COUNTER_SM_ACTIVE]));
  assert_true(fabs(s->value[MPROF_COUNTER_DRAM] - 90.0) < 1e-6);
  const mprof_kernel_throughput *c = kernel(&o, K_CHASE)->throughput;
  assert_true(fabs(c->value[MPROF_COUNTER_SM_ACTIVE] - 99.0) < 1e-6);
  /* and the summary says so, once */
  const mprof_note *scaled = note(&o, "pm_out_of_scale");
  assert_non_null(scaled);
  assert_non_null(strstr(scaled->text, "SMs active beyond 100% of its peak "
                                       "for 1 kernel "));
  close_planted(&o);
}

/* A kernel with a ramp and a tail: the windows at its edges count for the
 * time it ran in them, as ncu's whole-launch figures do, and a window
 * that a memory copy shares is left out. */
static void test_edges_count_for_the_time_run(void **state) {
  (void)state;
  const char *path = test_path("pm-edges.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t shape = tt_shape(
      w, tt_kernel(w, names[K_STREAM], names[K_STREAM], d, 32, 0, 0), 1, 1, 0);
  tt_launch(w, shape, s, 5 * US, 35 * US);
  /* a copy overlaps the second run's first window */
  tt_launch(w, shape, s, 45 * US, 75 * US);
  mprof_memop_record m;
  memset(&m, 0, sizeof m);
  m.stream = s;
  m.start = 41 * US, m.end = 44 * US;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &m), 0);
  tt_pm_metric(w, d, 0,
               "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
               "percent", 10 * US);
  /* ramp at 40% for 5 us, 100% inside, tail at 50% for 5 us; the copy's
   * window reads high */
  const float values[8] = {20.0f, 100.0f, 100.0f, 25.0f,
                           95.0f, 100.0f, 100.0f, 25.0f};
  for (int i = 0; i < 8; i++)
    tt_pm_sample(w, d, (uint64_t)i * 10 * US, (uint64_t)(i + 1) * 10 * US, 1,
                 &values[i]);
  assert_int_equal(mprof_writer_finish(w), 0);
  opened o;
  open_at(&o, path);
  const mprof_kernel_throughput *k = kernel(&o, K_STREAM)->throughput;
  /* windows wholly inside: 4; the edges are not samples */
  assert_int_equal(k->samples, 4);
  /* (20 + 100 + 100 + 25 + 100 + 100 + 25) x 10 us over 5 + 10 + 10 +
   * 5 + 10 + 10 + 5 us: the runs' mean, the copy's window left out */
  assert_true(fabs(k->value[MPROF_COUNTER_DRAM] - 4700.0 / 55.0) < 1e-3);
  close_planted(&o);
}

/* A trace at @p path of kernel K_L2 run for 40 us on one device, sampled
 * with two counters, @p metric0 and @p metric1, in four 10 us windows
 * reading @p values; @p meta (key, value, ..., NULL) in its META. */
static void write_two_counter_run(const char *path, const char *metric0,
                                  const char *metric1, const float values[4][2],
                                  const char *const *meta) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  for (size_t i = 0; meta && meta[i]; i += 2)
    assert_int_equal(mprof_writer_meta(w, meta[i], meta[i + 1]), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t shape =
      tt_shape(w, tt_kernel(w, names[K_L2], names[K_L2], d, 32, 0, 0), 1, 1, 0);
  tt_launch(w, shape, s, 0, 40 * US);
  tt_pm_metric(w, d, 0, metric0, "percent", 10 * US);
  tt_pm_metric(w, d, 1, metric1, "percent", 10 * US);
  for (int i = 0; i < 4; i++)
    tt_pm_sample(w, d, (uint64_t)i * 10 * US, (uint64_t)(i + 1) * 10 * US, 2,
                 values[i]);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* The L2's sectors are read from a device sampled without TriageCompute
 * counters, and from no other: beside them CUPTI evaluated the sectors at
 * up to 949% where ncu read 1.5%, and at 5.7% where it read 0.0%. */
static void test_l2_not_read_beside_triage_counters(void **state) {
  (void)state;
  for (int triage = 0; triage < 3; triage++) {
    const char *path = test_path(triage == 2 ? "pm-lts-triage.mprof"
                                 : triage    ? "pm-tpc-triage.mprof"
                                             : "pm-lts.mprof");
    const float values[4][2] = {
        {55.0f, 4.0f}, {55.0f, 4.0f}, {55.0f, 4.0f}, {55.0f, 4.0f}};
    write_two_counter_run(
        path, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        triage == 2 ? "LTS.TriageCompute.lts__throughput.avg.pct_"
                      "of_peak_sustained_elapsed"
        : triage    ? "TPC.TriageCompute.sm__cycles_active.avg."
                      "pct_of_peak_sustained_elapsed"
                    : "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        values, NULL);
    opened o;
    open_at(&o, path);
    const mprof_kernel_throughput *k = kernel(&o, K_L2)->throughput;
    assert_int_equal(k->samples, 4);
    /* and the summary says why */
    const mprof_note *left_out = note(&o, "pm_l2_left_out");
    assert_true((left_out != NULL) == (triage != 0));
    if (left_out)
      assert_non_null(strstr(left_out->text, "default counters"));
    if (triage) {
      assert_true(isnan(k->value[MPROF_COUNTER_L2]));
      /* the other counters of the device are read */
      if (triage == 1)
        assert_true(fabs(k->value[MPROF_COUNTER_SM_ACTIVE] - 4.0) < 1e-6);
    } else {
      assert_true(fabs(k->value[MPROF_COUNTER_L2] - 55.0) < 1e-6);
      assert_true(fabs(k->value[MPROF_COUNTER_DRAM] - 4.0) < 1e-6);
    }
    close_planted(&o);
  }
}

/* One run of `--pm-counters sol` (SMs active by its TriageCompute name, no
 * L2) and one of the default counters (the L2's sectors; plain SMs active
 * out of scale), summarised as one set: each counter comes from the run
 * that read it in scale, and no note says the L2 is missing. */
static void write_counter_run(const char *path, int sol, const char *cmdline,
                              const char *ppid) {
  /* two records of one command: the same host, other parents */
  const char *const meta[] = {
      "host", "gpu-host", "cmdline", cmdline, "pid", sol ? "101" : "201",
      "ppid", ppid,       "pm.mode", "on",    NULL};
  /* the default run's plain SMs active leaves the scale in one window */
  const float values[4][2] = {{sol ? 97.0f : 96.0f, sol ? 24.0f : 55.0f},
                              {sol ? 97.0f : 96.0f, sol ? 24.0f : 55.0f},
                              {sol ? 97.0f : 5000.0f, sol ? 24.0f : 55.0f},
                              {sol ? 97.0f : 96.0f, sol ? 24.0f : 55.0f}};
  write_two_counter_run(
      path,
      sol ? "TPC.TriageCompute.sm__cycles_active.avg.pct_of_peak_"
            "sustained_elapsed"
          : "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
      sol ? "SM_A.TriageCompute.l1tex__throughput.avg.pct_of_peak_"
            "sustained_elapsed"
          : "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
      values, meta);
}

static void test_sol_and_default_runs_as_one_set(void **state) {
  (void)state;
  const char *sol_path = test_path("pm-sol-run.mprof");
  const char *default_path = test_path("pm-default-run.mprof");
  write_counter_run(sol_path, 1, "./bottlenecks", "100");
  write_counter_run(default_path, 0, "./bottlenecks", "200");
  opened sol, def;
  open_at(&sol, sol_path);
  open_at(&def, default_path);
  /* alone, each run misses what the other measures */
  assert_true(isnan(kernel(&sol, K_L2)->throughput->value[MPROF_COUNTER_L2]));
  assert_non_null(note(&sol, "pm_l2_left_out"));
  assert_true(
      isnan(kernel(&def, K_L2)->throughput->value[MPROF_COUNTER_SM_ACTIVE]));
  assert_non_null(note(&def, "pm_out_of_scale"));
  const mprof_trace *both[2] = {sol.trace, def.trace};
  opened set;
  assert_int_equal(mprof_trace_open_merged(&set.trace, both, 2, "set"), 0);
  assert_int_equal(mprof_join_build(&set.join, set.trace, NULL), 0);
  assert_int_equal(mprof_diagnose(&set.diagnosis, set.join, NULL), 0);
  const mprof_kernel_throughput *k = kernel(&set, K_L2)->throughput;
  assert_int_equal(k->samples, 8);
  assert_true(fabs(k->value[MPROF_COUNTER_L2] - 55.0) < 1e-6);
  /* from the sol run alone: the default run's in-scale windows of the
   * counter are no measurement either */
  assert_true(fabs(k->value[MPROF_COUNTER_SM_ACTIVE] - 97.0) < 1e-6);
  assert_true(fabs(k->value[MPROF_COUNTER_L1TEX] - 24.0) < 1e-6);
  assert_null(note(&set, "pm_l2_left_out"));
  assert_null(note(&set, "pm_out_of_scale"));
  /* and the summary says what the set is */
  const mprof_note *runs = note(&set, "pm_runs");
  assert_non_null(runs);
  assert_non_null(strstr(runs->text, "Two PM-sampled runs of `./bottlenecks`"));
  assert_null(note(&set, "pm_pair"));
  close_planted(&set);
  /* Two commands, two processes of one run (ranks of one launcher, or
   * a child forked by the other) are no such pair. */
  static const char *const other[][2] = {
      {"./other", "200"}, {"./bottlenecks", "100"}, {"./bottlenecks", "101"}};
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    write_counter_run(default_path, 0, other[i][0], other[i][1]);
    close_planted(&def);
    open_at(&def, default_path);
    const mprof_trace *two[2] = {sol.trace, def.trace};
    assert_int_equal(mprof_trace_open_merged(&set.trace, two, 2, "set"), 0);
    assert_int_equal(mprof_join_build(&set.join, set.trace, NULL), 0);
    assert_int_equal(mprof_diagnose(&set.diagnosis, set.join, NULL), 0);
    assert_null(note(&set, "pm_runs"));
    assert_null(note(&set, "pm_pair"));
    close_planted(&set);
  }
  close_planted(&def);
  close_planted(&sol);
}

/* A share of cycles given as a ratio reads as the percentage it is. */
static void test_ratio_reads_as_percent(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 4);
  const mprof_kernel_throughput *s = kernel(&o, K_STREAM)->throughput;
  assert_int_equal(s->samples, 9);
  assert_true(fabs(s->value[MPROF_COUNTER_SM_ACTIVE] - 99.0) < 1e-4);
  assert_true(fabs(s->value[MPROF_COUNTER_DRAM] - 90.0) < 1e-6);
  close_planted(&o);
}

/* The L2 sustains about 60% of its counter's peak (measured on the H200):
 * a kernel at 58% is at the L2 roof, not latency-bound. */
static void test_l2_roof_is_what_the_l2_sustains(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 1);
  const mprof_kernel_diagnosis *k = kernel(&o, K_L2);
  assert_int_equal(k->throughput->samples, 9);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_MEMORY_THROUGHPUT);
  assert_non_null(strstr(k->verdict, "L2-bandwidth bound"));
  assert_non_null(strstr(k->verdict, "58.0% of peak"));
  close_planted(&o);
}

/* samples/gemm_pm.mprof, recorded on the H200 with --pm on (see
 * samples/README.md): the tiled SGEMM's 40 back-to-back launches hold
 * whole PM windows, its SMs are busy, it barely touches DRAM, and without
 * PC samples the verdict is the issue roof the counters show. */
static void test_recorded_pm_sample(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/samples/gemm_pm.mprof",
           root && *root ? root : ".");
  opened o;
  assert_int_equal(mprof_trace_open(&o.trace, path, NULL), 0);
  assert_int_equal(mprof_join_build(&o.join, o.trace, NULL), 0);
  assert_int_equal(mprof_diagnose(&o.diagnosis, o.join, NULL), 0);
  const mprof_throughput *t = mprof_diagnosis_throughput(o.diagnosis);
  assert_true(mprof_throughput_available(t));
  assert_int_equal(mprof_throughput_interval(t), 100 * US);
  assert_int_equal(mprof_join_kernel_count(o.join), 1);
  uint32_t k = 0;
  const mprof_kernel_diagnosis *g = mprof_diagnosis_kernel(o.diagnosis, k);
  assert_non_null(strstr(mprof_join_kernel(o.join, k)->name, "sgemm_tiled"));
  assert_true(g->throughput->samples >= 100);
  assert_true(g->throughput->value[MPROF_COUNTER_SM_ACTIVE] > 90.0);
  assert_true(g->throughput->value[MPROF_COUNTER_DRAM] < 10.0);
  assert_int_equal(g->verdict_dimension, MPROF_DIM_COMPUTE);
  assert_non_null(strstr(g->verdict, "Issue bound"));
  close_planted(&o);
}

/* A PC-sampled run and a PM-sampled run of one program, opened as a set:
 * the kernel is one across the two processes, its throughput comes from
 * the second process's samples and names that device's interval. */
static void test_set_of_pc_and_pm_runs(void **state) {
  (void)state;
  opened pc, pm;
  open_planted(&pc, 0);
  open_planted(&pm, 1);
  const mprof_trace *both[2] = {pc.trace, pm.trace};
  mprof_trace *set;
  assert_int_equal(mprof_trace_open_merged(&set, both, 2, "set"), 0);
  mprof_join *join;
  mprof_diagnosis *diagnosis;
  assert_int_equal(mprof_join_build(&join, set, NULL), 0);
  assert_int_equal(mprof_diagnose(&diagnosis, join, NULL), 0);
  uint32_t k = mprof_join_find_kernel(join, names[K_STREAM], MPROF_INDEX_NONE);
  assert_true(k != MPROF_INDEX_NONE);
  const mprof_kernel_diagnosis *s = mprof_diagnosis_kernel(diagnosis, k);
  assert_int_equal(s->throughput->samples, 9);
  assert_int_equal(s->throughput->interval_ns, 10 * US);
  assert_int_equal(s->verdict_dimension, MPROF_DIM_MEMORY_THROUGHPUT);
  mprof_diagnosis_free(diagnosis);
  mprof_join_free(join);
  mprof_trace_free(set);
  close_planted(&pm);
  close_planted(&pc);
}

/* Same stall mix, different measured throughput: the stream kernel is at
 * the DRAM roof, the pointer chase is latency-bound. */
static void test_bandwidth_against_latency(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 1);
  const mprof_kernel_diagnosis *s = kernel(&o, K_STREAM);
  assert_int_equal(s->verdict_dimension, MPROF_DIM_MEMORY_THROUGHPUT);
  assert_non_null(strstr(s->verdict, "DRAM-bandwidth bound"));
  assert_non_null(strstr(s->verdict, "90.0% of peak"));
  assert_non_null(strstr(s->verdict, "4.30 TB/s"));
  assert_string_equal(s->roof, "dram");
  /* Waiting on memory can shrink at most to the bandwidth floor: 10%. */
  assert_true(fabs(s->dimensions[MPROF_DIM_MEMORY_LATENCY].cost - 0.10) < 1e-6);
  const mprof_kernel_diagnosis *c = kernel(&o, K_CHASE);
  assert_int_equal(c->verdict_dimension, MPROF_DIM_MEMORY_LATENCY);
  assert_null(c->roof); /* latency-bound, DRAM 3% busy */
  /* min(share 100%, 1 - 3%). It runs once: the 1 us gap before its one
   * launch is not its launch cost, so the gain is not scaled by it and the
   * launch dimension is unknown, not "Starved". */
  assert_true(fabs(c->dimensions[MPROF_DIM_MEMORY_LATENCY].cost - 0.97) < 1e-6);
  assert_int_equal(c->dimensions[MPROF_DIM_LAUNCH].state, MPROF_STATE_UNKNOWN);
  assert_non_null(strstr(c->dimensions[MPROF_DIM_LAUNCH].detail,
                         "Launched once, 1 us after the stream's"));
  close_planted(&o);
}

/* Launch gaps are stream time; gains inside the kernel are scaled to the
 * busy part: the tiny kernel's runs of 2 us with 18 us gaps idle 90%. */
static void test_launch_gaps_outrank_in_kernel_gains(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 0);
  const mprof_kernel_diagnosis *k = kernel(&o, K_TINY);
  const mprof_dimension *gaps = &k->dimensions[MPROF_DIM_LAUNCH];
  assert_true(fabs(gaps->cost - 0.9) < 1e-9);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_LAUNCH);
  /* long_scoreboard is all its samples: 100% x 10% busy. */
  assert_true(fabs(k->dimensions[MPROF_DIM_MEMORY_LATENCY].cost - 0.1) < 1e-9);
  close_planted(&o);
}

/* A library kernel gets advice its caller can act on, never registers. */
static void test_library_advice(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 0);
  const mprof_kernel_diagnosis *k = kernel(&o, K_LIB);
  assert_true(k->library);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_OCCUPANCY);
  assert_null(strstr(k->verdict, "fewer registers"));
  assert_null(strstr(k->verdict, "maxrregcount"));
  assert_null(strstr(k->verdict, "launch_bounds"));
  assert_non_null(strstr(k->verdict, "library"));
  assert_false(kernel(&o, K_STREAM)->library);
  assert_true(mprof_kernel_name_is_library("nvjet_sm90_tst_320x128"));
  assert_true(mprof_kernel_name_is_library(
      "void at::native::vectorized_elementwise_kernel<4>"));
  assert_false(mprof_kernel_name_is_library("_Z10gemm_tiledPKfS0_Pfiii"));
  close_planted(&o);
}

/* Without counters: today's stall rules, and one note says why. */
static void test_without_counters(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 0);
  const mprof_throughput *t = mprof_diagnosis_throughput(o.diagnosis);
  assert_false(mprof_throughput_available(t));
  assert_non_null(strstr(mprof_throughput_missing(t), "without PM sampling"));
  const mprof_kernel_diagnosis *s = kernel(&o, K_STREAM);
  assert_int_equal(s->verdict_dimension, MPROF_DIM_MEMORY_LATENCY);
  assert_int_equal(s->throughput->samples, 0);
  assert_non_null(note(&o, "no_counters"));
  close_planted(&o);
}

/* PM samples lost to a full buffer: one note counts them and says how to
 * keep them; a run that lost none has no such note. */
static void test_pm_overflow_noted(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 1);
  assert_null(note(&o, "pm_overflow"));
  close_planted(&o);
  open_planted(&o, 2);
  const mprof_note *n = note(&o, "pm_overflow");
  assert_non_null(n);
  assert_non_null(strstr(n->text, "overflowed 3 times"));
  assert_non_null(strstr(n->text, "--pm-interval"));
  assert_null(note(&o, "no_counters"));
  close_planted(&o);
}

/* The reports carry the speed of light, and stay valid. */
static void test_reports(void **state) {
  (void)state;
  opened o;
  open_planted(&o, 1);
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.kernel = names[K_STREAM];
  int rc;
  char *xml = tt_report(o.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(xml, "<throughput status=\"measured\" samples=\"9\""));
  assert_non_null(strstr(xml, "dram=\"0.9000\""));
  assert_int_equal(tt_xmllint(xml), 0);
  free(xml);
  ro.format = MPROF_REPORT_JSON;
  ro.kernel = names[K_TINY];
  char *json = tt_report(o.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(json, "\"status\":\"too_short\""));
  tt_check_schema(json, "summary.schema.json");
  free(json);
  ro.format = MPROF_REPORT_TEXT;
  ro.kernel = names[K_STREAM];
  char *text = tt_report(o.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(text, "speed of light: DRAM 90.0% (4.30 TB/s)"));
  free(text);
  ro.kernel = names[K_TINY];
  text = tt_report(o.diagnosis, &ro, &rc);
  assert_non_null(strstr(text, "too short to measure"));
  free(text);
  /* A long run no window reached (samples lost, or sampling stopped) is
   * not called too short. */
  ro.kernel = names[K_LATE];
  text = tt_report(o.diagnosis, &ro, &rc);
  assert_null(strstr(text, "too short"));
  assert_non_null(strstr(text, "no PM sample fell in its runs"));
  free(text);
  close_planted(&o);
}

static char *diff_text(const mprof_diff *d, unsigned format) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = format;
  ro.kernel = names[K_STREAM];
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_int_equal(mprof_diff_write(f, d, &ro, -1), 0);
  fclose(f);
  return text;
}

/* A diff of two PM-sampled runs shows each side's measured throughput: the
 * stream kernel at 90% of DRAM's peak, then at 45%; against a run without
 * counters, only the side that has them. */
static void test_diff_shows_throughput(void **state) {
  (void)state;
  opened base, cand, plain;
  open_planted(&base, 1);
  const char *path = test_path("pm-half.mprof");
  write_planted_at(path, 1, 45.0f);
  assert_int_equal(mprof_trace_open(&cand.trace, path, NULL), 0);
  assert_int_equal(mprof_join_build(&cand.join, cand.trace, NULL), 0);
  assert_int_equal(mprof_diagnose(&cand.diagnosis, cand.join, NULL), 0);
  mprof_diff *d;
  assert_int_equal(mprof_diff_run(&d, base.diagnosis, cand.diagnosis, NULL), 0);
  char *text = diff_text(d, MPROF_REPORT_TEXT);
  assert_non_null(strstr(text, "speed of light: DRAM 90.0% -> 45.0%, L2 "
                               "sectors 45.0% -> 45.0%, SMs 99.0% -> 99.0%"));
  free(text);
  char *xml = diff_text(d, MPROF_REPORT_XML);
  const char *b = strstr(xml, "<base launches=");
  assert_non_null(b);
  assert_non_null(strstr(b, "<throughput status=\"measured\" samples=\"9\""));
  assert_non_null(strstr(b, "dram=\"0.9000\""));
  assert_non_null(strstr(b, "dram=\"0.4500\""));
  assert_int_equal(tt_xmllint(xml), 0);
  free(xml);
  char *json = diff_text(d, MPROF_REPORT_JSON);
  assert_non_null(strstr(json, "\"throughput\":{\"status\":\"measured\""));
  tt_check_schema(json, "diff.schema.json");
  free(json);
  mprof_diff_free(d);
  /* The base without counters: no throughput on its side, no line. */
  open_planted(&plain, 0);
  assert_int_equal(mprof_diff_run(&d, plain.diagnosis, cand.diagnosis, NULL),
                   0);
  text = diff_text(d, MPROF_REPORT_TEXT);
  assert_null(strstr(text, "speed of light"));
  free(text);
  json = diff_text(d, MPROF_REPORT_JSON);
  const char *side = strstr(json, "\"base\":{\"launches\"");
  assert_non_null(side);
  /* The base's object ends where the candidate's begins; only the latter
   * holds throughput. */
  const char *candidate = strstr(side, "\"candidate\":{\"launches\"");
  assert_non_null(candidate);
  const char *throughput = strstr(side, "\"throughput\"");
  assert_non_null(throughput);
  assert_true(throughput > candidate);
  tt_check_schema(json, "diff.schema.json");
  free(json);
  mprof_diff_free(d);
  close_planted(&plain);
  close_planted(&cand);
  close_planted(&base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counter_names),
      cmocka_unit_test(test_join_samples_to_launches),
      cmocka_unit_test(test_percent_out_of_scale),
      cmocka_unit_test(test_ratio_reads_as_percent),
      cmocka_unit_test(test_edges_count_for_the_time_run),
      cmocka_unit_test(test_l2_not_read_beside_triage_counters),
      cmocka_unit_test(test_sol_and_default_runs_as_one_set),
      cmocka_unit_test(test_bandwidth_against_latency),
      cmocka_unit_test(test_set_of_pc_and_pm_runs),
      cmocka_unit_test(test_recorded_pm_sample),
      cmocka_unit_test(test_l2_roof_is_what_the_l2_sustains),
      cmocka_unit_test(test_launch_gaps_outrank_in_kernel_gains),
      cmocka_unit_test(test_library_advice),
      cmocka_unit_test(test_without_counters),
      cmocka_unit_test(test_pm_overflow_noted),
      cmocka_unit_test(test_reports),
      cmocka_unit_test(test_diff_shows_throughput),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
