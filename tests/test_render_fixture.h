/*
 * mprof tests — a small trace and sidecar whose every launch and sample is
 * known, for the render tests: where things must land in pixels.
 *
 *   stream 7 (row 1): K0 [1000, 2000)  K0 [5000, 9000)  K1 [10000, 30000)
 *                     10000 x K0, 10 ns each, every 20 ns from 100000
 *                     K0 [400000, 500000)
 *                     memcpy [2500, 4000)
 *   stream 8 (row 2): K1 [3000, 8000)  K1 [50000, 90000)
 *
 * Times are ns after FIX_T0, a CUPTI-like epoch where a double cannot
 * hold every ns. K0 (membound) has 205000 ns, K1 (compute) 65000: K0 is the
 * dominant kernel. K0's samples: 0x10 LDG 600 long_scoreboard (+500 of its
 * not-issued twin, never counted), 0x20 FFMA 300 math_pipe_throttle, 0x30
 * BAR.SYNC 100 barrier, 0x40 HMMA 50 selected: 1050 in all.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_RENDER_FIXTURE_H
#define MPROF_TEST_RENDER_FIXTURE_H

#include <dirent.h>

#include "analysis_util.h"
#include "test_util.h"

#include "mprof/mprof.h"
#include "mprof-render/render.h"

/* The traces in samples/ (MPROF_SOURCE_DIR), one call each; returns how
 * many. */
static inline size_t fix_each_sample(void (*fn)(const char *path)) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/samples", root && *root ? root : ".");
  DIR *d = opendir(dir);
  size_t found = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 7 || strcmp(e->d_name + n - 6, ".mprof") != 0)
      continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    fn(path);
    found++;
  }
  if (d)
    closedir(d);
  return found;
}

#define FIX_T0 1700000000000000000ll
#define FIX_K0 "_Z8memboundPfPKfi"
#define FIX_K1 "_Z7computePfi"
#define FIX_CRC 0x1234ull
#define FIX_TINY 10000

enum {
  FIX_LONG_SB = 0,
  FIX_LONG_SB_NI = 1,
  FIX_BARRIER = 2,
  FIX_SELECTED = 3,
  FIX_MATH = 4
};

static const char *const fix_reasons[] = {
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
    "smsp__pcsamp_warps_issue_stalled_barrier",
    "smsp__pcsamp_warps_issue_stalled_selected",
    "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"};

static void fix_launch(mprof_writer *w, uint32_t stream, uint32_t shape,
                       int64_t start, int64_t end) {
  static uint32_t correlation = 1;
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.start = (uint64_t)(FIX_T0 + start);
  l.end = (uint64_t)(FIX_T0 + end);
  l.shape = shape;
  l.stream = stream;
  l.correlation_id = correlation++;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
}

static void fix_sample(mprof_writer *w, const char *kernel, uint32_t offset,
                       uint32_t reason, uint32_t samples) {
  mprof_pc_sample_record pc;
  memset(&pc, 0, sizeof pc);
  pc.cubin_crc = FIX_CRC;
  pc.function_name = mprof_writer_string(w, kernel);
  pc.function_index = strcmp(kernel, FIX_K0) == 0 ? 1 : 2;
  pc.pc_offset = offset;
  pc.stall_reason = reason;
  pc.samples = samples;
  pc.device = 0;
  pc.drain = 1;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc),
                   0);
}

/* Kernels @p k0 and @p k1 of cubin @p crc (functions 1 and 2) on device
 * @p d, 32 registers each, each with one shape <<<264, 256>>>: @p shape gets
 * the two shapes' indices. */
static inline void fix_kernels(mprof_writer *w, uint32_t d, const char *k0,
                               const char *k1, uint64_t crc,
                               uint32_t shape[2]) {
  const char *names[2] = {k0, k1};
  for (uint32_t k = 0; k < 2; k++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, names[k]);
    kr.cubin_crc = crc;
    kr.function_index = k + 1;
    kr.device = d;
    kr.registers = 32;
    uint32_t ki;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = 264;
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 256;
    sh.block[1] = sh.block[2] = 1;
    assert_int_equal(
        mprof_writer_intern(w, &shape[k], MPROF_SECTION_SHAPES, &sh), 0);
  }
}

/* Write the fixture trace; with @p samples 0 it keeps no PC samples (the
 * sidecar then carries them). */
static void fix_write_trace(const char *path, int samples) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_h200(w, 0, 132, 0);
  mprof_stream_record sa = {d, 1, 7, 0}, sb = {d, 1, 8, 0};
  uint32_t a, b;
  assert_int_equal(mprof_writer_intern(w, &a, MPROF_SECTION_STREAMS, &sa), 0);
  assert_int_equal(mprof_writer_intern(w, &b, MPROF_SECTION_STREAMS, &sb), 0);
  uint32_t shape[2];
  fix_kernels(w, d, FIX_K0, FIX_K1, FIX_CRC, shape);
  fix_launch(w, a, shape[0], 1000, 2000);
  fix_launch(w, a, shape[0], 5000, 9000);
  fix_launch(w, a, shape[1], 10000, 30000);
  for (int i = 0; i < FIX_TINY; i++)
    fix_launch(w, a, shape[0], 100000 + 20 * i, 100000 + 20 * i + 10);
  fix_launch(w, a, shape[0], 400000, 500000);
  fix_launch(w, b, shape[1], 3000, 8000);
  fix_launch(w, b, shape[1], 50000, 90000);
  mprof_memop_record mo;
  memset(&mo, 0, sizeof mo);
  mo.start = (uint64_t)(FIX_T0 + 2500);
  mo.end = (uint64_t)(FIX_T0 + 4000);
  mo.bytes = 1 << 20;
  mo.stream = a;
  mo.kind = MPROF_MEMOP_MEMCPY;
  mo.copy_kind = MPROF_COPY_HTOD;
  mo.src_device = MPROF_INDEX_NONE;
  mo.dst_device = 0;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo), 0);
  /* Global-memory counts (`record blocks --memory`) of K0: the LDG at
   * 0x10 at a stride (12.5% of its sectors used), the BAR row's offset
   * 0x30 as a coalesced store (100%); 0x20 has none. */
  mprof_memory_access_record ma[2] = {
      {0, 0x10, MPROF_MEMORY_READ, 4, 100, 3200, 12800, 3200},
      {0, 0x30, MPROF_MEMORY_WRITE, 4, 100, 3200, 12800, 400}};
  for (int i = 0; i < 2; i++)
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma[i]), 0);
  if (samples) {
    for (uint32_t r = 0; r < 5; r++) {
      mprof_stall_reason_record sr = {
          d, r, mprof_writer_string(w, fix_reasons[r]), 0};
      assert_int_equal(
          mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
    }
    fix_sample(w, FIX_K0, 0x10, FIX_LONG_SB, 600);
    fix_sample(w, FIX_K0, 0x10, FIX_LONG_SB_NI, 500);
    fix_sample(w, FIX_K0, 0x20, FIX_MATH, 300);
    fix_sample(w, FIX_K0, 0x30, FIX_BARRIER, 100);
    fix_sample(w, FIX_K0, 0x40, FIX_SELECTED, 50);
    fix_sample(w, FIX_K1, 0x10, FIX_MATH, 200);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* The source file of K0's lines and what is added to each line: a test
 * may change them before fix_open(). */
static const char *fix_source_file = "k.cu";
static uint32_t fix_line_base = 0;

/* The sidecar: K0's SASS with source lines; with @p samples, K0's
 * samples too (for a trace that keeps none). */
static void fix_write_sidecar(const char *path, int samples) {
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  for (uint32_t r = 0; r < 5; r++)
    assert_int_equal(mprof_sidecar_set_stall_reason(sc, r, fix_reasons[r]), 0);
  mprof_sidecar_function f;
  memset(&f, 0, sizeof f);
  f.name = FIX_K0;
  f.demangled = "membound(float*, float const*, int)";
  f.cubin_crc = FIX_CRC;
  f.function_index = 1;
  f.device = 0;
  f.size = 0x60;
  f.sass_state = MPROF_SASS_PRESENT;
  f.sass_error = "";
  uint32_t fn;
  assert_int_equal(mprof_sidecar_add_function(sc, &fn, &f), 0);
  static const struct {
    uint32_t offset;
    const char *opcode, *operands;
    uint32_t line;
  } code[] = {{0x00, "MOV", "R1, c[0x0][0x28]", 10},
              {0x10, "LDG.E.128", "R4, desc[UR6][R2.64]", 12},
              {0x20, "FFMA", "R8, R4, R5, R8", 13},
              {0x30, "BAR.SYNC.DEFER_BLOCKING", "0x0", 14},
              {0x40, "HMMA.16816.F32", "R12, R16, R20, R12", 15},
              {0x50, "EXIT", "", 16}};
  for (size_t i = 0; i < sizeof code / sizeof code[0]; i++) {
    mprof_sass_instruction in = {code[i].offset,
                                 code[i].line + fix_line_base,
                                 "",
                                 code[i].opcode,
                                 code[i].operands,
                                 fix_source_file};
    assert_int_equal(mprof_sidecar_add_instruction(sc, fn, &in), 0);
  }
  if (samples) {
    assert_int_equal(mprof_sidecar_add_samples(sc, fn, 0x10, FIX_LONG_SB, 600),
                     0);
    assert_int_equal(
        mprof_sidecar_add_samples(sc, fn, 0x10, FIX_LONG_SB_NI, 500), 0);
    assert_int_equal(mprof_sidecar_add_samples(sc, fn, 0x20, FIX_MATH, 300), 0);
    assert_int_equal(mprof_sidecar_add_samples(sc, fn, 0x30, FIX_BARRIER, 100),
                     0);
    assert_int_equal(mprof_sidecar_add_samples(sc, fn, 0x40, FIX_SELECTED, 50),
                     0);
  }
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
}

/* Trace + sidecar at TMP/<pid>-NAME.mprof(.pc.json); returns the model. */
static mprof_render_model *fix_open(const char *name, int trace_samples) {
  char trace[1024], sidecar[1100];
  snprintf(trace, sizeof trace, "%s", test_path(name));
  snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace);
  fix_write_trace(trace, trace_samples);
  fix_write_sidecar(sidecar, !trace_samples);
  mprof_render_model *m = NULL;
  int rc = mprof_render_model_open(&m, trace, NULL);
  if (rc)
    fail_msg("%s", mprof_render_error());
  return m;
}

/* ---- pixels ------------------------------------------------------------ */

typedef struct fix_image {
  cairo_surface_t *surface;
  int width, height;
} fix_image;

static inline fix_image fix_draw(const mprof_render_model *m,
                                 const mprof_render_view *v, int tab, int width,
                                 int height) {
  fix_image img;
  img.width = width;
  img.height = height;
  img.surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create(img.surface);
  mprof_render_draw(cr, m, v, tab, width, height);
  assert_int_equal(cairo_status(cr), CAIRO_STATUS_SUCCESS);
  cairo_destroy(cr);
  cairo_surface_flush(img.surface);
  return img;
}

static inline void fix_free(fix_image *img) {
  cairo_surface_destroy(img->surface);
}

/* 0xRRGGBB at (x, y). */
static inline uint32_t fix_pixel(const fix_image *img, int x, int y) {
  assert_true(x >= 0 && x < img->width && y >= 0 && y < img->height);
  const unsigned char *data = cairo_image_surface_get_data(img->surface);
  int stride = cairo_image_surface_get_stride(img->surface);
  uint32_t v;
  memcpy(&v, data + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
  return v & 0xffffffu;
}

/* How many pixels have exactly @p rgb. */
static inline size_t fix_count(const fix_image *img, uint32_t rgb) {
  size_t n = 0;
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      n += fix_pixel(img, x, y) == rgb;
  return n;
}

/* Distinct colours (up to 4096 counted) and the share of pixels that
 * differ from the bottom-right one: "not blank". */
static inline size_t fix_colors(const fix_image *img, double *non_background) {
  enum { SLOTS = 8192 };
  static uint32_t slot[SLOTS];
  static unsigned char used[SLOTS];
  memset(used, 0, sizeof used);
  size_t n = 0, other = 0;
  uint32_t bg = fix_pixel(img, img->width - 1, img->height - 1);
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++) {
      uint32_t c = fix_pixel(img, x, y);
      other += c != bg;
      if (n >= 4096)
        continue;
      size_t h = (c * 2654435761u) & (SLOTS - 1);
      while (used[h] && slot[h] != c)
        h = (h + 1) & (SLOTS - 1);
      if (!used[h]) {
        used[h] = 1;
        slot[h] = c;
        n++;
      }
    }
  if (non_background)
    *non_background = (double)other / ((double)img->width * img->height);
  return n;
}

/* Leave the PNG next to the test's scratch files, to look at (kept with
 * MPROF_TEST_KEEP=1; see fix_cleanup). */
static inline void fix_save(const fix_image *img, const char *name) {
  cairo_surface_write_to_png(img->surface, test_path(name));
}

/* Remove this process's scratch files unless MPROF_TEST_KEEP is set. */
static inline void fix_cleanup(void) {
  const char *keep = getenv("MPROF_TEST_KEEP");
  if (keep && *keep)
    return;
  const char *dir = getenv("MPROF_TEST_TMP");
  if (!dir || !*dir)
    dir = "/tmp";
  char prefix[32];
  snprintf(prefix, sizeof prefix, "%ld-", (long)getpid());
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d)
    closedir(d);
}

#endif /* MPROF_TEST_RENDER_FIXTURE_H */
