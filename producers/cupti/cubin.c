/*
 * mprof CUPTI producer — the cubin spill file.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cubin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mprof_cupti_spill_init(mprof_cupti_spill *spill, const char *dir) {
  spill->fd = -1;
  spill->size = 0;
  snprintf(spill->dir, sizeof spill->dir, "%s", dir && *dir ? dir : ".");
}

static int spill_open(mprof_cupti_spill *spill) {
#ifdef O_TMPFILE
  spill->fd = open(spill->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (spill->fd >= 0)
    return 0;
#endif
  char path[4200];
  snprintf(path, sizeof path, "%s/.mprof-cubins-XXXXXX", spill->dir);
  spill->fd = mkostemp(path, O_CLOEXEC);
  if (spill->fd < 0)
    return -1;
  unlink(path);
  return 0;
}

int mprof_cupti_spill_store(mprof_cupti_spill *spill, const void *data,
                            size_t size, uint64_t *offset) {
  if (spill->fd < 0 && spill_open(spill) != 0)
    return -1;
  const unsigned char *p = (const unsigned char *)data;
  uint64_t at = spill->size;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(spill->fd, p + done, size - done, (off_t)(at + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      /* Leave the size alone: a later store overwrites the partial bytes. */
      return -1;
    }
    done += (size_t)n;
  }
  spill->size += size;
  *offset = at;
  return 0;
}

int mprof_cupti_spill_load(const mprof_cupti_spill *spill, uint64_t offset,
                           void *out, size_t size) {
  if (spill->fd < 0 || offset > spill->size || size > spill->size - offset) {
    errno = EINVAL;
    return -1;
  }
  unsigned char *p = (unsigned char *)out;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(spill->fd, p + done, size - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return 0;
}

void mprof_cupti_spill_close(mprof_cupti_spill *spill) {
  if (spill->fd >= 0)
    close(spill->fd);
  spill->fd = -1;
  spill->size = 0;
}
