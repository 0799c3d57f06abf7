/*
 * mprof sass — build or complete the PC sidecar of a trace: SASS from
 * nvdisasm and source lines, from the trace's own cubins or from the
 * program's files.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"

#define SHOW_MAX 20

static const char *state_why(uint32_t state) {
  switch (state) {
  case MPROF_SASS_NO_CUBIN:
    return "no code: not among the trace's cubins or the given files";
  case MPROF_SASS_NO_DISASSEMBLER: return "code found, nvdisasm missing";
  case MPROF_SASS_FAILED: return "nvdisasm failed";
  case MPROF_SASS_DEFERRED: return "code kept, not disassembled yet";
  default: return "";
  }
}

/* The SM version of the trace's GPUs when they all share one; else 0. */
static uint32_t trace_arch(const char *trace_path) {
  mprof_trace *t;
  if (mprof_trace_open(&t, trace_path, NULL) != 0)
    return 0;
  size_t n;
  const mprof_device_record *dev = mprof_trace_devices(t, &n);
  uint32_t arch = n ? dev[0].cc_major * 10 + dev[0].cc_minor : 0;
  for (size_t i = 1; i < n; i++)
    if (dev[i].cc_major * 10 + dev[i].cc_minor != arch)
      arch = 0;
  mprof_trace_free(t);
  return arch;
}

/* The modules whose code the trace dropped (`record --drop-code`: once
 * their SASS was in the sidecar): records without code that PC samples
 * name, as a module none of whose code ran would not be. */
typedef struct dropped_code {
  uint64_t *crcs;
  size_t count;
} dropped_code;

static void find_dropped_code(dropped_code *d, const char *trace_path) {
  memset(d, 0, sizeof *d);
  mprof_trace *t;
  if (mprof_trace_open(&t, trace_path, NULL) != 0) {
    mprof_error_clear();
    return;
  }
  size_t cubins, samples;
  const mprof_cubin_record *c = mprof_trace_cubins(t, &cubins);
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &samples);
  d->crcs = (uint64_t *)calloc(cubins ? cubins : 1, sizeof *d->crcs);
  for (size_t i = 0; d->crcs && i < cubins; i++) {
    if (c[i].blob_size || !(c[i].flags & MPROF_CUBIN_OMITTED))
      continue;
    for (size_t k = 0; k < samples; k++)
      if (pc[k].cubin_crc == c[i].crc) {
        d->crcs[d->count++] = c[i].crc;
        break;
      }
  }
  mprof_trace_free(t);
}

static int code_was_dropped(const dropped_code *d, uint64_t crc) {
  for (size_t i = 0; i < d->count; i++)
    if (d->crcs[i] == crc)
      return 1;
  return 0;
}

static void print_summary(const char *sidecar_path, const mprof_sidecar *sc,
                          const mprof_sass_report *report,
                          const char *trace_path, const dropped_code *dropped) {
  /* Samples as `summary` and `info` count them: each once. */
  char samples[32];
  mprof_format_count(samples, sizeof samples, report->samples);
  printf("%s: %zu functions, %zu with SASS, %zu with source lines, %s PC "
         "samples\n",
         sidecar_path, report->functions, report->with_sass, report->with_lines,
         samples);
  size_t missing = report->functions - report->with_sass;
  if (!missing)
    return;
  printf("without SASS: %zu\n", missing);
  size_t shown = 0;
  for (size_t i = 0; i < mprof_sidecar_function_count(sc); i++) {
    const mprof_sidecar_function *f = mprof_sidecar_function_at(sc, i);
    if (f->sass_state == MPROF_SASS_PRESENT)
      continue;
    if (shown++ == SHOW_MAX) {
      printf("  ... and %zu more\n", missing - SHOW_MAX);
      break;
    }
    const char *why = state_why(f->sass_state);
    if (f->sass_state == MPROF_SASS_NO_CUBIN &&
        code_was_dropped(dropped, f->cubin_crc))
      why = "no code: the trace dropped it (recorded with --drop-code)";
    printf("  %s%s%s%s: %s%s%s\n", f->name, *f->demangled ? " (" : "",
           f->demangled, *f->demangled ? ")" : "", why,
           *f->sass_error ? ": " : "", f->sass_error);
  }
  if (dropped->count && report->no_cubin)
    printf("%s was recorded with --drop-code: its code went once its SASS "
           "was in the sidecar, so there is none here to disassemble\n",
           trace_path);
  if (report->no_disassembler)
    printf("nvdisasm was not found: install the CUDA toolkit (or set "
           "MPROF_NVDISASM) and run 'mprof sass %s' to add the SASS\n",
           trace_path);
  if (report->no_cubin)
    printf("to add code the trace did not keep, run 'mprof sass %s "
           "PROGRAM_OR_LIBRARY...' with the files that hold those kernels\n",
           trace_path);
}

int cmd_sass(int argc, char **argv) {
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  int rebuild = 0, i = 1, no_source = 0;
  const char *roots[CLI_SOURCE_ROOTS_MAX];
  size_t root_count = 0;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (strcmp(argv[i], "--rebuild") == 0) {
      rebuild = 1;
    } else if (strcmp(argv[i], "--no-source") == 0) {
      no_source = 1;
    } else if (strcmp(argv[i], "--source-root") == 0) {
      if (i + 1 >= argc || !*argv[i + 1])
        return cli_usage_error("sass",
                               "--source-root needs a folder (or OLD=NEW)");
      if (root_count == CLI_SOURCE_ROOTS_MAX)
        return cli_usage_error("sass", "at most %d --source-root options",
                               CLI_SOURCE_ROOTS_MAX);
      roots[root_count++] = argv[++i];
    } else if (strcmp(argv[i], "--no-disassembly") == 0) {
      opts.flags |= MPROF_SASS_NO_DISASSEMBLY;
    } else if (strcmp(argv[i], "--nvdisasm") == 0 ||
               strcmp(argv[i], "--cuobjdump") == 0) {
      if (i + 1 >= argc)
        return cli_usage_error("sass", "%s needs a path", argv[i]);
      if (argv[i][2] == 'n')
        opts.nvdisasm = argv[++i];
      else
        opts.cuobjdump = argv[++i];
    } else {
      return cli_usage_error("sass", "unknown option '%s'", argv[i]);
    }
  }
  if (i >= argc)
    return cli_usage_error("sass", "no trace given");
  const char *tools[2] = {opts.nvdisasm, opts.cuobjdump};
  for (int t = 0; t < 2; t++)
    if (tools[t] && access(tools[t], X_OK) != 0) {
      fprintf(stderr, "mprof: %s: %s is not there (not an executable file)\n",
              tools[t], t ? "cuobjdump" : "nvdisasm");
      return CLI_EXIT_USAGE;
    }
  const char *trace_path = argv[i++];
  struct stat st;
  if (stat(trace_path, &st) != 0) {
    fprintf(stderr, "mprof: %s: no such trace\n", trace_path);
    return CLI_EXIT_USAGE;
  }
  size_t len = strlen(trace_path) + sizeof ".pc.json";
  char *sidecar_path = (char *)malloc(len);
  if (!sidecar_path) {
    fprintf(stderr, "mprof sass: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  snprintf(sidecar_path, len, "%s.pc.json", trace_path);
  opts.arch = trace_arch(trace_path);

  int file_count = argc - i;
  mprof_sass_binary **bins =
      (mprof_sass_binary **)calloc((size_t)file_count + 1, sizeof *bins);
  mprof_sidecar *sc = NULL;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  int status = CLI_EXIT_OK, rc = 0;
  dropped_code dropped = {NULL, 0};
  if (!bins) {
    fprintf(stderr, "mprof sass: out of memory\n");
    free(sidecar_path);
    return CLI_EXIT_FAILED;
  }
  /* Read the files first: a wrong path should fail before any work. */
  for (int k = 0; k < file_count && !rc; k++) {
    rc = mprof_sass_binary_open(&bins[k], argv[i + k], &opts);
    if (!rc && *mprof_sass_binary_note(bins[k]))
      fprintf(stderr, "mprof sass: %s: %s\n", argv[i + k],
              mprof_sass_binary_note(bins[k]));
  }
  if (rc) {
    status = cli_fail(rc);
    goto out;
  }
  find_dropped_code(&dropped, trace_path);
  /* The SASS of a trace whose code was dropped is in its sidecar alone:
   * rebuilding from the trace would replace it with none. */
  if (rebuild && dropped.count && !file_count && stat(sidecar_path, &st) == 0 &&
      mprof_sidecar_load(&sc, sidecar_path) == 0 &&
      mprof_sass_report_count(&report, sc) == 0 && report.with_sass) {
    fprintf(stderr,
            "mprof: %s keeps no code (recorded with --drop-code): its SASS "
            "is only in %s, which --rebuild would replace with none; give "
            "the program's files too ('mprof sass --rebuild %s "
            "PROGRAM_OR_LIBRARY...'), or remove %s first\n",
            trace_path, sidecar_path, trace_path, sidecar_path);
    status = CLI_EXIT_USAGE;
    goto out;
  }
  mprof_sidecar_free(sc);
  sc = NULL;
  mprof_error_clear();
  report = (mprof_sass_report)MPROF_SASS_REPORT_INIT;
  if (rebuild || stat(sidecar_path, &st) != 0) {
    rc = mprof_sass_build_sidecar(trace_path, sidecar_path, &opts, &report);
    if (!rc)
      rc = mprof_sidecar_load(&sc, sidecar_path);
  } else {
    rc = mprof_sidecar_load(&sc, sidecar_path);
    /* The trace's own cubins first: nvdisasm may be here now. */
    mprof_sass_binary *own = NULL;
    if (!rc && mprof_sass_binary_open(&own, trace_path, &opts) == 0) {
      const mprof_sass_binary *one[1] = {own};
      rc = mprof_sass_attach(sc, one, 1, &opts, &report);
    }
    mprof_sass_binary_free(own);
  }
  if (!rc && file_count) {
    size_t before = report.attached;
    rc = mprof_sass_attach(sc, (const mprof_sass_binary *const *)bins,
                           (size_t)file_count, &opts, &report);
    if (!rc && report.attached == before)
      fprintf(stderr,
              "mprof sass: the given files hold none of the functions that "
              "lack SASS\n");
  }
  if (!rc && report.attached)
    rc = mprof_sidecar_save(sc, sidecar_path);
  if (!rc)
    rc = mprof_sass_report_count(&report, sc);
  if (rc) {
    status = cli_fail(rc);
    goto out;
  }
  print_summary(sidecar_path, sc, &report, trace_path, &dropped);
  /* The trace carries the code of its hot lines (a trace copied alone
   * shows it); `mprof sass` again after --source-root replaces them. */
  if (!no_source)
    cli_embed_sources(trace_path, roots, root_count, 0);
out:
  free(dropped.crcs);
  for (int k = 0; k < file_count; k++)
    mprof_sass_binary_free(bins[k]);
  free(bins);
  mprof_sidecar_free(sc);
  free(sidecar_path);
  return status;
}
