/*
 * mprof CUPTI producer — the producer's own threads, and the report of a
 * fault (crash.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_CRASH_H
#define MPROF_CUPTI_CRASH_H

#include <pthread.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start a thread of the producer's (@p role names it in a crash report):
 * like pthread_create, but the thread takes none of the program's
 * asynchronous signals, while a fault of its own (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE) still reaches the installed handler (blocked, the kernel would
 * kill the process at once, without a word from any handler).
 */
int mprof_cupti_thread_start(pthread_t *thread, void *(*run)(void *), void *arg,
                             const char *role);

/** The role of the calling thread if it is the producer's, else NULL. */
const char *mprof_cupti_thread_role(void);

/** Call once before any report: backtrace(3) loads libgcc_s on its first
 * call, which must not happen in a signal handler. */
void mprof_cupti_crash_report_prepare(void);

/**
 * Write to stderr, with write(2), dladdr(3) and backtrace(3) only:
 * "mprof-cupti: the program got SIGSEGV at address 0x.. in the drain thread
 * of mprof's producer, the faulting instruction mprof's own
 * (libmprof-cupti.so+0x..); its stack:" (or "in one of its own threads",
 * "the faulting instruction in libc.so.6+0x.."; from @p context, the
 * handler's ucontext, or NULL), then the stack of the interrupted thread,
 * so a crash can be told as the producer's or the program's, whichever
 * thread it hit.
 */
void mprof_cupti_crash_report(int signo, const siginfo_t *info,
                              const void *context);

#ifdef __cplusplus
}
#endif

#endif
