/*
 * mprof — GPU time per NVTX range (`mprof summary --by-range`).
 *
 * Each kernel launch, copy and memset is charged to the innermost named
 * NVTX range that was open on the host thread of the API call that issued
 * it, at the moment of that call (API_CALLS joined to LAUNCHES and MEMOPS
 * by correlation id; RANGES by thread id and time). A PyTorch program
 * annotated with torch.cuda.nvtx.range (or emit_nvtx) thus gets its GPU
 * time per operation or module. Ranges are told apart by name and domain.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RANGES_H
#define MPROF_RANGES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "diagnose.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One named range (name and domain): what was issued inside it. */
typedef struct mprof_range_time {
  const char *name;   /**< owned by the result */
  const char *domain; /**< "" for NVTX's default domain */
  uint64_t instances; /**< ranges of this name and domain in the trace */
  uint64_t host_ns;   /**< their summed length on the host clock */
  uint64_t launches;  /**< kernel launches issued while it was innermost */
  uint64_t kernel_ns; /**< those launches' summed GPU time */
  uint64_t copies;    /**< copies and memsets issued while it was innermost */
  uint64_t copy_ns;   /**< their summed GPU time */
  double share;       /**< kernel_ns / all kernel time of the trace */
  /** Of the instances, those still open when the capture was cut (or
   *  ended): MPROF_RANGE_FLAG_OPEN, their length runs to the cut. */
  uint64_t open_instances;
  MPROF_GROWABLE_TAIL
} mprof_range_time;

/** The whole trace: where its GPU time was issued. */
typedef struct mprof_range_totals {
  uint64_t range_records;      /**< RANGES records */
  uint64_t api_calls;          /**< API_CALLS records */
  uint64_t launches;           /**< every timed launch */
  uint64_t kernel_ns;          /**< their summed GPU time */
  uint64_t in_ranges_launches; /**< issued inside a named range */
  uint64_t in_ranges_ns;
  uint64_t outside_launches; /**< issued by a call outside every range */
  uint64_t outside_ns;
  uint64_t unmatched_launches; /**< no API call with their correlation id */
  uint64_t unmatched_ns;
  MPROF_GROWABLE_TAIL
} mprof_range_totals;

typedef struct mprof_range_times mprof_range_times;

/**
 * Aggregate @p trace's GPU time per innermost named range. Always succeeds
 * on a trace without ranges or API calls (then every launch is outside or
 * unmatched, and mprof_range_times_missing() says why).
 * Returns 0 or MPROF_ENOMEM.
 */
MPROF_API int mprof_range_times_build(mprof_range_times **out,
                                      const mprof_trace *trace);

/** NULL is a no-op. */
MPROF_API void mprof_range_times_free(mprof_range_times *times);

/** Named ranges, ordered by kernel time, then copy time, then name. */
MPROF_API size_t mprof_range_times_count(const mprof_range_times *times);

/** Range @p index in that order, or NULL when out of range. */
MPROF_API const mprof_range_time *
mprof_range_times_get(const mprof_range_times *times, size_t index);

/** The totals; never NULL for a built result. */
MPROF_API const mprof_range_totals *
mprof_range_times_totals(const mprof_range_times *times);

/**
 * Why the trace cannot be split by range, in one line for people ("the
 * trace has no NVTX ranges ..." or "the trace has no API calls ..."), or
 * NULL when it can.
 */
MPROF_API const char *mprof_range_times_missing(const mprof_range_times *times);

/**
 * Write the ranges as XML (docs/SUMMARY-SCHEMA.md, "summary --by-range"),
 * JSON or a text table, by opts->format. opts->max_kernels bounds the
 * ranges shown (the rest are counted as omitted); other fields are
 * ignored. @p opts may be NULL for the defaults. Returns 0 or MPROF_EIO.
 */
MPROF_API int mprof_range_times_write(FILE *out, const mprof_range_times *times,
                                      const mprof_report_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_RANGES_H */
