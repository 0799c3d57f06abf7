/*
 * mprof — the kernels that ran in a time window (mprof_window_build in
 * mprof/join.h): what a range selected in the viewer holds.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "internal.h"
#include "mprof/join.h"
#include "mprof/trace.h"

struct mprof_window {
  mprof_window_totals totals;
  size_t count;
  mprof_window_kernel *kernels;
};

static uint64_t clipped(uint64_t a, uint64_t b, uint64_t start, uint64_t end) {
  uint64_t lo = a > start ? a : start, hi = b < end ? b : end;
  return hi > lo ? hi - lo : 0;
}

static int by_time(const void *a, const void *b) {
  const mprof_window_kernel *x = (const mprof_window_kernel *)a;
  const mprof_window_kernel *y = (const mprof_window_kernel *)b;
  MPROF__ORDER_BY_DESC(gpu_ns);
  MPROF__ORDER_BY_DESC(launches);
  return x->kernel < y->kernel ? -1 : x->kernel > y->kernel;
}

int mprof_window_build(mprof_window **out, const mprof_join *join,
                       uint64_t start, uint64_t end) {
  if (!out || !join)
    return mprof__error_set(MPROF_EINVAL, "window: no join given");
  *out = NULL;
  const mprof_trace *trace = mprof_join_trace(join);
  size_t kernels = mprof_join_kernel_count(join);
  mprof_window *w = (mprof_window *)calloc(1, sizeof *w);
  mprof_window_kernel *per =
      (mprof_window_kernel *)calloc(kernels ? kernels : 1, sizeof *per);
  if (!w || !per) {
    free(w);
    free(per);
    return mprof__error_set(MPROF_ENOMEM, "window: out of memory");
  }
  w->totals.start = start;
  w->totals.end = end;
  size_t streams, launch_count;
  mprof_trace_streams(trace, &streams);
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_count);
  for (uint32_t s = 0; end > start && s < streams; s++) {
    size_t first, last;
    if (mprof_trace_stream_find(trace, &first, &last, s, start, end))
      continue;
    for (size_t i = first; i < last; i++) {
      const mprof_launch_record *l = mprof_trace_stream_launch(trace, s, i);
      uint64_t l_end = l ? (l->end > l->start ? l->end : l->start + 1) : 0;
      if (!l || l_end <= start || l->start >= end)
        continue;
      uint32_t k = mprof_join_launch_kernel(join, (size_t)(l - launches));
      if (k >= kernels)
        continue;
      uint64_t ns = clipped(l->start, l->end, start, end);
      per[k].launches++;
      per[k].gpu_ns += ns;
      w->totals.launches++;
      w->totals.gpu_ns += ns;
    }
  }
  size_t memops;
  const mprof_memop_record *mo = mprof_trace_memops(trace, &memops);
  for (size_t i = 0; end > start && i < memops; i++) {
    uint64_t m_end = mo[i].end > mo[i].start ? mo[i].end : mo[i].start + 1;
    if (m_end <= start || mo[i].start >= end)
      continue;
    w->totals.copies++;
    w->totals.copy_bytes += mo[i].bytes;
    w->totals.copy_ns += clipped(mo[i].start, mo[i].end, start, end);
  }
  for (size_t k = 0; k < kernels; k++) {
    if (!per[k].launches)
      continue;
    per[k].kernel = (uint32_t)k;
    per[w->count++] = per[k];
  }
  qsort(per, w->count, sizeof *per, by_time);
  w->kernels = per;
  w->totals.kernels = w->count;
  *out = w;
  return 0;
}

void mprof_window_free(mprof_window *w) {
  if (!w)
    return;
  free(w->kernels);
  free(w);
}

const mprof_window_totals *mprof_window_totals_of(const mprof_window *w) {
  return w ? &w->totals : NULL;
}

size_t mprof_window_kernel_count(const mprof_window *w) {
  return w ? w->count : 0;
}

const mprof_window_kernel *mprof_window_kernel_at(const mprof_window *w,
                                                  size_t index) {
  return w && index < w->count ? &w->kernels[index] : NULL;
}
