/*
 * mprof — measured throughput and estimated gain (see diagnose.h and
 * docs/DIAGNOSIS.md, "Estimated gain" and "Speed of light").
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_internal.h"
#include "internal.h"
#include "mprof/sidecar.h"

/* The resources a kernel can saturate, from PM counters. */
enum roof_kind {
  ROOF_NONE = 0,
  ROOF_DRAM,
  ROOF_DRAM_SECTORS, /* DRAM's random-access roof: scattered sectors */
  ROOF_L2,
  ROOF_L1TEX, /* L1/shared memory */
  ROOF_ISSUE,
  ROOF_FMA,
  ROOF_TENSOR
};

#define ROOF_BOUND 0.60 /* utilisation from which a resource is the limit */
/* Latency stalls from which more warps are the fix. */
#define LATENCY_BOUND 0.50
/* DRAM's random-access roof: 4-byte loads each in its own 32-byte sector
 * (a pointer chase over the whole H200) keep DRAM at 54.7% of its peak,
 * and four times the loads in flight change nothing (issue 33's
 * measurement). A latency-bound kernel whose DRAM throughput is near it
 * (RANDOM_NEAR) or whose counted accesses use under half of their sectors
 * (SCATTERED) is measured against it. */
#define DRAM_RANDOM_ROOF 0.55
#define DRAM_RANDOM_NEAR 0.45
#define DRAM_RANDOM_ABOVE 0.65 /* beyond it, whole sectors are used */
#define SCATTERED 0.50

int mprof_kernel_name_is_library(const char *name) {
  static const char *const marks[] = {
      "cublas",    "cudnn",        "cutlass",     "xmma_",      "nvjet",
      "sm80_",     "sm90_",        "sm100_",      "ampere_",    "hopper_",
      "volta_",    "turing_",      "triton_",     "at::native", "at6native",
      "flash_fwd", "flash_bwd",    "fmha",        "cask_",      "gemv2",
      "gemmk1",    "splitKreduce", "cuda::std::", "cub::",      "_ZN3cub",
      "void at::", "c10::",        "pytorch"};
  if (!name)
    return 0;
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
    if (strstr(name, marks[i]))
      return 1;
  return 0;
}

/* HGMMA/WGMMA (Hopper warpgroup MMA), HMMA (warp MMA) or UTMA (tensor
 * memory access) in the kernel's SASS. */
static int uses_tensor_cores(const mprof_kernel_stats *ks) {
  const mprof_sidecar_function *f = ks->function;
  if (!f)
    return 0;
  for (size_t i = 0; i < f->instruction_count; i++) {
    const char *op = f->instructions[i].opcode;
    if (op && (strncmp(op, "HGMMA", 5) == 0 || strncmp(op, "WGMMA", 5) == 0 ||
               strncmp(op, "HMMA", 4) == 0 || strncmp(op, "UTMA", 4) == 0 ||
               strncmp(op, "IMMA", 4) == 0 || strncmp(op, "QGMMA", 5) == 0))
      return 1;
  }
  return 0;
}

static double counter(const mprof_kernel_throughput *t, uint32_t c) {
  return t && t->samples ? t->value[c] : NAN;
}

/* Utilisation of a pipe while the SMs are active: over a kernel with a
 * tail or a small grid, the whole-GPU percentage understates how busy the
 * working SMs are. */
static double active_use(const mprof_kernel_throughput *t, uint32_t c) {
  double v = counter(t, c), sm = counter(t, MPROF_COUNTER_SM_ACTIVE);
  if (isnan(v))
    return NAN;
  if (!isnan(sm) && sm > 1.0)
    v = v / sm * 100.0;
  return v > 100.0 ? 1.0 : v / 100.0;
}

static double use_of(const mprof_kernel_throughput *t, uint32_t c) {
  double v = counter(t, c);
  return isnan(v) ? NAN : (v > 100.0 ? 1.0 : v / 100.0);
}

/* The share of the L2 counter's peak (lts__t_sectors) that the L2 can
 * sustain: an L2-resident float4 stream over every SM of the H200 reached
 * 57-59% of it, 9.0 TB/s (docs/validation/H200.md). L2 use is measured
 * against that, so a kernel at the L2's real limit is seen at its roof. */
#define L2_SUSTAINED 0.60

static double l2_use(const mprof_kernel_throughput *t) {
  double v = use_of(t, MPROF_COUNTER_L2);
  return isnan(v) ? NAN : (v >= L2_SUSTAINED ? 1.0 : v / L2_SUSTAINED);
}

static double max_known(double a, double b) {
  if (isnan(a))
    return b;
  if (isnan(b))
    return a;
  return a > b ? a : b;
}

/* Occupancy's gain: more warps hide latency, so the latency stalls shrink
 * by the ratio of warps the fix can reach: time ~ 1 / warps for the
 * latency-bound part (Little's law). The reachable occupancy is at most
 * 50% (the minor line) and at most what the grid fills once the limiter is
 * gone (a grid of 4 blocks per SM reaches 4 blocks per SM, however little
 * shared memory they take). Without samples, the warp ratio alone, as an
 * upper bound. */
static double occupancy_gain(kernel_work *w, double latency,
                             mprof_dimension *d) {
  const mprof_kernel_diagnosis *o = w->out;
  const mprof_occupancy *top = o->occupancy;
  double occupancy = o->weighted_occupancy;
  if (!top->known || !top->max_warps || !top->sm_count || occupancy < 0)
    return d->cost;
  uint64_t per_sm =
      (top->grid_blocks + top->sm_count - 1) / top->sm_count; /* the grid */
  if (top->limit_warps < per_sm)
    per_sm = top->limit_warps;
  if (top->limit_blocks < per_sm)
    per_sm = top->limit_blocks;
  double reachable =
      (double)per_sm * top->warps_per_block / (double)top->max_warps;
  if (reachable > OCCUPANCY_MINOR)
    reachable = OCCUPANCY_MINOR;
  if (reachable <= occupancy)
    return 0;
  double fewer = 1.0 - occupancy / reachable; /* of the latency-bound time */
  add_metric(d, "reachable", reachable, "fraction");
  if (!w->sampled) {
    d->gain_bound = MPROF_GAIN_AT_MOST;
    return fewer;
  }
  return latency * fewer;
}

/* Turn the dimensions' costs into estimated gains, as shares of the
 * kernel's time on its stream (docs/DIAGNOSIS.md, "Estimated gain"). */
void mprof__diagnose_estimate_gains(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  const mprof_kernel_throughput *t = o->throughput;
  mprof_dimension *dims = w->dims;
  /* Launch gaps are stream time; everything inside the kernel is scaled to
   * the busy part of it. */
  double idle = dims[MPROF_DIM_LAUNCH].state != MPROF_STATE_UNKNOWN
                    ? dims[MPROF_DIM_LAUNCH].cost
                    : 0.0;
  double busy = 1.0 - idle;
  for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++)
    w->raw_cost[dim] = dims[dim].cost;
  double latency = w->sampled
                       ? mprof__diagnose_reason_share(w, "long_scoreboard") +
                             mprof__diagnose_reason_share(w, "wait") +
                             mprof__diagnose_reason_share(w, "short_scoreboard")
                       : 0.0;
  /* Scattered accesses: counted (record blocks --memory) as using under
   * half of the sectors they move, or, without counts, presumed for a
   * kernel whose warps mostly wait on memory while DRAM is near its
   * random-access roof. Their DRAM floor is that roof, not the peak. */
  double dram = use_of(t, MPROF_COUNTER_DRAM);
  uint64_t counted = 0;
  double efficiency =
      mprof_join_memory_totals(w->join, o->kernel, &counted, NULL, NULL);
  w->scattered =
      counted ? efficiency < SCATTERED
              : w->sampled && !isnan(dram) &&
                    w->dim_share[MPROF_DIM_MEMORY_LATENCY] >= LATENCY_BOUND &&
                    dram >= DRAM_RANDOM_NEAR && dram < DRAM_RANDOM_ABOVE;
  w->sector_efficiency = counted ? efficiency : -1;
  double dram_floor =
      isnan(dram)
          ? NAN
          : (w->scattered
                 ? (dram >= DRAM_RANDOM_ROOF ? 1.0 : dram / DRAM_RANDOM_ROOF)
                 : dram);
  /* The floors no fix that moves the same bytes and executes the same
   * instructions goes below: bytes / bandwidth, instructions / issue rate
   * (while the SMs are active, for fixes inside the SMs; over the whole
   * GPU for those that fill more SMs). */
  double l1tex = active_use(t, MPROF_COUNTER_L1TEX);
  double mem_beyond_l1 = max_known(dram_floor, l2_use(t));
  double mem = max_known(mem_beyond_l1, l1tex);
  double issue_floor = active_use(t, MPROF_COUNTER_ISSUE);
  double issue_whole = use_of(t, MPROF_COUNTER_ISSUE);
  double math =
      max_known(max_known(issue_floor, active_use(t, MPROF_COUNTER_FMA)),
                max_known(active_use(t, MPROF_COUNTER_TENSOR),
                          active_use(t, MPROF_COUNTER_ALU)));
  /* Without counters, the PC samples' own issue rate is the compute
   * roof: the share of samples in which the scheduler issued. */
  if (isnan(math) && w->sampled && o->issue_active >= 0)
    math = o->issue_active;
  /* Which roof, if any, the kernel is at. */
  struct {
    int kind;
    double use;
  } roofs[] = {
      {ROOF_DRAM_SECTORS, w->scattered ? dram_floor : NAN},
      {ROOF_DRAM, dram},
      {ROOF_L2, l2_use(t)},
      {ROOF_L1TEX, l1tex},
      {ROOF_TENSOR, active_use(t, MPROF_COUNTER_TENSOR)},
      {ROOF_FMA, active_use(t, MPROF_COUNTER_FMA)},
      {ROOF_ISSUE, active_use(t, MPROF_COUNTER_ISSUE)},
  };
  w->roof = ROOF_NONE;
  w->roof_use = 0;
  w->roof_sampled = 0;
  for (size_t i = 0; i < sizeof roofs / sizeof roofs[0]; i++)
    if (!isnan(roofs[i].use) && roofs[i].use >= ROOF_BOUND &&
        roofs[i].use > w->roof_use) {
      w->roof = roofs[i].kind;
      w->roof_use = roofs[i].use;
    }
  /* Without counters, warps that issue in most PC samples stand in for the
   * issue roof, as they stand in for its gain cap: such a kernel has
   * little to gain from stalls and is not "minor" but at its instruction
   * throughput. */
  if (w->roof == ROOF_NONE && isnan(counter(t, MPROF_COUNTER_ISSUE)) &&
      w->sampled && !o->tensor_core && o->issue_active >= ROOF_BOUND) {
    w->roof = ROOF_ISSUE;
    w->roof_use = o->issue_active;
    w->roof_sampled = 1;
  }
  /* A tensor-core kernel is judged by its tensor pipe: its low occupancy
   * and its warpgroup and barrier waits are the warp-specialised design,
   * not a loss. */
  if (o->tensor_core) {
    dims[MPROF_DIM_OCCUPANCY].cost = 0;
    if (dims[MPROF_DIM_OCCUPANCY].state > MPROF_STATE_OK)
      dims[MPROF_DIM_OCCUPANCY].state = MPROF_STATE_OK;
    dims[MPROF_DIM_SYNC].cost = 0;
    if (dims[MPROF_DIM_SYNC].state > MPROF_STATE_OK)
      dims[MPROF_DIM_SYNC].state = MPROF_STATE_OK;
  }
  if (o->tensor_core && !isnan(counter(t, MPROF_COUNTER_TENSOR))) {
    double tensor = active_use(t, MPROF_COUNTER_TENSOR);
    mprof_dimension *c = &dims[MPROF_DIM_COMPUTE];
    c->cost = 1.0 - tensor;
    c->state = tensor >= ROOF_BOUND ? MPROF_STATE_MINOR : MPROF_STATE_ISSUE;
    add_metric(c, "tensor_active", tensor, "fraction");
  }
  for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++) {
    mprof_dimension *d = &dims[dim];
    if (d->state == MPROF_STATE_UNKNOWN)
      continue;
    if (dim == MPROF_DIM_LAUNCH) {
      /* Fusing launches or a graph removes the gaps and the launches' own
       * fixed cost as well: at least the idle share. Host work that
       * starves the stream is only the gaps. */
      if ((double)o->stats->gap_median_ns < STARVED_GAP_NS &&
          d->state >= MPROF_STATE_MINOR)
        d->gain_bound = MPROF_GAIN_AT_LEAST;
      continue;
    }
    double gain = d->cost;
    switch (dim) {
    case MPROF_DIM_MEMORY_LATENCY:
    case MPROF_DIM_MEMORY_THROUGHPUT:
      /* Waiting on memory can at best shrink to the bandwidth floor (for
       * scattered accesses, DRAM's random-access roof: latency hiding
       * cannot move a kernel there). Without counters the stalls bound
       * the gain from above only. */
      if (!isnan(mem) && gain > 1.0 - mem)
        gain = 1.0 - mem;
      if (isnan(mem))
        d->gain_bound = MPROF_GAIN_AT_MOST;
      break;
    case MPROF_DIM_COMPUTE:
      if (!isnan(math) && !o->tensor_core && gain > 1.0 - math)
        gain = 1.0 - math;
      break;
    case MPROF_DIM_OCCUPANCY:
      /* a tensor-core kernel's few warps are its design (above) */
      gain = o->tensor_core ? 0 : occupancy_gain(w, latency, d);
      /* Little's law hides latency in proportion to the warps; the new
       * warps also share the SM's pipes and queues, so it is an upper
       * bound (smem_limited on the H100: 72.6% estimated, 57.6% gained
       * with 4x the warps). */
      if (gain > 0 && d->gain_bound == MPROF_GAIN_ESTIMATE)
        d->gain_bound = MPROF_GAIN_AT_MOST;
      if (!isnan(math) && gain > 1.0 - math)
        gain = 1.0 - math;
      if (!isnan(mem) && gain > 1.0 - mem)
        gain = 1.0 - mem;
      /* At low occupancy the exposed latency follows from too few warps:
       * the warps the fix brings are how it gets hidden, and what more
       * loads in flight per warp (ILP) would add the trace cannot size.
       * The latency's gain is then at least this, and occupancy leads. */
      if (d->state == MPROF_STATE_ISSUE && gain > 0 &&
          dims[MPROF_DIM_MEMORY_LATENCY].state >= MPROF_STATE_MINOR &&
          !w->scattered) {
        mprof_dimension *lat = &dims[MPROF_DIM_MEMORY_LATENCY];
        if (lat->cost > gain * busy) {
          lat->cost = gain * busy;
          lat->gain_bound = MPROF_GAIN_AT_LEAST;
        }
      }
      break;
    case MPROF_DIM_SHARED_MIO:
      /* Bank conflicts replay: the replays take issue slots and L1
       * wavefronts that the fix removes, so neither floor holds (a
       * conflicted kernel at 15% issue gained 96.8%); DRAM and L2 do.
       * The stalls are an upper bound: the accesses' own latency stays
       * (the padded twin of a 32-way conflict on the H100: 93.9% of
       * samples, 77.8% gained), and the trace does not say how many ways
       * the conflicts are. */
      if (!isnan(mem_beyond_l1) && gain > 1.0 - mem_beyond_l1)
        gain = 1.0 - mem_beyond_l1;
      if (gain > 0)
        d->gain_bound = MPROF_GAIN_AT_MOST;
      break;
    case MPROF_DIM_SYNC:
    case MPROF_DIM_FETCH_BRANCH:
    case MPROF_DIM_SCHEDULING: {
      /* Stalls the fix removes: the kernel still issues its instructions
       * and moves its bytes. A barrier's or the i-cache's stall share is
       * what warps lose, not what the kernel loses: without an issue
       * counter that is only an upper bound (75.9% estimated, 47.5%
       * measured for a barrier kernel; 64.1% and 25.1% for the i-cache,
       * whose issue rate was 69% while active). */
      int held_by_issue = 0;
      if (!isnan(issue_floor) && gain >= 1.0 - issue_floor) {
        gain = 1.0 - issue_floor;
        held_by_issue = 1;
      }
      if (!isnan(mem) && gain > 1.0 - mem) {
        gain = 1.0 - mem;
        held_by_issue = 0;
      }
      if (isnan(issue_floor))
        d->gain_bound = MPROF_GAIN_AT_MOST;
      /* Code the i-cache holds also issues fewer instructions (no
       * refetch, a loop's branch in place of straight-line code): the
       * issue floor is a lower bound there (icache_thrash on the H100:
       * 31.2% estimated, 57.0% gained; an earlier twin on the H200 gained
       * 25.1%, within the 10 points below it). */
      else if (dim == MPROF_DIM_FETCH_BRANCH && gain > 0 && held_by_issue)
        d->gain_bound = MPROF_GAIN_AT_LEAST;
      /* A barrier's waits are an upper bound even held to the issue
       * floor: fewer barriers leave the work between them, and the warps
       * that did it wait on it (the twin synchronising 16 times less
       * often on the H100: 46.8% estimated, 31.0% gained; one block per
       * SM: 58.6% and 20.0%). */
      else if (dim == MPROF_DIM_SYNC && gain > 0)
        d->gain_bound = MPROF_GAIN_AT_MOST;
      break;
    }
    case MPROF_DIM_TAIL:
    case MPROF_DIM_SM_BALANCE:
    case MPROF_DIM_SM_TAIL: {
      /* Filling idle SMs: the floors over the whole GPU. A grid under one
       * wave that gives every SM a block leaves no SM idle but block slots
       * empty: more blocks there can only fill the SMs' idle issue slots,
       * the floor while the SMs are active (icache_thrash: 0.5 waves, its
       * SMs issuing 69% of the time). */
      const mprof_occupancy *occ = o->occupancy;
      double floor = issue_whole;
      /* There the new blocks' warps also share the SMs' schedulers and
       * pipes with the warps already running: an upper bound
       * (barrier_and_grid on the H100: 75.0% estimated, 64.0% gained
       * with four blocks per SM where one ran). */
      if (dim == MPROF_DIM_TAIL && occ->known && occ->waves < 1.0 &&
          occ->grid_blocks >= occ->sm_count) {
        floor = issue_floor;
        if (gain > 0)
          d->gain_bound = MPROF_GAIN_AT_MOST;
      }
      if (!isnan(floor) && gain > 1.0 - floor)
        gain = 1.0 - floor;
      if (!isnan(mem) && gain > 1.0 - mem)
        gain = 1.0 - mem;
      break;
    }
    default: break;
    }
    if (gain < 0)
      gain = 0;
    d->cost = gain * busy;
  }
  mprof__diagnose_gain_readings(w, busy);
}

/* What the gains mean for people and the program: each dimension's gain
 * on its own scale (the kernel's time inside it, the stream's for idle
 * gaps) and the time its fix saves. */
void mprof__diagnose_gain_readings(kernel_work *w, double busy) {
  const mprof_kernel_stats *s = w->out->stats;
  double total = (double)s->total_ns;
  for (uint32_t dim = 0; dim < MPROF_DIM_COUNT_; dim++) {
    mprof_dimension *d = &w->dims[dim];
    if (d->state == MPROF_STATE_UNKNOWN) {
      d->gain = 0;
      d->saved_ns = 0;
      continue;
    }
    if (dim == MPROF_DIM_LAUNCH) {
      /* Stream time: the idle gaps a fix takes away, runs + gaps being
       * the kernel's time / busy. */
      d->gain = d->cost;
      d->saved_ns = busy > 0 ? total / busy * d->cost
                             : (double)s->gap_count * (double)s->gap_median_ns;
    } else {
      d->gain = busy > 0 ? d->cost / busy : 0;
      d->saved_ns = total * d->gain;
    }
    if (d->gain_bound == MPROF_GAIN_UNKNOWN)
      d->saved_ns = NAN;
  }
}

/* The dimension a saturated roof belongs to. */
uint32_t mprof__diagnose_roof_dimension(const kernel_work *w) {
  return w->roof == ROOF_DRAM || w->roof == ROOF_DRAM_SECTORS ||
                 w->roof == ROOF_L2
             ? MPROF_DIM_MEMORY_THROUGHPUT
         : w->roof == ROOF_L1TEX ? MPROF_DIM_SHARED_MIO
                                 : MPROF_DIM_COMPUTE;
}

const char *mprof__diagnose_roof_key(const kernel_work *w) {
  switch (w->roof) {
  case ROOF_DRAM: return "dram";
  case ROOF_DRAM_SECTORS: return "dram_sectors";
  case ROOF_L2: return "l2";
  case ROOF_L1TEX: return "l1tex";
  case ROOF_ISSUE: return "issue";
  case ROOF_FMA: return "fma";
  case ROOF_TENSOR: return "tensor";
  default: return NULL;
  }
}

const char *mprof__diagnose_roof_text(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  const mprof_kernel_throughput *t = o->throughput;
  mprof__arena *a = &w->d->arena;
  char p[32], g[32] = "";
  /* The counter's own percentage of peak, also for L2 (whose roof is
   * where the L2 saturates, L2_SUSTAINED of that peak). */
  pct(p, sizeof p,
      w->roof == ROOF_L2 ? use_of(t, MPROF_COUNTER_L2) : w->roof_use);
  const char *advice =
      o->library ? "the kernel is a library's: the gain is in calling it "
                   "less (fusing neighbours, batching, reusing results) or "
                   "with lower precision"
                 : NULL;
  switch (w->roof) {
  case ROOF_DRAM_SECTORS: {
    char e[96] = "";
    pct(p, sizeof p, use_of(t, MPROF_COUNTER_DRAM));
    if (w->sector_efficiency >= 0) {
      char q[32];
      pct(q, sizeof q, w->sector_efficiency);
      snprintf(e, sizeof e, "its accesses use %s of the sectors they move", q);
    }
    return mprof__arena_printf(
        a,
        "DRAM random-access bound: warps wait on memory while DRAM runs at "
        "%s of its peak (%llu PM sample%s), about the most that scattered "
        "32-byte sectors allow (55%%); %s, so more loads in flight, warps "
        "or prefetching cannot help%s. The gain is in locality "
        "(neighbouring data in the same sector or line, sorting or blocking "
        "the accesses) or wider accesses that use whole sectors%s.",
        p, (unsigned long long)t->samples, mprof__plural(t->samples),
        *e ? e
           : "if its loads are small and scattered, each moves a whole "
             "sector",
        *e ? ""
           : " (`mprof record blocks --memory` measures the sector "
             "efficiency that proves it)",
        advice ? "; as a library kernel, call it less or on better-laid-out "
                 "data"
               : "");
  }
  case ROOF_DRAM:
  case ROOF_L2: {
    int dram = w->roof == ROOF_DRAM;
    double bytes =
        counter(t, dram ? MPROF_COUNTER_DRAM_BYTES : MPROF_COUNTER_L2_BYTES);
    if (!isnan(bytes))
      snprintf(g, sizeof g, ", %.2f TB/s", bytes / 1e12);
    return mprof__arena_printf(
        a,
        "%s-bandwidth bound: measured %s throughput is %s of peak%s%s over "
        "%llu PM sample%s; the kernel runs at the %s roof, so %s.",
        dram ? "DRAM" : "L2", dram ? "DRAM" : "L2", p, g,
        dram ? "" : " (the L2 sustains about 60% of its peak)",
        (unsigned long long)t->samples, mprof__plural(t->samples),
        dram ? "memory" : "L2",
        advice ? advice
               : (dram ? "the gain is in moving fewer bytes (fusion, reuse "
                         "through shared memory or L2, narrower types)"
                       : "the gain is in fewer L2 accesses (reuse in "
                         "registers or shared memory, wider loads)"));
  }
  case ROOF_L1TEX:
    return mprof__arena_printf(
        a,
        "L1/shared-memory bound: the L1/shared-memory pipe runs at %s of its "
        "peak while the SMs are active (%llu PM sample%s); %s.",
        p, (unsigned long long)t->samples, mprof__plural(t->samples),
        advice ? advice
               : "the gain is in fewer shared-memory and L1 wavefronts (no "
                 "bank conflicts, wider accesses, data kept in registers)");
  case ROOF_TENSOR:
    return mprof__arena_printf(
        a,
        "Tensor-core bound: the tensor pipe is busy %s of the time the SMs "
        "are active (%llu PM sample%s); %s.",
        p, (unsigned long long)t->samples, mprof__plural(t->samples),
        advice ? advice
               : "the gain is in less arithmetic or a lower precision");
  case ROOF_FMA:
    return mprof__arena_printf(
        a,
        "FMA-pipe bound: the FMA pipe runs at %s of its peak while the SMs "
        "are active (%llu PM sample%s); %s.",
        p, (unsigned long long)t->samples, mprof__plural(t->samples),
        advice ? advice
               : "the gain is in less arithmetic, tensor cores or packed "
                 "half-precision math");
  case ROOF_ISSUE:
  default:
    if (w->roof_sampled)
      return mprof__arena_printf(
          a,
          "Issue bound: warps issue in %s of PC samples (no counters: the "
          "samples' own issue rate), so stalls leave little to gain; the "
          "kernel runs at its instruction throughput: %s.",
          p, advice ? advice : "execute fewer instructions");
    return mprof__arena_printf(
        a,
        "Issue bound: the schedulers issue at %s of their peak while the SMs "
        "are active (%llu PM sample%s); %s.",
        p, (unsigned long long)t->samples, mprof__plural(t->samples),
        advice ? advice : "execute fewer instructions");
  }
}

/* Tensor cores and library names: how the kernel is judged and advised. */
void mprof__diagnose_classify(kernel_work *w) {
  mprof_kernel_diagnosis *o = w->out;
  o->throughput = mprof_throughput_kernel(w->d->throughput, o->kernel);
  o->tensor_core = (uint32_t)uses_tensor_cores(o->stats);
  o->library = (uint32_t)(mprof_kernel_name_is_library(o->stats->name) ||
                          mprof_kernel_name_is_library(o->stats->mangled));
}
