/*
 * mprof — internal: the function symbols of an ELF64 cubin and a copy of it
 * with only some functions' code (format/cubin_trim.c). libc only: part of
 * the writer half, which the CUPTI producer links. It walks the ELF itself,
 * bounds-checking every read, since the producer may not link libelf.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_CUBIN_TRIM_H
#define MPROF_FORMAT_CUBIN_TRIM_H

#include <stddef.h>
#include <stdint.h>

/** Called once per STT_FUNC symbol with its name and .symtab index. */
typedef void (*mprof__cubin_function_fn)(void *userdata, const char *name,
                                         uint32_t symbol_index);

/**
 * Report every function symbol of the ELF64 little-endian image @p image.
 * Returns the number of functions reported, or -1 when @p image is not an
 * ELF64 file this walker can read (nothing is reported then).
 */
int mprof__cubin_functions(const void *image, size_t size,
                           mprof__cubin_function_fn fn, void *userdata);

/**
 * Copy of the ELF64 cubin @p image with the code of every function left out
 * except the sections that hold the symbols @p keep[0..count) (.symtab
 * indices). A left-out function's `.text.NAME` section, its `.nv.*.NAME`
 * companions (info, constant bank, local and shared memory) and the
 * relocation sections that target any of them become SHT_NOBITS: their
 * headers stay, so every section and symbol index, every symbol value and
 * every kept section's bytes are unchanged, but they occupy no bytes. The
 * program headers are dropped (their file offsets no longer hold). Other
 * sections (symbols, strings, module-wide info, line tables) are copied.
 *
 * On success *out (malloc'ed, the caller frees it) holds *out_size bytes and
 * 0 is returned; 1 (and *out NULL) when every function is kept, so there
 * is nothing to leave out; -1 when @p image is not an ELF64 file this code
 * can read; -2 without memory.
 */
int mprof__cubin_trim(const void *image, size_t size, const uint32_t *keep,
                      size_t count, void **out, size_t *out_size);

/** Whether function @p name ran (a launched kernel): its code is kept. */
typedef int (*mprof__cubin_ran_fn)(void *userdata, const char *name);

/**
 * mprof__cubin_trim() down to the functions that ran, as the CUPTI producer
 * keeps them when a capture finishes and `mprof record` when it rewrites
 * one cut short: the symbols @p used[0..count) (.symtab indices: functions
 * PC samples name, kernels whose index is known) and every function
 * @p ran says yes to (by name; none when @p ran is NULL). Returns as
 * mprof__cubin_trim().
 */
int mprof__cubin_trim_to_used(const void *image, size_t size,
                              const uint32_t *used, size_t count,
                              mprof__cubin_ran_fn ran, void *userdata,
                              void **out, size_t *out_size);

#endif /* MPROF_FORMAT_CUBIN_TRIM_H */
