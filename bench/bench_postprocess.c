/*
 * mprof bench — what `mprof record` does after the program exits, phase by
 * phase, on real traces: sorting and demangling (rewrite), the sidecar as
 * record writes it (disassembly deferred), the first reader's
 * mprof_sass_complete() and the sidecar made at once (--sass-now). The
 * nvdisasm phases need nvdisasm (PATH, CUDA_HOME, MPROF_NVDISASM); without
 * it they say so.
 *
 * usage: bench_postprocess TRACE... (copies each to $TMPDIR first)
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  char buf[1 << 16];
  size_t n;
  int rc = in && out ? 0 : -1;
  while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
    rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
  if (in)
    fclose(in);
  if (out && fclose(out) != 0)
    rc = -1;
  return rc;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int bench_one(const char *source, const char *tmp, int have_tool) {
  char path[4096], side[4200];
  const char *base = strrchr(source, '/') ? strrchr(source, '/') + 1 : source;
  snprintf(path, sizeof path, "%s/bench-post-%s", tmp, base);
  snprintf(side, sizeof side, "%s.pc.json", path);
  if (copy_file(source, path) != 0) {
    fprintf(stderr, "%s: cannot copy to %s\n", source, path);
    return 1;
  }
  double t0 = bench_now();
  mprof_trace *t;
  int rc = mprof_trace_open(&t, path, NULL);
  if (!rc) {
    rc = mprof_trace_rewrite(
        t, path, MPROF_REWRITE_SORT_LAUNCHES | MPROF_REWRITE_DEMANGLE);
    mprof_trace_free(t);
  }
  double t1 = bench_now();
  mprof_sass_options opts = MPROF_SASS_OPTIONS_INIT;
  opts.flags = MPROF_SASS_DEFER;
  mprof_sass_report report = MPROF_SASS_REPORT_INIT;
  if (!rc)
    rc = mprof_sass_build_sidecar(path, side, &opts, &report);
  double t2 = bench_now();
  if (rc) {
    fprintf(stderr, "%s: %s\n", source, mprof_error_last());
    return 1;
  }
  printf("%s (%.1f MB): sort+demangle %.1f ms; sidecar, deferred %.1f ms "
         "(%zu functions, %zu sampled waiting)",
         base, (double)file_size(path) / 1e6, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
         report.functions, report.deferred_sampled);
  if (have_tool) {
    mprof_sidecar *sc = NULL;
    double t3 = bench_now();
    mprof_sass_report done = MPROF_SASS_REPORT_INIT;
    rc = mprof_sidecar_load(&sc, side);
    if (!rc)
      rc = mprof_sass_complete(sc, path, side, NULL, &done);
    double t4 = bench_now();
    mprof_sidecar_free(sc);
    opts.flags = MPROF_SASS_SAMPLED_ONLY;
    mprof_sass_report now = MPROF_SASS_REPORT_INIT;
    if (!rc)
      rc = mprof_sass_build_sidecar(path, side, &opts, &now);
    double t5 = bench_now();
    if (rc) {
      fprintf(stderr, "\n%s: %s\n", source, mprof_error_last());
      return 1;
    }
    printf("; first reader %.1f ms (%zu functions given SASS); at once "
           "(--sass-now) %.1f ms",
           (t4 - t3) * 1e3, done.attached, (t5 - t4) * 1e3);
  }
  printf("\n");
  unlink(path);
  unlink(side);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(argc < 2 ? stderr : stdout, "usage: bench_postprocess TRACE...\n");
    return argc < 2 ? 2 : 0;
  }
  const char *tmp =
      getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char tool[4096];
  int have_tool = mprof_sass_find_tool(tool, sizeof tool, "nvdisasm") == 0;
  if (!have_tool)
    printf("nvdisasm not found: the phases that run it are left out\n");
  int failed = 0;
  for (int i = 1; i < argc; i++)
    failed |= bench_one(argv[i], tmp, have_tool);
  return failed;
}
