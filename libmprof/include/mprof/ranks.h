/*
 * mprof — the cross-rank report (`mprof ranks`): which rank of a
 * multi-GPU job is slow, in which step, and why.
 *
 * The work is split so that it can run where the traces lie (one machine's
 * threads, or Dask workers): a rank table is built from one trace alone
 * (mprof_rank_table_build(): its steps and, per step, GPU busy and idle
 * time, idle time by the host call in progress, time in collectives and
 * GPU time per kernel), can be saved as bytes and loaded elsewhere, and
 * the tables of every rank are reduced into the report (mprof_ranks_build():
 * stragglers, and a `diff` of each slow rank against the median rank).
 *
 * Steps are the NVTX ranges named like steps ("step 3", "ProfilerStep#3",
 * "iteration 3", any case), else the repeating launch pattern; a launch
 * belongs to the step its API call (or, without one, its start) falls in.
 * A step's GPU window runs from its first kernel's start to the next
 * step's (the last: to its last kernel's end). Collectives are kernels
 * whose short name starts with "nccl".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RANKS_H
#define MPROF_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "diagnose.h"
#include "diff.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a rank's steps came from. Values are pinned. */
typedef enum mprof_step_source {
  MPROF_STEPS_NONE = 0,   /**< no steps: the whole trace is step 0 */
  MPROF_STEPS_NVTX = 1,   /**< NVTX ranges named like steps */
  MPROF_STEPS_PATTERN = 2 /**< the repeating launch pattern */
} mprof_step_source;

/** "none", "nvtx", "pattern"; "" else. */
MPROF_API const char *mprof_step_source_name(uint32_t source);

/** One step of one rank. Times in ns. */
typedef struct mprof_rank_step {
  uint64_t step;       /**< step number (the range's, or the pattern's) */
  uint64_t window_ns;  /**< its GPU window */
  uint64_t busy_ns;    /**< GPU busy in the window: kernels and copies */
  uint64_t compute_ns; /**< busy in kernels other than collectives, copies */
  uint64_t comm_ns;    /**< busy in collectives */
  uint64_t overlap_ns; /**< collectives running beside other work */
  uint64_t idle_ns;    /**< window - busy */
  /** The host call in progress for most of the idle time ("" when no
   * recorded call was: the host was busy elsewhere), and that time. */
  const char *idle_cause;
  uint64_t idle_cause_ns;
  uint64_t launches; /**< kernel launches issued in the step */
  /** Of idle_ns, the time the host was in any recorded CUDA call (the
   * rest: in none). */
  uint64_t idle_in_calls_ns;
  /** What the straggler search ranks: compute_ns, plus idle_ns when any
   * rank has collectives (a rank that waits on another waits inside its
   * collective, so its own idle time is its own delay). */
  uint64_t score_ns;
  /** Where its GPU window starts, ns on the clock of the rank's own trace
   * (in a merged set, add its process's clock_shift); 0 for a step with
   * no GPU work. The window is [window_start_ns, + window_ns). */
  uint64_t window_start_ns;
  MPROF_GROWABLE_TAIL
} mprof_rank_step;

/** One rank: who it is and its totals over its steps. */
typedef struct mprof_rank_info {
  const char *path;     /**< the trace */
  int64_t rank;         /**< META "rank"; -1 unknown */
  const char *host;     /**< "" unknown */
  uint32_t step_source; /**< mprof_step_source */
  size_t step_count;
  uint64_t launches; /**< every kernel launch of the trace */
  uint64_t window_ns, busy_ns, compute_ns, comm_ns, overlap_ns, idle_ns;
  /** overlap_ns / comm_ns: how much of its communication ran beside
   * computation; negative without collectives. */
  double overlap_share;
  uint32_t straggler; /**< 1 when it is among the stragglers */
  MPROF_GROWABLE_TAIL
} mprof_rank_info;

/** A straggler: a rank whose step took longer than the median rank's. */
typedef struct mprof_straggler {
  size_t rank_index; /**< into mprof_ranks_rank() */
  int64_t rank;
  uint64_t step; /**< its slowest step, against the median */
  uint64_t score_ns, median_score_ns;
  double excess;       /**< (score - median) / median */
  size_t slow_steps;   /**< steps it is a straggler in */
  size_t median_index; /**< the median rank of that step */
  int64_t median_rank;
  /** The kernel whose GPU time in that step grew most over the median
   * rank's; NULL when none grew. */
  const char *kernel; /**< display name */
  const char *kernel_mangled;
  uint64_t kernel_ns, median_kernel_ns;
  /** The host cause of its idle time in that step, as mprof_rank_step. */
  const char *idle_cause;
  uint64_t idle_ns, median_idle_ns;
  /** That kernel in the diff of the whole trace against the median rank's
   * (mprof_diff_run(): mean per launch, noise, stall reasons); NULL when
   * not compared (MPROF_RANKS_NO_DIFF, no kernel, or a trace that could
   * not be opened again: diff_error says why). Owned by the result. */
  const mprof_kernel_change *change;
  const char *diff_error; /**< "" when compared or not asked */
  const char *summary;    /**< one sentence for people */
  MPROF_GROWABLE_TAIL
} mprof_straggler;

typedef struct mprof_rank_table mprof_rank_table;
typedef struct mprof_ranks mprof_ranks;

/**
 * The per-rank work: @p trace's steps and per-step tables. @p trace is only
 * read; the table keeps copies of what it needs (its path included), so
 * the trace may be freed. Returns 0, MPROF_ENOMEM or MPROF_EINVAL.
 */
MPROF_API int mprof_rank_table_build(mprof_rank_table **out,
                                     const mprof_trace *trace);

/** NULL is a no-op. */
MPROF_API void mprof_rank_table_free(mprof_rank_table *table);

/**
 * @p table as bytes (to send to the machine that reduces): writes them to
 * @p buf when @p capacity is enough, and always their size to *@p size.
 * Call with a NULL @p buf to learn the size. Returns 0, or MPROF_EINVAL
 * when @p capacity is too small for a non-NULL @p buf.
 */
MPROF_API int mprof_rank_table_save(const mprof_rank_table *table, void *buf,
                                    size_t capacity, size_t *size);

/** A table from mprof_rank_table_save()'s bytes (copied). Returns 0,
 * MPROF_EFORMAT for bytes that are not one, MPROF_ENOMEM. */
MPROF_API int mprof_rank_table_load(mprof_rank_table **out, const void *bytes,
                                    size_t size);

#define MPROF_RANKS_NO_DIFF 0x1u /**< find stragglers, open no trace */

/* Version 2 appended threads. */
#define MPROF_RANKS_OPTIONS_VERSION 2

typedef struct mprof_ranks_options {
  unsigned version; /**< MPROF_RANKS_OPTIONS_VERSION */
  /** A rank straggles in a step when its score exceeds the median rank's
   * by this share and by min_excess_ns. */
  double threshold;
  uint64_t min_excess_ns;
  unsigned flags;   /**< MPROF_RANKS_* */
  size_t max_diffs; /**< stragglers compared with the median (diff) */
  /* Version 2: */
  /** Threads the diffs may use, the calling one among them: the traces
   * of the stragglers and their median ranks are opened, joined and
   * diagnosed these many at once (each once). 0 and 1: all on the
   * calling thread. The report is the same for every value. */
  unsigned threads;
  MPROF_GROWABLE_TAIL
} mprof_ranks_options;

#define MPROF_RANKS_OPTIONS_INIT                                               \
  { MPROF_RANKS_OPTIONS_VERSION, 0.05, 10000, 0, 3, 0 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown
 * version. */
MPROF_API int mprof_ranks_options_init(mprof_ranks_options *opts,
                                       unsigned version);

/**
 * Reduce the tables of a job's ranks (borrowed; at least one) into the
 * report. Unless MPROF_RANKS_NO_DIFF, each of the first max_diffs
 * stragglers is compared with its median rank by opening both traces
 * again from the tables' paths (mprof_diff_run()). Returns 0, MPROF_EINVAL
 * or MPROF_ENOMEM; a trace that cannot be opened again is not a failure
 * (mprof_straggler.diff_error).
 */
MPROF_API int mprof_ranks_build(mprof_ranks **out,
                                const mprof_rank_table *const *tables,
                                size_t count, const mprof_ranks_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_ranks_free(mprof_ranks *ranks);

/** The ranks, by rank number (unknown ones last, by path). */
MPROF_API size_t mprof_ranks_count(const mprof_ranks *ranks);
MPROF_API const mprof_rank_info *mprof_ranks_rank(const mprof_ranks *ranks,
                                                  size_t index);
/** Steps of rank @p index, by step number; NULL out of range. */
MPROF_API const mprof_rank_step *mprof_ranks_step(const mprof_ranks *ranks,
                                                  size_t index, size_t step);

/** Stragglers, largest excess first. */
MPROF_API size_t mprof_ranks_straggler_count(const mprof_ranks *ranks);
MPROF_API const mprof_straggler *mprof_ranks_straggler(const mprof_ranks *ranks,
                                                       size_t index);

/**
 * Write the report as XML (docs/SUMMARY-SCHEMA.md, "ranks"), JSON or text
 * for people, by opts->format (opts->max_kernels bounds the ranks listed
 * in text, opts->max_hot the stall reasons per straggler; other fields
 * are ignored). @p opts may be NULL. Returns 0 or MPROF_EIO.
 */
MPROF_API int mprof_ranks_write(FILE *out, const mprof_ranks *ranks,
                                const mprof_report_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_RANKS_H */
