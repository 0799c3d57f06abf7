/*
 * mprof — internal: the process table of a trace, as its META described it
 * before the PROCESSES section (format 1.4) existed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_PROCESSES_H
#define MPROF_FORMAT_PROCESSES_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/format.h"
#include "mprof/writer.h"

/* A string of the pairs made a string ref of the table the records go to. */
typedef uint32_t (*mprof__intern_fn)(void *ctx, const char *text);

/*
 * COMPATIBILITY SHIM, the one reader of the META keys that said who a
 * trace's processes were before PROCESSES existed: the process table that
 * META @p pairs describe (key, value, key, value, ...: @p pair_count pairs;
 * a later pair wins).
 *
 * - One process (no `merge.processes` above 1): `pid`, `ppid`, `host`,
 *   `cmdline`, `rank`, `local_rank`, start and end from
 *   `clock.anchor.trace_ns` and `clock.end.trace_ns`; it owns all
 *   @p streams and @p devices.
 * - A merged set of N (`merge.processes` = N, at most @p pair_count):
 *   process I from `process.I.KEY` (the keys above, `path`,
 *   `clock_shift_ns`, and `streams`/`devices` = "FIRST COUNT" within
 *   @p streams and @p devices; a range that does not fit is left out, so
 *   its streams have no process).
 *
 * Strings go through @p intern. Numbers that do not parse are unknown; the
 * exit is unknown. *out (malloc'd, *count >= 1 records) is the caller's.
 * 0 or MPROF_ENOMEM.
 */
int mprof__processes_from_meta(mprof_process_record **out, size_t *count,
                               const char *const *pairs, size_t pair_count,
                               size_t streams, size_t devices,
                               mprof__intern_fn intern, void *ctx);

/*
 * Append to @p w the PROCESSES records that META @p pairs describe (as
 * mprof__processes_from_meta() reads them), owning every stream and device
 * @p w holds so far: for tools whose caller names the process in META pairs
 * (`mprof synth --meta`, the pairs a block trace's producer left) or not at
 * all (an MKPROF import: one process, nothing known about it). 0 or the
 * writer's error.
 */
int mprof__write_processes_from_meta(mprof_writer *w, const char *const *pairs,
                                     size_t pair_count);

#endif /* MPROF_FORMAT_PROCESSES_H */
