/*
 * mprof bench — writer append rate, alone and with several threads
 * appending to one writer at once (the producer's case: CUPTI buffer
 * callbacks and PC drains on different threads).
 *
 * Usage: bench_writer [RECORDS_PER_THREAD]
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"

typedef struct job {
  mprof_writer *w;
  uint32_t stream;
  uint64_t count;
} job;

static void *append(void *arg) {
  job *j = (job *)arg;
  for (uint64_t i = 0; i < j->count; i++) {
    mprof_launch_record l = {i * 10,      i * 10 + 7, 0, j->stream,
                             (uint32_t)i, 0,          0};
    mprof_writer_append(j->w, NULL, MPROF_SECTION_LAUNCHES, &l);
  }
  return NULL;
}

int main(int argc, char **argv) {
  uint64_t per_thread = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
  char path[] = "/tmp/bench-writer-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return 1;
  close(fd);
  for (int threads = 1; threads <= 8; threads *= 2) {
    mprof_writer *w;
    if (mprof_writer_open(&w, path, NULL) != 0) {
      fprintf(stderr, "bench_writer: %s\n", mprof_error_last());
      return 1;
    }
    mprof_kernel_record k;
    memset(&k, 0, sizeof k);
    k.device = MPROF_INDEX_NONE;
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    uint32_t index;
    mprof_writer_intern(w, &index, MPROF_SECTION_KERNELS, &k);
    mprof_writer_intern(w, &index, MPROF_SECTION_SHAPES, &sh);
    pthread_t tid[8];
    job jobs[8];
    for (int t = 0; t < threads; t++) {
      mprof_stream_record s = {MPROF_INDEX_NONE, 1, (uint32_t)t, 0};
      mprof_writer_intern(w, &jobs[t].stream, MPROF_SECTION_STREAMS, &s);
      jobs[t].w = w;
      jobs[t].count = per_thread;
    }
    double t0 = bench_now();
    for (int t = 0; t < threads; t++)
      pthread_create(&tid[t], NULL, append, &jobs[t]);
    for (int t = 0; t < threads; t++)
      pthread_join(tid[t], NULL);
    double t1 = bench_now();
    int rc = mprof_writer_finish(w);
    double t2 = bench_now();
    double total = (double)per_thread * threads;
    printf("%d thread%s: %6.1f M appends/s (%5.1f ns each), finish %6.1f ms, "
           "%s\n",
           threads, threads == 1 ? " " : "s", total / (t1 - t0) / 1e6,
           (t1 - t0) / total * 1e9, (t2 - t1) * 1e3, rc ? "FAILED" : "ok");
  }
  unlink(path);
  return 0;
}
