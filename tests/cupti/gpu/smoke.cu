/*
 * A small CUDA program for trying libmprof-cupti.so on a GPU: kernels on two
 * streams, memcpy and memset, a CUDA graph replayed three times, and nested
 * NVTX ranges with a colour. It checks its own results and prints one line,
 * so a run under the injection library can be compared with a plain run.
 *
 * usage: smoke [iterations]      exit status 0 when every result is right
 *
 * SPDX-License-Identifier: MIT
 */
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/* Compute bound: a dependent FMA chain per thread. */
__global__ void spin(float *out, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = (float)(i & 7);
  for (int r = 0; r < rounds; r++)
    x = fmaf(x, 0.5f, 1.0f);
  out[i] = x;
}

/* Memory bound: y = 2x over a large vector. */
__global__ void scale(const float *x, float *y, int n) {
  int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = 2.0f * x[i];
}

/* Launch bound: one block that does almost nothing. */
__global__ void tiny(int *counter) { atomicAdd(counter, 1); }

int main(int argc, char **argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 5;
  const int n = 1 << 24;
  const int spin_threads = 132 * 4 * 256;
  float *x, *y, *spun;
  int *counter;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&spun, spin_threads * sizeof(float)));
  CHECK(cudaMalloc(&counter, sizeof(int)));
  std::vector<float> host(n, 1.5f);
  cudaStream_t a, b;
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));

  CHECK(cudaMemsetAsync(counter, 0, sizeof(int), a));
  CHECK(cudaMemcpyAsync(x, host.data(), n * sizeof(float),
                        cudaMemcpyHostToDevice, a));
  CHECK(cudaStreamSynchronize(a));

  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = 0xff00ff00u;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "smoke";
  nvtxRangePushEx(&attr);
  for (int it = 0; it < iterations; it++) {
    nvtxRangePushA("iteration");
    spin<<<132 * 4, 256, 0, a>>>(spun, 20000);
    scale<<<132 * 8, 256, 0, b>>>(x, y, n);
    for (int t = 0; t < 20; t++)
      tiny<<<1, 32, 0, b>>>(counter);
    nvtxRangePop();
  }
  nvtxMarkA("kernels queued");

  /* The same work as a graph, replayed. */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
  tiny<<<1, 32, 0, a>>>(counter);
  scale<<<132 * 8, 256, 0, a>>>(x, y, n);
  CHECK(cudaStreamEndCapture(a, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 3; r++)
    CHECK(cudaGraphLaunch(exec, a));
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();

  int count = 0;
  CHECK(cudaMemcpy(&count, counter, sizeof count, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  int expected = (iterations * 20 + 3) * 32; /* 32 threads per tiny */
  bool ok = count == expected && host[0] == 3.0f && host[n - 1] == 3.0f;
  std::printf("smoke: %d iterations, counter %d (expected %d), y[0] %.1f: %s\n",
              iterations, count, expected, host[0], ok ? "ok" : "WRONG");
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(spun));
  CHECK(cudaFree(counter));
  return ok ? 0 : 1;
}
