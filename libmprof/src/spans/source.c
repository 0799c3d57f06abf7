/*
 * mprof — source-instrumentation clocks, their alignment to a trace, and kernel
 * base names.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/source.h"
#include "source_internal.h"
#include "mprof/trace.h"

/* ---- clocks and alignment ----------------------------------------------- */

static int meta_i64(const mprof_trace *t, const char *key, int64_t *out) {
  const char *v = mprof_trace_meta(t, key);
  if (!v || !*v)
    return 0;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end)
    return 0;
  *out = (int64_t)x;
  return 1;
}

void mprof_source_clock_from_trace(mprof_source_clock *out,
                                   const mprof_trace *t) {
  memset(out, 0, sizeof *out);
  out->rate = 1.0;
  int64_t trace0, real0, trace1, real1;
  if (!meta_i64(t, "clock.anchor.trace_ns", &trace0) ||
      !meta_i64(t, "clock.anchor.realtime_ns", &real0))
    return;
  out->anchor_trace_ns = trace0;
  out->anchor_realtime_ns = real0;
  out->anchored = 1;
  /* The trace clock (CLOCK_MONOTONIC_RAW) is not slewed; CLOCK_REALTIME
   * is, by up to hundreds of ppm under NTP: over a long run that is tens
   * of µs, so use both anchors when they are far enough apart. */
  if (meta_i64(t, "clock.end.trace_ns", &trace1) &&
      meta_i64(t, "clock.end.realtime_ns", &real1) &&
      real1 - real0 > 100000000 && trace1 > trace0) {
    double rate = (double)(trace1 - trace0) / (double)(real1 - real0);
    if (rate > 0.999 && rate < 1.001) {
      out->rate = rate;
      out->anchored = 2;
    }
  }
}

int64_t mprof_source_clock_convert(const mprof_source_clock *c,
                                   uint64_t globaltimer_ns) {
  int64_t since = (int64_t)globaltimer_ns - c->anchor_realtime_ns;
  if (c->rate == 1.0)
    return c->anchor_trace_ns + since;
  return c->anchor_trace_ns + (int64_t)llround((double)since * c->rate);
}

int mprof__compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Median of @p v (sorted in place); the lower middle for even counts, so
 * the result is one of the values. */
static int64_t median_i64(int64_t *v, size_t n) {
  qsort(v, n, sizeof *v, mprof__compare_i64);
  return v[(n - 1) / 2];
}

MPROF__VERSIONS(alignment_versions, "source alignment",
                MPROF__END_OF(mprof_source_alignment, launches));

int mprof_source_align(mprof_source_alignment *caller, const int64_t *reference,
                       const int64_t *measured, size_t count) {
  if (!caller || !reference || !measured || count == 0)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_source_align: no launches to align");
  int rc = mprof__result_check(caller, &alignment_versions);
  if (rc)
    return rc;
  /* Filled here, then the caller's version of it copied out. */
  mprof_source_alignment full = MPROF_SOURCE_ALIGNMENT_INIT, *out = &full;
  int64_t *d = (int64_t *)malloc(count * sizeof *d);
  if (!d)
    return mprof__error_set(MPROF_ENOMEM, "alignment: out of memory");
  for (size_t i = 0; i < count; i++)
    d[i] = reference[i] - measured[i];
  int64_t offset = median_i64(d, count);
  uint64_t worst = 0;
  for (size_t i = 0; i < count; i++) {
    int64_t dev = d[i] - offset;
    uint64_t a = dev < 0 ? (uint64_t)-dev : (uint64_t)dev;
    worst = a > worst ? a : worst;
    d[i] = (int64_t)a;
  }
  out->offset_ns = offset;
  out->error_max_ns = worst;
  out->error_median_ns = (uint64_t)median_i64(d, count);
  out->launches = count;
  /* Least squares of difference against time: a drift between the clocks
   * shows as a slope (informational; the offset stays constant). */
  if (count >= 3) {
    double mx = 0, my = 0;
    for (size_t i = 0; i < count; i++) {
      mx += (double)(measured[i] - measured[0]);
      my += (double)(reference[i] - measured[i]);
    }
    mx /= (double)count;
    my /= (double)count;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < count; i++) {
      double x = (double)(measured[i] - measured[0]) - mx;
      double y = (double)(reference[i] - measured[i]) - my;
      sxx += x * x;
      sxy += x * y;
    }
    if (sxx > 0)
      out->drift_ppm = sxy / sxx * 1e6;
  }
  free(d);
  mprof__result_store(caller, &full, &alignment_versions);
  return 0;
}

/* ---- kernel names ------------------------------------------------------- */

static int copy_name(char *out, size_t size, const char *s, size_t len) {
  if (len + 1 > size)
    return mprof__error_set(MPROF_EINVAL, "kernel name too long");
  memcpy(out, s, len);
  out[len] = '\0';
  return 0;
}

/* The last <source-name> of an Itanium mangled name, or -1. */
static int mangled_base(char *out, size_t size, const char *name) {
  const char *p = name + 2; /* after _Z */
  if (*p == 'L')
    p++;
  int nested = *p == 'N';
  if (nested) {
    p++;
    while (*p == 'r' || *p == 'V' || *p == 'K')
      p++;
  }
  const char *last = NULL;
  size_t last_len = 0;
  while (*p >= '0' && *p <= '9') {
    size_t len = 0;
    while (*p >= '0' && *p <= '9') {
      len = len * 10 + (size_t)(*p - '0');
      if (len > 4096)
        return -1;
      p++;
    }
    if (strnlen(p, len) < len)
      return -1;
    last = p;
    last_len = len;
    p += len;
    if (!nested)
      break;
  }
  if (!last)
    return -1;
  return copy_name(out, size, last, last_len) ? -1 : 0;
}

int mprof_source_kernel_basename(char *out, size_t size, const char *name) {
  if (!out || !name)
    return mprof__error_set(MPROF_EINVAL, "mprof_source_kernel_basename: NULL");
  if (name[0] == '_' && name[1] == 'Z' && mangled_base(out, size, name) == 0)
    return 0;
  /* Demangled: cut the parameters, then the template arguments and the
   * qualifiers, and a return type ("void ns::k<int>(float*)" → "k"). */
  size_t len = strlen(name);
  int depth = 0;
  size_t end = len;
  for (size_t i = 0; i < len; i++) {
    if (name[i] == '<')
      depth++;
    else if (name[i] == '>' && depth > 0)
      depth--;
    else if (name[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  /* Strip a trailing template argument list. */
  if (end > 0 && name[end - 1] == '>') {
    depth = 0;
    for (size_t i = end; i-- > 0;) {
      if (name[i] == '>')
        depth++;
      else if (name[i] == '<' && --depth == 0) {
        end = i;
        break;
      }
    }
  }
  size_t start = 0;
  depth = 0;
  for (size_t i = 0; i < end; i++) {
    if (name[i] == '<')
      depth++;
    else if (name[i] == '>' && depth > 0)
      depth--;
    else if (depth == 0 && (name[i] == ' ' || name[i] == ':'))
      start = i + 1;
  }
  if (start >= end)
    return copy_name(out, size, name, len);
  return copy_name(out, size, name + start, end - start);
}
