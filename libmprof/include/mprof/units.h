/*
 * mprof — numbers for people: the one spelling of durations, shares,
 * counts, sizes and bandwidths that the reports, the CLI and the viewer
 * print.
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

/** "12.3%" for 0.123; "0%" and "100%" without decimals; "<0.1%" and
 * ">99.9%" for what would read 0.0% or 100.0% but is not nothing or all. */
MPROF_API void mprof_format_percent(char *buf, size_t size, double fraction);

/** "1,234,567". */
MPROF_API void mprof_format_count(char *buf, size_t size, uint64_t value);

/** "64 MiB", "1.5 KiB", "512 B": binary units, three significant digits
 * (whole numbers stay whole: "64 MiB", not "64.0 MiB"). */
MPROF_API void mprof_format_bytes(char *buf, size_t size, double bytes);

/** "48.2 GB/s", "950 MB/s", "12 kB/s": decimal units (as bandwidth is
 * quoted), three significant digits. */
MPROF_API void mprof_format_bandwidth(char *buf, size_t size,
                                      double bytes_per_second);

/** A time-axis label: "+1.5 ms", "+200 us", "0": @p ns in the unit of the
 * larger of it and @p step_ns (the spacing of the ticks), with as many
 * decimals as the step needs and no more, units spelled as
 * mprof_format_duration() spells them; negative offsets start with "-". */
MPROF_API void mprof_format_tick(char *buf, size_t size, double ns,
                                 double step_ns);

/** A GPU's traits as every view spells them: "sm_90, 132 SMs, 1.98 GHz",
 * leaving out what the trace does not know (a compute capability of 0.0,
 * no SMs, no clock); "unknown" when it knows none of them. */
MPROF_API void mprof_format_device_traits(char *buf, size_t size,
                                          uint32_t cc_major, uint32_t cc_minor,
                                          uint32_t sm_count,
                                          uint32_t core_clock_khz);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_UNITS_H */
