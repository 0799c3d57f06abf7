/*
 * mprof — internal: an arena for many small allocations freed at once, and
 * a qsort() that takes empty arrays.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_ARENA_H
#define MPROF_BASE_ARENA_H

#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

/* qsort() that accepts an empty or NULL array (glibc declares the base
 * nonnull even for zero elements). */
static inline void mprof__qsort(void *base, size_t count, size_t size,
                                int (*compare)(const void *, const void *)) {
  if (count > 1)
    qsort(base, count, size, compare);
}

typedef struct mprof__arena_chunk mprof__arena_chunk;

typedef struct mprof__arena {
  mprof__arena_chunk *head;
  int failed; /* an allocation failed; later ones return NULL too */
} mprof__arena;

/* Zeroed, 16-byte aligned memory owned by @p arena; NULL when out of
 * memory (and arena->failed is set). */
void *mprof__arena_alloc(mprof__arena *arena, size_t size);
/* A copy of @p text in the arena ("" for NULL); NULL on failure. */
char *mprof__arena_strdup(mprof__arena *arena, const char *text);
char *mprof__arena_printf(mprof__arena *arena, const char *fmt, ...)
    MPROF__PRINTF(2, 3);
void mprof__arena_free(mprof__arena *arena);

#endif /* MPROF_BASE_ARENA_H */
