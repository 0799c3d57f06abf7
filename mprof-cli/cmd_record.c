/*
 * mprof record — run a program under the CUPTI producer, then turn the
 * capture into a trace with its sidecar.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"

typedef struct record_options {
  const char *output;
  const char *pc_mode;
  const char *pc_period;
  const char *pc_buffer;
  const char *kernel_regex;
  const char *pm; /* "on", "off", "both" (two runs) or "alternate" */
  const char *alternate_every;
  const char *pm_interval; /* a duration, e.g. 10us */
  const char *pm_counters; /* default, sol, or CUPTI metric names */
  /* The capture window (producers/cupti/capture.h); NULL: not given. */
  const char *capture_range;
  const char *range_skip, *range_count;
  const char *kernel_skip, *kernel_count;
  const char *delay, *duration; /* seconds */
  const char *max_size;
  int no_sass;
  int sass_now; /* disassemble before returning, not on first use */
  int drop_code;
  int quiet;
  int source; /* `mprof record source`: also collect producers/source spans */
  int blocks; /* `mprof record blocks`: also record every block (sanitizer) */
  int memory; /* `record blocks --memory`: count global-memory accesses */
  int no_source; /* --no-source: embed no source files */
  const char *roots[CLI_SOURCE_ROOTS_MAX]; /* --source-root */
  size_t root_count;
  char blocks_lib[PATH_MAX];
  char **command;
} record_options;

/* Seconds as the window options take them: a decimal number >= 0. */
static int parse_seconds(const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno || end == text || *end || !isfinite(value) || value < 0 ||
      value > 1e9)
    return -1;
  *out = value;
  return 0;
}

/* A size: digits with an optional K, M, G or T (binary) and B, as the
 * producer's MPROF_MAX_SIZE reads it. */
static int parse_size(const char *text, unsigned long long *out) {
  char *end = NULL;
  if (!text || *text < '0' || *text > '9')
    return -1;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  unsigned shift = 0;
  if (*end && strchr("kK", *end))
    shift = 10;
  else if (*end && strchr("mM", *end))
    shift = 20;
  else if (*end && strchr("gG", *end))
    shift = 30;
  else if (*end && strchr("tT", *end))
    shift = 40;
  if (shift) {
    end++;
    if (*end == 'i')
      end++;
  }
  if (*end == 'B' || *end == 'b')
    end++;
  if (errno || *end || (shift && value > (~0ull >> shift)))
    return -1;
  *out = value << shift;
  return 0;
}

/* --capture-range's syntax (the producer's capture.c is the authority; this
 * catches typos before CMD runs). */
static int check_capture_range(const char *text) {
  if (strcmp(text, "none") == 0 || strcmp(text, "cudaProfilerApi") == 0)
    return 0;
  if (strncmp(text, "nvtx:", 5) != 0)
    return cli_usage_error("record",
                           "--capture-range takes none, cudaProfilerApi, "
                           "nvtx:NAME[@DOMAIN] or nvtx:/REGEX/[@DOMAIN], not "
                           "'%s'",
                           text);
  const char *name = text + 5;
  if (name[0] == '/') {
    const char *close = strrchr(name + 1, '/');
    if (!close || (close[1] && close[1] != '@') ||
        (close[1] == '@' && !close[2]) || close == name + 1)
      return cli_usage_error("record",
                             "--capture-range %s: write a regex as "
                             "nvtx:/REGEX/ or nvtx:/REGEX/@DOMAIN",
                             text);
    char pattern[800];
    snprintf(pattern, sizeof pattern, "%.*s", (int)(close - name - 1),
             name + 1);
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
      return cli_usage_error("record",
                             "--capture-range %s: '%s' is not a POSIX "
                             "extended regex",
                             text, pattern);
    regfree(&re);
    return 0;
  }
  const char *at = strrchr(name, '@');
  if (at == name || !*name || (at && !at[1]))
    return cli_usage_error("record",
                           "--capture-range %s: name the range and, after "
                           "'@', its domain (nvtx:step, nvtx:step@MyDomain, "
                           "nvtx:step@* for any domain)",
                           text);
  return 0;
}

/* The window options: values, and which go together. */
static int check_window(const record_options *o) {
  static const struct {
    const char *name;
    size_t offset;
    int positive;
  } counts[] = {
      {"--range-skip", offsetof(record_options, range_skip), 0},
      {"--range-count", offsetof(record_options, range_count), 1},
      {"--kernel-skip", offsetof(record_options, kernel_skip), 0},
      {"--kernel-count", offsetof(record_options, kernel_count), 1},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    const char *value =
        *(const char *const *)((const char *)o + counts[i].offset);
    unsigned long long n;
    if (value && (cli_parse_u64(value, &n) != 0 || n > 0x7fffffffffffffffull ||
                  (counts[i].positive && n == 0)))
      return cli_usage_error("record", "%s takes a whole number%s, not '%s'",
                             counts[i].name, counts[i].positive ? " >= 1" : "",
                             value);
  }
  double seconds;
  if (o->delay && parse_seconds(o->delay, &seconds) != 0)
    return cli_usage_error("record",
                           "--delay takes seconds (e.g. 600 or 2.5), not '%s'",
                           o->delay);
  if (o->duration &&
      (parse_seconds(o->duration, &seconds) != 0 || seconds < 1e-9))
    return cli_usage_error("record",
                           "--duration takes seconds above 0 (e.g. 30 or "
                           "0.5), not '%s'",
                           o->duration);
  unsigned long long bytes;
  if (o->max_size && (parse_size(o->max_size, &bytes) != 0 || bytes == 0))
    return cli_usage_error("record",
                           "--max-size takes a size (e.g. 500M, 2G), not '%s'",
                           o->max_size);
  int ranges = o->capture_range && strcmp(o->capture_range, "none") != 0;
  if (o->capture_range) {
    int rc = check_capture_range(o->capture_range);
    if (rc)
      return rc;
  }
  if ((o->range_skip || o->range_count) && !ranges)
    return cli_usage_error("record",
                           "%s counts ranges: add --capture-range "
                           "cudaProfilerApi or --capture-range nvtx:NAME",
                           o->range_skip ? "--range-skip" : "--range-count");
  if ((o->kernel_skip || o->kernel_count) && ranges)
    return cli_usage_error("record",
                           "%s counts launches from the start: drop "
                           "--capture-range, or use --range-skip/--range-count",
                           o->kernel_skip ? "--kernel-skip" : "--kernel-count");
  int window = o->capture_range || o->range_skip || o->range_count ||
               o->kernel_skip || o->kernel_count || o->delay || o->duration ||
               o->max_size;
  if (window && (o->blocks || o->source))
    return cli_usage_error("record",
                           "the capture window options work with the CUPTI "
                           "producer only; 'record %s' records the whole run",
                           o->blocks ? "blocks" : "source");
  return 0;
}

static int parse_options(record_options *o, int argc, char **argv) {
  int rc;
  memset(o, 0, sizeof *o);
  o->output = "trace.mprof";
  o->pc_mode = "continuous";
  o->pm = "off";
  int i = 1;
  if (argc > 1 && strcmp(argv[1], "source") == 0) { /* mprof record source */
    o->source = 1;
    i = 2;
  } else if (argc > 1 && strcmp(argv[1], "blocks") == 0) {
    o->blocks = 1; /* the block producer alone: CUPTI cannot join it */
    i = 2;
  }
  for (; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (arg[0] != '-')
      break; /* the command starts here */
    const char **slot = NULL;
    if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0)
      slot = &o->output;
    else if (strcmp(arg, "--pc-mode") == 0)
      slot = &o->pc_mode;
    else if (strcmp(arg, "--pc-period") == 0)
      slot = &o->pc_period;
    else if (strcmp(arg, "--pc-buffer") == 0)
      slot = &o->pc_buffer;
    else if (strcmp(arg, "--kernel") == 0)
      slot = &o->kernel_regex;
    else if (strcmp(arg, "--pm") == 0)
      slot = &o->pm;
    else if (strcmp(arg, "--pm-interval") == 0)
      slot = &o->pm_interval;
    else if (strcmp(arg, "--pm-counters") == 0)
      slot = &o->pm_counters;
    else if (strcmp(arg, "--alternate-every") == 0)
      slot = &o->alternate_every;
    else if (strcmp(arg, "--capture-range") == 0)
      slot = &o->capture_range;
    else if (strcmp(arg, "--range-skip") == 0)
      slot = &o->range_skip;
    else if (strcmp(arg, "--range-count") == 0)
      slot = &o->range_count;
    else if (strcmp(arg, "--kernel-skip") == 0)
      slot = &o->kernel_skip;
    else if (strcmp(arg, "--kernel-count") == 0)
      slot = &o->kernel_count;
    else if (strcmp(arg, "--delay") == 0)
      slot = &o->delay;
    else if (strcmp(arg, "--duration") == 0)
      slot = &o->duration;
    else if (strcmp(arg, "--max-size") == 0)
      slot = &o->max_size;
    else if (strcmp(arg, "--no-sass") == 0) {
      o->no_sass = 1;
      continue;
    } else if (strcmp(arg, "--sass-now") == 0) {
      o->sass_now = 1;
      continue;
    } else if (strcmp(arg, "--drop-code") == 0) {
      o->drop_code = 1;
      continue;
    } else if (strcmp(arg, "--memory") == 0) {
      o->memory = 1;
      continue;
    } else if (strcmp(arg, "--no-source") == 0) {
      o->no_source = 1;
      continue;
    } else if (strcmp(arg, "--source-root") == 0) {
      if (!value || !*value)
        return cli_usage_error("record",
                               "--source-root needs a folder (or OLD=NEW)");
      if (o->root_count == CLI_SOURCE_ROOTS_MAX)
        return cli_usage_error("record", "at most %d --source-root options",
                               CLI_SOURCE_ROOTS_MAX);
      o->roots[o->root_count++] = value;
      i++;
      continue;
    } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      o->quiet = 1;
      continue;
    } else
      return cli_usage_error("record", "unknown option '%s'", arg);
    if (!value || !*value)
      return cli_usage_error("record", "%s needs a value", arg);
    *slot = value;
    i++;
  }
  if (i >= argc)
    return cli_usage_error("record", "no command given; usage: mprof record "
                                     "[OPTIONS] -- CMD [ARGS]");
  o->command = argv + i;
  if (o->memory && !o->blocks)
    return cli_usage_error("record",
                           "--memory counts memory accesses through the "
                           "block producer: use 'mprof record blocks "
                           "--memory --kernel REGEX -- CMD'");
  if (o->memory && !o->kernel_regex)
    return cli_usage_error("record",
                           "--memory needs --kernel REGEX: it instruments "
                           "every global-memory access, so name the kernel "
                           "to look at (e.g. --kernel 'gemm')");
  if (strcmp(o->pc_mode, "continuous") && strcmp(o->pc_mode, "serialized") &&
      strcmp(o->pc_mode, "off"))
    return cli_usage_error("record",
                           "--pc-mode must be continuous, serialized or off, "
                           "not '%s'",
                           o->pc_mode);
  if (strcmp(o->pm, "on") && strcmp(o->pm, "off") && strcmp(o->pm, "both") &&
      strcmp(o->pm, "alternate"))
    return cli_usage_error(
        "record", "--pm must be on, off, both or alternate, not '%s'", o->pm);
  int alternate = strcmp(o->pm, "alternate") == 0;
  if (alternate && (!o->capture_range || strcmp(o->capture_range, "none") == 0))
    return cli_usage_error("record",
                           "--pm alternate takes turns between the repeats of "
                           "a capture window: add --capture-range (e.g. "
                           "nvtx:step --range-count 4), or use --pm both");
  if (alternate && strcmp(o->pc_mode, "continuous"))
    return cli_usage_error("record",
                           "--pm alternate takes turns with continuous PC "
                           "sampling: drop --pc-mode %s",
                           o->pc_mode);
  if (o->alternate_every && !alternate)
    return cli_usage_error("record",
                           "--alternate-every goes with --pm alternate");
  if (o->alternate_every) {
    unsigned long long n;
    if (cli_parse_u64(o->alternate_every, &n) != 0 || n < 1 || n > 1000000)
      return cli_usage_error("record",
                             "--alternate-every takes a number of repeats, "
                             "1..1000000, not '%s'",
                             o->alternate_every);
  }
  if (strcmp(o->pm, "both") == 0 && strcmp(o->pc_mode, "off") == 0)
    return cli_usage_error("record",
                           "--pm both records a PC-sampled run and a "
                           "PM-sampled one: drop --pc-mode off, or use "
                           "--pm on");
  if (strcmp(o->pm, "both") == 0 && (o->blocks || o->source))
    return cli_usage_error("record",
                           "--pm both runs CMD twice under the CUPTI "
                           "producer; record %s in a run of its own",
                           o->blocks ? "blocks" : "source");
  if (o->pm_interval && !cli_valid_pm_interval(o->pm_interval))
    return cli_usage_error("record",
                           "--pm-interval takes a duration from 1us to 1s "
                           "(e.g. 10us, 250us, 1ms), not '%s'",
                           o->pm_interval);
  if (o->pm_counters && (!o->pm_counters[0] || strspn(o->pm_counters, " ,\t") ==
                                                   strlen(o->pm_counters)))
    return cli_usage_error("record",
                           "--pm-counters takes 'default', 'sol' or a comma "
                           "list of CUPTI metric names, not '%s'",
                           o->pm_counters);
  rc = check_window(o);
  if (rc)
    return rc;
  if (o->pc_period) {
    unsigned long long n;
    if (cli_parse_u64(o->pc_period, &n) != 0 || n < 5 || n > 31)
      return cli_usage_error("record",
                             "--pc-period takes the exponent N of 2^N cycles, "
                             "5..31, not '%s'",
                             o->pc_period);
  }
  return 0;
}

/* Expand %h now; %p stays for the producer, which knows its own pid. */
static int output_pattern(char *out, size_t size, const char *output) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  char expanded[PATH_MAX];
  size_t n = 0;
  for (const char *p = output; *p; p++) {
    const char *piece = NULL;
    char one[3] = {0};
    if (p[0] == '%' && p[1] == 'h') {
      piece = host;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      piece = "%%";
      p++;
    } else {
      one[0] = *p;
      piece = one;
    }
    size_t len = strlen(piece);
    if (n + len + 1 > sizeof expanded)
      return -1;
    memcpy(expanded + n, piece, len);
    n += len;
  }
  expanded[n] = '\0';
  /* Absolute, so a program that changes directory still writes here. */
  if (expanded[0] == '/') {
    snprintf(out, size, "%s", expanded);
    return 0;
  }
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd))
    return -1;
  int w = snprintf(out, size, "%s/%s", cwd, expanded);
  return w > 0 && (size_t)w < size ? 0 : -1;
}

static void set_env(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
}

/* Seconds as the producer's duration ("2.5" -> "2.5s"). */
static void set_seconds(const char *name, const char *seconds) {
  if (!seconds)
    return;
  char value[64];
  snprintf(value, sizeof value, "%ss", seconds);
  setenv(name, value, 1);
}

/* Make sure the producer can load libcupti even without an rpath. */
static void extend_library_path(void) {
  char cupti[PATH_MAX];
  if (cli_find_cupti(cupti, sizeof cupti) != 0)
    return;
  char *slash = strrchr(cupti, '/');
  *slash = '\0';
  const char *old = getenv("LD_LIBRARY_PATH");
  size_t len = strlen(cupti) + (old ? strlen(old) : 0) + 2;
  char *value = (char *)malloc(len);
  if (!value)
    return;
  snprintf(value, len, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "",
           cupti);
  setenv("LD_LIBRARY_PATH", value, 1);
  free(value);
}

/* The program's pid while it runs, for the forwarding handler. */
static volatile sig_atomic_t child_pid;
static pid_t last_child;

/* SIGINT/SIGTERM/SIGHUP sent to `record` go on to the program, which then
 * ends as it would have without mprof (and its traces get written).
 * Ctrl-C in a terminal reaches the program by itself (same process group):
 * the kernel sends that one, and passing it on would deliver it twice. */
static void forward_signal(int signo, siginfo_t *info, void *context) {
  (void)context;
  int saved = errno;
  if (child_pid > 0 && !(info && info->si_code == SI_KERNEL))
    kill((pid_t)child_pid, signo);
  errno = saved;
}

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define FORWARDED_COUNT (sizeof forwarded_signals / sizeof forwarded_signals[0])

/* Run the command; returns its wait status, or -1 with errno from exec. */
static int run_command(const record_options *o, const char *producer,
                       const char *pattern, const char *manifest,
                       int *exec_errno) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0)
    return -1;
  struct sigaction forward, old[FORWARDED_COUNT];
  memset(&forward, 0, sizeof forward);
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < FORWARDED_COUNT; i++)
    sigaction(forwarded_signals[i], &forward, &old[i]);
  pid_t pid = fork();
  if (pid == 0) {
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
      sigaction(forwarded_signals[i], &old[i], NULL);
    close(pipefd[0]);
    if (o->blocks) {
      cli_blocks_env(pattern, o->blocks_lib, manifest, o->memory);
      set_env("MPROF_KERNEL_REGEX", o->kernel_regex);
      execvp(o->command[0], o->command);
      int err = errno;
      if (write(pipefd[1], &err, sizeof err) < 0)
        _exit(127);
      _exit(127);
    }
    setenv("CUDA_INJECTION64_PATH", producer, 1);
    setenv("NVTX_INJECTION64_PATH", producer, 1);
    setenv("MPROF_OUTPUT", pattern, 1);
    setenv("MPROF_MANIFEST", manifest, 1);
    setenv("MPROF_PC_MODE", o->pc_mode, 1);
    set_env("MPROF_PC_PERIOD", o->pc_period);
    set_env("MPROF_PC_HW_BUFFER", o->pc_buffer);
    set_env("MPROF_KERNEL_REGEX", o->kernel_regex);
    setenv("MPROF_PM", o->pm, 1);
    set_env("MPROF_PM_INTERVAL", o->pm_interval);
    set_env("MPROF_PM_METRICS", o->pm_counters);
    set_env("MPROF_ALTERNATE_EVERY", o->alternate_every);
    set_env("MPROF_CAPTURE_RANGE", o->capture_range);
    set_env("MPROF_RANGE_SKIP", o->range_skip);
    set_env("MPROF_RANGE_COUNT", o->range_count);
    set_env("MPROF_KERNEL_SKIP", o->kernel_skip);
    set_env("MPROF_KERNEL_COUNT", o->kernel_count);
    set_env("MPROF_MAX_SIZE", o->max_size);
    set_seconds("MPROF_DELAY", o->delay);
    set_seconds("MPROF_DURATION", o->duration);
    if (o->no_sass)
      setenv("MPROF_NO_SASS", "1", 1);
    if (o->source)
      cli_source_env(pattern);
    extend_library_path();
    execvp(o->command[0], o->command);
    int err = errno;
    if (write(pipefd[1], &err, sizeof err) < 0)
      _exit(127);
    _exit(127);
  }
  close(pipefd[1]);
  if (pid < 0) {
    close(pipefd[0]);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
      sigaction(forwarded_signals[i], &old[i], NULL);
    return -1;
  }
  child_pid = pid;
  last_child = pid;
  int err = 0;
  ssize_t got;
  while ((got = read(pipefd[0], &err, sizeof err)) < 0 && errno == EINTR)
    ;
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (size_t i = 0; i < FORWARDED_COUNT; i++)
    sigaction(forwarded_signals[i], &old[i], NULL);
  if (got == (ssize_t)sizeof err) {
    *exec_errno = err;
    return -1;
  }
  return status;
}

static void print_count(FILE *out, double value) {
  if (value >= 1e9)
    fprintf(out, "%.2fG ", value / 1e9);
  else if (value >= 1e6)
    fprintf(out, "%.2fM ", value / 1e6);
  else if (value >= 1e4)
    fprintf(out, "%.1fk ", value / 1e3);
  else
    fprintf(out, "%.0f ", value);
}

/* Recap one trace and say what to change when something was lost. */
static int recap(const char *path, const record_options *o) {
  mprof_trace *t;
  int rc = mprof_trace_open(&t, path, NULL);
  if (rc)
    return cli_fail(rc);
  size_t kernels, launches, pcs, cubins;
  mprof_trace_kernels(t, &kernels);
  mprof_trace_launches(t, &launches);
  mprof_trace_pc_samples(t, &pcs);
  mprof_trace_cubins(t, &cubins);
  /* Each sample once (its *_not_issued twin not added), as `summary`,
   * `info` and `sass` count them. */
  uint64_t samples = mprof_trace_pc_sample_total(t, NULL);
  uint64_t dropped = mprof_trace_drop_total(t, MPROF_DROP_PC_DROPPED_SAMPLES);
  uint64_t full = mprof_trace_drop_total(t, MPROF_DROP_PC_HW_BUFFER_FULL);
  uint64_t activity = mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_RECORDS);
  uint64_t no_ts = mprof_trace_drop_total(t, MPROF_DROP_ACTIVITY_NO_TIMESTAMP);
  uint64_t writer = mprof_trace_drop_total(t, MPROF_DROP_WRITER_RECORDS);
  FILE *out = stderr;
  if (!o->quiet) {
    fprintf(out, "mprof: %s: %zu kernel%s, %zu launch%s, ", path, kernels,
            kernels == 1 ? "" : "s", launches, launches == 1 ? "" : "es");
    print_count(out, (double)samples);
    fprintf(out, "PC samples, %zu module%s, %.1f MB\n", cubins,
            cubins == 1 ? "" : "s", (double)mprof_trace_file_size(t) / 1e6);
  }
  /* The window it holds, and why it ended (always: a window that never
   * opened or a --max-size stop is what the user must hear). */
  size_t window_count = 0;
  const mprof_capture_record *windows = mprof_trace_captures(t, &window_count);
  for (size_t i = 0; i < window_count; i++) {
    char line[1024];
    cli_describe_capture(line, sizeof line, t, &windows[i]);
    fprintf(out, "mprof: window: %s\n", line);
  }
  const char *pc_error = mprof_trace_meta(t, "pc.error");
  if (pc_error && strcmp(pc_error, "insufficient_privileges") == 0)
    fprintf(
        out,
        "mprof: warning: PC sampling is not permitted for this user "
        "(the driver has NVreg_RestrictProfilingToAdminUsers=1): run as "
        "root, or add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0'"
        " to /etc/modprobe.d/nvidia-profiling.conf and reload the driver\n");
  else if (pc_error && strcmp(pc_error, "sampled_by_another_process") == 0)
    fprintf(out,
            "mprof: %s: %s (one process at a time can PC-sample a GPU); its "
            "timeline is complete\n",
            path,
            mprof_trace_meta(t, "pc.note") ? mprof_trace_meta(t, "pc.note")
                                           : "PC sampling was taken");
  else if (pc_error && *pc_error) {
    /* With several GPUs, name the ones that went unsampled. */
    size_t device_count, named = 0;
    const mprof_device_record *devices = mprof_trace_devices(t, &device_count);
    for (size_t i = 0; device_count > 1 && i < device_count; i++) {
      char key[64];
      snprintf(key, sizeof key, "pc.device.%u.error", devices[i].id);
      const char *why = mprof_trace_meta(t, key);
      if (why && *why) {
        fprintf(out, "mprof: warning: PC sampling failed on device %u: %s\n",
                devices[i].id, why);
        named++;
      }
    }
    if (!named)
      fprintf(out, "mprof: warning: PC sampling failed: %s\n", pc_error);
  }
  size_t pm_samples;
  mprof_trace_pm_samples(t, &pm_samples);
  const char *pm_error = mprof_trace_meta(t, "pm.error");
  const char *pm_mode = mprof_trace_meta(t, "pm.mode");
  uint64_t pm_overflow = mprof_trace_drop_total(t, MPROF_DROP_PM_OVERFLOW);
  if (!o->quiet && pm_samples)
    fprintf(out, "mprof: %zu PM samples every %s ns\n", pm_samples,
            mprof_trace_meta(t, "pm.interval_ns")
                ? mprof_trace_meta(t, "pm.interval_ns")
                : "?");
  const char *stuck = mprof_trace_meta(t, "pm.exit_phase");
  if (pm_error && pm_samples && strcmp(pm_error, "decode_behind") == 0)
    fprintf(out,
            "mprof: warning: decoding PM samples could not keep up with the "
            "GPU: the %zu samples decoded by exit are kept, later ones are "
            "lost; use a longer --pm-interval\n",
            pm_samples);
  else if (pm_error && strcmp(pm_error, "exit_timeout") == 0) {
    const char *waited = mprof_trace_meta(t, "pm.exit_wait_ms");
    fprintf(out,
            "mprof: warning: PM sampling did not stop within %s ms of the "
            "program's exit (%s had not returned): the %zu samples decoded "
            "by then are kept\n",
            waited && *waited ? waited : "?", stuck && *stuck ? stuck : "CUPTI",
            pm_samples);
  } else if (pm_error && *pm_error)
    fprintf(out,
            "mprof: warning: PM sampling (hardware counters) failed: %s; "
            "verdicts fall back to stall reasons\n",
            pm_error);
  else if (pm_mode && strcmp(pm_mode, "on") == 0 && !pm_samples && launches)
    fprintf(out, "mprof: warning: PM sampling produced no samples\n");
  if (pm_overflow)
    fprintf(out,
            "mprof: warning: the PM sampling buffer overflowed %llu times "
            "and samples were lost: use a longer --pm-interval\n",
            (unsigned long long)pm_overflow);
  if (pm_mode && strcmp(pm_mode, "alternate") == 0) {
    const char *pc_pieces = mprof_trace_meta(t, "alternate.pc_pieces");
    const char *pm_pieces = mprof_trace_meta(t, "alternate.pm_pieces");
    const char *switches = mprof_trace_meta(t, "alternate.switches");
    const char *switch_us = mprof_trace_meta(t, "alternate.switch_us");
    const char *every = mprof_trace_meta(t, "alternate.every");
    fprintf(out,
            "mprof: alternating every %s repeat(s): %s PC-sampled, %s "
            "PM-sampled; %s switch(es) took %.1f ms\n",
            every ? every : "?", pc_pieces ? pc_pieces : "0",
            pm_pieces ? pm_pieces : "0", switches ? switches : "0",
            switch_us ? (double)strtoull(switch_us, NULL, 10) / 1e3 : 0.0);
    if (!pm_pieces || strcmp(pm_pieces, "0") == 0)
      fprintf(out, "mprof: warning: no repeat was PM-sampled: the window "
                   "held too few repeats to alternate; use a larger "
                   "--range-count or a smaller --alternate-every\n");
  }
  if (dropped || full)
    fprintf(out,
            "mprof: warning: %llu PC samples dropped (%llu drains found the "
            "hardware buffer full): use a longer period (--pc-period %s) or a "
            "bigger buffer (--pc-buffer 2G)\n",
            (unsigned long long)dropped, (unsigned long long)full,
            o->pc_period ? "N+2" : "16");
  if (activity || no_ts)
    fprintf(out,
            "mprof: warning: %llu activity records dropped and %llu without "
            "timestamps: the program may have exited without "
            "cudaDeviceSynchronize(), or launched faster than CUPTI drained\n",
            (unsigned long long)activity, (unsigned long long)no_ts);
  if (writer)
    fprintf(out,
            "mprof: warning: %llu records could not be written (disk full or "
            "out of memory)\n",
            (unsigned long long)writer);
  mprof_trace_free(t);
  return 0;
}

/* What the manifest says about one process. */
typedef struct process_entry {
  long pid;
  long ppid;
  char path[PATH_MAX];
  int ended;       /* the producer finished its trace */
  int failed;      /* ... but could not write it */
  int write_errno; /* why ("error PID ERRNO PATH"; 0 unknown) */
  int signal;      /* the producer saw this fatal signal (0 none) */
} process_entry;

/* Read the manifest the producers appended to ("start PID PPID PATH",
 * "end PID STATUS PATH", "signal PID SIGNO PATH", and before an end whose
 * write failed "error PID ERRNO PATH"). */
static size_t read_manifest(const char *manifest, process_entry **out) {
  *out = NULL;
  FILE *f = fopen(manifest, "r");
  if (!f)
    return 0;
  process_entry *list = NULL;
  size_t count = 0;
  char line[PATH_MAX + 64];
  while (fgets(line, sizeof line, f)) {
    char word[16], path[PATH_MAX];
    long pid = 0, value = 0;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%15s %ld %ld %4095[^\n]", word, &pid, &value, path) != 4)
      continue;
    process_entry *e = NULL;
    for (size_t i = 0; i < count; i++)
      if (list[i].pid == pid && strcmp(list[i].path, path) == 0)
        e = &list[i];
    if (!e) {
      process_entry *grown =
          (process_entry *)realloc(list, (count + 1) * sizeof *list);
      if (!grown)
        break;
      list = grown;
      e = &list[count++];
      memset(e, 0, sizeof *e);
      e->pid = pid;
      snprintf(e->path, sizeof e->path, "%s", path);
    }
    if (strcmp(word, "start") == 0)
      e->ppid = value;
    else if (strcmp(word, "end") == 0) {
      e->ended = 1;
      e->failed = value != 0;
    } else if (strcmp(word, "signal") == 0)
      e->signal = (int)value;
    else if (strcmp(word, "error") == 0)
      e->write_errno = (int)value;
  }
  fclose(f);
  *out = list;
  return count;
}

const char *cli_signal_name(int signo) {
  switch (signo) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGKILL: return "SIGKILL";
  case SIGABRT: return "SIGABRT";
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGHUP: return "SIGHUP";
  case SIGQUIT: return "SIGQUIT";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGPIPE: return "SIGPIPE";
  default: return "a signal";
  }
}

/* "exited with status 0", "killed by signal 9 (SIGKILL)", ... */
static void describe_end(char *out, size_t size, const process_entry *e,
                         pid_t child, int status) {
  if (e->pid == (long)child && WIFSIGNALED(status))
    snprintf(out, size, "killed by signal %d (%s)", WTERMSIG(status),
             cli_signal_name(WTERMSIG(status)));
  else if (e->pid == (long)child && WIFEXITED(status))
    snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
  else if (e->signal)
    snprintf(out, size, "killed by signal %d (%s)", e->signal,
             cli_signal_name(e->signal));
  else if (e->ended)
    snprintf(out, size, "exited");
  else
    snprintf(out, size,
             "ended without a word (SIGKILL, or _exit before its "
             "first flush)");
}

static unsigned post_flags(const record_options *o) {
  return (o->no_sass ? CLI_POST_NO_SASS : 0) | (o->quiet ? CLI_POST_QUIET : 0) |
         (o->drop_code ? CLI_POST_DROP_CODE : 0) |
         (o->sass_now ? CLI_POST_SASS_NOW : 0);
}

/* " (No space left on device)" for a failed write, "" when unknown. */
static void write_error_text(char *out, size_t size, const process_entry *e) {
  if (e->write_errno > 0)
    snprintf(out, size, " (%s)", strerror(e->write_errno));
  else
    out[0] = '\0';
}

/* The producer could not write its finished trace (a full disk): in one
 * line, what happened and what its streamed file, now under the trace's
 * name, holds. */
static void report_write_failure(const process_entry *e, const char *how) {
  char why[160];
  write_error_text(why, sizeof why, e);
  mprof_trace *t = NULL;
  if (mprof_trace_open(&t, e->path, NULL) != 0) {
    fprintf(stderr,
            "mprof record: pid %ld %s but could not write its trace%s, and "
            "what it streamed does not open: %s\n",
            e->pid, how, why, mprof_error_last());
    return;
  }
  size_t launches = 0;
  mprof_trace_launches(t, &launches);
  char count[32];
  mprof_format_count(count, sizeof count, launches);
  uint64_t covered = 0;
  const char *checkpoints = mprof_trace_meta(t, "capture.checkpoints");
  if (mprof_trace_partial(t, &covered))
    fprintf(stderr,
            "mprof record: pid %ld %s but could not write its trace%s; %s "
            "holds the capture up to checkpoint %s (the first %.1f s): %s "
            "launch%s\n",
            e->pid, how, why, e->path, checkpoints ? checkpoints : "?",
            (double)covered / 1e9, count, launches == 1 ? "" : "es");
  else
    fprintf(stderr,
            "mprof record: pid %ld %s but could not write its trace%s; %s "
            "holds the whole capture from its streamed file: %s launch%s\n",
            e->pid, how, why, e->path, count, launches == 1 ? "" : "es");
  mprof_trace_free(t);
}

/* Post-process one process's trace and say what it holds. */
static int collect(const process_entry *e, const record_options *o, pid_t child,
                   int status, size_t process_count) {
  char partial[PATH_MAX + 16];
  snprintf(partial, sizeof partial, "%s.partial", e->path);
  struct stat st;
  int was_partial = 0;
  if (stat(partial, &st) == 0 && (!e->ended || stat(e->path, &st) != 0)) {
    /* The process died with its trace streaming: what it committed opens
     * as a partial trace; give it the trace's name. */
    if (rename(partial, e->path) != 0) {
      fprintf(stderr, "mprof record: cannot rename %s: %s\n", partial,
              strerror(errno));
      return CLI_EXIT_FAILED;
    }
    was_partial = 1;
  }
  char how[128];
  describe_end(how, sizeof how, e, child, status);
  if (stat(e->path, &st) != 0) {
    char why[160];
    write_error_text(why, sizeof why, e);
    fprintf(stderr, "mprof record: pid %ld %s and left no trace at %s%s%s\n",
            e->pid, how, e->path, e->failed ? ": it could not write it" : "",
            e->failed ? why : "");
    return CLI_EXIT_FAILED;
  }
  /* A failed write kept what was streamed: say so once, and fail. */
  if (e->failed)
    report_write_failure(e, how);
  double started = cli_seconds();
  /* A process killed by a signal it could not catch never wrote its end;
   * its parent (we, for the program we started) knows it. */
  int killed_by = e->pid == (long)child && WIFSIGNALED(status)
                      ? WTERMSIG(status)
                      : e->signal;
  int post = cli_postprocess_ended(e->path, post_flags(o), e->pid, killed_by);
  if (post == 0 && o->source)
    post = cli_source_merge(e->path, post_flags(o));
  if (post == 0 && !o->no_source)
    post = cli_embed_sources(e->path, o->roots, o->root_count, post_flags(o));
  if (post == 0)
    post = recap(e->path, o);
  if (cli_verbose())
    fprintf(stderr, "mprof: time: post-processing %s took %.3f s\n", e->path,
            cli_seconds() - started);
  mprof_trace *t = NULL;
  if (post == 0 && mprof_trace_open(&t, e->path, NULL) == 0) {
    uint64_t covered = 0;
    if (mprof_trace_partial(t, &covered))
      was_partial = 1;
    if (e->failed)
      ; /* report_write_failure() said what it holds */
    else if (was_partial)
      fprintf(stderr,
              "mprof record: pid %ld %s; %s is partial: it holds the first "
              "%.1f s, up to its last flush\n",
              e->pid, how, e->path, (double)covered / 1e9);
    else if (process_count > 1 || e->signal ||
             (e->pid == (long)child && WIFSIGNALED(status)))
      fprintf(stderr, "mprof record: pid %ld %s; %s is complete\n", e->pid, how,
              e->path);
    mprof_trace_free(t);
  }
  return post ? post : e->failed ? CLI_EXIT_FAILED : 0;
}

/* Whether the process of @p e ended normally having done no CUDA work:
 * its trace holds no launch, copy or memset (it started CUDA, as a
 * torch.compile worker or a launcher querying the GPUs does, and no
 * more). A process that died may not have flushed its work: never empty.
 * @p cmdline gets its command line from the trace. */
static int ran_no_cuda_work(const process_entry *e, char *cmdline,
                            size_t size) {
  cmdline[0] = '\0';
  if (!e->ended || e->failed || e->signal)
    return 0;
  mprof_trace *t;
  if (mprof_trace_open(&t, e->path, NULL) != 0) {
    mprof_error_clear();
    return 0;
  }
  size_t launches, memops, windows;
  mprof_trace_launches(t, &launches);
  mprof_trace_memops(t, &memops);
  mprof_trace_captures(t, &windows);
  const char *cmd = mprof_trace_meta(t, "cmdline");
  snprintf(cmdline, size, "%s", cmd ? cmd : "");
  /* Nothing recorded is not nothing done when the producer could not
   * record (CUPTI refused it), a window left the work out, or --kernel
   * matched none of it: those say so themselves. */
  int blind = mprof_trace_meta(t, "capture.disabled") || windows ||
              mprof_trace_meta(t, "kernel_regex");
  mprof_trace_free(t);
  return !blind && launches == 0 && memops == 0;
}

/* A process of the run that did no CUDA work, while others did: its
 * trace would only clutter the run's set, so it goes, and the account
 * says so plainly. */
static void drop_empty(const process_entry *e, const char *cmdline) {
  char other[PATH_MAX + 16];
  unlink(e->path);
  snprintf(other, sizeof other, "%s.pc.json", e->path);
  unlink(other);
  snprintf(other, sizeof other, "%s.partial", e->path);
  unlink(other);
  fprintf(stderr,
          "mprof record: pid %ld%s%s%s ran no CUDA work (no kernel, copy or "
          "memset): its empty trace %s was removed\n",
          e->pid, *cmdline ? " (" : "", cmdline, *cmdline ? ")" : "", e->path);
}

/* The one process of a run that did CUDA work, when the others' traces
 * were removed: an earlier process had taken the name asked for (-o
 * NAME, no %p) and this one wrote NAME.PID; now that NAME is free, the
 * trace (and its PC-sample sidecar) takes it, as a run of one process
 * would have written it. */
static void take_asked_name(process_entry *list, size_t count,
                            const int *removed, const char *asked) {
  process_entry *e = NULL;
  for (size_t i = 0; i < count; i++)
    if (!removed[i])
      e = &list[i];
  struct stat st;
  if (!e || strchr(asked, '%') || strcmp(e->path, asked) == 0 ||
      stat(asked, &st) == 0 || errno != ENOENT)
    return;
  char from[PATH_MAX + 16], to[PATH_MAX + 16];
  snprintf(from, sizeof from, "%s.pc.json", e->path);
  snprintf(to, sizeof to, "%s.pc.json", asked);
  if (rename(e->path, asked) != 0)
    return;
  if (rename(from, to) != 0 && errno != ENOENT)
    fprintf(stderr, "mprof record: cannot rename %s to %s: %s\n", from, to,
            strerror(errno));
  fprintf(stderr,
          "mprof record: pid %ld was the one process with CUDA work; its "
          "trace %s is now %s\n",
          e->pid, e->path, asked);
  snprintf(e->path, sizeof e->path, "%s", asked);
}

/* `record blocks`: each process that reported turns its NAME.source into
 * NAME; one that never said "end" wrote nothing (the block producer writes
 * once, at exit). */
static int blocks_collect(const process_entry *list, size_t count,
                          const record_options *o, pid_t child, int status) {
  unsigned flags = CLI_POST_NO_SASS | (o->quiet ? CLI_POST_QUIET : 0);
  int result = 0;
  if (count > 1 && !o->quiet)
    fprintf(stderr, "mprof record: %zu processes recorded\n", count);
  for (size_t i = 0; i < count; i++) {
    const process_entry *e = &list[i];
    int rc;
    if (!e->ended || e->failed) {
      char how[128], claim[PATH_MAX + 16];
      describe_end(how, sizeof how, e, child, status);
      /* Its claim on the name (NAME.partial) goes, so that the next run
       * can take the name again. */
      snprintf(claim, sizeof claim, "%s.partial", e->path);
      unlink(claim);
      fprintf(stderr,
              "mprof record blocks: pid %ld %s and %s %s (the block "
              "producer writes when the process exits)\n",
              e->pid, how, e->failed ? "could not write" : "left no", e->path);
      rc = CLI_EXIT_FAILED;
    } else {
      rc = cli_blocks_finish_file(e->path, flags);
    }
    if (rc && !result)
      result = rc;
  }
  return result;
}

/* A trace this run wrote (not a sidecar, not a leftover from before). */
static int is_new_trace(const char *path, time_t started) {
  struct stat st;
  size_t len = strlen(path);
  if (len > 8 && strcmp(path + len - 8, ".pc.json") == 0)
    return 0;
  if (len > 8 && strcmp(path + len - 8, ".partial") == 0)
    return 0;
  if (len > 7 && strcmp(path + len - 7, ".source") == 0)
    return 0;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= started;
}

/* The files the run produced: one, or one per process with %p. */
void cli_output_glob(char *out, size_t size, const char *pattern,
                     const char *suffix) {
  size_t suffix_len = strlen(suffix), n = 0;
  for (const char *p = pattern; *p && n + 2 + suffix_len < size; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      out[n++] = '*';
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      out[n++] = '%';
      p++;
    } else if (*p == '*' || *p == '?' || *p == '[') {
      out[n++] = '\\';
      out[n++] = *p;
    } else {
      out[n++] = *p;
    }
  }
  memcpy(out + n, suffix, suffix_len + 1);
}

static int find_outputs(glob_t *g, const char *pattern, time_t started) {
  char globbed[PATH_MAX];
  cli_output_glob(globbed, sizeof globbed, pattern, "");
  memset(g, 0, sizeof *g);
  if (glob(globbed, 0, NULL, g) != 0)
    return 0;
  int count = 0;
  for (size_t i = 0; i < g->gl_pathc; i++)
    count += is_new_trace(g->gl_pathv[i], started);
  return count;
}

/* A private file the producers of this run report to. */
static int make_manifest(char *path, size_t size) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = "/tmp";
  if (snprintf(path, size, "%s/mprof-record-XXXXXX", tmp) >= (int)size)
    return -1;
  int fd = mkstemp(path);
  if (fd < 0)
    return -1;
  close(fd);
  return 0;
}

/* One run of CMD under the producer, writing @p output; its traces
 * post-processed and summed up. Returns the exit status record returns. */
static int record_run(const record_options *o, const char *producer,
                      const char *output) {
  char pattern[PATH_MAX];
  if (output_pattern(pattern, sizeof pattern, output) != 0) {
    fprintf(stderr, "mprof record: output path '%s' is too long\n", output);
    return CLI_EXIT_USAGE;
  }
  char manifest[PATH_MAX];
  if (make_manifest(manifest, sizeof manifest) != 0) {
    fprintf(stderr,
            "mprof record: cannot create a file in %s: %s (set TMPDIR to a "
            "writable directory)\n",
            getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(errno));
    return CLI_EXIT_FAILED;
  }
  time_t started = time(NULL);
  struct timespec run0, run1;
  clock_gettime(CLOCK_MONOTONIC, &run0);
  int exec_errno = 0;
  int status = run_command(o, producer, pattern, manifest, &exec_errno);
  pid_t child = (pid_t)last_child;
  clock_gettime(CLOCK_MONOTONIC, &run1);
  if (cli_verbose())
    fprintf(stderr, "mprof: time: the program ran %.3f s\n",
            (double)(run1.tv_sec - run0.tv_sec) +
                (double)(run1.tv_nsec - run0.tv_nsec) * 1e-9);
  if (status < 0) {
    unlink(manifest);
    fprintf(stderr, "mprof record: cannot start '%s': %s\n", o->command[0],
            strerror(exec_errno ? exec_errno : errno));
    return CLI_EXIT_USAGE;
  }
  int exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                    : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                          : 1;
  process_entry *processes = NULL;
  size_t process_count = read_manifest(manifest, &processes);
  unlink(manifest);
  if (o->blocks && process_count > 0) {
    int post_status =
        blocks_collect(processes, process_count, o, child, status);
    free(processes);
    return exit_status ? exit_status : post_status;
  }
  if (process_count > 0) {
    if (process_count > 1 && !o->quiet)
      fprintf(stderr, "mprof record: %zu processes recorded\n", process_count);
    /* Processes that did no CUDA work: their traces go when others of the
     * run did some; alone, the trace stays and the account says so. */
    int *empty = (int *)calloc(process_count, sizeof *empty);
    char(*cmdlines)[256] =
        (char(*)[256])calloc(process_count, sizeof *cmdlines);
    size_t working = process_count;
    for (size_t i = 0; empty && cmdlines && i < process_count; i++)
      if ((empty[i] = ran_no_cuda_work(&processes[i], cmdlines[i],
                                       sizeof cmdlines[i])) != 0)
        working--;
    int dropping = empty && cmdlines && working > 0;
    for (size_t i = 0; dropping && i < process_count; i++)
      if (empty[i])
        drop_empty(&processes[i], cmdlines[i]);
    if (dropping && working == 1)
      take_asked_name(processes, process_count, empty, pattern);
    for (size_t i = 0; i < process_count; i++) {
      if (dropping && empty[i])
        continue;
      int post = collect(&processes[i], o, child, status, process_count);
      if (post && !exit_status)
        exit_status = post;
      if (!post && empty && empty[i])
        fprintf(stderr,
                "mprof record: pid %ld ran no CUDA work: %s holds no kernel, "
                "copy or memset (the program started CUDA and did nothing on "
                "the GPU)\n",
                processes[i].pid, processes[i].path);
    }
    free(empty);
    free(cmdlines);
    free(processes);
    return exit_status;
  }
  free(processes);
  if (WIFSIGNALED(status))
    fprintf(stderr, "mprof record: '%s' was killed by signal %d (%s)\n",
            o->command[0], WTERMSIG(status), cli_signal_name(WTERMSIG(status)));
  if (o->blocks) {
    unsigned flags = CLI_POST_NO_SASS | (o->quiet ? CLI_POST_QUIET : 0);
    int post = cli_blocks_finish(pattern, started - 1, flags);
    return exit_status ? exit_status : post;
  }
  /* No producer reported: an older producer, or none started. */
  glob_t outputs;
  int count = find_outputs(&outputs, pattern, started - 1);
  if (count == 0) {
    fprintf(stderr,
            "mprof record: no trace was written to %s: %s (run 'mprof "
            "doctor'; MPROF_VERBOSE=1 shows the producer's messages)\n",
            pattern,
            WIFSIGNALED(status)
                ? "the program was killed before the producer wrote anything"
                : "the program made no CUDA calls, or the producer could not "
                  "start");
    globfree(&outputs);
    return exit_status ? exit_status : CLI_EXIT_FAILED;
  }
  for (size_t i = 0; i < outputs.gl_pathc; i++) {
    const char *trace = outputs.gl_pathv[i];
    if (!is_new_trace(trace, started - 1))
      continue;
    double p0 = cli_seconds();
    int post =
        cli_postprocess_ended(trace, post_flags(o), (long)child,
                              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (post == 0 && o->source)
      post = cli_source_merge(trace, post_flags(o));
    if (post == 0 && !o->no_source)
      post = cli_embed_sources(trace, o->roots, o->root_count, post_flags(o));
    if (post == 0)
      post = recap(trace, o);
    if (cli_verbose())
      fprintf(stderr, "mprof: time: post-processing %s took %.3f s\n", trace,
              cli_seconds() - p0);
    if (post && !exit_status)
      exit_status = post;
  }
  globfree(&outputs);
  return exit_status;
}

/* --pm both: the PM run's output beside @p output ("run.mprof" ->
 * "run.pm.mprof"). */
static int pm_sibling(char *out, size_t size, const char *output) {
  size_t n = strlen(output);
  size_t stem = n >= 6 && strcmp(output + n - 6, ".mprof") == 0 ? n - 6 : n;
  int w = snprintf(out, size, "%.*s.pm.mprof", (int)stem, output);
  return w < 0 || (size_t)w >= size ? -1 : 0;
}

int cmd_record(int argc, char **argv) {
  record_options o;
  int rc = parse_options(&o, argc, argv);
  if (rc)
    return rc;
  char producer[PATH_MAX] = "";
  if (!o.blocks && cli_find_producer(producer, sizeof producer) != 0) {
    fprintf(stderr,
            "mprof record: the CUPTI producer (libmprof-cupti.so) was not "
            "found%s; run 'mprof setup' to build it, or set MPROF_CUPTI_LIB\n",
            getenv("MPROF_CUPTI_LIB") ? " at $MPROF_CUPTI_LIB" : "");
    return CLI_EXIT_USAGE;
  }
  if (o.blocks && cli_find_blocks(o.blocks_lib, sizeof o.blocks_lib) != 0) {
    fprintf(stderr,
            "mprof record blocks: the block producer (libmprof-blocks.so) was "
            "not found%s; build mprof where the CUDA toolkit's "
            "compute-sanitizer/include exists, or set MPROF_BLOCKS_LIB\n",
            getenv("MPROF_BLOCKS_LIB") ? " at $MPROF_BLOCKS_LIB" : "");
    return CLI_EXIT_USAGE;
  }
  if (strcmp(o.pm, "both") != 0)
    return record_run(&o, producer, o.output);
  /* PC and PM sampling cannot share a process (docs/validation/H200.md):
   * run CMD twice, PC-sampled then PM-sampled, for a set of the two. */
  char pm_output[PATH_MAX];
  if (pm_sibling(pm_output, sizeof pm_output, o.output) != 0) {
    fprintf(stderr, "mprof record: output path '%s' is too long\n", o.output);
    return CLI_EXIT_USAGE;
  }
  o.pm = "off";
  rc = record_run(&o, producer, o.output);
  if (rc != 0) {
    fprintf(stderr,
            "mprof record: the PC-sampled run ended with status %d; the "
            "PM-sampled run (--pm both) was not started\n",
            rc);
    return rc;
  }
  if (!o.quiet)
    fprintf(stderr,
            "mprof record: running '%s' again with PM sampling "
            "(--pm both) into %s\n",
            o.command[0], pm_output);
  o.pm = "on";
  rc = record_run(&o, producer, pm_output);
  if (rc == 0 && !o.quiet)
    fprintf(stderr,
            "mprof record: open the two runs as one for stall reasons and "
            "measured throughput: mprof summary %s%s %s\n",
            strchr(o.output, '%') ? "(each process's) " : "", o.output,
            pm_output);
  return rc;
}
