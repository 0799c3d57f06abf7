/*
 * mprof — merging the spans of a .source file into a trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/copy.h"
#include "base/array.h"
#include "internal.h"
#include "mprof/source.h"
#include "source_internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

/* ---- merging ------------------------------------------------------------ */

/* Launch slack for matching and for "inside its launch". */
#define MATCH_SLACK_NS 100000

typedef struct source_launch {
  int64_t min_start; /* trace clock before the offset */
  size_t spans;
  uint32_t cupti; /* trace launch index, or MPROF_INDEX_NONE */
  int how;        /* 0 none, 1 order, 2 time */
} source_launch;

typedef struct merge_state {
  const mprof_trace *trace;
  const mprof_source_file *file;
  const mprof_launch_record *tl; /* trace launches */
  size_t tl_count;
  const mprof_shape_record *shapes;
  const mprof_stream_record *streams;
  const mprof_device_record *devices;
  size_t device_count;
  const mprof_source_file_launch *fl; /* the file's launches */
  source_launch *sl;                  /* what the merge learns of each */
  size_t sl_count;
  uint8_t *used;         /* per trace launch */
  uint8_t *kernel_match; /* [source kernel][trace kernel] */
  size_t trace_kernels;
  uint32_t *by_start;   /* trace launch indices ordered by start */
  int64_t max_duration; /* longest trace launch */
} merge_state;

static int cmp_by_start(const void *a, const void *b, void *ctx) {
  const mprof_launch_record *tl = (const mprof_launch_record *)ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (tl[x].start != tl[y].start)
    return tl[x].start < tl[y].start ? -1 : 1;
  return x < y ? -1 : x > y;
}

static int names_match(const char *source, const char *mangled,
                       const char *demangled) {
  if (!*source)
    return 0;
  if (strcmp(source, mangled) == 0 || strcmp(source, demangled) == 0)
    return 1;
  /* "ns::k<int>" against "void ns::k<int>(float*)": the part before '(' */
  const char *paren = strchr(demangled, '(');
  size_t slen = strlen(source);
  if (paren && (size_t)(paren - demangled) >= slen &&
      strncmp(paren - slen, source, slen) == 0 &&
      (paren - slen == demangled || paren[-(ptrdiff_t)slen - 1] == ' ' ||
       paren[-(ptrdiff_t)slen - 1] == ':'))
    return 1;
  char a[512], b[512];
  if (mprof_source_kernel_basename(a, sizeof a, source) ||
      mprof_source_kernel_basename(b, sizeof b,
                                   *demangled ? demangled : mangled))
    return 0;
  return strcmp(a, b) == 0;
}

/* Device ordinal of trace launch @p i, or MPROF_INDEX_NONE. */
static uint32_t launch_device(const merge_state *m, size_t i) {
  uint32_t d = m->streams[m->tl[i].stream].device;
  if (d == MPROF_INDEX_NONE || d >= m->device_count)
    return MPROF_INDEX_NONE;
  return m->devices[d].id;
}

static int same_shape(const merge_state *m, const mprof_source_file_launch *s,
                      size_t i) {
  const mprof_shape_record *sh = &m->shapes[m->tl[i].shape];
  for (int k = 0; k < 3; k++)
    if (sh->grid[k] != s->grid[k] || sh->block[k] != s->block[k])
      return 0;
  return 1;
}

/* May source launch @p s be trace launch @p i (name and device)? */
static int candidate(const merge_state *m, const mprof_source_file_launch *s,
                     size_t i) {
  uint32_t kernel = m->shapes[m->tl[i].shape].kernel;
  if (!m->kernel_match[(size_t)s->kernel * m->trace_kernels + kernel])
    return 0;
  uint32_t d = launch_device(m, i);
  return d == MPROF_INDEX_NONE || d == s->device;
}

/* Pair the n-th launch of each (kernel, device) with the n-th CUPTI launch
 * of the same name on the same device when the counts and shapes agree.
 * Groups that do not are left for time matching. */
static int match_by_order(merge_state *m, size_t *pairs) {
  size_t kernel_count;
  mprof_source_file_kernels(m->file, &kernel_count);
  uint32_t *cand = (uint32_t *)malloc((m->tl_count + 1) * sizeof *cand);
  uint32_t *mine = (uint32_t *)malloc((m->sl_count + 1) * sizeof *mine);
  uint32_t *group = (uint32_t *)malloc((m->sl_count + 1) * sizeof *group);
  if (!cand || !mine || !group) {
    free(cand);
    free(mine);
    free(group);
    return mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
  }
  *pairs = 0;
  for (size_t k = 0; k < kernel_count; k++) {
    size_t nk = 0;
    for (size_t j = 0; j < m->sl_count; j++)
      if (m->fl[j].kernel == k)
        mine[nk++] = (uint32_t)j;
    /* one (kernel, device) group at a time; taken launches get NONE */
    for (size_t first = 0; first < nk; first++) {
      if (mine[first] == MPROF_INDEX_NONE)
        continue;
      const mprof_source_file_launch *head = &m->fl[mine[first]];
      uint32_t device = head->device;
      size_t nm = 0, nc = 0;
      for (size_t j = first; j < nk; j++)
        if (mine[j] != MPROF_INDEX_NONE && m->fl[mine[j]].device == device) {
          group[nm++] = mine[j];
          mine[j] = MPROF_INDEX_NONE;
        }
      for (size_t i = 0; i < m->tl_count; i++)
        if (candidate(m, head, m->by_start[i]))
          cand[nc++] = m->by_start[i];
      if (nc != nm)
        continue;
      int ok = 1;
      for (size_t j = 0; j < nm && ok; j++)
        ok = same_shape(m, &m->fl[group[j]], cand[j]);
      if (!ok)
        continue;
      for (size_t j = 0; j < nm; j++) {
        m->sl[group[j]].cupti = cand[j];
        m->sl[group[j]].how = 1;
        m->used[cand[j]] = 1;
        *pairs += m->sl[group[j]].spans > 0;
      }
    }
  }
  free(cand);
  free(mine);
  free(group);
  return 0;
}

/* Undo the order pairs of a kernel group when one of them is far from the
 * run's offset: counts that agreed by accident. */
static void demote_outliers(merge_state *m, int64_t estimate) {
  for (size_t j = 0; j < m->sl_count; j++) {
    source_launch *s = &m->sl[j];
    if (s->how != 1 || !s->spans)
      continue;
    const mprof_launch_record *l = &m->tl[s->cupti];
    int64_t d = (int64_t)l->start - s->min_start - estimate;
    int64_t slack = MATCH_SLACK_NS + (int64_t)(l->end - l->start);
    if (d <= slack && d >= -slack)
      continue;
    for (size_t k = 0; k < m->sl_count; k++) {
      if (m->sl[k].how == 1 && m->fl[k].kernel == m->fl[j].kernel &&
          m->fl[k].device == m->fl[j].device) {
        m->used[m->sl[k].cupti] = 0;
        m->sl[k].cupti = MPROF_INDEX_NONE;
        m->sl[k].how = 0;
      }
    }
  }
}

/* Position in by_start of the first launch starting at or after @p t. */
static size_t first_at(const merge_state *m, int64_t t) {
  size_t lo;
  MPROF__LOWER_BOUND(lo, m->tl_count, mid,
                     (int64_t)m->tl[m->by_start[mid]].start < t);
  return lo;
}

/* A first offset from the densest 10 µs window of candidate differences
 * within ±50 ms of the anchor's guess. Returns 1 when there are none. */
static int estimate_by_time(merge_state *m, int64_t *estimate) {
  const int64_t window = 50000000;
  size_t cap = 1 << 20, n = 0;
  int64_t *d = (int64_t *)malloc(cap * sizeof *d);
  if (!d)
    return mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
  for (size_t j = 0; j < m->sl_count && n < cap; j++) {
    if (m->sl[j].how || !m->sl[j].spans)
      continue;
    int64_t at = m->sl[j].min_start;
    for (size_t p = first_at(m, at - window);
         p < m->tl_count && n < cap &&
         (int64_t)m->tl[m->by_start[p]].start <= at + window;
         p++)
      if (candidate(m, &m->fl[j], m->by_start[p]))
        d[n++] = (int64_t)m->tl[m->by_start[p]].start - at;
  }
  if (n == 0) {
    free(d);
    return 1;
  }
  qsort(d, n, sizeof *d, mprof__compare_i64);
  size_t best = 0, best_count = 0, lo = 0;
  for (size_t hi = 0; hi < n; hi++) {
    while (d[hi] - d[lo] > 10000)
      lo++;
    if (hi - lo + 1 > best_count) {
      best_count = hi - lo + 1;
      best = lo;
    }
  }
  *estimate = d[best + (best_count - 1) / 2];
  free(d);
  return 0;
}

/* Each unmatched launch with spans takes the unused CUPTI launch of its
 * kernel whose start is nearest its first span (moved by @p estimate), if
 * that span falls inside the launch give or take the slack; a launch of
 * the same shape wins over one of another. */
static void match_by_time(merge_state *m, int64_t estimate) {
  for (size_t j = 0; j < m->sl_count; j++) {
    source_launch *s = &m->sl[j];
    if (s->how || !s->spans)
      continue;
    int64_t at = s->min_start + estimate;
    size_t best = SIZE_MAX;
    uint64_t best_dist = UINT64_MAX;
    size_t p = first_at(m, at + MATCH_SLACK_NS + 1);
    while (p-- > 0) {
      size_t i = m->by_start[p];
      const mprof_launch_record *l = &m->tl[i];
      if ((int64_t)l->start < at - MATCH_SLACK_NS - m->max_duration)
        break;
      if (m->used[i] || !candidate(m, &m->fl[j], i) ||
          at < (int64_t)l->start - MATCH_SLACK_NS ||
          at > (int64_t)l->end + MATCH_SLACK_NS)
        continue;
      int64_t diff = at - (int64_t)l->start;
      uint64_t dist = diff < 0 ? (uint64_t)-diff : (uint64_t)diff;
      dist += same_shape(m, &m->fl[j], i) ? 0 : 1000000000ull;
      if (dist < best_dist) {
        best_dist = dist;
        best = i;
      }
    }
    if (best != SIZE_MAX) {
      s->cupti = (uint32_t)best;
      s->how = 2;
      m->used[best] = 1;
    }
  }
}

static int align_matched(const merge_state *m, mprof_source_alignment *out) {
  size_t n = 0;
  for (size_t j = 0; j < m->sl_count; j++)
    n += m->sl[j].how && m->sl[j].spans;
  if (!n)
    return 1;
  int64_t *ref = (int64_t *)malloc(n * sizeof *ref);
  int64_t *meas = (int64_t *)malloc(n * sizeof *meas);
  if (!ref || !meas) {
    free(ref);
    free(meas);
    return mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
  }
  n = 0;
  for (size_t j = 0; j < m->sl_count; j++) {
    if (!m->sl[j].how || !m->sl[j].spans)
      continue;
    ref[n] = (int64_t)m->tl[m->sl[j].cupti].start;
    meas[n++] = m->sl[j].min_start;
  }
  int rc = mprof_source_align(out, ref, meas, n);
  free(ref);
  free(meas);
  return rc;
}

typedef struct span_key {
  int64_t start;
  uint32_t launch;
  uint32_t record;
} span_key;

static int cmp_span_key(const void *a, const void *b) {
  const span_key *x = (const span_key *)a, *y = (const span_key *)b;
  MPROF__ORDER_BY(launch);
  MPROF__ORDER_BY(start);
  return x->record < y->record ? -1 : x->record > y->record;
}

/* Everything of @p t except SPANS, DROPS and the code, which the caller
 * writes after adding its own. Indices are kept. */
static int copy_trace_start(mprof_writer *w, const mprof_trace *t) {
  int rc = 0;
  for (mprof_section_type type = MPROF_SECTION_META;
       type <= MPROF_SECTION_SPANS && !rc; type++)
    rc = mprof__copy_section(w, t, type, NULL, NULL);
  return rc;
}

static int copy_trace_end(mprof_writer *w, const mprof_trace *t) {
  static const mprof_section_type tail[] = {
      MPROF_SECTION_STALL_REASONS, MPROF_SECTION_PC_SAMPLES,
      MPROF_SECTION_PM_METRICS,    MPROF_SECTION_PM_SAMPLES,
      MPROF_SECTION_API_CALLS,     MPROF_SECTION_MEMORY_ACCESSES};
  int rc = 0;
  for (size_t i = 0; i < sizeof tail / sizeof tail[0] && !rc; i++)
    rc = mprof__copy_section(w, t, tail[i], NULL, NULL);
  size_t n;
  const mprof_cubin_record *cubins = mprof_trace_cubins(t, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    size_t size = 0;
    const void *blob = mprof_trace_cubin_blob(t, &cubins[i], &size);
    rc = mprof_writer_cubin(w, &cubins[i], blob, size);
  }
  if (!rc)
    rc = mprof__copy_processes(w, t, NULL, NULL, NULL);
  return rc ? rc : mprof__copy_drops(w, t, NULL);
}

static int meta_fmt(mprof_writer *w, const char *key, const char *fmt, ...)
    MPROF__PRINTF(3, 4);

static int meta_fmt(mprof_writer *w, const char *key, const char *fmt, ...) {
  char value[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(value, sizeof value, fmt, ap);
  va_end(ap);
  return mprof_writer_meta(w, key, value);
}

/* Regions referenced by spans but never named: "region N". */
typedef struct extra_regions {
  uint32_t ids[256];
  size_t count;
  int overflow; /* some found no room: they share region count */
} extra_regions;

static uint32_t extra_slot(extra_regions *x, uint32_t id) {
  for (size_t i = 0; i < x->count; i++)
    if (x->ids[i] == id)
      return (uint32_t)i;
  if (x->count < sizeof x->ids / sizeof x->ids[0]) {
    x->ids[x->count] = id;
    return (uint32_t)x->count++;
  }
  x->overflow = 1;
  return (uint32_t)(sizeof x->ids / sizeof x->ids[0]); /* shared overflow */
}

static int write_merged(mprof_writer *w, const merge_state *m,
                        const mprof_source_clock *clock, int64_t offset,
                        uint64_t slack, const mprof_source_merge_options *opts,
                        mprof_source_merge_report *rep) {
  const mprof_trace *t = m->trace;
  const mprof_source_file *f = m->file;
  int rc = copy_trace_start(w, t);
  if (rc)
    return rc;
  size_t existing_regions, region_count, record_count;
  mprof_trace_regions(t, &existing_regions);
  mprof_source_file_regions(f, &region_count);
  const mprof_source_file_record *rec =
      mprof_source_file_records(f, &record_count);
  rc = mprof__source_write_regions(w, f);
  extra_regions extra;
  extra.count = 0;
  extra.overflow = 0;
  for (size_t i = 0; i < record_count; i++)
    if (rec[i].region >= region_count)
      extra_slot(&extra, rec[i].region);
  for (size_t i = 0; i < extra.count + (size_t)extra.overflow && !rc; i++) {
    char name[64];
    if (i < extra.count)
      snprintf(name, sizeof name, "region %u", extra.ids[i]);
    else
      snprintf(name, sizeof name, "other unnamed regions");
    mprof_region_record r = {mprof_writer_string(w, name), 0, MPROF_ROLE_OTHER,
                             0};
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_REGIONS, &r);
  }
  rep->regions = region_count + extra.count + (size_t)extra.overflow;
  if (rc)
    return rc;

  span_key *keys =
      (span_key *)malloc((record_count ? record_count : 1) * sizeof *keys);
  if (!keys)
    return mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
  for (size_t i = 0; i < record_count; i++) {
    keys[i].start = mprof_source_clock_convert(clock, rec[i].start) + offset;
    keys[i].launch = m->sl[rec[i].launch].cupti;
    keys[i].record = (uint32_t)i;
  }
  qsort(keys, record_count, sizeof *keys, cmp_span_key);
  for (size_t k = 0; k < record_count && !rc; k++) {
    const mprof_source_file_record *r = &rec[keys[k].record];
    int64_t start = keys[k].start;
    int64_t end = start + (int64_t)((double)(r->end - r->start) * clock->rate);
    size_t region = r->region < region_count
                        ? r->region
                        : region_count + extra_slot(&extra, r->region);
    mprof_span_record sp = mprof__source_span(
        r, start > 0 ? (uint64_t)start : 0, end > 0 ? (uint64_t)end : 0,
        keys[k].launch, (uint32_t)(existing_regions + region));
    if (sp.launch != MPROF_INDEX_NONE) {
      const mprof_launch_record *l = &m->tl[sp.launch];
      if (sp.start + slack < l->start || sp.end > l->end + slack)
        rep->spans_outside_launch++;
    }
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
  }
  free(keys);
  rep->spans = record_count;
  if (rc)
    return rc;

  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  const char *base = strrchr(mprof__source_file_path(f), '/');
  rc = mprof_writer_meta(w, "source.file",
                         base ? base + 1 : mprof__source_file_path(f));
  rc = rc ? rc : meta_fmt(w, "source.events", "%zu", rep->spans);
  rc = rc ? rc : meta_fmt(w, "source.launches", "%zu", rep->launches);
  rc = rc ? rc
          : meta_fmt(w, "source.launches_matched", "%zu",
                     rep->matched_by_order + rep->matched_by_time);
  rc =
      rc ? rc : meta_fmt(w, "source.launches_unmatched", "%zu", rep->unmatched);
  rc = rc ? rc : mprof_writer_meta(w, "source.alignment_method", rep->method);
  rc = rc ? rc
          : meta_fmt(w, "source.alignment_offset_ns", "%" PRId64,
                     rep->alignment_offset_ns);
  if (rep->alignment_launches) {
    rc = rc ? rc
            : meta_fmt(w, "source.alignment_error_ns", "%" PRIu64,
                       rep->alignment_error_max_ns);
    rc = rc ? rc
            : meta_fmt(w, "source.alignment_error_median_ns", "%" PRIu64,
                       rep->alignment_error_median_ns);
    rc = rc ? rc
            : meta_fmt(w, "source.alignment_launches", "%zu",
                       rep->alignment_launches);
    rc = rc ? rc
            : meta_fmt(w, "source.alignment_drift_ppm", "%.3f",
                       rep->alignment_drift_ppm);
  }
  rc = rc ? rc
          : meta_fmt(w, "source.anchor_offset_ns", "%" PRId64,
                     rep->anchor_offset_ns);
  rc = rc ? rc
          : mprof_writer_meta(w, "source.clock_map",
                              clock->anchored == 2   ? "two anchors (rate)"
                              : clock->anchored == 1 ? "anchor"
                                                     : "identity");
  if (h->timer_step_ns) {
    rc = rc ? rc
            : meta_fmt(w, "source.globaltimer_step_ns", "%u", h->timer_step_ns);
    rc = rc ? rc
            : meta_fmt(w, "source.globaltimer_step_max_ns", "%u",
                       h->timer_step_max_ns);
  }
  rc = rc ? rc : meta_fmt(w, "source.overflow", "%" PRIu64, h->overflow_count);
  rc = rc ? rc
          : meta_fmt(w, "source.capacity", "%" PRIu64 " records", h->capacity);
  rc = rc ? rc
          : meta_fmt(w, "source.spans_outside_launch", "%zu",
                     rep->spans_outside_launch);
  /* The producer's own counters (version 2 options), after ours. */
  if (opts && opts->version >= 2)
    for (size_t i = 0; !rc && i < opts->meta_count; i++)
      rc = mprof_writer_meta(w, opts->meta[2 * i], opts->meta[2 * i + 1]);
  rc = rc ? rc : copy_trace_end(w, t);
  /* Written even when zero: the reader can tell "nothing lost" from "not
   * counted". */
  rc = rc ? rc
          : mprof_writer_drop(w, MPROF_DROP_SPAN_OVERFLOW, MPROF_INDEX_NONE,
                              h->overflow_count);
  return rc;
}

static int merge(const mprof_trace *t, const mprof_source_file *f,
                 const char *out_path, const mprof_source_merge_options *opts,
                 mprof_source_merge_report *rep) {
  merge_state m;
  memset(&m, 0, sizeof m);
  m.trace = t;
  m.file = f;
  m.tl = mprof_trace_launches(t, &m.tl_count);
  size_t n;
  m.shapes = mprof_trace_shapes(t, &n);
  m.streams = mprof_trace_streams(t, &n);
  m.devices = mprof_trace_devices(t, &m.device_count);
  size_t kernel_count, record_count;
  const mprof_source_file_kernel *sk =
      mprof_source_file_kernels(f, &kernel_count);
  const mprof_source_file_record *rec =
      mprof_source_file_records(f, &record_count);
  m.fl = mprof_source_file_launches(f, &m.sl_count);
  const mprof_kernel_record *tk = mprof_trace_kernels(t, &m.trace_kernels);
  if (record_count > UINT32_MAX || m.tl_count > UINT32_MAX)
    return mprof__error_set(MPROF_EUNSUPPORTED,
                            "%s: more than 2^32 spans or launches",
                            mprof__source_file_path(f));
  m.sl = (source_launch *)calloc(m.sl_count ? m.sl_count : 1, sizeof *m.sl);
  m.used = (uint8_t *)calloc(m.tl_count ? m.tl_count : 1, 1);
  size_t match_size = kernel_count * m.trace_kernels;
  m.kernel_match = (uint8_t *)calloc(match_size ? match_size : 1, 1);
  int rc = 0;
  if (!m.sl || !m.used || !m.kernel_match) {
    rc = mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
    goto done;
  }
  for (size_t k = 0; k < kernel_count; k++)
    for (size_t i = 0; i < m.trace_kernels; i++)
      m.kernel_match[k * m.trace_kernels + i] =
          (uint8_t)names_match(mprof_source_file_string(f, sk[k].name),
                               mprof_trace_string(t, tk[i].mangled_name),
                               mprof_trace_string(t, tk[i].demangled_name));

  mprof_source_clock clock;
  mprof_source_clock_from_trace(&clock, t);
  rep->anchor_offset_ns = clock.anchor_trace_ns - clock.anchor_realtime_ns;
  for (size_t j = 0; j < m.sl_count; j++) {
    m.sl[j].cupti = MPROF_INDEX_NONE;
    m.sl[j].min_start = INT64_MAX;
  }
  for (size_t i = 0; i < record_count; i++) {
    source_launch *s = &m.sl[rec[i].launch];
    int64_t a = mprof_source_clock_convert(&clock, rec[i].start);
    s->min_start = a < s->min_start ? a : s->min_start;
    s->spans++;
  }
  rep->launches = m.sl_count;
  for (size_t j = 0; j < m.sl_count; j++)
    rep->launches_with_spans += m.sl[j].spans > 0;

  m.by_start = (uint32_t *)malloc((m.tl_count ? m.tl_count : 1) * 4);
  if (!m.by_start) {
    rc = mprof__error_set(MPROF_ENOMEM, "merging: out of memory");
    goto done;
  }
  for (size_t i = 0; i < m.tl_count; i++) {
    m.by_start[i] = (uint32_t)i;
    int64_t d = (int64_t)(m.tl[i].end - m.tl[i].start);
    m.max_duration = d > m.max_duration ? d : m.max_duration;
  }
  qsort_r(m.by_start, m.tl_count, sizeof *m.by_start, cmp_by_start,
          (void *)m.tl);

  size_t pairs = 0;
  rc = match_by_order(&m, &pairs);
  if (rc)
    goto done;
  int64_t estimate = 0;
  int have_estimate = 0;
  if (pairs) {
    mprof_source_alignment first = MPROF_SOURCE_ALIGNMENT_INIT;
    rc = align_matched(&m, &first);
    if (rc < 0)
      goto done;
    estimate = first.offset_ns;
    have_estimate = 1;
    demote_outliers(&m, estimate);
  }
  int left = 0;
  for (size_t j = 0; j < m.sl_count; j++)
    left |= !m.sl[j].how && m.sl[j].spans;
  if (left && !have_estimate) {
    rc = estimate_by_time(&m, &estimate);
    if (rc < 0)
      goto done;
    have_estimate = rc == 0;
  }
  if (left && have_estimate)
    match_by_time(&m, estimate);
  for (size_t j = 0; j < m.sl_count; j++) {
    rep->matched_by_order += m.sl[j].how == 1 && m.sl[j].spans;
    rep->matched_by_time += m.sl[j].how == 2;
    rep->unmatched += m.sl[j].spans && !m.sl[j].how;
  }
  mprof_source_alignment a = MPROF_SOURCE_ALIGNMENT_INIT;
  rc = align_matched(&m, &a); /* 1: no matched launch, a stays zero */
  if (rc < 0)
    goto done;
  rc = 0;
  int64_t offset = a.offset_ns;
  rep->alignment_offset_ns = a.offset_ns;
  rep->alignment_error_max_ns = a.error_max_ns;
  rep->alignment_error_median_ns = a.error_median_ns;
  rep->alignment_drift_ppm = a.drift_ppm;
  rep->alignment_launches = a.launches;
  snprintf(rep->method, sizeof rep->method, "%s",
           !rep->matched_by_order && !rep->matched_by_time ? "anchor"
           : !rep->matched_by_time                         ? "name+order"
           : !rep->matched_by_order                        ? "time"
                                                           : "mixed");
  if (opts && (opts->flags & MPROF_SOURCE_MERGE_FIXED_OFFSET)) {
    /* The errors stay those of the calibrated offset, measured from it. */
    rep->alignment_offset_ns = offset = opts->offset_ns;
    snprintf(rep->method, sizeof rep->method, "fixed");
  }
  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  rep->overflow = h->overflow_count;
  rep->globaltimer_step_ns = h->timer_step_ns;

  mprof_writer *w;
  rc = mprof_writer_open(&w, out_path, NULL);
  if (rc)
    goto done;
  rc = write_merged(w, &m, &clock, offset,
                    rep->alignment_error_max_ns + h->timer_step_ns, opts, rep);
  if (rc)
    mprof_writer_abort(w);
  else
    rc = mprof_writer_finish(w);
done:
  free(m.sl);
  free(m.used);
  free(m.kernel_match);
  free(m.by_start);
  return rc;
}

MPROF__VERSIONS(merge_report_versions, "source merge report",
                MPROF__END_OF(mprof_source_merge_report, method));

int mprof_source_merge(const char *trace_path, const char *source_path,
                       const char *out_path,
                       const mprof_source_merge_options *opts,
                       mprof_source_merge_report *report) {
  if (!trace_path || !source_path || !out_path)
    return mprof__error_set(MPROF_EINVAL, "mprof_source_merge: NULL path");
  if ((opts && mprof__version_check("source merge options", opts->version, 1,
                                    MPROF_SOURCE_MERGE_OPTIONS_VERSION)) ||
      mprof__result_check(report, &merge_report_versions))
    return MPROF_EVERSION;
  mprof_source_merge_report local = MPROF_SOURCE_MERGE_REPORT_INIT;
  mprof_trace *t;
  int rc = mprof_trace_open(&t, trace_path, NULL);
  if (rc)
    return rc;
  if (mprof_trace_meta(t, "source.events")) {
    mprof_trace_free(t);
    return mprof__error_set(MPROF_EINVAL,
                            "%s: already holds merged source spans "
                            "(META source.events)",
                            trace_path);
  }
  mprof_source_file *f;
  rc = mprof_source_file_open(&f, source_path);
  if (!rc) {
    rc = merge(t, f, out_path, opts, &local);
    mprof_source_file_free(f);
  }
  mprof_trace_free(t);
  if (!rc && report)
    mprof__result_store(report, &local, &merge_report_versions);
  return rc;
}
