/*
 * mprof tests — source instrumentation: the .source reader, the clock map,
 * the alignment arithmetic and merging spans into a trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <math.h>

#include "analysis_util.h"
#include "test_util.h"

#include "mprof/mprof.h"
#include "mprof/source.h"

/* ---- alignment arithmetic ------------------------------------------------ */

/* Deterministic jitter in [-amplitude, amplitude]. */
static int64_t jitter(uint64_t *state, int64_t amplitude) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t x = *state >> 33;
  return (int64_t)(x % (uint64_t)(2 * amplitude + 1)) - amplitude;
}

static void test_align_recovers_offset(void **state) {
  (void)state;
  enum { N = 101 };
  const int64_t truth = 212345; /* CUPTI start - first span, ns */
  int64_t reference[N], measured[N], noise[N], sorted[N];
  uint64_t rng = 7;
  for (int i = 0; i < N; i++) {
    measured[i] = 1000000000ll + (int64_t)i * 1000000; /* 1 ms apart */
    noise[i] = jitter(&rng, 400);
    reference[i] = measured[i] + truth + noise[i];
    sorted[i] = noise[i];
  }
  /* The expected values, computed the slow way. */
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++)
      if (sorted[j] < sorted[i]) {
        int64_t t = sorted[i];
        sorted[i] = sorted[j];
        sorted[j] = t;
      }
  int64_t median_noise = sorted[(N - 1) / 2];
  uint64_t worst = 0;
  for (int i = 0; i < N; i++) {
    int64_t d = noise[i] - median_noise;
    uint64_t a = (uint64_t)(d < 0 ? -d : d);
    worst = a > worst ? a : worst;
  }
  mprof_source_alignment a = MPROF_SOURCE_ALIGNMENT_INIT;
  assert_int_equal(mprof_source_align(&a, reference, measured, N), 0);
  assert_int_equal(a.launches, N);
  assert_true(a.offset_ns == truth + median_noise);
  assert_true(a.offset_ns >= truth - 400 && a.offset_ns <= truth + 400);
  assert_true(a.error_max_ns == worst);
  assert_true(a.error_max_ns <= 800);
  assert_true(a.error_median_ns <= a.error_max_ns);
  assert_true(a.error_median_ns > 0 && a.error_median_ns <= 400);
  assert_true(fabs(a.drift_ppm) < 5.0); /* noise only: ~1 ppm */
}

static void test_align_ignores_outliers_in_offset(void **state) {
  (void)state;
  /* Nine launches at the true offset, one 50 µs off: the median keeps the
   * offset, the error reports the outlier. */
  int64_t reference[10], measured[10];
  for (int i = 0; i < 10; i++) {
    measured[i] = 5000000 + i * 200000;
    reference[i] = measured[i] + 230000 + (i == 4 ? 50000 : 0);
  }
  mprof_source_alignment a = MPROF_SOURCE_ALIGNMENT_INIT;
  assert_int_equal(mprof_source_align(&a, reference, measured, 10), 0);
  assert_true(a.offset_ns == 230000);
  assert_true(a.error_max_ns == 50000);
  assert_true(a.error_median_ns == 0);
}

static void test_align_measures_drift(void **state) {
  (void)state;
  /* A 20 ppm rate difference over 1 s shows as ~20 ppm. */
  int64_t reference[50], measured[50];
  for (int i = 0; i < 50; i++) {
    measured[i] = (int64_t)i * 20000000;                       /* 20 ms apart */
    reference[i] = measured[i] + 100000 + measured[i] / 50000; /* 20 ppm */
  }
  mprof_source_alignment a = MPROF_SOURCE_ALIGNMENT_INIT;
  assert_int_equal(mprof_source_align(&a, reference, measured, 50), 0);
  assert_true(a.drift_ppm > 19.5 && a.drift_ppm < 20.5);
}

static void test_align_rejects_empty(void **state) {
  (void)state;
  mprof_source_alignment a = MPROF_SOURCE_ALIGNMENT_INIT;
  int64_t x = 0;
  assert_int_equal(mprof_source_align(&a, &x, &x, 0), MPROF_EINVAL);
  /* A struct of a version this library does not know is left alone. */
  a.version = 99;
  a.launches = 7;
  assert_int_equal(mprof_source_align(&a, &x, &x, 1), MPROF_EVERSION);
  assert_int_equal(a.launches, 7);
  assert_non_null(strstr(mprof_error_last(),
                         "source alignment version 99 is not supported"));
}

static void test_kernel_basename(void **state) {
  (void)state;
  char out[64];
  static const char *const cases[][2] = {
      {"_Z11sgemm_tilediiiPKfS0_Pf", "sgemm_tiled"},
      {"_Z11sgemm_tilediiiPKfS0_Pf19mprof_source_launch", "sgemm_tiled"},
      {"_ZN2ns6kernelEv", "kernel"},
      {"_ZN5outer5inner4stepILi4EEEvPf", "step"},
      {"_Z6reduceIfEvPT_", "reduce"},
      {"sgemm_tiled", "sgemm_tiled"},
      {"sgemm_tiled(int, int, int, float const*)", "sgemm_tiled"},
      {"void ns::step<4>(float*)", "step"},
      {"ns::kernel", "kernel"},
      {"extern_c_kernel", "extern_c_kernel"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(mprof_source_kernel_basename(out, sizeof out, cases[i][0]),
                     0);
    assert_string_equal(out, cases[i][1]);
  }
  char tiny[4];
  assert_int_equal(mprof_source_kernel_basename(tiny, sizeof tiny, "long_name"),
                   MPROF_EINVAL);
}

/* ---- .source files --------------------------------------------------------
 * Written here byte by byte from the documented layout (producers/source/
 * README.md), so the test also checks that the layout is what the reader
 * expects. */

typedef struct source_spec {
  const char *regions[4];
  uint32_t roles[4];
  size_t region_count;
  const char *kernels[3];
  size_t kernel_count;
  mprof_source_file_launch launches[16];
  size_t launch_count;
  mprof_source_file_record records[512];
  size_t record_count;
  uint64_t overflow;
  uint32_t timer_step;
} source_spec;

static unsigned char *build_source(const source_spec *s, size_t *size) {
  char strings[512];
  size_t used = 1;
  strings[0] = '\0';
  uint32_t region_name[4], kernel_name[3];
  for (size_t i = 0; i < s->region_count; i++) {
    region_name[i] = (uint32_t)used;
    size_t n = strlen(s->regions[i]) + 1;
    memcpy(strings + used, s->regions[i], n);
    used += n;
  }
  for (size_t i = 0; i < s->kernel_count; i++) {
    kernel_name[i] = (uint32_t)used;
    size_t n = strlen(s->kernels[i]) + 1;
    memcpy(strings + used, s->kernels[i], n);
    used += n;
  }
  while (used % 8)
    strings[used++] = '\0';
  mprof_source_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MPROF_SOURCE_FILE_MAGIC, 8);
  h.version_major = 1;
  h.header_size = 128;
  h.region_count = (uint32_t)s->region_count;
  h.kernel_count = (uint32_t)s->kernel_count;
  h.launch_count = (uint32_t)s->launch_count;
  h.record_size = 48;
  h.record_count = s->record_count;
  h.overflow_count = s->overflow;
  h.capacity = 1 << 20;
  h.strings_size = (uint32_t)used;
  h.timer_step_ns = s->timer_step;
  h.timer_step_max_ns = s->timer_step ? 3 * s->timer_step : 0;
  *size = 128 + 16 * s->region_count + 8 * s->kernel_count +
          40 * s->launch_count + used + 48 * s->record_count;
  unsigned char *out = (unsigned char *)calloc(1, *size);
  unsigned char *p = out;
  memcpy(p, &h, 128);
  p += 128;
  for (size_t i = 0; i < s->region_count; i++) {
    mprof_source_file_region r = {region_name[i], s->roles[i], 0, 0};
    memcpy(p, &r, 16);
    p += 16;
  }
  for (size_t i = 0; i < s->kernel_count; i++) {
    mprof_source_file_kernel k = {kernel_name[i], 0};
    memcpy(p, &k, 8);
    p += 8;
  }
  memcpy(p, s->launches, 40 * s->launch_count);
  p += 40 * s->launch_count;
  memcpy(p, strings, used);
  p += used;
  memcpy(p, s->records, 48 * s->record_count);
  return out;
}

static void small_spec(source_spec *s) {
  memset(s, 0, sizeof *s);
  s->regions[0] = "load";
  s->roles[0] = MPROF_ROLE_LOADER;
  s->regions[1] = "fma";
  s->roles[1] = MPROF_ROLE_CONSUMER;
  s->region_count = 2;
  s->kernels[0] = "k";
  s->kernel_count = 1;
  mprof_source_file_launch l = {0, 0, {2, 1, 1}, {64, 1, 1}, 0};
  s->launches[0] = l;
  s->launch_count = 1;
  for (uint32_t i = 0; i < 3; i++) {
    mprof_source_file_record r = {1000 + 100 * i, 1050 + 100 * i,   0,     0, 5,
                                  i & 1,          MPROF_INDEX_NONE, i & 1, i};
    s->records[i] = r;
  }
  s->record_count = 3;
  s->timer_step = 32;
}

static void test_source_file_round_trip(void **state) {
  (void)state;
  source_spec s;
  small_spec(&s);
  s.overflow = 9;
  size_t size;
  unsigned char *bytes = build_source(&s, &size);
  const char *path = test_path("round.source");
  assert_int_equal(test_write_file(path, bytes, size), 0);
  free(bytes);
  mprof_source_file *f;
  assert_int_equal(mprof_source_file_open(&f, path), 0);
  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  assert_int_equal(h->overflow_count, 9);
  assert_int_equal(h->timer_step_ns, 32);
  size_t n;
  const mprof_source_file_region *r = mprof_source_file_regions(f, &n);
  assert_int_equal(n, 2);
  assert_string_equal(mprof_source_file_string(f, r[1].name), "fma");
  assert_int_equal(r[1].role, MPROF_ROLE_CONSUMER);
  const mprof_source_file_kernel *k = mprof_source_file_kernels(f, &n);
  assert_int_equal(n, 1);
  assert_string_equal(mprof_source_file_string(f, k[0].name), "k");
  const mprof_source_file_record *rec = mprof_source_file_records(f, &n);
  assert_int_equal(n, 3);
  assert_int_equal(rec[2].start, 1200);
  assert_int_equal(rec[2].payload, 2);
  mprof_source_file_free(f);
  mprof_source_file_free(NULL);
}

static void expect_source_error(const char *name, const unsigned char *bytes,
                                size_t size, int status, const char *needle) {
  const char *path = test_path(name);
  assert_int_equal(test_write_file(path, bytes, size), 0);
  mprof_source_file *f = NULL;
  int rc = mprof_source_file_open(&f, path);
  if (rc != status || !strstr(mprof_error_last(), needle) ||
      !strstr(mprof_error_last(), path))
    fail_msg("%s: got %d '%s', wanted %d with '%s'", name, rc,
             mprof_error_last(), status, needle);
  assert_null(f);
}

static void test_source_file_errors(void **state) {
  (void)state;
  source_spec s;
  small_spec(&s);
  size_t size;
  unsigned char *good = build_source(&s, &size);
  unsigned char *bad = (unsigned char *)malloc(size + 8);
  /* Every truncation is an error that names a byte offset. */
  for (size_t cut = 0; cut < size; cut++)
    expect_source_error("cut.source", good, cut, MPROF_EFORMAT, "at byte");
  memcpy(bad, good, size);
  bad[0] = 'X';
  expect_source_error("magic.source", bad, size, MPROF_EFORMAT, "bad magic");
  memcpy(bad, good, size);
  bad[8] = 2;
  expect_source_error("version.source", bad, size, MPROF_EVERSION,
                      "format version 2.0");
  memcpy(bad, good, size);
  bad[120] = 1;
  expect_source_error("reserved.source", bad, size, MPROF_EFORMAT,
                      "reserved byte");
  memcpy(bad, good, size);
  memset(bad + size, 0, 8);
  expect_source_error("trailing.source", bad, size + 8, MPROF_EFORMAT,
                      "8 bytes after the last record");
  /* A record naming launch 7 of 1. */
  mprof_source_file_record r = s.records[1];
  r.launch = 7;
  memcpy(bad, good, size);
  memcpy(bad + size - 2 * 48, &r, 48);
  expect_source_error("launch.source", bad, size, MPROF_EFORMAT,
                      "record 1: launch 7 does not exist");
  r = s.records[2];
  r.end = r.start - 1;
  memcpy(bad, good, size);
  memcpy(bad + size - 48, &r, 48);
  expect_source_error("order.source", bad, size, MPROF_EFORMAT,
                      "record 2: ends before it starts");
  /* A record count so large the sizes overflow. */
  memcpy(bad, good, size);
  uint64_t huge = UINT64_MAX / 8;
  memcpy(bad + 32, &huge, 8);
  expect_source_error("huge.source", bad, size, MPROF_EFORMAT, "truncated");
  free(bad);
  free(good);
  mprof_source_file *f;
  assert_int_equal(
      mprof_source_file_open(&f, test_path("does-not-exist.source")),
      MPROF_ENOTFOUND);
}

/* ---- merging ------------------------------------------------------------ */

#define ANCHOR_TRACE 5000000000ll         /* CLOCK_MONOTONIC_RAW */
#define ANCHOR_REAL 1764000000000000000ll /* CLOCK_REALTIME */
#define TRUE_OFFSET                                                            \
  211000ll /* CUPTI start - first span, on the trace clock                     \
            */

typedef struct fake_run {
  int kernels;             /* 2 */
  int launches_per_kernel; /* instrumented, per kernel */
  int extra_cupti;         /* uninstrumented launches of kernel 0 */
  int blocks;              /* per launch */
} fake_run;

static const char *fake_mangled[] = {"_Z11sgemm_tilediiiPKfS0_Pf",
                                     "_Z17layernorm_forwardPKfS0_"};
static const char *fake_source_names[] = {"sgemm_tiled", "layernorm_forward"};

/* CUPTI start of the i-th instrumented launch (all kernels interleaved). */
static uint64_t fake_start(int i) {
  return (uint64_t)(ANCHOR_TRACE + 10000000 + (int64_t)i * 1000000);
}

/* A trace as the CUPTI producer writes it, and the matching .source file. */
static void write_fake_run(const fake_run *run, const char *trace_path,
                           const char *source_path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, trace_path, NULL), 0);
  tt_clock_meta(w, ANCHOR_TRACE, ANCHOR_REAL);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.id = 0;
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.sm_count = 132;
  uint32_t d, s;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  mprof_stream_record st = {d, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  uint32_t shape[2];
  for (int k = 0; k < run->kernels; k++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, fake_mangled[k]);
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d;
    uint32_t ki;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = (uint32_t)run->blocks;
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 256;
    sh.block[1] = sh.block[2] = 1;
    assert_int_equal(
        mprof_writer_intern(w, &shape[k], MPROF_SECTION_SHAPES, &sh), 0);
  }
  /* A cuBLAS-like kernel nobody instrumented, between them. */
  mprof_kernel_record other;
  memset(&other, 0, sizeof other);
  other.mangled_name = mprof_writer_string(w, "sm90_xmma_gemm_f32f32");
  other.function_index = MPROF_INDEX_NONE;
  uint32_t oi, osh;
  assert_int_equal(mprof_writer_intern(w, &oi, MPROF_SECTION_KERNELS, &other),
                   0);
  mprof_shape_record os;
  memset(&os, 0, sizeof os);
  os.kernel = oi;
  os.grid[0] = os.grid[1] = os.grid[2] = 1;
  os.block[0] = os.block[1] = os.block[2] = 1;
  assert_int_equal(mprof_writer_intern(w, &osh, MPROF_SECTION_SHAPES, &os), 0);

  source_spec *spec = (source_spec *)calloc(1, sizeof *spec);
  spec->regions[0] = "load";
  spec->roles[0] = MPROF_ROLE_LOADER;
  spec->regions[1] = "compute";
  spec->roles[1] = MPROF_ROLE_CONSUMER;
  spec->region_count = 2;
  spec->kernels[0] = fake_source_names[0];
  spec->kernels[1] = fake_source_names[1];
  spec->kernel_count = (size_t)run->kernels;
  spec->overflow = 17;
  spec->timer_step = 32;
  uint64_t rng = 99;
  int total = run->kernels * run->launches_per_kernel;
  for (int i = 0; i < total; i++) {
    int k = i % run->kernels;
    uint64_t start = fake_start(i);
    uint64_t dur = 300000;
    mprof_launch_record l = {start,           start + dur, shape[k], s,
                             (uint32_t)i + 1, 0,           0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
    mprof_launch_record o = {start + 400000, start + 450000, osh, s, 0, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &o),
                     0);
    mprof_source_file_launch sl = {
        (uint32_t)k, 0, {(uint32_t)run->blocks, 1, 1}, {256, 1, 1}, 0};
    spec->launches[spec->launch_count++] = sl;
    /* Spans: the first block starts 1-2 µs after the CUPTI start (plus the
     * clock offset), the rest inside. */
    int64_t first = (int64_t)start - TRUE_OFFSET - ANCHOR_TRACE + ANCHOR_REAL +
                    1000 + jitter(&rng, 500);
    for (int b = 0; b < run->blocks; b++) {
      for (int r = 0; r < 2; r++) {
        mprof_source_file_record rec;
        memset(&rec, 0, sizeof rec);
        rec.start = (uint64_t)first + (uint64_t)b * 5000 + (uint64_t)r * 2000;
        rec.end = rec.start + 1500;
        rec.launch = (uint32_t)i;
        rec.kernel = (uint32_t)k;
        rec.sm = (uint32_t)b;
        rec.block = (uint32_t)b;
        rec.warp = r ? 3u : MPROF_INDEX_NONE;
        rec.region = (uint32_t)r;
        rec.payload = (uint64_t)b * 16;
        spec->records[spec->record_count++] = rec;
      }
    }
  }
  for (int e = 0; e < run->extra_cupti; e++) {
    uint64_t start = fake_start(total + 5 + e);
    mprof_launch_record l = {start, start + 300000, shape[0], s, 0, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  assert_int_equal(
      mprof_writer_drop(w, MPROF_DROP_ACTIVITY_RECORDS, MPROF_INDEX_NONE, 0),
      0);
  assert_int_equal(mprof_writer_finish(w), 0);
  size_t size;
  unsigned char *bytes = build_source(spec, &size);
  assert_int_equal(test_write_file(source_path, bytes, size), 0);
  free(bytes);
  free(spec);
}

static int64_t meta_int(const mprof_trace *t, const char *key) {
  const char *v = mprof_trace_meta(t, key);
  if (!v)
    fail_msg("META %s is missing", key);
  return strtoll(v, NULL, 10);
}

static void check_merged(const char *path, const fake_run *run,
                         const char *method) {
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  int total = run->kernels * run->launches_per_kernel;
  assert_string_equal(mprof_trace_meta(t, "source.alignment_method"), method);
  assert_int_equal(meta_int(t, "source.events"), total * run->blocks * 2);
  assert_int_equal(meta_int(t, "source.launches_matched"), total);
  assert_int_equal(meta_int(t, "source.globaltimer_step_ns"), 32);
  /* The offset found is the clocks' offset less the first block's start
   * latency (1000 ns ± 500 of jitter): alignment puts the first span of
   * the median launch at its CUPTI start. */
  int64_t offset = meta_int(t, "source.alignment_offset_ns");
  assert_true(offset >= TRUE_OFFSET - 1500 && offset <= TRUE_OFFSET - 500);
  int64_t error = meta_int(t, "source.alignment_error_ns");
  assert_true(error >= 0 && error <= 1000);
  assert_int_equal(meta_int(t, "source.spans_outside_launch"), 0);
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_SPAN_OVERFLOW), 17);
  size_t n, nl, nk, ns;
  const mprof_region_record *rg = mprof_trace_regions(t, &n);
  assert_int_equal(n, 2);
  assert_string_equal(mprof_trace_string(t, rg[1].name), "compute");
  assert_int_equal(rg[1].role, MPROF_ROLE_CONSUMER);
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_shape_record *sh = mprof_trace_shapes(t, &ns);
  const mprof_kernel_record *k = mprof_trace_kernels(t, &nk);
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  assert_int_equal(n, (size_t)(total * run->blocks * 2));
  for (size_t i = 0; i < n; i++) {
    assert_true(sp[i].launch != MPROF_INDEX_NONE);
    const mprof_launch_record *li = &l[sp[i].launch];
    /* every span inside its launch, on the launch of the right kernel */
    assert_true(sp[i].start >= li->start - error && sp[i].end <= li->end);
    const char *name =
        mprof_trace_string(t, k[sh[li->shape].kernel].mangled_name);
    assert_true(strcmp(name, fake_mangled[0]) == 0 ||
                strcmp(name, fake_mangled[1]) == 0);
    assert_int_equal(sp[i].end - sp[i].start, 1500);
    assert_int_equal(sp[i].payload, sp[i].block * 16);
    assert_int_equal(sp[i].flags & MPROF_SPAN_FLAG_WARP,
                     sp[i].warp != MPROF_INDEX_NONE ? MPROF_SPAN_FLAG_WARP : 0);
    /* the first span of a launch starts about 1 µs after its CUPTI start */
    if (sp[i].block == 0 && sp[i].region == 0) {
      int64_t lead = (int64_t)sp[i].start - (int64_t)li->start;
      assert_true(lead >= -(int64_t)error && lead <= (int64_t)error);
    }
    if (i > 0 && sp[i].launch == sp[i - 1].launch)
      assert_true(sp[i].start >= sp[i - 1].start);
  }
  mprof_trace_free(t);
}

static void test_merge_by_name_and_order(void **state) {
  (void)state;
  fake_run run = {2, 6, 0, 3};
  const char *trace = test_path("order.mprof");
  const char *source = test_path("order.mprof.source");
  write_fake_run(&run, trace, source);
  const char *out = test_path("order-merged.mprof");
  mprof_source_merge_report rep = MPROF_SOURCE_MERGE_REPORT_INIT;
  assert_int_equal(mprof_source_merge(trace, source, out, NULL, &rep), 0);
  assert_int_equal(rep.matched_by_order, 12);
  assert_int_equal(rep.matched_by_time, 0);
  assert_int_equal(rep.unmatched, 0);
  assert_int_equal(rep.overflow, 17);
  assert_int_equal(rep.spans, 72);
  assert_string_equal(rep.method, "name+order");
  check_merged(out, &run, "name+order");
  /* In place, then refused the second time. */
  assert_int_equal(mprof_source_merge(trace, source, trace, NULL, NULL), 0);
  check_merged(trace, &run, "name+order");
  assert_int_equal(mprof_source_merge(trace, source, trace, NULL, NULL),
                   MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "already holds"));
}

/* Spans in regions the file does not name: a "region N" for each of the
 * first 256 ids, then one region that the rest share. */
static void test_merge_unnamed_regions(void **state) {
  (void)state;
  fake_run run = {2, 1, 0, 1};
  const char *trace = test_path("unnamed.mprof");
  const char *source = test_path("unnamed.mprof.source");
  write_fake_run(&run, trace, source);
  source_spec *spec = (source_spec *)calloc(1, sizeof *spec);
  small_spec(spec);
  spec->record_count = 300;
  for (uint32_t i = 0; i < 300; i++) {
    mprof_source_file_record *r = &spec->records[i];
    memset(r, 0, sizeof *r);
    r->start = ANCHOR_REAL + 1000 * (uint64_t)i;
    r->end = r->start + 500;
    r->warp = MPROF_INDEX_NONE;
    r->region = 2 + i % 280; /* 280 unnamed ids, the first 20 again */
  }
  size_t size;
  unsigned char *bytes = build_source(spec, &size);
  assert_int_equal(test_write_file(source, bytes, size), 0);
  free(bytes);
  free(spec);
  const char *out = test_path("unnamed-merged.mprof");
  mprof_source_merge_report rep = MPROF_SOURCE_MERGE_REPORT_INIT;
  assert_int_equal(mprof_source_merge(trace, source, out, NULL, &rep), 0);
  assert_int_equal(rep.regions, 2 + 256 + 1);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  size_t n;
  const mprof_region_record *rg = mprof_trace_regions(t, &n);
  assert_int_equal(n, 2 + 256 + 1);
  assert_string_equal(mprof_trace_string(t, rg[1].name), "fma");
  assert_string_equal(mprof_trace_string(t, rg[2].name), "region 2");
  assert_string_equal(mprof_trace_string(t, rg[257].name), "region 257");
  assert_string_equal(mprof_trace_string(t, rg[258].name),
                      "other unnamed regions");
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  assert_int_equal(n, 300);
  for (uint32_t i = 0; i < 300; i++)
    assert_int_equal(sp[i].region, i % 280 < 256 ? 2 + i % 280 : 258);
  mprof_trace_free(t);
}

static void test_merge_by_time(void **state) {
  (void)state;
  /* Two launches of kernel 0 that were not instrumented: the counts differ,
   * so kernel 0 is matched by time; kernel 1 still by order. */
  fake_run run = {2, 5, 2, 2};
  const char *trace = test_path("time.mprof");
  const char *source = test_path("time.mprof.source");
  write_fake_run(&run, trace, source);
  const char *out = test_path("time-merged.mprof");
  mprof_source_merge_report rep = MPROF_SOURCE_MERGE_REPORT_INIT;
  assert_int_equal(mprof_source_merge(trace, source, out, NULL, &rep), 0);
  assert_int_equal(rep.matched_by_order, 5);
  assert_int_equal(rep.matched_by_time, 5);
  check_merged(out, &run, "mixed");
  /* One instrumented kernel only, with extra launches: all by time, from
   * the densest window of candidate differences. */
  fake_run single = {1, 8, 3, 2};
  write_fake_run(&single, trace, source);
  assert_int_equal(mprof_source_merge(trace, source, out, NULL, &rep), 0);
  assert_int_equal(rep.matched_by_time, 8);
  check_merged(out, &single, "time");
}

static void test_merge_fixed_offset_and_errors(void **state) {
  (void)state;
  fake_run run = {2, 3, 0, 1};
  const char *trace = test_path("fixed.mprof");
  const char *source = test_path("fixed.mprof.source");
  write_fake_run(&run, trace, source);
  const char *out = test_path("fixed-merged.mprof");
  mprof_source_merge_options opts = MPROF_SOURCE_MERGE_OPTIONS_INIT;
  opts.flags = MPROF_SOURCE_MERGE_FIXED_OFFSET;
  opts.offset_ns = 5;
  assert_int_equal(mprof_source_merge(trace, source, out, &opts, NULL), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  assert_string_equal(mprof_trace_meta(t, "source.alignment_method"), "fixed");
  assert_int_equal(meta_int(t, "source.alignment_offset_ns"), 5);
  mprof_trace_free(t);
  opts.version = 99;
  assert_int_equal(mprof_source_merge(trace, source, out, &opts, NULL),
                   MPROF_EVERSION);
  assert_int_equal(
      mprof_source_merge(trace, test_path("missing.source"), out, NULL, NULL),
      MPROF_ENOTFOUND);
}

static void test_clock_from_trace(void **state) {
  (void)state;
  fake_run run = {1, 1, 0, 1};
  const char *trace = test_path("clock.mprof");
  write_fake_run(&run, trace, test_path("clock.mprof.source"));
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  mprof_source_clock c;
  mprof_source_clock_from_trace(&c, t);
  assert_int_equal(c.anchored, 1);
  assert_true(mprof_source_clock_convert(&c, (uint64_t)ANCHOR_REAL + 777) ==
              ANCHOR_TRACE + 777);
  mprof_trace_free(t);
  /* Two anchors: the rate between them is applied. */
  mprof_source_clock two = {1000, 5000, 1.0 + 20e-6, 2};
  assert_true(mprof_source_clock_convert(&two, 5000 + 1000000000ull) ==
              1000 + 1000000000ll + 20000);
}

int main(int argc, char **argv) {
  /* For tests/cli/test_source_mkprof.sh: TRACE and TRACE.source; for
   * tests/gpu/selftest.sh the two kernels may be named (unmangled). */
  if ((argc == 3 || argc == 5) && strcmp(argv[1], "--write-run") == 0) {
    if (argc == 5) {
      fake_mangled[0] = fake_source_names[0] = argv[3];
      fake_mangled[1] = fake_source_names[1] = argv[4];
    }
    fake_run run = {2, 4, 0, 2};
    char source[4096];
    snprintf(source, sizeof source, "%s.source", argv[2]);
    write_fake_run(&run, argv[2], source);
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_align_recovers_offset),
      cmocka_unit_test(test_align_ignores_outliers_in_offset),
      cmocka_unit_test(test_align_measures_drift),
      cmocka_unit_test(test_align_rejects_empty),
      cmocka_unit_test(test_kernel_basename),
      cmocka_unit_test(test_source_file_round_trip),
      cmocka_unit_test(test_source_file_errors),
      cmocka_unit_test(test_merge_by_name_and_order),
      cmocka_unit_test(test_merge_unnamed_regions),
      cmocka_unit_test(test_merge_by_time),
      cmocka_unit_test(test_merge_fixed_offset_and_errors),
      cmocka_unit_test(test_clock_from_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
