/*
 * mprof-gtk — copying a tab as text.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "copy.h"

static void copy_text(GSimpleAction *action, GVariant *param, gpointer data) {
  (void)action;
  (void)param;
  MprofGtkWindow *window = data;
  MprofGtkViewState *state = mprof_gtk_window_get_state(window);
  int tab = mprof_gtk_window_get_tab(window);
  if (!state || tab < 0)
    return;
  char *text = mprof_render_tab_text(mprof_gtk_view_state_get_model(state),
                                     mprof_gtk_view_state_get_view(state), tab);
  if (!text) {
    mprof_gtk_window_show_status(
        window, tab == MPROF_RENDER_TRACE
                    ? "Nothing to copy: Shift+drag selects a range first"
                    : "Nothing to copy on this tab: the Summary, the "
                      "Hotspots and a selected range of the Trace copy as "
                      "text");
    return;
  }
  /* A trace's names are what its writer made them: GTK takes UTF-8. */
  char *valid = g_utf8_make_valid(text, -1);
  free(text);
  gdk_clipboard_set_text(gtk_widget_get_clipboard(GTK_WIDGET(window)), valid);
  size_t lines = 0;
  for (const char *c = valid; *c; c++)
    lines += *c == '\n';
  char *note = g_strdup_printf("Copied the %s as text (%zu lines)",
                               mprof_render_tab_title(tab), lines);
  mprof_gtk_window_show_status(window, note);
  g_free(note);
  g_free(valid);
}

static const GActionEntry entries[] = {
    {"copy-text", copy_text, NULL, NULL, NULL, {0}},
};

void mprof_gtk_copy_install(MprofGtkWindow *window, GtkWidget *header) {
  g_action_map_add_action_entries(G_ACTION_MAP(window), entries,
                                  G_N_ELEMENTS(entries), window);
  GtkWidget *button = gtk_button_new_from_icon_name("edit-copy-symbolic");
  gtk_widget_set_tooltip_text(button,
                              "Copy this tab as text: the Summary, the "
                              "Hotspots table, the Trace's selected range "
                              "(Ctrl+Shift+C)");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(button), "win.copy-text");
  gtk_header_bar_pack_end(GTK_HEADER_BAR(header), button);
}
