/*
 * mprof — source files' text (sources.h): the trace's embedded copies
 * first, then the disk through the --source-root mappings.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/array.h"
#include "internal.h"
#include "mprof/sources.h"
#include "mprof/status.h"
#include "sources_internal.h"

MPROF__VERSIONS(sources_options, "sources options",
                MPROF__END_OF(mprof_sources_options, root_count));

int mprof_sources_options_init(mprof_sources_options *opts, unsigned version) {
  mprof_sources_options init = MPROF_SOURCES_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &sources_options);
}

/* A file as far as it was looked up. */
typedef struct source_file {
  char *path; /* as the line table names it */
  int state;  /* mprof_source_state */
  char *text; /* NULL when not found */
  size_t size;
  size_t *starts; /* byte offset of each line */
  uint32_t line_count;
} source_file;

struct mprof_sources {
  const mprof_trace *trace;
  unsigned flags;
  char **roots;
  size_t root_count;
  source_file *files;
  size_t count, capacity;
  mprof_source_listing *listed; /* the trace's SOURCES entries */
  size_t listed_count;
  char *listed_paths;
};

/* ---- reading a file ----------------------------------------------------- */

char *mprof__sources_read_file(const char *path, size_t *size) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size > MPROF__SOURCE_MAX_BYTES)
    return NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t want = (size_t)st.st_size;
  char *text = (char *)malloc(want + 1);
  size_t got = text ? fread(text, 1, want, f) : 0;
  int failed = ferror(f) != 0;
  fclose(f);
  if (!text || failed || got != want) {
    free(text);
    return NULL;
  }
  text[got] = '\0';
  *size = got;
  return text;
}

/* The text of @p path from disk, tried through every root and then as it
 * is; *found (caller frees) gets the path read. */
char *mprof__sources_find(const char *path, const char *const *roots,
                          size_t root_count, size_t *size, char **found) {
  char buf[8192];
  if (found)
    *found = NULL;
  for (size_t r = 0; r < root_count; r++) {
    const char *root = roots[r];
    const char *eq = strchr(root, '=');
    if (eq) {
      size_t old = (size_t)(eq - root);
      /* OLD=NEW: OLD must be a whole leading folder of the path. */
      while (old > 1 && root[old - 1] == '/')
        old--;
      if (old && strncmp(path, root, old) == 0 &&
          (path[old] == '/' || path[old] == '\0')) {
        int n = snprintf(buf, sizeof buf, "%s%s", eq + 1, path + old);
        char *text = n > 0 && (size_t)n < sizeof buf
                         ? mprof__sources_read_file(buf, size)
                         : NULL;
        if (text) {
          if (found)
            *found = strdup(buf);
          return text;
        }
      }
      continue;
    }
    /* DIR: the trailing parts of the path under DIR, longest first. */
    for (const char *tail = path; tail; tail = strchr(tail + 1, '/')) {
      const char *part = tail;
      while (*part == '/')
        part++;
      if (!*part)
        break;
      int n = snprintf(buf, sizeof buf, "%s/%s", root, part);
      char *text = n > 0 && (size_t)n < sizeof buf
                       ? mprof__sources_read_file(buf, size)
                       : NULL;
      if (text) {
        if (found)
          *found = strdup(buf);
        return text;
      }
    }
  }
  char *text = *path ? mprof__sources_read_file(path, size) : NULL;
  if (text && found)
    *found = strdup(path);
  return text;
}

/* ---- the files of a trace ----------------------------------------------- */

int mprof_sources_open(mprof_sources **out, const mprof_trace *trace,
                       const mprof_sources_options *opts) {
  if (!out)
    return mprof__error_set(MPROF_EINVAL, "mprof_sources_open: NULL argument");
  *out = NULL;
  if (opts && mprof__version_size(&sources_options, opts->version) == 0)
    return MPROF_EVERSION;
  mprof_sources *s = (mprof_sources *)calloc(1, sizeof *s);
  if (!s)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  s->trace = trace;
  if (trace && mprof__sources_list(trace, &s->listed, &s->listed_count,
                                   &s->listed_paths) != 0) {
    mprof_sources_free(s);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  if (opts) {
    s->flags = opts->flags;
    if (opts->root_count) {
      s->roots = (char **)calloc(opts->root_count, sizeof *s->roots);
      if (!s->roots) {
        mprof_sources_free(s);
        return mprof__error_set(MPROF_ENOMEM, "out of memory");
      }
      for (size_t i = 0; i < opts->root_count; i++) {
        s->roots[i] = strdup(opts->roots[i] ? opts->roots[i] : "");
        if (!s->roots[i]) {
          mprof_sources_free(s);
          return mprof__error_set(MPROF_ENOMEM, "out of memory");
        }
        s->root_count++;
      }
    }
  }
  *out = s;
  return 0;
}

void mprof_sources_free(mprof_sources *sources) {
  if (!sources)
    return;
  for (size_t i = 0; i < sources->count; i++) {
    free(sources->files[i].path);
    free(sources->files[i].text);
    free(sources->files[i].starts);
  }
  free(sources->files);
  for (size_t i = 0; i < sources->root_count; i++)
    free(sources->roots[i]);
  free(sources->roots);
  free(sources->listed);
  free(sources->listed_paths);
  free(sources);
}

/* Split @p f's text into lines. */
static int index_lines(source_file *f) {
  size_t cap = 0, n = 0;
  for (size_t at = 0; at < f->size;) {
    if (n >= UINT32_MAX - 1 || MPROF__GROW(f->starts, cap, n + 1))
      return -1;
    f->starts[n++] = at;
    const char *nl = (const char *)memchr(f->text + at, '\n', f->size - at);
    at = nl ? (size_t)(nl - f->text) + 1 : f->size;
  }
  f->line_count = (uint32_t)n;
  return 0;
}

/* The file @p path, looked up on first use; NULL out of memory. */
static source_file *lookup(mprof_sources *s, const char *path) {
  for (size_t i = 0; i < s->count; i++)
    if (strcmp(s->files[i].path, path) == 0)
      return &s->files[i];
  if (MPROF__GROW(s->files, s->capacity, s->count + 1))
    return NULL;
  source_file *f = &s->files[s->count];
  memset(f, 0, sizeof *f);
  f->path = strdup(path);
  if (!f->path)
    return NULL;
  s->count++;
  int listed = 0;
  f->text = s->trace
                ? mprof__sources_embedded(s->trace, path, &f->size, &listed)
                : NULL;
  if (f->text) {
    f->state = MPROF_SOURCE_EMBEDDED;
  } else if (!(s->flags & MPROF_SOURCES_NO_DISK) &&
             (f->text = mprof__sources_find(path, (const char *const *)s->roots,
                                            s->root_count, &f->size, NULL))) {
    f->state = MPROF_SOURCE_DISK;
  } else {
    f->state = listed ? MPROF_SOURCE_MISSING : MPROF_SOURCE_UNKNOWN;
  }
  if (f->text && index_lines(f) != 0) {
    free(f->text);
    f->text = NULL;
    f->state = MPROF_SOURCE_UNKNOWN;
  }
  return f;
}

int mprof_sources_state(mprof_sources *sources, const char *path) {
  if (!sources || !path || !*path)
    return MPROF_SOURCE_UNKNOWN;
  source_file *f = lookup(sources, path);
  return f ? f->state : MPROF_SOURCE_UNKNOWN;
}

uint32_t mprof_sources_line_count(mprof_sources *sources, const char *path) {
  if (!sources || !path || !*path)
    return 0;
  source_file *f = lookup(sources, path);
  return f ? f->line_count : 0;
}

const char *mprof_sources_line(mprof_sources *sources, const char *path,
                               uint32_t line, size_t *length) {
  if (length)
    *length = 0;
  if (!sources || !path || !*path || line == 0)
    return NULL;
  source_file *f = lookup(sources, path);
  if (!f || !f->text || line > f->line_count)
    return NULL;
  size_t start = f->starts[line - 1];
  size_t end = line < f->line_count ? f->starts[line] : f->size;
  while (end > start && (f->text[end - 1] == '\n' || f->text[end - 1] == '\r'))
    end--;
  if (length)
    *length = end - start;
  return f->text + start;
}

size_t mprof_sources_listed(const mprof_sources *sources) {
  return sources ? sources->listed_count : 0;
}

const mprof_source_listing *
mprof_sources_listed_at(const mprof_sources *sources, size_t index) {
  return sources && index < sources->listed_count ? &sources->listed[index]
                                                  : NULL;
}
