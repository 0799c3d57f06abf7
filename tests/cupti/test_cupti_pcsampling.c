/*
 * The producer's PC-sampling drains (producers/cupti/pcsampling.c) against
 * a stand-in CUPTI, without a GPU: every sample CUPTI hands over reaches
 * the trace once, and the configured buffer, which CUPTI fills on the
 * program's threads at a range end, is read only by that thread's callback
 * and after Disable, never by the drain thread.
 *
 * The stand-in follows CUPTI's contract (cupti_pcsampling.h, NVIDIA's
 * pc_sampling_continuous sample): GetData hands out decoded records from
 * CUPTI's own queue under CUPTI's own lock; a range end writes the range's
 * records into the configured buffer on the thread that ended it, taking no
 * lock of the producer's; Disable flushes what is left there. Under
 * ThreadSanitizer (ctest -L tsan) the threaded test fails on a drain thread
 * that reads the configured buffer while a range end writes it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mprof/error.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "producer.h"

#include "cupti_fixture.h"

/* ---- the stand-in CUPTI ----------------------------------------------------
 * One context. Records name one function of one cubin; a record's PC and
 * its samples of the two stall reasons are what the tests count. */

#define FAKE_REASONS 2
static const uint32_t fake_reason_index[FAKE_REASONS] = {7, 9};
static const char *const fake_reason_names[FAKE_REASONS] = {
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
    "smsp__pcsamp_warps_issue_stalled_wait"};
static char fake_function[] = "_Z6kernelv";

typedef struct fake_record {
  uint64_t pc;
  uint32_t samples; /* of each of the two reasons */
} fake_record;

static struct {
  pthread_mutex_t lock;         /* CUPTI's own */
  CUpti_PCSamplingData *config; /* the configured buffer */
  fake_record queue[4096];      /* decoded, waiting for GetData */
  size_t queued;
  int enabled;
  uint64_t handed_out; /* samples GetData and Disable gave */
} fake = {PTHREAD_MUTEX_INITIALIZER, NULL, {{0, 0}}, 0, 0, 0};
/* Samples range ends parked; only the thread ending ranges counts them
 * (the tests read it after joining that thread), so that counting adds no
 * synchronisation that would hide a race from ThreadSanitizer. */
static uint64_t parked_samples;

static void fake_fill(CUpti_PCSamplingPCData *pc, const fake_record *r) {
  pc->cubinCrc = 0xc0ffee;
  pc->pcOffset = r->pc;
  pc->functionIndex = 3;
  pc->functionName = fake_function;
  pc->correlationId = 0;
  pc->stallReasonCount = FAKE_REASONS;
  for (size_t k = 0; k < FAKE_REASONS; k++) {
    pc->stallReason[k].pcSamplingStallReasonIndex = fake_reason_index[k];
    pc->stallReason[k].samples = r->samples;
  }
}

/* CUPTI's decode thread: records become available to GetData. */
static void fake_decode(uint64_t pc, uint32_t samples) {
  pthread_mutex_lock(&fake.lock);
  if (fake.queued < sizeof fake.queue / sizeof fake.queue[0])
    fake.queue[fake.queued++] = (fake_record){pc, samples};
  pthread_mutex_unlock(&fake.lock);
}

/* A range end on the calling thread (a module loaded after an unload):
 * CUPTI writes the range's records into the configured buffer there and
 * then, only then, calls the producer's callback on the same thread. It
 * holds no lock the drain thread takes. */
static void fake_range_end(uint64_t first_pc, size_t count, uint32_t samples) {
  CUpti_PCSamplingData *config = fake.config;
  size_t n = count < config->collectNumPcs ? count : config->collectNumPcs;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    fake_record r = {first_pc + 16 * i, samples};
    fake_fill(&config->pPcData[i], &r);
    total += (uint64_t)samples * FAKE_REASONS;
  }
  config->totalNumPcs = n;
  config->totalSamples = total;
  config->remainingNumPcs = 0;
  parked_samples += total;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result,
                                          const char **str) {
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  *timestamp = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *params) {
  (void)params;
  pthread_mutex_lock(&fake.lock);
  fake.enabled = 1;
  pthread_mutex_unlock(&fake.lock);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingGetNumStallReasons(
    CUpti_PCSamplingGetNumStallReasonsParams *params) {
  *params->numStallReasons = FAKE_REASONS;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *params) {
  for (size_t i = 0; i < FAKE_REASONS && i < params->numStallReasons; i++) {
    params->stallReasonIndex[i] = fake_reason_index[i];
    snprintf(params->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s",
             fake_reason_names[i]);
  }
  return CUPTI_SUCCESS;
}

/* Start/stop control (capture windows): what was configured and called. */
static struct {
  int control; /* ENABLE_START_STOP_CONTROL set to 1 */
  int starts, stops;
} start_stop;

CUptiResult CUPTIAPI cuptiPCSamplingStart(CUpti_PCSamplingStartParams *params) {
  (void)params;
  start_stop.starts++;
  return start_stop.control ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
}

/* Stop ends a range: its records land in the configured buffer, on the
 * calling thread, before Stop returns. */
static void fake_range_end(uint64_t first_pc, size_t count, uint32_t samples);
CUptiResult CUPTIAPI cuptiPCSamplingStop(CUpti_PCSamplingStopParams *params) {
  (void)params;
  start_stop.stops++;
  if (!start_stop.control)
    return CUPTI_ERROR_INVALID_OPERATION;
  fake_range_end(0x5000, 2, 4);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingSetConfigurationAttribute(
    CUpti_PCSamplingConfigurationInfoParams *params) {
  for (size_t i = 0; i < params->numAttributes; i++) {
    CUpti_PCSamplingConfigurationInfo *info =
        &params->pPCSamplingConfigurationInfo[i];
    if (info->attributeType ==
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL)
      start_stop.control = info->attributeData.enableStartStopControlData
                               .enableStartStopControl == 1;
    if (info->attributeType ==
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
      fake.config =
          (CUpti_PCSamplingData *)
              info->attributeData.samplingDataBufferData.samplingDataBuffer;
    info->attributeStatus = CUPTI_SUCCESS;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingGetConfigurationAttribute(
    CUpti_PCSamplingConfigurationInfoParams *params) {
  for (size_t i = 0; i < params->numAttributes; i++)
    params->pPCSamplingConfigurationInfo[i].attributeStatus = CUPTI_SUCCESS;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *params) {
  CUpti_PCSamplingData *out = (CUpti_PCSamplingData *)params->pcSamplingData;
  pthread_mutex_lock(&fake.lock);
  size_t n =
      fake.queued < out->collectNumPcs ? fake.queued : out->collectNumPcs;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    fake_fill(&out->pPcData[i], &fake.queue[i]);
    total += (uint64_t)fake.queue[i].samples * FAKE_REASONS;
  }
  memmove(fake.queue, fake.queue + n, (fake.queued - n) * sizeof *fake.queue);
  fake.queued -= n;
  out->totalNumPcs = n;
  out->remainingNumPcs = fake.queued;
  out->totalSamples = total;
  fake.handed_out += total;
  pthread_mutex_unlock(&fake.lock);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *params) {
  (void)params;
  /* Joins CUPTI's threads, then flushes what is left into the configured
   * buffer; afterwards the buffer is the caller's. */
  pthread_mutex_lock(&fake.lock);
  CUpti_PCSamplingData *config = fake.config;
  size_t n =
      fake.queued < config->collectNumPcs ? fake.queued : config->collectNumPcs;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    fake_fill(&config->pPcData[i], &fake.queue[i]);
    total += (uint64_t)fake.queue[i].samples * FAKE_REASONS;
  }
  config->totalNumPcs = n;
  config->totalSamples = total;
  fake.queued = 0;
  fake.enabled = 0;
  fake.handed_out += total;
  pthread_mutex_unlock(&fake.lock);
  return CUPTI_SUCCESS;
}

/* ---- the producer around it -----------------------------------------------
 */

static CUcontext const test_ctx = (CUcontext)(uintptr_t)0x1000;

static void start_sampling(fixture *f, const char *name) {
  open_fixture(f, name, NULL);
  memset(fake.queue, 0, sizeof fake.queue);
  fake.queued = 0;
  fake.handed_out = 0;
  parked_samples = 0;
  fake.config = NULL;
  g.tr = f->t;
  g.pid = getpid();
  g.cfg.pc_mode = MPROF_CUPTI_PC_CONTINUOUS;
  g.cfg.pc_period = 14;
  g.cfg.pc_hw_buffer = 512u << 20;
  g.pc_allowed = 1;
  g.config_direct_reads = 0;
  g.pcs = NULL; /* a test that failed may have left its context behind */
  g.window_pc_ready = 0;
  g.pc_waiting_count = 0;
  pc_setup(test_ctx, 0);
  if (g.windowed) {
    /* A window sets PC sampling up when it first opens, after the kernel
     * kind is on (CUPTI refuses that kind once PC sampling is enabled). */
    assert_null(g.pcs);
    assert_null(fake.config);
    assert_int_equal(g.pc_waiting_count, 1);
    pc_setup_waiting();
    assert_int_equal(g.pc_waiting_count, 0);
  }
  assert_non_null(fake.config);
  assert_non_null(g.pcs);
}

/* Disable, finish the trace, and the samples it holds. */
static uint64_t finish_sampling(fixture *f) {
  pc_finish_all();
  assert_null(g.pcs);
  finish_fixture(f);
  g.tr = NULL;
  size_t n = 0;
  const mprof_pc_sample_record *pcs = mprof_trace_pc_samples(f->trace, &n);
  uint64_t samples = 0;
  for (size_t i = 0; i < n; i++)
    samples += pcs[i].samples;
  /* What CUPTI reported as total agrees with what the records add up to. */
  assert_int_equal(drop_count(f->trace, MPROF_DROP_PC_TOTAL_SAMPLES, 0),
                   samples);
  return samples;
}

/* A range end's records wait in the configured buffer for the callback of
 * the thread that ended it: a periodic drain in between leaves them alone
 * (CUPTI may still be writing them), the callback takes them, and nothing
 * is counted twice by the Disable at the end. */
static void test_range_end_is_read_by_its_own_thread(void **state) {
  (void)state;
  fixture f;
  start_sampling(&f, "pc-range-end");
  fake_decode(0x100, 5);
  fake_decode(0x110, 6);
  drain_all_pc(); /* the drain thread's tick */
  fake_range_end(0x200, 3, 10);
  drain_all_pc(); /* a tick between the range end and its callback */
  assert_int_equal(fake.config->totalNumPcs, 3); /* untouched */
  assert_int_equal(g.config_direct_reads, 0);
  /* The MODULE_LOADED callback on the thread that loaded the module. */
  pc_drain_context(test_ctx, PC_AFTER_RANGE_END);
  assert_int_equal(g.config_direct_reads, 1);
  assert_int_equal(fake.config->totalNumPcs, 0);
  fake_decode(0x120, 7); /* left for Disable */
  uint64_t samples = finish_sampling(&f);
  assert_int_equal(samples, (5 + 6 + 3 * 10 + 7) * FAKE_REASONS);
  assert_int_equal(samples, fake.handed_out + parked_samples);
  close_fixture(&f);
}

/* The drain thread ticks while another thread loads modules (each load a
 * range end followed by its callback, with a pause between, as CUPTI's
 * flush takes time) and CUPTI decodes more: every sample arrives once. */
#define LOADS 40
static atomic_int loading_done;

static void *load_modules(void *arg) {
  (void)arg;
  for (int i = 0; i < LOADS; i++) {
    fake_range_end(0x1000 + 0x100 * (uint64_t)i, 4, 3);
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
    pc_drain_context(test_ctx, PC_AFTER_RANGE_END);
    fake_decode(0x9000 + 16 * (uint64_t)i, 2);
  }
  atomic_store(&loading_done, 1);
  return NULL;
}

/* A capture window: sampling is configured with start/stop control, so it
 * never runs outside the window; closing it stops sampling and reads the
 * range Stop ended, at once, on the closing thread. Without a window no
 * start/stop control is configured (sampling runs the whole time). */
static void test_window_start_stop(void **state) {
  (void)state;
  memset(&start_stop, 0, sizeof start_stop);
  fixture f;
  g.windowed = 1;
  start_sampling(&f, "pc-window");
  assert_int_equal(start_stop.control, 1);
  assert_int_equal(start_stop.starts, 0); /* closed until the window opens */
  pc_window(1);
  assert_int_equal(start_stop.starts, 1);
  fake_decode(0x100, 5);
  pc_window(0);
  assert_int_equal(start_stop.stops, 1);
  assert_int_equal(fake.config->totalNumPcs, 0); /* read by the closer */
  assert_int_equal(g.config_direct_reads, 1);
  uint64_t samples = finish_sampling(&f);
  assert_int_equal(samples, (5 + 2 * 4) * FAKE_REASONS);
  close_fixture(&f);
  g.windowed = 0;

  memset(&start_stop, 0, sizeof start_stop);
  start_sampling(&f, "pc-no-window");
  assert_int_equal(start_stop.control, 0);
  pc_finish_all();
  finish_fixture(&f);
  g.tr = NULL;
  close_fixture(&f);
}

static void test_drain_thread_beside_range_ends(void **state) {
  (void)state;
  fixture f;
  start_sampling(&f, "pc-threads");
  atomic_store(&loading_done, 0);
  pthread_t loader;
  assert_int_equal(pthread_create(&loader, NULL, load_modules, NULL), 0);
  while (!atomic_load(&loading_done))
    drain_all_pc();
  pthread_join(loader, NULL);
  uint64_t samples = finish_sampling(&f);
  assert_int_equal(samples, (uint64_t)LOADS * (4 * 3 + 2) * FAKE_REASONS);
  assert_int_equal(samples, fake.handed_out + parked_samples);
  close_fixture(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_range_end_is_read_by_its_own_thread),
      cmocka_unit_test(test_drain_thread_beside_range_ends),
      cmocka_unit_test(test_window_start_stop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
