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
#include "mprof/error.h"
#include "mprof/ranges.h"
#include "mprof/sass.h"
#include "mprof/status.h"

typedef struct range_kernels {
  mprof_range_kernel *items;
  size_t count, capacity;
} range_kernels;

struct mprof_range_times {
  mprof_range_time *rows; /* in tree order for the reader */
  range_kernels *kernels; /* by row */
  size_t count;
  mprof_range_totals totals;
  char *path; /* the trace's, for reports */
  const char *missing;
};

#define NONE MPROF__MAP_NONE

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

static int by_start(const void *a, const void *b) {
  const timed_ref *x = (const timed_ref *)a, *y = (const timed_ref *)b;
  MPROF__ORDER_BY(start);
  return x->index < y->index ? -1 : x->index > y->index;
}

/* ---- groups: one per (domain, name) -------------------------------------- */

typedef struct group {
  mprof_range_time row;
  uint32_t parent; /* group, NONE at the top */
  uint64_t stamp;  /* the last operation counted inclusively, + 1 */
  range_kernels kernels;
} group;

typedef struct groups {
  group *rows;
  size_t count, capacity;
  mprof__map index;
} groups;

static uint64_t group_hash(const char *domain, const char *name) {
  return mprof__hash64(domain, strlen(domain)) * 31u ^
         mprof__hash64(name, strlen(name));
}

/* The group of (@p domain, @p name); NONE when memory ran out. */
static uint32_t group_of(groups *g, const char *domain, const char *name) {
  uint64_t hash = group_hash(domain, name);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&g->index, hash, &cursor)) != NONE)
    if (strcmp(g->rows[found].row.name, name) == 0 &&
        strcmp(g->rows[found].row.domain, domain) == 0)
      return found;
  if (MPROF__GROW(g->rows, g->capacity, g->count + 1) ||
      mprof__map_add(&g->index, hash, (uint32_t)g->count) != 0)
    return NONE;
  group *row = &g->rows[g->count];
  memset(row, 0, sizeof *row);
  row->row.name = name; /* the trace's strings for now; copied at the end */
  row->row.domain = domain;
  row->parent = NONE;
  return (uint32_t)g->count++;
}

/* ---- the sweeps ---------------------------------------------------------- */

/* Whether range @p a is more inner than range @p b (NONE: any is). */
static int inner(const mprof_range_record *ranges, uint32_t a, uint32_t b) {
  if (b == NONE)
    return 1;
  const mprof_range_record *x = &ranges[a], *y = &ranges[b];
  if (x->start != y->start)
    return x->start > y->start;
  if (x->depth != y->depth)
    return x->depth > y->depth;
  return a > b;
}

/* Whether range record @p r holds calls: named and not instantaneous. */
static int holds(const mprof_range_record *r, uint32_t named_group) {
  return r->end > r->start && named_group != NONE;
}

/* For each API call, the innermost named range open on its thread when it
 * was entered (NONE: none). */
static int innermost_ranges(uint32_t *call_range, const mprof_trace *trace,
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
    call_range[cs[c].index] = NONE;
    if (c == 0 || cs[c].thread != thread) {
      thread = cs[c].thread;
      open_count = 0;
      while (r < nr && rs[r].thread < thread)
        r++;
    }
    uint64_t t = cs[c].start;
    for (; r < nr && rs[r].thread == thread && rs[r].start <= t; r++)
      if (holds(&ranges[rs[r].index], range_group[rs[r].index]))
        open[open_count++] = rs[r].index;
    uint32_t best = NONE;
    for (size_t o = 0; o < open_count;) {
      if (ranges[open[o]].end <= t) { /* closed before this call */
        open[o] = open[--open_count];
        continue;
      }
      if (inner(ranges, open[o], best))
        best = open[o];
      o++;
    }
    call_range[cs[c].index] = best;
  }
  free(rs);
  free(cs);
  free(open);
  return 0;
}

/* Each range's parent: the innermost named range of its thread that holds
 * it whole (NONE: none). */
static int range_parents(uint32_t *parent, const mprof_range_record *ranges,
                         size_t nr, const uint32_t *range_group) {
  timed_ref *rs = (timed_ref *)malloc((nr ? nr : 1) * sizeof *rs);
  uint32_t *stack = (uint32_t *)malloc((nr ? nr : 1) * sizeof *stack);
  if (!rs || !stack) {
    free(rs);
    free(stack);
    return MPROF_ENOMEM;
  }
  size_t n = 0;
  for (size_t i = 0; i < nr; i++) {
    parent[i] = NONE;
    if (holds(&ranges[i], range_group[i]))
      rs[n++] = (timed_ref){ranges[i].thread_id, ranges[i].start, (uint32_t)i};
  }
  qsort(rs, n, sizeof *rs, by_thread_start);
  size_t depth = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && rs[i].thread != rs[i - 1].thread)
      depth = 0;
    const mprof_range_record *r = &ranges[rs[i].index];
    /* Pop what does not hold it whole; an equal start nests the deeper or
     * later one inside. */
    while (depth && ranges[stack[depth - 1]].end < r->end)
      depth--;
    while (depth && ranges[stack[depth - 1]].start == r->start &&
           !inner(ranges, rs[i].index, stack[depth - 1]))
      depth--;
    parent[rs[i].index] = depth ? stack[depth - 1] : NONE;
    stack[depth++] = rs[i].index;
  }
  free(rs);
  free(stack);
  return 0;
}

/* A host thread's process, known from the operations its calls issued. */
typedef struct thread_process {
  uint32_t thread, process;
} thread_process;

static int by_thread(const void *a, const void *b) {
  const thread_process *x = (const thread_process *)a,
                       *y = (const thread_process *)b;
  MPROF__ORDER_BY(thread);
  return 0;
}

static uint32_t process_of_thread(const thread_process *map, size_t n,
                                  uint32_t thread) {
  thread_process key = {thread, 0};
  const thread_process *found =
      (const thread_process *)bsearch(&key, map, n, sizeof *map, by_thread);
  return found ? found->process : NONE;
}

/* An operation whose call's thread had no range open: its call's start and
 * the process of its stream. */
typedef struct orphan {
  uint64_t start;
  uint32_t process;
  uint32_t op;
} orphan;

static int by_orphan_start(const void *a, const void *b) {
  const orphan *x = (const orphan *)a, *y = (const orphan *)b;
  MPROF__ORDER_BY(start);
  return x->op < y->op ? -1 : x->op > y->op;
}

/* For each orphan, the innermost named range open on any thread of its
 * process at its call (NONE: none), into @p op_range. */
static int borrow_ranges(uint32_t *op_range, orphan *orphans, size_t count,
                         const mprof_trace *trace, const uint32_t *range_group,
                         const thread_process *map, size_t threads) {
  size_t nr = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &nr);
  int one_process = mprof_trace_process_count(trace) <= 1;
  timed_ref *rs = (timed_ref *)malloc((nr ? nr : 1) * sizeof *rs);
  uint32_t *open = (uint32_t *)malloc((nr ? nr : 1) * sizeof *open);
  if (!rs || !open) {
    free(rs);
    free(open);
    return MPROF_ENOMEM;
  }
  size_t n = 0;
  for (size_t i = 0; i < nr; i++)
    if (holds(&ranges[i], range_group[i]))
      rs[n++] = (timed_ref){0, ranges[i].start, (uint32_t)i};
  qsort(rs, n, sizeof *rs, by_start);
  if (count)
    qsort(orphans, count, sizeof *orphans, by_orphan_start);
  size_t r = 0, open_count = 0;
  for (size_t o = 0; o < count; o++) {
    uint64_t t = orphans[o].start;
    for (; r < n && rs[r].start <= t; r++)
      open[open_count++] = rs[r].index;
    uint32_t best = NONE;
    for (size_t i = 0; i < open_count;) {
      const mprof_range_record *rec = &ranges[open[i]];
      if (rec->end <= t) {
        open[i] = open[--open_count];
        continue;
      }
      if ((one_process || (orphans[o].process != NONE &&
                           process_of_thread(map, threads, rec->thread_id) ==
                               orphans[o].process)) &&
          inner(ranges, open[i], best))
        best = open[i];
      i++;
    }
    op_range[orphans[o].op] = best;
  }
  free(rs);
  free(open);
  return 0;
}

/* ---- building ------------------------------------------------------------ */

/* The call that stands for @p correlation in @p by_correlation, or NONE. */
static uint32_t call_of(const mprof__map *by_correlation,
                        const mprof_api_call_record *calls,
                        uint32_t correlation) {
  uint64_t hash = mprof__hash64(&correlation, 4);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(by_correlation, hash, &cursor)) != NONE)
    if (calls[found].correlation_id == correlation)
      return found;
  return NONE;
}

/* Count @p ns of kernel @p mangled (@p name) into @p k. */
static int kernel_add(range_kernels *k, const char *name, const char *mangled,
                      uint64_t ns) {
  for (size_t i = 0; i < k->count; i++)
    if (strcmp(k->items[i].mangled, mangled) == 0) {
      k->items[i].launches++;
      k->items[i].kernel_ns += ns;
      return 0;
    }
  if (MPROF__GROW(k->items, k->capacity, k->count + 1))
    return MPROF_ENOMEM;
  mprof_range_kernel *item = &k->items[k->count++];
  memset(item, 0, sizeof *item);
  item->name = name; /* the trace's strings for now; copied at the end */
  item->mangled = mangled;
  item->launches = 1;
  item->kernel_ns = ns;
  return 0;
}

static int by_kernel_time(const void *a, const void *b) {
  const mprof_range_kernel *x = (const mprof_range_kernel *)a,
                           *y = (const mprof_range_kernel *)b;
  MPROF__ORDER_BY_DESC(kernel_ns);
  return strcmp(x->mangled, y->mangled);
}

/* The parent group of each group: the one that holds every one of its
 * instances; NONE when they sit in different ranges (a "forward" in "setup"
 * and in "step 0") or at the top, so the tree never says more than the
 * trace. A range inside one of its own name (recursion) counts its
 * outermost's parent. */
static void group_parents(groups *g, const uint32_t *parent,
                          const uint32_t *range_group, size_t nr) {
  enum { UNSEEN = 0xFFFFFFFEu };
  for (size_t i = 0; i < g->count; i++)
    g->rows[i].parent = UNSEEN;
  for (size_t i = 0; i < nr; i++) {
    uint32_t at = range_group[i];
    if (at == NONE)
      continue;
    uint32_t up = parent[i];
    while (up != NONE && range_group[up] == at)
      up = parent[up];
    uint32_t pg = up == NONE ? NONE : range_group[up];
    group *row = &g->rows[at];
    if (row->parent == UNSEEN)
      row->parent = pg;
    else if (row->parent != pg)
      row->parent = NONE;
  }
  for (size_t i = 0; i < g->count; i++)
    if (g->rows[i].parent == UNSEEN)
      g->rows[i].parent = NONE;
  /* A circle (A always in B, B always in A: overlapping ranges of two
   * threads) is cut where it closes. */
  for (size_t i = 0; i < g->count; i++) {
    size_t steps = 0;
    for (uint32_t p = g->rows[i].parent; p != NONE; p = g->rows[p].parent)
      if (++steps > g->count || p == i) {
        g->rows[i].parent = NONE;
        break;
      }
  }
}

static int by_inclusive(const void *a, const void *b) {
  const group *x = *(const group *const *)a, *y = *(const group *const *)b;
  if (x->row.inclusive_ns != y->row.inclusive_ns)
    return x->row.inclusive_ns > y->row.inclusive_ns ? -1 : 1;
  if (x->row.inclusive_copy_ns != y->row.inclusive_copy_ns)
    return x->row.inclusive_copy_ns > y->row.inclusive_copy_ns ? -1 : 1;
  int c = strcmp(x->row.name, y->row.name);
  return c ? c : strcmp(x->row.domain, y->row.domain);
}

/* The groups in tree order, parent first, siblings by inclusive time. */
static int tree_order(uint32_t *order, const groups *g) {
  size_t n = g->count ? g->count : 1;
  const group **sorted = (const group **)malloc(n * sizeof *sorted);
  uint32_t *stack = (uint32_t *)malloc(n * sizeof *stack);
  if (!sorted || !stack) {
    free(sorted);
    free(stack);
    return MPROF_ENOMEM;
  }
  for (size_t i = 0; i < g->count; i++)
    sorted[i] = &g->rows[i];
  if (g->count)
    qsort(sorted, g->count, sizeof *sorted, by_inclusive);
  /* Depth first: push each group's children in reverse order. */
  size_t placed = 0, top = 0;
  for (size_t i = g->count; i-- > 0;)
    if (sorted[i]->parent == NONE)
      stack[top++] = (uint32_t)(sorted[i] - g->rows);
  while (top) {
    uint32_t at = stack[--top];
    order[placed++] = at;
    for (size_t i = g->count; i-- > 0;)
      if (sorted[i]->parent == at)
        stack[top++] = (uint32_t)(sorted[i] - g->rows);
  }
  free(sorted);
  free(stack);
  return placed == g->count ? 0 : MPROF_EINVAL;
}

static int build(mprof_range_times *out, const mprof_trace *trace) {
  size_t nr = 0, nc = 0, nl = 0, nm = 0, nsh = 0, nk = 0;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &nr);
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *memops = mprof_trace_memops(trace, &nm);
  const mprof_shape_record *shapes = mprof_trace_shapes(trace, &nsh);
  const mprof_kernel_record *kernels = mprof_trace_kernels(trace, &nk);
  size_t nops = nl + nm;
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
  uint32_t *parent = (uint32_t *)malloc((nr ? nr : 1) * sizeof(uint32_t));
  uint32_t *call_range = (uint32_t *)malloc((nc ? nc : 1) * sizeof(uint32_t));
  uint32_t *op_call = (uint32_t *)malloc((nops ? nops : 1) * sizeof(uint32_t));
  uint32_t *op_range = (uint32_t *)malloc((nops ? nops : 1) * sizeof(uint32_t));
  orphan *orphans = (orphan *)malloc((nops ? nops : 1) * sizeof *orphans);
  thread_process *threads =
      (thread_process *)malloc((nops ? nops : 1) * sizeof *threads);
  uint32_t *order = NULL;
  mprof__map by_correlation;
  memset(&by_correlation, 0, sizeof by_correlation);
  int rc = range_group && parent && call_range && op_call && op_range &&
                   orphans && threads
               ? 0
               : MPROF_ENOMEM;
  for (size_t i = 0; i < nr && !rc; i++) {
    const char *name = mprof_trace_string(trace, ranges[i].name);
    const char *domain = mprof_trace_string(trace, ranges[i].domain);
    range_group[i] = NONE;
    /* The producer's own ranges (a capture window's pieces, domain
     * "mprof") are not the program's: no launch is theirs. */
    if (!name || !*name || (domain && strcmp(domain, "mprof") == 0))
      continue;
    uint32_t at = group_of(&g, domain ? domain : "", name);
    if (at == NONE) {
      rc = MPROF_ENOMEM;
      break;
    }
    range_group[i] = at;
    g.rows[at].row.instances++;
    g.rows[at].row.host_ns += ranges[i].end - ranges[i].start;
    if (ranges[i].flags & MPROF_RANGE_FLAG_OPEN)
      g.rows[at].row.open_instances++;
  }
  if (!rc)
    rc = innermost_ranges(call_range, trace, range_group);
  if (!rc)
    rc = range_parents(parent, ranges, nr, range_group);
  if (!rc)
    rc = mprof__map_reserve(&by_correlation, nc);
  /* The first call with a correlation id stands for it. */
  for (size_t i = 0; i < nc && !rc; i++) {
    uint32_t correlation = calls[i].correlation_id;
    if (call_of(&by_correlation, calls, correlation) == NONE)
      rc = mprof__map_add(&by_correlation, mprof__hash64(&correlation, 4),
                          (uint32_t)i);
  }
  /* Each operation's call and range; the threads' processes; the
   * operations whose thread had no range open. */
  size_t orphan_count = 0, thread_count = 0;
  for (size_t i = 0; i < nops && !rc; i++) {
    int launch = i < nl;
    uint32_t correlation =
        launch ? launches[i].correlation_id : memops[i - nl].correlation_id;
    uint32_t stream = launch ? launches[i].stream : memops[i - nl].stream;
    uint32_t call =
        correlation ? call_of(&by_correlation, calls, correlation) : NONE;
    op_call[i] = call;
    op_range[i] = call == NONE ? NONE : call_range[call];
    if (call == NONE)
      continue;
    uint32_t process = mprof_trace_stream_process(trace, stream);
    threads[thread_count++] = (thread_process){calls[call].thread_id, process};
    if (op_range[i] == NONE)
      orphans[orphan_count++] =
          (orphan){calls[call].start, process, (uint32_t)i};
  }
  if (!rc && thread_count) {
    qsort(threads, thread_count, sizeof *threads, by_thread);
    size_t unique = 0; /* a thread's first process (qsort keeps any) */
    for (size_t i = 0; i < thread_count; i++)
      if (!unique || threads[unique - 1].thread != threads[i].thread)
        threads[unique++] = threads[i];
    thread_count = unique;
  }
  if (!rc)
    rc = borrow_ranges(op_range, orphans, orphan_count, trace, range_group,
                       threads, thread_count);
  for (size_t i = 0; i < nops && !rc; i++) {
    int launch = i < nl;
    uint64_t start = launch ? launches[i].start : memops[i - nl].start;
    uint64_t end = launch ? launches[i].end : memops[i - nl].end;
    uint64_t ns = end > start ? end - start : 0;
    uint32_t call = op_call[i], range = op_range[i];
    uint32_t at = range == NONE ? NONE : range_group[range];
    int borrowed = at != NONE && call_range[call] == NONE;
    if (launch) {
      out->totals.launches++;
      out->totals.kernel_ns += ns;
      if (call == NONE) {
        out->totals.unmatched_launches++;
        out->totals.unmatched_ns += ns;
      } else if (at == NONE) {
        out->totals.outside_launches++;
        out->totals.outside_ns += ns;
      } else {
        out->totals.in_ranges_launches++;
        out->totals.in_ranges_ns += ns;
        out->totals.borrowed_launches += (uint64_t)borrowed;
        out->totals.borrowed_ns += borrowed ? ns : 0;
        group *row = &g.rows[at];
        row->row.launches++;
        row->row.kernel_ns += ns;
        row->row.borrowed_launches += (uint64_t)borrowed;
        const mprof_kernel_record *k =
            launches[i].shape < nsh && shapes[launches[i].shape].kernel < nk
                ? &kernels[shapes[launches[i].shape].kernel]
                : NULL;
        const char *mangled =
            k ? mprof_trace_string(trace, k->mangled_name) : NULL;
        const char *demangled =
            k ? mprof_trace_string(trace, k->demangled_name) : NULL;
        if (!mangled)
          mangled = "";
        rc = kernel_add(&row->kernels, demangled ? demangled : "", mangled, ns);
      }
    } else if (at != NONE) {
      g.rows[at].row.copies++;
      g.rows[at].row.copy_ns += ns;
    }
    /* Inclusive: this range and every one holding it, each name once. */
    for (uint32_t r = range; r != NONE && !rc; r = parent[r]) {
      group *row = &g.rows[range_group[r]];
      if (row->stamp == i + 1)
        continue;
      row->stamp = i + 1;
      if (launch) {
        row->row.inclusive_launches++;
        row->row.inclusive_ns += ns;
      } else {
        row->row.inclusive_copies++;
        row->row.inclusive_copy_ns += ns;
      }
    }
  }
  if (!rc)
    group_parents(&g, parent, range_group, nr);
  order = rc ? NULL : (uint32_t *)malloc((g.count ? g.count : 1) * 4);
  if (!rc && !order)
    rc = MPROF_ENOMEM;
  if (!rc)
    rc = tree_order(order, &g);
  free(range_group);
  free(parent);
  free(call_range);
  free(op_call);
  free(op_range);
  free(orphans);
  free(threads);
  mprof__map_free(&by_correlation);
  mprof__map_free(&g.index);
  out->rows =
      (mprof_range_time *)calloc(g.count ? g.count : 1, sizeof *out->rows);
  out->kernels =
      (range_kernels *)calloc(g.count ? g.count : 1, sizeof *out->kernels);
  if (!rc && (!out->rows || !out->kernels))
    rc = MPROF_ENOMEM;
  /* The rows own their names: the result outlives the trace. Each row's
   * strings are one block: name, domain, parent, parent's domain. */
  uint32_t *position = NULL;
  if (!rc) {
    position = (uint32_t *)malloc((g.count ? g.count : 1) * 4);
    if (!position)
      rc = MPROF_ENOMEM;
    for (size_t i = 0; position && i < g.count; i++)
      position[order[i]] = (uint32_t)i;
  }
  for (size_t i = 0; i < g.count && !rc; i++) {
    group *src = &g.rows[order[i]];
    mprof_range_time *row = &out->rows[i];
    *row = src->row;
    const group *up = src->parent == NONE ? NULL : &g.rows[src->parent];
    row->share = out->totals.kernel_ns
                     ? (double)row->kernel_ns / (double)out->totals.kernel_ns
                     : 0.0;
    row->inclusive_share =
        out->totals.kernel_ns
            ? (double)row->inclusive_ns / (double)out->totals.kernel_ns
            : 0.0;
    row->depth = up ? out->rows[position[src->parent]].depth + 1 : 0;
    size_t a = strlen(row->name) + 1, b = strlen(row->domain) + 1;
    size_t c = up ? strlen(up->row.name) + 1 : 0;
    size_t d = up ? strlen(up->row.domain) + 1 : 0;
    char *copy = (char *)malloc(a + b + c + d);
    if (!copy) {
      row->name = NULL;
      rc = MPROF_ENOMEM;
      break;
    }
    memcpy(copy, row->name, a);
    memcpy(copy + a, row->domain, b);
    row->name = copy;
    row->domain = copy + a;
    row->parent = NULL;
    row->parent_domain = NULL;
    if (up) {
      memcpy(copy + a + b, up->row.name, c);
      memcpy(copy + a + b + c, up->row.domain, d);
      row->parent = copy + a + b;
      row->parent_domain = copy + a + b + c;
    }
    out->count = i + 1;
    /* Its kernels, by time, owning their names. */
    range_kernels *k = &out->kernels[i];
    *k = src->kernels;
    memset(&src->kernels, 0, sizeof src->kernels);
    if (k->count)
      qsort(k->items, k->count, sizeof *k->items, by_kernel_time);
    for (size_t j = 0; j < k->count; j++) {
      mprof_range_kernel *item = &k->items[j];
      /* A trace without demangled names: demangled here, as the join does. */
      char *demangled = NULL;
      if (!*item->name && strncmp(item->mangled, "_Z", 2) == 0 &&
          (mprof_sass_demangle(&demangled, item->mangled) != 0 || !demangled))
        mprof_error_clear();
      const char *name =
          demangled ? demangled : (*item->name ? item->name : item->mangled);
      size_t x = strlen(name) + 1, y = strlen(item->mangled) + 1;
      char *names = (char *)malloc(x + y);
      if (!names) {
        free(demangled);
        k->count = j; /* the rest still point into the trace */
        rc = MPROF_ENOMEM;
        break;
      }
      memcpy(names, name, x);
      free(demangled);
      memcpy(names + x, item->mangled, y);
      item->name = names;
      item->mangled = names + x;
    }
  }
  /* Parents come before their children, so a child's depth was known. */
  for (size_t i = 0; i < g.count; i++)
    free(g.rows[i].kernels.items);
  free(position);
  free(order);
  free(g.rows);
  return rc;
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
  for (size_t i = 0; i < times->count; i++) {
    free((void *)times->rows[i].name); /* one block with the others */
    for (size_t j = 0; times->kernels && j < times->kernels[i].count; j++)
      free((void *)times->kernels[i].items[j].name); /* and the mangled */
    if (times->kernels)
      free(times->kernels[i].items);
  }
  free(times->kernels);
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

size_t mprof_range_times_kernel_count(const mprof_range_times *times,
                                      size_t range) {
  return times && range < times->count ? times->kernels[range].count : 0;
}

const mprof_range_kernel *
mprof_range_times_kernel(const mprof_range_times *times, size_t range,
                         size_t index) {
  if (!times || range >= times->count || index >= times->kernels[range].count)
    return NULL;
  return &times->kernels[range].items[index];
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
