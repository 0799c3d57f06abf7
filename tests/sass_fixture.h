/*
 * What the sass tests share: an ELF builder, the synthetic cubin, fatbin
 * and host ELF holding it, temporary files and scripts, and a stand-in
 * nvdisasm.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TEST_SASS_FIXTURE_H
#define MPROF_TEST_SASS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

typedef struct test_section {
  const char *name;
  uint32_t type;
  uint64_t flags;
  const void *data;
  size_t size;
  uint32_t link;
  uint32_t info;
  uint64_t align;
  uint64_t entsize;
} test_section;

/* Offsets of the names in the synthetic cubin's .strtab. */
#define STR_HELPER 1      /* "$_Z4kernPf$_Z6helperf" */
#define STR_KERN 23       /* "_Z4kernPf" */
#define STR_OTHER 33      /* "_Z5otherv" */
#define SET_ADDRESS_AT 56 /* the operand of DW_LNE_set_address */

void put16(unsigned char *p, uint16_t v);

void put32(unsigned char *p, uint32_t v);

void put64(unsigned char *p, uint64_t v);

/* An ELF64 image with sections 1..n as given and .shstrtab as n + 1. */
unsigned char *build_elf(uint16_t machine, uint32_t e_flags,
                         const test_section *secs, size_t n, size_t *out_size);

void put_sym(unsigned char *p, uint32_t name, unsigned char info,
             unsigned char other, uint16_t shndx, uint64_t value,
             uint64_t size);

/*
 * A cubin for sm_90 with:
 *   _Z4kernPf   kernel, symbol 2, section 4, 0x100 bytes, 24 registers
 *               (EIATTR_REGCOUNT), 16 bytes of frame, 512 bytes of static
 *               shared memory (+1 KiB reserve); lines 10 at 0, 13 at 0x20,
 *               /inc/h.cuh:3 from 0x80;
 *   $_Z4kernPf$_Z6helperf  local device function at 0x80 of that section;
 *   _Z5otherv   kernel, symbol 3, section 5, st_size 0 (0x40 from the
 *               section), 32 registers from sh_info's top byte, no lines.
 * @p damage_line_program cuts the line program short.
 */
unsigned char *synthetic_cubin(size_t *size, int damage_line_program);

/* A fatbin holding a PTX entry and @p cubin (marked compressed when asked),
 * then a second fatbin holding @p cubin again. */
unsigned char *synthetic_fatbin(const unsigned char *cubin, size_t cubin_size,
                                int compressed, size_t *size);

/* An x86-64 ELF whose .nv_fatbin section holds @p fatbin. */
unsigned char *host_elf(const unsigned char *fatbin, size_t fatbin_size,
                        size_t *size);

const char *write_temp(const char *name, const void *data, size_t size);

/* A shell script at test_path(@p name) with @p body; returns its path. */
const char *write_script(const char *name, const char *body);

/* A stand-in for nvdisasm that records its arguments and prints the
 * listing of the synthetic cubin's _Z4kernPf (documented layout). */
const char *fake_nvdisasm(const char *args_file, int fail);

#endif
