/*
 * mprof — streaming writer for .mprof files.
 *
 * Part of the static `mprof-writer` library that producers link alone: it
 * needs only libc (and pthreads, which glibc provides in libc).
 *
 * Memory is bounded: each section buffers at most `buffer_size` bytes and
 * moves the rest into "PATH.partial", a streamed file (docs/FORMAT.md,
 * "Streamed files"); cubin blobs go straight there. Strings are
 * deduplicated through a table of at most 262,144 strings (about 10 MiB),
 * which starts afresh when full (mprof_writer_get_string_stats()). Only the
 * deduplication tables of devices, streams, kernels and shapes stay in
 * memory whole, and they grow with distinct configurations, not with
 * launches. mprof_writer_checkpoint() commits what was appended so far: a
 * process killed after it leaves a "PATH.partial" that mprof_trace_open()
 * reads as a partial trace.
 *
 * Thread safety: every function may be called from several threads at once
 * on the same writer; one mutex per writer serialises appends (an append is
 * a memcpy into the section buffer, so the critical section is short).
 * bench/bench_writer measures the contended rate.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_WRITER_H
#define MPROF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_writer mprof_writer;

#define MPROF_WRITER_OPTIONS_VERSION 3

/** mprof_writer_options.open_flags: fail (errno EEXIST) when "PATH.partial"
 *  already exists, so that two processes never share one output. */
#define MPROF_WRITER_EXCLUSIVE 0x1u

/** mprof_writer_options.strings_unique_cap: remember every string, so that
 *  a string always has one reference (memory grows with distinct strings:
 *  for tools that copy a finished trace, not for a producer in a process). */
#define MPROF_WRITER_STRINGS_ALL ((size_t)-1)

typedef struct mprof_writer_options {
  unsigned version;   /**< MPROF_WRITER_OPTIONS_VERSION (1 is accepted) */
  size_t buffer_size; /**< bytes buffered per section; 0 = 64 KiB */
  /** Ignored; kept so the struct's layout does not change. The writer sets
   *  every header flag itself: MPROF_FILE_FLAG_LAUNCHES_SORTED when the
   *  launches arrived in start order, MPROF_FILE_FLAG_STREAMED only on
   *  "PATH.partial". */
  unsigned file_flags;
  unsigned open_flags; /**< MPROF_WRITER_*; version 2 */
  /** Distinct strings remembered for deduplication before the table
   *  starts afresh: 0 = 262,144, or MPROF_WRITER_STRINGS_ALL; version 3 */
  size_t strings_unique_cap;
  MPROF_GROWABLE_TAIL
} mprof_writer_options;

#define MPROF_WRITER_OPTIONS_INIT                                              \
  { MPROF_WRITER_OPTIONS_VERSION, 0, 0, 0, 0 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_writer_options_init(mprof_writer_options *opts,
                                        unsigned version);

/**
 * Start writing @p path. Nothing appears under @p path until
 * mprof_writer_finish() succeeds; until then data lives in the streamed file
 * "PATH.partial". @p opts may be NULL. On success *out is owned by the
 * caller and released by mprof_writer_finish() or mprof_writer_abort(). With
 * MPROF_WRITER_EXCLUSIVE an existing "PATH.partial" fails the call with
 * MPROF_EIO and errno set to EEXIST.
 */
MPROF_API int mprof_writer_open(mprof_writer **out, const char *path,
                                const mprof_writer_options *opts);

/**
 * Intern @p str (NUL-terminated UTF-8) into the string table and return its
 * reference. NULL and "" give MPROF_STR_NONE. When memory runs out the
 * string is counted as a dropped record and MPROF_STR_NONE is returned.
 * The same string gives the same reference while the writer remembers it:
 * it remembers 262,144 distinct strings at a time (strings_unique_cap),
 * then forgets them all and starts again, so a string may be stored more
 * than once.
 */
MPROF_API uint32_t mprof_writer_string(mprof_writer *w, const char *str);

#define MPROF_WRITER_STRING_STATS_VERSION 1

/** The writer's account of its strings (mprof_writer_get_string_stats()):
 *  a struct that grows (docs/ABI.md), set up with
 *  MPROF_WRITER_STRING_STATS_INIT. */
typedef struct mprof_writer_string_stats {
  unsigned version; /**< MPROF_WRITER_STRING_STATS_VERSION, set by the caller */
  uint64_t stored;  /**< strings put in STRINGS, each copy counted */
  uint64_t bytes;   /**< bytes of STRINGS, the empty string's NUL included */
  uint64_t found;   /**< requests answered with a string already stored */
  uint64_t tracked; /**< distinct strings remembered now */
  uint64_t unique_cap;   /**< the most remembered before starting afresh
                              (0: MPROF_WRITER_STRINGS_ALL, no limit) */
  uint64_t generations;  /**< times the table was full and started afresh */
  uint64_t memory_bytes; /**< memory held for strings: table and buffer */
  MPROF_GROWABLE_TAIL
} mprof_writer_string_stats;

#define MPROF_WRITER_STRING_STATS_INIT                                         \
  { MPROF_WRITER_STRING_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0 }

/** Fill @p out, the fields of its version (set by the caller, e.g. with
 *  MPROF_WRITER_STRING_STATS_INIT). MPROF_EVERSION for a version this
 *  writer does not know, MPROF_EINVAL for NULL. */
MPROF_API int mprof_writer_get_string_stats(mprof_writer *w,
                                            mprof_writer_string_stats *out);

/** Append a key/value pair to META (see docs/FORMAT.md for the keys). */
MPROF_API int mprof_writer_meta(mprof_writer *w, const char *key,
                                const char *value);

/**
 * Append one fixed-size record to the section @p type and, when @p out_index
 * is not NULL, return its index in that section. @p record must have the
 * size format.h gives the section's record. STRINGS and BLOBS are refused:
 * use mprof_writer_string() and mprof_writer_cubin().
 */
MPROF_API int mprof_writer_append(mprof_writer *w, uint32_t *out_index,
                                  mprof_section_type type, const void *record);

/**
 * Like mprof_writer_append(), but when a byte-identical record was already
 * added to the section, return that record's index instead of appending.
 * Meant for DEVICES, STREAMS, KERNELS, SHAPES and REGIONS.
 */
MPROF_API int mprof_writer_intern(mprof_writer *w, uint32_t *out_index,
                                  mprof_section_type type, const void *record);

/**
 * Add a captured cubin. Its CRC is deduplicated: a second call with the same
 * @p rec->crc and device returns 0 and stores nothing. @p blob (may be NULL
 * when @p rec->flags has MPROF_CUBIN_OMITTED) is copied to disk at once;
 * rec->blob_offset and rec->blob_size are filled in by the writer.
 */
MPROF_API int mprof_writer_cubin(mprof_writer *w, const mprof_cubin_record *rec,
                                 const void *blob, size_t blob_size);

/**
 * Replace the cubin stored for (@p rec->crc, @p old_device) by @p rec and
 * @p blob, stored as mprof_writer_cubin() stores them (@p rec->device may
 * differ from @p old_device). A producer that streams a module's whole
 * code early, so that a capture cut short has it, replaces it at the end
 * with what the finished file should keep: the streamed file keeps the
 * earlier record and blob, the finished file holds only the new ones (the
 * earlier blob's bytes are left out of it). With no such cubin stored this
 * is mprof_writer_cubin() without its deduplication.
 */
MPROF_API int mprof_writer_cubin_replace(mprof_writer *w, uint32_t old_device,
                                         const mprof_cubin_record *rec,
                                         const void *blob, size_t blob_size);

/** Add @p count to the drop counter (@p kind, @p device). */
MPROF_API int mprof_writer_drop(mprof_writer *w, mprof_drop_kind kind,
                                uint32_t device, uint64_t count);

/**
 * Records that stand for section @p type at checkpoints while the section
 * itself has none (a producer that writes a table only at the end, such as
 * DEVICES, gives its current state here). @p records (@p count records of
 * the section's size) are copied; a later call replaces them (a count of 0
 * empties the section at the next checkpoint). MPROF_SECTION_OPEN_RANGES
 * takes snapshots only: the ranges open as of the next checkpoint.
 */
MPROF_API int mprof_writer_snapshot(mprof_writer *w, mprof_section_type type,
                                    const void *records, size_t count);

/**
 * Commit everything appended so far to "PATH.partial": if the process dies
 * after this returns, the file opens as a partial trace holding it.
 * @p time_ns is the trace-clock time of the checkpoint (0 unknown).
 */
MPROF_API int mprof_writer_checkpoint(mprof_writer *w, uint64_t time_ns);

/**
 * mprof_writer_checkpoint() for a signal handler: calls only write(2) and
 * never allocates or waits. When another thread (or the interrupted code)
 * holds the writer it does nothing and returns MPROF_EIO; the last
 * checkpoint stands. @p signo is recorded in the checkpoint. The caller
 * makes sure @p w is not finished or aborted on another thread while this
 * runs (the CUPTI producer takes its writer away from its handlers and
 * waits for them before it finishes).
 */
MPROF_API int mprof_writer_checkpoint_signal(mprof_writer *w, int signo,
                                             uint64_t time_ns);

/** Number of records appended to section @p type so far. */
MPROF_API uint64_t mprof_writer_count(mprof_writer *w, mprof_section_type type);

/**
 * Commit a final checkpoint to "PATH.partial", write the finished file
 * ("PATH.finishing", renamed to PATH) and remove "PATH.partial". Frees
 * @p w whatever the outcome. On failure (MPROF_EIO, errno set to the
 * failed call's error) nothing is left under PATH, and "PATH.partial"
 * stays with every checkpoint committed before the failure, so it opens
 * as a trace (the message says up to which checkpoint); it is removed
 * only when no checkpoint had been committed.
 */
MPROF_API int mprof_writer_finish(mprof_writer *w);

/** Discard everything written and free @p w. NULL is a no-op. */
MPROF_API void mprof_writer_abort(mprof_writer *w);

/** CRC-32C (Castagnoli) of @p size bytes, continuing from @p crc (0 to start).
 */
MPROF_API uint32_t mprof_crc32c(uint32_t crc, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_WRITER_H */
