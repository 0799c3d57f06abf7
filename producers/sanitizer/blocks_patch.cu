/*
 * blocks_patch.cu — the device side of the block producer: functions the
 * Compute Sanitizer patches in at every block's entry and exit, and (with
 * --memory) at every global-memory access.
 *
 * Built as a tools patch (nvcc --fatbin --compile-as-tools-patch); the
 * injection library (blocks.c) loads it into each context and patches
 * SANITIZER_INSTRUCTION_BLOCK_ENTER / _EXIT (and
 * SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS) of every loaded module with
 * the functions below. No NVIDIA header is needed: the prototypes are the
 * ones the Sanitizer API documents,
 *   SanitizerPatchResult enter_or_exit(void *userdata, uint64_t pc)
 *   SanitizerPatchResult access(void *userdata, uint64_t pc, void *ptr,
 *                               uint32_t accessSize, uint32_t flags,
 *                               const void *newValue)
 * with SanitizerPatchResult an enum whose success value is 0.
 *
 * userdata is set per launch by the host: it points at the launch's header
 * (struct mprof_launch_header, two slots), followed by one slot per block
 * in linear block order; NULL when the launch is not recorded (filtered
 * out, or the buffer is full). The buffer is zeroed when allocated, so:
 *   - start is kept inverted (~t): atomicMax of ~t over the warps keeps the
 *     earliest entry, and 0 means "never entered";
 *   - end is atomicMax of t over the warps: the last warp's exit.
 * One lane per warp (the lowest active one) does the work: two atomics per
 * warp and block, none across blocks. Block 0 also stores the launch's
 * dynamic shared memory in the header.
 *
 * The memory-access function counts, per instruction (PC offset into the
 * kernel), the warp-level executions, the threads, the bytes they asked
 * for and the distinct 32-byte sectors they touched, in a small open-
 * addressing table per context (the header points at it). The warp's
 * lanes cooperate (match/ballot) so that one lane per warp updates it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

/* One block's slot: 24 bytes, read back by blocks.c (mprof_blocks_slot). */
struct mprof_block_slot {
  unsigned long long start_inv; /* ~%globaltimer at the first warp's entry */
  unsigned long long end;       /* %globaltimer at the last warp's exit */
  unsigned int sm_enter;        /* %smid at entry */
  unsigned int sm_exit;         /* %smid at exit */
};

/* The launch header: 48 bytes = two slots (mprof_blocks_header). */
struct mprof_launch_header {
  unsigned long long dynamic_shared; /* bit 63 | bytes, by block 0 */
  unsigned long long memory;         /* struct mprof_memory_entry *, or 0 */
  unsigned long long function_pc;    /* the kernel's first instruction */
  unsigned int kernel;               /* the host's kernel index */
  unsigned int memory_entries;       /* a power of two */
  unsigned long long reserved[2];
};

/* One instruction's counts: 48 bytes (mprof_blocks_memory_entry). */
struct mprof_memory_entry {
  unsigned long long key; /* (kernel + 1) << 32 | PC offset; 0 empty */
  unsigned long long warps;
  unsigned long long threads;
  unsigned long long bytes;
  unsigned long long sectors;
  unsigned int flags;       /* OR of the access flags */
  unsigned int access_size; /* largest access, bytes per thread */
};

#define MPROF_WRITTEN (1ull << 63)
#define MPROF_HEADER_SLOTS 2

static __device__ __forceinline__ unsigned long long mprof_globaltimer(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

static __device__ __forceinline__ unsigned int mprof_smid(void) {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

static __device__ __forceinline__ unsigned int mprof_laneid(void) {
  unsigned int id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

static __device__ __forceinline__ unsigned int mprof_dynamic_smem(void) {
  unsigned int bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

static __device__ __forceinline__ unsigned long long mprof_linear_block(void) {
  return blockIdx.x +
         (unsigned long long)gridDim.x *
             (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}

static __device__ __forceinline__ struct mprof_block_slot *
mprof_slot(void *userdata, unsigned long long linear) {
  return (struct mprof_block_slot *)userdata + MPROF_HEADER_SLOTS + linear;
}

extern "C" __device__ __noinline__ int mprof_block_enter(void *userdata,
                                                         uint64_t pc) {
  (void)pc;
  if (!userdata)
    return 0;
  unsigned int mask = __activemask();
  if (mprof_laneid() != (unsigned int)(__ffs(mask) - 1))
    return 0;
  unsigned long long linear = mprof_linear_block();
  struct mprof_block_slot *s = mprof_slot(userdata, linear);
  unsigned long long t = mprof_globaltimer();
  s->sm_enter = mprof_smid();
  atomicMax(&s->start_inv, ~t);
  if (linear == 0)
    ((struct mprof_launch_header *)userdata)->dynamic_shared =
        MPROF_WRITTEN | mprof_dynamic_smem();
  return 0;
}

extern "C" __device__ __noinline__ int mprof_block_exit(void *userdata,
                                                        uint64_t pc) {
  (void)pc;
  if (!userdata)
    return 0;
  unsigned int mask = __activemask();
  if (mprof_laneid() != (unsigned int)(__ffs(mask) - 1))
    return 0;
  struct mprof_block_slot *s = mprof_slot(userdata, mprof_linear_block());
  unsigned long long t = mprof_globaltimer();
  s->sm_exit = mprof_smid();
  atomicMax(&s->end, t);
  return 0;
}

/* The table entry of @p key, claimed when new; NULL when the table is full
 * (the host counts those accesses from the spare entry at the end). */
static __device__ struct mprof_memory_entry *
mprof_memory_find(struct mprof_memory_entry *table, unsigned int entries,
                  unsigned long long key) {
  unsigned int at =
      (unsigned int)((key * 0x9e3779b97f4a7c15ull) >> 32) & (entries - 1);
  for (unsigned int probe = 0; probe < entries; probe++) {
    struct mprof_memory_entry *e = &table[(at + probe) & (entries - 1)];
    unsigned long long seen = atomicCAS(&e->key, 0ull, key);
    if (seen == 0 || seen == key)
      return e;
  }
  return 0;
}

extern "C" __device__ __noinline__ int
mprof_memory_access(void *userdata, uint64_t pc, void *ptr, uint32_t size,
                    uint32_t flags, const void *value) {
  (void)value;
  if (!userdata)
    return 0;
  const struct mprof_launch_header *h =
      (const struct mprof_launch_header *)userdata;
  struct mprof_memory_entry *table = (struct mprof_memory_entry *)h->memory;
  if (!table)
    return 0;
  unsigned int mask = __activemask();
  unsigned int lane = mprof_laneid();
  unsigned long long address = (unsigned long long)ptr;
  unsigned long long first = address >> 5;
  unsigned long long last = (address + (size ? size : 1) - 1) >> 5;
  /* Distinct sectors over the warp: the first sector of each lane's
   * access, plus the second one of an access that crosses a boundary when
   * no lane starts there. Every lane of the mask runs each step. */
  unsigned int same = __match_any_sync(mask, first);
  int counts_first = (unsigned int)(__ffs(same) - 1) == lane;
  int found = 0;
  unsigned int bytes = 0;
  for (int j = 0; j < 32; j++) {
    if (!(mask & (1u << j)))
      continue;
    unsigned long long other = __shfl_sync(mask, first, j);
    bytes += __shfl_sync(mask, size, j);
    found |= other == last;
  }
  int crosses = last != first && !found;
  unsigned long long second = crosses ? last : ~0ull - lane;
  unsigned int same2 = __match_any_sync(mask, second);
  int counts_second = crosses && (unsigned int)(__ffs(same2) - 1) == lane;
  unsigned int sectors = __popc(__ballot_sync(mask, counts_first)) +
                         __popc(__ballot_sync(mask, counts_second));
  if (lane != (unsigned int)(__ffs(mask) - 1))
    return 0;
  unsigned long long offset =
      h->function_pc && pc >= h->function_pc ? pc - h->function_pc : pc;
  if (offset > 0xffffffffull)
    offset = 0xffffffffull; /* outside the kernel: the host drops it */
  unsigned long long key = ((unsigned long long)(h->kernel + 1) << 32) | offset;
  struct mprof_memory_entry *e =
      mprof_memory_find(table, h->memory_entries, key);
  if (!e)
    e = &table[h->memory_entries]; /* the spare entry: accesses not kept */
  atomicAdd(&e->warps, 1ull);
  atomicAdd(&e->threads, (unsigned long long)__popc(mask));
  atomicAdd(&e->bytes, (unsigned long long)bytes);
  atomicAdd(&e->sectors, (unsigned long long)sectors);
  atomicOr(&e->flags, flags);
  atomicMax(&e->access_size, size);
  return 0;
}
