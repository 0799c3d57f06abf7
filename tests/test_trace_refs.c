/*
 * mprof tests — every reference the reader checks, at its boundary: a
 * record whose reference equals its table's size is refused with the exact
 * message, one just below it is read. The references come from the
 * reader's own field table (mprof__section_fields(), trace_sections.c,
 * which the validator walks), so a field added there is tested here without
 * a line of this file changing. The checks outside the table (a launch's
 * shape and stream, a cubin's blob, a PM column, a device's SM count,
 * record times, a memory access's counts) follow.
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_util.h"

#include "format/trace_internal.h"
#include "mprof/mprof.h"

/* This test compiles trace_sections.c in for its field table. The two
 * internal functions that file calls from elsewhere in libmprof are hidden
 * in libmprof.so; the table does not need them, so they are stubs here. */
int mprof__error_set(int status, const char *fmt, ...) {
  (void)fmt;
  return status;
}
uint32_t mprof__record_size(uint32_t type) {
  (void)type;
  return 0;
}

#define SUFFIX " (the file is corrupt or truncated; record it again)"

static int has_references(uint32_t section) {
  size_t n;
  mprof__section_fields(section, &n);
  return n > 0;
}

/* Whether some field of the table refers to records of @p section. */
static int is_target(uint32_t section) {
  for (uint32_t s = 0; s <= MPROF_SECTION_TYPE_MAX_; s++) {
    size_t n;
    const record_field *f = mprof__section_fields(s, &n);
    for (size_t i = 0; i < n; i++)
      if ((f[i].kind == FIELD_INDEX || f[i].kind == FIELD_INDEX_OR_NONE) &&
          f[i].aux == section)
        return 1;
  }
  return 0;
}

/* A trace with two records in the sections others refer to and a record
 * of every section that refers; then one zeroed record (string 0, index 0,
 * times 0) of any section of the table this function does not know yet. */
static void write_every_reference(const char *path) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  assert_int_equal(mprof_writer_meta(w, "tool", "test_trace_refs"), 0);
  uint32_t d[2], st[2], k[2], sh[2], rg[2];
  for (uint32_t i = 0; i < 2; i++) {
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    dev.id = i;
    dev.name = mprof_writer_string(w, "NVIDIA H200");
    dev.sm_count = 132;
    assert_int_equal(mprof_writer_intern(w, &d[i], MPROF_SECTION_DEVICES, &dev),
                     0);
    mprof_stream_record s = {d[i], 1, 7 + i, mprof_writer_string(w, "s")};
    assert_int_equal(mprof_writer_intern(w, &st[i], MPROF_SECTION_STREAMS, &s),
                     0);
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, i ? "_Z1bv" : "_Z1av");
    kr.demangled_name = mprof_writer_string(w, i ? "b()" : "a()");
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d[i];
    assert_int_equal(mprof_writer_intern(w, &k[i], MPROF_SECTION_KERNELS, &kr),
                     0);
    mprof_shape_record s2;
    memset(&s2, 0, sizeof s2);
    s2.kernel = k[i];
    s2.grid[0] = s2.block[0] = 128 + i;
    assert_int_equal(mprof_writer_intern(w, &sh[i], MPROF_SECTION_SHAPES, &s2),
                     0);
    mprof_region_record r = {mprof_writer_string(w, i ? "load" : "store"), 0,
                             MPROF_ROLE_LOADER, 0};
    assert_int_equal(mprof_writer_intern(w, &rg[i], MPROF_SECTION_REGIONS, &r),
                     0);
  }
  for (uint32_t i = 0; i < 3; i++) {
    mprof_launch_record l = {
        1000 + 100 * i, 1050 + 100 * i, sh[i & 1], st[i & 1], 10 + i, 0, 0};
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_memop_record mo;
  memset(&mo, 0, sizeof mo);
  mo.start = 900;
  mo.end = 990;
  mo.stream = st[1];
  mo.kind = MPROF_MEMOP_MEMCPY;
  mo.src_device = mo.dst_device = MPROF_INDEX_NONE;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo), 0);
  mprof_range_record range = {950,
                              1400,
                              mprof_writer_string(w, "forward"),
                              mprof_writer_string(w, "domain"),
                              42,
                              0,
                              0,
                              0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &range),
                   0);
  mprof_api_call_record call = {980,
                                995,
                                10,
                                42,
                                mprof_writer_string(w, "cudaLaunchKernel"),
                                MPROF_API_RUNTIME};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &call),
                   0);
  mprof_memory_access_record ma = {k[1], 0x10, MPROF_MEMORY_READ, 4, 1, 32,
                                   128,  4};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &ma), 0);
  mprof_span_record span = {1001,  1020, 1, 17, 4, MPROF_INDEX_NONE,
                            rg[1], 0,    0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &span), 0);
  mprof_stall_reason_record sr = {
      d[1], 0, mprof_writer_string(w, MPROF_STALL_REASON_PREFIX "wait"), 0};
  assert_int_equal(
      mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr), 0);
  mprof_pc_sample_record pc = {
      0x1234, mprof_writer_string(w, "_Z1bv"), 3, 0x10, 0, 5, 0, d[1], 1};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc),
                   0);
  static const char elf[16] = "\x7f"
                              "ELF cubin bytes";
  mprof_cubin_record cb = {0x1234, 0, 0, 4096, d[1], MPROF_CUBIN_KEPT_WHOLE};
  assert_int_equal(mprof_writer_cubin(w, &cb, elf, sizeof elf), 0);
  mprof_cubin_record cb2 = {0x5678, 0, 0, 4096, d[0], MPROF_CUBIN_KEPT_WHOLE};
  assert_int_equal(mprof_writer_cubin(w, &cb2, elf, 8), 0);
  assert_int_equal(mprof_writer_drop(w, MPROF_DROP_PC_DROPPED_SAMPLES, d[1], 2),
                   0);
  mprof_pm_metric_record pm = {d[1],
                               0,
                               mprof_writer_string(w, "dram"),
                               mprof_writer_string(w, "percent"),
                               100000,
                               0};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PM_METRICS, &pm),
                   0);
  mprof_pm_sample_record ps;
  memset(&ps, 0, sizeof ps);
  ps.start = 1000;
  ps.end = 1100;
  ps.device = d[1];
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PM_SAMPLES, &ps),
                   0);
  /* Sections this function does not know yet: a zeroed record each (DROPS
   * and BLOBS are written above, through their own calls). */
  static const unsigned char zero[MPROF__RECORD_SIZE_MAX];
  for (uint32_t s = MPROF_SECTION_META; s <= MPROF_SECTION_TYPE_MAX_; s++)
    if (s != MPROF_SECTION_BLOBS && s != MPROF_SECTION_DROPS &&
        (has_references(s) || is_target(s)) &&
        mprof_writer_count(w, (mprof_section_type)s) == 0)
      assert_int_equal(
          mprof_writer_append(w, NULL, (mprof_section_type)s, zero), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

/* ---- a written file, patched --------------------------------------------- */

static mprof_section_entry *entry_of(unsigned char *file, uint32_t type) {
  mprof_file_header *h = (mprof_file_header *)file;
  mprof_section_entry *dir =
      (mprof_section_entry *)(file + h->directory_offset);
  for (uint32_t i = 0; i < h->section_count; i++)
    if (dir[i].type == type)
      return &dir[i];
  return NULL;
}

static uint64_t records_of(unsigned char *file, uint32_t type) {
  const mprof_section_entry *e = entry_of(file, type);
  return e ? e->length / e->record_size : 0;
}

/* The last record of section @p type in @p file: its index and its byte
 * offset in the file. */
static size_t last_record(unsigned char *file, uint32_t type, uint64_t *at) {
  const mprof_section_entry *e = entry_of(file, type);
  if (!e || e->length == 0)
    fail_msg("the trace has no %s record: write_every_reference() needs one",
             mprof_section_name(type));
  size_t index = (size_t)(e->length / e->record_size) - 1;
  *at = e->offset + (uint64_t)index * e->record_size;
  return index;
}

/* Section @p type's checksum, the directory's and the header's, after its
 * bytes were changed. */
static void mend_checksums(unsigned char *file, uint32_t type) {
  mprof_file_header *h = (mprof_file_header *)file;
  mprof_section_entry *e = entry_of(file, type);
  e->checksum = mprof_crc32c(0, file + e->offset, (size_t)e->length);
  h->directory_checksum =
      mprof_crc32c(0, file + h->directory_offset,
                   h->section_count * sizeof(mprof_section_entry));
  h->header_checksum = mprof_crc32c(0, h, 40);
}

typedef struct fixture {
  char path[1024];    /* the trace as written */
  char patched[1024]; /* the copy each case opens */
  unsigned char *file;
  size_t size;
} fixture;

static void load(fixture *fx) {
  snprintf(fx->path, sizeof fx->path, "%s", test_path("refs.mprof"));
  snprintf(fx->patched, sizeof fx->patched, "%s",
           test_path("refs-patched.mprof"));
  write_every_reference(fx->path);
  fx->file = test_read_file(fx->path, &fx->size);
  assert_non_null(fx->file);
}

static void release(fixture *fx) {
  free(fx->file);
  unlink(fx->path);
  unlink(fx->patched);
}

/* The trace with @p size bytes at @p at (in section @p type) set to
 * @p value, checksums mended, opened: 0, or the reader's status with its
 * message in @p why. */
static int open_patched(fixture *fx, uint32_t type, uint64_t at,
                        const void *value, size_t size, char *why,
                        size_t why_size) {
  unsigned char *copy = (unsigned char *)malloc(fx->size);
  assert_non_null(copy);
  memcpy(copy, fx->file, fx->size);
  memcpy(copy + at, value, size);
  mend_checksums(copy, type);
  assert_int_equal(test_write_file(fx->patched, copy, fx->size), 0);
  free(copy);
  mprof_trace *t = NULL;
  int rc = mprof_trace_open(&t, fx->patched, NULL);
  snprintf(why, why_size, "%s", rc ? mprof_error_last() : "");
  mprof_trace_free(t);
  return rc;
}

/* Refused with EFORMAT and "PATCHED: @p want". */
static void expect_refused(fixture *fx, uint32_t type, uint64_t at,
                           const void *value, size_t size, const char *want) {
  char why[1024], full[1200];
  snprintf(full, sizeof full, "%s: %s" SUFFIX, fx->patched, want);
  int rc = open_patched(fx, type, at, value, size, why, sizeof why);
  if (rc != MPROF_EFORMAT || strcmp(why, full) != 0)
    fail_msg("status %d, message\n  %s\nexpected EFORMAT and\n  %s", rc, why,
             full);
}

static void expect_read(fixture *fx, uint32_t type, uint64_t at,
                        const void *value, size_t size, const char *what) {
  char why[1024];
  if (open_patched(fx, type, at, value, size, why, sizeof why))
    fail_msg("%s: refused: %s", what, why);
}

/* ---- the field table ------------------------------------------------------
 */

/* What the reader says of reference @p ref in field @p f of record
 * @p record (at byte @p at) of section @p s, whose target holds @p count. */
static void reference_message(char *out, size_t size, uint32_t s, uint64_t at,
                              size_t record, const record_field *f,
                              uint32_t ref, uint64_t count) {
  if (f->kind == FIELD_STRING)
    snprintf(out, size,
             "%s at byte %llu: record %zu: %s refers to string %u, past the "
             "string table (%llu bytes)",
             mprof_section_name(s), (unsigned long long)at, record, f->what,
             ref, (unsigned long long)count);
  else
    snprintf(out, size,
             "%s at byte %llu: record %zu: %s %u does not exist (%s has %llu "
             "records)",
             mprof_section_name(s), (unsigned long long)at, record, f->what,
             ref, mprof_section_name(f->aux), (unsigned long long)count);
}

/* Every string and index field of the table, in the last record of its
 * section: its table's size is refused, one less is read, and NONE is read
 * exactly where the field allows it. Every such field is checked at open
 * (docs/FORMAT.md: "The reader validates every reference before handing
 * out a record"); LAUNCHES' by the launch pass, the others by the table. */
static void test_every_reference_at_its_bound(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  size_t tested = 0;
  for (uint32_t s = 0; s <= MPROF_SECTION_TYPE_MAX_; s++) {
    size_t n;
    const record_field *fields = mprof__section_fields(s, &n);
    for (size_t i = 0; i < n; i++) {
      const record_field *f = &fields[i];
      if (f->kind != FIELD_STRING && f->kind != FIELD_INDEX &&
          f->kind != FIELD_INDEX_OR_NONE)
        continue;
      if (!f->checked && s != MPROF_SECTION_LAUNCHES)
        fail_msg("%s %s is a reference the reader does not check",
                 mprof_section_name(s), f->what);
      uint64_t at;
      size_t record = last_record(fx.file, s, &at);
      uint64_t count = f->kind == FIELD_STRING
                           ? entry_of(fx.file, MPROF_SECTION_STRINGS)->length
                           : records_of(fx.file, f->aux);
      assert_true(count > 0 && count < MPROF_INDEX_NONE);
      char want[1024], what[256];
      uint32_t ref = (uint32_t)count;
      reference_message(want, sizeof want, s, at, record, f, ref, count);
      expect_refused(&fx, s, at + f->offset, &ref, sizeof ref, want);
      ref = (uint32_t)count - 1;
      snprintf(what, sizeof what, "%s %s = %u (of %llu)", mprof_section_name(s),
               f->what, ref, (unsigned long long)count);
      expect_read(&fx, s, at + f->offset, &ref, sizeof ref, what);
      ref = MPROF_INDEX_NONE;
      if (f->kind == FIELD_INDEX_OR_NONE) {
        snprintf(what, sizeof what, "%s %s = NONE", mprof_section_name(s),
                 f->what);
        expect_read(&fx, s, at + f->offset, &ref, sizeof ref, what);
      } else {
        reference_message(want, sizeof want, s, at, record, f, ref, count);
        expect_refused(&fx, s, at + f->offset, &ref, sizeof ref, want);
      }
      tested++;
    }
  }
  /* 14 strings and 15 indices when this test was written; a field added to
   * the table adds to them. */
  assert_true(tested >= 29);
  release(&fx);
}

/* Every start/end pair of the table: ending before the start is refused
 * where the reader checks it (the table's flag; LAUNCHES by the launch
 * pass; PROCESSES by its own pass, where an end of 0 means still running),
 * read where it does not; ending at the start is read. */
static void test_every_time_pair_at_its_bound(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  size_t refused = 0;
  for (uint32_t s = 0; s <= MPROF_SECTION_TYPE_MAX_; s++) {
    size_t n;
    const record_field *fields = mprof__section_fields(s, &n);
    for (size_t i = 0; i < n; i++) {
      const record_field *f = &fields[i];
      if (f->kind != FIELD_TIMES)
        continue;
      assert_int_equal(f->aux, f->offset + 8); /* end follows start */
      uint64_t at;
      size_t record = last_record(fx.file, s, &at);
      uint64_t times[2] = {5000, 4999};
      char what[256], want[1024];
      snprintf(what, sizeof what, "%s ending before it starts",
               mprof_section_name(s));
      if (f->checked || s == MPROF_SECTION_LAUNCHES ||
          s == MPROF_SECTION_PROCESSES) {
        snprintf(want, sizeof want,
                 "%s at byte %llu: record %zu ends before it starts",
                 mprof_section_name(s), (unsigned long long)at, record);
        expect_refused(&fx, s, at + f->offset, times, sizeof times, want);
        refused++;
      } else {
        expect_read(&fx, s, at + f->offset, times, sizeof times, what);
      }
      times[1] = times[0];
      snprintf(what, sizeof what, "%s ending as it starts",
               mprof_section_name(s));
      expect_read(&fx, s, at + f->offset, times, sizeof times, what);
    }
  }
  /* LAUNCHES, MEMOPS, RANGES, API_CALLS, SPANS and PM_SAMPLES
   * (docs/FORMAT.md). */
  assert_true(refused >= 6);
  release(&fx);
}

/* ---- the checks outside the table ---------------------------------------- */

/* A cubin's blob must lie inside BLOBS: ending at its end is read, a byte
 * past it refused, and so is an offset past it with nothing to read. */
static void test_cubin_blob_bounds(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  uint64_t blobs = entry_of(fx.file, MPROF_SECTION_BLOBS)->length;
  assert_true(blobs >= 16);
  uint64_t at;
  size_t record = last_record(fx.file, MPROF_SECTION_CUBINS, &at);
  size_t field = offsetof(mprof_cubin_record, blob_offset);
  assert_int_equal(offsetof(mprof_cubin_record, blob_size), field + 8);
  const struct {
    uint64_t offset, size;
    int read;
  } cases[] = {
      {blobs - 16, 16, 1}, {blobs - 15, 16, 0}, {0, blobs, 1},
      {0, blobs + 1, 0},   {blobs, 0, 1},       {blobs + 1, 0, 0},
      {UINT64_MAX, 2, 0},  {8, UINT64_MAX, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint64_t value[2] = {cases[c].offset, cases[c].size};
    char want[1024];
    if (cases[c].read) {
      snprintf(want, sizeof want, "blob of %llu bytes at %llu",
               (unsigned long long)value[1], (unsigned long long)value[0]);
      expect_read(&fx, MPROF_SECTION_CUBINS, at + field, value, sizeof value,
                  want);
      continue;
    }
    snprintf(want, sizeof want,
             "CUBINS at byte %llu: record %zu: blob of %llu bytes at %llu is "
             "outside BLOBS (%llu bytes)",
             (unsigned long long)at, record, (unsigned long long)value[1],
             (unsigned long long)value[0], (unsigned long long)blobs);
    expect_refused(&fx, MPROF_SECTION_CUBINS, at + field, value, sizeof value,
                   want);
  }
  release(&fx);
}

/* A PM metric's column indexes a sample's 12 values: 11 is read, 12 is
 * refused. */
static void test_pm_column_bound(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  uint64_t at;
  size_t record = last_record(fx.file, MPROF_SECTION_PM_METRICS, &at);
  size_t field = offsetof(mprof_pm_metric_record, column);
  uint32_t column = MPROF_PM_MAX_METRICS - 1;
  expect_read(&fx, MPROF_SECTION_PM_METRICS, at + field, &column, sizeof column,
              "PM column 11");
  column = MPROF_PM_MAX_METRICS;
  char want[1024];
  snprintf(want, sizeof want,
           "PM_METRICS at byte %llu: record %zu: column 12 is not below 12",
           (unsigned long long)at, record);
  expect_refused(&fx, MPROF_SECTION_PM_METRICS, at + field, &column,
                 sizeof column, want);
  release(&fx);
}

/* A device's sm_count: 0 (unknown) and MPROF_DEVICE_SM_MAX are read, one
 * more is refused, and so is 2^28 (whose views once asked for 5.2 GB). */
static void test_sm_count_bound(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  uint64_t at;
  size_t record = last_record(fx.file, MPROF_SECTION_DEVICES, &at);
  size_t field = offsetof(mprof_device_record, sm_count);
  const uint32_t read[] = {0, 1, MPROF_DEVICE_SM_MAX};
  for (size_t i = 0; i < 3; i++) {
    char what[64];
    snprintf(what, sizeof what, "sm_count %u", read[i]);
    expect_read(&fx, MPROF_SECTION_DEVICES, at + field, &read[i],
                sizeof read[i], what);
  }
  const uint32_t refused[] = {MPROF_DEVICE_SM_MAX + 1, 1u << 28, UINT32_MAX};
  for (size_t i = 0; i < 3; i++) {
    char want[1024];
    snprintf(want, sizeof want,
             "DEVICES at byte %llu: record %zu: sm_count %u is above 1024, "
             "more SMs than a GPU has",
             (unsigned long long)at, record, refused[i]);
    expect_refused(&fx, MPROF_SECTION_DEVICES, at + field, &refused[i],
                   sizeof refused[i], want);
  }
  release(&fx);
}

/* A memory access record's counts must go together (docs/FORMAT.md):
 * thread accesses >= warp accesses, warp accesses <= sectors <= 2 x thread
 * accesses, each at its bound and one past it; and no unknown flag. */
static void test_memory_access_bounds(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  uint64_t at;
  size_t record = last_record(fx.file, MPROF_SECTION_MEMORY_ACCESSES, &at);
  size_t warps = offsetof(mprof_memory_access_record, warp_accesses);
  size_t threads = offsetof(mprof_memory_access_record, thread_accesses);
  size_t sectors = offsetof(mprof_memory_access_record, sectors);
  assert_int_equal(threads, warps + 8);
  assert_int_equal(sectors, warps + 24);
  const struct {
    uint64_t warps, threads, sectors;
    int read;
  } cases[] = {
      {4, 4, 4, 1}, {4, 3, 4, 0},  {4, 4, 3, 0}, {4, 4, 8, 1},
      {4, 4, 9, 0}, {4, 5, 10, 1}, {0, 0, 0, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    /* warp_accesses, thread_accesses, bytes (as written), sectors */
    uint64_t value[4] = {cases[c].warps, cases[c].threads, 128,
                         cases[c].sectors};
    char want[512];
    snprintf(want, sizeof want,
             "MEMORY_ACCESSES at byte %llu: record %zu: %llu warp accesses, "
             "%llu thread accesses and %llu sectors cannot go together",
             (unsigned long long)at, record, (unsigned long long)value[0],
             (unsigned long long)value[1], (unsigned long long)value[3]);
    if (cases[c].read)
      expect_read(&fx, MPROF_SECTION_MEMORY_ACCESSES, at + warps, value,
                  sizeof value, want);
    else
      expect_refused(&fx, MPROF_SECTION_MEMORY_ACCESSES, at + warps, value,
                     sizeof value, want);
  }
  size_t field = offsetof(mprof_memory_access_record, flags);
  uint32_t flags = MPROF_MEMORY_FLAGS_KNOWN;
  expect_read(&fx, MPROF_SECTION_MEMORY_ACCESSES, at + field, &flags,
              sizeof flags, "every known flag");
  flags = MPROF_MEMORY_FLAGS_KNOWN + 1;
  char want[512];
  snprintf(want, sizeof want,
           "MEMORY_ACCESSES at byte %llu: record %zu: unknown flags 0x%x",
           (unsigned long long)at, record, flags);
  expect_refused(&fx, MPROF_SECTION_MEMORY_ACCESSES, at + field, &flags,
                 sizeof flags, want);
  release(&fx);
}

/* The header's file size is the file's: a byte more (a copy with junk after
 * it) is refused as a byte less (a truncated one) is. */
static void test_file_size_is_exact(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  for (int extra = -1; extra <= 8; extra += 9) {
    size_t size = fx.size + (size_t)extra;
    unsigned char *copy = (unsigned char *)calloc(1, fx.size + 8);
    assert_non_null(copy);
    memcpy(copy, fx.file, extra < 0 ? size : fx.size);
    assert_int_equal(test_write_file(fx.patched, copy, size), 0);
    free(copy);
    mprof_trace *t = NULL;
    assert_int_equal(mprof_trace_open(&t, fx.patched, NULL), MPROF_EFORMAT);
    char want[1200];
    snprintf(want, sizeof want,
             "%s: header at byte 32: header says %zu bytes but the file has "
             "%zu" SUFFIX,
             fx.patched, fx.size, size);
    assert_string_equal(mprof_error_last(), want);
  }
  release(&fx);
}

/* The string table's own bounds: it begins and ends with a NUL, so that
 * every reference below its length reads a terminated string. */
static void test_string_table_terminated(void **state) {
  (void)state;
  fixture fx;
  load(&fx);
  const mprof_section_entry *e = entry_of(fx.file, MPROF_SECTION_STRINGS);
  uint64_t first = e->offset, last = e->offset + e->length - 1;
  unsigned char x = 'x';
  char want[1024];
  snprintf(want, sizeof want,
           "STRINGS at byte %llu: string table is missing or not "
           "NUL-terminated",
           (unsigned long long)e->offset);
  expect_refused(&fx, MPROF_SECTION_STRINGS, last, &x, 1, want);
  expect_refused(&fx, MPROF_SECTION_STRINGS, first, &x, 1, want);
  release(&fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_reference_at_its_bound),
      cmocka_unit_test(test_every_time_pair_at_its_bound),
      cmocka_unit_test(test_cubin_blob_bounds),
      cmocka_unit_test(test_pm_column_bound),
      cmocka_unit_test(test_sm_count_bound),
      cmocka_unit_test(test_memory_access_bounds),
      cmocka_unit_test(test_file_size_is_exact),
      cmocka_unit_test(test_string_table_terminated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
