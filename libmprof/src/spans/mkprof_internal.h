/*
 * mprof — internal: a parsed MKPROF file, shared by its reader and its
 * import into a trace.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SPANS_MKPROF_INTERNAL_H
#define MPROF_SPANS_MKPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "mprof/mkprof.h"

struct mprof_mkprof {
  char *name;
  unsigned char *data;
  size_t size;
  mprof_mkprof_layout layout;
  char *format_version;
  char *config_text; /* NUL-terminated copy, for mprof_mkprof_to_trace */
  mprof_mkprof_instruction_type *types;
  size_t type_count;
  mprof_mkprof_param *params;
  mprof_mkprof_unit *units;
  size_t unit_count;
  mprof_mkprof_event_type *event_types;
  size_t event_type_count;
  mprof_mkprof_event_type *controllers;
  size_t controller_count;
  mprof__arena names; /* every string the tables point to */
  const int32_t *instructions;
  const uint32_t *starts, *ends, *events;
};

#endif /* MPROF_SPANS_MKPROF_INTERNAL_H */
