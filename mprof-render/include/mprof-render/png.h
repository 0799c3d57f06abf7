/*
 * mprof-render — a view of a trace as PNG bytes, from a shared library
 * (libmprof-render-png.so.0) for programs that do not link Cairo or the
 * renderer themselves: the Python package's notebook display of a kernel.
 * Only the functions below are exported, and they change only with the
 * SOVERSION; the renderer behind them is the one `mprof view --render`
 * draws with, so the bytes are those of `mprof view --render OUT.png` for
 * the same tab, kernel and size.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_PNG_H
#define MPROF_RENDER_PNG_H

#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define MPROF_RENDER_PNG_API __attribute__((visibility("default")))
#else
#define MPROF_RENDER_PNG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Draw tab @p tab ("summary", "hotspots", "flame", "raster", "mega",
 * "density", "activity", "trace"; NULL: "summary") of kernel @p kernel (its
 * index in libmprof's join order, mprof_join_kernel(); -1: the dominant
 * kernel) of the @p count traces at @p paths (one trace, a .mkprof, or the
 * traces of one run) with the sidecar at @p sidecar (NULL: TRACE.pc.json
 * when present), at @p width x @p height pixels (16..16384), as PNG.
 * On success returns 0 and *out holds *size bytes, the caller's to free
 * with mprof_render_png_free(). On failure returns -1, *out is NULL and
 * mprof_render_png_error() says why in one line.
 */
MPROF_RENDER_PNG_API int mprof_render_png(unsigned char **out, size_t *size,
                                          const char *const *paths,
                                          size_t count, const char *sidecar,
                                          const char *tab, int kernel,
                                          int width, int height);

/** Free what mprof_render_png() returned. NULL is a no-op. */
MPROF_RENDER_PNG_API void mprof_render_png_free(unsigned char *png);

/** The last failure of this thread, in one line; never NULL. */
MPROF_RENDER_PNG_API const char *mprof_render_png_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_RENDER_PNG_H */
