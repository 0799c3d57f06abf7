/*
 * mprof tests — writer → reader round trips and the reader's validation.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "future_trace.h"
#include "test_util.h"

#include "mprof/mprof.h"
#include "mprof/synth.h"

/* Write a small trace holding at least one record of every type. */
static void write_every_record(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "tool", "test"), 0);
  assert_int_equal(mprof_writer_meta(w, "host", "box-7"), 0);

  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.id = 3;
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.global_memory = 150ull << 30;
  uint32_t d;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  assert_int_equal(d, 0);

  mprof_stream_record st = {d, 1, 13, mprof_writer_string(w, "compute")};
  uint32_t s;
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.mangled_name = mprof_writer_string(w, "_Z4gemmPfS_S_i");
  k.demangled_name =
      mprof_writer_string(w, "gemm(float*, float*, float*, int)");
  k.cubin_crc = 0xabcdef0123ull;
  k.function_index = 7;
  k.device = d;
  k.registers = 96;
  uint32_t ki;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = ki;
  sh.grid[0] = 264;
  sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 256;
  sh.block[1] = sh.block[2] = 1;
  sh.dynamic_shared = 49152;
  uint32_t shi, again;
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  /* Interning the same shape again gives the same index. */
  assert_int_equal(mprof_writer_intern(w, &again, MPROF_SECTION_SHAPES, &sh),
                   0);
  assert_int_equal(again, shi);

  for (uint32_t i = 0; i < 3; i++) {
    mprof_launch_record l = {1000 + 100 * i, 1050 + 100 * i, shi, s, 10 + i,
                             i == 2 ? 5 : 0, i == 2 ? 99 : 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_memop_record mo;
  memset(&mo, 0, sizeof mo);
  mo.start = 900;
  mo.end = 990;
  mo.bytes = 1 << 20;
  mo.stream = s;
  mo.kind = MPROF_MEMOP_MEMCPY;
  mo.copy_kind = MPROF_COPY_HTOD;
  mo.src_device = MPROF_INDEX_NONE;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo), 0);
  mprof_range_record r = {
      950, 1400, mprof_writer_string(w, "forward"), 0, 42, 0, 0xff00ff00u, 0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
  mprof_api_call_record ac[2] = {
      {980, 995, 10, 42, mprof_writer_string(w, "cudaLaunchKernel"),
       MPROF_API_RUNTIME},
      {1082, 1090, 11, 42, mprof_writer_string(w, "cuLaunchKernel"),
       MPROF_API_DRIVER}};
  for (int i = 0; i < 2; i++)
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &ac[i]), 0);
  mprof_memory_access_record ma = {
      ki, 0x1a0, MPROF_MEMORY_READ, 4, 100, 3200, 12800, 3200};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma), 0);
  mprof_region_record rg = {mprof_writer_string(w, "loader"), 0xff3366ccu,
                            MPROF_ROLE_LOADER, 0};
  uint32_t rgi;
  assert_int_equal(mprof_writer_intern(w, &rgi, MPROF_SECTION_REGIONS, &rg), 0);
  mprof_span_record sp = {1001, 1020, 0, 17, 4, MPROF_INDEX_NONE, rgi, 0, 77};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp), 0);
  mprof_stall_reason_record sr = {
      d, 6,
      mprof_writer_string(w,
                          "smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
      0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
  mprof_pc_sample_record pc = {
      0xabcdef0123ull, k.mangled_name, 7, 0x1a0, 6, 1234, 0, d, 1};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc),
                   0);
  const char elf[] = "\x7f"
                     "ELF fake cubin bytes";
  mprof_cubin_record cb = {0xabcdef0123ull, 0, 0,
                           14000000,        d, MPROF_CUBIN_KEPT_WHOLE};
  assert_int_equal(mprof_writer_cubin(w, &cb, elf, sizeof elf), 0);
  /* Same CRC again is deduplicated. */
  assert_int_equal(mprof_writer_cubin(w, &cb, elf, sizeof elf), 0);
  mprof_cubin_record omitted = {0x1111ull, 0, 0, 5000, d, 0};
  assert_int_equal(mprof_writer_cubin(w, &omitted, NULL, 0), 0);
  mprof_pm_metric_record pm = {
      d,
      0,
      mprof_writer_string(w, "gpu__dram_throughput.avg.pct_of_peak_sustained_"
                             "elapsed"),
      mprof_writer_string(w, "percent"),
      10000,
      0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PM_METRICS, &pm),
                   0);
  for (uint32_t i = 0; i < 2; i++) {
    mprof_pm_sample_record ps;
    memset(&ps, 0, sizeof ps);
    ps.start = 1000 + 10 * i;
    ps.end = 1010 + 10 * i;
    ps.device = d;
    ps.value[0] = 87.5f + (float)i;
    assert_int_equal(
        mprof_writer_append(w, NULL, MPROF_SECTION_PM_SAMPLES, &ps), 0);
  }
  assert_int_equal(mprof_writer_drop(w, MPROF_DROP_PM_OVERFLOW, d, 1), 0);
  assert_int_equal(mprof_writer_drop(w, MPROF_DROP_PC_DROPPED_SAMPLES, d, 5),
                   0);
  assert_int_equal(mprof_writer_drop(w, MPROF_DROP_PC_DROPPED_SAMPLES, d, 2),
                   0);
  assert_int_equal(
      mprof_writer_drop(w, MPROF_DROP_ACTIVITY_RECORDS, MPROF_INDEX_NONE, 1),
      0);
  mprof_process_record pr;
  memset(&pr, 0, sizeof pr);
  pr.start = 800;
  pr.end = 1300;
  pr.pid = 4242;
  pr.ppid = 1;
  pr.rank = 3;
  pr.local_rank = MPROF_INDEX_NONE;
  pr.host = mprof_writer_string(w, "box-7");
  pr.cmdline = mprof_writer_string(w, "./gemm --size 4096");
  pr.exit_kind = MPROF_EXIT_STATUS;
  pr.exit_value = 2;
  pr.first_stream = s;
  pr.stream_count = 1;
  pr.first_device = d;
  pr.device_count = 1;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &pr),
                   0);
  mprof_capture_record cap;
  memset(&cap, 0, sizeof cap);
  cap.start = 900;
  cap.end = 1200;
  cap.skip = 1000;
  cap.count = 4;
  cap.recorded = 4;
  cap.seen = 1004;
  cap.process = 0;
  cap.trigger = MPROF_CAPTURE_NVTX;
  cap.end_reason = MPROF_CAPTURE_END_RANGE_COUNT;
  cap.pieces = 4;
  cap.spec = mprof_writer_string(w, "nvtx:step");
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_CAPTURE, &cap),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void test_round_trip_every_record(void **state) {
  (void)state;
  const char *path = test_path("every.mprof");
  write_every_record(path);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n;
  assert_string_equal(mprof_trace_meta(t, "host"), "box-7");
  assert_null(mprof_trace_meta(t, "absent"));
  const mprof_device_record *dev = mprof_trace_devices(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(dev->id, 3);
  assert_string_equal(mprof_trace_string(t, dev->name), "NVIDIA H200");
  assert_int_equal(dev->global_memory, 150ull << 30);
  const mprof_stream_record *st = mprof_trace_streams(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(st->stream_id, 13);
  assert_string_equal(mprof_trace_string(t, st->name), "compute");
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  assert_int_equal(n, 1);
  assert_string_equal(mprof_trace_string(t, k->demangled_name),
                      "gemm(float*, float*, float*, int)");
  assert_int_equal(k->registers, 96);
  const mprof_shape_record *sh = mprof_trace_shapes(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(sh->grid[0], 264);
  assert_int_equal(sh->dynamic_shared, 49152);
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  assert_int_equal(n, 3);
  assert_int_equal(l[2].start, 1200);
  assert_int_equal(l[2].end, 1250);
  assert_int_equal(l[2].graph_node_id, 99);
  assert_true(mprof_trace_flags(t) & MPROF_FILE_FLAG_LAUNCHES_SORTED);
  const mprof_memop_record *mo = mprof_trace_memops(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(mo->bytes, 1 << 20);
  assert_int_equal(mo->copy_kind, MPROF_COPY_HTOD);
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  assert_int_equal(n, 1);
  assert_string_equal(mprof_trace_string(t, r->name), "forward");
  assert_int_equal(r->color, 0xff00ff00u);
  const mprof_api_call_record *ac = mprof_trace_api_calls(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(ac[0].start, 980);
  assert_int_equal(ac[0].end, 995);
  assert_int_equal(ac[0].correlation_id, 10);
  assert_int_equal(ac[0].thread_id, r->thread_id);
  assert_string_equal(mprof_trace_string(t, ac[0].name), "cudaLaunchKernel");
  assert_int_equal(ac[0].kind, MPROF_API_RUNTIME);
  assert_string_equal(mprof_trace_string(t, ac[1].name), "cuLaunchKernel");
  assert_int_equal(ac[1].kind, MPROF_API_DRIVER);
  assert_string_equal(mprof_section_name(MPROF_SECTION_API_CALLS), "API_CALLS");
  const mprof_memory_access_record *ma = mprof_trace_memory_accesses(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(ma->pc_offset, 0x1a0);
  assert_int_equal(ma->sectors, 3200);
  assert_string_equal(mprof_section_name(MPROF_SECTION_MEMORY_ACCESSES),
                      "MEMORY_ACCESSES");
  const mprof_region_record *rg = mprof_trace_regions(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(rg->role, MPROF_ROLE_LOADER);
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(sp->sm, 17);
  assert_int_equal(sp->payload, 77);
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &n);
  assert_int_equal(n, 1);
  assert_string_equal(mprof_trace_string(t, sr->name),
                      "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(pc->samples, 1234);
  assert_int_equal(pc->pc_offset, 0x1a0);
  assert_string_equal(mprof_trace_string(t, pc->function_name),
                      "_Z4gemmPfS_S_i");
  const mprof_cubin_record *cb = mprof_trace_cubins(t, &n);
  assert_int_equal(n, 2);
  size_t blob_size;
  const char *blob =
      (const char *)mprof_trace_cubin_blob(t, &cb[0], &blob_size);
  assert_int_equal(blob_size, sizeof("\x7f"
                                     "ELF fake cubin bytes"));
  assert_memory_equal(blob,
                      "\x7f"
                      "ELF fake cubin bytes",
                      blob_size);
  assert_true(cb[1].flags & MPROF_CUBIN_OMITTED);
  assert_null(mprof_trace_cubin_blob(t, &cb[1], &blob_size));
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_PC_DROPPED_SAMPLES), 7);
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_RECORDS), 1);
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_PM_OVERFLOW), 1);
  const mprof_pm_metric_record *pm = mprof_trace_pm_metrics(t, &n);
  assert_int_equal(n, 1);
  assert_string_equal(mprof_trace_string(t, pm->unit), "percent");
  assert_int_equal(pm->interval_ns, 10000);
  const mprof_pm_sample_record *ps = mprof_trace_pm_samples(t, &n);
  assert_int_equal(n, 2);
  assert_int_equal(ps[1].start, 1010);
  assert_true(ps[1].value[0] == 88.5f);
  const mprof_process_record *pr = mprof_trace_processes(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(pr->start, 800);
  assert_int_equal(pr->end, 1300);
  assert_int_equal(pr->exit_kind, MPROF_EXIT_STATUS);
  assert_int_equal(pr->exit_value, 2);
  assert_string_equal(mprof_trace_string(t, pr->cmdline), "./gemm --size 4096");
  assert_string_equal(mprof_section_name(MPROF_SECTION_PROCESSES), "PROCESSES");
  const mprof_capture_record *cap = mprof_trace_captures(t, &n);
  assert_int_equal(n, 1);
  assert_int_equal(cap->start, 900);
  assert_int_equal(cap->end, 1200);
  assert_int_equal(cap->skip, 1000);
  assert_int_equal(cap->recorded, 4);
  assert_int_equal(cap->trigger, MPROF_CAPTURE_NVTX);
  assert_string_equal(mprof_trace_string(t, cap->spec), "nvtx:step");
  assert_string_equal(mprof_capture_end_name(cap->end_reason), "range_count");
  assert_string_equal(mprof_capture_end_name(77), "unknown");
  assert_string_equal(mprof_section_name(MPROF_SECTION_CAPTURE), "CAPTURE");
  /* The process accessors read the record, not META. */
  assert_string_equal(mprof_trace_process_meta(t, 0, "pid"), "4242");
  assert_string_equal(mprof_trace_process_meta(t, 0, "rank"), "3");
  assert_null(mprof_trace_process_meta(t, 0, "local_rank"));
  assert_string_equal(mprof_trace_process_meta(t, 0, "path"), path);
  assert_int_equal(mprof_trace_stream_process(t, 0), 0);
  assert_int_equal(mprof_trace_device_process(t, 0), 0);
  uint64_t t0, t1;
  mprof_trace_time_bounds(t, &t0, &t1);
  assert_int_equal(t0, 900);
  assert_int_equal(t1, 1250);
  mprof_trace_free(t);
  unlink(path);
}

static void test_million_launches(void **state) {
  (void)state;
  const char *path = test_path("million.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 1000000;
  opts.streams = 4;
  opts.kernels = 12;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  size_t n, streams;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  mprof_trace_streams(t, &streams);
  assert_int_equal(n, 1000000);
  assert_int_equal(streams, 4);
  /* A trace without API_CALLS (as every trace before the section) opens;
   * the calls are simply absent. */
  size_t calls = 99;
  assert_null(mprof_trace_api_calls(t, &calls));
  assert_int_equal(calls, 0);
  calls = 99;
  assert_null(mprof_trace_memory_accesses(t, &calls));
  assert_int_equal(calls, 0);
  /* 40 bytes per launch plus small tables. */
  assert_true(mprof_trace_file_size(t) < 1000000ull * 48);
  size_t total = 0;
  for (uint32_t s = 0; s < streams; s++)
    total += mprof_trace_stream_launch_count(t, s);
  assert_int_equal(total, n);
  /* The time-range lookup agrees with a brute-force scan. */
  uint64_t t0, t1;
  mprof_trace_time_bounds(t, &t0, &t1);
  for (int probe = 0; probe < 20; probe++) {
    uint64_t a = t0 + (t1 - t0) / 20 * (uint64_t)probe;
    uint64_t b = a + 50000 + 1000 * (uint64_t)probe;
    size_t first, last;
    assert_int_equal(mprof_trace_stream_find(t, &first, &last, 1, a, b), 0);
    size_t expect = 0;
    for (size_t i = 0; i < n; i++)
      if (l[i].stream == 1 && l[i].start < b && l[i].end > a)
        expect++;
    assert_int_equal(last - first, expect);
    for (size_t p = first; p < last; p++) {
      const mprof_launch_record *x = mprof_trace_stream_launch(t, 1, p);
      assert_true(x->start < b && x->end > a);
    }
  }
  mprof_trace_free(t);
  unlink(path);
}

static void test_unsorted_launches_get_an_order(void **state) {
  (void)state;
  const char *path = test_path("unsorted.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.device = MPROF_INDEX_NONE;
  k.mangled_name = mprof_writer_string(w, "k");
  uint32_t ki, shi, s0, s1;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = ki;
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  mprof_stream_record a = {MPROF_INDEX_NONE, 1, 1, 0},
                      b = {MPROF_INDEX_NONE, 1, 2, 0};
  assert_int_equal(mprof_writer_intern(w, &s0, MPROF_SECTION_STREAMS, &a), 0);
  assert_int_equal(mprof_writer_intern(w, &s1, MPROF_SECTION_STREAMS, &b), 0);
  /* CUPTI delivers buffers out of order: interleave streams, reverse times. */
  uint64_t starts[] = {500, 100, 300, 200, 400, 0};
  for (int i = 0; i < 6; i++) {
    mprof_launch_record l = {
        starts[i], starts[i] + 50, shi, (uint32_t)(i & 1), (uint32_t)i, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_false(mprof_trace_flags(t) & MPROF_FILE_FLAG_LAUNCHES_SORTED);
  assert_int_equal(mprof_trace_stream_launch_count(t, 0), 3);
  assert_int_equal(mprof_trace_stream_launch(t, 0, 0)->start, 300);
  assert_int_equal(mprof_trace_stream_launch(t, 0, 2)->start, 500);
  assert_int_equal(mprof_trace_stream_launch(t, 1, 0)->start, 0);
  assert_int_equal(mprof_trace_stream_launch(t, 1, 2)->start, 200);
  assert_null(mprof_trace_stream_launch(t, 1, 3));
  size_t first, last;
  assert_int_equal(mprof_trace_stream_find(t, &first, &last, 1, 120, 210), 0);
  assert_int_equal(first, 1); /* 100..150 */
  assert_int_equal(last, 3);  /* and 200..250 */
  mprof_trace_free(t);
  unlink(path);
}

/* Every prefix of a valid trace is refused with EFORMAT and a message that
 * names the file; nothing crashes or leaks (the suite also runs under ASan). */
static void test_truncation_sweep(void **state) {
  (void)state;
  const char *path = test_path("trunc-src.mprof");
  const char *cut = test_path("trunc.mprof");
  write_every_record(path);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  assert_non_null(data);
  for (size_t len = 0; len < size; len++) {
    assert_int_equal(test_write_file(cut, data, len), 0);
    mprof_trace *t = NULL;
    int rc = mprof_trace_open(&t, cut, NULL);
    assert_int_equal(rc, MPROF_EFORMAT);
    assert_null(t);
    assert_non_null(strstr(mprof_error_last(), cut));
    assert_non_null(strstr(mprof_error_last(), "at byte"));
  }
  free(data);
  unlink(path);
  unlink(cut);
}

/* A flipped byte inside any section is caught by that section's checksum,
 * and the message names the section. */
static void test_flipped_byte_in_every_section(void **state) {
  (void)state;
  const char *path = test_path("flip-src.mprof");
  const char *bad = test_path("flip.mprof");
  write_every_record(path);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  assert_non_null(data);
  const mprof_file_header *h = (const mprof_file_header *)data;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(data + h->directory_offset);
  /* Every section a finished file holds (OPEN_RANGES lives in streamed
   * files only). */
  assert_true(h->section_count >= MPROF_SECTION_MEMORY_ACCESSES);
  for (uint32_t i = 0; i < h->section_count; i++) {
    size_t at = (size_t)(dir[i].offset + dir[i].length / 2);
    data[at] ^= 0x40;
    assert_int_equal(test_write_file(bad, data, size), 0);
    mprof_trace *t = NULL;
    assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
    char want[64];
    snprintf(want, sizeof want, "%s at byte", mprof_section_name(dir[i].type));
    assert_non_null(strstr(mprof_error_last(), want));
    assert_non_null(strstr(mprof_error_last(), "checksum"));
    data[at] ^= 0x40;
  }
  /* The directory and header have their own checksums. */
  data[h->directory_offset + 3] ^= 1;
  assert_int_equal(test_write_file(bad, data, size), 0);
  mprof_trace *t = NULL;
  assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "directory"));
  data[h->directory_offset + 3] ^= 1;
  data[20] ^= 1;
  assert_int_equal(test_write_file(bad, data, size), 0);
  assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "header"));
  free(data);
  unlink(path);
  unlink(bad);
}

/* With checksums off, a corrupt index is still caught by the reference check.
 */
static void test_bad_reference_without_checksums(void **state) {
  (void)state;
  const char *path = test_path("ref-src.mprof");
  const char *bad = test_path("ref.mprof");
  write_every_record(path);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  const mprof_file_header *h = (const mprof_file_header *)data;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(data + h->directory_offset);
  for (uint32_t i = 0; i < h->section_count; i++) {
    if (dir[i].type != MPROF_SECTION_LAUNCHES)
      continue;
    mprof_launch_record *l = (mprof_launch_record *)(data + dir[i].offset);
    l[1].shape = 9;
  }
  assert_int_equal(test_write_file(bad, data, size), 0);
  mprof_open_options opts = MPROF_OPEN_OPTIONS_INIT;
  opts.flags = MPROF_OPEN_NO_CHECKSUMS;
  mprof_trace *t = NULL;
  assert_int_equal(mprof_trace_open(&t, bad, &opts), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "LAUNCHES at byte"));
  assert_non_null(strstr(mprof_error_last(), "shape 9 does not exist"));
  free(data);
  unlink(path);
  unlink(bad);
}

static void test_wrong_magic_and_version(void **state) {
  (void)state;
  const char *path = test_path("ver-src.mprof");
  const char *bad = test_path("ver.mprof");
  write_every_record(path);
  size_t size = 0;
  unsigned char *data = test_read_file(path, &size);
  mprof_file_header *h = (mprof_file_header *)data;
  h->version_major = 2;
  h->header_checksum = mprof_crc32c(0, h, 40);
  assert_int_equal(test_write_file(bad, data, size), 0);
  mprof_trace *t = NULL;
  assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EVERSION);
  assert_non_null(strstr(mprof_error_last(), "format version 2."));
  memcpy(data, "PK\003\004", 4);
  assert_int_equal(test_write_file(bad, data, size), 0);
  assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "not an mprof trace"));
  assert_int_equal(mprof_trace_open(&t, test_path("does-not-exist"), NULL),
                   MPROF_ENOTFOUND);
  assert_non_null(strstr(mprof_error_last(), "No such file"));
  free(data);
  unlink(path);
  unlink(bad);
}

static void test_nothing_under_final_name_until_finish(void **state) {
  (void)state;
  const char *path = test_path("atomic.mprof");
  char partial[1100];
  snprintf(partial, sizeof partial, "%s.partial", path);
  struct stat st;
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_writer_meta(w, "k", "v");
  assert_int_equal(stat(path, &st), -1);
  assert_int_equal(stat(partial, &st), 0);
  mprof_writer_abort(w);
  assert_int_equal(stat(path, &st), -1);
  assert_int_equal(stat(partial, &st), -1);
  /* file_flags is ignored: a caller's STREAMED (or unknown) bit must not
   * reach the finished header, which would make the file unreadable. */
  mprof_writer_options wo = MPROF_WRITER_OPTIONS_INIT;
  wo.file_flags = MPROF_FILE_FLAG_STREAMED | 0x80u;
  assert_int_equal(mprof_writer_open(&w, path, &wo), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(stat(partial, &st), -1);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_trace_flags(t), MPROF_FILE_FLAG_LAUNCHES_SORTED);
  mprof_trace_free(t);
  unlink(path);
  /* A folder that does not exist: a clear error naming the path. */
  assert_int_equal(mprof_writer_open(&w, "/nonexistent-dir/x.mprof", NULL),
                   MPROF_EIO);
  assert_non_null(strstr(mprof_error_last(), "/nonexistent-dir/x.mprof"));
}

static void test_errors_and_version(void **state) {
  (void)state;
  mprof_error_clear();
  assert_non_null(mprof_error_last());
  assert_string_equal(mprof_error_last(), "");
  assert_string_equal(mprof_status_name(MPROF_EFORMAT), "EFORMAT");
  assert_string_equal(mprof_status_name(-99), "EUNKNOWN");
  assert_string_equal(mprof_version(), MPROF_VERSION_STRING);
  assert_int_equal(mprof_version_number(), MPROF_VERSION_NUMBER);
  mprof_open_options o;
  assert_int_equal(mprof_open_options_init(&o, 99), MPROF_EVERSION);
  assert_int_equal(mprof_error_last_status(), MPROF_EVERSION);
  assert_string_equal(mprof_error_last(),
                      "open options version 99 is not supported (this mprof "
                      "reads version 1; build against its headers and start "
                      "from the struct's *_INIT macro)");
  /* Every versioned struct says it in the same words. */
  mprof_writer_options wo = MPROF_WRITER_OPTIONS_INIT;
  wo.version = 4;
  mprof_writer *w = NULL;
  assert_int_equal(mprof_writer_open(&w, test_path("v.mprof"), &wo),
                   MPROF_EVERSION);
  assert_null(w);
  assert_non_null(strstr(mprof_error_last(),
                         "writer options version 4 is not supported (this "
                         "mprof reads versions 1 to 3;"));
  assert_int_equal(mprof_open_options_init(&o, MPROF_OPEN_OPTIONS_VERSION), 0);
  /* CRC-32C check value from the standard ("123456789"). */
  assert_int_equal(mprof_crc32c(0, "123456789", 9), 0xe3069283u);
  unsigned char big[10000];
  for (size_t i = 0; i < sizeof big; i++)
    big[i] = (unsigned char)(i * 7);
  uint32_t whole = mprof_crc32c(0, big, sizeof big);
  uint32_t parts =
      mprof_crc32c(mprof_crc32c(0, big, 4097), big + 4097, sizeof big - 4097);
  assert_int_equal(whole, parts);
}

static void test_synth_is_deterministic(void **state) {
  (void)state;
  const char *a = test_path("synth-a.mprof");
  const char *b = test_path("synth-b.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 5000;
  opts.devices = 2;
  assert_int_equal(mprof_synth_write(a, &opts), 0);
  assert_int_equal(mprof_synth_write(b, &opts), 0);
  size_t sa, sb;
  unsigned char *da = test_read_file(a, &sa);
  unsigned char *db = test_read_file(b, &sb);
  assert_int_equal(sa, sb);
  assert_memory_equal(da, db, sa);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, a, NULL), 0);
  size_t n;
  mprof_trace_devices(t, &n);
  assert_int_equal(n, 2);
  mprof_trace_launches(t, &n);
  assert_int_equal(n, 5000);
  mprof_trace_stall_reasons(t, &n);
  assert_int_equal(n, 2 * 38);
  assert_true(mprof_trace_drop_total(t, MPROF_DROP_PC_TOTAL_SAMPLES) > 0);
  mprof_trace_free(t);
  free(da);
  free(db);
  unlink(a);
  unlink(b);
}

/* MEMORY_ACCESSES records that cannot be true are refused by name. */
static void test_memory_accesses_checked(void **state) {
  (void)state;
  static const struct {
    mprof_memory_access_record rec;
    const char *says;
  } bad[] = {
      {{3, 0x10, MPROF_MEMORY_READ, 4, 1, 32, 128, 4},
       "kernel 3 does not exist"},
      {{0, 0x10, 0x40, 4, 1, 32, 128, 4}, "unknown flags 0x40"},
      {{0, 0x10, MPROF_MEMORY_READ, 4, 8, 32, 128, 4}, "cannot go together"},
      {{0, 0x10, MPROF_MEMORY_READ, 4, 1, 32, 128, 65}, "cannot go together"},
  };
  const char *path = test_path("memory-bad.mprof");
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mprof_writer *w;
    assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
    mprof_kernel_record k;
    memset(&k, 0, sizeof k);
    k.device = MPROF_INDEX_NONE;
    k.function_index = MPROF_INDEX_NONE;
    k.mangled_name = mprof_writer_string(w, "_Z1kv");
    uint32_t ki;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES,
                                         &bad[i].rec),
                     0);
    assert_int_equal(mprof_writer_finish(w), 0);
    mprof_trace *t = NULL;
    assert_int_equal(mprof_trace_open(&t, path, NULL), MPROF_EFORMAT);
    assert_non_null(strstr(mprof_error_last(), "MEMORY_ACCESSES"));
    assert_non_null(strstr(mprof_error_last(), bad[i].says));
  }
}

static void test_rewrite_sorts_and_drops_code(void **state) {
  (void)state;
  const char *path = test_path("rw-src.mprof");
  const char *out = test_path("rw.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_writer_meta(w, "tool", "rewrite test");
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.device = MPROF_INDEX_NONE;
  k.mangled_name = mprof_writer_string(w, "_Z6kernelv");
  uint32_t ki, shi, s0, s1, rg;
  assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &k), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  assert_int_equal(mprof_writer_intern(w, &shi, MPROF_SECTION_SHAPES, &sh), 0);
  mprof_stream_record a = {MPROF_INDEX_NONE, 1, 1, 0},
                      b = {MPROF_INDEX_NONE, 1, 2, 0};
  mprof_writer_intern(w, &s0, MPROF_SECTION_STREAMS, &a);
  mprof_writer_intern(w, &s1, MPROF_SECTION_STREAMS, &b);
  mprof_region_record region = {mprof_writer_string(w, "consumer"), 0,
                                MPROF_ROLE_CONSUMER, 0};
  mprof_writer_intern(w, &rg, MPROF_SECTION_REGIONS, &region);
  /* Launch 0 is the latest on stream 1; launch 2 the earliest on stream 0. */
  mprof_launch_record l0 = {900, 950, shi, s1, 1, 0, 0};
  mprof_launch_record l1 = {100, 150, shi, s1, 2, 0, 0};
  mprof_launch_record l2 = {50, 60, shi, s0, 3, 0, 0};
  mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l0);
  mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l1);
  mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l2);
  mprof_span_record sp = {910, 920, 0, 3, 0, MPROF_INDEX_NONE, rg, 0, 5};
  mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
  mprof_api_call_record call = {40,
                                45,
                                3,
                                7,
                                mprof_writer_string(w, "cudaLaunchKernel"),
                                MPROF_API_RUNTIME};
  mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &call);
  mprof_memory_access_record ma = {ki,  0x30, MPROF_MEMORY_WRITE, 8, 2, 64,
                                   512, 16};
  mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma);
  mprof_cubin_record cb = {
      77, 0, 0, 4, MPROF_INDEX_NONE, MPROF_CUBIN_KEPT_WHOLE};
  mprof_writer_cubin(w, &cb, "ELF!", 4);
  mprof_writer_drop(w, MPROF_DROP_PC_DROPPED_SAMPLES, MPROF_INDEX_NONE, 3);
  assert_int_equal(mprof_writer_finish(w), 0);

  mprof_trace *t, *r;
  assert_int_equal(mprof_trace_open(&t, path, NULL), 0);
  assert_int_equal(mprof_trace_rewrite(t, out,
                                       MPROF_REWRITE_SORT_LAUNCHES |
                                           MPROF_REWRITE_DROP_CODE),
                   0);
  mprof_trace_free(t);
  assert_int_equal(mprof_trace_open(&r, out, NULL), 0);
  assert_true(mprof_trace_flags(r) & MPROF_FILE_FLAG_LAUNCHES_SORTED);
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(r, &n);
  assert_int_equal(n, 3);
  assert_int_equal(l[0].correlation_id, 3);
  assert_int_equal(l[1].correlation_id, 2);
  assert_int_equal(l[2].correlation_id, 1);
  /* The span follows its launch (correlation 1) to its new place. */
  const mprof_span_record *spans = mprof_trace_spans(r, &n);
  assert_int_equal(spans[0].launch, 2);
  const mprof_cubin_record *cubins = mprof_trace_cubins(r, &n);
  assert_int_equal(n, 1);
  assert_true(cubins[0].flags & MPROF_CUBIN_OMITTED);
  assert_int_equal(cubins[0].module_size, 4);
  assert_null(mprof_trace_cubin_blob(r, &cubins[0], &n));
  assert_string_equal(mprof_trace_meta(r, "tool"), "rewrite test");
  const mprof_region_record *regions = mprof_trace_regions(r, &n);
  assert_string_equal(mprof_trace_string(r, regions[0].name), "consumer");
  assert_int_equal(mprof_trace_drop_total(r, MPROF_DROP_PC_DROPPED_SAMPLES), 3);
  const mprof_api_call_record *calls = mprof_trace_api_calls(r, &n);
  assert_int_equal(n, 1);
  assert_int_equal(calls[0].correlation_id, 3);
  assert_string_equal(mprof_trace_string(r, calls[0].name), "cudaLaunchKernel");
  const mprof_memory_access_record *kept = mprof_trace_memory_accesses(r, &n);
  assert_int_equal(n, 1);
  assert_int_equal(kept->pc_offset, 0x30);
  assert_int_equal(kept->bytes, 512);
  mprof_trace_free(r);
  unlink(path);
  unlink(out);
}

/* An API call that ends before it starts is refused with its section named. */
static void test_api_call_ending_before_start(void **state) {
  (void)state;
  const char *path = test_path("bad-call.mprof");
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  mprof_api_call_record call = {500,
                                400,
                                1,
                                2,
                                mprof_writer_string(w, "cudaMemcpyAsync"),
                                MPROF_API_RUNTIME};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &call),
                   0);
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_trace *t = NULL;
  assert_int_equal(mprof_trace_open(&t, path, NULL), MPROF_EFORMAT);
  assert_non_null(strstr(mprof_error_last(), "API_CALLS"));
  assert_non_null(strstr(mprof_error_last(), "ends before it starts"));
  unlink(path);
}

/* ---- traces from a newer mprof (docs/FORMAT.md, "Compatibility") ------- */

/* Rewrite the finished trace at @p from to @p to as @p o says. */
static void write_future(const char *from, const char *to,
                         const future_options *o) {
  size_t size = 0, out_size = 0;
  unsigned char *data = test_read_file(from, &size);
  assert_non_null(data);
  unsigned char *out = future_trace(data, size, o, &out_size);
  assert_non_null(out);
  assert_int_equal(test_write_file(to, out, out_size), 0);
  free(out);
  free(data);
}

/* Every record of every section of @p today (a finished file at
 * @p today_path, whose directory gives each section's record size) is the
 * same in @p later, which may only have more META pairs and strings after
 * them. */
static void assert_same_records(const char *today_path,
                                const mprof_trace *today,
                                const mprof_trace *later) {
  size_t size = 0;
  unsigned char *file = test_read_file(today_path, &size);
  assert_non_null(file);
  const mprof_file_header *h = (const mprof_file_header *)file;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(file + h->directory_offset);
  /* Every section but OPEN_RANGES, which only streamed files hold, and
   * SOURCES and MKPROF, which are put into a finished file
   * (mprof_sources_embed(), mprof_mkprof_to_trace()). */
  assert_int_equal(h->section_count, MPROF_SECTION_TYPE_MAX_ - 3);
  for (uint32_t i = 0; i < h->section_count; i++) {
    uint32_t type = dir[i].type;
    size_t n_today, n_later;
    const void *a = mprof_trace_section(today, type, &n_today);
    const void *b = mprof_trace_section(later, type, &n_later);
    int grows = type == MPROF_SECTION_META || type == MPROF_SECTION_STRINGS;
    if (grows ? n_later < n_today : n_later != n_today)
      fail_msg("%s: %zu records, %zu today", mprof_section_name(type), n_later,
               n_today);
    if (memcmp(a, b, n_today * dir[i].record_size) != 0)
      fail_msg("%s: records differ", mprof_section_name(type));
  }
  free(file);
}

/* A trace with every record longer, at a newer layout version and format
 * minor, with sections and META keys no mprof knows, finished or streamed,
 * reads as the trace it was made from: every record, byte for byte. */
static void test_newer_layouts_read_as_today(void **state) {
  (void)state;
  const char *path = test_path("today.mprof");
  const char *later = test_path("later.mprof");
  write_every_record(path);
  mprof_trace *today = NULL;
  assert_int_equal(mprof_trace_open(&today, path, NULL), 0);
  future_options all = future_options_all(), odd = all, same = all,
                 streamed = all, streamed_today, short_tail = all;
  odd.extra = 5; /* records no longer aligned */
  odd.layout_version = 3;
  same.extra = 0; /* a newer version that appended nothing yet */
  streamed.streamed = 1;
  memset(&streamed_today, 0, sizeof streamed_today);
  streamed_today.streamed = 1;
  /* Shorter than the newer layout, as long as today's: still read. */
  short_tail.short_section = MPROF_SECTION_LAUNCHES;
  short_tail.short_by = short_tail.extra;
  const future_options *variants[] = {
      &all, &odd, &same, &streamed, &streamed_today, &short_tail};
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    write_future(path, later, variants[v]);
    mprof_trace *t = NULL;
    if (mprof_trace_open(&t, later, NULL) != 0)
      fail_msg("variant %zu: %s", v, mprof_error_last());
    assert_same_records(path, today, t);
    const char *note = mprof_trace_meta(t, "future.note");
    if (variants[v]->unknown_meta)
      assert_string_equal(note, "written by a newer mprof");
    else
      assert_null(note);
    assert_string_equal(mprof_trace_meta(t, "host"), "box-7");
    size_t n;
    const mprof_launch_record *l = mprof_trace_launches(t, &n);
    assert_int_equal(n, 3);
    assert_int_equal(l[2].graph_node_id, 99);
    assert_int_equal(mprof_trace_stream_launch(t, 0, 1)->correlation_id, 11);
    mprof_trace_free(t);
  }
  mprof_trace_free(today);
  unlink(path);
  unlink(later);
}

/* Set the layout version and record size of section @p type's directory
 * entry, checksums mended. */
static void patch_entry(unsigned char *data, uint32_t type, uint32_t version,
                        uint32_t record_size) {
  mprof_file_header *h = (mprof_file_header *)data;
  mprof_section_entry *dir =
      (mprof_section_entry *)(data + h->directory_offset);
  for (uint32_t i = 0; i < h->section_count; i++)
    if (dir[i].type == type) {
      dir[i].version = version;
      dir[i].record_size = record_size;
    }
  h->directory_checksum = mprof_crc32c(0, dir, h->section_count * sizeof *dir);
  h->header_checksum = mprof_crc32c(0, h, 40);
}

/* Records shorter than a reader reads, longer than their version has, a
 * layout version 0, sizes that cannot be: each refused in one line that
 * names the file, the directory entry and the fix. */
static void test_impossible_layouts_refused(void **state) {
  (void)state;
  const char *path = test_path("layout-src.mprof");
  const char *bad = test_path("layout.mprof");
  write_every_record(path);
  future_options short_future = future_options_all();
  short_future.short_section = MPROF_SECTION_LAUNCHES;
  short_future.short_by = 16; /* 52 - 16: 36 bytes */
  future_options short_today;
  memset(&short_today, 0, sizeof short_today);
  short_today.short_section = MPROF_SECTION_LAUNCHES;
  short_today.short_by = 8;
  future_options long_today;
  memset(&long_today, 0, sizeof long_today);
  long_today.extra = 8; /* at version 1 */
  future_options short_streamed = short_future;
  short_streamed.streamed = 1;
  struct {
    const future_options *o;
    uint32_t type, version, record_size; /* a patch when record_size */
    const char *says;
    const char *fix;
  } cases[] = {
      {&short_future, MPROF_SECTION_LAUNCHES, 0, 0,
       "section LAUNCHES has records of 36 bytes, shorter than the 40 bytes "
       "this mprof reads",
       NULL},
      {&short_today, MPROF_SECTION_LAUNCHES, 0, 0,
       "section LAUNCHES has records of 32 bytes, shorter than the 40 bytes "
       "this mprof reads",
       NULL},
      {&long_today, MPROF_SECTION_META, 0, 0,
       "section META has layout version 1 with records of 16 bytes, longer "
       "than version 1's 8 bytes",
       NULL},
      {NULL, MPROF_SECTION_LAUNCHES, 0, 40,
       "section LAUNCHES has layout version 0 (versions start at 1; the file "
       "is corrupt; record it again)",
       ""},
      {NULL, MPROF_SECTION_STRINGS, 1, 2,
       "section STRINGS has records of 2 bytes, not single bytes", NULL},
      {NULL, MPROF_SECTION_LAUNCHES, 2, 70000,
       "section LAUNCHES has records of 70000 bytes, longer than the 65536 "
       "bytes any layout may have",
       NULL},
      {NULL, MPROF_SECTION_LAUNCHES, 2, 41,
       "section LAUNCHES has length 120, not a whole number of 41-byte "
       "records",
       NULL},
      {&short_streamed, MPROF_SECTION_LAUNCHES, 0, 0,
       "a chunk has records of 36 bytes, shorter than the 40 bytes this "
       "mprof reads",
       " (the file is corrupt or truncated; record it again)"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (cases[c].o) {
      write_future(path, bad, cases[c].o);
    } else {
      size_t size = 0;
      unsigned char *data = test_read_file(path, &size);
      patch_entry(data, cases[c].type, cases[c].version, cases[c].record_size);
      assert_int_equal(test_write_file(bad, data, size), 0);
      free(data);
    }
    size_t size = 0;
    unsigned char *data = test_read_file(bad, &size);
    size_t at = future_section_at(data, size, cases[c].type);
    free(data);
    char want[512];
    if (cases[c].o && cases[c].o->streamed)
      snprintf(want, sizeof want, "%s: %s at byte %zu: %s%s", bad,
               mprof_section_name(cases[c].type), at, cases[c].says,
               cases[c].fix);
    else
      snprintf(want, sizeof want, "%s: directory at byte %zu: %s%s", bad, at,
               cases[c].says,
               cases[c].fix ? cases[c].fix
                            : " (the file is corrupt; record it again)");
    mprof_trace *t = NULL;
    assert_int_equal(mprof_trace_open(&t, bad, NULL), MPROF_EFORMAT);
    assert_null(t);
    assert_string_equal(mprof_error_last(), want);
  }
  unlink(path);
  unlink(bad);
}

/* The copier works from the reader's layout: a newer trace rewrites to the
 * very bytes its original does, and merges with it. */
static void test_rewrite_and_merge_of_newer_trace(void **state) {
  (void)state;
  const char *path = test_path("rw-today.mprof");
  const char *later = test_path("rw-later.mprof");
  const char *out_today = test_path("rw-today-out.mprof");
  const char *out_later = test_path("rw-later-out.mprof");
  write_every_record(path);
  future_options o = future_options_all();
  o.unknown_meta = 0; /* they would be copied, as any META */
  write_future(path, later, &o);
  mprof_trace *today = NULL, *t = NULL;
  assert_int_equal(mprof_trace_open(&today, path, NULL), 0);
  assert_int_equal(mprof_trace_open(&t, later, NULL), 0);
  assert_int_equal(mprof_trace_rewrite(today, out_today, 0), 0);
  assert_int_equal(mprof_trace_rewrite(t, out_later, 0), 0);
  size_t a_size = 0, b_size = 0;
  unsigned char *a = test_read_file(out_today, &a_size);
  unsigned char *b = test_read_file(out_later, &b_size);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(a_size, b_size);
  assert_memory_equal(a, b, a_size);
  free(a);
  free(b);
  const mprof_trace *set[2] = {today, t};
  mprof_trace *merged = NULL;
  if (mprof_trace_open_merged(&merged, set, 2, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(merged, &n);
  assert_int_equal(n, 6);
  assert_int_equal(l[5].graph_node_id, 99);
  mprof_trace_memory_accesses(merged, &n);
  assert_int_equal(n, 2);
  /* Each process keeps its window, under its own index in the set. */
  const mprof_capture_record *cap = mprof_trace_captures(merged, &n);
  assert_int_equal(n, 2);
  assert_int_equal(cap[0].process, 0);
  assert_int_equal(cap[1].process, 1);
  assert_string_equal(mprof_trace_string(merged, cap[1].spec), "nvtx:step");
  assert_int_equal(cap[1].recorded, 4);
  mprof_trace_free(merged);
  mprof_trace_free(t);
  mprof_trace_free(today);
  unlink(path);
  unlink(later);
  unlink(out_today);
  unlink(out_later);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_every_record),
      cmocka_unit_test(test_million_launches),
      cmocka_unit_test(test_unsorted_launches_get_an_order),
      cmocka_unit_test(test_truncation_sweep),
      cmocka_unit_test(test_flipped_byte_in_every_section),
      cmocka_unit_test(test_bad_reference_without_checksums),
      cmocka_unit_test(test_wrong_magic_and_version),
      cmocka_unit_test(test_nothing_under_final_name_until_finish),
      cmocka_unit_test(test_errors_and_version),
      cmocka_unit_test(test_synth_is_deterministic),
      cmocka_unit_test(test_memory_accesses_checked),
      cmocka_unit_test(test_rewrite_sorts_and_drops_code),
      cmocka_unit_test(test_api_call_ending_before_start),
      cmocka_unit_test(test_newer_layouts_read_as_today),
      cmocka_unit_test(test_impossible_layouts_refused),
      cmocka_unit_test(test_rewrite_and_merge_of_newer_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
