/*
 * mprof CLI — helpers shared by the subcommands.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CLI_H
#define MPROF_CLI_H

#include <stdio.h>
#include <time.h>

#include "mprof/sidecar.h"
#include "mprof/trace.h"

/* Exit statuses: the documented contract of every subcommand. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1 /* the operation failed */
#define CLI_EXIT_USAGE 2  /* bad arguments or bad input */
#define CLI_EXIT_GATE 3   /* diff --fail-above tripped */

typedef struct cli_command {
  const char *name;
  const char *synopsis; /* one line for `mprof help` */
  const char *usage;    /* full text for `mprof help CMD` and CMD --help */
  int (*run)(int argc, char **argv); /* argv[0] is the command name */
  /* What shell completion offers (`mprof --complete-spec` prints it;
   * tools/gen-completion.sh turns it into bash and zsh completion), words
   * separated by spaces: "sub:NAME" a subcommand; "arg:KIND" what the
   * operands are (trace: .mprof/.mkprof files and folders; file; command:
   * a program and its arguments after "--"); "OPT" a flag; "OPT:KIND" an
   * option taking a value, KIND one of file, dir, value, duration, size or
   * a comma-separated list of the words it accepts. An OPT ending in "="
   * takes its value in the same word (--color=WHEN). Every OPT must be in
   * the command's usage text (tests/cli/test_completion.sh checks it). */
  const char *complete;
} cli_command;

/* Print "mprof: MESSAGE" for the last libmprof error; return the exit
 * status for library status @p rc (2 for bad input, 1 otherwise). */
int cli_fail(int rc);
/* The exit status for library status @p rc, as cli_fail() returns it. */
int cli_exit_status(int rc);

/* Print "mprof CMD: MESSAGE" and a hint to run --help; return 2. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);

/* Print the usage of @p command to @p out. */
void cli_print_usage(const char *command, FILE *out);

/* The largest time, in ns, that a time option takes (either sign): 2^62,
 * about 146 years, so that added to a trace's times (the renderer caps
 * those at 2^62 too) it stays inside int64. */
#define CLI_MAX_TIME_NS 4611686018427387904.0

/* Parse a non-negative integer option value (digits only: no sign, no
 * space; at most 2^64 - 1); 0 on success. */
int cli_parse_u64(const char *text, unsigned long long *out);

/** 1 when @p text is a PM sampling interval record accepts (1us..1s). */
int cli_valid_pm_interval(const char *text);

/* The capture window @p c of @p t in one line, without a newline: what
 * was recorded, when, and why it ended (cmd_info.c; `info` and `record`'s
 * recap print it). */
void cli_describe_capture(char *out, size_t size, const mprof_trace *t,
                          const mprof_capture_record *c);

/* The commands, for `mprof help`. */
const cli_command *cli_commands(size_t *count);

/* Locating tools (locate.c). Each returns 0 and fills @p out, or -1. */
int cli_self_dir(char *out, size_t size);
/* A library of mprof's, @p name: $@p env_name when set (it must be
 * readable), else beside the binary's build or install tree, else beside
 * what `mprof setup` built. 0 and its path in @p out, or -1. */
int cli_find_library(char *out, size_t size, const char *name,
                     const char *env_name);
int cli_find_producer(char *out, size_t size);
int cli_setup_path(char *out, size_t size);
int cli_find_tool(const char *name, const char *env_override, char *out,
                  size_t size);
int cli_find_cupti(char *out, size_t size);
/* CUDA_HOME, CUDA_PATH or /usr/local/cuda; NULL when none exists. */
const char *cli_cuda_home(void);

/* Progress on a terminal (progress.c): a line on stderr once the work has
 * taken 0.5 s, nothing when stderr is not a terminal or @p quiet. */
typedef struct cli_progress {
  double started;     /* the work began */
  double first, last; /* first and last report from libmprof */
  size_t runs;        /* disassembly batches (a cubin, or code of several) */
  int tty;            /* stderr is a terminal and not quiet */
  int shown;          /* a line is on the terminal */
} cli_progress;
void cli_progress_start(cli_progress *p, int quiet);
/* A mprof_sass_options progress callback; @p userdata is a cli_progress. */
void cli_progress_report(void *userdata, const char *what, size_t done,
                         size_t total);
void cli_progress_clear(cli_progress *p);
/* Seconds on the monotonic clock. */
double cli_seconds(void);
/* MPROF_VERBOSE=1: say where the time goes. */
int cli_verbose(void);

/* The SASS of sampled functions that `record` left for later
 * (mprof_sass_complete), with progress; saved to @p sidecar_path.
 * Returns 0 or a libmprof status. */
int cli_complete_sass(mprof_sidecar *sidecar, const char *trace_path,
                      const char *sidecar_path);

/* After a capture: sort launches, disassemble and write TRACE.pc.json
 * (postprocess.c). Returns 0 or an exit status. */
#define CLI_POST_NO_SASS 0x1u
#define CLI_POST_QUIET 0x2u
#define CLI_POST_DROP_CODE 0x4u
#define CLI_POST_SASS_NOW 0x8u /* disassemble sampled functions now */
int cli_postprocess(const char *trace, unsigned flags);
/* cli_postprocess(), for a trace whose process @p pid was killed by signal
 * @p signo (as waitpid() said): its PROCESSES record, when it has no end,
 * says so. */
int cli_postprocess_ended(const char *trace, unsigned flags, long pid,
                          int signo);
/* "SIGKILL" for 9, ...; "a signal" for one without a name here. */
const char *cli_signal_name(int signo);

/* Embed the source files of @p trace's sampled code (mprof_sources_embed)
 * with the --source-root mappings @p roots, and say what was embedded and
 * what was missing (not with CLI_POST_QUIET). A failure is a warning: the
 * trace stays as it was. Returns 0. */
#define CLI_SOURCE_ROOTS_MAX 16
int cli_embed_sources(const char *trace, const char *const *roots,
                      size_t root_count, unsigned flags);

/* `mprof record source` (cmd_source.c): set MPROF_SOURCE_OUTPUT to
 * PATTERN.source in the child; after the run merge TRACE.source into TRACE.
 * cli_source_merge returns 0 or an exit status. */
void cli_source_env(const char *pattern);
int cli_source_merge(const char *trace, unsigned flags);

/* The traces a command was given (trace_set.c): a directory stands for the
 * .mprof files in it, in name order, a glob pattern that names no file for
 * the files it matches; several traces are one run, opened as their
 * merged trace (mprof_trace_open_merged()). */
typedef struct cli_trace_set {
  char **paths;
  size_t count;
} cli_trace_set;
struct mprof_trace;
int cli_trace_set_add(cli_trace_set *set, const char *arg); /* -1: no memory */
/* cli_trace_set_add(), and one line with the fix, exit status 2, when
 * @p arg is a directory without traces or a pattern that matches none. */
int cli_trace_set_resolve(cli_trace_set *set, const char *command,
                          const char *arg);
/* Open @p set as one trace (the trace itself when it is one); a merged set
 * is named "LABEL (N traces)", or "FIRST + N more" without a label. A
 * libmprof status; *failed is the index of the trace that did not open,
 * else set->count. */
int cli_trace_set_open(const cli_trace_set *set, const char *label,
                       struct mprof_trace **out, size_t *failed);
/* One line on stderr for a failed cli_trace_set_open(); the exit status. */
int cli_trace_set_fail(const cli_trace_set *set, int rc, size_t failed,
                       const char *message);
void cli_trace_set_free(cli_trace_set *set);
/* `mprof record blocks` (cmd_blocks.c): find libmprof-blocks.so; set up
 * the child's environment (the block producer preloaded, writing
 * PATTERN.source, reporting to MANIFEST; no CUPTI producer, which cannot
 * share the process); after the run turn each process's NAME.source into
 * its trace NAME (cli_blocks_finish_file), or, when no process reported,
 * each new PATTERN.source (cli_blocks_finish). Both return 0 or an exit
 * status. */
int cli_find_blocks(char *out, size_t size);
void cli_blocks_env(const char *pattern, const char *blocks_lib,
                    const char *manifest, int memory);
int cli_blocks_finish(const char *pattern, time_t started, unsigned flags);
int cli_blocks_finish_file(const char *source, unsigned flags);
/* The glob(3) pattern matching every file `record -o PATTERN` writes, with
 * @p suffix appended: %p becomes '*', %% a '%', glob characters are
 * escaped; cut short rather than overflow @p size (cmd_record.c). */
void cli_output_glob(char *out, size_t size, const char *pattern,
                     const char *suffix);

#define CLI_DECLARE(fn) int fn(int argc, char **argv)
CLI_DECLARE(cmd_info);
CLI_DECLARE(cmd_synth);
CLI_DECLARE(cmd_summary);
CLI_DECLARE(cmd_diff);
CLI_DECLARE(cmd_sass);
CLI_DECLARE(cmd_record);
CLI_DECLARE(cmd_doctor);
CLI_DECLARE(cmd_setup);
CLI_DECLARE(cmd_source);
CLI_DECLARE(cmd_mkprof);
CLI_DECLARE(cmd_view);
CLI_DECLARE(cmd_export);
CLI_DECLARE(cmd_merge);
CLI_DECLARE(cmd_ranks);

#endif /* MPROF_CLI_H */
