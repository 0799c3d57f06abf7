/*
 * mprof CUPTI producer — PM sampling (see pmsampling.h).
 *
 * Sequence per device: profiler initialize (once per process), support
 * check, chip name, counter availability, host object with the counters
 * (one pass only), Enable, SetConfig, counter-data image, Start. A decode
 * thread empties the hardware buffer every MPROF_PM_DECODE_PERIOD; at exit:
 * Stop and a last decode (Disable hung at exit on the H200: see
 * finish_sessions).
 *
 * SPDX-License-Identifier: MIT
 */
#include "pmsampling.h"
#include "crash.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

namespace {

/* Counters sampled by default, in column order: the five the verdict
 * needs (DRAM and L2 sector use for the memory roofs and caps, SMs active,
 * issue and tensor pipe for the compute ones). With these five a sample
 * costs the decode thread 35-105 us of host time on the H200, by host (29
 * KB of counter data): up to the 100 us interval, so a run with over a
 * second of samples may fill the counter-data image now and then and lose
 * samples, which are counted as overflows (docs/validation/H200.md).
 * On another chip those that do not fit in one pass, or that it does not
 * have, are left out (META pm.device.N.left_out). */
const char *const default_metrics[] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
};

/* `--pm-counters sol`: ncu's speed of light but the L2's sectors, checked
 * against it on the H100 and the H200 (tests/gpu/sol_ncu.sh,
 * docs/validation/). L1/TEX and SM throughput only by their TriageCompute
 * names (by their plain names they need 5 and 8 passes on GH100), SMs
 * active by it too (by its plain name CUPTI evaluated it beyond 100% of
 * peak, up to 62,113%). Beside TriageCompute counters CUPTI evaluates the
 * L2's sectors wrong, by either name, so they are not asked for here: the
 * default set measures them (and throughput.c reads no L2 counter from a
 * device sampled with a TriageCompute one). DRAM beside them left the
 * scale for some kernels (read as unknown there); a set of a sol run and a
 * default run has every number (docs/DIAGNOSIS.md). TriageCompute counters are
 * dearer to decode: these six cost 69-112 us of host time a sample on the
 * H200 (83 KB of counter data), about the 100 us interval, so a long run
 * may lose samples unless given a longer --pm-interval. */
const char *const sol_metrics[] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "TPC.TriageCompute.sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
    "SM_A.TriageCompute.l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "TriageCompute.sm__throughput.avg.pct_of_peak_sustained_elapsed",
};

const int FINISH_TIMEOUT_S = 5;
/* The last decode at exit stops here, so that the trace (and what the
 * producer says about sampling) is written before FINISH_TIMEOUT_S. */
const uint64_t LAST_DECODE_NS = 3000000000ull;
/* Stop may take this long; past it the exit goes on without it (the
 * samples since the decode thread's last round are lost: on the H200, Stop
 * did not return in 2 of 6 and 1 of 8 PyTorch recordings). */
const uint64_t STOP_TIMEOUT_NS = 1000000000ull;

struct Device {
  uint32_t ordinal = 0;
  CUpti_PmSampling_Object *object = nullptr;
  CUpti_Profiler_Host_Object *host = nullptr;
  std::vector<uint8_t> config; /* CUPTI keeps a pointer: lives to Disable */
  std::vector<uint8_t> counter_data;
  /* The image as CUPTI initialized it: copied back to empty the image,
   * faster than initializing it again. */
  std::vector<uint8_t> pristine;
  /* Samples of the current image already stored (the image fills over
   * several decodes and is emptied only when full), and the end time of
   * the last one, to notice an image CUPTI began again. */
  size_t stored = 0;
  uint64_t stored_end = 0;
  std::vector<std::string> metric_names;
  std::vector<const char *> metrics;
  std::vector<double> values;
  bool started = false;
  uint64_t samples = 0;
  uint64_t overflows = 0;
  uint64_t unstored = 0;
  uint64_t decode_ns = 0;
  uint64_t decodes = 0;
  /* Where decoding spends its time: CUPTI's decode into the image, the
   * evaluation of each sample's metrics, re-initializing the image. */
  uint64_t decode_data_ns = 0;
  uint64_t evaluate_ns = 0;
  uint64_t reset_ns = 0;
  uint64_t restarts = 0;
  uint64_t restart_failures = 0;
  bool behind = false;     /* the last decode ran out of time: samples left */
  uint64_t image_full = 0; /* decodes that filled the image (gaps) */
};

struct State {
  mprof_cupti_translate *tr = nullptr;
  const mprof_cupti_config *cfg = nullptr;
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  std::vector<Device *> devices;
  std::vector<uint32_t> refused; /* ordinals that failed: never retried */
  bool profiler_initialized = false;
  bool finished = false;
  /* MPROF_PM=alternate: sampling runs only in the PM phases of the capture
   * window (mprof_cupti_pm_phase); devices seen before wait here. */
  bool phase_on = false;
  std::vector<uint32_t> waiting;
  uint64_t phases = 0;
  pthread_t thread{};
  bool thread_started = false;
  pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
  bool stop = false;
  /* Where the exit is (a static string, read by the exit timeout to say
   * what did not return): the decode thread's CUPTI call or a step of
   * finish_sessions(). */
  const char *exit_phase = "joining the decode thread";
  const char *decode_step = "idle"; /* what decode() is in */
  uint64_t stop_started_ns = 0;     /* while the exit is in Stop: since */
};

State g;

/* CLOCK_REALTIME @p ns from now, for timed waits. */
struct timespec realtime_after(uint64_t ns) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += (time_t)(ns / 1000000000ull);
  ts.tv_nsec += (long)(ns % 1000000000ull);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *result_name(CUptiResult res) {
  const char *name = nullptr;
  if (cuptiGetResultString(res, &name) != CUPTI_SUCCESS || !name)
    return "CUPTI_ERROR_UNKNOWN";
  return name;
}

void meta(const std::string &key, const std::string &value) {
  mprof_cupti_translate_meta(g.tr, key.c_str(), value.c_str());
}

void meta_u64(const std::string &key, uint64_t value) {
  meta(key, std::to_string((unsigned long long)value));
}

/* A device stays unsampled: say why, in META and once on stderr when
 * verbose. */
void refuse(uint32_t ordinal, const char *what, CUptiResult res) {
  std::string reason = std::string(what) + ": " + result_name(res);
  if (res == CUPTI_SUCCESS)
    reason = what;
  meta("pm.device." + std::to_string(ordinal) + ".error", reason);
  meta("pm.error", reason);
  mprof_cupti_translate_error(g.tr, ("PM sampling: " + reason).c_str());
  if (g.cfg->verbose)
    fprintf(stderr, "mprof-cupti: device %u not PM-sampled: %s\n", ordinal,
            reason.c_str());
}

/* The counters asked for: MPROF_PM_METRICS (CUPTI metric names; "default"
 * and "sol" stand for those sets) or the default list. */
std::vector<std::string> wanted_metrics() {
  std::vector<std::string> out;
  const char *list = g.cfg->pm_metrics[0] ? g.cfg->pm_metrics : "default";
  std::string item;
  for (const char *p = list;; p++) {
    if (*p == ',' || *p == '\0') {
      size_t a = item.find_first_not_of(" \t");
      size_t b = item.find_last_not_of(" \t");
      std::string name =
          a != std::string::npos ? item.substr(a, b - a + 1) : std::string();
      if (name == "default") {
        for (const char *m : default_metrics)
          out.emplace_back(m);
      } else if (name == "sol") {
        for (const char *m : sol_metrics)
          out.emplace_back(m);
      } else if (!name.empty()) {
        out.push_back(name);
      }
      item.clear();
      if (!*p)
        break;
    } else {
      item += *p;
    }
  }
  if (out.size() > MPROF_PM_MAX_METRICS)
    out.resize(MPROF_PM_MAX_METRICS);
  return out;
}

void host_free(CUpti_Profiler_Host_Object *host) {
  if (!host)
    return;
  CUpti_Profiler_Host_Deinitialize_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

CUpti_Profiler_Host_Object *host_new(const char *chip,
                                     const std::vector<uint8_t> &avail) {
  CUpti_Profiler_Host_Initialize_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = chip;
  p.pCounterAvailabilityImage = avail.empty() ? nullptr : avail.data();
  if (cuptiProfilerHostInitialize(&p) != CUPTI_SUCCESS)
    return nullptr;
  return p.pHostObject;
}

/* Build a host object holding @p names and its config image; fails unless
 * the counters fit in one pass. */
CUptiResult host_configure(const char *chip, const std::vector<uint8_t> &avail,
                           const std::vector<const char *> &names,
                           CUpti_Profiler_Host_Object **out_host,
                           std::vector<uint8_t> *out_config) {
  CUpti_Profiler_Host_Object *host = host_new(chip, avail);
  if (!host)
    return CUPTI_ERROR_UNKNOWN;
  CUpti_Profiler_Host_ConfigAddMetrics_Params add;
  memset(&add, 0, sizeof add);
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host;
  add.ppMetricNames = const_cast<const char **>(names.data());
  add.numMetrics = names.size();
  CUptiResult res = cuptiProfilerHostConfigAddMetrics(&add);
  CUpti_Profiler_Host_GetConfigImageSize_Params size;
  memset(&size, 0, sizeof size);
  size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  size.pHostObject = host;
  if (res == CUPTI_SUCCESS)
    res = cuptiProfilerHostGetConfigImageSize(&size);
  std::vector<uint8_t> config(size.configImageSize);
  if (res == CUPTI_SUCCESS) {
    CUpti_Profiler_Host_GetConfigImage_Params image;
    memset(&image, 0, sizeof image);
    image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    res = cuptiProfilerHostGetConfigImage(&image);
  }
  if (res == CUPTI_SUCCESS) {
    CUpti_Profiler_Host_GetNumOfPasses_Params passes;
    memset(&passes, 0, sizeof passes);
    passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    passes.configImageSize = config.size();
    passes.pConfigImage = config.data();
    res = cuptiProfilerHostGetNumOfPasses(&passes);
    if (res == CUPTI_SUCCESS && passes.numOfPasses != 1)
      res = CUPTI_ERROR_NOT_SUPPORTED;
  }
  if (res != CUPTI_SUCCESS) {
    host_free(host);
    return res;
  }
  *out_host = host;
  *out_config = std::move(config);
  return CUPTI_SUCCESS;
}

/* Choose the counters: all wanted ones when they fit in one pass, else the
 * longest prefix that does after leaving out the names CUPTI rejects. */
bool choose_metrics(Device *d, const char *chip,
                    const std::vector<uint8_t> &avail) {
  std::vector<std::string> wanted = wanted_metrics();
  std::vector<const char *> names;
  for (const std::string &m : wanted)
    names.push_back(m.c_str());
  CUptiResult res = host_configure(chip, avail, names, &d->host, &d->config);
  std::vector<std::string> left_out;
  if (res != CUPTI_SUCCESS) {
    /* Greedy: keep each counter that still fits with those kept so far. */
    std::vector<const char *> kept;
    for (const char *m : names) {
      kept.push_back(m);
      CUpti_Profiler_Host_Object *host = nullptr;
      std::vector<uint8_t> config;
      if (host_configure(chip, avail, kept, &host, &config) == CUPTI_SUCCESS) {
        host_free(host);
      } else {
        kept.pop_back();
        left_out.emplace_back(m);
      }
    }
    if (kept.empty() || host_configure(chip, avail, kept, &d->host,
                                       &d->config) != CUPTI_SUCCESS) {
      refuse(d->ordinal, "no counter of the set could be sampled", res);
      return false;
    }
    names = kept;
  }
  for (const char *m : names)
    d->metric_names.emplace_back(m);
  for (const std::string &m : d->metric_names)
    d->metrics.push_back(m.c_str());
  d->values.resize(d->metrics.size());
  std::string skipped;
  for (const std::string &m : left_out)
    skipped += (skipped.empty() ? "" : ",") + m;
  if (!skipped.empty())
    meta("pm.device." + std::to_string(d->ordinal) + ".left_out", skipped);
  return true;
}

std::string metric_unit(CUpti_Profiler_Host_Object *host, const char *name) {
  CUpti_Profiler_Host_GetMetricProperties_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
  p.pHostObject = host;
  p.pMetricName = name;
  if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS || !p.pDimUnit)
    return "";
  return p.pDimUnit;
}

CUptiResult counter_data_reset(Device *d) {
  d->stored = 0;
  d->stored_end = 0;
  if (!d->pristine.empty() && d->pristine.size() == d->counter_data.size()) {
    memcpy(d->counter_data.data(), d->pristine.data(), d->pristine.size());
    return CUPTI_SUCCESS;
  }
  CUpti_PmSampling_CounterDataImage_Initialize_Params p;
  memset(&p, 0, sizeof p);
  p.structSize =
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  p.pPmSamplingObject = d->object;
  p.counterDataSize = d->counter_data.size();
  p.pCounterData = d->counter_data.data();
  CUptiResult res = cuptiPmSamplingCounterDataImageInitialize(&p);
  if (res == CUPTI_SUCCESS)
    d->pristine = d->counter_data;
  return res;
}

/* Sample @p index's window of the image; false when CUPTI has none. */
bool sample_window(Device *d, size_t index, uint64_t *start, uint64_t *end) {
  CUpti_PmSampling_CounterData_GetSampleInfo_Params s;
  memset(&s, 0, sizeof s);
  s.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
  s.pPmSamplingObject = d->object;
  s.pCounterDataImage = d->counter_data.data();
  s.counterDataImageSize = d->counter_data.size();
  s.sampleIndex = index;
  if (cuptiPmSamplingCounterDataGetSampleInfo(&s) != CUPTI_SUCCESS)
    return false;
  *start = s.startTimestamp;
  *end = s.endTimestamp;
  return true;
}

/* Store the completed samples of the counter-data image that are not
 * stored yet; returns how many more samples the image has room for. */
size_t store_samples(Device *d) {
  uint64_t t0 = now_ns();
  CUpti_PmSampling_GetCounterDataInfo_Params info;
  memset(&info, 0, sizeof info);
  info.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = d->counter_data.data();
  info.counterDataImageSize = d->counter_data.size();
  if (cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS)
    return 0;
  size_t completed = info.numCompletedSamples;
  /* The image fills over several decodes; if CUPTI wrote it from its
   * start again, the last stored sample is no longer where it was. */
  uint64_t start = 0, end = 0;
  if (d->stored > completed ||
      (d->stored && (!sample_window(d, d->stored - 1, &start, &end) ||
                     end != d->stored_end)))
    d->stored = 0;
  for (size_t i = d->stored; i < completed; i++) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params e;
    memset(&e, 0, sizeof e);
    e.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    e.pHostObject = d->host;
    e.pCounterDataImage = d->counter_data.data();
    e.counterDataImageSize = d->counter_data.size();
    e.rangeIndex = i;
    e.ppMetricNames = d->metrics.data();
    e.numMetrics = d->metrics.size();
    e.pMetricValues = d->values.data();
    /* A window with no start (the first one after Start) is not an average
     * over a known time: leave it out. */
    bool have = sample_window(d, i, &start, &end);
    if (have)
      d->stored_end = end;
    if (!have || start == 0 || end < start ||
        cuptiProfilerHostEvaluateToGpuValues(&e) != CUPTI_SUCCESS ||
        mprof_cupti_translate_pm_sample(g.tr, d->ordinal, start, end,
                                        d->values.size(),
                                        d->values.data()) != 0) {
      d->unstored++;
      continue;
    }
    d->samples++;
  }
  d->stored = completed;
  d->evaluate_ns += now_ns() - t0;
  return info.numPopulatedSamples < info.numTotalSamples
             ? info.numTotalSamples - info.numPopulatedSamples
             : 0;
}

/* counter_data_reset, timed. */
CUptiResult counter_data_reset_timed(Device *d) {
  uint64_t t0 = now_ns();
  CUptiResult res = counter_data_reset(d);
  d->reset_ns += now_ns() - t0;
  return res;
}

CUptiResult session_start(Device *d) {
  CUpti_PmSampling_Start_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE;
  p.pPmSamplingObject = d->object;
  return cuptiPmSamplingStart(&p);
}

void session_stop(Device *d) {
  CUpti_PmSampling_Stop_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
  p.pPmSamplingObject = d->object;
  cuptiPmSamplingStop(&p);
}

/* After the hardware buffer overflowed CUPTI wants the session restarted. */
void restart(Device *d) {
  if (g.finished) /* the last decode, after Stop: nothing to restart */
    return;
  if (d->started)
    session_stop(d);
  d->started = session_start(d) == CUPTI_SUCCESS;
  d->restarts++;
  if (!d->started)
    d->restart_failures++;
}

void phase(const char *what) {
  __atomic_store_n(&g.exit_phase, what, __ATOMIC_RELEASE);
}

void step(const char *what) {
  __atomic_store_n(&g.decode_step, what, __ATOMIC_RELEASE);
}

/* Whether the decode thread is asked to stop. */
bool stopping() { return __atomic_load_n(&g.stop, __ATOMIC_ACQUIRE); }

/* Empty the hardware buffer of @p d into the trace: decode rounds until
 * CUPTI reaches the end of the records (or, with @p deadline, until then;
 * without, until the thread is asked to stop). A round that filled the
 * image empties it and goes on; an overflow (the buffer was full: samples
 * were lost) keeps what was decoded and restarts the session. */
void decode(Device *d, uint64_t deadline) {
  if (!d->object)
    return;
  uint64_t t0 = now_ns();
  bool overflowed = false;
  for (int round = 0;; round++) {
    /* Decoding slower than the GPU samples never reaches the end of the
     * records: the thread yields to exit, and the last decode to its
     * deadline. */
    if (round && (deadline ? now_ns() > deadline : stopping())) {
      d->behind = deadline != 0;
      break;
    }
    CUpti_PmSampling_DecodeData_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
    p.pPmSamplingObject = d->object;
    p.pCounterDataImage = d->counter_data.data();
    p.counterDataImageSize = d->counter_data.size();
    uint64_t t1 = now_ns();
    step("cuptiPmSamplingDecodeData");
    CUptiResult res = cuptiPmSamplingDecodeData(&p);
    step("storing samples");
    d->decode_data_ns += now_ns() - t1;
    if (res == CUPTI_ERROR_OUT_OF_MEMORY) {
      overflowed = true;
      store_samples(d);
      counter_data_reset_timed(d);
      break;
    }
    if (res != CUPTI_SUCCESS) {
      mprof_cupti_translate_error(
          g.tr, (std::string("cuptiPmSamplingDecodeData: ") + result_name(res))
                    .c_str());
      break;
    }
    overflowed = overflowed || p.overflow;
    size_t room = store_samples(d);
    /* A decode that fills the image loses the records it read past the
     * image's end (on the H200: a gap of 10-30 ms at every full image), so
     * the image is emptied while it still has room for two decode
     * periods; not after every decode, as emptying it costs about as much
     * as decoding a hundred samples. */
    if (p.decodeStopReason ==
        CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
      d->image_full++;
      counter_data_reset_timed(d);
      continue;
    }
    uint64_t per_period = g.cfg->pm_decode_period_ns /
                          (g.cfg->pm_interval_ns ? g.cfg->pm_interval_ns : 1);
    if (room < 2 * per_period + 16)
      counter_data_reset_timed(d);
    break;
  }
  if (overflowed) {
    d->overflows++;
    step("restarting the session after an overflow");
    restart(d);
  }
  d->decodes++;
  d->decode_ns += now_ns() - t0;
  step("idle");
}

void *decode_thread(void *) {
  pthread_mutex_lock(&g.wake_lock);
  while (!g.stop) {
    struct timespec until = realtime_after(g.cfg->pm_decode_period_ns);
    pthread_cond_timedwait(&g.wake, &g.wake_lock, &until);
    if (g.stop)
      break;
    pthread_mutex_unlock(&g.wake_lock);
    pthread_mutex_lock(&g.lock);
    for (Device *d : g.devices)
      decode(d, 0);
    pthread_mutex_unlock(&g.lock);
    pthread_mutex_lock(&g.wake_lock);
  }
  pthread_mutex_unlock(&g.wake_lock);
  return nullptr;
}

void start_thread_locked() {
  if (g.thread_started)
    return;
  g.thread_started = mprof_cupti_thread_start(&g.thread, decode_thread, nullptr,
                                              "the PM decode thread") == 0;
}

bool profiler_initialize_locked() {
  if (g.profiler_initialized)
    return true;
  CUpti_Profiler_Initialize_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  if (cuptiProfilerInitialize(&p) != CUPTI_SUCCESS)
    return false;
  g.profiler_initialized = true;
  return true;
}

/* End @p d's session (the counters chosen stay). */
void session_disable(Device *d) {
  if (d->object) {
    CUpti_PmSampling_Disable_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE;
    p.pPmSamplingObject = d->object;
    cuptiPmSamplingDisable(&p);
    d->object = nullptr;
  }
  d->started = false;
}

void disable(Device *d) {
  session_disable(d);
  host_free(d->host);
  d->host = nullptr;
}

/* Enable, SetConfig, the counter-data image and Start of @p d's session,
 * with the counters chosen before (d->config, d->metrics). Sets
 * @p t_enable and @p t_image to when Enable + SetConfig and the image were
 * done; on failure returns CUPTI's result with @p failed naming the call
 * ("insufficient_privileges" with CUPTI_SUCCESS for that refusal) and
 * leaves d->object for disable(). */
CUptiResult open_session(Device *d, uint64_t *t_enable, uint64_t *t_image,
                         const char **failed) {
  CUpti_PmSampling_Enable_Params en;
  memset(&en, 0, sizeof en);
  en.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
  en.deviceIndex = d->ordinal;
  CUptiResult res = cuptiPmSamplingEnable(&en);
  if (res == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    *failed = "insufficient_privileges";
    return res;
  }
  if (res != CUPTI_SUCCESS) {
    *failed = "cuptiPmSamplingEnable";
    return res;
  }
  d->object = en.pPmSamplingObject;
  CUpti_PmSampling_SetConfig_Params sc;
  memset(&sc, 0, sizeof sc);
  sc.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
  sc.pPmSamplingObject = d->object;
  sc.configSize = d->config.size();
  sc.pConfig = d->config.data();
  sc.hardwareBufferSize = g.cfg->pm_hw_buffer;
  sc.samplingInterval = g.cfg->pm_interval_ns;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  res = cuptiPmSamplingSetConfig(&sc);
  if (res != CUPTI_SUCCESS) {
    *failed = "cuptiPmSamplingSetConfig";
    return res;
  }
  *t_enable = now_ns();
  CUpti_PmSampling_GetCounterDataSize_Params cs;
  memset(&cs, 0, sizeof cs);
  cs.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
  cs.pPmSamplingObject = d->object;
  cs.pMetricNames = d->metrics.data();
  cs.numMetrics = d->metrics.size();
  cs.maxSamples = g.cfg->pm_counter_samples;
  res = cuptiPmSamplingGetCounterDataSize(&cs);
  if (res == CUPTI_SUCCESS) {
    d->counter_data.resize(cs.counterDataSize);
    /* The image is initialized for this session's object. */
    d->pristine.clear();
    res = counter_data_reset(d);
  }
  if (res != CUPTI_SUCCESS) {
    *failed = "cuptiPmSamplingCounterDataImageInitialize";
    return res;
  }
  *t_image = now_ns();
  res = session_start(d);
  if (res != CUPTI_SUCCESS) {
    *failed = "cuptiPmSamplingStart";
    return res;
  }
  d->started = true;
  return CUPTI_SUCCESS;
}

void setup_locked(uint32_t ordinal) {
  uint64_t t_begin = now_ns();
  Device *d = new Device;
  d->ordinal = ordinal;
  CUptiResult res;
  if (!profiler_initialize_locked()) {
    refuse(ordinal, "cuptiProfilerInitialize failed", CUPTI_SUCCESS);
    delete d;
    return;
  }
  CUpti_Profiler_DeviceSupported_Params sup;
  memset(&sup, 0, sizeof sup);
  sup.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  sup.cuDevice = (CUdevice)ordinal;
  sup.api = CUPTI_PROFILER_PM_SAMPLING;
  res = cuptiProfilerDeviceSupported(&sup);
  if (res != CUPTI_SUCCESS ||
      sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    refuse(ordinal, "cuptiProfilerDeviceSupported: not supported", res);
    delete d;
    return;
  }
  CUpti_Device_GetChipName_Params chip;
  memset(&chip, 0, sizeof chip);
  chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  chip.deviceIndex = ordinal;
  res = cuptiDeviceGetChipName(&chip);
  if (res != CUPTI_SUCCESS || !chip.pChipName) {
    refuse(ordinal, "cuptiDeviceGetChipName", res);
    delete d;
    return;
  }
  std::string chip_name = chip.pChipName;
  /* Availability first: it fails once a sampling session is active. */
  std::vector<uint8_t> avail;
  CUpti_PmSampling_GetCounterAvailability_Params av;
  memset(&av, 0, sizeof av);
  av.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
  av.deviceIndex = ordinal;
  res = cuptiPmSamplingGetCounterAvailability(&av);
  if (res == CUPTI_SUCCESS && av.counterAvailabilityImageSize) {
    avail.resize(av.counterAvailabilityImageSize);
    av.pCounterAvailabilityImage = avail.data();
    res = cuptiPmSamplingGetCounterAvailability(&av);
  }
  if (res == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    refuse(ordinal, "insufficient_privileges", CUPTI_SUCCESS);
    delete d;
    return;
  }
  if (res != CUPTI_SUCCESS)
    avail.clear(); /* the host API still knows the chip's counters */
  if (!choose_metrics(d, chip_name.c_str(), avail)) {
    delete d;
    return;
  }
  uint64_t t_host = now_ns(), t_enable = 0, t_image = 0;
  const char *failed = nullptr;
  res = open_session(d, &t_enable, &t_image, &failed);
  if (res != CUPTI_SUCCESS) {
    refuse(ordinal, failed,
           res == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? CUPTI_SUCCESS : res);
    disable(d);
    delete d;
    return;
  }
  std::vector<std::string> units;
  for (const char *m : d->metrics)
    units.push_back(metric_unit(d->host, m));
  std::vector<const char *> unit_ptrs;
  for (const std::string &u : units)
    unit_ptrs.push_back(u.c_str());
  mprof_cupti_translate_pm_metrics(g.tr, ordinal, g.cfg->pm_interval_ns,
                                   d->metrics.size(), d->metrics.data(),
                                   unit_ptrs.data());
  std::string prefix = "pm.device." + std::to_string(ordinal);
  meta(prefix + ".chip", chip_name);
  meta_u64(prefix + ".counter_data_bytes", d->counter_data.size());
  meta_u64(prefix + ".counter_data_samples", g.cfg->pm_counter_samples);
  /* Where set-up spends its time: choosing the counters and building the
   * configuration (host), Enable + SetConfig, the counter-data image. */
  meta_u64(prefix + ".setup_host_us", (t_host - t_begin) / 1000);
  meta_u64(prefix + ".setup_enable_us", (t_enable - t_host) / 1000);
  meta_u64(prefix + ".setup_image_us", (t_image - t_enable) / 1000);
  g.devices.push_back(d);
  start_thread_locked();
}

} // namespace

extern "C" void mprof_cupti_pm_init(mprof_cupti_translate *tr,
                                    const mprof_cupti_config *cfg) {
  g.tr = tr;
  g.cfg = cfg;
  meta("pm.mode", cfg->pm_alternate ? "alternate"
                  : cfg->pm_enabled ? "on"
                                    : "off");
  if (cfg->pm_enabled) {
    meta_u64("pm.interval_ns", cfg->pm_interval_ns);
    meta_u64("pm.hw_buffer", cfg->pm_hw_buffer);
    meta_u64("pm.decode_period_ns", cfg->pm_decode_period_ns);
  }
}

namespace {

bool known_locked(uint32_t ordinal) {
  bool known = g.finished;
  for (Device *d : g.devices)
    known = known || d->ordinal == ordinal;
  for (uint32_t r : g.refused)
    known = known || r == ordinal;
  return known;
}

void setup_timed_locked(uint32_t ordinal) {
  size_t before = g.devices.size();
  uint64_t t0 = now_ns();
  setup_locked(ordinal);
  if (g.devices.size() == before)
    g.refused.push_back(ordinal);
  else
    meta_u64("pm.device." + std::to_string(ordinal) + ".setup_us",
             (now_ns() - t0) / 1000);
}

} // namespace

extern "C" void mprof_cupti_pm_device(uint32_t ordinal) {
  if (!g.cfg || !g.cfg->pm_enabled)
    return;
  pthread_mutex_lock(&g.lock);
  if (!known_locked(ordinal)) {
    if (g.cfg->pm_alternate && !g.phase_on) {
      bool waiting = false;
      for (uint32_t w : g.waiting)
        waiting = waiting || w == ordinal;
      if (!waiting)
        g.waiting.push_back(ordinal);
    } else {
      setup_timed_locked(ordinal);
    }
  }
  pthread_mutex_unlock(&g.lock);
}

/* A phase of an alternating run. On: devices seen for the first time are
 * set up; the others open a new session with the counters chosen at their
 * set-up. Off: Stop, the samples since the decode thread's last round, and
 * Disable, so that PC sampling may take the GPU (CUPTI fails both when they
 * run together: docs/validation/). */
extern "C" void mprof_cupti_pm_phase(int on) {
  if (!g.cfg || !g.cfg->pm_alternate)
    return;
  pthread_mutex_lock(&g.lock);
  if (g.finished || g.phase_on == (on != 0)) {
    pthread_mutex_unlock(&g.lock);
    return;
  }
  g.phase_on = on != 0;
  if (on) {
    g.phases++;
    std::vector<uint32_t> waiting;
    waiting.swap(g.waiting);
    for (uint32_t ordinal : waiting)
      if (!known_locked(ordinal))
        setup_timed_locked(ordinal);
    for (Device *d : g.devices) {
      if (d->object)
        continue;
      uint64_t t_enable = 0, t_image = 0;
      const char *failed = nullptr;
      CUptiResult res = open_session(d, &t_enable, &t_image, &failed);
      if (res != CUPTI_SUCCESS) {
        refuse(d->ordinal, failed,
               res == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? CUPTI_SUCCESS
                                                          : res);
        session_disable(d);
      }
    }
    start_thread_locked();
  } else {
    for (Device *d : g.devices) {
      if (!d->object)
        continue;
      if (d->started) {
        session_stop(d);
        d->started = false;
      }
      decode(d, now_ns() + LAST_DECODE_NS);
      session_disable(d);
    }
  }
  pthread_mutex_unlock(&g.lock);
}

namespace {

void finish_sessions();

void *finisher(void *) {
  finish_sessions();
  return nullptr;
}

} // namespace

/* Stopping a session did not always return at exit on the H200: the
 * sessions are finished on a helper thread; the exit waits
 * FINISH_TIMEOUT_S for it, and for Stop STOP_TIMEOUT_NS at most. The
 * samples decoded until then are kept. */
extern "C" void mprof_cupti_pm_finish(void) {
  if (!g.cfg || !g.cfg->pm_enabled)
    return;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, finisher, nullptr) != 0) {
    finish_sessions();
    return;
  }
  uint64_t started = now_ns();
  uint64_t deadline = started + (uint64_t)FINISH_TIMEOUT_S * 1000000000ull;
  for (;;) {
    struct timespec until = realtime_after(10000000ull); /* look every 10 ms */
    if (pthread_timedjoin_np(thread, nullptr, &until) == 0)
      return;
    uint64_t stop = __atomic_load_n(&g.stop_started_ns, __ATOMIC_ACQUIRE);
    uint64_t now = now_ns();
    if (now > deadline || (stop && now > stop + STOP_TIMEOUT_NS))
      break;
  }
  pthread_detach(thread);
  meta("pm.error", "exit_timeout");
  meta("pm.exit_phase", __atomic_load_n(&g.exit_phase, __ATOMIC_ACQUIRE));
  meta("pm.exit_decode_step",
       __atomic_load_n(&g.decode_step, __ATOMIC_ACQUIRE));
  meta_u64("pm.exit_wait_ms", (now_ns() - started) / 1000000u);
  mprof_cupti_translate_error(
      g.tr, "PM sampling did not stop within the exit timeout; the "
            "samples decoded until then are kept");
}

namespace {

/* What the producer says about @p d's sampling, in the trace's META.
 * Written after Stop: writing it between the decode thread's end and Stop
 * made Stop hang in 4 of 4 `--pm on --pc-mode off` recordings of the
 * cuBLAS program on the H200, and in none of 7 written after (why was not
 * found; docs/validation/H200.md). */
void write_account(Device *d) {
  std::string prefix = "pm.device." + std::to_string(d->ordinal);
  meta_u64(prefix + ".samples", d->samples);
  meta_u64(prefix + ".decodes", d->decodes);
  meta_u64(prefix + ".decode_us", d->decode_ns / 1000);
  meta_u64(prefix + ".decode_data_us", d->decode_data_ns / 1000);
  meta_u64(prefix + ".evaluate_us", d->evaluate_ns / 1000);
  meta_u64(prefix + ".reset_us", d->reset_ns / 1000);
  meta_u64(prefix + ".restarts", d->restarts);
  meta_u64(prefix + ".image_full", d->image_full);
  if (d->restart_failures)
    meta_u64(prefix + ".restart_failures", d->restart_failures);
  /* A full image loses what the decode read past its end (a gap of
   * 10-35 ms each): samples lost, as in an overflow. */
  mprof_cupti_translate_pm_drop(g.tr, d->ordinal, MPROF_DROP_PM_OVERFLOW,
                                d->overflows + d->image_full);
  mprof_cupti_translate_pm_drop(g.tr, d->ordinal, MPROF_DROP_PM_SAMPLES,
                                d->unstored);
}

void finish_sessions() {
  pthread_mutex_lock(&g.wake_lock);
  __atomic_store_n(&g.stop, true, __ATOMIC_RELEASE);
  pthread_cond_signal(&g.wake);
  pthread_mutex_unlock(&g.wake_lock);
  if (g.thread_started)
    pthread_join(g.thread, nullptr);
  g.thread_started = false;
  phase("waiting for the decode lock");
  pthread_mutex_lock(&g.lock);
  g.finished = true;
  for (Device *d : g.devices) {
    /* Stop as soon as the decode thread has ended: decoding first made
     * Stop hang in 3 of 3 `--pm on --pc-mode off` recordings of the cuBLAS
     * program on the H200, and so did writing the account first (above). */
    if (d->started) {
      phase("cuptiPmSamplingStop");
      __atomic_store_n(&g.stop_started_ns, now_ns(), __ATOMIC_RELEASE);
      session_stop(d);
      __atomic_store_n(&g.stop_started_ns, 0, __ATOMIC_RELEASE);
      d->started = false;
    }
    /* The samples since the decode thread's last round. */
    phase("the last decode");
    uint64_t before = d->samples;
    decode(d, now_ns() + LAST_DECODE_NS);
    std::string prefix = "pm.device." + std::to_string(d->ordinal);
    meta_u64(prefix + ".after_stop_samples", d->samples - before);
    write_account(d);
    if (d->behind) {
      meta(prefix + ".behind", "1");
      meta("pm.error", "decode_behind");
      mprof_cupti_translate_error(
          g.tr, "PM sampling: decoding could not keep up with the sampling "
                "interval; the samples not decoded by exit are lost");
    }
    /* No cuptiPmSamplingDisable, host deinitialize or profiler
     * deinitialize here: on the H200 (driver 580, CUPTI 13.0) Disable at
     * exit never returned (a thread spinning in libnvperf_host, seen with
     * cuda-gdb), and this runs only as the process ends, which releases
     * the session. */
  }
  g.devices.clear();
  pthread_mutex_unlock(&g.lock);
}

} // namespace
