/*
 * mprof — the SOURCES section (docs/FORMAT.md): embedding the source files
 * of a trace's sampled code, and reading them back.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/arena.h"
#include "base/array.h"
#include "format/copy.h"
#include "internal.h"
#include "mprof/sass.h"
#include "mprof/sources.h"
#include "mprof/status.h"
#include "sources_internal.h"

MPROF__VERSIONS(report_versions, "sources report",
                MPROF__END_OF(mprof_sources_report, stored_bytes));

/* ---- reading ------------------------------------------------------------ */

/* Entry @p at of the section, or NULL past its end (the reader checked
 * every entry at open). */
static const mprof_source_entry *entry_at(const unsigned char *bytes,
                                          size_t size, size_t at,
                                          mprof_source_entry *copy) {
  if (!bytes || at + sizeof *copy > size)
    return NULL;
  memcpy(copy, bytes + at, sizeof *copy);
  return copy;
}

char *mprof__sources_embedded(const mprof_trace *trace, const char *path,
                              size_t *size, int *listed) {
  *size = 0;
  *listed = 0;
  size_t length;
  const unsigned char *bytes = (const unsigned char *)mprof_trace_section(
      trace, MPROF_SECTION_SOURCES, &length);
  size_t want = strlen(path);
  mprof_source_entry e;
  for (size_t at = 0; entry_at(bytes, length, at, &e); at += e.entry_size) {
    const unsigned char *p = bytes + at + sizeof e;
    if (e.path_size != want || memcmp(p, path, want) != 0)
      continue;
    *listed = 1;
    if (e.state != MPROF_SOURCE_ENTRY_EMBEDDED ||
        e.size > MPROF__SOURCE_MAX_BYTES)
      return NULL;
    const unsigned char *stored = p + e.path_size;
    char *text = (char *)malloc((size_t)e.size + 1);
    if (!text)
      return NULL;
    if (e.stored == MPROF_SOURCE_STORED_ZLIB) {
      uLongf got = (uLongf)e.size;
      if (uncompress((Bytef *)text, &got, stored, (uLong)e.stored_size) !=
              Z_OK ||
          got != e.size) {
        free(text);
        return NULL; /* damaged: shown as not embedded */
      }
    } else {
      memcpy(text, stored, (size_t)e.size);
    }
    if (mprof_crc32c(0, text, (size_t)e.size) != e.crc32c) {
      free(text);
      return NULL;
    }
    text[e.size] = '\0';
    *size = (size_t)e.size;
    return text;
  }
  return NULL;
}

int mprof__sources_list(const mprof_trace *trace, mprof_source_listing **out,
                        size_t *count, char **paths) {
  *out = NULL;
  *count = 0;
  *paths = NULL;
  size_t length;
  const unsigned char *bytes = (const unsigned char *)mprof_trace_section(
      trace, MPROF_SECTION_SOURCES, &length);
  size_t n = 0, chars = 0;
  mprof_source_entry e;
  for (size_t at = 0; entry_at(bytes, length, at, &e); at += e.entry_size) {
    n++;
    chars += e.path_size + 1;
  }
  if (!n)
    return 0;
  mprof_source_listing *list = (mprof_source_listing *)calloc(n, sizeof *list);
  char *text = (char *)malloc(chars);
  if (!list || !text) {
    free(list);
    free(text);
    return MPROF_ENOMEM;
  }
  size_t i = 0;
  char *put = text;
  for (size_t at = 0; entry_at(bytes, length, at, &e); at += e.entry_size) {
    memcpy(put, bytes + at + sizeof e, e.path_size);
    put[e.path_size] = '\0';
    list[i].path = put;
    list[i].state = e.state == MPROF_SOURCE_ENTRY_EMBEDDED
                        ? MPROF_SOURCE_EMBEDDED
                        : MPROF_SOURCE_MISSING;
    list[i].crc32c = e.crc32c;
    list[i].size = e.size;
    list[i].stored = e.stored_size;
    put += e.path_size + 1;
    i++;
  }
  *out = list;
  *count = n;
  *paths = text;
  return 0;
}

/* ---- embedding ---------------------------------------------------------- */

typedef struct name_list {
  char **items;
  size_t count, capacity;
} name_list;

static int add_name(name_list *l, const char *name) {
  if (!name || !*name)
    return 0;
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->items[i], name) == 0)
      return 0;
  if (MPROF__GROW(l->items, l->capacity, l->count + 1))
    return MPROF_ENOMEM;
  if (!(l->items[l->count] = strdup(name)))
    return MPROF_ENOMEM;
  l->count++;
  return 0;
}

static void free_names(name_list *l) {
  for (size_t i = 0; i < l->count; i++)
    free(l->items[i]);
  free(l->items);
}

static int by_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether @p name under @p crc has PC samples in @p trace. */
static int sampled(const mprof_trace *trace, uint64_t crc, const char *name) {
  size_t n;
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(trace, &n);
  for (size_t i = 0; i < n; i++)
    if ((!crc || !pc[i].cubin_crc || pc[i].cubin_crc == crc) &&
        strcmp(mprof_trace_string(trace, pc[i].function_name), name) == 0)
      return 1;
  return 0;
}

/* The files the line tables of @p trace's sampled functions name, each
 * row's inline chain included. */
static int collect_files(const mprof_trace *trace, name_list *files) {
  size_t n;
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  int rc = 0;
  for (size_t c = 0; c < n && !rc; c++) {
    size_t size;
    const void *blob = mprof_trace_cubin_blob(trace, &cubins[c], &size);
    mprof_sass_cubin *cubin;
    if (!blob || mprof_sass_cubin_open(&cubin, blob, size, NULL) != 0)
      continue;
    for (size_t f = 0; f < mprof_sass_cubin_function_count(cubin) && !rc; f++) {
      const mprof_sass_function *fn = mprof_sass_cubin_function_at(cubin, f);
      if (!(fn->flags & MPROF_SASS_FUNCTION_LINES) ||
          !sampled(trace, cubins[c].crc, fn->name))
        continue;
      size_t rows;
      const mprof_sass_line *line = mprof_sass_cubin_lines(cubin, fn, &rows);
      mprof_sass_frame frames[64];
      for (size_t r = 0; r < rows && !rc; r++) {
        rc = add_name(files, line[r].file);
        size_t depth =
            mprof_sass_cubin_frames(cubin, fn, line[r].offset, frames, 64);
        for (size_t k = 0; k < depth && k < 64 && !rc; k++)
          rc = add_name(files, frames[k].file);
      }
    }
    mprof_sass_cubin_free(cubin);
  }
  /* The sidecar's lines too: `record --drop-code` leaves no cubin, and
   * `mprof sass FILE` may have found code the trace did not keep. */
  char path[4096];
  mprof_sidecar *sc = NULL;
  if (!rc && mprof_sidecar_path_of(trace, path, sizeof path) == 0 &&
      mprof_sidecar_load(&sc, path) == 0) {
    for (size_t f = 0; f < mprof_sidecar_function_count(sc) && !rc; f++) {
      const mprof_sidecar_function *fn = mprof_sidecar_function_at(sc, f);
      for (size_t i = 0; fn->pc_count && i < fn->instruction_count && !rc; i++)
        rc = add_name(files, fn->instructions[i].file);
    }
  }
  mprof_sidecar_free(sc);
  return rc;
}

typedef struct section_buf {
  unsigned char *data;
  size_t size, capacity;
} section_buf;

/* Append one entry: @p path, and @p stored (@p stored_size bytes) unless
 * missing; zero padding to 8 bytes. */
static int put_entry(section_buf *s, const char *path,
                     const mprof_source_entry *head, const void *stored) {
  size_t path_size = strlen(path);
  size_t body = sizeof *head + path_size + (size_t)head->stored_size;
  size_t entry = (body + 7) & ~(size_t)7;
  if (entry > UINT32_MAX || MPROF__GROW(s->data, s->capacity, s->size + entry))
    return MPROF_ENOMEM;
  mprof_source_entry e = *head;
  e.entry_size = (uint32_t)entry;
  e.path_size = (uint32_t)path_size;
  unsigned char *p = s->data + s->size;
  memset(p, 0, entry);
  memcpy(p, &e, sizeof e);
  memcpy(p + sizeof e, path, path_size);
  if (head->stored_size)
    memcpy(p + sizeof e + path_size, stored, (size_t)head->stored_size);
  s->size += entry;
  return 0;
}

/* The entry of @p path: its text found on disk (compressed when that is
 * smaller), or missing. */
static int embed_one(section_buf *s, const char *path,
                     const mprof_sources_options *opts,
                     mprof_sources_report *r) {
  mprof_source_entry head;
  memset(&head, 0, sizeof head);
  size_t size = 0;
  char *text = mprof__sources_find(path, opts ? opts->roots : NULL,
                                   opts ? opts->root_count : 0, &size, NULL);
  if (!text) {
    head.state = MPROF_SOURCE_ENTRY_MISSING;
    r->missing++;
    return put_entry(s, path, &head, NULL);
  }
  head.state = MPROF_SOURCE_ENTRY_EMBEDDED;
  head.size = size;
  head.crc32c = mprof_crc32c(0, text, size);
  uLongf packed_size = compressBound((uLong)size);
  Bytef *packed = (Bytef *)malloc(packed_size ? packed_size : 1);
  const void *stored = text;
  head.stored = MPROF_SOURCE_STORED_PLAIN;
  head.stored_size = size;
  if (packed &&
      compress2(packed, &packed_size, (const Bytef *)text, (uLong)size,
                Z_BEST_COMPRESSION) == Z_OK &&
      packed_size < size) {
    head.stored = MPROF_SOURCE_STORED_ZLIB;
    head.stored_size = packed_size;
    stored = packed;
  }
  int rc = put_entry(s, path, &head, stored);
  r->embedded++;
  r->text_bytes += size;
  r->stored_bytes += head.stored_size;
  free(packed);
  free(text);
  return rc;
}

int mprof_sources_embed(const char *trace_path,
                        const mprof_sources_options *opts,
                        mprof_sources_report *report) {
  if (!trace_path)
    return mprof__error_set(MPROF_EINVAL, "mprof_sources_embed: no trace");
  int rc = mprof__result_check(report, &report_versions);
  if (rc)
    return rc;
  mprof_sources_options defaults = MPROF_SOURCES_OPTIONS_INIT;
  if (!opts)
    opts = &defaults;
  else if (opts->version != MPROF_SOURCES_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "sources options version %u is not supported "
                            "(this mprof reads 1)",
                            opts->version);
  mprof_sources_report r = MPROF_SOURCES_REPORT_INIT;
  mprof_trace *trace;
  rc = mprof_trace_open(&trace, trace_path, NULL);
  if (rc)
    return rc;
  name_list files = {NULL, 0, 0};
  rc = collect_files(trace, &files);
  size_t had;
  mprof_trace_section(trace, MPROF_SECTION_SOURCES, &had);
  mprof_trace_free(trace);
  mprof__qsort(files.items, files.count, sizeof *files.items, by_text);
  section_buf s = {NULL, 0, 0};
  for (size_t i = 0; i < files.count && !rc; i++)
    rc = embed_one(&s, files.items[i], opts, &r);
  r.files = files.count;
  free_names(&files);
  if (rc) {
    free(s.data);
    return mprof__error_set(rc, "%s: out of memory", trace_path);
  }
  if (s.size || had)
    rc = mprof__trace_put_section(trace_path, MPROF_SECTION_SOURCES, s.data,
                                  s.size);
  free(s.data);
  if (!rc && report)
    mprof__result_store(report, &r, &report_versions);
  return rc;
}
