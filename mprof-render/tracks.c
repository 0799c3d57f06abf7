/*
 * mprof-render — the host and counter tracks of the Trace view, built once
 * at open: NVTX ranges per host thread, laid out by nesting (a range
 * inside another goes one row below it), and the PM samples of each GPU by
 * start, with the PM_SAMPLES column of each counter from libmprof's
 * throughput join (mprof/throughput.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

/* ---- NVTX ranges -------------------------------------------------------- */

static const mprof_range_record *sort_ranges;
static const uint32_t *sort_lane;

/* By thread, then start, the longer (the outer) first. */
static int by_thread_start(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const mprof_range_record *x = &sort_ranges[i], *y = &sort_ranges[j];
  if (x->thread_id != y->thread_id)
    return x->thread_id < y->thread_id ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  uint64_t ex = x->end > x->start ? x->end : x->start;
  uint64_t ey = y->end > y->start ? y->end : y->start;
  if (ex != ey)
    return ex > ey ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* By thread, then lane, then start. */
static int by_thread_lane(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const mprof_range_record *x = &sort_ranges[i], *y = &sort_ranges[j];
  if (x->thread_id != y->thread_id)
    return x->thread_id < y->thread_id ? -1 : 1;
  if (sort_lane[i] != sort_lane[j])
    return sort_lane[i] < sort_lane[j] ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return i < j ? -1 : i > j;
}

int64_t rs_range_end(const mprof_range_record *r) {
  return rs_clamp_ns(r->end > r->start ? r->end : r->start);
}

int mprof_render__build_ranges(mprof_render_model *m, rs_range_run **runs,
                               size_t *run_count) {
  size_t n;
  const mprof_range_record *r = mprof_trace_ranges(m->trace, &n);
  *runs = NULL;
  *run_count = 0;
  m->range_order = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  uint32_t *lane = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
  if (!m->range_order || !lane) {
    free(lane);
    return mprof_render__oom();
  }
  for (size_t i = 0; i < n; i++)
    m->range_order[i] = (uint32_t)i;
  sort_ranges = r;
  qsort(m->range_order, n, sizeof(uint32_t), by_thread_start);
  /* Greedy lanes per thread, outer ranges first: a range takes the first
   * lane whose last range has ended, so that properly nested push/pop
   * ranges land at their depth and overlapping start/end ranges still
   * never share a row. */
  int64_t *lane_end = NULL;
  size_t lanes_cap = 0, lanes = 0, runs_needed = 0;
  for (size_t i = 0; i < n; i++) {
    const mprof_range_record *x = &r[m->range_order[i]];
    if (i == 0 || x->thread_id != r[m->range_order[i - 1]].thread_id)
      lanes = 0;
    int64_t start = rs_clamp_ns(x->start);
    size_t l = 0;
    while (l < lanes && lane_end[l] > start)
      l++;
    if (l == lanes) {
      if (lanes == lanes_cap) {
        size_t cap = lanes_cap ? lanes_cap * 2 : 8;
        int64_t *grown = (int64_t *)realloc(lane_end, cap * sizeof *grown);
        if (!grown) {
          free(lane_end);
          free(lane);
          return mprof_render__oom();
        }
        lane_end = grown;
        lanes_cap = cap;
      }
      lanes++;
      runs_needed++;
    }
    lane_end[l] = rs_range_end(x);
    lane[m->range_order[i]] = (uint32_t)l;
  }
  free(lane_end);
  sort_lane = lane;
  qsort(m->range_order, n, sizeof(uint32_t), by_thread_lane);
  rs_range_run *out =
      (rs_range_run *)calloc(runs_needed ? runs_needed : 1, sizeof *out);
  if (!out) {
    free(lane);
    return mprof_render__oom();
  }
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t idx = m->range_order[i];
    if (used && out[used - 1].thread_id == r[idx].thread_id &&
        out[used - 1].depth == lane[idx]) {
      out[used - 1].count++;
      continue;
    }
    out[used].thread_id = r[idx].thread_id;
    out[used].depth = lane[idx];
    out[used].first = i;
    out[used].count = 1;
    used++;
  }
  free(lane);
  *runs = out;
  *run_count = used;
  return 0;
}

/* ---- counter tracks ----------------------------------------------------- */

static const mprof_pm_sample_record *sort_pm;
static int by_device_start(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const mprof_pm_sample_record *x = &sort_pm[i], *y = &sort_pm[j];
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* The counters drawn as tracks: shares of a peak, so that every track has
 * the same 0..100% scale. */
const uint32_t rs_track_counters[RS_TRACK_COUNTERS] = {
    MPROF_COUNTER_SM_ACTIVE, MPROF_COUNTER_WARPS_ACTIVE,
    MPROF_COUNTER_ISSUE,     MPROF_COUNTER_TENSOR,
    MPROF_COUNTER_FMA,       MPROF_COUNTER_ALU,
    MPROF_COUNTER_DRAM,      MPROF_COUNTER_L2};

int mprof_render__build_counters(mprof_render_model *m) {
  size_t n, devices;
  const mprof_pm_sample_record *s = mprof_trace_pm_samples(m->trace, &n);
  mprof_trace_devices(m->trace, &devices);
  if (mprof_throughput_build(&m->throughput, m->join))
    return mprof_render__fail("%s", mprof_error_last());
  m->pm_order = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  m->pm_first = (size_t *)calloc(devices + 1, sizeof(size_t));
  if (!m->pm_order || !m->pm_first)
    return mprof_render__oom();
  size_t used = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].device < devices && s[i].end >= s[i].start)
      m->pm_order[used++] = (uint32_t)i;
  sort_pm = s;
  qsort(m->pm_order, used, sizeof(uint32_t), by_device_start);
  for (size_t i = 0; i < used; i++)
    m->pm_first[s[m->pm_order[i]].device + 1]++;
  for (size_t d = 0; d < devices; d++)
    m->pm_first[d + 1] += m->pm_first[d];
  return 0;
}
