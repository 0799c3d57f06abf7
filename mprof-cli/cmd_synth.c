/*
 * mprof synth — write a deterministic synthetic trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"

static const char *const scenario_names[] = {
    "mixed",     "memory-latency", "compute",    "barrier",
    "occupancy", "tail",           "launch-gaps"};

int cmd_synth(int argc, char **argv) {
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  const char *out = "synth.mprof";
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long v = 0;
    if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      if (!value)
        return cli_usage_error("synth", "%s needs a file name", arg);
      out = value;
      i++;
      continue;
    }
    if (strcmp(arg, "--scenario") == 0) {
      if (!value)
        return cli_usage_error("synth", "--scenario needs a name");
      size_t s;
      for (s = 0; s < sizeof scenario_names / sizeof scenario_names[0]; s++)
        if (strcmp(value, scenario_names[s]) == 0)
          break;
      if (s == sizeof scenario_names / sizeof scenario_names[0])
        return cli_usage_error("synth", "unknown scenario '%s'", value);
      opts.scenario = (uint32_t)s;
      i++;
      continue;
    }
    uint64_t *u64 = NULL;
    uint32_t *u32 = NULL;
    if (strcmp(arg, "--launches") == 0)
      u64 = &opts.launches;
    else if (strcmp(arg, "--seed") == 0)
      u64 = &opts.seed;
    else if (strcmp(arg, "--kernels") == 0)
      u32 = &opts.kernels;
    else if (strcmp(arg, "--streams") == 0)
      u32 = &opts.streams;
    else if (strcmp(arg, "--devices") == 0)
      u32 = &opts.devices;
    else if (strcmp(arg, "--pcs") == 0)
      u32 = &opts.pcs_per_kernel;
    else
      return cli_usage_error("synth", "unknown option '%s'", arg);
    if (!value || cli_parse_u64(value, &v) != 0 || (u32 && v > 0xffffffffull))
      return cli_usage_error("synth", "%s needs a non-negative number", arg);
    if (u64)
      *u64 = v;
    else
      *u32 = (uint32_t)v;
    i++;
  }
  int rc = mprof_synth_write(out, &opts);
  if (rc)
    return cli_fail(rc);
  printf("wrote %s: %llu launches, %u kernels, %u streams x %u devices\n", out,
         (unsigned long long)opts.launches, opts.kernels, opts.streams,
         opts.devices);
  return CLI_EXIT_OK;
}
