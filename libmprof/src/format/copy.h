/*
 * mprof — internal: copying a trace's records into a writer, strings
 * re-interned, for every tool that writes a trace from another (rewrite,
 * source merge, merging a set of traces).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_COPY_H
#define MPROF_FORMAT_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/trace.h"
#include "mprof/writer.h"

/* How a record's fields move into a merged trace (format/merge.c). */
typedef struct mprof__move {
  /* Per section: the records of the traces before this one, added to this
   * trace's indexes into it. */
  uint32_t base[MPROF_SECTION_TYPE_MAX_ + 1];
  /* Added to this trace's correlation ids: each process numbers its own
   * from 1, so in a set they would meet (a call joined to another
   * process's launch). */
  uint32_t correlations;
  int64_t shift; /* ns added to this trace's times */
} mprof__move;

/* @p index moved past @p base records; MPROF_INDEX_NONE stays. */
static inline uint32_t mprof__moved(uint32_t index, uint32_t base) {
  return index == MPROF_INDEX_NONE ? index : index + base;
}

/*
 * Append every record of section @p type (any but STRINGS, CUBINS, BLOBS
 * and DROPS) of @p trace to @p w, in order, with their
 * strings interned in @p w. @p move, when not NULL, moves their times,
 * indexes and correlation ids; @p launch_map, when not NULL, renumbers the
 * launch of SPANS records (old index -> new). 0 or the writer's error.
 */
int mprof__copy_section(mprof_writer *w, const mprof_trace *trace,
                        mprof_section_type type, const mprof__move *move,
                        const uint32_t *launch_map);

/* Re-intern the strings of @p record (of section @p type, from @p trace)
 * in @p w, and move it as mprof__copy_section() moves each record. */
void mprof__copy_record(mprof_writer *w, const mprof_trace *trace,
                        mprof_section_type type, void *record,
                        const mprof__move *move, const uint32_t *launch_map);

/* How a process ended, when its record does not say: process @p pid ended
 * as @p kind (mprof_exit_kind) with @p value. */
typedef struct mprof__process_end {
  uint32_t pid;
  uint32_t kind;
  uint32_t value;
} mprof__process_end;

/*
 * Append the processes of @p trace (mprof_trace_processes(): its PROCESSES
 * records, or those its META describes in a trace written before them) to
 * @p w. With @p move, their streams, devices and times move and its shift
 * adds to their clock_shift; @p path, when not NULL, names the file of a
 * process that has no path of its own; @p end, when not NULL, is how its
 * process ended for a record that does not say (MPROF_EXIT_UNKNOWN). 0 or
 * the writer's error.
 */
int mprof__copy_processes(mprof_writer *w, const mprof_trace *trace,
                          const mprof__move *move, const char *path,
                          const mprof__process_end *end);

/* Append the drop counters of @p trace to @p w, their devices moved by
 * @p move when not NULL. */
int mprof__copy_drops(mprof_writer *w, const mprof_trace *trace,
                      const mprof__move *move);

/* ---- merging a set (format/merge.c; its view, format/set.c) ---- */

/* How each of @p count traces, merged in this order, moves (@p moves, one
 * each): its indexes and clock; *@p processes: the processes of them all.
 * Correlation ids are left at 0: mprof__merge_correlations(). */
int mprof__merge_moves(const mprof_trace *const *traces, size_t count,
                       mprof__move *moves, uint32_t *processes);

/* Each trace's correlation ids past those of the traces before it (a scan
 * of every record that has one: a set does it only once it moves one). */
void mprof__merge_correlations(const mprof_trace *const *traces, size_t count,
                               mprof__move *moves);

/* One META entry: 0 or an error. */
typedef int (*mprof__meta_put)(void *ctx, const char *key, const char *value);

/* The META of the merged trace, entry by entry in the order written: the
 * first trace's clock, "merge.processes", each process's "process.I."
 * keys, "capture.partial" when any input is partial. */
int mprof__merge_meta(const mprof_trace *const *traces, size_t count,
                      const mprof__move *moves, uint32_t processes,
                      mprof__meta_put put, void *ctx);

/* The name stream @p stream of @p t gets in a merged set ("pid N · NAME",
 * "pid N · stream S", or its own when @p t is itself a set). */
void mprof__merge_stream_name(const mprof_trace *t, uint32_t stream,
                              char *named, size_t size);

/* The SOURCES entries of all @p traces, each path once, in path order:
 * *@p out (malloc'd, NULL when there are none) of *@p size bytes. */
int mprof__merge_sources(const mprof_trace *const *traces, size_t count,
                         unsigned char **out, size_t *size);

/*
 * Put @p size bytes at @p data into the finished trace at @p path as its
 * section @p type (replacing one of that type; @p size 0 removes it):
 * the other sections are copied byte for byte, the directory and header
 * written anew, and the file replaced once complete. For sections the
 * writer does not stream (SOURCES). Errors: the reader's for @p path,
 * MPROF_EINVAL for a streamed file, MPROF_EIO.
 */
int mprof__trace_put_section(const char *path, uint32_t type, const void *data,
                             size_t size);

#endif /* MPROF_FORMAT_COPY_H */
