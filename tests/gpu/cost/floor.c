/*
 * The floor of CUPTI's own cost: a minimal injection library with the same
 * activity kinds and PC-sampling settings as libmprof-cupti.so, that keeps
 * nothing. It walks every activity record and drains every PC buffer (what
 * CUPTI needs from any subscriber), and writes no trace, captures no module
 * and disassembles nothing. tests/gpu/capture_cost.sh compares `mprof
 * record` with it: what the producer adds beyond this is mprof's own cost.
 *
 * build: g++ -O2 -fPIC -c floor_pm.cpp -I$CUDA/include &&
 *        gcc -O2 -shared -fPIC floor.c floor_pm.o -o libfloor.so
 *        -I$CUDA/include -L$CUPTI_LIB -lcupti -lpthread -lstdc++
 * use:   CUDA_INJECTION64_PATH=$PWD/libfloor.so ./program
 * env:   MPROF_PC_PERIOD (default 14), MPROF_PC_MODE=off (activity only),
 *        MPROF_NO_API_CALLS=1 (no per-call API records, as the producer),
 *        MPROF_PM=on: PM sampling instead of PC sampling, as `mprof record
 *        --pm on` does (floor_pm.cpp; MPROF_PM_INTERVAL in ns)
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <cupti_pcsampling.h>

#define ACTIVITY_BUFFER_SIZE (1u << 20)
#define CONFIG_PCS 16384
#define DRAIN_PCS 4096
#define SCRATCH_BYTES (16u << 20)
#define HW_BUFFER_BYTES ((size_t)512 << 20)
#define WORKER_SLEEP_MS 20u
#define DRAIN_PERIOD_MS 100

int InitializeInjection(void) __attribute__((visibility("default")));

/* floor_pm.cpp (C++: CUPTI's profiler host header is C++ only) */
void floor_pm_setup(CUcontext ctx, uint64_t interval_ns);
void floor_pm_finish(void);

typedef struct pcbuf {
  CUpti_PCSamplingData data;
  CUpti_PCSamplingStallReason *reasons;
} pcbuf;

static struct {
  CUpti_SubscriberHandle sub;
  int pc_on;
  uint64_t pm_interval_ns; /* MPROF_PM=on: PM sampling at this interval */
  pthread_mutex_t lock;
  CUcontext ctx; /* the sampled context (one GPU is enough for the floor) */
  size_t reason_count;
  uint32_t *reason_index;
  pcbuf config, drain;
  pthread_t thread;
  atomic_int stop;
  atomic_ullong kernels, records, pcs, samples;
} f = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t CUPTIAPI now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size,
                               size_t *max_records) {
  *buffer = (uint8_t *)calloc(1, ACTIVITY_BUFFER_SIZE);
  *size = *buffer ? ACTIVITY_BUFFER_SIZE : 0;
  *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                               size_t size, size_t valid) {
  (void)ctx, (void)stream, (void)size;
  CUpti_Activity *r = NULL;
  while (valid &&
         cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    atomic_fetch_add(&f.records, 1);
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      atomic_fetch_add(&f.kernels, 1);
  }
  free(buffer);
}

static int pcbuf_alloc(pcbuf *b, size_t pcs) {
  memset(b, 0, sizeof *b);
  b->data.size = sizeof b->data;
  b->data.collectNumPcs = pcs;
  b->data.pPcData = calloc(pcs, sizeof *b->data.pPcData);
  b->reasons = calloc(pcs * f.reason_count, sizeof *b->reasons);
  if (!b->data.pPcData || !b->reasons)
    return -1;
  for (size_t i = 0; i < pcs; i++) {
    b->data.pPcData[i].size = sizeof b->data.pPcData[i];
    b->data.pPcData[i].stallReason = b->reasons + i * f.reason_count;
  }
  return 0;
}

static void count(const CUpti_PCSamplingData *d) {
  atomic_fetch_add(&f.pcs, d->totalNumPcs);
  atomic_fetch_add(&f.samples, d->totalSamples);
}

static void drain_locked(void) {
  if (!f.ctx)
    return;
  CUpti_PCSamplingGetDataParams p;
  memset(&p, 0, sizeof p);
  p.size = CUpti_PCSamplingGetDataParamsSize;
  p.ctx = f.ctx;
  p.pcSamplingData = &f.drain.data;
  for (int calls = 0; calls < 100000; calls++) {
    f.drain.data.totalNumPcs = 0;
    f.drain.data.remainingNumPcs = 0;
    if (cuptiPCSamplingGetData(&p) != CUPTI_SUCCESS)
      return;
    count(&f.drain.data);
    if (f.drain.data.remainingNumPcs == 0 && f.config.data.totalNumPcs == 0)
      return;
    if (f.drain.data.totalNumPcs == 0)
      return;
  }
}

static void pc_setup(CUcontext ctx) {
  pthread_mutex_lock(&f.lock);
  if (f.ctx)
    goto out;
  CUpti_PCSamplingEnableParams en = {CUpti_PCSamplingEnableParamsSize, NULL,
                                     ctx};
  if (cuptiPCSamplingEnable(&en) != CUPTI_SUCCESS)
    goto out;
  CUpti_PCSamplingGetNumStallReasonsParams num;
  memset(&num, 0, sizeof num);
  num.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  num.ctx = ctx;
  num.numStallReasons = &f.reason_count;
  if (cuptiPCSamplingGetNumStallReasons(&num) != CUPTI_SUCCESS)
    goto out;
  f.reason_index = calloc(f.reason_count, sizeof *f.reason_index);
  char **names = calloc(f.reason_count, sizeof *names);
  for (size_t i = 0; i < f.reason_count; i++)
    names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
  CUpti_PCSamplingGetStallReasonsParams get;
  memset(&get, 0, sizeof get);
  get.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  get.ctx = ctx;
  get.numStallReasons = f.reason_count;
  get.stallReasonIndex = f.reason_index;
  get.stallReasons = names;
  cuptiPCSamplingGetStallReasons(&get);
  for (size_t i = 0; i < f.reason_count; i++)
    free(names[i]);
  free(names);
  if (pcbuf_alloc(&f.config, CONFIG_PCS) || pcbuf_alloc(&f.drain, DRAIN_PCS))
    goto out;
  CUpti_PCSamplingConfigurationInfo info[8];
  memset(info, 0, sizeof info);
  info[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  info[0].attributeData.stallReasonData.stallReasonCount = f.reason_count;
  info[0].attributeData.stallReasonData.pStallReasonIndex = f.reason_index;
  info[1].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  info[1].attributeData.collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  info[2].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  info[2].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  info[3].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  info[3].attributeData.samplingDataBufferData.samplingDataBuffer =
      &f.config.data;
  info[4].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  const char *period = getenv("MPROF_PC_PERIOD");
  info[4].attributeData.samplingPeriodData.samplingPeriod =
      period ? (uint32_t)atoi(period) : 14;
  info[5].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  info[5].attributeData.hardwareBufferSizeData.hardwareBufferSize =
      HW_BUFFER_BYTES;
  info[6].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  info[6].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
  info[7].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
  info[7]
      .attributeData.workerThreadPeriodicSleepSpanData
      .workerThreadPeriodicSleepSpan = WORKER_SLEEP_MS;
  CUpti_PCSamplingConfigurationInfoParams cp;
  memset(&cp, 0, sizeof cp);
  cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  cp.ctx = ctx;
  cp.numAttributes = 8;
  cp.pPCSamplingConfigurationInfo = info;
  if (cuptiPCSamplingSetConfigurationAttribute(&cp) == CUPTI_SUCCESS)
    f.ctx = ctx;
  else
    fprintf(stderr, "floor: PC sampling configuration failed\n");
out:
  pthread_mutex_unlock(&f.lock);
}

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void *data) {
  (void)u;
  if (domain != CUPTI_CB_DOMAIN_RESOURCE)
    return;
  const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && f.pm_interval_ns)
    floor_pm_setup(rd->context, f.pm_interval_ns);
  else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && f.pc_on)
    pc_setup(rd->context);
  else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED ||
           cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
    /* A module load ends a sampling range: collect what CUPTI parked. */
    pthread_mutex_lock(&f.lock);
    drain_locked();
    pthread_mutex_unlock(&f.lock);
  }
}

static void *drainer(void *arg) {
  (void)arg;
  unsigned ticks = 0;
  while (!atomic_load(&f.stop)) {
    struct timespec ts = {0, DRAIN_PERIOD_MS * 1000000L};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&f.lock);
    drain_locked();
    pthread_mutex_unlock(&f.lock);
    if (++ticks % 10 == 0)
      cuptiActivityFlushAll(0);
  }
  return NULL;
}

static void at_exit(void) {
  floor_pm_finish(); /* first, as the producer: see its exit.c */
  atomic_store(&f.stop, 1);
  pthread_join(f.thread, NULL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&f.lock);
  if (f.ctx) {
    drain_locked();
    f.config.data.totalSamples = 0;
    CUpti_PCSamplingDisableParams d = {CUpti_PCSamplingDisableParamsSize, NULL,
                                       f.ctx};
    if (cuptiPCSamplingDisable(&d) == CUPTI_SUCCESS)
      count(&f.config.data);
  }
  pthread_mutex_unlock(&f.lock);
  fprintf(stderr,
          "floor: %llu activity records (%llu kernels), %llu PC records, "
          "%llu samples\n",
          (unsigned long long)f.records, (unsigned long long)f.kernels,
          (unsigned long long)f.pcs, (unsigned long long)f.samples);
}

/* The producer's API_CALLS: CUPTI activity records for the runtime and
 * driver functions whose names start with these (launches, graph launches,
 * copies, memsets; not LaunchHostFunc). */
static void enable_api_calls(void) {
  const char *off = getenv("MPROF_NO_API_CALLS");
  if (off && strcmp(off, "1") == 0)
    return;
  static const char *const prefixes[] = {
      "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
      "cuLaunch",   "cuGraphLaunch",   "cuMemcpy",   "cuMemset"};
  static const struct {
    CUpti_CallbackDomain domain;
    uint32_t size;
  } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  for (size_t d = 0; d < 2; d++)
    for (uint32_t cbid = 1; cbid < domains[d].size; cbid++) {
      const char *name = NULL;
      if (cuptiGetCallbackName(domains[d].domain, cbid, &name) !=
              CUPTI_SUCCESS ||
          !name || strstr(name, "LaunchHostFunc"))
        continue;
      int match = 0;
      for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        match |= strncmp(name, prefixes[i], strlen(prefixes[i])) == 0;
      if (!match)
        continue;
      if (d == 0)
        cuptiActivityEnableRuntimeApi(cbid, 1);
      else
        cuptiActivityEnableDriverApi(cbid, 1);
    }
}

int InitializeInjection(void) {
  const char *mode = getenv("MPROF_PC_MODE");
  f.pc_on = !(mode && strcmp(mode, "off") == 0);
  const char *pm_mode = getenv("MPROF_PM");
  if (pm_mode && strcmp(pm_mode, "on") == 0) {
    const char *interval = getenv("MPROF_PM_INTERVAL");
    f.pm_interval_ns = interval ? strtoull(interval, NULL, 10) : 0;
    if (!f.pm_interval_ns)
      f.pm_interval_ns = 100000;
  }
  if (cuptiSubscribe(&f.sub, on_callback, NULL) != CUPTI_SUCCESS) {
    fprintf(stderr, "floor: cannot subscribe to CUPTI\n");
    return 1;
  }
  cuptiActivityRegisterTimestampCallback(now_ns);
  uint8_t zeroed = 1;
  size_t zsize = sizeof zeroed;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                            &zsize, &zeroed);
  cuptiActivityRegisterCallbacks(requested, completed);
  static const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
      CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,
      CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_MARKER,
      CUPTI_ACTIVITY_KIND_MARKER_DATA};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    cuptiActivityEnable(kinds[i]);
  enable_api_calls();
  cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE);
  cuptiEnableCallback(1, f.sub, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  cuptiEnableCallback(1, f.sub, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_MODULE_LOADED);
  cuptiEnableCallback(1, f.sub, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
  atexit(at_exit);
  pthread_create(&f.thread, NULL, drainer, NULL);
  return 1;
}
