/*
 * mprof-render — the host and counter tracks of the Trace view, built once
 * at open: NVTX ranges and CUDA API calls per host thread, laid out by
 * nesting (a range inside another goes one row below it), calls and
 * launches by correlation id (to follow one to the other), and the PM
 * samples of each GPU by start (the PM_SAMPLES column of each counter is
 * the diagnosis's throughput join, mprof/throughput.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

/* ---- rows of host intervals: NVTX ranges, API calls ------------------- */

/* What the lanes are laid out over: intervals with a thread. */
typedef struct host_items {
  const int64_t *start, *end; /* end >= start */
  const uint32_t *thread;
  const uint32_t *lane;
} host_items;

static _Thread_local host_items sort_items;

/* By thread, then start, the longer (the outer) first. */
static int by_thread_start(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const host_items *h = &sort_items;
  if (h->thread[i] != h->thread[j])
    return h->thread[i] < h->thread[j] ? -1 : 1;
  if (h->start[i] != h->start[j])
    return h->start[i] < h->start[j] ? -1 : 1;
  if (h->end[i] != h->end[j])
    return h->end[i] > h->end[j] ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* By thread, then lane, then start. */
static int by_thread_lane(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const host_items *h = &sort_items;
  if (h->thread[i] != h->thread[j])
    return h->thread[i] < h->thread[j] ? -1 : 1;
  if (h->lane[i] != h->lane[j])
    return h->lane[i] < h->lane[j] ? -1 : 1;
  if (h->start[i] != h->start[j])
    return h->start[i] < h->start[j] ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* Greedy lanes per thread (mprof_render_assign_lanes), outer intervals
 * first, so that properly nested push/pop ranges land at their depth and
 * overlapping ones never share a row. Fills @p order (n indices: by thread,
 * lane, start) and the runs of one (thread, lane); *runs is the caller's. */
static int lay_out(host_items items, size_t n, uint32_t *order,
                   rs_range_run **runs, size_t *run_count) {
  *runs = NULL;
  *run_count = 0;
  uint32_t *lane = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
  uint32_t *sorted_lane = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
  int64_t *bounds = (int64_t *)malloc((n ? n : 1) * 2 * sizeof *bounds);
  if (!lane || !sorted_lane || !bounds) {
    free(lane);
    free(sorted_lane);
    free(bounds);
    return mprof_render__oom();
  }
  for (size_t i = 0; i < n; i++)
    order[i] = (uint32_t)i;
  sort_items = items;
  qsort(order, n, sizeof(uint32_t), by_thread_start);
  for (size_t i = 0; i < n; i++) {
    bounds[i] = items.start[order[i]];
    bounds[n + i] = items.end[order[i]];
  }
  size_t runs_needed = 0;
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && items.thread[order[j]] == items.thread[order[i]];)
      j++;
    runs_needed += mprof_render_assign_lanes(bounds + i, bounds + n + i, j - i,
                                             sorted_lane + i);
  }
  for (size_t i = 0; i < n; i++)
    lane[order[i]] = sorted_lane[i];
  free(sorted_lane);
  free(bounds);
  items.lane = lane;
  sort_items = items;
  qsort(order, n, sizeof(uint32_t), by_thread_lane);
  rs_range_run *out =
      (rs_range_run *)calloc(runs_needed ? runs_needed : 1, sizeof *out);
  if (!out) {
    free(lane);
    return mprof_render__oom();
  }
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t idx = order[i];
    if (used && out[used - 1].thread_id == items.thread[idx] &&
        out[used - 1].depth == lane[idx]) {
      out[used - 1].count++;
      continue;
    }
    out[used].thread_id = items.thread[idx];
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

/* The intervals of @p n records of @p size bytes whose start, end and
 * thread are at the given offsets, laid out into *order (allocated here,
 * as is *order_end), with the end of each (never before its start) in
 * that order in *order_end. */
static int lay_out_records(const void *records, size_t n, size_t size,
                           size_t start_at, size_t end_at, size_t thread_at,
                           uint32_t **order, int64_t **order_end,
                           rs_range_run **runs, size_t *run_count) {
  *order = (uint32_t *)malloc((n ? n : 1) * sizeof **order);
  *order_end = (int64_t *)malloc((n ? n : 1) * sizeof **order_end);
  int64_t *start = (int64_t *)malloc((n ? n : 1) * sizeof *start);
  int64_t *end = (int64_t *)malloc((n ? n : 1) * sizeof *end);
  uint32_t *thread = (uint32_t *)malloc((n ? n : 1) * sizeof *thread);
  int rc = -1;
  if (!*order || !*order_end || !start || !end || !thread) {
    mprof_render__oom();
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    const unsigned char *r = (const unsigned char *)records + i * size;
    uint64_t a, b;
    memcpy(&a, r + start_at, 8);
    memcpy(&b, r + end_at, 8);
    memcpy(&thread[i], r + thread_at, 4);
    start[i] = rs_clamp_ns(a);
    end[i] = rs_clamp_end(a, b);
  }
  host_items items = {start, end, thread, NULL};
  rc = lay_out(items, n, *order, runs, run_count);
  for (size_t i = 0; !rc && i < n; i++)
    (*order_end)[i] = end[(*order)[i]];
done:
  free(start);
  free(end);
  free(thread);
  return rc;
}

int mprof_render__build_ranges(mprof_render_model *m, rs_range_run **runs,
                               size_t *run_count) {
  size_t n;
  const mprof_range_record *r = mprof_trace_ranges(m->trace, &n);
  return lay_out_records(r, n, sizeof *r, offsetof(mprof_range_record, start),
                         offsetof(mprof_range_record, end),
                         offsetof(mprof_range_record, thread_id),
                         &m->range_order, &m->range_end, runs, run_count);
}

static _Thread_local const uint32_t *sort_keys;
static int by_key(const void *a, const void *b) {
  uint32_t x = sort_keys[*(const uint32_t *)a];
  uint32_t y = sort_keys[*(const uint32_t *)b];
  if (x != y)
    return x < y ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Indices 0..n-1 by @p keys (stride @p stride uint32 apart). */
static uint32_t *sorted_by_key(const void *records, size_t n, size_t size,
                               size_t key_at, uint32_t **keys_out) {
  uint32_t *keys = (uint32_t *)malloc((n ? n : 1) * sizeof *keys);
  uint32_t *order = (uint32_t *)malloc((n ? n : 1) * sizeof *order);
  if (!keys || !order) {
    free(keys);
    free(order);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    memcpy(&keys[i], (const unsigned char *)records + i * size + key_at, 4);
    order[i] = (uint32_t)i;
  }
  sort_keys = keys;
  qsort(order, n, sizeof *order, by_key);
  *keys_out = keys;
  return order;
}

int mprof_render__build_api(mprof_render_model *m, rs_range_run **runs,
                            size_t *run_count) {
  size_t n, launches;
  const mprof_api_call_record *c = mprof_trace_api_calls(m->trace, &n);
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &launches);
  if (lay_out_records(c, n, sizeof *c, offsetof(mprof_api_call_record, start),
                      offsetof(mprof_api_call_record, end),
                      offsetof(mprof_api_call_record, thread_id), &m->api_order,
                      &m->api_end, runs, run_count))
    return -1;
  m->api_count = n;
  if (!n)
    return 0; /* no calls: no index of the launches either */
  /* Calls and launches by correlation id, to follow one to the other. */
  m->api_by_corr = sorted_by_key(
      c, n, sizeof *c, offsetof(mprof_api_call_record, correlation_id),
      &m->api_corr);
  m->launch_by_corr = sorted_by_key(
      l, launches, sizeof *l, offsetof(mprof_launch_record, correlation_id),
      &m->launch_corr);
  if (!m->api_by_corr || !m->launch_by_corr)
    return mprof_render__oom();
  m->launch_count = launches;
  return 0;
}

/* The first position of @p key in @p order by @p keys, or n. */
static size_t find_key(const uint32_t *order, const uint32_t *keys, size_t n,
                       uint32_t key) {
  size_t lo;
  RS_LOWER_BOUND(lo, 0, n, i, keys[order[i]] < key);
  return lo < n && keys[order[lo]] == key ? lo : n;
}

int64_t mprof_render_launch_api_call(const mprof_render_model *m,
                                     size_t launch) {
  if (!m || !m->api_count || launch >= m->launch_count ||
      !m->launch_corr[launch])
    return -1;
  size_t at = find_key(m->api_by_corr, m->api_corr, m->api_count,
                       m->launch_corr[launch]);
  return at < m->api_count ? (int64_t)m->api_by_corr[at] : -1;
}

int64_t mprof_render_api_call_launch(const mprof_render_model *m, size_t call) {
  if (!m || call >= m->api_count || !m->api_corr[call])
    return -1;
  size_t at = find_key(m->launch_by_corr, m->launch_corr, m->launch_count,
                       m->api_corr[call]);
  return at < m->launch_count ? (int64_t)m->launch_by_corr[at] : -1;
}

/* ---- counter tracks ----------------------------------------------------- */

static _Thread_local const mprof_pm_sample_record *sort_pm;
static int by_device_start(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const mprof_pm_sample_record *x = &sort_pm[i], *y = &sort_pm[j];
  RS_ORDER_BY(device);
  RS_ORDER_BY(start);
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
  m->pm_end = (int64_t *)malloc((used ? used : 1) * sizeof(int64_t));
  if (!m->pm_end)
    return mprof_render__oom();
  for (size_t i = 0; i < used; i++) {
    m->pm_first[s[m->pm_order[i]].device + 1]++;
    m->pm_end[i] = rs_clamp_ns(s[m->pm_order[i]].end);
  }
  for (size_t d = 0; d < devices; d++)
    m->pm_first[d + 1] += m->pm_first[d];
  /* The buckets for zoomed-out frames. */
  m->pm_bucket_first = (size_t *)calloc(devices + 1, sizeof(size_t));
  size_t buckets = 0;
  for (size_t d = 0; m->pm_bucket_first && d < devices; d++) {
    size_t windows = m->pm_first[d + 1] - m->pm_first[d];
    m->pm_bucket_first[d] = buckets;
    buckets += (windows + RS_PM_BUCKET - 1) / RS_PM_BUCKET;
  }
  if (m->pm_bucket_first)
    m->pm_bucket_first[devices] = buckets;
  m->pm_bucket_start = (int64_t *)malloc((buckets ? buckets : 1) * 8);
  m->pm_bucket_end = (int64_t *)malloc((buckets ? buckets : 1) * 8);
  m->pm_bucket_max = (float *)malloc((buckets ? buckets : 1) *
                                     MPROF_PM_MAX_METRICS * sizeof(float));
  if (!m->pm_bucket_first || !m->pm_bucket_start || !m->pm_bucket_end ||
      !m->pm_bucket_max)
    return mprof_render__oom();
  for (size_t d = 0; d < devices; d++)
    for (size_t i = m->pm_first[d]; i < m->pm_first[d + 1]; i++) {
      size_t b = m->pm_bucket_first[d] + (i - m->pm_first[d]) / RS_PM_BUCKET;
      const mprof_pm_sample_record *w = &s[m->pm_order[i]];
      float *max = &m->pm_bucket_max[b * MPROF_PM_MAX_METRICS];
      if ((i - m->pm_first[d]) % RS_PM_BUCKET == 0) {
        m->pm_bucket_start[b] = rs_clamp_ns(w->start);
        m->pm_bucket_end[b] = rs_clamp_ns(w->end);
        for (int c = 0; c < MPROF_PM_MAX_METRICS; c++)
          max[c] = NAN;
      }
      if (rs_clamp_ns(w->end) > m->pm_bucket_end[b])
        m->pm_bucket_end[b] = rs_clamp_ns(w->end);
      for (int c = 0; c < MPROF_PM_MAX_METRICS; c++)
        if (!isnan(w->value[c]) && (isnan(max[c]) || w->value[c] > max[c]))
          max[c] = w->value[c];
    }
  return 0;
}
