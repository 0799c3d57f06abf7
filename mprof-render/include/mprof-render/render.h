/*
 * mprof-render — every view of the viewer, drawn with Cairo from libmprof
 * data alone (no GTK), so the same code paints the window, offscreen test
 * surfaces and `mprof view --render` PNG/SVG files.
 *
 * The pieces a test can check without pixels are pure functions here:
 * time <-> pixel mapping, zoom and pan arithmetic, level-of-detail merging
 * of launches narrower than a pixel, and hit-testing.
 *
 * Everything is single-threaded; a model is read-only once opened.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_RENDER_H
#define MPROF_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include <cairo.h>

#include <mprof/mprof.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors --------------------------------------------------------------
 */

/** The message of the last failure of a render call on this thread ("" when
 * none). Static storage; valid until the next failing call. */
const char *mprof_render_error(void);

/** Let go of Cairo's and fontconfig's caches (fonts, glyphs), for a
 * process that is done drawing and checks its leaks. Nothing may be drawn
 * afterwards. */
void mprof_render_shutdown(void);

/** Called with every string a view draws, as drawn (an elided one ends in
 * "…"), at its baseline's start (@p x, @p y) and its width, so that a test
 * can check what a reader sees, whatever the surface. NULL stops it. One
 * observer for the process; set it only where nothing draws meanwhile. */
typedef void (*mprof_render_text_fn)(void *ctx, const char *text, double x,
                                     double y, double width);
void mprof_render_observe_text(mprof_render_text_fn fn, void *ctx);

/* ---- tabs ---------------------------------------------------------------- */

/** The views, in the order of the viewer's top bar. Mega, Density and
 * Activity draw activity spans (measured) or, for a trace without them,
 * project Mega and Density from launches and PC samples (and say so). */
typedef enum mprof_render_tab {
  MPROF_RENDER_TRACE = 0,
  MPROF_RENDER_SUMMARY = 1,
  MPROF_RENDER_HOTSPOTS = 2,
  MPROF_RENDER_FLAME = 3,
  MPROF_RENDER_RASTER = 4,
  MPROF_RENDER_MEGA = 5,     /**< the Megakernels grammar: SM bands, rows */
  MPROF_RENDER_DENSITY = 6,  /**< per-SM activity heatmap over time */
  MPROF_RENDER_ACTIVITY = 7, /**< spans by SM, block or warp, by depth */
  /** A kernel's source lines: share of samples, stall mix, SASS under the
   * hot ones (libmprof's lines.h). */
  MPROF_RENDER_SOURCE = 8,
  /** One trace per rank (a set): a rank x step heat map of each step's
   * time against the step's median rank, stragglers marked (libmprof's
   * ranks.h). */
  MPROF_RENDER_RANKS = 9,
  MPROF_RENDER_TAB_COUNT
} mprof_render_tab;

/** 1 for the tabs whose x axis is time (Trace, Mega, Density, Activity). */
int mprof_render_tab_is_timeline(int tab);
/** 1 for the tabs that draw activity spans (Mega, Density, Activity). */
int mprof_render_tab_is_span(int tab);

/** "trace", "summary", ...: the key `--tab` takes. "" out of range. */
const char *mprof_render_tab_key(int tab);
/** "Trace", "Summary", ...: the title in the top bar. "" out of range. */
const char *mprof_render_tab_title(int tab);
/** The tab named @p key (case-insensitive), or -1. */
int mprof_render_tab_parse(const char *key);

/* ---- classification: instruction categories and stall families ---------- */

/** Flame lanes: what an instruction does, from its opcode. */
typedef enum mprof_render_category {
  MPROF_CAT_MEMORY = 0,  /**< loads, stores, atomics, texture, TMA */
  MPROF_CAT_ARITH = 1,   /**< FP and integer arithmetic, conversions */
  MPROF_CAT_TENSOR = 2,  /**< MMA on tensor cores */
  MPROF_CAT_CONTROL = 3, /**< branches, calls, exits */
  MPROF_CAT_SYNC = 4,    /**< barriers, fences, warp sync */
  MPROF_CAT_OTHER = 5,   /**< moves, special registers, unknown */
  MPROF_CAT_COUNT
} mprof_render_category;

/** Raster lanes: where warps waited, from the stall reason. The families
 * and the reason of each are libmprof's (mprof/reasons.h). */
typedef enum mprof_render_family {
  MPROF_FAM_MEMORY_LATENCY = MPROF_STALL_FAMILY_MEMORY_LATENCY,
  MPROF_FAM_MEMORY_THROUGHPUT = MPROF_STALL_FAMILY_MEMORY_THROUGHPUT,
  MPROF_FAM_MIO = MPROF_STALL_FAMILY_MIO,
  MPROF_FAM_COMPUTE = MPROF_STALL_FAMILY_COMPUTE,
  MPROF_FAM_SYNC = MPROF_STALL_FAMILY_SYNC,
  MPROF_FAM_FETCH_BRANCH = MPROF_STALL_FAMILY_FETCH_BRANCH,
  MPROF_FAM_SCHEDULING = MPROF_STALL_FAMILY_SCHEDULING,
  MPROF_FAM_ISSUED = MPROF_STALL_FAMILY_ISSUED,
  MPROF_FAM_COUNT = MPROF_STALL_FAMILY_COUNT_
} mprof_render_family;

/** The category of SASS opcode @p opcode ("LDG.E.128", "UIADD3", ...). */
int mprof_render_opcode_category(const char *opcode);
/** The family of stall reason @p name, with or without the
 * `smsp__pcsamp_warps_issue_stalled_` prefix. */
int mprof_render_reason_family(const char *name);
/** Lane titles. "" out of range. */
const char *mprof_render_category_title(int category);
const char *mprof_render_family_title(int family);
/** Colours, 0xRRGGBB. */
uint32_t mprof_render_category_color(int category);
uint32_t mprof_render_family_color(int family);

/* ---- the model: a trace, its sidecar and what the views need ------------ */

typedef struct mprof_render_model mprof_render_model;

/** An instruction of a kernel: libmprof's join's, with what the Flame and
 * Raster lanes need. Owned by the model. */
typedef struct mprof_render_pc {
  uint32_t offset;   /**< byte offset inside the function */
  uint32_t category; /**< mprof_render_category (OTHER without SASS) */
  uint64_t samples;  /**< over the plain reasons */
  uint64_t family[MPROF_FAM_COUNT]; /**< plain samples per Raster family */
  /** The join's instruction: its reasons (indices into the model's reason
   * table, which is the join's), most samples first. */
  const mprof_pc_stats *stats;
  const mprof_sass_instruction *insn; /**< NULL without SASS */
} mprof_render_pc;

/** A kernel: kernel i of libmprof's join (the launches and samples of one
 * mangled name on one device) and its diagnosis. Owned by the model. */
typedef struct mprof_render_kernel {
  /** Launch statistics, samples, device, names: the join's. */
  const mprof_kernel_stats *stats;
  /** What `mprof summary` says about it. */
  const mprof_kernel_diagnosis *diagnosis;
  const char *name; /**< demangled when possible, else mangled */
  uint32_t color;   /**< 0xRRGGBB, by rank */
  /** The launch shape with the most time, or NULL without launches. */
  const mprof_shape_stats *shape;
  uint64_t family[MPROF_FAM_COUNT]; /**< plain samples per Raster family */
  size_t pc_count;
  const mprof_render_pc *pcs; /**< by offset */
  const uint32_t *hot;        /**< indices into pcs, most samples first */
  /** Its short name, unique within the trace (the join's); owned by the
   * model. */
  const char *short_name;
  /** The join's short names and this kernel's index among them, for
   * mprof_name_set_fit(). */
  const mprof_name_set *short_names;
  size_t index;
} mprof_render_kernel;

/** A stall reason of the model's table: the join's, index for index. */
typedef struct mprof_render_reason {
  const char *name;    /**< "long_scoreboard" */
  uint32_t not_issued; /**< a subset of another reason: never in shares */
  uint32_t family;     /**< mprof_render_family */
  uint32_t color;      /**< 0xRRGGBB: the family's hue, shaded */
} mprof_render_reason;

/** Trace rows, top to bottom: a band per host thread with its NVTX
 * ranges (a row per nesting level) and its CUDA API calls, then a band per
 * device with its counter tracks (PM samples) and its streams, and last,
 * when the trace has copies of no stream (MEMOPS stream NONE), a band
 * "No stream" with their row. Owned by the model. */
typedef enum mprof_render_row_kind {
  MPROF_ROW_DEVICE = 0,  /**< a GPU's band */
  MPROF_ROW_STREAM = 1,  /**< launches and copies of one stream */
  MPROF_ROW_THREAD = 2,  /**< a host thread's band */
  MPROF_ROW_RANGES = 3,  /**< NVTX ranges of one thread at one depth */
  MPROF_ROW_COUNTER = 4, /**< one PM counter of a GPU over time */
  MPROF_ROW_API = 5      /**< CUDA API calls of one thread */
} mprof_render_row_kind;

typedef struct mprof_render_row {
  uint32_t kind;   /**< mprof_render_row_kind */
  uint32_t device; /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t stream; /**< index into STREAMS (stream rows); MPROF_INDEX_NONE
                        on the row of copies of no stream */
  const char *label;
  uint32_t thread_id; /**< host thread (THREAD, RANGES and API rows) */
  uint32_t depth;     /**< RANGES: nesting level, 0 outermost */
  uint32_t counter;   /**< COUNTER: mprof_counter_id */
  int32_t column;     /**< COUNTER: its column in PM_SAMPLES values */
  /** RANGES: indices into RANGES, COUNTER: into PM_SAMPLES, API: into the
   * API calls, by start (no two overlap): items [first, first + count) of
   * mprof_render_row_item(). */
  size_t first, count;
} mprof_render_row;

/** Item @p i of @p row (see mprof_render_row.first): an index into the
 * row's section, or MPROF_INDEX_NONE. */
uint32_t mprof_render_row_item(const mprof_render_model *model,
                               const mprof_render_row *row, size_t i);

/** The CUDA API call (an index into API_CALLS) that issued launch
 * @p launch (an index into LAUNCHES), matched by correlation id; -1 when
 * the trace has none for it. */
int64_t mprof_render_launch_api_call(const mprof_render_model *model,
                                     size_t launch);
/** The launch that API call @p call issued, or -1 (a copy, or none). */
int64_t mprof_render_api_call_launch(const mprof_render_model *model,
                                     size_t call);

/** Where the process started on the trace clock (the producer's clock
 * anchor), or 0 when the trace does not say. The view fits the GPU
 * activity; the Trace ruler marks this instant (or points to it when it
 * lies before the view). */
int64_t mprof_render_model_process_start(const mprof_render_model *model);

/** The label of copy @p memop (an index into MEMOPS) that fits
 * @p max_width pixels at the Trace's font on @p cr: "HtoD 64 MiB 48.2
 * GB/s", else "HtoD 64 MiB", else "HtoD"; "" when nothing fits. With
 * @p cr NULL, the longest. Returns @p buf. */
const char *mprof_render_memop_label(const mprof_render_model *model,
                                     size_t memop, cairo_t *cr,
                                     double max_width, char *buf, size_t size);

/** The name drawn inside a launch of kernel @p kernel that is
 * @p max_width pixels wide at the Trace's font on @p cr: the kernel's
 * short name, unique within the trace, cut in the middle to what fits
 * (the part that tells it apart stays); "" when fewer than 4 characters
 * would show. With @p cr NULL, the whole short name. Returns @p buf. */
const char *mprof_render_kernel_label(const mprof_render_model *model,
                                      int kernel, cairo_t *cr, double max_width,
                                      char *buf, size_t size);

/**
 * Open the trace at @p trace_path and the sidecar at @p sidecar_path (NULL:
 * TRACE ".pc.json" when that file exists). A missing sidecar is no error;
 * the trace's own sidecar, damaged, is left out: the trace opens without
 * it, and the model's note and the diagnosis's no_sidecar note say why. A
 * sidecar named by @p sidecar_path that fails to load is an error. On
 * failure mprof_render_error() names the file and the problem.
 * On success *out is the caller's; free it with mprof_render_model_free().
 */
int mprof_render_model_open(mprof_render_model **out, const char *trace_path,
                            const char *sidecar_path);
/** NULL is a no-op. */
void mprof_render_model_free(mprof_render_model *model);

const mprof_trace *mprof_render_model_trace(const mprof_render_model *model);
/** libmprof's join of the trace and its diagnosis, built once at open:
 * kernel i of the model is kernel i of the join, reason r its reason r.
 * Owned by the model. */
const mprof_join *mprof_render_model_join(const mprof_render_model *model);
const mprof_diagnosis *
mprof_render_model_diagnosis(const mprof_render_model *model);
/** What is missing, in one sentence ("" when nothing). */
const char *mprof_render_model_note(const mprof_render_model *model);

/**
 * Open the @p count traces of one run (one per process) as one model:
 * merged on one clock (mprof_trace_open_merged(), named @p name, NULL:
 * "FIRST + N more"), each launch keeping its process
 * (mprof_trace_stream_process()). The sidecar is @p sidecar_path, else
 * that of the first trace with one. One trace opens as
 * mprof_render_model_open() opens it.
 */
int mprof_render_model_open_set(mprof_render_model **out,
                                const char *const *paths, size_t count,
                                const char *name, const char *sidecar_path);

/**
 * Told how an open goes, on the thread that opens: the step that begins
 * (@p step, "Reading the trace", "Joining launches to kernels", ...) and
 * how much of the work is done before it (@p done, 0 to 1; 1 at the end).
 * Return nonzero to stop the open.
 */
typedef int (*mprof_render_progress)(void *user, double done, const char *step);

/**
 * mprof_render_model_open_set(), calling @p progress (may be NULL) between
 * its steps, and for a set also building the Ranks tab's report (which
 * mprof_render_model_open_set() leaves to the tab's first drawing); when it
 * returns nonzero the open stops there and fails with mprof_render_error()
 * "cancelled". A viewer opens on a worker thread through this: the model is
 * built by one thread and, once returned, used by one thread at a time.
 */
int mprof_render_model_open_progress(mprof_render_model **out,
                                     const char *const *paths, size_t count,
                                     const char *name, const char *sidecar_path,
                                     mprof_render_progress progress,
                                     void *user);

/**
 * The synthetic SM/block/warp activity demo (`--demo-activity`): a trace
 * written by mprof synth with nested per-warp spans on 8 SMs, and its
 * sidecar, opened like any trace. Every span view marks it as synthetic.
 * *out is the caller's; free it with mprof_render_model_free().
 */
int mprof_render_model_open_demo(mprof_render_model **out);
/** 1 for a model of mprof_render_model_open_demo(). */
int mprof_render_model_is_demo(const mprof_render_model *model);
/** 1 when the trace holds activity spans (SPANS records). A .mkprof file
 * given to mprof_render_model_open() is imported into one with them. */
int mprof_render_model_has_spans(const mprof_render_model *model);
/** The tab a trace opens on when none is asked for: Mega for a Megakernels
 * .mkprof (instruction timings are all it holds), else Summary. */
int mprof_render_model_first_tab(const mprof_render_model *model);
/** Spans of the kernels named like kernel @p kernel (on every device). */
size_t mprof_render_kernel_span_count(const mprof_render_model *model,
                                      int kernel);
/** The kernel the span views should start on: @p kernel when it has spans,
 * else the kernel with the most time that has some, else @p kernel. */
int mprof_render_span_kernel(const mprof_render_model *model, int kernel);
/** Earliest start and latest end of the trace's GPU activity (launches and
 * copies): what the whole-trace view fits. */
void mprof_render_model_bounds(const mprof_render_model *model, int64_t *start,
                               int64_t *end);

/** A kernel's short display name, libmprof's mprof_name_short():
 * "gemm_tiled<64, 64, 8>" of "void ns::gemm_tiled<64, 64, 8>(float
 * const*, ...)", in @p buf. */
const char *mprof_render_short_name(char *buf, size_t size, const char *name);

/** Kernels by total time, largest first: index 0 is the dominant kernel. */
size_t mprof_render_kernel_count(const mprof_render_model *model);
const mprof_render_kernel *
mprof_render_kernel_at(const mprof_render_model *model, size_t index);
/** The kernel of launch @p launch (index into LAUNCHES), or -1. */
int mprof_render_launch_kernel(const mprof_render_model *model, size_t launch);
/**
 * The kernel named @p name: equal to its mangled or display name, else the
 * display name up to its argument list, else the first whose display name
 * contains @p name. -1 when none.
 */
int mprof_render_kernel_find(const mprof_render_model *model, const char *name);

size_t mprof_render_reason_count(const mprof_render_model *model);
const mprof_render_reason *
mprof_render_reason_at(const mprof_render_model *model, size_t index);

size_t mprof_render_row_count(const mprof_render_model *model);
const mprof_render_row *mprof_render_row_at(const mprof_render_model *model,
                                            size_t index);

/* ---- the view: what is shown ------------------------------------------- */

/** The state every view draws from. The GTK view-state object owns one;
 * `--render` fills one from the command line. */
typedef struct mprof_render_view {
  int64_t start_ns, end_ns;         /**< visible time range, trace clock */
  int64_t sel_start_ns, sel_end_ns; /**< selection; none when end <= start */
  double row_height;                /**< px per stream row (Trace) */
  double scroll_y;        /**< px scrolled down: Trace rows, panel contents */
  int32_t kernel;         /**< selected kernel, -1 none */
  int64_t launch;         /**< selected launch (index into LAUNCHES), -1 none */
  double sm_height;       /**< px per SM: Mega bands and Density rows;
                               0 = fit every SM in the view */
  double activity_height; /**< px per Activity row; 0 = fit */
  int32_t activity_rows;  /**< mprof_render_activity_rows */
  int32_t activity_depth; /**< mprof_render_activity_depth */
  /** Trace: the launch under the pointer (index into LAUNCHES), -1 none:
   * like the selected launch, it shows the flow arrow from its API call. */
  int64_t hover_launch;
  /** Trace: a search (kernel and NVTX range names, any case, any part of
   * them), NULL or "" for none: launches and ranges it does not match are
   * dimmed. Borrowed: the caller keeps it alive while the view is used. */
  const char *search;
  /** Trace: one byte per row (mprof_render_row_count()) of
   * mprof_render_row_state flags, NULL for every row shown. Borrowed. */
  const uint8_t *row_state;
  /** Trace: 1 when the caller lists the selected range's kernels itself
   * (the viewer, under the Trace): no panel over the rows. */
  int32_t no_selection_panel;
  /** Source: the file shown, 1 + its index for
   * mprof_render_source_file_at(); 0: the file of the kernel's hottest
   * line. */
  int32_t source_file;
  /** Source: the line marked (where navigation went), 0 none. */
  uint32_t source_line;
  /** Source: the searched text ("" none); its matches are marked. */
  char source_find[128];
  /** Source: the instruction marked (its byte offset + 1), 0 none: the
   * one clicked in Hotspots, Flame or Raster, or on a kernel without
   * lines the one navigated to. */
  uint32_t source_pc;
} mprof_render_view;

/** Trace rows folded away (mprof_render_view.row_state). */
typedef enum mprof_render_row_state {
  /** On a device or thread band: the rows under it, up to the next band,
   * are folded into it. */
  MPROF_ROW_COLLAPSED = 1 << 0,
  /** The row is hidden (a band hides with the rows under it). */
  MPROF_ROW_HIDDEN = 1 << 1
} mprof_render_row_state;

/** 1 when @p row of @p view is drawn: not hidden, and not under a
 * collapsed or hidden band. */
int mprof_render_row_shown(const mprof_render_model *model,
                           const mprof_render_view *view, size_t row);
/** The band (device or thread row) that @p row lies under, @p row itself
 * for a band; -1 for none. */
int mprof_render_row_band(const mprof_render_model *model, size_t row);
/** Rows under band @p band that are hidden (MPROF_ROW_HIDDEN), for its
 * label. */
size_t mprof_render_band_hidden(const mprof_render_model *model,
                                const mprof_render_view *view, size_t band);

/* ---- search ------------------------------------------------------------ */

/** 1 when @p search (NULL or "" matches everything) is part of @p name,
 * in any case. */
int mprof_render_name_matches(const char *name, const char *search);
/** 1 when @p search is part of kernel @p kernel's short, display or
 * mangled name. */
int mprof_render_kernel_matches(const mprof_render_model *model, int kernel,
                                const char *search);
/** Launches of the kernels @p search matches; *kernels those kernels and
 * *ranges the NVTX ranges it matches (either may be NULL). */
size_t mprof_render_search_count(const mprof_render_model *model,
                                 const char *search, size_t *kernels,
                                 size_t *ranges);

/** A match of a search: a launch (kind MPROF_HIT_LAUNCH, index into
 * LAUNCHES) or an NVTX range (MPROF_HIT_RANGE, index into RANGES); kind
 * MPROF_HIT_NONE for none. */
typedef struct mprof_render_match {
  int kind;
  int64_t index;
  int64_t start_ns, end_ns;
} mprof_render_match;

/** The match of @p search after @p from in time (before it when
 * @p forward is 0), wrapping around at the end; @p from NULL or of kind
 * MPROF_HIT_NONE starts at the beginning (the end). Time order: start,
 * then launches before ranges, then index. 1 with *out set, 0 when
 * nothing matches. O(launches + ranges). */
int mprof_render_search_next(const mprof_render_model *model,
                             const char *search, const mprof_render_match *from,
                             int forward, mprof_render_match *out);

/** The selected time range of @p view as text for people: its totals, then
 * every kernel that ran in it by GPU time (launches, time, share, short
 * name), a line each; NULL without a selection. The caller frees it. The
 * Trace's painted panel shows the first few; this is all of them. */
char *mprof_render_selection_text(const mprof_render_model *model,
                                  const mprof_render_view *view);

/** What tab @p tab of @p view shows, as text people can paste, or NULL
 * where it has none: the Summary as `mprof summary --human --full-names`
 * prints the kernel, the Hotspots as a table of the kernel's sampled
 * instructions (columns separated by tabs, hottest first, every one), the
 * Trace's selected range as mprof_render_selection_text(). The caller
 * frees it. */
char *mprof_render_tab_text(const mprof_render_model *model,
                            const mprof_render_view *view, int tab);

/** Activity rows: one per SM, per block or per warp. */
typedef enum mprof_render_activity_rows {
  MPROF_ACTIVITY_SM = 0,
  MPROF_ACTIVITY_BLOCK = 1,
  MPROF_ACTIVITY_WARP = 2,
  MPROF_ACTIVITY_ROWS_COUNT
} mprof_render_activity_rows;

/** Activity depth: the outermost spans (phases), the innermost
 * (instructions), or phases until they are wide enough to open (auto). */
typedef enum mprof_render_activity_depth {
  MPROF_ACTIVITY_AUTO = 0,
  MPROF_ACTIVITY_PHASE = 1,
  MPROF_ACTIVITY_INSTRUCTION = 2,
  MPROF_ACTIVITY_DEPTH_COUNT
} mprof_render_activity_depth;

/** "sm", "block", "warp" / "auto", "phase", "instruction"; "" out of
 * range. The parsers return -1 for an unknown key. */
const char *mprof_render_activity_rows_key(int rows);
int mprof_render_activity_rows_parse(const char *key);
const char *mprof_render_activity_depth_key(int depth);
int mprof_render_activity_depth_parse(const char *key);

/** Where time may go: the trace bounds with a margin, and the narrowest
 * span a zoom may reach. */
typedef struct mprof_render_limits {
  int64_t min_ns, max_ns;
  int64_t min_span_ns;
} mprof_render_limits;

#define MPROF_RENDER_ROW_HEIGHT 28.0
#define MPROF_RENDER_ROW_MIN 6.0
#define MPROF_RENDER_ROW_MAX 400.0

/** Dominant kernel selected, default row height, and the time where the
 * kernels ran: the shortest stretch holding 90% of the kernel time, with
 * a margin, when that is at most a fifth of the GPU activity (a lead-in of
 * copies and set-up, idle gaps), else all of the GPU activity (the limits:
 * what zooming out reaches). */
void mprof_render_view_init(mprof_render_view *view,
                            const mprof_render_model *model);
void mprof_render_model_limits(const mprof_render_model *model,
                               mprof_render_limits *limits);

/**
 * Zoom by @p factor (> 1 zooms in) keeping the time at @p fraction of the
 * visible range (0 = left edge, 1 = right edge: the pointer) in place; the
 * span is clamped to [min_span_ns, max_ns - min_ns] and the range into the
 * limits.
 */
void mprof_render_view_zoom(mprof_render_view *view,
                            const mprof_render_limits *limits, double fraction,
                            double factor);
/** Move the visible range by @p fraction of its span (negative: earlier). */
void mprof_render_view_pan(mprof_render_view *view,
                           const mprof_render_limits *limits, double fraction);
/** Move the visible range to start at @p start_ns, span unchanged. */
void mprof_render_view_scroll_to(mprof_render_view *view,
                                 const mprof_render_limits *limits,
                                 int64_t start_ns);
/** Clamp span and position into @p limits. */
void mprof_render_view_clamp(mprof_render_view *view,
                             const mprof_render_limits *limits);
/** Scale the row height by @p factor keeping the content at pixel @p y
 * (measured from the top of the rows) in place; clamped to ROW_MIN..MAX. */
void mprof_render_view_zoom_rows(mprof_render_view *view, double factor,
                                 double y);

/**
 * Show what Mega, Density and Activity draw for view->kernel: the selected
 * launch when it is one of the kernel's, else the extent of the kernel's
 * spans, else (projected) its longest launch; with a margin.
 */
void mprof_render_view_fit_spans(mprof_render_view *view,
                                 const mprof_render_model *model);

/**
 * The first look at the Source tab: the kernel's hottest line marked and
 * scrolled to a quarter of the way down a view @p height px tall (no
 * scroll when it is already in the top half).
 */
void mprof_render_view_open_source_tab(mprof_render_view *view,
                                       const mprof_render_model *model,
                                       double height);

/* ---- the Source tab: its files, hot lines, navigation and search -------- */

/** Number of files with numbered lines of kernel @p kernel (0 for a kernel
 * without a line table). */
size_t mprof_render_source_file_count(const mprof_render_model *model,
                                      int kernel);
/** File @p index of kernel @p kernel, most samples first, as its line
 * table names it (owned by the model until another kernel's lines are
 * built); *share (may be NULL) gets its share of the samples. NULL out of
 * range. */
const char *mprof_render_source_file_at(const mprof_render_model *model,
                                        int kernel, size_t index,
                                        double *share);
/** The file of kernel @p kernel named @p name (its whole path, or its
 * last components: "math.cuh", "lines/math.cuh") as a view's source_file
 * (1 + its index); 0 when none. */
int32_t mprof_render_source_file_find(const mprof_render_model *model,
                                      int kernel, const char *name);
/** Number of sampled lines with a number of kernel @p kernel, or for a
 * kernel without lines its sampled instructions: the ranks
 * mprof_render_view_source_hot() steps through. */
size_t mprof_render_source_hot_count(const mprof_render_model *model,
                                     int kernel);

/** Show file @p file (a view's source_file) of view->kernel and mark its
 * line @p line (0: its hottest line): 0, or -1 when that file has no such
 * line (nothing changes). */
int mprof_render_view_source_line(mprof_render_view *view,
                                  const mprof_render_model *model, int32_t file,
                                  uint32_t line);
/**
 * Mark a hot line of view->kernel: with @p step 0 the hottest, else the
 * one @p step ranks after (negative: before) the marked line, round the
 * list; from a line that is not hot, the hottest (or, backwards, the
 * coolest). The file shown follows. A kernel without lines steps through
 * its sampled instructions instead (view->source_pc). Returns the rank
 * marked (0 hottest), or -1 when there is nothing sampled to mark.
 */
int mprof_render_view_source_hot(mprof_render_view *view,
                                 const mprof_render_model *model, int step);
/** Mark the line of the instruction at byte offset @p offset of
 * view->kernel (a Hotspots row, a Flame or Raster instruction), and the
 * instruction: 0, or -1 when it has no line (a library kernel's code: on
 * its page of SASS the instruction alone is marked). */
int mprof_render_view_source_pc(mprof_render_view *view,
                                const mprof_render_model *model,
                                uint32_t offset);
/**
 * Search the shown file for @p text (ASCII case ignored; kept in
 * view->source_find, whose matches are drawn marked): with @p direction 0
 * mark the first line that holds it from the marked line on (itself
 * included: the search as it is typed), with 1 the next after it, -1 the
 * one before, round the file. Returns the number of lines that hold it
 * (0: the marked line stays).
 */
size_t mprof_render_view_source_find(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     const char *text, int direction);
/** Scroll a Source tab @p height px tall so that the marked line is in
 * view: unchanged when it is, else a quarter of the way down. */
void mprof_render_view_source_scroll(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     double height);

/**
 * The first look at a span tab, in the viewer and in `mprof view` alike:
 * unless @p keep_kernel (the user named the kernel), view->kernel moves to
 * mprof_render_span_kernel() (a kernel that has spans); then the view is
 * fitted to it (mprof_render_view_fit_spans). Later visits keep the
 * user's kernel and range.
 */
void mprof_render_view_open_span_tab(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     int keep_kernel);

/** Where the time axis of Mega, Density and Activity counts from for
 * view->kernel: its first span, else (projected) its first launch. */
int64_t mprof_render_span_origin(const mprof_render_model *model,
                                 const mprof_render_view *view);

/* ---- the Ranks tab: one trace per rank ---------------------------------- */

/** The ranks of a model opened from several traces (one per rank), by
 * rank number; 0 for one trace. Their report (libmprof's mprof_ranks_build(),
 * without the diff) is built on the first call. */
size_t mprof_render_rank_count(const mprof_render_model *model);
/** The GPU window of step @p step_index of rank @p rank_index on the
 * model's (the set's) clock: 0, or -1 when there is no such step or it
 * ran nothing on the GPU. */
int mprof_render_rank_step_range(const mprof_render_model *model,
                                 size_t rank_index, size_t step_index,
                                 int64_t *start_ns, int64_t *end_ns);
/**
 * Open a rank's step on the Trace (a click on a Ranks cell): select its GPU
 * window, zoom the view to it with a margin, and scroll the Trace rows to
 * the first row of that rank's process. 0, or -1 (nothing changes) when
 * the step has no window.
 */
int mprof_render_view_open_rank_step(mprof_render_view *view,
                                     const mprof_render_model *model,
                                     size_t rank_index, size_t step_index);

/* ---- time <-> pixel ----------------------------------------------------- */

/** The visible time range spread over the pixels [x, x + width). */
typedef struct mprof_render_timemap {
  int64_t start_ns, end_ns; /**< end > start */
  double x, width;          /**< width > 0 */
} mprof_render_timemap;

void mprof_render_timemap_init(mprof_render_timemap *map, int64_t start_ns,
                               int64_t end_ns, double x, double width);
/** Pixel of time @p t (may be far outside the area). Exact for any trace
 * clock: the difference is taken in integers first. */
double mprof_render_time_to_x(const mprof_render_timemap *map, int64_t t);
/** Time at pixel @p x, rounded to the nearest ns. */
int64_t mprof_render_x_to_time(const mprof_render_timemap *map, double x);
/** ns per pixel. */
double mprof_render_ns_per_px(const mprof_render_timemap *map);

/** A tick spacing of 1, 2 or 5 x 10^k ns giving ticks at least
 * @p min_px apart. */
int64_t mprof_render_tick_step(const mprof_render_timemap *map, double min_px);

/* ---- level of detail --------------------------------------------------- */

/** One thing to draw on a stream row: a launch, or a run of launches each
 * narrower than the merge width, merged into one box. */
typedef struct mprof_render_box {
  double x0, x1;      /**< pixels (unclipped) */
  size_t first, last; /**< stream positions [first, last) */
  int merged;         /**< 1 for a run of narrow launches */
} mprof_render_box;

typedef void (*mprof_render_box_fn)(const mprof_render_box *box, void *data);
/** What keeps launches apart in a merged run (their kernel, say). */
typedef int (*mprof_render_key_fn)(size_t position, void *data);

/**
 * Visit the boxes of stream @p stream in the range of @p map, left to right.
 * A launch at least @p min_px wide is its own box; narrower launches within
 * a pixel of each other merge into one box, and when @p key is given, a
 * run also ends where the key of the launches it reaches changes (checked
 * once per pixel stepped). The cost is O(boxes x log n) with at most about
 * 2 x width / min(1, min_px) boxes, found by binary search, however many
 * launches are in view. Returns the number of boxes.
 */
size_t mprof_render_lod_visit(const mprof_trace *trace, uint32_t stream,
                              const mprof_render_timemap *map, double min_px,
                              mprof_render_key_fn key, mprof_render_box_fn fn,
                              void *data);

/* ---- tracks: spans by start, drawn one pixel column at a time ---------- */

/**
 * Intervals sorted by start, with the running maximum of their ends (for
 * intervals that never overlap, the ends themselves). Both arrays ascend.
 */
typedef struct mprof_render_track {
  const int64_t *start;
  const int64_t *max_end;
  size_t count;
} mprof_render_track;

/** What covers one pixel column. */
typedef struct mprof_render_column {
  int64_t item; /**< the track's index of the interval that covers the
                     column's first instant or starts first inside it; -1
                     for none */
  int merged;   /**< 1 when more than that interval meets the column (or
                     it ends inside it): a run below a pixel */
} mprof_render_column;

/**
 * Fill @p out[c] for the columns [map->x + c, map->x + c + 1), c in
 * [0, @p columns). An interval covering many columns is found once and
 * filled across them; an empty stretch is skipped with one search. So the
 * cost is O(bars x log n), at most O(columns x log n), whatever the number
 * of intervals. Returns the number of binary searches made.
 */
size_t mprof_render_track_cover(const mprof_render_track *track,
                                const mprof_render_timemap *map, size_t columns,
                                mprof_render_column *out);

/**
 * Sub-lanes, greedily: intervals in order of start each take the lowest
 * lane whose last interval has ended (end <= start), so that no two in a
 * lane overlap. Writes @p lane[i] for each and returns the number of
 * lanes (0 for none).
 */
uint32_t mprof_render_assign_lanes(const int64_t *start, const int64_t *end,
                                   size_t count, uint32_t *lane);

/**
 * Mega's level of detail: with @p band_px pixels per SM and @p units row
 * units in a band (separator 0.5, loader 1, consumer 2, storer 1, other 1),
 * 1 when the rows are drawn (a unit at least MPROF_RENDER_MEGA_UNIT_MIN px),
 * 0 for one bar per SM.
 */
#define MPROF_RENDER_MEGA_UNIT_MIN 3.0
int mprof_render_mega_detailed(double band_px, double units);

/** How many sub-lanes of @p lanes fit in a row of @p row_px pixels (each at
 * least 2 px): the rest fold into the last one. 0 when @p lanes is 0. */
uint32_t mprof_render_lanes_shown(uint32_t lanes, double row_px);

/** The banners over a span view (0xRRGGBB): data projected from PC samples
 * (a trace without spans), and the synthetic demo. */
#define MPROF_RENDER_BANNER_PROJECTED 0xffe3a6u
#define MPROF_RENDER_BANNER_DEMO 0xe4dcfbu

/** Density's heat scale: a busy share (or projected occupancy) 0..1 to
 * 0xRRGGBB; an empty cell (0) has a colour of its own. */
uint32_t mprof_render_density_color(double value);

/* ---- layout of the timeline views --------------------------------------- */

/** Where the rows of a timeline tab (Trace, Mega, Density, Activity) lie in
 * a @p width x @p height drawing: time maps onto [left, right), rows scroll
 * inside [top, bottom). */
typedef struct mprof_render_layout {
  double left, right, top, bottom;
} mprof_render_layout;

void mprof_render_tab_layout(const mprof_render_model *model,
                             const mprof_render_view *view, int tab,
                             double width, double height,
                             mprof_render_layout *out);

/** px per SM (Mega, Density) or per Activity row of @p tab when its rows
 * are @p rows_px tall: the view's height, or what fits them all. */
double mprof_render_row_unit(const mprof_render_model *model,
                             const mprof_render_view *view, int tab,
                             double rows_px);

/** Scale the SM height (Mega, Density) or the Activity row height of
 * @p tab by @p factor, keeping the content at @p y (from the top of the
 * rows) in place: view->scroll_y follows. @p rows_px is the rows' height. */
void mprof_render_view_zoom_tab_rows(mprof_render_view *view,
                                     const mprof_render_model *model, int tab,
                                     double factor, double y, double rows_px);

/* ---- layout of the Trace view ------------------------------------------ */

#define MPROF_RENDER_GUTTER 168.0    /**< px of row labels on the left */
#define MPROF_RENDER_RULER 24.0      /**< px of time ruler on top */
#define MPROF_RENDER_DEVICE_ROW 20.0 /**< device and thread bands */
#define MPROF_RENDER_RANGE_ROW 18.0  /**< NVTX and API rows */
#define MPROF_RENDER_COUNTER_ROW 34.0

/** The time area of the Trace view in a @p width-pixel-wide drawing. */
void mprof_render_trace_timemap(mprof_render_timemap *map,
                                const mprof_render_view *view, double width);
/** Top of row @p row in content coordinates (before scroll_y), and its
 * height. */
double mprof_render_row_top(const mprof_render_model *model,
                            const mprof_render_view *view, size_t row,
                            double *height);
/** The row at content y @p y (scroll_y already added), or -1. */
int mprof_render_row_at_y(const mprof_render_model *model,
                          const mprof_render_view *view, double y);

/* ---- drawing ------------------------------------------------------------ */

/**
 * Draw @p tab into the rectangle (0, 0, @p width, @p height) of @p cr.
 * Views of a kernel draw view->kernel (a message when none is selected).
 */
void mprof_render_draw(cairo_t *cr, const mprof_render_model *model,
                       const mprof_render_view *view, int tab, double width,
                       double height);

/** Height of the scrollable content of @p tab at @p width: rows for Trace
 * (below the ruler), the whole page for the panels. */
double mprof_render_content_height(const mprof_render_model *model,
                                   const mprof_render_view *view, int tab,
                                   double width);

/** Draw a centred message (an error, say) on a plain background. */
void mprof_render_draw_message(cairo_t *cr, double width, double height,
                               const char *title, const char *message);

/**
 * Render @p tab to @p path: PNG or SVG by the extension (.png, .svg).
 * 0 on success; -1 with mprof_render_error() set.
 */
int mprof_render_write(const mprof_render_model *model,
                       const mprof_render_view *view, int tab, int width,
                       int height, const char *path);

/**
 * Render @p tab as a PNG in memory: *out (the caller's; free() it) holds
 * *size bytes, the bytes mprof_render_write() writes to a .png file for
 * the same view. 0; -1 with mprof_render_error() set (nothing to free).
 */
int mprof_render_write_png(const mprof_render_model *model,
                           const mprof_render_view *view, int tab, int width,
                           int height, unsigned char **out, size_t *size);

/* ---- hit-testing -------------------------------------------------------- */

typedef enum mprof_render_hit_kind {
  MPROF_HIT_NONE = 0,
  MPROF_HIT_RULER = 1,      /**< the time ruler */
  MPROF_HIT_LABEL = 2,      /**< a row label */
  MPROF_HIT_LAUNCH = 3,     /**< one launch */
  MPROF_HIT_MERGED = 4,     /**< a merged run of launches */
  MPROF_HIT_MEMOP = 5,      /**< a memcpy or memset */
  MPROF_HIT_ROW = 6,        /**< empty space on a row */
  MPROF_HIT_PC = 7,         /**< an instruction (panels and the inset) */
  MPROF_HIT_LANE = 8,       /**< a Flame/Raster lane outside any instruction */
  MPROF_HIT_SPAN = 9,       /**< one activity span (Mega, Activity) */
  MPROF_HIT_SPANS = 10,     /**< spans merged below a pixel */
  MPROF_HIT_SM = 11,        /**< an SM (band, row or label) outside any span */
  MPROF_HIT_CELL = 12,      /**< a Density cell */
  MPROF_HIT_PROJECTED = 13, /**< a projected bar (a trace without spans) */
  MPROF_HIT_RANGE = 14,     /**< an NVTX range (Trace) */
  MPROF_HIT_COUNTER = 15,   /**< a counter track (Trace) */
  MPROF_HIT_API = 16,       /**< a CUDA API call (Trace) */
  MPROF_HIT_RANK_STEP = 17  /**< a cell of Ranks: a rank's step */
} mprof_render_hit_kind;

typedef struct mprof_render_hit {
  int kind;        /**< mprof_render_hit_kind */
  int tab;         /**< the view it was found in */
  int row;         /**< Trace row, or -1 */
  uint32_t stream; /**< the row's stream (row hits): index into STREAMS,
                        or MPROF_INDEX_NONE (copies of no stream) */
  size_t first;    /**< stream positions [first, last) */
  size_t last;
  int64_t launch;  /**< index into LAUNCHES of the (first) launch, or -1 */
  int64_t memop;   /**< index into MEMOPS, or -1 */
  int64_t time_ns; /**< time under the pointer (Trace), else 0 */
  int kernel;      /**< kernel of the launch or panel, or -1 */
  int pc;          /**< index into the kernel's pcs, or -1 */
  int lane;        /**< Flame category / Raster family, or -1 */
  int64_t span;    /**< index into SPANS, or -1 */
  uint64_t spans;  /**< spans meeting a merged column (SPANS hits) */
  uint32_t device; /**< index into DEVICES of an SM hit, or NONE */
  uint32_t sm;     /**< the SM (%smid) */
  int role;        /**< Mega row (mprof_region_role), or -1 */
  int64_t t0, t1;  /**< the column or cell under the pointer */
  double value;    /**< Density: busy share; projected: occupancy */
  int64_t row_key; /**< Activity: the block or warp row, or -1 */
  int64_t item;    /**< RANGE: index into RANGES; COUNTER: into PM_SAMPLES;
                        API: into the API calls; else -1 */
  /** RANK_STEP: the rank (mprof_render_rank_count() order) and its step
   * (by step number, mprof_ranks_step()), else -1; t0, t1 its GPU window
   * on the trace clock (0, 0 when it has none), value its time against
   * the step's median rank (1: the median). */
  int64_t rank_index, step_index;
} mprof_render_hit;

/** What is at (@p x, @p y) of @p tab drawn at @p width x @p height. */
void mprof_render_hit_test(const mprof_render_model *model,
                           const mprof_render_view *view, int tab, double width,
                           double height, double x, double y,
                           mprof_render_hit *hit);

/** One line about @p hit for a tooltip or status line; "" for nothing.
 * Returns the length written (truncated to @p size - 1). */
size_t mprof_render_hit_describe(const mprof_render_model *model,
                                 const mprof_render_hit *hit, char *buf,
                                 size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_RENDER_H */
