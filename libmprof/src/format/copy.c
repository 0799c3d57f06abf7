/*
 * mprof — copying a trace's records into a writer (format/copy.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "format/copy.h"
#include "internal.h"

#define STR(ref) mprof_writer_string(w, mprof_trace_string(trace, (ref)))

/* Copy the records of one section, applying @p fix to each (`rec`). */
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

int mprof__copy_section(mprof_writer *w, const mprof_trace *trace,
                        mprof_section_type type, const uint32_t *launch_map) {
  int rc = 0;
  switch (type) {
  case MPROF_SECTION_META:
    COPY_SECTION(type, mprof_meta_record, mprof_trace_meta_records,
                 (rec.key = STR(rec.key), rec.value = STR(rec.value)));
    break;
  case MPROF_SECTION_DEVICES:
    COPY_SECTION(type, mprof_device_record, mprof_trace_devices,
                 rec.name = STR(rec.name));
    break;
  case MPROF_SECTION_STREAMS:
    COPY_SECTION(type, mprof_stream_record, mprof_trace_streams,
                 rec.name = STR(rec.name));
    break;
  case MPROF_SECTION_KERNELS:
    COPY_SECTION(type, mprof_kernel_record, mprof_trace_kernels,
                 (rec.mangled_name = STR(rec.mangled_name),
                  rec.demangled_name = STR(rec.demangled_name)));
    break;
  case MPROF_SECTION_SHAPES:
    COPY_SECTION(type, mprof_shape_record, mprof_trace_shapes, (void)0);
    break;
  case MPROF_SECTION_LAUNCHES:
    COPY_SECTION(type, mprof_launch_record, mprof_trace_launches, (void)0);
    break;
  case MPROF_SECTION_MEMOPS:
    COPY_SECTION(type, mprof_memop_record, mprof_trace_memops, (void)0);
    break;
  case MPROF_SECTION_RANGES:
    COPY_SECTION(type, mprof_range_record, mprof_trace_ranges,
                 (rec.name = STR(rec.name), rec.domain = STR(rec.domain)));
    break;
  case MPROF_SECTION_REGIONS:
    COPY_SECTION(type, mprof_region_record, mprof_trace_regions,
                 rec.name = STR(rec.name));
    break;
  case MPROF_SECTION_SPANS:
    COPY_SECTION(type, mprof_span_record, mprof_trace_spans,
                 if (launch_map && rec.launch != MPROF_INDEX_NONE) rec.launch =
                     launch_map[rec.launch]);
    break;
  case MPROF_SECTION_STALL_REASONS:
    COPY_SECTION(type, mprof_stall_reason_record, mprof_trace_stall_reasons,
                 rec.name = STR(rec.name));
    break;
  case MPROF_SECTION_PC_SAMPLES:
    COPY_SECTION(type, mprof_pc_sample_record, mprof_trace_pc_samples,
                 rec.function_name = STR(rec.function_name));
    break;
  case MPROF_SECTION_PM_METRICS:
    COPY_SECTION(type, mprof_pm_metric_record, mprof_trace_pm_metrics,
                 (rec.name = STR(rec.name), rec.unit = STR(rec.unit)));
    break;
  case MPROF_SECTION_PM_SAMPLES:
    COPY_SECTION(type, mprof_pm_sample_record, mprof_trace_pm_samples, (void)0);
    break;
  case MPROF_SECTION_API_CALLS:
    COPY_SECTION(type, mprof_api_call_record, mprof_trace_api_calls,
                 rec.name = STR(rec.name));
    break;
  case MPROF_SECTION_MEMORY_ACCESSES:
    COPY_SECTION(type, mprof_memory_access_record, mprof_trace_memory_accesses,
                 (void)0);
    break;
  default:
    return mprof__error_set(MPROF_EINVAL, "section %u is not copied by record",
                            (unsigned)type);
  }
  return rc;
}

int mprof__copy_drops(mprof_writer *w, const mprof_trace *trace) {
  size_t n;
  const mprof_drop_record *drops = mprof_trace_drops(trace, &n);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    rc = mprof_writer_drop(w, (mprof_drop_kind)drops[i].kind, drops[i].device,
                           drops[i].count);
  return rc;
}
