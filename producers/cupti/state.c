/*
 * mprof CUPTI producer — the producer's state in this process, warnings and
 * errors, where the time goes, and the trace clock.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "producer.h"

producer_state g = {
    .pc_lock = PTHREAD_MUTEX_INITIALIZER,
    .context_lock = PTHREAD_MUTEX_INITIALIZER,
    .capture_lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_pipe = {-1, -1},
    .exit_status = -1,
};

/* ---- logging and errors ------------------------------------------------- */

static void say(const char *fmt, va_list ap) {
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  fprintf(stderr, "mprof-cupti: %s\n", line);
}

void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

void note(const char *fmt, ...) {
  if (!g.cfg.verbose)
    return;
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

const char *result_name(CUptiResult res) {
  const char *name = NULL;
  if (cuptiGetResultString(res, &name) != CUPTI_SUCCESS || !name)
    return "CUPTI_ERROR_UNKNOWN";
  return name;
}

/* Record "what: CUPTI_ERROR_X" once in META; returns 0 so callers can write
 * `if (!ok(cuptiX(...), "cuptiX")) ...`. */
int ok(CUptiResult res, const char *what) {
  if (res == CUPTI_SUCCESS)
    return 1;
  char message[256];
  snprintf(message, sizeof message, "%s: %s", what, result_name(res));
  if (g.tr && mprof_cupti_translate_error(g.tr, message))
    note("%s", message);
  return 0;
}

void meta(const char *key, const char *value) {
  if (g.tr)
    mprof_cupti_translate_meta(g.tr, key, value);
}

void meta_u64(const char *key, uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)value);
  meta(key, text);
}

int running(void) { return atomic_load(&g.state) == STATE_RUNNING; }

/* ---- where the time goes (printed at exit with MPROF_VERBOSE=1) --------- */

static struct {
  _Atomic uint64_t ns;
  _Atomic uint64_t count;
  _Atomic uint64_t bytes;
} cost[COST_PHASES];

uint64_t cost_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cost_add(cost_phase phase, uint64_t since, uint64_t bytes) {
  atomic_fetch_add(&cost[phase].ns, cost_now() - since);
  atomic_fetch_add(&cost[phase].count, 1);
  atomic_fetch_add(&cost[phase].bytes, bytes);
}

static double cost_ms(cost_phase phase) {
  return (double)atomic_load(&cost[phase].ns) / 1e6;
}

static unsigned long long cost_count(cost_phase phase) {
  return (unsigned long long)atomic_load(&cost[phase].count);
}

void cost_print(const mprof_cupti_translate_stats *stats) {
  if (!g.cfg.verbose)
    return;
  note("time: start-up %.1f ms", cost_ms(COST_STARTUP));
  note("time: module capture %.1f ms on the program's threads (%llu loads, "
       "%.1f MB)",
       cost_ms(COST_MODULES), cost_count(COST_MODULES),
       (double)atomic_load(&cost[COST_MODULES].bytes) / 1e6);
  note("time: PC drains %.1f ms on the program's threads (%llu), %.1f ms on "
       "the drain thread (%llu ticks)",
       cost_ms(COST_DRAIN_APP), cost_count(COST_DRAIN_APP),
       cost_ms(COST_DRAIN_THREAD), cost_count(COST_DRAIN_THREAD));
  note("time: activity buffers %.1f ms (%llu buffers, %llu launches, %.2f us "
       "a launch)",
       cost_ms(COST_BUFFERS), cost_count(COST_BUFFERS),
       (unsigned long long)stats->launches,
       stats->launches ? cost_ms(COST_BUFFERS) * 1e3 / (double)stats->launches
                       : 0.0);
  note("time: code streamed at checkpoints %.1f ms on the drain thread (%llu "
       "used modules whole, %.1f MB)",
       (double)stats->streamed_ns / 1e6,
       (unsigned long long)stats->streamed_modules,
       (double)stats->streamed_bytes / 1e6);
  note("time: exit %.1f ms: flush %.1f, PC %.1f, writing %.1f (code %.1f ms: "
       "%llu modules, %.1f MB kept of %.1f MB)",
       cost_ms(COST_EXIT_FLUSH) + cost_ms(COST_EXIT_PC) +
           cost_ms(COST_EXIT_WRITE),
       cost_ms(COST_EXIT_FLUSH), cost_ms(COST_EXIT_PC),
       cost_ms(COST_EXIT_WRITE), (double)stats->cubins_ns / 1e6,
       (unsigned long long)stats->modules_kept, (double)stats->kept_bytes / 1e6,
       (double)stats->used_bytes / 1e6);
}

/* ---- clock -------------------------------------------------------------- */

uint64_t CUPTIAPI monotonic_raw_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pair the trace clock with wall-clock time so a viewer can print dates. */
uint64_t write_anchor(const char *prefix) {
  uint64_t trace_ns = 0;
  struct timespec real;
  if (cuptiGetTimestamp(&trace_ns) != CUPTI_SUCCESS)
    trace_ns = monotonic_raw_ns();
  clock_gettime(CLOCK_REALTIME, &real);
  char key[64];
  snprintf(key, sizeof key, "%s.trace_ns", prefix);
  meta_u64(key, trace_ns);
  snprintf(key, sizeof key, "%s.realtime_ns", prefix);
  meta_u64(key, (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec);
  return trace_ns;
}
