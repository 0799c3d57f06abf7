/*
 * mprof — SASS: cubin ELF files, their functions and line tables, nvdisasm
 * listings, cubins inside executables and shared libraries, and the step
 * that turns a trace into its PC sidecar.
 *
 * What is read from a cubin, and from where (docs/SIDECAR.md says more):
 *   - functions: STT_FUNC symbols of `.symtab`, each in its own
 *     `.text.<mangled>` section; `symbol_index` is the symbol's index, the
 *     `functionIndex` CUPTI reports and the index `nvdisasm -fun` takes;
 *   - registers: EIATTR_REGCOUNT in the module-wide `.nv.info`, else the top
 *     byte of the `.text.<mangled>` section's sh_info (older cubins);
 *   - static shared memory: the size of the NOBITS `.nv.shared.<mangled>`
 *     section, less the 1 KiB the driver reserves at its start when the
 *     cubin has `.nv.shared.reserved.*` sections (sm_90 with CUDA 13);
 *   - local memory per thread: EIATTR_FRAME_SIZE;
 *   - source lines: the DWARF line program in `.debug_line` (written by
 *     `nvcc -lineinfo` or `-G`), placed on functions through the relocations
 *     in `.rela.debug_line`; `.nv_debug_line_sass` (lines of the embedded PTX)
 *     is only noted.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SASS_H
#define MPROF_SASS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "sidecar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options and the report of a sidecar build --------------------------- */

#define MPROF_SASS_OPTIONS_VERSION 2

/** Do not run nvdisasm even when it is installed (lines and samples only). */
#define MPROF_SASS_NO_DISASSEMBLY 0x1u
/**
 * Run no nvdisasm now: functions whose code is found get their lines and
 * resources and MPROF_SASS_DEFERRED, for mprof_sass_complete() later
 * (`mprof record`: the program's wait ends sooner, and the cost goes to the
 * first summary or view).
 */
#define MPROF_SASS_DEFER 0x2u
/**
 * Disassemble only functions with PC samples; the others whose code is
 * found get MPROF_SASS_DEFERRED (mprof_sass_attach() gives them SASS).
 */
#define MPROF_SASS_SAMPLED_ONLY 0x4u

typedef struct mprof_sass_options {
  unsigned version;      /**< MPROF_SASS_OPTIONS_VERSION */
  unsigned flags;        /**< MPROF_SASS_* */
  const char *nvdisasm;  /**< path; NULL = search (mprof_sass_find_tool) */
  const char *cuobjdump; /**< path; NULL = search (mprof_sass_find_tool) */
  uint32_t arch; /**< when a function is in cubins for several SMs, prefer
                      this one (90 for sm_90); 0 = the newest */
  /* version 2 */
  /** nvdisasm processes run at once; 0 = one per online CPU. */
  unsigned jobs;
  /**
   * Called now and then while functions are disassembled, on the calling
   * thread: @p what names the step ("disassembling"), @p done of @p total
   * modules are finished. NULL: no calls.
   */
  void (*progress)(void *userdata, const char *what, size_t done, size_t total);
  void *progress_userdata; /**< passed to @p progress */
  MPROF_GROWABLE_TAIL
} mprof_sass_options;

#define MPROF_SASS_OPTIONS_INIT                                                \
  { MPROF_SASS_OPTIONS_VERSION, 0, NULL, NULL, 0, 0, NULL, NULL }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_sass_options_init(mprof_sass_options *opts,
                                      unsigned version);

#define MPROF_SASS_REPORT_VERSION 2

/** What a build or attach did. Filled by the library; the caller owns it. */
typedef struct mprof_sass_report {
  unsigned version;       /**< MPROF_SASS_REPORT_VERSION, set by the caller */
  size_t functions;       /**< functions in the sidecar */
  size_t with_sass;       /**< MPROF_SASS_PRESENT */
  size_t with_lines;      /**< with at least one source line */
  size_t no_cubin;        /**< MPROF_SASS_NO_CUBIN: no code found */
  size_t no_disassembler; /**< MPROF_SASS_NO_DISASSEMBLER */
  size_t failed;          /**< MPROF_SASS_FAILED */
  size_t attached;        /**< functions this call gave code to */
  uint64_t samples;       /**< PC samples in the sidecar, each once: the
                               plain reasons' (as mprof_trace_pc_sample_total()
                               and the join count them) */
  char disassembler[512]; /**< nvdisasm that ran; "" when none was found */
  /* version 2 */
  size_t deferred;         /**< MPROF_SASS_DEFERRED */
  size_t deferred_sampled; /**< ... of them with PC samples */
  MPROF_GROWABLE_TAIL
} mprof_sass_report;

#define MPROF_SASS_REPORT_INIT                                                 \
  { MPROF_SASS_REPORT_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 0 }

/* ---- tools --------------------------------------------------------------- */

/**
 * Find the CUDA tool @p name ("nvdisasm", "cuobjdump") and write its path to
 * @p out (@p out_size bytes). Looks at $MPROF_NVDISASM / $MPROF_CUOBJDUMP
 * (the name upper-cased), then PATH, then $CUDA_HOME/bin, then
 * /usr/local/cuda/bin. MPROF_ENOTFOUND when it is nowhere; a set but wrong
 * environment variable is MPROF_ENOTFOUND too, with a message naming it.
 */
MPROF_API int mprof_sass_find_tool(char *out, size_t out_size,
                                   const char *name);

/**
 * Demangle the C++ name @p mangled (libstdc++'s __cxa_demangle). On success
 * *out is a new string the caller frees with free(). MPROF_ENOTFOUND when
 * @p mangled is not a mangled name (an extern "C" kernel, say).
 */
MPROF_API int mprof_sass_demangle(char **out, const char *mangled);

/* ---- cubins -------------------------------------------------------------- */

typedef struct mprof_sass_cubin mprof_sass_cubin;

/** The function is a kernel (STO_CUDA_ENTRY in the symbol's st_other). */
#define MPROF_SASS_FUNCTION_ENTRY 0x1u
/** `.debug_line` has rows for it: source lines without nvdisasm. */
#define MPROF_SASS_FUNCTION_LINES 0x2u
/** `.nv_debug_line_sass` has rows for it (PTX lines; nvdisasm -gp). */
#define MPROF_SASS_FUNCTION_PTX_LINES 0x4u

/** A function of a cubin. Owned by its cubin. */
typedef struct mprof_sass_function {
  const char *name;          /**< mangled */
  uint32_t symbol_index;     /**< .symtab index; CUPTI's functionIndex */
  uint32_t section_index;    /**< its .text.<name> section */
  uint32_t section_offset;   /**< st_value: start inside that section */
  uint32_t size;             /**< bytes of code */
  uint32_t registers;        /**< per thread; 0 when unknown */
  uint32_t static_shared;    /**< bytes, without the driver's reserve */
  uint32_t local_per_thread; /**< bytes (EIATTR_FRAME_SIZE) */
  uint32_t flags;            /**< MPROF_SASS_FUNCTION_* */
  MPROF_GROWABLE_TAIL
} mprof_sass_function;

/** A row of a function's line table: code from @p offset on is @p line.
 * Fixed (docs/ABI.md): it never grows. */
typedef struct mprof_sass_line {
  uint32_t offset;  /**< byte offset inside the function */
  uint32_t line;    /**< 0: no source line for this code */
  const char *file; /**< owned by the cubin; "" when unknown */
} mprof_sass_line;

/**
 * Parse the cubin of @p size bytes at @p data, which is copied. @p origin
 * names it in messages ("app.mprof: cubin 00000000ccf2d77a"); NULL gives
 * "cubin". MPROF_EFORMAT for anything that is not a CUDA ELF image. On
 * success *out is the caller's; free it with mprof_sass_cubin_free().
 */
MPROF_API int mprof_sass_cubin_open(mprof_sass_cubin **out, const void *data,
                                    size_t size, const char *origin);

/** NULL is a no-op. */
MPROF_API void mprof_sass_cubin_free(mprof_sass_cubin *cubin);

/** The SM version the cubin was built for (90 for sm_90). */
MPROF_API uint32_t mprof_sass_cubin_arch(const mprof_sass_cubin *cubin);

/** The cuptiGetCubinCrc of the cubin when it came from a trace; else 0. */
MPROF_API uint64_t mprof_sass_cubin_crc(const mprof_sass_cubin *cubin);

/** The @p origin given to mprof_sass_cubin_open(); owned by @p cubin. */
MPROF_API const char *mprof_sass_cubin_origin(const mprof_sass_cubin *cubin);

/** The cubin's bytes (the copy); owned by @p cubin. */
MPROF_API const void *mprof_sass_cubin_data(const mprof_sass_cubin *cubin,
                                            size_t *size);

/** Number of functions (STT_FUNC symbols in `.text.*` sections). */
MPROF_API size_t mprof_sass_cubin_function_count(const mprof_sass_cubin *cubin);

/** Function @p index in symbol-table order; NULL when out of range. */
MPROF_API const mprof_sass_function *
mprof_sass_cubin_function_at(const mprof_sass_cubin *cubin, size_t index);

/** The function named @p name (mangled), or NULL. */
MPROF_API const mprof_sass_function *
mprof_sass_cubin_find(const mprof_sass_cubin *cubin, const char *name);

/**
 * The line table of @p fn from `.debug_line`, sorted by offset; NULL and 0
 * when it has none. Owned by @p cubin.
 */
MPROF_API const mprof_sass_line *
mprof_sass_cubin_lines(const mprof_sass_cubin *cubin,
                       const mprof_sass_function *fn, size_t *count);

/**
 * The source line of the instruction at @p offset of @p fn (0 when unknown);
 * *file (may be NULL) gets its file, "" when unknown, owned by @p cubin.
 */
MPROF_API uint32_t mprof_sass_cubin_line(const mprof_sass_cubin *cubin,
                                         const mprof_sass_function *fn,
                                         uint32_t offset, const char **file);

/** One frame of an instruction's inline chain. Fixed (docs/ABI.md): it
 * never grows. Strings are owned by the cubin. */
typedef struct mprof_sass_frame {
  const char *function; /**< mangled name of the function whose code this
                             is: the inlined one, or for the outermost frame
                             the cubin function itself */
  const char *file;     /**< source file of this frame's line */
  uint32_t line;        /**< source line: the code itself for frame 0, the
                             call site for the frames after it */
  uint32_t inlined;     /**< 1 when @p function was inlined into the next
                             frame's function */
} mprof_sass_frame;

/**
 * The inline chain of the instruction at @p offset of @p fn, innermost
 * first: frame 0 is its own line (as mprof_sass_cubin_line()) and the
 * function it belongs to; each later frame is the call site that inlined
 * the frame before it; the last frame is code of @p fn itself. Read from
 * the inlining records nvcc puts in `.debug_line` (`-lineinfo`, CUDA 11.2
 * on). Writes up to @p capacity frames to @p frames (may be NULL when
 * @p capacity is 0) and returns how many there are (0: no line known; 1:
 * not inlined); chains are cut at 64 frames.
 */
MPROF_API size_t mprof_sass_cubin_frames(const mprof_sass_cubin *cubin,
                                         const mprof_sass_function *fn,
                                         uint32_t offset,
                                         mprof_sass_frame *frames,
                                         size_t capacity);

/** Bytes per instruction slot: 16 from sm_70 on, 8 before. */
MPROF_API uint32_t
mprof_sass_cubin_instruction_size(const mprof_sass_cubin *cubin);

/* ---- nvdisasm listings --------------------------------------------------- */

typedef struct mprof_sass_listing mprof_sass_listing;

/** The code of one function in a listing. Owned by the listing. */
typedef struct mprof_sass_listing_function {
  const char *name; /**< mangled; "" when the listing did not say */
  size_t instruction_count;
  const mprof_sass_instruction *instructions; /**< ascending offsets */
  MPROF_GROWABLE_TAIL
} mprof_sass_listing_function;

/**
 * Parse the text that `nvdisasm -c [-g] [-fun N] FILE.cubin` prints:
 * functions start at their `.text.<name>` header; an instruction is a line
 * that starts with its hexadecimal offset in a C comment, then
 * `[@PRED] OPCODE OPERANDS ;` (a trailing comment with the encoding is
 * ignored); `//## File "F", line N` comments give the source line of the
 * instructions after them (the first of a block is the innermost).
 * Offsets are relative to the function's section. MPROF_EFORMAT names the
 * line of text that made no sense. On success *out is the caller's; free it
 * with mprof_sass_listing_free().
 */
MPROF_API int mprof_sass_listing_parse(mprof_sass_listing **out,
                                       const char *text, size_t size);

/** NULL is a no-op. */
MPROF_API void mprof_sass_listing_free(mprof_sass_listing *listing);

/** Number of functions the listing holds code for. */
MPROF_API size_t
mprof_sass_listing_function_count(const mprof_sass_listing *listing);

/** Function @p index in order of appearance; NULL when out of range. */
MPROF_API const mprof_sass_listing_function *
mprof_sass_listing_function_at(const mprof_sass_listing *listing, size_t index);

/** The function named @p name, or NULL. */
MPROF_API const mprof_sass_listing_function *
mprof_sass_listing_find(const mprof_sass_listing *listing, const char *name);

/**
 * Run nvdisasm on @p cubin for the functions with the @p count symbol
 * indices in @p symbols (count 0: the whole cubin) and parse its output.
 * `-g` is passed when the cubin has `.debug_line`. MPROF_ENOTFOUND when
 * nvdisasm is not installed, MPROF_EIO when it failed (the message quotes
 * its first line of error output). @p opts may be NULL. On success *out is
 * the caller's; free it with mprof_sass_listing_free().
 */
MPROF_API int mprof_sass_disassemble(mprof_sass_listing **out,
                                     const mprof_sass_cubin *cubin,
                                     const uint32_t *symbols, size_t count,
                                     const mprof_sass_options *opts);

/* ---- executables, shared libraries, cubin and fatbin files --------------- */

typedef struct mprof_sass_binary mprof_sass_binary;

/**
 * Read the cubins in the file at @p path: a cubin itself, a fatbin file, an
 * mprof trace (its captured cubins, with their CRCs), or a host ELF
 * (executable, shared library, object) whose `.nv_fatbin` section holds
 * fatbins (header magic 0xBA55ED50). Uncompressed ELF entries are read
 * in place; when some are compressed they are extracted with
 * `cuobjdump -xelf all` into a temporary folder; without cuobjdump they are
 * skipped and mprof_sass_binary_note() says so. PTX entries are skipped.
 * Fails (MPROF_ENOTFOUND) when no cubin at all could be read. @p opts may be
 * NULL. On success *out is the caller's; free it with
 * mprof_sass_binary_free().
 */
MPROF_API int mprof_sass_binary_open(mprof_sass_binary **out, const char *path,
                                     const mprof_sass_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_sass_binary_free(mprof_sass_binary *binary);

/** Number of cubins read from the file. */
MPROF_API size_t mprof_sass_binary_cubin_count(const mprof_sass_binary *binary);

/** Cubin @p index; owned by @p binary; NULL when out of range. */
MPROF_API const mprof_sass_cubin *
mprof_sass_binary_cubin(const mprof_sass_binary *binary, size_t index);

/** What was skipped and why, in one sentence; "" when nothing. Owned by
 * @p binary. */
MPROF_API const char *mprof_sass_binary_note(const mprof_sass_binary *binary);

/* ---- the sidecar of a trace ---------------------------------------------- */

/**
 * Build the PC sidecar of the trace at @p trace_path and save it to
 * @p sidecar_path (conventionally TRACE_PATH ".pc.json"). Every kernel of
 * KERNELS and every function with PC samples becomes a sidecar function
 * (keyed by mangled name and cubin CRC; a function seen on several devices
 * gets device MPROF_INDEX_NONE); its code is looked up among the trace's
 * CUBINS by CRC, or by name when the CRC is unknown; nvdisasm gives the SASS
 * and `.debug_line` or nvdisasm's comments the source lines. PC samples are
 * summed per (function, offset, stall reason); stall reason names come from
 * STALL_REASONS. Without nvdisasm the sidecar is still written, with samples,
 * source lines and MPROF_SASS_NO_DISASSEMBLER. @p opts and @p report may be
 * NULL; @p report is filled even when the function fails part way.
 */
MPROF_API int mprof_sass_build_sidecar(const char *trace_path,
                                       const char *sidecar_path,
                                       const mprof_sass_options *opts,
                                       mprof_sass_report *report);

/**
 * Give code to the functions of @p sidecar that lack SASS: look for each in
 * the @p count binaries by mangled name (a cubin with the function's CRC
 * wins; cubins with another known CRC are never used; then a cubin for
 * opts->arch, then one whose function has the recorded size, then the
 * newest SM), take its lines and registers, and disassemble it. Functions
 * already MPROF_SASS_PRESENT are left alone.
 * @p opts and @p report may be NULL.
 */
MPROF_API int mprof_sass_attach(mprof_sidecar *sidecar,
                                const mprof_sass_binary *const *binaries,
                                size_t count, const mprof_sass_options *opts,
                                mprof_sass_report *report);

/**
 * Disassemble the functions of @p sidecar that have PC samples and
 * MPROF_SASS_DEFERRED, from the code kept in the trace at @p trace_path
 * (what `mprof record` left for later), and save @p sidecar to
 * @p sidecar_path when that gave any function SASS (@p sidecar_path NULL:
 * do not save). Returns at once, opening nothing, when no such function
 * exists; without nvdisasm it changes nothing. A sidecar that cannot be
 * saved (a read-only folder) is not an error: @p sidecar is complete in
 * memory, and the next call disassembles again. @p opts and @p report may
 * be NULL; report->attached counts the functions given SASS.
 */
MPROF_API int mprof_sass_complete(mprof_sidecar *sidecar,
                                  const char *trace_path,
                                  const char *sidecar_path,
                                  const mprof_sass_options *opts,
                                  mprof_sass_report *report);

/** Recount @p report (not `attached`) from the functions of @p sidecar. */
MPROF_API int mprof_sass_report_count(mprof_sass_report *report,
                                      const mprof_sidecar *sidecar);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SASS_H */
