/*
 * mprof — copy a trace with its launches sorted or its code dropped.
 *
 * Every record goes through the writer again: strings are re-interned (their
 * offsets change), table indices are kept (records are appended in their
 * original order), and only launch indices move when sorting, so span
 * records are remapped.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "format/copy.h"
#include "internal.h"
#include "mprof/sass.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

int mprof_trace_rewrite(const mprof_trace *trace, const char *path,
                        unsigned flags) {
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
      MPROF_SECTION_API_CALLS,     MPROF_SECTION_MEMORY_ACCESSES};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0] && !rc; i++)
    rc = mprof__copy_section(w, trace, tail[i], NULL, new_index);
  const mprof_cubin_record *cubins = mprof_trace_cubins(trace, &n);
  for (size_t i = 0; i < n && !rc; i++) {
    /* Without its blob the writer marks a cubin MPROF_CUBIN_OMITTED. */
    size_t size = 0;
    const void *blob = (flags & MPROF_REWRITE_DROP_CODE)
                           ? NULL
                           : mprof_trace_cubin_blob(trace, &cubins[i], &size);
    rc = mprof_writer_cubin(w, &cubins[i], blob, size);
  }
  if (!rc)
    rc = mprof__copy_drops(w, trace, NULL);
  /* A trace written before PROCESSES gets the records its META describes. */
  if (!rc)
    rc = mprof__copy_processes(w, trace, NULL, NULL);
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
  return rc;
}
