// A program whose workers start CUDA and do nothing on the GPU, as
// torch.compile's workers and launchers that count the GPUs do: `idle`
// makes a context (cudaFree(0)), `query` counts the devices; with no
// argument it runs one of each, then launches one kernel after a memset.
// tests/gpu/empty_child.sh records it.
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2.0f;
}

static int run_worker(const char *mode) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "empty_child", mode, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "idle") == 0)
    return cudaFree(0) != cudaSuccess;
  if (argc > 1 && strcmp(argv[1], "query") == 0) {
    int n = 0;
    return cudaGetDeviceCount(&n) != cudaSuccess || n < 1;
  }
  if (run_worker("idle") || run_worker("query")) {
    fprintf(stderr, "empty_child: a worker failed\n");
    return 2;
  }
  const int n = 1 << 18;
  float *d = NULL;
  if (cudaMalloc(&d, n * sizeof *d) != cudaSuccess ||
      cudaMemset(d, 0, n * sizeof *d) != cudaSuccess)
    return 3;
  scale<<<(n + 255) / 256, 256>>>(d, n);
  if (cudaDeviceSynchronize() != cudaSuccess)
    return 4;
  cudaFree(d);
  printf("EMPTY_CHILD workers=2 launches=1\n");
  return 0;
}
