/*
 * small_kernels: one cuBLAS SGEMM and 200 small kernels, the short program
 * tests/gpu/capture_cost.sh measures capture cost on (wall time plain, under
 * `mprof record`, under the floor subscriber and under ncu).
 *
 * usage: small_kernels [--steady MS]
 *   (none)        SGEMM 2048^3 once, then 200 launches of 4 small kernels in
 *                 turn; prints "RESULT ok" when the SGEMM checks out
 *   --steady MS   then keep launching SGEMM 4096^3 + 20 small kernels per
 *                 iteration for about MS ms of GPU time after a warm-up, and
 *                 print "steady_gpu_ms X iterations N" from CUDA events: the
 *                 kernel slowdown under PC sampling is the ratio of two runs
 * exit status: 0 on success, 1 on a CUDA/cuBLAS error or a wrong result.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../producers/cuda/examples/example_common.h"
#define CHECK_BLAS(call)                                                       \
  do {                                                                         \
    cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      fprintf(stderr, "%s:%d: cuBLAS status %d\n", __FILE__, __LINE__,         \
              (int)s_);                                                        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

__global__ void relu(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void row_sum(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float s = 0.0f;
  for (int c = 0; c < cols; c++)
    s += x[(size_t)r * cols + c];
  out[r] = s;
}

static void small_kernel(int which, float *x, float *y, float *sums, int n) {
  int threads = 256, blocks = (n + threads - 1) / threads;
  switch (which % 4) {
  case 0: scale<<<blocks, threads>>>(x, 0.999f, n); break;
  case 1: axpy<<<blocks, threads>>>(y, x, 0.5f, n); break;
  case 2: relu<<<blocks, threads>>>(y, n); break;
  default: row_sum<<<(256 + 127) / 128, 128>>>(y, sums, 256, n / 256); break;
  }
}

int main(int argc, char **argv) {
  double steady_ms = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--steady") == 0 && i + 1 < argc)
      steady_ms = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: small_kernels [--steady MS]\n");
      return 2;
    }
  }
  const int n = 1 << 20, m = 2048;
  float *x, *y, *sums, *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof *x));
  CHECK_CUDA(cudaMalloc(&y, n * sizeof *y));
  CHECK_CUDA(cudaMalloc(&sums, 256 * sizeof *sums));
  size_t big = 4096;
  CHECK_CUDA(cudaMalloc(&a, big * big * sizeof *a));
  CHECK_CUDA(cudaMalloc(&b, big * big * sizeof *b));
  CHECK_CUDA(cudaMalloc(&c, big * big * sizeof *c));
  /* A = 1, B = 2: every element of C = A B is 2 m. */
  float *host = (float *)malloc(big * big * sizeof *host);
  for (size_t i = 0; i < big * big; i++)
    host[i] = 1.0f;
  CHECK_CUDA(
      cudaMemcpy(a, host, big * big * sizeof *a, cudaMemcpyHostToDevice));
  for (size_t i = 0; i < big * big; i++)
    host[i] = 2.0f;
  CHECK_CUDA(
      cudaMemcpy(b, host, big * big * sizeof *b, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(x, host, n * sizeof *x, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(y, 0, n * sizeof *y));

  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  const float one = 1.0f, zero = 0.0f;
  CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m,
                         b, m, &zero, c, m));
  for (int k = 0; k < 200; k++)
    small_kernel(k, x, y, sums, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  float probe[4];
  CHECK_CUDA(cudaMemcpy(probe, c, sizeof probe, cudaMemcpyDeviceToHost));
  int good = 1;
  for (int i = 0; i < 4; i++)
    good &= fabsf(probe[i] - 2.0f * m) < 1e-3f * m;

  if (steady_ms > 0) {
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    int big_n = (int)big;
    /* Warm-up: module loads and first-call costs stay out of the timing. */
    for (int w = 0; w < 3; w++) {
      CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, big_n, big_n,
                             big_n, &one, a, big_n, b, big_n, &zero, c, big_n));
      for (int k = 0; k < 20; k++)
        small_kernel(k, x, y, sums, n);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    /* One iteration's cost, to size the timed loop. */
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, big_n, big_n,
                           big_n, &one, a, big_n, b, big_n, &zero, c, big_n));
    for (int k = 0; k < 20; k++)
      small_kernel(k, x, y, sums, n);
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float one_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&one_ms, start, stop));
    int iterations = one_ms > 0 ? (int)(steady_ms / one_ms) : 100;
    if (iterations < 10)
      iterations = 10;
    CHECK_CUDA(cudaEventRecord(start));
    for (int it = 0; it < iterations; it++) {
      CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, big_n, big_n,
                             big_n, &one, a, big_n, b, big_n, &zero, c, big_n));
      for (int k = 0; k < 20; k++)
        small_kernel(k, x, y, sums, n);
    }
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    printf("steady_gpu_ms %.3f iterations %d\n", ms, iterations);
  }
  cublasDestroy(handle);
  printf("RESULT %s\n", good ? "ok" : "mismatch");
  return good ? 0 : 1;
}
