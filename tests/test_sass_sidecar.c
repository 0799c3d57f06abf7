/*
 * mprof tests — the sass module's sidecar of a trace: built with and
 * without a disassembler, deferred to the first reader, for a cubin of
 * another CRC, attached from a file, and its errors (the synthetic cubin of
 * sass_fixture.c, a stand-in nvdisasm).
 *
 * SPDX-License-Identifier: MIT
 */
#include <sys/stat.h>

#include "analysis_util.h"

#include "mprof/mprof.h"

#include "sass_fixture.h"

/* ---- the sidecar of a trace -------------------------------------------- */

#define KERN_CRC 0xabcull

/* A trace with _Z4kernPf (crc KERN_CRC) launched and sampled, and a
 * sampled function no cubin holds. @p cubin_crc is the captured cubin's CRC
 * (0: the producer kept no code). */
static void write_trace(const char *path, const unsigned char *cubin,
                        size_t cubin_size, uint64_t cubin_crc) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_device(w, 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.mangled_name = mprof_writer_string(w, "_Z4kernPf");
  k.cubin_crc = KERN_CRC;
  k.function_index = 2;
  k.device = d;
  k.registers = 0; /* unknown: the cubin's value is used */
  k.static_shared = 0;
  assert_int_equal(mprof_writer_intern(w, NULL, MPROF_SECTION_KERNELS, &k), 0);
  static const char *const reasons[] = {
      "smsp__pcsamp_warps_issue_stalled_barrier",
      "smsp__pcsamp_warps_issue_stalled_long_scoreboard"};
  for (uint32_t r = 0; r < 2; r++) {
    mprof_stall_reason_record sr = {d, r == 0 ? 0 : 6,
                                    mprof_writer_string(w, reasons[r]), 0};
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
  }
  const struct {
    const char *name;
    uint64_t crc;
    uint32_t offset, reason, samples;
  } pcs[] = {
      {"_Z4kernPf", KERN_CRC, 0x90, 0, 5},
      {"_Z4kernPf", KERN_CRC, 0x20, 6, 10},
      {"_Z7missingv", 0x999, 0x10, 6, 4},
      {"_Z4kernPf", KERN_CRC, 0x20, 6, 20},
      {"_Z4kernPf", KERN_CRC, 0x20, 6, 30},
      {"_Z4kernPf", KERN_CRC, 0x20, 0, 1},
  };
  for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++) {
    mprof_pc_sample_record pc;
    memset(&pc, 0, sizeof pc);
    pc.cubin_crc = pcs[i].crc;
    pc.function_name = mprof_writer_string(w, pcs[i].name);
    pc.function_index = 2;
    pc.pc_offset = pcs[i].offset;
    pc.stall_reason = pcs[i].reason;
    pc.samples = pcs[i].samples;
    pc.device = d;
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc), 0);
  }
  mprof_cubin_record cr = {cubin_crc ? cubin_crc : KERN_CRC,
                           0,
                           0,
                           cubin_size,
                           d,
                           cubin_crc ? MPROF_CUBIN_KEPT_WHOLE
                                     : MPROF_CUBIN_OMITTED};
  assert_int_equal(mprof_writer_cubin(w, &cr, cubin_crc ? cubin : NULL,
                                      cubin_crc ? cubin_size : 0),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* test_path(STEM.mprof): the trace of write_trace() around the synthetic
 * cubin, captured under @p crc (0: no code kept); @p side gets the path of
 * its sidecar. Both buffers hold 1100 bytes. */
static void make_trace(char *trace, char *side, const char *stem,
                       uint64_t crc) {
  char name[256];
  snprintf(name, sizeof name, "%s.mprof", stem);
  snprintf(trace, 1100, "%s", test_path(name));
  snprintf(name, sizeof name, "%s.mprof.pc.json", stem);
  snprintf(side, 1100, "%s", test_path(name));
  size_t size;
  unsigned char *cubin = synthetic_cubin(&size, 0);
  write_trace(trace, cubin, size, crc);
  free(cubin);
}

static void check_samples(const mprof_sidecar *sc) {
  assert_int_equal(mprof_sidecar_stall_reason_count(sc), 7);
  assert_string_equal(mprof_sidecar_stall_reason(sc, 6),
                      "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
  const mprof_sidecar_function *k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_non_null(k);
  assert_string_equal(k->demangled, "kern(float*)");
  assert_true(k->cubin_crc == KERN_CRC);
  assert_int_equal(k->device, 0);
  assert_int_equal(k->pc_count, 2);
  assert_int_equal(k->pcs[0].offset, 0x20);
  assert_int_equal(k->pcs[0].counts[6], 60);
  assert_int_equal(k->pcs[0].counts[0], 1);
  assert_int_equal(k->pcs[1].offset, 0x90);
  assert_int_equal(k->pcs[1].counts[0], 5);
  const mprof_sidecar_function *m = mprof_sidecar_find(sc, "_Z7missingv", 0);
  assert_non_null(m);
  assert_string_equal(m->demangled, "missing()");
  assert_int_equal(m->sass_state, MPROF_SASS_NO_CUBIN);
  assert_int_equal(m->instruction_count, 0);
  assert_int_equal(m->pcs[0].counts[6], 4);
}

static void test_build_without_disassembler(void **state) {
  (void)state;
  char trace[1100], side[1100];
  make_trace(trace, side, "lines", KERN_CRC);
  /* nvdisasm "installed" but wrong: like a machine without it. */
  setenv("MPROF_NVDISASM", "/nonexistent/nvdisasm", 1);
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, NULL, &report), 0);
  unsetenv("MPROF_NVDISASM");
  assert_int_equal(report.functions, 2);
  assert_int_equal(report.with_sass, 0);
  assert_int_equal(report.with_lines, 1);
  assert_int_equal(report.no_disassembler, 1);
  assert_int_equal(report.no_cubin, 1);
  assert_int_equal(report.failed, 0);
  assert_int_equal(report.attached, 1);
  assert_int_equal(report.samples, 70);
  assert_string_equal(report.disassembler, "");
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  check_samples(sc);
  const mprof_sidecar_function *k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_NO_DISASSEMBLER);
  assert_int_equal(k->size, 0x100);
  assert_int_equal(k->registers, 24);
  assert_int_equal(k->static_shared, 512);
  assert_int_equal(k->function_index, 2);
  /* No SASS, but every instruction slot has its source line. */
  assert_int_equal(k->instruction_count, 16);
  const mprof_sass_instruction *in = mprof_sidecar_instruction(k, 0x20);
  assert_non_null(in);
  assert_string_equal(in->opcode, "");
  assert_int_equal(in->line, 13);
  assert_string_equal(in->file, "/src/k.cu");
  in = mprof_sidecar_instruction(k, 0x90);
  assert_int_equal(in->line, 3);
  assert_string_equal(in->file, "/inc/h.cuh");
  mprof_sidecar_free(sc);

  /* --no-sass: the same, even with nvdisasm at hand. */
  char args[1100];
  snprintf(args, sizeof args, "%s", test_path("unused-args"));
  unlink(args);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = fake_nvdisasm(args, 0);
  opts.flags = MPROF_SASS_NO_DISASSEMBLY;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, NULL), 0);
  struct stat st;
  assert_int_not_equal(stat(args, &st), 0); /* it never ran */
  unlink(trace);
  unlink(side);
}

static void test_build_with_disassembler(void **state) {
  (void)state;
  char trace[1100], side[1100];
  make_trace(trace, side, "sass", KERN_CRC);
  char args[1100];
  snprintf(args, sizeof args, "%s", test_path("build-args"));
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = fake_nvdisasm(args, 0);
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  assert_int_equal(report.with_sass, 1);
  assert_int_equal(report.no_cubin, 1);
  assert_string_equal(report.disassembler, opts.nvdisasm);
  size_t n;
  char *got = (char *)test_read_file(args, &n);
  assert_non_null(got);
  assert_true(strncmp(got, "-c -g -fun 2 ", 13) == 0);
  free(got);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  check_samples(sc);
  const mprof_sidecar_function *k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_PRESENT);
  assert_int_equal(k->instruction_count, 16);
  const mprof_sass_instruction *in = mprof_sidecar_instruction(k, 0x20);
  assert_string_equal(in->opcode, "IADD3");
  assert_string_equal(in->operands, "R2, R1, 0x1, RZ");
  assert_int_equal(in->line, 13); /* no comment yet: from .debug_line */
  in = mprof_sidecar_instruction(k, 0x40);
  assert_int_equal(in->line, 77); /* nvdisasm's comment */
  mprof_sidecar_free(sc);

  /* An nvdisasm that takes no -fun: the whole cubin is asked for. */
  char body[2048];
  snprintf(body, sizeof body,
           "case \"$*\" in *-fun*) echo 'unknown option -fun' >&2; exit 1;; "
           "esac\nexec '%s' \"$@\"\n",
           opts.nvdisasm);
  opts.nvdisasm = write_script("nvdisasm-no-fun", body);
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  assert_int_equal(report.with_sass, 1);
  got = (char *)test_read_file(args, &n);
  assert_non_null(got);
  assert_true(strncmp(got, "-c -g /", 7) == 0);
  free(got);

  /* A failing disassembler is recorded per function. */
  opts.nvdisasm = fake_nvdisasm(args, 1);
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  assert_int_equal(report.failed, 1);
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_FAILED);
  assert_non_null(strstr(k->sass_error, "Could not open input file"));
  mprof_sidecar_free(sc);
  unlink(trace);
  unlink(side);
}

/* `mprof record` defers disassembly: the sidecar it writes has lines and
 * resources but no SASS, and the first reader's mprof_sass_complete() runs
 * nvdisasm once and saves the result; later readers run nothing. */
static void test_build_deferred(void **state) {
  (void)state;
  char trace[1100], side[1100];
  make_trace(trace, side, "later", KERN_CRC);
  char args[1100];
  snprintf(args, sizeof args, "%s", test_path("deferred-args"));
  unlink(args);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = fake_nvdisasm(args, 0);
  opts.flags = MPROF_SASS_DEFER;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  struct stat st;
  assert_int_not_equal(stat(args, &st), 0); /* nvdisasm did not run */
  assert_int_equal(report.functions, 2);
  assert_int_equal(report.with_sass, 0);
  assert_int_equal(report.deferred, 1);
  assert_int_equal(report.deferred_sampled, 1);
  assert_int_equal(report.no_cubin, 1);
  assert_int_equal(report.no_disassembler, 0);
  assert_int_equal(report.with_lines, 1);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  check_samples(sc);
  const mprof_sidecar_function *k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_DEFERRED);
  assert_int_equal(k->size, 0x100);
  assert_int_equal(k->registers, 24);
  const mprof_sass_instruction *in = mprof_sidecar_instruction(k, 0x20);
  assert_non_null(in);
  assert_string_equal(in->opcode, "");
  assert_int_equal(in->line, 13);

  /* The first reader: one nvdisasm run, SASS saved for the next. */
  opts.flags = 0;
  mprof_sass_report done = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_complete(sc, trace, side, &opts, &done), 0);
  assert_int_equal(done.attached, 1);
  assert_int_equal(done.with_sass, 1);
  assert_int_equal(done.deferred, 0);
  size_t n;
  char *got = (char *)test_read_file(args, &n);
  assert_non_null(got);
  assert_true(strncmp(got, "-c -g -fun 2 ", 13) == 0);
  free(got);
  k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_PRESENT);
  assert_string_equal(mprof_sidecar_instruction(k, 0x20)->opcode, "IADD3");
  mprof_sidecar_free(sc);
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_PRESENT);
  assert_int_equal(k->instruction_count, 16);
  check_samples(sc);
  /* The next reader finds nothing to do. */
  unlink(args);
  done.attached = 0;
  assert_int_equal(mprof_sass_complete(sc, trace, side, &opts, &done), 0);
  assert_int_equal(done.attached, 0);
  assert_int_not_equal(stat(args, &st), 0);
  mprof_sidecar_free(sc);

  /* Where nvdisasm is missing, the functions stay deferred, unsaved. */
  opts.flags = MPROF_SASS_DEFER;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, NULL), 0);
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  setenv("MPROF_NVDISASM", "/nonexistent/nvdisasm", 1);
  done.attached = 0;
  assert_int_equal(mprof_sass_complete(sc, trace, side, NULL, &done), 0);
  unsetenv("MPROF_NVDISASM");
  assert_int_equal(done.attached, 0);
  assert_int_equal(done.deferred_sampled, 1);
  assert_string_equal(done.disassembler, "");
  k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_DEFERRED);
  /* What a user sees: `mprof summary` right after `record` shows the SASS
   * (the stand-in's IADD3) and leaves it in the sidecar for the next. */
  const char *mprof = getenv("MPROF_BIN");
  if (mprof) {
    char command[4096];
    snprintf(command, sizeof command,
             "MPROF_NVDISASM='%s' '%s' summary --human --kernel kern '%s' "
             "2>&1",
             fake_nvdisasm(args, 0), mprof, trace);
    unlink(args);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    char text[65536];
    size_t got_size = fread(text, 1, sizeof text - 1, p);
    text[got_size] = '\0';
    assert_int_equal(pclose(p), 0);
    if (!strstr(text, "IADD3"))
      fail_msg("summary shows no SASS:\n%s", text);
    assert_int_equal(stat(args, &st), 0); /* nvdisasm ran */
    mprof_sidecar *saved;
    assert_int_equal(mprof_sidecar_load(&saved, side), 0);
    assert_int_equal(mprof_sidecar_find(saved, "_Z4kernPf", 0)->sass_state,
                     MPROF_SASS_PRESENT);
    mprof_sidecar_free(saved);
    unlink(args);
    p = popen(command, "r");
    assert_non_null(p);
    got_size = fread(text, 1, sizeof text - 1, p);
    text[got_size] = '\0';
    assert_int_equal(pclose(p), 0);
    assert_non_null(strstr(text, "IADD3"));
    assert_int_not_equal(stat(args, &st), 0); /* nothing left to do */
  }
  /* A version-1 report (no `deferred` fields) is still taken. */
  mprof_sass_report old = MPROF_SASS_REPORT_INIT;
  old.version = 1;
  assert_int_equal(mprof_sass_report_count(&old, sc), 0);
  assert_int_equal(old.functions, 2);
  assert_int_equal(old.deferred, 0);
  mprof_sidecar_free(sc);
  unlink(trace);
  unlink(side);
}

/* Code under another CRC is other code, whatever its name. */
static void test_build_other_crc(void **state) {
  (void)state;
  char trace[1100], side[1100];
  make_trace(trace, side, "other", 0xdefull);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.flags = MPROF_SASS_NO_DISASSEMBLY;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  assert_int_equal(report.no_cubin, 2);
  assert_int_equal(report.attached, 0);
  unlink(trace);
  unlink(side);
}

/* The producer kept no code: `mprof sass TRACE FILE` brings it. */
static void test_attach_from_file(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = synthetic_cubin(&size, 0);
  char trace[1100];
  snprintf(trace, sizeof trace, "%s", test_path("bare.mprof"));
  char side[1100];
  snprintf(side, sizeof side, "%s", test_path("bare.mprof.pc.json"));
  write_trace(trace, cubin, size, 0);
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.flags = MPROF_SASS_NO_DISASSEMBLY;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, &report), 0);
  assert_int_equal(report.no_cubin, 2);
  /* The trace itself offers nothing. */
  mprof_sass_binary *b;
  assert_int_equal(mprof_sass_binary_open(&b, trace, &opts), MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(),
                         "the trace kept no cubin; 1 cubins were not kept by "
                         "the producer."));

  size_t fat_size, host_size;
  unsigned char *fat = synthetic_fatbin(cubin, size, 0, &fat_size);
  unsigned char *host = host_elf(fat, fat_size, &host_size);
  char app[1100];
  snprintf(app, sizeof app, "%s", write_temp("bare-app", host, host_size));
  assert_int_equal(mprof_sass_binary_open(&b, app, &opts), 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  const mprof_sass_binary *bins[1] = {b};
  report = (mprof_sass_report)MPROF_SASS_REPORT_INIT;
  assert_int_equal(mprof_sass_attach(sc, bins, 1, &opts, &report), 0);
  assert_int_equal(report.attached, 1);
  assert_int_equal(report.no_disassembler, 1);
  assert_int_equal(report.no_cubin, 1);
  assert_int_equal(report.with_lines, 1);
  const mprof_sidecar_function *k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_NO_DISASSEMBLER);
  assert_int_equal(k->size, 0x100);
  assert_int_equal(mprof_sidecar_instruction(k, 0x90)->line, 3);
  /* With a disassembler, the same call gives SASS. */
  char args[1100];
  snprintf(args, sizeof args, "%s", test_path("attach-args"));
  opts.flags = 0;
  opts.nvdisasm = fake_nvdisasm(args, 0);
  assert_int_equal(mprof_sass_attach(sc, bins, 1, &opts, &report), 0);
  assert_int_equal(report.attached, 2);
  assert_int_equal(report.with_sass, 1);
  k = mprof_sidecar_find(sc, "_Z4kernPf", 0);
  assert_int_equal(k->sass_state, MPROF_SASS_PRESENT);
  assert_string_equal(mprof_sidecar_instruction(k, 0x90)->opcode, "IADD3");
  /* PRESENT functions are left alone. */
  unlink(args);
  assert_int_equal(mprof_sass_attach(sc, bins, 1, &opts, &report), 0);
  assert_int_equal(report.attached, 2);
  mprof_sass_report old = MPROF_SASS_REPORT_INIT;
  old.version = 0;
  assert_int_equal(mprof_sass_attach(sc, bins, 1, &opts, &old), MPROF_EVERSION);
  mprof_sidecar_free(sc);
  mprof_sass_binary_free(b);
  free(cubin);
  free(fat);
  free(host);
  unlink(trace);
  unlink(side);
}

static void test_build_errors(void **state) {
  (void)state;
  char side[1100];
  snprintf(side, sizeof side, "%s", test_path("never.pc.json"));
  assert_int_equal(
      mprof_sass_build_sidecar(test_path("no-trace.mprof"), side, NULL, NULL),
      MPROF_ENOTFOUND);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.version = 7;
  assert_int_equal(mprof_sass_build_sidecar("x", side, &opts, NULL),
                   MPROF_EVERSION);
  assert_int_equal(mprof_sass_options_init(&opts, 7), MPROF_EVERSION);
  assert_int_equal(mprof_sass_options_init(&opts, MPROF_SASS_OPTIONS_VERSION),
                   0);
  assert_int_equal(opts.flags, 0);
  assert_null(opts.nvdisasm);
  struct stat st;
  assert_int_not_equal(stat(side, &st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_build_without_disassembler),
      cmocka_unit_test(test_build_with_disassembler),
      cmocka_unit_test(test_build_deferred),
      cmocka_unit_test(test_build_other_crc),
      cmocka_unit_test(test_attach_from_file),
      cmocka_unit_test(test_build_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
