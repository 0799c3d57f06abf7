/*
 * mprof bench — the span views' frame budget on a synthetic trace with
 * about 1,000,000 activity spans (mprof synth --spans), drawn offscreen:
 *
 *   open         the trace and the span index (sorting, sub-lanes, the
 *                Density buckets);
 *   Mega         fitted (one bar per SM), rows per SM (64 px an SM), at
 *                every zoom (x2) from all the spans down to a microsecond,
 *                at five places, and panning: median and max;
 *   Density      likewise;
 *   Activity     rows per SM, block and warp;
 *   memory       peak RSS against the file's size.
 *
 * The frame budget is 16 ms; cost must follow pixels, not spans.
 *
 * Usage: bench_render_spans [TRACE] [SPANS] [WIDTHxHEIGHT]
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"
#include "mprof/synth.h"
#include "mprof-render/render.h"

static int width = 1920, height = 1080;

static double frame(cairo_surface_t *surface, const mprof_render_model *m,
                    const mprof_render_view *v, int tab) {
  double t0 = bench_now();
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw(cr, m, v, tab, width, height);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  return bench_now() - t0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, double *times, size_t n) {
  qsort(times, n, sizeof *times, by_value);
  printf("%-40s %4zu frames  median %7.2f ms  max %7.2f ms\n", what, n,
         1e3 * times[n / 2], 1e3 * times[n - 1]);
}

/* Every zoom (x2) from the fitted range down to 1 us, at five places. */
static void zooms(const char *what, cairo_surface_t *s,
                  const mprof_render_model *m, mprof_render_view v, int tab) {
  static double times[2048];
  size_t count = 0;
  int64_t a = v.start_ns, b = v.end_ns;
  frame(s, m, &v, tab); /* first touches (the frame buffer's pages) */
  for (int64_t span = b - a; span >= 1000 && count < 2000; span /= 2) {
    static const double places[] = {0.0, 0.25, 0.5, 0.77, 1.0};
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
      v.start_ns = a + (int64_t)((double)(b - a - span) * places[p]);
      v.end_ns = v.start_ns + span;
      times[count++] = frame(s, m, &v, tab);
    }
  }
  report(what, times, count);
}

static int write_trace(const char *path, unsigned long long spans) {
  pid_t pid = fork();
  if (pid == 0) {
    mprof_synth_options opts;
    mprof_synth_options_init(&opts, MPROF_SYNTH_OPTIONS_VERSION);
    opts.launches = 240;
    opts.kernels = 4;
    opts.streams = 1;
    opts.spans = spans;
    opts.span_warps = 4;
    opts.span_imbalance = 0.3;
    if (mprof_synth_write(path, &opts)) {
      fprintf(stderr, "bench_render_spans: %s\n", mprof_error_last());
      _exit(1);
    }
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench_render_spans.mprof";
  /* 900,000 asked: whole rounds of blocks make it about a million. */
  unsigned long long spans = argc > 2 ? strtoull(argv[2], NULL, 10) : 900000;
  if (argc > 3 && sscanf(argv[3], "%dx%d", &width, &height) != 2) {
    fprintf(stderr, "usage: bench_render_spans [TRACE] [SPANS] [WxH]\n");
    return 2;
  }
  struct stat st;
  if (argc <= 1 || stat(path, &st) != 0) {
    printf("writing %s: about %llu spans\n", path, spans);
    if (write_trace(path, spans))
      return 1;
  }
  stat(path, &st);
  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw_message(cr, width, height, "warm", "up");
  cairo_destroy(cr);

  double t0 = bench_now();
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL)) {
    fprintf(stderr, "bench_render_spans: %s\n", mprof_render_error());
    return 1;
  }
  double t_open = bench_now() - t0;
  size_t n;
  mprof_trace_spans(mprof_render_model_trace(m), &n);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = mprof_render_span_kernel(m, v.kernel);
  mprof_render_view_fit_spans(&v, m);
  printf("trace %s: %.1f MiB, %zu spans (%zu of the kernel shown), %dx%d\n",
         path, (double)st.st_size / 1048576.0, n,
         mprof_render_kernel_span_count(m, v.kernel), width, height);
  printf("open (trace + model + span index)        %7.1f ms\n", 1e3 * t_open);
  double t_first = frame(surface, m, &v, MPROF_RENDER_MEGA);
  printf("first Mega frame (all spans, fitted)     %7.1f ms\n", 1e3 * t_first);

  zooms("Mega, one bar per SM, every zoom", surface, m, v, MPROF_RENDER_MEGA);
  mprof_render_view rows = v;
  rows.sm_height = 64;
  zooms("Mega, rows (64 px an SM), every zoom", surface, m, rows,
        MPROF_RENDER_MEGA);
  rows.scroll_y = 64 * 60; /* SMs in the middle */
  zooms("Mega, rows, scrolled to SM 60", surface, m, rows, MPROF_RENDER_MEGA);
  zooms("Density, every zoom", surface, m, v, MPROF_RENDER_DENSITY);
  for (int r = 0; r < MPROF_ACTIVITY_ROWS_COUNT; r++) {
    mprof_render_view act = v;
    act.activity_rows = r;
    double tb = bench_now();
    frame(surface, m, &act, MPROF_RENDER_ACTIVITY); /* builds its rows */
    char what[64];
    snprintf(what, sizeof what, "Activity by %s (first %.0f ms)",
             mprof_render_activity_rows_key(r), 1e3 * (bench_now() - tb));
    zooms(what, surface, m, act, MPROF_RENDER_ACTIVITY);
  }
  /* Panning at 1/20 of the spans, rows open. */
  static double times[256];
  size_t count = 0;
  mprof_render_limits l;
  mprof_render_model_limits(m, &l);
  mprof_render_view pan = rows;
  pan.end_ns = pan.start_ns + (v.end_ns - v.start_ns) / 20;
  for (int i = 0; i < 200; i++) {
    mprof_render_view_pan(&pan, &l, 0.1);
    times[count++] = frame(surface, m, &pan, MPROF_RENDER_MEGA);
  }
  report("Mega, rows, panning at 1/20", times, count);

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak RSS %.1f MiB = %.2f x the trace (%.1f MiB)\n",
         ru.ru_maxrss / 1024.0,
         (double)ru.ru_maxrss * 1024.0 / (double)st.st_size,
         (double)st.st_size / 1048576.0);
  mprof_render_model_free(m);
  cairo_surface_destroy(surface);
  mprof_render_shutdown();
  return 0;
}
