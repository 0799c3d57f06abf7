// Kernels for the per-line analysis tests (tests/test_lines.c): code in two
// files, inlined two deep. lines_kernels.cubin is built from it by
//   mkdir -p /build/lines && cp lines_kernels.cu lines_math.cuh /build/lines
//   cd /build/lines && nvcc -cubin -arch=sm_90 -lineinfo -o lines_kernels.cubin lines_kernels.cu
// (CUDA 13.0), so its line table names /build/lines, a build folder the
// tests map back here. Keep each "@name" marker on the line it names.
//
// SPDX-License-Identifier: MIT
#include "lines_math.cuh"

__global__ void lines_scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; // @scale-index
  if (i < n)
    out[i] = in[i] * 2.0f; // @scale-store
}

__global__ void lines_inline(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; // @inline-index
  float acc = 0.0f;
  for (int k = 0; k < n; k++)
    acc += lm_poly(in[(i + k) % n]); // @inline-call
  out[i] = acc; // @inline-store
}
