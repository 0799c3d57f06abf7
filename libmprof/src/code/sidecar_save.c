/*
 * mprof — the sidecar: a streaming JSON writer (docs/SIDECAR.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "base/map.h"
#include "base/text.h"
#include "internal.h"
#include "mprof/sidecar.h"

#include "sidecar_internal.h"

/* ---- saving --------------------------------------------------------------
 */

/* Distinct file names of all instructions, in order of first use; the
 * interned pointers are the keys. */
typedef struct file_table {
  const char **names; /* by index */
  size_t count, capacity;
  mprof__map map; /* pointer -> index */
} file_table;

static long file_table_index(const file_table *t, const char *name) {
  if (!*name)
    return -1;
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&t->map, mprof__hash_pointer(name), &cursor)) !=
         MPROF__MAP_NONE)
    if (t->names[i] == name)
      return (long)i;
  return -1;
}

static int file_table_add(file_table *t, const char *name) {
  if (file_table_index(t, name) >= 0)
    return 0;
  if (MPROF__GROW(t->names, t->capacity, t->count + 1) ||
      mprof__map_add(&t->map, mprof__hash_pointer(name), (uint32_t)t->count))
    return -1;
  t->names[t->count++] = name;
  return 0;
}

static void file_table_free(file_table *t) {
  free((void *)t->names);
  mprof__map_free(&t->map);
}

static void write_function(FILE *f, const sidecar_fn *fn,
                           const file_table *files) {
  const mprof_sidecar_function *p = &fn->pub;
  fputs("  {\"name\": ", f);
  mprof__json_string(f, p->name);
  fputs(", \"demangled\": ", f);
  mprof__json_string(f, p->demangled);
  fprintf(f,
          ",\n   \"cubin_crc\": \"%016llx\", \"function_index\": %u, "
          "\"device\": %u, \"registers\": %u, \"static_shared\": %u, "
          "\"size\": %u,\n   \"sass_state\": \"%s\", \"sass_error\": ",
          (unsigned long long)p->cubin_crc, p->function_index, p->device,
          p->registers, p->static_shared, p->size,
          mprof__sidecar_state_names[p->sass_state]);
  mprof__json_string(f, p->sass_error);
  fputs(",\n   \"instructions\": [", f);
  for (size_t i = 0; i < p->instruction_count; i++) {
    const mprof_sass_instruction *in = &p->instructions[i];
    fprintf(f, "%s\n    [%u, ", i ? "," : "", in->offset);
    mprof__json_string(f, in->predicate);
    fputs(", ", f);
    mprof__json_string(f, in->opcode);
    fputs(", ", f);
    mprof__json_string(f, in->operands);
    fprintf(f, ", %ld, %u]", file_table_index(files, in->file), in->line);
  }
  fputs(p->instruction_count ? "\n   ],\n   \"pcs\": [" : "],\n   \"pcs\": [",
        f);
  for (size_t i = 0; i < p->pc_count; i++) {
    const mprof_sidecar_pc *pc = &p->pcs[i];
    fprintf(f, "%s\n    [%u, {", i ? "," : "", pc->offset);
    int first = 1;
    for (uint32_t r = 0; r < pc->reason_count; r++) {
      if (!pc->counts[r])
        continue;
      fprintf(f, "%s\"%u\": %llu", first ? "" : ", ", r,
              (unsigned long long)pc->counts[r]);
      first = 0;
    }
    fputs("}]", f);
  }
  fputs(p->pc_count ? "\n   ]}" : "]}", f);
}

int mprof_sidecar_save(const mprof_sidecar *sidecar, const char *path) {
  if (!sidecar || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_save: NULL argument");
  file_table files;
  memset(&files, 0, sizeof files);
  for (size_t i = 0; i < sidecar->fn_count; i++) {
    const mprof_sidecar_function *p = &sidecar->fns[i]->pub;
    for (size_t k = 0; k < p->instruction_count; k++)
      if (*p->instructions[k].file &&
          file_table_add(&files, p->instructions[k].file) != 0) {
        file_table_free(&files);
        return mprof__sidecar_oom();
      }
  }
  mprof__file_out fo;
  int rc = mprof__file_out_open(&fo, path);
  if (rc) {
    file_table_free(&files);
    return rc;
  }
  FILE *f = fo.f;
  fprintf(f, "{\"format\": \"%s\", \"version\": %d,\n \"stall_reasons\": [",
          SIDECAR_FORMAT, SIDECAR_VERSION);
  for (size_t i = 0; i < sidecar->reason_count; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    mprof__json_string(f, sidecar->reasons[i]);
  }
  fputs(sidecar->reason_count ? "\n ],\n \"files\": [" : "],\n \"files\": [",
        f);
  for (size_t i = 0; i < files.count; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    mprof__json_string(f, files.names[i]);
  }
  fputs(files.count ? "\n ],\n \"functions\": [" : "],\n \"functions\": [", f);
  for (size_t i = 0; i < sidecar->fn_count; i++) {
    fputs(i ? ",\n" : "\n", f);
    write_function(f, sidecar->fns[i], &files);
  }
  fputs(sidecar->fn_count ? "\n ]}\n" : "]}\n", f);
  file_table_free(&files);
  return mprof__file_out_close(&fo, 1);
}
