/*
 * A stand-in for the CUPTI producer's mprof_control entry point: it logs
 * each call to stdout and answers "recording" between a start and a stop
 * or inside a step, so the test sees calls arrive and answers return.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

static int depth;

__attribute__((visibility("default"))) int mprof_control(int version, int op,
                                                         const char *name);

int mprof_control(int version, int op, const char *name) {
  printf("control v%d op %d %s\n", version, op, name ? name : "-");
  fflush(stdout);
  if (op == 1 || op == 3)
    depth++;
  else if ((op == 2 || op == 4) && depth > 0)
    depth--;
  return depth > 0;
}
