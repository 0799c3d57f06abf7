/*
 * mprof-render — what the views share and the model's insides. Never
 * installed; only files of mprof-render include it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_INTERNAL_H
#define MPROF_RENDER_INTERNAL_H

#include <stdarg.h>

#include "mprof-render/render.h"

#include <mprof/mkprof.h>

#include <mprof/diagnose.h>
#include <mprof/names.h>
#include <mprof/join.h>
#include <mprof/lines.h>
#include <mprof/sources.h>
#include <mprof/throughput.h>

/* In a qsort comparator of records x and y: order by field @p f where
 * they differ. */
#define RS_ORDER_BY(f)                                                         \
  if (x->f != y->f)                                                            \
  return x->f < y->f ? -1 : 1

/* Set @p out to the first index in [@p lo, @p hi) at which @p before, an
 * expression of the index @p mid, is false, or to @p hi: the lower bound
 * of a key in a range sorted by it, `before` saying that item @p mid
 * sorts before the key. libmprof's MPROF__LOWER_BOUND over a range (the
 * renderer sees libmprof's public headers only). */
#define RS_LOWER_BOUND(out, lo, hi, mid, before)                               \
  do {                                                                         \
    size_t lo_ = (lo), hi_ = (hi);                                             \
    while (lo_ < hi_) {                                                        \
      size_t mid = lo_ + (hi_ - lo_) / 2;                                      \
      if (before)                                                              \
        lo_ = mid + 1;                                                         \
      else                                                                     \
        hi_ = mid;                                                             \
    }                                                                          \
    (out) = lo_;                                                               \
  } while (0)

/* RS_LOWER_BOUND(), galloping from @p lo (probes 1, 2, 4... items on,
 * then a search between the last two): for an answer usually near @p lo,
 * as when the next search starts where the last one ended. */
#define RS_GALLOP(out, lo, hi, mid, before)                                    \
  do {                                                                         \
    size_t at_ = (lo), end_ = (hi), step_ = 1;                                 \
    while (at_ < end_) {                                                       \
      size_t mid = at_ + step_ - 1 < end_ ? at_ + step_ - 1 : end_ - 1;        \
      if (!(before)) {                                                         \
        end_ = mid;                                                            \
        break;                                                                 \
      }                                                                        \
      at_ = mid + 1;                                                           \
      step_ *= 2;                                                              \
    }                                                                          \
    RS_LOWER_BOUND(out, at_, end_, mid, before);                               \
  } while (0)

/* ---- activity spans (spans.c) ------------------------------------------ */

/* The most SMs a device may have: the reader refuses a DEVICES sm_count
 * above it, and the span views draw at most this many rows for a device. */
#define RS_SM_MAX MPROF_DEVICE_SM_MAX
/* The most SM rows the span views add beyond the SMs that spans name: the
 * idle SMs of every group at open, the SMs of one projected frame (64 GPUs
 * of RS_SM_MAX SMs). Past it, groups show only the SMs their spans name
 * (the least of the kernels come last), so that a small file of many
 * kernels on many devices never builds millions of rows. */
#define RS_SM_ROWS_MAX (64u * RS_SM_MAX)

/* Mega's rows of an SM band, top to bottom. */
enum { RS_SEPARATOR, RS_LOADER, RS_CONSUMER, RS_STORER, RS_OTHER, RS_ROWS };

/* One row of lanes: spans sorted by (lane, start); lane l holds
 * [first + lane_first[l], first + lane_first[l + 1]). No two spans of a
 * lane overlap, so their ends ascend too. */
typedef struct rs_lanes {
  size_t first; /* into the owner's row arrays */
  size_t count;
  uint32_t lanes;
  size_t lane_at; /* into the owner's lane_first: lanes + 1 offsets */
} rs_lanes;

typedef struct rs_sm {
  uint32_t device; /* index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t gpu;    /* rank of the device among the group's: its tint */
  uint32_t sm;
  size_t first, count; /* into the group's all_* arrays */
  rs_lanes rows[RS_ROWS];
  uint64_t busy_ns; /* the union of its spans */
  int64_t first_start, last_end;
} rs_sm;

/* The spans of the kernels of one name (on every device), or of no
 * launch: what Mega, Density and Activity show for a selected kernel. */
typedef struct rs_group {
  const char *mangled; /* NULL: spans of no launch */
  size_t span_count;
  int64_t start_ns, end_ns;
  size_t sm_count;
  rs_sm *sms;
  uint32_t gpu_count;
  int role_rows;        /* 0: every span in the consumer row */
  int has_row[RS_ROWS]; /* rows with spans */
  /* Every span of an SM by start, with the running maximum of ends. */
  uint32_t *all_idx;
  int64_t *all_start, *all_max_end;
  /* Mega rows. */
  uint32_t *row_idx;
  int64_t *row_start, *row_end;
  size_t *lane_first;
} rs_group;

/* Density's fine buckets of one group: per SM, `buckets` over the group's
 * [start_ns, end_ns), the share of each its spans cover. Built for the
 * group on screen when first drawn (the model keeps the last one), so
 * that a trace of many kernels never holds them all. */
typedef struct rs_density {
  int group;      /* -1: none built */
  size_t buckets; /* 0: none (no extent, or out of memory) */
  double bucket_ns;
  float *busy; /* sm_count x buckets */
} rs_density;

/* Activity rows of one group at one depth. */
typedef struct rs_activity_row {
  uint32_t device, sm;
  uint32_t gpu; /* rank of the device among the group's: tint and label */
  uint32_t launch, block, warp; /* NONE when rows are per SM (per block) */
  rs_lanes lanes;
  uint64_t spans;
  size_t first; /* its spans by start in the level's all_* arrays */
} rs_activity_row;

typedef struct rs_activity_level {
  size_t row_count;
  rs_activity_row *rows;
  uint32_t *idx;
  int64_t *start, *end;
  size_t *lane_first;
  /* Every span of a row by start with the running maximum of the ends:
   * one bar per row when its sub-lanes do not fit. */
  uint32_t *all_idx;
  int64_t *all_start, *all_max_end;
  double median_ns; /* of its spans: auto depth opens phases by it */
} rs_activity_level;

typedef struct rs_activity {
  int group, rows;
  rs_activity_level level[2]; /* phases (outermost), instructions (leaves) */
} rs_activity;

/* Launches of one kernel by start, with the running maximum of ends
 * (projected views). */
typedef struct rs_launch_track {
  size_t count;
  const uint32_t *idx; /* into LAUNCHES */
  const int64_t *start, *max_end;
  void *storage; /* the three arrays above, one block, built on first use */
  int built;     /* 1 built, -1 out of memory */
} rs_launch_track;

struct mprof_render_model {
  mprof_trace *trace;
  mprof_sidecar *sidecar;
  char note[4608];
  char sidecar_problem[1024]; /* the damaged sidecar left out, or "" */
  int64_t start_ns, end_ns;

  /* libmprof's analysis, built once at open: the kernels are the join's,
   * index for index, and each has its diagnosis. */
  mprof_join *join;
  mprof_diagnosis *diagnosis;

  size_t kernel_count;
  mprof_render_kernel *kernels;
  char **owned_names;   /* demangled names, one per kernel (or NULL) */
  uint32_t *name_first; /* per kernel: the first kernel of its mangled name */

  size_t reason_count;
  mprof_render_reason *reasons; /* the join's, index for index */

  size_t row_count;
  mprof_render_row *rows;
  char **row_labels;

  /* Memops per stream, by start: stream s owns
   * memop_order[memop_first[s] .. memop_first[s + 1]); the copies of no
   * stream (MEMOPS stream NONE) are slot `streams`, after the last. */
  size_t memop_slots; /* streams + 1 */
  size_t *memop_first;
  uint32_t *memop_order;
  int64_t *memop_longest; /* per slot, ns (of rs_clamp_ns times) */

  /* Host and counter tracks (tracks.c). */
  int64_t process_start_ns; /* the clock anchor; 0 unknown */
  uint32_t *range_order;    /* RANGES by thread, lane, start */
  uint32_t *pm_order;       /* PM_SAMPLES by device, then start */
  size_t *pm_first;         /* device d owns pm_order[pm_first[d]..[d + 1]) */
  /* The end of each item in the order above (range_order, api_order,
   * pm_order): a row's ends ascend, and a search over them touches one
   * contiguous array instead of the records. */
  int64_t *range_end, *api_end, *pm_end;
  /* Zoomed out: per RS_PM_BUCKET consecutive windows of a device, their
   * time and the highest value of each column (NaN: none measured);
   * device d owns buckets [pm_bucket_first[d], pm_bucket_first[d + 1]). */
  size_t *pm_bucket_first;
  int64_t *pm_bucket_start, *pm_bucket_end;
  float *pm_bucket_max; /* buckets x MPROF_PM_MAX_METRICS */
  uint32_t *api_order;  /* API_CALLS by thread, lane, start */
  size_t api_count, launch_count;
  uint32_t *api_by_corr, *api_corr;       /* calls by correlation id */
  uint32_t *launch_by_corr, *launch_corr; /* launches by correlation id */
  uint32_t *api_row;                      /* per API call: its Trace row */
  uint32_t *stream_row; /* per stream: its Trace row, or NONE */

  /* Storage behind the kernels' pcs and hot arrays. */
  mprof_render_pc *pc_storage;
  uint32_t *hot_storage;

  /* Spans (spans.c). */
  int demo;               /* mprof_render_model_open_demo() */
  mprof_mkprof *mkprof;   /* the .mkprof it came from, for its params */
  size_t span_total;      /* SPANS records */
  uint32_t *region_color; /* per REGIONS record, 0xRRGGBB */
  uint32_t *region_role;  /* per REGIONS record, mprof_region_role */
  size_t region_count;
  size_t group_count;
  rs_group *groups;
  size_t idle_sm_budget;    /* of RS_SM_ROWS_MAX, what groups have not used */
  int32_t *kernel_group;    /* kernel -> group, -1 */
  int32_t none_group;       /* the group of spans of no launch, -1 */
  unsigned char *span_nest; /* per span: 1 outermost, 2 innermost */
  struct rs_activity_cache *activity_cache; /* Activity rows (activity.c) */
  struct rs_source_cache *source_cache;     /* Source tab (source_lines.c) */
  rs_density *density; /* Density's buckets of the last group drawn */
  /* Per kernel, its launches by start: built when a view first asks
   * (mprof_render__launch_track), not at open, so that a trace of ten
   * million launches opens without sorting and copying all of them. */
  rs_launch_track *launch_tracks;
};

/* ---- errors ------------------------------------------------------------- */

int mprof_render__fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* mprof_render__fail("out of memory"): -1. */
int mprof_render__oom(void);

/* ---- drawing helpers (paint.c) ----------------------------------------- */

#define RD_FONT_SANS "DejaVu Sans"
#define RD_FONT_MONO "DejaVu Sans Mono"

#define RD_BACKGROUND 0xfbfbfcu
#define RD_TEXT 0x1d1f24u
#define RD_TEXT_DIM 0x6a6f7au
#define RD_RULE 0xd5d8deu
#define RD_PANEL 0xf0f1f4u
#define RD_SELECTION 0x3d7cf0u

#define RD_NOTE 0xd98e04u /* the mark beside a trace-wide note */
#define RD_SOL 0x4a7fb5u  /* a speed-of-light bar's measured part */

void rd_rgb(cairo_t *cr, uint32_t rgb);
void rd_rgba(cairo_t *cr, uint32_t rgb, double alpha);
/* @p rgb mixed with white by @p amount (0 = unchanged, 1 = white). */
uint32_t rd_lighten(uint32_t rgb, double amount);
uint32_t rd_darken(uint32_t rgb, double amount);
void rd_font(cairo_t *cr, double size, int bold, int mono);
double rd_text_width(cairo_t *cr, const char *text);
/* Text that is not valid UTF-8 (a trace's strings are what its writer made
 * them) is drawn with U+FFFD for each bad byte; rd_utf8_repair() puts '?'
 * there in place, for text handed to others (tooltips). */
void rd_utf8_repair(char *text);
/* Draw @p text with its baseline at @p y; returns its width. On a surface
 * marked by rd_svg_text_begin() the text is kept as text (see there). */
double rd_text(cairo_t *cr, double x, double y, const char *text);
/* Mark Cairo SVG surface @p svg: text drawn on it (rd_text) is kept as
 * text, not glyph outlines. Then rd_svg_text_finish() copies the SVG Cairo
 * wrote (@p in, @p size bytes) to @p out with a <text> element in place
 * of each text's marker. 0, or -1 with the error set. */
int rd_svg_text_begin(cairo_surface_t *svg);
int rd_svg_text_finish(cairo_surface_t *svg, const char *in, size_t size,
                       FILE *out);
/* Draw kernel @p k's short name cut in the middle to fit @p max_width,
 * never through the part that tells it from the trace's other kernels
 * (mprof_name_set_fit); returns the width drawn. */
/* A kernel label inside a Trace bar shows at least this many characters
 * (the ellipsis counted), or none. */
#define RD_LABEL_MIN_CHARS 4
/* What rd_kernel_fit() draws, into @p buf ("" when nothing fits). */
void rd_kernel_fit_text(cairo_t *cr, double max_width,
                        const mprof_render_kernel *k, char *buf, size_t size);
double rd_kernel_fit(cairo_t *cr, double x, double y, double max_width,
                     const mprof_render_kernel *k);
/* Draw a name (a source location, a range) cut in the middle to fit
 * @p max_width (mprof_name_middle), so its end (":line") stays. */
double rd_name_fit(cairo_t *cr, double x, double y, double max_width,
                   const char *text);
/* Draw @p text cut with an ellipsis to fit @p max_width; returns the width
 * drawn (0 when nothing fits). */
double rd_text_fit(cairo_t *cr, double x, double y, double max_width,
                   const char *text);
double rd_text_right(cairo_t *cr, double right, double y, const char *text);
/* Draw @p text wrapped at spaces to @p max_width, first baseline at @p y,
 * lines @p line_height apart; returns the number of lines. */
int rd_text_wrap(cairo_t *cr, double x, double y, double max_width,
                 double line_height, const char *text);
void rd_fill_rect(cairo_t *cr, double x, double y, double w, double h,
                  uint32_t rgb);
void rd_hline(cairo_t *cr, double x0, double x1, double y, uint32_t rgb);
void rd_vline(cairo_t *cr, double x, double y0, double y1, uint32_t rgb);
/* "HtoD", "DtoH", ..., "memcpy" of an unknown direction, "memset". */
const char *rd_copy_kind_name(const mprof_memop_record *mo);
/* "@P0 LDG.E.128 R4, [R2.64]" */
void rd_format_sass(char *buf, size_t size, const mprof_sass_instruction *in);
/* "file.cu:42" (base name), "" when unknown. */
void rd_format_line(char *buf, size_t size, const mprof_sass_instruction *in);
/* A kernel-less panel: "Select a kernel..." */
void rd_no_kernel(cairo_t *cr, double width, double height);
/* The page of a panel of PC samples without any: no kernel selected, or
 * one without samples. 1 when it drew that page. */
int rd_no_samples(cairo_t *cr, const mprof_render_kernel *k, double width,
                  double height);

/* ---- kernels and samples per stall reason (model.c) ------------------ */

/* The kernel of a view or a hit (-1: none), or NULL. */
const mprof_render_kernel *rs_kernel(const mprof_render_model *m, int kernel);

/* The samples of reason @p reason (an index into the model's table) in
 * @p list, the join's reasons of an instruction or of a whole kernel. */
uint64_t mprof_render__reason_samples(const mprof_reason_samples *list,
                                      size_t n, size_t reason);

/* The first @p max plain reasons of @p list (the join's, largest first):
 * their indices into the model's table in @p idx, samples in @p values.
 * Returns how many. */
size_t mprof_render__top_reasons(const mprof_render_model *m,
                                 const mprof_reason_samples *list, size_t n,
                                 size_t *idx, uint64_t *values, size_t max);
/* "long_scoreboard 62%, wait 20%": the first @p max (8 at most) plain
 * reasons of instruction @p pc with their share of its samples. */
void mprof_render__pc_reasons(const mprof_render_model *m,
                              const mprof_render_pc *pc, size_t max, char *buf,
                              size_t size);

/* ---- time and ticks (timemap.c) --------------------------------------- */

#define MPROF_RENDER_TICK_PX 110.0 /* the least room between two ticks */

/* The latest time the renderer takes from a record: a later one (a
 * corrupt end near 2^64, say) is drawn there. 2^62 ns is 146 years after
 * the UNIX epoch, which every trace clock counts from or after; below it,
 * a sum or difference of two record times, or of one and a view's margin,
 * never overflows. */
#define RS_TIME_MAX ((int64_t)1 << 62)
/* A record's time (uint64 ns) as int64, RS_TIME_MAX beyond it. */
int64_t rs_clamp_ns(uint64_t t);
/* A record's end as rs_clamp_ns(), never before its start. */
int64_t rs_clamp_end(uint64_t start, uint64_t end);
/* @p a - @p b and @p a + @p b, held at INT64_MIN / INT64_MAX instead of
 * overflowing: for times of a view, which a caller may set anywhere. */
int64_t rs_sub_ns(int64_t a, int64_t b);
int64_t rs_add_ns(int64_t a, int64_t b);
/* Halfway from @p a to @p b, without overflow. */
int64_t rs_mid_ns(int64_t a, int64_t b);
/* @p ns (a double) as int64, held inside the int64 range (0 for NaN). */
int64_t rs_ns_of(double ns);
/* @p x as an int pixel, held to [-2^30, 2^30] (far off any surface): a
 * time far outside the view maps to a huge x. */
int rs_px(double x);
/* The first tick at or after the left edge of @p map: a multiple of
 * @p step after @p origin (an offset from it). */
int64_t mprof_render__first_tick(const mprof_render_timemap *map,
                                 int64_t origin, int64_t step);
/* The ticks every @p step after @p origin inside @p map, left to right:
 * their offsets from @p origin (when @p offsets) and whole-pixel x; at most
 * @p max. */
size_t mprof_render__ticks(const mprof_render_timemap *map, int64_t origin,
                           int64_t step, int64_t *offsets, int *xs, size_t max);
/* The x of the ticks at the usual spacing: the grid of a timeline. */
size_t mprof_render__tick_xs(const mprof_render_timemap *map, int64_t origin,
                             int *xs, size_t max);

/* ---- Trace rows (rows.c) ---------------------------------------------- */

int mprof_render__build_rows(mprof_render_model *m);
/* The copies of stream @p stream (MPROF_INDEX_NONE: of no stream), by
 * start: memop_order[*first, *last); returns the longest one's ns. */
int64_t rs_stream_memops(const mprof_render_model *m, uint32_t stream,
                         size_t *first, size_t *last);

/* ---- host and counter tracks (tracks.c) ------------------------------- */

/* The ranges of one thread at one depth: range_order[first, first+count). */
typedef struct rs_range_run {
  uint32_t thread_id, depth;
  size_t first, count;
} rs_range_run;

/* Lay out the NVTX ranges (m->range_order) and list their rows; *runs is
 * the caller's to free. */
int mprof_render__build_ranges(mprof_render_model *m, rs_range_run **runs,
                               size_t *run_count);
/* Lay out the CUDA API calls (m->api_order) and list their rows; index
 * calls and launches by correlation id. */
int mprof_render__build_api(mprof_render_model *m, rs_range_run **runs,
                            size_t *run_count);
/* The PM samples by device and start (m->pm_order). */
int mprof_render__build_counters(mprof_render_model *m);
#define RS_TRACK_COUNTERS 8
#define RS_PM_BUCKET 64
extern const uint32_t rs_track_counters[RS_TRACK_COUNTERS];

/* ---- spans (spans.c) ------------------------------------------------- */

int mprof_render__build_spans(mprof_render_model *m);
/* The first index in [lo, n) whose @p max_end (ascending) is after @p t,
 * galloping from @p lo: the next answer is usually near the last. */
size_t rs_first_ending_after(const int64_t *max_end, size_t lo, size_t n,
                             int64_t t);
void mprof_render__free_spans(mprof_render_model *m);

/* Greedy sub-lanes, built a row at a time: the spans put in tmp_* (by
 * start) go to lanes by lb_place(), stored by (lane, start) at @p at of the
 * destination arrays; the pool grows by lanes + 1 offsets a row. */
typedef struct lane_builder {
  int64_t *tmp_start, *tmp_end;
  uint32_t *tmp_idx, *tmp_lane;
  size_t cap;
  size_t *pool;
  size_t pool_used, pool_cap;
} lane_builder;
int lb_reserve(lane_builder *lb, size_t n);
int lb_place(lane_builder *lb, size_t n, rs_lanes *out, size_t at,
             uint32_t *dst_idx, int64_t *dst_start, int64_t *dst_end);
void lb_free(lane_builder *lb);

/* Fill @p d (zeroed) with the Density buckets of group @p group. */
int mprof_render__build_density(const mprof_render_model *m, int group,
                                rs_density *d);

/* ---- Activity rows (activity.c) ----------------------------------------- */

/* The cache behind mprof_render__activity(): the last rows built. */
typedef struct rs_activity_cache {
  rs_activity *last;
} rs_activity_cache;

/* Nesting of every span (m->span_nest), once at open. */
int mprof_render__build_nesting(mprof_render_model *m);
void mprof_render__free_activity(mprof_render_model *m);
/* The group Mega, Density and Activity show for @p kernel (-1: the spans
 * of no launch), or NULL. */
const rs_group *mprof_render__group(const mprof_render_model *m, int kernel);
/* Where a span tab's time axis and tooltips count from: the kernel's first
 * span, else (projected) its first launch, else the trace's start. */
int64_t rs_span_origin(const mprof_render_model *m, int kernel);
/* The launches of @p kernel by start; NULL when it has none. */
const rs_launch_track *mprof_render__launch_track(const mprof_render_model *m,
                                                  int kernel);
/* The Density buckets of group @p group: built on first use, kept until
 * another group's are asked for; NULL out of memory. */
const rs_density *mprof_render__density(const mprof_render_model *m, int group);
/* The Activity rows of @p group by @p rows (mprof_render_activity_rows). */
const rs_activity *mprof_render__activity(const mprof_render_model *m,
                                          int group, int rows);
uint32_t rs_region_color(const mprof_render_model *m, uint32_t region);
uint32_t rs_region_role(const mprof_render_model *m, uint32_t region);
/* The device (index into DEVICES) of launch @p launch, or NONE. */
uint32_t rs_launch_device(const mprof_render_model *m, uint32_t launch);

/* ---- views ---------------------------------------------------------- */

/* What a tab does (draw.c dispatches through these): draw, hit-test
 * (NULL: nothing to hit) and the height of its content at the view's row
 * height (NULL or 0: it fits the view). A span view (Mega, Density,
 * Activity) hit-tests through rs_span_hit() instead: how many rows its
 * frame has, and the hit on @p row, @p unit px tall, @p inside px below
 * its top (rs_span_hit() has set hit->time_ns). */
struct rs_frame;
typedef struct rs_tab_view {
  void (*draw)(cairo_t *cr, const mprof_render_model *model,
               const mprof_render_view *view, int tab, double width,
               double height);
  void (*hit)(const mprof_render_model *model, const mprof_render_view *view,
              int tab, double width, double height, double x, double y,
              mprof_render_hit *hit);
  double (*content)(const mprof_render_model *model,
                    const mprof_render_view *view, int tab, double width);
  size_t (*rows)(const struct rs_frame *f);
  void (*row_hit)(const struct rs_frame *f, size_t row, double unit,
                  double inside, double x, mprof_render_hit *hit);
} rs_tab_view;

/* The hit-test of span view @p t: its frame, then the row under (x, y)
 * (hit->kind RULER over the axis when there are rows). */
void rs_span_hit(const rs_tab_view *t, const mprof_render_model *model,
                 const mprof_render_view *view, int tab, double width,
                 double height, double x, double y, mprof_render_hit *hit);

/* One per view_*.c; Flame and Raster share theirs (view_lanes.c). */
extern const rs_tab_view rs_trace_tab, rs_summary_tab, rs_hotspots_tab,
    rs_lanes_tab, rs_mega_tab, rs_density_tab, rs_activity_tab, rs_source_tab;

/* ---- the Source tab's data (source_lines.c) ----------------------------- */

/* The cache and the sources of the trace, once at open. */
int mprof_render__init_source(mprof_render_model *m);
void mprof_render__free_source(mprof_render_model *m);
/* The per-line analysis of @p kernel, built on first use and kept until
 * another kernel's is asked for; NULL when it cannot be built. */
const mprof_lines *mprof_render__lines(const mprof_render_model *m, int kernel);
/* The text of the trace's source files (embedded, else on disk). */
mprof_sources *mprof_render__sources(const mprof_render_model *m);

/* Rows of the Activity view (by view->activity_rows). */
size_t mprof_render__activity_rows(const mprof_render_model *model,
                                   const mprof_render_view *view);
size_t mprof_render__span_describe(const mprof_render_model *m,
                                   const mprof_render_hit *hit, char *buf,
                                   size_t size);

/* The colour of an NVTX range (its own, else one by its name) and of a
 * counter track (trace_intervals.c, trace_counters.c). */
uint32_t rs_range_color(const mprof_range_record *r);
uint32_t rs_counter_color(uint32_t counter);

/* The inline PC/SASS inset of a launch box (trace_boxes.c): how many lines
 * fit in a box of @p w x @p h, 0 when it is too small. */
int mprof_render__inset_lines(const mprof_render_kernel *kernel, double w,
                              double h);

#endif /* MPROF_RENDER_INTERNAL_H */
