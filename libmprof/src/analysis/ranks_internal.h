/*
 * mprof — the rank table's layout, shared by its build (ranks.c) and the
 * reduce (ranks_reduce.c). Every field is a u64 so that the bytes of
 * mprof_rank_table_save() are the arrays themselves.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ANALYSIS_RANKS_INTERNAL_H
#define MPROF_ANALYSIS_RANKS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/ranks.h"

typedef struct mprof__rank_step {
  uint64_t number, window, busy, compute, comm, overlap, idle, launches;
  uint64_t cause; /**< pool offset of the idle time's call; 0 "" no call */
  uint64_t cause_ns;
  uint64_t idle_in_calls; /**< idle time with the host in some call */
} mprof__rank_step;

typedef struct mprof__rank_kernel {
  uint64_t name, mangled; /**< pool offsets */
  uint64_t collective;
} mprof__rank_kernel;

/** GPU time of one kernel in one step (by step, then kernel). */
typedef struct mprof__rank_cell {
  uint64_t step, kernel; /**< indices into steps and kernels */
  uint64_t ns, launches;
} mprof__rank_cell;

struct mprof_rank_table {
  char *strings; /**< NUL-terminated strings; offset 0 is "" */
  size_t strings_size;
  uint64_t path, host;
  int64_t rank;
  uint32_t source; /**< mprof_step_source */
  uint64_t launches;
  mprof__rank_step *steps;
  size_t step_count;
  mprof__rank_kernel *kernels;
  size_t kernel_count;
  mprof__rank_cell *cells;
  size_t cell_count;
};

/** The string at pool offset @p offset ("" out of range). */
const char *mprof__rank_table_string(const mprof_rank_table *t,
                                     uint64_t offset);

#endif /* MPROF_ANALYSIS_RANKS_INTERNAL_H */
