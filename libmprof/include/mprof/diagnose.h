/*
 * mprof — the per-kernel diagnosis, and the summary report built on it.
 *
 * For every kernel of a join: one verdict sentence; ten dimensions, each
 * judged ok, minor or issue with the numbers behind it, and two more from
 * activity spans when the trace has them; the stall mix; the hot
 * instructions (with SASS and source line when the sidecar has them); the
 * theoretical occupancy and waves of its launch shapes. Stall dimensions
 * come from the PC samples (plain reasons only), occupancy and tail effect
 * from the launch shapes and the device limits in the trace, launch
 * overhead from the idle gaps on the timeline, SM load balance and the SM
 * tail from the busy time and the finish of each SM in the spans. The
 * rules and every threshold, with its reason, are in docs/DIAGNOSIS.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_DIAGNOSE_H
#define MPROF_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "format.h"
#include "join.h"
#include "throughput.h"
#include "reasons.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_diagnosis mprof_diagnosis;

/** The dimensions judged from activity spans (SPANS); `unknown` for a
 * kernel without spans, and left out of reports on a trace without any. */
#define MPROF_DIM_FIRST_SPAN MPROF_DIM_SM_BALANCE

/** How a dimension was judged. Values are pinned. */
typedef enum mprof_state {
  MPROF_STATE_UNKNOWN = 0, /**< no data to judge it (e.g. no PC samples) */
  MPROF_STATE_OK = 1,
  MPROF_STATE_MINOR = 2,
  MPROF_STATE_ISSUE = 3
} mprof_state;

/** "memory_latency", ...: the stable key of a dimension; "" out of range. */
MPROF_API const char *mprof_dimension_key(uint32_t dimension);
/** "memory latency", ...: a title for people; "" out of range. */
MPROF_API const char *mprof_dimension_title(uint32_t dimension);
/** "unknown", "ok", "minor", "issue"; "" out of range. */
MPROF_API const char *mprof_state_name(uint32_t state);

/** How far an estimated gain can be trusted (docs/DIAGNOSIS.md, "Estimated
 * gain"). Values are pinned. */
typedef enum mprof_gain_bound {
  MPROF_GAIN_ESTIMATE = 0, /**< an estimate of what the fix gains */
  MPROF_GAIN_AT_LEAST = 1, /**< the fix gains at least this ("≥") */
  MPROF_GAIN_AT_MOST = 2,  /**< the fix gains at most this ("≤"): what the
                                data bound, not what it shows the fix gets */
  MPROF_GAIN_UNKNOWN = 3   /**< the data cannot tell ("?") */
} mprof_gain_bound;

/** "estimate", "at_least", "at_most", "unknown"; "" out of range. */
MPROF_API const char *mprof_gain_bound_name(uint32_t bound);

/** A number behind a judgement. Strings are static. */
typedef struct mprof_metric {
  const char *name; /**< "share", "theoretical_occupancy", ... */
  double value;
  const char *unit; /**< "fraction", "ratio", "ns", "count", "blocks", "warps",
                         "bytes", "registers", "waves" */
  MPROF_GROWABLE_TAIL
} mprof_metric;

/** One judged dimension. Owned by the diagnosis. */
typedef struct mprof_dimension {
  uint32_t id;    /**< mprof_dimension_id */
  uint32_t state; /**< mprof_state */
  /** Estimated gain, 0..1: the share of the kernel's time on its stream
   * (its runs plus the idle gaps before them) that fixing this dimension
   * could recover. docs/DIAGNOSIS.md gives the arithmetic of each; the
   * verdict names the largest. */
  double cost;
  const char *detail; /**< one sentence with the numbers */
  size_t metric_count;
  const mprof_metric *metrics;
  /** The gain as people read it: a share of the kernel's own GPU time for
   * a dimension inside the kernel (cost / busy), a share of the stream's
   * time (runs plus idle gaps) for launch overhead / idle gaps. */
  double gain;
  uint32_t gain_bound; /**< mprof_gain_bound of gain, cost and saved_ns */
  /** Estimated time saved for the program by fixing it: the kernel's total
   * time x gain inside the kernel, the idle gap time removed for launch
   * overhead / idle gaps; NaN when unknown. */
  double saved_ns;
  MPROF_GROWABLE_TAIL
} mprof_dimension;

/** The share of one stall reason in a kernel or at an instruction. */
typedef struct mprof_reason_share {
  const char *reason; /**< short name; owned by the join */
  uint32_t dimension; /**< mprof_dimension_id or MPROF_DIM_NONE ("other") */
  uint64_t samples;
  double share; /**< of the plain-reason samples */
  MPROF_GROWABLE_TAIL
} mprof_reason_share;

/** One of the most-sampled instructions of a kernel. */
typedef struct mprof_hot_instruction {
  uint64_t cubin_crc;
  uint32_t function_index;
  uint32_t offset;
  uint64_t samples;
  double share;     /**< of the kernel's plain-reason samples */
  const char *sass; /**< "@P0 LDG.E.128 R4, desc[UR6][R2.64]"; "" unknown */
  const char *file; /**< source file; "" unknown */
  uint32_t line;    /**< 0 unknown */
  size_t reason_count;
  const mprof_reason_share *reasons; /**< top three, of this instruction */
  MPROF_GROWABLE_TAIL
} mprof_hot_instruction;

/** What limits the blocks per SM. */
typedef enum mprof_occupancy_limiter {
  MPROF_LIMIT_UNKNOWN = 0,
  MPROF_LIMIT_WARPS = 1,     /**< threads per SM */
  MPROF_LIMIT_BLOCKS = 2,    /**< blocks per SM */
  MPROF_LIMIT_REGISTERS = 3, /**< registers per SM */
  MPROF_LIMIT_SHARED = 4     /**< shared memory per SM */
} mprof_occupancy_limiter;

/** "unknown", "warps", "blocks", "registers", "shared_memory". */
MPROF_API const char *mprof_occupancy_limiter_name(uint32_t limiter);

#define MPROF_OCCUPANCY_VERSION 1

/**
 * Theoretical occupancy and waves of one launch shape on one device. It
 * grows at a minor version (fields are only appended): one the diagnosis
 * owns is reached through a pointer, one in your memory starts as
 * MPROF_OCCUPANCY_INIT, whose version tells mprof_occupancy_compute() how
 * many fields it has.
 */
typedef struct mprof_occupancy {
  unsigned version; /**< MPROF_OCCUPANCY_VERSION */
  uint32_t known;   /**< 0 when device limits or the block size are missing */
  uint32_t warps_per_block;
  uint32_t blocks_per_sm; /**< 0: the block does not fit at all */
  uint32_t active_warps;  /**< per SM */
  uint32_t max_warps;     /**< per SM */
  double theoretical;     /**< active_warps / max_warps */
  uint32_t limit_warps;   /**< blocks per SM allowed by each resource; */
  uint32_t limit_blocks;  /**< UINT32_MAX where it sets no limit */
  uint32_t limit_registers;
  uint32_t limit_shared;
  uint32_t limiter; /**< mprof_occupancy_limiter */
  uint64_t grid_blocks;
  uint32_t sm_count;
  double waves;           /**< grid_blocks / (sm_count x blocks_per_sm) */
  double tail_efficiency; /**< waves / ceil(waves): busy share of slots */
  MPROF_GROWABLE_TAIL
} mprof_occupancy;

#define MPROF_OCCUPANCY_INIT                                                   \
  { MPROF_OCCUPANCY_VERSION }

/**
 * Compute the occupancy of @p shape on @p device following CUDA's
 * occupancy calculator (cuda_occupancy.h): registers per warp rounded up to
 * 256 and allocated per SM sub-partition, shared memory rounded up to 128
 * bytes plus the 1 KiB the driver reserves per block on compute capability
 * 8.0 and later. @p out is the caller's, set up with MPROF_OCCUPANCY_INIT:
 * the fields of its version are filled, even when the result is unknown,
 * and nothing after them. MPROF_EVERSION (nothing written) for a version
 * this library does not know. Of @p shape only grid, block, registers,
 * static_shared and dynamic_shared are read, fields every version has, so
 * a struct you fill yourself works with any later library.
 */
MPROF_API int mprof_occupancy_compute(mprof_occupancy *out,
                                      const mprof_device_record *device,
                                      const mprof_shape_stats *shape);

/** The diagnosis of one kernel. Everything is owned by the diagnosis. */
typedef struct mprof_kernel_diagnosis {
  size_t kernel;                     /**< index in the join */
  const mprof_kernel_stats *stats;   /**< owned by the join */
  const char *verdict;               /**< one sentence */
  uint32_t verdict_dimension;        /**< MPROF_DIM_NONE when none stands out */
  uint32_t verdict_state;            /**< that dimension's state */
  size_t dimension_count;            /**< MPROF_DIM_COUNT_ */
  const mprof_dimension *dimensions; /**< indexed by mprof_dimension_id */
  size_t stall_count;
  const mprof_reason_share *stalls; /**< plain reasons, largest first */
  double other_share; /**< share of reasons outside the dimension map */
  /** Share of samples in which an instruction issued: 1 - not_issued /
   * samples; negative when the trace has no not-issued reasons. */
  double issue_active;
  size_t hot_count;
  const mprof_hot_instruction *hot;
  /** Of the shape with the most time (unknown without launches); never
   * NULL. Owned by the diagnosis. */
  const mprof_occupancy *occupancy;
  double weighted_occupancy;     /**< over shapes, by time */
  double weighted_tail;          /**< tail efficiency over shapes, by time */
  size_t shape_count;            /**< as mprof_join_shapes() */
  const mprof_occupancy *shapes; /**< parallel to mprof_join_shapes() */
  size_t note_count;
  const char *const *notes; /**< what is missing for this kernel */
  /** Its speed of light from PM samples; never NULL (values NaN and
   * samples 0 when not measured). Owned by the diagnosis. */
  const mprof_kernel_throughput *throughput;
  uint32_t tensor_core; /**< HGMMA/WGMMA/HMMA/UTMA in its SASS */
  uint32_t library;     /**< named like a cuBLAS, cuDNN, CUTLASS, Triton or
                             PyTorch kernel: advice is for the caller */
  /** The measured roof the verdict names ("dram", "dram_sectors": DRAM's
   * random-access roof for scattered accesses, "l2", "l1tex" (L1 and shared
   * memory), "issue", "fma",
   * "tensor": the resource at 60% of its peak or more, where the gain is in
   * doing less work rather than in a stall); NULL for any other verdict. */
  const char *roof;
  /** The verdict dimension's gain, gain_bound and saved_ns
   * (mprof_dimension); gain and saved_ns are NaN (bound unknown) for a
   * roof verdict, whose gain is in doing less work, and 0 when the verdict
   * names no dimension. */
  double gain;
  uint32_t gain_bound;
  double saved_ns;
  /** 1 when gain is a share of stream time (idle gaps: launch overhead or
   * a starved stream), 0 when it is a share of the kernel's own time. */
  uint32_t gain_of_stream;
  MPROF_GROWABLE_TAIL
} mprof_kernel_diagnosis;

/** Something missing or doubtful in the whole trace. */
typedef struct mprof_note {
  const char *key;  /**< "no_samples", "no_sidecar", "pc_buffer_full", ... */
  const char *text; /**< one sentence, with how to fix it */
  MPROF_GROWABLE_TAIL
} mprof_note;

/* Version 2 appended sidecar_problem. */
#define MPROF_DIAGNOSE_OPTIONS_VERSION 2

typedef struct mprof_diagnose_options {
  unsigned version;     /**< MPROF_DIAGNOSE_OPTIONS_VERSION */
  size_t hot_count;     /**< hot instructions kept per kernel */
  uint64_t min_samples; /**< fewer samples leave stall dimensions unknown */
  /* Version 2: */
  /** Why the trace's sidecar was left out of the join (it is damaged: the
   * message mprof_sidecar_load() gave), or NULL. The no_sidecar note then
   * says the sidecar is damaged and the trace is read without it, instead
   * of that there is none. Borrowed for the call. */
  const char *sidecar_problem;
  MPROF_GROWABLE_TAIL
} mprof_diagnose_options;

#define MPROF_DIAGNOSE_OPTIONS_INIT                                            \
  { MPROF_DIAGNOSE_OPTIONS_VERSION, 10, 50, NULL }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_diagnose_options_init(mprof_diagnose_options *opts,
                                          unsigned version);

/**
 * Diagnose every kernel of @p join. @p join is borrowed and must outlive
 * the diagnosis; @p opts may be NULL. On success *out is owned by the
 * caller; free it with mprof_diagnosis_free().
 */
MPROF_API int mprof_diagnose(mprof_diagnosis **out, const mprof_join *join,
                             const mprof_diagnose_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_diagnosis_free(mprof_diagnosis *diagnosis);

/** The join it was made from (borrowed). */
MPROF_API const mprof_join *
mprof_diagnosis_join(const mprof_diagnosis *diagnosis);

/** Number of kernels: the join's, in the join's order. */
MPROF_API size_t mprof_diagnosis_kernel_count(const mprof_diagnosis *diagnosis);

/** Kernel @p index, or NULL. Owned by @p diagnosis. */
MPROF_API const mprof_kernel_diagnosis *
mprof_diagnosis_kernel(const mprof_diagnosis *diagnosis, size_t index);

/** The PM samples joined to the kernels (borrowed from the diagnosis). */
MPROF_API const mprof_throughput *
mprof_diagnosis_throughput(const mprof_diagnosis *diagnosis);

/**
 * 1 when @p name (mangled or demangled) looks like a kernel of a library
 * (cuBLAS, cuDNN, CUTLASS, Triton, PyTorch/ATen, FlashAttention), whose
 * launch shape the caller does not choose.
 */
MPROF_API int mprof_kernel_name_is_library(const char *name);

/**
 * Element @p index of a kernel diagnosis's arrays (NULL out of range):
 * dimensions (by mprof_dimension_id), stalls, hot instructions and shape
 * occupancies. Use these, not the array fields, in code that may run
 * against a newer libmprof: the element structs may grow at a minor
 * version (fields are only appended).
 */
MPROF_API const mprof_dimension *
mprof_kernel_diagnosis_dimension(const mprof_kernel_diagnosis *kernel,
                                 size_t index);
MPROF_API const mprof_reason_share *
mprof_kernel_diagnosis_stall(const mprof_kernel_diagnosis *kernel,
                             size_t index);
MPROF_API const mprof_hot_instruction *
mprof_kernel_diagnosis_hot(const mprof_kernel_diagnosis *kernel, size_t index);
MPROF_API const mprof_occupancy *
mprof_kernel_diagnosis_shape(const mprof_kernel_diagnosis *kernel,
                             size_t index);
/** Element @p index of a dimension's metrics and of a hot instruction's
 * reasons (NULL out of range), likewise. */
MPROF_API const mprof_metric *
mprof_dimension_metric(const mprof_dimension *dimension, size_t index);
MPROF_API const mprof_reason_share *
mprof_hot_instruction_reason(const mprof_hot_instruction *hot, size_t index);

/** Trace-wide notes: what is missing and how to get it. */
MPROF_API size_t mprof_diagnosis_note_count(const mprof_diagnosis *diagnosis);
/** Note @p index, or NULL. Owned by @p diagnosis. */
MPROF_API const mprof_note *
mprof_diagnosis_note(const mprof_diagnosis *diagnosis, size_t index);

/**
 * Whether reports show @p dimension: a dimension judged from spans only in
 * a trace with spans, and in a trace that holds instruction timings only
 * (a Megakernels MKPROF: no PC samples, counters or device limits can be
 * in it) only the dimensions it could judge. 0 for NULL.
 */
MPROF_API int
mprof_diagnosis_dimension_reported(const mprof_diagnosis *diagnosis,
                                   const mprof_dimension *dimension);

/** 1 when @p trace holds instruction timings only: it was imported from a
 * Megakernels MKPROF file (META capture.mode = mkprof). */
MPROF_API int mprof_trace_is_mkprof(const mprof_trace *trace);

/* ---- reports ------------------------------------------------------------ */

/** Report formats. Values are pinned. */
typedef enum mprof_report_format {
  MPROF_REPORT_XML = 0,  /**< docs/SUMMARY-SCHEMA.md; the default */
  MPROF_REPORT_JSON = 1, /**< docs/summary.schema.json, docs/diff.schema.json */
  MPROF_REPORT_TEXT = 2  /**< a panel for people */
} mprof_report_format;

/** MPROF_REPORT_TEXT only: colour with ANSI escapes. */
#define MPROF_REPORT_COLOR 0x1u
/** MPROF_REPORT_TEXT only: full kernel names instead of mprof_name_short()'s
 * (XML and JSON always carry both). */
#define MPROF_REPORT_FULL_NAMES 0x2u
/** MPROF_REPORT_TEXT summaries only: one line per kernel (share, launches,
 * mean, verdict, estimated gain, time saved, name) instead of a panel per
 * kernel. */
#define MPROF_REPORT_BRIEF 0x4u
/** Summaries: kernels ranked by the estimated time their verdict's fix
 * saves (mprof_kernel_diagnosis.saved_ns, unknown last) instead of by
 * GPU time. */
#define MPROF_REPORT_SORT_SAVED 0x8u

#define MPROF_REPORT_OPTIONS_VERSION 1

typedef struct mprof_report_options {
  unsigned version;   /**< MPROF_REPORT_OPTIONS_VERSION */
  unsigned format;    /**< mprof_report_format */
  unsigned flags;     /**< MPROF_REPORT_* */
  size_t max_kernels; /**< kernels shown; the rest are counted as omitted */
  size_t max_hot;     /**< hot instructions shown per kernel */
  /** Only kernels whose mangled or display name equals this, or else
   * matches it as a POSIX extended regular expression; NULL for all. */
  const char *kernel;
  MPROF_GROWABLE_TAIL
} mprof_report_options;

#define MPROF_REPORT_OPTIONS_INIT                                              \
  { MPROF_REPORT_OPTIONS_VERSION, MPROF_REPORT_XML, 0, 5, 5, NULL }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_report_options_init(mprof_report_options *opts,
                                        unsigned version);

/**
 * Write the summary of @p diagnosis to @p out. Returns MPROF_ENOTFOUND
 * (having written nothing) when opts->kernel matches no kernel,
 * MPROF_EINVAL for a bad regular expression, MPROF_EIO when writing fails.
 * @p opts may be NULL for the defaults.
 */
MPROF_API int mprof_diagnosis_write(FILE *out, const mprof_diagnosis *diagnosis,
                                    const mprof_report_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_DIAGNOSE_H */
