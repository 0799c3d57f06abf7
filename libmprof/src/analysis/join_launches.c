/*
 * mprof — the join: launch statistics per kernel and shape (counts, sums,
 * extremes, exact medians and p90s, idle gaps).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base/arena.h"
#include "base/pool.h"
#include "format/set.h"
#include "mprof/join.h"

#include "join_internal.h"

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
  MPROF__ORDER_BY(kernel);
  int c = memcmp(x->config, y->config, sizeof x->config);
  if (c)
    return c;
  return x->shape < y->shape ? -1 : x->shape > y->shape;
}

int mprof__join_build_kernels(mprof_join *j) {
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
    int rc = mprof__join_kernel_lookup(j, &j->record_kernel[i], mangled,
                                       kr[i].device, 1);
    if (rc)
      return rc;
    mprof_kernel_stats *k = &j->kernels[j->record_kernel[i]];
    /* A record of another process joins: the kernel is several's. Records
     * come process by process, so each new process shows once. */
    kernel_extra *e = &j->extra[j->record_kernel[i]];
    uint32_t process = mprof_trace_device_process(t, kr[i].device);
    if (process != MPROF_INDEX_NONE && process != e->last_process) {
      k->process = MPROF_INDEX_NONE;
      k->process_count++;
      e->last_process = process;
    }
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
      uint32_t kernel = sorted[i].kernel;
      if (!j->kernels[kernel].shape_count)
        j->extra[kernel].shape_first = j->shape_count - 1;
      j->kernels[kernel].shape_count++;
    }
    j->shape_group[sorted[i].shape] = (uint32_t)(j->shape_count - 1);
  }
  free(sorted);
  return 0;
}

/* Launches in stream order (each stream by start time), with the idle gap
 * before each: the time since the previous launch on the stream ended, 0
 * when it overlaps or opens the stream. A trace written sorted is walked in
 * file order; any other through the reader's per-stream order. Each trace
 * of a set is walked on its own, in place (format/set.h): a stream is one
 * trace's, so a gap never spans processes. */
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

/* One trace's share of a kernel's statistics (pass 1), added up trace
 * after trace in the set's order. */
typedef struct kernel_part {
  uint64_t launches, total_ns, min_ns, max_ns;
  uint64_t first_duration;
  double shifted_sum, shifted_sq; /* of d - first_duration */
  uint64_t gap_count, gap_sum, gap_min, gap_max;
} kernel_part;

typedef struct shape_part {
  uint64_t launches, total_ns, min_ns, max_ns;
} shape_part;

/* A trace whose launches are walked on their own: the trace itself, or one
 * trace of a set, with what it adds to the set's shape indexes. */
typedef struct segment {
  const mprof_trace *trace;
  uint32_t shape_base;
  int sorted;
  kernel_part *kernels;
  shape_part *shapes;
  uint64_t kernel_time;
  select_target *targets; /* this trace's bins and values, one pass */
  int failed;             /* MPROF_ENOMEM in a pass */
} segment;

typedef struct launch_work {
  mprof_join *j;
  segment *segments;
  size_t segment_count;
  select_target *targets; /* the join's, 3 per kernel */
} launch_work;

/* Pass 1 over one trace: counts, sums, extremes, gaps; per shape too.
 * Returns 1 when the trace said it was sorted and is not. */
static int stats_walk(const mprof_join *j, segment *g, int sorted) {
  launch_iter it;
  iter_start(&it, g->trace, sorted);
  for (size_t k = 0; k < j->kernel_count; k++) {
    kernel_part *p = &g->kernels[k];
    memset(p, 0, sizeof *p);
    p->min_ns = UINT64_MAX;
    p->gap_min = UINT64_MAX;
  }
  for (size_t s = 0; s < j->shape_count; s++) {
    memset(&g->shapes[s], 0, sizeof g->shapes[s]);
    g->shapes[s].min_ns = UINT64_MAX;
  }
  g->kernel_time = 0;
  const uint32_t *shape_kernel = j->shape_kernel + g->shape_base;
  const uint32_t *shape_group = j->shape_group + g->shape_base;
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
    kernel_part *k = &g->kernels[shape_kernel[l->shape]];
    if (!k->launches)
      k->first_duration = d;
    double shifted = (double)d - (double)k->first_duration;
    k->shifted_sum += shifted;
    k->shifted_sq += shifted * shifted;
    k->launches++;
    k->total_ns += d;
    if (d < k->min_ns)
      k->min_ns = d;
    if (d > k->max_ns)
      k->max_ns = d;
    if (gap) {
      k->gap_count++;
      k->gap_sum += gap;
      if (gap < k->gap_min)
        k->gap_min = gap;
      if (gap > k->gap_max)
        k->gap_max = gap;
    }
    shape_part *s = &g->shapes[shape_group[l->shape]];
    s->launches++;
    s->total_ns += d;
    if (d < s->min_ns)
      s->min_ns = d;
    if (d > s->max_ns)
      s->max_ns = d;
    g->kernel_time += d;
  }
  return 0;
}

static int stats_task(void *ctx, size_t task) {
  launch_work *w = (launch_work *)ctx;
  segment *g = &w->segments[task];
  if (stats_walk(w->j, g, g->sorted)) {
    g->sorted = 0; /* the flag lied: walk the reader's order instead */
    stats_walk(w->j, g, 0);
  }
  return 0;
}

/* Pass 1's parts added up, trace after trace: the same whatever thread
 * walked which trace. */
static void stats_add(mprof_join *j, const launch_work *w, uint64_t *gap_min,
                      uint64_t *gap_max) {
  j->kernel_time = 0;
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    kernel_extra *e = &j->extra[k];
    ks->launches = ks->total_ns = ks->max_ns = ks->gap_count = 0;
    ks->min_ns = UINT64_MAX;
    e->shifted_sum = e->shifted_sq = 0;
    e->gap_sum = 0;
    gap_min[k] = UINT64_MAX;
    gap_max[k] = 0;
    for (size_t i = 0; i < w->segment_count; i++) {
      const kernel_part *p = &w->segments[i].kernels[k];
      if (!p->launches)
        continue;
      if (!ks->launches) {
        e->first_duration = p->first_duration;
        e->shifted_sum = p->shifted_sum;
        e->shifted_sq = p->shifted_sq;
      } else {
        /* Its sums were of d - its own first duration. */
        double delta = (double)p->first_duration - (double)e->first_duration;
        double m = (double)p->launches;
        e->shifted_sq +=
            p->shifted_sq + 2.0 * delta * p->shifted_sum + m * delta * delta;
        e->shifted_sum += p->shifted_sum + m * delta;
      }
      ks->launches += p->launches;
      ks->total_ns += p->total_ns;
      if (p->min_ns < ks->min_ns)
        ks->min_ns = p->min_ns;
      if (p->max_ns > ks->max_ns)
        ks->max_ns = p->max_ns;
      ks->gap_count += p->gap_count;
      e->gap_sum += p->gap_sum;
      if (p->gap_min < gap_min[k])
        gap_min[k] = p->gap_min;
      if (p->gap_max > gap_max[k])
        gap_max[k] = p->gap_max;
    }
  }
  for (size_t s = 0; s < j->shape_count; s++) {
    mprof_shape_stats *g = &j->shapes[s];
    g->launches = g->total_ns = g->max_ns = 0;
    g->min_ns = UINT64_MAX;
    for (size_t i = 0; i < w->segment_count; i++) {
      const shape_part *p = &w->segments[i].shapes[s];
      g->launches += p->launches;
      g->total_ns += p->total_ns;
      if (p->min_ns < g->min_ns)
        g->min_ns = p->min_ns;
      if (p->max_ns > g->max_ns)
        g->max_ns = p->max_ns;
    }
  }
  for (size_t i = 0; i < w->segment_count; i++)
    j->kernel_time += w->segments[i].kernel_time;
}

/* One narrowing pass over one trace, into its own bins and values. */
static int narrow_task(void *ctx, size_t task) {
  launch_work *w = (launch_work *)ctx;
  const mprof_join *j = w->j;
  segment *g = &w->segments[task];
  size_t tn = j->kernel_count * 3;
  for (size_t x = 0; x < tn; x++) {
    select_target *own = &g->targets[x];
    uint32_t *bins = own->bins;
    uint64_t *values = own->values;
    *own = w->targets[x];
    own->bins = bins;
    own->values = values;
    own->value_count = 0;
    if (own->state == 0) {
      if (!own->bins)
        own->bins = (uint32_t *)malloc(SELECT_BINS_MAX * sizeof *own->bins);
      if (!own->bins) {
        g->failed = 1;
        own->state = 2;
        continue;
      }
      memset(own->bins, 0, own->bin_count * sizeof *own->bins);
    } else if (own->state == 1 && !own->values) {
      own->values = (uint64_t *)malloc(SELECT_COLLECT * sizeof *own->values);
      if (!own->values) {
        g->failed = 1;
        own->state = 2;
      }
    }
  }
  const uint32_t *shape_kernel = j->shape_kernel + g->shape_base;
  if (g->sorted) {
    /* The common case, written out: file order is stream order. */
    size_t n_launches;
    const mprof_launch_record *all =
        mprof_trace_launches(g->trace, &n_launches);
    uint32_t stream = UINT32_MAX;
    uint64_t busy = 0;
    for (size_t i = 0; i < n_launches; i++) {
      const mprof_launch_record *l = &all[i];
      select_target *x = &g->targets[3 * (size_t)shape_kernel[l->shape]];
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
    iter_start(&it, g->trace, 0);
    const mprof_launch_record *l;
    uint64_t gap;
    while ((l = iter_next(&it, &gap)) != NULL) {
      select_target *x = &g->targets[3 * (size_t)shape_kernel[l->shape]];
      uint64_t d = l->end - l->start;
      target_add(&x[0], d);
      target_add(&x[1], d);
      if (gap)
        target_add(&x[2], gap);
    }
  }
  return 0;
}

int mprof__join_build_launches(mprof_join *j) {
  const mprof_trace *t = j->trace;
  size_t device_count;
  mprof_trace_devices(t, &device_count);
  size_t kn = j->kernel_count ? j->kernel_count : 1;
  size_t sn = j->shape_count ? j->shape_count : 1;
  size_t members = mprof__set_member_count(t);
  size_t segment_count = members ? members : 1;
  uint64_t *gap_min = (uint64_t *)malloc(kn * sizeof *gap_min);
  uint64_t *gap_max = (uint64_t *)malloc(kn * sizeof *gap_max);
  select_target *targets = (select_target *)calloc(kn * 3, sizeof *targets);
  uint64_t *device_time =
      (uint64_t *)calloc(device_count + 1, sizeof *device_time);
  segment *segments = (segment *)calloc(segment_count, sizeof *segments);
  launch_work w = {j, segments, segment_count, targets};
  int rc = 0;
  if (!gap_min || !gap_max || !targets || !device_time || !segments) {
    rc = MPROF_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < segment_count; i++) {
    segment *g = &segments[i];
    const mprof__move *move = NULL;
    g->trace = members ? mprof__set_member(t, i, &move) : t;
    g->shape_base = move ? move->base[MPROF_SECTION_SHAPES] : 0;
    g->sorted =
        (mprof_trace_flags(g->trace) & MPROF_FILE_FLAG_LAUNCHES_SORTED) != 0;
    g->kernels = (kernel_part *)malloc(kn * sizeof *g->kernels);
    g->shapes = (shape_part *)malloc(sn * sizeof *g->shapes);
    g->targets = (select_target *)calloc(kn * 3, sizeof *g->targets);
    if (!g->kernels || !g->shapes || !g->targets) {
      rc = MPROF_ENOMEM;
      goto done;
    }
  }
  if ((rc = mprof__pool_run(j->threads, segment_count, stats_task, &w)) != 0)
    goto done;
  stats_add(j, &w, gap_min, gap_max);
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
  /* Narrowing passes until every median and p90 is exact: each trace
   * counts into its own bins, added up in the set's order. */
  for (int pass = 0; active && pass < 64; pass++) {
    for (size_t x = 0; x < j->kernel_count * 3; x++)
      if (targets[x].state != 2 && (rc = target_prepare(&targets[x])) != 0)
        goto done;
    if ((rc = mprof__pool_run(j->threads, segment_count, narrow_task, &w)) != 0)
      goto done;
    for (size_t x = 0; x < j->kernel_count * 3; x++) {
      select_target *main = &targets[x];
      for (size_t i = 0; i < segment_count; i++) {
        const select_target *own = &segments[i].targets[x];
        if (segments[i].failed) {
          rc = MPROF_ENOMEM;
          goto done;
        }
        if (main->state == 0)
          for (uint32_t b = 0; b < main->bin_count; b++)
            main->bins[b] += own->bins[b];
        else if (main->state == 1)
          for (size_t v = 0; v < own->value_count; v++)
            if (main->value_count < main->in_range)
              main->values[main->value_count++] = own->values[v];
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
  for (size_t i = 0; segments && i < segment_count; i++) {
    for (size_t x = 0; segments[i].targets && x < j->kernel_count * 3; x++) {
      free(segments[i].targets[x].bins);
      free(segments[i].targets[x].values);
    }
    free(segments[i].targets);
    free(segments[i].kernels);
    free(segments[i].shapes);
  }
  free(segments);
  free(targets);
  free(gap_min);
  free(gap_max);
  free(device_time);
  return rc;
}
