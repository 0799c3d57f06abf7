/*
 * mprof CUPTI producer — the injection library (libmprof-cupti.so).
 *
 * Loaded into the profiled process by CUDA_INJECTION64_PATH: the driver calls
 * InitializeInjection() from inside the first cuInit(). From there it
 * subscribes to CUPTI, collects kernel/memcpy/memset/NVTX activity, sets up
 * continuous PC sampling per context, captures every loaded cubin, and at
 * process exit drains everything into one .mprof file through the
 * translator (translate.c). The rules it lives by:
 *
 *  - never crash, hang or change the program's output: every CUPTI call is
 *    checked; a failure disables one feature and is recorded in META as
 *    `error.N`; nothing here calls exit() or abort();
 *  - stderr only for real warnings (or MPROF_VERBOSE=1), prefixed
 *    "mprof-cupti:";
 *  - one clock: CUPTI's timestamps come from our CLOCK_MONOTONIC_RAW callback.
 *
 * Crash safety: the trace is streamed. Once a second the drain thread
 * flushes CUPTI's completed buffers and commits a checkpoint, so a process
 * killed at any moment leaves "NAME.partial" holding everything up to the
 * last one. On SIGABRT, SIGSEGV, SIGBUS, SIGTERM and SIGINT the handler asks
 * the drain thread for one more flush (waiting at most FATAL_FLUSH_WAIT_MS),
 * falls back to committing what the writer holds, and then lets the signal
 * do what it would have done (the program's own handler, or the default).
 *
 * Processes: every process writes its own trace (process.c claims the
 * name); a forked child never touches its parent's trace.
 *
 * Threads that enter this file: the application's threads (inside CUPTI
 * callbacks), CUPTI's buffer thread (activity buffers), our drain thread
 * (periodic PC drains, activity flushes and checkpoints) and the exit
 * handler. Locks:
 * pc_lock guards PC-sampling state and is always taken before the
 * translator's lock; no lock is held across cuptiActivityFlushAll(), which
 * may call back into buffer_completed() on the calling thread.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include "config.h"
#include "pmsampling.h"
#include "mprof/error.h"
#include "process.h"
#include "mprof/version.h"
#include "mprof/writer.h"
#include "translate.h"

#define EXPORT __attribute__((visibility("default")))

/* cupti.h (13.0) does not declare it, but libcupti.so.13 exports it. */
extern CUptiResult CUPTIAPI cuptiNvtxInitialize2(void *get_export_table);

EXPORT int InitializeInjection(void);
EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

/* Activity buffers: CUPTI suggests 1-10 MB; buffers are per thread by
 * default, so a modest size keeps many-threaded programs cheap. */
#define ACTIVITY_BUFFER_SIZE (4u << 20)
#define ACTIVITY_POOL_MAX 8
/* PC records CUPTI may park in the configured buffer (Disable discards what
 * does not fit) and records fetched per cuptiPCSamplingGetData call. */
#define PC_CONFIG_BUFFER_PCS 16384
#define PC_DRAIN_BUFFER_PCS 4096
/* CUPTI's default scratch buffer (1 MB) holds ~5,500 PCs; 16 MB kept the
 * H200 at 99.4% delivery at N=12 where 1 MB did not. */
#define PC_SCRATCH_BUFFER_SIZE (16u << 20)
/* CUPTI's decode threads sleep 100 ms by default; waking every 20 ms moves
 * samples out of the hardware buffer sooner. */
#define PC_WORKER_SLEEP_MS 20u
#define DRAIN_PERIOD_MS 100u
#define FLUSH_EVERY_DRAINS 10u /* flush and checkpoint once a second */
/* How long a fatal signal's handler waits for the drain thread's flush. */
#define FATAL_FLUSH_WAIT_MS 2000u
#define MAX_CONTEXTS 64
/* Never loop on GetData forever, whatever CUPTI reports. */
#define PC_MAX_GETDATA_CALLS 100000

enum { STATE_NONE, STATE_RUNNING, STATE_DISABLED, STATE_FINISHED };

typedef struct pc_buffer {
  CUpti_PCSamplingData data;
  CUpti_PCSamplingStallReason *reasons; /* one block for all PCs */
} pc_buffer;

/* PC sampling state of one context; CUPTI samples one context per device. */
typedef struct pc_context {
  struct pc_context *next;
  CUcontext ctx;
  uint32_t ordinal;
  int hardware_full; /* GetData fails for good after an overflow */
  size_t reason_count;
  uint32_t *reason_index;
  pc_buffer config; /* CUPTI writes here on range ends and at Disable */
  pc_buffer drain;  /* cuptiPCSamplingGetData target */
} pc_context;

typedef CUresult (*cu_device_get_fn)(CUdevice *, int);
typedef CUresult (*cu_device_get_attribute_fn)(int *, CUdevice_attribute,
                                               CUdevice);
typedef CUresult (*cu_device_get_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_device_total_mem_fn)(size_t *, CUdevice);
typedef CUresult (*cu_device_get_uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*cu_driver_get_version_fn)(int *);
typedef CUresult (*cu_ctx_push_fn)(CUcontext);
typedef CUresult (*cu_ctx_pop_fn)(CUcontext *);
typedef CUresult (*cu_ctx_synchronize_fn)(void);

/* The signals after which the producer flushes before the program goes. */
static const int caught_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGTERM, SIGINT};
#define CAUGHT_SIGNAL_COUNT (sizeof caught_signals / sizeof caught_signals[0])

static struct {
  atomic_int state;
  atomic_int exiting;
  atomic_int forked; /* this copy of the state is a forked child's */
  pid_t pid;
  mprof_cupti_config cfg;
  mprof_cupti_translate *tr;
  CUpti_SubscriberHandle subscriber;
  int pc_allowed; /* cleared for good by privilege or version problems */
  uint64_t config_direct_reads; /* see pc_drain_locked(); pc_lock */

  pthread_mutex_t pool_lock;
  void *pool[ACTIVITY_POOL_MAX];
  int pool_count;

  pthread_mutex_t pc_lock;
  pc_context *pcs;
  uint32_t devices_described[64]; /* ordinals already queried */
  int described_count;

  /* The drain thread sleeps in poll() on wake_pipe, so that a signal
   * handler can wake it (write(2) is async-signal-safe). */
  int wake_pipe[2];
  pthread_t thread;
  int thread_started;
  atomic_int thread_stop;
  atomic_int flush_request; /* 1 periodic-style flush, 2 forced */
  atomic_uint flush_done;   /* bumped after each requested flush */

  pthread_mutex_t context_lock;
  CUcontext contexts[MAX_CONTEXTS]; /* seen and not destroyed */
  int context_count;

  struct sigaction old_actions[CAUGHT_SIGNAL_COUNT];

  struct {
    cu_device_get_fn device_get;
    cu_device_get_attribute_fn attribute;
    cu_device_get_name_fn name;
    cu_device_total_mem_fn total_mem;
    cu_device_get_uuid_fn uuid;
    cu_driver_get_version_fn driver_version;
    cu_ctx_push_fn push;
    cu_ctx_pop_fn pop;
    cu_ctx_synchronize_fn synchronize;
  } cu;
} g = {
    .pool_lock = PTHREAD_MUTEX_INITIALIZER,
    .pc_lock = PTHREAD_MUTEX_INITIALIZER,
    .context_lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_pipe = {-1, -1},
};

/* ---- logging and errors ------------------------------------------------- */

static void say(const char *fmt, va_list ap) {
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  fprintf(stderr, "mprof-cupti: %s\n", line);
}

__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...) {
  if (!g.cfg.verbose)
    return;
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

static const char *result_name(CUptiResult res) {
  const char *name = NULL;
  if (cuptiGetResultString(res, &name) != CUPTI_SUCCESS || !name)
    return "CUPTI_ERROR_UNKNOWN";
  return name;
}

/* Record "what: CUPTI_ERROR_X" once in META; returns 0 so callers can write
 * `if (!ok(cuptiX(...), "cuptiX")) ...`. */
static int ok(CUptiResult res, const char *what) {
  if (res == CUPTI_SUCCESS)
    return 1;
  char message[256];
  snprintf(message, sizeof message, "%s: %s", what, result_name(res));
  if (g.tr && mprof_cupti_translate_error(g.tr, message))
    note("%s", message);
  return 0;
}

static void meta(const char *key, const char *value) {
  if (g.tr)
    mprof_cupti_translate_meta(g.tr, key, value);
}

static void meta_u64(const char *key, uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)value);
  meta(key, text);
}

static int running(void) { return atomic_load(&g.state) == STATE_RUNNING; }

/* ---- where the time goes (printed at exit with MPROF_VERBOSE=1) --------- */

typedef enum cost_phase {
  COST_STARTUP,      /* InitializeInjection */
  COST_MODULES,      /* MODULE_LOADED: hash and park the image */
  COST_DRAIN_APP,    /* PC drains inside callbacks on the program's threads */
  COST_DRAIN_THREAD, /* PC drains and flushes on the drain thread */
  COST_BUFFERS,      /* activity buffers translated (CUPTI's thread) */
  COST_EXIT_FLUSH,   /* exit: cuptiActivityFlushAll(FORCED) */
  COST_EXIT_PC,      /* exit: final drains and Disable */
  COST_EXIT_WRITE,   /* exit: DEVICES, CUBINS, META, finishing the file */
  COST_PHASES
} cost_phase;

static struct {
  _Atomic uint64_t ns;
  _Atomic uint64_t count;
  _Atomic uint64_t bytes;
} cost[COST_PHASES];

static uint64_t cost_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cost_add(cost_phase phase, uint64_t since, uint64_t bytes) {
  atomic_fetch_add(&cost[phase].ns, cost_now() - since);
  atomic_fetch_add(&cost[phase].count, 1);
  atomic_fetch_add(&cost[phase].bytes, bytes);
}

static double cost_ms(cost_phase phase) {
  return (double)atomic_load(&cost[phase].ns) / 1e6;
}

static unsigned long long cost_count(cost_phase phase) {
  return (unsigned long long)atomic_load(&cost[phase].count);
}

static void cost_print(const mprof_cupti_translate_stats *stats) {
  if (!g.cfg.verbose)
    return;
  note("time: start-up %.1f ms", cost_ms(COST_STARTUP));
  note("time: module capture %.1f ms on the program's threads (%llu loads, "
       "%.1f MB)",
       cost_ms(COST_MODULES), cost_count(COST_MODULES),
       (double)atomic_load(&cost[COST_MODULES].bytes) / 1e6);
  note("time: PC drains %.1f ms on the program's threads (%llu), %.1f ms on "
       "the drain thread (%llu ticks)",
       cost_ms(COST_DRAIN_APP), cost_count(COST_DRAIN_APP),
       cost_ms(COST_DRAIN_THREAD), cost_count(COST_DRAIN_THREAD));
  note("time: activity buffers %.1f ms (%llu buffers, %llu launches, %.2f us "
       "a launch)",
       cost_ms(COST_BUFFERS), cost_count(COST_BUFFERS),
       (unsigned long long)stats->launches,
       stats->launches ? cost_ms(COST_BUFFERS) * 1e3 / (double)stats->launches
                       : 0.0);
  note("time: exit %.1f ms: flush %.1f, PC %.1f, writing %.1f (code %.1f ms: "
       "%llu modules, %.1f MB kept of %.1f MB)",
       cost_ms(COST_EXIT_FLUSH) + cost_ms(COST_EXIT_PC) +
           cost_ms(COST_EXIT_WRITE),
       cost_ms(COST_EXIT_FLUSH), cost_ms(COST_EXIT_PC),
       cost_ms(COST_EXIT_WRITE), (double)stats->cubins_ns / 1e6,
       (unsigned long long)stats->modules_kept, (double)stats->kept_bytes / 1e6,
       (double)stats->used_bytes / 1e6);
}

/* ---- clock -------------------------------------------------------------- */

static uint64_t CUPTIAPI monotonic_raw_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pair the trace clock with wall-clock time so a viewer can print dates. */
static void write_anchor(const char *prefix) {
  uint64_t trace_ns = 0;
  struct timespec real;
  if (cuptiGetTimestamp(&trace_ns) != CUPTI_SUCCESS)
    trace_ns = monotonic_raw_ns();
  clock_gettime(CLOCK_REALTIME, &real);
  char key[64];
  snprintf(key, sizeof key, "%s.trace_ns", prefix);
  meta_u64(key, trace_ns);
  snprintf(key, sizeof key, "%s.realtime_ns", prefix);
  meta_u64(key, (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec);
}

/* ---- driver queries (dlsym: the producer must not link libcuda) --------- */

static void driver_load(void) {
  /* Inside cuInit libcuda is already loaded; NOLOAD never loads a second. */
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda)
    cuda = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) {
    note("libcuda is not loaded; device details come from CUPTI only");
    return;
  }
  g.cu.device_get = (cu_device_get_fn)dlsym(cuda, "cuDeviceGet");
  g.cu.attribute =
      (cu_device_get_attribute_fn)dlsym(cuda, "cuDeviceGetAttribute");
  g.cu.name = (cu_device_get_name_fn)dlsym(cuda, "cuDeviceGetName");
  g.cu.total_mem = (cu_device_total_mem_fn)dlsym(cuda, "cuDeviceTotalMem_v2");
  g.cu.uuid = (cu_device_get_uuid_fn)dlsym(cuda, "cuDeviceGetUuid_v2");
  g.cu.driver_version =
      (cu_driver_get_version_fn)dlsym(cuda, "cuDriverGetVersion");
  g.cu.push = (cu_ctx_push_fn)dlsym(cuda, "cuCtxPushCurrent_v2");
  g.cu.pop = (cu_ctx_pop_fn)dlsym(cuda, "cuCtxPopCurrent_v2");
  g.cu.synchronize = (cu_ctx_synchronize_fn)dlsym(cuda, "cuCtxSynchronize");
}

static uint32_t attribute(CUdevice dev, CUdevice_attribute which) {
  int value = 0;
  if (!g.cu.attribute || g.cu.attribute(&value, which, dev) != CUDA_SUCCESS ||
      value < 0)
    return 0;
  return (uint32_t)value;
}

/* Describe device @p ordinal once, from the driver's attributes. */
static void describe_device(uint32_t ordinal) {
  pthread_mutex_lock(&g.pc_lock);
  for (int i = 0; i < g.described_count; i++) {
    if (g.devices_described[i] == ordinal) {
      pthread_mutex_unlock(&g.pc_lock);
      return;
    }
  }
  if (g.described_count <
      (int)(sizeof g.devices_described / sizeof g.devices_described[0]))
    g.devices_described[g.described_count++] = ordinal;
  pthread_mutex_unlock(&g.pc_lock);

  mprof_cupti_translate_device(g.tr, ordinal);
  CUdevice dev = 0;
  if (!g.cu.device_get || g.cu.device_get(&dev, (int)ordinal) != CUDA_SUCCESS)
    return;
  mprof_device_record rec;
  memset(&rec, 0, sizeof rec);
  rec.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  rec.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  rec.sm_count = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  rec.warp_size = attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  rec.max_threads_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  rec.max_threads_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  rec.max_blocks_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  if (rec.warp_size)
    rec.max_warps_per_sm = rec.max_threads_per_sm / rec.warp_size;
  rec.max_regs_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  rec.max_regs_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  rec.max_shared_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  rec.max_shared_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  rec.core_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  rec.memory_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  rec.memory_bus_width =
      attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  rec.l2_size = attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t bytes = 0;
  if (g.cu.total_mem && g.cu.total_mem(&bytes, dev) == CUDA_SUCCESS)
    rec.global_memory = bytes;
  CUuuid uuid;
  if (g.cu.uuid && g.cu.uuid(&uuid, dev) == CUDA_SUCCESS)
    memcpy(&rec.uuid_lo, uuid.bytes, sizeof rec.uuid_lo);
  char name[256] = "";
  if (g.cu.name && g.cu.name(name, (int)sizeof name, dev) != CUDA_SUCCESS)
    name[0] = '\0';
  name[sizeof name - 1] = '\0';
  mprof_cupti_translate_device_info(g.tr, ordinal, &rec, name);
}

/* ---- activity buffers --------------------------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records) {
  void *block = NULL;
  pthread_mutex_lock(&g.pool_lock);
  if (g.pool_count > 0)
    block = g.pool[--g.pool_count];
  pthread_mutex_unlock(&g.pool_lock);
  /* calloc: CUPTI was told (ZEROED_OUT_ACTIVITY_BUFFER) buffers come zeroed,
   * so it does not zero them on the application's thread. glibc's calloc is
   * 16-byte aligned; CUPTI needs 8. */
  if (!block)
    block = calloc(1, ACTIVITY_BUFFER_SIZE);
  *buffer = (uint8_t *)block;
  *size = block ? ACTIVITY_BUFFER_SIZE : 0;
  *max_records = 0;
}

static void release_buffer(uint8_t *buffer, size_t size) {
  if (!buffer)
    return;
  if (size == ACTIVITY_BUFFER_SIZE) {
    memset(buffer, 0, size);
    pthread_mutex_lock(&g.pool_lock);
    if (g.pool_count < ACTIVITY_POOL_MAX) {
      g.pool[g.pool_count++] = buffer;
      buffer = NULL;
    }
    pthread_mutex_unlock(&g.pool_lock);
  }
  free(buffer);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id,
                                      uint8_t *buffer, size_t size,
                                      size_t valid_size) {
  uint64_t started = cost_now();
  if (g.tr && buffer && valid_size) {
    CUpti_Activity *record = NULL;
    for (;;) {
      CUptiResult res = cuptiActivityGetNextRecord(buffer, valid_size, &record);
      if (res == CUPTI_ERROR_MAX_LIMIT_REACHED)
        break;
      if (!ok(res, "cuptiActivityGetNextRecord"))
        break;
      mprof_cupti_translate_activity(g.tr, record);
    }
  }
  if (g.tr) {
    size_t dropped = 0;
    if (ok(cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped),
           "cuptiActivityGetNumDroppedRecords") &&
        dropped) {
      mprof_cupti_translate_activity_dropped(g.tr, dropped);
      note("CUPTI dropped %zu activity records", dropped);
    }
  }
  release_buffer(buffer, size);
  cost_add(COST_BUFFERS, started, valid_size);
}

/* ---- PC sampling -------------------------------------------------------- */

static void pc_buffer_free(pc_buffer *b) {
  free(b->data.pPcData);
  free(b->reasons);
  memset(b, 0, sizeof *b);
}

static int pc_buffer_alloc(pc_buffer *b, size_t pcs, size_t reasons) {
  memset(b, 0, sizeof *b);
  b->data.size = sizeof b->data;
  b->data.collectNumPcs = pcs;
  b->data.pPcData =
      (CUpti_PCSamplingPCData *)calloc(pcs, sizeof *b->data.pPcData);
  b->reasons = (CUpti_PCSamplingStallReason *)calloc(
      pcs * (reasons ? reasons : 1), sizeof *b->reasons);
  if (!b->data.pPcData || !b->reasons) {
    pc_buffer_free(b);
    return -1;
  }
  for (size_t i = 0; i < pcs; i++) {
    b->data.pPcData[i].size = sizeof b->data.pPcData[i];
    b->data.pPcData[i].stallReason = b->reasons + i * reasons;
  }
  return 0;
}

static void pc_context_free(pc_context *c) {
  if (!c)
    return;
  pc_buffer_free(&c->config);
  pc_buffer_free(&c->drain);
  free(c->reason_index);
  free(c);
}

/* Hand one buffer's worth of PC data to the translator. */
static void pc_translate(pc_context *c, const CUpti_PCSamplingData *data) {
  if (!data->totalNumPcs && !data->totalSamples && !data->droppedSamples &&
      !data->nonUsrKernelsTotalSamples && !data->hardwareBufferFull)
    return;
  uint32_t drain = mprof_cupti_translate_next_drain(g.tr);
  mprof_cupti_translate_pc_data(g.tr, c->ordinal, data, drain);
}

static void pc_hardware_full(pc_context *c) {
  if (c->hardware_full)
    return;
  c->hardware_full = 1;
  char message[256];
  snprintf(message, sizeof message,
           "cuptiPCSamplingGetData: CUPTI_ERROR_OUT_OF_MEMORY (device %u: "
           "PC sampling hardware buffer full)",
           c->ordinal);
  if (mprof_cupti_translate_error(g.tr, message))
    warn("PC sampling hardware buffer overflowed on device %u; samples were "
         "lost (raise MPROF_PC_PERIOD or MPROF_PC_HW_BUFFER)",
         c->ordinal);
}

/* cuptiPCSamplingGetData until CUPTI has nothing decoded left, including the
 * records a range end parked in the configured buffer. pc_lock held. */
static void pc_drain_locked(pc_context *c) {
  if (c->hardware_full)
    return;
  CUpti_PCSamplingGetDataParams params;
  memset(&params, 0, sizeof params);
  params.size = CUpti_PCSamplingGetDataParamsSize;
  params.ctx = c->ctx;
  params.pcSamplingData = &c->drain.data;
  int idle_calls = 0;
  for (int calls = 0; calls < PC_MAX_GETDATA_CALLS; calls++) {
    CUpti_PCSamplingData *d = &c->drain.data;
    d->totalNumPcs = 0;
    d->remainingNumPcs = 0;
    d->totalSamples = 0;
    d->droppedSamples = 0;
    d->nonUsrKernelsTotalSamples = 0;
    d->hardwareBufferFull = 0;
    CUptiResult res = cuptiPCSamplingGetData(&params);
    if (res != CUPTI_SUCCESS) {
      if (d->hardwareBufferFull) {
        pc_translate(c, d);
        pc_hardware_full(c);
      } else {
        ok(res, "cuptiPCSamplingGetData");
      }
      return;
    }
    pc_translate(c, d);
    if (d->remainingNumPcs == 0 && c->config.data.totalNumPcs == 0)
      return;
    /* CUPTI said more is pending but hands out nothing: do not spin. */
    if (d->totalNumPcs == 0 && ++idle_calls >= 3)
      break;
  }
  /* NVIDIA's sample expects GetData to empty the configured buffer after a
   * range end. Should a CUPTI leave records there anyway, read them before
   * the next range end overwrites them. */
  CUpti_PCSamplingData *config = &c->config.data;
  if (config->totalNumPcs > 0) {
    pc_translate(c, config);
    config->totalNumPcs = 0;
    config->totalSamples = 0;
    config->droppedSamples = 0;
    config->nonUsrKernelsTotalSamples = 0;
    config->hardwareBufferFull = 0;
    g.config_direct_reads++;
  }
}

/* The drain order GPU.md found to lose nothing: GetData until empty, then
 * Disable, then read what Disable flushed into the configured buffer. */
static void pc_finish_locked(pc_context *c) {
  pc_drain_locked(c);
  CUpti_PCSamplingData *config = &c->config.data;
  /* Counters already reported through GetData must not be counted twice;
   * Disable fills in what it flushes. */
  config->totalSamples = 0;
  config->droppedSamples = 0;
  config->nonUsrKernelsTotalSamples = 0;
  config->hardwareBufferFull = 0;
  CUpti_PCSamplingDisableParams params;
  memset(&params, 0, sizeof params);
  params.size = CUpti_PCSamplingDisableParamsSize;
  params.ctx = c->ctx;
  if (ok(cuptiPCSamplingDisable(&params), "cuptiPCSamplingDisable"))
    pc_translate(c, config);
}

static pc_context *pc_find_locked(CUcontext ctx) {
  for (pc_context *c = g.pcs; c; c = c->next)
    if (c->ctx == ctx)
      return c;
  return NULL;
}

static void pc_drain_context(CUcontext ctx) {
  uint64_t started = cost_now();
  pthread_mutex_lock(&g.pc_lock);
  pc_context *c = pc_find_locked(ctx);
  if (c)
    pc_drain_locked(c);
  pthread_mutex_unlock(&g.pc_lock);
  cost_add(COST_DRAIN_APP, started, 0);
}

static const char *
pc_attribute_name(CUpti_PCSamplingConfigurationAttributeType type) {
  switch (type) {
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
    return "SAMPLING_PERIOD";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
    return "STALL_REASON";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
    return "SCRATCH_BUFFER_SIZE";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
    return "HARDWARE_BUFFER_SIZE";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
    return "COLLECTION_MODE";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT:
    return "OUTPUT_DATA_FORMAT";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
    return "SAMPLING_DATA_BUFFER";
  case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN:
    return "WORKER_THREAD_PERIODIC_SLEEP_SPAN";
  default: return "ATTRIBUTE";
  }
}

static int pc_configure(pc_context *c) {
  CUpti_PCSamplingConfigurationInfo info[8];
  memset(info, 0, sizeof info);
  /* Mandatory settings first: a retry keeps only these four. */
  info[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  info[0].attributeData.stallReasonData.stallReasonCount = c->reason_count;
  info[0].attributeData.stallReasonData.pStallReasonIndex = c->reason_index;
  info[1].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  info[1].attributeData.collectionModeData.collectionMode =
      g.cfg.pc_mode == MPROF_CUPTI_PC_SERIALIZED
          ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
          : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  info[2].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  info[2].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  info[3].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  info[3].attributeData.samplingDataBufferData.samplingDataBuffer =
      &c->config.data;
  info[4].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  info[4].attributeData.samplingPeriodData.samplingPeriod = g.cfg.pc_period;
  info[5].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  info[5].attributeData.hardwareBufferSizeData.hardwareBufferSize =
      (size_t)g.cfg.pc_hw_buffer;
  info[6].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  info[6].attributeData.scratchBufferSizeData.scratchBufferSize =
      PC_SCRATCH_BUFFER_SIZE;
  info[7].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
  info[7]
      .attributeData.workerThreadPeriodicSleepSpanData
      .workerThreadPeriodicSleepSpan = PC_WORKER_SLEEP_MS;

  CUpti_PCSamplingConfigurationInfoParams params;
  memset(&params, 0, sizeof params);
  params.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  params.ctx = c->ctx;
  params.numAttributes = 8;
  params.pPCSamplingConfigurationInfo = info;
  CUptiResult res = cuptiPCSamplingSetConfigurationAttribute(&params);
  if (res == CUPTI_SUCCESS)
    return 1;
  for (size_t i = 0; i < 8; i++) {
    if (info[i].attributeStatus != CUPTI_SUCCESS) {
      char what[128];
      snprintf(what, sizeof what,
               "cuptiPCSamplingSetConfigurationAttribute(%s)",
               pc_attribute_name(info[i].attributeType));
      ok(info[i].attributeStatus, what);
    }
  }
  ok(res, "cuptiPCSamplingSetConfigurationAttribute");
  /* Fall back to CUPTI's defaults for period and buffers. */
  params.numAttributes = 4;
  for (size_t i = 0; i < 4; i++)
    info[i].attributeStatus = CUPTI_SUCCESS;
  return ok(cuptiPCSamplingSetConfigurationAttribute(&params),
            "cuptiPCSamplingSetConfigurationAttribute(defaults)");
}

/* What CUPTI actually applied, per device, for the trace's reader. */
static void pc_report_configuration(pc_context *c) {
  CUpti_PCSamplingConfigurationInfo info[3];
  memset(info, 0, sizeof info);
  info[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  info[1].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  info[2].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  CUpti_PCSamplingConfigurationInfoParams params;
  memset(&params, 0, sizeof params);
  params.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  params.ctx = c->ctx;
  params.numAttributes = 3;
  params.pPCSamplingConfigurationInfo = info;
  if (!ok(cuptiPCSamplingGetConfigurationAttribute(&params),
          "cuptiPCSamplingGetConfigurationAttribute"))
    return;
  char key[64];
  snprintf(key, sizeof key, "pc.device.%u.period", c->ordinal);
  meta_u64(key, info[0].attributeData.samplingPeriodData.samplingPeriod);
  snprintf(key, sizeof key, "pc.device.%u.hw_buffer", c->ordinal);
  meta_u64(key,
           info[1].attributeData.hardwareBufferSizeData.hardwareBufferSize);
  snprintf(key, sizeof key, "pc.device.%u.scratch_buffer", c->ordinal);
  meta_u64(key, info[2].attributeData.scratchBufferSizeData.scratchBufferSize);
  note("PC sampling on device %u: period 2^%u, hardware buffer %zu bytes",
       c->ordinal, info[0].attributeData.samplingPeriodData.samplingPeriod,
       info[1].attributeData.hardwareBufferSizeData.hardwareBufferSize);
}

static int pc_stall_reasons(pc_context *c) {
  size_t count = 0;
  CUpti_PCSamplingGetNumStallReasonsParams num;
  memset(&num, 0, sizeof num);
  num.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  num.ctx = c->ctx;
  num.numStallReasons = &count;
  if (!ok(cuptiPCSamplingGetNumStallReasons(&num),
          "cuptiPCSamplingGetNumStallReasons") ||
      count == 0 || count > 4096)
    return 0;
  char **names = (char **)calloc(count, sizeof *names);
  char *name_block = (char *)calloc(count, CUPTI_STALL_REASON_STRING_SIZE);
  c->reason_index = (uint32_t *)calloc(count, sizeof *c->reason_index);
  int success = 0;
  if (names && name_block && c->reason_index) {
    for (size_t i = 0; i < count; i++)
      names[i] = name_block + i * CUPTI_STALL_REASON_STRING_SIZE;
    CUpti_PCSamplingGetStallReasonsParams get;
    memset(&get, 0, sizeof get);
    get.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    get.ctx = c->ctx;
    get.numStallReasons = count;
    get.stallReasonIndex = c->reason_index;
    get.stallReasons = names;
    if (ok(cuptiPCSamplingGetStallReasons(&get),
           "cuptiPCSamplingGetStallReasons")) {
      for (size_t i = 0; i < count; i++)
        names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
      mprof_cupti_translate_stall_reasons(g.tr, c->ordinal, count,
                                          c->reason_index, names);
      c->reason_count = count;
      success = 1;
    }
  }
  free(names);
  free(name_block);
  return success;
}

static void pc_not_permitted(uint32_t ordinal) {
  g.pc_allowed = 0;
  mprof_cupti_translate_pc_error(g.tr, ordinal, "insufficient_privileges");
  warn("PC sampling is not permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): "
       "the driver restricts profiling to admin users "
       "(NVreg_RestrictProfilingToAdminUsers=1); recording the timeline "
       "only");
}

static void pc_setup(CUcontext ctx, uint32_t ordinal) {
  pthread_mutex_lock(&g.pc_lock);
  if (!g.pc_allowed)
    goto out;
  for (pc_context *other = g.pcs; other; other = other->next) {
    if (other->ordinal == ordinal) {
      /* CUPTI samples one context per GPU at a time. */
      note("device %u already sampled through another context; this one "
           "is not sampled",
           ordinal);
      char text[96];
      snprintf(text, sizeof text,
               "a second context on device %u was not PC-sampled", ordinal);
      meta("pc.note", text);
      goto out;
    }
  }
  pc_context *c = (pc_context *)calloc(1, sizeof *c);
  if (!c)
    goto out;
  c->ctx = ctx;
  c->ordinal = ordinal;

  CUpti_PCSamplingEnableParams enable;
  memset(&enable, 0, sizeof enable);
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = ctx;
  CUptiResult res = cuptiPCSamplingEnable(&enable);
  if (res == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
      res == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
    ok(res, "cuptiPCSamplingEnable");
    pc_not_permitted(ordinal);
    pc_context_free(c);
    goto out;
  }
  if (!ok(res, "cuptiPCSamplingEnable")) {
    /* One GPU of a machine may not support sampling: say which. */
    mprof_cupti_translate_pc_error(g.tr, ordinal, result_name(res));
    pc_context_free(c);
    goto out;
  }
  int ready =
      pc_stall_reasons(c) &&
      pc_buffer_alloc(&c->config, PC_CONFIG_BUFFER_PCS, c->reason_count) == 0 &&
      pc_buffer_alloc(&c->drain, PC_DRAIN_BUFFER_PCS, c->reason_count) == 0 &&
      pc_configure(c);
  if (!ready) {
    CUpti_PCSamplingDisableParams disable;
    memset(&disable, 0, sizeof disable);
    disable.size = CUpti_PCSamplingDisableParamsSize;
    disable.ctx = ctx;
    ok(cuptiPCSamplingDisable(&disable), "cuptiPCSamplingDisable");
    mprof_cupti_translate_pc_error(g.tr, ordinal, "setup_failed");
    pc_context_free(c);
    goto out;
  }
  pc_report_configuration(c);
  c->next = g.pcs;
  g.pcs = c;
out:
  pthread_mutex_unlock(&g.pc_lock);
}

static void pc_teardown(CUcontext ctx) {
  pthread_mutex_lock(&g.pc_lock);
  for (pc_context **link = &g.pcs; *link; link = &(*link)->next) {
    pc_context *c = *link;
    if (c->ctx != ctx)
      continue;
    pc_finish_locked(c);
    *link = c->next;
    pc_context_free(c);
    break;
  }
  pthread_mutex_unlock(&g.pc_lock);
}

/* ---- callbacks ---------------------------------------------------------- */

static int context_device(CUcontext ctx, uint32_t *ordinal) {
  return ok(cuptiGetDeviceId(ctx, ordinal), "cuptiGetDeviceId");
}

static void on_module_loaded(const CUpti_ResourceData *rd) {
  const CUpti_ModuleResourceData *mod =
      (const CUpti_ModuleResourceData *)rd->resourceDescriptor;
  if (mod && mod->pCubin && mod->cubinSize) {
    uint64_t started = cost_now();
    CUpti_GetCubinCrcParams crc;
    memset(&crc, 0, sizeof crc);
    crc.size = CUpti_GetCubinCrcParamsSize;
    crc.cubinSize = mod->cubinSize;
    crc.cubin = mod->pCubin;
    uint32_t ordinal = 0;
    if (ok(cuptiGetCubinCrc(&crc), "cuptiGetCubinCrc") &&
        context_device(rd->context, &ordinal)) {
      mprof_cupti_translate_module(g.tr, crc.cubinCrc, ordinal, mod->pCubin,
                                   mod->cubinSize);
      note("module %u loaded on device %u: %zu bytes, crc %016llx",
           mod->moduleId, ordinal, mod->cubinSize,
           (unsigned long long)crc.cubinCrc);
    }
    cost_add(COST_MODULES, started, mod->cubinSize);
  }
  /* A module load ends a PC-sampling range: CUPTI parks its records in the
   * configured buffer, and GetData must collect them. */
  pc_drain_context(rd->context);
}

/* Keep the list of live contexts the exit handler waits for. */
static void context_seen(CUcontext ctx, int alive) {
  pthread_mutex_lock(&g.context_lock);
  int at = -1;
  for (int i = 0; i < g.context_count; i++)
    if (g.contexts[i] == ctx)
      at = i;
  if (alive && at < 0 && g.context_count < MAX_CONTEXTS)
    g.contexts[g.context_count++] = ctx;
  else if (!alive && at >= 0)
    g.contexts[at] = g.contexts[--g.context_count];
  pthread_mutex_unlock(&g.context_lock);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void *cbdata) {
  (void)userdata;
  if (!running() || !cbdata)
    return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const CUpti_ResourceData *rd = (const CUpti_ResourceData *)cbdata;
    uint32_t ordinal = 0;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
      context_seen(rd->context, 1);
      if (!context_device(rd->context, &ordinal))
        return;
      describe_device(ordinal);
      /* PM before PC: counter availability is read before any session. */
      mprof_cupti_pm_device(ordinal);
      if (g.cfg.pc_mode != MPROF_CUPTI_PC_OFF)
        pc_setup(rd->context, ordinal);
      return;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      context_seen(rd->context, 0);
      pc_teardown(rd->context);
      return;
    case CUPTI_CBID_RESOURCE_MODULE_LOADED: on_module_loaded(rd); return;
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      pc_drain_context(rd->context);
      return;
    default: return;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    /* Serialized mode: each launch is its own range; collect it now, before
     * the configured buffer has to hold more than one kernel's records. */
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)cbdata;
    if (cd->callbackSite == CUPTI_API_EXIT)
      pc_drain_context(cd->context);
  }
}

/* ---- drain thread ------------------------------------------------------- */

static void drain_all_pc(void) {
  pthread_mutex_lock(&g.pc_lock);
  for (pc_context *c = g.pcs; c; c = c->next)
    pc_drain_locked(c);
  pthread_mutex_unlock(&g.pc_lock);
}

/* Hand CUPTI's finished buffers to the translator and commit them. */
static void flush_and_checkpoint(int forced) {
  drain_all_pc();
  if (forced)
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
       "cuptiActivityFlushAll(FORCED)");
  else
    ok(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  if (mprof_cupti_translate_checkpoint(g.tr, monotonic_raw_ns()) != 0)
    mprof_cupti_translate_error(g.tr, mprof_error_last());
}

static void *drain_thread(void *arg) {
  (void)arg;
  unsigned ticks = 0;
  while (!atomic_load(&g.thread_stop)) {
    struct pollfd wake = {g.wake_pipe[0], POLLIN, 0};
    if (poll(&wake, 1, (int)DRAIN_PERIOD_MS) > 0) {
      char bytes[64];
      while (read(g.wake_pipe[0], bytes, sizeof bytes) > 0)
        ;
    }
    if (atomic_load(&g.thread_stop))
      break;
    int request = atomic_exchange(&g.flush_request, 0);
    if (!running())
      continue;
    if (request) {
      flush_and_checkpoint(request == 2);
      atomic_fetch_add(&g.flush_done, 1);
      ticks = 0;
      continue;
    }
    uint64_t started = cost_now();
    if (++ticks % FLUSH_EVERY_DRAINS == 0)
      flush_and_checkpoint(0);
    else
      drain_all_pc();
    cost_add(COST_DRAIN_THREAD, started, 0);
  }
  return NULL;
}

static void wake_drain_thread(void) {
  char byte = 1;
  if (g.wake_pipe[1] >= 0 && write(g.wake_pipe[1], &byte, 1) < 0) {
    /* a full pipe already holds a wake-up */
  }
}

static void start_drain_thread(void) {
  if (pipe2(g.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g.wake_pipe[0] = g.wake_pipe[1] = -1;
    mprof_cupti_translate_error(g.tr, "pipe2(drain thread): failed");
    return;
  }
  /* The thread takes no signals: they belong to the program. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&g.thread, NULL, drain_thread, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) {
    g.thread_started = 1;
  } else {
    char message[128];
    snprintf(message, sizeof message, "pthread_create(drain thread): %s",
             strerror(rc));
    mprof_cupti_translate_error(g.tr, message);
  }
}

static void stop_drain_thread(void) {
  if (!g.thread_started)
    return;
  atomic_store(&g.thread_stop, 1);
  wake_drain_thread();
  pthread_join(g.thread, NULL);
  g.thread_started = 0;
}

/* ---- signals ------------------------------------------------------------ */

static void manifest_event(const char *word, long value) {
  char line[4200];
  if (mprof_cupti_manifest_format(line, sizeof line, word, (long)g.pid, value,
                                  g.cfg.output))
    mprof_cupti_manifest_line(g.cfg.manifest, line);
}

/* Sleep @p ms without anything a signal handler may not call. */
static void pause_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static int signal_slot(int signo) {
  for (size_t i = 0; i < CAUGHT_SIGNAL_COUNT; i++)
    if (caught_signals[i] == signo)
      return (int)i;
  return -1;
}

static void on_signal(int signo, siginfo_t *info, void *context) {
  int saved = errno;
  int slot = signal_slot(signo);
  struct sigaction old;
  memset(&old, 0, sizeof old);
  old.sa_handler = SIG_DFL;
  if (slot >= 0)
    old = g.old_actions[slot];
  int dies = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
  int state = atomic_load(&g.state);
  if (getpid() == g.pid && !atomic_load(&g.forked) &&
      (state == STATE_RUNNING || state == STATE_DISABLED) && g.tr) {
    /* The drain thread flushes CUPTI for us (it is not the interrupted
     * thread); if it cannot within the bound, commit what the writer has. */
    int flushed = 0;
    if (g.thread_started && state == STATE_RUNNING) {
      unsigned before = atomic_load(&g.flush_done);
      atomic_store(&g.flush_request, dies ? 2 : 1);
      wake_drain_thread();
      for (unsigned waited = 0; waited < FATAL_FLUSH_WAIT_MS; waited += 5) {
        if (atomic_load(&g.flush_done) != before) {
          flushed = 1;
          break;
        }
        pause_ms(5);
      }
    }
    if (!flushed)
      mprof_cupti_translate_checkpoint_signal(g.tr, signo, monotonic_raw_ns());
    if (dies)
      manifest_event("signal", signo);
  }
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction)
      old.sa_sigaction(signo, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(signo);
  } else if (old.sa_handler == SIG_DFL) {
    /* Default action: delivered again as soon as this handler returns (the
     * signal is blocked until then), now without us. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
    raise(signo);
  }
  errno = saved;
}

static void install_signal_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < CAUGHT_SIGNAL_COUNT; i++) {
    struct sigaction old;
    if (sigaction(caught_signals[i], NULL, &old) != 0)
      continue;
    /* A signal the program ignores stays ignored. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
      continue;
    g.old_actions[i] = old;
    sigaction(caught_signals[i], &sa, NULL);
  }
}

/* A forked child shares nothing with the parent's capture: it never writes
 * the parent's trace (CUDA itself is unusable in such a child). */
static void after_fork_in_child(void) {
  atomic_store(&g.forked, 1);
  atomic_store(&g.state, STATE_DISABLED);
  g.thread_started = 0;
}

/* ---- exit --------------------------------------------------------------- */

/* Work a program left running when it exited without synchronising would
 * reach CUPTI without timestamps: give it a bounded time to finish. */
typedef struct exit_wait {
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  int done;
  int synchronized;
} exit_wait;

static void *synchronize_contexts(void *arg) {
  exit_wait *wait = (exit_wait *)arg;
  CUcontext contexts[MAX_CONTEXTS];
  pthread_mutex_lock(&g.context_lock);
  int count = g.context_count;
  memcpy(contexts, g.contexts, sizeof contexts);
  pthread_mutex_unlock(&g.context_lock);
  int synchronized = 0;
  for (int i = 0; i < count; i++) {
    CUcontext popped = NULL;
    if (g.cu.push(contexts[i]) != CUDA_SUCCESS)
      continue;
    if (g.cu.synchronize() == CUDA_SUCCESS)
      synchronized++;
    g.cu.pop(&popped);
  }
  pthread_mutex_lock(&wait->lock);
  wait->done = 1;
  wait->synchronized = synchronized;
  pthread_cond_signal(&wait->done_cond);
  pthread_mutex_unlock(&wait->lock);
  return NULL;
}

static void wait_for_contexts(void) {
  if (!g.cu.push || !g.cu.pop || !g.cu.synchronize || !g.cfg.exit_wait_ms ||
      !g.context_count)
    return;
  /* Leaked on a timeout: the helper may still be inside the driver. */
  static exit_wait wait = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                           0, 0};
  uint64_t started = monotonic_raw_ns();
  pthread_t helper;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&helper, NULL, synchronize_contexts, &wait);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += g.cfg.exit_wait_ms / 1000;
  until.tv_nsec += (long)(g.cfg.exit_wait_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&wait.lock);
  while (!wait.done &&
         pthread_cond_timedwait(&wait.done_cond, &wait.lock, &until) == 0)
    ;
  int done = wait.done;
  pthread_mutex_unlock(&wait.lock);
  if (done)
    pthread_join(helper, NULL);
  else
    pthread_detach(helper);
  meta("exit.wait", done ? "finished" : "timed_out");
  meta_u64("exit.wait_ms", (monotonic_raw_ns() - started) / 1000000u);
  if (!done)
    warn("the GPU was still busy %u ms after the program exited; launches "
         "still running are recorded without timestamps",
         g.cfg.exit_wait_ms);
}

static void at_exit(void) {
  /* A forked child inherits this handler and the writer's descriptors; only
   * the process that opened the trace may finish it. */
  if (getpid() != g.pid || atomic_load(&g.forked) ||
      atomic_exchange(&g.exiting, 1))
    return;
  stop_drain_thread();
  if (running()) {
    wait_for_contexts();
    uint64_t started = cost_now();
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
       "cuptiActivityFlushAll(FORCED)");
    cost_add(COST_EXIT_FLUSH, started, 0);
    started = cost_now();
    pthread_mutex_lock(&g.pc_lock);
    while (g.pcs) {
      pc_context *c = g.pcs;
      pc_finish_locked(c);
      g.pcs = c->next;
      pc_context_free(c);
    }
    pthread_mutex_unlock(&g.pc_lock);
    cost_add(COST_EXIT_PC, started, 0);
    mprof_cupti_pm_finish();
  }
  if (g.config_direct_reads)
    meta_u64("pc.config_buffer_direct_reads", g.config_direct_reads);
  write_anchor("clock.end");
  /* From here on every callback returns at once. */
  atomic_store(&g.state, STATE_FINISHED);
  uint64_t write_started = cost_now();
  int rc = mprof_cupti_translate_finish(g.tr);
  cost_add(COST_EXIT_WRITE, write_started, 0);
  mprof_cupti_translate_stats stats;
  mprof_cupti_translate_get_stats(g.tr, &stats);
  cost_print(&stats);
  manifest_event("end", rc == 0 ? 0 : 1);
  if (rc != 0)
    warn("could not write %s: %s", g.cfg.output, mprof_error_last());
  else
    note("wrote %s: %llu launches, %llu memops, %llu ranges, %llu PC "
         "records, %llu of %llu cubins kept, %llu errors",
         g.cfg.output, (unsigned long long)stats.launches,
         (unsigned long long)stats.memops, (unsigned long long)stats.ranges,
         (unsigned long long)stats.pc_records,
         (unsigned long long)stats.modules_kept,
         (unsigned long long)stats.modules, (unsigned long long)stats.errors);
  /* The translator stays allocated: a late CUPTI callback finds it finished
   * and does nothing. */
}

/* ---- start-up ----------------------------------------------------------- */

static const char *real_getenv(void *userdata, const char *name) {
  (void)userdata;
  return getenv(name);
}

static void write_cmdline(void) {
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return;
  char buffer[8192];
  size_t n = fread(buffer, 1, sizeof buffer - 1, f);
  fclose(f);
  while (n > 0 && buffer[n - 1] == '\0')
    n--;
  for (size_t i = 0; i < n; i++)
    if (buffer[i] == '\0')
      buffer[i] = ' ';
  buffer[n] = '\0';
  meta("cmdline", buffer);
}

static void write_nvidia_driver(void) {
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (!f)
    return;
  char line[512];
  if (fgets(line, sizeof line, f)) {
    /* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04
     * Release Build ...": the version is the first dotted number. */
    char *save = NULL;
    for (char *word = strtok_r(line, " \t\n", &save); word;
         word = strtok_r(NULL, " \t\n", &save)) {
      size_t digits = strspn(word, "0123456789.");
      if (digits == strlen(word) && word[0] != '.' && strchr(word, '.')) {
        meta("nvidia.driver_version", word);
        break;
      }
    }
  }
  fclose(f);
}

static void write_start_meta(const char *host) {
  meta("tool", "mprof");
  meta("tool.version", MPROF_VERSION_STRING);
  meta("producer", "cupti");
  meta("capture.mode", "cupti");
  meta("host", host);
  meta_u64("pid", (uint64_t)g.pid);
  meta_u64("ppid", (uint64_t)getppid());
  const char *rank = NULL, *source = NULL, *local_rank = NULL;
  mprof_cupti_rank(real_getenv, NULL, &rank, &source, &local_rank);
  if (rank) {
    meta("rank", rank);
    meta("rank.source", source);
  }
  if (local_rank)
    meta("local_rank", local_rank);
  const char *pattern = getenv("MPROF_OUTPUT");
  meta("output.pattern", pattern && *pattern ? pattern : "trace.mprof");
  write_cmdline();
  meta("pc.mode", mprof_cupti_pc_mode_name(g.cfg.pc_mode));
  if (g.cfg.pc_mode != MPROF_CUPTI_PC_OFF) {
    meta_u64("pc.period", g.cfg.pc_period);
    meta_u64("pc.hw_buffer", g.cfg.pc_hw_buffer);
    meta_u64("pc.scratch_buffer", PC_SCRATCH_BUFFER_SIZE);
  }
  if (g.cfg.kernel_regex[0])
    meta("kernel_regex", g.cfg.kernel_regex);
  meta("sass", !g.cfg.keep_sass      ? "off"
               : g.cfg.whole_modules ? "used_modules"
                                     : "used_functions");
  write_nvidia_driver();
}

/* Directory part of @p path, for the cubin spill file. */
static void directory_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(dir, size, ".");
  } else if (slash == path) {
    snprintf(dir, size, "/");
  } else {
    snprintf(dir, size, "%.*s", (int)(slash - path), path);
  }
}

static int subscribe(void) {
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
  memset(holder, 0, sizeof holder);
  CUpti_SubscriberParams params;
  memset(&params, 0, sizeof params);
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "mprof";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  CUptiResult res =
      cuptiSubscribe_v2(&g.subscriber, on_callback, NULL, &params);
  if (res == CUPTI_SUCCESS)
    return 1;
  ok(res, "cuptiSubscribe_v2");
  if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    const char *who = holder[0] ? holder : "another CUPTI client";
    char reason[160];
    snprintf(reason, sizeof reason, "another CUPTI subscriber: %s", who);
    meta("capture.disabled", reason);
    warn("%s is already attached (nsys, ncu, a debugger or an in-process "
         "profiler?); mprof records nothing for this process",
         who);
  } else {
    char reason[160];
    snprintf(reason, sizeof reason, "cuptiSubscribe_v2: %s", result_name(res));
    meta("capture.disabled", reason);
    warn("cannot attach to CUPTI (%s); mprof records nothing for this "
         "process",
         result_name(res));
  }
  return 0;
}

static void enable_activity(CUpti_ActivityKind kind, const char *name) {
  char what[96];
  snprintf(what, sizeof what, "cuptiActivityEnable(%s)", name);
  ok(cuptiActivityEnable(kind), what);
}

static void enable_resource(CUpti_CallbackId cbid, const char *name) {
  char what[96];
  snprintf(what, sizeof what, "cuptiEnableCallback(%s)", name);
  ok(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid),
     what);
}

static void setup_activity(void) {
  if (ok(cuptiActivityRegisterTimestampCallback(monotonic_raw_ns),
         "cuptiActivityRegisterTimestampCallback"))
    meta("clock", "CLOCK_MONOTONIC_RAW");
  else
    meta("clock", "CLOCK_REALTIME");

  uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                               &zeroed_size, &zeroed),
     "cuptiActivitySetAttribute(ZEROED_OUT_ACTIVITY_BUFFER)");
  if (!ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
          "cuptiActivityRegisterCallbacks")) {
    warn("cannot receive CUPTI activity buffers; the trace has no timeline");
    return;
  }
  /* Never CUPTI_ACTIVITY_KIND_KERNEL: it serialises every kernel. */
  enable_activity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
  enable_activity(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY");
  enable_activity(CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2");
  enable_activity(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET");
  enable_activity(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
  enable_activity(CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA");
  /* Device records are emitted at driver initialisation; EnableAndDump
   * also returns those of devices CUPTI already knows. */
  ok(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE),
     "cuptiActivityEnableAndDump(DEVICE)");
}

static void setup_callbacks(void) {
  enable_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, "CONTEXT_CREATED");
  enable_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
                  "CONTEXT_DESTROY_STARTING");
  enable_resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, "MODULE_LOADED");
  enable_resource(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
                  "MODULE_UNLOAD_STARTING");
  if (g.cfg.pc_mode != MPROF_CUPTI_PC_SERIALIZED || !g.pc_allowed)
    return;
  static const CUpti_CallbackId launches[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
  };
  for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++)
    ok(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                           launches[i]),
       "cuptiEnableCallback(launch)");
}

int InitializeInjection(void) {
  static atomic_int once;
  if (atomic_exchange(&once, 1))
    return 1;
  uint64_t started = cost_now();
  g.pid = getpid();
  char host[256] = "";
  if (gethostname(host, sizeof host) != 0)
    host[0] = '\0';
  host[sizeof host - 1] = '\0';
  mprof_cupti_config_load(&g.cfg, real_getenv, NULL, (long)g.pid, host);
  /* On the H200 (CUPTI 13.0) PC sampling failed with PM sampling active:
   * PM sampling, when asked for, runs alone. */
  int pm_took_pc = g.cfg.pm_enabled && g.cfg.pc_mode != MPROF_CUPTI_PC_OFF;
  if (pm_took_pc)
    g.cfg.pc_mode = MPROF_CUPTI_PC_OFF;
  for (unsigned i = 0; i < g.cfg.problem_count; i++)
    warn("%s", g.cfg.problems[i]);

  mprof_writer *w = NULL;
  int renamed = 0;
  if (mprof_cupti_open_output(&w, g.cfg.output, sizeof g.cfg.output,
                              (long)g.pid, g.cfg.output_has_pid,
                              &renamed) != 0) {
    warn("cannot write %s (%s); mprof records nothing for this process",
         g.cfg.output, mprof_error_last());
    atomic_store(&g.state, STATE_DISABLED);
    return 1;
  }
  char spill_dir[4096];
  directory_of(g.cfg.output, spill_dir, sizeof spill_dir);
  mprof_cupti_translate_options opts;
  memset(&opts, 0, sizeof opts);
  opts.kernel_regex = g.cfg.kernel_regex;
  opts.keep_sass = g.cfg.keep_sass;
  opts.spill_dir = spill_dir;
  opts.whole_modules = g.cfg.whole_modules;
  if (mprof_cupti_translate_new(&g.tr, w, &opts) != 0) {
    mprof_writer_abort(w);
    warn("out of memory; mprof records nothing for this process");
    atomic_store(&g.state, STATE_DISABLED);
    return 1;
  }
  for (unsigned i = 0; i < g.cfg.problem_count; i++)
    mprof_cupti_translate_error(g.tr, g.cfg.problems[i]);
  write_start_meta(host);
  mprof_cupti_pm_init(g.tr, &g.cfg);
  if (renamed)
    note("another process of this run writes the default name; this one "
         "writes %s",
         g.cfg.output);
  manifest_event("start", (long)getppid());
  if (pm_took_pc)
    meta("pc.note", "PC sampling off: PM sampling (--pm on) runs alone, as "
                    "the two failed together on the H200 with CUPTI 13.0");
  /* Registered before anything can fail, so the trace always gets written:
   * even a disabled run explains itself in META. */
  atexit(at_exit);
  pthread_atfork(NULL, NULL, after_fork_in_child);
  /* A first checkpoint at once: a process that dies in its first second
   * still leaves a trace that says what it was. */
  if (mprof_cupti_translate_checkpoint(g.tr, monotonic_raw_ns()) != 0)
    mprof_cupti_translate_error(g.tr, mprof_error_last());
  install_signal_handlers();

  uint32_t version = 0;
  if (ok(cuptiGetVersion(&version), "cuptiGetVersion"))
    meta_u64("cupti.version", version);
  meta_u64("cupti.api_version", CUPTI_API_VERSION);
  /* CUpti_PCSamplingPCData grew in CUPTI 12.4 and the library strides the
   * array with the size we were built with: never mix older libraries. */
  g.pc_allowed = g.cfg.pc_mode != MPROF_CUPTI_PC_OFF;
  if (g.pc_allowed && version < 130000) {
    g.pc_allowed = 0;
    meta("pc.error", "cupti_too_old");
    mprof_cupti_translate_error(g.tr, "cuptiGetVersion: older than 13.0; PC "
                                      "sampling disabled");
  }

  driver_load();
  int driver_version = 0;
  if (g.cu.driver_version &&
      g.cu.driver_version(&driver_version) == CUDA_SUCCESS)
    meta_u64("cuda.driver_version", (uint64_t)driver_version);

  if (!subscribe()) {
    atomic_store(&g.state, STATE_DISABLED);
    return 1;
  }
  setup_activity();
  setup_callbacks();
  write_anchor("clock.anchor");
  atomic_store(&g.state, STATE_RUNNING);
  start_drain_thread();
  cost_add(COST_STARTUP, started, 0);
  note("recording to %s (PC sampling %s, period 2^%u)", g.cfg.output,
       g.pc_allowed ? mprof_cupti_pc_mode_name(g.cfg.pc_mode) : "off",
       g.cfg.pc_period);
  return 1;
}

/* NVTX_INJECTION64_PATH points here too: hand NVTX to CUPTI so ranges arrive
 * as CUPTI_ACTIVITY_KIND_MARKER records. NVTX wants 1 for success. */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) {
  void *table = NULL;
  memcpy(&table, &get_export_table, sizeof table);
  return cuptiNvtxInitialize2(table) == CUPTI_SUCCESS ? 1 : 0;
}
