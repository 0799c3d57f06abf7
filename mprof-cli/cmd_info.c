/*
 * mprof info — validate a trace and print what it holds.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mprof/mprof.h"

typedef struct kernel_tally {
  uint32_t kernel;
  uint64_t launches;
  uint64_t total_ns;
} kernel_tally;

static int by_total_desc(const void *a, const void *b) {
  const kernel_tally *x = (const kernel_tally *)a, *y = (const kernel_tally *)b;
  return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static const char *drop_name(uint32_t kind) {
  switch (kind) {
  case MPROF_DROP_ACTIVITY_RECORDS: return "activity records dropped";
  case MPROF_DROP_ACTIVITY_NO_TIMESTAMP:
    return "activity records without timestamps";
  case MPROF_DROP_PC_HW_BUFFER_FULL: return "PC hardware buffer full";
  case MPROF_DROP_PC_DROPPED_SAMPLES: return "PC samples dropped";
  case MPROF_DROP_PC_NON_USER_SAMPLES: return "PC samples in non-user kernels";
  case MPROF_DROP_SPAN_OVERFLOW: return "activity spans overflowed";
  case MPROF_DROP_WRITER_RECORDS: return "records the writer could not store";
  case MPROF_DROP_PC_TOTAL_SAMPLES:
    return "PC samples CUPTI took, non-user kernels' too";
  default: return "unknown counter";
  }
}

/* "streams 3-5", "stream 3", "no streams". */
static void print_range(const char *what, uint32_t first, uint32_t count) {
  if (count == 0)
    printf("no %ss", what);
  else if (count == 1)
    printf("%s %u", what, first);
  else
    printf("%ss %u-%u", what, first, first + count - 1);
}

/* Two lines per process: who it was, then how long it was recorded, how
 * it ended and which streams and devices are its. */
static void print_process(const mprof_trace *t, size_t i,
                          const mprof_process_record *p) {
  const char *pid = mprof_trace_process_meta(t, i, "pid");
  const char *host = mprof_trace_process_meta(t, i, "host");
  const char *ppid = mprof_trace_process_meta(t, i, "ppid");
  const char *rank = mprof_trace_process_meta(t, i, "rank");
  const char *local = mprof_trace_process_meta(t, i, "local_rank");
  const char *cmdline = mprof_trace_process_meta(t, i, "cmdline");
  printf("process %-2zu pid %s on %s", i, pid ? pid : "?", host ? host : "?");
  if (ppid)
    printf(", parent %s", ppid);
  if (rank)
    printf(", rank %s", rank);
  if (local)
    printf(", local rank %s", local);
  if (cmdline)
    printf(": %s", cmdline);
  printf("\n           ");
  if (p->start && p->end)
    printf("recorded %.3f s, ", (double)(p->end - p->start) / 1e9);
  if (p->exit_kind == MPROF_EXIT_STATUS)
    printf("exited with status %u", p->exit_value);
  else if (p->exit_kind == MPROF_EXIT_SIGNAL)
    printf("killed by signal %u (%s)", p->exit_value,
           cli_signal_name((int)p->exit_value));
  else if (p->end)
    printf("exit status not recorded");
  else
    printf("no end recorded (killed, or cut short)");
  printf("; ");
  print_range("stream", p->first_stream, p->stream_count);
  printf(", ");
  print_range("device", p->first_device, p->device_count);
  printf("\n");
}

static void append(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *out, size_t size, const char *fmt, ...) {
  size_t used = strlen(out);
  if (used + 1 >= size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out + used, size - used, fmt, ap);
  va_end(ap);
}

void cli_describe_capture(char *out, size_t size, const mprof_trace *t,
                          const mprof_capture_record *c) {
  const char *spec = mprof_trace_string(t, c->spec);
  int kernels = c->trigger == MPROF_CAPTURE_KERNELS;
  int ranges = c->trigger == MPROF_CAPTURE_PROFILER_API ||
               c->trigger == MPROF_CAPTURE_NVTX;
  const char *unit = kernels ? "launch" : "range";
  const char *units = kernels ? "launches" : "ranges";
  out[0] = '\0';
  if (ranges)
    append(out, size, "%s: ", spec && *spec ? spec : "ranges");
  else if (kernels)
    append(out, size, "launches of %s%s%s: ", spec && *spec ? "'" : "",
           spec && *spec ? spec : "every kernel", spec && *spec ? "'" : "");
  else
    append(out, size, "the run: ");
  if ((ranges || kernels) && c->recorded)
    append(out, size, "%s %llu-%llu recorded", units,
           (unsigned long long)c->skip + 1,
           (unsigned long long)(c->skip + c->recorded));
  else if (ranges || kernels)
    append(out, size, "no %s recorded", unit);
  else
    append(out, size, "%s", c->pieces ? "recorded" : "nothing recorded");
  if (c->delay)
    append(out, size, " after a %.3g s delay", (double)c->delay / 1e9);
  const mprof_process_record *p = NULL;
  size_t n = 0;
  const mprof_process_record *processes = mprof_trace_processes(t, &n);
  if (c->process < n)
    p = &processes[c->process];
  if (c->start && p && p->start && c->start >= p->start) {
    append(out, size, ", from %.3f s", (double)(c->start - p->start) / 1e9);
    if (c->end >= c->start)
      append(out, size, " to %.3f s", (double)(c->end - p->start) / 1e9);
    append(out, size, " of the process");
  }
  if (c->pieces > 1)
    append(out, size, " in %u pieces", c->pieces);
  char bytes[32];
  mprof_format_bytes(bytes, sizeof bytes, (double)c->max_bytes);
  switch (c->end_reason) {
  case MPROF_CAPTURE_END_RANGE_COUNT:
    append(out, size, "; ended after --range-count %llu",
           (unsigned long long)c->count);
    break;
  case MPROF_CAPTURE_END_KERNEL_COUNT:
    append(out, size, "; ended after --kernel-count %llu",
           (unsigned long long)c->count);
    break;
  case MPROF_CAPTURE_END_DURATION:
    append(out, size, "; ended when its --duration of %.3g s was up",
           (double)c->duration / 1e9);
    break;
  case MPROF_CAPTURE_END_MAX_SIZE:
    append(out, size, "; stopped by --max-size %s: the trace reached it",
           bytes);
    break;
  case MPROF_CAPTURE_END_EXIT:
    append(out, size, "; ended with the program");
    break;
  case MPROF_CAPTURE_END_NEVER_OPENED:
    append(out, size,
           "; the window never opened: the program ended after %llu "
           "matching %s",
           (unsigned long long)c->seen, c->seen == 1 ? unit : units);
    if ((ranges || kernels) && c->seen <= c->skip)
      append(out, size, ", not more than the %llu to skip",
             (unsigned long long)c->skip);
    break;
  case MPROF_CAPTURE_END_OPEN:
    append(out, size, "; still open when the trace was cut");
    break;
  default: append(out, size, "; ended (reason %u unknown)", c->end_reason);
  }
}

/* NVTX ranges still open when the capture was cut (or ended): they end
 * there, so their length is a lower bound. The first few by name. */
static void print_open_ranges(const mprof_trace *t, int partial) {
  size_t n, open = 0;
  const mprof_range_record *r = mprof_trace_ranges(t, &n);
  for (size_t i = 0; i < n; i++)
    open += (r[i].flags & MPROF_RANGE_FLAG_OPEN) != 0;
  if (!open)
    return;
  printf("open       %zu NVTX range%s %s, shown ending there:", open,
         open == 1 ? "" : "s",
         partial ? "still open at the cut" : "never closed before the exit");
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < 5; i++) {
    if (!(r[i].flags & MPROF_RANGE_FLAG_OPEN))
      continue;
    const char *name = mprof_trace_string(t, r[i].name);
    printf("%s %s (thread %u)", shown ? "," : "", *name ? name : "(unnamed)",
           r[i].thread_id);
    shown++;
  }
  printf("%s\n", open > shown ? ", ..." : "");
}

/* What of the captured modules the trace keeps: trimmed to the functions
 * that ran, whole, or only their size. */
static void print_code(const mprof_trace *t) {
  size_t n, trimmed = 0, whole = 0, omitted = 0;
  const mprof_cubin_record *c = mprof_trace_cubins(t, &n);
  if (!n)
    return;
  double loaded = 0, kept = 0;
  for (size_t i = 0; i < n; i++) {
    loaded += (double)c[i].module_size;
    kept += (double)c[i].blob_size;
    if (c[i].flags & MPROF_CUBIN_TRIMMED)
      trimmed++;
    else if (c[i].blob_size)
      whole++;
    else
      omitted++;
  }
  char loaded_text[32], kept_text[32];
  mprof_format_bytes(loaded_text, sizeof loaded_text, loaded);
  mprof_format_bytes(kept_text, sizeof kept_text, kept);
  printf("code       %zu module%s (%s as loaded): %zu trimmed to the "
         "functions that ran, %zu whole, %zu without code; %s kept\n",
         n, n == 1 ? "" : "s", loaded_text, trimmed, whole, omitted, kept_text);
}

/* The source files the trace embeds (SOURCES), when it has any. */
static void print_sources(const mprof_trace *t) {
  mprof_sources *s = NULL;
  if (mprof_sources_open(&s, t, NULL) != 0 || !mprof_sources_listed(s)) {
    mprof_sources_free(s);
    return;
  }
  size_t embedded = 0, missing = 0;
  uint64_t text = 0, stored = 0;
  for (size_t i = 0; i < mprof_sources_listed(s); i++) {
    const mprof_source_listing *l = mprof_sources_listed_at(s, i);
    if (l->state == MPROF_SOURCE_EMBEDDED)
      embedded++;
    else
      missing++;
    text += l->size;
    stored += l->stored;
  }
  char a[32], b[32];
  mprof_format_bytes(a, sizeof a, (double)text);
  mprof_format_bytes(b, sizeof b, (double)stored);
  printf("sources    %zu file%s embedded (%s, %s stored), %zu missing\n",
         embedded, embedded == 1 ? "" : "s", a, b, missing);
  mprof_sources_free(s);
}

/* The PC samples, counted as `summary` and `sass` count them, and how
 * that count relates to CUPTI's own total (a drop counter below). */
static void print_samples(const mprof_trace *t) {
  size_t records;
  mprof_trace_pc_samples(t, &records);
  if (!records)
    return;
  uint64_t not_issued = 0;
  uint64_t samples = mprof_trace_pc_sample_total(t, &not_issued);
  uint64_t cupti = mprof_trace_drop_total(t, MPROF_DROP_PC_TOTAL_SAMPLES);
  uint64_t non_user = mprof_trace_drop_total(t, MPROF_DROP_PC_NON_USER_SAMPLES);
  char a[32], b[32], c[32], d[32];
  mprof_format_count(a, sizeof a, samples);
  mprof_format_count(b, sizeof b, not_issued);
  mprof_format_count(c, sizeof c, cupti);
  mprof_format_count(d, sizeof d, non_user);
  printf("samples    %s PC samples (as summary and sass count them), %s of "
         "them not issued",
         a, b);
  if (cupti)
    printf("; CUPTI took %s, with %s in non-user kernels that the trace does "
           "not keep",
           c, d);
  printf("\n");
}

static int info_one(const char *path) {
  mprof_trace *t;
  mprof_mkprof *mkprof;
  int rc = mprof_mkprof_open_trace(&t, path, &mkprof);
  if (rc)
    return cli_fail(rc);
  uint64_t t0, t1;
  mprof_trace_time_bounds(t, &t0, &t1);
  /* The file's own version, spelt as `mprof --version` spells the one
   * this mprof writes. */
  unsigned major, minor;
  mprof_trace_format_version(t, &major, &minor);
  printf("trace      %s (%llu bytes, format %u.%u", path,
         (unsigned long long)mprof_trace_file_size(t), major, minor);
  if (major != MPROF_FORMAT_VERSION_MAJOR ||
      minor != MPROF_FORMAT_VERSION_MINOR)
    printf("; this mprof writes %d.%d", MPROF_FORMAT_VERSION_MAJOR,
           MPROF_FORMAT_VERSION_MINOR);
  printf(")\n");
  if (mkprof)
    printf("imported   from MKPROF %s (`mprof mkprof info` shows the file "
           "itself)\n",
           mprof_mkprof_format_version(mkprof));
  mprof_mkprof_free(mkprof);
  printf("span       %.3f ms of GPU activity\n", (double)(t1 - t0) / 1e6);
  uint64_t covered = 0;
  if (mprof_trace_partial(t, &covered)) {
    const char *signal = mprof_trace_meta(t, "capture.signal");
    const char *checkpoints = mprof_trace_meta(t, "capture.checkpoints");
    printf("partial    the capture was cut short%s%s; this trace holds the "
           "first %.3f s, up to flush %s",
           signal ? " by signal " : "", signal ? signal : "",
           (double)covered / 1e9, checkpoints ? checkpoints : "?");
    const char *anchor = mprof_trace_meta(t, "clock.anchor.trace_ns");
    unsigned long long start = anchor ? strtoull(anchor, NULL, 10) : 0;
    if (start && t1 > start)
      printf("; its last GPU work ends %.3f s after the capture started",
             (double)(t1 - start) / 1e9);
    printf("\n");
  }

  print_open_ranges(t, mprof_trace_partial(t, NULL));

  size_t n;
  const mprof_process_record *processes = mprof_trace_processes(t, &n);
  for (size_t i = 0; i < n; i++)
    print_process(t, i, &processes[i]);
  const mprof_capture_record *captures = mprof_trace_captures(t, &n);
  for (size_t i = 0; i < n; i++) {
    char line[1024];
    cli_describe_capture(line, sizeof line, t, &captures[i]);
    printf("window %-3u %s\n", captures[i].process, line);
  }
  const mprof_meta_record *meta = mprof_trace_meta_records(t, &n);
  for (size_t i = 0; i < n; i++)
    printf("meta       %s = %s\n", mprof_trace_string(t, meta[i].key),
           mprof_trace_string(t, meta[i].value));
  size_t device_count;
  const mprof_device_record *dev = mprof_trace_devices(t, &device_count);
  for (size_t i = 0; i < device_count; i++) {
    char traits[96];
    mprof_format_device_traits(traits, sizeof traits, dev[i].cc_major,
                               dev[i].cc_minor, dev[i].sm_count,
                               dev[i].core_clock_khz);
    printf("device %u   %s (%s)\n", dev[i].id,
           mprof_trace_string(t, dev[i].name), traits);
  }

  printf("sections  ");
  for (uint32_t type = 1; type <= MPROF_SECTION_TYPE_MAX_; type++) {
    size_t count;
    mprof_trace_section(t, (mprof_section_type)type, &count);
    if (count && type != MPROF_SECTION_STRINGS && type != MPROF_SECTION_BLOBS &&
        type != MPROF_SECTION_SOURCES)
      printf(" %s=%zu", mprof_section_name(type), count);
  }
  printf("\n");
  print_code(t);
  print_sources(t);

  size_t kernel_count, shape_count, launch_count;
  const mprof_kernel_record *kernels = mprof_trace_kernels(t, &kernel_count);
  const mprof_shape_record *shapes = mprof_trace_shapes(t, &shape_count);
  const mprof_launch_record *launches = mprof_trace_launches(t, &launch_count);
  kernel_tally *tally =
      (kernel_tally *)calloc(kernel_count ? kernel_count : 1, sizeof *tally);
  if (!tally) {
    mprof_trace_free(t);
    fprintf(stderr, "mprof info: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  uint64_t busy = 0;
  for (size_t i = 0; i < kernel_count; i++)
    tally[i].kernel = (uint32_t)i;
  for (size_t i = 0; i < launch_count; i++) {
    kernel_tally *k = &tally[shapes[launches[i].shape].kernel];
    k->launches++;
    k->total_ns += launches[i].end - launches[i].start;
    busy += launches[i].end - launches[i].start;
  }
  qsort(tally, kernel_count, sizeof *tally, by_total_desc);
  printf("kernels    %zu kernel%s, %zu launch%s, %.3f ms of kernel time\n",
         kernel_count, kernel_count == 1 ? "" : "s", launch_count,
         launch_count == 1 ? "" : "es", (double)busy / 1e6);
  for (size_t i = 0; i < kernel_count && i < 20; i++) {
    const mprof_kernel_record *k = &kernels[tally[i].kernel];
    const char *name = mprof_trace_string(t, k->demangled_name);
    if (!*name)
      name = mprof_trace_string(t, k->mangled_name);
    printf("  %6.2f%%  %8llu launches  %10.3f ms  %s",
           busy ? 100.0 * (double)tally[i].total_ns / (double)busy : 0.0,
           (unsigned long long)tally[i].launches,
           (double)tally[i].total_ns / 1e6, name);
    /* With several GPUs the same kernel has a line per device: say which. */
    if (device_count > 1 && k->device < device_count)
      printf("  (device %u)", dev[k->device].id);
    printf("\n");
  }
  free(tally);
  print_samples(t);
  const mprof_drop_record *drops = mprof_trace_drops(t, &n);
  for (size_t i = 0; i < n; i++) {
    printf("counter    %s", drop_name(drops[i].kind));
    if (device_count > 1 && drops[i].device < device_count)
      printf(" (device %u)", dev[drops[i].device].id);
    printf(": %llu\n", (unsigned long long)drops[i].count);
  }
  mprof_trace_free(t);
  return CLI_EXIT_OK;
}

/* One line per trace of a set: who wrote it and what it holds. */
static void set_line(const char *path) {
  mprof_trace *t;
  if (mprof_trace_open(&t, path, NULL) != 0)
    return;
  size_t launches;
  mprof_trace_launches(t, &launches);
  const char *pid = mprof_trace_process_meta(t, 0, "pid");
  const char *host = mprof_trace_process_meta(t, 0, "host");
  const char *rank = mprof_trace_process_meta(t, 0, "rank");
  printf("process    %s: pid %s%s%s on %s, %zu launches%s\n", path,
         pid ? pid : "?", rank ? ", rank " : "", rank ? rank : "",
         host ? host : "?", launches,
         mprof_trace_partial(t, NULL) ? ", partial" : "");
  mprof_trace_free(t);
}

int cmd_info(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("info", "no trace given");
  cli_trace_set set = {NULL, 0};
  for (int i = 1; i < argc; i++) {
    int status = cli_trace_set_resolve(&set, "info", argv[i]);
    if (status) {
      cli_trace_set_free(&set);
      return status;
    }
  }
  int rc = CLI_EXIT_OK;
  if (set.count > 1) {
    printf("set        %zu traces\n", set.count);
    for (size_t i = 0; i < set.count; i++)
      set_line(set.paths[i]);
  }
  for (size_t i = 0; i < set.count && rc == CLI_EXIT_OK; i++) {
    if (set.count > 1)
      printf("\n");
    rc = info_one(set.paths[i]);
  }
  cli_trace_set_free(&set);
  return rc;
}
