/*
 * mprof tests — a writer from the future: rewrites a finished trace as a
 * newer mprof might write it (docs/FORMAT.md, "Compatibility"), so that
 * today's reader can be shown to read it as it reads the original.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_FUTURE_TRACE_H
#define MPROF_TEST_FUTURE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/format.h"

typedef struct future_options {
  /* Bytes appended to every record of every section that has records
   * (not STRINGS, BLOBS), none of them zero: fields a newer writer
   * appended. Also appended to checkpoints in a streamed file. */
  uint32_t extra;
  /* Every known section's layout version (0: as in the input). */
  uint32_t layout_version;
  /* The header's version_minor (0: as in the input). */
  uint16_t minor;
  /* Sections of types no mprof knows (1000 and 0xFFFFFFFF in a finished
   * file; 1000, 0x08000000 and 0xFFFFFFFF in a streamed one). */
  int unknown_sections;
  /* META pairs with keys no mprof writes (future.layout, future.note). */
  int unknown_meta;
  /* Records of section `short_section` are `short_by` bytes shorter than
   * the input's (after `extra`): a file no reader may read. */
  uint32_t short_section;
  uint32_t short_by;
  /* Write a streamed capture (docs/FORMAT.md, "Streamed files") in two
   * rounds of chunks, each ending in a checkpoint, the second final: APPEND
   * chunks, DEVICES and DROPS as SNAPSHOTs (an early one replaced by a
   * later); cut after either checkpoint, it is a whole trace. */
  int streamed;
} future_options;

/* Everything a newer writer may do at once: 12 more bytes a record,
 * layout version 2, the next format minor, unknown sections and META. */
future_options future_options_all(void);

/* @p in (@p size bytes), a finished trace, rewritten as @p o says; a new
 * buffer of *@p out_size bytes (caller frees), NULL when @p in is not a
 * finished trace. */
unsigned char *future_trace(const unsigned char *in, size_t size,
                            const future_options *o, size_t *out_size);

/* Byte offset in @p file of the directory entry of section @p type (a
 * finished file), or of its first chunk header (a streamed one); 0 when
 * it has none. */
size_t future_section_at(const unsigned char *file, size_t size, uint32_t type);

/* A streamed chunk's header (docs/FORMAT.md, "Streamed files"): @p kind of
 * section @p type, @p record_size, a payload it says is @p length bytes,
 * checksummed over the first @p stored of them at @p payload (@p length for
 * a whole chunk); its own checksum last. */
mprof_chunk_header future_chunk_header(uint32_t kind, uint32_t type,
                                       uint32_t record_size,
                                       const void *payload, uint64_t length,
                                       size_t stored);

#endif
