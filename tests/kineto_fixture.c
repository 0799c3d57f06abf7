/*
 * kineto_fixture OUT.mprof: a trace for the Kineto export's step detection
 * (tests/cli/test_export_kineto.py), written with the public writer. One
 * device and stream; a warm-up launch of kernel C, then 6 steps of the
 * kernel sequence A B A C, each launch issued by a cudaLaunchKernel call on
 * thread 42, steps 1 ms apart; no NVTX ranges, so the steps can come only
 * from the repeating launch pattern. With --window, steps 2 to 5 are the
 * pieces of a capture window as the CUPTI producer writes them: ranges
 * "mprof window #1".."#4" of the domain "mprof" around each.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mprof/mprof.h"

#define CHECK(x)                                                               \
  do {                                                                         \
    if ((x) != 0) {                                                            \
      fprintf(stderr, "kineto_fixture: %s failed: %s\n", #x,                   \
              mprof_error_last());                                             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int window = argc == 3 && strcmp(argv[2], "--window") == 0;
  if (argc != 2 && !window) {
    fprintf(stderr, "usage: kineto_fixture OUT.mprof [--window]\n");
    return 2;
  }
  mprof_writer *w;
  CHECK(mprof_writer_open(&w, argv[1], NULL));
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H100 80GB HBM3");
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.warp_size = 32;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_sm = 2048;
  dev.max_blocks_per_sm = 32;
  dev.max_warps_per_sm = 64;
  dev.max_regs_per_block = 65536;
  dev.max_regs_per_sm = 65536;
  dev.max_shared_per_block = 232448;
  dev.max_shared_per_sm = 233472;
  dev.global_memory = 85520809984ull;
  uint32_t d, s, sh[3];
  CHECK(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev));
  mprof_stream_record st = {d, 1, 7, 0};
  CHECK(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st));
  static const char *const names[3] = {"_Z7kernelAv", "_Z7kernelBv",
                                       "_Z7kernelCv"};
  for (int i = 0; i < 3; i++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, names[i]);
    kr.device = d;
    kr.registers = 32;
    uint32_t k;
    CHECK(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr));
    mprof_shape_record shape;
    memset(&shape, 0, sizeof shape);
    shape.kernel = k;
    shape.grid[0] = 264, shape.grid[1] = shape.grid[2] = 1;
    shape.block[0] = 256, shape.block[1] = shape.block[2] = 1;
    CHECK(mprof_writer_intern(w, &sh[i], MPROF_SECTION_SHAPES, &shape));
  }
  static const int pattern[4] = {0, 1, 0, 2};
  uint32_t correlation = 1;
  uint64_t t = 1000000;
  for (int step = -1; step < 6; step++) {
    for (int j = 0; j < (step < 0 ? 1 : 4); j++) {
      int kernel = step < 0 ? 2 : pattern[j];
      uint64_t call = t + (uint64_t)j * 20000;
      mprof_api_call_record c = {call,
                                 call + 4000,
                                 correlation,
                                 42,
                                 mprof_writer_string(w, "cudaLaunchKernel"),
                                 MPROF_API_RUNTIME};
      CHECK(mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c));
      mprof_launch_record l = {call + 5000,
                               call + 5000 + 3000 + (uint64_t)kernel * 1000,
                               sh[kernel],
                               s,
                               correlation,
                               0,
                               0};
      CHECK(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l));
      correlation++;
    }
    if (window && step >= 1 && step <= 4) {
      char name[32];
      snprintf(name, sizeof name, "mprof window #%d", step);
      mprof_range_record r;
      memset(&r, 0, sizeof r);
      r.start = t - 1000;
      r.end = t + 4 * 20000 + 20000;
      r.name = mprof_writer_string(w, name);
      r.domain = mprof_writer_string(w, "mprof");
      r.thread_id = 42;
      CHECK(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r));
    }
    t += 1000000;
  }
  CHECK(mprof_writer_finish(w));
  return 0;
}
