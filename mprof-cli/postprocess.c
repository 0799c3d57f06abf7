/*
 * mprof CLI — after a capture: write the sidecar.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli.h"

int cli_postprocess(const char *trace, int no_sass, int quiet) {
  (void)trace;
  (void)no_sass;
  (void)quiet;
  return 0;
}
