/*
 * Tests of the CUPTI producer's settings (MPROF_* variables), output
 * naming and claims, without a GPU.
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
#include <sys/stat.h>
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

/* ---- settings ----------------------------------------------------------- */

typedef struct env_pair {
  const char *name;
  const char *value;
} env_pair;

static const char *fake_env(void *userdata, const char *name) {
  for (const env_pair *p = (const env_pair *)userdata; p->name; p++)
    if (strcmp(p->name, name) == 0)
      return p->value;
  return NULL;
}

static void test_config_defaults(void **state) {
  (void)state;
  env_pair none[] = {{NULL, NULL}};
  mprof_cupti_config cfg;
  mprof_cupti_config_load(&cfg, fake_env, none, 42, "gpu1");
  assert_string_equal(cfg.output, "trace.mprof");
  assert_int_equal(cfg.pc_mode, MPROF_CUPTI_PC_CONTINUOUS);
  assert_int_equal(cfg.pc_period, 14);
  assert_int_equal(cfg.pc_hw_buffer, 512ull << 20);
  assert_string_equal(cfg.kernel_regex, "");
  assert_int_equal(cfg.keep_sass, 1);
  assert_int_equal(cfg.api_calls, 1);
  assert_int_equal(cfg.verbose, 0);
  assert_int_equal(cfg.pm_enabled, 0);
  assert_int_equal(cfg.pm_interval_ns, MPROF_CUPTI_DEFAULT_PM_INTERVAL_NS);
  assert_int_equal(cfg.pm_decode_period_ns,
                   MPROF_CUPTI_DEFAULT_PM_DECODE_PERIOD_NS);
  assert_int_equal(cfg.pm_counter_samples,
                   MPROF_CUPTI_DEFAULT_PM_COUNTER_SAMPLES);
  assert_string_equal(cfg.pm_metrics, "");
  assert_int_equal(cfg.problem_count, 0);
}

static void test_config_pm(void **state) {
  (void)state;
  env_pair env[] = {{"MPROF_PM", "on"},
                    {"MPROF_PM_INTERVAL", "2.5us"},
                    {"MPROF_PM_HW_BUFFER", "1G"},
                    {"MPROF_PM_METRICS", "a,b"},
                    {"MPROF_PM_DECODE_PERIOD", "5ms"},
                    {"MPROF_PM_COUNTER_SAMPLES", "128"},
                    {NULL, NULL}};
  mprof_cupti_config cfg;
  mprof_cupti_config_load(&cfg, fake_env, env, 1, "h");
  assert_int_equal(cfg.pm_enabled, 1);
  assert_int_equal(cfg.pm_interval_ns, 2500);
  assert_int_equal(cfg.pm_hw_buffer, 1ull << 30);
  assert_string_equal(cfg.pm_metrics, "a,b");
  assert_int_equal(cfg.pm_decode_period_ns, 5000000);
  assert_int_equal(cfg.pm_counter_samples, 128);
  assert_int_equal(cfg.problem_count, 0);
  /* Out of range: the default, and a problem naming the variable. */
  env_pair odd[] = {{"MPROF_PM_DECODE_PERIOD", "10us"},
                    {"MPROF_PM_COUNTER_SAMPLES", "8"},
                    {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, odd, 1, "h");
  assert_int_equal(cfg.pm_decode_period_ns,
                   MPROF_CUPTI_DEFAULT_PM_DECODE_PERIOD_NS);
  assert_int_equal(cfg.pm_counter_samples,
                   MPROF_CUPTI_DEFAULT_PM_COUNTER_SAMPLES);
  assert_int_equal(cfg.problem_count, 2);
  assert_non_null(strstr(cfg.problems[0], "MPROF_PM_DECODE_PERIOD"));
  assert_non_null(strstr(cfg.problems[1], "MPROF_PM_COUNTER_SAMPLES"));
  /* Below 1 us, above 1 s, or not a duration: the default, and a problem. */
  const char *bad[] = {"500ns", "2s", "fast", "1.5ms"};
  for (int i = 0; i < 4; i++) {
    env_pair one[] = {{"MPROF_PM_INTERVAL", bad[i]}, {NULL, NULL}};
    mprof_cupti_config_load(&cfg, fake_env, one, 1, "h");
    if (i == 3) {
      assert_int_equal(cfg.pm_interval_ns, 1500000);
      assert_int_equal(cfg.problem_count, 0);
      continue;
    }
    assert_int_equal(cfg.pm_interval_ns, MPROF_CUPTI_DEFAULT_PM_INTERVAL_NS);
    assert_int_equal(cfg.problem_count, 1);
    assert_non_null(strstr(cfg.problems[0], "MPROF_PM_INTERVAL"));
  }
  env_pair maybe[] = {{"MPROF_PM", "maybe"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, maybe, 1, "h");
  assert_int_equal(cfg.pm_enabled, 0);
  assert_int_equal(cfg.pm_alternate, 0);
  assert_non_null(strstr(cfg.problems[0], "MPROF_PM"));
  /* alternate: PM sampling on, taking turns, every N repeats */
  env_pair alt[] = {
      {"MPROF_PM", "alternate"}, {"MPROF_ALTERNATE_EVERY", "3"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, alt, 1, "h");
  assert_int_equal(cfg.pm_enabled, 1);
  assert_int_equal(cfg.pm_alternate, 1);
  assert_int_equal(cfg.alternate_every, 3);
  assert_int_equal(cfg.problem_count, 0);
  env_pair zero[] = {
      {"MPROF_PM", "alternate"}, {"MPROF_ALTERNATE_EVERY", "0"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, zero, 1, "h");
  assert_int_equal(cfg.alternate_every, 0); /* the producer's default */
  assert_int_equal(cfg.problem_count, 1);
  assert_non_null(strstr(cfg.problems[0], "MPROF_ALTERNATE_EVERY"));
}

/* The capture window's variables (`record --capture-range` and the rest). */
static void test_config_capture(void **state) {
  (void)state;
  env_pair env[] = {{"MPROF_CAPTURE_RANGE", "nvtx:step@*"},
                    {"MPROF_RANGE_SKIP", "1000"},
                    {"MPROF_RANGE_COUNT", "4"},
                    {"MPROF_KERNEL_SKIP", "7"},
                    {"MPROF_KERNEL_COUNT", "2"},
                    {"MPROF_DELAY", "1.5s"},
                    {"MPROF_DURATION", "250ms"},
                    {"MPROF_MAX_SIZE", "500M"},
                    {NULL, NULL}};
  mprof_cupti_config cfg;
  mprof_cupti_config_load(&cfg, fake_env, env, 1, "h");
  assert_string_equal(cfg.capture_range, "nvtx:step@*");
  assert_int_equal(cfg.range_skip, 1000);
  assert_int_equal(cfg.range_count, 4);
  assert_int_equal(cfg.kernel_skip, 7);
  assert_int_equal(cfg.kernel_count, 2);
  assert_int_equal(cfg.delay_ns, 1500000000ull);
  assert_int_equal(cfg.duration_ns, 250000000ull);
  assert_int_equal(cfg.max_bytes, 500ull << 20);
  assert_int_equal(cfg.problem_count, 0);
  /* Unset: the whole run. */
  env_pair none[] = {{NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, none, 1, "h");
  assert_string_equal(cfg.capture_range, "");
  assert_int_equal(cfg.range_skip + cfg.range_count + cfg.kernel_skip +
                       cfg.kernel_count + cfg.delay_ns + cfg.duration_ns +
                       cfg.max_bytes,
                   0);
  /* Bad values: no limit, and a problem naming the variable. */
  env_pair bad[] = {{"MPROF_RANGE_SKIP", "-1"},
                    {"MPROF_DURATION", "0s"},
                    {"MPROF_MAX_SIZE", "lots"},
                    {"MPROF_DELAY", "2 days"},
                    {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, bad, 1, "h");
  assert_int_equal(cfg.range_skip, 0);
  assert_int_equal(cfg.duration_ns, 0);
  assert_int_equal(cfg.max_bytes, 0);
  assert_int_equal(cfg.delay_ns, 0);
  assert_int_equal(cfg.problem_count, 4);
  assert_non_null(strstr(cfg.problems[0], "MPROF_RANGE_SKIP"));
  assert_non_null(strstr(cfg.problems[1], "MPROF_DELAY"));
  assert_non_null(strstr(cfg.problems[2], "MPROF_DURATION"));
  assert_non_null(strstr(cfg.problems[3], "MPROF_MAX_SIZE"));
}

static void test_config_values(void **state) {
  (void)state;
  env_pair env[] = {{"MPROF_OUTPUT", "out/%h-%p%%.mprof"},
                    {"MPROF_PC_MODE", "serialized"},
                    {"MPROF_PC_PERIOD", "10"},
                    {"MPROF_PC_HW_BUFFER", "4G"},
                    {"MPROF_KERNEL_REGEX", "gemm"},
                    {"MPROF_NO_SASS", "1"},
                    {"MPROF_VERBOSE", "yes"},
                    {NULL, NULL}};
  mprof_cupti_config cfg;
  mprof_cupti_config_load(&cfg, fake_env, env, 42, "gpu1");
  assert_string_equal(cfg.output, "out/gpu1-42%.mprof");
  assert_int_equal(cfg.pc_mode, MPROF_CUPTI_PC_SERIALIZED);
  assert_int_equal(cfg.pc_period, 10);
  assert_int_equal(cfg.pc_hw_buffer, 4ull << 30);
  assert_string_equal(cfg.kernel_regex, "gemm");
  assert_int_equal(cfg.keep_sass, 0);
  assert_int_equal(cfg.verbose, 1);
  assert_int_equal(cfg.problem_count, 0);
}

static void test_output_naming(void **state) {
  (void)state;
  env_pair env[] = {{"RANK", "3"}, {"LOCAL_RANK", "1"},   {"SLURM_PROCID", "7"},
                    {"EMPTY", ""}, {"EVIL", "../../etc"}, {NULL, NULL}};
  char out[64];
  assert_int_equal(mprof_cupti_expand_output(
                       out, sizeof out, "run-%q{RANK}-%q{LOCAL_RANK}.mprof", 42,
                       "h", fake_env, env),
                   0);
  assert_string_equal(out, "run-3-1.mprof");
  assert_int_equal(mprof_cupti_expand_output(out, sizeof out,
                                             "r%q{UNSET}%q{EMPTY}-%p-%h.mprof",
                                             42, "gpu1", fake_env, env),
                   0);
  assert_string_equal(out, "r-42-gpu1.mprof");
  /* Not a placeholder: kept as written. */
  assert_int_equal(mprof_cupti_expand_output(out, sizeof out, "a%q{b-%%q", 1,
                                             "h", fake_env, env),
                   0);
  assert_string_equal(out, "a%q{b-%q");
  /* A value never takes the trace out of its directory. */
  assert_int_equal(mprof_cupti_expand_output(out, sizeof out, "%q{EVIL}.mprof",
                                             1, "h", fake_env, env),
                   -1);
  mprof_cupti_config cfg;
  env_pair bad[] = {
      {"MPROF_OUTPUT", "x/%q{EVIL}.mprof"}, {"EVIL", "a/b"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, bad, 42, "h");
  assert_string_equal(cfg.output, "trace.mprof");
  assert_int_equal(cfg.problem_count, 1);
  env_pair with_pid[] = {{"MPROF_OUTPUT", "t-%p.mprof"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, with_pid, 42, "h");
  assert_int_equal(cfg.output_has_pid, 1);

  assert_int_equal(
      mprof_cupti_pid_path(out, sizeof out, "/d.x/trace.mprof", 4242), 0);
  assert_string_equal(out, "/d.x/trace.4242.mprof");
  assert_int_equal(mprof_cupti_pid_path(out, sizeof out, "d.x/trace", 5), 0);
  assert_string_equal(out, "d.x/trace.5");
  assert_int_equal(mprof_cupti_pid_path(out, sizeof out, ".hidden", 5), 0);
  assert_string_equal(out, ".hidden.5");

  const char *rank, *source, *local_rank;
  mprof_cupti_rank(fake_env, env, &rank, &source, &local_rank);
  assert_string_equal(rank, "3");
  assert_string_equal(source, "RANK");
  assert_string_equal(local_rank, "1");
  env_pair slurm[] = {{"SLURM_PROCID", "7"}, {NULL, NULL}};
  mprof_cupti_rank(fake_env, slurm, &rank, &source, &local_rank);
  assert_string_equal(rank, "7");
  assert_string_equal(source, "SLURM_PROCID");
  assert_null(local_rank);

  char line[64];
  assert_int_equal(mprof_cupti_manifest_format(line, sizeof line, "signal", 12,
                                               -6, "/t.mprof"),
                   strlen("signal 12 -6 /t.mprof\n"));
  assert_string_equal(line, "signal 12 -6 /t.mprof\n");
  assert_int_equal(
      mprof_cupti_manifest_format(line, 8, "start", 12, 1, "/t.mprof"), 0);
}

/* The second process to claim a name gets NAME.PID.EXT; a name that holds
 * the pid is reused (a leftover of an earlier process with that pid). */
static void test_output_claim(void **state) {
  (void)state;
  const char *dir = getenv("MPROF_TEST_TMP");
  char path[512], first[512], again[512];
  snprintf(path, sizeof path, "%s/claim-%ld.mprof", dir && *dir ? dir : "/tmp",
           (long)getpid());
  snprintf(first, sizeof first, "%s", path);
  mprof_writer *a = NULL, *b = NULL, *c = NULL;
  int renamed = -1;
  assert_int_equal(
      mprof_cupti_open_output(&a, first, sizeof first, 100, 0, "", &renamed),
      0);
  assert_int_equal(renamed, 0);
  assert_string_equal(first, path);
  snprintf(again, sizeof again, "%s", path);
  assert_int_equal(
      mprof_cupti_open_output(&b, again, sizeof again, 200, 0, "", &renamed),
      0);
  assert_int_equal(renamed, 1);
  char expect[512];
  mprof_cupti_pid_path(expect, sizeof expect, path, 200);
  assert_string_equal(again, expect);
  /* The same pid again (a leftover): reused, not refused. */
  assert_int_equal(
      mprof_cupti_open_output(&c, again, sizeof again, 200, 1, "", &renamed),
      0);
  mprof_writer_abort(a);
  mprof_writer_abort(c);
  mprof_writer_abort(b);
}

/* Processes of one run that follow each other (a program's workers run one
 * after the other): the first finished and NAME.partial is gone, but the
 * manifest says it wrote NAME, so the next one writes NAME.PID instead of
 * replacing it. */
static void test_output_claim_sequential(void **state) {
  (void)state;
  const char *dir = getenv("MPROF_TEST_TMP");
  char path[512], manifest[512], name[512], other[600];
  const char *base = dir && *dir ? dir : "/tmp";
  snprintf(path, sizeof path, "%s/seq-%ld.mprof", base, (long)getpid());
  snprintf(manifest, sizeof manifest, "%s/seq-%ld.manifest", base,
           (long)getpid());
  snprintf(other, sizeof other, "%s.other", path);
  FILE *f = fopen(manifest, "w");
  assert_non_null(f);
  /* Another name, and a prefix of ours, name nothing. */
  fprintf(f, "start 7 1 %s\nstart 8 1 %.*s\nend 7 0 %s\n", other,
          (int)strlen(path) - 1, path, other);
  fclose(f);
  assert_int_equal(mprof_cupti_manifest_names(manifest, path), 0);
  assert_int_equal(mprof_cupti_manifest_names(manifest, other), 1);
  assert_int_equal(mprof_cupti_manifest_names("", path), 0);
  assert_int_equal(mprof_cupti_manifest_names("/nonexistent/m", path), 0);

  mprof_writer *a = NULL, *b = NULL;
  int renamed = -1;
  snprintf(name, sizeof name, "%s", path);
  assert_int_equal(mprof_cupti_open_output(&a, name, sizeof name, 100, 0,
                                           manifest, &renamed),
                   0);
  assert_int_equal(renamed, 0);
  assert_string_equal(name, path);
  f = fopen(manifest, "a");
  assert_non_null(f);
  fprintf(f, "start 100 1 %s\nend 100 0 %s\n", path, path);
  fclose(f);
  assert_int_equal(mprof_writer_finish(a), 0);
  assert_int_equal(mprof_cupti_manifest_names(manifest, path), 1);

  snprintf(name, sizeof name, "%s", path);
  assert_int_equal(mprof_cupti_open_output(&b, name, sizeof name, 200, 0,
                                           manifest, &renamed),
                   0);
  assert_int_equal(renamed, 1);
  char expect[512];
  mprof_cupti_pid_path(expect, sizeof expect, path, 200);
  assert_string_equal(name, expect);
  mprof_writer_abort(b);
  unlink(path);
  unlink(manifest);
}

static void test_config_bad_values_fall_back(void **state) {
  (void)state;
  env_pair env[] = {{"MPROF_PC_MODE", "sometimes"},
                    {"MPROF_PC_PERIOD", "4"},
                    {"MPROF_PC_HW_BUFFER", "lots"},
                    {NULL, NULL}};
  mprof_cupti_config cfg;
  mprof_cupti_config_load(&cfg, fake_env, env, 1, "h");
  assert_int_equal(cfg.pc_mode, MPROF_CUPTI_PC_CONTINUOUS);
  assert_int_equal(cfg.pc_period, 14);
  assert_int_equal(cfg.pc_hw_buffer, 512ull << 20);
  assert_int_equal(cfg.problem_count, 3);
  assert_non_null(strstr(cfg.problems[0], "MPROF_PC_MODE"));
  assert_non_null(strstr(cfg.problems[1], "MPROF_PC_PERIOD"));
  assert_non_null(strstr(cfg.problems[2], "MPROF_PC_HW_BUFFER"));

  env_pair off[] = {
      {"MPROF_PC_MODE", "off"}, {"MPROF_PC_PERIOD", "32"}, {NULL, NULL}};
  mprof_cupti_config_load(&cfg, fake_env, off, 1, "h");
  assert_int_equal(cfg.pc_mode, MPROF_CUPTI_PC_OFF);
  assert_int_equal(cfg.pc_period, 14);
  assert_int_equal(cfg.problem_count, 1);
}

static void test_parse_bytes(void **state) {
  (void)state;
  uint64_t v = 0;
  assert_int_equal(mprof_cupti_parse_bytes("536870912", &v), 0);
  assert_int_equal(v, 536870912ull);
  assert_int_equal(mprof_cupti_parse_bytes("512M", &v), 0);
  assert_int_equal(v, 512ull << 20);
  assert_int_equal(mprof_cupti_parse_bytes("2GiB", &v), 0);
  assert_int_equal(v, 2ull << 30);
  assert_int_equal(mprof_cupti_parse_bytes("64kb", &v), 0);
  assert_int_equal(v, 64ull << 10);
  assert_int_equal(mprof_cupti_parse_bytes("-1", &v), -1);
  assert_int_equal(mprof_cupti_parse_bytes("12X", &v), -1);
  assert_int_equal(mprof_cupti_parse_bytes("", &v), -1);
  assert_int_equal(mprof_cupti_parse_bytes("99999999999T", &v), -1);
  char out[16];
  assert_int_equal(mprof_cupti_expand_output(out, sizeof out, "a-%p-%h", 7,
                                             "host", NULL, NULL),
                   0);
  assert_string_equal(out, "a-7-host");
  assert_int_equal(mprof_cupti_expand_output(out, sizeof out,
                                             "a-very-long-name-%p", 7, "h",
                                             NULL, NULL),
                   -1);
}

/* The process's record as the producer knows it: pid, parent and the
 * launcher's rank and local rank as numbers, unknown when not numbers. */
static void test_process_identity(void **state) {
  (void)state;
  env_pair env[] = {{"OMPI_COMM_WORLD_RANK", "12"},
                    {"OMPI_COMM_WORLD_LOCAL_RANK", "4"},
                    {NULL, NULL}};
  mprof_process_record p;
  memset(&p, 0xff, sizeof p);
  mprof_cupti_process_identity(&p, fake_env, env, 4242, 4241);
  assert_int_equal(p.pid, 4242);
  assert_int_equal(p.ppid, 4241);
  assert_int_equal(p.rank, 12);
  assert_int_equal(p.local_rank, 4);
  assert_int_equal(p.host, 0);
  assert_int_equal(p.start, 0);
  assert_int_equal(p.exit_kind, MPROF_EXIT_UNKNOWN);
  assert_int_equal(p.reserved[2], 0);
  env_pair words[] = {
      {"RANK", "first"}, {"LOCAL_RANK", "99999999999"}, {NULL, NULL}};
  mprof_cupti_process_identity(&p, fake_env, words, 7, 1);
  assert_int_equal(p.rank, MPROF_INDEX_NONE);
  assert_int_equal(p.local_rank, MPROF_INDEX_NONE);
  env_pair none[] = {{NULL, NULL}};
  mprof_cupti_process_identity(&p, fake_env, none, 7, 1);
  assert_int_equal(p.rank, MPROF_INDEX_NONE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config_defaults),
      cmocka_unit_test(test_config_values),
      cmocka_unit_test(test_config_pm),
      cmocka_unit_test(test_config_capture),
      cmocka_unit_test(test_config_bad_values_fall_back),
      cmocka_unit_test(test_output_naming),
      cmocka_unit_test(test_output_claim),
      cmocka_unit_test(test_output_claim_sequential),
      cmocka_unit_test(test_parse_bytes),
      cmocka_unit_test(test_process_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
