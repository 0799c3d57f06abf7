/*
 * mprof — internal: copying a trace's records into a writer, strings
 * re-interned, for every tool that writes a trace from another (rewrite,
 * source merge).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_COPY_H
#define MPROF_FORMAT_COPY_H

#include <stdint.h>

#include "mprof/trace.h"
#include "mprof/writer.h"

/*
 * Append every record of section @p type (any but STRINGS, CUBINS, BLOBS
 * and DROPS) of @p trace to @p w, in order, with their
 * strings interned in @p w. @p launch_map, when not NULL, renumbers the
 * launch of SPANS records (old index -> new). 0 or the writer's error.
 */
int mprof__copy_section(mprof_writer *w, const mprof_trace *trace,
                        mprof_section_type type, const uint32_t *launch_map);

/* Append the drop counters of @p trace to @p w. */
int mprof__copy_drops(mprof_writer *w, const mprof_trace *trace);

#endif /* MPROF_FORMAT_COPY_H */
