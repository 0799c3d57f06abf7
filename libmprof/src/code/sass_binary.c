/*
 * mprof — cubins inside files: cubins, fatbins, host ELF files with a
 * `.nv_fatbin` section, and mprof traces.
 *
 * A fatbin (CUDA's container; the layout below is not documented by NVIDIA
 * but stable, and matches what CUDA 13's nvcc writes) is:
 *   header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16
 *     header_size, u64 fat_size (bytes of entries after the header);
 *   entries, each: u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size,
 *     u64 payload size, ... u32 arch at +28 (90), u64 flags at +40,
 *     u64 uncompressed size at +56; the payload follows the entry header.
 *   Flags 0x1000 and 0x2000 mark NVIDIA's own compression, 0x8000 zstd (a
 *   CUDA 13 `-Xfatbin -compress-all` ELF entry starts with the zstd magic).
 * `.nv_fatbin` holds several fatbins one after the other, 8-byte aligned
 * (one per translation unit, plus the runtime's).
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "internal.h"
#include "mprof/format.h"
#include "sass_internal.h"

#define EM_CUDA_MACHINE 190
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_ENTRY_MIN 64
#define FATBIN_COMPRESSED (0x1000u | 0x2000u | 0x8000u)

struct mprof_sass_binary {
  char *path;
  mprof_sass_cubin **cubins;
  size_t count;
  size_t capacity;
  char note[768];
};

typedef struct fatbin_scan {
  size_t elf;        /* ELF entries seen */
  size_t compressed; /* ... of which compressed */
  size_t damaged;    /* ... that did not parse */
  int truncated;     /* the container itself was cut short */
} fatbin_scan;

static uint64_t rd64(const unsigned char *p) {
  return (uint64_t)mprof__rd32(p) | (uint64_t)mprof__rd32(p + 4) << 32;
}

static void note(mprof_sass_binary *b, const char *fmt, ...)
    MPROF__PRINTF(2, 3);

static void note(mprof_sass_binary *b, const char *fmt, ...) {
  size_t used = strlen(b->note);
  if (used + 2 >= sizeof b->note)
    return;
  if (used) {
    b->note[used++] = ' ';
    b->note[used] = '\0';
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->note + used, sizeof b->note - used, fmt, ap);
  va_end(ap);
}

/* Keep @p cubin (taking ownership) unless an identical one is there. */
static int keep_cubin(mprof_sass_binary *b, mprof_sass_cubin *cubin) {
  size_t size;
  const void *data = mprof_sass_cubin_data(cubin, &size);
  for (size_t i = 0; i < b->count; i++) {
    size_t other_size;
    const void *other = mprof_sass_cubin_data(b->cubins[i], &other_size);
    if (other_size == size && memcmp(other, data, size) == 0 &&
        mprof_sass_cubin_crc(b->cubins[i]) == mprof_sass_cubin_crc(cubin)) {
      mprof_sass_cubin_free(cubin);
      return 0;
    }
  }
  if (MPROF__GROW(b->cubins, b->capacity, b->count + 1)) {
    mprof_sass_cubin_free(cubin);
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", b->path);
  }
  b->cubins[b->count++] = cubin;
  return 0;
}

static mprof_sass_binary *binary_new(const char *path) {
  mprof_sass_binary *b = (mprof_sass_binary *)calloc(1, sizeof *b);
  if (b && !(b->path = strdup(path))) {
    free(b);
    b = NULL;
  }
  return b;
}

void mprof_sass_binary_free(mprof_sass_binary *binary) {
  if (!binary)
    return;
  for (size_t i = 0; i < binary->count; i++)
    mprof_sass_cubin_free(binary->cubins[i]);
  free(binary->cubins);
  free(binary->path);
  free(binary);
}

size_t mprof_sass_binary_cubin_count(const mprof_sass_binary *binary) {
  return binary ? binary->count : 0;
}

const mprof_sass_cubin *mprof_sass_binary_cubin(const mprof_sass_binary *binary,
                                                size_t index) {
  if (!binary || index >= binary->count)
    return NULL;
  return binary->cubins[index];
}

const char *mprof_sass_binary_note(const mprof_sass_binary *binary) {
  return binary ? binary->note : "";
}

/* ---- fatbins -------------------------------------------------------------
 */

/* Read the fatbins in [data, data + size). */
static int scan_fatbins(mprof_sass_binary *b, const unsigned char *data,
                        size_t size, fatbin_scan *scan) {
  size_t pos = 0;
  while (size - pos >= 16) {
    if (mprof__rd32(data + pos) != FATBIN_MAGIC) {
      pos += 8; /* padding between fatbins */
      continue;
    }
    unsigned header_size = (unsigned)data[pos + 6] | (unsigned)data[pos + 7]
                                                         << 8;
    uint64_t fat_size = rd64(data + pos + 8);
    if (header_size < 16 || header_size > size - pos ||
        fat_size > size - pos - header_size) {
      scan->truncated = 1;
      return 0;
    }
    size_t p = pos + header_size;
    size_t end = p + (size_t)fat_size;
    while (end - p >= FATBIN_ENTRY_MIN) {
      const unsigned char *e = data + p;
      unsigned kind = (unsigned)e[0] | (unsigned)e[1] << 8;
      uint32_t entry_header = mprof__rd32(e + 4);
      uint64_t payload = rd64(e + 8);
      if (entry_header < FATBIN_ENTRY_MIN || entry_header > end - p ||
          payload > end - p - entry_header) {
        scan->truncated = 1;
        break;
      }
      uint32_t arch = mprof__rd32(e + 28);
      uint64_t flags = rd64(e + 40);
      if (kind == FATBIN_KIND_ELF) { /* FATBIN_KIND_PTX entries are skipped */
        scan->elf++;
        if (flags & FATBIN_COMPRESSED) {
          scan->compressed++;
        } else {
          char origin[4200];
          snprintf(origin, sizeof origin, "%s: cubin %zu (sm_%u)", b->path,
                   scan->elf, arch);
          mprof_sass_cubin *cubin;
          int rc = mprof_sass_cubin_open(&cubin, e + entry_header,
                                         (size_t)payload, origin);
          if (rc == MPROF_ENOMEM)
            return rc;
          if (rc) {
            scan->damaged++;
          } else if ((rc = keep_cubin(b, cubin)) != 0) {
            return rc;
          }
        }
      }
      p += entry_header + (size_t)payload;
    }
    pos = (end + 7) & ~(size_t)7;
    if (pos < end) /* overflow */
      break;
  }
  return 0;
}

/* The file offset and size of @p name in the host ELF at @p data. */
static int find_section(const unsigned char *data, size_t size,
                        const char *name, size_t *offset, size_t *length) {
  mprof__elf_init();
  Elf *elf = elf_memory((char *)data, size);
  if (!elf)
    return -1;
  int found = -1;
  size_t shstrndx;
  if (elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      const char *n =
          gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
      if (!n || strcmp(n, name) != 0 || sh.sh_type == SHT_NOBITS)
        continue;
      if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
        break;
      *offset = (size_t)sh.sh_offset;
      *length = (size_t)sh.sh_size;
      found = 0;
      break;
    }
  }
  elf_end(elf);
  return found;
}

/* cuobjdump -xelf all PATH into a temporary folder; keeps every cubin. */
static int extract_with_cuobjdump(mprof_sass_binary *b, const char *tool) {
  char abs_path[PATH_MAX];
  if (!realpath(b->path, abs_path))
    return mprof__error_set(MPROF_EIO, "%s: %s", b->path, strerror(errno));
  char dir[4096];
  int rc = mprof__temp_dir(dir, sizeof dir);
  if (rc)
    return rc;
  char *argv[] = {(char *)tool, (char *)"-xelf", (char *)"all", abs_path, NULL};
  char *text;
  size_t text_size;
  char err[512];
  rc = mprof__run_tool(argv, dir, &text, &text_size, err, sizeof err);
  free(text);
  size_t got = 0;
  DIR *d = rc ? NULL : opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 7 || strcmp(e->d_name + n - 6, ".cubin") != 0)
      continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mprof__file_map map;
    if (mprof__file_map_open(&map, path, MPROF__MAP_RANDOM) || !map.data) {
      mprof_error_clear();
      continue;
    }
    char origin[4400];
    snprintf(origin, sizeof origin, "%s: %s (cuobjdump)", b->path, e->d_name);
    mprof_sass_cubin *cubin;
    int orc = mprof_sass_cubin_open(&cubin, map.data, map.size, origin);
    mprof__file_map_close(&map);
    if (orc == MPROF_ENOMEM || (!orc && keep_cubin(b, cubin) != 0)) {
      rc = MPROF_ENOMEM;
      break;
    }
    got += orc == 0;
  }
  if (d)
    closedir(d);
  mprof__remove_dir(dir);
  if (!rc && !got)
    rc = mprof__error_set(MPROF_EIO, "%s -xelf all wrote no cubin", tool);
  return rc;
}

/* Notes on what the scan skipped, and cuobjdump for compressed cubins. */
static int after_scan(mprof_sass_binary *b, const fatbin_scan *scan,
                      const mprof_sass_options *opts) {
  if (scan->damaged)
    note(b, "%zu cubins in the fatbins are damaged and were skipped.",
         scan->damaged);
  if (scan->truncated)
    note(b, "a fatbin is cut short; what follows the damage was skipped.");
  if (!scan->compressed)
    return 0;
  char tool[4096];
  if (mprof__sass_tool(tool, sizeof tool, opts->cuobjdump, "cuobjdump") == 0) {
    int rc = extract_with_cuobjdump(b, tool);
    if (rc == MPROF_ENOMEM)
      return rc;
    if (rc)
      note(b, "%zu compressed cubins were skipped: %s.", scan->compressed,
           mprof_error_last());
    return 0;
  }
  if (opts->cuobjdump)
    note(b,
         "%zu compressed cubins were skipped: cuobjdump %s is not an "
         "executable file (CUDA's cuobjdump decompresses them).",
         scan->compressed, opts->cuobjdump);
  else
    note(b,
         "%zu compressed cubins were skipped: they need cuobjdump from the "
         "CUDA toolkit (put it in PATH or set MPROF_CUOBJDUMP), or a build "
         "with nvcc --no-compress.",
         scan->compressed);
  return 0;
}

static int read_host_elf(mprof_sass_binary *b, const unsigned char *data,
                         size_t size, const mprof_sass_options *opts) {
  size_t offset, length;
  if (find_section(data, size, ".nv_fatbin", &offset, &length) != 0) {
    size_t o2, l2;
    if (find_section(data, size, "__nv_relfatbin", &o2, &l2) == 0)
      return mprof__error_set(
          MPROF_ENOTFOUND,
          "%s: holds relocatable device code (__nv_relfatbin), not linked "
          "cubins; give the linked executable or library instead",
          b->path);
    return mprof__error_set(MPROF_ENOTFOUND,
                            "%s: no .nv_fatbin section: it holds no CUDA "
                            "device code (give the executable or shared "
                            "library whose kernels were profiled)",
                            b->path);
  }
  fatbin_scan scan;
  memset(&scan, 0, sizeof scan);
  int rc = scan_fatbins(b, data + offset, length, &scan);
  if (rc)
    return rc;
  return after_scan(b, &scan, opts);
}

/* ---- traces --------------------------------------------------------------
 */

int mprof__sass_binary_from_trace(mprof_sass_binary **out,
                                  const mprof_trace *trace) {
  *out = NULL;
  mprof_sass_binary *b = binary_new(mprof_trace_path(trace));
  if (!b)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  size_t n, omitted = 0, damaged = 0;
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  for (size_t i = 0; i < n; i++) {
    size_t size;
    const void *blob = mprof_trace_cubin_blob(trace, &cubins[i], &size);
    if (!blob || !size) {
      omitted++;
      continue;
    }
    char origin[4200];
    snprintf(origin, sizeof origin, "%s: cubin %016llx", b->path,
             (unsigned long long)cubins[i].crc);
    mprof_sass_cubin *cubin;
    int rc = mprof__sass_cubin_open(&cubin, blob, size, origin, cubins[i].crc,
                                    cubins[i].device);
    if (rc == MPROF_ENOMEM || (!rc && keep_cubin(b, cubin) != 0)) {
      mprof_sass_binary_free(b);
      return MPROF_ENOMEM;
    }
    damaged += rc != 0;
  }
  if (omitted)
    note(b, "%zu cubins were not kept by the producer.", omitted);
  if (damaged)
    note(b, "%zu cubins are damaged and were skipped.", damaged);
  *out = b;
  return 0;
}

/* ---- files ---------------------------------------------------------------
 */

int mprof_sass_binary_open(mprof_sass_binary **out, const char *path,
                           const mprof_sass_options *opts) {
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sass_binary_open: NULL argument");
  *out = NULL;
  mprof_sass_options opts_copy;
  int orc = mprof__sass_options_take(&opts_copy, opts);
  if (orc)
    return orc;
  opts = &opts_copy;
  mprof__file_map map;
  int mrc = mprof__file_map_open(&map, path, MPROF__MAP_RANDOM);
  if (mrc)
    return mrc;
  size_t size = map.size;
  unsigned char head[20];
  memset(head, 0, sizeof head);
  if (size >= sizeof head)
    memcpy(head, map.data, sizeof head);
  if (size >= 8 && memcmp(head, MPROF_FORMAT_MAGIC, 8) == 0) {
    mprof__file_map_close(&map);
    mprof_trace *trace;
    int rc = mprof_trace_open(&trace, path, NULL);
    if (rc)
      return rc;
    rc = mprof__sass_binary_from_trace(out, trace);
    mprof_trace_free(trace);
    if (!rc && !(*out)->count) {
      mprof__error_set(MPROF_ENOTFOUND, "%s: the trace kept no cubin%s%s", path,
                       *(*out)->note ? "; " : "", (*out)->note);
      mprof_sass_binary_free(*out);
      *out = NULL;
      return MPROF_ENOTFOUND;
    }
    return rc;
  }
  if (!map.data)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: empty or unreadable (expected a cubin, a "
                            "fatbin, an executable or a shared library)",
                            path);
  const unsigned char *data = map.data;
  mprof_sass_binary *b = binary_new(path);
  int rc = b ? 0 : mprof__error_set(MPROF_ENOMEM, "out of memory");
  if (!rc && memcmp(head,
                    "\x7f"
                    "ELF",
                    4) == 0) {
    unsigned machine = (unsigned)head[18] | (unsigned)head[19] << 8;
    if (machine == EM_CUDA_MACHINE) {
      mprof_sass_cubin *cubin;
      rc = mprof_sass_cubin_open(&cubin, data, size, path);
      if (!rc)
        rc = keep_cubin(b, cubin);
    } else {
      rc = read_host_elf(b, data, size, opts);
    }
  } else if (!rc && mprof__rd32(head) == FATBIN_MAGIC) {
    fatbin_scan scan;
    memset(&scan, 0, sizeof scan);
    rc = scan_fatbins(b, data, size, &scan);
    if (!rc)
      rc = after_scan(b, &scan, opts);
  } else if (!rc) {
    rc = mprof__error_set(MPROF_EFORMAT,
                          "%s: not a cubin, fatbin, ELF executable, shared "
                          "library or mprof trace",
                          path);
  }
  mprof__file_map_close(&map);
  if (!rc && !b->count)
    rc = mprof__error_set(MPROF_ENOTFOUND, "%s: no cubin could be read%s%s",
                          path, *b->note ? ": " : "", b->note);
  if (rc) {
    mprof_sass_binary_free(b);
    return rc;
  }
  *out = b;
  return 0;
}
