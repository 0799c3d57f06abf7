/*
 * mprof — the function symbols of a cubin, and a copy of it cut down to the
 * code of some of them: libc only, in the writer half, so the CUPTI
 * producer (at the end of a capture) and `mprof record`'s rewrite of a
 * trace cut short (mprof_trace_rewrite(), MPROF_REWRITE_TRIM_CODE) keep the
 * same code the same way.
 *
 * SPDX-License-Identifier: MIT
 */
#include "format/cubin_trim.h"

#include "base/array.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Read a struct at @p offset only if it lies wholly inside the image; memcpy
 * because CUPTI's copy of the cubin carries no alignment promise. */
static int read_at(const unsigned char *image, size_t size, uint64_t offset,
                   void *out, size_t len) {
  if (offset > size || len > size - offset)
    return -1;
  memcpy(out, image + offset, len);
  return 0;
}

int mprof__cubin_functions(const void *image_ptr, size_t size,
                           mprof__cubin_function_fn fn, void *userdata) {
  const unsigned char *image = (const unsigned char *)image_ptr;
  Elf64_Ehdr eh;
  if (!image || read_at(image, size, 0, &eh, sizeof eh) != 0)
    return -1;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return -1;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
    return -1;

  int reported = 0;
  for (uint32_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    if (read_at(image, size, eh.e_shoff + (uint64_t)i * sizeof sh, &sh,
                sizeof sh) != 0)
      return -1;
    if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym))
      continue;
    Elf64_Shdr strtab;
    if (sh.sh_link >= eh.e_shnum ||
        read_at(image, size, eh.e_shoff + (uint64_t)sh.sh_link * sizeof strtab,
                &strtab, sizeof strtab) != 0)
      return -1;
    if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset)
      return -1;
    const char *names = (const char *)image + strtab.sh_offset;
    uint64_t count = sh.sh_size / sizeof(Elf64_Sym);
    for (uint64_t s = 0; s < count && s <= UINT32_MAX; s++) {
      Elf64_Sym sym;
      if (read_at(image, size, sh.sh_offset + s * sizeof sym, &sym,
                  sizeof sym) != 0)
        return -1;
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
          sym.st_name >= strtab.sh_size)
        continue;
      const char *name = names + sym.st_name;
      /* The name must end inside the string table. */
      if (!memchr(name, '\0', strtab.sh_size - sym.st_name) || !*name)
        continue;
      fn(userdata, name, (uint32_t)s);
      reported++;
    }
  }
  return reported;
}

/* ---- trimming ------------------------------------------------------------
 */

/* FNV-1a of @p len bytes, for the set of left-out function names. */
static uint64_t name_hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

typedef struct name_set {
  const char **names; /* NUL-terminated; NULL = empty slot */
  size_t capacity;    /* power of two */
} name_set;

static int name_set_init(name_set *s, size_t count) {
  s->capacity = 16;
  while (s->capacity < count * 2 + 1)
    s->capacity *= 2;
  s->names = (const char **)calloc(s->capacity, sizeof *s->names);
  return s->names ? 0 : -1;
}

static void name_set_add(name_set *s, const char *name) {
  size_t j = (size_t)name_hash(name, strlen(name)) & (s->capacity - 1);
  while (s->names[j]) {
    if (strcmp(s->names[j], name) == 0)
      return;
    j = (j + 1) & (s->capacity - 1);
  }
  s->names[j] = name;
}

static int name_set_has(const name_set *s, const char *name) {
  size_t j = (size_t)name_hash(name, strlen(name)) & (s->capacity - 1);
  while (s->names[j]) {
    if (strcmp(s->names[j], name) == 0)
      return 1;
    j = (j + 1) & (s->capacity - 1);
  }
  return 0;
}

/* The NAME of ".nv.WORD.NAME" (a function's companion section), or NULL. */
static const char *companion_of(const char *section) {
  if (strncmp(section, ".nv.", 4) != 0)
    return NULL;
  const char *dot = strchr(section + 4, '.');
  return dot && dot[1] ? dot + 1 : NULL;
}

/* A string table rebuilt with only the names still in use. */
typedef struct strtab {
  char *data;
  size_t size, capacity;
  const char **keys; /* open addressing: name -> offsets[j] */
  uint32_t *offsets;
  size_t slots; /* power of two */
  size_t count;
} strtab;

static int strtab_init(strtab *t, size_t expected) {
  memset(t, 0, sizeof *t);
  t->slots = 64;
  while (t->slots < expected * 2 + 1)
    t->slots *= 2;
  t->keys = (const char **)calloc(t->slots, sizeof *t->keys);
  t->offsets = (uint32_t *)calloc(t->slots, sizeof *t->offsets);
  t->capacity = 4096;
  t->data = (char *)malloc(t->capacity);
  if (!t->keys || !t->offsets || !t->data)
    return -1;
  t->data[0] = '\0';
  t->size = 1;
  return 0;
}

static void strtab_free(strtab *t) {
  free(t->data);
  free(t->keys);
  free(t->offsets);
}

/* The offset of @p name in @p t, added if new; UINT32_MAX without memory.
 * @p name must outlive @p t (it points into the image). */
static uint32_t strtab_add(strtab *t, const char *name) {
  if (!*name)
    return 0;
  if ((t->count + 1) * 2 > t->slots)
    return UINT32_MAX; /* sized by the caller: never happens */
  size_t len = strlen(name);
  size_t j = (size_t)name_hash(name, len) & (t->slots - 1);
  while (t->keys[j]) {
    if (strcmp(t->keys[j], name) == 0)
      return t->offsets[j];
    j = (j + 1) & (t->slots - 1);
  }
  if (t->size + len + 1 > t->capacity || t->size + len + 1 > UINT32_MAX) {
    size_t capacity = (t->size + len + 1) * 2;
    char *grown =
        capacity <= UINT32_MAX ? (char *)realloc(t->data, capacity) : NULL;
    if (!grown)
      return UINT32_MAX;
    t->data = grown;
    t->capacity = capacity;
  }
  uint32_t at = (uint32_t)t->size;
  memcpy(t->data + at, name, len + 1);
  t->size += len + 1;
  t->keys[j] = name;
  t->offsets[j] = at;
  t->count++;
  return at;
}

int mprof__cubin_trim(const void *image_ptr, size_t size, const uint32_t *keep,
                      size_t count, void **out, size_t *out_size) {
  const unsigned char *image = (const unsigned char *)image_ptr;
  *out = NULL;
  *out_size = 0;
  Elf64_Ehdr eh;
  if (!image || read_at(image, size, 0, &eh, sizeof eh) != 0 ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum)
    return -1;
  size_t shnum = eh.e_shnum;
  if (eh.e_shoff > size || shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr))
    return -1;
  Elf64_Shdr *sh = (Elf64_Shdr *)malloc(shnum * sizeof *sh);
  unsigned char *keep_section = (unsigned char *)calloc(shnum, 1);
  unsigned char *drop = (unsigned char *)calloc(shnum, 1);
  /* Rewritten contents (symbol and string tables), NULL = the image's. */
  unsigned char **content =
      (unsigned char **)calloc(shnum, sizeof(unsigned char *));
  uint32_t *new_name = (uint32_t *)calloc(shnum, sizeof(uint32_t));
  name_set dropped = {NULL, 0};
  int rc = -2;
  if (!sh || !keep_section || !drop || !content || !new_name ||
      name_set_init(&dropped, shnum) != 0)
    goto out;
  rc = -1;
  memcpy(sh, image + eh.e_shoff, shnum * sizeof *sh);
  for (size_t i = 0; i < shnum; i++)
    if (sh[i].sh_type != SHT_NOBITS &&
        (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset))
      goto out;
  const Elf64_Shdr *names_sh = &sh[eh.e_shstrndx];
  const char *names = (const char *)image + names_sh->sh_offset;
  size_t names_size = names_sh->sh_size;
  if (names_sh->sh_type == SHT_NOBITS || names_size == 0 ||
      names[names_size - 1] != '\0')
    goto out;
  /* The sections of the kept symbols. */
  for (size_t i = 0; i < shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_entsize != sizeof(Elf64_Sym))
      continue;
    uint64_t syms = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < count; k++) {
      Elf64_Sym sym;
      if (keep[k] == 0 || keep[k] >= syms ||
          read_at(image, size, sh[i].sh_offset + keep[k] * sizeof sym, &sym,
                  sizeof sym) != 0)
        continue;
      if (sym.st_shndx > 0 && sym.st_shndx < shnum)
        keep_section[sym.st_shndx] = 1;
    }
  }
  /* Code sections of functions nobody asked for, then their companions. */
  for (size_t i = 1; i < shnum; i++) {
    if (sh[i].sh_name >= names_size)
      goto out;
    const char *name = names + sh[i].sh_name;
    if (strncmp(name, ".text.", 6) == 0 && !keep_section[i] && name[6]) {
      drop[i] = 1;
      name_set_add(&dropped, name + 6);
    }
  }
  for (size_t i = 1; i < shnum; i++) {
    const char *fn = companion_of(names + sh[i].sh_name);
    if (fn && name_set_has(&dropped, fn))
      drop[i] = 1;
  }
  /* Sections tied to a left-out one: its relocations, and whatever names
   * it through SHF_INFO_LINK (nvcc marks .nv.info.F and .nv.constant0.F). */
  for (size_t i = 1; i < shnum; i++)
    if ((sh[i].sh_type == SHT_REL || sh[i].sh_type == SHT_RELA ||
         (sh[i].sh_flags & SHF_INFO_LINK)) &&
        sh[i].sh_info > 0 && sh[i].sh_info < shnum && drop[sh[i].sh_info])
      drop[i] = 1;
  /* Never the tables every index points into. */
  size_t dropped_count = 0;
  for (size_t i = 1; i < shnum; i++) {
    if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_STRTAB ||
        i == eh.e_shstrndx)
      drop[i] = 0;
    dropped_count += drop[i] && sh[i].sh_type != SHT_NOBITS;
  }
  if (!dropped_count) {
    rc = 1;
    goto out;
  }
  /* What nothing downstream reads goes too: the PTX text that -lineinfo
   * embeds and its line table (nvdisasm -gp only), and unwind tables. */
  for (size_t i = 1; i < shnum; i++) {
    const char *name = names + sh[i].sh_name;
    if (strcmp(name, ".nv_debug_ptx_txt") == 0 ||
        strcmp(name, ".nv_debug_line_sass") == 0 ||
        strcmp(name, ".debug_frame") == 0)
      drop[i] = 1;
  }
  for (size_t i = 1; i < shnum; i++)
    if ((sh[i].sh_type == SHT_REL || sh[i].sh_type == SHT_RELA) &&
        sh[i].sh_info > 0 && sh[i].sh_info < shnum && drop[sh[i].sh_info])
      drop[i] = 1;

  /* The names of what was left out go too: dropped sections get the empty
   * name, symbols defined in them too, and every string table is rebuilt
   * from the names still in use (offsets change, indices do not). */
  for (size_t i = 1; i < shnum; i++) {
    if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_entsize == sizeof(Elf64_Sym) &&
        sh[i].sh_link < shnum) {
      Elf64_Sym *syms = (Elf64_Sym *)malloc(sh[i].sh_size ? sh[i].sh_size : 1);
      if (!syms) {
        rc = -2;
        goto out;
      }
      memcpy(syms, image + sh[i].sh_offset, sh[i].sh_size);
      content[i] = (unsigned char *)syms;
    }
  }
  for (size_t s = 1; s < shnum; s++) {
    if (sh[s].sh_type != SHT_STRTAB)
      continue;
    const char *old = (const char *)image + sh[s].sh_offset;
    uint64_t old_size = sh[s].sh_size;
    if (!old_size || old[old_size - 1] != '\0')
      continue; /* not a table we can rebuild: keep it */
    size_t expected = s == eh.e_shstrndx ? shnum : 0;
    for (size_t i = 1; i < shnum; i++)
      if (content[i] && sh[i].sh_link == s)
        expected += sh[i].sh_size / sizeof(Elf64_Sym);
    strtab table;
    if (strtab_init(&table, expected) != 0) {
      strtab_free(&table);
      rc = -2;
      goto out;
    }
    int failed = 0;
    if (s == eh.e_shstrndx) {
      for (size_t i = 1; i < shnum; i++) {
        uint32_t at = drop[i] || sh[i].sh_name >= old_size
                          ? 0
                          : strtab_add(&table, old + sh[i].sh_name);
        failed |= at == UINT32_MAX;
        new_name[i] = at;
      }
    }
    for (size_t i = 1; i < shnum && !failed; i++) {
      if (!content[i] || sh[i].sh_link != s)
        continue;
      Elf64_Sym *syms = (Elf64_Sym *)content[i];
      for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
        int gone = syms[k].st_shndx > 0 && syms[k].st_shndx < shnum &&
                   drop[syms[k].st_shndx];
        uint32_t at = gone || syms[k].st_name >= old_size
                          ? 0
                          : strtab_add(&table, old + syms[k].st_name);
        failed |= at == UINT32_MAX;
        syms[k].st_name = at;
      }
    }
    if (failed) {
      strtab_free(&table);
      rc = -2;
      goto out;
    }
    content[s] = (unsigned char *)table.data;
    table.data = NULL;
    sh[s].sh_size = table.size;
    strtab_free(&table);
  }
  if (eh.e_shstrndx > 0 && content[eh.e_shstrndx])
    for (size_t i = 1; i < shnum; i++)
      sh[i].sh_name = new_name[i];

  /* Layout: header, kept sections in file order, section headers. */
  uint64_t total = sizeof eh;
  for (size_t i = 1; i < shnum; i++) {
    if (drop[i] || sh[i].sh_type == SHT_NOBITS)
      continue;
    uint64_t align = sh[i].sh_addralign > 1 && sh[i].sh_addralign <= 4096
                         ? sh[i].sh_addralign
                         : 1;
    total = (total + align - 1) / align * align + sh[i].sh_size;
  }
  total = (total + 7) / 8 * 8 + shnum * sizeof(Elf64_Shdr);
  if (total > SIZE_MAX) {
    rc = -2;
    goto out;
  }
  unsigned char *buffer = (unsigned char *)calloc(1, (size_t)total);
  if (!buffer) {
    rc = -2;
    goto out;
  }
  uint64_t at = sizeof eh;
  /* Same order as the layout above, so the padding matches. */
  for (size_t i = 1; i < shnum; i++) {
    if (drop[i]) {
      sh[i].sh_type = SHT_NOBITS;
      sh[i].sh_offset = 0;
      continue;
    }
    if (sh[i].sh_type == SHT_NOBITS)
      continue;
    uint64_t align = sh[i].sh_addralign > 1 && sh[i].sh_addralign <= 4096
                         ? sh[i].sh_addralign
                         : 1;
    at = (at + align - 1) / align * align;
    memcpy(buffer + at, content[i] ? content[i] : image + sh[i].sh_offset,
           (size_t)sh[i].sh_size);
    sh[i].sh_offset = at;
    at += sh[i].sh_size;
  }
  at = (at + 7) / 8 * 8;
  eh.e_shoff = at;
  eh.e_phoff = 0;
  eh.e_phnum = 0;
  memcpy(buffer, &eh, sizeof eh);
  memcpy(buffer + at, sh, shnum * sizeof *sh);
  *out = buffer;
  *out_size = (size_t)total;
  rc = 0;
out:
  for (size_t i = 0; content && i < shnum; i++)
    free(content[i]);
  free(content);
  free(new_name);
  free(sh);
  free(keep_section);
  free(drop);
  free(dropped.names);
  return rc;
}

/* The symbols a trimmed copy keeps, and who says which ran. */
typedef struct keep_list {
  uint32_t *symbols;
  size_t count, capacity;
  mprof__cubin_ran_fn ran;
  void *userdata;
  int failed;
} keep_list;

static void keep_symbol(keep_list *k, uint32_t symbol) {
  if (MPROF__GROW(k->symbols, k->capacity, k->count + 1) != 0) {
    k->failed = 1;
    return;
  }
  k->symbols[k->count++] = symbol;
}

static void keep_if_ran(void *userdata, const char *name, uint32_t symbol) {
  keep_list *k = (keep_list *)userdata;
  if (k->ran(k->userdata, name))
    keep_symbol(k, symbol);
}

int mprof__cubin_trim_to_used(const void *image, size_t size,
                              const uint32_t *used, size_t count,
                              mprof__cubin_ran_fn ran, void *userdata,
                              void **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  keep_list k = {NULL, 0, 0, ran, userdata, 0};
  for (size_t i = 0; i < count; i++)
    keep_symbol(&k, used[i]);
  int rc = 0;
  if (ran && mprof__cubin_functions(image, size, keep_if_ran, &k) < 0)
    rc = -1;
  if (!rc && k.failed)
    rc = -2;
  if (!rc)
    rc = mprof__cubin_trim(image, size, k.symbols, k.count, out, out_size);
  free(k.symbols);
  return rc;
}
