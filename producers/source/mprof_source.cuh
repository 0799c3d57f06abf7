/*
 * mprof_source.cuh — source instrumentation for mprof: per-block and
 * per-warp spans measured inside CUDA kernels.
 *
 * One header, nothing to link. Include it in the .cu files whose kernels
 * you mark, compile with -DMPROF_SOURCE, and run the program under
 * `mprof record source -- ./app` (or set MPROF_SOURCE_OUTPUT yourself).
 * producers/source/README.md is the manual; the file this writes is
 * specified there and read by libmprof (mprof/source.h).
 *
 * Three levels of cost:
 *   - compiled without MPROF_SOURCE: the MPROF_SOURCE_* macros expand to
 *     nothing (not even the kernel parameter) and the host functions are
 *     empty inline stubs: the program is the uninstrumented one;
 *   - compiled with MPROF_SOURCE, MPROF_SOURCE_OUTPUT unset: every marker is
 *     one uniform, predictable branch on a kernel parameter;
 *   - recording: a marker reads %globaltimer; the end of a span makes one
 *     thread (thread 0 of the block, or lane 0 of the warp) store one
 *     48-byte record with streaming stores. Slots are reserved with one
 *     atomicAdd for 1, 2, 4, 8, then 16 spans at a time, so a block with
 *     one span wastes no slot and a busy one needs an atomic every 16
 *     spans. Spans that do not fit the buffer are counted (an atomic
 *     counter), never lost silently.
 *
 *   __global__ void k(float *x MPROF_SOURCE_PARAM(prof)) {
 *     MPROF_SOURCE_BLOCK_RECORDER(prof, rec);
 *     MPROF_SOURCE_BEGIN(prof, rec, t_load);
 *     ...load tiles...
 *     __syncthreads();
 *     MPROF_SOURCE_END(prof, rec, t_load, REGION_LOAD, payload);
 *   }
 *   // host, once:   mprof_source_init();
 *   //               mprof_source_region("load", MPROF_SOURCE_ROLE_LOADER);
 *   // each launch:  k<<<g, b>>>(x MPROF_SOURCE_ARG(MPROF_SOURCE_NEXT(k, g,
 *   //               b)));
 *   // at the end:   mprof_source_finish();
 *
 * Host code here is C++ (nvcc compiles .cu files as C++); the device side
 * needs %globaltimer, so sm_50 or newer.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SOURCE_CUH
#define MPROF_SOURCE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Region roles: the Megakernels rows. Same values as mprof_region_role. */
#define MPROF_SOURCE_ROLE_OTHER 0u
#define MPROF_SOURCE_ROLE_SEPARATOR 1u
#define MPROF_SOURCE_ROLE_LOADER 2u
#define MPROF_SOURCE_ROLE_CONSUMER 3u
#define MPROF_SOURCE_ROLE_STORER 4u

/* The warp field of a block span. */
#define MPROF_SOURCE_NO_WARP 0xffffffffu

/* One span as the device writes it and as the file stores it (48 bytes,
 * little-endian): mprof_source_file_record in libmprof's mprof/source.h. */
typedef struct mprof_source_record {
  unsigned long long start;   /* %globaltimer at begin, ns */
  unsigned long long end;     /* %globaltimer at end, ns */
  unsigned int launch;        /* launch sequence number (host order) */
  unsigned int kernel;        /* kernel name id */
  unsigned int sm;            /* %smid at end */
  unsigned int block;         /* linear block index */
  unsigned int warp;          /* warp in the block; NO_WARP for block spans */
  unsigned int region;        /* id from mprof_source_region() */
  unsigned long long payload; /* the user's value */
} mprof_source_record;
static_assert(sizeof(mprof_source_record) == 48, "record is 48 bytes");

/* What one launch needs to record: pass it to the kernel by value. A NULL
 * records pointer means "not recording": the markers skip everything. */
typedef struct mprof_source_launch {
  mprof_source_record *records;
  unsigned long long *counters; /* [0] next free slot, [1] spans overflowed */
  unsigned long long capacity;  /* records the buffer holds */
  unsigned int launch;
  unsigned int kernel;
} mprof_source_launch;

/* Per-thread state of a recorder; lives in registers. */
typedef struct mprof_source_recorder {
  unsigned long long next; /* next reserved slot */
  unsigned int left;       /* reserved slots not used yet */
  unsigned int chunk;      /* slots the next reservation takes */
  unsigned int warp;       /* MPROF_SOURCE_NO_WARP for block recorders */
  bool writer;             /* this thread stores the records */
} mprof_source_recorder;

/* Results of the %globaltimer probe (mprof_source_probe_timer). */
typedef struct mprof_source_timer_probe {
  unsigned long long first_ns;    /* first %globaltimer read */
  unsigned long long last_ns;     /* last value seen */
  unsigned long long min_step_ns; /* smallest change between reads */
  unsigned long long max_step_ns; /* largest change between reads */
  unsigned long long changes;     /* how often the value changed */
  unsigned long long reads;       /* reads in the loop */
  unsigned long long host_realtime_ns; /* CLOCK_REALTIME, mid-bracket */
  unsigned long long host_monotonic_raw_ns; /* CLOCK_MONOTONIC_RAW, same */
  unsigned long long host_bracket_ns; /* launch-to-sync time on the host */
} mprof_source_timer_probe;

#ifdef MPROF_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mutex>
#include <vector>

/* Most records reserved per atomicAdd; the first reservation of a recorder
 * takes 1 and each next one twice as many, up to this. */
#define MPROF_SOURCE_CHUNK 16u
/* Devices a process may record on. */
#define MPROF_SOURCE_MAX_DEVICES 64
/* Default buffer: 1 Mi records (48 MiB) per device; MPROF_SOURCE_CAPACITY
 * overrides. */
#define MPROF_SOURCE_DEFAULT_CAPACITY (1ull << 20)

/* ---- device side -------------------------------------------------------- */

/* %globaltimer, ns since the UNIX epoch (shared by all SMs; on the H200 it
 * advances in 32 ns steps). The memory clobber keeps the compiler from
 * moving loads and stores across the read. */
static __device__ __forceinline__ unsigned long long
mprof_source_globaltimer(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

static __device__ __forceinline__ unsigned int mprof_source_smid(void) {
  unsigned int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}

static __device__ __forceinline__ unsigned int mprof__source_thread(void) {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static __device__ __forceinline__ unsigned int mprof__source_block(void) {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

static __device__ __forceinline__ bool
mprof_source_enabled(mprof_source_launch l) {
  return l.records != NULL;
}

/* Thread 0 of the block records; spans have no warp. */
static __device__ __forceinline__ mprof_source_recorder
mprof_source_block_recorder(mprof_source_launch l) {
  (void)l;
  mprof_source_recorder r;
  r.next = 0;
  r.left = 0;
  r.chunk = 1;
  r.warp = MPROF_SOURCE_NO_WARP;
  r.writer = mprof__source_thread() == 0;
  return r;
}

/* Lane 0 of each warp records; spans carry the warp's index in the block
 * (from the linear thread index, not the volatile %warpid). */
static __device__ __forceinline__ mprof_source_recorder
mprof_source_warp_recorder(mprof_source_launch l) {
  (void)l;
  unsigned int t = mprof__source_thread();
  mprof_source_recorder r;
  r.next = 0;
  r.left = 0;
  r.chunk = 1;
  r.warp = t >> 5;
  r.writer = (t & 31u) == 0;
  return r;
}

static __device__ __forceinline__ void
mprof__source_reserve(mprof_source_recorder &r, mprof_source_launch l) {
  r.next = atomicAdd(&l.counters[0], (unsigned long long)r.chunk);
  r.left = r.chunk;
  if (r.chunk < MPROF_SOURCE_CHUNK)
    r.chunk <<= 1;
}

/* Start a span: returns its start time (0 when not recording). The writer
 * reserves slots here when it has none, so the atomic's latency hides
 * behind the region it measures. */
static __device__ __forceinline__ unsigned long long
mprof_source_begin(mprof_source_recorder &r, mprof_source_launch l) {
  if (l.records == NULL)
    return 0;
  if (r.writer && r.left == 0)
    mprof__source_reserve(r, l);
  return mprof_source_globaltimer();
}

/* End the span started at @p start and store it. Call it from every thread
 * of the block (or warp); only the writer stores. A span that does not fit
 * the buffer is counted in counters[1]. */
static __device__ __forceinline__ void
mprof_source_end(mprof_source_recorder &r, mprof_source_launch l,
                 unsigned long long start, unsigned int region,
                 unsigned long long payload) {
  if (l.records == NULL || !r.writer)
    return;
  unsigned long long end = mprof_source_globaltimer();
  if (r.left == 0)
    mprof__source_reserve(r, l);
  unsigned long long slot = r.next++;
  r.left--;
  if (slot >= l.capacity) {
    atomicAdd(&l.counters[1], 1ull);
    return;
  }
  ulonglong2 *p = (ulonglong2 *)(l.records + slot);
  __stcs(p, make_ulonglong2(start, end));
  __stcs(p + 1,
         make_ulonglong2(l.launch | ((unsigned long long)l.kernel << 32),
                         mprof_source_smid() |
                             ((unsigned long long)mprof__source_block() << 32)));
  __stcs(p + 2, make_ulonglong2(r.warp | ((unsigned long long)region << 32),
                                payload));
}

/* Markers that vanish without MPROF_SOURCE. */
#define MPROF_SOURCE_PARAM(l) , mprof_source_launch l
#define MPROF_SOURCE_ARG(expr) , (expr)
#define MPROF_SOURCE_BLOCK_RECORDER(l, r)                                      \
  mprof_source_recorder r = mprof_source_block_recorder(l)
#define MPROF_SOURCE_WARP_RECORDER(l, r)                                       \
  mprof_source_recorder r = mprof_source_warp_recorder(l)
#define MPROF_SOURCE_BEGIN(l, r, t)                                            \
  const unsigned long long t = mprof_source_begin(r, l)
#define MPROF_SOURCE_END(l, r, t, region, payload)                             \
  mprof_source_end(r, l, t, region, (unsigned long long)(payload))
/* A barrier only in instrumented builds: put it before an END that should
 * mean "every thread of the block is done". */
#define MPROF_SOURCE_SYNC_BLOCK() __syncthreads()

/* ---- host side ---------------------------------------------------------- */

/* The file layout (producers/source/README.md, mprof/source.h). */
#define MPROF__SOURCE_MAGIC "MPSRC\0\r\n"
#define MPROF__SOURCE_HEADER_SIZE 128u

typedef struct mprof__source_region {
  char *name;
  unsigned int role;
  unsigned int color;
} mprof__source_region;

typedef struct mprof__source_launch_entry {
  uint32_t kernel;
  uint32_t device;
  uint32_t grid[3];
  uint32_t block[3];
  uint64_t host_ns;
} mprof__source_launch_entry;
static_assert(sizeof(mprof__source_launch_entry) == 40, "launch is 40 bytes");

typedef struct mprof__source_buffer {
  mprof_source_record *records;
  unsigned long long *counters;
} mprof__source_buffer;

typedef struct mprof__source_state {
  std::mutex lock;
  bool initialized;
  bool enabled;
  bool finished;
  char path[4096];
  unsigned long long capacity;
  mprof__source_buffer buffers[MPROF_SOURCE_MAX_DEVICES];
  std::vector<mprof__source_region> regions;
  std::vector<char *> kernels;
  std::vector<mprof__source_launch_entry> launches;
} mprof__source_state;

/* One state per process: an inline function's static is shared by every
 * translation unit that includes this header. */
inline mprof__source_state &mprof__source_get(void) {
  static mprof__source_state state;
  return state;
}

static inline unsigned long long mprof__source_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull +
         (unsigned long long)ts.tv_nsec;
}

static inline void mprof__source_warn(const char *what, cudaError_t err) {
  fprintf(stderr, "mprof-source: %s: %s\n", what, cudaGetErrorString(err));
  (void)cudaGetLastError(); /* do not leave our error for the program */
}

/* MPROF_SOURCE_OUTPUT with %p (pid), %h (host) and %% expanded. */
static inline bool mprof__source_expand(char *out, size_t size,
                                        const char *pattern) {
  size_t n = 0;
  for (const char *p = pattern; *p; p++) {
    char piece[300];
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(piece, sizeof piece, "%ld", (long)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == 'h') {
      if (gethostname(piece, sizeof piece - 1) != 0)
        snprintf(piece, sizeof piece, "localhost");
      piece[sizeof piece - 1] = '\0';
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      snprintf(piece, sizeof piece, "%%");
      p++;
    } else {
      piece[0] = *p;
      piece[1] = '\0';
    }
    size_t len = strlen(piece);
    if (n + len + 1 > size)
      return false;
    memcpy(out + n, piece, len);
    n += len;
  }
  out[n] = '\0';
  return true;
}

static inline unsigned long long mprof__source_parse_size(const char *text) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text)
    return 0;
  switch (*end) {
  case 'k': case 'K': v <<= 10; end++; break;
  case 'm': case 'M': v <<= 20; end++; break;
  case 'g': case 'G': v <<= 30; end++; break;
  default: break;
  }
  return *end ? 0 : v;
}

static inline int mprof_source_finish(void);
static inline mprof__source_buffer *
mprof__source_buffer_for(mprof__source_state &s, int device);

static inline void mprof__source_atexit(void) { (void)mprof_source_finish(); }

/* Read the environment; returns 1 when recording, 0 when off. Safe to call
 * more than once; the other host functions call it on first use. */
static inline int mprof_source_init(void) {
  mprof__source_state &s = mprof__source_get();
  std::lock_guard<std::mutex> guard(s.lock);
  if (s.initialized)
    return s.enabled ? 1 : 0;
  s.initialized = true;
  const char *output = getenv("MPROF_SOURCE_OUTPUT");
  if (!output || !*output)
    return 0;
  if (!mprof__source_expand(s.path, sizeof s.path, output)) {
    fprintf(stderr, "mprof-source: MPROF_SOURCE_OUTPUT is too long; not "
                    "recording\n");
    return 0;
  }
  s.capacity = MPROF_SOURCE_DEFAULT_CAPACITY;
  const char *capacity = getenv("MPROF_SOURCE_CAPACITY");
  if (capacity && *capacity) {
    unsigned long long v = mprof__source_parse_size(capacity);
    if (v)
      s.capacity = v;
    else
      fprintf(stderr,
              "mprof-source: MPROF_SOURCE_CAPACITY: '%s' is not a number of "
              "records (K/M/G suffixes allowed); using %llu\n",
              capacity, s.capacity);
  }
  s.enabled = true;
  /* A fallback for programs that never call mprof_source_finish(); it runs
   * before the CUDA runtime's own teardown, which registered earlier. */
  atexit(mprof__source_atexit);
  /* The current device's buffer now, so that allocating and zeroing it
   * (synchronously) never lands between a program's timing events. */
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess)
    mprof__source_buffer_for(s, device);
  else
    (void)cudaGetLastError();
  return 1;
}

/* The buffer of the current device, allocated on first use. */
static inline mprof__source_buffer *
mprof__source_buffer_for(mprof__source_state &s, int device) {
  if (device < 0 || device >= MPROF_SOURCE_MAX_DEVICES)
    return NULL;
  mprof__source_buffer *b = &s.buffers[device];
  if (b->records)
    return b;
  void *records = NULL, *counters = NULL;
  size_t bytes = (size_t)s.capacity * sizeof(mprof_source_record);
  cudaError_t err = cudaMalloc(&records, bytes);
  if (err == cudaSuccess)
    err = cudaMalloc(&counters, 2 * sizeof(unsigned long long));
  /* Empty slots must read as zero: reserved but unused slots stay holes. */
  if (err == cudaSuccess)
    err = cudaMemset(records, 0, bytes);
  if (err == cudaSuccess)
    err = cudaMemset(counters, 0, 2 * sizeof(unsigned long long));
  /* The memsets run on the legacy stream, which a non-blocking stream does
   * not wait for: finish them before any kernel can write. */
  if (err == cudaSuccess)
    err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    char what[128];
    snprintf(what, sizeof what,
             "cannot allocate %zu bytes for spans on device %d (lower "
             "MPROF_SOURCE_CAPACITY); launches there are not recorded",
             bytes, device);
    mprof__source_warn(what, err);
    if (records)
      cudaFree(records);
    if (counters)
      cudaFree(counters);
    (void)cudaGetLastError();
    return NULL;
  }
  b->records = (mprof_source_record *)records;
  b->counters = (unsigned long long *)counters;
  return b;
}

/* Name region @p name with @p role (MPROF_SOURCE_ROLE_*) and an optional
 * colour 0xAARRGGBB (0 = let the viewer choose). Returns its id, the value
 * markers pass as `region`: ids count from 0 in the order names are first
 * registered; the same name gives the same id. */
static inline unsigned int mprof_source_region_color(const char *name,
                                                     unsigned int role,
                                                     unsigned int argb) {
  mprof_source_init();
  mprof__source_state &s = mprof__source_get();
  std::lock_guard<std::mutex> guard(s.lock);
  const char *label = name ? name : "";
  for (size_t i = 0; i < s.regions.size(); i++)
    if (strcmp(s.regions[i].name, label) == 0)
      return (unsigned int)i;
  mprof__source_region r;
  r.name = strdup(label);
  r.role = role;
  r.color = argb;
  if (!r.name)
    return (unsigned int)s.regions.size();
  s.regions.push_back(r);
  return (unsigned int)(s.regions.size() - 1);
}

static inline unsigned int mprof_source_region(const char *name,
                                               unsigned int role) {
  return mprof_source_region_color(name, role, 0);
}

/* What launch @p kernel (its name as written in the source) with this grid
 * and block hands to the kernel. Call it once per launch, in launch order:
 * the merge matches launches to CUPTI's by name and order. */
static inline mprof_source_launch mprof_source_next(const char *kernel,
                                                    dim3 grid, dim3 block) {
  mprof_source_launch l;
  memset(&l, 0, sizeof l);
  if (!mprof_source_init())
    return l;
  mprof__source_state &s = mprof__source_get();
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return l;
  }
  std::lock_guard<std::mutex> guard(s.lock);
  if (s.finished)
    return l;
  const char *name = kernel ? kernel : "";
  size_t k;
  for (k = 0; k < s.kernels.size(); k++)
    if (s.kernels[k] == name || strcmp(s.kernels[k], name) == 0)
      break;
  if (k == s.kernels.size()) {
    char *copy = strdup(name);
    if (!copy)
      return l;
    s.kernels.push_back(copy);
  }
  mprof__source_launch_entry e;
  e.kernel = (uint32_t)k;
  e.device = (uint32_t)device;
  e.grid[0] = grid.x;
  e.grid[1] = grid.y;
  e.grid[2] = grid.z;
  e.block[0] = block.x;
  e.block[1] = block.y;
  e.block[2] = block.z;
  e.host_ns = mprof__source_clock(CLOCK_REALTIME);
  mprof__source_buffer *b = mprof__source_buffer_for(s, device);
  s.launches.push_back(e);
  if (b) {
    l.records = b->records;
    l.counters = b->counters;
    l.capacity = s.capacity;
  }
  l.launch = (unsigned int)(s.launches.size() - 1);
  l.kernel = (unsigned int)k;
  return l;
}

/* Stringizes the kernel's identifier. */
#define MPROF_SOURCE_NEXT(kernel, grid, block)                                 \
  mprof_source_next(#kernel, (grid), (block))

static __global__ void
mprof__source_timer_probe_kernel(unsigned long long *out,
                                 unsigned long long reads) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  unsigned long long first = mprof_source_globaltimer(), prev = first;
  unsigned long long min_step = ~0ull, max_step = 0, changes = 0;
  for (unsigned long long i = 0; i < reads; i++) {
    unsigned long long t = mprof_source_globaltimer();
    if (t != prev) {
      unsigned long long d = t - prev;
      min_step = d < min_step ? d : min_step;
      max_step = d > max_step ? d : max_step;
      changes++;
      prev = t;
    }
  }
  out[0] = first;
  out[1] = prev;
  out[2] = changes ? min_step : 0;
  out[3] = max_step;
  out[4] = changes;
}

/* Measure %globaltimer's step on the current device with one tiny kernel
 * (one thread, @p reads back-to-back reads; 0 = 20000) and pair its first
 * read with the host clocks. Returns 0, or -1 when CUDA failed. */
static inline int mprof_source_probe_timer(mprof_source_timer_probe *out,
                                           unsigned long long reads) {
  memset(out, 0, sizeof *out);
  if (reads == 0)
    reads = 20000;
  unsigned long long *d_out = NULL, h_out[5] = {0, 0, 0, 0, 0};
  cudaError_t err = cudaMalloc(&d_out, sizeof h_out);
  if (err != cudaSuccess) {
    mprof__source_warn("timer probe: cudaMalloc", err);
    return -1;
  }
  unsigned long long real0 = mprof__source_clock(CLOCK_REALTIME);
  unsigned long long raw0 = mprof__source_clock(CLOCK_MONOTONIC_RAW);
  mprof__source_timer_probe_kernel<<<1, 32>>>(d_out, reads);
  err = cudaGetLastError();
  if (err == cudaSuccess)
    err = cudaDeviceSynchronize();
  unsigned long long real1 = mprof__source_clock(CLOCK_REALTIME);
  unsigned long long raw1 = mprof__source_clock(CLOCK_MONOTONIC_RAW);
  if (err == cudaSuccess)
    err = cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
  cudaFree(d_out);
  if (err != cudaSuccess) {
    mprof__source_warn("timer probe", err);
    return -1;
  }
  out->first_ns = h_out[0];
  out->last_ns = h_out[1];
  out->min_step_ns = h_out[2];
  out->max_step_ns = h_out[3];
  out->changes = h_out[4];
  out->reads = reads;
  out->host_realtime_ns = real0 + (real1 - real0) / 2;
  out->host_monotonic_raw_ns = raw0 + (raw1 - raw0) / 2;
  out->host_bracket_ns = raw1 - raw0;
  return 0;
}

static inline void mprof__source_put32(unsigned char *p, uint32_t v) {
  memcpy(p, &v, 4); /* the format is little-endian, like every CUDA host */
}

static inline void mprof__source_put64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, 8);
}

/* Copy every device's spans back and write MPROF_SOURCE_OUTPUT (through
 * "PATH.partial", renamed when complete). Later launches are no longer
 * recorded. Returns 0, or -1 with a message on stderr. */
static inline int mprof_source_finish(void) {
  mprof__source_state &s = mprof__source_get();
  std::lock_guard<std::mutex> guard(s.lock);
  if (!s.enabled || s.finished)
    return 0;
  s.finished = true;
  int failed = 0, current = 0;
  if (cudaGetDevice(&current) != cudaSuccess)
    (void)cudaGetLastError();
  std::vector<mprof_source_record> records;
  unsigned long long overflow = 0;
  for (int d = 0; d < MPROF_SOURCE_MAX_DEVICES; d++) {
    mprof__source_buffer *b = &s.buffers[d];
    if (!b->records)
      continue;
    unsigned long long counters[2] = {0, 0};
    cudaError_t err = cudaSetDevice(d);
    if (err == cudaSuccess)
      err = cudaDeviceSynchronize();
    if (err == cudaSuccess)
      err = cudaMemcpy(counters, b->counters, sizeof counters,
                       cudaMemcpyDeviceToHost);
    unsigned long long used =
        counters[0] < s.capacity ? counters[0] : s.capacity;
    size_t base = records.size();
    if (err == cudaSuccess && used) {
      records.resize(base + (size_t)used);
      err = cudaMemcpy(&records[base], b->records,
                       (size_t)used * sizeof(mprof_source_record),
                       cudaMemcpyDeviceToHost);
    }
    if (err != cudaSuccess) {
      mprof__source_warn("copying the spans back", err);
      records.resize(base);
      failed = 1;
    }
    overflow += counters[1];
    /* Drop the holes left by partly used reservations. */
    size_t keep = base;
    for (size_t i = base; i < records.size(); i++)
      if (records[i].start || records[i].end)
        records[keep++] = records[i];
    records.resize(keep);
    cudaFree(b->records);
    cudaFree(b->counters);
    b->records = NULL;
    b->counters = NULL;
  }
  mprof_source_timer_probe probe;
  memset(&probe, 0, sizeof probe);
  const char *want_probe = getenv("MPROF_SOURCE_TIMER_PROBE");
  if (!(want_probe && strcmp(want_probe, "0") == 0)) {
    if (cudaSetDevice(current) != cudaSuccess ||
        mprof_source_probe_timer(&probe, 0) != 0)
      memset(&probe, 0, sizeof probe);
  }
  cudaSetDevice(current);
  (void)cudaGetLastError();

  /* String table: "" then region names then kernel names. */
  std::vector<char> strings(1, '\0');
  std::vector<uint32_t> region_names, kernel_names;
  for (size_t i = 0; i < s.regions.size(); i++) {
    region_names.push_back((uint32_t)strings.size());
    strings.insert(strings.end(), s.regions[i].name,
                   s.regions[i].name + strlen(s.regions[i].name) + 1);
  }
  for (size_t i = 0; i < s.kernels.size(); i++) {
    kernel_names.push_back((uint32_t)strings.size());
    strings.insert(strings.end(), s.kernels[i],
                   s.kernels[i] + strlen(s.kernels[i]) + 1);
  }
  while (strings.size() % 8)
    strings.push_back('\0');

  unsigned char header[MPROF__SOURCE_HEADER_SIZE];
  memset(header, 0, sizeof header);
  memcpy(header, MPROF__SOURCE_MAGIC, 8);
  header[8] = 1; /* version major (u16) */
  header[10] = 0; /* version minor (u16) */
  mprof__source_put32(header + 12, MPROF__SOURCE_HEADER_SIZE);
  mprof__source_put32(header + 16, (uint32_t)s.regions.size());
  mprof__source_put32(header + 20, (uint32_t)s.kernels.size());
  mprof__source_put32(header + 24, (uint32_t)s.launches.size());
  mprof__source_put32(header + 28, (uint32_t)sizeof(mprof_source_record));
  mprof__source_put64(header + 32, (uint64_t)records.size());
  mprof__source_put64(header + 40, overflow);
  mprof__source_put64(header + 48, s.capacity);
  mprof__source_put32(header + 56, (uint32_t)strings.size());
  mprof__source_put32(header + 60, (uint32_t)probe.min_step_ns);
  mprof__source_put32(header + 64, (uint32_t)probe.max_step_ns);
  mprof__source_put32(header + 68, (uint32_t)probe.changes);
  mprof__source_put64(header + 72, probe.first_ns);
  mprof__source_put64(header + 80, probe.host_realtime_ns);
  mprof__source_put64(header + 88, probe.host_monotonic_raw_ns);
  mprof__source_put64(header + 96, probe.host_bracket_ns);

  char partial[sizeof s.path + 16];
  size_t path_len = strnlen(s.path, sizeof s.path - 1);
  memcpy(partial, s.path, path_len);
  memcpy(partial + path_len, ".partial", sizeof ".partial");
  FILE *f = fopen(partial, "wb");
  if (!f) {
    fprintf(stderr, "mprof-source: cannot write %s: %s\n", partial,
            strerror(errno));
    return -1;
  }
  bool ok = fwrite(header, sizeof header, 1, f) == 1;
  for (size_t i = 0; ok && i < s.regions.size(); i++) {
    unsigned char r[16];
    memset(r, 0, sizeof r);
    mprof__source_put32(r, region_names[i]);
    mprof__source_put32(r + 4, s.regions[i].role);
    mprof__source_put32(r + 8, s.regions[i].color);
    ok = fwrite(r, sizeof r, 1, f) == 1;
  }
  for (size_t i = 0; ok && i < s.kernels.size(); i++) {
    unsigned char k[8];
    memset(k, 0, sizeof k);
    mprof__source_put32(k, kernel_names[i]);
    ok = fwrite(k, sizeof k, 1, f) == 1;
  }
  if (ok && !s.launches.empty())
    ok = fwrite(s.launches.data(), sizeof(mprof__source_launch_entry),
                s.launches.size(), f) == s.launches.size();
  if (ok)
    ok = fwrite(strings.data(), 1, strings.size(), f) == strings.size();
  if (ok && !records.empty())
    ok = fwrite(records.data(), sizeof(mprof_source_record), records.size(),
                f) == records.size();
  if (fclose(f) != 0)
    ok = false;
  if (!ok || rename(partial, s.path) != 0) {
    fprintf(stderr, "mprof-source: cannot write %s: %s\n", s.path,
            strerror(errno));
    remove(partial);
    return -1;
  }
  const char *verbose = getenv("MPROF_SOURCE_VERBOSE");
  if (overflow)
    fprintf(stderr,
            "mprof-source: warning: %llu spans did not fit the buffer of %llu "
            "records and are counted, not kept; set MPROF_SOURCE_CAPACITY "
            "higher (e.g. %lluM)\n",
            overflow, s.capacity,
            ((s.capacity + overflow) * 2 + (1u << 20) - 1) >> 20);
  if (verbose && *verbose && strcmp(verbose, "0") != 0)
    fprintf(stderr,
            "mprof-source: %zu spans of %zu launches in %s (globaltimer step "
            "%llu ns)\n",
            records.size(), s.launches.size(), s.path, probe.min_step_ns);
  return failed ? -1 : 0;
}

#else /* !MPROF_SOURCE: markers vanish, host calls do nothing */

#define MPROF_SOURCE_PARAM(l)
#define MPROF_SOURCE_ARG(expr)
#define MPROF_SOURCE_BLOCK_RECORDER(l, r)
#define MPROF_SOURCE_WARP_RECORDER(l, r)
#define MPROF_SOURCE_BEGIN(l, r, t)
#define MPROF_SOURCE_END(l, r, t, region, payload)
#define MPROF_SOURCE_SYNC_BLOCK()
#define MPROF_SOURCE_NEXT(kernel, grid, block) mprof_source_launch()

static inline int mprof_source_init(void) { return 0; }
static inline unsigned int mprof_source_region_color(const char *name,
                                                     unsigned int role,
                                                     unsigned int argb) {
  (void)name;
  (void)role;
  (void)argb;
  return 0;
}
static inline unsigned int mprof_source_region(const char *name,
                                               unsigned int role) {
  (void)name;
  (void)role;
  return 0;
}
static inline int mprof_source_finish(void) { return 0; }

#endif /* MPROF_SOURCE */

#endif /* MPROF_SOURCE_CUH */
