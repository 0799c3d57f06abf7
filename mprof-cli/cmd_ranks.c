/*
 * mprof ranks — which rank of a multi-GPU job is slow, in which step and
 * why: one trace per rank, each read on its own thread (libmprof's rank
 * tables), reduced into the report (mprof/ranks.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_report.h"
#include "mprof/mprof.h"

#define RANKS_SHOWN 32 /* ranks listed by --human without --top/--all */
#define RANKS_JOBS_MAX 256

typedef struct table_jobs {
  const cli_trace_set *set;
  mprof_rank_table **tables;
  int *rc;
  char (*error)[1024]; /* mprof_error_last() is per thread: keep it */
  size_t next;
  pthread_mutex_t lock;
} table_jobs;

static void *build_tables(void *arg) {
  table_jobs *j = (table_jobs *)arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->set->count)
      return NULL;
    mprof_trace *trace = NULL;
    int rc = mprof_trace_open(&trace, j->set->paths[i], NULL);
    if (!rc)
      rc = mprof_rank_table_build(&j->tables[i], trace);
    mprof_trace_free(trace);
    j->rc[i] = rc;
    if (rc)
      snprintf(j->error[i], sizeof j->error[i], "%s", mprof_error_last());
  }
}

static int ranks(int argc, char **argv, cli_trace_set *set);

int cmd_ranks(int argc, char **argv) {
  cli_trace_set set = {NULL, 0};
  int status = ranks(argc, argv, &set);
  cli_trace_set_free(&set);
  return status;
}

static int ranks(int argc, char **argv, cli_trace_set *set) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  mprof_ranks_options opts = MPROF_RANKS_OPTIONS_INIT;
  const char *color = "auto";
  unsigned saw = 0;
  unsigned long long jobs = 0, v;
  int status;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--kernel") == 0 || strcmp(arg, "-k") == 0 ||
        strcmp(arg, "--full-names") == 0)
      return cli_usage_error("ranks", "%s is not a ranks option", arg);
    if (cli_report_option("ranks", argc, argv, &i, &ro, &color, &saw,
                          &status)) {
      if (status)
        return status;
      continue;
    }
    if (strcmp(arg, "--threshold") == 0) {
      char *end = NULL;
      double pct = value ? strtod(value, &end) : -1;
      if (!value || !*value || *end || !(pct >= 0 && pct <= 10000))
        return cli_usage_error("ranks", "--threshold needs a percentage "
                                        "(0..10000)");
      opts.threshold = pct / 100.0;
      i++;
    } else if (strcmp(arg, "--no-diff") == 0) {
      opts.flags |= MPROF_RANKS_NO_DIFF;
    } else if (strcmp(arg, "-j") == 0 || strcmp(arg, "--jobs") == 0) {
      if (!value || cli_parse_u64(value, &v) != 0 || v == 0 ||
          v > RANKS_JOBS_MAX)
        return cli_usage_error("ranks",
                               "%s needs a number of threads "
                               "(1..%d)",
                               arg, RANKS_JOBS_MAX);
      jobs = v;
      i++;
    } else if (arg[0] == '-' && arg[1]) {
      return cli_usage_error("ranks", "unknown option '%s'", arg);
    } else {
      status = cli_trace_set_resolve(set, "ranks", arg);
      if (status)
        return status;
    }
  }
  if (!set->count)
    return cli_usage_error("ranks", "no traces given (one per rank: files, "
                                    "a directory or a quoted glob)");
  if (!(saw & CLI_SAW_TOP))
    ro.max_kernels = saw & CLI_SAW_ALL ? (size_t)-1 : RANKS_SHOWN;
  if (!(saw & CLI_SAW_HOT))
    ro.max_hot = 3;
  if (!jobs) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    jobs = cores > 0 ? (unsigned long long)cores : 1;
  }
  opts.threads = (unsigned)jobs; /* the diffs' traces */
  if (jobs > set->count)
    jobs = set->count;

  table_jobs j;
  memset(&j, 0, sizeof j);
  j.set = set;
  j.tables = (mprof_rank_table **)calloc(set->count, sizeof *j.tables);
  j.rc = (int *)calloc(set->count, sizeof *j.rc);
  j.error = (char(*)[1024])calloc(set->count, sizeof *j.error);
  pthread_t *threads = (pthread_t *)calloc(jobs, sizeof *threads);
  if (!j.tables || !j.rc || !j.error || !threads) {
    free(j.tables);
    free(j.rc);
    free(j.error);
    free(threads);
    fprintf(stderr, "mprof ranks: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  pthread_mutex_init(&j.lock, NULL);
  size_t started = 0;
  for (; started + 1 < jobs; started++)
    if (pthread_create(&threads[started], NULL, build_tables, &j) != 0)
      break;
  build_tables(&j);
  for (size_t t = 0; t < started; t++)
    pthread_join(threads[t], NULL);
  pthread_mutex_destroy(&j.lock);
  free(threads);

  status = CLI_EXIT_OK;
  for (size_t i = 0; i < set->count && !status; i++)
    if (j.rc[i])
      status = cli_trace_set_fail(set, j.rc[i], i, j.error[i]);
  mprof_ranks *report = NULL;
  if (!status) {
    int rc = mprof_ranks_build(
        &report, (const mprof_rank_table *const *)j.tables, set->count, &opts);
    if (!rc) {
      if (ro.format == MPROF_REPORT_TEXT && cli_report_color(color))
        ro.flags |= MPROF_REPORT_COLOR;
      rc = mprof_ranks_write(stdout, report, &ro);
    }
    if (rc)
      status = cli_fail(rc);
  }
  mprof_ranks_free(report);
  for (size_t i = 0; i < set->count; i++)
    mprof_rank_table_free(j.tables[i]);
  free(j.tables);
  free(j.rc);
  free(j.error);
  return status;
}
