/*
 * mprof — section names, record sizes and the words of a parse error.
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
#include "format/trace_internal.h"

static const char *const section_names[SECTION_COUNT] = {
    "UNKNOWN",        "STRINGS", "META",          "DEVICES",    "STREAMS",
    "KERNELS",        "SHAPES",  "LAUNCHES",      "MEMOPS",     "RANGES",
    "REGIONS",        "SPANS",   "STALL_REASONS", "PC_SAMPLES", "CUBINS",
    "BLOBS",          "DROPS",   "PM_METRICS",    "PM_SAMPLES", "API_CALLS",
    "MEMORY_ACCESSES"};

const char *mprof_section_name(uint32_t type) {
  return type < SECTION_COUNT ? section_names[type] : "UNKNOWN";
}

uint32_t mprof__trace_record_size(uint32_t type) {
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
