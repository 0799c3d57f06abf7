/*
 * Does CUPTI still let PC sampling and PM sampling take turns in one
 * process? `mprof record --pm alternate` relies on it; this program checks
 * the driver and CUPTI alone, without mprof, so that a driver change that
 * breaks alternation is caught here first.
 *
 * Phases, in the order given on the command line (default: pc pm pc pm):
 *   pc  cuptiPCSamplingEnable, configure (continuous, start/stop control),
 *       Start, the kernels, Stop, GetData until empty, Disable
 *   pm  cuptiPmSamplingEnable, SetConfig (100 us), counter-data image,
 *       Start, the kernels, Stop, DecodeData until done, Disable
 *   none the kernels alone (the baseline)
 * Each phase runs the same 20 spin kernels and prints one line: phase,
 * milliseconds of the whole phase (set-up and tear-down included) and of
 * its kernels, PC samples (and how many fell in a known function: the
 * kernel's module is loaded before any phase, so this shows whether CUPTI
 * attributes samples in modules loaded while PC sampling was off), PM
 * samples, and every CUPTI call that failed. Fails (exit 1) when a call
 * fails, a pc phase gets no PC samples, a pm phase gets fewer than half
 * the samples its time allows, or a phase's kernels take more than 3x the
 * baseline (the first phase is always the baseline): PC and PM sampling
 * running together made them 53x slower.
 *
 * Build: nvcc -O2 -arch=sm_90 alternate_canary.cu -lcupti -lcuda
 *        -o alternate_canary
 *
 * SPDX-License-Identifier: MIT
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#define KERNELS 20
#define PM_INTERVAL_NS 100000ull

static int failures;

static bool ok(CUptiResult res, const char *what) {
  if (res == CUPTI_SUCCESS)
    return true;
  const char *name = "?";
  cuptiGetResultString(res, &name);
  printf("  FAIL %s: %s\n", what, name);
  failures++;
  return false;
}

#define PARAMS(type, name)                                                     \
  type name;                                                                   \
  memset(&name, 0, sizeof name);                                               \
  name.structSize = type##_STRUCT_SIZE

__global__ void spin(long long cycles, int *sink) {
  long long start = clock64();
  int x = threadIdx.x;
  while (clock64() - start < cycles)
    x = x * 1664525 + 1013904223;
  if (x == 42)
    *sink = x;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int sms;
static int *sink;
static double kernels_ms;          /* the last phase's kernels */
static uint64_t attributed;        /* its PC samples in a known function */

/* The phase's work: 20 kernels of about 5 ms. */
static double kernels(void) {
  double t0 = now_ms();
  for (int i = 0; i < KERNELS; i++)
    spin<<<sms * 4, 256>>>(9000000, sink);
  cudaDeviceSynchronize();
  kernels_ms = now_ms() - t0;
  return kernels_ms;
}

/* ---- PC sampling -------------------------------------------------------- */

static uint64_t pc_phase(CUcontext ctx) {
  CUpti_PCSamplingEnableParams en = {CUpti_PCSamplingEnableParamsSize};
  en.ctx = ctx;
  if (!ok(cuptiPCSamplingEnable(&en), "cuptiPCSamplingEnable"))
    return 0;
  size_t count = 0;
  CUpti_PCSamplingGetNumStallReasonsParams num = {
      CUpti_PCSamplingGetNumStallReasonsParamsSize};
  num.ctx = ctx;
  num.numStallReasons = &count;
  ok(cuptiPCSamplingGetNumStallReasons(&num),
     "cuptiPCSamplingGetNumStallReasons");
  std::vector<uint32_t> index(count ? count : 1);
  std::vector<char> block((count ? count : 1) * CUPTI_STALL_REASON_STRING_SIZE);
  std::vector<char *> names(count ? count : 1);
  for (size_t i = 0; i < count; i++)
    names[i] = &block[i * CUPTI_STALL_REASON_STRING_SIZE];
  CUpti_PCSamplingGetStallReasonsParams get = {
      CUpti_PCSamplingGetStallReasonsParamsSize};
  get.ctx = ctx;
  get.numStallReasons = count;
  get.stallReasonIndex = index.data();
  get.stallReasons = names.data();
  ok(cuptiPCSamplingGetStallReasons(&get), "cuptiPCSamplingGetStallReasons");

  const size_t pcs = 4096;
  std::vector<CUpti_PCSamplingPCData> pc_data(pcs);
  std::vector<CUpti_PCSamplingStallReason> reasons(pcs * (count ? count : 1));
  for (size_t i = 0; i < pcs; i++) {
    memset(&pc_data[i], 0, sizeof pc_data[i]);
    pc_data[i].size = sizeof(CUpti_PCSamplingPCData);
    pc_data[i].stallReason = &reasons[i * count];
  }
  CUpti_PCSamplingData config, drain;
  memset(&config, 0, sizeof config);
  config.size = sizeof config;
  config.collectNumPcs = pcs;
  config.pPcData = pc_data.data();
  std::vector<CUpti_PCSamplingPCData> drain_data(pc_data);
  std::vector<CUpti_PCSamplingStallReason> drain_reasons(reasons.size());
  for (size_t i = 0; i < pcs; i++)
    drain_data[i].stallReason = &drain_reasons[i * count];
  memset(&drain, 0, sizeof drain);
  drain.size = sizeof drain;
  drain.collectNumPcs = pcs;
  drain.pPcData = drain_data.data();

  CUpti_PCSamplingConfigurationInfo info[5];
  memset(info, 0, sizeof info);
  info[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  info[0].attributeData.stallReasonData.stallReasonCount = count;
  info[0].attributeData.stallReasonData.pStallReasonIndex = index.data();
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
  info[3].attributeData.samplingDataBufferData.samplingDataBuffer = &config;
  info[4].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  info[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  CUpti_PCSamplingConfigurationInfoParams cp = {
      CUpti_PCSamplingConfigurationInfoParamsSize};
  cp.ctx = ctx;
  cp.numAttributes = 5;
  cp.pPCSamplingConfigurationInfo = info;
  ok(cuptiPCSamplingSetConfigurationAttribute(&cp),
     "cuptiPCSamplingSetConfigurationAttribute");
  CUpti_PCSamplingStartParams start = {CUpti_PCSamplingStartParamsSize};
  start.ctx = ctx;
  ok(cuptiPCSamplingStart(&start), "cuptiPCSamplingStart");
  kernels();
  CUpti_PCSamplingStopParams stop = {CUpti_PCSamplingStopParamsSize};
  stop.ctx = ctx;
  ok(cuptiPCSamplingStop(&stop), "cuptiPCSamplingStop");
  uint64_t samples = 0;
  for (int calls = 0; calls < 100000; calls++) {
    CUpti_PCSamplingGetDataParams gd = {CUpti_PCSamplingGetDataParamsSize};
    gd.ctx = ctx;
    gd.pcSamplingData = &drain;
    if (!ok(cuptiPCSamplingGetData(&gd), "cuptiPCSamplingGetData"))
      break;
    samples += drain.totalSamples;
    for (size_t i = 0; i < drain.totalNumPcs; i++)
      if (drain.pPcData[i].functionName && drain.pPcData[i].cubinCrc)
        for (size_t r = 0; r < drain.pPcData[i].stallReasonCount; r++)
          attributed += drain.pPcData[i].stallReason[r].samples;
    if (drain.totalNumPcs == 0 && drain.remainingNumPcs == 0)
      break;
  }
  samples += config.totalSamples; /* what Stop parked in the buffer */
  config.totalSamples = 0;
  config.totalNumPcs = 0;
  CUpti_PCSamplingDisableParams dis = {CUpti_PCSamplingDisableParamsSize};
  dis.ctx = ctx;
  ok(cuptiPCSamplingDisable(&dis), "cuptiPCSamplingDisable");
  samples += config.totalSamples; /* what Disable flushed */
  return samples;
}

/* ---- PM sampling -------------------------------------------------------- */

static const char *const metrics[] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
};
#define METRIC_COUNT (sizeof metrics / sizeof metrics[0])
static std::vector<uint8_t> pm_config;

/* The counters' configuration image, once (no session may be active:
 * counter availability fails then). */
static bool pm_configure(uint32_t device) {
  PARAMS(CUpti_Profiler_Initialize_Params, init);
  PARAMS(CUpti_Device_GetChipName_Params, chip);
  chip.deviceIndex = device;
  PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, av);
  av.deviceIndex = device;
  if (!ok(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize") ||
      !ok(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName") ||
      !ok(cuptiPmSamplingGetCounterAvailability(&av),
          "cuptiPmSamplingGetCounterAvailability(size)"))
    return false;
  std::vector<uint8_t> avail(av.counterAvailabilityImageSize);
  av.pCounterAvailabilityImage = avail.data();
  if (!ok(cuptiPmSamplingGetCounterAvailability(&av),
          "cuptiPmSamplingGetCounterAvailability"))
    return false;
  PARAMS(CUpti_Profiler_Host_Initialize_Params, host);
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = avail.data();
  if (!ok(cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize"))
    return false;
  PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
  add.pHostObject = host.pHostObject;
  add.ppMetricNames = (const char **)metrics;
  add.numMetrics = METRIC_COUNT;
  PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, size);
  size.pHostObject = host.pHostObject;
  if (!ok(cuptiProfilerHostConfigAddMetrics(&add),
          "cuptiProfilerHostConfigAddMetrics") ||
      !ok(cuptiProfilerHostGetConfigImageSize(&size),
          "cuptiProfilerHostGetConfigImageSize"))
    return false;
  pm_config.resize(size.configImageSize);
  PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, image);
  image.pHostObject = host.pHostObject;
  image.configImageSize = pm_config.size();
  image.pConfigImage = pm_config.data();
  return ok(cuptiProfilerHostGetConfigImage(&image),
            "cuptiProfilerHostGetConfigImage");
}

static uint64_t pm_phase(uint32_t device) {
  PARAMS(CUpti_PmSampling_Enable_Params, en);
  en.deviceIndex = device;
  if (!ok(cuptiPmSamplingEnable(&en), "cuptiPmSamplingEnable"))
    return 0;
  CUpti_PmSampling_Object *object = en.pPmSamplingObject;
  PARAMS(CUpti_PmSampling_SetConfig_Params, sc);
  sc.pPmSamplingObject = object;
  sc.configSize = pm_config.size();
  sc.pConfig = pm_config.data();
  sc.hardwareBufferSize = 64u << 20;
  sc.samplingInterval = PM_INTERVAL_NS;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, cs);
  cs.pPmSamplingObject = object;
  cs.pMetricNames = (const char **)metrics;
  cs.numMetrics = METRIC_COUNT;
  cs.maxSamples = 4096;
  uint64_t samples = 0;
  std::vector<uint8_t> image;
  if (ok(cuptiPmSamplingSetConfig(&sc), "cuptiPmSamplingSetConfig") &&
      ok(cuptiPmSamplingGetCounterDataSize(&cs),
         "cuptiPmSamplingGetCounterDataSize")) {
    image.resize(cs.counterDataSize);
    PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, ci);
    ci.pPmSamplingObject = object;
    ci.counterDataSize = image.size();
    ci.pCounterData = image.data();
    PARAMS(CUpti_PmSampling_Start_Params, st);
    st.pPmSamplingObject = object;
    if (ok(cuptiPmSamplingCounterDataImageInitialize(&ci),
           "cuptiPmSamplingCounterDataImageInitialize") &&
        ok(cuptiPmSamplingStart(&st), "cuptiPmSamplingStart")) {
      kernels();
      PARAMS(CUpti_PmSampling_Stop_Params, sp);
      sp.pPmSamplingObject = object;
      ok(cuptiPmSamplingStop(&sp), "cuptiPmSamplingStop");
      for (int round = 0; round < 64; round++) {
        PARAMS(CUpti_PmSampling_DecodeData_Params, dd);
        dd.pPmSamplingObject = object;
        dd.pCounterDataImage = image.data();
        dd.counterDataImageSize = image.size();
        if (!ok(cuptiPmSamplingDecodeData(&dd), "cuptiPmSamplingDecodeData"))
          break;
        if (dd.overflow)
          printf("  note: PM hardware buffer overflowed\n");
        if (dd.decodeStopReason !=
            CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
          break;
      }
      PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info);
      info.pCounterDataImage = image.data();
      info.counterDataImageSize = image.size();
      if (ok(cuptiPmSamplingGetCounterDataInfo(&info),
             "cuptiPmSamplingGetCounterDataInfo"))
        samples = info.numCompletedSamples;
    }
  }
  PARAMS(CUpti_PmSampling_Disable_Params, dis);
  dis.pPmSamplingObject = object;
  ok(cuptiPmSamplingDisable(&dis), "cuptiPmSamplingDisable");
  return samples;
}

int main(int argc, char **argv) {
  static const char *const fallback[] = {"none", "pc", "pm", "pc", "pm"};
  std::vector<const char *> phases(fallback, fallback + 5);
  if (argc > 1) {
    phases.assign(1, "none");
    for (int i = 1; i < argc; i++)
      phases.push_back(argv[i]);
  }
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) !=
          cudaSuccess ||
      cudaMalloc(&sink, sizeof *sink) != cudaSuccess) {
    fprintf(stderr, "alternate_canary: no usable GPU\n");
    return 2;
  }
  CUcontext ctx = NULL;
  cuCtxGetCurrent(&ctx);
  uint32_t device = 0;
  ok(cuptiGetDeviceId(ctx, &device), "cuptiGetDeviceId");
  kernels(); /* warm-up: module load, clocks */
  bool have_pm = pm_configure(device);
  double baseline = 0;
  printf("%-5s %9s %10s %12s %12s %11s\n", "phase", "phase ms", "kernels ms",
         "PC samples", "attributed", "PM samples");
  for (const char *phase : phases) {
    int before = failures;
    double t0 = now_ms();
    uint64_t pc = 0, pm = 0;
    double ms;
    attributed = 0;
    if (!strcmp(phase, "pc")) {
      pc = pc_phase(ctx);
      ms = now_ms() - t0;
    } else if (!strcmp(phase, "pm") && have_pm) {
      pm = pm_phase(device);
      ms = now_ms() - t0;
    } else {
      ms = kernels();
    }
    if (!baseline)
      baseline = kernels_ms;
    printf("%-5s %9.1f %10.1f %12llu %12llu %11llu\n", phase, ms, kernels_ms,
           (unsigned long long)pc, (unsigned long long)attributed,
           (unsigned long long)pm);
    if (!strcmp(phase, "pc") && pc == 0) {
      printf("  FAIL pc phase got no PC samples\n");
      failures++;
    }
    if (!strcmp(phase, "pm") && pm * PM_INTERVAL_NS * 2 < baseline * 1e6) {
      printf("  FAIL pm phase got %llu samples, fewer than half of %.0f ms "
             "at 100 us\n",
             (unsigned long long)pm, baseline);
      failures++;
    }
    if (kernels_ms > 3 * baseline) {
      printf("  FAIL %s phase's kernels took %.1f ms, over 3x the baseline "
             "%.1f ms\n",
             phase, kernels_ms, baseline);
      failures++;
    }
    if (failures != before)
      printf("  (phase %s failed)\n", phase);
  }
  printf("%s\n", failures ? "RESULT fail" : "RESULT ok");
  return failures ? 1 : 0;
}
