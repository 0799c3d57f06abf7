// The launch paths a profiler meets in programs it did not write, each
// once: a cooperative launch with a grid-wide sync, a thread-block cluster
// launched through cudaLaunchKernelEx, dynamic parallelism (kernels
// launched by a kernel), managed memory touched first on the host, then on
// the device, stream-ordered allocation (cudaMallocAsync), and a kernel
// compiled at run time by NVRTC and loaded with cuModuleLoadData.
// tests/gpu/programs.sh records it and compares the trace with what the
// program says it did.
//
// Prints one result line per path (the same with and without mprof) and,
// for each kernel it launched from the host, "launches NAME N" ("cluster
// NAME X": launched in clusters of X blocks; "device_launches NAME N":
// launched N times by other kernels).
//
// SPDX-License-Identifier: MIT
#include <cooperative_groups.h>
#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cg = cooperative_groups;

#include "../../producers/cuda/examples/example_common.h"
#define CHECK_CU(call)                                                         \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *s_ = "?";                                                    \
      cuGetErrorString(r_, &s_);                                               \
      fprintf(stderr, "edges: %s: %s\n", #call, s_);                           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// Every block adds its part, the grid syncs, block 0 writes the total.
__global__ void coop_sum(const float *x, int n, float *partial, float *out) {
  cg::grid_group grid = cg::this_grid();
  float s = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size())
    s += x[i];
  atomicAdd(&partial[blockIdx.x], s);
  grid.sync();
  if (grid.thread_rank() == 0) {
    float t = 0;
    for (unsigned b = 0; b < gridDim.x; b++)
      t += partial[b];
    *out = t;
  }
}

// Two blocks per cluster; each block reads its neighbour's shared memory.
__global__ void cluster_swap(int *out) {
  __shared__ int mine;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0)
    mine = blockIdx.x;
  cluster.sync();
  int *other = cluster.map_shared_rank(&mine, cluster.block_rank() ^ 1);
  if (threadIdx.x == 0)
    out[blockIdx.x] = *other;
  cluster.sync();
}

__global__ void child_scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

// Launches one child grid per chunk of the array.
__global__ void parent_launch(float *x, int n, int chunks) {
  int per = n / chunks;
  if (threadIdx.x < chunks)
    child_scale<<<(per + 255) / 256, 256>>>(x + threadIdx.x * per, per, 2.0f);
}

__global__ void touch_managed(int *m, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    m[i] = m[i] * 3 + 1;
}

__global__ void fill_async(float *x, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v + i % 7;
}

static const char *jit_source =
    "extern \"C\" __global__ void jit_axpy(float a, const float *x, float *y,"
    " int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  const int n = 1 << 20;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int launched_coop = 0, launched_cluster = 0, launched_parent = 0;
  int launched_managed = 0, launched_async = 0, launched_jit = 0;

  float *x, *partial, *sum;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&partial, 1024 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(float)));

  // NVRTC: compile once, load the cubin, launch it each round.
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, jit_source, "jit_axpy.cu", 0, NULL, NULL);
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d%d", prop.major, prop.minor);
  const char *opts[] = {arch, "-lineinfo"};
  if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
    size_t len;
    nvrtcGetProgramLogSize(prog, &len);
    char *log = (char *)malloc(len);
    nvrtcGetProgramLog(prog, log);
    fprintf(stderr, "edges: NVRTC: %s\n", log);
    return 1;
  }
  size_t cubin_size;
  nvrtcGetCUBINSize(prog, &cubin_size);
  char *cubin = (char *)malloc(cubin_size);
  nvrtcGetCUBIN(prog, cubin);
  nvrtcDestroyProgram(&prog);
  CUmodule module;
  CUfunction jit_axpy;
  CHECK_CUDA(cudaFree(0)); // the runtime's context, for the driver API too
  CHECK_CU(cuModuleLoadData(&module, cubin));
  CHECK_CU(cuModuleGetFunction(&jit_axpy, module, "jit_axpy"));
  free(cubin);

  for (int r = 0; r < rounds; r++) {
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));

    // Stream-ordered allocation.
    float *tmp;
    CHECK_CUDA(cudaMallocAsync(&tmp, n * sizeof(float), stream));
    fill_async<<<(n + 255) / 256, 256, 0, stream>>>(tmp, n, (float)r);
    launched_async++;
    CHECK_CUDA(cudaMemcpyAsync(x, tmp, n * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
    CHECK_CUDA(cudaFreeAsync(tmp, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    // Cooperative launch: as many blocks as fit at once.
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_sum,
                                                             256, 0));
    int blocks = per_sm * prop.multiProcessorCount;
    if (blocks > 1024)
      blocks = 1024;
    CHECK_CUDA(cudaMemset(partial, 0, 1024 * sizeof(float)));
    int nn = n;
    void *args[] = {&x, &nn, &partial, &sum};
    CHECK_CUDA(cudaLaunchCooperativeKernel((void *)coop_sum, blocks, 256, args,
                                           0, stream));
    launched_coop++;
    float total;
    CHECK_CUDA(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));

    // Cluster launch: 32 blocks in clusters of 2.
    int *swapped;
    CHECK_CUDA(cudaMalloc(&swapped, 32 * sizeof(int)));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(32);
    config.blockDim = dim3(64);
    config.stream = stream;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    CHECK_CUDA(cudaLaunchKernelEx(&config, cluster_swap, swapped));
    launched_cluster++;
    int host_swapped[32];
    CHECK_CUDA(cudaMemcpy(host_swapped, swapped, sizeof host_swapped,
                          cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(swapped));
    int swap_ok = 1;
    for (int b = 0; b < 32; b++)
      swap_ok &= host_swapped[b] == (b ^ 1);

    // Dynamic parallelism: 4 child grids from one parent.
    parent_launch<<<1, 32, 0, stream>>>(x, n, 4);
    launched_parent++;
    CHECK_CUDA(cudaStreamSynchronize(stream));
    float probe;
    CHECK_CUDA(cudaMemcpy(&probe, x + 5, sizeof probe, cudaMemcpyDeviceToHost));

    // Managed memory: written on the host, then changed on the device.
    int *m;
    CHECK_CUDA(cudaMallocManaged(&m, n * sizeof(int)));
    for (int i = 0; i < n; i++)
      m[i] = i & 1023;
    touch_managed<<<264, 256, 0, stream>>>(m, n);
    launched_managed++;
    CHECK_CUDA(cudaStreamSynchronize(stream));
    long long msum = 0;
    for (int i = 0; i < n; i += 4096)
      msum += m[i];
    CHECK_CUDA(cudaFree(m));

    // The run-time compiled kernel.
    float a = 0.5f;
    void *jargs[] = {&a, &x, &x, (void *)&nn};
    CHECK_CU(cuLaunchKernel(jit_axpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                            stream, jargs, NULL));
    launched_jit++;
    CHECK_CUDA(cudaStreamSynchronize(stream));
    float after;
    CHECK_CUDA(cudaMemcpy(&after, x + 5, sizeof after, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaStreamDestroy(stream));

    printf("round %d: coop_total %.1f cluster_swap %s child_probe %.1f "
           "managed_sum %lld jit_probe %.2f\n",
           r, total, swap_ok ? "ok" : "WRONG", probe, msum, after);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CU(cuModuleUnload(module));
  printf("launches coop_sum %d\n", launched_coop);
  printf("launches cluster_swap %d\n", launched_cluster);
  printf("cluster cluster_swap 2\n");
  printf("launches parent_launch %d\n", launched_parent);
  printf("launches touch_managed %d\n", launched_managed);
  printf("launches fill_async %d\n", launched_async);
  printf("launches jit_axpy %d\n", launched_jit);
  printf("device_launches child_scale %d\n", 4 * launched_parent);
  return 0;
}
