/*
 * mprof — copying a trace's records into a writer (format/copy.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <string.h>

#include "format/copy.h"
#include "internal.h"

/* How a record's fields move into the merged trace: times onto the first
 * trace's clock, indexes past the earlier traces' records, correlation ids
 * past theirs, string refs into the written string table (the only moves
 * of a plain copy). */
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
    STRING(META, mprof_meta_record, key),
    STRING(META, mprof_meta_record, value),
    STRING(DEVICES, mprof_device_record, name),
    STRING(STREAMS, mprof_stream_record, name),
    INDEX(STREAMS, mprof_stream_record, device, DEVICES),
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
#define MOVE_COUNT (sizeof field_moves / sizeof field_moves[0])

static uint64_t shifted(uint64_t time, int64_t shift) {
  if (!time)
    return 0;
  int64_t moved = (int64_t)time + shift;
  return moved > 0 ? (uint64_t)moved : 0;
}

/* Append the records of @p section of @p t to @p w: strings re-interned,
 * SPANS launches renumbered by @p launch_map, and with @p move the other
 * fields moved too (field_moves). */
static int copy_records(mprof_writer *w, const mprof_trace *t, uint32_t section,
                        const mprof__move *move, const uint32_t *launch_map) {
  if (section == MPROF_SECTION_STRINGS || section == MPROF_SECTION_CUBINS ||
      section == MPROF_SECTION_BLOBS || section == MPROF_SECTION_DROPS ||
      !mprof__record_size(section))
    return mprof__error_set(MPROF_EINVAL, "section %u is not copied by record",
                            (unsigned)section);
  size_t n, size = mprof__record_size(section);
  const uint8_t *recs =
      (const uint8_t *)mprof_trace_section(t, (mprof_section_type)section, &n);
  uint8_t rec[256];
  if (size > sizeof rec)
    return mprof__error_set(MPROF_EFORMAT, "%s: records of %u bytes",
                            mprof_section_name(section), (unsigned)size);
  /* The section's moves, found once, not per record. */
  const field_move *mine[MOVE_COUNT];
  size_t count = 0;
  for (size_t c = 0; c < MOVE_COUNT; c++)
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
        v = move ? shifted(v, move->shift) : v;
        memcpy(at, &v, sizeof v);
        continue;
      }
      uint32_t v;
      memcpy(&v, at, sizeof v);
      if (f->kind == F_STRING)
        v = mprof_writer_string(w, mprof_trace_string(t, v));
      else if (launch_map && f->target == MPROF_SECTION_LAUNCHES)
        v = v == MPROF_INDEX_NONE ? v : launch_map[v];
      else if (move && f->kind == F_INDEX)
        v = mprof__moved(v, move->base[f->target]);
      else if (move && f->kind == F_CORRELATION)
        v = v ? v + move->correlations : 0; /* 0 stays unknown */
      memcpy(at, &v, sizeof v);
    }
    int rc = mprof_writer_append(w, NULL, section, rec);
    if (rc)
      return rc;
  }
  return 0;
}

int mprof__copy_section(mprof_writer *w, const mprof_trace *trace,
                        mprof_section_type type, const uint32_t *launch_map) {
  return copy_records(w, trace, type, NULL, launch_map);
}

int mprof__copy_moved(mprof_writer *w, const mprof_trace *trace,
                      mprof_section_type type, const mprof__move *move) {
  return copy_records(w, trace, type, move, NULL);
}

int mprof__copy_drops(mprof_writer *w, const mprof_trace *trace,
                      const mprof__move *move) {
  size_t n;
  const mprof_drop_record *drops = mprof_trace_drops(trace, &n);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    rc = mprof_writer_drop(
        w, (mprof_drop_kind)drops[i].kind,
        move ? mprof__moved(drops[i].device, move->base[MPROF_SECTION_DEVICES])
             : drops[i].device,
        drops[i].count);
  return rc;
}
