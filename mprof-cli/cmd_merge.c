/*
 * mprof merge — the traces of one run (one per process) as one trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"

int cmd_merge(int argc, char **argv) {
  const char *output = NULL;
  cli_trace_set inputs = {NULL, 0};
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
      if (i + 1 >= argc)
        rc = cli_usage_error("merge", "-o needs a file");
      else
        output = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      rc = cli_usage_error("merge", "unknown option '%s'", argv[i]);
    } else {
      rc = cli_trace_set_resolve(&inputs, "merge", argv[i]);
    }
  }
  if (!rc && !output)
    rc = cli_usage_error("merge", "no output given; usage: mprof merge "
                                  "TRACE... -o FILE");
  if (!rc && inputs.count == 0)
    rc = cli_usage_error("merge", "no traces given (a directory must hold "
                                  ".mprof files)");
  for (size_t i = 0; !rc && i < inputs.count; i++)
    if (strcmp(inputs.paths[i], output) == 0)
      rc = cli_usage_error(
          "merge", "the output %s is also an input; name another file", output);
  mprof_trace **traces =
      rc ? NULL : (mprof_trace **)calloc(inputs.count, sizeof *traces);
  if (!rc && !traces) {
    fprintf(stderr, "mprof merge: out of memory\n");
    rc = CLI_EXIT_FAILED;
  }
  for (size_t i = 0; !rc && i < inputs.count; i++) {
    int status = mprof_trace_open(&traces[i], inputs.paths[i], NULL);
    if (status)
      rc = cli_fail(status);
  }
  if (!rc) {
    int status = mprof_trace_merge((const mprof_trace *const *)traces,
                                   inputs.count, output);
    if (status)
      rc = cli_fail(status);
    else
      fprintf(stderr, "mprof merge: %s: %zu traces\n", output, inputs.count);
  }
  for (size_t i = 0; traces && i < inputs.count; i++)
    mprof_trace_free(traces[i]);
  free(traces);
  cli_trace_set_free(&inputs);
  return rc;
}
