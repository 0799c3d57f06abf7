/*
 * A fault, as tests/cupti/crash_report.sh provokes it: a handler that
 * reports as the producer's does (exit.c: mprof_cupti_crash_report, then
 * the default action) must say which signal hit which thread, the
 * producer's or the program's, with the stack, and the program must still
 * die of the signal.
 *
 *   crash_report producer   a thread started as the producer starts its
 *                           own (the drain thread's way, every other
 *                           signal blocked) dereferences NULL
 *   crash_report program    the main thread passes NULL to strlen (the
 *                           fault is then in the C library's code)
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "crash.h"

static void on_fault(int signo, siginfo_t *info, void *context) {
  mprof_cupti_crash_report(signo, info, context);
  signal(signo, SIG_DFL);
  raise(signo);
}

static void *fault(void *arg) {
  volatile int *volatile nowhere = (volatile int *)arg;
  return (void *)(long)*nowhere;
}

int main(int argc, char **argv) {
  if (argc != 2 ||
      (strcmp(argv[1], "producer") != 0 && strcmp(argv[1], "program") != 0)) {
    fprintf(stderr, "usage: crash_report producer|program\n");
    return 2;
  }
  mprof_cupti_crash_report_prepare();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  if (strcmp(argv[1], "program") == 0) {
    /* In the C library's code: not the producer's. */
    const char *volatile nowhere = NULL;
    return (int)strlen(nowhere);
  }
  pthread_t thread;
  if (mprof_cupti_thread_start(&thread, fault, NULL, "the drain thread") != 0)
    return 3;
  pthread_join(thread, NULL);
  return 0;
}
