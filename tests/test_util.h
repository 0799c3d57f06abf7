/*
 * mprof tests — small helpers shared by the CMocka suites.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_UTIL_H
#define MPROF_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* A path in the test's scratch folder (MPROF_TEST_TMP or /tmp), unique per
 * process so suites can run in parallel. Returns a static buffer. */
static inline const char *test_path(const char *name) {
  static char buf[4][1024];
  static int next;
  const char *dir = getenv("MPROF_TEST_TMP");
  char *out = buf[next++ & 3];
  snprintf(out, sizeof buf[0], "%s/%ld-%s", dir && *dir ? dir : "/tmp",
           (long)getpid(), name);
  return out;
}

/* Read a whole file into memory; *size gets its length. A NUL follows
 * the bytes, so text can be searched as a string. Caller frees. */
static inline unsigned char *test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = (unsigned char *)malloc(len > 0 ? (size_t)len + 1 : 1);
  if (data && len > 0 && fread(data, 1, (size_t)len, f) != (size_t)len) {
    free(data);
    data = NULL;
  }
  if (data)
    data[len > 0 ? len : 0] = 0;
  fclose(f);
  *size = (size_t)len;
  return data;
}

static inline int test_write_file(const char *path, const void *data,
                                  size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t n = size ? fwrite(data, 1, size, f) : 0;
  fclose(f);
  return n == size ? 0 : -1;
}

#endif
