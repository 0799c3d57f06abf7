/*
 * mprof tests — the one hash map (base/map.h): entries taken out and the
 * map emptied, checked against a plain array after every step, with hashes
 * chosen to collide and to wrap around the end of the slots.
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_util.h"

#include "base/map.h"

#define KEYS 512

/* Few distinct hashes, many keys on each: long runs of probing. */
static uint64_t key_hash(uint32_t key) {
  return (uint64_t)(key % 37) * 0x9e3779b97f4a7c15ull;
}

/* Is @p key stored, by the map's own lookup? */
static int map_has(const mprof__map *map, uint32_t key) {
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(map, key_hash(key), &cursor)) !=
         MPROF__MAP_NONE)
    if (found == key)
      return 1;
  return 0;
}

static void check_all(const mprof__map *map, const int *present) {
  size_t count = 0;
  for (uint32_t key = 0; key < KEYS; key++) {
    if (map_has(map, key) != present[key])
      fail_msg("key %u: map says %d, model says %d", key, !present[key],
               present[key]);
    count += (size_t)present[key];
  }
  assert_int_equal(map->count, count);
}

static void test_remove_keeps_every_other_entry_reachable(void **state) {
  (void)state;
  mprof__map map;
  memset(&map, 0, sizeof map);
  int present[KEYS];
  memset(present, 0, sizeof present);
  assert_int_equal(mprof__map_remove(&map, key_hash(1), 1), 0); /* empty */
  srand(29);
  for (int step = 0; step < 20000; step++) {
    uint32_t key = (uint32_t)rand() % KEYS;
    if (present[key]) {
      assert_int_equal(mprof__map_remove(&map, key_hash(key), key), 1);
      present[key] = 0;
    } else {
      /* Absent: nothing to take out, whatever shares its hash. */
      assert_int_equal(mprof__map_remove(&map, key_hash(key), key), 0);
      assert_int_equal(mprof__map_add(&map, key_hash(key), key), 0);
      present[key] = 1;
    }
    if (step % 97 == 0)
      check_all(&map, present);
  }
  check_all(&map, present);
  size_t capacity = map.capacity;
  mprof__map_clear(&map);
  memset(present, 0, sizeof present);
  check_all(&map, present);
  assert_int_equal(map.capacity, capacity); /* the slots are kept */
  assert_int_equal(mprof__map_add(&map, key_hash(7), 7), 0);
  present[7] = 1;
  check_all(&map, present);
  mprof__map_free(&map);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_remove_keeps_every_other_entry_reachable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
