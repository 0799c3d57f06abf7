/*
 * mprof — synthetic trace generator.
 *
 * Shapes the data like a real capture on an H200: kernels with C++ mangled
 * names, a few launch configurations each, log-normal-ish durations, small
 * idle gaps between launches on a stream, memcpys at the start, and PC
 * samples whose counts follow each kernel's GPU time and stall profile.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/processes.h"
#include "internal.h"
#include "mprof/sidecar.h"
#include "mprof/sass.h"
#include "mprof/reasons.h"
#include "mprof/synth.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

/* The generator writes every reason of mprof/reasons.h, in table order, as
 * CUPTI indices 2r (plain) and 2r + 1 (_not_issued). */
#define STALL_MAX 32
static size_t stall_plain(void) {
  size_t n = mprof_stall_reason_info_count();
  return n < STALL_MAX ? n : STALL_MAX;
}

/* The table index of reason @p short_name. */
static size_t stall_index(const char *short_name) {
  return (size_t)(mprof_stall_reason_info_find(short_name) -
                  mprof_stall_reason_info_at(0));
}

typedef struct synth_kernel {
  const char *mangled;
  char generated_name[64];
  uint32_t registers;
  uint32_t static_shared;
  uint32_t block;
  uint32_t grid;
  uint32_t dynamic_shared;
  double mean_ns;
  uint32_t scenario;
} synth_kernel;

static const char *const kernel_names[] = {
    "_Z10gemm_tiledILi64ELi64ELi8EEvPKfS1_Pfiii",
    "_Z13layernorm_fwdPKfS0_S0_Pfii",
    "_Z17attention_softmaxPKfPfiif",
    "_Z13gelu_bias_fwdPfPKfi",
    "_Z12residual_addPfPKfi",
    "_Z13pointer_chasePKjPjii",
    "_Z15reduce_rows_sumPKfPfii",
    "_Z9saxpy_fwdfPKfPfi",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_"
    "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "_Z19transpose_coalescedPfPKfii"};
#define KERNEL_NAME_COUNT (sizeof kernel_names / sizeof kernel_names[0])

/* splitmix64: tiny, fast and good enough for reproducible synthetic data. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *state) {
  return (double)(next_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

MPROF__VERSIONS(synth_options, "synth options",
                MPROF__END_OF(mprof_synth_options, scenario),
                MPROF__END_OF(mprof_synth_options, timing_seed),
                MPROF__END_OF(mprof_synth_options, span_nested),
                MPROF__END_OF(mprof_synth_options, slow_devices),
                MPROF__END_OF(mprof_synth_options, meta_count),
                MPROF__END_OF(mprof_synth_options, step_flags));

int mprof_synth_options_init(mprof_synth_options *opts, unsigned version) {
  mprof_synth_options init = MPROF_SYNTH_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &synth_options);
}

/* Blocks of @p k that fit on one synthetic H200 SM (cc 9.0: 64 warps, 32
 * blocks, 64K registers in 4 sub-partitions allocated per warp in units of
 * 256, 228 KiB shared memory with 1 KiB reserved per block). The diagnosis
 * computes the same from the trace; this copy only sizes grids to whole
 * waves so that no tail effect is planted by accident. */
static uint32_t synth_blocks_per_sm(const synth_kernel *k) {
  uint32_t warps = (k->block + 31) / 32;
  uint32_t by_warps = 64 / warps;
  uint32_t regs_per_warp = (k->registers * 32 + 255) / 256 * 256;
  uint32_t by_regs = (16384 / regs_per_warp) * 4 / warps;
  uint32_t smem =
      (k->static_shared + k->dynamic_shared + 1024 + 127) / 128 * 128;
  uint32_t by_smem = 233472 / smem;
  uint32_t blocks = 32;
  if (by_warps < blocks)
    blocks = by_warps;
  if (by_regs < blocks)
    blocks = by_regs;
  if (by_smem < blocks)
    blocks = by_smem;
  return blocks ? blocks : 1;
}

static void make_kernel(synth_kernel *k, uint32_t index, uint32_t scenario,
                        uint64_t *rng) {
  memset(k, 0, sizeof *k);
  if (index < KERNEL_NAME_COUNT) {
    k->mangled = kernel_names[index];
  } else {
    snprintf(k->generated_name, sizeof k->generated_name,
             "_Z12synth_kernelILi%uEEvPfi", index);
    k->mangled = k->generated_name;
  }
  k->scenario = scenario != MPROF_SYNTH_MIXED
                    ? scenario
                    : 1 + (uint32_t)(next_random(rng) % 3);
  /* 32..64 registers, <= 24 KiB shared, 128..512 threads: at least 50%
   * theoretical occupancy (see synth_blocks_per_sm). */
  k->registers = 32 + 8 * (uint32_t)(next_random(rng) % 5);
  k->static_shared = (uint32_t)(next_random(rng) % 4) * 8192;
  k->block = 128u << (next_random(rng) % 3);
  uint32_t waves = 1u + (uint32_t)(next_random(rng) % 16);
  k->mean_ns = 4000.0 + uniform(rng) * 200000.0;
  k->grid = 132u * synth_blocks_per_sm(k) * waves;
  switch (k->scenario) {
  case MPROF_SYNTH_OCCUPANCY:
    /* Fat threads: 255 registers take 8192 of a sub-partition's 16384
     * registers per warp, so 8 warps (one 256-thread block) fit per SM:
     * 12.5% occupancy, limited by registers. 96 KiB of dynamic shared
     * memory alone would allow two. Four blocks per SM or more in the
     * grid, so that more warps are what the fix (fewer registers) brings:
     * with one block per SM, fewer registers would add none. */
    k->registers = 255;
    k->block = 256;
    k->static_shared = 0;
    k->dynamic_shared = 98304;
    k->grid = 132u * 4u * waves;
    break;
  case MPROF_SYNTH_TAIL:
    /* One wave and a bit: 133 blocks on 132 SMs, one 1024-thread block of
     * 64-register threads per SM (all 65536 registers). */
    k->grid = 133;
    k->block = 1024;
    k->registers = 64;
    k->static_shared = 0;
    break;
  case MPROF_SYNTH_LAUNCH_GAPS: k->mean_ns = 3000.0; break;
  default: break;
  }
}

/* Stall weights of a kernel by scenario: where its warps wait. */
static void stall_profile(double *weights, uint32_t scenario) {
  for (size_t i = 0; i < stall_plain(); i++)
    weights[i] = 0.01;
  weights[stall_index("selected")] = 0.08;
  weights[stall_index("not_selected")] = 0.04;
  weights[stall_index("wait")] = 0.08;
  switch (scenario) {
  case MPROF_SYNTH_MEMORY_LATENCY:
    weights[stall_index("long_scoreboard")] = 0.70;
    weights[stall_index("lg_throttle")] = 0.05;
    break;
  case MPROF_SYNTH_COMPUTE:
    weights[stall_index("math_pipe_throttle")] = 0.45;
    weights[stall_index("not_selected")] = 0.20;
    weights[stall_index("selected")] = 0.15;
    break;
  case MPROF_SYNTH_BARRIER:
    weights[stall_index("barrier")] = 0.65;
    weights[stall_index("short_scoreboard")] = 0.05;
    break;
  default:
    weights[stall_index("long_scoreboard")] = 0.20;
    weights[stall_index("mio_throttle")] = 0.10;
    weights[stall_index("short_scoreboard")] = 0.10;
    break;
  }
}

/* ---- activity spans ----------------------------------------------------- */

/* The regions of the synthetic spans: three phases, and the instructions
 * inside them when nested. */
enum {
  REGION_LOAD,
  REGION_MMA,
  REGION_STORE,
  REGION_LDG,
  REGION_HMMA,
  REGION_STG,
  REGION_COUNT
};

static const struct {
  const char *name;
  uint32_t role;
  uint32_t color;
} span_regions[REGION_COUNT] = {
    {"load", MPROF_ROLE_LOADER, 0xff4e79a7},
    {"mma", MPROF_ROLE_CONSUMER, 0xff59a14f},
    {"store", MPROF_ROLE_STORER, 0xffe15759},
    {"LDG.E.128", MPROF_ROLE_LOADER, 0xff76b7b2},
    {"HMMA.16816.F32", MPROF_ROLE_CONSUMER, 0xff8cd17d},
    {"STG.E.128", MPROF_ROLE_STORER, 0xffff9da7}};

#define SPAN_ITERATIONS 4 /* load + mma phases per block before its store */
#define SPAN_SLOTS 2      /* blocks resident per SM at a time */

typedef struct span_plan {
  uint64_t per_launch; /* spans wanted per launch of kernel 0 */
  uint32_t sms, warps, nested;
  double imbalance;
  uint32_t region[REGION_COUNT];
} span_plan;

static int span_plan_init(span_plan *p, mprof_writer *w,
                          const mprof_synth_options *opts, uint64_t launches) {
  p->sms = opts->span_sms ? opts->span_sms : 132;
  p->warps = opts->span_warps;
  p->nested = opts->span_nested ? 1 : 0;
  p->imbalance = opts->span_imbalance;
  p->per_launch = launches ? (opts->spans + launches - 1) / launches : 0;
  uint32_t last = p->nested ? REGION_COUNT : REGION_LDG;
  for (uint32_t r = 0; r < last; r++) {
    mprof_region_record rec = {mprof_writer_string(w, span_regions[r].name),
                               span_regions[r].color, span_regions[r].role, 0};
    int rc = mprof_writer_append(w, &p->region[r], MPROF_SECTION_REGIONS, &rec);
    if (rc)
      return rc;
  }
  return 0;
}

static int put_span(mprof_writer *w, uint32_t launch, uint32_t sm,
                    uint32_t block, uint32_t warp, uint32_t region,
                    uint64_t start, uint64_t end, uint64_t payload) {
  mprof_span_record sp;
  memset(&sp, 0, sizeof sp);
  sp.start = start;
  sp.end = end > start ? end : start + 1;
  sp.launch = launch;
  sp.sm = sm;
  sp.block = block;
  sp.warp = warp;
  sp.region = region;
  sp.flags = warp != MPROF_INDEX_NONE ? MPROF_SPAN_FLAG_WARP : 0;
  sp.payload = payload;
  return mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
}

/* One phase [start, end) of a recorder, with its instructions inside. */
static int put_phase(const span_plan *p, mprof_writer *w, uint32_t launch,
                     uint32_t sm, uint32_t block, uint32_t warp, int phase,
                     uint64_t start, uint64_t end, uint64_t payload) {
  int rc = put_span(w, launch, sm, block, warp, p->region[phase], start, end,
                    payload);
  if (rc || !p->nested || end - start < 8)
    return rc;
  /* Three instructions spread over the phase, a little apart. */
  uint64_t step = (end - start) / 3;
  for (uint64_t i = 0; i < 3 && !rc; i++) {
    uint64_t a = start + i * step + step / 8;
    uint64_t b = start + (i + 1) * step - step / 8;
    rc = put_span(w, launch, sm, block, warp, p->region[REGION_LDG + phase], a,
                  b, payload * 4 + i);
  }
  return rc;
}

/* The spans of one launch of kernel 0 on [start, end). */
static int write_spans(const span_plan *p, mprof_writer *w, uint32_t launch,
                       uint64_t start, uint64_t end, uint64_t *rng) {
  uint32_t recorders = p->warps ? p->warps : 1;
  uint64_t per_phase = p->nested ? 4 : 1;
  uint64_t per_block =
      recorders * (2 * SPAN_ITERATIONS + 1) * per_phase; /* spans */
  uint64_t blocks = (p->per_launch + per_block - 1) / per_block;
  /* Whole rounds: every slot of every SM runs as many blocks, so that
   * only span_imbalance makes SMs differ. */
  uint64_t min_blocks = (uint64_t)p->sms * SPAN_SLOTS;
  uint64_t per_slot = (blocks + min_blocks - 1) / min_blocks;
  if (!per_slot)
    per_slot = 1;
  blocks = per_slot * min_blocks;
  /* Blocks go round-robin over SMs and slots; each slot runs its blocks
   * back to back. */
  double duration = (double)(end - start) * 0.96;
  double base = duration / ((double)per_slot * (1.0 + p->imbalance));
  int rc = 0;
  for (uint64_t b = 0; b < blocks && !rc; b++) {
    uint32_t sm = (uint32_t)(b % p->sms);
    uint64_t slot_seq = b / min_blocks; /* position in its slot's run */
    double factor =
        1.0 + (p->sms > 1 ? p->imbalance * sm / (double)(p->sms - 1) : 0.0);
    double block_ns = base * factor;
    double t0 = (double)start + (double)(end - start) * 0.02 +
                (double)slot_seq * block_ns;
    /* Phases: 4 x (load 30%, mma 55%) of 85%, store 15%. */
    double load = block_ns * 0.85 * 0.35 / SPAN_ITERATIONS;
    double mma = block_ns * 0.85 * 0.65 / SPAN_ITERATIONS;
    for (uint32_t r = 0; r < recorders && !rc; r++) {
      uint32_t warp = p->warps ? r : MPROF_INDEX_NONE;
      /* Warps start a few ns apart and jitter a little. */
      double t = t0 + (p->warps ? 3.0 * r : 0.0);
      double jitter = 0.97 + 0.03 * uniform(rng);
      for (uint32_t i = 0; i < SPAN_ITERATIONS && !rc; i++) {
        uint64_t a = (uint64_t)t, m = (uint64_t)(t + load * jitter);
        uint64_t e = (uint64_t)(t + (load + mma) * jitter);
        rc = put_phase(p, w, launch, sm, (uint32_t)b, warp, REGION_LOAD, a, m,
                       i);
        if (!rc)
          rc = put_phase(p, w, launch, sm, (uint32_t)b, warp, REGION_MMA, m, e,
                         i);
        t += load + mma;
      }
      if (!rc)
        rc = put_phase(p, w, launch, sm, (uint32_t)b, warp, REGION_STORE,
                       (uint64_t)t, (uint64_t)(t0 + block_ns * 0.99),
                       SPAN_ITERATIONS);
    }
  }
  return rc;
}

/* Whether the planted regression (a slowdown, a slow scenario) applies to
 * kernel @p k on device @p d. */
static int slowed(const mprof_synth_options *opts, uint32_t k, uint32_t d) {
  uint64_t kernels = opts->slow_kernels ? opts->slow_kernels : 1;
  return (opts->slowdown > 0.0 || opts->slow_scenario) &&
         ((kernels >> k) & 1) &&
         (!opts->slow_devices || ((opts->slow_devices >> d) & 1));
}

/* How many of the launches stream @p s of @p streams issues. */
static uint64_t stream_launches(const mprof_synth_options *opts, uint32_t s,
                                uint32_t streams) {
  return opts->launches / streams + (s < opts->launches % streams ? 1 : 0);
}

/* A hot loop: of @p n PCs, those near the middle carry most samples. */
static double pc_weight(uint32_t p, uint32_t n) {
  return 1.0 / (1.0 + fabs((double)p - n / 2.0));
}

/* ---- training steps (version 6) ------------------------------------------ */

#define STEP_NCCL_NS 40000     /* the all-reduce that closes a step */
#define STEP_IDLE_NS 30000     /* GPU idle between steps, host in no call */
#define STEP_CALL_LEAD 1200    /* a launch's call starts this long before it */
#define STEP_CALL_NS 1000      /* and lasts this long */
#define STEP_MAIN_THREAD 1     /* the step ranges and the NCCL launches */
#define STEP_STREAM_THREAD 100 /* + the stream: its launches' calls */
static const char nccl_kernel_name[] =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

typedef struct step_launch {
  uint32_t kernel;
  uint32_t duration, gap;
} step_launch;

static int put_call(mprof_writer *w, uint64_t start, uint32_t correlation,
                    uint32_t thread, uint32_t name) {
  mprof_api_call_record c;
  memset(&c, 0, sizeof c);
  c.start = start;
  c.end = start + STEP_CALL_NS;
  c.correlation_id = correlation;
  c.thread_id = thread;
  c.name = name;
  c.kind = MPROF_API_RUNTIME;
  return mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c);
}

/* The launches of every stream in opts->steps steps (see synth.h). Every
 * launch is drawn first, in stream order, so that each step can start on
 * every stream once the slowest stream finished the step before. */
static int
write_step_launches(mprof_writer *w, const mprof_synth_options *opts,
                    const synth_kernel *kernels, const uint32_t *device_index,
                    uint32_t shape_index[16][64], const uint32_t *nccl_shape,
                    double kernel_time[16][64], uint64_t *rng, uint64_t *trng) {
  uint32_t total_streams = opts->streams * opts->devices;
  uint64_t per_stream = opts->launches / total_streams;
  uint64_t per_step = per_stream / opts->steps;
  if (!per_step)
    return mprof__error_set(MPROF_EINVAL,
                            "synth: %llu launches cannot fill %u steps on %u "
                            "streams; ask for more launches or fewer steps",
                            (unsigned long long)opts->launches, opts->steps,
                            total_streams);
  step_launch *drawn =
      (step_launch *)malloc(per_stream * total_streams * sizeof *drawn);
  uint64_t *step_start =
      (uint64_t *)calloc((size_t)opts->steps + 1, sizeof *step_start);
  uint64_t *step_busy = (uint64_t *)calloc(opts->steps, sizeof *step_busy);
  uint32_t *stream_index =
      (uint32_t *)malloc(total_streams * sizeof *stream_index);
  int rc = drawn && step_start && step_busy && stream_index
               ? MPROF_OK
               : mprof__error_set(MPROF_ENOMEM, "out of memory");
  /* Draw: one kernel order per stream, the same in every step (the last
   * step also takes the remainder). */
  for (uint32_t s = 0; !rc && s < total_streams; s++) {
    uint32_t d = s / opts->streams;
    step_launch *sl = drawn + (size_t)s * per_stream;
    for (uint64_t i = 0; i < per_stream; i++) {
      uint64_t step =
          i / per_step < opts->steps ? i / per_step : opts->steps - 1;
      uint32_t k = i < per_step || i >= per_step * opts->steps
                       ? (uint32_t)(next_random(rng) % opts->kernels)
                       : sl[i % per_step].kernel;
      double jitter = 0.85 + 0.3 * uniform(trng);
      int slow_here = slowed(opts, k, d) &&
                      (!opts->slow_step || opts->slow_step == step + 1);
      double slow = slow_here ? 1.0 + opts->slowdown : 1.0;
      sl[i].kernel = k;
      sl[i].duration = (uint32_t)(kernels[k].mean_ns * jitter * slow);
      sl[i].gap = kernels[k].scenario == MPROF_SYNTH_LAUNCH_GAPS
                      ? 20000 + (uint32_t)(next_random(trng) % 5000)
                      : 1500 + (uint32_t)(next_random(trng) % 2500);
    }
  }
  /* When each step starts: after the slowest stream's part of the step
   * before, its all-reduce and the idle gap. */
  step_start[0] = 1700000000000000000ull + 200000;
  for (uint32_t k = 0; !rc && k < opts->steps; k++) {
    uint64_t longest = 0;
    for (uint32_t s = 0; s < total_streams; s++) {
      const step_launch *sl = drawn + (size_t)s * per_stream;
      uint64_t first = (uint64_t)k * per_step;
      uint64_t last = k + 1 == opts->steps ? per_stream : first + per_step;
      uint64_t t = 1000ull * (s % opts->streams);
      for (uint64_t i = first; i < last; i++)
        t += sl[i].duration + (i + 1 < last ? sl[i].gap : 0);
      longest = t > longest ? t : longest;
    }
    step_busy[k] = longest;
    step_start[k + 1] =
        step_start[k] + longest + 3000 + STEP_NCCL_NS + STEP_IDLE_NS;
  }
  uint32_t launch_name = mprof_writer_string(w, "cudaLaunchKernel");
  uint32_t correlation = 1;
  for (uint32_t s = 0; !rc && s < total_streams; s++) {
    uint32_t d = s / opts->streams;
    mprof_stream_record sr = {device_index[d], 1 + d, 7 + (s % opts->streams),
                              0};
    rc = mprof_writer_intern(w, &stream_index[s], MPROF_SECTION_STREAMS, &sr);
    if (!rc && s == 0) {
      mprof_memop_record mo;
      memset(&mo, 0, sizeof mo);
      mo.start = 1700000000000000000ull;
      mo.end = mo.start + 180000;
      mo.bytes = 64ull << 20;
      mo.stream = stream_index[s];
      mo.correlation_id = correlation++;
      mo.kind = MPROF_MEMOP_MEMCPY;
      mo.copy_kind = MPROF_COPY_HTOD;
      mo.src_device = MPROF_INDEX_NONE;
      mo.dst_device = 0;
      rc = mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo);
    }
    const step_launch *sl = drawn + (size_t)s * per_stream;
    int first_stream = s % opts->streams == 0;
    for (uint32_t k = 0; !rc && k < opts->steps; k++) {
      uint64_t first = (uint64_t)k * per_step;
      uint64_t last = k + 1 == opts->steps ? per_stream : first + per_step;
      uint64_t t = step_start[k] + 1000ull * (s % opts->streams);
      for (uint64_t i = first; !rc && i < last; i++) {
        mprof_launch_record l;
        memset(&l, 0, sizeof l);
        l.start = t;
        l.end = t + sl[i].duration;
        l.shape = shape_index[d][sl[i].kernel];
        l.stream = stream_index[s];
        l.correlation_id = correlation++;
        rc = mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l);
        if (!rc)
          rc = put_call(w, t - STEP_CALL_LEAD, l.correlation_id,
                        STEP_STREAM_THREAD + s, launch_name);
        kernel_time[d][sl[i].kernel] += (double)sl[i].duration;
        t = l.end + sl[i].gap;
      }
      if (rc || !first_stream)
        continue;
      /* The all-reduce: every rank's step ends with it. */
      mprof_launch_record l;
      memset(&l, 0, sizeof l);
      l.start = step_start[k] + step_busy[k] + 3000;
      l.end = l.start + STEP_NCCL_NS;
      l.shape = nccl_shape[d];
      l.stream = stream_index[s];
      l.correlation_id = correlation++;
      rc = mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l);
      if (!rc)
        rc = put_call(w, l.start - STEP_CALL_LEAD, l.correlation_id,
                      STEP_MAIN_THREAD, launch_name);
    }
  }
  /* The steps' NVTX ranges, from before the first call to after the
   * all-reduce. */
  uint32_t domain = mprof_writer_string(w, "");
  for (uint32_t k = 0; !rc && k < opts->steps &&
                       !(opts->step_flags & MPROF_SYNTH_STEPS_UNMARKED);
       k++) {
    char name[32];
    snprintf(name, sizeof name, "step %u", k);
    mprof_range_record r;
    memset(&r, 0, sizeof r);
    r.start = step_start[k] - 10000;
    r.end = step_start[k] + step_busy[k] + 3000 + STEP_NCCL_NS + 2000;
    r.name = mprof_writer_string(w, name);
    r.domain = domain;
    r.thread_id = STEP_MAIN_THREAD;
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r);
  }
  free(drawn);
  free(step_start);
  free(step_busy);
  free(stream_index);
  return rc;
}

#define TRY(expr)                                                              \
  do {                                                                         \
    int rc_ = (expr);                                                          \
    if (rc_) {                                                                 \
      mprof_writer_abort(w);                                                   \
      return rc_;                                                              \
    }                                                                          \
  } while (0)

int mprof_synth_write(const char *path, const mprof_synth_options *opts) {
  mprof_synth_options defaults = MPROF_SYNTH_OPTIONS_INIT;
  if (opts) {
    /* An older struct is shorter: copy only that much. */
    size_t size = mprof__version_size(&synth_options, opts->version);
    if (!size)
      return MPROF_EVERSION;
    memcpy(&defaults, opts, size);
    defaults.version = MPROF_SYNTH_OPTIONS_VERSION;
  }
  opts = &defaults;
  if (!(opts->slowdown >= 0.0 && opts->slowdown <= 100.0) ||
      opts->slow_scenario > MPROF_SYNTH_LAUNCH_GAPS ||
      opts->scenario > MPROF_SYNTH_LAUNCH_GAPS)
    return mprof__error_set(MPROF_EINVAL,
                            "synth: slowdown must be 0..100 and scenarios "
                            "0..%d",
                            MPROF_SYNTH_LAUNCH_GAPS);
  if (!path || !opts->kernels || !opts->streams || !opts->devices ||
      opts->kernels > 64 || opts->devices > 16 || opts->streams > 1024)
    return mprof__error_set(MPROF_EINVAL,
                            "synth: kernels must be 1..64, streams 1..1024, "
                            "devices 1..16");
  if (opts->slow_devices >> opts->devices)
    return mprof__error_set(MPROF_EINVAL,
                            "synth: a slowed device is not among the %u "
                            "devices",
                            opts->devices);
  if (opts->spans > 100000000ull || opts->span_warps > 32 ||
      opts->span_sms > 132 ||
      !(opts->span_imbalance >= 0.0 && opts->span_imbalance <= 100.0))
    return mprof__error_set(MPROF_EINVAL,
                            "synth: spans must be at most 100000000, span "
                            "warps 0..32, span SMs 0..132 and the imbalance "
                            "0..100");
  if (opts->steps &&
      (opts->spans || opts->steps > 1000000 || opts->slow_step > opts->steps ||
       (opts->step_flags & ~MPROF_SYNTH_STEPS_UNMARKED)))
    return mprof__error_set(MPROF_EINVAL,
                            "synth: steps must be 1..1000000, the slow step "
                            "one of them, and steps go without spans");
  if (!opts->steps && (opts->slow_step || opts->step_flags))
    return mprof__error_set(MPROF_EINVAL,
                            "synth: a slow step or step flags need steps");
  mprof_writer *w;
  int rc = mprof_writer_open(&w, path, NULL);
  if (rc)
    return rc;
  uint64_t rng = opts->seed * 0x2545f4914f6cdd1dull + 1;
  /* Jitter, gaps and sample noise come from a second stream, so that a
   * timing seed changes them alone: the same kernels launched in the same
   * order, like a second run of the same program. */
  uint64_t timing_rng = (opts->timing_seed ? opts->timing_seed : opts->seed) *
                            0x9e3779b97f4a7c15ull +
                        7;
  uint64_t *trng = &timing_rng;
  char text[64];
  TRY(mprof_writer_meta(w, "tool", "mprof synth"));
  snprintf(text, sizeof text, "%llu", (unsigned long long)opts->seed);
  TRY(mprof_writer_meta(w, "synth.seed", text));
  TRY(mprof_writer_meta(w, "capture.mode", "synthetic"));
  TRY(mprof_writer_meta(w, "pc.mode",
                        opts->pcs_per_kernel ? "continuous" : "off"));
  TRY(mprof_writer_meta(w, "pc.period", "14"));
  TRY(mprof_writer_meta(w, "clock", "synthetic"));
  if (opts->steps)
    TRY(mprof_writer_meta(w, "api_calls", "launches_copies_memsets"));
  for (size_t i = 0; opts->version >= 5 && i < opts->meta_count; i++)
    TRY(mprof_writer_meta(w, opts->meta[2 * i], opts->meta[2 * i + 1]));

  uint32_t device_index[16];
  for (uint32_t d = 0; d < opts->devices; d++) {
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    dev.id = d;
    dev.name = mprof_writer_string(w, "NVIDIA H200 (synthetic)");
    dev.cc_major = 9;
    dev.cc_minor = 0;
    dev.sm_count = 132;
    dev.warp_size = 32;
    dev.max_threads_per_block = 1024;
    dev.max_threads_per_sm = 2048;
    dev.max_blocks_per_sm = 32;
    dev.max_warps_per_sm = 64;
    dev.max_regs_per_block = 65536;
    dev.max_regs_per_sm = 65536;
    dev.max_shared_per_block = 232448;
    dev.max_shared_per_sm = 233472;
    dev.core_clock_khz = 1980000;
    dev.memory_clock_khz = 2619000;
    dev.memory_bus_width = 6144;
    dev.l2_size = 52428800;
    dev.global_memory = 150ull << 30;
    dev.uuid_lo = d + 1;
    TRY(mprof_writer_intern(w, &device_index[d], MPROF_SECTION_DEVICES, &dev));
    if (opts->pcs_per_kernel) {
      for (uint32_t r = 0; r < 2 * stall_plain(); r++) {
        const mprof_stall_reason_info *row = mprof_stall_reason_info_at(r / 2);
        const char *name = (r & 1) ? row->not_issued : row->name;
        mprof_stall_reason_record sr = {device_index[d], r,
                                        mprof_writer_string(w, name), 0};
        TRY(mprof_writer_append(w, NULL, MPROF_SECTION_STALL_REASONS, &sr));
      }
    }
  }

  synth_kernel kernels[64];
  uint32_t shape_index[16][64];
  for (uint32_t k = 0; k < opts->kernels; k++)
    make_kernel(&kernels[k], k, opts->scenario, &rng);
  for (uint32_t d = 0; d < opts->devices; d++) {
    for (uint32_t k = 0; k < opts->kernels; k++) {
      mprof_kernel_record kr;
      memset(&kr, 0, sizeof kr);
      kr.mangled_name = mprof_writer_string(w, kernels[k].mangled);
      /* Like `mprof record`, which demangles after the capture. */
      char *demangled = NULL;
      if (mprof_sass_demangle(&demangled, kernels[k].mangled) == 0)
        kr.demangled_name = mprof_writer_string(w, demangled);
      free(demangled);
      kr.cubin_crc = 0x5eed0000ull + (k < 8 ? 1 : 2);
      kr.function_index = 10 + k;
      kr.device = device_index[d];
      kr.registers = kernels[k].registers;
      kr.static_shared = kernels[k].static_shared;
      uint32_t kernel_index;
      TRY(mprof_writer_intern(w, &kernel_index, MPROF_SECTION_KERNELS, &kr));
      mprof_shape_record sh;
      memset(&sh, 0, sizeof sh);
      sh.kernel = kernel_index;
      sh.grid[0] = kernels[k].grid;
      sh.grid[1] = sh.grid[2] = 1;
      sh.block[0] = kernels[k].block;
      sh.block[1] = sh.block[2] = 1;
      sh.dynamic_shared = kernels[k].dynamic_shared;
      TRY(mprof_writer_intern(w, &shape_index[d][k], MPROF_SECTION_SHAPES,
                              &sh));
    }
  }

  /* With steps, each device's NCCL all-reduce kernel. */
  uint32_t nccl_shape[16];
  for (uint32_t d = 0; opts->steps && d < opts->devices; d++) {
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = mprof_writer_string(w, nccl_kernel_name);
    kr.cubin_crc = 0x5eed0003ull;
    kr.function_index = 99;
    kr.device = device_index[d];
    kr.registers = 96;
    uint32_t kernel_index;
    TRY(mprof_writer_intern(w, &kernel_index, MPROF_SECTION_KERNELS, &kr));
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = kernel_index;
    sh.grid[0] = 24;
    sh.grid[1] = sh.grid[2] = 1;
    sh.block[0] = 512;
    sh.block[1] = sh.block[2] = 1;
    TRY(mprof_writer_intern(w, &nccl_shape[d], MPROF_SECTION_SHAPES, &sh));
  }

  /* Launches, stream by stream so the file comes out sorted. */
  uint64_t base = 1700000000000000000ull;
  uint32_t total_streams = opts->streams * opts->devices;
  double kernel_time[16][64] = {{0}}; /* ns per device and kernel */
  uint32_t correlation = 1;
  span_plan plan;
  memset(&plan, 0, sizeof plan);
  /* Spans draw from a stream of their own: asking for them changes
   * nothing else in the file. */
  uint64_t span_rng = opts->seed * 0xd1b54a32d192ed03ull + 11;
  if (opts->spans) {
    /* The launches of kernel 0 share the spans: count them with a copy of
     * the generator, which picks the same kernels below. */
    uint64_t probe = rng, zero_launches = 0;
    for (uint32_t s = 0; s < total_streams; s++)
      for (uint64_t i = 0; i < stream_launches(opts, s, total_streams); i++)
        zero_launches += next_random(&probe) % opts->kernels == 0;
    TRY(span_plan_init(&plan, w, opts, zero_launches));
  }
  if (opts->steps)
    TRY(write_step_launches(w, opts, kernels, device_index, shape_index,
                            nccl_shape, kernel_time, &rng, trng));
  for (uint32_t s = 0; !opts->steps && s < total_streams; s++) {
    uint32_t d = s / opts->streams;
    mprof_stream_record sr = {device_index[d], 1 + d, 7 + (s % opts->streams),
                              0};
    uint32_t stream_index;
    TRY(mprof_writer_intern(w, &stream_index, MPROF_SECTION_STREAMS, &sr));
    uint64_t count = stream_launches(opts, s, total_streams);
    uint64_t t = base + 1000 * s;
    /* The input copied in before the first launch (none without launches:
     * a process that started CUDA and did no work). */
    if (s == 0 && opts->launches) {
      mprof_memop_record mo;
      memset(&mo, 0, sizeof mo);
      mo.start = t;
      mo.end = t + 180000;
      mo.bytes = 64ull << 20;
      mo.stream = stream_index;
      mo.correlation_id = correlation++;
      mo.kind = MPROF_MEMOP_MEMCPY;
      mo.copy_kind = MPROF_COPY_HTOD;
      mo.src_device = MPROF_INDEX_NONE;
      mo.dst_device = 0;
      TRY(mprof_writer_append(w, NULL, MPROF_SECTION_MEMOPS, &mo));
      t = mo.end + 2000;
    }
    for (uint64_t i = 0; i < count; i++) {
      uint32_t k = (uint32_t)(next_random(&rng) % opts->kernels);
      const synth_kernel *sk = &kernels[k];
      double jitter = 0.85 + 0.3 * uniform(trng);
      double slow = slowed(opts, k, d) ? 1.0 + opts->slowdown : 1.0;
      uint64_t duration = (uint64_t)(sk->mean_ns * jitter * slow);
      uint64_t gap = sk->scenario == MPROF_SYNTH_LAUNCH_GAPS
                         ? 20000 + next_random(trng) % 5000
                         : 1500 + next_random(trng) % 2500;
      mprof_launch_record l;
      memset(&l, 0, sizeof l);
      l.start = t;
      l.end = t + duration;
      l.shape = shape_index[d][k];
      l.stream = stream_index;
      l.correlation_id = correlation++;
      uint32_t launch_index;
      TRY(mprof_writer_append(w, &launch_index, MPROF_SECTION_LAUNCHES, &l));
      if (k == 0 && plan.per_launch)
        TRY(write_spans(&plan, w, launch_index, l.start, l.end, &span_rng));
      kernel_time[d][k] += (double)duration;
      t = l.end + gap;
    }
  }

  /* PC samples: one sample per SM every 2^14 cycles at 1.98 GHz. */
  uint64_t total_samples = 0;
  for (uint32_t d = 0; d < opts->devices && opts->pcs_per_kernel; d++) {
    for (uint32_t k = 0; k < opts->kernels; k++) {
      double seconds = kernel_time[d][k] * 1e-9;
      double samples = seconds * 132.0 * 1.98e9 / 16384.0;
      double weights[STALL_MAX];
      stall_profile(weights, opts->slow_scenario && slowed(opts, k, d)
                                 ? opts->slow_scenario
                                 : kernels[k].scenario);
      double weight_sum = 0;
      for (size_t r = 0; r < stall_plain(); r++)
        weight_sum += weights[r];
      double pc_weight_sum = 0;
      for (uint32_t p = 0; p < opts->pcs_per_kernel; p++)
        pc_weight_sum += pc_weight(p, opts->pcs_per_kernel);
      uint32_t name = mprof_writer_string(w, kernels[k].mangled);
      for (uint32_t p = 0; p < opts->pcs_per_kernel; p++) {
        double pc_share = pc_weight(p, opts->pcs_per_kernel) / pc_weight_sum;
        for (uint32_t r = 0; r < stall_plain(); r++) {
          double expect = samples * pc_share * weights[r] / weight_sum *
                          (0.8 + 0.4 * uniform(trng));
          uint32_t n = (uint32_t)(expect + 0.5);
          if (!n)
            continue;
          mprof_pc_sample_record pc;
          memset(&pc, 0, sizeof pc);
          pc.cubin_crc = 0x5eed0000ull + (k < 8 ? 1 : 2);
          pc.function_name = name;
          pc.function_index = 10 + k;
          pc.pc_offset = 0x80 + 16 * p;
          pc.device = device_index[d];
          pc.drain = 1;
          pc.stall_reason = 2 * r;
          pc.samples = n;
          TRY(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc));
          total_samples += n;
          /* Most stalled samples issue nothing that cycle. */
          pc.stall_reason = 2 * r + 1;
          pc.samples = r == stall_index("selected") ? 0 : (uint32_t)(n * 0.9);
          if (pc.samples)
            TRY(mprof_writer_append(w, NULL, MPROF_SECTION_PC_SAMPLES, &pc));
        }
      }
    }
    TRY(mprof_writer_drop(w, MPROF_DROP_PC_TOTAL_SAMPLES, device_index[d],
                          total_samples));
    total_samples = 0;
  }
  TRY(mprof_writer_drop(w, MPROF_DROP_PC_DROPPED_SAMPLES, MPROF_INDEX_NONE, 0));
  /* Its process is what --meta says (pid, host, ...; unknown without). */
  TRY(mprof__write_processes_from_meta(
      w, opts->version >= 5 ? opts->meta : NULL,
      opts->version >= 5 ? opts->meta_count : 0));
  return mprof_writer_finish(w);
}

/* ---- sidecar ------------------------------------------------------------ */

/* Made-up SASS that fits the stall reason a PC mostly waits on. */
static void synth_instruction(mprof_sass_instruction *insn,
                              const char *reason) {
  static const struct {
    const char *reason, *opcode, *operands;
  } fits[] = {
      {"long_scoreboard", "LDG.E.128", "R4, desc[UR6][R2.64]"},
      {"lg_throttle", "STG.E", "desc[UR6][R6.64], R9"},
      {"barrier", "BAR.SYNC.DEFER_BLOCKING", "0x0"},
      {"short_scoreboard", "LDS.128", "R12, [R3+0x100]"},
      {"mio_throttle", "LDS.128", "R12, [R3+0x100]"},
      {"math_pipe_throttle", "FFMA", "R8, R4, R5, R8"},
      {"not_selected", "FFMA", "R8, R4, R5, R8"},
      {"selected", "FFMA", "R8, R4, R5, R8"},
      {"wait", "FFMA", "R8, R4, R5, R8"},
  };
  const char *r = mprof_stall_reason_short_name(reason);
  insn->predicate = "";
  for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++)
    if (strcmp(r, fits[i].reason) == 0) {
      insn->opcode = fits[i].opcode;
      insn->operands = fits[i].operands;
      return;
    }
  insn->predicate = "@P0";
  insn->opcode = "IMAD";
  insn->operands = "R2, R0, c[0x0][0x0], R3";
}

/* Whether PC sample @p pc is of kernel @p k's function. */
static int of_kernel(const mprof_pc_sample_record *pc,
                     const mprof_kernel_record *k) {
  return pc->device == k->device && pc->cubin_crc == k->cubin_crc &&
         pc->function_index == k->function_index;
}

/* The name of stall reason @p index on device @p device, or "". */
static const char *reason_name(const mprof_trace *t, uint32_t device,
                               uint32_t index) {
  size_t n;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &n);
  const char *name = "";
  for (size_t r = 0; r < n; r++)
    if (sr[r].device == device && sr[r].index == index)
      name = mprof_trace_string(t, sr[r].name);
  return name;
}

int mprof_synth_write_sidecar(const char *trace_path,
                              const char *sidecar_path) {
  if (!trace_path)
    return mprof__error_set(MPROF_EINVAL, "synth sidecar: NULL trace path");
  char guess[4096];
  if (!sidecar_path) {
    if (snprintf(guess, sizeof guess, "%s.pc.json", trace_path) >=
        (int)sizeof guess)
      return mprof__error_set(MPROF_EINVAL, "%s: path too long", trace_path);
    sidecar_path = guess;
  }
  mprof_trace *t;
  int rc = mprof_trace_open(&t, trace_path, NULL);
  if (rc)
    return rc;
  mprof_sidecar *sc;
  rc = mprof_sidecar_new(&sc);
  if (rc) {
    mprof_trace_free(t);
    return rc;
  }
  size_t reasons, kernels, samples;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &reasons);
  const mprof_kernel_record *kr = mprof_trace_kernels(t, &kernels);
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &samples);
  /* The synthetic devices share one reason table: take device 0's. */
  for (size_t i = 0; !rc && i < reasons; i++)
    if (sr[i].device == 0)
      rc = mprof_sidecar_set_stall_reason(sc, sr[i].index,
                                          mprof_trace_string(t, sr[i].name));
  for (size_t k = 0; !rc && k < kernels; k++) {
    /* Every synthetic device runs the same code: describe it once. */
    if (kr[k].device != 0 && kr[k].device != MPROF_INDEX_NONE)
      continue;
    const char *name = mprof_trace_string(t, kr[k].mangled_name);
    /* Sampled offsets of this function and their dominant reasons. */
    uint32_t last = 0;
    int sampled = 0;
    for (size_t i = 0; i < samples; i++)
      if (of_kernel(&pc[i], &kr[k])) {
        sampled = 1;
        if (pc[i].pc_offset > last)
          last = pc[i].pc_offset;
      }
    if (!sampled)
      continue;
    mprof_sidecar_function fn;
    memset(&fn, 0, sizeof fn);
    fn.name = name;
    fn.demangled = mprof_trace_string(t, kr[k].demangled_name);
    fn.cubin_crc = kr[k].cubin_crc;
    fn.function_index = kr[k].function_index;
    fn.device = kr[k].device;
    fn.registers = kr[k].registers;
    fn.static_shared = kr[k].static_shared;
    fn.size = last + 0x30;
    fn.sass_state = MPROF_SASS_PRESENT;
    uint32_t f;
    rc = mprof_sidecar_add_function(sc, &f, &fn);
    for (uint32_t off = 0; !rc && off < fn.size; off += 16) {
      uint32_t best_samples = 0, best_reason = MPROF_INDEX_NONE;
      for (size_t i = 0; i < samples; i++) {
        const mprof_pc_sample_record *x = &pc[i];
        if (!of_kernel(x, &kr[k]) || x->pc_offset != off)
          continue;
        const char *rn = reason_name(t, x->device, x->stall_reason);
        size_t len = strlen(rn);
        int not_issued = len > 11 && strcmp(rn + len - 11, "_not_issued") == 0;
        if (!rc)
          rc = mprof_sidecar_add_samples(sc, f, off, x->stall_reason,
                                         x->samples);
        if (!not_issued && x->samples > best_samples) {
          best_samples = x->samples;
          best_reason = x->stall_reason;
        }
      }
      mprof_sass_instruction insn;
      memset(&insn, 0, sizeof insn);
      insn.offset = off;
      insn.file = "synth_kernels.cu";
      insn.line = 100 + 50 * (uint32_t)(k % kernels) + off / 32;
      const char *rn = best_reason == MPROF_INDEX_NONE
                           ? ""
                           : reason_name(t, kr[k].device, best_reason);
      if (*rn) {
        synth_instruction(&insn, rn);
      } else {
        insn.predicate = "";
        insn.opcode = off + 16 >= fn.size ? "EXIT" : "MOV";
        insn.operands = off + 16 >= fn.size ? "" : "R1, c[0x0][0x28]";
      }
      if (!rc)
        rc = mprof_sidecar_add_instruction(sc, f, &insn);
    }
  }
  if (!rc)
    rc = mprof_sidecar_save(sc, sidecar_path);
  mprof_sidecar_free(sc);
  mprof_trace_free(t);
  return rc;
}
