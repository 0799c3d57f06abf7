/*
 * mprof tests — the sass module: cubin ELF parsing and DWARF lines,
 * nvdisasm listings, fatbins in host ELF files, running the CUDA tools, and
 * building a trace's PC sidecar.
 *
 * Two kinds of cubins are used. Small ones built here byte by byte (so the
 * parser is tested on every machine, hostile variants included), and real
 * ones built by tests/CMakeLists.txt with nvcc from tests/data/
 * sass_kernels.cu when the CUDA toolkit is installed (MPROF_SASS_FIXTURES
 * names their folder; without it those tests skip).
 *
 * There is no nvdisasm on the development machine: its output is tested with
 * inline strings in the layout of nvdisasm's documentation, and stand-in
 * scripts play nvdisasm and cuobjdump to test how mprof runs them. Real
 * nvdisasm output is exercised by tests/gpu on the GPU machine.
 *
 * SPDX-License-Identifier: MIT
 */
#include <sys/stat.h>

#include "test_util.h"

#include "mprof/mprof.h"

#include "sass_fixture.h"

/* ---- cubins ------------------------------------------------------------- */

static void test_synthetic_cubin(void **state) {
  (void)state;
  size_t size;
  unsigned char *img = synthetic_cubin(&size, 0);
  mprof_sass_cubin *c;
  assert_int_equal(mprof_sass_cubin_open(&c, img, size, "synthetic"), 0);
  free(img); /* the cubin keeps its own copy */
  assert_int_equal(mprof_sass_cubin_arch(c), 90);
  assert_int_equal(mprof_sass_cubin_instruction_size(c), 16);
  assert_string_equal(mprof_sass_cubin_origin(c), "synthetic");
  assert_true(mprof_sass_cubin_crc(c) == 0);
  assert_int_equal(mprof_sass_cubin_function_count(c), 3);

  const mprof_sass_function *k = mprof_sass_cubin_find(c, "_Z4kernPf");
  assert_non_null(k);
  assert_int_equal(k->symbol_index, 2);
  assert_int_equal(k->section_index, 4);
  assert_int_equal(k->section_offset, 0);
  assert_int_equal(k->size, 0x100);
  assert_int_equal(k->registers, 24);
  assert_int_equal(k->local_per_thread, 16);
  assert_int_equal(k->static_shared, 512);
  assert_int_equal(k->flags,
                   MPROF_SASS_FUNCTION_ENTRY | MPROF_SASS_FUNCTION_LINES);
  size_t rows;
  const mprof_sass_line *l = mprof_sass_cubin_lines(c, k, &rows);
  assert_non_null(l);
  assert_int_equal(rows, 3); /* the end of the sequence is past the code */
  assert_int_equal(l[0].offset, 0);
  assert_int_equal(l[0].line, 10);
  assert_string_equal(l[0].file, "/src/k.cu");
  assert_int_equal(l[1].offset, 0x20);
  assert_int_equal(l[1].line, 13); /* the last row of an address wins */
  assert_int_equal(l[2].offset, 0x80);
  assert_string_equal(l[2].file, "/inc/h.cuh");
  const char *file;
  assert_int_equal(mprof_sass_cubin_line(c, k, 0x10, &file), 10);
  assert_string_equal(file, "/src/k.cu");
  assert_int_equal(mprof_sass_cubin_line(c, k, 0x7f, NULL), 13);
  assert_int_equal(mprof_sass_cubin_line(c, k, 0xf0, &file), 3);
  assert_string_equal(file, "/inc/h.cuh");
  assert_int_equal(mprof_sass_cubin_line(c, k, 0x100, &file), 0);
  assert_string_equal(file, "");

  const mprof_sass_function *h =
      mprof_sass_cubin_find(c, "$_Z4kernPf$_Z6helperf");
  assert_non_null(h);
  assert_int_equal(h->symbol_index, 1);
  assert_int_equal(h->section_index, 4);
  assert_int_equal(h->section_offset, 0x80);
  assert_int_equal(h->size, 0x80);
  assert_int_equal(h->flags, MPROF_SASS_FUNCTION_LINES);
  assert_int_equal(mprof_sass_cubin_line(c, h, 0, &file), 3);
  assert_string_equal(file, "/inc/h.cuh");

  const mprof_sass_function *o = mprof_sass_cubin_find(c, "_Z5otherv");
  assert_non_null(o);
  assert_int_equal(o->size, 0x40);
  assert_int_equal(o->registers, 32);
  assert_int_equal(o->static_shared, 0);
  assert_int_equal(o->flags,
                   MPROF_SASS_FUNCTION_ENTRY | MPROF_SASS_FUNCTION_PTX_LINES);
  assert_null(mprof_sass_cubin_lines(c, o, &rows));
  assert_int_equal(rows, 0);
  assert_int_equal(mprof_sass_cubin_line(c, o, 0, NULL), 0);

  assert_null(mprof_sass_cubin_find(c, "_Z4kern"));
  assert_null(mprof_sass_cubin_function_at(c, 3));
  /* A function of another cubin has no lines here. */
  mprof_sass_function stranger = *k;
  assert_null(mprof_sass_cubin_lines(c, &stranger, &rows));
  mprof_sass_cubin_free(c);
  mprof_sass_cubin_free(NULL);
}

static void test_damaged_line_program(void **state) {
  (void)state;
  size_t size;
  unsigned char *img = synthetic_cubin(&size, 1);
  mprof_sass_cubin *c;
  /* Bad lines cost the lines, not the functions. */
  assert_int_equal(mprof_sass_cubin_open(&c, img, size, NULL), 0);
  free(img);
  const mprof_sass_function *k = mprof_sass_cubin_find(c, "_Z4kernPf");
  assert_non_null(k);
  assert_int_equal(k->registers, 24);
  assert_false(k->flags & MPROF_SASS_FUNCTION_LINES);
  mprof_sass_cubin_free(c);
}

static void test_not_a_cubin(void **state) {
  (void)state;
  mprof_sass_cubin *c = (mprof_sass_cubin *)0x1;
  assert_int_equal(mprof_sass_cubin_open(&c, "hello", 5, "five.bin"),
                   MPROF_EFORMAT);
  assert_null(c);
  assert_string_equal(mprof_error_last(),
                      "five.bin: 5 bytes is too short for an ELF cubin");
  unsigned char junk[256];
  memset(junk, 'x', sizeof junk);
  assert_int_equal(mprof_sass_cubin_open(&c, junk, sizeof junk, "junk"),
                   MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "junk: not an ELF image"));
  size_t size;
  unsigned char *fat = synthetic_fatbin(junk, 64, 0, &size);
  unsigned char *host = host_elf(fat, size, &size);
  assert_int_equal(mprof_sass_cubin_open(&c, host, size, "app"), MPROF_EFORMAT);
  assert_string_equal(mprof_error_last(),
                      "app: an ELF file for machine 62, not a CUDA cubin "
                      "(machine 190)");
  free(fat);
  free(host);
  assert_int_equal(mprof_sass_cubin_open(NULL, junk, 1, NULL), MPROF_EINVAL);
}

/* Any prefix or corruption of a cubin gives a cubin or an error. */
static void sweep_cubin(const unsigned char *img, size_t size, size_t step) {
  unsigned char *copy = (unsigned char *)malloc(size);
  assert_non_null(copy);
  for (size_t len = 0; len < size; len += len < 512 ? 1 : step) {
    mprof_sass_cubin *c = NULL;
    int rc = mprof_sass_cubin_open(&c, img, len, "cut");
    assert_true(rc == 0 || rc == MPROF_EFORMAT);
    for (size_t i = 0; c && i < mprof_sass_cubin_function_count(c); i++) {
      const mprof_sass_function *f = mprof_sass_cubin_function_at(c, i);
      size_t rows;
      const mprof_sass_line *l = mprof_sass_cubin_lines(c, f, &rows);
      for (size_t r = 0; r < rows; r++)
        assert_true(l[r].offset <= f->size);
      mprof_sass_cubin_line(c, f, f->size / 2, NULL);
    }
    mprof_sass_cubin_free(c);
  }
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; round++) {
    memcpy(copy, img, size);
    for (int k = 0; k < 4; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % size;
      seed = seed * 1103515245u + 12345u;
      copy[at] = (unsigned char)(seed >> 16);
    }
    mprof_sass_cubin *c = NULL;
    int rc = mprof_sass_cubin_open(&c, copy, size, "flipped");
    assert_true(rc == 0 || rc == MPROF_EFORMAT);
    for (size_t i = 0; c && i < mprof_sass_cubin_function_count(c); i++) {
      const mprof_sass_function *f = mprof_sass_cubin_function_at(c, i);
      mprof_sass_cubin_line(c, f, 0, NULL);
      assert_non_null(mprof_sass_cubin_find(c, f->name));
    }
    mprof_sass_cubin_free(c);
  }
  free(copy);
}

static void test_cubin_sweep(void **state) {
  (void)state;
  size_t size;
  unsigned char *img = synthetic_cubin(&size, 0);
  sweep_cubin(img, size, 1);
  free(img);
}

/* ---- nvdisasm listings -------------------------------------------------- */

/* In the layout of nvdisasm's documentation (`nvdisasm -c -g -hex`); not
 * captured tool output. */
static const char listing_text[] =
    "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS "
    "EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
    "\t.elftype\t@\"ET_EXEC\"\n"
    "\n"
    "\n"
    "//--------------------- .text._Z4kernPf           "
    "--------------------------\n"
    "\t.section\t.text._Z4kernPf,\"ax\",@progbits\n"
    "\t.sectioninfo\t@\"SHI_REGISTERS=24\"\n"
    "\t.align\t128\n"
    "        .global         _Z4kernPf\n"
    "        .type           _Z4kernPf,@function\n"
    "        .size           _Z4kernPf,(.L_x_1 - _Z4kernPf)\n"
    "_Z4kernPf:\n"
    ".text._Z4kernPf:\n"
    "\t//## File \"/src/k.cu\", line 10\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;"
    "                /* 0x00000a00ff017b82 */\n"
    "                                                          "
    "                /* 0x000fe40000000800 */\n"
    "        /*0010*/                   S2R R0, SR_TID.X ;\n"
    "\t//## File \"/inc/h.cuh\", line 3 inlined at \"/src/k.cu\", line 12\n"
    "\t//## File \"/src/k.cu\", line 12\n"
    "        /*0020*/               @!P0 LDG.E R2, desc[UR4][R2.64] ;\n"
    "        /*0030*/                   NOP;\n"
    ".L_x_0:\n"
    "        /*0040*/                   BRA `(.L_x_0);\n"
    "        /*0050*/               @P1 EXIT ;\r\n"
    ".L_x_1:\n"
    "\n"
    "//--------------------- .nv.info                 "
    "--------------------------\n"
    "\t.section\t.nv.info,\"\",@\"SHT_CUDA_INFO\"\n"
    "        /*0000*/ \t.byte\t0x04, 0x2f\n"
    "        /*0002*/ \t.short\t(.L_2 - .L_1)\n"
    "\n"
    "//--------------------- .text._Z5otherv    --------------------------\n"
    "\t.section\t.text._Z5otherv,\"ax\",@progbits\n"
    "        /*0000*/                   EXIT ;\n"
    "        /*0010*/          { IADD3 R1, R1, -0x10, RZ ;\n"
    "        /*0018*/            MOV R2, R3   }\n"
    "\n"
    "//--------------------- SYMBOLS --------------------------\n"
    "        /*0020*/ \t.word\t0x0\n"
    "        /*0030*/                   EXIT ;\n";

static void test_listing_parse(void **state) {
  (void)state;
  mprof_sass_listing *l;
  assert_int_equal(
      mprof_sass_listing_parse(&l, listing_text, strlen(listing_text)), 0);
  assert_int_equal(mprof_sass_listing_function_count(l), 2);
  const mprof_sass_listing_function *f =
      mprof_sass_listing_find(l, "_Z4kernPf");
  assert_non_null(f);
  assert_ptr_equal(f, mprof_sass_listing_function_at(l, 0));
  assert_int_equal(f->instruction_count, 6);
  const mprof_sass_instruction *in = f->instructions;
  assert_int_equal(in[0].offset, 0);
  assert_string_equal(in[0].predicate, "");
  assert_string_equal(in[0].opcode, "LDC");
  assert_string_equal(in[0].operands, "R1, c[0x0][0x28]");
  assert_string_equal(in[0].file, "/src/k.cu");
  assert_int_equal(in[0].line, 10);
  assert_int_equal(in[1].line, 10); /* a line holds until the next comment */
  assert_string_equal(in[1].operands, "R0, SR_TID.X");
  /* The first comment of a block is the innermost frame. */
  assert_int_equal(in[2].offset, 0x20);
  assert_string_equal(in[2].file, "/inc/h.cuh");
  assert_int_equal(in[2].line, 3);
  assert_string_equal(in[2].predicate, "@!P0");
  assert_string_equal(in[2].opcode, "LDG.E");
  assert_string_equal(in[2].operands, "R2, desc[UR4][R2.64]");
  assert_string_equal(in[3].opcode, "NOP");
  assert_string_equal(in[3].operands, "");
  assert_string_equal(in[4].opcode, "BRA");
  assert_string_equal(in[4].operands, "`(.L_x_0)");
  assert_string_equal(in[5].predicate, "@P1");
  assert_string_equal(in[5].opcode, "EXIT");
  assert_string_equal(in[5].operands, "");
  /* The .nv.info data between the functions is skipped. */
  f = mprof_sass_listing_function_at(l, 1);
  assert_string_equal(f->name, "_Z5otherv");
  assert_int_equal(f->instruction_count, 3);
  assert_int_equal(f->instructions[0].line, 0); /* lines reset per function */
  assert_string_equal(f->instructions[0].file, "");
  assert_string_equal(f->instructions[1].opcode, "IADD3");
  assert_string_equal(f->instructions[1].operands, "R1, R1, -0x10, RZ");
  assert_int_equal(f->instructions[2].offset, 0x18);
  assert_string_equal(f->instructions[2].operands, "R2, R3   }");
  assert_null(mprof_sass_listing_find(l, "_Z4kern"));
  assert_null(mprof_sass_listing_function_at(l, 2));
  mprof_sass_listing_free(l);
  mprof_sass_listing_free(NULL);
}

static void test_listing_without_header(void **state) {
  (void)state;
  static const char text[] = "        /*0000*/                   MOV R1, "
                             "c[0x0][0x28] ;\n"
                             "        /*0010*/                   EXIT ;";
  mprof_sass_listing *l;
  assert_int_equal(mprof_sass_listing_parse(&l, text, strlen(text)), 0);
  assert_int_equal(mprof_sass_listing_function_count(l), 1);
  const mprof_sass_listing_function *f = mprof_sass_listing_function_at(l, 0);
  assert_string_equal(f->name, "");
  assert_int_equal(f->instruction_count, 2);
  assert_string_equal(f->instructions[1].opcode, "EXIT");
  mprof_sass_listing_free(l);
  assert_int_equal(mprof_sass_listing_parse(&l, "", 0), 0);
  assert_int_equal(mprof_sass_listing_function_count(l), 0);
  mprof_sass_listing_free(l);
}

static void test_listing_errors(void **state) {
  (void)state;
  static const struct {
    const char *text;
    const char *message;
  } cases[] = {
      {".text.k:\n /*0010*/ NOP ;\n /*0010*/ NOP ;\n",
       "nvdisasm output line 3: offset 0x10 does not follow 0x10"},
      {".text.k:\n /*0020*/ NOP ;\n /*0010*/ NOP ;\n",
       "line 3: offset 0x10 does not follow 0x20"},
      {" /*123456789*/ NOP ;\n", "line 1: the offset does not fit in 32 bits"},
      {"\n /*0010*/ @P0\n", "line 2: a predicate without an instruction"},
      {" /*0010*/    ;\n", "line 1: no opcode after the offset"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mprof_sass_listing *l = (mprof_sass_listing *)0x1;
    int rc = mprof_sass_listing_parse(&l, cases[i].text, strlen(cases[i].text));
    if (rc != MPROF_EFORMAT || !strstr(mprof_error_last(), cases[i].message))
      fail_msg("case %zu: %d \"%s\"", i, rc, mprof_error_last());
    assert_null(l);
  }
  mprof_sass_listing *l;
  static const char nul[] = " /*0010*/ NOP ;\n /*0020*/ N\0P ;\n";
  assert_int_equal(mprof_sass_listing_parse(&l, nul, sizeof nul - 1),
                   MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "line 2: a NUL byte"));
  /* Prose in comments is not an instruction. */
  static const char prose[] = "/* 0x000fe40000000f00 */\n/* see */\n//## x\n";
  assert_int_equal(mprof_sass_listing_parse(&l, prose, strlen(prose)), 0);
  assert_int_equal(mprof_sass_listing_function_count(l), 0);
  mprof_sass_listing_free(l);
}

static void test_listing_sweep(void **state) {
  (void)state;
  size_t size = strlen(listing_text);
  for (size_t len = 0; len <= size; len++) {
    mprof_sass_listing *l = NULL;
    int rc = mprof_sass_listing_parse(&l, listing_text, len);
    assert_true(rc == 0 || rc == MPROF_EFORMAT);
    mprof_sass_listing_free(l);
  }
}

/* ---- tools -------------------------------------------------------------- */

static void test_demangle(void **state) {
  (void)state;
  char *s;
  assert_int_equal(mprof_sass_demangle(&s, "_ZN2ns2tkIiEEvPT_"), 0);
  assert_string_equal(s, "void ns::tk<int>(int*)");
  free(s);
  assert_int_equal(mprof_sass_demangle(&s, "_Z4memkPfPKfS1_i"), 0);
  assert_string_equal(s, "memk(float*, float const*, float const*, int)");
  free(s);
  assert_int_equal(mprof_sass_demangle(&s, "plain_c"), MPROF_ENOTFOUND);
  assert_null(s);
  assert_string_equal(mprof_error_last(), "plain_c is not a mangled C++ name");
  assert_int_equal(mprof_sass_demangle(&s, "_Z"), MPROF_ENOTFOUND);
  assert_int_equal(mprof_sass_demangle(NULL, "_Z1kv"), MPROF_EINVAL);
}

static void test_find_tool(void **state) {
  (void)state;
  char path[4096];
  const char *fake = write_script("fake-nvdisasm", "exit 0\n");
  setenv("MPROF_NVDISASM", fake, 1);
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "nvdisasm"), 0);
  assert_string_equal(path, fake);
  setenv("MPROF_NVDISASM", "/nonexistent/nvdisasm", 1);
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "nvdisasm"),
                   MPROF_ENOTFOUND);
  assert_string_equal(mprof_error_last(),
                      "MPROF_NVDISASM=/nonexistent/nvdisasm is not an "
                      "executable file (point it at nvdisasm, or unset it)");
  unsetenv("MPROF_NVDISASM");
  /* PATH, then CUDA_HOME/bin. */
  const char *dir = test_path("toolbin");
  mkdir(dir, 0755);
  char tool[4096];
  snprintf(tool, sizeof tool, "%s/mprof-test-tool", dir);
  FILE *f = fopen(tool, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\n", f);
  fclose(f);
  chmod(tool, 0755);
  char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "");
  char new_path[8192];
  snprintf(new_path, sizeof new_path, "/nonexistent::%s:%s", dir, old_path);
  setenv("PATH", new_path, 1);
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "mprof-test-tool"),
                   0);
  assert_string_equal(path, tool);
  setenv("PATH", "/nonexistent", 1);
  char *old_home = getenv("CUDA_HOME") ? strdup(getenv("CUDA_HOME")) : NULL;
  const char *base = strrchr(dir, '/');
  char cuda_home[4096];
  snprintf(cuda_home, sizeof cuda_home, "%.*s", (int)(base - dir), dir);
  /* CUDA_HOME/bin: make DIR/../bin hold the tool. */
  char bin[4200];
  snprintf(bin, sizeof bin, "%s/bin", cuda_home);
  mkdir(bin, 0755);
  char tool2[4300];
  snprintf(tool2, sizeof tool2, "%s/mprof-test-tool2", bin);
  f = fopen(tool2, "w");
  assert_non_null(f);
  fclose(f);
  chmod(tool2, 0755);
  setenv("CUDA_HOME", cuda_home, 1);
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "mprof-test-tool2"),
                   0);
  assert_string_equal(path, tool2);
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "mprof-no-tool"),
                   MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(),
                         "mprof-no-tool was not found (looked at "
                         "$MPROF_MPROF-NO-TOOL, PATH, $CUDA_HOME/bin and "
                         "/usr/local/cuda/bin"));
  assert_int_equal(mprof_sass_find_tool(path, sizeof path, "a/b"),
                   MPROF_EINVAL);
  setenv("PATH", old_path, 1);
  if (old_home)
    setenv("CUDA_HOME", old_home, 1);
  else
    unsetenv("CUDA_HOME");
  free(old_path);
  free(old_home);
  unlink(tool);
  unlink(tool2);
  rmdir(bin);
  rmdir(dir);
}

static void test_disassemble(void **state) {
  (void)state;
  size_t size;
  unsigned char *img = synthetic_cubin(&size, 0);
  mprof_sass_cubin *c;
  assert_int_equal(mprof_sass_cubin_open(&c, img, size, "k.cubin"), 0);
  free(img);
  char args[1100];
  snprintf(args, sizeof args, "%s", test_path("nvdisasm-args"));
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.nvdisasm = fake_nvdisasm(args, 0);
  uint32_t syms[2] = {2, 3};
  mprof_sass_listing *l;
  assert_int_equal(mprof_sass_disassemble(&l, c, syms, 2, &opts), 0);
  size_t n;
  char *got = (char *)test_read_file(args, &n);
  assert_non_null(got);
  assert_true(strncmp(got, "-c -g -fun 2,3 ", 15) == 0);
  assert_non_null(strstr(got, "/module.cubin"));
  free(got);
  const mprof_sass_listing_function *f =
      mprof_sass_listing_find(l, "_Z4kernPf");
  assert_non_null(f);
  assert_int_equal(f->instruction_count, 16);
  assert_string_equal(f->instructions[15].operands, "R15, R1, 0x1, RZ");
  assert_int_equal(f->instructions[4].line, 77);
  mprof_sass_listing_free(l);

  opts.nvdisasm = fake_nvdisasm(args, 1);
  assert_int_equal(mprof_sass_disassemble(&l, c, NULL, 0, &opts), MPROF_EIO);
  assert_null(l);
  assert_non_null(strstr(mprof_error_last(), "k.cubin: "));
  assert_non_null(strstr(mprof_error_last(),
                         "failed (exit status 1): nvdisasm fatal   : Could "
                         "not open input file"));
  opts.nvdisasm = "/nonexistent/nvdisasm";
  assert_int_equal(mprof_sass_disassemble(&l, c, NULL, 0, &opts),
                   MPROF_ENOTFOUND);
  opts.nvdisasm = write_script("nvdisasm-garbage",
                               "echo ' /*0020*/ NOP ;'; echo ' /*0010*/ NOP "
                               ";'\n");
  assert_int_equal(mprof_sass_disassemble(&l, c, NULL, 0, &opts),
                   MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "does not follow"));
  opts.version = 99;
  assert_int_equal(mprof_sass_disassemble(&l, c, NULL, 0, &opts),
                   MPROF_EVERSION);
  mprof_sass_cubin_free(c);
}

/* ---- files with cubins ------------------------------------------------- */

static void test_binary_files(void **state) {
  (void)state;
  size_t cubin_size, fat_size, host_size;
  unsigned char *cubin = synthetic_cubin(&cubin_size, 0);
  unsigned char *fat = synthetic_fatbin(cubin, cubin_size, 0, &fat_size);
  unsigned char *host = host_elf(fat, fat_size, &host_size);
  mprof_sass_binary *b;

  const char *path = write_temp("k.cubin", cubin, cubin_size);
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), 0);
  assert_int_equal(mprof_sass_binary_cubin_count(b), 1);
  assert_string_equal(mprof_sass_binary_note(b), "");
  assert_non_null(
      mprof_sass_cubin_find(mprof_sass_binary_cubin(b, 0), "_Z4kernPf"));
  assert_null(mprof_sass_binary_cubin(b, 1));
  mprof_sass_binary_free(b);

  /* Both fatbins hold the same cubin: it is kept once. */
  path = write_temp("k.fatbin", fat, fat_size);
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), 0);
  assert_int_equal(mprof_sass_binary_cubin_count(b), 1);
  mprof_sass_binary_free(b);

  path = write_temp("app", host, host_size);
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), 0);
  assert_int_equal(mprof_sass_binary_cubin_count(b), 1);
  const mprof_sass_cubin *c = mprof_sass_binary_cubin(b, 0);
  assert_int_equal(mprof_sass_cubin_arch(c), 90);
  assert_non_null(strstr(mprof_sass_cubin_origin(c), "app: cubin 1 (sm_90)"));
  assert_int_equal(mprof_sass_cubin_function_count(c), 3);
  mprof_sass_binary_free(b);
  mprof_sass_binary_free(NULL);

  /* A host ELF without device code. */
  static const unsigned char code[4] = {0xc3};
  const test_section plain[] = {{".text", 1, 6, code, 4, 0, 0, 16, 0}};
  size_t plain_size;
  unsigned char *plain_elf = build_elf(62, 0, plain, 1, &plain_size);
  path = write_temp("plain", plain_elf, plain_size);
  b = (mprof_sass_binary *)0x1;
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), MPROF_ENOTFOUND);
  assert_null(b);
  assert_non_null(strstr(mprof_error_last(), "no .nv_fatbin section"));
  free(plain_elf);

  path = write_temp("text", "just text\n", 10);
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(),
                         "not a cubin, fatbin, ELF executable, shared library "
                         "or mprof trace"));
  path = write_temp("empty", "", 0);
  assert_int_equal(mprof_sass_binary_open(&b, path, NULL), MPROF_EFORMAT);
  assert_int_equal(mprof_sass_binary_open(&b, test_path("no-such-file"), NULL),
                   MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "cannot open"));

  /* Every prefix of the host ELF: a clean answer. */
  path = test_path("app-cut");
  for (size_t len = 0; len < host_size; len += 3) {
    assert_int_equal(test_write_file(path, host, len), 0);
    int rc = mprof_sass_binary_open(&b, path, NULL);
    assert_true(rc == 0 || rc == MPROF_EFORMAT || rc == MPROF_ENOTFOUND);
    if (!rc)
      mprof_sass_binary_free(b);
  }
  free(cubin);
  free(fat);
  free(host);
}

static void test_compressed_fatbin(void **state) {
  (void)state;
  size_t cubin_size, fat_size, host_size;
  unsigned char *cubin = synthetic_cubin(&cubin_size, 0);
  unsigned char *fat = synthetic_fatbin(cubin, cubin_size, 1, &fat_size);
  unsigned char *host = host_elf(fat, fat_size, &host_size);
  char path[1100];
  snprintf(path, sizeof path, "%s",
           write_temp("app-compressed", host, host_size));
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.cuobjdump = "/nonexistent/cuobjdump";
  mprof_sass_binary *b;
  assert_int_equal(mprof_sass_binary_open(&b, path, &opts), MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(),
                         "no cubin could be read: 2 compressed cubins were "
                         "skipped: cuobjdump /nonexistent/cuobjdump is not an "
                         "executable file"));
  /* A stand-in for `cuobjdump -xelf all FILE`: writes cubins into the
   * folder it runs in. */
  const char *cubin_path = write_temp("x.cubin", cubin, cubin_size);
  char body[2048];
  snprintf(body, sizeof body,
           "[ \"$1\" = -xelf ] && [ \"$2\" = all ] || exit 3\n"
           "cp '%s' app-compressed.1.sm_90.cubin\n"
           "echo 'Extracting ELF file 1: app-compressed.1.sm_90.cubin'\n",
           cubin_path);
  opts.cuobjdump = write_script("cuobjdump-stand-in", body);
  assert_int_equal(mprof_sass_binary_open(&b, path, &opts), 0);
  assert_int_equal(mprof_sass_binary_cubin_count(b), 1);
  assert_non_null(strstr(mprof_sass_cubin_origin(mprof_sass_binary_cubin(b, 0)),
                         "app-compressed.1.sm_90.cubin (cuobjdump)"));
  assert_string_equal(mprof_sass_binary_note(b), "");
  mprof_sass_binary_free(b);
  opts.cuobjdump = write_script("cuobjdump-fails", "echo broken >&2; exit 2\n");
  assert_int_equal(mprof_sass_binary_open(&b, path, &opts), MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "failed (exit status 2): broken"));
  free(cubin);
  free(fat);
  free(host);
}

/* ---- real cubins from nvcc --------------------------------------------- */

static const char *fixture(const char *name) {
  static char path[4][4096];
  static int next;
  const char *dir = getenv("MPROF_SASS_FIXTURES");
  if (!dir || !*dir)
    return NULL;
  char *out = path[next++ & 3];
  snprintf(out, sizeof path[0], "%s/%s", dir, name);
  return out;
}

#define NEED_FIXTURES()                                                        \
  do {                                                                         \
    if (!fixture("x")) {                                                       \
      print_message("no nvcc-built fixtures (CUDA toolkit not found at "       \
                    "configure time): skipped\n");                             \
      skip();                                                                  \
    }                                                                          \
  } while (0)

/* The line of "// @marker" in tests/data/sass_kernels.cu. */
static uint32_t marker_line(const char *marker) {
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/sass_kernels.cu",
           root ? root : ".");
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512], want[64];
  snprintf(want, sizeof want, "// @%s\n", marker);
  uint32_t n = 0, found = 0;
  while (fgets(line, sizeof line, f)) {
    n++;
    size_t len = strlen(line), wlen = strlen(want);
    if (len >= wlen && strcmp(line + len - wlen, want) == 0)
      found = n;
  }
  fclose(f);
  assert_int_not_equal(found, 0);
  return found;
}

static const char *ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0 ? s : NULL;
}

static void check_real_cubin(const mprof_sass_cubin *c, int lines) {
  assert_int_equal(mprof_sass_cubin_arch(c), 90);
  const mprof_sass_function *memk =
      mprof_sass_cubin_find(c, "_Z4memkPfPKfS1_i");
  const mprof_sass_function *shk = mprof_sass_cubin_find(c, "_Z3shkPfi");
  const mprof_sass_function *callk = mprof_sass_cubin_find(c, "_Z5callkPf");
  const mprof_sass_function *helper =
      mprof_sass_cubin_find(c, "$_Z5callkPf$_Z6helperf");
  const mprof_sass_function *plain = mprof_sass_cubin_find(c, "plain_c");
  const mprof_sass_function *tk = mprof_sass_cubin_find(c, "_ZN2ns2tkIiEEvPT_");
  assert_non_null(memk);
  assert_non_null(shk);
  assert_non_null(callk);
  assert_non_null(helper);
  assert_non_null(plain);
  assert_non_null(tk);
  assert_int_equal(mprof_sass_cubin_function_count(c), 6);
  const mprof_sass_function *kernels[] = {memk, shk, callk, plain, tk};
  for (size_t i = 0; i < 5; i++) {
    const mprof_sass_function *k = kernels[i];
    assert_true(k->flags & MPROF_SASS_FUNCTION_ENTRY);
    assert_int_equal(k->section_offset, 0);
    assert_true(k->size >= 64 && k->size % 16 == 0);
    /* ptxas -v gives 8 to 16 registers for these on sm_90 */
    assert_in_range(k->registers, 4, 32);
    assert_int_equal(k->local_per_thread, 0);
    assert_int_equal(!!(k->flags & MPROF_SASS_FUNCTION_LINES), lines);
  }
  assert_int_equal(shk->static_shared, 256 * sizeof(float));
  assert_int_equal(memk->static_shared, 0);
  /* helper is a local function inside callk's section */
  assert_false(helper->flags & MPROF_SASS_FUNCTION_ENTRY);
  assert_int_equal(helper->section_index, callk->section_index);
  assert_true(helper->section_offset > 0 &&
              helper->section_offset + helper->size <= callk->size);
  if (!lines) {
    assert_null(mprof_sass_cubin_lines(c, memk, NULL));
    return;
  }
  const char *file;
  assert_int_equal(mprof_sass_cubin_line(c, memk, 0, &file),
                   marker_line("memk"));
  assert_non_null(ends_with(file, "tests/data/sass_kernels.cu"));
  assert_int_equal(mprof_sass_cubin_line(c, shk, 0, NULL), marker_line("shk"));
  assert_int_equal(mprof_sass_cubin_line(c, helper, 0, NULL),
                   marker_line("helper"));
  /* Some instruction of memk is the multiply-add line, and every line of
   * memk is inside its body. */
  size_t rows;
  const mprof_sass_line *l = mprof_sass_cubin_lines(c, memk, &rows);
  int fma = 0;
  for (size_t r = 0; r < rows; r++) {
    fma |= l[r].line == marker_line("memk-fma");
    if (l[r].line)
      assert_in_range(l[r].line, marker_line("memk"),
                      marker_line("memk-fma") + 1);
    if (r)
      assert_true(l[r].offset > l[r - 1].offset);
  }
  assert_true(fma);
}

static void test_real_cubin(void **state) {
  (void)state;
  NEED_FIXTURES();
  mprof_sass_binary *b;
  assert_int_equal(mprof_sass_binary_open(&b, fixture("kernels.cubin"), NULL),
                   0);
  assert_int_equal(mprof_sass_binary_cubin_count(b), 1);
  check_real_cubin(mprof_sass_binary_cubin(b, 0), 1);
  mprof_sass_binary_free(b);
  assert_int_equal(
      mprof_sass_binary_open(&b, fixture("kernels-nolines.cubin"), NULL), 0);
  check_real_cubin(mprof_sass_binary_cubin(b, 0), 0);
  mprof_sass_binary_free(b);
}

/* Executable and shared library: sm_80 and sm_90 cubins, both found. */
static void test_real_executable(void **state) {
  (void)state;
  NEED_FIXTURES();
  const char *files[] = {"kernels-app", "libkernels.so"};
  for (size_t i = 0; i < 2; i++) {
    mprof_sass_binary *b;
    assert_int_equal(mprof_sass_binary_open(&b, fixture(files[i]), NULL), 0);
    const mprof_sass_cubin *sm80 = NULL, *sm90 = NULL;
    for (size_t k = 0; k < mprof_sass_binary_cubin_count(b); k++) {
      const mprof_sass_cubin *c = mprof_sass_binary_cubin(b, k);
      if (!mprof_sass_cubin_find(c, "_Z4memkPfPKfS1_i"))
        continue;
      if (mprof_sass_cubin_arch(c) == 80)
        sm80 = c;
      if (mprof_sass_cubin_arch(c) == 90)
        sm90 = c;
    }
    assert_non_null(sm80);
    assert_non_null(sm90);
    check_real_cubin(sm90, 1);
    /* The embedded sm_90 cubin is the one nvcc -cubin writes. */
    size_t size, want_size;
    const void *data = mprof_sass_cubin_data(sm90, &size);
    unsigned char *want = test_read_file(fixture("kernels.cubin"), &want_size);
    assert_non_null(want);
    assert_int_equal(size, want_size);
    assert_memory_equal(data, want, size);
    free(want);

    /* attach prefers the cubin for the asked SM. */
    mprof_sidecar *sc;
    assert_int_equal(mprof_sidecar_new(&sc), 0);
    mprof_sidecar_function f;
    memset(&f, 0, sizeof f);
    f.name = "_Z4memkPfPKfS1_i";
    f.device = MPROF_INDEX_NONE;
    f.sass_state = MPROF_SASS_NO_CUBIN;
    assert_int_equal(mprof_sidecar_add_function(sc, NULL, &f), 0);
    mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
    opts.flags = MPROF_SASS_NO_DISASSEMBLY;
    opts.arch = 80;
    const mprof_sass_binary *bins[1] = {b};
    assert_int_equal(mprof_sass_attach(sc, bins, 1, &opts, NULL), 0);
    assert_int_equal(mprof_sidecar_function_at(sc, 0)->size,
                     mprof_sass_cubin_find(sm80, f.name)->size);
    assert_int_equal(mprof_sidecar_function_at(sc, 0)->instruction_count,
                     mprof_sass_cubin_find(sm80, f.name)->size / 16);
    mprof_sidecar_free(sc);
    mprof_sass_binary_free(b);
  }
}

static void test_real_compressed(void **state) {
  (void)state;
  NEED_FIXTURES();
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.cuobjdump = "/nonexistent/cuobjdump";
  mprof_sass_binary *b;
  assert_int_equal(
      mprof_sass_binary_open(&b, fixture("kernels-compressed"), &opts),
      MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "compressed cubins were skipped"));
}

static void test_real_cubin_sweep(void **state) {
  (void)state;
  NEED_FIXTURES();
  size_t size = 0;
  unsigned char *img = test_read_file(fixture("kernels.cubin"), &size);
  assert_non_null(img);
  sweep_cubin(img, size, 29);
  free(img);
}

/* A trace whose samples sit on real code: lines per PC from the cubin. */
static void test_real_sidecar(void **state) {
  (void)state;
  NEED_FIXTURES();
  size_t size = 0;
  unsigned char *img = test_read_file(fixture("kernels.cubin"), &size);
  assert_non_null(img);
  mprof_sass_cubin *c;
  assert_int_equal(mprof_sass_cubin_open(&c, img, size, NULL), 0);
  const mprof_sass_function *memk =
      mprof_sass_cubin_find(c, "_Z4memkPfPKfS1_i");
  size_t rows;
  const mprof_sass_line *l = mprof_sass_cubin_lines(c, memk, &rows);
  uint32_t fma_offset = UINT32_MAX;
  for (size_t r = 0; r < rows && fma_offset == UINT32_MAX; r++)
    if (l[r].line == marker_line("memk-fma"))
      fma_offset = l[r].offset;
  assert_int_not_equal(fma_offset, UINT32_MAX);

  char trace[1100];
  snprintf(trace, sizeof trace, "%s", test_path("real.mprof"));
  char side[1100];
  snprintf(side, sizeof side, "%s", test_path("real.mprof.pc.json"));
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, trace, NULL), 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.mangled_name = mprof_writer_string(w, memk->name);
  k.cubin_crc = 0x77;
  k.device = MPROF_INDEX_NONE;
  k.function_index = memk->symbol_index;
  assert_int_equal(mprof_writer_intern(w, NULL, MPROF_SECTION_KERNELS, &k), 0);
  mprof_pc_sample_record pc;
  memset(&pc, 0, sizeof pc);
  pc.cubin_crc = 0x77;
  pc.function_name = k.mangled_name;
  pc.function_index = memk->symbol_index;
  pc.pc_offset = fma_offset;
  pc.stall_reason = 6;
  pc.samples = 1000;
  pc.device = MPROF_INDEX_NONE;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc),
                   0);
  mprof_cubin_record cr = {
      0x77, 0, 0, size, MPROF_INDEX_NONE, MPROF_CUBIN_KEPT_WHOLE};
  assert_int_equal(mprof_writer_cubin(w, &cr, img, size), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.flags = MPROF_SASS_NO_DISASSEMBLY;
  assert_int_equal(mprof_sass_build_sidecar(trace, side, &opts, NULL), 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, side), 0);
  const mprof_sidecar_function *f = mprof_sidecar_find(sc, memk->name, 0x77);
  assert_non_null(f);
  assert_string_equal(f->demangled,
                      "memk(float*, float const*, float const*, int)");
  assert_int_equal(f->size, memk->size);
  assert_int_equal(f->registers, memk->registers);
  assert_int_equal(f->pcs[0].offset, fma_offset);
  const mprof_sass_instruction *in = mprof_sidecar_instruction(f, fma_offset);
  assert_non_null(in);
  assert_int_equal(in->line, marker_line("memk-fma"));
  assert_non_null(ends_with(in->file, "tests/data/sass_kernels.cu"));
  mprof_sidecar_free(sc);
  mprof_sass_cubin_free(c);
  free(img);
  unlink(trace);
  unlink(side);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_synthetic_cubin),
      cmocka_unit_test(test_damaged_line_program),
      cmocka_unit_test(test_not_a_cubin),
      cmocka_unit_test(test_cubin_sweep),
      cmocka_unit_test(test_listing_parse),
      cmocka_unit_test(test_listing_without_header),
      cmocka_unit_test(test_listing_errors),
      cmocka_unit_test(test_listing_sweep),
      cmocka_unit_test(test_demangle),
      cmocka_unit_test(test_find_tool),
      cmocka_unit_test(test_disassemble),
      cmocka_unit_test(test_binary_files),
      cmocka_unit_test(test_compressed_fatbin),
      cmocka_unit_test(test_real_cubin),
      cmocka_unit_test(test_real_executable),
      cmocka_unit_test(test_real_compressed),
      cmocka_unit_test(test_real_cubin_sweep),
      cmocka_unit_test(test_real_sidecar),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
