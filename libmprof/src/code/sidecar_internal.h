/*
 * mprof — internal: the sidecar model, shared by its parts (sidecar.c: the
 * model; sidecar_save.c: the JSON writer; sidecar_load.c: the reader).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CODE_SIDECAR_INTERNAL_H
#define MPROF_CODE_SIDECAR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/map.h"
#include "mprof/sidecar.h"

#define SIDECAR_FORMAT "mprof-pc-sidecar"
#define SIDECAR_VERSION 1
/* Deepest nesting the schema needs is 6 (root, functions, function, pcs,
 * pc, counts); refuse anything much deeper before json-c builds it. */
#define SIDECAR_MAX_DEPTH 16
/* Refuse files json-c cannot take in one piece (it counts in int). */
#define SIDECAR_MAX_FILE (1u << 30)
/* PC count tables are dense (counts[reason]); a hostile file could ask for
 * a large table per PC with a few bytes. Allow this many table cells per
 * byte of file, far above what a real sidecar needs (~1.5). */
#define SIDECAR_CELLS_PER_BYTE 4u
#define SIDECAR_CELLS_SLACK 65536u

/* "present", "no_cubin", "no_disassembler", "failed", "deferred": by
 * sass_state. */
extern const char *const mprof__sidecar_state_names[5];
#define STATE_COUNT 5

typedef struct string_pool {
  mprof__arena arena;   /* the text */
  const char **strings; /* by index */
  size_t count, capacity;
  mprof__map map; /* text -> index */
} string_pool;

typedef struct sidecar_fn {
  mprof_sidecar_function pub; /* arrays below are mirrored into pub */
  uint64_t name_hash;
  mprof_sass_instruction *insns;
  size_t insn_capacity;
  mprof_sidecar_pc *pcs;
  size_t pc_capacity;
} sidecar_fn;

struct mprof_sidecar {
  string_pool strings;
  const char **reasons;
  size_t reason_count;
  sidecar_fn **fns; /* pointers, so a function stays put as others arrive */
  size_t fn_count;
  size_t fn_capacity;
  uint64_t cells; /* count table cells over all PCs */
};

/* Set the out-of-memory message and return MPROF_ENOMEM. */
int mprof__sidecar_oom(void);
/* The sidecar's copy of @p s ("" for NULL); NULL when out of memory. */
const char *mprof__sidecar_intern(mprof_sidecar *sc, const char *s);

#endif /* MPROF_CODE_SIDECAR_INTERNAL_H */
