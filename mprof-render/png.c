/*
 * mprof-render — the PNG entry point of libmprof-render-png.so
 * (mprof-render/png.h): open a model, select the kernel, draw to memory.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "mprof-render/png.h"
#include "render_internal.h"

int mprof_render_png(unsigned char **out, size_t *size,
                     const char *const *paths, size_t count,
                     const char *sidecar, const char *tab, int kernel,
                     int width, int height) {
  if (out)
    *out = NULL;
  if (size)
    *size = 0;
  if (!out || !size || !paths || !count)
    return mprof_render__fail("mprof_render_png: NULL argument");
  int t = tab ? mprof_render_tab_parse(tab) : MPROF_RENDER_SUMMARY;
  if (t < 0)
    return mprof_render__fail("unknown tab '%s' (trace, summary, hotspots, "
                              "flame, raster, mega, density, activity)",
                              tab);
  mprof_render_model *model;
  if (mprof_render_model_open_set(&model, paths, count, NULL, sidecar))
    return -1;
  mprof_render_view view;
  mprof_render_view_init(&view, model);
  size_t kernels = mprof_render_kernel_count(model);
  if (kernel >= 0 && (size_t)kernel >= kernels) {
    mprof_render_model_free(model);
    return mprof_render__fail("%s: kernel %d is out of range (the trace has "
                              "%zu)",
                              paths[0], kernel, kernels);
  }
  if (kernel >= 0)
    view.kernel = kernel;
  if (mprof_render_tab_is_span(t))
    mprof_render_view_open_span_tab(&view, model, kernel >= 0);
  int rc = mprof_render_write_png(model, &view, t, width, height, out, size);
  mprof_render_model_free(model);
  return rc;
}

void mprof_render_png_free(unsigned char *png) { free(png); }

const char *mprof_render_png_error(void) { return mprof_render_error(); }
