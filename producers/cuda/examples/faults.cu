/*
 * Small CUDA programs that end the ways real programs do, for
 * tests/gpu/faults.sh: each mode launches `spin` kernels of a known length
 * and prints how many it launched, so the trace can be checked against it.
 *
 *   faults sync N        N launches, synchronise, exit 0 (the baseline)
 *   faults fork N        CUDA first, then fork: the child (which may not use
 *                        CUDA) exits; the parent launches N and exits
 *   faults fork-first N  fork first, then both processes launch N
 *   faults threads N     two host threads x two streams, N launches each
 *   faults graph N       a CUDA graph of 10 kernels, launched N times
 *   faults nosync N      N launches of ~2 ms, exit(0) without synchronising
 *   faults abort N       N synchronised launches, then abort()
 *   faults segv N        N synchronised launches, then a host segfault
 *   faults loop SECONDS  launch and synchronise in batches for SECONDS,
 *                        printing "launched N" after every batch (for
 *                        SIGKILL, SIGTERM and Ctrl-C)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "example_common.h"

/* Spins for about @p ns on the GPU's global timer. */
__global__ void spin(unsigned long long ns, int *sink) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (threadIdx.x == 0 && sink)
    atomicAdd(sink, 1);
}

static int *sink;

static void setup(void) { CHECK_CUDA(cudaMalloc(&sink, sizeof(int))); }

static void launch(int count, unsigned long long ns, cudaStream_t stream) {
  for (int i = 0; i < count; i++)
    spin<<<1, 32, 0, stream>>>(ns, sink);
  CHECK_CUDA(cudaGetLastError());
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
  int count;
} thread_job;

static void *two_streams(void *arg) {
  thread_job *job = (thread_job *)arg;
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++)
    CHECK_CUDA(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  for (int i = 0; i < job->count; i++)
    for (int k = 0; k < 2; k++)
      spin<<<1, 32, 0, s[k]>>>(20000, sink);
  for (int i = 0; i < 2; i++) {
    CHECK_CUDA(cudaStreamSynchronize(s[i]));
    CHECK_CUDA(cudaStreamDestroy(s[i]));
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: faults MODE N (see the comment in faults.cu)\n");
    return 2;
  }
  const char *mode = argv[1];
  int n = atoi(argv[2]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(mode, "fork-first") == 0) {
    pid_t child = fork();
    setup();
    launch(n, 20000, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("%s launched %d\n", child == 0 ? "child" : "parent", n);
    if (child > 0) {
      int status = 0;
      waitpid(child, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return 0;
  }
  setup();
  if (strcmp(mode, "sync") == 0) {
    launch(n, 20000, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
  } else if (strcmp(mode, "fork") == 0) {
    launch(n / 2, 20000, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    pid_t child = fork();
    if (child == 0) {
      printf("child exits\n");
      exit(0); /* runs the exit handlers it inherited */
    }
    launch(n - n / 2, 20000, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    int status = 0;
    waitpid(child, &status, 0);
  } else if (strcmp(mode, "threads") == 0) {
    pthread_t threads[2];
    thread_job job = {n};
    for (int i = 0; i < 2; i++)
      pthread_create(&threads[i], NULL, two_streams, &job);
    for (int i = 0; i < 2; i++)
      pthread_join(threads[i], NULL);
    n *= 4;
  } else if (strcmp(mode, "graph") == 0) {
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    launch(10, 20000, s);
    CHECK_CUDA(cudaStreamEndCapture(s, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < n; i++)
      CHECK_CUDA(cudaGraphLaunch(exec, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    n *= 10;
  } else if (strcmp(mode, "nosync") == 0) {
    launch(n, 2000000, 0);
    printf("launched %d\n", n);
    exit(0);
  } else if (strcmp(mode, "abort") == 0 || strcmp(mode, "segv") == 0) {
    launch(n, 20000, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("launched %d\n", n);
    if (mode[0] == 'a')
      abort();
    volatile int *nowhere = NULL;
    *nowhere = 1;
  } else if (strcmp(mode, "loop") == 0) {
    double end = now_s() + n;
    long total = 0;
    while (now_s() < end) {
      launch(100, 100000, 0); /* 100 x 0.1 ms */
      CHECK_CUDA(cudaDeviceSynchronize());
      total += 100;
      printf("launched %ld at %.3f\n", total, now_s());
    }
    n = (int)total;
  } else {
    fprintf(stderr, "faults: unknown mode '%s'\n", mode);
    return 2;
  }
  printf("launched %d\n", n);
  return 0;
}
