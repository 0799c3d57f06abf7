/*
 * mprof tests — the per-line fixture (lines_fixture.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "analysis_util.h"

#include "mprof/mprof.h"

#include "lines_fixture.h"

const char *data_dir(void) {
  static char dir[2048];
  const char *root = getenv("MPROF_SOURCE_DIR");
  snprintf(dir, sizeof dir, "%.2000s/tests/data/lines", root ? root : ".");
  return dir;
}

/* The line of "// @marker" in tests/data/lines/@p file. */
uint32_t marker(const char *file, const char *name) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096], text[512], want[64];
  snprintf(path, sizeof path, "%s/tests/data/lines/%s", root ? root : ".",
           file);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  snprintf(want, sizeof want, "// @%s", name);
  uint32_t n = 0, found = 0;
  while (fgets(text, sizeof text, f)) {
    n++;
    char *at = strstr(text, want);
    if (at && (at[strlen(want)] == '\n' || at[strlen(want)] == ' '))
      found = n;
  }
  fclose(f);
  assert_int_not_equal(found, 0);
  return found;
}

unsigned char *fixture_cubin(size_t *size) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/lines/lines_kernels.cubin",
           root ? root : ".");
  unsigned char *data = test_read_file(path, size);
  assert_non_null(data);
  return data;
}

typedef struct planted {
  const char *kernel;
  uint32_t offset, reason, samples;
  uint32_t correlation; /* the launch of lines_inline (1 or 2) */
} planted;

/* Reason 0 barrier, 6 long_scoreboard, 7 long_scoreboard_not_issued. */
static const planted samples[] = {
    {INLINE_K, 0x6b0, 6, 40, 1}, /* lm_square via poly-first */
    {INLINE_K, 0x6b0, 7, 30, 1}, /* ... not issued: a subset */
    {INLINE_K, 0x6c0, 6, 20, 2}, /* lm_square via poly-second */
    {INLINE_K, 0x6c0, 0, 5, 2},
    {INLINE_K, 0x6f0, 6, 10, 2}, /* the call line of the kernel */
    {INLINE_K, 0x010, 0, 5, 1},  /* inline-index */
    {SCALE_K, 0x80, 6, 8, 0},
    {"_Z7nocodev", 0x40, 6, 3, 0},
};

/* A trace of the fixture's two kernels (and one whose code was not kept),
 * sampled as planted, its cubin kept whole when @p keep_cubin. */
const char *write_trace_at(const char *path, int keep_cubin) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  const char *kernels[] = {INLINE_K, SCALE_K, "_Z7nocodev"};
  const char *demangled[] = {"lines_inline(float*, float const*, int)",
                             "lines_scale(float*, float const*, int)",
                             "nocode()"};
  for (size_t i = 0; i < 3; i++) {
    mprof_kernel_record k;
    memset(&k, 0, sizeof k);
    k.mangled_name = mprof_writer_string(w, kernels[i]);
    k.demangled_name = mprof_writer_string(w, demangled[i]);
    k.cubin_crc = i < 2 ? LINES_CRC : 0x999;
    k.function_index = (uint32_t)(13 + i);
    k.device = d;
    assert_int_equal(mprof_writer_intern(w, NULL, MPROF_SECTION_KERNELS, &k),
                     0);
  }
  /* Two launches of lines_inline, correlation ids 1 and 2, on one
   * stream: each has its own samples (as --pc-mode serialized). */
  mprof_stream_record st = {d, 1, 7, 0};
  uint32_t stream;
  assert_int_equal(mprof_writer_intern(w, &stream, MPROF_SECTION_STREAMS, &st),
                   0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = 0;
  sh.grid[0] = sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 128;
  sh.block[1] = sh.block[2] = 1;
  uint32_t shape;
  assert_int_equal(mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh),
                   0);
  for (uint32_t i = 0; i < 2; i++) {
    mprof_launch_record l;
    memset(&l, 0, sizeof l);
    l.start = 1000000 + 10000 * i;
    l.end = l.start + 5000;
    l.shape = shape;
    l.stream = stream;
    l.correlation_id = i + 1;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  static const struct {
    uint32_t index;
    const char *name;
  } reasons[] = {
      {0, REASON("barrier")},
      {6, REASON("long_scoreboard")},
      {7, REASON("long_scoreboard_not_issued")},
  };
  for (size_t r = 0; r < 3; r++) {
    mprof_stall_reason_record sr = {d, reasons[r].index,
                                    mprof_writer_string(w, reasons[r].name), 0};
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
  }
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
    mprof_pc_sample_record pc;
    memset(&pc, 0, sizeof pc);
    int known = strcmp(samples[i].kernel, "_Z7nocodev") != 0;
    pc.cubin_crc = known ? LINES_CRC : 0x999;
    pc.function_name = mprof_writer_string(w, samples[i].kernel);
    pc.function_index = 13;
    pc.pc_offset = samples[i].offset;
    pc.stall_reason = samples[i].reason;
    pc.samples = samples[i].samples;
    pc.device = d;
    pc.correlation_id = samples[i].correlation;
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc), 0);
  }
  size_t size;
  unsigned char *cubin = fixture_cubin(&size);
  mprof_cubin_record cr = {
      LINES_CRC, 0, 0,
      size,      d, keep_cubin ? MPROF_CUBIN_KEPT_WHOLE : MPROF_CUBIN_OMITTED};
  assert_int_equal(mprof_writer_cubin(w, &cr, keep_cubin ? cubin : NULL,
                                      keep_cubin ? size : 0),
                   0);
  free(cubin);
  assert_int_equal(mprof_writer_finish(w), 0);
  return path;
}
