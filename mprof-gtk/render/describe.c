/*
 * mprof-render — one line about what is under the pointer, for tooltips
 * and the status line.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "render_internal.h"

static const char *copy_kind_name(uint32_t kind) {
  switch (kind) {
  case MPROF_COPY_HTOD: return "HtoD";
  case MPROF_COPY_DTOH: return "DtoH";
  case MPROF_COPY_DTOD: return "DtoD";
  case MPROF_COPY_HTOH: return "HtoH";
  case MPROF_COPY_PTOP: return "PtoP";
  default: return "";
  }
}

static void relative(const mprof_render_model *m, char *buf, size_t size,
                     int64_t t) {
  int64_t start, end;
  mprof_render_model_bounds(m, &start, &end);
  char d[48];
  mprof_render_format_duration(d, sizeof d, (double)(t - start));
  snprintf(buf, size, "%s%s", t >= start ? "+" : "", d);
}

static size_t describe_pc(const mprof_render_model *m, int kernel, int pc,
                          int lane, char *buf, size_t size) {
  const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)kernel);
  if (!k || pc < 0 || (size_t)pc >= k->pc_count)
    return 0;
  const mprof_render_pc *p = &k->pcs[pc];
  char sass[256], line[256], pct[16], count[32], reasons[512];
  rd_format_sass(sass, sizeof sass, p->insn);
  rd_format_line(line, sizeof line, p->insn);
  rd_format_percent(pct, sizeof pct,
                    (double)p->samples / (double)(k->samples ? k->samples : 1));
  rd_format_count(count, sizeof count, p->samples);
  /* The three largest reasons of this instruction. */
  reasons[0] = '\0';
  size_t used[3] = {(size_t)-1, (size_t)-1, (size_t)-1};
  for (int pick = 0; pick < 3; pick++) {
    size_t best = (size_t)-1;
    for (size_t r = 0; r < mprof_render_reason_count(m); r++) {
      if (mprof_render_reason_at(m, r)->not_issued || !p->reasons[r] ||
          r == used[0] || r == used[1])
        continue;
      if (best == (size_t)-1 || p->reasons[r] > p->reasons[best])
        best = r;
    }
    if (best == (size_t)-1)
      break;
    used[pick] = best;
    char part[128], rp[16];
    rd_format_percent(rp, sizeof rp,
                      (double)p->reasons[best] /
                          (double)(p->samples ? p->samples : 1));
    snprintf(part, sizeof part, "%s%s %s", pick ? ", " : "",
             mprof_render_reason_at(m, best)->name, rp);
    strncat(reasons, part, sizeof reasons - strlen(reasons) - 1);
  }
  (void)lane;
  int n = snprintf(buf, size, "0x%04x  %s  \u2014  %s of samples (%s)%s%s%s%s",
                   p->offset, sass, pct, count, *reasons ? "  \u00b7  " : "",
                   reasons, *line ? "  \u00b7  " : "", line);
  return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}

size_t mprof_render_hit_describe(const mprof_render_model *m,
                                 const mprof_render_hit *hit, char *buf,
                                 size_t size) {
  if (!size)
    return 0;
  buf[0] = '\0';
  if (!m || !hit)
    return 0;
  const mprof_trace *trace = mprof_render_model_trace(m);
  char a[64], b[64], c[64], name[512];
  int n = 0;
  switch (hit->kind) {
  case MPROF_HIT_RULER:
    relative(m, a, sizeof a, hit->time_ns);
    n = snprintf(buf, size, "%s from the start of the trace", a);
    break;
  case MPROF_HIT_LABEL: {
    const mprof_render_row *row = mprof_render_row_at(m, (size_t)hit->row);
    if (!row)
      break;
    if (row->kind == MPROF_ROW_STREAM) {
      rd_format_count(a, sizeof a,
                      mprof_trace_stream_launch_count(trace, row->stream));
      n = snprintf(buf, size, "%s: %s launches", row->label, a);
    } else {
      n = snprintf(buf, size, "%s", row->label);
    }
    break;
  }
  case MPROF_HIT_LAUNCH: {
    size_t count;
    const mprof_launch_record *l = mprof_trace_launches(trace, &count);
    if (hit->launch < 0 || (size_t)hit->launch >= count)
      break;
    l += hit->launch;
    const mprof_render_kernel *k =
        mprof_render_kernel_at(m, (size_t)hit->kernel);
    size_t shapes;
    const mprof_shape_record *sh = mprof_trace_shapes(trace, &shapes);
    mprof_render_format_duration(a, sizeof a, (double)(l->end - l->start));
    relative(m, b, sizeof b, (int64_t)l->start);
    const mprof_shape_record *s = &sh[l->shape];
    n = snprintf(buf, size,
                 "%s  \u2014  %s at %s  \u00b7  grid %u\u00d7%u\u00d7%u "
                 "block %u\u00d7%u\u00d7%u  \u00b7  correlation %u",
                 k ? rd_short_name(name, sizeof name, k->name) : "?", a, b,
                 s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1],
                 s->block[2], l->correlation_id);
    break;
  }
  case MPROF_HIT_MERGED: {
    const mprof_launch_record *first =
        mprof_trace_stream_launch(trace, hit->stream, hit->first);
    const mprof_launch_record *last =
        mprof_trace_stream_launch(trace, hit->stream, hit->last - 1);
    if (!first || !last)
      break;
    rd_format_count(a, sizeof a, hit->last - hit->first);
    relative(m, b, sizeof b, (int64_t)first->start);
    relative(m, c, sizeof c, (int64_t)last->end);
    n = snprintf(buf, size,
                 "%s launches from %s to %s, each narrower than a pixel: "
                 "zoom in",
                 a, b, c);
    break;
  }
  case MPROF_HIT_MEMOP: {
    size_t count;
    const mprof_memop_record *mo = mprof_trace_memops(trace, &count);
    if (hit->memop < 0 || (size_t)hit->memop >= count)
      break;
    mo += hit->memop;
    mprof_render_format_duration(a, sizeof a, (double)(mo->end - mo->start));
    relative(m, b, sizeof b, (int64_t)mo->start);
    double mib = (double)mo->bytes / (1024.0 * 1024.0);
    n = snprintf(buf, size, "%s %s %.2f MiB  \u2014  %s at %s",
                 mo->kind == MPROF_MEMOP_MEMSET ? "memset" : "memcpy",
                 copy_kind_name(mo->copy_kind), mib, a, b);
    break;
  }
  case MPROF_HIT_PC:
    return describe_pc(m, hit->kernel, hit->pc, hit->lane, buf, size);
  case MPROF_HIT_LANE: {
    const mprof_render_kernel *k =
        mprof_render_kernel_at(m, (size_t)hit->kernel);
    if (!k || hit->lane < 0 || !k->samples)
      break;
    uint64_t lane_samples = 0;
    for (size_t i = 0; i < k->pc_count; i++)
      lane_samples +=
          hit->tab == MPROF_RENDER_FLAME
              ? ((int)k->pcs[i].category == hit->lane ? k->pcs[i].samples : 0)
              : k->pcs[i].family[hit->lane];
    rd_format_percent(a, sizeof a, (double)lane_samples / (double)k->samples);
    n = snprintf(buf, size, "%s: %s of the samples",
                 hit->tab == MPROF_RENDER_FLAME
                     ? mprof_render_category_title(hit->lane)
                     : mprof_render_family_title(hit->lane),
                 a);
    break;
  }
  case MPROF_HIT_ROW:
    relative(m, a, sizeof a, hit->time_ns);
    n = snprintf(buf, size, "%s", a);
    break;
  default: break;
  }
  return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}
