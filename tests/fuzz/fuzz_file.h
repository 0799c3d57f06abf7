/*
 * mprof fuzz targets — the input bytes as a file the readers can open.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FUZZ_FILE_H
#define MPROF_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* @p size bytes at @p data in a memfd named @p name: its descriptor (close
 * it when done), its path (/proc/self/fd/N) in @p path; -1 when it cannot
 * be made. */
static inline int fuzz_file(const char *name, const uint8_t *data, size_t size,
                            char path[64]) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (size && write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return -1;
  }
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}

#endif
