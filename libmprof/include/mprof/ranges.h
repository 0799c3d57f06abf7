/*
 * mprof — GPU time per NVTX range (`mprof summary --by-range`).
 *
 * Each kernel launch, copy and memset is charged to the innermost named
 * NVTX range that was open on the host thread of the API call that issued
 * it, at the moment of that call (API_CALLS joined to LAUNCHES and MEMOPS
 * by correlation id; RANGES by thread id and time). When that thread had
 * no named range open, it is charged to the innermost named range open on
 * any thread of the same process at that moment (the one that started
 * last), as Nsight Systems projects NVTX ranges: PyTorch's autograd thread
 * launches the backward kernels inside the main thread's "backward" range.
 * A PyTorch program annotated with torch.cuda.nvtx.range (or emit_nvtx)
 * thus gets its GPU time per operation or module. Ranges are told apart by
 * name and domain.
 *
 * Exclusive time is what was issued while a range was the innermost;
 * inclusive time adds what its nested ranges hold (each launch counted
 * once per range name, however deep the nesting).
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
  /** Inclusive: issued while an instance was open, nested ranges' too. */
  uint64_t inclusive_launches;
  uint64_t inclusive_ns;
  uint64_t inclusive_copies;
  uint64_t inclusive_copy_ns;
  double inclusive_share; /**< inclusive_ns / all kernel time */
  /** Of the launches (exclusive), those issued by a thread that had no
   * range open, charged here through another thread's range. */
  uint64_t borrowed_launches;
  /** The range that encloses its instances most often (most GPU time on a
   * tie), or NULL at the top; owned by the result. Its hierarchy: ranges
   * are listed parent first, each followed by its children. */
  const char *parent;
  const char *parent_domain; /**< NULL with parent */
  uint32_t depth;            /**< 0 at the top, parent's + 1 */
  MPROF_GROWABLE_TAIL
} mprof_range_time;

/** A kernel issued while a range was the innermost (exclusive). */
typedef struct mprof_range_kernel {
  const char *name;    /**< demangled when the trace has it; owned */
  const char *mangled; /**< owned by the result */
  uint64_t launches;
  uint64_t kernel_ns;
  MPROF_GROWABLE_TAIL
} mprof_range_kernel;

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
  /** Of in_ranges_*, those issued by a thread with no range open, charged
   * to a range open on another thread of the process. */
  uint64_t borrowed_launches;
  uint64_t borrowed_ns;
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

/** Named ranges as a tree, parent first: the top ranges by inclusive
 * kernel time (then copy time, then name), each followed by its children
 * in the same order. */
MPROF_API size_t mprof_range_times_count(const mprof_range_times *times);

/** Range @p index in that order, or NULL when out of range. */
MPROF_API const mprof_range_time *
mprof_range_times_get(const mprof_range_times *times, size_t index);

/** The kernels issued while range @p range was the innermost, by kernel
 * time; 0 and NULL when out of range. Owned by @p times. */
MPROF_API size_t mprof_range_times_kernel_count(const mprof_range_times *times,
                                                size_t range);
MPROF_API const mprof_range_kernel *
mprof_range_times_kernel(const mprof_range_times *times, size_t range,
                         size_t index);

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
 * ranges shown (the rest are counted as omitted); with opts->kernel (a
 * kernel name or an extended regular expression, as for the summary) each
 * range lists its kernels that match, and ranges without one are left
 * out (MPROF_ENOTFOUND when no range has one); other fields are
 * ignored. @p opts may be NULL for the defaults. Returns 0 or MPROF_EIO.
 */
MPROF_API int mprof_range_times_write(FILE *out, const mprof_range_times *times,
                                      const mprof_report_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_RANGES_H */
