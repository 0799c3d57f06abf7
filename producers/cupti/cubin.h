/*
 * mprof CUPTI producer — what the producer needs to know about a cubin.
 *
 * The producer may not link libelf, and it only needs the function symbols
 * of a module (to tell which modules hold launched kernels), so it walks the
 * ELF64 symbol table itself, bounds-checking every read. Cubins captured at
 * MODULE_LOADED are parked in an unlinked spill file until the end of the
 * run, when the producer knows which of them the trace needs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_CUBIN_H
#define MPROF_CUPTI_CUBIN_H

#include <stddef.h>
#include <stdint.h>

/** Called once per STT_FUNC symbol with its name and .symtab index. */
typedef void (*mprof_cupti_function_fn)(void *userdata, const char *name,
                                        uint32_t symbol_index);

/**
 * Report every function symbol of the ELF64 little-endian image @p image.
 * Returns the number of functions reported, or -1 when @p image is not an
 * ELF64 file this walker can read (nothing is reported then).
 */
int mprof_cupti_cubin_functions(const void *image, size_t size,
                                mprof_cupti_function_fn fn, void *userdata);

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
int mprof_cupti_cubin_trim(const void *image, size_t size, const uint32_t *keep,
                           size_t count, void **out, size_t *out_size);

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
