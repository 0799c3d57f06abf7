/*
 * mprof bench — opening a big trace in the viewer: 10,000,000 launches as
 * `mprof synth --launches 10000000` writes them (8 kernels on 2 streams,
 * PC samples, about 400 MB), opened and drawn offscreen through
 * mprof-render, the code the window runs on its worker and then on its
 * main thread:
 *
 *   first frame  open the trace and draw the first Trace frame, budget 1 s;
 *                the same for the Summary the viewer opens on;
 *   memory       peak RSS of the process that opened it (mapped pages of
 *                the file included) against the file's size, budget 1.5x;
 *   CPU          user + system time of that process (the figure to compare
 *                on a loaded machine; fonts and Cairo's start-up included).
 *
 * Each measure runs in a fresh child process, so each peak RSS is its own;
 * the trace is written by another child first (when TRACE does not exist).
 * "cold" runs ask the kernel to drop the file's cached pages first
 * (posix_fadvise DONTNEED, that file only), "warm" ones read it from the
 * page cache.
 *
 * Usage: bench_render_open [TRACE] [LAUNCHES] [RUNS]
 *
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "mprof/mprof.h"
#include "mprof/synth.h"
#include "mprof-render/render.h"

#define WIDTH 1600 /* `mprof view --render`'s size */
#define HEIGHT 1000

typedef struct result {
  double open_s, frame_s; /* open (trace + model), then the first frame */
  double cpu_s;           /* user + system CPU of the child, all of it */
  long rss_kib;           /* peak RSS of the child */
} result;

static int write_trace(const char *path, unsigned long long launches) {
  pid_t pid = fork();
  if (pid == 0) {
    mprof_synth_options opts;
    mprof_synth_options_init(&opts, MPROF_SYNTH_OPTIONS_VERSION);
    opts.launches = launches; /* the rest as `mprof synth` has them */
    if (mprof_synth_write(path, &opts)) {
      fprintf(stderr, "bench_render_open: %s\n", mprof_error_last());
      _exit(1);
    }
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void drop_cached(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

/* In a child: open @p path and draw tab @p tab once. */
static int measure(const char *path, int tab, int cold, result *out) {
  int pipefd[2];
  if (pipe(pipefd))
    return -1;
  if (cold)
    drop_cached(path);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    cairo_surface_t *surface =
        cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
    /* Fonts and Cairo's caches warm, as in a window already up. */
    cairo_t *cr = cairo_create(surface);
    mprof_render_draw_message(cr, WIDTH, HEIGHT, "warm", "up");
    cairo_destroy(cr);
    result r;
    double t0 = bench_now();
    mprof_render_model *m;
    if (mprof_render_model_open(&m, path, NULL)) {
      fprintf(stderr, "bench_render_open: %s\n", mprof_render_error());
      _exit(1);
    }
    r.open_s = bench_now() - t0;
    mprof_render_view v;
    mprof_render_view_init(&v, m);
    t0 = bench_now();
    cr = cairo_create(surface);
    mprof_render_draw(cr, m, &v, tab, WIDTH, HEIGHT);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    r.frame_s = bench_now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r.rss_kib = ru.ru_maxrss;
    r.cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
              (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    if (write(pipefd[1], &r, sizeof r) != (ssize_t)sizeof r)
      _exit(1);
    _exit(0); /* the model goes with the process */
  }
  close(pipefd[1]);
  ssize_t n = read(pipefd[0], out, sizeof *out);
  close(pipefd[0]);
  int status;
  waitpid(pid, &status, 0);
  return n == (ssize_t)sizeof *out && WIFEXITED(status) &&
                 WEXITSTATUS(status) == 0
             ? 0
             : -1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench_render_open.mprof";
  unsigned long long launches =
      argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ULL;
  int runs = argc > 3 ? atoi(argv[3]) : 3;
  if (runs < 1 || launches < 1) {
    fprintf(stderr, "usage: bench_render_open [TRACE] [LAUNCHES] [RUNS]\n");
    return 2;
  }
  struct stat st;
  if (stat(path, &st) != 0) {
    printf("writing %s: %llu launches (mprof synth's defaults)\n", path,
           launches);
    if (write_trace(path, launches) || stat(path, &st) != 0)
      return 1;
  }
  double file_mib = (double)st.st_size / 1048576.0;
  printf("trace %s: %.1f MiB (%lld bytes), frames of %dx%d\n", path, file_mib,
         (long long)st.st_size, WIDTH, HEIGHT);
  printf("%-8s %-5s %-4s %10s %10s %10s %10s %10s %7s\n", "tab", "cache", "run",
         "open ms", "frame ms", "first ms", "CPU ms", "RSS MiB", "x file");
  int failed = 0;
  static const int tabs[] = {MPROF_RENDER_TRACE, MPROF_RENDER_SUMMARY};
  for (size_t t = 0; t < sizeof tabs / sizeof tabs[0]; t++)
    for (int cold = 1; cold >= 0; cold--)
      for (int run = 0; run < runs; run++) {
        result r;
        if (measure(path, tabs[t], cold, &r)) {
          fprintf(stderr, "bench_render_open: run %d failed\n", run + 1);
          return 1;
        }
        double first = r.open_s + r.frame_s;
        double ratio = (double)r.rss_kib * 1024.0 / (double)st.st_size;
        printf("%-8s %-5s %-4d %10.1f %10.1f %10.1f %10.1f %10.1f %7.2f\n",
               mprof_render_tab_title(tabs[t]), cold ? "cold" : "warm", run + 1,
               1e3 * r.open_s, 1e3 * r.frame_s, 1e3 * first, 1e3 * r.cpu_s,
               r.rss_kib / 1024.0, ratio);
        if (!cold && tabs[t] == MPROF_RENDER_TRACE)
          failed |= (first > 1.0) | ((ratio > 1.5) << 1);
      }
  printf("goals (warm Trace): first frame <= 1 s %s, RSS <= 1.5x the file "
         "%s\n",
         failed & 1 ? "MISSED" : "met", failed & 2 ? "MISSED" : "met");
  return 0;
}
