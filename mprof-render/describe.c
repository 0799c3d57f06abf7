/*
 * mprof-render — one line about what is under the pointer, for tooltips
 * and the status line.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include <mprof/ranks.h>

#include "view_spans.h"

/* "+1.234 µs" after @p origin. */
static void after(char *buf, size_t size, int64_t t, int64_t origin) {
  char d[48];
  mprof_format_duration(d, sizeof d, (double)rs_sub_ns(t, origin));
  snprintf(buf, size, "%s%s", t >= origin ? "+" : "", d);
}

static size_t describe_pc(const mprof_render_model *m, int kernel, int pc,
                          char *buf, size_t size) {
  const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)kernel);
  if (!k || pc < 0 || (size_t)pc >= k->pc_count)
    return 0;
  const mprof_render_pc *p = &k->pcs[pc];
  char sass[256], line[256], pct[16], count[32], reasons[512];
  rd_format_sass(sass, sizeof sass, p->insn);
  rd_format_line(line, sizeof line, p->insn);
  mprof_format_percent(pct, sizeof pct,
                       (double)p->samples /
                           (double)(k->stats->samples ? k->stats->samples : 1));
  mprof_format_count(count, sizeof count, p->samples);
  /* The three largest plain reasons of this instruction. */
  mprof_render__pc_reasons(m, p, 3, reasons, sizeof reasons);
  /* Its global-memory accesses, when they were counted (--memory). */
  char memory[256] = "";
  const mprof_memory_stats *mem =
      mprof_join_memory_find(m->join, (size_t)kernel, p->offset);
  if (mem && mem->warp_accesses) {
    char eff[16], warps[32];
    mprof_format_percent(eff, sizeof eff, mem->efficiency);
    mprof_format_count(warps, sizeof warps, mem->warp_accesses);
    snprintf(memory, sizeof memory,
             "  \u00b7  memory: %s of its sectors used (%.0f B asked, %.1f "
             "sectors per warp access, %s warp accesses)",
             eff, (double)mem->bytes / (double)mem->warp_accesses,
             (double)mem->sectors / (double)mem->warp_accesses, warps);
  }
  int n =
      snprintf(buf, size, "0x%04x  %s  \u2014  %s of samples (%s)%s%s%s%s%s",
               p->offset, sass, pct, count, *reasons ? "  \u00b7  " : "",
               reasons, *line ? "  \u00b7  " : "", line, memory);
  return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}

static size_t describe(const mprof_render_model *m, const mprof_render_hit *hit,
                       char *buf, size_t size);

/* The line is valid UTF-8 (a GTK label refuses anything else): a trace's
 * names in it may not be, and a cut may split a character. */
size_t mprof_render_hit_describe(const mprof_render_model *m,
                                 const mprof_render_hit *hit, char *buf,
                                 size_t size) {
  size_t n = describe(m, hit, buf, size);
  if (size)
    rd_utf8_repair(buf);
  return n;
}

/* A Ranks cell: the rank's step, its busy and idle time, against the
 * median rank, and whether it straggles. */
static size_t describe_rank_step(const mprof_render_model *m,
                                 const mprof_render_hit *hit, char *buf,
                                 size_t size) {
  const rs_ranks *r = mprof_render__ranks(m);
  if (!r || hit->rank_index < 0 || (size_t)hit->rank_index >= r->count)
    return 0;
  const mprof_rank_info *info =
      mprof_ranks_rank(r->ranks, (size_t)hit->rank_index);
  const mprof_rank_step *st = mprof_ranks_step(
      r->ranks, (size_t)hit->rank_index, (size_t)hit->step_index);
  if (!st)
    return 0;
  char who[64], busy[64], idle[64], window[64];
  if (info->rank >= 0)
    snprintf(who, sizeof who, "rank %lld", (long long)info->rank);
  else
    snprintf(who, sizeof who, "trace %lld", (long long)hit->rank_index);
  mprof_format_duration(busy, sizeof busy, (double)st->busy_ns);
  mprof_format_duration(idle, sizeof idle, (double)st->idle_ns);
  mprof_format_duration(window, sizeof window, (double)st->window_ns);
  int straggles = 0;
  for (size_t i = 0; i < mprof_ranks_straggler_count(r->ranks); i++) {
    const mprof_straggler *s = mprof_ranks_straggler(r->ranks, i);
    straggles |=
        s->rank_index == (size_t)hit->rank_index && s->step == st->step;
  }
  int n = snprintf(buf, size,
                   "%s, step %llu  \u2014  GPU busy %s, idle %s of %s  "
                   "\u00b7  %.2fx the step's median rank%s  \u00b7  click "
                   "to open it on the Trace",
                   who, (unsigned long long)st->step, busy, idle, window,
                   hit->value, straggles ? "  \u00b7  straggler" : "");
  return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static size_t describe(const mprof_render_model *m, const mprof_render_hit *hit,
                       char *buf, size_t size) {
  if (!size)
    return 0;
  buf[0] = '\0';
  if (!m || !hit)
    return 0;
  const mprof_trace *trace = mprof_render_model_trace(m);
  char a[64], b[64], c[64], name[512];
  int n = 0;
  if (mprof_render_tab_is_span(hit->tab))
    return mprof_render__span_describe(m, hit, buf, size);
  int64_t start, end; /* times are told from the start of the trace */
  mprof_render_model_bounds(m, &start, &end);
  switch (hit->kind) {
  case MPROF_HIT_RULER:
    after(a, sizeof a, hit->time_ns, start);
    n = snprintf(buf, size, "%s from the start of the trace", a);
    break;
  case MPROF_HIT_LABEL: {
    const mprof_render_row *row = mprof_render_row_at(m, (size_t)hit->row);
    if (!row)
      break;
    if (row->kind == MPROF_ROW_STREAM && row->stream == MPROF_INDEX_NONE) {
      size_t first, last;
      rs_stream_memops(m, row->stream, &first, &last);
      mprof_format_count(a, sizeof a, last - first);
      n = snprintf(buf, size,
                   "No stream: %s copies and memsets recorded without a "
                   "stream",
                   a);
    } else if (row->kind == MPROF_ROW_STREAM) {
      mprof_format_count(a, sizeof a,
                         mprof_trace_stream_launch_count(trace, row->stream));
      n = snprintf(buf, size, "%s: %s launches", row->label, a);
    } else if (row->kind == MPROF_ROW_RANGES) {
      mprof_format_count(a, sizeof a, row->count);
      n = snprintf(buf, size, "Thread %u, NVTX level %u: %s ranges",
                   row->thread_id, row->depth + 1, a);
    } else if (row->kind == MPROF_ROW_API) {
      mprof_format_count(a, sizeof a, row->count);
      n = snprintf(buf, size,
                   "Thread %u, CUDA API: %s calls that launched or "
                   "copied",
                   row->thread_id, a);
    } else if (row->kind == MPROF_ROW_COUNTER) {
      n = snprintf(buf, size, "%s, %% of the GPU's peak, from PM samples",
                   mprof_counter_title(row->counter));
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
    const mprof_shape_record *sh = mprof_trace_shapes(trace, NULL);
    mprof_format_duration(a, sizeof a, (double)(l->end - l->start));
    after(b, sizeof b, rs_clamp_ns(l->start), start);
    const mprof_shape_record *s = &sh[l->shape];
    const char *shown = k ? k->short_name : "?";
    after(c, sizeof c, rs_clamp_end(l->start, l->end), start);
    /* Registers and theoretical occupancy on its GPU, as the Summary
     * computes them for the kernel's shapes. */
    char occupancy[128] = "";
    size_t kernel_count, stream_count, device_count;
    const mprof_kernel_record *kr = mprof_trace_kernels(trace, &kernel_count);
    const mprof_stream_record *st = mprof_trace_streams(trace, &stream_count);
    const mprof_device_record *dev = mprof_trace_devices(trace, &device_count);
    if (s->kernel < kernel_count) {
      mprof_shape_stats shape;
      memset(&shape, 0, sizeof shape);
      memcpy(shape.grid, s->grid, sizeof shape.grid);
      memcpy(shape.block, s->block, sizeof shape.block);
      shape.dynamic_shared = s->dynamic_shared;
      shape.static_shared = kr[s->kernel].static_shared;
      shape.registers = kr[s->kernel].registers;
      mprof_occupancy occ = MPROF_OCCUPANCY_INIT;
      uint32_t d =
          l->stream < stream_count ? st[l->stream].device : MPROF_INDEX_NONE;
      if (d < device_count &&
          mprof_occupancy_compute(&occ, &dev[d], &shape) == 0 && occ.known) {
        char pct[16];
        mprof_format_percent(pct, sizeof pct, occ.theoretical);
        snprintf(occupancy, sizeof occupancy,
                 "  \u00b7  %u registers, occupancy %s (%s)", shape.registers,
                 pct, mprof_occupancy_limiter_name(occ.limiter));
      } else {
        snprintf(occupancy, sizeof occupancy, "  \u00b7  %u registers",
                 shape.registers);
      }
    }
    /* The full name last, when the label shortened it. */
    int full = k && strcmp(shown, k->name) != 0;
    n = snprintf(buf, size,
                 "%s  \u2014  %s from %s to %s  \u00b7  grid "
                 "%u\u00d7%u\u00d7%u block %u\u00d7%u\u00d7%u%s  \u00b7  "
                 "correlation %u%s%s",
                 shown, a, b, c, s->grid[0], s->grid[1], s->grid[2],
                 s->block[0], s->block[1], s->block[2], occupancy,
                 l->correlation_id, full ? "  \u00b7  " : "",
                 full ? k->name : "");
    break;
  }
  case MPROF_HIT_MERGED: {
    const mprof_launch_record *first =
        mprof_trace_stream_launch(trace, hit->stream, hit->first);
    const mprof_launch_record *last =
        mprof_trace_stream_launch(trace, hit->stream, hit->last - 1);
    if (!first || !last)
      break;
    mprof_format_count(a, sizeof a, hit->last - hit->first);
    after(b, sizeof b, rs_clamp_ns(first->start), start);
    after(c, sizeof c, rs_clamp_ns(last->end), start);
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
    mprof_format_duration(a, sizeof a, (double)(mo->end - mo->start));
    after(b, sizeof b, rs_clamp_ns(mo->start), start);
    mprof_render_memop_label(m, (size_t)hit->memop, NULL, 0, name, sizeof name);
    n = snprintf(buf, size, "%s%s  \u2014  %s at %s",
                 mo->kind == MPROF_MEMOP_MEMCPY ? "memcpy " : "", name, a, b);
    break;
  }
  case MPROF_HIT_RANGE: {
    size_t count;
    const mprof_range_record *r = mprof_trace_ranges(trace, &count);
    if (hit->item < 0 || (size_t)hit->item >= count)
      break;
    r += hit->item;
    const mprof_render_row *row = mprof_render_row_at(m, (size_t)hit->row);
    mprof_format_duration(
        a, sizeof a,
        (double)(rs_clamp_end(r->start, r->end) - rs_clamp_ns(r->start)));
    after(b, sizeof b, rs_clamp_ns(r->start), start);
    const char *domain = mprof_trace_string(trace, r->domain);
    n = snprintf(buf, size,
                 "%s  \u2014  %s at %s  \u00b7  thread %u, level %u%s%s%s",
                 mprof_trace_string(trace, r->name), a, b, r->thread_id,
                 row ? row->depth + 1 : r->depth + 1,
                 *domain ? "  \u00b7  domain " : "", domain,
                 (r->flags & MPROF_RANGE_FLAG_OPEN)
                     ? "  \u00b7  still open at the cut (ends there)"
                     : "");
    break;
  }
  case MPROF_HIT_API: {
    size_t count;
    const mprof_api_call_record *cl = mprof_trace_api_calls(trace, &count);
    if (hit->item < 0 || (size_t)hit->item >= count)
      break;
    cl += hit->item;
    mprof_format_duration(
        a, sizeof a, (double)(cl->end > cl->start ? cl->end - cl->start : 0));
    after(b, sizeof b, rs_clamp_ns(cl->start), start);
    const mprof_render_kernel *k = rs_kernel(m, hit->kernel);
    char issued[600];
    if (k)
      snprintf(issued, sizeof issued, "launched %s", k->short_name);
    else
      snprintf(issued, sizeof issued, "no launch");
    n = snprintf(buf, size,
                 "%s  \u2014  %s at %s  \u00b7  thread %u, %s API  \u00b7  "
                 "%s (correlation %u)",
                 mprof_trace_string(trace, cl->name), a, b, cl->thread_id,
                 cl->kind == MPROF_API_DRIVER ? "driver" : "runtime", issued,
                 cl->correlation_id);
    break;
  }
  case MPROF_HIT_RANK_STEP: return describe_rank_step(m, hit, buf, size);
  case MPROF_HIT_COUNTER: {
    size_t count;
    const mprof_pm_sample_record *w = mprof_trace_pm_samples(trace, &count);
    const mprof_render_row *row = mprof_render_row_at(m, (size_t)hit->row);
    if (!row || hit->item < 0 || (size_t)hit->item >= count)
      break;
    w += hit->item;
    mprof_format_percent(a, sizeof a, hit->value / 100.0);
    mprof_format_duration(b, sizeof b, (double)(w->end - w->start));
    after(c, sizeof c, rs_clamp_ns(w->start), start);
    n = snprintf(buf, size, "%s %s of peak  \u00b7  the %s window at %s",
                 mprof_counter_title(row->counter), a, b, c);
    break;
  }
  case MPROF_HIT_PC: return describe_pc(m, hit->kernel, hit->pc, buf, size);
  case MPROF_HIT_LANE: {
    const mprof_render_kernel *k =
        mprof_render_kernel_at(m, (size_t)hit->kernel);
    if (!k || hit->lane < 0 || !k->stats->samples)
      break;
    uint64_t lane_samples = 0;
    for (size_t i = 0; i < k->pc_count; i++)
      lane_samples +=
          hit->tab == MPROF_RENDER_FLAME
              ? ((int)k->pcs[i].category == hit->lane ? k->pcs[i].samples : 0)
              : k->pcs[i].family[hit->lane];
    mprof_format_percent(a, sizeof a,
                         (double)lane_samples / (double)k->stats->samples);
    n = snprintf(buf, size, "%s: %s of the samples",
                 hit->tab == MPROF_RENDER_FLAME
                     ? mprof_render_category_title(hit->lane)
                     : mprof_render_family_title(hit->lane),
                 a);
    break;
  }
  case MPROF_HIT_ROW:
    after(a, sizeof a, hit->time_ns, start);
    n = snprintf(buf, size, "%s", a);
    break;
  default: break;
  }
  return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}

/* ---- span views --------------------------------------------------------- */

static const char *role_name(uint32_t role) {
  switch (role) {
  case MPROF_ROLE_SEPARATOR: return "separator";
  case MPROF_ROLE_LOADER: return "loader";
  case MPROF_ROLE_CONSUMER: return "consumer";
  case MPROF_ROLE_STORER: return "storer";
  default: return "other";
  }
}

/* The SM's own numbers, from the kernel's group. */
static const rs_sm *find_sm(const mprof_render_model *m, int kernel,
                            uint32_t device, uint32_t sm) {
  const rs_group *g = mprof_render__group(m, kernel);
  for (size_t i = 0; g && i < g->sm_count; i++)
    if (g->sms[i].device == device && g->sms[i].sm == sm)
      return &g->sms[i];
  return NULL;
}

/* "GPU 1 · SM 5" when the kernel's spans are on several GPUs, else
 * "SM 5", as the rows are labelled. */
static void sm_name(const mprof_render_model *m, const mprof_render_hit *hit,
                    char *buf, size_t size) {
  const rs_group *g = mprof_render__group(m, hit->kernel);
  const rs_sm *sm = find_sm(m, hit->kernel, hit->device, hit->sm);
  rs_sm_label(buf, size, g ? g->gpu_count : 1, sm ? sm->gpu : 0, hit->sm);
}

/* ", params: name=value, ..." of the MKPROF instruction behind a span. */
static void mkprof_params(const mprof_render_model *m,
                          const mprof_span_record *sp, char *buf, size_t size) {
  buf[0] = '\0';
  if (!m->mkprof)
    return;
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m->mkprof);
  uint32_t device = rs_launch_device(m, sp->launch);
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  uint32_t gpu = device < devices ? dev[device].id : 0;
  uint32_t processor = gpu * l->sms_per_gpu + sp->sm;
  mprof_mkprof_instruction ins;
  if (mprof_mkprof_instruction_at(m->mkprof, processor, sp->block, &ins))
    return;
  const mprof_mkprof_instruction_type *type =
      mprof_mkprof_find_type(m->mkprof, ins.opcode);
  mprof_mkprof_param_value values[16];
  size_t n = mprof_mkprof_params(m->mkprof, processor, sp->block, values, 16);
  size_t used = (size_t)snprintf(
      buf, size, "  \u00b7  GPU %u, SM %u, instruction %u, type %s (opcode %d)",
      gpu, ins.sm, ins.index, type ? type->name : "?", ins.opcode);
  for (size_t i = 0; i < n && i < 16 && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s=%d",
                             i ? ", " : "  \u00b7  params: ", values[i].name,
                             values[i].value);
}

size_t mprof_render__span_describe(const mprof_render_model *m,
                                   const mprof_render_hit *hit, char *buf,
                                   size_t size) {
  const mprof_trace *trace = mprof_render_model_trace(m);
  int64_t origin = rs_span_origin(m, hit->kernel);
  char a[64], b[64], c[64], smn[48];
  int n = 0;
  sm_name(m, hit, smn, sizeof smn);
  size_t spans;
  const mprof_span_record *sp = mprof_trace_spans(trace, &spans);
  switch (hit->kind) {
  case MPROF_HIT_SPAN: {
    if (hit->span < 0 || (size_t)hit->span >= spans)
      break;
    const mprof_span_record *s = &sp[hit->span];
    size_t regions;
    const mprof_region_record *rg = mprof_trace_regions(trace, &regions);
    char region[128];
    if (s->region < regions)
      snprintf(region, sizeof region, "%s",
               mprof_trace_string(trace, rg[s->region].name));
    else
      snprintf(region, sizeof region, "region %u", s->region);
    mprof_format_duration(a, sizeof a, (double)(s->end - s->start));
    after(b, sizeof b, rs_clamp_ns(s->start), origin);
    size_t launches;
    const mprof_launch_record *l = mprof_trace_launches(trace, &launches);
    char into[96] = "", who[96], payload[96] = "", params[1024];
    if (s->launch < launches) {
      mprof_format_duration(
          c, sizeof c,
          (double)(rs_clamp_ns(s->start) - rs_clamp_ns(l[s->launch].start)));
      snprintf(into, sizeof into, " (%s into launch %u)", c, s->launch);
    }
    mprof_render_hit at = *hit; /* the span's own SM */
    at.device = rs_launch_device(m, s->launch);
    at.sm = s->sm;
    sm_name(m, &at, smn, sizeof smn);
    if (s->warp != MPROF_INDEX_NONE)
      snprintf(who, sizeof who, "%s \u00b7 block %u \u00b7 warp %u", smn,
               s->block, s->warp);
    else
      snprintf(who, sizeof who, "%s \u00b7 block %u", smn, s->block);
    mkprof_params(m, s, params, sizeof params);
    if (!*params)
      snprintf(payload, sizeof payload, "  \u00b7  payload %llu (0x%llx)",
               (unsigned long long)s->payload, (unsigned long long)s->payload);
    const mprof_render_kernel *k =
        rs_kernel(m, mprof_render_launch_kernel(m, s->launch));
    n = snprintf(buf, size, "%s (%s)  \u2014  %s at %s%s  \u00b7  %s%s%s%s%s",
                 region, role_name(rs_region_role(m, s->region)), a, b, into,
                 who, payload, params, k ? "  \u00b7  " : "",
                 k ? k->short_name : "");
    break;
  }
  case MPROF_HIT_SPANS:
    mprof_format_count(a, sizeof a, hit->spans);
    after(b, sizeof b, hit->t0, origin);
    n = snprintf(buf, size,
                 "%s spans on %s around %s, narrower than a pixel: zoom in", a,
                 smn, b);
    break;
  case MPROF_HIT_LABEL:
  case MPROF_HIT_SM: {
    const rs_sm *sm = find_sm(m, hit->kernel, hit->device, hit->sm);
    if (hit->tab == MPROF_RENDER_ACTIVITY && hit->row_key >= 0) {
      after(b, sizeof b, hit->time_ns, origin);
      n = snprintf(buf, size, "%s at %s", smn, b);
      break;
    }
    if (!sm) {
      n = snprintf(buf, size,
                   "%s: projected from the kernel's launches (no spans)", smn);
      break;
    }
    if (!sm->count) {
      n = snprintf(buf, size, "%s: no spans for this kernel (idle)", smn);
      break;
    }
    mprof_format_count(a, sizeof a, sm->count);
    mprof_format_duration(b, sizeof b, (double)sm->busy_ns);
    double extent = (double)(sm->last_end - sm->first_start);
    char pct[16];
    mprof_format_percent(pct, sizeof pct,
                         extent > 0 ? (double)sm->busy_ns / extent : 0);
    after(c, sizeof c, sm->last_end, origin);
    n = snprintf(buf, size,
                 "%s: %s spans, busy %s (%s of its first-to-last span), "
                 "last span ends at %s",
                 smn, a, b, pct, c);
    break;
  }
  case MPROF_HIT_CELL: {
    after(a, sizeof a, hit->t0, origin);
    after(b, sizeof b, hit->t1, origin);
    char pct[16];
    mprof_format_percent(pct, sizeof pct, hit->value);
    n = snprintf(buf, size,
                 "%s  \u00b7  %s to %s: busy %s, %.2f spans at once "
                 "(measured)",
                 smn, a, b, pct, (double)hit->spans / 1000.0);
    break;
  }
  case MPROF_HIT_PROJECTED: {
    char pct[16];
    mprof_format_percent(pct, sizeof pct, hit->value);
    after(a, sizeof a, hit->time_ns, origin);
    n = snprintf(buf, size,
                 "%s at %s  \u00b7  launch %lld, wave %zu of %zu: %llu "
                 "block%s, %s of the warp slots (projected from the grid, "
                 "not measured)",
                 smn, a, (long long)hit->launch, hit->first + 1, hit->last,
                 (unsigned long long)hit->spans, hit->spans == 1 ? "" : "s",
                 pct);
    break;
  }
  case MPROF_HIT_RULER:
    after(a, sizeof a, hit->time_ns, origin);
    n = snprintf(buf, size, "%s after the kernel's first span", a);
    break;
  default: break;
  }
  return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}
