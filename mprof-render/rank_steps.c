/*
 * mprof-render — the Ranks tab's data: libmprof's cross-rank report
 * (mprof/ranks.h) of the traces a set was opened from, built the first
 * time a view asks, with each step's score against the step's median rank
 * and where each rank's steps lie on the set's clock.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mprof/ranks.h>

#include "render_internal.h"

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The median of step column @p s over the ranks that have it; 0 none. */
static uint64_t column_median(const mprof_ranks *r, size_t ranks, size_t s,
                              uint64_t *scratch) {
  size_t n = 0;
  for (size_t i = 0; i < ranks; i++) {
    const mprof_rank_step *st = mprof_ranks_step(r, i, s);
    if (st)
      scratch[n++] = st->score_ns;
  }
  if (!n)
    return 0;
  qsort(scratch, n, sizeof *scratch, by_u64);
  return scratch[(n - 1) / 2];
}

static int build(rs_ranks *out, const mprof_render_model *m) {
  size_t members = mprof_trace_member_count(m->trace);
  if (members < 2) {
    snprintf(out->problem, sizeof out->problem,
             "Open one trace per rank (a run's directory or several files) "
             "to compare ranks");
    return 0;
  }
  mprof_rank_table **tables =
      (mprof_rank_table **)calloc(members, sizeof *tables);
  if (!tables)
    return mprof_render__oom();
  int rc = 0;
  for (size_t i = 0; !rc && i < members; i++)
    if (mprof_rank_table_build(&tables[i], mprof_trace_member(m->trace, i)))
      rc = mprof_render__fail("%s", mprof_error_last());
  mprof_ranks_options opts = MPROF_RANKS_OPTIONS_INIT;
  opts.flags |= MPROF_RANKS_NO_DIFF;
  if (!rc &&
      mprof_ranks_build(&out->ranks, (const mprof_rank_table *const *)tables,
                        members, &opts))
    rc = mprof_render__fail("%s", mprof_error_last());
  for (size_t i = 0; i < members; i++)
    mprof_rank_table_free(tables[i]);
  free(tables);
  if (rc) {
    snprintf(out->problem, sizeof out->problem, "%s", mprof_render_error());
    return rc;
  }
  out->count = mprof_ranks_count(out->ranks);
  for (size_t i = 0; i < out->count; i++) {
    size_t n = mprof_ranks_rank(out->ranks, i)->step_count;
    if (n > out->steps)
      out->steps = n;
  }
  out->member =
      (size_t *)calloc(out->count ? out->count : 1, sizeof *out->member);
  out->ratio =
      (double *)calloc(out->count * out->steps + 1, sizeof *out->ratio);
  uint64_t *scratch = (uint64_t *)calloc(out->count + 1, sizeof *scratch);
  if (!out->member || !out->ratio || !scratch) {
    free(scratch);
    return mprof_render__oom();
  }
  /* A rank is the member whose path its table kept. */
  for (size_t i = 0; i < out->count; i++) {
    const char *path = mprof_ranks_rank(out->ranks, i)->path;
    out->member[i] = RS_NO_MEMBER;
    for (size_t j = 0; j < members; j++)
      if (strcmp(mprof_trace_path(mprof_trace_member(m->trace, j)), path) ==
          0) {
        out->member[i] = j;
        break;
      }
  }
  out->max_ratio = 1;
  for (size_t s = 0; s < out->steps; s++) {
    uint64_t median = column_median(out->ranks, out->count, s, scratch);
    for (size_t i = 0; i < out->count; i++) {
      const mprof_rank_step *st = mprof_ranks_step(out->ranks, i, s);
      double ratio = !st      ? NAN
                     : median ? (double)st->score_ns / (double)median
                              : 1.0;
      out->ratio[i * out->steps + s] = ratio;
      if (ratio > out->max_ratio)
        out->max_ratio = ratio;
    }
  }
  free(scratch);
  return 0;
}

const rs_ranks *mprof_render__ranks(const mprof_render_model *model) {
  mprof_render_model *m = (mprof_render_model *)model; /* a cache */
  if (!m->ranks_cache) {
    m->ranks_cache = (rs_ranks *)calloc(1, sizeof *m->ranks_cache);
    if (!m->ranks_cache) {
      mprof_render__oom();
      return NULL;
    }
    if (build(m->ranks_cache, m) && !m->ranks_cache->problem[0])
      snprintf(m->ranks_cache->problem, sizeof m->ranks_cache->problem, "%s",
               mprof_render_error());
  }
  return m->ranks_cache;
}

void mprof_render__free_ranks(mprof_render_model *m) {
  if (!m->ranks_cache)
    return;
  mprof_ranks_free(m->ranks_cache->ranks);
  free(m->ranks_cache->member);
  free(m->ranks_cache->ratio);
  free(m->ranks_cache);
  m->ranks_cache = NULL;
}

size_t mprof_render_rank_count(const mprof_render_model *model) {
  const rs_ranks *r = model ? mprof_render__ranks(model) : NULL;
  return r ? r->count : 0;
}

int mprof_render_rank_step_range(const mprof_render_model *model,
                                 size_t rank_index, size_t step_index,
                                 int64_t *start_ns, int64_t *end_ns) {
  const rs_ranks *r = model ? mprof_render__ranks(model) : NULL;
  const mprof_rank_step *st =
      r && rank_index < r->count
          ? mprof_ranks_step(r->ranks, rank_index, step_index)
          : NULL;
  if (!st || !st->window_start_ns || r->member[rank_index] == RS_NO_MEMBER)
    return -1;
  size_t count = 0;
  const mprof_process_record *p = mprof_trace_processes(model->trace, &count);
  int64_t shift =
      r->member[rank_index] < count ? p[r->member[rank_index]].clock_shift : 0;
  *start_ns = rs_add_ns(rs_clamp_ns(st->window_start_ns), shift);
  *end_ns = rs_add_ns(*start_ns, rs_clamp_ns(st->window_ns));
  return 0;
}

uint32_t mprof_render__rank_first_stream(const mprof_render_model *m,
                                         size_t rank_index) {
  const rs_ranks *r = mprof_render__ranks(m);
  size_t count = 0;
  const mprof_process_record *p = mprof_trace_processes(m->trace, &count);
  if (!r || rank_index >= r->count || r->member[rank_index] >= count ||
      !p[r->member[rank_index]].stream_count)
    return MPROF_INDEX_NONE;
  return p[r->member[rank_index]].first_stream;
}
