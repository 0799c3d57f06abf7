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
#include <stdio.h>

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

/* Each launch's run of slots starts with a launch header two slots long
 * (48 bytes), then one slot per block. The first block (linear index 0)
 * stores the launch's dynamic shared memory per block (%dynamic_smem_size)
 * in `dynamic_shared` with bit 63 set, so that 0 stays "not written". With
 * --memory the host fills the other fields before the launch. */
typedef struct mprof_blocks_header {
  uint64_t dynamic_shared; /* MPROF_BLOCKS_WRITTEN | bytes; 0 not written */
  uint64_t memory;         /* device address of the memory table; 0 none */
  uint64_t function_pc;    /* the kernel's first instruction; 0 unknown */
  uint32_t kernel;         /* index into the kernel names */
  uint32_t memory_entries; /* entries in the memory table */
  uint64_t reserved[2];
} mprof_blocks_header;
#define MPROF_BLOCKS_HEADER_SLOTS 2u
#define MPROF_BLOCKS_WRITTEN (1ull << 63)

/* One launch the producer saw, in host order. */
typedef struct mprof_blocks_launch {
  uint32_t kernel;  /* index into the kernel names */
  uint32_t device;  /* CUDA ordinal */
  uint32_t grid[3]; /* blocks */
  uint32_t block[3];
  uint32_t cluster[3]; /* zeros when none */
  uint32_t stream;     /* per device, in order of first use; 0 NULL stream */
  uint32_t dynamic_shared; /* bytes per block, when has_dynamic_shared */
  int has_dynamic_shared;
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
 * entry, linear block index; warp none, payload the SM at exit), and
 * (format 1.1) each launch's stream, dynamic shared memory and cluster in
 * the launch-extension table.
 * @p overflow is the number of blocks of launches that did not fit the
 * device buffer of @p capacity slots. Returns 0, or -1 with errno set.
 */
int mprof_blocks_write_source(const char *path, const char *const *kernels,
                              size_t kernel_count,
                              const mprof_blocks_launch *launches,
                              size_t launch_count, uint64_t overflow,
                              uint64_t capacity, mprof_blocks_counts *counts);

/* --memory: one instruction's counts as the patch keeps them
 * (blocks_patch.cu, struct mprof_memory_entry): 48 bytes. The table has
 * `entries` of them (a power of two) and one spare after them that counts
 * the accesses of instructions that found it full. */
typedef struct mprof_blocks_memory_entry {
  uint64_t key;     /* (kernel + 1) << 32 | PC offset; 0 empty */
  uint64_t warps;   /* executions by a warp */
  uint64_t threads; /* executions by a thread */
  uint64_t bytes;   /* bytes the threads asked for */
  uint64_t sectors; /* distinct 32-byte sectors per warp execution, summed */
  uint32_t flags;   /* the Sanitizer's access flags, OR'ed */
  uint32_t access_size; /* largest access, bytes per thread */
} mprof_blocks_memory_entry;

/*
 * Write the used entries of one context's table as lines
 *   blocks.memory DEVICE KERNEL OFFSET FLAGS SIZE WARPS THREADS BYTES SECTORS
 * (decimal; FLAGS as the Sanitizer gave them). An offset past its kernel's
 * size (@p function_size, 0 unknown) belongs to a function the kernel
 * called, not to the kernel: its warp accesses are added to *outside, and
 * those of the spare entry to *unkept. Returns the lines written.
 */
size_t mprof_blocks_write_memory(FILE *f, uint32_t device,
                                 const mprof_blocks_memory_entry *table,
                                 uint32_t entries,
                                 const uint64_t *function_size,
                                 size_t kernel_count, uint64_t *outside,
                                 uint64_t *unkept);

/* Blocks in a grid: x * y * z. */
uint64_t mprof_blocks_grid_size(const uint32_t grid[3]);

#ifdef __cplusplus
}
#endif

#endif
