/*
 * mprof — join launches, kernel functions, PC samples, SASS and lines.
 *
 * Cost: a pass over the launches in stream order for counts, sums,
 * extremes and idle gaps, then usually two more that narrow the medians and
 * p90s to exact values with small histograms (no per-launch memory), and a
 * sort of the PC sample records.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/join.h"

/* Private per-kernel bookkeeping, parallel to the public stats. */
typedef struct kernel_extra {
  size_t shape_first, shape_count;
  size_t pc_first, pc_count;
  size_t reason_first, reason_count;
  /* while building: */
  uint64_t first_duration;
  double shifted_sum, shifted_sq;
  uint64_t gap_sum;
} kernel_extra;

/* A PC while building: which kernel it belongs to and its reasons. */
typedef struct pc_build {
  uint32_t kernel;
  mprof_pc_stats pub;
  size_t reason_first;
} pc_build;

struct mprof_join {
  const mprof_trace *trace;
  const mprof_sidecar *sidecar;
  size_t kernel_count, kernel_cap;
  mprof_kernel_stats *kernels;
  kernel_extra *extra;
  mprof__map kernel_map;   /* (device, mangled name) -> kernel */
  uint32_t *record_kernel; /* KERNELS index -> kernel */
  uint32_t *shape_kernel;  /* SHAPES index -> kernel */
  uint32_t *shape_group;   /* SHAPES index -> index into shapes */
  size_t shape_record_count, kernel_record_count;
  mprof_shape_stats *shapes;
  size_t shape_count;
  mprof_pc_stats *pcs;
  size_t pc_count;
  mprof_reason_samples *pc_reasons;
  size_t pc_reason_count;
  mprof_reason_samples *kernel_reasons;
  size_t kernel_reason_count;
  mprof_stall_reason *reasons;
  size_t reason_count, reason_cap;
  mprof__map reason_map;   /* short name -> reason */
  uint32_t unnamed_reason; /* MPROF_INDEX_NONE until needed */
  uint64_t kernel_time, sample_total, unmatched;
};

int mprof_join_options_init(mprof_join_options *opts, unsigned version) {
  if (!opts)
    return mprof__error_set(MPROF_EINVAL, "mprof_join_options_init: NULL");
  if (version != MPROF_JOIN_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "join options version %u is not supported (%u)",
                            version, MPROF_JOIN_OPTIONS_VERSION);
  mprof_join_options init = MPROF_JOIN_OPTIONS_INIT;
  *opts = init;
  return 0;
}

/* ---- kernels ------------------------------------------------------------ */

static uint64_t kernel_key_hash(const char *name, uint32_t device) {
  return mprof__hash64(name, strlen(name)) ^
         ((uint64_t)device * 0x9e3779b97f4a7c15ull);
}

/* The kernel for (@p device, @p mangled), created when @p create. */
static int kernel_lookup(mprof_join *j, uint32_t *out, const char *mangled,
                         uint32_t device, int create) {
  *out = MPROF_INDEX_NONE;
  uint64_t h = kernel_key_hash(mangled, device);
  size_t cursor = 0;
  uint32_t at;
  while ((at = mprof__map_next(&j->kernel_map, h, &cursor)) !=
         MPROF__MAP_NONE) {
    const mprof_kernel_stats *k = &j->kernels[at];
    if (k->device == device && strcmp(k->mangled, mangled) == 0) {
      *out = at;
      return 0;
    }
  }
  if (!create)
    return 0;
  if (j->kernel_count >= UINT32_MAX - 1)
    return mprof__error_set(MPROF_EFORMAT, "%s: too many kernels",
                            mprof_trace_path(j->trace));
  if (j->kernel_count == j->kernel_cap) {
    size_t cap = j->kernel_cap ? j->kernel_cap * 2 : 64;
    mprof_kernel_stats *k =
        (mprof_kernel_stats *)realloc(j->kernels, cap * sizeof *k);
    if (!k)
      return MPROF_ENOMEM;
    j->kernels = k;
    kernel_extra *e = (kernel_extra *)realloc(j->extra, cap * sizeof *e);
    if (!e)
      return MPROF_ENOMEM;
    j->extra = e;
    j->kernel_cap = cap;
  }
  if (mprof__map_add(&j->kernel_map, h, (uint32_t)j->kernel_count))
    return MPROF_ENOMEM;
  size_t index = j->kernel_count++;
  mprof_kernel_stats *k = &j->kernels[index];
  memset(k, 0, sizeof *k);
  memset(&j->extra[index], 0, sizeof j->extra[index]);
  k->name = mangled;
  k->mangled = mangled;
  k->device = device;
  k->device_id = MPROF_INDEX_NONE;
  size_t device_count;
  const mprof_device_record *dev = mprof_trace_devices(j->trace, &device_count);
  if (device < device_count)
    k->device_id = dev[device].id;
  *out = (uint32_t)index;
  return 0;
}

/* ---- stall reasons ------------------------------------------------------ */

/* The reason named @p name (@p len bytes), or MPROF_INDEX_NONE. */
static uint32_t reason_named(const mprof_join *j, const char *name, size_t len,
                             uint64_t hash) {
  size_t cursor = 0;
  uint32_t at;
  while ((at = mprof__map_next(&j->reason_map, hash, &cursor)) !=
         MPROF__MAP_NONE)
    if (strncmp(j->reasons[at].name, name, len) == 0 &&
        j->reasons[at].name[len] == 0)
      return at;
  return MPROF_INDEX_NONE;
}

/* The reason named @p short_name, added when new. Strings are borrowed
 * from the trace or the sidecar, which outlive the join. */
static int reason_add(mprof_join *j, uint32_t *out, const char *full_name,
                      const char *short_name) {
  size_t len = strlen(short_name);
  uint64_t hash = mprof__hash64(short_name, len);
  *out = reason_named(j, short_name, len, hash);
  if (*out != MPROF_INDEX_NONE)
    return 0;
  if (j->reason_count >= UINT32_MAX - 1)
    return MPROF_ENOMEM;
  if (j->reason_count == j->reason_cap) {
    size_t cap = j->reason_cap ? j->reason_cap * 2 : 64;
    mprof_stall_reason *r =
        (mprof_stall_reason *)realloc(j->reasons, cap * sizeof *r);
    if (!r)
      return MPROF_ENOMEM;
    j->reasons = r;
    j->reason_cap = cap;
  }
  if (mprof__map_add(&j->reason_map, hash, (uint32_t)j->reason_count))
    return MPROF_ENOMEM;
  mprof_stall_reason *r = &j->reasons[j->reason_count];
  r->name = short_name;
  r->full_name = full_name;
  r->not_issued = (uint32_t)mprof_stall_reason_is_not_issued(short_name);
  r->plain = r->not_issued ? MPROF_INDEX_NONE : (uint32_t)j->reason_count;
  r->dimension = mprof_stall_reason_dimension(short_name);
  *out = (uint32_t)j->reason_count++;
  return 0;
}

/* Pair every X_not_issued with its X (looked up through the hash). */
static void reason_link(mprof_join *j) {
  for (size_t r = 0; r < j->reason_count; r++) {
    mprof_stall_reason *x = &j->reasons[r];
    if (!x->not_issued)
      continue;
    size_t len = strlen(x->name) - (sizeof MPROF_STALL_NOT_ISSUED_SUFFIX - 1);
    uint32_t plain = reason_named(j, x->name, len, mprof__hash64(x->name, len));
    if (plain != MPROF_INDEX_NONE)
      x->plain = plain;
  }
}

/* (device, CUPTI index) -> reason, sorted for binary search. */
typedef struct reason_key {
  uint64_t key;
  uint32_t reason;
} reason_key;

static int compare_reason_key(const void *a, const void *b) {
  uint64_t x = ((const reason_key *)a)->key, y = ((const reason_key *)b)->key;
  return x < y ? -1 : x > y;
}

static uint32_t reason_find(const reason_key *keys, size_t count,
                            uint32_t device, uint32_t index) {
  uint64_t key = ((uint64_t)device << 32) | index;
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count && keys[lo].key == key ? keys[lo].reason : MPROF_INDEX_NONE;
}

static int unnamed_reason(mprof_join *j, uint32_t *out) {
  if (j->unnamed_reason == MPROF_INDEX_NONE) {
    int rc = reason_add(j, &j->unnamed_reason, "", "unnamed");
    if (rc)
      return rc;
  }
  *out = j->unnamed_reason;
  return 0;
}

/* ---- launches ----------------------------------------------------------- */

/* Quickselect: the @p k-th smallest (0-based) of @p v[0..n), reordering v. */
static uint64_t select_u64(uint64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
    uint64_t pivot =
        a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t i = lo, jx = hi;
    while (i <= jx) {
      while (v[i] < pivot)
        i++;
      while (v[jx] > pivot)
        jx--;
      if (i <= jx) {
        uint64_t t = v[i];
        v[i] = v[jx];
        v[jx] = t;
        i++;
        if (jx == 0)
          break;
        jx--;
      }
    }
    if (k <= jx)
      hi = jx;
    else if (k >= i)
      lo = i;
    else
      return v[k];
  }
  return v[k];
}

/* Nearest rank: the smallest value with at least @p q of the values <= it. */
static size_t nearest_rank(size_t n, double q) {
  size_t rank = (size_t)ceil(q * (double)n);
  return rank ? rank - 1 : 0;
}

/* Shapes of one kernel that are the same launch configuration are one
 * group: same grid, block, cluster, dynamic shared memory, launch type and
 * the kernel record's registers and shared/local memory. */
typedef struct shape_sort {
  uint32_t shape;
  uint32_t kernel;
  uint32_t config[15];
} shape_sort;

static int compare_shape_sort(const void *a, const void *b) {
  const shape_sort *x = (const shape_sort *)a, *y = (const shape_sort *)b;
  if (x->kernel != y->kernel)
    return x->kernel < y->kernel ? -1 : 1;
  int c = memcmp(x->config, y->config, sizeof x->config);
  if (c)
    return c;
  return x->shape < y->shape ? -1 : x->shape > y->shape;
}

static int build_kernels(mprof_join *j) {
  const mprof_trace *t = j->trace;
  size_t kernel_records, shape_records;
  const mprof_kernel_record *kr = mprof_trace_kernels(t, &kernel_records);
  const mprof_shape_record *sr = mprof_trace_shapes(t, &shape_records);
  j->kernel_record_count = kernel_records;
  j->shape_record_count = shape_records;
  j->record_kernel =
      (uint32_t *)malloc((kernel_records ? kernel_records : 1) * 4);
  j->shape_kernel = (uint32_t *)malloc((shape_records ? shape_records : 1) * 4);
  j->shape_group = (uint32_t *)malloc((shape_records ? shape_records : 1) * 4);
  if (!j->record_kernel || !j->shape_kernel || !j->shape_group)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < kernel_records; i++) {
    const char *mangled = mprof_trace_string(t, kr[i].mangled_name);
    int rc = kernel_lookup(j, &j->record_kernel[i], mangled, kr[i].device, 1);
    if (rc)
      return rc;
    mprof_kernel_stats *k = &j->kernels[j->record_kernel[i]];
    const char *demangled = mprof_trace_string(t, kr[i].demangled_name);
    if (*demangled && k->name == k->mangled)
      k->name = demangled;
    if (!k->cubin_crc)
      k->cubin_crc = kr[i].cubin_crc;
  }
  /* Group shapes by configuration. */
  shape_sort *sorted = (shape_sort *)malloc(
      (shape_records ? shape_records : 1) * sizeof *sorted);
  if (!sorted)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < shape_records; i++) {
    const mprof_shape_record *s = &sr[i];
    const mprof_kernel_record *k = &kr[s->kernel];
    shape_sort *o = &sorted[i];
    o->shape = (uint32_t)i;
    o->kernel = j->record_kernel[s->kernel];
    j->shape_kernel[i] = o->kernel;
    uint32_t config[15] = {
        s->grid[0],        s->grid[1],          s->grid[2],
        s->block[0],       s->block[1],         s->block[2],
        s->cluster[0],     s->cluster[1],       s->cluster[2],
        s->dynamic_shared, s->launch_type,      k->registers,
        k->static_shared,  k->local_per_thread, 0};
    memcpy(o->config, config, sizeof config);
  }
  mprof__qsort(sorted, shape_records, sizeof *sorted, compare_shape_sort);
  j->shapes = (mprof_shape_stats *)calloc(shape_records ? shape_records : 1,
                                          sizeof *j->shapes);
  if (!j->shapes) {
    free(sorted);
    return MPROF_ENOMEM;
  }
  for (size_t i = 0; i < shape_records; i++) {
    if (i == 0 || sorted[i].kernel != sorted[i - 1].kernel ||
        memcmp(sorted[i].config, sorted[i - 1].config,
               sizeof sorted[i].config) != 0) {
      mprof_shape_stats *g = &j->shapes[j->shape_count++];
      const mprof_shape_record *s = &sr[sorted[i].shape];
      const mprof_kernel_record *k = &kr[s->kernel];
      g->kernel_record = s->kernel;
      g->shape_record = sorted[i].shape;
      memcpy(g->grid, s->grid, sizeof g->grid);
      memcpy(g->block, s->block, sizeof g->block);
      memcpy(g->cluster, s->cluster, sizeof g->cluster);
      g->dynamic_shared = s->dynamic_shared;
      g->static_shared = k->static_shared;
      g->registers = k->registers;
      g->local_per_thread = k->local_per_thread;
      g->launch_type = s->launch_type;
      g->min_ns = UINT64_MAX;
      kernel_extra *e = &j->extra[sorted[i].kernel];
      if (!e->shape_count)
        e->shape_first = j->shape_count - 1;
      e->shape_count++;
    }
    j->shape_group[sorted[i].shape] = (uint32_t)(j->shape_count - 1);
  }
  free(sorted);
  return 0;
}

/* Launches in stream order (each stream by start time), with the idle gap
 * before each: the time since the previous launch on the stream ended, 0
 * when it overlaps or opens the stream. A trace written sorted is walked in
 * file order; any other through the reader's per-stream order. */
typedef struct launch_iter {
  const mprof_trace *trace;
  const mprof_launch_record *launches;
  size_t count, next;
  int sorted;
  uint32_t stream, stream_count;
  size_t position, stream_size;
  int started;
  uint32_t last_stream;
  uint64_t busy_until;
} launch_iter;

static void iter_start(launch_iter *it, const mprof_trace *t, int sorted) {
  memset(it, 0, sizeof *it);
  it->trace = t;
  it->launches = mprof_trace_launches(t, &it->count);
  size_t streams;
  mprof_trace_streams(t, &streams);
  it->stream_count = (uint32_t)streams;
  it->sorted = sorted;
  it->stream = UINT32_MAX;
}

static inline const mprof_launch_record *iter_next(launch_iter *it,
                                                   uint64_t *gap) {
  const mprof_launch_record *l;
  if (it->sorted) {
    if (it->next == it->count)
      return NULL;
    l = &it->launches[it->next++];
  } else {
    while (it->position == it->stream_size) {
      if (++it->stream >= it->stream_count)
        return NULL;
      it->position = 0;
      it->stream_size = mprof_trace_stream_launch_count(it->trace, it->stream);
    }
    l = mprof_trace_stream_launch(it->trace, it->stream, it->position++);
  }
  *gap = 0;
  if (!it->started || l->stream != it->last_stream) {
    it->started = 1;
    it->last_stream = l->stream;
    it->busy_until = l->end;
    return l;
  }
  if (l->start > it->busy_until)
    *gap = l->start - it->busy_until;
  if (l->end > it->busy_until)
    it->busy_until = l->end;
  return l;
}

/*
 * Exact order statistics without keeping every value: each wanted rank
 * narrows a value range with a histogram over one pass of the launches
 * until the bin holding it has few enough values to collect and select.
 * Memory is a few KiB per kernel, not 8 bytes per launch.
 */
#define SELECT_BINS_MAX 1024
#define SELECT_COLLECT 256

typedef struct select_target {
  /* Read for every launch; kept together at the front. */
  uint64_t lo;   /* values v with v - lo <= span are in range */
  uint64_t span; /* hi - lo */
  uint32_t *bins;
  uint64_t *values;
  size_t value_count;
  unsigned shift; /* bin width = 1 << shift: a shift, not a division */
  int state;      /* 0 histogram, 1 collect, 2 done */
  /* The rest, between passes. */
  uint64_t hi;   /* inclusive range that still holds the answer */
  uint64_t rank; /* 0-based rank of the answer among values in range */
  uint64_t in_range;
  uint64_t *answer;
  uint32_t bin_count;
  uint64_t width;
} select_target;

static void target_init(select_target *t, uint64_t *answer, uint64_t count,
                        double q, uint64_t lo, uint64_t hi) {
  memset(t, 0, sizeof *t);
  t->answer = answer;
  *answer = 0;
  if (!count) {
    t->state = 2;
    return;
  }
  t->lo = lo;
  t->hi = hi;
  t->in_range = count;
  t->rank = nearest_rank((size_t)count, q);
  uint64_t bins = 16;
  while (bins < SELECT_BINS_MAX && bins < count / 8)
    bins *= 2;
  t->bin_count = (uint32_t)bins;
  t->state = lo == hi ? 2 : count <= SELECT_COLLECT ? 1 : 0;
  if (t->state == 2)
    *answer = lo;
}

/* Before a pass: allocate what the target's next pass needs. */
static int target_prepare(select_target *t) {
  t->span = t->hi - t->lo;
  if (t->state == 0) {
    if (!t->bins) {
      t->bins = (uint32_t *)malloc(t->bin_count * sizeof *t->bins);
      if (!t->bins)
        return MPROF_ENOMEM;
    }
    memset(t->bins, 0, t->bin_count * sizeof *t->bins);
    t->shift = 0;
    while (((t->hi - t->lo) >> t->shift) >= t->bin_count)
      t->shift++;
    t->width = (uint64_t)1 << t->shift;
  } else if (t->state == 1 && !t->values) {
    t->values = (uint64_t *)malloc((size_t)t->in_range * sizeof *t->values);
    if (!t->values)
      return MPROF_ENOMEM;
    t->value_count = 0;
  }
  return 0;
}

static inline void target_add(select_target *t, uint64_t v) {
  uint64_t offset = v - t->lo; /* wraps for v < lo: out of range */
  if (t->state == 2 || offset > t->span)
    return;
  if (t->state == 0)
    t->bins[offset >> t->shift]++;
  else if (t->value_count < t->in_range)
    t->values[t->value_count++] = v;
}

/* After a pass: narrow to the bin holding the rank, or select. */
static void target_finish(select_target *t) {
  if (t->state == 0) {
    uint64_t below = 0;
    uint32_t b = 0;
    while (b + 1 < t->bin_count && below + t->bins[b] <= t->rank)
      below += t->bins[b++];
    t->rank -= below;
    t->in_range = t->bins[b];
    t->lo += (uint64_t)b * t->width;
    if (t->hi - t->lo > t->width - 1)
      t->hi = t->lo + t->width - 1;
    if (t->lo == t->hi) {
      *t->answer = t->lo;
      t->state = 2;
    } else if (t->in_range <= SELECT_COLLECT) {
      t->state = 1;
    }
  } else if (t->state == 1) {
    if (t->value_count && t->rank < t->value_count)
      *t->answer = select_u64(t->values, t->value_count, (size_t)t->rank);
    t->state = 2;
  }
  if (t->state == 2) {
    free(t->bins);
    free(t->values);
    t->bins = NULL;
    t->values = NULL;
  }
}

/* Pass 1: counts, sums, extremes, gap totals; shape statistics. */
static int stats_pass(mprof_join *j, int sorted, uint64_t *gap_min,
                      uint64_t *gap_max) {
  launch_iter it;
  iter_start(&it, j->trace, sorted);
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    kernel_extra *e = &j->extra[k];
    ks->launches = ks->total_ns = ks->max_ns = ks->gap_count = 0;
    ks->min_ns = UINT64_MAX;
    e->shifted_sum = e->shifted_sq = 0;
    e->gap_sum = 0;
    gap_min[k] = UINT64_MAX;
    gap_max[k] = 0;
  }
  for (size_t s = 0; s < j->shape_count; s++) {
    mprof_shape_stats *g = &j->shapes[s];
    g->launches = g->total_ns = g->max_ns = 0;
    g->min_ns = UINT64_MAX;
  }
  j->kernel_time = 0;
  const mprof_launch_record *l;
  uint64_t gap;
  uint64_t prev_start = 0;
  uint32_t prev_stream = 0;
  while ((l = iter_next(&it, &gap)) != NULL) {
    if (sorted) {
      /* Trust the writer's flag only as far as the records agree. */
      if (it.next > 1 && (l->stream < prev_stream ||
                          (l->stream == prev_stream && l->start < prev_start)))
        return 1;
      prev_stream = l->stream;
      prev_start = l->start;
    }
    uint64_t d = l->end - l->start;
    uint32_t kernel = j->shape_kernel[l->shape];
    mprof_kernel_stats *k = &j->kernels[kernel];
    kernel_extra *e = &j->extra[kernel];
    if (!k->launches)
      e->first_duration = d;
    double shifted = (double)d - (double)e->first_duration;
    e->shifted_sum += shifted;
    e->shifted_sq += shifted * shifted;
    k->launches++;
    k->total_ns += d;
    if (d < k->min_ns)
      k->min_ns = d;
    if (d > k->max_ns)
      k->max_ns = d;
    if (gap) {
      k->gap_count++;
      e->gap_sum += gap;
      if (gap < gap_min[kernel])
        gap_min[kernel] = gap;
      if (gap > gap_max[kernel])
        gap_max[kernel] = gap;
    }
    mprof_shape_stats *g = &j->shapes[j->shape_group[l->shape]];
    g->launches++;
    g->total_ns += d;
    if (d < g->min_ns)
      g->min_ns = d;
    if (d > g->max_ns)
      g->max_ns = d;
    j->kernel_time += d;
  }
  return 0;
}

static int build_launches(mprof_join *j) {
  const mprof_trace *t = j->trace;
  size_t n, device_count;
  mprof_trace_launches(t, &n);
  mprof_trace_devices(t, &device_count);
  size_t kn = j->kernel_count ? j->kernel_count : 1;
  uint64_t *gap_min = (uint64_t *)malloc(kn * sizeof *gap_min);
  uint64_t *gap_max = (uint64_t *)malloc(kn * sizeof *gap_max);
  select_target *targets = (select_target *)calloc(kn * 3, sizeof *targets);
  uint64_t *device_time =
      (uint64_t *)calloc(device_count + 1, sizeof *device_time);
  int rc = 0;
  if (!gap_min || !gap_max || !targets || !device_time) {
    rc = MPROF_ENOMEM;
    goto done;
  }
  int sorted = (mprof_trace_flags(t) & MPROF_FILE_FLAG_LAUNCHES_SORTED) != 0;
  if (stats_pass(j, sorted, gap_min, gap_max)) {
    sorted = 0; /* the flag lied: walk the reader's order instead */
    stats_pass(j, sorted, gap_min, gap_max);
  }
  for (size_t s = 0; s < j->shape_count; s++) {
    mprof_shape_stats *g = &j->shapes[s];
    if (!g->launches)
      g->min_ns = 0;
    g->mean_ns = g->launches ? (double)g->total_ns / (double)g->launches : 0;
  }
  size_t active = 0;
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    kernel_extra *e = &j->extra[k];
    if (!ks->launches)
      ks->min_ns = 0;
    target_init(&targets[3 * k], &ks->median_ns, ks->launches, 0.5, ks->min_ns,
                ks->max_ns);
    target_init(&targets[3 * k + 1], &ks->p90_ns, ks->launches, 0.9, ks->min_ns,
                ks->max_ns);
    target_init(&targets[3 * k + 2], &ks->gap_median_ns, ks->gap_count, 0.5,
                gap_min[k], gap_max[k]);
    for (int x = 0; x < 3; x++)
      active += targets[3 * k + x].state != 2;
    if (!ks->launches)
      continue;
    size_t m = (size_t)ks->launches;
    ks->mean_ns = (double)ks->total_ns / (double)m;
    if (m > 1) {
      double var =
          (e->shifted_sq - e->shifted_sum * e->shifted_sum / (double)m) /
          (double)(m - 1);
      ks->stddev_ns = var > 0 ? sqrt(var) : 0;
    }
    if (ks->gap_count)
      ks->gap_mean_ns = (double)e->gap_sum / (double)ks->gap_count;
    ks->share =
        j->kernel_time ? (double)ks->total_ns / (double)j->kernel_time : 0.0;
    device_time[ks->device < device_count ? ks->device : device_count] +=
        ks->total_ns;
  }
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    uint64_t dt =
        device_time[ks->device < device_count ? ks->device : device_count];
    ks->device_share = dt ? (double)ks->total_ns / (double)dt : 0.0;
  }
  /* Narrowing passes until every median and p90 is exact. */
  for (int pass = 0; active && pass < 64; pass++) {
    for (size_t x = 0; x < j->kernel_count * 3; x++)
      if (targets[x].state != 2 && (rc = target_prepare(&targets[x])) != 0)
        goto done;
    if (sorted) {
      /* The common case, written out: file order is stream order. */
      size_t n_launches;
      const mprof_launch_record *all = mprof_trace_launches(t, &n_launches);
      const uint32_t *shape_kernel = j->shape_kernel;
      uint32_t stream = UINT32_MAX;
      uint64_t busy = 0;
      for (size_t i = 0; i < n_launches; i++) {
        const mprof_launch_record *l = &all[i];
        select_target *x = &targets[3 * (size_t)shape_kernel[l->shape]];
        uint64_t d = l->end - l->start;
        target_add(&x[0], d);
        target_add(&x[1], d);
        if (l->stream != stream) {
          stream = l->stream;
          busy = l->end;
          continue;
        }
        if (l->start > busy)
          target_add(&x[2], l->start - busy);
        if (l->end > busy)
          busy = l->end;
      }
    } else {
      launch_iter it;
      iter_start(&it, t, sorted);
      const mprof_launch_record *l;
      uint64_t gap;
      while ((l = iter_next(&it, &gap)) != NULL) {
        select_target *x = &targets[3 * (size_t)j->shape_kernel[l->shape]];
        uint64_t d = l->end - l->start;
        target_add(&x[0], d);
        target_add(&x[1], d);
        if (gap)
          target_add(&x[2], gap);
      }
    }
    active = 0;
    for (size_t x = 0; x < j->kernel_count * 3; x++)
      if (targets[x].state != 2) {
        target_finish(&targets[x]);
        active += targets[x].state != 2;
      }
  }
done:
  for (size_t x = 0; targets && x < j->kernel_count * 3; x++) {
    free(targets[x].bins);
    free(targets[x].values);
  }
  free(targets);
  free(gap_min);
  free(gap_max);
  free(device_time);
  return rc;
}

/* ---- PC samples --------------------------------------------------------- */

typedef struct pc_sort_ctx {
  const mprof_pc_sample_record *records;
} pc_sort_ctx;

static int compare_pc_records(const void *a, const void *b, void *ctx) {
  const mprof_pc_sample_record *r = ((const pc_sort_ctx *)ctx)->records;
  const mprof_pc_sample_record *x = &r[*(const uint32_t *)a];
  const mprof_pc_sample_record *y = &r[*(const uint32_t *)b];
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->function_name != y->function_name)
    return x->function_name < y->function_name ? -1 : 1;
  if (x->cubin_crc != y->cubin_crc)
    return x->cubin_crc < y->cubin_crc ? -1 : 1;
  if (x->function_index != y->function_index)
    return x->function_index < y->function_index ? -1 : 1;
  if (x->pc_offset != y->pc_offset)
    return x->pc_offset < y->pc_offset ? -1 : 1;
  return 0;
}

/* Growable arrays of PCs and their reason lists while building. */
typedef struct pc_builder {
  pc_build *pcs;
  size_t count, cap;
  mprof_reason_samples *reasons;
  size_t reason_count, reason_cap;
  uint64_t *scratch; /* dense per-reason counts of the current PC */
  uint32_t *touched;
  size_t touched_count, scratch_cap;
} pc_builder;

static int builder_reserve_scratch(pc_builder *b, size_t reason_count) {
  if (reason_count <= b->scratch_cap)
    return 0;
  size_t cap = reason_count * 2;
  uint64_t *s = (uint64_t *)calloc(cap, sizeof *s);
  uint32_t *t = (uint32_t *)malloc(cap * sizeof *t);
  if (!s || !t) {
    free(s);
    free(t);
    return MPROF_ENOMEM;
  }
  if (b->scratch)
    memcpy(s, b->scratch, b->scratch_cap * sizeof *s);
  if (b->touched)
    memcpy(t, b->touched, b->touched_count * sizeof *t);
  free(b->scratch);
  free(b->touched);
  b->scratch = s;
  b->touched = t;
  b->scratch_cap = cap;
  return 0;
}

static void builder_count(pc_builder *b, uint32_t reason, uint64_t samples) {
  if (!samples)
    return;
  if (!b->scratch[reason])
    b->touched[b->touched_count++] = reason;
  b->scratch[reason] += samples;
}

static int compare_reason_samples(const void *a, const void *b) {
  const mprof_reason_samples *x = (const mprof_reason_samples *)a;
  const mprof_reason_samples *y = (const mprof_reason_samples *)b;
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* Emit the scratch counts as a reason list; fills *plain and *not_issued. */
static int builder_flush(pc_builder *b, const mprof_join *j, size_t *first,
                         size_t *count, uint64_t *plain, uint64_t *not_issued) {
  *first = b->reason_count;
  *count = 0;
  *plain = *not_issued = 0;
  if (b->reason_count + b->touched_count > b->reason_cap) {
    size_t cap = (b->reason_count + b->touched_count) * 2 + 64;
    mprof_reason_samples *r =
        (mprof_reason_samples *)realloc(b->reasons, cap * sizeof *r);
    if (!r)
      return MPROF_ENOMEM;
    b->reasons = r;
    b->reason_cap = cap;
  }
  for (size_t i = 0; i < b->touched_count; i++) {
    uint32_t reason = b->touched[i];
    uint64_t samples = b->scratch[reason];
    b->scratch[reason] = 0;
    if (!samples)
      continue;
    b->reasons[b->reason_count].reason = reason;
    b->reasons[b->reason_count].samples = samples;
    b->reason_count++;
    (*count)++;
    if (j->reasons[reason].not_issued)
      *not_issued += samples;
    else
      *plain += samples;
  }
  b->touched_count = 0;
  if (*count > 1)
    qsort(b->reasons + *first, *count, sizeof *b->reasons,
          compare_reason_samples);
  return 0;
}

static int builder_add_pc(pc_builder *b, const mprof_join *j, uint32_t kernel,
                          uint64_t crc, uint32_t function_index,
                          uint32_t offset) {
  if (b->count == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    pc_build *p = (pc_build *)realloc(b->pcs, cap * sizeof *p);
    if (!p)
      return MPROF_ENOMEM;
    b->pcs = p;
    b->cap = cap;
  }
  pc_build *p = &b->pcs[b->count];
  memset(p, 0, sizeof *p);
  p->kernel = kernel;
  p->pub.cubin_crc = crc;
  p->pub.function_index = function_index;
  p->pub.offset = offset;
  size_t first, count;
  int rc =
      builder_flush(b, j, &first, &count, &p->pub.samples, &p->pub.not_issued);
  if (rc)
    return rc;
  p->reason_first = first;
  p->pub.reason_count = count;
  if (p->pub.samples || p->pub.not_issued)
    b->count++;
  else
    b->reason_count = first;
  return 0;
}

static void builder_free(pc_builder *b) {
  free(b->pcs);
  free(b->reasons);
  free(b->scratch);
  free(b->touched);
}

/* PC samples from the trace's PC_SAMPLES section. */
static int collect_trace_samples(mprof_join *j, pc_builder *b) {
  const mprof_trace *t = j->trace;
  size_t n, table_count;
  const mprof_pc_sample_record *r = mprof_trace_pc_samples(t, &n);
  const mprof_stall_reason_record *table =
      mprof_trace_stall_reasons(t, &table_count);
  reason_key *keys =
      (reason_key *)malloc((table_count ? table_count : 1) * sizeof *keys);
  uint32_t *order = (uint32_t *)malloc((n ? n : 1) * sizeof *order);
  int rc = 0;
  if (!keys || !order) {
    rc = MPROF_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < table_count; i++) {
    const char *full = mprof_trace_string(t, table[i].name);
    const char *short_name = mprof_stall_reason_short_name(full);
    if (!*short_name) {
      full = "";
      short_name = "unnamed";
    }
    keys[i].key = ((uint64_t)table[i].device << 32) | table[i].index;
    if ((rc = reason_add(j, &keys[i].reason, full, short_name)) != 0)
      goto done;
  }
  mprof__qsort(keys, table_count, sizeof *keys, compare_reason_key);
  if (n > UINT32_MAX) {
    rc = mprof__error_set(MPROF_EFORMAT, "%s: too many PC sample records",
                          mprof_trace_path(t));
    goto done;
  }
  for (size_t i = 0; i < n; i++)
    order[i] = (uint32_t)i;
  pc_sort_ctx ctx = {r};
  qsort_r(order, n, sizeof *order, compare_pc_records, &ctx);
  uint32_t kernel = MPROF_INDEX_NONE;
  for (size_t i = 0; i < n; i++) {
    const mprof_pc_sample_record *x = &r[order[i]];
    const mprof_pc_sample_record *prev = i ? &r[order[i - 1]] : NULL;
    if (!prev || prev->device != x->device ||
        prev->function_name != x->function_name) {
      const char *name = mprof_trace_string(t, x->function_name);
      if ((rc = kernel_lookup(j, &kernel, name, x->device, 0)) != 0)
        goto done;
      if (kernel == MPROF_INDEX_NONE &&
          (rc = kernel_lookup(j, &kernel, name, x->device, 1)) != 0)
        goto done;
    }
    uint32_t reason =
        reason_find(keys, table_count, x->device, x->stall_reason);
    if (reason == MPROF_INDEX_NONE && (rc = unnamed_reason(j, &reason)) != 0)
      goto done;
    if ((rc = builder_reserve_scratch(b, j->reason_count)) != 0)
      goto done;
    builder_count(b, reason, x->samples);
    const mprof_pc_sample_record *next = i + 1 < n ? &r[order[i + 1]] : NULL;
    if (!next || compare_pc_records(&order[i], &order[i + 1], &ctx) != 0)
      if ((rc = builder_add_pc(b, j, kernel, x->cubin_crc, x->function_index,
                               x->pc_offset)) != 0)
        goto done;
  }
done:
  free(keys);
  free(order);
  return rc;
}

/* PC samples from the sidecar, for traces that carry none themselves. */
static int collect_sidecar_samples(mprof_join *j, pc_builder *b) {
  const mprof_sidecar *sc = j->sidecar;
  size_t reason_names = mprof_sidecar_stall_reason_count(sc);
  uint32_t *map =
      (uint32_t *)malloc((reason_names ? reason_names : 1) * sizeof *map);
  if (!map)
    return MPROF_ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < reason_names && !rc; i++) {
    const char *full = mprof_sidecar_stall_reason(sc, (uint32_t)i);
    const char *short_name = mprof_stall_reason_short_name(full);
    if (!*short_name)
      rc = unnamed_reason(j, &map[i]);
    else
      rc = reason_add(j, &map[i], full, short_name);
  }
  size_t device_count;
  mprof_trace_devices(j->trace, &device_count);
  size_t fn_count = mprof_sidecar_function_count(sc);
  for (size_t f = 0; f < fn_count && !rc; f++) {
    const mprof_sidecar_function *fn = mprof_sidecar_function_at(sc, f);
    if (!fn || !fn->pc_count)
      continue;
    uint32_t device = fn->device < device_count ? fn->device : MPROF_INDEX_NONE;
    uint32_t kernel;
    if ((rc = kernel_lookup(j, &kernel, fn->name, device, 0)) != 0)
      break;
    if (kernel == MPROF_INDEX_NONE)
      for (size_t k = 0; k < j->kernel_count; k++)
        if (strcmp(j->kernels[k].mangled, fn->name) == 0) {
          kernel = (uint32_t)k;
          break;
        }
    if (kernel == MPROF_INDEX_NONE &&
        (rc = kernel_lookup(j, &kernel, fn->name, device, 1)) != 0)
      break;
    if ((rc = builder_reserve_scratch(b, j->reason_count + 1)) != 0)
      break;
    for (size_t p = 0; p < fn->pc_count && !rc; p++) {
      const mprof_sidecar_pc *pc = &fn->pcs[p];
      for (uint32_t r = 0; r < pc->reason_count && !rc; r++) {
        if (!pc->counts[r])
          continue;
        uint32_t reason;
        if (r < reason_names)
          reason = map[r];
        else if ((rc = unnamed_reason(j, &reason)) != 0)
          break;
        if ((rc = builder_reserve_scratch(b, j->reason_count)) != 0)
          break;
        builder_count(b, reason, pc->counts[r]);
      }
      if (!rc)
        rc = builder_add_pc(b, j, kernel, fn->cubin_crc, fn->function_index,
                            pc->offset);
    }
  }
  free(map);
  return rc;
}

static int compare_pc_build(const void *a, const void *b) {
  const pc_build *x = (const pc_build *)a, *y = (const pc_build *)b;
  if (x->kernel != y->kernel)
    return x->kernel < y->kernel ? -1 : 1;
  if (x->pub.samples != y->pub.samples)
    return x->pub.samples > y->pub.samples ? -1 : 1;
  if (x->pub.cubin_crc != y->pub.cubin_crc)
    return x->pub.cubin_crc < y->pub.cubin_crc ? -1 : 1;
  if (x->pub.function_index != y->pub.function_index)
    return x->pub.function_index < y->pub.function_index ? -1 : 1;
  return x->pub.offset < y->pub.offset ? -1 : x->pub.offset > y->pub.offset;
}

static const mprof_sidecar_function *
sidecar_function(const mprof_join *j, const char *name, uint64_t crc) {
  if (!j->sidecar)
    return NULL;
  const mprof_sidecar_function *fn = mprof_sidecar_find(j->sidecar, name, crc);
  return fn ? fn : mprof_sidecar_find(j->sidecar, name, 0);
}

static int build_samples(mprof_join *j) {
  pc_builder b;
  memset(&b, 0, sizeof b);
  size_t records;
  mprof_trace_pc_samples(j->trace, &records);
  int rc = 0;
  if (records)
    rc = collect_trace_samples(j, &b);
  else if (j->sidecar)
    rc = collect_sidecar_samples(j, &b);
  if (!rc)
    reason_link(j);
  if (rc) {
    builder_free(&b);
    return rc;
  }
  mprof__qsort(b.pcs, b.count, sizeof *b.pcs, compare_pc_build);
  j->pcs = (mprof_pc_stats *)malloc((b.count ? b.count : 1) * sizeof *j->pcs);
  j->pc_reasons = b.reasons;
  j->pc_reason_count = b.reason_count;
  b.reasons = NULL;
  if (!j->pcs) {
    builder_free(&b);
    return MPROF_ENOMEM;
  }
  j->pc_count = b.count;
  /* Per-kernel reason totals, and which function carries most samples. */
  if ((rc = builder_reserve_scratch(&b, j->reason_count + 1)) != 0) {
    builder_free(&b);
    return rc;
  }
  size_t kernel_reason_cap = 0;
  for (size_t i = 0; i < b.count;) {
    uint32_t kernel = b.pcs[i].kernel;
    kernel_extra *e = &j->extra[kernel];
    mprof_kernel_stats *ks = &j->kernels[kernel];
    e->pc_first = i;
    /* Distinct functions (few: usually one) and the most-sampled one. */
    enum { TRACKED = 16 };
    uint64_t fn_crc[TRACKED], fn_samples[TRACKED];
    uint32_t fn_index[TRACKED];
    size_t fn_count = 0;
    size_t start = i;
    for (; i < b.count && b.pcs[i].kernel == kernel; i++) {
      pc_build *p = &b.pcs[i];
      j->pcs[i] = p->pub;
      j->pcs[i].reasons = j->pc_reasons + p->reason_first;
      for (size_t r = 0; r < p->pub.reason_count; r++)
        builder_count(&b, j->pcs[i].reasons[r].reason,
                      j->pcs[i].reasons[r].samples);
      ks->samples += p->pub.samples;
      ks->not_issued += p->pub.not_issued;
      size_t f;
      for (f = 0; f < fn_count; f++)
        if (fn_crc[f] == p->pub.cubin_crc &&
            fn_index[f] == p->pub.function_index)
          break;
      if (f == fn_count && fn_count < TRACKED) {
        fn_crc[f] = p->pub.cubin_crc;
        fn_index[f] = p->pub.function_index;
        fn_samples[f] = 0;
        fn_count++;
      }
      if (f < fn_count)
        fn_samples[f] += p->pub.samples;
    }
    e->pc_count = i - start;
    ks->pc_count = e->pc_count;
    ks->function_count = fn_count;
    uint64_t best = 0;
    for (size_t f = 0; f < fn_count; f++)
      if (f == 0 || fn_samples[f] > best) {
        best = fn_samples[f];
        ks->cubin_crc = fn_crc[f];
      }
    j->sample_total += ks->samples;
    if (!ks->launches)
      j->unmatched += ks->samples;
    /* Flush the kernel's totals into the kernel reason array. */
    if (j->kernel_reason_count + b.touched_count > kernel_reason_cap) {
      size_t cap = (j->kernel_reason_count + b.touched_count) * 2 + 64;
      mprof_reason_samples *kr =
          (mprof_reason_samples *)realloc(j->kernel_reasons, cap * sizeof *kr);
      if (!kr) {
        builder_free(&b);
        return MPROF_ENOMEM;
      }
      j->kernel_reasons = kr;
      kernel_reason_cap = cap;
    }
    e->reason_first = j->kernel_reason_count;
    for (size_t t = 0; t < b.touched_count; t++) {
      uint32_t reason = b.touched[t];
      if (b.scratch[reason]) {
        j->kernel_reasons[j->kernel_reason_count].reason = reason;
        j->kernel_reasons[j->kernel_reason_count].samples = b.scratch[reason];
        j->kernel_reason_count++;
      }
      b.scratch[reason] = 0;
    }
    b.touched_count = 0;
    e->reason_count = j->kernel_reason_count - e->reason_first;
    if (e->reason_count > 1)
      qsort(j->kernel_reasons + e->reason_first, e->reason_count,
            sizeof *j->kernel_reasons, compare_reason_samples);
  }
  builder_free(&b);
  return 0;
}

/* SASS and source lines from the sidecar. */
static void attach_sidecar(mprof_join *j) {
  if (!j->sidecar)
    return;
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    kernel_extra *e = &j->extra[k];
    ks->function = sidecar_function(j, ks->mangled, ks->cubin_crc);
    const mprof_sidecar_function *fn = ks->function;
    uint64_t fn_crc = fn ? fn->cubin_crc : 0;
    for (size_t p = e->pc_first; p < e->pc_first + e->pc_count; p++) {
      mprof_pc_stats *pc = &j->pcs[p];
      if (!fn || (pc->cubin_crc && fn_crc && pc->cubin_crc != fn_crc)) {
        fn = sidecar_function(j, ks->mangled, pc->cubin_crc);
        fn_crc = fn ? fn->cubin_crc : 0;
      }
      pc->instruction = fn ? mprof_sidecar_instruction(fn, pc->offset) : NULL;
    }
  }
}

/* ---- ordering ----------------------------------------------------------- */

static int compare_kernel_rank(const void *a, const void *b, void *ctx) {
  const mprof_kernel_stats *k = (const mprof_kernel_stats *)ctx;
  const mprof_kernel_stats *x = &k[*(const uint32_t *)a];
  const mprof_kernel_stats *y = &k[*(const uint32_t *)b];
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  if (x->device_id != y->device_id)
    return x->device_id < y->device_id ? -1 : 1;
  return x->device < y->device ? -1 : x->device > y->device;
}

static int compare_shape_total(const void *a, const void *b) {
  const mprof_shape_stats *x = (const mprof_shape_stats *)a;
  const mprof_shape_stats *y = (const mprof_shape_stats *)b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return x->shape_record < y->shape_record ? -1
                                           : x->shape_record > y->shape_record;
}

/* Drop kernels with neither launches nor samples, and order the rest. */
static int order_kernels(mprof_join *j) {
  size_t n = j->kernel_count;
  uint32_t *order = (uint32_t *)malloc((n ? n : 1) * sizeof *order);
  uint32_t *rank = (uint32_t *)malloc((n ? n : 1) * sizeof *rank);
  mprof_kernel_stats *k = (mprof_kernel_stats *)malloc((n ? n : 1) * sizeof *k);
  kernel_extra *e = (kernel_extra *)malloc((n ? n : 1) * sizeof *e);
  mprof_shape_stats *shapes = (mprof_shape_stats *)malloc(
      (j->shape_count ? j->shape_count : 1) * sizeof *shapes);
  if (!order || !rank || !k || !e || !shapes) {
    free(order);
    free(rank);
    free(k);
    free(e);
    free(shapes);
    return MPROF_ENOMEM;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (j->kernels[i].launches || j->kernels[i].samples ||
        j->kernels[i].not_issued)
      order[kept++] = (uint32_t)i;
  qsort_r(order, kept, sizeof *order, compare_kernel_rank, j->kernels);
  for (size_t i = 0; i < n; i++)
    rank[i] = MPROF_INDEX_NONE;
  size_t shape_fill = 0;
  for (size_t r = 0; r < kept; r++) {
    rank[order[r]] = (uint32_t)r;
    k[r] = j->kernels[order[r]];
    e[r] = j->extra[order[r]];
    /* Shapes of this kernel, largest total first. */
    size_t first = shape_fill;
    for (size_t s = 0; s < e[r].shape_count; s++)
      shapes[shape_fill++] = j->shapes[e[r].shape_first + s];
    if (e[r].shape_count > 1)
      qsort(shapes + first, e[r].shape_count, sizeof *shapes,
            compare_shape_total);
    e[r].shape_first = first;
    k[r].shape_count = e[r].shape_count;
  }
  for (size_t i = 0; i < j->shape_record_count; i++)
    j->shape_kernel[i] = rank[j->shape_kernel[i]];
  for (size_t i = 0; i < j->kernel_record_count; i++)
    j->record_kernel[i] = rank[j->record_kernel[i]];
  free(order);
  free(rank);
  free(j->kernels);
  free(j->extra);
  free(j->shapes);
  j->kernels = k;
  j->extra = e;
  j->shapes = shapes;
  j->shape_count = shape_fill;
  j->kernel_count = kept;
  j->kernel_cap = n ? n : 1;
  free(j->shape_group);
  j->shape_group = NULL;
  /* Rebuild the name map for the new order. */
  mprof__map_free(&j->kernel_map);
  if (mprof__map_reserve(&j->kernel_map, kept))
    return MPROF_ENOMEM;
  for (size_t r = 0; r < kept; r++)
    if (mprof__map_add(&j->kernel_map,
                       kernel_key_hash(k[r].mangled, k[r].device), (uint32_t)r))
      return MPROF_ENOMEM;
  return 0;
}

int mprof_join_build(mprof_join **out, const mprof_trace *trace,
                     const mprof_join_options *opts) {
  mprof_join_options defaults = MPROF_JOIN_OPTIONS_INIT;
  if (!out || !trace)
    return mprof__error_set(MPROF_EINVAL, "mprof_join_build: NULL argument");
  *out = NULL;
  if (!opts)
    opts = &defaults;
  if (opts->version != MPROF_JOIN_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "join options version %u is not supported (%u)",
                            opts->version, MPROF_JOIN_OPTIONS_VERSION);
  mprof_join *j = (mprof_join *)calloc(1, sizeof *j);
  if (!j)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory",
                            mprof_trace_path(trace));
  j->trace = trace;
  j->sidecar = opts->sidecar;
  j->unnamed_reason = MPROF_INDEX_NONE;
  int rc = build_kernels(j);
  if (!rc)
    rc = build_launches(j);
  if (!rc)
    rc = build_samples(j);
  if (!rc)
    rc = order_kernels(j);
  if (!rc)
    attach_sidecar(j);
  if (rc) {
    mprof_join_free(j);
    if (rc == MPROF_ENOMEM)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory while joining",
                              mprof_trace_path(trace));
    return rc;
  }
  *out = j;
  return 0;
}

void mprof_join_free(mprof_join *join) {
  if (!join)
    return;
  free(join->kernels);
  free(join->extra);
  mprof__map_free(&join->kernel_map);
  free(join->record_kernel);
  free(join->shape_kernel);
  free(join->shape_group);
  free(join->shapes);
  free(join->pcs);
  free(join->pc_reasons);
  free(join->kernel_reasons);
  free(join->reasons);
  mprof__map_free(&join->reason_map);
  free(join);
}

const mprof_trace *mprof_join_trace(const mprof_join *join) {
  return join ? join->trace : NULL;
}

const mprof_sidecar *mprof_join_sidecar(const mprof_join *join) {
  return join ? join->sidecar : NULL;
}

uint64_t mprof_join_kernel_time(const mprof_join *join) {
  return join ? join->kernel_time : 0;
}

uint64_t mprof_join_sample_total(const mprof_join *join) {
  return join ? join->sample_total : 0;
}

uint64_t mprof_join_unmatched_samples(const mprof_join *join) {
  return join ? join->unmatched : 0;
}

size_t mprof_join_kernel_count(const mprof_join *join) {
  return join ? join->kernel_count : 0;
}

const mprof_kernel_stats *mprof_join_kernel(const mprof_join *join,
                                            size_t index) {
  return join && index < join->kernel_count ? &join->kernels[index] : NULL;
}

uint32_t mprof_join_launch_kernel(const mprof_join *join, size_t launch) {
  size_t n;
  if (!join)
    return MPROF_INDEX_NONE;
  const mprof_launch_record *l = mprof_trace_launches(join->trace, &n);
  if (launch >= n)
    return MPROF_INDEX_NONE;
  return join->shape_kernel[l[launch].shape];
}

uint32_t mprof_join_find_kernel(const mprof_join *join, const char *name,
                                uint32_t device_id) {
  if (!join || !name)
    return MPROF_INDEX_NONE;
  for (size_t k = 0; k < join->kernel_count; k++) {
    const mprof_kernel_stats *ks = &join->kernels[k];
    if (device_id != MPROF_INDEX_NONE && ks->device_id != device_id)
      continue;
    if (strcmp(ks->mangled, name) == 0 || strcmp(ks->name, name) == 0)
      return (uint32_t)k;
  }
  return MPROF_INDEX_NONE;
}

const mprof_shape_stats *mprof_join_shapes(const mprof_join *join,
                                           size_t kernel, size_t *count) {
  if (count)
    *count = 0;
  if (!join || kernel >= join->kernel_count || !join->extra[kernel].shape_count)
    return NULL;
  if (count)
    *count = join->extra[kernel].shape_count;
  return join->shapes + join->extra[kernel].shape_first;
}

const mprof_pc_stats *mprof_join_pcs(const mprof_join *join, size_t kernel,
                                     size_t *count) {
  if (count)
    *count = 0;
  if (!join || kernel >= join->kernel_count || !join->extra[kernel].pc_count)
    return NULL;
  if (count)
    *count = join->extra[kernel].pc_count;
  return join->pcs + join->extra[kernel].pc_first;
}

const mprof_reason_samples *mprof_join_kernel_reasons(const mprof_join *join,
                                                      size_t kernel,
                                                      size_t *count) {
  if (count)
    *count = 0;
  if (!join || kernel >= join->kernel_count ||
      !join->extra[kernel].reason_count)
    return NULL;
  if (count)
    *count = join->extra[kernel].reason_count;
  return join->kernel_reasons + join->extra[kernel].reason_first;
}

size_t mprof_join_reason_count(const mprof_join *join) {
  return join ? join->reason_count : 0;
}

const mprof_stall_reason *mprof_join_reason(const mprof_join *join,
                                            size_t index) {
  return join && index < join->reason_count ? &join->reasons[index] : NULL;
}
