/*
 * mprof — the TRACE.mprof.pc.json sidecar's in-memory model (its JSON
 * writer is sidecar_save.c, its reader sidecar_load.c). The schema is
 * docs/SIDECAR.md.
 *
 * Strings live in one interning pool per sidecar: a sidecar of a large
 * kernel holds hundreds of thousands of instructions but only a few hundred
 * distinct opcodes and a handful of file names.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/sidecar.h"
#include "sass_internal.h"

#include "sidecar_internal.h"

const char *const mprof__sidecar_state_names[STATE_COUNT] = {
    "present", "no_cubin", "no_disassembler", "failed", "deferred"};

/* ---- string pool ---------------------------------------------------------
 */

int mprof__sidecar_oom(void) {
  return mprof__error_set(MPROF_ENOMEM, "sidecar: out of memory");
}

const char *mprof__sidecar_intern(mprof_sidecar *sc, const char *s) {
  if (!s || !*s)
    return "";
  string_pool *p = &sc->strings;
  uint64_t h = mprof__hash64(s, strlen(s));
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&p->map, h, &cursor)) != MPROF__MAP_NONE)
    if (strcmp(p->strings[i], s) == 0)
      return p->strings[i];
  const char *copy = mprof__arena_strdup(&p->arena, s);
  if (!copy || MPROF__GROW(p->strings, p->capacity, p->count + 1) ||
      mprof__map_add(&p->map, h, (uint32_t)p->count))
    return NULL;
  p->strings[p->count++] = copy;
  return copy;
}

/* ---- model ---------------------------------------------------------------
 */

int mprof_sidecar_new(mprof_sidecar **out) {
  if (!out)
    return mprof__error_set(MPROF_EINVAL, "mprof_sidecar_new: NULL");
  *out = (mprof_sidecar *)calloc(1, sizeof **out);
  return *out ? 0 : mprof__sidecar_oom();
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
  mprof__arena_free(&sidecar->strings.arena);
  free((void *)sidecar->strings.strings);
  mprof__map_free(&sidecar->strings.map);
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
      return mprof__sidecar_oom();
    for (size_t i = sidecar->reason_count; i <= index; i++)
      r[i] = "";
    sidecar->reasons = r;
    sidecar->reason_count = index + 1;
  }
  const char *copy = mprof__sidecar_intern(sidecar, name);
  if (!copy)
    return mprof__sidecar_oom();
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
  if (MPROF__GROW(sidecar->fns, sidecar->fn_capacity, sidecar->fn_count + 1))
    return mprof__sidecar_oom();
  sidecar_fn *f = (sidecar_fn *)calloc(1, sizeof *f);
  if (!f)
    return mprof__sidecar_oom();
  f->pub = *fn;
  f->pub.name = mprof__sidecar_intern(sidecar, fn->name);
  f->pub.demangled = mprof__sidecar_intern(sidecar, fn->demangled);
  f->pub.sass_error = mprof__sidecar_intern(
      sidecar, fn->sass_state == MPROF_SASS_FAILED ? fn->sass_error : "");
  f->pub.instruction_count = 0;
  f->pub.instructions = NULL;
  f->pub.pc_count = 0;
  f->pub.pcs = NULL;
  if (!f->pub.name || !f->pub.demangled || !f->pub.sass_error) {
    free(f);
    return mprof__sidecar_oom();
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
  if (MPROF__GROW(f->insns, f->insn_capacity, n + 1))
    return mprof__sidecar_oom();
  mprof_sass_instruction *dst = &f->insns[n];
  dst->offset = insn->offset;
  dst->line = insn->line;
  dst->predicate = mprof__sidecar_intern(sidecar, insn->predicate);
  dst->opcode = mprof__sidecar_intern(sidecar, insn->opcode);
  dst->operands = mprof__sidecar_intern(sidecar, insn->operands);
  dst->file = mprof__sidecar_intern(sidecar, insn->file);
  if (!dst->predicate || !dst->opcode || !dst->operands || !dst->file)
    return mprof__sidecar_oom();
  f->pub.instructions = f->insns;
  f->pub.instruction_count = n + 1;
  return 0;
}

/* Position of the PC at @p offset in @p f, or where it would go. */
static size_t pc_position(const sidecar_fn *f, uint32_t offset) {
  size_t lo, hi = f->pub.pc_count;
  if (hi && f->pcs[hi - 1].offset < offset)
    return hi; /* the common case: samples arrive sorted */
  MPROF__LOWER_BOUND(lo, hi, mid, f->pcs[mid].offset < offset);
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
    if (MPROF__GROW(f->pcs, f->pc_capacity, f->pub.pc_count + 1))
      return mprof__sidecar_oom();
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
      return mprof__sidecar_oom();
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
  const char *copy = mprof__sidecar_intern(
      sidecar, state == MPROF_SASS_FAILED ? message : NULL);
  if (!copy)
    return mprof__sidecar_oom();
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
  const char *demangled = mprof__sidecar_intern(sidecar, info->demangled);
  if (!demangled)
    return mprof__sidecar_oom();
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
  size_t lo;
  MPROF__LOWER_BOUND(lo, fn->instruction_count, mid,
                     fn->instructions[mid].offset < offset);
  if (lo < fn->instruction_count && fn->instructions[lo].offset == offset)
    return &fn->instructions[lo];
  return NULL;
}

char *mprof_sass_instruction_text(char *buf, size_t size,
                                  const mprof_sass_instruction *in) {
  if (!buf || !size)
    return buf;
  if (!in) {
    buf[0] = '\0';
    return buf;
  }
  snprintf(buf, size, "%s%s%s%s%s", in->predicate ? in->predicate : "",
           in->predicate && *in->predicate ? " " : "",
           in->opcode ? in->opcode : "",
           in->operands && *in->operands ? " " : "",
           in->operands ? in->operands : "");
  return buf;
}
