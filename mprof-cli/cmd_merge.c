/*
 * mprof merge — the traces of one run (one per process) as one trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "mprof/mprof.h"

typedef struct path_list {
  char **paths;
  size_t count;
} path_list;

static int add_path(path_list *list, const char *path) {
  char **grown =
      (char **)realloc(list->paths, (list->count + 1) * sizeof *grown);
  if (!grown)
    return -1;
  list->paths = grown;
  list->paths[list->count] = strdup(path);
  return list->paths[list->count++] ? 0 : -1;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory stands for the .mprof files in it, in name order. */
static int add_argument(path_list *list, const char *arg) {
  struct stat st;
  if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
    return add_path(list, arg);
  DIR *dir = opendir(arg);
  if (!dir)
    return add_path(list, arg);
  size_t first = list->count;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 6, ".mprof") != 0)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
    if (add_path(list, path) != 0) {
      closedir(dir);
      return -1;
    }
  }
  closedir(dir);
  qsort(list->paths + first, list->count - first, sizeof *list->paths, by_name);
  return 0;
}

int cmd_merge(int argc, char **argv) {
  const char *output = NULL;
  path_list inputs = {NULL, 0};
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
      if (i + 1 >= argc)
        rc = cli_usage_error("merge", "-o needs a file");
      else
        output = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      rc = cli_usage_error("merge", "unknown option '%s'", argv[i]);
    } else if (add_argument(&inputs, argv[i]) != 0) {
      fprintf(stderr, "mprof merge: out of memory\n");
      rc = CLI_EXIT_FAILED;
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
  for (size_t i = 0; i < inputs.count; i++) {
    if (traces)
      mprof_trace_free(traces[i]);
    free(inputs.paths[i]);
  }
  free(traces);
  free(inputs.paths);
  return rc;
}
