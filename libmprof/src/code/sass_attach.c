/*
 * mprof — giving a sidecar's functions code: matching them to cubins,
 * disassembling in groups on worker threads, taking listings, lines and
 * resources (`mprof sass TRACE FILE...`, and the last step of building a
 * sidecar in sass_sidecar.c); and counting the outcome in a report.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "internal.h"
#include "mprof/reasons.h"
#include "sass_internal.h"

/* Fails unless @p report (may be NULL) is of a version this library
 * knows; version 1 reports end before `deferred`. */
static int check_report(mprof_sass_report *report) {
  return report ? mprof__version_check("sass report", report->version, 1,
                                       MPROF_SASS_REPORT_VERSION)
                : 0;
}

int mprof__sass_begin(mprof_sass_options *copy, const mprof_sass_options *opts,
                      mprof_sass_report *report) {
  int rc = mprof__sass_options_take(copy, opts);
  return rc ? rc : check_report(report);
}

int mprof_sass_report_count(mprof_sass_report *report,
                            const mprof_sidecar *sidecar) {
  if (!report || !sidecar)
    return mprof__error_set(MPROF_EINVAL, "mprof_sass_report_count: NULL");
  int rc = check_report(report);
  if (rc)
    return rc;
  report->functions = mprof_sidecar_function_count(sidecar);
  report->with_sass = report->with_lines = report->no_cubin = 0;
  report->no_disassembler = report->failed = 0;
  report->samples = 0;
  size_t deferred = 0, deferred_sampled = 0;
  for (size_t i = 0; i < report->functions; i++) {
    const mprof_sidecar_function *f = mprof_sidecar_function_at(sidecar, i);
    switch (f->sass_state) {
    case MPROF_SASS_PRESENT: report->with_sass++; break;
    case MPROF_SASS_NO_CUBIN: report->no_cubin++; break;
    case MPROF_SASS_NO_DISASSEMBLER: report->no_disassembler++; break;
    case MPROF_SASS_DEFERRED:
      deferred++;
      deferred_sampled += f->pc_count > 0;
      break;
    default: report->failed++; break;
    }
    for (size_t k = 0; k < f->instruction_count; k++)
      if (f->instructions[k].line) {
        report->with_lines++;
        break;
      }
    /* Each sample once: the X_not_issued twins repeat a subset. */
    for (size_t p = 0; p < f->pc_count; p++)
      for (uint32_t r = 0; r < f->pcs[p].reason_count; r++)
        if (!mprof_stall_reason_is_not_issued(
                mprof_sidecar_stall_reason(sidecar, r)))
          report->samples += f->pcs[p].counts[r];
  }
  if (report->version >= 2) {
    report->deferred = deferred;
    report->deferred_sampled = deferred_sampled;
  }
  return 0;
}

/* ---- attach --------------------------------------------------------------
 */

typedef struct work_item {
  uint32_t fn; /* sidecar function */
  const mprof_sass_cubin *cubin;
  const mprof_sass_function *code;
} work_item;

static int by_cubin(const void *a, const void *b) {
  const work_item *x = (const work_item *)a, *y = (const work_item *)b;
  if (x->cubin != y->cubin)
    return (uintptr_t)x->cubin < (uintptr_t)y->cubin ? -1 : 1;
  return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* The best code for @p f among @p binaries (see mprof_sass_attach). */
static int choose(const mprof_sidecar_function *f,
                  const mprof_sass_binary *const *binaries, size_t count,
                  uint32_t arch, work_item *out) {
  int best = -1;
  uint32_t best_arch = 0;
  for (size_t b = 0; b < count; b++) {
    for (size_t c = 0; c < mprof_sass_binary_cubin_count(binaries[b]); c++) {
      const mprof_sass_cubin *cubin = mprof_sass_binary_cubin(binaries[b], c);
      const mprof_sass_function *code = mprof_sass_cubin_find(cubin, f->name);
      if (!code)
        continue;
      uint64_t crc = mprof_sass_cubin_crc(cubin);
      if (crc && f->cubin_crc && crc != f->cubin_crc)
        continue; /* other code under the same name */
      uint32_t cubin_arch = mprof_sass_cubin_arch(cubin);
      int score = (crc && crc == f->cubin_crc) * 8 +
                  (arch && cubin_arch == arch) * 4 +
                  (f->size && code->size == f->size) * 2 +
                  (f->device != MPROF_INDEX_NONE &&
                   mprof__sass_cubin_device(cubin) == f->device);
      if (score > best || (score == best && cubin_arch > best_arch)) {
        best = score;
        best_arch = cubin_arch;
        out->cubin = cubin;
        out->code = code;
      }
    }
  }
  return best >= 0;
}

/* The symbols nvdisasm -fun needs for @p items: for a function that lives
 * inside another's section, the section's own function (nvdisasm prints
 * code by section). */
static uint32_t *symbols_for(const mprof_sass_cubin *cubin,
                             const work_item *items, size_t n, size_t *count) {
  uint32_t *syms = (uint32_t *)malloc((n ? n : 1) * sizeof *syms);
  *count = 0;
  if (!syms)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const mprof_sass_function *owner = mprof_sass_cubin_find(
        cubin, mprof__sass_cubin_section_name(cubin, items[i].code));
    uint32_t sym = owner && owner->section_index == items[i].code->section_index
                       ? owner->symbol_index
                       : items[i].code->symbol_index;
    size_t k = 0;
    while (k < *count && syms[k] != sym)
      k++;
    if (k == *count)
      syms[(*count)++] = sym;
  }
  return syms;
}

/* The listing's code of @p item's section (nvdisasm names code by
 * section), or NULL. */
static const mprof_sass_listing_function *
listing_of(const mprof_sass_listing *listing, const work_item *item) {
  const mprof_sass_listing_function *lf = mprof_sass_listing_find(
      listing, mprof__sass_cubin_section_name(item->cubin, item->code));
  if (!lf && mprof_sass_listing_function_count(listing) == 1 &&
      !*mprof_sass_listing_function_at(listing, 0)->name)
    lf = mprof_sass_listing_function_at(listing, 0);
  return lf;
}

/* nvdisasm for the functions of @p items. Asking by symbol index keeps the
 * output small (cuBLAS modules hold 800k instructions); when that fails or
 * leaves a function out, the whole cubin is asked for once more. */
static int disassemble_items(const mprof_sass_cubin *cubin,
                             const work_item *items, size_t n,
                             const mprof_sass_options *opts,
                             mprof_sass_listing **out) {
  size_t sym_count;
  uint32_t *syms = symbols_for(cubin, items, n, &sym_count);
  if (!syms)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  int rc = mprof_sass_disassemble(out, cubin, syms, sym_count, opts);
  free(syms);
  if (rc == MPROF_ENOMEM || rc == MPROF_ENOTFOUND)
    return rc;
  if (!rc) {
    size_t found = 0;
    while (found < n && listing_of(*out, &items[found]))
      found++;
    if (found == n)
      return 0;
    mprof_sass_listing_free(*out);
    *out = NULL;
  }
  return mprof_sass_disassemble(out, cubin, NULL, 0, opts);
}

/* Whether @p opcode takes a code address as an operand. */
static int branches(const char *opcode) {
  static const char *const ops[] = {"BRA", "BSSY", "CALL", "JMP",
                                    "SSY", "PBK",  "PCNT", "CAL"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    size_t n = strlen(ops[i]);
    if (strncmp(opcode, ops[i], n) == 0 && (!opcode[n] || opcode[n] == '.'))
      return 1;
  }
  return 0;
}

/* @p operands with every hex address inside [base, base + size) made
 * relative to @p base: raw code printed from offset @p base of a batch. */
static const char *rebase(const char *operands, uint32_t base, uint32_t size,
                          char *out, size_t out_size) {
  size_t n = 0;
  for (const char *p = operands; *p && n + 24 < out_size;) {
    if (p[0] == '0' && p[1] == 'x') {
      char *end;
      unsigned long long v = strtoull(p + 2, &end, 16);
      if (end > p + 2 && v >= base && v < (unsigned long long)base + size) {
        n += (size_t)snprintf(out + n, out_size - n, "0x%llx", v - base);
        p = end;
        continue;
      }
    }
    out[n++] = *p++;
  }
  out[n] = '\0';
  return out;
}

/* Replace @p item's instructions by those of @p lf between @p base and
 * base + the function's size, at offsets from @p base. @p raw: @p lf is
 * nvdisasm -b output, whose code addresses count from the batch start. */
static int take_listing(mprof_sidecar *sc, const work_item *item,
                        const mprof_sass_listing_function *lf, uint32_t base,
                        int raw) {
  const mprof_sass_function *code = item->code;
  size_t first = 0;
  while (lf && first < lf->instruction_count &&
         lf->instructions[first].offset < base)
    first++;
  if (!lf || first == lf->instruction_count) {
    char msg[300];
    snprintf(msg, sizeof msg, "nvdisasm printed no code for %.200s",
             code->name);
    return mprof_sidecar_set_sass_state(sc, item->fn, MPROF_SASS_FAILED, msg);
  }
  int rc = mprof__sidecar_clear_instructions(sc, item->fn);
  uint64_t end = (uint64_t)base + code->size;
  char operands[1024];
  for (size_t i = first; !rc && i < lf->instruction_count; i++) {
    mprof_sass_instruction in = lf->instructions[i];
    if (in.offset >= end)
      break;
    in.offset -= base;
    if (raw && in.opcode && in.operands && branches(in.opcode))
      in.operands =
          rebase(in.operands, base, code->size, operands, sizeof operands);
    if (!in.line)
      in.line = mprof_sass_cubin_line(item->cubin, code, in.offset, &in.file);
    rc = mprof_sidecar_add_instruction(sc, item->fn, &in);
  }
  if (!rc)
    rc = mprof_sidecar_set_sass_state(sc, item->fn, MPROF_SASS_PRESENT, NULL);
  return rc;
}

/* The one function of a raw listing, or NULL. */
static const mprof_sass_listing_function *
raw_function(const mprof_sass_listing *listing) {
  return listing && mprof_sass_listing_function_count(listing)
             ? mprof_sass_listing_function_at(listing, 0)
             : NULL;
}

/* Without a disassembler (or before it runs): one entry per instruction
 * slot, with its line and an empty opcode, so samples still land on source
 * lines; the function gets @p state. */
static int take_lines_only(mprof_sidecar *sc, const work_item *item,
                           uint32_t state) {
  const mprof_sass_function *code = item->code;
  int rc = mprof__sidecar_clear_instructions(sc, item->fn);
  if (!rc && (code->flags & MPROF_SASS_FUNCTION_LINES)) {
    uint32_t step = mprof_sass_cubin_instruction_size(item->cubin);
    for (uint32_t off = 0; !rc && off < code->size; off += step) {
      mprof_sass_instruction in;
      memset(&in, 0, sizeof in);
      in.offset = off;
      in.line = mprof_sass_cubin_line(item->cubin, code, off, &in.file);
      rc = mprof_sidecar_add_instruction(sc, item->fn, &in);
    }
  }
  if (!rc)
    rc = mprof_sidecar_set_sass_state(sc, item->fn, state, NULL);
  return rc;
}

/* Size, registers and the rest, from the cubin where the trace had none. */
static int take_resources(mprof_sidecar *sc, const work_item *item) {
  mprof_sidecar_function info = *mprof_sidecar_function_at(sc, item->fn);
  const mprof_sass_function *code = item->code;
  info.size = code->size;
  if (!info.registers)
    info.registers = code->registers;
  if (!info.static_shared)
    info.static_shared = code->static_shared;
  if (!info.function_index || info.function_index == MPROF_INDEX_NONE)
    info.function_index = code->symbol_index;
  if (!info.cubin_crc)
    info.cubin_crc = mprof_sass_cubin_crc(item->cubin);
  return mprof__sidecar_update_function(sc, item->fn, &info);
}

/* The functions of one cubin, disassembled by one nvdisasm run (or, for
 * those its listing lacks, one raw run each). */
typedef struct group {
  size_t start, end; /* items[start..end) */
  int batched;       /* a trimmed cubin: its code goes to a raw batch */
  mprof_sass_listing *listing;
  mprof_sass_listing **raw; /* per item; NULL where the listing has it */
  int rc;                   /* MPROF_ENOMEM stops everything */
  char failure[600];
} group;

/* Code below this is one batch: one nvdisasm start-up costs more. */
#define BATCH_MIN_BYTES ((size_t)1 << 20)

/* The code of functions of trimmed cubins for one SM, back to back, for
 * one `nvdisasm -b` run (nvdisasm refuses cubins with NOBITS code). */
typedef struct raw_batch {
  uint32_t arch;
  unsigned char *code;
  size_t size;
  size_t capacity;
  mprof_sass_listing *listing;
  char failure[600];
} raw_batch;

typedef struct attach_work {
  const work_item *items;
  group *groups;
  size_t group_count;
  raw_batch *batches;
  size_t batch_count;
  const mprof_sass_options *opts;
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  size_t next; /* next group to take */
  size_t done; /* groups finished */
} attach_work;

static void disassemble_group(attach_work *w, group *g) {
  const work_item *items = w->items + g->start;
  size_t n = g->end - g->start;
  const mprof_sass_cubin *cubin = items[0].cubin;
  int drc = disassemble_items(cubin, items, n, w->opts, &g->listing);
  if (drc == MPROF_ENOMEM) {
    g->rc = drc;
    return;
  }
  if (drc)
    snprintf(g->failure, sizeof g->failure, "%s", mprof_error_last());
  /* nvdisasm may refuse a cubin (or leave functions out): give each such
   * function its own raw run over its bytes. */
  for (size_t i = 0; i < n; i++) {
    if (g->listing && listing_of(g->listing, &items[i]))
      continue;
    const void *code = mprof__sass_cubin_code(cubin, items[i].code);
    uint32_t arch = mprof_sass_cubin_arch(cubin);
    if (!code || !arch || !items[i].code->size)
      continue;
    if (!g->raw &&
        !(g->raw = (mprof_sass_listing **)calloc(n, sizeof *g->raw))) {
      g->rc = MPROF_ENOMEM;
      return;
    }
    if (mprof__sass_disassemble_raw(&g->raw[i], code, items[i].code->size, arch,
                                    w->opts) == MPROF_ENOMEM) {
      g->rc = MPROF_ENOMEM;
      return;
    }
  }
}

static void *attach_worker(void *arg) {
  attach_work *w = (attach_work *)arg;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    size_t jobs = w->group_count + w->batch_count;
    size_t i = w->next < jobs ? w->next++ : SIZE_MAX;
    pthread_mutex_unlock(&w->lock);
    if (i == SIZE_MAX)
      return NULL;
    if (i >= w->group_count) {
      raw_batch *b = &w->batches[i - w->group_count];
      if (mprof__sass_disassemble_raw(&b->listing, b->code, b->size, b->arch,
                                      w->opts) != 0)
        snprintf(b->failure, sizeof b->failure, "%s", mprof_error_last());
    } else if (!w->groups[i].batched) {
      disassemble_group(w, &w->groups[i]);
    }
    pthread_mutex_lock(&w->lock);
    w->done++;
    pthread_cond_signal(&w->done_cond);
    pthread_mutex_unlock(&w->lock);
  }
}

static unsigned job_count(const mprof_sass_options *opts, size_t groups) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned jobs = opts->jobs ? opts->jobs : cpus > 0 ? (unsigned)cpus : 1;
  if (jobs > 64)
    jobs = 64;
  return groups < jobs ? (unsigned)(groups ? groups : 1) : jobs;
}

/* Run every group's nvdisasm on @p jobs threads (the caller's included),
 * reporting progress on the calling thread. */
static void disassemble_groups(attach_work *w) {
  unsigned jobs = job_count(w->opts, w->group_count + w->batch_count);
  pthread_t threads[64];
  unsigned started = 0;
  /* With progress to report, the calling thread only reports. */
  for (unsigned j = w->opts->progress ? 0 : 1; j < jobs; j++)
    if (pthread_create(&threads[started], NULL, attach_worker, w) == 0)
      started++;
  /* The calling thread reports; it works too when no thread started. */
  if (!w->opts->progress || !started)
    attach_worker(w);
  if (w->opts->progress) {
    pthread_mutex_lock(&w->lock);
    size_t total = w->group_count + w->batch_count;
    while (w->done < total) {
      w->opts->progress(w->opts->progress_userdata, "disassembling", w->done,
                        total);
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 100000000L;
      if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&w->done_cond, &w->lock, &until);
    }
    pthread_mutex_unlock(&w->lock);
    w->opts->progress(w->opts->progress_userdata, "disassembling", total,
                      total);
  }
  for (unsigned j = 0; j < started; j++)
    pthread_join(threads[j], NULL);
}

int mprof__sass_attach(mprof_sidecar *sc,
                       const mprof_sass_binary *const *binaries, size_t count,
                       const mprof_sass_options *user_opts,
                       mprof_sass_report *report, const uint32_t *arch_of,
                       int which) {
  if (!sc || (count && !binaries))
    return mprof__error_set(MPROF_EINVAL, "mprof_sass_attach: NULL argument");
  mprof_sass_options opts_copy;
  int rc = mprof__sass_begin(&opts_copy, user_opts, report);
  if (rc)
    return rc;
  const mprof_sass_options *opts = &opts_copy;
  char tool[4096] = "";
  int have_tool = 0;
  /* Deferring everything needs no disassembler now. */
  int defer_all = (opts->flags & MPROF_SASS_DEFER) &&
                  !(opts->flags & MPROF_SASS_NO_DISASSEMBLY);
  if (!(opts->flags & MPROF_SASS_NO_DISASSEMBLY) && !defer_all) {
    int found = mprof__sass_tool(tool, sizeof tool, opts->nvdisasm, "nvdisasm");
    if (found != 0 && opts->nvdisasm)
      return found;
    have_tool = found == 0;
  }
  size_t n = mprof_sidecar_function_count(sc);
  work_item *items = (work_item *)calloc(n ? n : 1, sizeof *items);
  work_item *later = (work_item *)calloc(n ? n : 1, sizeof *later);
  group *groups = (group *)calloc(n ? n : 1, sizeof *groups);
  if (!items || !later || !groups) {
    free(items);
    free(later);
    free(groups);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  /* Functions to disassemble now (items) and those whose code waits in the
   * trace (later: lines and resources only, MPROF_SASS_DEFERRED). */
  int sampled_only = (opts->flags & MPROF_SASS_SAMPLED_ONLY) &&
                     !(opts->flags & MPROF_SASS_NO_DISASSEMBLY);
  size_t item_count = 0, later_count = 0, gone = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const mprof_sidecar_function *f = mprof_sidecar_function_at(sc, i);
    if (f->sass_state == MPROF_SASS_PRESENT)
      continue;
    if (which == MPROF__ATTACH_DEFERRED_SAMPLED &&
        (f->sass_state != MPROF_SASS_DEFERRED || !f->pc_count))
      continue;
    uint32_t arch = arch_of ? arch_of[i] : opts->arch;
    work_item item;
    if (choose(f, binaries, count, arch, &item)) {
      item.fn = (uint32_t)i;
      if (defer_all || (sampled_only && !f->pc_count))
        later[later_count++] = item;
      else
        items[item_count++] = item;
    } else if (which == MPROF__ATTACH_DEFERRED_SAMPLED) {
      /* Its code left the trace (dropped since): asking again is useless. */
      rc = mprof_sidecar_set_sass_state(sc, (uint32_t)i, MPROF_SASS_NO_CUBIN,
                                        NULL);
      gone += rc == 0;
    }
  }
  size_t attached = later_count + gone;
  for (size_t i = 0; !rc && i < later_count; i++) {
    rc = take_resources(sc, &later[i]);
    if (!rc)
      rc = take_lines_only(sc, &later[i], MPROF_SASS_DEFERRED);
  }
  free(later);
  if (rc) {
    free(items);
    free(groups);
    return rc;
  }
  /* One group per cubin: each distinct function is disassembled once. */
  qsort(items, item_count, sizeof *items, by_cubin);
  size_t group_count = 0;
  for (size_t start = 0; start < item_count;) {
    size_t end = start;
    while (end < item_count && items[end].cubin == items[start].cubin)
      end++;
    groups[group_count].start = start;
    groups[group_count].end = end;
    group_count++;
    start = end;
  }
  mprof_sass_options run_opts = *opts;
  run_opts.nvdisasm = have_tool ? tool : NULL;
  /* Trimmed cubins: every function's code into batches per SM, each at a
   * 16-byte aligned base. A batch is one nvdisasm process, whose start-up
   * costs more than small code does: one batch per SM unless the code
   * is large enough to share among the jobs. */
  raw_batch *batches = NULL;
  size_t batch_count = 0, batch_capacity = 0, batch_code = 0;
  for (size_t gi = 0; have_tool && gi < group_count; gi++)
    if (mprof__sass_cubin_trimmed(items[groups[gi].start].cubin))
      for (size_t i = groups[gi].start; i < groups[gi].end; i++)
        batch_code += items[i].code->size;
  size_t batch_limit = batch_code / job_count(opts, SIZE_MAX) + 1;
  if (batch_limit < BATCH_MIN_BYTES)
    batch_limit = BATCH_MIN_BYTES;
  uint32_t *batch_of =
      (uint32_t *)calloc(item_count ? item_count : 1, sizeof *batch_of);
  uint32_t *base_of =
      (uint32_t *)calloc(item_count ? item_count : 1, sizeof *base_of);
  if (!batch_of || !base_of)
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t gi = 0; !rc && have_tool && gi < group_count; gi++) {
    group *g = &groups[gi];
    const mprof_sass_cubin *cubin = items[g->start].cubin;
    uint32_t arch = mprof_sass_cubin_arch(cubin);
    if (!mprof__sass_cubin_trimmed(cubin) || !arch)
      continue;
    g->batched = 1;
    size_t b = 0;
    while (b < batch_count &&
           (batches[b].arch != arch || batches[b].size >= batch_limit))
      b++;
    if (b == batch_count) {
      if (MPROF__GROW(batches, batch_capacity, batch_count + 1)) {
        rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
        break;
      }
      memset(&batches[batch_count++], 0, sizeof *batches);
      batches[b].arch = arch;
    }
    raw_batch *rb = &batches[b];
    for (size_t i = g->start; !rc && i < g->end; i++) {
      const void *code = mprof__sass_cubin_code(cubin, items[i].code);
      size_t size = items[i].code->size;
      size_t at = (rb->size + 15) & ~(size_t)15;
      if (at + size > UINT32_MAX) {
        rc = mprof__error_set(MPROF_EINVAL, "too much code for one batch");
        break;
      }
      if (MPROF__GROW(rb->code, rb->capacity, at + size)) {
        rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
        break;
      }
      memset(rb->code + rb->size, 0, at - rb->size);
      if (code && size)
        memcpy(rb->code + at, code, size);
      rb->size = at + size;
      batch_of[i] = (uint32_t)b;
      base_of[i] = (uint32_t)at;
    }
  }
  if (!rc && have_tool && group_count) {
    attach_work work;
    memset(&work, 0, sizeof work);
    work.items = items;
    work.groups = groups;
    work.group_count = group_count;
    work.batches = batches;
    work.batch_count = batch_count;
    work.opts = &run_opts;
    pthread_mutex_init(&work.lock, NULL);
    pthread_cond_init(&work.done_cond, NULL);
    disassemble_groups(&work);
    pthread_cond_destroy(&work.done_cond);
    pthread_mutex_destroy(&work.lock);
  }
  for (size_t gi = 0; gi < group_count; gi++) {
    group *g = &groups[gi];
    if (!rc && g->rc)
      rc = mprof__error_set(g->rc, "out of memory");
    for (size_t i = g->start; !rc && i < g->end; i++) {
      rc = take_resources(sc, &items[i]);
      if (rc)
        break;
      mprof_sass_listing *raw = g->raw ? g->raw[i - g->start] : NULL;
      const raw_batch *rb = g->batched ? &batches[batch_of[i]] : NULL;
      if (rb && rb->listing)
        rc = take_listing(sc, &items[i], raw_function(rb->listing), base_of[i],
                          1);
      else if (rb && *rb->failure)
        rc = mprof_sidecar_set_sass_state(sc, items[i].fn, MPROF_SASS_FAILED,
                                          rb->failure);
      else if (raw)
        rc = take_listing(sc, &items[i], raw_function(raw), 0, 1);
      else if (g->listing)
        rc = take_listing(sc, &items[i], listing_of(g->listing, &items[i]),
                          items[i].code->section_offset, 0);
      else if (*g->failure)
        rc = mprof_sidecar_set_sass_state(sc, items[i].fn, MPROF_SASS_FAILED,
                                          g->failure);
      else
        rc = take_lines_only(sc, &items[i], MPROF_SASS_NO_DISASSEMBLER);
      attached++;
    }
    mprof_sass_listing_free(g->listing);
    for (size_t i = 0; g->raw && i < g->end - g->start; i++)
      mprof_sass_listing_free(g->raw[i]);
    free(g->raw);
  }
  for (size_t b = 0; b < batch_count; b++) {
    mprof_sass_listing_free(batches[b].listing);
    free(batches[b].code);
  }
  free(batches);
  free(batch_of);
  free(base_of);
  free(items);
  free(groups);
  if (report) {
    int crc2 = mprof_sass_report_count(report, sc);
    if (!rc)
      rc = crc2;
    report->attached += attached;
    /* A path longer than the report's field is cut, not overrun. */
    size_t len = have_tool ? strnlen(tool, sizeof report->disassembler - 1) : 0;
    memcpy(report->disassembler, tool, len);
    report->disassembler[len] = '\0';
  }
  return rc;
}

int mprof_sass_attach(mprof_sidecar *sidecar,
                      const mprof_sass_binary *const *binaries, size_t count,
                      const mprof_sass_options *opts,
                      mprof_sass_report *report) {
  return mprof__sass_attach(sidecar, binaries, count, opts, report, NULL,
                            MPROF__ATTACH_MISSING);
}
