/*
 * mprof — the diagnosis: the verdict sentence, from the judged dimensions
 * (docs/DIAGNOSIS.md, "Verdict").
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "base/arena.h"
#include "internal.h"
#include "mprof/diagnose.h"
#include "mprof/units.h"

#include "diagnose_internal.h"

/* Verdicts that name the share of samples in a stall dimension and its
 * top reasons: "%s of samples ... (%s)". */
static const struct {
  uint32_t dim;
  const char *text;
} stall_verdicts[] = {
    {MPROF_DIM_MEMORY_THROUGHPUT,
     "Memory-throughput bound: %s of samples wait for full memory "
     "queues (%s); issue fewer, wider, coalesced accesses or move less "
     "data."},
    {MPROF_DIM_SHARED_MIO,
     "Shared-memory/MIO bound: %s of samples wait on shared memory or "
     "other MIO operations (%s); look for bank conflicts and heavy "
     "shuffle or special-function use."},
    {MPROF_DIM_SYNC,
     "Synchronisation bound: %s of samples wait at barriers, fences or "
     "sleep (%s); balance the work between the warps of a block and "
     "synchronise less often."},
    {MPROF_DIM_FETCH_BRANCH,
     "Instruction-fetch/branch bound: %s of samples wait for "
     "instructions or branch resolution (%s); shrink the code (less "
     "unrolling or inlining) and avoid divergent branches."},
    {MPROF_DIM_SCHEDULING, "Scheduling stalls: %s of samples wait on "
                           "dispatch or miscellaneous conditions (%s)."},
};

static const char *verdict_text(kernel_work *w, uint32_t dim) {
  mprof_kernel_diagnosis *o = w->out;
  mprof__arena *a = &w->d->arena;
  char p[32];
  const char *head;
  if (dim <= MPROF_DIM_SCHEDULING)
    pct(p, sizeof p, w->dim_share[dim]);
  for (size_t i = 0; i < sizeof stall_verdicts / sizeof stall_verdicts[0]; i++)
    if (stall_verdicts[i].dim == dim)
      return mprof__arena_printf(a, stall_verdicts[i].text, p,
                                 mprof__diagnose_reason_list(w, dim, 3));
  switch (dim) {
  case MPROF_DIM_MEMORY_LATENCY:
    head = mprof__arena_printf(
        a,
        "Memory-latency bound: %s of warp samples wait on global/local "
        "memory results (long_scoreboard); overlap more loads (more warps "
        "or independent loads in flight, prefetch, async copies) or improve "
        "locality.",
        p);
    break;
  case MPROF_DIM_COMPUTE: {
    double issue = mprof__diagnose_reason_share(w, "selected") +
                   mprof__diagnose_reason_share(w, "not_selected");
    double math = mprof__diagnose_reason_share(w, "math_pipe_throttle");
    double wait = mprof__diagnose_reason_share(w, "wait");
    char q[32];
    if (math >= issue && math >= wait) {
      pct(q, sizeof q, math);
      head = mprof__arena_printf(
          a,
          "Compute bound: a math pipe is saturated (math_pipe_throttle %s, "
          "compute dimension %s); use a faster pipe (tensor cores, lower "
          "precision) or do less arithmetic.",
          q, p);
    } else if (issue >= wait) {
      pct(q, sizeof q, issue);
      head = mprof__arena_printf(
          a,
          "Issue bound: warps are ready and the schedulers issue nearly "
          "every cycle (selected + not_selected %s); the kernel runs at its "
          "instruction throughput, so execute fewer instructions.",
          q);
    } else {
      pct(q, sizeof q, wait);
      head = mprof__arena_printf(
          a,
          "Dependency bound: warps wait on fixed-latency results (wait %s); "
          "add independent work per thread (ILP) or more warps.",
          q);
    }
    break;
  }
  case MPROF_DIM_OCCUPANCY: {
    const mprof_occupancy *occ = o->occupancy;
    pct(p, sizeof p, occ->theoretical);
    const char *fix =
        o->library
            ? "the launch shape is the library's choice, so give it more "
              "work per call (larger or batched problems) or run other work "
              "beside it on another stream"
        : occ->limiter == MPROF_LIMIT_REGISTERS
            ? "use fewer registers per thread (__launch_bounds__, "
              "-maxrregcount)"
        : occ->limiter == MPROF_LIMIT_SHARED
            ? "use less shared memory per block"
        : occ->limiter == MPROF_LIMIT_BLOCKS ? "use larger blocks"
                                             : "use smaller blocks";
    head = mprof__arena_printf(
        a,
        "Low occupancy: %s theoretical (%u of %u warps per SM, limited by "
        "%s), too few warps to hide latency; %s.",
        p, occ->active_warps, occ->max_warps, limiter_words(occ->limiter), fix);
    break;
  }
  case MPROF_DIM_TAIL: {
    const mprof_occupancy *occ = o->occupancy;
    uint64_t slots = (uint64_t)occ->sm_count * occ->blocks_per_sm;
    pct(p, sizeof p, o->weighted_tail);
    if (w->tail_measured && w->persistent) {
      /* One block per SM for the whole run: no grid size or grid-stride
       * loop changes the tail, the work each SM is given does. */
      pct(p, sizeof p, w->tail_busy);
      head = mprof__arena_printf(
          a,
          "Tail effect (measured from block spans): SMs are busy only %s of "
          "the kernel's time; the kernel is persistent (%llu block%s, at "
          "most one per SM), so the idle SMs wait on the work still queued "
          "on the last ones: balance the work each SM is given.",
          p, (unsigned long long)occ->grid_blocks,
          mprof__plural(occ->grid_blocks));
    } else if (w->tail_measured && !occ->blocks_per_sm) {
      pct(p, sizeof p, w->tail_busy);
      head = mprof__arena_printf(
          a,
          "Tail effect (measured from block spans): SMs are busy only %s of "
          "the kernel's time, idle while the last blocks finish; size the "
          "grid to a multiple of the blocks one wave holds or use a "
          "grid-stride loop.",
          p);
    } else if (w->tail_measured) {
      pct(p, sizeof p, w->tail_busy);
      head = mprof__arena_printf(
          a,
          "Tail effect (measured from block spans): SMs are busy only %s of "
          "the kernel's time; %llu block%s make%s %.2f waves of %llu slot%s, "
          "so the last wave leaves SMs idle: size the grid to a multiple of "
          "%llu block%s or use a grid-stride loop.",
          p, (unsigned long long)occ->grid_blocks,
          mprof__plural(occ->grid_blocks), occ->grid_blocks == 1 ? "s" : "",
          occ->waves, (unsigned long long)slots, mprof__plural(slots),
          (unsigned long long)slots, mprof__plural(slots));
    } else if (occ->waves < 1.0)
      head = mprof__arena_printf(
          a,
          "Grid too small: %llu block%s fill%s %s of one wave of %llu block "
          "slot%s; launch more, smaller blocks or run several such kernels "
          "concurrently.",
          (unsigned long long)occ->grid_blocks, mprof__plural(occ->grid_blocks),
          occ->grid_blocks == 1 ? "s" : "", p, (unsigned long long)slots,
          mprof__plural(slots));
    else
      head = mprof__arena_printf(
          a,
          "Tail effect: %llu block%s make%s %.2f waves of %llu slot%s, so "
          "only %s of block slots are busy over the kernel; size the grid to "
          "a multiple of %llu block%s or use a grid-stride loop.",
          (unsigned long long)occ->grid_blocks, mprof__plural(occ->grid_blocks),
          occ->grid_blocks == 1 ? "s" : "", occ->waves,
          (unsigned long long)slots, mprof__plural(slots), p,
          (unsigned long long)slots, mprof__plural(slots));
    break;
  }
  case MPROF_DIM_LAUNCH: {
    char g[32], m[32];
    mprof_format_duration(g, sizeof g, (double)o->stats->gap_median_ns);
    mprof_format_duration(m, sizeof m, (double)o->stats->median_ns);
    pct(p, sizeof p, w->dims[MPROF_DIM_LAUNCH].cost);
    if ((double)o->stats->gap_median_ns >= STARVED_GAP_NS)
      head = mprof__arena_printf(
          a,
          "Starved: runs of %s (median) with idle gaps of %s before launches "
          "leave the stream idle %s of the time; gaps that long are not "
          "launch cost but the stream waiting on the host or on other "
          "streams (synchronisation, allocation, copies or host code "
          "between launches): take those off the path between launches or "
          "queue more work ahead.",
          m, g, p);
    else
      head = mprof__arena_printf(
          a,
          "Launch-bound: runs of %s (median) with idle gaps of %s before "
          "launches leave the stream idle %s of the time; fuse kernels, "
          "batch work or capture the sequence in a CUDA graph.",
          m, g, p);
    break;
  }
  case MPROF_DIM_SM_BALANCE:
  case MPROF_DIM_SM_TAIL:
    head = mprof__arena_printf(a, "%s %s",
                               dim == MPROF_DIM_SM_BALANCE
                                   ? "SM load imbalance (measured):"
                                   : "SM tail (measured):",
                               w->dims[dim].detail);
    break;
  default: head = ""; break;
  }
  return head;
}

/* Whether dimension @p a leads @p b: the larger gain; gains within half a
 * point are a tie (several capped at the same floor, such as the issue
 * rate), decided by the larger cost before the caps: the dimension where
 * the kernel loses most. */
static int better(const kernel_work *w, uint32_t a, uint32_t b) {
  double ca = w->dims[a].cost, cb = w->dims[b].cost;
  if (fabs(ca - cb) > GAIN_TIE)
    return ca > cb;
  return w->raw_cost[a] > w->raw_cost[b];
}

void mprof__diagnose_make_verdict(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  mprof__arena *a = &w->d->arena;
  uint32_t best = MPROF_DIM_NONE;
  for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++)
    if (w->dims[dim].state >= MPROF_STATE_MINOR &&
        (best == MPROF_DIM_NONE || better(w, dim, best)))
      best = dim;
  /* At a measured roof with little left elsewhere, the roof is the news:
   * what is left is in doing less work, which no stall measures. */
  if (w->roof &&
      (best == MPROF_DIM_NONE || w->dims[best].cost < ROOF_HEADLINE)) {
    o->verdict_dimension = mprof__diagnose_roof_dimension(w);
    o->verdict_state = MPROF_STATE_ISSUE;
    o->verdict = mprof__diagnose_roof_text(w);
    o->roof = mprof__diagnose_roof_key(w);
    o->gain = o->saved_ns = NAN;
    o->gain_bound = MPROF_GAIN_UNKNOWN;
    return;
  }
  o->verdict_dimension = best;
  if (best != MPROF_DIM_NONE) {
    o->gain = w->dims[best].gain;
    o->gain_bound = w->dims[best].gain_bound;
    o->saved_ns = w->dims[best].saved_ns;
    o->gain_of_stream = best == MPROF_DIM_LAUNCH;
  }
  if (best == MPROF_DIM_NONE && o->tensor_core) {
    o->verdict_state = MPROF_STATE_OK;
    o->verdict = mprof__arena_printf(
        a,
        "Tensor-core kernel (warpgroup/warp MMA in its SASS): its few warps "
        "and warpgroup waits are its design, and it is judged by how busy "
        "its tensor pipe is, which needs hardware counters (not measured "
        "here)%s.",
        o->library ? "; as a library kernel, the caller's levers are larger "
                     "or batched shapes, lower precision and fusing its "
                     "neighbours"
                   : "");
    return;
  }
  if (best == MPROF_DIM_NONE) {
    int any = 0;
    for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++)
      any |= w->dims[dim].state != MPROF_STATE_UNKNOWN;
    o->verdict_state = any ? MPROF_STATE_OK : MPROF_STATE_UNKNOWN;
    if (!any)
      o->verdict = "Nothing to judge: no PC samples, no launch shape and no "
                   "idle gaps for this kernel.";
    else if (w->sampled && o->stall_count) {
      char p[32];
      pct(p, sizeof p, o->stalls[0].share);
      o->verdict = mprof__arena_printf(
          a,
          "No bottleneck stands out: every dimension is within its "
          "thresholds (largest stall: %s %s).",
          o->stalls[0].reason, p);
    } else if (mprof_trace_is_mkprof(mprof_join_trace(w->join)))
      o->verdict = "No bottleneck in the SM timings: the SMs are evenly "
                   "loaded and finish together.";
    else
      o->verdict = "No bottleneck visible without PC samples: occupancy, "
                   "waves and launch gaps are fine; record with PC sampling "
                   "to see where warps stall.";
    return;
  }
  /* The state and the gain never contradict: a headline whose fix gains
   * a large share is an issue whatever its threshold said, one whose
   * estimated gain is small is minor (docs/DIAGNOSIS.md, "The verdict"). */
  o->verdict_state = w->dims[best].state;
  if (o->gain_bound != MPROF_GAIN_UNKNOWN && o->gain >= GAIN_ISSUE)
    o->verdict_state = MPROF_STATE_ISSUE;
  else if (o->gain_bound != MPROF_GAIN_AT_LEAST &&
           o->gain_bound != MPROF_GAIN_UNKNOWN && o->gain < GAIN_MINOR)
    o->verdict_state = MPROF_STATE_MINOR;
  const char *head = verdict_text(w, best);
  if (o->verdict_state == MPROF_STATE_MINOR)
    head = mprof__arena_printf(a,
                               "No clear bottleneck; the largest is "
                               "minor: %s",
                               head);
  /* Where it happens, for stall dimensions. */
  const char *where = "";
  if (best <= MPROF_DIM_SCHEDULING && o->hot_count) {
    const mprof_hot_instruction *h = NULL;
    for (size_t i = 0; i < o->hot_count && !h; i++)
      for (size_t r = 0; r < o->hot[i].reason_count; r++)
        if (o->hot[i].reasons[r].dimension == best) {
          h = &o->hot[i];
          break;
        }
    if (!h)
      h = &o->hot[0];
    char p[32];
    pct(p, sizeof p, h->share);
    if (*h->sass)
      where = mprof__arena_printf(
          a, " Hottest: %s%s%s (offset 0x%x, %s of samples).", h->sass,
          *h->file ? " at " : "",
          *h->file ? mprof__arena_printf(a, "%s:%u", h->file, h->line) : "",
          h->offset, p);
    else
      where = mprof__arena_printf(a, " Hottest: offset 0x%x (%s of samples).",
                                  h->offset, p);
    if (!where)
      where = "";
  }
  /* Other issues, by cost. */
  char also[256] = "";
  size_t used = 0;
  for (int pass = 0; pass < MPROF_DIM_COUNT_; pass++) {
    uint32_t next = MPROF_DIM_NONE;
    for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++) {
      if (dim == best || w->dims[dim].state != MPROF_STATE_ISSUE ||
          strstr(also, mprof_dimension_title(dim)))
        continue;
      if (next == MPROF_DIM_NONE || w->dims[dim].cost > w->dims[next].cost)
        next = dim;
    }
    if (next == MPROF_DIM_NONE)
      break;
    int n = snprintf(also + used, sizeof also - used, "%s%s",
                     used ? ", " : " Also: ", mprof_dimension_title(next));
    if (n < 0 || (size_t)n >= sizeof also - used)
      break;
    used += (size_t)n;
  }
  o->verdict =
      mprof__arena_printf(a, "%s%s%s%s", head, where, also, used ? "." : "");
}
