/*
 * mprof bench — `mprof export` of a 1M-launch trace: the Perfetto protobuf,
 * the legacy Trace Event JSON and the SQLite database, their sizes and the
 * time each takes.
 *
 * The trace is made here: LAUNCHES launches of 32 kernels with long
 * PyTorch-style names over 4 streams, each issued by a cudaLaunchKernel
 * call on one host thread (with its correlation id, so every launch has a
 * flow), and an NVTX range around every 100 launches. It is opened, joined
 * and diagnosed once; each export is then timed alone (the best of
 * REPEATS), as `mprof export` runs it after the analysis `summary` shares.
 *
 * Goal (from the issue): the Perfetto protobuf of 1M launches within
 * 100 MB and 2 s.
 *
 * Usage: bench_export [DIR] [LAUNCHES] [REPEATS] [FORMAT]
 * (FORMAT: perfetto, chrome or sqlite, to time only that one)
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"

static void die(const char *what) {
  fprintf(stderr, "bench_export: %s: %s\n", what, mprof_error_last());
  exit(1);
}

static void append(mprof_writer *w, uint32_t *index, mprof_section_type type,
                   const void *record) {
  if (mprof_writer_append(w, index, type, record))
    die("writing the trace");
}

static void write_trace(const char *path, uint64_t launches) {
  mprof_writer *w;
  if (mprof_writer_open(&w, path, NULL))
    die(path);
  mprof_device_record d;
  memset(&d, 0, sizeof d);
  d.name = mprof_writer_string(w, "NVIDIA H200");
  d.cc_major = 9;
  d.sm_count = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_warps_per_sm = 64;
  d.max_regs_per_block = 65536;
  d.max_regs_per_sm = 65536;
  d.max_shared_per_block = 232448;
  d.max_shared_per_sm = 233472;
  d.core_clock_khz = 1980000;
  uint32_t device;
  append(w, &device, MPROF_SECTION_DEVICES, &d);
  uint32_t streams[4];
  for (uint32_t s = 0; s < 4; s++) {
    mprof_stream_record st = {device, 1, 7 + 6 * s, 0};
    append(w, &streams[s], MPROF_SECTION_STREAMS, &st);
  }
  uint32_t shapes[32];
  for (uint32_t k = 0; k < 32; k++) {
    char mangled[64], name[512];
    snprintf(mangled, sizeof mangled, "_Z12bench_kernel%uPfS_i", k);
    snprintf(name, sizeof name,
             "void at::native::vectorized_elementwise_kernel<4, "
             "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
             "c10::BFloat16, at::native::binary_internal::MulFunctor<float> "
             ">, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<"
             "c10::BFloat16, c10::BFloat16, c10::BFloat16, "
             "at::native::binary_internal::MulFunctor<float> >, "
             "std::array<char*, 3ul>) #%u",
             k);
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, mangled);
    kr.demangled_name = mprof_writer_string(w, name);
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = device;
    kr.registers = 32 + k;
    uint32_t kernel;
    append(w, &kernel, MPROF_SECTION_KERNELS, &kr);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = kernel;
    sh.grid[0] = 1024 + 8 * k;
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 256;
    sh.block[1] = sh.block[2] = 1;
    append(w, &shapes[k], MPROF_SECTION_SHAPES, &sh);
  }
  uint32_t launch_name = mprof_writer_string(w, "cudaLaunchKernel");
  uint32_t step_name = mprof_writer_string(w, "step");
  uint64_t t = 1000000000ull, seed = 1;
  for (uint64_t i = 0; i < launches; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t duration = 2000 + (seed >> 33) % 18000;
    uint32_t correlation = (uint32_t)i + 1;
    mprof_api_call_record call = {t,    t + 3000,    correlation,
                                  4242, launch_name, MPROF_API_RUNTIME};
    append(w, NULL, MPROF_SECTION_API_CALLS, &call);
    mprof_launch_record l;
    memset(&l, 0, sizeof l);
    l.start = t + 5000;
    l.end = l.start + duration;
    l.shape = shapes[i % 32];
    l.stream = streams[(i / 8) % 4];
    l.correlation_id = correlation;
    append(w, NULL, MPROF_SECTION_LAUNCHES, &l);
    if (i % 100 == 0) {
      mprof_range_record r = {t, t + 100 * 4000 - 10, step_name, 0, 4242, 1, 0,
                              0};
      append(w, NULL, MPROF_SECTION_RANGES, &r);
    }
    t += 4000;
  }
  if (mprof_writer_finish(w))
    die("finishing the trace");
}

/* CPU seconds of this process: the figure a loaded machine leaves honest. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static off_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : -1;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  uint64_t launches = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  int repeats = argc > 3 ? atoi(argv[3]) : 3;
  const char *only = argc > 4 ? argv[4] : NULL;
  char trace_path[4096], out[4096];
  snprintf(trace_path, sizeof trace_path, "%s/bench_export.mprof", dir);
  write_trace(trace_path, launches);
  mprof_trace *trace;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
  double t0 = bench_now();
  if (mprof_trace_open(&trace, trace_path, NULL) ||
      mprof_join_build(&join, trace, NULL) ||
      mprof_diagnose(&diagnosis, join, NULL))
    die("analysis");
  double analysis = bench_now() - t0;
  printf("trace: %llu launches, %llu API calls, %llu NVTX ranges; %.1f MB; "
         "open + join + diagnose %.3f s\n",
         (unsigned long long)launches, (unsigned long long)launches,
         (unsigned long long)(launches + 99) / 100,
         (double)file_size(trace_path) / 1e6, analysis);
  static const struct {
    const char *name, *ext;
    unsigned format;
  } formats[] = {{"perfetto", "pftrace", MPROF_EXPORT_PERFETTO},
                 {"chrome", "json", MPROF_EXPORT_TRACE_EVENTS},
                 {"sqlite", "sqlite", MPROF_EXPORT_SQLITE}};
  const mprof_diagnosis *set[1] = {diagnosis};
  printf("%-10s %12s %10s %10s %14s\n", "format", "size (MB)", "wall (s)",
         "CPU (s)", "bytes/launch");
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    if (only && strcmp(only, formats[f].name) != 0)
      continue;
    snprintf(out, sizeof out, "%s/bench_export.%s", dir, formats[f].ext);
    mprof_export_options eo = MPROF_EXPORT_OPTIONS_INIT;
    eo.format = formats[f].format;
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < repeats; r++) {
      double s = bench_now(), c = cpu_now();
      int rc = mprof_export_file(out, set, 1, &eo, NULL);
      double e = bench_now() - s, ce = cpu_now() - c;
      if (rc == MPROF_EUNSUPPORTED)
        break;
      if (rc)
        die(formats[f].name);
      best = e < best ? e : best;
      best_cpu = ce < best_cpu ? ce : best_cpu;
    }
    if (best > 1e29) {
      printf("%-10s %12s\n", formats[f].name, "(not built)");
      continue;
    }
    off_t size = file_size(out);
    printf("%-10s %12.1f %10.3f %10.3f %14.1f\n", formats[f].name,
           (double)size / 1e6, best, best_cpu, (double)size / (double)launches);
    unlink(out);
  }
  mprof_diagnosis_free(diagnosis);
  mprof_join_free(join);
  mprof_trace_free(trace);
  unlink(trace_path);
  return 0;
}
