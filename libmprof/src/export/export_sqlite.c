/*
 * mprof — the SQLite export: Nsight Systems' tables and columns for what
 * both tools record (kernels, copies, memsets, API calls, NVTX ranges,
 * GPUs, streams, processes, strings), and mprof's own tables (MPROF_*)
 * for the kernels' diagnosis, PC samples by stall reason, SASS, PM samples
 * and in-kernel spans. Which column holds what, and where it differs from
 * nsys, is in docs/EXPORT.md ("SQLite").
 *
 * One transaction, prepared statements, indexes made once the rows are in.
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
#include "mprof/version.h"
#include "base/map.h"
#include "export/export_internal.h"

#ifdef MPROF_HAVE_SQLITE
#include <sqlite3.h>

/* ---- the schema --------------------------------------------------------- */

/* nsys's tables first (its names, its column order, the columns mprof
 * can fill; MPROF_KERNELS' id is an addition to the kernel table), then
 * mprof's. */
static const char schema[] =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_CUDA_KERNEL_LAUNCH_TYPE (id INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
    "CREATE TABLE TARGET_INFO_GPU (id INTEGER PRIMARY KEY, name TEXT, "
    "l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, "
    "clockRate INTEGER, smCount INTEGER, computeMajor INTEGER, "
    "computeMinor INTEGER, maxThreadsPerBlock INTEGER, "
    "maxBlocksPerSm INTEGER, maxRegistersPerBlock INTEGER, "
    "maxRegistersPerSm INTEGER, maxWarpsPerSm INTEGER, "
    "maxShmemPerBlock INTEGER, maxShmemPerSm INTEGER, "
    "threadsPerWarp INTEGER);\n"
    "CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, "
    "hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId INTEGER NOT "
    "NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, "
    "flag INTEGER NOT NULL);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
    "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
    "correlationId INTEGER, globalPid INTEGER, "
    "demangledName INTEGER NOT NULL REFERENCES StringIds(id), "
    "shortName INTEGER NOT NULL REFERENCES StringIds(id), "
    "mangledName INTEGER REFERENCES StringIds(id), "
    "launchType INTEGER REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id), "
    "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, "
    "gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
    "blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, "
    "blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, "
    "dynamicSharedMemory INTEGER NOT NULL, "
    "localMemoryPerThread INTEGER NOT NULL, gridId INTEGER NOT NULL, "
    "graphNodeId INTEGER, graphId INTEGER, clusterX INTEGER, "
    "clusterY INTEGER, clusterZ INTEGER, "
    "mprofKernelId INTEGER REFERENCES MPROF_KERNELS(id));\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
    "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
    "correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
    "copyKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEMCPY_OPER(id), "
    "srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, "
    "dstDeviceId INTEGER, graphNodeId INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
    "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
    "correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, "
    "bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
    "globalTid INTEGER, correlationId INTEGER, "
    "nameId INTEGER NOT NULL REFERENCES StringIds(id), "
    "returnValue INTEGER NOT NULL, callchainId INTEGER);\n"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, "
    "eventType INTEGER NOT NULL REFERENCES ENUM_NSYS_EVENT_TYPE(id), "
    "rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, "
    "globalTid INTEGER, endGlobalTid INTEGER, "
    "textId INTEGER REFERENCES StringIds(id), domainId INTEGER);\n"
    /* mprof's own */
    "CREATE TABLE MPROF_TRACES (id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
    "globalPid INTEGER, host TEXT, cmdline TEXT, "
    "kernelTimeNs INTEGER NOT NULL, partial INTEGER NOT NULL);\n"
    "CREATE TABLE MPROF_KERNELS (id INTEGER PRIMARY KEY, "
    "traceId INTEGER NOT NULL REFERENCES MPROF_TRACES(id), "
    "deviceId INTEGER, "
    "demangledName INTEGER NOT NULL REFERENCES StringIds(id), "
    "shortName INTEGER NOT NULL REFERENCES StringIds(id), "
    "mangledName INTEGER NOT NULL REFERENCES StringIds(id), "
    "launches INTEGER NOT NULL, totalNs INTEGER NOT NULL, "
    "minNs INTEGER NOT NULL, maxNs INTEGER NOT NULL, "
    "medianNs INTEGER NOT NULL, meanNs REAL NOT NULL, share REAL NOT NULL, "
    "samples INTEGER NOT NULL, notIssuedSamples INTEGER NOT NULL, "
    "verdict TEXT NOT NULL, verdictDimension TEXT, verdictState TEXT, "
    "theoreticalOccupancy REAL, library INTEGER NOT NULL, "
    "tensorCore INTEGER NOT NULL, roof TEXT, mprofOwn INTEGER NOT NULL);\n"
    "CREATE TABLE MPROF_DIMENSIONS (kernelId INTEGER NOT NULL REFERENCES "
    "MPROF_KERNELS(id), dimension TEXT NOT NULL, title TEXT NOT NULL, "
    "state TEXT NOT NULL, gain REAL, detail TEXT);\n"
    "CREATE TABLE MPROF_NOTES (traceId INTEGER NOT NULL REFERENCES "
    "MPROF_TRACES(id), key TEXT NOT NULL, text TEXT NOT NULL);\n"
    "CREATE TABLE MPROF_STALL_REASONS (id INTEGER PRIMARY KEY, "
    "traceId INTEGER NOT NULL REFERENCES MPROF_TRACES(id), "
    "name TEXT NOT NULL, fullName TEXT NOT NULL, dimension TEXT, "
    "notIssued INTEGER NOT NULL);\n"
    "CREATE TABLE MPROF_SASS (kernelId INTEGER NOT NULL REFERENCES "
    "MPROF_KERNELS(id), pcOffset INTEGER NOT NULL, predicate TEXT, "
    "opcode TEXT NOT NULL, operands TEXT, file TEXT, line INTEGER);\n"
    "CREATE TABLE MPROF_PC_SAMPLES (kernelId INTEGER NOT NULL REFERENCES "
    "MPROF_KERNELS(id), pcOffset INTEGER NOT NULL, "
    "reasonId INTEGER NOT NULL REFERENCES MPROF_STALL_REASONS(id), "
    "samples INTEGER NOT NULL);\n"
    "CREATE TABLE MPROF_PM_METRICS (id INTEGER PRIMARY KEY, "
    "traceId INTEGER NOT NULL REFERENCES MPROF_TRACES(id), "
    "deviceId INTEGER NOT NULL, name TEXT NOT NULL, unit TEXT, "
    "intervalNs INTEGER);\n"
    "CREATE TABLE MPROF_PM_SAMPLES (start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, "
    "metricId INTEGER NOT NULL REFERENCES MPROF_PM_METRICS(id), "
    "value REAL NOT NULL);\n"
    "CREATE TABLE MPROF_SPANS (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "kernelId INTEGER REFERENCES MPROF_KERNELS(id), "
    "launchId INTEGER, "
    "sm INTEGER NOT NULL, block INTEGER NOT NULL, warp INTEGER, "
    "region TEXT, payload INTEGER NOT NULL, open INTEGER NOT NULL);\n"
    "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_OPER_UNKNOWN', "
    "'Unknown'), (1, 'CUDA_MEMCPY_OPER_HTOD', 'Host-to-Device'), "
    "(2, 'CUDA_MEMCPY_OPER_DTOH', 'Device-to-Host'), "
    "(8, 'CUDA_MEMCPY_OPER_DTOD', 'Device-to-Device'), "
    "(9, 'CUDA_MEMCPY_OPER_HTOH', 'Host-to-Host'), "
    "(10, 'CUDA_MEMCPY_OPER_PTOP', 'Peer-to-Peer');\n"
    "INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES "
    "(0, 'CUDA_KERNEL_LAUNCH_TYPE_REGULAR', 'Regular'), "
    "(1, 'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE', "
    "'Cooperative single device'), "
    "(2, 'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE', "
    "'Cooperative multi device');\n"
    "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES "
    "(59, 'NvtxPushPopRange', 'NVTX push-pop range'), "
    "(60, 'NvtxStartEndRange', 'NVTX start-end range'), "
    "(75, 'NvtxDomainCreate', 'NVTX domain create');\n";

/* Made after the rows are in: cheaper than keeping them up to date. */
static const char indexes[] =
    "CREATE INDEX kernel_correlation ON CUPTI_ACTIVITY_KIND_KERNEL "
    "(globalPid, correlationId);\n"
    "CREATE INDEX kernel_mprof ON CUPTI_ACTIVITY_KIND_KERNEL "
    "(mprofKernelId);\n"
    "CREATE INDEX memcpy_correlation ON CUPTI_ACTIVITY_KIND_MEMCPY "
    "(globalPid, correlationId);\n"
    "CREATE INDEX memset_correlation ON CUPTI_ACTIVITY_KIND_MEMSET "
    "(globalPid, correlationId);\n"
    "CREATE INDEX runtime_correlation ON CUPTI_ACTIVITY_KIND_RUNTIME "
    "(correlationId);\n"
    "CREATE INDEX runtime_thread ON CUPTI_ACTIVITY_KIND_RUNTIME "
    "(globalTid, start);\n"
    "CREATE INDEX nvtx_thread ON NVTX_EVENTS (globalTid, start);\n"
    "CREATE INDEX pc_samples_kernel ON MPROF_PC_SAMPLES "
    "(kernelId, pcOffset);\n"
    "CREATE INDEX sass_kernel ON MPROF_SASS (kernelId, pcOffset);\n"
    "CREATE INDEX pm_samples_metric ON MPROF_PM_SAMPLES (metricId, start);\n"
    "CREATE INDEX spans_launch ON MPROF_SPANS (launchId);\n";

/* ---- the writer ---------------------------------------------------------- */

enum {
  ST_STRING,
  ST_PROCESS,
  ST_GPU,
  ST_STREAM,
  ST_KERNEL,
  ST_MEMCPY,
  ST_MEMSET,
  ST_RUNTIME,
  ST_NVTX,
  ST_TRACE,
  ST_MKERNEL,
  ST_DIMENSION,
  ST_NOTE,
  ST_REASON,
  ST_SASS,
  ST_PC,
  ST_PM_METRIC,
  ST_PM_SAMPLE,
  ST_SPAN,
  ST_COUNT
};

static const char *const inserts[ST_COUNT] = {
    "INSERT INTO StringIds VALUES (?,?)",
    "INSERT INTO PROCESSES VALUES (?,?,?)",
    "INSERT OR IGNORE INTO TARGET_INFO_GPU VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?,0,0,?,?,0,0)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, start, end, deviceId, "
    "contextId, streamId, correlationId, globalPid, demangledName, "
    "shortName, mangledName, launchType, registersPerThread, gridX, gridY, "
    "gridZ, blockX, blockY, blockZ, staticSharedMemory, "
    "dynamicSharedMemory, localMemoryPerThread, gridId, graphNodeId, "
    "graphId, clusterX, clusterY, clusterZ, mprofKernelId) VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
    "(?,?,?,?,?,?,?,?,?,NULL,NULL,?,?,NULL)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES "
    "(?,?,?,?,?,?,?,?,?,NULL,NULL)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,NULL)",
    "INSERT INTO NVTX_EVENTS VALUES (?,?,?,NULL,NULL,?,?,?,NULL,NULL,?)",
    "INSERT INTO MPROF_TRACES VALUES (?,?,?,?,?,?,?)",
    "INSERT INTO MPROF_KERNELS VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO MPROF_DIMENSIONS VALUES (?,?,?,?,?,?)",
    "INSERT INTO MPROF_NOTES VALUES (?,?,?)",
    "INSERT INTO MPROF_STALL_REASONS VALUES (?,?,?,?,?,?)",
    "INSERT INTO MPROF_SASS VALUES (?,?,?,?,?,?,?)",
    "INSERT INTO MPROF_PC_SAMPLES VALUES (?,?,?,?)",
    "INSERT INTO MPROF_PM_METRICS VALUES (?,?,?,?,?,?)",
    "INSERT INTO MPROF_PM_SAMPLES VALUES (?,?,?,?)",
    "INSERT INTO MPROF_SPANS VALUES (?,?,?,?,?,?,?,?,?,?)",
};

typedef struct sq_writer {
  sqlite3 *db;
  sqlite3_stmt *st[ST_COUNT];
  const mprof_export_options *opts;
  const char *path;
  size_t rows;
  /* StringIds: value i + 1 is strings[i], found by content. */
  char **strings;
  size_t string_count, string_capacity;
  mprof__map string_index;
  int64_t domains; /* NVTX domains so far: their domainId counts on */
  /* progress */
  const char *what;
  size_t done, total;
} sq_writer;

static int sq_fail(sq_writer *w, const char *doing) {
  return mprof__error_set(MPROF_EIO, "%s: SQLite export: %s: %s", w->path,
                          doing, w->db ? sqlite3_errmsg(w->db) : "no database");
}

/* Column binders; columns count from 1, as SQLite's do. */
static void b_int(sqlite3_stmt *st, int col, int64_t v) {
  sqlite3_bind_int64(st, col, v);
}
static void b_u64(sqlite3_stmt *st, int col, uint64_t v) {
  /* SQLite integers are signed 64-bit: larger values (none in practice)
   * keep their bits. */
  sqlite3_bind_int64(st, col, (int64_t)v);
}
static void b_index(sqlite3_stmt *st, int col, uint32_t v) {
  if (v == MPROF_INDEX_NONE)
    sqlite3_bind_null(st, col);
  else
    sqlite3_bind_int64(st, col, v);
}
static void b_text(sqlite3_stmt *st, int col, const char *s) {
  if (!s)
    sqlite3_bind_null(st, col);
  else
    sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
}
/* "" is NULL: nothing known. */
static void b_text_opt(sqlite3_stmt *st, int col, const char *s) {
  b_text(st, col, s && *s ? s : NULL);
}
static void b_real(sqlite3_stmt *st, int col, double v) {
  if (isnan(v) || isinf(v))
    sqlite3_bind_null(st, col);
  else
    sqlite3_bind_double(st, col, v);
}

static int sq_progress(sq_writer *w) {
  if (w->opts->progress && (w->done & 0xffff) == 0)
    w->opts->progress(w->opts->progress_userdata, w->what, w->done, w->total);
  return MPROF_OK;
}

/* Run statement @p which with its bound values and make it ready again. */
static int sq_step(sq_writer *w, int which) {
  sqlite3_stmt *st = w->st[which];
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE)
    return sq_fail(w, "inserting a row");
  w->rows++;
  w->done++;
  return sq_progress(w);
}

static void sq_phase(sq_writer *w, const char *what, size_t total) {
  w->what = what;
  w->done = 0;
  w->total = total;
  if (w->opts->progress)
    w->opts->progress(w->opts->progress_userdata, what, 0, total);
}

/* The StringIds id of @p s (interned by content), inserting it once. */
static int sq_string(sq_writer *w, const char *s, int64_t *id) {
  if (!s)
    s = "";
  size_t len = strlen(s);
  uint64_t hash = mprof__hash64(s, len);
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&w->string_index, hash, &cursor)) !=
         MPROF__MAP_NONE)
    if (strcmp(w->strings[i], s) == 0) {
      *id = (int64_t)i + 1;
      return MPROF_OK;
    }
  if (w->string_count == w->string_capacity) {
    size_t cap = w->string_capacity ? 2 * w->string_capacity : 256;
    char **grown = (char **)realloc(w->strings, cap * sizeof *grown);
    if (!grown)
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    w->strings = grown;
    w->string_capacity = cap;
  }
  char *copy = (char *)malloc(len + 1);
  if (!copy)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  memcpy(copy, s, len + 1);
  i = (uint32_t)w->string_count;
  if (mprof__map_add(&w->string_index, hash, i)) {
    free(copy);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  w->strings[w->string_count++] = copy;
  *id = (int64_t)i + 1;
  sqlite3_stmt *st = w->st[ST_STRING];
  b_int(st, 1, *id);
  b_text(st, 2, copy);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE)
    return sq_fail(w, "inserting a string");
  w->rows++;
  return MPROF_OK;
}

/* ---- one trace ------------------------------------------------------------
 */

/* What the rows of trace t share, and the ids that number across the set. */
typedef struct sq_trace {
  size_t index; /* in the exported set */
  const mprof_diagnosis *diag;
  const mprof_join *join;
  const mprof_trace *trace;
  const unsigned char *selected;
  int64_t *global_pids; /* per process of the trace */
  size_t process_count;
  int64_t kernel_base; /* MPROF_KERNELS id of join kernel k: base + k + 1 */
  int64_t reason_base; /* MPROF_STALL_REASONS id of join reason r */
  int64_t launch_base; /* kernel table rowid of launch i: base + i + 1 */
  int64_t metric_base; /* MPROF_PM_METRICS id of metric m */
} sq_trace;

/* nsys serializes a process as pid << 24 and a thread as that plus its
 * thread id (docs/EXPORT.md). */
#define GLOBAL_PID(pid) ((int64_t)(pid) << 24)

static int64_t stream_global_pid(const sq_trace *t, uint32_t stream) {
  uint32_t p = mprof_trace_stream_process(t->trace, stream);
  return t->global_pids[p < t->process_count ? p : 0];
}

static uint32_t device_ordinal(const mprof_trace *trace, uint32_t device) {
  size_t n;
  const mprof_device_record *devices = mprof_trace_devices(trace, &n);
  return device < n ? devices[device].id : MPROF_INDEX_NONE;
}

static int sq_processes(sq_writer *w, sq_trace *t) {
  size_t n;
  const mprof_process_record *p = mprof_trace_processes(t->trace, &n);
  t->global_pids = (int64_t *)calloc(n ? n : 1, sizeof *t->global_pids);
  if (!t->global_pids)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  t->process_count = n;
  int rc = MPROF_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    /* An unknown pid gets one no Linux process has: 2^22 + trace. */
    uint64_t pid = p[i].pid ? p[i].pid : (1u << 22) + t->index;
    t->global_pids[i] = GLOBAL_PID(pid);
    const char *cmd = mprof_trace_string(t->trace, p[i].cmdline);
    sqlite3_stmt *st = w->st[ST_PROCESS];
    b_int(st, 1, t->global_pids[i]);
    b_u64(st, 2, pid);
    b_text_opt(st, 3, cmd);
    rc = sq_step(w, ST_PROCESS);
  }
  return rc;
}

static int sq_devices_streams(sq_writer *w, const sq_trace *t) {
  size_t n;
  const mprof_device_record *d = mprof_trace_devices(t->trace, &n);
  int rc = MPROF_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    sqlite3_stmt *st = w->st[ST_GPU];
    b_int(st, 1, d[i].id);
    b_text(st, 2, mprof_trace_string(t->trace, d[i].name));
    b_int(st, 3, d[i].l2_size);
    b_u64(st, 4, d[i].global_memory);
    /* bytes per second: double data rate over the bus */
    if (d[i].memory_clock_khz && d[i].memory_bus_width)
      b_u64(st, 5,
            (uint64_t)d[i].memory_clock_khz * 1000u * 2u *
                (d[i].memory_bus_width / 8u));
    b_u64(st, 6, (uint64_t)d[i].core_clock_khz * 1000u);
    b_int(st, 7, d[i].sm_count);
    b_int(st, 8, d[i].cc_major);
    b_int(st, 9, d[i].cc_minor);
    b_int(st, 10, d[i].max_threads_per_block);
    b_int(st, 11, d[i].max_blocks_per_sm);
    b_int(st, 12, d[i].max_regs_per_block);
    b_int(st, 13, d[i].max_regs_per_sm);
    b_int(st, 14, d[i].max_warps_per_sm);
    b_int(st, 15, d[i].max_shared_per_block);
    b_int(st, 16, d[i].max_shared_per_sm);
    b_int(st, 17, d[i].warp_size);
    sqlite3_stmt *s = w->st[ST_GPU];
    int step = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (step != SQLITE_DONE)
      rc = sq_fail(w, "inserting a GPU");
    else if (sqlite3_changes(w->db))
      w->rows++;
  }
  const mprof_stream_record *s = mprof_trace_streams(t->trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    sqlite3_stmt *st = w->st[ST_STREAM];
    b_int(st, 1, s[i].stream_id);
    b_int(st, 2, stream_global_pid(t, (uint32_t)i) >> 24);
    b_int(st, 3, s[i].context_id);
    rc = sq_step(w, ST_STREAM);
  }
  return rc;
}

static int sq_kernels(sq_writer *w, const sq_trace *t) {
  size_t n = mprof_diagnosis_kernel_count(t->diag);
  int rc = MPROF_OK;
  for (size_t k = 0; k < n && !rc; k++) {
    if (!t->selected[k])
      continue;
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(t->diag, k);
    const mprof_kernel_stats *ks = kd->stats;
    int64_t name_id, short_id, mangled_id;
    if ((rc = sq_string(w, ks->name, &name_id)) ||
        (rc = sq_string(w, mprof_join_kernel_short(t->join, k), &short_id)) ||
        (rc = sq_string(w, ks->mangled, &mangled_id)))
      break;
    int64_t id = t->kernel_base + (int64_t)k + 1;
    sqlite3_stmt *st = w->st[ST_MKERNEL];
    b_int(st, 1, id);
    b_int(st, 2, (int64_t)t->index + 1);
    b_index(st, 3, ks->device_id);
    b_int(st, 4, name_id);
    b_int(st, 5, short_id);
    b_int(st, 6, mangled_id);
    b_u64(st, 7, ks->launches);
    b_u64(st, 8, ks->total_ns);
    b_u64(st, 9, ks->min_ns);
    b_u64(st, 10, ks->max_ns);
    b_u64(st, 11, ks->median_ns);
    b_real(st, 12, ks->mean_ns);
    b_real(st, 13, ks->share);
    b_u64(st, 14, ks->samples);
    b_u64(st, 15, ks->not_issued);
    b_text(st, 16, kd->verdict ? kd->verdict : "");
    if (kd->verdict_dimension != MPROF_DIM_NONE) {
      b_text(st, 17, mprof_dimension_key(kd->verdict_dimension));
      b_text(st, 18, mprof_state_name(kd->verdict_state));
    }
    if (kd->occupancy->known)
      b_real(st, 19, kd->occupancy->theoretical);
    b_int(st, 20, kd->library != 0);
    b_int(st, 21, kd->tensor_core != 0);
    b_text(st, 22, kd->roof);
    b_int(st, 23, (ks->flags & MPROF_KERNEL_MPROF_OWN) != 0);
    if ((rc = sq_step(w, ST_MKERNEL)))
      break;
    for (size_t d = 0; d < kd->dimension_count && !rc; d++) {
      const mprof_dimension *dim = &kd->dimensions[d];
      if (dim->state == MPROF_STATE_UNKNOWN && !(dim->detail && *dim->detail))
        continue;
      st = w->st[ST_DIMENSION];
      b_int(st, 1, id);
      b_text(st, 2, mprof_dimension_key(dim->id));
      b_text(st, 3, mprof_dimension_title(dim->id));
      b_text(st, 4, mprof_state_name(dim->state));
      b_real(st, 5, dim->cost);
      b_text_opt(st, 6, dim->detail);
      rc = sq_step(w, ST_DIMENSION);
    }
  }
  size_t notes = mprof_diagnosis_note_count(t->diag);
  for (size_t i = 0; i < notes && !rc; i++) {
    const mprof_note *note = mprof_diagnosis_note(t->diag, i);
    sqlite3_stmt *st = w->st[ST_NOTE];
    b_int(st, 1, (int64_t)t->index + 1);
    b_text(st, 2, note->key);
    b_text(st, 3, note->text);
    rc = sq_step(w, ST_NOTE);
  }
  return rc;
}

static int sq_launches(sq_writer *w, const sq_trace *t) {
  size_t nl, ns, nk, nst;
  const mprof_launch_record *l = mprof_trace_launches(t->trace, &nl);
  const mprof_shape_record *shapes = mprof_trace_shapes(t->trace, &ns);
  const mprof_kernel_record *kernels = mprof_trace_kernels(t->trace, &nk);
  const mprof_stream_record *streams = mprof_trace_streams(t->trace, &nst);
  /* StringIds of each join kernel, found once. */
  size_t kernel_count = mprof_join_kernel_count(t->join);
  int64_t *ids =
      (int64_t *)calloc(3 * (kernel_count ? kernel_count : 1), sizeof *ids);
  if (!ids)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  int rc = MPROF_OK;
  for (size_t k = 0; k < kernel_count && !rc; k++) {
    if (!t->selected[k])
      continue;
    const mprof_kernel_stats *ks = mprof_join_kernel(t->join, k);
    if (!(rc = sq_string(w, ks->name, &ids[3 * k])))
      rc = sq_string(w, mprof_join_kernel_short(t->join, k), &ids[3 * k + 1]);
    if (!rc)
      rc = sq_string(w, ks->mangled, &ids[3 * k + 2]);
  }
  sq_phase(w, "kernel launches", nl);
  for (size_t i = 0; i < nl && !rc; i++) {
    uint32_t k = mprof_join_launch_kernel(t->join, i);
    if (k == MPROF_INDEX_NONE || !t->selected[k] || l[i].shape >= ns ||
        l[i].stream >= nst)
      continue;
    const mprof_shape_record *shape = &shapes[l[i].shape];
    const mprof_kernel_record *kr =
        shape->kernel < nk ? &kernels[shape->kernel] : NULL;
    const mprof_stream_record *s = &streams[l[i].stream];
    int64_t rowid = t->launch_base + (int64_t)i + 1;
    sqlite3_stmt *st = w->st[ST_KERNEL];
    b_int(st, 1, rowid);
    b_u64(st, 2, l[i].start);
    b_u64(st, 3, l[i].end);
    uint32_t ordinal = device_ordinal(t->trace, s->device);
    b_int(st, 4, ordinal == MPROF_INDEX_NONE ? -1 : (int64_t)ordinal);
    b_int(st, 5, s->context_id);
    b_int(st, 6, s->stream_id);
    b_int(st, 7, l[i].correlation_id);
    b_int(st, 8, stream_global_pid(t, l[i].stream));
    b_int(st, 9, ids[3 * k]);
    b_int(st, 10, ids[3 * k + 1]);
    b_int(st, 11, ids[3 * k + 2]);
    b_int(st, 12, shape->launch_type);
    b_int(st, 13, kr ? kr->registers : 0);
    for (int d = 0; d < 3; d++) {
      b_int(st, 14 + d, shape->grid[d]);
      b_int(st, 17 + d, shape->block[d]);
    }
    b_int(st, 20, kr ? kr->static_shared : 0);
    b_int(st, 21, shape->dynamic_shared);
    b_int(st, 22, kr ? kr->local_per_thread : 0);
    b_int(st, 23, rowid);
    if (l[i].graph_id) {
      b_u64(st, 24, l[i].graph_node_id);
      b_int(st, 25, l[i].graph_id);
    }
    if (shape->cluster[0])
      for (int d = 0; d < 3; d++)
        b_int(st, 26 + d, shape->cluster[d]);
    b_int(st, 29, t->kernel_base + (int64_t)k + 1);
    rc = sq_step(w, ST_KERNEL);
  }
  free(ids);
  return rc;
}

/* CUPTI's memcpy kinds (CUpti_ActivityMemcpyKind), which nsys keeps. */
static int cupti_copy_kind(uint32_t kind) {
  switch (kind) {
  case MPROF_COPY_HTOD: return 1;
  case MPROF_COPY_DTOH: return 2;
  case MPROF_COPY_DTOD: return 8;
  case MPROF_COPY_HTOH: return 9;
  case MPROF_COPY_PTOP: return 10;
  default: return 0;
  }
}

static int sq_memops(sq_writer *w, const sq_trace *t) {
  size_t n, nst;
  const mprof_memop_record *m = mprof_trace_memops(t->trace, &n);
  const mprof_stream_record *streams = mprof_trace_streams(t->trace, &nst);
  int rc = MPROF_OK;
  sq_phase(w, "copies and memsets", n);
  for (size_t i = 0; i < n && !rc; i++) {
    if (m[i].stream >= nst)
      continue;
    const mprof_stream_record *s = &streams[m[i].stream];
    int memset_op = m[i].kind == MPROF_MEMOP_MEMSET;
    int which = memset_op ? ST_MEMSET : ST_MEMCPY;
    sqlite3_stmt *st = w->st[which];
    b_u64(st, 1, m[i].start);
    b_u64(st, 2, m[i].end);
    uint32_t ordinal = device_ordinal(t->trace, s->device);
    b_int(st, 3, ordinal == MPROF_INDEX_NONE ? -1 : (int64_t)ordinal);
    b_int(st, 4, s->context_id);
    b_int(st, 5, s->stream_id);
    b_int(st, 6, m[i].correlation_id);
    b_int(st, 7, stream_global_pid(t, m[i].stream));
    if (memset_op) {
      b_int(st, 8, m[i].value);
      b_u64(st, 9, m[i].bytes);
    } else {
      b_u64(st, 8, m[i].bytes);
      b_int(st, 9, cupti_copy_kind(m[i].copy_kind));
      b_index(st, 10, m[i].src_device);
      b_index(st, 11, m[i].dst_device);
    }
    rc = sq_step(w, which);
  }
  return rc;
}

/* API calls and NVTX ranges: host threads of the trace's first process
 * (a trace of several processes does not say whose thread is whose). */
static int sq_host(sq_writer *w, const sq_trace *t) {
  size_t nc, nr;
  const mprof_api_call_record *c = mprof_trace_api_calls(t->trace, &nc);
  const mprof_range_record *r = mprof_trace_ranges(t->trace, &nr);
  int64_t gpid = t->global_pids[0];
  int rc = MPROF_OK;
  sq_phase(w, "API calls", nc);
  for (size_t i = 0; i < nc && !rc; i++) {
    int64_t name_id;
    if ((rc = sq_string(w, mprof_trace_string(t->trace, c[i].name), &name_id)))
      break;
    sqlite3_stmt *st = w->st[ST_RUNTIME];
    b_u64(st, 1, c[i].start);
    b_u64(st, 2, c[i].end);
    b_int(st, 3, c[i].kind == MPROF_API_DRIVER ? 1 : 0);
    b_int(st, 4, gpid + (c[i].thread_id & 0xffffffu));
    b_int(st, 5, c[i].correlation_id);
    b_int(st, 6, name_id);
    rc = sq_step(w, ST_RUNTIME);
  }
  /* Named domains: a NvtxDomainCreate row each, numbered from 1 across
   * the exported set. */
  const char **domains = NULL;
  int64_t first_domain = w->domains;
  size_t domain_count = 0;
  if (!rc && nr) {
    domains = (const char **)calloc(nr, sizeof *domains);
    if (!domains)
      rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  sq_phase(w, "NVTX ranges", nr);
  for (size_t i = 0; i < nr && !rc; i++) {
    const char *domain = mprof_trace_string(t->trace, r[i].domain);
    int64_t domain_id = 0;
    if (domain && *domain) {
      size_t d = 0;
      while (d < domain_count && strcmp(domains[d], domain) != 0)
        d++;
      domain_id = first_domain + (int64_t)d + 1;
      if (d == domain_count) {
        domains[domain_count++] = domain;
        w->domains++;
        sqlite3_stmt *st = w->st[ST_NVTX];
        b_u64(st, 1, r[i].start);
        b_int(st, 3, 75);
        b_text(st, 5, domain);
        b_int(st, 6, gpid + (r[i].thread_id & 0xffffffu));
        b_int(st, 7, domain_id);
        if ((rc = sq_step(w, ST_NVTX)))
          break;
      }
    }
    const char *name = mprof_trace_string(t->trace, r[i].name);
    sqlite3_stmt *st = w->st[ST_NVTX];
    b_u64(st, 1, r[i].start);
    b_u64(st, 2, r[i].end);
    /* push/pop ranges nest (depth counts from 1); start/end ones do not */
    b_int(st, 3, r[i].depth ? 59 : 60);
    if (r[i].color)
      b_int(st, 4, r[i].color);
    b_text(st, 5, name);
    b_int(st, 6, gpid + (r[i].thread_id & 0xffffffu));
    b_int(st, 7, domain_id);
    rc = sq_step(w, ST_NVTX);
  }
  free(domains);
  return rc;
}

static int sq_samples(sq_writer *w, const sq_trace *t) {
  size_t reasons = mprof_join_reason_count(t->join);
  int rc = MPROF_OK;
  for (size_t r = 0; r < reasons && !rc; r++) {
    const mprof_stall_reason *reason = mprof_join_reason(t->join, r);
    sqlite3_stmt *st = w->st[ST_REASON];
    b_int(st, 1, t->reason_base + (int64_t)r + 1);
    b_int(st, 2, (int64_t)t->index + 1);
    b_text(st, 3, reason->name);
    b_text(st, 4, reason->full_name);
    if (reason->dimension != MPROF_REASON_NO_DIMENSION)
      b_text(st, 5, mprof_dimension_key(reason->dimension));
    b_int(st, 6, reason->not_issued != 0);
    rc = sq_step(w, ST_REASON);
  }
  size_t kernels = mprof_join_kernel_count(t->join);
  for (size_t k = 0; k < kernels && !rc; k++) {
    if (!t->selected[k])
      continue;
    int64_t id = t->kernel_base + (int64_t)k + 1;
    const mprof_kernel_stats *ks = mprof_join_kernel(t->join, k);
    const mprof_sidecar_function *fn = ks->function;
    for (size_t i = 0; fn && i < fn->instruction_count && !rc; i++) {
      const mprof_sass_instruction *in = &fn->instructions[i];
      sqlite3_stmt *st = w->st[ST_SASS];
      b_int(st, 1, id);
      b_int(st, 2, in->offset);
      b_text_opt(st, 3, in->predicate);
      b_text(st, 4, in->opcode ? in->opcode : "");
      b_text_opt(st, 5, in->operands);
      b_text_opt(st, 6, in->file);
      if (in->line)
        b_int(st, 7, in->line);
      rc = sq_step(w, ST_SASS);
    }
    size_t pcs;
    const mprof_pc_stats *pc = mprof_join_pcs(t->join, k, &pcs);
    for (size_t p = 0; p < pcs && !rc; p++)
      for (size_t r = 0; r < pc[p].reason_count && !rc; r++) {
        if (!pc[p].reasons[r].samples)
          continue;
        sqlite3_stmt *st = w->st[ST_PC];
        b_int(st, 1, id);
        b_int(st, 2, pc[p].offset);
        b_int(st, 3, t->reason_base + (int64_t)pc[p].reasons[r].reason + 1);
        b_u64(st, 4, pc[p].reasons[r].samples);
        rc = sq_step(w, ST_PC);
      }
  }
  return rc;
}

static int sq_counters(sq_writer *w, const sq_trace *t) {
  size_t nm, ns;
  const mprof_pm_metric_record *m = mprof_trace_pm_metrics(t->trace, &nm);
  const mprof_pm_sample_record *s = mprof_trace_pm_samples(t->trace, &ns);
  int rc = MPROF_OK;
  for (size_t i = 0; i < nm && !rc; i++) {
    sqlite3_stmt *st = w->st[ST_PM_METRIC];
    b_int(st, 1, t->metric_base + (int64_t)i + 1);
    b_int(st, 2, (int64_t)t->index + 1);
    uint32_t ordinal = device_ordinal(t->trace, m[i].device);
    b_int(st, 3, ordinal == MPROF_INDEX_NONE ? -1 : (int64_t)ordinal);
    b_text(st, 4, mprof_trace_string(t->trace, m[i].name));
    b_text_opt(st, 5, mprof_trace_string(t->trace, m[i].unit));
    if (m[i].interval_ns)
      b_u64(st, 6, m[i].interval_ns);
    rc = sq_step(w, ST_PM_METRIC);
  }
  sq_phase(w, "PM samples", ns * nm);
  for (size_t i = 0; i < ns && !rc; i++)
    for (size_t j = 0; j < nm && !rc; j++) {
      if (m[j].device != s[i].device || m[j].column >= MPROF_PM_MAX_METRICS)
        continue;
      float v = s[i].value[m[j].column];
      if (v != v) /* not measured in this sample */
        continue;
      sqlite3_stmt *st = w->st[ST_PM_SAMPLE];
      b_u64(st, 1, s[i].start);
      b_u64(st, 2, s[i].end);
      b_int(st, 3, t->metric_base + (int64_t)j + 1);
      b_real(st, 4, (double)v);
      rc = sq_step(w, ST_PM_SAMPLE);
    }
  return rc;
}

static int sq_spans(sq_writer *w, const sq_trace *t) {
  size_t n, nl, nregions;
  const mprof_span_record *s = mprof_trace_spans(t->trace, &n);
  mprof_trace_launches(t->trace, &nl);
  const mprof_region_record *regions = mprof_trace_regions(t->trace, &nregions);
  int rc = MPROF_OK;
  sq_phase(w, "spans", n);
  for (size_t i = 0; i < n && !rc; i++) {
    uint32_t k = MPROF_INDEX_NONE;
    if (s[i].launch != MPROF_INDEX_NONE && s[i].launch < nl) {
      k = mprof_join_launch_kernel(t->join, s[i].launch);
      if (k != MPROF_INDEX_NONE && !t->selected[k])
        continue;
    }
    sqlite3_stmt *st = w->st[ST_SPAN];
    b_u64(st, 1, s[i].start);
    b_u64(st, 2, s[i].end);
    if (k != MPROF_INDEX_NONE) {
      b_int(st, 3, t->kernel_base + (int64_t)k + 1);
      b_int(st, 4, t->launch_base + (int64_t)s[i].launch + 1);
    }
    b_int(st, 5, s[i].sm);
    b_int(st, 6, s[i].block);
    b_index(st, 7, s[i].warp);
    if (s[i].region < nregions)
      b_text_opt(st, 8,
                 mprof_trace_string(t->trace, regions[s[i].region].name));
    b_u64(st, 9, s[i].payload);
    b_int(st, 10, (s[i].flags & MPROF_SPAN_FLAG_OPEN) != 0);
    rc = sq_step(w, ST_SPAN);
  }
  return rc;
}

static int sq_trace_row(sq_writer *w, const sq_trace *t) {
  sqlite3_stmt *st = w->st[ST_TRACE];
  b_int(st, 1, (int64_t)t->index + 1);
  b_text(st, 2, mprof_trace_path(t->trace));
  b_int(st, 3, t->global_pids[0]);
  b_text_opt(st, 4, mprof_trace_process_meta(t->trace, 0, "host"));
  b_text_opt(st, 5, mprof_trace_process_meta(t->trace, 0, "cmdline"));
  b_u64(st, 6, mprof_join_kernel_time(t->join));
  b_int(st, 7, mprof_trace_partial(t->trace, NULL));
  return sq_step(w, ST_TRACE);
}

static int sq_exec(sq_writer *w, const char *sql, const char *doing) {
  char *message = NULL;
  if (sqlite3_exec(w->db, sql, NULL, NULL, &message) == SQLITE_OK)
    return MPROF_OK;
  int rc = mprof__error_set(MPROF_EIO, "%s: SQLite export: %s: %s", w->path,
                            doing, message ? message : "failed");
  sqlite3_free(message);
  return rc;
}

int mprof__export_sqlite(const char *path, const mprof_diagnosis *const *traces,
                         size_t count, const mprof__export_selection *sel,
                         const mprof_export_options *opts,
                         mprof_export_report *rep) {
  sq_writer w;
  memset(&w, 0, sizeof w);
  w.opts = opts;
  w.path = path;
  int rc = MPROF_OK;
  if (sqlite3_open_v2(path, &w.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    rc = sq_fail(&w, "cannot open the database");
    sqlite3_close(w.db);
    return rc;
  }
  /* The file is a partial one, renamed when complete: no journal to keep
   * it consistent on the way. */
  rc = sq_exec(&w,
               "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
               "PRAGMA page_size=65536; BEGIN;",
               "setting up");
  if (!rc)
    rc = sq_exec(&w, schema, "creating the tables");
  for (int i = 0; i < ST_COUNT && !rc; i++)
    if (sqlite3_prepare_v2(w.db, inserts[i], -1, &w.st[i], NULL) != SQLITE_OK)
      rc = sq_fail(&w, "preparing a statement");
  int64_t kernel_base = 0, reason_base = 0, launch_base = 0, metric_base = 0;
  for (size_t i = 0; i < count && !rc; i++) {
    sq_trace t;
    memset(&t, 0, sizeof t);
    t.index = i;
    t.diag = traces[i];
    t.join = mprof_diagnosis_join(traces[i]);
    t.trace = mprof_join_trace(t.join);
    t.selected = sel->selected[i];
    t.kernel_base = kernel_base;
    t.reason_base = reason_base;
    t.launch_base = launch_base;
    t.metric_base = metric_base;
    size_t n;
    mprof_trace_launches(t.trace, &n);
    launch_base += (int64_t)n;
    kernel_base += (int64_t)mprof_join_kernel_count(t.join);
    reason_base += (int64_t)mprof_join_reason_count(t.join);
    mprof_trace_pm_metrics(t.trace, &n);
    metric_base += (int64_t)n;
    rc = sq_processes(&w, &t);
    if (!rc)
      rc = sq_trace_row(&w, &t);
    if (!rc)
      rc = sq_devices_streams(&w, &t);
    if (!rc)
      rc = sq_kernels(&w, &t);
    if (!rc)
      rc = sq_launches(&w, &t);
    if (!rc)
      rc = sq_memops(&w, &t);
    if (!rc)
      rc = sq_host(&w, &t);
    if (!rc)
      rc = sq_samples(&w, &t);
    if (!rc)
      rc = sq_counters(&w, &t);
    if (!rc)
      rc = sq_spans(&w, &t);
    free(t.global_pids);
  }
  if (!rc) {
    sq_phase(&w, "indexes", 0);
    rc = sq_exec(&w, indexes, "making the indexes");
  }
  if (!rc) {
    char meta[256];
    snprintf(meta, sizeof meta,
             "CREATE TABLE MPROF_EXPORT (name TEXT NOT NULL, value TEXT); "
             "INSERT INTO MPROF_EXPORT VALUES ('exporter', 'mprof %s'), "
             "('schema_version', '1');",
             MPROF_VERSION_STRING);
    rc = sq_exec(&w, meta, "writing the export's metadata");
  }
  if (!rc)
    rc = sq_exec(&w, "COMMIT;", "committing");
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(w.st[i]);
  if (sqlite3_close(w.db) != SQLITE_OK && !rc)
    rc = mprof__error_set(MPROF_EIO, "%s: SQLite export: cannot close", path);
  for (size_t i = 0; i < w.string_count; i++)
    free(w.strings[i]);
  free(w.strings);
  mprof__map_free(&w.string_index);
  rep->rows = w.rows;
  rep->events = w.rows;
  return rc;
}

#endif /* MPROF_HAVE_SQLITE */
