/*
 * mprof-render — the model every view draws from: a trace, its PC sidecar,
 * and what is derived from them once at open.
 *
 * Kernels, their launch statistics, samples and stall reasons are
 * libmprof's join (mprof/join.h) and their verdicts its diagnosis
 * (mprof/diagnose.h), the ones `mprof summary` prints, built once at open:
 * kernel i of the model is kernel i of the join. The model adds only what
 * drawing needs: display names, colours, instructions by offset with their
 * opcode category and Raster family samples. Drawing uses the trace's
 * per-stream arrays directly.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render_internal.h"
#include "mprof/synth.h"

/* Kernel colours by rank: distinct, readable under white text. */
static const uint32_t kernel_palette[] = {
    0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948,
    0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d, 0x499894, 0xd37295};
#define PALETTE_SIZE (sizeof kernel_palette / sizeof kernel_palette[0])

/* ---- kernels: libmprof's join, with what the views add ------------------
 */

/* The stall reasons of the join, index for index, with their Raster family
 * (mprof/reasons.h) and a colour: the family's hue, shaded by rank inside
 * the family; a not-issued twin lighter. */
static int build_reasons(mprof_render_model *m) {
  size_t n = mprof_join_reason_count(m->join);
  m->reasons = (mprof_render_reason *)calloc(n ? n : 1, sizeof *m->reasons);
  if (!m->reasons)
    return mprof_render__oom();
  int seen[MPROF_FAM_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    const mprof_stall_reason *sr = mprof_join_reason(m->join, i);
    mprof_render_reason *r = &m->reasons[i];
    r->name = sr->name;
    r->not_issued = sr->not_issued;
    r->family = mprof_stall_reason_family(sr->name);
    if (r->family >= MPROF_FAM_COUNT)
      r->family = MPROF_FAM_SCHEDULING;
    uint32_t base = mprof_render_family_color((int)r->family);
    if (r->not_issued) {
      r->color = rd_lighten(base, 0.6);
      continue;
    }
    int k = seen[r->family]++;
    r->color = k % 2 ? rd_lighten(base, 0.25 * ((k + 1) / 2))
                     : rd_darken(base, 0.18 * (k / 2));
  }
  m->reason_count = n;
  return 0;
}

/* Add the samples of the plain reasons of @p list to their Raster families
 * (a reason outside the table counts for none). */
static void add_families(const mprof_render_model *m,
                         const mprof_reason_samples *list, size_t n,
                         uint64_t *family) {
  for (size_t r = 0; r < n; r++) {
    if (list[r].reason >= m->reason_count)
      continue;
    const mprof_render_reason *reason = &m->reasons[list[r].reason];
    if (!reason->not_issued && reason->family < MPROF_FAM_COUNT)
      family[reason->family] += list[r].samples;
  }
}

/* Sort context for the instructions by offset (qsort has no user pointer in
 * C11). */
static _Thread_local const mprof_render_pc *sort_pcs;

static int by_offset(const void *a, const void *b) {
  const mprof_render_pc *x = &sort_pcs[*(const uint32_t *)a];
  const mprof_render_pc *y = &sort_pcs[*(const uint32_t *)b];
  RS_ORDER_BY(offset);
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The instructions of kernel @p index: the join's (most samples first), by
 * offset for Flame and Raster, with their category and the samples of each
 * Raster family; @p hot maps the join's order onto them. */
static int build_pcs(mprof_render_model *m, size_t index,
                     mprof_render_kernel *k, mprof_render_pc *pcs,
                     uint32_t *hot) {
  size_t n;
  const mprof_pc_stats *ps = mprof_join_pcs(m->join, index, &n);
  mprof_render_pc *scratch =
      (mprof_render_pc *)calloc(n ? n : 1, sizeof *scratch);
  uint32_t *order = (uint32_t *)malloc((n ? n : 1) * sizeof *order);
  if (!scratch || !order) {
    free(scratch);
    free(order);
    return mprof_render__oom();
  }
  for (size_t i = 0; i < n; i++) {
    mprof_render_pc *pc = &scratch[i];
    pc->stats = &ps[i];
    pc->offset = ps[i].offset;
    pc->samples = ps[i].samples;
    pc->insn = ps[i].instruction;
    pc->category = (uint32_t)mprof_render_opcode_category(
        pc->insn ? pc->insn->opcode : NULL);
    add_families(m, ps[i].reasons, ps[i].reason_count, pc->family);
    order[i] = (uint32_t)i;
  }
  sort_pcs = scratch;
  if (n)
    qsort(order, n, sizeof *order, by_offset);
  for (size_t i = 0; i < n; i++) {
    pcs[i] = scratch[order[i]];
    hot[order[i]] = (uint32_t)i;
  }
  free(scratch);
  free(order);
  k->pcs = pcs;
  k->pc_count = n;
  k->hot = hot;
  return 0;
}

/* The display name: the trace's demangled name (the join's), else
 * demangled here, else the mangled one. */
static const char *display_name(mprof_render_model *m,
                                const mprof_kernel_stats *s, size_t index) {
  if (s->name != s->mangled && strcmp(s->name, s->mangled) != 0)
    return s->name;
  char *demangled = NULL;
  if (mprof_sass_demangle(&demangled, s->mangled) == 0 && demangled) {
    m->owned_names[index] = demangled;
    return demangled;
  }
  mprof_error_clear();
  return s->mangled;
}

/* Kernels are the join's, index for index (by total time: 0 is the
 * dominant kernel), each with its diagnosis, display name, colour, main
 * shape and instructions. */
static int build_kernels(mprof_render_model *m) {
  size_t count = mprof_join_kernel_count(m->join);
  size_t pcs = 0;
  for (size_t i = 0; i < count; i++)
    pcs += mprof_join_kernel(m->join, i)->pc_count;
  m->kernels =
      (mprof_render_kernel *)calloc(count ? count : 1, sizeof *m->kernels);
  m->owned_names = (char **)calloc(count ? count : 1, sizeof(char *));
  m->name_first = (uint32_t *)calloc(count ? count : 1, sizeof(uint32_t));
  m->pc_storage =
      (mprof_render_pc *)calloc(pcs ? pcs : 1, sizeof *m->pc_storage);
  m->hot_storage = (uint32_t *)calloc(pcs ? pcs : 1, sizeof(uint32_t));
  if (!m->kernels || !m->owned_names || !m->name_first || !m->pc_storage ||
      !m->hot_storage)
    return mprof_render__oom();
  m->kernel_count = count;
  size_t names = 0, at = 0; /* distinct names so far: the palette index */
  for (size_t i = 0; i < count; i++) {
    mprof_render_kernel *k = &m->kernels[i];
    const mprof_kernel_stats *s = mprof_join_kernel(m->join, i);
    k->stats = s;
    k->diagnosis = mprof_diagnosis_kernel(m->diagnosis, i);
    k->name = display_name(m, s, i);
    k->short_names = mprof_join_kernel_names(m->join);
    k->short_name = mprof_join_kernel_short(m->join, i);
    k->index = i;
    size_t shapes;
    k->shape = mprof_join_shapes(m->join, i, &shapes);
    if (!shapes)
      k->shape = NULL;
    /* The same kernel on another GPU keeps its colour. */
    size_t first = i;
    for (size_t j = 0; j < i && first == i; j++)
      if (strcmp(m->kernels[j].stats->mangled, s->mangled) == 0)
        first = j;
    m->name_first[i] = (uint32_t)first;
    k->color = first < i ? m->kernels[first].color
                         : kernel_palette[names++ % PALETTE_SIZE];
    if (build_pcs(m, i, k, m->pc_storage + at, m->hot_storage + at))
      return -1;
    at += k->pc_count;
    size_t reasons;
    const mprof_reason_samples *rs =
        mprof_join_kernel_reasons(m->join, i, &reasons);
    add_families(m, rs, reasons, k->family);
  }
  return 0;
}

/* Who is told how an open goes (mprof_render_model_open_progress), on the
 * thread that opens. */
static _Thread_local mprof_render_progress progress_fn;
static _Thread_local void *progress_user;

/* Step @p what begins, @p done of the way in: -1 when the caller asked to
 * stop. */
static int step(double done, const char *what) {
  if (progress_fn && progress_fn(progress_user, done, what))
    return mprof_render__fail("cancelled");
  return 0;
}

/* The join and the diagnosis (what `mprof summary` prints), once. */
static int build(mprof_render_model *m) {
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.sidecar = m->sidecar;
  if (step(0.45, "Joining launches to kernels"))
    return -1;
  if (mprof_join_build(&m->join, m->trace, &jo))
    return mprof_render__fail("%s", mprof_error_last());
  if (step(0.85, "Diagnosing the kernels"))
    return -1;
  mprof_diagnose_options dop = MPROF_DIAGNOSE_OPTIONS_INIT;
  dop.sidecar_problem = m->sidecar_problem;
  if (mprof_diagnose(&m->diagnosis, m->join, &dop))
    return mprof_render__fail("%s", mprof_error_last());
  if (step(0.9, "Laying out the timeline"))
    return -1;
  if (build_reasons(m) || build_kernels(m))
    return -1;
  return mprof_render__build_rows(m);
}

/* A scratch file in $TMPDIR (or /tmp) named after @p what; the caller
 * unlinks it. 0 with the name in @p path. */
static int scratch_file(char *path, size_t size, const char *what,
                        const char *suffix) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  snprintf(path, size, "%s/mprof-%s-XXXXXX%s", dir, what, suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0)
    return mprof_render__fail("%s: cannot create a scratch file: %s", path,
                              strerror(errno));
  close(fd);
  return 0;
}

/* A trace imported from MKPROF names its source: load it too, when it is
 * still there, for the decoded instruction params in tooltips. */
static void attach_mkprof(mprof_render_model *m, const char *trace_path) {
  const char *mode = mprof_trace_meta(m->trace, "capture.mode");
  const char *source = mprof_trace_meta(m->trace, "mkprof.source");
  if (m->mkprof || !mode || strcmp(mode, "mkprof") != 0)
    return;
  size_t size;
  const void *bytes =
      mprof_trace_section(m->trace, MPROF_SECTION_MKPROF, &size);
  if (bytes && size) {
    if (mprof_mkprof_parse(&m->mkprof, bytes, size, trace_path)) {
      m->mkprof = NULL;
      mprof_error_clear();
    }
    return;
  }
  if (!source || !*source) /* imported before traces kept the file */
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s", source);
  if (source[0] != '/' && access(path, R_OK) != 0) {
    const char *slash = strrchr(trace_path, '/');
    if (slash)
      snprintf(path, sizeof path, "%.*s/%s", (int)(slash - trace_path),
               trace_path, source);
  }
  if (access(path, R_OK) != 0 || mprof_mkprof_open(&m->mkprof, path)) {
    m->mkprof = NULL;
    mprof_error_clear();
  }
}

static int model_open(mprof_render_model **out, const char *trace_path,
                      const char *sidecar_path, int demo);
static int model_finish(mprof_render_model **out, mprof_render_model *m,
                        const char *trace_path, const char *sidecar_path);

int mprof_render_model_open(mprof_render_model **out, const char *trace_path,
                            const char *sidecar_path) {
  return model_open(out, trace_path, sidecar_path, 0);
}

int mprof_render_model_open_set(mprof_render_model **out,
                                const char *const *paths, size_t count,
                                const char *name, const char *sidecar_path) {
  if (!out || !paths || !count)
    return mprof_render__fail("mprof_render_model_open_set: no traces");
  if (count == 1)
    return model_open(out, paths[0], sidecar_path, 0);
  *out = NULL;
  if (step(0, "Reading the traces"))
    return -1;
  mprof_trace **traces = (mprof_trace **)calloc(count, sizeof *traces);
  mprof_render_model *m = (mprof_render_model *)calloc(1, sizeof *m);
  int rc = traces && m ? 0 : -1;
  if (rc)
    mprof_render__oom();
  for (size_t i = 0; !rc && i < count; i++)
    if (mprof_mkprof_open_trace(&traces[i], paths[i], NULL))
      rc =
          mprof_render__fail("%s; leave it out of the set", mprof_error_last());
  char fallback[512];
  if (!name) {
    snprintf(fallback, sizeof fallback, "%s + %zu more", paths[0], count - 1);
    name = fallback;
  }
  if (!rc && mprof_trace_open_merged(
                 &m->trace, (const mprof_trace *const *)traces, count, name))
    rc = mprof_render__fail("%s", mprof_error_last());
  for (size_t i = 0; traces && i < count; i++)
    mprof_trace_free(traces[i]);
  free(traces);
  if (rc) {
    free(m);
    return -1;
  }
  return model_finish(out, m, name, sidecar_path);
}

int mprof_render_model_open_progress(mprof_render_model **out,
                                     const char *const *paths, size_t count,
                                     const char *name, const char *sidecar_path,
                                     mprof_render_progress progress,
                                     void *user) {
  progress_fn = progress;
  progress_user = user;
  int rc = mprof_render_model_open_set(out, paths, count, name, sidecar_path);
  /* A set's Ranks tab: its report is built here, on the opening thread,
   * rather than when the tab is first drawn. */
  if (!rc && mprof_trace_member_count((*out)->trace) >= 2) {
    if (step(0.95, "Comparing the ranks")) {
      mprof_render_model_free(*out);
      *out = NULL;
      rc = -1;
    } else {
      mprof_render__ranks(*out);
    }
  }
  if (!rc && step(1.0, "Done")) {
    mprof_render_model_free(*out);
    *out = NULL;
    rc = -1;
  }
  progress_fn = NULL;
  progress_user = NULL;
  return rc;
}

int mprof_render_model_open_demo(mprof_render_model **out) {
  if (!out)
    return mprof_render__fail("mprof_render_model_open_demo: NULL argument");
  *out = NULL;
  char trace[4096], sidecar[4200];
  if (scratch_file(trace, sizeof trace, "demo-activity", ".mprof"))
    return -1;
  snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace);
  /* 8 SMs, two blocks at a time each, 4 warps per block, phases with
   * instructions inside: an SM / block / warp hierarchy small enough to
   * read row by row. */
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.seed = 7;
  opts.launches = 3;
  opts.kernels = 1;
  opts.streams = 1;
  opts.spans = 20000;
  opts.span_warps = 4;
  opts.span_sms = 8;
  opts.span_imbalance = 0.3;
  opts.span_nested = 1;
  int rc = mprof_synth_write(trace, &opts);
  if (!rc)
    rc = mprof_synth_write_sidecar(trace, sidecar);
  if (rc) {
    mprof_render__fail("the demo: %s", mprof_error_last());
    unlink(trace);
    unlink(sidecar);
    return -1;
  }
  rc = model_open(out, trace, sidecar, 1);
  unlink(trace);
  unlink(sidecar);
  return rc;
}

static int model_open(mprof_render_model **out, const char *trace_path,
                      const char *sidecar_path, int demo) {
  if (!out || !trace_path)
    return mprof_render__fail("mprof_render_model_open: NULL argument");
  *out = NULL;
  mprof_render_model *m = (mprof_render_model *)calloc(1, sizeof *m);
  if (!m)
    return mprof_render__oom();
  m->demo = demo;
  if (step(0, "Reading the trace")) {
    free(m);
    return -1;
  }
  /* A .mprof, or a .mkprof imported as `mprof summary` imports it (kept,
   * for its instruction params, in m->mkprof). */
  if (mprof_mkprof_open_trace(&m->trace, trace_path, &m->mkprof)) {
    mprof_mkprof_free(m->mkprof);
    free(m);
    return mprof_render__fail("%s", mprof_error_last());
  }
  attach_mkprof(m, trace_path);
  return model_finish(out, m, trace_path, sidecar_path);
}

/* The rest of opening, once m->trace is open: sidecar, join, spans. */
static int model_finish(mprof_render_model **out, mprof_render_model *m,
                        const char *trace_path, const char *sidecar_path) {
  char default_sidecar[4096];
  int named_sidecar = sidecar_path != NULL;
  if (!sidecar_path) {
    if (mprof_sidecar_path_of(m->trace, default_sidecar,
                              sizeof default_sidecar))
      snprintf(default_sidecar, sizeof default_sidecar, "%s.pc.json",
               trace_path);
    sidecar_path = default_sidecar;
  }
  size_t pc_records;
  mprof_trace_pc_samples(m->trace, &pc_records);
  if (named_sidecar || access(sidecar_path, F_OK) == 0) {
    if (step(0.4, "Reading the sidecar")) {
      mprof_render_model_free(m);
      return -1;
    }
    /* A sidecar named with --sidecar that is damaged or missing is
     * refused with the one line `summary`, `diff` and `export` print, so
     * the window shows what the terminal would. */
    /* The SASS that `record` left for the first reader, saved back: from
     * the code of the trace whose sidecar it is (in a set, the first). */
    char owner[4096];
    const char *first = mprof_trace_process_meta(m->trace, 0, "path");
    snprintf(owner, sizeof owner, "%s", first && *first ? first : trace_path);
    size_t n = strlen(sidecar_path);
    if (!named_sidecar && n > 8)
      snprintf(owner, sizeof owner, "%.*s", (int)(n - 8), sidecar_path);
    int rc = mprof_sidecar_load(&m->sidecar, sidecar_path);
    if (rc && rc != MPROF_ENOMEM && !named_sidecar) {
      /* The trace's own sidecar, damaged: the trace opens without it, as
       * `summary` reads it, and says why (the Summary's note, the status
       * line). */
      snprintf(m->sidecar_problem, sizeof m->sidecar_problem, "%s",
               mprof_error_last());
      snprintf(m->note, sizeof m->note,
               "sidecar left out, the trace read without it: %s",
               m->sidecar_problem);
      mprof_error_clear();
      m->sidecar = NULL;
    } else if (rc || mprof_sass_complete(m->sidecar, owner, sidecar_path, NULL,
                                         NULL)) {
      char message[1024];
      snprintf(message, sizeof message, "%s", mprof_error_last());
      mprof_render_model_free(m); /* frees the sidecar too */
      return mprof_render__fail("%s", message);
    }
  } else if (pc_records) {
    snprintf(m->note, sizeof m->note,
             "no SASS or source lines: %s is missing ('mprof sass TRACE' "
             "writes it)",
             sidecar_path);
  }
  uint64_t start, end;
  mprof_trace_time_bounds(m->trace, &start, &end);
  m->start_ns = rs_clamp_ns(start);
  m->end_ns = rs_clamp_ns(end);
  /* The producer takes its clock anchor as the process starts. */
  const char *anchor = mprof_trace_meta(m->trace, "clock.anchor.trace_ns");
  if (anchor && *anchor) {
    char *stop;
    unsigned long long t = strtoull(anchor, &stop, 10);
    if (!*stop && t > 0 && t <= (unsigned long long)RS_TIME_MAX)
      m->process_start_ns = (int64_t)t;
  }
  if (build(m) || mprof_render__build_spans(m) ||
      mprof_render__build_nesting(m) || mprof_render__init_source(m)) {
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", trace_path,
             mprof_render_error());
    mprof_render_model_free(m);
    return mprof_render__fail("%s", message);
  }
  *out = m;
  return 0;
}

void mprof_render_model_free(mprof_render_model *m) {
  if (!m)
    return;
  mprof_render__free_source(m);
  mprof_diagnosis_free(m->diagnosis);
  mprof_join_free(m->join);
  for (size_t i = 0; m->owned_names && i < m->kernel_count; i++)
    free(m->owned_names[i]);
  free(m->owned_names);
  free(m->name_first);
  free(m->reasons);
  for (size_t i = 0; m->row_labels && i < m->row_count; i++)
    free(m->row_labels[i]);
  free(m->row_labels);
  free(m->rows);
  free(m->memop_first);
  free(m->memop_order);
  free(m->memop_longest);
  free(m->range_order);
  free(m->pm_order);
  free(m->pm_first);
  free(m->range_end);
  free(m->api_end);
  free(m->pm_end);
  free(m->pm_bucket_first);
  free(m->pm_bucket_start);
  free(m->pm_bucket_end);
  free(m->pm_bucket_max);
  free(m->api_order);
  free(m->api_by_corr);
  free(m->api_corr);
  free(m->launch_by_corr);
  free(m->launch_corr);
  free(m->api_row);
  free(m->stream_row);
  free(m->pc_storage);
  free(m->hot_storage);
  free(m->kernels);
  mprof_render__free_activity(m);
  mprof_render__free_ranks(m);
  mprof_render__free_spans(m);
  mprof_sidecar_free(m->sidecar);
  mprof_trace_free(m->trace);
  free(m);
}

/* ---- accessors ---------------------------------------------------------
 */

const mprof_trace *mprof_render_model_trace(const mprof_render_model *m) {
  return m ? m->trace : NULL;
}

const mprof_join *mprof_render_model_join(const mprof_render_model *m) {
  return m ? m->join : NULL;
}

const mprof_diagnosis *
mprof_render_model_diagnosis(const mprof_render_model *m) {
  return m ? m->diagnosis : NULL;
}

const char *mprof_render_model_note(const mprof_render_model *m) {
  return m ? m->note : "";
}

void mprof_render_model_bounds(const mprof_render_model *m, int64_t *start,
                               int64_t *end) {
  *start = m ? m->start_ns : 0;
  *end = m ? m->end_ns : 0;
}

int64_t mprof_render_model_process_start(const mprof_render_model *m) {
  return m ? m->process_start_ns : 0;
}

size_t mprof_render_kernel_count(const mprof_render_model *m) {
  return m ? m->kernel_count : 0;
}

const mprof_render_kernel *mprof_render_kernel_at(const mprof_render_model *m,
                                                  size_t index) {
  return m && index < m->kernel_count ? &m->kernels[index] : NULL;
}

const mprof_render_kernel *rs_kernel(const mprof_render_model *m, int kernel) {
  return kernel >= 0 ? mprof_render_kernel_at(m, (size_t)kernel) : NULL;
}

int mprof_render_launch_kernel(const mprof_render_model *m, size_t launch) {
  uint32_t k = mprof_join_launch_kernel(m->join, launch);
  return k == MPROF_INDEX_NONE ? -1 : (int)k;
}

int mprof_render_kernel_find(const mprof_render_model *m, const char *name) {
  if (!m || !name || !*name)
    return -1;
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strcmp(m->kernels[i].stats->mangled, name) == 0 ||
        strcmp(m->kernels[i].name, name) == 0)
      return (int)i;
  char buf[1024];
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strcmp(m->kernels[i].short_name, name) == 0 ||
        strcmp(mprof_render_short_name(buf, sizeof buf, m->kernels[i].name),
               name) == 0)
      return (int)i;
  /* "gemm_tiled" finds "gemm_tiled<64, 64, 8>(...)". */
  for (size_t i = 0; i < m->kernel_count; i++) {
    mprof_render_short_name(buf, sizeof buf, m->kernels[i].name);
    size_t n = strlen(name);
    if (strncmp(buf, name, n) == 0 && (buf[n] == '<' || buf[n] == '\0'))
      return (int)i;
  }
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strstr(m->kernels[i].name, name) ||
        strstr(m->kernels[i].stats->mangled, name))
      return (int)i;
  return -1;
}

size_t mprof_render_reason_count(const mprof_render_model *m) {
  return m ? m->reason_count : 0;
}

const mprof_render_reason *mprof_render_reason_at(const mprof_render_model *m,
                                                  size_t index) {
  return m && index < m->reason_count ? &m->reasons[index] : NULL;
}

uint64_t mprof_render__reason_samples(const mprof_reason_samples *list,
                                      size_t n, size_t reason) {
  for (size_t r = 0; r < n; r++)
    if (list[r].reason == reason)
      return list[r].samples;
  return 0;
}

size_t mprof_render__top_reasons(const mprof_render_model *m,
                                 const mprof_reason_samples *list, size_t n,
                                 size_t *idx, uint64_t *values, size_t max) {
  size_t got = 0;
  for (size_t r = 0; r < n && got < max; r++) {
    if (list[r].reason >= m->reason_count ||
        m->reasons[list[r].reason].not_issued || !list[r].samples)
      continue;
    idx[got] = list[r].reason;
    values[got++] = list[r].samples;
  }
  return got;
}

void mprof_render__pc_reasons(const mprof_render_model *m,
                              const mprof_render_pc *pc, size_t max, char *buf,
                              size_t size) {
  size_t idx[8];
  uint64_t val[8];
  size_t n =
      mprof_render__top_reasons(m, pc->stats->reasons, pc->stats->reason_count,
                                idx, val, max < 8 ? max : 8);
  buf[0] = '\0';
  for (size_t r = 0; r < n; r++) {
    char part[128], pct[16];
    mprof_format_percent(pct, sizeof pct,
                         (double)val[r] /
                             (double)(pc->samples ? pc->samples : 1));
    snprintf(part, sizeof part, "%s%s %s", r ? ", " : "",
             m->reasons[idx[r]].name, pct);
    strncat(buf, part, size - strlen(buf) - 1);
  }
}

size_t mprof_render_row_count(const mprof_render_model *m) {
  return m ? m->row_count : 0;
}

const mprof_render_row *mprof_render_row_at(const mprof_render_model *m,
                                            size_t index) {
  return m && index < m->row_count ? &m->rows[index] : NULL;
}
