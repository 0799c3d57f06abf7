/*
 * mprof — the join's global-memory accesses per instruction: the
 * MEMORY_ACCESSES records (`mprof record blocks --memory`) on the join's
 * kernels, summed per offset, with the sidecar's SASS instruction.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/array.h"
#include "join_internal.h"

typedef struct memory_build {
  uint32_t kernel;
  mprof_memory_stats pub;
} memory_build;

static int compare_build(const void *a, const void *b) {
  const memory_build *x = (const memory_build *)a;
  const memory_build *y = (const memory_build *)b;
  MPROF__ORDER_BY(kernel);
  return x->pub.offset < y->pub.offset ? -1 : x->pub.offset > y->pub.offset;
}

int mprof__join_build_memory(mprof_join *j) {
  size_t n;
  const mprof_memory_access_record *r =
      mprof_trace_memory_accesses(j->trace, &n);
  if (!n)
    return 0;
  memory_build *b = (memory_build *)malloc(n * sizeof *b);
  if (!b)
    return MPROF_ENOMEM;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = r[i].kernel < j->kernel_record_count
                     ? j->record_kernel[r[i].kernel]
                     : MPROF_INDEX_NONE;
    if (k == MPROF_INDEX_NONE)
      continue; /* a kernel with neither launches nor samples */
    memory_build *m = &b[used++];
    memset(m, 0, sizeof *m);
    m->kernel = k;
    m->pub.offset = r[i].pc_offset;
    m->pub.flags = r[i].flags;
    m->pub.access_size = r[i].access_size;
    m->pub.warp_accesses = r[i].warp_accesses;
    m->pub.thread_accesses = r[i].thread_accesses;
    m->pub.bytes = r[i].bytes;
    m->pub.sectors = r[i].sectors;
  }
  qsort(b, used, sizeof *b, compare_build);
  j->memory =
      (mprof_memory_stats *)malloc((used ? used : 1) * sizeof *j->memory);
  if (!j->memory) {
    free(b);
    return MPROF_ENOMEM;
  }
  size_t out = 0;
  for (size_t i = 0; i < used; i++) {
    /* The same instruction twice (two processes of one run, merged):
     * one entry. */
    if (out && b[i].kernel == b[i - 1].kernel &&
        b[i].pub.offset == j->memory[out - 1].offset) {
      mprof_memory_stats *m = &j->memory[out - 1];
      m->flags |= b[i].pub.flags;
      if (b[i].pub.access_size > m->access_size)
        m->access_size = b[i].pub.access_size;
      m->warp_accesses += b[i].pub.warp_accesses;
      m->thread_accesses += b[i].pub.thread_accesses;
      m->bytes += b[i].pub.bytes;
      m->sectors += b[i].pub.sectors;
      continue;
    }
    if (!out || b[i].kernel != b[i - 1].kernel) {
      j->extra[b[i].kernel].memory_first = out;
      j->kernels[b[i].kernel].memory_count = 0;
    }
    j->memory[out++] = b[i].pub;
    j->kernels[b[i].kernel].memory_count++;
  }
  for (size_t k = 0; k < j->kernel_count; k++) {
    const mprof_sidecar_function *fn = j->kernels[k].function;
    mprof_memory_stats *m = j->memory + j->extra[k].memory_first;
    for (size_t i = 0; i < j->kernels[k].memory_count; i++) {
      m[i].efficiency = m[i].sectors
                            ? (double)m[i].bytes / (32.0 * (double)m[i].sectors)
                            : 0.0;
      m[i].instruction = fn ? mprof_sidecar_instruction(fn, m[i].offset) : NULL;
    }
  }
  free(b);
  return 0;
}

const mprof_memory_stats *mprof_join_memory(const mprof_join *join,
                                            size_t kernel, size_t *count) {
  size_t n = join && kernel < join->kernel_count
                 ? join->kernels[kernel].memory_count
                 : 0;
  if (count)
    *count = n;
  return n ? join->memory + join->extra[kernel].memory_first : NULL;
}

const mprof_memory_stats *mprof_join_memory_at(const mprof_join *join,
                                               size_t kernel, size_t index) {
  size_t count;
  const mprof_memory_stats *all = mprof_join_memory(join, kernel, &count);
  return index < count ? &all[index] : NULL;
}

const mprof_memory_stats *
mprof_join_memory_find(const mprof_join *join, size_t kernel, uint32_t offset) {
  size_t count;
  const mprof_memory_stats *all = mprof_join_memory(join, kernel, &count);
  size_t lo;
  MPROF__LOWER_BOUND(lo, count, mid, all[mid].offset < offset);
  return lo < count && all[lo].offset == offset ? &all[lo] : NULL;
}

static int compare_busiest(const void *a, const void *b) {
  const mprof_memory_stats *x = *(const mprof_memory_stats *const *)a;
  const mprof_memory_stats *y = *(const mprof_memory_stats *const *)b;
  MPROF__ORDER_BY_DESC(warp_accesses);
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

size_t mprof_join_memory_busiest(const mprof_join *join, size_t kernel,
                                 const mprof_memory_stats **order,
                                 size_t capacity) {
  size_t count;
  const mprof_memory_stats *m = mprof_join_memory(join, kernel, &count);
  if (!count || !order || !capacity)
    return count;
  /* Sorted in @p order when all fit, else in a copy of which it takes the
   * first. */
  const mprof_memory_stats **all =
      capacity >= count
          ? order
          : (const mprof_memory_stats **)malloc(count * sizeof *all);
  if (!all)
    return 0;
  for (size_t i = 0; i < count; i++)
    all[i] = &m[i];
  qsort(all, count, sizeof *all, compare_busiest);
  if (all != order) {
    memcpy(order, all, capacity * sizeof *order);
    free(all);
  }
  return count;
}

double mprof_join_memory_totals(const mprof_join *join, size_t kernel,
                                uint64_t *warp_accesses, uint64_t *bytes,
                                uint64_t *sectors) {
  size_t count;
  const mprof_memory_stats *m = mprof_join_memory(join, kernel, &count);
  uint64_t warps = 0, used = 0, moved = 0;
  for (size_t i = 0; i < count; i++) {
    warps += m[i].warp_accesses;
    used += m[i].bytes;
    moved += m[i].sectors;
  }
  if (warp_accesses)
    *warp_accesses = warps;
  if (bytes)
    *bytes = used;
  if (sectors)
    *sectors = moved;
  return moved ? (double)used / (32.0 * (double)moved) : 0;
}

const char *mprof_memory_kind_name(uint32_t flags) {
  if (flags & MPROF_MEMORY_ATOMIC_SYSTEM)
    return "atomic";
  if ((flags & MPROF_MEMORY_READ) && (flags & MPROF_MEMORY_WRITE))
    return "load+store";
  if (flags & MPROF_MEMORY_WRITE)
    return "store";
  if (flags & MPROF_MEMORY_PREFETCH)
    return "prefetch";
  return "load";
}
