/*
 * Planted bottlenecks: one kernel per performance problem, each named after
 * it, for scoring mprof's verdicts (tests/gpu/verdicts.sh holds the expected
 * verdict of each). Every kernel runs long enough for several PM samples
 * (tens of milliseconds in all) and prints its CUDA-event time.
 *
 * Usage: bottlenecks [NAME...]   (default: all, in the order below)
 * Environment: BOTTLENECKS_REPEAT=N runs the list N times, each time
 * between cudaProfilerStart and cudaProfilerStop (a repeating program for
 * `mprof record --capture-range cudaProfilerApi`).
 *
 * Build: nvcc -O3 -arch=sm_90 -lineinfo bottlenecks.cu -lcublas -o bottlenecks
 *
 * tests/gpu/calibrate.cu includes this file with BOTTLENECKS_NO_MAIN for
 * its kernels, and times each against the fix its verdict recommends.
 *
 * SPDX-License-Identifier: MIT
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../producers/cuda/examples/example_common.h"

static int sm_count;
static cudaEvent_t ev0, ev1;
static float sink_host;

static void begin(void) { CHECK_CUDA(cudaEventRecord(ev0)); }
static void end(const char *name, int launches) {
  CHECK_CUDA(cudaEventRecord(ev1));
  CHECK_CUDA(cudaEventSynchronize(ev1));
  CHECK_CUDA(cudaGetLastError());
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, ev0, ev1));
  printf("%-22s %8.3f ms  %d launches\n", name, ms, launches);
}

/* ---- memory latency: dependent loads over a random cycle in DRAM ------- */

__global__ void pointer_chase(const uint32_t *next, int steps, uint32_t *out) {
  uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 7919u;
  for (int s = 0; s < steps; s++)
    i = next[i]; // @hot pointer_chase
  if (i == 0xffffffffu)
    out[0] = i;
}

/* ---- DRAM bandwidth: a STREAM triad over arrays far larger than L2 ------ */

__global__ void dram_stream(float *a, const float *b, const float *c, size_t n,
                            float s) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    a[i] = b[i] + s * c[i]; // @hot dram_stream
}

/* ---- L2 bandwidth: reads of a buffer that fits in L2, many times ------- */

__global__ void l2_stream(const float4 *buf, size_t n, int reps, float *out) {
  float4 acc = make_float4(0, 0, 0, 0);
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; r++)
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
      float4 v = __ldcg(&buf[i]); /* L2 only: skip L1 */
      acc.x += v.x; // @hot l2_stream: the load's stalls land on this first use
      acc.y += v.y;
      acc.z += v.z;
      acc.w += v.w;
    }
  if (acc.x + acc.y + acc.z + acc.w == 12345.0f)
    out[0] = acc.x;
}

/* ---- FMA latency: one dependent chain, one warp per SM ------------------ */

__global__ void fma_chain_one_warp(float *out, int iters) {
  float x = threadIdx.x * 1e-3f, y = 1.0001f, z = 1e-7f;
  for (int i = 0; i < iters; i++)
    x = fmaf(x, y, z); // @hot fma_chain_one_warp
  if (x == 12345.0f)
    out[0] = x;
}

/* ---- FMA throughput: many independent chains on many warps ------------- */

__global__ void fma_independent(float *out, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4,
        a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  const float m = 0.9999f, c = 1e-6f;
  for (int i = 0; i < iters; i++) {
    a0 = fmaf(a0, m, c);
    a1 = fmaf(a1, m, c);
    a2 = fmaf(a2, m, c);
    a3 = fmaf(a3, m, c);
    a4 = fmaf(a4, m, c);
    a5 = fmaf(a5, m, c);
    a6 = fmaf(a6, m, c);
    a7 = fmaf(a7, m, c);
  }
  float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s == 12345.0f)
    out[0] = s;
}

/* ---- shared-memory bank conflicts: a 32-way strided column walk -------- */

__global__ void bank_conflicts(float *out, int iters) {
  __shared__ float tile[32 * 33 * 8];
  for (int i = threadIdx.x; i < 32 * 33 * 8; i += blockDim.x)
    tile[i] = i;
  __syncthreads();
  float acc = 0;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = 0; i < iters; i++) {
    /* stride 32 floats: every lane of a warp hits the same bank */
    int idx = ((lane * 32) + (i & 31) + warp) & (32 * 33 * 8 - 1);
    acc += tile[idx];
    tile[idx] = acc * 0.5f;
  }
  if (acc == 12345.0f)
    out[0] = acc;
}

/* ---- barriers: one warp works between __syncthreads, the others wait --- */

__global__ void barrier_heavy(float *out, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) {
    if (threadIdx.x < 32)
      for (int k = 0; k < 16; k++)
        x = fmaf(x, 1.0001f, 1e-7f);
    __syncthreads(); // @hot barrier_heavy
  }
  if (x == 12345.0f)
    out[0] = x;
}

/* ---- atomics: every thread of the GPU adds to one address --------------- */

__global__ void hot_atomics(float *counter, int iters) {
  for (int i = 0; i < iters; i++)
    atomicAdd(counter, 1.0f); // @hot hot_atomics
}

/* ---- instruction cache: a straight-line body far larger than the cache - */

template <int N> struct Unroll {
  __device__ __forceinline__ static float run(float x, float y) {
    x = Unroll<N / 2>::run(x, y * 1.0001f);
    return Unroll<N - N / 2>::run(x, y * 0.9999f);
  }
};
template <> struct Unroll<1> {
  __device__ __forceinline__ static float run(float x, float y) {
    return fmaf(x, y, 1e-7f);
  }
};

__global__ void icache_thrash(float *out, int iters, float seed) {
  float x = threadIdx.x + seed;
  for (int i = 0; i < iters; i++)
    x = Unroll<12288>::run(x, seed + i * 1e-9f);
  if (x == 12345.0f)
    out[0] = x;
}

/* ---- occupancy limited by shared memory: one 64-thread block per SM ---- */

__global__ void smem_limited(const float *in, float *out, size_t n, int reps) {
  extern __shared__ float big[];
  big[threadIdx.x] = 0;
  float acc = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; r++)
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
      acc += in[i];
  big[threadIdx.x] = acc;
  __syncthreads();
  if (big[(threadIdx.x + 1) % blockDim.x] == 12345.0f)
    out[0] = acc;
}

/* ---- tail: one block more than a full wave of long, SM-filling blocks -- */

__global__ void one_block_tail(float *out, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  for (int i = 0; i < iters; i++) {
    a0 = fmaf(a0, 0.9999f, 1e-6f);
    a1 = fmaf(a1, 0.9999f, 1e-6f);
    a2 = fmaf(a2, 0.9999f, 1e-6f);
    a3 = fmaf(a3, 0.9999f, 1e-6f);
  }
  float s = a0 + a1 + a2 + a3;
  if (s == 12345.0f)
    out[0] = s;
}

/* ---- launch overhead: many launches of a kernel that does almost nothing */

__global__ void tiny_kernel(float *x) {
  if (threadIdx.x == 0)
    x[blockIdx.x] += 1.0f;
}

/* ------------------------------------------------------------------------ */

static void run_pointer_chase(void) {
  const size_t n = (size_t)64 << 20; /* 256 MB of uint32 */
  uint32_t *host = (uint32_t *)malloc(n * sizeof *host);
  /* Sattolo's shuffle: one cycle through every element. */
  for (size_t i = 0; i < n; i++)
    host[i] = (uint32_t)i;
  uint64_t s = 88172645463325252ull;
  for (size_t i = n - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    size_t j = s % i;
    uint32_t t = host[i];
    host[i] = host[j];
    host[j] = t;
  }
  uint32_t *next, *out;
  CHECK_CUDA(cudaMalloc(&next, n * sizeof *next));
  CHECK_CUDA(cudaMalloc(&out, 4));
  CHECK_CUDA(cudaMemcpy(next, host, n * sizeof *next, cudaMemcpyHostToDevice));
  free(host);
  begin();
  for (int r = 0; r < 3; r++)
    pointer_chase<<<sm_count, 32>>>(next, 4000, out);
  end("pointer_chase", 3);
  CHECK_CUDA(cudaFree(next));
  CHECK_CUDA(cudaFree(out));
}

static void run_dram_stream(void) {
  const size_t n = (size_t)64 << 20; /* 3 x 256 MB */
  float *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, n * 4));
  CHECK_CUDA(cudaMalloc(&b, n * 4));
  CHECK_CUDA(cudaMalloc(&c, n * 4));
  CHECK_CUDA(cudaMemset(b, 0, n * 4));
  CHECK_CUDA(cudaMemset(c, 0, n * 4));
  begin();
  for (int r = 0; r < 40; r++)
    dram_stream<<<sm_count * 8, 256>>>(a, b, c, n, 2.0f);
  end("dram_stream", 40);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
}

static void run_l2_stream(void) {
  const size_t n = (size_t)1 << 20; /* 16 MB of float4: fits in L2 */
  float4 *buf;
  float *out;
  CHECK_CUDA(cudaMalloc(&buf, n * sizeof *buf));
  CHECK_CUDA(cudaMalloc(&out, 4));
  CHECK_CUDA(cudaMemset(buf, 0, n * sizeof *buf));
  begin();
  for (int r = 0; r < 10; r++)
    l2_stream<<<sm_count * 8, 256>>>(buf, n, 200, out);
  end("l2_stream", 10);
  CHECK_CUDA(cudaFree(buf));
  CHECK_CUDA(cudaFree(out));
}

static void run_fma_chain(float *out) {
  begin();
  for (int r = 0; r < 5; r++)
    fma_chain_one_warp<<<sm_count, 32>>>(out, 1 << 20);
  end("fma_chain_one_warp", 5);
}

static void run_fma_independent(float *out) {
  begin();
  for (int r = 0; r < 10; r++)
    fma_independent<<<sm_count * 16, 256>>>(out, 1 << 14);
  end("fma_independent", 10);
}

static void run_bank_conflicts(float *out) {
  begin();
  for (int r = 0; r < 10; r++)
    bank_conflicts<<<sm_count * 4, 256>>>(out, 1 << 11);
  end("bank_conflicts", 10);
}

static void run_barrier_heavy(float *out) {
  begin();
  for (int r = 0; r < 10; r++)
    barrier_heavy<<<sm_count * 4, 512>>>(out, 1 << 15);
  end("barrier_heavy", 10);
}

static void run_hot_atomics(float *out) {
  begin();
  for (int r = 0; r < 5; r++)
    hot_atomics<<<sm_count * 4, 256>>>(out, 32);
  end("hot_atomics", 5);
}

static void run_icache(float *out) {
  begin();
  for (int r = 0; r < 5; r++)
    icache_thrash<<<sm_count * 4, 256>>>(out, 4, 1.0f + r);
  end("icache_thrash", 5);
}

static void run_smem_limited(void) {
  const size_t n = (size_t)16 << 20; /* 64 MB */
  float *in, *out;
  CHECK_CUDA(cudaMalloc(&in, n * 4));
  CHECK_CUDA(cudaMalloc(&out, 4));
  CHECK_CUDA(cudaMemset(in, 0, n * 4));
  int smem = 200 * 1024;
  CHECK_CUDA(cudaFuncSetAttribute(
      smem_limited, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  begin();
  for (int r = 0; r < 5; r++)
    smem_limited<<<sm_count * 4, 64, smem>>>(in, out, n, 4);
  end("smem_limited", 5);
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
}

static void run_one_block_tail(float *out) {
  /* 1024 threads and 200 KB of shared memory: one block per SM, so a grid
   * of sm_count + 1 blocks runs as a full wave plus one lone block. */
  int smem = 200 * 1024;
  CHECK_CUDA(cudaFuncSetAttribute(
      one_block_tail, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  begin();
  for (int r = 0; r < 5; r++)
    one_block_tail<<<sm_count + 1, 1024, smem>>>(out, 1 << 15);
  end("one_block_tail", 5);
}

static void run_tiny_launches(void) {
  float *x;
  CHECK_CUDA(cudaMalloc(&x, 4096));
  CHECK_CUDA(cudaMemset(x, 0, 4096));
  const int launches = 5000;
  begin();
  for (int r = 0; r < launches; r++) {
    tiny_kernel<<<1, 32>>>(x);
    /* host work between launches, as a framework's dispatcher does */
    volatile float h = 0;
    for (int k = 0; k < 200; k++)
      h = h + k;
    sink_host += h;
  }
  end("tiny_kernel", launches);
  CHECK_CUDA(cudaFree(x));
}

static void run_cublas(void) {
  const int m = 8192, n = 8192, k = 8192;
  __nv_bfloat16 *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, (size_t)m * k * 2));
  CHECK_CUDA(cudaMalloc(&b, (size_t)k * n * 2));
  CHECK_CUDA(cudaMalloc(&c, (size_t)m * n * 2));
  CHECK_CUDA(cudaMemset(a, 0, (size_t)m * k * 2));
  CHECK_CUDA(cudaMemset(b, 0, (size_t)k * n * 2));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublasCreate failed\n");
    exit(1);
  }
  float alpha = 1, beta = 0;
  begin();
  for (int r = 0; r < 10; r++)
    if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a,
                     CUDA_R_16BF, m, b, CUDA_R_16BF, k, &beta, c, CUDA_R_16BF,
                     m, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      fprintf(stderr, "cublasGemmEx failed\n");
      exit(1);
    }
  end("cublas_gemm_bf16", 10);
  cublasDestroy(h);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
}

#ifndef BOTTLENECKS_NO_MAIN
int main(int argc, char **argv) {
  CHECK_CUDA(
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  CHECK_CUDA(cudaEventCreate(&ev0));
  CHECK_CUDA(cudaEventCreate(&ev1));
  float *out;
  CHECK_CUDA(cudaMalloc(&out, 64));
  CHECK_CUDA(cudaMemset(out, 0, 64));
  static const char *all[] = {
      "pointer_chase",      "dram_stream",     "l2_stream",
      "fma_chain_one_warp", "fma_independent", "bank_conflicts",
      "barrier_heavy",      "hot_atomics",     "icache_thrash",
      "smem_limited",       "one_block_tail",  "tiny_kernel",
      "cublas_gemm_bf16"};
  int count = argc > 1 ? argc - 1 : (int)(sizeof all / sizeof all[0]);
  const char *repeat_env = getenv("BOTTLENECKS_REPEAT");
  int repeats = repeat_env ? atoi(repeat_env) : 0;
  for (int step = 0; step < count * (repeats > 0 ? repeats : 1); step++) {
    int i = step % count;
    if (repeats > 0 && i == 0) {
      CHECK_CUDA(cudaProfilerStart());
      printf("repeat %d\n", step / count + 1);
    }
    const char *name = argc > 1 ? argv[i + 1] : all[i];
    if (!strcmp(name, "pointer_chase"))
      run_pointer_chase();
    else if (!strcmp(name, "dram_stream"))
      run_dram_stream();
    else if (!strcmp(name, "l2_stream"))
      run_l2_stream();
    else if (!strcmp(name, "fma_chain_one_warp"))
      run_fma_chain(out);
    else if (!strcmp(name, "fma_independent"))
      run_fma_independent(out);
    else if (!strcmp(name, "bank_conflicts"))
      run_bank_conflicts(out);
    else if (!strcmp(name, "barrier_heavy"))
      run_barrier_heavy(out);
    else if (!strcmp(name, "hot_atomics"))
      run_hot_atomics(out);
    else if (!strcmp(name, "icache_thrash"))
      run_icache(out);
    else if (!strcmp(name, "smem_limited"))
      run_smem_limited();
    else if (!strcmp(name, "one_block_tail"))
      run_one_block_tail(out);
    else if (!strcmp(name, "tiny_kernel"))
      run_tiny_launches();
    else if (!strcmp(name, "cublas_gemm_bf16"))
      run_cublas();
    else {
      fprintf(stderr, "bottlenecks: unknown kernel '%s'\n", name);
      return 2;
    }
    if (repeats > 0 && i == count - 1) {
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CUDA(cudaProfilerStop());
    }
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("RESULT ok\n");
  return 0;
}
#endif /* BOTTLENECKS_NO_MAIN */
