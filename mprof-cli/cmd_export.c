/*
 * mprof export — write traces for Perfetto (its protobuf format),
 * chrome://tracing (Trace Event Format JSON), speedscope, an SQLite database
 * with Nsight Systems' table names, or Kineto JSON (torch.profiler's).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_report.h"
#include "mprof/mprof.h"

static int parse_format(const char *name, unsigned *format) {
  if (strcmp(name, "perfetto") == 0)
    *format = MPROF_EXPORT_PERFETTO;
  else if (strcmp(name, "chrome") == 0)
    *format = MPROF_EXPORT_TRACE_EVENTS;
  else if (strcmp(name, "speedscope") == 0)
    *format = MPROF_EXPORT_SPEEDSCOPE;
  else if (strcmp(name, "sqlite") == 0)
    *format = MPROF_EXPORT_SQLITE;
  else if (strcmp(name, "kineto") == 0)
    *format = MPROF_EXPORT_KINETO;
  else
    return -1;
  return 0;
}

/* Progress of a long export on a terminal: the table being written. */
static void export_progress(void *userdata, const char *what, size_t done,
                            size_t total) {
  cli_progress *p = (cli_progress *)userdata;
  double now = cli_seconds();
  if (!p->tty || now - p->started < 0.5)
    return;
  if (total)
    fprintf(stderr, "\r\033[Kmprof export: %s: %zu of %zu", what, done, total);
  else
    fprintf(stderr, "\r\033[Kmprof export: %s", what);
  fflush(stderr);
  p->shown = 1;
}

int cmd_export(int argc, char **argv) {
  mprof_export_options eo = MPROF_EXPORT_OPTIONS_INIT;
  eo.format = MPROF_EXPORT_PERFETTO;
  const char *output = NULL, *sidecar = NULL;
  int no_sidecar = 0, quiet = 0;
  cli_trace_set set = {NULL, 0};
  size_t path_count = 0;
  int status = CLI_EXIT_OK;
  for (int i = 1; i < argc && !status; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--format") == 0 || strcmp(arg, "-f") == 0 ||
        strncmp(arg, "--format=", 9) == 0) {
      const char *name = arg[1] == 'f' ? value : arg[8] ? arg + 9 : value;
      if (!name || parse_format(name, &eo.format) != 0)
        status = cli_usage_error("export", "--format takes perfetto, chrome, "
                                           "speedscope, sqlite or kineto");
      if (name == value)
        i++;
    } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      if (!value || !*value)
        status = cli_usage_error("export", "%s needs a file name", arg);
      output = value;
      i++;
    } else if (strcmp(arg, "--kernel") == 0 || strcmp(arg, "-k") == 0) {
      if (!value || !*value)
        status = cli_usage_error("export",
                                 "%s needs a kernel name or regular "
                                 "expression",
                                 arg);
      eo.kernel = value;
      i++;
    } else if (strcmp(arg, "--sidecar") == 0) {
      if (!value || !*value)
        status = cli_usage_error("export", "--sidecar needs a file name");
      sidecar = value;
      i++;
    } else if (strcmp(arg, "--no-sidecar") == 0) {
      no_sidecar = 1;
    } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      quiet = 1;
    } else if (arg[0] == '-' && arg[1]) {
      status = cli_usage_error("export", "unknown option '%s'", arg);
    } else {
      /* A directory or a quoted glob: a run's traces, one process each. */
      status = cli_trace_set_resolve(&set, "export", arg);
    }
  }
  path_count = set.count;
  if (!status && !path_count)
    status = cli_usage_error("export", "no trace given");
  else if (!status && !output)
    status = cli_usage_error("export", "no output file given (-o FILE)");
  else if (!status && no_sidecar && sidecar)
    status =
        cli_usage_error("export", "--sidecar and --no-sidecar contradict each "
                                  "other");
  else if (!status && sidecar && path_count > 1)
    status = cli_usage_error("export",
                             "--sidecar names the sidecar of one trace; each "
                             "of several traces uses its own TRACE.pc.json");
  if (status) {
    cli_trace_set_free(&set);
    return status;
  }
  cli_report_input *inputs =
      (cli_report_input *)calloc(path_count, sizeof *inputs);
  const mprof_diagnosis **diagnoses =
      (const mprof_diagnosis **)calloc(path_count, sizeof *diagnoses);
  size_t loaded = 0;
  if (!inputs || !diagnoses) {
    fprintf(stderr, "mprof export: out of memory\n");
    status = CLI_EXIT_FAILED;
  }
  for (; !status && loaded < path_count; loaded++) {
    cli_trace_set one = {&set.paths[loaded], 1};
    status =
        cli_report_open(&inputs[loaded], &one, NULL, sidecar, no_sidecar, 0);
    if (status)
      break;
    if (!quiet)
      cli_report_note_sidecar(&inputs[loaded]);
    diagnoses[loaded] = inputs[loaded].diagnosis;
  }
  if (!status) {
    mprof_export_report rep = MPROF_EXPORT_REPORT_INIT;
    cli_progress progress;
    cli_progress_start(&progress, quiet);
    eo.progress = export_progress;
    eo.progress_userdata = &progress;
    int rc = mprof_export_file(output, diagnoses, path_count, &eo, &rep);
    cli_progress_clear(&progress);
    if (rc == MPROF_EUNSUPPORTED) {
      cli_fail(rc);
      status = CLI_EXIT_USAGE; /* a missing library, like a missing tool */
    } else if (rc)
      status = cli_fail(rc);
    else if (!quiet && eo.format == MPROF_EXPORT_SQLITE)
      printf("mprof export: wrote %s: %zu rows (query it with sqlite3; "
             "docs/EXPORT.md lists the tables)\n",
             output, rep.rows);
    else if (!quiet && eo.format == MPROF_EXPORT_SPEEDSCOPE)
      printf("mprof export: wrote %s: %zu kernel profile%s, %zu sampled "
             "instructions (open it at https://www.speedscope.app)\n",
             output, rep.profiles, rep.profiles == 1 ? "" : "s", rep.events);
    else if (!quiet && eo.format == MPROF_EXPORT_KINETO)
      printf("mprof export: wrote %s: %zu trace events (Kineto JSON: open "
             "it with Holistic Trace Analysis or TensorBoard)\n",
             output, rep.events);
    else if (!quiet && eo.format == MPROF_EXPORT_PERFETTO)
      printf("mprof export: wrote %s: %zu track events (open it at "
             "https://ui.perfetto.dev)\n",
             output, rep.events);
    else if (!quiet)
      printf("mprof export: wrote %s: %zu trace events (open it at "
             "chrome://tracing or https://ui.perfetto.dev)\n",
             output, rep.events);
  }
  for (size_t i = 0; i < loaded; i++)
    cli_report_close(&inputs[i]);
  free(inputs);
  free(diagnoses);
  cli_trace_set_free(&set);
  return status;
}
