/*
 * mprof — the last error message of the calling thread.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ERROR_H
#define MPROF_ERROR_H

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The message of the last failure on this thread: names the file, the
 * section and the byte offset for parse errors. Never NULL ("" when no error
 * has happened). Owned by the library; valid until the next mprof call on
 * this thread.
 */
MPROF_API const char *mprof_error_last(void);

/** The status code of the last failure on this thread, or 0. */
MPROF_API int mprof_error_last_status(void);

/** Forget the last error of this thread. */
MPROF_API void mprof_error_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_ERROR_H */
