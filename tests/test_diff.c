/*
 * mprof tests — the diff: a planted slowdown is found and trips the gate,
 * identical traces and re-runs stay inside the noise, the t-test against an
 * independent computation, kernels on one side only, per-device matching,
 * stall and hot-instruction movement, and the diff reports.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stddef.h>

#include "analysis_util.h"
#include "json_schema.h"
#include "mprof/synth.h"

static const char *synth(const char *name, uint32_t scenario, double slowdown,
                         uint64_t slow_kernels, uint32_t slow_scenario,
                         uint64_t timing_seed, uint32_t kernels,
                         uint32_t devices) {
  const char *path = test_path(name);
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 20000;
  opts.seed = 42;
  opts.scenario = scenario;
  opts.slowdown = slowdown;
  opts.slow_kernels = slow_kernels;
  opts.slow_scenario = slow_scenario;
  opts.timing_seed = timing_seed;
  opts.kernels = kernels;
  opts.devices = devices;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  return path;
}

typedef struct pair {
  tt_analysis base, candidate;
  mprof_diff *diff;
} pair;

static void compare(pair *p, const char *base, const char *candidate) {
  tt_analyse(&p->base, base, NULL);
  tt_analyse(&p->candidate, candidate, NULL);
  int rc =
      mprof_diff_run(&p->diff, p->base.diagnosis, p->candidate.diagnosis, NULL);
  assert_int_equal(rc, 0);
}

static void release(pair *p) {
  mprof_diff_free(p->diff);
  tt_release(&p->base);
  tt_release(&p->candidate);
}

static const mprof_kernel_change *find(const mprof_diff *d, const char *name,
                                       uint32_t device) {
  for (size_t i = 0; i < mprof_diff_kernel_count(d); i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(d, i);
    if (strcmp(c->mangled, name) == 0 &&
        (device == MPROF_INDEX_NONE || c->device_id == device))
      return c;
  }
  fail_msg("no kernel %s in the diff", name);
  return NULL;
}

static char *diff_report(const mprof_diff *d, unsigned format,
                         double fail_above) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = format;
  ro.max_kernels = (size_t)-1;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_int_equal(mprof_diff_write(f, d, &ro, fail_above), 0);
  fclose(f);
  return text;
}

static void check_reports(const mprof_diff *d, double fail_above) {
  char *xml = diff_report(d, MPROF_REPORT_XML, fail_above);
  assert_int_equal(tt_xmllint(xml), 0);
  assert_non_null(strstr(xml, "<mprof-diff schema=\"1\""));
  free(xml);
  char *json = diff_report(d, MPROF_REPORT_JSON, fail_above);
  char why[1024];
  if (json_schema_validate_text(tt_doc("diff.schema.json"), json, why,
                                sizeof why) != 0)
    fail_msg("diff JSON does not match its schema: %s", why);
  free(json);
  char *text = diff_report(d, MPROF_REPORT_TEXT, fail_above);
  assert_null(strchr(text, '\x1b'));
  free(text);
}

/* kernel 2 of 8 runs 20% slower; nothing else changes. */
static void test_planted_slowdown(void **state) {
  (void)state;
  const char *base = synth("base.mprof", 0, 0, 0, 0, 0, 8, 1);
  const char *slow = synth("slow.mprof", 0, 0.20, 1u << 2, 0, 0, 8, 1);
  pair p;
  compare(&p, base, slow);
  assert_int_equal(mprof_diff_kernel_count(p.diff), 8);
  const mprof_kernel_change *c = mprof_diff_kernel(p.diff, 0);
  /* Largest change in total time first: the slowed kernel. */
  assert_string_equal(c->mangled, "_Z17attention_softmaxPKfPfiif");
  assert_int_equal(c->change, MPROF_CHANGE_SLOWER);
  assert_true(c->significant);
  assert_true(fabs(c->mean_change - 0.20) < 0.002);
  assert_true(fabs(c->total_change - 0.20) < 0.002);
  assert_true(c->noise > 0 && c->noise < 0.05);
  assert_true(c->p_value < 1e-6);
  assert_true(c->t > 10);
  assert_non_null(strstr(c->summary, "Slower"));
  assert_non_null(strstr(c->summary, "+20.0%"));
  for (size_t i = 1; i < mprof_diff_kernel_count(p.diff); i++) {
    const mprof_kernel_change *o = mprof_diff_kernel(p.diff, i);
    assert_int_equal(o->change, MPROF_CHANGE_NOISE);
    assert_true(o->mean_change == 0);
  }
  assert_int_equal(mprof_diff_gate(p.diff, 10.0), 1);
  assert_int_equal(mprof_diff_gate(p.diff, 19.0), 1);
  assert_int_equal(mprof_diff_gate(p.diff, 25.0), 0);
  uint64_t tb, tk;
  mprof_diff_totals(p.diff, &tb, &tk);
  assert_true(tk > tb);
  /* Same code on both sides: hot instructions matched by offset. */
  assert_int_equal(c->hot_match, MPROF_HOT_BY_OFFSET);
  assert_true(c->hot_change_count >= 5);
  /* Matched by offset: every hot instruction is on both sides (a share is
   * negative on a side it is absent from), and the slowdown changed time,
   * not where the warps stall, so each keeps its share. */
  for (size_t i = 0; i < c->hot_change_count; i++) {
    const mprof_hot_change *h = &c->hot_changes[i];
    if (!(h->base_share > 0.001 && h->candidate_share > 0.001 &&
          fabs(h->base_share - h->candidate_share) < 0.02))
      fail_msg("hot instruction 0x%x: share %.4f in the base, %.4f in the "
               "candidate",
               h->offset, h->base_share, h->candidate_share);
  }
  check_reports(p.diff, 10);
  char *xml = diff_report(p.diff, MPROF_REPORT_XML, 10);
  assert_non_null(strstr(xml, "<gate fail_above_percent=\"10.00\" "
                              "tripped=\"true\" kernels=\"1\"/>"));
  free(xml);
  release(&p);

  /* The other way round it is faster, and the gate holds. */
  compare(&p, slow, base);
  c = mprof_diff_kernel(p.diff, 0);
  assert_int_equal(c->change, MPROF_CHANGE_FASTER);
  assert_true(fabs(c->mean_change + 1.0 / 6.0) < 0.002);
  assert_int_equal(mprof_diff_gate(p.diff, 10), 0);
  release(&p);
  unlink(base);
  unlink(slow);
}

static void test_identical_and_rerun(void **state) {
  (void)state;
  const char *base = synth("same.mprof", 0, 0, 0, 0, 0, 8, 1);
  pair p;
  compare(&p, base, base);
  for (size_t i = 0; i < mprof_diff_kernel_count(p.diff); i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(p.diff, i);
    assert_int_equal(c->change, MPROF_CHANGE_NOISE);
    assert_false(c->significant);
    assert_true(c->mean_change == 0 && c->total_delta_ns == 0);
    assert_true(c->p_value == 1.0);
    assert_true(c->stalls_compared);
    for (size_t s = 0; s < c->stall_change_count; s++)
      assert_true(c->stall_changes[s].base_share ==
                  c->stall_changes[s].candidate_share);
  }
  assert_int_equal(mprof_diff_gate(p.diff, 0), 0);
  check_reports(p.diff, 10);
  release(&p);

  /* A second run of the same program: new jitter, same kernels. Every
   * change stays inside the noise. */
  static const uint64_t seeds[] = {2, 3, 4, 5};
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
    const char *rerun = synth("rerun.mprof", 0, 0, 0, 0, seeds[s], 8, 1);
    compare(&p, base, rerun);
    for (size_t i = 0; i < mprof_diff_kernel_count(p.diff); i++) {
      const mprof_kernel_change *c = mprof_diff_kernel(p.diff, i);
      if (c->change != MPROF_CHANGE_NOISE)
        fail_msg("re-run %llu: %s", (unsigned long long)seeds[s], c->summary);
      assert_true(fabs(c->mean_change) < c->noise);
      assert_non_null(strstr(c->summary, "Within noise"));
    }
    assert_int_equal(mprof_diff_gate(p.diff, 1.0), 0);
    release(&p);
    unlink(rerun);
  }
  unlink(base);
}

/* A slowdown smaller than the noise is reported as noise; one well above
 * it is not. */
static void test_small_changes(void **state) {
  (void)state;
  const char *base = synth("small-base.mprof", 0, 0, 0, 0, 0, 8, 1);
  const char *tiny = synth("tiny.mprof", 0, 0.003, 1, 0, 0, 8, 1);
  pair p;
  compare(&p, base, tiny);
  const mprof_kernel_change *c = find(p.diff,
                                      "_Z10gemm_tiledILi64ELi64ELi8EE"
                                      "vPKfS1_Pfiii",
                                      MPROF_INDEX_NONE);
  assert_true(c->mean_change > 0.002);
  assert_int_equal(c->change, MPROF_CHANGE_NOISE);
  assert_int_equal(mprof_diff_gate(p.diff, 0), 0);
  release(&p);
  const char *five = synth("five.mprof", 0, 0.05, 1, 0, 0, 8, 1);
  compare(&p, base, five);
  c = find(p.diff, "_Z10gemm_tiledILi64ELi64ELi8EEvPKfS1_Pfiii",
           MPROF_INDEX_NONE);
  assert_int_equal(c->change, MPROF_CHANGE_SLOWER);
  assert_int_equal(mprof_diff_gate(p.diff, 4), 1);
  assert_int_equal(mprof_diff_gate(p.diff, 6), 0);
  release(&p);
  unlink(base);
  unlink(tiny);
  unlink(five);
}

/* Welch's t, its degrees of freedom and p-value against a direct
 * computation (numerical integration of Student's t density). */
static double t_density(double x, double nu) {
  return exp(lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * M_PI) -
             (nu + 1) / 2 * log1p(x * x / nu));
}

static double t_two_sided(double t, double nu) {
  /* Simpson's rule on [|t|, |t| + 400]: the tail past that is below 1e-12
   * for nu >= 5. */
  double a = fabs(t), b = a + 400;
  int n = 400000;
  double h = (b - a) / n, sum = t_density(a, nu) + t_density(b, nu);
  for (int i = 1; i < n; i++)
    sum += (i & 1 ? 4 : 2) * t_density(a + i * h, nu);
  return 2 * sum * h / 3;
}

static void write_durations(const char *path, const uint64_t *dur, size_t n) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0), st = tt_stream(w, d, 1);
  uint32_t sh =
      tt_shape(w, tt_kernel(w, "_Z1kv", "", d, 32, 0, 1), 264, 128, 0);
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) {
    tt_launch(w, sh, st, t, t + dur[i]);
    t += dur[i] + 1000;
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void test_welch_t_test(void **state) {
  (void)state;
  static const uint64_t a[] = {1000, 1020, 980,  1010, 990,
                               1030, 970,  1000, 1010, 990};
  static const uint64_t b[] = {1030, 1000, 1060, 1010, 1040, 990,  1050,
                               1020, 1045, 1005, 1025, 1015, 1035, 1000};
  const char *pa = test_path("welch-a.mprof");
  const char *pb = test_path("welch-b.mprof");
  write_durations(pa, a, 10);
  write_durations(pb, b, 14);
  pair p;
  compare(&p, pa, pb);
  const mprof_kernel_change *c = mprof_diff_kernel(p.diff, 0);
  double ma = 0, mb = 0, va = 0, vb = 0;
  for (int i = 0; i < 10; i++)
    ma += (double)a[i] / 10;
  for (int i = 0; i < 14; i++)
    mb += (double)b[i] / 14;
  for (int i = 0; i < 10; i++)
    va += ((double)a[i] - ma) * ((double)a[i] - ma) / 9;
  for (int i = 0; i < 14; i++)
    vb += ((double)b[i] - mb) * ((double)b[i] - mb) / 13;
  double se2 = va / 10 + vb / 14;
  double t = (mb - ma) / sqrt(se2);
  double nu =
      se2 * se2 / ((va / 10) * (va / 10) / 9 + (vb / 14) * (vb / 14) / 13);
  assert_true(fabs(c->t - t) < 1e-9);
  assert_true(fabs(c->dof - nu) < 1e-9);
  double expect = t_two_sided(t, nu);
  assert_true(fabs(c->p_value - expect) < 1e-7);
  assert_true(c->p_value > 0.001 && c->p_value < 0.05);
  /* 2.4% slower, but not at the 99.9% level: noise. */
  assert_int_equal(c->change, MPROF_CHANGE_NOISE);
  assert_true(c->noise > fabs(c->mean_change));
  release(&p);

  /* One launch a side: the noise is unknown; 3% counts as noise, 8% as a
   * change (five times the 1% minimum). */
  static const uint64_t one[] = {1000}, three[] = {1030}, eight[] = {1080};
  write_durations(pa, one, 1);
  write_durations(pb, three, 1);
  compare(&p, pa, pb);
  c = mprof_diff_kernel(p.diff, 0);
  assert_true(c->noise < 0);
  assert_int_equal(c->change, MPROF_CHANGE_NOISE);
  assert_non_null(strstr(c->summary, "noise unknown"));
  release(&p);
  write_durations(pb, eight, 1);
  compare(&p, pa, pb);
  assert_int_equal(mprof_diff_kernel(p.diff, 0)->change, MPROF_CHANGE_SLOWER);
  check_reports(p.diff, -1);
  release(&p);
  unlink(pa);
  unlink(pb);
}

/* Kernel 8 exists in the candidate only; kernels match per device. */
static void test_sides_and_devices(void **state) {
  (void)state;
  const char *base = synth("eight.mprof", 0, 0, 0, 0, 0, 8, 2);
  const char *more = synth("nine.mprof", 0, 0.3, 1u << 1, 0, 0, 9, 2);
  pair p;
  compare(&p, base, more);
  assert_int_equal(mprof_diff_kernel_count(p.diff), 18);
  const char *cublas = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128"
                       "x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
                       "5x_cublas";
  for (uint32_t d = 0; d < 2; d++) {
    const mprof_kernel_change *c = find(p.diff, cublas, d);
    assert_int_equal(c->change, MPROF_CHANGE_ONLY_CANDIDATE);
    assert_null(c->base);
    assert_non_null(c->candidate);
    assert_true(c->total_delta_ns > 0);
    assert_non_null(strstr(c->summary, "New in the candidate"));
    c = find(p.diff, "_Z13layernorm_fwdPKfS0_S0_Pfii", d);
    assert_int_equal(c->change, MPROF_CHANGE_SLOWER);
    assert_int_equal(c->device_id, d);
    assert_true(fabs(c->mean_change - 0.3) < 0.03);
  }
  check_reports(p.diff, 10);
  release(&p);
  compare(&p, more, base);
  assert_int_equal(find(p.diff, cublas, 1)->change, MPROF_CHANGE_ONLY_BASE);
  release(&p);
  unlink(base);
  unlink(more);
}

/* The slowed kernel also changes what it waits on. */
static void test_stall_profile_moves(void **state) {
  (void)state;
  const char *base =
      synth("lat.mprof", MPROF_SYNTH_MEMORY_LATENCY, 0, 0, 0, 0, 8, 1);
  const char *moved = synth("lat-compute.mprof", MPROF_SYNTH_MEMORY_LATENCY,
                            0.25, 1, MPROF_SYNTH_COMPUTE, 0, 8, 1);
  pair p;
  compare(&p, base, moved);
  const mprof_kernel_change *c = find(
      p.diff, "_Z10gemm_tiledILi64ELi64ELi8EEvPKfS1_Pfiii", MPROF_INDEX_NONE);
  assert_int_equal(c->change, MPROF_CHANGE_SLOWER);
  assert_true(c->stalls_compared);
  const mprof_stall_change *s = &c->stall_changes[0];
  assert_string_equal(s->reason, "long_scoreboard");
  assert_true(s->base_share > 0.6 && s->candidate_share < 0.05);
  assert_string_equal(c->stall_changes[1].reason, "math_pipe_throttle");
  const mprof_dimension_change *d =
      &c->dimension_changes[MPROF_DIM_MEMORY_LATENCY];
  assert_int_equal(d->base_state, MPROF_STATE_ISSUE);
  assert_int_equal(d->candidate_state, MPROF_STATE_OK);
  assert_int_equal(c->dimension_changes[MPROF_DIM_COMPUTE].candidate_state,
                   MPROF_STATE_ISSUE);
  /* The accessors reach the same elements, and NULL past the end. */
  assert_ptr_equal(mprof_kernel_change_stall(c, 1), &c->stall_changes[1]);
  assert_null(mprof_kernel_change_stall(c, c->stall_change_count));
  assert_ptr_equal(mprof_kernel_change_dimension(c, MPROF_DIM_COMPUTE),
                   &c->dimension_changes[MPROF_DIM_COMPUTE]);
  assert_null(mprof_kernel_change_dimension(c, c->dimension_change_count));
  assert_true(c->hot_change_count > 0);
  assert_ptr_equal(mprof_kernel_change_hot(c, 0), &c->hot_changes[0]);
  assert_null(mprof_kernel_change_hot(c, c->hot_change_count));
  assert_null(mprof_kernel_change_hot(NULL, 0));
  assert_non_null(strstr(c->summary, "memory latency -> compute pipes"));
  assert_non_null(strstr(c->summary, "long_scoreboard"));
  check_reports(p.diff, 10);
  release(&p);
  unlink(base);
  unlink(moved);
}

/* Code changed (another cubin CRC): hot instructions meet by source line. */
static const char *write_versioned(const char *name, uint64_t crc,
                                   uint32_t shift) {
  const char *path = test_path(name);
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0), st = tt_stream(w, d, 1);
  uint32_t sh =
      tt_shape(w, tt_kernel(w, "_Z1kv", "", d, 32, 0, crc), 264, 128, 0);
  for (uint64_t i = 0; i < 50; i++)
    tt_launch(w, sh, st, i * 2000, i * 2000 + 1000 + (i % 5));
  tt_reason(w, d, 0, REASON("long_scoreboard"));
  tt_sample(w, d, "_Z1kv", crc, 0x40 + shift, 0, 600);
  tt_sample(w, d, "_Z1kv", crc, 0x80 + shift, 0, 400);
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

static mprof_sidecar *versioned_sidecar(uint64_t crc, uint32_t shift) {
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  mprof_sidecar_function fn;
  memset(&fn, 0, sizeof fn);
  fn.name = "_Z1kv";
  fn.cubin_crc = crc;
  uint32_t f;
  assert_int_equal(mprof_sidecar_add_function(sc, &f, &fn), 0);
  for (uint32_t off = 0; off <= 0x100; off += 16) {
    mprof_sass_instruction in = {
        off,        1 + (off >= 0x40 + shift) + (off >= 0x80 + shift),
        "",         "LDG.E",
        "R1, [R2]", "k.cu"};
    assert_int_equal(mprof_sidecar_add_instruction(sc, f, &in), 0);
  }
  return sc;
}

static void test_hot_by_line(void **state) {
  (void)state;
  const char *pa = write_versioned("v1.mprof", 0x111, 0);
  const char *pb = write_versioned("v2.mprof", 0x222, 0x20);
  mprof_sidecar *sa = versioned_sidecar(0x111, 0);
  mprof_sidecar *sb = versioned_sidecar(0x222, 0x20);
  pair p;
  tt_analyse(&p.base, pa, sa);
  tt_analyse(&p.candidate, pb, sb);
  assert_int_equal(
      mprof_diff_run(&p.diff, p.base.diagnosis, p.candidate.diagnosis, NULL),
      0);
  const mprof_kernel_change *c = mprof_diff_kernel(p.diff, 0);
  assert_int_equal(c->hot_match, MPROF_HOT_BY_LINE);
  assert_int_equal(c->hot_change_count, 2);
  assert_int_equal(c->hot_changes[0].line, 2);
  assert_true(fabs(c->hot_changes[0].base_share - 0.6) < 1e-9);
  assert_true(fabs(c->hot_changes[0].candidate_share - 0.6) < 1e-9);
  assert_int_equal(c->hot_changes[0].offset, 0x60); /* the candidate's */
  check_reports(p.diff, -1);
  release(&p);
  /* Without lines the two sides are listed apart. */
  tt_analyse(&p.base, pa, NULL);
  tt_analyse(&p.candidate, pb, NULL);
  assert_int_equal(
      mprof_diff_run(&p.diff, p.base.diagnosis, p.candidate.diagnosis, NULL),
      0);
  c = mprof_diff_kernel(p.diff, 0);
  assert_int_equal(c->hot_match, MPROF_HOT_UNMATCHED);
  assert_int_equal(c->hot_change_count, 4);
  for (size_t i = 0; i < 4; i++)
    assert_true((c->hot_changes[i].base_share < 0) !=
                (c->hot_changes[i].candidate_share < 0));
  check_reports(p.diff, -1);
  release(&p);
  mprof_sidecar_free(sa);
  mprof_sidecar_free(sb);
  unlink(pa);
  unlink(pb);
}

/* Version 1 callers of the synthesizer (a shorter struct) still work. */
static void test_synth_version_1(void **state) {
  (void)state;
  mprof_synth_options so;
  memset(&so, 0xab, sizeof so);
  assert_int_equal(mprof_synth_options_init(&so, 1), 0);
  assert_int_equal(so.version, 1);
  assert_int_equal(so.launches, 10000);
  const unsigned char *tail =
      (const unsigned char *)&so + offsetof(mprof_synth_options, slowdown);
  assert_int_equal(tail[0], 0xab); /* past a version 1 struct: untouched */
  so.launches = 100;
  const char *path = test_path("v1.mprof");
  assert_int_equal(mprof_synth_write(path, &so), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n;
  mprof_trace_launches(t, &n);
  assert_int_equal(n, 100);
  mprof_trace_free(t);
  unlink(path);
  assert_int_equal(
      mprof_synth_options_init(&so, MPROF_SYNTH_OPTIONS_VERSION + 1),
      MPROF_EVERSION);
  assert_int_equal(mprof_synth_options_init(&so, MPROF_SYNTH_OPTIONS_VERSION),
                   0);
  assert_true(so.slowdown == 0 && so.timing_seed == 0);
  so.slowdown = -1;
  assert_int_equal(mprof_synth_write(path, &so), MPROF_EINVAL);
}

static void test_bad_arguments(void **state) {
  (void)state;
  mprof_diff *d = NULL;
  assert_int_equal(mprof_diff_run(&d, NULL, NULL, NULL), MPROF_EINVAL);
  mprof_diff_options o;
  assert_int_equal(mprof_diff_options_init(&o, 3), MPROF_EVERSION);
  assert_int_equal(mprof_diff_options_init(&o, MPROF_DIFF_OPTIONS_VERSION), 0);
  assert_true(o.alpha == 0.001 && o.min_change == 0.01);
  const char *base = write_versioned("args.mprof", 1, 0);
  tt_analysis a;
  tt_analyse(&a, base, NULL);
  o.alpha = 0;
  assert_int_equal(mprof_diff_run(&d, a.diagnosis, a.diagnosis, &o),
                   MPROF_EINVAL);
  o.alpha = 0.01;
  o.version = 9;
  assert_int_equal(mprof_diff_run(&d, a.diagnosis, a.diagnosis, &o),
                   MPROF_EVERSION);
  assert_int_equal(mprof_diff_run(&d, a.diagnosis, a.diagnosis, NULL), 0);
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.kernel = "nothing_like_it";
  FILE *null = fopen("/dev/null", "w");
  assert_int_equal(mprof_diff_write(null, d, &ro, -1), MPROF_ENOTFOUND);
  ro.kernel = "_Z1kv";
  assert_int_equal(mprof_diff_write(null, d, &ro, -1), 0);
  fclose(null);
  assert_string_equal(mprof_change_name(MPROF_CHANGE_ONLY_BASE), "only_base");
  assert_string_equal(mprof_change_name(42), "");
  mprof_diff_free(d);
  mprof_diff_free(NULL);
  tt_release(&a);
  unlink(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_planted_slowdown),
      cmocka_unit_test(test_identical_and_rerun),
      cmocka_unit_test(test_small_changes),
      cmocka_unit_test(test_welch_t_test),
      cmocka_unit_test(test_sides_and_devices),
      cmocka_unit_test(test_stall_profile_moves),
      cmocka_unit_test(test_hot_by_line),
      cmocka_unit_test(test_synth_version_1),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
