/*
 * mprof — reading .mprof files.
 *
 * mprof_trace_open() maps the file and validates all of it before returning:
 * header, directory, section bounds and checksums, every string reference and
 * every index into another section. After a successful open every accessor is
 * safe on the records it returns; records point into the mapping.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TRACE_H
#define MPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_trace mprof_trace;

#define MPROF_OPEN_OPTIONS_VERSION 1

/** Skip checksum verification (the bounds and references are still checked). */
#define MPROF_OPEN_NO_CHECKSUMS 0x1u

typedef struct mprof_open_options {
  unsigned version; /**< MPROF_OPEN_OPTIONS_VERSION */
  unsigned flags;   /**< MPROF_OPEN_* */
  MPROF_GROWABLE_TAIL
} mprof_open_options;

#define MPROF_OPEN_OPTIONS_INIT                                                \
  { MPROF_OPEN_OPTIONS_VERSION, 0 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_open_options_init(mprof_open_options *opts,
                                      unsigned version);

/**
 * Open and validate the trace at @p path. @p opts may be NULL. On failure
 * returns a negative mprof_status and mprof_error_last() names the file, the
 * section and the byte offset. On success *out is owned by the caller; free
 * it with mprof_trace_free().
 */
MPROF_API int mprof_trace_open(mprof_trace **out, const char *path,
                               const mprof_open_options *opts);

/** Unmap and free @p trace. NULL is a no-op. */
MPROF_API void mprof_trace_free(mprof_trace *trace);

/** The path given to mprof_trace_open(); owned by @p trace. */
MPROF_API const char *mprof_trace_path(const mprof_trace *trace);

/** Size of the file in bytes. */
MPROF_API uint64_t mprof_trace_file_size(const mprof_trace *trace);

/** The format version the file was written in, from its header: its
 * major (the one this mprof reads, MPROF_FORMAT_VERSION_MAJOR) and minor
 * (at most MPROF_FORMAT_VERSION_MINOR; a newer one's additions are
 * skipped). Either pointer may be NULL. */
MPROF_API void mprof_trace_format_version(const mprof_trace *trace,
                                          unsigned *major, unsigned *minor);

/** MPROF_FILE_FLAG_* from the header. */
MPROF_API uint32_t mprof_trace_flags(const mprof_trace *trace);

/**
 * The string for reference @p ref: "" for MPROF_STR_NONE or a reference out
 * of range (open has already rejected those in records). Owned by @p trace.
 */
MPROF_API const char *mprof_trace_string(const mprof_trace *trace,
                                         uint32_t ref);

/**
 * The records of section @p type and their count; NULL and 0 when the trace
 * has no such section. Owned by @p trace; valid until mprof_trace_free().
 */
MPROF_API const void *mprof_trace_section(const mprof_trace *trace,
                                          mprof_section_type type,
                                          size_t *count);

/* Typed accessors for every section; same ownership as mprof_trace_section. */
MPROF_API const mprof_meta_record *
mprof_trace_meta_records(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_device_record *
mprof_trace_devices(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_stream_record *
mprof_trace_streams(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_kernel_record *
mprof_trace_kernels(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_shape_record *mprof_trace_shapes(const mprof_trace *trace,
                                                       size_t *count);
MPROF_API const mprof_launch_record *
mprof_trace_launches(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_memop_record *mprof_trace_memops(const mprof_trace *trace,
                                                       size_t *count);
MPROF_API const mprof_range_record *mprof_trace_ranges(const mprof_trace *trace,
                                                       size_t *count);
MPROF_API const mprof_region_record *
mprof_trace_regions(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_span_record *mprof_trace_spans(const mprof_trace *trace,
                                                     size_t *count);
MPROF_API const mprof_stall_reason_record *
mprof_trace_stall_reasons(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_pc_sample_record *
mprof_trace_pc_samples(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_cubin_record *mprof_trace_cubins(const mprof_trace *trace,
                                                       size_t *count);
MPROF_API const mprof_drop_record *mprof_trace_drops(const mprof_trace *trace,
                                                     size_t *count);
MPROF_API const mprof_pm_metric_record *
mprof_trace_pm_metrics(const mprof_trace *trace, size_t *count);
MPROF_API const mprof_pm_sample_record *
mprof_trace_pm_samples(const mprof_trace *trace, size_t *count);
/** API_CALLS: the host calls that issued launches and copies, in the order
 *  written (not sorted). A trace recorded before the section existed has
 *  none: NULL and *count 0. */
MPROF_API const mprof_api_call_record *
mprof_trace_api_calls(const mprof_trace *trace, size_t *count);
/** MEMORY_ACCESSES (format 1.3): global-memory accesses per instruction of
 *  the kernels recorded with `record blocks --memory`; NULL and 0 for a
 *  trace without them. */
MPROF_API const mprof_memory_access_record *
mprof_trace_memory_accesses(const mprof_trace *trace, size_t *count);
/** PROCESSES (format 1.4): the processes the trace holds, *count >= 1 of
 *  them (mprof_trace_process_count()): one for a producer's trace, one per
 *  process of a merged set. A trace written before the section existed
 *  gets the table its META describes (pid, host, ... of its one process;
 *  a merged set's process.I.* keys; start and end from its clock anchors,
 *  exit unknown). Owned by @p trace; NULL and 0 only for a NULL trace. */
MPROF_API const mprof_process_record *
mprof_trace_processes(const mprof_trace *trace, size_t *count);
/** CAPTURE (format 1.5): the capture window of each process recorded with
 *  one (`record --capture-range`, `--delay`, ...), in the order written;
 *  `process` is its index in mprof_trace_processes(). NULL and 0 for a
 *  trace of whole runs, or written before the section existed. */
MPROF_API const mprof_capture_record *
mprof_trace_captures(const mprof_trace *trace, size_t *count);
/** "exit", "range_count", "kernel_count", "duration", "max_size",
 *  "never_opened", "open" for a mprof_capture_end; "unknown" else. */
MPROF_API const char *mprof_capture_end_name(uint32_t end_reason);

/** The value of META key @p key (the last one written), or NULL. */
MPROF_API const char *mprof_trace_meta(const mprof_trace *trace,
                                       const char *key);

/** The bytes of @p cubin's blob (NULL and 0 when omitted). Owned by @p trace.
 */
MPROF_API const void *mprof_trace_cubin_blob(const mprof_trace *trace,
                                             const mprof_cubin_record *cubin,
                                             size_t *size);

/**
 * The PC samples the trace holds (PC_SAMPLES), each counted once: summed
 * over the plain stall reasons, as `mprof summary` and the join count them
 * (mprof_join_sample_total()). When @p not_issued is not NULL it receives
 * the sum over the X_not_issued reasons, a subset of those samples that the
 * records repeat under the twin reason. CUPTI's own total
 * (MPROF_DROP_PC_TOTAL_SAMPLES) also counts samples in kernels that are not
 * the program's (MPROF_DROP_PC_NON_USER_SAMPLES), which no record holds.
 */
MPROF_API uint64_t mprof_trace_pc_sample_total(const mprof_trace *trace,
                                               uint64_t *not_issued);

/** Sum of the drop counters of @p kind over all devices. */
MPROF_API uint64_t mprof_trace_drop_total(const mprof_trace *trace,
                                          mprof_drop_kind kind);

/** Earliest launch/memop start and latest end; 0,0 for an empty trace. */
MPROF_API void mprof_trace_time_bounds(const mprof_trace *trace,
                                       uint64_t *start, uint64_t *end);

/**
 * 1 when @p trace is partial: its capture was cut short (the process was
 * killed or crashed) and it holds only what was committed up to its last
 * checkpoint (META `capture.partial`, docs/FORMAT.md "Streamed files");
 * 0 otherwise. When @p covered_ns is not NULL it receives the trace-clock
 * time from the start of the capture to that checkpoint (0 unknown).
 */
MPROF_API int mprof_trace_partial(const mprof_trace *trace,
                                  uint64_t *covered_ns);

/** Number of launches on stream @p stream (an index into STREAMS). */
MPROF_API size_t mprof_trace_stream_launch_count(const mprof_trace *trace,
                                                 uint32_t stream);

/**
 * The @p position-th launch of stream @p stream in order of start time, or
 * NULL when out of range. O(1). Owned by @p trace.
 */
MPROF_API const mprof_launch_record *
mprof_trace_stream_launch(const mprof_trace *trace, uint32_t stream,
                          size_t position);

/**
 * Positions [*first, *last) of the launches of @p stream that overlap the
 * time range [@p start, @p end). O(log n).
 */
MPROF_API int mprof_trace_stream_find(const mprof_trace *trace, size_t *first,
                                      size_t *last, uint32_t stream,
                                      uint64_t start, uint64_t end);

/** Rewrite flags. */
#define MPROF_REWRITE_SORT_LAUNCHES 0x1u /**< order by (stream, start) */
#define MPROF_REWRITE_DROP_CODE 0x2u     /**< keep cubin records, not blobs */
#define MPROF_REWRITE_DEMANGLE 0x4u /**< fill empty demangled kernel names */
/** cut cubins kept whole down to the code of the functions that ran */
#define MPROF_REWRITE_TRIM_CODE 0x8u

/**
 * Copy @p trace to @p path with the changes @p flags asks for: launches
 * sorted per stream (span records follow their launches), or captured code
 * dropped once its SASS is in the sidecar (the cubin records stay, marked
 * MPROF_CUBIN_OMITTED, so the trace still says what was loaded), or cubins
 * kept whole (MPROF_CUBIN_KEPT_WHOLE: a capture cut short streams the used
 * modules whole) cut down to the code of the functions that ran, its
 * kernels and the functions its PC samples name, as the CUPTI producer
 * cuts them when a capture finishes (MPROF_CUBIN_TRIMMED), or kernel
 * names demangled where the producer left them mangled only. @p path
 * may be the trace's own path: the copy replaces it atomically.
 */
MPROF_API int mprof_trace_rewrite(const mprof_trace *trace, const char *path,
                                  unsigned flags);

/**
 * mprof_trace_rewrite(), and the end of process @p pid written into its
 * PROCESSES record when the record has none (MPROF_EXIT_UNKNOWN): a process
 * killed by a signal it cannot catch (SIGKILL) never writes how it ended,
 * but its parent learns it from waitpid(). @p exit_kind is an
 * mprof_exit_kind, @p exit_value the exit status or the signal number. A
 * record that says how its process ended keeps it; without a record of
 * @p pid the copy is mprof_trace_rewrite()'s.
 */
MPROF_API int mprof_trace_rewrite_ended(const mprof_trace *trace,
                                        const char *path, unsigned flags,
                                        uint32_t pid, uint32_t exit_kind,
                                        uint32_t exit_value);

/**
 * Write the @p count traces of one run (one per process) to @p path as one
 * trace: every device, stream and kernel of each process stays its own
 * (streams are named "pid N · NAME" or "pid N · stream S"), times move onto
 * the first trace's clock through each trace's clock anchors (traces of one
 * host share their monotonic clock and do not move), each process is one
 * PROCESSES record (with the file it came from and how far its times
 * moved; a trace that is itself a set brings each of its processes), and
 * each process's META is kept under "process.I." (I its place among the
 * processes). The result is partial (META capture.partial) when any input
 * is.
 */
MPROF_API int mprof_trace_merge(const mprof_trace *const *traces, size_t count,
                                const char *path);

/**
 * Open the @p count traces of one run (one per process, each already open)
 * as one trace: what mprof_trace_merge() would write, read in place, with
 * no file written and no event copied. Its small tables (devices, streams,
 * kernels, shapes, processes, META) are built at once; the join, the
 * diagnosis and the summary read each trace's launches from its own
 * mapping (mprof_join_options.threads walks them in parallel); a section
 * of events asked of the set itself (mprof_trace_launches(), ...) is built
 * in memory on first use, thread-safely, and kept until the set is freed.
 * mprof_trace_path() of the result is @p name (NULL: "set");
 * mprof_trace_file_size() is the size of the traces' files together. The
 * set keeps each input open until it is freed itself: the caller may free
 * its traces at once. *out is the caller's, free it with
 * mprof_trace_free().
 */
MPROF_API int mprof_trace_open_merged(mprof_trace **out,
                                      const mprof_trace *const *traces,
                                      size_t count, const char *name);

/**
 * The traces set @p trace was opened from (mprof_trace_open_merged()), in
 * the order given; 0 for a trace of one file.
 */
MPROF_API size_t mprof_trace_member_count(const mprof_trace *trace);

/**
 * Trace @p index of set @p trace, as it was opened: its own indexes, clock
 * and processes (process i of the set is one of its own when each member
 * is the trace of one process), for analyses of each trace on its own (a
 * join or diagnosis per rank). NULL out of range or for a trace of one
 * file. Owned by the set; valid until mprof_trace_free() of the set.
 */
MPROF_API const mprof_trace *mprof_trace_member(const mprof_trace *trace,
                                                size_t index);

/**
 * The processes a trace holds (mprof_trace_processes()): 1 for the trace of
 * one process, N for a merged set of N. Process i of a set is its i-th
 * PROCESSES record: the i-th trace merged, when each was of one process.
 */
MPROF_API size_t mprof_trace_process_count(const mprof_trace *trace);

/**
 * @p key of process @p process as text. "pid", "ppid", "host", "cmdline",
 * "rank", "local_rank", "path" and "clock_shift_ns" come from its
 * PROCESSES record (mprof_trace_processes(); "path" is mprof_trace_path()
 * for a trace of one process that was not merged from another file); any
 * other key is the trace's own META for a trace of one process,
 * "process.I.KEY" in a merged set. NULL when unknown, absent or out of
 * range. Owned by @p trace.
 */
MPROF_API const char *mprof_trace_process_meta(const mprof_trace *trace,
                                               size_t process, const char *key);

/**
 * The process (0 .. mprof_trace_process_count() - 1) that stream @p stream
 * (an index into STREAMS) or device @p device (into DEVICES) belongs to, by
 * the ranges of the PROCESSES records; MPROF_INDEX_NONE out of range, when
 * no process claims it, or in a set merged before processes were
 * recorded. In a merged set every process has devices of its own: the
 * same GPU seen by two processes is two DEVICES records.
 */
MPROF_API uint32_t mprof_trace_stream_process(const mprof_trace *trace,
                                              uint32_t stream);
MPROF_API uint32_t mprof_trace_device_process(const mprof_trace *trace,
                                              uint32_t device);

/** Name of a section type ("LAUNCHES"), or "UNKNOWN". */
MPROF_API const char *mprof_section_name(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_TRACE_H */
