/*
 * mprof tests — libmprof-render-png.so (mprof-render/png.h): the PNG bytes
 * of a view are those mprof_render_write() writes for it, kernel by join
 * index, and each bad argument fails with one line naming the problem.
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_render_fixture.h"

#include "mprof-render/png.h"

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc((size_t)n);
  assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* Kernel 1 of the fixture (K1, the second by time) on the Summary and on
 * Hotspots: the library's bytes equal the file the renderer writes. */
static void test_png_bytes_equal_the_file(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("png.mprof", 1);
  char trace[1024], file[1100];
  snprintf(trace, sizeof trace, "%s", test_path("png.mprof"));
  snprintf(file, sizeof file, "%s.png", trace);
  const char *paths[] = {trace};
  static const struct {
    const char *name;
    int tab, kernel;
  } cases[] = {{NULL, MPROF_RENDER_SUMMARY, 1},
               {"hotspots", MPROF_RENDER_HOTSPOTS, 0},
               {"summary", MPROF_RENDER_SUMMARY, -1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mprof_render_view view;
    mprof_render_view_init(&view, m);
    if (cases[c].kernel >= 0)
      view.kernel = cases[c].kernel;
    assert_int_equal(mprof_render_write(m, &view, cases[c].tab, 640, 480, file),
                     0);
    size_t want_size, size;
    unsigned char *want = read_all(file, &want_size), *png;
    assert_int_equal(mprof_render_png(&png, &size, paths, 1, NULL,
                                      cases[c].name, cases[c].kernel, 640, 480),
                     0);
    assert_true(size > 1000);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    assert_int_equal(size, want_size);
    assert_memory_equal(png, want, size);
    mprof_render_png_free(png);
    free(want);
  }
  /* Kernels 0 and 1 draw differently. */
  unsigned char *a, *b;
  size_t na, nb;
  assert_int_equal(mprof_render_png(&a, &na, paths, 1, NULL, NULL, 0, 320, 240),
                   0);
  assert_int_equal(mprof_render_png(&b, &nb, paths, 1, NULL, NULL, 1, 320, 240),
                   0);
  assert_true(na != nb || memcmp(a, b, na) != 0);
  mprof_render_png_free(a);
  mprof_render_png_free(b);
  mprof_render_png_free(NULL);
  mprof_render_model_free(m);
  unlink(file);
}

static void test_png_errors(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("png-errors.mprof", 1);
  mprof_render_model_free(m);
  char trace[1024], msg[1200];
  snprintf(trace, sizeof trace, "%s", test_path("png-errors.mprof"));
  const char *paths[] = {trace};
  unsigned char *png = (unsigned char *)"x";
  size_t size = 7;
  assert_int_equal(
      mprof_render_png(&png, &size, paths, 1, NULL, "flames", -1, 640, 480),
      -1);
  assert_null(png);
  assert_int_equal(size, 0);
  assert_string_equal(mprof_render_png_error(),
                      "unknown tab 'flames' (trace, summary, hotspots, flame, "
                      "raster, mega, density, activity)");
  assert_int_equal(
      mprof_render_png(&png, &size, paths, 1, NULL, NULL, 2, 640, 480), -1);
  snprintf(msg, sizeof msg, "%s: kernel 2 is out of range (the trace has 2)",
           trace);
  assert_string_equal(mprof_render_png_error(), msg);
  assert_int_equal(
      mprof_render_png(&png, &size, paths, 1, NULL, NULL, 0, 8, 480), -1);
  assert_string_equal(mprof_render_png_error(),
                      "size 8x480 is out of range (16..16384)");
  assert_null(png);
  const char *missing[] = {"/nonexistent/x.mprof"};
  assert_int_equal(
      mprof_render_png(&png, &size, missing, 1, NULL, NULL, 0, 64, 64), -1);
  assert_non_null(strstr(mprof_render_png_error(), "/nonexistent/x.mprof"));
  assert_int_equal(
      mprof_render_png(&png, &size, NULL, 1, NULL, NULL, 0, 64, 64), -1);
  assert_int_equal(
      mprof_render_png(NULL, &size, paths, 1, NULL, NULL, 0, 64, 64), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_png_bytes_equal_the_file),
      cmocka_unit_test(test_png_errors),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  /* Cairo's and fontconfig's caches are process-wide: one shutdown lets go
   * of what both copies of the renderer (the library's and this test's)
   * drew with. */
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
