/*
 * mprof synth — write a deterministic synthetic trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/synth.h"

static const char *const scenario_names[] = {
    "mixed",     "memory-latency", "compute",    "barrier",
    "occupancy", "tail",           "launch-gaps"};

static int synth(int argc, char **argv, char **meta);

int cmd_synth(int argc, char **argv) {
  /* --meta KEY=VALUE pairs, split in place: at most argc of them. */
  char **meta = (char **)calloc((size_t)argc + 1, 2 * sizeof *meta);
  if (!meta) {
    fprintf(stderr, "mprof synth: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  int status = synth(argc, argv, meta);
  for (int i = 0; i < 2 * argc; i++)
    free(meta[i]);
  free(meta);
  return status;
}

static int synth(int argc, char **argv, char **meta) {
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  const char *out = "synth.mprof";
  int sidecar = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long v = 0;
    if (strcmp(arg, "--meta") == 0) {
      const char *eq = value ? strchr(value, '=') : NULL;
      if (!eq || eq == value)
        return cli_usage_error("synth", "--meta needs KEY=VALUE");
      char **pair = &meta[2 * opts.meta_count];
      pair[0] = strndup(value, (size_t)(eq - value));
      pair[1] = strdup(eq + 1);
      if (!pair[0] || !pair[1]) {
        fprintf(stderr, "mprof synth: out of memory\n");
        return CLI_EXIT_FAILED;
      }
      opts.meta = (const char *const *)meta;
      opts.meta_count++;
      i++;
      continue;
    }
    if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      if (!value)
        return cli_usage_error("synth", "%s needs a file name", arg);
      out = value;
      i++;
      continue;
    }
    if (strcmp(arg, "--scenario") == 0 || strcmp(arg, "--slow-scenario") == 0) {
      if (!value)
        return cli_usage_error("synth", "%s needs a name", arg);
      size_t s;
      for (s = 0; s < sizeof scenario_names / sizeof scenario_names[0]; s++)
        if (strcmp(value, scenario_names[s]) == 0)
          break;
      if (s == sizeof scenario_names / sizeof scenario_names[0])
        return cli_usage_error("synth", "unknown scenario '%s'", value);
      if (strcmp(arg, "--scenario") == 0)
        opts.scenario = (uint32_t)s;
      else
        opts.slow_scenario = (uint32_t)s;
      i++;
      continue;
    }
    if (strcmp(arg, "--sidecar") == 0) {
      sidecar = 1;
      continue;
    }
    if (strcmp(arg, "--slowdown") == 0) {
      char *end = NULL;
      double pct = value ? strtod(value, &end) : -1;
      if (!value || !*value || *end || !(pct >= 0 && pct <= 10000))
        return cli_usage_error("synth", "--slowdown needs a percentage "
                                        "(0..10000)");
      opts.slowdown = pct / 100.0;
      i++;
      continue;
    }
    if (strcmp(arg, "--steps-unmarked") == 0) {
      opts.step_flags |= MPROF_SYNTH_STEPS_UNMARKED;
      continue;
    }
    if (strcmp(arg, "--slow-step") == 0) {
      if (!value || cli_parse_u64(value, &v) != 0 || v >= 1000000)
        return cli_usage_error("synth", "--slow-step needs a step number "
                                        "(0..999999)");
      opts.slow_step = (uint32_t)v + 1;
      i++;
      continue;
    }
    if (strcmp(arg, "--span-nested") == 0) {
      opts.span_nested = 1;
      continue;
    }
    if (strcmp(arg, "--span-imbalance") == 0) {
      char *end = NULL;
      double pct = value ? strtod(value, &end) : -1;
      if (!value || !*value || *end || !(pct >= 0 && pct <= 10000))
        return cli_usage_error("synth", "--span-imbalance needs a percentage "
                                        "(0..10000)");
      opts.span_imbalance = pct / 100.0;
      i++;
      continue;
    }
    if (strcmp(arg, "--slow-device") == 0) {
      if (!value || cli_parse_u64(value, &v) != 0 || v >= 16)
        return cli_usage_error("synth", "--slow-device needs a device index "
                                        "(0..15)");
      opts.slow_devices |= 1ull << v;
      i++;
      continue;
    }
    if (strcmp(arg, "--slow-kernel") == 0) {
      if (!value || cli_parse_u64(value, &v) != 0 || v >= 64)
        return cli_usage_error("synth", "--slow-kernel needs a kernel index "
                                        "(0..63)");
      opts.slow_kernels |= 1ull << v;
      i++;
      continue;
    }
    uint64_t *u64 = NULL;
    uint32_t *u32 = NULL;
    if (strcmp(arg, "--launches") == 0)
      u64 = &opts.launches;
    else if (strcmp(arg, "--seed") == 0)
      u64 = &opts.seed;
    else if (strcmp(arg, "--timing-seed") == 0)
      u64 = &opts.timing_seed;
    else if (strcmp(arg, "--kernels") == 0)
      u32 = &opts.kernels;
    else if (strcmp(arg, "--streams") == 0)
      u32 = &opts.streams;
    else if (strcmp(arg, "--devices") == 0)
      u32 = &opts.devices;
    else if (strcmp(arg, "--pcs") == 0)
      u32 = &opts.pcs_per_kernel;
    else if (strcmp(arg, "--spans") == 0)
      u64 = &opts.spans;
    else if (strcmp(arg, "--span-warps") == 0)
      u32 = &opts.span_warps;
    else if (strcmp(arg, "--span-sms") == 0)
      u32 = &opts.span_sms;
    else if (strcmp(arg, "--steps") == 0)
      u32 = &opts.steps;
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
  if (!rc && sidecar)
    rc = mprof_synth_write_sidecar(out, NULL);
  if (rc)
    return cli_fail(rc);
  printf("wrote %s: %llu launches, %u kernels, %u streams x %u devices", out,
         (unsigned long long)opts.launches, opts.kernels, opts.streams,
         opts.devices);
  if (opts.spans) {
    mprof_trace *t;
    size_t spans = 0;
    if (mprof_trace_open(&t, out, NULL) == 0) {
      mprof_trace_spans(t, &spans);
      mprof_trace_free(t);
    }
    printf(", %zu spans", spans);
  }
  if (opts.steps)
    printf(", %u steps", opts.steps);
  printf("\n");
  return CLI_EXIT_OK;
}
