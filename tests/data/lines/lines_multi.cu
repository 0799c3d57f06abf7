// Kernels for the inline call-site test of tests/test_lines.c: several
// kernels in one file with code inlined from two headers (lm_poly two deep,
// and CUDA's atomicAdd). nvcc writes one line sequence per kernel, the
// last kernel's first, and numbers the call sites of inlined code inside
// each sequence, so the kernels that inline come after rows of others.
// lines_multi.cubin is built from it by
//   mkdir -p /build/lines && cp lines_multi.cu lines_math.cuh /build/lines
//   cd /build/lines && nvcc -O3 -cubin -arch=sm_90 -lineinfo -o lines_multi.cubin lines_multi.cu
// (CUDA 13.0). Keep each "@name" marker on the line it names.
//
// SPDX-License-Identifier: MIT
#include "lines_math.cuh"

__global__ void multi_atomic(float *counter, int iters) {
  for (int i = 0; i < iters; i++)
    atomicAdd(counter, 1.0f); // @multi-atomic
}

__global__ void multi_poly(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = lm_poly(in[i]); // @multi-poly
}

__global__ void multi_plain(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  for (int k = 0; k < 4; k++)
    v = v * 0.5f + k;
  x[i] = v;
}
