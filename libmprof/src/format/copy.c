/*
 * mprof — copying a trace's records into a writer (format/copy.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <string.h>

#include "format/copy.h"
#include "format/trace_internal.h"
#include "internal.h"

/* Move the time at @p at by @p shift ns; 0 stays unknown. */
static void shift_time(uint8_t *at, int64_t shift) {
  uint64_t time = mprof__u64_at(at);
  int64_t moved = (int64_t)time + shift;
  time = time && moved > 0 ? (uint64_t)moved : 0;
  memcpy(at, &time, sizeof time);
}

/* Each section's fields move as mprof__section_fields() lists them (a
 * range moves its first index). */
void mprof__copy_record(mprof_writer *w, const mprof_trace *t,
                        mprof_section_type section, void *record,
                        const mprof__move *move, const uint32_t *launch_map) {
  uint8_t *rec = (uint8_t *)record;
  size_t count;
  const record_field *fields = mprof__section_fields(section, &count);
  for (size_t c = 0; c < count; c++) {
    const record_field *f = &fields[c];
    uint8_t *at = rec + f->offset;
    if (f->kind == FIELD_TIMES) {
      if (move) {
        shift_time(at, move->shift);
        shift_time(rec + f->aux, move->shift);
      }
      continue;
    }
    uint32_t v = mprof__u32_at(at);
    if (f->kind == FIELD_STRING)
      v = mprof_writer_string(w, mprof_trace_string(t, v));
    else if (f->kind == FIELD_CORRELATION)
      v = move && v ? v + move->correlations : v; /* 0 stays unknown */
    else if (launch_map && f->aux == MPROF_SECTION_LAUNCHES)
      v = v == MPROF_INDEX_NONE ? v : launch_map[v];
    else if (move)
      v = mprof__moved(v, move->base[f->aux]);
    memcpy(at, &v, sizeof v);
  }
}

int mprof__copy_section(mprof_writer *w, const mprof_trace *t,
                        mprof_section_type section, const mprof__move *move,
                        const uint32_t *launch_map) {
  if (section == MPROF_SECTION_STRINGS || section == MPROF_SECTION_CUBINS ||
      section == MPROF_SECTION_BLOBS || section == MPROF_SECTION_DROPS ||
      !mprof__record_size(section))
    return mprof__error_set(MPROF_EINVAL, "section %u is not copied by record",
                            (unsigned)section);
  size_t n, size = mprof__record_size(section);
  const uint8_t *recs = (const uint8_t *)mprof_trace_section(t, section, &n);
  uint8_t rec[256];
  if (size > sizeof rec)
    return mprof__error_set(MPROF_EFORMAT, "%s: records of %u bytes",
                            mprof_section_name(section), (unsigned)size);
  for (size_t i = 0; i < n; i++) {
    memcpy(rec, recs + i * size, size);
    mprof__copy_record(w, t, section, rec, move, launch_map);
    int rc = mprof_writer_append(w, NULL, section, rec);
    if (rc)
      return rc;
  }
  return 0;
}

int mprof__copy_processes(mprof_writer *w, const mprof_trace *trace,
                          const mprof__move *move, const char *path,
                          const mprof__process_end *end) {
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(trace, &n);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_process_record rec = p[i];
    mprof__copy_record(w, trace, MPROF_SECTION_PROCESSES, &rec, move, NULL);
    if (!rec.path && path)
      rec.path = mprof_writer_string(w, path);
    if (move)
      rec.clock_shift += move->shift;
    if (end && rec.pid == end->pid && rec.exit_kind == MPROF_EXIT_UNKNOWN) {
      rec.exit_kind = end->kind;
      rec.exit_value = end->value;
    }
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &rec);
  }
  return rc;
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
