/*
 * mprof — libFuzzer target for the MKPROF1.2 reader.
 *
 * Any byte string handed to mprof_mkprof_parse() must give either a file
 * whose accessors are safe on every slot, or a clean error; never a crash.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>

#include "mprof/mkprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mprof_mkprof *m = NULL;
  if (mprof_mkprof_parse(&m, data, size, "fuzz.mkprof") != 0)
    return 0;
  mprof_mkprof_summary s = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(m, &s);
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m);
  size_t units;
  mprof_mkprof_units(m, &units);
  /* Touch the first slots in full: params, bars, events. */
  for (uint32_t p = 0; p < l->total_processors && p < 8; p++)
    for (uint32_t i = 0; i < l->max_instructions && i < 8; i++) {
      mprof_mkprof_param_value pv[16];
      mprof_mkprof_event ev[64];
      mprof_mkprof_params(m, p, i, pv, 16);
      mprof_mkprof_instruction_controller_events(m, p, i, ev, 64);
      for (size_t u = 0; u < units; u++) {
        uint32_t a, b;
        mprof_mkprof_unit_activity(m, p, i, u, &a, &b);
        mprof_mkprof_unit_events(m, p, i, u, ev, 64);
      }
    }
  mprof_mkprof_free(m);
  return 0;
}
