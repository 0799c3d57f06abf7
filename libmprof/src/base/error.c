/*
 * mprof — thread-local last-error message.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "mprof/error.h"

#define MPROF_ERROR_MAX 1024

static _Thread_local char error_message[MPROF_ERROR_MAX];
static _Thread_local int error_status;

const char *mprof_error_last(void) { return error_message; }

int mprof_error_last_status(void) { return error_status; }

void mprof_error_clear(void) {
  error_message[0] = '\0';
  error_status = 0;
}

int mprof__error_set(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_message, sizeof error_message, fmt, ap);
  va_end(ap);
  error_status = status;
  return status;
}

int mprof__error_at(int status, const char *name, uint64_t at, const char *fmt,
                    ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mprof__error_set(status, "%s: at byte %" PRIu64 ": %s", name, at, msg);
}

void mprof__error_prefix(const char *fmt, ...) {
  char prefix[512];
  char old[MPROF_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, error_message, sizeof old);
  size_t used = strlen(prefix);
  if (used > sizeof error_message - 3)
    used = sizeof error_message - 3;
  memcpy(error_message, prefix, used);
  memcpy(error_message + used, ": ", 2);
  used += 2;
  size_t rest = strnlen(old, sizeof old);
  if (rest > sizeof error_message - 1 - used)
    rest = sizeof error_message - 1 - used;
  memcpy(error_message + used, old, rest);
  error_message[used + rest] = '\0';
}

int mprof__version_check(const char *what, unsigned version, unsigned oldest,
                         unsigned current) {
  if (version >= oldest && version <= current)
    return 0;
  char known[48];
  if (oldest == current)
    snprintf(known, sizeof known, "version %u", current);
  else
    snprintf(known, sizeof known, "versions %u to %u", oldest, current);
  return mprof__error_set(MPROF_EVERSION,
                          "%s version %u is not supported (this mprof reads "
                          "%s; build against its headers and start from the "
                          "struct's *_INIT macro)",
                          what, version, known);
}

static int version_error(const char *what, unsigned version, unsigned oldest,
                         unsigned current) {
  char noun[64];
  snprintf(noun, sizeof noun, "%s options", what);
  return mprof__version_check(noun, version, oldest, current);
}

size_t mprof__version_size(const mprof__versions *v, unsigned version) {
  unsigned oldest = 1;
  while (oldest < v->count && !v->ends[oldest - 1])
    oldest++;
  if (mprof__version_check(v->what, version, oldest, v->count))
    return 0;
  return v->ends[version - 1];
}

int mprof__options_init(void *opts, const void *init, unsigned version,
                        const mprof__versions *v) {
  if (!opts)
    return mprof__error_set(MPROF_EINVAL, "%s: NULL", v->what);
  size_t size = mprof__version_size(v, version);
  if (!size)
    return MPROF_EVERSION;
  memcpy(opts, init, size);
  *(unsigned *)opts = version; /* versioned structs start with it */
  return 0;
}

int mprof__result_check(const void *out, const mprof__versions *v) {
  if (!out)
    return 0;
  return mprof__version_size(v, *(const unsigned *)out) ? 0 : MPROF_EVERSION;
}

void mprof__result_store(void *out, const void *full,
                         const mprof__versions *v) {
  unsigned version = *(const unsigned *)out;
  memcpy(out, full, mprof__version_size(v, version));
  *(unsigned *)out = version;
}

const void *mprof__options_or_defaults(const void *opts, const void *defaults,
                                       unsigned oldest, unsigned current,
                                       const char *what) {
  if (!opts)
    opts = defaults;
  unsigned version = *(const unsigned *)opts;
  if (version < oldest || version > current) {
    version_error(what, version, oldest, current);
    return NULL;
  }
  return opts;
}
