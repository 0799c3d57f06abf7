/*
 * mprof — per-kernel speed of light from PM samples.
 *
 * PM sampling (the PM_METRICS and PM_SAMPLES sections) measures hardware
 * counters of a whole GPU over fixed windows. Joined to the launch
 * intervals, they give each kernel its achieved DRAM and L2 throughput and
 * the utilisation of its SMs and pipes as a share of the GPU's peak: the
 * mean over the windows that lie wholly inside one of its launches and
 * those at their edges that nothing else shares (counted for the time it
 * ran in them). A kernel whose launches are all shorter than a window has
 * no window inside one: it is "too short to measure" and its values are
 * NaN.
 * docs/DIAGNOSIS.md has the arithmetic.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_THROUGHPUT_H
#define MPROF_THROUGHPUT_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "join.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The counters mprof reads from PM samples. Values are pinned. */
typedef enum mprof_counter_id {
  MPROF_COUNTER_DRAM = 0,       /**< % of peak DRAM throughput */
  MPROF_COUNTER_DRAM_BYTES = 1, /**< DRAM bytes per second */
  MPROF_COUNTER_L2 = 2, /**< % of peak L2 sector throughput (lts__t_sectors;
                             not ncu's "L2 Cache Throughput", which is
                             MPROF_COUNTER_L2_THROUGHPUT) */
  MPROF_COUNTER_L2_BYTES = 3,     /**< L2 bytes per second */
  MPROF_COUNTER_SM_ACTIVE = 4,    /**< % of SM cycles with a warp in flight */
  MPROF_COUNTER_WARPS_ACTIVE = 5, /**< % of warp slots occupied */
  MPROF_COUNTER_ISSUE = 6,        /**< % of peak instruction issue */
  MPROF_COUNTER_TENSOR = 7,       /**< % of cycles the tensor pipe is busy */
  MPROF_COUNTER_FMA = 8,          /**< % of peak FMA-pipe instructions */
  MPROF_COUNTER_ALU = 9,          /**< % of peak ALU-pipe instructions */
  MPROF_COUNTER_CLOCK = 10,       /**< GPC clock, cycles per second */
  /** % of peak of the busiest L2 unit (lts__throughput): ncu's "L2 Cache
   * Throughput" */
  MPROF_COUNTER_L2_THROUGHPUT = 11,
  /** % of peak L1TEX throughput, shared memory included (l1tex__throughput,
   * ncu's "L1/TEX Cache Throughput"; else its shared-memory data pipe) */
  MPROF_COUNTER_L1TEX = 12,
  /** % of peak of the busiest SM unit or pipe (sm__throughput): ncu's
   * "Compute (SM) Throughput", less the ADU and CBU pipes when sampled by
   * its TriageCompute name, as by default */
  MPROF_COUNTER_SM_THROUGHPUT = 13,
  MPROF_COUNTER_COUNT_ = 14
} mprof_counter_id;

/** "dram", "dram_bytes_per_second", ...: stable keys; "" out of range. */
MPROF_API const char *mprof_counter_key(uint32_t counter);
/** "DRAM throughput", ...: titles for people; "" out of range. */
MPROF_API const char *mprof_counter_title(uint32_t counter);
/** "percent", "bytes_per_second" or "hertz"; "" out of range. */
MPROF_API const char *mprof_counter_unit(uint32_t counter);
/** The bytes-per-second counter of a throughput counter (DRAM, L2), or
 * MPROF_INDEX_NONE for one without. */
MPROF_API uint32_t mprof_counter_bandwidth(uint32_t counter);

/**
 * The counter a CUPTI metric name measures (a `GROUP.TriageCompute.`
 * prefix is ignored, but lts__throughput is ncu's L2 Cache Throughput only
 * by its plain name; a `.per_cycle_elapsed` ratio reads as the percentage
 * it is), or MPROF_INDEX_NONE for a metric mprof does not read.
 */
MPROF_API uint32_t mprof_counter_from_metric(const char *metric);

/** What PM samples say about one kernel. */
typedef struct mprof_kernel_throughput {
  /** Windows wholly inside one of its launches; 0 = not measured. */
  uint64_t samples;
  /** Windows that overlap its launches without lying inside one. */
  uint64_t partial;
  uint64_t interval_ns; /**< the sampling interval of its device; 0 none */
  uint64_t covered_ns;  /**< summed length of the windows counted */
  /** Share of the counted windows' time in which a launch of another
   * kernel ran on the device too: the counters are then shared. */
  double shared;
  /** Mean over the counted windows, by mprof_counter_id; NaN unknown.
   * MPROF_COUNTER_COUNT_ entries of the library that made it, at least as
   * many as in the headers you built with (counters may be added at a minor
   * version: a pointer, so that fields after it never move). Owned by the
   * throughput. */
  const double *value;
  MPROF_GROWABLE_TAIL
} mprof_kernel_throughput;

typedef struct mprof_throughput mprof_throughput;

/**
 * Join the PM samples of the join's trace to its kernels. Always succeeds
 * on a trace without PM samples (every kernel unmeasured). @p join is
 * borrowed and must outlive the result.
 */
MPROF_API int mprof_throughput_build(mprof_throughput **out,
                                     const mprof_join *join);

/** NULL is a no-op. */
MPROF_API void mprof_throughput_free(mprof_throughput *throughput);

/** 1 when the trace holds PM samples of at least one device. */
MPROF_API int mprof_throughput_available(const mprof_throughput *throughput);

/** The sampling interval (ns) of the first sampled device; 0 none. */
MPROF_API uint64_t
mprof_throughput_interval(const mprof_throughput *throughput);

/** Kernel @p kernel (a join index), or NULL when out of range. */
MPROF_API const mprof_kernel_throughput *
mprof_throughput_kernel(const mprof_throughput *throughput, size_t kernel);

/**
 * The PM_SAMPLES column (an index into mprof_pm_sample_record.value) that
 * holds counter @p counter (mprof_counter_id) for device @p device (an
 * index into DEVICES), or -1 when that device was not sampled for it:
 * what a counter track over time reads.
 */
MPROF_API int mprof_throughput_column(const mprof_throughput *throughput,
                                      uint32_t device, uint32_t counter);

/**
 * Why the trace has no counters, in one line for people ("recorded with
 * --pm off", "PM sampling failed: ..."), or NULL when it has them.
 */
MPROF_API const char *
mprof_throughput_missing(const mprof_throughput *throughput);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_THROUGHPUT_H */
