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
#include "analysis/steps.h"
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

typedef mprof__step kineto_step;

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
                     const unsigned char *selected,
                     const mprof__call_index *idx) {
  const mprof_join *join = mprof_diagnosis_join(diag);
  const mprof_trace *trace = mprof_join_trace(join);
  for (size_t i = 0; i < idx->count; i++) {
    const mprof_api_call_record *c = &idx->calls[i];
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
    const mprof_api_call_record *c = mprof__call_of(idx, corr);
    if (!c)
      continue;
    const mprof_stream_record *st =
        &streams[launch ? launches[i].stream : memops[i - nl].stream];
    kw_flow(w, 1, corr, w->pid, c->thread_id, c->start);
    kw_flow(w, 0, corr, ordinal(trace, st->device), st->stream_id,
            launch ? launches[i].start : memops[i - nl].start);
  }
}

/* NVTX ranges as user annotations. */
static void kw_ranges(kineto_writer *w, const mprof_trace *trace) {
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  for (size_t i = 0; i < n; i++) {
    const mprof_range_record *r = &ranges[i];
    const char *name = mprof_trace_string(trace, r->name);
    mprof__fields a =
        kw_complete(w, "user_annotation", *name ? name : "(unnamed range)",
                    w->pid, r->thread_id, r->start, r->end);
    mprof__fields_u64(&a, "External id", w->external_ids++);
    fputs("}}", w->f);
  }
}

static int has_profiler_steps(const mprof_trace *trace) {
  size_t n;
  const mprof_range_record *ranges = mprof_trace_ranges(trace, &n);
  for (size_t i = 0; i < n; i++)
    if (mprof__step_number(mprof_trace_string(trace, ranges[i].name)) >= 0)
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
  mprof__call_index idx;
  if (mprof__call_index_build(&idx, trace))
    return MPROF_ENOMEM;
  size_t nc = idx.count;

  kineto_writer w = {f,
                     mprof__export_origin(traces, 1, MPROF__ORIGIN_API_CALLS),
                     0, KINETO_UNKNOWN_PID, 0};
  if (processes == 1 && proc->pid && proc->pid < KINETO_UNKNOWN_PID)
    w.pid = proc->pid;
  uint32_t max_corr = mprof__call_index_max(&idx);
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
  kw_ranges(&w, trace);
  /* ProfilerStep spans from the ranges named like steps (those already
   * named ProfilerStep#N are written as they are, not again), or a
   * capture window's pieces (analysis/steps.c). */
  int rc = mprof__steps_from_ranges(&steps, &step_count, trace, 1);
  if (!nc) {
    /* No calls: HTA would drop every kernel from a trace with steps, as it
     * keeps those whose launching call falls before the last step. */
    free(steps);
    steps = NULL;
    step_count = 0;
  } else if (!rc && !step_count && !has_profiler_steps(trace)) {
    free(steps);
    rc = mprof__steps_from_pattern(&steps, &step_count, trace, &idx);
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
    kw_calls(&w, diag, sel->selected[0], &idx);
    kw_kernels(&w, diag, sel->selected[0]);
    kw_memops(&w, trace);
  }
  fputs("\n]}\n", f);
  mprof__call_index_free(&idx);
  *events = w.events;
  return rc;
}
