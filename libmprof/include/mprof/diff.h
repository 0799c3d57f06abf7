/*
 * mprof — comparing two traces kernel by kernel.
 *
 * Kernels are joined by mangled name and device ordinal; when each trace
 * ran its kernels on a single device, by name alone (so a run on GPU 1
 * compares with one on GPU 0). For each kernel: the change in mean time
 * per launch and in total GPU time; whether the change of the mean lies
 * outside the launch-to-launch noise (Welch's t-test on the two means, and
 * a minimum relative change for run-to-run drift that no single trace
 * shows); kernels present on one side only; and, when both sides have PC
 * samples, how the stall profile, the dimensions and the hot instructions
 * moved.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_DIFF_H
#define MPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "diagnose.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_diff mprof_diff;

/** How a kernel changed. Values are pinned. */
typedef enum mprof_change {
  MPROF_CHANGE_NOISE = 0,         /**< no change outside the noise */
  MPROF_CHANGE_SLOWER = 1,        /**< mean per launch rose, outside noise */
  MPROF_CHANGE_FASTER = 2,        /**< mean per launch fell, outside noise */
  MPROF_CHANGE_ONLY_BASE = 3,     /**< launched in the base trace only */
  MPROF_CHANGE_ONLY_CANDIDATE = 4 /**< launched in the candidate only */
} mprof_change;

/** "noise", "slower", "faster", "only_base", "only_candidate"; "" else. */
MPROF_API const char *mprof_change_name(uint32_t change);

/** A stall reason's share on both sides. */
typedef struct mprof_stall_change {
  const char *reason; /**< short name */
  uint32_t dimension; /**< mprof_dimension_id or MPROF_DIM_NONE */
  double base_share;  /**< of the base kernel's plain-reason samples */
  double candidate_share;
  MPROF_GROWABLE_TAIL
} mprof_stall_change;

/** A dimension judged on both sides. */
typedef struct mprof_dimension_change {
  uint32_t dimension;                   /**< mprof_dimension_id */
  uint32_t base_state, candidate_state; /**< mprof_state */
  double base_cost, candidate_cost;
  MPROF_GROWABLE_TAIL
} mprof_dimension_change;

/** How instructions were matched across the two sides. */
typedef enum mprof_hot_match {
  MPROF_HOT_BY_OFFSET = 0, /**< same code (cubin CRC): by offset */
  MPROF_HOT_BY_LINE = 1,   /**< code changed: by source file and line */
  MPROF_HOT_UNMATCHED = 2  /**< code changed and no lines: side by side */
} mprof_hot_match;

/** A hot instruction on either side, with its share on both. */
typedef struct mprof_hot_change {
  uint32_t offset;  /**< in the candidate when matched or candidate-only */
  const char *sass; /**< "" unknown */
  const char *file; /**< "" unknown */
  uint32_t line;
  double base_share;      /**< negative when absent from the base */
  double candidate_share; /**< negative when absent from the candidate */
  MPROF_GROWABLE_TAIL
} mprof_hot_change;

/** One kernel of the diff. Everything is owned by the diff. */
typedef struct mprof_kernel_change {
  const char *name; /**< display name */
  const char *mangled;
  uint32_t device_id;  /**< CUDA ordinal, or MPROF_INDEX_NONE */
  uint32_t change;     /**< mprof_change */
  const char *summary; /**< one sentence: the change, its noise, what moved */
  /** The two sides; NULL for the side a kernel is missing from. Owned by
   * the diagnoses given to mprof_diff_run(). */
  const mprof_kernel_diagnosis *base, *candidate;
  double base_mean_ns, candidate_mean_ns;
  double mean_change;     /**< (candidate - base) / base; 0 one-sided */
  int64_t total_delta_ns; /**< candidate total - base total */
  double total_change;    /**< relative; 0 when the base total is 0 */
  /** The relative change of the mean that the noise could produce: the
   * larger of the t-test's critical value times the standard error of the
   * difference, and the minimum change. Negative when unknown (fewer than
   * two launches on a side). */
  double noise;
  double t;            /**< Welch's t; 0 when unknown */
  double dof;          /**< Welch-Satterthwaite degrees of freedom */
  double p_value;      /**< two-sided; 1 when unknown */
  int significant;     /**< outside the noise */
  int stalls_compared; /**< both sides have enough PC samples */
  size_t stall_change_count;
  const mprof_stall_change *stall_changes; /**< largest |delta| first */
  size_t dimension_change_count;
  const mprof_dimension_change *dimension_changes; /**< by id */
  uint32_t hot_match;                              /**< mprof_hot_match */
  size_t hot_change_count;
  const mprof_hot_change *hot_changes; /**< by largest share first */
  MPROF_GROWABLE_TAIL
} mprof_kernel_change;

#define MPROF_DIFF_OPTIONS_VERSION 1

typedef struct mprof_diff_options {
  unsigned version;  /**< MPROF_DIFF_OPTIONS_VERSION */
  double alpha;      /**< two-sided significance level of the t-test */
  double min_change; /**< relative change below which all is noise */
  size_t hot_count;  /**< hot instructions compared per side */
  MPROF_GROWABLE_TAIL
} mprof_diff_options;

#define MPROF_DIFF_OPTIONS_INIT                                                \
  { MPROF_DIFF_OPTIONS_VERSION, 0.001, 0.01, 5 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_diff_options_init(mprof_diff_options *opts,
                                      unsigned version);

/**
 * Compare @p base with @p candidate. Both are borrowed and must outlive
 * the diff; @p opts may be NULL. On success *out is owned by the caller;
 * free it with mprof_diff_free().
 */
MPROF_API int mprof_diff_run(mprof_diff **out, const mprof_diagnosis *base,
                             const mprof_diagnosis *candidate,
                             const mprof_diff_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_diff_free(mprof_diff *diff);

/** Number of kernels, ordered by |total_delta_ns|, largest first. */
MPROF_API size_t mprof_diff_kernel_count(const mprof_diff *diff);

/** Kernel @p index, or NULL. Owned by @p diff. */
MPROF_API const mprof_kernel_change *mprof_diff_kernel(const mprof_diff *diff,
                                                       size_t index);

/**
 * Element @p index of a kernel change's arrays (NULL out of range): stall
 * changes, dimension changes (by mprof_dimension_id) and hot instructions.
 * Use these, not the array fields, in code that may run against a newer
 * libmprof: the element structs may grow at a minor version (fields are
 * only appended), which changes the arrays' stride but not these calls.
 */
MPROF_API const mprof_stall_change *
mprof_kernel_change_stall(const mprof_kernel_change *kernel, size_t index);
MPROF_API const mprof_dimension_change *
mprof_kernel_change_dimension(const mprof_kernel_change *kernel, size_t index);
MPROF_API const mprof_hot_change *
mprof_kernel_change_hot(const mprof_kernel_change *kernel, size_t index);

/** Summed kernel time of each side, in ns. */
MPROF_API void mprof_diff_totals(const mprof_diff *diff, uint64_t *base_ns,
                                 uint64_t *candidate_ns);

/**
 * The CI gate: the number of kernels whose mean time per launch rose by
 * more than @p percent percent, outside the noise (MPROF_CHANGE_SLOWER).
 */
MPROF_API size_t mprof_diff_gate(const mprof_diff *diff, double percent);

/**
 * Write @p diff to @p out in the format of @p opts (opts->kernel filters
 * kernels as for summaries; max_hot limits the hot instructions shown).
 * @p fail_above_percent, when not negative, is reported with the gate's
 * outcome. Returns MPROF_ENOTFOUND when the filter matches nothing,
 * MPROF_EIO when writing fails.
 */
MPROF_API int mprof_diff_write(FILE *out, const mprof_diff *diff,
                               const mprof_report_options *opts,
                               double fail_above_percent);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_DIFF_H */
