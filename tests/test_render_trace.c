/*
 * mprof tests — the Trace tab as a GPU engineer reads it: the whole-trace
 * view fits the GPU activity and marks where the process started, copies
 * carry kind, size and bandwidth, a selected range lists its kernels with
 * totals, NVTX ranges are rows per host thread nested by depth, PM
 * counters are tracks under their GPU, and the capture window a trace was
 * recorded in is marked on the ruler.
 *
 * The NVTX and counter traces here are SYNTHETIC, written with the
 * project's writer (mprof_writer_*), so that every number is planted. The
 * checks that need no planted numbers also run over every trace in
 * samples/ that holds ranges or counters (nvtx_step.mprof and gemm_pm.mprof
 * were recorded on the H200), so a recorded sample added there is checked
 * without changing this file.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <math.h>
#include <unistd.h>

#include "analysis_util.h"
#include "test_render_fixture.h"

#define W 1168
#define H 420

/* ---- helpers ------------------------------------------------------------ */

static mprof_render_model *open_model(const char *path) {
  mprof_render_model *m = NULL;
  if (mprof_render_model_open(&m, path, NULL))
    fail_msg("%s", mprof_render_error());
  return m;
}

/* A pixel "near" @p rgb: antialiased text and lines blend. */
static int near(uint32_t a, uint32_t b, int tolerance) {
  for (int s = 0; s < 24; s += 8) {
    int d = (int)((a >> s) & 0xff) - (int)((b >> s) & 0xff);
    if (d > tolerance || d < -tolerance)
      return 0;
  }
  return 1;
}

static size_t count_in(const fix_image *img, int x0, int y0, int x1, int y1,
                       int (*want)(uint32_t)) {
  size_t n = 0;
  for (int y = y0; y < y1 && y < img->height; y++)
    for (int x = x0; x < x1 && x < img->width; x++)
      n += want(fix_pixel(img, x, y));
  return n;
}

static int is_white(uint32_t c) { return near(c, 0xffffff, 40); }
static int is_purple(uint32_t c) {
  int r = (int)(c >> 16), g = (int)((c >> 8) & 0xff), b = (int)(c & 0xff);
  return b > g + 40 && r > g + 20;
}

static int64_t earliest_activity(const mprof_trace *t) {
  size_t n;
  int64_t first = INT64_MAX;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  for (size_t i = 0; i < n; i++)
    if ((int64_t)l[i].start < first)
      first = (int64_t)l[i].start;
  const mprof_memop_record *mo = mprof_trace_memops(t, &n);
  for (size_t i = 0; i < n; i++)
    if ((int64_t)mo[i].start < first)
      first = (int64_t)mo[i].start;
  return first;
}

/* samples/NAME, or NULL when MPROF_SOURCE_DIR's samples lack it (tests/gpu/
 * trace_tab.sh runs these checks over fresh recordings of other names):
 * the caller skips. */
static mprof_render_model *open_sample(const char *name) {
  char path[2048];
  const char *root = getenv("MPROF_SOURCE_DIR");
  snprintf(path, sizeof path, "%s/samples/%s", root && *root ? root : ".",
           name);
  if (access(path, F_OK) != 0) {
    printf("%s is not among the samples: skipped\n", path);
    return NULL;
  }
  return open_model(path);
}

/* ---- the first look: where the kernels ran ----------------------------- */

static int brightness(uint32_t c) {
  return (int)(c >> 16) + (int)((c >> 8) & 0xff) + (int)(c & 0xff);
}

static size_t samples_with_lead_in, samples_fitted;

/* Kernel time inside [a, b] (launches wholly in it) and in all. */
static void kernel_time(const mprof_trace *t, int64_t a, int64_t b,
                        double *inside, double *total) {
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  *inside = *total = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)(l[i].end - l[i].start);
    *total += d;
    if ((int64_t)l[i].start >= a && (int64_t)l[i].end <= b)
      *inside += d;
  }
}

/* Columns of the stream rows that a launch colours: grey background, grid
 * and labels aside, what a user sees of the kernels. */
static int is_launch(uint32_t c) {
  int r = (int)(c >> 16), g = (int)((c >> 8) & 0xff), b = (int)(c & 0xff);
  int hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
  int lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
  return hi - lo > 40; /* saturated: kernel colours, not greys */
}

static double launch_columns(const fix_image *img, const mprof_render_model *m,
                             const mprof_render_view *v) {
  size_t hit = 0;
  int x0 = (int)MPROF_RENDER_GUTTER;
  for (int x = x0; x < img->width; x++) {
    int found = 0;
    for (size_t r = 0; r < mprof_render_row_count(m) && !found; r++) {
      if (mprof_render_row_at(m, r)->kind != MPROF_ROW_STREAM)
        continue;
      double h, top = MPROF_RENDER_RULER - v->scroll_y +
                      mprof_render_row_top(m, v, r, &h);
      int y = (int)(top + h / 2);
      if (y > MPROF_RENDER_RULER && y < img->height)
        found = is_launch(fix_pixel(img, x, y));
    }
    hit += (size_t)found;
  }
  return (double)hit / (double)(img->width - x0);
}

static void check_first_look(const char *path) {
  mprof_render_model *m = open_model(path);
  const mprof_trace *t = mprof_render_model_trace(m);
  size_t launches;
  mprof_trace_launches(t, &launches);
  int64_t first = earliest_activity(t), start, end;
  mprof_render_model_bounds(m, &start, &end);
  if (first == INT64_MAX || !launches) {
    mprof_render_model_free(m);
    return;
  }
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  mprof_render_limits limits;
  mprof_render_model_limits(m, &limits);
  /* Nine tenths of the kernel time is in view, whole launches. */
  double inside, total;
  kernel_time(t, v.start_ns, v.end_ns, &inside, &total);
  assert_true(inside >= 0.9 * total);
  int64_t span = v.end_ns - v.start_ns;
  if (v.start_ns == limits.min_ns && v.end_ns == limits.max_ns) {
    /* All of the GPU activity: the first launch or copy within 3% of the
     * time area's left edge, not the process's life. */
    mprof_render_timemap map;
    mprof_render_trace_timemap(&map, &v, W);
    double x = mprof_render_time_to_x(&map, first);
    assert_true(x >= MPROF_RENDER_GUTTER);
    assert_true(x - MPROF_RENDER_GUTTER < 0.03 * (W - MPROF_RENDER_GUTTER));
  } else {
    /* Fitted where the kernels ran: at most a fifth of the activity,
     * with a margin under a tenth of the view on either side. */
    samples_fitted++;
    assert_true(span <= (end - start) / 5 + (end - start) / 20);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t n;
    const mprof_launch_record *l = mprof_trace_launches(t, &n);
    for (size_t i = 0; i < n; i++)
      if ((int64_t)l[i].start >= v.start_ns && (int64_t)l[i].end <= v.end_ns) {
        lo = (int64_t)l[i].start < lo ? (int64_t)l[i].start : lo;
        hi = (int64_t)l[i].end > hi ? (int64_t)l[i].end : hi;
      }
    assert_true(lo - v.start_ns < span / 10);
    assert_true(v.end_ns - hi < span / 10);
    /* More of the time area is coloured by launches than at the
     * whole-activity view (a PyTorch step's GPU idles between its small
     * kernels either way; transformer_forward's below fills it). */
    fix_image fitted = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
    mprof_render_view whole = v;
    whole.start_ns = limits.min_ns;
    whole.end_ns = limits.max_ns;
    fix_image all = fix_draw(m, &whole, MPROF_RENDER_TRACE, W, H);
    double near = launch_columns(&fitted, m, &v);
    double far = launch_columns(&all, m, &whole);
    printf("%s: %.1f%% of %.3f ms in view (%.3f ms), launches colour "
           "%.0f%% of the time area (%.0f%% at the whole activity)\n",
           strrchr(path, '/') + 1, 100 * inside / total,
           (double)(end - start) / 1e6, (double)span / 1e6, 100 * near,
           100 * far);
    assert_true(near > far);
    fix_free(&fitted);
    fix_free(&all);
  }
  /* A process that started before its first GPU work (every CUPTI
   * recording): the corner of the ruler says so, in the marker's purple. */
  int64_t process = mprof_render_model_process_start(m);
  if (process <= 0 || process >= first) {
    mprof_render_model_free(m);
    return;
  }
  samples_with_lead_in++;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_true(count_in(&img, 0, 13, (int)MPROF_RENDER_GUTTER,
                       (int)MPROF_RENDER_RULER, is_purple) > 20);
  fix_free(&img);
  /* Zoomed out to show the process start, it is a line across the rows. */
  v.start_ns = process - (first - process) / 10;
  v.end_ns = v.start_ns + 2 * (first - process);
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  int px = (int)floor(mprof_render_time_to_x(&map, process));
  assert_true(is_purple(fix_pixel(&img, px, (int)MPROF_RENDER_RULER + 2)));
  assert_false(is_purple(fix_pixel(&img, px - 5, (int)MPROF_RENDER_RULER + 2)));
  fix_free(&img);
  mprof_render_model_free(m);
}

static void test_samples_open_on_their_gpu_activity(void **state) {
  (void)state;
  if (!fix_each_sample(check_first_look))
    fail_msg("no recorded sample in samples/");
  assert_true(samples_with_lead_in > 0);
  printf("%zu sample(s) open where their kernels ran\n", samples_fitted);
}

/* transformer_forward.mprof spans 200 ms of GPU activity (copies at
 * 0 ms, a layernorm at 15 ms, the GEMMs after 166 ms) and 3.6 ms of
 * kernels, most of it in its last 4 ms: the Trace opens on those. */
static void test_transformer_opens_on_its_kernels(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("transformer_forward.mprof");
  if (!m)
    skip();
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  int64_t start, end;
  mprof_render_model_bounds(m, &start, &end);
  assert_true(end - start > 150 * 1000000ll);
  assert_true(v.end_ns - v.start_ns < 10 * 1000000ll);
  assert_true(v.start_ns > start + 150 * 1000000ll);
  /* Its kernels read as bars, not slivers: launches colour a good part of
   * the time area, five times what they colour at the whole activity. */
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-first-look.png");
  mprof_render_limits limits;
  mprof_render_model_limits(m, &limits);
  mprof_render_view whole = v;
  whole.start_ns = limits.min_ns;
  whole.end_ns = limits.max_ns;
  fix_image all = fix_draw(m, &whole, MPROF_RENDER_TRACE, W, H);
  double near = launch_columns(&img, m, &v),
         far = launch_columns(&all, m, &whole);
  assert_true(near > 0.3);
  assert_true(near > 5 * far);
  /* The ruler's corner says it is part of the activity ("4.095 ms of
   * 200.1 ms visible"): a longer line than at the whole activity. */
  size_t ink_part = 0, ink_all = 0;
  for (int y = 0; y < 13; y++)
    for (int x = 0; x < (int)MPROF_RENDER_GUTTER - 4; x++) {
      ink_part += brightness(fix_pixel(&img, x, y)) < 500;
      ink_all += brightness(fix_pixel(&all, x, y)) < 500;
    }
  assert_true(ink_part > ink_all + 40);
  fix_free(&img);
  fix_free(&all);
  mprof_render_model_free(m);
}

/* ---- kernel names inside launches ------------------------------------- */

/* A context at the Trace's label font, for measuring. */
static cairo_t *label_context(cairo_surface_t **surface) {
  *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
  cairo_t *cr = cairo_create(*surface);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  return cr;
}

static size_t chars_of(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}

static size_t common_prefix(const char *a, const char *b) {
  size_t n = 0;
  while (a[n] && a[n] == b[n])
    n++;
  return n;
}

/* The seven multi_tensor_apply_kernel<...> of a PyTorch optimizer step
 * share their first 27 characters: cut to the width of a launch, each
 * label is the trace's unique short name cut in the middle by its name
 * set (head and tail kept), and differs from the label of the kernel its
 * name is most like (PointwiseOpScalarFunctor / PointwiseOpScalarList-
 * Functor: "List" stays), and from every other label: names that share
 * both ends with one further off (PointwiseOpScalarListFunctor and
 * BinaryOpScalarListFunctor, both "divides") once cut alike. */
static void test_labels_tell_kernels_apart(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("nvtx_step.mprof");
  if (!m)
    skip();
  cairo_surface_t *surface;
  cairo_t *cr = label_context(&surface);
  char labels[64][256];
  int kernel[64];
  size_t count = 0;
  for (size_t k = 0; k < mprof_render_kernel_count(m) && count < 64; k++) {
    const mprof_render_kernel *rk = mprof_render_kernel_at(m, k);
    if (strncmp(rk->short_name, "multi_tensor_apply_kernel", 25) != 0)
      continue;
    char whole[256], cut[256];
    assert_string_equal(
        mprof_render_kernel_label(m, (int)k, NULL, 0, whole, sizeof whole),
        rk->short_name);
    mprof_render_kernel_label(m, (int)k, cr, 200, labels[count], 256);
    const char *l = labels[count];
    printf("%s -> %s\n", rk->short_name, l);
    cairo_text_extents_t e;
    cairo_text_extents(cr, l, &e);
    assert_true(e.x_advance <= 200);
    assert_true(chars_of(l) >= 20);
    assert_string_equal(mprof_name_set_fit(rk->short_names, rk->index, cut,
                                           sizeof cut, chars_of(l)),
                        l);
    /* Cut in the middle: the head and the last character stay. */
    assert_true(strncmp(l, "multi_", 6) == 0);
    assert_int_equal(l[strlen(l) - 1],
                     rk->short_name[strlen(rk->short_name) - 1]);
    assert_non_null(strstr(l, "\u2026"));
    kernel[count++] = (int)k;
  }
  assert_true(count >= 5);
  size_t nearest_pairs = 0;
  for (size_t i = 0; i < count; i++) {
    const char *a = mprof_render_kernel_at(m, (size_t)kernel[i])->short_name;
    size_t best = 0, at = i;
    for (size_t j = 0; j < count; j++) {
      const char *b = mprof_render_kernel_at(m, (size_t)kernel[j])->short_name;
      if (j != i && common_prefix(a, b) > best) {
        best = common_prefix(a, b);
        at = j;
      }
    }
    if (at != i) {
      assert_string_not_equal(labels[i], labels[at]);
      nearest_pairs++;
    }
  }
  assert_int_equal(nearest_pairs, count);
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(labels[i], labels[j]);
  /* Too narrow for four characters: no label at all. */
  char none[64];
  assert_string_equal(mprof_render_kernel_label(m, 0, cr, 14, none, 64), "");
  assert_true(*mprof_render_kernel_label(m, 0, cr, 40, none, 64));
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  mprof_render_model_free(m);
}

/* Drawn: in transformer_forward.mprof's first look at 2400 px, the widest
 * launch carries text (pixels neither its fill nor its edge), one too
 * narrow for a label carries none. */
static size_t text_pixels(const fix_image *img, int x0, int x1, int y0, int y1,
                          uint32_t fill) {
  size_t n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      n += !near(fix_pixel(img, x, y), fill, 60) &&
           !near(fix_pixel(img, x, y), 0, 0);
  return n;
}

static void test_names_drawn_inside_launches(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("transformer_forward.mprof");
  if (!m)
    skip();
  const int wide = 2400;
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1; /* no outline, no inset: the bar and its name */
  v.launch = -1;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, wide, H);
  fix_save(&img, "trace-labels.png");
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, wide);
  const mprof_trace *t = mprof_render_model_trace(m);
  size_t labelled = 0, bare = 0;
  cairo_surface_t *surface;
  cairo_t *cr = label_context(&surface);
  for (size_t r = 0; r < mprof_render_row_count(m); r++) {
    const mprof_render_row *row = mprof_render_row_at(m, r);
    if (row->kind != MPROF_ROW_STREAM)
      continue;
    double h, top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, r, &h);
    size_t n = mprof_trace_stream_launch_count(t, row->stream);
    for (size_t i = 0; i < n; i++) {
      const mprof_launch_record *l =
          mprof_trace_stream_launch(t, row->stream, i);
      double x0 = mprof_render_time_to_x(&map, (int64_t)l->start);
      double x1 = mprof_render_time_to_x(&map, (int64_t)l->end);
      if (x0 < MPROF_RENDER_GUTTER + 2 || x1 > wide - 2)
        continue;
      size_t launches;
      int k = mprof_render_launch_kernel(
          m, (size_t)(l - mprof_trace_launches(t, &launches)));
      uint32_t fill = mprof_render_kernel_at(m, (size_t)k)->color;
      int inset = x1 - x0 >= 40 ? 3 : 1;
      size_t text =
          text_pixels(&img, (int)ceil(x0) + inset, (int)floor(x1) - inset,
                      (int)top + 5, (int)(top + h) - 6, fill);
      char label[256];
      mprof_render_kernel_label(m, k, cr, floor(x1) - ceil(x0) - 8, label,
                                sizeof label);
      if (x1 - x0 >= 40 && *label) {
        assert_true(text > 15);
        labelled++;
      } else if (x1 - x0 >= 6 && x1 - x0 < 20) {
        assert_int_equal(text, 0);
        bare++;
      }
    }
  }
  printf("%zu launches labelled, %zu too narrow and bare\n", labelled, bare);
  assert_true(labelled >= 5);
  assert_true(bare >= 5);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* ---- search ------------------------------------------------------------ */

/* A search for one kernel of transformer_forward.mprof: its launches keep
 * their colour, every other launch is dimmed towards the background; the
 * count and the next match in time follow the kernel's launches. */
static void test_search_dims_what_it_does_not_match(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("transformer_forward.mprof");
  if (!m)
    skip();
  int target = mprof_render_kernel_find(m, "attention_scores_softmax");
  assert_true(target >= 0);
  const mprof_render_kernel *tk = mprof_render_kernel_at(m, (size_t)target);
  size_t kernels, ranges;
  assert_int_equal(
      mprof_render_search_count(m, "ATTENTION_scores", &kernels, &ranges),
      tk->stats->launches);
  assert_int_equal(kernels, 1);
  assert_int_equal(ranges, 0);
  assert_int_equal(
      mprof_render_search_count(m, "no such kernel", &kernels, NULL), 0);
  assert_int_equal(kernels, 0);

  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.search = "attention_scores";
  const int wide = 2400;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, wide, H);
  fix_save(&img, "trace-search.png");
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, wide);
  const mprof_trace *t = mprof_render_model_trace(m);
  size_t n, kept = 0, dimmed = 0;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  for (size_t r = 0; r < mprof_render_row_count(m); r++) {
    const mprof_render_row *row = mprof_render_row_at(m, r);
    if (row->kind != MPROF_ROW_STREAM)
      continue;
    double h, top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, r, &h);
    for (size_t i = 0; i < mprof_trace_stream_launch_count(t, row->stream);
         i++) {
      const mprof_launch_record *x =
          mprof_trace_stream_launch(t, row->stream, i);
      double x0 = mprof_render_time_to_x(&map, (int64_t)x->start);
      double x1 = mprof_render_time_to_x(&map, (int64_t)x->end);
      if (x1 - x0 < 8 || x0 < MPROF_RENDER_GUTTER || x1 > wide)
        continue;
      int k = mprof_render_launch_kernel(m, (size_t)(x - l));
      uint32_t colour = mprof_render_kernel_at(m, (size_t)k)->color;
      /* Below the middle, under any name. */
      uint32_t px = fix_pixel(&img, (int)((x0 + x1) / 2), (int)(top + h) - 6);
      if (k == target) {
        assert_true(near(px, colour, 8));
        kept++;
      } else {
        assert_false(near(px, colour, 30));
        assert_true(brightness(px) > brightness(colour) + 100);
        dimmed++;
      }
    }
  }
  printf("%zu launches kept their colour, %zu dimmed\n", kept, dimmed);
  assert_true(kept >= 5 && dimmed >= 20);
  fix_free(&img);

  /* Next and previous in time, wrapping around. */
  mprof_render_match first, second, back, last;
  assert_true(mprof_render_search_next(m, "attention_scores", NULL, 1, &first));
  assert_int_equal(first.kind, MPROF_HIT_LAUNCH);
  assert_int_equal(mprof_render_launch_kernel(m, (size_t)first.index), target);
  for (size_t i = 0; i < n; i++)
    if (mprof_render_launch_kernel(m, i) == target)
      assert_true((int64_t)l[i].start >= first.start_ns);
  assert_true(
      mprof_render_search_next(m, "attention_scores", &first, 1, &second));
  assert_true(second.start_ns > first.start_ns);
  assert_true(
      mprof_render_search_next(m, "attention_scores", &second, 0, &back));
  assert_int_equal(back.index, first.index);
  assert_true(
      mprof_render_search_next(m, "attention_scores", &first, 0, &last));
  assert_true(last.start_ns > second.start_ns); /* wrapped to the end */
  assert_false(mprof_render_search_next(m, "no such kernel", NULL, 1, &last));
  mprof_render_model_free(m);

  /* NVTX ranges match by name too. */
  m = open_sample("nvtx_step.mprof");
  if (!m)
    return;
  size_t n_ranges;
  const mprof_range_record *rr =
      mprof_trace_ranges(mprof_render_model_trace(m), &n_ranges);
  assert_true(n_ranges > 0);
  const char *name =
      mprof_trace_string(mprof_render_model_trace(m), rr[0].name);
  mprof_render_search_count(m, name, NULL, &ranges);
  assert_true(ranges >= 1);
  mprof_render_match range;
  int found_range = 0;
  memset(&range, 0, sizeof range);
  for (int i = 0; i < 100 && !found_range; i++) {
    assert_true(
        mprof_render_search_next(m, name, i ? &range : NULL, 1, &range));
    found_range = range.kind == MPROF_HIT_RANGE;
  }
  assert_true(found_range);
  assert_true(mprof_render_name_matches(
      mprof_trace_string(mprof_render_model_trace(m), rr[range.index].name),
      name));
  mprof_render_model_free(m);
}

/* ---- rows that fold and hide ------------------------------------------- */

static void test_rows_fold_and_hide(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("nvtx_step.mprof");
  if (!m)
    skip();
  size_t rows = mprof_render_row_count(m);
  uint8_t *row_state = calloc(rows, 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  double all = mprof_render_content_height(m, &v, MPROF_RENDER_TRACE, W);
  v.row_state = row_state;
  assert_true(mprof_render_content_height(m, &v, MPROF_RENDER_TRACE, W) == all);
  /* The first band (a host thread with its ranges and API calls) folded:
   * its rows are gone, the band stays, the next band moves up. */
  size_t band = 0, next = rows;
  while (band < rows && mprof_render_row_at(m, band)->kind != MPROF_ROW_THREAD)
    band++;
  assert_true(band < rows);
  for (size_t r = band + 1; r < rows && next == rows; r++) {
    uint32_t kind = mprof_render_row_at(m, r)->kind;
    if (kind == MPROF_ROW_THREAD || kind == MPROF_ROW_DEVICE)
      next = r;
  }
  assert_true(next > band + 1 && next < rows);
  double under = mprof_render_row_top(m, &v, next, NULL) -
                 mprof_render_row_top(m, &v, band + 1, NULL);
  assert_true(under > 0);
  row_state[band] = MPROF_ROW_COLLAPSED;
  assert_true(mprof_render_content_height(m, &v, MPROF_RENDER_TRACE, W) ==
              all - under);
  assert_int_equal(mprof_render_row_band(m, band + 1), (int)band);
  assert_false(mprof_render_row_shown(m, &v, band + 1));
  assert_true(mprof_render_row_shown(m, &v, band));
  double bh;
  double band_top = mprof_render_row_top(m, &v, band, &bh);
  assert_true(mprof_render_row_top(m, &v, next, NULL) == band_top + bh);
  assert_int_equal(mprof_render_row_at_y(m, &v, band_top + bh + 1), (int)next);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-folded.png");
  fix_free(&img);
  /* Unfolded, then one stream row hidden: only it goes, and its band
   * says so in its label. */
  row_state[band] = 0;
  size_t stream = rows;
  for (size_t r = 0; r < rows && stream == rows; r++)
    if (mprof_render_row_at(m, r)->kind == MPROF_ROW_STREAM)
      stream = r;
  assert_true(stream < rows);
  double sh;
  mprof_render_row_top(m, &v, stream, &sh);
  row_state[stream] = MPROF_ROW_HIDDEN;
  assert_true(mprof_render_content_height(m, &v, MPROF_RENDER_TRACE, W) ==
              all - sh);
  assert_false(mprof_render_row_shown(m, &v, stream));
  int device = mprof_render_row_band(m, stream);
  assert_true(device >= 0);
  assert_int_equal(mprof_render_band_hidden(m, &v, (size_t)device), 1);
  /* The band's label grows by "1 row hidden": more text pixels in it. */
  double dh, dtop = MPROF_RENDER_RULER +
                    mprof_render_row_top(m, &v, (size_t)device, &dh);
  mprof_render_view plain = v;
  plain.row_state = NULL;
  double ptop = MPROF_RENDER_RULER +
                mprof_render_row_top(m, &plain, (size_t)device, NULL);
  fix_image with = fix_draw(m, &v, MPROF_RENDER_TRACE, W, 2000);
  fix_image without = fix_draw(m, &plain, MPROF_RENDER_TRACE, W, 2000);
  size_t dark_with = 0, dark_without = 0;
  for (int y = 0; y < (int)dh; y++)
    for (int x = 0; x < W; x++) {
      dark_with += brightness(fix_pixel(&with, x, (int)dtop + y)) < 450;
      dark_without += brightness(fix_pixel(&without, x, (int)ptop + y)) < 450;
    }
  assert_true(dark_with > dark_without + 30);
  fix_free(&with);
  fix_free(&without);
  /* A hidden band takes its rows with it. */
  row_state[stream] = 0;
  row_state[(size_t)device] = MPROF_ROW_HIDDEN;
  assert_false(mprof_render_row_shown(m, &v, (size_t)device));
  assert_false(mprof_render_row_shown(m, &v, stream));
  free(row_state);
  mprof_render_model_free(m);
}

/* ---- copies ------------------------------------------------------------- */

static void test_copies_say_kind_size_and_bandwidth(void **state) {
  (void)state;
  /* The fixture's memcpy: 1 MiB host to device in 1.5 us. */
  mprof_render_model *m = fix_open("trace-copy.mprof", 1);
  char label[128];
  assert_string_equal(
      mprof_render_memop_label(m, 0, NULL, 0, label, sizeof label),
      "HtoD 1 MiB 699 GB/s");
  /* Zoomed so that it is 600 px wide: the label is drawn (white text on
   * the copy's bar); 2 us wide at the whole-trace view, it is not. */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = FIX_T0 + 2400;
  v.end_ns = FIX_T0 + 2400 + (W - (int64_t)MPROF_RENDER_GUTTER) * 5 / 2;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-copy.png");
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 1, &h);
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  int x0 = (int)mprof_render_time_to_x(&map, FIX_T0 + 2500);
  int x1 = (int)mprof_render_time_to_x(&map, FIX_T0 + 4000);
  /* Inside the bar (2 px of padding above, 3 below). */
  int y0 = (int)top + 3, y1 = (int)(top + h) - 5;
  size_t text = count_in(&img, x0 + 2, y0, x1 - 2, y1, is_white);
  assert_true(text > 40);
  /* The text ends well before the bar does: the longest label fits. */
  size_t right_half = count_in(&img, x0 + 300, y0, x1 - 2, y1, is_white);
  assert_int_equal(right_half, 0);
  fix_free(&img);
  /* A narrow bar gets the shorter labels, then none. */
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
  cairo_t *cr = cairo_create(s);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  assert_string_equal(mprof_render_memop_label(m, 0, cr, 70, label, 128),
                      "HtoD 1 MiB");
  assert_string_equal(mprof_render_memop_label(m, 0, cr, 40, label, 128),
                      "HtoD");
  assert_string_equal(mprof_render_memop_label(m, 0, cr, 10, label, 128), "");
  cairo_destroy(cr);
  cairo_surface_destroy(s);
  mprof_render_model_free(m);
}

static void check_sample_copy_labels(const char *path) {
  mprof_render_model *m = open_model(path);
  size_t n;
  const mprof_memop_record *mo =
      mprof_trace_memops(mprof_render_model_trace(m), &n);
  /* The longest memcpy, labelled with its kind, its size and its rate. */
  size_t best = n;
  for (size_t i = 0; i < n; i++)
    if (mo[i].kind == MPROF_MEMOP_MEMCPY && mo[i].bytes &&
        (best == n || mo[i].end - mo[i].start > mo[best].end - mo[best].start))
      best = i;
  if (best < n) {
    char label[128], bytes[32], rate[32], want[128];
    mprof_format_bytes(bytes, sizeof bytes, (double)mo[best].bytes);
    mprof_format_bandwidth(rate, sizeof rate,
                           (double)mo[best].bytes * 1e9 /
                               (double)(mo[best].end - mo[best].start));
    const char *kind = mo[best].copy_kind == MPROF_COPY_HTOD   ? "HtoD"
                       : mo[best].copy_kind == MPROF_COPY_DTOH ? "DtoH"
                       : mo[best].copy_kind == MPROF_COPY_DTOD ? "DtoD"
                                                               : NULL;
    if (kind) {
      snprintf(want, sizeof want, "%s %s %s", kind, bytes, rate);
      assert_string_equal(
          mprof_render_memop_label(m, best, NULL, 0, label, sizeof label),
          want);
    }
  }
  mprof_render_model_free(m);
}

static void test_sample_copies_are_labelled(void **state) {
  (void)state;
  if (!fix_each_sample(check_sample_copy_labels))
    fail_msg("no recorded sample in samples/");
}

/* ---- the selected range ------------------------------------------------ */

static void test_selection_lists_its_kernels(void **state) {
  (void)state;
  mprof_render_model *m = fix_open("trace-select.mprof", 1);
  /* [1500, 6000): K0 [1000, 2000) gives 500 ns and [5000, 9000) 1000 ns,
   * K1 [3000, 8000) on the other stream 3000 ns; the memcpy at 2500..4000
   * is in it too. */
  mprof_window *w = NULL;
  assert_int_equal(mprof_window_build(&w, mprof_render_model_join(m),
                                      FIX_T0 + 1500, FIX_T0 + 6000),
                   0);
  const mprof_window_totals *t = mprof_window_totals_of(w);
  assert_int_equal(t->launches, 3);
  assert_int_equal(t->kernels, 2);
  assert_int_equal(t->gpu_ns, 4500);
  assert_int_equal(t->copies, 1);
  assert_int_equal(t->copy_bytes, 1 << 20);
  assert_int_equal(t->copy_ns, 1500);
  assert_int_equal(mprof_window_kernel_count(w), 2);
  const mprof_window_kernel *first = mprof_window_kernel_at(w, 0);
  const mprof_window_kernel *second = mprof_window_kernel_at(w, 1);
  assert_int_equal(first->kernel, 1); /* K1: the most time in the range */
  assert_int_equal(first->launches, 1);
  assert_int_equal(first->gpu_ns, 3000);
  assert_int_equal(second->kernel, 0);
  assert_int_equal(second->launches, 2);
  assert_int_equal(second->gpu_ns, 1500);
  assert_null(mprof_window_kernel_at(w, 2));
  mprof_window_free(w);
  /* An empty range: nothing, no failure. */
  assert_int_equal(mprof_window_build(&w, mprof_render_model_join(m),
                                      FIX_T0 + 31000, FIX_T0 + 49000),
                   0);
  assert_int_equal(mprof_window_kernel_count(w), 0);
  assert_int_equal(mprof_window_totals_of(w)->gpu_ns, 0);
  mprof_window_free(w);

  /* Drawn: a panel at the bottom right lists K1, then K0, each with its
   * colour. */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 50000;
  v.sel_start_ns = FIX_T0 + 1500;
  v.sel_end_ns = FIX_T0 + 6000;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-select.png");
  const int pw = 560, ph = 10 + 15 * 3 + 6;
  int px = W - pw - 8, py = H - ph - 8;
  assert_int_equal(fix_pixel(&img, px + 13, py + 6 + 11 + 15 - 4),
                   mprof_render_kernel_at(m, 1)->color);
  assert_int_equal(fix_pixel(&img, px + 13, py + 6 + 11 + 30 - 4),
                   mprof_render_kernel_at(m, 0)->color);
  fix_free(&img);
  /* Without a selection, no panel: the same pixel is the background. */
  v.sel_start_ns = v.sel_end_ns = 0;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_not_equal(fix_pixel(&img, px + 13, py + 6 + 11 + 15 - 4),
                       mprof_render_kernel_at(m, 1)->color);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* All 37 kernels of nvtx_step.mprof's step selected: a drawing tall
 * enough lists every one, each with its colour (no "and N more"); the
 * viewer, which lists them under the Trace, asks for no panel. */
static void test_selection_panel_lists_every_kernel(void **state) {
  (void)state;
  mprof_render_model *m = open_sample("nvtx_step.mprof");
  if (!m)
    skip();
  int64_t start, end;
  mprof_render_model_bounds(m, &start, &end);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = start;
  v.end_ns = end;
  v.sel_start_ns = start;
  v.sel_end_ns = end;
  mprof_window *w = NULL;
  assert_int_equal(mprof_window_build(&w, mprof_render_model_join(m),
                                      (uint64_t)start, (uint64_t)end),
                   0);
  size_t kernels = mprof_window_kernel_count(w);
  assert_true(kernels > 30);
  const int tall = 1000;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, tall);
  fix_save(&img, "trace-select-all.png");
  const int pw = 560;
  int ph = 10 + 15 * (int)(1 + kernels) + 6;
  int px = W - pw - 8, py = tall - ph - 8;
  for (size_t i = 0; i < kernels; i++) {
    const mprof_window_kernel *k = mprof_window_kernel_at(w, i);
    assert_int_equal(
        fix_pixel(&img, px + 13, py + 6 + 11 + 15 * (int)(i + 1) - 4),
        mprof_render_kernel_at(m, k->kernel)->color);
  }
  fix_free(&img);
  v.no_selection_panel = 1;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, tall);
  size_t swatches = 0;
  for (size_t i = 0; i < kernels; i++) {
    const mprof_window_kernel *k = mprof_window_kernel_at(w, i);
    swatches += fix_pixel(&img, px + 13, py + 6 + 11 + 15 * (int)(i + 1) - 4) ==
                mprof_render_kernel_at(m, k->kernel)->color;
  }
  assert_true(swatches < kernels / 4);
  fix_free(&img);
  mprof_window_free(w);
  mprof_render_model_free(m);
}

/* ---- a synthetic trace with NVTX ranges and PM samples ----------------- */

#define US 1000ll

typedef struct planted_range {
  const char *name;
  uint32_t thread, depth, color;
  int64_t start, end; /* us after FIX_T0 */
} planted_range;

/* Thread 100 pushes A, inside it B (inside which C) and then D; thread
 * 200 pushes E (green, its own colour) and starts F, a start/end range
 * that overlaps E without nesting. */
static const planted_range planted[] = {
    {"A", 100, 0, 0, 0, 100},          {"B", 100, 1, 0, 10, 50},
    {"C", 100, 2, 0, 20, 30},          {"D", 100, 1, 0, 60, 90},
    {"E", 200, 0, 0xff00ff00u, 5, 80}, {"F", 200, 0, 0, 40, 120},
};
#define PLANTED (sizeof planted / sizeof planted[0])

/* DRAM throughput and SM activity sampled every 10 us over 0..120 us:
 * DRAM is 10% in even windows and 90% in odd ones, SMs always 50%. */
#define PM_WINDOWS 12

/* With @p with_api, CUDA API calls too: thread 100's cudaLaunchKernel at
 * -3..-1 us issued the launch (correlation 4242), its cudaMemcpyAsync at
 * 100 us a copy the trace does not hold; thread 300 (no NVTX) made a
 * driver call. */
static uint32_t thread_shift; /* added to every thread id written */
static const char *process_pid, *process_host; /* META when set */

static void write_host_trace(const char *path, int with_pm, int with_api) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  if (process_pid)
    assert_int_equal(mprof_writer_meta(w, "pid", process_pid), 0);
  if (process_host)
    assert_int_equal(mprof_writer_meta(w, "host", process_host), 0);
  mprof_meta_record meta = {mprof_writer_string(w, "capture.mode"),
                            mprof_writer_string(w, "synthetic")};
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_META, &meta), 0);
  uint32_t d = tt_h200(w, 0, 132, 0);
  mprof_stream_record st = {d, 1, 7, 0};
  uint32_t s;
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, FIX_K0);
  kr.function_index = MPROF_INDEX_NONE;
  kr.device = d;
  kr.registers = 32;
  uint32_t k;
  assert_int_equal(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = k;
  sh.grid[0] = 264;
  sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 256;
  sh.block[1] = sh.block[2] = 1;
  uint32_t shape;
  assert_int_equal(mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh),
                   0);
  mprof_launch_record l;
  memset(&l, 0, sizeof l);
  l.start = (uint64_t)FIX_T0;
  l.end = (uint64_t)(FIX_T0 + 120 * US);
  l.shape = shape;
  l.stream = s;
  l.correlation_id = 4242;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l), 0);
  if (with_api) {
    const struct {
      const char *name;
      uint32_t thread, kind, correlation;
      int64_t start, end;
    } calls[] = {{"cudaLaunchKernel", 100, MPROF_API_RUNTIME, 4242, -3, -1},
                 {"cudaMemcpyAsync", 100, MPROF_API_RUNTIME, 999, 100, 102},
                 {"cuLaunchKernel", 300, MPROF_API_DRIVER, 7, 50, 51}};
    for (size_t i = 0; i < 3; i++) {
      mprof_api_call_record c;
      memset(&c, 0, sizeof c);
      c.start = (uint64_t)(FIX_T0 + calls[i].start * US);
      c.end = (uint64_t)(FIX_T0 + calls[i].end * US);
      c.correlation_id = calls[i].correlation;
      c.thread_id = calls[i].thread + thread_shift;
      c.name = mprof_writer_string(w, calls[i].name);
      c.kind = calls[i].kind;
      assert_int_equal(
          mprof_writer_append(w, NULL, MPROF_SECTION_API_CALLS, &c), 0);
    }
  }
  for (size_t i = 0; i < PLANTED; i++) {
    mprof_range_record r;
    memset(&r, 0, sizeof r);
    r.start = (uint64_t)(FIX_T0 + planted[i].start * US);
    r.end = (uint64_t)(FIX_T0 + planted[i].end * US);
    r.name = mprof_writer_string(w, planted[i].name);
    r.domain = mprof_writer_string(w, i == 5 ? "io" : "");
    r.thread_id = planted[i].thread + thread_shift;
    r.depth = planted[i].depth;
    r.color = planted[i].color;
    r.flags = i == 5 ? MPROF_RANGE_FLAG_OPEN : 0; /* F: open at a cut */
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
  }
  if (with_pm) {
    const char *metrics[2] = {
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
    for (uint32_t c = 0; c < 2; c++)
      tt_pm_metric(w, d, c, metrics[c], "percent", 10 * US);
    for (int i = 0; i < PM_WINDOWS; i++) {
      const float values[2] = {i % 2 ? 90.0f : 10.0f, 50.0f};
      uint64_t start = (uint64_t)(FIX_T0 + i * 10 * US);
      tt_pm_sample(w, d, start, start + 10 * US, 2, values);
    }
  }
  assert_int_equal(mprof_writer_finish(w), 0);
}

static mprof_render_model *open_host(const char *name, int with_pm,
                                     int with_api) {
  char path[1024];
  snprintf(path, sizeof path, "%s", test_path(name));
  write_host_trace(path, with_pm, with_api);
  return open_model(path);
}

/* The rows of @p kind, in order. */
static size_t rows_of(const mprof_render_model *m, uint32_t kind, size_t *idx,
                      size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < mprof_render_row_count(m); i++)
    if (mprof_render_row_at(m, i)->kind == kind) {
      if (n < max)
        idx[n] = i;
      n++;
    }
  return n;
}

/* Whatever the trace: every range in exactly one NVTX row of its thread,
 * no two in a row overlapping, and a range inside another one row deeper
 * than it or more. */
static void check_range_rows(const mprof_render_model *m) {
  size_t n;
  const mprof_range_record *r =
      mprof_trace_ranges(mprof_render_model_trace(m), &n);
  unsigned char *seen = (unsigned char *)calloc(n ? n : 1, 1);
  uint32_t *depth = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
  assert_non_null(seen);
  assert_non_null(depth);
  for (size_t i = 0; i < mprof_render_row_count(m); i++) {
    const mprof_render_row *row = mprof_render_row_at(m, i);
    if (row->kind != MPROF_ROW_RANGES)
      continue;
    /* A thread band above its first row. */
    assert_true(i > 0);
    uint64_t last_end = 0;
    for (size_t j = 0; j < row->count; j++) {
      uint32_t idx = mprof_render_row_item(m, row, j);
      assert_true(idx < n);
      assert_false(seen[idx]);
      seen[idx] = 1;
      depth[idx] = row->depth;
      assert_int_equal(r[idx].thread_id, row->thread_id);
      if (j)
        assert_true(r[idx].start >= last_end);
      last_end = r[idx].end > r[idx].start ? r[idx].end : r[idx].start;
    }
  }
  for (size_t i = 0; i < n; i++) {
    assert_true(seen[i]);
    for (size_t j = 0; j < n; j++)
      if (i != j && r[i].thread_id == r[j].thread_id &&
          r[j].start >= r[i].start && r[j].end <= r[i].end &&
          r[j].end - r[j].start < r[i].end - r[i].start)
        assert_true(depth[j] > depth[i]);
  }
  free(seen);
  free(depth);
}

static void test_nvtx_rows_per_thread_nested(void **state) {
  (void)state;
  mprof_render_model *m = open_host("trace-nvtx.mprof", 0, 0);
  /* Two thread bands; thread 100 has three levels (A; B, D; C), thread
   * 200 two rows (E, and F that overlaps it). Then the GPU. */
  size_t idx[16];
  assert_int_equal(rows_of(m, MPROF_ROW_THREAD, idx, 16), 2);
  assert_int_equal(rows_of(m, MPROF_ROW_RANGES, idx, 16), 5);
  const uint32_t kinds[] = {
      MPROF_ROW_THREAD, MPROF_ROW_RANGES, MPROF_ROW_RANGES,
      MPROF_ROW_RANGES, MPROF_ROW_THREAD, MPROF_ROW_RANGES,
      MPROF_ROW_RANGES, MPROF_ROW_DEVICE, MPROF_ROW_STREAM};
  assert_int_equal(mprof_render_row_count(m), 9);
  for (size_t i = 0; i < 9; i++)
    assert_int_equal(mprof_render_row_at(m, i)->kind, kinds[i]);
  assert_string_equal(mprof_render_row_at(m, 0)->label, "Thread 100");
  assert_int_equal(mprof_render_row_at(m, 2)->count, 2); /* B and D */
  assert_int_equal(mprof_render_row_at(m, 3)->count, 1); /* C */
  assert_int_equal(mprof_render_row_at(m, 3)->depth, 2);
  check_range_rows(m);

  /* E in its own colour (pure green) where it lies; C under the pointer
   * names itself, its level and thread. */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 125 * US;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-nvtx.png");
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 5, &h);
  int ex = (int)mprof_render_time_to_x(&map, FIX_T0 + 8 * US);
  assert_int_equal(fix_pixel(&img, ex, (int)(top + h / 2)), 0x00ff00);
  /* Outside E (at 90 us) the row is not green. */
  int after = (int)mprof_render_time_to_x(&map, FIX_T0 + 90 * US);
  assert_int_not_equal(fix_pixel(&img, after, (int)(top + h / 2)), 0x00ff00);
  fix_free(&img);
  top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 3, &h);
  int cx = (int)mprof_render_time_to_x(&map, FIX_T0 + 25 * US);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, cx, top + h / 2, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_RANGE);
  char text[512];
  assert_true(mprof_render_hit_describe(m, &hit, text, sizeof text) > 0);
  assert_non_null(strstr(text, "C  \u2014  10 us at"));
  assert_non_null(strstr(text, "thread 100, level 3"));
  assert_null(strstr(text, "open at the cut"));
  /* F says its domain, and that it was still open when the capture was
   * cut. */
  top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 6, &h);
  int fx = (int)mprof_render_time_to_x(&map, FIX_T0 + 100 * US);
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, fx, top + h / 2, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_RANGE);
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "domain io"));
  assert_non_null(strstr(text, "still open at the cut (ends there)"));
  mprof_render_model_free(m);
}

static void check_sample_ranges(const char *path) {
  mprof_render_model *m = open_model(path);
  size_t n;
  mprof_trace_ranges(mprof_render_model_trace(m), &n);
  if (n) {
    size_t idx[1];
    assert_true(rows_of(m, MPROF_ROW_RANGES, idx, 1) > 0);
    check_range_rows(m);
  }
  mprof_render_model_free(m);
}

static void test_sample_nvtx_rows(void **state) {
  (void)state;
  /* Every recorded sample with NVTX ranges. */
  fix_each_sample(check_sample_ranges);
}

/* The PyTorch step recorded on the H200 (samples/nvtx_step.mprof, see
 * samples/README.md): the main thread's ranges nest 4 deep (step, forward/
 * backward, block, attention/mlp), the setup range opened before the first
 * CUDA call has its row, and both the main thread and autograd's thread
 * have a CUDA API row whose calls link to launches. */
static void test_pytorch_sample_rows(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/samples/nvtx_step.mprof",
           root && *root ? root : ".");
  mprof_render_model *m = open_model(path);
  size_t idx[16];
  assert_int_equal(rows_of(m, MPROF_ROW_THREAD, idx, 16), 2);
  assert_int_equal(rows_of(m, MPROF_ROW_RANGES, idx, 16), 4);
  assert_int_equal(rows_of(m, MPROF_ROW_API, idx, 16), 2);
  check_range_rows(m);
  size_t n;
  mprof_trace_ranges(mprof_render_model_trace(m), &n);
  assert_int_equal(n, 57);
  mprof_trace_api_calls(mprof_render_model_trace(m), &n);
  assert_int_equal(n, 685);
  mprof_render_model_free(m);
}

static void test_counter_tracks_under_their_gpu(void **state) {
  (void)state;
  mprof_render_model *m = open_host("trace-pm.mprof", 1, 0);
  /* Under the GPU's band, before its stream: SMs active, then DRAM (the
   * two sampled counters, in the tracks' order). */
  size_t idx[16];
  assert_int_equal(rows_of(m, MPROF_ROW_COUNTER, idx, 16), 2);
  const mprof_render_row *sm = mprof_render_row_at(m, idx[0]);
  const mprof_render_row *dram = mprof_render_row_at(m, idx[1]);
  assert_int_equal(mprof_render_row_at(m, idx[0] - 1)->kind, MPROF_ROW_DEVICE);
  assert_int_equal(mprof_render_row_at(m, idx[1] + 1)->kind, MPROF_ROW_STREAM);
  assert_int_equal(sm->counter, MPROF_COUNTER_SM_ACTIVE);
  assert_int_equal(dram->counter, MPROF_COUNTER_DRAM);
  assert_int_equal(dram->column, 0);
  assert_int_equal(dram->count, PM_WINDOWS);
  assert_string_equal(dram->label, "DRAM throughput");

  /* The DRAM track: in an odd (90%) window the area reaches near the top
   * of the row; in an even (10%) window the same height is empty. */
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 125 * US;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-pm.png");
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, idx[1], &h);
  int high = (int)mprof_render_time_to_x(&map, FIX_T0 + 15 * US);
  int low = (int)mprof_render_time_to_x(&map, FIX_T0 + 25 * US);
  /* 70% of the way up the track (drawn over h - 1 px, 100% at 3 px below
   * the top). */
  int y70 = (int)(top + h - 2 - 0.7 * (h - 4));
  int y5 = (int)(top + h - 3);
  uint32_t bg = fix_pixel(&img, (int)MPROF_RENDER_GUTTER + 1, y70);
  (void)bg;
  uint32_t at_high = fix_pixel(&img, high, y70);
  uint32_t at_low = fix_pixel(&img, low, y70);
  assert_int_not_equal(at_high, at_low);
  /* Both windows are filled near the baseline. */
  assert_int_equal(fix_pixel(&img, high, y5), fix_pixel(&img, low, y5));
  assert_int_not_equal(fix_pixel(&img, low, y5), at_low);
  fix_free(&img);
  /* Under the pointer: the window's value as a share of peak. */
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, high, top + h / 2,
                        &hit);
  assert_int_equal(hit.kind, MPROF_HIT_COUNTER);
  assert_true(fabs(hit.value - 90.0) < 1e-3);
  char text[256];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "DRAM throughput 90.0% of peak"));
  assert_non_null(strstr(text, "the 10 us window at +10 us"));
  mprof_render_model_free(m);

  /* The same trace without PM samples: no counter rows. */
  m = open_host("trace-no-pm.mprof", 0, 0);
  assert_int_equal(rows_of(m, MPROF_ROW_COUNTER, idx, 16), 0);
  mprof_render_model_free(m);
}

/* A trace at @p path with one H200 device (*@p d), one stream (*@p s) and
 * kernel FIX_K0 of one shape (*@p shape), for the caller to add to. */
static mprof_writer *write_one_kernel(const char *path, uint32_t *d,
                                      uint32_t *s, uint32_t *shape) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  *d = tt_device(w, 0);
  *s = tt_stream(w, *d, 7);
  *shape = tt_shape(w, tt_kernel(w, FIX_K0, "", *d, 0, 0, 0), 0, 0, 0);
  return w;
}

/* Many ranges narrower than a pixel, zoomed out: each pixel column they
 * cover still shows one (the row skips the rest of a column by search). */
static void test_dense_ranges_fill_their_pixels(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s", test_path("trace-dense.mprof"));
  uint32_t d, s, shape;
  mprof_writer *w = write_one_kernel(path, &d, &s, &shape);
  fix_launch(w, s, shape, 0, 200000);
  mprof_range_record r;
  memset(&r, 0, sizeof r);
  r.name = mprof_writer_string(w, "step");
  r.thread_id = 1;
  r.color = 0xffff0000u; /* pure red */
  for (int i = 0; i < 20000; i++) {
    r.start = (uint64_t)(FIX_T0 + 10 * i);
    r.end = r.start + 5;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_RANGES, &r), 0);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_render_model *m = open_model(path);
  assert_int_equal(mprof_render_row_at(m, 1)->count, 20000);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + 200000;
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 1, &h);
  int y = (int)(top + h / 2);
  size_t red = 0, columns = 0;
  for (int x = (int)MPROF_RENDER_GUTTER + 1; x < W - 1; x++) {
    columns++;
    red += fix_pixel(&img, x, y) == 0xff0000;
  }
  assert_int_equal(red, columns);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* Zoomed out over many PM windows per pixel, a one-window spike still
 * reaches the top of its track (each bucket of windows keeps its
 * highest), and a quiet stretch stays low. */
static void test_counter_spike_survives_zoom_out(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s", test_path("trace-spike.mprof"));
  uint32_t d, s, shape;
  mprof_writer *w = write_one_kernel(path, &d, &s, &shape);
  enum { WINDOWS = 100000, SPIKE = 60000 };
  fix_launch(w, s, shape, 0, (int64_t)WINDOWS * US);
  tt_pm_metric(w, d, 0,
               "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "",
               US);
  for (int i = 0; i < WINDOWS; i++) {
    const float value = i == SPIKE ? 100.0f : 2.0f;
    uint64_t start = (uint64_t)(FIX_T0 + (int64_t)i * US);
    tt_pm_sample(w, d, start, start + US, 1, &value);
  }
  assert_int_equal(mprof_writer_finish(w), 0);
  mprof_render_model *m = open_model(path);
  size_t idx[2];
  assert_int_equal(rows_of(m, MPROF_ROW_COUNTER, idx, 2), 1);
  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.start_ns = FIX_T0;
  v.end_ns = FIX_T0 + (int64_t)WINDOWS * US; /* 100 windows a pixel */
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  double h;
  double top = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, idx[0], &h);
  int xs = (int)mprof_render_time_to_x(&map, FIX_T0 + (int64_t)SPIKE * US);
  int xq = (int)mprof_render_time_to_x(&map, FIX_T0 + 20000 * US);
  int y90 = (int)(top + 1 + (h - 2) - 1 - 0.9 * (h - 2 - 3));
  /* Drawn: neither a row's background nor the time grid. */
  size_t lit = 0, quiet = 0;
  for (int dx = -2; dx <= 2; dx++) {
    uint32_t a = fix_pixel(&img, xs + dx, y90),
             b = fix_pixel(&img, xq + dx, y90);
    lit += a != 0xfbfbfc && a != 0xf3f4f7 && a != 0xe3e5ea;
    quiet += b != 0xfbfbfc && b != 0xf3f4f7 && b != 0xe3e5ea;
  }
  assert_true(lit > 0);
  assert_int_equal(quiet, 0);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* ---- CUDA API calls and their launches ------------------------------- */

static int is_blue(uint32_t c) { return near(c, 0x3d7cf0, 60); }
static int is_dark(uint32_t c) { return near(c, 0x3b3f47, 50); }

/* Pixels of @p want in the 7x7 square around (@p x, @p y). */
static size_t around(const fix_image *img, int x, int y,
                     int (*want)(uint32_t)) {
  return count_in(img, x - 3, y - 3, x + 4, y + 4, want);
}

static void test_api_rows_link_calls_to_launches(void **state) {
  (void)state;
  mprof_render_model *m = open_host("trace-api.mprof", 0, 1);
  /* Thread 100: NVTX levels, then its CUDA API row; thread 200: NVTX;
   * thread 300: API calls only. */
  const uint32_t kinds[] = {
      MPROF_ROW_THREAD, MPROF_ROW_RANGES, MPROF_ROW_RANGES, MPROF_ROW_RANGES,
      MPROF_ROW_API,    MPROF_ROW_THREAD, MPROF_ROW_RANGES, MPROF_ROW_RANGES,
      MPROF_ROW_THREAD, MPROF_ROW_API,    MPROF_ROW_DEVICE, MPROF_ROW_STREAM};
  assert_int_equal(mprof_render_row_count(m), 12);
  for (size_t i = 0; i < 12; i++)
    assert_int_equal(mprof_render_row_at(m, i)->kind, kinds[i]);
  assert_string_equal(mprof_render_row_at(m, 8)->label, "Thread 300");
  assert_int_equal(mprof_render_row_at(m, 4)->count, 2);
  /* The call that issued the launch, and back; the memcpy call issued no
   * launch of this trace. */
  assert_int_equal(mprof_render_launch_api_call(m, 0), 0);
  assert_int_equal(mprof_render_api_call_launch(m, 0), 0);
  assert_int_equal(mprof_render_api_call_launch(m, 1), -1);

  mprof_render_view v;
  mprof_render_view_init(&v, m);
  v.kernel = -1;
  v.start_ns = FIX_T0 - 5 * US;
  v.end_ns = FIX_T0 + 20 * US;
  mprof_render_timemap map;
  mprof_render_trace_timemap(&map, &v, W);
  double ah, lh;
  double at = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 4, &ah);
  double lt = MPROF_RENDER_RULER + mprof_render_row_top(m, &v, 11, &lh);
  double xa = mprof_render_time_to_x(&map, FIX_T0 - 2 * US);
  double xl = mprof_render_time_to_x(&map, FIX_T0);
  /* Under the pointer: the call, naming the kernel it launched. */
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, MPROF_RENDER_TRACE, W, H, xa, at + ah / 2, &hit);
  assert_int_equal(hit.kind, MPROF_HIT_API);
  assert_int_equal(hit.item, 0);
  assert_int_equal(hit.launch, 0);
  assert_int_equal(hit.kernel, 0);
  char text[512];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  assert_non_null(strstr(text, "cudaLaunchKernel  \u2014  2 us at -3 us"));
  assert_non_null(strstr(text, "thread 100, runtime API"));
  assert_non_null(strstr(text, "launched membound (correlation 4242)"));

  /* No launch selected or hovered: no arrow halfway between the call and
   * its launch. Selected: a blue one; hovered: a dark one. */
  int mx = (int)((xa + xl) / 2), my = (int)((at + ah - 2 + lt + 2) / 2);
  fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_int_equal(around(&img, mx, my, is_blue), 0);
  assert_int_equal(around(&img, mx, my, is_dark), 0);
  fix_free(&img);
  v.launch = 0;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  fix_save(&img, "trace-api.png");
  assert_true(around(&img, mx, my, is_blue) > 0);
  fix_free(&img);
  v.launch = -1;
  v.hover_launch = 0;
  img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
  assert_true(around(&img, mx, my, is_dark) > 0);
  assert_int_equal(around(&img, mx, my, is_blue), 0);
  fix_free(&img);
  mprof_render_model_free(m);
}

/* A set of two processes, each numbering its correlation ids from its own
 * start: once merged, each launch still leads to its own process's call. */
static void test_set_keeps_calls_with_their_launches(void **state) {
  (void)state;
  char a[1024], b[1024], merged[1024];
  snprintf(a, sizeof a, "%s", test_path("set-a.mprof"));
  snprintf(b, sizeof b, "%s", test_path("set-b.mprof"));
  snprintf(merged, sizeof merged, "%s", test_path("set.mprof"));
  process_pid = "11";
  process_host = "node1";
  write_host_trace(a, 0, 1);
  process_pid = "22";
  process_host = "node0";
  thread_shift = 1000;
  write_host_trace(b, 0, 1);
  process_pid = process_host = NULL;
  thread_shift = 0;
  mprof_trace *t[2];
  assert_int_equal(mprof_trace_open(&t[0], a, NULL), 0);
  assert_int_equal(mprof_trace_open(&t[1], b, NULL), 0);
  assert_int_equal(mprof_trace_merge((const mprof_trace *const *)t, 2, merged),
                   0);
  mprof_trace_free(t[0]);
  mprof_trace_free(t[1]);
  mprof_render_model *m = open_model(merged);
  size_t n, calls;
  const mprof_launch_record *l =
      mprof_trace_launches(mprof_render_model_trace(m), &n);
  const mprof_api_call_record *c =
      mprof_trace_api_calls(mprof_render_model_trace(m), &calls);
  assert_int_equal(n, 2);
  assert_int_equal(calls, 6);
  assert_int_not_equal(l[0].correlation_id, l[1].correlation_id);
  int64_t first = mprof_render_launch_api_call(m, 0);
  int64_t second = mprof_render_launch_api_call(m, 1);
  assert_true(first >= 0 && first < 3);   /* the first process's call */
  assert_true(second >= 3 && second < 6); /* the second's */
  assert_string_equal(
      mprof_trace_string(mprof_render_model_trace(m), c[second].name),
      "cudaLaunchKernel");
  assert_int_equal(mprof_render_api_call_launch(m, (size_t)second), 1);
  /* Host threads by host, then process, like the GPUs: node0's thread
   * 1100 (it launched on process 22's GPU) first, then node1's 100; the
   * threads whose process the trace cannot tell (NVTX only, or calls
   * that launched nothing) after them. */
  size_t idx[16];
  assert_int_equal(rows_of(m, MPROF_ROW_THREAD, idx, 16), 6);
  assert_string_equal(mprof_render_row_at(m, idx[0])->label,
                      "Thread 1100  \u00b7 pid 22 on node0");
  assert_string_equal(mprof_render_row_at(m, idx[1])->label,
                      "Thread 100  \u00b7 pid 11 on node1");
  assert_string_equal(mprof_render_row_at(m, idx[2])->label, "Thread 200");
  size_t dev[4];
  assert_int_equal(rows_of(m, MPROF_ROW_DEVICE, dev, 4), 2);
  assert_non_null(strstr(mprof_render_row_at(m, dev[0])->label, "pid 22"));
  mprof_render_model_free(m);
}

/* Every sample with PM samples: a counter row per sampled counter under
 * each sampled GPU, holding all of that GPU's windows. */
static size_t samples_with_counters;

static void check_sample_counters(const char *path) {
  mprof_render_model *m = open_model(path);
  const mprof_trace *t = mprof_render_model_trace(m);
  size_t n, devices;
  const mprof_pm_sample_record *pm = mprof_trace_pm_samples(t, &n);
  mprof_trace_devices(t, &devices);
  if (n) {
    samples_with_counters++;
    size_t idx[1];
    assert_true(rows_of(m, MPROF_ROW_COUNTER, idx, 1) > 0);
    for (size_t i = 0; i < mprof_render_row_count(m); i++) {
      const mprof_render_row *row = mprof_render_row_at(m, i);
      if (row->kind != MPROF_ROW_COUNTER)
        continue;
      size_t windows = 0;
      for (size_t j = 0; j < n; j++)
        windows += pm[j].device == row->device && pm[j].end >= pm[j].start;
      assert_int_equal(row->count, windows);
      assert_true(row->column >= 0 && row->column < MPROF_PM_MAX_METRICS);
      /* Under its GPU's band: only counter rows between them. */
      size_t up = i;
      while (up > 0 &&
             mprof_render_row_at(m, up - 1)->kind == MPROF_ROW_COUNTER)
        up--;
      assert_true(up > 0);
      assert_int_equal(mprof_render_row_at(m, up - 1)->kind, MPROF_ROW_DEVICE);
      assert_int_equal(mprof_render_row_at(m, up - 1)->device, row->device);
    }
    /* Drawn at the whole-trace view without failing. */
    mprof_render_view v;
    mprof_render_view_init(&v, m);
    fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
    fix_free(&img);
  }
  mprof_render_model_free(m);
}

static void test_sample_counter_tracks(void **state) {
  (void)state;
  /* samples/gemm_pm.mprof holds PM samples (tests/gpu/trace_tab.sh
   * records another and runs this over it). */
  fix_each_sample(check_sample_counters);
  if (!samples_with_counters)
    fail_msg("no sample with PM counters in samples/");
}

/* ---- the capture window ------------------------------------------------ */

/* Ten launches 1 ms apart; the trace was recorded in a window from 3.5 ms
 * to 6.5 ms after the first (@p open: still open when cut). */
static void write_window_trace(const char *path, int open) {
  mprof_writer *w;
  assert_int_equal(mprof_writer_open(&w, path, NULL), 0);
  uint32_t d = tt_h200(w, 0, 132, 0);
  mprof_stream_record st = {d, 1, 7, 0};
  uint32_t s, k, shape;
  assert_int_equal(mprof_writer_intern(w, &s, MPROF_SECTION_STREAMS, &st), 0);
  mprof_kernel_record kr;
  memset(&kr, 0, sizeof kr);
  kr.mangled_name = mprof_writer_string(w, FIX_K0);
  kr.function_index = MPROF_INDEX_NONE;
  kr.device = d;
  assert_int_equal(mprof_writer_intern(w, &k, MPROF_SECTION_KERNELS, &kr), 0);
  mprof_shape_record sh;
  memset(&sh, 0, sizeof sh);
  sh.kernel = k;
  sh.grid[0] = sh.grid[1] = sh.grid[2] = 1;
  sh.block[0] = 128;
  sh.block[1] = sh.block[2] = 1;
  assert_int_equal(mprof_writer_intern(w, &shape, MPROF_SECTION_SHAPES, &sh),
                   0);
  for (int i = 0; i < 10; i++) {
    mprof_launch_record l;
    memset(&l, 0, sizeof l);
    l.start = (uint64_t)(FIX_T0 + i * 1000 * US);
    l.end = l.start + 200 * US;
    l.shape = shape;
    l.stream = s;
    l.correlation_id = (uint32_t)i + 1;
    assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_LAUNCHES, &l),
                     0);
  }
  mprof_process_record p;
  memset(&p, 0, sizeof p);
  p.pid = 7;
  p.rank = p.local_rank = MPROF_INDEX_NONE;
  p.stream_count = p.device_count = 1;
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &p),
                   0);
  mprof_capture_record c;
  memset(&c, 0, sizeof c);
  c.start = (uint64_t)(FIX_T0 + 3500 * US);
  c.end = open ? 0 : (uint64_t)(FIX_T0 + 6500 * US);
  c.trigger = MPROF_CAPTURE_NVTX;
  c.recorded = 3;
  c.pieces = 3;
  c.end_reason = open ? MPROF_CAPTURE_END_OPEN : MPROF_CAPTURE_END_RANGE_COUNT;
  c.spec = mprof_writer_string(w, "nvtx:step");
  assert_int_equal(mprof_writer_append(w, NULL, MPROF_SECTION_CAPTURE, &c), 0);
  assert_int_equal(mprof_writer_finish(w), 0);
}

static int is_window_green(uint32_t c) { return near(c, 0x2e9e5b, 30); }

/* The window the trace was recorded in is a green band along the top of
 * the ruler, over its time only (to the view's end while still open). */
static void test_capture_window_on_the_ruler(void **state) {
  (void)state;
  for (int open = 0; open < 2; open++) {
    char path[4096];
    snprintf(
        path, sizeof path, "%s",
        test_path(open ? "trace-window-open.mprof" : "trace-window.mprof"));
    write_window_trace(path, open);
    mprof_render_model *m = open_model(path);
    mprof_render_view v;
    mprof_render_view_init(&v, m);
    mprof_render_timemap map;
    mprof_render_trace_timemap(&map, &v, W);
    fix_image img = fix_draw(m, &v, MPROF_RENDER_TRACE, W, H);
    int inside = (int)mprof_render_time_to_x(&map, FIX_T0 + 5000 * US);
    int before = (int)mprof_render_time_to_x(&map, FIX_T0 + 3000 * US);
    int after = (int)mprof_render_time_to_x(&map, FIX_T0 + 7500 * US);
    assert_true(is_window_green(fix_pixel(&img, inside, 1)));
    assert_false(is_window_green(fix_pixel(&img, before, 1)));
    assert_int_equal(is_window_green(fix_pixel(&img, after, 1)), open);
    /* Only the band: the rows keep their colours. */
    assert_false(is_window_green(fix_pixel(&img, inside, 8)));
    fix_free(&img);
    mprof_render_model_free(m);
    unlink(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_samples_open_on_their_gpu_activity),
      cmocka_unit_test(test_transformer_opens_on_its_kernels),
      cmocka_unit_test(test_labels_tell_kernels_apart),
      cmocka_unit_test(test_names_drawn_inside_launches),
      cmocka_unit_test(test_search_dims_what_it_does_not_match),
      cmocka_unit_test(test_rows_fold_and_hide),
      cmocka_unit_test(test_copies_say_kind_size_and_bandwidth),
      cmocka_unit_test(test_sample_copies_are_labelled),
      cmocka_unit_test(test_selection_lists_its_kernels),
      cmocka_unit_test(test_selection_panel_lists_every_kernel),
      cmocka_unit_test(test_nvtx_rows_per_thread_nested),
      cmocka_unit_test(test_sample_nvtx_rows),
      cmocka_unit_test(test_pytorch_sample_rows),
      cmocka_unit_test(test_counter_tracks_under_their_gpu),
      cmocka_unit_test(test_sample_counter_tracks),
      cmocka_unit_test(test_dense_ranges_fill_their_pixels),
      cmocka_unit_test(test_counter_spike_survives_zoom_out),
      cmocka_unit_test(test_api_rows_link_calls_to_launches),
      cmocka_unit_test(test_set_keeps_calls_with_their_launches),
      cmocka_unit_test(test_capture_window_on_the_ruler),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  mprof_render_shutdown();
  fix_cleanup();
  return failed;
}
