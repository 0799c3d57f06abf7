/*
 * mprof bench — the viewer's frame budget on a 1,000,000-launch synthetic
 * trace (with its PC sidecar), drawn offscreen through mprof-render:
 *
 *   first frame  open the trace and draw the first view (the Summary the
 *                viewer opens on, and the Trace), budget 0.5 s;
 *   later frames the Trace at every zoom from the whole trace down to a
 *                microsecond, at several places, panning, and every other
 *                tab: max and median, budget 16 ms;
 *   memory       peak RSS (mapped file pages included) against the file's
 *                size, budget 2x.
 *
 * The trace is written by a child process, so the peak RSS measured here
 * is the viewer's alone; its pages are dropped from this process's view.
 *
 * Usage: bench_render [TRACE] [LAUNCHES] [WIDTHxHEIGHT]
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

/* One frame of @p tab into @p surface; seconds. */
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
  printf("%-34s %4zu frames  median %7.2f ms  max %7.2f ms\n", what, n,
         1e3 * times[n / 2], 1e3 * times[n - 1]);
}

static long peak_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static int write_trace(const char *path, unsigned long long launches) {
  pid_t pid = fork();
  if (pid == 0) {
    mprof_synth_options opts;
    mprof_synth_options_init(&opts, MPROF_SYNTH_OPTIONS_VERSION);
    opts.launches = launches;
    opts.kernels = 12;
    opts.streams = 4;
    if (mprof_synth_write(path, &opts) ||
        mprof_synth_write_sidecar(path, NULL)) {
      fprintf(stderr, "bench_render: %s\n", mprof_error_last());
      _exit(1);
    }
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench_render.mprof";
  unsigned long long launches =
      argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  if (argc > 3 && sscanf(argv[3], "%dx%d", &width, &height) != 2) {
    fprintf(stderr, "usage: bench_render [TRACE] [LAUNCHES] [WxH]\n");
    return 2;
  }
  struct stat st;
  if (argc <= 1 || stat(path, &st) != 0) {
    printf("writing %s: %llu launches + sidecar\n", path, launches);
    if (write_trace(path, launches))
      return 1;
  }
  stat(path, &st);
  char sidecar[4096];
  snprintf(sidecar, sizeof sidecar, "%s.pc.json", path);
  struct stat sst;
  long sidecar_size = stat(sidecar, &sst) == 0 ? (long)sst.st_size : 0;
  printf("trace %s: %.1f MiB (sidecar %.1f KiB), %dx%d frames\n", path,
         (double)st.st_size / 1048576.0, sidecar_size / 1024.0, width, height);

  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  /* Warm up fonts and Cairo's caches on a tiny model-less frame. */
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw_message(cr, width, height, "warm", "up");
  cairo_destroy(cr);

  /* First frame: open, then the Summary the viewer opens on. */
  double t0 = bench_now();
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL)) {
    fprintf(stderr, "bench_render: %s\n", mprof_render_error());
    return 1;
  }
  double t_open = bench_now() - t0;
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  double t_summary = frame(surface, m, &v, MPROF_RENDER_SUMMARY);
  double t_trace = frame(surface, m, &v, MPROF_RENDER_TRACE);
  size_t n;
  mprof_trace_launches(mprof_render_model_trace(m), &n);
  printf("open (trace + sidecar + model)     %7.1f ms  (%zu launches, %zu "
         "kernels)\n",
         1e3 * t_open, n, mprof_render_kernel_count(m));
  printf("first frame: open + Summary        %7.1f ms\n",
         1e3 * (t_open + t_summary));
  printf("first frame: open + Trace          %7.1f ms\n",
         1e3 * (t_open + t_trace));

  /* Later frames: the Trace at every zoom and place. */
  mprof_render_limits l;
  mprof_render_model_limits(m, &l);
  static double times[4096];
  size_t count = 0;
  double worst_span = 0, worst = 0;
  for (int64_t span = l.max_ns - l.min_ns; span >= 1000 && count < 4000;
       span /= 2) {
    static const double places[] = {0.0, 0.25, 0.5, 0.77, 1.0};
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
      v.start_ns = l.min_ns +
                   (int64_t)((double)(l.max_ns - l.min_ns - span) * places[p]);
      v.end_ns = v.start_ns + span;
      double t = frame(surface, m, &v, MPROF_RENDER_TRACE);
      if (t > worst) {
        worst = t;
        worst_span = (double)span;
      }
      times[count++] = t;
    }
  }
  report("Trace, every zoom (x2) x 5 places", times, count);
  char span_text[48];
  mprof_format_duration(span_text, sizeof span_text, worst_span);
  printf("  slowest at a %s wide view\n", span_text);
  /* Panning at a busy zoom: 1/20 of the trace, in 1/10 steps. */
  count = 0;
  mprof_render_view_init(&v, m);
  mprof_render_view_zoom(&v, &l, 0.0, 20);
  for (int i = 0; i < 200; i++) {
    mprof_render_view_pan(&v, &l, 0.1);
    times[count++] = frame(surface, m, &v, MPROF_RENDER_TRACE);
  }
  report("Trace, panning at 1/20 zoom", times, count);
  /* Wheel-like zoom steps around a point. */
  count = 0;
  mprof_render_view_init(&v, m);
  for (int i = 0; i < 120; i++) {
    mprof_render_view_zoom(&v, &l, 0.4, i < 60 ? 1.25 : 0.8);
    times[count++] = frame(surface, m, &v, MPROF_RENDER_TRACE);
  }
  report("Trace, wheel zoom in and out", times, count);
  /* Every other tab, for every kernel. */
  for (int tab = MPROF_RENDER_SUMMARY; tab < MPROF_RENDER_TAB_COUNT; tab++) {
    count = 0;
    mprof_render_view_init(&v, m);
    for (size_t k = 0; k < mprof_render_kernel_count(m); k++) {
      v.kernel = (int32_t)k;
      times[count++] = frame(surface, m, &v, tab);
    }
    char what[64];
    snprintf(what, sizeof what, "%s, every kernel",
             mprof_render_tab_title(tab));
    report(what, times, count);
  }

  long rss = peak_rss_kib();
  double ratio = (double)rss * 1024.0 / (double)st.st_size;
  printf("peak RSS %.1f MiB = %.2f x the trace (%.1f MiB)\n", rss / 1024.0,
         ratio, (double)st.st_size / 1048576.0);
  mprof_render_model_free(m);
  cairo_surface_destroy(surface);
  return 0;
}
