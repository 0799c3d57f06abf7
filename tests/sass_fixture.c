/*
 * What the sass tests share (sass_fixture.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <sys/stat.h>

#include "test_util.h"

#include "mprof/mprof.h"

#include "sass_fixture.h"

/* ---- an ELF builder ----------------------------------------------------- */

void put16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* An ELF64 image with sections 1..n as given and .shstrtab as n + 1. */
unsigned char *build_elf(uint16_t machine, uint32_t e_flags,
                         const test_section *secs, size_t n, size_t *out_size) {
  char shstr[2048];
  size_t shstr_len = 1;
  uint32_t name_at[64];
  shstr[0] = '\0';
  for (size_t i = 0; i <= n; i++) {
    const char *name = i < n ? secs[i].name : ".shstrtab";
    name_at[i] = (uint32_t)shstr_len;
    memcpy(shstr + shstr_len, name, strlen(name) + 1);
    shstr_len += strlen(name) + 1;
  }
  size_t at = 64, data_at[64];
  for (size_t i = 0; i <= n; i++) {
    size_t size = i < n ? secs[i].size : shstr_len;
    at = (at + 7) & ~(size_t)7;
    data_at[i] = at;
    if (i == n || secs[i].type != 8 /* SHT_NOBITS */)
      at += size;
  }
  size_t shoff = (at + 7) & ~(size_t)7;
  size_t total = shoff + (n + 2) * 64;
  unsigned char *img = (unsigned char *)calloc(1, total);
  assert_non_null(img);
  memcpy(img,
         "\x7f"
         "ELF\x02\x01\x01\x41\x08",
         9);
  put16(img + 16, 2); /* ET_EXEC */
  put16(img + 18, machine);
  put32(img + 20, 1);
  put64(img + 40, shoff);
  put32(img + 48, e_flags);
  put16(img + 52, 64);
  put16(img + 58, 64);
  put16(img + 60, (uint16_t)(n + 2));
  put16(img + 62, (uint16_t)(n + 1));
  for (size_t i = 0; i <= n; i++) {
    unsigned char *sh = img + shoff + (i + 1) * 64;
    const test_section *s = i < n ? &secs[i] : NULL;
    put32(sh, name_at[i]);
    put32(sh + 4, s ? s->type : 3);
    put64(sh + 8, s ? s->flags : 0);
    put64(sh + 24, data_at[i]);
    put64(sh + 32, s ? s->size : shstr_len);
    put32(sh + 40, s ? s->link : 0);
    put32(sh + 44, s ? s->info : 0);
    put64(sh + 48, s && s->align ? s->align : 1);
    put64(sh + 56, s ? s->entsize : 0);
    if (s && s->type != 8 && s->size)
      memcpy(img + data_at[i], s->data, s->size);
    else if (!s)
      memcpy(img + data_at[i], shstr, shstr_len);
  }
  *out_size = total;
  return img;
}

void put_sym(unsigned char *p, uint32_t name, unsigned char info,
             unsigned char other, uint16_t shndx, uint64_t value,
             uint64_t size) {
  put32(p, name);
  p[4] = info;
  p[5] = other;
  put16(p + 6, shndx);
  put64(p + 8, value);
  put64(p + 16, size);
}

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
unsigned char *synthetic_cubin(size_t *size, int damage_line_program) {
  static const char strtab[] = "\0$_Z4kernPf$_Z6helperf\0_Z4kernPf\0_Z5otherv";
  unsigned char symtab[4 * 24];
  memset(symtab, 0, sizeof symtab);
  put_sym(symtab + 24, STR_HELPER, 0x02 /* LOCAL FUNC */, 0, 4, 0x80, 0x80);
  put_sym(symtab + 48, STR_KERN, 0x12 /* GLOBAL FUNC */, 0x10, 4, 0, 0x100);
  put_sym(symtab + 72, STR_OTHER, 0x12, 0x10, 5, 0, 0);
  unsigned char info[64];
  size_t ni = 0;
  /* REGCOUNT sym 2 = 24 */
  info[ni++] = 4, info[ni++] = 0x2f, put16(info + ni, 8), ni += 2;
  put32(info + ni, 2), put32(info + ni + 4, 24), ni += 8;
  /* an HVAL record, whose 16-bit field is a value, not a size */
  info[ni++] = 3, info[ni++] = 0x1b, put16(info + ni, 255), ni += 2;
  /* FRAME_SIZE sym 2 = 16 */
  info[ni++] = 4, info[ni++] = 0x11, put16(info + ni, 8), ni += 2;
  put32(info + ni, 2), put32(info + ni + 4, 16), ni += 8;
  /* REGCOUNT of a symbol that is no function */
  info[ni++] = 4, info[ni++] = 0x2f, put16(info + ni, 8), ni += 2;
  put32(info + ni, 77), put32(info + ni + 4, 99), ni += 8;
  /* a truncated record: claims more bytes than are left */
  info[ni++] = 4, info[ni++] = 0x2f, put16(info + ni, 200), ni += 2;
  unsigned char text[0x100];
  memset(text, 0, sizeof text);
  /* DWARF 2 line program. */
  unsigned char line[160];
  size_t n = 0;
  n += 4; /* unit_length, below */
  put16(line + n, 2), n += 2;
  size_t header_length_at = n;
  n += 4;
  line[n++] = 1;                 /* minimum_instruction_length */
  line[n++] = 1;                 /* default_is_stmt */
  line[n++] = (unsigned char)-5; /* line_base */
  line[n++] = 14;                /* line_range */
  line[n++] = 10;                /* opcode_base */
  static const unsigned char lengths[9] = {0, 1, 1, 1, 1, 0, 0, 0, 1};
  memcpy(line + n, lengths, 9), n += 9;
  memcpy(line + n, "/src\0\0", 6), n += 6;
  memcpy(line + n, "k.cu\0\x01\x00\x00", 8), n += 8;
  memcpy(line + n, "/inc/h.cuh\0\x00\x00\x00", 14), n += 14;
  line[n++] = 0; /* end of files */
  put32(line + header_length_at, (uint32_t)(n - header_length_at - 4));
  line[n++] = 0, line[n++] = 9, line[n++] = 2; /* set_address */
  assert_int_equal(n, SET_ADDRESS_AT);
  put64(line + n, 0), n += 8;
  line[n++] = 3, line[n++] = 9;    /* advance_line 9 -> 10 */
  line[n++] = 1;                   /* copy: 0x0 line 10 */
  line[n++] = 2, line[n++] = 0x20; /* advance_pc 0x20 */
  line[n++] = 3, line[n++] = 2;    /* advance_line 2 -> 12 */
  line[n++] = 1;                   /* copy: 0x20 line 12 */
  line[n++] = 10 + 6;              /* special: +0, line +1: 0x20 line 13 */
  line[n++] = 2, line[n++] = 0x60; /* advance_pc -> 0x80 */
  line[n++] = 4, line[n++] = 2;    /* set_file 2 */
  line[n++] = 3, line[n++] = 0x76; /* advance_line -10 -> 3 */
  line[n++] = 1;                   /* copy: 0x80 /inc/h.cuh:3 */
  line[n++] = 2, line[n++] = 0x80, line[n++] = 0x01; /* advance_pc 0x80 */
  line[n++] = 0, line[n++] = 1, line[n++] = 1;       /* end_sequence */
  put32(line, (uint32_t)(n - 4));
  if (damage_line_program)
    put32(line, 0xfffffff0u); /* a unit longer than the section */
  unsigned char rela[24];
  put64(rela, SET_ADDRESS_AT);
  put64(rela + 8, (2ull << 32) | 2); /* symbol 2, R_CUDA_64 */
  put64(rela + 16, 0);
  unsigned char rela_sass[24];
  put64(rela_sass, 3);
  put64(rela_sass + 8, (3ull << 32) | 2);
  put64(rela_sass + 16, 0);
  static const unsigned char line_sass[16] = {0};
  const test_section secs[] = {
      {".strtab", 3, 0, strtab, sizeof strtab, 0, 0, 1, 0},
      {".symtab", 2, 0, symtab, sizeof symtab, 1, 2, 8, 24},
      {".nv.info", 0x70000000, 0, info, ni, 2, 0, 4, 0},
      {".text._Z4kernPf", 1, 6, text, 0x100, 2, 2, 128, 0},
      {".text._Z5otherv", 1, 6, text, 0x40, 2, (32u << 24) | 3, 128, 0},
      {".nv.shared._Z4kernPf", 8, 3, NULL, 1024 + 512, 0, 4, 16, 0},
      {".nv.shared.reserved.0", 8, 3, NULL, 0, 0, 0, 1, 0},
      {".debug_line", 1, 0, line, n, 0, 0, 1, 0},
      {".rela.debug_line", 4, 0x40, rela, sizeof rela, 2, 8, 8, 24},
      {".nv_debug_line_sass", 1, 0, line_sass, sizeof line_sass, 0, 0, 1, 0},
      {".rela.nv_debug_line_sass", 4, 0x40, rela_sass, sizeof rela_sass, 2, 10,
       8, 24},
  };
  return build_elf(190, 0x5a << 8 | 0x02, secs, sizeof secs / sizeof secs[0],
                   size);
}

/* A fatbin holding a PTX entry and @p cubin (marked compressed when asked),
 * then a second fatbin holding @p cubin again. */
unsigned char *synthetic_fatbin(const unsigned char *cubin, size_t cubin_size,
                                int compressed, size_t *size) {
  static const char ptx[] = ".version 8.8\n.target sm_90\n";
  size_t ptx_entry = 64 + 32, elf_entry = 64 + ((cubin_size + 7) & ~7u);
  size_t first = 16 + ptx_entry + elf_entry;
  size_t total = first + 16 + elf_entry;
  unsigned char *f = (unsigned char *)calloc(1, total);
  assert_non_null(f);
  put32(f, 0xBA55ED50u);
  put16(f + 4, 1);
  put16(f + 6, 16);
  put64(f + 8, ptx_entry + elf_entry);
  unsigned char *e = f + 16;
  put16(e, 1);
  put32(e + 4, 64);
  put64(e + 8, 32);
  put32(e + 28, 90);
  put64(e + 40, 0x11);
  memcpy(e + 64, ptx, sizeof ptx);
  for (int k = 0; k < 2; k++) {
    e = k == 0 ? f + 16 + ptx_entry : f + first + 16;
    put16(e, 2);
    put16(e + 2, 0x101);
    put32(e + 4, 64);
    put64(e + 8, (cubin_size + 7) & ~7u);
    put32(e + 28, 90);
    put64(e + 40, compressed ? 0x8011 : 0x11);
    memcpy(e + 64, cubin, cubin_size);
  }
  put32(f + first, 0xBA55ED50u);
  put16(f + first + 4, 1);
  put16(f + first + 6, 16);
  put64(f + first + 8, elf_entry);
  *size = total;
  return f;
}

/* An x86-64 ELF whose .nv_fatbin section holds @p fatbin. */
unsigned char *host_elf(const unsigned char *fatbin, size_t fatbin_size,
                        size_t *size) {
  static const unsigned char code[16] = {0xc3};
  const test_section secs[] = {
      {".text", 1, 6, code, sizeof code, 0, 0, 16, 0},
      {".nv_fatbin", 1, 2, fatbin, fatbin_size, 0, 0, 8, 0},
  };
  return build_elf(62, 0, secs, 2, size);
}

const char *write_temp(const char *name, const void *data, size_t size) {
  const char *path = test_path(name);
  assert_int_equal(test_write_file(path, data, size), 0);
  return path;
}

/* A shell script at test_path(@p name) with @p body; returns its path. */
const char *write_script(const char *name, const char *body) {
  const char *path = test_path(name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\n%s", body);
  fclose(f);
  assert_int_equal(chmod(path, 0755), 0);
  return path;
}

/* A stand-in for nvdisasm that records its arguments and prints the
 * listing of the synthetic cubin's _Z4kernPf (documented layout). */
const char *fake_nvdisasm(const char *args_file, int fail) {
  char body[4096];
  if (fail)
    snprintf(body, sizeof body,
             "echo 'nvdisasm fatal   : Could not open input file' >&2\n"
             "exit 1\n");
  else
    snprintf(body, sizeof body,
             "echo \"$@\" > '%s'\n"
             "echo '//--------------------- .text._Z4kernPf -----------'\n"
             "echo '.text._Z4kernPf:'\n"
             "i=0\n"
             "while [ $i -lt 16 ]; do\n"
             "  [ $i -eq 4 ] && echo '  //## File \"/src/k.cu\", line 77'\n"
             "  printf '        /*%%04x*/                   IADD3 R%%d, R1, "
             "0x1, RZ ;\\n' $((i * 16)) $i\n"
             "  i=$((i + 1))\n"
             "done\n",
             args_file);
  return write_script(fail ? "nvdisasm-fails" : "nvdisasm-stand-in", body);
}
