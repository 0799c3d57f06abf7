/*
 * mprof-render — the view: what is shown (time range, rows, kernel) and
 * how it moves: zoom, pan, scroll, and the first look at a span tab.
 *
 * Times are int64 ns on the trace clock: differences are taken in integers
 * before they become doubles (see timemap.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "render_internal.h"

/* ---- the view --------------------------------------------------------- */

void mprof_render_model_limits(const mprof_render_model *model,
                               mprof_render_limits *limits) {
  /* The bounds are record times, at most RS_TIME_MAX: the margins below
   * stay far inside the int64 range. */
  int64_t start, end;
  mprof_render_model_bounds(model, &start, &end);
  int64_t span = end > start ? end - start : 0;
  if (span < 1000)
    span = 1000;
  /* A little room on both sides so the first and last launches are not
   * glued to the edges. */
  int64_t margin = span / 50;
  limits->min_ns = start - margin;
  limits->max_ns = start + span + margin;
  limits->min_span_ns = 20;
}

void mprof_render_view_init(mprof_render_view *view,
                            const mprof_render_model *model) {
  memset(view, 0, sizeof *view);
  mprof_render_limits limits;
  mprof_render_model_limits(model, &limits);
  view->start_ns = limits.min_ns;
  view->end_ns = limits.max_ns;
  view->row_height = MPROF_RENDER_ROW_HEIGHT;
  view->kernel = mprof_render_kernel_count(model) ? 0 : -1;
  view->launch = -1;
  view->hover_launch = -1;
}

/* A view's times come from its caller (a drag, a zoom, --range): every
 * step below holds at the int64 range instead of overflowing. */
void mprof_render_view_clamp(mprof_render_view *view,
                             const mprof_render_limits *limits) {
  int64_t max_span = rs_sub_ns(limits->max_ns, limits->min_ns);
  int64_t min_span = limits->min_span_ns > 0 ? limits->min_span_ns : 1;
  if (max_span < min_span)
    max_span = min_span;
  int64_t span = rs_sub_ns(view->end_ns, view->start_ns);
  if (span < min_span) {
    int64_t mid = rs_add_ns(view->start_ns, span / 2);
    span = min_span;
    view->start_ns = rs_sub_ns(mid, span / 2);
  }
  if (span > max_span)
    span = max_span;
  if (view->start_ns < limits->min_ns)
    view->start_ns = limits->min_ns;
  if (rs_add_ns(view->start_ns, span) > limits->max_ns)
    view->start_ns = rs_sub_ns(limits->max_ns, span);
  view->end_ns = rs_add_ns(view->start_ns, span);
}

void mprof_render_view_zoom(mprof_render_view *view,
                            const mprof_render_limits *limits, double fraction,
                            double factor) {
  if (!(factor > 0))
    return;
  if (!(fraction >= 0))
    fraction = 0;
  if (fraction > 1)
    fraction = 1;
  int64_t span = rs_sub_ns(view->end_ns, view->start_ns);
  int64_t pivot =
      rs_add_ns(view->start_ns, rs_ns_of(round((double)span * fraction)));
  double wanted = (double)span / factor;
  int64_t max_span = rs_sub_ns(limits->max_ns, limits->min_ns);
  if (wanted < (double)limits->min_span_ns)
    wanted = (double)limits->min_span_ns;
  /* All of it exactly: a double holds a span of 2^62 to 512 ns. */
  int64_t new_span =
      wanted >= (double)max_span ? max_span : rs_ns_of(round(wanted));
  view->start_ns =
      rs_sub_ns(pivot, rs_ns_of(round((double)new_span * fraction)));
  view->end_ns = rs_add_ns(view->start_ns, new_span);
  mprof_render_view_clamp(view, limits);
}

void mprof_render_view_pan(mprof_render_view *view,
                           const mprof_render_limits *limits, double fraction) {
  int64_t span = rs_sub_ns(view->end_ns, view->start_ns);
  if (isnan(fraction))
    fraction = 0;
  mprof_render_view_scroll_to(
      view, limits,
      rs_add_ns(view->start_ns, rs_ns_of(round((double)span * fraction))));
}

void mprof_render_view_scroll_to(mprof_render_view *view,
                                 const mprof_render_limits *limits,
                                 int64_t start_ns) {
  int64_t span = rs_sub_ns(view->end_ns, view->start_ns);
  view->start_ns = start_ns;
  view->end_ns = rs_add_ns(start_ns, span);
  mprof_render_view_clamp(view, limits);
}

void mprof_render_view_zoom_rows(mprof_render_view *view, double factor,
                                 double y) {
  double old = view->row_height;
  double h = old * factor;
  if (h < MPROF_RENDER_ROW_MIN)
    h = MPROF_RENDER_ROW_MIN;
  if (h > MPROF_RENDER_ROW_MAX)
    h = MPROF_RENDER_ROW_MAX;
  /* Stream rows scale, device bands do not; keeping the content under the
   * pointer is exact for the stream rows, which dominate. */
  double content_y = view->scroll_y + y;
  view->row_height = h;
  view->scroll_y = content_y * (h / old) - y;
  if (view->scroll_y < 0)
    view->scroll_y = 0;
}

/* ---- fitting the view ------------------------------------------------------
 */

void mprof_render_view_open_span_tab(mprof_render_view *view,
                                     const mprof_render_model *m,
                                     int keep_kernel) {
  if (!view || !m)
    return;
  if (!keep_kernel)
    view->kernel = mprof_render_span_kernel(m, view->kernel);
  mprof_render_view_fit_spans(view, m);
}

void mprof_render_view_fit_spans(mprof_render_view *view,
                                 const mprof_render_model *m) {
  if (!view || !m)
    return;
  int64_t a = 0, b = 0;
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  const rs_group *g = mprof_render__group(m, view->kernel);
  const mprof_render_kernel *k = rs_kernel(m, view->kernel);
  int selected = -1;
  if (view->launch >= 0 && (size_t)view->launch < n && k) {
    int lk = mprof_render_launch_kernel(m, (size_t)view->launch);
    if (lk >= 0 && m->name_first[lk] == m->name_first[view->kernel])
      selected = (int)view->launch;
  }
  /* The kernel's longest launch, and how much of the time from its first
   * launch to its last the launches fill. */
  const rs_launch_track *t = mprof_render__launch_track(m, view->kernel);
  uint64_t longest = 0, busy = 0;
  int64_t la = 0, lb = 0;
  for (size_t i = 0; t && i < t->count; i++) {
    const mprof_launch_record *x = &l[t->idx[i]];
    int64_t xa = rs_clamp_ns(x->start), xb = rs_clamp_end(x->start, x->end);
    uint64_t d = (uint64_t)(xb - xa);
    busy = busy + d < busy ? UINT64_MAX : busy + d;
    if (d > longest || i == 0) {
      longest = d;
      la = xa;
      lb = xb;
    }
  }
  if (selected >= 0) {
    a = rs_clamp_ns(l[selected].start);
    b = rs_clamp_end(l[selected].start, l[selected].end);
  } else if (g && !(lb > la &&
                    busy < ((uint64_t)(g->end_ns - g->start_ns) + 1) / 2)) {
    a = g->start_ns;
    b = g->end_ns;
  } else {
    /* Projected, or measured launches far apart (one per training step):
     * the kernel's longest launch shows its waves, not slivers. */
    a = la;
    b = lb;
  }
  if (b <= a)
    return;
  int64_t margin = (b - a) / 40 + 1;
  mprof_render_limits limits;
  mprof_render_model_limits(m, &limits);
  view->start_ns = a - margin;
  view->end_ns = b + margin;
  mprof_render_view_clamp(view, &limits);
}
