/*
 * mprof/control.h — mark steps and start or stop recording from inside a
 * C or C++ program recorded with `mprof record`.
 *
 * Header only, with no link dependency on mprof: every function looks for
 * the CUPTI producer that `mprof record` injected (the library
 * CUDA_INJECTION64_PATH names, once the CUDA driver has loaded it) and does
 * nothing when there is none: the program runs the same without mprof.
 * Uses dlopen(3): with glibc older than 2.34, link with -ldl.
 *
 *   mprof_capture_start() / mprof_capture_stop()
 *       what cudaProfilerStart/Stop are to `--capture-range
 *       cudaProfilerApi` (calling those works too, with no mprof code)
 *   mprof_step_begin("step") / mprof_step_end()
 *       a range named "step" on this thread, as an NVTX push/pop in the
 *       default domain is to `--capture-range nvtx:step`
 *
 *   for (int i = 0; i < steps; i++) {
 *     mprof_step_begin("step");
 *     train_step();
 *     mprof_step_end();
 *   }
 *   // mprof record --capture-range nvtx:step --range-skip 1000
 *   //              --range-count 4 -- ./train
 *
 * Each returns 1 when the producer is recording after the call, 0 when it
 * is not (or there is no producer, or no capture window was asked for).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CONTROL_H
#define MPROF_CONTROL_H

#include <dlfcn.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The operations of the producer's `mprof_control` entry point. */
enum {
  MPROF_CONTROL_START = 1,      /**< as cudaProfilerStart */
  MPROF_CONTROL_STOP = 2,       /**< as cudaProfilerStop */
  MPROF_CONTROL_STEP_BEGIN = 3, /**< a range named by the argument begins */
  MPROF_CONTROL_STEP_END = 4    /**< this thread's innermost range ends */
};
/** The version of the entry point's contract this header speaks. */
#define MPROF_CONTROL_VERSION 1

/** int mprof_control(int version, int op, const char *name). */
typedef int (*mprof_control_fn)(int version, int op, const char *name);

/* The producer's entry point, or NULL. Not found yet while the driver has
 * not loaded it (before the first CUDA call), so looked for again then;
 * never found without CUDA_INJECTION64_PATH. */
static inline mprof_control_fn mprof_control_entry(void) {
  static mprof_control_fn entry;
  static int absent;
  const char *path;
  void *library;
  if (entry || absent)
    return entry;
  path = getenv("CUDA_INJECTION64_PATH");
  if (!path || !*path) {
    absent = 1;
    return NULL;
  }
  library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    return NULL;
  /* Through a union: ISO C has no cast from void * to a function. */
  {
    union {
      void *object;
      mprof_control_fn function;
    } symbol;
    symbol.object = dlsym(library, "mprof_control");
    entry = symbol.function;
  }
  dlclose(library); /* the driver's reference keeps it loaded */
  if (!entry)
    absent = 1; /* another injection library */
  return entry;
}

static inline int mprof_control_call(int op, const char *name) {
  mprof_control_fn entry = mprof_control_entry();
  return entry ? entry(MPROF_CONTROL_VERSION, op, name) > 0 : 0;
}

/** Start recording, as cudaProfilerStart() does for `--capture-range
 *  cudaProfilerApi`. */
static inline int mprof_capture_start(void) {
  return mprof_control_call(MPROF_CONTROL_START, NULL);
}

/** Stop recording, as cudaProfilerStop(). */
static inline int mprof_capture_stop(void) {
  return mprof_control_call(MPROF_CONTROL_STOP, NULL);
}

/** Begin a step (a range named @p name on this thread), for
 *  `--capture-range nvtx:NAME`. */
static inline int mprof_step_begin(const char *name) {
  return mprof_control_call(MPROF_CONTROL_STEP_BEGIN, name ? name : "step");
}

/** End this thread's innermost step. */
static inline int mprof_step_end(void) {
  return mprof_control_call(MPROF_CONTROL_STEP_END, NULL);
}

#ifdef __cplusplus
}
#endif

#endif /* MPROF_CONTROL_H */
