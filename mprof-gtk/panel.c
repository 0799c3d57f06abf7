/*
 * mprof-gtk — the kernel panels.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "panel.h"

struct _MprofGtkPanel {
  GtkDrawingArea parent_instance;
  MprofGtkViewState *state;
  gulong changed_handler;
  int tab;
  GtkAdjustment *vadj;
  gboolean syncing;
  double drag_scroll_y;
};

G_DEFINE_FINAL_TYPE(MprofGtkPanel, mprof_gtk_panel, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_HOVER, SIGNAL_COUNT };
static guint signals[SIGNAL_COUNT];

static mprof_render_view current_view(MprofGtkPanel *self) {
  mprof_render_view v = *mprof_gtk_view_state_get_view(self->state);
  v.scroll_y = gtk_adjustment_get_value(self->vadj);
  return v;
}

static void sync_adjustment(MprofGtkPanel *self) {
  mprof_render_view v = current_view(self);
  double width = gtk_widget_get_width(GTK_WIDGET(self));
  double page = gtk_widget_get_height(GTK_WIDGET(self));
  if (page < 1)
    page = 1;
  double content = mprof_render_content_height(
      mprof_gtk_view_state_get_model(self->state), &v, self->tab, width);
  if (content < page)
    content = page;
  double value = v.scroll_y;
  if (value > content - page)
    value = content - page;
  if (value < 0)
    value = 0;
  self->syncing = TRUE;
  gtk_adjustment_configure(self->vadj, value, 0, content, 40, page * 0.9, page);
  self->syncing = FALSE;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height,
                 gpointer data) {
  (void)data;
  MprofGtkPanel *self = MPROF_GTK_PANEL(area);
  mprof_render_view v = current_view(self);
  mprof_render_draw(cr, mprof_gtk_view_state_get_model(self->state), &v,
                    self->tab, width, height);
}

static void resize(GtkDrawingArea *area, int width, int height) {
  (void)width;
  (void)height;
  sync_adjustment(MPROF_GTK_PANEL(area));
}

static void on_state_changed(MprofGtkViewState *state, guint what,
                             gpointer data) {
  (void)state;
  MprofGtkPanel *self = data;
  if (what & MPROF_GTK_CHANGED_KERNEL) {
    /* A new kernel starts at the top of its page. */
    self->syncing = TRUE;
    gtk_adjustment_set_value(self->vadj, 0);
    self->syncing = FALSE;
  }
  if (what & (MPROF_GTK_CHANGED_KERNEL | MPROF_GTK_CHANGED_SELECTION)) {
    sync_adjustment(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
  }
}

static void on_vadj_changed(GtkAdjustment *adj, gpointer data) {
  (void)adj;
  MprofGtkPanel *self = data;
  if (!self->syncing)
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static gboolean on_scroll(GtkEventControllerScroll *controller, double dx,
                          double dy, gpointer data) {
  (void)controller;
  (void)dx;
  MprofGtkPanel *self = data;
  gtk_adjustment_set_value(self->vadj,
                           gtk_adjustment_get_value(self->vadj) + dy * 48);
  return TRUE;
}

static void on_motion(GtkEventControllerMotion *controller, double x, double y,
                      gpointer data) {
  (void)controller;
  MprofGtkPanel *self = data;
  mprof_render_view v = current_view(self);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(self->state);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, self->tab,
                        gtk_widget_get_width(GTK_WIDGET(self)),
                        gtk_widget_get_height(GTK_WIDGET(self)), x, y, &hit);
  char text[1024];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  g_signal_emit(self, signals[SIGNAL_HOVER], 0, text);
}

static void on_leave(GtkEventControllerMotion *controller, gpointer data) {
  (void)controller;
  g_signal_emit(data, signals[SIGNAL_HOVER], 0, "");
}

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y,
                          gpointer data) {
  (void)gesture;
  (void)x;
  (void)y;
  MprofGtkPanel *self = data;
  self->drag_scroll_y = gtk_adjustment_get_value(self->vadj);
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy,
                           gpointer data) {
  (void)gesture;
  (void)dx;
  MprofGtkPanel *self = data;
  gtk_adjustment_set_value(self->vadj, self->drag_scroll_y - dy);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y,
                                 gboolean keyboard, GtkTooltip *tooltip) {
  (void)keyboard;
  MprofGtkPanel *self = MPROF_GTK_PANEL(widget);
  mprof_render_view v = current_view(self);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(self->state);
  mprof_render_hit hit;
  mprof_render_hit_test(m, &v, self->tab, gtk_widget_get_width(widget),
                        gtk_widget_get_height(widget), x, y, &hit);
  if (hit.kind != MPROF_HIT_PC)
    return FALSE;
  char text[1024];
  mprof_render_hit_describe(m, &hit, text, sizeof text);
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void dispose(GObject *object) {
  MprofGtkPanel *self = MPROF_GTK_PANEL(object);
  if (self->state && self->changed_handler)
    g_signal_handler_disconnect(self->state, self->changed_handler);
  self->changed_handler = 0;
  g_clear_object(&self->state);
  g_clear_object(&self->vadj);
  G_OBJECT_CLASS(mprof_gtk_panel_parent_class)->dispose(object);
}

static void mprof_gtk_panel_class_init(MprofGtkPanelClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = dispose;
  GTK_DRAWING_AREA_CLASS(klass)->resize = resize;
  GTK_WIDGET_CLASS(klass)->query_tooltip = on_query_tooltip;
  signals[SIGNAL_HOVER] =
      g_signal_new("hover", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                   NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void mprof_gtk_panel_init(MprofGtkPanel *self) {
  GtkWidget *widget = GTK_WIDGET(self);
  gtk_widget_set_hexpand(widget, TRUE);
  gtk_widget_set_vexpand(widget, TRUE);
  gtk_widget_set_has_tooltip(widget, TRUE);
  self->vadj = g_object_ref_sink(gtk_adjustment_new(0, 0, 1, 1, 1, 1));
  g_signal_connect(self->vadj, "value-changed", G_CALLBACK(on_vadj_changed),
                   self);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self), draw, NULL, NULL);

  GtkEventController *scroll =
      gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(widget, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(widget, motion);

  GtkGesture *drag = gtk_gesture_drag_new();
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));
}

GtkWidget *mprof_gtk_panel_new(MprofGtkViewState *state, int tab) {
  MprofGtkPanel *self = g_object_new(MPROF_GTK_TYPE_PANEL, NULL);
  self->state = g_object_ref(state);
  self->tab = tab;
  self->changed_handler =
      g_signal_connect(state, "changed", G_CALLBACK(on_state_changed), self);
  return GTK_WIDGET(self);
}

int mprof_gtk_panel_get_tab(MprofGtkPanel *self) { return self->tab; }

GtkAdjustment *mprof_gtk_panel_get_vadjustment(MprofGtkPanel *self) {
  return self->vadj;
}
