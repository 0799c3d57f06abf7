/*
 * mprof summary — which kernel hurts and why: XML for agents (default),
 * JSON, or a coloured panel for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_report.h"
#include "mprof/mprof.h"

#define CLI_BRIEF_KERNELS 20 /* lines of the brief --human table */

int cli_report_color(const char *when) {
  if (when && strcmp(when, "always") == 0)
    return 1;
  if (when && strcmp(when, "never") == 0)
    return 0;
  const char *no_color = getenv("NO_COLOR");
  if (no_color && *no_color)
    return 0;
  return isatty(fileno(stdout));
}

int cli_report_load(cli_report_input *in, const char *path,
                    const char *sidecar_path, int no_sidecar) {
  memset(in, 0, sizeof *in);
  int rc = mprof_mkprof_open_trace(&in->trace, path, NULL);
  if (rc)
    return rc;
  char *guess = NULL;
  if (!no_sidecar && !sidecar_path) {
    size_t n = strlen(path) + sizeof ".pc.json";
    guess = (char *)malloc(n);
    if (!guess) {
      cli_report_close(in);
      return MPROF_ENOMEM;
    }
    snprintf(guess, n, "%s.pc.json", path);
    struct stat st;
    if (stat(guess, &st) == 0)
      sidecar_path = guess;
  }
  if (sidecar_path)
    rc = mprof_sidecar_load(&in->sidecar, sidecar_path);
  /* What `record` left for the first reader: SASS of sampled functions. */
  if (!rc && in->sidecar)
    rc = cli_complete_sass(in->sidecar, path, sidecar_path);
  free(guess);
  if (!rc) {
    mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
    jo.sidecar = in->sidecar;
    rc = mprof_join_build(&in->join, in->trace, &jo);
  }
  if (!rc)
    rc = mprof_diagnose(&in->diagnosis, in->join, NULL);
  if (rc)
    cli_report_close(in);
  return rc;
}

int cli_report_open(cli_report_input *in, const char *path,
                    const char *sidecar_path, int no_sidecar) {
  int rc = cli_report_load(in, path, sidecar_path, no_sidecar);
  return rc ? cli_fail(rc) : CLI_EXIT_OK;
}

void cli_report_close(cli_report_input *in) {
  mprof_diagnosis_free(in->diagnosis);
  mprof_join_free(in->join);
  mprof_sidecar_free(in->sidecar);
  mprof_trace_free(in->trace);
  memset(in, 0, sizeof *in);
}

int cli_report_format(const char *arg, unsigned *format) {
  if (strcmp(arg, "--xml") == 0)
    *format = MPROF_REPORT_XML;
  else if (strcmp(arg, "--json") == 0)
    *format = MPROF_REPORT_JSON;
  else if (strcmp(arg, "--human") == 0 || strcmp(arg, "--text") == 0)
    *format = MPROF_REPORT_TEXT;
  else
    return 0;
  return 1;
}

int cmd_summary(int argc, char **argv) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  const char *trace = NULL, *sidecar = NULL, *color = "auto";
  int no_sidecar = 0, top = 0, all = 0, detail = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long v;
    if (cli_report_format(arg, &ro.format))
      continue;
    if (strcmp(arg, "--kernel") == 0 || strcmp(arg, "-k") == 0) {
      if (!value || !*value)
        return cli_usage_error("summary",
                               "%s needs a kernel name or regular "
                               "expression",
                               arg);
      ro.kernel = value;
      i++;
    } else if (strcmp(arg, "--top") == 0 || strcmp(arg, "--hot") == 0) {
      if (!value || cli_parse_u64(value, &v) != 0 || v == 0)
        return cli_usage_error("summary", "%s needs a positive number", arg);
      if (strcmp(arg, "--top") == 0) {
        ro.max_kernels = (size_t)v;
        top = 1;
      } else {
        ro.max_hot = (size_t)v;
      }
      i++;
    } else if (strcmp(arg, "--all") == 0) {
      ro.max_kernels = (size_t)-1;
      all = 1;
    } else if (strcmp(arg, "--detail") == 0) {
      detail = 1;
    } else if (strcmp(arg, "--full-names") == 0) {
      ro.flags |= MPROF_REPORT_FULL_NAMES;
    } else if (strcmp(arg, "--sidecar") == 0) {
      if (!value)
        return cli_usage_error("summary", "--sidecar needs a file name");
      sidecar = value;
      i++;
    } else if (strcmp(arg, "--no-sidecar") == 0) {
      no_sidecar = 1;
    } else if (strncmp(arg, "--color=", 8) == 0) {
      color = arg + 8;
      if (strcmp(color, "auto") && strcmp(color, "always") &&
          strcmp(color, "never"))
        return cli_usage_error("summary",
                               "--color takes auto, always or never");
    } else if (arg[0] == '-' && arg[1]) {
      return cli_usage_error("summary", "unknown option '%s'", arg);
    } else if (trace) {
      return cli_usage_error("summary", "expected exactly one trace");
    } else {
      trace = arg;
    }
  }
  if (!trace)
    return cli_usage_error("summary", "no trace given");
  if (no_sidecar && sidecar)
    return cli_usage_error("summary",
                           "--sidecar and --no-sidecar contradict each other");
  /* For people: one line per kernel, unless asked for the diagnosis of
   * particular kernels (--kernel, --top N, --detail). */
  if (ro.format == MPROF_REPORT_TEXT && !ro.kernel && !top && !detail) {
    ro.flags |= MPROF_REPORT_BRIEF;
    if (!all)
      ro.max_kernels = CLI_BRIEF_KERNELS;
  }
  cli_report_input in;
  int status = cli_report_open(&in, trace, sidecar, no_sidecar);
  if (status)
    return status;
  if (ro.format == MPROF_REPORT_TEXT && cli_report_color(color))
    ro.flags |= MPROF_REPORT_COLOR;
  int rc = mprof_diagnosis_write(stdout, in.diagnosis, &ro);
  cli_report_close(&in);
  if (rc)
    return cli_fail(rc);
  return CLI_EXIT_OK;
}
