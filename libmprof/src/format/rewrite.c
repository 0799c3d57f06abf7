/*
 * mprof — copy a trace with its launches sorted, its code trimmed or
 * dropped, or the end of a killed process filled in.
 *
 * Every record goes through the writer again: strings are re-interned (their
 * offsets change), table indices are kept (records are appended in their
 * original order), and only launch indices move when sorting, so span
 * records are remapped.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "format/copy.h"
#include "format/cubin_trim.h"
#include "internal.h"
#include "mprof/sass.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

/* A kernel the producer could not pin to one module (its name in several,
 * or its module unknown) keeps its name's code in each, as finish does. */
static int named_only(const mprof_kernel_record *k, uint64_t crc) {
  return k->function_index == MPROF_INDEX_NONE &&
         (k->cubin_crc == crc || k->cubin_crc == 0);
}

typedef struct cubin_of {
  const mprof_trace *trace;
  uint64_t crc;
} cubin_of;

/* Whether a kernel of the trace known by name only is @p name. */
static int launched_by_name(void *userdata, const char *name) {
  const cubin_of *c = (const cubin_of *)userdata;
  size_t n;
  const mprof_kernel_record *k = mprof_trace_kernels(c->trace, &n);
  for (size_t i = 0; i < n; i++)
    if (named_only(&k[i], c->crc) &&
        strcmp(mprof_trace_string(c->trace, k[i].mangled_name), name) == 0)
      return 1;
  return 0;
}

/* @p image (cubin @p crc) cut down to the code of the functions that ran:
 * the trace's kernels in it and the functions its PC samples name. NULL
 * when there is nothing to cut, it is not an ELF the walker reads, or
 * memory runs out: it stays whole. */
static void *trimmed_code(const mprof_trace *trace, uint64_t crc,
                          const void *image, size_t size, size_t *out_size) {
  uint32_t *used = NULL;
  size_t count = 0, capacity = 0, n;
  int by_name = 0, failed = 0;
  const mprof_kernel_record *k = mprof_trace_kernels(trace, &n);
  for (size_t i = 0; i < n && !failed; i++) {
    by_name |= named_only(&k[i], crc);
    if (k[i].cubin_crc != crc || k[i].function_index == MPROF_INDEX_NONE)
      continue;
    failed = MPROF__GROW(used, capacity, count + 1) != 0;
    if (!failed)
      used[count++] = k[i].function_index;
  }
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(trace, &n);
  for (size_t i = 0; i < n && !failed; i++) {
    if (pc[i].cubin_crc != crc || pc[i].function_index == MPROF_INDEX_NONE ||
        (count && used[count - 1] == pc[i].function_index))
      continue;
    failed = MPROF__GROW(used, capacity, count + 1) != 0;
    if (!failed)
      used[count++] = pc[i].function_index;
  }
  cubin_of of = {trace, crc};
  void *out = NULL;
  if (failed || mprof__cubin_trim_to_used(image, size, used, count,
                                          by_name ? launched_by_name : NULL,
                                          &of, &out, out_size) != 0)
    out = NULL;
  free(used);
  return out;
}

static int rewrite(const mprof_trace *trace, const char *path, unsigned flags,
                   const mprof__process_end *end) {
  if (!trace || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_trace_rewrite: NULL");
  size_t launch_count, streams;
  const mprof_launch_record *launches =
      mprof_trace_launches(trace, &launch_count);
  mprof_trace_streams(trace, &streams);
  /* old launch index -> new, when sorting (filled as they are written) */
  uint32_t *new_index = NULL;
  if ((flags & MPROF_REWRITE_SORT_LAUNCHES) && launch_count) {
    new_index = (uint32_t *)malloc(launch_count * sizeof *new_index);
    if (!new_index)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", path);
  }
  mprof_writer *w;
  /* Every string keeps one reference, as in the traces copied: this runs
   * after the capture, where memory is not the program's. */
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.strings_unique_cap = MPROF_WRITER_STRINGS_ALL;
  int rc = mprof_writer_open(&w, path, &opts);
  if (rc) {
    free(new_index);
    return rc;
  }
  static const mprof_section_type head[] = {
      MPROF_SECTION_META, MPROF_SECTION_DEVICES, MPROF_SECTION_STREAMS};
  for (size_t i = 0; i < sizeof head / sizeof head[0] && !rc; i++)
    rc = mprof__copy_section(w, trace, head[i], NULL, NULL);
  size_t n;
  const mprof_kernel_record *kernels = mprof_trace_kernels(trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    mprof_kernel_record rec = kernels[i];
    const char *mangled = mprof_trace_string(trace, rec.mangled_name);
    char *demangled = NULL;
    rec.mangled_name = mprof_writer_string(w, mangled);
    if (!rec.demangled_name && (flags & MPROF_REWRITE_DEMANGLE) &&
        mprof_sass_demangle(&demangled, mangled) == 0)
      rec.demangled_name = mprof_writer_string(w, demangled);
    else
      rec.demangled_name =
          mprof_writer_string(w, mprof_trace_string(trace, rec.demangled_name));
    free(demangled);
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_KERNELS, &rec);
  }
  if (!rc)
    rc = mprof__copy_section(w, trace, MPROF_SECTION_SHAPES, NULL, NULL);
  if (new_index) {
    uint32_t next = 0;
    for (uint32_t s = 0; s < streams && !rc; s++) {
      size_t count = mprof_trace_stream_launch_count(trace, s);
      for (size_t p = 0; p < count && !rc; p++) {
        const mprof_launch_record *l = mprof_trace_stream_launch(trace, s, p);
        new_index[l - launches] = next++;
        rc = mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, l);
      }
    }
  } else if (!rc) {
    rc = mprof__copy_section(w, trace, MPROF_SECTION_LAUNCHES, NULL, NULL);
  }
  static const mprof_section_type tail[] = {
      MPROF_SECTION_MEMOPS,        MPROF_SECTION_RANGES,
      MPROF_SECTION_REGIONS,       MPROF_SECTION_SPANS,
      MPROF_SECTION_STALL_REASONS, MPROF_SECTION_PC_SAMPLES,
      MPROF_SECTION_PM_METRICS,    MPROF_SECTION_PM_SAMPLES,
      MPROF_SECTION_API_CALLS,     MPROF_SECTION_MEMORY_ACCESSES,
      MPROF_SECTION_CAPTURE};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0] && !rc; i++)
    rc = mprof__copy_section(w, trace, tail[i], NULL, new_index);
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    /* Without its blob the writer marks a cubin MPROF_CUBIN_OMITTED. */
    mprof_cubin_record rec = cubins[i];
    size_t size = 0;
    const void *blob = (flags & MPROF_REWRITE_DROP_CODE)
                           ? NULL
                           : mprof_trace_cubin_blob(trace, &rec, &size);
    void *cut = NULL;
    size_t cut_size = 0;
    if (blob && (flags & MPROF_REWRITE_TRIM_CODE) &&
        (rec.flags & MPROF_CUBIN_KEPT_WHOLE) &&
        (cut = trimmed_code(trace, rec.crc, blob, size, &cut_size)) != NULL &&
        cut_size < size) {
      blob = cut;
      size = cut_size;
      rec.flags = (rec.flags & ~MPROF_CUBIN_KEPT_WHOLE) | MPROF_CUBIN_TRIMMED;
    }
    rc = mprof_writer_cubin(w, &rec, blob, size);
    free(cut);
  }
  if (!rc)
    rc = mprof__copy_drops(w, trace, NULL);
  /* A trace written before PROCESSES gets the records its META describes. */
  if (!rc)
    rc = mprof__copy_processes(w, trace, NULL, NULL, end);
  free(new_index);
  if (rc) {
    mprof_writer_abort(w);
    return rc;
  }
  rc = mprof_writer_finish(w);
  /* The embedded sources are bytes the writer does not stream: put back
   * into the finished copy (the trace's map outlives the rename). */
  size_t sources;
  const void *bytes =
      mprof_trace_section(trace, MPROF_SECTION_SOURCES, &sources);
  if (!rc && sources)
    rc = mprof__trace_put_section(path, MPROF_SECTION_SOURCES, bytes, sources);
  size_t mkprof;
  bytes = mprof_trace_section(trace, MPROF_SECTION_MKPROF, &mkprof);
  if (!rc && mkprof)
    rc = mprof__trace_put_section(path, MPROF_SECTION_MKPROF, bytes, mkprof);
  return rc;
}

int mprof_trace_rewrite(const mprof_trace *trace, const char *path,
                        unsigned flags) {
  return rewrite(trace, path, flags, NULL);
}

int mprof_trace_rewrite_ended(const mprof_trace *trace, const char *path,
                              unsigned flags, uint32_t pid, uint32_t exit_kind,
                              uint32_t exit_value) {
  if (exit_kind != MPROF_EXIT_STATUS && exit_kind != MPROF_EXIT_SIGNAL)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_trace_rewrite_ended: exit kind %u is "
                            "neither MPROF_EXIT_STATUS nor MPROF_EXIT_SIGNAL",
                            exit_kind);
  mprof__process_end end = {pid, exit_kind, exit_value};
  return rewrite(trace, path, flags, &end);
}
