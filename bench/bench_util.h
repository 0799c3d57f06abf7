/*
 * mprof bench — the clock and the baselines every benchmark compares with.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BENCH_UTIL_H
#define MPROF_BENCH_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The plain-read baseline: read() the file through a reused 1 MiB buffer,
 * touching every cache line. */
static inline uint64_t bench_plain_read(const char *path) {
  static unsigned char buf[1 << 20];
  int fd = open(path, O_RDONLY);
  uint64_t sum = 0;
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; i += 64)
      sum += buf[i];
  close(fd);
  return sum;
}

/* The cost of mapping the file at all: mmap and touch every page. */
static inline uint64_t bench_mmap_touch(const char *path) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  fstat(fd, &st);
  const unsigned char *p = (const unsigned char *)mmap(
      NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  uint64_t sum = 0;
  for (off_t i = 0; i < st.st_size; i += 4096)
    sum += p[i];
  munmap((void *)p, (size_t)st.st_size);
  return sum;
}

/* One phase of a benchmark: its best time, the peak RSS of the process
 * that ran it, and what the work returned (a checksum the caller may
 * compare across phases). */
typedef struct bench_phase {
  double seconds; /* best of the repeats; -1 when the child failed */
  long max_rss_kb;
  uint64_t check;
} bench_phase;

/* Run @p work(@p arg) @p repeats times in a forked child, so that each
 * phase starts from a fresh heap and reports its own peak RSS. */
static inline bench_phase bench_run_in_child(uint64_t (*work)(void *arg),
                                             void *arg, int repeats) {
  int pipefd[2];
  bench_phase r = {-1, 0, 0};
  if (pipe(pipefd) != 0)
    return r;
  pid_t pid = fork();
  if (pid == 0) {
    double best = 1e9;
    uint64_t check = 0;
    for (int i = 0; i < repeats; i++) {
      double t0 = bench_now();
      check = work(arg);
      double dt = bench_now() - t0;
      if (dt < best)
        best = dt;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    bench_phase out = {best, ru.ru_maxrss, check};
    if (write(pipefd[1], &out, sizeof out) != (ssize_t)sizeof out)
      _exit(1);
    _exit(0);
  }
  close(pipefd[1]);
  if (pid < 0 || read(pipefd[0], &r, sizeof r) != (ssize_t)sizeof r)
    r.seconds = -1;
  close(pipefd[0]);
  if (pid > 0)
    waitpid(pid, NULL, 0);
  return r;
}

#endif
