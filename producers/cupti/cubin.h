/*
 * mprof CUPTI producer — where captured cubins wait.
 *
 * Cubins captured at MODULE_LOADED are parked in an unlinked spill file
 * until the end of the run, when the producer knows which of them the trace
 * needs. Their function symbols and trimmed copies come from the writer
 * half's format/cubin_trim.h (the producer may not link libelf).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_CUBIN_H
#define MPROF_CUPTI_CUBIN_H

#include <stddef.h>
#include <stdint.h>

#include "format/cubin_trim.h"

/** An append-only file of cubin images, unlinked as soon as it is created. */
typedef struct mprof_cupti_spill {
  int fd;         /**< -1 until the first store */
  uint64_t size;  /**< bytes stored so far */
  char dir[4096]; /**< where the file is created */
} mprof_cupti_spill;

/** Prepare @p spill to create its file in @p dir ("." when NULL or ""). */
void mprof_cupti_spill_init(mprof_cupti_spill *spill, const char *dir);

/** Append @p size bytes; *offset receives where they went. 0 or -1 (errno). */
int mprof_cupti_spill_store(mprof_cupti_spill *spill, const void *data,
                            size_t size, uint64_t *offset);

/** Read back @p size bytes from @p offset into @p out. 0 or -1 (errno). */
int mprof_cupti_spill_load(const mprof_cupti_spill *spill, uint64_t offset,
                           void *out, size_t size);

/** Close the file (its space is freed: it was never linked). */
void mprof_cupti_spill_close(mprof_cupti_spill *spill);

#endif /* MPROF_CUPTI_CUBIN_H */
