/*
 * png_check FILE WIDTH HEIGHT — exit 0 when FILE is a PNG of that size
 * that shows something: more than a handful of colours, and a few percent
 * of its pixels unlike its most common colour (the background). Prints
 * what it found in one line either way.
 *
 * png_check --blank FILE WIDTH HEIGHT writes a PNG of that size in one
 * colour (the renderer's background), the negative control that the check
 * must refuse.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#define MIN_COLOURS 16
#define MIN_INK 0.02 /* share of pixels unlike the background */

static int by_value(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int write_blank(const char *path, int w, int h) {
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_destroy(cr);
  cairo_status_t st = cairo_surface_write_to_png(s, path);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "png_check: %s: %s\n", path, cairo_status_to_string(st));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--blank") == 0)
    return write_blank(argv[2], atoi(argv[3]), atoi(argv[4]));
  if (argc != 4) {
    fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n"
                    "       png_check --blank FILE WIDTH HEIGHT\n");
    return 2;
  }
  cairo_surface_t *s = cairo_image_surface_create_from_png(argv[1]);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    printf("%s: not a readable PNG (%s)\n", argv[1],
           cairo_status_to_string(cairo_surface_status(s)));
    cairo_surface_destroy(s);
    return 1;
  }
  int w = cairo_image_surface_get_width(s),
      h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  const unsigned char *data = cairo_image_surface_get_data(s);
  size_t n = (size_t)w * (size_t)h;
  uint32_t *px = (uint32_t *)malloc((n ? n : 1) * sizeof *px);
  if (!px)
    return 1;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint32_t v;
      memcpy(&v, data + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
      px[(size_t)y * (size_t)w + (size_t)x] = v & 0xffffffu;
    }
  cairo_surface_destroy(s);
  qsort(px, n, sizeof *px, by_value);
  size_t colours = 0, run = 0, longest = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || px[i] != px[i - 1]) {
      colours++;
      run = 0;
    }
    if (++run > longest)
      longest = run;
  }
  free(px);
  double ink = n ? 1.0 - (double)longest / (double)n : 0;
  printf("%s: %dx%d, %zu colours, %.1f%% unlike the background\n", argv[1], w,
         h, colours, 100 * ink);
  int ok = w == atoi(argv[2]) && h == atoi(argv[3]) && colours >= MIN_COLOURS &&
           ink >= MIN_INK;
  return ok ? 0 : 1;
}
