// CHECK(call): the GPU check programs' one way to stop on a CUDA runtime
// error, naming the place, the call and the error.
//
// SPDX-License-Identifier: MIT
#ifndef MPROF_TESTS_GPU_CUDA_CHECK_H
#define MPROF_TESTS_GPU_CUDA_CHECK_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
              cudaGetErrorString(e_));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#endif
