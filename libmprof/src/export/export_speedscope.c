/*
 * mprof — the speedscope export: one profile per kernel with PC samples,
 * frames by source line or instruction. The layout, and why, is in
 * docs/EXPORT.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/export.h"
#include "mprof/names.h"
#include "mprof/version.h"
#include "base/text.h"
#include "report/report_internal.h"
#include "export/export_internal.h"

/* ---- speedscope ------------------------------------------------------------
 */

typedef struct pc_order {
  uint32_t offset;
  const mprof_pc_stats *pc;
  size_t line; /* index of its source line in the kernel's lines, or NONE */
} pc_order;

#define NO_LINE ((size_t)-1)

static int pc_order_compare(const void *a, const void *b) {
  const pc_order *x = (const pc_order *)a, *y = (const pc_order *)b;
  MPROF__ORDER_BY(offset);
  return x->pc->function_index < y->pc->function_index ? -1 : 1;
}

static const mprof_sass_instruction *with_line(const mprof_pc_stats *pc) {
  const mprof_sass_instruction *ins = pc->instruction;
  return ins && ins->line && ins->file && *ins->file ? ins : NULL;
}

static int line_compare(const void *a, const void *b) {
  const mprof_sass_instruction *x = with_line((*(pc_order *const *)a)->pc);
  const mprof_sass_instruction *y = with_line((*(pc_order *const *)b)->pc);
  int c = strcmp(x->file, y->file);
  if (c)
    return c;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* A kernel's sampled instructions in code order, each with the index of
 * its (file, line) among the kernel's distinct lines, which are ordered by
 * file and line. */
typedef struct kernel_code {
  pc_order *pcs;
  size_t pc_count;
  pc_order **lines; /* one instruction per distinct line */
  size_t line_count;
} kernel_code;

static void kernel_code_free(kernel_code *c) {
  free(c->pcs);
  free(c->lines);
}

static int kernel_code_build(kernel_code *c, const mprof_join *join, size_t k) {
  memset(c, 0, sizeof *c);
  size_t n;
  const mprof_pc_stats *pcs = mprof_join_pcs(join, k, &n);
  c->pcs = (pc_order *)malloc((n ? n : 1) * sizeof *c->pcs);
  pc_order **by_line = (pc_order **)malloc((n ? n : 1) * sizeof *by_line);
  c->lines = (pc_order **)malloc((n ? n : 1) * sizeof *c->lines);
  if (!c->pcs || !by_line || !c->lines) {
    free(by_line);
    kernel_code_free(c);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++)
    if (pcs[i].samples)
      c->pcs[c->pc_count++] = (pc_order){pcs[i].offset, &pcs[i], NO_LINE};
  if (c->pc_count > 1)
    qsort(c->pcs, c->pc_count, sizeof *c->pcs, pc_order_compare);
  size_t with = 0;
  for (size_t i = 0; i < c->pc_count; i++)
    if (with_line(c->pcs[i].pc))
      by_line[with++] = &c->pcs[i];
  if (with > 1)
    qsort(by_line, with, sizeof *by_line, line_compare);
  for (size_t i = 0; i < with; i++) {
    if (i == 0 || line_compare(&by_line[i - 1], &by_line[i]) != 0)
      c->lines[c->line_count++] = by_line[i];
    by_line[i]->line = c->line_count - 1;
  }
  free(by_line);
  return MPROF_OK;
}

static void put_frame(FILE *f, size_t *frames, const char *name,
                      const char *file, uint32_t line) {
  mprof__fields o = {f, 1, 0};
  fputs(*frames ? ",\n{" : "\n{", f);
  mprof__fields_str(&o, "name", name);
  if (file && *file)
    mprof__fields_str(&o, "file", file);
  if (line)
    mprof__fields_u64(&o, "line", line);
  fputc('}', f);
  ++*frames;
}

/* The frames of one kernel: the kernel, its source lines, its sampled
 * instructions. */
static void put_kernel_frames(FILE *f, size_t *frames, const char *short_name,
                              const kernel_code *code) {
  put_frame(f, frames, short_name, NULL, 0);
  for (size_t j = 0; j < code->line_count; j++) {
    const mprof_sass_instruction *ins = with_line(code->lines[j]->pc);
    char name[512];
    snprintf(name, sizeof name, "%s:%u", mprof__export_base_name(ins->file),
             ins->line);
    put_frame(f, frames, name, ins->file, ins->line);
  }
  for (size_t i = 0; i < code->pc_count; i++) {
    const mprof_pc_stats *pc = code->pcs[i].pc;
    const mprof_sass_instruction *ins = pc->instruction;
    const mprof_sass_instruction *lined = with_line(pc);
    char name[512], text[480];
    if (ins && ins->opcode && *ins->opcode)
      snprintf(name, sizeof name, "+0x%04x  %s", pc->offset,
               mprof_sass_instruction_text(text, sizeof text, ins));
    else
      snprintf(name, sizeof name, "+0x%04x", pc->offset);
    put_frame(f, frames, name, lined ? lined->file : NULL,
              lined ? lined->line : 0);
  }
}

/* One sampled profile: per instruction, in code order, the stack kernel →
 * line → instruction, weighted by its samples. @p base is the index of the
 * kernel's first frame. */
static void put_kernel_profile(FILE *f, const mprof_kernel_stats *ks,
                               const char *title, const kernel_code *code,
                               size_t base, int first) {
  fputs(first ? "\n{" : ",\n{", f);
  fputs("\"type\":\"sampled\",\"name\":", f);
  mprof__json_string(f, title);
  fprintf(f,
          ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,"
          "\"samples\":[",
          (unsigned long long)ks->samples);
  size_t sass_base = base + 1 + code->line_count;
  for (size_t i = 0; i < code->pc_count; i++) {
    fputs(i ? "," : "", f);
    if (code->pcs[i].line != NO_LINE)
      fprintf(f, "[%zu,%zu,%zu]", base, base + 1 + code->pcs[i].line,
              sass_base + i);
    else
      fprintf(f, "[%zu,%zu]", base, sass_base + i);
  }
  fputs("],\"weights\":[", f);
  for (size_t i = 0; i < code->pc_count; i++)
    fprintf(f, "%s%llu", i ? "," : "",
            (unsigned long long)code->pcs[i].pc->samples);
  fputs("]}", f);
}

/* The profiles refer to frames by index, so frames are written first, in
 * the same walk over the kernels that the profiles then repeat. */
int mprof__export_speedscope(FILE *f, const mprof_diagnosis *const *traces,
                             size_t count, const mprof__export_selection *sel,
                             int filtered, mprof_export_report *rep) {
  size_t kernels_with_samples = 0;
  for (size_t t = 0; t < count; t++) {
    const mprof_join *join = mprof_diagnosis_join(traces[t]);
    for (size_t k = 0; k < mprof_join_kernel_count(join); k++)
      if (sel->selected[t][k] && mprof_join_kernel(join, k)->samples)
        kernels_with_samples++;
  }
  const mprof_trace *first_trace =
      mprof_join_trace(mprof_diagnosis_join(traces[0]));
  if (!kernels_with_samples)
    return mprof__error_set(
        MPROF_ENOTFOUND,
        "%s: no %skernel has PC samples, so there is no profile for "
        "speedscope (record with --pc-mode continuous, or export "
        "--format perfetto)",
        mprof_trace_path(first_trace), filtered ? "selected " : "");
  fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
        "\"exporter\":",
        f);
  mprof__json_string(f, "mprof " MPROF_VERSION_STRING);
  fputs(",\"name\":", f);
  mprof__json_string(f, mprof__export_base_name(mprof_trace_path(first_trace)));
  fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
  size_t frames = 0;
  int rc = MPROF_OK;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    size_t base = 0, profiles = 0;
    if (pass == 1)
      fputs("\n]},\"profiles\":[", f);
    for (size_t t = 0; t < count && !rc; t++) {
      const mprof_join *join = mprof_diagnosis_join(traces[t]);
      const mprof_trace *trace = mprof_join_trace(join);
      for (size_t k = 0; k < mprof_join_kernel_count(join) && !rc; k++) {
        const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
        if (!sel->selected[t][k] || !ks->samples)
          continue;
        kernel_code code;
        rc = kernel_code_build(&code, join, k);
        if (rc)
          break;
        if (pass == 0) {
          put_kernel_frames(f, &frames, mprof_join_kernel_short(join, k),
                            &code);
        } else {
          char title[1024], dev[32] = "";
          if (ks->device_id != MPROF_INDEX_NONE)
            snprintf(dev, sizeof dev, " (GPU %u)", ks->device_id);
          snprintf(title, sizeof title, "%s%s%s%s",
                   mprof_join_kernel_short(join, k), dev,
                   count > 1 ? " — " : "",
                   count > 1 ? mprof__export_base_name(mprof_trace_path(trace))
                             : "");
          put_kernel_profile(f, ks, title, &code, base, profiles == 0);
          rep->events += code.pc_count;
        }
        base += 1 + code.line_count + code.pc_count;
        profiles++;
        kernel_code_free(&code);
      }
    }
    rep->profiles = profiles;
  }
  fputs("\n]}\n", f);
  rep->frames = frames;
  return rc;
}
