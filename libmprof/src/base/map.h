/*
 * mprof — internal: the one hash map of libmprof. It stores uint32 indices
 * into the caller's own array under 64-bit hashes (open addressing, linear
 * probing, at most half full); the caller compares keys, so records stay
 * where they are and one map type serves strings, pointers and pairs.
 *
 *   size_t cursor = 0;
 *   uint32_t i;
 *   while ((i = mprof__map_next(&map, hash, &cursor)) != MPROF__MAP_NONE)
 *     if (strcmp(names[i], name) == 0)
 *       return i;
 *   ... mprof__map_add(&map, hash, new_index);
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_MAP_H
#define MPROF_BASE_MAP_H

#include <stddef.h>
#include <stdint.h>

#define MPROF__MAP_NONE 0xffffffffu

typedef struct mprof__map {
  uint32_t *indices; /* MPROF__MAP_NONE: an empty slot */
  uint64_t *hashes;
  size_t capacity; /* a power of two, or 0 */
  size_t count;
} mprof__map;

/* The next index stored under @p hash, or MPROF__MAP_NONE when there is
 * none left. Start with *cursor = 0. */
uint32_t mprof__map_next(const mprof__map *map, uint64_t hash, size_t *cursor);

/* Store @p index under @p hash (the caller has made sure its key is not
 * there yet). 0, or MPROF_ENOMEM with the map unchanged. */
int mprof__map_add(mprof__map *map, uint64_t hash, uint32_t index);

/* Room for @p count entries without growing. 0 or MPROF_ENOMEM. */
int mprof__map_reserve(mprof__map *map, size_t count);

/* Take out the entry (@p hash, @p index); 1 when it was there, else 0.
 * Entries after it move up, so a cursor taken before does not carry over. */
int mprof__map_remove(mprof__map *map, uint64_t hash, uint32_t index);

/* Empty the map but keep its slots for reuse. */
void mprof__map_clear(mprof__map *map);

/* Frees the slots; the map is empty and usable again. */
void mprof__map_free(mprof__map *map);

/* A hash of a pointer's value (for maps keyed by interned strings). */
static inline uint64_t mprof__hash_pointer(const void *p) {
  uint64_t v = (uint64_t)(uintptr_t)p;
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v;
}

#endif /* MPROF_BASE_MAP_H */
