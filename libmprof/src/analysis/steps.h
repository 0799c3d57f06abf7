/*
 * mprof — training steps of a trace: NVTX ranges named like steps, else
 * the repeating launch pattern; and the API call of a correlation id.
 * Shared by the Kineto export (ProfilerStep#N spans) and `mprof ranks`.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ANALYSIS_STEPS_H
#define MPROF_ANALYSIS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/trace.h"

/** One step on the host clock. */
typedef struct mprof__step {
  uint64_t start, end;
  uint32_t thread; /**< host thread of its range or first call; 0 unknown */
  uint64_t number; /**< from the range's name, or its place in the pattern */
} mprof__step;

/** The step number of a range named like a step ("ProfilerStep#3",
 * "step 3", "iteration_3", "train_step:3", "iter-3", any case), or -1. */
long long mprof__step_number(const char *name);

/** API_CALLS sorted by correlation id, to find a launch's call. */
typedef struct mprof__call_index {
  const mprof_api_call_record *calls;
  size_t count;
  struct mprof__call_key *keys;
} mprof__call_index;

/** Returns 0 or MPROF_ENOMEM; free with mprof__call_index_free(). */
int mprof__call_index_build(mprof__call_index *idx, const mprof_trace *trace);
void mprof__call_index_free(mprof__call_index *idx);
/** The call with @p correlation, or NULL (0 has none). */
const mprof_api_call_record *mprof__call_of(const mprof__call_index *idx,
                                            uint32_t correlation);
/** The largest correlation id of a call; 0 without calls. */
uint32_t mprof__call_index_max(const mprof__call_index *idx);

/**
 * Steps from the repeating launch pattern: the smallest period p (at least
 * two repeats) of the kernel sequence in issue order such that 95% of its
 * launches repeat the one p before; step k holds the launches [k p,
 * (k+1) p) and spans the host from its first launch's call to the next
 * step's first call (the last: to its last call's end). None (0, NULL)
 * without a pattern. Returns 0 or MPROF_ENOMEM; *out is the caller's.
 */
int mprof__steps_from_pattern(mprof__step **out, size_t *count,
                              const mprof_trace *trace,
                              const mprof__call_index *idx);

/**
 * Steps from the NVTX ranges named like steps, in time order, or without
 * them from a capture window's pieces (the CUPTI producer's ranges
 * "mprof window #N" of the domain "mprof"); a step number seen twice keeps
 * its first range. With @p skip_profiler_steps,
 * ranges already named "ProfilerStep#N" are left out. Returns 0 or
 * MPROF_ENOMEM; *out is the caller's.
 */
int mprof__steps_from_ranges(mprof__step **out, size_t *count,
                             const mprof_trace *trace, int skip_profiler_steps);

#endif /* MPROF_ANALYSIS_STEPS_H */
