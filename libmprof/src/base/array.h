/*
 * mprof — internal: arrays that grow by doubling, and the binary search of
 * a sorted one. Header-only, libc only: the streaming writer uses it too.
 *
 *   if (MPROF__GROW(t->rows, t->capacity, t->count + 1))
 *     return MPROF_ENOMEM;
 *   t->rows[t->count++] = row;
 *
 *   size_t at;
 *   MPROF__LOWER_BOUND(at, count, mid, rows[mid].offset < offset);
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_ARRAY_H
#define MPROF_BASE_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/status.h"

/* Room for @p need items of @p size bytes in the array whose pointer is at
 * @p items (any object pointer type) and which has room for *@p capacity:
 * the capacity doubles, from 16, until they fit. 0, or MPROF_ENOMEM with
 * the array and capacity unchanged. */
static inline int mprof__grow(void *items, size_t *capacity, size_t need,
                              size_t size) {
  if (need <= *capacity)
    return 0;
  if (need > SIZE_MAX / 2 / size)
    return MPROF_ENOMEM;
  size_t cap = *capacity ? *capacity : 16;
  while (cap < need)
    cap *= 2;
  void *old;
  memcpy(&old, items, sizeof old);
  void *grown = realloc(old, cap * size);
  if (!grown)
    return MPROF_ENOMEM;
  memcpy(items, &grown, sizeof grown);
  *capacity = cap;
  return 0;
}

/* mprof__grow() for an array lvalue @p items and its size_t @p capacity. */
#define MPROF__GROW(items, capacity, need)                                     \
  mprof__grow(&(items), &(capacity), (need), sizeof *(items))

/* Set @p out to the first index in [0, @p count) at which @p before, an
 * expression of the index @p mid, is false, or to @p count: the lower
 * bound of a key in an array sorted by it, `before` saying that item
 * @p mid sorts before the key. */
#define MPROF__LOWER_BOUND(out, count, mid, before)                            \
  do {                                                                         \
    size_t lo_ = 0, hi_ = (count);                                             \
    while (lo_ < hi_) {                                                        \
      size_t mid = lo_ + (hi_ - lo_) / 2;                                      \
      if (before)                                                              \
        lo_ = mid + 1;                                                         \
      else                                                                     \
        hi_ = mid;                                                             \
    }                                                                          \
    (out) = lo_;                                                               \
  } while (0)

#endif /* MPROF_BASE_ARRAY_H */
