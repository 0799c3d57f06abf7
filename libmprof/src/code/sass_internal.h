/*
 * mprof — helpers shared by sidecar.c and the sass*.c files. Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SASS_INTERNAL_H
#define MPROF_SASS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mprof/error.h"
#include "mprof/sass.h"
#include "mprof/sidecar.h"
#include "mprof/trace.h"

/* Highest stall reason index a sidecar accepts (CUPTI reports 40 on H200). */
#define MPROF__SIDECAR_MAX_REASON 1023u

/* The little-endian 32-bit number at @p p (ELF notes, fat binary headers). */
static inline uint32_t mprof__rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* ---- sidecar.c ---------------------------------------------------------- */

/* Drop every instruction of function @p fn (to replace line-only entries). */
int mprof__sidecar_clear_instructions(mprof_sidecar *sidecar, uint32_t fn);

/* Copy the scalar fields and the demangled name of @p info into function
 * @p fn (its name, state and arrays are left alone). */
int mprof__sidecar_update_function(mprof_sidecar *sidecar, uint32_t fn,
                                   const mprof_sidecar_function *info);

/* ---- sass_elf.c --------------------------------------------------------- */

/* elf_version(), once per process, before any other libelf call. */
void mprof__elf_init(void);

/* mprof_sass_cubin_open(), recording the CRC and device the trace gave. */
int mprof__sass_cubin_open(mprof_sass_cubin **out, const void *data,
                           size_t size, const char *origin, uint64_t crc,
                           uint32_t device);

/* The trace device index given to mprof__sass_cubin_open(), else NONE. */
uint32_t mprof__sass_cubin_device(const mprof_sass_cubin *cubin);

/* Whether the cubin has a `.debug_line` section (nvdisasm -g needs it). */
int mprof__sass_cubin_has_debug_line(const mprof_sass_cubin *cubin);

/* The name of @p fn's section after ".text." (the name nvdisasm prints
 * for its code); "" when @p fn is not @p cubin's. */
const char *mprof__sass_cubin_section_name(const mprof_sass_cubin *cubin,
                                           const mprof_sass_function *fn);

/* The first byte of @p fn's code inside @p cubin's image (fn->size bytes);
 * NULL when @p fn is not @p cubin's. */
const void *mprof__sass_cubin_code(const mprof_sass_cubin *cubin,
                                   const mprof_sass_function *fn);

/* Whether @p cubin lacks some functions' code (a trimmed trace cubin, whose
 * NOBITS sections nvdisasm refuses: "Cannot find the code address"). */
int mprof__sass_cubin_trimmed(const mprof_sass_cubin *cubin);

/* ---- sass_binary.c ------------------------------------------------------ */

/* The captured cubins of an open trace (blobs are copied). */
int mprof__sass_binary_from_trace(mprof_sass_binary **out,
                                  const mprof_trace *trace);

/* ---- sass_tool.c -------------------------------------------------------- */

/* @p in (any known version) as a current-version struct in @p out. */
void mprof__sass_options_copy(mprof_sass_options *out,
                              const mprof_sass_options *in);

/* What a public entry point takes: @p in, or the defaults when NULL, copied
 * as by mprof__sass_options_copy(); MPROF_EVERSION (message set) for a
 * version this library cannot read. */
int mprof__sass_options_take(mprof_sass_options *out,
                             const mprof_sass_options *in);

/* The tool @p name (nvdisasm, cuobjdump) into @p out: @p given, the path the
 * caller named, when it is an executable file, or else (@p given NULL) the one
 * mprof_sass_find_tool() finds. MPROF_ENOTFOUND (message set, @p out empty)
 * when the named one is not executable or none is found. */
int mprof__sass_tool(char *out, size_t out_size, const char *given,
                     const char *name);

/* nvdisasm on raw instructions (`-b SM<arch>`): @p size bytes of code of an
 * sm_<arch> function, printed as one function at offsets from 0. For code
 * whose cubin nvdisasm will not read. */
int mprof__sass_disassemble_raw(mprof_sass_listing **out, const void *code,
                                size_t size, uint32_t arch,
                                const mprof_sass_options *opts);

/* Run argv[0] (a path) with @p argv in folder @p cwd (NULL: here). Its
 * standard output goes to *out (NUL-terminated, caller frees) and the first
 * line of its error output to @p err. Returns 0 when it ran and exited 0;
 * otherwise MPROF_EIO with the message set. */
int mprof__run_tool(char *const argv[], const char *cwd, char **out,
                    size_t *out_size, char *err, size_t err_size);

/* Remove folder @p dir and the plain files in it. */
void mprof__remove_dir(const char *dir);

/* ---- sass_sidecar.c ----------------------------------------------------- */

/* Which functions an attach looks at. */
enum {
  MPROF__ATTACH_MISSING = 0,         /* every function without SASS */
  MPROF__ATTACH_DEFERRED_SAMPLED = 1 /* deferred ones with PC samples */
};

/* The start of every SASS entry point: @p opts (NULL: defaults) taken
 * into @p copy, then @p report checked. */
int mprof__sass_begin(mprof_sass_options *copy, const mprof_sass_options *opts,
                      mprof_sass_report *report);

/* mprof_sass_attach() with a preferred SM per sidecar function (@p arch_of
 * has one entry per function; 0 = no preference; NULL = opts->arch), for
 * the functions @p which (MPROF__ATTACH_*) names. */
int mprof__sass_attach(mprof_sidecar *sidecar,
                       const mprof_sass_binary *const *binaries, size_t count,
                       const mprof_sass_options *opts,
                       mprof_sass_report *report, const uint32_t *arch_of,
                       int which);

#endif /* MPROF_SASS_INTERNAL_H */
