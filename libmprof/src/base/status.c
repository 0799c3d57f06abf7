/*
 * mprof — status names and the library version.
 *
 * SPDX-License-Identifier: MIT
 */
#include "mprof/status.h"
#include "mprof/version.h"

const char *mprof_status_name(int status) {
  switch (status) {
  case MPROF_OK: return "OK";
  case MPROF_EINVAL: return "EINVAL";
  case MPROF_ENOMEM: return "ENOMEM";
  case MPROF_EIO: return "EIO";
  case MPROF_EFORMAT: return "EFORMAT";
  case MPROF_EVERSION: return "EVERSION";
  case MPROF_ENOTFOUND: return "ENOTFOUND";
  case MPROF_EUNSUPPORTED: return "EUNSUPPORTED";
  default: return "EUNKNOWN";
  }
}

const char *mprof_version(void) { return MPROF_VERSION_STRING; }

unsigned mprof_version_number(void) { return MPROF_VERSION_NUMBER; }
