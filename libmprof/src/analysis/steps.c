/*
 * mprof — training steps of a trace (steps.h): from NVTX ranges named like
 * steps, else from the launches' repeating kernel sequence.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "analysis/steps.h"
#include "base/array.h"

long long mprof__step_number(const char *name) {
  static const char *const words[] = {"profilerstep", "train_step", "iteration",
                                      "step", "iter"};
  for (size_t i = 0; name && i < sizeof words / sizeof *words; i++) {
    size_t n = strlen(words[i]);
    if (strncasecmp(name, words[i], n) != 0)
      continue;
    const char *p = name + n;
    while (*p == ' ' || *p == '#' || *p == '_' || *p == ':' || *p == '-')
      p++;
    if (!isdigit((unsigned char)*p))
      return -1;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    return *end == '\0' && v < (1ull << 53) ? (long long)v : -1;
  }
  return -1;
}

/* ---- calls by correlation id ------------------------------------------- */

typedef struct mprof__call_key {
  uint32_t correlation;
  uint32_t index;
} call_key;

static int corr_order(const void *a, const void *b) {
  const call_key *x = (const call_key *)a, *y = (const call_key *)b;
  MPROF__ORDER_BY(correlation);
  return x->index < y->index ? -1 : x->index > y->index;
}

int mprof__call_index_build(mprof__call_index *idx, const mprof_trace *trace) {
  idx->calls = mprof_trace_api_calls(trace, &idx->count);
  idx->keys =
      (call_key *)malloc((idx->count ? idx->count : 1) * sizeof *idx->keys);
  if (!idx->keys)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < idx->count; i++)
    idx->keys[i] = (call_key){idx->calls[i].correlation_id, (uint32_t)i};
  qsort(idx->keys, idx->count, sizeof *idx->keys, corr_order);
  return MPROF_OK;
}

void mprof__call_index_free(mprof__call_index *idx) {
  free(idx->keys);
  idx->keys = NULL;
}

const mprof_api_call_record *mprof__call_of(const mprof__call_index *idx,
                                            uint32_t correlation) {
  if (!correlation)
    return NULL;
  size_t at;
  MPROF__LOWER_BOUND(at, idx->count, mid,
                     idx->keys[mid].correlation < correlation);
  return at < idx->count && idx->keys[at].correlation == correlation
             ? &idx->calls[idx->keys[at].index]
             : NULL;
}

uint32_t mprof__call_index_max(const mprof__call_index *idx) {
  return idx->count ? idx->keys[idx->count - 1].correlation : 0;
}

/* ---- the repeating pattern ---------------------------------------------- */

typedef struct issue_key {
  uint64_t issued;
  uint32_t launch;
} issue_key;

static int issue_order(const void *a, const void *b) {
  const issue_key *x = (const issue_key *)a, *y = (const issue_key *)b;
  MPROF__ORDER_BY(issued);
  return x->launch < y->launch ? -1 : x->launch > y->launch;
}

/* The smallest period p (at least 2 repeats) of the kernel sequence @p seq
 * such that 95% of its launches repeat the one p before; 0 if none. A
 * period must first repeat the last 8 launches (past any warm-up), and the
 * search gives up after PATTERN_BUDGET comparisons, so that a trace of
 * millions of launches without a pattern costs seconds at most. */
#define PATTERN_TAIL 8
#define PATTERN_BUDGET 400000000ull
static size_t pattern_period(const uint32_t *seq, size_t n) {
  uint64_t spent = 0;
  for (size_t p = 1; p <= n / 2 && spent < PATTERN_BUDGET; p++) {
    int tail = 1;
    for (size_t i = n - 1; tail && i >= p && i + PATTERN_TAIL >= n; i--)
      tail = seq[i] == seq[i - p];
    if (!tail)
      continue;
    size_t allowed = (n - p) / 20, missed = 0, i = p;
    for (; i < n && missed <= allowed; i++)
      missed += seq[i] != seq[i - p];
    spent += i - p;
    if (missed <= allowed)
      return p;
  }
  return 0;
}

int mprof__steps_from_pattern(mprof__step **out, size_t *count,
                              const mprof_trace *trace,
                              const mprof__call_index *idx) {
  size_t nl, ns;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_shape_record *shapes = mprof_trace_shapes(trace, &ns);
  *out = NULL;
  *count = 0;
  if (nl < 2)
    return MPROF_OK;
  issue_key *order = (issue_key *)malloc(nl * sizeof *order);
  uint32_t *seq = (uint32_t *)malloc(nl * sizeof *seq);
  if (!order || !seq) {
    free(order);
    free(seq);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < nl; i++) {
    const mprof_api_call_record *c =
        mprof__call_of(idx, launches[i].correlation_id);
    order[i] = (issue_key){c ? c->start : launches[i].start, (uint32_t)i};
  }
  qsort(order, nl, sizeof *order, issue_order);
  for (size_t i = 0; i < nl; i++) {
    uint32_t shape = launches[order[i].launch].shape;
    seq[i] = shape < ns ? shapes[shape].kernel : MPROF_INDEX_NONE;
  }
  size_t p = pattern_period(seq, nl);
  size_t steps = p ? nl / p : 0;
  mprof__step *s = steps ? (mprof__step *)calloc(steps, sizeof *s) : NULL;
  if (steps && !s) {
    free(order);
    free(seq);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < steps; k++) {
    const mprof_launch_record *first = &launches[order[k * p].launch];
    const mprof_api_call_record *c = mprof__call_of(idx, first->correlation_id);
    s[k].start = c ? c->start : first->start;
    s[k].thread = c ? c->thread_id : 0;
    s[k].number = k;
    if (k + 1 < steps) {
      s[k].end = order[(k + 1) * p].issued;
    } else { /* the last step: to the end of its last launch's call */
      uint64_t end = s[k].start;
      for (size_t i = k * p; i < nl; i++) {
        const mprof_launch_record *l = &launches[order[i].launch];
        const mprof_api_call_record *lc =
            mprof__call_of(idx, l->correlation_id);
        uint64_t e = lc ? lc->end : l->end;
        end = e > end ? e : end;
      }
      s[k].end = end;
    }
  }
  free(order);
  free(seq);
  *out = s;
  *count = steps;
  return MPROF_OK;
}

/* ---- NVTX step ranges --------------------------------------------------- */

static int step_order(const void *a, const void *b) {
  const mprof__step *x = (const mprof__step *)a, *y = (const mprof__step *)b;
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY(number);
  return 0;
}

int mprof__steps_from_ranges(mprof__step **out, size_t *count,
                             const mprof_trace *trace,
                             int skip_profiler_steps) {
  size_t n, capacity = 0, found = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  mprof__step *steps = NULL;
  *out = NULL;
  *count = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = mprof_trace_string(trace, ranges[i].name);
    long long number = mprof__step_number(name);
    if (number < 0 ||
        (skip_profiler_steps && strncmp(name, "ProfilerStep#", 13) == 0))
      continue;
    if (MPROF__GROW(steps, capacity, found + 1)) {
      free(steps);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    steps[found++] = (mprof__step){ranges[i].start, ranges[i].end,
                                   ranges[i].thread_id, (uint64_t)number};
  }
  size_t found_program = found;
  /* Without steps of the program's own, a capture window's repeats: the
   * producer's "mprof window #N" ranges (domain "mprof"). */
  for (size_t i = 0; i < n && !found_program; i++) {
    const char *name = mprof_trace_string(trace, ranges[i].name);
    const char *domain = mprof_trace_string(trace, ranges[i].domain);
    char *end = NULL;
    if (strncmp(name, "mprof window #", 14) != 0 || !domain ||
        strcmp(domain, "mprof") != 0)
      continue;
    unsigned long long number = strtoull(name + 14, &end, 10);
    if (!end || *end || end == name + 14)
      continue;
    if (MPROF__GROW(steps, capacity, found + 1)) {
      free(steps);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    steps[found++] = (mprof__step){ranges[i].start, ranges[i].end,
                                   ranges[i].thread_id, (uint64_t)number};
  }
  if (found > 1)
    qsort(steps, found, sizeof *steps, step_order);
  /* A number seen again (nested "step 3" ranges, two threads) keeps its
   * first range. */
  size_t kept = 0;
  for (size_t i = 0; i < found; i++) {
    int seen = 0;
    for (size_t j = kept; j-- > 0 && !seen;)
      seen = steps[j].number == steps[i].number;
    if (!seen)
      steps[kept++] = steps[i];
  }
  *out = steps;
  *count = kept;
  return MPROF_OK;
}
