/*
 * mprof — the stall-reason table (mprof/reasons.h). Each row's reason is in
 * docs/DIAGNOSIS.md, "Stall reasons"; change both together.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "mprof/reasons.h"

#define ROW(reason, dim, fam)                                                  \
  {                                                                            \
#reason, MPROF_STALL_REASON_PREFIX #reason,                                \
        MPROF_STALL_REASON_PREFIX #reason MPROF_STALL_NOT_ISSUED_SUFFIX,       \
        MPROF_DIM_##dim, MPROF_STALL_FAMILY_##fam                              \
  }

/* The 19 reasons CUPTI reports on the H200, each also as X_not_issued;
 * alphabetical. */
static const mprof_stall_reason_info table[] = {
    ROW(barrier, SYNC, SYNC),
    ROW(branch_resolving, FETCH_BRANCH, FETCH_BRANCH),
    ROW(dispatch_stall, SCHEDULING, SCHEDULING),
    ROW(drain, MEMORY_THROUGHPUT, MEMORY_THROUGHPUT),
    ROW(imc_miss, FETCH_BRANCH, FETCH_BRANCH),
    ROW(lg_throttle, MEMORY_THROUGHPUT, MEMORY_THROUGHPUT),
    ROW(long_scoreboard, MEMORY_LATENCY, MEMORY_LATENCY),
    ROW(math_pipe_throttle, COMPUTE, COMPUTE),
    ROW(membar, SYNC, SYNC),
    ROW(mio_throttle, SHARED_MIO, MIO),
    ROW(misc, SCHEDULING, SCHEDULING),
    ROW(no_instructions, FETCH_BRANCH, FETCH_BRANCH),
    /* Ready but another warp was picked: the kernel is issue bound, its
     * arithmetic sets the pace (DIAGNOSIS.md says why not scheduling). */
    ROW(not_selected, COMPUTE, COMPUTE),
    ROW(selected, COMPUTE, ISSUED),
    ROW(short_scoreboard, SHARED_MIO, MIO),
    ROW(sleeping, SYNC, SYNC),
    ROW(tex_throttle, MEMORY_THROUGHPUT, MEMORY_THROUGHPUT),
    ROW(wait, COMPUTE, COMPUTE),
    ROW(warpgroup_arrive, SYNC, SYNC),
};
#define TABLE_ROWS (sizeof table / sizeof table[0])

size_t mprof_stall_reason_info_count(void) { return TABLE_ROWS; }

const mprof_stall_reason_info *mprof_stall_reason_info_at(size_t index) {
  return index < TABLE_ROWS ? &table[index] : NULL;
}

const char *mprof_stall_reason_short_name(const char *name) {
  if (!name)
    return "";
  size_t n = sizeof MPROF_STALL_REASON_PREFIX - 1;
  return strncmp(name, MPROF_STALL_REASON_PREFIX, n) == 0 ? name + n : name;
}

int mprof_stall_reason_is_not_issued(const char *name) {
  if (!name)
    return 0;
  size_t n = strlen(name), s = sizeof MPROF_STALL_NOT_ISSUED_SUFFIX - 1;
  return n > s && strcmp(name + n - s, MPROF_STALL_NOT_ISSUED_SUFFIX) == 0;
}

const mprof_stall_reason_info *mprof_stall_reason_info_find(const char *name) {
  const char *s = mprof_stall_reason_short_name(name);
  size_t len = strlen(s);
  if (mprof_stall_reason_is_not_issued(s))
    len -= sizeof MPROF_STALL_NOT_ISSUED_SUFFIX - 1;
  for (size_t i = 0; i < TABLE_ROWS; i++)
    if (strlen(table[i].short_name) == len &&
        strncmp(table[i].short_name, s, len) == 0)
      return &table[i];
  return NULL;
}

uint32_t mprof_stall_reason_dimension(const char *name) {
  const mprof_stall_reason_info *row = mprof_stall_reason_info_find(name);
  return row ? row->dimension : MPROF_DIM_NONE;
}

uint32_t mprof_stall_reason_family(const char *name) {
  const mprof_stall_reason_info *row = mprof_stall_reason_info_find(name);
  return row ? row->family : MPROF_STALL_FAMILY_SCHEDULING;
}
