/*
 * mprof — numbers for people (mprof/units.h): one spelling of durations,
 * shares and counts for the reports, the CLI and the viewer.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mprof/units.h"

void mprof_format_duration(char *buf, size_t size, double ns) {
  double a = fabs(ns);
  if (a >= 1e9)
    snprintf(buf, size, "%.3g s", ns / 1e9);
  else if (a >= 1e6)
    snprintf(buf, size, "%.4g ms", ns / 1e6);
  else if (a >= 1e3)
    snprintf(buf, size, "%.4g us", ns / 1e3);
  else
    snprintf(buf, size, "%.0f ns", ns);
}

void mprof_format_percent(char *buf, size_t size, double fraction) {
  double pct = fraction * 100.0;
  if (pct == 0.0 || pct == 100.0)
    snprintf(buf, size, "%.0f%%", pct);
  else if (pct > 0.0 && pct < 0.05) /* not "0.0%" for something */
    snprintf(buf, size, "<0.1%%");
  else if (pct > 99.95 && pct < 100.0) /* nor "100.0%" for not all */
    snprintf(buf, size, ">99.9%%");
  else
    snprintf(buf, size, "%.1f%%", pct);
}

void mprof_format_count(char *buf, size_t size, uint64_t value) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
  size_t o = 0;
  for (int i = 0; i < n && o + 2 < size; i++) {
    if (i && (n - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = 0;
}

/* Three significant digits of @p v with @p unit; a whole value without a
 * decimal point. */
static void three_digits(char *buf, size_t size, double v, const char *unit) {
  double a = fabs(v);
  if (a >= 100 || v == floor(v))
    snprintf(buf, size, "%.0f %s", v, unit);
  else if (a >= 10)
    snprintf(buf, size, "%.1f %s", v, unit);
  else
    snprintf(buf, size, "%.2f %s", v, unit);
  /* "1.50 MiB" -> "1.5 MiB": trailing zeros say nothing. */
  char *space = strchr(buf, ' ');
  char *dot = strchr(buf, '.');
  if (!space || !dot || dot > space)
    return;
  char *end = space;
  while (end[-1] == '0')
    end--;
  if (end[-1] == '.')
    end--;
  memmove(end, space, strlen(space) + 1);
}

void mprof_format_bytes(char *buf, size_t size, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes;
  while (fabs(v) >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  if (u && fabs(v) >= 999.5 && u < 5) {
    v /= 1024;
    u++;
  }
  three_digits(buf, size, v, units[u]);
}

void mprof_format_bandwidth(char *buf, size_t size, double bytes_per_second) {
  static const char *const units[] = {"B/s",  "kB/s", "MB/s",
                                      "GB/s", "TB/s", "PB/s"};
  int u = 0;
  double v = bytes_per_second;
  while (fabs(v) >= 999.5 && u < 5) {
    v /= 1000;
    u++;
  }
  three_digits(buf, size, v, units[u]);
}

void mprof_format_tick(char *buf, size_t size, double ns, double step_ns) {
  if (ns == 0) {
    snprintf(buf, size, "0");
    return;
  }
  double magnitude = fmax(fabs(ns), fabs(step_ns));
  double unit = 1;
  const char *name = "ns";
  if (magnitude >= 1e9) {
    unit = 1e9;
    name = "s";
  } else if (magnitude >= 1e6) {
    unit = 1e6;
    name = "ms";
  } else if (magnitude >= 1e3) {
    unit = 1e3;
    name = "us";
  }
  /* Decimals: enough to tell two ticks apart, none that are always 0. */
  int decimals = 0;
  double s = fabs(step_ns) / unit;
  while (s > 0 && fabs(s - floor(s + 0.5)) > 1e-6 * s && decimals < 9) {
    s *= 10;
    decimals++;
  }
  char text[64];
  snprintf(text, sizeof text, "%.*f", decimals, fabs(ns) / unit);
  snprintf(buf, size, "%s%s %s", ns < 0 ? "-" : "+", text, name);
}

void mprof_format_device_traits(char *buf, size_t size, uint32_t cc_major,
                                uint32_t cc_minor, uint32_t sm_count,
                                uint32_t core_clock_khz) {
  if (!buf || !size)
    return;
  char cc[32] = "", sms[32] = "", clock[32] = "";
  if (cc_major || cc_minor)
    snprintf(cc, sizeof cc, "sm_%u%u", cc_major, cc_minor);
  if (sm_count)
    snprintf(sms, sizeof sms, "%u SM%s", sm_count, sm_count == 1 ? "" : "s");
  if (core_clock_khz)
    snprintf(clock, sizeof clock, "%.2f GHz", core_clock_khz / 1e6);
  snprintf(buf, size, "%s%s%s%s%s", cc, *cc && *sms ? ", " : "", sms,
           (*cc || *sms) && *clock ? ", " : "", clock);
  if (!*buf)
    snprintf(buf, size, "unknown");
}
