/*
 * mprof — joining a trace's records into kernels.
 *
 * A join groups the launches of a trace into kernels, one per (device,
 * mangled name): the same kernel on two GPUs is two kernels. In a merged
 * set of processes (trace.h) a process's device counts as the first device
 * of an earlier process that is the same kind of GPU (name, compute
 * capability, SMs): the same ordinal on the same host when there is one,
 * else any. So a kernel is one across the processes of a run, whether they
 * share a GPU or have one each; MPROF_JOIN_BY_PROCESS keeps each process's
 * launches apart (one kernel per process, device and name). For each it
 * gives launch statistics (count, total, mean, spread, median, p90, min,
 * max, share of kernel time), its launch shapes, the idle gaps before its
 * launches on their streams, and its PC samples: attributed to the kernel
 * through (device, function name), aggregated per instruction (cubin CRC,
 * function index, offset) and per stall reason, and joined to the SASS
 * instruction and source line of the sidecar when one is given.
 *
 * Stall reasons are joined by name across devices: the join's reason table
 * holds each distinct name once, with the `smsp__pcsamp_warps_issue_stalled_`
 * prefix stripped, so traces of other GPU generations work unchanged.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_JOIN_H
#define MPROF_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "format.h"
#include "names.h"
#include "reasons.h"
#include "sidecar.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_join mprof_join;

/* Version 2 appended flags; version 3, threads. */
#define MPROF_JOIN_OPTIONS_VERSION 3

/** Keep each process's launches of a kernel apart in a merged set: one
 * kernel per (process, device, name) instead of one per (GPU, name). */
#define MPROF_JOIN_BY_PROCESS 0x1u

typedef struct mprof_join_options {
  unsigned version; /**< MPROF_JOIN_OPTIONS_VERSION */
  /** SASS, source lines (and PC samples when the trace has none) come from
   * here; NULL for none. Borrowed: it must outlive the join. */
  const mprof_sidecar *sidecar;
  /* Version 2: */
  unsigned flags; /**< MPROF_JOIN_* */
  /* Version 3: */
  /** Threads the join may use, the calling one among them: the launches
   * of each trace of a set (mprof_trace_open_merged()) are walked on their
   * own, these many at once. 0 and 1: all on the calling thread. The
   * result is the same for every value. */
  unsigned threads;
  MPROF_GROWABLE_TAIL
} mprof_join_options;

#define MPROF_JOIN_OPTIONS_INIT                                                \
  { MPROF_JOIN_OPTIONS_VERSION, NULL, 0, 0 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_join_options_init(mprof_join_options *opts,
                                      unsigned version);

/** The analysis dimension a stall reason belongs to (see diagnose.h). */
#define MPROF_REASON_NO_DIMENSION MPROF_DIM_NONE

/** One stall reason of the join's table. Strings are owned by the join. */
typedef struct mprof_stall_reason {
  const char *name;      /**< "long_scoreboard", prefix stripped */
  const char *full_name; /**< as the trace names it; "" when unnamed */
  uint32_t not_issued;   /**< 1 for an X_not_issued reason: a subset of X's
                              samples, never added into shares */
  uint32_t plain;        /**< for X_not_issued: the index of X, or
                              MPROF_INDEX_NONE; for X: its own index */
  uint32_t dimension;    /**< mprof_dimension_id, or
                              MPROF_REASON_NO_DIMENSION ("other") */
  MPROF_GROWABLE_TAIL
} mprof_stall_reason;

/** Samples of one stall reason (an index into the join's reason table). */
typedef struct mprof_reason_samples {
  uint32_t reason;
  uint64_t samples;
  MPROF_GROWABLE_TAIL
} mprof_reason_samples;

/** One launch configuration of a kernel and the launches that used it. */
typedef struct mprof_shape_stats {
  uint32_t kernel_record; /**< index into KERNELS of its first launch */
  uint32_t shape_record;  /**< index into SHAPES of its first launch */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t cluster[3];
  uint32_t dynamic_shared; /**< bytes */
  uint32_t static_shared;  /**< bytes, from the kernel record */
  uint32_t registers;      /**< per thread, from the kernel record */
  uint32_t local_per_thread;
  uint32_t launch_type;
  uint64_t launches;
  uint64_t total_ns;
  uint64_t min_ns;
  uint64_t max_ns;
  double mean_ns;
  MPROF_GROWABLE_TAIL
} mprof_shape_stats;

/** The samples at one instruction of a kernel. */
typedef struct mprof_pc_stats {
  uint64_t cubin_crc;
  uint32_t function_index;
  uint32_t offset;     /**< byte offset inside the function */
  uint64_t samples;    /**< summed over the plain reasons */
  uint64_t not_issued; /**< summed over the X_not_issued reasons */
  size_t reason_count;
  const mprof_reason_samples *reasons; /**< by samples, largest first */
  /** The SASS instruction from the sidecar, or NULL without one. */
  const mprof_sass_instruction *instruction;
  MPROF_GROWABLE_TAIL
} mprof_pc_stats;

/** A kernel: all launches and samples of one mangled name on one device. */
typedef struct mprof_kernel_stats {
  const char *name;    /**< demangled when the trace knows it, else mangled */
  const char *mangled; /**< the join key with the sidecar */
  uint32_t device;     /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t device_id;  /**< the CUDA ordinal, or MPROF_INDEX_NONE */
  uint64_t launches;
  uint64_t total_ns;
  uint64_t min_ns; /**< 0 without launches */
  uint64_t max_ns;
  uint64_t median_ns;
  uint64_t p90_ns; /**< nearest rank */
  double mean_ns;
  double stddev_ns;    /**< sample standard deviation; 0 below two launches */
  double share;        /**< of the summed kernel time of the trace */
  double device_share; /**< of the summed kernel time of its device */
  /** Idle gaps before its launches on their streams: the time from the end
   * of the previous launch on the same stream (of any kernel) to its start,
   * where that is positive; launches that overlap or open a stream have
   * none. */
  uint64_t gap_count;
  uint64_t gap_median_ns;
  double gap_mean_ns;
  uint64_t samples;    /**< plain-reason PC samples */
  uint64_t not_issued; /**< X_not_issued samples */
  size_t shape_count;
  size_t pc_count;
  size_t function_count; /**< distinct (cubin CRC, function index) sampled */
  uint64_t cubin_crc;    /**< of the most-sampled (else first) function */
  /** The sidecar's function for this kernel, or NULL. Owned by the sidecar.
   */
  const mprof_sidecar_function *function;
  /* Appended: the processes of a merged set (trace.h). */
  uint32_t process;       /**< the one process whose kernel this is, or
                               MPROF_INDEX_NONE when several ran it */
  uint32_t process_count; /**< processes that ran or loaded it (1 in the
                               trace of one process) */
  /** Instructions with counted global-memory accesses (MEMORY_ACCESSES,
   * `record blocks --memory`); 0 when none were counted. */
  size_t memory_count;
  /** MPROF_KERNEL_*. */
  uint32_t flags;
  MPROF_GROWABLE_TAIL
} mprof_kernel_stats;

/** mprof_kernel_stats.flags: the kernel is mprof's own, not the program's
 * (a name starting `mprof__`, such as the in-kernel span header's timer
 * probe, mprof__source_timer_probe_kernel). The join ranks such kernels
 * after the program's, so index 0 is the program's dominant kernel in
 * every report, view and export; reports mark them as mprof's own. */
#define MPROF_KERNEL_MPROF_OWN 0x1u

/** The global-memory accesses of one instruction of a kernel, counted on
 * the device (`mprof record blocks --memory`), summed over its records. */
typedef struct mprof_memory_stats {
  uint32_t offset;      /**< byte offset inside the function */
  uint32_t flags;       /**< MPROF_MEMORY_* (format.h), OR'ed */
  uint32_t access_size; /**< largest access of one thread, bytes */
  uint64_t warp_accesses;
  uint64_t thread_accesses;
  uint64_t bytes;   /**< bytes the threads asked for */
  uint64_t sectors; /**< 32-byte sectors touched, summed over warp accesses */
  /** Sector efficiency: bytes / (32 * sectors), 0..1 (1: every byte of
   * every sector touched was asked for; 0.125: a 4-byte load per 32-byte
   * sector). 0 without sectors. */
  double efficiency;
  /** The SASS instruction from the sidecar, or NULL without one. */
  const mprof_sass_instruction *instruction;
  MPROF_GROWABLE_TAIL
} mprof_memory_stats;

/**
 * Join @p trace (and the sidecar of @p opts, when given). @p trace is
 * borrowed and must outlive the join; @p opts may be NULL. On success *out
 * is owned by the caller; free it with mprof_join_free().
 */
MPROF_API int mprof_join_build(mprof_join **out, const mprof_trace *trace,
                               const mprof_join_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_join_free(mprof_join *join);

/** The trace and sidecar the join was built from (borrowed). */
MPROF_API const mprof_trace *mprof_join_trace(const mprof_join *join);
MPROF_API const mprof_sidecar *mprof_join_sidecar(const mprof_join *join);

/** Summed kernel time of all launches, in ns. */
MPROF_API uint64_t mprof_join_kernel_time(const mprof_join *join);

/** Plain-reason PC samples attributed to kernels. */
MPROF_API uint64_t mprof_join_sample_total(const mprof_join *join);

/**
 * Samples whose function matched no kernel of the trace by (device, name);
 * they were given kernels of their own, with no launches.
 */
MPROF_API uint64_t mprof_join_unmatched_samples(const mprof_join *join);

/**
 * Number of GPUs: the trace's devices, with a merged set's processes that
 * share one GPU (or ranks on GPUs of one kind) counted as one, as kernels
 * are joined across them.
 */
MPROF_API size_t mprof_join_gpu_count(const mprof_join *join);

/**
 * The DEVICES index that device @p device counts as: in a merged set, the
 * first device of the set that is the same GPU (itself with
 * MPROF_JOIN_BY_PROCESS, or in a trace of one process); MPROF_INDEX_NONE
 * when out of range. The devices that count as themselves are the
 * mprof_join_gpu_count() GPUs.
 */
MPROF_API uint32_t mprof_join_device_as(const mprof_join *join,
                                        uint32_t device);

/** Number of kernels. They are ordered by total time, then samples, then
 * name, then device, mprof's own kernels (MPROF_KERNEL_MPROF_OWN) after
 * the program's: index 0 is the program's dominant kernel. */
MPROF_API size_t mprof_join_kernel_count(const mprof_join *join);

/** The kernels' short names, unique within the trace, by kernel index
 * (mprof_name_set_build() over the kernels' names): the one set the
 * reports, the CLI and the viewer show. Owned by @p join. */
MPROF_API const mprof_name_set *mprof_join_kernel_names(const mprof_join *join);

/** Kernel @p index's short name from mprof_join_kernel_names(); "" when
 * out of range. Owned by @p join. */
MPROF_API const char *mprof_join_kernel_short(const mprof_join *join,
                                              size_t index);

/** Kernel @p index, or NULL when out of range. Owned by @p join. */
MPROF_API const mprof_kernel_stats *mprof_join_kernel(const mprof_join *join,
                                                      size_t index);

/**
 * The kernel of launch @p launch (an index into LAUNCHES): its index for
 * mprof_join_kernel(), or MPROF_INDEX_NONE when out of range.
 */
MPROF_API uint32_t mprof_join_launch_kernel(const mprof_join *join,
                                            size_t launch);

/**
 * The index of the kernel named @p name (mangled or display name) on device
 * ordinal @p device_id (MPROF_INDEX_NONE: any device), or MPROF_INDEX_NONE.
 */
MPROF_API uint32_t mprof_join_find_kernel(const mprof_join *join,
                                          const char *name, uint32_t device_id);

/** The shapes of kernel @p kernel, by total time, largest first. Owned by
 * @p join; NULL and 0 when out of range. */
MPROF_API const mprof_shape_stats *
mprof_join_shapes(const mprof_join *join, size_t kernel, size_t *count);

/** The sampled instructions of kernel @p kernel, by samples, largest first.
 * Owned by @p join; NULL and 0 when out of range or not sampled. */
MPROF_API const mprof_pc_stats *mprof_join_pcs(const mprof_join *join,
                                               size_t kernel, size_t *count);

/** The samples of kernel @p kernel per stall reason, largest first (plain
 * and not-issued reasons alike). Owned by @p join. */
MPROF_API const mprof_reason_samples *
mprof_join_kernel_reasons(const mprof_join *join, size_t kernel, size_t *count);

/**
 * One element of the arrays above, by index (NULL out of range). Callers
 * that may run against a newer libmprof use these rather than indexing
 * the arrays: an element struct may grow at a minor version (fields are
 * only appended), which changes its stride but not these calls.
 */
MPROF_API const mprof_shape_stats *
mprof_join_shape(const mprof_join *join, size_t kernel, size_t index);
MPROF_API const mprof_pc_stats *mprof_join_pc(const mprof_join *join,
                                              size_t kernel, size_t index);
MPROF_API const mprof_reason_samples *
mprof_join_kernel_reason(const mprof_join *join, size_t kernel, size_t index);
/** Reason @p index of @p pc's `reasons` (NULL out of range), likewise. */
MPROF_API const mprof_reason_samples *
mprof_pc_stats_reason(const mprof_pc_stats *pc, size_t index);

/* ---- the sampled instructions of every kernel, as columns ------------ */

/** The columns mprof_join_pc_column() fills, each with its C type. The rows
 * are the sampled instructions of every kernel, kernel by kernel in the
 * join's order, each kernel's as mprof_join_pcs() orders them. Values are
 * pinned; columns are only added. */
typedef enum mprof_pc_column {
  MPROF_PC_COLUMN_KERNEL = 0,         /**< uint32_t: index of its kernel */
  MPROF_PC_COLUMN_CUBIN_CRC = 1,      /**< uint64_t */
  MPROF_PC_COLUMN_FUNCTION_INDEX = 2, /**< uint32_t */
  MPROF_PC_COLUMN_OFFSET = 3,         /**< uint32_t: bytes into the function */
  MPROF_PC_COLUMN_SAMPLES = 4,        /**< uint64_t: plain-reason samples */
  MPROF_PC_COLUMN_NOT_ISSUED = 5,     /**< uint64_t: X_not_issued samples */
  MPROF_PC_COLUMN_LINE = 6,           /**< uint32_t: source line, 0 unknown */
  /** const mprof_sass_instruction *: the sidecar's instruction (owned by
   * the sidecar), NULL without one. */
  MPROF_PC_COLUMN_INSTRUCTION = 7,
  MPROF_PC_COLUMN_COUNT_ = 8
} mprof_pc_column;

/** The columns mprof_join_pc_reason_column() fills: one row per (sampled
 * instruction, stall reason with samples there), instruction by
 * instruction in the rows of mprof_pc_column, each instruction's reasons
 * largest first (plain and not-issued alike). Values are pinned. */
typedef enum mprof_pc_reason_column {
  MPROF_PC_REASON_COLUMN_ROW = 0,     /**< uint64_t: its row of
                                           mprof_join_pc_column() */
  MPROF_PC_REASON_COLUMN_REASON = 1,  /**< uint32_t: mprof_join_reason() */
  MPROF_PC_REASON_COLUMN_SAMPLES = 2, /**< uint64_t */
  MPROF_PC_REASON_COLUMN_COUNT_ = 3
} mprof_pc_reason_column;

/** Rows of mprof_join_pc_column(): the sampled instructions of all
 * kernels (the sum of mprof_kernel_stats.pc_count). */
MPROF_API size_t mprof_join_pc_rows(const mprof_join *join);

/** Rows of mprof_join_pc_reason_column(). */
MPROF_API size_t mprof_join_pc_reason_rows(const mprof_join *join);

/**
 * Fill @p out, an array of @p count elements of the C type of column
 * @p column (mprof_pc_column), with that column of every sampled
 * instruction: what a data frame or a numpy array reads in one call,
 * without a call per instruction. @p count must equal
 * mprof_join_pc_rows(); MPROF_EINVAL (nothing written) for another count,
 * an unknown column or a NULL argument.
 */
MPROF_API int mprof_join_pc_column(void *out, size_t count,
                                   const mprof_join *join, unsigned column);

/** The same for mprof_pc_reason_column; @p count must equal
 * mprof_join_pc_reason_rows(). */
MPROF_API int mprof_join_pc_reason_column(void *out, size_t count,
                                          const mprof_join *join,
                                          unsigned column);

/** The instructions of kernel @p kernel with counted global-memory
 * accesses, by offset. Owned by @p join; NULL and 0 when there are none. */
MPROF_API const mprof_memory_stats *
mprof_join_memory(const mprof_join *join, size_t kernel, size_t *count);

/** One of them by index (NULL out of range), as mprof_join_pc(). */
MPROF_API const mprof_memory_stats *
mprof_join_memory_at(const mprof_join *join, size_t kernel, size_t index);

/** The one at byte offset @p offset of kernel @p kernel, or NULL. */
MPROF_API const mprof_memory_stats *
mprof_join_memory_find(const mprof_join *join, size_t kernel, uint32_t offset);

/** Kernel @p kernel's counted memory instructions busiest first (most warp
 * accesses, then lowest offset): up to @p capacity pointers into the join's
 * records in @p order (may be NULL when @p capacity is 0). Returns how many
 * there are, as mprof_join_memory()'s count. */
MPROF_API size_t mprof_join_memory_busiest(const mprof_join *join,
                                           size_t kernel,
                                           const mprof_memory_stats **order,
                                           size_t capacity);

/** Kernel @p kernel's counted memory accesses summed over its instructions
 * (each out-parameter may be NULL); returns their sector efficiency, the
 * bytes used over the bytes of the sectors moved (0 without sectors). */
MPROF_API double mprof_join_memory_totals(const mprof_join *join, size_t kernel,
                                          uint64_t *warp_accesses,
                                          uint64_t *bytes, uint64_t *sectors);

/** "load", "store", "load+store", "atomic" or "prefetch" for the
 * MPROF_MEMORY_* flags of a mprof_memory_stats. */
MPROF_API const char *mprof_memory_kind_name(uint32_t flags);

/** Number of stall reasons in the join's table. */
MPROF_API size_t mprof_join_reason_count(const mprof_join *join);

/** Stall reason @p index, or NULL. Owned by @p join. */
MPROF_API const mprof_stall_reason *mprof_join_reason(const mprof_join *join,
                                                      size_t index);

/* ---- a time window: the kernels that ran in it ------------------------- */

/** One kernel's share of a time window (mprof_window_build). */
typedef struct mprof_window_kernel {
  uint32_t kernel; /**< its index for mprof_join_kernel() */
  uint32_t reserved;
  uint64_t launches; /**< its launches that overlap the window */
  uint64_t gpu_ns;   /**< their time inside the window (clipped to it) */
  MPROF_GROWABLE_TAIL
} mprof_window_kernel;

/** What ran in a time window, over every stream and device. */
typedef struct mprof_window_totals {
  uint64_t start, end; /**< the window, trace clock ns */
  uint64_t kernels;    /**< distinct kernels with launches in it */
  uint64_t launches;   /**< launches that overlap it */
  uint64_t gpu_ns;     /**< kernel time inside it, summed over streams */
  uint64_t copies;     /**< memcpy and memset operations that overlap it */
  uint64_t copy_bytes; /**< their bytes */
  uint64_t copy_ns;    /**< their time inside it */
  MPROF_GROWABLE_TAIL
} mprof_window_totals;

typedef struct mprof_window mprof_window;

/**
 * The kernels of @p join that ran in [@p start, @p end): per kernel its
 * launches and their time clipped to the window, by time, largest first,
 * with totals. A launch counts when it overlaps the window. @p join is
 * borrowed and must outlive the result; free it with mprof_window_free().
 * O(log n) per stream plus the launches in the window, and one pass over
 * the copies.
 */
MPROF_API int mprof_window_build(mprof_window **out, const mprof_join *join,
                                 uint64_t start, uint64_t end);
/** NULL is a no-op. */
MPROF_API void mprof_window_free(mprof_window *window);
/** The totals; owned by @p window. */
MPROF_API const mprof_window_totals *
mprof_window_totals_of(const mprof_window *window);
/** Kernels with launches in the window. */
MPROF_API size_t mprof_window_kernel_count(const mprof_window *window);
/** The @p index-th of them (largest time first), or NULL. Owned by
 * @p window. */
MPROF_API const mprof_window_kernel *
mprof_window_kernel_at(const mprof_window *window, size_t index);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_JOIN_H */
