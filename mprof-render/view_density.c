/*
 * mprof-render — the Density view: one row per SM, one cell per few pixels
 * of time, coloured by the share of the cell the SM was busy (covered by
 * at least one span). Measured from spans; for a trace without them,
 * projected from each launch's waves of blocks as the share of the SM's
 * warp slots in use, under a banner that says so.
 *
 * Cells wider than the group's fine buckets (spans.c: up to 4096 per SM,
 * built for the group on screen) are read from them; narrower cells (deep
 * zoom) from the spans, which are few there. The frame costs cells, not
 * spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_spans.h"

#define CELL_PX 2 /* px per time bucket */
#define EMPTY 0xf1f2f5u

/* The heat scale: pale yellow through orange and red to dark purple. */
static const struct {
  double at;
  uint32_t rgb;
} scale[] = {{0.0, 0xfff4c2},
             {0.25, 0xfdc44f},
             {0.5, 0xf07d2c},
             {0.75, 0xc8372d},
             {1.0, 0x5c1038}};

uint32_t mprof_render_density_color(double value) {
  if (!(value > 0.0005))
    return EMPTY;
  if (value >= 1)
    return scale[4].rgb;
  for (int i = 0; i < 4; i++)
    if (value <= scale[i + 1].at) {
      double f = (value - scale[i].at) / (scale[i + 1].at - scale[i].at);
      uint32_t a = scale[i].rgb, b = scale[i + 1].rgb, out = 0;
      for (int shift = 16; shift >= 0; shift -= 8) {
        double ca = (a >> shift) & 0xff, cb = (b >> shift) & 0xff;
        out |= (uint32_t)lround(ca + (cb - ca) * f) << shift;
      }
      return out;
    }
  return scale[4].rgb;
}

/* Busy share of SM @p s of @p g over [t0, t1), from its Density buckets
 * @p d when the cell is wider than one (NULL: none). */
static double measured_busy(const rs_group *g, const rs_density *d, size_t s,
                            int64_t t0, int64_t t1, size_t *cursor) {
  if (t1 <= t0 || t1 <= g->start_ns || t0 >= g->end_ns)
    return 0;
  double span = (double)rs_sub_ns(t1, t0);
  if (d && span >= d->bucket_ns) {
    /* From the fine buckets, weighted by overlap. */
    double fa = (double)rs_sub_ns(t0, g->start_ns) / d->bucket_ns;
    double fb = (double)rs_sub_ns(t1, g->start_ns) / d->bucket_ns;
    double lo = fmax(0, fa), hi = fmin((double)d->buckets, fb);
    const float *row = d->busy + s * d->buckets;
    double sum = 0;
    for (size_t b = (size_t)lo; (double)b < hi; b++) {
      double a = fmax(lo, (double)b), e = fmin(hi, (double)b + 1);
      if (e > a)
        sum += row[b] * (e - a);
    }
    return sum / (fb - fa);
  }
  /* From the spans: the union inside the cell. */
  const rs_sm *sm = &g->sms[s];
  const int64_t *start = g->all_start + sm->first;
  const int64_t *max_end = g->all_max_end + sm->first;
  size_t i = rs_first_ending_after(max_end, *cursor, sm->count, t0);
  *cursor = i;
  int64_t covered = 0, cs = 0, ce = 0;
  int open = 0;
  for (; i < sm->count && start[i] < t1; i++) {
    int64_t a = start[i] > t0 ? start[i] : t0;
    int64_t e = max_end[i] < t1 ? max_end[i] : t1;
    if (e <= a)
      continue;
    if (open && a <= ce) {
      ce = e > ce ? e : ce;
      continue;
    }
    if (open)
      covered += ce - cs;
    cs = a;
    ce = e;
    open = 1;
  }
  if (open)
    covered += ce - cs;
  return (double)covered / span;
}

/* Mean number of spans at once on SM @p s over [t0, t1). */
static double measured_load(const mprof_render_model *m, const rs_group *g,
                            size_t s, int64_t t0, int64_t t1) {
  const rs_sm *sm = &g->sms[s];
  const mprof_span_record *sp = mprof_trace_spans(m->trace, NULL);
  size_t i =
      rs_first_ending_after(g->all_max_end + sm->first, 0, sm->count, t0);
  double sum = 0;
  for (; i < sm->count && g->all_start[sm->first + i] < t1; i++) {
    const mprof_span_record *r = &sp[g->all_idx[sm->first + i]];
    int64_t rs = rs_clamp_ns(r->start), re = rs_clamp_end(r->start, r->end);
    int64_t a = rs > t0 ? rs : t0;
    int64_t e = re < t1 ? re : t1;
    if (e > a)
      sum += (double)(e - a);
  }
  return t1 > t0 ? sum / (double)rs_sub_ns(t1, t0) : 0;
}

static void legend(cairo_t *cr, const rs_frame *f, double width) {
  double w = fmin(220, width * 0.25), x = width - w - 70, y = 29;
  for (int i = 0; i < (int)w; i++)
    rd_fill_rect(cr, x + i, y, 1, 10,
                 mprof_render_density_color((i + 0.5) / w));
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 0);
  rd_text_right(cr, x - 6, y + 9, "0%");
  rd_text(cr, x + w + 6, y + 9, f->projected ? "100% warps" : "100% busy");
}

static void draw(cairo_t *cr, const mprof_render_model *m,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  rs_frame f;
  rs_sm_rows rows;
  if (!rs_sm_frame_begin(cr, &f, &rows, m, view, tab, width, height))
    return;
  const mprof_render_layout *l = &f.layout;
  const rs_psm *psm = rows.psm;
  const rs_density *density =
      f.group ? mprof_render__density(m, (int)(f.group - m->groups)) : NULL;
  rs_canvas c;
  if (rows.count &&
      rs_canvas_init(&c, l->right - l->left, rows.px, RD_BACKGROUND) == 0) {
    int cells = (c.w + CELL_PX - 1) / CELL_PX;
    int64_t *edge = (int64_t *)malloc((size_t)(cells + 1) * sizeof *edge);
    int64_t *launch_at = (int64_t *)malloc((size_t)cells * sizeof *launch_at);
    if (edge && launch_at) {
      for (int b = 0; b <= cells; b++)
        edge[b] = mprof_render_x_to_time(&f.map, l->left + b * CELL_PX);
      int current = -2;
      rs_projection p;
      memset(&p, 0, sizeof p);
      for (size_t s = rows.first; s < rows.last; s++) {
        if (psm && psm[s].kernel != current) {
          current = psm[s].kernel;
          rs_projection_init(&p, m, current);
          for (int b = 0; b < cells; b++)
            launch_at[b] =
                rs_projected_launch(&p, rs_mid_ns(edge[b], edge[b + 1]));
        }
        size_t cursor = 0;
        for (int b = 0; b < cells; b++) {
          double v = 0;
          if (f.group) {
            v = measured_busy(f.group, density, s, edge[b], edge[b + 1],
                              &cursor);
          } else if (launch_at[b] >= 0) {
            int64_t t = rs_mid_ns(edge[b], edge[b + 1]);
            uint32_t blocks =
                rs_projected_blocks(&p, m, (uint32_t)launch_at[b], psm[s].sm,
                                    psm[s].sm_count, t, NULL, NULL);
            v = rs_projected_occupancy(&p, blocks);
          }
          uint32_t rgb = mprof_render_density_color(v);
          for (int x = b * CELL_PX; x < (b + 1) * CELL_PX && x < c.w; x++)
            c.colors[x] = rgb;
        }
        double y = -view->scroll_y + (double)s * rows.band;
        int y0 = (int)floor(y), y1 = (int)floor(y + rows.band);
        if (rows.band >= 5)
          y1--; /* a line between SMs */
        rs_canvas_columns(&c, c.colors, y0, y1 > y0 ? y1 : y0 + 1);
      }
    }
    free(edge);
    free(launch_at);
    rs_canvas_paint(cr, &c, l->left, l->top);
    rs_canvas_free(&c);
  }
  rs_sm_gutter(cr, &f, &rows, l->left - 20);
  cairo_restore(cr);
  rs_span_header(cr, &f, width);
  legend(cr, &f, width);
  rs_time_axis(cr, &f, width);
  free(rows.psm);
}

static void row_hit(const rs_frame *f, size_t s, double band, double inside,
                    double x, mprof_render_hit *hit) {
  (void)band;
  (void)inside;
  const mprof_render_layout *l = &f->layout;
  int cell = (int)floor((x - l->left) / CELL_PX);
  hit->t0 = mprof_render_x_to_time(&f->map, l->left + cell * CELL_PX);
  hit->t1 = mprof_render_x_to_time(&f->map, l->left + (cell + 1) * CELL_PX);
  hit->kernel = f->view->kernel;
  if (f->group) {
    hit->device = f->group->sms[s].device;
    hit->sm = f->group->sms[s].sm;
    if (x < l->left) {
      hit->kind = MPROF_HIT_LABEL;
      return;
    }
    size_t cursor = 0;
    hit->kind = MPROF_HIT_CELL;
    const mprof_render_model *m = f->model;
    hit->value = measured_busy(
        f->group, mprof_render__density(m, (int)(f->group - m->groups)), s,
        hit->t0, hit->t1, &cursor);
    /* Concurrency rides in `spans`, in thousandths. */
    hit->spans = (uint64_t)llround(
        1000.0 * measured_load(f->model, f->group, s, hit->t0, hit->t1));
    return;
  }
  rs_hit_projected(f, s, x, rs_mid_ns(hit->t0, hit->t1), MPROF_HIT_PROJECTED,
                   hit);
}

const rs_tab_view rs_density_tab = {.draw = draw,
                                    .content = mprof_render__mega_content,
                                    .rows = rs_frame_sm_count,
                                    .row_hit = row_hit};
