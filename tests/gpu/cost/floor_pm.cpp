/*
 * The floor's PM sampling (MPROF_PM=on, see floor.c): what `mprof record
 * --pm on` asks of CUPTI, without what mprof does with the samples. The
 * producer's five default counters at MPROF_PM_INTERVAL, a decode every
 * 10 ms into a 512-sample counter-data image that is emptied (copied back
 * from its initialized state) while it has room for two decode periods;
 * the samples are decoded, which CUPTI needs, but not stored, nor evaluated
 * unless MPROF_PM_EVALUATE=1.
 * C++ because CUPTI's profiler host header is.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#define PM_HW_BUFFER_BYTES ((size_t)256 << 20)
#define PM_IMAGE_SAMPLES 512
#define PM_DECODE_PERIOD_MS 10

static struct {
  uint64_t interval_ns;
  bool stop;
  CUpti_PmSampling_Object *object;
  uint8_t *image, *pristine;
  size_t image_size;
  pthread_t thread;
  int thread_started;
  unsigned long long decodes, samples;
  /* MPROF_PM_EVALUATE=1: also evaluate each sample's counters, as the
   * producer does (to tell its cost from CUPTI's) */
  bool evaluate;
  CUpti_Profiler_Host_Object *host;
  size_t evaluated; /* samples of the current image evaluated */
  unsigned long long evaluations;
} pm;

static const char *const pm_metrics[] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
};
#define PM_METRIC_COUNT (sizeof pm_metrics / sizeof pm_metrics[0])

#define PM_PARAMS(type, name)                                                  \
  type name;                                                                   \
  memset(&name, 0, sizeof name);                                               \
  name.structSize = type##_STRUCT_SIZE

/* Decode what the GPU sampled; empty the image while it still has room for
 * two decode periods (as the producer does). Until the end of the records
 * when @p last (the samples counted are those the image held). */
static void pm_decode(int last) {
  for (;;) {
    PM_PARAMS(CUpti_PmSampling_DecodeData_Params, p);
    p.pPmSamplingObject = pm.object;
    p.pCounterDataImage = pm.image;
    p.counterDataImageSize = pm.image_size;
    CUptiResult res = cuptiPmSamplingDecodeData(&p);
    pm.decodes++;
    PM_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info);
    info.pCounterDataImage = pm.image;
    info.counterDataImageSize = pm.image_size;
    if (res != CUPTI_SUCCESS && res != CUPTI_ERROR_OUT_OF_MEMORY)
      return;
    size_t room = 0;
    if (cuptiPmSamplingGetCounterDataInfo(&info) == CUPTI_SUCCESS)
      room = info.numTotalSamples - info.numPopulatedSamples;
    int full = res == CUPTI_ERROR_OUT_OF_MEMORY ||
               p.decodeStopReason ==
                   CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
    size_t per_period = PM_DECODE_PERIOD_MS * 1000000ull / pm.interval_ns;
    for (; pm.evaluate && pm.evaluated < info.numCompletedSamples;
         pm.evaluated++) {
      double values[PM_METRIC_COUNT];
      PM_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, e);
      e.pHostObject = pm.host;
      e.pCounterDataImage = pm.image;
      e.counterDataImageSize = pm.image_size;
      e.rangeIndex = pm.evaluated;
      e.ppMetricNames = (const char **)pm_metrics;
      e.numMetrics = PM_METRIC_COUNT;
      e.pMetricValues = values;
      if (cuptiProfilerHostEvaluateToGpuValues(&e) == CUPTI_SUCCESS)
        pm.evaluations++;
    }
    bool emptied = full || room < 2 * per_period + 16;
    if (emptied || last)
      pm.samples += info.numCompletedSamples;
    if (emptied) {
      memcpy(pm.image, pm.pristine, pm.image_size);
      pm.evaluated = 0;
    }
    if (!full)
      return;
  }
}

static void *pm_decoder(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&pm.stop, __ATOMIC_ACQUIRE)) {
    struct timespec ts = {0, PM_DECODE_PERIOD_MS * 1000000L};
    nanosleep(&ts, NULL);
    pm_decode(0);
  }
  return NULL;
}

/* The producer's set-up: the counters' configuration, Enable, SetConfig,
 * the counter-data image and Start. One GPU is enough for the floor. */
static bool pm_start(uint32_t device) {
  PM_PARAMS(CUpti_Profiler_Initialize_Params, init);
  PM_PARAMS(CUpti_Device_GetChipName_Params, chip);
  chip.deviceIndex = device;
  PM_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, av);
  av.deviceIndex = device;
  if (cuptiProfilerInitialize(&init) != CUPTI_SUCCESS ||
      cuptiDeviceGetChipName(&chip) != CUPTI_SUCCESS ||
      cuptiPmSamplingGetCounterAvailability(&av) != CUPTI_SUCCESS)
    return false;
  uint8_t *avail = (uint8_t *)malloc(av.counterAvailabilityImageSize);
  av.pCounterAvailabilityImage = avail;
  if (!avail || cuptiPmSamplingGetCounterAvailability(&av) != CUPTI_SUCCESS)
    return false;
  PM_PARAMS(CUpti_Profiler_Host_Initialize_Params, host);
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = avail;
  if (cuptiProfilerHostInitialize(&host) != CUPTI_SUCCESS)
    return false;
  PM_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
  pm.host = host.pHostObject;
  add.pHostObject = host.pHostObject;
  add.ppMetricNames = (const char **)pm_metrics;
  add.numMetrics = PM_METRIC_COUNT;
  PM_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, size);
  size.pHostObject = host.pHostObject;
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS ||
      cuptiProfilerHostGetConfigImageSize(&size) != CUPTI_SUCCESS)
    return false;
  /* CUPTI keeps a pointer to the configuration: it lives to exit. */
  uint8_t *config = (uint8_t *)malloc(size.configImageSize);
  PM_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, image);
  image.pHostObject = host.pHostObject;
  image.configImageSize = size.configImageSize;
  image.pConfigImage = config;
  if (!config || cuptiProfilerHostGetConfigImage(&image) != CUPTI_SUCCESS)
    return false;
  PM_PARAMS(CUpti_PmSampling_Enable_Params, en);
  en.deviceIndex = device;
  if (cuptiPmSamplingEnable(&en) != CUPTI_SUCCESS)
    return false;
  pm.object = en.pPmSamplingObject;
  PM_PARAMS(CUpti_PmSampling_SetConfig_Params, sc);
  sc.pPmSamplingObject = pm.object;
  sc.configSize = size.configImageSize;
  sc.pConfig = config;
  sc.hardwareBufferSize = PM_HW_BUFFER_BYTES;
  sc.samplingInterval = pm.interval_ns;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  PM_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, cs);
  cs.pPmSamplingObject = pm.object;
  cs.pMetricNames = (const char **)pm_metrics;
  cs.numMetrics = PM_METRIC_COUNT;
  cs.maxSamples = PM_IMAGE_SAMPLES;
  if (cuptiPmSamplingSetConfig(&sc) != CUPTI_SUCCESS ||
      cuptiPmSamplingGetCounterDataSize(&cs) != CUPTI_SUCCESS)
    return false;
  pm.image_size = cs.counterDataSize;
  pm.image = (uint8_t *)malloc(pm.image_size);
  pm.pristine = (uint8_t *)malloc(pm.image_size);
  PM_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, ci);
  ci.pPmSamplingObject = pm.object;
  ci.counterDataSize = pm.image_size;
  ci.pCounterData = pm.image;
  if (!pm.image || !pm.pristine ||
      cuptiPmSamplingCounterDataImageInitialize(&ci) != CUPTI_SUCCESS)
    return false;
  memcpy(pm.pristine, pm.image, pm.image_size);
  PM_PARAMS(CUpti_PmSampling_Start_Params, st);
  st.pPmSamplingObject = pm.object;
  if (cuptiPmSamplingStart(&st) != CUPTI_SUCCESS)
    return false;
  pm.thread_started = pthread_create(&pm.thread, NULL, pm_decoder, NULL) == 0;
  return true;
}

extern "C" void floor_pm_setup(CUcontext ctx, uint64_t interval_ns) {
  uint32_t device = 0;
  pm.interval_ns = interval_ns;
  const char *evaluate = getenv("MPROF_PM_EVALUATE");
  pm.evaluate = evaluate && strcmp(evaluate, "1") == 0;
  if (pm.object || cuptiGetDeviceId(ctx, &device) != CUPTI_SUCCESS)
    return;
  if (!pm_start(device)) {
    fprintf(stderr, "floor: PM sampling set-up failed\n");
    pm.object = NULL;
  }
}

/* As the producer at exit: Stop, decode the rest; no Disable (it did not
 * return at exit on the H200). */
extern "C" void floor_pm_finish(void) {
  __atomic_store_n(&pm.stop, true, __ATOMIC_RELEASE);
  if (pm.thread_started)
    pthread_join(pm.thread, NULL);
  if (!pm.object)
    return;
  PM_PARAMS(CUpti_PmSampling_Stop_Params, stop);
  stop.pPmSamplingObject = pm.object;
  cuptiPmSamplingStop(&stop);
  pm_decode(1);
  fprintf(stderr, "floor: %llu PM decodes, %llu PM samples, %llu evaluated\n",
          pm.decodes, pm.samples, pm.evaluations);
}
