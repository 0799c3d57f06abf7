/*
 * Calibration of mprof's estimated gains: every planted kernel of
 * tests/gpu/bottlenecks.cu beside a fixed twin, the change its verdict
 * recommends with the same total work, and kernels with two planted
 * problems, each problem with its own twin (the right headline is the
 * problem whose fix gains more). tests/gpu/calibrate.sh records the
 * originals, times originals and twins, and compares each headline's
 * estimated gain with the measured one, 1 - t_fixed / t_original.
 *
 * Usage: calibrate list              the cases: NAME FIX_DIMENSION... per line
 *        calibrate record [CASE...]  run each case's original once (to be
 *                                    recorded by `mprof record`)
 *        calibrate time [CASE...]    time original and twins with CUDA
 *                                    events, best of 5 after a warm-up:
 *                                    "TIME CASE VARIANT MS" per line, VARIANT
 *                                    `original` or the dimension its fix is for
 *
 * Build: nvcc -O3 -arch=sm_90 -lineinfo calibrate.cu -lcublas -o calibrate
 *
 * SPDX-License-Identifier: MIT
 */
#define BOTTLENECKS_NO_MAIN
#include "bottlenecks.cu"

/* ---- the fixes ----------------------------------------------------------- */

/* bank_conflicts with the lanes of a warp on consecutive words: one bank
 * per lane, the same instructions. */
__global__ void bank_conflicts_padded(float *out, int iters) {
  __shared__ float tile[32 * 33 * 8];
  for (int i = threadIdx.x; i < 32 * 33 * 8; i += blockDim.x)
    tile[i] = i;
  __syncthreads();
  float acc = 0;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = 0; i < iters; i++) {
    int idx = (lane + (((i & 31) + warp) << 5)) & (32 * 33 * 8 - 1);
    acc += tile[idx];
    tile[idx] = acc * 0.5f;
  }
  if (acc == 12345.0f)
    out[0] = acc;
}

/* barrier_heavy synchronising less often: the same FMAs of its one
 * working warp, a barrier every 16 iterations instead of every one. (The
 * other half of the advice, the FMAs spread one per warp with a barrier
 * after each, measured 54% slower on the H100: the barrier, not the
 * imbalance, is what the kernel waits on.) */
__global__ void barrier_fewer(float *out, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) {
    if (threadIdx.x < 32)
      for (int k = 0; k < 16; k++)
        x = fmaf(x, 1.0001f, 1e-7f);
    if ((i & 15) == 15)
      __syncthreads();
  }
  if (x == 12345.0f)
    out[0] = x;
}

/* hot_atomics with the warp's adds summed first: one atomic per warp. */
__global__ void hot_atomics_warp(float *counter, int iters) {
  for (int i = 0; i < iters; i++)
    if ((threadIdx.x & 31) == 0)
      atomicAdd(counter, 32.0f);
}

/* icache_thrash's 12,288 FMAs per iteration as a loop the cache holds. */
__global__ void icache_loop(float *out, int iters, float seed) {
  float x = threadIdx.x + seed;
  for (int i = 0; i < iters; i++) {
    float y = seed + i * 1e-9f;
#pragma unroll 16
    for (int k = 0; k < 12288; k++) {
      x = fmaf(x, y, 1e-7f);
      y *= 1.00001f;
    }
  }
  if (x == 12345.0f)
    out[0] = x;
}

/* Launch-bound's fix: the launches' work in one launch. */
__global__ void tiny_fused(float *x, int launches) {
  if (threadIdx.x == 0)
    for (int r = 0; r < launches; r++)
      x[blockIdx.x] += 1.0f;
}

/* ---- kernels of their own -------------------------------------------------
 * Distinct names, so that one recording tells them apart. */

#define CHASE_MASK ((1u << 26) - 1) /* the cycle's 64M elements */

/* pointer_chase over a grid that fills the GPU: random 4-byte loads, each
 * in its own 32-byte sector, keep DRAM at its random-access roof. */
__global__ void pointer_chase_wide(const uint32_t *next, int steps,
                                   uint32_t *out) {
  uint32_t i = ((blockIdx.x * blockDim.x + threadIdx.x) * 7919u) & CHASE_MASK;
  for (int s = 0; s < steps; s++)
    i = next[i];
  if (i == 0xffffffffu)
    out[0] = i;
}

/* Its "fix" by latency hiding: four independent chains per thread, a
 * quarter of the steps each (the same loads, four times as many in
 * flight). */
__global__ void pointer_chase_wide4(const uint32_t *next, int steps,
                                    uint32_t *out) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t a = (t * 7919u) & CHASE_MASK, b = (a + 1) & CHASE_MASK,
           c = (a + 2) & CHASE_MASK, d = (a + 3) & CHASE_MASK;
  for (int s = 0; s < steps / 4; s++) {
    a = next[a];
    b = next[b];
    c = next[c];
    d = next[d];
  }
  if ((a ^ b ^ c ^ d) == 0xffffffffu)
    out[0] = a;
}

/* Two problems: bank conflicts (bank_conflicts' body) in a grid of 1.5
 * waves. */
__global__ void conflicts_and_tail(float *out, int iters) {
  __shared__ float tile[32 * 33 * 8];
  for (int i = threadIdx.x; i < 32 * 33 * 8; i += blockDim.x)
    tile[i] = i;
  __syncthreads();
  float acc = 0;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = 0; i < iters; i++) {
    int idx = ((lane * 32) + (i & 31) + warp) & (32 * 33 * 8 - 1);
    acc += tile[idx];
    tile[idx] = acc * 0.5f;
  }
  if (acc == 12345.0f)
    out[0] = acc;
}

/* Two problems: one warp of sixteen works between barriers
 * (barrier_heavy's body), in a grid of one block per SM where four fit. */
__global__ void barrier_and_grid(float *out, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) {
    if (threadIdx.x < 32)
      for (int k = 0; k < 16; k++)
        x = fmaf(x, 1.0001f, 1e-7f);
    __syncthreads();
  }
  if (x == 12345.0f)
    out[0] = x;
}

/* ---- the cases ------------------------------------------------------------ */

static float *scratch;     /* 64 floats */
static float *stream_a, *stream_b, *stream_c;
static const size_t stream_n = (size_t)64 << 20;
static float *smem_in;
static const size_t smem_n = (size_t)16 << 20;
static uint32_t *chase_next; /* a random cycle of 64M elements */
static float *tiny_x;
static int bank_blocks_per_sm;

#define SMEM_BIG (200 * 1024)

static void setup(void) {
  CHECK_CUDA(
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  CHECK_CUDA(cudaEventCreate(&ev0));
  CHECK_CUDA(cudaEventCreate(&ev1));
  CHECK_CUDA(cudaMalloc(&scratch, 64 * sizeof(float)));
  CHECK_CUDA(cudaMemset(scratch, 0, 64 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&stream_a, stream_n * 4));
  CHECK_CUDA(cudaMalloc(&stream_b, stream_n * 4));
  CHECK_CUDA(cudaMalloc(&stream_c, stream_n * 4));
  CHECK_CUDA(cudaMemset(stream_b, 0, stream_n * 4));
  CHECK_CUDA(cudaMemset(stream_c, 0, stream_n * 4));
  CHECK_CUDA(cudaMalloc(&smem_in, smem_n * 4));
  CHECK_CUDA(cudaMemset(smem_in, 0, smem_n * 4));
  CHECK_CUDA(cudaMalloc(&tiny_x, 4096));
  CHECK_CUDA(cudaMemset(tiny_x, 0, 4096));
  CHECK_CUDA(cudaFuncSetAttribute(
      smem_limited, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BIG));
  CHECK_CUDA(cudaFuncSetAttribute(
      one_block_tail, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BIG));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &bank_blocks_per_sm, conflicts_and_tail, 256, 0));
  if (bank_blocks_per_sm < 2)
    bank_blocks_per_sm = 2;
  /* Sattolo's shuffle: one cycle through every element. */
  const size_t n = (size_t)64 << 20;
  uint32_t *host = (uint32_t *)malloc(n * sizeof *host);
  if (!host) {
    fprintf(stderr, "calibrate: out of host memory\n");
    exit(1);
  }
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
  CHECK_CUDA(cudaMalloc(&chase_next, n * sizeof *chase_next));
  CHECK_CUDA(
      cudaMemcpy(chase_next, host, n * sizeof *host, cudaMemcpyHostToDevice));
  free(host);
}

/* The host work between tiny launches, as a framework's dispatcher does. */
static void host_work(void) {
  volatile float h = 0;
  for (int k = 0; k < 200; k++)
    h = h + k;
  sink_host += h;
}

#define TINY_LAUNCHES 5000

/* Each case: its original (as recorded) and, per dimension it plants, the
 * fix; both do the same total work. */
static void chase_orig(void) {
  pointer_chase<<<sm_count, 32>>>(chase_next, 4000, (uint32_t *)scratch);
}
static void chase_grid(void) {
  /* 32 warps per SM, a 32nd of the steps each (pointer_chase_wide: the
   * same loop, its start index kept inside the cycle) */
  pointer_chase_wide<<<sm_count * 32, 32>>>(chase_next, 4000 / 32,
                                            (uint32_t *)scratch);
}
static void wide_orig(void) {
  pointer_chase_wide<<<sm_count * 8, 256>>>(chase_next, 400,
                                            (uint32_t *)scratch);
}
static void wide_four(void) {
  pointer_chase_wide4<<<sm_count * 8, 256>>>(chase_next, 400,
                                             (uint32_t *)scratch);
}
static void dram_orig(void) {
  for (int r = 0; r < 10; r++)
    dram_stream<<<sm_count * 8, 256>>>(stream_a, stream_b, stream_c, stream_n,
                                       2.0f);
}
static void fma_chain_orig(void) {
  fma_chain_one_warp<<<sm_count, 32>>>(scratch, 1 << 20);
}
static void fma_chain_grid(void) {
  /* 32 warps per SM, a 32nd of the chain each */
  fma_chain_one_warp<<<sm_count * 8, 128>>>(scratch, (1 << 20) / 32);
}
static void fma_indep_orig(void) {
  for (int r = 0; r < 4; r++)
    fma_independent<<<sm_count * 16, 256>>>(scratch, 1 << 14);
}
static void bank_orig(void) {
  for (int r = 0; r < 4; r++)
    bank_conflicts<<<sm_count * 4, 256>>>(scratch, 1 << 11);
}
static void bank_padded(void) {
  for (int r = 0; r < 4; r++)
    bank_conflicts_padded<<<sm_count * 4, 256>>>(scratch, 1 << 11);
}
static void barrier_orig(void) {
  barrier_heavy<<<sm_count * 4, 512>>>(scratch, 1 << 15);
}
static void barrier_fixed(void) {
  barrier_fewer<<<sm_count * 4, 512>>>(scratch, 1 << 15);
}
static void atomics_orig(void) {
  hot_atomics<<<sm_count * 4, 256>>>(scratch, 32);
}
static void atomics_warp(void) {
  hot_atomics_warp<<<sm_count * 4, 256>>>(scratch, 32);
}
static void icache_orig(void) {
  for (int r = 0; r < 3; r++)
    icache_thrash<<<sm_count * 4, 256>>>(scratch, 4, 1.0f + r);
}
static void icache_fixed(void) {
  for (int r = 0; r < 3; r++)
    icache_loop<<<sm_count * 4, 256>>>(scratch, 4, 1.0f + r);
}
static void smem_orig(void) {
  smem_limited<<<sm_count * 4, 64, SMEM_BIG>>>(smem_in, scratch, smem_n, 4);
}
static void smem_fixed(void) {
  smem_limited<<<sm_count * 4, 64, 1024>>>(smem_in, scratch, smem_n, 4);
}
static void tail_orig(void) {
  one_block_tail<<<sm_count + 1, 1024, SMEM_BIG>>>(scratch, 1 << 15);
}
static void tail_fixed(void) {
  /* whole waves: the same block-iterations over sm_count blocks */
  one_block_tail<<<sm_count, 1024, SMEM_BIG>>>(
      scratch, (int)((1ll << 15) * (sm_count + 1) / sm_count));
}
static void tiny_orig(void) {
  for (int r = 0; r < TINY_LAUNCHES; r++) {
    tiny_kernel<<<1, 32>>>(tiny_x);
    host_work();
  }
}
static void tiny_fixed(void) {
  for (int r = 0; r < TINY_LAUNCHES; r++)
    host_work();
  tiny_fused<<<1, 32>>>(tiny_x, TINY_LAUNCHES);
}
static void ct_orig(void) {
  /* one and a half waves */
  int wave = sm_count * bank_blocks_per_sm;
  for (int r = 0; r < 4; r++)
    conflicts_and_tail<<<wave + wave / 2, 256>>>(scratch, 1 << 11);
}
static void ct_shared(void) {
  int wave = sm_count * bank_blocks_per_sm;
  for (int r = 0; r < 4; r++)
    bank_conflicts_padded<<<wave + wave / 2, 256>>>(scratch, 1 << 11);
}
static void ct_tail(void) {
  int wave = sm_count * bank_blocks_per_sm;
  /* one wave, each block half as much work again */
  for (int r = 0; r < 4; r++)
    conflicts_and_tail<<<wave, 256>>>(
        scratch, (int)((1ll << 11) * (wave + wave / 2) / wave));
}
static void bg_orig(void) { barrier_and_grid<<<sm_count, 512>>>(scratch, 1 << 15); }
static void bg_sync(void) { barrier_fewer<<<sm_count, 512>>>(scratch, 1 << 15); }
static void bg_grid(void) {
  barrier_and_grid<<<sm_count * 4, 512>>>(scratch, (1 << 15) / 4);
}

typedef void (*run_fn)(void);
typedef struct fix {
  const char *dimension; /* the summary's dimension key the fix is for */
  run_fn run;
} fix;
typedef struct calib_case {
  const char *name; /* the recorded kernel */
  run_fn original;
  fix fixes[2];
} calib_case;

static const calib_case cases[] = {
    {"pointer_chase", chase_orig, {{"tail_effect", chase_grid}}},
    {"pointer_chase_wide", wide_orig, {{"memory_latency", wide_four}}},
    {"dram_stream", dram_orig, {{NULL, NULL}}},
    {"fma_chain_one_warp", fma_chain_orig, {{"tail_effect", fma_chain_grid}}},
    {"fma_independent", fma_indep_orig, {{NULL, NULL}}},
    {"bank_conflicts", bank_orig, {{"shared_memory", bank_padded}}},
    {"barrier_heavy", barrier_orig, {{"synchronisation", barrier_fixed}}},
    {"hot_atomics", atomics_orig, {{"memory_throughput", atomics_warp}}},
    {"icache_thrash", icache_orig, {{"instruction_fetch", icache_fixed}}},
    {"smem_limited", smem_orig, {{"occupancy", smem_fixed}}},
    {"one_block_tail", tail_orig, {{"tail_effect", tail_fixed}}},
    {"tiny_kernel", tiny_orig, {{"launch_overhead", tiny_fixed}}},
    {"conflicts_and_tail",
     ct_orig,
     {{"shared_memory", ct_shared}, {"tail_effect", ct_tail}}},
    {"barrier_and_grid",
     bg_orig,
     {{"synchronisation", bg_sync}, {"tail_effect", bg_grid}}},
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* Best of 5 CUDA-event timings of @p run, after one untimed run. */
static float best_ms(run_fn run) {
  run();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaGetLastError());
  float best = -1;
  for (int rep = 0; rep < 5; rep++) {
    CHECK_CUDA(cudaEventRecord(ev0));
    run();
    CHECK_CUDA(cudaEventRecord(ev1));
    CHECK_CUDA(cudaEventSynchronize(ev1));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev0, ev1));
    if (best < 0 || ms < best)
      best = ms;
  }
  return best;
}

static const calib_case *find_case(const char *name) {
  for (size_t i = 0; i < CASE_COUNT; i++)
    if (!strcmp(cases[i].name, name))
      return &cases[i];
  fprintf(stderr, "calibrate: unknown case '%s' (calibrate list names them)\n",
          name);
  exit(2);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "list")) {
    for (size_t i = 0; i < CASE_COUNT; i++) {
      printf("%s", cases[i].name);
      for (int f = 0; f < 2 && cases[i].fixes[f].run; f++)
        printf(" %s", cases[i].fixes[f].dimension);
      printf("\n");
    }
    return 0;
  }
  if (strcmp(mode, "record") && strcmp(mode, "time")) {
    fprintf(stderr, "usage: calibrate list|record|time [CASE...]\n");
    return 2;
  }
  int count = argc > 2 ? argc - 2 : (int)CASE_COUNT;
  const calib_case **chosen =
      (const calib_case **)malloc((size_t)count * sizeof *chosen);
  for (int i = 0; i < count; i++)
    chosen[i] = argc > 2 ? find_case(argv[i + 2]) : &cases[i];
  setup();
  for (int i = 0; i < count; i++) {
    const calib_case *c = chosen[i];
    if (!strcmp(mode, "record")) {
      c->original();
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CUDA(cudaGetLastError());
      printf("RAN %s\n", c->name);
      continue;
    }
    printf("TIME %s original %.4f\n", c->name, best_ms(c->original));
    for (int f = 0; f < 2 && c->fixes[f].run; f++)
      printf("TIME %s %s %.4f\n", c->name, c->fixes[f].dimension,
             best_ms(c->fixes[f].run));
    fflush(stdout);
  }
  free(chosen);
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("RESULT ok\n");
  return 0;
}
