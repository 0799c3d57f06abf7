/*
 * mprof — where in the source a kernel's warps stall: PC samples and their
 * stall reasons summed per source line, per inlined function, and each
 * line's SASS instructions.
 *
 * The lines of a kernel come from its cubin when the trace keeps it (the
 * `.debug_line` table nvcc writes with `-lineinfo` or `-G`, with its
 * inlining records, sass.h), else from the source lines of its sidecar
 * function. A line is a (file, line) pair: the same line number in a
 * header and in the .cu file are two lines. Samples at code without a line
 * (a kernel built without `-lineinfo`, a library kernel) are summed in one
 * line 0 of file "", so the shares of a kernel's lines add up to 1.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_LINES_H
#define MPROF_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "diagnose.h"
#include "join.h"
#include "sass.h"
#include "sources.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_lines mprof_lines;

/* Version 2 appended launch. */
#define MPROF_LINES_OPTIONS_VERSION 2

typedef struct mprof_lines_options {
  unsigned version; /**< MPROF_LINES_OPTIONS_VERSION */
  unsigned flags;   /**< none yet: 0 */
  /* Version 2: */
  /** Only the samples of this launch (an index into LAUNCHES, of the
   * kernel): those whose correlation id is its own, as `record --pc-mode
   * serialized` records them. MPROF_INDEX_NONE: every launch. */
  uint32_t launch;
  MPROF_GROWABLE_TAIL
} mprof_lines_options;

#define MPROF_LINES_OPTIONS_INIT                                               \
  { MPROF_LINES_OPTIONS_VERSION, 0, MPROF_INDEX_NONE }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_lines_options_init(mprof_lines_options *opts,
                                       unsigned version);

/** Where a kernel's lines came from (mprof_lines_origin()). */
typedef enum mprof_lines_origin_kind {
  MPROF_LINES_NONE = 0,    /**< no line table: every sample is on line 0 */
  MPROF_LINES_CUBIN = 1,   /**< the cubin's line table, with inlined frames */
  MPROF_LINES_SIDECAR = 2, /**< the sidecar's source lines (no frames) */
} mprof_lines_origin_kind;

/** One source line of a kernel. Strings are owned by the lines. */
typedef struct mprof_line_stats {
  const char *file;    /**< as the line table names it; "" on line 0 */
  uint32_t file_index; /**< its index for mprof_lines_file() */
  uint32_t line;       /**< 0: code without a source line */
  uint64_t samples;    /**< plain-reason PC samples of its instructions */
  uint64_t not_issued; /**< X_not_issued samples */
  double share;        /**< samples over the kernel's (0 without any) */
  size_t reason_count;
  /** Per stall reason (indices of the join's reason table), largest first;
   * plain and not-issued reasons alike. Read with mprof_line_reason(). */
  const mprof_reason_samples *reasons;
  size_t instruction_count;
  const uint32_t *offsets; /**< its instructions' byte offsets, ascending */
  /** Mangled name of the function the line's code belongs to: an inlined
   * function, or the kernel itself. */
  const char *function;
  MPROF_GROWABLE_TAIL
} mprof_line_stats;

/** One instruction of the kernel. */
typedef struct mprof_line_instruction {
  uint32_t offset;     /**< byte offset inside the function */
  uint32_t line_index; /**< its line for mprof_lines_at() (every
                            instruction has one; line 0 when unknown) */
  uint64_t samples;    /**< plain-reason PC samples */
  /** The join's samples at this instruction, or NULL when unsampled. */
  const mprof_pc_stats *pc;
  /** The sidecar's SASS instruction, or NULL without one (the text needs
   * nvdisasm: `mprof sass`). */
  const mprof_sass_instruction *instruction;
  size_t frame_count; /**< its inline chain; 0 without a line, 1 when not
                           inlined */
  const mprof_sass_frame *frames; /**< innermost first (sass.h) */
  MPROF_GROWABLE_TAIL
} mprof_line_instruction;

/** Samples per function of the inline chains. */
typedef struct mprof_inline_stats {
  const char *function;  /**< mangled */
  const char *demangled; /**< "" when it does not demangle */
  uint64_t self;         /**< samples whose innermost frame is its code */
  uint64_t total;        /**< samples with it anywhere in the chain */
  uint64_t not_issued;   /**< X_not_issued samples of its own code */
  size_t reason_count;
  const mprof_reason_samples *reasons; /**< of its own code, largest first */
  MPROF_GROWABLE_TAIL
} mprof_inline_stats;

/**
 * The source lines of kernel @p kernel of @p join. @p join is borrowed and
 * must outlive the result; @p opts may be NULL. A kernel without a line
 * table is not an error: its lines are one line 0 and
 * mprof_lines_origin() says MPROF_LINES_NONE. On success *out is the
 * caller's; free it with mprof_lines_free().
 */
MPROF_API int mprof_lines_build(mprof_lines **out, const mprof_join *join,
                                size_t kernel, const mprof_lines_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_lines_free(mprof_lines *lines);

/** Where the lines came from (mprof_lines_origin_kind). */
MPROF_API int mprof_lines_origin(const mprof_lines *lines);

/** The kernel's plain-reason samples (the sum over its lines). */
MPROF_API uint64_t mprof_lines_samples(const mprof_lines *lines);

/** Number of lines, line 0 included when it has instructions or samples. */
MPROF_API size_t mprof_lines_count(const mprof_lines *lines);

/** Line @p index: hottest first (samples, then file index, then line);
 * NULL out of range. Owned by @p lines. */
MPROF_API const mprof_line_stats *mprof_lines_at(const mprof_lines *lines,
                                                 size_t index);

/** The index of line @p line of @p file (a path as mprof_lines_file()
 * gives it), or MPROF_INDEX_NONE. */
MPROF_API uint32_t mprof_lines_find(const mprof_lines *lines, const char *file,
                                    uint32_t line);

/** Reason @p index of @p line's `reasons` (NULL out of range). */
MPROF_API const mprof_reason_samples *
mprof_line_reason(const mprof_line_stats *line, size_t index);

/** Number of distinct files the lines name ("" for line 0 included). */
MPROF_API size_t mprof_lines_file_count(const mprof_lines *lines);

/** File @p index, in order of first appearance in the code; NULL out of
 * range. Owned by @p lines. */
MPROF_API const char *mprof_lines_file(const mprof_lines *lines, size_t index);

/** Number of instructions: the function's code when it is known, else its
 * sidecar instructions, else its sampled ones. */
MPROF_API size_t mprof_lines_instruction_count(const mprof_lines *lines);

/** Instruction @p index by offset, NULL out of range. Owned by @p lines. */
MPROF_API const mprof_line_instruction *
mprof_lines_instruction_at(const mprof_lines *lines, size_t index);

/** The instruction at byte offset @p offset, or NULL. */
MPROF_API const mprof_line_instruction *
mprof_lines_instruction_find(const mprof_lines *lines, uint32_t offset);

/** Number of functions in the inline chains (the kernel included). */
MPROF_API size_t mprof_lines_function_count(const mprof_lines *lines);

/** Function @p index by self samples, largest first; NULL out of range. */
MPROF_API const mprof_inline_stats *
mprof_lines_function_at(const mprof_lines *lines, size_t index);

/** Reason @p index of @p fn's `reasons` (NULL out of range). */
MPROF_API const mprof_reason_samples *
mprof_inline_reason(const mprof_inline_stats *fn, size_t index);

/**
 * Write the hottest source lines of the sampled kernels of @p join that
 * @p opts selects (`mprof summary --by-line`): per kernel (opts->kernel,
 * at most opts->max_kernels, in the join's order) its opts->max_hot
 * hottest lines with samples, each with its code (from @p sources; NULL:
 * none), share, stall mix, sampled SASS instructions and, for inlined
 * code, the call sites it was inlined at. XML and JSON follow
 * docs/SUMMARY-SCHEMA.md ("mprof summary --by-line"); the text is for
 * people. @p opts may be NULL (XML, 5 kernels, 5 lines).
 * MPROF_ENOTFOUND when opts->kernel matches no kernel.
 */
MPROF_API int mprof_lines_write(FILE *out, const mprof_join *join,
                                mprof_sources *sources,
                                const mprof_report_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_LINES_H */
