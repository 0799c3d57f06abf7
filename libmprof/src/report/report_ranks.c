/*
 * mprof — `mprof ranks`: the cross-rank report as XML
 * (docs/SUMMARY-SCHEMA.md, "ranks"), JSON or a panel for people, written
 * like the summary's through base/text.h's fields.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "mprof/names.h"
#include "mprof/ranks.h"
#include "mprof/status.h"
#include "mprof/units.h"
#include "report_internal.h"

/* ---- XML and JSON ------------------------------------------------------- */

typedef struct ranks_ctx {
  const mprof_ranks *ranks;
  size_t rank; /* for a rank's steps */
  const mprof_kernel_change *change;
  size_t max_stalls;
} ranks_ctx;

static void step_fields(mprof__fields *o, const void *ctx, size_t i) {
  const ranks_ctx *c = (const ranks_ctx *)ctx;
  const mprof_rank_step *s = mprof_ranks_step(c->ranks, c->rank, i);
  mprof__fields_u64(o, "step", s->step);
  mprof__fields_u64(o, "window_ns", s->window_ns);
  mprof__fields_u64(o, "busy_ns", s->busy_ns);
  mprof__fields_u64(o, "compute_ns", s->compute_ns);
  mprof__fields_u64(o, "comm_ns", s->comm_ns);
  mprof__fields_u64(o, "overlap_ns", s->overlap_ns);
  mprof__fields_u64(o, "idle_ns", s->idle_ns);
  mprof__fields_str(o, "idle_cause", s->idle_cause);
  mprof__fields_u64(o, "idle_cause_ns", s->idle_cause_ns);
  mprof__fields_u64(o, "idle_in_calls_ns", s->idle_in_calls_ns);
  mprof__fields_u64(o, "launches", s->launches);
  mprof__fields_u64(o, "score_ns", s->score_ns);
}

static void rank_fields(mprof__fields *o, const void *ctx, size_t i) {
  const ranks_ctx *c = (const ranks_ctx *)ctx;
  const mprof_rank_info *r = mprof_ranks_rank(c->ranks, i);
  mprof__fields_num(o, "rank", r->rank >= 0 ? (double)r->rank : NAN, 0);
  mprof__fields_str(o, "path", r->path);
  mprof__fields_str(o, "host", *r->host ? r->host : NULL);
  mprof__fields_str(o, "step_source", mprof_step_source_name(r->step_source));
  mprof__fields_u64(o, "step_count", r->step_count);
  mprof__fields_u64(o, "launches", r->launches);
  mprof__fields_u64(o, "window_ns", r->window_ns);
  mprof__fields_u64(o, "busy_ns", r->busy_ns);
  mprof__fields_u64(o, "compute_ns", r->compute_ns);
  mprof__fields_u64(o, "comm_ns", r->comm_ns);
  mprof__fields_u64(o, "overlap_ns", r->overlap_ns);
  mprof__fields_u64(o, "idle_ns", r->idle_ns);
  mprof__fields_num(o, "overlap_share",
                    r->overlap_share >= 0 ? r->overlap_share : NAN, 4);
  mprof__fields_u64(o, "straggler", r->straggler);
  ranks_ctx steps = *c;
  steps.rank = i;
  mprof__report_records(o, "step", "steps", r->step_count, step_fields, &steps);
}

static void stall_fields(mprof__fields *o, const void *ctx, size_t i) {
  const ranks_ctx *c = (const ranks_ctx *)ctx;
  const mprof_stall_change *s = mprof_kernel_change_stall(c->change, i);
  mprof__fields_str(o, "reason", s->reason);
  mprof__fields_num(o, "median_share", s->base_share, 4);
  mprof__fields_num(o, "straggler_share", s->candidate_share, 4);
}

static void straggler_fields(mprof__fields *o, const void *ctx, size_t i) {
  const ranks_ctx *c = (const ranks_ctx *)ctx;
  const mprof_straggler *g = mprof_ranks_straggler(c->ranks, i);
  mprof__fields_num(o, "rank", g->rank >= 0 ? (double)g->rank : NAN, 0);
  mprof__fields_str(o, "path", mprof_ranks_rank(c->ranks, g->rank_index)->path);
  mprof__fields_u64(o, "step", g->step);
  mprof__fields_u64(o, "score_ns", g->score_ns);
  mprof__fields_u64(o, "median_score_ns", g->median_score_ns);
  mprof__fields_num(o, "excess", g->excess, 4);
  mprof__fields_u64(o, "slow_steps", g->slow_steps);
  mprof__fields_num(o, "median_rank",
                    g->median_rank >= 0 ? (double)g->median_rank : NAN, 0);
  mprof__fields_str(o, "median_path",
                    mprof_ranks_rank(c->ranks, g->median_index)->path);
  mprof__fields_u64(o, "idle_ns", g->idle_ns);
  mprof__fields_u64(o, "median_idle_ns", g->median_idle_ns);
  mprof__fields_str(o, "idle_cause", g->idle_cause);
  mprof__fields_str(o, "summary", g->summary);
  mprof__fields x;
  mprof__fields_open(&x, o, "kernel", "kernel");
  if (g->kernel) {
    mprof__report_kernel_names(&x, g->kernel, NULL, g->kernel_mangled,
                               MPROF_INDEX_NONE);
    mprof__fields_u64(&x, "kernel_ns", g->kernel_ns);
    mprof__fields_u64(&x, "median_kernel_ns", g->median_kernel_ns);
  }
  mprof__fields_close(&x);
  /* The kernel in the diff of the two whole traces. */
  mprof__fields_open(&x, o, "diff", "diff");
  mprof__fields_str(&x, "error", *g->diff_error ? g->diff_error : NULL);
  if (g->change) {
    const mprof_kernel_change *k = g->change;
    mprof__fields_str(&x, "change", mprof_change_name(k->change));
    mprof__fields_num(&x, "median_mean_ns", k->base_mean_ns, 1);
    mprof__fields_num(&x, "straggler_mean_ns", k->candidate_mean_ns, 1);
    mprof__fields_num(&x, "mean_change", k->mean_change, 4);
    mprof__fields_num(&x, "noise", k->noise >= 0 ? k->noise : NAN, 4);
    mprof__fields_u64(&x, "significant", (uint64_t)k->significant);
    ranks_ctx stalls = *c;
    stalls.change = k;
    size_t n = k->stall_change_count < c->max_stalls ? k->stall_change_count
                                                     : c->max_stalls;
    mprof__report_records(&x, "stall", "stalls", n, stall_fields, &stalls);
  }
  mprof__fields_close(&x);
}

static void ranks_fields(FILE *f, const mprof_ranks *ranks, int json,
                         size_t max_stalls) {
  ranks_ctx c = {ranks, 0, NULL, max_stalls};
  size_t count = mprof_ranks_count(ranks), steps = 0;
  uint64_t comm = 0;
  for (size_t i = 0; i < count; i++) {
    const mprof_rank_info *r = mprof_ranks_rank(ranks, i);
    steps = r->step_count > steps ? r->step_count : steps;
    comm += r->comm_ns;
  }
  mprof__fields doc, x;
  mprof__report_document(&doc, f, json, "mprof-ranks", 0);
  mprof__fields_open(&x, &doc, "job", "job");
  mprof__fields_u64(&x, "ranks", count);
  mprof__fields_u64(&x, "steps", steps);
  mprof__fields_u64(&x, "collectives", comm != 0);
  mprof__fields_str(&x, "score", comm ? "compute_ns + idle_ns" : "compute_ns");
  mprof__fields_u64(&x, "stragglers", mprof_ranks_straggler_count(ranks));
  mprof__fields_close(&x);
  mprof__report_records(&doc, "straggler", "stragglers",
                        mprof_ranks_straggler_count(ranks), straggler_fields,
                        &c);
  mprof__report_records(&doc, "rank", "ranks", count, rank_fields, &c);
  mprof__fields_close(&doc);
}

/* ---- text --------------------------------------------------------------- */

/* One character per step: how far the rank's score is above that step's
 * median rank ('.' within the threshold, then '+', '*', '#'). */
static char heat_mark(const mprof_ranks *ranks, size_t rank, size_t step) {
  const mprof_rank_step *s = mprof_ranks_step(ranks, rank, step);
  uint64_t scores[64];
  size_t n = 0;
  /* The median of up to 64 ranks' scores of that step, by selection. */
  for (size_t i = 0; i < mprof_ranks_count(ranks) && n < 64; i++) {
    const mprof_rank_step *o = mprof_ranks_step(ranks, i, step);
    if (o && o->step == s->step)
      scores[n++] = o->score_ns;
  }
  uint64_t median = 0;
  for (size_t i = 0; i < n; i++) {
    size_t less = 0, equal = 0;
    for (size_t j = 0; j < n; j++) {
      less += scores[j] < scores[i];
      equal += scores[j] == scores[i];
    }
    if (less <= (n - 1) / 2 && (n - 1) / 2 < less + equal) {
      median = scores[i];
      break;
    }
  }
  double excess =
      median ? ((double)s->score_ns - (double)median) / (double)median : 0.0;
  return excess > 1.0 ? '#' : excess > 0.25 ? '*' : excess > 0.05 ? '+' : '.';
}

static void text_ranks(FILE *f, const mprof_ranks *ranks, size_t max_ranks,
                       const mprof__style *st) {
  size_t count = mprof_ranks_count(ranks);
  size_t stragglers = mprof_ranks_straggler_count(ranks);
  const mprof_rank_info *first = mprof_ranks_rank(ranks, 0);
  fprintf(f, "%smprof ranks%s %zu ranks · %zu steps (%s) · %zu straggler%s\n",
          st->bold, st->reset, count, first->step_count,
          mprof_step_source_name(first->step_source), stragglers,
          stragglers == 1 ? "" : "s");
  for (size_t i = 0; i < stragglers; i++) {
    const mprof_straggler *g = mprof_ranks_straggler(ranks, i);
    fprintf(f, "%s! %s%s\n", i ? st->yellow : st->red, g->summary, st->reset);
    if (*g->diff_error)
      fprintf(f, "%s  (no diff: %s)%s\n", st->dim, g->diff_error, st->reset);
  }
  if (!stragglers)
    fprintf(f, "%sno rank is slower than the median rank in any step%s\n",
            st->green, st->reset);
  fputc('\n', f);
  fprintf(f, "%s%6s %6s %10s %10s %10s %8s  %s%s\n", st->dim, "rank", "steps",
          "busy", "idle", "comm", "overlap", "steps: . + * # above the median",
          st->reset);
  size_t shown = count < max_ranks ? count : max_ranks;
  for (size_t i = 0; i < shown; i++) {
    const mprof_rank_info *r = mprof_ranks_rank(ranks, i);
    char name[32], busy[32], idle[32], comm[32], overlap[32];
    if (r->rank >= 0)
      snprintf(name, sizeof name, "%lld", (long long)r->rank);
    else
      snprintf(name, sizeof name, "?");
    mprof_format_duration(busy, sizeof busy, (double)r->busy_ns);
    mprof_format_duration(idle, sizeof idle, (double)r->idle_ns);
    mprof_format_duration(comm, sizeof comm, (double)r->comm_ns);
    if (r->overlap_share >= 0)
      mprof_format_percent(overlap, sizeof overlap, r->overlap_share);
    else
      snprintf(overlap, sizeof overlap, "-");
    fprintf(f, "%s%6s%s %6zu %10s %10s %10s %8s  ", r->straggler ? st->red : "",
            name, r->straggler ? st->reset : "", r->step_count, busy, idle,
            comm, overlap);
    for (size_t s = 0; s < r->step_count && s < 60; s++)
      fputc(heat_mark(ranks, i, s), f);
    if (r->step_count > 60)
      fputs("…", f);
    fputc('\n', f);
  }
  if (shown < count)
    fprintf(f, "%s(%zu more ranks; --all lists them)%s\n", st->dim,
            count - shown, st->reset);
}

int mprof_ranks_write(FILE *out, const mprof_ranks *ranks,
                      const mprof_report_options *opts) {
  if (!out || !ranks)
    return mprof__error_set(MPROF_EINVAL, "mprof_ranks_write: NULL argument");
  int rc = mprof__report_options_check(&opts);
  if (rc)
    return rc;
  mprof__style style;
  mprof__style_init(&style, (opts->flags & MPROF_REPORT_COLOR) != 0);
  if (opts->format == MPROF_REPORT_TEXT)
    text_ranks(out, ranks, opts->max_kernels, &style);
  else
    ranks_fields(out, ranks, opts->format == MPROF_REPORT_JSON, opts->max_hot);
  return mprof__report_flush(out, "ranks report");
}
