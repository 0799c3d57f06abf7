/*
 * mprof — a kernel's PC samples per source line and per inlined function
 * (lines.h).
 *
 * The kernel's instructions are listed once, by offset, each with its line
 * and inline chain; the join's per-instruction samples are then summed into
 * their lines and functions. The cubin (when the trace keeps it) is opened
 * here and kept open: the frames' strings are its own.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "internal.h"
#include "mprof/lines.h"
#include "mprof/sass.h"
#include "mprof/status.h"

MPROF__VERSIONS(lines_options, "lines options",
                MPROF__END_OF(mprof_lines_options, flags),
                MPROF__END_OF(mprof_lines_options, launch));

int mprof_lines_options_init(mprof_lines_options *opts, unsigned version) {
  mprof_lines_options init = MPROF_LINES_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &lines_options);
}

/* Frames kept per instruction at most (deeper chains are cut). */
#define FRAMES_MAX 64

struct mprof_lines {
  int origin;
  uint64_t samples;
  mprof_line_stats *lines; /* hottest first */
  size_t line_count;
  const char **files;
  size_t file_count;
  mprof_line_instruction *insns; /* by offset */
  size_t insn_count;
  mprof_inline_stats *fns; /* by self samples */
  size_t fn_count;
  mprof_sass_cubin *cubin;    /* owns the frames' strings; may be NULL */
  mprof_pc_stats *launch_pcs; /* one launch's samples per instruction */
  mprof__arena arena;         /* frames, offsets, reasons, names */
};

/* ---- building ----------------------------------------------------------- */

/* The trace's cubin holding @p mangled under @p crc (0: any), opened; NULL
 * when none does. */
static mprof_sass_cubin *open_cubin(const mprof_trace *trace, uint64_t crc,
                                    const char *mangled,
                                    const mprof_sass_function **fn) {
  size_t n;
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      if ((pass == 0) != (crc && cubins[i].crc == crc))
        continue;
      size_t size;
      const void *blob = mprof_trace_cubin_blob(trace, &cubins[i], &size);
      mprof_sass_cubin *c;
      if (!blob || mprof_sass_cubin_open(&c, blob, size, NULL) != 0)
        continue;
      *fn = mprof_sass_cubin_find(c, mangled);
      if (*fn && ((*fn)->flags & MPROF_SASS_FUNCTION_LINES))
        return c;
      mprof_sass_cubin_free(c);
    }
  return NULL;
}

static int by_offset(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The offsets of the kernel's instructions: its code, its sidecar
 * instructions and its sampled ones, once each, ascending. */
static uint32_t *list_offsets(const mprof_sass_cubin *cubin,
                              const mprof_sass_function *cfn,
                              const mprof_sidecar_function *sfn,
                              const mprof_pc_stats *const *pc, size_t pcs,
                              size_t *count) {
  size_t cap = 0, n = 0;
  uint32_t *out = NULL;
  if (cubin && cfn) {
    uint32_t step = mprof_sass_cubin_instruction_size(cubin);
    for (uint32_t at = 0; at < cfn->size; at += step)
      if (MPROF__GROW(out, cap, n + 1) == 0)
        out[n++] = at;
      else
        goto fail;
  }
  for (size_t i = 0; sfn && i < sfn->instruction_count; i++) {
    if (MPROF__GROW(out, cap, n + 1))
      goto fail;
    out[n++] = sfn->instructions[i].offset;
  }
  for (size_t i = 0; i < pcs; i++) {
    if (MPROF__GROW(out, cap, n + 1))
      goto fail;
    out[n++] = pc[i]->offset;
  }
  mprof__qsort(out, n, sizeof *out, by_offset);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (!u || out[u - 1] != out[i])
      out[u++] = out[i];
  *count = u;
  return out;
fail:
  free(out);
  return NULL;
}

/* A line being summed: its key and its per-reason counts. */
typedef struct line_acc {
  const char *file;
  uint32_t line;
  const char *function;
  uint64_t *counts; /* per join reason */
  size_t insn_count;
} line_acc;

typedef struct fn_acc {
  const char *function;
  uint64_t self, total, not_issued;
  uint64_t *counts;
} fn_acc;

typedef struct build {
  mprof_lines *out;
  const mprof_join *join;
  size_t reason_count;
  line_acc *lines;
  size_t line_count, line_cap;
  fn_acc *fns;
  size_t fn_count, fn_cap;
} build;

static uint32_t file_index(mprof_lines *l, const char *file, size_t *cap) {
  for (size_t i = 0; i < l->file_count; i++)
    if (strcmp(l->files[i], file) == 0)
      return (uint32_t)i;
  if (MPROF__GROW(l->files, *cap, l->file_count + 1))
    return MPROF_INDEX_NONE;
  l->files[l->file_count] = file;
  return (uint32_t)l->file_count++;
}

/* The accumulator of (file, line), added when new; NULL out of memory.
 * Lines are few (hundreds), so a linear search from the last hit is cheap
 * enough and keeps the code order. */
static line_acc *line_of(build *b, const char *file, uint32_t line,
                         const char *function) {
  for (size_t i = b->line_count; i-- > 0;)
    if (b->lines[i].line == line && strcmp(b->lines[i].file, file) == 0)
      return &b->lines[i];
  if (MPROF__GROW(b->lines, b->line_cap, b->line_count + 1))
    return NULL;
  line_acc *a = &b->lines[b->line_count];
  memset(a, 0, sizeof *a);
  a->file = file;
  a->line = line;
  a->function = function;
  a->counts = (uint64_t *)mprof__arena_alloc(
      &b->out->arena, (b->reason_count + 1) * sizeof *a->counts);
  if (!a->counts)
    return NULL;
  b->line_count++;
  return a;
}

static fn_acc *fn_of(build *b, const char *function) {
  for (size_t i = 0; i < b->fn_count; i++)
    if (strcmp(b->fns[i].function, function) == 0)
      return &b->fns[i];
  if (MPROF__GROW(b->fns, b->fn_cap, b->fn_count + 1))
    return NULL;
  fn_acc *a = &b->fns[b->fn_count];
  memset(a, 0, sizeof *a);
  a->function = function;
  a->counts = (uint64_t *)mprof__arena_alloc(
      &b->out->arena, (b->reason_count + 1) * sizeof *a->counts);
  if (!a->counts)
    return NULL;
  b->fn_count++;
  return a;
}

static void add_reasons(uint64_t *counts, const mprof_pc_stats *pc,
                        size_t reason_count) {
  for (size_t r = 0; pc && r < pc->reason_count; r++) {
    const mprof_reason_samples *rs = mprof_pc_stats_reason(pc, r);
    if (rs->reason < reason_count)
      counts[rs->reason] += rs->samples;
  }
}

static int by_samples_desc(const void *a, const void *b) {
  const mprof_reason_samples *x = (const mprof_reason_samples *)a,
                             *y = (const mprof_reason_samples *)b;
  MPROF__ORDER_BY_DESC(samples);
  MPROF__ORDER_BY(reason);
  return 0;
}

/* The non-zero @p counts as a reason list, largest first, in the arena. */
static const mprof_reason_samples *reason_list(mprof_lines *l,
                                               const uint64_t *counts,
                                               size_t reason_count,
                                               size_t *out_count) {
  size_t n = 0;
  for (size_t r = 0; r < reason_count; r++)
    n += counts[r] != 0;
  *out_count = n;
  mprof_reason_samples *list = (mprof_reason_samples *)mprof__arena_alloc(
      &l->arena, (n + 1) * sizeof *list);
  if (!list)
    return NULL;
  n = 0;
  for (size_t r = 0; r < reason_count; r++)
    if (counts[r]) {
      list[n].reason = (uint32_t)r;
      list[n++].samples = counts[r];
    }
  mprof__qsort(list, n, sizeof *list, by_samples_desc);
  return list;
}

/* The join's reason of the trace's stall reason @p index on @p device
 * (reasons are joined by name), or MPROF_INDEX_NONE. */
static uint32_t join_reason(const mprof_join *join, const mprof_trace *trace,
                            uint32_t device, uint32_t index) {
  size_t n;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(trace, &n);
  for (size_t i = 0; i < n; i++) {
    if (sr[i].device != device || sr[i].index != index)
      continue;
    const char *name =
        mprof_stall_reason_short_name(mprof_trace_string(trace, sr[i].name));
    for (size_t r = 0; r < mprof_join_reason_count(join); r++)
      if (strcmp(mprof_join_reason(join, r)->name, name) == 0)
        return (uint32_t)r;
  }
  return MPROF_INDEX_NONE;
}

static int by_pc_offset(const void *a, const void *b) {
  const mprof_pc_stats *x = (const mprof_pc_stats *)a,
                       *y = (const mprof_pc_stats *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The samples of launch @p launch of kernel @p ks per instruction, summed
 * from the trace's PC_SAMPLES of its correlation id and function, kept in
 * l->launch_pcs; returns pointers to them (caller frees), NULL out of
 * memory. */
static const mprof_pc_stats **launch_samples(mprof_lines *l,
                                             const mprof_join *join,
                                             const mprof_kernel_stats *ks,
                                             const mprof_sidecar_function *sfn,
                                             uint32_t launch, size_t *count) {
  const mprof_trace *trace = mprof_join_trace(join);
  size_t n, launches;
  const mprof_launch_record *lr = mprof_trace_launches(trace, &launches);
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(trace, &n);
  uint32_t corr = launch < launches ? lr[launch].correlation_id : 0;
  size_t reasons = mprof_join_reason_count(join), cap = 0, used = 0;
  mprof_pc_stats *stats = NULL;
  uint64_t *counts = NULL; /* per stats entry, per reason */
  *count = 0;
  for (size_t i = 0; corr && i < n; i++) {
    if (pc[i].correlation_id != corr ||
        strcmp(mprof_trace_string(trace, pc[i].function_name), ks->mangled))
      continue;
    uint32_t r = join_reason(join, trace, pc[i].device, pc[i].stall_reason);
    if (r == MPROF_INDEX_NONE)
      continue;
    size_t at = 0;
    while (at < used && stats[at].offset != pc[i].pc_offset)
      at++;
    if (at == used) {
      size_t old = cap;
      if (MPROF__GROW(stats, cap, used + 1))
        goto fail;
      uint64_t *grown =
          (uint64_t *)realloc(counts, (cap * reasons + 1) * sizeof *counts);
      if (!grown)
        goto fail;
      counts = grown;
      memset(counts + old * reasons, 0, (cap - old) * reasons * sizeof *counts);
      memset(&stats[used], 0, sizeof stats[used]);
      stats[used].offset = pc[i].pc_offset;
      stats[used].cubin_crc = pc[i].cubin_crc;
      stats[used].function_index = pc[i].function_index;
      stats[used].instruction =
          sfn ? mprof_sidecar_instruction(sfn, pc[i].pc_offset) : NULL;
      used++;
    }
    counts[at * reasons + r] += pc[i].samples;
    if (mprof_join_reason(join, r)->not_issued)
      stats[at].not_issued += pc[i].samples;
    else
      stats[at].samples += pc[i].samples;
  }
  for (size_t i = 0; i < used; i++) {
    stats[i].reasons =
        reason_list(l, counts + i * reasons, reasons, &stats[i].reason_count);
    if (!stats[i].reasons)
      goto fail;
  }
  mprof__qsort(stats, used, sizeof *stats, by_pc_offset);
  free(counts);
  l->launch_pcs = stats;
  const mprof_pc_stats **out =
      (const mprof_pc_stats **)calloc(used + 1, sizeof *out);
  for (size_t i = 0; out && i < used; i++)
    out[i] = &stats[i];
  *count = out ? used : 0;
  return out;
fail:
  free(stats);
  free(counts);
  return NULL;
}

static int by_heat(const void *a, const void *b) {
  const mprof_line_stats *x = (const mprof_line_stats *)a,
                         *y = (const mprof_line_stats *)b;
  MPROF__ORDER_BY_DESC(samples);
  MPROF__ORDER_BY(file_index);
  MPROF__ORDER_BY(line);
  return 0;
}

static int by_self(const void *a, const void *b) {
  const mprof_inline_stats *x = (const mprof_inline_stats *)a,
                           *y = (const mprof_inline_stats *)b;
  MPROF__ORDER_BY_DESC(self);
  MPROF__ORDER_BY_DESC(total);
  return strcmp(x->function, y->function);
}

/* Give every instruction its line and frames, and sum the samples. */
static int attribute(build *b, const mprof_kernel_stats *ks,
                     const mprof_sass_function *cfn,
                     const mprof_sidecar_function *sfn, size_t kernel,
                     size_t *insn_line) {
  mprof_lines *l = b->out;
  mprof_sass_frame frames[FRAMES_MAX];
  for (size_t i = 0; i < l->insn_count; i++) {
    mprof_line_instruction *in = &l->insns[i];
    const char *file = "";
    uint32_t line = 0;
    const char *function = ks->mangled;
    if (l->cubin) {
      size_t depth = mprof_sass_cubin_frames(l->cubin, cfn, in->offset, frames,
                                             FRAMES_MAX);
      if (depth > FRAMES_MAX)
        depth = FRAMES_MAX;
      if (depth) {
        mprof_sass_frame *kept = (mprof_sass_frame *)mprof__arena_alloc(
            &l->arena, depth * sizeof *kept);
        if (!kept)
          return MPROF_ENOMEM;
        memcpy(kept, frames, depth * sizeof *kept);
        in->frames = kept;
        in->frame_count = depth;
        file = frames[0].file;
        line = frames[0].line;
        function = frames[0].function;
      }
    } else if (in->instruction && in->instruction->line) {
      file = in->instruction->file;
      line = in->instruction->line;
      mprof_sass_frame *one =
          (mprof_sass_frame *)mprof__arena_alloc(&l->arena, sizeof *one);
      if (!one)
        return MPROF_ENOMEM;
      one->function = ks->mangled;
      one->file = file;
      one->line = line;
      in->frames = one;
      in->frame_count = 1;
    }
    (void)sfn;
    line_acc *acc = line_of(b, file, line, function);
    if (!acc)
      return MPROF_ENOMEM;
    acc->insn_count++;
    insn_line[i] = (size_t)(acc - b->lines);
    const mprof_pc_stats *pc = in->pc;
    if (!pc)
      continue;
    add_reasons(acc->counts, pc, b->reason_count);
    acc->counts[b->reason_count] += pc->not_issued;
    /* Per function: self for the innermost frame, total once per
     * function in the chain. */
    size_t depth = in->frame_count ? in->frame_count : 1;
    for (size_t f = 0; f < depth; f++) {
      const char *name = in->frame_count ? in->frames[f].function : function;
      int seen = 0;
      for (size_t g = 0; g < f && !seen; g++)
        seen = strcmp(in->frames[g].function, name) == 0;
      if (seen)
        continue;
      fn_acc *fa = fn_of(b, name);
      if (!fa)
        return MPROF_ENOMEM;
      fa->total += pc->samples;
      if (f == 0) {
        fa->self += pc->samples;
        fa->not_issued += pc->not_issued;
        add_reasons(fa->counts, pc, b->reason_count);
      }
    }
  }
  (void)kernel;
  return 0;
}

static int finish(build *b, size_t *insn_line) {
  mprof_lines *l = b->out;
  size_t file_cap = 0;
  l->lines = (mprof_line_stats *)calloc(b->line_count + 1, sizeof *l->lines);
  l->fns = (mprof_inline_stats *)calloc(b->fn_count + 1, sizeof *l->fns);
  if (!l->lines || !l->fns)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < b->line_count; i++) {
    line_acc *a = &b->lines[i];
    mprof_line_stats *s = &l->lines[i];
    s->file = a->file;
    s->file_index = file_index(l, a->file, &file_cap);
    if (s->file_index == MPROF_INDEX_NONE)
      return MPROF_ENOMEM;
    s->line = a->line;
    s->function = a->function;
    s->not_issued = a->counts[b->reason_count];
    s->reasons = reason_list(l, a->counts, b->reason_count, &s->reason_count);
    s->offsets = (uint32_t *)mprof__arena_alloc(
        &l->arena, (a->insn_count + 1) * sizeof *s->offsets);
    if (!s->reasons || !s->offsets)
      return MPROF_ENOMEM;
  }
  for (size_t k = 0; k < l->insn_count; k++) {
    mprof_line_stats *s = &l->lines[insn_line[k]];
    ((uint32_t *)s->offsets)[s->instruction_count++] = l->insns[k].offset;
    s->samples += l->insns[k].samples;
    l->samples += l->insns[k].samples;
  }
  l->line_count = b->line_count;
  for (size_t i = 0; i < l->line_count; i++)
    l->lines[i].share =
        l->samples ? (double)l->lines[i].samples / (double)l->samples : 0.0;
  /* The instructions point at their line by the index it has after the
   * sort: remember each accumulator's line by its key. */
  mprof__qsort(l->lines, l->line_count, sizeof *l->lines, by_heat);
  uint32_t *index_of = (uint32_t *)calloc(b->line_count + 1, sizeof *index_of);
  if (!index_of)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < l->line_count; i++)
    for (size_t a = 0; a < b->line_count; a++)
      if (l->lines[i].line == b->lines[a].line &&
          strcmp(l->lines[i].file, b->lines[a].file) == 0)
        index_of[a] = (uint32_t)i;
  for (size_t k = 0; k < l->insn_count; k++)
    l->insns[k].line_index = index_of[insn_line[k]];
  free(index_of);
  for (size_t i = 0; i < b->fn_count; i++) {
    fn_acc *a = &b->fns[i];
    mprof_inline_stats *s = &l->fns[i];
    s->function = a->function;
    char *dm = NULL;
    if (mprof_sass_demangle(&dm, a->function) == 0) {
      s->demangled = mprof__arena_strdup(&l->arena, dm);
      free(dm);
    } else {
      s->demangled = "";
    }
    s->self = a->self;
    s->total = a->total;
    s->not_issued = a->not_issued;
    s->reasons = reason_list(l, a->counts, b->reason_count, &s->reason_count);
    if (!s->demangled || !s->reasons)
      return MPROF_ENOMEM;
  }
  l->fn_count = b->fn_count;
  mprof__qsort(l->fns, l->fn_count, sizeof *l->fns, by_self);
  return 0;
}

int mprof_lines_build(mprof_lines **out, const mprof_join *join, size_t kernel,
                      const mprof_lines_options *opts) {
  if (!out || !join)
    return mprof__error_set(MPROF_EINVAL, "mprof_lines_build: NULL argument");
  *out = NULL;
  if (opts && mprof__version_size(&lines_options, opts->version) == 0)
    return MPROF_EVERSION;
  uint32_t launch =
      opts && opts->version >= 2 ? opts->launch : MPROF_INDEX_NONE;
  const mprof_kernel_stats *ks = mprof_join_kernel(join, kernel);
  if (!ks)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_lines_build: no kernel %zu (the join has "
                            "%zu)",
                            kernel, mprof_join_kernel_count(join));
  if (launch != MPROF_INDEX_NONE &&
      mprof_join_launch_kernel(join, launch) != (uint32_t)kernel)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_lines_build: launch %u is not a launch of "
                            "kernel %zu (%s)",
                            launch, kernel, ks->name);
  mprof_lines *l = (mprof_lines *)calloc(1, sizeof *l);
  if (!l)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  const mprof_sidecar_function *sfn = ks->function;
  const mprof_sass_function *cfn = NULL;
  l->cubin = open_cubin(mprof_join_trace(join),
                        sfn && sfn->cubin_crc ? sfn->cubin_crc : ks->cubin_crc,
                        ks->mangled, &cfn);
  int sidecar_lines = 0;
  for (size_t i = 0; sfn && i < sfn->instruction_count && !sidecar_lines; i++)
    sidecar_lines = sfn->instructions[i].line != 0;
  l->origin = l->cubin        ? MPROF_LINES_CUBIN
              : sidecar_lines ? MPROF_LINES_SIDECAR
                              : MPROF_LINES_NONE;
  build b;
  memset(&b, 0, sizeof b);
  b.out = l;
  b.join = join;
  b.reason_count = mprof_join_reason_count(join);
  size_t *insn_line = NULL;
  int rc = MPROF_ENOMEM;
  /* The samples: per instruction, of every launch (the join's) or of one
   * launch (summed here from its PC_SAMPLES). */
  const mprof_pc_stats **pc_list = NULL;
  size_t pcs = 0;
  uint32_t *offsets = NULL;
  if (launch == MPROF_INDEX_NONE) {
    mprof_join_pcs(join, kernel, &pcs);
    pc_list = (const mprof_pc_stats **)calloc(pcs + 1, sizeof *pc_list);
    for (size_t i = 0; pc_list && i < pcs; i++)
      pc_list[i] = mprof_join_pc(join, kernel, i);
  } else {
    pc_list = launch_samples(l, join, ks, sfn, launch, &pcs);
  }
  if (pc_list)
    offsets = list_offsets(l->cubin, cfn, sfn, pc_list, pcs, &l->insn_count);
  if (!offsets)
    goto done;
  l->insns =
      (mprof_line_instruction *)calloc(l->insn_count + 1, sizeof *l->insns);
  insn_line = (size_t *)calloc(l->insn_count + 1, sizeof *insn_line);
  if (!l->insns || !insn_line)
    goto done;
  for (size_t i = 0; i < l->insn_count; i++) {
    l->insns[i].offset = offsets[i];
    l->insns[i].line_index = MPROF_INDEX_NONE;
    if (sfn)
      l->insns[i].instruction = mprof_sidecar_instruction(sfn, offsets[i]);
  }
  /* The samples: the join's per-instruction stats of this function's
   * cubin; a kernel sampled in several cubins keeps the others' on line
   * 0 (their code is not this code). */
  uint64_t crc = sfn && sfn->cubin_crc ? sfn->cubin_crc : ks->cubin_crc;
  for (size_t i = 0; i < pcs; i++) {
    const mprof_pc_stats *pc = pc_list[i];
    size_t at;
    MPROF__LOWER_BOUND(at, l->insn_count, mid,
                       l->insns[mid].offset < pc->offset);
    if (at >= l->insn_count || (crc && pc->cubin_crc && pc->cubin_crc != crc))
      continue;
    l->insns[at].pc = pc;
    l->insns[at].samples = pc->samples;
  }
  rc = attribute(&b, ks, cfn, sfn, kernel, insn_line);
  if (rc == 0)
    rc = finish(&b, insn_line);
done:
  free(pc_list);
  free(offsets);
  free(insn_line);
  free(b.lines);
  free(b.fns);
  if (rc) {
    mprof_lines_free(l);
    return mprof__error_set(rc, "per-line analysis: out of memory");
  }
  *out = l;
  return 0;
}

void mprof_lines_free(mprof_lines *lines) {
  if (!lines)
    return;
  free(lines->lines);
  free((void *)lines->files);
  free(lines->insns);
  free(lines->fns);
  free(lines->launch_pcs);
  mprof_sass_cubin_free(lines->cubin);
  mprof__arena_free(&lines->arena);
  free(lines);
}

/* ---- reading ------------------------------------------------------------ */

int mprof_lines_origin(const mprof_lines *lines) {
  return lines ? lines->origin : MPROF_LINES_NONE;
}

uint64_t mprof_lines_samples(const mprof_lines *lines) {
  return lines ? lines->samples : 0;
}

size_t mprof_lines_count(const mprof_lines *lines) {
  return lines ? lines->line_count : 0;
}

const mprof_line_stats *mprof_lines_at(const mprof_lines *lines, size_t index) {
  return lines && index < lines->line_count ? &lines->lines[index] : NULL;
}

uint32_t mprof_lines_find(const mprof_lines *lines, const char *file,
                          uint32_t line) {
  for (size_t i = 0; lines && file && i < lines->line_count; i++)
    if (lines->lines[i].line == line && strcmp(lines->lines[i].file, file) == 0)
      return (uint32_t)i;
  return MPROF_INDEX_NONE;
}

const mprof_reason_samples *mprof_line_reason(const mprof_line_stats *line,
                                              size_t index) {
  return line && index < line->reason_count ? &line->reasons[index] : NULL;
}

size_t mprof_lines_file_count(const mprof_lines *lines) {
  return lines ? lines->file_count : 0;
}

const char *mprof_lines_file(const mprof_lines *lines, size_t index) {
  return lines && index < lines->file_count ? lines->files[index] : NULL;
}

size_t mprof_lines_instruction_count(const mprof_lines *lines) {
  return lines ? lines->insn_count : 0;
}

const mprof_line_instruction *
mprof_lines_instruction_at(const mprof_lines *lines, size_t index) {
  return lines && index < lines->insn_count ? &lines->insns[index] : NULL;
}

const mprof_line_instruction *
mprof_lines_instruction_find(const mprof_lines *lines, uint32_t offset) {
  if (!lines)
    return NULL;
  size_t at;
  MPROF__LOWER_BOUND(at, lines->insn_count, mid,
                     lines->insns[mid].offset < offset);
  return at < lines->insn_count && lines->insns[at].offset == offset
             ? &lines->insns[at]
             : NULL;
}

size_t mprof_lines_function_count(const mprof_lines *lines) {
  return lines ? lines->fn_count : 0;
}

const mprof_inline_stats *mprof_lines_function_at(const mprof_lines *lines,
                                                  size_t index) {
  return lines && index < lines->fn_count ? &lines->fns[index] : NULL;
}

const mprof_reason_samples *mprof_inline_reason(const mprof_inline_stats *fn,
                                                size_t index) {
  return fn && index < fn->reason_count ? &fn->reasons[index] : NULL;
}
