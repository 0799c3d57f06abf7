/*
 * The ABI test's caller (docs/ABI.md, "Structs that grow").
 *
 * Compiled once against the normal headers, it is linked twice: with
 * libmprof, and with a libmprof whose growable structs each end with one
 * more field (MPROF_TEST_GROW_STRUCTS: what a later minor version does when
 * it appends one). It calls every function that reads or writes a
 * growable struct in the caller's memory and every accessor of the growable
 * structs the library hands out:
 *  - a struct the library writes (results, reports, *_options_init()) sits
 *    before a canary, checked after the call;
 *  - a struct the library reads (options) ends where an unreadable page
 *    starts, so reading past it stops the program;
 *  - every value that comes back is printed; run.sh checks that both runs
 *    print the same.
 *
 * usage: abi_caller normal|grown SAMPLES_DIR WORK_DIR
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mprof/mprof.h"

/* ---- checks --------------------------------------------------------------
 */

static const char *current = "start"; /* the call in progress */
static int grown;                     /* linked with the grown libmprof */

#define CALL(expr) (current = #expr, (expr))

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "abi_caller: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond))                                                               \
      fail("%s: %s failed (line %d): %s", current, #cond, __LINE__,            \
           mprof_error_last());                                                \
  } while (0)

static void on_segv(int sig) {
  (void)sig;
  static const char a[] = "abi_caller: ";
  static const char b[] = ": read or wrote past the end of the caller's "
                          "struct (or another bad access)\n";
  ssize_t rc = write(2, a, sizeof a - 1);
  rc = write(2, current, strlen(current));
  rc = write(2, b, sizeof b - 1);
  (void)rc;
  _exit(1);
}

/* @p size bytes that end where an unreadable page starts: for a struct the
 * library reads. Never freed (a test program). */
static void *at_page_end(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t span = (size + page - 1) / page * page;
  unsigned char *m =
      (unsigned char *)mmap(NULL, span + page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m + span, page, PROT_NONE) != 0)
    fail("mmap failed");
  return m + span - size;
}

/* A copy of @p init at the end of a page, for the library to read. */
#define GUARDED(type, init)                                                    \
  ((type *)memcpy(at_page_end(sizeof(type)), &(init), sizeof(type)))

/* A struct the library writes, followed by a canary. */
#define CANARY_BYTES 64
#define BOX(type)                                                              \
  struct {                                                                     \
    type s;                                                                    \
    unsigned char canary[CANARY_BYTES];                                        \
  }
#define BOX_INIT(box, init)                                                    \
  do {                                                                         \
    memset(&(box), 0xA5, sizeof(box));                                         \
    memcpy(&(box).s, &(init), sizeof((box).s));                                \
  } while (0)

static void canary_check(const unsigned char *canary, const char *what) {
  for (size_t i = 0; i < CANARY_BYTES; i++)
    if (canary[i] != 0xA5)
      fail("%s wrote past the end of the caller's struct (byte %zu of the "
           "canary is 0x%02x)",
           what, i, canary[i]);
}
#define CANARY_OK(box) canary_check((box).canary, current)

/* Fails unless element @p index of an array of growable structs lies
 * where the normal headers place it (linked with libmprof) or further
 * (the grown one): proof of which library runs. */
static void stride_check(const void *first, const void *second, size_t size,
                         const char *what) {
  size_t stride = (size_t)((const char *)second - (const char *)first);
  if (grown ? stride <= size : stride != size)
    fail("%s: elements %zu bytes apart, the headers say %zu: the wrong "
         "libmprof is loaded",
         what, stride, size);
}

/* ---- output ---------------------------------------------------------------
 */

static void put(const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s ", key);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static void put_u(const char *key, uint64_t v) { put(key, "%" PRIu64, v); }
static void put_d(const char *key, double v) {
  if (isnan(v))
    put(key, "nan");
  else
    put(key, "%.17g", v);
}
static void put_s(const char *key, const char *v) {
  put(key, "%s", v ? v : "(null)");
}

/* A key with an index: "kernel.3.shape.1". */
static const char *key(const char *fmt, ...) {
  static char buf[8][256];
  static int next;
  char *out = buf[next++ & 7];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, sizeof buf[0], fmt, ap);
  va_end(ap);
  return out;
}

/* FNV-1a of a report written to memory: its bytes must not change. */
static void put_text(const char *k, char *text, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; i++) {
    h ^= (unsigned char)text[i];
    h *= 1099511628211ull;
  }
  put(k, "%zu bytes, fnv %016" PRIx64, size, h);
  free(text);
}

static char samples[1024], work[1024];

static const char *sample(const char *name) {
  return key("%s/%s", samples, name);
}
static const char *scratch(const char *name) {
  return key("%s/%s", work, name);
}

/* ---- options the library fills ------------------------------------------
 */

#define OPTIONS_INIT(type, fn, v)                                              \
  do {                                                                         \
    BOX(type) box;                                                             \
    memset(&box, 0xA5, sizeof box);                                            \
    CHECK(CALL(fn(&box.s, v)) == 0);                                           \
    CANARY_OK(box);                                                            \
    CHECK(box.s.version == (v));                                               \
  } while (0)

static void options_init(void) {
  OPTIONS_INIT(mprof_open_options, mprof_open_options_init, 1);
  for (unsigned v = 1; v <= MPROF_WRITER_OPTIONS_VERSION; v++)
    OPTIONS_INIT(mprof_writer_options, mprof_writer_options_init, v);
  for (unsigned v = 1; v <= MPROF_JOIN_OPTIONS_VERSION; v++)
    OPTIONS_INIT(mprof_join_options, mprof_join_options_init, v);
  OPTIONS_INIT(mprof_diagnose_options, mprof_diagnose_options_init, 1);
  OPTIONS_INIT(mprof_report_options, mprof_report_options_init, 1);
  OPTIONS_INIT(mprof_diff_options, mprof_diff_options_init, 1);
  OPTIONS_INIT(mprof_export_options, mprof_export_options_init, 1);
  for (unsigned v = 1; v <= MPROF_SASS_OPTIONS_VERSION; v++)
    OPTIONS_INIT(mprof_sass_options, mprof_sass_options_init, v);
  /* The values: one of each, through the library. */
  BOX(mprof_diagnose_options) d;
  memset(&d, 0, sizeof d);
  CHECK(CALL(mprof_diagnose_options_init(&d.s, 1)) == 0);
  put_u("diagnose_options.hot_count", d.s.hot_count);
  put_u("diagnose_options.min_samples", d.s.min_samples);
  BOX(mprof_report_options) r;
  memset(&r, 0, sizeof r);
  CHECK(CALL(mprof_report_options_init(&r.s, 1)) == 0);
  put_u("report_options.max_kernels", r.s.max_kernels);
  put_u("report_options.max_hot", r.s.max_hot);
  BOX(mprof_diff_options) f;
  memset(&f, 0, sizeof f);
  CHECK(CALL(mprof_diff_options_init(&f.s, 1)) == 0);
  put_d("diff_options.alpha", f.s.alpha);
  put_d("diff_options.min_change", f.s.min_change);
}

/* ---- the join, the diagnosis and what hangs off them ---------------------
 */

typedef struct opened {
  mprof_trace *trace;
  mprof_sidecar *sidecar;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
} opened;

static void open_sample(opened *o, const char *name) {
  memset(o, 0, sizeof *o);
  mprof_open_options oo = MPROF_OPEN_OPTIONS_INIT;
  CHECK(CALL(mprof_trace_open(&o->trace, sample(name),
                              GUARDED(mprof_open_options, oo))) == 0);
  char path[1100];
  if (mprof_sidecar_path_of(o->trace, path, sizeof path) == 0)
    CHECK(CALL(mprof_sidecar_load(&o->sidecar, path)) == 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = o->sidecar;
  CHECK(CALL(mprof_join_build(&o->join, o->trace,
                              GUARDED(mprof_join_options, jo))) == 0);
  mprof_diagnose_options dop = MPROF_DIAGNOSE_OPTIONS_INIT;
  CHECK(CALL(mprof_diagnose(&o->diagnosis, o->join,
                            GUARDED(mprof_diagnose_options, dop))) == 0);
}

static void close_sample(opened *o) {
  mprof_diagnosis_free(o->diagnosis);
  mprof_join_free(o->join);
  mprof_sidecar_free(o->sidecar);
  mprof_trace_free(o->trace);
}

static void put_occupancy(const char *name, const mprof_occupancy *o) {
  char k[128]; /* key()'s buffers are reused below */
  snprintf(k, sizeof k, "%s", name);
  put_u(key("%s.version", k), o->version);
  put_u(key("%s.known", k), o->known);
  put_u(key("%s.warps_per_block", k), o->warps_per_block);
  put_u(key("%s.blocks_per_sm", k), o->blocks_per_sm);
  put_u(key("%s.active_warps", k), o->active_warps);
  put_u(key("%s.max_warps", k), o->max_warps);
  put_d(key("%s.theoretical", k), o->theoretical);
  put_u(key("%s.limits", k), (uint64_t)o->limit_warps ^
                                 (uint64_t)o->limit_blocks << 8 ^
                                 (uint64_t)o->limit_registers << 16 ^
                                 (uint64_t)o->limit_shared << 24);
  put_u(key("%s.limiter", k), o->limiter);
  put_u(key("%s.grid_blocks", k), o->grid_blocks);
  put_u(key("%s.sm_count", k), o->sm_count);
  put_d(key("%s.waves", k), o->waves);
  put_d(key("%s.tail_efficiency", k), o->tail_efficiency);
}

static void join_values(const char *name, const opened *o) {
  const mprof_join *j = o->join;
  size_t kernels = mprof_join_kernel_count(j);
  put_u(key("%s.kernels", name), kernels);
  put_u(key("%s.gpus", name), mprof_join_gpu_count(j));
  put_u(key("%s.kernel_time", name), mprof_join_kernel_time(j));
  put_u(key("%s.samples", name), mprof_join_sample_total(j));
  for (size_t r = 0; r < mprof_join_reason_count(j); r++) {
    const mprof_stall_reason *sr = mprof_join_reason(j, r);
    put(key("%s.reason.%zu", name, r), "%s %s %u %u %u", sr->name,
        sr->full_name, sr->not_issued, sr->plain, sr->dimension);
  }
  for (size_t k = 0; k < kernels; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
    char kk[64];
    snprintf(kk, sizeof kk, "%s.kernel.%zu", name, k);
    put(kk, "%s %u %u", ks->mangled, ks->device, ks->device_id);
    put(key("%s.time", kk),
        "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
        " %.17g %.17g",
        ks->launches, ks->total_ns, ks->min_ns, ks->max_ns, ks->median_ns,
        ks->p90_ns, ks->mean_ns, ks->stddev_ns);
    put(key("%s.share", kk), "%.17g %.17g", ks->share, ks->device_share);
    put(key("%s.gaps", kk), "%" PRIu64 " %" PRIu64 " %.17g", ks->gap_count,
        ks->gap_median_ns, ks->gap_mean_ns);
    put(key("%s.counts", kk), "%" PRIu64 " %" PRIu64 " %zu %zu %zu %u %u %zu",
        ks->samples, ks->not_issued, ks->shape_count, ks->pc_count,
        ks->function_count, ks->process, ks->process_count, ks->memory_count);
    for (size_t s = 0; s < ks->shape_count; s++) {
      const mprof_shape_stats *sh = mprof_join_shape(j, k, s);
      put(key("%s.shape.%zu", kk, s),
          "%u %u %u x %u %u %u, %u+%u smem, %u regs, %" PRIu64
          " launches %" PRIu64 " ns %.17g mean",
          sh->grid[0], sh->grid[1], sh->grid[2], sh->block[0], sh->block[1],
          sh->block[2], sh->static_shared, sh->dynamic_shared, sh->registers,
          sh->launches, sh->total_ns, sh->mean_ns);
    }
    for (size_t p = 0; p < ks->pc_count; p++) {
      const mprof_pc_stats *pc = mprof_join_pc(j, k, p);
      char pk[96];
      snprintf(pk, sizeof pk, "%s.pc.%zu", kk, p);
      put(pk, "%u %" PRIu64 " %" PRIu64 " %zu %s", pc->offset, pc->samples,
          pc->not_issued, pc->reason_count,
          pc->instruction ? pc->instruction->opcode : "-");
      for (size_t r = 0; r < pc->reason_count; r++) {
        const mprof_reason_samples *rs = mprof_pc_stats_reason(pc, r);
        put(key("%s.reason.%zu", pk, r), "%u %" PRIu64, rs->reason,
            rs->samples);
      }
      if (p == 1)
        stride_check(mprof_join_pc(j, k, 0), pc, sizeof *pc, "mprof_join_pc");
      if (pc->reason_count > 1)
        stride_check(mprof_pc_stats_reason(pc, 0), mprof_pc_stats_reason(pc, 1),
                     sizeof(mprof_reason_samples), "mprof_pc_stats_reason");
    }
    for (size_t r = 0; mprof_join_kernel_reason(j, k, r); r++) {
      const mprof_reason_samples *rs = mprof_join_kernel_reason(j, k, r);
      put(key("%s.kernel_reason.%zu", kk, r), "%u %" PRIu64, rs->reason,
          rs->samples);
    }
    for (size_t m = 0; m < ks->memory_count; m++) {
      const mprof_memory_stats *ms = mprof_join_memory_at(j, k, m);
      put(key("%s.memory.%zu", kk, m),
          "%u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %.17g",
          ms->offset, ms->flags, ms->access_size, ms->warp_accesses,
          ms->thread_accesses, ms->bytes, ms->sectors, ms->efficiency);
    }
  }
}

static void diagnosis_values(const char *name, const opened *o) {
  const mprof_diagnosis *d = o->diagnosis;
  size_t count;
  const mprof_device_record *devices =
      mprof_trace_devices(mprof_join_trace(o->join), &count);
  for (size_t n = 0; n < mprof_diagnosis_note_count(d); n++) {
    const mprof_note *note = mprof_diagnosis_note(d, n);
    put(key("%s.note.%zu", name, n), "%s: %s", note->key, note->text);
  }
  for (size_t k = 0; k < mprof_diagnosis_kernel_count(d); k++) {
    const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(d, k);
    char kk[64];
    snprintf(kk, sizeof kk, "%s.diagnosis.%zu", name, k);
    put(kk, "%zu %s", kd->kernel, kd->verdict);
    put(key("%s.verdict", kk), "%u %u %s", kd->verdict_dimension,
        kd->verdict_state, kd->roof ? kd->roof : "-");
    put(key("%s.shares", kk), "%.17g %.17g %.17g %.17g", kd->other_share,
        kd->issue_active, kd->weighted_occupancy, kd->weighted_tail);
    put(key("%s.flags", kk), "%u %u", kd->tensor_core, kd->library);
    for (size_t i = 0; i < kd->dimension_count; i++) {
      const mprof_dimension *dim = mprof_kernel_diagnosis_dimension(kd, i);
      char dk[96];
      snprintf(dk, sizeof dk, "%s.dimension.%zu", kk, i);
      put(dk, "%u %u %.17g %s", dim->id, dim->state, dim->cost, dim->detail);
      for (size_t m = 0; m < dim->metric_count; m++) {
        const mprof_metric *metric = mprof_dimension_metric(dim, m);
        put(key("%s.metric.%zu", dk, m), "%s %.17g %s", metric->name,
            metric->value, metric->unit);
      }
      if (i == 1)
        stride_check(mprof_kernel_diagnosis_dimension(kd, 0), dim, sizeof *dim,
                     "mprof_kernel_diagnosis_dimension");
      if (dim->metric_count > 1)
        stride_check(mprof_dimension_metric(dim, 0),
                     mprof_dimension_metric(dim, 1), sizeof(mprof_metric),
                     "mprof_dimension_metric");
    }
    for (size_t s = 0; s < kd->stall_count; s++) {
      const mprof_reason_share *rs = mprof_kernel_diagnosis_stall(kd, s);
      put(key("%s.stall.%zu", kk, s), "%s %u %" PRIu64 " %.17g", rs->reason,
          rs->dimension, rs->samples, rs->share);
    }
    for (size_t h = 0; h < kd->hot_count; h++) {
      const mprof_hot_instruction *hot = mprof_kernel_diagnosis_hot(kd, h);
      char hk[96];
      snprintf(hk, sizeof hk, "%s.hot.%zu", kk, h);
      put(hk, "%u %" PRIu64 " %.17g %s %s:%u", hot->offset, hot->samples,
          hot->share, hot->sass, hot->file, hot->line);
      for (size_t r = 0; r < hot->reason_count; r++) {
        const mprof_reason_share *rs = mprof_hot_instruction_reason(hot, r);
        put(key("%s.reason.%zu", hk, r), "%s %.17g", rs->reason, rs->share);
      }
      if (h == 1)
        stride_check(mprof_kernel_diagnosis_hot(kd, 0), hot, sizeof *hot,
                     "mprof_kernel_diagnosis_hot");
    }
    /* The kernel's occupancy, its shapes', and the same computed into the
     * caller's memory. */
    put_occupancy(key("%s.occupancy", kk), kd->occupancy);
    const mprof_kernel_stats *ks = kd->stats;
    const mprof_device_record *device =
        ks->device < count ? &devices[ks->device] : NULL;
    for (size_t s = 0; s < kd->shape_count; s++) {
      const mprof_occupancy *so = mprof_kernel_diagnosis_shape(kd, s);
      put_occupancy(key("%s.shape.%zu", kk, s), so);
      BOX(mprof_occupancy) box;
      mprof_occupancy init = MPROF_OCCUPANCY_INIT;
      BOX_INIT(box, init);
      CHECK(CALL(mprof_occupancy_compute(
                &box.s, device, mprof_join_shape(o->join, k, s))) == 0);
      CANARY_OK(box);
      put_occupancy(key("%s.computed.%zu", kk, s), &box.s);
      CHECK(memcmp(&box.s, so, sizeof box.s) == 0);
    }
    for (size_t n = 0; n < kd->note_count; n++)
      put_s(key("%s.note.%zu", kk, n), kd->notes[n]);
    const mprof_kernel_throughput *t = kd->throughput;
    put(key("%s.throughput", kk),
        "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %.17g", t->samples,
        t->partial, t->interval_ns, t->covered_ns, t->shared);
    for (uint32_t c = 0; c < MPROF_COUNTER_COUNT_; c++)
      put_d(key("%s.throughput.%s", kk, mprof_counter_key(c)), t->value[c]);
  }
  /* A caller's occupancy of an unknown version is left alone. */
  BOX(mprof_occupancy) box;
  mprof_occupancy init = MPROF_OCCUPANCY_INIT;
  init.version = 99;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_occupancy_compute(&box.s, NULL, NULL)) == MPROF_EVERSION);
  CANARY_OK(box);
  CHECK(memcmp(&box.s, &init, sizeof init) == 0);
}

/* Reports written to memory: the same bytes from both libraries. */
static void reports(const char *name, const opened *o) {
  for (unsigned format = 0; format <= MPROF_REPORT_TEXT; format++) {
    mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
    ro.format = format;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(CALL(mprof_diagnosis_write(f, o->diagnosis,
                                     GUARDED(mprof_report_options, ro))) == 0);
    fclose(f);
    put_text(key("%s.summary.%u", name, format), text, size);
  }
}

static void export_values(const char *name, const opened *o) {
  const mprof_diagnosis *set[1] = {o->diagnosis};
  for (unsigned format = 0; format <= MPROF_EXPORT_SPEEDSCOPE; format++) {
    mprof_export_options eo = MPROF_EXPORT_OPTIONS_INIT;
    eo.format = format;
    BOX(mprof_export_report) box;
    mprof_export_report init = MPROF_EXPORT_REPORT_INIT;
    BOX_INIT(box, init);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(CALL(mprof_export_write(f, set, 1, GUARDED(mprof_export_options, eo),
                                  &box.s)) == 0);
    fclose(f);
    CANARY_OK(box);
    put_text(key("%s.export.%u", name, format), text, size);
    put(key("%s.export.%u.report", name, format), "%zu %zu %zu", box.s.events,
        box.s.profiles, box.s.frames);
  }
  BOX(mprof_export_report) box;
  mprof_export_report init = MPROF_EXPORT_REPORT_INIT;
  init.version = 99;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_export_write(stdout, set, 1, NULL, &box.s)) ==
        MPROF_EVERSION);
  CANARY_OK(box);
}

static void window_values(const char *name, const opened *o) {
  mprof_window *w;
  CHECK(CALL(mprof_window_build(&w, o->join, 0, UINT64_MAX)) == 0);
  const mprof_window_totals *t = mprof_window_totals_of(w);
  put(key("%s.window", name),
      "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
      t->kernels, t->launches, t->gpu_ns, t->copies, t->copy_bytes, t->copy_ns);
  for (size_t i = 0; i < mprof_window_kernel_count(w); i++) {
    const mprof_window_kernel *wk = mprof_window_kernel_at(w, i);
    put(key("%s.window.%zu", name, i), "%u %" PRIu64 " %" PRIu64, wk->kernel,
        wk->launches, wk->gpu_ns);
  }
  mprof_window_free(w);
}

static void throughput_values(const char *name, const opened *o) {
  mprof_throughput *t;
  CHECK(CALL(mprof_throughput_build(&t, o->join)) == 0);
  put_u(key("%s.pm.available", name), (uint64_t)mprof_throughput_available(t));
  for (size_t k = 0; k < mprof_join_kernel_count(o->join); k++) {
    const mprof_kernel_throughput *kt = mprof_throughput_kernel(t, k);
    for (uint32_t c = 0; c < MPROF_COUNTER_COUNT_; c++)
      put_d(key("%s.pm.%zu.%s", name, k, mprof_counter_key(c)), kt->value[c]);
  }
  mprof_throughput_free(t);
}

static void range_values(const char *name, const opened *o) {
  mprof_range_times *r;
  CHECK(CALL(mprof_range_times_build(&r, o->trace)) == 0);
  const mprof_range_totals *t = mprof_range_times_totals(r);
  put(key("%s.ranges", name),
      "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
      " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
      t->range_records, t->api_calls, t->launches, t->kernel_ns,
      t->in_ranges_launches, t->in_ranges_ns, t->outside_launches,
      t->outside_ns, t->unmatched_launches, t->unmatched_ns);
  for (size_t i = 0; i < mprof_range_times_count(r); i++) {
    const mprof_range_time *rt = mprof_range_times_get(r, i);
    put(key("%s.range.%zu", name, i),
        "%s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
        " %" PRIu64 " %.17g",
        rt->name, rt->domain, rt->instances, rt->host_ns, rt->launches,
        rt->kernel_ns, rt->copies, rt->copy_ns, rt->share);
  }
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = MPROF_REPORT_JSON;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  CHECK(CALL(mprof_range_times_write(f, r,
                                     GUARDED(mprof_report_options, ro))) == 0);
  fclose(f);
  put_text(key("%s.ranges.json", name), text, size);
  mprof_range_times_free(r);
}

static void diff_values(const opened *base, const opened *candidate) {
  mprof_diff *d;
  mprof_diff_options dop = MPROF_DIFF_OPTIONS_INIT;
  CHECK(CALL(mprof_diff_run(&d, base->diagnosis, candidate->diagnosis,
                            GUARDED(mprof_diff_options, dop))) == 0);
  for (size_t k = 0; k < mprof_diff_kernel_count(d); k++) {
    const mprof_kernel_change *c = mprof_diff_kernel(d, k);
    char kk[64];
    snprintf(kk, sizeof kk, "diff.%zu", k);
    put(kk, "%s %u %u %s", c->mangled, c->device_id, c->change, c->summary);
    put(key("%s.numbers", kk),
        "%.17g %.17g %.17g %" PRId64 " %.17g %.17g %.17g %.17g %.17g %d %d",
        c->base_mean_ns, c->candidate_mean_ns, c->mean_change,
        c->total_delta_ns, c->total_change, c->noise, c->t, c->dof, c->p_value,
        c->significant, c->stalls_compared);
    for (size_t s = 0; s < c->stall_change_count; s++) {
      const mprof_stall_change *sc = mprof_kernel_change_stall(c, s);
      put(key("%s.stall.%zu", kk, s), "%s %u %.17g %.17g", sc->reason,
          sc->dimension, sc->base_share, sc->candidate_share);
    }
    for (size_t i = 0; i < c->dimension_change_count; i++) {
      const mprof_dimension_change *dc = mprof_kernel_change_dimension(c, i);
      put(key("%s.dimension.%zu", kk, i), "%u %u %u %.17g %.17g", dc->dimension,
          dc->base_state, dc->candidate_state, dc->base_cost,
          dc->candidate_cost);
      if (i == 1)
        stride_check(mprof_kernel_change_dimension(c, 0), dc, sizeof *dc,
                     "mprof_kernel_change_dimension");
    }
    for (size_t h = 0; h < c->hot_change_count; h++) {
      const mprof_hot_change *hc = mprof_kernel_change_hot(c, h);
      put(key("%s.hot.%zu", kk, h), "%u %s %s:%u %.17g %.17g", hc->offset,
          hc->sass, hc->file, hc->line, hc->base_share, hc->candidate_share);
    }
  }
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.format = MPROF_REPORT_JSON;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  CHECK(CALL(mprof_diff_write(f, d, GUARDED(mprof_report_options, ro), 5.0)) ==
        0);
  fclose(f);
  put_text("diff.json", text, size);
  mprof_diff_free(d);
}

/* ---- SASS reports ---------------------------------------------------------
 */

static void put_sass_report(const char *k, const mprof_sass_report *r) {
  put(k, "%zu %zu %zu %zu %zu %zu %zu %" PRIu64, r->functions, r->with_sass,
      r->with_lines, r->no_cubin, r->no_disassembler, r->failed, r->attached,
      r->samples);
  if (r->version >= 2)
    put(key("%s.deferred", k), "%zu %zu", r->deferred, r->deferred_sampled);
}

static void sass_values(const opened *o) {
  for (unsigned v = 1; v <= MPROF_SASS_REPORT_VERSION; v++) {
    BOX(mprof_sass_report) box;
    mprof_sass_report init = MPROF_SASS_REPORT_INIT;
    init.version = v;
    BOX_INIT(box, init);
    CHECK(CALL(mprof_sass_report_count(&box.s, o->sidecar)) == 0);
    CANARY_OK(box);
    put_sass_report(key("sass.count.v%u", v), &box.s);
  }
  mprof_sass_options so = MPROF_SASS_OPTIONS_INIT;
  so.flags = MPROF_SASS_NO_DISASSEMBLY;
  BOX(mprof_sass_report) box;
  mprof_sass_report init = MPROF_SASS_REPORT_INIT;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_sass_build_sidecar(
            sample("gemm.mprof"), scratch("gemm.pc.json"),
            GUARDED(mprof_sass_options, so), &box.s)) == 0);
  CANARY_OK(box);
  put_sass_report("sass.build", &box.s);
  BOX_INIT(box, init);
  CHECK(CALL(mprof_sass_complete(o->sidecar, sample("gemm.mprof"), NULL,
                                 GUARDED(mprof_sass_options, so), &box.s)) ==
        0);
  CANARY_OK(box);
  put_sass_report("sass.complete", &box.s);
  BOX_INIT(box, init);
  int rc = CALL(mprof_sass_attach(o->sidecar, NULL, 0,
                                  GUARDED(mprof_sass_options, so), &box.s));
  CANARY_OK(box);
  put("sass.attach.rc", "%d", rc);
  put_sass_report("sass.attach", &box.s);
  init.version = 99;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_sass_report_count(&box.s, o->sidecar)) == MPROF_EVERSION);
  CANARY_OK(box);
  CHECK(memcmp(&box.s, &init, sizeof init) == 0);
  for (size_t i = 0; i < mprof_stall_reason_info_count(); i++) {
    const mprof_stall_reason_info *info = mprof_stall_reason_info_at(i);
    put(key("reason_info.%zu", i), "%s %u %u", info->short_name,
        info->dimension, info->family);
  }
}

/* ---- MKPROF ---------------------------------------------------------------
 */

static void mkprof_values(void) {
  mprof_mkprof *m;
  CHECK(CALL(mprof_mkprof_open(&m, sample("gemm_source.mkprof"))) == 0);
  BOX(mprof_mkprof_summary) box;
  mprof_mkprof_summary init = MPROF_MKPROF_SUMMARY_INIT;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_mkprof_summarize(m, &box.s)) == 0);
  CANARY_OK(box);
  put("mkprof.summary", "%zu %zu %zu %zu %zu %u %u", box.s.instructions,
      box.s.unit_activities, box.s.events, box.s.error_events,
      box.s.controller_events, box.s.min_time, box.s.max_time);
  init.version = 99;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_mkprof_summarize(m, &box.s)) == MPROF_EVERSION);
  CANARY_OK(box);
  mprof_mkprof_free(m);

  mprof_trace *t;
  CHECK(CALL(mprof_trace_open(&t, sample("gemm_source.mprof"), NULL)) == 0);
  mprof_mkprof_export_options eo = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  BOX(mprof_mkprof_export_report) rbox;
  mprof_mkprof_export_report rinit = MPROF_MKPROF_EXPORT_REPORT_INIT;
  BOX_INIT(rbox, rinit);
  CHECK(CALL(mprof_mkprof_export(t, scratch("out.mkprof"),
                                 GUARDED(mprof_mkprof_export_options, eo),
                                 &rbox.s)) == 0);
  CANARY_OK(rbox);
  put("mkprof.export", "%zu %zu %zu %zu %zu %zu %" PRIu64 " %" PRIu64,
      rbox.s.spans, rbox.s.processors, rbox.s.max_instructions,
      rbox.s.instructions, rbox.s.events, rbox.s.events_dropped, rbox.s.base_ns,
      rbox.s.extent_ns);
  mprof_trace_free(t);
}

/* ---- source spans: alignment and merge ------------------------------------
 */

#define KERNEL_MANGLED "_Z11sgemm_tilediiiPKfS0_Pf"
#define LAUNCHES 4
#define TRACE_START 5000000000ull

/* A trace with LAUNCHES launches of one kernel and the .source file of the
 * same run: one block span per launch, 2 µs after its CUPTI start, plus
 * 100 ns more per launch (an error for the alignment to measure). */
static void write_run(const char *trace_path, const char *source_path) {
  mprof_writer_options wo = MPROF_WRITER_OPTIONS_INIT;
  mprof_writer *w;
  CHECK(CALL(mprof_writer_open(&w, trace_path,
                               GUARDED(mprof_writer_options, wo))) == 0);
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.sm_count = 132;
  uint32_t d, s, k, sh;
  CHECK(mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev) == 0);
  mprof_stream_record st = {d, 1, 7, 0};
  CHECK(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st) == 0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, KERNEL_MANGLED);
  kr.function_index = MPROF_INDEX_NONE;
  kr.device = d;
  CHECK(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr) == 0);
  mprof_shape_record shape;
  memset(&shape, 0, sizeof shape);
  shape.kernel = k;
  shape.grid[0] = shape.grid[1] = shape.grid[2] = 1;
  shape.block[0] = 256;
  shape.block[1] = shape.block[2] = 1;
  CHECK(mprof_writer_intern(w, &sh, MPROF_SECTION_SHAPES, &shape) == 0);
  for (uint32_t i = 0; i < LAUNCHES; i++) {
    uint64_t start = TRACE_START + i * 1000000ull;
    mprof_launch_record l = {start, start + 300000, sh, s, i + 1, 0, 0};
    CHECK(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l) == 0);
  }
  /* The writer's account of its strings, into a struct it writes. */
  BOX(mprof_writer_string_stats) sbox;
  mprof_writer_string_stats sinit = MPROF_WRITER_STRING_STATS_INIT;
  BOX_INIT(sbox, sinit);
  CHECK(CALL(mprof_writer_get_string_stats(w, &sbox.s)) == 0);
  CANARY_OK(sbox);
  CHECK(sbox.s.version == MPROF_WRITER_STRING_STATS_VERSION);
  put_u("writer.strings", sbox.s.stored);
  put_u("writer.string_bytes", sbox.s.bytes);
  put_u("writer.strings_unique_cap", sbox.s.unique_cap);
  CHECK(mprof_writer_finish(w) == 0);

  /* The .source file, laid out as producers/source/README.md says. */
  static const char strings[24] = "\0load\0sgemm_tiled";
  mprof_source_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MPROF_SOURCE_FILE_MAGIC, 8);
  h.version_major = 1;
  h.header_size = 128;
  h.region_count = 1;
  h.kernel_count = 1;
  h.launch_count = LAUNCHES;
  h.record_size = 48;
  h.record_count = LAUNCHES;
  h.capacity = 1024;
  h.strings_size = sizeof strings;
  FILE *f = fopen(source_path, "wb");
  CHECK(f != NULL);
  fwrite(&h, sizeof h, 1, f);
  mprof_source_file_region region = {1, MPROF_ROLE_LOADER, 0, 0};
  fwrite(&region, sizeof region, 1, f);
  mprof_source_file_kernel kernel = {6, 0};
  fwrite(&kernel, sizeof kernel, 1, f);
  for (uint32_t i = 0; i < LAUNCHES; i++) {
    mprof_source_file_launch sl = {0, 0, {1, 1, 1}, {256, 1, 1}, 0};
    fwrite(&sl, sizeof sl, 1, f);
  }
  fwrite(strings, sizeof strings, 1, f);
  for (uint32_t i = 0; i < LAUNCHES; i++) {
    mprof_source_file_record r;
    memset(&r, 0, sizeof r);
    r.start = TRACE_START + i * 1000000ull + 2000 + i * 100;
    r.end = r.start + 1500;
    r.launch = i;
    r.warp = MPROF_INDEX_NONE;
    fwrite(&r, sizeof r, 1, f);
  }
  CHECK(fclose(f) == 0);
}

static void source_values(void) {
  int64_t reference[5] = {1000, 2000, 3000, 4000, 5000};
  int64_t measured[5] = {900, 1890, 2905, 3900, 4850};
  BOX(mprof_source_alignment) box;
  mprof_source_alignment init = MPROF_SOURCE_ALIGNMENT_INIT;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_source_align(&box.s, reference, measured, 5)) == 0);
  CANARY_OK(box);
  put("align", "%" PRId64 " %" PRIu64 " %" PRIu64 " %.17g %zu", box.s.offset_ns,
      box.s.error_max_ns, box.s.error_median_ns, box.s.drift_ppm,
      box.s.launches);
  init.version = 99;
  BOX_INIT(box, init);
  CHECK(CALL(mprof_source_align(&box.s, reference, measured, 5)) ==
        MPROF_EVERSION);
  CANARY_OK(box);
  CHECK(memcmp(&box.s, &init, sizeof init) == 0);

  char trace_path[1100], source_path[1100];
  snprintf(trace_path, sizeof trace_path, "%s", scratch("run.mprof"));
  snprintf(source_path, sizeof source_path, "%s", scratch("run.source"));
  write_run(trace_path, source_path);
  static const char *const meta[] = {"abi.test", "1"};
  mprof_source_merge_options mo = MPROF_SOURCE_MERGE_OPTIONS_INIT;
  mo.meta = meta;
  mo.meta_count = 1;
  BOX(mprof_source_merge_report) rbox;
  mprof_source_merge_report rinit = MPROF_SOURCE_MERGE_REPORT_INIT;
  BOX_INIT(rbox, rinit);
  CHECK(CALL(mprof_source_merge(
            trace_path, source_path, scratch("merged.mprof"),
            GUARDED(mprof_source_merge_options, mo), &rbox.s)) == 0);
  CANARY_OK(rbox);
  const mprof_source_merge_report *r = &rbox.s;
  put("merge", "%zu %zu %zu %zu %zu %zu %zu %zu %" PRIu64 " %u %s", r->launches,
      r->launches_with_spans, r->matched_by_order, r->matched_by_time,
      r->unmatched, r->spans, r->spans_outside_launch, r->regions, r->overflow,
      r->globaltimer_step_ns, r->method);
  put("merge.alignment",
      "%" PRId64 " %" PRIu64 " %" PRIu64 " %.17g %zu %" PRId64,
      r->alignment_offset_ns, r->alignment_error_max_ns,
      r->alignment_error_median_ns, r->alignment_drift_ppm,
      r->alignment_launches, r->anchor_offset_ns);
  /* A trace from the .source file alone, with build options read. */
  mprof_source_build_options bo = MPROF_SOURCE_BUILD_OPTIONS_INIT;
  bo.meta = meta;
  bo.meta_count = 1;
  CHECK(CALL(mprof_source_build_trace(
            source_path, scratch("built.mprof"),
            GUARDED(mprof_source_build_options, bo))) == 0);
  mprof_trace *built;
  CHECK(CALL(mprof_trace_open(&built, scratch("built.mprof"), NULL)) == 0);
  size_t launches;
  mprof_trace_launches(built, &launches);
  put("built", "%zu launches, abi.test=%s", launches,
      mprof_trace_meta(built, "abi.test"));
  mprof_trace_free(built);
  rinit.version = 99;
  BOX_INIT(rbox, rinit);
  CHECK(CALL(mprof_source_merge(trace_path, source_path,
                                scratch("merged2.mprof"), NULL, &rbox.s)) ==
        MPROF_EVERSION);
  CANARY_OK(rbox);
}

int main(int argc, char **argv) {
  if (argc != 4 ||
      (strcmp(argv[1], "normal") != 0 && strcmp(argv[1], "grown") != 0)) {
    fprintf(stderr, "usage: abi_caller normal|grown SAMPLES_DIR WORK_DIR\n");
    return 2;
  }
  grown = strcmp(argv[1], "grown") == 0;
  snprintf(samples, sizeof samples, "%s", argv[2]);
  snprintf(work, sizeof work, "%s", argv[3]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);

  options_init();
  opened gemm, gemm_pm, nvtx, pm;
  open_sample(&gemm, "gemm.mprof");
  open_sample(&gemm_pm, "gemm_pm.mprof");
  open_sample(&nvtx, "nvtx_step.mprof");
  open_sample(&pm, "bottlenecks.pm.mprof");
  join_values("gemm", &gemm);
  diagnosis_values("gemm", &gemm);
  diagnosis_values("pm", &pm);
  reports("gemm", &gemm);
  export_values("gemm", &gemm);
  window_values("gemm", &gemm);
  throughput_values("pm", &pm);
  range_values("nvtx", &nvtx);
  diff_values(&gemm, &gemm_pm);
  sass_values(&gemm);
  close_sample(&gemm);
  close_sample(&gemm_pm);
  close_sample(&nvtx);
  close_sample(&pm);
  mkprof_values();
  source_values();
  fprintf(stderr,
          "abi_caller: %s: every canary intact, nothing read past a "
          "struct\n",
          argv[1]);
  return 0;
}
