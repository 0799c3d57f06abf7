/*
 * mprof — internal: the join's state, shared by its parts (join.c: kernels,
 * reasons, ordering and accessors; join_launches.c; join_samples.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ANALYSIS_JOIN_INTERNAL_H
#define MPROF_ANALYSIS_JOIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/map.h"
#include "mprof/join.h"

/* Private per-kernel bookkeeping, parallel to the public stats. */
typedef struct kernel_extra {
  /* Where the kernel's shapes, PCs and memory instructions start: their
   * counts are in the public stats. */
  size_t shape_first, pc_first, memory_first;
  size_t reason_first, reason_count;
  /* while building: */
  uint64_t first_duration;
  double shifted_sum, shifted_sq;
  uint64_t gap_sum;
  uint32_t last_process; /* of the last KERNELS record joined */
} kernel_extra;

/* A PC while building: which kernel it belongs to and its reasons. */
typedef struct pc_build {
  uint32_t kernel;
  mprof_pc_stats pub;
  size_t reason_first;
} pc_build;

struct mprof_join {
  const mprof_trace *trace;
  const mprof_sidecar *sidecar;
  unsigned threads; /* mprof_join_options.threads */
  /* DEVICES index -> the device it counts as: the first device of the
   * merged set that is the same GPU (itself with MPROF_JOIN_BY_PROCESS). */
  uint32_t *device_as;
  size_t device_count;
  size_t kernel_count, kernel_cap, extra_cap;
  mprof_kernel_stats *kernels;
  kernel_extra *extra;
  mprof__map kernel_map;   /* (device, mangled name) -> kernel */
  uint32_t *record_kernel; /* KERNELS index -> kernel */
  uint32_t *shape_kernel;  /* SHAPES index -> kernel */
  uint32_t *shape_group;   /* SHAPES index -> index into shapes */
  size_t shape_record_count, kernel_record_count;
  mprof_shape_stats *shapes;
  size_t shape_count;
  mprof_pc_stats *pcs;
  mprof_reason_samples *pc_reasons;
  mprof_reason_samples *kernel_reasons;
  mprof_memory_stats *memory; /* by kernel, then offset */
  mprof_stall_reason *reasons;
  size_t reason_count, reason_cap;
  mprof__map reason_map;   /* short name -> reason */
  uint32_t unnamed_reason; /* MPROF_INDEX_NONE until needed */
  uint64_t kernel_time, sample_total, unmatched;
  mprof__arena names; /* names demangled here (kernels without launches) */
  mprof_name_set *short_names; /* by kernel: unique within the trace */
};

/* The kernel for (@p device, @p mangled), created when @p create
 * (join.c). */
int mprof__join_kernel_lookup(mprof_join *j, uint32_t *out, const char *mangled,
                              uint32_t device, int create);

/* The passes of mprof_join_build(), in order. */
int mprof__join_build_kernels(mprof_join *j);   /* join_launches.c */
int mprof__join_build_launches(mprof_join *j);  /* join_launches.c */
int mprof__join_build_samples(mprof_join *j);   /* join_samples.c */
void mprof__join_attach_sidecar(mprof_join *j); /* join_samples.c */
int mprof__join_build_memory(mprof_join *j);    /* join_memory.c */

#endif /* MPROF_ANALYSIS_JOIN_INTERNAL_H */
