/*
 * mprof — the TRACE.mprof.pc.json sidecar: an in-memory model, a streaming
 * JSON writer and a validating json-c reader. The schema is docs/SIDECAR.md.
 *
 * Strings live in one interning pool per sidecar: a sidecar of a large
 * kernel holds hundreds of thousands of instructions but only a few hundred
 * distinct opcodes and a handful of file names.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/map.h"
#include "base/text.h"
#include "internal.h"
#include "mprof/sidecar.h"
#include "sass_internal.h"

#define SIDECAR_FORMAT "mprof-pc-sidecar"
#define SIDECAR_VERSION 1
/* Deepest nesting the schema needs is 6 (root, functions, function, pcs,
 * pc, counts); refuse anything much deeper before json-c builds it. */
#define SIDECAR_MAX_DEPTH 16
/* Refuse files json-c cannot take in one piece (it counts in int). */
#define SIDECAR_MAX_FILE (1u << 30)
/* PC count tables are dense (counts[reason]); a hostile file could ask for
 * a large table per PC with a few bytes. Allow this many table cells per
 * byte of file, far above what a real sidecar needs (~1.5). */
#define SIDECAR_CELLS_PER_BYTE 4u
#define SIDECAR_CELLS_SLACK 65536u

static const char *const state_names[] = {"present", "no_cubin",
                                          "no_disassembler", "failed"};
#define STATE_COUNT (sizeof state_names / sizeof state_names[0])

/* ---- string pool ---------------------------------------------------------
 */

typedef struct pool_chunk {
  struct pool_chunk *next;
  size_t used;
  size_t size;
  char data[];
} pool_chunk;

typedef struct string_pool {
  pool_chunk *chunks;
  const char **strings; /* by index */
  size_t count, capacity;
  mprof__map map; /* text -> index */
} string_pool;

static void pool_free(string_pool *p) {
  pool_chunk *c = p->chunks;
  while (c) {
    pool_chunk *next = c->next;
    free(c);
    c = next;
  }
  free((void *)p->strings);
  mprof__map_free(&p->map);
  memset(p, 0, sizeof *p);
}

static char *pool_alloc(string_pool *p, size_t size) {
  pool_chunk *c = p->chunks;
  if (!c || c->size - c->used < size) {
    size_t want = size > 32768 ? size : 32768;
    c = (pool_chunk *)malloc(sizeof *c + want);
    if (!c)
      return NULL;
    c->used = 0;
    c->size = want;
    /* A big string gets its own chunk behind the current one, so the
     * current chunk's free space is not thrown away. */
    if (p->chunks && size > 32768) {
      c->next = p->chunks->next;
      p->chunks->next = c;
    } else {
      c->next = p->chunks;
      p->chunks = c;
    }
  }
  char *out = c->data + c->used;
  c->used += size;
  return out;
}

/* The pooled copy of @p s (@p len bytes, no NUL inside); NULL when out of
 * memory. "" is always the same static string. */
static const char *pool_intern(string_pool *p, const char *s, size_t len) {
  if (len == 0)
    return "";
  uint64_t h = mprof__hash64(s, len);
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&p->map, h, &cursor)) != MPROF__MAP_NONE)
    if (strncmp(p->strings[i], s, len) == 0 && p->strings[i][len] == '\0')
      return p->strings[i];
  if (p->count == p->capacity) {
    size_t cap = p->capacity ? p->capacity * 2 : 256;
    const char **strings =
        (const char **)realloc((void *)p->strings, cap * sizeof *strings);
    if (!strings)
      return NULL;
    p->strings = strings;
    p->capacity = cap;
  }
  char *copy = pool_alloc(p, len + 1);
  if (!copy || mprof__map_add(&p->map, h, (uint32_t)p->count))
    return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  p->strings[p->count++] = copy;
  return copy;
}

/* ---- model ---------------------------------------------------------------
 */

typedef struct sidecar_fn {
  mprof_sidecar_function pub; /* arrays below are mirrored into pub */
  uint64_t name_hash;
  mprof_sass_instruction *insns;
  size_t insn_capacity;
  mprof_sidecar_pc *pcs;
  size_t pc_capacity;
} sidecar_fn;

struct mprof_sidecar {
  string_pool strings;
  const char **reasons;
  size_t reason_count;
  sidecar_fn **fns; /* pointers, so a function stays put as others arrive */
  size_t fn_count;
  size_t fn_capacity;
  uint64_t cells; /* count table cells over all PCs */
};

static int oom(void) {
  return mprof__error_set(MPROF_ENOMEM, "sidecar: out of memory");
}

static const char *intern(mprof_sidecar *sc, const char *s) {
  if (!s)
    return "";
  return pool_intern(&sc->strings, s, strlen(s));
}

int mprof_sidecar_new(mprof_sidecar **out) {
  if (!out)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_new: NULL");
  *out = (mprof_sidecar *)calloc(1, sizeof **out);
  return *out ? 0 : oom();
}

void mprof_sidecar_free(mprof_sidecar *sidecar) {
  if (!sidecar)
    return;
  for (size_t i = 0; i < sidecar->fn_count; i++) {
    sidecar_fn *f = sidecar->fns[i];
    for (size_t p = 0; p < f->pub.pc_count; p++)
      free((void *)f->pcs[p].counts);
    free(f->pcs);
    free(f->insns);
    free(f);
  }
  free(sidecar->fns);
  free(sidecar->reasons);
  pool_free(&sidecar->strings);
  free(sidecar);
}

int mprof_sidecar_set_stall_reason(mprof_sidecar *sidecar, uint32_t index,
                                   const char *name) {
  if (!sidecar)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_set_stall_reason: "
                                          "NULL sidecar");
  if (index > MPROF__SIDECAR_MAX_REASON)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: stall reason index %u is above %u", index,
                            MPROF__SIDECAR_MAX_REASON);
  if (index >= sidecar->reason_count) {
    const char **r = (const char **)realloc(
        (void *)sidecar->reasons, (index + 1) * sizeof *sidecar->reasons);
    if (!r)
      return oom();
    for (size_t i = sidecar->reason_count; i <= index; i++)
      r[i] = "";
    sidecar->reasons = r;
    sidecar->reason_count = index + 1;
  }
  const char *copy = intern(sidecar, name);
  if (!copy)
    return oom();
  sidecar->reasons[index] = copy;
  return 0;
}

size_t mprof_sidecar_stall_reason_count(const mprof_sidecar *sidecar) {
  return sidecar ? sidecar->reason_count : 0;
}

const char *mprof_sidecar_stall_reason(const mprof_sidecar *sidecar,
                                       uint32_t index) {
  if (!sidecar || index >= sidecar->reason_count)
    return "";
  return sidecar->reasons[index];
}

int mprof_sidecar_add_function(mprof_sidecar *sidecar, uint32_t *out_index,
                               const mprof_sidecar_function *fn) {
  if (!sidecar || !fn)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sidecar_add_function: NULL argument");
  if (!fn->name || !*fn->name)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: a function needs a mangled name");
  if (fn->sass_state >= STATE_COUNT)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: %s: SASS state %u is not one of "
                            "mprof_sass_state",
                            fn->name, fn->sass_state);
  if (sidecar->fn_count >= UINT32_MAX)
    return mprof__error_set(MPROF_EINVAL, "sidecar: too many functions");
  if (sidecar->fn_count == sidecar->fn_capacity) {
    size_t cap = sidecar->fn_capacity ? sidecar->fn_capacity * 2 : 16;
    sidecar_fn **fns =
        (sidecar_fn **)realloc(sidecar->fns, cap * sizeof *sidecar->fns);
    if (!fns)
      return oom();
    sidecar->fns = fns;
    sidecar->fn_capacity = cap;
  }
  sidecar_fn *f = (sidecar_fn *)calloc(1, sizeof *f);
  if (!f)
    return oom();
  f->pub = *fn;
  f->pub.name = intern(sidecar, fn->name);
  f->pub.demangled = intern(sidecar, fn->demangled);
  f->pub.sass_error = intern(
      sidecar, fn->sass_state == MPROF_SASS_FAILED ? fn->sass_error : "");
  f->pub.instruction_count = 0;
  f->pub.instructions = NULL;
  f->pub.pc_count = 0;
  f->pub.pcs = NULL;
  if (!f->pub.name || !f->pub.demangled || !f->pub.sass_error) {
    free(f);
    return oom();
  }
  f->name_hash = mprof__hash64(f->pub.name, strlen(f->pub.name));
  sidecar->fns[sidecar->fn_count] = f;
  if (out_index)
    *out_index = (uint32_t)sidecar->fn_count;
  sidecar->fn_count++;
  return 0;
}

static sidecar_fn *fn_get(mprof_sidecar *sidecar, uint32_t function,
                          const char *what) {
  if (!sidecar) {
    mprof__error_set(MPROF_EINVAL, "%s: NULL sidecar", what);
    return NULL;
  }
  if (function >= sidecar->fn_count) {
    mprof__error_set(MPROF_EINVAL,
                     "%s: function %u does not exist (the sidecar has %zu)",
                     what, function, sidecar->fn_count);
    return NULL;
  }
  return sidecar->fns[function];
}

int mprof_sidecar_add_instruction(mprof_sidecar *sidecar, uint32_t function,
                                  const mprof_sass_instruction *insn) {
  sidecar_fn *f = fn_get(sidecar, function, "mprof_sidecar_add_instruction");
  if (!f)
    return mprof_error_last_status();
  if (!insn)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sidecar_add_instruction: NULL instruction");
  size_t n = f->pub.instruction_count;
  if (n && insn->offset <= f->insns[n - 1].offset)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: %s: instruction at offset 0x%x does not "
                            "follow the one at 0x%x (offsets must ascend)",
                            f->pub.name, insn->offset, f->insns[n - 1].offset);
  if (n == f->insn_capacity) {
    size_t cap = f->insn_capacity ? f->insn_capacity * 2 : 64;
    mprof_sass_instruction *a =
        (mprof_sass_instruction *)realloc(f->insns, cap * sizeof *f->insns);
    if (!a)
      return oom();
    f->insns = a;
    f->insn_capacity = cap;
  }
  mprof_sass_instruction *dst = &f->insns[n];
  dst->offset = insn->offset;
  dst->line = insn->line;
  dst->predicate = intern(sidecar, insn->predicate);
  dst->opcode = intern(sidecar, insn->opcode);
  dst->operands = intern(sidecar, insn->operands);
  dst->file = intern(sidecar, insn->file);
  if (!dst->predicate || !dst->opcode || !dst->operands || !dst->file)
    return oom();
  f->pub.instructions = f->insns;
  f->pub.instruction_count = n + 1;
  return 0;
}

/* Position of the PC at @p offset in @p f, or where it would go. */
static size_t pc_position(const sidecar_fn *f, uint32_t offset) {
  size_t lo = 0, hi = f->pub.pc_count;
  if (hi && f->pcs[hi - 1].offset < offset)
    return hi; /* the common case: samples arrive sorted */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->pcs[mid].offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int mprof_sidecar_add_samples(mprof_sidecar *sidecar, uint32_t function,
                              uint32_t offset, uint32_t reason,
                              uint64_t samples) {
  sidecar_fn *f = fn_get(sidecar, function, "mprof_sidecar_add_samples");
  if (!f)
    return mprof_error_last_status();
  if (reason > MPROF__SIDECAR_MAX_REASON)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: %s: stall reason index %u is above %u",
                            f->pub.name, reason, MPROF__SIDECAR_MAX_REASON);
  size_t at = pc_position(f, offset);
  if (at == f->pub.pc_count || f->pcs[at].offset != offset) {
    if (f->pub.pc_count == f->pc_capacity) {
      size_t cap = f->pc_capacity ? f->pc_capacity * 2 : 16;
      mprof_sidecar_pc *a =
          (mprof_sidecar_pc *)realloc(f->pcs, cap * sizeof *f->pcs);
      if (!a)
        return oom();
      f->pcs = a;
      f->pc_capacity = cap;
    }
    memmove(&f->pcs[at + 1], &f->pcs[at],
            (f->pub.pc_count - at) * sizeof *f->pcs);
    f->pcs[at].offset = offset;
    f->pcs[at].reason_count = 0;
    f->pcs[at].counts = NULL;
    f->pub.pc_count++;
    f->pub.pcs = f->pcs;
  }
  mprof_sidecar_pc *pc = &f->pcs[at];
  if (reason >= pc->reason_count) {
    uint64_t *counts =
        (uint64_t *)realloc((void *)pc->counts, (reason + 1) * sizeof *counts);
    if (!counts)
      return oom();
    memset(counts + pc->reason_count, 0,
           (reason + 1 - pc->reason_count) * sizeof *counts);
    sidecar->cells += reason + 1 - pc->reason_count;
    pc->counts = counts;
    pc->reason_count = reason + 1;
  }
  uint64_t *counts = (uint64_t *)pc->counts;
  if (counts[reason] > UINT64_MAX - samples)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: %s+0x%x: sample count overflows",
                            f->pub.name, offset);
  counts[reason] += samples;
  return 0;
}

int mprof_sidecar_set_sass_state(mprof_sidecar *sidecar, uint32_t function,
                                 mprof_sass_state state, const char *message) {
  sidecar_fn *f = fn_get(sidecar, function, "mprof_sidecar_set_sass_state");
  if (!f)
    return mprof_error_last_status();
  if ((unsigned)state >= STATE_COUNT)
    return mprof__error_set(MPROF_EINVAL,
                            "sidecar: SASS state %d is not one of "
                            "mprof_sass_state",
                            (int)state);
  const char *copy =
      intern(sidecar, state == MPROF_SASS_FAILED ? message : NULL);
  if (!copy)
    return oom();
  f->pub.sass_state = (uint32_t)state;
  f->pub.sass_error = copy;
  return 0;
}

int mprof__sidecar_clear_instructions(mprof_sidecar *sidecar, uint32_t fn) {
  sidecar_fn *f = fn_get(sidecar, fn, "sidecar");
  if (!f)
    return mprof_error_last_status();
  free(f->insns);
  f->insns = NULL;
  f->insn_capacity = 0;
  f->pub.instructions = NULL;
  f->pub.instruction_count = 0;
  return 0;
}

int mprof__sidecar_update_function(mprof_sidecar *sidecar, uint32_t fn,
                                   const mprof_sidecar_function *info) {
  sidecar_fn *f = fn_get(sidecar, fn, "sidecar");
  if (!f)
    return mprof_error_last_status();
  const char *demangled = intern(sidecar, info->demangled);
  if (!demangled)
    return oom();
  f->pub.demangled = demangled;
  f->pub.cubin_crc = info->cubin_crc;
  f->pub.function_index = info->function_index;
  f->pub.device = info->device;
  f->pub.registers = info->registers;
  f->pub.static_shared = info->static_shared;
  f->pub.size = info->size;
  return 0;
}

size_t mprof_sidecar_function_count(const mprof_sidecar *sidecar) {
  return sidecar ? sidecar->fn_count : 0;
}

const mprof_sidecar_function *
mprof_sidecar_function_at(const mprof_sidecar *sidecar, size_t index) {
  if (!sidecar || index >= sidecar->fn_count)
    return NULL;
  return &sidecar->fns[index]->pub;
}

const mprof_sidecar_function *mprof_sidecar_find(const mprof_sidecar *sidecar,
                                                 const char *name,
                                                 uint64_t cubin_crc) {
  if (!sidecar || !name)
    return NULL;
  uint64_t h = mprof__hash64(name, strlen(name));
  for (size_t i = 0; i < sidecar->fn_count; i++) {
    const sidecar_fn *f = sidecar->fns[i];
    if (f->name_hash == h && strcmp(f->pub.name, name) == 0 &&
        (cubin_crc == 0 || f->pub.cubin_crc == cubin_crc))
      return &f->pub;
  }
  return NULL;
}

const mprof_sass_instruction *
mprof_sidecar_instruction(const mprof_sidecar_function *fn, uint32_t offset) {
  if (!fn || !fn->instruction_count)
    return NULL;
  size_t lo = 0, hi = fn->instruction_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (fn->instructions[mid].offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < fn->instruction_count && fn->instructions[lo].offset == offset)
    return &fn->instructions[lo];
  return NULL;
}

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
  if (t->count == t->capacity) {
    size_t cap = t->capacity ? t->capacity * 2 : 64;
    const char **names =
        (const char **)realloc((void *)t->names, cap * sizeof *names);
    if (!names)
      return -1;
    t->names = names;
    t->capacity = cap;
  }
  if (mprof__map_add(&t->map, mprof__hash_pointer(name), (uint32_t)t->count))
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
          p->registers, p->static_shared, p->size, state_names[p->sass_state]);
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
        return oom();
      }
  }
  size_t len = strlen(path) + sizeof ".partial";
  char *partial = (char *)malloc(len);
  if (!partial) {
    file_table_free(&files);
    return oom();
  }
  snprintf(partial, len, "%s.partial", path);
  FILE *f = fopen(partial, "w");
  if (!f) {
    int err = errno;
    free(partial);
    file_table_free(&files);
    return mprof__error_set(MPROF_EIO, "%s: cannot create: %s", path,
                            strerror(err));
  }
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
  int failed = ferror(f);
  int err = failed ? EIO : 0;
  if (fflush(f) != 0 && !failed) {
    failed = 1;
    err = errno;
  }
  if (!failed && fsync(fileno(f)) != 0 && errno != EINVAL) {
    failed = 1;
    err = errno;
  }
  if (fclose(f) != 0 && !failed) {
    failed = 1;
    err = errno;
  }
  if (!failed && rename(partial, path) != 0) {
    failed = 1;
    err = errno;
  }
  if (failed) {
    unlink(partial);
    free(partial);
    return mprof__error_set(MPROF_EIO, "%s: cannot write: %s", path,
                            strerror(err));
  }
  free(partial);
  return 0;
}

/* ---- loading -------------------------------------------------------------
 */

typedef struct loader {
  const char *path;
  mprof_sidecar *sc;
  uint64_t cell_budget;
  size_t file_count;
  const char **files; /* interned */
} loader;

#define HINT                                                                   \
  "the sidecar is damaged or was not written by mprof; rebuild it with "       \
  "'mprof sass --rebuild TRACE'"

/* "PATH: WHERE: WHAT (hint)". */
static int bad(const loader *l, const char *where, const char *fmt, ...)
    MPROF__PRINTF(3, 4);

static int bad(const loader *l, const char *where, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (where && *where)
    return mprof__error_set(MPROF_EFORMAT, "%s: %s: %s (" HINT ")", l->path,
                            where, what);
  return mprof__error_set(MPROF_EFORMAT, "%s: %s (" HINT ")", l->path, what);
}

/* json-c gives NULL for a JSON null; an array item or a key that is null
 * is handed around as this marker, so "missing" means really absent. */
static int null_marker;
#define JSON_NULL ((json_object *)&null_marker)

static json_object *item_of(json_object *array, size_t i) {
  json_object *v = json_object_array_get_idx(array, i);
  return v ? v : JSON_NULL;
}

static int is_type(json_object *o, json_type type) {
  return o && o != JSON_NULL && json_object_is_type(o, type);
}

static const char *type_word(json_object *o) {
  if (o == JSON_NULL)
    return "null";
  switch (json_object_get_type(o)) {
  case json_type_null: return "null";
  case json_type_boolean: return "a boolean";
  case json_type_double: return "a fraction";
  case json_type_int: return "an integer";
  case json_type_object: return "an object";
  case json_type_array: return "an array";
  case json_type_string: return "a string";
  default: return "something else";
  }
}

/* An unsigned integer no larger than @p max. */
static int get_uint(const loader *l, const char *where, const char *field,
                    json_object *o, uint64_t max, uint64_t *out) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (is_type(o, json_type_double))
    return bad(l, where, "%s is not an integer (it is a fraction)", field);
  if (!is_type(o, json_type_int))
    return bad(l, where, "%s is not a number (it is %s)", field, type_word(o));
  int64_t v = json_object_get_int64(o);
  if (v < 0)
    return bad(l, where, "%s is negative (%lld)", field, (long long)v);
  uint64_t u = json_object_get_uint64(o);
  if (u == UINT64_MAX) /* json-c stops there: the number may be larger */
    return bad(l, where, "%s is out of range (too large; at most %llu)", field,
               (unsigned long long)max);
  if (u > max)
    return bad(l, where, "%s is out of range (%llu; at most %llu)", field,
               (unsigned long long)u, (unsigned long long)max);
  *out = u;
  return 0;
}

static int get_u32(const loader *l, const char *where, const char *field,
                   json_object *o, uint32_t *out) {
  uint64_t v;
  int rc = get_uint(l, where, field, o, UINT32_MAX, &v);
  if (!rc)
    *out = (uint32_t)v;
  return rc;
}

/* A string without NUL characters; *out points into @p o. */
static int get_string(const loader *l, const char *where, const char *field,
                      json_object *o, const char **out) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (!is_type(o, json_type_string))
    return bad(l, where, "%s is not a string (it is %s)", field, type_word(o));
  const char *s = json_object_get_string(o);
  if (strlen(s) != (size_t)json_object_get_string_len(o))
    return bad(l, where, "%s contains a NUL character", field);
  *out = s;
  return 0;
}

static json_object *field_of(json_object *obj, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(obj, key, &v))
    return NULL;
  return v ? v : JSON_NULL;
}

static int get_array(const loader *l, const char *where, const char *field,
                     json_object *o, size_t *count) {
  if (!o)
    return bad(l, where, "%s is missing", field);
  if (!is_type(o, json_type_array))
    return bad(l, where, "%s is not an array (it is %s)", field, type_word(o));
  *count = json_object_array_length(o);
  return 0;
}

static int parse_crc(const loader *l, const char *where, json_object *o,
                     uint64_t *out) {
  const char *s;
  int rc = get_string(l, where, "cubin_crc", o, &s);
  if (rc)
    return rc;
  size_t n = strlen(s);
  if (n == 0 || n > 16)
    return bad(l, where,
               "cubin_crc \"%.40s\" is not 1 to 16 hexadecimal digits", s);
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (unsigned)(c - 'A' + 10);
    else
      return bad(l, where, "cubin_crc \"%.40s\" is not hexadecimal", s);
    v = (v << 4) | d;
  }
  *out = v;
  return 0;
}

static int load_instruction(loader *l, const char *fwhere, uint32_t fn,
                            const mprof_sidecar_function *info, json_object *o,
                            size_t index, int have_prev, uint32_t prev) {
  static const char *const names[6] = {"offset",   "predicate",  "opcode",
                                       "operands", "file_index", "line"};
  char where[160];
  snprintf(where, sizeof where, "%s.instructions[%zu]", fwhere, index);
  if (!is_type(o, json_type_array))
    return bad(l, where, "is not an array (it is %s)", type_word(o));
  if (json_object_array_length(o) != 6)
    return bad(l, where,
               "has %zu items, expected 6 [offset, predicate, opcode, "
               "operands, file_index, line]",
               json_object_array_length(o));
  mprof_sass_instruction in;
  memset(&in, 0, sizeof in);
  int rc = get_u32(l, where, names[0], item_of(o, 0), &in.offset);
  if (!rc)
    rc = get_string(l, where, names[1], item_of(o, 1), &in.predicate);
  if (!rc)
    rc = get_string(l, where, names[2], item_of(o, 2), &in.opcode);
  if (!rc)
    rc = get_string(l, where, names[3], item_of(o, 3), &in.operands);
  if (rc)
    return rc;
  json_object *fi = item_of(o, 4);
  if (is_type(fi, json_type_int) && json_object_get_int64(fi) == -1) {
    in.file = "";
  } else {
    uint64_t v;
    rc = get_uint(l, where, names[4], fi, UINT32_MAX, &v);
    if (rc)
      return rc;
    if (v >= l->file_count)
      return bad(l, where,
                 "file_index %llu does not exist (files has %zu; -1 means "
                 "none)",
                 (unsigned long long)v, l->file_count);
    in.file = l->files[v];
  }
  rc = get_u32(l, where, names[5], item_of(o, 5), &in.line);
  if (rc)
    return rc;
  if (have_prev && in.offset <= prev)
    return bad(l, where,
               in.offset == prev
                   ? "offset 0x%x appears twice"
                   : "offset 0x%x comes after 0x%x (offsets must ascend)",
               in.offset, prev);
  if (info->size && in.offset >= info->size)
    return bad(l, where,
               "offset 0x%x is past the end of the function (%u "
               "bytes)",
               in.offset, info->size);
  rc = mprof_sidecar_add_instruction(l->sc, fn, &in);
  return rc == MPROF_ENOMEM ? rc : (rc ? bad(l, where, "%s", "rejected") : 0);
}

/* Strict decimal: no sign, no leading zeros. */
static int parse_reason_key(const char *key, uint32_t *out) {
  size_t n = strlen(key);
  if (n == 0 || n > 4 || (n > 1 && key[0] == '0'))
    return -1;
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (key[i] < '0' || key[i] > '9')
      return -1;
    v = v * 10 + (uint32_t)(key[i] - '0');
  }
  if (v > MPROF__SIDECAR_MAX_REASON)
    return -1;
  *out = v;
  return 0;
}

static int load_pc(loader *l, const char *fwhere, uint32_t fn, json_object *o,
                   size_t index, int have_prev, uint32_t prev) {
  char where[160];
  snprintf(where, sizeof where, "%s.pcs[%zu]", fwhere, index);
  if (!is_type(o, json_type_array))
    return bad(l, where, "is not an array (it is %s)", type_word(o));
  if (json_object_array_length(o) != 2)
    return bad(l, where, "has %zu items, expected 2 [offset, {reason: count}]",
               json_object_array_length(o));
  uint32_t offset;
  int rc = get_u32(l, where, "offset", item_of(o, 0), &offset);
  if (rc)
    return rc;
  if (have_prev && offset <= prev)
    return bad(l, where,
               offset == prev
                   ? "offset 0x%x appears twice"
                   : "offset 0x%x comes after 0x%x (offsets must ascend)",
               offset, prev);
  json_object *counts = item_of(o, 1);
  if (!is_type(counts, json_type_object))
    return bad(l, where, "the counts are not an object (they are %s)",
               type_word(counts));
  /* Check every key first, so the table is sized once and within budget. */
  uint32_t top = 0;
  int any = 0;
  json_object_object_foreach(counts, key, value) {
    uint32_t reason;
    if (parse_reason_key(key, &reason) != 0)
      return bad(l, where,
                 "stall reason \"%.20s\" is not an index from 0 to %u", key,
                 MPROF__SIDECAR_MAX_REASON);
    char field[48];
    snprintf(field, sizeof field, "the count of reason %u", reason);
    uint64_t v;
    rc = get_uint(l, where, field, value ? value : JSON_NULL, INT64_MAX, &v);
    if (rc)
      return rc;
    if (reason + 1 > top)
      top = reason + 1;
    any = 1;
  }
  if (l->sc->cells + top > l->cell_budget)
    return bad(l, where,
               "the PC count tables need more memory than a file of this "
               "size can justify (%llu cells)",
               (unsigned long long)(l->sc->cells + top));
  json_object_object_foreach(counts, key2, value2) {
    uint32_t reason = 0;
    parse_reason_key(key2, &reason);
    rc = mprof_sidecar_add_samples(l->sc, fn, offset, reason,
                                   json_object_get_uint64(value2));
    if (rc)
      return rc;
  }
  if (!any) {
    /* Keep the PC (an empty table) so the file round-trips. */
    rc = mprof_sidecar_add_samples(l->sc, fn, offset, 0, 0);
    if (rc)
      return rc;
  }
  return 0;
}

static int load_function(loader *l, json_object *o, size_t index) {
  char where[64];
  snprintf(where, sizeof where, "functions[%zu]", index);
  if (!is_type(o, json_type_object))
    return bad(l, where, "is not an object (it is %s)", type_word(o));
  mprof_sidecar_function info;
  memset(&info, 0, sizeof info);
  int rc = get_string(l, where, "name", field_of(o, "name"), &info.name);
  if (!rc && !*info.name)
    rc = bad(l, where, "name is empty");
  if (!rc)
    rc = get_string(l, where, "demangled", field_of(o, "demangled"),
                    &info.demangled);
  if (!rc)
    rc = parse_crc(l, where, field_of(o, "cubin_crc"), &info.cubin_crc);
  if (!rc)
    rc = get_u32(l, where, "function_index", field_of(o, "function_index"),
                 &info.function_index);
  if (!rc)
    rc = get_u32(l, where, "device", field_of(o, "device"), &info.device);
  if (!rc)
    rc = get_u32(l, where, "registers", field_of(o, "registers"),
                 &info.registers);
  if (!rc)
    rc = get_u32(l, where, "static_shared", field_of(o, "static_shared"),
                 &info.static_shared);
  if (!rc)
    rc = get_u32(l, where, "size", field_of(o, "size"), &info.size);
  const char *state = NULL;
  if (!rc)
    rc = get_string(l, where, "sass_state", field_of(o, "sass_state"), &state);
  if (rc)
    return rc;
  size_t s = 0;
  while (s < STATE_COUNT && strcmp(state, state_names[s]) != 0)
    s++;
  if (s == STATE_COUNT)
    return bad(l, where,
               "sass_state \"%.40s\" is not present, no_cubin, "
               "no_disassembler or failed",
               state);
  info.sass_state = (uint32_t)s;
  rc = get_string(l, where, "sass_error", field_of(o, "sass_error"),
                  &info.sass_error);
  if (rc)
    return rc;
  json_object *insns = field_of(o, "instructions");
  json_object *pcs = field_of(o, "pcs");
  size_t insn_count, pc_count;
  rc = get_array(l, where, "instructions", insns, &insn_count);
  if (!rc)
    rc = get_array(l, where, "pcs", pcs, &pc_count);
  if (rc)
    return rc;
  const mprof_sidecar_function *dup =
      mprof_sidecar_find(l->sc, info.name, info.cubin_crc);
  if (dup && dup->cubin_crc == info.cubin_crc)
    return bad(l, where,
               "repeats function \"%.80s\" with cubin_crc %016llx (each "
               "(name, cubin_crc) appears once)",
               info.name, (unsigned long long)info.cubin_crc);
  uint32_t fn;
  rc = mprof_sidecar_add_function(l->sc, &fn, &info);
  if (rc)
    return rc == MPROF_ENOMEM ? rc : bad(l, where, "%s", mprof_error_last());
  uint32_t prev = 0;
  for (size_t i = 0; i < insn_count; i++) {
    json_object *in = item_of(insns, i);
    rc = load_instruction(l, where, fn, &info, in, i, i > 0, prev);
    if (rc)
      return rc;
    prev = mprof_sidecar_function_at(l->sc, fn)->instructions[i].offset;
  }
  for (size_t i = 0; i < pc_count; i++) {
    rc = load_pc(l, where, fn, item_of(pcs, i), i, i > 0, prev);
    if (rc)
      return rc;
    prev = mprof_sidecar_function_at(l->sc, fn)->pcs[i].offset;
  }
  return 0;
}

static int load_root(loader *l, json_object *root) {
  if (!is_type(root, json_type_object))
    return bad(l, NULL, "is not a JSON object");
  json_object *format = field_of(root, "format");
  if (!format || !is_type(format, json_type_string) ||
      strcmp(json_object_get_string(format), SIDECAR_FORMAT) != 0)
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: format is not \"" SIDECAR_FORMAT
                            "\" (not an mprof PC sidecar; these are written "
                            "by 'mprof record' and 'mprof sass')",
                            l->path);
  uint64_t version;
  int rc = get_uint(l, NULL, "version", field_of(root, "version"), UINT32_MAX,
                    &version);
  if (rc)
    return rc;
  if (version != SIDECAR_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "%s: sidecar version %llu is not supported (this "
                            "mprof reads version %d; upgrade mprof, or "
                            "rebuild the sidecar with 'mprof sass --rebuild "
                            "TRACE')",
                            l->path, (unsigned long long)version,
                            SIDECAR_VERSION);
  json_object *reasons = field_of(root, "stall_reasons");
  size_t n;
  rc = get_array(l, NULL, "stall_reasons", reasons, &n);
  if (rc)
    return rc;
  if (n > MPROF__SIDECAR_MAX_REASON + 1)
    return bad(l, "stall_reasons", "has %zu names, more than the %u allowed", n,
               MPROF__SIDECAR_MAX_REASON + 1);
  for (size_t i = 0; i < n; i++) {
    char where[48];
    snprintf(where, sizeof where, "stall_reasons[%zu]", i);
    const char *name;
    rc = get_string(l, where, "the name", item_of(reasons, i), &name);
    if (!rc)
      rc = mprof_sidecar_set_stall_reason(l->sc, (uint32_t)i, name);
    if (rc)
      return rc;
  }
  json_object *files = field_of(root, "files");
  rc = get_array(l, NULL, "files", files, &l->file_count);
  if (rc)
    return rc;
  l->files = (const char **)calloc(l->file_count ? l->file_count : 1,
                                   sizeof *l->files);
  if (!l->files)
    return oom();
  for (size_t i = 0; i < l->file_count; i++) {
    char where[48];
    snprintf(where, sizeof where, "files[%zu]", i);
    const char *name;
    rc = get_string(l, where, "the name", item_of(files, i), &name);
    if (rc)
      return rc;
    if (!*name)
      return bad(l, where, "the name is empty");
    l->files[i] = intern(l->sc, name);
    if (!l->files[i])
      return oom();
  }
  json_object *fns = field_of(root, "functions");
  rc = get_array(l, NULL, "functions", fns, &n);
  if (rc)
    return rc;
  for (size_t i = 0; i < n; i++) {
    rc = load_function(l, item_of(fns, i), i);
    if (rc)
      return rc;
  }
  return 0;
}

static int read_whole(const char *path, char **out, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    int err = errno;
    return mprof__error_set(err == ENOENT ? MPROF_ENOTFOUND : MPROF_EIO,
                            "%s: cannot open: %s", path, strerror(err));
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return mprof__error_set(MPROF_EINVAL, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > SIDECAR_MAX_FILE) {
    fclose(f);
    return mprof__error_set(MPROF_EFORMAT,
                            "%s: %llu bytes is more than the %u a sidecar may "
                            "have (" HINT ")",
                            path, (unsigned long long)st.st_size,
                            SIDECAR_MAX_FILE);
  }
  size_t n = (size_t)st.st_size;
  char *data = (char *)malloc(n + 1);
  if (!data) {
    fclose(f);
    return oom();
  }
  size_t got = n ? fread(data, 1, n, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (err || got != n) {
    free(data);
    return mprof__error_set(MPROF_EIO, "%s: cannot read", path);
  }
  data[n] = '\0';
  *out = data;
  *size = n;
  return 0;
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int mprof_sidecar_load(mprof_sidecar **out, const char *path) {
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_load: NULL argument");
  *out = NULL;
  char *text = NULL;
  size_t size = 0;
  int rc = read_whole(path, &text, &size);
  if (rc)
    return rc;
  loader l;
  memset(&l, 0, sizeof l);
  l.path = path;
  l.cell_budget = (uint64_t)size * SIDECAR_CELLS_PER_BYTE + SIDECAR_CELLS_SLACK;
  size_t first = 0;
  while (first < size && is_space(text[first]))
    first++;
  if (first == size) {
    free(text);
    return bad(&l, NULL, "is empty");
  }
  if (text[first] != '{') {
    free(text);
    return bad(&l, NULL, "byte %zu: is not a JSON object (expected '{')",
               first);
  }
  struct json_tokener *tok = json_tokener_new_ex(SIDECAR_MAX_DEPTH);
  if (!tok) {
    free(text);
    return oom();
  }
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  json_object *root = json_tokener_parse_ex(tok, text, (int)size);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!root) {
    free(text);
    if (jerr == json_tokener_continue)
      return bad(&l, NULL,
                 "byte %zu: the JSON ends before it is complete (the file "
                 "is truncated)",
                 size);
    if (jerr == json_tokener_error_depth)
      return bad(&l, NULL, "byte %zu: nested deeper than %d levels", end,
                 SIDECAR_MAX_DEPTH);
    return bad(&l, NULL, "byte %zu: JSON syntax error: %s", end,
               json_tokener_error_desc(jerr));
  }
  while (end < size && is_space(text[end]))
    end++;
  free(text);
  if (end < size) {
    json_object_put(root);
    return bad(&l, NULL, "byte %zu: unexpected data after the JSON object",
               end);
  }
  rc = mprof_sidecar_new(&l.sc);
  if (!rc)
    rc = load_root(&l, root);
  json_object_put(root);
  free((void *)l.files);
  if (rc) {
    mprof_sidecar_free(l.sc);
    return rc;
  }
  *out = l.sc;
  return 0;
}
