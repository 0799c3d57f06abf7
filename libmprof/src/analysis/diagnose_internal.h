/*
 * mprof — internal: the diagnosis's state, shared by its parts
 * (diagnose.c: dimensions, stalls, notes; diagnose_spans.c: SM balance and
 * tail; diagnose_verdict.c: the verdict sentence).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ANALYSIS_DIAGNOSE_INTERNAL_H
#define MPROF_ANALYSIS_DIAGNOSE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "mprof/diagnose.h"
#include "mprof/units.h"

/* Thresholds (docs/DIAGNOSIS.md, "Thresholds"; the stall ones are in
 * diagnose.c). */
#define OCCUPANCY_ISSUE 0.25 /* theoretical occupancy below: issue */
#define OCCUPANCY_MINOR 0.50 /* below: minor */
#define BUSY_PIPES 0.50      /* compute share that excuses low occupancy */
#define TAIL_ISSUE 0.75      /* tail efficiency below: issue */
#define TAIL_MINOR 0.90
#define IDLE_ISSUE 0.50 /* median gap / (median gap + median duration) */
#define IDLE_MINOR 0.20
/* A median gap above this is not launch cost (a launch costs a few us):
 * the stream waits on the host or on other streams ("Starved"). */
#define STARVED_GAP_NS 50000.0
#define BALANCE_MINOR 1.15 /* busiest SM's busy time / the mean SM's */
#define BALANCE_ISSUE 1.50
#define SM_TAIL_MINOR 0.10 /* (last SM's finish - median SM's) / launch */
#define SM_TAIL_ISSUE 0.25
/* The verdict's state follows its gain (on the scale people read it): an
 * issue from this gain, minor below GAIN_MINOR, whatever the dimension's
 * own threshold said. */
#define GAIN_ISSUE 0.25
#define GAIN_MINOR 0.10
#define GAIN_TIE 0.005 /* gains closer than this are a tie */

/* What the activity spans say about one kernel, over its launches with
 * spans, weighted by each launch's span extent. */
typedef struct span_balance {
  uint64_t launches; /* with spans */
  uint64_t spans;
  double weight;
  double imbalance; /* max busy / mean busy, weighted */
  double tail;      /* (last finish - median finish) / extent, weighted */
  /* SM time busy over the launch: the union of spans per SM summed over
   * the device's SMs (those with no span count idle) / (SMs x extent),
   * weighted: the measured counterpart of the projected tail efficiency. */
  double busy_share;
  /* The launch with the most spans, for the sentences. */
  uint32_t sms;        /* SMs with spans in it */
  uint32_t busiest_sm; /* its busiest SM */
  uint32_t last_sm;    /* the SM that finished last */
  uint32_t device_sms; /* its device's SM count; 0 unknown */
  double max_busy_ns;  /* busiest SM's busy time */
  double mean_busy_ns; /* mean over its SMs */
  double tail_ns;      /* last finish - median finish */
  double extent_ns;    /* first span start (or launch start) to last end */
  uint64_t top_spans;
} span_balance;

struct mprof_diagnosis {
  const mprof_join *join;
  mprof__arena arena;
  size_t kernel_count;
  mprof_kernel_diagnosis *kernels;
  size_t note_count;
  mprof_note *notes;
  span_balance *balance; /* per kernel; NULL without spans */
  size_t trace_spans;
  mprof_throughput *throughput;
};

/* Working state of one kernel's diagnosis. */
typedef struct kernel_work {
  mprof_diagnosis *d;
  const mprof_join *join;
  const mprof_diagnose_options *opts;
  mprof_kernel_diagnosis *out;
  mprof_dimension *dims;
  double dim_share[MPROF_DIM_COUNT_];
  int sampled; /* enough samples to judge stalls */
  int roof;    /* the resource a PM counter shows saturated (diagnose_gain.c) */
  double roof_use;  /* its utilisation, 0..1 */
  int roof_sampled; /* the issue roof from PC samples' issue rate */
  int scattered;    /* accesses judged against DRAM's random-access roof */
  double raw_cost[MPROF_DIM_COUNT_]; /* costs before the gain caps */
  double sector_efficiency; /* counted (record blocks --memory); -1: not */
  const char *notes[8];
  size_t note_count;
  int tail_measured; /* the tail effect was judged from block spans */
  /* A persistent kernel: its grid is at most one block per SM of its
   * device, so its tail is in the work each block does, not the grid. */
  int persistent;
  double tail_busy; /* then: the measured SM-time busy share */
} kernel_work;

static inline double share_of(uint64_t part, uint64_t whole) {
  return whole ? (double)part / (double)whole : 0.0;
}

static inline void pct(char *buf, size_t size, double fraction) {
  mprof_format_percent(buf, size, fraction);
}

/* Metrics of a dimension, appended one at a time. */
static inline void add_metric(mprof_dimension *dim, const char *name,
                              double value, const char *unit) {
  mprof_metric *m = (mprof_metric *)dim->metrics;
  m[dim->metric_count++] = (mprof_metric){name, value, unit};
}

#define MAX_METRICS 16

static inline mprof_state judge(double value, double minor, double issue) {
  return value >= issue   ? MPROF_STATE_ISSUE
         : value >= minor ? MPROF_STATE_MINOR
                          : MPROF_STATE_OK;
}

/* judge() for a value where lower is worse (occupancy, tail efficiency). */
static inline mprof_state judge_below(double value, double minor,
                                      double issue) {
  return value < issue   ? MPROF_STATE_ISSUE
         : value < minor ? MPROF_STATE_MINOR
                         : MPROF_STATE_OK;
}

/* What limits occupancy, in a sentence: "shared memory" rather than
 * mprof_occupancy_limiter_name()'s "shared_memory". */
static inline const char *limiter_words(uint32_t limiter) {
  return limiter == MPROF_LIMIT_SHARED ? "shared memory"
                                       : mprof_occupancy_limiter_name(limiter);
}

/* diagnose.c */
/* "long_scoreboard 64%, wait 7.2%": the reasons of @p dimension by share. */
char *mprof__diagnose_reason_list(kernel_work *w, uint32_t dimension,
                                  size_t limit);
double mprof__diagnose_reason_share(const kernel_work *w, const char *reason);

/* diagnose_spans.c: the SM balance of every kernel with spans (d->balance),
 * and the two span dimensions of one kernel. */
int mprof__diagnose_make_balance(mprof_diagnosis *d);
void mprof__diagnose_judge_spans(kernel_work *w, const span_balance *b,
                                 size_t trace_spans);

/* diagnose_verdict.c: the verdict sentence of a judged kernel. */
void mprof__diagnose_make_verdict(kernel_work *w);

/* diagnose_gain.c: measured throughput and estimated gains. */
void mprof__diagnose_classify(kernel_work *w);
void mprof__diagnose_estimate_gains(kernel_work *w);
/* Each dimension's gain on the scale people read it (mprof_dimension.gain)
 * and saved_ns, from its cost; @p busy = 1 - the idle share. */
void mprof__diagnose_gain_readings(kernel_work *w, double busy);
/* The dimension of the saturated roof and the sentence for it; the roof
 * leads the verdict when no dimension has a large gain left. */
#define ROOF_HEADLINE 0.25
uint32_t mprof__diagnose_roof_dimension(const kernel_work *w);
/* "dram", "dram_sectors", "l2", "l1tex", "issue", "fma" or "tensor"; NULL
 * without a roof. */
const char *mprof__diagnose_roof_key(const kernel_work *w);
const char *mprof__diagnose_roof_text(kernel_work *w);

#endif /* MPROF_ANALYSIS_DIAGNOSE_INTERNAL_H */
