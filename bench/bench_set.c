/*
 * mprof bench — a summary of a set of traces (`mprof summary A B ...`, one
 * trace per rank of a run) against the summaries of its traces alone.
 *
 * Inputs: N synthetic traces of L launches each (the generator behind
 * `mprof synth`, 8 streams and 32 kernels, each its own process: pid,
 * host and rank in META, its own timing seed), written once into DIR.
 *
 * Phases (each in its own child process, page cache warm, best of R):
 *   singles       each trace alone: open, join, diagnose, XML to /dev/null;
 *                 the N times added up
 *   set, 1 thread open the N traces, open them as a set
 *                 (mprof_trace_open_merged()), join, diagnose, XML
 *   set, T threads the same with mprof_join_options.threads = T (this
 *                 machine's cores)
 *   scratch file  what a set cost before it was a view: the N traces
 *                 merged into a scratch file (mprof_trace_merge()), that
 *                 file opened (without checksums) and summarised
 *
 * Goal (issue 36): the set's summary within 1.2x of the singles' sum.
 *
 * Usage: bench_set [DIR] [TRACES] [LAUNCHES] [REPEATS]
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"
#include "mprof/synth.h"

static void die(const char *what) {
  fprintf(stderr, "bench_set: %s: %s\n", what, mprof_error_last());
  exit(1);
}

/* Join, diagnose and write @p t's summary to /dev/null. */
static uint64_t summarise(const mprof_trace *t, unsigned threads) {
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.threads = threads;
  mprof_join *j;
  mprof_diagnosis *d;
  if (mprof_join_build(&j, t, &jo))
    die("join");
  if (mprof_diagnose(&d, j, NULL))
    die("diagnose");
  FILE *null = fopen("/dev/null", "w");
  if (mprof_diagnosis_write(null, d, NULL))
    die("write");
  fclose(null);
  uint64_t sum = mprof_join_kernel_time(j);
  mprof_diagnosis_free(d);
  mprof_join_free(j);
  return sum;
}

static uint64_t singles(char **paths, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    mprof_trace *t;
    if (mprof_trace_open(&t, paths[i], NULL))
      die(paths[i]);
    sum += summarise(t, 1);
    mprof_trace_free(t);
  }
  return sum;
}

static mprof_trace **open_all(char **paths, size_t n) {
  mprof_trace **in = (mprof_trace **)calloc(n, sizeof *in);
  for (size_t i = 0; in && i < n; i++)
    if (mprof_trace_open(&in[i], paths[i], NULL))
      die(paths[i]);
  return in;
}

static uint64_t set_summary(char **paths, size_t n, unsigned threads) {
  mprof_trace **in = open_all(paths, n);
  mprof_trace *set;
  if (mprof_trace_open_merged(&set, (const mprof_trace *const *)in, n, "set"))
    die("set");
  for (size_t i = 0; i < n; i++)
    mprof_trace_free(in[i]);
  free(in);
  uint64_t sum = summarise(set, threads);
  mprof_trace_free(set);
  return sum;
}

static uint64_t scratch_summary(char **paths, size_t n, const char *scratch) {
  mprof_trace **in = open_all(paths, n);
  if (mprof_trace_merge((const mprof_trace *const *)in, n, scratch))
    die("merge");
  for (size_t i = 0; i < n; i++)
    mprof_trace_free(in[i]);
  free(in);
  mprof_open_options opts = MPROF_OPEN_OPTIONS_INIT;
  opts.flags = MPROF_OPEN_NO_CHECKSUMS;
  mprof_trace *t;
  if (mprof_trace_open(&t, scratch, &opts))
    die(scratch);
  unlink(scratch);
  uint64_t sum = summarise(t, 1);
  mprof_trace_free(t);
  return sum;
}

enum { SINGLES, SET_ONE, SET_ALL, SCRATCH };

typedef struct phase_args {
  int which;
  char **paths;
  size_t n;
  unsigned threads;
  const char *scratch;
} phase_args;

static uint64_t phase_work(void *arg) {
  const phase_args *p = (const phase_args *)arg;
  return p->which == SINGLES   ? singles(p->paths, p->n)
         : p->which == SET_ONE ? set_summary(p->paths, p->n, 1)
         : p->which == SET_ALL ? set_summary(p->paths, p->n, p->threads)
                               : scratch_summary(p->paths, p->n, p->scratch);
}

static bench_phase run_phase(int which, char **paths, size_t n,
                             unsigned threads, const char *scratch,
                             int repeats) {
  phase_args args = {which, paths, n, threads, scratch};
  return bench_run_in_child(phase_work, &args, repeats);
}

static void make_trace(const char *path, uint64_t launches, size_t rank) {
  struct stat st;
  if (stat(path, &st) == 0)
    return;
  char pid[24], r[24];
  snprintf(pid, sizeof pid, "%zu", 1000 + rank);
  snprintf(r, sizeof r, "%zu", rank);
  const char *meta[] = {"pid", pid, "host", "node1", "rank", r};
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = launches;
  opts.streams = 8;
  opts.kernels = 32;
  opts.timing_seed = 100 + rank;
  opts.meta = meta;
  opts.meta_count = 3;
  if (mprof_synth_write(path, &opts) != 0)
    die(path);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 8;
  unsigned long long launches = argc > 3 ? strtoull(argv[3], NULL, 10) : 250000;
  int repeats = argc > 4 ? atoi(argv[4]) : 5;
  if (repeats < 1)
    repeats = 1;
  if (n < 1)
    n = 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned threads = cpus > 0 ? (unsigned)cpus : 1;
  char **paths = (char **)calloc(n, sizeof *paths);
  double mb = 0;
  for (size_t i = 0; i < n; i++) {
    paths[i] = (char *)malloc(4096);
    snprintf(paths[i], 4096, "%s/bench-set-%llu-rank%zu.mprof", dir, launches,
             i);
    make_trace(paths[i], launches, i);
    struct stat st;
    stat(paths[i], &st);
    mb += (double)st.st_size / 1e6;
    bench_plain_read(paths[i]); /* warm the page cache */
  }
  char scratch[4096];
  snprintf(scratch, sizeof scratch, "%s/bench-set-scratch-%d.mprof", dir,
           (int)getpid());
  bench_phase one = run_phase(SINGLES, paths, n, 1, NULL, repeats);
  bench_phase set1 = run_phase(SET_ONE, paths, n, 1, NULL, repeats);
  bench_phase setn = run_phase(SET_ALL, paths, n, threads, NULL, repeats);
  bench_phase old = run_phase(SCRATCH, paths, n, 1, scratch, repeats);
  if (one.check != set1.check || one.check != setn.check ||
      one.check != old.check) {
    fprintf(stderr, "bench_set: the set's kernel time differs from the sum "
                    "of its traces'\n");
    return 1;
  }
  printf("set               %zu traces of %llu launches, %.1f MB in all\n", n,
         launches, mb);
  printf("singles (sum)     %8.1f ms  %6.1f ms a trace  peak RSS %7.1f MiB\n",
         one.seconds * 1e3, one.seconds * 1e3 / (double)n,
         one.max_rss_kb / 1024.0);
  printf("set, 1 thread     %8.1f ms  %6.1f ms a trace  peak RSS %7.1f MiB\n",
         set1.seconds * 1e3, set1.seconds * 1e3 / (double)n,
         set1.max_rss_kb / 1024.0);
  printf("set, %2u threads   %8.1f ms  %6.1f ms a trace  peak RSS %7.1f MiB\n",
         threads, setn.seconds * 1e3, setn.seconds * 1e3 / (double)n,
         setn.max_rss_kb / 1024.0);
  printf("scratch file      %8.1f ms  %6.1f ms a trace  peak RSS %7.1f MiB\n",
         old.seconds * 1e3, old.seconds * 1e3 / (double)n,
         old.max_rss_kb / 1024.0);
  double ratio = set1.seconds / one.seconds;
  printf("set summary       %.2fx the sum of single summaries on 1 thread, "
         "%.2fx on %u (goal <= 1.2x: %s); the scratch file took %.2fx\n",
         ratio, setn.seconds / one.seconds, threads,
         ratio <= 1.2 ? "met" : "MISSED", old.seconds / one.seconds);
  for (size_t i = 0; i < n; i++)
    free(paths[i]);
  free(paths);
  return 0;
}
