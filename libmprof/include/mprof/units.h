/*
 * mprof — numbers for people: the one spelling of durations, shares and
 * counts that the reports, the CLI and the viewer print.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_UNITS_H
#define MPROF_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** "1.23 ms", "456 ns", "7.8 us", "2.5 s": four significant digits, the
 * unit "us" in ASCII so every terminal and font shows it. Writes at most
 * @p size bytes into @p buf, always terminated (16 bytes suffice). */
MPROF_API void mprof_format_duration(char *buf, size_t size, double ns);

/** "12.3%" for 0.123; "0%" and "100%" without decimals. */
MPROF_API void mprof_format_percent(char *buf, size_t size, double fraction);

/** "1,234,567". */
MPROF_API void mprof_format_count(char *buf, size_t size, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_UNITS_H */
