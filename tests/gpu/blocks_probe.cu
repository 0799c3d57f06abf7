/*
 * blocks_probe.cu — kernels whose block timeline is known in advance, for
 * tests/gpu/blocks.sh:
 *   tail    one block per SM (large dynamic shared memory), SMs + 1 blocks
 *           that each spin SPIN_US: one full wave, then one lone block;
 *   grid3d  a 7 x 5 x 3 grid (linear block index x + X(y + Yz));
 *   empty   N blocks of 128 threads that store one value: per-block cost.
 * Each launch is timed with a CUDA event pair and printed as
 *   EVENT_TIMING <kernel> <grid blocks> <ms>
 * Usage: blocks_probe [EMPTY_BLOCKS] [REPEAT]
 *
 * SPDX-License-Identifier: MIT
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../../producers/cuda/examples/example_common.h"

__global__ void tail_spin(unsigned long long spin_ns, int *out) {
  extern __shared__ int scratch[];
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < spin_ns);
  scratch[threadIdx.x] = (int)threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0)
    out[blockIdx.x] = scratch[blockDim.x - 1];
}

__global__ void grid3d(int *out) {
  int linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (threadIdx.x == 0)
    out[linear] = linear;
}

__global__ void empty_blocks(int *out) {
  if (threadIdx.x == 0)
    out[blockIdx.x & 1023] = blockIdx.x;
}

static float timed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK_CUDA(cudaEventSynchronize(b));
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

int main(int argc, char **argv) {
  int empty = argc > 1 ? atoi(argv[1]) : 1 << 20;
  int repeat = argc > 2 ? atoi(argv[2]) : 3;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int *out;
  CHECK_CUDA(cudaMalloc(&out, sizeof(int) * (1 << 20)));
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  /* More than half the SM's shared memory: one block per SM. */
  size_t shared = prop.sharedMemPerMultiprocessor / 2 + 1024;
  if (shared > prop.sharedMemPerBlockOptin)
    shared = prop.sharedMemPerBlockOptin;
  CHECK_CUDA(cudaFuncSetAttribute(
      tail_spin, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tail_spin,
                                                           256, shared));
  int tail_grid = prop.multiProcessorCount * per_sm + 1;
  printf("PROBE sms %d blocks_per_sm %d tail_grid %d shared %zu\n",
         prop.multiProcessorCount, per_sm, tail_grid, shared);
  for (int r = 0; r < repeat; r++) {
    CHECK_CUDA(cudaEventRecord(a));
    tail_spin<<<tail_grid, 256, shared>>>(200000ull, out);
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaGetLastError());
    printf("EVENT_TIMING tail_spin %d %.4f\n", tail_grid, timed(a, b));
    CHECK_CUDA(cudaEventRecord(a));
    grid3d<<<dim3(7, 5, 3), 64>>>(out);
    CHECK_CUDA(cudaEventRecord(b));
    printf("EVENT_TIMING grid3d %d %.4f\n", 7 * 5 * 3, timed(a, b));
    CHECK_CUDA(cudaEventRecord(a));
    empty_blocks<<<empty, 128>>>(out);
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaGetLastError());
    printf("EVENT_TIMING empty_blocks %d %.4f\n", empty, timed(a, b));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("RESULT ok\n");
  return 0;
}
