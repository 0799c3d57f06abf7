/*
 * mprof — copy a trace with its launches sorted or its code dropped.
 *
 * Every record goes through the writer again: strings are re-interned (their
 * offsets change), table indices are kept (records are appended in their
 * original order), and only launch indices move when sorting, so span
 * records are remapped.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/sass.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

#define STR(ref) mprof_writer_string(w, mprof_trace_string(trace, (ref)))

#define COPY_SECTION(type, rec_type, accessor, fix)                            \
  do {                                                                         \
    size_t n_;                                                                 \
    const rec_type *r_ = accessor(trace, &n_);                                 \
    for (size_t i_ = 0; i_ < n_ && !rc; i_++) {                                \
      rec_type rec = r_[i_];                                                   \
      fix;                                                                     \
      rc = mprof_writer_append(w, NULL, type, &rec);                           \
    }                                                                          \
  } while (0)

int mprof_trace_rewrite(const mprof_trace *trace, const char *path,
                        unsigned flags) {
  if (!trace || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_rewrite: NULL");
  size_t launch_count, streams;
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_count);
  mprof_trace_streams(trace, &streams);
  /* old launch index -> new, when sorting */
  uint32_t *new_index = NULL;
  if ((flags & MPROF_REWRITE_SORT_LAUNCHES) && launch_count) {
    new_index = (uint32_t *)malloc(launch_count * sizeof *new_index);
    if (!new_index)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
    uint32_t next = 0;
    for (uint32_t s = 0; s < streams; s++) {
      size_t count = mprof_trace_stream_launch_count(trace, s);
      for (size_t p = 0; p < count; p++) {
        const mprof_launch_record *l = mprof_trace_stream_launch(trace, s, p);
        new_index[l - launches] = next++;
      }
    }
  }
  mprof_writer *w;
  int rc = mprof_writer_open(&w, path, NULL);
  if (rc) {
    free(new_index);
    return rc;
  }
  COPY_SECTION(MPROF_SECTION_META, mprof_meta_record, mprof_trace_meta_records,
               (rec.key = STR(rec.key), rec.value = STR(rec.value)));
  COPY_SECTION(MPROF_SECTION_DEVICES, mprof_device_record, mprof_trace_devices,
               rec.name = STR(rec.name));
  COPY_SECTION(MPROF_SECTION_STREAMS, mprof_stream_record, mprof_trace_streams,
               rec.name = STR(rec.name));
  size_t n;
  const mprof_kernel_record *kernels = mprof_trace_kernels(trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_kernel_record rec = kernels[i];
    const char *mangled = mprof_trace_string(trace, rec.mangled_name);
    char *demangled = NULL;
    rec.mangled_name = mprof_writer_string(w, mangled);
    if (!rec.demangled_name && (flags & MPROF_REWRITE_DEMANGLE) &&
        mprof_sass_demangle(&demangled, mangled) == 0)
      rec.demangled_name = mprof_writer_string(w, demangled);
    else
      rec.demangled_name = STR(rec.demangled_name);
    free(demangled);
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_KERNELS, &rec);
  }
  COPY_SECTION(MPROF_SECTION_SHAPES, mprof_shape_record, mprof_trace_shapes,
               (void)0);
  if (new_index) {
    for (uint32_t s = 0; s < streams && !rc; s++) {
      size_t count = mprof_trace_stream_launch_count(trace, s);
      for (size_t p = 0; p < count && !rc; p++)
        rc = mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES,
                                 mprof_trace_stream_launch(trace, s, p));
    }
  } else {
    COPY_SECTION(MPROF_SECTION_LAUNCHES, mprof_launch_record,
                 mprof_trace_launches, (void)0);
  }
  COPY_SECTION(MPROF_SECTION_MEMOPS, mprof_memop_record, mprof_trace_memops,
               (void)0);
  COPY_SECTION(MPROF_SECTION_RANGES, mprof_range_record, mprof_trace_ranges,
               (rec.name = STR(rec.name), rec.domain = STR(rec.domain)));
  COPY_SECTION(MPROF_SECTION_REGIONS, mprof_region_record, mprof_trace_regions,
               rec.name = STR(rec.name));
  COPY_SECTION(MPROF_SECTION_SPANS, mprof_span_record, mprof_trace_spans,
               if (new_index && rec.launch != MPROF_INDEX_NONE) rec.launch =
                   new_index[rec.launch]);
  COPY_SECTION(MPROF_SECTION_STALL_REASONS, mprof_stall_reason_record,
               mprof_trace_stall_reasons, rec.name = STR(rec.name));
  COPY_SECTION(MPROF_SECTION_PC_SAMPLES, mprof_pc_sample_record,
               mprof_trace_pc_samples,
               rec.function_name = STR(rec.function_name));
  COPY_SECTION(MPROF_SECTION_PM_METRICS, mprof_pm_metric_record,
               mprof_trace_pm_metrics,
               (rec.name = STR(rec.name), rec.unit = STR(rec.unit)));
  COPY_SECTION(MPROF_SECTION_PM_SAMPLES, mprof_pm_sample_record,
               mprof_trace_pm_samples, (void)0);
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    size_t size = 0;
    const void *blob = (flags & MPROF_REWRITE_DROP_CODE)
                           ? NULL
                           : mprof_trace_cubin_blob(trace, &cubins[i], &size);
    mprof_cubin_record rec = cubins[i];
    if (!blob)
      rec.flags = (rec.flags & ~MPROF_CUBIN_KEPT_WHOLE) | MPROF_CUBIN_OMITTED;
    rc = mprof_writer_cubin(w, &rec, blob, size);
  }
  const mprof_drop_record *drops = mprof_trace_drops(trace, &n);
  for (size_t i = 0; i < n && !rc; i++)
    rc = mprof_writer_drop(w, (mprof_drop_kind)drops[i].kind, drops[i].device,
                           drops[i].count);
  free(new_index);
  if (rc) {
    mprof_writer_abort(w);
    return rc;
  }
  return mprof_writer_finish(w);
}
