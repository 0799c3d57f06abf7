/*
 * mprof — the one hash map (base/map.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/map.h"
#include "mprof/status.h"

uint32_t mprof__map_next(const mprof__map *map, uint64_t hash, size_t *cursor) {
  if (!map->capacity)
    return MPROF__MAP_NONE;
  size_t mask = map->capacity - 1;
  for (size_t at = ((size_t)hash + *cursor) & mask;
       map->indices[at] != MPROF__MAP_NONE; at = (at + 1) & mask) {
    ++*cursor;
    if (map->hashes[at] == hash)
      return map->indices[at];
  }
  return MPROF__MAP_NONE;
}

/* Place without growing; the caller keeps the map under half full. */
static void place(uint32_t *indices, uint64_t *hashes, size_t capacity,
                  uint64_t hash, uint32_t index) {
  size_t mask = capacity - 1, at = (size_t)hash & mask;
  while (indices[at] != MPROF__MAP_NONE)
    at = (at + 1) & mask;
  indices[at] = index;
  hashes[at] = hash;
}

int mprof__map_reserve(mprof__map *map, size_t count) {
  if (count * 2 <= map->capacity)
    return 0;
  size_t capacity = map->capacity ? map->capacity : 64;
  while (count * 2 > capacity)
    capacity *= 2;
  uint32_t *indices = (uint32_t *)malloc(capacity * sizeof *indices);
  uint64_t *hashes = (uint64_t *)malloc(capacity * sizeof *hashes);
  if (!indices || !hashes) {
    free(indices);
    free(hashes);
    return MPROF_ENOMEM;
  }
  memset(indices, 0xff, capacity * sizeof *indices);
  for (size_t i = 0; i < map->capacity; i++)
    if (map->indices[i] != MPROF__MAP_NONE)
      place(indices, hashes, capacity, map->hashes[i], map->indices[i]);
  free(map->indices);
  free(map->hashes);
  map->indices = indices;
  map->hashes = hashes;
  map->capacity = capacity;
  return 0;
}

int mprof__map_add(mprof__map *map, uint64_t hash, uint32_t index) {
  if (mprof__map_reserve(map, map->count + 1))
    return MPROF_ENOMEM;
  place(map->indices, map->hashes, map->capacity, hash, index);
  map->count++;
  return 0;
}

int mprof__map_remove(mprof__map *map, uint64_t hash, uint32_t index) {
  if (!map->capacity)
    return 0;
  size_t mask = map->capacity - 1, at = (size_t)hash & mask;
  while (map->indices[at] != MPROF__MAP_NONE &&
         (map->hashes[at] != hash || map->indices[at] != index))
    at = (at + 1) & mask;
  if (map->indices[at] == MPROF__MAP_NONE)
    return 0;
  /* Backward-shift deletion: move up every later entry of the run that
   * its home slot allows, so that lookups never meet a gap before it. */
  size_t hole = at;
  for (size_t next = (hole + 1) & mask; map->indices[next] != MPROF__MAP_NONE;
       next = (next + 1) & mask) {
    size_t home = (size_t)map->hashes[next] & mask;
    /* The entry may fill the hole when its home is not in (hole, next]. */
    int stays = hole <= next ? (hole < home && home <= next)
                             : (hole < home || home <= next);
    if (stays)
      continue;
    map->indices[hole] = map->indices[next];
    map->hashes[hole] = map->hashes[next];
    hole = next;
  }
  map->indices[hole] = MPROF__MAP_NONE;
  map->count--;
  return 1;
}

void mprof__map_clear(mprof__map *map) {
  if (map->capacity)
    memset(map->indices, 0xff, map->capacity * sizeof *map->indices);
  map->count = 0;
}

void mprof__map_free(mprof__map *map) {
  free(map->indices);
  free(map->hashes);
  memset(map, 0, sizeof *map);
}
