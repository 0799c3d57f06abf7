/*
 * mprof — MKPROF1.2 into a trace: the import, and opening a .mprof or a
 * .mkprof alike so every command that reads traces reads MKPROF too.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "format/copy.h"
#include "format/processes.h"
#include "internal.h"
#include "mkprof_internal.h"
#include "mprof/mkprof.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

/* ---- MKPROF → trace ----------------------------------------------------- */

/* One GPU of the import: the time its instructions cover, and its launch. */
typedef struct import_gpu {
  uint64_t first, last; /* UINT64_MAX, 0 when it ran nothing */
  uint32_t launch;      /* LAUNCHES index, or MPROF_INDEX_NONE */
} import_gpu;

int mprof_mkprof_to_trace(const mprof_mkprof *m, const char *path) {
  if (!m || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_to_trace: NULL");
  const mprof_mkprof_layout *l = &m->layout;
  uint32_t gpus = l->num_gpus;
  import_gpu *gpu = (import_gpu *)malloc(gpus * sizeof *gpu);
  if (!gpu)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  for (uint32_t g = 0; g < gpus; g++)
    gpu[g] = (import_gpu){UINT64_MAX, 0, MPROF_INDEX_NONE};
  for (uint32_t p = 0; p < l->total_processors; p++)
    for (uint32_t i = 0; i < l->max_instructions; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid || ins.gpu >= gpus)
        continue;
      import_gpu *x = &gpu[ins.gpu];
      x->first = ins.start < x->first ? ins.start : x->first;
      x->last = ins.end > x->last ? ins.end : x->last;
      for (size_t u = 0; u < m->unit_count; u++) {
        uint32_t a, b;
        if (!mprof_mkprof_unit_activity(m, p, i, u, &a, &b))
          continue;
        x->first = a < x->first ? a : x->first;
        x->last = b > x->last ? b : x->last;
      }
    }
  mprof_writer *w = NULL;
  int rc = mprof_writer_open(&w, path, NULL);
  const char *const meta[][2] = {
      {"tool", "mprof mkprof import"},
      {"capture.mode", "mkprof"},
      {"clock", "mkprof (ns, relative)"},
      {"mkprof.source", m->name},
      {"mkprof.format_version", m->format_version},
      {"mkprof.config", m->config_text},
  };
  for (size_t i = 0; !rc && i < sizeof meta / sizeof meta[0]; i++)
    rc = mprof_writer_meta(w, meta[i][0], meta[i][1]);
  uint32_t kernel_name = rc ? 0 : mprof_writer_string(w, "megakernel (MKPROF)");
  /* one device, stream, kernel, shape and launch per GPU */
  for (uint32_t g = 0; g < gpus && !rc; g++) {
    char name[64];
    snprintf(name, sizeof name, "MKPROF GPU %u", g);
    mprof_device_record dev;
    memset(&dev, 0, sizeof dev);
    dev.id = g;
    dev.name = mprof_writer_string(w, name);
    dev.sm_count = l->sms_per_gpu;
    dev.warp_size = 32;
    uint32_t d, s, k, sh;
    rc = mprof_writer_append(w, &d, MPROF_SECTION_DEVICES, &dev);
    mprof_stream_record st = {d, 0, 0, mprof_writer_string(w, "mkprof")};
    rc = rc ? rc : mprof_writer_append(w, &s, MPROF_SECTION_STREAMS, &st);
    mprof_kernel_record kr;
    memset(&kr, 0, sizeof kr);
    kr.mangled_name = kernel_name;
    kr.function_index = MPROF_INDEX_NONE;
    kr.device = d;
    rc = rc ? rc : mprof_writer_append(w, &k, MPROF_SECTION_KERNELS, &kr);
    mprof_shape_record shape;
    memset(&shape, 0, sizeof shape);
    shape.kernel = k;
    shape.grid[0] = l->sms_per_gpu;
    shape.grid[1] = shape.grid[2] = 1;
    shape.block[0] = shape.block[1] = shape.block[2] = 1;
    rc = rc ? rc : mprof_writer_append(w, &sh, MPROF_SECTION_SHAPES, &shape);
    if (!rc && gpu[g].first != UINT64_MAX) {
      mprof_launch_record lr = {gpu[g].first, gpu[g].last, sh, s, 0, 0, 0};
      rc = mprof_writer_append(w, &gpu[g].launch, MPROF_SECTION_LAUNCHES, &lr);
    }
  }
  for (uint32_t p = 0; p < l->total_processors && !rc; p++)
    for (uint32_t i = 0; i < l->max_instructions && !rc; i++) {
      mprof_mkprof_instruction ins;
      mprof_mkprof_instruction_at(m, p, i, &ins);
      if (!ins.valid || ins.gpu >= gpus)
        continue;
      const mprof_mkprof_instruction_type *t =
          mprof_mkprof_find_type(m, ins.opcode);
      char fallback[32];
      snprintf(fallback, sizeof fallback, "opcode %d", ins.opcode);
      for (size_t u = 0; u < m->unit_count && !rc; u++) {
        uint32_t a, b;
        if (!mprof_mkprof_unit_activity(m, p, i, u, &a, &b))
          continue;
        mprof_region_record rg = {
            mprof_writer_string(w, t ? t->name : fallback), t ? t->color : 0,
            m->units[u].role, 0};
        uint32_t region;
        rc = mprof_writer_intern(w, &region, MPROF_SECTION_REGIONS, &rg);
        mprof_span_record sp = {a,      b, gpu[ins.gpu].launch,
                                ins.sm, i, MPROF_INDEX_NONE,
                                region, 0, (uint64_t)(uint32_t)ins.opcode};
        rc = rc ? rc : mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
      }
    }
  free(gpu);
  mprof_mkprof_summary sum = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(m, &sum);
  char text[32];
  snprintf(text, sizeof text, "%zu", sum.events);
  if (!rc)
    rc = mprof_writer_meta(w, "mkprof.events", text);
  snprintf(text, sizeof text, "%zu", sum.instructions);
  if (!rc)
    rc = mprof_writer_meta(w, "mkprof.instructions", text);
  /* One process that MKPROF says nothing about, owning every GPU. */
  if (!rc)
    rc = mprof__write_processes_from_meta(w, NULL, 0);
  if (rc) {
    mprof_writer_abort(w); /* NULL when it did not open */
    return rc;
  }
  rc = mprof_writer_finish(w);
  /* The file itself, for `mprof mkprof export` to give back whole. */
  if (!rc)
    rc = mprof__trace_put_section(path, MPROF_SECTION_MKPROF, m->data, m->size);
  return rc;
}

/* 1 when the file at @p path starts with the MKPROF magic. */
static int starts_like_mkprof(const char *path) {
  char head[MPROF_MKPROF_MAGIC_SIZE];
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return got >= 6 && memcmp(head, "MKPROF", 6) == 0;
}

/* Import @p m into a scratch trace and open that. */
static int import(mprof_trace **out, const mprof_mkprof *m, const char *path) {
  char scratch[4096];
  int rc = mprof__file_scratch_trace(scratch, sizeof scratch, "mkprof");
  if (!rc) {
    rc = mprof_mkprof_to_trace(m, scratch);
    if (!rc)
      rc = mprof_trace_open(out, scratch, NULL);
    /* The mapping stays valid once the name is gone. */
    unlink(scratch);
  }
  if (rc) {
    mprof__error_prefix("%s", path);
    return rc;
  }
  rc = mprof__trace_set_path(*out, path);
  if (rc) {
    mprof_trace_free(*out);
    *out = NULL;
  }
  return rc;
}

int mprof_mkprof_open_trace(mprof_trace **out, const char *path,
                            mprof_mkprof **mkprof) {
  if (mkprof)
    *mkprof = NULL;
  if (!out || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_open_trace: NULL");
  *out = NULL;
  if (!starts_like_mkprof(path))
    return mprof_trace_open(out, path, NULL);
  mprof_mkprof *m = NULL;
  int rc = mprof_mkprof_open(&m, path);
  if (!rc)
    rc = import(out, m, path);
  if (!rc && mkprof)
    *mkprof = m;
  else
    mprof_mkprof_free(m);
  return rc;
}
