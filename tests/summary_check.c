/*
 * mprof tests — what must hold in any `mprof summary --json --all`, whatever
 * the trace: the checks beside the golden snapshots, which only say that
 * nothing changed, not that it was right.
 *
 *   summary_check SUMMARY.json KERNELS LAUNCHES
 *
 * KERNELS and LAUNCHES are the trace's counts as `mprof info` gives them.
 * Per kernel: min <= median <= p90 <= max, min <= mean <= max, total = mean
 * x launches (the mean is whole ns), one launch has no spread; shapes add up
 * to their kernel; the verdict's state is its dimension's (a roof aside).
 * Over the trace: kernel shares add up to 100% (and device shares per
 * device), within the rounding of 4 decimals each; launches and samples add
 * up to the trace's; the seven stall shares to at most 100%.
 * Prints each failure; exit 1 when any, 2 on bad input.
 *
 * SPDX-License-Identifier: MIT
 */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static const char *kernel_name = "";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "summary_check: %s%s", kernel_name, *kernel_name ? ": " : "");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failures++;
}

static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v)) {
    fprintf(stderr, "summary_check: %s%sno \"%s\"\n", kernel_name,
            *kernel_name ? ": " : "", key);
    exit(2);
  }
  return v;
}

static double num(json_object *o, const char *key) {
  return json_object_get_double(get(o, key));
}

static const char *str(json_object *o, const char *key) {
  json_object *v = get(o, key);
  return json_object_is_type(v, json_type_null) ? NULL
                                                : json_object_get_string(v);
}

/* Shares written with 4 decimals: a sum of n of them is off by at most
 * n x 0.00005. */
static void check_sum(double sum, size_t n, const char *what) {
  double slack = 0.00005 * (double)n + 1e-9;
  if (fabs(sum - 1.0) > slack)
    fail("%s add up to %.6f, not 1 (within %.6f)", what, sum, slack);
}

static void check_kernel(json_object *k) {
  double launches = num(k, "launches");
  double min = num(k, "min_ns"), max = num(k, "max_ns");
  double median = num(k, "median_ns"), p90 = num(k, "p90_ns");
  double mean = num(k, "mean_ns"), total = num(k, "total_ns");
  if (launches > 0) {
    if (!(min <= median))
      fail("min %.0f ns is above the median %.0f ns", min, median);
    if (!(median <= p90))
      fail("median %.0f ns is above p90 %.0f ns", median, p90);
    if (!(p90 <= max))
      fail("p90 %.0f ns is above max %.0f ns", p90, max);
    if (!(min <= mean && mean <= max))
      fail("mean %.0f ns is outside min..max (max %.0f ns)", mean, max);
    if (!(fabs(total - mean * launches) <= launches))
      fail("total %.0f ns is not mean x launches (%.0f ns)", total,
           mean * launches);
    if (launches == 1 && (min != max || num(k, "stddev_ns") != 0))
      fail("one launch with min %.0f ns and max %.0f ns", min, max);
  } else if (total != 0) {
    fail("no launches but %.0f ns of time", total);
  }
  /* Shapes: every one listed adds up to the kernel. */
  json_object *shapes = get(k, "shapes");
  json_object *items = get(shapes, "items");
  size_t n = json_object_array_length(items);
  if (num(shapes, "omitted") == 0 && launches > 0) {
    double count = 0, share = 0;
    for (size_t i = 0; i < n; i++) {
      json_object *s = json_object_array_get_idx(items, i);
      count += num(s, "launches");
      share += num(s, "share");
    }
    if (count != launches)
      fail("its shapes hold %.0f launches of %.0f", count, launches);
    check_sum(share, n, "its shapes' shares");
  }
  /* The verdict is the state of the dimension it names, unless it is a
   * measured roof (docs/DIAGNOSIS.md, "Roofs"), or its gain says otherwise:
   * an issue from a 25% gain, minor under 10% unless that is a lower bound
   * (DIAGNOSIS.md, "Reading the gains"). Its gain and saving are the
   * dimension's. */
  json_object *verdict = get(k, "verdict"), *roof = NULL;
  const char *dim = str(verdict, "dimension");
  json_object *dims = get(k, "dimensions"), *d = NULL;
  if (dim && !json_object_object_get_ex(verdict, "roof", &roof) &&
      json_object_object_get_ex(dims, dim, &d)) {
    const char *want = str(d, "state"), *bound = str(d, "gain_bound");
    double gain = num(d, "gain");
    if ((!strcmp(want, "minor") || !strcmp(want, "issue")) &&
        strcmp(bound, "unknown") != 0) {
      if (gain >= 0.25)
        want = "issue";
      else if (gain < 0.10 && strcmp(bound, "at_least") != 0)
        want = "minor";
    }
    if (strcmp(want, str(verdict, "state")) != 0)
      fail("the verdict is %s %s but the dimension is %s with a gain of %.4f "
           "(%s): expected %s",
           str(verdict, "state"), dim, str(d, "state"), gain, bound, want);
    if (num(verdict, "gain") != gain ||
        strcmp(str(verdict, "gain_bound"), bound) != 0)
      fail("the verdict's gain %.4f (%s) is not its dimension's, %.4f (%s)",
           num(verdict, "gain"), str(verdict, "gain_bound"), gain, bound);
  }
  /* The stall dimensions split the plain samples (with `other`). */
  static const char *const stalls[] = {
      "memory_latency",  "memory_throughput", "shared_memory", "compute",
      "synchronisation", "instruction_fetch", "scheduling"};
  double stall_sum = 0;
  for (size_t i = 0; i < 7; i++) {
    json_object *metrics, *share;
    if (json_object_object_get_ex(dims, stalls[i], &d) &&
        json_object_object_get_ex(d, "metrics", &metrics) &&
        json_object_object_get_ex(metrics, "share", &share))
      stall_sum += json_object_get_double(share);
  }
  if (stall_sum > 1.0 + 7 * 0.00005)
    fail("the stall dimensions hold %.6f of its samples, more than all",
         stall_sum);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: summary_check SUMMARY.json KERNELS LAUNCHES\n");
    return 2;
  }
  json_object *doc = json_object_from_file(argv[1]);
  if (!doc) {
    fprintf(stderr, "summary_check: %s: %s\n", argv[1],
            json_util_get_last_err());
    return 2;
  }
  double want_kernels = atof(argv[2]), want_launches = atof(argv[3]);
  json_object *trace = get(doc, "trace"), *kernels = get(doc, "kernels");
  json_object *items = get(kernels, "items");
  size_t n = json_object_array_length(items);
  if (num(trace, "kernels") != want_kernels)
    fail("the trace has %.0f kernels; mprof info counts %.0f",
         num(trace, "kernels"), want_kernels);
  if (num(trace, "launches") != want_launches)
    fail("the trace has %.0f launches; mprof info counts %.0f",
         num(trace, "launches"), want_launches);
  if (num(kernels, "matched") != want_kernels || (double)n != want_kernels)
    fail("%.0f kernels listed of %.0f (run it with --all)", (double)n,
         want_kernels);
  double launches = 0, samples = 0, share = 0;
  double device_share[64] = {0};
  size_t device_kernels[64] = {0};
  for (size_t i = 0; i < n; i++) {
    json_object *k = json_object_array_get_idx(items, i);
    kernel_name = str(k, "name");
    check_kernel(k);
    launches += num(k, "launches");
    samples += num(k, "samples");
    share += num(k, "share");
    int device = (int)num(k, "device");
    if (device >= 0 && device < 64) {
      device_share[device] += num(k, "device_share");
      device_kernels[device]++;
    }
  }
  /* Two kernels of different names never share a short name: a person
   * could not tell their rows apart. */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      json_object *a = json_object_array_get_idx(items, i);
      json_object *b = json_object_array_get_idx(items, j);
      kernel_name = str(a, "name");
      if (strcmp(str(a, "name"), str(b, "name")) != 0 &&
          strcmp(str(a, "short_name"), str(b, "short_name")) == 0)
        fail("its short name \"%s\" is also that of %s", str(a, "short_name"),
             str(b, "name"));
    }
  kernel_name = "";
  if (launches != num(trace, "launches"))
    fail("the kernels hold %.0f launches of the trace's %.0f", launches,
         num(trace, "launches"));
  if (samples != num(trace, "samples"))
    fail("the kernels hold %.0f PC samples of the trace's %.0f", samples,
         num(trace, "samples"));
  if (launches > 0) {
    check_sum(share, n, "the kernels' shares");
    for (int d = 0; d < 64; d++)
      if (device_kernels[d] && device_share[d] > 0)
        check_sum(device_share[d], device_kernels[d],
                  "the device shares of one device");
  }
  json_object_put(doc);
  return failures ? 1 : 0;
}
