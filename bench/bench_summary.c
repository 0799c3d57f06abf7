/*
 * mprof bench — `summary` and `diff` on 1M-launch synthetic traces, beside
 * a plain read of the same file.
 *
 * Phases (each in its own child process, so peak RSS belongs to it alone;
 * the page cache is warmed first; the best of N runs is reported):
 *   read     read() the whole file in 1 MiB chunks
 *   map      mmap (MAP_POPULATE) and touch every page: the floor of any
 *            reader that keeps the trace in memory, as mprof_trace_open()
 *   open     mprof_trace_open() alone (map, checksums, validation): what
 *            summary costs before any analysis
 *   summary  open + join + diagnose + XML to /dev/null
 *   diff     open, join and diagnose both traces, diff, XML to /dev/null;
 *            once one after the other, once on two threads as `mprof diff`
 *            does
 *   set      the two traces as one run (`mprof summary A B`): open both,
 *            open them as a set (mprof_trace_open_merged(), a view over
 *            the two files), join, diagnose, XML to /dev/null; bench_set
 *            compares sets of N with their traces' summaries
 *
 * Goals (from the issue): summary within 3x of the plain read, with peak
 * RSS under 1.5x the file's size; diff within 2x of one summary.
 *
 * Usage: bench_summary [DIR] [LAUNCHES] [REPEATS]
 *
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <pthread.h>
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

static uint64_t open_only(const char *path) {
  mprof_trace *t;
  if (mprof_trace_open(&t, path, NULL))
    return 0;
  uint64_t size = mprof_trace_file_size(t);
  mprof_trace_free(t);
  return size;
}

static void die(const char *what) {
  fprintf(stderr, "bench_summary: %s: %s\n", what, mprof_error_last());
  exit(1);
}

typedef struct analysed {
  mprof_trace *trace;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
} analysed;

static void analyse(analysed *a, const char *path) {
  if (mprof_trace_open(&a->trace, path, NULL))
    die(path);
  if (mprof_join_build(&a->join, a->trace, NULL))
    die("join");
  if (mprof_diagnose(&a->diagnosis, a->join, NULL))
    die("diagnose");
}

static void release(analysed *a) {
  mprof_diagnosis_free(a->diagnosis);
  mprof_join_free(a->join);
  mprof_trace_free(a->trace);
}

static uint64_t summary(const char *path) {
  analysed a;
  analyse(&a, path);
  FILE *null = fopen("/dev/null", "w");
  if (mprof_diagnosis_write(null, a.diagnosis, NULL))
    die("write");
  fclose(null);
  uint64_t sum = mprof_join_kernel_time(a.join);
  release(&a);
  return sum;
}

/* `mprof summary A B`: the two as one run. */
static uint64_t set_summary(const char *a, const char *b) {
  mprof_trace *in[2];
  if (mprof_trace_open(&in[0], a, NULL) || mprof_trace_open(&in[1], b, NULL))
    die("set");
  analysed s;
  if (mprof_trace_open_merged(&s.trace, (const mprof_trace *const *)in, 2,
                              "set"))
    die("merge");
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
  if (mprof_join_build(&s.join, s.trace, NULL))
    die("join");
  if (mprof_diagnose(&s.diagnosis, s.join, NULL))
    die("diagnose");
  FILE *null = fopen("/dev/null", "w");
  if (mprof_diagnosis_write(null, s.diagnosis, NULL))
    die("write");
  fclose(null);
  uint64_t sum = mprof_join_kernel_time(s.join);
  release(&s);
  return sum;
}

typedef struct side {
  analysed a;
  const char *path;
} side;

static void *analyse_side(void *arg) {
  side *s = (side *)arg;
  analyse(&s->a, s->path);
  return NULL;
}

static uint64_t diff(const char *base, const char *candidate, int threaded) {
  side sa = {{NULL, NULL, NULL}, base}, sb = {{NULL, NULL, NULL}, candidate};
  pthread_t thread;
  if (threaded && pthread_create(&thread, NULL, analyse_side, &sb) == 0) {
    analyse_side(&sa);
    pthread_join(thread, NULL);
  } else {
    analyse_side(&sa);
    analyse_side(&sb);
  }
  analysed a = sa.a, b = sb.a;
  mprof_diff *d;
  if (mprof_diff_run(&d, a.diagnosis, b.diagnosis, NULL))
    die("diff");
  FILE *null = fopen("/dev/null", "w");
  if (mprof_diff_write(null, d, NULL, 10.0))
    die("write");
  fclose(null);
  uint64_t sum = mprof_diff_gate(d, 10.0);
  mprof_diff_free(d);
  release(&b);
  release(&a);
  return sum;
}

typedef struct phase_args {
  const char *a, *b;
  int which;
} phase_args;

static uint64_t phase_work(void *arg) {
  const phase_args *p = (const phase_args *)arg;
  switch (p->which) {
  case 6: return set_summary(p->a, p->b);
  case 5: return open_only(p->a);
  case 4: return diff(p->a, p->b, 1);
  case 3: return diff(p->a, p->b, 0);
  case 2: return summary(p->a);
  case 1: return bench_mmap_touch(p->a);
  default: return bench_plain_read(p->a);
  }
}

static bench_phase run_phase(const char *a, const char *b, int which,
                             int repeats) {
  phase_args args = {a, b, which};
  return bench_run_in_child(phase_work, &args, repeats);
}

static void make_trace(const char *path, uint64_t launches, double slowdown) {
  struct stat st;
  if (stat(path, &st) == 0)
    return;
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = launches;
  opts.streams = 8;
  opts.kernels = 32;
  opts.slowdown = slowdown;
  opts.slow_kernels = 1u << 3;
  if (mprof_synth_write(path, &opts) != 0)
    die(path);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  unsigned long long launches =
      argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  int repeats = argc > 3 ? atoi(argv[3]) : 5;
  if (repeats < 1)
    repeats = 1;
  char base[4096], candidate[4096];
  snprintf(base, sizeof base, "%s/bench-summary-%llu.mprof", dir, launches);
  snprintf(candidate, sizeof candidate, "%s/bench-summary-%llu-slow.mprof", dir,
           launches);
  make_trace(base, launches, 0.0);
  make_trace(candidate, launches, 0.2);
  struct stat st;
  stat(base, &st);
  double mb = (double)st.st_size / 1e6;
  double file_mib = (double)st.st_size / 1048576.0;
  bench_plain_read(base); /* warm the page cache */
  bench_plain_read(candidate);
  bench_phase plain = run_phase(base, NULL, 0, repeats);
  bench_phase map = run_phase(base, NULL, 1, repeats);
  bench_phase opened = run_phase(base, NULL, 5, repeats);
  bench_phase sum = run_phase(base, NULL, 2, repeats);
  bench_phase seq = run_phase(base, candidate, 3, repeats);
  bench_phase par = run_phase(base, candidate, 4, repeats);
  bench_phase set = run_phase(base, candidate, 6, repeats);
  printf("file              %s, %.1f MB, %llu launches\n", base, mb, launches);
  printf("plain read        %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         plain.seconds * 1e3, mb / plain.seconds, plain.max_rss_kb / 1024.0);
  printf("mmap + touch      %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         map.seconds * 1e3, mb / map.seconds, map.max_rss_kb / 1024.0);
  printf("trace open        %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         opened.seconds * 1e3, mb / opened.seconds, opened.max_rss_kb / 1024.0);
  printf("summary           %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         sum.seconds * 1e3, mb / sum.seconds, sum.max_rss_kb / 1024.0);
  printf("diff, one thread  %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         seq.seconds * 1e3, 2 * mb / seq.seconds, seq.max_rss_kb / 1024.0);
  printf("diff, two threads %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         par.seconds * 1e3, 2 * mb / par.seconds, par.max_rss_kb / 1024.0);
  printf("set of the two     %8.1f ms  %8.0f MB/s  peak RSS %7.1f MiB\n",
         set.seconds * 1e3, 2 * mb / set.seconds, set.max_rss_kb / 1024.0);
  double t_ratio = sum.seconds / plain.seconds;
  double m_ratio = sum.max_rss_kb / 1024.0 / file_mib;
  double d_ratio = par.seconds / sum.seconds;
  printf("summary time      %.2fx the plain read, %.2fx mmap + touch "
         "(goal <= 3x the read: %s)\n",
         t_ratio, sum.seconds / map.seconds, t_ratio <= 3.0 ? "met" : "MISSED");
  printf("summary analysis  %.1f ms on top of opening the trace (join, "
         "diagnose, XML)\n",
         (sum.seconds - opened.seconds) * 1e3);
  printf("summary memory    %.2fx the file size (goal < 1.5x: %s)\n", m_ratio,
         m_ratio < 1.5 ? "met" : "MISSED");
  printf("diff time         %.2fx one summary as mprof diff runs it, %.2fx "
         "on one thread (goal <= 2x: %s)\n",
         d_ratio, seq.seconds / sum.seconds, d_ratio <= 2.0 ? "met" : "MISSED");
  printf("set summary       %.2fx one summary for twice the launches "
         "(%.1f ms more than two summaries)\n",
         set.seconds / sum.seconds, (set.seconds - 2 * sum.seconds) * 1e3);
  return 0;
}
