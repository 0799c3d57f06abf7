/*
 * mprof — the command-line entry point: dispatch to subcommands.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"

static const cli_command commands[] = {
    {"record", "run a CUDA program and record a trace",
     "usage: mprof record [-o FILE] [--pc-mode continuous|serialized|off]\n"
     "                    [--pc-period N] [--pc-buffer SIZE] [--kernel REGEX]\n"
     "                    [--no-sass] [-q] -- CMD [ARGS]\n"
     "\n"
     "Run CMD with the CUPTI producer injected (CUDA_INJECTION64_PATH), then\n"
     "disassemble the captured code with nvdisasm and write FILE (default\n"
     "trace.mprof) and FILE.pc.json. The exit status is CMD's.\n"
     "\n"
     "  -o FILE         output; %p expands to the pid of each recorded\n"
     "                  process, %h to the host name\n"
     "  --pc-mode M     continuous (default): PC samples per function while\n"
     "                  kernels run concurrently; serialized: per launch, at\n"
     "                  ~0.8 ms per launch; off: timeline only\n"
     "  --pc-period N   one sample per SM every 2^N cycles, 5..31 (default "
     "14;\n"
     "                  see producers/cupti/README.md)\n"
     "  --pc-buffer SZ  PC sampling hardware buffer, e.g. 2G (default 512M)\n"
     "  --kernel REGEX  sample and keep code only for matching kernels\n"
     "  --no-sass       keep no kernel code (smaller traces; no SASS)\n"
     "  -q, --quiet     no recap\n",
     cmd_record},
    {"doctor", "check that this machine can capture",
     "usage: mprof doctor\n"
     "\n"
     "Check the NVIDIA driver and GPUs, the CUDA toolkit, libcupti, the\n"
     "producer, nvdisasm and the profiling permission; print one line per\n"
     "check with the fix. Exit status 0 only when capture can work.\n",
     cmd_doctor},
    {"setup", "build the CUPTI producer if this install lacks it",
     "usage: mprof setup\n"
     "\n"
     "Say where the CUPTI producer is, or build it against the local CUDA\n"
     "toolkit into ~/.local/share/mprof/libmprof-cupti.so.\n",
     cmd_setup},
    {"info", "print what a trace holds",
     "usage: mprof info TRACE\n"
     "\n"
     "Validate TRACE and print its metadata, devices, section sizes,\n"
     "kernels (by launch count) and drop counters.\n",
     cmd_info},
    {"synth", "write a deterministic synthetic trace",
     "usage: mprof synth [-o FILE] [--launches N] [--kernels M] [--streams S]\n"
     "                   [--devices D] [--pcs P] [--seed X] [--scenario NAME]\n"
     "\n"
     "Write a synthetic trace (default synth.mprof) shaped like an H200\n"
     "capture: N launches (default 10000) over M kernels (8) on S streams (2)\n"
     "per device, D devices (1), P sampled PCs per kernel (24; 0 = no PC\n"
     "samples). The same options and seed always give the same file.\n"
     "Scenarios plant one bottleneck in every kernel: mixed (default),\n"
     "memory-latency, compute, barrier, occupancy, tail, launch-gaps.\n",
     cmd_synth},
};

const cli_command *cli_commands(size_t *count) {
  *count = sizeof commands / sizeof commands[0];
  return commands;
}

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

int cli_fail(int rc) {
  const char *msg = mprof_error_last();
  fprintf(stderr, "mprof: %s\n", *msg ? msg : mprof_status_name(rc));
  switch (rc) {
  case MPROF_EFORMAT:
  case MPROF_EVERSION:
  case MPROF_ENOTFOUND:
  case MPROF_EINVAL: return CLI_EXIT_USAGE;
  default: return CLI_EXIT_FAILED;
  }
}

int cli_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "mprof %s: ", command);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'mprof help %s')\n", command);
  return CLI_EXIT_USAGE;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void cli_print_usage(const char *command, FILE *out) {
  const cli_command *c = find_command(command);
  if (c)
    fputs(c->usage, out);
}

int cli_parse_u64(const char *text, unsigned long long *out) {
  char *end;
  if (!text || !*text || *text == '-')
    return -1;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

static void print_overview(FILE *out) {
  fprintf(out, "usage: mprof [--version] [--help] COMMAND [ARGS]\n"
               "\n"
               "mprof is a within-kernel timeline profiler for CUDA.\n"
               "\n"
               "Commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].synopsis);
  fprintf(out, "\nRun 'mprof help COMMAND' for the options of one command.\n");
}

static int run_help(int argc, char **argv) {
  if (argc < 3) {
    print_overview(stdout);
    return CLI_EXIT_OK;
  }
  const cli_command *c = find_command(argv[2]);
  if (!c) {
    fprintf(stderr, "mprof help: unknown command '%s'\n\n", argv[2]);
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  fputs(c->usage, stdout);
  return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("mprof %s (library %s, trace format %d.%d)\n", MPROF_VERSION_STRING,
           mprof_version(), MPROF_FORMAT_VERSION_MAJOR,
           MPROF_FORMAT_VERSION_MINOR);
    return CLI_EXIT_OK;
  }
  if (cli_is_help(name)) {
    print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(name, "help") == 0)
    return run_help(argc, argv);
  const cli_command *c = find_command(name);
  if (!c) {
    if (name[0] == '-')
      fprintf(stderr, "mprof: unknown option '%s'\n\n", name);
    else
      fprintf(stderr, "mprof: unknown command '%s'\n\n", name);
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      break;
    if (cli_is_help(argv[i])) {
      fputs(c->usage, stdout);
      return CLI_EXIT_OK;
    }
  }
  return c->run(argc - 1, argv + 1);
}
