/*
 * mprof — internal: a whole regular file mapped read-only, the one way
 * libmprof reads traces, cubins, binaries and source-span files.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_FILE_H
#define MPROF_BASE_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct mprof__file_map {
  const unsigned char *data; /* NULL for an empty file */
  size_t size;
} mprof__file_map;

/* How the caller will read the mapping. */
#define MPROF__MAP_RANDOM 0
#define MPROF__MAP_SEQUENTIAL 1 /* read ahead: the caller walks it once */

/*
 * Map @p path. Errors, with "PATH: ..." as the message: MPROF_ENOTFOUND
 * (no such file), MPROF_EIO (cannot open or map), MPROF_EINVAL (not a
 * regular file). *out is zeroed on failure.
 */
int mprof__file_map_open(mprof__file_map *out, const char *path, int access);

/* Unmap; a zeroed map is a no-op. */
void mprof__file_map_close(mprof__file_map *map);

/*
 * A file written beside @p path, as "PATH.PID.partial", and renamed over
 * it only once all of it is written: a reader never sees half a file, and
 * two processes writing the same path do not share one partial file.
 */
typedef struct mprof__file_out {
  FILE *f;
  const char *path;
  char *partial;
} mprof__file_out;

/* Create the partial file for writing. Errors: MPROF_ENOMEM, MPROF_EIO
 * ("PATH: cannot create: ..."); *out is zeroed on failure. */
int mprof__file_out_open(mprof__file_out *out, const char *path);

/*
 * With @p ok set, flush, sync, close and rename the partial file over the
 * path; an error on the way (MPROF_EIO, "PATH: cannot write: ...") removes
 * it. With @p ok zero, only close and remove it and return 0: the caller
 * holds its own error.
 */
int mprof__file_out_close(mprof__file_out *out, int ok);

/*
 * A new empty file $TMPDIR/mprof-WHAT-XXXXXX.mprof (/tmp when TMPDIR is unset
 * or empty) for a trace written, opened and removed at once: mkstemps makes
 * it mode 0600 under a name no other process holds. @p out gets its path; the
 * caller removes it. Errors: MPROF_EINVAL ("TMPDIR is too long"), MPROF_EIO
 * ("cannot create a scratch trace in DIR: ...").
 */
int mprof__file_scratch_trace(char *out, size_t out_size, const char *what);

/* A fresh private (0700) folder $TMPDIR/mprof-sass-XXXXXX for a tool's
 * files; @p out gets its path. Errors as mprof__file_scratch_trace(), the
 * second "DIR: cannot create a temporary folder: ...". */
int mprof__temp_dir(char *out, size_t out_size);

#endif /* MPROF_BASE_FILE_H */
