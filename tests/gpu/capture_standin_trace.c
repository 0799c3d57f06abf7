/*
 * capture_standin_trace: the trace a capture-window recording of
 * tests/gpu/capture_loop.py would give, made without a GPU, for the
 * self-test of tests/gpu/capture_window.sh (tests/gpu/selftest/
 * capture_mprof plays the recorder with it).
 *
 * usage: capture_standin_trace OUT KEY=VALUE...
 *   steps=N per_step=K  N "step" ranges on one thread, each with K launches
 *                       issued by API calls inside it (default 1, 1)
 *   drop=D              the last D launches left out (a broken producer)
 *   trigger=T skip=S count=C recorded=R seen=E reason=W spec=TEXT
 *   delay=SECONDS duration=SECONDS max=BYTES from=SECONDS to=SECONDS
 *                       a CAPTURE record with these fields (trigger and
 *                       reason as numbers, docs/FORMAT.md), the window
 *                       from..to seconds after the process started
 *                       (never opened without from=, still open without
 *                       to=); none without trigger=
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/error.h"
#include "mprof/format.h"
#include "mprof/writer.h"

static const char *arg(int argc, char **argv, const char *key,
                       const char *fallback) {
  size_t n = strlen(key);
  for (int i = 2; i < argc; i++)
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
      return argv[i] + n + 1;
  return fallback;
}

static unsigned long long num(int argc, char **argv, const char *key) {
  return strtoull(arg(argc, argv, key, "0"), NULL, 10);
}

static uint64_t seconds(int argc, char **argv, const char *key) {
  return (uint64_t)(strtod(arg(argc, argv, key, "0"), NULL) * 1e9 + 0.5);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: capture_standin_trace OUT KEY=VALUE...\n");
    return 2;
  }
  unsigned long long steps = strtoull(arg(argc, argv, "steps", "1"), NULL, 10);
  unsigned long long per_step =
      strtoull(arg(argc, argv, "per_step", "1"), NULL, 10);
  unsigned long long drop = num(argc, argv, "drop");
  const uint64_t t0 = 1000000000000ull; /* the process starts here */
  mprof_writer *w;
  if (mprof_writer_open(&w, argv[1], NULL) != 0) {
    fprintf(stderr, "capture_standin_trace: %s\n", mprof_error_last());
    return 1;
  }
  mprof_writer_meta(w, "tool", "capture_standin_trace");
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H100 (stand-in)");
  dev.cc_major = 9;
  dev.sm_count = 132;
  uint32_t d = 0, s = 0, k = 0, shape = 0;
  mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev);
  mprof_stream_record st = {d, 1, 7, mprof_writer_string(w, "")};
  mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name =
      mprof_writer_string(w, "_Z29vectorized_elementwise_kernelv");
  kr.device = d;
  mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = k;
  sh.grid[0] = sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 128;
  sh.block[1] = sh.block[2] = 1;
  mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh);

  /* A step every 100 us from 2 s on, a launch every 10 us inside it. */
  uint32_t step_name = mprof_writer_string(w, "step");
  uint32_t call_name = mprof_writer_string(w, "cudaLaunchKernel");
  unsigned long long total = steps * per_step, written = 0;
  uint32_t correlation = 1;
  uint64_t at = t0 + 2000000000ull;
  for (unsigned long long i = 0; i < steps; i++) {
    mprof_range_record r;
    memset(&r, 0, sizeof r);
    r.start = at;
    r.end = at + 10000 * per_step + 5000;
    r.name = step_name;
    r.thread_id = 42;
    mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r);
    for (unsigned long long j = 0; j < per_step; j++, correlation++) {
      if (written + drop >= total)
        break;
      uint64_t call = at + 1000 + 10000 * j;
      mprof_api_call_record c = {call, call + 500, correlation,
                                 42,   call_name,  MPROF_API_RUNTIME};
      mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c);
      mprof_launch_record l = {call + 2000, call + 8000, shape, s,
                               correlation, 0,           0};
      mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l);
      written++;
    }
    at += 10000 * per_step + 100000;
  }

  mprof_process_record p;
  memset(&p, 0, sizeof p);
  p.start = t0;
  p.end = at + 1000000;
  p.pid = 4242;
  p.rank = p.local_rank = MPROF_INDEX_NONE;
  p.host = mprof_writer_string(w, "standin");
  p.cmdline = mprof_writer_string(w, "python capture_loop.py");
  p.exit_kind = MPROF_EXIT_STATUS;
  p.stream_count = 1;
  p.device_count = 1;
  mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &p);
  const char *trigger = arg(argc, argv, "trigger", NULL);
  if (trigger) {
    mprof_capture_record c;
    memset(&c, 0, sizeof c);
    c.trigger = (uint32_t)strtoul(trigger, NULL, 10);
    c.skip = num(argc, argv, "skip");
    c.count = num(argc, argv, "count");
    c.recorded = num(argc, argv, "recorded");
    c.seen = num(argc, argv, "seen");
    c.end_reason = (uint32_t)num(argc, argv, "reason");
    c.delay = seconds(argc, argv, "delay");
    c.duration = seconds(argc, argv, "duration");
    c.max_bytes = num(argc, argv, "max");
    if (arg(argc, argv, "from", NULL))
      c.start = t0 + seconds(argc, argv, "from");
    if (arg(argc, argv, "to", NULL))
      c.end = t0 + seconds(argc, argv, "to");
    c.pieces = (uint32_t)(c.recorded ? c.recorded : 1);
    c.spec = mprof_writer_string(w, arg(argc, argv, "spec", ""));
    mprof_writer_append(w, NULL, MPROF_SECTION_CAPTURE, &c);
  }
  if (mprof_writer_finish(w) != 0) {
    fprintf(stderr, "capture_standin_trace: %s\n", mprof_error_last());
    return 1;
  }
  return 0;
}
