/*
 * mprof — put one section into a finished trace: every other section is
 * copied byte for byte, the new one goes last, and the directory and the
 * header are written anew (the file is replaced through a partial file).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "format/copy.h"
#include "format/trace_internal.h"
#include "internal.h"

static int put_bytes(mprof__file_out *out, uint64_t *pos, const void *data,
                     size_t size) {
  static const unsigned char zeros[8];
  size_t pad = (size_t)((8 - (*pos & 7)) & 7);
  if ((pad && fwrite(zeros, 1, pad, out->f) != pad) ||
      (size && fwrite(data, 1, size, out->f) != size))
    return -1;
  *pos += pad + size;
  return 0;
}

int mprof__trace_put_section(const char *path, uint32_t type, const void *data,
                             size_t size) {
  mprof_trace *t;
  int rc = mprof_trace_open(&t, path, NULL);
  if (rc)
    return rc;
  if (t->flags & MPROF_FILE_FLAG_STREAMED) {
    mprof_trace_free(t);
    return mprof__error_set(MPROF_EINVAL,
                            "%s: a streamed capture, not a finished trace: "
                            "nothing can be added to it",
                            path);
  }
  const mprof_file_header *h = (const mprof_file_header *)t->map;
  const mprof_section_entry *dir =
      (const mprof_section_entry *)(t->map + h->directory_offset);
  mprof_section_entry *entries = (mprof_section_entry *)calloc(
      (size_t)h->section_count + 1, sizeof *entries);
  if (!entries) {
    mprof_trace_free(t);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  mprof__file_out out;
  rc = mprof__file_out_open(&out, path);
  if (rc) {
    free(entries);
    mprof_trace_free(t);
    return rc;
  }
  mprof_file_header header;
  memset(&header, 0, sizeof header);
  uint64_t pos = 0;
  int failed = put_bytes(&out, &pos, &header, sizeof header);
  uint32_t count = 0;
  for (uint32_t i = 0; i < h->section_count && !failed; i++) {
    if (dir[i].type == type)
      continue; /* replaced */
    entries[count] = dir[i];
    failed =
        put_bytes(&out, &pos, NULL, 0) ||
        (entries[count].offset = pos,
         put_bytes(&out, &pos, t->map + dir[i].offset, (size_t)dir[i].length));
    count++;
  }
  if (!failed && size) {
    mprof_section_entry *e = &entries[count++];
    memset(e, 0, sizeof *e);
    failed = put_bytes(&out, &pos, NULL, 0);
    e->type = type;
    e->version = 1;
    e->offset = pos;
    e->length = size;
    e->record_size = mprof__record_size(type);
    e->checksum = mprof_crc32c(0, data, size);
    failed = failed || put_bytes(&out, &pos, data, size);
  }
  uint64_t dir_at = 0;
  if (!failed) {
    failed = put_bytes(&out, &pos, NULL, 0);
    dir_at = pos;
    failed = failed || put_bytes(&out, &pos, entries, count * sizeof *entries);
  }
  if (!failed) {
    mprof__file_header(&header, h->flags, dir_at, entries, count);
    failed = fseek(out.f, 0, SEEK_SET) != 0 ||
             fwrite(&header, 1, sizeof header, out.f) != sizeof header;
  }
  free(entries);
  mprof_trace_free(t);
  if (failed) {
    mprof__file_out_close(&out, 0);
    return mprof__error_set(MPROF_EIO, "%s: cannot write the trace anew", path);
  }
  return mprof__file_out_close(&out, 1);
}
