/*
 * mprof-gtk — the timeline widget, and the pages of the other tabs.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "timeline.h"

struct _MprofGtkTimeline {
  GtkDrawingArea parent_instance;
  MprofGtkViewState *state;
  int tab;
  gboolean page; /* Summary, Hotspots, Flame or Raster: no time axis */
  gulong changed_handler;
  GtkAdjustment *hadj, *vadj;
  gboolean syncing; /* updating adjustments from the state */
  double pointer_x, pointer_y;
  gboolean pointer_inside;
  /* Drag origin. */
  gint64 drag_start_ns, drag_end_ns;
  double drag_scroll_y, drag_x;
  gboolean dragging;
  gboolean selecting;  /* Shift+drag: select a time range */
  GtkWidget *row_menu; /* Trace: a row label's right-click menu */
  int menu_row;        /* the row it is about */
  double drag_y;
  /* Source: the marked line is to be scrolled into view once the page has
   * a size. */
  gboolean source_pending;
  guint source_idle; /* source_follow() after the size is given */
};

G_DEFINE_FINAL_TYPE(MprofGtkTimeline, mprof_gtk_timeline, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_OPEN_KERNEL, SIGNAL_HOVER, SIGNAL_OPEN_SOURCE, SIGNAL_COUNT };
static guint signals[SIGNAL_COUNT];

/* px per SM when a double-click opens one in Mega. */
#define OPEN_SM_PX 64.0

static void layout(MprofGtkTimeline *self, mprof_render_layout *out) {
  mprof_render_tab_layout(mprof_gtk_view_state_get_model(self->state),
                          mprof_gtk_view_state_get_view(self->state), self->tab,
                          gtk_widget_get_width(GTK_WIDGET(self)),
                          gtk_widget_get_height(GTK_WIDGET(self)), out);
  if (self->page) { /* the whole height scrolls */
    out->top = 0;
    out->bottom = gtk_widget_get_height(GTK_WIDGET(self));
  }
}

static double rows_height(MprofGtkTimeline *self) {
  mprof_render_layout l;
  layout(self, &l);
  return l.bottom - l.top > 1 ? l.bottom - l.top : 1;
}

static double rows_top(MprofGtkTimeline *self) {
  mprof_render_layout l;
  layout(self, &l);
  return l.top;
}

static double time_width(MprofGtkTimeline *self) {
  int w = gtk_widget_get_width(GTK_WIDGET(self));
  return w > MPROF_RENDER_GUTTER + 1 ? w - MPROF_RENDER_GUTTER : 1;
}

/* The state and the widget's size into the adjustments. */
static void sync_adjustments(MprofGtkTimeline *self) {
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  const mprof_render_limits *l = mprof_gtk_view_state_get_limits(self->state);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(self->state);
  self->syncing = TRUE;
  double span = (double)(v->end_ns - v->start_ns);
  gtk_adjustment_configure(self->hadj, (double)(v->start_ns - l->min_ns), 0,
                           (double)(l->max_ns - l->min_ns), span * 0.1,
                           span * 0.9, span);
  double content = mprof_render_content_height(
      m, v, self->tab, gtk_widget_get_width(GTK_WIDGET(self)));
  if (self->tab == MPROF_RENDER_TRACE)
    content += 8;
  double page = rows_height(self);
  double value = gtk_adjustment_get_value(self->vadj);
  if (value > content - page)
    value = content - page;
  if (value < 0)
    value = 0;
  gtk_adjustment_configure(self->vadj, value, 0, fmax(content, page),
                           self->tab == MPROF_RENDER_TRACE ? v->row_height
                           : self->page                    ? 40
                                                           : 24,
                           page * 0.9, page);
  self->syncing = FALSE;
}

static mprof_render_view current_view(MprofGtkTimeline *self) {
  mprof_render_view v = *mprof_gtk_view_state_get_view(self->state);
  v.scroll_y = gtk_adjustment_get_value(self->vadj);
  return v;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height,
                 gpointer data) {
  (void)data;
  MprofGtkTimeline *self = MPROF_GTK_TIMELINE(area);
  mprof_render_view v = current_view(self);
  mprof_render_draw(cr, mprof_gtk_view_state_get_model(self->state), &v,
                    self->tab, width, height);
}

/* The Source page: its marked line in view (its kernel's hottest line when
 * none is marked yet), once the page has a size: the lines of a kernel are
 * built when its Source tab is first shown, not on every kernel change. */
static void source_follow(MprofGtkTimeline *self) {
  int height = gtk_widget_get_height(GTK_WIDGET(self));
  if (self->tab != MPROF_RENDER_SOURCE || !self->source_pending ||
      height <= 0 || !gtk_widget_get_mapped(GTK_WIDGET(self)))
    return;
  self->source_pending = FALSE;
  const mprof_render_model *m = mprof_gtk_view_state_get_model(self->state);
  const mprof_render_view *marked = mprof_gtk_view_state_get_view(self->state);
  if (!marked->source_line && !marked->source_pc &&
      mprof_gtk_view_state_source_hot(self->state, 0) >= 0)
    return; /* its "changed" came back here and scrolled */
  sync_adjustments(self);
  mprof_render_view v = current_view(self);
  mprof_render_view_source_scroll(&v, m, height);
  gtk_adjustment_set_value(self->vadj, v.scroll_y);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_state_changed(MprofGtkViewState *state, guint what,
                             gpointer data) {
  (void)state;
  MprofGtkTimeline *self = data;
  if (self->tab == MPROF_RENDER_SOURCE &&
      (what & (MPROF_GTK_CHANGED_KERNEL | MPROF_GTK_CHANGED_SOURCE))) {
    if (what & MPROF_GTK_CHANGED_KERNEL)
      gtk_adjustment_set_value(self->vadj, 0);
    self->source_pending = TRUE;
    source_follow(self);
    sync_adjustments(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
    return;
  }
  if (self->page && (what & MPROF_GTK_CHANGED_KERNEL)) {
    /* A new kernel starts at the top of its page. */
    self->syncing = TRUE;
    gtk_adjustment_set_value(self->vadj, 0);
    self->syncing = FALSE;
  }
  /* A page shows one kernel, whatever the time range. */
  if (self->page &&
      !(what & (MPROF_GTK_CHANGED_KERNEL | MPROF_GTK_CHANGED_SELECTION)))
    return;
  sync_adjustments(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_hadj_changed(GtkAdjustment *adj, gpointer data) {
  MprofGtkTimeline *self = data;
  if (self->syncing)
    return;
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  const mprof_render_limits *l = mprof_gtk_view_state_get_limits(self->state);
  gint64 start = l->min_ns + (gint64)llround(gtk_adjustment_get_value(adj));
  mprof_gtk_view_state_set_range(self->state, start,
                                 start + (v->end_ns - v->start_ns));
}

static void on_vadj_changed(GtkAdjustment *adj, gpointer data) {
  (void)adj;
  MprofGtkTimeline *self = data;
  if (!self->syncing)
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static gboolean source_follow_idle(gpointer data) {
  MprofGtkTimeline *self = data;
  self->source_idle = 0;
  source_follow(self);
  return G_SOURCE_REMOVE;
}

/* From a size allocation or a map: the marking emits "changed", which
 * the bar above answers with new text and sizes, so it waits for the
 * allocation to be over. */
static void source_follow_later(MprofGtkTimeline *self) {
  if (self->tab == MPROF_RENDER_SOURCE && self->source_pending &&
      !self->source_idle)
    self->source_idle =
        g_idle_add_full(G_PRIORITY_HIGH_IDLE, source_follow_idle,
                        g_object_ref(self), g_object_unref);
}

static void resize(GtkDrawingArea *area, int width, int height) {
  (void)width;
  (void)height;
  sync_adjustments(MPROF_GTK_TIMELINE(area));
  source_follow_later(MPROF_GTK_TIMELINE(area));
}

static void on_map(GtkWidget *widget, gpointer data) {
  (void)data;
  source_follow_later(MPROF_GTK_TIMELINE(widget));
}

/* ---- input ------------------------------------------------------------ */

static void hit_at(MprofGtkTimeline *self, double x, double y,
                   mprof_render_hit *hit) {
  mprof_render_view v = current_view(self);
  mprof_render_hit_test(mprof_gtk_view_state_get_model(self->state), &v,
                        self->tab, gtk_widget_get_width(GTK_WIDGET(self)),
                        gtk_widget_get_height(GTK_WIDGET(self)), x, y, hit);
}

void mprof_gtk_timeline_scroll(MprofGtkTimeline *self, double x, double y,
                               double dx, double dy, GdkModifierType state) {
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  if (self->page) { /* a page scrolls */
    gtk_adjustment_set_value(self->vadj,
                             gtk_adjustment_get_value(self->vadj) + dy * 48);
  } else if (self->tab != MPROF_RENDER_TRACE &&
             (state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK))) {
    /* SMs (or Activity rows) taller or shorter around the pointer: tall
     * enough, Mega opens each SM into its rows. */
    double pointer = y - rows_top(self);
    mprof_render_view rows = current_view(self);
    mprof_render_view_zoom_tab_rows(
        &rows, mprof_gtk_view_state_get_model(self->state), self->tab,
        pow(1.15, -(dy + dx)), pointer, rows_height(self));
    if (self->tab == MPROF_RENDER_ACTIVITY)
      mprof_gtk_view_state_set_activity_height(self->state,
                                               rows.activity_height);
    else
      mprof_gtk_view_state_set_sm_height(self->state, rows.sm_height);
    sync_adjustments(self);
    gtk_adjustment_set_value(self->vadj, rows.scroll_y);
  } else if (state & GDK_CONTROL_MASK) {
    /* Vertical zoom around the pointer's row. */
    double pointer = y - MPROF_RENDER_RULER;
    mprof_render_view rows = current_view(self);
    mprof_render_view_zoom_rows(&rows, pow(1.15, -dy), pointer);
    mprof_gtk_view_state_set_row_height(self->state, rows.row_height);
    sync_adjustments(self);
    gtk_adjustment_set_value(self->vadj, rows.scroll_y);
  } else if (state & GDK_SHIFT_MASK) {
    /* Row height, top row anchored. */
    mprof_gtk_view_state_set_row_height(self->state,
                                        v->row_height - 2.0 * (dy + dx));
  } else {
    if (dy != 0) {
      double fraction = (x - MPROF_RENDER_GUTTER) / time_width(self);
      mprof_gtk_view_state_zoom(self->state, fraction, pow(1.25, -dy));
    }
    if (dx != 0)
      mprof_gtk_view_state_pan(self->state, dx * 0.1);
  }
}

static gboolean on_scroll(GtkEventControllerScroll *controller, double dx,
                          double dy, gpointer data) {
  MprofGtkTimeline *self = data;
  GdkModifierType state = gtk_event_controller_get_current_event_state(
      GTK_EVENT_CONTROLLER(controller));
  double x = self->pointer_inside ? self->pointer_x
                                  : MPROF_RENDER_GUTTER + time_width(self) / 2;
  double y = self->pointer_inside ? self->pointer_y : rows_top(self);
  mprof_gtk_timeline_scroll(self, x, y, dx, dy, state);
  return TRUE;
}

static void on_motion(GtkEventControllerMotion *controller, double x, double y,
                      gpointer data) {
  (void)controller;
  MprofGtkTimeline *self = data;
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_inside = TRUE;
  if (self->dragging)
    return;
  mprof_render_hit hit;
  hit_at(self, x, y, &hit);
  if (self->tab == MPROF_RENDER_TRACE)
    mprof_gtk_view_state_hover_launch(
        self->state, hit.kind == MPROF_HIT_LAUNCH || hit.kind == MPROF_HIT_PC ||
                             hit.kind == MPROF_HIT_API
                         ? hit.launch
                         : -1);
  char text[1024];
  size_t n = mprof_render_hit_describe(
      mprof_gtk_view_state_get_model(self->state), &hit, text, sizeof text);
  if (hit.kind == MPROF_HIT_PC && self->page &&
      self->tab != MPROF_RENDER_SOURCE)
    g_snprintf(text + n, sizeof text - n, " \u00b7 click: its source line");
  g_signal_emit(self, signals[SIGNAL_HOVER], 0, text);
}

static void on_leave(GtkEventControllerMotion *controller, gpointer data) {
  (void)controller;
  MprofGtkTimeline *self = data;
  self->pointer_inside = FALSE;
  if (self->tab == MPROF_RENDER_TRACE)
    mprof_gtk_view_state_hover_launch(self->state, -1);
  g_signal_emit(self, signals[SIGNAL_HOVER], 0, "");
}

static void drag_begin(MprofGtkTimeline *self, double x, double y,
                       gboolean selecting) {
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  self->drag_y = y;
  self->drag_start_ns = v->start_ns;
  self->drag_end_ns = v->end_ns;
  self->drag_scroll_y = gtk_adjustment_get_value(self->vadj);
  self->drag_x = x;
  self->dragging = FALSE;
  self->selecting = selecting;
}

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y,
                          gpointer data) {
  drag_begin(data, x, y,
             (gtk_event_controller_get_current_event_state(
                  GTK_EVENT_CONTROLLER(gesture)) &
              GDK_SHIFT_MASK) != 0);
}

/* The time at pixel @p x of the drag's starting view. */
static gint64 drag_time(MprofGtkTimeline *self, double x) {
  mprof_render_timemap map;
  mprof_render_timemap_init(&map, self->drag_start_ns, self->drag_end_ns,
                            MPROF_RENDER_GUTTER, time_width(self));
  return mprof_render_x_to_time(&map, x);
}

static void drag_update(MprofGtkTimeline *self, double dx, double dy) {
  if (self->page) { /* a page scrolls, at once */
    gtk_adjustment_set_value(self->vadj, self->drag_scroll_y - dy);
    return;
  }
  if (!self->dragging && fabs(dx) < 3 && fabs(dy) < 3)
    return;
  if (!self->dragging) {
    self->dragging = TRUE;
    gtk_widget_set_cursor_from_name(
        GTK_WIDGET(self), self->selecting ? "col-resize" : "grabbing");
  }
  if (self->selecting) {
    gint64 a = drag_time(self, self->drag_x);
    gint64 b = drag_time(self, self->drag_x + dx);
    mprof_gtk_view_state_set_selection(self->state, a < b ? a : b,
                                       a < b ? b : a);
    char span[48], text[96];
    mprof_format_duration(span, sizeof span, (double)(a < b ? b - a : a - b));
    g_snprintf(text, sizeof text, "selected %s", span);
    g_signal_emit(self, signals[SIGNAL_HOVER], 0, text);
    return;
  }
  double ns_per_px =
      (double)(self->drag_end_ns - self->drag_start_ns) / time_width(self);
  gint64 shift = (gint64)llround(dx * ns_per_px);
  mprof_gtk_view_state_set_range(self->state, self->drag_start_ns - shift,
                                 self->drag_end_ns - shift);
  gtk_adjustment_set_value(self->vadj, self->drag_scroll_y - dy);
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy,
                           gpointer data) {
  (void)gesture;
  drag_update(data, dx, dy);
}

/* A click on a page (a press and release that did not scroll it): an
 * instruction of Hotspots, Flame or Raster opens its source line. */
static void page_click(MprofGtkTimeline *self, double x, double y) {
  if (gtk_widget_get_focusable(GTK_WIDGET(self)))
    gtk_widget_grab_focus(GTK_WIDGET(self));
  if (self->tab != MPROF_RENDER_HOTSPOTS && self->tab != MPROF_RENDER_FLAME &&
      self->tab != MPROF_RENDER_RASTER)
    return;
  mprof_render_hit hit;
  hit_at(self, x, y, &hit);
  const mprof_render_kernel *k = mprof_render_kernel_at(
      mprof_gtk_view_state_get_model(self->state), (size_t)hit.kernel);
  if (hit.kind == MPROF_HIT_PC && k && hit.pc >= 0 &&
      (size_t)hit.pc < k->pc_count)
    g_signal_emit(self, signals[SIGNAL_OPEN_SOURCE], 0, hit.kernel,
                  k->pcs[hit.pc].offset);
}

static void drag_end(MprofGtkTimeline *self, double dx, double dy) {
  if (self->dragging)
    gtk_widget_set_cursor(GTK_WIDGET(self), NULL);
  self->dragging = FALSE;
  if (self->page && fabs(dx) < 3 && fabs(dy) < 3)
    page_click(self, self->drag_x, self->drag_y);
}

static void on_drag_end(GtkGestureDrag *gesture, double dx, double dy,
                        gpointer data) {
  (void)gesture;
  drag_end(data, dx, dy);
}

void mprof_gtk_timeline_drag(MprofGtkTimeline *self, double x, double y,
                             double dx, double dy, GdkModifierType state) {
  drag_begin(self, x, y, (state & GDK_SHIFT_MASK) != 0);
  drag_update(self, dx, dy);
  drag_end(self, dx, dy);
}

void mprof_gtk_timeline_hover(MprofGtkTimeline *self, double x, double y) {
  on_motion(NULL, x, y, self);
}

/* ---- Trace rows: fold a band, hide a row -------------------------------- */

static void on_hide_row(GtkButton *button, gpointer data) {
  (void)button;
  MprofGtkTimeline *self = data;
  gtk_popover_popdown(GTK_POPOVER(self->row_menu));
  mprof_gtk_view_state_toggle_row(self->state, self->menu_row,
                                  MPROF_ROW_HIDDEN);
  sync_adjustments(self);
}

static void on_show_rows(GtkButton *button, gpointer data) {
  (void)button;
  MprofGtkTimeline *self = data;
  gtk_popover_popdown(GTK_POPOVER(self->row_menu));
  mprof_gtk_view_state_show_rows(self->state);
  sync_adjustments(self);
}

static GtkWidget *menu_item(const char *label, GCallback fn, gpointer data) {
  GtkWidget *b = gtk_button_new_with_label(label);
  gtk_widget_add_css_class(b, "flat");
  gtk_widget_set_halign(gtk_button_get_child(GTK_BUTTON(b)), GTK_ALIGN_START);
  g_signal_connect(b, "clicked", fn, data);
  return b;
}

/* A right-click on a Trace row's label: hide it (a band: with its rows),
 * or show the hidden ones again. */
static void open_row_menu(MprofGtkTimeline *self, int row, double x, double y) {
  if (!self->row_menu) {
    self->row_menu = gtk_popover_new();
    gtk_widget_set_parent(self->row_menu, GTK_WIDGET(self));
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_box_append(GTK_BOX(box),
                   menu_item("Hide this row", G_CALLBACK(on_hide_row), self));
    gtk_box_append(GTK_BOX(box), menu_item("Show hidden rows",
                                           G_CALLBACK(on_show_rows), self));
    gtk_popover_set_child(GTK_POPOVER(self->row_menu), box);
    gtk_popover_set_has_arrow(GTK_POPOVER(self->row_menu), FALSE);
  }
  self->menu_row = row;
  GdkRectangle at = {(int)x, (int)y, 1, 1};
  gtk_popover_set_pointing_to(GTK_POPOVER(self->row_menu), &at);
  gtk_popover_popup(GTK_POPOVER(self->row_menu));
}

GtkWidget *mprof_gtk_timeline_get_row_menu(MprofGtkTimeline *self) {
  return self->row_menu;
}

void mprof_gtk_timeline_click(MprofGtkTimeline *self, double x, double y,
                              int n_press, guint button) {
  if (self->page)
    return;
  gtk_widget_grab_focus(GTK_WIDGET(self));
  mprof_render_hit hit;
  hit_at(self, x, y, &hit);
  const mprof_render_row *row =
      self->tab == MPROF_RENDER_TRACE && hit.row >= 0
          ? mprof_render_row_at(mprof_gtk_view_state_get_model(self->state),
                                (size_t)hit.row)
          : NULL;
  if (row && button == GDK_BUTTON_SECONDARY) {
    open_row_menu(self, hit.row, x, y);
    return;
  }
  if (button != GDK_BUTTON_PRIMARY)
    return;
  if (row && n_press == 1 &&
      (row->kind == MPROF_ROW_DEVICE || row->kind == MPROF_ROW_THREAD)) {
    /* A click on a band folds its rows into it, or back out. */
    mprof_gtk_view_state_toggle_row(self->state, hit.row, MPROF_ROW_COLLAPSED);
    sync_adjustments(self);
    return;
  }
  if (hit.kind == MPROF_HIT_LAUNCH || hit.kind == MPROF_HIT_PC ||
      (hit.kind == MPROF_HIT_API && hit.launch >= 0)) {
    mprof_gtk_view_state_select_launch(self->state, hit.launch);
    if (n_press == 2)
      g_signal_emit(self, signals[SIGNAL_OPEN_KERNEL], 0, hit.kernel);
  } else if (hit.kind == MPROF_HIT_MERGED && n_press == 2) {
    /* Zoom onto a merged run so that its launches separate. */
    const mprof_trace *t =
        mprof_render_model_trace(mprof_gtk_view_state_get_model(self->state));
    const mprof_launch_record *a =
        mprof_trace_stream_launch(t, hit.stream, hit.first);
    const mprof_launch_record *b =
        mprof_trace_stream_launch(t, hit.stream, hit.last - 1);
    if (a && b) {
      /* Times past 2^62 ns (a corrupt end) are drawn there: held there,
       * the run's span and its margins stay inside a gint64. */
      gint64 from = (gint64)MIN(a->start, (guint64)1 << 62);
      gint64 to = (gint64)MIN(MAX(b->end, a->start), (guint64)1 << 62);
      gint64 pad = (to - from) / 20 + 1;
      mprof_gtk_view_state_set_range(self->state, from - pad, to + pad);
    }
  } else if (self->tab == MPROF_RENDER_MEGA && n_press == 2 &&
             (hit.kind == MPROF_HIT_SM || hit.kind == MPROF_HIT_SPAN ||
              hit.kind == MPROF_HIT_SPANS || hit.kind == MPROF_HIT_LABEL ||
              hit.kind == MPROF_HIT_PROJECTED)) {
    /* Open the SM under the pointer into its rows, or back to bars. */
    const mprof_render_model *m = mprof_gtk_view_state_get_model(self->state);
    mprof_render_view v = current_view(self);
    double pointer = y - rows_top(self);
    double band = mprof_render_row_unit(m, &v, self->tab, rows_height(self));
    double open = OPEN_SM_PX;
    double scroll = 0;
    if (band < open) {
      scroll = (v.scroll_y + pointer) * (open / band) - pointer;
      mprof_gtk_view_state_set_sm_height(self->state, open);
    } else {
      mprof_gtk_view_state_set_sm_height(self->state, 0);
    }
    sync_adjustments(self);
    gtk_adjustment_set_value(self->vadj, scroll > 0 ? scroll : 0);
  } else if (hit.kind == MPROF_HIT_ROW || hit.kind == MPROF_HIT_NONE) {
    mprof_gtk_view_state_select_launch(self->state, -1);
    mprof_gtk_view_state_set_selection(self->state, 0, 0);
  }
}

static void on_click(GtkGestureClick *gesture, int n_press, double x, double y,
                     gpointer data) {
  mprof_gtk_timeline_click(
      data, x, y, n_press,
      gtk_gesture_single_get_current_button(GTK_GESTURE_SINGLE(gesture)));
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y,
                                 gboolean keyboard, GtkTooltip *tooltip) {
  (void)keyboard;
  MprofGtkTimeline *self = MPROF_GTK_TIMELINE(widget);
  mprof_render_hit hit;
  hit_at(self, x, y, &hit);
  if (hit.kind != MPROF_HIT_LAUNCH && hit.kind != MPROF_HIT_MERGED &&
      hit.kind != MPROF_HIT_MEMOP && hit.kind != MPROF_HIT_PC &&
      hit.kind != MPROF_HIT_SPAN && hit.kind != MPROF_HIT_SPANS &&
      hit.kind != MPROF_HIT_CELL && hit.kind != MPROF_HIT_PROJECTED)
    return FALSE;
  char text[1024];
  mprof_render_hit_describe(mprof_gtk_view_state_get_model(self->state), &hit,
                            text, sizeof text);
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

/* ---- life cycle ------------------------------------------------------- */

static void dispose(GObject *object) {
  MprofGtkTimeline *self = MPROF_GTK_TIMELINE(object);
  if (self->state && self->changed_handler)
    g_signal_handler_disconnect(self->state, self->changed_handler);
  self->changed_handler = 0;
  g_clear_object(&self->state);
  g_clear_pointer(&self->row_menu, gtk_widget_unparent);
  g_clear_object(&self->hadj);
  g_clear_object(&self->vadj);
  G_OBJECT_CLASS(mprof_gtk_timeline_parent_class)->dispose(object);
}

static void mprof_gtk_timeline_class_init(MprofGtkTimelineClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = dispose;
  GTK_DRAWING_AREA_CLASS(klass)->resize = resize;
  GTK_WIDGET_CLASS(klass)->query_tooltip = on_query_tooltip;
  signals[SIGNAL_OPEN_KERNEL] =
      g_signal_new("open-kernel", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                   0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIGNAL_HOVER] =
      g_signal_new("hover", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                   NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  /* open-source(int kernel, guint offset): an instruction was clicked. */
  signals[SIGNAL_OPEN_SOURCE] = g_signal_new(
      "open-source", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
      NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_UINT);
}

/* What mprof_gtk_timeline_key() below does, for the keys window. */
const MprofGtkKeyHelp mprof_gtk_timeline_keys[] = {
    {"F, Enter", "zoom to the selected range, else the selected launch"},
    {"Esc", "clear the selected range and launch"},
    {"Enter, Ctrl+G", "in the search: the next match (selected, shown)"},
    {"Ctrl+Shift+G", "in the search: the previous match"},
    {"Esc", "in the search: clear it and close the bar"},
    {NULL, NULL},
};

gboolean mprof_gtk_timeline_key(MprofGtkTimeline *self, guint keyval,
                                GdkModifierType state) {
  if (self->page || (state & (GDK_CONTROL_MASK | GDK_ALT_MASK)))
    return FALSE;
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  switch (keyval) {
  case GDK_KEY_f:
  case GDK_KEY_F:
  case GDK_KEY_Return:
  case GDK_KEY_KP_Enter: {
    gint64 a = v->sel_start_ns, b = v->sel_end_ns;
    if (b <= a && v->launch >= 0) {
      size_t n;
      const mprof_launch_record *l = mprof_trace_launches(
          mprof_render_model_trace(mprof_gtk_view_state_get_model(self->state)),
          &n);
      if ((size_t)v->launch >= n)
        return FALSE;
      /* The launch with a tenth of its length on each side. */
      gint64 room = (gint64)(l[v->launch].end - l[v->launch].start) / 10 + 1;
      a = (gint64)l[v->launch].start - room;
      b = (gint64)l[v->launch].end + room;
    }
    if (b <= a)
      return FALSE;
    mprof_gtk_view_state_set_range(self->state, a, b);
    return TRUE;
  }
  case GDK_KEY_Escape:
    if (v->sel_end_ns <= v->sel_start_ns && v->launch < 0)
      return FALSE;
    mprof_gtk_view_state_set_selection(self->state, 0, 0);
    mprof_gtk_view_state_select_launch(self->state, -1);
    return TRUE;
  default: return FALSE;
  }
}

static gboolean on_key(GtkEventControllerKey *key, guint keyval, guint keycode,
                       GdkModifierType state, gpointer data) {
  (void)key;
  (void)keycode;
  return mprof_gtk_timeline_key(MPROF_GTK_TIMELINE(data), keyval, state);
}

static void mprof_gtk_timeline_init(MprofGtkTimeline *self) {
  GtkWidget *widget = GTK_WIDGET(self);
  gtk_widget_set_hexpand(widget, TRUE);
  gtk_widget_set_vexpand(widget, TRUE);
  gtk_widget_set_has_tooltip(widget, TRUE);
  self->hadj = g_object_ref_sink(gtk_adjustment_new(0, 0, 1, 1, 1, 1));
  self->vadj = g_object_ref_sink(gtk_adjustment_new(0, 0, 1, 1, 1, 1));
  g_signal_connect(self->hadj, "value-changed", G_CALLBACK(on_hadj_changed),
                   self);
  g_signal_connect(self->vadj, "value-changed", G_CALLBACK(on_vadj_changed),
                   self);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self), draw, NULL, NULL);
  g_signal_connect(widget, "map", G_CALLBACK(on_map), NULL);

  GtkEventController *scroll =
      gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(widget, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(widget, motion);

  GtkGesture *drag = gtk_gesture_drag_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), 0);
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  g_signal_connect(drag, "drag-end", G_CALLBACK(on_drag_end), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));

  GtkGesture *click = gtk_gesture_click_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), 0); /* any */
  g_signal_connect(click, "pressed", G_CALLBACK(on_click), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));

  /* Keys while the timeline has the focus (a click gives it). */
  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
  gtk_widget_add_controller(widget, keys);
}

GtkWidget *mprof_gtk_timeline_new(MprofGtkViewState *state, int tab) {
  MprofGtkTimeline *self = g_object_new(MPROF_GTK_TYPE_TIMELINE, NULL);
  self->state = g_object_ref(state);
  self->tab = tab;
  self->page = !mprof_render_tab_is_timeline(tab);
  /* The Source page takes keys too (n, N: mprof_gtk_source_page). */
  gtk_widget_set_focusable(GTK_WIDGET(self),
                           !self->page || tab == MPROF_RENDER_SOURCE);
  self->source_pending = tab == MPROF_RENDER_SOURCE;
  self->changed_handler =
      g_signal_connect(state, "changed", G_CALLBACK(on_state_changed), self);
  sync_adjustments(self);
  return GTK_WIDGET(self);
}

GtkAdjustment *mprof_gtk_timeline_get_hadjustment(MprofGtkTimeline *self) {
  return self->hadj;
}

GtkAdjustment *mprof_gtk_timeline_get_vadjustment(MprofGtkTimeline *self) {
  return self->vadj;
}
