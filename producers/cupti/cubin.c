/*
 * mprof CUPTI producer — ELF64 function symbols and the cubin spill file.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cubin.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read a struct at @p offset only if it lies wholly inside the image; memcpy
 * because CUPTI's copy of the cubin carries no alignment promise. */
static int read_at(const unsigned char *image, size_t size, uint64_t offset,
                   void *out, size_t len) {
  if (offset > size || len > size - offset)
    return -1;
  memcpy(out, image + offset, len);
  return 0;
}

int mprof_cupti_cubin_functions(const void *image_ptr, size_t size,
                                mprof_cupti_function_fn fn, void *userdata) {
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

void mprof_cupti_spill_init(mprof_cupti_spill *spill, const char *dir) {
  spill->fd = -1;
  spill->size = 0;
  snprintf(spill->dir, sizeof spill->dir, "%s", dir && *dir ? dir : ".");
}

static int spill_open(mprof_cupti_spill *spill) {
#ifdef O_TMPFILE
  spill->fd = open(spill->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (spill->fd >= 0)
    return 0;
#endif
  char path[4200];
  snprintf(path, sizeof path, "%s/.mprof-cubins-XXXXXX", spill->dir);
  spill->fd = mkostemp(path, O_CLOEXEC);
  if (spill->fd < 0)
    return -1;
  unlink(path);
  return 0;
}

int mprof_cupti_spill_store(mprof_cupti_spill *spill, const void *data,
                            size_t size, uint64_t *offset) {
  if (spill->fd < 0 && spill_open(spill) != 0)
    return -1;
  const unsigned char *p = (const unsigned char *)data;
  uint64_t at = spill->size;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(spill->fd, p + done, size - done, (off_t)(at + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      /* Leave the size alone: a later store overwrites the partial bytes. */
      return -1;
    }
    done += (size_t)n;
  }
  spill->size += size;
  *offset = at;
  return 0;
}

int mprof_cupti_spill_load(const mprof_cupti_spill *spill, uint64_t offset,
                           void *out, size_t size) {
  if (spill->fd < 0 || offset > spill->size || size > spill->size - offset) {
    errno = EINVAL;
    return -1;
  }
  unsigned char *p = (unsigned char *)out;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(spill->fd, p + done, size - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return 0;
}

void mprof_cupti_spill_close(mprof_cupti_spill *spill) {
  if (spill->fd >= 0)
    close(spill->fd);
  spill->fd = -1;
  spill->size = 0;
}
