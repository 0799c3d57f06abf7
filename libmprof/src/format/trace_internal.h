/*
 * mprof — the reader's own view of a trace (struct mprof_trace) and what its
 * files share: trace.c opens and answers, trace_sections.c names sections
 * and their layouts and words parse errors, trace_validate.c checks a file
 * once, trace_streamed.c puts a streamed file together. Internal to format/.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_TRACE_INTERNAL_H
#define MPROF_FORMAT_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "mprof/trace.h"

#define SECTION_COUNT (MPROF_SECTION_TYPE_MAX_ + 1)

/* A section as the reader hands it out: records in this reader's layout
 * (format.h), in place in the file, or in `owned` when the file's records
 * are longer or shorter (a newer or older writer's layout). */
typedef struct section_view {
  const unsigned char *data;
  uint64_t offset; /* in the file, for messages */
  uint64_t length; /* of `data`: count * the reader's record size */
  size_t count;
  uint32_t record_size; /* in the file, for messages */
  unsigned char *owned; /* NULL when `data` is in the file */
} section_view;

struct mprof_trace {
  char *path;
  const unsigned char *map;
  size_t map_size;
  unsigned char *image; /* a streamed file put together; owns map */
  uint32_t flags;
  section_view sections[SECTION_COUNT];
  /* Per-stream launch order: stream s owns positions
   * [stream_first[s], stream_first[s + 1]) of `order` (or of the launch
   * array itself when the file is already sorted and order is NULL). */
  size_t *stream_first;
  uint32_t *order;
  uint64_t *stream_max_duration;
  uint64_t time_start, time_end;
  /* The processes (processes.c): the PROCESSES records, or the table a
   * trace written before them gets from its META (processes_made, owned);
   * each stream's and device's process; the text of their numbers. */
  const mprof_process_record *processes;
  size_t process_count;
  mprof_process_record *processes_made;
  uint32_t *stream_process;
  uint32_t *device_process;
  char *process_text;
  /* A set opened as one (set.c): a view over its members' mappings; NULL
   * for a trace of one file. */
  struct mprof__set *set;
  /* Sets that hold this trace besides its owner (mprof__trace_hold()):
   * mprof_trace_free() frees it once the last of them lets go. */
  int holders;
};

/* One more holder of @p t: a set over it keeps it open. */
static inline void mprof__trace_hold(const mprof_trace *t) {
  __atomic_add_fetch(&((mprof_trace *)t)->holders, 1, __ATOMIC_RELAXED);
}

/* A parse error: "PATH: SECTION at byte N: what". */
#define BAD(t, type, off, ...)                                                 \
  mprof__trace_bad_at((t), (type), (uint64_t)(off), __VA_ARGS__)
int mprof__trace_bad_at(const mprof_trace *t, uint32_t type, uint64_t offset,
                        const char *fmt, ...) MPROF__PRINTF(4, 5);

/* The fields of records that refer elsewhere or hold times (a string ref,
 * an index into another section, with MPROF_INDEX_NONE allowed or not, a
 * correlation id, a start and end pair, a range of records of another
 * section: a first index, then a u32 count), in trace_sections.c: the reader
 * checks the `checked` ones at open (trace_validate.c), the copier
 * re-interns and moves them all (copy.c). */
enum {
  FIELD_STRING,
  FIELD_INDEX,
  FIELD_INDEX_OR_NONE,
  FIELD_CORRELATION,
  FIELD_TIMES,
  FIELD_RANGE
};

typedef struct record_field {
  uint32_t section;
  uint8_t kind;
  uint8_t checked;
  uint16_t offset; /* of the u32 field; of `start` for FIELD_TIMES; of the
                      first index for FIELD_RANGE (its count follows) */
  uint16_t aux;    /* the section indexed; of `end` for FIELD_TIMES */
  const char *what;
} record_field;

/* The fields of @p section's records; *count of them. */
const record_field *mprof__section_fields(uint32_t section, size_t *count);

/* The u32 field (a string ref, an index, a correlation id) and the u64
 * field (a time) at @p p in a record, which need not be aligned. */
static inline uint32_t mprof__u32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline uint64_t mprof__u64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Records longer than this are not a layout of this format, from any
 * writer: the bound keeps a damaged size from meaning anything. */
#define MPROF__RECORD_SIZE_MAX 65536u

/* The layout version of @p type's records this reader knows (1 for every
 * section today); @p type must be a known section. */
uint32_t mprof__layout_version(uint32_t type);

/* Whether this reader reads @p type's records when the file stores them in
 * @p stored bytes at layout @p version (0: the file does not say, as in a
 * streamed chunk): NULL if it does, else what is wrong, in @p why, as words
 * that follow "section NAME has ", e.g. "records of 32 bytes, shorter than
 * the 40 bytes this mprof reads". @p type must be a known section. */
const char *mprof__layout_problem(uint32_t type, uint32_t version,
                                  uint32_t stored, char *why, size_t size);

/* @p count records of @p stored bytes at @p src, into @p dst in records of
 * @p want bytes: the bytes both layouts have are copied, fields a newer
 * writer appended are left behind, fields an older one lacked are zero. */
void mprof__records_resize(unsigned char *dst, uint32_t want,
                           const unsigned char *src, uint32_t stored,
                           size_t count);

/* Whether to verify checksums: as @p opts say, and never in a fuzzing
 * build (cmake -DMPROF_FUZZING=ON), where no checksum at all is verified
 * (header, directory, sections, chunk headers and payloads) so that mutated
 * inputs reach the parsers instead of stopping at a CRC. Such a build is
 * for fuzzing only, never for reading real traces. */
#ifdef MPROF_FUZZING_NO_CHECKSUMS
#define MPROF__VERIFY_CHECKSUMS(opts) ((void)(opts), 0)
#define MPROF__VERIFY_CHUNK_HEADERS 0
#else
#define MPROF__VERIFY_CHECKSUMS(opts)                                          \
  (!((opts)->flags & MPROF_OPEN_NO_CHECKSUMS))
#define MPROF__VERIFY_CHUNK_HEADERS 1
#endif

/* trace_validate.c: each step of checking a file once at open. */
/* The header's checksum (bytes 0..39) and flags, for finished and streamed
 * files alike. */
int mprof__trace_check_header_words(const mprof_trace *t,
                                    const mprof_open_options *opts);
int mprof__trace_validate_header(mprof_trace *t,
                                 const mprof_open_options *opts);
int mprof__trace_validate_directory(mprof_trace *t,
                                    const mprof_open_options *opts);
int mprof__trace_validate_tables(mprof_trace *t);
int mprof__trace_validate_launches(mprof_trace *t);

/* processes.c: check the PROCESSES records and index who owns each stream
 * and device (or build the table from META for an older trace); free it. */
int mprof__trace_index_processes(mprof_trace *t);
void mprof__trace_free_processes(mprof_trace *t);

/* set.c: build section @p type of a set on first use (records moved from
 * its members); 0 or MPROF_ENOMEM. A no-op for a trace of one file and a
 * section already there. */
int mprof__set_section(const mprof_trace *t, uint32_t type);
/* The bytes of a set's cubin (its blob_offset counts through the members'
 * BLOBS in order), in place in its member's file. */
const void *mprof__set_cubin_blob(const mprof_trace *t,
                                  const mprof_cubin_record *cubin,
                                  size_t *size);
void mprof__set_free(mprof_trace *t);

/* trace_streamed.c: a streamed file's chunks put together as one image. */
int mprof__trace_open_streamed(mprof_trace *t, const mprof_open_options *opts);

#endif
