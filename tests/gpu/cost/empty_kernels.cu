/*
 * empty_kernels: 20,000 launches of an empty kernel, the per-launch cost
 * test of tests/gpu/capture_cost.sh. Prints the host time of the launch
 * loop (from the first timed launch to the end of the final synchronise),
 * so start-up and exit costs of a profiler stay out of the per-launch
 * figure.
 *
 * usage: empty_kernels [LAUNCHES]   (default 20000)
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void empty(void) {}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

int main(int argc, char **argv) {
  long launches = argc > 1 ? atol(argv[1]) : 20000;
  if (launches <= 0) {
    fprintf(stderr, "usage: empty_kernels [LAUNCHES]\n");
    return 2;
  }
  /* The first launch loads the module (and, under a profiler, its
   * callbacks run): keep it out of the loop. */
  empty<<<1, 32>>>();
  if (cudaDeviceSynchronize() != cudaSuccess)
    return 1;
  double t0 = now_us();
  for (long i = 0; i < launches; i++)
    empty<<<1, 32>>>();
  cudaError_t e = cudaDeviceSynchronize();
  double t1 = now_us();
  if (e != cudaSuccess) {
    fprintf(stderr, "%s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("launches %ld loop_us %.1f per_launch_us %.3f\nRESULT ok\n",
         launches, t1 - t0, (t1 - t0) / launches);
  return 0;
}
