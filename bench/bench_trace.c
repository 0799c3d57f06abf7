/*
 * mprof bench — open + full scan of a 1M-launch trace, beside a plain read
 * of the same file.
 *
 * Each measurement runs in its own child process so peak RSS (getrusage
 * ru_maxrss) belongs to that phase alone. The file is read once first so
 * both phases start from a warm page cache.
 *
 * Usage: bench_trace [TRACE] [LAUNCHES]
 *
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"
#include "mprof/synth.h"

static uint64_t open_and_scan(const char *path) {
  mprof_trace *t;
  if (mprof_trace_open(&t, path, NULL) != 0) {
    fprintf(stderr, "bench_trace: %s\n", mprof_error_last());
    exit(1);
  }
  size_t streams;
  uint64_t sum = 0;
  mprof_trace_streams(t, &streams);
  /* Walk every launch in per-stream time order, as a viewer or summary. */
  for (uint32_t s = 0; s < streams; s++) {
    size_t count = mprof_trace_stream_launch_count(t, s);
    for (size_t p = 0; p < count; p++) {
      const mprof_launch_record *l = mprof_trace_stream_launch(t, s, p);
      sum += l->end - l->start + l->shape;
    }
  }
  mprof_trace_free(t);
  return sum;
}

typedef struct phase_args {
  const char *path;
  int which;
} phase_args;

static uint64_t phase_work(void *arg) {
  const phase_args *p = (const phase_args *)arg;
  return p->which == 2   ? open_and_scan(p->path)
         : p->which == 1 ? bench_mmap_touch(p->path)
                         : bench_plain_read(p->path);
}

static bench_phase run_phase(const char *path, int which, int repeats) {
  phase_args args = {path, which};
  return bench_run_in_child(phase_work, &args, repeats);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench-1m.mprof";
  unsigned long long launches =
      argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  struct stat st;
  if (stat(path, &st) != 0) {
    mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
    opts.launches = launches;
    opts.streams = 8;
    opts.kernels = 32;
    if (mprof_synth_write(path, &opts) != 0) {
      fprintf(stderr, "bench_trace: %s\n", mprof_error_last());
      return 1;
    }
    stat(path, &st);
  }
  double mb = (double)st.st_size / 1e6;
  bench_plain_read(path); /* warm the page cache */
  bench_phase plain = run_phase(path, 0, 5);
  bench_phase mapped = run_phase(path, 1, 5);
  bench_phase scan = run_phase(path, 2, 5);
  printf("file            %s, %.1f MB\n", path, mb);
  printf("plain read      %7.1f ms  %8.0f MB/s  peak RSS %6.1f MB\n",
         plain.seconds * 1e3, mb / plain.seconds, plain.max_rss_kb / 1024.0);
  printf("mmap + touch    %7.1f ms  %8.0f MB/s  peak RSS %6.1f MB\n",
         mapped.seconds * 1e3, mb / mapped.seconds, mapped.max_rss_kb / 1024.0);
  printf("open + scan     %7.1f ms  %8.0f MB/s  peak RSS %6.1f MB\n",
         scan.seconds * 1e3, mb / scan.seconds, scan.max_rss_kb / 1024.0);
  printf("ratio           %.2fx the plain read, %.2fx mmap + touch; "
         "peak RSS = file + %.1f MB\n",
         scan.seconds / plain.seconds, scan.seconds / mapped.seconds,
         scan.max_rss_kb / 1024.0 - (double)st.st_size / 1048576.0);
  return 0;
}
