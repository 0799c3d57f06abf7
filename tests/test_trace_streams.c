/*
 * mprof tests — traces written by several threads and processes: concurrent
 * appends, streamed flushes cut at every point, exclusive writers, the
 * process keys of a trace and the merge of a run's traces by their clock
 * anchors.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "future_trace.h"
#include "analysis_util.h"
#include "test_util.h"

#include "mprof/mprof.h"
#include "mprof/synth.h"

typedef struct thread_job {
  mprof_writer *w;
  uint32_t stream;
  uint32_t shape;
} thread_job;

#define THREAD_LAUNCHES 50000

static void *append_launches(void *arg) {
  thread_job *job = (thread_job *)arg;
  for (uint32_t i = 0; i < THREAD_LAUNCHES; i++) {
    mprof_launch_record l = {(uint64_t)i * 10,
                             (uint64_t)i * 10 + 5,
                             job->shape,
                             job->stream,
                             i,
                             0,
                             0};
    if (mprof_writer_append(job->w, NULL, MPROF_SECTION_LAUNCHES, &l) != 0)
      return (void *)1;
  }
  return NULL;
}

static void test_concurrent_appends(void **state) {
  (void)state;
  const char *path = test_path("threads.mprof");
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.buffer_size = 4096; /* force many spills while threads race */
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, &opts), 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.device = MPROF_INDEX_NONE;
  uint32_t ki, shi;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  pthread_t threads[4];
  thread_job jobs[4];
  for (uint32_t i = 0; i < 4; i++) {
    mprof_stream_record s = {MPROF_INDEX_NONE, 1, 100 + i, 0};
    assert_int_equal(
        mprof_writer_intern(w, &jobs[i].stream, MPROF_SECTION_STREAMS, &s), 0);
    jobs[i].w = w;
    jobs[i].shape = shi;
    assert_int_equal(
        pthread_create(&threads[i], NULL, append_launches, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    void *ret;
    pthread_join(threads[i], &ret);
    assert_null(ret);
  }
  assert_int_equal(mprof_writer_count(w, MPROF_SECTION_LAUNCHES),
                   4 * THREAD_LAUNCHES);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  for (uint32_t s = 0; s < 4; s++) {
    assert_int_equal(mprof_trace_stream_launch_count(t, s), THREAD_LAUNCHES);
    /* Every record of every thread arrived whole and in its own order. */
    for (size_t p = 0; p < THREAD_LAUNCHES; p++) {
      const mprof_launch_record *l = mprof_trace_stream_launch(t, s, p);
      assert_int_equal(l->correlation_id, p);
      assert_int_equal(l->end, l->start + 5);
    }
  }
  mprof_trace_free(t);
  unlink(path);
}

/* A streamed capture: ROUNDS checkpoints, each after PER_ROUND more
 * launches (and a memop, a new kernel name and a drop), with the devices
 * given as a snapshot as a producer does. The streamed file is copied
 * before finish, as a killed process would leave it; *ends receives the
 * file size after each checkpoint. */
#define ROUNDS 5
#define PER_ROUND 300
static unsigned char *stream_capture(const char *path, size_t *size,
                                     size_t ends[ROUNDS]) {
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.buffer_size = 4096; /* chunks also between checkpoints */
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, &opts), 0);
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  assert_int_equal(mprof_writer_meta(w, "tool", "test"), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.sm_count = 132;
  mprof_stream_record st = {0, 1, 7, 0};
  uint32_t stream;
  assert_int_equal(mprof_writer_intern(w, &stream, MPROF_SECTION_STREAMS, &st),
                   0);
  for (uint32_t round = 0; round < ROUNDS; round++) {
    char name[32];
    snprintf(name, sizeof name, "_Z6kernel%uv", round);
    mprof_kernel_record k;
    memset(&k, 0, sizeof k);
    k.mangled_name = mprof_writer_string(w, name);
    k.device = 0;
    uint32_t ki, shi;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = 132;
    assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh),
                     0);
    for (uint32_t i = 0; i < PER_ROUND; i++) {
      uint64_t t0 = 1000000ull * round + 100ull * i;
      mprof_launch_record l = {t0, t0 + 50, shi, stream, round * PER_ROUND + i,
                               0,  0};
      assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                       0);
    }
    mprof_memop_record mo;
    memset(&mo, 0, sizeof mo);
    mo.start = 1000000ull * round;
    mo.end = mo.start + 10;
    mo.kind = MPROF_MEMOP_MEMCPY;
    mo.src_device = mo.dst_device = MPROF_INDEX_NONE;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo),
                     0);
    assert_int_equal(mprof_writer_drop(w, MPROF_DROP_ACTIVITY_NO_TIMESTAMP,
                                       MPROF_INDEX_NONE, 1),
                     0);
    assert_int_equal(mprof_writer_snapshot(w, MPROF_SECTION_DEVICES, &dev, 1),
                     0);
    assert_int_equal(mprof_writer_checkpoint(w, 5000000ull + round), 0);
    struct stat sb;
    assert_int_equal(stat(partial, &sb), 0);
    ends[round] = (size_t)sb.st_size;
  }
  /* More launches that no checkpoint commits. */
  for (uint32_t i = 0; i < 2000; i++) {
    mprof_launch_record l = {
        9000000ull + i, 9000000ull + i + 1, 0, stream, 0, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  unsigned char *data = test_read_file(partial, size);
  assert_non_null(data);
  mprof_writer_abort(w);
  return data;
}

static void test_cut_at_every_flush_opens_partial(void **state) {
  (void)state;
  const char *path = test_path("stream.mprof");
  const char *cut = test_path("stream-cut.mprof");
  size_t size = 0, ends[ROUNDS];
  unsigned char *data = stream_capture(path, &size, ends);
  assert_true(size > ends[ROUNDS - 1]); /* uncommitted chunks followed */
  mprof_trace *t = NULL;
  /* Cut before the first checkpoint: nothing to read, and it says why. */
  assert_int_equal(test_write_file(cut, data, ends[0] - 1), 0);
  assert_int_equal(mprof_trace_open(&t, cut, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "before its first checkpoint"));
  /* Cut at each checkpoint, and anywhere up to the next one: the trace
   * holds exactly the rounds committed before the cut. */
  for (size_t round = 0; round < ROUNDS; round++) {
    size_t next = round + 1 < ROUNDS ? ends[round + 1] : size;
    size_t cuts[] = {ends[round], ends[round] + 1, (ends[round] + next) / 2,
                     next - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
      assert_int_equal(test_write_file(cut, data, cuts[c]), 0);
      int rc = mprof_trace_open(&t, cut, NULL);
      if (rc)
        fail_msg("cut at %zu: %s", cuts[c], mprof_error_last());
      size_t n;
      mprof_trace_launches(t, &n);
      assert_int_equal(n, (round + 1) * PER_ROUND);
      mprof_trace_memops(t, &n);
      assert_int_equal(n, round + 1);
      mprof_trace_kernels(t, &n);
      assert_int_equal(n, round + 1);
      const mprof_device_record *d = mprof_trace_devices(t, &n);
      assert_int_equal(n, 1);
      assert_int_equal(d[0].sm_count, 132);
      assert_int_equal(
          mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_NO_TIMESTAMP),
          round + 1);
      uint64_t covered = 0;
      assert_int_equal(mprof_trace_partial(t, &covered), 1);
      char expect[32];
      snprintf(expect, sizeof expect, "%zu", round + 1);
      assert_string_equal(mprof_trace_meta(t, "capture.checkpoints"), expect);
      snprintf(expect, sizeof expect, "%llu", 5000000ull + round);
      assert_string_equal(mprof_trace_meta(t, "capture.checkpoint_ns"), expect);
      assert_string_equal(mprof_trace_meta(t, "tool"), "test");
      /* The last kernel name of the round resolves. */
      const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
      char name[32];
      snprintf(name, sizeof name, "_Z6kernel%zuv", round);
      assert_string_equal(mprof_trace_string(t, k[round].mangled_name), name);
      mprof_trace_free(t);
    }
  }
  /* A rewrite makes it a finished file that keeps the partial marks. */
  const char *fixed = test_path("stream-fixed.mprof");
  assert_int_equal(test_write_file(cut, data, ends[2]), 0);
  assert_int_equal(mprof_trace_open(&t, cut, NULL), 0);
  assert_int_equal(mprof_trace_rewrite(t, fixed, 0), 0);
  mprof_trace_free(t);
  assert_int_equal(mprof_trace_open(&t, fixed, NULL), 0);
  assert_int_equal(mprof_trace_partial(t, NULL), 1);
  assert_false(mprof_trace_flags(t) & MPROF_FILE_FLAG_STREAMED);
  size_t n;
  mprof_trace_launches(t, &n);
  assert_int_equal(n, 3 * PER_ROUND);
  mprof_trace_free(t);
  /* A damaged byte inside committed data ends the file at the chunk before
   * it (checksums), never a crash or a wrong count. */
  data[ends[1] + 40] ^= 0x5a;
  assert_int_equal(test_write_file(cut, data, size), 0);
  assert_int_equal(mprof_trace_open(&t, cut, NULL), 0);
  mprof_trace_launches(t, &n);
  assert_int_equal(n, 2 * PER_ROUND);
  mprof_trace_free(t);
  free(data);
  unlink(cut);
  unlink(fixed);
}

/* Two processes asking for the same name with MPROF_WRITER_EXCLUSIVE: one
 * gets it, the other is refused (EEXIST) and never touches the file. */
static void test_exclusive_writers_in_two_processes(void **state) {
  (void)state;
  const char *path = test_path("claim.mprof");
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  unlink(path);
  unlink(partial);
  int ready[2], go[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(go), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    char byte;
    mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
    opts.open_flags = MPROF_WRITER_EXCLUSIVE;
    mprof_writer *w = NULL;
    int rc = mprof_writer_open(&w, path, &opts);
    int err = errno;
    if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1)
      _exit(9);
    if (rc == 0) {
      mprof_writer_meta(w, "owner", "child");
      _exit(mprof_writer_finish(w) == 0 ? 0 : 8);
    }
    _exit(err == EEXIST ? 1 : 7);
  }
  char byte = 0;
  assert_int_equal(read(ready[0], &byte, 1), 1);
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.open_flags = MPROF_WRITER_EXCLUSIVE;
  mprof_writer *w = NULL;
  int rc = mprof_writer_open(&w, path, &opts);
  int err = errno;
  assert_int_equal(write(go[1], &byte, 1), 1);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  /* The child opened first (it told us after opening): it owns the name. */
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(rc, MPROF_EIO);
  assert_int_equal(err, EEXIST);
  assert_null(w);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_string_equal(mprof_trace_meta(t, "owner"), "child");
  mprof_trace_free(t);
  /* Once finished, the name is free again. */
  assert_int_equal(mprof_writer_open(&w, path, &opts), 0);
  mprof_writer_abort(w);
  unlink(path);
  close(ready[0]);
  close(ready[1]);
  close(go[0]);
  close(go[1]);
}

/* One process's trace for the merge test: @p launches launches of its own
 * kernel on its own stream, starting at trace-clock time @p t0, with its
 * clock anchor (trace_ns, realtime_ns) and host. */
static void write_process(const char *path, const char *host, const char *pid,
                          uint64_t anchor_trace, uint64_t anchor_real,
                          uint64_t t0, uint32_t launches, const char *kernel) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "host", host), 0);
  assert_int_equal(mprof_writer_meta(w, "pid", pid), 0);
  tt_clock_meta(w, anchor_trace, anchor_real);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  uint32_t d, st, k, sh;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  mprof_stream_record stream = {d, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &st, MPROF_SECTION_STREAMS, &stream),
                   0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, kernel);
  kr.device = d;
  assert_int_equal(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = k;
  assert_int_equal(mprof_writer_intern(w, &sh, MPROF_SECTION_SHAPES, &shape),
                   0);
  for (uint32_t i = 0; i < launches; i++) {
    mprof_launch_record l = {
        t0 + 1000ull * i, t0 + 1000ull * i + 500, sh, st, i + 1, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_api_call_record call = {t0 - 400,
                                t0 - 100,
                                1,
                                9,
                                mprof_writer_string(w, "cudaLaunchKernel"),
                                MPROF_API_RUNTIME};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &call),
                   0);
  mprof_memory_access_record ma = {k,  0x40, MPROF_MEMORY_READ, 4, 1,
                                   32, 128,  launches};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma), 0);
  assert_int_equal(mprof_writer_drop(w, MPROF_DROP_ACTIVITY_RECORDS, d, 2), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* Two hosts whose monotonic clocks differ: the second trace's launches,
 * which started 1 ms after the first's in wall-clock time, land 1 ms after
 * them on the merged (first trace's) clock; each process keeps its own
 * device, stream and kernel. */
/* A set's process keys that lie (more processes than META records, ranges
 * past the tables, an index past the count) open without a hang or a
 * wrong owner: what cannot be true is left unknown. */
static void test_process_keys_that_lie(void **state) {
  (void)state;
  const char *path = test_path("lying-set.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  uint32_t d, st;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  mprof_stream_record stream = {d, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &st, MPROF_SECTION_STREAMS, &stream),
                   0);
  assert_int_equal(mprof_writer_meta(w, "merge.processes", "4000000000"), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_trace_process_count(t), 1); /* 1 META record */
  assert_int_equal(mprof_trace_stream_process(t, 0), 0);
  mprof_trace_free(t);

  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  assert_int_equal(mprof_writer_intern(w, &st, MPROF_SECTION_STREAMS, &stream),
                   0);
  assert_int_equal(mprof_writer_meta(w, "merge.processes", "2"), 0);
  assert_int_equal(mprof_writer_meta(w, "process.0.streams", "0 99999999999"),
                   0);
  assert_int_equal(mprof_writer_meta(w, "process.1.devices", "0 1"), 0);
  assert_int_equal(mprof_writer_meta(w, "process.7.streams", "0 1"), 0);
  assert_int_equal(mprof_writer_meta(w, "process.1.pid", "77"), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_trace_process_count(t), 2);
  assert_int_equal(mprof_trace_stream_process(t, 0), MPROF_INDEX_NONE);
  assert_int_equal(mprof_trace_device_process(t, 0), 1);
  assert_string_equal(mprof_trace_process_meta(t, 1, "pid"), "77");
  assert_null(mprof_trace_process_meta(t, 0, "pid"));
  mprof_trace_free(t);
}

static void test_merge_aligns_by_clock_anchors(void **state) {
  (void)state;
  const char *a = test_path("merge-a.mprof");
  const char *b = test_path("merge-b.mprof");
  const char *c = test_path("merge-c.mprof");
  const char *out = test_path("merged.mprof");
  /* a: trace clock 5 s = wall 1000 s; launches from trace 5.001 s. */
  write_process(a, "node1", "100", 5000000000ull, 1000000000000ull,
                5001000000ull, 3, "_Z1av");
  /* b on another host: trace clock 90 s = wall 1000 s; its launches start
   * at trace 90.002 s, i.e. 1 ms after a's in wall-clock time. */
  write_process(b, "node2", "200", 90000000000ull, 1000000000000ull,
                90002000000ull, 2, "_Z1bv");
  /* c on a's host: same clock, no shift whatever its anchor says. */
  write_process(c, "node1", "101", 7000000000ull, 1000000000123ull,
                5000500000ull, 1, "_Z1cv");
  mprof_trace *in[3];
  assert_int_equal(mprof_trace_open(&in[0], a, NULL), 0);
  assert_int_equal(mprof_trace_open(&in[1], b, NULL), 0);
  assert_int_equal(mprof_trace_open(&in[2], c, NULL), 0);
  assert_int_equal(mprof_trace_merge((const mprof_trace *const *)in, 3, out),
                   0);
  for (int i = 0; i < 3; i++)
    mprof_trace_free(in[i]);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  size_t n;
  mprof_trace_devices(t, &n);
  assert_int_equal(n, 3);
  const mprof_stream_record *streams = mprof_trace_streams(t, &n);
  assert_int_equal(n, 3);
  assert_string_equal(mprof_trace_string(t, streams[1].name),
                      "pid 200 \u00b7 stream 7");
  assert_int_equal(streams[1].device, 1);
  /* Each stream and device knows its process, and the process its META. */
  assert_int_equal(mprof_trace_process_count(t), 3);
  for (uint32_t i = 0; i < 3; i++) {
    assert_int_equal(mprof_trace_stream_process(t, i), i);
    assert_int_equal(mprof_trace_device_process(t, i), i);
  }
  assert_int_equal(mprof_trace_stream_process(t, 3), MPROF_INDEX_NONE);
  assert_string_equal(mprof_trace_process_meta(t, 1, "pid"), "200");
  assert_string_equal(mprof_trace_process_meta(t, 1, "host"), "node2");
  assert_string_equal(mprof_trace_process_meta(t, 2, "path"), c);
  assert_null(mprof_trace_process_meta(t, 3, "pid"));
  const mprof_kernel_record *kernels = mprof_trace_kernels(t, &n);
  assert_int_equal(n, 3);
  assert_string_equal(mprof_trace_string(t, kernels[1].mangled_name), "_Z1bv");
  assert_int_equal(kernels[1].device, 1);
  const mprof_shape_record *shapes = mprof_trace_shapes(t, &n);
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  assert_int_equal(n, 6);
  /* b's first launch: 1 ms after a's first on a's clock. */
  assert_int_equal(l[3].start, 5002000000ull);
  assert_int_equal(l[3].stream, 1);
  assert_string_equal(
      mprof_trace_string(t, kernels[shapes[l[3].shape].kernel].mangled_name),
      "_Z1bv");
  /* c shares a's host and clock: not moved. */
  assert_int_equal(l[5].start, 5000500000ull);
  assert_int_equal(l[5].stream, 2);
  /* The API calls move with their process's clock. */
  const mprof_api_call_record *calls = mprof_trace_api_calls(t, &n);
  assert_int_equal(n, 3);
  assert_int_equal(calls[1].start, 5002000000ull - 400);
  assert_string_equal(mprof_trace_string(t, calls[1].name), "cudaLaunchKernel");
  /* Each process's memory counts stay with its own kernel. */
  const mprof_memory_access_record *ma = mprof_trace_memory_accesses(t, &n);
  assert_int_equal(n, 3);
  static const size_t first_launch[] = {0, 3, 5}, launch_count[] = {3, 2, 1};
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ma[i].kernel, shapes[l[first_launch[i]].shape].kernel);
    assert_int_equal(ma[i].sectors, launch_count[i]);
  }
  /* In time order the set reads c, a, b. */
  uint64_t t0, t1;
  mprof_trace_time_bounds(t, &t0, &t1);
  assert_int_equal(t0, 5000500000ull);
  assert_int_equal(t1, 5002001500ull);
  assert_string_equal(mprof_trace_meta(t, "process.1.pid"), "200");
  assert_string_equal(mprof_trace_meta(t, "process.1.clock_shift_ns"),
                      "-85000000000");
  assert_string_equal(mprof_trace_meta(t, "process.2.clock_shift_ns"), "0");
  assert_string_equal(mprof_trace_meta(t, "merge.processes"), "3");
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_RECORDS), 6);
  const mprof_drop_record *drops = mprof_trace_drops(t, &n);
  assert_int_equal(n, 3);
  assert_int_equal(drops[2].device, 2);
  mprof_trace_free(t);
  /* A trace of one process is process 0 of itself. */
  assert_int_equal(mprof_trace_open(&t, b, NULL), 0);
  assert_int_equal(mprof_trace_process_count(t), 1);
  assert_int_equal(mprof_trace_stream_process(t, 0), 0);
  assert_int_equal(mprof_trace_device_process(t, 0), 0);
  assert_string_equal(mprof_trace_process_meta(t, 0, "pid"), "200");
  assert_string_equal(mprof_trace_process_meta(t, 0, "path"), b);
  mprof_trace_free(t);
  /* Opened as one set, named as asked, the scratch file gone. */
  assert_int_equal(mprof_trace_open(&in[0], a, NULL), 0);
  assert_int_equal(mprof_trace_open(&in[1], b, NULL), 0);
  assert_int_equal(
      mprof_trace_open_merged(&t, (const mprof_trace *const *)in, 2, "a and b"),
      0);
  assert_string_equal(mprof_trace_path(t), "a and b");
  assert_int_equal(mprof_trace_process_count(t), 2);
  mprof_trace_launches(t, &n);
  assert_int_equal(n, 5);
  mprof_trace_free(t);
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
  unlink(a);
  unlink(b);
  unlink(c);
  unlink(out);
}

/* ---- streamed files whose chunks are all intact but say odd things ---- */

/* A streamed file put together chunk by chunk, every checksum right. */
typedef struct crafted {
  unsigned char data[160 * 1024];
  size_t size;
} crafted;

static void craft_put(crafted *c, const void *data, size_t size) {
  assert_true(c->size + size <= sizeof c->data);
  memcpy(c->data + c->size, data, size);
  c->size += size;
}

static void craft_header(crafted *c, uint32_t flags) {
  mprof_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE);
  h.version_major = MPROF_FORMAT_VERSION_MAJOR;
  h.version_minor = MPROF_FORMAT_VERSION_MINOR;
  h.flags = MPROF_FILE_FLAG_STREAMED | flags;
  h.header_checksum = mprof_crc32c(0, &h, 40);
  c->size = 0;
  craft_put(c, &h, sizeof h);
}

/* A chunk whose header says @p length bytes, with @p stored of them here;
 * its offset. */
static size_t craft_chunk(crafted *c, uint32_t kind, uint32_t section,
                          uint32_t record_size, const void *payload,
                          uint64_t length, size_t stored) {
  static const unsigned char zeros[8];
  size_t at = c->size;
  mprof_chunk_header h =
      future_chunk_header(kind, section, record_size, payload, length, stored);
  craft_put(c, &h, sizeof h);
  craft_put(c, payload, stored);
  craft_put(c, zeros, (8 - (stored & 7)) & 7);
  return at;
}

static size_t craft_append(crafted *c, uint32_t section, uint32_t record_size,
                           const void *payload, size_t length) {
  return craft_chunk(c, MPROF_CHUNK_APPEND, section, record_size, payload,
                     length, length);
}

/* A checkpoint of @p length bytes (32 today; more from a newer writer). */
static void craft_checkpoint(crafted *c, uint32_t sequence, size_t length) {
  unsigned char payload[64];
  memset(payload, 0x5a, sizeof payload);
  mprof_checkpoint_record cp;
  memset(&cp, 0, sizeof cp);
  cp.sequence = sequence;
  cp.time = 777;
  memcpy(payload, &cp, sizeof cp);
  craft_chunk(c, MPROF_CHUNK_CHECKPOINT, 0, 0, payload, length, length);
}

/* Open @p c's file; its status, *@p seconds how long it took. */
static int open_crafted(const crafted *c, mprof_trace **t, double *seconds) {
  const char *path = test_path("crafted.mprof");
  assert_int_equal(test_write_file(path, c->data, c->size), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int rc = mprof_trace_open(t, path, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  *seconds =
      (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  return rc;
}

/* The error of opening @p c's file, which must fail with @p status. */
static const char *crafted_error(const crafted *c, int status) {
  mprof_trace *t = NULL;
  double seconds;
  assert_int_equal(open_crafted(c, &t, &seconds), status);
  assert_null(t);
  return mprof_error_last();
}

/* Chunks of sections no mprof knows, whatever their number (0xFFFFFFFF
 * overflowed the heap; 0x08000000 took seconds for a few KB), are skipped
 * without costing anything; the sections beside them still read. */
static void test_chunks_of_unknown_sections_skipped(void **state) {
  (void)state;
  static crafted c;
  unsigned char bytes[48];
  memset(bytes, 0xa7, sizeof bytes);
  /* The 208-byte file: one chunk of section 0xFFFFFFFF, a checkpoint. */
  craft_header(&c, 0);
  craft_append(&c, 0xffffffffu, 1, bytes, sizeof bytes);
  craft_checkpoint(&c, 1, sizeof(mprof_checkpoint_record));
  assert_int_equal(c.size, 208);
  mprof_trace *t = NULL;
  double seconds;
  if (open_crafted(&c, &t, &seconds) != 0)
    fail_msg("%s", mprof_error_last());
  assert_string_equal(mprof_trace_meta(t, "capture.checkpoints"), "1");
  assert_true(seconds < 0.5);
  mprof_trace_free(t);
  /* 6 KB of chunks of section 0x08000000 and others, around strings. */
  craft_header(&c, 0);
  static const char strings[] = "\0hello";
  craft_append(&c, MPROF_SECTION_STRINGS, 1, strings, sizeof strings);
  for (uint32_t i = 0; i < 110; i++)
    craft_chunk(&c, i % 2 ? MPROF_CHUNK_SNAPSHOT : MPROF_CHUNK_APPEND,
                i % 3 ? 0x08000000u : 0xfffffffeu - i, 8, bytes, 24, 24);
  /* A newer writer's checkpoint: longer, its new fields not zero. */
  craft_checkpoint(&c, 3, 48);
  assert_true(c.size > 6000);
  if (open_crafted(&c, &t, &seconds) != 0)
    fail_msg("%s", mprof_error_last());
  assert_true(seconds < 0.5);
  assert_string_equal(mprof_trace_string(t, 1), "hello");
  assert_string_equal(mprof_trace_meta(t, "capture.checkpoints"), "3");
  assert_string_equal(mprof_trace_meta(t, "capture.checkpoint_ns"), "777");
  assert_string_equal(mprof_trace_meta(t, "capture.lost_bytes"), "0");
  mprof_trace_free(t);
  unlink(test_path("crafted.mprof"));
}

/* Counts, sizes and lengths a chunk gives are bounded before use: a file
 * either opens with what was committed or is refused in one line. */
static void test_chunk_sizes_bounded(void **state) {
  (void)state;
  static crafted c;
  static unsigned char zeros[70000];
  const char *path = test_path("crafted.mprof");
  char want[512];
  /* Records longer than any layout. */
  craft_header(&c, 0);
  craft_append(&c, MPROF_SECTION_LAUNCHES, 70000, zeros, sizeof zeros);
  craft_checkpoint(&c, 1, sizeof(mprof_checkpoint_record));
  snprintf(want, sizeof want,
           "%s: LAUNCHES at byte 64: a chunk has records of 70000 bytes, "
           "longer than the 65536 bytes any layout may have (the file is "
           "corrupt or truncated; record it again)",
           path);
  assert_string_equal(crafted_error(&c, MPROF_EFORMAT), want);
  /* Chunks of one section that disagree on its record size. */
  craft_header(&c, 0);
  craft_append(&c, MPROF_SECTION_STREAMS, 16, zeros, 16);
  size_t second = craft_append(&c, MPROF_SECTION_STREAMS, 24, zeros, 48);
  craft_checkpoint(&c, 1, sizeof(mprof_checkpoint_record));
  snprintf(want, sizeof want,
           "%s: STREAMS at byte %zu: chunks of section STREAMS disagree on "
           "the record size (16, 24) (the file is corrupt or truncated; "
           "record it again)",
           path, second);
  assert_string_equal(crafted_error(&c, MPROF_EFORMAT), want);
  /* A chunk that says it is longer than the file ends it; what the
   * checkpoint before it committed is read. */
  craft_header(&c, 0);
  static const char strings[] = "\0kept";
  craft_append(&c, MPROF_SECTION_STRINGS, 1, strings, sizeof strings);
  craft_checkpoint(&c, 1, sizeof(mprof_checkpoint_record));
  size_t committed = c.size;
  craft_chunk(&c, MPROF_CHUNK_APPEND, MPROF_SECTION_STRINGS, 1, zeros,
              UINT64_MAX - 7, 40);
  mprof_trace *t = NULL;
  double seconds;
  if (open_crafted(&c, &t, &seconds) != 0)
    fail_msg("%s", mprof_error_last());
  assert_string_equal(mprof_trace_string(t, 1), "kept");
  snprintf(want, sizeof want, "%zu", c.size - committed);
  assert_string_equal(mprof_trace_meta(t, "capture.lost_bytes"), want);
  mprof_trace_free(t);
  /* Records of 0 bytes, section 0, a checkpoint shorter than today's: the
   * file ends there, before its checkpoint. */
  for (int bad = 0; bad < 3; bad++) {
    craft_header(&c, 0);
    if (bad == 0)
      craft_append(&c, MPROF_SECTION_LAUNCHES, 0, zeros, 0);
    else if (bad == 1)
      craft_append(&c, 0, 8, zeros, 8);
    craft_checkpoint(&c, 1, bad == 2 ? 16 : sizeof(mprof_checkpoint_record));
    assert_non_null(strstr(crafted_error(&c, MPROF_EFORMAT),
                           "ended before its first checkpoint"));
  }
  /* Header flags no mprof knows are refused, as in a finished file. */
  craft_header(&c, 0x100);
  craft_checkpoint(&c, 1, sizeof(mprof_checkpoint_record));
  snprintf(want, sizeof want,
           "%s: header at byte 12: unknown flags 0x100 (written by a newer "
           "mprof; upgrade mprof)",
           path);
  assert_string_equal(crafted_error(&c, MPROF_EVERSION), want);
  unlink(path);
}

/* ---- a full disk never takes committed checkpoints away ------------------ */

#define FULL_CHECKPOINTS 26
#define FULL_PER_CHECKPOINT 2000

/* A capture of FULL_CHECKPOINTS checkpoints of FULL_PER_CHECKPOINT launches
 * each, then launches no checkpoint committed. */
static mprof_writer *capture_checkpoints(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.mangled_name = mprof_writer_string(w, "_Z4stepv");
  k.device = MPROF_INDEX_NONE;
  uint32_t ki, shi, si;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = ki;
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  mprof_stream_record st = {MPROF_INDEX_NONE, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &si, MPROF_SECTION_STREAMS, &st), 0);
  uint64_t t0 = 1000;
  for (uint32_t c = 0; c <= FULL_CHECKPOINTS; c++) {
    for (uint32_t i = 0; i < FULL_PER_CHECKPOINT; i++, t0 += 100) {
      mprof_launch_record l = {t0, t0 + 50, shi, si, c * 10000 + i, 0, 0};
      assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                       0);
    }
    if (c < FULL_CHECKPOINTS)
      assert_int_equal(mprof_writer_checkpoint(w, t0), 0);
  }
  return w;
}

/* No file may grow past @p bytes, as on a disk that filled up: writes past
 * it fail with EFBIG (SIGXFSZ ignored). Returns the limit to restore. */
static struct rlimit limit_file_size(uint64_t bytes) {
  struct rlimit old, limit;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  limit = old;
  limit.rlim_cur = (rlim_t)bytes;
  signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit), 0);
  return old;
}

static void restore_file_size(struct rlimit old) {
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, SIG_DFL);
}

static uint64_t size_of(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return (uint64_t)st.st_size;
}

/* The disk fills after 26 checkpoints: finish fails, says what is kept, and
 * the streamed file opens with every committed launch. */
static void test_full_disk_keeps_checkpoints(void **state) {
  (void)state;
  const char *path = test_path("full.mprof");
  char partial[1100], finishing[1100], want[3000];
  snprintf(partial, sizeof partial, "%s.partial", path);
  snprintf(finishing, sizeof finishing, "%s.finishing", path);
  mprof_writer *w = capture_checkpoints(path);
  struct rlimit old = limit_file_size(size_of(partial));
  int rc = mprof_writer_finish(w);
  int err = errno;
  restore_file_size(old);
  assert_int_equal(rc, MPROF_EIO);
  assert_int_equal(err, EFBIG);
  snprintf(want, sizeof want,
           "%s: cannot write the trace: File too large; the "
           "capture up to checkpoint 26 is kept in %s (open it with mprof)",
           path, partial);
  assert_string_equal(mprof_error_last(), want);
  struct stat st;
  assert_int_equal(stat(path, &st), -1);
  assert_int_equal(stat(finishing, &st), -1);
  mprof_trace *t;
  rc = mprof_trace_open(&t, partial, NULL);
  if (rc)
    fail_msg("%s", mprof_error_last());
  size_t n;
  mprof_trace_launches(t, &n);
  assert_int_equal(n, FULL_CHECKPOINTS * FULL_PER_CHECKPOINT); /* 52,000 */
  assert_int_equal(mprof_trace_partial(t, NULL), 1);
  assert_string_equal(mprof_trace_meta(t, "capture.checkpoints"), "26");
  mprof_trace_free(t);
  unlink(partial);

  /* Full before the first checkpoint: nothing to keep, and it says so. */
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_writer_meta(w, "k", "v");
  old = limit_file_size(size_of(partial));
  rc = mprof_writer_finish(w);
  restore_file_size(old);
  assert_int_equal(rc, MPROF_EIO);
  assert_non_null(strstr(mprof_error_last(),
                         "File too large; no checkpoint had been committed, "
                         "so nothing is kept"));
  assert_int_equal(stat(partial, &st), -1);
}

/* The final checkpoint fits but the finished copy does not (PATH.finishing
 * leads to /dev/full: every write fails with ENOSPC): the streamed file
 * holds the whole capture, final checkpoint included. */
static void test_full_disk_at_the_finished_copy(void **state) {
  (void)state;
  const char *path = test_path("full-copy.mprof");
  char partial[1100], finishing[1100];
  snprintf(partial, sizeof partial, "%s.partial", path);
  snprintf(finishing, sizeof finishing, "%s.finishing", path);
  unlink(finishing);
  assert_int_equal(symlink("/dev/full", finishing), 0);
  mprof_writer *w = capture_checkpoints(path);
  int rc = mprof_writer_finish(w);
  assert_int_equal(errno, ENOSPC);
  assert_int_equal(rc, MPROF_EIO);
  char want[3000];
  snprintf(want, sizeof want,
           "%s: cannot write the trace: No space left on device; the whole "
           "capture (up to its final checkpoint, 27) is kept in %s (open it "
           "with mprof)",
           path, partial);
  assert_string_equal(mprof_error_last(), want);
  struct stat st;
  assert_int_equal(lstat(finishing, &st), -1);
  assert_int_equal(stat(path, &st), -1);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, partial, NULL), 0);
  size_t n;
  mprof_trace_launches(t, &n);
  assert_int_equal(n, (FULL_CHECKPOINTS + 1) * FULL_PER_CHECKPOINT);
  assert_int_equal(mprof_trace_partial(t, NULL), 0);
  mprof_trace_free(t);
  unlink(partial);
}

/* ---- NVTX ranges open at the cut ----------------------------------------- */

static mprof_range_record range(mprof_writer *w, const char *name,
                                uint64_t start, uint64_t end, uint32_t depth) {
  mprof_range_record r;
  memset(&r, 0, sizeof r);
  r.start = start;
  r.end = end;
  r.name = mprof_writer_string(w, name);
  r.thread_id = 42;
  r.depth = depth;
  return r;
}

/* What a cut capture holds of its ranges: @p want names, in RANGES order,
 * and whether each is open (end = the cut). */
static void expect_ranges(const char *path, size_t count,
                          const char *const *names, const uint64_t *ends,
                          const uint32_t *flags) {
  mprof_trace *t;
  int rc = mprof_trace_open(&t, path, NULL);
  if (rc)
    fail_msg("%s", mprof_error_last());
  size_t n;
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  assert_int_equal(n, count);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(mprof_trace_string(t, r[i].name), names[i]);
    assert_int_equal(r[i].end, ends[i]);
    assert_int_equal(r[i].flags, flags[i]);
  }
  mprof_trace_free(t);
}

static void test_open_ranges_at_the_cut(void **state) {
  (void)state;
  const char *path = test_path("open-ranges.mprof");
  const char *cut = test_path("open-ranges-cut.mprof");
  char partial[1100];
  snprintf(partial, sizeof partial, "%s.partial", path);
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  /* step 1 closed; train and step 2 open at the first checkpoint. */
  mprof_range_record closed = range(w, "step 1", 100, 200, 1);
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &closed),
                   0);
  mprof_range_record open[2] = {range(w, "train", 50, 50, 0),
                                range(w, "step 2", 300, 300, 1)};
  assert_int_equal(mprof_writer_snapshot(w, MPROF_SECTION_OPEN_RANGES, open, 2),
                   0);
  /* OPEN_RANGES is no section of a finished file. */
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_OPEN_RANGES, &open[0]),
      MPROF_EINVAL);
  assert_int_equal(mprof_writer_checkpoint(w, 1000), 0);
  size_t size = 0;
  unsigned char *data = test_read_file(partial, &size);
  assert_int_equal(test_write_file(cut, data, size), 0);
  free(data);
  {
    const char *names[] = {"step 1", "train", "step 2"};
    const uint64_t ends[] = {200, 1000, 1000};
    const uint32_t flags[] = {0, MPROF_RANGE_FLAG_OPEN, MPROF_RANGE_FLAG_OPEN};
    expect_ranges(cut, 3, names, ends, flags);
  }
  /* step 2 closes at 1500; a checkpoint written from a signal handler
   * commits it before a new snapshot says it closed: it is not also open. */
  mprof_range_record step2 = open[1];
  step2.end = 1500;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &step2),
                   0);
  assert_int_equal(mprof_writer_checkpoint_signal(w, SIGTERM, 2000), 0);
  data = test_read_file(partial, &size);
  assert_int_equal(test_write_file(cut, data, size), 0);
  free(data);
  {
    const char *names[] = {"step 1", "step 2", "train"};
    const uint64_t ends[] = {200, 1500, 2000};
    const uint32_t flags[] = {0, 0, MPROF_RANGE_FLAG_OPEN};
    expect_ranges(cut, 3, names, ends, flags);
  }
  /* Nothing open any more: an empty snapshot replaces the last one. */
  mprof_range_record train = open[0];
  train.end = 2500;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &train),
                   0);
  assert_int_equal(mprof_writer_snapshot(w, MPROF_SECTION_OPEN_RANGES, NULL, 0),
                   0);
  assert_int_equal(mprof_writer_checkpoint(w, 3000), 0);
  data = test_read_file(partial, &size);
  assert_int_equal(test_write_file(cut, data, size), 0);
  free(data);
  {
    const char *names[] = {"step 1", "step 2", "train"};
    const uint64_t ends[] = {200, 1500, 2500};
    const uint32_t flags[] = {0, 0, 0};
    expect_ranges(cut, 3, names, ends, flags);
  }
  /* The finished file has the RANGES records and no OPEN_RANGES. */
  assert_int_equal(mprof_writer_snapshot(w, MPROF_SECTION_OPEN_RANGES, open, 1),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n;
  mprof_trace_ranges(t, &n);
  assert_int_equal(n, 3);
  mprof_trace_section(t, MPROF_SECTION_OPEN_RANGES, &n);
  assert_int_equal(n, 0);
  mprof_trace_free(t);
  unlink(path);
  unlink(cut);
}

/* ---- a cubin streamed whole, replaced by a smaller form at the end ------- */

static void test_cubin_replaced_at_finish(void **state) {
  (void)state;
  const char *path = test_path("cubins.mprof");
  const char *cut = test_path("cubins-cut.mprof");
  char partial[1100];
  snprintf(partial, sizeof partial, "%s.partial", path);
  static unsigned char whole[5000], small[1001], other[333];
  for (size_t i = 0; i < sizeof whole; i++)
    whole[i] = (unsigned char)(i * 7);
  memset(small, 0x11, sizeof small);
  memset(other, 0x22, sizeof other);
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  assert_int_equal(mprof_writer_snapshot(w, MPROF_SECTION_DEVICES, &dev, 1), 0);
  mprof_cubin_record rec;
  memset(&rec, 0, sizeof rec);
  rec.crc = 0xaaaa;
  rec.module_size = sizeof whole;
  rec.device = 0;
  rec.flags = MPROF_CUBIN_KEPT_WHOLE;
  assert_int_equal(mprof_writer_cubin(w, &rec, whole, sizeof whole), 0);
  mprof_cubin_record unused = rec;
  unused.crc = 0xbbbb;
  assert_int_equal(mprof_writer_cubin(w, &unused, NULL, 0), 0);
  assert_int_equal(mprof_writer_checkpoint(w, 10), 0);
  mprof_cubin_record later = rec;
  later.crc = 0xcccc;
  later.module_size = sizeof other;
  assert_int_equal(mprof_writer_cubin(w, &later, other, sizeof other), 0);
  /* The smaller form, now tied to no device. */
  mprof_cubin_record cut_rec = rec;
  cut_rec.device = MPROF_INDEX_NONE;
  cut_rec.flags = MPROF_CUBIN_TRIMMED;
  assert_int_equal(
      mprof_writer_cubin_replace(w, 0, &cut_rec, small, sizeof small), 0);
  assert_int_equal(mprof_writer_checkpoint(w, 20), 0);
  size_t size = 0;
  unsigned char *data = test_read_file(partial, &size);
  assert_int_equal(test_write_file(cut, data, size), 0);
  free(data);
  /* The streamed file keeps what it had: the whole module. */
  mprof_trace *t;
  if (mprof_trace_open(&t, cut, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  size_t n, blob_size;
  const mprof_cubin_record *c = mprof_trace_cubins(t, &n);
  assert_int_equal(n, 3);
  assert_int_equal(c[0].flags, MPROF_CUBIN_KEPT_WHOLE);
  const void *blob = mprof_trace_cubin_blob(t, &c[0], &blob_size);
  assert_int_equal(blob_size, sizeof whole);
  assert_memory_equal(blob, whole, sizeof whole);
  mprof_trace_free(t);
  /* The finished file: the smaller form, the other blob intact, and the
   * whole module's bytes gone from it. */
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_DEVICES, &dev),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  c = mprof_trace_cubins(t, &n);
  assert_int_equal(n, 3);
  assert_int_equal(c[0].crc, 0xaaaa);
  assert_int_equal(c[0].flags, MPROF_CUBIN_TRIMMED);
  assert_int_equal(c[0].device, MPROF_INDEX_NONE);
  blob = mprof_trace_cubin_blob(t, &c[0], &blob_size);
  assert_int_equal(blob_size, sizeof small);
  assert_memory_equal(blob, small, sizeof small);
  assert_int_equal(c[1].flags, MPROF_CUBIN_OMITTED);
  assert_int_equal(c[2].crc, 0xcccc);
  assert_int_equal(c[2].blob_offset % 8, 0);
  blob = mprof_trace_cubin_blob(t, &c[2], &blob_size);
  assert_int_equal(blob_size, sizeof other);
  assert_memory_equal(blob, other, sizeof other);
  size_t blobs;
  mprof_trace_section(t, MPROF_SECTION_BLOBS, &blobs);
  assert_int_equal(blobs, 1008 + sizeof other);
  mprof_trace_free(t);
  unlink(path);
  unlink(cut);
}

/* A signal's checkpoint may not allocate: it must still commit records
 * that arrived after the last checkpoint and never filled a buffer (the
 * common case in a program's first second). */
static void test_signal_checkpoint_commits_unspilled_records(void **state) {
  (void)state;
  const char *path = test_path("signal-early.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_checkpoint(w, 1), 0); /* the start one */
  assert_int_equal(mprof_writer_meta(w, "tool", "test"), 0);
  mprof_range_record r;
  memset(&r, 0, sizeof r);
  r.name = mprof_writer_string(w, "first range");
  for (uint32_t i = 0; i < 10; i++) {
    r.start = 100 * i;
    r.end = r.start + 50;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
  }
  assert_int_equal(mprof_writer_checkpoint_signal(w, SIGTERM, 77), 0);
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  size_t size = 0;
  unsigned char *data = test_read_file(partial, &size);
  assert_non_null(data);
  mprof_writer_abort(w);
  const char *copy = test_path("signal-early-copy.mprof");
  assert_int_equal(test_write_file(copy, data, size), 0);
  free(data);
  mprof_trace *t = NULL;
  if (mprof_trace_open(&t, copy, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  size_t n = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(t, &n);
  assert_int_equal(n, 10);
  assert_string_equal(mprof_trace_string(t, ranges[9].name), "first range");
  assert_string_equal(mprof_trace_meta(t, "capture.signal"), "15");
  assert_string_equal(mprof_trace_meta(t, "tool"), "test");
  mprof_trace_free(t);
  unlink(copy);
}

/* More distinct strings than the writer remembers (one new NVTX name per
 * iteration of a long run): STRINGS goes to disk like any growing section,
 * the table starts afresh when full, and every reference still names its
 * own text, in the streamed file at a checkpoint and in the finished one. */
#define NAMES 300000u
static void test_strings_beyond_the_table(void **state) {
  (void)state;
  const char *path = test_path("strings.mprof");
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.buffer_size = 4096;
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, &opts), 0);
  mprof_writer_string_stats stats;
  memset(&stats, 0, sizeof stats);
  assert_int_equal(mprof_writer_get_string_stats(w, &stats), MPROF_EVERSION);
  stats.version = MPROF_WRITER_STRING_STATS_VERSION;
  char name[64];
  uint32_t repeated = mprof_writer_string(w, "step");
  mprof_range_record r;
  memset(&r, 0, sizeof r);
  size_t ranges = 0;
  for (uint32_t i = 0; i < NAMES; i++) {
    snprintf(name, sizeof name, "iteration %u", i);
    r.start = i;
    r.end = i + 1;
    r.name = mprof_writer_string(w, name);
    assert_int_not_equal(r.name, MPROF_STR_NONE);
    /* A name used every iteration keeps one reference while remembered. */
    r.domain = mprof_writer_string(w, "step");
    if (i < 1000)
      assert_int_equal(r.domain, repeated);
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
    ranges++;
    if (i == NAMES / 2)
      assert_int_equal(mprof_writer_checkpoint(w, 1), 0);
  }
  assert_int_equal(mprof_writer_get_string_stats(w, &stats), 0);
  /* One start afresh: "step" stored a second time, and only once more. */
  assert_int_equal(stats.generations, 1);
  assert_int_equal(stats.stored, NAMES + 2);
  assert_int_equal(stats.found, NAMES - 1);
  assert_int_equal(stats.unique_cap, 262144);
  assert_true(stats.tracked <= stats.unique_cap);
  assert_int_equal(stats.tracked, NAMES + 2 - stats.unique_cap);
  /* Memory held for strings: the table, not the 4.5 MB of names. */
  assert_true(stats.memory_bytes < 11u * 1024 * 1024);
  assert_true(stats.bytes > 4u * 1000 * 1000);
  /* Cut at the checkpoint: the first half resolves. */
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  size_t size = 0;
  unsigned char *data = test_read_file(partial, &size);
  assert_non_null(data);
  const char *copy = test_path("strings-cut.mprof");
  assert_int_equal(test_write_file(copy, data, size), 0);
  free(data);
  mprof_trace *t = NULL;
  if (mprof_trace_open(&t, copy, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  size_t n = 0;
  const mprof_range_record *got = mprof_trace_ranges(t, &n);
  assert_int_equal(n, NAMES / 2 + 1);
  for (size_t i = 0; i < n; i += 997) {
    snprintf(name, sizeof name, "iteration %zu", (size_t)got[i].start);
    assert_string_equal(mprof_trace_string(t, got[i].name), name);
    assert_string_equal(mprof_trace_string(t, got[i].domain), "step");
  }
  mprof_trace_free(t);
  unlink(copy);
  assert_int_equal(mprof_writer_finish(w), 0);
  if (mprof_trace_open(&t, path, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  got = mprof_trace_ranges(t, &n);
  assert_int_equal(n, ranges);
  for (size_t i = 0; i < n; i++) {
    snprintf(name, sizeof name, "iteration %zu", (size_t)got[i].start);
    assert_string_equal(mprof_trace_string(t, got[i].name), name);
    assert_string_equal(mprof_trace_string(t, got[i].domain), "step");
  }
  mprof_trace_free(t);
  unlink(path);
}

/* The table's size is the writer's option: a small one starts afresh
 * sooner; MPROF_WRITER_STRINGS_ALL never forgets (the rewrite and the merge
 * of finished traces use it, so a copied string keeps one reference). */
static void test_strings_unique_cap_option(void **state) {
  (void)state;
  const char *path = test_path("strings-cap.mprof");
  size_t caps[] = {100, MPROF_WRITER_STRINGS_ALL};
  for (size_t c = 0; c < 2; c++) {
    mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
    opts.strings_unique_cap = caps[c];
    mprof_writer *w;
    assert_int_equal(mprof_writer_open(&w, path, &opts), 0);
    uint32_t hot = mprof_writer_string(w, "hot");
    int moved = 0;
    char name[32];
    for (uint32_t i = 0; i < 250; i++) {
      snprintf(name, sizeof name, "name %u", i);
      assert_int_not_equal(mprof_writer_string(w, name), MPROF_STR_NONE);
      moved |= mprof_writer_string(w, "hot") != hot;
    }
    mprof_writer_string_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.version = MPROF_WRITER_STRING_STATS_VERSION;
    assert_int_equal(mprof_writer_get_string_stats(w, &stats), 0);
    if (c == 0) {
      assert_int_equal(stats.unique_cap, 100);
      assert_int_equal(stats.generations, 2);
      assert_true(stats.tracked <= 100);
      assert_true(moved); /* stored again after a fresh start */
    } else {
      assert_int_equal(stats.unique_cap, 0); /* no limit */
      assert_int_equal(stats.generations, 0);
      assert_int_equal(stats.tracked, 251);
      assert_false(moved);
    }
    assert_int_equal(stats.stored, 251 + (c == 0 ? 2 : 0));
    mprof_writer_abort(w);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_appends),
      cmocka_unit_test(test_full_disk_keeps_checkpoints),
      cmocka_unit_test(test_full_disk_at_the_finished_copy),
      cmocka_unit_test(test_open_ranges_at_the_cut),
      cmocka_unit_test(test_cubin_replaced_at_finish),
      cmocka_unit_test(test_signal_checkpoint_commits_unspilled_records),
      cmocka_unit_test(test_strings_beyond_the_table),
      cmocka_unit_test(test_strings_unique_cap_option),
      cmocka_unit_test(test_cut_at_every_flush_opens_partial),
      cmocka_unit_test(test_exclusive_writers_in_two_processes),
      cmocka_unit_test(test_merge_aligns_by_clock_anchors),
      cmocka_unit_test(test_process_keys_that_lie),
      cmocka_unit_test(test_chunks_of_unknown_sections_skipped),
      cmocka_unit_test(test_chunk_sizes_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
