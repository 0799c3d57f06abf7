/*
 * mprof diff — compare two traces kernel by kernel; with --fail-above, a
 * CI gate (exit status 3).
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_report.h"
#include "mprof/mprof.h"

/* One side of the diff, loaded on its own thread: the two traces are
 * independent, so `diff` costs about one `summary` on two cores. A side is
 * a trace, or a set of them (a directory, a quoted glob) opened as one. */
typedef struct load_job {
  cli_report_input in;
  cli_trace_set set;
  const char *label;
  int no_sidecar;
  int rc;
  size_t failed;
  char error[1024]; /* mprof_error_last() is per thread: keep it */
} load_job;

static void *load_side(void *arg) {
  load_job *job = (load_job *)arg;
  job->rc = cli_report_load(&job->in, &job->set,
                            job->set.count > 1 ? job->label : NULL, NULL,
                            job->no_sidecar, 0, &job->failed);
  if (job->rc)
    snprintf(job->error, sizeof job->error, "%s", mprof_error_last());
  return NULL;
}

static int run_diff(int argc, char **argv, load_job *base, load_job *candidate);

int cmd_diff(int argc, char **argv) {
  load_job base, candidate;
  memset(&base, 0, sizeof base);
  memset(&candidate, 0, sizeof candidate);
  int status = run_diff(argc, argv, &base, &candidate);
  cli_trace_set_free(&base.set);
  cli_trace_set_free(&candidate.set);
  return status;
}

static int run_diff(int argc, char **argv, load_job *base,
                    load_job *candidate) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  ro.max_kernels = 10; /* a diff line is short: show more than summary */
  const char *paths[2] = {NULL, NULL};
  const char *color = "auto";
  double fail_above = -1;
  int no_sidecar = 0, path_count = 0, allow_disjoint = 0, status;
  unsigned saw = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (cli_report_option("diff", argc, argv, &i, &ro, &color, &saw, &status)) {
      if (status)
        return status;
      continue;
    }
    if (strcmp(arg, "--fail-above") == 0) {
      char *end = NULL;
      double pct = value ? strtod(value, &end) : -1;
      if (!value || !*value || *end || !(pct >= 0) || pct > 1e6)
        return cli_usage_error("diff", "--fail-above needs a percentage "
                                       "(0 or more)");
      fail_above = pct;
      i++;
    } else if (strcmp(arg, "--no-sidecar") == 0) {
      no_sidecar = 1;
    } else if (strcmp(arg, "--allow-disjoint") == 0) {
      allow_disjoint = 1;
    } else if (arg[0] == '-' && arg[1]) {
      return cli_usage_error("diff", "unknown option '%s'", arg);
    } else if (path_count == 2) {
      return cli_usage_error("diff",
                             "expected exactly two traces (each side may be "
                             "a directory or a quoted glob of a run's "
                             "traces)");
    } else {
      load_job *side = path_count ? candidate : base;
      status = cli_trace_set_resolve(&side->set, "diff", arg);
      if (status)
        return status;
      side->label = arg;
      paths[path_count++] = arg;
    }
  }
  if (path_count < 2)
    return cli_usage_error("diff", path_count ? "no candidate trace given"
                                              : "no traces given");
  base->no_sidecar = candidate->no_sidecar = no_sidecar;
  pthread_t thread;
  int threaded = pthread_create(&thread, NULL, load_side, candidate) == 0;
  load_side(base);
  if (threaded)
    pthread_join(thread, NULL);
  else
    load_side(candidate);
  if (base->rc || candidate->rc) {
    load_job *failed = base->rc ? base : candidate;
    status = cli_trace_set_fail(&failed->set, failed->rc, failed->failed,
                                failed->error);
    cli_report_close(&base->in);
    cli_report_close(&candidate->in);
    return status;
  }
  cli_report_note_sidecar(&base->in);
  cli_report_note_sidecar(&candidate->in);
  if (ro.format == MPROF_REPORT_TEXT && cli_report_color(color))
    ro.flags |= MPROF_REPORT_COLOR;
  mprof_diff *diff = NULL;
  int rc =
      mprof_diff_run(&diff, base->in.diagnosis, candidate->in.diagnosis, NULL);
  size_t matched = 0;
  for (size_t i = 0; !rc && i < mprof_diff_kernel_count(diff); i++) {
    const mprof_kernel_change *k = mprof_diff_kernel(diff, i);
    matched += k->base && k->candidate;
  }
  if (!rc && !matched) {
    /* Two traces of different programs compare nothing: almost always the
     * wrong file, so say so instead of reporting every kernel as gone. */
    fprintf(stderr,
            "mprof diff: %s: no kernel also ran in %s (by name and device), "
            "so nothing is compared%s\n",
            paths[1], paths[0],
            allow_disjoint ? ""
                           : "; pass --allow-disjoint to report them "
                             "anyway");
    if (!allow_disjoint) {
      mprof_diff_free(diff);
      cli_report_close(&candidate->in);
      cli_report_close(&base->in);
      return CLI_EXIT_USAGE;
    }
  }
  if (!rc)
    rc = mprof_diff_write(stdout, diff, &ro, fail_above);
  size_t tripped =
      fail_above >= 0 && !rc ? mprof_diff_gate(diff, fail_above) : 0;
  mprof_diff_free(diff);
  cli_report_close(&candidate->in);
  cli_report_close(&base->in);
  if (rc)
    return cli_fail(rc);
  if (tripped) {
    fprintf(stderr,
            "mprof diff: %zu kernel%s slowed by more than %.4g%% per launch, "
            "outside the noise\n",
            tripped, tripped == 1 ? "" : "s", fail_above);
    return CLI_EXIT_GATE;
  }
  return CLI_EXIT_OK;
}
