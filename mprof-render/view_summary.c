/*
 * mprof-render — the Summary view: one kernel's numbers and diagnosis,
 * laid out for reading (the content of `mprof summary`).
 *
 * The verdict and the judged dimensions come from libmprof's diagnosis
 * (every kernel of the model has one); the numbers, the stall mix and the
 * hot instructions come from the model.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render_internal.h"

#define MARGIN 24.0

typedef struct page {
  cairo_t *cr;
  double x, y, width, height; /* y is the next line's top */
} page;

static int visible(const page *p, double h) {
  return p->y + h >= 0 && p->y <= p->height;
}

static void heading(page *p, const char *text) {
  p->y += 14;
  if (visible(p, 20)) {
    rd_rgb(p->cr, RD_TEXT);
    rd_font(p->cr, 13, 1, 0);
    rd_text(p->cr, p->x, p->y + 14, text);
    rd_hline(p->cr, p->x, p->x + p->width, p->y + 20, RD_RULE);
  }
  p->y += 26;
}

/* One dim line of @p size px text, when it shows. */
static void dim_line(page *p, double size, const char *text) {
  if (visible(p, 18)) {
    rd_rgb(p->cr, RD_TEXT_DIM);
    rd_font(p->cr, size, 0, 0);
    rd_text_fit(p->cr, p->x, p->y + 13, p->width, text);
  }
  p->y += 22;
}

typedef struct card {
  const char *label;
  char value[64];
} card;

static void cards(page *p, const card *items, size_t count) {
  const double w = 188, h = 52, gap = 10;
  size_t per_row = (size_t)fmax(1, floor((p->width + gap) / (w + gap)));
  for (size_t i = 0; i < count; i++) {
    double cx = p->x + (double)(i % per_row) * (w + gap);
    double cy = p->y + (double)(i / per_row) * (h + gap);
    if (cy + h < 0 || cy > p->height)
      continue;
    rd_fill_rect(p->cr, cx, cy, w, h, RD_PANEL);
    rd_rgb(p->cr, RD_TEXT_DIM);
    rd_font(p->cr, 10.5, 0, 0);
    rd_text_fit(p->cr, cx + 10, cy + 17, w - 20, items[i].label);
    rd_rgb(p->cr, RD_TEXT);
    rd_font(p->cr, 15, 1, 0);
    rd_text_fit(p->cr, cx + 10, cy + 40, w - 20, items[i].value);
  }
  size_t rows = (count + per_row - 1) / per_row;
  p->y += (double)rows * (h + gap);
}

/* A judgement (mprof_state) as a coloured pill with its name. */
static void pill(cairo_t *cr, double x, double y, uint32_t state) {
  static const uint32_t colors[] = {[MPROF_STATE_UNKNOWN] = 0x9aa0a8,
                                    [MPROF_STATE_OK] = 0x2e9e4f,
                                    [MPROF_STATE_MINOR] = 0xe0a21a,
                                    [MPROF_STATE_ISSUE] = 0xd9412e};
  const char *name = mprof_state_name(state);
  rd_font(cr, 10, 1, 0);
  double w = rd_text_width(cr, name) + 12;
  rd_fill_rect(cr, x, y, w, 16, colors[state <= MPROF_STATE_ISSUE ? state : 0]);
  rd_rgb(cr, 0xffffff);
  rd_text(cr, x + 6, y + 12, name);
}

/* The stall mix: one stacked bar by family, then a legend. */
static void stall_mix(page *p, const mprof_render_kernel *k) {
  if (!k->stats->samples) {
    dim_line(p, 12,
             "No PC samples for this kernel: record with "
             "--pc-mode continuous or serialized.");
    return;
  }
  double x = p->x;
  if (visible(p, 22)) {
    for (int f = 0; f < MPROF_FAM_COUNT; f++) {
      double w = p->width * (double)k->family[f] / (double)k->stats->samples;
      rd_fill_rect(p->cr, x, p->y, w, 22, mprof_render_family_color(f));
      x += w;
    }
  }
  p->y += 30;
  /* Legend: families by share, largest first. */
  int order[MPROF_FAM_COUNT];
  for (int f = 0; f < MPROF_FAM_COUNT; f++)
    order[f] = f;
  for (int i = 1; i < MPROF_FAM_COUNT; i++)
    for (int j = i; j > 0 && k->family[order[j]] > k->family[order[j - 1]];
         j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  double lx = p->x;
  rd_font(p->cr, 11.5, 0, 0);
  for (int i = 0; i < MPROF_FAM_COUNT; i++) {
    int f = order[i];
    if (!k->family[f])
      continue;
    char text[96], pct[16];
    mprof_format_percent(pct, sizeof pct,
                         (double)k->family[f] / (double)k->stats->samples);
    snprintf(text, sizeof text, "%s %s", mprof_render_family_title(f), pct);
    double w = rd_text_width(p->cr, text) + 28;
    if (lx + w > p->x + p->width && lx > p->x) {
      lx = p->x;
      p->y += 20;
    }
    if (visible(p, 18)) {
      rd_fill_rect(p->cr, lx, p->y + 3, 11, 11, mprof_render_family_color(f));
      rd_rgb(p->cr, RD_TEXT);
      rd_text(p->cr, lx + 16, p->y + 13, text);
    }
    lx += w;
  }
  p->y += 22;
}

/* The reasons of one kernel, largest first (plain reasons only). */
static void kernel_reasons(page *p, const mprof_render_model *m,
                           const mprof_render_kernel *k) {
  if (!k->stats->samples)
    return;
  /* The join's reasons of the kernel, largest first: what `mprof summary`
   * lists. */
  size_t count;
  const mprof_reason_samples *rs =
      mprof_join_kernel_reasons(m->join, (size_t)(k - m->kernels), &count);
  size_t idx[6];
  uint64_t val[6];
  size_t n = mprof_render__top_reasons(m, rs, count, idx, val, 6);
  rd_font(p->cr, 11.5, 0, 1);
  for (size_t i = 0; i < n; i++) {
    if (visible(p, 16)) {
      const mprof_render_reason *r = mprof_render_reason_at(m, idx[i]);
      double share = (double)val[i] / (double)k->stats->samples;
      rd_fill_rect(p->cr, p->x, p->y + 3, fmax(1, 160 * share), 10, r->color);
      char pct[16], text[160];
      mprof_format_percent(pct, sizeof pct, share);
      snprintf(text, sizeof text, "%7s  %s", pct, r->name);
      rd_rgb(p->cr, RD_TEXT);
      rd_text_fit(p->cr, p->x + 170, p->y + 12, p->width - 170, text);
    }
    p->y += 17;
  }
}

static void hot_table(page *p, const mprof_render_model *m,
                      const mprof_render_kernel *k, size_t max) {
  if (!k->pc_count)
    return;
  const double col_share = 0, col_samples = 110, col_offset = 190,
               col_sass = 260;
  double col_line = p->width - 440, col_stalls = p->width - 280;
  if (col_line < col_sass + 200) {
    col_line = col_sass + 200;
    col_stalls = col_line + 130;
  }
  if (visible(p, 16)) {
    rd_rgb(p->cr, RD_TEXT_DIM);
    rd_font(p->cr, 10.5, 1, 0);
    rd_text(p->cr, p->x + col_share, p->y + 12, "share");
    rd_text(p->cr, p->x + col_samples, p->y + 12, "samples");
    rd_text(p->cr, p->x + col_offset, p->y + 12, "offset");
    rd_text(p->cr, p->x + col_sass, p->y + 12, "SASS");
    rd_text(p->cr, p->x + col_line, p->y + 12, "source");
    rd_text(p->cr, p->x + col_stalls, p->y + 12, "top stalls");
  }
  p->y += 18;
  double max_share =
      (double)k->pcs[k->hot[0]].samples / (double)k->stats->samples;
  for (size_t i = 0; i < k->pc_count && i < max; i++) {
    const mprof_render_pc *pc = &k->pcs[k->hot[i]];
    if (visible(p, 18)) {
      double share = (double)pc->samples / (double)k->stats->samples;
      char text[256], pct[16];
      rd_fill_rect(p->cr, p->x, p->y + 3, 50 * share / max_share, 12,
                   mprof_render_category_color((int)pc->category));
      mprof_format_percent(pct, sizeof pct, share);
      rd_rgb(p->cr, RD_TEXT);
      rd_font(p->cr, 11.5, 0, 1);
      rd_text(p->cr, p->x + 56, p->y + 13, pct);
      mprof_format_count(text, sizeof text, pc->samples);
      rd_text(p->cr, p->x + col_samples, p->y + 13, text);
      snprintf(text, sizeof text, "0x%04x", pc->offset);
      rd_text(p->cr, p->x + col_offset, p->y + 13, text);
      rd_format_sass(text, sizeof text, pc->insn);
      rd_text_fit(p->cr, p->x + col_sass, p->y + 13, col_line - col_sass - 10,
                  text);
      rd_format_line(text, sizeof text, pc->insn);
      rd_name_fit(p->cr, p->x + col_line, p->y + 13, col_stalls - col_line - 10,
                  *text ? text : "-");
      mprof_render__pc_reasons(m, pc, 2, text, sizeof text);
      rd_font(p->cr, 11, 0, 0);
      rd_text_fit(p->cr, p->x + col_stalls, p->y + 13,
                  p->x + p->width - (p->x + col_stalls), text);
    }
    p->y += 19;
  }
}

static void other_kernels(page *p, const mprof_render_model *m, int current) {
  size_t n = mprof_render_kernel_count(m);
  for (size_t i = 0; i < n && i < 12; i++) {
    const mprof_render_kernel *k = mprof_render_kernel_at(m, i);
    if (visible(p, 18)) {
      if ((int)i == current)
        rd_fill_rect(p->cr, p->x - 4, p->y, p->width + 8, 18, 0xe3ebfb);
      rd_fill_rect(p->cr, p->x, p->y + 4, 10, 10, k->color);
      char total[48], pct[16], count[32], text[128];
      rd_rgb(p->cr, RD_TEXT);
      rd_font(p->cr, 11.5, (int)i == current, 0);
      rd_kernel_fit(p->cr, p->x + 16, p->y + 13, p->width - 330, k);
      mprof_format_duration(total, sizeof total, (double)k->stats->total_ns);
      mprof_format_percent(pct, sizeof pct, k->stats->share);
      mprof_format_count(count, sizeof count, k->stats->launches);
      snprintf(text, sizeof text, "%s launches", count);
      rd_text_right(p->cr, p->x + p->width - 190, p->y + 13, text);
      rd_text_right(p->cr, p->x + p->width - 70, p->y + 13, total);
      rd_text_right(p->cr, p->x + p->width, p->y + 13, pct);
    }
    p->y += 19;
  }
  if (n > 12) {
    char text[64];
    snprintf(text, sizeof text, "and %zu more", n - 12);
    if (visible(p, 16)) {
      rd_rgb(p->cr, RD_TEXT_DIM);
      rd_font(p->cr, 11, 0, 0);
      rd_text(p->cr, p->x + 16, p->y + 12, text);
    }
    p->y += 18;
  }
}

/* The kernel's speed of light from PM samples, as `mprof summary` prints
 * it: one bar per counter, filled to its share of the peak. */
static void speed_of_light(page *p, const mprof_render_kernel *k) {
  const mprof_kernel_throughput *t = k->diagnosis->throughput;
  char text[256], iv[32];
  mprof_format_duration(iv, sizeof iv, t ? (double)t->interval_ns : 0);
  if (!t || !t->samples) {
    if (t && t->partial)
      snprintf(text, sizeof text,
               "Too short to measure: no run spans a whole %s PM sample.", iv);
    else
      snprintf(text, sizeof text,
               "Not measured: no PM sample fell in its runs (lost or not "
               "taken; see what record said).");
    dim_line(p, 12, text);
    return;
  }
  static const uint32_t shown[] = {
      MPROF_COUNTER_DRAM,         MPROF_COUNTER_L2,    MPROF_COUNTER_SM_ACTIVE,
      MPROF_COUNTER_WARPS_ACTIVE, MPROF_COUNTER_ISSUE, MPROF_COUNTER_TENSOR,
      MPROF_COUNTER_FMA};
  double bar = fmin(360.0, fmax(80.0, p->width - 320.0));
  for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
    double x = t->value[shown[i]];
    if (isnan(x))
      continue;
    if (visible(p, 18)) {
      double share = fmin(1.0, fmax(0.0, x / 100.0));
      rd_rgb(p->cr, RD_TEXT);
      rd_font(p->cr, 11.5, 0, 0);
      rd_text_fit(p->cr, p->x, p->y + 12, 150, mprof_counter_title(shown[i]));
      rd_fill_rect(p->cr, p->x + 160, p->y + 3, bar, 12, RD_PANEL);
      rd_fill_rect(p->cr, p->x + 160, p->y + 3, round(bar * share), 12, RD_SOL);
      char pct[32];
      mprof_format_percent(pct, sizeof pct, x / 100.0);
      uint32_t bytes = mprof_counter_bandwidth(shown[i]);
      if (bytes != MPROF_INDEX_NONE && !isnan(t->value[bytes]))
        snprintf(text, sizeof text, "%s of peak (%.2f TB/s)", pct,
                 t->value[bytes] / 1e12);
      else
        snprintf(text, sizeof text, "%s of peak", pct);
      rd_rgb(p->cr, RD_TEXT);
      rd_text(p->cr, p->x + 170 + bar, p->y + 12, text);
    }
    p->y += 18;
  }
  char n[32];
  mprof_format_count(n, sizeof n, t->samples);
  snprintf(text, sizeof text, "%s PM samples of %s wholly inside its runs%s", n,
           iv, t->shared > 0.05 ? ", shared with other kernels" : "");
  dim_line(p, 11, text);
}

static double page_draw(cairo_t *cr, const mprof_render_model *model,
                        const mprof_render_view *view, double width,
                        double height) {
  const mprof_render_kernel *k = rs_kernel(model, view->kernel);
  if (!k) {
    rd_no_kernel(cr, width, height);
    return height;
  }
  rd_fill_rect(cr, 0, 0, width, height, RD_BACKGROUND);
  page p = {cr, MARGIN, MARGIN - view->scroll_y, fmax(200, width - 2 * MARGIN),
            height};
  const mprof_trace *trace = mprof_render_model_trace(model);
  char buf[1024], text[1024];

  /* Name, full name, device and launch shape. */
  rd_fill_rect(cr, p.x, p.y + 2, 6, 22, k->color);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 19, 1, 0);
  rd_kernel_fit(cr, p.x + 14, p.y + 20, p.width - 14, k);
  p.y += 30;
  rd_rgb(cr, RD_TEXT_DIM);
  rd_font(cr, 10.5, 0, 1);
  if (k->stats->flags & MPROF_KERNEL_MPROF_OWN) {
    snprintf(text, sizeof text,
             "%s  \u00b7  mprof's own kernel, not the "
             "program's",
             k->name);
    rd_text_fit(cr, p.x, p.y + 11, p.width, text);
  } else {
    rd_text_fit(cr, p.x, p.y + 11, p.width, k->name);
  }
  p.y += 18;
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(trace, &devices);
  text[0] = '\0';
  if (k->stats->device < devices) {
    const mprof_device_record *d = &dev[k->stats->device];
    char traits[96];
    /* The clock is left to `mprof info`: the header names the model. */
    mprof_format_device_traits(traits, sizeof traits, d->cc_major, d->cc_minor,
                               d->sm_count, 0);
    snprintf(text, sizeof text, "GPU %u %s (%s)", d->id,
             mprof_trace_string(trace, d->name), traits);
  }
  if (k->shape) {
    char smem[32], dyn[32];
    mprof_format_bytes(smem, sizeof smem, (double)k->shape->static_shared);
    mprof_format_bytes(dyn, sizeof dyn, (double)k->shape->dynamic_shared);
    snprintf(buf, sizeof buf,
             "%sgrid %u\u00d7%u\u00d7%u  block %u\u00d7%u\u00d7%u  "
             "%u registers  %s static + %s dynamic shared",
             *text ? "  \u00b7  " : "", k->shape->grid[0], k->shape->grid[1],
             k->shape->grid[2], k->shape->block[0], k->shape->block[1],
             k->shape->block[2], k->shape->registers, smem, dyn);
    strncat(text, buf, sizeof text - strlen(text) - 1);
  }
  rd_font(cr, 11.5, 0, 0);
  rd_rgb(cr, RD_TEXT);
  rd_text_fit(cr, p.x, p.y + 12, p.width, text);
  p.y += 26;

  /* The numbers. */
  const mprof_kernel_diagnosis *diag = k->diagnosis;
  const mprof_occupancy *occ = diag->occupancy;
  card items[12];
  size_t n = 0;
  items[n].label = "Launches";
  mprof_format_count(items[n++].value, sizeof items[0].value,
                     k->stats->launches);
  items[n].label = "Total GPU time";
  mprof_format_duration(items[n++].value, sizeof items[0].value,
                        (double)k->stats->total_ns);
  items[n].label = "Share of GPU time";
  mprof_format_percent(items[n++].value, sizeof items[0].value,
                       k->stats->share);
  items[n].label = "Mean per launch";
  mprof_format_duration(items[n++].value, sizeof items[0].value,
                        k->stats->mean_ns);
  items[n].label = "Min / max";
  {
    char a[24], b[24];
    mprof_format_duration(a, sizeof a, (double)k->stats->min_ns);
    mprof_format_duration(b, sizeof b, (double)k->stats->max_ns);
    snprintf(items[n++].value, sizeof items[0].value, "%s / %s", a, b);
  }
  if (diag->stats && diag->stats->median_ns) {
    char a[24], b[24];
    items[n].label = "Median / p90";
    mprof_format_duration(a, sizeof a, (double)diag->stats->median_ns);
    mprof_format_duration(b, sizeof b, (double)diag->stats->p90_ns);
    snprintf(items[n++].value, sizeof items[0].value, "%s / %s", a, b);
  }
  /* An MKPROF cannot hold PC samples: no card, no stall mix. */
  int timings_only = mprof_trace_is_mkprof(trace);
  if (!timings_only) {
    items[n].label = "PC samples";
    mprof_format_count(items[n++].value, sizeof items[0].value,
                       k->stats->samples);
  }
  if (occ->known) {
    const char *limiter = mprof_occupancy_limiter_name(occ->limiter);
    items[n].label = *limiter ? "Occupancy (limit)" : "Occupancy";
    char pct[16];
    mprof_format_percent(pct, sizeof pct, occ->theoretical);
    if (*limiter)
      snprintf(items[n++].value, sizeof items[0].value, "%s (%s)", pct,
               limiter);
    else
      snprintf(items[n++].value, sizeof items[0].value, "%s", pct);
    items[n].label = "Waves";
    snprintf(items[n++].value, sizeof items[0].value, "%.2f", occ->waves);
  }
  cards(&p, items, n);

  if (mprof_throughput_available(
          mprof_diagnosis_throughput(mprof_render_model_diagnosis(model)))) {
    heading(&p, "Speed of light (PM samples)");
    speed_of_light(&p, k);
  }

  /* The diagnosis. */
  heading(&p, "Diagnosis");
  pill(cr, p.x, p.y, diag->verdict_state);
  rd_rgb(cr, RD_TEXT);
  rd_font(cr, 13, 1, 0);
  int lines = rd_text_wrap(cr, p.x + 64, p.y + 13, p.width - 64, 18,
                           diag->verdict ? diag->verdict : "");
  p.y += 10 + 18 * lines;
  for (size_t i = 0; i < diag->dimension_count; i++) {
    const mprof_dimension *d = mprof_kernel_diagnosis_dimension(diag, i);
    /* The dimensions the reports show. */
    if (!mprof_diagnosis_dimension_reported(mprof_render_model_diagnosis(model),
                                            d))
      continue;
    pill(cr, p.x, p.y + 1, d->state);
    rd_rgb(cr, RD_TEXT);
    rd_font(cr, 11.5, 1, 0);
    rd_text_fit(cr, p.x + 64, p.y + 13, 200, mprof_dimension_title(d->id));
    rd_rgb(cr, d->state == MPROF_STATE_ISSUE ? RD_TEXT : RD_TEXT_DIM);
    rd_font(cr, 11.5, 0, 0);
    lines = rd_text_wrap(cr, p.x + 270, p.y + 13, p.width - 270, 16,
                         d->detail ? d->detail : "");
    p.y += 5 + 16 * (lines ? lines : 1);
  }

  if (!timings_only) {
    heading(&p, "Stall mix");
    stall_mix(&p, k);
    kernel_reasons(&p, model, k);
  }

  if (k->pc_count) {
    heading(&p, "Hot instructions");
    hot_table(&p, model, k, 10);
  }

  /* The trace's own notes first (the "!" lines of `mprof summary`: a
   * partial capture, no counters, lost samples, a missing sidecar, a --pm
   * both pair), each marked in the margin, then the kernel's. The model's
   * missing-sidecar line (mprof_render_model_note) is the diagnosis's
   * no_sidecar note, so it is not written twice. */
  const mprof_diagnosis *all = mprof_render_model_diagnosis(model);
  size_t trace_notes = mprof_diagnosis_note_count(all);
  if (trace_notes || diag->note_count) {
    heading(&p, "Notes");
    rd_font(cr, 11.5, 0, 0);
    for (size_t i = 0; i < trace_notes; i++) {
      rd_rgb(cr, RD_TEXT);
      lines = rd_text_wrap(cr, p.x + 12, p.y + 12, p.width - 12, 16,
                           mprof_diagnosis_note(all, i)->text);
      rd_fill_rect(cr, p.x, p.y + 1, 4, lines * 16.0 - 2, RD_NOTE);
      p.y += lines * 16.0 + 6;
    }
    rd_rgb(cr, RD_TEXT_DIM);
    for (size_t i = 0; i < diag->note_count; i++) {
      if (visible(&p, 16))
        rd_text_fit(cr, p.x, p.y + 12, p.width, diag->notes[i]);
      p.y += 18;
    }
  }

  heading(&p, "Kernels by GPU time");
  other_kernels(&p, model, view->kernel);
  p.y += MARGIN;
  return p.y + view->scroll_y;
}

static void draw(cairo_t *cr, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height) {
  (void)tab;
  page_draw(cr, model, view, width, height);
}

/* The page laid out on a scratch surface: its height is where the last
 * line ended. */
static double content(const mprof_render_model *model,
                      const mprof_render_view *view, int tab, double width) {
  (void)tab;
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create(s);
  mprof_render_view v = *view;
  v.scroll_y = 0;
  double h = page_draw(cr, model, &v, width, 1);
  cairo_destroy(cr);
  cairo_surface_destroy(s);
  return h;
}

const rs_tab_view rs_summary_tab = {.draw = draw, .content = content};
