/*
 * mprof — deterministic synthetic traces for tests and benchmarks.
 *
 * The generator writes N launches over M kernels on S streams and D devices,
 * with PC samples drawn from per-kernel stall profiles. The same options and
 * seed always give the same bytes.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SYNTH_H
#define MPROF_SYNTH_H

#include <stdint.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 appended the slowdown and timing fields, version 3 the
 * activity spans, version 4 the slowed devices, version 5 META pairs,
 * version 6 training steps; version 1 to 5 callers (the struct up to
 * `scenario`, `timing_seed`, `span_nested`, `slow_devices`, `meta_count`)
 * are still accepted. */
#define MPROF_SYNTH_OPTIONS_VERSION 6

/** mprof_synth_options.step_flags: the steps have no NVTX ranges; only
 * their repeating launch pattern marks them. */
#define MPROF_SYNTH_STEPS_UNMARKED 0x1u

/** What the synthetic kernels suffer from. */
typedef enum mprof_synth_scenario {
  MPROF_SYNTH_MIXED = 0, /**< each kernel gets one of the profiles below */
  MPROF_SYNTH_MEMORY_LATENCY = 1,
  MPROF_SYNTH_COMPUTE = 2,
  MPROF_SYNTH_BARRIER = 3,
  MPROF_SYNTH_OCCUPANCY = 4,
  MPROF_SYNTH_TAIL = 5,
  MPROF_SYNTH_LAUNCH_GAPS = 6
} mprof_synth_scenario;

typedef struct mprof_synth_options {
  unsigned version;        /**< MPROF_SYNTH_OPTIONS_VERSION */
  uint64_t seed;           /**< same seed, same file */
  uint64_t launches;       /**< total launches */
  uint32_t kernels;        /**< distinct kernel functions */
  uint32_t streams;        /**< streams per device */
  uint32_t devices;        /**< GPUs */
  uint32_t pcs_per_kernel; /**< sampled PCs per kernel; 0 = no PC samples */
  uint32_t scenario;       /**< mprof_synth_scenario */
  /* Version 2: plant a regression, and vary timing alone between runs. */
  double slowdown;        /**< slowed kernels run this much longer (0.2 =
                               20% slower); 0 = none */
  uint64_t slow_kernels;  /**< bit k slows kernel k; 0 = kernel 0 */
  uint32_t slow_scenario; /**< stall profile of the slowed kernels
                               (mprof_synth_scenario); 0 = their own */
  uint64_t timing_seed;   /**< seeds launch-to-launch jitter, gaps and
                               sample noise apart from the kernels, like a
                               second run of the same program; 0 = seed */
  /* Version 3: activity spans inside the launches of kernel 0, shaped like
   * what producers/source records (REGIONS load, mma, store). */
  uint64_t spans;        /**< about this many SPANS records; 0 = none */
  uint32_t span_warps;   /**< warps per block that record spans; 0 = one
                              recorder per block (block spans) */
  uint32_t span_sms;     /**< SMs the blocks run on; 0 = all 132 */
  double span_imbalance; /**< the last SM's blocks run this much longer
                              than the first's, linearly in between (0.5 =
                              50%); 0 = balanced */
  uint32_t span_nested;  /**< 1: every phase span holds instruction spans
                              (LDG, HMMA, STG...), a two-level hierarchy */
  /* Version 4: a regression on some GPUs only. */
  uint64_t slow_devices; /**< bit d: the slowdown and slow_scenario apply
                              on device d only; 0 = on every device */
  /* Version 5: META of a process of a set (pid, host, rank, clock
   * anchors), written after the generator's own keys so they win. */
  const char *const *meta; /**< meta_count key, value pairs; borrowed */
  size_t meta_count;
  /* Version 6: one rank of a data-parallel training job. Every stream's
   * launches are split into this many steps that start together on every
   * stream, each launch issued by a cudaLaunchKernel call (API_CALLS) on
   * its stream's host thread, each step an NVTX range "step N" on thread
   * 1 that ends with an NCCL all-reduce kernel on each device's first
   * stream, then 30 us of GPU idle time with no CUDA call on the host (the
   * data loader). Every step launches the kernels in the same order. */
  uint32_t steps;      /**< 0 = none (the launches of version 5) */
  uint32_t slow_step;  /**< 1 + the only step the slowdown applies to;
                            0 = every step */
  uint32_t step_flags; /**< MPROF_SYNTH_STEPS_* */
  MPROF_GROWABLE_TAIL
} mprof_synth_options;

#define MPROF_SYNTH_OPTIONS_INIT                                               \
  {                                                                            \
    MPROF_SYNTH_OPTIONS_VERSION, 1, 10000, 8, 2, 1, 24, MPROF_SYNTH_MIXED,     \
        0.0, 0, 0, 0, 0, 0, 0, 0.0, 0, 0, NULL, 0, 0, 0, 0                     \
  }

/**
 * Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version;
 * with version 1 only the version 1 fields are written.
 */
MPROF_API int mprof_synth_options_init(mprof_synth_options *opts,
                                       unsigned version);

/**
 * Write a synthetic trace to @p path (the trace only; its sidecar comes
 * from mprof_synth_write_sidecar()). @p opts may be NULL for the defaults;
 * it is read, never kept.
 *
 * The planted bottleneck of each scenario is exact: occupancy kernels fit
 * one 256-thread block per SM (255 registers: 12.5% occupancy); tail
 * kernels launch 133 blocks of 1024 threads, one per SM, on 132 SMs (two
 * waves, the second with one block); launch-gap kernels run ~3 us with
 * 20-25 us idle gaps after them. All other kernels have at least 50%
 * theoretical occupancy and grids of whole waves, so nothing else stands
 * out.
 *
 * With opts->spans, the launches of kernel 0 carry about that many spans,
 * spread evenly over them: blocks run two at a time on each SM, and each
 * block (or each of its span_warps warps) records four load and mma
 * phases and a store, one after the other, inside its launch. SM s's
 * blocks take (1 + span_imbalance * s / (SMs - 1)) times as long as SM 0's,
 * so with an imbalance the last SM alone finishes at the launch's end.
 */
MPROF_API int mprof_synth_write(const char *path,
                                const mprof_synth_options *opts);

/**
 * Write the PC sidecar of the synthetic trace at @p trace_path to
 * @p sidecar_path (NULL: TRACE.pc.json): the trace's stall reason names
 * and PC samples, and for every sampled function made-up SASS (the opcode
 * at each sampled offset fits its dominant stall reason: LDG for
 * long_scoreboard, FFMA for math, BAR.SYNC for barrier, ...) with source
 * lines in "synth_kernels.cu", like `mprof record` writes for a program
 * built with -lineinfo.
 */
MPROF_API int mprof_synth_write_sidecar(const char *trace_path,
                                        const char *sidecar_path);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SYNTH_H */
