/*
 * mprof — the TRACE.mprof.pc.json sidecar: SASS, source lines and PC
 * samples per kernel function.
 *
 * `mprof record` writes it after the program exits (the injected producer
 * never needs JSON or a disassembler); `mprof sass` completes it later.
 * The JSON schema is docs/SIDECAR.md. A sidecar is built in memory with the
 * mprof_sidecar_add_* functions and saved with mprof_sidecar_save(), or
 * loaded and validated with mprof_sidecar_load().
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SIDECAR_H
#define MPROF_SIDECAR_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_sidecar mprof_sidecar;

/* The three structs below are the sidecar's records (docs/SIDECAR.md) and
 * also what mprof_sidecar_add_*() read from the caller, so they are fixed
 * (docs/ABI.md): they never grow; new data comes with a struct and an
 * accessor of its own. */

/** One SASS instruction. Strings are owned by the sidecar. */
typedef struct mprof_sass_instruction {
  uint32_t offset;       /**< byte offset inside the function */
  uint32_t line;         /**< source line; 0 when unknown */
  const char *predicate; /**< "@P0", "@!PT" or "" */
  const char *opcode;    /**< "LDG.E.128.CONSTANT" */
  const char *operands;  /**< "R4, desc[UR6][R2.64]" or "" */
  const char *file;      /**< source file; "" when unknown */
} mprof_sass_instruction;

/** Samples at one PC: counts indexed by stall reason index. */
typedef struct mprof_sidecar_pc {
  uint32_t offset;
  uint32_t reason_count;  /**< entries in counts */
  const uint64_t *counts; /**< counts[reason index] */
} mprof_sidecar_pc;

/** What is known about the SASS of a function. */
typedef enum mprof_sass_state {
  MPROF_SASS_PRESENT = 0,         /**< instructions are in the sidecar */
  MPROF_SASS_NO_CUBIN = 1,        /**< the trace kept no code for it */
  MPROF_SASS_NO_DISASSEMBLER = 2, /**< nvdisasm was not found */
  MPROF_SASS_FAILED = 3, /**< the disassembler failed; see sass_error */
  /** The trace keeps the code; it is disassembled later: for sampled
   * functions by the first mprof_sass_complete() (`mprof summary`, `view`,
   * `diff`, `export`), for all by mprof_sass_attach() (`mprof sass`). */
  MPROF_SASS_DEFERRED = 4
} mprof_sass_state;

/** A kernel function. Strings and arrays are owned by the sidecar. */
typedef struct mprof_sidecar_function {
  const char *name;      /**< mangled name, the join key with the trace */
  const char *demangled; /**< "" when unknown */
  uint64_t cubin_crc;
  uint32_t function_index;
  uint32_t device;
  uint32_t registers;
  uint32_t static_shared;
  uint32_t size;          /**< bytes of code */
  uint32_t sass_state;    /**< mprof_sass_state */
  const char *sass_error; /**< "" unless MPROF_SASS_FAILED */
  size_t instruction_count;
  const mprof_sass_instruction *instructions; /**< sorted by offset */
  size_t pc_count;
  const mprof_sidecar_pc *pcs; /**< sorted by offset */
} mprof_sidecar_function;

/** A new, empty sidecar. Free with mprof_sidecar_free(). */
MPROF_API int mprof_sidecar_new(mprof_sidecar **out);

/**
 * Load and validate @p path. Hostile input (wrong types, huge counts,
 * offsets out of order) gives MPROF_EFORMAT with a message naming the file
 * and the JSON path of the bad value.
 */
MPROF_API int mprof_sidecar_load(mprof_sidecar **out, const char *path);

/**
 * Where the sidecar of @p trace is: TRACE.pc.json, or for a merged set
 * (trace.h) PATH.pc.json of its first process that has one. 0 with the
 * path in @p out when that file exists, else -1.
 */
MPROF_API int mprof_sidecar_path_of(const mprof_trace *trace, char *out,
                                    size_t size);

/** Write @p sidecar to @p path (through "PATH.partial" and a rename). */
MPROF_API int mprof_sidecar_save(const mprof_sidecar *sidecar,
                                 const char *path);

/** NULL is a no-op. */
MPROF_API void mprof_sidecar_free(mprof_sidecar *sidecar);

/** The stall reason names, by index ("smsp__pcsamp_..."). */
MPROF_API int mprof_sidecar_set_stall_reason(mprof_sidecar *sidecar,
                                             uint32_t index, const char *name);
MPROF_API size_t mprof_sidecar_stall_reason_count(const mprof_sidecar *sidecar);
/** "" for an index without a name. Owned by @p sidecar. */
MPROF_API const char *mprof_sidecar_stall_reason(const mprof_sidecar *sidecar,
                                                 uint32_t index);

/**
 * Add a function (copying every string of @p fn; its instruction and PC
 * arrays are ignored) and return its index in *out_index.
 */
MPROF_API int mprof_sidecar_add_function(mprof_sidecar *sidecar,
                                         uint32_t *out_index,
                                         const mprof_sidecar_function *fn);

/** Append an instruction to function @p function (offsets ascending). */
MPROF_API int mprof_sidecar_add_instruction(mprof_sidecar *sidecar,
                                            uint32_t function,
                                            const mprof_sass_instruction *insn);

/** Add @p samples of stall reason @p reason at @p offset of @p function. */
MPROF_API int mprof_sidecar_add_samples(mprof_sidecar *sidecar,
                                        uint32_t function, uint32_t offset,
                                        uint32_t reason, uint64_t samples);

/** Set the SASS state (and message) of @p function. */
MPROF_API int mprof_sidecar_set_sass_state(mprof_sidecar *sidecar,
                                           uint32_t function,
                                           mprof_sass_state state,
                                           const char *message);

MPROF_API size_t mprof_sidecar_function_count(const mprof_sidecar *sidecar);

/** Function @p index; owned by @p sidecar; NULL when out of range. */
MPROF_API const mprof_sidecar_function *
mprof_sidecar_function_at(const mprof_sidecar *sidecar, size_t index);

/**
 * The function named @p name (mangled). When several functions share the
 * name, @p cubin_crc (0 = any) picks one. NULL when absent.
 */
MPROF_API const mprof_sidecar_function *
mprof_sidecar_find(const mprof_sidecar *sidecar, const char *name,
                   uint64_t cubin_crc);

/** The instruction at @p offset of @p fn (binary search), or NULL. */
MPROF_API const mprof_sass_instruction *
mprof_sidecar_instruction(const mprof_sidecar_function *fn, uint32_t offset);

/**
 * The text of instruction @p in, as every report and view spells it:
 * "PREDICATE OPCODE OPERANDS", each part and the space before it only when
 * it is set ("@P0 LDG.E R4, [R2.64]"; "" for NULL). Written to @p buf of
 * @p size bytes (cut to fit, NUL-terminated); returns @p buf.
 */
MPROF_API char *mprof_sass_instruction_text(char *buf, size_t size,
                                            const mprof_sass_instruction *in);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SIDECAR_H */
