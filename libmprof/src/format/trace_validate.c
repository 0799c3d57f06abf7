/*
 * mprof — .mprof reader: validate everything once at open (header,
 * directory, tables, launch order).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "format/trace_internal.h"

/* Byte offset in the file of record @p index of section @p type. */
static uint64_t record_offset(const mprof_trace *t, uint32_t type,
                              size_t index) {
  return t->sections[type].offset +
         (uint64_t)index * t->sections[type].record_size;
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

/* @p count records of @p target from @p first on, all of them inside it. */
static int check_range(const mprof_trace *t, uint32_t type, size_t index,
                       const char *field, uint32_t first, uint32_t count,
                       uint32_t target) {
  size_t have = t->sections[target].count;
  if (first <= have && count <= have - first)
    return 0;
  return BAD(t, type, record_offset(t, type, index),
             "record %zu: its %u %s from %u on lie past %s (%zu records)",
             index, count, field, first, mprof_section_name(target), have);
}

#define CHECK(expr)                                                            \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_)                                                                   \
      return rc_;                                                              \
  } while (0)

int mprof__trace_check_header_words(const mprof_trace *t,
                                    const mprof_open_options *opts) {
  const mprof_file_header *h = (const mprof_file_header *)t->map;
  if (MPROF__VERIFY_CHECKSUMS(opts) &&
      mprof_crc32c(0, h, 40) != h->header_checksum)
    return BAD(t, 0, 40, "header checksum mismatch");
  if (h->flags & ~MPROF_FILE_FLAGS_KNOWN)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: header at byte 12: unknown flags 0x%x "
                            "(written by a newer mprof; upgrade mprof)",
                            t->path, h->flags & ~MPROF_FILE_FLAGS_KNOWN);
  return 0;
}

int mprof__trace_validate_header(mprof_trace *t,
                                 const mprof_open_options *opts) {
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
  CHECK(mprof__trace_check_header_words(t, opts));
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

int mprof__trace_validate_directory(mprof_trace *t,
                                    const mprof_open_options *opts) {
  const mprof_file_header *h = (const mprof_file_header *)t->map;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(t->map + h->directory_offset);
  size_t dir_size = (size_t)h->section_count * sizeof *dir;
  if (MPROF__VERIFY_CHECKSUMS(opts) &&
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
    uint32_t want = mprof__record_size(e->type);
    if (!want)
      continue; /* an unknown section from a newer writer: skip it */
    /* A newer layout only appends fields (docs/FORMAT.md,
     * "Compatibility"): records are stepped through by the stored size and
     * read as far as this reader's layout goes. */
    char why[160];
    if (e->version == 0)
      return mprof__error_set(MPROF_EFORMAT,
                              "%s: directory at byte %llu: section %s has "
                              "layout version 0 (versions start at 1; the "
                              "file is corrupt; record it again)",
                              t->path, (unsigned long long)at,
                              mprof_section_name(e->type));
    if (mprof__layout_problem(e->type, e->version, e->record_size, why,
                              sizeof why))
      return mprof__error_set(MPROF_EFORMAT,
                              "%s: directory at byte %llu: section %s has %s "
                              "(the file is corrupt; record it again)",
                              t->path, (unsigned long long)at,
                              mprof_section_name(e->type), why);
    if (e->length % e->record_size)
      return mprof__error_set(
          MPROF_EFORMAT,
          "%s: directory at byte %llu: section %s has length %llu, not a "
          "whole number of %u-byte records (the file is corrupt; record it "
          "again)",
          t->path, (unsigned long long)at, mprof_section_name(e->type),
          (unsigned long long)e->length, e->record_size);
    section_view *v = &t->sections[e->type];
    if (v->data)
      return mprof__error_set(MPROF_EFORMAT,
                              "%s: directory at byte %llu: section %s appears "
                              "twice",
                              t->path, (unsigned long long)at,
                              mprof_section_name(e->type));
    const unsigned char *stored = t->map + e->offset;
    if (MPROF__VERIFY_CHECKSUMS(opts) &&
        mprof_crc32c(0, stored, (size_t)e->length) != e->checksum)
      return BAD(t, e->type, e->offset, "checksum mismatch over %llu bytes",
                 (unsigned long long)e->length);
    v->offset = e->offset;
    v->record_size = e->record_size;
    v->count = (size_t)(e->length / e->record_size);
    v->length = (uint64_t)v->count * want;
    v->data = stored;
    if (e->record_size != want) {
      /* Another writer's layout: this reader's copy, so that every accessor
       * still hands out an array of format.h's records. */
      v->owned = (unsigned char *)malloc(v->count ? v->count * want : 1);
      if (!v->owned)
        return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
      mprof__records_resize(v->owned, want, stored, e->record_size, v->count);
      v->data = v->owned;
    }
  }
  const section_view *s = &t->sections[MPROF_SECTION_STRINGS];
  if (!s->data || s->length == 0 || s->data[0] != 0 ||
      s->data[s->length - 1] != 0)
    return BAD(t, MPROF_SECTION_STRINGS, s->offset,
               "string table is missing or not NUL-terminated");
  return 0;
}

/* Every record of section @p section against its checked fields. */
static int check_section(const mprof_trace *t, uint32_t section) {
  size_t count;
  const record_field *fields = mprof__section_fields(section, &count);
  const section_view *v = &t->sections[section];
  size_t size = mprof__record_size(section);
  for (size_t i = 0; count && i < v->count; i++) {
    const uint8_t *rec = v->data + i * size;
    for (size_t c = 0; c < count; c++) {
      const record_field *f = &fields[c];
      if (!f->checked)
        continue;
      if (f->kind == FIELD_STRING)
        CHECK(check_string(t, section, i, f->what,
                           mprof__u32_at(rec + f->offset)));
      else if (f->kind == FIELD_TIMES) {
        if (mprof__u64_at(rec + f->aux) < mprof__u64_at(rec + f->offset))
          return BAD(t, section, record_offset(t, section, i),
                     "record %zu ends before it starts", i);
      } else if (f->kind == FIELD_RANGE)
        CHECK(check_range(t, section, i, f->what,
                          mprof__u32_at(rec + f->offset),
                          mprof__u32_at(rec + f->offset + 4), f->aux));
      else
        CHECK(check_index(t, section, i, f->what,
                          mprof__u32_at(rec + f->offset), f->aux,
                          f->kind == FIELD_INDEX_OR_NONE));
    }
  }
  return 0;
}

/* SOURCES: entries that tile the section, each as docs/FORMAT.md says. */
static int check_sources(const mprof_trace *t) {
  const section_view *v = &t->sections[MPROF_SECTION_SOURCES];
  uint64_t at = 0;
  size_t index = 0;
  for (; v->data && at < v->length; index++) {
    uint64_t left = v->length - at;
    mprof_source_entry e;
    if (left < sizeof e)
      return BAD(t, MPROF_SECTION_SOURCES, v->offset + at,
                 "entry %zu: %llu bytes left, too few for its 40-byte header",
                 index, (unsigned long long)left);
    memcpy(&e, v->data + at, sizeof e);
    uint64_t body = (uint64_t)e.path_size + e.stored_size;
    const char *why = NULL;
    if (e.entry_size % 8 || e.entry_size < sizeof e || e.entry_size > left)
      why = "its size is not a multiple of 8 inside the section";
    else if (body > e.entry_size - sizeof e)
      why = "its path and text do not fit in it";
    else if (e.path_size == 0)
      why = "it has no path";
    else if (e.state != MPROF_SOURCE_ENTRY_EMBEDDED &&
             e.state != MPROF_SOURCE_ENTRY_MISSING)
      why = "its state is unknown";
    else if (e.stored != MPROF_SOURCE_STORED_PLAIN &&
             e.stored != MPROF_SOURCE_STORED_ZLIB)
      why = "its storage is unknown";
    else if (e.reserved)
      why = "its reserved field is not zero";
    else if (e.state == MPROF_SOURCE_ENTRY_MISSING &&
             (e.size || e.stored_size || e.crc32c))
      why = "it is missing yet holds text";
    else if (e.stored == MPROF_SOURCE_STORED_PLAIN && e.stored_size != e.size)
      why = "its plain text is not its size";
    else if (memchr(v->data + at + sizeof e, '\0', e.path_size))
      why = "its path holds a NUL byte";
    if (why)
      return BAD(t, MPROF_SECTION_SOURCES, v->offset + at, "entry %zu: %s",
                 index, why);
    at += e.entry_size;
  }
  return 0;
}

/* MKPROF: a file of its own, read whole when exported; here only its
 * magic, so that a trace never carries something else under that name. */
static int check_mkprof(const mprof_trace *t) {
  const section_view *v = &t->sections[MPROF_SECTION_MKPROF];
  if (v->data && (v->length < 10 || memcmp(v->data, "MKPROF1.2\n", 10) != 0))
    return BAD(t, MPROF_SECTION_MKPROF, v->offset,
               "does not start as an MKPROF1.2 file");
  return 0;
}

int mprof__trace_validate_tables(mprof_trace *t) {
  for (uint32_t section = 0; section <= MPROF_SECTION_TYPE_MAX_; section++)
    CHECK(check_section(t, section));
  /* What a reference check cannot say. */
  size_t n;
  /* A claimed SM count no GPU has would make every table sized by it (the
   * views' SM rows, the diagnosis's waves) a lie or a huge allocation. */
  const mprof_device_record *dev = mprof_trace_devices(t, &n);
  for (size_t i = 0; i < n; i++)
    if (dev[i].sm_count > MPROF_DEVICE_SM_MAX)
      return BAD(t, MPROF_SECTION_DEVICES,
                 record_offset(t, MPROF_SECTION_DEVICES, i),
                 "record %zu: sm_count %u is above %u, more SMs than a GPU "
                 "has",
                 i, dev[i].sm_count, MPROF_DEVICE_SM_MAX);
  const mprof_memory_access_record *ma = mprof_trace_memory_accesses(t, &n);
  for (size_t i = 0; i < n; i++) {
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
  const mprof_cubin_record *cb = mprof_trace_cubins(t, &n);
  uint64_t blob_len = t->sections[MPROF_SECTION_BLOBS].length;
  for (size_t i = 0; i < n; i++)
    if (cb[i].blob_offset > blob_len ||
        cb[i].blob_size > blob_len - cb[i].blob_offset)
      return BAD(
          t, MPROF_SECTION_CUBINS, record_offset(t, MPROF_SECTION_CUBINS, i),
          "record %zu: blob of %llu bytes at %llu is outside BLOBS "
          "(%llu bytes)",
          i, (unsigned long long)cb[i].blob_size,
          (unsigned long long)cb[i].blob_offset, (unsigned long long)blob_len);
  CHECK(check_sources(t));
  CHECK(check_mkprof(t));
  const mprof_pm_metric_record *pm = mprof_trace_pm_metrics(t, &n);
  for (size_t i = 0; i < n; i++)
    if (pm[i].column >= MPROF_PM_MAX_METRICS)
      return BAD(t, MPROF_SECTION_PM_METRICS,
                 record_offset(t, MPROF_SECTION_PM_METRICS, i),
                 "record %zu: column %u is not below %u", i, pm[i].column,
                 MPROF_PM_MAX_METRICS);
  return 0;
}

static int compare_launch_start(const void *a, const void *b, void *ctx) {
  const mprof_launch_record *l = (const mprof_launch_record *)ctx;
  uint64_t sa = l[*(const uint32_t *)a].start;
  uint64_t sb = l[*(const uint32_t *)b].start;
  return sa < sb ? -1 : sa > sb;
}

/* Validate launches and build the per-stream order in the same pass. */
int mprof__trace_validate_launches(mprof_trace *t) {
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
