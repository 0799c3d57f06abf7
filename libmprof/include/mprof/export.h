/*
 * mprof — exporting traces to the viewers people already share traces in.
 *
 * The formats:
 *  - Perfetto's native protobuf trace: process and thread tracks, a track
 *    per GPU stream, NVTX slices, flows from API call to kernel, PM
 *    counter tracks, SM span tracks, with strings interned;
 *  - the Trace Event Format (JSON) that chrome://tracing, Perfetto's UI and
 *    most trace tools open: one track per GPU stream with kernels and
 *    copies, NVTX ranges per host thread, measured activity spans per SM,
 *    and the kernel's launch configuration and diagnosis in each event's
 *    args;
 *  - speedscope's file format: per kernel, its PC samples as a sampled
 *    profile whose stacks are kernel → source line → SASS instruction,
 *    weighted by samples;
 *  - an SQLite database with Nsight Systems' table and column names for
 *    kernels, copies, memsets, API calls, NVTX ranges and GPUs, and tables
 *    of mprof's own for PC samples, SASS, PM samples, spans and the
 *    diagnosis, so that queries written for nsys exports run on it;
 *  - Kineto's JSON (torch.profiler's traces), one process's, with
 *    ProfilerStep#N spans, for Holistic Trace Analysis.
 *
 * All take a set of diagnosed traces (one per process of a multi-process
 * run): each trace becomes a process of its own, and all share one time
 * origin, the earliest event of the set.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_EXPORT_H
#define MPROF_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "api.h"
#include "diagnose.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Export formats. Values are pinned. */
typedef enum mprof_export_format {
  /** Trace Event Format JSON (docs/EXPORT.md), the legacy format that
   * chrome://tracing and Perfetto both open. */
  MPROF_EXPORT_TRACE_EVENTS = 0,
  /** speedscope's JSON file format (https://www.speedscope.app). */
  MPROF_EXPORT_SPEEDSCOPE = 1,
  /** An SQLite database whose tables for what Nsight Systems also records
   * carry its table and column names (docs/EXPORT.md). Needs a file
   * (mprof_export_file()) and a libmprof built with libsqlite3: else
   * MPROF_EUNSUPPORTED. */
  MPROF_EXPORT_SQLITE = 2,
  /** Perfetto's native protobuf trace (TracePackets with TrackDescriptors
   * and TrackEvents, interned strings; docs/EXPORT.md), which
   * ui.perfetto.dev and Perfetto's trace processor open. */
  MPROF_EXPORT_PERFETTO = 3,
  /** Kineto's JSON, as torch.profiler writes it (docs/EXPORT.md): kernels,
   * copies, runtime calls with correlation ids, deviceProperties,
   * distributedInfo and ProfilerStep#N spans, for Holistic Trace Analysis.
   * One process's trace only: else MPROF_EINVAL. */
  MPROF_EXPORT_KINETO = 4
} mprof_export_format;

/* Version 2 appended progress and progress_userdata. */
#define MPROF_EXPORT_OPTIONS_VERSION 2

typedef struct mprof_export_options {
  unsigned version; /**< MPROF_EXPORT_OPTIONS_VERSION */
  unsigned format;  /**< mprof_export_format */
  /** Only kernels whose mangled or display name equals this, or else
   * matches it as a POSIX extended regular expression; NULL for all. */
  const char *kernel;
  /* Version 2: */
  /** Called now and then while a long export runs (the SQLite export, per
   * table), with what it is writing and how many of @p total rows of it
   * are done; NULL for none. */
  void (*progress)(void *userdata, const char *what, size_t done, size_t total);
  void *progress_userdata; /**< passed to @p progress */
  MPROF_GROWABLE_TAIL
} mprof_export_options;

#define MPROF_EXPORT_OPTIONS_INIT                                              \
  { MPROF_EXPORT_OPTIONS_VERSION, MPROF_EXPORT_TRACE_EVENTS, NULL, NULL, NULL }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_export_options_init(mprof_export_options *opts,
                                        unsigned version);

#define MPROF_EXPORT_REPORT_VERSION 2

/** What an export wrote, for a recap; in the caller's memory, set up with
 * MPROF_EXPORT_REPORT_INIT. It grows at a minor version (fields are only
 * appended); the export fills the fields of its version. */
typedef struct mprof_export_report {
  unsigned version; /**< MPROF_EXPORT_REPORT_VERSION */
  size_t events;    /**< trace events (Perfetto: track events), or
                         speedscope samples */
  size_t profiles;  /**< speedscope profiles (kernels with samples) */
  size_t frames;    /**< speedscope frames */
  /* Version 2: */
  size_t rows; /**< SQLite: rows written, over all tables */
  MPROF_GROWABLE_TAIL
} mprof_export_report;

#define MPROF_EXPORT_REPORT_INIT                                               \
  { MPROF_EXPORT_REPORT_VERSION }

/**
 * Write the @p count diagnosed traces of @p traces to @p out in
 * opts->format. The diagnoses are borrowed. @p report may be NULL.
 * Returns MPROF_EVERSION (having written nothing) for a report or options
 * version this library does not know, MPROF_ENOTFOUND (having written
 * nothing) when opts->kernel
 * matches no kernel, or for speedscope when no kernel has PC samples;
 * MPROF_EINVAL for a bad option or regular expression, or for
 * MPROF_EXPORT_SQLITE (a database is written to a file only); MPROF_EIO
 * when writing fails.
 */
MPROF_API int mprof_export_write(FILE *out,
                                 const mprof_diagnosis *const *traces,
                                 size_t count, const mprof_export_options *opts,
                                 mprof_export_report *report);

/**
 * As mprof_export_write(), into the file @p path: written under a
 * temporary name and renamed when complete, so a failed export leaves no
 * partial file.
 */
MPROF_API int mprof_export_file(const char *path,
                                const mprof_diagnosis *const *traces,
                                size_t count, const mprof_export_options *opts,
                                mprof_export_report *report);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_EXPORT_H */
