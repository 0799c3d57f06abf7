/*
 * mprof CUPTI producer — the capture window: which part of a run is
 * recorded (`mprof record --capture-range`, `--range-skip`, `--range-count`,
 * `--delay`, `--duration`, `--kernel-skip`, `--kernel-count`,
 * `--max-size`).
 *
 * A pure state machine: the producer feeds it what happens in the program
 * (cudaProfilerStart/Stop, NVTX ranges, kernel launches, the clock, the
 * bytes written) and it answers when recording turns on or off and why the
 * window ended. No CUPTI here, so the tests drive it with a fake clock.
 * Not thread-safe: the producer serialises calls (capture_lock).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_CAPTURE_H
#define MPROF_CUPTI_CAPTURE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "mprof/format.h"

/* Threads whose NVTX push/pop nesting is followed; pops of threads past
 * this many are not followed (their matching ranges never close). */
#define MPROF_CUPTI_CAPTURE_MAX_THREADS 256

/** What a change of the window asks the producer to do. */
typedef enum mprof_cupti_capture_change {
  MPROF_CUPTI_CAPTURE_SAME = 0, /**< nothing */
  MPROF_CUPTI_CAPTURE_ON = 1,   /**< start recording, before the event's work */
  MPROF_CUPTI_CAPTURE_OFF = 2   /**< stop recording */
} mprof_cupti_capture_change;

/** The window asked for (mprof_cupti_config.capture). */
typedef struct mprof_cupti_capture_settings {
  mprof_capture_trigger trigger;
  /* nvtx: NAME matched whole, or /REGEX/ (POSIX ERE, unanchored) */
  char nvtx_name[512];
  int nvtx_regex;
  /* "" the default domain only (nvtxRangePush*, nvtxRangeStart*), "*" any
   * domain, else the domain of that name */
  char nvtx_domain[256];
  char spec[800];        /**< the range as given: "nvtx:step@*" */
  uint64_t range_skip;   /**< ranges not recorded first */
  uint64_t range_count;  /**< ranges recorded, then the window ends; 0 all */
  uint64_t kernel_skip;  /**< matching launches not recorded first */
  uint64_t kernel_count; /**< matching launches recorded; 0 all */
  uint64_t delay_ns;     /**< nothing counts before this much time */
  uint64_t duration_ns;  /**< the window ends this long after it opened */
  uint64_t max_bytes;    /**< the window ends when the file reaches it */
} mprof_cupti_capture_settings;

/**
 * Parse a --capture-range value ("none", "cudaProfilerApi",
 * "nvtx:NAME[@DOMAIN]", "nvtx:/REGEX/[@DOMAIN]") into @p s (trigger, nvtx_*,
 * spec). Returns 0, or -1 with a one-line reason in @p why.
 */
int mprof_cupti_capture_parse_range(mprof_cupti_capture_settings *s,
                                    const char *text, char *why,
                                    size_t why_size);

/** Whether @p s asks for a window at all (any option set). */
int mprof_cupti_capture_wanted(const mprof_cupti_capture_settings *s);

typedef struct capture_thread {
  uint64_t thread;
  uint32_t depth; /* NVTX push/pop nesting */
} capture_thread;

typedef struct mprof_cupti_capture {
  mprof_cupti_capture_settings s;
  regex_t nvtx_re, kernel_re;
  int have_nvtx_re, have_kernel_re;

  int begun;
  uint64_t begin_ns;
  int recording;
  int done;
  mprof_capture_end end;

  uint64_t pieces;             /* times recording turned on */
  uint64_t first_on, last_off; /* ns; 0 never */
  uint64_t ranges_seen;        /* matching ranges after the delay */
  uint64_t ranges_recorded;
  uint64_t kernels_seen;     /* matching launches after the delay */
  uint64_t kernels_recorded; /* matching launches inside the window */

  /* The outermost matching range open now (counted or skipped): ranges
   * inside it, on any thread, neither count nor end anything. */
  int range_open;
  int range_counted;
  int range_by_id; /* nvtxRangeStart/End: open_id; else a push on a thread */
  uint64_t open_id;
  uint64_t open_thread;
  uint32_t open_depth;

  capture_thread threads[MPROF_CUPTI_CAPTURE_MAX_THREADS];
  size_t thread_count;
} mprof_cupti_capture;

/**
 * Set @p c up for @p s; @p kernel_regex ("" or NULL: every kernel) says
 * which launches --kernel-skip/--kernel-count count. Returns 0, or -1 with
 * the reason in @p why (a regex that does not compile).
 */
int mprof_cupti_capture_init(mprof_cupti_capture *c,
                             const mprof_cupti_capture_settings *s,
                             const char *kernel_regex, char *why,
                             size_t why_size);
void mprof_cupti_capture_free(mprof_cupti_capture *c);

/* Events. Each returns what the producer must do now. */

/** The capture started (the producer is up) at @p now. */
mprof_cupti_capture_change mprof_cupti_capture_begin(mprof_cupti_capture *c,
                                                     uint64_t now);
/** Time passed: the delay, the duration. */
mprof_cupti_capture_change mprof_cupti_capture_tick(mprof_cupti_capture *c,
                                                    uint64_t now);
/** The trace file holds @p bytes now. */
mprof_cupti_capture_change
mprof_cupti_capture_bytes(mprof_cupti_capture *c, uint64_t bytes, uint64_t now);
mprof_cupti_capture_change
mprof_cupti_capture_profiler_start(mprof_cupti_capture *c, uint64_t now);
mprof_cupti_capture_change
mprof_cupti_capture_profiler_stop(mprof_cupti_capture *c, uint64_t now);
/** nvtxRangePush* / nvtxDomainRangePushEx on @p thread; @p domain NULL or
 *  "" for the default domain. */
mprof_cupti_capture_change
mprof_cupti_capture_push(mprof_cupti_capture *c, uint64_t thread,
                         const char *name, const char *domain, uint64_t now);
mprof_cupti_capture_change
mprof_cupti_capture_pop(mprof_cupti_capture *c, uint64_t thread, uint64_t now);
/** nvtxRangeStart* returning @p id; nvtxRangeEnd(@p id). */
mprof_cupti_capture_change
mprof_cupti_capture_start_range(mprof_cupti_capture *c, uint64_t id,
                                const char *name, const char *domain,
                                uint64_t now);
mprof_cupti_capture_change mprof_cupti_capture_end_range(mprof_cupti_capture *c,
                                                         uint64_t id,
                                                         uint64_t now);
/** A kernel named @p name is about to be launched. */
mprof_cupti_capture_change mprof_cupti_capture_kernel(mprof_cupti_capture *c,
                                                      const char *name,
                                                      uint64_t now);
/** The program ends: the window ends with it (or never opened). */
mprof_cupti_capture_change mprof_cupti_capture_finish(mprof_cupti_capture *c,
                                                      uint64_t now);

/** Whether anything still can turn recording on or off (the producer drops
 *  its launch and NVTX callbacks once it cannot). */
int mprof_cupti_capture_settled(const mprof_cupti_capture *c);

/** The window as the trace's CAPTURE record says it (process 0, times as
 *  given to the events). */
void mprof_cupti_capture_record(const mprof_cupti_capture *c,
                                mprof_capture_record *out);

#endif /* MPROF_CUPTI_CAPTURE_H */
