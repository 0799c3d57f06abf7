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

void mprof_render_timemap_init(mprof_render_timemap *map, int64_t start_ns,
                               int64_t end_ns, double x, double width) {
  map->start_ns = start_ns;
  map->end_ns = end_ns > start_ns ? end_ns : start_ns + 1;
  map->x = x;
  map->width = width > 1e-9 ? width : 1e-9;
}

double mprof_render_ns_per_px(const mprof_render_timemap *map) {
  return (double)(map->end_ns - map->start_ns) / map->width;
}

double mprof_render_time_to_x(const mprof_render_timemap *map, int64_t t) {
  return map->x + (double)(t - map->start_ns) / mprof_render_ns_per_px(map);
}

int64_t mprof_render_x_to_time(const mprof_render_timemap *map, double x) {
  double offset = (x - map->x) * mprof_render_ns_per_px(map);
  if (offset > 9.0e18)
    offset = 9.0e18;
  if (offset < -9.0e18)
    offset = -9.0e18;
  return map->start_ns + (int64_t)llround(offset);
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
  int64_t rel = map->start_ns - origin;
  int64_t first = rel / step * step;
  return first < rel ? first + step : first;
}

size_t mprof_render__ticks(const mprof_render_timemap *map, int64_t origin,
                           int64_t step, int64_t *offsets, int *xs,
                           size_t max) {
  size_t n = 0;
  for (int64_t t = mprof_render__first_tick(map, origin, step);
       origin + t <= map->end_ns && n < max; t += step) {
    double x = floor(mprof_render_time_to_x(map, origin + t));
    if (x < map->x)
      continue;
    if (offsets)
      offsets[n] = t;
    xs[n++] = (int)x;
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
            (int64_t)mprof_trace_stream_launch(trace, stream, i)->start < t);
  return at;
}

int64_t rs_clamp_ns(uint64_t t) {
  return t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
}

int64_t rs_clamp_end(uint64_t start, uint64_t end) {
  return rs_clamp_ns(end > start ? end : start);
}

size_t mprof_render_lod_visit(const mprof_trace *trace, uint32_t stream,
                              const mprof_render_timemap *map, double min_px,
                              mprof_render_key_fn key, mprof_render_box_fn fn,
                              void *data) {
  size_t first, last;
  if (mprof_trace_stream_find(trace, &first, &last, stream,
                              (uint64_t)(map->start_ns > 0 ? map->start_ns : 0),
                              (uint64_t)(map->end_ns > 0 ? map->end_ns : 0)))
    return 0;
  if (min_px < 0)
    min_px = 0;
  /* Launches that start within this many pixels of a merged run's end join
   * it. */
  const double gap = 1.0;
  /* The mapping, inlined: this loop runs once per box. */
  const double px_per_ns = map->width / (double)(map->end_ns - map->start_ns);
  const double ns_per_px = (double)(map->end_ns - map->start_ns) / map->width;
#define TO_X(t) (map->x + (double)(rs_clamp_ns(t) - map->start_ns) * px_per_ns)
#define TO_T(px)                                                               \
  (map->start_ns + (int64_t)floor(((px)-map->x) * ns_per_px + 0.5))
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
