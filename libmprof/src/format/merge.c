/*
 * mprof — merge the traces of one run (one per process) into one trace.
 *
 * Every table is appended trace after trace, so a record of trace i that
 * referred to index k of a table now refers to (that table's count in the
 * traces before i) + k. Times move onto the first trace's clock through the
 * clock anchors each trace stores (the same instant on its trace clock and
 * on CLOCK_REALTIME); traces of one host share CLOCK_MONOTONIC_RAW and are
 * not moved. Each trace's META comes over under "process.N." (N its place
 * in the merge), and its streams are named after its process.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

typedef struct merge_base {
  /* Per section: the records of the traces before this one, added to this
   * trace's indexes into it. */
  uint32_t base[MPROF_SECTION_TYPE_MAX_ + 1];
  /* Added to this trace's correlation ids: each process numbers its own
   * from 1, so in a set they would meet (a call joined to another
   * process's launch). */
  uint32_t correlations;
  int64_t shift; /* ns added to this trace's times */
} merge_base;

/* How a record's fields move into the merged trace: times onto the first
 * trace's clock, indexes past the earlier traces' records, correlation ids
 * past theirs, string refs into the merged string table. */
enum { F_TIME, F_INDEX, F_CORRELATION, F_STRING };

typedef struct field_move {
  uint32_t section;
  uint8_t kind;
  uint16_t offset;
  uint32_t target; /* F_INDEX: the section indexed */
} field_move;

#define TIME(sec, type, f)                                                     \
  { MPROF_SECTION_##sec, F_TIME, offsetof(type, f), 0 }
#define INDEX(sec, type, f, target)                                            \
  { MPROF_SECTION_##sec, F_INDEX, offsetof(type, f), MPROF_SECTION_##target }
#define CORR(sec, type, f)                                                     \
  { MPROF_SECTION_##sec, F_CORRELATION, offsetof(type, f), 0 }
#define STRING(sec, type, f)                                                   \
  { MPROF_SECTION_##sec, F_STRING, offsetof(type, f), 0 }

static const field_move field_moves[] = {
    STRING(DEVICES, mprof_device_record, name),
    STRING(KERNELS, mprof_kernel_record, mangled_name),
    STRING(KERNELS, mprof_kernel_record, demangled_name),
    INDEX(KERNELS, mprof_kernel_record, device, DEVICES),
    INDEX(SHAPES, mprof_shape_record, kernel, KERNELS),
    TIME(LAUNCHES, mprof_launch_record, start),
    TIME(LAUNCHES, mprof_launch_record, end),
    INDEX(LAUNCHES, mprof_launch_record, shape, SHAPES),
    INDEX(LAUNCHES, mprof_launch_record, stream, STREAMS),
    CORR(LAUNCHES, mprof_launch_record, correlation_id),
    TIME(MEMOPS, mprof_memop_record, start),
    TIME(MEMOPS, mprof_memop_record, end),
    INDEX(MEMOPS, mprof_memop_record, stream, STREAMS),
    CORR(MEMOPS, mprof_memop_record, correlation_id),
    TIME(RANGES, mprof_range_record, start),
    TIME(RANGES, mprof_range_record, end),
    STRING(RANGES, mprof_range_record, name),
    STRING(RANGES, mprof_range_record, domain),
    INDEX(MEMORY_ACCESSES, mprof_memory_access_record, kernel, KERNELS),
    TIME(API_CALLS, mprof_api_call_record, start),
    TIME(API_CALLS, mprof_api_call_record, end),
    STRING(API_CALLS, mprof_api_call_record, name),
    CORR(API_CALLS, mprof_api_call_record, correlation_id),
    STRING(REGIONS, mprof_region_record, name),
    TIME(SPANS, mprof_span_record, start),
    TIME(SPANS, mprof_span_record, end),
    INDEX(SPANS, mprof_span_record, launch, LAUNCHES),
    INDEX(SPANS, mprof_span_record, region, REGIONS),
    STRING(STALL_REASONS, mprof_stall_reason_record, name),
    INDEX(STALL_REASONS, mprof_stall_reason_record, device, DEVICES),
    STRING(PC_SAMPLES, mprof_pc_sample_record, function_name),
    INDEX(PC_SAMPLES, mprof_pc_sample_record, device, DEVICES),
    CORR(PC_SAMPLES, mprof_pc_sample_record, correlation_id),
    STRING(PM_METRICS, mprof_pm_metric_record, name),
    STRING(PM_METRICS, mprof_pm_metric_record, unit),
    INDEX(PM_METRICS, mprof_pm_metric_record, device, DEVICES),
    TIME(PM_SAMPLES, mprof_pm_sample_record, start),
    TIME(PM_SAMPLES, mprof_pm_sample_record, end),
    INDEX(PM_SAMPLES, mprof_pm_sample_record, device, DEVICES),
};
#undef TIME
#undef INDEX
#undef CORR
#undef STRING

/* The sections whose records only move (in file order of dependence). */
static const uint32_t moved_sections[] = {
    MPROF_SECTION_LAUNCHES,   MPROF_SECTION_MEMOPS,
    MPROF_SECTION_RANGES,     MPROF_SECTION_MEMORY_ACCESSES,
    MPROF_SECTION_API_CALLS,  MPROF_SECTION_REGIONS,
    MPROF_SECTION_SPANS,      MPROF_SECTION_STALL_REASONS,
    MPROF_SECTION_PC_SAMPLES, MPROF_SECTION_PM_METRICS,
    MPROF_SECTION_PM_SAMPLES};

/* The sections whose record counts move later traces' indexes. */
static const uint32_t indexed_sections[] = {
    MPROF_SECTION_DEVICES, MPROF_SECTION_STREAMS,  MPROF_SECTION_KERNELS,
    MPROF_SECTION_SHAPES,  MPROF_SECTION_LAUNCHES, MPROF_SECTION_REGIONS};

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
  const char *host0 = mprof_trace_meta(first, "host");
  const char *host = mprof_trace_meta(t, "host");
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

static uint64_t shifted(uint64_t time, int64_t shift) {
  if (!time)
    return 0;
  int64_t moved = (int64_t)time + shift;
  return moved > 0 ? (uint64_t)moved : 0;
}

static uint32_t moved(uint32_t index, uint32_t base) {
  return index == MPROF_INDEX_NONE ? index : index + base;
}

/* A correlation id moved past the previous traces'; 0 stays unknown. */
static uint32_t correlated(uint32_t id, uint32_t base) {
  return id ? id + base : 0;
}

/* The largest correlation id of @p t (launches, copies, calls, samples). */
static uint64_t max_correlation(const mprof_trace *t) {
  uint64_t top = 0;
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  for (size_t i = 0; i < n; i++)
    top = l[i].correlation_id > top ? l[i].correlation_id : top;
  const mprof_memop_record *m = mprof_trace_memops(t, &n);
  for (size_t i = 0; i < n; i++)
    top = m[i].correlation_id > top ? m[i].correlation_id : top;
  const mprof_api_call_record *c = mprof_trace_api_calls(t, &n);
  for (size_t i = 0; i < n; i++)
    top = c[i].correlation_id > top ? c[i].correlation_id : top;
  const mprof_pc_sample_record *p = mprof_trace_pc_samples(t, &n);
  for (size_t i = 0; i < n; i++)
    top = p[i].correlation_id > top ? p[i].correlation_id : top;
  return top;
}

#define EACH(rec_type, accessor)                                               \
  size_t n_##accessor;                                                         \
  const rec_type *r_##accessor = accessor(t, &n_##accessor);                   \
  for (size_t i = 0; i < n_##accessor && !rc; i++)

/* Append the records of @p section of @p t to @p w, their fields moved
 * (field_moves). */
static int move_section(mprof_writer *w, const mprof_trace *t, uint32_t section,
                        const merge_base *b) {
  size_t n, size = mprof__record_size(section);
  const uint8_t *recs =
      (const uint8_t *)mprof_trace_section(t, (mprof_section_type)section, &n);
  uint8_t rec[256];
  if (size > sizeof rec)
    return mprof__error_set(MPROF_EFORMAT, "%s: records of %u bytes",
                            mprof_section_name(section), (unsigned)size);
  /* The section's moves, found once, not per record. */
  const field_move *mine[sizeof field_moves / sizeof field_moves[0]];
  size_t count = 0;
  for (size_t c = 0; c < sizeof field_moves / sizeof field_moves[0]; c++)
    if (field_moves[c].section == section)
      mine[count++] = &field_moves[c];
  for (size_t i = 0; i < n; i++) {
    memcpy(rec, recs + i * size, size);
    for (size_t c = 0; c < count; c++) {
      const field_move *f = mine[c];
      uint8_t *at = rec + f->offset;
      if (f->kind == F_TIME) {
        uint64_t v;
        memcpy(&v, at, sizeof v);
        v = shifted(v, b->shift);
        memcpy(at, &v, sizeof v);
        continue;
      }
      uint32_t v;
      memcpy(&v, at, sizeof v);
      if (f->kind == F_INDEX)
        v = moved(v, b->base[f->target]);
      else if (f->kind == F_CORRELATION)
        v = correlated(v, b->correlations);
      else
        v = mprof_writer_string(w, mprof_trace_string(t, v));
      memcpy(at, &v, sizeof v);
    }
    int rc = mprof_writer_append(w, NULL, section, rec);
    if (rc)
      return rc;
  }
  return 0;
}

static int merge_one(mprof_writer *w, const mprof_trace *t, size_t index,
                     const merge_base *b) {
  int rc = 0;
  char key[256];
  const char *pid = mprof_trace_meta(t, "pid");
  {
    EACH(mprof_meta_record, mprof_trace_meta_records) {
      snprintf(key, sizeof key, "process.%zu.%s", index,
               mprof_trace_string(t, r_mprof_trace_meta_records[i].key));
      rc = mprof_writer_meta(
          w, key, mprof_trace_string(t, r_mprof_trace_meta_records[i].value));
    }
  }
  snprintf(key, sizeof key, "process.%zu.path", index);
  if (!rc)
    rc = mprof_writer_meta(w, key, mprof_trace_path(t));
  snprintf(key, sizeof key, "process.%zu.clock_shift_ns", index);
  char value[48];
  snprintf(value, sizeof value, "%" PRId64, b->shift);
  if (!rc)
    rc = mprof_writer_meta(w, key, value);
  /* Which devices and streams are this process's: the ranges its tables
   * took (mprof_trace_stream_process() reads them). */
  size_t n;
  mprof_trace_devices(t, &n);
  snprintf(key, sizeof key, "process.%zu.devices", index);
  snprintf(value, sizeof value, "%" PRIu32 " %zu",
           b->base[MPROF_SECTION_DEVICES], n);
  if (!rc)
    rc = mprof_writer_meta(w, key, value);
  mprof_trace_streams(t, &n);
  snprintf(key, sizeof key, "process.%zu.streams", index);
  snprintf(value, sizeof value, "%" PRIu32 " %zu",
           b->base[MPROF_SECTION_STREAMS], n);
  if (!rc)
    rc = mprof_writer_meta(w, key, value);
  if (!rc)
    rc = move_section(w, t, MPROF_SECTION_DEVICES, b);
  {
    EACH(mprof_stream_record, mprof_trace_streams) {
      mprof_stream_record rec = r_mprof_trace_streams[i];
      const char *name = mprof_trace_string(t, rec.name);
      char named[512];
      if (*name)
        snprintf(named, sizeof named, "pid %s \u00b7 %s", pid ? pid : "?",
                 name);
      else
        snprintf(named, sizeof named, "pid %s \u00b7 stream %u",
                 pid ? pid : "?", rec.stream_id);
      rec.name = mprof_writer_string(w, named);
      rec.device = moved(rec.device, b->base[MPROF_SECTION_DEVICES]);
      rc = mprof_writer_append(w, NULL, MPROF_SECTION_STREAMS, &rec);
    }
  }
  if (!rc)
    rc = move_section(w, t, MPROF_SECTION_KERNELS, b);
  if (!rc)
    rc = move_section(w, t, MPROF_SECTION_SHAPES, b);
  return rc;
}

/* The records that refer to the tables merge_one() wrote. */
static int merge_events(mprof_writer *w, const mprof_trace *t,
                        const merge_base *b) {
  int rc = 0;
  for (size_t s = 0;
       s < sizeof moved_sections / sizeof moved_sections[0] && !rc; s++)
    rc = move_section(w, t, moved_sections[s], b);
  size_t n;
  const mprof_cubin_record *cubins = mprof_trace_cubins(t, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_cubin_record rec = cubins[i];
    size_t size = 0;
    const void *blob = mprof_trace_cubin_blob(t, &rec, &size);
    rec.device = moved(rec.device, b->base[MPROF_SECTION_DEVICES]);
    rc = mprof_writer_cubin(w, &rec, blob, size);
  }
  const mprof_drop_record *drops = mprof_trace_drops(t, &n);
  for (size_t i = 0; i < n && !rc; i++)
    rc = mprof_writer_drop(
        w, (mprof_drop_kind)drops[i].kind,
        moved(drops[i].device, b->base[MPROF_SECTION_DEVICES]), drops[i].count);
  return rc;
}

int mprof_trace_merge(const mprof_trace *const *traces, size_t count,
                      const char *path) {
  if (!traces || !count || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_merge: nothing to do");
  merge_base *bases = (merge_base *)calloc(count, sizeof *bases);
  if (!bases)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  merge_base next;
  memset(&next, 0, sizeof next);
  for (size_t i = 0; i < count; i++) {
    size_t n;
    bases[i] = next;
    bases[i].shift = clock_shift(traces[0], traces[i]);
    for (size_t s = 0; s < sizeof indexed_sections / sizeof indexed_sections[0];
         s++) {
      mprof_trace_section(traces[i], (mprof_section_type)indexed_sections[s],
                          &n);
      next.base[indexed_sections[s]] += (uint32_t)n;
    }
    /* Past 2^32 ids a trace keeps its own (its joins may then meet). */
    uint64_t top = (uint64_t)next.correlations + max_correlation(traces[i]);
    if (top > UINT32_MAX)
      bases[i].correlations = 0;
    else
      next.correlations = (uint32_t)top;
  }
  mprof_writer *w;
  int rc = mprof_writer_open(&w, path, NULL);
  if (rc) {
    free(bases);
    return rc;
  }
  const mprof_trace *t = traces[0];
  /* The merged trace's own META: the first trace's clock and anchors, and
   * how many processes it holds. */
  static const char *const own[] = {"tool", "tool.version", "clock",
                                    "clock.anchor.trace_ns",
                                    "clock.anchor.realtime_ns"};
  for (size_t i = 0; i < sizeof own / sizeof own[0] && !rc; i++) {
    const char *value = mprof_trace_meta(t, own[i]);
    if (value)
      rc = mprof_writer_meta(w, own[i], value);
  }
  char value[32];
  snprintf(value, sizeof value, "%zu", count);
  if (!rc)
    rc = mprof_writer_meta(w, "merge.processes", value);
  int partial = 0;
  for (size_t i = 0; i < count && !rc; i++) {
    partial |= mprof_trace_partial(traces[i], NULL);
    rc = merge_one(w, traces[i], i, &bases[i]);
    if (!rc)
      rc = merge_events(w, traces[i], &bases[i]);
  }
  /* A set with a process cut short is itself incomplete. */
  if (!rc && partial)
    rc = mprof_writer_meta(w, "capture.partial", "1");
  free(bases);
  if (rc) {
    mprof_writer_abort(w);
    return rc;
  }
  return mprof_writer_finish(w);
}

int mprof_trace_open_merged(mprof_trace **out, const mprof_trace *const *traces,
                            size_t count, const char *name) {
  if (!out || !traces || !count)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_open_merged: nothing "
                                          "to open");
  *out = NULL;
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  char scratch[4096];
  if (snprintf(scratch, sizeof scratch, "%s/mprof-set-XXXXXX.mprof", dir) >=
      (int)sizeof scratch)
    return mprof__error_set(MPROF_EINVAL, "TMPDIR is too long");
  int fd = mkstemps(scratch, (int)strlen(".mprof"));
  if (fd < 0)
    return mprof__error_set(MPROF_EIO,
                            "cannot create a scratch trace in %s: %s (set "
                            "TMPDIR to a writable directory)",
                            dir, strerror(errno));
  close(fd);
  int rc = mprof_trace_merge(traces, count, scratch);
  /* Just written from validated traces: its checksums need no second
   * pass (bounds and references are still checked). */
  mprof_open_options opts = MPROF_OPEN_OPTIONS_INIT;
  opts.flags = MPROF_OPEN_NO_CHECKSUMS;
  if (!rc)
    rc = mprof_trace_open(out, scratch, &opts);
  /* The mapping stays valid once the name is gone. */
  unlink(scratch);
  if (!rc && name)
    rc = mprof__trace_set_path(*out, name);
  if (rc) {
    mprof_trace_free(*out);
    *out = NULL;
  }
  return rc;
}
