/*
 * mprof-gtk — actions: what the keys do, the same as the mouse does.
 *
 * SPDX-License-Identifier: MIT
 */
#include "actions.h"

#define ZOOM_STEP 1.5
#define PAN_STEP 0.15
#define ROW_STEP 4.0

static MprofGtkViewState *state_of(gpointer window) {
  return mprof_gtk_window_get_state(MPROF_GTK_WINDOW(window));
}

static void zoom_in(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (state_of(window))
    mprof_gtk_view_state_zoom(state_of(window), 0.5, ZOOM_STEP);
}

static void zoom_out(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (state_of(window))
    mprof_gtk_view_state_zoom(state_of(window), 0.5, 1.0 / ZOOM_STEP);
}

static void zoom_reset(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (!state_of(window))
    return;
  /* On a span view: its kernel's spans; elsewhere the whole trace. */
  int tab = mprof_gtk_window_get_tab(MPROF_GTK_WINDOW(window));
  if (mprof_render_tab_is_span(tab))
    mprof_gtk_view_state_fit_spans(state_of(window));
  else
    mprof_gtk_view_state_reset(state_of(window));
}

static void pan_left(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (state_of(window))
    mprof_gtk_view_state_pan(state_of(window), -PAN_STEP);
}

static void pan_right(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (state_of(window))
    mprof_gtk_view_state_pan(state_of(window), PAN_STEP);
}

static void rows(gpointer window, double delta) {
  MprofGtkViewState *state = state_of(window);
  if (state)
    mprof_gtk_view_state_set_row_height(
        state, mprof_gtk_view_state_get_view(state)->row_height + delta);
}

static void rows_taller(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  rows(window, ROW_STEP);
}

static void rows_shorter(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  rows(window, -ROW_STEP);
}

static void show_tab(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  mprof_gtk_window_set_tab(
      MPROF_GTK_WINDOW(window),
      mprof_render_tab_parse(g_variant_get_string(p, NULL)));
}

static void close_window(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  gtk_window_close(GTK_WINDOW(window));
}

static const GActionEntry entries[] = {
    {"zoom-in", zoom_in, NULL, NULL, NULL, {0}},
    {"zoom-out", zoom_out, NULL, NULL, NULL, {0}},
    {"zoom-reset", zoom_reset, NULL, NULL, NULL, {0}},
    {"pan-left", pan_left, NULL, NULL, NULL, {0}},
    {"pan-right", pan_right, NULL, NULL, NULL, {0}},
    {"rows-taller", rows_taller, NULL, NULL, NULL, {0}},
    {"rows-shorter", rows_shorter, NULL, NULL, NULL, {0}},
    {"tab", show_tab, "s", NULL, NULL, {0}},
    {"close", close_window, NULL, NULL, NULL, {0}},
};

void mprof_gtk_actions_install(MprofGtkWindow *window) {
  g_action_map_add_action_entries(G_ACTION_MAP(window), entries,
                                  G_N_ELEMENTS(entries), window);
}

void mprof_gtk_actions_set_accels(GtkApplication *app) {
  static const struct {
    const char *action;
    const char *keys[6];
  } accels[] = {
      {"win.zoom-in", {"plus", "equal", "KP_Add", "w", "<Shift>plus", NULL}},
      {"win.zoom-out", {"minus", "KP_Subtract", "s", NULL}},
      {"win.zoom-reset", {"0", "KP_0", NULL}},
      {"win.pan-left", {"a", "Left", NULL}},
      {"win.pan-right", {"d", "Right", NULL}},
      {"win.rows-taller", {"<Shift>Up", NULL}},
      {"win.rows-shorter", {"<Shift>Down", NULL}},
      {"win.tab('trace')", {"<Alt>1", NULL}},
      {"win.tab('summary')", {"<Alt>2", NULL}},
      {"win.tab('hotspots')", {"<Alt>3", NULL}},
      {"win.tab('flame')", {"<Alt>4", NULL}},
      {"win.tab('raster')", {"<Alt>5", NULL}},
      {"win.tab('mega')", {"<Alt>6", NULL}},
      {"win.tab('density')", {"<Alt>7", NULL}},
      {"win.tab('activity')", {"<Alt>8", NULL}},
      {"win.close", {"<Control>w", "<Control>q", NULL}},
      {"win.open", {"<Control>o", NULL}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(accels); i++)
    gtk_application_set_accels_for_action(app, accels[i].action,
                                          accels[i].keys);
}
