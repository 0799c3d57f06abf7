/*
 * mprof — the per-kernel diagnosis.
 *
 * Every threshold here is documented, with its reason, in
 * docs/DIAGNOSIS.md; change both together.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "format/set.h"
#include "internal.h"
#include "mprof/diagnose.h"
#include "mprof/units.h"
#include "diagnose_internal.h"

/* ---- names -------------------------------------------------------------- */

static const char *const dimension_keys[MPROF_DIM_COUNT_] = {
    "memory_latency",  "memory_throughput", "shared_memory",   "compute",
    "synchronisation", "instruction_fetch", "scheduling",      "occupancy",
    "tail_effect",     "launch_overhead",   "sm_load_balance", "sm_tail"};

static const char *const dimension_titles[MPROF_DIM_COUNT_] = {
    "memory latency",      "memory throughput",
    "shared memory / MIO", "compute pipes",
    "synchronisation",     "instruction fetch / branching",
    "scheduling",          "occupancy",
    "tail effect",         "launch overhead / idle gaps",
    "SM load balance",     "SM tail (spans)"};

const char *mprof_dimension_key(uint32_t dimension) {
  return dimension < MPROF_DIM_COUNT_ ? dimension_keys[dimension] : "";
}

const char *mprof_dimension_title(uint32_t dimension) {
  return dimension < MPROF_DIM_COUNT_ ? dimension_titles[dimension] : "";
}

const char *mprof_state_name(uint32_t state) {
  static const char *const names[] = {"unknown", "ok", "minor", "issue"};
  return state < 4 ? names[state] : "";
}

const char *mprof_gain_bound_name(uint32_t bound) {
  static const char *const names[] = {"estimate", "at_least", "at_most",
                                      "unknown"};
  return bound < 4 ? names[bound] : "";
}

const char *mprof_occupancy_limiter_name(uint32_t limiter) {
  static const char *const names[] = {"unknown", "warps", "blocks", "registers",
                                      "shared_memory"};
  return limiter < 5 ? names[limiter] : "unknown";
}

/* ---- thresholds (docs/DIAGNOSIS.md, "Thresholds"; the others are in
 * diagnose_internal.h) ------------------------------------------------ */

/* Share of plain-reason samples at which a stall dimension is minor and an
 * issue. */
static const double stall_minor[7] = {0.20, 0.10, 0.15, 0.30, 0.10, 0.08, 0.08};
static const double stall_issue[7] = {0.40, 0.25, 0.30, 0.50, 0.30, 0.20, 0.20};

/* ---- occupancy ---------------------------------------------------------- */

static uint32_t round_up(uint32_t value, uint32_t unit) {
  return (value + unit - 1) / unit * unit;
}

/* The occupancy of @p shape on @p device into @p out, the library's own
 * struct (all of it; the caller's gets its version's part through
 * mprof_occupancy_compute()). */
static void occupancy_of(mprof_occupancy *out,
                         const mprof_device_record *device,
                         const mprof_shape_stats *shape) {
  memset(out, 0, sizeof *out);
  out->version = MPROF_OCCUPANCY_VERSION;
  out->limit_warps = out->limit_blocks = out->limit_registers =
      out->limit_shared = UINT32_MAX;
  if (!shape)
    return;
  uint64_t grid = (uint64_t)(shape->grid[0] ? shape->grid[0] : 1) *
                  (shape->grid[1] ? shape->grid[1] : 1) *
                  (shape->grid[2] ? shape->grid[2] : 1);
  uint64_t threads = (uint64_t)shape->block[0] *
                     (shape->block[1] ? shape->block[1] : 1) *
                     (shape->block[2] ? shape->block[2] : 1);
  out->grid_blocks = grid;
  if (!device || !threads || !device->warp_size || !device->sm_count ||
      threads > 0xffffffffu)
    return;
  uint32_t warp = device->warp_size;
  uint32_t max_warps = device->max_warps_per_sm
                           ? device->max_warps_per_sm
                           : device->max_threads_per_sm / warp;
  if (!max_warps)
    return;
  out->known = 1;
  out->sm_count = device->sm_count;
  out->max_warps = max_warps;
  uint32_t wpb = (uint32_t)((threads + warp - 1) / warp);
  out->warps_per_block = wpb;
  if (device->max_threads_per_block && threads > device->max_threads_per_block)
    out->limit_warps = 0;
  else
    out->limit_warps = max_warps / wpb;
  if (device->max_blocks_per_sm)
    out->limit_blocks = device->max_blocks_per_sm;
  /* Registers: per warp in units of 256, allocated per sub-partition. */
  if (shape->registers && device->max_regs_per_sm) {
    uint32_t sub = device->cc_major == 6 && device->cc_minor == 0 ? 2 : 4;
    uint64_t per_warp = ((uint64_t)shape->registers * warp + 255) / 256 * 256;
    uint64_t assumed = per_warp * round_up(wpb, sub);
    if (shape->registers > 255 || !per_warp ||
        (device->max_regs_per_block && assumed > device->max_regs_per_block))
      out->limit_registers = 0;
    else
      out->limit_registers =
          (uint32_t)((device->max_regs_per_sm / sub / per_warp) * sub / wpb);
  }
  /* Shared memory: rounded to 128 bytes plus 1 KiB reserved per block on
   * compute capability 8.0 and later. */
  uint64_t smem = (uint64_t)shape->static_shared + shape->dynamic_shared;
  uint32_t reserved = device->cc_major >= 8 ? 1024 : 0;
  uint32_t unit = device->cc_major >= 8 ? 128 : 256;
  if (device->max_shared_per_sm && (smem || reserved)) {
    uint64_t alloc = (smem + reserved + unit - 1) / unit * unit;
    if (device->max_shared_per_block && smem > device->max_shared_per_block)
      out->limit_shared = 0;
    else
      out->limit_shared = (uint32_t)(device->max_shared_per_sm / alloc);
  }
  /* The smallest limit wins; ties name the resource a user can change.
   * {blocks per SM, limiter}, in that order. */
  const uint32_t limits[][2] = {{out->limit_registers, MPROF_LIMIT_REGISTERS},
                                {out->limit_shared, MPROF_LIMIT_SHARED},
                                {out->limit_warps, MPROF_LIMIT_WARPS},
                                {out->limit_blocks, MPROF_LIMIT_BLOCKS}};
  uint32_t blocks = UINT32_MAX;
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    if (limits[i][0] < blocks) {
      blocks = limits[i][0];
      out->limiter = limits[i][1];
    }
  if (blocks == UINT32_MAX) {
    blocks = max_warps / wpb;
    out->limiter = MPROF_LIMIT_WARPS;
  }
  out->blocks_per_sm = blocks;
  uint64_t active = (uint64_t)blocks * wpb;
  out->active_warps = active > max_warps ? max_warps : (uint32_t)active;
  out->theoretical = (double)out->active_warps / (double)max_warps;
  if (blocks) {
    double slots = (double)device->sm_count * (double)blocks;
    out->waves = (double)grid / slots;
    out->tail_efficiency = out->waves / ceil(out->waves);
  }
}

MPROF__VERSIONS(occupancy_versions, "occupancy",
                MPROF__END_OF(mprof_occupancy, tail_efficiency));

int mprof_occupancy_compute(mprof_occupancy *out,
                            const mprof_device_record *device,
                            const mprof_shape_stats *shape) {
  if (!out)
    return mprof__error_set(MPROF_EINVAL, "mprof_occupancy_compute: NULL");
  int rc = mprof__result_check(out, &occupancy_versions);
  if (rc)
    return rc;
  mprof_occupancy full;
  occupancy_of(&full, device, shape);
  mprof__result_store(out, &full, &occupancy_versions);
  return 0;
}

/* ---- the diagnosis ------------------------------------------------------ */

MPROF__VERSIONS(diagnose_options, "diagnose options",
                MPROF__END_OF(mprof_diagnose_options, min_samples),
                MPROF__END_OF(mprof_diagnose_options, sidecar_problem));

int mprof_diagnose_options_init(mprof_diagnose_options *opts,
                                unsigned version) {
  mprof_diagnose_options init = MPROF_DIAGNOSE_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &diagnose_options);
}

/* "long_scoreboard 64%, wait 7.2%": the reasons of @p dimension by share. */
char *mprof__diagnose_reason_list(kernel_work *w, uint32_t dimension,
                                  size_t limit) {
  char text[512] = "";
  size_t used = 0, listed = 0;
  for (size_t i = 0; i < w->out->stall_count && listed < limit; i++) {
    const mprof_reason_share *r = &w->out->stalls[i];
    if (r->dimension != dimension || r->share <= 0)
      continue;
    char p[32];
    pct(p, sizeof p, r->share);
    int n = snprintf(text + used, sizeof text - used, "%s%s %s",
                     listed ? ", " : "", r->reason, p);
    if (n < 0 || (size_t)n >= sizeof text - used)
      break;
    used += (size_t)n;
    listed++;
  }
  return mprof__arena_strdup(&w->d->arena, listed ? text : "none sampled");
}

static const char *const stall_meaning[7] = {
    "wait on L1TEX results (global, local or texture memory)",
    "wait for full load/store or texture queues, or for stores to drain",
    "wait on shared memory or other MIO operations (special functions, "
    "shuffles)",
    "are ready or wait on math pipes and fixed-latency dependencies",
    "wait at barriers, memory fences or sleep",
    "wait for instructions to be fetched or branches resolved",
    "wait on dispatch or miscellaneous scheduler conditions"};

static void judge_stalls(kernel_work *w) {
  const mprof_kernel_stats *ks = w->out->stats;
  for (uint32_t dim = 0; dim <= MPROF_DIM_SCHEDULING; dim++) {
    mprof_dimension *d = &w->dims[dim];
    if (!w->sampled) {
      d->state = MPROF_STATE_UNKNOWN;
      d->detail = ks->samples
                      ? mprof__arena_printf(
                            &w->d->arena,
                            "Too few PC samples to judge (%llu; %llu needed).",
                            (unsigned long long)ks->samples,
                            (unsigned long long)w->opts->min_samples)
                      : "No PC samples for this kernel.";
      add_metric(d, "samples", (double)ks->samples, "count");
      continue;
    }
    double share = w->dim_share[dim];
    d->state = judge(share, stall_minor[dim], stall_issue[dim]);
    d->cost = share;
    char p[32];
    pct(p, sizeof p, share);
    add_metric(d, "share", share, "fraction");
    if (d->state == MPROF_STATE_OK)
      d->detail = mprof__arena_printf(&w->d->arena, "%s of samples: %s.", p,
                                      mprof__diagnose_reason_list(w, dim, 4));
    else
      d->detail = mprof__arena_printf(&w->d->arena, "%s of samples %s: %s.", p,
                                      stall_meaning[dim],
                                      mprof__diagnose_reason_list(w, dim, 4));
  }
}

/* The share of @p reason in the kernel's stall mix. */
double mprof__diagnose_reason_share(const kernel_work *w, const char *reason) {
  for (size_t i = 0; i < w->out->stall_count; i++)
    if (strcmp(w->out->stalls[i].reason, reason) == 0)
      return w->out->stalls[i].share;
  return 0.0;
}

static void judge_occupancy(kernel_work *w, const mprof_device_record *device) {
  mprof_kernel_diagnosis *o = w->out;
  mprof_dimension *d = &w->dims[MPROF_DIM_OCCUPANCY];
  mprof_dimension *t = &w->dims[MPROF_DIM_TAIL];
  size_t shape_count;
  const mprof_shape_stats *shapes =
      mprof_join_shapes(w->join, o->kernel, &shape_count);
  /* occ[0] is also the kernel's occupancy: an unknown one without shapes. */
  mprof_occupancy *occ = (mprof_occupancy *)mprof__arena_alloc(
      &w->d->arena, (shape_count ? shape_count : 1) * sizeof *occ);
  if (!occ) {
    /* Out of memory: the diagnosis fails, but what runs until then reads
     * o->occupancy. */
    static const mprof_occupancy unknown = {.version = MPROF_OCCUPANCY_VERSION,
                                            .limit_warps = UINT32_MAX,
                                            .limit_blocks = UINT32_MAX,
                                            .limit_registers = UINT32_MAX,
                                            .limit_shared = UINT32_MAX};
    o->occupancy = &unknown;
    return;
  }
  occupancy_of(&occ[0], NULL, NULL);
  o->shapes = occ;
  o->shape_count = shape_count;
  o->occupancy = &occ[0];
  double weight_sum = 0, occ_sum = 0, tail_sum = 0;
  uint64_t kernel_total = o->stats->total_ns;
  for (size_t s = 0; s < shape_count; s++) {
    occupancy_of(&occ[s], device, &shapes[s]);
    if (!occ[s].known || !shapes[s].launches)
      continue;
    double weight =
        kernel_total ? (double)shapes[s].total_ns : (double)shapes[s].launches;
    weight_sum += weight;
    occ_sum += weight * occ[s].theoretical;
    tail_sum += weight * occ[s].tail_efficiency;
  }
  if (weight_sum <= 0) {
    o->weighted_occupancy = o->weighted_tail = -1;
    d->state = t->state = MPROF_STATE_UNKNOWN;
    d->detail = t->detail =
        !shape_count ? "No launches: the launch shape is unknown."
                     : "The trace lacks the device limits needed (DEVICES "
                       "record) or the block size.";
    return;
  }
  o->weighted_occupancy = occ_sum / weight_sum;
  o->weighted_tail = tail_sum / weight_sum;
  const mprof_occupancy *top = o->occupancy;
  const mprof_shape_stats *shape = &shapes[0];
  char p[32];
  /* Occupancy. */
  double value = o->weighted_occupancy;
  d->state = judge_below(value, OCCUPANCY_MINOR, OCCUPANCY_ISSUE);
  int excused = 0;
  if (d->state == MPROF_STATE_ISSUE && w->sampled &&
      mprof__diagnose_reason_share(w, "selected") +
              mprof__diagnose_reason_share(w, "not_selected") +
              mprof__diagnose_reason_share(w, "math_pipe_throttle") >=
          BUSY_PIPES) {
    d->state = MPROF_STATE_MINOR;
    excused = 1;
  }
  d->cost = value < OCCUPANCY_MINOR
                ? (OCCUPANCY_MINOR - value) / OCCUPANCY_MINOR
                : 0.0;
  if (excused)
    d->cost *= 0.5;
  pct(p, sizeof p, top->theoretical);
  add_metric(d, "theoretical", top->theoretical, "fraction");
  add_metric(d, "weighted", value, "fraction");
  add_metric(d, "blocks_per_sm", top->blocks_per_sm, "blocks");
  add_metric(d, "active_warps", top->active_warps, "warps");
  add_metric(d, "max_warps", top->max_warps, "warps");
  add_metric(d, "threads_per_block",
             (double)top->warps_per_block * (device ? device->warp_size : 32),
             "count");
  add_metric(d, "registers", shape->registers, "registers");
  add_metric(d, "shared_bytes",
             (double)shape->static_shared + shape->dynamic_shared, "bytes");
  if (top->limit_registers != UINT32_MAX)
    add_metric(d, "limit_registers", top->limit_registers, "blocks");
  if (top->limit_shared != UINT32_MAX)
    add_metric(d, "limit_shared", top->limit_shared, "blocks");
  if (top->limit_warps != UINT32_MAX)
    add_metric(d, "limit_warps", top->limit_warps, "blocks");
  if (top->limit_blocks != UINT32_MAX)
    add_metric(d, "limit_blocks", top->limit_blocks, "blocks");
  if (!top->blocks_per_sm)
    d->detail = mprof__arena_printf(
        &w->d->arena,
        "The block (%u warp%s, %u registers/thread, %llu bytes of shared "
        "memory) does not fit on an SM per the trace's device limits.",
        top->warps_per_block, mprof__plural(top->warps_per_block),
        shape->registers,
        (unsigned long long)shape->static_shared + shape->dynamic_shared);
  else
    d->detail = mprof__arena_printf(
        &w->d->arena,
        "%s theoretical occupancy: %u block%s of %u warp%s = %u of %u warps "
        "per SM, limited by %s%s.",
        p, top->blocks_per_sm, mprof__plural(top->blocks_per_sm),
        top->warps_per_block, mprof__plural(top->warps_per_block),
        top->active_warps, top->max_warps, limiter_words(top->limiter),
        excused ? " (but the pipes are busy: ready warps issue at high rate)"
                : "");
  /* Tail effect. */
  double tail = o->weighted_tail;
  if (!top->blocks_per_sm) {
    t->state = MPROF_STATE_UNKNOWN;
    t->detail = "Unknown: no block fits on an SM.";
    return;
  }
  t->state = judge_below(tail, TAIL_MINOR, TAIL_ISSUE);
  t->cost = 1.0 - tail;
  uint64_t slots = (uint64_t)top->sm_count * top->blocks_per_sm;
  add_metric(t, "waves", top->waves, "waves");
  add_metric(t, "efficiency", tail, "fraction");
  add_metric(t, "grid_blocks", (double)top->grid_blocks, "blocks");
  add_metric(t, "slots_per_wave", (double)slots, "blocks");
  add_metric(t, "sm_count", top->sm_count, "count");
  pct(p, sizeof p, tail);
  if (top->waves < 1.0)
    t->detail = mprof__arena_printf(
        &w->d->arena,
        "%llu block%s fill%s %s of one wave of %llu block slot%s (%u SM%s x "
        "%u block%s): the grid is too small for the GPU.",
        (unsigned long long)top->grid_blocks, mprof__plural(top->grid_blocks),
        top->grid_blocks == 1 ? "s" : "", p, (unsigned long long)slots,
        mprof__plural(slots), top->sm_count, mprof__plural(top->sm_count),
        top->blocks_per_sm, mprof__plural(top->blocks_per_sm));
  else if (t->state == MPROF_STATE_OK)
    t->detail = mprof__arena_printf(
        &w->d->arena,
        "%llu block%s make%s %.2f waves of %llu slot%s (%u SM%s x %u "
        "block%s): %s of slots busy.",
        (unsigned long long)top->grid_blocks, mprof__plural(top->grid_blocks),
        top->grid_blocks == 1 ? "s" : "", top->waves, (unsigned long long)slots,
        mprof__plural(slots), top->sm_count, mprof__plural(top->sm_count),
        top->blocks_per_sm, mprof__plural(top->blocks_per_sm), p);
  else {
    double last = top->waves - floor(top->waves);
    char lp[32];
    pct(lp, sizeof lp, last > 0 ? last : 1.0);
    t->detail = mprof__arena_printf(
        &w->d->arena,
        "%llu block%s make%s %.2f waves of %llu slot%s (%u SM%s x %u "
        "block%s); the last wave is %s full, so only %s of slots are busy "
        "over the kernel.",
        (unsigned long long)top->grid_blocks, mprof__plural(top->grid_blocks),
        top->grid_blocks == 1 ? "s" : "", top->waves, (unsigned long long)slots,
        mprof__plural(slots), top->sm_count, mprof__plural(top->sm_count),
        top->blocks_per_sm, mprof__plural(top->blocks_per_sm), lp, p);
  }
}

static void judge_launch(kernel_work *w) {
  const mprof_kernel_stats *ks = w->out->stats;
  mprof_dimension *d = &w->dims[MPROF_DIM_LAUNCH];
  if (!ks->gap_count) {
    d->state = MPROF_STATE_UNKNOWN;
    d->detail = ks->launches ? "No idle gap before any of its launches on "
                               "their streams (first on the stream or "
                               "back-to-back)."
                             : "No launches.";
    if (ks->launches > 1) {
      d->state = MPROF_STATE_OK;
      d->cost = 0;
    }
    add_metric(d, "gaps", 0, "count");
    return;
  }
  double gap = (double)ks->gap_median_ns, dur = (double)ks->median_ns;
  double idle = gap + dur > 0 ? gap / (gap + dur) : 0.0;
  d->state = judge(idle, IDLE_MINOR, IDLE_ISSUE);
  d->cost = idle;
  if (ks->launches < 2) {
    /* One launch: the gap before it is whatever the program did first
     * (start-up, a host phase), not a pattern of this kernel's launches. */
    d->state = MPROF_STATE_UNKNOWN;
    d->cost = 0;
  }
  add_metric(d, "idle_fraction", idle, "fraction");
  add_metric(d, "gap_median_ns", gap, "ns");
  add_metric(d, "gap_mean_ns", ks->gap_mean_ns, "ns");
  add_metric(d, "median_ns", dur, "ns");
  add_metric(d, "gaps", (double)ks->gap_count, "count");
  char g[32], m[32], p[32];
  mprof_format_duration(g, sizeof g, gap);
  mprof_format_duration(m, sizeof m, dur);
  pct(p, sizeof p, idle);
  if (d->state == MPROF_STATE_UNKNOWN)
    d->detail = mprof__arena_printf(
        &w->d->arena,
        "Launched once, %s after the stream's previous work: one gap "
        "(start-up or a host phase) says nothing about its launch cost.",
        g);
  else if (d->state == MPROF_STATE_OK)
    d->detail = mprof__arena_printf(
        &w->d->arena, "Median gap %s before launches, median run %s: %s idle.",
        g, m, p);
  else
    d->detail = mprof__arena_printf(
        &w->d->arena,
        "The median idle gap before a launch on its stream is %s against a "
        "median run of %s: the stream idles %s of the time around this "
        "kernel (%llu gap%s).",
        g, m, p, (unsigned long long)ks->gap_count,
        mprof__plural(ks->gap_count));
}

/* The plain reasons of @p rs (not-issued ones left out), at most @p limit,
 * each as a share of @p samples: how many were written to @p out. */
static size_t plain_reasons(const kernel_work *w, mprof_reason_share *out,
                            const mprof_reason_samples *rs, size_t count,
                            uint64_t samples, size_t limit) {
  size_t n = 0;
  for (size_t i = 0; i < count && n < limit; i++) {
    const mprof_stall_reason *r = mprof_join_reason(w->join, rs[i].reason);
    if (r->not_issued)
      continue;
    out[n].reason = r->name;
    out[n].dimension = r->dimension;
    out[n].samples = rs[i].samples;
    out[n].share = share_of(rs[i].samples, samples);
    n++;
  }
  return n;
}

static void make_stalls(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  const mprof_kernel_stats *ks = o->stats;
  size_t count;
  const mprof_reason_samples *rs =
      mprof_join_kernel_reasons(w->join, o->kernel, &count);
  mprof_reason_share *stalls = (mprof_reason_share *)mprof__arena_alloc(
      &w->d->arena, (count ? count : 1) * sizeof *stalls);
  if (!stalls)
    return;
  size_t n = plain_reasons(w, stalls, rs, count, ks->samples, count);
  for (size_t i = 0; i < n; i++) {
    if (stalls[i].dimension < MPROF_DIM_COUNT_)
      w->dim_share[stalls[i].dimension] += stalls[i].share;
    else
      o->other_share += stalls[i].share;
  }
  o->stalls = stalls;
  o->stall_count = n; /* already largest first: the join sorts them */
  o->issue_active = -1.0;
  if (n < count && ks->samples) { /* the trace has not-issued reasons */
    o->issue_active = 1.0 - share_of(ks->not_issued, ks->samples);
    if (o->issue_active < 0) /* inconsistent counts: no issue at all */
      o->issue_active = 0;
  }
  w->sampled = ks->samples >= w->opts->min_samples && ks->samples > 0;
}

static void make_hot(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  size_t pc_count;
  const mprof_pc_stats *pcs = mprof_join_pcs(w->join, o->kernel, &pc_count);
  size_t n = pc_count < w->opts->hot_count ? pc_count : w->opts->hot_count;
  mprof_hot_instruction *hot = (mprof_hot_instruction *)mprof__arena_alloc(
      &w->d->arena, (n ? n : 1) * sizeof *hot);
  if (!hot)
    return;
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const mprof_pc_stats *pc = &pcs[i];
    if (!pc->samples)
      break;
    mprof_hot_instruction *h = &hot[kept++];
    h->cubin_crc = pc->cubin_crc;
    h->function_index = pc->function_index;
    h->offset = pc->offset;
    h->samples = pc->samples;
    h->share = share_of(pc->samples, o->stats->samples);
    h->sass = "";
    h->file = "";
    if (pc->instruction) {
      const mprof_sass_instruction *in = pc->instruction;
      char text[512];
      h->sass = mprof__arena_strdup(
          &w->d->arena, mprof_sass_instruction_text(text, sizeof text, in));
      if (!h->sass)
        h->sass = "";
      if (in->file && *in->file && in->line) {
        h->file = in->file;
        h->line = in->line;
      }
    }
    mprof_reason_share *top =
        (mprof_reason_share *)mprof__arena_alloc(&w->d->arena, 3 * sizeof *top);
    if (!top)
      return;
    h->reasons = top;
    h->reason_count =
        plain_reasons(w, top, pc->reasons, pc->reason_count, pc->samples, 3);
  }
  o->hot = hot;
  o->hot_count = kept;
}

static void add_kernel_note(kernel_work *w, const char *text) {
  if (text && w->note_count < sizeof w->notes / sizeof w->notes[0])
    w->notes[w->note_count++] = text;
}

static void make_kernel_notes(kernel_work *w, int trace_sampled) {
  const mprof_kernel_stats *ks = w->out->stats;
  const mprof_sidecar *sidecar = mprof_join_sidecar(w->join);
  if (!ks->launches)
    add_kernel_note(w, "PC samples but no launches in the trace: its "
                       "activity records were lost or it ran outside the "
                       "traced window.");
  if (trace_sampled && !ks->samples && ks->launches)
    add_kernel_note(w, "No PC samples: it ran too briefly for the sampling "
                       "period, or outside the sampled window.");
  if (sidecar && ks->samples) {
    const mprof_sidecar_function *fn = ks->function;
    if (!fn)
      add_kernel_note(w, "The sidecar has no entry for this kernel: SASS "
                         "and source lines are unknown.");
    else if (fn->sass_state == MPROF_SASS_NO_CUBIN)
      add_kernel_note(w, "The trace kept no code for this kernel: no SASS.");
    else if (fn->sass_state == MPROF_SASS_NO_DISASSEMBLER)
      add_kernel_note(w, "No SASS: nvdisasm was not found when the sidecar "
                         "was written; run `mprof sass TRACE` where the CUDA "
                         "toolkit is installed.");
    else if (fn->sass_state == MPROF_SASS_DEFERRED)
      add_kernel_note(w, "No SASS yet: the trace keeps the code, and nvdisasm "
                         "was not found here to disassemble it; run `mprof "
                         "sass TRACE` where the CUDA toolkit is installed.");
    else if (fn->sass_state == MPROF_SASS_FAILED)
      add_kernel_note(
          w, mprof__arena_printf(&w->d->arena, "Disassembly failed: %s",
                                 fn->sass_error ? fn->sass_error : ""));
    else if (w->out->hot_count && !*w->out->hot[0].file)
      add_kernel_note(w, "No source lines: build with -lineinfo to map SASS "
                         "to source.");
  }
  const char **notes = (const char **)mprof__arena_alloc(
      &w->d->arena, (w->note_count ? w->note_count : 1) * sizeof *notes);
  if (!notes)
    return;
  memcpy(notes, w->notes, w->note_count * sizeof *notes);
  w->out->notes = notes;
  w->out->note_count = w->note_count;
}

#define MAX_TRACE_NOTES 16

static void add_note(mprof_diagnosis *d, const char *key, const char *text) {
  if (!text || d->note_count >= MAX_TRACE_NOTES)
    return;
  mprof_note *n = &d->notes[d->note_count++];
  n->key = key;
  n->text = text;
}

/* Whether processes 0 and 1 of @p t both have @p key, and the same. */
static int same_meta(const mprof_trace *t, const char *key) {
  const char *a = mprof_trace_process_meta(t, 0, key);
  const char *b = mprof_trace_process_meta(t, 1, key);
  return a && b && strcmp(a, b) == 0;
}

/* Whether processes 0 and 1 of @p t may be of one run: one parent (ranks
 * of one launcher), one the other's parent (a fork), or parents unknown. */
static int one_run(const mprof_trace *t) {
  const char *ppid_a = mprof_trace_process_meta(t, 0, "ppid");
  const char *ppid_b = mprof_trace_process_meta(t, 1, "ppid");
  const char *pid_a = mprof_trace_process_meta(t, 0, "pid");
  const char *pid_b = mprof_trace_process_meta(t, 1, "pid");
  if (!ppid_a || !ppid_b || same_meta(t, "ppid"))
    return 1;
  return (pid_a && !strcmp(ppid_b, pid_a)) || (pid_b && !strcmp(ppid_a, pid_b));
}

/* The command line of a set of two runs of one command on one host:
 * *@p both_pm 0 for a `record --pm both` pair (one record, so one parent;
 * one run PM-sampled), 1 for two PM-sampled records (with other counters:
 * `--pm-counters sol` and the default set; not of one run); NULL for
 * anything else. */
static const char *run_pair_command(const mprof_trace *t, int *both_pm) {
  if (mprof_trace_process_count(t) != 2 || !same_meta(t, "host") ||
      !same_meta(t, "cmdline"))
    return NULL;
  const char *x = mprof_trace_process_meta(t, 0, "pm.mode");
  const char *y = mprof_trace_process_meta(t, 1, "pm.mode");
  if (!x || !y)
    return NULL;
  int x_on = strcmp(x, "on") == 0, y_on = strcmp(y, "on") == 0;
  *both_pm = x_on && y_on;
  if (*both_pm ? one_run(t) : x_on == y_on || !same_meta(t, "ppid"))
    return NULL;
  return mprof_trace_process_meta(t, 0, "cmdline");
}

static void make_trace_notes(mprof_diagnosis *d,
                             const mprof_diagnose_options *opts) {
  const mprof_join *join = d->join;
  const mprof_trace *t = mprof_join_trace(join);
  mprof__arena *a = &d->arena;
  size_t launches = mprof__trace_records(t, MPROF_SECTION_LAUNCHES);
  d->notes =
      (mprof_note *)mprof__arena_alloc(a, MAX_TRACE_NOTES * sizeof *d->notes);
  if (!d->notes)
    return;
  uint64_t covered = 0;
  if (mprof_trace_partial(t, &covered)) {
    const char *signal = mprof_trace_meta(t, "capture.signal");
    add_note(d, "partial",
             mprof__arena_printf(
                 a,
                 "The capture was cut short%s%s%s: this partial trace holds "
                 "the first %.1f s of the run, up to its last flush; what "
                 "ran after that is missing.",
                 signal ? " (signal " : "", signal ? signal : "",
                 signal ? ")" : "", (double)covered / 1e9));
  }
  if (!launches)
    add_note(d, "no_launches",
             "The trace holds no kernel launches: nothing ran on the GPU "
             "while recording, or the activity records were lost.");
  /* An MKPROF holds instruction timings only: no samples, counters or
   * code could be in it, so saying they are missing would not help. */
  int timings_only = mprof_trace_is_mkprof(t);
  if (!mprof_join_sample_total(join) && !timings_only) {
    const char *mode = mprof_trace_meta(t, "pc.mode");
    add_note(d, "no_samples",
             mprof__arena_printf(
                 a,
                 "No PC samples (pc.mode=%s): the stall dimensions are "
                 "unknown and there are no hot instructions; record with PC "
                 "sampling on (`mprof record`, the default "
                 "--pc-mode continuous).",
                 mode ? mode : "unknown"));
  }
  if (launches && !mprof_throughput_available(d->throughput) && !timings_only)
    add_note(d, "no_counters",
             mprof__arena_printf(
                 a,
                 "No hardware counters: %s; bandwidth- and latency-bound "
                 "are told apart by stall reasons alone (`mprof record --pm "
                 "both` records the program a second time with them; open "
                 "the two traces as one).",
                 mprof_throughput_missing(d->throughput)));
  uint32_t counter = 0;
  size_t scaled_out = mprof__throughput_out_of_scale(d->throughput, &counter);
  if (scaled_out)
    add_note(d, "pm_out_of_scale",
             mprof__arena_printf(
                 a,
                 "CUPTI evaluated %s beyond 100%% of its peak for %zu "
                 "kernel%s (seen on GH100 for a long-running kernel): it is "
                 "unknown for %s, the other counters are measured.",
                 mprof_counter_title(counter), scaled_out,
                 scaled_out == 1 ? "" : "s",
                 scaled_out == 1 ? "that kernel" : "them"));
  if (mprof__throughput_l2_left_out(d->throughput))
    add_note(d, "pm_l2_left_out",
             "The L2's sectors are not measured beside TriageCompute "
             "counters (`--pm-counters sol`): CUPTI evaluates them wrong "
             "there. A run with the default counters (`mprof record --pm "
             "on`) measures them; summarise the two runs together (`mprof "
             "summary SOL.mprof DEFAULT.mprof`) for the whole speed of "
             "light.");
  int both_pm = 0;
  const char *pair = run_pair_command(t, &both_pm);
  if (pair && !both_pm)
    add_note(d, "pm_pair",
             mprof__arena_printf(
                 a,
                 "Two runs of `%s` (`mprof record --pm both`): stall reasons "
                 "come from the PC-sampled run, measured throughput from the "
                 "PM-sampled one; launch counts and kernel time are the two "
                 "runs' sum, shares and means those of one run.",
                 pair));
  else if (pair)
    add_note(d, "pm_runs",
             mprof__arena_printf(
                 a,
                 "Two PM-sampled runs of `%s` (`mprof record --pm on`, e.g. "
                 "with `--pm-counters sol` and the default counters): each "
                 "counter of a kernel comes from the runs that read it in "
                 "scale; launch counts and kernel time are the two runs' "
                 "sum, shares and means those of one run.",
                 pair));
  const char *pm_mode = mprof_trace_meta(t, "pm.mode");
  if (pm_mode && strcmp(pm_mode, "alternate") == 0) {
    const char *pc_pieces = mprof_trace_meta(t, "alternate.pc_pieces");
    const char *pm_pieces = mprof_trace_meta(t, "alternate.pm_pieces");
    const char *switch_us = mprof_trace_meta(t, "alternate.switch_us");
    add_note(
        d, "alternate",
        mprof__arena_printf(
            a,
            "One run, alternating (`mprof record --pm alternate`): "
            "stall reasons come from the %s PC-sampled repeats of the "
            "window, measured throughput from the %s PM-sampled ones; "
            "switching between them took %.1f ms of the program's "
            "time.",
            pc_pieces ? pc_pieces : "0", pm_pieces ? pm_pieces : "0",
            switch_us ? (double)strtoull(switch_us, NULL, 10) / 1e3 : 0.0));
  }
  /* In a set of traces, the first one's sidecar is the one looked for. */
  const char *first = mprof_trace_process_meta(t, 0, "path");
  if (!first || !*first)
    first = mprof_trace_path(t);
  const char *problem = opts->version >= 2 ? opts->sidecar_problem : NULL;
  if (!mprof_join_sidecar(join) && problem && *problem)
    add_note(d, "no_sidecar",
             mprof__arena_printf(
                 a,
                 "Sidecar left out, the trace read without it (its timeline "
                 "and samples; hot instructions without SASS or source "
                 "lines): %s.",
                 problem));
  else if (!mprof_join_sidecar(join) && !timings_only)
    add_note(d, "no_sidecar",
             mprof__arena_printf(
                 a,
                 "No sidecar (%s.pc.json): hot instructions have offsets but "
                 "no SASS or source lines; `mprof record` writes the sidecar, "
                 "`mprof sass %s` attaches SASS to an existing trace.",
                 first, first));
  /* What was lost, counted: one note each, with its count. */
  const struct {
    const char *key;
    uint64_t count;
    /* printf formats with one %llu: of one thing, of several */
    const char *one, *many;
  } lost[] = {
      {"pc_buffer_full",
       mprof_trace_drop_total(t, MPROF_DROP_PC_HW_BUFFER_FULL),
       "The PC sampling hardware buffer overflowed in %llu drain: samples "
       "are incomplete; record with a longer sampling period.",
       "The PC sampling hardware buffer overflowed in %llu drains: samples "
       "are incomplete; record with a longer sampling period."},
      {"pc_dropped", mprof_trace_drop_total(t, MPROF_DROP_PC_DROPPED_SAMPLES),
       "%llu PC sample was dropped: stall shares may be skewed.",
       "%llu PC samples were dropped: stall shares may be skewed."},
      {"pm_overflow", mprof_trace_drop_total(t, MPROF_DROP_PM_OVERFLOW),
       "The PM sampling buffer overflowed %llu time and its samples were "
       "lost: a kernel that ran then has no measured throughput; record "
       "again with a longer --pm-interval.",
       "The PM sampling buffer overflowed %llu times and their samples were "
       "lost: kernels that ran then have no measured throughput; record "
       "again with a longer --pm-interval."},
      {"activity_dropped",
       mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_RECORDS),
       "%llu activity record was dropped: launch counts and times are "
       "incomplete.",
       "%llu activity records were dropped: launch counts and times are "
       "incomplete."},
      {"unmatched_samples", mprof_join_unmatched_samples(join),
       "%llu PC sample belongs to a function with no launch in the trace "
       "(a kernel launched by a kernel, which CUPTI does not record, or "
       "before the capture began); it is shown as a kernel without "
       "launches.",
       "%llu PC samples belong to functions with no launch in the trace "
       "(kernels launched by kernels, which CUPTI does not record, or "
       "before the capture began); they are shown as kernels without "
       "launches."},
  };
  for (size_t i = 0; i < sizeof lost / sizeof lost[0]; i++)
    if (lost[i].count)
      add_note(d, lost[i].key,
               mprof__arena_printf(
                   a, lost[i].count == 1 ? lost[i].one : lost[i].many,
                   (unsigned long long)lost[i].count));
}

static void diagnose_kernel(mprof_diagnosis *d, size_t k,
                            const mprof_diagnose_options *opts,
                            int trace_sampled) {
  const mprof_join *join = d->join;
  mprof_kernel_diagnosis *o = &d->kernels[k];
  kernel_work w;
  memset(&w, 0, sizeof w);
  w.d = d;
  w.join = join;
  w.opts = opts;
  w.out = o;
  o->kernel = k;
  o->stats = mprof_join_kernel(join, k);
  w.dims = (mprof_dimension *)mprof__arena_alloc(&d->arena, MPROF_DIM_COUNT_ *
                                                                sizeof *w.dims);
  if (!w.dims)
    return;
  for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++) {
    w.dims[dim].id = dim;
    w.dims[dim].detail = "";
    w.dims[dim].metrics = (const mprof_metric *)mprof__arena_alloc(
        &d->arena, MAX_METRICS * sizeof(mprof_metric));
    if (!w.dims[dim].metrics)
      return;
  }
  o->dimensions = w.dims;
  o->dimension_count = MPROF_DIM_COUNT_;
  size_t device_count;
  const mprof_device_record *devices =
      mprof_trace_devices(mprof_join_trace(join), &device_count);
  const mprof_device_record *device =
      o->stats->device < device_count ? &devices[o->stats->device] : NULL;
  make_stalls(&w);
  make_hot(&w);
  judge_stalls(&w);
  judge_occupancy(&w, device);
  judge_launch(&w);
  mprof__diagnose_judge_spans(&w, d->balance ? &d->balance[k] : NULL,
                              d->trace_spans);
  mprof__diagnose_classify(&w);
  mprof__diagnose_estimate_gains(&w);
  mprof__diagnose_make_verdict(&w);
  make_kernel_notes(&w, trace_sampled);
}

int mprof_diagnose(mprof_diagnosis **out, const mprof_join *join,
                   const mprof_diagnose_options *opts) {
  mprof_diagnose_options defaults = MPROF_DIAGNOSE_OPTIONS_INIT;
  if (!out || !join)
    return mprof__error_set(MPROF_EINVAL, "mprof_diagnose: NULL argument");
  *out = NULL;
  opts = mprof__options_or_defaults(opts, &defaults, 1,
                                    MPROF_DIAGNOSE_OPTIONS_VERSION, "diagnose");
  if (!opts)
    return MPROF_EVERSION;
  mprof_diagnosis *d = (mprof_diagnosis *)calloc(1, sizeof *d);
  if (!d)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  d->join = join;
  d->kernel_count = mprof_join_kernel_count(join);
  d->kernels = (mprof_kernel_diagnosis *)mprof__arena_alloc(
      &d->arena, (d->kernel_count ? d->kernel_count : 1) * sizeof *d->kernels);
  int trace_sampled = mprof_join_sample_total(join) > 0;
  if (mprof__diagnose_make_balance(d)) {
    mprof_diagnosis_free(d);
    return MPROF_ENOMEM;
  }
  int rc = mprof_throughput_build(&d->throughput, join);
  if (rc) {
    mprof_diagnosis_free(d);
    return rc;
  }
  for (size_t k = 0; d->kernels && k < d->kernel_count; k++)
    diagnose_kernel(d, k, opts, trace_sampled);
  make_trace_notes(d, opts);
  if (d->arena.failed) {
    mprof_diagnosis_free(d);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory while diagnosing",
                            mprof_trace_path(mprof_join_trace(join)));
  }
  *out = d;
  return 0;
}

void mprof_diagnosis_free(mprof_diagnosis *diagnosis) {
  if (!diagnosis)
    return;
  mprof__arena_free(&diagnosis->arena);
  free(diagnosis->balance);
  mprof_throughput_free(diagnosis->throughput);
  free(diagnosis);
}

const mprof_join *mprof_diagnosis_join(const mprof_diagnosis *diagnosis) {
  return diagnosis ? diagnosis->join : NULL;
}

size_t mprof_diagnosis_kernel_count(const mprof_diagnosis *diagnosis) {
  return diagnosis ? diagnosis->kernel_count : 0;
}

const mprof_kernel_diagnosis *
mprof_diagnosis_kernel(const mprof_diagnosis *diagnosis, size_t index) {
  return diagnosis && index < diagnosis->kernel_count
             ? &diagnosis->kernels[index]
             : NULL;
}

int mprof_trace_is_mkprof(const mprof_trace *trace) {
  const char *mode = trace ? mprof_trace_meta(trace, "capture.mode") : NULL;
  return mode && strcmp(mode, "mkprof") == 0;
}

int mprof_diagnosis_dimension_reported(const mprof_diagnosis *diagnosis,
                                       const mprof_dimension *dimension) {
  if (!diagnosis || !dimension)
    return 0;
  if (dimension->id >= MPROF_DIM_FIRST_SPAN && !diagnosis->trace_spans)
    return 0;
  return dimension->state != MPROF_STATE_UNKNOWN ||
         !mprof_trace_is_mkprof(mprof_join_trace(diagnosis->join));
}

size_t mprof_diagnosis_note_count(const mprof_diagnosis *diagnosis) {
  return diagnosis ? diagnosis->note_count : 0;
}

const mprof_note *mprof_diagnosis_note(const mprof_diagnosis *diagnosis,
                                       size_t index) {
  return diagnosis && index < diagnosis->note_count ? &diagnosis->notes[index]
                                                    : NULL;
}

const mprof_throughput *
mprof_diagnosis_throughput(const mprof_diagnosis *diagnosis) {
  return diagnosis ? diagnosis->throughput : NULL;
}

const mprof_dimension *
mprof_kernel_diagnosis_dimension(const mprof_kernel_diagnosis *kernel,
                                 size_t index) {
  return kernel && index < kernel->dimension_count ? &kernel->dimensions[index]
                                                   : NULL;
}

const mprof_reason_share *
mprof_kernel_diagnosis_stall(const mprof_kernel_diagnosis *kernel,
                             size_t index) {
  return kernel && index < kernel->stall_count ? &kernel->stalls[index] : NULL;
}

const mprof_hot_instruction *
mprof_kernel_diagnosis_hot(const mprof_kernel_diagnosis *kernel, size_t index) {
  return kernel && index < kernel->hot_count ? &kernel->hot[index] : NULL;
}

const mprof_occupancy *
mprof_kernel_diagnosis_shape(const mprof_kernel_diagnosis *kernel,
                             size_t index) {
  return kernel && index < kernel->shape_count ? &kernel->shapes[index] : NULL;
}

const mprof_metric *mprof_dimension_metric(const mprof_dimension *dimension,
                                           size_t index) {
  return dimension && index < dimension->metric_count
             ? &dimension->metrics[index]
             : NULL;
}

const mprof_reason_share *
mprof_hot_instruction_reason(const mprof_hot_instruction *hot, size_t index) {
  return hot && index < hot->reason_count ? &hot->reasons[index] : NULL;
}
