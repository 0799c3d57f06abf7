/*
 * blocks_memory.cu — a kernel whose global-memory accesses have a known
 * sector efficiency, for `mprof record blocks --memory` in
 * tests/gpu/blocks.sh:
 *   a coalesced float load   in[i]            32 lanes x 4 B in 4 sectors:
 *                                             100% of the bytes used;
 *   a stride-32 float load   in[32 i mod N]   each lane its own sector:
 *                                             128 B of 1024 B, 12.5%;
 *   a coalesced float store  out[i]           100%.
 * Every thread runs the three once per launch: GRID x 256 threads, so
 * each instruction has GRID x 8 warp accesses per launch.
 * Prints "MEMORY_PATTERN <blocks> <threads per block> <launches>".
 * Usage: blocks_memory [BLOCKS] [LAUNCHES]
 *
 * SPDX-License-Identifier: MIT
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../../producers/cuda/examples/example_common.h"

__global__ void memory_pattern(const float *in, float *out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = in[i];                              /* coalesced */
  float b = in[(unsigned long long)i * 32 % n]; /* stride 32 */
  out[i] = a + b;                               /* coalesced */
}

/* Another kernel in the same program that --kernel leaves out. */
__global__ void not_counted(float *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

int main(int argc, char **argv) {
  unsigned blocks = argc > 1 ? (unsigned)atoi(argv[1]) : 1024;
  int launches = argc > 2 ? atoi(argv[2]) : 3;
  const unsigned threads = 256;
  unsigned n = blocks * threads;
  float *in, *out;
  CHECK_CUDA(cudaMalloc(&in, (size_t)n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, (size_t)n * sizeof(float)));
  CHECK_CUDA(cudaMemset(in, 0, (size_t)n * sizeof(float)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  for (int i = 0; i < launches; i++) {
    memory_pattern<<<blocks, threads, 0, stream>>>(in, out, n);
    not_counted<<<blocks, threads>>>(out);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("MEMORY_PATTERN %u %u %d\n", blocks, threads, launches);
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  return 0;
}
