/*
 * Shared helpers for the mprof CUDA examples: error checking, a deterministic
 * random generator, and CUDA-event timing of individual kernel launches.
 *
 * The event timings exist so that kernel durations reported by the profiler
 * can be compared with an independent measurement taken inside the same
 * process, on the same launches.
 */
#ifndef MPROF_EXAMPLE_COMMON_H
#define MPROF_EXAMPLE_COMMON_H

#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: CUDA error %s: %s (in %s)\n", __FILE__,          \
              __LINE__, cudaGetErrorName(err_), cudaGetErrorString(err_),      \
              #call);                                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Deterministic pseudo-random numbers, so runs and CPU references agree.   */

typedef struct {
  uint64_t state;
} Rng;

static inline uint32_t rng_next_u32(Rng *rng) {
  /* PCG-style LCG step with an xorshift output: cheap and good enough. */
  rng->state = rng->state * 6364136223846793005ULL + 1442695040888963407ULL;
  uint64_t x = rng->state;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (uint32_t)x;
}

/* Uniform in [-1, 1). */
static inline float rng_uniform_pm1(Rng *rng) {
  return (float)((double)rng_next_u32(rng) / 2147483648.0 - 1.0);
}

static inline double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Per-launch CUDA event timing.                                             */
/*                                                                           */
/* Every launch gets a start/stop event pair recorded on its own stream.     */
/* Pairs live in a ring; results are harvested lazily only when the ring is  */
/* full (the oldest pair is then thousands of launches old and long done),   */
/* so timing never forces the host to wait on the GPU in steady state.       */

#define TIMER_RING_CAPACITY 4096
#define TIMER_MAX_NAMES 64

typedef struct {
  const char *name;
  const char *group; /* optional second bucket, e.g. "cublas:all_gemms" */
  cudaEvent_t start;
  cudaEvent_t stop;
} TimerSlot;

typedef struct {
  const char *name;
  long launches;
  double sum_us;
  double min_us;
  double max_us;
} TimerStats;

typedef struct {
  TimerSlot slots[TIMER_RING_CAPACITY];
  long head; /* next slot to fill (monotonic) */
  long tail; /* oldest slot not yet harvested (monotonic) */
  TimerStats stats[TIMER_MAX_NAMES];
  int num_names;
} LaunchTimer;

static inline void timer_init(LaunchTimer *timer) {
  memset(timer, 0, sizeof(*timer));
  for (int i = 0; i < TIMER_RING_CAPACITY; i++) {
    CHECK_CUDA(cudaEventCreate(&timer->slots[i].start));
    CHECK_CUDA(cudaEventCreate(&timer->slots[i].stop));
  }
}

static inline void timer_destroy(LaunchTimer *timer) {
  for (int i = 0; i < TIMER_RING_CAPACITY; i++) {
    CHECK_CUDA(cudaEventDestroy(timer->slots[i].start));
    CHECK_CUDA(cudaEventDestroy(timer->slots[i].stop));
  }
}

static inline TimerStats *timer_stats_for(LaunchTimer *timer,
                                          const char *name) {
  for (int i = 0; i < timer->num_names; i++) {
    if (strcmp(timer->stats[i].name, name) == 0)
      return &timer->stats[i];
  }
  if (timer->num_names == TIMER_MAX_NAMES) {
    fprintf(stderr, "LaunchTimer: more than %d distinct names\n",
            TIMER_MAX_NAMES);
    exit(1);
  }
  TimerStats *s = &timer->stats[timer->num_names++];
  s->name = name;
  s->launches = 0;
  s->sum_us = 0.0;
  s->min_us = 1e300;
  s->max_us = 0.0;
  return s;
}

static inline void timer_stats_add(TimerStats *s, double us) {
  s->launches++;
  s->sum_us += us;
  if (us < s->min_us)
    s->min_us = us;
  if (us > s->max_us)
    s->max_us = us;
}

static inline void timer_harvest_oldest(LaunchTimer *timer) {
  TimerSlot *slot = &timer->slots[timer->tail % TIMER_RING_CAPACITY];
  float ms = 0.0f;
  CHECK_CUDA(cudaEventSynchronize(slot->stop));
  CHECK_CUDA(cudaEventElapsedTime(&ms, slot->start, slot->stop));
  timer_stats_add(timer_stats_for(timer, slot->name), (double)ms * 1000.0);
  if (slot->group)
    timer_stats_add(timer_stats_for(timer, slot->group), (double)ms * 1000.0);
  timer->tail++;
}

/* Registers the name at first use so the report keeps source order. */
static inline TimerSlot *timer_begin(LaunchTimer *timer, const char *name,
                                     const char *group, cudaStream_t stream) {
  if (timer->head - timer->tail == TIMER_RING_CAPACITY)
    timer_harvest_oldest(timer);
  timer_stats_for(timer, name);
  if (group)
    timer_stats_for(timer, group);
  TimerSlot *slot = &timer->slots[timer->head % TIMER_RING_CAPACITY];
  slot->name = name;
  slot->group = group;
  CHECK_CUDA(cudaEventRecord(slot->start, stream));
  return slot;
}

static inline void timer_end(LaunchTimer *timer, TimerSlot *slot,
                             cudaStream_t stream) {
  CHECK_CUDA(cudaEventRecord(slot->stop, stream));
  timer->head++;
}

/* Forgets everything timed so far, e.g. an untimed warm-up pass. */
static inline void timer_discard(LaunchTimer *timer) {
  while (timer->tail < timer->head)
    timer_harvest_oldest(timer);
  timer->num_names = 0;
}

/* Prints one EVENT_TIMING line per name, in order of first launch. */
static inline void timer_report(LaunchTimer *timer) {
  while (timer->tail < timer->head)
    timer_harvest_oldest(timer);
  for (int i = 0; i < timer->num_names; i++) {
    const TimerStats *s = &timer->stats[i];
    if (s->launches == 0)
      continue;
    printf("EVENT_TIMING kernel=%s launches=%ld mean_us=%.3f "
           "min_us=%.3f max_us=%.3f\n",
           s->name, s->launches, s->sum_us / (double)s->launches, s->min_us,
           s->max_us);
  }
}

/*
 * Launches a kernel between a pair of timing events on its stream. The
 * reported name is the kernel's identifier as written in the source, which
 * is what the profiler shows for it too.
 */
#define TIMED_LAUNCH(timer, kernel, grid, block, smem, stream, ...)            \
  do {                                                                         \
    TimerSlot *slot_ = timer_begin((timer), #kernel, NULL, (stream));          \
    kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__);                \
    CHECK_CUDA(cudaGetLastError());                                            \
    timer_end((timer), slot_, (stream));                                       \
  } while (0)

/* Prints the device the run happened on, so logs are self-describing. */
static inline void print_device(void) {
  int device = 0;
  struct cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  printf("device %d: %s (sm_%d%d, %d SMs)\n", device, prop.name, prop.major,
         prop.minor, prop.multiProcessorCount);
}

#endif /* MPROF_EXAMPLE_COMMON_H */
