/*
 * mprof CUPTI producer — CUPTI records in, mprof records out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "translate.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/map.h"
#include "cubin.h"
#include "mprof/status.h"

/* How many distinct error messages META takes before it only counts them:
 * a failure repeated on every drain must not flood the trace. */
#define MAX_ERRORS 64
/* Guard against a corrupt stallReasonCount walking off CUPTI's array. */
#define MAX_STALL_REASONS_PER_PC 256

/* ---- devices ------------------------------------------------------------ */

typedef struct device_slot {
  uint32_t ordinal;
  int have_driver;
  int have_activity;
  int stall_reasons_written;
  mprof_device_record from_driver;   /* name holds a string ref */
  mprof_device_record from_activity; /* name holds a string ref */
} device_slot;

/* ---- names: one entry per distinct function name ------------------------ */

typedef struct name_entry {
  char *name;
  uint64_t hash;
  uint32_t str; /* string ref; valid when str_done */
  uint8_t str_done;
  int8_t match;          /* -1 not decided yet, 0 rejected, 1 kept */
  uint8_t launched;      /* a kernel record named it */
  uint32_t module_count; /* modules whose symbol table has this name */
  uint32_t module_capacity;
  uint32_t *modules;       /* indices into modules[] */
  uint32_t function_index; /* .symtab index in modules[modules[0]] */
} name_entry;

typedef struct name_map {
  name_entry **entries; /* in order of first sight */
  size_t count;
  size_t capacity;
  mprof__map index; /* hash of the name -> entries[] */
} name_map;

/* ---- modules ------------------------------------------------------------ */

typedef struct module {
  uint64_t crc;
  uint64_t size;
  uint64_t spill_offset;
  uint32_t device; /* DEVICES index of the first load */
  uint8_t spilled; /* the image is in the spill file */
  uint8_t multi_device;
  uint8_t used;      /* holds a launched or sampled function */
  uint32_t *sampled; /* .symtab indices named by PC records */
  size_t sampled_count;
  size_t sampled_capacity;
} module;

/* ---- NVTX ranges still waiting for their END ------------------------------
 */

typedef struct open_range {
  uint32_t id;
  uint64_t start;
  uint32_t name;
  uint32_t domain;
  uint32_t thread_id;
  uint32_t depth;
  uint32_t color;
} open_range;

struct mprof_cupti_translate {
  pthread_mutex_t lock;
  mprof_writer *w;
  int finished;

  int have_regex;
  regex_t regex;
  int keep_sass;
  int whole_modules;

  device_slot *devices;
  size_t device_count;

  name_map names;

  module *modules;
  size_t module_count;
  size_t module_capacity;
  mprof__map crcs; /* cubin CRC -> modules[] */
  mprof_cupti_spill spill;
  int spill_failed;

  open_range *open;
  size_t open_count;
  size_t open_capacity;
  uint64_t last_timestamp; /* latest time seen; ends ranges never closed */

  char *errors[MAX_ERRORS];
  size_t error_count;
  uint64_t errors_suppressed;

  uint32_t drain_seq;
  mprof_cupti_translate_stats stats;
};

/* ---- small helpers ------------------------------------------------------ */

static uint64_t hash_string(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h;
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static uint32_t clamp_u32(int64_t value) {
  if (value < 0)
    return 0;
  if (value > UINT32_MAX)
    return UINT32_MAX;
  return (uint32_t)value;
}

static void note_time(mprof_cupti_translate *t, uint64_t ts) {
  if (ts > t->last_timestamp)
    t->last_timestamp = ts;
}

/* Errors found while the lock is held; the public wrapper takes the lock. */
static int error_locked(mprof_cupti_translate *t, const char *message) {
  for (size_t i = 0; i < t->error_count; i++)
    if (strcmp(t->errors[i], message) == 0)
      return 0;
  if (t->error_count >= MAX_ERRORS) {
    t->errors_suppressed++;
    return 0;
  }
  char *copy = strdup(message);
  if (!copy)
    return 0;
  char key[32];
  snprintf(key, sizeof key, "error.%zu", t->error_count);
  t->errors[t->error_count++] = copy;
  t->stats.errors++;
  mprof_writer_meta(t->w, key, message);
  return 1;
}

/* ---- device slots ------------------------------------------------------- */

static uint32_t device_locked(mprof_cupti_translate *t, uint32_t ordinal) {
  for (size_t i = 0; i < t->device_count; i++)
    if (t->devices[i].ordinal == ordinal)
      return (uint32_t)i;
  device_slot *grown = (device_slot *)realloc(
      t->devices, (t->device_count + 1) * sizeof *t->devices);
  if (!grown)
    return MPROF_INDEX_NONE;
  t->devices = grown;
  device_slot *slot = &t->devices[t->device_count];
  memset(slot, 0, sizeof *slot);
  slot->ordinal = ordinal;
  return (uint32_t)t->device_count++;
}

/* Fields of @p src fill the zero fields of @p dst. */
static void device_fill(mprof_device_record *dst,
                        const mprof_device_record *src) {
#define FILL(field)                                                            \
  do {                                                                         \
    if (!dst->field)                                                           \
      dst->field = src->field;                                                 \
  } while (0)
  FILL(name);
  FILL(cc_major);
  FILL(cc_minor);
  FILL(sm_count);
  FILL(warp_size);
  FILL(max_threads_per_block);
  FILL(max_threads_per_sm);
  FILL(max_blocks_per_sm);
  FILL(max_warps_per_sm);
  FILL(max_regs_per_block);
  FILL(max_regs_per_sm);
  FILL(max_shared_per_block);
  FILL(max_shared_per_sm);
  FILL(core_clock_khz);
  FILL(memory_clock_khz);
  FILL(memory_bus_width);
  FILL(l2_size);
  FILL(global_memory);
  FILL(uuid_lo);
#undef FILL
}

/* ---- names -------------------------------------------------------------- */

/* The entry for @p name, created when new; NULL only when memory runs out. */
static name_entry *name_get(mprof_cupti_translate *t, const char *name) {
  name_map *m = &t->names;
  uint64_t hash = hash_string(name);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&m->index, hash, &cursor)) != MPROF__MAP_NONE)
    if (strcmp(m->entries[found]->name, name) == 0)
      return m->entries[found];
  if (m->count >= UINT32_MAX - 1 ||
      mprof__map_reserve(&m->index, m->count + 1) != 0)
    return NULL;
  if (m->count == m->capacity) {
    size_t capacity = m->capacity ? m->capacity * 2 : 256;
    name_entry **grown =
        (name_entry **)realloc(m->entries, capacity * sizeof *grown);
    if (!grown)
      return NULL;
    m->entries = grown;
    m->capacity = capacity;
  }
  name_entry *e = (name_entry *)calloc(1, sizeof *e);
  if (!e)
    return NULL;
  e->name = strdup(name);
  if (!e->name) {
    free(e);
    return NULL;
  }
  e->hash = hash;
  e->match = -1;
  e->function_index = MPROF_INDEX_NONE;
  mprof__map_add(&m->index, hash, (uint32_t)m->count); /* reserved */
  m->entries[m->count++] = e;
  return e;
}

static uint32_t name_string(mprof_cupti_translate *t, name_entry *e) {
  if (!e->str_done) {
    e->str = mprof_writer_string(t->w, e->name);
    e->str_done = 1;
  }
  return e->str;
}

static int name_matches(mprof_cupti_translate *t, name_entry *e) {
  if (!t->have_regex)
    return 1;
  if (e->match < 0)
    e->match = regexec(&t->regex, e->name, 0, NULL, 0) == 0 ? 1 : 0;
  return e->match;
}

static void names_free(name_map *m) {
  for (size_t i = 0; i < m->count; i++) {
    free(m->entries[i]->name);
    free(m->entries[i]->modules);
    free(m->entries[i]);
  }
  free(m->entries);
  mprof__map_free(&m->index);
  memset(m, 0, sizeof *m);
}

/* ---- modules ------------------------------------------------------------ */

static int crc_find(const mprof_cupti_translate *t, uint64_t crc,
                    uint32_t *index) {
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&t->crcs, mix64(crc), &cursor)) !=
         MPROF__MAP_NONE)
    if (t->modules[found].crc == crc) {
      *index = found;
      return 1;
    }
  return 0;
}

typedef struct function_walk {
  mprof_cupti_translate *t;
  uint32_t module;
} function_walk;

static void add_function(void *userdata, const char *name,
                         uint32_t symbol_index) {
  function_walk *walk = (function_walk *)userdata;
  name_entry *e = name_get(walk->t, name);
  if (!e)
    return;
  for (uint32_t i = 0; i < e->module_count; i++)
    if (e->modules[i] == walk->module)
      return;
  if (e->module_count == e->module_capacity) {
    uint32_t capacity = e->module_capacity ? e->module_capacity * 2 : 1;
    uint32_t *grown =
        (uint32_t *)realloc(e->modules, capacity * sizeof *e->modules);
    if (!grown)
      return;
    e->modules = grown;
    e->module_capacity = capacity;
  }
  if (e->module_count == 0)
    e->function_index = symbol_index;
  e->modules[e->module_count++] = walk->module;
}

/* ---- lifecycle ---------------------------------------------------------- */

int mprof_cupti_translate_new(mprof_cupti_translate **out, mprof_writer *w,
                              const mprof_cupti_translate_options *opts) {
  if (!out || !w)
    return MPROF_EINVAL;
  *out = NULL;
  mprof_cupti_translate *t = (mprof_cupti_translate *)calloc(1, sizeof *t);
  if (!t)
    return MPROF_ENOMEM;
  pthread_mutex_init(&t->lock, NULL);
  t->w = w;
  t->keep_sass = opts ? opts->keep_sass : 1;
  t->whole_modules = opts ? opts->whole_modules : 0;
  mprof_cupti_spill_init(&t->spill, opts ? opts->spill_dir : NULL);
  if (opts && opts->kernel_regex && *opts->kernel_regex) {
    int rc = regcomp(&t->regex, opts->kernel_regex, REG_EXTENDED | REG_NOSUB);
    if (rc == 0) {
      t->have_regex = 1;
    } else {
      char why[256], message[512];
      regerror(rc, &t->regex, why, sizeof why);
      snprintf(message, sizeof message,
               "MPROF_KERNEL_REGEX: %s; keeping every kernel", why);
      error_locked(t, message);
    }
  }
  *out = t;
  return 0;
}

int mprof_cupti_translate_finished(mprof_cupti_translate *t) {
  if (!t)
    return 1;
  pthread_mutex_lock(&t->lock);
  int finished = t->finished;
  pthread_mutex_unlock(&t->lock);
  return finished;
}

void mprof_cupti_translate_get_stats(mprof_cupti_translate *t,
                                     mprof_cupti_translate_stats *out) {
  pthread_mutex_lock(&t->lock);
  *out = t->stats;
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_meta(mprof_cupti_translate *t, const char *key,
                                const char *value) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished)
    mprof_writer_meta(t->w, key, value);
  pthread_mutex_unlock(&t->lock);
}

int mprof_cupti_translate_error(mprof_cupti_translate *t, const char *message) {
  pthread_mutex_lock(&t->lock);
  int fresh = t->finished ? 0 : error_locked(t, message);
  pthread_mutex_unlock(&t->lock);
  return fresh;
}

uint32_t mprof_cupti_translate_device(mprof_cupti_translate *t,
                                      uint32_t ordinal) {
  pthread_mutex_lock(&t->lock);
  uint32_t index = device_locked(t, ordinal);
  pthread_mutex_unlock(&t->lock);
  return index;
}

void mprof_cupti_translate_device_info(mprof_cupti_translate *t,
                                       uint32_t ordinal,
                                       const mprof_device_record *info,
                                       const char *name) {
  pthread_mutex_lock(&t->lock);
  uint32_t index = t->finished ? MPROF_INDEX_NONE : device_locked(t, ordinal);
  if (index != MPROF_INDEX_NONE) {
    device_slot *slot = &t->devices[index];
    mprof_device_record rec = *info;
    rec.id = ordinal;
    rec.name = mprof_writer_string(t->w, name);
    memset(rec.reserved, 0, sizeof rec.reserved);
    slot->from_driver = rec;
    slot->have_driver = 1;
  }
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_device_activity(mprof_cupti_translate *t,
                                           const CUpti_ActivityDevice5 *d) {
  mprof_device_record rec;
  memset(&rec, 0, sizeof rec);
  rec.id = d->id;
  rec.cc_major = d->computeCapabilityMajor;
  rec.cc_minor = d->computeCapabilityMinor;
  rec.sm_count = d->numMultiprocessors;
  rec.warp_size = d->numThreadsPerWarp;
  rec.max_threads_per_block = d->maxThreadsPerBlock;
  rec.max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
  rec.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
  rec.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
  rec.max_regs_per_block = d->maxRegistersPerBlock;
  rec.max_regs_per_sm = d->maxRegistersPerMultiprocessor;
  rec.max_shared_per_block = d->maxSharedMemoryPerBlock;
  rec.max_shared_per_sm = d->maxSharedMemoryPerMultiprocessor;
  rec.core_clock_khz = d->coreClockRate;
  rec.l2_size = d->l2CacheSize;
  rec.global_memory = d->globalMemorySize;
  memcpy(&rec.uuid_lo, d->uuid.bytes, sizeof rec.uuid_lo);

  pthread_mutex_lock(&t->lock);
  uint32_t index = t->finished ? MPROF_INDEX_NONE : device_locked(t, d->id);
  if (index != MPROF_INDEX_NONE) {
    rec.name = mprof_writer_string(t->w, d->name);
    t->devices[index].from_activity = rec;
    t->devices[index].have_activity = 1;
  }
  pthread_mutex_unlock(&t->lock);
}

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
  note_time(t, end);
  return 1;
}

int mprof_cupti_translate_kernel(mprof_cupti_translate *t,
                                 const CUpti_ActivityKernel10 *k) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = device_locked(t, k->deviceId);
  if (!timed_locked(t, device, k->start, k->end))
    goto out;
  name_entry *e = name_get(t, k->name ? k->name : "");
  if (!e) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  if (!name_matches(t, e)) {
    t->stats.filtered_launches++;
    goto out;
  }
  for (uint32_t i = 0; i < e->module_count; i++)
    t->modules[e->modules[i]].used = 1;
  e->launched = 1;

  mprof_kernel_record kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.mangled_name = name_string(t, e);
  kernel.function_index = MPROF_INDEX_NONE;
  /* The record names no module; a name found in exactly one loaded module
   * pins both. Otherwise post-processing joins by name. */
  if (e->module_count == 1) {
    kernel.cubin_crc = t->modules[e->modules[0]].crc;
    kernel.function_index = e->function_index;
  }
  kernel.device = device;
  kernel.registers = k->registersPerThread;
  kernel.static_shared = clamp_u32(k->staticSharedMemory);
  kernel.local_per_thread = k->localMemoryPerThread;
  uint32_t kernel_index = 0;
  rc = mprof_writer_intern(t->w, &kernel_index, MPROF_SECTION_KERNELS, &kernel);
  if (rc)
    goto out;

  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = kernel_index;
  shape.grid[0] = clamp_u32(k->gridX);
  shape.grid[1] = clamp_u32(k->gridY);
  shape.grid[2] = clamp_u32(k->gridZ);
  shape.block[0] = clamp_u32(k->blockX);
  shape.block[1] = clamp_u32(k->blockY);
  shape.block[2] = clamp_u32(k->blockZ);
  shape.cluster[0] = k->clusterX;
  shape.cluster[1] = k->clusterY;
  shape.cluster[2] = k->clusterZ;
  shape.dynamic_shared = clamp_u32(k->dynamicSharedMemory);
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
  uint32_t device = device_locked(t, device_id);
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

int mprof_cupti_translate_memcpy(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemcpy6 *m) {
  mprof_memop_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = m->start;
  rec.end = m->end;
  rec.bytes = m->bytes;
  rec.correlation_id = m->correlationId;
  rec.kind = MPROF_MEMOP_MEMCPY;
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
  mprof_memop_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = m->start;
  rec.end = m->end;
  rec.bytes = m->bytes;
  rec.correlation_id = m->correlationId;
  rec.kind = MPROF_MEMOP_MEMCPY;
  rec.copy_kind = MPROF_COPY_PTOP;
  rec.src_device = m->srcDeviceId;
  rec.dst_device = m->dstDeviceId;
  return add_memop(t, m->deviceId, m->contextId, m->streamId, &rec);
}

int mprof_cupti_translate_memset(mprof_cupti_translate *t,
                                 const CUpti_ActivityMemset4 *m) {
  mprof_memop_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = m->start;
  rec.end = m->end;
  rec.bytes = m->bytes;
  rec.correlation_id = m->correlationId;
  rec.kind = MPROF_MEMOP_MEMSET;
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

static uint32_t open_on_thread(const mprof_cupti_translate *t,
                               uint32_t thread_id) {
  uint32_t depth = 0;
  for (size_t i = 0; i < t->open_count; i++)
    if (t->open[i].thread_id == thread_id)
      depth++;
  return depth;
}

static int range_append(mprof_cupti_translate *t, const open_range *r,
                        uint64_t end) {
  mprof_range_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = r->start;
  rec.end = end < r->start ? r->start : end;
  rec.name = r->name;
  rec.domain = r->domain;
  rec.thread_id = r->thread_id;
  rec.depth = r->depth;
  rec.color = r->color;
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
  note_time(t, m->timestamp);
  uint32_t thread_id = marker_thread(m);
  if (end) {
    for (size_t i = t->open_count; i-- > 0;) {
      if (t->open[i].id != m->id)
        continue;
      open_range r = t->open[i];
      memmove(&t->open[i], &t->open[i + 1],
              (t->open_count - i - 1) * sizeof *t->open);
      t->open_count--;
      rc = range_append(t, &r, m->timestamp);
      break;
    }
    /* An END whose START predates the capture has nothing to close. */
    goto out;
  }
  open_range r;
  memset(&r, 0, sizeof r);
  r.id = m->id;
  r.start = m->timestamp;
  r.name = mprof_writer_string(t->w, m->name);
  r.domain = mprof_writer_string(t->w, m->domain);
  r.thread_id = thread_id;
  r.depth = open_on_thread(t, thread_id);
  if (instant) {
    rc = range_append(t, &r, m->timestamp);
    goto out;
  }
  if (t->open_count == t->open_capacity) {
    size_t capacity = t->open_capacity ? t->open_capacity * 2 : 16;
    open_range *grown =
        (open_range *)realloc(t->open, capacity * sizeof *t->open);
    if (!grown) {
      rc = MPROF_ENOMEM;
      goto out;
    }
    t->open = grown;
    t->open_capacity = capacity;
  }
  t->open[t->open_count++] = r;
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_marker_data(mprof_cupti_translate *t,
                                      const CUpti_ActivityMarkerData2 *m) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished && (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB)) {
    for (size_t i = t->open_count; i-- > 0;) {
      if (t->open[i].id == m->id) {
        t->open[i].color = m->color;
        break;
      }
    }
  }
  pthread_mutex_unlock(&t->lock);
  return 0;
}

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

/* ---- PC sampling -------------------------------------------------------- */

int mprof_cupti_translate_stall_reasons(mprof_cupti_translate *t,
                                        uint32_t ordinal, size_t count,
                                        const uint32_t *indices,
                                        char *const *names) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = device_locked(t, ordinal);
  if (device == MPROF_INDEX_NONE) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  if (t->devices[device].stall_reasons_written)
    goto out;
  t->devices[device].stall_reasons_written = 1;
  for (size_t i = 0; i < count && rc == 0; i++) {
    mprof_stall_reason_record rec;
    memset(&rec, 0, sizeof rec);
    rec.device = device;
    rec.index = indices[i];
    rec.name = mprof_writer_string(t->w, names[i]);
    rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_STALL_REASONS, &rec);
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void mprof_cupti_translate_pc_error(mprof_cupti_translate *t, uint32_t ordinal,
                                    const char *reason) {
  char key[64];
  snprintf(key, sizeof key, "pc.device.%u.error", ordinal);
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    device_locked(t, ordinal);
    mprof_writer_meta(t->w, key, reason);
    mprof_writer_meta(t->w, "pc.error", reason);
  }
  pthread_mutex_unlock(&t->lock);
}

uint32_t mprof_cupti_translate_next_drain(mprof_cupti_translate *t) {
  pthread_mutex_lock(&t->lock);
  uint32_t drain = ++t->drain_seq;
  pthread_mutex_unlock(&t->lock);
  return drain;
}

/* Remember that @p m's symbol @p symbol was sampled. A drain repeats the same
 * few functions thousands of times: the last one is checked first. */
static void note_sampled(module *m, uint32_t symbol) {
  if (m->sampled_count && m->sampled[m->sampled_count - 1] == symbol)
    return;
  for (size_t i = 0; i < m->sampled_count; i++) {
    if (m->sampled[i] == symbol) {
      m->sampled[i] = m->sampled[m->sampled_count - 1];
      m->sampled[m->sampled_count - 1] = symbol;
      return;
    }
  }
  if (m->sampled_count == m->sampled_capacity) {
    size_t capacity = m->sampled_capacity ? m->sampled_capacity * 2 : 8;
    uint32_t *grown =
        (uint32_t *)realloc(m->sampled, capacity * sizeof *m->sampled);
    if (!grown)
      return; /* the module is then kept whole, see keep_list() */
    m->sampled = grown;
    m->sampled_capacity = capacity;
  }
  m->sampled[m->sampled_count++] = symbol;
}

int mprof_cupti_translate_pc_data(mprof_cupti_translate *t, uint32_t ordinal,
                                  const CUpti_PCSamplingData *data,
                                  uint32_t drain) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = device_locked(t, ordinal);
  t->stats.pc_drains++;
  /* Zero counts are written too: "sampled and lost nothing" is news. */
  mprof_writer_drop(t->w, MPROF_DROP_PC_HW_BUFFER_FULL, device,
                    data->hardwareBufferFull ? 1 : 0);
  mprof_writer_drop(t->w, MPROF_DROP_PC_DROPPED_SAMPLES, device,
                    data->droppedSamples);
  mprof_writer_drop(t->w, MPROF_DROP_PC_NON_USER_SAMPLES, device,
                    data->nonUsrKernelsTotalSamples);
  mprof_writer_drop(t->w, MPROF_DROP_PC_TOTAL_SAMPLES, device,
                    data->totalSamples);
  size_t pcs = data->totalNumPcs < data->collectNumPcs ? data->totalNumPcs
                                                       : data->collectNumPcs;
  if (!data->pPcData)
    pcs = 0;
  for (size_t i = 0; i < pcs && rc == 0; i++) {
    const CUpti_PCSamplingPCData *pc = &data->pPcData[i];
    name_entry *e = name_get(t, pc->functionName ? pc->functionName : "");
    if (!e) {
      rc = MPROF_ENOMEM;
      break;
    }
    if (!name_matches(t, e)) {
      t->stats.filtered_pc_records++;
      continue;
    }
    uint32_t module_index = 0;
    if (crc_find(t, pc->cubinCrc, &module_index)) {
      t->modules[module_index].used = 1;
      note_sampled(&t->modules[module_index], pc->functionIndex);
    }
    size_t reasons = pc->stallReasonCount;
    if (reasons > MAX_STALL_REASONS_PER_PC)
      reasons = MAX_STALL_REASONS_PER_PC;
    if (!pc->stallReason)
      reasons = 0;
    for (size_t r = 0; r < reasons && rc == 0; r++) {
      const CUpti_PCSamplingStallReason *reason = &pc->stallReason[r];
      if (reason->samples == 0)
        continue;
      mprof_pc_sample_record rec;
      memset(&rec, 0, sizeof rec);
      rec.cubin_crc = pc->cubinCrc;
      rec.function_name = name_string(t, e);
      rec.function_index = pc->functionIndex;
      rec.pc_offset =
          pc->pcOffset > UINT32_MAX ? UINT32_MAX : (uint32_t)pc->pcOffset;
      rec.stall_reason = reason->pcSamplingStallReasonIndex;
      rec.samples = reason->samples;
      rec.correlation_id = pc->correlationId;
      rec.device = device;
      rec.drain = drain;
      rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PC_SAMPLES, &rec);
      if (rc == 0)
        t->stats.pc_records++;
    }
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* ---- modules ------------------------------------------------------------ */

int mprof_cupti_translate_module(mprof_cupti_translate *t, uint64_t crc,
                                 uint32_t ordinal, const void *image,
                                 size_t size) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = device_locked(t, ordinal);
  uint32_t index = 0;
  if (crc_find(t, crc, &index)) {
    if (t->modules[index].device != device)
      t->modules[index].multi_device = 1;
    goto out;
  }
  if (t->module_count == t->module_capacity) {
    size_t capacity = t->module_capacity ? t->module_capacity * 2 : 16;
    module *grown =
        (module *)realloc(t->modules, capacity * sizeof *t->modules);
    if (!grown) {
      rc = MPROF_ENOMEM;
      goto out;
    }
    t->modules = grown;
    t->module_capacity = capacity;
  }
  if (mprof__map_add(&t->crcs, mix64(crc), (uint32_t)t->module_count) != 0) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  module *m = &t->modules[t->module_count];
  memset(m, 0, sizeof *m);
  m->crc = crc;
  m->size = size;
  m->device = device;
  index = (uint32_t)t->module_count++;
  t->stats.modules++;
  t->stats.loaded_bytes += size;

  if (t->keep_sass && image && size && !t->spill_failed) {
    if (mprof_cupti_spill_store(&t->spill, image, size, &m->spill_offset) ==
        0) {
      m->spilled = 1;
    } else {
      char message[512];
      snprintf(message, sizeof message,
               "cubin spill file in %.300s: %s; later cubins are omitted",
               t->spill.dir, strerror(errno));
      error_locked(t, message);
      t->spill_failed = 1;
    }
  }
  if (image && size) {
    function_walk walk = {t, index};
    if (mprof_cupti_cubin_functions(image, size, add_function, &walk) < 0) {
      char message[128];
      snprintf(message, sizeof message,
               "cubin %016llx: not an ELF64 image; kept only if sampled",
               (unsigned long long)crc);
      error_locked(t, message);
    }
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* ---- finish ------------------------------------------------------------- */

/* The symbols of @p image a trimmed copy keeps: launched kernels (by name)
 * and sampled functions (by index). */
typedef struct keep_list {
  mprof_cupti_translate *t;
  uint32_t *symbols;
  size_t count;
  size_t capacity;
  int failed;
} keep_list;

static void keep_symbol(keep_list *k, uint32_t symbol) {
  if (k->count == k->capacity) {
    size_t capacity = k->capacity ? k->capacity * 2 : 16;
    uint32_t *grown =
        (uint32_t *)realloc(k->symbols, capacity * sizeof *k->symbols);
    if (!grown) {
      k->failed = 1;
      return;
    }
    k->symbols = grown;
    k->capacity = capacity;
  }
  k->symbols[k->count++] = symbol;
}

static void keep_if_launched(void *userdata, const char *name,
                             uint32_t symbol_index) {
  keep_list *k = (keep_list *)userdata;
  name_entry *e = name_get(k->t, name);
  if (e && e->launched && name_matches(k->t, e))
    keep_symbol(k, symbol_index);
}

/* @p image cut down to the code of its launched and sampled functions, or
 * NULL when it cannot be cut (then it is kept whole). */
static void *trimmed(mprof_cupti_translate *t, const module *m,
                     const void *image, size_t size, size_t *trimmed_size) {
  keep_list k = {t, NULL, 0, 0, 0};
  if (mprof_cupti_cubin_functions(image, size, keep_if_launched, &k) < 0)
    k.failed = 1;
  for (size_t i = 0; i < m->sampled_count; i++)
    keep_symbol(&k, m->sampled[i]);
  void *out = NULL;
  if (k.failed || mprof_cupti_cubin_trim(image, size, k.symbols, k.count, &out,
                                         trimmed_size) != 0)
    out = NULL;
  free(k.symbols);
  return out;
}

static void write_cubins_locked(mprof_cupti_translate *t) {
  for (size_t i = 0; i < t->module_count; i++) {
    const module *m = &t->modules[i];
    mprof_cubin_record rec;
    memset(&rec, 0, sizeof rec);
    rec.crc = m->crc;
    rec.module_size = m->size;
    /* One record per CRC: a module loaded on several devices is the same
     * code, so it is stored once and tied to no device. */
    rec.device = m->multi_device ? MPROF_INDEX_NONE : m->device;
    void *blob = NULL;
    size_t blob_size = 0;
    if (m->used && m->spilled && m->size <= SIZE_MAX) {
      blob = malloc((size_t)m->size);
      if (blob && mprof_cupti_spill_load(&t->spill, m->spill_offset, blob,
                                         (size_t)m->size) == 0) {
        blob_size = (size_t)m->size;
      } else {
        char message[256];
        snprintf(message, sizeof message,
                 "cubin %016llx: cannot read it back from the spill file",
                 (unsigned long long)m->crc);
        error_locked(t, message);
      }
    }
    rec.flags = blob_size ? MPROF_CUBIN_KEPT_WHOLE : MPROF_CUBIN_OMITTED;
    if (blob_size && !t->whole_modules) {
      size_t cut_size = 0;
      void *cut = trimmed(t, m, blob, blob_size, &cut_size);
      if (cut && cut_size < blob_size) {
        free(blob);
        blob = cut;
        blob_size = cut_size;
        rec.flags = MPROF_CUBIN_TRIMMED;
      } else {
        free(cut);
      }
    }
    if (mprof_writer_cubin(t->w, &rec, blob_size ? blob : NULL, blob_size) ==
            0 &&
        blob_size) {
      t->stats.modules_kept++;
      t->stats.kept_bytes += blob_size;
      t->stats.used_bytes += m->size;
    } else {
      t->stats.modules_omitted++;
    }
    free(blob);
  }
}

static void meta_u64(mprof_cupti_translate *t, const char *key,
                     uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)value);
  mprof_writer_meta(t->w, key, text);
}

/* The DEVICES record of device slot @p i as known so far. */
static void device_record(const mprof_cupti_translate *t, size_t i,
                          mprof_device_record *rec) {
  const device_slot *slot = &t->devices[i];
  memset(rec, 0, sizeof *rec);
  if (slot->have_driver)
    device_fill(rec, &slot->from_driver);
  if (slot->have_activity)
    device_fill(rec, &slot->from_activity);
  rec->id = slot->ordinal;
}

int mprof_cupti_translate_checkpoint(mprof_cupti_translate *t,
                                     uint64_t time_ns) {
  pthread_mutex_lock(&t->lock);
  if (t->finished) {
    pthread_mutex_unlock(&t->lock);
    return MPROF_EINVAL;
  }
  /* DEVICES is written at finish; until then a snapshot stands for it so
   * that a cut trace's streams and samples have their devices. */
  mprof_device_record recs[64];
  size_t count = t->device_count < 64 ? t->device_count : 64;
  for (size_t i = 0; i < count; i++)
    device_record(t, i, &recs[i]);
  int rc = mprof_writer_snapshot(t->w, MPROF_SECTION_DEVICES, recs, count);
  if (rc == 0)
    rc = mprof_writer_checkpoint(t->w, time_ns);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_checkpoint_signal(mprof_cupti_translate *t, int signo,
                                            uint64_t time_ns) {
  /* No translator lock: the interrupted thread may hold it. The writer
   * only takes its own lock if it is free. */
  mprof_writer *w = t ? t->w : NULL;
  return w ? mprof_writer_checkpoint_signal(w, signo, time_ns) : MPROF_EINVAL;
}

int mprof_cupti_translate_finish(mprof_cupti_translate *t) {
  pthread_mutex_lock(&t->lock);
  if (t->finished) {
    pthread_mutex_unlock(&t->lock);
    return MPROF_EINVAL;
  }
  /* Ranges still open when the program ended run to the last time seen. */
  for (size_t i = 0; i < t->open_count; i++)
    range_append(t, &t->open[i], t->last_timestamp);
  t->open_count = 0;

  for (size_t i = 0; i < t->device_count; i++) {
    mprof_device_record rec;
    device_record(t, i, &rec);
    mprof_writer_append(t->w, NULL, MPROF_SECTION_DEVICES, &rec);
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  write_cubins_locked(t);
  mprof_cupti_spill_close(&t->spill);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  t->stats.cubins_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll +
                                  (t1.tv_nsec - t0.tv_nsec));

  /* A counter of 0 says the producer looked and lost nothing. */
  mprof_writer_drop(t->w, MPROF_DROP_ACTIVITY_RECORDS, MPROF_INDEX_NONE, 0);
  meta_u64(t, "cubins.loaded", t->stats.modules);
  meta_u64(t, "cubins.kept", t->stats.modules_kept);
  meta_u64(t, "cubins.omitted", t->stats.modules_omitted);
  meta_u64(t, "cubins.loaded_bytes", t->stats.loaded_bytes);
  meta_u64(t, "cubins.kept_bytes", t->stats.kept_bytes);
  meta_u64(t, "cubins.used_bytes", t->stats.used_bytes);
  meta_u64(t, "pc.drains", t->stats.pc_drains);
  if (t->have_regex) {
    meta_u64(t, "kernel_regex.filtered_launches", t->stats.filtered_launches);
    meta_u64(t, "kernel_regex.filtered_pc_records",
             t->stats.filtered_pc_records);
  }
  if (t->errors_suppressed)
    meta_u64(t, "errors.suppressed", t->errors_suppressed);

  t->finished = 1;
  int rc = mprof_writer_finish(t->w);
  t->w = NULL;
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void mprof_cupti_translate_free(mprof_cupti_translate *t) {
  if (!t)
    return;
  if (!t->finished && t->w)
    mprof_writer_abort(t->w);
  if (t->have_regex)
    regfree(&t->regex);
  names_free(&t->names);
  for (size_t i = 0; i < t->module_count; i++)
    free(t->modules[i].sampled);
  free(t->modules);
  mprof__map_free(&t->crcs);
  free(t->devices);
  free(t->open);
  for (size_t i = 0; i < t->error_count; i++)
    free(t->errors[i]);
  mprof_cupti_spill_close(&t->spill);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

/* ---- PM sampling -------------------------------------------------------- */

int mprof_cupti_translate_pm_metrics(mprof_cupti_translate *t, uint32_t ordinal,
                                     uint64_t interval_ns, size_t count,
                                     const char *const *names,
                                     const char *const *units) {
  int rc = 0;
  if (count > MPROF_PM_MAX_METRICS)
    count = MPROF_PM_MAX_METRICS;
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    uint32_t device = device_locked(t, ordinal);
    for (size_t i = 0; i < count && !rc && device != MPROF_INDEX_NONE; i++) {
      mprof_pm_metric_record rec;
      memset(&rec, 0, sizeof rec);
      rec.device = device;
      rec.column = (uint32_t)i;
      rec.name = mprof_writer_string(t->w, names[i]);
      rec.unit = mprof_writer_string(t->w, units[i]);
      rec.interval_ns = interval_ns;
      rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PM_METRICS, &rec);
    }
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_pm_sample(mprof_cupti_translate *t, uint32_t ordinal,
                                    uint64_t start, uint64_t end, size_t count,
                                    const double *values) {
  int rc = 0;
  mprof_pm_sample_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = start;
  rec.end = end < start ? start : end;
  for (size_t i = 0; i < MPROF_PM_MAX_METRICS; i++)
    rec.value[i] = i < count ? (float)values[i] : NAN;
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    rec.device = device_locked(t, ordinal);
    if (rec.device != MPROF_INDEX_NONE)
      rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PM_SAMPLES, &rec);
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void mprof_cupti_translate_pm_drop(mprof_cupti_translate *t, uint32_t ordinal,
                                   mprof_drop_kind kind, uint64_t count) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished && count)
    mprof_writer_drop(t->w, kind, device_locked(t, ordinal), count);
  pthread_mutex_unlock(&t->lock);
}
