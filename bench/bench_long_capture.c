/*
 * mprof bench — a long capture through the CUPTI producer's translator:
 * memory and time of an hour-long run, without a GPU.
 *
 * The translator (producers/cupti/translate*.c) gets what CUPTI's activity
 * buffers would hand it over an hour: LAUNCHES kernel records (ten kernels
 * a training step) and one NVTX range a step named after the step ("step
 * 123456 forward+backward", so NAMES distinct names), nested in an "epoch"
 * range, with a checkpoint every simulated second (3600) as the drain
 * thread commits them. The process's peak RSS (getrusage) is what the
 * profiled program would carry for the producer. A second part opens OPEN
 * start/end ranges at once (requests in flight) and ends them in the order
 * they started: the cost of finding a range's START when its END comes.
 *
 * Usage: bench_long_capture [LAUNCHES [NAMES [OPEN]]]
 *        (defaults 10000000 1000000 100000; the trace goes to $TMPDIR)
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/error.h"
#include "mprof/writer.h"
#include "translate.h"

#define CHECKPOINTS 3600u /* one a second for an hour */

/* CPU time of the process so far, user + system, seconds. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts,
                                    const char *name) {
  CUpti_ActivityMarker2 m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = (CUpti_ActivityFlag)flags;
  m.id = id;
  m.timestamp = ts;
  m.name = name;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 1;
  m.objectId.pt.threadId = 4242;
  return m;
}

static int open_translator(const char *path, mprof_writer **w,
                           mprof_cupti_translate **t) {
  if (mprof_writer_open(w, path, NULL) != 0 ||
      mprof_cupti_translate_new(t, *w, NULL) != 0) {
    fprintf(stderr, "bench_long_capture: %s\n", mprof_error_last());
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  uint64_t launches = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
  uint64_t names = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  uint64_t open_at_once = argc > 3 ? strtoull(argv[3], NULL, 10) : 100000;
  if (!names || launches < names) {
    fprintf(stderr, "bench_long_capture: need LAUNCHES >= NAMES > 0\n");
    return 2;
  }
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/bench-long-capture-%ld.mprof",
           dir && *dir ? dir : "/tmp", (long)getpid());
  double rss_start = peak_rss_mib();

  /* ---- an hour of training steps ---- */
  mprof_writer *w = NULL;
  mprof_cupti_translate *t = NULL;
  if (open_translator(path, &w, &t) != 0)
    return 1;
  static const char *const kernels[10] = {
      "_Z6embedPKiPf",   "_Z9layernormPfPKf", "_Z4gemmPKfS0_Pf",
      "_Z7softmaxPf",    "_Z4gemmPKfS0_Pf",   "_Z4geluPf",
      "_Z4gemmPKfS0_Pf", "_Z7reducePKfPf",    "_Z4adamPfPKf",
      "_Z8zerogradPf"};
  uint64_t per_step = launches / names;
  uint64_t steps_per_checkpoint = names / CHECKPOINTS ? names / CHECKPOINTS : 1;
  uint64_t ts = 1000000000ull, launched = 0;
  uint32_t id = 1;
  char name[96];
  CUpti_ActivityMarker2 epoch =
      marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id++, ts, "epoch");
  mprof_cupti_translate_marker(t, &epoch);
  double started = bench_now(), cpu_started = cpu_seconds();
  for (uint64_t step = 0; step < names; step++) {
    snprintf(name, sizeof name, "step %llu forward+backward",
             (unsigned long long)step);
    uint32_t range = id++;
    CUpti_ActivityMarker2 push =
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, range, ts, name);
    mprof_cupti_translate_marker(t, &push);
    uint64_t count = step + 1 == names ? launches - launched : per_step;
    for (uint64_t k = 0; k < count; k++, launched++) {
      CUpti_ActivityKernel10 kr;
      memset(&kr, 0, sizeof kr);
      kr.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      kr.name = kernels[k % 10];
      kr.contextId = 1;
      kr.streamId = 7;
      kr.start = ts;
      kr.end = ts + 300;
      ts += 360;
      kr.correlationId = (uint32_t)launched + 1;
      kr.gridX = 132;
      kr.gridY = kr.gridZ = 1;
      kr.blockX = 256;
      kr.blockY = kr.blockZ = 1;
      kr.registersPerThread = 32;
      mprof_cupti_translate_kernel(t, &kr);
    }
    CUpti_ActivityMarker2 pop =
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, range, ts, NULL);
    mprof_cupti_translate_marker(t, &pop);
    if ((step + 1) % steps_per_checkpoint == 0 &&
        mprof_cupti_translate_checkpoint(t, ts) != 0) {
      fprintf(stderr, "bench_long_capture: %s\n", mprof_error_last());
      return 1;
    }
  }
  double captured = bench_now(), cpu_captured = cpu_seconds();
  double rss_capture = peak_rss_mib();
#ifdef MPROF_WRITER_STRING_STATS_VERSION
  mprof_writer_string_stats strings;
  memset(&strings, 0, sizeof strings);
  strings.version = MPROF_WRITER_STRING_STATS_VERSION;
  mprof_writer_get_string_stats(w, &strings);
#endif
  if (mprof_cupti_translate_finish(t) != 0) {
    fprintf(stderr, "bench_long_capture: %s\n", mprof_error_last());
    return 1;
  }
  double finished = bench_now();
  mprof_cupti_translate_free(t);
  struct stat sb;
  stat(path, &sb);
  unlink(path);
  printf("capture: %llu launches, %llu ranges of distinct names, %u "
         "checkpoints: %.2f s wall, %.2f s CPU (%.0f ns CPU a launch), "
         "finish %.2f s\n",
         (unsigned long long)launched, (unsigned long long)names,
         (unsigned)(names / steps_per_checkpoint), captured - started,
         cpu_captured - cpu_started,
         (cpu_captured - cpu_started) * 1e9 / (double)launched,
         finished - captured);
  printf("peak RSS: %.1f MiB at start, %.1f MiB after the capture, %.1f MiB "
         "after finish; trace %.1f MB\n",
         rss_start, rss_capture, peak_rss_mib(), (double)sb.st_size / 1e6);
#ifdef MPROF_WRITER_STRING_STATS_VERSION
  printf("strings: %llu stored, %.1f MB, %llu remembered of %llu, %llu "
         "fresh starts, %.1f MiB held\n",
         (unsigned long long)strings.stored, (double)strings.bytes / 1e6,
         (unsigned long long)strings.tracked,
         (unsigned long long)strings.unique_cap,
         (unsigned long long)strings.generations,
         (double)strings.memory_bytes / (1024.0 * 1024.0));
#endif

  /* ---- many ranges open at once ---- */
  if (!open_at_once)
    return 0;
  if (open_translator(path, &w, &t) != 0)
    return 1;
  started = bench_now();
  cpu_started = cpu_seconds();
  for (uint64_t i = 0; i < open_at_once; i++) {
    CUpti_ActivityMarker2 m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START,
                                     (uint32_t)i + 1, 1000 + i, "request");
    mprof_cupti_translate_marker(t, &m);
  }
  for (uint64_t i = 0; i < open_at_once; i++) {
    CUpti_ActivityMarker2 m = marker(CUPTI_ACTIVITY_FLAG_MARKER_END,
                                     (uint32_t)i + 1, 1000000 + i, NULL);
    mprof_cupti_translate_marker(t, &m);
  }
  double ended = bench_now(), cpu_ended = cpu_seconds();
  mprof_cupti_translate_finish(t);
  mprof_cupti_translate_free(t);
  unlink(path);
  printf("open ranges: %llu open at once, ended in start order: %.3f s "
         "wall, %.3f s CPU (%.0f ns CPU a range)\n",
         (unsigned long long)open_at_once, ended - started,
         cpu_ended - cpu_started,
         (cpu_ended - cpu_started) * 1e9 / (double)open_at_once);
  return 0;
}
