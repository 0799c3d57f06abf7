/*
 * mprof — .mprof reader: mmap, validate everything once, then hand out
 * records in place.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

#define SECTION_COUNT (MPROF_SECTION_TYPE_MAX_ + 1)

typedef struct section_view {
  const unsigned char *data;
  uint64_t offset; /* in the file, for messages */
  uint64_t length;
  size_t count;
} section_view;

#define PROCESS_FIELDS 5 /* pid, ppid, host, rank, path */

struct mprof_trace {
  char *path;
  const unsigned char *map;
  size_t map_size;
  unsigned char *image; /* a streamed file put together; owns map */
  uint32_t flags;
  section_view sections[SECTION_COUNT];
  /* Per-stream launch order: stream s owns positions
   * [stream_first[s], stream_first[s + 1]) of `order` (or of the launch
   * array itself when the file is already sorted and order is NULL). */
  size_t *stream_first;
  uint32_t *order;
  uint64_t *stream_max_duration;
  uint64_t time_start, time_end;
  /* The processes of a merged set (META process.N.*): how many, and each
   * stream's and device's process. */
  size_t process_count;
  uint32_t *stream_process;
  uint32_t *device_process;
  const char **process_meta; /* PROCESS_FIELDS per process; NULL unknown */
};

static const char *const section_names[SECTION_COUNT] = {
    "UNKNOWN",        "STRINGS", "META",          "DEVICES",    "STREAMS",
    "KERNELS",        "SHAPES",  "LAUNCHES",      "MEMOPS",     "RANGES",
    "REGIONS",        "SPANS",   "STALL_REASONS", "PC_SAMPLES", "CUBINS",
    "BLOBS",          "DROPS",   "PM_METRICS",    "PM_SAMPLES", "API_CALLS",
    "MEMORY_ACCESSES"};

const char *mprof_section_name(uint32_t type) {
  return type < SECTION_COUNT ? section_names[type] : "UNKNOWN";
}

static uint32_t expected_record_size(uint32_t type) {
  switch (type) {
  case MPROF_SECTION_STRINGS:
  case MPROF_SECTION_BLOBS: return 1;
  case MPROF_SECTION_META: return sizeof(mprof_meta_record);
  case MPROF_SECTION_DEVICES: return sizeof(mprof_device_record);
  case MPROF_SECTION_STREAMS: return sizeof(mprof_stream_record);
  case MPROF_SECTION_KERNELS: return sizeof(mprof_kernel_record);
  case MPROF_SECTION_SHAPES: return sizeof(mprof_shape_record);
  case MPROF_SECTION_LAUNCHES: return sizeof(mprof_launch_record);
  case MPROF_SECTION_MEMOPS: return sizeof(mprof_memop_record);
  case MPROF_SECTION_RANGES: return sizeof(mprof_range_record);
  case MPROF_SECTION_REGIONS: return sizeof(mprof_region_record);
  case MPROF_SECTION_SPANS: return sizeof(mprof_span_record);
  case MPROF_SECTION_STALL_REASONS: return sizeof(mprof_stall_reason_record);
  case MPROF_SECTION_PC_SAMPLES: return sizeof(mprof_pc_sample_record);
  case MPROF_SECTION_CUBINS: return sizeof(mprof_cubin_record);
  case MPROF_SECTION_DROPS: return sizeof(mprof_drop_record);
  case MPROF_SECTION_PM_METRICS: return sizeof(mprof_pm_metric_record);
  case MPROF_SECTION_PM_SAMPLES: return sizeof(mprof_pm_sample_record);
  case MPROF_SECTION_API_CALLS: return sizeof(mprof_api_call_record);
  case MPROF_SECTION_MEMORY_ACCESSES: return sizeof(mprof_memory_access_record);
  default: return 0;
  }
}

int mprof_open_options_init(mprof_open_options *opts, unsigned version) {
  if (!opts)
    return mprof__error_set(MPROF_EINVAL, "mprof_open_options_init: NULL");
  if (version != MPROF_OPEN_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "open options version %u is not supported (%u)",
                            version, MPROF_OPEN_OPTIONS_VERSION);
  mprof_open_options init = MPROF_OPEN_OPTIONS_INIT;
  *opts = init;
  return 0;
}

/* A parse error: "PATH: SECTION at byte N: what". */
#define BAD(t, type, off, ...) bad_at((t), (type), (uint64_t)(off), __VA_ARGS__)

static int bad_at(const mprof_trace *t, uint32_t type, uint64_t offset,
                  const char *fmt, ...) MPROF__PRINTF(4, 5);

static int bad_at(const mprof_trace *t, uint32_t type, uint64_t offset,
                  const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *where = type == 0 ? "header" : mprof_section_name(type);
  return mprof__error_set(MPROF_EFORMAT,
                          "%s: %s at byte %llu: %s (the file is corrupt or "
                          "truncated; record it again)",
                          t->path, where, (unsigned long long)offset, what);
}

/* Byte offset in the file of record @p index of section @p type. */
static uint64_t record_offset(const mprof_trace *t, uint32_t type,
                              size_t index) {
  return t->sections[type].offset +
         (uint64_t)index * expected_record_size(type);
}

static int check_string(const mprof_trace *t, uint32_t type, size_t index,
                        const char *field, uint32_t ref) {
  if (ref < t->sections[MPROF_SECTION_STRINGS].length)
    return 0;
  return BAD(t, type, record_offset(t, type, index),
             "record %zu: %s refers to string %u, past the string table (%llu "
             "bytes)",
             index, field, ref,
             (unsigned long long)t->sections[MPROF_SECTION_STRINGS].length);
}

static int check_index(const mprof_trace *t, uint32_t type, size_t index,
                       const char *field, uint32_t ref, uint32_t target,
                       int none_ok) {
  if (none_ok && ref == MPROF_INDEX_NONE)
    return 0;
  if (ref < t->sections[target].count)
    return 0;
  return BAD(t, type, record_offset(t, type, index),
             "record %zu: %s %u does not exist (%s has %zu records)", index,
             field, ref, mprof_section_name(target), t->sections[target].count);
}

#define CHECK(expr)                                                            \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_)                                                                   \
      return rc_;                                                              \
  } while (0)

static int validate_header(mprof_trace *t, const mprof_open_options *opts) {
  const mprof_file_header *h = (const mprof_file_header *)t->map;
  if (t->map_size < sizeof *h)
    return BAD(t, 0, t->map_size,
               "the file is %zu bytes, shorter than the 64-byte header",
               t->map_size);
  if (memcmp(h->magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE) != 0)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: header at byte 0: not an mprof trace (bad "
                            "magic; expected a file written by mprof record)",
                            t->path);
  if (h->version_major != MPROF_FORMAT_VERSION_MAJOR)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: header at byte 8: format version %u.%u is "
                            "not supported (this mprof reads %u.x; upgrade "
                            "mprof)",
                            t->path, h->version_major, h->version_minor,
                            MPROF_FORMAT_VERSION_MAJOR);
  if (!(opts->flags & MPROF_OPEN_NO_CHECKSUMS) &&
      mprof_crc32c(0, h, 40) != h->header_checksum)
    return BAD(t, 0, 40, "header checksum mismatch");
  if (h->flags & ~MPROF_FILE_FLAGS_KNOWN)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: header at byte 12: unknown flags 0x%x "
                            "(written by a newer mprof; upgrade mprof)",
                            t->path, h->flags & ~MPROF_FILE_FLAGS_KNOWN);
  for (size_t i = 0; i < sizeof h->reserved; i++)
    if (h->reserved[i])
      return BAD(t, 0, 44 + i, "reserved byte is not zero");
  if (h->file_size != t->map_size)
    return BAD(t, 0, 32, "header says %llu bytes but the file has %zu",
               (unsigned long long)h->file_size, t->map_size);
  uint64_t dir_size = (uint64_t)h->section_count * sizeof(mprof_section_entry);
  if (h->directory_offset < sizeof *h || (h->directory_offset & 7) ||
      h->directory_offset > t->map_size ||
      dir_size > t->map_size - h->directory_offset)
    return BAD(t, 0, 16,
               "section directory (%u entries at %llu) is out of "
               "bounds",
               h->section_count, (unsigned long long)h->directory_offset);
  t->flags = h->flags;
  return 0;
}

static int validate_directory(mprof_trace *t, const mprof_open_options *opts) {
  const mprof_file_header *h = (const mprof_file_header *)t->map;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(t->map + h->directory_offset);
  size_t dir_size = (size_t)h->section_count * sizeof *dir;
  if (!(opts->flags & MPROF_OPEN_NO_CHECKSUMS) &&
      mprof_crc32c(0, dir, dir_size) != h->directory_checksum)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: directory at byte %llu: checksum mismatch "
                            "(the file is corrupt; record it again)",
                            t->path, (unsigned long long)h->directory_offset);
  for (uint32_t i = 0; i < h->section_count; i++) {
    const mprof_section_entry *e = &dir[i];
    uint64_t at = h->directory_offset + (uint64_t)i * sizeof *e;
    if (e->offset < sizeof *h || (e->offset & 7) ||
        e->offset > h->directory_offset ||
        e->length > h->directory_offset - e->offset)
      return mprof__error_set(
          MPROF_EFORMAT,
          "%s: directory at byte %llu: section %s (%llu bytes at %llu) is out "
          "of bounds (the file is corrupt or truncated)",
          t->path, (unsigned long long)at, mprof_section_name(e->type),
          (unsigned long long)e->length, (unsigned long long)e->offset);
    uint32_t want = expected_record_size(e->type);
    if (!want)
      continue; /* an unknown section from a newer writer: skip it */
    if (e->version != 1)
      return mprof__error_set(MPROF_EVERSION,
                              "%s: directory at byte %llu: section %s has "
                              "layout version %u (this mprof reads 1; "
                              "upgrade mprof)",
                              t->path, (unsigned long long)at,
                              mprof_section_name(e->type), e->version);
    if (e->record_size != want || e->length % want)
      return mprof__error_set(
          MPROF_EFORMAT,
          "%s: directory at byte %llu: section %s has record size %u and "
          "length %llu (expected records of %u bytes)",
          t->path, (unsigned long long)at, mprof_section_name(e->type),
          e->record_size, (unsigned long long)e->length, want);
    section_view *v = &t->sections[e->type];
    if (v->data)
      return mprof__error_set(MPROF_EFORMAT,
                              "%s: directory at byte %llu: section %s appears "
                              "twice",
                              t->path, (unsigned long long)at,
                              mprof_section_name(e->type));
    v->data = t->map + e->offset;
    v->offset = e->offset;
    v->length = e->length;
    v->count = (size_t)(e->length / want);
    if (!(opts->flags & MPROF_OPEN_NO_CHECKSUMS) &&
        mprof_crc32c(0, v->data, (size_t)v->length) != e->checksum)
      return BAD(t, e->type, e->offset, "checksum mismatch over %llu bytes",
                 (unsigned long long)e->length);
  }
  const section_view *s = &t->sections[MPROF_SECTION_STRINGS];
  if (!s->data || s->length == 0 || s->data[0] != 0 ||
      s->data[s->length - 1] != 0)
    return BAD(t, MPROF_SECTION_STRINGS, s->offset,
               "string table is missing or not NUL-terminated");
  return 0;
}

static int validate_tables(mprof_trace *t) {
  size_t n;
  const mprof_meta_record *meta = mprof_trace_meta_records(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_string(t, MPROF_SECTION_META, i, "key", meta[i].key));
    CHECK(check_string(t, MPROF_SECTION_META, i, "value", meta[i].value));
  }
  const mprof_device_record *dev = mprof_trace_devices(t, &n);
  for (size_t i = 0; i < n; i++)
    CHECK(check_string(t, MPROF_SECTION_DEVICES, i, "name", dev[i].name));
  const mprof_stream_record *st = mprof_trace_streams(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_STREAMS, i, "device", st[i].device,
                      MPROF_SECTION_DEVICES, 1));
    CHECK(check_string(t, MPROF_SECTION_STREAMS, i, "name", st[i].name));
  }
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_string(t, MPROF_SECTION_KERNELS, i, "mangled name",
                       k[i].mangled_name));
    CHECK(check_string(t, MPROF_SECTION_KERNELS, i, "demangled name",
                       k[i].demangled_name));
    CHECK(check_index(t, MPROF_SECTION_KERNELS, i, "device", k[i].device,
                      MPROF_SECTION_DEVICES, 1));
  }
  const mprof_shape_record *sh = mprof_trace_shapes(t, &n);
  for (size_t i = 0; i < n; i++)
    CHECK(check_index(t, MPROF_SECTION_SHAPES, i, "kernel", sh[i].kernel,
                      MPROF_SECTION_KERNELS, 0));
  const mprof_memop_record *mo = mprof_trace_memops(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_MEMOPS, i, "stream", mo[i].stream,
                      MPROF_SECTION_STREAMS, 1));
    if (mo[i].end < mo[i].start)
      return BAD(t, MPROF_SECTION_MEMOPS,
                 record_offset(t, MPROF_SECTION_MEMOPS, i),
                 "record %zu ends before it starts", i);
  }
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_string(t, MPROF_SECTION_RANGES, i, "name", r[i].name));
    CHECK(check_string(t, MPROF_SECTION_RANGES, i, "domain", r[i].domain));
  }
  const mprof_api_call_record *ac = mprof_trace_api_calls(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_string(t, MPROF_SECTION_API_CALLS, i, "name", ac[i].name));
    if (ac[i].end < ac[i].start)
      return BAD(t, MPROF_SECTION_API_CALLS,
                 record_offset(t, MPROF_SECTION_API_CALLS, i),
                 "record %zu ends before it starts", i);
  }
  const mprof_memory_access_record *ma = mprof_trace_memory_accesses(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_MEMORY_ACCESSES, i, "kernel",
                      ma[i].kernel, MPROF_SECTION_KERNELS, 0));
    uint64_t at = record_offset(t, MPROF_SECTION_MEMORY_ACCESSES, i);
    if (ma[i].flags & ~MPROF_MEMORY_FLAGS_KNOWN)
      return BAD(t, MPROF_SECTION_MEMORY_ACCESSES, at,
                 "record %zu: unknown flags 0x%x", i, ma[i].flags);
    /* Every warp execution has a thread and touches a sector; a thread asks
     * for at most 16 bytes, a warp touches at most two sectors a thread. */
    if (ma[i].thread_accesses < ma[i].warp_accesses ||
        ma[i].sectors < ma[i].warp_accesses ||
        (ma[i].sectors > ma[i].thread_accesses &&
         ma[i].sectors - ma[i].thread_accesses > ma[i].thread_accesses))
      return BAD(t, MPROF_SECTION_MEMORY_ACCESSES, at,
                 "record %zu: %llu warp accesses, %llu thread accesses and "
                 "%llu sectors cannot go together",
                 i, (unsigned long long)ma[i].warp_accesses,
                 (unsigned long long)ma[i].thread_accesses,
                 (unsigned long long)ma[i].sectors);
  }
  const mprof_region_record *rg = mprof_trace_regions(t, &n);
  for (size_t i = 0; i < n; i++)
    CHECK(check_string(t, MPROF_SECTION_REGIONS, i, "name", rg[i].name));
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_SPANS, i, "launch", sp[i].launch,
                      MPROF_SECTION_LAUNCHES, 1));
    CHECK(check_index(t, MPROF_SECTION_SPANS, i, "region", sp[i].region,
                      MPROF_SECTION_REGIONS, 1));
    if (sp[i].end < sp[i].start)
      return BAD(t, MPROF_SECTION_SPANS,
                 record_offset(t, MPROF_SECTION_SPANS, i),
                 "record %zu ends before it starts", i);
  }
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_STALL_REASONS, i, "device", sr[i].device,
                      MPROF_SECTION_DEVICES, 1));
    CHECK(check_string(t, MPROF_SECTION_STALL_REASONS, i, "name", sr[i].name));
  }
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_string(t, MPROF_SECTION_PC_SAMPLES, i, "function name",
                       pc[i].function_name));
    CHECK(check_index(t, MPROF_SECTION_PC_SAMPLES, i, "device", pc[i].device,
                      MPROF_SECTION_DEVICES, 1));
  }
  const mprof_cubin_record *cb = mprof_trace_cubins(t, &n);
  uint64_t blob_len = t->sections[MPROF_SECTION_BLOBS].length;
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_CUBINS, i, "device", cb[i].device,
                      MPROF_SECTION_DEVICES, 1));
    if (cb[i].blob_offset > blob_len ||
        cb[i].blob_size > blob_len - cb[i].blob_offset)
      return BAD(
          t, MPROF_SECTION_CUBINS, record_offset(t, MPROF_SECTION_CUBINS, i),
          "record %zu: blob of %llu bytes at %llu is outside BLOBS "
          "(%llu bytes)",
          i, (unsigned long long)cb[i].blob_size,
          (unsigned long long)cb[i].blob_offset, (unsigned long long)blob_len);
  }
  const mprof_drop_record *dr = mprof_trace_drops(t, &n);
  for (size_t i = 0; i < n; i++)
    CHECK(check_index(t, MPROF_SECTION_DROPS, i, "device", dr[i].device,
                      MPROF_SECTION_DEVICES, 1));
  const mprof_pm_metric_record *pm = mprof_trace_pm_metrics(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_PM_METRICS, i, "device", pm[i].device,
                      MPROF_SECTION_DEVICES, 0));
    CHECK(check_string(t, MPROF_SECTION_PM_METRICS, i, "name", pm[i].name));
    CHECK(check_string(t, MPROF_SECTION_PM_METRICS, i, "unit", pm[i].unit));
    if (pm[i].column >= MPROF_PM_MAX_METRICS)
      return BAD(t, MPROF_SECTION_PM_METRICS,
                 record_offset(t, MPROF_SECTION_PM_METRICS, i),
                 "record %zu: column %u is not below %u", i, pm[i].column,
                 MPROF_PM_MAX_METRICS);
  }
  const mprof_pm_sample_record *ps = mprof_trace_pm_samples(t, &n);
  for (size_t i = 0; i < n; i++) {
    CHECK(check_index(t, MPROF_SECTION_PM_SAMPLES, i, "device", ps[i].device,
                      MPROF_SECTION_DEVICES, 0));
    if (ps[i].end < ps[i].start)
      return BAD(t, MPROF_SECTION_PM_SAMPLES,
                 record_offset(t, MPROF_SECTION_PM_SAMPLES, i),
                 "record %zu ends before it starts", i);
  }
  return 0;
}

static int compare_launch_start(const void *a, const void *b, void *ctx) {
  const mprof_launch_record *l = (const mprof_launch_record *)ctx;
  uint64_t sa = l[*(const uint32_t *)a].start;
  uint64_t sb = l[*(const uint32_t *)b].start;
  return sa < sb ? -1 : sa > sb;
}

/* Validate launches and build the per-stream order in the same pass. */
static int validate_launches(mprof_trace *t) {
  size_t n, streams, shapes;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  mprof_trace_streams(t, &streams);
  mprof_trace_shapes(t, &shapes);
  t->stream_first = (size_t *)calloc(streams + 1, sizeof *t->stream_first);
  t->stream_max_duration =
      (uint64_t *)calloc(streams ? streams : 1, sizeof(uint64_t));
  if (!t->stream_first || !t->stream_max_duration)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  int sorted = 1;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    if (l[i].shape >= shapes)
      return check_index(t, MPROF_SECTION_LAUNCHES, i, "shape", l[i].shape,
                         MPROF_SECTION_SHAPES, 0);
    if (l[i].stream >= streams)
      return check_index(t, MPROF_SECTION_LAUNCHES, i, "stream", l[i].stream,
                         MPROF_SECTION_STREAMS, 0);
    if (l[i].end < l[i].start)
      return BAD(t, MPROF_SECTION_LAUNCHES,
                 record_offset(t, MPROF_SECTION_LAUNCHES, i),
                 "record %zu ends before it starts", i);
    if (i && (l[i].stream < l[i - 1].stream ||
              (l[i].stream == l[i - 1].stream && l[i].start < l[i - 1].start)))
      sorted = 0;
    t->stream_first[l[i].stream + 1]++;
    uint64_t d = l[i].end - l[i].start;
    if (d > t->stream_max_duration[l[i].stream])
      t->stream_max_duration[l[i].stream] = d;
    if (l[i].start < lo)
      lo = l[i].start;
    if (l[i].end > hi)
      hi = l[i].end;
  }
  size_t mn;
  const mprof_memop_record *mo = mprof_trace_memops(t, &mn);
  for (size_t i = 0; i < mn; i++) {
    if (mo[i].start < lo)
      lo = mo[i].start;
    if (mo[i].end > hi)
      hi = mo[i].end;
  }
  t->time_start = lo == UINT64_MAX ? 0 : lo;
  t->time_end = hi;
  for (size_t s = 0; s < streams; s++)
    t->stream_first[s + 1] += t->stream_first[s];
  if (sorted)
    return 0;
  /* Out of order (a writer that did not sort): one u32 per launch. */
  t->order = (uint32_t *)malloc((n ? n : 1) * sizeof *t->order);
  size_t *fill = (size_t *)malloc((streams + 1) * sizeof *fill);
  if (!t->order || !fill) {
    free(fill);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  }
  memcpy(fill, t->stream_first, (streams + 1) * sizeof *fill);
  for (size_t i = 0; i < n; i++)
    t->order[fill[l[i].stream]++] = (uint32_t)i;
  free(fill);
  for (size_t s = 0; s < streams; s++)
    qsort_r(t->order + t->stream_first[s],
            t->stream_first[s + 1] - t->stream_first[s], sizeof *t->order,
            compare_launch_start, (void *)l);
  return 0;
}

/* ---- streamed files ------------------------------------------------------ */

typedef struct chunk_ref {
  uint32_t kind;
  uint32_t section;
  uint32_t record_size;
  uint64_t offset; /* payload */
  uint64_t length;
} chunk_ref;

typedef struct image_builder {
  unsigned char *data;
  size_t size;
  size_t capacity;
} image_builder;

static int image_put(image_builder *b, const void *data, size_t size) {
  if (b->size + size > b->capacity) {
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap < b->size + size)
      cap *= 2;
    unsigned char *grown = (unsigned char *)realloc(b->data, cap);
    if (!grown)
      return -1;
    b->data = grown;
    b->capacity = cap;
  }
  if (size)
    memcpy(b->data + b->size, data, size);
  b->size += size;
  return 0;
}

static int image_pad(image_builder *b) {
  static const unsigned char zeros[8];
  return image_put(b, zeros, (8 - (b->size & 7)) & 7);
}

/* Does the committed part of @p chunks have an APPEND for @p type? */
static int has_append(const chunk_ref *chunks, size_t count, uint32_t type) {
  for (size_t i = 0; i < count; i++)
    if (chunks[i].kind == MPROF_CHUNK_APPEND && chunks[i].section == type)
      return 1;
  return 0;
}

/* Reader-made META pairs that say what a streamed file holds. */
typedef struct partial_note {
  char key[32];
  char value[32];
} partial_note;

/*
 * A streamed file (a capture still running, or cut short): read its chunks
 * up to the last checkpoint and lay them out as a finished trace in memory,
 * with META `capture.partial` and friends saying what was found; then the
 * usual validation runs on that image.
 */
static int open_streamed(mprof_trace *t, const mprof_open_options *opts) {
  const unsigned char *file = t->map;
  size_t size = t->map_size;
  int check = !(opts->flags & MPROF_OPEN_NO_CHECKSUMS);
  if (check && mprof_crc32c(0, file, 40) !=
                   ((const mprof_file_header *)file)->header_checksum)
    return BAD(t, 0, 40, "header checksum mismatch");
  chunk_ref *chunks = NULL;
  size_t count = 0, capacity = 0, committed = 0;
  uint64_t committed_end = sizeof(mprof_file_header);
  mprof_checkpoint_record last;
  memset(&last, 0, sizeof last);
  uint64_t pos = sizeof(mprof_file_header);
  /* The first chunk that is cut or damaged ends the file: what follows the
   * last checkpoint before it was never committed. */
  while (pos + sizeof(mprof_chunk_header) <= size) {
    mprof_chunk_header h;
    memcpy(&h, file + pos, sizeof h);
    if (h.magic != MPROF_CHUNK_MAGIC ||
        mprof_crc32c(0, &h, 28) != h.header_checksum)
      break;
    uint64_t payload = pos + sizeof h;
    if (h.length > size - payload)
      break;
    uint64_t padded = (h.length + 7) & ~(uint64_t)7;
    if (check &&
        mprof_crc32c(0, file + payload, (size_t)h.length) != h.checksum)
      break;
    if (h.kind == MPROF_CHUNK_CHECKPOINT) {
      if (h.length != sizeof last)
        break;
      memcpy(&last, file + payload, sizeof last);
      committed = count;
      committed_end = payload + padded < size ? payload + padded : size;
    } else if (h.kind == MPROF_CHUNK_APPEND || h.kind == MPROF_CHUNK_SNAPSHOT) {
      if (h.section == 0 || h.record_size == 0 || h.length % h.record_size)
        break;
      if (count == capacity) {
        size_t cap = capacity ? capacity * 2 : 64;
        chunk_ref *grown = (chunk_ref *)realloc(chunks, cap * sizeof *grown);
        if (!grown) {
          free(chunks);
          return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
        }
        chunks = grown;
        capacity = cap;
      }
      chunk_ref *c = &chunks[count++];
      c->kind = h.kind;
      c->section = h.section;
      c->record_size = h.record_size;
      c->offset = payload;
      c->length = h.length;
    } else {
      break; /* a chunk kind from a newer writer: stop at what we know */
    }
    pos = payload + padded;
  }
  if (last.sequence == 0) {
    free(chunks);
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: the capture ended before its first "
                            "checkpoint, so it holds nothing (a capture "
                            "writes one every second)",
                            t->path);
  }

  /* Sections in type order, as a finished file has them. */
  uint32_t max_type = MPROF_SECTION_STRINGS;
  for (size_t i = 0; i < committed; i++)
    if (chunks[i].section > max_type)
      max_type = chunks[i].section;
  partial_note notes[6];
  size_t note_count = 0;
  snprintf(notes[note_count].key, sizeof notes[0].key, "capture.partial");
  snprintf(notes[note_count++].value, sizeof notes[0].value, "%s",
           last.final ? "0" : "1");
  snprintf(notes[note_count].key, sizeof notes[0].key, "capture.checkpoints");
  snprintf(notes[note_count++].value, sizeof notes[0].value, "%u",
           last.sequence);
  snprintf(notes[note_count].key, sizeof notes[0].key, "capture.checkpoint_ns");
  snprintf(notes[note_count++].value, sizeof notes[0].value, "%llu",
           (unsigned long long)last.time);
  snprintf(notes[note_count].key, sizeof notes[0].key, "capture.lost_bytes");
  snprintf(notes[note_count++].value, sizeof notes[0].value, "%llu",
           (unsigned long long)(size - committed_end));
  if (last.signal) {
    snprintf(notes[note_count].key, sizeof notes[0].key, "capture.signal");
    snprintf(notes[note_count++].value, sizeof notes[0].value, "%u",
             last.signal);
  }

  image_builder b = {NULL, 0, 0};
  mprof_section_entry *entries =
      (mprof_section_entry *)calloc(max_type + 1, sizeof *entries);
  uint32_t entry_count = 0;
  mprof_file_header header;
  memset(&header, 0, sizeof header);
  int failed = !entries || image_put(&b, &header, sizeof header) != 0;
  uint64_t strings_length = 0;
  uint32_t note_refs[2 * 6];
  for (uint32_t type = 1; type <= max_type && !failed; type++) {
    int appended = has_append(chunks, committed, type);
    size_t snapshot = SIZE_MAX;
    uint32_t record_size = 0;
    for (size_t i = 0; i < committed; i++) {
      if (chunks[i].section != type)
        continue;
      if (record_size && chunks[i].record_size != record_size) {
        free(chunks);
        free(entries);
        free(b.data);
        return BAD(t, type, chunks[i].offset,
                   "chunks of section %s disagree on the record size (%u, %u)",
                   mprof_section_name(type), record_size,
                   chunks[i].record_size);
      }
      record_size = chunks[i].record_size;
      if (chunks[i].kind == MPROF_CHUNK_SNAPSHOT)
        snapshot = i;
    }
    int extra = type == MPROF_SECTION_STRINGS || type == MPROF_SECTION_META;
    if (!record_size && !extra)
      continue;
    if (!record_size)
      record_size =
          type == MPROF_SECTION_STRINGS ? 1 : sizeof(mprof_meta_record);
    failed |= image_pad(&b) != 0;
    mprof_section_entry *e = &entries[entry_count++];
    e->type = type;
    e->version = 1;
    e->offset = b.size;
    e->record_size = record_size;
    for (size_t i = 0; i < committed && !failed; i++) {
      if (chunks[i].section != type)
        continue;
      if (appended ? chunks[i].kind == MPROF_CHUNK_APPEND : i == snapshot)
        failed |= image_put(&b, file + chunks[i].offset,
                            (size_t)chunks[i].length) != 0;
    }
    if (type == MPROF_SECTION_STRINGS) {
      /* The notes' strings go at the end of the table. */
      strings_length = b.size - e->offset;
      if (strings_length == 0)
        failed |= image_put(&b, "", 1) != 0; /* reference 0 */
      for (size_t n = 0; n < note_count && !failed; n++) {
        note_refs[2 * n] = (uint32_t)(b.size - e->offset);
        failed |= image_put(&b, notes[n].key, strlen(notes[n].key) + 1) != 0;
        note_refs[2 * n + 1] = (uint32_t)(b.size - e->offset);
        failed |=
            image_put(&b, notes[n].value, strlen(notes[n].value) + 1) != 0;
      }
    }
    if (type == MPROF_SECTION_META) {
      for (size_t n = 0; n < note_count && !failed; n++) {
        mprof_meta_record m = {note_refs[2 * n], note_refs[2 * n + 1]};
        failed |= image_put(&b, &m, sizeof m) != 0;
      }
    }
    e->length = b.size - e->offset;
    if (!failed)
      e->checksum = mprof_crc32c(0, b.data + e->offset, (size_t)e->length);
  }
  failed |= image_pad(&b) != 0;
  uint64_t directory_offset = b.size;
  if (!failed)
    failed |=
        image_put(&b, entries, entry_count * sizeof(mprof_section_entry)) != 0;
  free(chunks);
  if (failed) {
    free(entries);
    free(b.data);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  }
  memcpy(header.magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE);
  header.version_major = MPROF_FORMAT_VERSION_MAJOR;
  header.version_minor = MPROF_FORMAT_VERSION_MINOR;
  header.flags = last.file_flags & MPROF_FILE_FLAG_LAUNCHES_SORTED;
  header.directory_offset = directory_offset;
  header.section_count = entry_count;
  header.directory_checksum =
      mprof_crc32c(0, entries, entry_count * sizeof(mprof_section_entry));
  header.file_size = b.size;
  header.header_checksum = mprof_crc32c(0, &header, 40);
  memcpy(b.data, &header, sizeof header);
  free(entries);
  mprof__file_map old = {t->map, t->map_size};
  mprof__file_map_close(&old);
  t->image = b.data;
  t->map = b.data;
  t->map_size = b.size;
  return 0;
}

/* The META keys every process has a slot for (mprof_trace_process_meta()
 * answers them without a search). */
static const char *const process_fields[PROCESS_FIELDS] = {
    "pid", "ppid", "host", "rank", "path"};

static int process_field(const char *name) {
  for (int f = 0; f < PROCESS_FIELDS; f++)
    if (strcmp(name, process_fields[f]) == 0)
      return f;
  return -1;
}

/* "FIRST COUNT" within [0, @p limit): every index of it is @p process's. */
static void process_range(uint32_t *owner, size_t limit, const char *value,
                          uint32_t process) {
  unsigned long long a, n;
  if (sscanf(value, "%llu %llu", &a, &n) != 2 || a > limit || n > limit - a)
    return;
  for (size_t i = (size_t)a; i < (size_t)(a + n); i++)
    owner[i] = process;
}

/* Each stream's and device's process, and each process's pid, ppid, host,
 * rank and path: all process 0's in a trace of one process; in a merged
 * set (META merge.processes) what its process.I.* keys say, read in one
 * pass (a set merged without process.I.streams leaves its streams without
 * a process). A set has at most one process per META record. */
static int index_processes(mprof_trace *t) {
  size_t streams, devices, meta_count;
  mprof_trace_streams(t, &streams);
  mprof_trace_devices(t, &devices);
  const mprof_meta_record *meta = mprof_trace_meta_records(t, &meta_count);
  t->process_count = 1;
  const char *merged = mprof_trace_meta(t, "merge.processes");
  unsigned long long count = merged ? strtoull(merged, NULL, 10) : 0;
  if (count > 1 && count <= meta_count && count <= UINT32_MAX)
    t->process_count = (size_t)count;
  t->stream_process =
      (uint32_t *)malloc((streams ? streams : 1) * sizeof *t->stream_process);
  t->device_process =
      (uint32_t *)malloc((devices ? devices : 1) * sizeof *t->device_process);
  t->process_meta = (const char **)calloc(t->process_count * PROCESS_FIELDS,
                                          sizeof *t->process_meta);
  if (!t->stream_process || !t->device_process || !t->process_meta)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  uint32_t fill = t->process_count == 1 ? 0 : MPROF_INDEX_NONE;
  for (size_t i = 0; i < streams; i++)
    t->stream_process[i] = fill;
  for (size_t i = 0; i < devices; i++)
    t->device_process[i] = fill;
  if (t->process_count == 1) {
    for (int f = 0; f < PROCESS_FIELDS; f++)
      t->process_meta[f] = f == PROCESS_FIELDS - 1
                               ? NULL /* path: the trace's own, as renamed */
                               : mprof_trace_meta(t, process_fields[f]);
    return 0;
  }
  for (size_t i = 0; i < meta_count; i++) {
    const char *key = mprof_trace_string(t, meta[i].key);
    if (strncmp(key, "process.", 8) != 0 || key[8] < '0' || key[8] > '9')
      continue;
    char *dot;
    unsigned long long p = strtoull(key + 8, &dot, 10);
    if (*dot != '.' || p >= t->process_count)
      continue;
    const char *field = dot + 1;
    const char *value = mprof_trace_string(t, meta[i].value);
    int f = process_field(field);
    if (f >= 0)
      t->process_meta[p * PROCESS_FIELDS + (size_t)f] = value;
    else if (strcmp(field, "streams") == 0)
      process_range(t->stream_process, streams, value, (uint32_t)p);
    else if (strcmp(field, "devices") == 0)
      process_range(t->device_process, devices, value, (uint32_t)p);
  }
  return 0;
}

int mprof_trace_open(mprof_trace **out, const char *path,
                     const mprof_open_options *opts) {
  mprof_open_options defaults = MPROF_OPEN_OPTIONS_INIT;
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_open: NULL argument");
  *out = NULL;
  if (!opts)
    opts = &defaults;
  if (opts->version != MPROF_OPEN_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: open options version %u is not supported",
                            path, opts->version);
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
    rc = open_streamed(t, opts);
  if (!rc)
    rc = validate_header(t, opts);
  if (!rc)
    rc = validate_directory(t, opts);
  if (!rc)
    rc = validate_tables(t);
  if (!rc)
    rc = validate_launches(t);
  if (!rc)
    rc = index_processes(t);
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
  if (trace->image) {
    free(trace->image);
  } else {
    mprof__file_map file = {trace->map, trace->map_size};
    mprof__file_map_close(&file);
  }
  free(trace->stream_first);
  free(trace->stream_max_duration);
  free(trace->order);
  free(trace->stream_process);
  free(trace->device_process);
  free(trace->process_meta);
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

size_t mprof_trace_process_count(const mprof_trace *trace) {
  return trace ? trace->process_count : 0;
}

const char *mprof_trace_process_meta(const mprof_trace *trace, size_t process,
                                     const char *key) {
  if (!trace || !key || process >= trace->process_count)
    return NULL;
  int f = process_field(key);
  if (trace->process_count == 1 && f == PROCESS_FIELDS - 1)
    return trace->path;
  if (f >= 0)
    return trace->process_meta[process * PROCESS_FIELDS + (size_t)f];
  if (trace->process_count == 1)
    return mprof_trace_meta(trace, key);
  char name[256];
  snprintf(name, sizeof name, "process.%zu.%s", process, key);
  return mprof_trace_meta(trace, name);
}

uint32_t mprof_trace_stream_process(const mprof_trace *trace, uint32_t stream) {
  size_t n;
  mprof_trace_streams(trace, &n);
  return trace && stream < n ? trace->stream_process[stream] : MPROF_INDEX_NONE;
}

uint32_t mprof_trace_device_process(const mprof_trace *trace, uint32_t device) {
  size_t n;
  mprof_trace_devices(trace, &n);
  return trace && device < n ? trace->device_process[device] : MPROF_INDEX_NONE;
}

const char *mprof_trace_path(const mprof_trace *trace) {
  return trace ? trace->path : "";
}

uint64_t mprof_trace_file_size(const mprof_trace *trace) {
  return trace ? trace->map_size : 0;
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
  const section_view *b = &trace->sections[MPROF_SECTION_BLOBS];
  if (cubin->blob_offset > b->length ||
      cubin->blob_size > b->length - cubin->blob_offset)
    return NULL;
  if (size)
    *size = (size_t)cubin->blob_size;
  return b->data + cubin->blob_offset;
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
  const mprof_launch_record *l =
      (const mprof_launch_record *)trace->sections[MPROF_SECTION_LAUNCHES].data;
  size_t at = trace->stream_first[stream] + position;
  return &l[trace->order ? trace->order[at] : at];
}

/* First position in @p stream whose start is >= @p time. */
static size_t lower_bound_start(const mprof_trace *trace, uint32_t stream,
                                uint64_t time) {
  size_t lo = 0, hi = mprof_trace_stream_launch_count(trace, stream);
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (mprof_trace_stream_launch(trace, stream, mid)->start < time)
      lo = mid + 1;
    else
      hi = mid;
  }
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
