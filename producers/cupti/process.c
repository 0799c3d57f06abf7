/*
 * mprof CUPTI producer — one process, one trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include "process.h"

#include "mprof/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mprof_cupti_open_output(mprof_writer **out, char *path, size_t size,
                            long pid, int has_pid, const char *manifest,
                            int *renamed) {
  mprof_writer_options opts = MPROF_WRITER_OPTIONS_INIT;
  opts.open_flags = MPROF_WRITER_EXCLUSIVE;
  *renamed = 0;
  int rc = MPROF_EIO;
  if (has_pid || !mprof_cupti_manifest_names(manifest, path)) {
    rc = mprof_writer_open(out, path, &opts);
    if (rc == 0 || errno != EEXIST)
      return rc;
  }
  if (!has_pid) {
    char other[4096];
    if (mprof_cupti_pid_path(other, sizeof other, path, pid) != 0 ||
        strlen(other) >= size)
      return rc;
    snprintf(path, size, "%s", other);
    *renamed = 1;
    rc = mprof_writer_open(out, path, &opts);
    if (rc == 0 || errno != EEXIST)
      return rc;
  }
  /* Our own pid is in the name: whoever left it there is gone. */
  opts.open_flags = 0;
  return mprof_writer_open(out, path, &opts);
}

static const char *first_set(mprof_cupti_env_fn env, void *userdata,
                             const char *const *names, const char **source) {
  for (; *names; names++) {
    const char *value = env(userdata, *names);
    if (value && *value) {
      if (source)
        *source = *names;
      return value;
    }
  }
  return NULL;
}

void mprof_cupti_rank(mprof_cupti_env_fn env, void *userdata, const char **rank,
                      const char **source, const char **local_rank) {
  static const char *const ranks[] = {"RANK",         "OMPI_COMM_WORLD_RANK",
                                      "PMI_RANK",     "PMIX_RANK",
                                      "SLURM_PROCID", NULL};
  static const char *const locals[] = {
      "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL};
  *source = NULL;
  *rank = first_set(env, userdata, ranks, source);
  *local_rank = first_set(env, userdata, locals, NULL);
}

/* A rank's value as a number; MPROF_INDEX_NONE when it is not one. */
static uint32_t rank_number(const char *text) {
  if (!text || !*text || strspn(text, "0123456789") != strlen(text) ||
      strlen(text) > 9)
    return MPROF_INDEX_NONE;
  return (uint32_t)strtoul(text, NULL, 10);
}

void mprof_cupti_process_identity(mprof_process_record *out,
                                  mprof_cupti_env_fn env, void *userdata,
                                  long pid, long ppid) {
  const char *rank, *source, *local_rank;
  mprof_cupti_rank(env, userdata, &rank, &source, &local_rank);
  memset(out, 0, sizeof *out);
  out->pid = pid > 0 ? (uint32_t)pid : 0;
  out->ppid = ppid >= 0 ? (uint32_t)ppid : MPROF_INDEX_NONE;
  out->rank = rank_number(rank);
  out->local_rank = rank_number(local_rank);
}
