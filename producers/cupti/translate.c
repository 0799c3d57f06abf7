/*
 * mprof CUPTI producer — CUPTI records in, mprof records out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "translate_internal.h"

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/map.h"
#include "cubin.h"
#include "mprof/status.h"

/* ---- small helpers ------------------------------------------------------ */

uint64_t tr_hash_string(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t tr_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

uint32_t tr_clamp_u32(int64_t value) {
  if (value < 0)
    return 0;
  if (value > UINT32_MAX)
    return UINT32_MAX;
  return (uint32_t)value;
}

void tr_note_time(mprof_cupti_translate *t, uint64_t ts) {
  if (ts > t->last_timestamp)
    t->last_timestamp = ts;
}

/* Errors found while the lock is held; the public wrapper takes the lock. */
int tr_error_locked(mprof_cupti_translate *t, const char *message) {
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

uint32_t tr_device_locked(mprof_cupti_translate *t, uint32_t ordinal) {
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
name_entry *tr_name_get(mprof_cupti_translate *t, const char *name) {
  name_map *m = &t->names;
  uint64_t hash = tr_hash_string(name);
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

uint32_t tr_name_string(mprof_cupti_translate *t, name_entry *e) {
  if (!e->str_done) {
    e->str = mprof_writer_string(t->w, e->name);
    e->str_done = 1;
  }
  return e->str;
}

int tr_name_matches(mprof_cupti_translate *t, name_entry *e) {
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
  atomic_init(&t->signal_writer, w);
  atomic_init(&t->signal_users, 0);
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
      tr_error_locked(t, message);
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
  int fresh = t->finished ? 0 : tr_error_locked(t, message);
  pthread_mutex_unlock(&t->lock);
  return fresh;
}

uint32_t mprof_cupti_translate_device(mprof_cupti_translate *t,
                                      uint32_t ordinal) {
  pthread_mutex_lock(&t->lock);
  uint32_t index = tr_device_locked(t, ordinal);
  pthread_mutex_unlock(&t->lock);
  return index;
}

void mprof_cupti_translate_device_info(mprof_cupti_translate *t,
                                       uint32_t ordinal,
                                       const mprof_device_record *info,
                                       const char *name) {
  pthread_mutex_lock(&t->lock);
  uint32_t index =
      t->finished ? MPROF_INDEX_NONE : tr_device_locked(t, ordinal);
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

void mprof_cupti_translate_process(mprof_cupti_translate *t,
                                   const mprof_process_record *rec,
                                   const char *host, const char *cmdline) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    uint64_t start = t->process.start;
    memset(&t->process, 0, sizeof t->process);
    t->process.start = start;
    t->process.pid = rec->pid;
    t->process.ppid = rec->ppid;
    t->process.rank = rec->rank;
    t->process.local_rank = rec->local_rank;
    t->process.host = mprof_writer_string(t->w, host);
    t->process.cmdline = mprof_writer_string(t->w, cmdline);
    t->have_process = 1;
  }
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_window_piece(mprof_cupti_translate *t,
                                        uint64_t start, uint64_t end,
                                        uint64_t index, uint32_t thread) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    char name[48];
    snprintf(name, sizeof name, "mprof window #%llu",
             (unsigned long long)index);
    mprof_range_record rec;
    memset(&rec, 0, sizeof rec);
    rec.start = start;
    rec.end = end < start ? start : end;
    rec.name = mprof_writer_string(t->w, name);
    rec.domain = mprof_writer_string(t->w, "mprof");
    rec.thread_id = thread;
    if (mprof_writer_append(t->w, NULL, MPROF_SECTION_RANGES, &rec) == 0)
      t->stats.ranges++;
  }
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_capture(mprof_cupti_translate *t,
                                   const mprof_capture_record *rec,
                                   const char *spec) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    /* The string once: a window is described at every change. */
    uint32_t spec_ref =
        t->have_capture ? t->capture.spec : mprof_writer_string(t->w, spec);
    t->capture = *rec;
    t->capture.spec = spec_ref;
    t->capture.process = 0;
    t->capture.reserved = 0;
    t->have_capture = 1;
  }
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_process_start(mprof_cupti_translate *t,
                                         uint64_t start) {
  pthread_mutex_lock(&t->lock);
  t->process.start = start;
  pthread_mutex_unlock(&t->lock);
}

void mprof_cupti_translate_process_end(mprof_cupti_translate *t, uint64_t end,
                                       uint32_t exit_kind,
                                       uint32_t exit_value) {
  pthread_mutex_lock(&t->lock);
  t->process.end = end >= t->process.start ? end : 0;
  t->process.exit_kind = exit_kind;
  t->process.exit_value = exit_value;
  pthread_mutex_unlock(&t->lock);
}

/* The process record as of now: every stream and @p devices devices. */
static mprof_process_record process_record(const mprof_cupti_translate *t,
                                           uint64_t devices) {
  mprof_process_record p = t->process;
  p.first_stream = p.first_device = 0;
  p.stream_count = (uint32_t)mprof_writer_count(t->w, MPROF_SECTION_STREAMS);
  p.device_count = (uint32_t)devices;
  return p;
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
  uint32_t index = t->finished ? MPROF_INDEX_NONE : tr_device_locked(t, d->id);
  if (index != MPROF_INDEX_NONE) {
    rec.name = mprof_writer_string(t->w, d->name);
    t->devices[index].from_activity = rec;
    t->devices[index].have_activity = 1;
  }
  pthread_mutex_unlock(&t->lock);
}
static void meta_u64(mprof_cupti_translate *t, const char *key,
                     uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)value);
  mprof_writer_meta(t->w, key, text);
}

/* How often checkpoints repeat the writer's account of its strings: META
 * keeps every pair, so once a second would be 21,600 pairs an hour. */
#define STRINGS_META_EVERY_NS (600ull * 1000000000ull)

/* The writer's account of its strings (docs/FORMAT.md, META `writer.*`):
 * at the end, and at a checkpoint @p time_ns when ten minutes passed since
 * the last or the table started afresh, so a partial trace says it too.
 * @p time_ns is 0 at the end. */
static void strings_meta_locked(mprof_cupti_translate *t, uint64_t time_ns) {
  mprof_writer_string_stats s = MPROF_WRITER_STRING_STATS_INIT;
  if (mprof_writer_get_string_stats(t->w, &s) != 0)
    return;
  if (time_ns) {
    if (!t->strings_meta_ns)
      t->strings_meta_ns = time_ns; /* the first checkpoint starts the clock */
    if (s.generations == t->strings_meta_generations &&
        time_ns - t->strings_meta_ns < STRINGS_META_EVERY_NS)
      return;
    t->strings_meta_ns = time_ns;
  }
  t->strings_meta_generations = s.generations;
  meta_u64(t, "writer.strings", s.stored);
  meta_u64(t, "writer.string_bytes", s.bytes);
  meta_u64(t, "writer.strings_tracked", s.tracked);
  meta_u64(t, "writer.strings_unique_cap", s.unique_cap);
  meta_u64(t, "writer.string_generations", s.generations);
  meta_u64(t, "writer.string_memory_bytes", s.memory_bytes);
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
  tr_pc_flush_locked(t);
  /* DEVICES is written at finish; until then a snapshot stands for it so
   * that a cut trace's streams and samples have their devices. */
  mprof_device_record recs[64];
  size_t count = t->device_count < 64 ? t->device_count : 64;
  for (size_t i = 0; i < count; i++)
    device_record(t, i, &recs[i]);
  int rc = mprof_writer_snapshot(t->w, MPROF_SECTION_DEVICES, recs, count);
  /* So does the process record, owning what the trace holds so far: a
   * process killed before finish still says who it was. */
  mprof_process_record process = process_record(t, count);
  if (rc == 0 && t->have_process)
    rc = mprof_writer_snapshot(t->w, MPROF_SECTION_PROCESSES, &process, 1);
  if (rc == 0 && t->have_capture && t->have_process)
    rc = mprof_writer_snapshot(t->w, MPROF_SECTION_CAPTURE, &t->capture, 1);
  if (rc == 0)
    rc = tr_open_ranges_snapshot_locked(t, 0);
  tr_stream_cubins_locked(t);
  strings_meta_locked(t, time_ns ? time_ns : 1);
  if (rc == 0)
    rc = mprof_writer_checkpoint(t->w, time_ns);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_checkpoint_signal(mprof_cupti_translate *t, int signo,
                                            uint64_t time_ns) {
  if (!t)
    return MPROF_EINVAL;
  /* No translator lock: the interrupted thread may hold it. The writer
   * only takes its own lock if it is free. Counting ourselves in before
   * looking at the pointer pairs with withdraw_signal_writer(): if we see
   * the writer, finish sees us and waits (both sequentially consistent). */
  atomic_fetch_add(&t->signal_users, 1);
  mprof_writer *w = atomic_load(&t->signal_writer);
  int rc = w ? mprof_writer_checkpoint_signal(w, signo, time_ns) : MPROF_EINVAL;
  atomic_fetch_sub(&t->signal_users, 1);
  return rc;
}

/* How long finish waits for a handler still writing a checkpoint; one
 * writes at most a buffer per section, so this is never reached unless the
 * disk stalls. */
#define SIGNAL_WAIT_NS (2ull * 1000000000ull)

/* Take the writer away from signal handlers. 0 once none uses it any more
 * (it may then be freed); -1 if one still does after SIGNAL_WAIT_NS (it
 * must then stay allocated). Never called from a handler: a handler that
 * interrupts this thread returns before it resumes. */
static int withdraw_signal_writer(mprof_cupti_translate *t) {
  atomic_store(&t->signal_writer, NULL);
  struct timespec pause = {0, 100000}; /* 0.1 ms */
  for (uint64_t waited = 0; atomic_load(&t->signal_users) != 0;
       waited += (uint64_t)pause.tv_nsec) {
    if (waited >= SIGNAL_WAIT_NS)
      return -1;
    nanosleep(&pause, NULL);
  }
  return 0;
}

int mprof_cupti_translate_finish(mprof_cupti_translate *t) {
  pthread_mutex_lock(&t->lock);
  if (t->finished) {
    pthread_mutex_unlock(&t->lock);
    return MPROF_EINVAL;
  }
  tr_api_flush_locked(t);
  tr_pc_flush_locked(t);
  /* Ranges still open when the program ended run to the last time seen,
   * marked as never closed. */
  tr_ranges_close_all(t, t->last_timestamp);
  tr_open_ranges_snapshot_locked(t, 1);

  for (size_t i = 0; i < t->device_count; i++) {
    mprof_device_record rec;
    device_record(t, i, &rec);
    mprof_writer_append(t->w, NULL, MPROF_SECTION_DEVICES, &rec);
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  tr_write_cubins_locked(t);
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
  meta_u64(t, "cubins.streamed", t->stats.streamed_modules);
  meta_u64(t, "cubins.streamed_bytes", t->stats.streamed_bytes);
  meta_u64(t, "pc.drains", t->stats.pc_drains);
  if (t->have_regex) {
    meta_u64(t, "kernel_regex.filtered_launches", t->stats.filtered_launches);
    meta_u64(t, "kernel_regex.filtered_pc_records",
             t->stats.filtered_pc_records);
  }
  if (t->errors_suppressed)
    meta_u64(t, "errors.suppressed", t->errors_suppressed);
  if (t->have_process) {
    mprof_process_record process =
        process_record(t, mprof_writer_count(t->w, MPROF_SECTION_DEVICES));
    mprof_writer_append(t->w, NULL, MPROF_SECTION_PROCESSES, &process);
    if (t->have_capture)
      mprof_writer_append(t->w, NULL, MPROF_SECTION_CAPTURE, &t->capture);
  }
  strings_meta_locked(t, 0);

  t->finished = 1;
  /* The final checkpoint is mprof_writer_finish()'s first step: a signal
   * from here on loses nothing the exit had not yet committed. A handler
   * that kept writing leaves the writer allocated, and PATH.partial with
   * its last checkpoint. */
  int rc = MPROF_EIO, err = EBUSY;
  if (withdraw_signal_writer(t) == 0) {
    rc = mprof_writer_finish(t->w);
    err = errno;
  }
  t->w = NULL;
  pthread_mutex_unlock(&t->lock);
  errno = err;
  return rc;
}

void mprof_cupti_translate_free(mprof_cupti_translate *t) {
  if (!t)
    return;
  if (!t->finished && t->w && withdraw_signal_writer(t) == 0)
    mprof_writer_abort(t->w);
  if (t->have_regex)
    regfree(&t->regex);
  names_free(&t->names);
  for (size_t i = 0; i < t->module_count; i++)
    free(t->modules[i].sampled);
  free(t->modules);
  mprof__map_free(&t->crcs);
  free(t->devices);
  tr_ranges_free(t);
  free(t->api_names[0]);
  free(t->api_names[1]);
  free(t->pending);
  free(t->pc_pending);
  mprof__map_free(&t->pc_keys);
  for (size_t i = 0; i < t->error_count; i++)
    free(t->errors[i]);
  mprof_cupti_spill_close(&t->spill);
  pthread_mutex_destroy(&t->lock);
  free(t);
}
