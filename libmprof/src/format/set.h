/*
 * mprof — internal: a set of traces opened as one (mprof_trace_open_merged())
 * is a view over its members' mapped files. Its small tables (devices,
 * streams, kernels, shapes, processes, META, strings) are built at open;
 * its event sections (launches, samples, calls...) only when asked for.
 * Analyses that walk events read them from each member in place, moved
 * into the set's numbering as they go (format/set.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_SET_H
#define MPROF_FORMAT_SET_H

#include <stddef.h>

#include "format/copy.h"
#include "mprof/trace.h"

/* The traces set @p t is a view over; 0 for a trace of one file. */
size_t mprof__set_member_count(const mprof_trace *t);

/* Member @p i of set @p t, with how its records move into the set
 * (@p move: add move->base[S] to an index into section S; may be NULL). */
const mprof_trace *mprof__set_member(const mprof_trace *t, size_t i,
                                     const mprof__move **move);

/* The records of section @p type in @p t: for a set, counted over its
 * members without building the section. */
size_t mprof__trace_records(const mprof_trace *t, mprof_section_type type);

#endif /* MPROF_FORMAT_SET_H */
