/*
 * mprof CLI — after a capture: sort the launches, write the sidecar, and
 * drop the captured code when asked (once its SASS is in the sidecar).
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/sass.h"

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A progress line on a terminal once post-processing has taken 0.5 s;
 * nothing when stderr is not a terminal. */
typedef struct progress {
  double started;     /* post-processing began */
  double first, last; /* first and last disassembly report */
  size_t modules;     /* modules disassembled */
  int tty;            /* stderr is a terminal and not --quiet */
  int shown;          /* a line is on the terminal */
} progress;

static void on_progress(void *userdata, const char *what, size_t done,
                        size_t total) {
  progress *p = (progress *)userdata;
  double now = seconds();
  if (!p->first)
    p->first = now;
  p->last = now;
  p->modules = total;
  if (!p->tty || now - p->started < 0.5)
    return;
  fprintf(stderr, "\rmprof: %s %zu/%zu modules", what, done, total);
  fflush(stderr);
  p->shown = 1;
}

static void progress_clear(progress *p) {
  if (p->shown)
    fprintf(stderr, "\r\033[K");
  p->shown = 0;
}

/* MPROF_VERBOSE=1: where post-processing spent its time. */
static int verbose(void) {
  const char *v = getenv("MPROF_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

int cli_postprocess(const char *trace_path, unsigned flags) {
  progress prog;
  memset(&prog, 0, sizeof prog);
  prog.started = seconds();
  prog.tty = !(flags & CLI_POST_QUIET) && isatty(2);
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
  double sorted = seconds();

  char sidecar[PATH_MAX];
  if (snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace_path) >=
      (int)sizeof sidecar) {
    fprintf(stderr, "mprof: %s: path too long for the sidecar\n", trace_path);
    return CLI_EXIT_USAGE;
  }
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  if (flags & CLI_POST_NO_SASS)
    opts.flags |= MPROF_SASS_NO_DISASSEMBLY;
  opts.progress = on_progress;
  opts.progress_userdata = &prog;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  rc = mprof_sass_build_sidecar(trace_path, sidecar, &opts, &report);
  progress_clear(&prog);
  double built = seconds();
  if (verbose())
    fprintf(stderr,
            "mprof: time: sorting and demangling %.1f ms; sidecar %.1f ms "
            "(disassembly %.1f ms: %zu modules, %zu functions)\n",
            (sorted - prog.started) * 1e3, (built - sorted) * 1e3,
            (prog.last - prog.first) * 1e3, prog.modules, report.attached);
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
