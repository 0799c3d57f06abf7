/*
 * mprof-gtk — actions: what the keys do, the same as the mouse does.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "actions.h"
#include "search.h"
#include "source_page.h"
#include "timeline.h"

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

static void find(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  mprof_gtk_window_find(MPROF_GTK_WINDOW(window));
}

static void close_window(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  gtk_window_close(GTK_WINDOW(window));
}

static void show_keys(GSimpleAction *a, GVariant *p, gpointer window);

static void show_rows(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  if (state_of(window))
    mprof_gtk_view_state_show_rows(state_of(window));
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
    {"find", find, NULL, NULL, NULL, {0}},
    {"keys", show_keys, NULL, NULL, NULL, {0}},
    {"show-rows", show_rows, NULL, NULL, NULL, {0}},
};

void mprof_gtk_actions_install(MprofGtkWindow *window) {
  g_action_map_add_action_entries(G_ACTION_MAP(window), entries,
                                  G_N_ELEMENTS(entries), window);
}

/* Every window action's keys and what they do: the accelerators and the
 * keys window (F1, ?) are both made from this table. */
static const struct {
  const char *action;
  const char *keys[6];
  const char *what;
} bindings[] = {
    {"win.zoom-in",
     {"plus", "equal", "KP_Add", "w", "<Shift>plus", NULL},
     "zoom time in"},
    {"win.zoom-out", {"minus", "KP_Subtract", "s", NULL}, "zoom time out"},
    {"win.zoom-reset",
     {"0", "KP_0", NULL},
     "the whole trace (Mega, Density, Activity: the kernel's spans)"},
    {"win.pan-left", {"a", "Left", NULL}, "earlier"},
    {"win.pan-right", {"d", "Right", NULL}, "later"},
    {"win.rows-taller", {"<Shift>Up", NULL}, "taller rows"},
    {"win.rows-shorter", {"<Shift>Down", NULL}, "shorter rows"},
    {"win.tab('trace')", {"<Alt>1", NULL}, "Trace"},
    {"win.tab('summary')", {"<Alt>2", NULL}, "Summary"},
    {"win.tab('hotspots')", {"<Alt>3", NULL}, "Hotspots"},
    {"win.tab('flame')", {"<Alt>4", NULL}, "Flame"},
    {"win.tab('raster')", {"<Alt>5", NULL}, "Raster"},
    {"win.tab('mega')", {"<Alt>6", NULL}, "Mega"},
    {"win.tab('density')", {"<Alt>7", NULL}, "Density"},
    {"win.tab('activity')", {"<Alt>8", NULL}, "Activity"},
    {"win.tab('source')", {"<Alt>9", NULL}, "Source"},
    {"win.find",
     {"<Control>f", NULL},
     "find: kernel and NVTX range names on the Trace (the rest is dimmed); "
     "text in the file on the Source tab"},
    {"win.show-rows", {"<Control><Shift>h", NULL}, "Trace: show hidden rows"},
    {"win.open", {"<Control>o", NULL}, "open a trace"},
    {"win.copy-text",
     {"<Control><Shift>c", NULL},
     "copy the tab as text (Summary, Hotspots, selected range)"},
    {"win.close", {"<Control>w", "<Control>q", NULL}, "close the window"},
    {"win.keys", {"F1", "question", NULL}, "this list of keys"},
};

void mprof_gtk_actions_set_typing(MprofGtkWindow *window, gboolean typing) {
  /* The actions bound to a key that types (w, s, 0, ?): off while a text
   * field has the focus, so that the key reaches the field. */
  for (size_t i = 0; i < G_N_ELEMENTS(bindings); i++) {
    gboolean types = FALSE;
    for (size_t k = 0; bindings[i].keys[k]; k++) {
      guint key;
      GdkModifierType mods;
      if (gtk_accelerator_parse(bindings[i].keys[k], &key, &mods) &&
          !(mods & (GDK_CONTROL_MASK | GDK_ALT_MASK)) &&
          gdk_keyval_to_unicode(key))
        types = TRUE;
    }
    const char *name = bindings[i].action;
    if (!types || strncmp(name, "win.", 4) != 0 || strchr(name, '('))
      continue;
    GAction *action =
        g_action_map_lookup_action(G_ACTION_MAP(window), name + 4);
    if (G_IS_SIMPLE_ACTION(action))
      g_simple_action_set_enabled(G_SIMPLE_ACTION(action), !typing);
  }
}

void mprof_gtk_actions_set_accels(GtkApplication *app) {
  for (size_t i = 0; i < G_N_ELEMENTS(bindings); i++)
    gtk_application_set_accels_for_action(app, bindings[i].action,
                                          bindings[i].keys);
}

/* The keys as people read them ("Alt+1", "+"), from the table above and
 * the timeline's own, then the mouse. */
char *mprof_gtk_actions_keys_text(void) {
  GString *text = g_string_new("");
  for (size_t i = 0; i < G_N_ELEMENTS(bindings); i++) {
    GString *keys = g_string_new("");
    for (size_t k = 0; bindings[i].keys[k]; k++) {
      guint key;
      GdkModifierType mods;
      if (!gtk_accelerator_parse(bindings[i].keys[k], &key, &mods))
        continue;
      char *label = gtk_accelerator_get_label(key, mods);
      g_string_append_printf(keys, "%s%s", keys->len ? ", " : "", label);
      g_free(label);
    }
    /* GTK spaces "KP +" with a thin space: a plain one, so that the man
     * page made from --help stays ASCII. */
    g_string_replace(keys, "\u2009", " ", 0);
    /* Padded by characters: a label may hold more bytes than it shows. */
    glong pad = 22 - g_utf8_strlen(keys->str, -1);
    g_string_append_printf(text, "%s%*s %s\n", keys->str,
                           (int)(pad > 0 ? pad : 0), "", bindings[i].what);
    g_string_free(keys, TRUE);
  }
  for (size_t i = 0; mprof_gtk_timeline_keys[i].keys; i++)
    g_string_append_printf(text, "%-22s %s\n", mprof_gtk_timeline_keys[i].keys,
                           mprof_gtk_timeline_keys[i].what);
  for (size_t i = 0; mprof_gtk_source_page_keys[i].keys; i++)
    g_string_append_printf(text, "%-22s %s\n",
                           mprof_gtk_source_page_keys[i].keys,
                           mprof_gtk_source_page_keys[i].what);
  g_string_append(text,
                  "\nMouse: the wheel zooms time around the pointer, dragging "
                  "pans,\nShift+wheel changes the row height, Ctrl+wheel zooms "
                  "the rows,\nShift+drag selects a time range, a double-click "
                  "on a launch\nopens its kernel, a click on an instruction "
                  "(Hotspots, Flame,\nRaster) opens its source line; on the "
                  "Trace a click on a GPU\nor thread band folds its rows, a "
                  "right-click on a row hides it.");
  return g_string_free(text, FALSE);
}

GtkWidget *mprof_gtk_actions_keys_window(MprofGtkWindow *window) {
  return g_object_get_data(G_OBJECT(window), "mprof-keys-window");
}

static void show_keys(GSimpleAction *a, GVariant *p, gpointer window) {
  (void)a;
  (void)p;
  GtkWidget *keys = mprof_gtk_actions_keys_window(window);
  if (!keys) {
    keys = gtk_window_new();
    gtk_window_set_title(GTK_WINDOW(keys), "Keys");
    gtk_window_set_transient_for(GTK_WINDOW(keys), GTK_WINDOW(window));
    gtk_window_set_destroy_with_parent(GTK_WINDOW(keys), TRUE);
    gtk_window_set_hide_on_close(GTK_WINDOW(keys), TRUE);
    char *text = mprof_gtk_actions_keys_text();
    GtkWidget *label = gtk_label_new(text);
    g_free(text);
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    gtk_widget_add_css_class(label, "monospace");
    gtk_widget_set_margin_top(label, 12);
    gtk_widget_set_margin_bottom(label, 12);
    gtk_widget_set_margin_start(label, 12);
    gtk_widget_set_margin_end(label, 12);
    gtk_window_set_child(GTK_WINDOW(keys), label);
    g_object_set_data(G_OBJECT(window), "mprof-keys-window", keys);
  }
  gtk_window_present(GTK_WINDOW(keys));
}
