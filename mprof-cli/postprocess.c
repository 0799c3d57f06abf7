/*
 * mprof CLI — after a capture: sort the launches (and trim the code of a
 * capture cut short), write the sidecar, and drop the captured code when
 * asked (once its SASS is in the sidecar).
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/sass.h"

int cli_postprocess(const char *trace_path, unsigned flags) {
  return cli_postprocess_ended(trace_path, flags, 0, 0);
}

int cli_postprocess_ended(const char *trace_path, unsigned flags, long pid,
                          int signo) {
  cli_progress prog;
  cli_progress_start(&prog, (flags & CLI_POST_QUIET) != 0);
  mprof_trace *trace;
  int rc = mprof_trace_open(&trace, trace_path, NULL);
  if (rc)
    return cli_fail(rc);
  /* CUPTI hands over buffers out of order; sorting once here lets every
   * later reader use the per-stream arrays in place. The producer keeps
   * only mangled names (no demangler in the profiled process). */
  unsigned rewrite = MPROF_REWRITE_SORT_LAUNCHES | MPROF_REWRITE_DEMANGLE;
  /* A capture cut short streamed its used modules whole (it could not know
   * what else would run); cut them as finish would have, unless the user
   * asked for whole modules (MPROF_WHOLE_MODULES=1). */
  const char *sass = mprof_trace_meta(trace, "sass");
  if (mprof_trace_partial(trace, NULL) &&
      !(sass && strcmp(sass, "used_modules") == 0))
    rewrite |= MPROF_REWRITE_TRIM_CODE;
  if (signo > 0 && pid > 0)
    rc = mprof_trace_rewrite_ended(trace, trace_path, rewrite, (uint32_t)pid,
                                   MPROF_EXIT_SIGNAL, (uint32_t)signo);
  else
    rc = mprof_trace_rewrite(trace, trace_path, rewrite);
  mprof_trace_free(trace);
  if (rc)
    return cli_fail(rc);
  double sorted = cli_seconds();

  char sidecar[PATH_MAX];
  if (snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace_path) >=
      (int)sizeof sidecar) {
    fprintf(stderr, "mprof: %s: path too long for the sidecar\n", trace_path);
    return CLI_EXIT_USAGE;
  }
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  if (flags & CLI_POST_NO_SASS)
    opts.flags |= MPROF_SASS_NO_DISASSEMBLY;
  else if (flags & CLI_POST_DROP_CODE)
    ; /* the code goes: every function's SASS now */
  else if (flags & CLI_POST_SASS_NOW)
    opts.flags |= MPROF_SASS_SAMPLED_ONLY;
  else
    opts.flags |= MPROF_SASS_DEFER; /* the first summary or view does it */
  opts.progress = cli_progress_report;
  opts.progress_userdata = &prog;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  rc = mprof_sass_build_sidecar(trace_path, sidecar, &opts, &report);
  cli_progress_clear(&prog);
  double built = cli_seconds();
  if (cli_verbose())
    fprintf(stderr,
            "mprof: time: sorting and demangling %.1f ms; sidecar %.1f ms "
            "(disassembly %.1f ms: %zu batches, %zu functions; %zu "
            "deferred)\n",
            (sorted - prog.started) * 1e3, (built - sorted) * 1e3,
            (prog.last - prog.first) * 1e3, prog.runs, report.with_sass,
            report.deferred);
  if (rc)
    return cli_fail(rc);
  if (!(flags & CLI_POST_QUIET) && report.deferred_sampled)
    fprintf(stderr,
            "mprof: %s: %zu functions (%zu with source lines); the first "
            "summary, view, diff or export adds the SASS of the %zu sampled "
            "ones ('mprof sass %s' adds it now)\n",
            sidecar, report.functions, report.with_lines,
            report.deferred_sampled, trace_path);
  else if (!(flags & CLI_POST_QUIET))
    fprintf(stderr,
            "mprof: %s: %zu functions, SASS for %zu (%zu with source lines)\n",
            sidecar, report.functions, report.with_sass, report.with_lines);
  char tool[PATH_MAX];
  if (report.deferred_sampled &&
      mprof_sass_find_tool(tool, sizeof tool, "nvdisasm") != 0)
    fprintf(stderr,
            "mprof: warning: nvdisasm was not found (PATH, CUDA_HOME/bin, "
            "/usr/local/cuda/bin), so %zu sampled functions get no SASS "
            "here; the trace keeps their code: run 'mprof sass %s' where "
            "nvdisasm exists\n",
            report.deferred_sampled, trace_path);
  if (report.no_disassembler && !(flags & CLI_POST_NO_SASS))
    fprintf(stderr,
            "mprof: warning: nvdisasm was not found (PATH, CUDA_HOME/bin, "
            "/usr/local/cuda/bin), so %zu functions have no SASS; the trace "
            "keeps their code: run 'mprof sass %s' where nvdisasm exists\n",
            report.no_disassembler, trace_path);
  if (report.failed)
    fprintf(stderr,
            "mprof: warning: the disassembler failed on %zu functions (see "
            "sass_error in %s)\n",
            report.failed, sidecar);
  if ((flags & CLI_POST_DROP_CODE) && report.with_sass &&
      !report.no_disassembler && !report.failed) {
    double dropping = cli_seconds();
    rc = mprof_trace_open(&trace, trace_path, NULL);
    if (!rc) {
      rc = mprof_trace_rewrite(trace, trace_path, MPROF_REWRITE_DROP_CODE);
      mprof_trace_free(trace);
    }
    if (rc)
      return cli_fail(rc);
    if (cli_verbose())
      fprintf(stderr, "mprof: time: dropping the code %.1f ms\n",
              (cli_seconds() - dropping) * 1e3);
  }
  return 0;
}

int cli_embed_sources(const char *trace, const char *const *roots,
                      size_t root_count, unsigned flags) {
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.roots = roots;
  so.root_count = root_count;
  mprof_sources_report r = MPROF_SOURCES_REPORT_INIT;
  int rc = mprof_sources_embed(trace, &so, &r);
  if (rc) {
    fprintf(stderr,
            "mprof: warning: %s: the source files were not embedded: %s\n",
            trace, mprof_error_last());
    return 0;
  }
  if ((flags & CLI_POST_QUIET) || !r.files)
    return 0;
  char text[32], stored[32];
  mprof_format_bytes(text, sizeof text, (double)r.text_bytes);
  mprof_format_bytes(stored, sizeof stored, (double)r.stored_bytes);
  fprintf(stderr, "mprof: %s: %zu source file%s embedded (%s, %s stored)",
          trace, r.embedded, r.embedded == 1 ? "" : "s", text, stored);
  if (r.missing) {
    fprintf(stderr, "; %zu missing:", r.missing);
    mprof_trace *t;
    mprof_sources *s = NULL;
    size_t shown = 0;
    if (mprof_trace_open(&t, trace, NULL) == 0) {
      if (mprof_sources_open(&s, t, NULL) == 0)
        for (size_t i = 0; i < mprof_sources_listed(s); i++) {
          const mprof_source_listing *l = mprof_sources_listed_at(s, i);
          if (l->state != MPROF_SOURCE_MISSING || shown++ == 3)
            continue;
          fprintf(stderr, " %s", l->path);
        }
      mprof_sources_free(s);
      mprof_trace_free(t);
    }
    if (shown > 3)
      fprintf(stderr, " ...");
    fprintf(stderr, " (--source-root DIR maps build paths)");
  }
  fputc('\n', stderr);
  return 0;
}
