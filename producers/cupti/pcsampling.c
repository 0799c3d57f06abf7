/*
 * mprof CUPTI producer — continuous or serialized PC sampling, one sampled
 * context per device: setup, drains in the order that loses nothing, and
 * teardown.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "producer.h"

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

/* Forget what the configured buffer held, once it has been read: CUPTI
 * writes a range's records and counters there, and a Disable that flushes
 * nothing must not find the last range's counters again. */
static void pc_config_clear(pc_context *c) {
  CUpti_PCSamplingData *config = &c->config.data;
  config->totalNumPcs = 0;
  config->totalSamples = 0;
  config->droppedSamples = 0;
  config->nonUsrKernelsTotalSamples = 0;
  config->hardwareBufferFull = 0;
}

/* cuptiPCSamplingGetData until CUPTI has nothing decoded left (and, after
 * a range end, nothing parked in the configured buffer). pc_lock held. */
static void pc_get_data_locked(pc_context *c, int after_range_end) {
  if (c->hardware_full)
    return; /* GetData fails for good after an overflow */
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
    if (d->remainingNumPcs == 0 &&
        (!after_range_end || c->config.data.totalNumPcs == 0))
      return;
    /* CUPTI said more is pending but hands out nothing: do not spin. */
    if (d->totalNumPcs == 0 && ++idle_calls >= 3)
      return;
  }
}

/* Hand what CUPTI holds for @p c to the translator. pc_lock held.
 *
 * The configured buffer belongs to CUPTI while sampling runs: CUPTI parks a
 * range's records there when the range ends, on the thread whose call
 * ended it (a module load after an unload; a kernel's end in serialized
 * mode), outside pc_lock, and Disable flushes into it. So only
 * PC_AFTER_RANGE_END, passed by the callback that follows a range end on
 * that same thread (as NVIDIA's pc_sampling_continuous sample reads it) and
 * by the last drain before Disable, looks at it: GetData until it is empty,
 * then anything still parked is read directly. The drain thread passes
 * PC_PERIODIC and never touches it: a range end on a program's thread may
 * be writing it at that moment. */
static void pc_drain_locked(pc_context *c, pc_drain_kind kind) {
  if (!c->enabled)
    return;
  int after_range_end = kind == PC_AFTER_RANGE_END;
  pc_get_data_locked(c, after_range_end);
  if (!after_range_end)
    return;
  /* NVIDIA's sample expects GetData to empty the configured buffer after a
   * range end. Should a CUPTI leave records there anyway, read them before
   * the next range end overwrites them. */
  CUpti_PCSamplingData *config = &c->config.data;
  if (config->totalNumPcs > 0) {
    pc_translate(c, config);
    g.config_direct_reads++;
  }
  pc_config_clear(c);
}

/* The drain order GPU.md found to lose nothing: GetData until empty, then
 * Disable, then read what Disable flushed into the configured buffer (from
 * then on ours: Disable has joined CUPTI's threads). Runs when the context
 * is destroyed or the program exits, when no range of the program's is
 * left to end, so it may look at the configured buffer before Disable. */
static CUptiResult pc_enable(CUcontext ctx) {
  CUpti_PCSamplingEnableParams enable;
  memset(&enable, 0, sizeof enable);
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = ctx;
  return cuptiPCSamplingEnable(&enable);
}

static int pc_disable(CUcontext ctx) {
  CUpti_PCSamplingDisableParams disable;
  memset(&disable, 0, sizeof disable);
  disable.size = CUpti_PCSamplingDisableParamsSize;
  disable.ctx = ctx;
  return ok(cuptiPCSamplingDisable(&disable), "cuptiPCSamplingDisable");
}

static void pc_finish_locked(pc_context *c) {
  if (!c->enabled)
    return;
  pc_drain_locked(c, PC_AFTER_RANGE_END);
  c->enabled = 0;
  if (pc_disable(c->ctx))
    pc_translate(c, &c->config.data);
}

static pc_context *pc_find_locked(CUcontext ctx) {
  for (pc_context *c = g.pcs; c; c = c->next)
    if (c->ctx == ctx)
      return c;
  return NULL;
}

void pc_drain_context(CUcontext ctx, pc_drain_kind kind) {
  uint64_t started = cost_now();
  pthread_mutex_lock(&g.pc_lock);
  pc_context *c = pc_find_locked(ctx);
  if (c)
    pc_drain_locked(c, kind);
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
  CUpti_PCSamplingConfigurationInfo info[9];
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
  /* A capture window samples only between cuptiPCSamplingStart and Stop
   * (pc_window()): mandatory too, or sampling would run outside it. */
  size_t mandatory = 4;
  if (g.windowed) {
    info[8].attributeType =
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[8].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  }
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
  params.numAttributes = g.windowed ? 9 : 8;
  params.pPCSamplingConfigurationInfo = info;
  CUptiResult res = cuptiPCSamplingSetConfigurationAttribute(&params);
  if (res == CUPTI_SUCCESS)
    return 1;
  for (size_t i = 0; i < params.numAttributes; i++) {
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
  if (g.windowed) {
    info[mandatory] = info[8];
    mandatory++;
  }
  params.numAttributes = mandatory;
  for (size_t i = 0; i < mandatory; i++)
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

/* One process at a time PC-samples a GPU: when two processes sample one
 * device (two ranks on one GPU), CUPTI fails the second one's reads and its
 * kernel records were lost with them on the H200. The claim is a POSIX lock
 * on a file named after the GPU's UUID; such locks go with the process (not
 * inherited by fork, released at exit or kill). Returns 1 when this process
 * may sample @p ordinal; 0 with @p holder set to the pid holding it. */
static int pc_claim_device(uint32_t ordinal, long *holder) {
  *holder = 0;
  const char *off = getenv("MPROF_PC_CLAIM");
  if (off && strcmp(off, "0") == 0)
    return 1;
  CUdevice dev = 0;
  CUuuid uuid;
  if (!g.cu.device_get || !g.cu.uuid ||
      g.cu.device_get(&dev, (int)ordinal) != CUDA_SUCCESS ||
      g.cu.uuid(&uuid, dev) != CUDA_SUCCESS)
    return 1; /* no identity to claim by: sample, as before */
  const char *dir = getenv("TMPDIR");
  char path[512];
  int n =
      snprintf(path, sizeof path, "%s/mprof-pc-", dir && *dir ? dir : "/tmp");
  for (size_t i = 0; i < sizeof uuid.bytes && n > 0 && n < (int)sizeof path - 3;
       i++)
    n += snprintf(path + n, sizeof path - (size_t)n, "%02x",
                  (unsigned char)uuid.bytes[i]);
  if (n <= 0 || n >= (int)sizeof path - 6)
    return 1;
  strcat(path, ".lock");
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return 1; /* e.g. another user's file: cannot coordinate, sample */
  struct flock lock;
  memset(&lock, 0, sizeof lock);
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLK, &lock) == 0)
    return 1; /* held until this process ends; fd stays open for that */
  if (errno == EACCES || errno == EAGAIN) {
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK)
      *holder = (long)lock.l_pid;
    close(fd);
    return 0;
  }
  close(fd);
  return 1;
}

/* Start or stop sampling @p c (start/stop control, capture windows).
 * After Stop this thread ended the range: what CUPTI parked is read now.
 * pc_lock held. */
static void pc_start_stop_locked(pc_context *c, int on) {
  if (!c->enabled)
    return;
  if (on) {
    CUpti_PCSamplingStartParams start;
    memset(&start, 0, sizeof start);
    start.size = CUpti_PCSamplingStartParamsSize;
    start.ctx = c->ctx;
    ok(cuptiPCSamplingStart(&start), "cuptiPCSamplingStart");
    return;
  }
  CUpti_PCSamplingStopParams stop;
  memset(&stop, 0, sizeof stop);
  stop.size = CUpti_PCSamplingStopParamsSize;
  stop.ctx = c->ctx;
  if (ok(cuptiPCSamplingStop(&stop), "cuptiPCSamplingStop"))
    pc_drain_locked(c, PC_AFTER_RANGE_END);
}

void pc_window(int on) {
  uint64_t started = cost_now();
  pthread_mutex_lock(&g.pc_lock);
  for (pc_context *c = g.pcs; c; c = c->next)
    pc_start_stop_locked(c, on);
  pthread_mutex_unlock(&g.pc_lock);
  cost_add(COST_DRAIN_APP, started, 0);
}

void pc_phase(int on) {
  uint64_t started = cost_now();
  pthread_mutex_lock(&g.pc_lock);
  for (pc_context *c = g.pcs; c; c = c->next) {
    if (!on) {
      pc_finish_locked(c);
      continue;
    }
    if (c->enabled || c->hardware_full)
      continue;
    /* The stall reasons and buffers of the first Enable stay valid. */
    if (!ok(pc_enable(c->ctx), "cuptiPCSamplingEnable"))
      continue;
    if (!pc_configure(c)) {
      pc_disable(c->ctx);
      continue;
    }
    c->enabled = 1;
  }
  pthread_mutex_unlock(&g.pc_lock);
  cost_add(COST_DRAIN_APP, started, 0);
}

void pc_setup_waiting(void) {
  pthread_mutex_lock(&g.pc_lock);
  g.window_pc_ready = 1;
  int count = g.pc_waiting_count;
  CUcontext ctx[MAX_CONTEXTS];
  uint32_t ordinal[MAX_CONTEXTS];
  for (int i = 0; i < count; i++) {
    ctx[i] = g.pc_waiting[i].ctx;
    ordinal[i] = g.pc_waiting[i].ordinal;
  }
  g.pc_waiting_count = 0;
  pthread_mutex_unlock(&g.pc_lock);
  for (int i = 0; i < count; i++)
    pc_setup(ctx[i], ordinal[i]);
}

void pc_setup(CUcontext ctx, uint32_t ordinal) {
  pthread_mutex_lock(&g.pc_lock);
  if (!g.pc_allowed)
    goto out;
  if (g.windowed && !g.window_pc_ready) {
    if (g.pc_waiting_count < MAX_CONTEXTS) {
      g.pc_waiting[g.pc_waiting_count].ctx = ctx;
      g.pc_waiting[g.pc_waiting_count].ordinal = ordinal;
      g.pc_waiting_count++;
    }
    goto out;
  }
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
  long holder = 0;
  if (!pc_claim_device(ordinal, &holder)) {
    note("device %u is PC-sampled by process %ld; this process records its "
         "timeline only",
         ordinal, holder);
    char text[128];
    snprintf(text, sizeof text,
             "device %u was PC-sampled by process %ld; not sampled here",
             ordinal, holder);
    meta("pc.note", text);
    mprof_cupti_translate_pc_error(g.tr, ordinal, "sampled_by_another_process");
    goto out;
  }
  pc_context *c = (pc_context *)calloc(1, sizeof *c);
  if (!c)
    goto out;
  c->ctx = ctx;
  c->ordinal = ordinal;

  CUptiResult res = pc_enable(ctx);
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
    pc_disable(ctx);
    mprof_cupti_translate_pc_error(g.tr, ordinal, "setup_failed");
    pc_context_free(c);
    goto out;
  }
  pc_report_configuration(c);
  c->enabled = 1;
  c->next = g.pcs;
  g.pcs = c;
  /* An alternating run in a PM turn: PC sampling waits for its turn. */
  if (g.cfg.pm_alternate && g.turn == 2)
    pc_finish_locked(c);
  /* A context created inside an open window samples from now on. */
  if (g.windowed && atomic_load(&g.window_on))
    pc_start_stop_locked(c, 1);
out:
  pthread_mutex_unlock(&g.pc_lock);
}

void pc_teardown(CUcontext ctx) {
  pthread_mutex_lock(&g.pc_lock);
  for (int i = 0; i < g.pc_waiting_count; i++)
    if (g.pc_waiting[i].ctx == ctx)
      g.pc_waiting[i--] = g.pc_waiting[--g.pc_waiting_count];
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

void drain_all_pc(void) {
  pthread_mutex_lock(&g.pc_lock);
  for (pc_context *c = g.pcs; c; c = c->next)
    pc_drain_locked(c, PC_PERIODIC);
  pthread_mutex_unlock(&g.pc_lock);
}

void pc_finish_all(void) {
  pthread_mutex_lock(&g.pc_lock);
  while (g.pcs) {
    pc_context *c = g.pcs;
    pc_finish_locked(c);
    g.pcs = c->next;
    pc_context_free(c);
  }
  pthread_mutex_unlock(&g.pc_lock);
}
