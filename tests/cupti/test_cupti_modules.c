/*
 * Tests of the CUPTI producer's module capture, without a GPU: cubins
 * handed over as CUPTI would, the code kept for used functions, and the
 * ELF walker on damaged input.
 *
 * SPDX-License-Identifier: MIT
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "cubin.h"
#include "process.h"
#include "mprof/error.h"
#include "mprof/reasons.h"
#include "mprof/sass.h"
#include "mprof/sidecar.h"
#include "mprof/status.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "translate.h"

#include "cupti_fixture.h"

/* ---- modules and cubins ------------------------------------------------- */

static void test_modules(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "modules", NULL);
  static unsigned char launched[4096], unused[4096], sampled[64];
  const char *launched_fns[] = {"_Z4gemmv", "_Z3fooPf"};
  const char *unused_fns[] = {"_Z3barv"};
  size_t launched_size = build_elf(launched, sizeof launched, launched_fns, 2);
  size_t unused_size = build_elf(unused, sizeof unused, unused_fns, 1);
  /* Not an ELF image: kept only because PC samples name its CRC. */
  memset(sampled, 0x5a, sizeof sampled);

  assert_int_equal(
      mprof_cupti_translate_module(f.t, 0x1111, 0, launched, launched_size), 0);
  assert_int_equal(
      mprof_cupti_translate_module(f.t, 0x2222, 0, unused, unused_size), 0);
  assert_int_equal(
      mprof_cupti_translate_module(f.t, 0x3333, 0, sampled, sizeof sampled), 0);
  /* The same image loaded again, on another device: one record, no device. */
  assert_int_equal(
      mprof_cupti_translate_module(f.t, 0x2222, 1, unused, unused_size), 0);

  CUpti_ActivityKernel10 k = kernel("_Z4gemmv", 0, 7, 10, 20, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  CUpti_PCSamplingStallReason reasons[] = {{2, 5}};
  CUpti_PCSamplingPCData pc;
  memset(&pc, 0, sizeof pc);
  pc.cubinCrc = 0x3333;
  pc.functionName = (char *)"_Z6hiddenv";
  pc.stallReasonCount = 1;
  pc.stallReason = reasons;
  translate_pcs(&f, &pc, 1);

  mprof_cupti_translate_stats stats;
  mprof_cupti_translate_get_stats(f.t, &stats);
  assert_int_equal(stats.modules, 3);
  assert_int_equal(stats.loaded_bytes,
                   launched_size + unused_size + sizeof sampled);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_kernel_record *kr = mprof_trace_kernels(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(kr[0].cubin_crc, 0x1111);
  assert_int_equal(kr[0].function_index, 1);

  const mprof_cubin_record *c = mprof_trace_cubins(f.trace, &n);
  assert_int_equal(n, 3);
  assert_int_equal(c[0].crc, 0x1111);
  assert_int_equal(c[0].flags, MPROF_CUBIN_KEPT_WHOLE);
  assert_int_equal(c[0].module_size, launched_size);
  assert_int_equal(c[0].device, 0);
  size_t blob_size = 0;
  const void *blob = mprof_trace_cubin_blob(f.trace, &c[0], &blob_size);
  assert_int_equal(blob_size, launched_size);
  assert_memory_equal(blob, launched, launched_size);

  assert_int_equal(c[1].crc, 0x2222);
  assert_int_equal(c[1].flags, MPROF_CUBIN_OMITTED);
  assert_int_equal(c[1].blob_size, 0);
  assert_int_equal(c[1].module_size, unused_size);
  assert_int_equal(c[1].device, MPROF_INDEX_NONE);

  assert_int_equal(c[2].crc, 0x3333);
  assert_int_equal(c[2].flags, MPROF_CUBIN_KEPT_WHOLE);
  blob = mprof_trace_cubin_blob(f.trace, &c[2], &blob_size);
  assert_int_equal(blob_size, sizeof sampled);
  assert_memory_equal(blob, sampled, sizeof sampled);

  assert_string_equal(mprof_trace_meta(f.trace, "cubins.loaded"), "3");
  assert_string_equal(mprof_trace_meta(f.trace, "cubins.kept"), "2");
  assert_string_equal(mprof_trace_meta(f.trace, "cubins.omitted"), "1");
  /* The non-ELF image is reported. */
  const char *error = mprof_trace_meta(f.trace, "error.0");
  assert_non_null(error);
  assert_non_null(strstr(error, "not an ELF64 image"));
  close_fixture(&f);
}

/* ---- many modules: only the used functions' code is kept ------------------
 */

/* The real nvcc cubin of tests/data/sass_kernels.cu (5 kernels). */
static unsigned char *fixture_cubin(size_t *size) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/nvdisasm/nvdisasm-kernels.cubin",
           root ? root : ".");
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static unsigned char buffer[1 << 16];
  *size = fread(buffer, 1, sizeof buffer, f);
  fclose(f);
  assert_true(*size > 1000 && *size < sizeof buffer);
  unsigned char *copy = (unsigned char *)malloc(*size);
  assert_non_null(copy);
  memcpy(copy, buffer, *size);
  return copy;
}

/* Bytes of section @p name in ELF @p image, or NULL when it has none. */
static const unsigned char *section_data(const unsigned char *image,
                                         const char *name, uint64_t *size) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
  const char *names = (const char *)image + sh[eh->e_shstrndx].sh_offset;
  for (unsigned i = 1; i < eh->e_shnum; i++) {
    if (strcmp(names + sh[i].sh_name, name) != 0)
      continue;
    *size = sh[i].sh_size;
    return sh[i].sh_type == SHT_NOBITS ? NULL : image + sh[i].sh_offset;
  }
  *size = 0;
  return NULL;
}

/* A stand-in nvdisasm that refuses every cubin, as a strict one might refuse
 * a trimmed one, and prints raw code (-b SM90 FILE) as one NOP per 16
 * bytes: SASS must still reach every sampled function. */
static const char *raw_only_nvdisasm(void) {
  static char path[4096];
  temp_path(path, sizeof path, "nvdisasm-raw-only");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\n"
        "echo \"$*\" >> \"$0.runs\"\n"
        "[ \"$1\" = -b ] || { echo 'cannot read this cubin' >&2; exit 1; }\n"
        "n=$(($(wc -c < \"$3\") / 16)); i=0\n"
        "while [ $i -lt $n ]; do\n"
        "  if [ $((i % 8)) -eq 7 ]; then\n"
        "    printf '        /*%04x*/                   BRA 0x%x ;\\n' "
        "$((i * 16)) $((i * 16))\n"
        "  else\n"
        "    printf '        /*%04x*/                   NOP ;\\n' $((i * 16))\n"
        "  fi\n"
        "  i=$((i + 1))\n"
        "done\n",
        f);
  fclose(f);
  chmod(path, 0755);
  return path;
}

/* How many times @p nvdisasm ran since the last call (its log goes). */
static size_t nvdisasm_runs(const char *nvdisasm) {
  char log[4200];
  snprintf(log, sizeof log, "%s.runs", nvdisasm);
  FILE *f = fopen(log, "r");
  size_t lines = 0;
  int c;
  while (f && (c = fgetc(f)) != EOF)
    lines += c == '\n';
  if (f)
    fclose(f);
  unlink(log);
  return lines;
}

enum { MODULES = 64 };

/* A program that loaded the fixture cubin as MODULES modules, launched one
 * kernel (in every module) and had one function sampled in the even
 * modules. With @p partial_size, a checkpoint follows, and *partial_size
 * gets the streamed file's size then. */
static void record_many_modules(fixture *f, const char *name,
                                const unsigned char *image, size_t size,
                                uint64_t *partial_size) {
  open_fixture(f, name, NULL);
  for (uint64_t m = 0; m < MODULES; m++)
    assert_int_equal(
        mprof_cupti_translate_module(f->t, 0x10000 + m, 0, image, size), 0);
  CUpti_ActivityKernel10 k = kernel("_Z5callkPf", 0, 7, 10, 20, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f->t, &k), 0);
  CUpti_PCSamplingStallReason reasons[] = {{2, 5}};
  for (uint64_t m = 0; m < MODULES; m += 2) {
    CUpti_PCSamplingPCData pc;
    memset(&pc, 0, sizeof pc);
    pc.cubinCrc = 0x10000 + m;
    pc.functionName = (char *)"_Z3shkPfi";
    pc.functionIndex = 21; /* its .symtab index (tests/data/nvdisasm) */
    pc.pcOffset = 0x40;
    pc.stallReasonCount = 1;
    pc.stallReason = reasons;
    translate_pcs(f, &pc, 1);
  }
  if (partial_size) {
    assert_int_equal(mprof_cupti_translate_checkpoint(f->t, 1000), 0);
    char partial[4200];
    snprintf(partial, sizeof partial, "%s.partial", f->path);
    struct stat st;
    assert_int_equal(stat(partial, &st), 0);
    *partial_size = (uint64_t)st.st_size;
  }
  finish_fixture(f);
}

static void test_many_modules_keep_used_code(void **state) {
  (void)state;
  size_t size;
  unsigned char *image = fixture_cubin(&size);
  fixture f;
  record_many_modules(&f, "many", image, size, NULL);

  /* Trace size: every module is kept, none whole; the code of the three
   * functions nobody used is gone from each. */
  uint64_t unused_code = 0, length;
  const char *unused[] = {"plain_c", "_Z4memkPfPKfS1_i", "_ZN2ns2tkIiEEvPT_"};
  for (size_t u = 0; u < 3; u++) {
    char name[128];
    snprintf(name, sizeof name, ".text.%s", unused[u]);
    assert_non_null(section_data(image, name, &length));
    unused_code += length;
    snprintf(name, sizeof name, ".nv.constant0.%s", unused[u]);
    assert_non_null(section_data(image, name, &length));
    unused_code += length;
  }
  size_t n = 0;
  const mprof_cubin_record *c = mprof_trace_cubins(f.trace, &n);
  assert_int_equal(n, MODULES);
  uint64_t blobs = 0;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(c[i].flags, MPROF_CUBIN_TRIMMED);
    assert_int_equal(c[i].module_size, size);
    size_t blob_size = 0;
    const unsigned char *blob = (const unsigned char *)mprof_trace_cubin_blob(
        f.trace, &c[i], &blob_size);
    assert_non_null(blob);
    int sampled = (c[i].crc - 0x10000) % 2 == 0;
    assert_true(blob_size <= size - unused_code - (sampled ? 0 : 0x200));
    blobs += blob_size;
    /* What is kept is byte for byte the module's code. */
    const char *kept[] = {".text._Z5callkPf", ".text._Z3shkPfi"};
    for (size_t k2 = 0; k2 < (sampled ? 2u : 1u); k2++) {
      uint64_t want_size, got_size;
      const unsigned char *want = section_data(image, kept[k2], &want_size);
      const unsigned char *got = section_data(blob, kept[k2], &got_size);
      assert_non_null(got);
      assert_int_equal(got_size, want_size);
      assert_memory_equal(got, want, want_size);
    }
    /* Nor are their names (the string tables are rebuilt; the PTX text of
     * a -lineinfo module still names them). */
    const char *tables[] = {".strtab", ".shstrtab"};
    for (size_t t = 0; t < 2; t++) {
      uint64_t table_size;
      const unsigned char *table = section_data(blob, tables[t], &table_size);
      assert_non_null(table);
      for (size_t u = 0; u < 3; u++)
        assert_null(memmem(table, table_size, unused[u], strlen(unused[u])));
      assert_non_null(memmem(table, table_size, "_Z5callkPf", 10));
    }
    /* libmprof sees only the kept functions. */
    mprof_sass_cubin *cubin;
    assert_int_equal(mprof_sass_cubin_open(&cubin, blob, blob_size, "t"), 0);
    assert_non_null(mprof_sass_cubin_find(cubin, "_Z5callkPf"));
    assert_true((mprof_sass_cubin_find(cubin, "_Z3shkPfi") != NULL) == sampled);
    for (size_t u = 0; u < 3; u++)
      assert_null(mprof_sass_cubin_find(cubin, unused[u]));
    mprof_sass_cubin_free(cubin);
  }
  assert_true(blobs <= MODULES * (size - unused_code));
  assert_string_equal(mprof_trace_meta(f.trace, "cubins.kept"), "64");

  /* SASS coverage: every sampled function and the launched kernel get code
   * in the sidecar, here through nvdisasm's raw mode: the real nvdisasm
   * refuses a cubin with NOBITS code ("Cannot find the code address"), so
   * trimmed cubins go to one `nvdisasm -b` run over all their functions. */
  char side[4200];
  snprintf(side, sizeof side, "%s.pc.json", f.path);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = raw_only_nvdisasm();
  opts.jobs = 4;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  int rc = mprof_sass_build_sidecar(f.path, side, &opts, &report);
  if (rc)
    fail_msg("%s", mprof_error_last());
  assert_int_equal(report.failed, 0);
  assert_int_equal(report.no_cubin, 0);
  assert_int_equal(report.with_sass, report.functions);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  for (uint64_t m = 0; m < MODULES; m += 2) {
    const mprof_sidecar_function *fn =
        mprof_sidecar_find(sc, "_Z3shkPfi", 0x10000 + m);
    assert_non_null(fn);
    assert_int_equal(fn->sass_state, MPROF_SASS_PRESENT);
    assert_int_equal(fn->instruction_count, 0x200 / 16);
    /* Branch targets count from the function, not from the batch. */
    const mprof_sass_instruction *bra = mprof_sidecar_instruction(fn, 0x70);
    assert_non_null(bra);
    assert_string_equal(bra->opcode, "BRA");
    assert_string_equal(bra->operands, "0x70");
  }
  mprof_sidecar_free(sc);
  unlink(side);
  unlink(opts.nvdisasm);

  /* Dropping the code afterwards leaves modules omitted, not trimmed. */
  char dropped_path[4200];
  snprintf(dropped_path, sizeof dropped_path, "%s.nocode", f.path);
  assert_int_equal(
      mprof_trace_rewrite(f.trace, dropped_path, MPROF_REWRITE_DROP_CODE), 0);
  mprof_trace *dropped;
  assert_int_equal(mprof_trace_open(&dropped, dropped_path, NULL), 0);
  c = mprof_trace_cubins(dropped, &n);
  assert_int_equal(n, MODULES);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(c[i].flags, MPROF_CUBIN_OMITTED);
  mprof_trace_free(dropped);
  unlink(dropped_path);
  free(image);
  close_fixture(&f);
}

/* Sidecar states of @p side: functions with samples, and those of them
 * with SASS; *deferred gets the deferred functions. */
static size_t sampled_with_sass(const char *side, size_t *sampled,
                                size_t *deferred) {
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  size_t with_sass = 0;
  *sampled = *deferred = 0;
  for (size_t i = 0; i < mprof_sidecar_function_count(sc); i++) {
    const mprof_sidecar_function *fn = mprof_sidecar_function_at(sc, i);
    *deferred += fn->sass_state == MPROF_SASS_DEFERRED;
    if (!fn->pc_count)
      continue;
    (*sampled)++;
    with_sass += fn->sass_state == MPROF_SASS_PRESENT;
  }
  mprof_sidecar_free(sc);
  return with_sass;
}

static uint64_t file_size(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return (uint64_t)st.st_size;
}

/* What `mprof record` costs on a program with many modules: the trace and
 * sidecar sizes, how many nvdisasm runs and when, and the SASS coverage of
 * sampled functions, for each way the sidecar is made. */
static void test_many_modules_cost(void **state) {
  (void)state;
  size_t size;
  unsigned char *image = fixture_cubin(&size);
  fixture f;
  record_many_modules(&f, "cost", image, size, NULL);
  char side[4200];
  snprintf(side, sizeof side, "%s.pc.json", f.path);
  const char *nvdisasm = raw_only_nvdisasm();
  nvdisasm_runs(nvdisasm);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = nvdisasm;
  opts.jobs = 4;
  size_t sampled, deferred;

  /* `record`: no nvdisasm at all; every sampled function waits. */
  opts.flags = MPROF_SASS_DEFER;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_build_sidecar(f.path, side, &opts, &report), 0);
  assert_int_equal(nvdisasm_runs(nvdisasm), 0);
  assert_int_equal(report.functions, 1 + MODULES / 2);
  assert_int_equal(report.deferred, 1 + MODULES / 2);
  assert_int_equal(report.deferred_sampled, MODULES / 2);
  assert_int_equal(sampled_with_sass(side, &sampled, &deferred), 0);
  /* 64 modules of 15,720 bytes (1,006,080) were loaded; the trace keeps
   * the code of the one or two used functions of each, without the names,
   * PTX text and unwind tables of the rest: under 40% of that (388,272
   * bytes when this was written; 674,992 with the PTX text and unwind
   * tables). */
  uint64_t loaded = (uint64_t)MODULES * size;
  uint64_t trace_bytes = file_size(f.path);
  assert_int_equal(loaded, 1006080);
  assert_true(trace_bytes * 10 <= loaded * 4);

  /* The first summary: one nvdisasm run for all 32 sampled functions (the
   * code of 64 trimmed modules for one SM is under 1 MiB), then none. */
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  opts.flags = 0;
  mprof_sass_report done = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_complete(sc, f.path, side, &opts, &done), 0);
  assert_int_equal(done.attached, MODULES / 2);
  assert_int_equal(nvdisasm_runs(nvdisasm), 1);
  done.attached = 0;
  assert_int_equal(mprof_sass_complete(sc, f.path, side, &opts, &done), 0);
  assert_int_equal(done.attached, 0);
  assert_int_equal(nvdisasm_runs(nvdisasm), 0);
  mprof_sidecar_free(sc);
  assert_int_equal(sampled_with_sass(side, &sampled, &deferred), MODULES / 2);
  assert_int_equal(sampled, MODULES / 2);
  assert_int_equal(deferred, 1); /* the launched kernel had no samples */
  /* Trace and sidecar: under 45% of the modules as loaded (432,819). */
  uint64_t completed_bytes = file_size(side);
  assert_true((trace_bytes + completed_bytes) * 100 <= loaded * 45);

  /* --sass-now: the same coverage, one run before record returns. */
  opts.flags = MPROF_SASS_SAMPLED_ONLY;
  assert_int_equal(mprof_sass_build_sidecar(f.path, side, &opts, NULL), 0);
  assert_int_equal(nvdisasm_runs(nvdisasm), 1);
  assert_int_equal(sampled_with_sass(side, &sampled, &deferred), MODULES / 2);
  assert_int_equal(deferred, 1);
  assert_int_equal(file_size(side), completed_bytes);

  /* `mprof sass` (and --drop-code): every function, still one run. */
  opts.flags = 0;
  assert_int_equal(mprof_sass_build_sidecar(f.path, side, &opts, &report), 0);
  assert_int_equal(nvdisasm_runs(nvdisasm), 1);
  assert_int_equal(report.with_sass, 1 + MODULES / 2);
  assert_true(file_size(side) > completed_bytes);

  unlink(side);
  unlink(nvdisasm);
  free(image);
  close_fixture(&f);
}

/* ---- code and open ranges of a capture cut short ------------------------- */

/* Streaming the used modules as soon as a checkpoint sees them costs the
 * streamed file their whole code while the program runs, and the finished
 * trace nothing: it keeps the same trimmed code as before. */
static void test_streamed_code_cost(void **state) {
  (void)state;
  size_t size;
  unsigned char *image = fixture_cubin(&size);
  fixture plain, streamed;
  record_many_modules(&plain, "plain", image, size, NULL);
  uint64_t partial = 0;
  record_many_modules(&streamed, "streamed", image, size, &partial);
  /* While it ran: the 64 used modules whole (1,006,080 bytes), and little
   * else. */
  uint64_t loaded = (uint64_t)MODULES * size;
  assert_true(partial >= loaded && partial < loaded + 64 * 1024);
  assert_string_equal(mprof_trace_meta(streamed.trace, "cubins.streamed"),
                      "64");
  assert_string_equal(mprof_trace_meta(streamed.trace, "cubins.streamed_bytes"),
                      "1006080");
  assert_string_equal(mprof_trace_meta(plain.trace, "cubins.streamed"), "0");
  /* Finished: the code is the trimmed code of a capture that never
   * checkpointed, byte for byte, and the file no larger (but for the few
   * bytes of META that count what was streamed). */
  size_t n, m;
  const mprof_cubin_record *a = mprof_trace_cubins(plain.trace, &n);
  const mprof_cubin_record *b = mprof_trace_cubins(streamed.trace, &m);
  assert_int_equal(n, MODULES);
  assert_int_equal(m, MODULES);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(b[i].flags, MPROF_CUBIN_TRIMMED);
    assert_int_equal(b[i].device, 0);
    size_t a_size, b_size;
    const void *a_blob = mprof_trace_cubin_blob(plain.trace, &a[i], &a_size);
    const void *b_blob = mprof_trace_cubin_blob(streamed.trace, &b[i], &b_size);
    assert_int_equal(a_size, b_size);
    assert_memory_equal(a_blob, b_blob, a_size);
  }
  uint64_t plain_bytes = file_size(plain.path);
  uint64_t streamed_bytes = file_size(streamed.path);
  assert_true(streamed_bytes <= plain_bytes + 64);
  assert_true(streamed_bytes * 10 <=
              loaded * 4); /* as test_many_modules_cost */
  free(image);
  close_fixture(&plain);
  close_fixture(&streamed);
}

/* A stand-in nvdisasm for trimmed code (`-b SM90 FILE`, the raw mode
 * trimmed cubins go through): one "RAW 0x<16 bytes in hex>" per
 * instruction, so the SASS shows exactly the code nvdisasm was given. */
static const char *hex_nvdisasm(void) {
  static char path[4096];
  temp_path(path, sizeof path, "nvdisasm-hex");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\n"
        "[ \"$1\" = -b ] || { echo 'cannot read this cubin' >&2; exit 1; }\n"
        "od -An -v -tx1 -w16 \"$3\" | awk '{ h = \"\"; "
        "for (i = 1; i <= NF; i++) h = h $i; "
        "printf \"        /*%04x*/                   RAW 0x%s ;\\n\", "
        "(NR - 1) * 16, h }'\n",
        f);
  fclose(f);
  chmod(path, 0755);
  return path;
}

/* The line of `mprof info @p path` that starts with @p prefix, in @p out. */
static void info_line(const char *path, const char *prefix, char *out,
                      size_t size) {
  const char *mprof = getenv("MPROF_BIN"); /* set by ctest */
  assert_non_null(mprof);
  char command[9000];
  snprintf(command, sizeof command, "'%s' info '%s'", mprof, path);
  FILE *info = popen(command, "r");
  assert_non_null(info);
  out[0] = '\0';
  char line[1024];
  while (fgets(line, sizeof line, info))
    if (strncmp(line, prefix, strlen(prefix)) == 0)
      snprintf(out, size, "%s", line);
  assert_int_equal(pclose(info), 0);
}

/* `mprof record` on a program killed after @p partial's checkpoint (here
 * `cp`, which leaves that partial trace where the producer would): its
 * rewrite keeps the code of the launched kernel only, as finish does, and
 * that code, byte for byte the module's, disassembles the same. */
static void expect_record_trims(const char *partial, const unsigned char *image,
                                size_t size) {
  const char *mprof = getenv("MPROF_BIN"); /* set by ctest */
  assert_non_null(mprof);
  char recorded[4300], side[4400], command[13000];
  snprintf(recorded, sizeof recorded, "%s.recorded.mprof", partial);
  snprintf(side, sizeof side, "%s.pc.json", recorded);
  snprintf(command, sizeof command,
           "'%s' record -q -o '%s' -- cp '%s' '%s' >/dev/null 2>&1", mprof,
           recorded, partial, recorded);
  char line[1024];
  info_line(partial, "code ", line, sizeof line);
  assert_non_null(strstr(line, "code       1 module (15.4 KiB as loaded): 0 "
                               "trimmed to the functions that ran, 1 whole, 0 "
                               "without code; 15.4 KiB kept\n"));
  assert_int_equal(system(command), 0);
  info_line(recorded, "code ", line, sizeof line);
  assert_non_null(strstr(line, "code       1 module (15.4 KiB as loaded): 1 "
                               "trimmed to the functions that ran, 0 whole, 0 "
                               "without code; "));
  mprof_trace *trace;
  if (mprof_trace_open(&trace, recorded, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  assert_int_equal(mprof_trace_partial(trace, NULL), 1);
  size_t n, blob_size = 0;
  const mprof_cubin_record *c = mprof_trace_cubins(trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(c[0].crc, 0x5150);
  assert_int_equal(c[0].flags, MPROF_CUBIN_TRIMMED);
  assert_int_equal(c[0].module_size, size);
  const unsigned char *blob =
      (const unsigned char *)mprof_trace_cubin_blob(trace, &c[0], &blob_size);
  assert_non_null(blob);
  /* The functions nothing ran are gone: their code and their names. */
  const char *unused[] = {"plain_c", "_Z4memkPfPKfS1_i", "_ZN2ns2tkIiEEvPT_",
                          "_Z3shkPfi"};
  uint64_t unused_code = 0, length;
  for (size_t u = 0; u < 4; u++) {
    char name[128];
    snprintf(name, sizeof name, ".text.%s", unused[u]);
    assert_non_null(section_data(image, name, &length));
    unused_code += length;
    assert_null(section_data(blob, name, &length));
  }
  assert_true(blob_size <= size - unused_code);
  mprof_sass_cubin *cubin;
  assert_int_equal(mprof_sass_cubin_open(&cubin, blob, blob_size, "t"), 0);
  assert_non_null(mprof_sass_cubin_find(cubin, "_Z5callkPf"));
  for (size_t u = 0; u < 4; u++)
    assert_null(mprof_sass_cubin_find(cubin, unused[u]));
  mprof_sass_cubin_free(cubin);
  /* The launched kernel's code is the module's, and its SASS is what its
   * bytes disassemble to. */
  uint64_t want_size, got_size;
  const unsigned char *want =
      section_data(image, ".text._Z5callkPf", &want_size);
  const unsigned char *got = section_data(blob, ".text._Z5callkPf", &got_size);
  assert_non_null(got);
  assert_int_equal(got_size, want_size);
  assert_memory_equal(got, want, want_size);
  mprof_trace_free(trace);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = hex_nvdisasm();
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  if (mprof_sass_build_sidecar(recorded, side, &opts, &report) != 0)
    fail_msg("%s", mprof_error_last());
  assert_int_equal(report.failed, 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  const mprof_sidecar_function *fn =
      mprof_sidecar_find(sc, "_Z5callkPf", 0x5150);
  assert_non_null(fn);
  assert_int_equal(fn->sass_state, MPROF_SASS_PRESENT);
  assert_true(fn->instruction_count > 0);
  for (uint32_t at = 0; at < fn->instruction_count * 16u && at < want_size;
       at += 16) {
    const mprof_sass_instruction *in = mprof_sidecar_instruction(fn, at);
    assert_non_null(in);
    char hex[40] = "0x";
    for (size_t b = 0; b < 16; b++)
      snprintf(hex + 2 + 2 * b, 3, "%02x", want[at + b]);
    assert_string_equal(in->operands, hex);
  }
  mprof_sidecar_free(sc);
  unlink(opts.nvdisasm);
  unlink(side);
  unlink(recorded);
}

/* A program killed (SIGKILL) after a module load, a launch and NVTX ranges
 * still open, one checkpoint after them: the partial trace has the
 * kernel's code and the ranges, open up to the checkpoint. */
static void test_killed_capture_keeps_code_and_open_ranges(void **state) {
  (void)state;
  size_t size;
  unsigned char *image = fixture_cubin(&size);
  static unsigned char unused[4096];
  const char *unused_fns[] = {"_Z3barv"};
  size_t unused_size = build_elf(unused, sizeof unused, unused_fns, 1);
  char path[4096], partial[4200];
  temp_path(path, sizeof path, "killed");
  snprintf(partial, sizeof partial, "%s.partial", path);
  unlink(partial);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    mprof_writer *w;
    mprof_cupti_translate *t;
    if (mprof_writer_open(&w, path, NULL) != 0 ||
        mprof_cupti_translate_new(&t, w, NULL) != 0)
      _exit(2);
    int rc = mprof_cupti_translate_module(t, 0x5150, 0, image, size);
    rc |= mprof_cupti_translate_module(t, 0x5151, 0, unused, unused_size);
    CUpti_ActivityMarker2 markers[] = {
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, "train", 77),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 2000, "step 0", 77),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 3000, NULL, 77),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 4000, "step 1", 77),
    };
    for (size_t i = 0; i < 4; i++)
      rc |= mprof_cupti_translate_marker(t, &markers[i]);
    CUpti_ActivityKernel10 k = kernel("_Z5callkPf", 0, 7, 4100, 4200, 1);
    rc |= mprof_cupti_translate_kernel(t, &k);
    rc |= mprof_cupti_translate_checkpoint(t, 5000);
    if (rc)
      _exit(3);
    /* What comes after the checkpoint is not committed. */
    CUpti_ActivityMarker2 late =
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 6000, NULL, 77);
    mprof_cupti_translate_marker(t, &late);
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  mprof_trace *trace;
  if (mprof_trace_open(&trace, partial, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  assert_int_equal(mprof_trace_partial(trace, NULL), 1);
  size_t n;
  mprof_trace_launches(trace, &n);
  assert_int_equal(n, 1);
  /* The launched kernel's module, whole, with its SASS; not the module
   * nothing used. */
  const mprof_cubin_record *c = mprof_trace_cubins(trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(c[0].crc, 0x5150);
  assert_int_equal(c[0].flags, MPROF_CUBIN_KEPT_WHOLE);
  size_t blob_size = 0;
  const void *blob = mprof_trace_cubin_blob(trace, &c[0], &blob_size);
  assert_int_equal(blob_size, size);
  assert_memory_equal(blob, image, size);
  mprof_sass_cubin *cubin;
  assert_int_equal(mprof_sass_cubin_open(&cubin, blob, blob_size, "t"), 0);
  assert_non_null(mprof_sass_cubin_find(cubin, "_Z5callkPf"));
  mprof_sass_cubin_free(cubin);
  /* The closed step as it was; train and step 1 open up to the
   * checkpoint, and flagged so. */
  const mprof_range_record *r = mprof_trace_ranges(trace, &n);
  assert_int_equal(n, 3);
  const char *names[] = {"step 0", "train", "step 1"};
  const uint64_t starts[] = {2000, 1000, 4000}, ends[] = {3000, 5000, 5000};
  const uint32_t depths[] = {1, 0, 1};
  const uint32_t flags[] = {0, MPROF_RANGE_FLAG_OPEN, MPROF_RANGE_FLAG_OPEN};
  for (size_t i = 0; i < 3; i++) {
    assert_string_equal(str(trace, r[i].name), names[i]);
    assert_int_equal(r[i].start, starts[i]);
    assert_int_equal(r[i].end, ends[i]);
    assert_int_equal(r[i].depth, depths[i]);
    assert_int_equal(r[i].thread_id, 77);
    assert_int_equal(r[i].flags, flags[i]);
  }
  mprof_trace_free(trace);
  /* `mprof info` names them. */
  const char *mprof = getenv("MPROF_BIN"); /* set by ctest */
  assert_non_null(mprof);
  {
    char command[9000], line[1024];
    snprintf(command, sizeof command, "'%s' info '%s'", mprof, partial);
    FILE *info = popen(command, "r");
    assert_non_null(info);
    int found = 0;
    while (fgets(line, sizeof line, info))
      found |= strcmp(line, "open       2 NVTX ranges still open at the cut, "
                            "shown ending there: train (thread 77), step 1 "
                            "(thread 77)\n") == 0;
    assert_int_equal(pclose(info), 0);
    assert_true(found);
  }
  expect_record_trims(partial, image, size);
  unlink(partial);
  free(image);
}

static void test_modules_without_sass(void **state) {
  (void)state;
  mprof_cupti_translate_options opts;
  memset(&opts, 0, sizeof opts);
  opts.keep_sass = 0;
  fixture f;
  open_fixture(&f, "nosass", &opts);
  static unsigned char image[4096];
  const char *fns[] = {"_Z4gemmv"};
  size_t size = build_elf(image, sizeof image, fns, 1);
  assert_int_equal(mprof_cupti_translate_module(f.t, 0x1111, 0, image, size),
                   0);
  CUpti_ActivityKernel10 k = kernel("_Z4gemmv", 0, 7, 10, 20, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  finish_fixture(&f);
  size_t n = 0;
  const mprof_cubin_record *c = mprof_trace_cubins(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(c[0].flags, MPROF_CUBIN_OMITTED);
  assert_int_equal(c[0].module_size, size);
  /* The kernel still learns its module from the symbol table. */
  const mprof_kernel_record *kr = mprof_trace_kernels(f.trace, &n);
  assert_int_equal(kr[0].cubin_crc, 0x1111);
  assert_int_equal(kr[0].function_index, 1);
  close_fixture(&f);
}

/* A name in two modules pins neither: post-processing joins by name. */
static void test_ambiguous_kernel_name(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "ambiguous", NULL);
  static unsigned char a[4096], b[4096];
  const char *fns[] = {"_Z4gemmv"};
  size_t size_a = build_elf(a, sizeof a, fns, 1);
  /* Two modules (CRCs) whose symbol tables share a name, as when one
   * kernel is compiled into two libraries. */
  size_t size_b = build_elf(b, sizeof b, fns, 1);
  mprof_cupti_translate_module(f.t, 0xa, 0, a, size_a);
  mprof_cupti_translate_module(f.t, 0xb, 0, b, size_b);
  CUpti_ActivityKernel10 k = kernel("_Z4gemmv", 0, 7, 10, 20, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  finish_fixture(&f);
  size_t n = 0;
  const mprof_kernel_record *kr = mprof_trace_kernels(f.trace, &n);
  assert_int_equal(kr[0].cubin_crc, 0);
  assert_int_equal(kr[0].function_index, MPROF_INDEX_NONE);
  const mprof_cubin_record *c = mprof_trace_cubins(f.trace, &n);
  assert_int_equal(n, 2);
  assert_int_equal(c[0].flags, MPROF_CUBIN_KEPT_WHOLE);
  assert_int_equal(c[1].flags, MPROF_CUBIN_KEPT_WHOLE);
  close_fixture(&f);
}

static void count_function(void *userdata, const char *name, uint32_t index) {
  (void)name;
  (void)index;
  (*(int *)userdata)++;
}

static void test_elf_walker_rejects_damage(void **state) {
  (void)state;
  static unsigned char image[4096];
  const char *fns[] = {"_Z1av", "_Z1bv", "_Z1cv"};
  size_t size = build_elf(image, sizeof image, fns, 3);
  int seen = 0;
  assert_int_equal(mprof__cubin_functions(image, size, count_function, &seen),
                   3);
  assert_int_equal(seen, 3);
  /* Every truncation is refused or reports fewer functions; none crashes. */
  for (size_t cut = 0; cut < size; cut += 7) {
    seen = 0;
    int rc = mprof__cubin_functions(image, cut, count_function, &seen);
    assert_true(rc <= 3);
  }
  assert_int_equal(
      mprof__cubin_functions("not an elf", 10, count_function, &seen), -1);
  assert_int_equal(mprof__cubin_functions(NULL, 0, count_function, &seen), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_modules),
      cmocka_unit_test(test_modules_without_sass),
      cmocka_unit_test(test_ambiguous_kernel_name),
      cmocka_unit_test(test_elf_walker_rejects_damage),
      cmocka_unit_test(test_many_modules_keep_used_code),
      cmocka_unit_test(test_many_modules_cost),
      cmocka_unit_test(test_streamed_code_cost),
      cmocka_unit_test(test_killed_capture_keeps_code_and_open_ranges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
