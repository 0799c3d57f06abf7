/*
 * mprof — a set of traces opened as one, without a scratch file: a view
 * over the members' mappings (format/set.h).
 *
 * The set numbers everything as mprof_trace_merge() would write it (each
 * table appended member after member, format/merge.c), so every index,
 * accessor and report means the same as for the merged file. The small
 * tables are built at open; an event section is built, in memory, the
 * first time someone asks the set for it (the viewer, an export); the
 * join and the diagnosis read events from the members in place instead.
 * A cubin's bytes stay in their member's file.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/pool.h"
#include "format/copy.h"
#include "format/set.h"
#include "format/trace_internal.h"
#include "internal.h"
#include "mprof/trace.h"

typedef struct set_member {
  const mprof_trace *trace;
  mprof__move move;
  uint32_t string_base;              /* added to its string refs */
  uint64_t blob_base;                /* its BLOBS' offset in the set's */
  size_t record_base[SECTION_COUNT]; /* the set's index of its first */
} set_member;

typedef struct mprof__set mprof__set;

struct mprof__set {
  size_t count;
  set_member *members;  /* each held (mprof__trace_hold()) until freed */
  pthread_mutex_t lock; /* building a section on first use */
  int correlated;       /* the moves' correlations are set */
  unsigned char ready[SECTION_COUNT]; /* read and set atomically */
  /* The set's strings: a 0 byte, each member's table, then its own. */
  char *strings;
  size_t strings_size, strings_cap;
  /* META while building. */
  mprof_meta_record *meta;
  size_t meta_count, meta_cap;
};

size_t mprof__set_member_count(const mprof_trace *t) {
  return t && t->set ? t->set->count : 0;
}

const mprof_trace *mprof__set_member(const mprof_trace *t, size_t i,
                                     const mprof__move **move) {
  if (!t || !t->set || i >= t->set->count)
    return NULL;
  if (move)
    *move = &t->set->members[i].move;
  return t->set->members[i].trace;
}

size_t mprof__trace_records(const mprof_trace *t, mprof_section_type type) {
  size_t n = 0, total = 0;
  if (!t || !t->set || (uint32_t)type >= SECTION_COUNT ||
      __atomic_load_n(&t->set->ready[type], __ATOMIC_ACQUIRE)) {
    mprof_trace_section(t, type, &n);
    return n;
  }
  for (size_t i = 0; i < t->set->count; i++)
    total += mprof__trace_records(t->set->members[i].trace, type);
  return total;
}

size_t mprof_trace_member_count(const mprof_trace *trace) {
  return mprof__set_member_count(trace);
}

const mprof_trace *mprof_trace_member(const mprof_trace *trace, size_t index) {
  return mprof__set_member(trace, index, NULL);
}

/* A string of the set's own: its ref, or MPROF_STR_NONE without memory. */
static uint32_t own_string(mprof__set *s, const char *text, int *failed) {
  size_t n = strlen(text) + 1;
  if (MPROF__GROW(s->strings, s->strings_cap, s->strings_size + n)) {
    *failed = 1;
    return MPROF_STR_NONE;
  }
  memcpy(s->strings + s->strings_size, text, n);
  s->strings_size += n;
  return (uint32_t)(s->strings_size - n);
}

/* Move the time at @p at by @p shift ns; 0 stays unknown (as copy.c). */
static void shift_time(uint8_t *at, int64_t shift) {
  uint64_t time = mprof__u64_at(at);
  int64_t moved = (int64_t)time + shift;
  time = time && moved > 0 ? (uint64_t)moved : 0;
  memcpy(at, &time, sizeof time);
}

/* @p n records of section @p type of member @p m, moved into the set's
 * numbering as mprof__copy_record() moves them into a merged file. */
static void move_records(uint8_t *dst, const uint8_t *src, size_t n,
                         uint32_t type, const set_member *m) {
  size_t size = mprof__record_size(type), count;
  const record_field *fields = mprof__section_fields(type, &count);
  if (n)
    memcpy(dst, src, n * size);
  for (size_t i = 0; i < n; i++) {
    uint8_t *rec = dst + i * size;
    for (size_t c = 0; c < count; c++) {
      const record_field *f = &fields[c];
      uint8_t *at = rec + f->offset;
      if (f->kind == FIELD_TIMES) {
        if (m->move.shift) {
          shift_time(at, m->move.shift);
          shift_time(rec + f->aux, m->move.shift);
        }
        continue;
      }
      uint32_t v = mprof__u32_at(at);
      if (f->kind == FIELD_STRING)
        v = v == MPROF_STR_NONE ? v : v + m->string_base;
      else if (f->kind == FIELD_CORRELATION)
        v = v ? v + m->move.correlations : v; /* 0 stays unknown */
      else
        v = mprof__moved(v, m->move.base[f->aux]);
      memcpy(at, &v, sizeof v);
    }
  }
}

/* The members' correlation ids moved apart, before the first section with
 * any is built (the scan of every such record is no part of opening). */
static int correlate(mprof__set *s, uint32_t type) {
  size_t count;
  const record_field *fields = mprof__section_fields(type, &count);
  int any = 0;
  for (size_t c = 0; c < count; c++)
    any |= fields[c].kind == FIELD_CORRELATION;
  if (!any || s->correlated)
    return 0;
  const mprof_trace **traces =
      (const mprof_trace **)malloc(s->count * sizeof *traces);
  mprof__move *moves = (mprof__move *)malloc(s->count * sizeof *moves);
  if (!traces || !moves) {
    free(traces);
    free(moves);
    return mprof__error_set(MPROF_ENOMEM, "set: out of memory");
  }
  for (size_t i = 0; i < s->count; i++) {
    traces[i] = s->members[i].trace;
    moves[i] = s->members[i].move;
  }
  mprof__merge_correlations(traces, s->count, moves);
  for (size_t i = 0; i < s->count; i++)
    s->members[i].move.correlations = moves[i].correlations;
  s->correlated = 1;
  free(traces);
  free(moves);
  return 0;
}

/* Section @p type of the set from its members' records (the set's lock
 * held, or at open). */
static int build_section(mprof_trace *t, uint32_t type) {
  mprof__set *s = t->set;
  int rc = correlate(s, type);
  if (rc)
    return rc;
  section_view *v = &t->sections[type];
  size_t size = mprof__record_size(type), total = 0;
  for (size_t i = 0; i < s->count; i++) {
    size_t n;
    mprof_trace_section(s->members[i].trace, (mprof_section_type)type, &n);
    total += n;
  }
  if (!total)
    return 0;
  uint8_t *data = (uint8_t *)malloc(total * size);
  if (!data)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  for (size_t i = 0, at = 0; i < s->count; i++) {
    size_t n;
    const uint8_t *src = (const uint8_t *)mprof_trace_section(
        s->members[i].trace, (mprof_section_type)type, &n);
    move_records(data + at * size, src, n, type, &s->members[i]);
    at += n;
  }
  v->owned = data;
  v->data = data;
  v->count = total;
  v->length = (uint64_t)total * size;
  v->record_size = (uint32_t)size;
  return 0;
}

/* The bytes of @p t's BLOBS; of a set, its members' together (built or
 * not). */
static uint64_t blob_bytes(const mprof_trace *t) {
  if (!t->set ||
      __atomic_load_n(&t->set->ready[MPROF_SECTION_BLOBS], __ATOMIC_ACQUIRE))
    return t->sections[MPROF_SECTION_BLOBS].length;
  uint64_t total = 0;
  for (size_t i = 0; i < t->set->count; i++)
    total += blob_bytes(t->set->members[i].trace);
  return total;
}

/* The bytes of the members' BLOBS one after the other, and the merged
 * SOURCES: for whoever asks the set for the section itself. */
static int build_bytes(mprof_trace *t, uint32_t type) {
  mprof__set *s = t->set;
  section_view *v = &t->sections[type];
  unsigned char *data = NULL;
  size_t total = 0;
  if (type == MPROF_SECTION_SOURCES) {
    const mprof_trace **traces =
        (const mprof_trace **)malloc(s->count * sizeof *traces);
    if (!traces)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
    for (size_t i = 0; i < s->count; i++)
      traces[i] = s->members[i].trace;
    int rc = mprof__merge_sources(traces, s->count, &data, &total);
    free(traces);
    if (rc)
      return rc;
  } else {
    for (size_t i = 0; i < s->count; i++)
      total += blob_bytes(s->members[i].trace);
    if (!total)
      return 0;
    data = (unsigned char *)malloc(total);
    if (!data)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
    for (size_t i = 0, at = 0; i < s->count; i++) {
      const mprof_trace *m = s->members[i].trace;
      size_t length = 0;
      const void *bytes = mprof_trace_section(m, MPROF_SECTION_BLOBS, NULL);
      if (bytes)
        length = (size_t)m->sections[MPROF_SECTION_BLOBS].length;
      if (length)
        memcpy(data + at, bytes, length);
      at += length;
    }
  }
  v->owned = data;
  v->data = data;
  v->length = total; /* bytes: records of one byte, as read from a file */
  v->count = total;
  v->record_size = 1;
  return 0;
}

/* The sections built at open; every other one on first use. */
static int built_at_open(uint32_t type) {
  switch (type) {
  case MPROF_SECTION_META:
  case MPROF_SECTION_STRINGS:
  case MPROF_SECTION_DEVICES:
  case MPROF_SECTION_STREAMS:
  case MPROF_SECTION_KERNELS:
  case MPROF_SECTION_SHAPES:
  case MPROF_SECTION_STALL_REASONS:
  case MPROF_SECTION_CUBINS:
  case MPROF_SECTION_DROPS:
  case MPROF_SECTION_PM_METRICS:
  case MPROF_SECTION_PROCESSES:
  case MPROF_SECTION_CAPTURE:
  case MPROF_SECTION_OPEN_RANGES: /* a merge writes none */ return 1;
  default: return 0;
  }
}

int mprof__set_section(const mprof_trace *trace, uint32_t type) {
  if (!trace || !trace->set || type >= SECTION_COUNT)
    return 0;
  mprof__set *s = trace->set;
  if (__atomic_load_n(&s->ready[type], __ATOMIC_ACQUIRE))
    return 0;
  pthread_mutex_lock(&s->lock);
  int rc = 0;
  if (!s->ready[type]) {
    mprof_trace *t = (mprof_trace *)trace; /* the set's own cache */
    if (type == MPROF_SECTION_BLOBS || type == MPROF_SECTION_SOURCES)
      rc = build_bytes(t, type);
    else if (mprof__record_size(type))
      rc = build_section(t, type);
    if (!rc)
      __atomic_store_n(&s->ready[type], 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}

const void *mprof__set_cubin_blob(const mprof_trace *t,
                                  const mprof_cubin_record *cubin,
                                  size_t *size) {
  const mprof__set *s = t->set;
  for (size_t i = s->count; i-- > 0;) {
    const set_member *m = &s->members[i];
    if (cubin->blob_offset < m->blob_base)
      continue;
    mprof_cubin_record own = *cubin;
    own.blob_offset -= m->blob_base;
    return mprof_trace_cubin_blob(m->trace, &own, size);
  }
  return NULL;
}

/* ---- the small tables, at open ------------------------------------------ */

static int put_meta(void *ctx, const char *key, const char *value) {
  mprof__set *s = (mprof__set *)ctx;
  int failed = 0;
  if (MPROF__GROW(s->meta, s->meta_cap, s->meta_count + 1))
    return mprof__error_set(MPROF_ENOMEM, "set: out of memory");
  mprof_meta_record *r = &s->meta[s->meta_count++];
  memset(r, 0, sizeof *r);
  r->key = own_string(s, key, &failed);
  r->value = own_string(s, value, &failed);
  return failed ? mprof__error_set(MPROF_ENOMEM, "set: out of memory") : 0;
}

static void set_view(section_view *v, void *data, size_t count, uint32_t type) {
  v->owned = (unsigned char *)data;
  v->data = (const unsigned char *)data;
  v->count = count;
  v->record_size = mprof__record_size(type);
  v->length = (uint64_t)count * v->record_size;
}

/* Streams named after their process, processes with their file and clock,
 * cubins with their blobs' place, drops summed per (kind, device): as
 * mprof_trace_merge() writes them. */
static int build_tables(mprof_trace *t) {
  mprof__set *s = t->set;
  int rc = 0, failed = 0;
  size_t streams = 0, processes = 0, cubins = 0, drops = 0;
  for (size_t i = 0; i < s->count; i++) {
    size_t n;
    mprof_trace_streams(s->members[i].trace, &n);
    streams += n;
    processes += mprof_trace_process_count(s->members[i].trace);
    mprof_trace_cubins(s->members[i].trace, &n);
    cubins += n;
    mprof_trace_drops(s->members[i].trace, &n);
    drops += n;
  }
  mprof_stream_record *st =
      (mprof_stream_record *)malloc((streams ? streams : 1) * sizeof *st);
  mprof_process_record *pr =
      (mprof_process_record *)malloc((processes ? processes : 1) * sizeof *pr);
  mprof_cubin_record *cu =
      (mprof_cubin_record *)malloc((cubins ? cubins : 1) * sizeof *cu);
  mprof_drop_record *dr =
      (mprof_drop_record *)malloc((drops ? drops : 1) * sizeof *dr);
  if (!st || !pr || !cu || !dr) {
    free(st);
    free(pr);
    free(cu);
    free(dr);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  }
  size_t ns = 0, np = 0, nc = 0, nd = 0;
  for (size_t i = 0; i < s->count; i++) {
    const set_member *m = &s->members[i];
    size_t n;
    const mprof_stream_record *ms = mprof_trace_streams(m->trace, &n);
    move_records((uint8_t *)(st + ns), (const uint8_t *)ms, n,
                 MPROF_SECTION_STREAMS, m);
    for (size_t k = 0; k < n; k++) {
      char named[512];
      mprof__merge_stream_name(m->trace, (uint32_t)k, named, sizeof named);
      st[ns + k].name = own_string(s, named, &failed);
    }
    ns += n;
    const mprof_process_record *mp = mprof_trace_processes(m->trace, &n);
    move_records((uint8_t *)(pr + np), (const uint8_t *)mp, n,
                 MPROF_SECTION_PROCESSES, m);
    for (size_t k = 0; k < n; k++) {
      if (!pr[np + k].path)
        pr[np + k].path = own_string(s, mprof_trace_path(m->trace), &failed);
      pr[np + k].clock_shift += m->move.shift;
    }
    np += n;
    const mprof_cubin_record *mc = mprof_trace_cubins(m->trace, &n);
    for (size_t k = 0; k < n; k++) {
      cu[nc] = mc[k];
      cu[nc].device =
          mprof__moved(mc[k].device, m->move.base[MPROF_SECTION_DEVICES]);
      cu[nc++].blob_offset += m->blob_base;
    }
    const mprof_drop_record *md = mprof_trace_drops(m->trace, &n);
    for (size_t k = 0; k < n; k++) {
      uint32_t device =
          mprof__moved(md[k].device, m->move.base[MPROF_SECTION_DEVICES]);
      size_t d = 0;
      while (d < nd && !(dr[d].kind == md[k].kind && dr[d].device == device))
        d++;
      if (d == nd) {
        dr[nd] = md[k];
        dr[nd++].device = device;
      } else {
        dr[d].count += md[k].count;
      }
    }
  }
  set_view(&t->sections[MPROF_SECTION_STREAMS], st, ns, MPROF_SECTION_STREAMS);
  set_view(&t->sections[MPROF_SECTION_PROCESSES], pr, np,
           MPROF_SECTION_PROCESSES);
  set_view(&t->sections[MPROF_SECTION_CUBINS], cu, nc, MPROF_SECTION_CUBINS);
  set_view(&t->sections[MPROF_SECTION_DROPS], dr, nd, MPROF_SECTION_DROPS);
  static const uint32_t moved[] = {
      MPROF_SECTION_DEVICES,    MPROF_SECTION_KERNELS,
      MPROF_SECTION_SHAPES,     MPROF_SECTION_STALL_REASONS,
      MPROF_SECTION_PM_METRICS, MPROF_SECTION_CAPTURE};
  for (size_t k = 0; k < sizeof moved / sizeof moved[0] && !rc; k++)
    rc = build_section(t, moved[k]);
  if (!rc && failed)
    rc = mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  return rc;
}

/* Per-stream launch order, the longest launch per stream and the time
 * bounds, from the members' (trace_validate.c builds them for a file). */
static int build_order(mprof_trace *t) {
  mprof__set *s = t->set;
  size_t streams, launches = 0;
  mprof_trace_streams(t, &streams);
  int sorted = 1, need_order = 0;
  for (size_t i = 0; i < s->count; i++) {
    const mprof_trace *m = s->members[i].trace;
    size_t n;
    mprof_trace_launches(m, &n);
    launches += n;
    sorted &= (mprof_trace_flags(m) & MPROF_FILE_FLAG_LAUNCHES_SORTED) != 0;
    need_order |= m->order != NULL;
  }
  t->flags = sorted ? MPROF_FILE_FLAG_LAUNCHES_SORTED : 0;
  t->stream_first = (size_t *)calloc(streams + 1, sizeof *t->stream_first);
  t->stream_max_duration =
      (uint64_t *)calloc(streams ? streams : 1, sizeof(uint64_t));
  if (need_order)
    t->order = (uint32_t *)malloc((launches ? launches : 1) * sizeof *t->order);
  if (!t->stream_first || !t->stream_max_duration || (need_order && !t->order))
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t at = 0;
  for (size_t i = 0; i < s->count; i++) {
    const set_member *sm = &s->members[i];
    const mprof_trace *m = sm->trace;
    size_t n, launch_base = sm->record_base[MPROF_SECTION_LAUNCHES];
    mprof_trace_streams(m, &n);
    uint32_t first = sm->move.base[MPROF_SECTION_STREAMS];
    for (size_t k = 0; k < n; k++) {
      t->stream_first[first + k] = at + m->stream_first[k];
      t->stream_max_duration[first + k] = m->stream_max_duration[k];
    }
    size_t count;
    mprof_trace_launches(m, &count);
    for (size_t k = 0; need_order && k < count; k++)
      t->order[at + k] =
          (uint32_t)(launch_base + (m->order ? m->order[k] : (uint32_t)k));
    at += count;
    if (m->time_end) {
      uint8_t start[8], end[8];
      memcpy(start, &m->time_start, 8);
      memcpy(end, &m->time_end, 8);
      shift_time(start, sm->move.shift);
      shift_time(end, sm->move.shift);
      uint64_t a = mprof__u64_at(start), b = mprof__u64_at(end);
      lo = a < lo ? a : lo;
      hi = b > hi ? b : hi;
    }
  }
  t->stream_first[streams] = at;
  t->time_start = lo == UINT64_MAX ? 0 : lo;
  t->time_end = hi;
  return 0;
}

/* The set of @p count @p traces named @p name; it holds each of them (a
 * trace the caller frees stays open until the set is freed) when
 * @p hold, else takes them over. */
static int open_view(mprof_trace **out, const mprof_trace *const *traces,
                     size_t count, const char *name, int hold) {
  mprof_trace *t = (mprof_trace *)calloc(1, sizeof *t);
  mprof__set *s = (mprof__set *)calloc(1, sizeof *s);
  set_member *members = (set_member *)calloc(count, sizeof *members);
  char *path = strdup(name ? name : "set");
  if (!t || !s || !members || !path) {
    free(t);
    free(s);
    free(members);
    free(path);
    if (!hold)
      for (size_t i = 0; i < count; i++)
        mprof_trace_free((mprof_trace *)traces[i]);
    return mprof__error_set(MPROF_ENOMEM, "set: out of memory");
  }
  t->set = s;
  t->path = path;
  pthread_mutex_init(&s->lock, NULL);
  s->members = members;
  s->count = count;
  for (size_t i = 0; i < count; i++) {
    members[i].trace = traces[i];
    if (hold)
      mprof__trace_hold(traces[i]);
  }
  mprof__move *moves = (mprof__move *)calloc(count, sizeof *moves);
  int rc = 0;
  if (!moves)
    rc = mprof__error_set(MPROF_ENOMEM, "set: out of memory");
  uint32_t processes = 0;
  if (!rc)
    rc = mprof__merge_moves(traces, count, moves, &processes);
  int failed = 0;
  own_string(s, "", &failed); /* ref 0: "" (MPROF_STR_NONE) */
  size_t base[SECTION_COUNT] = {0};
  uint64_t blobs = 0;
  for (size_t i = 0; i < count && !rc; i++) {
    set_member *m = &s->members[i];
    m->move = moves[i];
    memcpy(m->record_base, base, sizeof base);
    for (uint32_t type = 1; type < SECTION_COUNT; type++)
      if (mprof__record_size(type))
        base[type] += mprof__trace_records(traces[i], (mprof_section_type)type);
    m->blob_base = blobs;
    blobs += blob_bytes(traces[i]);
    t->map_size += traces[i]->map_size;
    const section_view *str = &traces[i]->sections[MPROF_SECTION_STRINGS];
    m->string_base = (uint32_t)s->strings_size;
    if ((uint64_t)s->strings_size + str->length > UINT32_MAX)
      rc = mprof__error_set(MPROF_EFORMAT, "%s: the set's strings pass 4 GiB",
                            t->path);
    else if (MPROF__GROW(s->strings, s->strings_cap,
                         s->strings_size + (size_t)str->length))
      failed = 1;
    else if (str->length) {
      memcpy(s->strings + s->strings_size, str->data, (size_t)str->length);
      s->strings_size += (size_t)str->length;
    }
  }
  if (!rc && failed)
    rc = mprof__error_set(MPROF_ENOMEM, "set: out of memory");
  if (!rc)
    rc = mprof__merge_meta(traces, count, moves, processes, put_meta, s);
  if (!rc)
    rc = build_tables(t);
  free(moves);
  if (!rc) {
    set_view(&t->sections[MPROF_SECTION_META], s->meta, s->meta_count,
             MPROF_SECTION_META);
    s->meta = NULL;
    /* The strings are complete: their final place. */
    section_view *v = &t->sections[MPROF_SECTION_STRINGS];
    v->owned = (unsigned char *)s->strings;
    v->data = v->owned;
    v->length = s->strings_size;
    v->count = s->strings_size;
    v->record_size = 1;
    s->strings = NULL;
    for (uint32_t type = 1; type < SECTION_COUNT; type++)
      if (built_at_open(type))
        s->ready[type] = 1;
    rc = build_order(t);
  }
  if (!rc)
    rc = mprof__trace_index_processes(t);
  if (rc) {
    mprof_trace_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

void mprof__set_free(mprof_trace *t) {
  mprof__set *s = t->set;
  if (!s)
    return;
  for (size_t i = 0; i < s->count; i++)
    mprof_trace_free((mprof_trace *)s->members[i].trace);
  free(s->members);
  free(s->strings);
  free(s->meta);
  pthread_mutex_destroy(&s->lock);
  free(s);
  t->set = NULL;
}

int mprof_trace_open_merged(mprof_trace **out, const mprof_trace *const *traces,
                            size_t count, const char *name) {
  if (!out || !traces || !count)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_open_merged: nothing "
                                          "to open");
  *out = NULL;
  for (size_t i = 0; i < count; i++)
    if (!traces[i])
      return mprof__error_set(MPROF_EINVAL,
                              "mprof_trace_open_merged: trace %zu is NULL", i);
  return open_view(out, traces, count, name, 1);
}
