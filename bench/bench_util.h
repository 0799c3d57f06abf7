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
#include <sys/stat.h>
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

#endif
