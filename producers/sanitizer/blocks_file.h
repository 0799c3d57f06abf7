/*
 * blocks_file.h — the block producer's host side that needs no GPU: turn
 * the per-block slots read back from the device into a `.source` file
 * (producers/source/README.md), which `mprof source merge` and
 * `mprof record blocks` place on the CUPTI timeline.
 *
 * Plain C and libc only, so the injection library (blocks.c) and the tests
 * share it and nothing of libmprof enters the profiled process.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BLOCKS_FILE_H
#define MPROF_BLOCKS_FILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One block's slot as the patch functions write it (blocks_patch.cu,
 * struct mprof_block_slot): 24 bytes, zero until the block runs. */
typedef struct mprof_blocks_slot {
  uint64_t start_inv; /* ~%globaltimer at the first warp's entry; 0 never */
  uint64_t end;       /* %globaltimer at the last warp's exit; 0 never */
  uint32_t sm_enter;  /* %smid at entry */
  uint32_t sm_exit;   /* %smid at exit */
} mprof_blocks_slot;

/* One launch the producer saw, in host order. */
typedef struct mprof_blocks_launch {
  uint32_t kernel;  /* index into the kernel names */
  uint32_t device;  /* CUDA ordinal */
  uint32_t grid[3]; /* blocks */
  uint32_t block[3];
  uint64_t host_ns; /* CLOCK_REALTIME at the launch callback */
  /* The launch's slots (grid[0] * grid[1] * grid[2] of them) read back from
   * the device, or NULL when it was not recorded (the buffer was full). */
  const mprof_blocks_slot *slots;
} mprof_blocks_launch;

/* What a write found in the slots. */
typedef struct mprof_blocks_counts {
  uint64_t blocks;     /* spans written: blocks that entered and exited */
  uint64_t missing;    /* slots of recorded launches never entered/exited */
  uint64_t sm_changed; /* blocks whose %smid differed at entry and exit */
  uint64_t launches_recorded;
} mprof_blocks_counts;

/*
 * Write @p path (through PATH.partial and a rename): one region "block"
 * (role consumer), the kernel names, the launches and one span per block
 * that has both an entry and an exit (start, end, launch, kernel, SM at
 * entry, linear block index; warp none, payload the SM at exit).
 * @p overflow is the number of blocks of launches that did not fit the
 * device buffer of @p capacity slots. Returns 0, or -1 with errno set.
 */
int mprof_blocks_write_source(const char *path, const char *const *kernels,
                              size_t kernel_count,
                              const mprof_blocks_launch *launches,
                              size_t launch_count, uint64_t overflow,
                              uint64_t capacity, mprof_blocks_counts *counts);

/* Blocks in a grid: x * y * z. */
uint64_t mprof_blocks_grid_size(const uint32_t grid[3]);

#ifdef __cplusplus
}
#endif

#endif
