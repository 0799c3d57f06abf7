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
#include <stdlib.h>
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

/* Where the kernels ran: a recording's GPU activity often spans a long
 * lead-in of copies and library set-up (transformer_forward's 200 ms hold
 * 3.5 ms of kernels, most of them in its last 4 ms). The shortest stretch
 * that holds FIT_SHARE of the kernel time, found over FIT_BUCKETS buckets
 * of launch starts and tightened to the launches that start in it: one
 * pass over the launches, no sort. 0 when that stretch is more than
 * a fifth of the activity: zooming in less than five times would only
 * cut launches off (gemm.mprof's 20 GEMMs fill most of their 35 ms). */
#define FIT_BUCKETS 4096
#define FIT_SHARE 0.9

static int fit_kernels(const mprof_render_model *model, int64_t *from,
                       int64_t *to) {
  size_t n;
  const mprof_launch_record *l =
      mprof_trace_launches(mprof_render_model_trace(model), &n);
  int64_t lo, hi;
  mprof_render_model_bounds(model, &lo, &hi);
  if (!n || hi <= lo)
    return 0;
  /* Per bucket: kernel time, earliest start and latest end of its
   * launches; one pass. */
  double *busy = (double *)calloc(FIT_BUCKETS, sizeof *busy);
  int64_t *first = (int64_t *)malloc(FIT_BUCKETS * sizeof *first);
  int64_t *last = (int64_t *)malloc(FIT_BUCKETS * sizeof *last);
  if (!busy || !first || !last) {
    free(busy);
    free(first);
    free(last);
    return 0;
  }
  for (size_t k = 0; k < FIT_BUCKETS; k++) {
    first[k] = INT64_MAX;
    last[k] = INT64_MIN;
  }
  double scale = (double)FIT_BUCKETS / ((double)(hi - lo) + 1.0), total = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t a = rs_clamp_ns(l[i].start), b = rs_clamp_end(l[i].start, l[i].end);
    double at = (double)(a - lo) * scale;
    size_t k = at <= 0 ? 0 : at >= FIT_BUCKETS ? FIT_BUCKETS - 1 : (size_t)at;
    /* A launch of no recorded length still counts: one ns. */
    double d = b > a ? (double)(b - a) : 1.0;
    busy[k] += d;
    total += d;
    first[k] = a < first[k] ? a : first[k];
    last[k] = b > last[k] ? b : last[k];
  }
  /* The fewest buckets in a row that hold the share. */
  size_t best_first = 0, best_last = FIT_BUCKETS - 1, top = 0;
  double held = 0;
  for (size_t end = 0; end < FIT_BUCKETS; end++) {
    held += busy[end];
    while (top < end && held - busy[top] >= FIT_SHARE * total)
      held -= busy[top++];
    if (held >= FIT_SHARE * total && end - top < best_last - best_first) {
      best_first = top;
      best_last = end;
    }
  }
  int64_t a = INT64_MAX, b = INT64_MIN;
  for (size_t k = best_first; k <= best_last; k++) {
    a = first[k] < a ? first[k] : a;
    b = last[k] > b ? last[k] : b;
  }
  free(busy);
  free(first);
  free(last);
  if (b <= a || (double)(b - a) > 0.2 * (double)(hi - lo))
    return 0;
  *from = a;
  *to = b;
  return 1;
}

void mprof_render_view_init(mprof_render_view *view,
                            const mprof_render_model *model) {
  memset(view, 0, sizeof *view);
  mprof_render_limits limits;
  mprof_render_model_limits(model, &limits);
  view->start_ns = limits.min_ns;
  view->end_ns = limits.max_ns;
  int64_t a, b;
  if (fit_kernels(model, &a, &b)) {
    int64_t margin = (b - a) / 25 + 1;
    view->start_ns = a - margin;
    view->end_ns = b + margin;
    mprof_render_view_clamp(view, &limits);
  }
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
