/*
 * mprof — the native Perfetto export: a protobuf Trace of TracePackets
 * (perfetto.protos, protos/perfetto/trace/) with TrackDescriptors and
 * TrackEvents, encoded here by hand (docs/EXPORT.md says why).
 *
 * Every track is a packet sequence of its own: its first packet clears the
 * sequence's incremental state and sets the track as the default of its
 * events (TrackEventDefaults), so no event repeats its track; names,
 * argument names and repeated argument values (the verdict sentence, the
 * kernel's full name, the launch shape) are interned per sequence and sent
 * once, in the packet that first uses them.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/export.h"
#include "mprof/names.h"
#include "mprof/units.h"
#include "base/array.h"
#include "base/map.h"
#include "export/export_internal.h"

/* ---- protobuf wire format ------------------------------------------------ */

/* Field numbers from Perfetto's .proto files (protos/perfetto/trace/). */
enum {
  TRACE_PACKET = 1, /* Trace.packet */
  /* TracePacket */
  PKT_CLOCK_SNAPSHOT = 6,
  PKT_TIMESTAMP = 8,
  PKT_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
  PKT_TRACK_EVENT = 11,
  PKT_INTERNED_DATA = 12,
  PKT_SEQUENCE_FLAGS = 13,
  PKT_DEFAULTS = 59, /* trace_packet_defaults */
  PKT_TRACK_DESCRIPTOR = 60,
  SEQ_INCREMENTAL_STATE_CLEARED = 1,
  /* ClockSnapshot */
  SNAPSHOT_CLOCKS = 1,
  SNAPSHOT_PRIMARY_CLOCK = 2, /* primary_trace_clock */
  /* ClockSnapshot.Clock */
  CLOCK_ID = 1,
  CLOCK_TIMESTAMP = 2,
  CLOCK_IS_INCREMENTAL = 3,
  BUILTIN_CLOCK_BOOTTIME = 6,
  INCREMENTAL_CLOCK = 64, /* 64..127: clocks of one sequence */
  /* TracePacketDefaults */
  DEFAULTS_TRACK_EVENT = 11, /* track_event_defaults */
  DEFAULTS_CLOCK_ID = 58,    /* timestamp_clock_id */
  /* TrackEventDefaults */
  TED_TRACK_UUID = 11,
  /* TrackDescriptor */
  TD_UUID = 1,
  TD_NAME = 2,
  TD_PROCESS = 3,
  TD_THREAD = 4,
  TD_PARENT_UUID = 5,
  TD_COUNTER = 8,
  /* ProcessDescriptor */
  PD_PID = 1,
  PD_CMDLINE = 2,
  PD_PROCESS_NAME = 6,
  /* ThreadDescriptor */
  THD_PID = 1,
  THD_TID = 2,
  THD_NAME = 5,
  /* TrackEvent */
  TE_DEBUG_ANNOTATIONS = 4,
  TE_TYPE = 9,
  TE_NAME_IID = 10,
  TE_DOUBLE_COUNTER_VALUE = 44,
  TE_FLOW_IDS = 47,
  TE_TERMINATING_FLOW_IDS = 48,
  TYPE_SLICE_BEGIN = 1,
  TYPE_SLICE_END = 2,
  TYPE_COUNTER = 4,
  /* DebugAnnotation */
  DA_NAME_IID = 1,
  DA_UINT_VALUE = 3,
  DA_DOUBLE_VALUE = 5,
  DA_STRING_VALUE_IID = 17,
  /* InternedData */
  ID_EVENT_NAMES = 2,
  ID_ANNOTATION_NAMES = 3,
  ID_ANNOTATION_STRINGS = 29, /* debug_annotation_string_values */
  /* EventName, DebugAnnotationName: iid, name; InternedString: iid, str */
  INTERNED_IID = 1,
  INTERNED_NAME = 2
};

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2 };

/* A growing byte buffer holding one message being encoded. */
typedef struct pb_buf {
  uint8_t *data;
  size_t len, cap;
  int failed; /* out of memory on the way */
} pb_buf;

static uint8_t *pb_room(pb_buf *b, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
      cap *= 2;
    uint8_t *grown = (uint8_t *)realloc(b->data, cap);
    if (!grown) {
      b->failed = 1;
      return NULL;
    }
    b->data = grown;
    b->cap = cap;
  }
  return b->data + b->len;
}

static void pb_varint(pb_buf *b, uint64_t v) {
  uint8_t *p = pb_room(b, 10);
  if (!p)
    return;
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  b->len += n;
}

static void pb_tag(pb_buf *b, unsigned field, unsigned wire) {
  pb_varint(b, ((uint64_t)field << 3) | wire);
}

static void pb_uint(pb_buf *b, unsigned field, uint64_t v) {
  pb_tag(b, field, WIRE_VARINT);
  pb_varint(b, v);
}

static void pb_fixed64(pb_buf *b, unsigned field, uint64_t v) {
  pb_tag(b, field, WIRE_FIXED64);
  uint8_t *p = pb_room(b, 8);
  if (!p)
    return;
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
  b->len += 8;
}

static void pb_double(pb_buf *b, unsigned field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  pb_fixed64(b, field, bits);
}

static void pb_bytes(pb_buf *b, unsigned field, const void *data, size_t n) {
  pb_tag(b, field, WIRE_BYTES);
  pb_varint(b, n);
  uint8_t *p = pb_room(b, n);
  if (!p)
    return;
  memcpy(p, data, n);
  b->len += n;
}

static void pb_string(pb_buf *b, unsigned field, const char *s) {
  pb_bytes(b, field, s, strlen(s));
}

/* Append @p child to @p parent as field @p field and empty it. */
static void pb_message(pb_buf *parent, unsigned field, pb_buf *child) {
  if (child->failed)
    parent->failed = 1;
  pb_bytes(parent, field, child->data, child->len);
  child->len = 0;
  child->failed = 0;
}

/* ---- interning, per sequence -------------------------------------------- */

/* The three interned tables this export uses. */
enum { TABLE_EVENT_NAMES, TABLE_ANNOTATION_NAMES, TABLE_STRINGS, TABLES };
static const unsigned table_field[TABLES] = {
    ID_EVENT_NAMES, ID_ANNOTATION_NAMES, ID_ANNOTATION_STRINGS};

typedef struct intern_table {
  const char **strings; /* iid i + 1 is strings[i]; borrowed, or owned
                           copies in pf_writer.owned */
  size_t count, capacity;
  mprof__map index;
} intern_table;

/* ---- the writer -------------------------------------------------------- */

typedef struct pf_writer {
  FILE *f;
  uint64_t origin;
  pb_buf packet, event, inner, interned, entry;
  intern_table tables[TABLES];
  uint64_t next_uuid;
  uint32_t sequence; /* the sequence being written */
  int sequence_started;
  size_t events;
  /* strings made up here (names of copies), kept until the sequence that
   * interned them is done */
  char **owned;
  size_t owned_count, owned_capacity;
  /* iids of strings that stay put (names, verdicts), by address: most
   * events find theirs here without hashing the string */
  struct {
    const char *s;
    uint32_t sequence;
    uint32_t table;
    uint64_t iid;
  } recent[4096];
  uint64_t last_ts; /* of the sequence's incremental clock */
  pb_buf out;       /* whole packets, written out a megabyte at a time */
} pf_writer;

static int pf_oom(void) {
  return mprof__error_set(MPROF_ENOMEM, "out of memory");
}

static void intern_reset(pf_writer *w) {
  for (int t = 0; t < TABLES; t++) {
    w->tables[t].count = 0;
    mprof__map_clear(&w->tables[t].index);
  }
  for (size_t i = 0; i < w->owned_count; i++)
    free(w->owned[i]);
  w->owned_count = 0;
}

static uint64_t pf_intern_content(pf_writer *w, int table, const char *s,
                                  int copy);

/* The iid of @p s in table @p table of the current sequence; a new one is
 * also added to the packet's InternedData. @p s must live until the
 * sequence ends, unless @p copy asks for a copy that does. 0 when out of
 * memory (the writer then fails). */
static uint64_t pf_intern(pf_writer *w, int table, const char *s, int copy) {
  size_t slot = 0;
  if (!copy) {
    slot = (size_t)(mprof__hash_pointer(s) ^ (uint64_t)table) &
           (sizeof w->recent / sizeof w->recent[0] - 1);
    if (w->recent[slot].s == s && w->recent[slot].sequence == w->sequence &&
        w->recent[slot].table == (uint32_t)table)
      return w->recent[slot].iid;
  }
  uint64_t iid = pf_intern_content(w, table, s, copy);
  if (!copy && iid) {
    w->recent[slot].s = s;
    w->recent[slot].sequence = w->sequence;
    w->recent[slot].table = (uint32_t)table;
    w->recent[slot].iid = iid;
  }
  return iid;
}

static uint64_t pf_intern_content(pf_writer *w, int table, const char *s,
                                  int copy) {
  intern_table *t = &w->tables[table];
  size_t len = strlen(s);
  uint64_t hash = mprof__hash64(s, len);
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&t->index, hash, &cursor)) != MPROF__MAP_NONE)
    if (strcmp(t->strings[i], s) == 0)
      return (uint64_t)i + 1;
  if (copy) {
    char *c = NULL;
    if (!MPROF__GROW(w->owned, w->owned_capacity, w->owned_count + 1) &&
        (c = (char *)malloc(len + 1)) != NULL) {
      memcpy(c, s, len + 1);
      w->owned[w->owned_count++] = c;
    }
    if (!c) {
      w->packet.failed = 1;
      return 0;
    }
    s = c;
  }
  if (MPROF__GROW(t->strings, t->capacity, t->count + 1) ||
      mprof__map_add(&t->index, hash, (uint32_t)t->count)) {
    w->packet.failed = 1;
    return 0;
  }
  t->strings[t->count++] = s;
  uint64_t iid = t->count;
  pb_uint(&w->entry, INTERNED_IID, iid);
  pb_bytes(&w->entry, INTERNED_NAME, s, len);
  pb_message(&w->interned, table_field[table], &w->entry);
  return iid;
}

/* Write the packet being built (w->packet, with w->event as its track
 * event at time @p ts when @p with_event) after the others. Times are on
 * the sequence's incremental clock: each the nanoseconds since the
 * sequence's previous event (events of a sequence come in time order). */
static void pf_flush_packet(pf_writer *w, uint64_t ts, int with_event) {
  pb_buf *p = &w->packet;
  if (with_event) {
    uint64_t t = ts > w->origin ? ts - w->origin : 0;
    pb_uint(p, PKT_TIMESTAMP, t >= w->last_ts ? t - w->last_ts : 0);
    w->last_ts = t >= w->last_ts ? t : w->last_ts;
    pb_message(p, PKT_TRACK_EVENT, &w->event);
    w->events++;
  }
  pb_uint(p, PKT_SEQUENCE_ID, w->sequence);
  if (w->interned.len)
    pb_message(p, PKT_INTERNED_DATA, &w->interned);
  pb_message(&w->out, TRACE_PACKET, p);
  if (w->out.len >= (1u << 20) && !w->out.failed) {
    fwrite(w->out.data, 1, w->out.len, w->f);
    w->out.len = 0;
  }
}

/* Begin a new track: a descriptor packet that also opens its sequence.
 * @p kind: TD_PROCESS, TD_THREAD, TD_COUNTER or 0 (a plain child track).
 * Returns the track's uuid. */
typedef struct pf_track {
  int kind;
  uint64_t parent;
  const char *name;
  uint32_t pid;
  uint64_t tid;
  const char *cmdline;
} pf_track;

static uint64_t pf_track_begin(pf_writer *w, const pf_track *t) {
  uint64_t uuid = ++w->next_uuid;
  w->sequence++;
  intern_reset(w);
  pb_buf *p = &w->packet, *d = &w->event, *in = &w->inner;
  /* The first packet of the sequence: its state starts afresh, and its
   * events go on this track, timed on the sequence's own clock. */
  pb_uint(p, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
  pb_uint(in, TED_TRACK_UUID, uuid);
  pb_message(d, DEFAULTS_TRACK_EVENT, in);
  pb_uint(d, DEFAULTS_CLOCK_ID, INCREMENTAL_CLOCK);
  pb_message(p, PKT_DEFAULTS, d);
  pf_flush_packet(w, 0, 0);
  /* The second defines that clock: incremental, starting at the set's
   * origin, which is 0 on the trace's clock (BOOTTIME as far as Perfetto
   * knows). */
  pb_uint(in, CLOCK_ID, INCREMENTAL_CLOCK);
  pb_uint(in, CLOCK_TIMESTAMP, 0);
  pb_uint(in, CLOCK_IS_INCREMENTAL, 1);
  pb_message(d, SNAPSHOT_CLOCKS, in);
  pb_uint(in, CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
  pb_uint(in, CLOCK_TIMESTAMP, 0);
  pb_message(d, SNAPSHOT_CLOCKS, in);
  pb_uint(d, SNAPSHOT_PRIMARY_CLOCK, BUILTIN_CLOCK_BOOTTIME);
  pb_message(p, PKT_CLOCK_SNAPSHOT, d);
  pf_flush_packet(w, 0, 0);
  w->last_ts = 0;
  /* The third describes the track (a packet carries one payload: a
   * snapshot, a descriptor or an event). */
  pb_uint(d, TD_UUID, uuid);
  if (t->parent)
    pb_uint(d, TD_PARENT_UUID, t->parent);
  if (t->kind == TD_PROCESS) {
    pb_uint(in, PD_PID, t->pid);
    if (t->cmdline && *t->cmdline)
      pb_string(in, PD_CMDLINE, t->cmdline);
    pb_string(in, PD_PROCESS_NAME, t->name);
    pb_message(d, TD_PROCESS, in);
  } else if (t->kind == TD_THREAD) {
    pb_uint(in, THD_PID, t->pid);
    pb_uint(in, THD_TID, t->tid);
    pb_string(in, THD_NAME, t->name);
    pb_message(d, TD_THREAD, in);
  } else {
    pb_string(d, TD_NAME, t->name);
    if (t->kind == TD_COUNTER)
      pb_message(d, TD_COUNTER, in); /* an empty CounterDescriptor */
  }
  pb_message(p, PKT_TRACK_DESCRIPTOR, d);
  pf_flush_packet(w, 0, 0);
  return uuid;
}

/* Debug annotations on w->event. */
static void pf_arg_uint(pf_writer *w, const char *name, uint64_t v) {
  pb_uint(&w->inner, DA_NAME_IID,
          pf_intern(w, TABLE_ANNOTATION_NAMES, name, 0));
  pb_uint(&w->inner, DA_UINT_VALUE, v);
  pb_message(&w->event, TE_DEBUG_ANNOTATIONS, &w->inner);
}

static void pf_arg_double(pf_writer *w, const char *name, double v) {
  pb_uint(&w->inner, DA_NAME_IID,
          pf_intern(w, TABLE_ANNOTATION_NAMES, name, 0));
  pb_double(&w->inner, DA_DOUBLE_VALUE, v);
  pb_message(&w->event, TE_DEBUG_ANNOTATIONS, &w->inner);
}

/* A string value sent once per sequence (@p value must live as long). */
static void pf_arg_interned(pf_writer *w, const char *name, const char *value) {
  pb_uint(&w->inner, DA_NAME_IID,
          pf_intern(w, TABLE_ANNOTATION_NAMES, name, 0));
  pb_uint(&w->inner, DA_STRING_VALUE_IID,
          pf_intern(w, TABLE_STRINGS, value, 0));
  pb_message(&w->event, TE_DEBUG_ANNOTATIONS, &w->inner);
}

/* A slice begins, named @p name (copied when @p copy; else it lives as
 * long as the sequence). */
static void pf_begin(pf_writer *w, const char *name, int copy) {
  pb_uint(&w->event, TE_TYPE, TYPE_SLICE_BEGIN);
  pb_uint(&w->event, TE_NAME_IID, pf_intern(w, TABLE_EVENT_NAMES, name, copy));
}

static void pf_end(pf_writer *w, uint64_t ts) {
  pb_uint(&w->event, TE_TYPE, TYPE_SLICE_END);
  pf_flush_packet(w, ts, 1);
}

/* ---- what goes on the tracks -------------------------------------------- */

enum { SLICE_LAUNCH, SLICE_MEMOP, SLICE_RANGE, SLICE_CALL, SLICE_SPAN };

/* One slice: its group (the track it belongs on, before lanes), times and
 * the record it shows. */
typedef struct pf_slice {
  uint64_t group;
  uint64_t start, end;
  uint32_t kind;
  uint32_t index;
  uint32_t lane;
  uint32_t order; /* place in the sorted group, to keep lanes in order */
} pf_slice;

static int slice_order(const void *a, const void *b) {
  const pf_slice *x = (const pf_slice *)a, *y = (const pf_slice *)b;
  MPROF__ORDER_BY(group);
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY_DESC(end); /* the outer slice first */
  MPROF__ORDER_BY(kind);     /* a range before the call it holds */
  return x->index < y->index ? -1 : x->index > y->index;
}

static int lane_order(const void *a, const void *b) {
  const pf_slice *x = (const pf_slice *)a, *y = (const pf_slice *)b;
  MPROF__ORDER_BY(lane);
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Groups: the kind of track in the top bits. */
#define GROUP_THREAD (1ull << 60)
#define GROUP_STREAM (2ull << 60)
#define GROUP_SM (3ull << 60)

/* Correlation ids, sorted, to find a flow's other end. */
static int u32_order(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id) {
  size_t at;
  MPROF__LOWER_BOUND(at, n, mid, ids[mid] < id);
  return at < n && ids[at] == id;
}

typedef struct pf_trace {
  size_t index;
  const mprof_diagnosis *diag;
  const mprof_join *join;
  const mprof_trace *trace;
  const unsigned char *selected;
  uint64_t host_track;
  uint32_t host_pid;
  uint64_t *gpu_tracks; /* per device: [2d] the GPU, [2d + 1] its SMs */
  uint32_t *call_ids;   /* correlation ids of API calls, sorted */
  size_t call_count;
  uint32_t *gpu_ids; /* of exported launches and copies, sorted */
  size_t gpu_count;
  /* interned strings made once per trace */
  char **shape_text;  /* per SHAPES record: "grid 32x32x1, block 16x16x1" */
  char **short_names; /* per join kernel */
  int multi;          /* one of several traces: GPU names say which */
} pf_trace;

static uint64_t flow_id(const pf_trace *t, uint32_t correlation) {
  return ((uint64_t)t->index << 32) | correlation;
}

/* The events of one slice: its begin here, its end later. */
static void pf_slice_begin(pf_writer *w, const pf_trace *t, const pf_slice *s) {
  const mprof_trace *trace = t->trace;
  char name[256];
  if (s->kind == SLICE_LAUNCH) {
    size_t n;
    const mprof_launch_record *l = &mprof_trace_launches(trace, &n)[s->index];
    uint32_t k = mprof_join_launch_kernel(t->join, s->index);
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(t->diag, k);
    pf_begin(w, t->short_names[k], 0);
    pf_arg_interned(w, "kernel", kd->stats->name);
    if (t->shape_text[l->shape])
      pf_arg_interned(w, "launch", t->shape_text[l->shape]);
    pf_arg_uint(w, "correlation_id", l->correlation_id);
    if (l->graph_id)
      pf_arg_uint(w, "graph_id", l->graph_id);
    pf_arg_interned(w, "verdict", kd->verdict ? kd->verdict : "");
    if (l->correlation_id &&
        has_id(t->call_ids, t->call_count, l->correlation_id))
      pb_fixed64(&w->event, TE_TERMINATING_FLOW_IDS,
                 flow_id(t, l->correlation_id));
  } else if (s->kind == SLICE_MEMOP) {
    size_t n;
    const mprof_memop_record *m = &mprof_trace_memops(trace, &n)[s->index];
    char size[32];
    mprof_format_bytes(size, sizeof size, (double)m->bytes);
    int memset_op = m->kind == MPROF_MEMOP_MEMSET;
    const char *kind = mprof_copy_kind_name(m->copy_kind);
    snprintf(name, sizeof name, "%s%s%s %s", memset_op ? "Memset" : "Memcpy",
             *kind && !memset_op ? " " : "", memset_op ? "" : kind, size);
    pf_begin(w, name, 1);
    pf_arg_uint(w, "bytes", m->bytes);
    pf_arg_uint(w, "correlation_id", m->correlation_id);
    if (m->end > m->start)
      pf_arg_double(w, "bandwidth_GBps",
                    (double)m->bytes / (double)(m->end - m->start));
    if (m->correlation_id &&
        has_id(t->call_ids, t->call_count, m->correlation_id))
      pb_fixed64(&w->event, TE_TERMINATING_FLOW_IDS,
                 flow_id(t, m->correlation_id));
  } else if (s->kind == SLICE_RANGE) {
    size_t n;
    const mprof_range_record *r = &mprof_trace_ranges(trace, &n)[s->index];
    const char *range = mprof_trace_string(trace, r->name);
    const char *domain = mprof_trace_string(trace, r->domain);
    pf_begin(w, *range ? range : "(unnamed range)", 0);
    if (*domain)
      pf_arg_interned(w, "domain", domain);
  } else if (s->kind == SLICE_CALL) {
    size_t n;
    const mprof_api_call_record *c =
        &mprof_trace_api_calls(trace, &n)[s->index];
    pf_begin(w, mprof_trace_string(trace, c->name), 0);
    if (c->correlation_id &&
        has_id(t->gpu_ids, t->gpu_count, c->correlation_id))
      pb_fixed64(&w->event, TE_FLOW_IDS, flow_id(t, c->correlation_id));
  } else {
    size_t n, regions;
    const mprof_span_record *sp = &mprof_trace_spans(trace, &n)[s->index];
    const mprof_region_record *reg = mprof_trace_regions(trace, &regions);
    const char *region = sp->region < regions
                             ? mprof_trace_string(trace, reg[sp->region].name)
                             : "";
    pf_begin(w, *region ? region : "span", 0);
    pf_arg_uint(w, "block", sp->block);
    if (sp->warp != MPROF_INDEX_NONE)
      pf_arg_uint(w, "warp", sp->warp);
    if (sp->payload)
      pf_arg_uint(w, "payload", sp->payload);
  }
  pf_flush_packet(w, s->start, 1);
}

/* The process track of GPU @p device (an index into DEVICES), or of its
 * SMs. */
static uint64_t gpu_track(pf_writer *w, const pf_trace *t, uint32_t device,
                          int sms) {
  size_t n;
  const mprof_device_record *d = &mprof_trace_devices(t->trace, &n)[device];
  char name[512];
  snprintf(name, sizeof name, "GPU %u%s: %s%s%s", d->id, sms ? " SMs" : "",
           mprof_trace_string(t->trace, d->name), t->multi ? " — " : "",
           t->multi ? mprof__export_base_name(mprof_trace_path(t->trace)) : "");
  pf_track gpu = {TD_PROCESS,
                  0,
                  name,
                  0x40000000u + (uint32_t)t->index * 0x10000u + device * 2u +
                      (uint32_t)sms,
                  0,
                  NULL};
  return pf_track_begin(w, &gpu);
}

/* The name of lane @p lane of group @p group. */
static void group_name(char *out, size_t size, const pf_trace *t,
                       uint64_t group, uint32_t lane) {
  uint64_t id = group & ((1ull << 60) - 1);
  char base[160];
  if ((group & (3ull << 60)) == GROUP_THREAD)
    snprintf(base, sizeof base, "thread %llu", (unsigned long long)id);
  else if ((group & (3ull << 60)) == GROUP_STREAM) {
    size_t n;
    const mprof_stream_record *s = &mprof_trace_streams(t->trace, &n)[id];
    const char *label = mprof_trace_string(t->trace, s->name);
    snprintf(base, sizeof base, "stream %u%s%s%s", s->stream_id,
             *label ? " (" : "", label, *label ? ")" : "");
  } else
    snprintf(base, sizeof base, "SM %llu",
             (unsigned long long)(id & 0xffffffffu));
  if (lane)
    snprintf(out, size, "%s · lane %u", base, lane + 1);
  else
    snprintf(out, size, "%s", base);
}

/* The track of lane @p lane of @p group. */
static uint64_t group_track(pf_writer *w, pf_trace *t, uint64_t group,
                            uint32_t lane, uint32_t device) {
  char name[200];
  group_name(name, sizeof name, t, group, lane);
  pf_track track = {0, 0, name, 0, 0, NULL};
  uint64_t kind = group & (3ull << 60);
  if (kind == GROUP_THREAD) {
    track.parent = t->host_track;
    if (!lane) { /* the thread's own track; more lanes sit beside it */
      track.kind = TD_THREAD;
      track.pid = t->host_pid;
      track.tid = group & 0xffffffffu;
      track.parent = 0;
    }
  } else {
    size_t n;
    mprof_trace_devices(t->trace, &n);
    if (device < n) {
      size_t at = 2 * device + (kind == GROUP_SM);
      if (!t->gpu_tracks[at]) /* the SMs, once the first span needs them */
        t->gpu_tracks[at] = gpu_track(w, t, device, 1);
      track.parent = t->gpu_tracks[at];
    }
  }
  return pf_track_begin(w, &track);
}

/* Lay the slices of one group out in lanes (a slice goes to the first lane
 * where it nests in what is open or follows it, so every lane is a stack)
 * and write each lane as a track. */
static int pf_group(pf_writer *w, pf_trace *t, pf_slice *s, size_t n,
                    uint32_t device) {
  uint64_t **open = NULL; /* per lane, the ends of its open slices */
  size_t *depth = NULL, *capacity = NULL, lanes = 0, lane_capacity = 0;
  int rc = MPROF_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    s[i].order = (uint32_t)i;
    size_t chosen = lanes;
    for (size_t l = 0; l < lanes; l++) {
      while (depth[l] && open[l][depth[l] - 1] <= s[i].start)
        depth[l]--;
      if (!depth[l] || open[l][depth[l] - 1] >= s[i].end) {
        chosen = l;
        break;
      }
    }
    if (chosen == lanes) {
      if (lanes == lane_capacity) {
        size_t cap = lane_capacity ? 2 * lane_capacity : 4;
        uint64_t **o = (uint64_t **)realloc(open, cap * sizeof *o);
        if (o)
          open = o;
        size_t *d = (size_t *)realloc(depth, cap * sizeof *d);
        if (d)
          depth = d;
        size_t *c = (size_t *)realloc(capacity, cap * sizeof *c);
        if (c)
          capacity = c;
        if (!o || !d || !c) {
          rc = pf_oom();
          break;
        }
        lane_capacity = cap;
      }
      open[lanes] = NULL;
      depth[lanes] = capacity[lanes] = 0;
      lanes++;
    }
    if (MPROF__GROW(open[chosen], capacity[chosen], depth[chosen] + 1)) {
      rc = pf_oom();
      break;
    }
    open[chosen][depth[chosen]++] = s[i].end;
    s[i].lane = (uint32_t)chosen;
  }
  for (size_t l = 0; l < lanes; l++)
    free(open[l]);
  free(open);
  free(capacity);
  if (rc) {
    free(depth);
    return rc;
  }
  if (lanes > 1)
    qsort(s, n, sizeof *s, lane_order);
  /* Each lane: begins in order, each end once nothing inside it is open. */
  uint64_t *stack = NULL;
  size_t stack_capacity = 0;
  for (size_t i = 0; i < n && !rc;) {
    uint32_t lane = s[i].lane;
    group_track(w, t, s[i].group, lane, device);
    size_t top = 0;
    for (; i < n && s[i].lane == lane; i++) {
      while (top && stack[top - 1] <= s[i].start)
        pf_end(w, stack[--top]);
      if (MPROF__GROW(stack, stack_capacity, top + 1)) {
        rc = pf_oom();
        break;
      }
      pf_slice_begin(w, t, &s[i]);
      stack[top++] = s[i].end > s[i].start ? s[i].end : s[i].start;
    }
    while (top)
      pf_end(w, stack[--top]);
  }
  free(stack);
  free(depth);
  return rc;
}

static uint32_t stream_device(const mprof_trace *trace, uint32_t stream) {
  size_t n;
  const mprof_stream_record *s = mprof_trace_streams(trace, &n);
  return stream < n ? s[stream].device : MPROF_INDEX_NONE;
}

/* Every slice of trace @p t, grouped by track. */
static int pf_slices(pf_trace *t, pf_slice **out, size_t *out_count) {
  const mprof_trace *trace = t->trace;
  size_t nl, nm, nr, nc, ns;
  const mprof_launch_record *l = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *m = mprof_trace_memops(trace, &nm);
  const mprof_range_record *r = mprof_trace_ranges(trace, &nr);
  const mprof_api_call_record *c = mprof_trace_api_calls(trace, &nc);
  const mprof_span_record *sp = mprof_trace_spans(trace, &ns);
  size_t total = nl + nm + nr + nc + ns;
  pf_slice *s = (pf_slice *)malloc((total ? total : 1) * sizeof *s);
  t->call_ids = (uint32_t *)malloc((nc ? nc : 1) * sizeof *t->call_ids);
  t->gpu_ids = (uint32_t *)malloc((nl + nm ? nl + nm : 1) * sizeof(uint32_t));
  if (!s || !t->call_ids || !t->gpu_ids) {
    free(s);
    return pf_oom();
  }
  size_t n = 0;
  for (size_t i = 0; i < nl; i++) {
    uint32_t k = mprof_join_launch_kernel(t->join, i);
    if (k == MPROF_INDEX_NONE || !t->selected[k])
      continue;
    s[n++] = (pf_slice){GROUP_STREAM | l[i].stream,
                        l[i].start,
                        l[i].end,
                        SLICE_LAUNCH,
                        (uint32_t)i,
                        0,
                        0};
    if (l[i].correlation_id)
      t->gpu_ids[t->gpu_count++] = l[i].correlation_id;
  }
  for (size_t i = 0; i < nm; i++) {
    s[n++] = (pf_slice){GROUP_STREAM | m[i].stream,
                        m[i].start,
                        m[i].end,
                        SLICE_MEMOP,
                        (uint32_t)i,
                        0,
                        0};
    if (m[i].correlation_id)
      t->gpu_ids[t->gpu_count++] = m[i].correlation_id;
  }
  for (size_t i = 0; i < nr; i++)
    s[n++] = (pf_slice){GROUP_THREAD | r[i].thread_id,
                        r[i].start,
                        r[i].end,
                        SLICE_RANGE,
                        (uint32_t)i,
                        0,
                        0};
  /* A flow starts at the first call of a correlation id. */
  for (size_t i = 0; i < nc; i++) {
    s[n++] = (pf_slice){GROUP_THREAD | c[i].thread_id,
                        c[i].start,
                        c[i].end,
                        SLICE_CALL,
                        (uint32_t)i,
                        0,
                        0};
    t->call_ids[t->call_count++] = c[i].correlation_id;
  }
  for (size_t i = 0; i < ns; i++) {
    uint32_t device = MPROF_INDEX_NONE;
    if (sp[i].launch < nl) {
      uint32_t k = mprof_join_launch_kernel(t->join, sp[i].launch);
      if (k != MPROF_INDEX_NONE && !t->selected[k])
        continue;
      device = stream_device(trace, l[sp[i].launch].stream);
    }
    s[n++] =
        (pf_slice){GROUP_SM | ((uint64_t)(device & 0xffffu) << 32) | sp[i].sm,
                   sp[i].start,
                   sp[i].end,
                   SLICE_SPAN,
                   (uint32_t)i,
                   0,
                   0};
  }
  qsort(t->call_ids, t->call_count, sizeof *t->call_ids, u32_order);
  qsort(t->gpu_ids, t->gpu_count, sizeof *t->gpu_ids, u32_order);
  qsort(s, n, sizeof *s, slice_order);
  *out = s;
  *out_count = n;
  return MPROF_OK;
}

/* The launch shapes as one string each, and the kernels' short names. */
static int pf_shapes(pf_trace *t) {
  size_t n, nk;
  const mprof_shape_record *shapes = mprof_trace_shapes(t->trace, &n);
  const mprof_kernel_record *kernels = mprof_trace_kernels(t->trace, &nk);
  t->shape_text = (char **)calloc(n ? n : 1, sizeof *t->shape_text);
  if (!t->shape_text)
    return pf_oom();
  for (size_t i = 0; i < n; i++) {
    const mprof_shape_record *s = &shapes[i];
    const mprof_kernel_record *k = s->kernel < nk ? &kernels[s->kernel] : NULL;
    char text[256], cluster[64] = "";
    if (s->cluster[0])
      snprintf(cluster, sizeof cluster, ", cluster %ux%ux%u", s->cluster[0],
               s->cluster[1], s->cluster[2]);
    snprintf(text, sizeof text,
             "grid %ux%ux%u, block %ux%ux%u%s, %u registers, %u + %u bytes "
             "shared",
             s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1],
             s->block[2], cluster, k ? k->registers : 0,
             k ? k->static_shared : 0, s->dynamic_shared);
    size_t len = strlen(text) + 1;
    t->shape_text[i] = (char *)malloc(len);
    if (!t->shape_text[i])
      return pf_oom();
    memcpy(t->shape_text[i], text, len);
  }
  size_t kernel_count = mprof_join_kernel_count(t->join);
  t->short_names =
      (char **)calloc(kernel_count ? kernel_count : 1, sizeof(char *));
  if (!t->short_names)
    return pf_oom();
  for (size_t k = 0; k < kernel_count; k++) {
    /* The trace's own short names: unique within it (names.h). */
    const char *name = mprof_join_kernel_short(t->join, k);
    size_t len = strlen(name) + 1;
    if (!(t->short_names[k] = (char *)malloc(len)))
      return pf_oom();
    memcpy(t->short_names[k], name, len);
  }
  return MPROF_OK;
}

/* Each PM metric of the trace: a counter track under its GPU, set by each
 * sample that measured it, in time order. */
static int pf_counters(pf_writer *w, const pf_trace *t) {
  size_t nm, ns, nd;
  const mprof_pm_metric_record *metrics = mprof_trace_pm_metrics(t->trace, &nm);
  const mprof_pm_sample_record *samples = mprof_trace_pm_samples(t->trace, &ns);
  mprof_trace_devices(t->trace, &nd);
  if (!nm || !ns)
    return MPROF_OK;
  pf_slice *order = (pf_slice *)malloc(ns * sizeof *order);
  if (!order)
    return pf_oom();
  for (size_t i = 0; i < ns; i++)
    order[i] =
        (pf_slice){0, samples[i].start, samples[i].start, 0, (uint32_t)i, 0, 0};
  qsort(order, ns, sizeof *order, slice_order);
  for (size_t m = 0; m < nm; m++) {
    if (metrics[m].column >= MPROF_PM_MAX_METRICS)
      continue;
    const char *name = mprof_trace_string(t->trace, metrics[m].name);
    const char *unit = mprof_trace_string(t->trace, metrics[m].unit);
    char title[256];
    snprintf(title, sizeof title, "%s%s%s%s", name, *unit ? " (" : "", unit,
             *unit ? ")" : "");
    pf_track track = {
        TD_COUNTER,
        metrics[m].device < nd ? t->gpu_tracks[2 * metrics[m].device] : 0,
        title,
        0,
        0,
        NULL};
    pf_track_begin(w, &track);
    for (size_t o = 0; o < ns; o++) {
      const mprof_pm_sample_record *sample = &samples[order[o].index];
      float v = sample->value[metrics[m].column];
      if (sample->device != metrics[m].device || v != v)
        continue;
      pb_uint(&w->event, TE_TYPE, TYPE_COUNTER);
      pb_double(&w->event, TE_DOUBLE_COUNTER_VALUE, (double)v);
      pf_flush_packet(w, sample->start, 1);
    }
  }
  free(order);
  return MPROF_OK;
}

static int pf_one_trace(pf_writer *w, pf_trace *t, int multi) {
  const mprof_trace *trace = t->trace;
  size_t processes;
  const mprof_process_record *p = mprof_trace_processes(trace, &processes);
  t->host_pid =
      processes == 1 && p->pid ? p->pid : 0x20000000u + (uint32_t)t->index;
  const char *base = mprof__export_base_name(mprof_trace_path(trace));
  const char *cmd = mprof_trace_process_meta(trace, 0, "cmdline");
  pf_track host = {TD_PROCESS,  0, base,
                   t->host_pid, 0, processes == 1 ? cmd : NULL};
  t->host_track = pf_track_begin(w, &host);
  size_t nd;
  mprof_trace_devices(trace, &nd);
  t->gpu_tracks = (uint64_t *)calloc(2 * (nd ? nd : 1), sizeof *t->gpu_tracks);
  if (!t->gpu_tracks)
    return pf_oom();
  t->multi = multi;
  for (size_t d = 0; d < nd; d++)
    t->gpu_tracks[2 * d] = gpu_track(w, t, (uint32_t)d, 0);
  int rc = pf_shapes(t);
  pf_slice *s = NULL;
  size_t n = 0;
  if (!rc)
    rc = pf_slices(t, &s, &n);
  for (size_t i = 0; i < n && !rc;) {
    size_t j = i;
    while (j < n && s[j].group == s[i].group)
      j++;
    uint64_t kind = s[i].group & (3ull << 60);
    uint32_t device = MPROF_INDEX_NONE;
    if (kind == GROUP_STREAM)
      device = stream_device(trace, (uint32_t)(s[i].group & 0xffffffffu));
    else if (kind == GROUP_SM)
      device = (uint32_t)((s[i].group >> 32) & 0xffffu);
    rc = pf_group(w, t, s + i, j - i, device);
    i = j;
  }
  free(s);
  if (!rc)
    rc = pf_counters(w, t);
  return rc;
}

static void pf_trace_free(pf_trace *t) {
  size_t n;
  mprof_trace_shapes(t->trace, &n);
  for (size_t i = 0; t->shape_text && i < n; i++)
    free(t->shape_text[i]);
  free(t->shape_text);
  size_t kernels = mprof_join_kernel_count(t->join);
  for (size_t k = 0; t->short_names && k < kernels; k++)
    free(t->short_names[k]);
  free(t->short_names);
  free(t->gpu_tracks);
  free(t->call_ids);
  free(t->gpu_ids);
}

int mprof__export_perfetto(FILE *f, const mprof_diagnosis *const *traces,
                           size_t count, const mprof__export_selection *sel,
                           size_t *events) {
  pf_writer *w = (pf_writer *)calloc(1, sizeof *w);
  if (!w)
    return pf_oom();
  w->f = f;
  w->origin = mprof__export_origin(
      traces, count,
      MPROF__ORIGIN_API_CALLS | MPROF__ORIGIN_SPANS | MPROF__ORIGIN_PM_SAMPLES);
  int rc = MPROF_OK;
  for (size_t i = 0; i < count && !rc; i++) {
    pf_trace t;
    memset(&t, 0, sizeof t);
    t.index = i;
    t.diag = traces[i];
    t.join = mprof_diagnosis_join(traces[i]);
    t.trace = mprof_join_trace(t.join);
    t.selected = sel->selected[i];
    rc = pf_one_trace(w, &t, count > 1);
    pf_trace_free(&t);
  }
  if (!rc && (w->packet.failed || w->event.failed || w->inner.failed ||
              w->interned.failed || w->entry.failed || w->out.failed))
    rc = pf_oom();
  if (!rc)
    fwrite(w->out.data, 1, w->out.len, f);
  intern_reset(w);
  for (int i = 0; i < TABLES; i++) {
    free(w->tables[i].strings);
    mprof__map_free(&w->tables[i].index);
  }
  free(w->owned);
  free(w->packet.data);
  free(w->event.data);
  free(w->inner.data);
  free(w->interned.data);
  free(w->entry.data);
  free(w->out.data);
  *events = w->events;
  free(w);
  return rc;
}
