/*
 * mprof — the summary report as a text panel for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/names.h"
#include "format/set.h"
#include "report_internal.h"
#include "summary_internal.h"

static void text_throughput(FILE *f, const mprof_kernel_diagnosis *k,
                            const mprof__style *st) {
  const mprof_kernel_throughput *t = k->throughput;
  char iv[32];
  mprof_format_duration(iv, sizeof iv, (double)t->interval_ns);
  if (!t->samples && t->partial) {
    fprintf(f,
            "│ %sspeed of light: too short to measure (no run spans a whole "
            "%s PM sample)%s\n",
            st->dim, iv, st->reset);
    return;
  }
  if (!t->samples) {
    fprintf(f,
            "│ %sspeed of light: not measured (no PM sample fell in its runs: "
            "samples there were lost or not taken; see what record said)%s\n",
            st->dim, st->reset);
    return;
  }
  fputs("│ speed of light:", f);
  const char *sep = " ";
  for (size_t i = 0; i < MPROF__SOL_TEXT_COUNT; i++) {
    uint32_t c = mprof__sol_text[i].counter;
    double x = t->value[c];
    if (isnan(x))
      continue;
    char p[32];
    mprof_format_percent(p, sizeof p, x / 100.0);
    fprintf(f, "%s%s %s", sep, mprof__sol_text[i].label, p);
    uint32_t bytes = mprof_counter_bandwidth(c);
    if (bytes != MPROF_INDEX_NONE && !isnan(t->value[bytes]))
      fprintf(f, " (%.2f TB/s)", t->value[bytes] / 1e12);
    sep = " · ";
  }
  char n[32];
  mprof_format_count(n, sizeof n, t->samples);
  fprintf(f, " %s· %s sample%s of %s%s%s\n", st->dim, n,
          mprof__plural(t->samples), iv,
          t->shared > 0.05 ? ", shared with other kernels" : "", st->reset);
}

/* ---- text panel --------------------------------------------------------- */

/* The name people read: the join's short name, unique within the trace,
 * unless MPROF_REPORT_FULL_NAMES. */
static const char *text_name(const mprof__summary_view *v,
                             const mprof_kernel_diagnosis *k) {
  if (v->opts->flags & MPROF_REPORT_FULL_NAMES)
    return k->stats->name;
  return mprof_join_kernel_short(v->join, k->kernel);
}

/* The kernel's global-memory accesses per instruction (`record blocks
 * --memory`), busiest first: what each warp access asked for against the
 * 32-byte sectors it touched. */
static void text_memory(FILE *f, const mprof__summary_view *v,
                        const mprof_kernel_diagnosis *k,
                        const mprof__style *st) {
  mprof__summary_memory mv;
  if (!mprof__summary_memory_view_build(&mv, v, k))
    return;
  char n[32], p[32];
  mprof_format_count(n, sizeof n, mv.warps);
  mprof_format_percent(p, sizeof p, mv.efficiency);
  fprintf(f,
          "│   %sglobal memory%s (counted, every access): %s warp accesses "
          "· sector efficiency %s\n",
          st->bold, st->reset, n, p);
  for (size_t i = 0; i < mv.shown; i++) {
    const mprof_memory_stats *x = mv.order[i];
    const char *sass = x->instruction && x->instruction->opcode
                           ? x->instruction->opcode
                           : "(no SASS)";
    double per_warp = (double)x->bytes / (double)x->warp_accesses;
    double sectors_per_warp = (double)x->sectors / (double)x->warp_accesses;
    mprof_format_count(n, sizeof n, x->warp_accesses);
    mprof_format_percent(p, sizeof p, x->efficiency);
    fprintf(f,
            "│     %s0x%05x%s %-10s %-26s %s%6s%s sectors used · %7.1f B "
            "asked / %4.1f sectors per warp · %s warp accesses\n",
            st->cyan, x->offset, st->reset, mprof_memory_kind_name(x->flags),
            sass, x->efficiency < 0.5 ? st->yellow : "", p, st->reset, per_warp,
            sectors_per_warp, n);
  }
  if (mv.count > mv.shown)
    fprintf(f, "│     %s(%zu more instruction%s with memory accesses)%s\n",
            st->dim, mv.count - mv.shown, mprof__plural(mv.count - mv.shown),
            st->reset);
  free(mv.order);
}

static void gain_text(char *out, size_t size, const mprof_kernel_diagnosis *k);
static void saved_text(char *out, size_t size, const mprof_kernel_diagnosis *k);

static void text_kernel(FILE *f, const mprof__summary_view *v, size_t rank,
                        const mprof_kernel_diagnosis *k,
                        const mprof__style *st) {
  const mprof_kernel_stats *s = k->stats;
  char a[32], b[32], c[32], d[32], e[32], g[32], n[32], p[32];
  mprof_format_percent(p, sizeof p, s->share);
  fprintf(f, "%s┌ #%zu %s%s%s%s", st->cyan, rank, st->reset, st->bold,
          text_name(v, k), st->reset);
  if (s->device_id != MPROF_INDEX_NONE)
    fprintf(f, "  %s· device %u%s", st->dim, s->device_id, st->reset);
  char process[256];
  mprof__summary_process_label(process, sizeof process, v, s);
  if (*process)
    fprintf(f, "  %s· %s%s", st->dim, process, st->reset);
  fprintf(f, "  %s· %s of GPU time%s", st->dim, p, st->reset);
  if (s->flags & MPROF_KERNEL_MPROF_OWN)
    fprintf(f, "  %s· mprof's own kernel, not the program's%s", st->dim,
            st->reset);
  fputc('\n', f);
  mprof_format_count(n, sizeof n, s->launches);
  mprof_format_duration(a, sizeof a, (double)s->total_ns);
  mprof_format_duration(b, sizeof b, s->mean_ns);
  mprof_format_duration(c, sizeof c, (double)s->median_ns);
  mprof_format_duration(d, sizeof d, (double)s->p90_ns);
  mprof_format_duration(e, sizeof e, (double)s->min_ns);
  mprof_format_duration(g, sizeof g, (double)s->max_ns);
  fprintf(f,
          "│ %s launch%s · total %s · mean %s · median %s · p90 %s · min %s "
          "· max %s\n",
          n, s->launches == 1 ? "" : "es", a, b, c, d, e, g);
  size_t shape_count;
  const mprof_shape_stats *shapes =
      mprof_join_shapes(v->join, k->kernel, &shape_count);
  size_t shown = shape_count < SHAPES_SHOWN ? shape_count : SHAPES_SHOWN;
  for (size_t i = 0; i < shown; i++) {
    const mprof_shape_stats *sh = &shapes[i];
    const mprof_occupancy *o = mprof_kernel_diagnosis_shape(k, i);
    fprintf(f, "│ grid %u×%u×%u block %u×%u×%u · %u regs · %u B smem",
            sh->grid[0], sh->grid[1], sh->grid[2], sh->block[0], sh->block[1],
            sh->block[2], sh->registers,
            sh->static_shared + sh->dynamic_shared);
    if (o->known && o->blocks_per_sm) {
      mprof_format_percent(p, sizeof p, o->theoretical);
      fprintf(f, " · occupancy %s (%s) · %.2f waves", p,
              mprof_occupancy_limiter_name(o->limiter), o->waves);
    }
    if (shape_count > 1) {
      mprof_format_percent(
          p, sizeof p, s->total_ns ? (double)sh->total_ns / s->total_ns : 0);
      fprintf(f, " · %s of its time", p);
    }
    fputc('\n', f);
  }
  if (shape_count > shown)
    fprintf(f, "│ %s(%zu more shapes)%s\n", st->dim, shape_count - shown,
            st->reset);
  if (mprof__summary_sol_shown(v))
    text_throughput(f, k, st);
  fprintf(f, "│ %s▶%s %s%s%s\n", mprof__state_color(st, k->verdict_state),
          st->reset, st->bold, k->verdict, st->reset);
  char gain[48], saved[48];
  gain_text(gain, sizeof gain, k);
  saved_text(saved, sizeof saved, k);
  if (strcmp(gain, "-") != 0 && !k->roof && k->gain_of_stream)
    fprintf(f,
            "│ %sestimated gain: %.*s of the stream's time (its idle gaps, "
            "not kernel time) · saves %s%s\n",
            st->dim, (int)(strlen(gain) - strlen(" idle")), gain, saved,
            st->reset);
  else if (strcmp(gain, "-") != 0 && !k->roof)
    fprintf(f,
            "│ %sestimated gain: %s of the kernel's %s · saves %s of the "
            "program's GPU time%s\n",
            st->dim, gain, a, saved, st->reset);
  for (size_t i = 0; i < k->dimension_count; i++) {
    const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(k, i);
    if (!mprof_diagnosis_dimension_reported(v->d, dim))
      continue;
    const char *state = dim->state == MPROF_STATE_ISSUE
                            ? "ISSUE"
                            : mprof_state_name(dim->state);
    fprintf(f, "│   %-30s %s%-7s%s %s%s%s\n", mprof_dimension_title(dim->id),
            mprof__state_color(st, dim->state), state, st->reset,
            dim->state == MPROF_STATE_OK || dim->state == MPROF_STATE_UNKNOWN
                ? st->dim
                : "",
            dim->detail, st->reset);
  }
  size_t hot_shown =
      k->hot_count < v->opts->max_hot ? k->hot_count : v->opts->max_hot;
  if (hot_shown) {
    fprintf(f, "│   %shot instructions%s (%zu of %zu sampled)\n", st->bold,
            st->reset, hot_shown, s->pc_count);
    for (size_t i = 0; i < hot_shown; i++) {
      const mprof_hot_instruction *h = mprof_kernel_diagnosis_hot(k, i);
      mprof_format_percent(p, sizeof p, h->share);
      fprintf(f, "│     %s0x%05x%s %6s  %-36s", st->cyan, h->offset, st->reset,
              p, *h->sass ? h->sass : "(no SASS)");
      if (*h->file)
        fprintf(f, " %s%s:%u%s", st->dim, h->file, h->line, st->reset);
      for (size_t r = 0; r < h->reason_count; r++) {
        mprof_format_percent(p, sizeof p, h->reasons[r].share);
        fprintf(f, "%s%s %s", r ? " · " : "  ", h->reasons[r].reason, p);
      }
      fputc('\n', f);
    }
    if (s->pc_count > hot_shown)
      fprintf(f, "│     %s(%zu more sampled instruction%s)%s\n", st->dim,
              s->pc_count - hot_shown, mprof__plural(s->pc_count - hot_shown),
              st->reset);
  }
  text_memory(f, v, k, st);
  for (size_t i = 0; i < k->note_count; i++)
    fprintf(f, "│ %s! %s%s\n", st->yellow, k->notes[i], st->reset);
  fputs("└\n", f);
}

/* The width of the brief table's verdict column: every headline's head
 * ("Instruction-fetch/branch bound") fits. */
enum { VERDICT_COLUMNS = 30 };

/* The head of a verdict sentence, "Memory-latency bound" of
 * "Memory-latency bound: 89.9% of warp samples ...", in @p out; a head
 * wider than @p width columns is cut at a word and ends in "…". */
static void verdict_head(char *out, size_t size, const char *verdict,
                         int width) {
  size_t n = strncmp(verdict, "minor: ", 7) == 0 ? strlen(verdict)
                                                 : strcspn(verdict, ":;.");
  if (n > (size_t)width) {
    size_t cut = (size_t)width - 1;
    while (cut && verdict[cut] != ' ')
      cut--;
    n = cut ? cut : (size_t)width - 1;
    snprintf(out, size, "%.*s…", (int)n, verdict);
    return;
  }
  snprintf(out, size, "%.*s", (int)n, verdict);
}

/* The verdict's gain as the brief table shows it: "45.2%" of the kernel's
 * time, "≥45.2%" or "≤45.2%" for a bound, "?" when the data cannot tell,
 * "roof" at a measured roof (the gain is in doing less work,
 * docs/DIAGNOSIS.md, "Roofs"), "84.3% idle" for idle gaps (stream time,
 * not the kernel's), "-" when the verdict names no dimension. */
static void gain_text(char *out, size_t size, const mprof_kernel_diagnosis *k) {
  char p[32];
  if (k->roof) {
    snprintf(out, size, "roof");
    return;
  }
  if (k->verdict_dimension >= MPROF_DIM_COUNT_ ||
      (k->verdict_state != MPROF_STATE_ISSUE &&
       k->verdict_state != MPROF_STATE_MINOR)) {
    snprintf(out, size, "-");
    return;
  }
  if (k->gain_bound == MPROF_GAIN_UNKNOWN || isnan(k->gain)) {
    snprintf(out, size, "?");
    return;
  }
  mprof_format_percent(p, sizeof p, k->gain);
  snprintf(out, size, "%s%s%s",
           k->gain_bound == MPROF_GAIN_AT_LEAST  ? "≥"
           : k->gain_bound == MPROF_GAIN_AT_MOST ? "≤"
                                                 : "",
           p, k->gain_of_stream ? " idle" : "");
}

/* The time the verdict's fix saves the program, "-" or "?" as gain_text. */
static void saved_text(char *out, size_t size,
                       const mprof_kernel_diagnosis *k) {
  gain_text(out, size, k);
  if (!strcmp(out, "-"))
    return;
  if (k->roof || k->gain_bound == MPROF_GAIN_UNKNOWN || isnan(k->saved_ns)) {
    snprintf(out, size, "?");
    return;
  }
  char t[32];
  mprof_format_duration(t, sizeof t, k->saved_ns);
  snprintf(out, size, "%s%s",
           k->gain_bound == MPROF_GAIN_AT_LEAST  ? "≥"
           : k->gain_bound == MPROF_GAIN_AT_MOST ? "≤"
                                                 : "",
           t);
}

/* Printf pads bytes, not characters: the width of @p text padded to
 * @p width columns, counting "≥", "≤" and "…" as one. */
static int columns(const char *text, int width) {
  int extra = 0;
  for (const char *c = text; *c; c++)
    extra += ((unsigned char)*c & 0xc0) == 0x80;
  return width + extra;
}

/* One line per kernel: share, launches, mean, verdict, estimated gain, the
 * time its fix saves, and the name last, so a long name never pushes the
 * numbers out of line. */
static void text_brief(FILE *f, const mprof__summary_view *v,
                       const mprof__style *st) {
  size_t devices = mprof_join_gpu_count(v->join);
  int idle = 0, bound = 0, roof = 0;
  fprintf(f, "%s%6s %9s %10s  %-*s %11s %10s  %s%s\n", st->dim, "share",
          "launches", "mean", VERDICT_COLUMNS, "verdict", "gain", "saved",
          "kernel", st->reset);
  for (size_t i = 0; i < v->shown; i++) {
    const mprof_kernel_diagnosis *k =
        mprof_diagnosis_kernel(v->d, v->selected[i]);
    const mprof_kernel_stats *s = k->stats;
    char p[32], n[32], m[32];
    mprof_format_percent(p, sizeof p, s->share);
    mprof_format_count(n, sizeof n, s->launches);
    mprof_format_duration(m, sizeof m, s->mean_ns);
    /* The verdict's head; for a minor one ("No clear bottleneck; the
     * largest is minor: ..."), "minor: " and its dimension. */
    char minor[48];
    const char *verdict = k->verdict;
    if (k->verdict_state == MPROF_STATE_MINOR &&
        k->verdict_dimension < MPROF_DIM_COUNT_) {
      const char *title = mprof_dimension_title(k->verdict_dimension);
      const char *slash = strstr(title, " /");
      snprintf(minor, sizeof minor, "minor: %.*s",
               (int)(slash ? (size_t)(slash - title) : strlen(title)), title);
      verdict = minor;
    }
    char head[64];
    verdict_head(head, sizeof head, verdict, VERDICT_COLUMNS);
    char gain[48], saved[48];
    gain_text(gain, sizeof gain, k);
    saved_text(saved, sizeof saved, k);
    idle |= k->gain_of_stream && strcmp(gain, "-") != 0;
    bound |= strchr(gain, '?') || strstr(gain, "≥") || strstr(gain, "≤");
    roof |= k->roof != NULL;
    fprintf(f, "%6s %9s %10s  %s%-*s%s %*s %*s  %s%s%s", p, n, m,
            mprof__state_color(st, k->verdict_state),
            columns(head, VERDICT_COLUMNS), head, st->reset, columns(gain, 11),
            gain, columns(saved, 10), saved, st->bold, text_name(v, k),
            st->reset);
    char process[256];
    mprof__summary_process_label(process, sizeof process, v, s);
    if (devices > 1 && s->device_id != MPROF_INDEX_NONE)
      fprintf(f, " %s(device %u%s%s)%s", st->dim, s->device_id,
              *process ? ", " : "", process, st->reset);
    else if (*process)
      fprintf(f, " %s(%s)%s", st->dim, process, st->reset);
    if (s->flags & MPROF_KERNEL_MPROF_OWN)
      fprintf(f, " %s(mprof's own)%s", st->dim, st->reset);
    fputc('\n', f);
  }
  if (!v->shown)
    return;
  /* What the numbers mean, once (docs/DIAGNOSIS.md, "Reading the gains"). */
  fprintf(f,
          "%sgain: what fixing the verdict could save of the kernel's own "
          "time; saved: that for the program (kernel time x gain)%s%s%s%s\n",
          st->dim,
          idle ? "; \"idle\": the stream's idle gaps around the kernel, "
                 "stream time, not kernel time"
               : "",
          bound ? "; ≥/≤: a bound, ?: not estimable from the trace" : "",
          roof ? "; roof: at a measured roof, the gain is in doing less work"
               : "",
          st->reset);
}

void mprof__summary_text(FILE *f, const mprof__summary_view *v,
                         const mprof__style *st) {
  const mprof_trace *t = v->trace;
  size_t launches = mprof__trace_records(t, MPROF_SECTION_LAUNCHES);
  size_t devices = mprof_join_gpu_count(v->join);
  char n[32], a[32], b[32];
  mprof_format_count(n, sizeof n, launches);
  mprof_format_duration(a, sizeof a, (double)mprof_join_kernel_time(v->join));
  mprof_format_count(b, sizeof b, mprof_join_sample_total(v->join));
  fprintf(f,
          "%smprof summary%s %s · %zu device%s · %s launch%s · %s kernel "
          "time",
          st->bold, st->reset, mprof_trace_path(t), devices,
          mprof__plural(devices), n, launches == 1 ? "" : "es", a);
  /* An MKPROF cannot hold PC samples: their count would tell nothing. */
  if (!mprof_trace_is_mkprof(t))
    fprintf(f, " · %s PC sample%s", b,
            mprof__plural(mprof_join_sample_total(v->join)));
  size_t processes = mprof_trace_process_count(t);
  if (processes > 1)
    fprintf(f, " · %zu processes", processes);
  fputc('\n', f);
  for (size_t i = 0; i < mprof_diagnosis_note_count(v->d); i++)
    fprintf(f, "%s! %s%s\n", st->yellow, mprof_diagnosis_note(v->d, i)->text,
            st->reset);
  fputc('\n', f);
  mprof__mega mega;
  if (mprof__mega_build(&mega, t)) {
    mprof__mega_text(f, &mega, st);
    mprof__mega_free(&mega);
  }
  int brief = (v->opts->flags & MPROF_REPORT_BRIEF) != 0;
  if (brief)
    text_brief(f, v, st);
  for (size_t i = 0; i < v->shown && !brief; i++) {
    text_kernel(f, v, i + 1, mprof_diagnosis_kernel(v->d, v->selected[i]), st);
    fputc('\n', f);
  }
  if (v->matched > v->shown) {
    mprof_format_percent(a, sizeof a, v->omitted_share);
    fprintf(f, "%s(%zu more kernel%s, %s of GPU time; %s)%s\n", st->dim,
            v->matched - v->shown, mprof__plural(v->matched - v->shown), a,
            brief ? "--all lists them" : "--top N shows more", st->reset);
  }
  if (brief && v->shown)
    fprintf(f, "%s--top N or --kernel NAME: the diagnosis of each kernel%s\n",
            st->dim, st->reset);
}
