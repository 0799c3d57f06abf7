/*
 * mprof — building a trace's PC sidecar.
 *
 * Build: every kernel and every sampled function becomes a sidecar function
 * in state NO_CUBIN, samples are summed into it, and then the same attach
 * step that `mprof sass TRACE FILE...` runs (sass_attach.c) looks for code
 * among the trace's own cubins.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "sass_internal.h"

/* ---- build ---------------------------------------------------------------
 */

/* (name, crc) -> sidecar function; names are trace strings (stable). */
typedef struct key_entry {
  const char *name;
  uint64_t crc;
  uint32_t fn;
} key_entry;

typedef struct key_map {
  key_entry *keys;
  size_t count, capacity;
  mprof__map map; /* hash -> index into keys */
} key_map;

static uint64_t key_hash(const char *name, uint64_t crc) {
  return mprof__hash64(name, strlen(name)) ^ (crc * 0x9e3779b97f4a7c15ull);
}

static int key_find(const key_map *m, const char *name, uint64_t crc,
                    uint32_t *fn) {
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&m->map, key_hash(name, crc), &cursor)) !=
         MPROF__MAP_NONE)
    if (m->keys[i].crc == crc && strcmp(m->keys[i].name, name) == 0) {
      *fn = m->keys[i].fn;
      return 1;
    }
  return 0;
}

static int key_put(key_map *m, const char *name, uint64_t crc, uint32_t fn) {
  if (MPROF__GROW(m->keys, m->capacity, m->count + 1) ||
      mprof__map_add(&m->map, key_hash(name, crc), (uint32_t)m->count))
    return -1;
  key_entry e = {name, crc, fn};
  m->keys[m->count++] = e;
  return 0;
}

static void key_map_free(key_map *m) {
  free(m->keys);
  mprof__map_free(&m->map);
}

typedef struct sample_row {
  uint32_t fn;
  uint32_t offset;
  uint32_t reason;
  uint32_t samples;
} sample_row;

static int by_fn_offset(const void *a, const void *b) {
  const sample_row *x = (const sample_row *)a, *y = (const sample_row *)b;
  MPROF__ORDER_BY(fn);
  MPROF__ORDER_BY(offset);
  return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* The demangled name: the trace's, else __cxa_demangle's, else the name
 * itself for an extern "C" function; "" when nothing works. */
static char *demangled_name(const char *recorded, const char *name) {
  if (recorded && *recorded)
    return strdup(recorded);
  char *out = NULL;
  if (mprof_sass_demangle(&out, name) == 0)
    return out;
  return strdup(strncmp(name, "_Z", 2) == 0 ? "" : name);
}

static int add_function(mprof_sidecar *sc, key_map *map, const char *name,
                        const char *recorded_demangled, uint64_t crc,
                        uint32_t function_index, uint32_t device,
                        uint32_t registers, uint32_t static_shared,
                        uint32_t *out) {
  mprof_sidecar_function f;
  memset(&f, 0, sizeof f);
  char *demangled = demangled_name(recorded_demangled, name);
  if (!demangled)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  f.name = name;
  f.demangled = demangled;
  f.cubin_crc = crc;
  f.function_index = function_index;
  f.device = device;
  f.registers = registers;
  f.static_shared = static_shared;
  f.sass_state = MPROF_SASS_NO_CUBIN;
  int rc = mprof_sidecar_add_function(sc, out, &f);
  free(demangled);
  if (!rc && key_put(map, name, crc, *out) != 0)
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
  return rc;
}

/* One more sighting of function @p fn on @p device. */
static int note_device(mprof_sidecar *sc, uint32_t fn, uint32_t device) {
  mprof_sidecar_function info = *mprof_sidecar_function_at(sc, fn);
  if (info.device == device || info.device == MPROF_INDEX_NONE)
    return 0;
  info.device = MPROF_INDEX_NONE;
  return mprof__sidecar_update_function(sc, fn, &info);
}

static int collect(const mprof_trace *t, mprof_sidecar *sc, key_map *map) {
  size_t n;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &n);
  for (size_t i = 0; i < n; i++) {
    if (sr[i].index > MPROF__SIDECAR_MAX_REASON ||
        *mprof_sidecar_stall_reason(sc, sr[i].index))
      continue; /* the first device's name wins */
    int rc = mprof_sidecar_set_stall_reason(sc, sr[i].index,
                                            mprof_trace_string(t, sr[i].name));
    if (rc)
      return rc;
  }
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  for (size_t i = 0; i < n; i++) {
    const char *name = mprof_trace_string(t, k[i].mangled_name);
    if (!*name)
      continue;
    uint32_t fn;
    int rc;
    if (key_find(map, name, k[i].cubin_crc, &fn))
      rc = note_device(sc, fn, k[i].device);
    else
      rc = add_function(sc, map, name,
                        mprof_trace_string(t, k[i].demangled_name),
                        k[i].cubin_crc, k[i].function_index, k[i].device,
                        k[i].registers, k[i].static_shared, &fn);
    if (rc)
      return rc;
  }
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  sample_row *rows = (sample_row *)malloc((n ? n : 1) * sizeof *rows);
  if (!rows)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  size_t row_count = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const char *name = mprof_trace_string(t, pc[i].function_name);
    if (!*name || pc[i].stall_reason > MPROF__SIDECAR_MAX_REASON ||
        !pc[i].samples)
      continue;
    uint32_t fn;
    if (key_find(map, name, pc[i].cubin_crc, &fn)) {
      rc = note_device(sc, fn, pc[i].device);
    } else if (pc[i].cubin_crc && key_find(map, name, 0, &fn) &&
               mprof_sidecar_function_at(sc, fn)->cubin_crc == 0) {
      /* A kernel record without a CRC: the samples say which module. */
      mprof_sidecar_function info = *mprof_sidecar_function_at(sc, fn);
      info.cubin_crc = pc[i].cubin_crc;
      rc = mprof__sidecar_update_function(sc, fn, &info);
      if (!rc && key_put(map, name, pc[i].cubin_crc, fn) != 0)
        rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    } else {
      rc = add_function(sc, map, name, NULL, pc[i].cubin_crc,
                        pc[i].function_index, pc[i].device, 0, 0, &fn);
    }
    if (rc)
      break;
    rows[row_count].fn = fn;
    rows[row_count].offset = pc[i].pc_offset;
    rows[row_count].reason = pc[i].stall_reason;
    rows[row_count].samples = pc[i].samples;
    row_count++;
  }
  /* Sorted, the samples append to each function's PC table in order. */
  qsort(rows, row_count, sizeof *rows, by_fn_offset);
  for (size_t i = 0; i < row_count && !rc; i++) {
    rc = mprof_sidecar_add_samples(sc, rows[i].fn, rows[i].offset,
                                   rows[i].reason, rows[i].samples);
  }
  free(rows);
  return rc;
}

/* The SM of each function's device in @p t (opts->arch when unknown):
 * *out gets a new array the caller frees. */
static int archs_of(const mprof_trace *t, const mprof_sidecar *sc,
                    const mprof_sass_options *opts, uint32_t **out) {
  size_t n = mprof_sidecar_function_count(sc);
  uint32_t *arch_of = (uint32_t *)calloc(n ? n : 1, sizeof *arch_of);
  *out = arch_of;
  if (!arch_of)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(t, &devices);
  for (size_t i = 0; i < n; i++) {
    uint32_t d = mprof_sidecar_function_at(sc, i)->device;
    arch_of[i] =
        d < devices ? dev[d].cc_major * 10 + dev[d].cc_minor : opts->arch;
  }
  return 0;
}

int mprof_sass_build_sidecar(const char *trace_path, const char *sidecar_path,
                             const mprof_sass_options *opts,
                             mprof_sass_report *report) {
  if (!trace_path || !sidecar_path)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_sass_build_sidecar: NULL argument");
  mprof_sass_options opts_copy;
  int rc = mprof__sass_begin(&opts_copy, opts, report);
  if (rc)
    return rc;
  opts = &opts_copy;
  mprof_trace *t;
  rc = mprof_trace_open(&t, trace_path, NULL);
  if (rc)
    return rc;
  mprof_sidecar *sc = NULL;
  mprof_sass_binary *own = NULL;
  uint32_t *arch_of = NULL;
  key_map map;
  memset(&map, 0, sizeof map);
  rc = mprof_sidecar_new(&sc);
  if (!rc)
    rc = collect(t, sc, &map);
  if (!rc)
    rc = mprof__sass_binary_from_trace(&own, t);
  if (!rc)
    rc = archs_of(t, sc, opts, &arch_of);
  if (!rc) {
    const mprof_sass_binary *bins[1] = {own};
    rc = mprof__sass_attach(sc, bins, 1, opts, report, arch_of,
                            MPROF__ATTACH_MISSING);
  }
  if (!rc)
    rc = mprof_sidecar_save(sc, sidecar_path);
  if (report && !rc)
    report->samples = mprof_trace_pc_sample_total(t, NULL);
  free(arch_of);
  key_map_free(&map);
  mprof_sass_binary_free(own);
  mprof_sidecar_free(sc);
  mprof_trace_free(t);
  return rc;
}

int mprof_sass_complete(mprof_sidecar *sidecar, const char *trace_path,
                        const char *sidecar_path,
                        const mprof_sass_options *opts,
                        mprof_sass_report *report) {
  if (!sidecar || !trace_path)
    return mprof__error_set(MPROF_EINVAL, "mprof_sass_complete: NULL argument");
  mprof_sass_options opts_copy;
  int rc = mprof__sass_begin(&opts_copy, opts, report);
  if (rc)
    return rc;
  opts = &opts_copy;
  mprof_sass_report own_report = MPROF_SASS_REPORT_INIT;
  if (!report)
    report = &own_report;
  size_t pending = 0, n = mprof_sidecar_function_count(sidecar);
  for (size_t i = 0; i < n; i++) {
    const mprof_sidecar_function *f = mprof_sidecar_function_at(sidecar, i);
    pending += f->sass_state == MPROF_SASS_DEFERRED && f->pc_count;
  }
  char tool[4096] = "";
  if (pending && !(opts->flags & MPROF_SASS_NO_DISASSEMBLY)) {
    rc = mprof__sass_tool(tool, sizeof tool, opts->nvdisasm, "nvdisasm");
    if (rc && opts->nvdisasm)
      return rc;
    /* none here (tool is ""): the functions stay deferred */
  }
  if (!*tool) {
    report->disassembler[0] = '\0';
    return mprof_sass_report_count(report, sidecar);
  }
  mprof_trace *t = NULL;
  mprof_sass_binary *own = NULL;
  uint32_t *arch_of = NULL;
  rc = mprof_trace_open(&t, trace_path, NULL);
  if (!rc)
    rc = mprof__sass_binary_from_trace(&own, t);
  if (!rc)
    rc = archs_of(t, sidecar, opts, &arch_of);
  size_t before = report->attached;
  if (!rc) {
    mprof_sass_options run_opts;
    mprof__sass_options_copy(&run_opts, opts);
    run_opts.nvdisasm = tool;
    run_opts.flags &= ~(MPROF_SASS_DEFER | MPROF_SASS_SAMPLED_ONLY);
    const mprof_sass_binary *bins[1] = {own};
    rc = mprof__sass_attach(sidecar, bins, 1, &run_opts, report, arch_of,
                            MPROF__ATTACH_DEFERRED_SAMPLED);
  }
  /* The saved sidecar is a cache of this work: failing to write it loses
   * nothing but the next caller's time. */
  if (!rc && sidecar_path && report->attached > before)
    (void)mprof_sidecar_save(sidecar, sidecar_path);
  free(arch_of);
  mprof_sass_binary_free(own);
  mprof_trace_free(t);
  return rc;
}
