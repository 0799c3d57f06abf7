/*
 * mprof CUPTI producer — CUPTI records in, mprof records out.
 *
 * Everything here is a pure translation from CUPTI's structs into
 * mprof_writer calls: it never calls CUPTI or the driver, so the tests can
 * fabricate CUpti_ActivityKernel10, memcpy, memset, marker and
 * CUpti_PCSamplingData records on a machine without a GPU and read the trace
 * back. injection.c owns the CUPTI side and feeds these functions.
 *
 * Indices: records name devices by their index in DEVICES. A device gets its
 * index the first time anything mentions its CUDA ordinal; the DEVICES
 * section itself is written by mprof_cupti_translate_finish(), once the
 * driver and CUPTI's device records have both had a chance to describe it.
 *
 * Thread safety: every function may be called from any thread; one mutex
 * per translator serialises them (CUPTI's buffer thread, the application's
 * threads inside callbacks, the drain thread and the exit handler all feed
 * the same translator). After mprof_cupti_translate_finish() every call is a
 * no-op, so a late CUPTI callback cannot touch the finished writer.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_TRANSLATE_H
#define MPROF_CUPTI_TRANSLATE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>
#include <cupti_pcsampling.h>

#include "mprof/format.h"
#include "mprof/writer.h"

typedef struct mprof_cupti_translate mprof_cupti_translate;

typedef struct mprof_cupti_translate_options {
  /** POSIX extended regex matched against mangled kernel names; launches and
   *  PC samples of other kernels are not recorded. NULL or "" keeps all. */
  const char *kernel_regex;
  /** 0: record every cubin as MPROF_CUBIN_OMITTED and never copy one. */
  int keep_sass;
  /** Directory for the unlinked cubin spill file; "." when NULL. */
  const char *spill_dir;
  /** 1: keep used modules whole instead of only their used functions. */
  int whole_modules;
} mprof_cupti_translate_options;

/** Counts of what went where; for META, logs and tests. */
typedef struct mprof_cupti_translate_stats {
  uint64_t launches;            /**< LAUNCHES appended */
  uint64_t memops;              /**< MEMOPS appended */
  uint64_t ranges;              /**< RANGES appended */
  uint64_t api_calls;           /**< API_CALLS appended */
  uint64_t pc_records;          /**< PC_SAMPLES appended */
  uint64_t pc_drains;           /**< CUpti_PCSamplingData buffers translated */
  uint64_t no_timestamp;        /**< records skipped for lack of timestamps */
  uint64_t filtered_launches;   /**< launches of kernels the regex rejected */
  uint64_t filtered_pc_records; /**< PC records of rejected kernels */
  uint64_t modules;             /**< distinct cubins (by CRC) loaded */
  uint64_t modules_kept;        /**< written whole or trimmed */
  uint64_t modules_omitted;     /**< written as MPROF_CUBIN_OMITTED */
  uint64_t loaded_bytes;        /**< sum of distinct cubin sizes */
  uint64_t kept_bytes;          /**< bytes of cubin blobs written */
  uint64_t used_bytes;          /**< those modules' sizes as loaded */
  uint64_t streamed_modules; /**< used modules streamed whole at a checkpoint */
  uint64_t streamed_bytes;   /**< their bytes (in the streamed file only) */
  uint64_t streamed_ns;      /**< time spent reading and writing them */
  uint64_t cubins_ns;        /**< time spent writing CUBINS and BLOBS */
  uint64_t errors;           /**< error.N keys written */
} mprof_cupti_translate_stats;

/**
 * Create a translator writing into @p w (which stays owned by the caller
 * until mprof_cupti_translate_finish() finishes it). A kernel regex that
 * does not compile is recorded as an error in META and every kernel is kept.
 * Returns 0 or MPROF_ENOMEM / MPROF_EINVAL.
 */
int mprof_cupti_translate_new(mprof_cupti_translate **out, mprof_writer *w,
                              const mprof_cupti_translate_options *opts);

/**
 * Write what is still pending (ranges never closed, flagged
 * MPROF_RANGE_FLAG_OPEN; DEVICES, CUBINS and their blobs, summary META) and
 * call mprof_writer_finish() — exactly once; later calls return
 * MPROF_EINVAL. Returns mprof_writer_finish()'s result, with errno as it
 * left it.
 */
int mprof_cupti_translate_finish(mprof_cupti_translate *t);

/**
 * Commit what was translated so far to the streamed file (the writer's
 * checkpoint), with the devices known so far standing for DEVICES, the
 * NVTX ranges open now as OPEN_RANGES, and the whole code of every module
 * that held a launched or sampled function since the last checkpoint (so
 * that a capture cut short has the SASS of the kernels it ran; finish
 * keeps the trimmed form in the finished file). Called about once a
 * second; @p time_ns is the trace-clock time.
 */
int mprof_cupti_translate_checkpoint(mprof_cupti_translate *t,
                                     uint64_t time_ns);

/**
 * The same from a signal handler: commits only what the writer already
 * holds, takes no lock that may be held, allocates nothing.
 */
int mprof_cupti_translate_checkpoint_signal(mprof_cupti_translate *t, int signo,
                                            uint64_t time_ns);

/** 1 once mprof_cupti_translate_finish() has run. */
int mprof_cupti_translate_finished(mprof_cupti_translate *t);

/** Free @p t; aborts the writer if finish never ran. NULL is a no-op. */
void mprof_cupti_translate_free(mprof_cupti_translate *t);

void mprof_cupti_translate_get_stats(mprof_cupti_translate *t,
                                     mprof_cupti_translate_stats *out);

/** Append a META pair. */
void mprof_cupti_translate_meta(mprof_cupti_translate *t, const char *key,
                                const char *value);

/**
 * Record a failure as META `error.N` = @p message (N counts from 0).
 * Identical messages are recorded once; returns 1 when this message is new
 * (so the caller can warn once), 0 otherwise.
 */
int mprof_cupti_translate_error(mprof_cupti_translate *t, const char *message);

/** The DEVICES index of CUDA device @p ordinal, assigning one if new. */
uint32_t mprof_cupti_translate_device(mprof_cupti_translate *t,
                                      uint32_t ordinal);

/**
 * Describe device @p ordinal from the driver's attributes. Its `name` field
 * is ignored; pass the name as @p name. Driver values win over CUPTI's
 * device record where both exist; zeros count as unknown.
 */
void mprof_cupti_translate_device_info(mprof_cupti_translate *t,
                                       uint32_t ordinal,
                                       const mprof_device_record *info,
                                       const char *name);

/**
 * Who this process is: its PROCESSES record (pid, ppid, rank, local rank;
 * the strings, times, exit and ranges of @p rec are ignored), with @p host
 * and @p cmdline as text. From the next checkpoint on the trace holds the
 * record, owning every stream and device written so far, with no end (a
 * process killed after it leaves it so); mprof_cupti_translate_finish()
 * writes it with its end and exit.
 */
void mprof_cupti_translate_process(mprof_cupti_translate *t,
                                   const mprof_process_record *rec,
                                   const char *host, const char *cmdline);

/**
 * The capture window as of now (capture.h's record; @p spec the range or
 * kernel regex as given, "" none). Called again as it changes; checkpoints
 * snapshot it and mprof_cupti_translate_finish() writes the last one.
 */
/**
 * Piece @p index (1-based) of the capture window, from @p start to @p end,
 * opened on thread @p thread: a range "mprof window #INDEX" of the domain
 * "mprof", so that readers can take a window's repeats as steps (the
 * Kineto export's ProfilerStep spans, `mprof ranks`).
 */
void mprof_cupti_translate_window_piece(mprof_cupti_translate *t,
                                        uint64_t start, uint64_t end,
                                        uint64_t index, uint32_t thread);

void mprof_cupti_translate_capture(mprof_cupti_translate *t,
                                   const mprof_capture_record *rec,
                                   const char *spec);

/** When the capture began (trace clock), for the process record. */
void mprof_cupti_translate_process_start(mprof_cupti_translate *t,
                                         uint64_t start);

/** When the capture ended (trace clock) and how the process ended
 *  (mprof_exit_kind and its status or signal), for the process record. */
void mprof_cupti_translate_process_end(mprof_cupti_translate *t, uint64_t end,
                                       uint32_t exit_kind, uint32_t exit_value);

/** Describe a device from CUPTI_ACTIVITY_KIND_DEVICE. */
void mprof_cupti_translate_device_activity(mprof_cupti_translate *t,
                                           const CUpti_ActivityDevice5 *d);

/** CONCURRENT_KERNEL → KERNELS, SHAPES, STREAMS (interned) + LAUNCHES. */
int mprof_cupti_translate_kernel(mprof_cupti_translate *t,
                                 const CUpti_ActivityKernel10 *k);

/** MEMCPY → MEMOPS. */
int mprof_cupti_translate_memcpy(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemcpy6 *m);

/** MEMCPY2 (peer to peer) → MEMOPS. */
int mprof_cupti_translate_memcpy_p2p(mprof_cupti_translate *t,
                                     const CUpti_ActivityMemcpyPtoP4 *m);

/** MEMSET → MEMOPS. */
int mprof_cupti_translate_memset(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemset4 *m);

/**
 * Register the name of API function @p cbid of @p kind (MPROF_API_RUNTIME or
 * MPROF_API_DRIVER) as CUPTI spells it ("cudaLaunchKernel_v7000"); the
 * trace keeps the function's name without the version suffix
 * ("cudaLaunchKernel"). Call before records of that function arrive.
 */
int mprof_cupti_translate_api_name(mprof_cupti_translate *t, uint32_t kind,
                                   uint32_t cbid, const char *name);

/**
 * CUPTI_ACTIVITY_KIND_RUNTIME or _DRIVER record → API_CALLS. A function
 * whose name was never registered is named "runtime cbid N" / "driver cbid
 * N"; a record without timestamps is counted in DROPS. A driver call that a
 * runtime call of the same thread made (it lies inside it in time and has
 * its correlation id) is not kept: the runtime call stands for both. Driver
 * calls are therefore held back until the next runtime call of their thread (at
 * most 8 per thread) or mprof_cupti_translate_finish().
 */
int mprof_cupti_translate_api(mprof_cupti_translate *t,
                              const CUpti_ActivityAPI *a);

/**
 * MARKER → RANGES. A START record opens a range, the END record with the
 * same id closes and writes it; an instantaneous marker is a range of
 * length 0. Depth is the number of ranges open on the same thread.
 */
int mprof_cupti_translate_marker(mprof_cupti_translate *t,
                                 const CUpti_ActivityMarker2 *m);

/** MARKER_DATA: gives the open range with the same id its ARGB colour. */
int mprof_cupti_translate_marker_data(mprof_cupti_translate *t,
                                      const CUpti_ActivityMarkerData2 *m);

/**
 * Dispatch one record from an activity buffer by its kind. Kinds the trace
 * has no place for are ignored. Returns 0 or a writer error.
 */
int mprof_cupti_translate_activity(mprof_cupti_translate *t,
                                   const CUpti_Activity *record);

/** Count @p count activity records CUPTI reported as dropped. */
void mprof_cupti_translate_activity_dropped(mprof_cupti_translate *t,
                                            uint64_t count);

/**
 * STALL_REASONS for device @p ordinal, written once per device: @p names[i]
 * is the name of CUPTI stall reason index @p indices[i].
 */
int mprof_cupti_translate_stall_reasons(mprof_cupti_translate *t,
                                        uint32_t ordinal, size_t count,
                                        const uint32_t *indices,
                                        char *const *names);

/**
 * PC sampling could not be set up on device @p ordinal, for @p reason
 * (`insufficient_privileges`, `setup_failed` or a CUPTI error name): META
 * `pc.device.<ordinal>.error` = @p reason, so that a trace of several GPUs
 * says which one went unsampled, and the trace-wide `pc.error` = @p reason
 * (what `mprof record` reports; the last failure written wins).
 */
void mprof_cupti_translate_pc_error(mprof_cupti_translate *t, uint32_t ordinal,
                                    const char *reason);

/** Next drain sequence number (1, 2, ...), stored in PC_SAMPLES.drain. */
uint32_t mprof_cupti_translate_next_drain(mprof_cupti_translate *t);

/**
 * One CUpti_PCSamplingData buffer (from cuptiPCSamplingGetData or the
 * configured buffer after Disable) of device @p ordinal → one PC_SAMPLES
 * record per (PC, stall reason) with nonzero samples; its totalSamples,
 * droppedSamples, nonUsrKernelsTotalSamples and hardwareBufferFull are added
 * to DROPS (each buffer's counters are that buffer's, so they are summed).
 * At most min(totalNumPcs, collectNumPcs) PC records are read.
 */
int mprof_cupti_translate_pc_data(mprof_cupti_translate *t, uint32_t ordinal,
                                  const CUpti_PCSamplingData *data,
                                  uint32_t drain);

/**
 * PM sampling on device @p ordinal runs with @p count counters (at most
 * MPROF_PM_MAX_METRICS): one PM_METRICS record per counter, column i holding
 * @p names[i] measured in @p units[i], sampled every @p interval_ns.
 */
int mprof_cupti_translate_pm_metrics(mprof_cupti_translate *t, uint32_t ordinal,
                                     uint64_t interval_ns, size_t count,
                                     const char *const *names,
                                     const char *const *units);

/**
 * One PM sample of device @p ordinal over [@p start, @p end) on the trace
 * clock: @p values[i] is column i (@p count of them; the rest are NaN).
 */
int mprof_cupti_translate_pm_sample(mprof_cupti_translate *t, uint32_t ordinal,
                                    uint64_t start, uint64_t end, size_t count,
                                    const double *values);

/** Add @p count to the PM drop counter @p kind of device @p ordinal. */
void mprof_cupti_translate_pm_drop(mprof_cupti_translate *t, uint32_t ordinal,
                                   mprof_drop_kind kind, uint64_t count);

/**
 * A module was loaded on device @p ordinal: remember which functions it
 * holds and park the image (unless SASS is off) until finish decides
 * whether the trace keeps it. The same CRC loaded again costs nothing.
 */
int mprof_cupti_translate_module(mprof_cupti_translate *t, uint64_t crc,
                                 uint32_t ordinal, const void *image,
                                 size_t size);

#endif /* MPROF_CUPTI_TRANSLATE_H */
