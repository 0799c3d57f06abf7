/*
 * A program that marks its steps with mprof/control.h, built with no mprof
 * library: run without the producer, every call is a no-op that returns 0;
 * with one loaded (here a stand-in the program loads itself, as the CUDA
 * driver loads the producer at cuInit), the calls reach it.
 *
 *   control_app none       no CUDA_INJECTION64_PATH: nothing happens
 *   control_app unloaded   the path names a library nobody loaded yet, then
 *                          the program loads it: calls before go nowhere,
 *                          calls after reach it
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mprof/control.h>

static int failures;

static void expect(int got, int want, const char *what) {
  if (got != want) {
    printf("FAIL: %s returned %d, not %d\n", what, got, want);
    failures++;
  }
}

static void steps(int recording) {
  expect(mprof_capture_start(), recording, "mprof_capture_start()");
  expect(mprof_step_begin("step"), recording, "mprof_step_begin(\"step\")");
  expect(mprof_step_end(), recording, "mprof_step_end()");
  expect(mprof_capture_stop(), 0, "mprof_capture_stop()");
  expect(mprof_step_begin(NULL), recording, "mprof_step_begin(NULL)");
  expect(mprof_step_end(), 0, "mprof_step_end()");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  if (strcmp(mode, "none") == 0) {
    for (int i = 0; i < 1000; i++)
      steps(0);
  } else if (strcmp(mode, "unloaded") == 0) {
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path) {
      printf("FAIL: CUDA_INJECTION64_PATH is not set\n");
      return 1;
    }
    steps(0); /* before "cuInit": not loaded, nothing reached */
    printf("loading\n");
    fflush(stdout);
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      printf("FAIL: dlopen %s: %s\n", path, dlerror());
      return 1;
    }
    steps(1);
  } else {
    printf("FAIL: unknown mode %s\n", mode);
    return 1;
  }
  printf("%s\n", failures ? "failed" : "ok");
  return failures ? 1 : 0;
}
