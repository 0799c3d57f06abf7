/*
 * mprof — .mprof reader: mmap, validate everything once, then hand out
 * records in place. Validation: trace_validate.c; streamed files:
 * trace_streamed.c; the processes (PROCESSES): processes.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "internal.h"
#include "mprof/reasons.h"
#include "mprof/trace.h"
#include "format/trace_internal.h"

MPROF__VERSIONS(open_options, "open options",
                MPROF__END_OF(mprof_open_options, flags));

int mprof_open_options_init(mprof_open_options *opts, unsigned version) {
  mprof_open_options init = MPROF_OPEN_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &open_options);
}

int mprof_trace_open(mprof_trace **out, const char *path,
                     const mprof_open_options *opts) {
  static const mprof_open_options defaults = MPROF_OPEN_OPTIONS_INIT;
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_open: NULL argument");
  *out = NULL;
  opts = mprof__options_or_defaults(opts, &defaults, MPROF_OPEN_OPTIONS_VERSION,
                                    MPROF_OPEN_OPTIONS_VERSION, "open");
  if (!opts)
    return MPROF_EVERSION;
  mprof__file_map file;
  int rc = mprof__file_map_open(&file, path, MPROF__MAP_SEQUENTIAL);
  if (rc)
    return rc;
  mprof_trace *t = (mprof_trace *)calloc(1, sizeof *t);
  if (!t || !(t->path = strdup(path))) {
    free(t);
    mprof__file_map_close(&file);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  t->map = file.data;
  t->map_size = file.size;
  rc = 0;
  if (t->map_size >= sizeof(mprof_file_header) &&
      memcmp(t->map, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE) == 0 &&
      ((const mprof_file_header *)t->map)->version_major ==
          MPROF_FORMAT_VERSION_MAJOR &&
      (((const mprof_file_header *)t->map)->flags & MPROF_FILE_FLAG_STREAMED))
    rc = mprof__trace_open_streamed(t, opts);
  if (!rc)
    rc = mprof__trace_validate_header(t, opts);
  if (!rc)
    rc = mprof__trace_validate_directory(t, opts);
  if (!rc)
    rc = mprof__trace_validate_tables(t);
  if (!rc)
    rc = mprof__trace_validate_launches(t);
  if (!rc)
    rc = mprof__trace_index_processes(t);
  if (rc) {
    mprof_trace_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

void mprof_trace_free(mprof_trace *trace) {
  if (!trace)
    return;
  /* Still held by a set (or its owner has yet to free it). */
  if (__atomic_fetch_sub(&trace->holders, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  mprof__set_free(trace);
  if (trace->image) {
    free(trace->image);
  } else if (trace->map) {
    mprof__file_map file = {trace->map, trace->map_size};
    mprof__file_map_close(&file);
  }
  for (size_t i = 0; i < SECTION_COUNT; i++)
    free(trace->sections[i].owned);
  free(trace->stream_first);
  free(trace->stream_max_duration);
  free(trace->order);
  mprof__trace_free_processes(trace);
  free(trace->path);
  free(trace);
}

int mprof__trace_set_path(mprof_trace *trace, const char *path) {
  char *copy = strdup(path);
  if (!copy)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  free(trace->path);
  trace->path = copy;
  return 0;
}

const char *mprof_trace_path(const mprof_trace *trace) {
  return trace ? trace->path : "";
}

uint64_t mprof_trace_file_size(const mprof_trace *trace) {
  return trace ? trace->map_size : 0;
}

void mprof_trace_format_version(const mprof_trace *trace, unsigned *major,
                                unsigned *minor) {
  const mprof_file_header *h = trace && trace->map_size >= sizeof *h
                                   ? (const mprof_file_header *)trace->map
                                   : NULL;
  if (major)
    *major = h ? h->version_major : 0;
  if (minor)
    *minor = h ? h->version_minor : 0;
}

uint32_t mprof_trace_flags(const mprof_trace *trace) {
  return trace ? trace->flags : 0;
}

const char *mprof_trace_string(const mprof_trace *trace, uint32_t ref) {
  if (!trace)
    return "";
  const section_view *s = &trace->sections[MPROF_SECTION_STRINGS];
  if (ref >= s->length)
    return "";
  return (const char *)s->data + ref;
}

const void *mprof_trace_section(const mprof_trace *trace,
                                mprof_section_type type, size_t *count) {
  if (count)
    *count = 0;
  if (!trace || (uint32_t)type == 0 || (uint32_t)type >= SECTION_COUNT)
    return NULL;
  if (trace->set && mprof__set_section(trace, (uint32_t)type))
    return NULL;
  const section_view *v = &trace->sections[type];
  if (count)
    *count = v->count;
  return v->count ? v->data : NULL;
}

#define TYPED_ACCESSOR(fn, rec, type)                                          \
  const rec *fn(const mprof_trace *trace, size_t *count) {                     \
    return (const rec *)mprof_trace_section(trace, type, count);               \
  }
TYPED_ACCESSOR(mprof_trace_meta_records, mprof_meta_record, MPROF_SECTION_META)
TYPED_ACCESSOR(mprof_trace_devices, mprof_device_record, MPROF_SECTION_DEVICES)
TYPED_ACCESSOR(mprof_trace_streams, mprof_stream_record, MPROF_SECTION_STREAMS)
TYPED_ACCESSOR(mprof_trace_kernels, mprof_kernel_record, MPROF_SECTION_KERNELS)
TYPED_ACCESSOR(mprof_trace_shapes, mprof_shape_record, MPROF_SECTION_SHAPES)
TYPED_ACCESSOR(mprof_trace_launches, mprof_launch_record,
               MPROF_SECTION_LAUNCHES)
TYPED_ACCESSOR(mprof_trace_memops, mprof_memop_record, MPROF_SECTION_MEMOPS)
TYPED_ACCESSOR(mprof_trace_ranges, mprof_range_record, MPROF_SECTION_RANGES)
TYPED_ACCESSOR(mprof_trace_regions, mprof_region_record, MPROF_SECTION_REGIONS)
TYPED_ACCESSOR(mprof_trace_spans, mprof_span_record, MPROF_SECTION_SPANS)
TYPED_ACCESSOR(mprof_trace_stall_reasons, mprof_stall_reason_record,
               MPROF_SECTION_STALL_REASONS)
TYPED_ACCESSOR(mprof_trace_pc_samples, mprof_pc_sample_record,
               MPROF_SECTION_PC_SAMPLES)
TYPED_ACCESSOR(mprof_trace_cubins, mprof_cubin_record, MPROF_SECTION_CUBINS)
TYPED_ACCESSOR(mprof_trace_drops, mprof_drop_record, MPROF_SECTION_DROPS)
TYPED_ACCESSOR(mprof_trace_pm_metrics, mprof_pm_metric_record,
               MPROF_SECTION_PM_METRICS)
TYPED_ACCESSOR(mprof_trace_pm_samples, mprof_pm_sample_record,
               MPROF_SECTION_PM_SAMPLES)
TYPED_ACCESSOR(mprof_trace_api_calls, mprof_api_call_record,
               MPROF_SECTION_API_CALLS)
const char *mprof_capture_end_name(uint32_t end_reason) {
  switch (end_reason) {
  case MPROF_CAPTURE_END_OPEN: return "open";
  case MPROF_CAPTURE_END_EXIT: return "exit";
  case MPROF_CAPTURE_END_RANGE_COUNT: return "range_count";
  case MPROF_CAPTURE_END_KERNEL_COUNT: return "kernel_count";
  case MPROF_CAPTURE_END_DURATION: return "duration";
  case MPROF_CAPTURE_END_MAX_SIZE: return "max_size";
  case MPROF_CAPTURE_END_NEVER_OPENED: return "never_opened";
  default: return "unknown";
  }
}

TYPED_ACCESSOR(mprof_trace_captures, mprof_capture_record,
               MPROF_SECTION_CAPTURE)
TYPED_ACCESSOR(mprof_trace_memory_accesses, mprof_memory_access_record,
               MPROF_SECTION_MEMORY_ACCESSES)

const char *mprof_trace_meta(const mprof_trace *trace, const char *key) {
  size_t n;
  const mprof_meta_record *meta = mprof_trace_meta_records(trace, &n);
  if (!key)
    return NULL;
  for (size_t i = n; i-- > 0;)
    if (strcmp(mprof_trace_string(trace, meta[i].key), key) == 0)
      return mprof_trace_string(trace, meta[i].value);
  return NULL;
}

const void *mprof_trace_cubin_blob(const mprof_trace *trace,
                                   const mprof_cubin_record *cubin,
                                   size_t *size) {
  if (size)
    *size = 0;
  if (!trace || !cubin || !cubin->blob_size)
    return NULL;
  if (trace->set)
    return mprof__set_cubin_blob(trace, cubin, size);
  const section_view *b = &trace->sections[MPROF_SECTION_BLOBS];
  if (cubin->blob_offset > b->length ||
      cubin->blob_size > b->length - cubin->blob_offset)
    return NULL;
  if (size)
    *size = (size_t)cubin->blob_size;
  return b->data + cubin->blob_offset;
}

/* Whether (device, index) names an X_not_issued reason in @p reasons. */
static int reason_not_issued(const mprof_trace *trace,
                             const mprof_stall_reason_record *reasons,
                             size_t count, uint32_t device, uint32_t index) {
  for (size_t k = 0; k < count; k++)
    if (reasons[k].device == device && reasons[k].index == index)
      return mprof_stall_reason_is_not_issued(
          mprof_trace_string(trace, reasons[k].name));
  return 0;
}

uint64_t mprof_trace_pc_sample_total(const mprof_trace *trace,
                                     uint64_t *not_issued) {
  size_t n, reason_count;
  const mprof_pc_sample_record *r = mprof_trace_pc_samples(trace, &n);
  const mprof_stall_reason_record *reasons =
      mprof_trace_stall_reasons(trace, &reason_count);
  /* The answers for the usual devices and indexes, looked up once each:
   * bit 2 set once known, bit 1 the answer. */
  enum { DEVICES = 64, INDEXES = 256 };
  unsigned char known[DEVICES * INDEXES];
  memset(known, 0, sizeof known);
  uint64_t plain = 0, twin = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t device = r[i].device, index = r[i].stall_reason;
    int is_twin;
    if (device < DEVICES && index < INDEXES) {
      unsigned char *k = &known[device * INDEXES + index];
      if (!*k)
        *k = (unsigned char)(2 | reason_not_issued(trace, reasons, reason_count,
                                                   device, index));
      is_twin = *k & 1;
    } else {
      is_twin = reason_not_issued(trace, reasons, reason_count, device, index);
    }
    if (is_twin)
      twin += r[i].samples;
    else
      plain += r[i].samples;
  }
  if (not_issued)
    *not_issued = twin;
  return plain;
}

uint64_t mprof_trace_drop_total(const mprof_trace *trace,
                                mprof_drop_kind kind) {
  size_t n;
  const mprof_drop_record *d = mprof_trace_drops(trace, &n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    if (d[i].kind == (uint32_t)kind)
      total += d[i].count;
  return total;
}

void mprof_trace_time_bounds(const mprof_trace *trace, uint64_t *start,
                             uint64_t *end) {
  if (start)
    *start = trace ? trace->time_start : 0;
  if (end)
    *end = trace ? trace->time_end : 0;
}

int mprof_trace_partial(const mprof_trace *trace, uint64_t *covered_ns) {
  if (covered_ns)
    *covered_ns = 0;
  const char *partial = mprof_trace_meta(trace, "capture.partial");
  if (!partial || strcmp(partial, "1") != 0)
    return 0;
  const char *start = mprof_trace_meta(trace, "clock.anchor.trace_ns");
  const char *last = mprof_trace_meta(trace, "capture.checkpoint_ns");
  if (covered_ns && start && last) {
    unsigned long long a = strtoull(start, NULL, 10);
    unsigned long long b = strtoull(last, NULL, 10);
    *covered_ns = b > a ? (uint64_t)(b - a) : 0;
  }
  return 1;
}

size_t mprof_trace_stream_launch_count(const mprof_trace *trace,
                                       uint32_t stream) {
  if (!trace || stream >= trace->sections[MPROF_SECTION_STREAMS].count)
    return 0;
  return trace->stream_first[stream + 1] - trace->stream_first[stream];
}

const mprof_launch_record *mprof_trace_stream_launch(const mprof_trace *trace,
                                                     uint32_t stream,
                                                     size_t position) {
  if (position >= mprof_trace_stream_launch_count(trace, stream))
    return NULL;
  const mprof_launch_record *l = mprof_trace_launches(trace, NULL);
  size_t at = trace->stream_first[stream] + position;
  return &l[trace->order ? trace->order[at] : at];
}

/* First position in @p stream whose start is >= @p time. */
static size_t lower_bound_start(const mprof_trace *trace, uint32_t stream,
                                uint64_t time) {
  size_t lo;
  MPROF__LOWER_BOUND(lo, mprof_trace_stream_launch_count(trace, stream), mid,
                     mprof_trace_stream_launch(trace, stream, mid)->start <
                         time);
  return lo;
}

int mprof_trace_stream_find(const mprof_trace *trace, size_t *first,
                            size_t *last, uint32_t stream, uint64_t start,
                            uint64_t end) {
  if (!trace || !first || !last)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_stream_find: NULL");
  if (stream >= trace->sections[MPROF_SECTION_STREAMS].count)
    return mprof__error_set(MPROF_EINVAL, "%s: stream %u does not exist",
                            trace->path, stream);
  /* A launch overlapping [start, end) starts before `end` and after
   * start - (longest launch on the stream); skip the few in that window
   * that ended too early. */
  uint64_t longest = trace->stream_max_duration[stream];
  uint64_t from = start > longest ? start - longest : 0;
  size_t lo = lower_bound_start(trace, stream, from);
  size_t hi = lower_bound_start(trace, stream, end);
  while (lo < hi && mprof_trace_stream_launch(trace, stream, lo)->end <= start)
    lo++;
  *first = lo;
  *last = hi < lo ? lo : hi;
  return 0;
}
