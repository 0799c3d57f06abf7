/*
 * mprof tests — per-line analysis (lines.h) on real nvcc output:
 * tests/data/lines/lines_kernels.cubin (-lineinfo, code in two files,
 * inlined two deep; the command that made it is in lines_kernels.cu), in a
 * trace with PC samples planted at known offsets. Lines are found by the
 * "@name" markers of the sources, so the expectations do not come from
 * the code under test.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analysis_util.h"

#include "mprof/mprof.h"

#include "lines_fixture.h"

static const char *write_trace(const char *name, int keep_cubin) {
  return write_trace_at(test_path(name), keep_cubin);
}

typedef struct fixture {
  mprof_trace *trace;
  mprof_join *join;
  mprof_lines *lines;
} fixture;

static void open_kernel(fixture *fx, const char *path, const char *kernel) {
  assert_int_equal(mprof_trace_open(&fx->trace, path, NULL), 0);
  assert_int_equal(mprof_join_build(&fx->join, fx->trace, NULL), 0);
  uint32_t k = mprof_join_find_kernel(fx->join, kernel, MPROF_INDEX_NONE);
  assert_int_not_equal(k, MPROF_INDEX_NONE);
  assert_int_equal(mprof_lines_build(&fx->lines, fx->join, k, NULL), 0);
}

static void close_kernel(fixture *fx) {
  mprof_lines_free(fx->lines);
  mprof_join_free(fx->join);
  mprof_trace_free(fx->trace);
}

static uint64_t reason_samples(const mprof_join *join,
                               const mprof_line_stats *line, const char *name) {
  for (size_t r = 0; r < line->reason_count; r++) {
    const mprof_reason_samples *rs = mprof_line_reason(line, r);
    if (strcmp(mprof_join_reason(join, rs->reason)->name, name) == 0)
      return rs->samples;
  }
  return 0;
}

static void test_cubin_frames(void **state) {
  (void)state;
  size_t size;
  unsigned char *data = fixture_cubin(&size);
  mprof_sass_cubin *c;
  assert_int_equal(mprof_sass_cubin_open(&c, data, size, "fixture"), 0);
  free(data);
  const mprof_sass_function *fn = mprof_sass_cubin_find(c, INLINE_K);
  assert_non_null(fn);
  mprof_sass_frame frames[8];
  /* lm_square's code, inlined into lm_poly at poly-first, inlined into
   * the kernel at inline-call. */
  assert_int_equal(mprof_sass_cubin_frames(c, fn, 0x6b0, frames, 8), 3);
  assert_string_equal(frames[0].function, SQUARE);
  assert_string_equal(frames[0].file, CUH);
  assert_int_equal(frames[0].line, marker("lines_math.cuh", "square"));
  assert_int_equal(frames[0].inlined, 1);
  assert_string_equal(frames[1].function, POLY);
  assert_int_equal(frames[1].line, marker("lines_math.cuh", "poly-first"));
  assert_int_equal(frames[1].inlined, 1);
  assert_string_equal(frames[2].function, INLINE_K);
  assert_string_equal(frames[2].file, CU);
  assert_int_equal(frames[2].line, marker("lines_kernels.cu", "inline-call"));
  assert_int_equal(frames[2].inlined, 0);
  /* The second call site of lm_square. */
  assert_int_equal(mprof_sass_cubin_frames(c, fn, 0x6c0, frames, 8), 3);
  assert_int_equal(frames[0].line, marker("lines_math.cuh", "square"));
  assert_int_equal(frames[1].line, marker("lines_math.cuh", "poly-second"));
  /* Kernel code: one frame; a capacity of 0 still counts. */
  assert_int_equal(mprof_sass_cubin_frames(c, fn, 0x10, NULL, 0), 1);
  assert_int_equal(mprof_sass_cubin_frames(c, fn, 0x10, frames, 1), 1);
  assert_int_equal(frames[0].line, marker("lines_kernels.cu", "inline-index"));
  assert_string_equal(frames[0].function, INLINE_K);
  /* Past the end, and the plain kernel. */
  assert_int_equal(mprof_sass_cubin_frames(c, fn, fn->size, frames, 8), 0);
  const mprof_sass_function *scale = mprof_sass_cubin_find(c, SCALE_K);
  assert_int_equal(mprof_sass_cubin_frames(c, scale, 0x80, frames, 8), 1);
  assert_int_equal(frames[0].line, marker("lines_kernels.cu", "scale-store"));
  mprof_sass_cubin_free(c);
}

#define MULTI_CU "/build/lines/lines_multi.cu"

/* Check each instruction of @p kernel in lines_multi.cubin whose line is in
 * another file (inlined code): its frames run from that line out to the
 * kernel at the "@p call" marker of lines_multi.cu. Counts them in
 * @p inlined and, by the function of the innermost frame, in @p square
 * (lm_square, also checking lm_poly's call line: @p poly_first or
 * @p poly_second) and @p atomic (atomicAdd). */
typedef struct call_sites {
  size_t inlined, square, atomic, poly_first, poly_second;
} call_sites;

static void check_call_sites(const mprof_sass_cubin *c, const char *kernel,
                             const char *call, call_sites *seen) {
  const mprof_sass_function *fn = mprof_sass_cubin_find(c, kernel);
  assert_non_null(fn);
  size_t n;
  const mprof_sass_line *rows = mprof_sass_cubin_lines(c, fn, &n);
  assert_non_null(rows);
  memset(seen, 0, sizeof *seen);
  for (size_t k = 0; k < n; k++) {
    if (!rows[k].line || strcmp(rows[k].file, MULTI_CU) == 0)
      continue;
    mprof_sass_frame frames[8];
    size_t depth = mprof_sass_cubin_frames(c, fn, rows[k].offset, frames, 8);
    assert_in_range(depth, 2, 8);
    assert_string_equal(frames[0].file, rows[k].file);
    assert_int_equal(frames[0].line, rows[k].line);
    assert_int_equal(frames[0].inlined, 1);
    const mprof_sass_frame *outer = &frames[depth - 1];
    assert_string_equal(outer->file, MULTI_CU);
    assert_int_equal(outer->line, marker("lines_multi.cu", call));
    assert_string_equal(outer->function, kernel);
    assert_int_equal(outer->inlined, 0);
    seen->inlined++;
    if (strcmp(frames[0].function, SQUARE) == 0) {
      assert_int_equal(depth, 3);
      assert_string_equal(frames[1].function, POLY);
      assert_string_equal(frames[1].file, "/build/lines/lines_math.cuh");
      seen->poly_first +=
          frames[1].line == marker("lines_math.cuh", "poly-first");
      seen->poly_second +=
          frames[1].line == marker("lines_math.cuh", "poly-second");
      seen->square++;
    } else if (strstr(frames[0].function, "atomicAdd")) {
      assert_int_equal(depth, 2);
      seen->atomic++;
    }
  }
}

/* Inlined code of kernels that are not the first of their cubin
 * (lines_multi.cubin, nvcc -O3, three kernels): nvcc numbers call sites
 * from 1 in each kernel's line sequence, so counting the rows of the
 * kernels before would name lines of another kernel. */
static void test_cubin_frames_of_later_kernels(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/lines_multi.cubin", data_dir());
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  assert_non_null(data);
  mprof_sass_cubin *c;
  assert_int_equal(mprof_sass_cubin_open(&c, data, size, "lines_multi"), 0);
  free(data);
  call_sites seen;
  check_call_sites(c, "_Z12multi_atomicPfi", "multi-atomic", &seen);
  assert_int_not_equal(seen.atomic, 0);
  assert_int_equal(seen.atomic, seen.inlined);
  check_call_sites(c, "_Z10multi_polyPfPKfi", "multi-poly", &seen);
  assert_int_not_equal(seen.square, 0);
  assert_int_not_equal(seen.poly_first, 0);
  assert_int_not_equal(seen.poly_second, 0);
  assert_int_equal(seen.poly_first + seen.poly_second, seen.square);
  /* The kernel whose sequence comes first inlines nothing. */
  check_call_sites(c, "_Z11multi_plainPfi", "multi-atomic", &seen);
  assert_int_equal(seen.inlined, 0);
  mprof_sass_cubin_free(c);
}

static void test_lines_of_inlined_kernel(void **state) {
  (void)state;
  fixture fx;
  open_kernel(&fx, write_trace("lines.mprof", 1), INLINE_K);
  const mprof_lines *l = fx.lines;
  assert_int_equal(mprof_lines_origin(l), MPROF_LINES_CUBIN);
  assert_int_equal(mprof_lines_samples(l), 40 + 25 + 10 + 5);
  /* The hottest line is lm_square's: both call sites, 65 samples, in the
   * header, apart from the .cu file's line of the same number. */
  const mprof_line_stats *hot = mprof_lines_at(l, 0);
  uint32_t square = marker("lines_math.cuh", "square");
  assert_string_equal(hot->file, CUH);
  assert_int_equal(hot->line, square);
  assert_int_equal(hot->samples, 65);
  assert_int_equal(hot->not_issued, 30);
  assert_true(hot->share > 0.8124 && hot->share < 0.8126);
  assert_string_equal(hot->function, SQUARE);
  assert_int_equal(reason_samples(fx.join, hot, "long_scoreboard"), 60);
  assert_int_equal(reason_samples(fx.join, hot, "barrier"), 5);
  assert_int_equal(mprof_lines_find(l, CU, square), MPROF_INDEX_NONE);
  assert_int_equal(mprof_lines_find(l, CUH, square), 0);
  /* Its instructions include both planted ones, in order. */
  int has_6b0 = 0, has_6c0 = 0;
  for (size_t i = 0; i < hot->instruction_count; i++) {
    has_6b0 |= hot->offsets[i] == 0x6b0;
    has_6c0 |= hot->offsets[i] == 0x6c0;
    if (i)
      assert_true(hot->offsets[i - 1] < hot->offsets[i]);
  }
  assert_true(has_6b0 && has_6c0);
  /* The call line of the kernel, then inline-index. */
  const mprof_line_stats *call = mprof_lines_at(l, 1);
  assert_string_equal(call->file, CU);
  assert_int_equal(call->line, marker("lines_kernels.cu", "inline-call"));
  assert_int_equal(call->samples, 10);
  const mprof_line_stats *index = mprof_lines_at(l, 2);
  assert_int_equal(index->line, marker("lines_kernels.cu", "inline-index"));
  assert_int_equal(index->samples, 5);
  /* Two files, each line once, shares summing to 1, every instruction of
   * the function (0xb00 bytes) on exactly one line. */
  assert_int_equal(mprof_lines_file_count(l), 2);
  assert_int_equal(mprof_lines_instruction_count(l), 0xb00 / 16);
  double share = 0;
  size_t insns = 0;
  for (size_t i = 0; i < mprof_lines_count(l); i++) {
    const mprof_line_stats *s = mprof_lines_at(l, i);
    share += s->share;
    insns += s->instruction_count;
    assert_int_equal(mprof_lines_find(l, s->file, s->line), i);
    if (i)
      assert_true(mprof_lines_at(l, i - 1)->samples >= s->samples);
  }
  assert_true(share > 0.9999 && share < 1.0001);
  assert_int_equal(insns, mprof_lines_instruction_count(l));
  /* Each instruction knows its line and chain. */
  const mprof_line_instruction *in = mprof_lines_instruction_find(l, 0x6c0);
  assert_non_null(in);
  assert_int_equal(in->line_index, 0);
  assert_int_equal(in->samples, 25);
  assert_non_null(in->pc);
  assert_null(in->instruction); /* no sidecar: no SASS text */
  assert_int_equal(in->frame_count, 3);
  assert_int_equal(in->frames[1].line, marker("lines_math.cuh", "poly-second"));
  assert_null(mprof_lines_instruction_find(l, 0x6c4));
  /* Per function: lm_square's own 65, lm_poly none of its own but all of
   * lm_square's, the kernel everything. */
  assert_int_equal(mprof_lines_function_count(l), 3);
  const mprof_inline_stats *f0 = mprof_lines_function_at(l, 0);
  assert_string_equal(f0->function, SQUARE);
  assert_string_equal(f0->demangled, "lm_square(float)");
  assert_int_equal(f0->self, 65);
  assert_int_equal(f0->total, 65);
  assert_int_equal(f0->not_issued, 30);
  const mprof_inline_stats *f1 = mprof_lines_function_at(l, 1);
  assert_string_equal(f1->function, INLINE_K);
  assert_int_equal(f1->self, 15);
  assert_int_equal(f1->total, 80);
  const mprof_inline_stats *f2 = mprof_lines_function_at(l, 2);
  assert_string_equal(f2->function, POLY);
  assert_int_equal(f2->self, 0);
  assert_int_equal(f2->total, 65);
  close_kernel(&fx);
}

static void test_lines_of_plain_kernel(void **state) {
  (void)state;
  fixture fx;
  open_kernel(&fx, write_trace("lines-plain.mprof", 1), SCALE_K);
  const mprof_lines *l = fx.lines;
  assert_int_equal(mprof_lines_origin(l), MPROF_LINES_CUBIN);
  const mprof_line_stats *hot = mprof_lines_at(l, 0);
  assert_int_equal(hot->line, marker("lines_kernels.cu", "scale-store"));
  assert_int_equal(hot->samples, 8);
  assert_true(hot->share == 1.0);
  assert_int_equal(mprof_lines_file_count(l), 1);
  assert_int_equal(mprof_lines_function_count(l), 1);
  assert_int_equal(mprof_lines_instruction_find(l, 0x80)->frame_count, 1);
  close_kernel(&fx);
}

/* Without code, every sample is on line 0; the instructions are the
 * sampled ones. */
static void test_lines_without_code(void **state) {
  (void)state;
  fixture fx;
  open_kernel(&fx, write_trace("lines-nocode.mprof", 0), INLINE_K);
  const mprof_lines *l = fx.lines;
  assert_int_equal(mprof_lines_origin(l), MPROF_LINES_NONE);
  assert_int_equal(mprof_lines_count(l), 1);
  const mprof_line_stats *only = mprof_lines_at(l, 0);
  assert_int_equal(only->line, 0);
  assert_string_equal(only->file, "");
  assert_int_equal(only->samples, 80);
  assert_int_equal(only->instruction_count, 4);
  assert_int_equal(mprof_lines_instruction_find(l, 0x6b0)->frame_count, 0);
  close_kernel(&fx);
}

/* A sidecar's source lines serve when the trace has no cubin. */
static void test_lines_from_sidecar(void **state) {
  (void)state;
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  mprof_sidecar_function fn;
  memset(&fn, 0, sizeof fn);
  fn.name = INLINE_K;
  fn.demangled = "";
  fn.sass_error = "";
  fn.cubin_crc = LINES_CRC;
  fn.size = 0xb00;
  uint32_t index;
  assert_int_equal(mprof_sidecar_add_function(sc, &index, &fn), 0);
  const struct {
    uint32_t offset, line;
    const char *file;
  } insns[] = {{0x10, 18, CU},
               {0x6b0, 8, CUH},
               {0x6c0, 8, CUH},
               {0x6f0, 21, CU},
               {0x700, 8, CU}};
  for (size_t i = 0; i < 5; i++) {
    mprof_sass_instruction in = {insns[i].offset,  insns[i].line, "", "FFMA",
                                 "R1, R2, R3, R4", insns[i].file};
    assert_int_equal(mprof_sidecar_add_instruction(sc, index, &in), 0);
  }
  fixture fx;
  assert_int_equal(
      mprof_trace_open(&fx.trace, write_trace("lines-sc.mprof", 0), NULL), 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = sc;
  assert_int_equal(mprof_join_build(&fx.join, fx.trace, &jo), 0);
  uint32_t k = mprof_join_find_kernel(fx.join, INLINE_K, MPROF_INDEX_NONE);
  assert_int_equal(mprof_lines_build(&fx.lines, fx.join, k, NULL), 0);
  const mprof_lines *l = fx.lines;
  assert_int_equal(mprof_lines_origin(l), MPROF_LINES_SIDECAR);
  const mprof_line_stats *hot = mprof_lines_at(l, 0);
  assert_string_equal(hot->file, CUH);
  assert_int_equal(hot->line, 8);
  assert_int_equal(hot->samples, 65);
  /* Line 8 of the .cu file is another line, without samples. */
  uint32_t cu8 = mprof_lines_find(l, CU, 8);
  assert_int_not_equal(cu8, MPROF_INDEX_NONE);
  assert_int_equal(mprof_lines_at(l, cu8)->samples, 0);
  assert_int_equal(mprof_lines_at(l, cu8)->instruction_count, 1);
  const mprof_line_instruction *in = mprof_lines_instruction_find(l, 0x6b0);
  assert_non_null(in->instruction);
  assert_string_equal(in->instruction->opcode, "FFMA");
  assert_int_equal(in->frame_count, 1);
  close_kernel(&fx);
  mprof_sidecar_free(sc);
}

/* One launch's samples (--pc-mode serialized: by correlation id): launch
 * 0 has lm_square's first call site and inline-index, launch 1 its second
 * call site and the call line. */
static void test_lines_of_one_launch(void **state) {
  (void)state;
  fixture fx;
  open_kernel(&fx, write_trace("lines-launch.mprof", 1), INLINE_K);
  uint32_t k = mprof_join_find_kernel(fx.join, INLINE_K, MPROF_INDEX_NONE);
  assert_int_equal(mprof_join_launch_kernel(fx.join, 0), k);
  mprof_lines_options opts = MPROF_LINES_OPTIONS_INIT;
  assert_int_equal(opts.launch, MPROF_INDEX_NONE);
  uint32_t square = marker("lines_math.cuh", "square");
  opts.launch = 0;
  mprof_lines *l0;
  assert_int_equal(mprof_lines_build(&l0, fx.join, k, &opts), 0);
  assert_int_equal(mprof_lines_samples(l0), 45);
  const mprof_line_stats *hot = mprof_lines_at(l0, 0);
  assert_int_equal(hot->line, square);
  assert_int_equal(hot->samples, 40);
  assert_int_equal(hot->not_issued, 30);
  assert_int_equal(reason_samples(fx.join, hot, "long_scoreboard"), 40);
  assert_int_equal(mprof_lines_at(l0, 1)->line,
                   marker("lines_kernels.cu", "inline-index"));
  assert_int_equal(mprof_lines_instruction_find(l0, 0x6b0)->samples, 40);
  assert_null(mprof_lines_instruction_find(l0, 0x6c0)->pc);
  mprof_lines_free(l0);
  opts.launch = 1;
  mprof_lines *l1;
  assert_int_equal(mprof_lines_build(&l1, fx.join, k, &opts), 0);
  assert_int_equal(mprof_lines_samples(l1), 35);
  hot = mprof_lines_at(l1, 0);
  assert_int_equal(hot->line, square);
  assert_int_equal(hot->samples, 25);
  assert_int_equal(reason_samples(fx.join, hot, "barrier"), 5);
  const mprof_line_instruction *in = mprof_lines_instruction_find(l1, 0x6c0);
  assert_int_equal(in->frames[1].line, marker("lines_math.cuh", "poly-second"));
  assert_int_equal(mprof_lines_at(l1, 1)->line,
                   marker("lines_kernels.cu", "inline-call"));
  mprof_lines_free(l1);
  /* A launch of another kernel is refused; version 1 options mean every
   * launch. */
  uint32_t scale = mprof_join_find_kernel(fx.join, SCALE_K, MPROF_INDEX_NONE);
  opts.launch = 0;
  mprof_lines *bad = NULL;
  assert_int_equal(mprof_lines_build(&bad, fx.join, scale, &opts),
                   MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "launch 0 is not a launch of"));
  opts.version = 1;
  assert_int_equal(mprof_lines_build(&bad, fx.join, k, &opts), 0);
  assert_int_equal(mprof_lines_samples(bad), 80);
  mprof_lines_free(bad);
  close_kernel(&fx);
}

static void test_lines_errors(void **state) {
  (void)state;
  fixture fx;
  assert_int_equal(
      mprof_trace_open(&fx.trace, write_trace("lines-err.mprof", 1), NULL), 0);
  assert_int_equal(mprof_join_build(&fx.join, fx.trace, NULL), 0);
  mprof_lines *l = (mprof_lines *)0x1;
  assert_int_equal(mprof_lines_build(&l, fx.join, 99, NULL), MPROF_EINVAL);
  assert_null(l);
  assert_non_null(strstr(mprof_error_last(), "no kernel 99"));
  mprof_lines_options opts = MPROF_LINES_OPTIONS_INIT;
  opts.version = 99;
  assert_int_equal(mprof_lines_build(&l, fx.join, 0, &opts), MPROF_EVERSION);
  assert_int_equal(mprof_lines_options_init(&opts, 1), 0);
  assert_int_equal(mprof_lines_options_init(&opts, 7), MPROF_EVERSION);
  assert_int_equal(mprof_lines_build(NULL, fx.join, 0, NULL), MPROF_EINVAL);
  mprof_lines_free(NULL);
  assert_null(mprof_lines_at(NULL, 0));
  assert_int_equal(mprof_lines_count(NULL), 0);
  mprof_join_free(fx.join);
  mprof_trace_free(fx.trace);
}

/* ---- sources embedded in the trace ------------------------------------ */

/* Line @p n of tests/data/lines/@p file, without its line break. */
static void data_line(char *out, size_t size, const char *file, uint32_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", data_dir(), file);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  for (uint32_t i = 0; i < n; i++)
    assert_non_null(fgets(out, (int)size, f));
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

static void embed(const char *trace, const char *root,
                  mprof_sources_report *r) {
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.roots = &root;
  so.root_count = root ? 1 : 0;
  assert_int_equal(mprof_sources_embed(trace, &so, r), 0);
}

static void check_embedded(const char *trace) {
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.flags = MPROF_SOURCES_NO_DISK; /* as on a machine without the files */
  mprof_sources *s;
  assert_int_equal(mprof_sources_open(&s, t, &so), 0);
  assert_int_equal(mprof_sources_listed(s), 2);
  const mprof_source_listing *cu = mprof_sources_listed_at(s, 0);
  const mprof_source_listing *cuh = mprof_sources_listed_at(s, 1);
  assert_string_equal(cu->path, CU);
  assert_string_equal(cuh->path, CUH);
  assert_null(mprof_sources_listed_at(s, 2));
  size_t size = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/lines_math.cuh", data_dir());
  unsigned char *bytes = test_read_file(path, &size);
  assert_int_equal(cuh->state, MPROF_SOURCE_EMBEDDED);
  assert_int_equal(cuh->size, size);
  assert_int_equal(cuh->crc32c, mprof_crc32c(0, bytes, size));
  free(bytes);
  assert_int_equal(mprof_sources_state(s, CUH), MPROF_SOURCE_EMBEDDED);
  assert_int_equal(mprof_sources_state(s, "/elsewhere/k.cu"),
                   MPROF_SOURCE_UNKNOWN);
  char want[512];
  uint32_t square = marker("lines_math.cuh", "square");
  data_line(want, sizeof want, "lines_math.cuh", square);
  size_t len;
  const char *text = mprof_sources_line(s, CUH, square, &len);
  assert_non_null(text);
  assert_int_equal(len, strlen(want));
  assert_memory_equal(text, want, len);
  uint32_t call = marker("lines_kernels.cu", "inline-call");
  data_line(want, sizeof want, "lines_kernels.cu", call);
  text = mprof_sources_line(s, CU, call, &len);
  assert_non_null(text);
  assert_memory_equal(text, want, len);
  assert_null(mprof_sources_line(s, CU, 100000, &len));
  assert_null(mprof_sources_line(s, CU, 0, &len));
  mprof_sources_free(s);
  mprof_trace_free(t);
}

static void test_sources_embedded(void **state) {
  (void)state;
  const char *trace = write_trace("lines-embed.mprof", 1);
  mprof_sources_report r = MPROF_SOURCES_REPORT_INIT;
  embed(trace, data_dir(), &r);
  assert_int_equal(r.files, 2);
  assert_int_equal(r.embedded, 2);
  assert_int_equal(r.missing, 0);
  assert_true(r.text_bytes > 1000);
  assert_true(r.stored_bytes < r.text_bytes); /* zlib */
  check_embedded(trace);
  /* A rewrite (record's sort, --drop-code) keeps them. */
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  const char *copy = test_path("lines-embed-copy.mprof");
  assert_int_equal(mprof_trace_rewrite(t, copy, MPROF_REWRITE_SORT_LAUNCHES),
                   0);
  check_embedded(copy);
  /* So does a merge of a run's traces: each file once. */
  mprof_trace *other;
  assert_int_equal(mprof_trace_open(&other, copy, NULL), 0);
  const mprof_trace *both[2] = {t, other};
  const char *merged = test_path("lines-embed-merged.mprof");
  assert_int_equal(mprof_trace_merge(both, 2, merged), 0);
  mprof_trace_free(other);
  mprof_trace_free(t);
  check_embedded(merged);
  /* Embedding again replaces them: one SOURCES section, same files. */
  embed(trace, data_dir(), &r);
  check_embedded(trace);
}

/* Files not found are listed as missing, with no text, never invented. */
static void test_sources_missing(void **state) {
  (void)state;
  const char *trace = write_trace("lines-missing.mprof", 1);
  mprof_sources_report r = MPROF_SOURCES_REPORT_INIT;
  embed(trace, "/nonexistent-root", &r);
  assert_int_equal(r.files, 2);
  assert_int_equal(r.embedded, 0);
  assert_int_equal(r.missing, 2);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  mprof_sources *s;
  assert_int_equal(mprof_sources_open(&s, t, NULL), 0);
  assert_int_equal(mprof_sources_listed(s), 2);
  assert_int_equal(mprof_sources_listed_at(s, 0)->state, MPROF_SOURCE_MISSING);
  assert_int_equal(mprof_sources_listed_at(s, 0)->size, 0);
  assert_int_equal(mprof_sources_state(s, CUH), MPROF_SOURCE_MISSING);
  assert_null(mprof_sources_line(s, CUH, 8, NULL));
  mprof_sources_free(s);
  /* Found on disk later, through a root: read from there. */
  const char *root = data_dir();
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.roots = &root;
  so.root_count = 1;
  assert_int_equal(mprof_sources_open(&s, t, &so), 0);
  assert_int_equal(mprof_sources_state(s, CUH), MPROF_SOURCE_DISK);
  assert_non_null(mprof_sources_line(s, CUH, 8, NULL));
  mprof_sources_free(s);
  mprof_trace_free(t);
  /* A trace without sampled code gets no section. */
  const char *bare = write_trace("lines-bare.mprof", 0);
  embed(bare, data_dir(), &r);
  assert_int_equal(r.files, 0);
  assert_int_equal(mprof_trace_open(&t, bare, NULL), 0);
  size_t n;
  assert_null(mprof_trace_section(t, MPROF_SECTION_SOURCES, &n));
  mprof_trace_free(t);
}

/* Root mappings: OLD=NEW replaces a whole leading folder; DIR finds the
 * trailing parts. */
static void test_sources_roots(void **state) {
  (void)state;
  char map[4200];
  snprintf(map, sizeof map, "/build/lines=%s", data_dir());
  const char *roots[] = {"/build/line=/nowhere", map};
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.roots = roots;
  so.root_count = 2;
  mprof_sources *s;
  assert_int_equal(mprof_sources_open(&s, NULL, &so), 0);
  assert_int_equal(mprof_sources_state(s, CU), MPROF_SOURCE_DISK);
  assert_int_equal(mprof_sources_state(s, "/build/linesx/lines_kernels.cu"),
                   MPROF_SOURCE_UNKNOWN);
  assert_int_equal(mprof_sources_line_count(s, CUH), 14);
  mprof_sources_free(s);
  so.version = 42;
  assert_int_equal(mprof_sources_open(&s, NULL, &so), MPROF_EVERSION);
  assert_int_equal(mprof_sources_embed("/nonexistent.mprof", NULL, NULL),
                   MPROF_ENOTFOUND);
}

/* A damaged SOURCES entry is refused at open, naming the section, the
 * byte and what is wrong. */
static void test_sources_damaged(void **state) {
  (void)state;
  const char *trace = write_trace("lines-damaged.mprof", 1);
  mprof_sources_report r = MPROF_SOURCES_REPORT_INIT;
  embed(trace, data_dir(), &r);
  size_t size;
  unsigned char *file = test_read_file(trace, &size);
  mprof_file_header *h = (mprof_file_header *)file;
  mprof_section_entry *dir =
      (mprof_section_entry *)(file + h->directory_offset);
  mprof_section_entry *e = NULL;
  for (uint32_t i = 0; i < h->section_count; i++)
    if (dir[i].type == MPROF_SECTION_SOURCES)
      e = &dir[i];
  assert_non_null(e);
  mprof_source_entry *first = (mprof_source_entry *)(file + e->offset);
  first->state = 9;
  e->checksum = mprof_crc32c(0, file + e->offset, (size_t)e->length);
  h->directory_checksum = mprof_crc32c(0, dir, h->section_count * sizeof *dir);
  h->header_checksum = mprof_crc32c(0, h, 40);
  const char *bad = test_path("lines-damaged-2.mprof");
  FILE *f = fopen(bad, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(file, 1, size, f), size);
  fclose(f);
  free(file);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "SOURCES"));
  assert_non_null(strstr(mprof_error_last(), "entry 0: its state is unknown"));
}

/* test_lines --write-trace PATH [--no-cubin]: the planted trace, for the
 * CLI tests (tests/cli/test_lines_cli.sh). */
int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--write-trace") == 0) {
    write_trace_at(argv[2], !(argc > 3 && strcmp(argv[3], "--no-cubin") == 0));
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cubin_frames),
      cmocka_unit_test(test_cubin_frames_of_later_kernels),
      cmocka_unit_test(test_lines_of_inlined_kernel),
      cmocka_unit_test(test_lines_of_plain_kernel),
      cmocka_unit_test(test_lines_without_code),
      cmocka_unit_test(test_lines_from_sidecar),
      cmocka_unit_test(test_lines_of_one_launch),
      cmocka_unit_test(test_lines_errors),
      cmocka_unit_test(test_sources_embedded),
      cmocka_unit_test(test_sources_missing),
      cmocka_unit_test(test_sources_roots),
      cmocka_unit_test(test_sources_damaged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
