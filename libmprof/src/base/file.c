/*
 * mprof — mapping whole files (base/file.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "internal.h"

int mprof__file_map_open(mprof__file_map *out, const char *path, int access) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return mprof__error_set(err == ENOENT ? MPROF_ENOTFOUND : MPROF_EIO,
                            "%s: cannot open: %s", path, strerror(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return mprof__error_set(MPROF_EINVAL, "%s: not a regular file", path);
  }
  size_t size = (size_t)st.st_size;
  if (size) {
    int flags = MAP_PRIVATE;
    if (access == MPROF__MAP_SEQUENTIAL)
      flags |= MAP_POPULATE;
    void *map = mmap(NULL, size, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      close(fd);
      return mprof__error_set(MPROF_EIO, "%s: cannot map: %s", path,
                              strerror(err));
    }
    if (access == MPROF__MAP_SEQUENTIAL)
      madvise(map, size, MADV_SEQUENTIAL);
    out->data = (const unsigned char *)map;
    out->size = size;
  }
  close(fd);
  return 0;
}

void mprof__file_map_close(mprof__file_map *map) {
  if (map->data)
    munmap((void *)map->data, map->size);
  memset(map, 0, sizeof *map);
}

int mprof__file_out_open(mprof__file_out *out, const char *path) {
  memset(out, 0, sizeof *out);
  size_t len = strlen(path) + sizeof ".4294967295.partial";
  char *partial = (char *)malloc(len);
  if (!partial)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  snprintf(partial, len, "%s.%ld.partial", path, (long)getpid());
  FILE *f = fopen(partial, "w");
  if (!f) {
    int err = errno;
    free(partial);
    return mprof__error_set(MPROF_EIO, "%s: cannot create: %s", path,
                            strerror(err));
  }
  out->f = f;
  out->path = path;
  out->partial = partial;
  return 0;
}

int mprof__file_out_close(mprof__file_out *out, int ok) {
  int err = ok && ferror(out->f) ? EIO : 0;
  if (ok && !err && fflush(out->f) != 0)
    err = errno;
  /* EINVAL: a file system that cannot sync, where nothing is lost. */
  if (ok && !err && fsync(fileno(out->f)) != 0 && errno != EINVAL)
    err = errno;
  if (fclose(out->f) != 0 && ok && !err)
    err = errno;
  if (ok && !err && rename(out->partial, out->path) != 0)
    err = errno;
  int rc = 0;
  if (!ok || err) {
    unlink(out->partial);
    if (ok)
      rc = mprof__error_set(MPROF_EIO, "%s: cannot write: %s", out->path,
                            strerror(err));
  }
  free(out->partial);
  memset(out, 0, sizeof *out);
  return rc;
}

/* $TMPDIR/mprof-@p what-XXXXXX@p suffix in @p out, and in *@p dir the
 * folder it is in (/tmp when TMPDIR is unset or empty). */
static int temp_template(char *out, size_t out_size, const char *what,
                         const char *suffix, const char **dir) {
  *dir = getenv("TMPDIR");
  if (!*dir || !**dir)
    *dir = "/tmp";
  int n = snprintf(out, out_size, "%s/mprof-%s-XXXXXX%s", *dir, what, suffix);
  if (n < 0 || (size_t)n >= out_size)
    return mprof__error_set(MPROF_EINVAL, "TMPDIR is too long");
  return 0;
}

int mprof__file_scratch_trace(char *out, size_t out_size, const char *what) {
  const char *dir;
  int rc = temp_template(out, out_size, what, ".mprof", &dir);
  if (rc)
    return rc;
  int fd = mkstemps(out, (int)strlen(".mprof"));
  if (fd < 0)
    return mprof__error_set(MPROF_EIO,
                            "cannot create a scratch trace in %s: %s (set "
                            "TMPDIR to a writable directory)",
                            dir, strerror(errno));
  close(fd);
  return 0;
}

int mprof__temp_dir(char *out, size_t out_size) {
  const char *dir;
  int rc = temp_template(out, out_size, "sass", "", &dir);
  if (rc)
    return rc;
  if (!mkdtemp(out))
    return mprof__error_set(MPROF_EIO,
                            "%s: cannot create a temporary folder: %s", dir,
                            strerror(errno));
  return 0;
}
