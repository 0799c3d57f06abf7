/*
 * mprof CLI — what `summary` and `diff` share: opening a trace with its
 * sidecar, joining and diagnosing it, and choosing the output format.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CLI_REPORT_H
#define MPROF_CLI_REPORT_H

#include "cli.h"
#include "mprof/mprof.h"

typedef struct cli_report_input {
  mprof_trace *trace;
  mprof_sidecar *sidecar; /* NULL when there is none */
  mprof_join *join;
  mprof_diagnosis *diagnosis;
  /* Why the trace's own sidecar was left out ("" when it was not): it is
   * damaged, so the trace is read without it, and the diagnosis's
   * no_sidecar note says so. */
  char sidecar_problem[1024];
} cli_report_input;

/* Open @p set as one run (cli_trace_set_open(), named after @p label),
 * its sidecar (@p sidecar_path, else PATH.pc.json of its first trace that
 * has one, unless @p no_sidecar), join (with @p join_flags, MPROF_JOIN_*)
 * and diagnose it. A damaged PATH.pc.json is left out (sidecar_problem);
 * a damaged @p sidecar_path, asked for by name, is an error. Returns 0
 * or a libmprof status, with mprof_error_last() set on this thread and
 * *failed the trace that did not open (set->count for none; @p failed may
 * be NULL). */
int cli_report_load(cli_report_input *in, const cli_trace_set *set,
                    const char *label, const char *sidecar_path, int no_sidecar,
                    unsigned join_flags, size_t *failed);

/* cli_report_load(), then 0 or the exit status after printing one line on
 * stderr. */
int cli_report_open(cli_report_input *in, const cli_trace_set *set,
                    const char *label, const char *sidecar_path, int no_sidecar,
                    unsigned join_flags);
void cli_report_close(cli_report_input *in);

/* For output that carries no diagnosis notes (exports, diffs, --by-line):
 * the sidecar left out, as one line on stderr; nothing when none was. */
void cli_report_note_sidecar(const cli_report_input *in);

/* What cli_report_option() saw, for a command's own rules. */
enum { CLI_SAW_TOP = 1, CLI_SAW_HOT = 2, CLI_SAW_ALL = 4 };

/* The options `summary` and `diff` share: --xml, --json, --human (--text),
 * --kernel (-k) RE, --top N, --hot N, --all, --full-names and
 * --color=WHEN. Returns 0 when argv[*i] is none of them; otherwise 1, with
 * @p ro, *color and *saw (CLI_SAW_*) updated and *i moved past a value, or
 * with *status the exit status after a usage error for @p command. */
int cli_report_option(const char *command, int argc, char **argv, int *i,
                      mprof_report_options *ro, const char **color,
                      unsigned *saw, int *status);

/* Colour for --human: @p when is "always", "never" or "auto" (a terminal
 * on stdout and NO_COLOR unset or empty). */
int cli_report_color(const char *when);

#endif /* MPROF_CLI_REPORT_H */
