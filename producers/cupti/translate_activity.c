/*
 * mprof CUPTI producer — kernels, copies, memsets and NVTX ranges: CUPTI
 * activity records into LAUNCHES, MEMOPS and RANGES.
 *
 * SPDX-License-Identifier: MIT
 */
#include "translate_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/status.h"

/* ---- activity records --------------------------------------------------- */

static uint32_t stream_locked(mprof_cupti_translate *t, uint32_t device,
                              uint32_t context_id, uint32_t stream_id) {
  mprof_stream_record rec;
  memset(&rec, 0, sizeof rec);
  rec.device = device;
  rec.context_id = context_id;
  rec.stream_id = stream_id;
  uint32_t index = MPROF_INDEX_NONE;
  if (mprof_writer_intern(t->w, &index, MPROF_SECTION_STREAMS, &rec) != 0)
    return MPROF_INDEX_NONE;
  return index;
}

/* A record needs both timestamps, in order, to be placed on the timeline. */
static int timed_locked(mprof_cupti_translate *t, uint32_t device,
                        uint64_t start, uint64_t end) {
  if (start == 0 || end == 0 || end < start) {
    t->stats.no_timestamp++;
    mprof_writer_drop(t->w, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, device, 1);
    return 0;
  }
  tr_note_time(t, end);
  return 1;
}

int mprof_cupti_translate_kernel(mprof_cupti_translate *t,
                                 const CUpti_ActivityKernel10 *k) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = tr_device_locked(t, k->deviceId);
  if (!timed_locked(t, device, k->start, k->end))
    goto out;
  name_entry *e = tr_name_get(t, k->name ? k->name : "");
  if (!e) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  if (!tr_name_matches(t, e)) {
    t->stats.filtered_launches++;
    goto out;
  }
  for (uint32_t i = 0; i < e->module_count; i++)
    t->modules[e->modules[i]].used = 1;
  e->launched = 1;

  mprof_kernel_record kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.mangled_name = tr_name_string(t, e);
  kernel.function_index = MPROF_INDEX_NONE;
  /* The record names no module; a name found in exactly one loaded module
   * pins both. Otherwise post-processing joins by name. */
  if (e->module_count == 1) {
    kernel.cubin_crc = t->modules[e->modules[0]].crc;
    kernel.function_index = e->function_index;
  }
  kernel.device = device;
  kernel.registers = k->registersPerThread;
  kernel.static_shared = tr_clamp_u32(k->staticSharedMemory);
  kernel.local_per_thread = k->localMemoryPerThread;
  uint32_t kernel_index = 0;
  rc = mprof_writer_intern(t->w, &kernel_index, MPROF_SECTION_KERNELS, &kernel);
  if (rc)
    goto out;

  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = kernel_index;
  shape.grid[0] = tr_clamp_u32(k->gridX);
  shape.grid[1] = tr_clamp_u32(k->gridY);
  shape.grid[2] = tr_clamp_u32(k->gridZ);
  shape.block[0] = tr_clamp_u32(k->blockX);
  shape.block[1] = tr_clamp_u32(k->blockY);
  shape.block[2] = tr_clamp_u32(k->blockZ);
  shape.cluster[0] = k->clusterX;
  shape.cluster[1] = k->clusterY;
  shape.cluster[2] = k->clusterZ;
  shape.dynamic_shared = tr_clamp_u32(k->dynamicSharedMemory);
  shape.launch_type = k->launchType;
  uint32_t shape_index = 0;
  rc = mprof_writer_intern(t->w, &shape_index, MPROF_SECTION_SHAPES, &shape);
  if (rc)
    goto out;

  mprof_launch_record launch;
  memset(&launch, 0, sizeof launch);
  launch.start = k->start;
  launch.end = k->end;
  launch.shape = shape_index;
  launch.stream = stream_locked(t, device, k->contextId, k->streamId);
  launch.correlation_id = k->correlationId;
  launch.graph_id = k->graphId;
  launch.graph_node_id = k->graphNodeId;
  if (launch.stream == MPROF_INDEX_NONE) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_LAUNCHES, &launch);
  if (rc == 0)
    t->stats.launches++;
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

static uint16_t copy_kind(uint8_t cupti_kind) {
  switch (cupti_kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return MPROF_COPY_HTOD;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return MPROF_COPY_DTOH;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return MPROF_COPY_DTOD;
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return MPROF_COPY_HTOH;
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return MPROF_COPY_PTOP;
  default: return MPROF_COPY_UNKNOWN;
  }
}

/* Store a memcpy/memset record the caller filled in (all but its stream),
 * unless the translator is finished or CUPTI gave it no timestamps. */
static int add_memop(mprof_cupti_translate *t, uint32_t device_id,
                     uint32_t context_id, uint32_t stream_id,
                     mprof_memop_record *rec) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = tr_device_locked(t, device_id);
  if (!timed_locked(t, device, rec->start, rec->end))
    goto out;
  rec->stream = stream_locked(t, device, context_id, stream_id);
  if (rec->stream == MPROF_INDEX_NONE) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_MEMOPS, rec);
  if (rc == 0)
    t->stats.memops++;
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* The fields every MEMOPS record has. */
static mprof_memop_record memop_of(uint64_t start, uint64_t end, uint64_t bytes,
                                   uint32_t correlation_id, uint16_t kind) {
  mprof_memop_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = start;
  rec.end = end;
  rec.bytes = bytes;
  rec.correlation_id = correlation_id;
  rec.kind = kind;
  return rec;
}

int mprof_cupti_translate_memcpy(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemcpy6 *m) {
  mprof_memop_record rec = memop_of(m->start, m->end, m->bytes,
                                    m->correlationId, MPROF_MEMOP_MEMCPY);
  rec.copy_kind = copy_kind(m->copyKind);
  /* Which side is host follows from the direction; the record only names
   * the device that ran the copy. */
  switch (rec.copy_kind) {
  case MPROF_COPY_HTOD:
    rec.src_device = MPROF_INDEX_NONE;
    rec.dst_device = m->deviceId;
    break;
  case MPROF_COPY_DTOH:
    rec.src_device = m->deviceId;
    rec.dst_device = MPROF_INDEX_NONE;
    break;
  case MPROF_COPY_HTOH:
    rec.src_device = MPROF_INDEX_NONE;
    rec.dst_device = MPROF_INDEX_NONE;
    break;
  default:
    rec.src_device = m->deviceId;
    rec.dst_device = m->deviceId;
    break;
  }
  return add_memop(t, m->deviceId, m->contextId, m->streamId, &rec);
}

int mprof_cupti_translate_memcpy_p2p(mprof_cupti_translate *t,
                                     const CUpti_ActivityMemcpyPtoP4 *m) {
  mprof_memop_record rec = memop_of(m->start, m->end, m->bytes,
                                    m->correlationId, MPROF_MEMOP_MEMCPY);
  rec.copy_kind = MPROF_COPY_PTOP;
  rec.src_device = m->srcDeviceId;
  rec.dst_device = m->dstDeviceId;
  return add_memop(t, m->deviceId, m->contextId, m->streamId, &rec);
}

int mprof_cupti_translate_memset(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemset4 *m) {
  mprof_memop_record rec = memop_of(m->start, m->end, m->bytes,
                                    m->correlationId, MPROF_MEMOP_MEMSET);
  rec.value = m->value;
  rec.src_device = MPROF_INDEX_NONE;
  rec.dst_device = m->deviceId;
  return add_memop(t, m->deviceId, m->contextId, m->streamId, &rec);
}

/* ---- NVTX markers ------------------------------------------------------- */

static uint32_t marker_thread(const CUpti_ActivityMarker2 *m) {
  if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
      m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
    return m->objectId.pt.threadId;
  return 0;
}

/* ---- ranges waiting for their END: found by id, counted per thread ------ */

static uint64_t id_hash(uint32_t id) { return tr_mix64(id); }

static uint64_t thread_hash(uint32_t thread_id) {
  return tr_mix64(0x9e3779b97f4a7c15ull ^ thread_id);
}

/* The open-range count of @p thread_id, created at 0; NULL without memory. */
static thread_depth *thread_depth_get(mprof_cupti_translate *t,
                                      uint32_t thread_id) {
  uint64_t hash = thread_hash(thread_id);
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&t->depth_ids, hash, &cursor)) != MPROF__MAP_NONE)
    if (t->depths[i].thread_id == thread_id)
      return &t->depths[i];
  if (t->depth_count >= UINT32_MAX - 1 ||
      mprof__map_reserve(&t->depth_ids, t->depth_count + 1) != 0)
    return NULL;
  if (t->depth_count == t->depth_capacity) {
    size_t capacity = t->depth_capacity ? t->depth_capacity * 2 : 16;
    thread_depth *grown =
        (thread_depth *)realloc(t->depths, capacity * sizeof *grown);
    if (!grown)
      return NULL;
    t->depths = grown;
    t->depth_capacity = capacity;
  }
  thread_depth *d = &t->depths[t->depth_count];
  d->thread_id = thread_id;
  d->open = 0;
  mprof__map_add(&t->depth_ids, hash, (uint32_t)t->depth_count++);
  return d;
}

/* The index in open[] of the range with marker id @p id, or SIZE_MAX. */
static size_t open_find(const mprof_cupti_translate *t, uint32_t id) {
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&t->open_ids, id_hash(id), &cursor)) !=
         MPROF__MAP_NONE)
    if (t->open[i].id == id)
      return i;
  return SIZE_MAX;
}

static int open_add(mprof_cupti_translate *t, const open_range *r) {
  if (t->open_count >= UINT32_MAX - 1 ||
      mprof__map_reserve(&t->open_ids, t->open_count + 1) != 0)
    return MPROF_ENOMEM;
  if (t->open_count == t->open_capacity) {
    size_t capacity = t->open_capacity ? t->open_capacity * 2 : 16;
    open_range *grown =
        (open_range *)realloc(t->open, capacity * sizeof *t->open);
    if (!grown)
      return MPROF_ENOMEM;
    t->open = grown;
    t->open_capacity = capacity;
  }
  t->open[t->open_count] = *r;
  mprof__map_add(&t->open_ids, id_hash(r->id), (uint32_t)t->open_count++);
  return 0;
}

/* Take open[@p i] out; the last range moves into its place. */
static void open_remove(mprof_cupti_translate *t, size_t i) {
  mprof__map_remove(&t->open_ids, id_hash(t->open[i].id), (uint32_t)i);
  size_t last = --t->open_count;
  if (i == last)
    return;
  mprof__map_remove(&t->open_ids, id_hash(t->open[last].id), (uint32_t)last);
  t->open[i] = t->open[last];
  /* two entries out, one in: no room needed */
  mprof__map_add(&t->open_ids, id_hash(t->open[i].id), (uint32_t)i);
}

static int by_start(const void *a, const void *b) {
  const open_range *x = (const open_range *)a, *y = (const open_range *)b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

void tr_ranges_close_all(mprof_cupti_translate *t, uint64_t end) {
  if (t->open_count > 1)
    qsort(t->open, t->open_count, sizeof *t->open, by_start);
  for (size_t i = 0; i < t->open_count; i++)
    tr_range_append(t, &t->open[i], end, MPROF_RANGE_FLAG_OPEN);
  t->open_count = 0;
  mprof__map_clear(&t->open_ids);
  for (size_t i = 0; i < t->depth_count; i++)
    t->depths[i].open = 0;
}

void tr_ranges_free(mprof_cupti_translate *t) {
  free(t->open);
  mprof__map_free(&t->open_ids);
  free(t->depths);
  mprof__map_free(&t->depth_ids);
}

static mprof_range_record range_record(const open_range *r, uint64_t end,
                                       uint32_t flags) {
  mprof_range_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = r->start;
  rec.end = end < r->start ? r->start : end;
  rec.name = r->name;
  rec.domain = r->domain;
  rec.thread_id = r->thread_id;
  rec.depth = r->depth;
  rec.color = r->color;
  rec.flags = flags;
  return rec;
}

int tr_range_append(mprof_cupti_translate *t, const open_range *r, uint64_t end,
                    uint32_t flags) {
  mprof_range_record rec = range_record(r, end, flags);
  int rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_RANGES, &rec);
  if (rc == 0)
    t->stats.ranges++;
  return rc;
}

int mprof_cupti_translate_marker(mprof_cupti_translate *t,
                                 const CUpti_ActivityMarker2 *m) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t flags = (uint32_t)m->flags;
  int instant = (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
  int start = (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
  int end = (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0;
  if (!instant && !start && !end)
    goto out; /* synchronisation markers: nothing to draw */
  if (m->timestamp == 0) {
    t->stats.no_timestamp++;
    mprof_writer_drop(t->w, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, MPROF_INDEX_NONE,
                      1);
    goto out;
  }
  tr_note_time(t, m->timestamp);
  uint32_t thread_id = marker_thread(m);
  if (end) {
    size_t i = open_find(t, m->id);
    /* An END whose START predates the capture has nothing to close. */
    if (i == SIZE_MAX)
      goto out;
    open_range r = t->open[i];
    open_remove(t, i);
    thread_depth *d = thread_depth_get(t, r.thread_id);
    if (d && d->open)
      d->open--;
    rc = tr_range_append(t, &r, m->timestamp, 0);
    goto out;
  }
  thread_depth *d = thread_depth_get(t, thread_id);
  if (!d) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  open_range r;
  memset(&r, 0, sizeof r);
  r.id = m->id;
  r.start = m->timestamp;
  r.name = mprof_writer_string(t->w, m->name);
  r.domain = mprof_writer_string(t->w, m->domain);
  r.thread_id = thread_id;
  r.depth = d->open;
  if (instant) {
    rc = tr_range_append(t, &r, m->timestamp, 0);
    goto out;
  }
  rc = open_add(t, &r);
  if (rc == 0)
    d->open++;
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_marker_data(mprof_cupti_translate *t,
                                      const CUpti_ActivityMarkerData2 *m) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished && (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB)) {
    size_t i = open_find(t, m->id);
    if (i != SIZE_MAX)
      t->open[i].color = m->color;
  }
  pthread_mutex_unlock(&t->lock);
  return 0;
}

/* ---- NVTX ranges open at a checkpoint ------------------------------------ */

static int record_by_start(const void *a, const void *b) {
  const mprof_range_record *x = (const mprof_range_record *)a;
  const mprof_range_record *y = (const mprof_range_record *)b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->thread_id != y->thread_id)
    return x->thread_id < y->thread_id ? -1 : 1;
  return x->depth < y->depth ? -1 : x->depth > y->depth;
}

int tr_open_ranges_snapshot_locked(mprof_cupti_translate *t, int finishing) {
  /* At finish the open ranges are RANGES records; nothing is open then. */
  size_t count = finishing ? 0 : t->open_count;
  if (!count && !t->open_snapshot_count)
    return 0; /* the last snapshot already says so */
  mprof_range_record *recs =
      count ? (mprof_range_record *)malloc(count * sizeof *recs) : NULL;
  if (count && !recs)
    return MPROF_ENOMEM;
  /* `end` is the reader's: the time of the checkpoint that commits them.
   * open[] is in no order: the snapshot lists them as they started. */
  for (size_t i = 0; i < count; i++)
    recs[i] =
        range_record(&t->open[i], t->open[i].start, MPROF_RANGE_FLAG_OPEN);
  if (count > 1)
    qsort(recs, count, sizeof *recs, record_by_start);
  int rc = mprof_writer_snapshot(t->w, MPROF_SECTION_OPEN_RANGES, recs, count);
  if (rc == 0)
    t->open_snapshot_count = count;
  free(recs);
  return rc;
}

/* ---- API calls ---------------------------------------------------------- */

/* 1 runtime, 2 driver -> 0, 1; -1 for anything else. */
static int api_slot(uint32_t kind) {
  return kind == MPROF_API_RUNTIME ? 0 : kind == MPROF_API_DRIVER ? 1 : -1;
}

int mprof_cupti_translate_api_name(mprof_cupti_translate *t, uint32_t kind,
                                   uint32_t cbid, const char *name) {
  int slot = api_slot(kind);
  if (slot < 0 || !name || cbid > 1u << 20)
    return MPROF_EINVAL;
  /* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the suffix is CUPTI's
   * version of the entry point, not part of the function's name. */
  char clean[256];
  snprintf(clean, sizeof clean, "%s", name);
  char *suffix = strrchr(clean, '_');
  if (suffix && suffix[1] == 'v' && suffix[2] &&
      strspn(suffix + 2, "0123456789") == strlen(suffix + 2))
    *suffix = '\0';
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished) {
    rc = MPROF_EINVAL;
    goto out;
  }
  if (cbid >= t->api_name_count[slot]) {
    uint32_t count = cbid + 1 > 1024 ? cbid + 1 : 1024;
    uint32_t *grown =
        (uint32_t *)realloc(t->api_names[slot], count * sizeof *grown);
    if (!grown) {
      rc = MPROF_ENOMEM;
      goto out;
    }
    memset(grown + t->api_name_count[slot], 0,
           (count - t->api_name_count[slot]) * sizeof *grown);
    t->api_names[slot] = grown;
    t->api_name_count[slot] = count;
  }
  t->api_names[slot][cbid] = mprof_writer_string(t->w, clean);
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* Driver calls held back per thread, at most this many: a runtime call
 * issues one or two driver calls of the kinds recorded. */
#define PENDING_PER_THREAD 8

static int api_write_locked(mprof_cupti_translate *t,
                            const mprof_api_call_record *rec) {
  int rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_API_CALLS, rec);
  if (rc == 0)
    t->stats.api_calls++;
  return rc;
}

/* Write (keep = 1) or forget (keep = 0) the held-back call at @p i. */
static int pending_take(mprof_cupti_translate *t, size_t i, int keep) {
  int rc = keep ? api_write_locked(t, &t->pending[i]) : 0;
  memmove(&t->pending[i], &t->pending[i + 1],
          (t->pending_count - i - 1) * sizeof *t->pending);
  t->pending_count--;
  return rc;
}

/* A driver call: held back until it is known whether a runtime call of the
 * same thread made it (then the runtime call stands for both). */
static int api_driver_locked(mprof_cupti_translate *t,
                             const mprof_api_call_record *rec) {
  int rc = 0;
  size_t on_thread = 0, oldest = SIZE_MAX;
  for (size_t i = 0; i < t->pending_count; i++) {
    if (t->pending[i].thread_id != rec->thread_id)
      continue;
    if (oldest == SIZE_MAX)
      oldest = i;
    on_thread++;
  }
  if (on_thread >= PENDING_PER_THREAD)
    rc = pending_take(t, oldest, 1);
  if (t->pending_count == t->pending_capacity) {
    size_t capacity = t->pending_capacity ? t->pending_capacity * 2 : 16;
    mprof_api_call_record *grown =
        (mprof_api_call_record *)realloc(t->pending, capacity * sizeof *grown);
    if (!grown)
      return api_write_locked(t, rec);
    t->pending = grown;
    t->pending_capacity = capacity;
  }
  t->pending[t->pending_count++] = *rec;
  return rc;
}

/* A runtime call: the held-back driver calls of its thread that lie inside
 * it with its correlation id were its own and go; the others are written
 * (a driver call inside it under another id stays: the launch it issued
 * may carry that id). */
static int api_runtime_locked(mprof_cupti_translate *t,
                              const mprof_api_call_record *rec) {
  int rc = 0;
  for (size_t i = 0; i < t->pending_count;) {
    const mprof_api_call_record *p = &t->pending[i];
    if (p->thread_id != rec->thread_id) {
      i++;
      continue;
    }
    int inside = p->start >= rec->start && p->end <= rec->end &&
                 p->correlation_id == rec->correlation_id;
    int r = pending_take(t, i, !inside);
    if (!rc)
      rc = r;
  }
  int r = api_write_locked(t, rec);
  return rc ? rc : r;
}

void tr_api_flush_locked(mprof_cupti_translate *t) {
  while (t->pending_count)
    pending_take(t, 0, 1);
}

int mprof_cupti_translate_api(mprof_cupti_translate *t,
                              const CUpti_ActivityAPI *a) {
  uint32_t kind = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME  ? MPROF_API_RUNTIME
                  : a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? MPROF_API_DRIVER
                                                          : 0;
  if (!kind)
    return MPROF_EINVAL;
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  if (a->start == 0 || a->end < a->start) {
    t->stats.no_timestamp++;
    mprof_writer_drop(t->w, MPROF_DROP_ACTIVITY_NO_TIMESTAMP, MPROF_INDEX_NONE,
                      1);
    goto out;
  }
  tr_note_time(t, a->end);
  int slot = api_slot(kind);
  mprof_api_call_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = a->start;
  rec.end = a->end;
  rec.correlation_id = a->correlationId;
  rec.thread_id = a->threadId;
  rec.kind = kind;
  if (a->cbid < t->api_name_count[slot])
    rec.name = t->api_names[slot][a->cbid];
  if (!rec.name) {
    char name[48];
    snprintf(name, sizeof name, "%s cbid %u",
             kind == MPROF_API_RUNTIME ? "runtime" : "driver",
             (unsigned)a->cbid);
    rec.name = mprof_writer_string(t->w, name);
  }
  rc = kind == MPROF_API_DRIVER ? api_driver_locked(t, &rec)
                                : api_runtime_locked(t, &rec);
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* ---- any activity record ------------------------------------------------- */

int mprof_cupti_translate_activity(mprof_cupti_translate *t,
                                   const CUpti_Activity *record) {
  switch (record->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return mprof_cupti_translate_kernel(
        t, (const CUpti_ActivityKernel10 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return mprof_cupti_translate_memcpy(
        t, (const CUpti_ActivityMemcpy6 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    return mprof_cupti_translate_memcpy_p2p(
        t, (const CUpti_ActivityMemcpyPtoP4 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return mprof_cupti_translate_memset(
        t, (const CUpti_ActivityMemset4 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_MARKER:
    return mprof_cupti_translate_marker(
        t, (const CUpti_ActivityMarker2 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_MARKER_DATA:
    return mprof_cupti_translate_marker_data(
        t, (const CUpti_ActivityMarkerData2 *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return mprof_cupti_translate_api(
        t, (const CUpti_ActivityAPI *)(const void *)record);
  case CUPTI_ACTIVITY_KIND_DEVICE:
    mprof_cupti_translate_device_activity(
        t, (const CUpti_ActivityDevice5 *)(const void *)record);
    return 0;
  default: return 0;
  }
}

void mprof_cupti_translate_activity_dropped(mprof_cupti_translate *t,
                                            uint64_t count) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished)
    mprof_writer_drop(t->w, MPROF_DROP_ACTIVITY_RECORDS, MPROF_INDEX_NONE,
                      count);
  pthread_mutex_unlock(&t->lock);
}
