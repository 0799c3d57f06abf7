/*
 * mprof-render — the rows of the Activity view: spans nested per recorder
 * (launch, SM, block, warp), and for one group and one choice of rows (by
 * SM, block or warp) the outermost spans (phases) and the innermost
 * (instructions) in greedy sub-lanes.
 *
 * Nesting is found once at open; the rows of the group and choice on
 * screen are built when first drawn and kept in the model's cache, with
 * Density's buckets of the group on screen (spans.c builds them): the
 * things of the model that change after open (single-threaded, as the
 * whole renderer is).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

static void free_activity(rs_activity *a) {
  if (!a)
    return;
  for (int l = 0; l < 2; l++) {
    free(a->level[l].rows);
    free(a->level[l].idx);
    free(a->level[l].start);
    free(a->level[l].end);
    free(a->level[l].lane_first);
    free(a->level[l].all_idx);
    free(a->level[l].all_start);
    free(a->level[l].all_max_end);
  }
  free(a);
}

typedef struct nest_key {
  uint32_t launch, sm, block, warp, idx;
  int64_t start, end;
} nest_key;

static int by_recorder(const void *a, const void *b) {
  const nest_key *x = (const nest_key *)a, *y = (const nest_key *)b;
  RS_ORDER_BY(launch);
  RS_ORDER_BY(sm);
  RS_ORDER_BY(block);
  RS_ORDER_BY(warp);
  RS_ORDER_BY(start);
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1; /* the enclosing one first */
  RS_ORDER_BY(idx);
  return 0;
}

/* Nesting per recorder (launch, SM, block, warp): 1 = outermost, 2 =
 * innermost (both for a span alone). A block runs on one SM, but an
 * imported MKPROF numbers its instructions per SM: spans of two SMs never
 * nest. */
int mprof_render__build_nesting(mprof_render_model *m) {
  m->activity_cache = (rs_activity_cache *)calloc(1, sizeof *m->activity_cache);
  m->density = (rs_density *)calloc(1, sizeof *m->density);
  if (!m->activity_cache || !m->density)
    return mprof_render__oom();
  m->density->group = -1;
  size_t n;
  const mprof_span_record *sp = mprof_trace_spans(m->trace, &n);
  m->span_nest = (unsigned char *)malloc(n ? n : 1);
  nest_key *k = (nest_key *)malloc((n ? n : 1) * sizeof *k);
  int64_t stack_end[64];
  uint32_t stack_idx[64];
  if (!m->span_nest || !k) {
    free(k);
    return mprof_render__oom();
  }
  for (size_t i = 0; i < n; i++) {
    k[i].launch = sp[i].launch;
    k[i].sm = sp[i].sm;
    k[i].block = sp[i].block;
    k[i].warp = sp[i].warp;
    k[i].idx = (uint32_t)i;
    k[i].start = rs_clamp_ns(sp[i].start);
    k[i].end = rs_clamp_end(sp[i].start, sp[i].end);
    m->span_nest[i] = 3;
  }
  qsort(k, n, sizeof *k, by_recorder);
  size_t depth = 0, cap = sizeof stack_end / sizeof stack_end[0];
  for (size_t i = 0; i < n; i++) {
    if (i && (k[i].launch != k[i - 1].launch || k[i].sm != k[i - 1].sm ||
              k[i].block != k[i - 1].block || k[i].warp != k[i - 1].warp))
      depth = 0;
    while (depth && stack_end[depth - 1] <= k[i].start)
      depth--;
    if (depth) {
      m->span_nest[k[i].idx] &= (unsigned char)~1u; /* not outermost */
      m->span_nest[stack_idx[depth - 1]] &=
          (unsigned char)~2u; /* has a child */
    }
    if (depth == cap) {
      /* Deeper than 64: treat it as a sibling of the deepest. */
      depth--;
    }
    stack_end[depth] = k[i].end;
    stack_idx[depth] = k[i].idx;
    depth++;
  }
  free(k);
  return 0;
}

typedef struct act_key {
  uint32_t device, sm, launch, block, warp, idx;
  int64_t start, end;
} act_key;

static int by_activity_row(const void *a, const void *b) {
  const act_key *x = (const act_key *)a, *y = (const act_key *)b;
  RS_ORDER_BY(device);
  RS_ORDER_BY(launch);
  RS_ORDER_BY(block);
  RS_ORDER_BY(sm); /* an imported MKPROF numbers blocks per SM */
  RS_ORDER_BY(warp);
  RS_ORDER_BY(start);
  RS_ORDER_BY(end);
  RS_ORDER_BY(idx);
  return 0;
}

static int same_row(const act_key *x, const act_key *y) {
  return x->device == y->device && x->sm == y->sm && x->launch == y->launch &&
         x->block == y->block && x->warp == y->warp;
}

/* The rank of @p device among the GPUs of @p g (its tint and label). */
static uint32_t group_gpu(const rs_group *g, uint32_t device) {
  for (size_t s = 0; s < g->sm_count; s++)
    if (g->sms[s].device == device)
      return g->sms[s].gpu;
  return 0;
}

static int by_int64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int build_level(const mprof_render_model *m, const rs_group *g, int rows,
                       int leaves, rs_activity_level *out) {
  const mprof_span_record *sp = mprof_trace_spans(m->trace, NULL);
  size_t n = 0;
  unsigned char want = leaves ? 2 : 1;
  for (size_t i = 0; i < g->span_count; i++)
    n += (m->span_nest[g->all_idx[i]] & want) != 0;
  lane_builder lb;
  memset(&lb, 0, sizeof lb);
  int rc = -1;
  act_key *k = (act_key *)malloc((n ? n : 1) * sizeof *k);
  out->idx = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  out->start = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  out->end = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  int64_t *durations = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  if (!k || !out->idx || !out->start || !out->end || !durations)
    goto done;
  size_t at = 0;
  for (size_t s = 0; s < g->sm_count; s++)
    for (size_t i = g->sms[s].first; i < g->sms[s].first + g->sms[s].count;
         i++) {
      uint32_t idx = g->all_idx[i];
      if (!(m->span_nest[idx] & want))
        continue;
      act_key *x = &k[at++];
      x->device = rows == MPROF_ACTIVITY_SM ? g->sms[s].device : 0;
      x->sm = g->sms[s].sm;
      x->launch = rows == MPROF_ACTIVITY_SM ? 0 : sp[idx].launch;
      x->block = rows == MPROF_ACTIVITY_SM ? 0 : sp[idx].block;
      x->warp = rows == MPROF_ACTIVITY_WARP ? sp[idx].warp : 0;
      x->idx = idx;
      x->start = g->all_start[i];
      x->end = rs_clamp_end(sp[idx].start, sp[idx].end);
      durations[at - 1] = x->end - x->start;
    }
  qsort(k, n, sizeof *k, by_activity_row);
  if (n) {
    qsort(durations, n, sizeof *durations, by_int64);
    out->median_ns = (double)durations[n / 2];
  }
  /* Rows by SM: every SM of the group (idle ones too), in its (GPU, SM)
   * order, as Mega's bands. Rows by block or warp: those with spans. */
  int by_sm = rows == MPROF_ACTIVITY_SM;
  size_t row_count = by_sm ? g->sm_count : 0;
  for (size_t i = 0; i < n && !by_sm; i++)
    if (i == 0 || !same_row(&k[i], &k[i - 1]))
      row_count++;
  out->rows =
      (rs_activity_row *)calloc(row_count ? row_count : 1, sizeof *out->rows);
  out->all_idx = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  out->all_start = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  out->all_max_end = (int64_t *)malloc((n ? n : 1) * sizeof(int64_t));
  if (!out->rows || !out->all_idx || !out->all_start || !out->all_max_end)
    goto done;
  size_t i = 0;
  for (size_t row = 0; row < row_count; row++) {
    size_t j = i;
    rs_activity_row *r = &out->rows[out->row_count++];
    if (by_sm) {
      const rs_sm *sm = &g->sms[row];
      while (j < n && k[j].device == sm->device && k[j].sm == sm->sm)
        j++;
      r->device = sm->device;
      r->gpu = sm->gpu;
      r->sm = sm->sm;
      r->launch = r->block = r->warp = MPROF_INDEX_NONE;
    } else {
      while (j < n && same_row(&k[j], &k[i]))
        j++;
      const mprof_span_record *first = &sp[k[i].idx];
      r->device = rs_launch_device(m, first->launch);
      r->gpu = group_gpu(g, r->device);
      r->sm = first->sm;
      r->launch = k[i].launch;
      r->block = k[i].block;
      r->warp = rows == MPROF_ACTIVITY_WARP ? k[i].warp : MPROF_INDEX_NONE;
    }
    r->spans = j - i;
    r->first = i;
    int64_t run = INT64_MIN;
    for (size_t x = i; x < j; x++) {
      out->all_idx[x] = k[x].idx;
      out->all_start[x] = k[x].start;
      run = k[x].end > run ? k[x].end : run;
      out->all_max_end[x] = run;
    }
    if (lb_reserve(&lb, j - i))
      goto done;
    for (size_t x = i; x < j; x++) {
      lb.tmp_start[x - i] = k[x].start;
      lb.tmp_end[x - i] = k[x].end;
      lb.tmp_idx[x - i] = k[x].idx;
    }
    if (lb_place(&lb, j - i, &r->lanes, i, out->idx, out->start, out->end))
      goto done;
    i = j;
  }
  out->lane_first = lb.pool;
  lb.pool = NULL;
  rc = 0;
done:
  lb_free(&lb);
  free(k);
  free(durations);
  return rc ? mprof_render__oom() : 0;
}

const rs_activity *mprof_render__activity(const mprof_render_model *m,
                                          int group, int rows) {
  if (!m || !m->activity_cache || group < 0 ||
      (size_t)group >= m->group_count || rows < 0 ||
      rows >= MPROF_ACTIVITY_ROWS_COUNT)
    return NULL;
  rs_activity_cache *cache = m->activity_cache;
  if (cache->last && cache->last->group == group && cache->last->rows == rows)
    return cache->last;
  free_activity(cache->last);
  cache->last = NULL;
  rs_activity *a = (rs_activity *)calloc(1, sizeof *a);
  if (!a)
    return NULL;
  a->group = group;
  a->rows = rows;
  if (build_level(m, &m->groups[group], rows, 0, &a->level[0]) ||
      build_level(m, &m->groups[group], rows, 1, &a->level[1])) {
    free_activity(a);
    return NULL;
  }
  cache->last = a;
  return a;
}

const rs_density *mprof_render__density(const mprof_render_model *m,
                                        int group) {
  if (!m || !m->density || group < 0 || (size_t)group >= m->group_count)
    return NULL;
  rs_density *d = m->density;
  if (d->group == group)
    return d->buckets ? d : NULL;
  free(d->busy);
  memset(d, 0, sizeof *d);
  if (mprof_render__build_density(m, group, d)) {
    d->group = -1;
    return NULL;
  }
  return d->buckets ? d : NULL;
}

void mprof_render__free_activity(mprof_render_model *m) {
  if (m->density)
    free(m->density->busy);
  free(m->density);
  free(m->span_nest);
  if (m->activity_cache)
    free_activity(m->activity_cache->last);
  free(m->activity_cache);
}
