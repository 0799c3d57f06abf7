/*
 * blocks_patch.cu — the device side of the block producer: functions the
 * Compute Sanitizer patches in at every block's entry and exit.
 *
 * Built as a tools patch (nvcc --fatbin --compile-as-tools-patch); the
 * injection library (blocks.c) loads it into each context and patches
 * SANITIZER_INSTRUCTION_BLOCK_ENTER / _EXIT of every loaded module with the
 * two functions below. No NVIDIA header is needed: the prototype is the one
 * the Sanitizer API documents for both callbacks,
 *   SanitizerPatchResult fn(void *userdata, uint64_t pc)
 * with SanitizerPatchResult an enum whose success value is 0.
 *
 * userdata is set per launch by the host: it points at the launch's first
 * slot in the context's record buffer (one slot per block, in linear block
 * order), or is NULL when the launch is not recorded (filtered out, or the
 * buffer is full). The buffer is zeroed when allocated, so:
 *   - start is kept inverted (~t): atomicMax of ~t over the warps keeps the
 *     earliest entry, and 0 means "never entered";
 *   - end is atomicMax of t over the warps: the last warp's exit.
 * One lane per warp (the lowest active one) does the work: two atomics per
 * warp and block, none across blocks.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

/* One block's slot: 24 bytes, read back by blocks.c (struct block_slot). */
struct mprof_block_slot {
  unsigned long long start_inv; /* ~%globaltimer at the first warp's entry */
  unsigned long long end;       /* %globaltimer at the last warp's exit */
  unsigned int sm_enter;        /* %smid at entry */
  unsigned int sm_exit;         /* %smid at exit */
};

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

static __device__ __forceinline__ struct mprof_block_slot *
mprof_slot(void *userdata) {
  unsigned long long linear =
      blockIdx.x +
      (unsigned long long)gridDim.x *
          (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  return (struct mprof_block_slot *)userdata + linear;
}

extern "C" __device__ __noinline__ int mprof_block_enter(void *userdata,
                                                         uint64_t pc) {
  (void)pc;
  if (!userdata)
    return 0;
  unsigned int mask = __activemask();
  if (mprof_laneid() != (unsigned int)(__ffs(mask) - 1))
    return 0;
  struct mprof_block_slot *s = mprof_slot(userdata);
  unsigned long long t = mprof_globaltimer();
  s->sm_enter = mprof_smid();
  atomicMax(&s->start_inv, ~t);
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
  struct mprof_block_slot *s = mprof_slot(userdata);
  unsigned long long t = mprof_globaltimer();
  s->sm_exit = mprof_smid();
  atomicMax(&s->end, t);
  return 0;
}
