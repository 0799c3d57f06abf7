/*
 * mprof CLI — progress on a terminal for work that takes a while, phase
 * timings under MPROF_VERBOSE=1, and the SASS that `record` left for the
 * first command that reads the trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/sass.h"

double cli_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_verbose(void) {
  const char *v = getenv("MPROF_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

void cli_progress_start(cli_progress *p, int quiet) {
  memset(p, 0, sizeof *p);
  p->started = cli_seconds();
  p->tty = !quiet && isatty(2);
}

void cli_progress_report(void *userdata, const char *what, size_t done,
                         size_t total) {
  cli_progress *p = (cli_progress *)userdata;
  double now = cli_seconds();
  if (!p->first)
    p->first = now;
  p->last = now;
  p->runs = total;
  if (!p->tty || now - p->started < 0.5)
    return;
  fprintf(stderr, "\r\033[Kmprof: %s: %zu of %zu batches done", what, done,
          total);
  fflush(stderr);
  p->shown = 1;
}

void cli_progress_clear(cli_progress *p) {
  if (p->shown)
    fprintf(stderr, "\r\033[K");
  fflush(stderr);
  p->shown = 0;
}

int cli_complete_sass(mprof_sidecar *sidecar, const char *trace_path,
                      const char *sidecar_path) {
  cli_progress prog;
  cli_progress_start(&prog, 0);
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.progress = cli_progress_report;
  opts.progress_userdata = &prog;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  int rc =
      mprof_sass_complete(sidecar, trace_path, sidecar_path, &opts, &report);
  cli_progress_clear(&prog);
  if (!rc && report.attached && cli_verbose())
    fprintf(stderr,
            "mprof: time: SASS for %zu sampled functions (left by record) "
            "%.1f ms, %zu batches\n",
            report.attached, (cli_seconds() - prog.started) * 1e3, prog.runs);
  return rc;
}
