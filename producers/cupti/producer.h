/*
 * mprof CUPTI producer — what the injection library's files share: the one
 * state of the producer in this process, its settings and the helpers every
 * part uses. Internal to producers/cupti (never installed as an API).
 *
 * injection.c  start-up: settings, the writer, META, subscribing; the
 *              two exported entry points
 * state.c      the state, warnings and errors, cost accounting, the clock
 * device.c     driver queries (dlsym) that describe each device
 * activity.c   activity buffers and the activity kinds recorded
 * pcsampling.c PC sampling per context: setup, drains, teardown
 * callbacks.c  CUPTI callbacks: contexts, modules, launches
 * drain.c      the drain thread: periodic PC drains, flushes, checkpoints
 * window.c     the capture window (capture.c) fed by callbacks and the
 *              drain thread; recording turned on and off
 * exit.c       fatal signals, fork, and the exit handler that finishes
 *              the trace
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_PRODUCER_H
#define MPROF_CUPTI_PRODUCER_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include "capture.h"
#include "config.h"
#include "translate.h"

/* Activity buffers: CUPTI suggests 1-10 MB; buffers are per thread by
 * default, so a modest size keeps many-threaded programs cheap. The
 * once-a-second flush gets a buffer back only when every record in it has
 * completed, so under a steady stream of launches a buffer is written when
 * full: 1 MiB fills several times a second where 4 MiB left a program
 * killed on the H200 without its last 1.7 s (docs/validation/H200.md). */
#define ACTIVITY_BUFFER_SIZE (1u << 20)
#define ACTIVITY_POOL_MAX 16
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
  int enabled;       /* between Enable and Disable (alternating runs) */
  size_t reason_count;
  uint32_t *reason_index;
  pc_buffer config; /* CUPTI's until Disable: pcsampling.c says who reads */
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

/* The signals after which the producer flushes before the program goes
 * (exit.c lists them). */
#define CAUGHT_SIGNAL_COUNT 5

typedef struct producer_state {
  atomic_int state;
  atomic_int exiting;
  atomic_int forked; /* this copy of the state is a forked child's */
  pid_t pid;
  int exit_status; /* what the program passed to exit(); -1 unknown */
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
  atomic_int thread_started; /* read by signal handlers */
  atomic_int thread_stop;
  atomic_int flush_request; /* 1 periodic-style flush, 2 forced */
  atomic_uint flush_done;   /* bumped after each requested flush */

  pthread_mutex_t context_lock;
  CUcontext contexts[MAX_CONTEXTS]; /* seen and not destroyed */
  int context_count;

  struct sigaction old_actions[CAUGHT_SIGNAL_COUNT];

  /* The capture window (window.c); windowed 0: the whole run, as always. */
  int windowed;
  pthread_mutex_t capture_lock; /* taken before pc_lock */
  mprof_cupti_capture capture;
  atomic_int window_on;      /* recording now */
  atomic_int window_settled; /* nothing can change it any more */
  /* MPROF_PM=alternate: the window's pieces take turns, PC sampling then
   * PM sampling, alternate_every pieces a turn (window.c). */
  int turn;                 /* capture_lock: 0 none yet, 1 PC, 2 PM */
  uint64_t alternate_every; /* pieces a turn */
  uint64_t turn_pieces[2];  /* pieces recorded in PC, PM turns */
  uint64_t switches, switch_ns, switch_max_ns; /* turn changes, their cost */
  uint64_t closes, close_ns; /* window closings, their wait (capture_lock) */
  /* A change the drain thread decided, applied at the next launch
   * (window_tick()); capture_lock. */
  mprof_cupti_capture_change window_pending;
  int window_pc_disable; /* MPROF_WINDOW_PC_DISABLE=1 */
  int window_api;        /* WINDOW_API_EARLY, or _KIND (MPROF_WINDOW_API) */
  int window_profiler_driver; /* MPROF_WINDOW_PROFILER=driver */
  int window_kinds_on;        /* capture_lock: the activity kinds are on */
  int window_pc_ready;        /* pc_lock: contexts set up now, not queued */
  struct {
    CUcontext ctx;
    uint32_t ordinal;
  } pc_waiting[MAX_CONTEXTS]; /* pc_lock */
  int pc_waiting_count;

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
} producer_state;

extern producer_state g;

/* ---- state.c ------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);
/* Only with MPROF_VERBOSE=1. */
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...);
const char *result_name(CUptiResult res);
/* Record "what: CUPTI_ERROR_X" once in META; returns 0 so callers can write
 * `if (!ok(cuptiX(...), "cuptiX")) ...`. */
int ok(CUptiResult res, const char *what);
void meta(const char *key, const char *value);
void meta_u64(const char *key, uint64_t value);
int running(void);

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

uint64_t cost_now(void);
void cost_add(cost_phase phase, uint64_t since, uint64_t bytes);
/* Where the time went, at exit with MPROF_VERBOSE=1. */
void cost_print(const mprof_cupti_translate_stats *stats);

uint64_t CUPTIAPI monotonic_raw_ns(void);
/* Pair the trace clock with wall-clock time so a viewer can print dates;
 * returns the trace-clock time it wrote. */
uint64_t write_anchor(const char *prefix);

/* ---- device.c ------------------------------------------------------------ */

void driver_load(void);
/* Describe device @p ordinal once, from the driver's attributes. */
void describe_device(uint32_t ordinal);

/* ---- activity.c ---------------------------------------------------------- */

/* The clock, the buffers and the activity kinds (off with a window). */
void setup_activity(void);
/* Turn the recorded kinds and API-call records on (when a capture window
 * first opens, before PC sampling is enabled: CUPTI refuses to enable a
 * kind after) or off (when the window is over); window.c. */
void activity_window(int on);
/* How a capture window gets its API-call records: the recorded functions
 * enabled at start-up, their records dropped outside the pieces and the
 * functions turned off when the window is over (the default), or
 * MPROF_WINDOW_API=kind, the whole RUNTIME and DRIVER kinds enabled when
 * it first opens, the functions that issue no GPU work dropped. On the
 * H100 per-function records enabled when a window opened never came, and
 * after a window of the kinds a launch-bound loop's steps took 38.8%
 * longer (medians of 3). */
enum { WINDOW_API_EARLY, WINDOW_API_KIND };
/* What a window's kinds delivered, kept and dropped, into META (exit). */
void activity_window_account(void);

/* ---- pcsampling.c -------------------------------------------------------- */

/* Who drains, which says whether the configured buffer (CUPTI's while
 * sampling runs) may be read: pcsampling.c, pc_drain_locked(). */
typedef enum pc_drain_kind {
  PC_PERIODIC,       /* the drain thread, or a callback no range ended in */
  PC_AFTER_RANGE_END /* the thread whose call just ended a range */
} pc_drain_kind;

/* With a capture window, a context's PC sampling is set up when the window
 * first opens (after the kernel kind is on): pc_setup() queues it until
 * pc_setup_waiting(). */
void pc_setup(CUcontext ctx, uint32_t ordinal);
void pc_setup_waiting(void);
void pc_teardown(CUcontext ctx);
void pc_drain_context(CUcontext ctx, pc_drain_kind kind);
/* Every sampled context, PC_PERIODIC (the drain thread). */
void drain_all_pc(void);
/* Final drain and Disable of every sampled context (exit). */
void pc_finish_all(void);
/* A capture window opened or closed: cuptiPCSamplingStart or Stop (and a
 * drain) on every sampled context. */
void pc_window(int on);
/* MPROF_PM=alternate: PC sampling of every context Enabled (configured,
 * stopped) or drained and Disabled, so that PM sampling may take the GPU. */
void pc_phase(int on);

/* ---- callbacks.c --------------------------------------------------------- */

void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                          CUpti_CallbackId cbid, const void *cbdata);
void setup_callbacks(void);
/* Wait for the work of every context seen alive (each made current in
 * turn); how many synchronized, 0 without the driver's entry points. */
int contexts_synchronize(void);
/* The driver API calls that launch kernels (serialized PC sampling and the
 * capture window listen to them). */
extern const CUpti_CallbackId launch_cbids[];
extern const size_t launch_cbid_count;

/* ---- window.c ------------------------------------------------------------ */

/* Read the window from the settings (before setup_activity()); 0 when the
 * whole run is recorded. */
int window_setup(void);
/* The capture started: a window of the run itself may open now. */
void window_begin(void);
/* The NVTX, cudaProfilerStart/Stop and launch callbacks it asked for. */
void window_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const void *cbdata);
/* Time and the file's size, from the drain thread. */
void window_tick(void);
/* The program ends: the window's last record. */
void window_exit(void);
/* Whether a kernel that started at @p start ran inside a piece of the
 * window (any lock may be held; takes only its own). */
int window_keeps(uint64_t start);
/* MPROF_PM=alternate needs a window and continuous PC sampling: without
 * them it warns and records PC sampling only (after window_setup()). */
void alternate_setup(void);

/* ---- drain.c ------------------------------------------------------------- */

void start_drain_thread(void);
void stop_drain_thread(void);
void wake_drain_thread(void);

/* ---- exit.c -------------------------------------------------------------- */

void manifest_event(const char *word, long value);
void install_signal_handlers(void);
void after_fork_in_child(void);
void at_exit(void);
/* at_exit() with the status the program exits with (on_exit()). */
void at_exit_status(int status, void *unused);

#endif
