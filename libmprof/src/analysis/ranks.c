/*
 * mprof — the cross-rank report (mprof/ranks.h): a table per rank, built
 * from its trace alone, saved and loaded as bytes, and the reduce of the
 * tables into stragglers with a diff of each against the median rank.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/join.h"
#include "mprof/names.h"
#include "mprof/ranks.h"
#include "mprof/units.h"
#include "analysis/ranks_internal.h"
#include "analysis/steps.h"
#include "base/array.h"

const char *mprof_step_source_name(uint32_t source) {
  static const char *const names[] = {"none", "nvtx", "pattern"};
  return source < 3 ? names[source] : "";
}

/* ---- the table's strings ------------------------------------------------- */

/* Offset of @p text in the table's string pool (offset 0 is ""). */
static int pool_add(mprof_rank_table *t, size_t *capacity, const char *text,
                    uint64_t *offset) {
  size_t n = strlen(text ? text : "") + 1;
  if (n == 1) {
    *offset = 0;
    return MPROF_OK;
  }
  if (MPROF__GROW(t->strings, *capacity, t->strings_size + n))
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  memcpy(t->strings + t->strings_size, text, n);
  *offset = t->strings_size;
  t->strings_size += n;
  return MPROF_OK;
}

const char *mprof__rank_table_string(const mprof_rank_table *t,
                                     uint64_t offset) {
  return offset < t->strings_size ? t->strings + offset : "";
}

void mprof_rank_table_free(mprof_rank_table *table) {
  if (!table)
    return;
  free(table->strings);
  free(table->steps);
  free(table->kernels);
  free(table->cells);
  free(table);
}

/* ---- building a table from a trace --------------------------------------- */

typedef struct interval {
  uint64_t start, end;
} interval;

static int interval_order(const void *a, const void *b) {
  const interval *x = (const interval *)a, *y = (const interval *)b;
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY(end);
  return 0;
}

/* Sort @p v and merge it into disjoint intervals in place; their count. */
static size_t merge_intervals(interval *v, size_t n) {
  if (!n)
    return 0;
  qsort(v, n, sizeof *v, interval_order);
  size_t out = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].start <= v[out].end) {
      if (v[i].end > v[out].end)
        v[out].end = v[i].end;
    } else {
      v[++out] = v[i];
    }
  }
  return out + 1;
}

/* Length of the union @p v (n disjoint, sorted) inside [a, b); *at is
 * where to start looking and moves forward (windows come in order). */
static uint64_t covered(const interval *v, size_t n, size_t *at, uint64_t a,
                        uint64_t b) {
  while (*at < n && v[*at].end <= a)
    (*at)++;
  uint64_t sum = 0;
  for (size_t i = *at; i < n && v[i].start < b; i++) {
    uint64_t s = v[i].start > a ? v[i].start : a;
    uint64_t e = v[i].end < b ? v[i].end : b;
    if (e > s)
      sum += e - s;
  }
  return sum;
}

typedef struct name_key {
  const char *name;
  uint32_t record;
} name_key;

static int name_order(const void *a, const void *b) {
  const name_key *x = (const name_key *)a, *y = (const name_key *)b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->record < y->record ? -1 : x->record > y->record);
}

static int u64_order(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int call_start_order(const void *a, const void *b) {
  const mprof_api_call_record *x = *(const mprof_api_call_record *const *)a;
  const mprof_api_call_record *y = *(const mprof_api_call_record *const *)b;
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY(end);
  return 0;
}

/* Everything a table build allocates, freed in one place. */
typedef struct build_state {
  mprof__call_index calls;
  mprof__step *steps;
  size_t step_count;
  uint32_t *kernel_of_record; /* KERNELS record -> table kernel */
  uint32_t *launch_step;      /* launch -> step, or MPROF_INDEX_NONE */
  uint64_t *first_start, *last_end;
  interval *all, *comm, *comp;
  const mprof_api_call_record **by_start;
  void *segments; /* call_segment, one per call at most */
  uint64_t *keys;
  name_key *names;
  size_t pool_capacity;
} build_state;

static void build_state_free(build_state *b) {
  mprof__call_index_free(&b->calls);
  free(b->steps);
  free(b->kernel_of_record);
  free(b->launch_step);
  free(b->first_start);
  free(b->last_end);
  free(b->all);
  free(b->comm);
  free(b->comp);
  free(b->by_start);
  free(b->segments);
  free(b->keys);
  free(b->names);
}

/* The kernels by mangled name (a name on two devices is one kernel), and
 * which are collectives. */
static int table_kernels(mprof_rank_table *t, build_state *b,
                         const mprof_trace *trace) {
  size_t nk;
  const mprof_kernel_record *kr = mprof_trace_kernels(trace, &nk);
  b->kernel_of_record = (uint32_t *)malloc((nk ? nk : 1) * sizeof(uint32_t));
  b->names = (name_key *)malloc((nk ? nk : 1) * sizeof *b->names);
  t->kernels = (mprof__rank_kernel *)calloc(nk ? nk : 1, sizeof *t->kernels);
  if (!b->kernel_of_record || !b->names || !t->kernels)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < nk; i++)
    b->names[i] =
        (name_key){mprof_trace_string(trace, kr[i].mangled_name), (uint32_t)i};
  qsort(b->names, nk, sizeof *b->names, name_order);
  for (size_t i = 0; i < nk; i++) {
    if (!i || strcmp(b->names[i].name, b->names[i - 1].name) != 0) {
      const mprof_kernel_record *r = &kr[b->names[i].record];
      const char *demangled = mprof_trace_string(trace, r->demangled_name);
      const char *display = *demangled ? demangled : b->names[i].name;
      mprof__rank_kernel *k = &t->kernels[t->kernel_count++];
      char short_name[256];
      mprof_name_short(short_name, sizeof short_name, display);
      k->collective = strncmp(short_name, "nccl", 4) == 0;
      int rc = pool_add(t, &b->pool_capacity, display, &k->name);
      if (!rc)
        rc = pool_add(t, &b->pool_capacity, b->names[i].name, &k->mangled);
      if (rc)
        return rc;
    }
    b->kernel_of_record[b->names[i].record] = (uint32_t)(t->kernel_count - 1);
  }
  return MPROF_OK;
}

/* Each launch's step: the step whose host span holds its call's start (or,
 * without a call, its own start). */
static void assign_steps(build_state *b, const mprof_trace *trace) {
  size_t nl;
  const mprof_launch_record *l = mprof_trace_launches(trace, &nl);
  for (size_t i = 0; i < nl; i++) {
    const mprof_api_call_record *c =
        mprof__call_of(&b->calls, l[i].correlation_id);
    uint64_t t = c ? c->start : l[i].start;
    size_t at;
    MPROF__LOWER_BOUND(at, b->step_count, mid, b->steps[mid].start <= t);
    /* at: the first step that starts after t; the one before may hold t. */
    b->launch_step[i] =
        at && t < b->steps[at - 1].end ? (uint32_t)(at - 1) : MPROF_INDEX_NONE;
  }
}

/* The host's calls as disjoint segments in time order, each instant
 * given to the call in progress that was entered first (pool offset of its
 * name): built once, so that charging idle gaps costs one pass. */
typedef struct call_segment {
  uint64_t start, end;
  uint64_t name;
} call_segment;

typedef struct cause {
  uint64_t name;
  uint64_t ns;
} cause;

static void add_cause(cause *causes, size_t *count, size_t max, uint64_t name,
                      uint64_t ns) {
  size_t k = 0;
  while (k < *count && causes[k].name != name)
    k++;
  if (k == *count && k < max)
    causes[(*count)++] = (cause){name, 0};
  if (k < *count)
    causes[k].ns += ns;
}

/* Charge the idle gap [a, e) to the call segments in it, the rest to "no
 * call" (pool offset 0); *at moves forward (gaps come in time order). */
static void charge_idle(const call_segment *seg, size_t n, size_t *at,
                        uint64_t a, uint64_t e, cause *causes,
                        size_t *cause_count, size_t cause_max) {
  while (*at < n && seg[*at].end <= a)
    (*at)++;
  uint64_t in_calls = 0;
  for (size_t i = *at; i < n && seg[i].start < e; i++) {
    uint64_t s = seg[i].start > a ? seg[i].start : a;
    uint64_t f = seg[i].end < e ? seg[i].end : e;
    if (f > s) {
      add_cause(causes, cause_count, cause_max, seg[i].name, f - s);
      in_calls += f - s;
    }
  }
  add_cause(causes, cause_count, cause_max, 0, e - a - in_calls);
}

#define CAUSES_MAX 32

static int table_steps(mprof_rank_table *t, build_state *b,
                       const mprof_trace *trace) {
  size_t nl, nm, ns, nc, nk;
  mprof_trace_kernels(trace, &nk);
  const mprof_launch_record *l = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *m = mprof_trace_memops(trace, &nm);
  const mprof_shape_record *shapes = mprof_trace_shapes(trace, &ns);
  mprof_trace_api_calls(trace, &nc);
  t->steps = (mprof__rank_step *)calloc(b->step_count ? b->step_count : 1,
                                        sizeof *t->steps);
  b->launch_step = (uint32_t *)malloc((nl ? nl : 1) * sizeof(uint32_t));
  b->first_start = (uint64_t *)malloc((b->step_count ? b->step_count : 1) *
                                      sizeof(uint64_t));
  b->last_end =
      (uint64_t *)calloc(b->step_count ? b->step_count : 1, sizeof(uint64_t));
  b->all = (interval *)malloc((nl + nm + 1) * sizeof(interval));
  b->comm = (interval *)malloc((nl + 1) * sizeof(interval));
  b->comp = (interval *)malloc((nl + nm + 1) * sizeof(interval));
  b->by_start = (const mprof_api_call_record **)malloc((nc ? nc : 1) *
                                                       sizeof *b->by_start);
  b->keys = (uint64_t *)malloc((nl ? nl : 1) * sizeof(uint64_t));
  b->segments = malloc((nc ? nc : 1) * sizeof(call_segment));
  uint64_t *call_names = (uint64_t *)calloc(nc ? nc : 1, sizeof(uint64_t));
  if (!t->steps || !b->launch_step || !b->first_start || !b->last_end ||
      !b->all || !b->comm || !b->comp || !b->by_start || !b->keys ||
      !b->segments || !call_names) {
    free(call_names);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  assign_steps(b, trace);
  for (size_t s = 0; s < b->step_count; s++) {
    b->first_start[s] = UINT64_MAX;
    t->steps[s].number = b->steps[s].number;
  }
  t->step_count = b->step_count;
  size_t n_all = 0, n_comm = 0, n_comp = 0, keys = 0;
  for (size_t i = 0; i < nl; i++) {
    uint32_t kernel = l[i].shape < ns && shapes[l[i].shape].kernel < nk
                          ? b->kernel_of_record[shapes[l[i].shape].kernel]
                          : MPROF_INDEX_NONE;
    interval iv = {l[i].start, l[i].end > l[i].start ? l[i].end : l[i].start};
    b->all[n_all++] = iv;
    if (kernel != MPROF_INDEX_NONE && t->kernels[kernel].collective)
      b->comm[n_comm++] = iv;
    else
      b->comp[n_comp++] = iv;
    t->launches++;
    uint32_t s = b->launch_step[i];
    if (s == MPROF_INDEX_NONE)
      continue;
    t->steps[s].launches++;
    if (iv.start < b->first_start[s])
      b->first_start[s] = iv.start;
    if (iv.end > b->last_end[s])
      b->last_end[s] = iv.end;
    if (kernel != MPROF_INDEX_NONE)
      b->keys[keys++] = (uint64_t)s << 32 | kernel;
  }
  for (size_t i = 0; i < nm; i++) {
    interval iv = {m[i].start, m[i].end > m[i].start ? m[i].end : m[i].start};
    b->all[n_all++] = iv;
    b->comp[n_comp++] = iv;
  }
  n_all = merge_intervals(b->all, n_all);
  n_comm = merge_intervals(b->comm, n_comm);
  n_comp = merge_intervals(b->comp, n_comp);

  /* The calls by start, for the idle time's causes. */
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  for (size_t i = 0; i < nc; i++)
    b->by_start[i] = &calls[i];
  qsort(b->by_start, nc, sizeof *b->by_start, call_start_order);
  /* Call names into the pool once per distinct string ref (calls share a
   * handful of names). */
  uint32_t seen_ref[64];
  uint64_t seen_offset[64];
  size_t seen = 0;
  for (size_t i = 0; i < nc; i++) {
    size_t j = 0;
    while (j < seen && seen_ref[j] != calls[i].name)
      j++;
    if (j < seen) {
      call_names[i] = seen_offset[j];
      continue;
    }
    int rc = pool_add(t, &b->pool_capacity,
                      mprof_trace_string(trace, calls[i].name), &call_names[i]);
    if (rc) {
      free(call_names);
      return rc;
    }
    if (seen < 64) {
      seen_ref[seen] = calls[i].name;
      seen_offset[seen++] = call_names[i];
    }
  }

  /* The calls as disjoint segments, in place of by_start's pointers'
   * order (segments never outnumber calls). */
  call_segment *seg = (call_segment *)b->segments;
  size_t segments = 0;
  uint64_t covered_to = 0;
  for (size_t i = 0; i < nc; i++) {
    const mprof_api_call_record *c = b->by_start[i];
    uint64_t s = c->start > covered_to ? c->start : covered_to;
    if (c->end <= s)
      continue;
    seg[segments++] = (call_segment){s, c->end, call_names[c - calls]};
    covered_to = c->end;
  }

  /* Windows: from a step's first kernel to the next step's first kernel
   * (the last: to its last kernel's end). */
  size_t at_all = 0, at_comm = 0, at_comp = 0, at_seg = 0;
  uint64_t last_a = 0;
  for (size_t s = 0; s < b->step_count; s++) {
    mprof__rank_step *row = &t->steps[s];
    if (b->first_start[s] == UINT64_MAX)
      continue;
    uint64_t a = b->first_start[s], e = b->last_end[s];
    for (size_t n = s + 1; n < b->step_count; n++)
      if (b->first_start[n] != UINT64_MAX) {
        e = b->first_start[n] > a ? b->first_start[n] : a;
        break;
      }
    row->window = e - a;
    if (a < last_a) /* steps whose GPU work came out of order */
      at_all = at_comm = at_comp = at_seg = 0;
    last_a = a;
    size_t from_all = at_all;
    row->busy = covered(b->all, n_all, &at_all, a, e);
    row->comm = covered(b->comm, n_comm, &at_comm, a, e);
    row->compute = covered(b->comp, n_comp, &at_comp, a, e);
    row->overlap = row->comm + row->compute > row->busy
                       ? row->comm + row->compute - row->busy
                       : 0;
    row->idle = row->window - row->busy;
    /* The idle gaps between the busy intervals, charged to calls. */
    cause causes[CAUSES_MAX];
    size_t cause_count = 0;
    uint64_t cursor = a;
    for (size_t i = from_all; i < n_all && b->all[i].start < e; i++) {
      if (b->all[i].end <= cursor)
        continue;
      if (b->all[i].start > cursor)
        charge_idle(seg, segments, &at_seg, cursor, b->all[i].start, causes,
                    &cause_count, CAUSES_MAX);
      cursor = b->all[i].end;
    }
    if (cursor < e)
      charge_idle(seg, segments, &at_seg, cursor, e, causes, &cause_count,
                  CAUSES_MAX);
    for (size_t k = 0; k < cause_count; k++)
      row->idle_in_calls += causes[k].name ? causes[k].ns : 0;
    for (size_t k = 0; k < cause_count; k++)
      if (causes[k].ns > row->cause_ns ||
          (causes[k].ns == row->cause_ns && causes[k].name < row->cause)) {
        row->cause = causes[k].name;
        row->cause_ns = causes[k].ns;
      }
  }
  free(call_names);

  /* GPU time per step and kernel. */
  qsort(b->keys, keys, sizeof *b->keys, u64_order);
  size_t cells = 0;
  for (size_t i = 0; i < keys; i++)
    cells += !i || b->keys[i] != b->keys[i - 1];
  t->cells = (mprof__rank_cell *)calloc(cells ? cells : 1, sizeof *t->cells);
  if (!t->cells)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < keys; i++)
    if (!i || b->keys[i] != b->keys[i - 1]) {
      mprof__rank_cell *c = &t->cells[t->cell_count++];
      c->step = b->keys[i] >> 32;
      c->kernel = b->keys[i] & 0xffffffffu;
    }
  /* The sums: a second pass over the launches, finding each cell. */
  for (size_t i = 0; i < nl; i++) {
    uint32_t s = b->launch_step[i];
    if (s == MPROF_INDEX_NONE || l[i].shape >= ns ||
        shapes[l[i].shape].kernel >= nk)
      continue;
    uint64_t key =
        (uint64_t)s << 32 | b->kernel_of_record[shapes[l[i].shape].kernel];
    size_t at;
    MPROF__LOWER_BOUND(at, t->cell_count, mid,
                       (t->cells[mid].step << 32 | t->cells[mid].kernel) < key);
    t->cells[at].launches++;
    t->cells[at].ns += l[i].end > l[i].start ? l[i].end - l[i].start : 0;
  }
  return MPROF_OK;
}

int mprof_rank_table_build(mprof_rank_table **out, const mprof_trace *trace) {
  if (!out || !trace)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_rank_table_build: NULL argument");
  *out = NULL;
  mprof_rank_table *t = (mprof_rank_table *)calloc(1, sizeof *t);
  build_state b;
  memset(&b, 0, sizeof b);
  if (!t)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  uint64_t zero;
  int rc = pool_add(t, &b.pool_capacity, "-", &zero); /* offset 0 is "" */
  if (!rc) {
    t->strings[0] = '\0';
    t->strings_size = 1;
    rc = mprof__call_index_build(&b.calls, trace);
  }
  if (!rc)
    rc = pool_add(t, &b.pool_capacity, mprof_trace_path(trace), &t->path);
  const char *rank = mprof_trace_process_count(trace) <= 1
                         ? mprof_trace_process_meta(trace, 0, "rank")
                         : NULL;
  if (!rank && mprof_trace_process_count(trace) <= 1)
    rank = mprof_trace_meta(trace, "rank");
  char *end = NULL;
  long long r = rank && *rank ? strtoll(rank, &end, 10) : -1;
  t->rank = end && *end == '\0' && r >= 0 ? r : -1;
  const char *host = mprof_trace_process_meta(trace, 0, "host");
  if (!rc)
    rc = pool_add(t, &b.pool_capacity, host ? host : "", &t->host);
  if (!rc)
    rc = table_kernels(t, &b, trace);
  if (!rc) {
    t->source = MPROF_STEPS_NVTX;
    rc = mprof__steps_from_ranges(&b.steps, &b.step_count, trace, 0);
  }
  if (!rc && !b.step_count) {
    t->source = MPROF_STEPS_PATTERN;
    rc = mprof__steps_from_pattern(&b.steps, &b.step_count, trace, &b.calls);
  }
  if (!rc && !b.step_count) {
    t->source = MPROF_STEPS_NONE;
    b.steps = (mprof__step *)calloc(1, sizeof *b.steps);
    if (!b.steps)
      rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    else {
      b.steps[0] = (mprof__step){0, UINT64_MAX, 0, 0};
      b.step_count = 1;
    }
  }
  if (!rc)
    rc = table_steps(t, &b, trace);
  build_state_free(&b);
  if (rc) {
    mprof_rank_table_free(t);
    return rc;
  }
  *out = t;
  return MPROF_OK;
}

/* ---- bytes --------------------------------------------------------------- */

/* Header: magic, then these u64 fields, then the step, kernel and cell
 * arrays and the string pool, all of u64 fields in the machine's order. */
static const char table_magic[8] = {'M', 'P', 'R', 'A', 'N', 'K', 'S', '2'};
enum {
  H_PATH,
  H_HOST,
  H_RANK,
  H_SOURCE,
  H_LAUNCHES,
  H_STEPS,
  H_KERNELS,
  H_CELLS,
  H_STRINGS,
  H_COUNT
};

int mprof_rank_table_save(const mprof_rank_table *t, void *buf, size_t capacity,
                          size_t *size) {
  if (!t || !size)
    return mprof__error_set(MPROF_EINVAL, "mprof_rank_table_save: NULL "
                                          "argument");
  size_t need = sizeof table_magic + H_COUNT * 8 +
                t->step_count * sizeof *t->steps +
                t->kernel_count * sizeof *t->kernels +
                t->cell_count * sizeof *t->cells + t->strings_size;
  *size = need;
  if (!buf)
    return MPROF_OK;
  if (capacity < need)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_rank_table_save: %zu bytes needed, %zu "
                            "given",
                            need, capacity);
  uint64_t h[H_COUNT] = {t->path,         t->host,       (uint64_t)t->rank,
                         t->source,       t->launches,   t->step_count,
                         t->kernel_count, t->cell_count, t->strings_size};
  unsigned char *p = (unsigned char *)buf;
  memcpy(p, table_magic, sizeof table_magic);
  p += sizeof table_magic;
  memcpy(p, h, sizeof h);
  p += sizeof h;
  memcpy(p, t->steps, t->step_count * sizeof *t->steps);
  p += t->step_count * sizeof *t->steps;
  memcpy(p, t->kernels, t->kernel_count * sizeof *t->kernels);
  p += t->kernel_count * sizeof *t->kernels;
  memcpy(p, t->cells, t->cell_count * sizeof *t->cells);
  p += t->cell_count * sizeof *t->cells;
  memcpy(p, t->strings, t->strings_size);
  return MPROF_OK;
}

static int bad_table(const char *what) {
  return mprof__error_set(MPROF_EFORMAT,
                          "rank table: %s (the bytes are not those of "
                          "mprof_rank_table_save() of this mprof)",
                          what);
}

int mprof_rank_table_load(mprof_rank_table **out, const void *bytes,
                          size_t size) {
  if (!out || (!bytes && size))
    return mprof__error_set(MPROF_EINVAL, "mprof_rank_table_load: NULL "
                                          "argument");
  *out = NULL;
  const unsigned char *p = (const unsigned char *)bytes;
  uint64_t h[H_COUNT];
  if (size < sizeof table_magic + sizeof h ||
      memcmp(p, table_magic, sizeof table_magic) != 0)
    return bad_table("no header");
  memcpy(h, p + sizeof table_magic, sizeof h);
  uint64_t limit = size;
  if (h[H_STEPS] > limit / sizeof(mprof__rank_step) ||
      h[H_KERNELS] > limit / sizeof(mprof__rank_kernel) ||
      h[H_CELLS] > limit / sizeof(mprof__rank_cell) || h[H_STRINGS] > limit ||
      h[H_SOURCE] > MPROF_STEPS_PATTERN)
    return bad_table("counts out of range");
  size_t need = sizeof table_magic + sizeof h +
                h[H_STEPS] * sizeof(mprof__rank_step) +
                h[H_KERNELS] * sizeof(mprof__rank_kernel) +
                h[H_CELLS] * sizeof(mprof__rank_cell) + h[H_STRINGS];
  if (need != size)
    return bad_table("size does not match its counts");
  mprof_rank_table *t = (mprof_rank_table *)calloc(1, sizeof *t);
  if (!t)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  t->path = h[H_PATH];
  t->host = h[H_HOST];
  t->rank = (int64_t)h[H_RANK];
  t->source = (uint32_t)h[H_SOURCE];
  t->launches = h[H_LAUNCHES];
  t->step_count = h[H_STEPS];
  t->kernel_count = h[H_KERNELS];
  t->cell_count = h[H_CELLS];
  t->strings_size = h[H_STRINGS];
  t->steps = (mprof__rank_step *)malloc((t->step_count ? t->step_count : 1) *
                                        sizeof *t->steps);
  t->kernels = (mprof__rank_kernel *)malloc(
      (t->kernel_count ? t->kernel_count : 1) * sizeof *t->kernels);
  t->cells = (mprof__rank_cell *)malloc((t->cell_count ? t->cell_count : 1) *
                                        sizeof *t->cells);
  t->strings = (char *)malloc(t->strings_size ? t->strings_size : 1);
  if (!t->steps || !t->kernels || !t->cells || !t->strings) {
    mprof_rank_table_free(t);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  p += sizeof table_magic + sizeof h;
  memcpy(t->steps, p, t->step_count * sizeof *t->steps);
  p += t->step_count * sizeof *t->steps;
  memcpy(t->kernels, p, t->kernel_count * sizeof *t->kernels);
  p += t->kernel_count * sizeof *t->kernels;
  memcpy(t->cells, p, t->cell_count * sizeof *t->cells);
  p += t->cell_count * sizeof *t->cells;
  memcpy(t->strings, p, t->strings_size);
  /* Every reference must land inside what was loaded. */
  int ok = t->strings_size && t->strings[0] == '\0' &&
           t->strings[t->strings_size - 1] == '\0' &&
           t->path < t->strings_size && t->host < t->strings_size;
  for (size_t i = 0; ok && i < t->step_count; i++)
    ok = t->steps[i].cause < t->strings_size &&
         t->steps[i].idle <= t->steps[i].window &&
         t->steps[i].idle_in_calls <= t->steps[i].idle;
  for (size_t i = 0; ok && i < t->kernel_count; i++)
    ok = t->kernels[i].name < t->strings_size &&
         t->kernels[i].mangled < t->strings_size;
  for (size_t i = 0; ok && i < t->cell_count; i++)
    ok = t->cells[i].step < t->step_count &&
         t->cells[i].kernel < t->kernel_count &&
         (!i || (t->cells[i - 1].step << 32 | t->cells[i - 1].kernel) <
                    (t->cells[i].step << 32 | t->cells[i].kernel));
  if (!ok) {
    mprof_rank_table_free(t);
    return bad_table("a reference out of range");
  }
  *out = t;
  return MPROF_OK;
}
