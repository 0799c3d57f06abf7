/*
 * mprof — reading and validating .source files (source-instrumentation spans).
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "internal.h"
#include "mprof/source.h"
#include "source_internal.h"

/* ---- the .source file --------------------------------------------------- */

struct mprof_source_file {
  char *path;
  mprof__file_map map;
  mprof_source_file_header header;
  const mprof_source_file_region *regions;
  const mprof_source_file_kernel *kernels;
  const mprof_source_file_launch *launches;
  const char *strings;
  const mprof_source_file_record *records;
  const mprof_source_file_launch_ext *launch_exts; /* NULL: none */
};

#define SOURCE_BAD(path, at, ...)                                              \
  mprof__error_at(MPROF_EFORMAT, (path), (uint64_t)(at), __VA_ARGS__)

void mprof_source_file_free(mprof_source_file *f) {
  if (!f)
    return;
  mprof__file_map_close(&f->map);
  free(f->path);
  free(f);
}

/* a + b * c, or UINT64_MAX when it overflows. */
static uint64_t add_mul(uint64_t a, uint64_t b, uint64_t c) {
  if (c && b > (UINT64_MAX - a) / c)
    return UINT64_MAX;
  return a + b * c;
}

static int validate_source(mprof_source_file *f) {
  const char *p = f->path;
  const unsigned char *data = f->map.data;
  size_t size = f->map.size;
  const mprof_source_file_header *h = &f->header;
  if (size < sizeof *h)
    return SOURCE_BAD(p, size,
                      "header: the file is %zu bytes, shorter than the "
                      "128-byte header",
                      size);
  memcpy(&f->header, data, sizeof *h);
  if (memcmp(h->magic, MPROF_SOURCE_FILE_MAGIC, 8) != 0)
    return SOURCE_BAD(p, 0, "header: not an mprof .source file (bad magic)");
  if (h->version_major != MPROF_SOURCE_FILE_VERSION_MAJOR)
    return mprof__error_at(
        MPROF_EVERSION, p, 8,
        "header: format version %u.%u; this reader knows %d.x",
        h->version_major, h->version_minor, MPROF_SOURCE_FILE_VERSION_MAJOR);
  if (h->header_size < sizeof *h || h->header_size % 8)
    return SOURCE_BAD(p, 12,
                      "header: header_size %u is not a multiple of 8 "
                      "of at least 128",
                      h->header_size);
  if (h->record_size != sizeof(mprof_source_file_record))
    return mprof__error_at(MPROF_EVERSION, p, 28,
                           "header: records of %u bytes; this reader knows 48",
                           h->record_size);
  for (size_t i = 0; i < sizeof h->reserved; i++)
    if (h->reserved[i])
      return SOURCE_BAD(p, offsetof(mprof_source_file_header, reserved) + i,
                        "header: reserved byte is not zero");
  if (h->strings_size == 0 || h->strings_size % 8)
    return SOURCE_BAD(p, 56,
                      "header: string table of %u bytes is not a non-zero "
                      "multiple of 8",
                      h->strings_size);
  uint64_t regions = h->header_size;
  uint64_t kernels = add_mul(regions, h->region_count, 16);
  uint64_t launches = add_mul(kernels, h->kernel_count, 8);
  uint64_t strings = add_mul(launches, h->launch_count, 40);
  uint64_t records = add_mul(strings, h->strings_size, 1);
  if (h->launch_ext_size &&
      h->launch_ext_size != sizeof(mprof_source_file_launch_ext))
    return mprof__error_at(
        MPROF_EVERSION, p, 104,
        "header: launch extensions of %u bytes; this reader knows "
        "24",
        h->launch_ext_size);
  uint64_t exts = add_mul(records, h->record_count, 48);
  uint64_t end = add_mul(exts, h->launch_ext_size ? h->launch_count : 0,
                         h->launch_ext_size);
  if (end == UINT64_MAX || end > size)
    return SOURCE_BAD(p, size,
                      "truncated: %u regions, %u kernels, %u launches, %u "
                      "bytes of strings, %" PRIu64
                      " records and %u bytes per launch extension need %s "
                      "bytes; the file has %zu",
                      h->region_count, h->kernel_count, h->launch_count,
                      h->strings_size, h->record_count, h->launch_ext_size,
                      end == UINT64_MAX ? "more than 2^64" : "more", size);
  if (end < size)
    return SOURCE_BAD(p, end, "%" PRIu64 " bytes after the last record",
                      (uint64_t)size - end);
  f->regions = (const mprof_source_file_region *)(data + regions);
  f->kernels = (const mprof_source_file_kernel *)(data + kernels);
  f->launches = (const mprof_source_file_launch *)(data + launches);
  f->strings = (const char *)(data + strings);
  f->records = (const mprof_source_file_record *)(data + records);
  f->launch_exts = h->launch_ext_size
                       ? (const mprof_source_file_launch_ext *)(data + exts)
                       : NULL;
  if (f->strings[0] || f->strings[h->strings_size - 1])
    return SOURCE_BAD(p, strings,
                      "strings: the table must start and end with a NUL");
  for (uint32_t i = 0; i < h->region_count; i++) {
    uint64_t at = regions + 16ull * i;
    if (f->regions[i].name >= h->strings_size)
      return SOURCE_BAD(p, at,
                        "region %u: name offset %u is outside the "
                        "%u-byte string table",
                        i, f->regions[i].name, h->strings_size);
    if (f->regions[i].role > MPROF_ROLE_STORER)
      return SOURCE_BAD(p, at + 4, "region %u: unknown role %u", i,
                        f->regions[i].role);
    if (f->regions[i].reserved)
      return SOURCE_BAD(p, at + 12, "region %u: reserved field is not zero", i);
  }
  for (uint32_t i = 0; i < h->kernel_count; i++) {
    uint64_t at = kernels + 8ull * i;
    if (f->kernels[i].name >= h->strings_size)
      return SOURCE_BAD(p, at,
                        "kernel %u: name offset %u is outside the "
                        "%u-byte string table",
                        i, f->kernels[i].name, h->strings_size);
    if (f->kernels[i].reserved)
      return SOURCE_BAD(p, at + 4, "kernel %u: reserved field is not zero", i);
  }
  for (uint32_t i = 0; i < h->launch_count; i++)
    if (f->launches[i].kernel >= h->kernel_count)
      return SOURCE_BAD(p, launches + 40ull * i,
                        "launch %u: kernel %u does not exist (%u kernels)", i,
                        f->launches[i].kernel, h->kernel_count);
  for (uint64_t i = 0; i < h->record_count; i++) {
    const mprof_source_file_record *r = &f->records[i];
    uint64_t at = records + 48 * i;
    if (r->launch >= h->launch_count)
      return SOURCE_BAD(p, at + 16,
                        "record %" PRIu64
                        ": launch %u does not exist (%u launches)",
                        i, r->launch, h->launch_count);
    if (r->kernel != f->launches[r->launch].kernel)
      return SOURCE_BAD(p, at + 20,
                        "record %" PRIu64
                        ": kernel %u differs from its launch's (%u)",
                        i, r->kernel, f->launches[r->launch].kernel);
    if (r->end < r->start)
      return SOURCE_BAD(p, at, "record %" PRIu64 ": ends before it starts", i);
  }
  for (uint32_t i = 0; f->launch_exts && i < h->launch_count; i++)
    if (f->launch_exts[i].flags &
        ~(MPROF_SOURCE_LAUNCH_DYNAMIC_SHARED | MPROF_SOURCE_LAUNCH_STREAM))
      return SOURCE_BAD(p, exts + 24ull * i + 20,
                        "launch extension %u: unknown flags 0x%x", i,
                        f->launch_exts[i].flags);
  return 0;
}

int mprof_source_file_open(mprof_source_file **out, const char *path) {
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_source_file_open: NULL");
  *out = NULL;
  mprof_source_file *f = (mprof_source_file *)calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(path))) {
    free(f);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  int rc = mprof__file_map_open(&f->map, path, MPROF__MAP_RANDOM);
  if (rc) {
    mprof_source_file_free(f);
    return rc;
  }
  rc = validate_source(f);
  if (rc) {
    mprof_source_file_free(f);
    return rc;
  }
  *out = f;
  return 0;
}

const char *mprof__source_file_path(const mprof_source_file *f) {
  return f->path;
}

const mprof_source_file_header *
mprof_source_file_get_header(const mprof_source_file *f) {
  return &f->header;
}

const char *mprof_source_file_string(const mprof_source_file *f, uint32_t ref) {
  return ref < f->header.strings_size ? f->strings + ref : "";
}

const mprof_source_file_region *
mprof_source_file_regions(const mprof_source_file *f, size_t *count) {
  *count = f->header.region_count;
  return f->regions;
}

const mprof_source_file_kernel *
mprof_source_file_kernels(const mprof_source_file *f, size_t *count) {
  *count = f->header.kernel_count;
  return f->kernels;
}

const mprof_source_file_launch *
mprof_source_file_launches(const mprof_source_file *f, size_t *count) {
  *count = f->header.launch_count;
  return f->launches;
}

const mprof_source_file_record *
mprof_source_file_records(const mprof_source_file *f, size_t *count) {
  *count = (size_t)f->header.record_count;
  return f->records;
}

const mprof_source_file_launch_ext *
mprof_source_file_launch_exts(const mprof_source_file *f, size_t *count) {
  *count = f->launch_exts ? f->header.launch_count : 0;
  return f->launch_exts;
}

/* ---- as trace records --------------------------------------------------- */

int mprof__source_write_regions(mprof_writer *w, const mprof_source_file *f) {
  int rc = 0;
  for (size_t i = 0; i < f->header.region_count && !rc; i++) {
    const mprof_source_file_region *fr = &f->regions[i];
    mprof_region_record r = {
        mprof_writer_string(w, mprof_source_file_string(f, fr->name)),
        fr->color, fr->role, 0};
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_REGIONS, &r);
  }
  return rc;
}

mprof_span_record mprof__source_span(const mprof_source_file_record *r,
                                     uint64_t start, uint64_t end,
                                     uint32_t launch, uint32_t region) {
  uint32_t flags = r->warp != MPROF_INDEX_NONE ? MPROF_SPAN_FLAG_WARP : 0;
  mprof_span_record sp = {start,   end,    launch, r->sm,     r->block,
                          r->warp, region, flags,  r->payload};
  return sp;
}
