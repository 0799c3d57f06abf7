/*
 * mprof — internal: running independent tasks on a few threads (the
 * per-trace work of a set: opening its files, its join's launch passes).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_BASE_POOL_H
#define MPROF_BASE_POOL_H

#include <stddef.h>

/* One task: 0 or a negative mprof_status with mprof_error_last() set. */
typedef int (*mprof__task_fn)(void *ctx, size_t task);

/*
 * Run @p fn(@p ctx, i) for every i in [0, @p tasks) on up to @p threads
 * threads, the calling one among them (0 and 1: all on the calling thread,
 * in order). Tasks must not depend on each other's order; each writes only
 * what is its own. Returns 0, or the failure of the lowest-numbered task
 * that failed, with its message in the caller's mprof_error_last(): the
 * same result whatever @p threads is. A thread that cannot start leaves
 * its tasks to the others.
 */
int mprof__pool_run(size_t threads, size_t tasks, mprof__task_fn fn, void *ctx);

#endif /* MPROF_BASE_POOL_H */
