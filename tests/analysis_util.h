/*
 * mprof tests — building small traces by hand for the join, diagnose and
 * diff suites.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_ANALYSIS_UTIL_H
#define MPROF_TEST_ANALYSIS_UTIL_H

#include "test_util.h"

#include "mprof/mprof.h"

#define REASON(x) MPROF_STALL_REASON_PREFIX x

/* The clock META a capture writes: CLOCK_MONOTONIC_RAW, its time
 * @p trace_ns at the moment CLOCK_REALTIME read @p realtime_ns. */
static inline void tt_clock_meta(mprof_writer *w, uint64_t trace_ns,
                                 uint64_t realtime_ns) {
  char text[32];
  assert_int_equal(mprof_writer_meta(w, "clock", "CLOCK_MONOTONIC_RAW"), 0);
  snprintf(text, sizeof text, "%llu", (unsigned long long)trace_ns);
  assert_int_equal(mprof_writer_meta(w, "clock.anchor.trace_ns", text), 0);
  snprintf(text, sizeof text, "%llu", (unsigned long long)realtime_ns);
  assert_int_equal(mprof_writer_meta(w, "clock.anchor.realtime_ns", text), 0);
}

/* A device with the H200's limits and @p sm_count SMs: CUDA ordinal @p id,
 * @p uuid_lo the first bytes of its UUID. Returns its index. */
static inline uint32_t tt_h200(mprof_writer *w, uint32_t id, uint32_t sm_count,
                               uint32_t uuid_lo) {
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.id = id;
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.cc_major = 9;
  dev.sm_count = sm_count;
  dev.warp_size = 32;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_sm = 2048;
  dev.max_blocks_per_sm = 32;
  dev.max_warps_per_sm = 64;
  dev.max_regs_per_block = 65536;
  dev.max_regs_per_sm = 65536;
  dev.max_shared_per_block = 232448;
  dev.max_shared_per_sm = 233472;
  dev.uuid_lo = uuid_lo;
  uint32_t index;
  assert_int_equal(mprof_writer_intern(w, &index, MPROF_SECTION_DEVICES, &dev),
                   0);
  return index;
}

/* A device with the H200's limits. */
static inline uint32_t tt_device(mprof_writer *w, uint32_t id) {
  return tt_h200(w, id, 132, id + 100);
}

/* PM metric @p column of device @p d: @p metric in @p unit, sampled every
 * @p interval_ns (0: unknown). */
static inline void tt_pm_metric(mprof_writer *w, uint32_t d, uint32_t column,
                                const char *metric, const char *unit,
                                uint64_t interval_ns) {
  mprof_pm_metric_record m;
  memset(&m, 0, sizeof m);
  m.device = d;
  m.column = column;
  m.name = mprof_writer_string(w, metric);
  m.unit = mprof_writer_string(w, unit);
  m.interval_ns = interval_ns;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PM_METRICS, &m),
                   0);
}

/* One PM window of device @p d, [@p start, @p end): @p values for its
 * first @p count columns, the others unknown (NaN). */
static inline void tt_pm_sample(mprof_writer *w, uint32_t d, uint64_t start,
                                uint64_t end, size_t count,
                                const float *values) {
  mprof_pm_sample_record ps;
  memset(&ps, 0, sizeof ps);
  ps.start = start;
  ps.end = end;
  ps.device = d;
  for (size_t c = 0; c < MPROF_PM_MAX_METRICS; c++)
    ps.value[c] = c < count ? values[c] : __builtin_nanf("");
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PM_SAMPLES, &ps),
                   0);
}

static inline uint32_t tt_stream(mprof_writer *w, uint32_t device,
                                 uint32_t id) {
  mprof_stream_record s = {device, 1, id, 0};
  uint32_t index;
  assert_int_equal(mprof_writer_intern(w, &index, MPROF_SECTION_STREAMS, &s),
                   0);
  return index;
}

static inline uint32_t tt_kernel(mprof_writer *w, const char *mangled,
                                 const char *demangled, uint32_t device,
                                 uint32_t registers, uint32_t static_shared,
                                 uint64_t crc) {
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.mangled_name = mprof_writer_string(w, mangled);
  k.demangled_name = mprof_writer_string(w, demangled);
  k.cubin_crc = crc;
  k.function_index = 3;
  k.device = device;
  k.registers = registers;
  k.static_shared = static_shared;
  uint32_t index;
  assert_int_equal(mprof_writer_intern(w, &index, MPROF_SECTION_KERNELS, &k),
                   0);
  return index;
}

static inline uint32_t tt_shape(mprof_writer *w, uint32_t kernel, uint32_t grid,
                                uint32_t block, uint32_t dynamic_shared) {
  mprof_shape_record s;
  memset(&s, 0, sizeof s);
  s.kernel = kernel;
  s.grid[0] = grid;
  s.grid[1] = s.grid[2] = 1;
  s.block[0] = block;
  s.block[1] = s.block[2] = 1;
  s.dynamic_shared = dynamic_shared;
  uint32_t index;
  assert_int_equal(mprof_writer_intern(w, &index, MPROF_SECTION_SHAPES, &s), 0);
  return index;
}

static inline void tt_launch(mprof_writer *w, uint32_t shape, uint32_t stream,
                             uint64_t start, uint64_t end) {
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.start = start;
  l.end = end;
  l.shape = shape;
  l.stream = stream;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
}

static inline void tt_reason(mprof_writer *w, uint32_t device, uint32_t index,
                             const char *name) {
  mprof_stall_reason_record r = {device, index, mprof_writer_string(w, name),
                                 0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &r), 0);
}

static inline void tt_sample(mprof_writer *w, uint32_t device,
                             const char *function, uint64_t crc,
                             uint32_t offset, uint32_t reason,
                             uint32_t samples) {
  mprof_pc_sample_record p;
  memset(&p, 0, sizeof p);
  p.cubin_crc = crc;
  p.function_name = mprof_writer_string(w, function);
  p.function_index = 3;
  p.pc_offset = offset;
  p.stall_reason = reason;
  p.samples = samples;
  p.device = device;
  p.drain = 1;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &p),
                   0);
}

/* Open @p path, join (with @p sidecar, may be NULL) and diagnose it. */
typedef struct tt_analysis {
  mprof_trace *trace;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
} tt_analysis;

static inline void tt_analyse(tt_analysis *a, const char *path,
                              const mprof_sidecar *sidecar) {
  memset(a, 0, sizeof *a);
  assert_int_equal(mprof_trace_open(&a->trace, path, NULL), 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = sidecar;
  int rc = mprof_join_build(&a->join, a->trace, &jo);
  if (rc)
    fprintf(stderr, "join: %s\n", mprof_error_last());
  assert_int_equal(rc, 0);
  rc = mprof_diagnose(&a->diagnosis, a->join, NULL);
  assert_int_equal(rc, 0);
}

static inline void tt_release(tt_analysis *a) {
  mprof_diagnosis_free(a->diagnosis);
  mprof_join_free(a->join);
  mprof_trace_free(a->trace);
  memset(a, 0, sizeof *a);
}

/* Write a report into memory; returns a malloc'ed NUL-terminated string. */
static inline char *tt_report(const mprof_diagnosis *d,
                              const mprof_report_options *opts, int *rc) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  *rc = mprof_diagnosis_write(f, d, opts);
  fclose(f);
  return text;
}

/* 0 when xmllint accepts @p text as well-formed XML, 1 when it refuses it.
 * xmllint is installed by tools/install-deps.sh (libxml2-utils): without it
 * the test fails, since a check that did not run is not a pass. */
static inline int tt_xmllint(const char *text) {
  if (system("command -v xmllint >/dev/null 2>&1") != 0)
    fail_msg("xmllint is missing: install libxml2-utils "
             "(tools/install-deps.sh does)");
  const char *path = test_path("report.xml");
  assert_int_equal(test_write_file(path, text, strlen(text)), 0);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
  int rc = system(cmd);
  unlink(path);
  return rc == 0 ? 0 : 1;
}

/* The path of docs/NAME in the source tree. */
static inline const char *tt_doc(const char *name) {
  static char buf[1024];
  const char *src = getenv("MPROF_SOURCE_DIR");
  snprintf(buf, sizeof buf, "%s/docs/%s", src && *src ? src : "..", name);
  return buf;
}

#endif
