/*
 * mprof bench — the Trace tab's host and counter tracks at scale: a
 * synthetic trace (written with the project's writer) of N launches on one
 * GPU, each issued by a CUDA API call on one of 4 host threads inside
 * three nested NVTX ranges (step > layer > op, as torch.cuda.nvtx around a
 * model gives), and PM samples of 8 counters every 10 us across it.
 *
 *   open         the model (NVTX lanes, API rows, correlation index,
 *                counter rows) built from the file;
 *   frames       the Trace at every zoom from the whole trace down to a
 *                microsecond, at several places, with the flow arrow of a
 *                selected launch: median and max, budget 16 ms.
 *
 * Usage: bench_render_tracks [LAUNCHES] [WIDTHxHEIGHT]
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"
#include "mprof-render/render.h"

static int width = 1920, height = 1080;

#define T0 1700000000000000000ull
#define THREADS 4
#define PM_INTERVAL 10000ull /* ns */

static const char *const counters[8] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_alu_realtime.avg.pct_of_peak_sustained_elapsed"};

/* Launches of 8 us every 10 us; each op range holds one launch's call, a
 * layer 8 ops, a step 64 ops, per thread in turn. Returns the trace's
 * span in ns. */
static uint64_t write_trace(const char *path, uint64_t launches) {
  mprof_writer *w;
  if (mprof_writer_open(&w, path, NULL)) {
    fprintf(stderr, "bench_render_tracks: %s\n", mprof_error_last());
    exit(1);
  }
  mprof_device_record dev;
  memset(&dev, 0, sizeof dev);
  dev.name = mprof_writer_string(w, "NVIDIA H200");
  dev.sm_count = 132;
  uint32_t d, s, k, shape;
  mprof_writer_intern(w, &d, MPROF_SECTION_DEVICES, &dev);
  mprof_stream_record st = {d, 1, 7, 0};
  mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, "_Z6kernelPf");
  kr.function_index = MPROF_INDEX_NONE;
  kr.device = d;
  mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = k;
  mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh);
  uint32_t op = mprof_writer_string(w, "aten::linear");
  uint32_t layer = mprof_writer_string(w, "layer");
  uint32_t step = mprof_writer_string(w, "step");
  uint32_t launch_name = mprof_writer_string(w, "cudaLaunchKernel");
  for (uint64_t i = 0; i < launches; i++) {
    uint64_t t = T0 + i * 10000;
    uint32_t thread = 1000 + (uint32_t)((i / 64) % THREADS);
    mprof_launch_record l;
    memset(&l, 0, sizeof l);
    l.start = t + 2000;
    l.end = t + 10000 - 500;
    l.shape = shape;
    l.stream = s;
    l.correlation_id = (uint32_t)i + 1;
    mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l);
    mprof_api_call_record c = {t,      t + 1500,    (uint32_t)i + 1,
                               thread, launch_name, MPROF_API_RUNTIME};
    mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c);
    mprof_range_record r;
    memset(&r, 0, sizeof r);
    r.thread_id = thread;
    r.start = t;
    r.end = t + 1800;
    r.name = op;
    r.depth = 2;
    mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r);
    if (i % 8 == 0) {
      r.end = t + 8 * 10000 - 100;
      r.name = layer;
      r.depth = 1;
      mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r);
    }
    if (i % 64 == 0) {
      r.end = t + 64 * 10000 - 50;
      r.name = step;
      r.depth = 0;
      mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r);
    }
  }
  for (uint32_t c = 0; c < 8; c++) {
    mprof_pm_metric_record m;
    memset(&m, 0, sizeof m);
    m.device = d;
    m.column = c;
    m.name = mprof_writer_string(w, counters[c]);
    m.unit = mprof_writer_string(w, "percent");
    m.interval_ns = PM_INTERVAL;
    mprof_writer_append(w, NULL, MPROF_SECTION_PM_METRICS, &m);
  }
  uint64_t span = launches * 10000;
  for (uint64_t t = 0; t < span; t += PM_INTERVAL) {
    mprof_pm_sample_record p;
    memset(&p, 0, sizeof p);
    p.start = T0 + t;
    p.end = p.start + PM_INTERVAL;
    p.device = d;
    for (int c = 0; c < MPROF_PM_MAX_METRICS; c++)
      p.value[c] =
          c < 8 ? (float)((t / PM_INTERVAL * 7 + (uint64_t)c * 13) % 100) : NAN;
    mprof_writer_append(w, NULL, MPROF_SECTION_PM_SAMPLES, &p);
  }
  if (mprof_writer_finish(w)) {
    fprintf(stderr, "bench_render_tracks: %s\n", mprof_error_last());
    exit(1);
  }
  return span;
}

static double frame(cairo_surface_t *surface, const mprof_render_model *m,
                    const mprof_render_view *v) {
  double t0 = bench_now();
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw(cr, m, v, MPROF_RENDER_TRACE, width, height);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  return bench_now() - t0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  uint64_t launches = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  if (argc > 2 && sscanf(argv[2], "%dx%d", &width, &height) != 2) {
    fprintf(stderr, "usage: bench_render_tracks [LAUNCHES] [WxH]\n");
    return 2;
  }
  char path[256];
  snprintf(path, sizeof path, "%s/bench_render_tracks-%ld.mprof",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
  double t0 = bench_now();
  uint64_t span = write_trace(path, launches);
  printf("trace: %llu launches, API calls and op ranges, %llu ranges in all, "
         "%llu PM windows x 8 counters, %.1f s written in %.2f s\n",
         (unsigned long long)launches,
         (unsigned long long)(launches + launches / 8 + launches / 64),
         (unsigned long long)(span / PM_INTERVAL), (double)span * 1e-9,
         bench_now() - t0);
  t0 = bench_now();
  mprof_render_model *m;
  if (mprof_render_model_open(&m, path, NULL)) {
    fprintf(stderr, "bench_render_tracks: %s\n", mprof_render_error());
    unlink(path);
    return 1;
  }
  struct stat st;
  double mib = stat(path, &st) == 0 ? (double)st.st_size / 1048576.0 : 0;
  printf("open: %.3f s (%zu rows, %.1f MiB file)\n", bench_now() - t0,
         mprof_render_row_count(m), mib);
  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.launch = (int64_t)(launches / 2);
  int64_t start = (int64_t)T0, whole = (int64_t)span;
  double times[256];
  size_t n = 0;
  frame(surface, m, &v); /* fonts */
  /* BENCH_VISIBLE=NS: only that zoom, again and again (for a profiler). */
  const char *only = getenv("BENCH_VISIBLE");
  int64_t only_ns = only ? strtoll(only, NULL, 10) : 0;
  for (int64_t visible = only_ns ? only_ns : whole; visible >= 1000 && n < 200;
       visible = only_ns ? visible : visible / 4)
    for (int place = 0; place < 5 && n < 200; place++) {
      v.start_ns = start + (whole - visible) / 4 * place;
      v.end_ns = v.start_ns + visible;
      times[n++] = frame(surface, m, &v);
      if (getenv("BENCH_VERBOSE"))
        printf("  %lld ns from %d: %.2f ms\n", (long long)visible, place,
               1e3 * times[n - 1]);
    }
  qsort(times, n, sizeof *times, by_value);
  printf("Trace frames %dx%d: %zu frames  median %.2f ms  max %.2f ms "
         "(budget 16 ms)\n",
         width, height, n, 1e3 * times[n / 2], 1e3 * times[n - 1]);
  cairo_surface_destroy(surface);
  mprof_render_model_free(m);
  mprof_render_shutdown();
  unlink(path);
  return times[n - 1] <= 0.016 ? 0 : 3;
}
