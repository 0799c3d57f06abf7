/*
 * mprof tests — the block producer's host side without a GPU: block slots
 * as the patch functions leave them are written as a .source file, merged
 * onto a CUPTI-like trace, and judged: one span per block at the right
 * time, SM and index; overflow, missing blocks and SM changes counted; the
 * producer's counters in META; a one-wave-plus-one-block tail measured.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "analysis_util.h"
#include "blocks_file.h"
#include "mprof/mprof.h"
#include "mprof/source.h"

#define SMS 132
#define GRID (SMS + 1)                    /* one wave plus one block */
#define LAUNCHES 3                        /* recorded */
#define ANCHOR_TRACE 7000000000ll         /* CLOCK_MONOTONIC_RAW */
#define ANCHOR_REAL 1764000000000000000ll /* CLOCK_REALTIME */
#define GT_OFFSET 180000                  /* %globaltimer - realtime, ns */
#define BLOCK_NS 200000                   /* each block spins 200 us */
#define LAUNCH_NS (2 * BLOCK_NS + 4000)

static const char *const kernel_names[] = {"_Z9tail_spinyPi", "_Z6grid3dPi"};

static uint64_t cupti_start(int i) {
  return (uint64_t)(ANCHOR_TRACE + 5000000 + (int64_t)i * 1000000);
}

/* %globaltimer of a trace-clock time. */
static uint64_t gt(uint64_t trace_ns) {
  return (uint64_t)((int64_t)trace_ns - ANCHOR_TRACE + ANCHOR_REAL + GT_OFFSET);
}

/* The trace as the CUPTI producer writes it: LAUNCHES launches of the tail
 * kernel and one of a 7x5x3 grid, plus one more tail launch that did not
 * fit the device buffer. */
static void write_trace_of(const char *path, const char *pid) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  if (pid) {
    assert_int_equal(mprof_writer_meta(w, "pid", pid), 0);
    assert_int_equal(mprof_writer_meta(w, "host", "gpu1"), 0);
  }
  tt_clock_meta(w, ANCHOR_TRACE, ANCHOR_REAL);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.cc_major = 9;
  dev.sm_count = SMS;
  dev.warp_size = 32;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_sm = 2048;
  dev.max_blocks_per_sm = 32;
  dev.max_warps_per_sm = 64;
  dev.max_regs_per_block = 65536;
  dev.max_regs_per_sm = 65536;
  dev.max_shared_per_block = 232448;
  dev.max_shared_per_sm = 233472;
  uint32_t d, s;
  assert_int_equal(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev), 0);
  mprof_stream_record st = {d, 1, 7, 0};
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  uint32_t shape[2];
  for (int k = 0; k < 2; k++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, kernel_names[k]);
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d;
    kr.registers = 16;
    uint32_t ki;
    assert_int_equal(mprof_writer_intern(w, &ki, MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = ki;
    sh.grid[0] = k ? 7 : GRID;
    sh.grid[1] = k ? 5 : 1;
    sh.grid[2] = k ? 3 : 1;
    sh.block[0] = k ? 64 : 256;
    sh.block[1] = sh.block[2] = 1;
    sh.dynamic_shared = k ? 0 : 120000; /* one block per SM */
    assert_int_equal(
        mprof_writer_intern(w, &shape[k], MPROF_SECTION_SHAPES, &sh), 0);
  }
  for (int i = 0; i <= LAUNCHES; i++) {
    uint64_t start = cupti_start(i);
    mprof_launch_record l = {
        start, start + LAUNCH_NS, shape[0], s, (uint32_t)(2 * i + 1), 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
    if (i == 0) {
      mprof_launch_record g = {
          start + 600000, start + 610000, shape[1], s, 2, 0, 0};
      assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &g),
                       0);
    }
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static void write_trace(const char *path) { write_trace_of(path, NULL); }

/* Slots as the device leaves them: block b < SMS on SM b from 1 us after
 * the launch start, the last block on SM 7 after block 7. In launch 1,
 * block 5 never ran (missing) and block 9 moved SM between entry and
 * exit. */
/* One tail launch's blocks, every one recorded. */
static void fill_tail_complete(mprof_blocks_slot *slots, int launch) {
  memset(slots, 0, GRID * sizeof *slots);
  uint64_t t0 = gt(cupti_start(launch)) + 1000;
  for (int b = 0; b < GRID; b++) {
    mprof_blocks_slot *x = &slots[b];
    uint64_t start = b < SMS ? t0 + (uint64_t)(b % 4) * 32 : t0 + BLOCK_NS + 64;
    x->start_inv = ~start;
    x->end = start + BLOCK_NS;
    x->sm_enter = x->sm_exit = b < SMS ? (uint32_t)b : 7;
  }
}

/* The same, but launch 1 lost block 5 and block 9 changed SMs. */
static void fill_tail(mprof_blocks_slot *slots, int launch) {
  fill_tail_complete(slots, launch);
  if (launch == 1) {
    memset(&slots[5], 0, sizeof slots[5]);
    slots[9].sm_exit = 10;
  }
}

static void test_write_merge_and_judge(void **state) {
  (void)state;
  const char *trace = test_path("blocks.mprof");
  char source[1024];
  snprintf(source, sizeof source, "%s.source", trace);
  write_trace(trace);

  static mprof_blocks_slot tail[LAUNCHES][GRID];
  static mprof_blocks_slot grid3d[105];
  mprof_blocks_launch launches[LAUNCHES + 2];
  memset(launches, 0, sizeof launches);
  size_t n = 0;
  for (int i = 0; i <= LAUNCHES; i++) {
    mprof_blocks_launch *l = &launches[n++];
    l->kernel = 0;
    l->grid[0] = GRID;
    l->grid[1] = l->grid[2] = 1;
    l->block[0] = 256;
    l->block[1] = l->block[2] = 1;
    l->host_ns =
        (uint64_t)((int64_t)cupti_start(i) - ANCHOR_TRACE + ANCHOR_REAL - 5000);
    if (i < LAUNCHES) {
      fill_tail(tail[i], i);
      l->slots = tail[i];
    } /* the last one did not fit: slots NULL */
    if (i == 0) {
      mprof_blocks_launch *g = &launches[n++];
      g->kernel = 1;
      g->grid[0] = 7;
      g->grid[1] = 5;
      g->grid[2] = 3;
      g->block[0] = 64;
      g->block[1] = g->block[2] = 1;
      uint64_t t0 = gt(cupti_start(0) + 600000) + 1000;
      for (int b = 0; b < 105; b++) {
        grid3d[b].start_inv = ~(t0 + (uint64_t)b * 10);
        grid3d[b].end = t0 + (uint64_t)b * 10 + 2000;
        grid3d[b].sm_enter = grid3d[b].sm_exit = (uint32_t)(b % SMS);
      }
      g->slots = grid3d;
    }
  }
  mprof_blocks_counts counts;
  assert_int_equal(mprof_blocks_write_source(source, kernel_names, 2, launches,
                                             n, GRID, 1u << 20, &counts),
                   0);
  assert_int_equal(counts.blocks, LAUNCHES * GRID - 1 + 105);
  assert_int_equal(counts.missing, 1);
  assert_int_equal(counts.sm_changed, 1);
  assert_int_equal(counts.launches_recorded, LAUNCHES + 1);

  /* The file reads back as written. */
  mprof_source_file *f;
  assert_int_equal(mprof_source_file_open(&f, source), 0);
  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  assert_int_equal(h->overflow_count, GRID);
  assert_int_equal(h->launch_count, n);
  size_t rc_count;
  const mprof_source_file_record *rec = mprof_source_file_records(f, &rc_count);
  assert_int_equal(rc_count, counts.blocks);
  assert_int_equal(rec[GRID - 1].block, GRID - 1);
  assert_int_equal(rec[GRID - 1].sm, 7);
  assert_int_equal(rec[GRID - 1].warp, MPROF_INDEX_NONE);
  assert_int_equal(rec[GRID - 1].start, ~tail[0][GRID - 1].start_inv);
  assert_int_equal(rec[GRID - 1].end - rec[GRID - 1].start, BLOCK_NS);
  size_t kc;
  const mprof_source_file_kernel *kk = mprof_source_file_kernels(f, &kc);
  assert_string_equal(mprof_source_file_string(f, kk[1].name), "_Z6grid3dPi");
  mprof_source_file_free(f);

  /* Merged with the producer's counters. */
  const char *meta[] = {"blocks.producer", "compute-sanitizer",
                        "blocks.missing", "1"};
  mprof_source_merge_options opts = MPROF_SOURCE_MERGE_OPTIONS_INIT;
  opts.meta = meta;
  opts.meta_count = 2;
  mprof_source_merge_report r = MPROF_SOURCE_MERGE_REPORT_INIT;
  assert_int_equal(mprof_source_merge(trace, source, trace, &opts, &r), 0);
  assert_int_equal(r.matched_by_order, LAUNCHES + 1); /* those with spans */
  assert_int_equal(r.matched_by_time, 0);
  assert_int_equal(r.unmatched, 0);
  assert_int_equal(r.spans, counts.blocks);
  assert_int_equal(r.spans_outside_launch, 0);
  /* Every first block starts 1 us after its launch: the offset takes it
   * out exactly, so the error is what the clocks disagree by (0 here). */
  assert_int_equal(r.alignment_error_max_ns, 0);

  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  assert_string_equal(mprof_trace_meta(t, "blocks.producer"),
                      "compute-sanitizer");
  assert_string_equal(mprof_trace_meta(t, "blocks.missing"), "1");
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_SPAN_OVERFLOW), GRID);
  size_t nl, ns;
  const mprof_launch_record *tl = mprof_trace_launches(t, &nl);
  const mprof_span_record *sp = mprof_trace_spans(t, &ns);
  assert_int_equal(ns, counts.blocks);
  size_t per_launch[8] = {0};
  int lone = 0;
  for (size_t i = 0; i < ns; i++) {
    assert_true(sp[i].launch < nl);
    per_launch[sp[i].launch]++;
    const mprof_launch_record *l = &tl[sp[i].launch];
    assert_true(sp[i].start + 64 >= l->start && sp[i].end <= l->end + 64);
    if (sp[i].block == GRID - 1 && sp[i].sm == 7) {
      /* The lone block starts when block 7 ends, 200 us after the first
       * block (which the alignment puts at the launch start). */
      assert_true(llabs((long long)(sp[i].start - l->start) - 200064) < 100);
      lone++;
    }
  }
  assert_int_equal(lone, LAUNCHES);
  /* Launch order in the trace: tail 0, grid3d, tail 1, 2, 3 (none). */
  assert_int_equal(per_launch[0], GRID);
  assert_int_equal(per_launch[1], 105);
  assert_int_equal(per_launch[2], GRID - 1);
  assert_int_equal(per_launch[3], GRID);
  assert_int_equal(per_launch[4], 0);
  mprof_trace_free(t);

  /* The summary judges the tail from the measured blocks: after the first
   * wave, one SM works alone for half the launch. */
  tt_analysis a;
  tt_analyse(&a, trace, NULL);
  uint32_t k =
      mprof_join_find_kernel(a.join, kernel_names[0], MPROF_INDEX_NONE);
  assert_int_not_equal(k, MPROF_INDEX_NONE);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(a.diagnosis, k);
  const mprof_dimension *tail_dim = &kd->dimensions[MPROF_DIM_SM_TAIL];
  assert_int_equal(tail_dim->state, MPROF_STATE_ISSUE);
  double fraction = NAN;
  uint32_t last_sm = UINT32_MAX;
  for (size_t i = 0; i < tail_dim->metric_count; i++) {
    if (strcmp(tail_dim->metrics[i].name, "tail_fraction") == 0)
      fraction = tail_dim->metrics[i].value;
    if (strcmp(tail_dim->metrics[i].name, "last_sm") == 0)
      last_sm = (uint32_t)tail_dim->metrics[i].value;
  }
  assert_int_equal(last_sm, 7);
  assert_true(fraction > 0.45 && fraction < 0.55);
  /* The tail effect too: SM time busy (132 x 200 us + 200 us) over 132 SMs
   * x 400 us, measured, not projected from the grid. */
  const mprof_dimension *effect = &kd->dimensions[MPROF_DIM_TAIL];
  double busy = NAN;
  for (size_t i = 0; i < effect->metric_count; i++)
    if (strcmp(effect->metrics[i].name, "measured_efficiency") == 0)
      busy = effect->metrics[i].value;
  assert_true(fabs(busy - (132.0 * 200 + 200) / (132.0 * 400)) < 0.003);
  assert_int_equal(effect->state, MPROF_STATE_ISSUE);
  assert_non_null(strstr(effect->detail, "Measured over 3 launches"));
  assert_non_null(strstr(effect->detail, "Projected from the grid"));
  tt_release(&a);
}

/* The CLI's path: no CUPTI trace at all; the .source file alone becomes a
 * trace whose launches are the extent of their blocks. */
static void test_build_trace_alone(void **state) {
  (void)state;
  const char *source = test_path("alone.source");
  const char *trace = test_path("alone.mprof");
  static mprof_blocks_slot tail[LAUNCHES][GRID];
  mprof_blocks_launch launches[LAUNCHES + 1];
  memset(launches, 0, sizeof launches);
  for (int i = 0; i <= LAUNCHES; i++) {
    mprof_blocks_launch *l = &launches[i];
    l->grid[0] = GRID;
    l->grid[1] = l->grid[2] = 1;
    l->block[0] = 256;
    l->block[1] = l->block[2] = 1;
    l->host_ns = gt(cupti_start(i)) - 7000;
    /* Launches 0 and 2 on the NULL stream, 1 on the program's third. */
    l->stream = i == 1 ? 3 : 0;
    l->dynamic_shared = 120000;
    l->has_dynamic_shared = 1;
    if (i == 2)
      l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
    if (i < LAUNCHES) {
      fill_tail(tail[i], i);
      l->slots = tail[i];
    }
  }
  mprof_blocks_counts counts;
  assert_int_equal(mprof_blocks_write_source(source, kernel_names, 1, launches,
                                             LAUNCHES + 1, GRID, 1u << 20,
                                             &counts),
                   0);

  /* Without device facts: SMs from the highest %smid. */
  assert_int_equal(mprof_source_build_trace(source, trace, NULL), 0);
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  size_t nd;
  const mprof_device_record *dev = mprof_trace_devices(t, &nd);
  assert_int_equal(nd, 1);
  assert_int_equal(dev[0].sm_count, SMS);
  mprof_trace_free(t);

  /* With them, and the producer's counters. */
  mprof_device_record d;
  memset(&d, 0, sizeof d);
  d.sm_count = SMS;
  d.cc_major = 9;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_warps_per_sm = 64;
  d.max_regs_per_block = 65536;
  d.max_regs_per_sm = 65536;
  d.max_shared_per_block = 232448;
  d.max_shared_per_sm = 233472;
  const char *names[] = {"NVIDIA H200"};
  mprof_kernel_record k;
  memset(&k, 0, sizeof k);
  k.registers = 40;
  k.static_shared = 1024;
  const char *meta[] = {"blocks.producer", "compute-sanitizer"};
  mprof_source_build_options o = MPROF_SOURCE_BUILD_OPTIONS_INIT;
  o.devices = &d;
  o.device_names = names;
  o.device_count = 1;
  o.kernels = &k;
  o.kernel_count = 1;
  o.meta = meta;
  o.meta_count = 1;
  /* --memory counts: a coalesced float load (4 sectors per warp), a load
   * with a stride of 32 floats (32 sectors per warp), a coalesced store,
   * and a record of a device the kernel never ran on. */
  static const mprof_memory_access_record memory[] = {
      {0, 0x90, MPROF_MEMORY_READ, 4, 1000, 32000, 128000, 32000},
      {0, 0x80, MPROF_MEMORY_READ, 4, 1000, 32000, 128000, 4000},
      {0, 0xa0, MPROF_MEMORY_WRITE, 4, 1000, 32000, 128000, 4000},
      {0, 0x80, MPROF_MEMORY_READ, 4, 5, 160, 640, 20},
  };
  static const uint32_t memory_devices[] = {0, 0, 0, 3};
  o.memory = memory;
  o.memory_devices = memory_devices;
  o.memory_count = 4;
  assert_int_equal(mprof_source_build_trace(source, trace, &o), 0);
  assert_int_equal(mprof_trace_open(&t, trace, NULL), 0);
  assert_string_equal(mprof_trace_meta(t, "capture.mode"), "blocks");
  assert_string_equal(mprof_trace_meta(t, "clock"), "globaltimer");
  assert_string_equal(mprof_trace_meta(t, "blocks.producer"),
                      "compute-sanitizer");
  assert_string_equal(mprof_trace_meta(t, "source.alignment_error_ns"), "0");
  assert_int_equal(mprof_trace_drop_total(t, MPROF_DROP_SPAN_OVERFLOW), GRID);
  dev = mprof_trace_devices(t, &nd);
  assert_string_equal(mprof_trace_string(t, dev[0].name), "NVIDIA H200");
  size_t nk, nl, ns;
  const mprof_kernel_record *kr = mprof_trace_kernels(t, &nk);
  assert_int_equal(nk, 1);
  assert_int_equal(kr[0].registers, 40);
  assert_string_equal(mprof_trace_string(t, kr[0].mangled_name),
                      kernel_names[0]);
  const mprof_launch_record *tl = mprof_trace_launches(t, &nl);
  const mprof_span_record *sp = mprof_trace_spans(t, &ns);
  assert_int_equal(nl, LAUNCHES);
  assert_string_equal(mprof_trace_meta(t, "source.launches_without_spans"),
                      "1");
  assert_int_equal(ns, counts.blocks);
  /* Launch i runs from its first block's entry to its last block's exit:
   * 1 us after the CUPTI start of the fixture, for 2 x 200 us + 64 ns. */
  for (int i = 0; i < LAUNCHES; i++) {
    assert_int_equal(tl[i].start, gt(cupti_start(i)) + 1000);
    assert_int_equal(tl[i].end - tl[i].start, 2 * BLOCK_NS + 64);
  }
  for (size_t i = 0; i < ns; i++) {
    assert_true(sp[i].launch < LAUNCHES);
    assert_true(sp[i].start >= tl[sp[i].launch].start);
    assert_true(sp[i].end <= tl[sp[i].launch].end);
  }
  /* Each launch on its own stream, with the dynamic shared memory and the
   * cluster its blocks saw. */
  size_t nst, nsh;
  const mprof_stream_record *st = mprof_trace_streams(t, &nst);
  const mprof_shape_record *sh = mprof_trace_shapes(t, &nsh);
  assert_int_equal(nst, 2);
  for (int i = 0; i < LAUNCHES; i++) {
    const mprof_stream_record *s = &st[tl[i].stream];
    const mprof_shape_record *shape = &sh[tl[i].shape];
    assert_int_equal(shape->dynamic_shared, 120000);
    if (s->stream_id == 3)
      assert_string_equal(mprof_trace_string(t, s->name), "");
    else {
      assert_int_equal(s->stream_id, 0);
      assert_string_equal(mprof_trace_string(t, s->name), "default stream");
    }
  }
  int clustered = 0, on_three = 0;
  for (size_t i = 0; i < nl; i++) {
    clustered += sh[tl[i].shape].cluster[0] == 1;
    on_three += st[tl[i].stream].stream_id == 3;
  }
  assert_int_equal(clustered, 1);
  assert_int_equal(on_three, 1);
  size_t nm;
  const mprof_memory_access_record *mr = mprof_trace_memory_accesses(t, &nm);
  assert_int_equal(nm, 3);
  assert_int_equal(mr[0].kernel, 0);
  assert_string_equal(mprof_trace_meta(t, "blocks.memory_dropped"), "1");
  mprof_trace_free(t);

  /* The summary measures the tail from it. */
  tt_analysis a;
  tt_analyse(&a, trace, NULL);
  uint32_t kid =
      mprof_join_find_kernel(a.join, kernel_names[0], MPROF_INDEX_NONE);
  assert_int_not_equal(kid, MPROF_INDEX_NONE);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(a.diagnosis, kid);
  assert_int_equal(kd->dimensions[MPROF_DIM_SM_TAIL].state, MPROF_STATE_ISSUE);
  assert_int_equal(kd->dimensions[MPROF_DIM_TAIL].state, MPROF_STATE_ISSUE);
  assert_non_null(
      strstr(kd->dimensions[MPROF_DIM_TAIL].detail, "Measured over 3"));
  /* The join has the counts per instruction, by offset, with the sector
   * efficiency: 100% coalesced, 12.5% at a stride of 32 floats. */
  size_t mc;
  const mprof_memory_stats *ms = mprof_join_memory(a.join, kid, &mc);
  assert_int_equal(mc, 3);
  assert_int_equal(mprof_join_kernel(a.join, kid)->memory_count, 3);
  assert_int_equal(ms[0].offset, 0x80);
  assert_int_equal(ms[1].offset, 0x90);
  assert_true(fabs(ms[0].efficiency - 1.0) < 1e-9);
  assert_true(fabs(ms[1].efficiency - 0.125) < 1e-9);
  assert_int_equal(ms[2].flags, MPROF_MEMORY_WRITE);
  assert_ptr_equal(mprof_join_memory_find(a.join, kid, 0x90), &ms[1]);
  assert_null(mprof_join_memory_find(a.join, kid, 0x88));
  assert_ptr_equal(mprof_join_memory_at(a.join, kid, 2), &ms[2]);
  assert_null(mprof_join_memory_at(a.join, kid, 3));
  /* Busiest first, ties by offset; a short array takes the busiest; the
   * totals are the sums, their efficiency bytes over sector bytes. */
  const mprof_memory_stats *busy[3] = {NULL, NULL, NULL};
  assert_int_equal(mprof_join_memory_busiest(a.join, kid, busy, 3), 3);
  for (size_t i = 0; i + 1 < 3; i++)
    assert_true(busy[i]->warp_accesses > busy[i + 1]->warp_accesses ||
                (busy[i]->warp_accesses == busy[i + 1]->warp_accesses &&
                 busy[i]->offset < busy[i + 1]->offset));
  const mprof_memory_stats *first[1] = {NULL};
  assert_int_equal(mprof_join_memory_busiest(a.join, kid, first, 1), 3);
  assert_ptr_equal(first[0], busy[0]);
  assert_int_equal(mprof_join_memory_busiest(a.join, kid, NULL, 0), 3);
  uint64_t warps, bytes, sectors;
  double eff = mprof_join_memory_totals(a.join, kid, &warps, &bytes, &sectors);
  assert_int_equal(warps, ms[0].warp_accesses + ms[1].warp_accesses +
                              ms[2].warp_accesses);
  assert_int_equal(bytes, ms[0].bytes + ms[1].bytes + ms[2].bytes);
  assert_int_equal(sectors, ms[0].sectors + ms[1].sectors + ms[2].sectors);
  assert_true(sectors > 0 &&
              fabs(eff - (double)bytes / (32.0 * (double)sectors)) < 1e-12);
  assert_true(eff > 0.125 && eff < 1.0);
  assert_string_equal(mprof_memory_kind_name(ms[2].flags), "store");
  assert_string_equal(mprof_memory_kind_name(MPROF_MEMORY_READ), "load");
  assert_string_equal(
      mprof_memory_kind_name(MPROF_MEMORY_READ | MPROF_MEMORY_WRITE),
      "load+store");
  tt_release(&a);

  /* Bad input is refused with a message. */
  o.version = 99;
  assert_int_equal(mprof_source_build_trace(source, trace, &o), MPROF_EVERSION);
  assert_int_equal(
      mprof_source_build_trace(test_path("missing.source"), trace, NULL),
      MPROF_ENOTFOUND);
}

/* A trace built from spans alone takes its SM count from the highest
 * %smid: up to MPROF_DEVICE_SM_MAX; past it (no GPU has such an SM) the
 * count is unknown, and the trace still opens. */
static void test_build_sm_count_bound(void **state) {
  (void)state;
  const char *source = test_path("smid.source");
  const char *trace = test_path("smid.mprof");
  static mprof_blocks_slot tail[GRID];
  const struct {
    uint32_t smid, sm_count;
  } cases[] = {{MPROF_DEVICE_SM_MAX - 1, MPROF_DEVICE_SM_MAX},
               {MPROF_DEVICE_SM_MAX, 0},
               {UINT32_MAX - 1, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mprof_blocks_launch launches[1];
    memset(launches, 0, sizeof launches);
    launches[0].grid[0] = GRID;
    launches[0].grid[1] = launches[0].grid[2] = 1;
    launches[0].block[0] = 256;
    launches[0].block[1] = launches[0].block[2] = 1;
    launches[0].host_ns = gt(cupti_start(0)) - 7000;
    fill_tail_complete(tail, 0);
    tail[3].sm_enter = tail[3].sm_exit = cases[c].smid;
    launches[0].slots = tail;
    mprof_blocks_counts counts;
    assert_int_equal(mprof_blocks_write_source(source, kernel_names, 1,
                                               launches, 1, GRID, 1u << 20,
                                               &counts),
                     0);
    assert_int_equal(mprof_source_build_trace(source, trace, NULL), 0);
    mprof_trace *t;
    if (mprof_trace_open(&t, trace, NULL) != 0)
      fail_msg("smid %u: %s", cases[c].smid, mprof_error_last());
    size_t nd;
    const mprof_device_record *dev = mprof_trace_devices(t, &nd);
    assert_int_equal(nd, 1);
    assert_int_equal(dev[0].sm_count, cases[c].sm_count);
    mprof_trace_free(t);
  }
  unlink(source);
  unlink(trace);
}

static void test_write_fails_cleanly(void **state) {
  (void)state;
  mprof_blocks_launch l;
  memset(&l, 0, sizeof l);
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  const char *names[] = {"k"};
  assert_int_equal(mprof_blocks_write_source("/nonexistent-dir/x.source", names,
                                             1, &l, 1, 0, 1, NULL),
                   -1);
  /* Nothing recorded is still a valid, empty file. */
  const char *path = test_path("empty.source");
  mprof_blocks_counts c;
  assert_int_equal(mprof_blocks_write_source(path, names, 1, &l, 1, 1, 1, &c),
                   0);
  assert_int_equal(c.blocks, 0);
  mprof_source_file *f;
  assert_int_equal(mprof_source_file_open(&f, path), 0);
  assert_int_equal(mprof_source_file_get_header(f)->overflow_count, 1);
  mprof_source_file_free(f);
}

/* For tests/cli/test_record_blocks.sh: a .source file as the block producer
 * writes it (3 tail launches, one more that overflowed). */
/* LAUNCHES launches of tail_spin; unless @p complete, launch 1 lost a block
 * and one more launch lost all of its blocks (the buffer was full). */
static int write_fixture(const char *path, int complete) {
  static mprof_blocks_slot tail[LAUNCHES][GRID];
  mprof_blocks_launch launches[LAUNCHES + 1];
  int count = complete ? LAUNCHES : LAUNCHES + 1;
  memset(launches, 0, sizeof launches);
  for (int i = 0; i < count; i++) {
    launches[i].grid[0] = GRID;
    launches[i].grid[1] = launches[i].grid[2] = 1;
    launches[i].block[0] = 256;
    launches[i].block[1] = launches[i].block[2] = 1;
    launches[i].host_ns = gt(cupti_start(i)) - 7000;
    if (i < LAUNCHES) {
      if (complete)
        fill_tail_complete(tail[i], i);
      else
        fill_tail(tail[i], i);
      launches[i].slots = tail[i];
    }
  }
  return mprof_blocks_write_source(path, kernel_names, 1, launches,
                                   (size_t)count, GRID, 1u << 20, NULL);
}

/* A run recorded twice, as issue 15 has it: `mprof record blocks` (block
 * spans, pid 4100) as DIR/blocks.mprof and `mprof record` of the same
 * command (the CUPTI timeline, pid 4200) as DIR/trace.mprof. */
static int write_pair(const char *dir) {
  char source[1024], blocks[1024], trace[1024];
  snprintf(source, sizeof source, "%s/blocks.mprof.source", dir);
  snprintf(blocks, sizeof blocks, "%s/blocks.mprof", dir);
  snprintf(trace, sizeof trace, "%s/trace.mprof", dir);
  if (write_fixture(source, 0))
    return -1;
  mprof_device_record d;
  memset(&d, 0, sizeof d);
  d.sm_count = SMS;
  d.cc_major = 9;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_warps_per_sm = 64;
  d.max_regs_per_block = 65536;
  d.max_regs_per_sm = 65536;
  d.max_shared_per_block = 232448;
  d.max_shared_per_sm = 233472;
  const char *names[] = {"NVIDIA H200"};
  const char *meta[] = {
      "blocks.producer", "compute-sanitizer", "pid", "4100", "host", "gpu1"};
  mprof_source_build_options o = MPROF_SOURCE_BUILD_OPTIONS_INIT;
  o.devices = &d;
  o.device_names = names;
  o.device_count = 1;
  o.meta = meta;
  o.meta_count = 3;
  int rc = mprof_source_build_trace(source, blocks, &o);
  unlink(source);
  if (rc)
    return -1;
  write_trace_of(trace, "4200");
  return 0;
}

/* The two open together as one run: the tail kernel is one kernel with the
 * CUPTI launches and the measured blocks, its tail judged from the blocks;
 * each process keeps its launches; the block trace's %globaltimer lands on
 * the CUPTI trace's clock through its anchors (within the ~0.2 ms the two
 * clocks differ by). */
static void test_blocks_and_cupti_as_a_set(void **state) {
  (void)state;
  const char *dir = test_path("pair");
  mkdir(dir, 0755);
  assert_int_equal(write_pair(dir), 0);
  char blocks[1024], trace[1024];
  snprintf(blocks, sizeof blocks, "%s/blocks.mprof", dir);
  snprintf(trace, sizeof trace, "%s/trace.mprof", dir);
  mprof_trace *in[2], *set;
  assert_int_equal(mprof_trace_open(&in[0], blocks, NULL), 0);
  assert_int_equal(mprof_trace_open(&in[1], trace, NULL), 0);
  assert_int_equal(mprof_trace_open_merged(&set, (const mprof_trace *const *)in,
                                           2, "the pair"),
                   0);
  assert_string_equal(mprof_trace_path(set), "the pair");
  assert_int_equal(mprof_trace_process_count(set), 2);
  assert_string_equal(mprof_trace_process_meta(set, 0, "pid"), "4100");
  assert_string_equal(mprof_trace_process_meta(set, 1, "pid"), "4200");
  assert_string_equal(mprof_trace_process_meta(set, 1, "path"), trace);
  assert_null(mprof_trace_process_meta(set, 2, "pid"));
  /* The block trace names its process in PROCESSES, from its producer's
   * pairs, and owns its streams. */
  size_t np, nst;
  const mprof_process_record *bp =
      (const mprof_process_record *)mprof_trace_section(
          in[0], MPROF_SECTION_PROCESSES, &np);
  mprof_trace_streams(in[0], &nst);
  assert_int_equal(np, 1);
  assert_int_equal(bp->pid, 4100);
  assert_string_equal(mprof_trace_string(in[0], bp->host), "gpu1");
  assert_int_equal(bp->stream_count, nst);

  /* Launch i of each run: the blocks' first entry is 1 us after the CUPTI
   * start on the GPU, whose %globaltimer runs GT_OFFSET after realtime. */
  size_t nl, ns, nb;
  const mprof_launch_record *l = mprof_trace_launches(set, &nl);
  mprof_trace_launches(in[0], &nb);
  mprof_trace_spans(set, &ns);
  assert_int_equal(nl, LAUNCHES + LAUNCHES + 2);
  assert_int_equal(ns, LAUNCHES * GRID - 1); /* block 5 of launch 1 missing */
  size_t from_blocks = 0;
  for (size_t i = 0; i < nl; i++) {
    uint32_t p = mprof_trace_stream_process(set, l[i].stream);
    assert_true(p == 0 || p == 1);
    from_blocks += p == 0;
  }
  assert_int_equal(from_blocks, nb);
  const mprof_launch_record *b0 = NULL, *c0 = NULL;
  for (size_t i = 0; i < nl; i++) {
    const mprof_launch_record *x = &l[i];
    const mprof_launch_record **slot =
        mprof_trace_stream_process(set, x->stream) ? &c0 : &b0;
    if (!*slot || x->start < (*slot)->start)
      *slot = x;
  }
  assert_non_null(b0);
  assert_non_null(c0);
  assert_int_equal((int64_t)b0->start - (int64_t)c0->start, GT_OFFSET + 1000);

  /* One kernel across the two runs, measured from the blocks. */
  mprof_join *j;
  assert_int_equal(mprof_join_build(&j, set, NULL), 0);
  uint32_t k = mprof_join_find_kernel(j, kernel_names[0], MPROF_INDEX_NONE);
  assert_int_not_equal(k, MPROF_INDEX_NONE);
  const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
  assert_int_equal(ks->launches, LAUNCHES + 1 + LAUNCHES);
  assert_int_equal(ks->process_count, 2);
  assert_int_equal(ks->process, MPROF_INDEX_NONE);
  mprof_diagnosis *d;
  assert_int_equal(mprof_diagnose(&d, j, NULL), 0);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(d, k);
  assert_int_equal(kd->dimensions[MPROF_DIM_SM_TAIL].state, MPROF_STATE_ISSUE);
  assert_non_null(
      strstr(kd->dimensions[MPROF_DIM_TAIL].detail, "Measured over 3"));
  mprof_diagnosis_free(d);
  mprof_join_free(j);

  /* Split by process: the blocks' three launches and the CUPTI four. */
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.flags = MPROF_JOIN_BY_PROCESS;
  assert_int_equal(mprof_join_build(&j, set, &jo), 0);
  size_t rows = 0;
  for (size_t i = 0; i < mprof_join_kernel_count(j); i++) {
    const mprof_kernel_stats *x = mprof_join_kernel(j, i);
    if (strcmp(x->mangled, kernel_names[0]) != 0)
      continue;
    rows++;
    assert_int_equal(x->process_count, 1);
    assert_int_equal(x->launches, x->process == 0 ? LAUNCHES : LAUNCHES + 1);
  }
  assert_int_equal(rows, 2);
  mprof_join_free(j);
  mprof_trace_free(set);
  mprof_trace_free(in[0]);
  mprof_trace_free(in[1]);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write-source") == 0)
    return write_fixture(argv[2], 0) ? 1 : 0;
  /* tests/gpu/selftest.sh: what a working block producer writes. */
  if (argc == 3 && strcmp(argv[1], "--write-source-complete") == 0)
    return write_fixture(argv[2], 1) ? 1 : 0;
  if (argc == 3 && strcmp(argv[1], "--write-pair") == 0)
    return write_pair(argv[2]) ? 1 : 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_merge_and_judge),
      cmocka_unit_test(test_build_trace_alone),
      cmocka_unit_test(test_build_sm_count_bound),
      cmocka_unit_test(test_write_fails_cleanly),
      cmocka_unit_test(test_blocks_and_cupti_as_a_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
