/*
 * mprof-render — time <-> pixel mapping, ticks, and the level of detail
 * that keeps a frame's cost proportional to pixels. Pure arithmetic on a
 * time map and a trace: it calls no other file of the renderer.
 *
 * Times are int64 ns on the trace clock (~1.7e18 for CUPTI's epoch-based
 * clock), where a double has a spacing of 256 ns: differences are always
 * taken in integers before they become doubles.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render_internal.h"

int64_t rs_sub_ns(int64_t a, int64_t b) {
  if (b > 0 ? a < INT64_MIN + b : a > INT64_MAX + b)
    return b > 0 ? INT64_MIN : INT64_MAX;
  return a - b;
}

int64_t rs_add_ns(int64_t a, int64_t b) {
  if (b > 0 ? a > INT64_MAX - b : a < INT64_MIN - b)
    return b > 0 ? INT64_MAX : INT64_MIN;
  return a + b;
}

int64_t rs_mid_ns(int64_t a, int64_t b) {
  int64_t d = rs_sub_ns(b, a);
  if (d != INT64_MAX && d != INT64_MIN)
    return a + d / 2; /* between a and b: it fits */
  return a / 2 + b / 2;
}

int64_t rs_ns_of(double ns) {
  if (isnan(ns))
    return 0;
  /* 2^63 is not an int64; the largest double below it is. */
  if (ns >= 9223372036854774784.0)
    return INT64_MAX;
  if (ns <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)ns;
}

int rs_px(double x) {
  if (isnan(x))
    return 0;
  return (int)fmax(-1073741824.0, fmin(1073741824.0, x));
}

void mprof_render_timemap_init(mprof_render_timemap *map, int64_t start_ns,
                               int64_t end_ns, double x, double width) {
  if (end_ns <= start_ns) {
    end_ns = rs_add_ns(start_ns, 1);
    start_ns = end_ns - 1; /* start_ns was INT64_MAX */
  }
  map->start_ns = start_ns;
  map->end_ns = end_ns;
  map->x = isfinite(x) ? x : 0;
  map->width = width > 1e-9 && isfinite(width) ? width : 1e-9;
}

/* The map's span in ns, exact below 2^63 (beyond, the times are far apart
 * enough for a double's spacing not to matter). */
static double map_span(const mprof_render_timemap *map) {
  int64_t d = rs_sub_ns(map->end_ns, map->start_ns);
  return d < INT64_MAX ? (double)d
                       : (double)map->end_ns - (double)map->start_ns;
}

double mprof_render_ns_per_px(const mprof_render_timemap *map) {
  return map_span(map) / map->width;
}

double mprof_render_time_to_x(const mprof_render_timemap *map, int64_t t) {
  return map->x +
         (double)rs_sub_ns(t, map->start_ns) / mprof_render_ns_per_px(map);
}

int64_t mprof_render_x_to_time(const mprof_render_timemap *map, double x) {
  double offset = (x - map->x) * mprof_render_ns_per_px(map);
  return rs_add_ns(map->start_ns, rs_ns_of(round(offset)));
}

int64_t mprof_render_tick_step(const mprof_render_timemap *map, double min_px) {
  double want = mprof_render_ns_per_px(map) * (min_px > 1 ? min_px : 1);
  int64_t step = 1;
  for (;;) {
    static const int mult[3] = {1, 2, 5};
    for (int i = 0; i < 3; i++)
      if ((double)(step * mult[i]) >= want)
        return step * mult[i];
    if (step > INT64_MAX / 100)
      return step;
    step *= 10;
  }
}

/* ---- ticks -------------------------------------------------------------- */

int64_t mprof_render__first_tick(const mprof_render_timemap *map,
                                 int64_t origin, int64_t step) {
  int64_t rel = rs_sub_ns(map->start_ns, origin);
  int64_t first = rel / step * step;
  return first < rel ? rs_add_ns(first, step) : first;
}

size_t mprof_render__ticks(const mprof_render_timemap *map, int64_t origin,
                           int64_t step, int64_t *offsets, int *xs,
                           size_t max) {
  size_t n = 0;
  /* A tick left of the map (the first, rounded) is skipped: a few at
   * most, however far the times lie from the origin. */
  size_t skipped = 0;
  for (int64_t t = mprof_render__first_tick(map, origin, step);
       n < max && skipped < 4; t = rs_add_ns(t, step)) {
    int64_t at = rs_add_ns(origin, t);
    if (at > map->end_ns || t == INT64_MAX)
      break;
    double x = floor(mprof_render_time_to_x(map, at));
    if (x < map->x) {
      skipped++;
      continue;
    }
    if (offsets)
      offsets[n] = t;
    xs[n++] = rs_px(x);
  }
  return n;
}

size_t mprof_render__tick_xs(const mprof_render_timemap *map, int64_t origin,
                             int *xs, size_t max) {
  return mprof_render__ticks(map, origin,
                             mprof_render_tick_step(map, MPROF_RENDER_TICK_PX),
                             NULL, xs, max);
}

/* ---- level of detail ---------------------------------------------------
 */

/* The first position in [from, hi) whose launch starts at or after @p t,
 * or hi: gallop from @p from, then bisect. The next launch to draw is
 * usually a few positions away, so this touches a few nearby records
 * instead of bisecting the whole stream. */
static size_t gallop(const mprof_trace *trace, uint32_t stream, size_t from,
                     size_t hi, int64_t t) {
  size_t at;
  RS_GALLOP(at, from, hi, i,
            rs_clamp_ns(mprof_trace_stream_launch(trace, stream, i)->start) <
                t);
  return at;
}

int64_t rs_clamp_ns(uint64_t t) {
  return t > (uint64_t)RS_TIME_MAX ? RS_TIME_MAX : (int64_t)t;
}

int64_t rs_clamp_end(uint64_t start, uint64_t end) {
  return rs_clamp_ns(end > start ? end : start);
}

size_t mprof_render_lod_visit(const mprof_trace *trace, uint32_t stream,
                              const mprof_render_timemap *map, double min_px,
                              mprof_render_key_fn key, mprof_render_box_fn fn,
                              void *data) {
  size_t first, last;
  /* The row of copies of no stream has no launches. */
  if (!mprof_trace_stream_launch_count(trace, stream) ||
      mprof_trace_stream_find(trace, &first, &last, stream,
                              (uint64_t)(map->start_ns > 0 ? map->start_ns : 0),
                              (uint64_t)(map->end_ns > 0 ? map->end_ns : 0)))
    return 0;
  if (min_px < 0)
    min_px = 0;
  /* Launches that start within this many pixels of a merged run's end join
   * it. */
  const double gap = 1.0;
  /* The mapping, inlined: this loop runs once per box. */
  const double px_per_ns = map->width / map_span(map);
  const double ns_per_px = map_span(map) / map->width;
#define TO_X(t)                                                                \
  (map->x + (double)rs_sub_ns(rs_clamp_ns(t), map->start_ns) * px_per_ns)
#define TO_T(px)                                                               \
  rs_add_ns(map->start_ns, rs_ns_of(floor(((px)-map->x) * ns_per_px + 0.5)))
  size_t boxes = 0;
  size_t i = first;
  while (i < last) {
    const mprof_launch_record *l = mprof_trace_stream_launch(trace, stream, i);
    double x0 = TO_X(l->start);
    double x1 = TO_X(l->end);
    mprof_render_box box = {x0, x1, i, i + 1, 0};
    if (x1 - x0 < min_px) {
      /* A narrow launch starts a run. Jump, by binary search, to the first
       * launch that starts beyond the run's end plus the gap; the end of
       * the last launch jumped over extends the run. Each jump either ends
       * the run or moves its end by at least `gap` pixels, so a run costs
       * O(pixels x log n), not O(launches). */
      double run_end = x1 > x0 + gap ? x1 : x0 + gap;
      size_t next = i + 1;
      int run_key = key ? key(i, data) : 0;
      for (;;) {
        int64_t limit = TO_T(run_end + gap);
        size_t j = gallop(trace, stream, next, last, limit);
        if (j <= next)
          break;
        const mprof_launch_record *tail =
            mprof_trace_stream_launch(trace, stream, j - 1);
        double tx0 = TO_X(tail->start);
        double tx1 = TO_X(tail->end);
        if (tx1 - tx0 >= min_px) {
          /* A wide launch ends the run and is drawn on its own. */
          next = j - 1;
          if (tx0 > run_end)
            run_end = tx0;
          break;
        }
        /* Another kernel ends the run, once it holds a pixel's worth:
         * every box still advances by at least a pixel. */
        if (key && next > i + 1 && key(j - 1, data) != run_key)
          break;
        next = j;
        if (tx1 > run_end)
          run_end = tx1;
        if (run_end < tx0 + gap)
          run_end = tx0 + gap;
      }
      box.last = next;
      box.x1 = run_end;
      box.merged = box.last - box.first > 1;
      if (!box.merged)
        box.x1 = x1;
      i = next;
    } else {
      i++;
    }
    boxes++;
    if (fn)
      fn(&box, data);
  }
#undef TO_X
#undef TO_T
  return boxes;
}
