/*
 * mprof — the Kineto export: one process's trace as the JSON that
 * torch.profiler writes (Kineto's trace schema), for Holistic Trace Analysis
 * and the other tools that read PyTorch traces. Kernels, copies and memsets
 * on their device and stream, the runtime and driver calls that issued them
 * with their correlation ids and "ac2g" flows, NVTX ranges as user
 * annotations, and ProfilerStep#N spans: from NVTX step ranges, else from
 * the repeating launch pattern. The fields, and why each is there, are in
 * docs/EXPORT.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/export.h"
#include "mprof/version.h"
#include "base/array.h"
#include "base/text.h"
#include "report/report_internal.h"
#include "export/export_internal.h"

/* The host process's pid when the trace does not know it; GPU pids are the
 * device ordinals, as Kineto writes them. */
#define KINETO_UNKNOWN_PID 0x20000000u

typedef struct kineto_writer {
  FILE *f;
  uint64_t origin;
  size_t events;
  uint32_t pid;          /* the host process */
  uint64_t external_ids; /* the next "External id" of an annotation */
} kineto_writer;

static void kw_begin(kineto_writer *w) {
  fputs(w->events ? ",\n" : "\n", w->f);
  w->events++;
}

/* Microseconds since the origin, with nanosecond digits (exact text). */
static void kw_us(kineto_writer *w, uint64_t t, uint64_t origin) {
  uint64_t d = t > origin ? t - origin : 0;
  fprintf(w->f, "%llu.%03llu", (unsigned long long)(d / 1000),
          (unsigned long long)(d % 1000));
}

/* A complete event up to its args object, left open for the caller. */
static mprof__fields kw_complete(kineto_writer *w, const char *cat,
                                 const char *name, uint64_t pid, uint64_t tid,
                                 uint64_t start, uint64_t end) {
  kw_begin(w);
  fprintf(w->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
  mprof__json_string(w->f, name);
  fprintf(w->f, ",\"pid\":%llu,\"tid\":%llu,\"ts\":", (unsigned long long)pid,
          (unsigned long long)tid);
  kw_us(w, start, w->origin);
  fputs(",\"dur\":", w->f);
  kw_us(w, end > start ? end : start, start);
  fputs(",\"args\":{", w->f);
  mprof__fields args = {w->f, 1, 0};
  return args;
}

static void kw_meta(kineto_writer *w, const char *what, uint64_t pid,
                    uint64_t tid, const char *key, const char *text,
                    long long number) {
  kw_begin(w);
  fprintf(w->f,
          "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%llu,"
          "\"tid\":%llu,\"args\":{\"%s\":",
          what, (unsigned long long)pid, (unsigned long long)tid, key);
  if (text)
    mprof__json_string(w->f, text);
  else
    fprintf(w->f, "%lld", number);
  fputs("}}", w->f);
}

/* The "ac2g" flow Kineto draws from a call to the GPU work it issued. */
static void kw_flow(kineto_writer *w, int start, uint32_t correlation,
                    uint64_t pid, uint64_t tid, uint64_t ts) {
  kw_begin(w);
  fprintf(w->f, "{\"ph\":\"%s\",\"id\":%u,\"pid\":%llu,\"tid\":%llu,\"ts\":",
          start ? "s" : "f", correlation, (unsigned long long)pid,
          (unsigned long long)tid);
  kw_us(w, ts, w->origin);
  fputs(start ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"
              : ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
        w->f);
}

/* ---- ProfilerStep spans ---------------------------------------------------
 * HTA keeps only the kernels issued inside ProfilerStep#N spans (it takes
 * the iteration from the span around the launching call), so the export
 * always has them when it can: an NVTX range named "ProfilerStep#N" is one
 * already; a range named like "step N" (step, iteration, iter, train_step,
 * any case, then a number) becomes one; without those, the launches'
 * repeating kernel sequence marks the steps. */

typedef struct kineto_step {
  uint64_t start, end;
  uint32_t thread;
  uint64_t number;
} kineto_step;

/* The step number of a range named like a step, or -1. */
static long long step_number(const char *name) {
  static const char *const words[] = {"profilerstep", "train_step", "iteration",
                                      "step", "iter"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    size_t n = strlen(words[i]);
    if (strncasecmp(name, words[i], n) != 0)
      continue;
    const char *p = name + n;
    while (*p == ' ' || *p == '#' || *p == '_' || *p == ':' || *p == '-')
      p++;
    if (!isdigit((unsigned char)*p))
      return -1;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    return *end == '\0' && v < (1ull << 53) ? (long long)v : -1;
  }
  return -1;
}

/* The launches in issue order, for the pattern. */
typedef struct issue_key {
  uint64_t issued;
  uint32_t launch;
} issue_key;

static int issue_order(const void *a, const void *b) {
  const issue_key *x = (const issue_key *)a, *y = (const issue_key *)b;
  MPROF__ORDER_BY(issued);
  return x->launch < y->launch ? -1 : x->launch > y->launch;
}

/* The call with each correlation id (calls sorted by it), or NULL. */
typedef struct corr_key {
  uint32_t correlation;
  uint32_t index;
} corr_key;

static int corr_order(const void *a, const void *b) {
  const corr_key *x = (const corr_key *)a, *y = (const corr_key *)b;
  MPROF__ORDER_BY(correlation);
  return x->index < y->index ? -1 : x->index > y->index;
}

static const mprof_api_call_record *call_of(const corr_key *keys, size_t n,
                                            const mprof_api_call_record *calls,
                                            uint32_t correlation) {
  if (!correlation)
    return NULL;
  size_t at;
  MPROF__LOWER_BOUND(at, n, mid, keys[mid].correlation < correlation);
  return at < n && keys[at].correlation == correlation ? &calls[keys[at].index]
                                                       : NULL;
}

/* The smallest period p (at least 2 repeats) of the kernel sequence @p seq
 * such that 95% of its launches repeat the one p before; 0 if none. A
 * period must first repeat the last 8 launches (past any warm-up), and the
 * search gives up after PATTERN_BUDGET comparisons, so that a trace of
 * millions of launches without a pattern costs seconds at most. */
#define PATTERN_TAIL 8
#define PATTERN_BUDGET 400000000ull
static size_t pattern_period(const uint32_t *seq, size_t n) {
  uint64_t spent = 0;
  for (size_t p = 1; p <= n / 2 && spent < PATTERN_BUDGET; p++) {
    int tail = 1;
    for (size_t i = n - 1; tail && i >= p && i + PATTERN_TAIL >= n; i--)
      tail = seq[i] == seq[i - p];
    if (!tail)
      continue;
    size_t allowed = (n - p) / 20, missed = 0, i = p;
    for (; i < n && missed <= allowed; i++)
      missed += seq[i] != seq[i - p];
    spent += i - p;
    if (missed <= allowed)
      return p;
  }
  return 0;
}

/* Steps from the repeating launch pattern: step k holds the launches
 * [k p, (k+1) p) in issue order; it spans the host from its first launch's
 * call to the next step's first call (the last: to its last call's end). */
static int pattern_steps(kineto_step **out, size_t *count,
                         const mprof_join *join, const corr_key *keys,
                         size_t nc, const mprof_api_call_record *calls) {
  const mprof_trace *trace = mprof_join_trace(join);
  size_t nl;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  *out = NULL;
  *count = 0;
  if (nl < 2)
    return MPROF_OK;
  issue_key *order = (issue_key *)malloc(nl * sizeof *order);
  uint32_t *seq = (uint32_t *)malloc(nl * sizeof *seq);
  if (!order || !seq) {
    free(order);
    free(seq);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < nl; i++) {
    const mprof_api_call_record *c =
        call_of(keys, nc, calls, launches[i].correlation_id);
    order[i] = (issue_key){c ? c->start : launches[i].start, (uint32_t)i};
  }
  qsort(order, nl, sizeof *order, issue_order);
  for (size_t i = 0; i < nl; i++)
    seq[i] = mprof_join_launch_kernel(join, order[i].launch);
  size_t p = pattern_period(seq, nl);
  size_t steps = p ? nl / p : 0;
  kineto_step *s = steps ? (kineto_step *)calloc(steps, sizeof *s) : NULL;
  if (steps && !s) {
    free(order);
    free(seq);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < steps; k++) {
    const mprof_launch_record *first = &launches[order[k * p].launch];
    const mprof_api_call_record *c =
        call_of(keys, nc, calls, first->correlation_id);
    s[k].start = c ? c->start : first->start;
    s[k].thread = c ? c->thread_id : 0;
    s[k].number = k;
    if (k + 1 < steps) {
      s[k].end = order[(k + 1) * p].issued;
    } else { /* the last step: to the end of its last launch's call */
      uint64_t end = s[k].start;
      for (size_t i = k * p; i < nl; i++) {
        const mprof_launch_record *l = &launches[order[i].launch];
        const mprof_api_call_record *lc =
            call_of(keys, nc, calls, l->correlation_id);
        uint64_t e = lc ? lc->end : l->end;
        end = e > end ? e : end;
      }
      s[k].end = end;
    }
  }
  free(order);
  free(seq);
  *out = s;
  *count = steps;
  return MPROF_OK;
}

/* ---- the writer -----------------------------------------------------------
 */

static void kw_device_properties(FILE *f, const mprof_trace *trace) {
  size_t n;
  const mprof_device_record *d = mprof_trace_devices(trace, &n);
  fputs("\"deviceProperties\":[", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s\n{\"id\":%u,\"name\":", i ? "," : "", d[i].id);
    mprof__json_string(f, mprof_trace_string(trace, d[i].name));
    fprintf(f,
            ",\"totalGlobalMem\":%llu,\"computeMajor\":%u,\"computeMinor\":%u,"
            "\"maxThreadsPerBlock\":%u,\"maxThreadsPerMultiprocessor\":%u,"
            "\"regsPerBlock\":%u,\"regsPerMultiprocessor\":%u,"
            "\"warpSize\":%u,\"sharedMemPerBlock\":%u,"
            "\"sharedMemPerMultiprocessor\":%u,"
            "\"numSms\":%u,\"sharedMemPerBlockOptin\":%u}",
            (unsigned long long)d[i].global_memory, d[i].cc_major,
            d[i].cc_minor, d[i].max_threads_per_block, d[i].max_threads_per_sm,
            d[i].max_regs_per_block, d[i].max_regs_per_sm, d[i].warp_size,
            d[i].max_shared_per_block < 49152 ? d[i].max_shared_per_block
                                              : 49152u,
            d[i].max_shared_per_sm, d[i].sm_count, d[i].max_shared_per_block);
  }
  fputs("],\n", f);
}

/* distributedInfo when the process was launched as a rank. HTA finds the
 * rank with the pattern "rank":\s+(\d+) (hta/common/trace_file.py), so the
 * space after the colon is needed. The world size only when the trace
 * says it (META "world_size"). */
static void kw_distributed(FILE *f, const mprof_trace *trace) {
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(trace, &n);
  if (n != 1 || p->rank == MPROF_INDEX_NONE)
    return;
  fprintf(f, "\"distributedInfo\":{\"rank\": %u", p->rank);
  const char *world = mprof_trace_process_meta(trace, 0, "world_size");
  char *end = NULL;
  unsigned long v = world && *world ? strtoul(world, &end, 10) : 0;
  if (v && end && !*end)
    fprintf(f, ",\"world_size\": %lu", v);
  fputs("},\n", f);
}

static const char *copy_name(const mprof_memop_record *m) {
  if (m->kind == MPROF_MEMOP_MEMSET)
    return "Memset (Device)";
  switch (m->copy_kind) {
  case MPROF_COPY_HTOD: return "Memcpy HtoD (Host -> Device)";
  case MPROF_COPY_DTOH: return "Memcpy DtoH (Device -> Host)";
  case MPROF_COPY_DTOD: return "Memcpy DtoD (Device -> Device)";
  case MPROF_COPY_HTOH: return "Memcpy HtoH (Host -> Host)";
  case MPROF_COPY_PTOP: return "Memcpy PtoP (Device -> Device)";
  default: return "Memcpy Unknown";
  }
}

static uint32_t ordinal(const mprof_trace *trace, uint32_t device) {
  size_t n;
  const mprof_device_record *d = mprof_trace_devices(trace, &n);
  return device < n ? d[device].id : 0;
}

static void kw_kernels(kineto_writer *w, const mprof_diagnosis *diag,
                       const unsigned char *selected) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  size_t nl, ns, nk, nst, nd;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_shape_record *shapes = mprof_trace_shapes(trace, &ns);
  const mprof_kernel_record *kernels = mprof_trace_kernels(trace, &nk);
  const mprof_stream_record *streams = mprof_trace_streams(trace, &nst);
  const mprof_device_record *devices = mprof_trace_devices(trace, &nd);
  for (size_t i = 0; i < nl; i++) {
    const mprof_launch_record *l = &launches[i];
    uint32_t k = mprof_join_launch_kernel(join, i);
    if (k == MPROF_INDEX_NONE || !selected[k])
      continue;
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(diag, k);
    const mprof_shape_record *shape = &shapes[l->shape];
    const mprof_stream_record *st = &streams[l->stream];
    uint32_t device = ordinal(trace, st->device);
    mprof__fields a = kw_complete(w, "kernel", kd->stats->name, device,
                                  st->stream_id, l->start, l->end);
    mprof__fields_u64(&a, "External id", l->correlation_id);
    mprof__fields_u64(&a, "queued", 0);
    mprof__fields_u64(&a, "device", device);
    mprof__fields_u64(&a, "context", st->context_id);
    mprof__fields_u64(&a, "stream", st->stream_id);
    mprof__fields_u64(&a, "correlation", l->correlation_id);
    mprof__fields_u64(&a, "registers per thread",
                      kernels[shape->kernel].registers);
    mprof__fields_u64(&a, "shared memory",
                      (uint64_t)kernels[shape->kernel].static_shared +
                          shape->dynamic_shared);
    uint64_t blocks =
        (uint64_t)shape->grid[0] * shape->grid[1] * shape->grid[2];
    uint64_t threads =
        (uint64_t)shape->block[0] * shape->block[1] * shape->block[2];
    const mprof_device_record *dr =
        st->device < nd ? &devices[st->device] : NULL;
    if (dr && dr->sm_count) {
      double per_sm = (double)blocks / dr->sm_count;
      double warps = per_sm * (double)((threads + 31) / 32);
      mprof__fields_num(&a, "blocks per SM", per_sm, 6);
      mprof__fields_num(&a, "warps per SM", warps, 6);
      const mprof_occupancy *occ = kd->occupancy;
      if (occ && occ->known && occ->max_warps) {
        double est = occ->theoretical;
        if (warps / occ->max_warps < est)
          est = warps / occ->max_warps;
        mprof__fields_u64(&a, "est. achieved occupancy %",
                          (uint64_t)llround(est * 100.0));
      }
    }
    fprintf(w->f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]}}", shape->grid[0],
            shape->grid[1], shape->grid[2], shape->block[0], shape->block[1],
            shape->block[2]);
  }
}

static void kw_memops(kineto_writer *w, const mprof_trace *trace) {
  size_t n, nst;
  const mprof_memop_record *ops = mprof_trace_memops(trace, &n);
  const mprof_stream_record *streams = mprof_trace_streams(trace, &nst);
  for (size_t i = 0; i < n; i++) {
    const mprof_memop_record *m = &ops[i];
    const mprof_stream_record *st = &streams[m->stream];
    uint32_t device = ordinal(trace, st->device);
    mprof__fields a = kw_complete(
        w, m->kind == MPROF_MEMOP_MEMSET ? "gpu_memset" : "gpu_memcpy",
        copy_name(m), device, st->stream_id, m->start, m->end);
    mprof__fields_u64(&a, "External id", m->correlation_id);
    mprof__fields_u64(&a, "device", device);
    mprof__fields_u64(&a, "context", st->context_id);
    mprof__fields_u64(&a, "stream", st->stream_id);
    mprof__fields_u64(&a, "correlation", m->correlation_id);
    mprof__fields_u64(&a, "bytes", m->bytes);
    mprof__fields_num(&a, "memory bandwidth (GB/s)",
                      m->end > m->start
                          ? (double)m->bytes / (double)(m->end - m->start)
                          : 0.0,
                      6);
    fputs("}}", w->f);
  }
}

/* The calls, and a flow from each to the kernel or copy it issued. */
static void kw_calls(kineto_writer *w, const mprof_diagnosis *diag,
                     const unsigned char *selected, const corr_key *keys,
                     size_t nc, const mprof_api_call_record *calls) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  for (size_t i = 0; i < nc; i++) {
    const mprof_api_call_record *c = &calls[i];
    mprof__fields a = kw_complete(
        w, c->kind == MPROF_API_DRIVER ? "cuda_driver" : "cuda_runtime",
        mprof_trace_string(trace, c->name), w->pid, c->thread_id, c->start,
        c->end);
    mprof__fields_u64(&a, "External id", c->correlation_id);
    mprof__fields_u64(&a, "correlation", c->correlation_id);
    fputs("}}", w->f);
  }
  size_t nl, nm, nst;
  const mprof_launch_record *launches = mprof_trace_launches(trace, &nl);
  const mprof_memop_record *memops = mprof_trace_memops(trace, &nm);
  const mprof_stream_record *streams = mprof_trace_streams(trace, &nst);
  for (size_t i = 0; i < nl + nm; i++) {
    int launch = i < nl;
    if (launch) {
      uint32_t k = mprof_join_launch_kernel(join, i);
      if (k == MPROF_INDEX_NONE || !selected[k])
        continue;
    }
    uint32_t corr =
        launch ? launches[i].correlation_id : memops[i - nl].correlation_id;
    const mprof_api_call_record *c = call_of(keys, nc, calls, corr);
    if (!c)
      continue;
    const mprof_stream_record *st =
        &streams[launch ? launches[i].stream : memops[i - nl].stream];
    kw_flow(w, 1, corr, w->pid, c->thread_id, c->start);
    kw_flow(w, 0, corr, ordinal(trace, st->device), st->stream_id,
            launch ? launches[i].start : memops[i - nl].start);
  }
}

/* NVTX ranges as user annotations; @p steps receives ProfilerStep spans
 * made of the ranges named like steps (those already named ProfilerStep#N
 * are written as they are and not again). */
static int kw_ranges(kineto_writer *w, const mprof_trace *trace,
                     kineto_step **steps, size_t *step_count) {
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  *steps = NULL;
  *step_count = 0;
  size_t capacity = 0;
  for (size_t i = 0; i < n; i++) {
    const mprof_range_record *r = &ranges[i];
    const char *name = mprof_trace_string(trace, r->name);
    mprof__fields a =
        kw_complete(w, "user_annotation", *name ? name : "(unnamed range)",
                    w->pid, r->thread_id, r->start, r->end);
    mprof__fields_u64(&a, "External id", w->external_ids++);
    fputs("}}", w->f);
    long long number = step_number(name);
    if (number < 0 || strncmp(name, "ProfilerStep#", 13) == 0)
      continue;
    if (MPROF__GROW(*steps, capacity, *step_count + 1))
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    (*steps)[(*step_count)++] =
        (kineto_step){r->start, r->end, r->thread_id, (uint64_t)number};
  }
  return MPROF_OK;
}

static int has_profiler_steps(const mprof_trace *trace) {
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  for (size_t i = 0; i < n; i++)
    if (step_number(mprof_trace_string(trace, ranges[i].name)) >= 0)
      return 1;
  return 0;
}

static void kw_names(kineto_writer *w, const mprof_trace *trace) {
  size_t n;
  const char *cmd = mprof_trace_process_count(trace) == 1
                        ? mprof_trace_process_meta(trace, 0, "cmdline")
                        : NULL;
  const char *name =
      cmd && *cmd ? cmd : mprof__export_base_name(mprof_trace_path(trace));
  kw_meta(w, "process_name", w->pid, 0, "name", name, 0);
  kw_meta(w, "process_labels", w->pid, 0, "labels", "CPU", 0);
  kw_meta(w, "process_sort_index", w->pid, 0, "sort_index", NULL, w->pid);
  const mprof_device_record *d = mprof_trace_devices(trace, &n);
  for (size_t i = 0; i < n; i++) {
    char label[32];
    snprintf(label, sizeof label, "GPU %u", d[i].id);
    kw_meta(w, "process_name", d[i].id, 0, "name", name, 0);
    kw_meta(w, "process_labels", d[i].id, 0, "labels", label, 0);
    kw_meta(w, "process_sort_index", d[i].id, 0, "sort_index", NULL,
            0x1000000ll + d[i].id);
  }
  const mprof_stream_record *st = mprof_trace_streams(trace, &n);
  for (size_t i = 0; i < n; i++) {
    char label[48];
    snprintf(label, sizeof label, "stream %u", st[i].stream_id);
    kw_meta(w, "thread_name", ordinal(trace, st[i].device), st[i].stream_id,
            "name", label, 0);
  }
}

int mprof__export_kineto(FILE *f, const mprof_diagnosis *const *traces,
                         size_t count, const mprof__export_selection *sel,
                         size_t *events) {
  if (count != 1)
    return mprof__error_set(
        MPROF_EINVAL,
        "export: a Kineto trace holds one process (one rank): export each "
        "trace of the set on its own, one file per rank");
  const mprof_diagnosis *diag = traces[0];
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  size_t processes;
  const mprof_process_record *proc = mprof_trace_processes(trace, &processes);
  if (processes > 1)
    return mprof__error_set(
        MPROF_EINVAL,
        "export: %s holds %zu processes (a merged run) and a Kineto trace "
        "holds one: export each process's own trace, one file per rank",
        mprof__export_base_name(mprof_trace_path(trace)), processes);
  size_t nc, nl;
  const mprof_api_call_record *calls = mprof_trace_api_calls(trace, &nc);
  mprof_trace_launches(trace, &nl);
  corr_key *keys = (corr_key *)malloc((nc ? nc : 1) * sizeof *keys);
  if (!keys)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < nc; i++)
    keys[i] = (corr_key){calls[i].correlation_id, (uint32_t)i};
  qsort(keys, nc, sizeof *keys, corr_order);

  kineto_writer w = {f,
                     mprof__export_origin(traces, 1, MPROF__ORIGIN_API_CALLS),
                     0, KINETO_UNKNOWN_PID, 0};
  if (processes == 1 && proc->pid && proc->pid < KINETO_UNKNOWN_PID)
    w.pid = proc->pid;
  uint32_t max_corr = nc ? keys[nc - 1].correlation : 0;
  w.external_ids = (uint64_t)max_corr + 1;

  fputs("{\"schemaVersion\":1,\n", f);
  kw_device_properties(f, trace);
  kw_distributed(f, trace);
  fputs("\"traceName\":", f);
  mprof__json_string(f, mprof_trace_path(trace));
  fprintf(f, ",\n\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":%llu,\n",
          (unsigned long long)w.origin);
  fputs("\"exporter\":\"mprof " MPROF_VERSION_STRING "\",\n\"traceEvents\":[",
        f);
  kw_names(&w, trace);
  kineto_step *steps = NULL;
  size_t step_count = 0;
  int rc = kw_ranges(&w, trace, &steps, &step_count);
  if (!nc) {
    /* No calls: HTA would drop every kernel from a trace with steps, as it
     * keeps those whose launching call falls before the last step. */
    free(steps);
    steps = NULL;
    step_count = 0;
  } else if (!rc && !step_count && !has_profiler_steps(trace)) {
    free(steps);
    rc = pattern_steps(&steps, &step_count, join, keys, nc, calls);
  }
  for (size_t i = 0; !rc && i < step_count; i++) {
    char name[48];
    snprintf(name, sizeof name, "ProfilerStep#%llu",
             (unsigned long long)steps[i].number);
    mprof__fields a =
        kw_complete(&w, "user_annotation", name, w.pid, steps[i].thread,
                    steps[i].start, steps[i].end);
    mprof__fields_u64(&a, "External id", w.external_ids++);
    fputs("}}", f);
  }
  free(steps);
  if (!rc) {
    kw_calls(&w, diag, sel->selected[0], keys, nc, calls);
    kw_kernels(&w, diag, sel->selected[0]);
    kw_memops(&w, trace);
  }
  fputs("\n]}\n", f);
  free(keys);
  *events = w.events;
  return rc;
}
