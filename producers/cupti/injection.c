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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mprof/error.h"
#include "mprof/version.h"
#include "mprof/writer.h"
#include "pmsampling.h"
#include "process.h"
#include "producer.h"

#define EXPORT __attribute__((visibility("default")))

/* cupti.h (13.0) does not declare it, but libcupti.so.13 exports it. */
extern CUptiResult CUPTIAPI cuptiNvtxInitialize2(void *get_export_table);

EXPORT int InitializeInjection(void);
EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
/* ---- start-up ----------------------------------------------------------- */

static const char *real_getenv(void *userdata, const char *name) {
  (void)userdata;
  return getenv(name);
}

/* The command line, arguments joined by spaces, into @p buffer ("" when
 * unreadable); META cmdline when read. */
static void write_cmdline(char *buffer, size_t size) {
  buffer[0] = '\0';
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return;
  size_t n = fread(buffer, 1, size - 1, f);
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
  char cmdline[8192];
  write_cmdline(cmdline, sizeof cmdline);
  /* The same facts as the trace's PROCESSES record (the META above stays
   * for readers older than it). */
  mprof_process_record process;
  mprof_cupti_process_identity(&process, real_getenv, NULL, (long)g.pid,
                               (long)getppid());
  mprof_cupti_translate_process(g.tr, &process, host, cmdline);
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
/* Start once, from whichever comes first: the driver's cuInit
 * (CUDA_INJECTION64_PATH) or the program's first NVTX call
 * (NVTX_INJECTION64_PATH), so that ranges opened before the first CUDA call
 * are recorded too. CUPTI may be set up before CUDA is initialised. */
static int start(const char *by) {
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
  int pm_took_pc = g.cfg.pm_enabled && !g.cfg.pm_alternate &&
                   g.cfg.pc_mode != MPROF_CUPTI_PC_OFF;
  if (pm_took_pc)
    g.cfg.pc_mode = MPROF_CUPTI_PC_OFF;
  for (unsigned i = 0; i < g.cfg.problem_count; i++)
    warn("%s", g.cfg.problems[i]);

  mprof_writer *w = NULL;
  int renamed = 0;
  if (mprof_cupti_open_output(&w, g.cfg.output, sizeof g.cfg.output,
                              (long)g.pid, g.cfg.output_has_pid, g.cfg.manifest,
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
  meta("capture.started_by", by);
  /* Before the activity kinds: with a window they start off. */
  window_setup();
  alternate_setup();
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
     * even a disabled run explains itself in META. on_exit() also hands over
     * the status the program exits with. */
#ifdef __GLIBC__
  on_exit(at_exit_status, NULL);
#else
  atexit(at_exit);
#endif
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

  if (!subscribe()) {
    atomic_store(&g.state, STATE_DISABLED);
    return 1;
  }
  setup_activity();
  setup_callbacks();
  mprof_cupti_translate_process_start(g.tr, write_anchor("clock.anchor"));
  atomic_store(&g.state, STATE_RUNNING);
  window_begin();
  start_drain_thread();
  cost_add(COST_STARTUP, started, 0);
  note("recording to %s (PC sampling %s, period 2^%u)", g.cfg.output,
       g.pc_allowed ? mprof_cupti_pc_mode_name(g.cfg.pc_mode) : "off",
       g.cfg.pc_period);
  return 1;
}

int InitializeInjection(void) { return start("cuInit"); }

/* NVTX_INJECTION64_PATH points here too: start recording (MARKER enabled)
 * and hand NVTX to CUPTI so ranges arrive as CUPTI_ACTIVITY_KIND_MARKER
 * records, before the range that loaded us is pushed. NVTX wants 1 for
 * success. */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) {
  start("nvtx");
  void *table = NULL;
  memcpy(&table, &get_export_table, sizeof table);
  return cuptiNvtxInitialize2(table) == CUPTI_SUCCESS ? 1 : 0;
}
