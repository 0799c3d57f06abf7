/*
 * mprof tests — the PC sidecar: round trips, the API's refusals, every kind
 * of malformed file, and a truncation sweep.
 *
 * SPDX-License-Identifier: MIT
 */
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "mprof/mprof.h"

/* A sidecar with one of everything: reasons with a gap, a function with
 * SASS, lines, odd strings and sparse samples, one without code. */
static mprof_sidecar *make_sidecar(void) {
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  assert_int_equal(mprof_sidecar_set_stall_reason(
                       sc, 0, "smsp__pcsamp_warps_issue_stalled_barrier"),
                   0);
  assert_int_equal(
      mprof_sidecar_set_stall_reason(
          sc, 6, "smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
      0);
  mprof_sidecar_function f;
  memset(&f, 0, sizeof f);
  f.name = "_Z4memkPfPKfS1_i";
  f.demangled = "memk(float*, float const*, float const*, int)";
  f.cubin_crc = 0xccf2d77aull;
  f.function_index = 17;
  f.device = 0;
  f.registers = 12;
  f.static_shared = 0;
  f.size = 512;
  f.sass_state = MPROF_SASS_PRESENT;
  uint32_t memk;
  assert_int_equal(mprof_sidecar_add_function(sc, &memk, &f), 0);
  assert_int_equal(memk, 0);
  const mprof_sass_instruction insns[] = {
      {0x0, 1, "", "LDC", "R1, c[0x0][0x28]", "/tmp/p.cu"},
      {0x10, 2, "", "S2R", "R7, SR_TID.X", "/tmp/p.cu"},
      {0x70, 3, "@!P0", "EXIT", "", "/tmp/p.cu"},
      {0x130, 4, "", "FFMA", "R9, R2, R4, 1",
       "/src/d\xc3\xa9j\xc3\xa0 \"q\"\\.cu"},
      {0x1f0, 0, "", "BRA", "`(.L_x_0)", ""},
  };
  for (size_t i = 0; i < sizeof insns / sizeof insns[0]; i++)
    assert_int_equal(mprof_sidecar_add_instruction(sc, memk, &insns[i]), 0);
  assert_int_equal(mprof_sidecar_add_samples(sc, memk, 0x130, 6, 1234), 0);
  assert_int_equal(mprof_sidecar_add_samples(sc, memk, 0x130, 6, 66), 0);
  assert_int_equal(mprof_sidecar_add_samples(sc, memk, 0x130, 0, 7), 0);
  /* out of order: lands before 0x130 */
  assert_int_equal(mprof_sidecar_add_samples(sc, memk, 0x10, 39, 5), 0);
  memset(&f, 0, sizeof f);
  f.name = "_Z7missingv";
  f.cubin_crc = 0x1111;
  f.function_index = MPROF_INDEX_NONE;
  f.device = MPROF_INDEX_NONE;
  f.sass_state = MPROF_SASS_FAILED;
  f.sass_error = "nvdisasm failed (exit status 1): bad\tcubin\n";
  uint32_t missing;
  assert_int_equal(mprof_sidecar_add_function(sc, &missing, &f), 0);
  assert_int_equal(missing, 1);
  assert_int_equal(mprof_sidecar_add_samples(sc, missing, 0x40, 6, 3), 0);
  return sc;
}

static void check_sidecar(const mprof_sidecar *sc) {
  assert_int_equal(mprof_sidecar_stall_reason_count(sc), 7);
  assert_string_equal(mprof_sidecar_stall_reason(sc, 6),
                      "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
  assert_string_equal(mprof_sidecar_stall_reason(sc, 3), "");
  assert_string_equal(mprof_sidecar_stall_reason(sc, 99), "");
  assert_int_equal(mprof_sidecar_function_count(sc), 2);
  const mprof_sidecar_function *f =
      mprof_sidecar_find(sc, "_Z4memkPfPKfS1_i", 0);
  assert_non_null(f);
  assert_ptr_equal(f, mprof_sidecar_function_at(sc, 0));
  assert_ptr_equal(mprof_sidecar_find(sc, "_Z4memkPfPKfS1_i", 0xccf2d77aull),
                   f);
  assert_null(mprof_sidecar_find(sc, "_Z4memkPfPKfS1_i", 0x5));
  assert_string_equal(f->demangled,
                      "memk(float*, float const*, float const*, int)");
  assert_true(f->cubin_crc == 0xccf2d77aull);
  assert_int_equal(f->function_index, 17);
  assert_int_equal(f->device, 0);
  assert_int_equal(f->registers, 12);
  assert_int_equal(f->size, 512);
  assert_int_equal(f->sass_state, MPROF_SASS_PRESENT);
  assert_string_equal(f->sass_error, "");
  assert_int_equal(f->instruction_count, 5);
  const mprof_sass_instruction *in = mprof_sidecar_instruction(f, 0x70);
  assert_non_null(in);
  assert_string_equal(in->predicate, "@!P0");
  assert_string_equal(in->opcode, "EXIT");
  assert_string_equal(in->operands, "");
  assert_int_equal(in->line, 3);
  in = mprof_sidecar_instruction(f, 0x130);
  assert_string_equal(in->operands, "R9, R2, R4, 1");
  assert_string_equal(in->file, "/src/d\xc3\xa9j\xc3\xa0 \"q\"\\.cu");
  in = mprof_sidecar_instruction(f, 0x1f0);
  assert_string_equal(in->file, "");
  assert_int_equal(in->line, 0);
  assert_string_equal(in->operands, "`(.L_x_0)");
  assert_null(mprof_sidecar_instruction(f, 0x18));
  assert_null(mprof_sidecar_instruction(f, 0x200));
  assert_int_equal(f->pc_count, 2);
  assert_int_equal(f->pcs[0].offset, 0x10);
  assert_int_equal(f->pcs[0].reason_count, 40);
  assert_int_equal(f->pcs[0].counts[39], 5);
  assert_int_equal(f->pcs[0].counts[6], 0);
  assert_int_equal(f->pcs[1].offset, 0x130);
  assert_int_equal(f->pcs[1].counts[6], 1300);
  assert_int_equal(f->pcs[1].counts[0], 7);
  f = mprof_sidecar_function_at(sc, 1);
  assert_string_equal(f->name, "_Z7missingv");
  assert_string_equal(f->demangled, "");
  assert_int_equal(f->device, MPROF_INDEX_NONE);
  assert_int_equal(f->function_index, MPROF_INDEX_NONE);
  assert_int_equal(f->sass_state, MPROF_SASS_FAILED);
  assert_string_equal(f->sass_error,
                      "nvdisasm failed (exit status 1): bad\tcubin\n");
  assert_int_equal(f->instruction_count, 0);
  assert_int_equal(f->pc_count, 1);
  assert_int_equal(f->pcs[0].counts[6], 3);
  assert_null(mprof_sidecar_function_at(sc, 2));
}

/* One spelling of an instruction for every report and view. */
static void test_instruction_text(void **state) {
  (void)state;
  char buf[64];
  mprof_sass_instruction in = {0x40,          12,    "@!P0", "LDG.E.128",
                               "R4, [R2.64]", "k.cu"};
  assert_string_equal(mprof_sass_instruction_text(buf, sizeof buf, &in),
                      "@!P0 LDG.E.128 R4, [R2.64]");
  in.predicate = "";
  in.operands = NULL;
  in.opcode = "EXIT";
  assert_string_equal(mprof_sass_instruction_text(buf, sizeof buf, &in),
                      "EXIT");
  in.operands = "R1";
  assert_string_equal(mprof_sass_instruction_text(buf, 5, &in), "EXIT");
  assert_string_equal(mprof_sass_instruction_text(buf, sizeof buf, NULL), "");
}

static void test_round_trip(void **state) {
  (void)state;
  const char *path = test_path("round.pc.json");
  mprof_sidecar *sc = make_sidecar();
  check_sidecar(sc);
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
  char partial[1100];
  snprintf(partial, sizeof partial, "%s.%ld.partial", path, (long)getpid());
  struct stat st;
  assert_int_not_equal(stat(partial, &st), 0);

  mprof_sidecar *back;
  assert_int_equal(mprof_sidecar_load(&back, path), 0);
  check_sidecar(back);
  /* Saving what was loaded writes the same bytes. */
  const char *again = test_path("round2.pc.json");
  assert_int_equal(mprof_sidecar_save(back, again), 0);
  mprof_sidecar_free(back);
  size_t a_size = 0, b_size = 0;
  unsigned char *a = test_read_file(path, &a_size);
  unsigned char *b = test_read_file(again, &b_size);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(a_size, b_size);
  assert_memory_equal(a, b, a_size);
  /* The file table holds each file once, and the header says what it is. */
  assert_non_null(strstr((char *)a, "\"format\": \"mprof-pc-sidecar\""));
  assert_non_null(strstr((char *)a, "\"cubin_crc\": \"00000000ccf2d77a\""));
  assert_non_null(strstr((char *)a, "[304, {\"0\": 7, \"6\": 1300}]"));
  assert_non_null(strstr((char *)a, "[112, \"@!P0\", \"EXIT\", \"\", 0, 3]"));
  free(a);
  free(b);
  unlink(path);
  unlink(again);
}

static void test_invalid_utf8_is_replaced(void **state) {
  (void)state;
  const char *path = test_path("utf8.pc.json");
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  mprof_sidecar_function f;
  memset(&f, 0, sizeof f);
  f.name = "_Z1kv";
  f.demangled = "bad \xff byte, overlong \xc0\xaf, ok \xe2\x82\xac";
  assert_int_equal(mprof_sidecar_add_function(sc, NULL, &f), 0);
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
  assert_int_equal(mprof_sidecar_load(&sc, path), 0);
  assert_string_equal(mprof_sidecar_function_at(sc, 0)->demangled,
                      "bad \xef\xbf\xbd byte, overlong \xef\xbf\xbd\xef\xbf"
                      "\xbd, ok \xe2\x82\xac");
  mprof_sidecar_free(sc);
  unlink(path);
}

static void test_empty_sidecar(void **state) {
  (void)state;
  const char *path = test_path("empty.pc.json");
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_new(&sc), 0);
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
  assert_int_equal(mprof_sidecar_load(&sc, path), 0);
  assert_int_equal(mprof_sidecar_function_count(sc), 0);
  assert_int_equal(mprof_sidecar_stall_reason_count(sc), 0);
  mprof_sidecar_free(sc);
  mprof_sidecar_free(NULL);
  unlink(path);
}

static void test_api_refusals(void **state) {
  (void)state;
  mprof_sidecar *sc = make_sidecar();
  mprof_sass_instruction in = {0x70, 0, "", "NOP", "", ""};
  /* Offsets ascend. */
  assert_int_equal(mprof_sidecar_add_instruction(sc, 0, &in), MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "must ascend"));
  in.offset = 0x1f0;
  assert_int_equal(mprof_sidecar_add_instruction(sc, 0, &in), MPROF_EINVAL);
  assert_int_equal(mprof_sidecar_add_instruction(sc, 2, &in), MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "function 2 does not exist"));
  assert_int_equal(mprof_sidecar_add_instruction(sc, 0, NULL), MPROF_EINVAL);
  assert_int_equal(mprof_sidecar_add_samples(sc, 0, 0, 1024, 1), MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "stall reason index 1024"));
  assert_int_equal(mprof_sidecar_add_samples(sc, 0, 0x130, 6, UINT64_MAX),
                   MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "overflows"));
  assert_int_equal(mprof_sidecar_set_stall_reason(sc, 5000, "x"), MPROF_EINVAL);
  assert_int_equal(mprof_sidecar_set_sass_state(sc, 0, (mprof_sass_state)9, ""),
                   MPROF_EINVAL);
  assert_int_equal(
      mprof_sidecar_set_sass_state(sc, 5, MPROF_SASS_PRESENT, NULL),
      MPROF_EINVAL);
  mprof_sidecar_function f;
  memset(&f, 0, sizeof f);
  assert_int_equal(mprof_sidecar_add_function(sc, NULL, &f), MPROF_EINVAL);
  f.name = "";
  assert_int_equal(mprof_sidecar_add_function(sc, NULL, &f), MPROF_EINVAL);
  f.name = "_Z1kv";
  f.sass_state = MPROF_SASS_DEFERRED + 1;
  assert_int_equal(mprof_sidecar_add_function(sc, NULL, &f), MPROF_EINVAL);
  /* A message only sticks to a failed state. */
  assert_int_equal(
      mprof_sidecar_set_sass_state(sc, 0, MPROF_SASS_NO_CUBIN, "ignored"), 0);
  assert_string_equal(mprof_sidecar_function_at(sc, 0)->sass_error, "");
  assert_int_equal(mprof_sidecar_set_sass_state(sc, 0, MPROF_SASS_FAILED,
                                                "nvdisasm exploded"),
                   0);
  assert_string_equal(mprof_sidecar_function_at(sc, 0)->sass_error,
                      "nvdisasm exploded");
  assert_int_equal(mprof_sidecar_load(NULL, "x"), MPROF_EINVAL);
  assert_int_equal(mprof_sidecar_save(NULL, "x"), MPROF_EINVAL);
  assert_null(mprof_sidecar_find(sc, NULL, 0));
  assert_null(mprof_sidecar_instruction(NULL, 0));
  assert_int_equal(mprof_sidecar_function_count(NULL), 0);
  /* Nothing failed along the way left the sidecar broken. */
  const char *path = test_path("after.pc.json");
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
  assert_int_equal(mprof_sidecar_load(&sc, path), 0);
  assert_int_equal(mprof_sidecar_function_at(sc, 0)->sass_state,
                   MPROF_SASS_FAILED);
  mprof_sidecar_free(sc);
  unlink(path);
}

static void test_save_errors(void **state) {
  (void)state;
  mprof_sidecar *sc = make_sidecar();
  const char *path = test_path("no-such-dir/x.pc.json");
  assert_int_equal(mprof_sidecar_save(sc, path), MPROF_EIO);
  assert_non_null(strstr(mprof_error_last(), "cannot create"));
  assert_non_null(strstr(mprof_error_last(), path));
  mprof_sidecar_free(sc);
}

static void test_load_errors(void **state) {
  (void)state;
  mprof_sidecar *sc = (mprof_sidecar *)0x1;
  const char *path = test_path("does-not-exist.pc.json");
  assert_int_equal(mprof_sidecar_load(&sc, path), MPROF_ENOTFOUND);
  assert_null(sc);
  assert_non_null(strstr(mprof_error_last(), path));
  const char *dir = getenv("MPROF_TEST_TMP");
  assert_int_equal(mprof_sidecar_load(&sc, dir && *dir ? dir : "/tmp"),
                   MPROF_EINVAL);
}

/* ---- malformed files ---------------------------------------------------- */

#define HEAD "{\"format\": \"mprof-pc-sidecar\", \"version\": 1, "
#define FN_FIELDS                                                              \
  "\"name\": \"_Z1kv\", \"demangled\": \"\", \"cubin_crc\": \"1f\", "          \
  "\"function_index\": 3, \"device\": 0, \"registers\": 8, "                   \
  "\"static_shared\": 0, \"size\": 64, \"sass_state\": \"present\", "          \
  "\"sass_error\": \"\""
/* A file with function 0 holding @p insns and @p pcs (JSON array bodies). */
#define ONE_FN(insns, pcs)                                                     \
  HEAD "\"stall_reasons\": [\"a\"], \"files\": [\"k.cu\"], \"functions\": "    \
       "[{" FN_FIELDS ", \"instructions\": [" insns "], \"pcs\": [" pcs "]}]}"

typedef struct bad_case {
  const char *json;
  int status;
  const char *message; /* a substring of mprof_error_last() */
} bad_case;

static const bad_case bad_cases[] = {
    {"", MPROF_EFORMAT, "is empty"},
    {"  \n", MPROF_EFORMAT, "is empty"},
    {"[1, 2]", MPROF_EFORMAT, "is not a JSON object"},
    {"{", MPROF_EFORMAT, "the JSON ends before it is complete"},
    {"{\"format\": \"mprof-pc-sidecar\", \"version\": 1, \"stall_reasons\": [",
     MPROF_EFORMAT, "truncated"},
    {"{\"format\": 1}", MPROF_EFORMAT, "not an mprof PC sidecar"},
    {"{\"format\": \"something-else\", \"version\": 1}", MPROF_EFORMAT,
     "not an mprof PC sidecar"},
    {HEAD "\"x\": 1} trailing", MPROF_EFORMAT, "byte"},
    {"{\"format\": \"mprof-pc-sidecar\", \"version\": 2}", MPROF_EVERSION,
     "version 2 is not supported"},
    {"{\"format\": \"mprof-pc-sidecar\", \"version\": \"1\"}", MPROF_EFORMAT,
     "version is not a number (it is a string)"},
    {"{\"format\": \"mprof-pc-sidecar\"}", MPROF_EFORMAT, "version is missing"},
    {HEAD "\"files\": [], \"functions\": []}", MPROF_EFORMAT,
     "stall_reasons is missing"},
    {HEAD "\"stall_reasons\": {}, \"files\": [], \"functions\": []}",
     MPROF_EFORMAT, "stall_reasons is not an array (it is an object)"},
    {HEAD "\"stall_reasons\": [7], \"files\": [], \"functions\": []}",
     MPROF_EFORMAT, "stall_reasons[0]: the name is not a string"},
    {HEAD "\"stall_reasons\": [], \"files\": [\"\"], \"functions\": []}",
     MPROF_EFORMAT, "files[0]: the name is empty"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": {}}",
     MPROF_EFORMAT, "functions is not an array"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [3]}",
     MPROF_EFORMAT, "functions[0]: is not an object (it is an integer)"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{}]}",
     MPROF_EFORMAT, "functions[0]: name is missing"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{\"name\": "
          "\"\"}]}",
     MPROF_EFORMAT, "functions[0]: name is empty"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{\"name\": "
          "\"a\\u0000b\"}]}",
     MPROF_EFORMAT, "name contains a NUL character"},
    {ONE_FN("[\"x\", \"\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "functions[0].instructions[0]: offset is not a number (it is a string)"},
    {ONE_FN("[1.5, \"\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "offset is not an integer (it is a fraction)"},
    {ONE_FN("[1e400, \"\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "offset is not an integer"},
    {ONE_FN("[-16, \"\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "offset is negative (-16)"},
    {ONE_FN("[4294967296, \"\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "offset is out of range (4294967296; at most 4294967295)"},
    {ONE_FN("[99999999999999999999999999, \"\", \"NOP\", \"\", -1, 0]", ""),
     MPROF_EFORMAT, "offset is out of range"},
    {ONE_FN("[0, \"\", \"NOP\", \"\", -1]", ""), MPROF_EFORMAT,
     "instructions[0]: has 5 items, expected 6"},
    {ONE_FN("{}", ""), MPROF_EFORMAT,
     "instructions[0]: is not an array (it is an object)"},
    {ONE_FN("[0, null, \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "predicate is not a string (it is null)"},
    {ONE_FN("[0, \"\", \"NOP\", \"\", 1, 0]", ""), MPROF_EFORMAT,
     "file_index 1 does not exist (files has 1; -1 means none)"},
    {ONE_FN("[0, \"\", \"NOP\", \"\", -2, 0]", ""), MPROF_EFORMAT,
     "file_index is negative"},
    {ONE_FN("[0, \"\", \"NOP\", \"\", 0, true]", ""), MPROF_EFORMAT,
     "line is not a number (it is a boolean)"},
    {ONE_FN("[16, \"\", \"NOP\", \"\", 0, 1], [16, \"\", \"NOP\", \"\", 0, 1]",
            ""),
     MPROF_EFORMAT, "instructions[1]: offset 0x10 appears twice"},
    {ONE_FN("[32, \"\", \"NOP\", \"\", 0, 1], [16, \"\", \"NOP\", \"\", 0, 1]",
            ""),
     MPROF_EFORMAT, "offset 0x10 comes after 0x20"},
    {ONE_FN("[64, \"\", \"NOP\", \"\", 0, 1]", ""), MPROF_EFORMAT,
     "offset 0x40 is past the end of the function (64 bytes)"},
    {ONE_FN("", "[0]"), MPROF_EFORMAT,
     "functions[0].pcs[0]: has 1 items, expected 2"},
    {ONE_FN("", "[0, [1]]"), MPROF_EFORMAT,
     "pcs[0]: the counts are not an object (they are an array)"},
    {ONE_FN("", "[0, {\"x\": 1}]"), MPROF_EFORMAT,
     "stall reason \"x\" is not an index from 0 to 1023"},
    {ONE_FN("", "[0, {\"01\": 1}]"), MPROF_EFORMAT, "stall reason \"01\""},
    {ONE_FN("", "[0, {\"1024\": 1}]"), MPROF_EFORMAT, "stall reason \"1024\""},
    {ONE_FN("", "[0, {\"-1\": 1}]"), MPROF_EFORMAT, "stall reason \"-1\""},
    {ONE_FN("", "[0, {\"0\": -5}]"), MPROF_EFORMAT,
     "the count of reason 0 is negative (-5)"},
    {ONE_FN("", "[0, {\"0\": \"7\"}]"), MPROF_EFORMAT,
     "the count of reason 0 is not a number (it is a string)"},
    {ONE_FN("", "[0, {\"0\": null}]"), MPROF_EFORMAT,
     "the count of reason 0 is not a number (it is null)"},
    {ONE_FN("", "null"), MPROF_EFORMAT, "pcs[0]: is not an array (it is null)"},
    {ONE_FN("", "[0, {\"0\": 9223372036854775808}]"), MPROF_EFORMAT,
     "the count of reason 0 is out of range"},
    {ONE_FN("", "[0, {\"0\": 1}], [0, {\"0\": 1}]"), MPROF_EFORMAT,
     "pcs[1]: offset 0x0 appears twice"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": []}]}",
     MPROF_EFORMAT, "functions[0]: pcs is missing"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": [], \"pcs\": [], \"sass_state\": \"bogus\"}]}",
     MPROF_EFORMAT,
     "sass_state \"bogus\" is not present, no_cubin, no_disassembler, "
     "failed or deferred"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": [], \"pcs\": [], \"cubin_crc\": \"xyz\"}]}",
     MPROF_EFORMAT, "cubin_crc \"xyz\" is not hexadecimal"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": [], \"pcs\": [], \"cubin_crc\": "
          "\"00000000000000001\"}]}",
     MPROF_EFORMAT, "is not 1 to 16 hexadecimal digits"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": [], \"pcs\": [], \"device\": 4294967296}]}",
     MPROF_EFORMAT, "functions[0]: device is out of range"},
    {HEAD "\"stall_reasons\": [], \"files\": [], \"functions\": [{" FN_FIELDS
          ", \"instructions\": [], \"pcs\": []}, {" FN_FIELDS
          ", \"instructions\": [], \"pcs\": []}]}",
     MPROF_EFORMAT,
     "functions[1]: repeats function \"_Z1kv\" with cubin_crc "
     "000000000000001f"},
    {HEAD "\"stall_reasons\": [\"\xff\"], \"files\": [], \"functions\": []}",
     MPROF_EFORMAT, "JSON syntax error"},
    /* An overlong '/' (json-c takes it) would be written back as U+FFFD:
     * not what was read. */
    {ONE_FN("[0, \"\xc0\xaf\", \"NOP\", \"\", -1, 0]", ""), MPROF_EFORMAT,
     "functions[0].instructions[0]: predicate is not valid UTF-8 (byte 0)"},
};

static void test_malformed(void **state) {
  (void)state;
  const char *path = test_path("bad.pc.json");
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    assert_int_equal(test_write_file(path, c->json, strlen(c->json)), 0);
    mprof_sidecar *sc = (mprof_sidecar *)0x1;
    int rc = mprof_sidecar_load(&sc, path);
    if (rc != c->status || !strstr(mprof_error_last(), c->message) ||
        strncmp(mprof_error_last(), path, strlen(path)) != 0)
      fail_msg("case %zu: got %d \"%s\", expected %d with \"%s\"", i, rc,
               mprof_error_last(), c->status, c->message);
    assert_null(sc);
  }
  /* Every message names a way out. */
  assert_int_equal(
      test_write_file(path, bad_cases[20].json, strlen(bad_cases[20].json)), 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, path), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "mprof sass --rebuild TRACE"));
  unlink(path);
}

static void test_deep_nesting(void **state) {
  (void)state;
  const char *path = test_path("deep.pc.json");
  size_t depth = 100000;
  char *text = (char *)malloc(2 * depth + 256);
  assert_non_null(text);
  size_t n = (size_t)sprintf(text, HEAD "\"x\": ");
  memset(text + n, '[', depth);
  memset(text + n + depth, ']', depth);
  strcpy(text + n + 2 * depth, "}");
  assert_int_equal(test_write_file(path, text, strlen(text)), 0);
  free(text);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, path), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "nested deeper than"));
  unlink(path);
}

/* Tables of counts are dense: a few bytes may not ask for kilobytes. */
static void test_count_budget(void **state) {
  (void)state;
  const char *path = test_path("budget.pc.json");
  size_t pcs = 2000;
  char *text = (char *)malloc(pcs * 32 + 1024);
  assert_non_null(text);
  size_t n = (size_t)sprintf(text, HEAD "\"stall_reasons\": [], \"files\": "
                                        "[], \"functions\": [{" FN_FIELDS
                                        ", \"instructions\": [], \"pcs\": [");
  for (size_t i = 0; i < pcs; i++)
    n +=
        (size_t)sprintf(text + n, "%s[%zu,{\"1023\":1}]", i ? "," : "", i * 16);
  strcpy(text + n, "]}]}");
  assert_int_equal(test_write_file(path, text, strlen(text)), 0);
  free(text);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, path), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "need more memory than a file"));
  unlink(path);
}

/* Every prefix of a valid sidecar but the whole is refused cleanly. */
static void test_truncation_sweep(void **state) {
  (void)state;
  const char *path = test_path("whole.pc.json");
  const char *cut = test_path("cut.pc.json");
  mprof_sidecar *sc = make_sidecar();
  assert_int_equal(mprof_sidecar_save(sc, path), 0);
  mprof_sidecar_free(sc);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  assert_non_null(data);
  assert_true(size > 500);
  for (size_t len = 0; len + 1 < size; len++) { /* size - 1: the final \n */
    assert_int_equal(test_write_file(cut, data, len), 0);
    sc = (mprof_sidecar *)0x1;
    int rc = mprof_sidecar_load(&sc, cut);
    if (rc != MPROF_EFORMAT || strncmp(mprof_error_last(), cut, strlen(cut)))
      fail_msg("prefix of %zu bytes: %d \"%s\"", len, rc, mprof_error_last());
    assert_null(sc);
  }
  assert_int_equal(test_write_file(cut, data, size - 1), 0);
  assert_int_equal(mprof_sidecar_load(&sc, cut), 0);
  check_sidecar(sc);
  mprof_sidecar_free(sc);
  free(data);
  unlink(path);
  unlink(cut);
}

/* Unknown keys are skipped, so version 1 files can grow optional fields. */
static void test_unknown_keys_skipped(void **state) {
  (void)state;
  const char *path = test_path("extra.pc.json");
  const char *json = HEAD
      "\"stall_reasons\": [\"r0\"], \"files\": [\"k.cu\"], \"producer\": "
      "\"x\", \"functions\": [{" FN_FIELDS
      ", \"later\": {\"a\": [1]}, \"instructions\": [[0, \"\", \"NOP\", \"\", "
      "0, 7]], \"pcs\": [[0, {}], [48, {\"0\": 0}]]}]}";
  assert_int_equal(test_write_file(path, json, strlen(json)), 0);
  mprof_sidecar *sc;
  assert_int_equal(mprof_sidecar_load(&sc, path), 0);
  const mprof_sidecar_function *f = mprof_sidecar_function_at(sc, 0);
  assert_true(f->cubin_crc == 0x1f);
  assert_int_equal(f->instruction_count, 1);
  assert_string_equal(f->instructions[0].file, "k.cu");
  assert_int_equal(f->instructions[0].line, 7);
  assert_int_equal(f->pc_count, 2);
  assert_int_equal(f->pcs[1].offset, 48);
  mprof_sidecar_free(sc);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_instruction_text),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_invalid_utf8_is_replaced),
      cmocka_unit_test(test_empty_sidecar),
      cmocka_unit_test(test_api_refusals),
      cmocka_unit_test(test_save_errors),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_count_budget),
      cmocka_unit_test(test_truncation_sweep),
      cmocka_unit_test(test_unknown_keys_skipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
