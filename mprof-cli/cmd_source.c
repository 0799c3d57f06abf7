/*
 * mprof source — spans from producers/source: what a .source file holds,
 * merging it into a trace, and the hooks `mprof record source` uses.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/source.h"

void cli_source_env(const char *pattern) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s.source", pattern) < (int)sizeof path)
    setenv("MPROF_SOURCE_OUTPUT", path, 1);
}

static void print_report(const char *trace,
                         const mprof_source_merge_report *r) {
  fprintf(stderr,
          "mprof: %s: %zu source spans from %zu launches (%zu matched: %zu "
          "by name and order, %zu by time; %zu unmatched), alignment %s",
          trace, r->spans, r->launches_with_spans,
          r->matched_by_order + r->matched_by_time, r->matched_by_order,
          r->matched_by_time, r->unmatched, r->method);
  if (r->alignment_launches)
    fprintf(stderr,
            ", offset %" PRId64 " ns, error max %" PRIu64
            " ns / median %" PRIu64 " ns",
            r->alignment_offset_ns, r->alignment_error_max_ns,
            r->alignment_error_median_ns);
  if (r->globaltimer_step_ns)
    fprintf(stderr, ", globaltimer step %u ns", r->globaltimer_step_ns);
  fprintf(stderr, "\n");
}

static void warn_report(const mprof_source_merge_report *r) {
  if (r->overflow)
    fprintf(stderr,
            "mprof: warning: %" PRIu64
            " source spans did not fit the device buffer (counted in DROPS "
            "as span overflow): set MPROF_SOURCE_CAPACITY higher\n",
            r->overflow);
  if (r->unmatched)
    fprintf(stderr,
            "mprof: warning: %zu instrumented launches matched no CUPTI "
            "launch (their spans have no launch); check the kernel names "
            "given to mprof_source_next()\n",
            r->unmatched);
}

int cli_source_merge(const char *trace, unsigned flags) {
  char source[PATH_MAX];
  if (snprintf(source, sizeof source, "%s.source", trace) >=
      (int)sizeof source) {
    fprintf(stderr, "mprof: %s: path too long\n", trace);
    return CLI_EXIT_USAGE;
  }
  if (access(source, F_OK) != 0) {
    fprintf(stderr,
            "mprof: warning: %s was not written: the program was not built "
            "with -DMPROF_SOURCE and producers/source/mprof_source.cuh, or "
            "did not reach mprof_source_finish(); the trace has no source "
            "spans\n",
            source);
    return 0;
  }
  mprof_source_merge_report report = MPROF_SOURCE_MERGE_REPORT_INIT;
  int rc = mprof_source_merge(trace, source, trace, NULL, &report);
  if (rc)
    return cli_fail(rc);
  if (!(flags & CLI_POST_QUIET))
    print_report(trace, &report);
  warn_report(&report);
  return 0;
}

static const char *role_name(uint32_t role) {
  static const char *const names[] = {"other", "separator", "loader",
                                      "consumer", "storer"};
  return role < sizeof names / sizeof names[0] ? names[role] : "?";
}

static int source_info(const char *path) {
  mprof_source_file *f;
  int rc = mprof_source_file_open(&f, path);
  if (rc)
    return cli_fail(rc);
  const mprof_source_file_header *h = mprof_source_file_get_header(f);
  size_t regions, kernels, launches, records;
  const mprof_source_file_region *rg = mprof_source_file_regions(f, &regions);
  const mprof_source_file_kernel *k = mprof_source_file_kernels(f, &kernels);
  const mprof_source_file_launch *l = mprof_source_file_launches(f, &launches);
  const mprof_source_file_record *r = mprof_source_file_records(f, &records);
  printf("source     %s (format %u.%u)\n", path, h->version_major,
         h->version_minor);
  printf("spans      %zu in %zu launches; %" PRIu64
         " overflowed (buffer %" PRIu64 " records)\n",
         records, launches, h->overflow_count, h->capacity);
  if (h->timer_step_ns)
    printf("timer      %%globaltimer step %u ns (max %u, %u changes seen)\n",
           h->timer_step_ns, h->timer_step_max_ns, h->timer_changes);
  else
    printf("timer      %%globaltimer step not measured\n");
  uint64_t *count = (uint64_t *)calloc(regions + 1, sizeof *count);
  uint64_t *busy = (uint64_t *)calloc(regions + 1, sizeof *busy);
  uint64_t warp_spans = 0, t0 = UINT64_MAX, t1 = 0;
  for (size_t i = 0; count && busy && i < records; i++) {
    size_t slot = r[i].region < regions ? r[i].region : regions;
    count[slot]++;
    busy[slot] += r[i].end - r[i].start;
    warp_spans += r[i].warp != MPROF_INDEX_NONE;
    t0 = r[i].start < t0 ? r[i].start : t0;
    t1 = r[i].end > t1 ? r[i].end : t1;
  }
  if (records)
    printf("extent     %.3f ms of %%globaltimer; %" PRIu64
           " warp spans, %" PRIu64 " block spans\n",
           (double)(t1 - t0) / 1e6, warp_spans, (uint64_t)records - warp_spans);
  for (size_t i = 0; count && busy && i <= regions; i++) {
    if (i == regions && !count[i])
      break;
    printf("region %-3zu %-24s %-9s %10" PRIu64 " spans, mean %.3f us\n", i,
           i < regions ? mprof_source_file_string(f, rg[i].name) : "(unnamed)",
           i < regions ? role_name(rg[i].role) : "-", count[i],
           count[i] ? (double)busy[i] / (double)count[i] / 1e3 : 0.0);
  }
  free(count);
  free(busy);
  uint64_t *per_kernel = (uint64_t *)calloc(kernels + 1, sizeof *per_kernel);
  for (size_t i = 0; per_kernel && i < launches; i++)
    per_kernel[l[i].kernel]++;
  for (size_t i = 0; per_kernel && i < kernels; i++)
    printf("kernel %-3zu %-40s %" PRIu64 " launches\n", i,
           mprof_source_file_string(f, k[i].name), per_kernel[i]);
  free(per_kernel);
  mprof_source_file_free(f);
  return CLI_EXIT_OK;
}

static int source_merge(int argc, char **argv) {
  const char *trace = NULL, *source = NULL, *out = NULL;
  mprof_source_merge_options opts = MPROF_SOURCE_MERGE_OPTIONS_INIT;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (strcmp(argv[i], "--offset") == 0 && i + 1 < argc) {
      const char *text = argv[++i];
      char *end;
      errno = 0;
      long long ns = strtoll(text, &end, 10);
      if (end == text || *end)
        return cli_usage_error("source", "--offset takes nanoseconds");
      if (errno || ns > (long long)CLI_MAX_TIME_NS ||
          ns < -(long long)CLI_MAX_TIME_NS)
        return cli_usage_error("source",
                               "--offset %s is beyond 2^62 ns (about 146 "
                               "years)",
                               text);
      opts.offset_ns = ns;
      opts.flags |= MPROF_SOURCE_MERGE_FIXED_OFFSET;
    } else if (argv[i][0] == '-')
      return cli_usage_error("source", "unknown option '%s'", argv[i]);
    else if (!trace)
      trace = argv[i];
    else if (!source)
      source = argv[i];
    else
      return cli_usage_error("source", "too many arguments");
  }
  if (!trace)
    return cli_usage_error("source", "merge needs a trace");
  char default_source[PATH_MAX];
  if (!source) {
    snprintf(default_source, sizeof default_source, "%s.source", trace);
    source = default_source;
  }
  mprof_source_merge_report report = MPROF_SOURCE_MERGE_REPORT_INIT;
  int rc = mprof_source_merge(trace, source, out ? out : trace, &opts, &report);
  if (rc)
    return cli_fail(rc);
  print_report(out ? out : trace, &report);
  warn_report(&report);
  return CLI_EXIT_OK;
}

int cmd_source(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("source", "expected 'info' or 'merge'");
  if (strcmp(argv[1], "info") == 0) {
    if (argc != 3)
      return cli_usage_error("source", "info takes one .source file");
    return source_info(argv[2]);
  }
  if (strcmp(argv[1], "merge") == 0)
    return source_merge(argc, argv);
  return cli_usage_error("source", "unknown subcommand '%s'", argv[1]);
}
