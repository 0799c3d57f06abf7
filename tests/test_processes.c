/*
 * mprof tests — the processes of a trace (PROCESSES, format 1.4): what a
 * merged set says about each process and which streams and devices are
 * its, traces written before the section (the committed samples, sets
 * merged by an older mprof) answering the same questions from their META,
 * and PROCESSES records that lie refused with one message.
 *
 * SPDX-License-Identifier: MIT
 */
#include <sys/stat.h>

#include "analysis_util.h"
#include "test_util.h"

#include "mprof/mprof.h"
#include "mprof/synth.h"

static const char *sample(const char *name) {
  static char buf[2][1024];
  static int next;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char *out = buf[next++ & 1];
  snprintf(out, sizeof buf[0], "%s/samples/%s", root && *root ? root : "..",
           name);
  return out;
}

/* A trace of one process with @p devices devices and @p streams streams
 * (stream i on device i % devices) and one launch per stream, its
 * PROCESSES record as given (strings as text; ranges: all of them). */
typedef struct process_spec {
  uint32_t pid, rank;
  const char *host, *cmdline;
  uint64_t start, end;
  uint32_t exit_kind, exit_value;
  uint32_t devices, streams;
  uint64_t anchor_trace, anchor_real; /* clock anchors */
} process_spec;

static void write_process(const char *path, const process_spec *p) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  tt_clock_meta(w, p->anchor_trace, p->anchor_real);
  for (uint32_t d = 0; d < p->devices; d++) {
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    dev.id = d;
    dev.name = mprof_writer_string(w, "NVIDIA H100");
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_DEVICES, &dev),
                     0);
  }
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, "_Z4stepv");
  kr.device = 0;
  uint32_t k, sh;
  assert_int_equal(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = k;
  assert_int_equal(mprof_writer_intern(w, &sh, MPROF_SECTION_SHAPES, &shape),
                   0);
  for (uint32_t s = 0; s < p->streams; s++) {
    mprof_stream_record st = {s % p->devices, 1, 7 + s, 0};
    uint32_t si;
    assert_int_equal(mprof_writer_append(w, &si, MPROF_SECTION_STREAMS, &st),
                     0);
    mprof_launch_record l = {p->start + 1000 * (s + 1),
                             p->start + 1000 * (s + 1) + 500,
                             sh,
                             si,
                             s + 1,
                             0,
                             0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_process_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = p->start;
  rec.end = p->end;
  rec.pid = p->pid;
  rec.ppid = 1;
  rec.rank = p->rank;
  rec.local_rank = p->rank;
  rec.host = mprof_writer_string(w, p->host);
  rec.cmdline = mprof_writer_string(w, p->cmdline);
  rec.exit_kind = p->exit_kind;
  rec.exit_value = p->exit_value;
  rec.stream_count = p->streams;
  rec.device_count = p->devices;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &rec),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* Two processes (on two hosts: the second's clock moves) merge into one
 * trace with two PROCESSES records: each keeps who it was and how it
 * ended, owns the streams and devices its trace brought, and says which
 * file it came from and how far its times moved. */
static void test_merged_set_has_a_record_per_process(void **state) {
  (void)state;
  const char *a = test_path("proc-a.mprof");
  const char *b = test_path("proc-b.mprof");
  const char *out = test_path("proc-ab.mprof");
  /* a: 2 GPUs, 3 streams, exited with 0. b: 1 GPU, 2 streams, killed
   * (end unknown); its clock is 85 s ahead of a's for the same instant. */
  process_spec pa = {100,
                     0,
                     "node1",
                     "./train --rank 0",
                     5000000000ull,
                     6000000000ull,
                     MPROF_EXIT_STATUS,
                     0,
                     2,
                     3,
                     5000000000ull,
                     1000000000000ull};
  process_spec pb = {200,
                     1,
                     "node2",
                     "./train --rank 1",
                     90000000000ull,
                     0,
                     MPROF_EXIT_SIGNAL,
                     9,
                     1,
                     2,
                     90000000000ull,
                     1000000000000ull};
  write_process(a, &pa);
  write_process(b, &pb);
  mprof_trace *in[2];
  assert_int_equal(mprof_trace_open(&in[0], a, NULL), 0);
  assert_int_equal(mprof_trace_open(&in[1], b, NULL), 0);
  assert_int_equal(mprof_trace_merge((const mprof_trace *const *)in, 2, out),
                   0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(mprof_trace_process_count(t), 2);
  assert_int_equal(p[0].first_stream, 0);
  assert_int_equal(p[0].stream_count, 3);
  assert_int_equal(p[0].first_device, 0);
  assert_int_equal(p[0].device_count, 2);
  assert_int_equal(p[1].first_stream, 3);
  assert_int_equal(p[1].stream_count, 2);
  assert_int_equal(p[1].first_device, 2);
  assert_int_equal(p[1].device_count, 1);
  static const uint32_t stream_owner[] = {0, 0, 0, 1, 1};
  for (uint32_t s = 0; s < 5; s++)
    assert_int_equal(mprof_trace_stream_process(t, s), stream_owner[s]);
  assert_int_equal(mprof_trace_stream_process(t, 5), MPROF_INDEX_NONE);
  static const uint32_t device_owner[] = {0, 0, 1};
  for (uint32_t d = 0; d < 3; d++)
    assert_int_equal(mprof_trace_device_process(t, d), device_owner[d]);
  /* Each stream's device is its own process's. */
  const mprof_stream_record *streams = mprof_trace_streams(t, &n);
  for (uint32_t s = 0; s < 5; s++)
    assert_int_equal(mprof_trace_device_process(t, streams[s].device),
                     stream_owner[s]);
  assert_string_equal(mprof_trace_string(t, streams[4].name),
                      "pid 200 \u00b7 stream 8");
  /* Who each was and how it ended. */
  assert_int_equal(p[1].pid, 200);
  assert_int_equal(p[1].rank, 1);
  assert_string_equal(mprof_trace_string(t, p[1].host), "node2");
  assert_string_equal(mprof_trace_string(t, p[1].cmdline), "./train --rank 1");
  assert_int_equal(p[0].exit_kind, MPROF_EXIT_STATUS);
  assert_int_equal(p[1].exit_kind, MPROF_EXIT_SIGNAL);
  assert_int_equal(p[1].exit_value, 9);
  assert_string_equal(mprof_trace_string(t, p[0].path), a);
  assert_string_equal(mprof_trace_string(t, p[1].path), b);
  /* b's times moved onto a's clock, its start with them; its unknown end
   * stays unknown. */
  assert_int_equal(p[0].clock_shift, 0);
  assert_int_equal(p[1].clock_shift, -85000000000ll);
  assert_int_equal(p[1].start, 5000000000ull);
  assert_int_equal(p[1].end, 0);
  assert_int_equal(p[0].end, 6000000000ull);
  assert_string_equal(mprof_trace_process_meta(t, 1, "pid"), "200");
  assert_string_equal(mprof_trace_process_meta(t, 1, "host"), "node2");
  assert_string_equal(mprof_trace_process_meta(t, 1, "rank"), "1");
  assert_string_equal(mprof_trace_process_meta(t, 1, "path"), b);
  assert_string_equal(mprof_trace_process_meta(t, 1, "clock_shift_ns"),
                      "-85000000000");
  /* Older readers still find process I's streams in META. */
  assert_string_equal(mprof_trace_meta(t, "merge.processes"), "2");
  assert_string_equal(mprof_trace_meta(t, "process.1.streams"), "3 2");
  assert_string_equal(mprof_trace_meta(t, "process.1.devices"), "2 1");
  mprof_trace_free(t);

  /* Opened as a set, the same. */
  assert_int_equal(
      mprof_trace_open_merged(&t, (const mprof_trace *const *)in, 2, "a+b"), 0);
  mprof_trace_processes(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(mprof_trace_stream_process(t, 3), 1);
  assert_string_equal(mprof_trace_process_meta(t, 0, "path"), a);
  mprof_trace_free(t);
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
  unlink(a);
  unlink(b);
  unlink(out);
}

/* The committed samples were recorded before PROCESSES: each is one
 * process, whose pid, parent, host and command line its META holds, and
 * that owns every stream; merged, two of them are two processes with the
 * right streams, exactly as a set of new traces. */
static void test_samples_without_processes(void **state) {
  (void)state;
  mprof_trace *in[2];
  assert_int_equal(mprof_trace_open(&in[0], sample("demo.mprof"), NULL), 0);
  assert_int_equal(mprof_trace_open(&in[1], sample("gemm_pm.mprof"), NULL), 0);
  size_t n;
  assert_null(mprof_trace_section(in[1], MPROF_SECTION_PROCESSES, &n));
  const mprof_process_record *p = mprof_trace_processes(in[1], &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->pid, 1047);
  assert_int_equal(p->ppid, 1046);
  assert_int_equal(p->rank, MPROF_INDEX_NONE);
  assert_string_equal(mprof_trace_string(in[1], p->host), "vm");
  assert_string_equal(mprof_trace_process_meta(in[1], 0, "pid"), "1047");
  assert_string_equal(mprof_trace_process_meta(in[1], 0, "path"),
                      sample("gemm_pm.mprof"));
  assert_int_equal(p->exit_kind, MPROF_EXIT_UNKNOWN);
  /* Its capture's start and end: the clock anchors. */
  assert_int_equal(
      p->start,
      strtoull(mprof_trace_meta(in[1], "clock.anchor.trace_ns"), NULL, 10));
  assert_int_equal(
      p->end,
      strtoull(mprof_trace_meta(in[1], "clock.end.trace_ns"), NULL, 10));
  size_t streams;
  mprof_trace_streams(in[1], &streams);
  assert_int_equal(streams, 2);
  for (uint32_t s = 0; s < streams; s++)
    assert_int_equal(mprof_trace_stream_process(in[1], s), 0);

  const char *out = test_path("samples-set.mprof");
  assert_int_equal(mprof_trace_merge((const mprof_trace *const *)in, 2, out),
                   0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  p = mprof_trace_processes(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(p[0].pid, 1328);
  assert_int_equal(p[1].pid, 1047);
  mprof_trace_streams(t, &streams);
  assert_int_equal(streams, 5); /* demo's 3, then gemm_pm's 2 */
  static const uint32_t owner[] = {0, 0, 0, 1, 1};
  for (uint32_t s = 0; s < 5; s++)
    assert_int_equal(mprof_trace_stream_process(t, s), owner[s]);
  assert_int_equal(mprof_trace_device_process(t, 1), 1);
  /* Each launch's process is the one whose trace held it. */
  size_t launches[2];
  mprof_trace_launches(in[0], &launches[0]);
  mprof_trace_launches(in[1], &launches[1]);
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  assert_int_equal(n, launches[0] + launches[1]);
  size_t second = 0;
  for (size_t i = 0; i < n; i++)
    second += mprof_trace_stream_process(t, l[i].stream) == 1;
  assert_int_equal(second, launches[1]);
  /* The generic per-process META still comes along. */
  assert_string_equal(mprof_trace_process_meta(t, 1, "pm.mode"),
                      mprof_trace_meta(in[1], "pm.mode"));
  mprof_trace_free(t);
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
  unlink(out);
}

/* A set an older mprof merged (processes in process.I.* META, no
 * PROCESSES) answers stream -> process from its META; merged again with a
 * new trace, each of its processes stays one. */
static void test_old_merged_set(void **state) {
  (void)state;
  const char *old = test_path("old-set.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, old, NULL), 0);
  for (uint32_t d = 0; d < 2; d++) {
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_DEVICES, &dev),
                     0);
  }
  for (uint32_t s = 0; s < 3; s++) {
    mprof_stream_record st = {s < 2 ? 0 : 1, 1, 7 + s,
                              mprof_writer_string(w, "pid ? \u00b7 old")};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_STREAMS, &st),
                     0);
  }
  static const char *const meta[][2] = {
      {"merge.processes", "2"},
      {"process.0.pid", "31"},
      {"process.0.host", "n1"},
      {"process.0.pc.mode", "continuous"},
      {"process.0.devices", "0 1"},
      {"process.0.streams", "0 2"},
      {"process.1.pid", "32"},
      {"process.1.host", "n2"},
      {"process.1.rank", "5"},
      {"process.1.path", "/runs/trace.32.mprof"},
      {"process.1.clock.anchor.trace_ns", "1000"},
      {"process.1.clock_shift_ns", "500"},
      {"process.1.devices", "1 1"},
      {"process.1.streams", "2 1"},
  };
  for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
    assert_int_equal(mprof_writer_meta(w, meta[i][0], meta[i][1]), 0);
  assert_int_equal(mprof_writer_finish(w), 0);

  mprof_trace *in[2];
  assert_int_equal(mprof_trace_open(&in[0], old, NULL), 0);
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(in[0], &n);
  assert_int_equal(n, 2);
  assert_int_equal(mprof_trace_stream_process(in[0], 1), 0);
  assert_int_equal(mprof_trace_stream_process(in[0], 2), 1);
  assert_int_equal(mprof_trace_device_process(in[0], 1), 1);
  assert_int_equal(p[1].pid, 32);
  assert_int_equal(p[1].rank, 5);
  assert_int_equal(p[1].start, 1500); /* its anchor, on the set's clock */
  assert_string_equal(mprof_trace_process_meta(in[0], 1, "host"), "n2");
  assert_string_equal(mprof_trace_process_meta(in[0], 1, "path"),
                      "/runs/trace.32.mprof");
  assert_null(mprof_trace_process_meta(in[0], 0, "path"));

  /* Merged with a new trace of one process: three processes. */
  const char *c = test_path("new-one.mprof");
  process_spec pc = {33,
                     MPROF_INDEX_NONE,
                     "n1",
                     "./c",
                     2000,
                     3000,
                     MPROF_EXIT_STATUS,
                     1,
                     1,
                     2,
                     0,
                     0};
  write_process(c, &pc);
  assert_int_equal(mprof_trace_open(&in[1], c, NULL), 0);
  const char *out = test_path("old-and-new.mprof");
  assert_int_equal(mprof_trace_merge((const mprof_trace *const *)in, 2, out),
                   0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, out, NULL), 0);
  p = mprof_trace_processes(t, &n);
  assert_int_equal(n, 3);
  static const uint32_t pids[] = {31, 32, 33};
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(p[i].pid, pids[i]);
  static const uint32_t owner[] = {0, 0, 1, 2, 2};
  for (uint32_t s = 0; s < 5; s++)
    assert_int_equal(mprof_trace_stream_process(t, s), owner[s]);
  assert_int_equal(mprof_trace_device_process(t, 2), 2);
  /* Where each came from: the old set's own file for its first process
   * (it named none), the one it named for its second. */
  assert_string_equal(mprof_trace_process_meta(t, 0, "path"), old);
  assert_string_equal(mprof_trace_process_meta(t, 1, "path"),
                      "/runs/trace.32.mprof");
  assert_string_equal(mprof_trace_process_meta(t, 2, "path"), c);
  /* Each process's own META under its new place. */
  assert_string_equal(mprof_trace_process_meta(t, 0, "pc.mode"), "continuous");
  assert_string_equal(mprof_trace_meta(t, "process.1.host"), "n2");
  assert_string_equal(mprof_trace_meta(t, "process.2.streams"), "3 2");
  assert_string_equal(mprof_trace_meta(t, "merge.processes"), "3");
  /* The set's streams keep the names its merge gave them. */
  const mprof_stream_record *streams = mprof_trace_streams(t, &n);
  assert_string_equal(mprof_trace_string(t, streams[0].name),
                      "pid ? \u00b7 old");
  assert_string_equal(mprof_trace_string(t, streams[3].name),
                      "pid 33 \u00b7 stream 7");
  mprof_trace_free(t);
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
  unlink(old);
  unlink(c);
  unlink(out);
}

/* Two processes of one stream each (the device the first's) as
 * PROCESSES records, changed by @p change. */
static void write_two(const char *path,
                      void (*change)(mprof_process_record *)) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_DEVICES, &dev),
                   0);
  mprof_process_record rec[2];
  memset(rec, 0, sizeof rec);
  for (uint32_t i = 0; i < 2; i++) {
    mprof_stream_record st = {0, 1, i, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_STREAMS, &st),
                     0);
    rec[i].pid = 10 + i;
    rec[i].ppid = rec[i].rank = rec[i].local_rank = MPROF_INDEX_NONE;
    rec[i].first_stream = i;
    rec[i].stream_count = 1;
    rec[i].device_count = 1 - i;
  }
  if (change)
    change(rec);
  for (int i = 0; i < 2; i++)
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &rec[i]), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* write_two() as is opens: each stream its process's. */
static void test_good_processes_open(void **state) {
  (void)state;
  const char *path = test_path("good-processes.mprof");
  write_two(path, NULL);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_trace_process_count(t), 2);
  assert_int_equal(mprof_trace_stream_process(t, 0), 0);
  assert_int_equal(mprof_trace_stream_process(t, 1), 1);
  assert_int_equal(mprof_trace_device_process(t, 0), 0);
  assert_string_equal(mprof_trace_process_meta(t, 1, "pid"), "11");
  assert_null(mprof_trace_process_meta(t, 1, "ppid"));
  assert_null(mprof_trace_process_meta(t, 1, "host"));
  mprof_trace_free(t);
  unlink(path);
}

/* write_two() with @p change is refused: EFORMAT, one line naming the
 * file, the section and the byte, and holding @p want. */
static void expect_refused(void (*change)(mprof_process_record *),
                           const char *want) {
  const char *path = test_path("bad-processes.mprof");
  write_two(path, change);
  mprof_trace *t = NULL;
  assert_int_equal(mprof_trace_open(&t, path, NULL), MPROF_EFORMAT);
  assert_null(t);
  const char *message = mprof_error_last();
  if (!strstr(message, want) || !strstr(message, "PROCESSES at byte") ||
      !strstr(message, path) || strchr(message, '\n'))
    fail_msg("expected one line about %s's PROCESSES with '%s', got: %s", path,
             want, message);
  unlink(path);
}

static void streams_past_end(mprof_process_record *r) { r[1].stream_count = 3; }
static void device_past_end(mprof_process_record *r) { r[1].first_device = 2; }
static void stream_twice(mprof_process_record *r) { r[1].first_stream = 0; }
static void host_past_strings(mprof_process_record *r) { r[0].host = 999999; }
static void exit_kind_unknown(mprof_process_record *r) { r[0].exit_kind = 7; }
static void ends_before_start(mprof_process_record *r) {
  r[1].start = 50;
  r[1].end = 40;
}
static void reserved_set(mprof_process_record *r) { r[0].reserved[2] = 1; }

static void test_bad_processes_refused(void **state) {
  (void)state;
  expect_refused(streams_past_end,
                 "record 1: its 3 streams from 1 on lie past STREAMS (2 "
                 "records)");
  expect_refused(device_past_end,
                 "record 1: its 0 devices from 2 on lie past DEVICES (1 "
                 "records)");
  expect_refused(stream_twice,
                 "record 1: STREAMS record 0 is already process 0's");
  expect_refused(host_past_strings, "record 0: host refers to string 999999");
  expect_refused(exit_kind_unknown, "record 0: unknown exit kind 7");
  expect_refused(ends_before_start, "record 1 ends before it starts");
  expect_refused(reserved_set, "record 0: reserved field is not zero");
}

/* Every writer of traces writes the record: `synth` (its process from
 * --meta), an MKPROF import (one process, nothing known), and a rewrite of
 * a trace written before the section. */
static void test_every_writer_writes_processes(void **state) {
  (void)state;
  const char *path = test_path("synth-proc.mprof");
  const char *meta[] = {"pid", "301", "host", "node1", "rank", "2"};
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 100;
  opts.streams = 3;
  opts.devices = 2;
  opts.meta = meta;
  opts.meta_count = 3;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n, streams, devices;
  const mprof_process_record *p =
      (const mprof_process_record *)mprof_trace_section(
          t, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  mprof_trace_streams(t, &streams);
  mprof_trace_devices(t, &devices);
  assert_int_equal(p->pid, 301);
  assert_int_equal(p->rank, 2);
  assert_string_equal(mprof_trace_string(t, p->host), "node1");
  assert_int_equal(p->first_stream, 0);
  assert_int_equal(p->stream_count, streams);
  assert_int_equal(p->device_count, devices);
  assert_int_equal(streams, 6);
  mprof_trace_free(t);

  assert_int_equal(
      mprof_mkprof_open_trace(&t, sample("gemm_source.mkprof"), NULL), 0);
  p = (const mprof_process_record *)mprof_trace_section(
      t, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->pid, 0);
  mprof_trace_streams(t, &streams);
  assert_int_equal(p->stream_count, streams);
  assert_null(mprof_trace_process_meta(t, 0, "pid"));
  mprof_trace_free(t);

  assert_int_equal(mprof_trace_open(&t, sample("gemm.mprof"), NULL), 0);
  assert_int_equal(mprof_trace_rewrite(t, path, 0), 0);
  mprof_trace_free(t);
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  p = (const mprof_process_record *)mprof_trace_section(
      t, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->pid, 1374);
  assert_string_equal(mprof_trace_string(t, p->host), "vm");
  mprof_trace_free(t);
  unlink(path);
}

/* The exit of a killed process, as its parent learnt it from waitpid(),
 * goes into a record without one; a record that has one keeps it. */
static const mprof_process_record *only_process(mprof_trace *t) {
  size_t n;
  const mprof_process_record *p =
      (const mprof_process_record *)mprof_trace_section(
          t, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  return p;
}

static void test_rewrite_writes_the_end_of_a_killed_process(void **state) {
  (void)state;
  const char *path = test_path("killed-proc.mprof");
  const char *out = test_path("killed-proc-ended.mprof");
  const char *meta[] = {"pid", "301", "host", "node1"};
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 10;
  opts.meta = meta;
  opts.meta_count = 2;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *t, *ended;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(only_process(t)->exit_kind, MPROF_EXIT_UNKNOWN);
  /* Another pid: nothing changes. */
  assert_int_equal(
      mprof_trace_rewrite_ended(t, out, 0, 302, MPROF_EXIT_SIGNAL, 9), 0);
  assert_int_equal(mprof_trace_open(&ended, out, NULL), 0);
  assert_int_equal(only_process(ended)->exit_kind, MPROF_EXIT_UNKNOWN);
  mprof_trace_free(ended);
  /* Its pid: killed by signal 9. */
  assert_int_equal(
      mprof_trace_rewrite_ended(t, out, 0, 301, MPROF_EXIT_SIGNAL, 9), 0);
  assert_int_equal(mprof_trace_open(&ended, out, NULL), 0);
  assert_int_equal(only_process(ended)->exit_kind, MPROF_EXIT_SIGNAL);
  assert_int_equal(only_process(ended)->exit_value, 9);
  assert_int_equal(only_process(ended)->pid, 301);
  /* Once known, the end stays. */
  assert_int_equal(
      mprof_trace_rewrite_ended(ended, path, 0, 301, MPROF_EXIT_STATUS, 3), 0);
  mprof_trace_free(ended);
  mprof_trace_free(t);
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(only_process(t)->exit_kind, MPROF_EXIT_SIGNAL);
  assert_int_equal(only_process(t)->exit_value, 9);
  /* An exit kind that says nothing is refused. */
  assert_int_equal(
      mprof_trace_rewrite_ended(t, out, 0, 301, MPROF_EXIT_UNKNOWN, 0),
      MPROF_EINVAL);
  assert_non_null(strstr(mprof_error_last(), "exit kind 0"));
  mprof_trace_free(t);
  unlink(path);
  unlink(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_merged_set_has_a_record_per_process),
      cmocka_unit_test(test_samples_without_processes),
      cmocka_unit_test(test_old_merged_set),
      cmocka_unit_test(test_good_processes_open),
      cmocka_unit_test(test_bad_processes_refused),
      cmocka_unit_test(test_every_writer_writes_processes),
      cmocka_unit_test(test_rewrite_writes_the_end_of_a_killed_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
