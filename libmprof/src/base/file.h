/*
 * mprof — internal: a whole regular file mapped read-only, the one way
 * libmprof reads traces, cubins, binaries and source-span files.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_FILE_H
#define MPROF_BASE_FILE_H

#include <stddef.h>

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

#endif /* MPROF_BASE_FILE_H */
