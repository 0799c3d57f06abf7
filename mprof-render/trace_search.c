/*
 * mprof-render — searching the Trace by name: which kernels and NVTX ranges
 * a search matches (the Trace dims the rest), how many, and the next match
 * in time from a point (the viewer's Enter in its search entry).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "view_trace.h"

int mprof_render_name_matches(const char *name, const char *search) {
  if (!search || !*search)
    return 1;
  return name && strcasestr(name, search) != NULL;
}

int mprof_render_kernel_matches(const mprof_render_model *model, int kernel,
                                const char *search) {
  const mprof_render_kernel *k = rs_kernel(model, kernel);
  if (!search || !*search)
    return 1;
  return k && (mprof_render_name_matches(k->short_name, search) ||
               mprof_render_name_matches(k->name, search) ||
               mprof_render_name_matches(k->stats->mangled, search));
}

unsigned char *rt_search_kernels(const mprof_render_model *model,
                                 const char *search) {
  if (!search || !*search)
    return NULL;
  size_t n = mprof_render_kernel_count(model);
  unsigned char *match = (unsigned char *)calloc(n ? n : 1, 1);
  for (size_t k = 0; match && k < n; k++)
    match[k] =
        (unsigned char)mprof_render_kernel_matches(model, (int)k, search);
  return match;
}

int rt_range_matches(const mprof_render_model *model, uint32_t range,
                     const char *search) {
  size_t n;
  const mprof_trace *t = mprof_render_model_trace(model);
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  return range < n && mprof_render_name_matches(
                          mprof_trace_string(t, r[range].name), search);
}

size_t mprof_render_search_count(const mprof_render_model *model,
                                 const char *search, size_t *kernels,
                                 size_t *ranges) {
  size_t launches = 0, k_count = 0, r_count = 0;
  if (search && *search) {
    for (size_t k = 0; k < mprof_render_kernel_count(model); k++)
      if (mprof_render_kernel_matches(model, (int)k, search)) {
        k_count++;
        launches += (size_t)mprof_render_kernel_at(model, k)->stats->launches;
      }
    size_t n;
    mprof_trace_ranges(mprof_render_model_trace(model), &n);
    for (size_t i = 0; i < n; i++)
      r_count += (size_t)rt_range_matches(model, (uint32_t)i, search);
  }
  if (kernels)
    *kernels = k_count;
  if (ranges)
    *ranges = r_count;
  return launches;
}

/* Matches in time order: by start, then launches before ranges, then by
 * index. */
static int before(int64_t a_start, int a_kind, int64_t a_index, int64_t b_start,
                  int b_kind, int64_t b_index) {
  if (a_start != b_start)
    return a_start < b_start;
  if (a_kind != b_kind)
    return a_kind == MPROF_HIT_LAUNCH;
  return a_index < b_index;
}

/* Keep @p candidate in @p best when it is the nearest after (@p forward)
 * or before @p from so far; in @p wrap the first (or last) of all. */
static void consider(mprof_render_match *best, mprof_render_match *wrap,
                     const mprof_render_match *candidate,
                     const mprof_render_match *from, int forward) {
  const mprof_render_match *c = candidate;
#define BEFORE(x, y)                                                           \
  before((x)->start_ns, (x)->kind, (x)->index, (y)->start_ns, (y)->kind,       \
         (y)->index)
  if (forward ? BEFORE(from, c) : BEFORE(c, from)) {
    if (best->kind == MPROF_HIT_NONE ||
        (forward ? BEFORE(c, best) : BEFORE(best, c)))
      *best = *c;
  }
  if (wrap->kind == MPROF_HIT_NONE ||
      (forward ? BEFORE(c, wrap) : BEFORE(wrap, c)))
    *wrap = *c;
#undef BEFORE
}

int mprof_render_search_next(const mprof_render_model *model,
                             const char *search, const mprof_render_match *from,
                             int forward, mprof_render_match *out) {
  memset(out, 0, sizeof *out);
  out->kind = MPROF_HIT_NONE;
  if (!model || !search || !*search)
    return 0;
  mprof_render_match start;
  if (from && from->kind != MPROF_HIT_NONE) {
    start = *from;
  } else {
    /* Nothing yet: from before the trace's first instant (or after its
     * last, backwards). */
    memset(&start, 0, sizeof start);
    start.kind = forward ? MPROF_HIT_LAUNCH : MPROF_HIT_RANGE;
    start.index = forward ? -1 : INT64_MAX;
    start.start_ns = forward ? INT64_MIN : INT64_MAX;
  }
  mprof_render_match best, wrap;
  memset(&best, 0, sizeof best);
  memset(&wrap, 0, sizeof wrap);
  best.kind = wrap.kind = MPROF_HIT_NONE;
  unsigned char *match = rt_search_kernels(model, search);
  if (!match)
    return 0;
  const mprof_trace *t = mprof_render_model_trace(model);
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  for (size_t i = 0; i < n; i++) {
    int k = mprof_render_launch_kernel(model, i);
    if (k < 0 || !match[k])
      continue;
    mprof_render_match c = {MPROF_HIT_LAUNCH, (int64_t)i,
                            rs_clamp_ns(l[i].start),
                            rs_clamp_end(l[i].start, l[i].end)};
    consider(&best, &wrap, &c, &start, forward);
  }
  free(match);
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  for (size_t i = 0; i < n; i++) {
    if (!rt_range_matches(model, (uint32_t)i, search))
      continue;
    mprof_render_match c = {MPROF_HIT_RANGE, (int64_t)i,
                            rs_clamp_ns(r[i].start),
                            rs_clamp_end(r[i].start, r[i].end)};
    consider(&best, &wrap, &c, &start, forward);
  }
  *out = best.kind != MPROF_HIT_NONE ? best : wrap;
  return out->kind != MPROF_HIT_NONE;
}
