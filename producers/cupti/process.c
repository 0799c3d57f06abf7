/*
 * mprof CUPTI producer — one process, one trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int mprof_cupti_pid_path(char *dst, size_t size, const char *path, long pid) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base)
    dot = base + strlen(base);
  int n = snprintf(dst, size, "%.*s.%ld%s", (int)(dot - path), path, pid, dot);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

int mprof_cupti_open_output(mprof_writer **out, char *path, size_t size,
                            long pid, int has_pid, int *renamed) {
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.open_flags = MPROF_WRITER_EXCLUSIVE;
  *renamed = 0;
  int rc = mprof_writer_open(out, path, &opts);
  if (rc == 0 || errno != EEXIST)
    return rc;
  if (!has_pid) {
    char other[4096];
    if (mprof_cupti_pid_path(other, sizeof other, path, pid) != 0 ||
        strlen(other) >= size)
      return rc;
    snprintf(path, size, "%s", other);
    *renamed = 1;
    rc = mprof_writer_open(out, path, &opts);
    if (rc == 0 || errno != EEXIST)
      return rc;
  }
  /* Our own pid is in the name: whoever left it there is gone. */
  opts.open_flags = 0;
  return mprof_writer_open(out, path, &opts);
}

static const char *first_set(mprof_cupti_env_fn env, void *userdata,
                             const char *const *names, const char **source) {
  for (; *names; names++) {
    const char *value = env(userdata, *names);
    if (value && *value) {
      if (source)
        *source = *names;
      return value;
    }
  }
  return NULL;
}

void mprof_cupti_rank(mprof_cupti_env_fn env, void *userdata, const char **rank,
                      const char **source, const char **local_rank) {
  static const char *const ranks[] = {"RANK",         "OMPI_COMM_WORLD_RANK",
                                      "PMI_RANK",     "PMIX_RANK",
                                      "SLURM_PROCID", NULL};
  static const char *const locals[] = {
      "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL};
  *source = NULL;
  *rank = first_set(env, userdata, ranks, source);
  *local_rank = first_set(env, userdata, locals, NULL);
}

void mprof_cupti_manifest_line(const char *manifest, const char *line) {
  if (!manifest || !*manifest)
    return;
  int saved = errno;
  int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd >= 0) {
    size_t len = strlen(line);
    if (write(fd, line, len) != (ssize_t)len) {
      /* nothing to do: record then reports the process as unheard */
    }
    close(fd);
  }
  errno = saved;
}

static size_t put_text(char *dst, size_t size, size_t at, const char *text) {
  size_t len = strlen(text);
  if (at + len >= size)
    return size;
  memcpy(dst + at, text, len);
  return at + len;
}

static size_t put_long(char *dst, size_t size, size_t at, long value) {
  char digits[24];
  size_t n = 0;
  unsigned long v =
      value < 0 ? 0ul - (unsigned long)value : (unsigned long)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof digits);
  if (value < 0)
    at = put_text(dst, size, at, "-");
  while (n && at < size - 1)
    dst[at++] = digits[--n];
  return n ? size : at;
}

size_t mprof_cupti_manifest_format(char *dst, size_t size, const char *word,
                                   long pid, long value, const char *path) {
  if (!dst || size < 2)
    return 0;
  size_t at = put_text(dst, size, 0, word);
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_long(dst, size, at, pid) : size;
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_long(dst, size, at, value) : size;
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_text(dst, size, at, path) : size;
  at = at < size ? put_text(dst, size, at, "\n") : size;
  if (at >= size)
    return 0;
  dst[at] = '\0';
  return at;
}
