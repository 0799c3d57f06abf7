/*
 * mprof tests — a writer from the future (future_trace.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "future_trace.h"

#include <stdlib.h>
#include <string.h>

#include "mprof/format.h"
#include "mprof/writer.h"

typedef struct buffer {
  unsigned char *data;
  size_t size, capacity;
} buffer;

static void put(buffer *b, const void *data, size_t size) {
  if (b->size + size > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->size + size)
      capacity *= 2;
    unsigned char *grown = (unsigned char *)realloc(b->data, capacity);
    if (!grown)
      abort();
    b->data = grown;
    b->capacity = capacity;
  }
  if (size)
    memcpy(b->data + b->size, data, size);
  b->size += size;
}

static void pad8(buffer *b) {
  static const unsigned char zeros[8];
  put(b, zeros, (8 - (b->size & 7)) & 7);
}

/* Byte @p j of the fields a newer writer appended: never zero, so a reader
 * that read them would be caught. */
static unsigned char appended_byte(size_t j) {
  return (unsigned char)(0xf0u | (j & 0x0fu));
}

/* One section of the rewritten trace. */
typedef struct section {
  uint32_t type, version, record_size;
  buffer bytes;
} section;

/* Strings and META pairs a newer writer added, with keys no mprof knows. */
static const char future_strings[] = "future.layout\0appended fields\0"
                                     "future.note\0written by a newer mprof";
static const uint32_t future_refs[4] = {0, 14, 30, 42};

future_options future_options_all(void) {
  future_options o;
  memset(&o, 0, sizeof o);
  o.extra = 12;
  o.layout_version = 2;
  o.minor = MPROF_FORMAT_VERSION_MINOR + 1;
  o.unknown_sections = 1;
  o.unknown_meta = 1;
  return o;
}

/* Records of @p from bytes at @p src as records of @p to bytes. */
static void put_records(buffer *b, const unsigned char *src, size_t count,
                        uint32_t from, uint32_t to) {
  for (size_t i = 0; i < count; i++) {
    put(b, src + i * from, from < to ? from : to);
    for (size_t j = from; j < to; j++) {
      unsigned char c = appended_byte(j);
      put(b, &c, 1);
    }
  }
}

/* The input's sections as the future writer lays them out; their count, or
 * 0 when @p in is not a finished trace. */
static size_t read_sections(const unsigned char *in, size_t size,
                            const future_options *o, section *out,
                            size_t capacity, uint32_t *flags) {
  if (size < sizeof(mprof_file_header) ||
      memcmp(in, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE) != 0)
    return 0;
  mprof_file_header h;
  memcpy(&h, in, sizeof h);
  if ((h.flags & MPROF_FILE_FLAG_STREAMED) || h.directory_offset > size ||
      h.section_count > capacity ||
      (size - h.directory_offset) / sizeof(mprof_section_entry) <
          h.section_count)
    return 0;
  *flags = h.flags;
  uint32_t strings_length = 0;
  for (uint32_t i = 0; i < h.section_count; i++) {
    mprof_section_entry e;
    memcpy(&e, in + h.directory_offset + i * sizeof e, sizeof e);
    if (e.type == MPROF_SECTION_STRINGS)
      strings_length = (uint32_t)e.length;
  }
  for (uint32_t i = 0; i < h.section_count; i++) {
    mprof_section_entry e;
    memcpy(&e, in + h.directory_offset + i * sizeof e, sizeof e);
    if (e.offset > size || e.length > size - e.offset || !e.record_size)
      return 0;
    section *s = &out[i];
    memset(s, 0, sizeof *s);
    s->type = e.type;
    s->version = o->layout_version ? o->layout_version : e.version;
    const unsigned char *data = in + e.offset;
    if (e.record_size == 1) {
      s->record_size = 1;
      put(&s->bytes, data, (size_t)e.length);
      if (e.type == MPROF_SECTION_STRINGS && o->unknown_meta)
        put(&s->bytes, future_strings, sizeof future_strings);
      continue;
    }
    uint32_t to = e.record_size + o->extra;
    if (e.type == o->short_section)
      to -= o->short_by;
    s->record_size = to;
    put_records(&s->bytes, data, (size_t)(e.length / e.record_size),
                e.record_size, to);
    if (e.type == MPROF_SECTION_META && o->unknown_meta) {
      mprof_meta_record m[2] = {
          {strings_length + future_refs[0], strings_length + future_refs[1]},
          {strings_length + future_refs[2], strings_length + future_refs[3]}};
      put_records(&s->bytes, (const unsigned char *)m, 2, sizeof m[0], to);
    }
  }
  return h.section_count;
}

/* Sections of types no mprof knows, as a newer writer might add. */
static section unknown_section(uint32_t type, uint32_t version,
                               uint32_t record_size, size_t count) {
  section s;
  memset(&s, 0, sizeof s);
  s.type = type;
  s.version = version;
  s.record_size = record_size;
  for (size_t j = 0; j < count * record_size; j++) {
    unsigned char c = appended_byte(j + 3);
    put(&s.bytes, &c, 1);
  }
  return s;
}

static void put_entry(buffer *b, section *s, mprof_section_entry *entry) {
  pad8(b);
  memset(entry, 0, sizeof *entry);
  entry->type = s->type;
  entry->version = s->version;
  entry->offset = b->size;
  entry->length = s->bytes.size;
  entry->record_size = s->record_size;
  entry->checksum = mprof_crc32c(0, s->bytes.data, s->bytes.size);
  put(b, s->bytes.data, s->bytes.size);
}

static unsigned char *write_finished(section *sections, size_t count,
                                     const future_options *o, uint32_t flags,
                                     uint16_t minor, size_t *out_size) {
  buffer b = {NULL, 0, 0};
  mprof_file_header h;
  memset(&h, 0, sizeof h);
  put(&b, &h, sizeof h);
  mprof_section_entry entries[64];
  size_t n = 0;
  section first = unknown_section(0xffffffffu, 9, 1, 13);
  section last = unknown_section(1000, 3, 24, 3);
  if (o->unknown_sections)
    put_entry(&b, &first, &entries[n++]);
  for (size_t i = 0; i < count; i++)
    put_entry(&b, &sections[i], &entries[n++]);
  if (o->unknown_sections)
    put_entry(&b, &last, &entries[n++]);
  free(first.bytes.data);
  free(last.bytes.data);
  pad8(&b);
  memcpy(h.magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE);
  h.version_major = MPROF_FORMAT_VERSION_MAJOR;
  h.version_minor = minor;
  h.flags = flags;
  h.directory_offset = b.size;
  h.section_count = (uint32_t)n;
  h.directory_checksum = mprof_crc32c(0, entries, n * sizeof entries[0]);
  put(&b, entries, n * sizeof entries[0]);
  h.file_size = b.size;
  h.header_checksum = mprof_crc32c(0, &h, 40);
  memcpy(b.data, &h, sizeof h);
  *out_size = b.size;
  return b.data;
}

mprof_chunk_header future_chunk_header(uint32_t kind, uint32_t type,
                                       uint32_t record_size,
                                       const void *payload, uint64_t length,
                                       size_t stored) {
  mprof_chunk_header c;
  memset(&c, 0, sizeof c);
  c.magic = MPROF_CHUNK_MAGIC;
  c.kind = kind;
  c.section = type;
  c.record_size = record_size;
  c.length = length;
  c.checksum = mprof_crc32c(0, payload, stored);
  c.header_checksum = mprof_crc32c(0, &c, 28);
  return c;
}

static void put_chunk(buffer *b, uint32_t kind, uint32_t type,
                      uint32_t record_size, const void *payload,
                      size_t length) {
  mprof_chunk_header c =
      future_chunk_header(kind, type, record_size, payload, length, length);
  put(b, &c, sizeof c);
  put(b, payload, length);
  pad8(b);
}

static void put_checkpoint(buffer *b, uint32_t sequence, uint32_t flags,
                           uint32_t final, uint32_t extra) {
  buffer payload = {NULL, 0, 0};
  mprof_checkpoint_record cp;
  memset(&cp, 0, sizeof cp);
  cp.sequence = sequence;
  cp.file_flags = flags;
  cp.time = 1000000ull * sequence;
  cp.final = final;
  put_records(&payload, (const unsigned char *)&cp, 1, sizeof cp,
              (uint32_t)sizeof cp + extra);
  put_chunk(b, MPROF_CHUNK_CHECKPOINT, 0, 0, payload.data, payload.size);
  free(payload.data);
}

/* A section's chunks of the first or second round, laid out as a producer
 * would, so that a file cut after either checkpoint is a whole trace:
 * tables whole in the first round (STRINGS and BLOBS in two APPEND chunks),
 * records nothing refers to split over both rounds, SPANS (which refer to
 * LAUNCHES) in the second; DEVICES and DROPS come as SNAPSHOTs in both
 * rounds, the first DROPS one holding one record. */
static void put_section_chunk(buffer *b, const section *s, int round) {
  size_t count = s->bytes.size / s->record_size;
  size_t half = count / 2 * s->record_size, from = 0, to = s->bytes.size;
  switch (s->type) {
  case MPROF_SECTION_DEVICES:
  case MPROF_SECTION_DROPS:
    if (round == 0 && s->type == MPROF_SECTION_DROPS && count)
      to = s->record_size;
    if (to)
      put_chunk(b, MPROF_CHUNK_SNAPSHOT, s->type, s->record_size, s->bytes.data,
                to);
    return;
  case MPROF_SECTION_LAUNCHES:
  case MPROF_SECTION_MEMOPS:
  case MPROF_SECTION_RANGES:
  case MPROF_SECTION_PC_SAMPLES:
  case MPROF_SECTION_PM_SAMPLES:
  case MPROF_SECTION_API_CALLS:
  case MPROF_SECTION_MEMORY_ACCESSES:
    from = round == 0 ? 0 : half;
    to = round == 0 ? half : s->bytes.size;
    break;
  case MPROF_SECTION_SPANS:
    if (round == 0)
      return;
    break;
  case MPROF_SECTION_STRINGS:
  case MPROF_SECTION_BLOBS:
    if (round == 1)
      return;
    put_chunk(b, MPROF_CHUNK_APPEND, s->type, 1, s->bytes.data, half);
    from = half;
    break;
  default:
    if (round == 1)
      return;
  }
  if (to > from)
    put_chunk(b, MPROF_CHUNK_APPEND, s->type, s->record_size,
              s->bytes.data + from, to - from);
}

static unsigned char *write_streamed(section *sections, size_t count,
                                     const future_options *o, uint32_t flags,
                                     uint16_t minor, size_t *out_size) {
  buffer b = {NULL, 0, 0};
  mprof_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MPROF_FORMAT_MAGIC, MPROF_FORMAT_MAGIC_SIZE);
  h.version_major = MPROF_FORMAT_VERSION_MAJOR;
  h.version_minor = minor;
  h.flags = MPROF_FILE_FLAG_STREAMED;
  h.header_checksum = mprof_crc32c(0, &h, 40);
  put(&b, &h, sizeof h);
  section unknown[3] = {unknown_section(0x08000000u, 1, 8, 2),
                        unknown_section(0xffffffffu, 1, 1, 13),
                        unknown_section(1000, 1, 24, 3)};
  for (int round = 0; round < 2; round++) {
    for (size_t i = 0; i < count; i++)
      put_section_chunk(&b, &sections[i], round);
    for (size_t u = round; o->unknown_sections && u < 3; u += 2)
      put_chunk(&b, MPROF_CHUNK_APPEND, unknown[u].type, unknown[u].record_size,
                unknown[u].bytes.data, unknown[u].bytes.size);
    put_checkpoint(&b, (uint32_t)round + 1, flags, (uint32_t)round, o->extra);
  }
  for (size_t u = 0; u < 3; u++)
    free(unknown[u].bytes.data);
  *out_size = b.size;
  return b.data;
}

unsigned char *future_trace(const unsigned char *in, size_t size,
                            const future_options *o, size_t *out_size) {
  section sections[64];
  uint32_t flags = 0;
  size_t count = read_sections(in, size, o, sections, 64, &flags);
  if (!count)
    return NULL;
  mprof_file_header h;
  memcpy(&h, in, sizeof h);
  uint16_t minor = o->minor ? o->minor : h.version_minor;
  unsigned char *out =
      o->streamed ? write_streamed(sections, count, o, flags, minor, out_size)
                  : write_finished(sections, count, o, flags, minor, out_size);
  for (size_t i = 0; i < count; i++)
    free(sections[i].bytes.data);
  return out;
}

size_t future_section_at(const unsigned char *file, size_t size,
                         uint32_t type) {
  mprof_file_header h;
  if (size < sizeof h)
    return 0;
  memcpy(&h, file, sizeof h);
  if (h.flags & MPROF_FILE_FLAG_STREAMED) {
    size_t pos = sizeof h;
    while (pos + sizeof(mprof_chunk_header) <= size) {
      mprof_chunk_header c;
      memcpy(&c, file + pos, sizeof c);
      if (c.kind != MPROF_CHUNK_CHECKPOINT && c.section == type)
        return pos;
      pos += sizeof c + ((c.length + 7) & ~(uint64_t)7);
    }
    return 0;
  }
  for (uint32_t i = 0; i < h.section_count; i++) {
    mprof_section_entry e;
    size_t at = h.directory_offset + i * sizeof e;
    if (at + sizeof e > size)
      return 0;
    memcpy(&e, file + at, sizeof e);
    if (e.type == type)
      return at;
  }
  return 0;
}
