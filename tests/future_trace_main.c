/*
 * mprof tests — future-trace IN OUT [--today] [--streamed]
 *                            [--short SECTION:BYTES]
 * Rewrites the finished trace IN as a newer mprof might write it
 * (future_trace.h): every record 12 bytes longer, layout version 2, the
 * next format minor, unknown sections and META keys. --today keeps today's
 * layout (for a streamed file of today's writer to compare with);
 * --streamed writes a streamed capture; --short cuts the records of
 * section number SECTION by BYTES.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "future_trace.h"
#include "test_util.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: future-trace IN OUT [--today] [--streamed] "
                    "[--short SECTION:BYTES]\n");
    return 2;
  }
  future_options o = future_options_all();
  for (int i = 3; i < argc; i++) {
    if (strcmp(argv[i], "--today") == 0) {
      int streamed = o.streamed;
      memset(&o, 0, sizeof o);
      o.streamed = streamed;
    } else if (strcmp(argv[i], "--streamed") == 0) {
      o.streamed = 1;
    } else if (strcmp(argv[i], "--short") == 0 && i + 1 < argc &&
               sscanf(argv[i + 1], "%u:%u", &o.short_section, &o.short_by) ==
                   2) {
      i++;
    } else {
      fprintf(stderr, "future-trace: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  size_t size = 0, out_size = 0;
  unsigned char *in = test_read_file(argv[1], &size);
  if (!in) {
    fprintf(stderr, "future-trace: cannot read %s\n", argv[1]);
    return 2;
  }
  unsigned char *out = future_trace(in, size, &o, &out_size);
  free(in);
  if (!out) {
    fprintf(stderr, "future-trace: %s is not a finished trace\n", argv[1]);
    return 2;
  }
  int rc = test_write_file(argv[2], out, out_size);
  free(out);
  if (rc) {
    fprintf(stderr, "future-trace: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
