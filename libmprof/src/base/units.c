/*
 * mprof — numbers for people (mprof/units.h): one spelling of durations,
 * shares and counts for the reports, the CLI and the viewer.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>

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
