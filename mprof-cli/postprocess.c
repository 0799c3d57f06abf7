/*
 * mprof CLI — after a capture: sort the launches, write the sidecar, and
 * drop the captured code when asked (once its SASS is in the sidecar).
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdio.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/sass.h"

int cli_postprocess(const char *trace_path, unsigned flags) {
  mprof_trace *trace;
  int rc = mprof_trace_open(&trace, trace_path, NULL);
  if (rc)
    return cli_fail(rc);
  /* CUPTI hands over buffers out of order; sorting once here lets every
   * later reader use the per-stream arrays in place. The producer keeps
   * only mangled names (no demangler in the profiled process). */
  rc = mprof_trace_rewrite(
      trace, trace_path, MPROF_REWRITE_SORT_LAUNCHES | MPROF_REWRITE_DEMANGLE);
  mprof_trace_free(trace);
  if (rc)
    return cli_fail(rc);

  char sidecar[PATH_MAX];
  if (snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace_path) >=
      (int)sizeof sidecar) {
    fprintf(stderr, "mprof: %s: path too long for the sidecar\n", trace_path);
    return CLI_EXIT_USAGE;
  }
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  if (flags & CLI_POST_NO_SASS)
    opts.flags |= MPROF_SASS_NO_DISASSEMBLY;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  rc = mprof_sass_build_sidecar(trace_path, sidecar, &opts, &report);
  if (rc)
    return cli_fail(rc);
  if (!(flags & CLI_POST_QUIET))
    fprintf(stderr,
            "mprof: %s: %zu functions, SASS for %zu (%zu with source lines)\n",
            sidecar, report.functions, report.with_sass, report.with_lines);
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
    rc = mprof_trace_open(&trace, trace_path, NULL);
    if (!rc) {
      rc = mprof_trace_rewrite(trace, trace_path, MPROF_REWRITE_DROP_CODE);
      mprof_trace_free(trace);
    }
    if (rc)
      return cli_fail(rc);
  }
  return 0;
}
