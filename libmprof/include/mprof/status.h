/*
 * mprof — status codes. Values are pinned: they never change once released.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_STATUS_H
#define MPROF_STATUS_H

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Every fallible mprof function returns 0 or one of these negative codes. */
typedef enum mprof_status {
  MPROF_OK = 0,
  MPROF_EINVAL = -1,      /**< bad argument from the caller */
  MPROF_ENOMEM = -2,      /**< out of memory */
  MPROF_EIO = -3,         /**< the operating system refused a file operation */
  MPROF_EFORMAT = -4,     /**< the input is malformed (truncated, corrupt) */
  MPROF_EVERSION = -5,    /**< the input or options have an unknown version */
  MPROF_ENOTFOUND = -6,   /**< a named thing does not exist */
  MPROF_EUNSUPPORTED = -7 /**< valid, but this build cannot do it */
} mprof_status;

/** A short constant name for @p status ("EFORMAT"); never NULL. */
MPROF_API const char *mprof_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_STATUS_H */
