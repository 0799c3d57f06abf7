/*
 * Tests of the CUPTI producer's translation layer, without a GPU: fabricated
 * CUPTI records go through translate.c into a real writer, and the trace is
 * read back with libmprof to check the numbers a user would see.
 *
 * SPDX-License-Identifier: MIT
 */
#include <elf.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "config.h"
#include "cubin.h"
#include "process.h"
#include "mprof/error.h"
#include "mprof/reasons.h"
#include "mprof/sass.h"
#include "mprof/sidecar.h"
#include "mprof/status.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "translate.h"

#include "cupti_fixture.h"

/* ---- kernels ------------------------------------------------------------ */

static void test_kernels(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "kernels", NULL);
  CUpti_ActivityKernel10 a1 = kernel("_Z4gemmv", 0, 7, 1000, 1500, 11);
  CUpti_ActivityKernel10 a2 = kernel("_Z4gemmv", 0, 7, 2000, 2600, 12);
  CUpti_ActivityKernel10 b = kernel("_Z3addPf", 0, 8, 1200, 1300, 13);
  b.gridX = 4;
  b.clusterX = 2;
  b.clusterY = 1;
  b.clusterZ = 1;
  b.launchType = 1;
  b.graphId = 5;
  b.graphNodeId = 0x100000001ull;
  CUpti_ActivityKernel10 other_gpu = kernel("_Z4gemmv", 1, 7, 3000, 3900, 14);
  CUpti_ActivityKernel10 untimed = kernel("_Z4gemmv", 0, 7, 0, 0, 15);
  CUpti_ActivityKernel10 backwards = kernel("_Z4gemmv", 0, 7, 5000, 4000, 16);

  assert_int_equal(mprof_cupti_translate_kernel(f.t, &a1), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &a2), 0);
  /* Through the activity dispatcher, as the buffer callback feeds it. */
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&b),
                   0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &other_gpu), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &untimed), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &backwards), 0);
  mprof_cupti_translate_activity_dropped(f.t, 3);
  mprof_cupti_translate_activity_dropped(f.t, 4);

  mprof_cupti_translate_stats stats;
  mprof_cupti_translate_get_stats(f.t, &stats);
  assert_int_equal(stats.launches, 4);
  assert_int_equal(stats.no_timestamp, 2);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_device_record *dev = mprof_trace_devices(f.trace, &n);
  assert_int_equal(n, 2);
  assert_int_equal(dev[0].id, 0);
  assert_int_equal(dev[1].id, 1);

  const mprof_launch_record *l = mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 4);
  size_t kernel_count = 0, shape_count = 0, stream_count = 0;
  const mprof_kernel_record *k = mprof_trace_kernels(f.trace, &kernel_count);
  const mprof_shape_record *s = mprof_trace_shapes(f.trace, &shape_count);
  const mprof_stream_record *st = mprof_trace_streams(f.trace, &stream_count);
  /* gemm on device 0, add on device 0, gemm on device 1. */
  assert_int_equal(kernel_count, 3);
  assert_int_equal(shape_count, 3);
  /* (dev 0, stream 7), (dev 0, stream 8), (dev 1, stream 7). */
  assert_int_equal(stream_count, 3);

  assert_int_equal(l[0].start, 1000);
  assert_int_equal(l[0].end, 1500);
  assert_int_equal(l[0].correlation_id, 11);
  assert_int_equal(l[1].correlation_id, 12);
  assert_int_equal(l[0].shape, l[1].shape);
  assert_int_equal(l[0].stream, l[1].stream);
  assert_int_equal(st[l[0].stream].stream_id, 7);
  assert_int_equal(st[l[0].stream].context_id, 1);
  assert_int_equal(st[l[0].stream].device, 0);

  const mprof_shape_record *gemm_shape = &s[l[0].shape];
  const mprof_kernel_record *gemm = &k[gemm_shape->kernel];
  assert_string_equal(str(f.trace, gemm->mangled_name), "_Z4gemmv");
  assert_int_equal(gemm->registers, 32);
  assert_int_equal(gemm->static_shared, 1024);
  assert_int_equal(gemm->local_per_thread, 16);
  assert_int_equal(gemm->device, 0);
  assert_int_equal(gemm->cubin_crc, 0);
  assert_int_equal(gemm->function_index, MPROF_INDEX_NONE);
  assert_int_equal(gemm_shape->grid[0], 132);
  assert_int_equal(gemm_shape->grid[1], 2);
  assert_int_equal(gemm_shape->block[0], 256);
  assert_int_equal(gemm_shape->dynamic_shared, 4096);
  assert_int_equal(gemm_shape->cluster[0], 0);

  const mprof_launch_record *add = &l[2];
  assert_int_equal(add->correlation_id, 13);
  assert_int_equal(add->graph_id, 5);
  assert_int_equal(add->graph_node_id, 0x100000001ull);
  assert_int_equal(st[add->stream].stream_id, 8);
  assert_int_equal(s[add->shape].grid[0], 4);
  assert_int_equal(s[add->shape].cluster[0], 2);
  assert_int_equal(s[add->shape].launch_type, 1);
  assert_string_equal(str(f.trace, k[s[add->shape].kernel].mangled_name),
                      "_Z3addPf");

  assert_int_equal(k[s[l[3].shape].kernel].device, 1);
  assert_int_equal(st[l[3].stream].device, 1);

  assert_int_equal(drop_count(f.trace, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, 0), 2);
  assert_int_equal(
      drop_count(f.trace, MPROF_DROP_ACTIVITY_RECORDS, MPROF_INDEX_NONE), 7);
  close_fixture(&f);
}

/* ---- memcpy and memset -------------------------------------------------- */

static void test_memops(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "memops", NULL);
  CUpti_ActivityMemcpy6 htod;
  memset(&htod, 0, sizeof htod);
  htod.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  htod.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  htod.bytes = 1 << 20;
  htod.start = 100;
  htod.end = 400;
  htod.deviceId = 0;
  htod.contextId = 1;
  htod.streamId = 7;
  htod.correlationId = 21;
  CUpti_ActivityMemcpy6 dtoh = htod;
  dtoh.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  dtoh.start = 500;
  dtoh.end = 600;
  dtoh.correlationId = 22;
  CUpti_ActivityMemcpy6 untimed = htod;
  untimed.start = 0;
  CUpti_ActivityMemcpyPtoP4 p2p;
  memset(&p2p, 0, sizeof p2p);
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.bytes = 4096;
  p2p.start = 700;
  p2p.end = 800;
  p2p.deviceId = 0;
  p2p.contextId = 1;
  p2p.streamId = 9;
  p2p.srcDeviceId = 0;
  p2p.dstDeviceId = 1;
  p2p.correlationId = 23;
  CUpti_ActivityMemset4 set;
  memset(&set, 0, sizeof set);
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.value = 0xab;
  set.bytes = 8192;
  set.start = 900;
  set.end = 950;
  set.deviceId = 0;
  set.contextId = 1;
  set.streamId = 7;
  set.correlationId = 24;

  assert_int_equal(mprof_cupti_translate_memcpy(f.t, &htod), 0);
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&dtoh),
                   0);
  assert_int_equal(mprof_cupti_translate_memcpy(f.t, &untimed), 0);
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&p2p),
                   0);
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&set),
                   0);
  finish_fixture(&f);

  size_t n = 0, streams = 0;
  const mprof_memop_record *m = mprof_trace_memops(f.trace, &n);
  const mprof_stream_record *st = mprof_trace_streams(f.trace, &streams);
  assert_int_equal(n, 4);
  assert_int_equal(streams, 2); /* streams 7 and 9 on device 0 */

  assert_int_equal(m[0].kind, MPROF_MEMOP_MEMCPY);
  assert_int_equal(m[0].copy_kind, MPROF_COPY_HTOD);
  assert_int_equal(m[0].bytes, 1 << 20);
  assert_int_equal(m[0].start, 100);
  assert_int_equal(m[0].end, 400);
  assert_int_equal(m[0].correlation_id, 21);
  assert_int_equal(m[0].src_device, MPROF_INDEX_NONE);
  assert_int_equal(m[0].dst_device, 0);
  assert_int_equal(st[m[0].stream].stream_id, 7);

  assert_int_equal(m[1].copy_kind, MPROF_COPY_DTOH);
  assert_int_equal(m[1].src_device, 0);
  assert_int_equal(m[1].dst_device, MPROF_INDEX_NONE);

  assert_int_equal(m[2].copy_kind, MPROF_COPY_PTOP);
  assert_int_equal(m[2].src_device, 0);
  assert_int_equal(m[2].dst_device, 1);
  assert_int_equal(m[2].bytes, 4096);
  assert_int_equal(st[m[2].stream].stream_id, 9);

  assert_int_equal(m[3].kind, MPROF_MEMOP_MEMSET);
  assert_int_equal(m[3].copy_kind, 0);
  assert_int_equal(m[3].value, 0xab);
  assert_int_equal(m[3].bytes, 8192);
  assert_int_equal(m[3].correlation_id, 24);
  assert_int_equal(m[3].stream, m[0].stream);

  assert_int_equal(drop_count(f.trace, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, 0), 1);
  close_fixture(&f);
}

/* ---- NVTX markers ------------------------------------------------------- */

static void test_markers(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "markers", NULL);
  CUpti_ActivityMarker2 records[] = {
      marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "outer", 5),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 150, "inner", 5),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 200, NULL, 5),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 250, "mark", 5),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 300, NULL, 5),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 400, "never closed", 6),
      marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 410, NULL, 6),
  };
  records[0].domain = "app";
  CUpti_ActivityMarkerData2 data;
  memset(&data, 0, sizeof data);
  data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  data.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
  data.id = 2;
  data.color = 0xff00ff00u;
  for (size_t i = 0; i < sizeof records / sizeof records[0]; i++) {
    assert_int_equal(
        mprof_cupti_translate_activity(
            f.t, (const CUpti_Activity *)(const void *)&records[i]),
        0);
    if (i == 1)
      assert_int_equal(mprof_cupti_translate_activity(
                           f.t, (const CUpti_Activity *)(const void *)&data),
                       0);
  }
  /* The last time seen ends the range that never closed. */
  CUpti_ActivityKernel10 k = kernel("_Z1kv", 0, 7, 450, 500, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_range_record *r = mprof_trace_ranges(f.trace, &n);
  assert_int_equal(n, 4);
  /* Written in the order ranges closed: inner, mark, outer, never closed. */
  assert_string_equal(str(f.trace, r[0].name), "inner");
  assert_int_equal(r[0].start, 150);
  assert_int_equal(r[0].end, 200);
  assert_int_equal(r[0].depth, 1);
  assert_int_equal(r[0].thread_id, 5);
  assert_int_equal(r[0].color, 0xff00ff00u);

  assert_string_equal(str(f.trace, r[1].name), "mark");
  assert_int_equal(r[1].start, 250);
  assert_int_equal(r[1].end, 250);
  assert_int_equal(r[1].depth, 1);

  assert_string_equal(str(f.trace, r[2].name), "outer");
  assert_string_equal(str(f.trace, r[2].domain), "app");
  assert_int_equal(r[2].start, 100);
  assert_int_equal(r[2].end, 300);
  assert_int_equal(r[2].depth, 0);
  assert_int_equal(r[2].color, 0);

  assert_string_equal(str(f.trace, r[3].name), "never closed");
  assert_int_equal(r[3].start, 400);
  assert_int_equal(r[3].end, 500);
  assert_int_equal(r[3].thread_id, 6);
  /* ... and marks it as such; the others closed. */
  assert_int_equal(r[3].flags, MPROF_RANGE_FLAG_OPEN);
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(r[i].flags, 0);
  close_fixture(&f);
}

/* Thousands of ranges open at once on three threads (start/end ranges of
 * requests in flight), ended in a shuffled order, colours given to some
 * after others ended: each END finds its own range, and each range's depth
 * is what its thread had open when it started. */
#define MANY_OPEN 6000u
static void test_many_open_ranges(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "many-open", NULL);
  static char names[MANY_OPEN][16];
  for (uint32_t k = 0; k < MANY_OPEN; k++) {
    snprintf(names[k], sizeof names[k], "r%u", k);
    CUpti_ActivityMarker2 m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, k + 1,
                                     1000 + 10 * (uint64_t)k, names[k], k % 3);
    assert_int_equal(mprof_cupti_translate_marker(f.t, &m), 0);
  }
  static uint32_t order[MANY_OPEN];
  for (uint32_t k = 0; k < MANY_OPEN; k++)
    order[k] = k;
  uint32_t lcg = 29;
  for (uint32_t k = MANY_OPEN - 1; k > 0; k--) {
    lcg = lcg * 1664525u + 1013904223u;
    uint32_t j = lcg % (k + 1);
    uint32_t tmp = order[k];
    order[k] = order[j];
    order[j] = tmp;
  }
  uint64_t now = 1000000;
  uint32_t still_open[3] = {MANY_OPEN / 3, MANY_OPEN / 3, MANY_OPEN / 3};
  uint64_t mark_time[MANY_OPEN / 1000];
  uint32_t mark_depth[MANY_OPEN / 1000];
  for (uint32_t n = 0; n < MANY_OPEN; n++) {
    uint32_t k = order[n];
    if (n == MANY_OPEN / 2) {
      /* Colours for ranges that moved while others ended. */
      for (uint32_t c = n; c < MANY_OPEN; c += 7) {
        CUpti_ActivityMarkerData2 data;
        memset(&data, 0, sizeof data);
        data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
        data.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
        data.id = order[c] + 1;
        data.color = 0xff000000u | order[c];
        assert_int_equal(mprof_cupti_translate_marker_data(f.t, &data), 0);
      }
    }
    CUpti_ActivityMarker2 m =
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, k + 1, now++, NULL, k % 3);
    assert_int_equal(mprof_cupti_translate_marker(f.t, &m), 0);
    still_open[k % 3]--;
    if (n % 1000 == 0) {
      /* A marker's depth: what its thread has open now. */
      mark_time[n / 1000] = now;
      mark_depth[n / 1000] = still_open[k % 3];
      CUpti_ActivityMarker2 mark =
          marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 100000 + n, now++,
                 "mark", k % 3);
      assert_int_equal(mprof_cupti_translate_marker(f.t, &mark), 0);
    }
  }
  finish_fixture(&f);
  size_t n = 0;
  const mprof_range_record *r = mprof_trace_ranges(f.trace, &n);
  assert_int_equal(n, MANY_OPEN + MANY_OPEN / 1000);
  uint32_t marks = 0, colored = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = str(f.trace, r[i].name);
    if (strcmp(name, "mark") == 0) {
      /* Marks are written as they come, in time order. */
      uint32_t m = marks++;
      assert_true(m < MANY_OPEN / 1000);
      assert_int_equal(r[i].start, mark_time[m]);
      assert_int_equal(r[i].depth, mark_depth[m]);
      continue;
    }
    uint32_t k = (uint32_t)strtoul(name + 1, NULL, 10);
    assert_int_equal(r[i].start, 1000 + 10 * (uint64_t)k);
    assert_int_equal(r[i].thread_id, k % 3);
    assert_int_equal(r[i].depth, k / 3);
    assert_true(r[i].end >= 1000000);
    if (r[i].color) {
      assert_int_equal(r[i].color, 0xff000000u | k);
      colored++;
    }
  }
  assert_int_equal(marks, MANY_OPEN / 1000);
  assert_int_equal(colored, (MANY_OPEN / 2 + 6) / 7);
  /* The writer accounts for its strings: every range's name was stored. */
  assert_string_equal(mprof_trace_meta(f.trace, "writer.strings_unique_cap"),
                      "262144");
  assert_true(strtoull(mprof_trace_meta(f.trace, "writer.strings"), NULL, 10) >
              MANY_OPEN);
  assert_true(strtoull(mprof_trace_meta(f.trace, "writer.string_bytes"), NULL,
                       10) > 4 * MANY_OPEN);
  assert_string_equal(mprof_trace_meta(f.trace, "writer.string_generations"),
                      "0");
  assert_non_null(mprof_trace_meta(f.trace, "writer.string_memory_bytes"));
  close_fixture(&f);
}

/* ---- API calls ---------------------------------------------------------- */

static CUpti_ActivityAPI api_call(CUpti_ActivityKind kind, uint32_t cbid,
                                  uint64_t start, uint64_t end,
                                  uint32_t correlation, uint32_t thread) {
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 1;
  a.threadId = thread;
  a.correlationId = correlation;
  return a;
}

/* Runtime and driver calls land in API_CALLS with their names (version
 * suffix gone), thread ids as the markers of that thread carry them, and
 * the correlation id of the launch they issued. */
static void test_api_calls(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "api", NULL);
  assert_int_equal(mprof_cupti_translate_api_name(
                       f.t, MPROF_API_RUNTIME,
                       CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                       "cudaLaunchKernel_v7000"),
                   0);
  assert_int_equal(
      mprof_cupti_translate_api_name(f.t, MPROF_API_DRIVER,
                                     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                     "cuLaunchKernel"),
      0);
  assert_int_equal(mprof_cupti_translate_api_name(
                       f.t, MPROF_API_RUNTIME,
                       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
                       "cudaMemcpyAsync_ptsz_v7000"),
                   0);
  assert_int_equal(mprof_cupti_translate_api_name(f.t, 3, 1, "cudaSomething"),
                   MPROF_EINVAL);
  CUpti_ActivityMarker2 push =
      marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "step", 4242);
  CUpti_ActivityMarker2 pop =
      marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 900, NULL, 4242);
  CUpti_ActivityAPI calls[] = {
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME,
               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 200, 230, 17,
               4242),
      api_call(CUPTI_ACTIVITY_KIND_DRIVER,
               CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 300, 310, 18, 4242),
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME,
               CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, 400, 460,
               19, 7),
      /* never registered: named by its callback id */
      api_call(CUPTI_ACTIVITY_KIND_DRIVER, 12, 500, 505, 20, 7),
      /* no timestamps: counted, not placed */
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME,
               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0, 0, 21, 7),
      /* a runtime launch and the driver launch it made (which reaches
       * CUPTI's buffer first): one call */
      api_call(CUPTI_ACTIVITY_KIND_DRIVER,
               CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 610, 650, 22, 4242),
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME,
               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 600, 700, 22,
               4242),
      /* inside a runtime call but under another correlation id: kept */
      api_call(CUPTI_ACTIVITY_KIND_DRIVER,
               CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 810, 820, 24, 4242),
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME,
               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 800, 900, 23,
               4242),
  };
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&push),
                   0);
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    assert_int_equal(mprof_cupti_translate_activity(
                         f.t, (const CUpti_Activity *)(const void *)&calls[i]),
                     0);
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&pop),
                   0);
  CUpti_ActivityKernel10 k = kernel("_Z1kv", 0, 7, 240, 600, 17);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  mprof_cupti_translate_stats stats;
  mprof_cupti_translate_get_stats(f.t, &stats);
  /* Thread 4242's own driver launch (300) was written when its next runtime
   * call came; thread 7's waits for the finish. */
  assert_int_equal(stats.api_calls, 6);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_api_call_record *a = mprof_trace_api_calls(f.trace, &n);
  /* In the order written: 200 runtime, 400 runtime (thread 7), 300 driver
   * (its own: written when thread 4242's next runtime call came), 600
   * runtime (whose driver half at 610 is gone), 810 driver (inside the
   * runtime call at 800 but under its own id), 800 runtime, 500 driver (at
   * finish). */
  assert_int_equal(n, 7);
  assert_string_equal(str(f.trace, a[0].name), "cudaLaunchKernel");
  assert_int_equal(a[0].kind, MPROF_API_RUNTIME);
  assert_int_equal(a[0].start, 200);
  assert_int_equal(a[0].end, 230);
  assert_int_equal(a[0].correlation_id, 17);
  const mprof_range_record *r = mprof_trace_ranges(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(a[0].thread_id, r[0].thread_id);
  const mprof_launch_record *l = mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(l[0].correlation_id, a[0].correlation_id);
  assert_string_equal(str(f.trace, a[1].name), "cudaMemcpyAsync_ptsz");
  assert_int_equal(a[1].thread_id, 7);
  assert_string_equal(str(f.trace, a[2].name), "cuLaunchKernel");
  assert_int_equal(a[2].kind, MPROF_API_DRIVER);
  assert_int_equal(a[2].start, 300);
  assert_string_equal(str(f.trace, a[3].name), "cudaLaunchKernel");
  assert_int_equal(a[3].start, 600);
  assert_int_equal(a[3].correlation_id, 22);
  assert_int_equal(a[4].start, 810);
  assert_int_equal(a[4].correlation_id, 24);
  assert_int_equal(a[5].start, 800);
  assert_string_equal(str(f.trace, a[6].name), "driver cbid 12");
  for (size_t i = 0; i < 7; i++)
    assert_true(a[i].start != 610);
  assert_int_equal(
      drop_count(f.trace, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, MPROF_INDEX_NONE),
      1);
  close_fixture(&f);
}

/* ---- PC sampling -------------------------------------------------------- */

static void test_pc_samples(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "pc", NULL);
  uint32_t indices[] = {2, 14, 15};
  /* CUPTI's names, as mprof's stall-reason table spells them. */
  char barrier[] = MPROF_STALL_REASON_PREFIX "barrier";
  char long_sb[] = MPROF_STALL_REASON_PREFIX "long_scoreboard";
  char long_sb_ni[] =
      MPROF_STALL_REASON_PREFIX "long_scoreboard" MPROF_STALL_NOT_ISSUED_SUFFIX;
  char *names[] = {barrier, long_sb, long_sb_ni};
  assert_int_equal(
      mprof_cupti_translate_stall_reasons(f.t, 0, 3, indices, names), 0);
  /* A second context on the same device must not repeat the table. */
  assert_int_equal(
      mprof_cupti_translate_stall_reasons(f.t, 0, 3, indices, names), 0);

  CUpti_PCSamplingStallReason pc0_reasons[] = {{14, 700}, {15, 650}, {2, 0}};
  CUpti_PCSamplingStallReason pc1_reasons[] = {{2, 40}};
  CUpti_PCSamplingStallReason ignored[] = {{2, 99}};
  CUpti_PCSamplingPCData pcs[3];
  memset(pcs, 0, sizeof pcs);
  pcs[0].size = sizeof pcs[0];
  pcs[0].cubinCrc = 0xccf2d77aull;
  pcs[0].pcOffset = 0x130;
  pcs[0].functionIndex = 15;
  pcs[0].functionName = (char *)"_Z4memkPf";
  pcs[0].stallReasonCount = 3;
  pcs[0].stallReason = pc0_reasons;
  pcs[1] = pcs[0];
  pcs[1].pcOffset = 0x200;
  pcs[1].functionIndex = 14;
  pcs[1].functionName = (char *)"_Z4spinPfiPy";
  pcs[1].stallReasonCount = 1;
  pcs[1].stallReason = pc1_reasons;
  pcs[1].correlationId = 77;
  /* Beyond totalNumPcs: must not be read. */
  pcs[2] = pcs[1];
  pcs[2].stallReason = ignored;

  CUpti_PCSamplingData data;
  memset(&data, 0, sizeof data);
  data.size = sizeof data;
  data.collectNumPcs = 3;
  data.totalNumPcs = 2;
  data.pPcData = pcs;
  data.totalSamples = 1500;
  data.droppedSamples = 10;
  data.nonUsrKernelsTotalSamples = 100;
  uint32_t first = mprof_cupti_translate_next_drain(f.t);
  assert_int_equal(first, 1);
  assert_int_equal(mprof_cupti_translate_pc_data(f.t, 0, &data, first), 0);

  /* A second drain that saw the hardware buffer overflow. */
  CUpti_PCSamplingData overflow;
  memset(&overflow, 0, sizeof overflow);
  overflow.size = sizeof overflow;
  overflow.collectNumPcs = 3;
  overflow.pPcData = pcs;
  overflow.totalSamples = 500;
  overflow.droppedSamples = 32;
  overflow.hardwareBufferFull = 1;
  uint32_t second = mprof_cupti_translate_next_drain(f.t);
  assert_int_equal(second, 2);
  assert_int_equal(mprof_cupti_translate_pc_data(f.t, 0, &overflow, second), 0);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(f.trace, &n);
  assert_int_equal(n, 3);
  assert_int_equal(sr[1].index, 14);
  assert_int_equal(sr[1].device, 0);
  assert_string_equal(str(f.trace, sr[1].name), long_sb);
  /* What the producer stored, the analysis reads through the table. */
  const mprof_stall_reason_info *row =
      mprof_stall_reason_info_find(str(f.trace, sr[2].name));
  assert_non_null(row);
  assert_string_equal(row->not_issued, long_sb_ni);
  assert_int_equal(row->dimension, MPROF_DIM_MEMORY_LATENCY);
  assert_int_equal(mprof_stall_reason_is_not_issued(str(f.trace, sr[2].name)),
                   1);

  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(f.trace, &n);
  /* (memk+0x130, 14), (memk+0x130, 15), (spin+0x200, 2): zeros skipped. */
  assert_int_equal(n, 3);
  assert_int_equal(pc[0].cubin_crc, 0xccf2d77aull);
  assert_string_equal(str(f.trace, pc[0].function_name), "_Z4memkPf");
  assert_int_equal(pc[0].function_index, 15);
  assert_int_equal(pc[0].pc_offset, 0x130);
  assert_int_equal(pc[0].stall_reason, 14);
  assert_int_equal(pc[0].samples, 700);
  assert_int_equal(pc[0].drain, 1);
  assert_int_equal(pc[0].device, 0);
  assert_int_equal(pc[0].correlation_id, 0);
  assert_int_equal(pc[1].stall_reason, 15);
  assert_int_equal(pc[1].samples, 650);
  assert_string_equal(str(f.trace, pc[2].function_name), "_Z4spinPfiPy");
  assert_int_equal(pc[2].samples, 40);
  assert_int_equal(pc[2].correlation_id, 77);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += pc[i].samples;
  assert_int_equal(sum, 1390);

  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_TOTAL_SAMPLES, 0), 2000);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_DROPPED_SAMPLES, 0), 42);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_NON_USER_SAMPLES, 0), 100);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_HW_BUFFER_FULL, 0), 1);
  assert_string_equal(mprof_trace_meta(f.trace, "pc.drains"), "2");
  close_fixture(&f);
}

/* The drains of one checkpoint interval are summed per PC and reason (a
 * long run's trace grows by checkpoints, not by drains); the samples all
 * arrive, and another correlation id or device stays its own record. */
static void test_pc_samples_summed_per_checkpoint(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "pcsum", NULL);
  CUpti_PCSamplingStallReason hot[] = {{14, 100}, {15, 3}};
  CUpti_PCSamplingPCData pc[2];
  memset(pc, 0, sizeof pc);
  pc[0].size = sizeof pc[0];
  pc[0].cubinCrc = 0xccf2d77aull;
  pc[0].pcOffset = 0x130;
  pc[0].functionIndex = 15;
  pc[0].functionName = (char *)"_Z4memkPf";
  pc[0].stallReasonCount = 2;
  pc[0].stallReason = hot;
  pc[1] = pc[0];
  pc[1].stallReasonCount = 1;
  pc[1].correlationId = 9; /* a serialized launch: its own record */
  CUpti_PCSamplingData data;
  memset(&data, 0, sizeof data);
  data.size = sizeof data;
  data.collectNumPcs = data.totalNumPcs = 2;
  data.pPcData = pc;
  /* Ten drains, a checkpoint after the sixth. */
  uint32_t first = 0;
  for (int d = 0; d < 10; d++) {
    uint32_t drain = mprof_cupti_translate_next_drain(f.t);
    if (!first)
      first = drain;
    assert_int_equal(mprof_cupti_translate_pc_data(f.t, d == 9, &data, drain),
                     0);
    if (d == 5)
      assert_int_equal(mprof_cupti_translate_checkpoint(f.t, 1000), 0);
  }
  finish_fixture(&f);
  size_t n = 0;
  const mprof_pc_sample_record *r = mprof_trace_pc_samples(f.trace, &n);
  /* Interval 1 (drains 1-6): reason 14, 15 and the correlated one;
   * interval 2 (drains 7-9 on device 0, 10 on device 1): the same three
   * for device 0, and three for device 1. */
  assert_int_equal(n, 9);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += r[i].samples;
  assert_int_equal(total, 10 * (100 + 3 + 100));
  assert_int_equal(r[0].stall_reason, 14);
  assert_int_equal(r[0].samples, 600);
  assert_int_equal(r[0].drain, first);
  assert_int_equal(r[1].stall_reason, 15);
  assert_int_equal(r[1].samples, 18);
  assert_int_equal(r[2].correlation_id, 9);
  assert_int_equal(r[2].samples, 600);
  assert_int_equal(r[3].samples, 300);
  assert_int_equal(r[3].drain, first + 6);
  assert_int_equal(r[6].samples, 100);
  assert_int_not_equal(r[6].device, r[3].device);
  close_fixture(&f);
}

/* ---- kernel regex ------------------------------------------------------- */

static void test_kernel_regex(void **state) {
  (void)state;
  mprof_cupti_translate_options opts;
  memset(&opts, 0, sizeof opts);
  opts.kernel_regex = "gemm|^_Z4spin";
  opts.keep_sass = 1;
  fixture f;
  open_fixture(&f, "regex", &opts);
  CUpti_ActivityKernel10 kept = kernel("_Z8sgemm_nnv", 0, 7, 10, 20, 1);
  CUpti_ActivityKernel10 dropped = kernel("_Z3addPf", 0, 7, 30, 40, 2);
  CUpti_ActivityKernel10 kept2 = kernel("_Z4spinPfiPy", 0, 7, 50, 60, 3);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &kept), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &dropped), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &dropped), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &kept2), 0);

  CUpti_PCSamplingStallReason reasons[] = {{2, 5}};
  CUpti_PCSamplingPCData pcs[2];
  memset(pcs, 0, sizeof pcs);
  pcs[0].functionName = (char *)"_Z3addPf";
  pcs[0].stallReasonCount = 1;
  pcs[0].stallReason = reasons;
  pcs[1] = pcs[0];
  pcs[1].functionName = (char *)"_Z8sgemm_nnv";
  translate_pcs(&f, pcs, 2);
  finish_fixture(&f);

  size_t n = 0, kernels = 0;
  mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 2);
  const mprof_kernel_record *k = mprof_trace_kernels(f.trace, &kernels);
  assert_int_equal(kernels, 2);
  assert_string_equal(str(f.trace, k[0].mangled_name), "_Z8sgemm_nnv");
  assert_string_equal(str(f.trace, k[1].mangled_name), "_Z4spinPfiPy");
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(f.trace, &n);
  assert_int_equal(n, 1);
  assert_string_equal(str(f.trace, pc[0].function_name), "_Z8sgemm_nnv");
  assert_string_equal(
      mprof_trace_meta(f.trace, "kernel_regex.filtered_launches"), "2");
  assert_string_equal(
      mprof_trace_meta(f.trace, "kernel_regex.filtered_pc_records"), "1");
  close_fixture(&f);
}

static void test_bad_regex_keeps_everything(void **state) {
  (void)state;
  mprof_cupti_translate_options opts;
  memset(&opts, 0, sizeof opts);
  opts.kernel_regex = "gemm(";
  opts.keep_sass = 1;
  fixture f;
  open_fixture(&f, "badregex", &opts);
  CUpti_ActivityKernel10 k = kernel("_Z3addPf", 0, 7, 30, 40, 2);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  finish_fixture(&f);
  size_t n = 0;
  mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 1);
  const char *error = mprof_trace_meta(f.trace, "error.0");
  assert_non_null(error);
  assert_non_null(strstr(error, "MPROF_KERNEL_REGEX"));
  close_fixture(&f);
}

/* ---- devices, META, errors, lifecycle ----------------------------------- */

static void test_devices_merge(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "devices", NULL);
  mprof_device_record driver;
  memset(&driver, 0, sizeof driver);
  driver.cc_major = 9;
  driver.sm_count = 132;
  driver.max_shared_per_block = 232448; /* opt-in maximum */
  driver.memory_clock_khz = 2619000;
  driver.global_memory = 150000000000ull;
  mprof_cupti_translate_device_info(f.t, 0, &driver, "NVIDIA H200");

  CUpti_ActivityDevice5 d;
  memset(&d, 0, sizeof d);
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H200 (cupti)";
  d.computeCapabilityMajor = 9;
  d.numMultiprocessors = 132;
  d.numThreadsPerWarp = 32;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxSharedMemoryPerBlock = 49152;
  d.coreClockRate = 1980000;
  d.l2CacheSize = 52428800;
  d.uuid.bytes[0] = 0x78;
  d.uuid.bytes[1] = 0x56;
  d.uuid.bytes[2] = 0x34;
  d.uuid.bytes[3] = 0x12;
  assert_int_equal(mprof_cupti_translate_activity(
                       f.t, (const CUpti_Activity *)(const void *)&d),
                   0);
  /* Device 3 appears only through CUPTI. */
  d.id = 3;
  d.name = "second";
  mprof_cupti_translate_device_activity(f.t, &d);
  finish_fixture(&f);

  size_t n = 0;
  const mprof_device_record *dev = mprof_trace_devices(f.trace, &n);
  assert_int_equal(n, 2);
  assert_int_equal(dev[0].id, 0);
  assert_string_equal(str(f.trace, dev[0].name), "NVIDIA H200");
  assert_int_equal(dev[0].max_shared_per_block, 232448); /* driver wins */
  assert_int_equal(dev[0].memory_clock_khz, 2619000);
  assert_int_equal(dev[0].core_clock_khz, 1980000); /* CUPTI fills gaps */
  assert_int_equal(dev[0].warp_size, 32);
  assert_int_equal(dev[0].max_threads_per_sm, 2048);
  assert_int_equal(dev[0].l2_size, 52428800);
  assert_int_equal(dev[0].uuid_lo, 0x12345678u);
  assert_int_equal(dev[1].id, 3);
  assert_string_equal(str(f.trace, dev[1].name), "second");
  close_fixture(&f);
}

/* Two GPUs as injection.c reports them when device 1's thread creates its
 * context first: every record lands on the right device, by index into
 * DEVICES where the format says index and by CUDA ordinal where it says
 * ordinal; stall tables, PC data and drop counters stay per device; a
 * device that could not be sampled is named. */
static void test_two_devices(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "two-devices", NULL);
  mprof_device_record info;
  memset(&info, 0, sizeof info);
  info.sm_count = 132;
  mprof_cupti_translate_device_info(f.t, 1, &info, "GPU one");
  info.sm_count = 114;
  mprof_cupti_translate_device_info(f.t, 0, &info, "GPU zero");

  /* Device 1 numbers its reasons differently from device 0. */
  uint32_t indices1[] = {3, 9};
  uint32_t indices0[] = {9, 3};
  char barrier[] = MPROF_STALL_REASON_PREFIX "barrier";
  char long_sb[] = MPROF_STALL_REASON_PREFIX "long_scoreboard";
  char *names[] = {barrier, long_sb};
  assert_int_equal(
      mprof_cupti_translate_stall_reasons(f.t, 1, 2, indices1, names), 0);
  assert_int_equal(
      mprof_cupti_translate_stall_reasons(f.t, 0, 2, indices0, names), 0);

  /* The same kernel and CUDA stream id on both devices' contexts. */
  CUpti_ActivityKernel10 on1 = kernel("_Z4stepPf", 1, 7, 1000, 3000, 1);
  on1.contextId = 2;
  CUpti_ActivityKernel10 on0 = kernel("_Z4stepPf", 0, 7, 1500, 2500, 2);
  CUpti_ActivityKernel10 untimed = kernel("_Z4stepPf", 1, 7, 0, 0, 3);
  untimed.contextId = 2;
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &on1), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &on0), 0);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &untimed), 0);

  /* A peer copy from device 1 into device 0, run by device 0. */
  CUpti_ActivityMemcpyPtoP4 p2p;
  memset(&p2p, 0, sizeof p2p);
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.bytes = 8;
  p2p.start = 3100;
  p2p.end = 3200;
  p2p.deviceId = 0;
  p2p.contextId = 1;
  p2p.streamId = 7;
  p2p.srcDeviceId = 1;
  p2p.dstDeviceId = 0;
  assert_int_equal(mprof_cupti_translate_memcpy_p2p(f.t, &p2p), 0);

  CUpti_PCSamplingStallReason r1[] = {{3, 70}, {9, 30}};
  CUpti_PCSamplingStallReason r0[] = {{9, 5}};
  CUpti_PCSamplingPCData pc1, pc0;
  memset(&pc1, 0, sizeof pc1);
  pc1.size = sizeof pc1;
  pc1.cubinCrc = 0xabcull;
  pc1.pcOffset = 0x40;
  pc1.functionName = (char *)"_Z4stepPf";
  pc1.stallReasonCount = 2;
  pc1.stallReason = r1;
  pc0 = pc1;
  pc0.stallReasonCount = 1;
  pc0.stallReason = r0;
  CUpti_PCSamplingData d1, d0;
  memset(&d1, 0, sizeof d1);
  d1.size = sizeof d1;
  d1.collectNumPcs = 1;
  d1.totalNumPcs = 1;
  d1.pPcData = &pc1;
  d1.totalSamples = 100;
  d1.droppedSamples = 7;
  d0 = d1;
  d0.pPcData = &pc0;
  d0.totalSamples = 5;
  d0.droppedSamples = 0;
  d0.hardwareBufferFull = 1;
  assert_int_equal(mprof_cupti_translate_pc_data(
                       f.t, 1, &d1, mprof_cupti_translate_next_drain(f.t)),
                   0);
  assert_int_equal(mprof_cupti_translate_pc_data(
                       f.t, 0, &d0, mprof_cupti_translate_next_drain(f.t)),
                   0);
  /* Device 3 exists but could not be sampled. */
  mprof_cupti_translate_pc_error(f.t, 3, "CUPTI_ERROR_NOT_SUPPORTED");
  finish_fixture(&f);

  /* DEVICES in order of first mention, each with its ordinal and info. */
  size_t n = 0;
  const mprof_device_record *dev = mprof_trace_devices(f.trace, &n);
  assert_int_equal(n, 3);
  assert_int_equal(dev[0].id, 1);
  assert_string_equal(str(f.trace, dev[0].name), "GPU one");
  assert_int_equal(dev[0].sm_count, 132);
  assert_int_equal(dev[1].id, 0);
  assert_int_equal(dev[1].sm_count, 114);
  assert_int_equal(dev[2].id, 3);

  size_t kernels = 0, streams = 0, shapes = 0;
  const mprof_kernel_record *k = mprof_trace_kernels(f.trace, &kernels);
  const mprof_stream_record *st = mprof_trace_streams(f.trace, &streams);
  const mprof_shape_record *sh = mprof_trace_shapes(f.trace, &shapes);
  assert_int_equal(kernels, 2); /* one name, two devices */
  assert_int_equal(k[0].device, 0);
  assert_int_equal(k[1].device, 1);
  assert_int_equal(streams, 2); /* stream 7 of each context */
  const mprof_launch_record *l = mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 2);
  assert_int_equal(k[sh[l[0].shape].kernel].device, 0); /* ordinal 1 */
  assert_int_equal(st[l[0].stream].device, 0);
  assert_int_equal(st[l[0].stream].context_id, 2);
  assert_int_equal(k[sh[l[1].shape].kernel].device, 1); /* ordinal 0 */
  assert_int_equal(st[l[1].stream].device, 1);
  assert_int_not_equal(l[0].stream, l[1].stream);

  const mprof_memop_record *m = mprof_trace_memops(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(m[0].src_device, 1); /* ordinals, per FORMAT.md */
  assert_int_equal(m[0].dst_device, 0);
  assert_int_equal(st[m[0].stream].device, 1); /* index of ordinal 0 */

  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(f.trace, &n);
  assert_int_equal(n, 4);
  for (size_t i = 0; i < n; i++) {
    uint32_t ordinal = dev[sr[i].device].id;
    const char *name = str(f.trace, sr[i].name);
    /* barrier is index 3 on device 1 and index 9 on device 0. */
    if (strcmp(name, barrier) == 0)
      assert_int_equal(sr[i].index, ordinal == 1 ? 3 : 9);
    else
      assert_int_equal(sr[i].index, ordinal == 1 ? 9 : 3);
  }

  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(f.trace, &n);
  assert_int_equal(n, 3);
  assert_int_equal(pc[0].device, 0);
  assert_int_equal(pc[0].stall_reason, 3);
  assert_int_equal(pc[0].samples, 70);
  assert_int_equal(pc[1].device, 0);
  assert_int_equal(pc[2].device, 1);
  assert_int_equal(pc[2].samples, 5);
  assert_int_not_equal(pc[0].drain, pc[2].drain);

  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_TOTAL_SAMPLES, 0), 100);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_TOTAL_SAMPLES, 1), 5);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_DROPPED_SAMPLES, 0), 7);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_DROPPED_SAMPLES, 1), 0);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_HW_BUFFER_FULL, 0), 0);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_HW_BUFFER_FULL, 1), 1);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, 0), 1);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, 1),
                   UINT64_MAX);
  assert_int_equal(drop_count(f.trace, MPROF_DROP_PC_TOTAL_SAMPLES, 2),
                   UINT64_MAX); /* never sampled: no counters */

  assert_string_equal(mprof_trace_meta(f.trace, "pc.device.3.error"),
                      "CUPTI_ERROR_NOT_SUPPORTED");
  assert_string_equal(mprof_trace_meta(f.trace, "pc.error"),
                      "CUPTI_ERROR_NOT_SUPPORTED");
  assert_null(mprof_trace_meta(f.trace, "pc.device.0.error"));
  close_fixture(&f);
}

static void test_errors_and_finish_once(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "errors", NULL);
  mprof_cupti_translate_meta(f.t, "pc.mode", "continuous");
  assert_int_equal(mprof_cupti_translate_error(
                       f.t, "cuptiPCSamplingEnable: CUPTI_ERROR_NOT_SUPPORTED"),
                   1);
  /* The same failure on every drain is recorded once. */
  assert_int_equal(mprof_cupti_translate_error(
                       f.t, "cuptiPCSamplingEnable: CUPTI_ERROR_NOT_SUPPORTED"),
                   0);
  assert_int_equal(mprof_cupti_translate_error(
                       f.t, "cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN"),
                   1);
  finish_fixture(&f);
  /* After finish everything is a no-op, and finish refuses to run twice. */
  CUpti_ActivityKernel10 k = kernel("_Z4gemmv", 0, 7, 10, 20, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
  assert_int_equal(mprof_cupti_translate_error(f.t, "late"), 0);
  mprof_cupti_translate_meta(f.t, "late", "1");
  assert_int_equal(mprof_cupti_translate_finish(f.t), MPROF_EINVAL);
  assert_true(mprof_cupti_translate_finished(f.t));

  assert_string_equal(mprof_trace_meta(f.trace, "pc.mode"), "continuous");
  assert_string_equal(mprof_trace_meta(f.trace, "error.0"),
                      "cuptiPCSamplingEnable: CUPTI_ERROR_NOT_SUPPORTED");
  assert_string_equal(mprof_trace_meta(f.trace, "error.1"),
                      "cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN");
  assert_null(mprof_trace_meta(f.trace, "error.2"));
  size_t n = 0;
  mprof_trace_launches(f.trace, &n);
  assert_int_equal(n, 0);
  close_fixture(&f);
}

/* The process's PROCESSES record: a trace cut after a checkpoint holds it
 * without an end, owning what was written by then; the finished trace
 * holds its end and exit status and owns every stream and device. */
static void test_process_record(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "process", NULL);
  mprof_process_record who;
  memset(&who, 0, sizeof who);
  who.pid = 77;
  who.ppid = 7;
  who.rank = 2;
  who.local_rank = MPROF_INDEX_NONE;
  who.end = 12345; /* not the producer's to say here: ignored */
  mprof_cupti_translate_process(f.t, &who, "node9", "./app -x");
  mprof_cupti_translate_process_start(f.t, 1000);
  CUpti_ActivityKernel10 k0 = kernel("_Z4gemmv", 0, 7, 1100, 1500, 1);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k0), 0);
  assert_int_equal(mprof_cupti_translate_checkpoint(f.t, 1600), 0);

  /* Killed here: the streamed file opens with the record as of then. */
  char partial[4200];
  snprintf(partial, sizeof partial, "%s.partial", f.path);
  mprof_trace *cut;
  int rc = mprof_trace_open(&cut, partial, NULL);
  if (rc)
    fail_msg("mprof_trace_open: %s", mprof_error_last());
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(cut, &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->pid, 77);
  assert_int_equal(p->start, 1000);
  assert_int_equal(p->end, 0);
  assert_int_equal(p->exit_kind, MPROF_EXIT_UNKNOWN);
  assert_int_equal(p->stream_count, 1);
  assert_int_equal(p->device_count, 1);
  assert_string_equal(str(cut, p->host), "node9");
  assert_int_equal(mprof_trace_stream_process(cut, 0), 0);
  mprof_trace_free(cut);

  /* A second GPU and stream after the checkpoint, then a normal exit. */
  CUpti_ActivityKernel10 k1 = kernel("_Z4gemmv", 1, 9, 2000, 2500, 2);
  assert_int_equal(mprof_cupti_translate_kernel(f.t, &k1), 0);
  mprof_cupti_translate_process_end(f.t, 5000, MPROF_EXIT_STATUS, 3);
  finish_fixture(&f);
  p = (const mprof_process_record *)mprof_trace_section(
      f.trace, MPROF_SECTION_PROCESSES, &n);
  assert_int_equal(n, 1);
  assert_int_equal(p->start, 1000);
  assert_int_equal(p->end, 5000);
  assert_int_equal(p->exit_kind, MPROF_EXIT_STATUS);
  assert_int_equal(p->exit_value, 3);
  assert_int_equal(p->stream_count, 2);
  assert_int_equal(p->device_count, 2);
  assert_string_equal(str(f.trace, p->cmdline), "./app -x");
  assert_string_equal(mprof_trace_process_meta(f.trace, 0, "ppid"), "7");
  assert_string_equal(mprof_trace_process_meta(f.trace, 0, "rank"), "2");
  assert_null(mprof_trace_process_meta(f.trace, 0, "local_rank"));
  assert_int_equal(mprof_trace_stream_process(f.trace, 1), 0);
  assert_int_equal(mprof_trace_device_process(f.trace, 1), 0);
  close_fixture(&f);
}

/* The capture window (CAPTURE): as of the last checkpoint in a cut trace
 * (still open), as it ended in the finished one; `mprof info` says it. */
static void test_capture_record(void **state) {
  (void)state;
  fixture f;
  open_fixture(&f, "capture", NULL);
  mprof_process_record who;
  memset(&who, 0, sizeof who);
  who.pid = 78;
  who.ppid = 7;
  who.rank = who.local_rank = MPROF_INDEX_NONE;
  mprof_cupti_translate_process(f.t, &who, "node9", "python train.py");
  const uint64_t s = 1000000000ull;
  mprof_cupti_translate_process_start(f.t, s);
  mprof_cupti_capture_settings settings;
  memset(&settings, 0, sizeof settings);
  char why[256];
  assert_int_equal(
      mprof_cupti_capture_parse_range(&settings, "nvtx:step", why, sizeof why),
      0);
  settings.range_skip = 1;
  settings.range_count = 2;
  mprof_cupti_capture c;
  assert_int_equal(
      mprof_cupti_capture_init(&c, &settings, NULL, why, sizeof why), 0);
  mprof_cupti_capture_begin(&c, s);
  mprof_capture_record rec;
  for (int i = 0; i < 2; i++) { /* step 1 skipped, step 2 recorded */
    mprof_cupti_capture_push(&c, 5, "step", NULL,
                             s + (uint64_t)(i + 1) * s / 2);
    mprof_cupti_capture_pop(&c, 5, s + (uint64_t)(i + 1) * s / 2 + s / 4);
  }
  mprof_cupti_capture_push(&c, 5, "step", NULL, 2 * s + s / 2);
  mprof_cupti_capture_record(&c, &rec);
  mprof_cupti_translate_capture(f.t, &rec, settings.spec);
  assert_int_equal(mprof_cupti_translate_checkpoint(f.t, 2 * s + s / 2), 0);

  char partial[4200];
  snprintf(partial, sizeof partial, "%s.partial", f.path);
  mprof_trace *cut;
  if (mprof_trace_open(&cut, partial, NULL))
    fail_msg("mprof_trace_open: %s", mprof_error_last());
  size_t n;
  const mprof_capture_record *w = mprof_trace_captures(cut, &n);
  assert_int_equal(n, 1);
  assert_int_equal(w->start, 2 * s); /* step 2 began */
  assert_int_equal(w->end, 0);       /* recording when cut */
  assert_int_equal(w->end_reason, MPROF_CAPTURE_END_OPEN);
  assert_int_equal(w->recorded, 2);
  mprof_trace_free(cut);

  mprof_cupti_capture_pop(&c, 5, 3 * s);
  mprof_cupti_capture_finish(&c, 4 * s);
  mprof_cupti_capture_record(&c, &rec);
  mprof_cupti_translate_capture(f.t, &rec, settings.spec);
  mprof_cupti_capture_free(&c);
  mprof_cupti_translate_process_end(f.t, 4 * s, MPROF_EXIT_STATUS, 0);
  finish_fixture(&f);
  w = mprof_trace_captures(f.trace, &n);
  assert_int_equal(n, 1);
  assert_int_equal(w->trigger, MPROF_CAPTURE_NVTX);
  assert_int_equal(w->end_reason, MPROF_CAPTURE_END_RANGE_COUNT);
  assert_int_equal(w->end, 3 * s);
  assert_int_equal(w->pieces, 2);
  assert_string_equal(str(f.trace, w->spec), "nvtx:step");

  const char *mprof = getenv("MPROF_BIN"); /* set by ctest */
  assert_non_null(mprof);
  char command[9000], line[1024];
  snprintf(command, sizeof command, "'%s' info '%s'", mprof, f.path);
  FILE *info = popen(command, "r");
  assert_non_null(info);
  int found = 0;
  const char *want = "window 0   nvtx:step: ranges 2-3 recorded, from 1.000 s "
                     "to 2.000 s of the process in 2 pieces; ended after "
                     "--range-count 2\n";
  while (fgets(line, sizeof line, info))
    found |= strcmp(line, want) == 0;
  assert_int_equal(pclose(info), 0);
  if (!found)
    fail_msg("mprof info does not print: %s", want);
  close_fixture(&f);
}

/* ---- a signal while the trace is finished --------------------------------
 * A fatal signal on another thread calls the handler's checkpoint while the
 * exit handler finishes the trace: the handler must never touch the writer
 * finish frees, and the finished trace must be whole. The thread below
 * calls the handler's entry point without pause, as a signal could at any
 * moment; under ASan or TSan the old code (reading the writer pointer that
 * finish freed) fails here. */

typedef struct signal_loop {
  mprof_cupti_translate *t;
  atomic_int stop;
  atomic_uint committed; /* checkpoints the "handler" wrote */
  atomic_uint refused;   /* EIO (writer busy) or EINVAL (writer gone) */
} signal_loop;

static void *call_handler_checkpoints(void *arg) {
  signal_loop *loop = (signal_loop *)arg;
  while (!atomic_load(&loop->stop)) {
    if (mprof_cupti_translate_checkpoint_signal(loop->t, SIGTERM, 1) == 0)
      atomic_fetch_add(&loop->committed, 1);
    else
      atomic_fetch_add(&loop->refused, 1);
  }
  return NULL;
}

static void test_signal_checkpoints_while_finishing(void **state) {
  (void)state;
  unsigned committed = 0;
  for (int round = 0; round < 20; round++) {
    fixture f;
    open_fixture(&f, "signal-finish", NULL);
    for (uint32_t i = 0; i < 2000; i++) {
      CUpti_ActivityKernel10 k =
          kernel("_Z4stepv", 0, 7, 1000 + 10 * i, 1005 + 10 * i, i + 1);
      assert_int_equal(mprof_cupti_translate_kernel(f.t, &k), 0);
    }
    signal_loop loop;
    memset(&loop, 0, sizeof loop);
    loop.t = f.t;
    atomic_init(&loop.stop, 0);
    atomic_init(&loop.committed, 0);
    atomic_init(&loop.refused, 0);
    pthread_t thread;
    assert_int_equal(
        pthread_create(&thread, NULL, call_handler_checkpoints, &loop), 0);
    /* Let the "handler" commit a few times before finish starts. */
    while (atomic_load(&loop.committed) + atomic_load(&loop.refused) < 3)
      sched_yield();
    finish_fixture(&f);
    atomic_store(&loop.stop, 1);
    pthread_join(thread, NULL);
    committed += atomic_load(&loop.committed);
    size_t n = 0;
    mprof_trace_launches(f.trace, &n);
    assert_int_equal(n, 2000);
    assert_int_equal(mprof_trace_partial(f.trace, NULL), 0);
    /* Once finished, the handler's checkpoint finds no writer. */
    assert_int_equal(mprof_cupti_translate_checkpoint_signal(f.t, SIGINT, 2),
                     MPROF_EINVAL);
    close_fixture(&f);
  }
  assert_true(committed > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernels),
      cmocka_unit_test(test_memops),
      cmocka_unit_test(test_markers),
      cmocka_unit_test(test_many_open_ranges),
      cmocka_unit_test(test_api_calls),
      cmocka_unit_test(test_pc_samples),
      cmocka_unit_test(test_kernel_regex),
      cmocka_unit_test(test_bad_regex_keeps_everything),
      cmocka_unit_test(test_devices_merge),
      cmocka_unit_test(test_two_devices),
      cmocka_unit_test(test_errors_and_finish_once),
      cmocka_unit_test(test_pc_samples_summed_per_checkpoint),
      cmocka_unit_test(test_process_record),
      cmocka_unit_test(test_capture_record),
      cmocka_unit_test(test_signal_checkpoints_while_finishing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
