/*
 * mprof — the Trace Event Format export (Chrome, Perfetto): processes and
 * threads, launches, copies, NVTX ranges, API calls with their flows to the
 * GPU, PM counters and in-kernel spans. The layout, and why, is in
 * docs/EXPORT.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/export.h"
#include "mprof/names.h"
#include "mprof/units.h"
#include "mprof/version.h"
#include "base/array.h"
#include "base/text.h"
#include "report/report_internal.h"
#include "export/export_internal.h"

/* ---- shared helpers ----------------------------------------------------- */

/* Microseconds since @p origin with nanosecond digits: exact, unlike a
 * double of an absolute CUPTI timestamp. */
static void put_us(FILE *f, uint64_t t, uint64_t origin) {
  uint64_t d = t > origin ? t - origin : 0;
  fprintf(f, "%llu.%03llu", (unsigned long long)(d / 1000),
          (unsigned long long)(d % 1000));
}

/* A grid, block or cluster: "AxBxC". */
static void put_dims(mprof__fields *args, const char *name,
                     const uint32_t v[3]) {
  char text[48];
  snprintf(text, sizeof text, "%ux%ux%u", v[0], v[1], v[2]);
  mprof__fields_str(args, name, text);
}

/* ---- Trace Event Format -------------------------------------------------- */

/* Process ids: each trace's host process keeps its recorded pid (unless
 * another trace of the set has it); its GPUs and their SMs get ids far
 * above any Linux pid, so tracks never merge across traces. */
#define GPU_PID_BASE 0x40000000u
static uint32_t gpu_pid(size_t trace, uint32_t device, int sms) {
  if (device == MPROF_INDEX_NONE) /* a stream's unknown device */
    device = 0xffffu;
  return GPU_PID_BASE + (uint32_t)trace * 0x10000u + device * 2u +
         (sms ? 1u : 0u);
}

typedef struct te_writer {
  FILE *f;
  uint64_t origin;
  size_t events;
  int first;
} te_writer;

static void te_begin(te_writer *w) {
  fputs(w->first ? "\n" : ",\n", w->f);
  w->first = 0;
  w->events++;
}

/* The metadata events that name process @p pid, or its thread @p tid,
 * and place it among the others (not when @p sort_index is negative). */
static void te_name(te_writer *w, uint32_t pid, int thread, uint64_t tid,
                    const char *name, long long sort_index) {
  for (int sort = 0; sort < 2 && (!sort || sort_index >= 0); sort++) {
    te_begin(w);
    fprintf(w->f, "{\"ph\":\"M\",\"name\":\"%s_%s\",\"pid\":%u",
            thread ? "thread" : "process", sort ? "sort_index" : "name", pid);
    if (thread)
      fprintf(w->f, ",\"tid\":%llu", (unsigned long long)tid);
    if (sort) {
      fprintf(w->f, ",\"args\":{\"sort_index\":%lld}}", sort_index);
      continue;
    }
    fputs(",\"args\":{\"name\":", w->f);
    mprof__json_string(w->f, name);
    fputs("}}", w->f);
  }
}

/* A complete event ("X") up to its args object, which is left open for
 * the fields returned: the caller ends the args and the event with "}}". */
static mprof__fields te_complete(te_writer *w, const char *name,
                                 const char *cat, uint32_t pid, uint64_t tid,
                                 uint64_t start, uint64_t end) {
  mprof__fields args = {w->f, 1, 0};
  te_begin(w);
  fputs("{\"ph\":\"X\",\"name\":", w->f);
  mprof__json_string(w->f, name);
  fprintf(w->f, ",\"cat\":\"%s\",\"pid\":%u,\"tid\":%llu,\"ts\":", cat, pid,
          (unsigned long long)tid);
  put_us(w->f, start, w->origin);
  fputs(",\"dur\":", w->f);
  put_us(w->f, end > start ? end : start, start);
  fputs(",\"args\":{", w->f);
  return args;
}

static uint32_t device_ordinal(const mprof_trace *trace, uint32_t device) {
  size_t n;
  const mprof_device_record *devices = mprof_trace_devices(trace, &n);
  return device < n ? devices[device].id : MPROF_INDEX_NONE;
}

static uint32_t host_pid(const mprof_trace *trace, size_t t,
                         const uint32_t *earlier) {
  /* A trace of one process shows under its pid; a set under a made-up one. */
  size_t processes;
  const mprof_process_record *p = mprof_trace_processes(trace, &processes);
  uint64_t pid = processes == 1 ? p->pid : 0;
  if (pid == 0 || pid >= GPU_PID_BASE)
    pid = 0x20000000u + t;
  for (size_t i = 0; i < t; i++)
    if (earlier[i] == pid)
      return 0x20000000u + (uint32_t)t;
  return (uint32_t)pid;
}

static void te_process_names(te_writer *w, const mprof_trace *trace, size_t t,
                             uint32_t pid, int multi) {
  char name[512];
  const char *cmd = mprof_trace_process_count(trace) == 1
                        ? mprof_trace_process_meta(trace, 0, "cmdline")
                        : NULL;
  snprintf(name, sizeof name, "%s%s%s",
           mprof__export_base_name(mprof_trace_path(trace)),
           cmd && *cmd ? ": " : "", cmd ? cmd : "");
  te_name(w, pid, 0, 0, name, (long long)(t * 1000 + 999));
  size_t n;
  const mprof_device_record *devices = mprof_trace_devices(trace, &n);
  for (size_t d = 0; d < n; d++) {
    const char *dev = mprof_trace_string(trace, devices[d].name);
    for (int sms = 0; sms < 2; sms++) {
      snprintf(name, sizeof name, "GPU %u%s: %s%s%s", devices[d].id,
               sms ? " SMs" : "", dev, multi ? " — " : "",
               multi ? mprof__export_base_name(mprof_trace_path(trace)) : "");
      uint32_t p = gpu_pid(t, (uint32_t)d, sms);
      te_name(w, p, 0, 0, name, (long long)(t * 1000 + d * 2 + (size_t)sms));
    }
  }
  const mprof_stream_record *streams = mprof_trace_streams(trace, &n);
  for (size_t s = 0; s < n; s++) {
    const char *label = mprof_trace_string(trace, streams[s].name);
    if (*label)
      snprintf(name, sizeof name, "stream %u (%s)", streams[s].stream_id,
               label);
    else
      snprintf(name, sizeof name, "stream %u", streams[s].stream_id);
    uint32_t p = gpu_pid(t, streams[s].device, 0);
    te_name(w, p, 1, streams[s].stream_id, name, streams[s].stream_id);
  }
}

static void te_launches(te_writer *w, const mprof_diagnosis *diag, size_t t,
                        const unsigned char *selected) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  size_t launch_count, shape_count, kernel_count, stream_count;
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_count);
  const mprof_shape_record *shapes = mprof_trace_shapes(trace, &shape_count);
  const mprof_kernel_record *kernels =
      mprof_trace_kernels(trace, &kernel_count);
  const mprof_stream_record *streams =
      mprof_trace_streams(trace, &stream_count);
  for (size_t i = 0; i < launch_count; i++) {
    const mprof_launch_record *l = &launches[i];
    uint32_t k = mprof_join_launch_kernel(join, i);
    if (k == MPROF_INDEX_NONE || !selected[k])
      continue;
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(diag, k);
    const mprof_shape_record *shape = &shapes[l->shape];
    const mprof_kernel_record *kr = &kernels[shape->kernel];
    const mprof_stream_record *st = &streams[l->stream];
    /* The event's name: the short one, unique in the trace; args.kernel is
     * the full one. */
    mprof__fields a =
        te_complete(w, mprof_join_kernel_short(join, k), "kernel",
                    gpu_pid(t, st->device, 0), st->stream_id, l->start, l->end);
    mprof__fields_str(&a, "kernel", kd->stats->name);
    mprof__fields_str(&a, "mangled", kd->stats->mangled);
    mprof__fields_u64(&a, "device", device_ordinal(trace, st->device));
    mprof__fields_u64(&a, "stream", st->stream_id);
    mprof__fields_u64(&a, "correlation_id", l->correlation_id);
    put_dims(&a, "grid", shape->grid);
    put_dims(&a, "block", shape->block);
    if (shape->cluster[0])
      put_dims(&a, "cluster", shape->cluster);
    mprof__fields_u64(&a, "registers", kr->registers);
    mprof__fields_u64(&a, "static_shared", kr->static_shared);
    mprof__fields_u64(&a, "dynamic_shared", shape->dynamic_shared);
    if (l->graph_id)
      mprof__fields_u64(&a, "graph_id", l->graph_id);
    mprof__fields_str(&a, "verdict", kd->verdict);
    mprof__fields_str(&a, "verdict_dimension",
                      kd->verdict_dimension == MPROF_DIM_NONE
                          ? "none"
                          : mprof_dimension_key(kd->verdict_dimension));
    mprof__fields_num(&a, "kernel_share", kd->stats->share, 4);
    mprof__fields_num(&a, "theoretical_occupancy",
                      kd->occupancy->known ? kd->occupancy->theoretical : NAN,
                      4);
    fputs("}}", w->f);
  }
}

static void te_memops(te_writer *w, const mprof_trace *trace, size_t t) {
  size_t n, stream_count;
  const mprof_memop_record *ops = mprof_trace_memops(trace, &n);
  const mprof_stream_record *streams =
      mprof_trace_streams(trace, &stream_count);
  for (size_t i = 0; i < n; i++) {
    const mprof_memop_record *m = &ops[i];
    const mprof_stream_record *st = &streams[m->stream];
    char size[32], name[96];
    mprof_format_bytes(size, sizeof size, (double)m->bytes);
    int memset_op = m->kind == MPROF_MEMOP_MEMSET;
    const char *kind = mprof_copy_kind_name(m->copy_kind);
    snprintf(name, sizeof name, "%s%s%s %s", memset_op ? "Memset" : "Memcpy",
             *kind ? " " : "", memset_op ? "" : kind, size);
    mprof__fields a =
        te_complete(w, name, memset_op ? "memset" : "memcpy",
                    gpu_pid(t, st->device, 0), st->stream_id, m->start, m->end);
    mprof__fields_u64(&a, "bytes", m->bytes);
    if (!memset_op)
      mprof__fields_str(&a, "kind", *kind ? kind : "unknown");
    else
      mprof__fields_u64(&a, "value", m->value);
    if (m->end > m->start)
      mprof__fields_num(&a, "bandwidth_GBps",
                        (double)m->bytes / (double)(m->end - m->start), 3);
    mprof__fields_u64(&a, "correlation_id", m->correlation_id);
    fputs("}}", w->f);
  }
}

static int u32_order(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct range_key {
  uint32_t thread;
  uint64_t start;
  uint64_t end;
  size_t index;
} range_key;

static int range_order(const void *a, const void *b) {
  const range_key *x = (const range_key *)a, *y = (const range_key *)b;
  MPROF__ORDER_BY(thread);
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY_DESC(end); /* the outer range first */
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Host threads: one track each for its NVTX ranges and its API calls,
 * named once. */
static int te_host_threads(te_writer *w, const mprof_trace *trace,
                           uint32_t pid) {
  size_t nr, nc;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &nr);
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  if (!nr && !nc)
    return MPROF_OK;
  uint32_t *threads = (uint32_t *)malloc((nr + nc) * sizeof *threads);
  if (!threads)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < nr; i++)
    threads[i] = ranges[i].thread_id;
  for (size_t i = 0; i < nc; i++)
    threads[nr + i] = calls[i].thread_id;
  qsort(threads, nr + nc, sizeof *threads, u32_order);
  for (size_t i = 0; i < nr + nc; i++) {
    if (i && threads[i] == threads[i - 1])
      continue;
    char name[64];
    snprintf(name, sizeof name, "thread %u", threads[i]);
    te_name(w, pid, 1, threads[i], name, -1);
  }
  free(threads);
  return MPROF_OK;
}

static int te_ranges(te_writer *w, const mprof_trace *trace, uint32_t pid) {
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  if (!n)
    return MPROF_OK;
  range_key *order = (range_key *)malloc(n * sizeof *order);
  if (!order)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    order[i] =
        (range_key){ranges[i].thread_id, ranges[i].start, ranges[i].end, i};
  qsort(order, n, sizeof *order, range_order);
  for (size_t o = 0; o < n; o++) {
    const mprof_range_record *r = &ranges[order[o].index];
    const char *name = mprof_trace_string(trace, r->name);
    const char *domain = mprof_trace_string(trace, r->domain);
    mprof__fields a = te_complete(w, *name ? name : "(unnamed range)", "nvtx",
                                  pid, r->thread_id, r->start, r->end);
    mprof__fields_str(&a, "domain", *domain ? domain : "default");
    mprof__fields_u64(&a, "depth", r->depth);
    if (r->color) {
      char color[16];
      snprintf(color, sizeof color, "#%06x", r->color & 0xffffffu);
      mprof__fields_str(&a, "color", color);
    }
    fputs("}}", w->f);
  }
  free(order);
  return MPROF_OK;
}

/* ---- API calls and their flows to the GPU ------------------------------ */

typedef struct call_key {
  uint32_t correlation;
  uint32_t index;
} call_key;

static int call_key_order(const void *a, const void *b) {
  const call_key *x = (const call_key *)a, *y = (const call_key *)b;
  MPROF__ORDER_BY(correlation);
  return x->index < y->index ? -1 : x->index > y->index;
}

/* One flow event: "s" on the API call's slice, "f" bound to the enclosing
 * slice (bp "e") of the kernel or copy. Each sits in the middle of its
 * slice, so that viewers bind it to that slice and no neighbour. */
static void te_flow(te_writer *w, const char *phase, uint64_t id, uint32_t pid,
                    uint64_t tid, uint64_t start, uint64_t end) {
  te_begin(w);
  fprintf(w->f,
          "{\"ph\":\"%s\",\"name\":\"launch\",\"cat\":\"flow\",\"id\":%llu,"
          "\"pid\":%u,\"tid\":%llu,\"ts\":",
          phase, (unsigned long long)id, pid, (unsigned long long)tid);
  put_us(w->f, start + (end > start ? (end - start) / 2 : 0), w->origin);
  fputs(phase[0] == 'f' ? ",\"bp\":\"e\"}" : "}", w->f);
}

/* The API calls (cat "api") on their host threads, and a flow from each
 * call to the kernel launch (exported ones only) or copy it issued. */
static int te_api_calls(te_writer *w, const mprof_diagnosis *diag, size_t t,
                        uint32_t pid, const unsigned char *selected) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  size_t nc, nl, nm, stream_count;
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  if (!nc)
    return MPROF_OK;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *memops = mprof_trace_memops(trace, &nm);
  const mprof_stream_record *streams =
      mprof_trace_streams(trace, &stream_count);
  call_key *keys = (call_key *)malloc(nc * sizeof *keys);
  if (!keys)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < nc; i++) {
    const mprof_api_call_record *c = &calls[i];
    keys[i] = (call_key){c->correlation_id, (uint32_t)i};
    te_complete(w, mprof_trace_string(trace, c->name), "api", pid, c->thread_id,
                c->start, c->end);
    fprintf(w->f, "\"correlation_id\":%u,\"api\":\"%s\"}}", c->correlation_id,
            c->kind == MPROF_API_DRIVER ? "driver" : "runtime");
  }
  qsort(keys, nc, sizeof *keys, call_key_order);
  /* Flow ids: unique in the exported set (trace index, correlation). */
  for (size_t i = 0; i < nl + nm; i++) {
    int launch = i < nl;
    uint32_t k = launch ? mprof_join_launch_kernel(join, i) : 0;
    if (launch && (k == MPROF_INDEX_NONE || !selected[k]))
      continue;
    uint32_t correlation =
        launch ? launches[i].correlation_id : memops[i - nl].correlation_id;
    uint32_t stream = launch ? launches[i].stream : memops[i - nl].stream;
    uint64_t start = launch ? launches[i].start : memops[i - nl].start;
    uint64_t end = launch ? launches[i].end : memops[i - nl].end;
    if (!correlation || stream >= stream_count)
      continue;
    size_t at; /* the first call with this correlation id */
    MPROF__LOWER_BOUND(at, nc, mid, keys[mid].correlation < correlation);
    if (at == nc || keys[at].correlation != correlation)
      continue;
    const mprof_api_call_record *c = &calls[keys[at].index];
    const mprof_stream_record *st = &streams[stream];
    uint64_t id = ((uint64_t)t << 32) | correlation;
    te_flow(w, "s", id, pid, c->thread_id, c->start, c->end);
    te_flow(w, "f", id, gpu_pid(t, st->device, 0), st->stream_id, start, end);
  }
  free(keys);
  return MPROF_OK;
}

/* PM-sampling counters: one counter track per metric on its GPU's
 * process; each sample sets the value from its start on. Columns a sample
 * did not measure (NaN) are left out. */
static void te_counters(te_writer *w, const mprof_trace *trace, size_t t) {
  size_t metric_count, sample_count;
  const mprof_pm_metric_record *metrics =
      mprof_trace_pm_metrics(trace, &metric_count);
  const mprof_pm_sample_record *samples =
      mprof_trace_pm_samples(trace, &sample_count);
  for (size_t m = 0; m < metric_count; m++) {
    const mprof_pm_metric_record *metric = &metrics[m];
    if (metric->column >= MPROF_PM_MAX_METRICS)
      continue;
    const char *name = mprof_trace_string(trace, metric->name);
    const char *unit = mprof_trace_string(trace, metric->unit);
    for (size_t i = 0; i < sample_count; i++) {
      const mprof_pm_sample_record *s = &samples[i];
      float value = s->value[metric->column];
      if (s->device != metric->device || value != value)
        continue;
      te_begin(w);
      fputs("{\"ph\":\"C\",\"cat\":\"pm\",\"name\":", w->f);
      mprof__json_string(w->f, name);
      fprintf(w->f, ",\"pid\":%u,\"ts\":", gpu_pid(t, metric->device, 0));
      put_us(w->f, s->start, w->origin);
      mprof__fields a = {w->f, 1, 0};
      fputs(",\"args\":{", w->f);
      mprof__fields_num(&a, *unit ? unit : "value", (double)value, 6);
      fputs("}}", w->f);
    }
  }
}

/* Spans are laid out per SM in lanes: a span goes to the first lane where
 * it either starts after everything open there has ended or nests inside
 * the innermost open span, so every lane is a well-formed stack of
 * complete events, as the viewers require of one thread. */
typedef struct span_key {
  uint32_t device;
  uint32_t sm;
  uint64_t start;
  uint64_t end;
  size_t index;
} span_key;

static int span_key_order(const void *a, const void *b) {
  const span_key *x = (const span_key *)a, *y = (const span_key *)b;
  MPROF__ORDER_BY(device);
  MPROF__ORDER_BY(sm);
  MPROF__ORDER_BY(start);
  MPROF__ORDER_BY_DESC(end);
  return x->index < y->index ? -1 : x->index > y->index;
}

typedef struct lane {
  uint64_t *open; /* ends of the spans open in this lane, innermost last */
  size_t depth, capacity;
} lane;

static int te_spans(te_writer *w, const mprof_diagnosis *diag, size_t t,
                    const unsigned char *selected) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  size_t n, launch_count, stream_count, region_count;
  const mprof_span_record *spans = mprof_trace_spans(trace, &n);
  if (!n)
    return MPROF_OK;
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_count);
  const mprof_stream_record *streams =
      mprof_trace_streams(trace, &stream_count);
  const mprof_region_record *regions =
      mprof_trace_regions(trace, &region_count);
  span_key *keys = (span_key *)malloc(n * sizeof *keys);
  if (!keys)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const mprof_span_record *s = &spans[i];
    uint32_t device = MPROF_INDEX_NONE;
    if (s->launch != MPROF_INDEX_NONE && s->launch < launch_count) {
      uint32_t k = mprof_join_launch_kernel(join, s->launch);
      if (k != MPROF_INDEX_NONE && !selected[k])
        continue;
      device = streams[launches[s->launch].stream].device;
    }
    keys[kept++] = (span_key){device, s->sm, s->start, s->end, i};
  }
  qsort(keys, kept, sizeof *keys, span_key_order);
  lane *lanes = NULL; /* lane_made of them set up, lane_count in use */
  size_t lane_count = 0, lane_made = 0, lane_capacity = 0;
  int rc = MPROF_OK;
  for (size_t i = 0; i < kept && !rc; i++) {
    if (i == 0 || keys[i].sm != keys[i - 1].sm ||
        keys[i].device != keys[i - 1].device) {
      for (size_t l = 0; l < lane_count; l++)
        lanes[l].depth = 0;
      lane_count = 0;
    }
    const span_key *key = &keys[i];
    size_t chosen = lane_count;
    for (size_t l = 0; l < lane_count; l++) {
      lane *ln = &lanes[l];
      while (ln->depth && ln->open[ln->depth - 1] <= key->start)
        ln->depth--;
      if (!ln->depth || ln->open[ln->depth - 1] >= key->end) {
        chosen = l;
        break;
      }
    }
    uint32_t pid = gpu_pid(t, key->device, 1);
    uint64_t tid = (uint64_t)key->sm * 65536u + chosen;
    if (chosen == lane_count) {
      if (lane_count == lane_made) {
        if (MPROF__GROW(lanes, lane_capacity, lane_made + 1)) {
          rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
          break;
        }
        memset(&lanes[lane_made++], 0, sizeof *lanes);
      }
      lane_count++;
      char name[64];
      if (chosen)
        snprintf(name, sizeof name, "SM %u · lane %zu", key->sm, chosen + 1);
      else
        snprintf(name, sizeof name, "SM %u", key->sm);
      te_name(w, pid, 1, tid, name, (long long)tid);
    }
    lane *ln = &lanes[chosen];
    if (MPROF__GROW(ln->open, ln->capacity, ln->depth + 1)) {
      rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
      break;
    }
    ln->open[ln->depth++] = key->end;
    const mprof_span_record *s = &spans[key->index];
    const char *region =
        s->region < region_count
            ? mprof_trace_string(trace, regions[s->region].name)
            : "";
    mprof__fields a = te_complete(w, *region ? region : "span", "span", pid,
                                  tid, s->start, s->end);
    if (s->launch != MPROF_INDEX_NONE && s->launch < launch_count) {
      uint32_t k = mprof_join_launch_kernel(join, s->launch);
      const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
      if (ks)
        mprof__fields_str(&a, "kernel", ks->name);
      mprof__fields_u64(&a, "launch", s->launch);
    }
    mprof__fields_u64(&a, "sm", s->sm);
    mprof__fields_u64(&a, "block", s->block);
    if (s->warp != MPROF_INDEX_NONE)
      mprof__fields_u64(&a, "warp", s->warp);
    if (s->payload)
      mprof__fields_u64(&a, "payload", s->payload);
    if (s->flags & MPROF_SPAN_FLAG_OPEN)
      mprof__fields_raw(&a, "open", "true");
    fputs("}}", w->f);
  }
  for (size_t l = 0; l < lane_made; l++)
    free(lanes[l].open);
  free(lanes);
  free(keys);
  return rc;
}

int mprof__export_trace_events(FILE *f, const mprof_diagnosis *const *traces,
                               size_t count, const mprof__export_selection *sel,
                               size_t *events) {
  te_writer w = {
      f,
      mprof__export_origin(traces, count,
                           MPROF__ORIGIN_SPANS | MPROF__ORIGIN_PM_SAMPLES),
      0, 1};
  uint32_t *pids = (uint32_t *)calloc(count ? count : 1, sizeof *pids);
  if (!pids)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{", f);
  mprof__fields other = {f, 1, 0}, paths;
  char origin[24];
  snprintf(origin, sizeof origin, "%llu", (unsigned long long)w.origin);
  mprof__fields_str(&other, "exporter", "mprof " MPROF_VERSION_STRING);
  mprof__fields_str(&other, "origin_ns", origin); /* exact, unlike a double */
  mprof__fields_list(&paths, &other, NULL, "traces");
  for (size_t t = 0; t < count; t++)
    mprof__fields_str(
        &paths, NULL,
        mprof_trace_path(mprof_join_trace(mprof_diagnosis_join(traces[t]))));
  mprof__fields_close(&paths);
  fputs("},\"traceEvents\":[", f);
  int rc = MPROF_OK;
  for (size_t t = 0; t < count && !rc; t++) {
    const mprof_trace *trace =
        mprof_join_trace(mprof_diagnosis_join(traces[t]));
    pids[t] = host_pid(trace, t, pids);
    te_process_names(&w, trace, t, pids[t], count > 1);
    te_launches(&w, traces[t], t, sel->selected[t]);
    te_memops(&w, trace, t);
    te_counters(&w, trace, t);
    rc = te_host_threads(&w, trace, pids[t]);
    if (!rc)
      rc = te_ranges(&w, trace, pids[t]);
    if (!rc)
      rc = te_api_calls(&w, traces[t], t, pids[t], sel->selected[t]);
    if (!rc)
      rc = te_spans(&w, traces[t], t, sel->selected[t]);
  }
  fputs("\n]}\n", f);
  free(pids);
  *events = w.events;
  return rc;
}
