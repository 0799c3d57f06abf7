/*
 * mprof tests — json_schema_check SCHEMA [DOC]: validate DOC (default
 * stdin) against SCHEMA; exit 0 when it conforms, 1 with one line on
 * stderr when it does not.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "json_schema.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: json_schema_check SCHEMA [DOC]\n");
    return 2;
  }
  FILE *in = argc == 3 ? fopen(argv[2], "rb") : stdin;
  if (!in) {
    fprintf(stderr, "json_schema_check: cannot open %s\n", argv[2]);
    return 2;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  size_t n;
  while (text && (n = fread(text + len, 1, cap - len - 1, in)) > 0) {
    len += n;
    if (cap - len < 2) {
      char *more = realloc(text, cap * 2);
      if (!more) {
        free(text);
        text = NULL;
        break;
      }
      text = more;
      cap *= 2;
    }
  }
  if (in != stdin)
    fclose(in);
  if (!text) {
    fprintf(stderr, "json_schema_check: out of memory\n");
    return 2;
  }
  text[len] = 0;
  char why[1024];
  int rc = json_schema_validate_text(argv[1], text, why, sizeof why);
  free(text);
  if (rc) {
    fprintf(stderr, "json_schema_check: %s\n", why);
    return 1;
  }
  return 0;
}
