/*
 * blocks_file.c — write the block producer's slots as a `.source` file.
 *
 * SPDX-License-Identifier: MIT
 */
#include "blocks_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The .source layout (producers/source/README.md, version 1.0). */
#define SOURCE_HEADER_SIZE 128u
#define SOURCE_RECORD_SIZE 48u
#define SOURCE_LAUNCH_EXT_SIZE 24u
/* MPROF_SOURCE_LAUNCH_* of mprof/source.h (not included: libc only). */
#define LAUNCH_DYNAMIC_SHARED 0x1u
#define LAUNCH_STREAM 0x2u
#define ROLE_CONSUMER 3u
#define NO_WARP 0xffffffffu

static void put16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* The device side (blocks_patch.cu) lays these out the same way. */
_Static_assert(sizeof(mprof_blocks_slot) == 24, "a block slot is 24 bytes");
_Static_assert(sizeof(mprof_blocks_header) ==
                   MPROF_BLOCKS_HEADER_SLOTS * sizeof(mprof_blocks_slot),
               "the launch header is two slots");
_Static_assert(sizeof(mprof_blocks_memory_entry) == 48,
               "a memory entry is 48 bytes");

uint64_t mprof_blocks_grid_size(const uint32_t grid[3]) {
  return (uint64_t)grid[0] * grid[1] * grid[2];
}

static int slot_done(const mprof_blocks_slot *s) {
  return s->start_inv != 0 && s->end != 0 && ~s->start_inv <= s->end;
}

static int write_all(FILE *f, const void *data, size_t size) {
  return fwrite(data, 1, size, f) == size ? 0 : -1;
}

int mprof_blocks_write_source(const char *path, const char *const *kernels,
                              size_t kernel_count,
                              const mprof_blocks_launch *launches,
                              size_t launch_count, uint64_t overflow,
                              uint64_t capacity, mprof_blocks_counts *counts) {
  mprof_blocks_counts c;
  memset(&c, 0, sizeof c);
  if (kernel_count > UINT32_MAX || launch_count > UINT32_MAX) {
    errno = EOVERFLOW;
    return -1;
  }
  /* Strings: NUL, "block", the kernel names; padded to 8 with NULs. */
  static const char region_name[] = "block";
  size_t strings = 1 + sizeof region_name;
  for (size_t k = 0; k < kernel_count; k++)
    strings += strlen(kernels[k]) + 1;
  strings += 1; /* the table ends with a NUL */
  size_t strings_size = (strings + 7) & ~(size_t)7;
  if (strings_size > UINT32_MAX) {
    errno = EOVERFLOW;
    return -1;
  }
  for (size_t i = 0; i < launch_count; i++) {
    const mprof_blocks_launch *l = &launches[i];
    if (!l->slots)
      continue;
    c.launches_recorded++;
    uint64_t n = mprof_blocks_grid_size(l->grid);
    for (uint64_t b = 0; b < n; b++) {
      const mprof_blocks_slot *s = &l->slots[b];
      if (!slot_done(s)) {
        c.missing++;
        continue;
      }
      c.blocks++;
      c.sm_changed += s->sm_enter != s->sm_exit;
    }
  }

  size_t tmp_len = strlen(path) + sizeof ".partial";
  char *tmp = (char *)malloc(tmp_len);
  unsigned char *table = (unsigned char *)calloc(1, strings_size);
  if (!tmp || !table) {
    free(tmp);
    free(table);
    errno = ENOMEM;
    return -1;
  }
  snprintf(tmp, tmp_len, "%s.partial", path);
  uint32_t *name_ref =
      (uint32_t *)malloc((kernel_count + 1) * sizeof *name_ref);
  if (!name_ref) {
    free(tmp);
    free(table);
    errno = ENOMEM;
    return -1;
  }
  size_t at = 1;
  uint32_t region_ref = (uint32_t)at;
  memcpy(table + at, region_name, sizeof region_name);
  at += sizeof region_name;
  for (size_t k = 0; k < kernel_count; k++) {
    size_t len = strlen(kernels[k]) + 1;
    name_ref[k] = (uint32_t)at;
    memcpy(table + at, kernels[k], len);
    at += len;
  }

  FILE *f = fopen(tmp, "wb");
  int rc = f ? 0 : -1;
  unsigned char header[SOURCE_HEADER_SIZE];
  memset(header, 0, sizeof header);
  memcpy(header, "MPSRC\0\r\n", 8);
  put16(header + 8, 1);
  put16(header + 10, 1); /* 1.1: with launch extensions */
  put32(header + 12, SOURCE_HEADER_SIZE);
  put32(header + 16, 1); /* regions */
  put32(header + 20, (uint32_t)kernel_count);
  put32(header + 24, (uint32_t)launch_count);
  put32(header + 28, SOURCE_RECORD_SIZE);
  put64(header + 32, c.blocks);
  put64(header + 40, overflow);
  put64(header + 48, capacity);
  put32(header + 56, (uint32_t)strings_size);
  /* No timer probe: offsets 60..103 stay zero ("not measured"). */
  put32(header + 104, SOURCE_LAUNCH_EXT_SIZE);
  if (!rc)
    rc = write_all(f, header, sizeof header);
  unsigned char region[16];
  memset(region, 0, sizeof region);
  put32(region, region_ref);
  put32(region + 4, ROLE_CONSUMER);
  if (!rc)
    rc = write_all(f, region, sizeof region);
  for (size_t k = 0; !rc && k < kernel_count; k++) {
    unsigned char kernel[8];
    memset(kernel, 0, sizeof kernel);
    put32(kernel, name_ref[k]);
    rc = write_all(f, kernel, sizeof kernel);
  }
  for (size_t i = 0; !rc && i < launch_count; i++) {
    const mprof_blocks_launch *l = &launches[i];
    unsigned char launch[40];
    put32(launch, l->kernel);
    put32(launch + 4, l->device);
    for (int d = 0; d < 3; d++) {
      put32(launch + 8 + 4 * d, l->grid[d]);
      put32(launch + 20 + 4 * d, l->block[d]);
    }
    put64(launch + 32, l->host_ns);
    rc = write_all(f, launch, sizeof launch);
  }
  if (!rc)
    rc = write_all(f, table, strings_size);
  for (size_t i = 0; !rc && i < launch_count; i++) {
    const mprof_blocks_launch *l = &launches[i];
    if (!l->slots)
      continue;
    uint64_t n = mprof_blocks_grid_size(l->grid);
    for (uint64_t b = 0; !rc && b < n; b++) {
      const mprof_blocks_slot *s = &l->slots[b];
      if (!slot_done(s))
        continue;
      unsigned char record[SOURCE_RECORD_SIZE];
      put64(record, ~s->start_inv);
      put64(record + 8, s->end);
      put32(record + 16, (uint32_t)i);
      put32(record + 20, l->kernel);
      put32(record + 24, s->sm_enter);
      put32(record + 28, (uint32_t)b);
      put32(record + 32, NO_WARP);
      put32(record + 36, 0); /* region "block" */
      put64(record + 40, s->sm_exit);
      rc = write_all(f, record, sizeof record);
    }
  }
  for (size_t i = 0; !rc && i < launch_count; i++) {
    const mprof_blocks_launch *l = &launches[i];
    unsigned char ext[SOURCE_LAUNCH_EXT_SIZE];
    put32(ext, l->stream);
    put32(ext + 4, l->has_dynamic_shared ? l->dynamic_shared : 0);
    for (int d = 0; d < 3; d++)
      put32(ext + 8 + 4 * d, l->cluster[d]);
    put32(ext + 20,
          LAUNCH_STREAM | (l->has_dynamic_shared ? LAUNCH_DYNAMIC_SHARED : 0));
    rc = write_all(f, ext, sizeof ext);
  }
  int saved = errno;
  if (f && fclose(f) != 0 && !rc) {
    rc = -1;
    saved = errno;
  }
  if (!rc && rename(tmp, path) != 0) {
    rc = -1;
    saved = errno;
  }
  if (rc && f)
    remove(tmp);
  free(name_ref);
  free(table);
  free(tmp);
  if (counts)
    *counts = c;
  errno = saved;
  return rc;
}

size_t mprof_blocks_write_memory(FILE *f, uint32_t device,
                                 const mprof_blocks_memory_entry *table,
                                 uint32_t entries,
                                 const uint64_t *function_size,
                                 size_t kernel_count, uint64_t *outside,
                                 uint64_t *unkept) {
  size_t lines = 0;
  for (uint32_t i = 0; i < entries; i++) {
    const mprof_blocks_memory_entry *e = &table[i];
    if (!e->key || !e->warps)
      continue;
    uint64_t kernel = (e->key >> 32) - 1;
    uint32_t offset = (uint32_t)e->key;
    if (kernel >= kernel_count || offset == UINT32_MAX ||
        (function_size && function_size[kernel] &&
         offset >= function_size[kernel])) {
      *outside += e->warps;
      continue;
    }
    fprintf(f, "blocks.memory %u %llu %u %u %u %llu %llu %llu %llu\n", device,
            (unsigned long long)kernel, offset, e->flags, e->access_size,
            (unsigned long long)e->warps, (unsigned long long)e->threads,
            (unsigned long long)e->bytes, (unsigned long long)e->sectors);
    lines++;
  }
  *unkept += table[entries].warps;
  return lines;
}
