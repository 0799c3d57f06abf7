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

#define MPROF_SYNTH_OPTIONS_VERSION 1

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
} mprof_synth_options;

#define MPROF_SYNTH_OPTIONS_INIT                                               \
  { MPROF_SYNTH_OPTIONS_VERSION, 1, 10000, 8, 2, 1, 24, MPROF_SYNTH_MIXED }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_synth_options_init(mprof_synth_options *opts,
                                       unsigned version);

/**
 * Write a synthetic trace to @p path (the trace only; the sidecar is written
 * by mprof_synth_write_sidecar() once that module exists). @p opts may be
 * NULL for the defaults.
 */
MPROF_API int mprof_synth_write(const char *path,
                                const mprof_synth_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SYNTH_H */
