// Device helpers of lines_kernels.cu, inlined into its kernels. The tests
// name lines by the "@name" markers; keep each marker on its line.
//
// SPDX-License-Identifier: MIT
#pragma once

__device__ __forceinline__ float lm_square(float x) {
  return x * x + 1.0f; // @square
}

__device__ __forceinline__ float lm_poly(float x) {
  float y = lm_square(x);          // @poly-first
  return y * 3.0f + lm_square(y);  // @poly-second
}
