/*
 * mprof CUPTI producer — the capture window in the process: the state
 * machine of capture.c fed by CUPTI callbacks (NVTX ranges,
 * cudaProfilerStart/Stop, launches) and by the drain thread (time, the
 * file's size), and what turning recording on and off does.
 *
 * Outside the window the activity kinds and API-call records are off and
 * PC sampling is stopped (configured with start/stop control, so it never
 * samples there); module loads are still captured, so kernels loaded
 * before the window keep their code. The program pays for the callbacks
 * the window needs (NVTX ranges for nvtx:, two functions for
 * cudaProfilerApi, launches for --kernel-skip/--kernel-count); once the
 * window cannot open again they are dropped too.
 *
 * Locks: capture_lock serialises the state machine and the switching it
 * asks for; it is taken before pc_lock (pc_window()) and the translator's.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <generated_nvtx_meta.h>

#include "pmsampling.h"
#include "producer.h"

/* NVTX domains by handle, for `nvtx:NAME@DOMAIN`. */
#define MAX_DOMAINS 64
static struct {
  const void *handle;
  char name[128];
} domains[MAX_DOMAINS];
static size_t domain_count;

static const CUpti_CallbackId profiler_runtime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000};
static const CUpti_CallbackId profiler_driver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
    CUPTI_DRIVER_TRACE_CBID_cuProfilerStop};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int is_launch(CUpti_CallbackId cbid) {
  for (size_t i = 0; i < launch_cbid_count; i++)
    if (launch_cbids[i] == cbid)
      return 1;
  return 0;
}

/* Subscribe to (@p on) or drop the callbacks the window listens to. */
static void window_callbacks(int on) {
  mprof_capture_trigger trigger = g.capture.s.trigger;
  if (trigger == MPROF_CAPTURE_NVTX)
    ok(cuptiEnableDomain((uint32_t)on, g.subscriber, CUPTI_CB_DOMAIN_NVTX),
       "cuptiEnableDomain(NVTX)");
  if (trigger == MPROF_CAPTURE_PROFILER_API) {
    /* MPROF_WINDOW_PROFILER=driver: the driver's cuProfilerStart/Stop
     * alone, which cudaProfilerStart/Stop call (window_setup()). */
    for (size_t i = 0; !g.window_profiler_driver && i < COUNT(profiler_runtime);
         i++)
      ok(cuptiEnableCallback((uint32_t)on, g.subscriber,
                             CUPTI_CB_DOMAIN_RUNTIME_API, profiler_runtime[i]),
         "cuptiEnableCallback(cudaProfilerStart/Stop)");
    for (size_t i = 0; i < COUNT(profiler_driver); i++)
      ok(cuptiEnableCallback((uint32_t)on, g.subscriber,
                             CUPTI_CB_DOMAIN_DRIVER_API, profiler_driver[i]),
         "cuptiEnableCallback(cuProfilerStart/Stop)");
  }
  /* Serialized PC sampling keeps its own launch callbacks. A window the
   * drain thread opens or closes (--delay, --duration, --max-size) is
   * switched at the next launch when PC sampling is on (window_tick()). */
  int launches =
      trigger == MPROF_CAPTURE_KERNELS ||
      (g.pc_allowed && (trigger == MPROF_CAPTURE_WHOLE ||
                        g.capture.s.duration_ns || g.capture.s.max_bytes));
  if (launches &&
      (on || g.cfg.pc_mode != MPROF_CUPTI_PC_SERIALIZED || !g.pc_allowed))
    for (size_t i = 0; i < launch_cbid_count; i++)
      ok(cuptiEnableCallback((uint32_t)on, g.subscriber,
                             CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]),
         "cuptiEnableCallback(launch)");
}

/* What an alternating run says of its turns, in META (last one wins). */
static void alternate_account_locked(void) {
  meta_u64("alternate.pc_pieces", g.turn_pieces[0]);
  meta_u64("alternate.pm_pieces", g.turn_pieces[1]);
  meta_u64("alternate.switches", g.switches);
  meta_u64("alternate.switch_us", g.switch_ns / 1000);
  meta_u64("alternate.switch_max_us", g.switch_max_ns / 1000);
}

/* An alternating run: the piece opening now is in PC sampling's turn or
 * PM sampling's; change turns when it is the other's. The two never run
 * together (CUPTI fails both, docs/validation/): the one ending is
 * Disabled before the other is Enabled. capture_lock held. */
static void alternate_turn_locked(void) {
  uint64_t piece = g.capture.pieces ? g.capture.pieces - 1 : 0;
  int turn = (piece / g.alternate_every) % 2 ? 2 : 1;
  g.turn_pieces[turn - 1]++;
  if (turn == g.turn)
    return;
  uint64_t started = monotonic_raw_ns();
  if (turn == 2) {
    pc_phase(0);
    mprof_cupti_pm_phase(1);
  } else {
    mprof_cupti_pm_phase(0);
    pc_phase(1);
  }
  uint64_t took = monotonic_raw_ns() - started;
  if (g.turn) {
    g.switches++;
    g.switch_ns += took;
    if (took > g.switch_max_ns)
      g.switch_max_ns = took;
  }
  g.turn = turn;
  note("alternating: piece %llu is %s sampling's turn (switch %.1f ms)",
       (unsigned long long)g.capture.pieces, turn == 1 ? "PC" : "PM",
       (double)took / 1e6);
  alternate_account_locked();
}

void alternate_setup(void) {
  if (!g.cfg.pm_alternate)
    return;
  const char *why = NULL;
  if (!g.windowed)
    why = "needs a capture window (--capture-range) whose repeats take "
          "turns";
  else if (g.cfg.pc_mode != MPROF_CUPTI_PC_CONTINUOUS)
    why = "needs continuous PC sampling (--pc-mode continuous)";
  if (why) {
    char message[256];
    snprintf(message, sizeof message,
             "MPROF_PM=alternate %s; recording without PM sampling", why);
    warn("%s", message);
    mprof_cupti_translate_error(g.tr, message);
    g.cfg.pm_alternate = 0;
    g.cfg.pm_enabled = 0;
    return;
  }
  uint64_t every = g.cfg.alternate_every;
  if (!every)
    every = g.capture.s.range_count ? (g.capture.s.range_count + 1) / 2
                                    : MPROF_CUPTI_DEFAULT_ALTERNATE_EVERY;
  g.alternate_every = every;
  meta_u64("alternate.every", every);
}

/* The window closes: wait for the GPU work launched in it, then have CUPTI
 * hand over its records, before the activity kinds go off. Turning them
 * off while a step's kernels were still queued (a training loop does not
 * synchronize at every step) lost every record of the window on the H100:
 * CUPTI drops what it has not delivered of a disabled kind. The program
 * waits here once per recorded range. capture_lock held. */
static void window_finish_work(void) {
  uint64_t started = monotonic_raw_ns();
  contexts_synchronize();
  ok(cuptiActivityFlushAll(0), "cuptiActivityFlushAll(window)");
  g.close_ns += monotonic_raw_ns() - started;
  g.closes++;
}

/* The pieces recorded so far, [on, off] on the trace clock (off UINT64_MAX
 * while open): kernels the kind delivers between pieces are not kept. A
 * piece closes after its work finished (window_finish_work()), so a
 * kernel launched in it started in it. */
static pthread_mutex_t pieces_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t (*pieces)[2];
static size_t piece_count, piece_capacity;
/* The piece open now: since when, on which thread (capture_lock). */
static uint64_t piece_on_ns;
static uint32_t piece_thread;

static void piece_mark(int on, uint64_t now) {
  pthread_mutex_lock(&pieces_lock);
  if (on) {
    if (piece_count == piece_capacity) {
      size_t grown = piece_capacity ? 2 * piece_capacity : 64;
      uint64_t(*more)[2] = realloc(pieces, grown * sizeof *pieces);
      if (more) {
        pieces = more;
        piece_capacity = grown;
      }
    }
    if (piece_count < piece_capacity) {
      pieces[piece_count][0] = now;
      pieces[piece_count][1] = UINT64_MAX;
      piece_count++;
    }
  } else if (piece_count && pieces[piece_count - 1][1] == UINT64_MAX) {
    pieces[piece_count - 1][1] = now;
  }
  pthread_mutex_unlock(&pieces_lock);
}

int window_keeps(uint64_t start) {
  int keep = 0;
  pthread_mutex_lock(&pieces_lock);
  /* The last piece that opened at or before @p start. */
  size_t lo = 0, hi = piece_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pieces[mid][0] <= start)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && start <= pieces[lo - 1][1])
    keep = 1;
  pthread_mutex_unlock(&pieces_lock);
  return keep;
}

/* Do what the state machine asked; capture_lock held. */
static void apply_locked(mprof_cupti_capture_change change) {
  if (change == MPROF_CUPTI_CAPTURE_ON) {
    piece_on_ns = monotonic_raw_ns();
    piece_thread = (uint32_t)syscall(SYS_gettid);
    piece_mark(1, piece_on_ns);
    /* The activity kinds first, then PC sampling (activity_window()). */
    if (!g.window_kinds_on) {
      activity_window(1);
      g.window_kinds_on = 1;
      if (g.pc_allowed)
        pc_setup_waiting();
    }
    if (g.cfg.pm_alternate)
      alternate_turn_locked();
    else if (g.window_pc_disable && g.pc_allowed)
      pc_phase(1);
    pc_window(1);
    atomic_store(&g.window_on, 1);
    note("capture window open (piece %llu)",
         (unsigned long long)g.capture.pieces);
  } else if (change == MPROF_CUPTI_CAPTURE_OFF) {
    window_finish_work();
    uint64_t off = monotonic_raw_ns();
    piece_mark(0, off);
    mprof_cupti_translate_window_piece(g.tr, piece_on_ns, off, g.capture.pieces,
                                       piece_thread);
    pc_window(0);
    if (g.window_pc_disable && g.pc_allowed && !g.cfg.pm_alternate)
      pc_phase(0);
    atomic_store(&g.window_on, 0);
    note("capture window closed");
  }
  if (change != MPROF_CUPTI_CAPTURE_SAME || g.capture.done) {
    mprof_capture_record rec;
    mprof_cupti_capture_record(&g.capture, &rec);
    mprof_cupti_translate_capture(g.tr, &rec, g.capture.s.spec);
  }
  if (g.capture.done && !atomic_exchange(&g.window_settled, 1)) {
    window_callbacks(0);
    /* Nothing is PC-sampled any more: Disable, not only Stop (an enabled
     * context costs the program at every launch), then the kernel kind
     * goes off. */
    if (g.pc_allowed)
      pc_phase(0);
    /* Nothing is recorded any more: PM sampling's turn ends. */
    if (g.cfg.pm_alternate)
      mprof_cupti_pm_phase(0);
    if (g.window_kinds_on) {
      activity_window(0);
      g.window_kinds_on = 0;
    }
    if (g.capture.end == MPROF_CAPTURE_END_MAX_SIZE)
      warn("the trace reached --max-size (%llu bytes): recording stopped; "
           "the program runs on unrecorded",
           (unsigned long long)g.capture.s.max_bytes);
  }
}

int window_setup(void) {
  mprof_cupti_capture_settings s;
  memset(&s, 0, sizeof s);
  char why[256] = "";
  if (mprof_cupti_capture_parse_range(&s, g.cfg.capture_range, why,
                                      sizeof why) != 0) {
    char message[512];
    snprintf(message, sizeof message,
             "MPROF_CAPTURE_RANGE: '%.200s' %s; no range opens the window",
             g.cfg.capture_range, why);
    warn("%s", message);
    mprof_cupti_translate_error(g.tr, message);
    memset(&s, 0, sizeof s);
  }
  s.range_skip = g.cfg.range_skip;
  s.range_count = g.cfg.range_count;
  s.kernel_skip = g.cfg.kernel_skip;
  s.kernel_count = g.cfg.kernel_count;
  s.delay_ns = g.cfg.delay_ns;
  s.duration_ns = g.cfg.duration_ns;
  s.max_bytes = g.cfg.max_bytes;
  if (!mprof_cupti_capture_wanted(&s))
    return 0;
  if (mprof_cupti_capture_init(&g.capture, &s, g.cfg.kernel_regex, why,
                               sizeof why) != 0) {
    warn("%s; recording the whole run", why);
    mprof_cupti_translate_error(g.tr, why);
    return 0;
  }
  g.windowed = 1;
  meta("capture.window", "on");
  /* MPROF_WINDOW_PC_DISABLE=1 (producers/cupti/README.md): PC sampling
   * Enabled when a piece opens and Disabled when it closes, instead of
   * started and stopped. */
  const char *pc_disable = getenv("MPROF_WINDOW_PC_DISABLE");
  g.window_pc_disable = pc_disable && strcmp(pc_disable, "1") == 0;
  if (g.window_pc_disable)
    meta("capture.window_pc", "enable_disable");
  /* MPROF_WINDOW_API=kind (producers/cupti/README.md): the API-call
   * records of the whole kinds from the window's first opening instead of
   * the recorded functions' from the start. */
  const char *api = getenv("MPROF_WINDOW_API");
  g.window_api =
      api && strcmp(api, "kind") == 0 ? WINDOW_API_KIND : WINDOW_API_EARLY;
  if (g.window_api == WINDOW_API_KIND)
    meta("capture.window_api", api);
  /* MPROF_WINDOW_PROFILER=driver (an experiment setting): the driver's
   * profiler callbacks alone (producers/cupti/README.md). */
  const char *profiler = getenv("MPROF_WINDOW_PROFILER");
  g.window_profiler_driver = profiler && strcmp(profiler, "driver") == 0;
  return 1;
}

void window_begin(void) {
  if (!g.windowed)
    return;
  pthread_mutex_lock(&g.capture_lock);
  window_callbacks(1);
  apply_locked(mprof_cupti_capture_begin(&g.capture, monotonic_raw_ns()));
  /* Written now, so that even a window that never opens is in the trace. */
  mprof_capture_record rec;
  mprof_cupti_capture_record(&g.capture, &rec);
  mprof_cupti_translate_capture(g.tr, &rec, g.capture.s.spec);
  pthread_mutex_unlock(&g.capture_lock);
}

static const char *domain_name_locked(const void *handle) {
  if (!handle)
    return NULL;
  for (size_t i = 0; i < domain_count; i++)
    if (domains[i].handle == handle)
      return domains[i].name;
  return "(unnamed domain)";
}

static const char *attrib_message(const nvtxEventAttributes_t *a) {
  return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii
                                                        : NULL;
}

/* Pushes and pops nest per thread and domain. */
static uint64_t stack_key(const void *domain) {
  static __thread uint64_t tid; /* one system call per thread */
  if (!tid)
    tid = (uint64_t)syscall(SYS_gettid);
  return tid ^ ((uint64_t)(uintptr_t)domain * 0x9e3779b97f4a7c15ull);
}

static mprof_cupti_capture_change
on_nvtx_locked(CUpti_CallbackId cbid, const CUpti_NvtxData *d, uint64_t now) {
  mprof_cupti_capture *c = &g.capture;
  const void *params = d->functionParams;
  switch (cbid) {
  case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
    const nvtxDomainCreateA_params *p =
        (const nvtxDomainCreateA_params *)params;
    const nvtxDomainHandle_t *handle =
        (const nvtxDomainHandle_t *)d->functionReturnValue;
    if (p && p->name && handle && domain_count < MAX_DOMAINS) {
      domains[domain_count].handle = *handle;
      snprintf(domains[domain_count].name, sizeof domains[0].name, "%s",
               p->name);
      domain_count++;
    }
    return MPROF_CUPTI_CAPTURE_SAME;
  }
  case CUPTI_CBID_NVTX_nvtxRangePushA: {
    const nvtxRangePushA_params *p = (const nvtxRangePushA_params *)params;
    return mprof_cupti_capture_push(c, stack_key(NULL), p ? p->message : NULL,
                                    NULL, now);
  }
  case CUPTI_CBID_NVTX_nvtxRangePushEx: {
    const nvtxRangePushEx_params *p = (const nvtxRangePushEx_params *)params;
    return mprof_cupti_capture_push(c, stack_key(NULL),
                                    p ? attrib_message(p->eventAttrib) : NULL,
                                    NULL, now);
  }
  case CUPTI_CBID_NVTX_nvtxRangePushW:
    return mprof_cupti_capture_push(c, stack_key(NULL), NULL, NULL, now);
  case CUPTI_CBID_NVTX_nvtxRangePop:
    return mprof_cupti_capture_pop(c, stack_key(NULL), now);
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
    const nvtxDomainRangePushEx_params *p =
        (const nvtxDomainRangePushEx_params *)params;
    if (!p)
      return MPROF_CUPTI_CAPTURE_SAME;
    return mprof_cupti_capture_push(c, stack_key(p->domain),
                                    attrib_message(p->core.eventAttrib),
                                    domain_name_locked(p->domain), now);
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
    const nvtxDomainRangePop_params *p =
        (const nvtxDomainRangePop_params *)params;
    return mprof_cupti_capture_pop(c, stack_key(p ? p->domain : NULL), now);
  }
  case CUPTI_CBID_NVTX_nvtxRangeStartA:
  case CUPTI_CBID_NVTX_nvtxRangeStartEx:
  case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
    const nvtxRangeId_t *id = (const nvtxRangeId_t *)d->functionReturnValue;
    const char *name = NULL, *domain = NULL;
    if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA && params)
      name = ((const nvtxRangeStartA_params *)params)->message;
    else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx && params)
      name = attrib_message(
          ((const nvtxRangeStartEx_params *)params)->eventAttrib);
    else if (params) {
      const nvtxDomainRangeStartEx_params *p =
          (const nvtxDomainRangeStartEx_params *)params;
      name = attrib_message(p->core.eventAttrib);
      domain = domain_name_locked(p->domain);
    }
    if (!id)
      return MPROF_CUPTI_CAPTURE_SAME;
    return mprof_cupti_capture_start_range(c, *id, name, domain, now);
  }
  case CUPTI_CBID_NVTX_nvtxRangeEnd: {
    const nvtxRangeEnd_params *p = (const nvtxRangeEnd_params *)params;
    return p ? mprof_cupti_capture_end_range(c, p->id, now)
             : MPROF_CUPTI_CAPTURE_SAME;
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
    const nvtxDomainRangeEnd_params *p =
        (const nvtxDomainRangeEnd_params *)params;
    return p ? mprof_cupti_capture_end_range(c, p->core.id, now)
             : MPROF_CUPTI_CAPTURE_SAME;
  }
  default: return MPROF_CUPTI_CAPTURE_SAME;
  }
}

void window_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const void *cbdata) {
  if (!g.windowed || atomic_load(&g.window_settled))
    return;
  uint64_t now = monotonic_raw_ns();
  pthread_mutex_lock(&g.capture_lock);
  /* What the drain thread decided, done on the program's thread. */
  if (g.window_pending) {
    mprof_cupti_capture_change pending = g.window_pending;
    g.window_pending = MPROF_CUPTI_CAPTURE_SAME;
    apply_locked(pending);
  }
  mprof_cupti_capture_change change = MPROF_CUPTI_CAPTURE_SAME;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    change = on_nvtx_locked(cbid, (const CUpti_NvtxData *)cbdata, now);
  } else {
    /* Before the call: a launch, or work after cudaProfilerStart, lands
     * inside the window it opens. */
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)cbdata;
    int enter = cd->callbackSite == CUPTI_API_ENTER;
    int start = (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                 cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
                (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                 cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    int stop = (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
               (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    if (enter && start)
      change = mprof_cupti_capture_profiler_start(&g.capture, now);
    else if (enter && stop)
      change = mprof_cupti_capture_profiler_stop(&g.capture, now);
    else if (enter && domain == CUPTI_CB_DOMAIN_DRIVER_API && is_launch(cbid))
      change = mprof_cupti_capture_kernel(&g.capture, cd->symbolName, now);
  }
  apply_locked(change);
  pthread_mutex_unlock(&g.capture_lock);
}

void window_tick(void) {
  if (!g.windowed || atomic_load(&g.window_settled))
    return;
  /* The streamed file grows at each checkpoint (once a second). */
  uint64_t bytes = 0;
  if (g.capture.s.max_bytes) {
    char partial[sizeof g.cfg.output + 16];
    struct stat st;
    snprintf(partial, sizeof partial, "%s.partial", g.cfg.output);
    if (stat(partial, &st) == 0)
      bytes = (uint64_t)st.st_size;
  }
  uint64_t now = monotonic_raw_ns();
  pthread_mutex_lock(&g.capture_lock);
  mprof_cupti_capture_change change =
      mprof_cupti_capture_bytes(&g.capture, bytes, now);
  /* cuptiPCSamplingStart/Stop from this thread while the program launched
   * kernels deadlocked inside CUPTI on the H100 (a PyTorch loop with
   * --delay 3 --duration 1 hung in cuLaunchKernel): with PC sampling the
   * switch waits for the program's next launch (window_callback()). */
  if (change != MPROF_CUPTI_CAPTURE_SAME && g.pc_allowed) {
    /* ON then OFF before any launch: nothing ran, nothing to switch. */
    g.window_pending = g.window_pending == MPROF_CUPTI_CAPTURE_ON &&
                               change == MPROF_CUPTI_CAPTURE_OFF
                           ? MPROF_CUPTI_CAPTURE_SAME
                           : change;
    if (g.capture.done && g.window_pending == MPROF_CUPTI_CAPTURE_SAME)
      apply_locked(MPROF_CUPTI_CAPTURE_SAME);
  } else {
    apply_locked(change);
  }
  pthread_mutex_unlock(&g.capture_lock);
}

void window_exit(void) {
  if (!g.windowed)
    return;
  pthread_mutex_lock(&g.capture_lock);
  /* What the program did last is recorded: only the record changes. */
  mprof_cupti_capture_finish(&g.capture, monotonic_raw_ns());
  mprof_capture_record rec;
  mprof_cupti_capture_record(&g.capture, &rec);
  mprof_cupti_translate_capture(g.tr, &rec, g.capture.s.spec);
  atomic_store(&g.window_settled, 1);
  if (g.cfg.pm_alternate)
    alternate_account_locked();
  meta_u64("capture.close_us", g.close_ns / 1000);
  meta_u64("capture.closes", g.closes);
  activity_window_account();
  pthread_mutex_unlock(&g.capture_lock);
}

/* mprof/control.h's entry point: the program's own steps and start/stop,
 * fed to the state machine as NVTX push/pop in the default domain and
 * cudaProfilerStart/Stop are. Returns 1 recording, 0 not, -1 an unknown
 * version or operation. */
__attribute__((visibility("default"))) int mprof_control(int version, int op,
                                                         const char *name);

int mprof_control(int version, int op, const char *name) {
  if (version != 1 || op < 1 || op > 4)
    return -1;
  if (!g.windowed || !running())
    return 0;
  if (atomic_load(&g.window_settled))
    return atomic_load(&g.window_on);
  uint64_t now = monotonic_raw_ns();
  pthread_mutex_lock(&g.capture_lock);
  mprof_cupti_capture_change change = MPROF_CUPTI_CAPTURE_SAME;
  switch (op) {
  case 1: change = mprof_cupti_capture_profiler_start(&g.capture, now); break;
  case 2: change = mprof_cupti_capture_profiler_stop(&g.capture, now); break;
  case 3:
    change =
        mprof_cupti_capture_push(&g.capture, stack_key(NULL), name, NULL, now);
    break;
  default:
    change = mprof_cupti_capture_pop(&g.capture, stack_key(NULL), now);
    break;
  }
  apply_locked(change);
  int on = atomic_load(&g.window_on);
  pthread_mutex_unlock(&g.capture_lock);
  return on;
}
