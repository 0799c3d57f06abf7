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
