/*
 * mprof-gtk — the view state object.
 *
 * SPDX-License-Identifier: MIT
 */
#include "viewstate.h"

struct _MprofGtkViewState {
  GObject parent_instance;
  const mprof_render_model *model;
  mprof_render_view view;
  mprof_render_limits limits;
  char *search;      /* view.search points here */
  guint8 *row_state; /* view.row_state: a byte per Trace row */
};

G_DEFINE_FINAL_TYPE(MprofGtkViewState, mprof_gtk_view_state, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, SIGNAL_COUNT };
static guint signals[SIGNAL_COUNT];

static void finalize(GObject *object) {
  MprofGtkViewState *self = MPROF_GTK_VIEW_STATE(object);
  g_free(self->search);
  g_free(self->row_state);
  G_OBJECT_CLASS(mprof_gtk_view_state_parent_class)->finalize(object);
}

static void mprof_gtk_view_state_class_init(MprofGtkViewStateClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = finalize;
  /* changed(guint what): MprofGtkChange bits. */
  signals[SIGNAL_CHANGED] =
      g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                   NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void mprof_gtk_view_state_init(MprofGtkViewState *self) { (void)self; }

MprofGtkViewState *mprof_gtk_view_state_new(const mprof_render_model *model) {
  MprofGtkViewState *self = g_object_new(MPROF_GTK_TYPE_VIEW_STATE, NULL);
  self->model = model;
  mprof_render_view_init(&self->view, model);
  mprof_render_model_limits(model, &self->limits);
  self->row_state = g_malloc0(mprof_render_row_count(model) + 1);
  self->view.row_state = self->row_state;
  /* The window lists the selected range's kernels under the Trace, every
   * one, in a box that scrolls: no painted panel over the rows. */
  self->view.no_selection_panel = 1;
  return self;
}

static void emit(MprofGtkViewState *self, guint what) {
  if (what)
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0, what);
}

const mprof_render_model *
mprof_gtk_view_state_get_model(MprofGtkViewState *self) {
  return self->model;
}

const mprof_render_view *
mprof_gtk_view_state_get_view(MprofGtkViewState *self) {
  return &self->view;
}

const mprof_render_limits *
mprof_gtk_view_state_get_limits(MprofGtkViewState *self) {
  return &self->limits;
}

/* Emit TIME only when the range moved. */
static void time_changed_since(MprofGtkViewState *self, gint64 start,
                               gint64 end) {
  if (self->view.start_ns != start || self->view.end_ns != end)
    emit(self, MPROF_GTK_CHANGED_TIME);
}

void mprof_gtk_view_state_zoom(MprofGtkViewState *self, double fraction,
                               double factor) {
  gint64 s = self->view.start_ns, e = self->view.end_ns;
  mprof_render_view_zoom(&self->view, &self->limits, fraction, factor);
  time_changed_since(self, s, e);
}

void mprof_gtk_view_state_pan(MprofGtkViewState *self, double fraction) {
  gint64 s = self->view.start_ns, e = self->view.end_ns;
  mprof_render_view_pan(&self->view, &self->limits, fraction);
  time_changed_since(self, s, e);
}

void mprof_gtk_view_state_set_range(MprofGtkViewState *self, gint64 start_ns,
                                    gint64 end_ns) {
  gint64 s = self->view.start_ns, e = self->view.end_ns;
  self->view.start_ns = start_ns;
  self->view.end_ns = end_ns;
  mprof_render_view_clamp(&self->view, &self->limits);
  time_changed_since(self, s, e);
}

void mprof_gtk_view_state_reset(MprofGtkViewState *self) {
  mprof_gtk_view_state_set_range(self, self->limits.min_ns,
                                 self->limits.max_ns);
}

/* A row height into @p field, clamped to [min, max]; ROWS when it moved. */
static void set_height(MprofGtkViewState *self, double *field, double height,
                       double min, double max) {
  if (!(height > min))
    height = min;
  if (height > max)
    height = max;
  if (height == *field)
    return;
  *field = height;
  emit(self, MPROF_GTK_CHANGED_ROWS);
}

void mprof_gtk_view_state_set_row_height(MprofGtkViewState *self,
                                         double height) {
  set_height(self, &self->view.row_height, height, MPROF_RENDER_ROW_MIN,
             MPROF_RENDER_ROW_MAX);
}

void mprof_gtk_view_state_set_sm_height(MprofGtkViewState *self,
                                        double height) {
  set_height(self, &self->view.sm_height, height, 0, 2000);
}

void mprof_gtk_view_state_set_activity_height(MprofGtkViewState *self,
                                              double height) {
  set_height(self, &self->view.activity_height, height, 0, 2000);
}

void mprof_gtk_view_state_set_activity(MprofGtkViewState *self, int rows,
                                       int depth) {
  if (rows < 0 || rows >= MPROF_ACTIVITY_ROWS_COUNT)
    rows = self->view.activity_rows;
  if (depth < 0 || depth >= MPROF_ACTIVITY_DEPTH_COUNT)
    depth = self->view.activity_depth;
  if (rows == self->view.activity_rows && depth == self->view.activity_depth)
    return;
  if (rows != self->view.activity_rows)
    self->view.activity_height = 0; /* another number of rows: fit them */
  self->view.activity_rows = rows;
  self->view.activity_depth = depth;
  emit(self, MPROF_GTK_CHANGED_ROWS);
}

void mprof_gtk_view_state_fit_spans(MprofGtkViewState *self) {
  gint64 s = self->view.start_ns, e = self->view.end_ns;
  mprof_render_view_fit_spans(&self->view, self->model);
  time_changed_since(self, s, e);
}

void mprof_gtk_view_state_open_span_tab(MprofGtkViewState *self,
                                        int keep_kernel) {
  mprof_render_view v = self->view;
  mprof_render_view_open_span_tab(&v, self->model, keep_kernel);
  mprof_gtk_view_state_select_kernel(self, v.kernel);
  mprof_gtk_view_state_fit_spans(self);
}

void mprof_gtk_view_state_select_kernel(MprofGtkViewState *self, int kernel) {
  if (kernel < -1 || kernel >= (int)mprof_render_kernel_count(self->model))
    kernel = -1;
  if (kernel == self->view.kernel)
    return;
  self->view.kernel = kernel;
  /* Its Source tab starts at its hottest line (marked when first shown). */
  self->view.source_file = 0;
  self->view.source_line = 0;
  self->view.source_pc = 0;
  emit(self, MPROF_GTK_CHANGED_KERNEL);
}

void mprof_gtk_view_state_select_launch(MprofGtkViewState *self,
                                        gint64 launch) {
  guint what = 0;
  if (launch != self->view.launch) {
    self->view.launch = launch;
    what |= MPROF_GTK_CHANGED_SELECTION;
  }
  if (launch >= 0) {
    int kernel = mprof_render_launch_kernel(self->model, (size_t)launch);
    if (kernel != self->view.kernel) {
      self->view.kernel = kernel;
      self->view.source_file = 0;
      self->view.source_line = 0;
      self->view.source_pc = 0;
      what |= MPROF_GTK_CHANGED_KERNEL;
    }
  }
  emit(self, what);
}

void mprof_gtk_view_state_hover_launch(MprofGtkViewState *self, gint64 launch) {
  if (launch == self->view.hover_launch)
    return;
  self->view.hover_launch = launch;
  emit(self, MPROF_GTK_CHANGED_SELECTION);
}

void mprof_gtk_view_state_set_selection(MprofGtkViewState *self,
                                        gint64 start_ns, gint64 end_ns) {
  if (end_ns <= start_ns)
    start_ns = end_ns = 0;
  if (start_ns == self->view.sel_start_ns && end_ns == self->view.sel_end_ns)
    return;
  self->view.sel_start_ns = start_ns;
  self->view.sel_end_ns = end_ns;
  emit(self, MPROF_GTK_CHANGED_SELECTION);
}

void mprof_gtk_view_state_set_search(MprofGtkViewState *self,
                                     const char *text) {
  if (!text || !*text)
    text = NULL;
  if (g_strcmp0(text, self->search) == 0)
    return;
  g_free(self->search);
  self->search = g_strdup(text);
  self->view.search = self->search;
  emit(self, MPROF_GTK_CHANGED_SEARCH);
}

void mprof_gtk_view_state_toggle_row(MprofGtkViewState *self, gint row,
                                     guint flag) {
  if (row < 0 || (size_t)row >= mprof_render_row_count(self->model))
    return;
  self->row_state[row] ^= (guint8)flag;
  emit(self, MPROF_GTK_CHANGED_ROWS);
}

void mprof_gtk_view_state_show_rows(MprofGtkViewState *self) {
  size_t n = mprof_render_row_count(self->model);
  gboolean any = FALSE;
  for (size_t i = 0; i < n; i++) {
    any |= (self->row_state[i] & MPROF_ROW_HIDDEN) != 0;
    self->row_state[i] &= (guint8)~MPROF_ROW_HIDDEN;
  }
  if (any)
    emit(self, MPROF_GTK_CHANGED_ROWS);
}

int mprof_gtk_view_state_source_hot(MprofGtkViewState *self, int step) {
  int rank = mprof_render_view_source_hot(&self->view, self->model, step);
  if (rank >= 0)
    emit(self, MPROF_GTK_CHANGED_SOURCE);
  return rank;
}

gboolean mprof_gtk_view_state_source_pc(MprofGtkViewState *self, int kernel,
                                        guint32 offset) {
  mprof_gtk_view_state_select_kernel(self, kernel);
  if (self->view.kernel != kernel)
    return FALSE;
  /* Without a line, a kernel without lines still marks the instruction. */
  gboolean found =
      mprof_render_view_source_pc(&self->view, self->model, offset) == 0;
  if (found || self->view.source_pc == offset + 1)
    emit(self, MPROF_GTK_CHANGED_SOURCE);
  return found;
}

void mprof_gtk_view_state_source_file(MprofGtkViewState *self, int file) {
  if (mprof_render_view_source_line(&self->view, self->model, file, 0) == 0)
    emit(self, MPROF_GTK_CHANGED_SOURCE);
}

gsize mprof_gtk_view_state_source_find(MprofGtkViewState *self,
                                       const char *text, int direction) {
  gsize found =
      mprof_render_view_source_find(&self->view, self->model, text, direction);
  emit(self, MPROF_GTK_CHANGED_SOURCE);
  return found;
}
