/*
 * mprof — open a .mprof or a MKPROF file as a trace, so every command that
 * reads traces reads MKPROF too.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "mprof/mkprof.h"
#include "mprof/trace.h"

/* 1 when the file at @p path starts with the MKPROF magic. */
static int starts_like_mkprof(const char *path) {
  char head[MPROF_MKPROF_MAGIC_SIZE];
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return got >= 6 && memcmp(head, "MKPROF", 6) == 0;
}

/* Import @p m into a scratch trace and open that. */
static int import(mprof_trace **out, const mprof_mkprof *m, const char *path) {
  const char *dir = getenv("TMPDIR");
  char scratch[4096];
  if (snprintf(scratch, sizeof scratch, "%s/mprof-mkprof-XXXXXX.mprof",
               dir && *dir ? dir : "/tmp") >= (int)sizeof scratch)
    return mprof__error_set(MPROF_EINVAL, "%s: TMPDIR is too long", path);
  int fd = mkstemps(scratch, (int)strlen(".mprof"));
  if (fd < 0)
    return mprof__error_set(MPROF_EIO,
                            "%s: cannot create a scratch trace in %s: %s", path,
                            dir && *dir ? dir : "/tmp", strerror(errno));
  close(fd);
  int rc = mprof_mkprof_to_trace(m, scratch);
  if (!rc)
    rc = mprof_trace_open(out, scratch, NULL);
  /* The mapping stays valid once the name is gone. */
  unlink(scratch);
  if (rc) {
    mprof__error_prefix("%s", path);
    return rc;
  }
  rc = mprof__trace_set_path(*out, path);
  if (rc) {
    mprof_trace_free(*out);
    *out = NULL;
  }
  return rc;
}

int mprof_mkprof_open_trace(mprof_trace **out, const char *path,
                            mprof_mkprof **mkprof) {
  if (mkprof)
    *mkprof = NULL;
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_open_trace: NULL");
  *out = NULL;
  if (!starts_like_mkprof(path))
    return mprof_trace_open(out, path, NULL);
  mprof_mkprof *m = NULL;
  int rc = mprof_mkprof_open(&m, path);
  if (!rc)
    rc = import(out, m, path);
  if (!rc && mkprof)
    *mkprof = m;
  else
    mprof_mkprof_free(m);
  return rc;
}
