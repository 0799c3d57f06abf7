/*
 * mprof CUPTI producer — one process, one trace.
 *
 * Every process that initialises CUDA under `mprof record` writes its own
 * trace: it claims its output name with an exclusive create of
 * "NAME.partial", so two processes never share a file, and a process that
 * finds the name taken writes "NAME.PID.EXT" instead. Each process tells
 * `record` what it wrote through one-line messages appended to the manifest
 * file named by MPROF_MANIFEST. All of this is plain libc, testable without
 * a GPU.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_PROCESS_H
#define MPROF_CUPTI_PROCESS_H

#include <stddef.h>

#include "config.h"
#include "mprof/writer.h"

/**
 * Open the writer for this process's trace at @p path (updated in place,
 * @p size bytes): the name itself when no other process holds it, else the
 * name with this process's pid (mprof_cupti_pid_path): when another process
 * holds it now, or when @p manifest (MPROF_MANIFEST, may be "") says an
 * earlier process of this run wrote it. @p has_pid: the name already holds
 * the pid, so a name found taken is a leftover from an earlier process of
 * the same pid and is reused. Returns the writer's status; *renamed is 1
 * when the pid was added.
 */
int mprof_cupti_open_output(mprof_writer **out, char *path, size_t size,
                            long pid, int has_pid, const char *manifest,
                            int *renamed);

/**
 * The process's rank from the launcher's variables (RANK,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID, first found) and
 * its local rank (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID).
 * Each pointer is NULL when none is set; *source names the variable.
 */
void mprof_cupti_rank(mprof_cupti_env_fn env, void *userdata, const char **rank,
                      const char **source, const char **local_rank);

/**
 * This process as its PROCESSES record says it: @p pid, @p ppid, and the
 * rank and local rank mprof_cupti_rank() finds (MPROF_INDEX_NONE when
 * unset or not a number). Everything else in *out is zero.
 */
void mprof_cupti_process_identity(mprof_process_record *out,
                                  mprof_cupti_env_fn env, void *userdata,
                                  long pid, long ppid);

#endif /* MPROF_CUPTI_PROCESS_H */
