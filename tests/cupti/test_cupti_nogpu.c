/*
 * The injection library on a machine without a GPU or driver: a process
 * that loads it and calls InitializeInjection() must exit normally, with
 * its own output untouched, and leave a trace whose META says who wrote it
 * and why nothing was captured, and whose PROCESSES record says who the
 * process was and the status it exited with.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mprof/error.h"
#include "mprof/trace.h"

/* NVTX's export-table query, answered with nothing (there is no NVTX
 * runtime in this test). */
static const void *no_export_table(uint32_t id) {
  (void)id;
  return NULL;
}

/* @p nvtx_first: the program's first NVTX call loads the library before
 * CUDA does (InitializeInjectionNvtx2, then InitializeInjection).
 * @p window: 1 a capture window is asked for (the program also calls
 * mprof/control.h's entry point), 2 a capture range that does not parse. */
static void initialize_without_driver(int nvtx_first, int window) {
  const char *dir = getenv("MPROF_TEST_TMP");
  char path[4096];
  snprintf(path, sizeof path, "%s/cupti-nogpu-%d-%ld.mprof",
           dir && *dir ? dir : "/tmp", nvtx_first, (long)getpid());
  unlink(path);

  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    alarm(30); /* a hang fails the test instead of stalling it */
    setenv("MPROF_OUTPUT", path, 1);
    if (window) {
      setenv("MPROF_CAPTURE_RANGE", window == 1 ? "nvtx:step" : "nvtx:", 1);
      if (window == 1) {
        setenv("MPROF_RANGE_SKIP", "2", 1);
        setenv("MPROF_MAX_SIZE", "1G", 1);
      }
    }
    setenv("RANK", "5", 1); /* as a launcher would */
    unsetenv("LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("SLURM_LOCALID");
    void *lib = dlopen(MPROF_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      _exit(3);
    }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (!init)
      _exit(4);
    if (nvtx_first) {
      typedef int (*nvtx_init_fn)(const void *(*)(uint32_t));
      nvtx_init_fn nvtx_init =
          (nvtx_init_fn)dlsym(lib, "InitializeInjectionNvtx2");
      if (!nvtx_init)
        _exit(7);
      nvtx_init(no_export_table); /* 0 or 1: CUPTI decides */
    }
    /* The driver ignores the value; NVIDIA's samples return 1. */
    if (init() != 1)
      _exit(5);
    /* A second call (a second cuInit) must be harmless. */
    if (init() != 1)
      _exit(6);
    /* mprof/control.h's calls: the window cannot open without CUPTI. */
    typedef int (*control_fn)(int, int, const char *);
    control_fn control = (control_fn)dlsym(lib, "mprof_control");
    if (!control || control(1, 3, "step") < 0 || control(1, 4, NULL) < 0 ||
        control(2, 1, NULL) != -1)
      _exit(8);
    /* Runs the library's exit handler, which writes the trace. */
    exit(nvtx_first ? 3 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), nvtx_first ? 3 : 0);

  mprof_trace *trace = NULL;
  int rc = mprof_trace_open(&trace, path, NULL);
  if (rc != 0)
    fail_msg("mprof_trace_open: %s", mprof_error_last());
  assert_string_equal(mprof_trace_meta(trace, "tool"), "mprof");
  assert_string_equal(mprof_trace_meta(trace, "producer"), "cupti");
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)child);
  assert_string_equal(mprof_trace_meta(trace, "pid"), pid);
  assert_string_equal(mprof_trace_meta(trace, "pc.mode"), "continuous");
  assert_string_equal(mprof_trace_meta(trace, "pc.period"), "14");
  assert_non_null(mprof_trace_meta(trace, "cmdline"));
  assert_non_null(mprof_trace_meta(trace, "clock.end.trace_ns"));
  /* What started the recording: NVTX when it came first. */
  assert_string_equal(mprof_trace_meta(trace, "capture.started_by"),
                      nvtx_first ? "nvtx" : "cuInit");
  /* Whatever CUPTI does without a driver, the trace explains it. */
  const char *disabled = mprof_trace_meta(trace, "capture.disabled");
  const char *error = mprof_trace_meta(trace, "error.0");
  assert_true(disabled != NULL || error != NULL ||
              mprof_trace_meta(trace, "clock") != NULL);
  size_t n = 0;
  mprof_trace_launches(trace, &n);
  assert_int_equal(n, 0);
  /* The process's record, written by the producer itself. */
  const mprof_process_record *p =
      (const mprof_process_record *)mprof_trace_section(
          trace, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->pid, (uint32_t)child);
  assert_int_equal(p->ppid, (uint32_t)getpid());
  assert_int_equal(p->rank, 5);
  assert_int_equal(p->local_rank, MPROF_INDEX_NONE);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  assert_string_equal(mprof_trace_string(trace, p->host), host);
  assert_non_null(
      strstr(mprof_trace_string(trace, p->cmdline), "test_cupti_nogpu"));
  assert_int_equal(p->exit_kind, MPROF_EXIT_STATUS);
  assert_int_equal(p->exit_value, nvtx_first ? 3 : 0);
  /* Its end is the trace clock's at exit (the start only once CUPTI
   * took the subscription, which it may refuse without a driver). */
  assert_int_equal(
      p->end,
      strtoull(mprof_trace_meta(trace, "clock.end.trace_ns"), NULL, 10));
  assert_true(p->start == 0 || p->start <= p->end);
  /* The window asked for, which never opened; none for a range that does
   * not parse, which is an error the trace keeps. */
  const mprof_capture_record *c = mprof_trace_captures(trace, &n);
  if (window == 1) {
    assert_int_equal(n, 1);
    assert_int_equal(c->trigger, MPROF_CAPTURE_NVTX);
    assert_int_equal(c->skip, 2);
    assert_int_equal(c->max_bytes, 1ull << 30);
    assert_int_equal(c->start, 0);
    assert_string_equal(mprof_trace_string(trace, c->spec), "nvtx:step");
  } else if (window == 2) {
    assert_int_equal(n, 0);
    int found = 0;
    for (int i = 0; i < 8; i++) {
      char key[16];
      snprintf(key, sizeof key, "error.%d", i);
      const char *e = mprof_trace_meta(trace, key);
      found |= e && strstr(e, "MPROF_CAPTURE_RANGE: 'nvtx:' names no range") &&
               strstr(e, "no range opens the window");
    }
    assert_true(found);
  } else {
    assert_int_equal(n, 0);
  }
  mprof_trace_free(trace);
  unlink(path);
}

static void test_initialize_without_driver(void **state) {
  (void)state;
  initialize_without_driver(0, 0);
}

static void test_nvtx_first_without_driver(void **state) {
  (void)state;
  initialize_without_driver(1, 0);
}

static void test_window_without_driver(void **state) {
  (void)state;
  initialize_without_driver(0, 1);
  initialize_without_driver(1, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_initialize_without_driver),
      cmocka_unit_test(test_nvtx_first_without_driver),
      cmocka_unit_test(test_window_without_driver),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
