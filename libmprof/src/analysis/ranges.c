/*
 * mprof — GPU time per innermost named NVTX range (ranges.h).
 *
 * Per host thread, the API calls and the ranges are swept in time order
 * with the set of ranges open at each call; the innermost is the open
 * named range that started last. Launches and memory operations reach
 * their call through the correlation id.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/ranges.h"
#include "mprof/status.h"

struct mprof_range_times {
  mprof_range_time *rows; /* sorted for the reader */
  size_t count;
  mprof_range_totals totals;
  char *path; /* the trace's, for reports */
  const char *missing;
};

/* ---- sorting helpers ---------------------------------------------------- */

typedef struct timed_ref {
  uint32_t thread;
  uint64_t start;
  uint32_t index;
} timed_ref;

static int by_thread_start(const void *a, const void *b) {
  const timed_ref *x = (const timed_ref *)a, *y = (const timed_ref *)b;
  MPROF__ORDER_BY(thread);
  MPROF__ORDER_BY(start);
  return x->index < y->index ? -1 : x->index > y->index;
}

static int by_time(const void *a, const void *b) {
  const mprof_range_time *x = (const mprof_range_time *)a;
  const mprof_range_time *y = (const mprof_range_time *)b;
  MPROF__ORDER_BY_DESC(kernel_ns);
  MPROF__ORDER_BY_DESC(copy_ns);
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->domain, y->domain);
}

/* ---- groups: one per (domain, name) -------------------------------------- */

typedef struct groups {
  mprof_range_time *rows;
  size_t count, capacity;
  mprof__map index;
} groups;

static uint64_t group_hash(const char *domain, const char *name) {
  return mprof__hash64(domain, strlen(domain)) * 31u ^
         mprof__hash64(name, strlen(name));
}

/* The group of (@p domain, @p name); MPROF__MAP_NONE when memory ran out. */
static uint32_t group_of(groups *g, const char *domain, const char *name) {
  uint64_t hash = group_hash(domain, name);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&g->index, hash, &cursor)) != MPROF__MAP_NONE)
    if (strcmp(g->rows[found].name, name) == 0 &&
        strcmp(g->rows[found].domain, domain) == 0)
      return found;
  if (MPROF__GROW(g->rows, g->capacity, g->count + 1) ||
      mprof__map_add(&g->index, hash, (uint32_t)g->count) != 0)
    return MPROF__MAP_NONE;
  mprof_range_time *row = &g->rows[g->count];
  memset(row, 0, sizeof *row);
  row->name = name; /* the trace's strings for now; copied at the end */
  row->domain = domain;
  return (uint32_t)g->count++;
}

/* ---- the sweep ----------------------------------------------------------- */

/* For each API call, the group of the innermost named range open on its
 * thread when it was entered (MPROF__MAP_NONE: none). */
static int innermost_ranges(uint32_t *call_group, const mprof_trace *trace,
                            const uint32_t *range_group) {
  size_t nr = 0, nc = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &nr);
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  timed_ref *rs = (timed_ref *)malloc((nr ? nr : 1) * sizeof *rs);
  timed_ref *cs = (timed_ref *)malloc((nc ? nc : 1) * sizeof *cs);
  uint32_t *open = (uint32_t *)malloc((nr ? nr : 1) * sizeof *open);
  if (!rs || !cs || !open) {
    free(rs);
    free(cs);
    free(open);
    return MPROF_ENOMEM;
  }
  for (size_t i = 0; i < nr; i++)
    rs[i] = (timed_ref){ranges[i].thread_id, ranges[i].start, (uint32_t)i};
  for (size_t i = 0; i < nc; i++)
    cs[i] = (timed_ref){calls[i].thread_id, calls[i].start, (uint32_t)i};
  qsort(rs, nr, sizeof *rs, by_thread_start);
  qsort(cs, nc, sizeof *cs, by_thread_start);
  size_t r = 0, open_count = 0;
  uint32_t thread = 0;
  for (size_t c = 0; c < nc; c++) {
    call_group[cs[c].index] = MPROF__MAP_NONE;
    if (c == 0 || cs[c].thread != thread) {
      thread = cs[c].thread;
      open_count = 0;
      while (r < nr && rs[r].thread < thread)
        r++;
    }
    uint64_t t = cs[c].start;
    for (; r < nr && rs[r].thread == thread && rs[r].start <= t; r++) {
      const mprof_range_record *rec = &ranges[rs[r].index];
      /* Unnamed ranges and instantaneous markers hold no calls. */
      if (rec->end > rec->start && range_group[rs[r].index] != MPROF__MAP_NONE)
        open[open_count++] = rs[r].index;
    }
    uint32_t best = MPROF__MAP_NONE;
    for (size_t o = 0; o < open_count;) {
      const mprof_range_record *rec = &ranges[open[o]];
      if (rec->end <= t) { /* closed before this call */
        open[o] = open[--open_count];
        continue;
      }
      if (best == MPROF__MAP_NONE || rec->start > ranges[best].start ||
          (rec->start == ranges[best].start &&
           (rec->depth > ranges[best].depth ||
            (rec->depth == ranges[best].depth && open[o] > best))))
        best = open[o];
      o++;
    }
    if (best != MPROF__MAP_NONE)
      call_group[cs[c].index] = range_group[best];
  }
  free(rs);
  free(cs);
  free(open);
  return 0;
}

/* ---- building ------------------------------------------------------------ */

/* The call that stands for @p correlation in @p by_correlation, or
 * MPROF__MAP_NONE. */
static uint32_t call_of(const mprof__map *by_correlation,
                        const mprof_api_call_record *calls,
                        uint32_t correlation) {
  uint64_t hash = mprof__hash64(&correlation, 4);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(by_correlation, hash, &cursor)) !=
         MPROF__MAP_NONE)
    if (calls[found].correlation_id == correlation)
      return found;
  return MPROF__MAP_NONE;
}

static int build(mprof_range_times *out, const mprof_trace *trace) {
  size_t nr = 0, nc = 0, nl = 0, nm = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &nr);
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *memops = mprof_trace_memops(trace, &nm);
  out->totals.range_records = nr;
  out->totals.api_calls = nc;
  if (nr == 0)
    out->missing = "the trace has no NVTX ranges: annotate the program "
                   "(torch.cuda.nvtx.range, nvtxRangePush) and record again";
  else if (nc == 0)
    out->missing = "the trace has no API calls (recorded before mprof kept "
                   "them, or with MPROF_NO_API_CALLS=1): launches cannot be "
                   "tied to ranges; record again";

  groups g;
  memset(&g, 0, sizeof g);
  uint32_t *range_group = (uint32_t *)malloc((nr ? nr : 1) * sizeof(uint32_t));
  uint32_t *call_group = (uint32_t *)malloc((nc ? nc : 1) * sizeof(uint32_t));
  mprof__map by_correlation;
  memset(&by_correlation, 0, sizeof by_correlation);
  int rc = range_group && call_group ? 0 : MPROF_ENOMEM;
  for (size_t i = 0; i < nr && !rc; i++) {
    const char *name = mprof_trace_string(trace, ranges[i].name);
    const char *domain = mprof_trace_string(trace, ranges[i].domain);
    range_group[i] = MPROF__MAP_NONE;
    if (!name || !*name)
      continue;
    uint32_t group = group_of(&g, domain ? domain : "", name);
    if (group == MPROF__MAP_NONE) {
      rc = MPROF_ENOMEM;
      break;
    }
    range_group[i] = group;
    g.rows[group].instances++;
    g.rows[group].host_ns += ranges[i].end - ranges[i].start;
    if (ranges[i].flags & MPROF_RANGE_FLAG_OPEN)
      g.rows[group].open_instances++;
  }
  if (!rc)
    rc = innermost_ranges(call_group, trace, range_group);
  if (!rc)
    rc = mprof__map_reserve(&by_correlation, nc);
  /* The first call with a correlation id stands for it. */
  for (size_t i = 0; i < nc && !rc; i++) {
    uint32_t correlation = calls[i].correlation_id;
    if (call_of(&by_correlation, calls, correlation) == MPROF__MAP_NONE)
      rc = mprof__map_add(&by_correlation, mprof__hash64(&correlation, 4),
                          (uint32_t)i);
  }
  for (size_t i = 0; i < nl + nm && !rc; i++) {
    int launch = i < nl;
    uint64_t start = launch ? launches[i].start : memops[i - nl].start;
    uint64_t end = launch ? launches[i].end : memops[i - nl].end;
    uint32_t correlation =
        launch ? launches[i].correlation_id : memops[i - nl].correlation_id;
    uint64_t ns = end > start ? end - start : 0;
    uint32_t call = correlation ? call_of(&by_correlation, calls, correlation)
                                : MPROF__MAP_NONE;
    uint32_t group =
        call == MPROF__MAP_NONE ? MPROF__MAP_NONE : call_group[call];
    if (launch) {
      out->totals.launches++;
      out->totals.kernel_ns += ns;
      if (call == MPROF__MAP_NONE) {
        out->totals.unmatched_launches++;
        out->totals.unmatched_ns += ns;
      } else if (group == MPROF__MAP_NONE) {
        out->totals.outside_launches++;
        out->totals.outside_ns += ns;
      } else {
        out->totals.in_ranges_launches++;
        out->totals.in_ranges_ns += ns;
        g.rows[group].launches++;
        g.rows[group].kernel_ns += ns;
      }
    } else if (group != MPROF__MAP_NONE) {
      g.rows[group].copies++;
      g.rows[group].copy_ns += ns;
    }
  }
  free(range_group);
  free(call_group);
  mprof__map_free(&by_correlation);
  mprof__map_free(&g.index);
  if (rc) {
    free(g.rows);
    return rc;
  }
  /* The rows own their names: the result outlives the trace. */
  for (size_t i = 0; i < g.count; i++) {
    mprof_range_time *row = &g.rows[i];
    row->share = out->totals.kernel_ns
                     ? (double)row->kernel_ns / (double)out->totals.kernel_ns
                     : 0.0;
    size_t a = strlen(row->name) + 1, b = strlen(row->domain) + 1;
    char *copy = (char *)malloc(a + b);
    if (!copy) {
      for (size_t j = 0; j < i; j++)
        free((void *)g.rows[j].name);
      free(g.rows);
      return MPROF_ENOMEM;
    }
    memcpy(copy, row->name, a);
    memcpy(copy + a, row->domain, b);
    row->name = copy;
    row->domain = copy + a;
  }
  if (g.count) /* qsort(NULL, 0) is undefined (UBSan) */
    qsort(g.rows, g.count, sizeof *g.rows, by_time);
  out->rows = g.rows;
  out->count = g.count;
  return 0;
}

int mprof_range_times_build(mprof_range_times **out, const mprof_trace *trace) {
  if (!out || !trace)
    return mprof__error_set(MPROF_EINVAL, "mprof_range_times_build: NULL");
  *out = NULL;
  mprof_range_times *t = (mprof_range_times *)calloc(1, sizeof *t);
  const char *path = mprof_trace_path(trace);
  if (t)
    t->path = strdup(path ? path : "");
  if (!t || !t->path) {
    free(t);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  int rc = build(t, trace);
  if (rc) {
    mprof_range_times_free(t);
    return mprof__error_set(rc, "out of memory joining ranges to launches");
  }
  *out = t;
  return 0;
}

void mprof_range_times_free(mprof_range_times *times) {
  if (!times)
    return;
  for (size_t i = 0; i < times->count; i++)
    free((void *)times->rows[i].name); /* one block with the domain */
  free(times->rows);
  free(times->path);
  free(times);
}

size_t mprof_range_times_count(const mprof_range_times *times) {
  return times ? times->count : 0;
}

const mprof_range_time *mprof_range_times_get(const mprof_range_times *times,
                                              size_t index) {
  return times && index < times->count ? &times->rows[index] : NULL;
}

const mprof_range_totals *
mprof_range_times_totals(const mprof_range_times *times) {
  return times ? &times->totals : NULL;
}

const char *mprof_range_times_missing(const mprof_range_times *times) {
  return times ? times->missing : NULL;
}

/* For the report writer: the trace the ranges came from. */
const char *mprof__range_times_path(const mprof_range_times *times) {
  return times ? times->path : "";
}
