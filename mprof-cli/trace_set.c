/*
 * mprof CLI — the traces a command was given: paths, and directories that
 * stand for the .mprof files in them (a run of several processes).
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

static int add_path(cli_trace_set *set, const char *path) {
  char **grown = (char **)realloc(set->paths, (set->count + 1) * sizeof *grown);
  if (!grown)
    return -1;
  set->paths = grown;
  set->paths[set->count] = strdup(path);
  return set->paths[set->count++] ? 0 : -1;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_trace_set_add(cli_trace_set *set, const char *arg) {
  struct stat st;
  if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
    return add_path(set, arg);
  DIR *dir = opendir(arg);
  if (!dir)
    return add_path(set, arg);
  size_t first = set->count;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 6, ".mprof") != 0)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
    if (add_path(set, path) != 0) {
      closedir(dir);
      return -1;
    }
  }
  closedir(dir);
  if (set->count > first)
    qsort(set->paths + first, set->count - first, sizeof *set->paths, by_name);
  return 0;
}

void cli_trace_set_free(cli_trace_set *set) {
  for (size_t i = 0; i < set->count; i++)
    free(set->paths[i]);
  free(set->paths);
  set->paths = NULL;
  set->count = 0;
}
