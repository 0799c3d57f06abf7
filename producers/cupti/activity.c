/*
 * mprof CUPTI producer — CUPTI activity buffers (a pool of pre-zeroed
 * blocks) and the activity kinds recorded.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "producer.h"

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

/* When the work or call of @p record began; 0 for a record that is not
 * work or a call (a marker, a device). */
static int record_start(const CUpti_Activity *record, uint64_t *start) {
  const void *r = record;
  switch (record->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL:
    *start = ((const CUpti_ActivityKernel10 *)r)->start;
    return 1;
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    *start = ((const CUpti_ActivityMemcpy6 *)r)->start;
    return 1;
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    *start = ((const CUpti_ActivityMemcpyPtoP4 *)r)->start;
    return 1;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    *start = ((const CUpti_ActivityMemset4 *)r)->start;
    return 1;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    *start = ((const CUpti_ActivityAPI *)r)->start;
    return 1;
  default: return 0;
  }
}

/* The API functions recorded, by domain and cbid (a window that enables
 * the whole RUNTIME and DRIVER kinds keeps only these). */
#define MAX_CBID 4096
static unsigned char api_wanted[2][MAX_CBID];

static int api_record_wanted(const CUpti_Activity *record) {
  if (record->kind != CUPTI_ACTIVITY_KIND_RUNTIME &&
      record->kind != CUPTI_ACTIVITY_KIND_DRIVER)
    return 1;
  uint32_t cbid = ((const CUpti_ActivityAPI *)(const void *)record)->cbid;
  return cbid < MAX_CBID &&
         api_wanted[record->kind == CUPTI_ACTIVITY_KIND_DRIVER][cbid];
}

/* What a capture window's kinds delivered, kept (in a piece) or dropped
 * (between pieces), by group: written to META at exit
 * (activity_window_account()), so that a window that lost a kind says
 * which. */
enum { GROUP_KERNELS, GROUP_COPIES, GROUP_API, GROUP_COUNT };
static atomic_ulong window_records[GROUP_COUNT][2];

static int record_group(CUpti_ActivityKind kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: return GROUP_KERNELS;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: return GROUP_API;
  default: return GROUP_COPIES;
  }
}

void activity_window_account(void) {
  static const char *const names[GROUP_COUNT] = {"kernels", "copies",
                                                 "api_calls"};
  for (int i = 0; i < GROUP_COUNT; i++) {
    char key[64];
    snprintf(key, sizeof key, "capture.records.%s.kept", names[i]);
    meta_u64(key, atomic_load(&window_records[i][1]));
    snprintf(key, sizeof key, "capture.records.%s.dropped", names[i]);
    meta_u64(key, atomic_load(&window_records[i][0]));
  }
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
      /* Work done between a window's pieces is recorded (the kinds stay
       * on, window.c) but not kept. */
      uint64_t start;
      if (g.windowed && g.window_api == WINDOW_API_KIND &&
          !api_record_wanted(record))
        continue;
      if (g.windowed && record_start(record, &start)) {
        int kept = window_keeps(start);
        atomic_fetch_add(&window_records[record_group(record->kind)][kept], 1);
        if (!kept)
          continue;
      }
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

/* The kinds a capture window turns on and off (never DEVICE). */
static const struct {
  CUpti_ActivityKind kind;
  const char *name;
} recorded_kinds[] = {
    /* Never CUPTI_ACTIVITY_KIND_KERNEL: it serialises every kernel. */
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    {CUPTI_ACTIVITY_KIND_MARKER_DATA, "MARKER_DATA"},
};
#define RECORDED_KIND_COUNT (sizeof recorded_kinds / sizeof recorded_kinds[0])

/* The API functions whose calls are recorded (enable_api_calls()), so a
 * window can turn them off when it is over. */
#define MAX_API_FUNCTIONS 1024
static struct {
  uint32_t kind; /* MPROF_API_RUNTIME or MPROF_API_DRIVER */
  CUpti_CallbackId cbid;
} api_functions[MAX_API_FUNCTIONS];
static size_t api_function_count;

/* Turn the records of one API function (@p kind MPROF_API_RUNTIME or
 * MPROF_API_DRIVER) on or off; 0 when CUPTI refused. */
static int set_api_function(uint32_t kind, CUpti_CallbackId cbid, int on) {
  CUptiResult res = kind == MPROF_API_RUNTIME
                        ? cuptiActivityEnableRuntimeApi(cbid, on)
                        : cuptiActivityEnableDriverApi(cbid, on);
  return ok(res, kind == MPROF_API_RUNTIME ? "cuptiActivityEnableRuntimeApi"
                                           : "cuptiActivityEnableDriverApi");
}

/* NVTX ranges stay recorded through an nvtx: window (the program pays for
 * its NVTX callbacks anyway): CUPTI writes a range's record around the
 * callbacks that open and close the window, so turning the kind on and
 * off there lost the window's own ranges. */
static int marker_kept(CUpti_ActivityKind kind) {
  return g.windowed && g.capture.s.trigger == MPROF_CAPTURE_NVTX &&
         (kind == CUPTI_ACTIVITY_KIND_MARKER ||
          kind == CUPTI_ACTIVITY_KIND_MARKER_DATA);
}

/* Enable (@p on) or disable recorded kind @p i. */
static void switch_kind(size_t i, int on) {
  char what[96];
  snprintf(what, sizeof what, "%s(%s)",
           on ? "cuptiActivityEnable" : "cuptiActivityDisable",
           recorded_kinds[i].name);
  ok(on ? cuptiActivityEnable(recorded_kinds[i].kind)
        : cuptiActivityDisable(recorded_kinds[i].kind),
     what);
}

/* CUPTI refuses to enable the kernel kind while PC sampling is enabled on
 * a context (CUPTI_ERROR_NOT_COMPATIBLE on the H100: a window's every
 * kernel was lost), so a window turns the kinds on once, before PC
 * sampling is enabled, and off when it is over; what they deliver
 * between its pieces is dropped (window_keeps()). API calls: the recorded
 * functions were enabled at start-up (per-function records enabled here
 * never came on the H100) and go off when the window is over;
 * MPROF_WINDOW_API=kind enables the whole RUNTIME and DRIVER kinds here
 * instead, filtered to the recorded functions (api_record_wanted()). */
void activity_window(int on) {
  /* CUPTI drops what it has not delivered of a kind that goes off: every
   * buffer first, the ones still open too. */
  if (!on)
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
       "cuptiActivityFlushAll(FORCED, window over)");
  for (size_t i = 0; i < RECORDED_KIND_COUNT; i++)
    if (!marker_kept(recorded_kinds[i].kind))
      switch_kind(i, on);
  if (g.window_api == WINDOW_API_KIND) {
    if (!api_function_count) /* API-call records are off */
      return;
    ok(on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME)
          : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME),
       on ? "cuptiActivityEnable(RUNTIME)" : "cuptiActivityDisable(RUNTIME)");
    ok(on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER)
          : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER),
       on ? "cuptiActivityEnable(DRIVER)" : "cuptiActivityDisable(DRIVER)");
  } else if (!on) {
    /* on since start-up (enable_api_calls()) */
    for (size_t i = 0; i < api_function_count; i++)
      set_api_function(api_functions[i].kind, api_functions[i].cbid, 0);
  }
}

/* The API functions whose calls API_CALLS keeps: those that issue work a
 * LAUNCHES or MEMOPS record shows (launches, graph launches, copies,
 * memsets). cudaLaunchHostFunc / cuLaunchHostFunc run host code only. */
static int issues_gpu_work(const char *name, const char *const *prefixes) {
  if (strstr(name, "LaunchHostFunc"))
    return 0;
  for (; *prefixes; prefixes++)
    if (strncmp(name, *prefixes, strlen(*prefixes)) == 0)
      return 1;
  return 0;
}

/* Per-function activity (cuptiActivityEnableRuntimeApi/DriverApi), not the
 * whole RUNTIME and DRIVER kinds: CUPTI then writes a record only for the
 * calls that issue GPU work, not for the many small queries a framework
 * makes (cudaGetDevice, cudaStreamIsCapturing, ...). */
static void enable_api_calls(void) {
  static const char *const runtime[] = {"cudaLaunch", "cudaGraphLaunch",
                                        "cudaMemcpy", "cudaMemset", NULL};
  static const char *const driver[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy",
                                       "cuMemset", NULL};
  static const struct {
    CUpti_CallbackDomain domain;
    uint32_t kind, size;
    const char *const *prefixes;
  } domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, MPROF_API_RUNTIME,
       CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime},
      {CUPTI_CB_DOMAIN_DRIVER_API, MPROF_API_DRIVER,
       CUPTI_DRIVER_TRACE_CBID_SIZE, driver},
  };
  if (!g.cfg.api_calls) {
    meta("api_calls", "off");
    return;
  }
  uint64_t enabled = 0;
  for (size_t d = 0; d < sizeof domains / sizeof domains[0]; d++) {
    for (uint32_t cbid = 1; cbid < domains[d].size; cbid++) {
      const char *name = NULL;
      if (cuptiGetCallbackName(domains[d].domain, cbid, &name) !=
              CUPTI_SUCCESS ||
          !name || !issues_gpu_work(name, domains[d].prefixes))
        continue;
      if (cbid < MAX_CBID)
        api_wanted[domains[d].kind == MPROF_API_DRIVER][cbid] = 1;
      /* A capture window's too, from the start, dropped outside its
       * pieces (unless MPROF_WINDOW_API=kind: the whole kinds when it
       * first opens, activity_window()). */
      if ((!g.windowed || g.window_api == WINDOW_API_EARLY) &&
          !set_api_function(domains[d].kind, cbid, 1))
        continue;
      if (api_function_count < MAX_API_FUNCTIONS) {
        api_functions[api_function_count].kind = domains[d].kind;
        api_functions[api_function_count].cbid = cbid;
        api_function_count++;
      } else if (g.windowed) {
        continue; /* no room to turn it on when the window opens */
      }
      mprof_cupti_translate_api_name(g.tr, domains[d].kind, cbid, name);
      enabled++;
    }
  }
  meta("api_calls", enabled ? "launches_copies_memsets" : "off");
  meta_u64("api_calls.functions", enabled);
}

void setup_activity(void) {
  /* Thread ids the system's (gettid), in NVTX ranges and API calls alike,
   * so they match what other tools show for the same threads. */
  ok(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM),
     "cuptiSetThreadIdType(SYSTEM)");
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
  /* With a capture window they stay off until it opens (window.c). */
  for (size_t i = 0; i < RECORDED_KIND_COUNT; i++)
    if (!g.windowed || marker_kept(recorded_kinds[i].kind))
      switch_kind(i, 1);
  /* Device records are emitted at driver initialisation; EnableAndDump
   * also returns those of devices CUPTI already knows. */
  ok(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE),
     "cuptiActivityEnableAndDump(DEVICE)");
  enable_api_calls();
}
