/*
 * mprof — the stall-reason table: every CUPTI PC-sampling stall reason mprof
 * knows, with the diagnosis dimension it counts toward and the viewer family
 * it is drawn in.
 *
 * This is the only place that knows a reason's meaning: the join, the
 * diagnosis, the viewer's Raster and Flame lanes, the synthetic generator
 * and the producer's tests all read it. docs/DIAGNOSIS.md ("Stall reasons")
 * gives the reason for every row.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_REASONS_H
#define MPROF_REASONS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** CUPTI names every stall reason with this prefix
 * (`smsp__pcsamp_warps_issue_stalled_long_scoreboard`). */
#define MPROF_STALL_REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"
/** The twin of reason X that counts only the samples in which no
 * instruction issued is X + this suffix. */
#define MPROF_STALL_NOT_ISSUED_SUFFIX "_not_issued"

/** The dimensions a kernel is judged on (mprof/diagnose.h). The first seven
 * are stall dimensions, fed by the reasons below. Values are pinned. */
typedef enum mprof_dimension_id {
  MPROF_DIM_MEMORY_LATENCY = 0,    /**< long_scoreboard */
  MPROF_DIM_MEMORY_THROUGHPUT = 1, /**< lg_throttle, tex_throttle, drain */
  MPROF_DIM_SHARED_MIO = 2,        /**< short_scoreboard, mio_throttle */
  MPROF_DIM_COMPUTE = 3,           /**< math_pipe_throttle, wait, selected,
                                        not_selected */
  MPROF_DIM_SYNC = 4, /**< barrier, membar, warpgroup_arrive, sleeping */
  MPROF_DIM_FETCH_BRANCH = 5, /**< no_instructions, imc_miss,
                                   branch_resolving */
  MPROF_DIM_SCHEDULING = 6,   /**< dispatch_stall, misc */
  MPROF_DIM_OCCUPANCY = 7,    /**< launch shape vs device limits */
  MPROF_DIM_TAIL = 8,         /**< grid size vs SMs x blocks per SM */
  MPROF_DIM_LAUNCH = 9,       /**< idle gaps between launches */
  MPROF_DIM_SM_BALANCE = 10,  /**< busy time per SM, from activity spans */
  MPROF_DIM_SM_TAIL = 11,     /**< the last SM's finish vs the median SM's,
                                   from activity spans */
  MPROF_DIM_COUNT_ = 12
} mprof_dimension_id;

/** No dimension: a healthy kernel's verdict, or a reason outside the table
 * (reported as "other"). */
#define MPROF_DIM_NONE 0xffffffffu

/** The viewer's stall families (Raster and Flame lanes): the seven stall
 * dimensions, with the issuing warp (`selected`) in a lane of its own.
 * Values are pinned. */
typedef enum mprof_stall_family {
  MPROF_STALL_FAMILY_MEMORY_LATENCY = 0,
  MPROF_STALL_FAMILY_MEMORY_THROUGHPUT = 1,
  MPROF_STALL_FAMILY_MIO = 2,
  MPROF_STALL_FAMILY_COMPUTE = 3,
  MPROF_STALL_FAMILY_SYNC = 4,
  MPROF_STALL_FAMILY_FETCH_BRANCH = 5,
  MPROF_STALL_FAMILY_SCHEDULING = 6, /**< also reasons the table lacks */
  MPROF_STALL_FAMILY_ISSUED = 7,     /**< selected: the warp issued */
  MPROF_STALL_FAMILY_COUNT_ = 8
} mprof_stall_family;

/** One row of the table. Strings are static. Fields are only appended. */
typedef struct mprof_stall_reason_info {
  /** "long_scoreboard": the CUPTI name after MPROF_STALL_REASON_PREFIX. */
  const char *short_name;
  /** "smsp__pcsamp_warps_issue_stalled_long_scoreboard" */
  const char *name;
  /** "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued" */
  const char *not_issued;
  uint32_t dimension; /**< mprof_dimension_id, one of the first seven */
  uint32_t family;    /**< mprof_stall_family */
  MPROF_GROWABLE_TAIL
} mprof_stall_reason_info;

/** Number of rows in the table. */
MPROF_API size_t mprof_stall_reason_info_count(void);

/** Row @p index (0 .. count-1), or NULL. */
MPROF_API const mprof_stall_reason_info *
mprof_stall_reason_info_at(size_t index);

/** The row of stall reason @p name, which may carry the prefix and the
 * `_not_issued` suffix; NULL for a name the table does not know. */
MPROF_API const mprof_stall_reason_info *
mprof_stall_reason_info_find(const char *name);

/** Strip MPROF_STALL_REASON_PREFIX when present. Returns a pointer into
 * @p name ("" for NULL). */
MPROF_API const char *mprof_stall_reason_short_name(const char *name);

/** Nonzero when @p name ends in MPROF_STALL_NOT_ISSUED_SUFFIX (after
 * something). */
MPROF_API int mprof_stall_reason_is_not_issued(const char *name);

/** The dimension of stall reason @p name (any form, see
 * mprof_stall_reason_info_find()): a mprof_dimension_id, or MPROF_DIM_NONE
 * for a reason the table does not know. */
MPROF_API uint32_t mprof_stall_reason_dimension(const char *name);

/** The viewer family of stall reason @p name (any form):
 * MPROF_STALL_FAMILY_SCHEDULING for a reason the table does not know. */
MPROF_API uint32_t mprof_stall_reason_family(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_REASONS_H */
