/*
 * SIGTERM and SIGINT at a random moment of a process's exit, for
 * tests/cupti/stress_exit.sh: the process must neither crash nor hang, and
 * must leave a trace that opens (finished, or streamed and partial) with
 * everything committed before the exit began.
 *
 *   stress_exit library LIB OUT SEED    the injection library itself,
 *       loaded as cuInit loads it (no GPU here: it records nothing, but its
 *       signal handlers and exit handler run as on a GPU machine)
 *   stress_exit translator OUT SEED     the translator and writer the
 *       library uses, filled by four threads with launches, ranges of
 *       distinct names and PC samples, so that finishing takes long enough
 *       to be hit; the handler is installed and behaves as the library's
 *       does when the drain thread cannot flush (exit.c): checkpoint, then
 *       the default action
 *
 * Each run measures the exit twice without a signal, then repeats it and
 * sends the signal(s) after a random delay up to the shorter of the two. In
 * half the runs (as SEED decides) the exiting thread blocks both signals,
 * so that another thread takes them while the exit handler finishes the
 * trace. Prints one
 * line: what was sent, how the process ended and what the trace holds.
 * Exit status 0 when all was well.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mprof/error.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "translate.h"

#define HANG_LIMIT_MS 30000
#define THREADS 4
#define KERNELS_PER_THREAD 20000
#define RANGES_PER_THREAD 5000

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(uint64_t us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* The exiting thread leaves the signals to the others. */
static void block_exit_signals(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* A thread of the program that keeps running while it exits. */
static void *idle_thread(void *arg) {
  (void)arg;
  for (;;)
    sleep_us(1000);
  return NULL;
}

/* ---- the child: the injection library ------------------------------------ */

/* Tell the parent we are about to exit and wait for its go: it times the
 * exit from then, on the CPU, instead of waking up somewhere in it. */
static int handshake(const int *fds) {
  char byte = 'x';
  if (write(fds[0], &byte, 1) != 1)
    return -1;
  ssize_t got;
  while ((got = read(fds[1], &byte, 1)) < 0 && errno == EINTR)
    ;
  return got == 1 ? 0 : -1;
}

static int run_library(const char *lib_path, const char *out, const int *fds,
                       int block) {
  setenv("MPROF_OUTPUT", out, 1);
  void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  int (*init)(void) =
      lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
  if (!init) {
    fprintf(stderr, "stress_exit: cannot load %s: %s\n", lib_path, dlerror());
    return 3;
  }
  init();
  pthread_t idle;
  if (pthread_create(&idle, NULL, idle_thread, NULL) != 0)
    return 4;
  if (block)
    block_exit_signals();
  if (handshake(fds) != 0)
    return 5;
  exit(0); /* the library's exit handler finishes the trace */
}

/* ---- the child: translator and writer --------------------------------------
 */

static mprof_cupti_translate *translator;

/* What exit.c's handler does when the drain thread cannot flush: commit
 * what the writer holds, then let the signal kill the process. */
static void on_signal(int signo, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  int saved = errno;
  mprof_cupti_translate_checkpoint_signal(translator, signo, now_ns());
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, NULL);
  raise(signo);
  errno = saved;
}

static void install_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

static atomic_int finishing;

/* One thread of CUPTI's activity buffers: launches on its own stream and
 * NVTX ranges with a new name each (a long run's per-step names). */
static void *fill(void *arg) {
  uint32_t id = (uint32_t)(uintptr_t)arg;
  char name[64];
  for (uint32_t i = 0; i < KERNELS_PER_THREAD; i++) {
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = i % 2 ? "_Z4stepPf" : "_Z6reducePfS_";
    k.streamId = id;
    k.contextId = 1;
    k.start = 1000000ull + 100ull * i;
    k.end = k.start + 50;
    k.correlationId = id * KERNELS_PER_THREAD + i + 1;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = k.blockY = k.blockZ = 32;
    mprof_cupti_translate_kernel(translator, &k);
    if (i < RANGES_PER_THREAD) {
      snprintf(name, sizeof name, "thread %u step %u", id, i);
      CUpti_ActivityMarker2 m;
      memset(&m, 0, sizeof m);
      m.kind = CUPTI_ACTIVITY_KIND_MARKER;
      m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
      m.id = id * RANGES_PER_THREAD + i + 1;
      m.timestamp = k.start;
      m.name = name;
      m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      m.objectId.pt.threadId = id;
      mprof_cupti_translate_marker(translator, &m);
      m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
      m.timestamp = k.end;
      m.name = NULL;
      mprof_cupti_translate_marker(translator, &m);
    }
  }
  /* Records still arriving while the exit finishes: ignored once it has. */
  while (!atomic_load(&finishing))
    sleep_us(100);
  for (uint32_t i = 0; i < 1000; i++) {
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "_Z4latev";
    k.start = 9000000ull + i;
    k.end = k.start + 1;
    mprof_cupti_translate_kernel(translator, &k);
  }
  for (;;)
    sleep_us(1000);
  return NULL;
}

static int run_translator(const char *out, const int *fds, int block) {
  mprof_writer *w = NULL;
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.open_flags = MPROF_WRITER_EXCLUSIVE;
  if (mprof_writer_open(&w, out, &opts) != 0 ||
      mprof_cupti_translate_new(&translator, w, NULL) != 0) {
    fprintf(stderr, "stress_exit: %s\n", mprof_error_last());
    return 3;
  }
  mprof_cupti_translate_meta(translator, "tool", "stress_exit");
  mprof_cupti_translate_checkpoint(translator, now_ns());
  install_handlers();
  pthread_t threads[THREADS];
  for (uint32_t i = 0; i < THREADS; i++)
    if (pthread_create(&threads[i], NULL, fill, (void *)(uintptr_t)i) != 0)
      return 4;
  /* Wait for the records, then commit them: whatever the signal does from
   * here on, the trace must keep them. */
  uint64_t want = (uint64_t)THREADS * KERNELS_PER_THREAD;
  mprof_cupti_translate_stats stats;
  do {
    sleep_us(1000);
    mprof_cupti_translate_get_stats(translator, &stats);
  } while (stats.launches < want);
  if (mprof_cupti_translate_checkpoint(translator, now_ns()) != 0)
    return 5;
  if (block)
    block_exit_signals();
  if (handshake(fds) != 0)
    return 6;
  atomic_store(&finishing, 1);
  int rc = mprof_cupti_translate_finish(translator);
  /* The translator stays allocated, as in the library. */
  _exit(rc == 0 ? 0 : 7);
}

/* ---- the parent ------------------------------------------------------------
 */

typedef struct outcome {
  int status;
  uint64_t finish_us; /* from "exiting" until PATH appeared (0: never) */
  int hung;
} outcome;

/* Start one child. Without @p signals, time how long its exit takes to put
 * the finished trace under PATH; with them, send @p signals (1 or 2)
 * @p delay_us after it says it exits. The parent spins rather than sleeps
 * so that delays of a few microseconds are kept. */
static int run_child(char **argv, const char *out, int block, int signals,
                     const int *signos, uint64_t delay_us, outcome *o) {
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0)
    return -1;
  pid_t child = fork();
  if (child < 0)
    return -1;
  if (child == 0) {
    close(ready[0]);
    close(go[1]);
    /* The child's stderr (the library's warning that CUPTI cannot attach
     * without a driver, or a sanitizer's report) is shown on failure. */
    char log[400];
    snprintf(log, sizeof log, "%.300s.stderr", out);
    if (!freopen(log, "w", stderr))
      _exit(3);
    int fds[2] = {ready[1], go[0]};
    int rc = strcmp(argv[1], "library") == 0
                 ? run_library(argv[2], out, fds, block)
                 : run_translator(out, fds, block);
    _exit(rc);
  }
  close(ready[1]);
  close(go[0]);
  memset(o, 0, sizeof *o);
  int reaped = 0;
  char byte;
  ssize_t got;
  /* The child prepares for a while (the translator fills its trace first)
   * and then waits for us. */
  while ((got = read(ready[0], &byte, 1)) < 0 && errno == EINTR)
    ;
  close(ready[0]);
  uint64_t exiting = now_ns();
  if (got == 1 && write(go[1], "g", 1) != 1)
    got = 0;
  close(go[1]);
  if (got == 1 && signals) {
    while ((now_ns() - exiting) / 1000u < delay_us)
      ;
    kill(child, signos[0]);
    if (signals > 1)
      kill(child, signos[1]);
  } else if (got == 1) {
    struct stat sb;
    while (stat(out, &sb) != 0) {
      if (waitpid(child, &o->status, WNOHANG) == child) {
        reaped = 1;
        break;
      }
    }
    if (stat(out, &sb) == 0)
      o->finish_us = (now_ns() - exiting) / 1000u;
  }
  while (!reaped) {
    pid_t done = waitpid(child, &o->status, WNOHANG);
    if (done == child)
      break;
    if ((now_ns() - exiting) / 1000000u > HANG_LIMIT_MS) {
      o->hung = 1;
      kill(child, SIGKILL);
      waitpid(child, &o->status, 0);
      break;
    }
    sleep_us(100);
  }
  return got == 1 ? 0 : -1;
}

/* The trace the run left: PATH finished, or PATH.partial. Returns 0 and
 * describes it in @p what when it opens and holds @p min_launches. */
static int check_trace(const char *path, size_t min_launches, char *what,
                       size_t size) {
  char partial[400];
  snprintf(partial, sizeof partial, "%s.partial", path);
  struct stat sb;
  const char *open_path = stat(path, &sb) == 0 ? path : partial;
  mprof_trace *t = NULL;
  if (mprof_trace_open(&t, open_path, NULL) != 0) {
    snprintf(what, size, "%.200s does not open: %.250s", open_path,
             mprof_error_last());
    return -1;
  }
  size_t launches = 0;
  mprof_trace_launches(t, &launches);
  int is_partial = mprof_trace_partial(t, NULL);
  const char *checkpoints = mprof_trace_meta(t, "capture.checkpoints");
  const char *signo = mprof_trace_meta(t, "capture.signal");
  snprintf(what, size, "%s opens: %s, %zu launches%s%s%s%s",
           open_path == path ? "the trace" : "PATH.partial",
           is_partial ? "partial" : "finished", launches,
           checkpoints ? ", checkpoints " : "", checkpoints ? checkpoints : "",
           signo ? ", signal " : "", signo ? signo : "");
  mprof_trace_free(t);
  if (launches < min_launches) {
    size_t len = strlen(what);
    snprintf(what + len, size - len, " (expected at least %zu)", min_launches);
    return -1;
  }
  return 0;
}

/* What the child wrote on stderr, on ours. */
static void show_child_stderr(const char *path) {
  char log[400];
  snprintf(log, sizeof log, "%.300s.stderr", path);
  FILE *f = fopen(log, "r");
  if (!f)
    return;
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  if (n)
    fprintf(stderr, "the child's stderr:\n%s\n", text);
}

static void remove_outputs(const char *path) {
  char other[4200];
  unlink(path);
  snprintf(other, sizeof other, "%s.stderr", path);
  unlink(other);
  snprintf(other, sizeof other, "%s.partial", path);
  unlink(other);
  snprintf(other, sizeof other, "%s.finishing", path);
  unlink(other);
}

int main(int argc, char **argv) {
  int library = argc == 5 && strcmp(argv[1], "library") == 0;
  int translator_mode = argc == 4 && strcmp(argv[1], "translator") == 0;
  if (!library && !translator_mode) {
    fprintf(stderr, "usage: stress_exit library LIB OUT SEED\n"
                    "       stress_exit translator OUT SEED\n");
    return 2;
  }
  const char *out = library ? argv[3] : argv[2];
  unsigned seed = (unsigned)strtoul(argv[argc - 1], NULL, 10);
  srand(seed);
  int block = rand() % 2;
  size_t min_launches =
      translator_mode ? (size_t)THREADS * KERNELS_PER_THREAD : 0;
  char what[512];

  /* Twice without a signal: a finished trace each time, and the exit's
   * length (the shorter: the first run warms the caches). */
  outcome calm;
  uint64_t finish_us = UINT64_MAX;
  for (int i = 0; i < 2; i++) {
    remove_outputs(out);
    if (run_child(argv, out, block, 0, NULL, 0, &calm) != 0 || calm.hung ||
        !WIFEXITED(calm.status) || WEXITSTATUS(calm.status) != 0) {
      printf("seed %u: the run without a signal failed (status 0x%x%s)\n", seed,
             (unsigned)calm.status, calm.hung ? ", hung" : "");
      show_child_stderr(out);
      return 1;
    }
    if (check_trace(out, min_launches, what, sizeof what) != 0 ||
        !strstr(what, "finished")) {
      printf("seed %u: without a signal: %s\n", seed, what);
      show_child_stderr(out);
      return 1;
    }
    if (calm.finish_us < finish_us)
      finish_us = calm.finish_us;
  }

  /* Again, with SIGTERM or SIGINT (sometimes both) during the exit. */
  int signos[2];
  signos[0] = rand() % 2 ? SIGTERM : SIGINT;
  signos[1] = signos[0] == SIGTERM ? SIGINT : SIGTERM;
  int signals = rand() % 4 == 0 ? 2 : 1;
  uint64_t window = finish_us + 1;
  uint64_t delay = window ? (uint64_t)rand() % window : 0;
  outcome hit;
  remove_outputs(out);
  if (run_child(argv, out, block, signals, signos, delay, &hit) != 0) {
    printf("seed %u: the child never reached its exit\n", seed);
    return 1;
  }
  char how[96];
  int ok = !hit.hung;
  if (hit.hung)
    snprintf(how, sizeof how, "hung (killed after %d ms)", HANG_LIMIT_MS);
  else if (WIFEXITED(hit.status)) {
    snprintf(how, sizeof how, "exited %d", WEXITSTATUS(hit.status));
    ok = WEXITSTATUS(hit.status) == 0;
  } else if (WIFSIGNALED(hit.status)) {
    int got = WTERMSIG(hit.status);
    snprintf(how, sizeof how, "killed by signal %d", got);
    ok = got == signos[0] || (signals > 1 && got == signos[1]);
  } else {
    snprintf(how, sizeof how, "status 0x%x", (unsigned)hit.status);
    ok = 0;
  }
  if (check_trace(out, min_launches, what, sizeof what) != 0)
    ok = 0;
  printf("seed %u: %s, %s%s%s after %llu us of an exit of %llu us%s: %s; "
         "%s\n",
         seed, argv[1], signos[0] == SIGTERM ? "SIGTERM" : "SIGINT",
         signals > 1 ? " + " : "",
         signals > 1 ? (signos[1] == SIGTERM ? "SIGTERM" : "SIGINT") : "",
         (unsigned long long)delay, (unsigned long long)finish_us,
         block ? " (taken by another thread)" : "", how, what);
  if (!ok)
    show_child_stderr(out);
  remove_outputs(out);
  return ok ? 0 : 1;
}
