/*
 * mprof — `mprof summary --by-line`: a kernel's hottest source lines with
 * their code, share, stall mix and SASS, as XML (docs/SUMMARY-SCHEMA.md),
 * JSON or text for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "mprof/lines.h"
#include "mprof/names.h"
#include "mprof/sources.h"
#include "mprof/status.h"
#include "report_internal.h"

/* Sampled instructions listed under a line in the text report. */
#define TEXT_INSTRUCTIONS 8
/* Stall reasons named per line in the text report. */
#define TEXT_REASONS 3

typedef struct lines_view {
  const mprof_join *join;
  const mprof_kernel_stats *kernel;
  size_t kernel_index; /* in the join: its unique short name */
  const mprof_lines *lines;
  mprof_sources *sources;
  size_t shown;
} lines_view;

static const char *origin_name(int origin) {
  switch (origin) {
  case MPROF_LINES_CUBIN: return "cubin";
  case MPROF_LINES_SIDECAR: return "sidecar";
  default: return "none";
  }
}

static const char *state_name(int state) {
  switch (state) {
  case MPROF_SOURCE_EMBEDDED: return "embedded";
  case MPROF_SOURCE_DISK: return "disk";
  case MPROF_SOURCE_MISSING: return "missing";
  default: return "unknown";
  }
}

/* Line @p s's code into @p buf (cut to fit); NULL when its text is not
 * there. */
static const char *code_of(const lines_view *v, const mprof_line_stats *s,
                           char *buf, size_t size) {
  size_t len;
  const char *text = mprof_sources_line(v->sources, s->file, s->line, &len);
  if (!text)
    return NULL;
  if (len >= size)
    len = size - 1;
  memcpy(buf, text, len);
  buf[len] = '\0';
  return buf;
}

static int by_samples(const void *a, const void *b) {
  const mprof_line_instruction *x = *(const mprof_line_instruction *const *)a;
  const mprof_line_instruction *y = *(const mprof_line_instruction *const *)b;
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The sampled instructions of @p s, in offset order, into @p out (at most
 * @p capacity); returns how many there are. Code without a line (a library
 * kernel's: all of its code) lists its hottest first instead, so the first
 * few shown are the ones that matter, not the kernel's prologue. */
static size_t sampled(const lines_view *v, const mprof_line_stats *s,
                      const mprof_line_instruction **out, size_t capacity) {
  size_t n = 0;
  const mprof_line_instruction **all =
      s->line ? NULL
              : (const mprof_line_instruction **)calloc(
                    s->instruction_count + 1, sizeof *all);
  for (size_t i = 0; i < s->instruction_count; i++) {
    const mprof_line_instruction *in =
        mprof_lines_instruction_find(v->lines, s->offsets[i]);
    if (!in || !in->samples)
      continue;
    if (all)
      all[n] = in;
    else if (n < capacity)
      out[n] = in;
    n++;
  }
  if (all) {
    qsort(all, n, sizeof *all, by_samples);
    memcpy(out, all, (n < capacity ? n : capacity) * sizeof *out);
    free(all);
  }
  return n;
}

/* ---- XML and JSON ------------------------------------------------------- */

typedef struct line_ctx {
  const lines_view *v;
  const mprof_line_stats *line;
  const mprof_line_instruction **insns;
} line_ctx;

static void reason_fields(mprof__fields *o, const void *ctx, size_t i) {
  const line_ctx *c = (const line_ctx *)ctx;
  const mprof_reason_samples *rs = mprof_line_reason(c->line, i);
  const mprof_stall_reason *r = mprof_join_reason(c->v->join, rs->reason);
  mprof__fields_str(o, "name", r ? r->name : "");
  mprof__fields_u64(o, "samples", rs->samples);
  mprof__fields_num(
      o, "share",
      c->line->samples ? (double)rs->samples / (double)c->line->samples : 0.0,
      4);
  mprof__fields_raw(o, "not_issued", r && r->not_issued ? "true" : "false");
}

static void insn_fields(mprof__fields *o, const void *ctx, size_t i) {
  const line_ctx *c = (const line_ctx *)ctx;
  const mprof_line_instruction *in = c->insns[i];
  char text[512];
  mprof__fields_hex(o, "offset", in->offset);
  mprof__fields_u64(o, "samples", in->samples);
  mprof__fields_str(
      o, "sass",
      in->instruction && *in->instruction->opcode
          ? mprof_sass_instruction_text(text, sizeof text, in->instruction)
          : NULL);
  if (in->pc && in->pc->reason_count) {
    const mprof_reason_samples *top = mprof_pc_stats_reason(in->pc, 0);
    const mprof_stall_reason *r = mprof_join_reason(c->v->join, top->reason);
    mprof__fields_str(o, "top_reason", r ? r->name : NULL);
  }
}

static void frame_fields(mprof__fields *o, const void *ctx, size_t i) {
  const mprof_line_instruction *in = (const mprof_line_instruction *)ctx;
  const mprof_sass_frame *f = &in->frames[i + 1];
  mprof__fields_str(o, "function", f->function);
  mprof__fields_str(o, "file", f->file);
  mprof__fields_u64(o, "line", f->line);
}

static void line_fields(mprof__fields *o, const void *ctx, size_t i) {
  const lines_view *v = (const lines_view *)ctx;
  const mprof_line_stats *s = mprof_lines_at(v->lines, i);
  char code[4096];
  mprof__fields_u64(o, "rank", i + 1);
  mprof__fields_str(o, "file", s->file);
  mprof__fields_u64(o, "line", s->line);
  mprof__fields_str(o, "function", s->function);
  mprof__fields_num(o, "share", s->share, 4);
  mprof__fields_u64(o, "samples", s->samples);
  mprof__fields_u64(o, "not_issued", s->not_issued);
  mprof__fields_u64(o, "instruction_count", s->instruction_count);
  mprof__fields_str(
      o, "source",
      s->line ? state_name(mprof_sources_state(v->sources, s->file)) : NULL);
  mprof__fields_str(o, "code",
                    s->line ? code_of(v, s, code, sizeof code) : NULL);
  const mprof_line_instruction *insns[256];
  size_t n = sampled(v, s, insns, 256);
  if (n > 256)
    n = 256;
  line_ctx c = {v, s, insns};
  /* Where the line's code was inlined from: the chain of its hottest
   * instruction, call sites outward. */
  const mprof_line_instruction *hot = NULL;
  for (size_t k = 0; k < n; k++)
    if (!hot || insns[k]->samples > hot->samples)
      hot = insns[k];
  mprof__report_records(o, "reason", "reasons", s->reason_count, reason_fields,
                        &c);
  mprof__report_records(o, "instruction", "instructions", n, insn_fields, &c);
  mprof__report_records(o, "inlined_at", "inlined_at",
                        hot && hot->frame_count > 1 ? hot->frame_count - 1 : 0,
                        frame_fields, hot);
}

static void kernel_fields(mprof__fields *parent, const lines_view *v) {
  mprof__fields k;
  mprof__fields_open(&k, parent, "kernel", NULL);
  mprof__report_kernel_names(&k, v->kernel->name,
                             mprof_join_kernel_short(v->join, v->kernel_index),
                             v->kernel->mangled, v->kernel->device_id);
  mprof__fields_u64(&k, "samples", mprof_lines_samples(v->lines));
  mprof__fields_str(&k, "lines_from",
                    origin_name(mprof_lines_origin(v->lines)));
  mprof__fields_u64(&k, "lines", mprof_lines_count(v->lines));
  mprof__report_shown(&k, v->shown, mprof_lines_count(v->lines));
  mprof__report_records(&k, "line", "hot_lines", v->shown, line_fields, v);
  mprof__fields_close(&k);
}

/* ---- text --------------------------------------------------------------- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void text_kernel(FILE *f, const lines_view *v, const mprof__style *st,
                        int full_names) {
  char a[32], code[4096];
  mprof_format_count(a, sizeof a, mprof_lines_samples(v->lines));
  char name[512];
  if (full_names)
    snprintf(name, sizeof name, "%s", v->kernel->name);
  else
    snprintf(name, sizeof name, "%s",
             mprof_join_kernel_short(v->join, v->kernel_index));
  fprintf(f, "%s%s%s · %s samples · ", st->bold, name, st->reset, a);
  switch (mprof_lines_origin(v->lines)) {
  case MPROF_LINES_CUBIN:
    fprintf(f, "lines from the cubin's line table\n");
    break;
  case MPROF_LINES_SIDECAR: fprintf(f, "lines from the sidecar\n"); break;
  default:
    fprintf(f,
            "%sno line table: build with nvcc -lineinfo to see lines (a "
            "library kernel has none)%s\n",
            st->yellow, st->reset);
  }
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_line_stats *s = mprof_lines_at(v->lines, i);
    char p[32];
    mprof_format_percent(p, sizeof p, s->share);
    if (s->line)
      fprintf(f, "\n%6s %s%s:%u%s", p, st->cyan, base_name(s->file), s->line,
              st->reset);
    else
      fprintf(f, "\n%6s %scode without a source line%s", p, st->cyan,
              st->reset);
    mprof_format_count(a, sizeof a, s->samples);
    fprintf(f, "  %s samples", a);
    for (size_t r = 0; r < s->reason_count && r < TEXT_REASONS; r++) {
      const mprof_reason_samples *rs = mprof_line_reason(s, r);
      const mprof_stall_reason *why = mprof_join_reason(v->join, rs->reason);
      if (!why || why->not_issued)
        continue;
      mprof_format_percent(p, sizeof p,
                           s->samples ? (double)rs->samples / (double)s->samples
                                      : 0.0);
      fprintf(f, " · %s %s", why->name, p);
    }
    fputc('\n', f);
    if (s->line) {
      const char *text = code_of(v, s, code, sizeof code);
      int state = mprof_sources_state(v->sources, s->file);
      if (text)
        fprintf(f, "  %5u │ %s\n", s->line, text);
      else
        fprintf(f, "  %5u │ %s(%s: %s)%s\n", s->line, st->dim,
                state == MPROF_SOURCE_MISSING
                    ? "missing when the trace was recorded"
                    : "source not found; --source-root DIR maps build paths",
                s->file, st->reset);
    }
    const mprof_line_instruction *insns[TEXT_INSTRUCTIONS];
    size_t n = sampled(v, s, insns, TEXT_INSTRUCTIONS);
    /* Inlined code: the call sites of its hottest instruction, outward. */
    const mprof_line_instruction *hot = NULL;
    for (size_t k = 0; k < n && k < TEXT_INSTRUCTIONS; k++)
      if (!hot || insns[k]->samples > hot->samples)
        hot = insns[k];
    if (hot && hot->frame_count > 1) {
      fprintf(f, "        %sinlined at", st->dim);
      for (size_t k = 1; k < hot->frame_count; k++)
        fprintf(f, "%s %s:%u", k > 1 ? " ←" : "",
                base_name(hot->frames[k].file), hot->frames[k].line);
      fprintf(f, "%s\n", st->reset);
    }
    for (size_t k = 0; k < n && k < TEXT_INSTRUCTIONS; k++) {
      const mprof_line_instruction *in = insns[k];
      char sass[512];
      mprof_format_count(a, sizeof a, in->samples);
      fprintf(
          f, "        %s%06x%s %8s  %s\n", st->dim, in->offset, st->reset, a,
          in->instruction && *in->instruction->opcode
              ? mprof_sass_instruction_text(sass, sizeof sass, in->instruction)
              : "(no SASS text: mprof sass adds it where nvdisasm is)");
    }
    if (n > TEXT_INSTRUCTIONS)
      fprintf(f, "        %s(%zu more sampled instructions)%s\n", st->dim,
              n - TEXT_INSTRUCTIONS, st->reset);
  }
  size_t count = mprof_lines_count(v->lines);
  if (count > v->shown)
    fprintf(f, "%s(%zu more lines; --hot N shows more)%s\n", st->dim,
            count - v->shown, st->reset);
}

/* ---- entry -------------------------------------------------------------- */

int mprof_lines_write(FILE *out, const mprof_join *join, mprof_sources *sources,
                      const mprof_report_options *opts) {
  if (!out || !join)
    return mprof__error_set(MPROF_EINVAL, "mprof_lines_write: NULL argument");
  int rc = mprof__report_options_check(&opts);
  if (rc)
    return rc;
  size_t *selected = NULL, count = 0;
  rc = mprof__select_kernels(&selected, &count, join, opts->kernel);
  if (rc)
    return rc;
  /* Sampled kernels only: without samples there is nothing per line. */
  size_t kept = 0;
  for (size_t i = 0; i < count; i++)
    if (mprof_join_kernel(join, selected[i])->samples)
      selected[kept++] = selected[i];
  if (kept > opts->max_kernels)
    kept = opts->max_kernels;
  mprof__style st;
  mprof__style_init(&st, (opts->flags & MPROF_REPORT_COLOR) != 0);
  int json = opts->format == MPROF_REPORT_JSON;
  mprof__fields doc, x, list;
  const char *path = mprof_trace_path(mprof_join_trace(join));
  if (opts->format == MPROF_REPORT_TEXT) {
    fprintf(out, "%smprof summary --by-line%s %s\n", st.bold, st.reset, path);
    if (!kept)
      fprintf(out, "%s! no PC samples%s%s: record with PC sampling on%s\n",
              st.yellow, opts->kernel ? " for kernels matching " : "",
              opts->kernel ? opts->kernel : "", st.reset);
  } else {
    mprof__report_document(&doc, out, json, "mprof-lines", 0);
    mprof__fields_open(&x, &doc, "trace", "trace");
    mprof__fields_str(&x, "path", path);
    mprof__fields_u64(&x, "samples", mprof_join_sample_total(join));
    mprof__fields_close(&x);
    mprof__fields_list(&list, &doc, NULL, "kernels");
  }
  for (size_t i = 0; i < kept && !rc; i++) {
    mprof_lines *lines = NULL;
    rc = mprof_lines_build(&lines, join, selected[i], NULL);
    if (rc)
      break;
    lines_view v = {join,        mprof_join_kernel(join, selected[i]),
                    selected[i], lines,
                    sources,     0};
    size_t n = mprof_lines_count(lines);
    v.shown = n < opts->max_hot ? n : opts->max_hot;
    /* Lines without samples are not hot. */
    while (v.shown && !mprof_lines_at(lines, v.shown - 1)->samples)
      v.shown--;
    if (opts->format == MPROF_REPORT_TEXT) {
      fputc('\n', out);
      text_kernel(out, &v, &st, (opts->flags & MPROF_REPORT_FULL_NAMES) != 0);
    } else {
      kernel_fields(&list, &v);
    }
    mprof_lines_free(lines);
  }
  if (opts->format != MPROF_REPORT_TEXT) {
    mprof__fields_close(&list);
    mprof__fields_close(&doc);
  }
  free(selected);
  return rc ? rc : mprof__report_flush(out, "per-line report");
}
