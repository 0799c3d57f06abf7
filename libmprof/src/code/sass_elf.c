/*
 * mprof — cubin ELF files: functions, resources and DWARF line tables.
 *
 * Everything is read once in mprof_sass_cubin_open() from a private copy of
 * the image; libelf checks section bounds, and every record inside a section
 * (EIATTR attributes, the DWARF line program) is bounds-checked here, since
 * cubins come from traces and files a user hands us.
 *
 * Layout facts (verified on `nvcc -cubin -arch=sm_90 -lineinfo` output of
 * CUDA 13.0; see docs/SIDECAR.md):
 *   - e_machine is EM_CUDA (190); with EI_ABIVERSION >= 8 the SM version is
 *     bits 8..15 of e_flags (0x5a for sm_90), before that bits 0..7;
 *   - `.nv.info` holds EIATTR records: a format byte, an attribute byte and
 *     a 16-bit field that is the payload size for format 4 (EIFMT_SVAL) and
 *     the value itself otherwise. REGCOUNT (0x2f) and FRAME_SIZE (0x11) are
 *     SVAL records {u32 symbol index, u32 value};
 *   - sm_80 and older cubins also put the register count in the top byte of
 *     the `.text.<name>` section's sh_info;
 *   - a non-inlined __device__ function can live inside its caller's
 *     section as a local symbol ("$_Z5callkPf$_Z6helperf" at st_value 0xa0).
 *
 * SPDX-License-Identifier: MIT
 */
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/format.h"
#include "sass_internal.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif
#define STO_CUDA_ENTRY 0x10
#define EIFMT_SVAL 4
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_REGCOUNT 0x2f
/* The driver's reserve at the start of each kernel's shared window
 * (cudaDevAttrReservedSharedMemoryPerBlock, 1 KiB from sm_80 on). On sm_90
 * with CUDA 13, ptxas counts it in `.nv.shared.<name>`: `ptxas -v` said
 * "1024 bytes smem" for a 0x800-byte section, and a kernel with only
 * dynamic shared memory has a 0x400-byte one. */
#define RESERVED_SHARED 1024u
/* The extended line opcode nvcc (CUDA 11.2 on, -lineinfo) writes before
 * rows of inlined code: ULEB128 the row number of the call site in the
 * sequence's logical table (1-based; 0: not inlined), ULEB128 the offset
 * of the inlined function's mangled name in `.debug_str`. Rows are
 * numbered as emitted, from 1 in each sequence (one per kernel): an
 * atomicAdd inlined at row 3 of a kernel says 3 whatever the sequences
 * before it hold. The PTX `.loc` that ptxas reads names only the call
 * site's file and line (`inlined_at`), so the row it points to has the
 * right line, but where the same line is inlined many times (recursive
 * templates) that row's own callers may be another instance's. */
#define DW_LNE_NV_INLINED_CALL 0x90

typedef struct line_row {
  uint32_t address; /* inside the section */
  uint32_t line;
  const char *file;
  size_t order;     /* rows of one address keep their order */
  uint32_t logical; /* its logical row (1-based), 0 when none */
} line_row;

/* A row of the logical line table, in the order the line programs emit
 * them: where inlined code came from. `caller` is the logical row (1-based)
 * of its call site, 0 when the code is not inlined; `function` names the
 * inlined function (mangled; NULL when not inlined). */
typedef struct logical_row {
  const char *file;
  const char *function;
  uint32_t line;
  uint32_t caller;
} logical_row;

/* Frames of one instruction that are followed at most (a chain of call
 * sites; deeper inlining is cut there). */
#define MAX_FRAMES 64

typedef struct section_lines {
  line_row *rows;
  size_t count;
  size_t capacity;
} section_lines;

struct mprof_sass_cubin {
  char *origin;
  unsigned char *data;
  size_t size;
  uint64_t crc;
  uint32_t device;
  uint32_t arch;
  mprof_sass_function *fns;
  size_t fn_count;
  char **fn_section_names;   /* the section's name after ".text." */
  uint64_t *fn_code_offsets; /* where each function's code starts in data */
  mprof_sass_line **lines;   /* per function */
  size_t *line_counts;
  uint32_t **line_logical; /* per function, per line row: its logical row */
  logical_row *logical;    /* the logical line table, all sequences */
  size_t logical_count;
  size_t logical_capacity;
  mprof__map names;     /* function name -> index */
  mprof__arena strings; /* owned names: functions and files */
  const char **files;   /* the file names among them, for reuse */
  size_t file_count;
  size_t file_capacity;
  int has_debug_line;
  int trimmed; /* some function's code was left out (SHT_NOBITS .text) */
};

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_init(void) { elf_version(EV_CURRENT); }

void mprof__elf_init(void) { pthread_once(&elf_once, elf_init); }

/* ---- small helpers -------------------------------------------------------
 */

static int bad(const mprof_sass_cubin *c, const char *fmt, ...)
    MPROF__PRINTF(2, 3);

static int bad(const mprof_sass_cubin *c, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mprof__error_set(MPROF_EFORMAT, "%s: %s", c->origin, what);
}

/* A copy of the file name @p s (@p n bytes) owned by @p c, one per
 * distinct name; NULL when out of memory. */
static const char *keep_file(mprof_sass_cubin *c, const char *s, size_t n) {
  for (size_t i = 0; i < c->file_count; i++)
    if (strncmp(c->files[i], s, n) == 0 && c->files[i][n] == '\0')
      return c->files[i];
  char *copy = (char *)mprof__arena_alloc(&c->strings, n + 1); /* zeroed */
  if (!copy || MPROF__GROW(c->files, c->file_capacity, c->file_count + 1))
    return NULL;
  memcpy(copy, s, n);
  c->files[c->file_count++] = copy;
  return copy;
}

/* A section's bytes, or NULL (NOBITS, compressed, or out of bounds). */
static const unsigned char *section_bytes(Elf_Scn *scn, size_t *size) {
  *size = 0;
  GElf_Shdr sh;
  if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
      (sh.sh_flags & SHF_COMPRESSED))
    return NULL;
  Elf_Data *d = elf_rawdata(scn, NULL);
  if (!d || !d->d_buf)
    return NULL;
  *size = d->d_size;
  return (const unsigned char *)d->d_buf;
}

/* ---- DWARF line programs -------------------------------------------------
 */

typedef struct reader {
  const unsigned char *p;
  const unsigned char *end;
  int failed;
} reader;

static uint64_t rd_fixed(reader *r, size_t n) {
  if (r->failed || (size_t)(r->end - r->p) < n) {
    r->failed = 1;
    r->p = r->end;
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)r->p[i] << (8 * i);
  r->p += n;
  return v;
}

/* A LEB128 number of at most 10 bytes, sign-extended when @p sign. */
static uint64_t rd_leb(reader *r, int sign) {
  uint64_t v = 0;
  unsigned shift = 0;
  unsigned char b = 0;
  do {
    if (r->p >= r->end || shift >= 70) {
      r->failed = 1;
      return 0;
    }
    b = *r->p++;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (sign && shift < 64 && (b & 0x40))
    v |= ~(uint64_t)0 << shift;
  return v;
}

static uint64_t rd_uleb(reader *r) { return rd_leb(r, 0); }
static int64_t rd_sleb(reader *r) { return (int64_t)rd_leb(r, 1); }

static const char *rd_cstr(reader *r) {
  const unsigned char *s = r->p;
  while (r->p < r->end && *r->p)
    r->p++;
  if (r->p >= r->end) {
    r->failed = 1;
    return NULL;
  }
  r->p++;
  return (const char *)s;
}

/* A relocation that points a line program's DW_LNE_set_address at code. */
typedef struct line_reloc {
  uint64_t offset; /* in the line section */
  uint32_t section;
  int64_t addend;
} line_reloc;

static int compare_reloc(const void *a, const void *b) {
  const line_reloc *x = (const line_reloc *)a, *y = (const line_reloc *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The relocations applied to section @p target, sorted by offset. REL
 * entries keep their addend in place (@p in_place is set). */
static line_reloc *collect_relocs(Elf *elf, size_t target, size_t *count,
                                  int *in_place) {
  *count = 0;
  *in_place = 0;
  line_reloc *out = NULL;
  size_t capacity = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_info != target ||
        (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
      continue;
    Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
    Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !syms)
      continue;
    size_t entsize = gelf_fsize(
        elf, sh.sh_type == SHT_RELA ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
    size_t n = entsize ? d->d_size / entsize : 0;
    for (size_t i = 0; i < n; i++) {
      GElf_Rela rela;
      if (sh.sh_type == SHT_RELA) {
        if (!gelf_getrela(d, (int)i, &rela))
          continue;
      } else {
        GElf_Rel rel;
        if (!gelf_getrel(d, (int)i, &rel))
          continue;
        rela.r_offset = rel.r_offset;
        rela.r_info = rel.r_info;
        rela.r_addend = 0;
        *in_place = 1;
      }
      GElf_Sym sym;
      if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym) ||
          sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
        continue;
      if (MPROF__GROW(out, capacity, *count + 1)) {
        free(out);
        *count = 0;
        return NULL;
      }
      out[*count].offset = rela.r_offset;
      out[*count].section = sym.st_shndx;
      out[*count].addend = rela.r_addend + (int64_t)sym.st_value;
      (*count)++;
    }
  }
  if (out)
    qsort(out, *count, sizeof *out, compare_reloc);
  return out;
}

static const line_reloc *find_reloc(const line_reloc *r, size_t n,
                                    uint64_t offset) {
  size_t lo;
  MPROF__LOWER_BOUND(lo, n, mid, r[mid].offset < offset);
  return lo < n && r[lo].offset == offset ? &r[lo] : NULL;
}

static int add_row(section_lines *s, uint32_t address, uint32_t line,
                   const char *file, uint32_t logical) {
  if (MPROF__GROW(s->rows, s->capacity, s->count + 1))
    return -1;
  s->rows[s->count].address = address;
  s->rows[s->count].line = line;
  s->rows[s->count].file = file;
  s->rows[s->count].order = s->count;
  s->rows[s->count].logical = logical;
  s->count++;
  return 0;
}

/* Append a row to the logical table; returns its number (1-based), 0 when
 * out of memory. @p caller is a row number of the same sequence (@p
 * sequence_base rows came before the sequence), kept only when it names an
 * earlier row. */
static uint32_t add_logical(mprof_sass_cubin *c, size_t sequence_base,
                            const char *file, uint32_t line,
                            const char *function, uint64_t caller) {
  if (c->logical_count >= UINT32_MAX - 1 ||
      MPROF__GROW(c->logical, c->logical_capacity, c->logical_count + 1))
    return 0;
  logical_row *row = &c->logical[c->logical_count];
  uint64_t own = c->logical_count - sequence_base + 1;
  row->file = file;
  row->line = line;
  row->function = caller && caller < own ? function : NULL;
  row->caller = caller && caller < own ? (uint32_t)(sequence_base + caller) : 0;
  return (uint32_t)++c->logical_count;
}

/* The path of file @p index of a unit: DIR/NAME unless NAME is absolute. */
static const char *unit_file(mprof_sass_cubin *c, const char **dirs,
                             size_t dir_count, const char **names,
                             const uint64_t *name_dirs, size_t name_count,
                             uint64_t index) {
  if (index == 0 || index > name_count)
    return "";
  const char *name = names[index - 1];
  uint64_t d = name_dirs[index - 1];
  if (name[0] == '/' || d == 0 || d > dir_count)
    return keep_file(c, name, strlen(name));
  char buf[4096];
  int n = snprintf(buf, sizeof buf, "%s/%s", dirs[d - 1], name);
  if (n < 0 || (size_t)n >= sizeof buf)
    return keep_file(c, name, strlen(name));
  return keep_file(c, buf, (size_t)n);
}

#define MAX_UNIT_FILES 65536

/* Decode one line program unit at r->p; rows go to @p lines[section]. */
static int decode_unit(mprof_sass_cubin *c, reader *all,
                       const unsigned char *base, const line_reloc *relocs,
                       size_t reloc_count, int in_place, section_lines *lines,
                       size_t section_count, const char *debug_str,
                       size_t debug_str_size) {
  reader r = *all;
  uint64_t unit_length = rd_fixed(&r, 4);
  size_t offset_size = 4;
  if (unit_length == 0xffffffffu) {
    unit_length = rd_fixed(&r, 8);
    offset_size = 8;
  }
  if (r.failed || unit_length > (uint64_t)(r.end - r.p))
    return -1;
  const unsigned char *unit_end = r.p + unit_length;
  all->p = unit_end;
  r.end = unit_end;
  unsigned version = (unsigned)rd_fixed(&r, 2);
  if (version < 2 || version > 4)
    return -1; /* DWARF 5 line tables are not read (CUDA 13 writes 2) */
  uint64_t header_length = rd_fixed(&r, offset_size);
  if (r.failed || header_length > (uint64_t)(r.end - r.p))
    return -1;
  const unsigned char *program = r.p + header_length;
  unsigned min_insn = (unsigned)rd_fixed(&r, 1);
  if (version >= 4)
    rd_fixed(&r, 1); /* maximum_operations_per_instruction (VLIW only) */
  rd_fixed(&r, 1);   /* default_is_stmt */
  int line_base = (int)(int8_t)rd_fixed(&r, 1);
  unsigned line_range = (unsigned)rd_fixed(&r, 1);
  unsigned opcode_base = (unsigned)rd_fixed(&r, 1);
  if (r.failed || line_range == 0 || opcode_base == 0)
    return -1;
  unsigned char std_lengths[256];
  memset(std_lengths, 0, sizeof std_lengths);
  for (unsigned i = 1; i < opcode_base; i++)
    std_lengths[i] = (unsigned char)rd_fixed(&r, 1);
  const char *dirs[256];
  size_t dir_count = 0;
  for (;;) {
    const char *d = rd_cstr(&r);
    if (!d || !*d)
      break;
    if (dir_count < 256)
      dirs[dir_count++] = d;
  }
  const char **names = NULL;
  uint64_t *name_dirs = NULL;
  size_t name_count = 0, name_capacity = 0, dir_capacity = 0;
  int rc = 0;
  for (;;) {
    const char *n = rd_cstr(&r);
    if (!n || !*n)
      break;
    uint64_t dir = rd_uleb(&r);
    rd_uleb(&r);
    rd_uleb(&r);
    if (name_count == MAX_UNIT_FILES)
      continue;
    if (MPROF__GROW(names, name_capacity, name_count + 1) ||
        MPROF__GROW(name_dirs, dir_capacity, name_count + 1)) {
      rc = -2;
      goto done;
    }
    names[name_count] = n;
    name_dirs[name_count++] = dir;
  }
  if (r.failed || program < r.p || program > r.end) {
    rc = -1;
    goto done;
  }
  r.p = program;
  /* The state machine. `section` is where the current sequence's code
   * lives, from the relocation of its DW_LNE_set_address; SIZE_MAX when
   * unknown, and its rows are dropped. */
  size_t section = SIZE_MAX;
  uint64_t address = 0, file = 1;
  int64_t line = 1;
  const char *file_name = NULL;
  uint64_t file_name_of = UINT64_MAX;
  /* NVIDIA's inlining extension (docs/SIDECAR.md, "Inlined code"): the
   * call site's row and the inlined function's name. */
  uint64_t context = 0;
  const char *function = NULL;
  size_t sequence_base = c->logical_count; /* rows before this sequence */
  while (r.p < r.end && !r.failed) {
    unsigned op = *r.p++;
    int emit = 0;
    if (op >= opcode_base) {
      unsigned adj = op - opcode_base;
      address += (uint64_t)(adj / line_range) * min_insn;
      line += line_base + (int)(adj % line_range);
      emit = 1;
    } else if (op == 0) {
      uint64_t len = rd_uleb(&r);
      if (r.failed || len == 0 || len > (uint64_t)(r.end - r.p)) {
        r.failed = 1;
        break;
      }
      const unsigned char *next = r.p + len;
      unsigned sub = *r.p++;
      if (sub == 1) { /* end_sequence */
        uint32_t logical = add_logical(c, sequence_base, "", 0, NULL, 0);
        if (!logical || (section < section_count &&
                         add_row(&lines[section], (uint32_t)address, 0, "",
                                 logical) != 0)) {
          rc = -2;
          goto done;
        }
        sequence_base = c->logical_count;
        section = SIZE_MAX;
        address = 0;
        file = 1;
        line = 1;
        context = 0;
        function = NULL;
      } else if (sub == DW_LNE_NV_INLINED_CALL) {
        context = rd_uleb(&r);
        uint64_t name = rd_uleb(&r);
        function = NULL;
        if (context && debug_str && name < debug_str_size &&
            memchr(debug_str + name, '\0', debug_str_size - name)) {
          function = keep_file(c, debug_str + name, strlen(debug_str + name));
          if (!function) {
            rc = -2;
            goto done;
          }
        }
      } else if (sub == 2) { /* set_address */
        uint64_t at = (uint64_t)(r.p - base);
        size_t width = (size_t)(next - r.p);
        uint64_t stored = width <= 8 ? rd_fixed(&r, width) : 0;
        const line_reloc *rel = find_reloc(relocs, reloc_count, at);
        if (rel) {
          section = rel->section;
          address = (uint64_t)rel->addend + (in_place ? stored : 0);
        } else {
          section = SIZE_MAX;
        }
      }
      r.p = next;
    } else {
      switch (op) {
      case 1: emit = 1; break;                          /* copy */
      case 2: address += rd_uleb(&r) * min_insn; break; /* advance_pc */
      case 3: line += rd_sleb(&r); break;               /* advance_line */
      case 4: file = rd_uleb(&r); break;                /* set_file */
      case 8:                                           /* const_add_pc */
        address += (uint64_t)((255 - opcode_base) / line_range) * min_insn;
        break;
      case 9: address += rd_fixed(&r, 2); break; /* fixed_advance_pc */
      default:
        for (unsigned i = 0; i < std_lengths[op]; i++)
          rd_uleb(&r);
        break;
      }
    }
    if (emit && (section >= section_count || address > UINT32_MAX)) {
      /* Rows of unplaced code still count: call sites refer to them by
       * number. */
      if (!add_logical(c, sequence_base, "", 0, NULL, 0)) {
        rc = -2;
        goto done;
      }
    } else if (emit) {
      if (file != file_name_of) {
        file_name =
            unit_file(c, dirs, dir_count, names, name_dirs, name_count, file);
        file_name_of = file;
        if (!file_name) {
          rc = -2;
          goto done;
        }
      }
      uint32_t l = line > 0 && line <= (int64_t)UINT32_MAX ? (uint32_t)line : 0;
      uint32_t logical =
          add_logical(c, sequence_base, file_name, l, function, context);
      if (!logical ||
          add_row(&lines[section], (uint32_t)address, l, file_name, logical)) {
        rc = -2;
        goto done;
      }
    }
  }
  if (r.failed)
    rc = -1;
done:
  free((void *)names);
  free(name_dirs);
  return rc;
}

static int compare_row(const void *a, const void *b) {
  const line_row *x = (const line_row *)a, *y = (const line_row *)b;
  MPROF__ORDER_BY(address);
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Give each function the rows of its section inside its range. */
static int place_rows(mprof_sass_cubin *c, section_lines *lines,
                      size_t section_count) {
  for (size_t s = 0; s < section_count; s++)
    if (lines[s].count)
      qsort(lines[s].rows, lines[s].count, sizeof *lines[s].rows, compare_row);
  for (size_t i = 0; i < c->fn_count; i++) {
    mprof_sass_function *fn = &c->fns[i];
    if (fn->section_index >= section_count)
      continue;
    const section_lines *sl = &lines[fn->section_index];
    uint64_t lo = fn->section_offset, hi = lo + fn->size;
    mprof_sass_line *out =
        (mprof_sass_line *)calloc(sl->count + 1, sizeof *out);
    uint32_t *logical = (uint32_t *)calloc(sl->count + 1, sizeof *logical);
    if (!out || !logical) {
      free(out);
      free(logical);
      return -1;
    }
    size_t n = 0;
    for (size_t k = 0; k < sl->count; k++) {
      const line_row *row = &sl->rows[k];
      if (row->address >= hi)
        break;
      uint32_t at = row->address <= lo ? 0 : (uint32_t)(row->address - lo);
      if (n && out[n - 1].offset == at) {
        out[n - 1].line = row->line; /* the last row of an address wins */
        out[n - 1].file = row->file;
        logical[n - 1] = row->logical;
        continue;
      }
      out[n].offset = at;
      out[n].line = row->line;
      out[n].file = row->file;
      logical[n] = row->logical;
      n++;
    }
    int any = 0;
    for (size_t k = 0; k < n; k++)
      any |= out[k].line != 0;
    if (!any) {
      free(out);
      free(logical);
      continue;
    }
    c->lines[i] = out;
    c->line_logical[i] = logical;
    c->line_counts[i] = n;
    fn->flags |= MPROF_SASS_FUNCTION_LINES;
  }
  return 0;
}

static int read_lines(mprof_sass_cubin *c, Elf *elf, size_t section_count,
                      size_t debug_line, size_t line_sass, size_t debug_str) {
  /* .nv_debug_line_sass: only note which functions it covers. */
  if (line_sass) {
    size_t n;
    int in_place;
    line_reloc *rel = collect_relocs(elf, line_sass, &n, &in_place);
    for (size_t i = 0; i < n; i++)
      for (size_t f = 0; f < c->fn_count; f++)
        if (c->fns[f].section_index == rel[i].section)
          c->fns[f].flags |= MPROF_SASS_FUNCTION_PTX_LINES;
    free(rel);
  }
  if (!debug_line)
    return 0;
  c->has_debug_line = 1;
  size_t size;
  const unsigned char *data = section_bytes(elf_getscn(elf, debug_line), &size);
  if (!data || !size)
    return 0;
  size_t reloc_count;
  int in_place;
  line_reloc *relocs = collect_relocs(elf, debug_line, &reloc_count, &in_place);
  section_lines *lines = (section_lines *)calloc(section_count, sizeof *lines);
  if (!lines) {
    free(relocs);
    return -2;
  }
  size_t str_size = 0;
  const char *str =
      debug_str
          ? (const char *)section_bytes(elf_getscn(elf, debug_str), &str_size)
          : NULL;
  reader all = {data, data + size, 0};
  int rc = 0;
  while (all.p < all.end) {
    rc = decode_unit(c, &all, data, relocs, reloc_count, in_place, lines,
                     section_count, str, str_size);
    if (rc)
      break;
  }
  /* A damaged line program costs the lines, not the cubin: keep the rows
   * read before the damage. */
  int placed = rc == -2 ? -2 : place_rows(c, lines, section_count);
  for (size_t s = 0; s < section_count; s++)
    free(lines[s].rows);
  free(lines);
  free(relocs);
  return placed == 0 ? 0 : -2;
}

/* ---- .nv.info ------------------------------------------------------------
 */

static mprof_sass_function *by_symbol(mprof_sass_cubin *c, uint32_t sym) {
  for (size_t i = 0; i < c->fn_count; i++)
    if (c->fns[i].symbol_index == sym)
      return &c->fns[i];
  return NULL;
}

static void read_nv_info(mprof_sass_cubin *c, const unsigned char *p,
                         size_t size) {
  size_t at = 0;
  while (size - at >= 4) {
    unsigned fmt = p[at], attr = p[at + 1];
    unsigned field = (unsigned)p[at + 2] | (unsigned)p[at + 3] << 8;
    at += 4;
    if (fmt != EIFMT_SVAL)
      continue; /* the 16-bit field was the value */
    if (field > size - at)
      break; /* truncated record: stop, keep what was read */
    if (field >= 8 && (attr == EIATTR_REGCOUNT || attr == EIATTR_FRAME_SIZE)) {
      mprof_sass_function *fn = by_symbol(c, mprof__rd32(p + at));
      uint32_t v = mprof__rd32(p + at + 4);
      if (fn && attr == EIATTR_REGCOUNT)
        fn->registers = v;
      else if (fn)
        fn->local_per_thread = v;
    }
    at += field;
  }
}

/* ---- functions -----------------------------------------------------------
 */

static uint64_t name_hash(const char *s) { return mprof__hash64(s, strlen(s)); }

static int build_name_index(mprof_sass_cubin *c) {
  if (mprof__map_reserve(&c->names, c->fn_count))
    return -1;
  for (size_t i = 0; i < c->fn_count; i++)
    if (mprof__map_add(&c->names, name_hash(c->fns[i].name), (uint32_t)i))
      return -1;
  return 0;
}

static int read_functions(mprof_sass_cubin *c, Elf *elf, size_t shstrndx,
                          size_t section_count) {
  Elf_Scn *symscn = NULL, *scn = NULL;
  GElf_Shdr symsh;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
      symscn = scn;
      symsh = sh;
      break;
    }
  }
  if (!symscn)
    return 0; /* a cubin without symbols has no functions to offer */
  Elf_Data *syms = elf_getdata(symscn, NULL);
  size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  size_t n = syms && entsize ? syms->d_size / entsize : 0;
  c->fns = (mprof_sass_function *)calloc(n ? n : 1, sizeof *c->fns);
  c->fn_section_names = (char **)calloc(n ? n : 1, sizeof(char *));
  c->fn_code_offsets = (uint64_t *)calloc(n ? n : 1, sizeof(uint64_t));
  if (!c->fns || !c->fn_section_names || !c->fn_code_offsets)
    return -2;
  for (size_t i = 1; i < n; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(syms, (int)i, &sym) ||
        GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
        sym.st_shndx >= section_count)
      continue;
    Elf_Scn *text = elf_getscn(elf, sym.st_shndx);
    GElf_Shdr tsh;
    if (!text || !gelf_getshdr(text, &tsh))
      continue;
    /* A trimmed cubin (MPROF_CUBIN_TRIMMED) left this code out. */
    if (tsh.sh_type == SHT_NOBITS) {
      c->trimmed = 1;
      continue;
    }
    if (tsh.sh_offset > c->size || tsh.sh_size > c->size - tsh.sh_offset)
      continue;
    const char *sname = elf_strptr(elf, shstrndx, tsh.sh_name);
    const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
    if (!sname || strncmp(sname, ".text.", 6) != 0 || !name || !*name ||
        sym.st_value >= tsh.sh_size || tsh.sh_size > UINT32_MAX)
      continue;
    uint64_t size = sym.st_size ? sym.st_size : tsh.sh_size - sym.st_value;
    if (size > tsh.sh_size - sym.st_value)
      size = tsh.sh_size - sym.st_value;
    mprof_sass_function *fn = &c->fns[c->fn_count];
    fn->name = mprof__arena_strdup(&c->strings, name);
    c->fn_section_names[c->fn_count] =
        mprof__arena_strdup(&c->strings, sname + 6);
    if (!fn->name || !c->fn_section_names[c->fn_count])
      return -2;
    c->fn_code_offsets[c->fn_count] = tsh.sh_offset + sym.st_value;
    fn->symbol_index = (uint32_t)i;
    fn->section_index = (uint32_t)sym.st_shndx;
    fn->section_offset = (uint32_t)sym.st_value;
    fn->size = (uint32_t)size;
    fn->registers = (uint32_t)(tsh.sh_info >> 24);
    if (sym.st_other & STO_CUDA_ENTRY)
      fn->flags |= MPROF_SASS_FUNCTION_ENTRY;
    c->fn_count++;
  }
  return 0;
}

static void read_shared(mprof_sass_cubin *c, Elf *elf, size_t shstrndx) {
  int reserved = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    const char *name =
        gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
    if (name && strncmp(name, ".nv.shared.reserved.", 20) == 0)
      reserved = 1;
  }
  scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    const char *name =
        gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
    if (!name || strncmp(name, ".nv.shared.", 11) != 0 ||
        strncmp(name, ".nv.shared.reserved.", 20) == 0)
      continue;
    const mprof_sass_function *fn = mprof_sass_cubin_find(c, name + 11);
    if (!fn || sh.sh_size > UINT32_MAX)
      continue;
    uint32_t size = (uint32_t)sh.sh_size;
    if (reserved)
      size = size >= RESERVED_SHARED ? size - RESERVED_SHARED : 0;
    ((mprof_sass_function *)fn)->static_shared = size;
  }
}

static int parse(mprof_sass_cubin *c) {
  mprof__elf_init();
  Elf *elf = elf_memory((char *)c->data, c->size);
  if (!elf)
    return bad(c, "not an ELF image (%s)", elf_errmsg(-1));
  int rc = 0;
  GElf_Ehdr eh;
  size_t shstrndx = 0, section_count = 0;
  if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
    rc = bad(c, "not an ELF image");
    goto out;
  }
  if (eh.e_machine != EM_CUDA) {
    rc = bad(c, "an ELF file for machine %u, not a CUDA cubin (machine 190)",
             (unsigned)eh.e_machine);
    goto out;
  }
  if (elf_getshdrstrndx(elf, &shstrndx) != 0 ||
      elf_getshdrnum(elf, &section_count) != 0) {
    rc = bad(c, "damaged section headers (%s)", elf_errmsg(-1));
    goto out;
  }
  c->arch = eh.e_ident[EI_ABIVERSION] >= 8 ? (uint32_t)(eh.e_flags >> 8) & 0xff
                                           : (uint32_t)eh.e_flags & 0xff;
  /* The line tables: one per function (+1: never calloc(0)). */
  if (read_functions(c, elf, shstrndx, section_count) != 0 ||
      build_name_index(c) != 0 ||
      !(c->lines =
            (mprof_sass_line **)calloc(c->fn_count + 1, sizeof *c->lines)) ||
      !(c->line_counts =
            (size_t *)calloc(c->fn_count + 1, sizeof *c->line_counts)) ||
      !(c->line_logical =
            (uint32_t **)calloc(c->fn_count + 1, sizeof *c->line_logical))) {
    rc = mprof__error_set(MPROF_ENOMEM, "%s: out of memory", c->origin);
    goto out;
  }
  size_t debug_line = 0, line_sass = 0, debug_str = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name)
      continue;
    if (strcmp(name, ".nv.info") == 0) {
      size_t size;
      const unsigned char *p = section_bytes(scn, &size);
      if (p)
        read_nv_info(c, p, size);
    } else if (strcmp(name, ".debug_line") == 0) {
      debug_line = elf_ndxscn(scn);
    } else if (strcmp(name, ".nv_debug_line_sass") == 0) {
      line_sass = elf_ndxscn(scn);
    } else if (strcmp(name, ".debug_str") == 0) {
      debug_str = elf_ndxscn(scn);
    }
  }
  read_shared(c, elf, shstrndx);
  if (read_lines(c, elf, section_count, debug_line, line_sass, debug_str) == -2)
    rc = mprof__error_set(MPROF_ENOMEM, "%s: out of memory", c->origin);
out:
  elf_end(elf);
  return rc;
}

int mprof__sass_cubin_open(mprof_sass_cubin **out, const void *data,
                           size_t size, const char *origin, uint64_t crc,
                           uint32_t device) {
  if (!out || (!data && size))
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sass_cubin_open: NULL argument");
  *out = NULL;
  mprof_sass_cubin *c = (mprof_sass_cubin *)calloc(1, sizeof *c);
  if (!c)
    return mprof__error_set(MPROF_ENOMEM, "cubin: out of memory");
  c->origin = strdup(origin ? origin : "cubin");
  c->data = (unsigned char *)malloc(size ? size : 1);
  if (!c->origin || !c->data) {
    mprof_sass_cubin_free(c);
    return mprof__error_set(MPROF_ENOMEM, "cubin: out of memory");
  }
  if (size)
    memcpy(c->data, data, size);
  c->size = size;
  c->crc = crc;
  c->device = device;
  int rc = size < 64 ? bad(c, "%zu bytes is too short for an ELF cubin", size)
                     : parse(c);
  if (rc) {
    mprof_sass_cubin_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int mprof_sass_cubin_open(mprof_sass_cubin **out, const void *data, size_t size,
                          const char *origin) {
  return mprof__sass_cubin_open(out, data, size, origin, 0, MPROF_INDEX_NONE);
}

void mprof_sass_cubin_free(mprof_sass_cubin *cubin) {
  if (!cubin)
    return;
  for (size_t i = 0; cubin->lines && i < cubin->fn_count; i++)
    free(cubin->lines[i]);
  for (size_t i = 0; cubin->line_logical && i < cubin->fn_count; i++)
    free(cubin->line_logical[i]);
  free(cubin->line_logical);
  free(cubin->logical);
  free(cubin->lines);
  free(cubin->line_counts);
  mprof__arena_free(&cubin->strings);
  free((void *)cubin->files);
  free(cubin->fns);
  free(cubin->fn_section_names);
  free(cubin->fn_code_offsets);
  mprof__map_free(&cubin->names);
  free(cubin->data);
  free(cubin->origin);
  free(cubin);
}

uint32_t mprof_sass_cubin_arch(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->arch : 0;
}

uint64_t mprof_sass_cubin_crc(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->crc : 0;
}

uint32_t mprof__sass_cubin_device(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->device : MPROF_INDEX_NONE;
}

int mprof__sass_cubin_has_debug_line(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->has_debug_line : 0;
}

const char *mprof_sass_cubin_origin(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->origin : "";
}

const void *mprof_sass_cubin_data(const mprof_sass_cubin *cubin, size_t *size) {
  if (size)
    *size = cubin ? cubin->size : 0;
  return cubin ? cubin->data : NULL;
}

size_t mprof_sass_cubin_function_count(const mprof_sass_cubin *cubin) {
  return cubin ? cubin->fn_count : 0;
}

const mprof_sass_function *
mprof_sass_cubin_function_at(const mprof_sass_cubin *cubin, size_t index) {
  if (!cubin || index >= cubin->fn_count)
    return NULL;
  return &cubin->fns[index];
}

const mprof_sass_function *mprof_sass_cubin_find(const mprof_sass_cubin *cubin,
                                                 const char *name) {
  if (!cubin || !name)
    return NULL;
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&cubin->names, name_hash(name), &cursor)) !=
         MPROF__MAP_NONE)
    if (strcmp(cubin->fns[i].name, name) == 0)
      return &cubin->fns[i];
  return NULL;
}

/* Index of @p fn in @p cubin, or SIZE_MAX when it is not one of its own. */
static size_t fn_index(const mprof_sass_cubin *cubin,
                       const mprof_sass_function *fn) {
  if (!cubin || !fn || fn < cubin->fns || fn >= cubin->fns + cubin->fn_count)
    return SIZE_MAX;
  return (size_t)(fn - cubin->fns);
}

const char *mprof__sass_cubin_section_name(const mprof_sass_cubin *cubin,
                                           const mprof_sass_function *fn) {
  size_t i = fn_index(cubin, fn);
  return i == SIZE_MAX ? "" : cubin->fn_section_names[i];
}

int mprof__sass_cubin_trimmed(const mprof_sass_cubin *cubin) {
  return cubin->trimmed;
}

const void *mprof__sass_cubin_code(const mprof_sass_cubin *cubin,
                                   const mprof_sass_function *fn) {
  size_t i = fn_index(cubin, fn);
  return i == SIZE_MAX ? NULL : cubin->data + cubin->fn_code_offsets[i];
}

const mprof_sass_line *mprof_sass_cubin_lines(const mprof_sass_cubin *cubin,
                                              const mprof_sass_function *fn,
                                              size_t *count) {
  size_t i = fn_index(cubin, fn);
  if (count)
    *count = i == SIZE_MAX ? 0 : cubin->line_counts[i];
  return i == SIZE_MAX ? NULL : cubin->lines[i];
}

uint32_t mprof_sass_cubin_line(const mprof_sass_cubin *cubin,
                               const mprof_sass_function *fn, uint32_t offset,
                               const char **file) {
  if (file)
    *file = "";
  size_t n;
  const mprof_sass_line *rows = mprof_sass_cubin_lines(cubin, fn, &n);
  if (!rows || offset >= fn->size)
    return 0;
  /* The first row past the offset. */
  size_t lo;
  MPROF__LOWER_BOUND(lo, n, mid, rows[mid].offset <= offset);
  if (lo == 0 || rows[lo - 1].line == 0)
    return 0;
  if (file)
    *file = rows[lo - 1].file;
  return rows[lo - 1].line;
}

size_t mprof_sass_cubin_frames(const mprof_sass_cubin *cubin,
                               const mprof_sass_function *fn, uint32_t offset,
                               mprof_sass_frame *frames, size_t capacity) {
  size_t i = fn_index(cubin, fn);
  if (i == SIZE_MAX || !cubin->lines[i] || offset >= fn->size)
    return 0;
  const mprof_sass_line *rows = cubin->lines[i];
  size_t n = cubin->line_counts[i], lo;
  MPROF__LOWER_BOUND(lo, n, mid, rows[mid].offset <= offset);
  if (lo == 0 || rows[lo - 1].line == 0)
    return 0;
  uint32_t at = cubin->line_logical[i][lo - 1];
  size_t depth = 0;
  /* Callers are always earlier rows, so the walk ends; MAX_FRAMES bounds
   * its length all the same. */
  while (at && at <= cubin->logical_count && depth < MAX_FRAMES) {
    const logical_row *row = &cubin->logical[at - 1];
    if (row->line == 0)
      break;
    if (depth < capacity) {
      frames[depth].file = row->file;
      frames[depth].line = row->line;
      frames[depth].function = row->function ? row->function : fn->name;
      frames[depth].inlined = row->function != NULL;
    }
    depth++;
    at = row->caller;
  }
  return depth;
}

uint32_t mprof_sass_cubin_instruction_size(const mprof_sass_cubin *cubin) {
  return cubin && cubin->arch && cubin->arch < 70 ? 8 : 16;
}
