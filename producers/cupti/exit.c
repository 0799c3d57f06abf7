/*
 * mprof CUPTI producer — fatal signals (flush, then let the signal do what
 * it would have done), fork (a child never writes its parent's trace) and
 * the exit handler that waits for the GPU and finishes the trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "producer.h"
#include "mprof/error.h"
#include "pmsampling.h"
#include "process.h"

/* The signals after which the producer flushes before the program goes. */
static const int caught_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGTERM, SIGINT};
_Static_assert(sizeof caught_signals / sizeof caught_signals[0] ==
                   CAUGHT_SIGNAL_COUNT,
               "CAUGHT_SIGNAL_COUNT");

/* ---- signals ------------------------------------------------------------ */

void manifest_event(const char *word, long value) {
  char line[4200];
  if (mprof_cupti_manifest_format(line, sizeof line, word, (long)g.pid, value,
                                  g.cfg.output))
    mprof_cupti_manifest_line(g.cfg.manifest, line);
}

/* Sleep @p ms without anything a signal handler may not call. */
static void pause_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static int signal_slot(int signo) {
  for (size_t i = 0; i < CAUGHT_SIGNAL_COUNT; i++)
    if (caught_signals[i] == signo)
      return (int)i;
  return -1;
}

static void on_signal(int signo, siginfo_t *info, void *context) {
  int saved = errno;
  int slot = signal_slot(signo);
  struct sigaction old;
  memset(&old, 0, sizeof old);
  old.sa_handler = SIG_DFL;
  if (slot >= 0)
    old = g.old_actions[slot];
  int dies = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
  /* A program may handle its own faults (a JVM does): a report only when
   * the fault ends it, or when it is the producer's. */
  if ((signo == SIGSEGV || signo == SIGBUS || signo == SIGABRT) &&
      (dies || mprof_cupti_thread_role()))
    mprof_cupti_crash_report(signo, info, context);
  int state = atomic_load(&g.state);
  if (getpid() == g.pid && !atomic_load(&g.forked) &&
      (state == STATE_RUNNING || state == STATE_DISABLED) && g.tr) {
    /* The drain thread flushes CUPTI for us (it is not the interrupted
     * thread); if it cannot within the bound, commit what the writer has.
     * Once the exit handler runs, the drain thread is stopping or gone:
     * commit at once. */
    int flushed = 0;
    /* The drain thread cannot flush for itself. */
    if (atomic_load(&g.thread_started) && state == STATE_RUNNING &&
        !atomic_load(&g.exiting) && !mprof_cupti_thread_role()) {
      unsigned before = atomic_load(&g.flush_done);
      atomic_store(&g.flush_request, dies ? 2 : 1);
      wake_drain_thread();
      for (unsigned waited = 0;
           waited < FATAL_FLUSH_WAIT_MS && !atomic_load(&g.thread_stop);
           waited += 5) {
        if (atomic_load(&g.flush_done) != before) {
          flushed = 1;
          break;
        }
        pause_ms(5);
      }
    }
    if (!flushed)
      mprof_cupti_translate_checkpoint_signal(g.tr, signo, monotonic_raw_ns());
    if (dies)
      manifest_event("signal", signo);
  }
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction)
      old.sa_sigaction(signo, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(signo);
  } else if (old.sa_handler == SIG_DFL) {
    /* Default action: delivered again as soon as this handler returns (the
     * signal is blocked until then), now without us. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
    raise(signo);
  }
  errno = saved;
}

void install_signal_handlers(void) {
  mprof_cupti_crash_report_prepare();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < CAUGHT_SIGNAL_COUNT; i++) {
    struct sigaction old;
    if (sigaction(caught_signals[i], NULL, &old) != 0)
      continue;
    /* A signal the program ignores stays ignored. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
      continue;
    g.old_actions[i] = old;
    sigaction(caught_signals[i], &sa, NULL);
  }
}

/* A forked child shares nothing with the parent's capture: it never writes
 * the parent's trace (CUDA itself is unusable in such a child). */
void after_fork_in_child(void) {
  atomic_store(&g.forked, 1);
  atomic_store(&g.state, STATE_DISABLED);
  g.thread_started = 0;
}
/* ---- exit --------------------------------------------------------------- */

/* Work a program left running when it exited without synchronising would
 * reach CUPTI without timestamps: give it a bounded time to finish. */
typedef struct exit_wait {
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  int done;
  int synchronized;
} exit_wait;

static void *synchronize_contexts(void *arg) {
  exit_wait *wait = (exit_wait *)arg;
  int synchronized = contexts_synchronize();
  pthread_mutex_lock(&wait->lock);
  wait->done = 1;
  wait->synchronized = synchronized;
  pthread_cond_signal(&wait->done_cond);
  pthread_mutex_unlock(&wait->lock);
  return NULL;
}

static void wait_for_contexts(void) {
  if (!g.cu.push || !g.cu.pop || !g.cu.synchronize || !g.cfg.exit_wait_ms ||
      !g.context_count)
    return;
  /* Leaked on a timeout: the helper may still be inside the driver. */
  static exit_wait wait = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                           0, 0};
  uint64_t started = monotonic_raw_ns();
  pthread_t helper;
  int rc = mprof_cupti_thread_start(&helper, synchronize_contexts, &wait,
                                    "the exit helper thread");
  if (rc != 0)
    return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += g.cfg.exit_wait_ms / 1000;
  until.tv_nsec += (long)(g.cfg.exit_wait_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&wait.lock);
  while (!wait.done &&
         pthread_cond_timedwait(&wait.done_cond, &wait.lock, &until) == 0)
    ;
  int done = wait.done;
  pthread_mutex_unlock(&wait.lock);
  if (done)
    pthread_join(helper, NULL);
  else
    pthread_detach(helper);
  meta("exit.wait", done ? "finished" : "timed_out");
  meta_u64("exit.wait_ms", (monotonic_raw_ns() - started) / 1000000u);
  if (!done)
    warn("the GPU was still busy %u ms after the program exited; launches "
         "still running are recorded without timestamps",
         g.cfg.exit_wait_ms);
}

void at_exit(void) {
  /* A forked child inherits this handler and the writer's descriptors; only
   * the process that opened the trace may finish it. */
  if (getpid() != g.pid || atomic_load(&g.forked) ||
      atomic_exchange(&g.exiting, 1))
    return;
  stop_drain_thread();
  if (running()) {
    /* PM sampling first: on the H200 (driver 580, CUPTI 13.0) its Stop or
     * decode never returned once the contexts had been synchronized from
     * the helper thread below (every `--pm on --pc-mode off` recording of
     * tests/gpu/cost/small_kernels.cu, 17 of 17; finishing PM sampling
     * first, 3 of 3 exited at once). Kernels a program left running at
     * exit lose their last PM samples. */
    mprof_cupti_pm_finish();
    wait_for_contexts();
    uint64_t started = cost_now();
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
       "cuptiActivityFlushAll(FORCED)");
    cost_add(COST_EXIT_FLUSH, started, 0);
    started = cost_now();
    pc_finish_all();
    cost_add(COST_EXIT_PC, started, 0);
  }
  window_exit();
  if (g.config_direct_reads)
    meta_u64("pc.config_buffer_direct_reads", g.config_direct_reads);
  uint64_t end = write_anchor("clock.end");
  if (g.exit_status >= 0)
    mprof_cupti_translate_process_end(g.tr, end, MPROF_EXIT_STATUS,
                                      (uint32_t)(g.exit_status & 0xff));
  else
    mprof_cupti_translate_process_end(g.tr, end, MPROF_EXIT_UNKNOWN, 0);
  /* From here on every callback returns at once. */
  atomic_store(&g.state, STATE_FINISHED);
  uint64_t write_started = cost_now();
  int rc = mprof_cupti_translate_finish(g.tr);
  int write_errno = errno;
  cost_add(COST_EXIT_WRITE, write_started, 0);
  mprof_cupti_translate_stats stats;
  mprof_cupti_translate_get_stats(g.tr, &stats);
  cost_print(&stats);
  /* A failed write keeps the streamed file; `mprof record` says why in its
   * own line ("error PID ERRNO PATH"), so the warning is for runs without
   * it. */
  if (rc != 0)
    manifest_event("error", write_errno > 0 ? write_errno : EIO);
  manifest_event("end", rc == 0 ? 0 : 1);
  if (rc != 0 && !g.cfg.manifest[0])
    warn("could not write %s: %s", g.cfg.output, mprof_error_last());
  else
    note("wrote %s: %llu launches, %llu memops, %llu ranges, %llu API calls, "
         "%llu PC records, %llu of %llu cubins kept, %llu errors",
         g.cfg.output, (unsigned long long)stats.launches,
         (unsigned long long)stats.memops, (unsigned long long)stats.ranges,
         (unsigned long long)stats.api_calls,
         (unsigned long long)stats.pc_records,
         (unsigned long long)stats.modules_kept,
         (unsigned long long)stats.modules, (unsigned long long)stats.errors);
  /* The translator stays allocated: a late CUPTI callback finds it finished
   * and does nothing. */
}

void at_exit_status(int status, void *unused) {
  (void)unused;
  /* The parent sees the low 8 bits, as wait() reports them. */
  if (getpid() == g.pid && !atomic_load(&g.forked))
    g.exit_status = status;
  at_exit();
}
