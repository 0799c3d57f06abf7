/*
 * mprof CUPTI producer — the producer's own threads, and the report of a
 * fault: which signal hit which thread (the producer's or the program's),
 * and its stack. CUPTI-free, so tests link it without a GPU.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <string.h>
#include <ucontext.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "crash.h"

/* Which of the producer's threads this is (NULL: one of the program's). */
static _Thread_local const char *thread_role;

const char *mprof_cupti_thread_role(void) { return thread_role; }

struct thread_start {
  void *(*run)(void *);
  void *arg;
  const char *role;
};

static void *thread_main(void *p) {
  struct thread_start start = *(struct thread_start *)p;
  free(p);
  thread_role = start.role;
  return start.run(start.arg);
}

int mprof_cupti_thread_start(pthread_t *thread, void *(*run)(void *), void *arg,
                             const char *role) {
  struct thread_start *start = malloc(sizeof *start);
  if (!start)
    return ENOMEM;
  start->run = run;
  start->arg = arg;
  start->role = role;
  sigset_t mask, old;
  sigfillset(&mask);
  /* A fault cannot be blocked: the kernel would kill the process at once,
   * without any handler (the program's, Python's faulthandler, ours). */
  sigdelset(&mask, SIGSEGV);
  sigdelset(&mask, SIGBUS);
  sigdelset(&mask, SIGILL);
  sigdelset(&mask, SIGFPE);
  pthread_sigmask(SIG_SETMASK, &mask, &old);
  int rc = pthread_create(thread, NULL, thread_main, start);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    free(start);
  return rc;
}

/* Append @p text to @p line at @p *at (no more than @p size). */
static void append(char *line, size_t size, size_t *at, const char *text) {
  while (*text && *at + 1 < size)
    line[(*at)++] = *text++;
}

static void append_hex(char *line, size_t size, size_t *at, uintptr_t v) {
  char digits[2 + 2 * sizeof v + 1];
  size_t n = sizeof digits - 1;
  digits[n] = '\0';
  do {
    digits[--n] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v && n > 2);
  digits[--n] = 'x';
  digits[--n] = '0';
  append(line, size, at, digits + n);
}

void mprof_cupti_crash_report_prepare(void) {
  void *warm[2];
  (void)backtrace(warm, 2);
}

/* The interrupted instruction's address, 0 where this port cannot say. */
static uintptr_t fault_pc(const void *context) {
  const ucontext_t *uc = (const ucontext_t *)context;
  if (!uc)
    return 0;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  return 0;
#endif
}

/* Whose code faulted: mprof's producer (the object this file is in), or
 * which library of the program's, with the offset into it. */
static void append_culprit(char *line, size_t size, size_t *at, uintptr_t pc) {
  Dl_info where, self;
  if (!pc || !dladdr((void *)pc, &where) || !where.dli_fname)
    return;
  const char *file = strrchr(where.dli_fname, '/');
  file = file ? file + 1 : where.dli_fname;
  int ours =
      dladdr((void *)&fault_pc, &self) && self.dli_fbase == where.dli_fbase;
  append(line, size, at,
         ours ? ", the faulting instruction mprof's own ("
              : ", the faulting instruction in ");
  append(line, size, at, *file ? file : "the program");
  append(line, size, at, "+");
  append_hex(line, size, at, pc - (uintptr_t)where.dli_fbase);
  append(line, size, at, ours ? ")" : "");
}

void mprof_cupti_crash_report(int signo, const siginfo_t *info,
                              const void *context) {
  char line[512];
  size_t at = 0;
  const char *name = signo == SIGSEGV  ? "SIGSEGV"
                     : signo == SIGBUS ? "SIGBUS"
                     : signo == SIGILL ? "SIGILL"
                     : signo == SIGFPE ? "SIGFPE"
                                       : "SIGABRT";
  append(line, sizeof line, &at, "mprof-cupti: the program got ");
  append(line, sizeof line, &at, name);
  if (signo != SIGABRT && info) {
    append(line, sizeof line, &at, " at address ");
    append_hex(line, sizeof line, &at, (uintptr_t)info->si_addr);
  }
  append(line, sizeof line, &at, " in ");
  append(line, sizeof line, &at,
         thread_role ? thread_role : "one of its own threads");
  append(line, sizeof line, &at, thread_role ? " of mprof's producer" : "");
  if (signo != SIGABRT)
    append_culprit(line, sizeof line, &at, fault_pc(context));
  append(line, sizeof line, &at, "; its stack:\n");
  if (write(STDERR_FILENO, line, at) < 0)
    return;
  void *frames[32];
  int n = backtrace(frames, 32);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
}
