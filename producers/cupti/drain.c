/*
 * mprof CUPTI producer — the drain thread: PC drains every 100 ms, CUPTI
 * activity flushes and a checkpoint every second, and flushes a fatal
 * signal asks for.
 *
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mprof/error.h"
#include "crash.h"
#include "producer.h"

/* ---- drain thread ------------------------------------------------------- */

/* Hand CUPTI's finished buffers to the translator and commit them. */
static void flush_and_checkpoint(int forced) {
  drain_all_pc();
  if (forced)
    ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
       "cuptiActivityFlushAll(FORCED)");
  else
    ok(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  if (mprof_cupti_translate_checkpoint(g.tr, monotonic_raw_ns()) != 0)
    mprof_cupti_translate_error(g.tr, mprof_error_last());
}

static void *drain_thread(void *arg) {
  (void)arg;
  unsigned ticks = 0;
  while (!atomic_load(&g.thread_stop)) {
    struct pollfd wake = {g.wake_pipe[0], POLLIN, 0};
    if (poll(&wake, 1, (int)DRAIN_PERIOD_MS) > 0) {
      char bytes[64];
      while (read(g.wake_pipe[0], bytes, sizeof bytes) > 0)
        ;
    }
    if (atomic_load(&g.thread_stop))
      break;
    int request = atomic_exchange(&g.flush_request, 0);
    if (!running())
      continue;
    if (request) {
      flush_and_checkpoint(request == 2);
      atomic_fetch_add(&g.flush_done, 1);
      ticks = 0;
      continue;
    }
    window_tick();
    uint64_t started = cost_now();
    if (++ticks % FLUSH_EVERY_DRAINS == 0)
      flush_and_checkpoint(0);
    else
      drain_all_pc();
    cost_add(COST_DRAIN_THREAD, started, 0);
  }
  return NULL;
}

void wake_drain_thread(void) {
  char byte = 1;
  if (g.wake_pipe[1] >= 0 && write(g.wake_pipe[1], &byte, 1) < 0) {
    /* a full pipe already holds a wake-up */
  }
}

void start_drain_thread(void) {
  if (pipe2(g.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g.wake_pipe[0] = g.wake_pipe[1] = -1;
    mprof_cupti_translate_error(g.tr, "pipe2(drain thread): failed");
    return;
  }
  /* The thread takes no signals: they belong to the program. */
  int rc = mprof_cupti_thread_start(&g.thread, drain_thread, NULL,
                                    "the drain thread");
  if (rc == 0) {
    g.thread_started = 1;
  } else {
    char message[128];
    snprintf(message, sizeof message, "pthread_create(drain thread): %s",
             strerror(rc));
    mprof_cupti_translate_error(g.tr, message);
  }
}

void stop_drain_thread(void) {
  if (!g.thread_started)
    return;
  atomic_store(&g.thread_stop, 1);
  wake_drain_thread();
  pthread_join(g.thread, NULL);
  g.thread_started = 0;
}
