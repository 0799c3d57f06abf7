/*
 * mprof — merge the traces of one run (one per process) into one trace.
 *
 * Every table is appended trace after trace, so a record of trace i that
 * referred to index k of a table now refers to (that table's count in the
 * traces before i) + k. Times move onto the first trace's clock through the
 * clock anchors each trace stores (the same instant on its trace clock and
 * on CLOCK_REALTIME); traces of one host share CLOCK_MONOTONIC_RAW and are
 * not moved. Each process is a PROCESSES record (a trace that is itself a
 * set brings all of its processes), its META comes over under "process.N."
 * (N its place among the processes), and its streams are named after it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "format/copy.h"
#include "format/trace_internal.h"
#include "internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

/* The sections whose records only move (in file order of dependence). */
static const uint32_t moved_sections[] = {
    MPROF_SECTION_LAUNCHES,   MPROF_SECTION_MEMOPS,
    MPROF_SECTION_RANGES,     MPROF_SECTION_MEMORY_ACCESSES,
    MPROF_SECTION_API_CALLS,  MPROF_SECTION_REGIONS,
    MPROF_SECTION_SPANS,      MPROF_SECTION_STALL_REASONS,
    MPROF_SECTION_PC_SAMPLES, MPROF_SECTION_PM_METRICS,
    MPROF_SECTION_PM_SAMPLES, MPROF_SECTION_CAPTURE};

static int anchor_of(const mprof_trace *t, int64_t *trace_ns,
                     int64_t *realtime_ns) {
  const char *a = mprof_trace_meta(t, "clock.anchor.trace_ns");
  const char *b = mprof_trace_meta(t, "clock.anchor.realtime_ns");
  if (!a || !b || !*a || !*b) {
    /* A block trace (`mprof record blocks`) runs on the GPU's %globaltimer,
     * which follows CLOCK_REALTIME (within ~0.2 ms on the H200). */
    const char *clock = mprof_trace_meta(t, "clock");
    if (!clock || strcmp(clock, "globaltimer") != 0)
      return -1;
    *trace_ns = *realtime_ns = 0;
    return 0;
  }
  *trace_ns = (int64_t)strtoll(a, NULL, 10);
  *realtime_ns = (int64_t)strtoll(b, NULL, 10);
  return 0;
}

/* How far trace @p t's clock sits from the first trace's. */
static int64_t clock_shift(const mprof_trace *first, const mprof_trace *t) {
  const char *host0 = mprof_trace_process_meta(first, 0, "host");
  const char *host = mprof_trace_process_meta(t, 0, "host");
  const char *clock0 = mprof_trace_meta(first, "clock");
  const char *clock = mprof_trace_meta(t, "clock");
  if (host0 && host && *host0 && strcmp(host0, host) == 0 && clock0 && clock &&
      strcmp(clock0, clock) == 0 && strcmp(clock, "CLOCK_REALTIME") != 0)
    return 0; /* one monotonic clock on one host */
  int64_t t0, r0, t1, r1;
  if (anchor_of(first, &t0, &r0) != 0 || anchor_of(t, &t1, &r1) != 0)
    return 0;
  /* t's instant x is realtime r1 + (x - t1), which is first's clock
   * t0 + (realtime - r0). */
  return (r1 - t1) - (r0 - t0);
}

/* The sections whose record counts move later traces' indexes. */
static const uint32_t indexed_sections[] = {
    MPROF_SECTION_DEVICES, MPROF_SECTION_STREAMS,  MPROF_SECTION_KERNELS,
    MPROF_SECTION_SHAPES,  MPROF_SECTION_LAUNCHES, MPROF_SECTION_REGIONS};

/* The largest correlation id of @p t: of every field the record table
 * (mprof__section_fields()) names one, the fields copying moves (launches,
 * copies, calls, samples). */
static uint64_t max_correlation(const mprof_trace *t) {
  uint64_t top = 0;
  for (uint32_t s = 1; s < SECTION_COUNT; s++) {
    size_t count, n;
    const record_field *f = mprof__section_fields(s, &count);
    const uint8_t *recs = (const uint8_t *)mprof_trace_section(t, s, &n);
    for (size_t c = 0; c < count; c++) {
      if (f[c].kind != FIELD_CORRELATION)
        continue;
      for (size_t i = 0; i < n; i++) {
        uint32_t v =
            mprof__u32_at(recs + i * mprof__record_size(s) + f[c].offset);
        top = v > top ? v : top;
      }
    }
  }
  return top;
}

/* META "process.INDEX.NAME" = @p value, when nothing failed before (@p rc). */
static int process_meta(int rc, mprof__meta_put put, void *w, size_t index,
                        const char *name, const char *value) {
  char key[256];
  snprintf(key, sizeof key, "process.%zu.%s", index, name);
  return rc ? rc : put(w, key, value);
}

/* The META of process @p index, moved to @p at of the merged trace: all of
 * a trace of one process; of a set, its own process.I.* keys. The keys a
 * merge writes itself are left out. */
static int copy_process_meta(mprof__meta_put put, void *w, const mprof_trace *t,
                             size_t index, size_t at) {
  static const char *const merge_keys[] = {"path", "clock_shift_ns", "devices",
                                           "streams"};
  char prefix[48];
  int prefix_len = snprintf(prefix, sizeof prefix, "process.%zu.", index);
  int set = mprof_trace_process_count(t) > 1;
  size_t n;
  const mprof_meta_record *meta = mprof_trace_meta_records(t, &n);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const char *key = mprof_trace_string(t, meta[i].key);
    if (set) {
      if (strncmp(key, prefix, (size_t)prefix_len) != 0)
        continue;
      key += prefix_len;
      int ours = 0;
      for (size_t k = 0; k < sizeof merge_keys / sizeof merge_keys[0]; k++)
        ours |= strcmp(key, merge_keys[k]) == 0;
      if (ours)
        continue;
    }
    rc =
        process_meta(rc, put, w, at, key, mprof_trace_string(t, meta[i].value));
  }
  return rc;
}

/* For readers older than PROCESSES (format 1.3): the process.I.* keys that
 * said where process I came from and which devices and streams are its. */
static int legacy_process_meta(mprof__meta_put put, void *w, size_t at,
                               const mprof_process_record *p,
                               const char *path) {
  char value[48];
  int rc = process_meta(0, put, w, at, "path", path);
  snprintf(value, sizeof value, "%" PRId64, p->clock_shift);
  rc = process_meta(rc, put, w, at, "clock_shift_ns", value);
  snprintf(value, sizeof value, "%" PRIu32 " %" PRIu32, p->first_device,
           p->device_count);
  rc = process_meta(rc, put, w, at, "devices", value);
  snprintf(value, sizeof value, "%" PRIu32 " %" PRIu32, p->first_stream,
           p->stream_count);
  return process_meta(rc, put, w, at, "streams", value);
}

void mprof__merge_stream_name(const mprof_trace *t, uint32_t stream,
                              char *named, size_t size) {
  size_t n;
  const mprof_stream_record *streams = mprof_trace_streams(t, &n);
  if (stream >= n) {
    snprintf(named, size, "%s", "");
    return;
  }
  const char *name = mprof_trace_string(t, streams[stream].name);
  const char *pid =
      mprof_trace_process_meta(t, mprof_trace_stream_process(t, stream), "pid");
  if (mprof_trace_process_count(t) > 1)
    snprintf(named, size, "%s", name); /* named when it was merged */
  else if (*name)
    snprintf(named, size, "pid %s \u00b7 %s", pid ? pid : "?", name);
  else
    snprintf(named, size, "pid %s \u00b7 stream %u", pid ? pid : "?",
             streams[stream].stream_id);
}

/* The META of process entries of trace @p t (moved by @p b). */
static int merge_process_meta(mprof__meta_put put, void *w,
                              const mprof_trace *t, const mprof__move *b) {
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(t, &n);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    size_t at = b->base[MPROF_SECTION_PROCESSES] + i;
    rc = copy_process_meta(put, w, t, i, at);
    mprof_process_record moved = p[i];
    moved.first_device += b->base[MPROF_SECTION_DEVICES];
    moved.first_stream += b->base[MPROF_SECTION_STREAMS];
    moved.clock_shift += b->shift;
    const char *path = mprof_trace_string(t, p[i].path);
    if (!rc)
      rc = legacy_process_meta(put, w, at, &moved,
                               *path ? path : mprof_trace_path(t));
  }
  return rc;
}

int mprof__merge_meta(const mprof_trace *const *traces, size_t count,
                      const mprof__move *moves, uint32_t processes,
                      mprof__meta_put put, void *w) {
  const mprof_trace *t = traces[0];
  /* The merged trace's own META: the first trace's clock and anchors, and
   * how many processes it holds. */
  static const char *const own[] = {"tool", "tool.version", "clock",
                                    "clock.anchor.trace_ns",
                                    "clock.anchor.realtime_ns"};
  int rc = 0;
  for (size_t i = 0; i < sizeof own / sizeof own[0] && !rc; i++) {
    const char *value = mprof_trace_meta(t, own[i]);
    if (value)
      rc = put(w, own[i], value);
  }
  /* For readers older than PROCESSES: how many process.I.* there are. */
  char value[32];
  snprintf(value, sizeof value, "%" PRIu32, processes);
  if (!rc)
    rc = put(w, "merge.processes", value);
  int partial = 0;
  for (size_t i = 0; i < count && !rc; i++) {
    partial |= mprof_trace_partial(traces[i], NULL);
    rc = merge_process_meta(put, w, traces[i], &moves[i]);
  }
  /* A set with a process cut short is itself incomplete. */
  if (!rc && partial)
    rc = put(w, "capture.partial", "1");
  return rc;
}

/* Trace @p t's devices, streams (named after their process), kernels,
 * shapes and processes (from process @p b->base[PROCESSES] on). */
static int merge_one(mprof_writer *w, const mprof_trace *t,
                     const mprof__move *b) {
  int rc = mprof__copy_section(w, t, MPROF_SECTION_DEVICES, b, NULL);
  size_t n;
  const mprof_stream_record *streams = mprof_trace_streams(t, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_stream_record rec = streams[i];
    char named[512];
    mprof__merge_stream_name(t, (uint32_t)i, named, sizeof named);
    rec.name = mprof_writer_string(w, named);
    rec.device = mprof__moved(rec.device, b->base[MPROF_SECTION_DEVICES]);
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_STREAMS, &rec);
  }
  if (!rc)
    rc = mprof__copy_section(w, t, MPROF_SECTION_KERNELS, b, NULL);
  if (!rc)
    rc = mprof__copy_section(w, t, MPROF_SECTION_SHAPES, b, NULL);
  if (!rc)
    rc = mprof__copy_processes(w, t, b, mprof_trace_path(t), NULL);
  return rc;
}

/* The records that refer to the tables merge_one() wrote. */
static int merge_events(mprof_writer *w, const mprof_trace *t,
                        const mprof__move *b) {
  int rc = 0;
  for (size_t s = 0;
       s < sizeof moved_sections / sizeof moved_sections[0] && !rc; s++)
    rc = mprof__copy_section(w, t, moved_sections[s], b, NULL);
  size_t n;
  const mprof_cubin_record *cubins = mprof_trace_cubins(t, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_cubin_record rec = cubins[i];
    size_t size = 0;
    const void *blob = mprof_trace_cubin_blob(t, &rec, &size);
    rec.device = mprof__moved(rec.device, b->base[MPROF_SECTION_DEVICES]);
    rc = mprof_writer_cubin(w, &rec, blob, size);
  }
  return rc ? rc : mprof__copy_drops(w, t, b);
}

/* A SOURCES entry of one of the traces being merged. */
typedef struct source_ref {
  const unsigned char *at; /* the entry, header first */
  mprof_source_entry head;
} source_ref;

static int by_source_path(const void *a, const void *b) {
  const source_ref *x = (const source_ref *)a, *y = (const source_ref *)b;
  size_t n = x->head.path_size < y->head.path_size ? x->head.path_size
                                                   : y->head.path_size;
  int c = memcmp(x->at + sizeof x->head, y->at + sizeof y->head, n);
  if (c)
    return c;
  if (x->head.path_size != y->head.path_size)
    return x->head.path_size < y->head.path_size ? -1 : 1;
  /* An embedded copy before a missing one: it is the one kept. */
  return x->head.state < y->head.state ? -1 : x->head.state > y->head.state;
}

int mprof__merge_sources(const mprof_trace *const *traces, size_t count,
                         unsigned char **out, size_t *size) {
  source_ref *refs = NULL;
  size_t n = 0, cap = 0, bytes = 0;
  *out = NULL;
  *size = 0;
  for (size_t i = 0; i < count; i++) {
    size_t length;
    const unsigned char *data = (const unsigned char *)mprof_trace_section(
        traces[i], MPROF_SECTION_SOURCES, &length);
    mprof_source_entry e;
    for (size_t at = 0; data && at + sizeof e <= length; at += e.entry_size) {
      memcpy(&e, data + at, sizeof e);
      if (MPROF__GROW(refs, cap, n + 1)) {
        free(refs);
        return mprof__error_set(MPROF_ENOMEM, "sources: out of memory");
      }
      refs[n].at = data + at;
      refs[n++].head = e;
    }
  }
  if (!n)
    return 0;
  qsort(refs, n, sizeof *refs, by_source_path);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (!kept || refs[kept - 1].head.path_size != refs[i].head.path_size ||
        memcmp(refs[kept - 1].at + sizeof refs[i].head,
               refs[i].at + sizeof refs[i].head, refs[i].head.path_size)) {
      refs[kept++] = refs[i];
      bytes += refs[i].head.entry_size;
    }
  unsigned char *data = (unsigned char *)malloc(bytes ? bytes : 1);
  if (!data) {
    free(refs);
    return mprof__error_set(MPROF_ENOMEM, "sources: out of memory");
  }
  for (size_t i = 0, at = 0; i < kept; i++) {
    memcpy(data + at, refs[i].at, refs[i].head.entry_size);
    at += refs[i].head.entry_size;
  }
  free(refs);
  *out = data;
  *size = bytes;
  return 0;
}

/* Put the SOURCES entries of all @p traces into the merged file at @p path,
 * each path once, in path order (the writer does not stream them). */
static int merge_sources(const mprof_trace *const *traces, size_t count,
                         const char *path) {
  unsigned char *data;
  size_t bytes;
  int rc = mprof__merge_sources(traces, count, &data, &bytes);
  if (!rc && data)
    rc = mprof__trace_put_section(path, MPROF_SECTION_SOURCES, data, bytes);
  free(data);
  return rc;
}

int mprof__merge_moves(const mprof_trace *const *traces, size_t count,
                       mprof__move *moves, uint32_t *processes) {
  mprof__move next;
  memset(&next, 0, sizeof next);
  for (size_t i = 0; i < count; i++) {
    size_t n;
    moves[i] = next;
    /* The shim's table too: a trace written before PROCESSES is a process. */
    next.base[MPROF_SECTION_PROCESSES] +=
        (uint32_t)mprof_trace_process_count(traces[i]);
    moves[i].shift = clock_shift(traces[0], traces[i]);
    for (size_t s = 0; s < sizeof indexed_sections / sizeof indexed_sections[0];
         s++) {
      mprof_trace_section(traces[i], (mprof_section_type)indexed_sections[s],
                          &n);
      next.base[indexed_sections[s]] += (uint32_t)n;
    }
  }
  *processes = next.base[MPROF_SECTION_PROCESSES];
  return 0;
}

void mprof__merge_correlations(const mprof_trace *const *traces, size_t count,
                               mprof__move *moves) {
  uint32_t next = 0;
  for (size_t i = 0; i < count; i++) {
    moves[i].correlations = next;
    /* Past 2^32 ids a trace keeps its own (its joins may then meet). */
    uint64_t top = (uint64_t)next + max_correlation(traces[i]);
    if (top > UINT32_MAX)
      moves[i].correlations = 0;
    else
      next = (uint32_t)top;
  }
}

static int writer_meta(void *w, const char *key, const char *value) {
  return mprof_writer_meta((mprof_writer *)w, key, value);
}

int mprof_trace_merge(const mprof_trace *const *traces, size_t count,
                      const char *path) {
  if (!traces || !count || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_merge: nothing to do");
  mprof__move *bases = (mprof__move *)calloc(count, sizeof *bases);
  if (!bases)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  uint32_t processes;
  mprof__merge_moves(traces, count, bases, &processes);
  mprof__merge_correlations(traces, count, bases);
  mprof_writer *w;
  /* Every string keeps one reference, as in the traces copied: this runs
   * after the capture, where memory is not the program's. */
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.strings_unique_cap = MPROF_WRITER_STRINGS_ALL;
  int rc = mprof_writer_open(&w, path, &opts);
  if (rc) {
    free(bases);
    return rc;
  }
  rc = mprof__merge_meta(traces, count, bases, processes, writer_meta, w);
  for (size_t i = 0; i < count && !rc; i++) {
    rc = merge_one(w, traces[i], &bases[i]);
    if (!rc)
      rc = merge_events(w, traces[i], &bases[i]);
  }
  free(bases);
  if (rc) {
    mprof_writer_abort(w);
    return rc;
  }
  rc = mprof_writer_finish(w);
  return rc ? rc : merge_sources(traces, count, path);
}
