// Kernels for tests/test_sass.c, compiled by tests/CMakeLists.txt with nvcc
// (when the CUDA toolkit is installed) into cubins, an executable and a
// shared library. The tests find source lines by the "@name" markers below,
// so lines can move; keep each marker on the line it names.
//
// SPDX-License-Identifier: MIT

__global__ void memk(float *out, const float *a, const float *b, int n) { // @memk
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] * b[i] + 1.0f; // @memk-fma
}

__global__ void shk(float *out, int n) { // @shk
  __shared__ float tile[256];
  tile[threadIdx.x] = threadIdx.x * 2.0f;
  __syncthreads();
  if (threadIdx.x < n)
    out[threadIdx.x] = tile[255 - threadIdx.x];
}

__device__ __noinline__ float helper(float x) { return x * x + 1.0f; } // @helper
__global__ void callk(float *p) { p[threadIdx.x] = helper(p[threadIdx.x]); }

extern "C" __global__ void plain_c(int *p) { p[0] = 1; }

namespace ns {
template <typename T> __global__ void tk(T *p) { p[threadIdx.x] += T(1); }
template __global__ void tk<int>(int *);
} // namespace ns

#ifdef SASS_KERNELS_MAIN
int main(void) { return 0; }
#endif
