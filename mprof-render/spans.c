/*
 * mprof-render — activity spans, indexed once at open so that Mega,
 * Density and Activity draw in time that grows with pixels, not spans.
 *
 * Spans are grouped by kernel name (every device: the GPU bands of Mega),
 * then by (device, SM), sorted by start. Per SM, three views of them:
 *
 *   all     every span by start with the running maximum of the ends: one
 *           binary search finds what covers any instant (zoomed-out bars);
 *   rows    Mega's separator / loader / consumer / storer / other rows by
 *           the region's role, each split greedily into sub-lanes whose
 *           spans never overlap (zoomed-in bars);
 *   buckets Density's fine histogram of the busy share.
 *
 * mprof_render_track_cover() turns any of these into pixel columns.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_spans.h"

/* Region colours when the trace gives none (the kernel palette's order). */
static const uint32_t region_palette[] = {
    0x4e79a7, 0x59a14f, 0xe15759, 0xf28e2b, 0x76b7b2, 0xedc948,
    0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d, 0x499894, 0xd37295};
#define REGION_PALETTE (sizeof region_palette / sizeof region_palette[0])

/* ---- pure arithmetic ---------------------------------------------------- */

/* First index in [lo, n) with max_end > t (max_end ascends), galloping
 * from lo: the next answer is usually near the last. */
size_t rs_first_ending_after(const int64_t *max_end, size_t lo, size_t n,
                             int64_t t) {
  size_t at;
  RS_GALLOP(at, lo, n, i, max_end[i] <= t);
  return at;
}

size_t mprof_render_track_cover(const mprof_render_track *track,
                                const mprof_render_timemap *map, size_t columns,
                                mprof_render_column *out) {
  for (size_t c = 0; c < columns; c++) {
    out[c].item = -1;
    out[c].merged = 0;
  }
  if (!track || !track->count || !columns)
    return 0;
  const double ns_per_px = mprof_render_ns_per_px(map);
  const double px_per_ns = 1.0 / ns_per_px;
  /* Column c spans [t(c), t(c + 1)): t(c) rounded down so that a boundary
   * exactly on a pixel edge belongs to the column it starts. */
#define COL_T(c)                                                               \
  rs_add_ns(map->start_ns, rs_ns_of(floor((double)(c)*ns_per_px)))
#define T_COL(t) ((double)rs_sub_ns((t), map->start_ns) * px_per_ns)
  size_t searches = 0, at = 0, n = track->count;
  size_t c = 0;
  while (c < columns) {
    int64_t t0 = COL_T(c), t1 = COL_T(c + 1);
    if (t1 <= t0)
      t1 = t0 + 1;
    at = rs_first_ending_after(track->max_end, at, n, t0);
    searches++;
    if (at >= n)
      break;
    int64_t s = track->start[at];
    if (s >= t1) {
      /* Nothing meets this column: jump to the one where `at` starts. */
      double x = T_COL(s);
      size_t next = x >= (double)columns ? columns : (size_t)floor(x);
      c = next > c ? next : c + 1;
      continue;
    }
    /* `at` meets column c and every later column up to its end: the
     * running maximum before it ended earlier, so it stays the first. */
    int64_t e = track->max_end[at];
    double xe = T_COL(e);
    size_t last = xe >= (double)columns ? columns - 1
                  : xe <= (double)c     ? c
                                        : (size_t)ceil(xe) - 1;
    if (last < c)
      last = c;
    for (size_t k = c; k <= last; k++) {
      out[k].item = (int64_t)at;
      /* Merged where another span starts inside the column or this one
       * ends inside it short of the column's end. */
      int64_t k0 = COL_T(k), k1 = COL_T(k + 1);
      int next_inside =
          at + 1 < n && track->start[at + 1] < k1 && track->start[at + 1] >= k0;
      int ends_inside = e < k1 && (k > c || s > k0);
      out[k].merged = next_inside || ends_inside || (s > k0 && e < k1);
    }
    c = last + 1;
  }
#undef COL_T
#undef T_COL
  return searches;
}

uint32_t mprof_render_assign_lanes(const int64_t *start, const int64_t *end,
                                   size_t count, uint32_t *lane) {
  int64_t small[64];
  int64_t *ends = small;
  size_t cap = sizeof small / sizeof small[0];
  uint32_t lanes = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t l = 0;
    while (l < lanes && ends[l] > start[i])
      l++;
    if (l == lanes) {
      if (lanes == cap) {
        size_t grown_cap = cap * 2;
        int64_t *grown = (int64_t *)malloc(grown_cap * sizeof *grown);
        if (!grown) {
          /* Out of memory: fold into the last lane rather than fail. */
          l = lanes - 1;
          ends[l] = end[i] > ends[l] ? end[i] : ends[l];
          lane[i] = l;
          continue;
        }
        memcpy(grown, ends, lanes * sizeof *grown);
        if (ends != small)
          free(ends);
        ends = grown;
        cap = grown_cap;
      }
      lanes++;
    }
    ends[l] = end[i];
    lane[i] = l;
  }
  if (ends != small)
    free(ends);
  return lanes;
}

int mprof_render_mega_detailed(double band_px, double units) {
  return units > 0 && band_px / units >= MPROF_RENDER_MEGA_UNIT_MIN;
}

uint32_t mprof_render_lanes_shown(uint32_t lanes, double row_px) {
  if (!lanes)
    return 0;
  double fit = floor(row_px / 2.0);
  if (fit < 1)
    fit = 1;
  return (double)lanes < fit ? lanes : (uint32_t)fit;
}

/* ---- regions and launches ---------------------------------------------- */

uint32_t rs_region_color(const mprof_render_model *m, uint32_t region) {
  if (region < m->region_count)
    return m->region_color[region];
  return 0x8a8f99;
}

uint32_t rs_region_role(const mprof_render_model *m, uint32_t region) {
  return region < m->region_count ? m->region_role[region] : MPROF_ROLE_OTHER;
}

uint32_t rs_launch_device(const mprof_render_model *m, uint32_t launch) {
  size_t n, streams;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  const mprof_stream_record *s = mprof_trace_streams(m->trace, &streams);
  if (launch >= n || l[launch].stream >= streams)
    return MPROF_INDEX_NONE;
  return s[l[launch].stream].device;
}

/* ---- building the groups ------------------------------------------------ */

typedef struct span_key {
  uint32_t group;
  uint32_t device; /* NONE sorts last */
  uint32_t sm;
  uint32_t idx;
  int64_t start, end;
} span_key;

static int by_group_sm_start(const void *a, const void *b) {
  const span_key *x = (const span_key *)a, *y = (const span_key *)b;
  RS_ORDER_BY(group);
  RS_ORDER_BY(device);
  RS_ORDER_BY(sm);
  RS_ORDER_BY(start);
  RS_ORDER_BY(end);
  RS_ORDER_BY(idx);
  return 0;
}

static int build_launch_tracks(mprof_render_model *m);

/* Which Mega row a span of @p role goes to. */
static int row_of(const rs_group *g, uint32_t role) {
  if (role == MPROF_ROLE_SEPARATOR)
    return RS_SEPARATOR;
  if (!g->role_rows)
    return RS_CONSUMER;
  switch (role) {
  case MPROF_ROLE_LOADER: return RS_LOADER;
  case MPROF_ROLE_CONSUMER: return RS_CONSUMER;
  case MPROF_ROLE_STORER: return RS_STORER;
  default: return RS_OTHER;
  }
}

int lb_reserve(lane_builder *lb, size_t n) {
  if (n <= lb->cap)
    return 0;
  size_t cap = lb->cap ? lb->cap : 256;
  while (cap < n)
    cap *= 2;
  int64_t *s = (int64_t *)realloc(lb->tmp_start, cap * sizeof *s);
  if (s)
    lb->tmp_start = s;
  int64_t *e = (int64_t *)realloc(lb->tmp_end, cap * sizeof *e);
  if (e)
    lb->tmp_end = e;
  uint32_t *i = (uint32_t *)realloc(lb->tmp_idx, cap * sizeof *i);
  if (i)
    lb->tmp_idx = i;
  uint32_t *l = (uint32_t *)realloc(lb->tmp_lane, cap * sizeof *l);
  if (l)
    lb->tmp_lane = l;
  if (!s || !e || !i || !l)
    return -1;
  lb->cap = cap;
  return 0;
}

void lb_free(lane_builder *lb) {
  free(lb->tmp_start);
  free(lb->tmp_end);
  free(lb->tmp_idx);
  free(lb->tmp_lane);
  free(lb->pool);
}

int lb_place(lane_builder *lb, size_t n, rs_lanes *out, size_t at,
             uint32_t *dst_idx, int64_t *dst_start, int64_t *dst_end) {
  out->first = at;
  out->count = n;
  out->lanes =
      mprof_render_assign_lanes(lb->tmp_start, lb->tmp_end, n, lb->tmp_lane);
  size_t need = lb->pool_used + out->lanes + 1;
  if (need > lb->pool_cap) {
    size_t cap = lb->pool_cap ? lb->pool_cap : 1024;
    while (cap < need)
      cap *= 2;
    size_t *grown = (size_t *)realloc(lb->pool, cap * sizeof *grown);
    if (!grown)
      return -1;
    lb->pool = grown;
    lb->pool_cap = cap;
  }
  out->lane_at = lb->pool_used;
  size_t *first = lb->pool + lb->pool_used;
  lb->pool_used = need;
  /* Counting sort by lane; the order by start holds inside each lane. */
  for (uint32_t l = 0; l <= out->lanes; l++)
    first[l] = 0;
  for (size_t i = 0; i < n; i++)
    first[lb->tmp_lane[i] + 1]++;
  for (uint32_t l = 0; l < out->lanes; l++)
    first[l + 1] += first[l];
  /* Fill through a cursor per lane, kept in tmp_lane's slot after use. */
  size_t *cursor = (size_t *)malloc((out->lanes + 1) * sizeof *cursor);
  if (!cursor)
    return -1;
  memcpy(cursor, first, (out->lanes + 1) * sizeof *cursor);
  for (size_t i = 0; i < n; i++) {
    size_t to = at + cursor[lb->tmp_lane[i]]++;
    dst_idx[to] = lb->tmp_idx[i];
    dst_start[to] = lb->tmp_start[i];
    dst_end[to] = lb->tmp_end[i];
  }
  free(cursor);
  return 0;
}

/* Fine buckets being filled: the ns of overlap per bucket in `arr`, and
 * the buckets [lo, hi] touched so far (lo > hi: none). */
typedef struct bucket_fill {
  double *arr;
  size_t lo, hi;
} bucket_fill;

/* Add [a, b) to fine buckets @p fill. */
static void add_interval(bucket_fill *fill, size_t buckets, int64_t origin,
                         double bucket_ns, int64_t a, int64_t b) {
  double *arr = fill->arr;
  if (b <= a)
    return;
  double fa = (double)(a - origin) / bucket_ns;
  double fb = (double)(b - origin) / bucket_ns;
  if (fb <= 0 || fa >= (double)buckets)
    return;
  if (fa < 0)
    fa = 0;
  if (fb > (double)buckets)
    fb = (double)buckets;
  size_t ia = (size_t)fa, ib = (size_t)fb;
  if (ib >= buckets)
    ib = buckets - 1;
  if (ia < fill->lo)
    fill->lo = ia;
  if (ib > fill->hi || fill->hi == SIZE_MAX)
    fill->hi = ib;
  if (ia == ib) {
    arr[ia] += (fb - fa) * bucket_ns;
    return;
  }
  arr[ia] += ((double)(ia + 1) - fa) * bucket_ns;
  for (size_t i = ia + 1; i < ib; i++)
    arr[i] += bucket_ns;
  arr[ib] += (fb - (double)ib) * bucket_ns;
}

/* The union of SM @p sm's spans, stretch by stretch (with the running
 * maximum as the end, a span that starts after it opens a new stretch),
 * added to the @p buckets fine buckets of @p busy (NULL: none); returns
 * the ns it covers. */
static uint64_t sm_union(const rs_group *g, const rs_sm *sm, bucket_fill *busy,
                         size_t buckets, double bucket_ns) {
  int64_t cs = 0, ce = 0;
  int open = 0;
  uint64_t covered = 0;
  for (size_t i = sm->first; i <= sm->first + sm->count; i++) {
    int last = i == sm->first + sm->count;
    int64_t a = last ? 0 : g->all_start[i], e = last ? 0 : g->all_max_end[i];
    if (!last && open && a <= ce) {
      ce = e > ce ? e : ce;
      continue;
    }
    if (open) {
      if (busy)
        add_interval(busy, buckets, g->start_ns, bucket_ns, cs, ce);
      covered += (uint64_t)(ce - cs);
    }
    cs = a;
    ce = e;
    open = 1;
  }
  return covered;
}

int mprof_render__build_density(const mprof_render_model *m, int group,
                                rs_density *d) {
  const rs_group *g = &m->groups[group];
  d->group = group;
  if (!g->sm_count || g->end_ns <= g->start_ns)
    return 0;
  /* At most ~4M cells, 256..4096 per SM up to 16384 SMs (fewer beyond:
   * a row is then far below a pixel). */
  size_t buckets = (4u << 20) / g->sm_count;
  if (buckets > 4096)
    buckets = 4096;
  if (buckets < 16)
    buckets = 16;
  d->bucket_ns = (double)(g->end_ns - g->start_ns) / (double)buckets;
  d->busy = (float *)calloc(g->sm_count * buckets, sizeof(float));
  double *busy = (double *)malloc(buckets * sizeof(double));
  if (!d->busy || !busy) {
    free(d->busy);
    d->busy = NULL;
    free(busy);
    return mprof_render__oom();
  }
  d->buckets = buckets;
  memset(busy, 0, buckets * sizeof(double));
  for (size_t s = 0; s < g->sm_count; s++) {
    if (!g->sms[s].count)
      continue; /* idle: its cells stay 0 */
    /* Only the buckets this SM's spans touched are converted and cleared,
     * so a row costs its spans, not the 4096 buckets of a row. */
    bucket_fill fill = {busy, SIZE_MAX, SIZE_MAX};
    sm_union(g, &g->sms[s], &fill, buckets, d->bucket_ns);
    if (fill.hi == SIZE_MAX)
      continue;
    for (size_t b = fill.lo; b <= fill.hi; b++) {
      d->busy[s * buckets + b] = (float)(busy[b] / d->bucket_ns);
      busy[b] = 0;
    }
  }
  free(busy);
  return 0;
}

/* The SMs of @p device that a group shows, idle ones too: its sm_count
 * while the model's budget of idle rows lasts (taken from *budget); 0 for
 * spans of no device, a device of an unknown or unbelievable count (more
 * than RS_SM_MAX: only the SMs its spans name show), or past the budget. */
static uint32_t device_sms(const mprof_device_record *dev, size_t devices,
                           uint32_t device, size_t *budget) {
  if (device >= devices || dev[device].sm_count > RS_SM_MAX ||
      dev[device].sm_count > *budget)
    return 0;
  *budget -= dev[device].sm_count;
  return dev[device].sm_count;
}

/* An SM band without spans. */
static void push_empty(rs_group *g, uint32_t device, uint32_t gpu, uint32_t sm,
                       size_t at) {
  rs_sm *e = &g->sms[g->sm_count++];
  memset(e, 0, sizeof *e);
  e->device = device;
  e->gpu = gpu;
  e->sm = sm;
  for (int r = 0; r < RS_ROWS; r++)
    e->rows[r].first = at;
}

static int build_group_rows(mprof_render_model *m, rs_group *g,
                            const span_key *k, size_t n, lane_builder *lb) {
  const mprof_span_record *sp = mprof_trace_spans(m->trace, NULL);
  g->span_count = n;
  g->all_idx = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  g->all_start = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  g->all_max_end = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  g->row_idx = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  g->row_start = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  g->row_end = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  if (!g->all_idx || !g->all_start || !g->all_max_end || !g->row_idx ||
      !g->row_start || !g->row_end)
    return mprof_render__oom();
  /* Roles: rows of their own when any span has a loader/consumer/storer
   * role, else everything in the consumer row. */
  g->start_ns = INT64_MAX;
  g->end_ns = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    uint32_t role = rs_region_role(m, sp[k[i].idx].region);
    if (role == MPROF_ROLE_LOADER || role == MPROF_ROLE_CONSUMER ||
        role == MPROF_ROLE_STORER)
      g->role_rows = 1;
    if (k[i].start < g->start_ns)
      g->start_ns = k[i].start;
    if (k[i].end > g->end_ns)
      g->end_ns = k[i].end;
  }
  /* SMs and GPUs: every SM of each device, those without spans too (an
   * idle SM is what load balance is about), in (device, SM) order. */
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  size_t sms = 0, budget = m->idle_sm_budget;
  for (size_t i = 0; i < n; i++) {
    int new_device = i == 0 || k[i].device != k[i - 1].device;
    if (new_device)
      sms += device_sms(dev, devices, k[i].device, &budget);
    if (new_device || k[i].sm != k[i - 1].sm)
      sms++;
  }
  g->sms = (rs_sm *)calloc(sms ? sms : 1, sizeof *g->sms);
  if (!g->sms)
    return mprof_render__oom();
  g->sm_count = 0;
  uint32_t gpu = 0;
  size_t at = 0;        /* next free place in the row arrays */
  uint64_t next_sm = 0; /* the next SM id of the device to place */
  uint32_t total = 0;   /* SMs of the device shown, idle ones too */
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && k[j].device == k[i].device && k[j].sm == k[i].sm)
      j++;
    if (i == 0 || k[i].device != k[i - 1].device)
      total = device_sms(dev, devices, k[i].device, &m->idle_sm_budget);
    for (; next_sm < k[i].sm && next_sm < total; next_sm++)
      push_empty(g, k[i].device, gpu, (uint32_t)next_sm, at);
    next_sm = (uint64_t)k[i].sm + 1;
    rs_sm *sm = &g->sms[g->sm_count++];
    sm->device = k[i].device;
    sm->gpu = gpu;
    sm->sm = k[i].sm;
    sm->first = i;
    sm->count = j - i;
    sm->first_start = k[i].start;
    int64_t run = INT64_MIN;
    for (size_t x = i; x < j; x++) {
      g->all_idx[x] = k[x].idx;
      g->all_start[x] = k[x].start;
      if (k[x].end > run)
        run = k[x].end;
      g->all_max_end[x] = run;
    }
    sm->last_end = run;
    /* The rows, one at a time. */
    if (lb_reserve(lb, j - i))
      return mprof_render__oom();
    for (int r = 0; r < RS_ROWS; r++) {
      size_t count = 0;
      for (size_t x = i; x < j; x++) {
        if (row_of(g, rs_region_role(m, sp[k[x].idx].region)) != r)
          continue;
        lb->tmp_start[count] = k[x].start;
        lb->tmp_end[count] = k[x].end;
        lb->tmp_idx[count] = k[x].idx;
        count++;
      }
      if (count)
        g->has_row[r] = 1;
      if (lb_place(lb, count, &sm->rows[r], at, g->row_idx, g->row_start,
                   g->row_end))
        return mprof_render__oom();
      at += count;
    }
    if (j == n || k[j].device != k[i].device) {
      /* Close the device with its idle SMs. */
      for (; next_sm < total; next_sm++)
        push_empty(g, k[i].device, gpu, (uint32_t)next_sm, at);
      gpu++;
      next_sm = 0;
    }
    i = j;
  }
  g->gpu_count = gpu;
  return 0;
}

static int build_group(mprof_render_model *m, rs_group *g, const span_key *k,
                       size_t n) {
  lane_builder builder;
  memset(&builder, 0, sizeof builder);
  int rc = build_group_rows(m, g, k, n, &builder);
  g->lane_first = builder.pool; /* the group's from now on */
  builder.pool = NULL;
  lb_free(&builder);
  for (size_t s = 0; !rc && s < g->sm_count; s++)
    g->sms[s].busy_ns = sm_union(g, &g->sms[s], NULL, 0, 0);
  return rc;
}

int mprof_render__build_spans(mprof_render_model *m) {
  size_t n, regions;
  const mprof_span_record *sp = mprof_trace_spans(m->trace, &n);
  const mprof_region_record *rg = mprof_trace_regions(m->trace, &regions);
  m->span_total = n;
  m->none_group = -1;
  m->idle_sm_budget = RS_SM_ROWS_MAX;
  m->region_count = regions;
  m->region_color =
      (uint32_t *)malloc((regions ? regions : 1) * sizeof(uint32_t));
  m->region_role =
      (uint32_t *)malloc((regions ? regions : 1) * sizeof(uint32_t));
  m->kernel_group = (int32_t *)malloc((m->kernel_count ? m->kernel_count : 1) *
                                      sizeof(int32_t));
  if (!m->region_color || !m->region_role || !m->kernel_group ||
      build_launch_tracks(m))
    return mprof_render__oom();
  for (size_t r = 0; r < regions; r++) {
    m->region_color[r] = rg[r].color ? rg[r].color & 0xffffffu
                                     : region_palette[r % REGION_PALETTE];
    m->region_role[r] =
        rg[r].role <= MPROF_ROLE_STORER ? rg[r].role : MPROF_ROLE_OTHER;
  }
  for (size_t k = 0; k < m->kernel_count; k++)
    m->kernel_group[k] = -1;
  if (!n)
    return 0;
  if (n > UINT32_MAX)
    return mprof_render__fail("more than 2^32 spans");
  /* Groups: one per kernel name that has spans (first come first), and
   * one for spans of no launch. */
  span_key *keys = (span_key *)malloc(n * sizeof *keys);
  if (!keys)
    return mprof_render__oom();
  uint32_t none_key = (uint32_t)m->kernel_count; /* sorts after kernels */
  /* Kernels of one name share the group of the first of them; a span of
   * no launch has no kernel and no device (both NONE out of range). */
  for (size_t i = 0; i < n; i++) {
    uint32_t kernel = mprof_join_launch_kernel(m->join, sp[i].launch);
    keys[i].group =
        kernel != MPROF_INDEX_NONE ? m->name_first[kernel] : none_key;
    keys[i].device = rs_launch_device(m, sp[i].launch);
    keys[i].sm = sp[i].sm;
    keys[i].idx = (uint32_t)i;
    keys[i].start = rs_clamp_ns(sp[i].start);
    keys[i].end = rs_clamp_end(sp[i].start, sp[i].end);
  }
  qsort(keys, n, sizeof *keys, by_group_sm_start);
  size_t groups = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || keys[i].group != keys[i - 1].group)
      groups++;
  m->groups = (rs_group *)calloc(groups, sizeof *m->groups);
  int rc = m->groups ? 0 : mprof_render__oom();
  for (size_t i = 0; !rc && i < n;) {
    size_t j = i;
    while (j < n && keys[j].group == keys[i].group)
      j++;
    rs_group *g = &m->groups[m->group_count];
    int32_t index = (int32_t)m->group_count++;
    if (keys[i].group == none_key) {
      g->mangled = NULL;
      m->none_group = index;
    } else {
      g->mangled = m->kernels[keys[i].group].stats->mangled;
      for (size_t k = 0; k < m->kernel_count; k++)
        if (m->name_first[k] == keys[i].group)
          m->kernel_group[k] = index;
    }
    rc = build_group(m, g, keys + i, j - i);
    i = j;
  }
  free(keys);
  return rc;
}

void mprof_render__free_spans(mprof_render_model *m) {
  for (size_t i = 0; m->groups && i < m->group_count; i++) {
    rs_group *g = &m->groups[i];
    free(g->sms);
    free(g->all_idx);
    free(g->all_start);
    free(g->all_max_end);
    free(g->row_idx);
    free(g->row_start);
    free(g->row_end);
    free(g->lane_first);
  }
  free(m->groups);
  for (size_t k = 0; m->launch_tracks && k < m->kernel_count; k++)
    free(m->launch_tracks[k].storage);
  free(m->launch_tracks);
  free(m->kernel_group);
  free(m->region_color);
  free(m->region_role);
  mprof_mkprof_free(m->mkprof);
}

/* ---- accessors ---------------------------------------------------------- */

int mprof_render_model_first_tab(const mprof_render_model *m) {
  return m && mprof_trace_is_mkprof(m->trace) && mprof_render_model_has_spans(m)
             ? MPROF_RENDER_MEGA
             : MPROF_RENDER_SUMMARY;
}

int mprof_render_model_has_spans(const mprof_render_model *m) {
  return m && m->span_total > 0;
}

int mprof_render_model_is_demo(const mprof_render_model *m) {
  return m && m->demo;
}

const rs_group *mprof_render__group(const mprof_render_model *m, int kernel) {
  if (!m || !m->group_count)
    return NULL;
  if (kernel < 0)
    return m->none_group >= 0 ? &m->groups[m->none_group] : NULL;
  if ((size_t)kernel < m->kernel_count && m->kernel_group[kernel] >= 0)
    return &m->groups[m->kernel_group[kernel]];
  return NULL;
}

size_t mprof_render_kernel_span_count(const mprof_render_model *m, int kernel) {
  const rs_group *g = kernel >= 0 ? mprof_render__group(m, kernel) : NULL;
  return g ? g->span_count : 0;
}

int mprof_render_span_kernel(const mprof_render_model *m, int kernel) {
  if (!m || mprof_render_kernel_span_count(m, kernel))
    return kernel;
  for (size_t k = 0; k < m->kernel_count; k++)
    if (m->kernel_group[k] >= 0)
      return (int)k;
  return kernel;
}

/* ---- launches of a kernel (projected views) ----------------------------- */

/* A launch by start, then index: sorted by value, not through the
 * launch records (a million of them do not fit the cache). */
typedef struct launch_key {
  int64_t start, end;
  uint32_t idx;
} launch_key;

static int by_launch_start(const void *a, const void *b) {
  const launch_key *x = (const launch_key *)a, *y = (const launch_key *)b;
  RS_ORDER_BY(start);
  RS_ORDER_BY(idx);
  return 0;
}

/* A run of launch keys being merged: [at, end). */
typedef struct key_run {
  const launch_key *at, *end;
} key_run;

static void heap_down(key_run *heap, size_t n, size_t i) {
  for (;;) {
    size_t least = i, l = 2 * i + 1, r = l + 1;
    if (l < n && by_launch_start(heap[l].at, heap[least].at) < 0)
      least = l;
    if (r < n && by_launch_start(heap[r].at, heap[least].at) < 0)
      least = r;
    if (least == i)
      return;
    key_run swap = heap[i];
    heap[i] = heap[least];
    heap[least] = swap;
    i = least;
  }
}

/* Kernel @p kernel's launches by start, with the running maximum of their
 * ends, into @p t. One pass over the launches, stream by stream in order of
 * start, so that the records are read in order: a kernel on one stream
 * needs no sort, one on several streams a merge of their runs (by start,
 * then index, as a sort of them all would give). */
static int build_launch_track(const mprof_render_model *m, uint32_t kernel,
                              rs_launch_track *t) {
  size_t n, streams;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  mprof_trace_streams(m->trace, &streams);
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    count += mprof_join_launch_kernel(m->join, i) == kernel;
  t->count = count;
  if (!count)
    return 0;
  launch_key *keys = (launch_key *)malloc(count * sizeof *keys);
  key_run *runs = (key_run *)malloc((streams ? streams : 1) * sizeof *runs);
  char *storage =
      (char *)malloc(count * (sizeof(uint32_t) + 2 * sizeof(int64_t)));
  if (!keys || !runs || !storage) {
    free(keys);
    free(runs);
    free(storage);
    return -1;
  }
  size_t at = 0, run_count = 0;
  int sorted = 1;
  for (uint32_t st = 0; st < streams; st++) {
    size_t first = at, launches = mprof_trace_stream_launch_count(m->trace, st);
    for (size_t p = 0; p < launches; p++) {
      const mprof_launch_record *r = mprof_trace_stream_launch(m->trace, st, p);
      uint32_t i = (uint32_t)(r - l);
      if (mprof_join_launch_kernel(m->join, i) != kernel || at == count)
        continue;
      keys[at] = (launch_key){rs_clamp_ns(r->start), rs_clamp_ns(r->end), i};
      if (at && keys[at - 1].start > keys[at].start)
        sorted = 0;
      at++;
    }
    if (at > first)
      runs[run_count++] = (key_run){keys + first, keys + at};
  }
  t->count = count = at;
  /* The 8-byte arrays first, so that each is aligned. */
  int64_t *start = (int64_t *)storage;
  int64_t *max_end = start + count;
  uint32_t *idx = (uint32_t *)(max_end + count);
  int64_t run = INT64_MIN;
  if (sorted) {
    for (size_t i = 0; i < count; i++) {
      idx[i] = keys[i].idx;
      start[i] = keys[i].start;
      run = keys[i].end > run ? keys[i].end : run;
      max_end[i] = run;
    }
  } else {
    /* Each stream's run by start, then index; then the runs merged. */
    for (size_t r = 0; r < run_count; r++) {
      launch_key *a = (launch_key *)runs[r].at;
      size_t len = (size_t)(runs[r].end - runs[r].at);
      for (size_t i = 1; i < len; i++)
        if (by_launch_start(&a[i - 1], &a[i]) > 0) {
          qsort(a, len, sizeof *a, by_launch_start);
          break;
        }
    }
    for (size_t r = run_count; r-- > 0;)
      heap_down(runs, run_count, r);
    for (size_t i = 0; i < count; i++) {
      const launch_key *k = runs[0].at++;
      idx[i] = k->idx;
      start[i] = k->start;
      run = k->end > run ? k->end : run;
      max_end[i] = run;
      if (runs[0].at == runs[0].end)
        runs[0] = runs[--run_count];
      heap_down(runs, run_count, 0);
    }
  }
  free(keys);
  free(runs);
  t->idx = idx;
  t->start = start;
  t->max_end = max_end;
  t->storage = storage;
  return 0;
}

static int build_launch_tracks(mprof_render_model *m) {
  m->launch_tracks = (rs_launch_track *)calloc(
      m->kernel_count ? m->kernel_count : 1, sizeof(rs_launch_track));
  return m->launch_tracks ? 0 : -1;
}

const rs_launch_track *mprof_render__launch_track(const mprof_render_model *m,
                                                  int kernel) {
  if (!m || kernel < 0 || (size_t)kernel >= m->kernel_count)
    return NULL;
  rs_launch_track *t = &m->launch_tracks[kernel];
  if (!t->built)
    t->built = build_launch_track(m, (uint32_t)kernel, t) ? -1 : 1;
  return t->built > 0 && t->count ? t : NULL;
}
