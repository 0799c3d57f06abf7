/*
 * mprof CLI — the traces a command was given: paths, directories that stand
 * for the .mprof files in them, and glob patterns (quoted, so the shell
 * leaves them to mprof); and opening them as one run (a merged set).
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"

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

static int is_pattern(const char *arg) { return strpbrk(arg, "*?[") != NULL; }

int cli_trace_set_add(cli_trace_set *set, const char *arg) {
  struct stat st;
  if (stat(arg, &st) != 0 && is_pattern(arg)) {
    glob_t g;
    memset(&g, 0, sizeof g);
    int rc = glob(arg, 0, NULL, &g);
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
      if (add_path(set, g.gl_pathv[i]) != 0)
        rc = -1;
    globfree(&g);
    return rc == -1 || rc == GLOB_NOSPACE ? -1 : 0;
  }
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

int cli_trace_set_resolve(cli_trace_set *set, const char *command,
                          const char *arg) {
  size_t before = set->count;
  if (cli_trace_set_add(set, arg) != 0) {
    fprintf(stderr, "mprof %s: out of memory\n", command);
    return CLI_EXIT_FAILED;
  }
  /* The same trace twice would count its launches twice. */
  for (size_t i = before; i < set->count; i++) {
    struct stat a, b;
    if (stat(set->paths[i], &a) != 0)
      continue;
    for (size_t k = 0; k < i; k++)
      if (stat(set->paths[k], &b) == 0 && a.st_dev == b.st_dev &&
          a.st_ino == b.st_ino)
        return cli_usage_error(command,
                               "%s is given twice (as %s too); name each "
                               "trace of a run once",
                               set->paths[i], set->paths[k]);
  }
  if (set->count > before)
    return CLI_EXIT_OK;
  struct stat st;
  if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
    return cli_usage_error(command,
                           "%s holds no .mprof files; give the directory "
                           "`mprof record -o DIR/trace.mprof` wrote to",
                           arg);
  return cli_usage_error(command,
                         "'%s' matches no file; check the pattern (quote it "
                         "so that mprof expands it)",
                         arg);
}

/* "a.mprof + 2 more": the set's name in messages and titles. */
static void set_name(char *out, size_t size, const char *label,
                     const cli_trace_set *set) {
  if (label)
    snprintf(out, size, "%s (%zu traces)", label, set->count);
  else
    snprintf(out, size, "%s + %zu more", set->paths[0], set->count - 1);
}

/* Opening a set's traces on a few threads: each takes the next path. */
typedef struct open_job {
  const cli_trace_set *set;
  mprof_trace **traces;
  size_t next; /* taken atomically */
  int failed;  /* set atomically when any open fails */
} open_job;

static void *open_some(void *arg) {
  open_job *job = (open_job *)arg;
  for (;;) {
    size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
    if (i >= job->set->count)
      return NULL;
    if (mprof_mkprof_open_trace(&job->traces[i], job->set->paths[i], NULL))
      __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
  }
}

/* Open every trace of @p set into @p traces on up to one thread a core;
 * 0 when all opened. On a failure all are closed again: the caller opens
 * them one by one, so that the first to fail says why on its thread. */
static int open_parallel(const cli_trace_set *set, mprof_trace **traces) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = cpus > 1 ? (size_t)cpus : 1;
  if (threads > set->count)
    threads = set->count;
  if (threads < 2)
    return -1;
  open_job job = {set, traces, 0, 0};
  pthread_t *ids = (pthread_t *)calloc(threads - 1, sizeof *ids);
  size_t started = 0;
  while (ids && started + 1 < threads &&
         pthread_create(&ids[started], NULL, open_some, &job) == 0)
    started++;
  open_some(&job);
  for (size_t i = 0; i < started; i++)
    pthread_join(ids[i], NULL);
  free(ids);
  if (!job.failed)
    return 0;
  for (size_t i = 0; i < set->count; i++) {
    mprof_trace_free(traces[i]);
    traces[i] = NULL;
  }
  return -1;
}

int cli_trace_set_open(const cli_trace_set *set, const char *label,
                       mprof_trace **out, size_t *failed) {
  *out = NULL;
  *failed = set->count;
  if (set->count == 1) {
    int rc = mprof_mkprof_open_trace(out, set->paths[0], NULL);
    if (rc)
      *failed = 0;
    return rc;
  }
  mprof_trace **traces = (mprof_trace **)calloc(set->count, sizeof *traces);
  if (!traces) {
    mprof_error_clear();
    return MPROF_ENOMEM;
  }
  int rc = 0;
  if (open_parallel(set, traces) != 0)
    for (size_t i = 0; !rc && i < set->count; i++)
      if ((rc = mprof_mkprof_open_trace(&traces[i], set->paths[i], NULL)) != 0)
        *failed = i;
  if (!rc) {
    char name[PATH_MAX + 64];
    set_name(name, sizeof name, label, set);
    rc = mprof_trace_open_merged(out, (const mprof_trace *const *)traces,
                                 set->count, name);
  }
  for (size_t i = 0; i < set->count; i++)
    mprof_trace_free(traces[i]);
  free(traces);
  return rc;
}

int cli_trace_set_fail(const cli_trace_set *set, int rc, size_t failed,
                       const char *message) {
  if (!message || !*message)
    message = mprof_status_name(rc);
  fprintf(stderr, "mprof: %s%s\n", message,
          set->count > 1 && failed < set->count ? "; leave it out of the set"
                                                : "");
  return cli_exit_status(rc);
}

void cli_trace_set_free(cli_trace_set *set) {
  for (size_t i = 0; i < set->count; i++)
    free(set->paths[i]);
  free(set->paths);
  set->paths = NULL;
  set->count = 0;
}
