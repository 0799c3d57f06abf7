// A kernel whose code is mostly CUB's templates, inlined from CUB's headers
// (tests/test_render_source.c: CUB code maps to the header lines).
// lines_cub.cubin is built from it by
//   mkdir -p /build/lines && cp lines_cub.cu /build/lines
//   cd /build/lines && nvcc -cubin -arch=sm_90 -lineinfo -o lines_cub.cubin lines_cub.cu
// (CUDA 13.0: CUB under /usr/local/cuda-13.0/include/cccl).
//
// SPDX-License-Identifier: MIT
#include <cub/block/block_reduce.cuh>

__global__ void lines_cub_sum(const float *in, float *out, int n) {
  typedef cub::BlockReduce<float, 128> Reduce;
  __shared__ typename Reduce::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  float sum = Reduce(temp).Sum(v); // @cub-sum
  if (threadIdx.x == 0)
    out[blockIdx.x] = sum;
}
