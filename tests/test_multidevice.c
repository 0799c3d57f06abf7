/*
 * mprof tests — traces of several GPUs: the reader's streams per device,
 * the join and `mprof summary` keeping the same kernel on two devices as
 * two kernels with their CUDA ordinals (also when DEVICES does not list
 * them in ordinal order, and when the devices number their stall reasons
 * differently), `mprof diff` joining per (name, device) and finding a
 * slowdown planted on one device only, and the Trace view drawing one band
 * per device (built with the viewer: MPROF_TEST_RENDER).
 *
 * `test_multidevice --write-unsampled PATH` writes a two-GPU trace whose
 * device 1 could not be PC-sampled, for tests/cli/test_multidevice.sh.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "analysis_util.h"
#include "json_schema.h"

#include "mprof/synth.h"

#ifdef MPROF_TEST_RENDER
#include <cairo.h>

#include "mprof-render/render.h"
#endif

#define STEP "_Z4stepPf"
#define REDUCE "_Z6reducePf"
#define T0 1700000000000000000ull

/* ---- a synthetic trace of two GPUs ------------------------------------- */

static const char *synth(const char *name, uint32_t kernels, double slowdown,
                         uint64_t slow_kernels, uint64_t slow_devices) {
  const char *path = test_path(name);
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.seed = 42;
  opts.launches = 20000;
  opts.kernels = kernels;
  opts.streams = 2;
  opts.devices = 2;
  opts.slowdown = slowdown;
  opts.slow_kernels = slow_kernels;
  opts.slow_devices = slow_devices;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  return path;
}

/* The device index (into DEVICES) of launch @p l. */
static uint32_t launch_device(const mprof_trace *t,
                              const mprof_launch_record *l) {
  size_t shapes, kernels;
  const mprof_shape_record *sh = mprof_trace_shapes(t, &shapes);
  const mprof_kernel_record *k = mprof_trace_kernels(t, &kernels);
  assert_true(l->shape < shapes && sh[l->shape].kernel < kernels);
  return k[sh[l->shape].kernel].device;
}

static void test_reader_streams_per_device(void **state) {
  (void)state;
  const char *path = synth("streams.mprof", 4, 0, 0, 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n;
  const mprof_device_record *dev = mprof_trace_devices(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(dev[0].id, 0);
  assert_int_equal(dev[1].id, 1);
  assert_int_not_equal(dev[0].uuid_lo, dev[1].uuid_lo);

  /* Two streams per device, each holding only its device's launches, in
   * order, and the devices busy at the same time. */
  size_t stream_count;
  const mprof_stream_record *st = mprof_trace_streams(t, &stream_count);
  assert_int_equal(stream_count, 4);
  size_t per_device[2] = {0, 0}, launches_seen = 0;
  uint64_t first_start[2] = {UINT64_MAX, UINT64_MAX}, last_end[2] = {0, 0};
  for (uint32_t s = 0; s < stream_count; s++) {
    uint32_t d = st[s].device;
    assert_true(d < 2);
    per_device[d]++;
    size_t count = mprof_trace_stream_launch_count(t, s);
    assert_true(count > 1000);
    for (size_t i = 0; i < count; i++) {
      const mprof_launch_record *l = mprof_trace_stream_launch(t, s, i);
      assert_int_equal(l->stream, s);
      assert_int_equal(launch_device(t, l), d);
      if (i)
        assert_true(mprof_trace_stream_launch(t, s, i - 1)->end <= l->start);
      if (l->start < first_start[d])
        first_start[d] = l->start;
      if (l->end > last_end[d])
        last_end[d] = l->end;
    }
    launches_seen += count;
  }
  assert_int_equal(per_device[0], 2);
  assert_int_equal(per_device[1], 2);
  assert_int_equal(launches_seen, 20000);
  assert_true(first_start[1] < last_end[0] && first_start[0] < last_end[1]);

  /* Every kernel name once per device. */
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  assert_int_equal(n, 8);
  for (size_t i = 0; i < n; i++) {
    size_t twins = 0;
    for (size_t j = 0; j < n; j++)
      if (j != i && k[j].mangled_name == k[i].mangled_name) {
        assert_int_not_equal(k[j].device, k[i].device);
        twins++;
      }
    assert_int_equal(twins, 1);
  }

  /* PC samples and their totals per device: the per-device counters add
   * up to what that device's records hold. */
  uint64_t samples[2] = {0, 0};
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  for (size_t i = 0; i < n; i++) {
    assert_true(pc[i].device < 2);
    if (pc[i].stall_reason % 2 == 0) /* plain reasons, not *_not_issued */
      samples[pc[i].device] += pc[i].samples;
  }
  assert_true(samples[0] > 0 && samples[1] > 0);
  size_t drops_n;
  const mprof_drop_record *drops = mprof_trace_drops(t, &drops_n);
  int totals = 0;
  for (size_t i = 0; i < drops_n; i++) {
    if (drops[i].kind != MPROF_DROP_PC_TOTAL_SAMPLES)
      continue;
    assert_true(drops[i].device < 2);
    assert_int_equal(drops[i].count, samples[drops[i].device]);
    totals++;
  }
  assert_int_equal(totals, 2);
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_PC_TOTAL_SAMPLES),
                   samples[0] + samples[1]);
  mprof_trace_free(t);
  unlink(path);
}

/* ---- a hand-made trace: ordinals 2 and 0, in that order ---------------- */

/*
 * DEVICES lists ordinal 2 first (index 0) and ordinal 0 second (index 1),
 * as a producer does when it meets device 2 first. Both run STEP on their
 * stream 7 (of different contexts); device 0 also runs REDUCE. The two
 * devices number their stall reasons differently: index 0 is `barrier` on
 * device 2 and `long_scoreboard` on device 0.
 *
 *   GPU 2, stream 7: STEP   [5000 i, 5000 i + 2000)          i = 0..9
 *   GPU 0, stream 7: STEP   [5000 i + 2500, 5000 i + 3500)   i = 0..9
 *                    REDUCE [10000 i + 4000, 10000 i + 4500) i = 0..4
 */
static void write_two_ordinals(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d2 = tt_device(w, 2), d0 = tt_device(w, 0);
  mprof_stream_record sa = {d2, 1, 7, 0}, sb = {d0, 2, 7, 0};
  uint32_t s2, s0;
  assert_int_equal(mprof_writer_intern(w, &s2, MPROF_SECTION_STREAMS, &sa), 0);
  assert_int_equal(mprof_writer_intern(w, &s0, MPROF_SECTION_STREAMS, &sb), 0);
  uint32_t step2 = tt_shape(w, tt_kernel(w, STEP, "step(float*)", d2, 32, 0, 7),
                            264, 256, 0);
  uint32_t step0 = tt_shape(w, tt_kernel(w, STEP, "step(float*)", d0, 32, 0, 7),
                            264, 256, 0);
  uint32_t reduce0 = tt_shape(
      w, tt_kernel(w, REDUCE, "reduce(float*)", d0, 32, 1024, 7), 132, 256, 0);
  for (uint64_t i = 0; i < 10; i++)
    tt_launch(w, step2, s2, T0 + 5000 * i, T0 + 5000 * i + 2000);
  for (uint64_t i = 0; i < 10; i++) {
    tt_launch(w, step0, s0, T0 + 5000 * i + 2500, T0 + 5000 * i + 3500);
    if (i % 2 == 0)
      tt_launch(w, reduce0, s0, T0 + 5000 * i + 4000, T0 + 5000 * i + 4500);
  }
  tt_reason(w, d2, 0, REASON("barrier"));
  tt_reason(w, d2, 1, REASON("long_scoreboard"));
  tt_reason(w, d0, 0, REASON("long_scoreboard"));
  tt_reason(w, d0, 1, REASON("barrier"));
  tt_sample(w, d2, STEP, 7, 0x40, 0, 900);
  tt_sample(w, d2, STEP, 7, 0x50, 1, 100);
  tt_sample(w, d0, STEP, 7, 0x40, 0, 800);
  tt_sample(w, d0, STEP, 7, 0x50, 1, 200);
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void test_join_by_ordinal(void **state) {
  (void)state;
  const char *path = test_path("ordinals.mprof");
  write_two_ordinals(path);
  tt_analysis a;
  tt_analyse(&a, path, NULL);
  assert_int_equal(mprof_join_kernel_count(a.join), 3);
  uint32_t on2 = mprof_join_find_kernel(a.join, STEP, 2);
  uint32_t on0 = mprof_join_find_kernel(a.join, STEP, 0);
  assert_int_not_equal(on2, MPROF_INDEX_NONE);
  assert_int_not_equal(on0, MPROF_INDEX_NONE);
  assert_int_not_equal(on2, on0);
  assert_int_equal(mprof_join_find_kernel(a.join, STEP, 1), MPROF_INDEX_NONE);
  assert_int_equal(mprof_join_find_kernel(a.join, REDUCE, 2), MPROF_INDEX_NONE);
  assert_int_equal(mprof_join_find_kernel(a.join, "step(float*)", 2), on2);

  const mprof_kernel_stats *k2 = mprof_join_kernel(a.join, on2);
  const mprof_kernel_stats *k0 = mprof_join_kernel(a.join, on0);
  assert_int_equal(k2->device_id, 2);
  assert_int_equal(k2->device, 0); /* its index in DEVICES */
  assert_int_equal(k0->device_id, 0);
  assert_int_equal(k0->device, 1);
  assert_int_equal(k2->launches, 10);
  assert_int_equal(k0->launches, 10);
  assert_true(k2->mean_ns == 2000.0 && k0->mean_ns == 1000.0);
  /* Device shares are per device: STEP is all of GPU 2's time and 10000
   * of the 12500 ns on GPU 0. */
  assert_true(fabs(k2->device_share - 1.0) < 1e-9);
  assert_true(fabs(k0->device_share - 0.8) < 1e-9);
  assert_true(fabs(k2->share - 20000.0 / 32500.0) < 1e-9);
  /* Samples stay on their device, and each device's reason index 0 means
   * what that device's table says. */
  assert_int_equal(k2->samples, 1000);
  assert_int_equal(k0->samples, 1000);
  size_t n;
  const mprof_reason_samples *r2 = mprof_join_kernel_reasons(a.join, on2, &n);
  assert_true(n >= 1);
  assert_string_equal(mprof_join_reason(a.join, r2[0].reason)->name, "barrier");
  assert_int_equal(r2[0].samples, 900);
  const mprof_reason_samples *r0 = mprof_join_kernel_reasons(a.join, on0, &n);
  assert_true(n >= 1);
  assert_string_equal(mprof_join_reason(a.join, r0[0].reason)->name,
                      "long_scoreboard");
  assert_int_equal(r0[0].samples, 800);
  tt_release(&a);
  unlink(path);
}

/* ---- summary reports ---------------------------------------------------- */

static char *summary(const tt_analysis *a, unsigned format) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = format;
  ro.max_kernels = (size_t)-1;
  int rc = 0;
  char *text = tt_report(a->diagnosis, &ro, &rc);
  assert_int_equal(rc, 0);
  return text;
}

/* Occurrences of @p needle in @p haystack. */
static size_t count(const char *haystack, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(haystack, needle); p;
       p = strstr(p + strlen(needle), needle))
    n++;
  return n;
}

/* The JSON items of a summary or diff as (mangled, device) rows. */
static json_object *json_items(json_object *doc) {
  json_object *kernels, *items;
  assert_true(json_object_object_get_ex(doc, "kernels", &kernels));
  assert_true(json_object_object_get_ex(kernels, "items", &items));
  return items;
}

static json_object *json_row(json_object *items, const char *mangled,
                             int device) {
  json_object *found = NULL;
  for (size_t i = 0; i < json_object_array_length(items); i++) {
    json_object *item = json_object_array_get_idx(items, i), *m, *d;
    assert_true(json_object_object_get_ex(item, "mangled", &m));
    assert_true(json_object_object_get_ex(item, "device", &d));
    if (strcmp(json_object_get_string(m), mangled) == 0 &&
        json_object_get_int(d) == device) {
      assert_null(found); /* one row per (name, device) */
      found = item;
    }
  }
  return found;
}

static int64_t json_int(json_object *item, const char *key) {
  json_object *v;
  assert_true(json_object_object_get_ex(item, key, &v));
  return json_object_get_int64(v);
}

static void test_summary_rows_per_device(void **state) {
  (void)state;
  const char *path = test_path("summary.mprof");
  write_two_ordinals(path);
  tt_analysis a;
  tt_analyse(&a, path, NULL);

  char *xml = summary(&a, MPROF_REPORT_XML);
  assert_int_equal(tt_xmllint(xml), 0);
  assert_non_null(strstr(xml, "<device index=\"0\" id=\"2\""));
  assert_non_null(strstr(xml, "<device index=\"1\" id=\"0\""));
  assert_int_equal(count(xml, "<kernel rank="), 3);
  assert_int_equal(count(xml, "mangled=\"" STEP "\""), 2);
  assert_int_equal(count(xml, "mangled=\"" STEP "\" device=\"2\""), 1);
  assert_int_equal(count(xml, "mangled=\"" STEP "\" device=\"0\""), 1);
  assert_int_equal(count(xml, "mangled=\"" REDUCE "\" device=\"0\""), 1);
  free(xml);

  char *json = summary(&a, MPROF_REPORT_JSON);
  char why[1024];
  if (json_schema_validate_text(tt_doc("summary.schema.json"), json, why,
                                sizeof why) != 0)
    fail_msg("summary JSON does not match its schema: %s", why);
  json_object *doc = json_tokener_parse(json);
  assert_non_null(doc);
  json_object *items = json_items(doc);
  assert_int_equal(json_object_array_length(items), 3);
  json_object *on2 = json_row(items, STEP, 2), *on0 = json_row(items, STEP, 0);
  assert_non_null(on2);
  assert_non_null(on0);
  assert_null(json_row(items, REDUCE, 2));
  assert_int_equal(json_int(on2, "launches"), 10);
  assert_int_equal(json_int(on2, "mean_ns"), 2000);
  assert_int_equal(json_int(on0, "mean_ns"), 1000);
  assert_int_equal(json_int(on2, "samples"), 1000);
  assert_int_equal(json_int(json_row(items, REDUCE, 0), "launches"), 5);
  json_object_put(doc);
  free(json);

  char *text = summary(&a, MPROF_REPORT_TEXT);
  assert_non_null(strstr(text, "device 2"));
  assert_non_null(strstr(text, "device 0"));
  free(text);
  tt_release(&a);
  unlink(path);
}

/* ---- diff: per (name, device) ------------------------------------------ */

static char *diff_report(const mprof_diff *d, unsigned format) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = format;
  ro.max_kernels = (size_t)-1;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_int_equal(mprof_diff_write(f, d, &ro, 10.0), 0);
  fclose(f);
  return text;
}

static const mprof_kernel_change *
change_of(const mprof_diff *d, const char *mangled, uint32_t device) {
  const mprof_kernel_change *found = NULL;
  for (size_t i = 0; i < mprof_diff_kernel_count(d); i++) {
    const mprof_kernel_change *c = mprof_diff_kernel(d, i);
    if (strcmp(c->mangled, mangled) == 0 && c->device_id == device) {
      assert_null(found);
      found = c;
    }
  }
  if (!found)
    fail_msg("no kernel %s on device %u in the diff", mangled, device);
  return found;
}

/* Kernel 2 runs 20% slower on device 1 only; its twin on device 0 and
 * every other kernel are unchanged. */
static void test_diff_slowdown_on_one_device(void **state) {
  (void)state;
  const char *base = synth("base.mprof", 8, 0, 0, 0);
  const char *slow = synth("slow.mprof", 8, 0.20, 1u << 2, 1u << 1);
  tt_analysis ab, ac;
  tt_analyse(&ab, base, NULL);
  tt_analyse(&ac, slow, NULL);
  mprof_diff *d;
  assert_int_equal(mprof_diff_run(&d, ab.diagnosis, ac.diagnosis, NULL), 0);
  assert_int_equal(mprof_diff_kernel_count(d), 16);
  const char *slowed = "_Z17attention_softmaxPKfPfiif";
  const mprof_kernel_change *c = mprof_diff_kernel(d, 0);
  assert_string_equal(c->mangled, slowed);
  assert_int_equal(c->device_id, 1);
  assert_int_equal(c->change, MPROF_CHANGE_SLOWER);
  assert_true(c->significant);
  assert_true(fabs(c->mean_change - 0.20) < 0.002);
  assert_non_null(strstr(c->summary, "+20.0%"));
  const mprof_kernel_change *twin = change_of(d, slowed, 0);
  assert_int_equal(twin->change, MPROF_CHANGE_NOISE);
  assert_true(twin->mean_change == 0 && twin->total_delta_ns == 0);
  for (size_t i = 1; i < mprof_diff_kernel_count(d); i++) {
    const mprof_kernel_change *o = mprof_diff_kernel(d, i);
    assert_int_equal(o->change, MPROF_CHANGE_NOISE);
    assert_true(o->mean_change == 0);
  }
  assert_int_equal(mprof_diff_gate(d, 10.0), 1);
  assert_int_equal(mprof_diff_gate(d, 25.0), 0);

  char *xml = diff_report(d, MPROF_REPORT_XML);
  assert_int_equal(tt_xmllint(xml), 0);
  assert_int_equal(count(xml, "device=\"1\" change=\"slower\""), 1);
  assert_int_equal(count(xml, "change=\"slower\""), 1);
  assert_non_null(strstr(xml, "mangled=\"_Z17attention_softmaxPKfPfiif\" "
                              "device=\"1\" change=\"slower\""));
  assert_non_null(strstr(xml, "mangled=\"_Z17attention_softmaxPKfPfiif\" "
                              "device=\"0\" change=\"noise\""));
  free(xml);
  char *json = diff_report(d, MPROF_REPORT_JSON);
  char why[1024];
  if (json_schema_validate_text(tt_doc("diff.schema.json"), json, why,
                                sizeof why) != 0)
    fail_msg("diff JSON does not match its schema: %s", why);
  json_object *doc = json_tokener_parse(json);
  json_object *items = json_items(doc), *v;
  assert_int_equal(json_object_array_length(items), 16);
  assert_true(
      json_object_object_get_ex(json_row(items, slowed, 1), "change", &v));
  assert_string_equal(json_object_get_string(v), "slower");
  assert_true(
      json_object_object_get_ex(json_row(items, slowed, 0), "change", &v));
  assert_string_equal(json_object_get_string(v), "noise");
  json_object_put(doc);
  free(json);
  mprof_diff_free(d);
  tt_release(&ab);
  tt_release(&ac);

  /* The slowdown may name only devices the trace has. */
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.devices = 2;
  opts.slowdown = 0.2;
  opts.slow_devices = 1u << 2;
  assert_int_equal(mprof_synth_write(slow, &opts), MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "not among the 2 devices"));
  unlink(base);
  unlink(slow);
}

/* Version 3 callers (the struct up to span_nested) still get every device
 * slowed, and the version 4 default is every device too. */
static void test_synth_slow_devices_default(void **state) {
  (void)state;
  mprof_synth_options so;
  memset(&so, 0xab, sizeof so);
  assert_int_equal(mprof_synth_options_init(&so, 3), 0);
  const unsigned char *tail =
      (const unsigned char *)&so + offsetof(mprof_synth_options, slow_devices);
  assert_int_equal(tail[0], 0xab); /* past a version 3 struct: untouched */
  so.devices = 2;
  so.launches = 2000;
  so.slowdown = 0.5;
  const char *v3 = test_path("v3.mprof");
  assert_int_equal(mprof_synth_write(v3, &so), 0);
  mprof_synth_options all = MPROF_SYNTH_OPTIONS_INIT;
  all.devices = 2;
  all.launches = 2000;
  all.slowdown = 0.5;
  const char *v4 = test_path("v4.mprof");
  assert_int_equal(mprof_synth_write(v4, &all), 0);
  size_t size3, size4;
  unsigned char *bytes3 = test_read_file(v3, &size3);
  unsigned char *bytes4 = test_read_file(v4, &size4);
  assert_non_null(bytes3);
  assert_non_null(bytes4);
  assert_int_equal(size3, size4);
  assert_memory_equal(bytes3, bytes4, size3);
  free(bytes3);
  free(bytes4);
  unlink(v3);
  unlink(v4);
}

/* ---- the Trace view: one band per device -------------------------------- */

#ifdef MPROF_TEST_RENDER
#define W 1168
#define H 400
#define BAND_COLOR 0xe4e7eeu

static uint32_t pixel(cairo_surface_t *s, int x, int y) {
  assert_true(x >= 0 && x < W && y >= 0 && y < H);
  const unsigned char *data = cairo_image_surface_get_data(s);
  uint32_t v;
  memcpy(&v,
         data + (size_t)y * (size_t)cairo_image_surface_get_stride(s) +
             (size_t)x * 4,
         4);
  return v & 0xffffffu;
}

/* The colour of kernel @p mangled on device index @p device. */
static uint32_t kernel_color(const mprof_render_model *m, const char *mangled,
                             uint32_t device) {
  for (size_t i = 0; i < mprof_render_kernel_count(m); i++) {
    const mprof_render_kernel *k = mprof_render_kernel_at(m, i);
    if (strcmp(k->stats->mangled, mangled) == 0 && k->stats->device == device)
      return k->color;
  }
  fail_msg("no kernel %s on device %u", mangled, device);
  return 0;
}

static void test_trace_view_band_per_device(void **state) {
  (void)state;
  const char *path = test_path("bands.mprof");
  write_two_ordinals(path);
  mprof_render_model *m = NULL;
  if (mprof_render_model_open(&m, path, NULL) != 0)
    fail_msg("%s", mprof_render_error());
  /* Rows: GPU 2's band and stream, then GPU 0's. */
  assert_int_equal(mprof_render_row_count(m), 4);
  const uint32_t kinds[] = {MPROF_ROW_DEVICE, MPROF_ROW_STREAM,
                            MPROF_ROW_DEVICE, MPROF_ROW_STREAM};
  const uint32_t devices[] = {0, 0, 1, 1};
  for (size_t r = 0; r < 4; r++) {
    assert_int_equal(mprof_render_row_at(m, r)->kind, kinds[r]);
    assert_int_equal(mprof_render_row_at(m, r)->device, devices[r]);
  }
  assert_non_null(strstr(mprof_render_row_at(m, 0)->label, "GPU 2"));
  assert_non_null(strstr(mprof_render_row_at(m, 2)->label, "GPU 0"));

  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = (int64_t)T0;
  v.end_ns = (int64_t)T0 + 50000;
  v.kernel = -1; /* no selection outlines */
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
  cairo_t *cr = cairo_create(s);
  mprof_render_draw(cr, m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_equal(cairo_status(cr), CAIRO_STATUS_SUCCESS);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  const char *keep = getenv("MPROF_TEST_KEEP");
  if (keep && *keep)
    cairo_surface_write_to_png(s, test_path("bands.png"));

  /* Down the left edge: exactly two bands, where the device rows are. */
  int runs = 0, run_top[4] = {0}, run_length[4] = {0};
  for (int y = (int)MPROF_RENDER_RULER; y < H; y++) {
    if (pixel(s, 2, y) != BAND_COLOR)
      continue;
    if (y == 0 || pixel(s, 2, y - 1) != BAND_COLOR) {
      assert_true(runs < 4);
      run_top[runs++] = y;
    }
    run_length[runs - 1]++;
  }
  assert_int_equal(runs, 2);
  for (int b = 0; b < 2; b++) {
    double h;
    double top = mprof_render_row_top(m, &v, (size_t)(2 * b), &h);
    assert_int_equal(run_top[b], (int)(MPROF_RENDER_RULER + top));
    assert_int_equal(run_length[b], (int)h);
  }

  /* Under each band its own device's launches: STEP on GPU 2 at 1000 ns,
   * on GPU 0 at 3000 ns, and neither where only the other device ran. */
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  int x1000 = (int)mprof_render_time_to_x(&map, (int64_t)T0 + 1000);
  int x3000 = (int)mprof_render_time_to_x(&map, (int64_t)T0 + 3000);
  int x4250 = (int)mprof_render_time_to_x(&map, (int64_t)T0 + 4250);
  double h;
  int y2 = (int)(MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 1, &h) + 5);
  int y0 = (int)(MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 3, &h) + 5);
  uint32_t step2 = kernel_color(m, STEP, 0), step0 = kernel_color(m, STEP, 1);
  assert_int_equal(pixel(s, x1000, y2), step2);
  assert_int_not_equal(pixel(s, x1000, y0), step0);
  assert_int_not_equal(pixel(s, x1000, y0), step2);
  assert_int_equal(pixel(s, x3000, y0), step0);
  assert_int_not_equal(pixel(s, x3000, y2), step2);
  assert_int_equal(pixel(s, x4250, y0), kernel_color(m, REDUCE, 1));
  cairo_surface_destroy(s);
  mprof_render_model_free(m);
  unlink(path);
}
#else
static void test_trace_view_band_per_device(void **state) {
  (void)state;
  skip(); /* built without the viewer */
}
#endif

/* ---- a trace whose device 1 was not PC-sampled -------------------------- */

static void write_unsampled(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "producer", "cupti"), 0);
  assert_int_equal(mprof_writer_meta(w, "pc.mode", "continuous"), 0);
  assert_int_equal(
      mprof_writer_meta(w, "pc.device.1.error", "CUPTI_ERROR_NOT_SUPPORTED"),
      0);
  assert_int_equal(
      mprof_writer_meta(w, "pc.error", "CUPTI_ERROR_NOT_SUPPORTED"), 0);
  for (uint32_t id = 0; id < 2; id++) {
    uint32_t d = tt_device(w, id);
    uint32_t s = tt_stream(w, d, 7);
    uint32_t shape =
        tt_shape(w, tt_kernel(w, STEP, "", d, 32, 0, 7), 264, 256, 0);
    for (uint64_t i = 0; i < 4; i++)
      tt_launch(w, shape, s, T0 + 1000 * i, T0 + 1000 * i + 500);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* What a PM-sampled recording whose exit timed out leaves: the producer's
 * META (the step that had not returned) and the samples decoded before. */
static void write_pm_timeout(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "producer", "cupti"), 0);
  assert_int_equal(mprof_writer_meta(w, "pc.mode", "off"), 0);
  assert_int_equal(mprof_writer_meta(w, "pm.mode", "on"), 0);
  assert_int_equal(mprof_writer_meta(w, "pm.interval_ns", "100000"), 0);
  assert_int_equal(mprof_writer_meta(w, "pm.error", "exit_timeout"), 0);
  assert_int_equal(mprof_writer_meta(w, "pm.exit_phase", "cuptiPmSamplingStop"),
                   0);
  assert_int_equal(mprof_writer_meta(w, "pm.exit_wait_ms", "1012"), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t shape =
      tt_shape(w, tt_kernel(w, STEP, "", d, 32, 0, 7), 264, 256, 0);
  tt_launch(w, shape, tt_stream(w, d, 7), T0, T0 + 500000);
  tt_pm_metric(w, d, 0,
               "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
               "percent", 100000);
  const float half = 50.0f;
  for (uint64_t i = 0; i < 3; i++)
    tt_pm_sample(w, d, T0 + 100000 * i, T0 + 100000 * (i + 1), 1, &half);
  assert_int_equal(mprof_writer_finish(w), 0);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-unsampled") == 0) {
    write_unsampled(argv[2]);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--write-pm-timeout") == 0) {
    write_pm_timeout(argv[2]);
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_streams_per_device),
      cmocka_unit_test(test_join_by_ordinal),
      cmocka_unit_test(test_summary_rows_per_device),
      cmocka_unit_test(test_diff_slowdown_on_one_device),
      cmocka_unit_test(test_synth_slow_devices_default),
      cmocka_unit_test(test_trace_view_band_per_device),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
#ifdef MPROF_TEST_RENDER
  mprof_render_shutdown(); /* fontconfig's caches, for leak checkers */
#endif
  return failed;
}
