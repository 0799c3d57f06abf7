/*
 * mprof summary — which kernel hurts and why: XML for agents (default),
 * JSON, or a coloured panel for people.
 *
 * SPDX-License-Identifier: MIT
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_report.h"
#include "mprof/mprof.h"

#define CLI_BRIEF_KERNELS 20 /* lines of the brief --human table */
#define CLI_RANGES_SHOWN 20  /* ranges of --by-range without --top/--all */
#define CLI_LINES_SHOWN 10   /* hot lines per kernel of --by-line */
#define CLI_ROOTS_MAX 16     /* --source-root options */

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

int cli_report_load(cli_report_input *in, const cli_trace_set *set,
                    const char *label, const char *sidecar_path, int no_sidecar,
                    unsigned join_flags, size_t *failed) {
  memset(in, 0, sizeof *in);
  size_t failed_at;
  int rc = cli_trace_set_open(set, label, &in->trace, &failed_at);
  if (failed)
    *failed = failed_at;
  if (rc)
    return rc;
  char guess[PATH_MAX + 16];
  if (!no_sidecar && !sidecar_path &&
      mprof_sidecar_path_of(in->trace, guess, sizeof guess) == 0)
    sidecar_path = guess;
  if (sidecar_path)
    rc = mprof_sidecar_load(&in->sidecar, sidecar_path);
  /* The trace's own sidecar, damaged: the trace still opens, read without
   * it (its timeline and samples), and the diagnosis's note says why. One
   * asked for by name is refused. */
  if (rc && rc != MPROF_ENOMEM && sidecar_path == guess) {
    snprintf(in->sidecar_problem, sizeof in->sidecar_problem, "%s",
             mprof_error_last());
    mprof_error_clear();
    in->sidecar = NULL;
    rc = 0;
  }
  /* What `record` left for the first reader: SASS of sampled functions,
   * from the code of the trace whose sidecar this is. */
  if (!rc && in->sidecar) {
    char owner[PATH_MAX + 16];
    snprintf(owner, sizeof owner, "%s", set->paths[0]);
    size_t n = strlen(sidecar_path);
    if (sidecar_path == guess && n > 8)
      snprintf(owner, sizeof owner, "%.*s", (int)(n - 8), guess);
    rc = cli_complete_sass(in->sidecar, owner, sidecar_path);
  }
  if (!rc) {
    mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
    jo.sidecar = in->sidecar;
    jo.flags = join_flags;
    /* A set's traces are joined on every core (the same result as one). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    jo.threads = cpus > 0 ? (unsigned)cpus : 1;
    rc = mprof_join_build(&in->join, in->trace, &jo);
  }
  if (!rc) {
    mprof_diagnose_options dop = MPROF_DIAGNOSE_OPTIONS_INIT;
    dop.sidecar_problem = in->sidecar_problem;
    rc = mprof_diagnose(&in->diagnosis, in->join, &dop);
  }
  if (rc)
    cli_report_close(in);
  return rc;
}

int cli_report_open(cli_report_input *in, const cli_trace_set *set,
                    const char *label, const char *sidecar_path, int no_sidecar,
                    unsigned join_flags) {
  size_t failed;
  int rc = cli_report_load(in, set, label, sidecar_path, no_sidecar, join_flags,
                           &failed);
  return rc ? cli_trace_set_fail(set, rc, failed, mprof_error_last())
            : CLI_EXIT_OK;
}

void cli_report_note_sidecar(const cli_report_input *in) {
  if (in->sidecar_problem[0])
    fprintf(stderr,
            "mprof: note: sidecar left out, the trace read without it: "
            "%s\n",
            in->sidecar_problem);
}

void cli_report_close(cli_report_input *in) {
  mprof_diagnosis_free(in->diagnosis);
  mprof_join_free(in->join);
  mprof_sidecar_free(in->sidecar);
  mprof_trace_free(in->trace);
  memset(in, 0, sizeof *in);
}

int cli_report_option(const char *command, int argc, char **argv, int *i,
                      mprof_report_options *ro, const char **color,
                      unsigned *saw, int *status) {
  const char *arg = argv[*i];
  const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
  unsigned long long v;
  *status = 0;
  if (strcmp(arg, "--xml") == 0) {
    ro->format = MPROF_REPORT_XML;
  } else if (strcmp(arg, "--json") == 0) {
    ro->format = MPROF_REPORT_JSON;
  } else if (strcmp(arg, "--human") == 0 || strcmp(arg, "--text") == 0) {
    ro->format = MPROF_REPORT_TEXT;
  } else if (strcmp(arg, "--kernel") == 0 || strcmp(arg, "-k") == 0) {
    if (!value || !*value)
      *status = cli_usage_error(command,
                                "%s needs a kernel name or regular "
                                "expression",
                                arg);
    ro->kernel = value;
    ++*i;
  } else if (strcmp(arg, "--top") == 0 || strcmp(arg, "--hot") == 0) {
    if (!value || cli_parse_u64(value, &v) != 0 || v == 0)
      *status = cli_usage_error(command, "%s needs a positive number", arg);
    else if (strcmp(arg, "--top") == 0)
      ro->max_kernels = (size_t)v;
    else
      ro->max_hot = (size_t)v;
    *saw |= strcmp(arg, "--top") == 0 ? CLI_SAW_TOP : CLI_SAW_HOT;
    ++*i;
  } else if (strcmp(arg, "--all") == 0) {
    ro->max_kernels = (size_t)-1;
    *saw |= CLI_SAW_ALL;
  } else if (strcmp(arg, "--full-names") == 0) {
    ro->flags |= MPROF_REPORT_FULL_NAMES;
  } else if (strncmp(arg, "--color=", 8) == 0) {
    *color = arg + 8;
    if (strcmp(*color, "auto") && strcmp(*color, "always") &&
        strcmp(*color, "never"))
      *status = cli_usage_error(command, "--color takes auto, always or never");
  } else {
    return 0;
  }
  return 1;
}

static int summary(int argc, char **argv, cli_trace_set *set);

/* --by-range: GPU time per NVTX range (libmprof's ranges.h), with --kernel
 * each range's kernels; no join or diagnosis needed. */
static int summary_by_range(const cli_trace_set *set, const char *label,
                            mprof_report_options *ro, const char *color) {
  mprof_trace *trace = NULL;
  size_t failed = set->count;
  int rc = cli_trace_set_open(set, label, &trace, &failed);
  if (rc)
    return cli_trace_set_fail(set, rc, failed, mprof_error_last());
  mprof_range_times *times = NULL;
  rc = mprof_range_times_build(&times, trace);
  if (!rc) {
    if (ro->format == MPROF_REPORT_TEXT && cli_report_color(color))
      ro->flags |= MPROF_REPORT_COLOR;
    rc = mprof_range_times_write(stdout, times, ro);
  }
  mprof_range_times_free(times);
  mprof_trace_free(trace);
  return rc ? cli_fail(rc) : CLI_EXIT_OK;
}

/* --by-line: the hottest source lines of the selected kernels, with
 * their code from the trace or from disk (libmprof's lines.h). */
static int summary_by_line(const cli_trace_set *set, const char *label,
                           const char *sidecar, int no_sidecar,
                           mprof_report_options *ro, const char *color,
                           const char *const *roots, size_t root_count) {
  cli_report_input in;
  int status = cli_report_open(&in, set, label, sidecar, no_sidecar, 0);
  if (status)
    return status;
  cli_report_note_sidecar(&in);
  mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
  so.roots = roots;
  so.root_count = root_count;
  mprof_sources *sources = NULL;
  int rc = mprof_sources_open(&sources, in.trace, &so);
  if (!rc) {
    if (ro->format == MPROF_REPORT_TEXT && cli_report_color(color))
      ro->flags |= MPROF_REPORT_COLOR;
    rc = mprof_lines_write(stdout, in.join, sources, ro);
  }
  mprof_sources_free(sources);
  cli_report_close(&in);
  return rc ? cli_fail(rc) : CLI_EXIT_OK;
}

int cmd_summary(int argc, char **argv) {
  cli_trace_set set = {NULL, 0};
  int status = summary(argc, argv, &set);
  cli_trace_set_free(&set);
  return status;
}

static int summary(int argc, char **argv, cli_trace_set *set) {
  mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
  const char *sidecar = NULL, *color = "auto";
  int no_sidecar = 0, detail = 0, args = 0, by_range = 0, by_line = 0, status;
  int sorted = 0;
  const char *roots[CLI_ROOTS_MAX];
  size_t root_count = 0;
  unsigned saw = 0;
  unsigned join_flags = 0;
  const char *label = NULL;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (cli_report_option("summary", argc, argv, &i, &ro, &color, &saw,
                          &status)) {
      if (status)
        return status;
      continue;
    }
    if (strcmp(arg, "--detail") == 0) {
      detail = 1;
    } else if (strcmp(arg, "--sort") == 0) {
      if (!value || (strcmp(value, "time") && strcmp(value, "saved")))
        return cli_usage_error("summary", "--sort takes time or saved");
      if (strcmp(value, "saved") == 0)
        ro.flags |= MPROF_REPORT_SORT_SAVED;
      else
        ro.flags &= ~MPROF_REPORT_SORT_SAVED;
      sorted = 1;
      i++;
    } else if (strcmp(arg, "--by-range") == 0) {
      by_range = 1;
    } else if (strcmp(arg, "--by-line") == 0) {
      by_line = 1;
    } else if (strcmp(arg, "--source-root") == 0) {
      if (!value || !*value)
        return cli_usage_error("summary",
                               "--source-root needs a folder (or OLD=NEW)");
      if (root_count == CLI_ROOTS_MAX)
        return cli_usage_error("summary", "at most %d --source-root options",
                               CLI_ROOTS_MAX);
      roots[root_count++] = value;
      i++;
    } else if (strcmp(arg, "--sidecar") == 0) {
      if (!value)
        return cli_usage_error("summary", "--sidecar needs a file name");
      sidecar = value;
      i++;
    } else if (strcmp(arg, "--no-sidecar") == 0) {
      no_sidecar = 1;
    } else if (strcmp(arg, "--by-process") == 0 ||
               strcmp(arg, "--split=process") == 0) {
      join_flags |= MPROF_JOIN_BY_PROCESS;
    } else if (strcmp(arg, "--split") == 0) {
      if (!value || strcmp(value, "process") != 0)
        return cli_usage_error("summary", "--split takes 'process'");
      join_flags |= MPROF_JOIN_BY_PROCESS;
      i++;
    } else if (arg[0] == '-' && arg[1]) {
      return cli_usage_error("summary", "unknown option '%s'", arg);
    } else {
      status = cli_trace_set_resolve(set, "summary", arg);
      if (status)
        return status;
      label = args++ ? NULL : arg;
    }
  }
  if (!set->count)
    return cli_usage_error("summary", "no trace given");
  if (args > 1 || set->count == 1)
    label = NULL; /* several arguments: named after the first trace */
  if (no_sidecar && sidecar)
    return cli_usage_error("summary",
                           "--sidecar and --no-sidecar contradict each other");
  if (root_count && !by_line)
    return cli_usage_error("summary", "--source-root goes with --by-line");
  if (sorted && (by_line || by_range))
    return cli_usage_error("summary", "--sort goes with the kernel summary, "
                                      "not --by-line or --by-range");
  if (by_line && (by_range || detail || join_flags))
    return cli_usage_error("summary",
                           "--by-line takes --kernel, --top N, --hot N, "
                           "--all, --source-root, the sidecar options and "
                           "the output format");
  if (by_line) {
    if (!(saw & CLI_SAW_TOP))
      ro.max_kernels = saw & CLI_SAW_ALL ? (size_t)-1 : 1;
    if (!(saw & CLI_SAW_HOT))
      ro.max_hot = CLI_LINES_SHOWN;
    return summary_by_line(set, label, sidecar, no_sidecar, &ro, color, roots,
                           root_count);
  }
  if (by_range) {
    if (detail || (saw & CLI_SAW_HOT) || sidecar || no_sidecar || join_flags)
      return cli_usage_error("summary",
                             "--by-range takes --top N, --all, --kernel and "
                             "the output format only");
    if (!(saw & CLI_SAW_TOP))
      ro.max_kernels = saw & CLI_SAW_ALL ? (size_t)-1 : CLI_RANGES_SHOWN;
    return summary_by_range(set, label, &ro, color);
  }
  /* For people: one line per kernel, unless asked for the diagnosis of
   * particular kernels (--kernel, --top N, --detail). */
  if (ro.format == MPROF_REPORT_TEXT && !ro.kernel && !(saw & CLI_SAW_TOP) &&
      !detail) {
    ro.flags |= MPROF_REPORT_BRIEF;
    if (!(saw & CLI_SAW_ALL))
      ro.max_kernels = CLI_BRIEF_KERNELS;
  }
  cli_report_input in;
  status = cli_report_open(&in, set, label, sidecar, no_sidecar, join_flags);
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
