/*
 * mprof tests — the Trace Event Format and speedscope exports, on the real
 * H200 samples: every launch, copy and span is there with the trace's
 * numbers, every thread is a well-formed stack, and speedscope's weights add
 * up to the join's samples.
 *
 * SPDX-License-Identifier: MIT
 */
#include <json-c/json.h>

#include "analysis_util.h"
#include "json_schema.h"

typedef struct sample_input {
  mprof_trace *trace;
  mprof_sidecar *sidecar;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
} sample_input;

static const char *sample_path(const char *name) {
  static char buf[4][1024];
  static int next;
  const char *src = getenv("MPROF_SOURCE_DIR");
  char *out = buf[next++ & 3];
  snprintf(out, sizeof buf[0], "%s/samples/%s", src && *src ? src : "..", name);
  return out;
}

static void load_path(sample_input *in, const char *path, int with_sidecar) {
  memset(in, 0, sizeof *in);
  assert_int_equal(mprof_trace_open(&in->trace, path, NULL), 0);
  if (with_sidecar) {
    char sidecar[1100];
    snprintf(sidecar, sizeof sidecar, "%s.pc.json", path);
    assert_int_equal(mprof_sidecar_load(&in->sidecar, sidecar), 0);
  }
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = in->sidecar;
  assert_int_equal(mprof_join_build(&in->join, in->trace, &jo), 0);
  assert_int_equal(mprof_diagnose(&in->diagnosis, in->join, NULL), 0);
}

static void load_sample(sample_input *in, const char *name) {
  load_path(in, sample_path(name), 1);
}

static void release(sample_input *in) {
  mprof_diagnosis_free(in->diagnosis);
  mprof_join_free(in->join);
  mprof_sidecar_free(in->sidecar);
  mprof_trace_free(in->trace);
}

/* Export into memory and parse; *rc gets the export's status. */
static json_object *export_json(const mprof_diagnosis *const *set, size_t count,
                                unsigned format, const char *kernel, int *rc,
                                mprof_export_report *rep) {
  mprof_export_options eo = MPROF_EXPORT_OPTIONS_INIT;
  eo.format = format;
  eo.kernel = kernel;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  *rc = mprof_export_write(f, set, count, &eo, rep);
  fclose(f);
  json_object *doc = NULL;
  if (*rc == 0) {
    char why[1024];
    if (format == MPROF_EXPORT_TRACE_EVENTS &&
        json_schema_validate_text(tt_doc("trace-event.schema.json"), text, why,
                                  sizeof why) != 0)
      fail_msg("export does not match trace-event.schema.json: %s", why);
    doc = json_tokener_parse(text);
    assert_non_null(doc);
  } else {
    assert_int_equal(size, 0); /* nothing written on failure */
  }
  free(text);
  return doc;
}

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v))
    fail_msg("no key '%s' in %s", key, json_object_to_json_string(o));
  return v;
}

static const char *get_str(json_object *o, const char *key) {
  return json_object_get_string(get(o, key));
}

/* ts / dur in microseconds → nanoseconds (they carry 3 decimals). */
static int64_t get_ns(json_object *o, const char *key) {
  double us = json_object_get_double(get(o, key));
  return (int64_t)(us * 1000.0 + (us >= 0 ? 0.5 : -0.5));
}

typedef struct slice {
  int64_t pid, tid, start, end;
} slice;

static int slice_order(const void *a, const void *b) {
  const slice *x = (const slice *)a, *y = (const slice *)b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->end > y->end ? -1 : x->end < y->end;
}

/* Complete events on one thread must nest (a viewer drops those that
 * straddle), and every thread and process they use must be named. */
static void check_threads(json_object *events) {
  size_t n = json_object_array_length(events);
  slice *slices = (slice *)malloc((n ? n : 1) * sizeof *slices);
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(events, i);
    if (strcmp(get_str(e, "ph"), "X") != 0)
      continue;
    slice s = {json_object_get_int64(get(e, "pid")),
               json_object_get_int64(get(e, "tid")), get_ns(e, "ts"), 0};
    s.end = s.start + get_ns(e, "dur");
    slices[count++] = s;
  }
  qsort(slices, count, sizeof *slices, slice_order);
  slice *names = (slice *)malloc((n ? n : 1) * sizeof *names);
  size_t name_count = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(events, i), *tid;
    if (strcmp(get_str(e, "name"), "thread_name") == 0 &&
        json_object_object_get_ex(e, "tid", &tid)) {
      slice s = {json_object_get_int64(get(e, "pid")),
                 json_object_get_int64(tid), 0, 0};
      names[name_count++] = s;
    }
  }
  qsort(names, name_count, sizeof *names, slice_order);
  int64_t stack[256];
  size_t depth = 0;
  for (size_t i = 0; i < count; i++) {
    if (i == 0 || slices[i].pid != slices[i - 1].pid ||
        slices[i].tid != slices[i - 1].tid) {
      depth = 0;
      /* the thread has a name */
      slice key = {slices[i].pid, slices[i].tid, 0, 0};
      int named =
          bsearch(&key, names, name_count, sizeof *names, slice_order) != NULL;
      if (!named)
        fail_msg("thread %lld of process %lld has no name",
                 (long long)slices[i].tid, (long long)slices[i].pid);
    }
    while (depth && stack[depth - 1] <= slices[i].start)
      depth--;
    if (depth && stack[depth - 1] < slices[i].end)
      fail_msg("slice [%lld, %lld) straddles its parent on tid %lld",
               (long long)slices[i].start, (long long)slices[i].end,
               (long long)slices[i].tid);
    assert_true(depth < 256);
    stack[depth++] = slices[i].end;
  }
  free(names);
  free(slices);
}

static size_t count_cat(json_object *events, const char *cat) {
  size_t found = 0;
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    if (json_object_object_get_ex(e, "cat", &c) &&
        strcmp(json_object_get_string(c), cat) == 0)
      found++;
  }
  return found;
}

static uint64_t trace_origin(const mprof_trace *trace) {
  uint64_t start, end;
  mprof_trace_time_bounds(trace, &start, &end);
  size_t n;
  const mprof_span_record *spans = mprof_trace_spans(trace, &n);
  for (size_t i = 0; i < n; i++)
    start = spans[i].start < start ? spans[i].start : start;
  return start;
}

/* Every launch, copy and span of each sample, with the trace's numbers. */
static void test_trace_events_on_samples(void **state) {
  (void)state;
  static const char *names[] = {"demo.mprof", "gemm.mprof", "gemm_source.mprof",
                                "transformer_forward.mprof", "multi_gpu.mprof"};
  for (size_t s = 0; s < sizeof names / sizeof names[0]; s++) {
    sample_input in;
    load_sample(&in, names[s]);
    const mprof_diagnosis *set[1] = {in.diagnosis};
    int rc;
    mprof_export_report rep = MPROF_EXPORT_REPORT_INIT;
    json_object *doc =
        export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS, NULL, &rc, &rep);
    assert_int_equal(rc, 0);
    json_object *events = get(doc, "traceEvents");
    assert_int_equal(rep.events, json_object_array_length(events));
    size_t launches, memops, spans, shapes, kernels, streams;
    const mprof_launch_record *l = mprof_trace_launches(in.trace, &launches);
    mprof_trace_memops(in.trace, &memops);
    mprof_trace_spans(in.trace, &spans);
    const mprof_shape_record *sh = mprof_trace_shapes(in.trace, &shapes);
    const mprof_kernel_record *kr = mprof_trace_kernels(in.trace, &kernels);
    const mprof_stream_record *st = mprof_trace_streams(in.trace, &streams);
    assert_int_equal(count_cat(events, "kernel"), launches);
    assert_int_equal(count_cat(events, "memcpy") + count_cat(events, "memset"),
                     memops);
    assert_int_equal(count_cat(events, "span"), spans);
    uint64_t origin = trace_origin(in.trace);
    assert_int_equal(
        strtoull(get_str(get(doc, "otherData"), "origin_ns"), NULL, 10),
        origin);
    /* Each kernel event matches its launch, found by correlation id. */
    size_t checked = 0;
    for (size_t i = 0; i < json_object_array_length(events); i++) {
      json_object *e = json_object_array_get_idx(events, i), *c;
      if (!json_object_object_get_ex(e, "cat", &c) ||
          strcmp(json_object_get_string(c), "kernel") != 0)
        continue;
      json_object *args = get(e, "args");
      uint32_t corr =
          (uint32_t)json_object_get_int64(get(args, "correlation_id"));
      const mprof_launch_record *match = NULL;
      for (size_t j = 0; j < launches && !match; j++)
        if (l[j].correlation_id == corr &&
            (int64_t)(l[j].start - origin) == get_ns(e, "ts"))
          match = &l[j];
      assert_non_null(match);
      assert_int_equal(get_ns(e, "dur"), (int64_t)(match->end - match->start));
      const mprof_shape_record *shape = &sh[match->shape];
      char dims[64];
      snprintf(dims, sizeof dims, "%ux%ux%u", shape->grid[0], shape->grid[1],
               shape->grid[2]);
      assert_string_equal(get_str(args, "grid"), dims);
      snprintf(dims, sizeof dims, "%ux%ux%u", shape->block[0], shape->block[1],
               shape->block[2]);
      assert_string_equal(get_str(args, "block"), dims);
      assert_int_equal(json_object_get_int64(get(args, "registers")),
                       kr[shape->kernel].registers);
      assert_int_equal(json_object_get_int64(get(e, "tid")),
                       st[match->stream].stream_id);
      assert_true(strlen(get_str(args, "verdict")) > 10);
      checked++;
    }
    assert_int_equal(checked, launches);
    check_threads(events);
    json_object_put(doc);
    release(&in);
  }
}

/* The dominant kernel's event carries the verdict `summary` prints. */
static void test_trace_events_carry_the_verdict(void **state) {
  (void)state;
  sample_input in;
  load_sample(&in, "transformer_forward.mprof");
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  json_object *doc = export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS,
                                 "attention_scores_softmax", &rc, NULL);
  assert_int_equal(rc, 0);
  json_object *events = get(doc, "traceEvents");
  assert_int_equal(count_cat(events, "kernel"),
                   mprof_join_kernel(in.join, 0)->launches);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(in.diagnosis, 0);
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    if (json_object_object_get_ex(e, "cat", &c) &&
        strcmp(json_object_get_string(c), "kernel") == 0) {
      char short_name[256];
      assert_string_equal(
          get_str(e, "name"),
          mprof_name_short(short_name, sizeof short_name, kd->stats->name));
      assert_string_equal(get_str(get(e, "args"), "kernel"), kd->stats->name);
      assert_string_equal(get_str(get(e, "args"), "verdict"), kd->verdict);
    }
  }
  /* Copies keep their direction and size in the name, the size spelled
   * as the viewer and the CLI spell it. */
  assert_true(count_cat(events, "memcpy") > 0);
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    if (!json_object_object_get_ex(e, "cat", &c) ||
        strcmp(json_object_get_string(c), "memcpy") != 0)
      continue;
    json_object *args = get(e, "args");
    const char *kind = get_str(args, "kind");
    assert_true(strcmp(kind, "HtoD") == 0 || strcmp(kind, "DtoH") == 0 ||
                strcmp(kind, "DtoD") == 0);
    char size[32], name[96];
    mprof_format_bytes(size, sizeof size,
                       (double)json_object_get_int64(get(args, "bytes")));
    snprintf(name, sizeof name, "Memcpy %s %s", kind, size);
    assert_string_equal(get_str(e, "name"), name);
  }
  json_object_put(doc);
  release(&in);
}

/* The spans of gemm_source lie on SM tracks, one lane per overlap. */
static void test_spans_per_sm(void **state) {
  (void)state;
  sample_input in;
  load_sample(&in, "gemm_source.mprof");
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  json_object *doc =
      export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS, NULL, &rc, NULL);
  assert_int_equal(rc, 0);
  json_object *events = get(doc, "traceEvents");
  size_t n, regions;
  const mprof_span_record *spans = mprof_trace_spans(in.trace, &n);
  const mprof_region_record *reg = mprof_trace_regions(in.trace, &regions);
  /* Per region name, as many span events as spans. */
  for (size_t r = 0; r < regions; r++) {
    const char *name = mprof_trace_string(in.trace, reg[r].name);
    size_t expected = 0, found = 0;
    for (size_t i = 0; i < n; i++)
      expected += spans[i].region == r;
    for (size_t i = 0; i < json_object_array_length(events); i++) {
      json_object *e = json_object_array_get_idx(events, i), *c;
      if (json_object_object_get_ex(e, "cat", &c) &&
          strcmp(json_object_get_string(c), "span") == 0 &&
          strcmp(get_str(e, "name"), name) == 0) {
        found++;
        assert_int_equal(json_object_get_int64(get(get(e, "args"), "sm")),
                         json_object_get_int64(get(e, "tid")) / 65536);
      }
    }
    assert_int_equal(found, expected);
  }
  json_object_put(doc);
  release(&in);
}

/* NVTX ranges: one track per host thread, nested ranges stacked. */
static void test_ranges_per_thread(void **state) {
  (void)state;
  const char *path = test_path("ranges.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "pid", "4242"), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t k = tt_kernel(w, "_Z4stepv", "step()", d, 32, 0, 0x1234);
  uint32_t sh = tt_shape(w, k, 132, 256, 0);
  tt_launch(w, sh, s, 2000, 5000);
  /* thread 11: forward ⊃ attention; thread 12: one range with a colour */
  mprof_range_record r[3];
  memset(r, 0, sizeof r);
  r[0].start = 1000;
  r[0].end = 9000;
  r[0].name = mprof_writer_string(w, "forward");
  r[0].thread_id = 11;
  r[1].start = 1500;
  r[1].end = 6000;
  r[1].name = mprof_writer_string(w, "attention");
  r[1].thread_id = 11;
  r[1].depth = 1;
  r[1].domain = mprof_writer_string(w, "model");
  r[2].start = 3000;
  r[2].end = 4000;
  r[2].name = mprof_writer_string(w, "loader");
  r[2].thread_id = 12;
  r[2].color = 0xff00ff00u;
  for (int i = 2; i >= 0; i--)
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r[i]),
                     0);
  /* The launch's API call inside attention on thread 11, and a call on
   * thread 13, which has no range, whose launch is not in the trace. */
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.start = 6500;
  l.end = 7000;
  l.shape = sh;
  l.stream = s;
  l.correlation_id = 77;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  mprof_api_call_record calls[2] = {
      {1800, 1900, 77, 11, mprof_writer_string(w, "cudaLaunchKernel"),
       MPROF_API_RUNTIME},
      {2500, 2600, 78, 13, mprof_writer_string(w, "cuLaunchKernel"),
       MPROF_API_DRIVER}};
  for (int i = 0; i < 2; i++)
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &calls[i]), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  sample_input in;
  load_path(&in, path, 0);
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  json_object *doc =
      export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS, NULL, &rc, NULL);
  assert_int_equal(rc, 0);
  json_object *events = get(doc, "traceEvents");
  assert_int_equal(count_cat(events, "nvtx"), 3);
  assert_int_equal(count_cat(events, "api"), 2);
  /* One flow: the call of correlation 77 to its kernel; 78 has none. */
  assert_int_equal(count_cat(events, "flow"), 2);
  check_threads(events);
  int flows = 0;
  int64_t flow_id = -1;
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    const char *ph = get_str(e, "ph");
    if (json_object_object_get_ex(e, "cat", &c) &&
        strcmp(json_object_get_string(c), "api") == 0) {
      assert_int_equal(json_object_get_int64(get(e, "pid")), 4242);
      if (strcmp(get_str(e, "name"), "cuLaunchKernel") == 0) {
        assert_int_equal(json_object_get_int64(get(e, "tid")), 13);
        assert_string_equal(get_str(get(e, "args"), "api"), "driver");
      } else {
        assert_string_equal(get_str(e, "name"), "cudaLaunchKernel");
        assert_int_equal(json_object_get_int64(get(e, "tid")), 11);
        assert_int_equal(get_ns(e, "ts"), 800);
        assert_int_equal(get_ns(e, "dur"), 100);
        assert_int_equal(
            json_object_get_int64(get(get(e, "args"), "correlation_id")), 77);
      }
    } else if (strcmp(ph, "s") == 0) {
      /* mid-call on the launching thread */
      assert_int_equal(json_object_get_int64(get(e, "pid")), 4242);
      assert_int_equal(json_object_get_int64(get(e, "tid")), 11);
      assert_int_equal(get_ns(e, "ts"), 850);
      assert_true(flow_id < 0 ||
                  flow_id == json_object_get_int64(get(e, "id")));
      flow_id = json_object_get_int64(get(e, "id"));
      flows |= 1;
    } else if (strcmp(ph, "f") == 0) {
      /* mid-kernel on its stream, bound to the enclosing slice */
      assert_true(json_object_get_int64(get(e, "pid")) != 4242);
      assert_int_equal(json_object_get_int64(get(e, "tid")), 7);
      assert_int_equal(get_ns(e, "ts"), 5750);
      assert_string_equal(get_str(e, "bp"), "e");
      assert_true(flow_id < 0 ||
                  flow_id == json_object_get_int64(get(e, "id")));
      flow_id = json_object_get_int64(get(e, "id"));
      flows |= 2;
    }
  }
  assert_int_equal(flows, 3);
  int seen = 0;
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    if (!json_object_object_get_ex(e, "cat", &c) ||
        strcmp(json_object_get_string(c), "nvtx") != 0)
      continue;
    assert_int_equal(json_object_get_int64(get(e, "pid")), 4242);
    const char *name = get_str(e, "name");
    json_object *args = get(e, "args");
    if (strcmp(name, "forward") == 0) {
      assert_int_equal(get_ns(e, "ts"), 0); /* the earliest event */
      assert_int_equal(get_ns(e, "dur"), 8000);
      assert_string_equal(get_str(args, "domain"), "default");
      seen |= 1;
    } else if (strcmp(name, "attention") == 0) {
      assert_int_equal(json_object_get_int64(get(e, "tid")), 11);
      assert_int_equal(get_ns(e, "ts"), 500);
      assert_string_equal(get_str(args, "domain"), "model");
      seen |= 2;
    } else if (strcmp(name, "loader") == 0) {
      assert_int_equal(json_object_get_int64(get(e, "tid")), 12);
      assert_string_equal(get_str(args, "color"), "#00ff00");
      seen |= 4;
    }
  }
  assert_int_equal(seen, 7);
  json_object_put(doc);
  release(&in);
}

/* PM counters: one counter track per metric on its GPU. */
static void test_counters(void **state) {
  (void)state;
  const char *path = test_path("counters.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t k = tt_kernel(w, "_Z4stepv", "step()", d, 32, 0, 0x1234);
  tt_launch(w, tt_shape(w, k, 132, 256, 0), s, 2000, 5000);
  tt_pm_metric(w, d, 0, "dram__throughput.avg.pct_of_peak", "percent", 0);
  tt_pm_metric(w, d, 1, "sm__throughput.avg.pct_of_peak", "percent", 0);
  for (uint64_t i = 0; i < 4; i++) {
    const float values[2] = {10.0f * (float)(i + 1),
                             i == 2 ? __builtin_nanf("") : 50.0f};
    tt_pm_sample(w, d, 1000 + i * 1000, 2000 + i * 1000, 2, values);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
  sample_input in;
  load_path(&in, path, 0);
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  json_object *doc =
      export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS, NULL, &rc, NULL);
  assert_int_equal(rc, 0);
  json_object *events = get(doc, "traceEvents");
  /* 4 DRAM values, 3 SM values (one sample did not measure it). */
  assert_int_equal(count_cat(events, "pm"), 7);
  int64_t gpu_pid = -1;
  double dram_sum = 0;
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i), *c;
    if (strcmp(get_str(e, "ph"), "X") == 0)
      gpu_pid = json_object_get_int64(get(e, "pid")); /* the launch */
    if (!json_object_object_get_ex(e, "cat", &c) ||
        strcmp(json_object_get_string(c), "pm") != 0)
      continue;
    assert_string_equal(get_str(e, "ph"), "C");
    if (strncmp(get_str(e, "name"), "dram", 4) == 0) {
      dram_sum += json_object_get_double(get(get(e, "args"), "percent"));
      if (get_ns(e, "ts") == 0) /* the first sample is the earliest event */
        assert_true(json_object_get_double(get(get(e, "args"), "percent")) ==
                    10.0);
    }
  }
  assert_true(dram_sum == 100.0);
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i);
    if (strcmp(get_str(e, "ph"), "C") == 0)
      assert_int_equal(json_object_get_int64(get(e, "pid")), gpu_pid);
  }
  json_object_put(doc);
  release(&in);
}

/* Two traces: two processes, on one clock, with their own GPU tracks. */
static void test_trace_set(void **state) {
  (void)state;
  sample_input a, b;
  load_sample(&a, "demo.mprof");
  load_sample(&b, "gemm.mprof");
  const mprof_diagnosis *set[2] = {a.diagnosis, b.diagnosis};
  int rc;
  json_object *doc =
      export_json(set, 2, MPROF_EXPORT_TRACE_EVENTS, NULL, &rc, NULL);
  assert_int_equal(rc, 0);
  json_object *events = get(doc, "traceEvents");
  size_t la, lb;
  mprof_trace_launches(a.trace, &la);
  mprof_trace_launches(b.trace, &lb);
  assert_int_equal(count_cat(events, "kernel"), la + lb);
  assert_int_equal(
      json_object_array_length(get(get(doc, "otherData"), "traces")), 2);
  uint64_t oa = trace_origin(a.trace), ob = trace_origin(b.trace);
  assert_int_equal(
      strtoull(get_str(get(doc, "otherData"), "origin_ns"), NULL, 10),
      oa < ob ? oa : ob);
  /* Two GPU processes named after their trace. */
  size_t gpu_names = 0;
  for (size_t i = 0; i < json_object_array_length(events); i++) {
    json_object *e = json_object_array_get_idx(events, i);
    if (strcmp(get_str(e, "name"), "process_name") == 0 &&
        strncmp(get_str(get(e, "args"), "name"), "GPU 0: ", 7) == 0)
      gpu_names++;
  }
  assert_int_equal(gpu_names, 2);
  check_threads(events);
  json_object_put(doc);
  release(&b);
  release(&a);
}

/* speedscope: per kernel, stacks of kernel → line → SASS weighted by the
 * samples the join counted. */
static void test_speedscope_on_samples(void **state) {
  (void)state;
  sample_input in;
  load_sample(&in, "transformer_forward.mprof");
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  mprof_export_report rep = MPROF_EXPORT_REPORT_INIT;
  json_object *doc =
      export_json(set, 1, MPROF_EXPORT_SPEEDSCOPE, NULL, &rc, &rep);
  assert_int_equal(rc, 0);
  assert_string_equal(get_str(doc, "$schema"),
                      "https://www.speedscope.app/file-format-schema.json");
  json_object *frames = get(get(doc, "shared"), "frames");
  json_object *profiles = get(doc, "profiles");
  size_t frame_count = json_object_array_length(frames);
  assert_int_equal(rep.frames, frame_count);
  size_t with_samples = 0;
  for (size_t k = 0; k < mprof_join_kernel_count(in.join); k++)
    with_samples += mprof_join_kernel(in.join, k)->samples > 0;
  assert_int_equal(json_object_array_length(profiles), with_samples);
  assert_int_equal(rep.profiles, with_samples);
  size_t p = 0;
  for (size_t k = 0; k < mprof_join_kernel_count(in.join); k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(in.join, k);
    if (!ks->samples)
      continue;
    json_object *prof = json_object_array_get_idx(profiles, p++);
    assert_string_equal(get_str(prof, "type"), "sampled");
    char short_name[256];
    mprof_name_short(short_name, sizeof short_name, ks->name);
    assert_non_null(strstr(get_str(prof, "name"), short_name));
    json_object *samples = get(prof, "samples"),
                *weights = get(prof, "weights");
    assert_int_equal(json_object_array_length(samples),
                     json_object_array_length(weights));
    uint64_t total = 0;
    for (size_t i = 0; i < json_object_array_length(weights); i++) {
      total += (uint64_t)json_object_get_int64(
          json_object_array_get_idx(weights, i));
      json_object *stack = json_object_array_get_idx(samples, i);
      size_t depth = json_object_array_length(stack);
      assert_true(depth == 2 || depth == 3);
      for (size_t j = 0; j < depth; j++)
        assert_true((size_t)json_object_get_int64(
                        json_object_array_get_idx(stack, j)) < frame_count);
      /* The root is the kernel. */
      json_object *root = json_object_array_get_idx(
          frames, json_object_get_int64(json_object_array_get_idx(stack, 0)));
      assert_string_equal(get_str(root, "name"), short_name);
    }
    assert_int_equal(total, ks->samples);
    assert_int_equal(json_object_get_int64(get(prof, "endValue")), total);
  }
  /* The hottest instruction of the dominant kernel is a frame, with the
   * SASS summary shows. */
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(in.diagnosis, 0);
  assert_true(kd->hot_count > 0 && *kd->hot[0].sass);
  char want[512];
  snprintf(want, sizeof want, "+0x%04x  %s", kd->hot[0].offset,
           kd->hot[0].sass);
  int found = 0;
  for (size_t i = 0; i < frame_count && !found; i++)
    found = strcmp(get_str(json_object_array_get_idx(frames, i), "name"),
                   want) == 0;
  if (!found)
    fail_msg("no frame '%s'", want);
  json_object_put(doc);
  release(&in);
}

static void test_errors(void **state) {
  (void)state;
  sample_input in;
  load_sample(&in, "gemm.mprof");
  const mprof_diagnosis *set[1] = {in.diagnosis};
  int rc;
  assert_null(export_json(set, 1, MPROF_EXPORT_TRACE_EVENTS, "no_such_kernel",
                          &rc, NULL));
  assert_int_equal(rc, MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "no kernel matches"));
  assert_null(export_json(set, 1, MPROF_EXPORT_SPEEDSCOPE, "([", &rc, NULL));
  assert_int_equal(rc, MPROF_EINVAL);
  assert_null(export_json(set, 1, 7, NULL, &rc, NULL));
  assert_int_equal(rc, MPROF_EINVAL);
  /* A database goes to a file, never to a stream. */
  assert_null(export_json(set, 1, MPROF_EXPORT_SQLITE, NULL, &rc, NULL));
  assert_int_equal(rc, MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "written to a file"));
  /* Options of version 1 (before progress) are still read. */
  mprof_export_options v1 = MPROF_EXPORT_OPTIONS_INIT;
  v1.version = 1;
  const char *v1_out = test_path("v1.json");
  assert_int_equal(mprof_export_file(v1_out, set, 1, &v1, NULL), 0);
  assert_int_equal(access(v1_out, F_OK), 0);
  v1.version = 3;
  assert_int_equal(mprof_export_file(v1_out, set, 1, &v1, NULL),
                   MPROF_EVERSION);
  release(&in);

  /* No PC samples: no speedscope profile, and the message says why. */
  load_path(&in, sample_path("gemm.mprof"), 0);
  const char *path = test_path("nosamples.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  uint32_t s = tt_stream(w, d, 7);
  uint32_t k = tt_kernel(w, "_Z4stepv", "step()", d, 32, 0, 0x1234);
  tt_launch(w, tt_shape(w, k, 132, 256, 0), s, 2000, 5000);
  assert_int_equal(mprof_writer_finish(w), 0);
  release(&in);
  load_path(&in, path, 0);
  set[0] = in.diagnosis;
  assert_null(export_json(set, 1, MPROF_EXPORT_SPEEDSCOPE, NULL, &rc, NULL));
  assert_int_equal(rc, MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "no kernel has PC samples"));
  /* The file variant leaves nothing behind. */
  mprof_export_options eo = MPROF_EXPORT_OPTIONS_INIT;
  eo.format = MPROF_EXPORT_SPEEDSCOPE;
  const char *out = test_path("nosamples.speedscope.json");
  assert_int_equal(mprof_export_file(out, set, 1, &eo, NULL), MPROF_ENOTFOUND);
  assert_int_not_equal(access(out, F_OK), 0);
  char partial[1100];
  snprintf(partial, sizeof partial, "%s.%ld.partial", out, (long)getpid());
  assert_int_not_equal(access(partial, F_OK), 0);
  release(&in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace_events_on_samples),
      cmocka_unit_test(test_trace_events_carry_the_verdict),
      cmocka_unit_test(test_spans_per_sm),
      cmocka_unit_test(test_ranges_per_thread),
      cmocka_unit_test(test_counters),
      cmocka_unit_test(test_trace_set),
      cmocka_unit_test(test_speedscope_on_samples),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
