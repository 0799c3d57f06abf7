/*
 * mprof — libFuzzer target for the viewer: any byte string the reader
 * accepts as a trace must draw on every tab, be hit-tested and described
 * without a crash, a sanitizer report, a Cairo error or an allocation far
 * beyond the input's size (run.sh caps malloc); one the reader refuses is
 * refused by mprof_render_model_open() too.
 *
 * Each tab is drawn small (160x120) at the whole trace and, for the span
 * tabs, at the kernel they open on, as `mprof view --render` does; then a
 * few points of it are hit-tested and described.
 *
 * The input is opened from a memfd with no sidecar beside it; seeds name
 * no other file (no process.I.path, no mkprof.source), so a run touches
 * nothing on disk.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "mprof-render/render.h"

#define WIDTH 160
#define HEIGHT 120

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Draw @p tab of @p model at @p view, then hit-test and describe a few
 * points of it; abort when Cairo says the drawing failed. */
static void draw_tab(cairo_surface_t *surface, const mprof_render_model *model,
                     const mprof_render_view *view, int tab) {
  cairo_t *cr = cairo_create(surface);
  mprof_render_draw(cr, model, view, tab, WIDTH, HEIGHT);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "fuzz_render: tab %s: %s\n", mprof_render_tab_key(tab),
            cairo_status_to_string(status));
    abort();
  }
  (void)mprof_render_content_height(model, view, tab, WIDTH);
  static const double points[][2] = {{5, 60},   {100, 10},  {100, 40},
                                     {120, 70}, {150, 100}, {159, 119}};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    mprof_render_hit hit;
    char text[512];
    mprof_render_hit_test(model, view, tab, WIDTH, HEIGHT, points[i][0],
                          points[i][1], &hit);
    mprof_render_hit_describe(model, &hit, text, sizeof text);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Cairo's and fontconfig's caches, let go at exit: LeakSanitizer checks
   * the process (libFuzzer's, and replay's in the ASan build). */
  static int registered;
  if (!registered && atexit(mprof_render_shutdown) == 0)
    registered = 1;
  char path[64];
  int fd = fuzz_file("mprof-fuzz-render", data, size, path);
  if (fd < 0)
    return 0;
  mprof_render_model *model = NULL;
  if (mprof_render_model_open(&model, path, NULL) == 0) {
    cairo_surface_t *surface =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, WIDTH, HEIGHT);
    for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++) {
      mprof_render_view view;
      mprof_render_view_init(&view, model);
      if (mprof_render_tab_is_span(tab))
        mprof_render_view_open_span_tab(&view, model, 0);
      draw_tab(surface, model, &view, tab);
      /* The selected launch's flow and a range selected on the Trace;
       * every SM one pixel tall, the Activity rows by warp. */
      view.launch = 0;
      view.sel_start_ns = view.start_ns;
      view.sel_end_ns = view.end_ns;
      view.sm_height = 1;
      view.activity_height = 1;
      view.activity_rows = MPROF_ACTIVITY_WARP;
      draw_tab(surface, model, &view, tab);
    }
    /* The Source tab's navigation: every kernel's hottest and next hot
     * lines (or instructions), its last file, its first instruction's
     * line, a search forward and back; drawn where each lands. */
    for (size_t k = 0; k < mprof_render_kernel_count(model) && k < 4; k++) {
      mprof_render_view view;
      mprof_render_view_init(&view, model);
      view.kernel = (int32_t)k;
      mprof_render_view_open_source_tab(&view, model, HEIGHT);
      mprof_render_view_source_hot(&view, model, 1);
      mprof_render_view_source_hot(&view, model, -2);
      draw_tab(surface, model, &view, MPROF_RENDER_SOURCE);
      size_t files = mprof_render_source_file_count(model, view.kernel);
      mprof_render_view_source_line(&view, model, (int32_t)files, 0);
      const mprof_render_kernel *kernel = mprof_render_kernel_at(model, k);
      if (kernel->pc_count)
        mprof_render_view_source_pc(&view, model, kernel->pcs[0].offset);
      mprof_render_view_source_find(&view, model, "a", 1);
      mprof_render_view_source_find(&view, model, "a", -1);
      mprof_render_view_source_scroll(&view, model, HEIGHT);
      draw_tab(surface, model, &view, MPROF_RENDER_SOURCE);
    }
    cairo_surface_destroy(surface);
    mprof_render_model_free(model);
  }
  close(fd);
  return 0;
}
