/*
 * mprof — .mprof reader: streamed files, their chunks put together as
 * one image (docs/FORMAT.md, "Streamed files").
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "internal.h"
#include "mprof/trace.h"
#include "mprof/writer.h"
#include "format/trace_internal.h"

/* ---- streamed files ------------------------------------------------------ */

typedef struct chunk_ref {
  uint32_t kind;
  uint32_t section;
  uint32_t record_size;
  uint64_t offset; /* payload */
  uint64_t length;
} chunk_ref;

typedef struct image_builder {
  unsigned char *data;
  size_t size;
  size_t capacity;
} image_builder;

static int image_put(image_builder *b, const void *data, size_t size) {
  if (MPROF__GROW(b->data, b->capacity, b->size + size))
    return -1;
  if (size)
    memcpy(b->data + b->size, data, size);
  b->size += size;
  return 0;
}

static int image_pad(image_builder *b) {
  static const unsigned char zeros[8];
  return image_put(b, zeros, (8 - (b->size & 7)) & 7);
}

/* Append @p length bytes of records of @p stored bytes each in records of
 * @p want bytes, this reader's layout. */
static int image_put_records(image_builder *b, const unsigned char *records,
                             uint64_t length, uint32_t stored, uint32_t want) {
  if (stored == want)
    return image_put(b, records, (size_t)length);
  size_t count = (size_t)(length / stored);
  if (MPROF__GROW(b->data, b->capacity, b->size + count * want))
    return -1;
  mprof__records_resize(b->data + b->size, want, records, stored, count);
  b->size += count * want;
  return 0;
}

/* Does the committed part of @p chunks have an APPEND for @p type? */
static int has_append(const chunk_ref *chunks, size_t count, uint32_t type) {
  for (size_t i = 0; i < count; i++)
    if (chunks[i].kind == MPROF_CHUNK_APPEND && chunks[i].section == type)
      return 1;
  return 0;
}

static int compare_range_start(const void *a, const void *b) {
  uint64_t sa = ((const mprof_range_record *)a)->start;
  uint64_t sb = ((const mprof_range_record *)b)->start;
  return sa < sb ? -1 : sa > sb;
}

/*
 * The NVTX ranges still open at the cut: the last OPEN_RANGES snapshot
 * (@p snap, its records checked to be ranges) appended to the RANGES section
 * that starts at @p section in the image, each ending at the last
 * checkpoint's time @p cut_ns and flagged MPROF_RANGE_FLAG_OPEN. A range the
 * section already holds (it closed after the snapshot, and a checkpoint
 * written by a signal handler committed it without a new snapshot) is left
 * out. Returns 0, or -1 without memory.
 */
static int append_open_ranges(image_builder *b, size_t section,
                              const unsigned char *file, const chunk_ref *snap,
                              uint64_t cut_ns) {
  size_t count = (size_t)(snap->length / snap->record_size);
  if (!count)
    return 0;
  mprof_range_record *open = (mprof_range_record *)calloc(count, sizeof *open);
  unsigned char *closed = (unsigned char *)calloc(count, 1);
  if (!open || !closed) {
    free(open);
    free(closed);
    return -1;
  }
  /* A newer writer's longer records: the fields this reader knows. */
  for (size_t i = 0; i < count; i++)
    memcpy(&open[i], file + snap->offset + i * snap->record_size,
           sizeof open[i]);
  qsort(open, count, sizeof *open, compare_range_start);
  for (size_t at = section; at + sizeof *open <= b->size; at += sizeof *open) {
    mprof_range_record r;
    memcpy(&r, b->data + at, sizeof r);
    size_t lo = 0, hi = count; /* the first open range starting at r.start */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (open[mid].start < r.start)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (; lo < count && open[lo].start == r.start; lo++)
      if (open[lo].thread_id == r.thread_id && open[lo].name == r.name &&
          open[lo].domain == r.domain && open[lo].depth == r.depth)
        closed[lo] = 1;
  }
  int rc = 0;
  for (size_t i = 0; i < count && !rc; i++) {
    if (closed[i])
      continue;
    open[i].end = cut_ns > open[i].start ? cut_ns : open[i].start;
    open[i].flags |= MPROF_RANGE_FLAG_OPEN;
    rc = image_put(b, &open[i], sizeof open[i]);
  }
  free(open);
  free(closed);
  return rc;
}

/* Read the chunks of the streamed file in @p t: every APPEND and SNAPSHOT
 * chunk of a section this reader knows into *@p out (*@p count of them, the
 * first *@p committed before the last checkpoint), the last checkpoint into
 * @p last and where its chunk ends into @p committed_end. */
static int read_chunks(mprof_trace *t, int check, chunk_ref **out,
                       size_t *count, size_t *committed,
                       uint64_t *committed_end, mprof_checkpoint_record *last) {
  const unsigned char *file = t->map;
  size_t size = t->map_size, capacity = 0;
  uint64_t pos = sizeof(mprof_file_header);
  /* The first chunk that is cut or damaged ends the file: what follows the
   * last checkpoint before it was never committed. */
  while (pos + sizeof(mprof_chunk_header) <= size) {
    mprof_chunk_header h;
    memcpy(&h, file + pos, sizeof h);
    if (h.magic != MPROF_CHUNK_MAGIC ||
        (MPROF__VERIFY_CHUNK_HEADERS &&
         mprof_crc32c(0, &h, 28) != h.header_checksum))
      break;
    uint64_t payload = pos + sizeof h;
    if (h.length > size - payload)
      break;
    uint64_t padded = (h.length + 7) & ~(uint64_t)7;
    if (check &&
        mprof_crc32c(0, file + payload, (size_t)h.length) != h.checksum)
      break;
    if (h.kind == MPROF_CHUNK_CHECKPOINT) {
      /* A newer writer may append fields: read the ones we know. */
      if (h.length < sizeof *last)
        break;
      memcpy(last, file + payload, sizeof *last);
      *committed = *count;
      *committed_end = payload + padded < size ? payload + padded : size;
    } else if (h.kind == MPROF_CHUNK_APPEND || h.kind == MPROF_CHUNK_SNAPSHOT) {
      if (h.section == 0 || h.record_size == 0 || h.length % h.record_size)
        break;
      /* A section this reader does not know (from a newer writer, or any
       * number at all): skipped, never kept or sized by its type. */
      if (mprof__record_size(h.section)) {
        if (MPROF__GROW(*out, capacity, *count + 1))
          return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
        chunk_ref *c = &(*out)[(*count)++];
        c->kind = h.kind;
        c->section = h.section;
        c->record_size = h.record_size;
        c->offset = payload;
        c->length = h.length;
      }
    } else {
      break; /* a chunk kind from a newer writer: stop at what we know */
    }
    pos = payload + padded;
  }
  if (last->sequence == 0)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: the capture ended before its first "
                            "checkpoint, so it holds nothing (a capture "
                            "writes one every second)",
                            t->path);
  return 0;
}

/*
 * A streamed file (a capture still running, or cut short): read its chunks
 * up to the last checkpoint and lay them out as a finished trace in memory,
 * records in this reader's layout, with META `capture.partial` and friends
 * saying what was found; then the usual validation runs on that image.
 */
int mprof__trace_open_streamed(mprof_trace *t, const mprof_open_options *opts) {
  const unsigned char *file = t->map;
  size_t size = t->map_size;
  int rc = mprof__trace_check_header_words(t, opts);
  if (rc)
    return rc;
  chunk_ref *chunks = NULL;
  size_t count = 0, committed = 0;
  uint64_t committed_end = sizeof(mprof_file_header);
  mprof_checkpoint_record last;
  memset(&last, 0, sizeof last);
  rc = read_chunks(t, MPROF__VERIFY_CHECKSUMS(opts), &chunks, &count,
                   &committed, &committed_end, &last);
  if (rc) {
    free(chunks);
    return rc;
  }

  /* The ranges open at the last checkpoint become RANGES records. */
  size_t open_ranges = SIZE_MAX;
  for (size_t i = 0; i < committed; i++)
    if (chunks[i].section == MPROF_SECTION_OPEN_RANGES &&
        chunks[i].kind == MPROF_CHUNK_SNAPSHOT)
      open_ranges = chunks[i].length ? i : SIZE_MAX; /* the last one */
  if (open_ranges != SIZE_MAX &&
      chunks[open_ranges].record_size < sizeof(mprof_range_record)) {
    uint64_t offset = chunks[open_ranges].offset;
    uint32_t record_size = chunks[open_ranges].record_size;
    free(chunks);
    return BAD(t, MPROF_SECTION_OPEN_RANGES, offset,
               "records of %u bytes, shorter than the %zu of a range",
               record_size, sizeof(mprof_range_record));
  }

  /* Reader-made META pairs that say what a streamed file holds; a note
   * whose `shown` is 0 is left out. */
  const struct {
    const char *key;
    unsigned long long value;
    int shown;
  } notes[] = {{"capture.partial", !last.final, 1},
               {"capture.checkpoints", last.sequence, 1},
               {"capture.checkpoint_ns", last.time, 1},
               {"capture.lost_bytes", size - committed_end, 1},
               {"capture.signal", last.signal, last.signal != 0}};
  enum { note_count = sizeof notes / sizeof notes[0] };

  /* Sections in type order, as a finished file has them. */
  image_builder b = {NULL, 0, 0};
  mprof_section_entry entries[SECTION_COUNT];
  uint32_t entry_count = 0;
  mprof_file_header header;
  memset(&header, 0, sizeof header);
  int failed = image_put(&b, &header, sizeof header) != 0;
  uint32_t note_refs[2 * note_count];
  for (uint32_t type = 1; type < SECTION_COUNT && !failed; type++) {
    if (type == MPROF_SECTION_OPEN_RANGES)
      continue; /* in RANGES */
    int appended = has_append(chunks, committed, type);
    size_t snapshot = SIZE_MAX, first = SIZE_MAX;
    uint32_t record_size = 0;
    for (size_t i = 0; i < committed; i++) {
      if (chunks[i].section != type)
        continue;
      if (record_size && chunks[i].record_size != record_size) {
        rc = BAD(t, type, chunks[i].offset - sizeof(mprof_chunk_header),
                 "chunks of section %s disagree on the record size (%u, %u)",
                 mprof_section_name(type), record_size, chunks[i].record_size);
        goto out;
      }
      record_size = chunks[i].record_size;
      if (first == SIZE_MAX)
        first = i;
      if (chunks[i].kind == MPROF_CHUNK_SNAPSHOT)
        snapshot = i;
    }
    uint32_t want = mprof__record_size(type);
    char why[160];
    if (record_size &&
        mprof__layout_problem(type, 0, record_size, why, sizeof why)) {
      rc = BAD(t, type, chunks[first].offset - sizeof(mprof_chunk_header),
               "a chunk has %s", why);
      goto out;
    }
    int extra = type == MPROF_SECTION_STRINGS || type == MPROF_SECTION_META ||
                (type == MPROF_SECTION_RANGES && open_ranges != SIZE_MAX);
    if (!record_size && !extra)
      continue;
    failed |= image_pad(&b) != 0;
    mprof_section_entry *e = &entries[entry_count++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->version = mprof__layout_version(type);
    e->offset = b.size;
    e->record_size = want;
    for (size_t i = 0; i < committed && !failed; i++) {
      if (chunks[i].section != type)
        continue;
      if (appended ? chunks[i].kind == MPROF_CHUNK_APPEND : i == snapshot)
        failed |= image_put_records(&b, file + chunks[i].offset,
                                    chunks[i].length, record_size, want) != 0;
    }
    if (type == MPROF_SECTION_RANGES && open_ranges != SIZE_MAX && !failed)
      failed |= append_open_ranges(&b, (size_t)e->offset, file,
                                   &chunks[open_ranges], last.time) != 0;
    if (type == MPROF_SECTION_STRINGS) {
      /* The notes' strings go at the end of the table. */
      if (b.size == e->offset)
        failed |= image_put(&b, "", 1) != 0; /* reference 0 */
      for (size_t n = 0; n < note_count && !failed; n++) {
        if (!notes[n].shown)
          continue;
        char value[24];
        int length = snprintf(value, sizeof value, "%llu", notes[n].value);
        note_refs[2 * n] = (uint32_t)(b.size - e->offset);
        failed |= image_put(&b, notes[n].key, strlen(notes[n].key) + 1) != 0;
        note_refs[2 * n + 1] = (uint32_t)(b.size - e->offset);
        failed |= image_put(&b, value, (size_t)length + 1) != 0;
      }
    }
    if (type == MPROF_SECTION_META) {
      for (size_t n = 0; n < note_count && !failed; n++) {
        if (!notes[n].shown)
          continue;
        mprof_meta_record m = {note_refs[2 * n], note_refs[2 * n + 1]};
        failed |= image_put(&b, &m, sizeof m) != 0;
      }
    }
    e->length = b.size - e->offset;
    if (!failed)
      e->checksum = mprof_crc32c(0, b.data + e->offset, (size_t)e->length);
  }
  failed |= image_pad(&b) != 0;
  uint64_t directory_offset = b.size;
  if (!failed)
    failed |=
        image_put(&b, entries, entry_count * sizeof(mprof_section_entry)) != 0;
  if (failed) {
    rc = mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
    goto out;
  }
  mprof__file_header(&header, last.file_flags & MPROF_FILE_FLAG_LAUNCHES_SORTED,
                     directory_offset, entries, entry_count);
  memcpy(b.data, &header, sizeof header);
  mprof__file_map old = {t->map, t->map_size};
  mprof__file_map_close(&old);
  t->image = b.data;
  t->map = b.data;
  t->map_size = b.size;
  b.data = NULL;
out:
  free(chunks);
  free(b.data);
  return rc;
}
