/*
 * A trace from a .source file alone: the block producer's runs, which
 * cannot carry the CUPTI producer in the same process, become a trace whose
 * launches are measured by their own blocks.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "format/processes.h"
#include "internal.h"
#include "mprof/source.h"
#include "mprof/version.h"
#include "mprof/writer.h"
#include "source_internal.h"

typedef struct launch_extent {
  uint64_t start, end; /* UINT64_MAX, 0 when the launch has no spans */
} launch_extent;

static int meta_u64(mprof_writer *w, const char *key, uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%" PRIu64, value);
  return mprof_writer_meta(w, key, text);
}

/* DEVICES index of ordinal @p id: the options' records, or one made up on
 * first use. */
static int device_index(mprof_writer *w, const mprof_source_build_options *o,
                        uint32_t id, uint32_t sm_count, uint32_t *out) {
  mprof_device_record d;
  memset(&d, 0, sizeof d);
  const char *name = "";
  for (size_t i = 0; o && i < o->device_count; i++)
    if (o->devices[i].id == id) {
      d = o->devices[i];
      name = o->device_names && o->device_names[i] ? o->device_names[i] : "";
      break;
    }
  d.id = id;
  if (!d.sm_count)
    d.sm_count = sm_count;
  d.name = mprof_writer_string(w, name);
  return mprof_writer_intern(w, out, MPROF_SECTION_DEVICES, &d);
}

/* (.source kernel, device ordinal) -> KERNELS index, as interned. */
typedef struct kernel_pair {
  uint32_t source_kernel, device_id, trace_kernel;
} kernel_pair;

static int remember_kernel(kernel_pair **list, size_t *count, size_t *cap,
                           uint32_t source_kernel, uint32_t device_id,
                           uint32_t trace_kernel) {
  for (size_t i = *count; i-- > 0;)
    if ((*list)[i].source_kernel == source_kernel &&
        (*list)[i].device_id == device_id)
      return 0;
  if (mprof__grow(list, cap, *count + 1, sizeof **list))
    return MPROF_ENOMEM;
  (*list)[(*count)++] = (kernel_pair){source_kernel, device_id, trace_kernel};
  return 0;
}

/* Version 2 options: the MEMORY_ACCESSES records on the trace's kernels. */
static int write_memory(mprof_writer *w, const mprof_source_build_options *o,
                        const kernel_pair *pairs, size_t pair_count) {
  if (!o || o->version < 2 || !o->memory_count)
    return 0;
  uint64_t dropped = 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < o->memory_count; i++) {
    mprof_memory_access_record rec = o->memory[i];
    uint32_t device = o->memory_devices ? o->memory_devices[i] : 0;
    size_t p = 0;
    while (p < pair_count && (pairs[p].source_kernel != rec.kernel ||
                              pairs[p].device_id != device))
      p++;
    if (p == pair_count) {
      dropped++;
      continue;
    }
    rec.kernel = pairs[p].trace_kernel;
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_MEMORY_ACCESSES, &rec);
  }
  return rc ? rc : meta_u64(w, "blocks.memory_dropped", dropped);
}

static int build(mprof_writer *w, const mprof_source_file *f,
                 const mprof_source_build_options *o) {
  size_t region_count, kernel_count, launch_count, record_count;
  mprof_source_file_regions(f, &region_count);
  const mprof_source_file_kernel *kernels =
      mprof_source_file_kernels(f, &kernel_count);
  const mprof_source_file_launch *launches =
      mprof_source_file_launches(f, &launch_count);
  const mprof_source_file_record *records =
      mprof_source_file_records(f, &record_count);
  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  size_t ext_count;
  const mprof_source_file_launch_ext *exts =
      mprof_source_file_launch_exts(f, &ext_count);

  launch_extent *ext =
      (launch_extent *)malloc((launch_count + 1) * sizeof *ext);
  uint32_t *launch_at =
      (uint32_t *)malloc((launch_count + 1) * sizeof *launch_at);
  if (!ext || !launch_at) {
    free(ext);
    free(launch_at);
    return mprof__error_set(MPROF_ENOMEM, "building a trace: out of memory");
  }
  kernel_pair *pairs = NULL;
  size_t pair_count = 0, pair_cap = 0;
  uint32_t max_sm = 0;
  for (size_t i = 0; i < launch_count; i++)
    ext[i] = (launch_extent){UINT64_MAX, 0};
  for (size_t i = 0; i < record_count; i++) {
    launch_extent *e = &ext[records[i].launch];
    if (records[i].start < e->start)
      e->start = records[i].start;
    if (records[i].end > e->end)
      e->end = records[i].end;
    if (records[i].sm > max_sm)
      max_sm = records[i].sm;
  }

  int rc = mprof_writer_meta(w, "tool", "mprof");
  rc = rc ? rc : mprof_writer_meta(w, "tool.version", MPROF_VERSION_STRING);
  rc = rc ? rc : mprof_writer_meta(w, "producer", "blocks");
  rc = rc ? rc : mprof_writer_meta(w, "capture.mode", "blocks");
  rc = rc ? rc : mprof_writer_meta(w, "clock", "globaltimer");
  rc = rc ? rc : meta_u64(w, "source.events", record_count);
  size_t without = 0;
  for (size_t i = 0; i < launch_count; i++)
    without += ext[i].end == 0;
  rc = rc ? rc : meta_u64(w, "source.launches", launch_count);
  rc = rc ? rc : meta_u64(w, "source.launches_without_spans", without);
  rc = rc ? rc : mprof_writer_meta(w, "source.alignment_method", "same clock");
  rc = rc ? rc : meta_u64(w, "source.alignment_offset_ns", 0);
  rc = rc ? rc : meta_u64(w, "source.alignment_error_ns", 0);
  rc = rc ? rc : meta_u64(w, "source.overflow", h->overflow_count);
  for (size_t i = 0; !rc && o && i < o->meta_count; i++)
    rc = mprof_writer_meta(w, o->meta[2 * i], o->meta[2 * i + 1]);

  /* Regions (the trace's first, so region r keeps its index), kernels (one
   * per device that launched it), shapes, launches. */
  rc = rc ? rc : mprof__source_write_regions(w, f);
  for (size_t i = 0; !rc && i < launch_count; i++) {
    const mprof_source_file_launch *l = &launches[i];
    uint32_t device, stream, kernel, shape;
    launch_at[i] = MPROF_INDEX_NONE;
    if (!ext[i].end)
      continue; /* not recorded: no time to give it; counted above */
    /* The SMs the spans name, unless they name one no GPU has: unknown. */
    rc = device_index(w, o, l->device,
                      max_sm < MPROF_DEVICE_SM_MAX ? max_sm + 1 : 0, &device);
    const mprof_source_file_launch_ext *x = exts ? &exts[i] : NULL;
    mprof_stream_record st;
    memset(&st, 0, sizeof st);
    st.device = device;
    if (x && (x->flags & MPROF_SOURCE_LAUNCH_STREAM)) {
      /* The producer's stream numbers: 0 the NULL stream, then in order of
       * first use ("stream N" in the views). */
      st.stream_id = x->stream;
      st.name =
          x->stream ? MPROF_STR_NONE : mprof_writer_string(w, "default stream");
    } else {
      st.name = mprof_writer_string(w, "all streams");
    }
    rc = rc ? rc : mprof_writer_intern(w, &stream, MPROF_SECTION_STREAMS, &st);
    mprof_kernel_record k;
    memset(&k, 0, sizeof k);
    if (o && o->kernels && l->kernel < o->kernel_count)
      k = o->kernels[l->kernel];
    k.mangled_name = mprof_writer_string(
        w, mprof_source_file_string(f, kernels[l->kernel].name));
    k.demangled_name = MPROF_STR_NONE;
    k.function_index = MPROF_INDEX_NONE;
    k.device = device;
    rc = rc ? rc : mprof_writer_intern(w, &kernel, MPROF_SECTION_KERNELS, &k);
    rc = rc ? rc
            : remember_kernel(&pairs, &pair_count, &pair_cap, l->kernel,
                              l->device, kernel);
    mprof_shape_record sh;
    memset(&sh, 0, sizeof sh);
    sh.kernel = kernel;
    memcpy(sh.grid, l->grid, sizeof sh.grid);
    memcpy(sh.block, l->block, sizeof sh.block);
    if (x) {
      memcpy(sh.cluster, x->cluster, sizeof sh.cluster);
      if (x->flags & MPROF_SOURCE_LAUNCH_DYNAMIC_SHARED)
        sh.dynamic_shared = x->dynamic_shared;
    }
    rc = rc ? rc : mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh);
    mprof_launch_record lr;
    memset(&lr, 0, sizeof lr);
    lr.start = ext[i].start;
    lr.end = ext[i].end;
    lr.shape = shape;
    lr.stream = stream;
    lr.correlation_id = (uint32_t)(i + 1);
    rc =
        rc ? rc
           : mprof_writer_append(w, &launch_at[i], MPROF_SECTION_LAUNCHES, &lr);
  }
  for (size_t i = 0; !rc && i < record_count; i++) {
    const mprof_source_file_record *r = &records[i];
    mprof_span_record sp = mprof__source_span(
        r, r->start, r->end, launch_at[r->launch],
        r->region < region_count ? r->region : MPROF_INDEX_NONE);
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_SPANS, &sp);
  }
  rc = rc ? rc
          : mprof_writer_drop(w, MPROF_DROP_SPAN_OVERFLOW, MPROF_INDEX_NONE,
                              h->overflow_count);
  rc = rc ? rc : write_memory(w, o, pairs, pair_count);
  /* The process, as the pairs the producer left say it (pid, ppid, host). */
  rc = rc ? rc
          : mprof__write_processes_from_meta(w, o ? o->meta : NULL,
                                             o ? o->meta_count : 0);
  free(pairs);
  free(ext);
  free(launch_at);
  return rc;
}

int mprof_source_build_trace(const char *source_path, const char *out_path,
                             const mprof_source_build_options *opts) {
  if (!source_path || !out_path)
    return mprof__error_set(MPROF_EINVAL, "mprof_source_build_trace: NULL");
  if (opts && mprof__version_check("source build options", opts->version, 1,
                                   MPROF_SOURCE_BUILD_OPTIONS_VERSION))
    return MPROF_EVERSION;
  mprof_source_file *f;
  int rc = mprof_source_file_open(&f, source_path);
  if (rc)
    return rc;
  mprof_writer *w;
  rc = mprof_writer_open(&w, out_path, NULL);
  if (!rc) {
    rc = build(w, f, opts);
    if (rc)
      mprof_writer_abort(w);
    else
      rc = mprof_writer_finish(w);
  }
  mprof_source_file_free(f);
  return rc;
}
