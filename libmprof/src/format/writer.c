/*
 * mprof — streaming .mprof writer (part of the libc-only mprof-writer).
 *
 * While a capture runs, "PATH.partial" is a streamed file (docs/FORMAT.md,
 * "Streamed files"): a header, then chunks. Sections that grow with the run
 * (strings, META, launches, memops, ranges, spans, PC samples, cubin blobs)
 * buffer `buffer_size` bytes and move them into an APPEND chunk when full;
 * small tables (devices, streams, kernels, shapes, ...) stay in memory
 * because they are deduplicated by their bytes, and each checkpoint appends
 * what they gained since the last one. A checkpoint chunk commits
 * everything before it, so a process killed at any moment leaves a file
 * that opens with the data up to its last checkpoint.
 *
 * Strings are deduplicated through a table of at most STRING_TABLE_CAP
 * fingerprints by default (their bytes are on disk); when it is full it
 * starts afresh, so memory stays bounded however many distinct names a run
 * makes.
 *
 * On finish: a final checkpoint, then the usual layout is written to
 * "PATH.finishing" (header, every non-empty section in type order, each
 * 8-byte aligned, then the directory), renamed to PATH, and the streamed
 * file is removed.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/writer.h"

#define SECTION_COUNT (MPROF_SECTION_TYPE_MAX_ + 1)
#define DEFAULT_BUFFER_SIZE (64u * 1024u)
/* Distinct strings the deduplication table remembers at a time by default:
 * at most about 10 MiB of table (40 bytes a string with the map's slots). */
#define STRING_TABLE_CAP (1u << 18)

/* A remembered string: its reference, its length and a second hash of its
 * bytes, independent of the map's (FNV-1a): two different strings would
 * have to agree on both 64-bit hashes and the length to be taken for one
 * another. */
typedef struct string_entry {
  uint64_t check;
  uint32_t offset;
  uint32_t length;
} string_entry;

/* Where a spilling section's bytes lie in the streamed file. */
typedef struct extent {
  uint64_t offset;
  uint64_t length;
} extent;

typedef struct section_buf {
  unsigned char *data; /* buffered bytes (all of them when resident) */
  size_t used;
  size_t capacity;
  /* Spilling sections: bytes moved into chunks (data holds the rest).
   * Resident sections: bytes of data already in chunks. */
  uint64_t spilled;
  extent *extents; /* spilling sections only */
  size_t extent_count;
  size_t extent_capacity; /* always > extent_count: a signal needs a slot */
  uint64_t count;         /* records */
  mprof__map dedup;       /* record indices */
  /* mprof_writer_snapshot(): stands for the section at checkpoints */
  unsigned char *snapshot;
  size_t snapshot_size;
  int snapshot_dirty;
} section_buf;

typedef struct drop_counter {
  uint32_t kind;
  uint32_t device;
  uint64_t count;
} drop_counter;

struct mprof_writer {
  pthread_mutex_t lock;
  char *path;
  char *partial_path;
  char *final_path;
  int fd;               /* the streamed file */
  uint64_t stream_pos;  /* where the next chunk goes */
  uint32_t checkpoints; /* committed: their chunks are all written */
  int final_committed;  /* the last of them is the final one */
  int failed; /* first I/O failure; later appends are counted as drops */
  /* A cubin was replaced (mprof_writer_cubin_replace): the finished file
   * leaves out the blobs no record refers to any more. */
  int cubins_replaced;
  size_t buffer_size;
  section_buf sections[SECTION_COUNT];
  mprof__map strings; /* FNV-1a of the bytes -> string_entries[] */
  string_entry *string_entries;
  size_t string_entry_count, string_entry_capacity;
  uint64_t strings_stored;     /* strings put in STRINGS, repeats included */
  uint64_t strings_found;      /* requests answered from the table */
  uint64_t string_generations; /* times the full table started afresh */
  size_t string_cap;           /* entries before the table starts afresh */
  drop_counter *drops;
  size_t drop_count, drop_capacity;
  uint64_t writer_drops;
  /* launch order tracking for MPROF_FILE_FLAG_LAUNCHES_SORTED */
  int launches_sorted;
  uint32_t last_stream;
  uint64_t last_start;
};

/* Each section type's record size (1 for byte sections; 0, left out, for a
 * type this version does not know) and whether it spills to disk: the
 * sections that grow with the length of the run. */
static const struct {
  uint32_t record_size;
  int spills;
} section_kinds[SECTION_COUNT] = {
    [MPROF_SECTION_STRINGS] = {1, 1},
    [MPROF_SECTION_META] = {sizeof(mprof_meta_record), 1},
    [MPROF_SECTION_DEVICES] = {sizeof(mprof_device_record), 0},
    [MPROF_SECTION_STREAMS] = {sizeof(mprof_stream_record), 0},
    [MPROF_SECTION_KERNELS] = {sizeof(mprof_kernel_record), 0},
    [MPROF_SECTION_SHAPES] = {sizeof(mprof_shape_record), 0},
    [MPROF_SECTION_LAUNCHES] = {sizeof(mprof_launch_record), 1},
    [MPROF_SECTION_MEMOPS] = {sizeof(mprof_memop_record), 1},
    [MPROF_SECTION_RANGES] = {sizeof(mprof_range_record), 1},
    [MPROF_SECTION_REGIONS] = {sizeof(mprof_region_record), 0},
    [MPROF_SECTION_SPANS] = {sizeof(mprof_span_record), 1},
    [MPROF_SECTION_STALL_REASONS] = {sizeof(mprof_stall_reason_record), 0},
    [MPROF_SECTION_PC_SAMPLES] = {sizeof(mprof_pc_sample_record), 1},
    [MPROF_SECTION_CUBINS] = {sizeof(mprof_cubin_record), 0},
    [MPROF_SECTION_BLOBS] = {1, 1},
    [MPROF_SECTION_DROPS] = {sizeof(mprof_drop_record), 0},
    [MPROF_SECTION_PM_METRICS] = {sizeof(mprof_pm_metric_record), 0},
    [MPROF_SECTION_PM_SAMPLES] = {sizeof(mprof_pm_sample_record), 1},
    [MPROF_SECTION_API_CALLS] = {sizeof(mprof_api_call_record), 1},
    [MPROF_SECTION_MEMORY_ACCESSES] = {sizeof(mprof_memory_access_record), 0},
    [MPROF_SECTION_PROCESSES] = {sizeof(mprof_process_record), 0},
    /* Only ever a snapshot: records no checkpoint will still hold. */
    [MPROF_SECTION_OPEN_RANGES] = {sizeof(mprof_range_record), 0},
    [MPROF_SECTION_CAPTURE] = {sizeof(mprof_capture_record), 0},
    /* Bytes, put into a finished file (mprof__trace_put_section()). */
    [MPROF_SECTION_SOURCES] = {1, 0},
    [MPROF_SECTION_MKPROF] = {1, 0},
};

uint32_t mprof__record_size(uint32_t type) {
  return type < SECTION_COUNT ? section_kinds[type].record_size : 0;
}

static int section_spills(uint32_t type) { return section_kinds[type].spills; }

MPROF__VERSIONS(writer_options, "writer options",
                MPROF__END_OF(mprof_writer_options, file_flags),
                MPROF__END_OF(mprof_writer_options, open_flags),
                MPROF__END_OF(mprof_writer_options, strings_unique_cap));
MPROF__VERSIONS(string_stats, "writer string stats",
                MPROF__END_OF(mprof_writer_string_stats, memory_bytes));

int mprof_writer_options_init(mprof_writer_options *opts, unsigned version) {
  mprof_writer_options init = MPROF_WRITER_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &writer_options);
}

static int write_all(int fd, const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  while (size) {
    ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += n;
    size -= (size_t)n;
  }
  return 0;
}

/* Write one chunk (header, @p a then @p b as payload, padding) at the end of
 * the streamed file. Only write(2) and arithmetic: signal handlers call it.
 * On success *payload_at is where the payload starts. */
static int put_chunk(mprof_writer *w, uint32_t kind, uint32_t type,
                     uint32_t record_size, const void *a, size_t a_size,
                     const void *b, size_t b_size, uint64_t *payload_at) {
  static const unsigned char zeros[8];
  if (w->failed || w->fd < 0)
    return -1;
  mprof_chunk_header h;
  memset(&h, 0, sizeof h);
  h.magic = MPROF_CHUNK_MAGIC;
  h.kind = kind;
  h.section = type;
  h.record_size = record_size;
  h.length = (uint64_t)a_size + b_size;
  h.checksum = mprof_crc32c(mprof_crc32c(0, a, a_size), b, b_size);
  h.header_checksum = mprof_crc32c(0, &h, 28);
  size_t pad = (size_t)((8 - (h.length & 7)) & 7);
  if (write_all(w->fd, &h, sizeof h) != 0 || write_all(w->fd, a, a_size) != 0 ||
      write_all(w->fd, b, b_size) != 0 || write_all(w->fd, zeros, pad) != 0) {
    w->failed = errno ? errno : EIO;
    return -1;
  }
  if (payload_at)
    *payload_at = w->stream_pos + sizeof h;
  w->stream_pos += sizeof h + h.length + pad;
  return 0;
}

/* Room for this extent and one more, kept for a signal handler. */
static int reserve_extent(section_buf *s) {
  return MPROF__GROW(s->extents, s->extent_capacity, s->extent_count + 2);
}

/* Append @p size bytes of spilling section @p type as a chunk. Signal
 * handlers pass may_allocate = 0 and rely on the slot kept free. */
static int spill_bytes(mprof_writer *w, uint32_t type, const void *data,
                       size_t size, int may_allocate) {
  section_buf *s = &w->sections[type];
  if (may_allocate ? reserve_extent(s) != 0
                   : s->extent_count + 1 > s->extent_capacity)
    return -1;
  uint64_t at = 0;
  if (put_chunk(w, MPROF_CHUNK_APPEND, type, mprof__record_size(type), data,
                size, NULL, 0, &at) != 0)
    return -1;
  s->extents[s->extent_count].offset = at;
  s->extents[s->extent_count].length = size;
  s->extent_count++;
  s->spilled += size;
  if (may_allocate)
    reserve_extent(s); /* keep a slot for a signal; failing is harmless */
  return 0;
}

/* Move a spilling section's buffer into the streamed file. */
static int section_spill(mprof_writer *w, uint32_t type, int may_allocate) {
  section_buf *s = &w->sections[type];
  if (!s->used)
    return 0;
  if (spill_bytes(w, type, s->data, s->used, may_allocate) != 0)
    return -1;
  s->used = 0;
  return 0;
}

static int section_put(mprof_writer *w, uint32_t type, const void *data,
                       size_t size) {
  section_buf *s = &w->sections[type];
  if (!size)
    return 0;
  if (section_spills(type)) {
    if (s->used + size > w->buffer_size && section_spill(w, type, 1) != 0)
      return -1;
    if (size > w->buffer_size) /* large blobs bypass the buffer */
      return spill_bytes(w, type, data, size, 1);
    /* A signal's checkpoint spills without allocating: the slot it needs
     * for these bytes must exist before they do. */
    if (s->extent_capacity <= s->extent_count && reserve_extent(s) != 0)
      return -1;
  }
  if (MPROF__GROW(s->data, s->capacity, s->used + size) != 0)
    return -1;
  memcpy(s->data + s->used, data, size);
  s->used += size;
  return 0;
}

/* @p path + @p suffix in a new string; NULL without memory. */
static char *path_with(const char *path, const char *suffix) {
  size_t len = strlen(path), extra = strlen(suffix);
  char *joined = (char *)malloc(len + extra + 1);
  if (joined) {
    memcpy(joined, path, len);
    memcpy(joined + len, suffix, extra + 1);
  }
  return joined;
}

void mprof__file_header(mprof_file_header *h, uint32_t flags,
                        uint64_t directory_offset,
                        const mprof_section_entry *entries, uint32_t count) {
  size_t dir_size = count * sizeof *entries;
  memset(h, 0, sizeof *h);
  memcpy(h->magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE);
  h->version_major = MPROF_FORMAT_VERSION_MAJOR;
  h->version_minor = MPROF_FORMAT_VERSION_MINOR;
  h->flags = flags;
  h->directory_offset = directory_offset;
  h->section_count = count;
  h->directory_checksum = mprof_crc32c(0, entries, dir_size);
  h->file_size = directory_offset + dir_size;
  h->header_checksum = mprof_crc32c(0, h, 40);
}

int mprof_writer_open(mprof_writer **out, const char *path,
                      const mprof_writer_options *opts) {
  if (!out || !path || !*path)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_open: no path given");
  *out = NULL;
  static const mprof_writer_options defaults = MPROF_WRITER_OPTIONS_INIT;
  opts = mprof__options_or_defaults(opts, &defaults, 1,
                                    MPROF_WRITER_OPTIONS_VERSION, "writer");
  if (!opts)
    return MPROF_EVERSION;
  unsigned open_flags = opts->version >= 2 ? opts->open_flags : 0;
  size_t string_cap = opts->version >= 3 ? opts->strings_unique_cap : 0;
  mprof_writer *w = (mprof_writer *)calloc(1, sizeof *w);
  if (!w)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  w->fd = -1;
  w->buffer_size = opts->buffer_size ? opts->buffer_size : DEFAULT_BUFFER_SIZE;
  w->launches_sorted = 1;
  w->string_cap = string_cap ? string_cap : STRING_TABLE_CAP;
  pthread_mutex_init(&w->lock, NULL);
  w->path = path_with(path, "");
  w->partial_path = path_with(path, ".partial");
  w->final_path = path_with(path, ".finishing");
  if (!w->path || !w->partial_path || !w->final_path) {
    mprof_writer_abort(w);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  int mode = O_RDWR | O_CREAT | O_CLOEXEC |
             ((open_flags & MPROF_WRITER_EXCLUSIVE) ? O_EXCL : O_TRUNC);
  w->fd = open(w->partial_path, mode, 0644);
  if (w->fd < 0) {
    int err = errno;
    mprof_writer_abort(w);
    int rc = mprof__error_set(MPROF_EIO, "%s: cannot create: %s", path,
                              strerror(err));
    errno = err;
    return rc;
  }
  /* The header of a streamed file: valid from the first byte on. */
  mprof_file_header header;
  mprof__file_header(&header, MPROF_FILE_FLAG_STREAMED, 0, NULL, 0);
  if (write_all(w->fd, &header, sizeof header) != 0) {
    int err = errno;
    mprof_writer_abort(w);
    return mprof__error_set(MPROF_EIO, "%s: cannot write: %s", path,
                            strerror(err));
  }
  w->stream_pos = sizeof header;
  /* String reference 0 is the empty string. */
  if (section_put(w, MPROF_SECTION_STRINGS, "", 1) != 0) {
    mprof_writer_abort(w);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  *out = w;
  return 0;
}

static uint64_t rotate_left(uint64_t v, unsigned bits) {
  return (v << bits) | (v >> (64 - bits));
}

/* The second hash of a string entry: 8 bytes at a time, multiply and
 * rotate, then a final mix (nothing like FNV-1a's byte-wise xor-multiply). */
static uint64_t string_check(const char *str, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)len;
  for (;;) {
    uint64_t word = 0;
    size_t take = len < 8 ? len : 8;
    memcpy(&word, str, take);
    h = rotate_left(h ^ (word * 0xbf58476d1ce4e5b9ull), 27) *
        0x94d049bb133111ebull;
    if (len <= 8)
      break;
    str += 8;
    len -= 8;
  }
  h ^= h >> 31;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

static uint32_t string_locked(mprof_writer *w, const char *str) {
  if (!str || !*str)
    return MPROF_STR_NONE;
  size_t len = strlen(str);
  section_buf *s = &w->sections[MPROF_SECTION_STRINGS];
  uint64_t hash = mprof__hash64(str, len);
  uint64_t check = string_check(str, len);
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&w->strings, hash, &cursor)) !=
         MPROF__MAP_NONE) {
    const string_entry *e = &w->string_entries[found];
    if (e->check == check && e->length == len) {
      w->strings_found++;
      return e->offset;
    }
  }
  /* References are u32 byte offsets into the whole section. */
  uint64_t offset = s->spilled + s->used;
  if (offset + len + 1 > UINT32_MAX)
    goto drop;
  if (w->string_entry_count >= w->string_cap) {
    /* Full: start afresh. A string seen again is stored once more. */
    mprof__map_clear(&w->strings);
    w->string_entry_count = 0;
    w->string_generations++;
  }
  if (MPROF__GROW(w->string_entries, w->string_entry_capacity,
                  w->string_entry_count + 1) != 0 ||
      mprof__map_reserve(&w->strings, w->string_entry_count + 1) != 0)
    goto drop;
  if (section_put(w, MPROF_SECTION_STRINGS, str, len + 1) != 0)
    goto drop;
  string_entry *e = &w->string_entries[w->string_entry_count];
  e->check = check;
  e->offset = (uint32_t)offset;
  e->length = (uint32_t)len;
  /* reserved above: cannot fail */
  mprof__map_add(&w->strings, hash, (uint32_t)w->string_entry_count++);
  w->strings_stored++;
  return (uint32_t)offset;
drop:
  w->writer_drops++;
  return MPROF_STR_NONE;
}

uint32_t mprof_writer_string(mprof_writer *w, const char *str) {
  if (!w)
    return MPROF_STR_NONE;
  pthread_mutex_lock(&w->lock);
  uint32_t ref = string_locked(w, str);
  pthread_mutex_unlock(&w->lock);
  return ref;
}

int mprof_writer_get_string_stats(mprof_writer *w,
                                  mprof_writer_string_stats *out) {
  if (!w || !out)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_writer_get_string_stats: NULL");
  int rc = mprof__result_check(out, &string_stats);
  if (rc)
    return rc;
  mprof_writer_string_stats full = MPROF_WRITER_STRING_STATS_INIT;
  pthread_mutex_lock(&w->lock);
  const section_buf *s = &w->sections[MPROF_SECTION_STRINGS];
  full.stored = w->strings_stored;
  full.bytes = s->spilled + s->used;
  full.found = w->strings_found;
  full.tracked = w->string_entry_count;
  full.unique_cap =
      w->string_cap == MPROF_WRITER_STRINGS_ALL ? 0 : w->string_cap;
  full.generations = w->string_generations;
  full.memory_bytes = w->strings.capacity * (sizeof *w->strings.indices +
                                             sizeof *w->strings.hashes) +
                      w->string_entry_capacity * sizeof *w->string_entries +
                      s->capacity + s->extent_capacity * sizeof *s->extents;
  pthread_mutex_unlock(&w->lock);
  mprof__result_store(out, &full, &string_stats);
  return 0;
}

static void track_launch_order(mprof_writer *w, const void *record) {
  const mprof_launch_record *l = (const mprof_launch_record *)record;
  if (w->sections[MPROF_SECTION_LAUNCHES].count > 0 &&
      (l->stream < w->last_stream ||
       (l->stream == w->last_stream && l->start < w->last_start)))
    w->launches_sorted = 0;
  w->last_stream = l->stream;
  w->last_start = l->start;
}

static int append_locked(mprof_writer *w, uint32_t *out_index, uint32_t type,
                         const void *record) {
  section_buf *s = &w->sections[type];
  if (s->count >= UINT32_MAX) {
    w->writer_drops++;
    return mprof__error_set(MPROF_ENOMEM, "%s: section %u is full", w->path,
                            type);
  }
  if (w->failed ||
      section_put(w, type, record, mprof__record_size(type)) != 0) {
    if (!w->failed)
      w->failed = errno ? errno : EIO;
    w->writer_drops++;
    return mprof__error_set(MPROF_EIO, "%s: cannot store a record: %s", w->path,
                            strerror(w->failed));
  }
  if (type == MPROF_SECTION_LAUNCHES)
    track_launch_order(w, record);
  if (out_index)
    *out_index = (uint32_t)s->count;
  s->count++;
  return 0;
}

static int check_record_type(const mprof_writer *w, uint32_t type) {
  if (type == 0 || type > MPROF_SECTION_TYPE_MAX_ ||
      !mprof__record_size(type) || type == MPROF_SECTION_STRINGS ||
      type == MPROF_SECTION_BLOBS || type == MPROF_SECTION_DROPS ||
      type == MPROF_SECTION_SOURCES || type == MPROF_SECTION_MKPROF)
    return mprof__error_set(MPROF_EINVAL,
                            "%s: section type %u cannot take records here",
                            w->path, type);
  return 0;
}

/* Records that a finished file keeps (OPEN_RANGES is snapshots only). */
static int check_append_type(const mprof_writer *w, uint32_t type) {
  if (type == MPROF_SECTION_OPEN_RANGES)
    return mprof__error_set(MPROF_EINVAL,
                            "%s: OPEN_RANGES takes snapshots only "
                            "(mprof_writer_snapshot)",
                            w->path);
  return check_record_type(w, type);
}

int mprof_writer_append(mprof_writer *w, uint32_t *out_index,
                        mprof_section_type type, const void *record) {
  if (!w || !record)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_append: NULL");
  int rc = check_append_type(w, type);
  if (rc)
    return rc;
  pthread_mutex_lock(&w->lock);
  rc = append_locked(w, out_index, type, record);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int mprof_writer_intern(mprof_writer *w, uint32_t *out_index,
                        mprof_section_type type, const void *record) {
  if (!w || !record)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_intern: NULL");
  int rc = check_append_type(w, type);
  if (rc)
    return rc;
  if (section_spills(type))
    return mprof__error_set(MPROF_EINVAL, "%s: section %u is not deduplicated",
                            w->path, type);
  uint32_t size = mprof__record_size(type);
  uint64_t hash = mprof__hash64(record, size);
  pthread_mutex_lock(&w->lock);
  section_buf *s = &w->sections[type];
  mprof__map *t = &s->dedup;
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(t, hash, &cursor)) != MPROF__MAP_NONE)
    if (memcmp(s->data + (size_t)found * size, record, size) == 0) {
      if (out_index)
        *out_index = found;
      pthread_mutex_unlock(&w->lock);
      return 0;
    }
  uint32_t index = 0;
  if (mprof__map_reserve(t, t->count + 1) != 0) {
    w->writer_drops++;
    pthread_mutex_unlock(&w->lock);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", w->path);
  }
  rc = append_locked(w, &index, type, record);
  if (rc == 0) {
    mprof__map_add(t, hash, index); /* reserved above: cannot fail */
    if (out_index)
      *out_index = index;
  }
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int mprof_writer_meta(mprof_writer *w, const char *key, const char *value) {
  if (!w || !key || !*key)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_meta: no key");
  pthread_mutex_lock(&w->lock);
  mprof_meta_record rec;
  rec.key = string_locked(w, key);
  rec.value = string_locked(w, value);
  int rc = append_locked(w, NULL, MPROF_SECTION_META, &rec);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

/* The index of the cubin stored for (@p crc, @p device); count if none. */
static uint64_t cubin_find(const mprof_writer *w, uint64_t crc,
                           uint32_t device) {
  const section_buf *cubins = &w->sections[MPROF_SECTION_CUBINS];
  const mprof_cubin_record *seen = (const mprof_cubin_record *)cubins->data;
  for (uint64_t i = 0; i < cubins->count; i++)
    if (seen[i].crc == crc && seen[i].device == device)
      return i;
  return cubins->count;
}

/* Put @p blob in BLOBS and @p rec, its blob fields filled in, in CUBINS: as
 * record @p at when that one exists (a replacement), else appended. */
static int cubin_store_locked(mprof_writer *w, const mprof_cubin_record *rec,
                              const void *blob, size_t blob_size, uint64_t at) {
  section_buf *cubins = &w->sections[MPROF_SECTION_CUBINS];
  section_buf *blobs = &w->sections[MPROF_SECTION_BLOBS];
  mprof_cubin_record copy = *rec;
  copy.blob_offset = blobs->spilled + blobs->used;
  copy.blob_size = blob_size;
  if (!blob_size)
    copy.flags =
        (copy.flags & ~(MPROF_CUBIN_KEPT_WHOLE | MPROF_CUBIN_TRIMMED)) |
        MPROF_CUBIN_OMITTED;
  if (blob_size) {
    /* Keep blobs 8-byte aligned so a reader could map ELF headers in place. */
    static const unsigned char zeros[8];
    size_t pad = (size_t)((8 - (copy.blob_offset & 7)) & 7);
    copy.blob_offset += pad;
    if (section_put(w, MPROF_SECTION_BLOBS, zeros, pad) != 0 ||
        section_put(w, MPROF_SECTION_BLOBS, blob, blob_size) != 0) {
      w->failed = errno ? errno : EIO;
      w->writer_drops++;
      return mprof__error_set(MPROF_EIO, "%s: cannot store a cubin: %s",
                              w->path, strerror(w->failed));
    }
  }
  if (at >= cubins->count)
    return append_locked(w, NULL, MPROF_SECTION_CUBINS, &copy);
  /* In memory only: the streamed file keeps the record it already has
   * (and its blob), the finished file gets this one. */
  memcpy(cubins->data + at * sizeof copy, &copy, sizeof copy);
  w->cubins_replaced = 1;
  return 0;
}

int mprof_writer_cubin(mprof_writer *w, const mprof_cubin_record *rec,
                       const void *blob, size_t blob_size) {
  if (!w || !rec || (!blob && blob_size))
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_cubin: bad arguments");
  pthread_mutex_lock(&w->lock);
  section_buf *cubins = &w->sections[MPROF_SECTION_CUBINS];
  int rc = 0;
  if (cubin_find(w, rec->crc, rec->device) == cubins->count)
    rc = cubin_store_locked(w, rec, blob, blob_size, cubins->count);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int mprof_writer_cubin_replace(mprof_writer *w, uint32_t old_device,
                               const mprof_cubin_record *rec, const void *blob,
                               size_t blob_size) {
  if (!w || !rec || (!blob && blob_size))
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_writer_cubin_replace: bad arguments");
  pthread_mutex_lock(&w->lock);
  int rc = cubin_store_locked(w, rec, blob, blob_size,
                              cubin_find(w, rec->crc, old_device));
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int mprof_writer_drop(mprof_writer *w, mprof_drop_kind kind, uint32_t device,
                      uint64_t count) {
  if (!w)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_drop: NULL");
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->drop_count; i++) {
    if (w->drops[i].kind == (uint32_t)kind && w->drops[i].device == device) {
      w->drops[i].count += count;
      pthread_mutex_unlock(&w->lock);
      return 0;
    }
  }
  if (MPROF__GROW(w->drops, w->drop_capacity, w->drop_count + 1)) {
    pthread_mutex_unlock(&w->lock);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", w->path);
  }
  w->drops[w->drop_count].kind = (uint32_t)kind;
  w->drops[w->drop_count].device = device;
  w->drops[w->drop_count].count = count;
  w->drop_count++;
  pthread_mutex_unlock(&w->lock);
  return 0;
}

uint64_t mprof_writer_count(mprof_writer *w, mprof_section_type type) {
  if (!w || type == 0 || type > MPROF_SECTION_TYPE_MAX_)
    return 0;
  pthread_mutex_lock(&w->lock);
  uint64_t count = w->sections[type].count;
  pthread_mutex_unlock(&w->lock);
  return count;
}

int mprof_writer_snapshot(mprof_writer *w, mprof_section_type type,
                          const void *records, size_t count) {
  if (!w || (count && !records))
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_snapshot: NULL");
  int rc = check_record_type(w, type);
  if (rc)
    return rc;
  size_t size = count * mprof__record_size(type);
  pthread_mutex_lock(&w->lock);
  section_buf *s = &w->sections[type];
  unsigned char *copy = size ? (unsigned char *)malloc(size) : NULL;
  if (size && !copy) {
    pthread_mutex_unlock(&w->lock);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", w->path);
  }
  if (size)
    memcpy(copy, records, size);
  free(s->snapshot);
  s->snapshot = copy;
  s->snapshot_size = size;
  s->snapshot_dirty = 1;
  pthread_mutex_unlock(&w->lock);
  return 0;
}

/* Put everything not yet in the streamed file there, then a checkpoint.
 * may_allocate = 0 in signal handlers: nothing but write(2). */
static int checkpoint_locked(mprof_writer *w, uint64_t time_ns, int signo,
                             int final, int may_allocate) {
  if (w->failed || w->fd < 0)
    return -1;
  for (uint32_t type = 1; type < SECTION_COUNT; type++) {
    section_buf *s = &w->sections[type];
    if (section_spills(type)) {
      if (section_spill(w, type, may_allocate) != 0)
        return -1;
    } else if (s->used > s->spilled) {
      if (put_chunk(w, MPROF_CHUNK_APPEND, type, mprof__record_size(type),
                    s->data + s->spilled, (size_t)(s->used - s->spilled), NULL,
                    0, NULL) != 0)
        return -1;
      s->spilled = s->used;
    }
    if (s->snapshot_dirty && s->count == 0) {
      if (put_chunk(w, MPROF_CHUNK_SNAPSHOT, type, mprof__record_size(type),
                    s->snapshot, s->snapshot_size, NULL, 0, NULL) != 0)
        return -1;
      s->snapshot_dirty = 0;
    }
  }
  /* Drop counters live in memory until finish makes them a section: until
   * then every checkpoint carries their current values. */
  if (w->sections[MPROF_SECTION_DROPS].count == 0 &&
      (w->drop_count || w->writer_drops)) {
    mprof_drop_record extra = {MPROF_DROP_WRITER_RECORDS, MPROF_INDEX_NONE,
                               w->writer_drops};
    MPROF_STATIC_ASSERT(sizeof(drop_counter) == sizeof(mprof_drop_record),
                        "drop counters are stored as records");
    if (put_chunk(w, MPROF_CHUNK_SNAPSHOT, MPROF_SECTION_DROPS,
                  sizeof(mprof_drop_record), w->drops,
                  w->drop_count * sizeof *w->drops, &extra,
                  w->writer_drops ? sizeof extra : 0, NULL) != 0)
      return -1;
  }
  mprof_checkpoint_record cp;
  memset(&cp, 0, sizeof cp);
  cp.sequence = w->checkpoints + 1;
  cp.file_flags = w->launches_sorted ? MPROF_FILE_FLAG_LAUNCHES_SORTED : 0;
  cp.time = time_ns;
  cp.signal = signo > 0 ? (uint32_t)signo : 0;
  cp.final = final ? 1 : 0;
  if (put_chunk(w, MPROF_CHUNK_CHECKPOINT, 0, sizeof cp, &cp, sizeof cp, NULL,
                0, NULL) != 0)
    return -1;
  w->checkpoints = cp.sequence;
  w->final_committed = final;
  return 0;
}

int mprof_writer_checkpoint(mprof_writer *w, uint64_t time_ns) {
  if (!w)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_checkpoint: NULL");
  pthread_mutex_lock(&w->lock);
  int rc = checkpoint_locked(w, time_ns, 0, 0, 1);
  int err = w->failed;
  pthread_mutex_unlock(&w->lock);
  if (rc)
    return mprof__error_set(MPROF_EIO, "%s: cannot write a checkpoint: %s",
                            w->partial_path, strerror(err ? err : EIO));
  return 0;
}

int mprof_writer_checkpoint_signal(mprof_writer *w, int signo,
                                   uint64_t time_ns) {
  if (!w)
    return MPROF_EINVAL;
  if (pthread_mutex_trylock(&w->lock) != 0)
    return MPROF_EIO;
  int saved = errno;
  int rc = checkpoint_locked(w, time_ns, signo, 0, 0);
  errno = saved;
  pthread_mutex_unlock(&w->lock);
  return rc ? MPROF_EIO : 0;
}

static void writer_free(mprof_writer *w) {
  for (int i = 0; i < SECTION_COUNT; i++) {
    free(w->sections[i].data);
    mprof__map_free(&w->sections[i].dedup);
    free(w->sections[i].extents);
    free(w->sections[i].snapshot);
  }
  mprof__map_free(&w->strings);
  free(w->string_entries);
  free(w->drops);
  if (w->fd >= 0)
    close(w->fd);
  free(w->path);
  free(w->partial_path);
  free(w->final_path);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

void mprof_writer_abort(mprof_writer *w) {
  if (!w)
    return;
  if (w->partial_path && w->fd >= 0)
    unlink(w->partial_path);
  writer_free(w);
}

/* Copy bytes [@p offset, @p offset + @p length) of section @p type, from
 * the streamed file and the buffer, to @p out, adding them to *crc. */
static int copy_range(mprof_writer *w, uint32_t type, uint64_t offset,
                      uint64_t length, int out, uint32_t *crc) {
  const section_buf *s = &w->sections[type];
  uint64_t extent_start = 0;
  for (size_t e = 0; section_spills(type) && e < s->extent_count && length;
       e++) {
    uint64_t extent_length = s->extents[e].length;
    if (offset < extent_start + extent_length) {
      unsigned char chunk[1 << 16];
      uint64_t from = offset - extent_start;
      uint64_t take =
          extent_length - from < length ? extent_length - from : length;
      for (uint64_t done = 0; done < take;) {
        size_t want =
            take - done < sizeof chunk ? (size_t)(take - done) : sizeof chunk;
        ssize_t n = pread(w->fd, chunk, want,
                          (off_t)(s->extents[e].offset + from + done));
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0)
          return -1;
        *crc = mprof_crc32c(*crc, chunk, (size_t)n);
        if (write_all(out, chunk, (size_t)n) != 0)
          return -1;
        done += (uint64_t)n;
      }
      offset += take;
      length -= take;
    }
    extent_start += extent_length;
  }
  if (!length)
    return 0;
  /* The rest lies in the buffer, which follows the spilled bytes. */
  uint64_t buffered = section_spills(type) ? s->spilled : 0;
  if (offset < buffered || offset - buffered > s->used ||
      length > s->used - (offset - buffered))
    return -1;
  *crc = mprof_crc32c(*crc, s->data + (offset - buffered), (size_t)length);
  return write_all(out, s->data + (offset - buffered), (size_t)length);
}

static int pad_to_8(int out, uint64_t *pos, uint32_t *crc) {
  static const unsigned char zeros[8];
  size_t pad = (size_t)((8 - (*pos & 7)) & 7);
  if (pad && write_all(out, zeros, pad) != 0)
    return -1;
  if (crc)
    *crc = mprof_crc32c(*crc, zeros, pad);
  *pos += pad;
  return 0;
}

static uint64_t section_length(const mprof_writer *w, uint32_t type) {
  const section_buf *s = &w->sections[type];
  return section_spills(type) ? s->spilled + s->used : s->used;
}

/* After a cubin was replaced: the CUBINS records with their blobs moved
 * together, in record order, leaving out the blobs nothing refers to; NULL
 * without memory. *blobs_length receives the length BLOBS then has. */
static mprof_cubin_record *compact_cubins(const mprof_writer *w,
                                          uint64_t *blobs_length) {
  const section_buf *s = &w->sections[MPROF_SECTION_CUBINS];
  size_t count = (size_t)s->count;
  mprof_cubin_record *recs =
      (mprof_cubin_record *)malloc((count ? count : 1) * sizeof *recs);
  if (!recs)
    return NULL;
  if (count)
    memcpy(recs, s->data, count * sizeof *recs);
  uint64_t at = 0;
  for (size_t i = 0; i < count; i++) {
    if (recs[i].blob_size)
      at = (at + 7) & ~(uint64_t)7;
    recs[i].blob_offset = at;
    at += recs[i].blob_size;
  }
  *blobs_length = at;
  return recs;
}

/* BLOBS as compact_cubins() laid it out: each record's blob, copied from
 * where it was first written. */
static int emit_compacted_blobs(mprof_writer *w, const mprof_cubin_record *recs,
                                int out, uint64_t *pos, uint32_t *crc) {
  const mprof_cubin_record *old =
      (const mprof_cubin_record *)w->sections[MPROF_SECTION_CUBINS].data;
  size_t count = (size_t)w->sections[MPROF_SECTION_CUBINS].count;
  uint64_t start = *pos;
  for (size_t i = 0; i < count; i++) {
    if (!recs[i].blob_size)
      continue;
    /* Sections start 8-byte aligned: aligning the file aligns the blob. */
    if (pad_to_8(out, pos, crc) != 0 || *pos - start != recs[i].blob_offset ||
        copy_range(w, MPROF_SECTION_BLOBS, old[i].blob_offset, old[i].blob_size,
                   out, crc) != 0)
      return -1;
    *pos += recs[i].blob_size;
  }
  return 0;
}

/* Write the finished layout to @p out. */
static int write_final(mprof_writer *w, int out) {
  mprof_section_entry entries[SECTION_COUNT];
  uint32_t entry_count = 0;
  uint64_t pos = sizeof(mprof_file_header);
  mprof_file_header header;
  memset(&header, 0, sizeof header);
  if (write_all(out, &header, sizeof header) != 0)
    return -1;
  uint64_t blobs_length = 0;
  mprof_cubin_record *compacted = NULL;
  if (w->cubins_replaced && !(compacted = compact_cubins(w, &blobs_length)))
    return -1;
  int rc = 0;
  for (uint32_t type = 1; type < SECTION_COUNT && !rc; type++) {
    uint64_t length = compacted && type == MPROF_SECTION_BLOBS
                          ? blobs_length
                          : section_length(w, type);
    if (!length)
      continue;
    if (pad_to_8(out, &pos, NULL) != 0) {
      rc = -1;
      break;
    }
    mprof_section_entry *e = &entries[entry_count++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->version = 1;
    e->offset = pos;
    e->length = length;
    e->record_size = mprof__record_size(type);
    if (compacted && type == MPROF_SECTION_CUBINS) {
      e->checksum = mprof_crc32c(0, compacted, (size_t)length);
      rc = write_all(out, compacted, (size_t)length);
      pos += length;
    } else if (compacted && type == MPROF_SECTION_BLOBS) {
      rc = emit_compacted_blobs(w, compacted, out, &pos, &e->checksum);
    } else {
      rc = copy_range(w, type, 0, length, out, &e->checksum);
      pos += length;
    }
    if (!rc && pos != e->offset + length)
      rc = -1;
  }
  free(compacted);
  if (rc || pad_to_8(out, &pos, NULL) != 0)
    return -1;
  if (write_all(out, entries, entry_count * sizeof *entries) != 0)
    return -1;
  mprof__file_header(&header,
                     w->launches_sorted ? MPROF_FILE_FLAG_LAUNCHES_SORTED : 0,
                     pos, entries, entry_count);
  if (pwrite(out, &header, sizeof header, 0) != (ssize_t)sizeof header)
    return -1;
  return 0;
}

int mprof_writer_finish(mprof_writer *w) {
  if (!w)
    return mprof__error_set(MPROF_EINVAL, "mprof_writer_finish: NULL");
  pthread_mutex_lock(&w->lock);
  /* Drop counters become a section; the writer's own drops are one of them. */
  if (w->writer_drops) {
    pthread_mutex_unlock(&w->lock);
    mprof_writer_drop(w, MPROF_DROP_WRITER_RECORDS, MPROF_INDEX_NONE,
                      w->writer_drops);
    pthread_mutex_lock(&w->lock);
  }
  for (size_t i = 0; i < w->drop_count; i++) {
    mprof_drop_record rec = {w->drops[i].kind, w->drops[i].device,
                             w->drops[i].count};
    if (section_put(w, MPROF_SECTION_DROPS, &rec, sizeof rec) != 0)
      goto io_error;
    w->sections[MPROF_SECTION_DROPS].count++;
  }
  w->drop_count = 0;
  w->writer_drops = 0;
  /* The streamed file is complete first: a process that dies while the
   * final layout is written still leaves every record behind. */
  if (w->failed || checkpoint_locked(w, 0, 0, 1, 1) != 0)
    goto io_error;
  int out = open(w->final_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0)
    goto io_error;
  if (write_final(w, out) != 0) {
    int err = errno;
    close(out);
    unlink(w->final_path);
    errno = err;
    goto io_error;
  }
  if (close(out) != 0 || rename(w->final_path, w->path) != 0) {
    int err = errno;
    unlink(w->final_path);
    errno = err;
    goto io_error;
  }
  unlink(w->partial_path);
  pthread_mutex_unlock(&w->lock);
  writer_free(w);
  return 0;

io_error : {
  int err = w->failed ? w->failed : errno;
  if (!err)
    err = EIO;
  int rc;
  /* Committed checkpoints are the capture: a failed final copy never takes
   * them away. */
  if (w->checkpoints && w->final_committed)
    rc = mprof__error_set(MPROF_EIO,
                          "%s: cannot write the trace: %s; the whole capture "
                          "(up to its final checkpoint, %u) is kept in %s "
                          "(open it with mprof)",
                          w->path, strerror(err), w->checkpoints,
                          w->partial_path);
  else if (w->checkpoints)
    rc = mprof__error_set(MPROF_EIO,
                          "%s: cannot write the trace: %s; the capture up to "
                          "checkpoint %u is kept in %s (open it with mprof)",
                          w->path, strerror(err), w->checkpoints,
                          w->partial_path);
  else {
    unlink(w->partial_path);
    rc = mprof__error_set(MPROF_EIO,
                          "%s: cannot write the trace: %s; no checkpoint had "
                          "been committed, so nothing is kept",
                          w->path, strerror(err));
  }
  pthread_mutex_unlock(&w->lock);
  writer_free(w);
  errno = err;
  return rc;
}
}
