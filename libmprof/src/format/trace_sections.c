/*
 * mprof — section names, the layouts of their records this reader reads,
 * the fields of their records and the words of a parse error.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "format/trace_internal.h"
#include "internal.h"
#include "mprof/trace.h"

static const char *const section_names[SECTION_COUNT] = {
    "UNKNOWN",         "STRINGS",   "META",          "DEVICES",    "STREAMS",
    "KERNELS",         "SHAPES",    "LAUNCHES",      "MEMOPS",     "RANGES",
    "REGIONS",         "SPANS",     "STALL_REASONS", "PC_SAMPLES", "CUBINS",
    "BLOBS",           "DROPS",     "PM_METRICS",    "PM_SAMPLES", "API_CALLS",
    "MEMORY_ACCESSES", "PROCESSES", "OPEN_RANGES",   "CAPTURE",    "SOURCES",
    "MKPROF"};

const char *mprof_section_name(uint32_t type) {
  return type < SECTION_COUNT && section_names[type] ? section_names[type]
                                                     : "UNKNOWN";
}

/* Each section's records as this reader knows them: the newest layout
 * version (its records are mprof__record_size() bytes, format.h's struct)
 * and the shortest record it reads, its missing tail read as zero. A field
 * appended to a record (docs/FORMAT.md, "Compatibility") raises `version`;
 * `shortest` stays where zero is a right value of the new field in older
 * files, else it rises to the new size and older files are refused. No
 * field has been appended yet: every section reads its version 1 records,
 * whole. STRINGS and BLOBS hold bytes, records of 1 byte at any version. */
static const struct section_layout {
  uint16_t version;
  uint16_t shortest;
} layouts[SECTION_COUNT] = {
    [MPROF_SECTION_STRINGS] = {1, 1},
    [MPROF_SECTION_META] = {1, 8},
    [MPROF_SECTION_DEVICES] = {1, 96},
    [MPROF_SECTION_STREAMS] = {1, 16},
    [MPROF_SECTION_KERNELS] = {1, 40},
    [MPROF_SECTION_SHAPES] = {1, 48},
    [MPROF_SECTION_LAUNCHES] = {1, 40},
    [MPROF_SECTION_MEMOPS] = {1, 48},
    [MPROF_SECTION_RANGES] = {1, 40},
    [MPROF_SECTION_REGIONS] = {1, 16},
    [MPROF_SECTION_SPANS] = {1, 48},
    [MPROF_SECTION_STALL_REASONS] = {1, 16},
    [MPROF_SECTION_PC_SAMPLES] = {1, 40},
    [MPROF_SECTION_CUBINS] = {1, 40},
    [MPROF_SECTION_BLOBS] = {1, 1},
    [MPROF_SECTION_DROPS] = {1, 16},
    [MPROF_SECTION_PM_METRICS] = {1, 32},
    [MPROF_SECTION_PM_SAMPLES] = {1, 72},
    [MPROF_SECTION_API_CALLS] = {1, 32},
    [MPROF_SECTION_MEMORY_ACCESSES] = {1, 48},
    [MPROF_SECTION_PROCESSES] = {1, 88},
    [MPROF_SECTION_OPEN_RANGES] = {1, 40},
    [MPROF_SECTION_CAPTURE] = {1, 96},
    [MPROF_SECTION_SOURCES] = {1, 1},
    [MPROF_SECTION_MKPROF] = {1, 1},
};

uint32_t mprof__layout_version(uint32_t type) {
  return type < SECTION_COUNT ? layouts[type].version : 0;
}

const char *mprof__layout_problem(uint32_t type, uint32_t version,
                                  uint32_t stored, char *why, size_t size) {
  uint32_t want = mprof__record_size(type);
  const struct section_layout *l = &layouts[type];
  /* A layout as new as ours or newer has at least our fields; an older one
   * (or one the file does not name) at least the shortest we read. */
  uint32_t least = version >= l->version ? want : l->shortest;
  if (want == 1 && stored != 1)
    snprintf(why, size, "records of %u bytes, not single bytes", stored);
  else if (stored < least)
    snprintf(why, size,
             "records of %u bytes, shorter than the %u bytes this mprof reads",
             stored, least);
  else if (version && version <= l->version && stored > want)
    snprintf(why, size,
             "layout version %u with records of %u bytes, longer than "
             "version %u's %u bytes",
             version, stored, l->version, want);
  else if (stored > MPROF__RECORD_SIZE_MAX)
    snprintf(why, size,
             "records of %u bytes, longer than the %u bytes any layout may "
             "have",
             stored, MPROF__RECORD_SIZE_MAX);
  else
    return NULL;
  return why;
}

void mprof__records_resize(unsigned char *dst, uint32_t want,
                           const unsigned char *src, uint32_t stored,
                           size_t count) {
  uint32_t kept = stored < want ? stored : want;
  for (size_t i = 0; i < count; i++) {
    memcpy(dst + i * want, src + i * stored, kept);
    memset(dst + i * want + kept, 0, want - kept);
  }
}

#define STRING(sec, type, field, what)                                         \
  { MPROF_SECTION_##sec, FIELD_STRING, 1, offsetof(type, field), 0, what }
#define INDEX(sec, type, field, target, none_ok, checked)                      \
  {                                                                            \
    MPROF_SECTION_##sec, (none_ok) ? FIELD_INDEX_OR_NONE : FIELD_INDEX,        \
        checked, offsetof(type, field), MPROF_SECTION_##target, #field         \
  }
#define CORR(sec, type)                                                        \
  {                                                                            \
    MPROF_SECTION_##sec, FIELD_CORRELATION, 0, offsetof(type, correlation_id), \
        0, NULL                                                                \
  }
#define RANGE(sec, type, first, target, what)                                  \
  {                                                                            \
    MPROF_SECTION_##sec, FIELD_RANGE, 1, offsetof(type, first),                \
        MPROF_SECTION_##target, what                                           \
  }
#define TIMES(sec, type, checked)                                              \
  {                                                                            \
    MPROF_SECTION_##sec, FIELD_TIMES, checked, offsetof(type, start),          \
        offsetof(type, end), NULL                                              \
  }

/* Grouped by section; its checked fields in the order their errors are
 * reported (LAUNCHES are checked apart, mprof__trace_validate_launches). */
static const record_field record_fields[] = {
    STRING(META, mprof_meta_record, key, "key"),
    STRING(META, mprof_meta_record, value, "value"),
    STRING(DEVICES, mprof_device_record, name, "name"),
    INDEX(STREAMS, mprof_stream_record, device, DEVICES, 1, 1),
    STRING(STREAMS, mprof_stream_record, name, "name"),
    STRING(KERNELS, mprof_kernel_record, mangled_name, "mangled name"),
    STRING(KERNELS, mprof_kernel_record, demangled_name, "demangled name"),
    INDEX(KERNELS, mprof_kernel_record, device, DEVICES, 1, 1),
    INDEX(SHAPES, mprof_shape_record, kernel, KERNELS, 0, 1),
    INDEX(LAUNCHES, mprof_launch_record, shape, SHAPES, 0, 0),
    INDEX(LAUNCHES, mprof_launch_record, stream, STREAMS, 0, 0),
    TIMES(LAUNCHES, mprof_launch_record, 0),
    CORR(LAUNCHES, mprof_launch_record),
    INDEX(MEMOPS, mprof_memop_record, stream, STREAMS, 1, 1),
    TIMES(MEMOPS, mprof_memop_record, 1),
    CORR(MEMOPS, mprof_memop_record),
    STRING(RANGES, mprof_range_record, name, "name"),
    STRING(RANGES, mprof_range_record, domain, "domain"),
    TIMES(RANGES, mprof_range_record, 1), /* open ones too: writers clamp */
    STRING(API_CALLS, mprof_api_call_record, name, "name"),
    TIMES(API_CALLS, mprof_api_call_record, 1),
    CORR(API_CALLS, mprof_api_call_record),
    INDEX(MEMORY_ACCESSES, mprof_memory_access_record, kernel, KERNELS, 0, 1),
    STRING(REGIONS, mprof_region_record, name, "name"),
    INDEX(SPANS, mprof_span_record, launch, LAUNCHES, 1, 1),
    INDEX(SPANS, mprof_span_record, region, REGIONS, 1, 1),
    TIMES(SPANS, mprof_span_record, 1),
    INDEX(STALL_REASONS, mprof_stall_reason_record, device, DEVICES, 1, 1),
    STRING(STALL_REASONS, mprof_stall_reason_record, name, "name"),
    STRING(PC_SAMPLES, mprof_pc_sample_record, function_name, "function name"),
    INDEX(PC_SAMPLES, mprof_pc_sample_record, device, DEVICES, 1, 1),
    CORR(PC_SAMPLES, mprof_pc_sample_record),
    INDEX(CUBINS, mprof_cubin_record, device, DEVICES, 1, 1),
    INDEX(DROPS, mprof_drop_record, device, DEVICES, 1, 1),
    INDEX(PM_METRICS, mprof_pm_metric_record, device, DEVICES, 0, 1),
    STRING(PM_METRICS, mprof_pm_metric_record, name, "name"),
    STRING(PM_METRICS, mprof_pm_metric_record, unit, "unit"),
    INDEX(PM_SAMPLES, mprof_pm_sample_record, device, DEVICES, 0, 1),
    TIMES(PM_SAMPLES, mprof_pm_sample_record, 1),
    STRING(PROCESSES, mprof_process_record, host, "host"),
    STRING(PROCESSES, mprof_process_record, cmdline, "command line"),
    STRING(PROCESSES, mprof_process_record, path, "path"),
    RANGE(PROCESSES, mprof_process_record, first_stream, STREAMS, "streams"),
    RANGE(PROCESSES, mprof_process_record, first_device, DEVICES, "devices"),
    TIMES(PROCESSES, mprof_process_record, 0), /* end 0: still running */
    INDEX(CAPTURE, mprof_capture_record, process, PROCESSES, 0, 1),
    STRING(CAPTURE, mprof_capture_record, spec, "range"),
    TIMES(CAPTURE, mprof_capture_record, 0), /* end 0: still open */
};
#undef STRING
#undef INDEX
#undef CORR
#undef RANGE
#undef TIMES
#define FIELD_COUNT (sizeof record_fields / sizeof record_fields[0])

const record_field *mprof__section_fields(uint32_t section, size_t *count) {
  size_t first = 0, n = 0;
  while (first < FIELD_COUNT && record_fields[first].section != section)
    first++;
  while (first + n < FIELD_COUNT && record_fields[first + n].section == section)
    n++;
  *count = n;
  return record_fields + first;
}

int mprof__trace_bad_at(const mprof_trace *t, uint32_t type, uint64_t offset,
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
