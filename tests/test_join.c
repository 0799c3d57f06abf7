/*
 * mprof tests — the join: launches to kernels (per device), statistics,
 * shapes, idle gaps, PC samples to functions, stall reasons by name, SASS
 * and lines from a sidecar.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "analysis_util.h"
#include "mprof/synth.h"

/*
 * foo on device 0: 4 launches of 100, 300, 30, 100 ns; foo on device 1:
 * 1000 and 500 ns; bar on device 0: 200 ns (grid 10) and 300 ns (grid 20).
 * Streams s0 and s1 on device 0, s2 on device 1.
 */
static const char *write_timeline(void) {
  const char *path = test_path("timeline.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d0 = tt_device(w, 0), d1 = tt_device(w, 1);
  uint32_t s0 = tt_stream(w, d0, 7), s1 = tt_stream(w, d0, 8);
  uint32_t s2 = tt_stream(w, d1, 7);
  uint32_t foo0 = tt_kernel(w, "_Z3fooPf", "foo(float*)", d0, 32, 0, 0xabc);
  uint32_t foo1 = tt_kernel(w, "_Z3fooPf", "foo(float*)", d1, 32, 0, 0xabc);
  uint32_t bar = tt_kernel(w, "_Z3barv", "", d0, 40, 1024, 0xdef);
  uint32_t foo0_shape = tt_shape(w, foo0, 264, 256, 0);
  uint32_t foo1_shape = tt_shape(w, foo1, 264, 256, 0);
  uint32_t bar_a = tt_shape(w, bar, 10, 128, 0);
  uint32_t bar_b = tt_shape(w, bar, 20, 128, 0);
  tt_launch(w, foo0_shape, s0, 0, 100);
  tt_launch(w, bar_a, s0, 150, 350);      /* gap 50 */
  tt_launch(w, bar_b, s0, 350, 650);      /* back to back: no gap */
  tt_launch(w, foo0_shape, s0, 700, 800); /* gap 50 */
  tt_launch(w, foo0_shape, s1, 100, 400); /* first on s1 */
  tt_launch(w, foo0_shape, s1, 390, 420); /* overlaps: no gap */
  tt_launch(w, foo1_shape, s2, 0, 1000);
  tt_launch(w, foo1_shape, s2, 2000, 2500); /* gap 1000 */
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

static void test_statistics_per_device(void **state) {
  (void)state;
  const char *path = write_timeline();
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(&j, t, NULL), 0);
  assert_int_equal(mprof_join_kernel_count(j), 3);
  assert_int_equal(mprof_join_kernel_time(j), 2530);

  /* Dominant first: foo on device 1, then foo on device 0, then bar. */
  const mprof_kernel_stats *f1 = mprof_join_kernel(j, 0);
  const mprof_kernel_stats *f0 = mprof_join_kernel(j, 1);
  const mprof_kernel_stats *b = mprof_join_kernel(j, 2);
  assert_null(mprof_join_kernel(j, 3));
  assert_string_equal(f1->name, "foo(float*)");
  assert_string_equal(f1->mangled, "_Z3fooPf");
  assert_int_equal(f1->device_id, 1);
  assert_int_equal(f0->device_id, 0);
  assert_string_equal(b->name, "_Z3barv"); /* no demangled name */

  assert_int_equal(f0->launches, 4);
  assert_int_equal(f0->total_ns, 530);
  assert_int_equal(f0->min_ns, 30);
  assert_int_equal(f0->max_ns, 300);
  assert_int_equal(f0->median_ns, 100); /* nearest rank 2 of {30,100,100,300} */
  assert_int_equal(f0->p90_ns, 300);
  assert_true(fabs(f0->mean_ns - 132.5) < 1e-9);
  assert_true(fabs(f0->stddev_ns - sqrt(40675.0 / 3.0)) < 1e-6);
  assert_true(fabs(f0->share - 530.0 / 2530.0) < 1e-12);
  assert_true(fabs(f0->device_share - 530.0 / 1030.0) < 1e-12);
  assert_true(fabs(f1->device_share - 1.0) < 1e-12);

  /* Gaps: only the launch at 700 (50 ns after bar ends) has one. */
  assert_int_equal(f0->gap_count, 1);
  assert_int_equal(f0->gap_median_ns, 50);
  assert_int_equal(b->gap_count, 1);
  assert_int_equal(b->gap_median_ns, 50);
  assert_int_equal(f1->gap_count, 1);
  assert_int_equal(f1->gap_median_ns, 1000);

  /* bar's two shapes, largest total first. */
  size_t n;
  const mprof_shape_stats *shapes = mprof_join_shapes(j, 2, &n);
  assert_int_equal(n, 2);
  assert_int_equal(b->shape_count, 2);
  assert_int_equal(shapes[0].grid[0], 20);
  assert_int_equal(shapes[0].total_ns, 300);
  assert_int_equal(shapes[1].grid[0], 10);
  assert_int_equal(shapes[1].launches, 1);
  assert_int_equal(shapes[0].registers, 40);
  assert_int_equal(shapes[0].static_shared, 1024);
  assert_null(mprof_join_shapes(j, 3, &n));
  assert_int_equal(n, 0);

  /* Launches map to their kernels. */
  size_t launch_count;
  const mprof_launch_record *l = mprof_trace_launches(t, &launch_count);
  for (size_t i = 0; i < launch_count; i++) {
    uint32_t k = mprof_join_launch_kernel(j, i);
    assert_true(k < 3);
    uint64_t d = l[i].end - l[i].start;
    if ((d == 200 || d == 300) && l[i].stream == 0)
      assert_int_equal(k, 2);
  }
  assert_int_equal(mprof_join_launch_kernel(j, launch_count), MPROF_INDEX_NONE);
  assert_int_equal(mprof_join_find_kernel(j, "_Z3fooPf", 0), 1);
  assert_int_equal(mprof_join_find_kernel(j, "foo(float*)", 1), 0);
  assert_int_equal(mprof_join_find_kernel(j, "_Z3barv", MPROF_INDEX_NONE), 2);
  assert_int_equal(mprof_join_find_kernel(j, "nope", MPROF_INDEX_NONE),
                   MPROF_INDEX_NONE);
  /* No samples anywhere. */
  assert_int_equal(mprof_join_sample_total(j), 0);
  assert_null(mprof_join_pcs(j, 0, &n));
  mprof_join_free(j);
  mprof_trace_free(t);
  unlink(path);
}

/* The same timeline written out of order gives the same statistics, also
 * when the header claims the launches are sorted and they are not. */
static void test_unsorted_launches(void **state) {
  (void)state;
  const char *path = test_path("unsorted.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d0 = tt_device(w, 0), d1 = tt_device(w, 1);
  uint32_t s0 = tt_stream(w, d0, 7), s1 = tt_stream(w, d0, 8);
  uint32_t s2 = tt_stream(w, d1, 7);
  uint32_t foo0 = tt_kernel(w, "_Z3fooPf", "foo(float*)", d0, 32, 0, 0xabc);
  uint32_t foo1 = tt_kernel(w, "_Z3fooPf", "foo(float*)", d1, 32, 0, 0xabc);
  uint32_t bar = tt_kernel(w, "_Z3barv", "", d0, 40, 1024, 0xdef);
  uint32_t foo0_shape = tt_shape(w, foo0, 264, 256, 0);
  uint32_t foo1_shape = tt_shape(w, foo1, 264, 256, 0);
  uint32_t bar_a = tt_shape(w, bar, 10, 128, 0);
  uint32_t bar_b = tt_shape(w, bar, 20, 128, 0);
  tt_launch(w, foo1_shape, s2, 2000, 2500);
  tt_launch(w, foo0_shape, s0, 700, 800);
  tt_launch(w, foo0_shape, s1, 390, 420);
  tt_launch(w, bar_b, s0, 350, 650);
  tt_launch(w, foo0_shape, s0, 0, 100);
  tt_launch(w, foo1_shape, s2, 0, 1000);
  tt_launch(w, bar_a, s0, 150, 350);
  tt_launch(w, foo0_shape, s1, 100, 400);
  assert_int_equal(mprof_writer_finish(w), 0);
  for (int lie = 0; lie < 2; lie++) {
    if (lie) {
      /* Set the sorted flag by hand and fix the header checksum. */
      size_t size;
      unsigned char *bytes = test_read_file(path, &size);
      mprof_file_header h;
      memcpy(&h, bytes, sizeof h);
      assert_false(h.flags & MPROF_FILE_FLAG_LAUNCHES_SORTED);
      h.flags |= MPROF_FILE_FLAG_LAUNCHES_SORTED;
      h.header_checksum = mprof_crc32c(0, &h, 40);
      memcpy(bytes, &h, sizeof h);
      assert_int_equal(test_write_file(path, bytes, size), 0);
      free(bytes);
    }
    mprof_trace *t;
    mprof_join *j;
    assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
    assert_int_equal(
        (mprof_trace_flags(t) & MPROF_FILE_FLAG_LAUNCHES_SORTED) != 0, lie);
    assert_int_equal(mprof_join_build(&j, t, NULL), 0);
    const mprof_kernel_stats *f1 = mprof_join_kernel(j, 0);
    const mprof_kernel_stats *f0 = mprof_join_kernel(j, 1);
    const mprof_kernel_stats *b = mprof_join_kernel(j, 2);
    assert_int_equal(f0->launches, 4);
    assert_int_equal(f0->total_ns, 530);
    assert_int_equal(f0->median_ns, 100);
    assert_int_equal(f0->p90_ns, 300);
    assert_int_equal(f0->gap_count, 1);
    assert_int_equal(f0->gap_median_ns, 50);
    assert_int_equal(b->gap_count, 1);
    assert_int_equal(f1->gap_count, 1);
    assert_int_equal(f1->gap_median_ns, 1000);
    mprof_join_free(j);
    mprof_trace_free(t);
  }
  unlink(path);
}

/* Two devices with their stall reasons in different index orders. */
static const char *write_samples(void) {
  const char *path = test_path("samples.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d0 = tt_device(w, 0), d1 = tt_device(w, 1);
  uint32_t s0 = tt_stream(w, d0, 7), s1 = tt_stream(w, d1, 7);
  uint32_t k0 = tt_kernel(w, "_Z3fooPf", "", d0, 32, 0, 0xabc);
  uint32_t k1 = tt_kernel(w, "_Z3fooPf", "", d1, 32, 0, 0xabc);
  tt_launch(w, tt_shape(w, k0, 132, 256, 0), s0, 0, 1000);
  tt_launch(w, tt_shape(w, k1, 132, 256, 0), s1, 0, 1000);
  tt_reason(w, d0, 0, REASON("long_scoreboard"));
  tt_reason(w, d0, 1, REASON("long_scoreboard_not_issued"));
  tt_reason(w, d0, 2, REASON("barrier"));
  tt_reason(w, d0, 3, REASON("future_reason"));
  tt_reason(w, d1, 0, REASON("barrier"));
  tt_reason(w, d1, 1, REASON("long_scoreboard"));
  /* The same PC and reason in two drains add up. */
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x10, 0, 100);
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x10, 0, 50);
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x10, 1, 120);
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x10, 2, 10);
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x20, 2, 300);
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x20, 9, 7); /* no name for 9 */
  tt_sample(w, d0, "_Z3fooPf", 0xabc, 0x30, 3, 4);
  tt_sample(w, d1, "_Z3fooPf", 0xabc, 0x10, 1, 40);
  tt_sample(w, d1, "_Z3fooPf", 0xabc, 0x10, 0, 5);
  tt_sample(w, d0, "_Z5ghostv", 0xabc, 0x0, 0, 11); /* never launched */
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}

static uint32_t reason_index(const mprof_join *j, const char *name) {
  for (size_t r = 0; r < mprof_join_reason_count(j); r++)
    if (strcmp(mprof_join_reason(j, r)->name, name) == 0)
      return (uint32_t)r;
  fail_msg("no reason %s", name);
  return MPROF_INDEX_NONE;
}

static uint64_t samples_of(const mprof_reason_samples *rs, size_t n,
                           uint32_t reason) {
  for (size_t i = 0; i < n; i++)
    if (rs[i].reason == reason)
      return rs[i].samples;
  return 0;
}

static void test_samples_join_by_name(void **state) {
  (void)state;
  const char *path = write_samples();
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(&j, t, NULL), 0);
  /* Names are stripped of the prefix and joined across devices. */
  uint32_t lsb = reason_index(j, "long_scoreboard");
  uint32_t lsb_ni = reason_index(j, "long_scoreboard_not_issued");
  uint32_t bar = reason_index(j, "barrier");
  uint32_t future = reason_index(j, "future_reason");
  uint32_t unnamed = reason_index(j, "unnamed");
  assert_int_equal(mprof_join_reason_count(j), 5);
  assert_string_equal(mprof_join_reason(j, lsb)->full_name,
                      REASON("long_scoreboard"));
  assert_int_equal(mprof_join_reason(j, lsb_ni)->not_issued, 1);
  assert_int_equal(mprof_join_reason(j, lsb_ni)->plain, lsb);
  assert_int_equal(mprof_join_reason(j, lsb)->plain, lsb);
  assert_int_equal(mprof_join_reason(j, lsb)->dimension,
                   MPROF_DIM_MEMORY_LATENCY);
  assert_int_equal(mprof_join_reason(j, lsb_ni)->dimension,
                   MPROF_DIM_MEMORY_LATENCY);
  assert_int_equal(mprof_join_reason(j, bar)->dimension, MPROF_DIM_SYNC);
  assert_int_equal(mprof_join_reason(j, future)->dimension, MPROF_DIM_NONE);
  assert_int_equal(mprof_join_reason(j, unnamed)->dimension, MPROF_DIM_NONE);

  /* Kernels: foo on device 0 and 1, and the sampled ghost (no launches). */
  assert_int_equal(mprof_join_kernel_count(j), 3);
  uint32_t k0 = mprof_join_find_kernel(j, "_Z3fooPf", 0);
  uint32_t k1 = mprof_join_find_kernel(j, "_Z3fooPf", 1);
  uint32_t ghost = mprof_join_find_kernel(j, "_Z5ghostv", 0);
  assert_int_equal(ghost, 2); /* no time: last */
  const mprof_kernel_stats *f0 = mprof_join_kernel(j, k0);
  const mprof_kernel_stats *f1 = mprof_join_kernel(j, k1);
  assert_int_equal(f0->samples, 150 + 10 + 300 + 7 + 4);
  assert_int_equal(f0->not_issued, 120);
  assert_int_equal(f0->pc_count, 3);
  assert_int_equal(f0->function_count, 1);
  assert_int_equal(f0->cubin_crc, 0xabc);
  assert_int_equal(f1->samples, 45);
  assert_int_equal(mprof_join_kernel(j, ghost)->launches, 0);
  /* No KERNELS record names it (a kernel launched by a kernel): the join
   * demangles its symbol, as record does for launched kernels. */
  assert_string_equal(mprof_join_kernel(j, ghost)->name, "ghost()");
  assert_string_equal(mprof_join_kernel(j, ghost)->mangled, "_Z5ghostv");
  assert_int_equal(mprof_join_kernel(j, ghost)->samples, 11);
  assert_int_equal(mprof_join_unmatched_samples(j), 11);
  assert_int_equal(mprof_join_sample_total(j), 471 + 45 + 11);

  /* PCs by samples, largest first; reasons within a PC likewise. */
  size_t n;
  const mprof_pc_stats *pcs = mprof_join_pcs(j, k0, &n);
  assert_int_equal(n, 3);
  assert_int_equal(pcs[0].offset, 0x20);
  assert_int_equal(pcs[0].samples, 307);
  assert_int_equal(pcs[1].offset, 0x10);
  assert_int_equal(pcs[1].samples, 160);
  assert_int_equal(pcs[1].not_issued, 120);
  assert_int_equal(pcs[1].reason_count, 3);
  assert_int_equal(pcs[1].reasons[0].reason, lsb);
  assert_int_equal(pcs[1].reasons[0].samples, 150);
  assert_int_equal(pcs[1].reasons[1].reason, lsb_ni);
  assert_int_equal(pcs[2].offset, 0x30);
  assert_null(pcs[0].instruction); /* no sidecar */
  const mprof_reason_samples *rs = mprof_join_kernel_reasons(j, k0, &n);
  assert_int_equal(samples_of(rs, n, bar), 310);
  assert_int_equal(samples_of(rs, n, unnamed), 7);
  assert_int_equal(samples_of(rs, n, future), 4);
  rs = mprof_join_kernel_reasons(j, k1, &n);
  assert_int_equal(samples_of(rs, n, lsb), 40);
  assert_int_equal(samples_of(rs, n, bar), 5);
  mprof_join_free(j);
  mprof_trace_free(t);
  unlink(path);
}

static void test_sidecar_gives_sass_and_lines(void **state) {
  (void)state;
  const char *path = write_samples();
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  mprof_sidecar_function fn;
  memset(&fn, 0, sizeof fn);
  fn.name = "_Z3fooPf";
  fn.demangled = "foo(float*)";
  fn.cubin_crc = 0xabc;
  fn.function_index = 3;
  fn.size = 0x40;
  uint32_t f;
  assert_int_equal(mprof_sidecar_add_function(sc, &f, &fn), 0);
  static const char *const ops[] = {"MOV", "LDG.E.128", "BAR.SYNC", "EXIT"};
  for (uint32_t i = 0; i < 4; i++) {
    mprof_sass_instruction in = {
        16 * i,  10 + i, i == 1 ? "@P0" : "", ops[i], i == 3 ? "" : "R1, R2",
        "foo.cu"};
    assert_int_equal(mprof_sidecar_add_instruction(sc, f, &in), 0);
  }
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = sc;
  assert_int_equal(mprof_join_build(&j, t, &jo), 0);
  assert_ptr_equal(mprof_join_sidecar(j), sc);
  uint32_t k0 = mprof_join_find_kernel(j, "_Z3fooPf", 0);
  const mprof_kernel_stats *ks = mprof_join_kernel(j, k0);
  assert_non_null(ks->function);
  assert_string_equal(ks->function->name, "_Z3fooPf");
  size_t n;
  const mprof_pc_stats *pcs = mprof_join_pcs(j, k0, &n);
  assert_non_null(pcs[0].instruction);
  assert_string_equal(pcs[0].instruction->opcode, "BAR.SYNC");
  assert_int_equal(pcs[0].instruction->line, 12);
  assert_string_equal(pcs[1].instruction->opcode, "LDG.E.128");
  assert_string_equal(pcs[1].instruction->predicate, "@P0");
  assert_string_equal(pcs[1].instruction->file, "foo.cu");
  /* The same instructions as columns: the sidecar's instruction and line
   * of each row, in the rows of kernel k0. */
  size_t rows = mprof_join_pc_rows(j), first = 0;
  for (uint32_t k = 0; k < k0; k++)
    first += mprof_join_kernel(j, k)->pc_count;
  const mprof_sass_instruction **insn = calloc(rows, sizeof *insn);
  uint32_t *line = calloc(rows, sizeof *line);
  assert_int_equal(
      mprof_join_pc_column((void *)insn, rows, j, MPROF_PC_COLUMN_INSTRUCTION),
      0);
  assert_int_equal(mprof_join_pc_column(line, rows, j, MPROF_PC_COLUMN_LINE),
                   0);
  assert_ptr_equal(insn[first], pcs[0].instruction);
  assert_ptr_equal(insn[first + 1], pcs[1].instruction);
  assert_int_equal(line[first], 12);
  assert_int_equal(line[first + 1], 11);
  free(insn);
  free(line);
  /* The ghost has no entry in the sidecar. */
  uint32_t ghost = mprof_join_find_kernel(j, "_Z5ghostv", 0);
  assert_null(mprof_join_kernel(j, ghost)->function);

  /* The diagnosis shows the SASS and line of the hot instruction. */
  mprof_diagnosis *d;
  assert_int_equal(mprof_diagnose(&d, j, NULL), 0);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(d, k0);
  assert_int_equal(kd->hot_count, 3);
  assert_string_equal(kd->hot[0].sass, "BAR.SYNC R1, R2");
  assert_string_equal(kd->hot[1].sass, "@P0 LDG.E.128 R1, R2");
  assert_string_equal(kd->hot[0].file, "foo.cu");
  assert_int_equal(kd->hot[0].line, 12);
  mprof_diagnosis_free(d);
  mprof_join_free(j);
  mprof_trace_free(t);
  mprof_sidecar_free(sc);
  unlink(path);
}

/* A trace without PC_SAMPLES takes the sidecar's samples. */
static void test_samples_from_sidecar(void **state) {
  (void)state;
  const char *path = write_timeline();
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  assert_int_equal(
      mprof_sidecar_set_stall_reason(sc, 0, REASON("math_pipe_throttle")), 0);
  assert_int_equal(mprof_sidecar_set_stall_reason(sc, 1, REASON("wait")), 0);
  mprof_sidecar_function fn;
  memset(&fn, 0, sizeof fn);
  fn.name = "_Z3barv";
  fn.cubin_crc = 0xdef;
  fn.device = 0;
  uint32_t f;
  assert_int_equal(mprof_sidecar_add_function(sc, &f, &fn), 0);
  assert_int_equal(mprof_sidecar_add_samples(sc, f, 0x40, 0, 70), 0);
  assert_int_equal(mprof_sidecar_add_samples(sc, f, 0x50, 1, 30), 0);
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = sc;
  assert_int_equal(mprof_join_build(&j, t, &jo), 0);
  uint32_t k = mprof_join_find_kernel(j, "_Z3barv", 0);
  const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
  assert_int_equal(ks->samples, 100);
  assert_int_equal(ks->pc_count, 2);
  assert_int_equal(mprof_join_unmatched_samples(j), 0);
  size_t n;
  const mprof_pc_stats *pcs = mprof_join_pcs(j, k, &n);
  assert_int_equal(pcs[0].offset, 0x40);
  assert_string_equal(mprof_join_reason(j, pcs[0].reasons[0].reason)->name,
                      "math_pipe_throttle");
  mprof_join_free(j);
  mprof_trace_free(t);
  mprof_sidecar_free(sc);
  unlink(path);
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Median and p90 (nearest rank) against a sort, for several sizes. */
static void test_percentiles_match_sorting(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 2, 3, 10, 1001, 4096};
  uint64_t seed = 12345;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    const char *path = test_path("percentiles.mprof");
    mprof_writer *w;
    assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
    uint32_t d = tt_device(w, 0), st = tt_stream(w, d, 1);
    uint32_t sh = tt_shape(w, tt_kernel(w, "k", "", d, 32, 0, 1), 1, 32, 0);
    uint64_t *dur = (uint64_t *)malloc(n * sizeof *dur);
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      dur[i] = 1 + (seed >> 33) % (i % 7 == 0 ? 50 : 100000); /* ties too */
      tt_launch(w, sh, st, t, t + dur[i]);
      t += dur[i] + 10;
    }
    assert_int_equal(mprof_writer_finish(w), 0);
    mprof_trace *tr;
    mprof_join *j;
    assert_int_equal(mprof_trace_open(&tr, path, NULL), 0);
    assert_int_equal(mprof_join_build(&j, tr, NULL), 0);
    const mprof_kernel_stats *ks = mprof_join_kernel(j, 0);
    qsort(dur, n, sizeof *dur, compare_u64);
    size_t median_rank = (size_t)ceil(0.5 * (double)n);
    size_t p90_rank = (size_t)ceil(0.9 * (double)n);
    assert_int_equal(ks->launches, n);
    assert_int_equal(ks->median_ns, dur[median_rank - 1]);
    assert_int_equal(ks->p90_ns, dur[p90_rank - 1]);
    assert_int_equal(ks->min_ns, dur[0]);
    assert_int_equal(ks->max_ns, dur[n - 1]);
    assert_int_equal(ks->gap_count, n - 1);
    assert_int_equal(ks->gap_median_ns, n > 1 ? 10 : 0);
    if (n == 1)
      assert_true(ks->stddev_ns == 0);
    mprof_join_free(j);
    mprof_trace_free(tr);
    free(dur);
    unlink(path);
  }
}

static void test_empty_trace_and_bad_arguments(void **state) {
  (void)state;
  const char *path = test_path("empty.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "tool", "test"), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(NULL, t, NULL), MPROF_EINVAL);
  assert_int_equal(mprof_join_build(&j, NULL, NULL), MPROF_EINVAL);
  mprof_join_options bad = {99, NULL};
  assert_int_equal(mprof_join_build(&j, t, &bad), MPROF_EVERSION);
  assert_null(j);
  assert_int_equal(mprof_join_options_init(&bad, 4), MPROF_EVERSION);
  assert_int_equal(mprof_join_options_init(&bad, MPROF_JOIN_OPTIONS_VERSION),
                   0);
  assert_int_equal(mprof_join_build(&j, t, &bad), 0);
  assert_int_equal(mprof_join_kernel_count(j), 0);
  assert_int_equal(mprof_join_kernel_time(j), 0);
  assert_null(mprof_join_kernel(j, 0));
  assert_int_equal(mprof_join_launch_kernel(j, 0), MPROF_INDEX_NONE);
  mprof_diagnosis *d;
  assert_int_equal(mprof_diagnose(&d, j, NULL), 0);
  assert_int_equal(mprof_diagnosis_kernel_count(d), 0);
  int saw_no_launches = 0;
  for (size_t i = 0; i < mprof_diagnosis_note_count(d); i++)
    saw_no_launches |=
        strcmp(mprof_diagnosis_note(d, i)->key, "no_launches") == 0;
  assert_true(saw_no_launches);
  mprof_diagnosis_free(d);
  mprof_join_free(j);
  mprof_join_free(NULL);
  mprof_trace_free(t);
  unlink(path);
  /* Names of reasons. */
  assert_string_equal(mprof_stall_reason_short_name(REASON("wait")), "wait");
  assert_string_equal(mprof_stall_reason_short_name("wait"), "wait");
  assert_string_equal(mprof_stall_reason_short_name(NULL), "");
}

/* Many launches over many kernels: counts and shares add up. */
static void test_synthetic_totals(void **state) {
  (void)state;
  const char *path = test_path("synth-join.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 200000;
  opts.kernels = 16;
  opts.streams = 3;
  opts.devices = 2;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(&j, t, NULL), 0);
  assert_int_equal(mprof_join_kernel_count(j), 32); /* 16 per device */
  uint64_t launches = 0, total = 0;
  double share = 0;
  for (size_t k = 0; k < mprof_join_kernel_count(j); k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
    launches += ks->launches;
    total += ks->total_ns;
    share += ks->share;
    assert_true(ks->min_ns <= ks->median_ns && ks->median_ns <= ks->p90_ns &&
                ks->p90_ns <= ks->max_ns);
    assert_true(ks->samples > 0);
    if (k)
      assert_true(ks->total_ns <= mprof_join_kernel(j, k - 1)->total_ns);
  }
  assert_int_equal(launches, 200000);
  assert_int_equal(total, mprof_join_kernel_time(j));
  assert_true(fabs(share - 1.0) < 1e-9);
  mprof_join_free(j);
  mprof_trace_free(t);
  unlink(path);
}

/* The sampled instructions as columns equal the element accessors, row
 * for row, and a wrong array or column is refused with a message. */
static void test_pc_columns(void **state) {
  (void)state;
  const char *path = test_path("synth-columns.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 2000;
  opts.kernels = 5;
  opts.devices = 2;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(&j, t, NULL), 0);
  size_t rows = mprof_join_pc_rows(j),
         reason_rows = mprof_join_pc_reason_rows(j);
  assert_true(rows > 10 && reason_rows >= rows);
  uint32_t *kernel = calloc(rows, 4), *offset = calloc(rows, 4),
           *fn = calloc(rows, 4), *line = calloc(rows, 4);
  uint64_t *samples = calloc(rows, 8), *not_issued = calloc(rows, 8),
           *crc = calloc(rows, 8);
  const mprof_sass_instruction **insn = calloc(rows, sizeof *insn);
  assert_int_equal(
      mprof_join_pc_column(kernel, rows, j, MPROF_PC_COLUMN_KERNEL), 0);
  assert_int_equal(
      mprof_join_pc_column(offset, rows, j, MPROF_PC_COLUMN_OFFSET), 0);
  assert_int_equal(
      mprof_join_pc_column(fn, rows, j, MPROF_PC_COLUMN_FUNCTION_INDEX), 0);
  assert_int_equal(mprof_join_pc_column(line, rows, j, MPROF_PC_COLUMN_LINE),
                   0);
  assert_int_equal(
      mprof_join_pc_column(samples, rows, j, MPROF_PC_COLUMN_SAMPLES), 0);
  assert_int_equal(
      mprof_join_pc_column(not_issued, rows, j, MPROF_PC_COLUMN_NOT_ISSUED), 0);
  assert_int_equal(
      mprof_join_pc_column(crc, rows, j, MPROF_PC_COLUMN_CUBIN_CRC), 0);
  assert_int_equal(
      mprof_join_pc_column((void *)insn, rows, j, MPROF_PC_COLUMN_INSTRUCTION),
      0);
  uint64_t *r_row = calloc(reason_rows, 8), *r_samples = calloc(reason_rows, 8);
  uint32_t *r_reason = calloc(reason_rows, 4);
  assert_int_equal(mprof_join_pc_reason_column(r_row, reason_rows, j,
                                               MPROF_PC_REASON_COLUMN_ROW),
                   0);
  assert_int_equal(mprof_join_pc_reason_column(r_reason, reason_rows, j,
                                               MPROF_PC_REASON_COLUMN_REASON),
                   0);
  assert_int_equal(mprof_join_pc_reason_column(r_samples, reason_rows, j,
                                               MPROF_PC_REASON_COLUMN_SAMPLES),
                   0);
  size_t row = 0, rrow = 0;
  uint64_t total = 0;
  for (size_t k = 0; k < mprof_join_kernel_count(j); k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
    for (size_t i = 0; i < ks->pc_count; i++, row++) {
      const mprof_pc_stats *pc = mprof_join_pc(j, k, i);
      assert_int_equal(kernel[row], k);
      assert_int_equal(offset[row], pc->offset);
      assert_int_equal(fn[row], pc->function_index);
      assert_int_equal(samples[row], pc->samples);
      assert_int_equal(not_issued[row], pc->not_issued);
      assert_int_equal(crc[row], pc->cubin_crc);
      assert_null(insn[row]); /* no sidecar */
      assert_int_equal(line[row], 0);
      total += samples[row];
      for (size_t r = 0; r < pc->reason_count; r++, rrow++) {
        assert_int_equal(r_row[rrow], row);
        assert_int_equal(r_reason[rrow], mprof_pc_stats_reason(pc, r)->reason);
        assert_int_equal(r_samples[rrow],
                         mprof_pc_stats_reason(pc, r)->samples);
      }
    }
  }
  assert_int_equal(row, rows);
  assert_int_equal(rrow, reason_rows);
  assert_int_equal(total, mprof_join_sample_total(j));

  /* Refused, with nothing written: a wrong count, an unknown column. */
  kernel[0] = 12345;
  assert_int_equal(
      mprof_join_pc_column(kernel, rows - 1, j, MPROF_PC_COLUMN_KERNEL),
      MPROF_EINVAL);
  char want[128];
  snprintf(want, sizeof want,
           "pc column: the array has %zu elements, the join %zu rows", rows - 1,
           rows);
  assert_string_equal(mprof_error_last(), want);
  assert_int_equal(kernel[0], 12345);
  assert_int_equal(
      mprof_join_pc_column(kernel, rows, j, MPROF_PC_COLUMN_COUNT_),
      MPROF_EINVAL);
  assert_string_equal(
      mprof_error_last(),
      "pc column 8 is not known (this mprof has columns 0 to 7)");
  assert_int_equal(mprof_join_pc_reason_column(r_row, reason_rows, j, 3),
                   MPROF_EINVAL);
  assert_int_equal(mprof_join_pc_column(NULL, rows, j, 0), MPROF_EINVAL);
  assert_int_equal(mprof_join_pc_column(kernel, rows, NULL, 0), MPROF_EINVAL);
  assert_int_equal(mprof_join_pc_rows(NULL), 0);
  free(kernel), free(offset), free(fn), free(line), free(samples);
  free(not_issued), free(crc), free(insn), free(r_row), free(r_samples);
  free(r_reason);
  mprof_join_free(j);
  mprof_trace_free(t);
  unlink(path);
}

/* mprof's own kernels (the span header's timer probe) rank after the
 * program's, however long they ran: index 0 is the program's kernel, as in
 * samples/gemm_source.mprof, where the probe took 68% of the GPU time. */
static void test_mprofs_own_kernels_last(void **state) {
  (void)state;
  const char *path = test_path("own.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d0 = tt_device(w, 0);
  uint32_t s0 = tt_stream(w, d0, 7);
  uint32_t probe = tt_kernel(w, "_Z32mprof__source_timer_probe_kernelPyi",
                             "mprof__source_timer_probe_kernel(unsigned long "
                             "long*, int)",
                             d0, 20, 0, 0xabc);
  uint32_t named = tt_kernel(w, "mprof__other", "", d0, 20, 0, 0xabc);
  uint32_t gemm = tt_kernel(w, "_Z4gemmPf", "gemm(float*)", d0, 32, 0, 0xabc);
  /* Not mprof's: the identifier does not start with mprof__. */
  uint32_t lookalike =
      tt_kernel(w, "_Z9my_mprof__v", "my_mprof_(void)", d0, 32, 0, 0xabc);
  tt_launch(w, tt_shape(w, probe, 1, 32, 0), s0, 0, 5000);
  tt_launch(w, tt_shape(w, named, 1, 32, 0), s0, 5000, 8000);
  tt_launch(w, tt_shape(w, gemm, 64, 256, 0), s0, 8000, 9000);
  tt_launch(w, tt_shape(w, lookalike, 64, 256, 0), s0, 9000, 9500);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  mprof_join *j;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_join_build(&j, t, NULL), 0);
  assert_int_equal(mprof_join_kernel_count(j), 4);
  assert_string_equal(mprof_join_kernel(j, 0)->name, "gemm(float*)");
  assert_int_equal(mprof_join_kernel(j, 0)->flags & MPROF_KERNEL_MPROF_OWN, 0);
  assert_string_equal(mprof_join_kernel(j, 1)->name, "my_mprof_(void)");
  assert_int_equal(mprof_join_kernel(j, 1)->flags & MPROF_KERNEL_MPROF_OWN, 0);
  assert_string_equal(mprof_join_kernel(j, 2)->mangled,
                      "_Z32mprof__source_timer_probe_kernelPyi");
  assert_true(mprof_join_kernel(j, 2)->flags & MPROF_KERNEL_MPROF_OWN);
  assert_string_equal(mprof_join_kernel(j, 3)->mangled, "mprof__other");
  assert_true(mprof_join_kernel(j, 3)->flags & MPROF_KERNEL_MPROF_OWN);
  /* Its time is still the GPU's: shares are of all kernel time. */
  assert_true(fabs(mprof_join_kernel(j, 2)->share - 5000.0 / 9500) < 1e-9);
  mprof_join_free(j);
  mprof_trace_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_statistics_per_device),
      cmocka_unit_test(test_unsorted_launches),
      cmocka_unit_test(test_samples_join_by_name),
      cmocka_unit_test(test_sidecar_gives_sass_and_lines),
      cmocka_unit_test(test_samples_from_sidecar),
      cmocka_unit_test(test_percentiles_match_sorting),
      cmocka_unit_test(test_empty_trace_and_bad_arguments),
      cmocka_unit_test(test_synthetic_totals),
      cmocka_unit_test(test_pc_columns),
      cmocka_unit_test(test_mprofs_own_kernels_last),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
