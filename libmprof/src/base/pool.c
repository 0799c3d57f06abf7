/*
 * mprof — running independent tasks on a few threads (base/pool.h).
 *
 * Threads take the next task from one shared counter, so a slow task does
 * not hold back the others. Errors are thread-local (base/error.c): each
 * failed task's message is kept and the lowest task's is set again on the
 * caller's thread, so the outcome does not depend on scheduling.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "internal.h"
#include "mprof/error.h"

typedef struct pool {
  mprof__task_fn fn;
  void *ctx;
  size_t tasks;
  size_t next; /* atomic: the next task to take */
  pthread_mutex_t lock;
  size_t failed; /* the lowest failed task, tasks when none */
  int status;
  char message[1024];
} pool;

static void *worker(void *arg) {
  pool *p = (pool *)arg;
  for (;;) {
    size_t task = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (task >= p->tasks)
      break;
    int rc = p->fn(p->ctx, task);
    if (rc) {
      pthread_mutex_lock(&p->lock);
      if (task < p->failed) {
        p->failed = task;
        p->status = rc;
        snprintf(p->message, sizeof p->message, "%s", mprof_error_last());
      }
      pthread_mutex_unlock(&p->lock);
    }
  }
  return NULL;
}

int mprof__pool_run(size_t threads, size_t tasks, mprof__task_fn fn,
                    void *ctx) {
  if (threads > tasks)
    threads = tasks;
  if (threads <= 1) {
    for (size_t i = 0; i < tasks; i++) {
      int rc = fn(ctx, i);
      if (rc)
        return rc;
    }
    return 0;
  }
  pool p;
  memset(&p, 0, sizeof p);
  p.fn = fn;
  p.ctx = ctx;
  p.tasks = tasks;
  p.failed = tasks;
  pthread_mutex_init(&p.lock, NULL);
  pthread_t *ids = (pthread_t *)calloc(threads - 1, sizeof *ids);
  size_t started = 0;
  for (size_t i = 0; ids && i + 1 < threads; i++) {
    if (pthread_create(&ids[i], NULL, worker, &p) != 0)
      break;
    started++;
  }
  worker(&p);
  for (size_t i = 0; i < started; i++)
    pthread_join(ids[i], NULL);
  free(ids);
  pthread_mutex_destroy(&p.lock);
  if (p.failed < tasks)
    return mprof__error_set(p.status, "%s", p.message);
  return 0;
}
