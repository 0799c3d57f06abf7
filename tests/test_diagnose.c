/*
 * mprof tests — the diagnosis: planted bottlenecks come out as planted,
 * the occupancy calculator, stall shares from plain reasons only, unknown
 * reasons, missing data, and the summary reports (XML well formed, JSON
 * valid against docs/summary.schema.json, bounded, escaped).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "analysis_util.h"
#include "json_schema.h"
#include "mprof/synth.h"

static const mprof_dimension *dim(const mprof_kernel_diagnosis *k,
                                  uint32_t id) {
  assert_int_equal(k->dimension_count, MPROF_DIM_COUNT_);
  assert_int_equal(k->dimensions[id].id, id);
  return &k->dimensions[id];
}

static double metric(const mprof_dimension *d, const char *name) {
  for (size_t i = 0; i < d->metric_count; i++)
    if (strcmp(d->metrics[i].name, name) == 0)
      return d->metrics[i].value;
  fail_msg("dimension %u has no metric %s", d->id, name);
  return NAN;
}

/* Every kernel of a one-scenario synthetic trace gets the planted verdict,
 * and nothing else is judged an issue. */
static void check_scenario(uint32_t scenario, uint32_t planted) {
  const char *path = test_path("scenario.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 20000;
  opts.scenario = scenario;
  opts.seed = 7 + scenario;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  assert_int_equal(mprof_diagnosis_kernel_count(a.diagnosis), 8);
  for (size_t k = 0; k < 8; k++) {
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(a.diagnosis, k);
    if (kd->verdict_dimension != planted)
      fail_msg("scenario %u kernel %s: verdict %s, expected %s: %s", scenario,
               kd->stats->name, mprof_dimension_key(kd->verdict_dimension),
               mprof_dimension_key(planted), kd->verdict);
    assert_int_equal(kd->verdict_state, MPROF_STATE_ISSUE);
    assert_int_equal(dim(kd, planted)->state, MPROF_STATE_ISSUE);
    for (uint32_t d = 0; d < MPROF_DIM_COUNT_; d++)
      if (d != planted && kd->dimensions[d].state == MPROF_STATE_ISSUE)
        fail_msg("scenario %u kernel %s: %s is an issue too", scenario,
                 kd->stats->name, mprof_dimension_key(d));
    assert_true(strlen(kd->verdict) > 20);
    assert_true(kd->hot_count > 0);
    if (planted == MPROF_DIM_OCCUPANCY) {
      assert_true(fabs(kd->occupancy->theoretical - 0.125) < 1e-12);
      assert_int_equal(kd->occupancy->blocks_per_sm, 1);
      assert_int_equal(kd->occupancy->limiter, MPROF_LIMIT_REGISTERS);
      assert_non_null(strstr(kd->verdict, "registers"));
    } else if (planted == MPROF_DIM_TAIL) {
      assert_true(fabs(kd->occupancy->waves - 133.0 / 132.0) < 1e-12);
      assert_true(fabs(kd->weighted_tail - 133.0 / 264.0) < 1e-12);
      assert_true(fabs(metric(dim(kd, planted), "grid_blocks") - 133) < 1e-9);
    } else if (planted == MPROF_DIM_LAUNCH) {
      assert_true(metric(dim(kd, planted), "idle_fraction") > 0.8);
    } else {
      /* Stall scenarios: the share is the planted profile's. */
      assert_true(dim(kd, planted)->cost > 0.5);
      assert_true(kd->occupancy->theoretical >= 0.5);
      assert_true(kd->weighted_tail > 0.999);
    }
  }
  tt_release(&a);
  unlink(path);
}

static void test_planted_memory_latency(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_MEMORY_LATENCY, MPROF_DIM_MEMORY_LATENCY);
}
static void test_planted_compute(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_COMPUTE, MPROF_DIM_COMPUTE);
}
static void test_planted_barrier(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_BARRIER, MPROF_DIM_SYNC);
}
static void test_planted_occupancy(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_OCCUPANCY, MPROF_DIM_OCCUPANCY);
}
static void test_planted_tail(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_TAIL, MPROF_DIM_TAIL);
}
static void test_planted_launch_gaps(void **state) {
  (void)state;
  check_scenario(MPROF_SYNTH_LAUNCH_GAPS, MPROF_DIM_LAUNCH);
}

/* The reason that holds most of @p function's plain samples in the trace
 * itself (PC_SAMPLES named through STALL_REASONS), read without the join. */
static const char *planted_reason(const mprof_trace *t, const char *function) {
  size_t n, rn;
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &rn);
  static char best[128];
  uint64_t best_samples = 0;
  for (size_t r = 0; r < rn; r++) {
    const char *name = mprof_trace_string(t, sr[r].name);
    if (strstr(name, "_not_issued"))
      continue;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
      if (pc[i].device == sr[r].device && pc[i].stall_reason == sr[r].index &&
          strcmp(mprof_trace_string(t, pc[i].function_name), function) == 0)
        sum += pc[i].samples;
    if (sum > best_samples) {
      best_samples = sum;
      snprintf(best, sizeof best, "%s",
               name + strlen(MPROF_STALL_REASON_PREFIX));
    }
  }
  return best_samples ? best : "";
}

/* Each kernel of the mixed scenario is planted with one of three stall
 * profiles (mostly long_scoreboard, math_pipe_throttle or barrier): its
 * verdict is that profile's dimension, and no other. */
static void test_mixed_scenario(void **state) {
  (void)state;
  static const struct {
    const char *reason;
    uint32_t verdict;
  } planted[] = {
      {"long_scoreboard", MPROF_DIM_MEMORY_LATENCY},
      {"math_pipe_throttle", MPROF_DIM_COMPUTE},
      {"barrier", MPROF_DIM_SYNC},
  };
  const char *path = test_path("mixed.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.kernels = 12;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  size_t count = mprof_diagnosis_kernel_count(a.diagnosis);
  assert_int_equal(count, 12);
  size_t seen[3] = {0, 0, 0};
  for (size_t k = 0; k < count; k++) {
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(a.diagnosis, k);
    const char *reason = planted_reason(a.trace, kd->stats->mangled);
    size_t p = 0;
    while (p < 3 && strcmp(planted[p].reason, reason) != 0)
      p++;
    if (p == 3)
      fail_msg("kernel %s: planted with %s, not one of the three profiles",
               kd->stats->name, reason);
    seen[p]++;
    if (kd->verdict_dimension != planted[p].verdict)
      fail_msg("kernel %s (mostly %s): verdict %s, expected %s: %s",
               kd->stats->name, reason,
               mprof_dimension_key(kd->verdict_dimension),
               mprof_dimension_key(planted[p].verdict), kd->verdict);
    assert_int_equal(kd->verdict_state, MPROF_STATE_ISSUE);
  }
  /* The seed plants all three. */
  assert_true(seen[0] && seen[1] && seen[2]);
  tt_release(&a);
  unlink(path);
}

/* ---- occupancy ---------------------------------------------------------- */

static mprof_device_record h200(void) {
  mprof_device_record d;
  memset(&d, 0, sizeof d);
  d.cc_major = 9;
  d.sm_count = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_warps_per_sm = 64;
  d.max_regs_per_block = 65536;
  d.max_regs_per_sm = 65536;
  d.max_shared_per_block = 232448;
  d.max_shared_per_sm = 233472;
  return d;
}

static mprof_occupancy occupancy(uint32_t grid, uint32_t block,
                                 uint32_t registers, uint32_t shared) {
  mprof_device_record d = h200();
  mprof_shape_stats s;
  memset(&s, 0, sizeof s);
  s.grid[0] = grid;
  s.grid[1] = s.grid[2] = 1;
  s.block[0] = block;
  s.block[1] = s.block[2] = 1;
  s.registers = registers;
  s.dynamic_shared = shared;
  mprof_occupancy o = MPROF_OCCUPANCY_INIT;
  assert_int_equal(mprof_occupancy_compute(&o, &d, &s), 0);
  return o;
}

static void test_occupancy_calculator(void **state) {
  (void)state;
  /* Values from CUDA's occupancy calculator for compute capability 9.0. */
  mprof_occupancy o = occupancy(132, 256, 255, 0);
  assert_int_equal(o.blocks_per_sm, 1); /* 8192 registers per warp */
  assert_int_equal(o.active_warps, 8);
  assert_int_equal(o.limiter, MPROF_LIMIT_REGISTERS);
  assert_true(fabs(o.theoretical - 0.125) < 1e-12);
  o = occupancy(132, 128, 32, 0);
  assert_int_equal(o.blocks_per_sm, 16);
  assert_true(fabs(o.theoretical - 1.0) < 1e-12);
  assert_int_equal(o.limit_warps, 16);
  o = occupancy(132, 256, 33, 0); /* 1056 registers a warp, 1280 allocated */
  assert_int_equal(o.limit_registers, 6); /* 12 warps per sub, 8 a block */
  o = occupancy(132, 96, 72, 0); /* 2304 registers per warp: 7 per sub */
  assert_int_equal(o.limit_registers, 9); /* 28 warps / 3 per block */
  assert_int_equal(o.blocks_per_sm, 9);
  o = occupancy(132, 256, 32, 49152); /* 48 KiB + 1 KiB reserved */
  assert_int_equal(o.limit_shared, 4);
  assert_int_equal(o.blocks_per_sm, 4);
  assert_int_equal(o.limiter, MPROF_LIMIT_SHARED);
  assert_true(fabs(o.theoretical - 0.5) < 1e-12);
  o = occupancy(132, 32, 16, 0); /* tiny blocks: 32 per SM at most */
  assert_int_equal(o.blocks_per_sm, 32);
  assert_int_equal(o.limiter, MPROF_LIMIT_BLOCKS);
  assert_true(fabs(o.theoretical - 0.5) < 1e-12);
  o = occupancy(132, 2048, 32, 0); /* too many threads: nothing fits */
  assert_int_equal(o.blocks_per_sm, 0);
  assert_true(o.theoretical == 0);
  o = occupancy(132, 128, 300, 0); /* more than 255 registers */
  assert_int_equal(o.blocks_per_sm, 0);
  o = occupancy(132, 128, 32, 240000); /* more shared memory than a block */
  assert_int_equal(o.blocks_per_sm, 0);
  /* Waves: 133 blocks of one per SM make two waves, the second nearly
   * empty; 264 make two full ones; 66 fill half of one. */
  o = occupancy(133, 1024, 64, 0);
  assert_int_equal(o.blocks_per_sm, 1);
  assert_true(fabs(o.waves - 133.0 / 132.0) < 1e-12);
  assert_true(fabs(o.tail_efficiency - 133.0 / 264.0) < 1e-12);
  o = occupancy(264, 1024, 64, 0);
  assert_true(fabs(o.tail_efficiency - 1.0) < 1e-12);
  o = occupancy(66, 1024, 64, 0);
  assert_true(fabs(o.waves - 0.5) < 1e-12);
  assert_true(fabs(o.tail_efficiency - 0.5) < 1e-12);
  /* Unknown without device limits. */
  mprof_shape_stats s;
  memset(&s, 0, sizeof s);
  s.block[0] = 128;
  assert_int_equal(mprof_occupancy_compute(&o, NULL, &s), 0);
  assert_int_equal(o.known, 0);
  assert_int_equal(mprof_occupancy_compute(NULL, NULL, &s), MPROF_EINVAL);
  /* A struct of a version this library does not know is left alone. */
  o.version = 99;
  o.known = 7;
  assert_int_equal(mprof_occupancy_compute(&o, NULL, &s), MPROF_EVERSION);
  assert_int_equal(o.known, 7);
  assert_non_null(strstr(mprof_error_last(),
                         "occupancy version 99 is not supported (this mprof "
                         "reads version 1;"));
  assert_string_equal(mprof_occupancy_limiter_name(MPROF_LIMIT_SHARED),
                      "shared_memory");
}

/* ---- stall shares ------------------------------------------------------- */

/* One kernel (regs/block as given) with samples from @p counts, indexed
 * like @p names, at one PC; @p not_issued extra samples of the first
 * reason's _not_issued twin. */
static const char *write_mix(const char *name, uint32_t registers,
                             uint32_t block, const char *const *names,
                             const uint32_t *counts, size_t n,
                             uint32_t not_issued, uint64_t buffer_full) {
  const char *path = test_path(name);
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0), st = tt_stream(w, d, 1);
  uint32_t k = tt_kernel(w, "_Z3mixv", "mix()", d, registers, 0, 0x77);
  uint32_t sh = tt_shape(w, k, 132 * 8 * 4, block, 0);
  for (uint64_t i = 0; i < 100; i++)
    tt_launch(w, sh, st, i * 1000, i * 1000 + 1000); /* back to back */
  for (uint32_t r = 0; r < n; r++) {
    char full[128];
    snprintf(full, sizeof full, REASON("%s"), names[r]);
    tt_reason(w, d, r, full);
    if (counts[r])
      tt_sample(w, d, "_Z3mixv", 0x77, 0x100 + 16 * (r % 3), r, counts[r]);
  }
  if (not_issued) {
    char full[128];
    snprintf(full, sizeof full, REASON("%s_not_issued"), names[0]);
    tt_reason(w, d, (uint32_t)n, full);
    tt_sample(w, d, "_Z3mixv", 0x77, 0x100, (uint32_t)n, not_issued);
  }
  if (buffer_full)
    assert_int_equal(
        mprof_writer_drop(w, MPROF_DROP_PC_HW_BUFFER_FULL, d, buffer_full), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

static const char *const healthy_names[] = {"long_scoreboard",
                                            "lg_throttle",
                                            "short_scoreboard",
                                            "mio_throttle",
                                            "math_pipe_throttle",
                                            "wait",
                                            "selected",
                                            "not_selected",
                                            "barrier",
                                            "membar",
                                            "branch_resolving",
                                            "no_instructions",
                                            "dispatch_stall",
                                            "misc",
                                            "tensor_future"};
static const uint32_t healthy_counts[] = {190, 95, 80, 60, 60, 90, 100, 40,
                                          60,  30, 50, 25, 40, 35, 45};

static void test_healthy_kernel(void **state) {
  (void)state;
  const char *path = write_mix("healthy.mprof", 32, 256, healthy_names,
                               healthy_counts, 15, 0, 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_NONE);
  assert_int_equal(k->verdict_state, MPROF_STATE_OK);
  for (uint32_t d = 0; d < MPROF_DIM_FIRST_SPAN; d++)
    assert_int_equal(k->dimensions[d].state, MPROF_STATE_OK);
  /* No spans: the span dimensions cannot be judged. */
  for (uint32_t d = MPROF_DIM_FIRST_SPAN; d < MPROF_DIM_COUNT_; d++)
    assert_int_equal(k->dimensions[d].state, MPROF_STATE_UNKNOWN);
  assert_non_null(strstr(k->verdict, "No bottleneck"));
  assert_true(fabs(dim(k, MPROF_DIM_MEMORY_LATENCY)->cost - 0.19) < 1e-9);
  assert_true(fabs(dim(k, MPROF_DIM_COMPUTE)->cost - 0.29) < 1e-9);
  /* The reason from a newer GPU lands in "other", named as the trace
   * names it. */
  assert_true(fabs(k->other_share - 0.045) < 1e-9);
  int seen = 0;
  for (size_t i = 0; i < k->stall_count; i++)
    if (strcmp(k->stalls[i].reason, "tensor_future") == 0) {
      seen = 1;
      assert_int_equal(k->stalls[i].dimension, MPROF_DIM_NONE);
    }
  assert_true(seen);
  assert_true(fabs(k->occupancy->theoretical - 1.0) < 1e-12);
  assert_true(fabs(k->weighted_tail - 1.0) < 1e-12);
  assert_true(k->issue_active < 0); /* no _not_issued reasons */
  tt_release(&a);
  unlink(path);
}

/* _not_issued samples never enter shares, however many there are. */
static void test_not_issued_excluded(void **state) {
  (void)state;
  const char *path = write_mix("not-issued.mprof", 32, 256, healthy_names,
                               healthy_counts, 15, 100000, 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_int_equal(k->stats->samples, 1000);
  assert_int_equal(k->stats->not_issued, 100000);
  assert_true(fabs(dim(k, MPROF_DIM_MEMORY_LATENCY)->cost - 0.19) < 1e-9);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_NONE);
  for (size_t i = 0; i < k->stall_count; i++)
    assert_null(strstr(k->stalls[i].reason, "not_issued"));
  assert_true(k->issue_active == 0); /* clamped: more than all samples */
  tt_release(&a);
  unlink(path);
}

/* A newer GPU's reasons that dominate go to "other", not to a dimension. */
static void test_unknown_reasons(void **state) {
  (void)state;
  static const char *const names[] = {"tmem_wait", "long_scoreboard"};
  static const uint32_t counts[] = {800, 200};
  const char *path =
      write_mix("unknown.mprof", 32, 256, names, counts, 2, 0, 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_true(fabs(k->other_share - 0.8) < 1e-9);
  assert_int_equal(dim(k, MPROF_DIM_MEMORY_LATENCY)->state, MPROF_STATE_MINOR);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_MEMORY_LATENCY);
  assert_int_equal(k->verdict_state, MPROF_STATE_MINOR);
  assert_string_equal(k->stalls[0].reason, "tmem_wait");
  tt_release(&a);
  unlink(path);
}

/* Low occupancy is forgiven (minor) when the pipes are busy anyway. */
static void test_occupancy_with_busy_pipes(void **state) {
  (void)state;
  static const char *const names[] = {"selected", "not_selected",
                                      "long_scoreboard"};
  static const uint32_t counts[] = {400, 300, 300};
  const char *path = write_mix("busy.mprof", 255, 256, names, counts, 3, 0, 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_true(fabs(k->occupancy->theoretical - 0.125) < 1e-12);
  assert_int_equal(dim(k, MPROF_DIM_OCCUPANCY)->state, MPROF_STATE_MINOR);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_COMPUTE);
  assert_non_null(strstr(k->verdict, "Issue bound"));
  tt_release(&a);
  /* Without the busy pipes the same shape is an occupancy issue. */
  static const uint32_t latency[] = {100, 50, 850};
  path = write_mix("latency.mprof", 255, 256, names, latency, 3, 0, 0);
  tt_analyse(&a, path, NULL);
  k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_int_equal(dim(k, MPROF_DIM_OCCUPANCY)->state, MPROF_STATE_ISSUE);
  assert_int_equal(dim(k, MPROF_DIM_MEMORY_LATENCY)->state, MPROF_STATE_ISSUE);
  /* Occupancy costs 0.75, latency 0.85: latency leads, occupancy is
   * named as the other issue. */
  assert_int_equal(k->verdict_dimension, MPROF_DIM_MEMORY_LATENCY);
  assert_non_null(strstr(k->verdict, "Also: occupancy"));
  tt_release(&a);
  unlink(path);
}

/* Too few samples, or none: stall dimensions are unknown, the rest is
 * still judged, and the trace says what is missing. */
static void test_missing_samples(void **state) {
  (void)state;
  static const char *const names[] = {"long_scoreboard"};
  static const uint32_t few[] = {10};
  const char *path = write_mix("few.mprof", 32, 256, names, few, 1, 0, 3);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(a.diagnosis, 0);
  for (uint32_t d = 0; d <= MPROF_DIM_SCHEDULING; d++)
    assert_int_equal(k->dimensions[d].state, MPROF_STATE_UNKNOWN);
  assert_int_equal(dim(k, MPROF_DIM_OCCUPANCY)->state, MPROF_STATE_OK);
  assert_non_null(strstr(dim(k, 0)->detail, "Too few"));
  int buffer_full = 0, no_sidecar = 0;
  for (size_t i = 0; i < mprof_diagnosis_note_count(a.diagnosis); i++) {
    const mprof_note *n = mprof_diagnosis_note(a.diagnosis, i);
    buffer_full |= strcmp(n->key, "pc_buffer_full") == 0;
    if (strcmp(n->key, "no_sidecar") == 0) {
      no_sidecar = 1;
      assert_non_null(strstr(n->text, "mprof record"));
      assert_non_null(strstr(n->text, "mprof sass"));
    }
  }
  assert_true(buffer_full && no_sidecar);
  tt_release(&a);
  unlink(path);

  /* No PC samples at all: a timeline summary that says so. */
  path = test_path("no-pcs.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.pcs_per_kernel = 0;
  opts.scenario = MPROF_SYNTH_OCCUPANCY;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  tt_analyse(&a, path, NULL);
  k = mprof_diagnosis_kernel(a.diagnosis, 0);
  assert_int_equal(dim(k, MPROF_DIM_MEMORY_LATENCY)->state,
                   MPROF_STATE_UNKNOWN);
  assert_int_equal(k->verdict_dimension, MPROF_DIM_OCCUPANCY);
  assert_int_equal(k->hot_count, 0);
  int no_samples = 0;
  for (size_t i = 0; i < mprof_diagnosis_note_count(a.diagnosis); i++) {
    const mprof_note *n = mprof_diagnosis_note(a.diagnosis, i);
    if (strcmp(n->key, "no_samples") == 0) {
      no_samples = 1;
      assert_non_null(strstr(n->text, "pc.mode=off"));
    }
  }
  assert_true(no_samples);
  int rc;
  char *xml = tt_report(a.diagnosis, NULL, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(xml, "<note key=\"no_samples\">"));
  assert_non_null(strstr(xml, "state=\"unknown\""));
  assert_int_equal(tt_xmllint(xml), 0);
  free(xml);
  tt_release(&a);
  unlink(path);
}

/* ---- reports ------------------------------------------------------------ */

static void check_json(const char *text, const char *schema) {
  char why[1024];
  if (json_schema_validate_text(tt_doc(schema), text, why, sizeof why) != 0)
    fail_msg("JSON does not match %s: %s", schema, why);
}

static void test_reports_are_valid(void **state) {
  (void)state;
  const char *path = test_path("report.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.kernels = 20;
  opts.devices = 2;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  char sidecar_path[1024];
  snprintf(sidecar_path, sizeof sidecar_path, "%s.pc.json", path);
  assert_int_equal(mprof_synth_write_sidecar(path, NULL), 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, sidecar_path), 0);
  tt_analysis a;
  tt_analyse(&a, path, sc);
  assert_int_equal(mprof_diagnosis_kernel_count(a.diagnosis), 40);

  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  int rc;
  char *xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(tt_xmllint(xml), 0);
  /* Bounded: 5 kernels of 40, 5 hot instructions each; SASS and lines. */
  assert_non_null(strstr(xml, "<kernels matched=\"40\" shown=\"5\" "
                              "omitted=\"35\""));
  assert_non_null(strstr(xml, "<hot-instructions sampled_pcs=\"24\" "
                              "shown=\"5\" omitted=\"19\">"));
  assert_non_null(strstr(xml, "sass=\""));
  assert_non_null(strstr(xml, "file=\"synth_kernels.cu\""));
  assert_null(strstr(xml, "no_sidecar"));
  assert_true(strlen(xml) < 32768);
  free(xml);

  ro.format = MPROF_REPORT_JSON;
  ro.max_kernels = (size_t)-1;
  ro.max_hot = 2;
  char *json = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  check_json(json, "summary.schema.json");
  json_object *doc = json_tokener_parse(json);
  json_object *kernels, *items, *first, *hot, *instructions;
  assert_true(json_object_object_get_ex(doc, "kernels", &kernels));
  assert_true(json_object_object_get_ex(kernels, "items", &items));
  assert_int_equal(json_object_array_length(items), 40);
  first = json_object_array_get_idx(items, 0);
  assert_true(json_object_object_get_ex(first, "hot", &hot));
  assert_true(json_object_object_get_ex(hot, "instructions", &instructions));
  assert_int_equal(json_object_array_length(instructions), 2);
  json_object_put(doc);
  free(json);

  /* Text: colour only when asked. */
  ro.format = MPROF_REPORT_TEXT;
  ro.max_kernels = 3;
  char *text = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_null(strchr(text, '\x1b'));
  assert_non_null(strstr(text, "(37 more kernels"));
  free(text);
  ro.flags = MPROF_REPORT_COLOR;
  text = tt_report(a.diagnosis, &ro, &rc);
  assert_non_null(strchr(text, '\x1b'));
  free(text);

  /* Filters: exact name, regular expression, nothing, a bad expression. */
  ro.format = MPROF_REPORT_XML;
  ro.flags = 0;
  ro.kernel = "_Z13pointer_chasePKjPjii";
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(xml, "matched=\"2\"")); /* one per device */
  assert_non_null(strstr(xml, "device=\"1\""));
  free(xml);
  ro.kernel = "gemm_tiled|saxpy";
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(xml, "matched=\"4\""));
  assert_non_null(strstr(xml, "filter=\"gemm_tiled|saxpy\""));
  free(xml);
  ro.kernel = "no_such_kernel";
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "no kernel matches"));
  assert_true(xml == NULL || *xml == 0);
  free(xml);
  ro.kernel = "([";
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, MPROF_EINVAL);
  free(xml);
  ro.kernel = NULL;
  ro.version = 77;
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, MPROF_EVERSION);
  free(xml);
  tt_release(&a);
  mprof_sidecar_free(sc);
  unlink(sidecar_path);
  unlink(path);
}

/* Kernel names with markup, quotes, control characters and broken UTF-8
 * stay well-formed XML and valid JSON. */
static void test_escaping(void **state) {
  (void)state;
  static const char nasty[] = "operator<<<float, 2>&(a \"b\" 'c')\x01 \xff\xfe "
                              "]]> \xc3\xa9";
  const char *path = test_path("nasty.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0), st = tt_stream(w, d, 1);
  uint32_t k = tt_kernel(w, "_Z5nastyv", nasty, d, 32, 0, 0x1);
  uint32_t sh = tt_shape(w, k, 264, 128, 0);
  for (uint64_t i = 0; i < 10; i++)
    tt_launch(w, sh, st, i * 100, i * 100 + 90);
  tt_reason(w, d, 0, REASON("wait<&>"));
  tt_sample(w, d, "_Z5nastyv", 0x1, 0x10, 0, 500);
  assert_int_equal(mprof_writer_finish(w), 0);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  int rc;
  char *xml = tt_report(a.diagnosis, NULL, &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(tt_xmllint(xml), 0);
  assert_non_null(strstr(xml, "operator&lt;&lt;&lt;float, 2&gt;&amp;(a "
                              "&quot;b&quot; &apos;c&apos;)"));
  assert_null(strstr(xml, "\x01"));
  free(xml);
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = MPROF_REPORT_JSON;
  char *json = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  check_json(json, "summary.schema.json");
  json_object *doc = json_tokener_parse(json);
  assert_non_null(doc);
  json_object *kernels, *items, *name;
  assert_true(json_object_object_get_ex(doc, "kernels", &kernels));
  assert_true(json_object_object_get_ex(kernels, "items", &items));
  assert_true(json_object_object_get_ex(json_object_array_get_idx(items, 0),
                                        "name", &name));
  const char *back = json_object_get_string(name);
  assert_non_null(strstr(back, "operator<<<float, 2>&(a \"b\" 'c')\x01 "));
  assert_non_null(strstr(back, "\xef\xbf\xbd")); /* U+FFFD for \xff */
  assert_non_null(strstr(back, "\xc3\xa9"));     /* valid UTF-8 kept */
  json_object_put(doc);
  free(json);
  tt_release(&a);
  unlink(path);
}

/* Spans planted with an imbalance: SM load balance and the SM tail come
 * out as planted, in the reports too; without spans they stay out. */
static const mprof_kernel_diagnosis *
spans_kernel(tt_analysis *a, const char *path, double imbalance) {
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 40;
  opts.kernels = 2;
  opts.streams = 1;
  opts.spans = 60000;
  opts.span_imbalance = imbalance;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  tt_analyse(a, path, NULL);
  uint32_t k = mprof_join_find_kernel(
      a->join, "_Z10gemm_tiledILi64ELi64ELi8EEvPKfS1_Pfiii", MPROF_INDEX_NONE);
  assert_int_not_equal(k, MPROF_INDEX_NONE);
  return mprof_diagnosis_kernel(a->diagnosis, k);
}

static void test_span_dimensions(void **state) {
  (void)state;
  tt_analysis a;
  /* Balanced: every SM as busy, all finish together. */
  const mprof_kernel_diagnosis *k =
      spans_kernel(&a, test_path("balanced.mprof"), 0.0);
  const mprof_dimension *bal = dim(k, MPROF_DIM_SM_BALANCE);
  const mprof_dimension *tail = dim(k, MPROF_DIM_SM_TAIL);
  assert_int_equal(bal->state, MPROF_STATE_OK);
  assert_int_equal(tail->state, MPROF_STATE_OK);
  assert_true(metric(bal, "imbalance") < 1.03);
  assert_true(metric(tail, "tail_fraction") < 0.02);
  assert_int_equal(metric(bal, "sms"), 132);
  /* The other kernel has no spans: unknown. */
  const mprof_kernel_diagnosis *other = mprof_diagnosis_kernel(
      a.diagnosis,
      mprof_join_find_kernel(a.join, "_Z13layernorm_fwdPKfS0_S0_Pfii",
                             MPROF_INDEX_NONE));
  assert_int_equal(dim(other, MPROF_DIM_SM_BALANCE)->state,
                   MPROF_STATE_UNKNOWN);
  assert_non_null(strstr(dim(other, MPROF_DIM_SM_TAIL)->detail, "No activity"));
  tt_release(&a);

  /* SM s works (1 + 3 s / 131) times as long as SM 0: the busiest SM is
   * 4x the first and 1.6x the mean (4 / 2.5); the last finishes 37.5% of
   * the launch after the median (1.5 / 4 of the busy part). */
  k = spans_kernel(&a, test_path("imbalanced.mprof"), 3.0);
  bal = dim(k, MPROF_DIM_SM_BALANCE);
  tail = dim(k, MPROF_DIM_SM_TAIL);
  assert_int_equal(bal->state, MPROF_STATE_ISSUE);
  assert_int_equal(tail->state, MPROF_STATE_ISSUE);
  assert_true(fabs(metric(bal, "imbalance") - 1.6) < 0.03);
  assert_true(fabs(metric(tail, "tail_fraction") - 0.36) < 0.03);
  assert_int_equal(metric(bal, "busiest_sm"), 131);
  assert_int_equal(metric(tail, "last_sm"), 131);
  /* The gain: the SM time spent waiting for the busiest SM, as a share of
   * the kernel's stream time (its runs and the idle gaps before them). */
  const mprof_dimension *gaps = dim(k, MPROF_DIM_LAUNCH);
  double busy = gaps->state == MPROF_STATE_UNKNOWN ? 1.0 : 1.0 - gaps->cost;
  assert_true(fabs(bal->cost - (1 - 1 / metric(bal, "imbalance")) * busy) <
              1e-9);
  assert_non_null(strstr(k->verdict, "SM load balance"));
  /* Both in the reports, valid against the schema. */
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.kernel = "gemm_tiled";
  int rc;
  char *xml = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(tt_xmllint(xml), 0);
  assert_non_null(strstr(xml, "<dimension name=\"sm_load_balance\" "
                              "state=\"issue\""));
  assert_non_null(strstr(xml, "imbalance=\"1.6"));
  assert_non_null(strstr(xml, "<dimension name=\"sm_tail\" state=\"issue\""));
  free(xml);
  ro.format = MPROF_REPORT_JSON;
  char *json = tt_report(a.diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  check_json(json, "summary.schema.json");
  assert_non_null(strstr(json, "\"sm_load_balance\":{\"state\":\"issue\""));
  free(json);
  tt_release(&a);

  /* No spans in the trace: the two dimensions stay out of the reports. */
  const char *plain = test_path("nospans.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 200;
  assert_int_equal(mprof_synth_write(plain, &opts), 0);
  tt_analyse(&a, plain, NULL);
  ro.format = MPROF_REPORT_XML;
  ro.kernel = NULL;
  xml = tt_report(a.diagnosis, &ro, &rc);
  assert_null(strstr(xml, "sm_load_balance"));
  assert_non_null(strstr(xml, "launch_overhead"));
  free(xml);
  ro.format = MPROF_REPORT_JSON;
  json = tt_report(a.diagnosis, &ro, &rc);
  check_json(json, "summary.schema.json");
  assert_null(strstr(json, "sm_tail"));
  free(json);
  ro.format = MPROF_REPORT_TEXT;
  char *text = tt_report(a.diagnosis, &ro, &rc);
  assert_null(strstr(text, "SM load balance"));
  free(text);
  tt_release(&a);
}

static void test_options(void **state) {
  (void)state;
  mprof_diagnose_options o;
  assert_int_equal(mprof_diagnose_options_init(&o, 0), MPROF_EVERSION);
  assert_int_equal(
      mprof_diagnose_options_init(&o, MPROF_DIAGNOSE_OPTIONS_VERSION), 0);
  assert_int_equal(o.hot_count, 10);
  mprof_report_options r;
  assert_int_equal(mprof_report_options_init(&r, MPROF_REPORT_OPTIONS_VERSION),
                   0);
  assert_int_equal(r.max_kernels, 5);
  assert_int_equal(mprof_diagnose(NULL, NULL, NULL), MPROF_EINVAL);
  mprof_diagnosis_free(NULL);
  assert_string_equal(mprof_dimension_key(MPROF_DIM_TAIL), "tail_effect");
  assert_string_equal(mprof_dimension_key(99), "");
  assert_string_equal(mprof_state_name(MPROF_STATE_MINOR), "minor");
  assert_int_equal(mprof_stall_reason_dimension(REASON("mio_throttle")),
                   MPROF_DIM_SHARED_MIO);
  assert_int_equal(mprof_stall_reason_dimension("barrier_not_issued"),
                   MPROF_DIM_SYNC);
  assert_int_equal(mprof_stall_reason_dimension("selected"), MPROF_DIM_COMPUTE);
  assert_int_equal(mprof_stall_reason_dimension("brand_new"), MPROF_DIM_NONE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_planted_memory_latency),
      cmocka_unit_test(test_planted_compute),
      cmocka_unit_test(test_planted_barrier),
      cmocka_unit_test(test_planted_occupancy),
      cmocka_unit_test(test_planted_tail),
      cmocka_unit_test(test_planted_launch_gaps),
      cmocka_unit_test(test_mixed_scenario),
      cmocka_unit_test(test_occupancy_calculator),
      cmocka_unit_test(test_healthy_kernel),
      cmocka_unit_test(test_not_issued_excluded),
      cmocka_unit_test(test_unknown_reasons),
      cmocka_unit_test(test_occupancy_with_busy_pipes),
      cmocka_unit_test(test_missing_samples),
      cmocka_unit_test(test_reports_are_valid),
      cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_span_dimensions),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
