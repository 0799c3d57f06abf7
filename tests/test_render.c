/*
 * mprof tests — mprof-render's arithmetic: time <-> pixel mapping, zoom
 * and pan, level of detail, hit-testing, and the model the views draw from.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "test_render_fixture.h"
#include "mprof/synth.h"

/* ---- time <-> pixel ------------------------------------------------------
 */

static void test_time_to_pixel_is_exact_on_an_epoch_clock(void **state) {
  (void)state;
  mprof_render_timemap map;
  /* 1 ns per pixel, 1000 px from x = 100, at a clock where doubles step by
   * 256 ns: integers first keeps every ns. */
  mprof_render_timemap_init(&map, FIX_T0, FIX_T0 + 1000, 100, 1000);
  assert_true(mprof_render_time_to_x(&map, FIX_T0) == 100.0);
  assert_true(mprof_render_time_to_x(&map, FIX_T0 + 1) == 101.0);
  assert_true(mprof_render_time_to_x(&map, FIX_T0 + 999) == 1099.0);
  assert_true(mprof_render_time_to_x(&map, FIX_T0 - 5) == 95.0);
  for (int64_t t = 0; t <= 1000; t += 7)
    assert_true(mprof_render_x_to_time(
                    &map, mprof_render_time_to_x(&map, FIX_T0 + t)) ==
                FIX_T0 + t);
  assert_true(mprof_render_x_to_time(&map, 100.4) == FIX_T0);
  assert_true(mprof_render_x_to_time(&map, 100.6) == FIX_T0 + 1);
  assert_true(mprof_render_ns_per_px(&map) == 1.0);
  /* A second over 2000 px: 500 us per pixel. */
  mprof_render_timemap_init(&map, FIX_T0, FIX_T0 + 1000000000, 0, 2000);
  assert_true(mprof_render_time_to_x(&map, FIX_T0 + 250000000) == 500.0);
  assert_true(mprof_render_x_to_time(&map, 1500) == FIX_T0 + 750000000);
}

static void test_tick_steps_are_1_2_5(void **state) {
  (void)state;
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, 0, 1000000, 0, 1000); /* 1000 ns/px */
  assert_true(mprof_render_tick_step(&map, 100) == 100000);
  assert_true(mprof_render_tick_step(&map, 150) == 200000);
  assert_true(mprof_render_tick_step(&map, 300) == 500000);
  assert_true(mprof_render_tick_step(&map, 501) == 1000000);
  mprof_render_timemap_init(&map, 0, 10, 0, 1000); /* 0.01 ns/px */
  assert_true(mprof_render_tick_step(&map, 100) == 1);
}

static mprof_render_limits limits(int64_t min, int64_t max, int64_t span) {
  mprof_render_limits l = {min, max, span};
  return l;
}

static void test_zoom_keeps_the_time_under_the_pointer(void **state) {
  (void)state;
  mprof_render_limits l = limits(FIX_T0, FIX_T0 + 1000000, 20);
  mprof_render_view v;
  memset(&v, 0, sizeof v);
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 1000000;
  /* Pointer at 30% of the width: that time stays at 30%. */
  int64_t pivot = v.start_ns + 300000;
  mprof_render_view_zoom(&v, &l, 0.3, 4.0);
  assert_true(v.end_ns - v.start_ns == 250000);
  assert_true(v.start_ns + 75000 == pivot);
  mprof_render_view_zoom(&v, &l, 0.3, 0.25);
  assert_true(v.start_ns == FIX_T0);
  assert_true(v.end_ns == FIX_T0 + 1000000);
  /* Zooming far in stops at the narrowest span, around the pointer. */
  mprof_render_view_zoom(&v, &l, 0.5, 1e9);
  assert_true(v.end_ns - v.start_ns == 20);
  assert_true(v.start_ns == FIX_T0 + 500000 - 10);
  /* Zooming far out shows everything, and no more. */
  mprof_render_view_zoom(&v, &l, 0.9, 1e-9);
  assert_true(v.start_ns == FIX_T0 && v.end_ns == FIX_T0 + 1000000);
}

static void test_pan_and_scroll_stay_inside_the_limits(void **state) {
  (void)state;
  mprof_render_limits l = limits(0, 1000, 10);
  mprof_render_view v;
  memset(&v, 0, sizeof v);
  v.start_ns = 100;
  v.end_ns = 300;
  mprof_render_view_pan(&v, &l, 0.5);
  assert_true(v.start_ns == 200 && v.end_ns == 400);
  mprof_render_view_pan(&v, &l, -10);
  assert_true(v.start_ns == 0 && v.end_ns == 200);
  mprof_render_view_pan(&v, &l, 100);
  assert_true(v.start_ns == 800 && v.end_ns == 1000);
  mprof_render_view_scroll_to(&v, &l, 500);
  assert_true(v.start_ns == 500 && v.end_ns == 700);
  v.start_ns = 5000; /* out of range entirely */
  v.end_ns = 2;
  mprof_render_view_clamp(&v, &l);
  assert_true(v.start_ns >= 0 && v.end_ns <= 1000 &&
              v.end_ns - v.start_ns >= 10);
}

static void test_row_zoom_keeps_the_row_under_the_pointer(void **state) {
  (void)state;
  mprof_render_view v;
  memset(&v, 0, sizeof v);
  v.row_height = 20;
  v.scroll_y = 100;
  /* Content at 100 + 50 = 150 px (row 7.5) stays under the pointer. */
  mprof_render_view_zoom_rows(&v, 2.0, 50);
  assert_true(v.row_height == 40);
  assert_true(fabs(v.scroll_y + 50 - 300) < 1e-9);
  mprof_render_view_zoom_rows(&v, 1e6, 0);
  assert_true(v.row_height == MPROF_RENDER_ROW_MAX);
  mprof_render_view_zoom_rows(&v, 1e-6, 0);
  assert_true(v.row_height == MPROF_RENDER_ROW_MIN);
}

/* ---- level of detail ------------------------------------------------------
 */

typedef struct collected {
  mprof_render_box boxes[65536];
  size_t count;
} collected;

static void collect(const mprof_render_box *box, void *data) {
  collected *c = (collected *)data;
  if (c->count < 65536)
    c->boxes[c->count++] = *box;
}

static collected *visit(const mprof_render_model *m, uint32_t stream,
                        int64_t start, int64_t end, double width) {
  static collected c;
  c.count = 0;
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, FIX_T0 + start, FIX_T0 + end, 0, width);
  size_t n = mprof_render_lod_visit(mprof_render_model_trace(m), stream, &map,
                                    2.0, NULL, collect, &c);
  assert_int_equal(n, c.count);
  return &c;
}

static void
test_lod_draws_wide_launches_alone_and_merges_narrow_ones(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("lod.mprof", 1);
  /* 0..50 us over 1000 px: 50 ns per px. Launches at 1000..2000 and
   * 5000..9000 are 20 and 80 px wide: their own boxes, at exact pixels. */
  collected *c = visit(m, 0, 0, 50000, 1000);
  assert_int_equal(c->count, 3);
  assert_true(c->boxes[0].x0 == 20.0 && c->boxes[0].x1 == 40.0);
  assert_true(c->boxes[1].x0 == 100.0 && c->boxes[1].x1 == 180.0);
  assert_true(c->boxes[2].x0 == 200.0); /* 10000..30000 */
  for (size_t i = 0; i < c->count; i++) {
    assert_false(c->boxes[i].merged);
    assert_int_equal(c->boxes[i].last - c->boxes[i].first, 1);
  }
  /* The 10000 launches of 10 ns (every 20 ns) over 100 px: 2000 ns per
   * pixel, 100 launches per pixel. They merge, and the boxes cover them
   * all without a gap or an overlap. */
  c = visit(m, 0, 100000, 300000, 100);
  assert_true(c->count >= 1 && c->count <= 2 * 100);
  size_t covered = 0, expect_first = c->boxes[0].first;
  for (size_t i = 0; i < c->count; i++) {
    assert_int_equal(c->boxes[i].first, expect_first);
    expect_first = c->boxes[i].last;
    covered += c->boxes[i].last - c->boxes[i].first;
  }
  assert_int_equal(covered, FIX_TINY);
  assert_true(c->boxes[0].merged);
  /* Zoomed in to 0.5 ns per pixel, each of them is 20 px: no merging. */
  c = visit(m, 0, 100000, 100400, 800);
  assert_int_equal(c->count, 20);
  for (size_t i = 0; i < c->count; i++) {
    assert_false(c->boxes[i].merged);
    assert_true(fabs(c->boxes[i].x0 - 40.0 * (double)i) < 1e-9);
  }
  mprof_render_model_free(m);
}

static void test_lod_cost_follows_pixels_not_launches(void **state) {
  (void)state;
  /* 200000 launches on 2 streams; the whole trace and ever closer zooms.
   * Boxes per row stay under ~2 per pixel however many launches are in
   * view, and the first and last launches in view are always reached. */
  const char *path = test_path("lodcost.mprof");
  mprof_synth_options opts;
  mprof_synth_options_init(&opts, MPROF_SYNTH_OPTIONS_VERSION);
  opts.launches = 200000;
  opts.kernels = 6;
  opts.pcs_per_kernel = 0;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_render_model *m;
  assert_int_equal(mprof_render_model_open(&m, path, NULL), 0);
  const mprof_trace *t = mprof_render_model_trace(m);
  int64_t start, end;
  mprof_render_model_bounds(m, &start, &end);
  const double width = 1500;
  static collected c;
  for (int64_t span = end - start; span > 1000; span /= 7) {
    int64_t from = start + (end - start - span) / 3;
    mprof_render_timemap map;
    mprof_render_timemap_init(&map, from, from + span, 0, width);
    for (uint32_t s = 0; s < 2; s++) {
      c.count = 0;
      size_t n = mprof_render_lod_visit(t, s, &map, 2.0, NULL, collect, &c);
      assert_true(n <= 2 * width + 2);
      size_t first, last;
      assert_int_equal(mprof_trace_stream_find(t, &first, &last, s,
                                               (uint64_t)from,
                                               (uint64_t)(from + span)),
                       0);
      if (first < last) {
        assert_int_equal(c.boxes[0].first, first);
        assert_int_equal(c.boxes[c.count - 1].last, last);
      }
    }
  }
  mprof_render_model_free(m);
}

/* ---- the model -----------------------------------------------------------
 */

static void check_k0_samples(const mprof_render_model *m) {
  const mprof_render_kernel *k = mprof_render_kernel_at(m, 0);
  assert_int_equal(k->stats->samples, 1050); /* the not-issued 500 are not in */
  assert_int_equal(k->pc_count, 4);
  assert_int_equal(k->pcs[0].offset, 0x10);
  assert_int_equal(k->pcs[0].samples, 600);
  assert_int_equal(k->pcs[0].family[MPROF_FAM_MEMORY_LATENCY], 600);
  assert_int_equal(k->pcs[0].category, MPROF_CAT_MEMORY);
  assert_string_equal(k->pcs[0].insn->opcode, "LDG.E.128");
  assert_int_equal(k->pcs[0].insn->line, 12);
  assert_int_equal(k->pcs[1].category, MPROF_CAT_ARITH);
  assert_int_equal(k->pcs[2].category, MPROF_CAT_SYNC);
  assert_int_equal(k->pcs[3].category, MPROF_CAT_TENSOR);
  assert_int_equal(k->family[MPROF_FAM_COMPUTE], 300);
  assert_int_equal(k->family[MPROF_FAM_SYNC], 100);
  assert_int_equal(k->family[MPROF_FAM_ISSUED], 50);
  /* Hottest first. */
  assert_int_equal(k->hot[0], 0);
  assert_int_equal(k->hot[1], 1);
  assert_int_equal(k->hot[2], 2);
  assert_int_equal(k->hot[3], 3);
  /* The not-issued reason is in the table, marked, and counted per PC. */
  int found = 0;
  assert_int_equal(k->pcs[0].stats->not_issued, 500);
  for (size_t r = 0; r < k->pcs[0].stats->reason_count; r++) {
    const mprof_reason_samples *rs = &k->pcs[0].stats->reasons[r];
    const mprof_render_reason *reason = mprof_render_reason_at(m, rs->reason);
    if (strcmp(reason->name, "long_scoreboard_not_issued") == 0) {
      found = 1;
      assert_true(reason->not_issued);
      assert_int_equal(rs->samples, 500);
    }
  }
  assert_true(found);
  /* The model is libmprof's join, kernel for kernel and reason for reason,
   * and each kernel carries the diagnosis `mprof summary` prints. */
  const mprof_join *join = mprof_render_model_join(m);
  assert_int_equal(mprof_render_kernel_count(m), mprof_join_kernel_count(join));
  for (size_t i = 0; i < mprof_render_kernel_count(m); i++) {
    assert_ptr_equal(mprof_render_kernel_at(m, i)->stats,
                     mprof_join_kernel(join, i));
    assert_ptr_equal(
        mprof_render_kernel_at(m, i)->diagnosis,
        mprof_diagnosis_kernel(mprof_render_model_diagnosis(m), i));
  }
  assert_int_equal(mprof_render_reason_count(m), mprof_join_reason_count(join));
  for (size_t r = 0; r < mprof_render_reason_count(m); r++)
    assert_string_equal(mprof_render_reason_at(m, r)->name,
                        mprof_join_reason(join, r)->name);
}

static void test_model_kernels_samples_and_sass(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("model.mprof", 1);
  assert_int_equal(mprof_render_kernel_count(m), 2);
  const mprof_render_kernel *k0 = mprof_render_kernel_at(m, 0);
  const mprof_render_kernel *k1 = mprof_render_kernel_at(m, 1);
  assert_string_equal(k0->stats->mangled, FIX_K0);
  assert_string_equal(k0->name, "membound(float*, float const*, int)");
  assert_int_equal(k0->stats->launches, 3 + FIX_TINY);
  assert_int_equal(k0->stats->total_ns, 205000);
  assert_int_equal(k0->stats->min_ns, 10);
  assert_int_equal(k0->stats->max_ns, 100000);
  assert_int_equal(k1->stats->total_ns, 65000);
  assert_true(fabs(k0->stats->share - 205000.0 / 270000.0) < 1e-12);
  assert_int_not_equal(k0->color, k1->color);
  check_k0_samples(m);
  assert_int_equal(k1->stats->samples, 200);
  assert_null(k1->pcs[0].insn); /* no SASS for K1 in the sidecar */
  /* Launch -> kernel. */
  assert_int_equal(mprof_render_launch_kernel(m, 0), 0);
  assert_int_equal(mprof_render_launch_kernel(m, 2), 1);
  /* Kernel names: mangled, demangled, up to the arguments, a prefix, a
   * part. */
  assert_int_equal(mprof_render_kernel_find(m, FIX_K1), 1);
  assert_int_equal(mprof_render_kernel_find(m, "compute(float*, int)"), 1);
  assert_int_equal(mprof_render_kernel_find(m, "membound"), 0);
  assert_int_equal(mprof_render_kernel_find(m, "mput"), 1);
  assert_int_equal(mprof_render_kernel_find(m, "nosuchkernel"), -1);
  /* Rows: the device band, then streams 7 and 8. */
  assert_int_equal(mprof_render_row_count(m), 3);
  assert_int_equal(mprof_render_row_at(m, 0)->kind, MPROF_ROW_DEVICE);
  assert_string_equal(mprof_render_row_at(m, 1)->label, "stream 7");
  assert_string_equal(mprof_render_row_at(m, 2)->label, "stream 8");
  assert_string_equal(mprof_render_model_note(m), "");
  mprof_render_model_free(m);
}

/* The Summary (libmprof's diagnosis, what `mprof summary` prints) and the
 * Raster lanes put every stall reason in the same place: the lane of a
 * reason is its dimension in the Summary (the issuing warp, `selected`,
 * has a lane of its own; a reason outside the table is scheduling), and
 * each lane holds the samples the Summary counts for its dimension. */
static void test_summary_and_raster_agree(void **state) {
  (void)state;
  const char *trace = test_path("agree.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.seed = 11;
  opts.launches = 400;
  opts.kernels = 8;
  assert_int_equal(mprof_synth_write(trace, &opts), 0);
  mprof_render_model *m;
  if (mprof_render_model_open(&m, trace, NULL))
    fail_msg("%s", mprof_render_error());
  size_t checked = 0;
  for (size_t i = 0; i < mprof_render_kernel_count(m); i++) {
    const mprof_render_kernel *k = mprof_render_kernel_at(m, i);
    const mprof_kernel_diagnosis *d = k->diagnosis;
    assert_non_null(d);
    uint64_t lanes[MPROF_FAM_COUNT] = {0};
    for (size_t s = 0; s < d->stall_count; s++) {
      const mprof_reason_share *st = &d->stalls[s];
      int lane = mprof_render_reason_family(st->reason);
      int want = strcmp(st->reason, "selected") == 0 ? MPROF_FAM_ISSUED
                 : st->dimension == MPROF_DIM_NONE   ? MPROF_FAM_SCHEDULING
                                                     : (int)st->dimension;
      if (lane != want)
        fail_msg("%s: Raster lane %d, Summary dimension %u", st->reason, lane,
                 st->dimension);
      lanes[lane] += st->samples;
      checked++;
    }
    for (int f = 0; f < MPROF_FAM_COUNT; f++)
      assert_int_equal(k->family[f], lanes[f]);
  }
  assert_true(checked > 20);
  mprof_render_model_free(m);
}

static void test_model_takes_samples_from_the_sidecar(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("sidecar-samples.mprof", 0);
  check_k0_samples(m);
  assert_int_equal(mprof_render_kernel_at(m, 1)->stats->samples, 0);
  mprof_render_model_free(m);
}

static void test_model_errors_name_the_file(void **state) {
  (void)state;
  mprof_render_model *m = (mprof_render_model *)1;
  const char *missing = test_path("missing.mprof");
  assert_int_equal(mprof_render_model_open(&m, missing, NULL), -1);
  assert_null(m);
  assert_non_null(strstr(mprof_render_error(), missing));
  assert_non_null(strstr(mprof_render_error(), "No such file"));
  /* A truncated trace. */
  const char *path = test_path("cut.mprof");
  fix_write_trace(path, 1);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  assert_int_equal(test_write_file(path, data, size / 2), 0);
  free(data);
  assert_int_equal(mprof_render_model_open(&m, path, NULL), -1);
  assert_non_null(strstr(mprof_render_error(), path));
  /* A broken sidecar named by the caller is refused with the line
   * `summary` prints for it, which the window and `view --render` show. */
  char trace[1024], sidecar[1100];
  snprintf(trace, sizeof trace, "%s", test_path("badsidecar.mprof"));
  snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace);
  fix_write_trace(trace, 1);
  assert_int_equal(test_write_file(sidecar, "{\"format\": 3", 12), 0);
  assert_int_equal(mprof_render_model_open(&m, trace, sidecar), -1);
  assert_null(m);
  char render_message[1024];
  snprintf(render_message, sizeof render_message, "%s", mprof_render_error());
  mprof_sidecar *sc = NULL;
  assert_int_not_equal(mprof_sidecar_load(&sc, sidecar), 0);
  assert_string_equal(render_message, mprof_error_last());
  assert_non_null(strstr(render_message, sidecar));
  assert_non_null(strstr(render_message, "--no-sidecar"));
  /* The trace's own, broken: the trace opens without it, and the model's
   * note and the diagnosis's no_sidecar note give that line. */
  assert_int_equal(mprof_render_model_open(&m, trace, NULL), 0);
  assert_null(mprof_join_sidecar(mprof_render_model_join(m)));
  assert_non_null(strstr(mprof_render_model_note(m), render_message));
  const mprof_diagnosis *d = mprof_render_model_diagnosis(m);
  size_t found = 0;
  for (size_t i = 0; i < mprof_diagnosis_note_count(d); i++)
    if (strcmp(mprof_diagnosis_note(d, i)->key, "no_sidecar") == 0) {
      assert_non_null(strstr(mprof_diagnosis_note(d, i)->text, render_message));
      found++;
    }
  assert_int_equal(found, 1);
  mprof_render_model_free(m);
  /* A missing sidecar, with samples in the trace: noted. */
  remove(sidecar);
  assert_int_equal(mprof_render_model_open(&m, trace, NULL), 0);
  assert_non_null(strstr(mprof_render_model_note(m), "no SASS"));
  mprof_render_model_free(m);
}

static void test_classification(void **state) {
  (void)state;
  assert_int_equal(mprof_render_opcode_category("LDG.E.128.CONSTANT"),
                   MPROF_CAT_MEMORY);
  assert_int_equal(mprof_render_opcode_category("STS.128"), MPROF_CAT_MEMORY);
  assert_int_equal(mprof_render_opcode_category("ULDC.64"), MPROF_CAT_MEMORY);
  assert_int_equal(mprof_render_opcode_category("UTMALDG.2D"),
                   MPROF_CAT_MEMORY);
  assert_int_equal(mprof_render_opcode_category("ATOMG.E.ADD"),
                   MPROF_CAT_MEMORY);
  assert_int_equal(mprof_render_opcode_category("FFMA"), MPROF_CAT_ARITH);
  assert_int_equal(mprof_render_opcode_category("UIADD3"), MPROF_CAT_ARITH);
  assert_int_equal(mprof_render_opcode_category("IMAD.WIDE.U32"),
                   MPROF_CAT_ARITH);
  assert_int_equal(mprof_render_opcode_category("HGMMA.64x128x16.F32"),
                   MPROF_CAT_TENSOR);
  assert_int_equal(mprof_render_opcode_category("HMMA.16816.F32.BF16"),
                   MPROF_CAT_TENSOR);
  assert_int_equal(mprof_render_opcode_category("BRA"), MPROF_CAT_CONTROL);
  assert_int_equal(mprof_render_opcode_category("EXIT"), MPROF_CAT_CONTROL);
  assert_int_equal(mprof_render_opcode_category("BAR.SYNC.DEFER_BLOCKING"),
                   MPROF_CAT_SYNC);
  assert_int_equal(mprof_render_opcode_category("MEMBAR.SC.GPU"),
                   MPROF_CAT_SYNC);
  assert_int_equal(mprof_render_opcode_category("S2R"), MPROF_CAT_OTHER);
  assert_int_equal(mprof_render_opcode_category(""), MPROF_CAT_OTHER);
  assert_int_equal(mprof_render_opcode_category(NULL), MPROF_CAT_OTHER);
  assert_int_equal(mprof_render_reason_family(
                       "smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
                   MPROF_FAM_MEMORY_LATENCY);
  assert_int_equal(mprof_render_reason_family("lg_throttle_not_issued"),
                   MPROF_FAM_MEMORY_THROUGHPUT);
  assert_int_equal(mprof_render_reason_family("mio_throttle"), MPROF_FAM_MIO);
  assert_int_equal(mprof_render_reason_family("wait"), MPROF_FAM_COMPUTE);
  assert_int_equal(mprof_render_reason_family("membar"), MPROF_FAM_SYNC);
  assert_int_equal(mprof_render_reason_family("imc_miss"),
                   MPROF_FAM_FETCH_BRANCH);
  assert_int_equal(mprof_render_reason_family("not_selected"),
                   MPROF_FAM_COMPUTE);
  assert_int_equal(mprof_render_reason_family("selected"), MPROF_FAM_ISSUED);
  /* The lanes are libmprof's stall-reason table, for every reason. */
  for (size_t i = 0; i < mprof_stall_reason_info_count(); i++) {
    const mprof_stall_reason_info *row = mprof_stall_reason_info_at(i);
    assert_int_equal(mprof_render_reason_family(row->name), (int)row->family);
    assert_int_equal(mprof_render_reason_family(row->not_issued),
                     (int)row->family);
  }
  assert_int_equal(mprof_render_reason_family("some_future_reason"),
                   MPROF_FAM_SCHEDULING);
  assert_int_equal(mprof_render_tab_parse("Hotspots"), MPROF_RENDER_HOTSPOTS);
  assert_int_equal(mprof_render_tab_parse("mega"), MPROF_RENDER_MEGA);
  assert_int_equal(mprof_render_tab_parse("Density"), MPROF_RENDER_DENSITY);
  assert_int_equal(mprof_render_tab_parse("bogus"), -1);
  for (int t = 0; t < MPROF_RENDER_TAB_COUNT; t++)
    assert_int_equal(mprof_render_tab_parse(mprof_render_tab_key(t)), t);
}

/* ---- hit-testing -----------------------------------------------------------
 */

#define W 1168.0 /* 1000 px of time after the 168 px gutter */
#define H 400.0

static mprof_render_view trace_view(const mprof_render_model *m, int64_t start,
                                    int64_t end) {
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = FIX_T0 + start;
  v.end_ns = FIX_T0 + end;
  return v;
}

/* y of the middle of Trace row @p row. */
static double row_middle(const mprof_render_model *m,
                         const mprof_render_view *v, size_t row) {
  double h;
  double top = mprof_render_row_top(m, v, row, &h);
  return MPROF_RENDER_RULER + top + h / 2 - v->scroll_y;
}

static void test_hit_trace(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("hit.mprof", 1);
  mprof_render_view v = trace_view(m, 0, 50000); /* 50 ns/px */
  mprof_render_hit hit;
  double y = row_middle(m, &v, 1);
  /* The launch at 5000..9000 ns: x 100..180 of the time area. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H,
                        MPROF_RENDER_GUTTER + 140, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LAUNCH);
  assert_int_equal(hit.launch, 1);
  assert_int_equal(hit.kernel, 0);
  assert_int_equal(hit.row, 1);
  assert_true(hit.time_ns == FIX_T0 + 7000);
  char text[1024];
  assert_true(mprof_render_hit_describe(m, &hit, text, sizeof text) > 0);
  assert_non_null(strstr(text, "membound"));
  /* Its duration, spelled as `mprof summary` spells durations, its start
   * and end, registers and theoretical occupancy on its GPU. */
  assert_non_null(strstr(text, "4 us from +"));
  assert_non_null(strstr(text, " to +"));
  assert_non_null(strstr(text, "32 registers, occupancy 100% (registers)"));
  /* The stream-8 launch at 3000..8000: x 60..160 on row 2. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H,
                        MPROF_RENDER_GUTTER + 61, row_middle(m, &v, 2), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LAUNCH);
  assert_int_equal(hit.kernel, 1);
  assert_int_equal(hit.launch, 3 + FIX_TINY + 1);
  /* The memcpy at 2500..4000: x 50..80, between launches. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H,
                        MPROF_RENDER_GUTTER + 65, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_MEMOP);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  /* Kind, size and bandwidth: 1 MiB in 1.5 us. */
  assert_non_null(strstr(text, "memcpy HtoD 1 MiB 699 GB/s"));
  /* Empty row, the gutter, the ruler, the device band. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H,
                        MPROF_RENDER_GUTTER + 90, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_ROW);
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 20, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LABEL);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_string_equal(text, "stream 7: 10,004 launches");
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 700, 5, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_RULER);
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 700,
                        row_middle(m, &v, 0), &hit);
  assert_int_equal(hit.kind, MPROF_HIT_ROW);
  assert_int_equal(hit.row, 0);
  /* Below the last row, outside the drawing. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 700, H - 2, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_NONE);
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, -1, 50, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_NONE);
  /* Scrolled down by one row: the same y finds the next row. */
  v.scroll_y = MPROF_RENDER_DEVICE_ROW;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 20, y, &hit);
  assert_int_equal(hit.row, 2);

  /* The tiny launches over 1000 px from 100 us to 300 us: merged runs
   * that say how many launches they hold. */
  v = trace_view(m, 100000, 300000);
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H,
                        MPROF_RENDER_GUTTER + 500, y, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_MERGED);
  assert_true(hit.last - hit.first > 1);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "launches from"));
  assert_non_null(strstr(text, "zoom in"));
  mprof_render_model_free(m);
}

static void test_hit_inset_and_panels(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("hitpanels.mprof", 1);
  /* The 100 us launch of K0 at 400..500 us fills the view; with tall rows
   * the inset lists its hottest instructions, one per line. */
  mprof_render_view v = trace_view(m, 390000, 510000);
  v.row_height = 120;
  v.kernel = 0;
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 1, &h);
  mprof_render_hit hit;
  /* Line 0 starts 2 (pad) + 2 (panel) + 2 px below the row's top. */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 600, top + 2 + 6 + 5,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  assert_int_equal(hit.pc, 0); /* 0x10, the hottest */
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 600,
                        top + 2 + 6 + 12 + 5, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  assert_int_equal(hit.pc, 1);
  char text[1024];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "0x0020"));
  assert_non_null(strstr(text, "FFMA"));
  assert_non_null(strstr(text, "28.6% of samples (300)"));
  assert_non_null(strstr(text, "k.cu:13"));
  /* Another kernel selected: the same place is just the launch. */
  v.kernel = 1;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, 600, top + 13, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_LAUNCH);

  /* Hotspots: rows in rank order under a fixed header. */
  v.kernel = 0;
  v.scroll_y = 0;
  int found_first = -1;
  for (double y = 0; y < H; y += 2) {
    mprof_render_hit_test(m, &v, MPROF_RENDER_HOTSPOTS, W, H, 300, y, &hit);
    if (hit.kind == MPROF_HIT_PC && found_first < 0) {
      found_first = (int)y;
      assert_int_equal(hit.pc, 0);
    }
  }
  assert_true(found_first > 0);
  mprof_render_hit_test(m, &v, MPROF_RENDER_HOTSPOTS, W, H, 300,
                        found_first + 22 * 3 + 1, &hit);
  assert_int_equal(hit.pc, 3); /* 4th hottest: 0x40 */
  mprof_render_hit_test(m, &v, MPROF_RENDER_HOTSPOTS, W, H, 300,
                        found_first + 22 * 4 + 1, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_NONE);

  /* Flame: 0x10 takes the first 600/1050 of the width in the memory lane;
   * Raster: its samples are all in the memory-latency lane. */
  double mid_y_flame = -1, mid_y_raster = -1;
  for (double y = 0; y < H && (mid_y_flame < 0 || mid_y_raster < 0); y++) {
    mprof_render_hit_test(m, &v, MPROF_RENDER_FLAME, W, H, 400, y, &hit);
    if (mid_y_flame < 0 && hit.kind == MPROF_HIT_PC)
      mid_y_flame = y;
    mprof_render_hit_test(m, &v, MPROF_RENDER_RASTER, W, H, 400, y, &hit);
    if (mid_y_raster < 0 && hit.kind == MPROF_HIT_PC)
      mid_y_raster = y;
  }
  mprof_render_hit_test(m, &v, MPROF_RENDER_FLAME, W, H, 400, mid_y_flame + 5,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_PC);
  assert_int_equal(hit.lane, MPROF_CAT_MEMORY);
  assert_int_equal(hit.pc, 0);
  mprof_render_hit_test(m, &v, MPROF_RENDER_RASTER, W, H, 400, mid_y_raster + 5,
                        &hit);
  assert_int_equal(hit.lane, MPROF_FAM_MEMORY_LATENCY);
  assert_int_equal(hit.pc, 0);
  /* Near the right edge: 0x40 (HMMA) in the tensor lane. */
  int seen_tensor = 0;
  for (double y = 0; y < H; y++) {
    mprof_render_hit_test(m, &v, MPROF_RENDER_FLAME, W, H, W - 20, y, &hit);
    if (hit.kind == MPROF_HIT_PC) {
      assert_int_equal(hit.lane, MPROF_CAT_TENSOR);
      assert_int_equal(hit.pc, 3);
      seen_tensor = 1;
    }
  }
  assert_true(seen_tensor);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  mprof_render_model_free(m);
}

/* ---- a run of several processes ---------------------------------------- */

/* Two processes' traces (pid, host, rank in META) opened as one model: a
 * band per process's GPU, by host (alpha before zeta), each naming its
 * process; every stream row under its process's band. */
static void test_set_rows_by_host_and_process(void **state) {
  (void)state;
  const char *paths[2] = {test_path("set-zeta.mprof"),
                          test_path("set-alpha.mprof")};
  const char *meta[2][6] = {{"pid", "101", "host", "zeta", "rank", "0"},
                            {"pid", "202", "host", "alpha", "rank", "1"}};
  for (int i = 0; i < 2; i++) {
    mprof_synth_options o = MPROF_SYNTH_OPTIONS_INIT;
    o.launches = 200;
    o.kernels = 2;
    o.pcs_per_kernel = 0;
    o.meta = meta[i];
    o.meta_count = 3;
    assert_int_equal(mprof_synth_write(paths[i], &o), 0);
  }
  mprof_render_model *m;
  assert_int_equal(mprof_render_model_open_set(&m, paths, 2, "the run", NULL),
                   0);
  const char *band[2] = {NULL, NULL};
  size_t bands = 0, streams = 0;
  for (size_t i = 0; i < mprof_render_row_count(m); i++) {
    const mprof_render_row *r = mprof_render_row_at(m, i);
    if (r->kind == MPROF_ROW_DEVICE) {
      assert_true(bands < 2);
      band[bands++] = r->label;
    } else if (r->kind == MPROF_ROW_STREAM) {
      streams++;
      /* Under the band of its own process: alpha's (process 1) first. */
      assert_int_equal(
          mprof_trace_stream_process(mprof_render_model_trace(m), r->stream),
          bands == 1 ? 1 : 0);
    }
  }
  assert_int_equal(bands, 2);
  assert_int_equal(streams, 4);
  assert_non_null(strstr(band[0], "pid 202, rank 1 on alpha"));
  assert_non_null(strstr(band[1], "pid 101, rank 0 on zeta"));
  mprof_render_model_free(m);
  /* A member that is not a trace: its name and the fix. */
  const char *bad[2] = {paths[0], test_path("missing-member.mprof")};
  assert_int_not_equal(mprof_render_model_open_set(&m, bad, 2, NULL, NULL), 0);
  assert_non_null(strstr(mprof_render_error(), "missing-member.mprof"));
  assert_non_null(strstr(mprof_render_error(), "leave it out of the set"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_time_to_pixel_is_exact_on_an_epoch_clock),
      cmocka_unit_test(test_tick_steps_are_1_2_5),
      cmocka_unit_test(test_zoom_keeps_the_time_under_the_pointer),
      cmocka_unit_test(test_pan_and_scroll_stay_inside_the_limits),
      cmocka_unit_test(test_row_zoom_keeps_the_row_under_the_pointer),
      cmocka_unit_test(
          test_lod_draws_wide_launches_alone_and_merges_narrow_ones),
      cmocka_unit_test(test_lod_cost_follows_pixels_not_launches),
      cmocka_unit_test(test_model_kernels_samples_and_sass),
      cmocka_unit_test(test_summary_and_raster_agree),
      cmocka_unit_test(test_model_takes_samples_from_the_sidecar),
      cmocka_unit_test(test_model_errors_name_the_file),
      cmocka_unit_test(test_classification),
      cmocka_unit_test(test_hit_trace),
      cmocka_unit_test(test_hit_inset_and_panels),
      cmocka_unit_test(test_set_rows_by_host_and_process),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
