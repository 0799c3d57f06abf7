/*
 * mprof — the summary of a megakernel (a trace imported from a Megakernels
 * MKPROF): time per instruction type, per GPU and per SM, how busy the
 * loader, consumer and storer are within each type, and the SM tail of
 * each GPU. Computed from the spans: an instruction is the unit bars of
 * one (launch, SM, block = instruction slot), its type the region name.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "summary_internal.h"

enum { MEGA_LOAD, MEGA_COMPUTE, MEGA_STORE, MEGA_UNITS };

static const char *const unit_keys[MEGA_UNITS] = {"load_ns", "compute_ns",
                                                  "store_ns"};

typedef struct mega_item {
  uint32_t launch, sm, block, type, role;
  uint64_t start, end;
} mega_item;

static int by_instruction(const void *a, const void *b) {
  const mega_item *x = (const mega_item *)a, *y = (const mega_item *)b;
  MPROF__ORDER_BY(launch);
  MPROF__ORDER_BY(sm);
  MPROF__ORDER_BY(block);
  return x->start < y->start ? -1 : x->start > y->start;
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int unit_of(uint32_t role) {
  switch (role) {
  case MPROF_ROLE_LOADER: return MEGA_LOAD;
  case MPROF_ROLE_CONSUMER: return MEGA_COMPUTE;
  case MPROF_ROLE_STORER: return MEGA_STORE;
  default: return -1;
  }
}

/* The GPU (device id) of launch @p launch; 0 when the trace does not say. */
static uint32_t launch_gpu(const mprof_trace *t, uint32_t launch) {
  size_t nl, ns, nd;
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_stream_record *s = mprof_trace_streams(t, &ns);
  const mprof_device_record *d = mprof_trace_devices(t, &nd);
  if (launch >= nl || l[launch].stream >= ns ||
      s[l[launch].stream].device >= nd)
    return 0;
  return d[s[l[launch].stream].device].id;
}

void mprof__mega_free(mprof__mega *m) {
  if (!m)
    return;
  free(m->types);
  free(m->type_gpu_ns);
  free(m->sms);
  free(m->sm_type_ns);
  free(m->gpus);
  memset(m, 0, sizeof *m);
}

/* Find or add the type named @p name. */
static uint32_t type_index(mprof__mega *m, const char *name, size_t cap) {
  for (size_t i = 0; i < m->type_count; i++)
    if (strcmp(m->types[i].name, name) == 0)
      return (uint32_t)i;
  if (m->type_count >= cap)
    return 0; /* not reached: cap is the number of regions */
  m->types[m->type_count].name = name;
  return (uint32_t)m->type_count++;
}

/* One SM's instructions: [first, end) of the sorted items. */
static void fold_sm(mprof__mega *m, const mega_item *it, size_t first,
                    size_t end, uint32_t gpu, uint64_t *unit_end) {
  mprof__mega_sm *sm = &m->sms[m->sm_count];
  uint64_t *type_ns = &m->sm_type_ns[m->sm_count * m->type_count];
  sm->gpu = gpu;
  sm->sm = it[first].sm;
  sm->start = UINT64_MAX;
  for (size_t i = first; i < end;) {
    size_t j = i;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int u = 0; u < MEGA_UNITS; u++)
      unit_end[u] = 0;
    uint64_t unit_ns[MEGA_UNITS] = {0};
    while (j < end && it[j].block == it[i].block) {
      lo = it[j].start < lo ? it[j].start : lo;
      hi = it[j].end > hi ? it[j].end : hi;
      int u = unit_of(it[j].role);
      if (u >= 0) {
        /* The union of a unit's bars: spans are in start order. */
        uint64_t from = it[j].start > unit_end[u] ? it[j].start : unit_end[u];
        if (it[j].end > from)
          unit_ns[u] += it[j].end - from;
        if (it[j].end > unit_end[u])
          unit_end[u] = it[j].end;
      }
      j++;
    }
    mprof__mega_type *type = &m->types[it[i].type];
    uint64_t ns = hi - lo;
    type->instructions++;
    type->time_ns += ns;
    for (int u = 0; u < MEGA_UNITS; u++) {
      type->unit_ns[u] += unit_ns[u];
      m->unit_ns[u] += unit_ns[u];
    }
    m->type_gpu_ns[it[i].type * m->gpu_count + gpu] += ns;
    type_ns[it[i].type] += ns;
    sm->instructions++;
    sm->busy_ns += ns;
    sm->start = lo < sm->start ? lo : sm->start;
    sm->finish = hi > sm->finish ? hi : sm->finish;
    m->instructions++;
    m->time_ns += ns;
    i = j;
  }
  m->sm_count++;
}

/* Per GPU: its SMs' extent, their busy time and the tail. */
static void fold_gpus(mprof__mega *m) {
  uint64_t *scratch = (uint64_t *)malloc((m->sm_count + 1) * sizeof *scratch);
  for (uint32_t g = 0; g < m->gpu_count && scratch; g++) {
    mprof__mega_gpu *x = &m->gpus[g];
    size_t n = 0;
    x->start = UINT64_MAX;
    for (size_t s = 0; s < m->sm_count; s++) {
      const mprof__mega_sm *sm = &m->sms[s];
      if (sm->gpu != g)
        continue;
      x->sms++;
      x->instructions += sm->instructions;
      x->busy_ns += sm->busy_ns;
      x->start = sm->start < x->start ? sm->start : x->start;
      if (sm->finish >= x->finish) {
        x->finish = sm->finish;
        x->last_sm = sm->sm;
      }
      scratch[n++] = sm->finish;
    }
    if (!n) {
      x->start = 0;
      continue;
    }
    qsort(scratch, n, sizeof *scratch, by_u64);
    x->tail_ns = x->finish - scratch[(n - 1) / 2]; /* nearest rank, lower */
    size_t k = 0;
    for (size_t s = 0; s < m->sm_count; s++)
      if (m->sms[s].gpu == g)
        scratch[k++] = m->sms[s].busy_ns;
    qsort(scratch, n, sizeof *scratch, by_u64);
    x->min_busy_ns = scratch[0];
    x->median_busy_ns = scratch[(n - 1) / 2];
    x->max_busy_ns = scratch[n - 1];
  }
  free(scratch);
}

int mprof__mega_build(mprof__mega *m, const mprof_trace *t) {
  memset(m, 0, sizeof *m);
  /* Asked first: of a set, the event sections below are built in memory
   * (a copy of every span and launch), which only an MKPROF's needs. */
  if (!mprof_trace_is_mkprof(t))
    return 0;
  size_t n, regions, launches;
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  const mprof_region_record *rg = mprof_trace_regions(t, &regions);
  mprof_trace_launches(t, &launches);
  if (!n || !regions)
    return 0;
  mega_item *it = (mega_item *)malloc(n * sizeof *it);
  uint32_t *region_type = (uint32_t *)malloc(regions * sizeof *region_type);
  m->types = (mprof__mega_type *)calloc(regions, sizeof *m->types);
  if (!it || !region_type || !m->types)
    goto fail;
  for (size_t r = 0; r < regions; r++)
    region_type[r] = type_index(m, mprof_trace_string(t, rg[r].name), regions);
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    if (sp[i].launch >= launches || sp[i].region >= regions ||
        sp[i].end <= sp[i].start)
      continue;
    uint32_t gpu = launch_gpu(t, sp[i].launch);
    if (gpu >= 1024)
      continue; /* MKPROF GPUs are 0..num_gpus-1; a trace may claim more */
    if (gpu + 1 > m->gpu_count)
      m->gpu_count = gpu + 1;
    it[count++] = (mega_item){sp[i].launch,
                              sp[i].sm,
                              sp[i].block,
                              region_type[sp[i].region],
                              rg[sp[i].region].role,
                              sp[i].start,
                              sp[i].end};
  }
  if (!count)
    goto fail;
  qsort(it, count, sizeof *it, by_instruction);
  size_t sms = 0;
  for (size_t i = 0; i < count; i++)
    sms +=
        i == 0 || it[i].launch != it[i - 1].launch || it[i].sm != it[i - 1].sm;
  m->sms = (mprof__mega_sm *)calloc(sms, sizeof *m->sms);
  m->sm_type_ns = (uint64_t *)calloc(sms * m->type_count, sizeof(uint64_t));
  m->type_gpu_ns =
      (uint64_t *)calloc(m->type_count * m->gpu_count, sizeof(uint64_t));
  m->gpus = (mprof__mega_gpu *)calloc(m->gpu_count, sizeof *m->gpus);
  if (!m->sms || !m->sm_type_ns || !m->type_gpu_ns || !m->gpus)
    goto fail;
  uint64_t unit_end[MEGA_UNITS];
  for (size_t i = 0; i < count;) {
    size_t j = i;
    while (j < count && it[j].launch == it[i].launch && it[j].sm == it[i].sm)
      j++;
    fold_sm(m, it, i, j, launch_gpu(t, it[i].launch), unit_end);
    i = j;
  }
  fold_gpus(m);
  free(it);
  free(region_type);
  return 1;
fail:
  free(it);
  free(region_type);
  mprof__mega_free(m);
  return 0;
}

/* Types by time, largest first; ties by name. */
static const mprof__mega *sort_ctx;
static int by_time(const void *a, const void *b) {
  const mprof__mega_type *x = &sort_ctx->types[*(const uint32_t *)a];
  const mprof__mega_type *y = &sort_ctx->types[*(const uint32_t *)b];
  if (x->time_ns != y->time_ns)
    return x->time_ns > y->time_ns ? -1 : 1;
  return strcmp(x->name, y->name);
}

static uint32_t *types_by_time(const mprof__mega *m) {
  uint32_t *order = (uint32_t *)malloc((m->type_count + 1) * sizeof *order);
  if (!order)
    return NULL;
  for (size_t i = 0; i < m->type_count; i++)
    order[i] = (uint32_t)i;
  sort_ctx = m;
  qsort(order, m->type_count, sizeof *order, by_time);
  return order;
}

static double share(uint64_t part, uint64_t whole) {
  return whole ? (double)part / (double)whole : 0.0;
}

/* ---- text ---------------------------------------------------------------- */

#define MEGA_GPU_COLUMNS 4 /* more GPUs than this: per-GPU time in XML/JSON */

void mprof__mega_text(FILE *f, const mprof__mega *m, const mprof__style *st) {
  size_t used = 0;
  for (size_t i = 0; i < m->type_count; i++)
    used += m->types[i].instructions > 0;
  char a[32], b[32], c[32], p[32], q[32], r[32];
  mprof_format_duration(a, sizeof a, (double)m->time_ns);
  fprintf(f,
          "%smegakernel%s · %u GPU%s · %zu SMs · %llu instructions of %zu "
          "type%s · %s of instruction time\n",
          st->bold, st->reset, m->gpu_count, mprof__plural(m->gpu_count),
          m->sm_count, (unsigned long long)m->instructions, used,
          mprof__plural(used), a);
  int gpu_columns = m->gpu_count > 1 && m->gpu_count <= MEGA_GPU_COLUMNS;
  fprintf(f, "%s  %-24s %6s %10s %6s %10s  %5s %7s %5s", st->dim,
          "instruction type", "count", "time", "share", "mean", "load",
          "compute", "store");
  for (uint32_t g = 0; gpu_columns && g < m->gpu_count; g++) {
    char h[16];
    snprintf(h, sizeof h, "GPU %u", g);
    fprintf(f, " %10s", h);
  }
  fprintf(f, "%s\n", st->reset);
  uint32_t *order = types_by_time(m);
  for (size_t k = 0; order && k < m->type_count; k++) {
    const mprof__mega_type *x = &m->types[order[k]];
    if (!x->instructions)
      continue;
    mprof_format_duration(a, sizeof a, (double)x->time_ns);
    mprof_format_percent(b, sizeof b, share(x->time_ns, m->time_ns));
    mprof_format_duration(c, sizeof c,
                          (double)x->time_ns / (double)x->instructions);
    mprof_format_percent(p, sizeof p, share(x->unit_ns[MEGA_LOAD], x->time_ns));
    mprof_format_percent(q, sizeof q,
                         share(x->unit_ns[MEGA_COMPUTE], x->time_ns));
    mprof_format_percent(r, sizeof r,
                         share(x->unit_ns[MEGA_STORE], x->time_ns));
    fprintf(f, "  %-24.24s %6llu %10s %6s %10s  %5s %7s %5s", x->name,
            (unsigned long long)x->instructions, a, b, c, p, q, r);
    for (uint32_t g = 0; gpu_columns && g < m->gpu_count; g++) {
      mprof_format_duration(
          a, sizeof a, (double)m->type_gpu_ns[order[k] * m->gpu_count + g]);
      fprintf(f, " %10s", a);
    }
    fputc('\n', f);
  }
  free(order);
  mprof_format_percent(p, sizeof p, share(m->unit_ns[MEGA_LOAD], m->time_ns));
  mprof_format_percent(q, sizeof q,
                       share(m->unit_ns[MEGA_COMPUTE], m->time_ns));
  mprof_format_percent(r, sizeof r, share(m->unit_ns[MEGA_STORE], m->time_ns));
  fprintf(f,
          "  %sload / compute / store: the loader, consumer and storer are "
          "busy %s / %s / %s of instruction time%s\n",
          st->dim, p, q, r, st->reset);
  for (uint32_t g = 0; g < m->gpu_count; g++) {
    const mprof__mega_gpu *x = &m->gpus[g];
    if (!x->sms)
      continue;
    uint64_t extent = x->finish - x->start;
    mprof_format_duration(a, sizeof a, (double)extent);
    mprof_format_duration(b, sizeof b, (double)x->min_busy_ns);
    mprof_format_duration(c, sizeof c, (double)x->median_busy_ns);
    mprof_format_duration(p, sizeof p, (double)x->max_busy_ns);
    mprof_format_duration(q, sizeof q, (double)x->tail_ns);
    mprof_format_percent(r, sizeof r, share(x->tail_ns, extent));
    fprintf(f,
            "  GPU %u: %u SMs · %llu instructions · %s · busy per SM %s / %s "
            "/ %s (min / median / max) · SM tail: SM %u ends %s after the "
            "median SM (%s)\n",
            g, x->sms, (unsigned long long)x->instructions, a, b, c, p,
            x->last_sm, q, r);
  }
  fputc('\n', f);
}

/* ---- XML and JSON -------------------------------------------------------- */

static void type_fields(mprof__fields *o, const void *ctx, size_t i) {
  const mprof__mega *m = (const mprof__mega *)ctx;
  const mprof__mega_type *x = &m->types[i];
  mprof__fields_str(o, "name", x->name);
  mprof__fields_u64(o, "instructions", x->instructions);
  mprof__fields_u64(o, "time_ns", x->time_ns);
  mprof__fields_num(o, "share", share(x->time_ns, m->time_ns), 4);
  for (int u = 0; u < MEGA_UNITS; u++)
    mprof__fields_u64(o, unit_keys[u], x->unit_ns[u]);
}

static void type_time_fields(mprof__fields *o, const void *ctx, size_t i) {
  const uint64_t *ns = (const uint64_t *)ctx;
  mprof__fields_u64(o, "type", i);
  mprof__fields_u64(o, "time_ns", ns[i]);
}

static void gpu_fields(mprof__fields *o, const void *ctx, size_t g) {
  const mprof__mega *m = (const mprof__mega *)ctx;
  const mprof__mega_gpu *x = &m->gpus[g];
  mprof__fields_u64(o, "gpu", g);
  mprof__fields_u64(o, "sms", x->sms);
  mprof__fields_u64(o, "instructions", x->instructions);
  mprof__fields_u64(o, "extent_ns", x->finish - x->start);
  mprof__fields_u64(o, "busy_ns", x->busy_ns);
  mprof__fields_u64(o, "min_busy_ns", x->min_busy_ns);
  mprof__fields_u64(o, "median_busy_ns", x->median_busy_ns);
  mprof__fields_u64(o, "max_busy_ns", x->max_busy_ns);
  mprof__fields_u64(o, "last_sm", x->last_sm);
  mprof__fields_u64(o, "tail_ns", x->tail_ns);
  uint64_t *ns = (uint64_t *)malloc((m->type_count + 1) * sizeof *ns);
  for (size_t i = 0; ns && i < m->type_count; i++)
    ns[i] = m->type_gpu_ns[i * m->gpu_count + g];
  mprof__report_records(o, "type_time", "types", ns ? m->type_count : 0,
                        type_time_fields, ns);
  free(ns);
}

static void sm_fields(mprof__fields *o, const void *ctx, size_t s) {
  const mprof__mega *m = (const mprof__mega *)ctx;
  const mprof__mega_sm *x = &m->sms[s];
  mprof__fields_u64(o, "gpu", x->gpu);
  mprof__fields_u64(o, "sm", x->sm);
  mprof__fields_u64(o, "instructions", x->instructions);
  mprof__fields_u64(o, "busy_ns", x->busy_ns);
  mprof__fields_u64(o, "start_ns", x->start - m->gpus[x->gpu].start);
  mprof__fields_u64(o, "finish_ns", x->finish - m->gpus[x->gpu].start);
  mprof__report_records(o, "type_time", "types", m->type_count,
                        type_time_fields, &m->sm_type_ns[s * m->type_count]);
}

void mprof__mega_fields(mprof__fields *doc, const mprof__mega *m) {
  mprof__fields x;
  mprof__fields_open(&x, doc, "mega", "mega");
  mprof__fields_u64(&x, "gpus", m->gpu_count);
  mprof__fields_u64(&x, "sms", m->sm_count);
  mprof__fields_u64(&x, "instructions", m->instructions);
  mprof__fields_u64(&x, "time_ns", m->time_ns);
  for (int u = 0; u < MEGA_UNITS; u++)
    mprof__fields_u64(&x, unit_keys[u], m->unit_ns[u]);
  mprof__report_records(&x, "type", "types", m->type_count, type_fields, m);
  mprof__report_records(&x, "gpu", "gpu_times", m->gpu_count, gpu_fields, m);
  mprof__report_records(&x, "sm", "sm_times", m->sm_count, sm_fields, m);
  mprof__fields_close(&x);
}
