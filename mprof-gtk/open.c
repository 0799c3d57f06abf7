/*
 * mprof-gtk — opening traces from the viewer: dialog, recent files, drop.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "load.h"
#include "open.h"

/* The name recent-file entries carry, so the Recent menu lists the traces
 * mprof opened and nothing else. */
#define RECENT_APP "mprof"
#define RECENT_MAX 8

static gboolean is_trace_name(const char *name) {
  return g_str_has_suffix(name, ".mprof") || g_str_has_suffix(name, ".mkprof");
}

void mprof_gtk_open_note_recent(const char *path) {
  GFile *file = g_file_new_for_path(path);
  char *uri = g_file_get_uri(file);
  g_object_unref(file);
  GtkRecentData data = {0};
  data.mime_type = g_str_has_suffix(path, ".mkprof")
                       ? (char *)"application/x-mkprof"
                       : (char *)"application/x-mprof";
  data.app_name = (char *)RECENT_APP;
  data.app_exec = (char *)"mprof-gtk %f";
  gtk_recent_manager_add_full(gtk_recent_manager_get_default(), uri, &data);
  g_free(uri);
}

static gint newest_first(gconstpointer a, gconstpointer b) {
  GDateTime *x = gtk_recent_info_get_modified((GtkRecentInfo *)a);
  GDateTime *y = gtk_recent_info_get_modified((GtkRecentInfo *)b);
  return g_date_time_compare(y, x);
}

char **mprof_gtk_open_recent(int max) {
  GList *items = gtk_recent_manager_get_items(gtk_recent_manager_get_default());
  items = g_list_sort(items, newest_first);
  GPtrArray *paths = g_ptr_array_new();
  for (GList *l = items; l && (int)paths->len < max; l = l->next) {
    GtkRecentInfo *info = l->data;
    if (!gtk_recent_info_has_application(info, RECENT_APP) ||
        !gtk_recent_info_is_local(info))
      continue;
    char *path = g_filename_from_uri(gtk_recent_info_get_uri(info), NULL, NULL);
    if (path && is_trace_name(path) &&
        g_file_test(path, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(paths, path);
    else
      g_free(path);
  }
  g_list_free_full(items, (GDestroyNotify)gtk_recent_info_unref);
  g_ptr_array_add(paths, NULL);
  return (char **)g_ptr_array_free(paths, FALSE);
}

static gboolean close_later(gpointer window) {
  gtk_window_destroy(GTK_WINDOW(window));
  return G_SOURCE_REMOVE;
}

static void on_loaded(MprofGtkWindow *window, MprofGtkLoadOutcome outcome,
                      const char *error, gpointer data) {
  (void)window;
  (void)error;
  if (outcome == MPROF_GTK_LOADED)
    mprof_gtk_open_note_recent(data);
}

MprofGtkWindow *mprof_gtk_open_path(GtkApplication *app, const char *path,
                                    MprofGtkWindow *replace) {
  /* Opened on a worker: the window shows how far it got, and Cancel. */
  MprofGtkWindow *window = mprof_gtk_window_new_loading(app, path);
  mprof_gtk_load_start(window, &path, 1, path, NULL, on_loaded, g_strdup(path),
                       g_free);
  gtk_window_present(GTK_WINDOW(window));
  /* Later, not now: a drop or a dialog of @p replace may still be using
   * it. */
  if (replace && mprof_gtk_window_is_welcome(replace))
    g_idle_add_full(G_PRIORITY_DEFAULT, close_later, g_object_ref(replace),
                    g_object_unref);
  return window;
}

/* ---- the dialog -----------------------------------------------------------
 */

static void on_dialog_response(GtkNativeDialog *dialog, int response,
                               gpointer data) {
  MprofGtkWindow *window = data;
  if (response == GTK_RESPONSE_ACCEPT) {
    GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      mprof_gtk_open_path(gtk_window_get_application(GTK_WINDOW(window)), path,
                          window);
    g_free(path);
    if (file)
      g_object_unref(file);
  }
}

static void dialog_free(gpointer dialog) {
  gtk_native_dialog_destroy(dialog);
  g_object_unref(dialog);
}

static void forget_dialog(GtkWidget *window, gpointer data) {
  (void)data;
  g_object_set_data(G_OBJECT(window), "mprof-open-dialog", NULL);
}

static void open_dialog(GSimpleAction *action, GVariant *param, gpointer data) {
  (void)action;
  (void)param;
  MprofGtkWindow *window = data;
  GtkFileChooserNative *dialog =
      g_object_get_data(G_OBJECT(window), "mprof-open-dialog");
  if (!dialog) {
    dialog = gtk_file_chooser_native_new("Open a trace", GTK_WINDOW(window),
                                         GTK_FILE_CHOOSER_ACTION_OPEN, "_Open",
                                         "_Cancel");
    GtkFileFilter *traces = gtk_file_filter_new();
    gtk_file_filter_set_name(traces, "mprof traces (*.mprof, *.mkprof)");
    gtk_file_filter_add_pattern(traces, "*.mprof");
    gtk_file_filter_add_pattern(traces, "*.mkprof");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), traces);
    g_object_unref(traces);
    GtkFileFilter *all = gtk_file_filter_new();
    gtk_file_filter_set_name(all, "All files");
    gtk_file_filter_add_pattern(all, "*");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), all);
    g_object_unref(all);
    g_signal_connect(dialog, "response", G_CALLBACK(on_dialog_response),
                     window);
    /* The window owns the dialog, and ends it before it goes itself. */
    g_object_set_data_full(G_OBJECT(window), "mprof-open-dialog", dialog,
                           dialog_free);
    g_signal_connect(window, "destroy", G_CALLBACK(forget_dialog), NULL);
  }
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

GtkNativeDialog *mprof_gtk_open_dialog(MprofGtkWindow *window) {
  return g_object_get_data(G_OBJECT(window), "mprof-open-dialog");
}

static void open_recent(GSimpleAction *action, GVariant *param, gpointer data) {
  (void)action;
  MprofGtkWindow *window = data;
  mprof_gtk_open_path(gtk_window_get_application(GTK_WINDOW(window)),
                      g_variant_get_string(param, NULL), window);
}

/* ---- dropping files -------------------------------------------------------
 */

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x,
                        double y, gpointer data) {
  (void)target;
  (void)x;
  (void)y;
  MprofGtkWindow *window = data;
  if (!G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *files = gdk_file_list_get_files(g_value_get_boxed(value));
  GtkApplication *app = gtk_window_get_application(GTK_WINDOW(window));
  gboolean opened = FALSE;
  /* Every dropped file opens in a window of its own. */
  for (GSList *l = files; l; l = l->next) {
    char *path = g_file_get_path(l->data);
    if (path) {
      mprof_gtk_open_path(app, path, opened ? NULL : window);
      opened = TRUE;
    }
    g_free(path);
  }
  g_slist_free(files);
  return opened;
}

GtkDropTarget *mprof_gtk_open_drop_target(MprofGtkWindow *window) {
  return g_object_get_data(G_OBJECT(window), "mprof-drop-target");
}

/* ---- the header bar and the welcome page ----------------------------------
 */

/* The Recent menu: one item per recent trace, rebuilt when opened. */
static GMenuModel *recent_menu(void) {
  GMenu *menu = g_menu_new();
  char **paths = mprof_gtk_open_recent(RECENT_MAX);
  for (char **p = paths; *p; p++) {
    char *label = g_path_get_basename(*p);
    GMenuItem *item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-recent",
                                            g_variant_new_string(*p));
    g_menu_append_item(menu, item);
    g_object_unref(item);
    g_free(label);
  }
  if (!paths[0])
    g_menu_append(menu, "No recent traces", "win.none");
  g_strfreev(paths);
  return G_MENU_MODEL(menu);
}

static void on_recent_changed(GtkRecentManager *manager, gpointer button) {
  (void)manager;
  GMenuModel *menu = recent_menu();
  gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(button), menu);
  g_object_unref(menu);
}

static const GActionEntry entries[] = {
    {"open", open_dialog, NULL, NULL, NULL, {0}},
    {"open-recent", open_recent, "s", NULL, NULL, {0}},
};

void mprof_gtk_open_install(MprofGtkWindow *window, GtkWidget *header) {
  g_action_map_add_action_entries(G_ACTION_MAP(window), entries,
                                  G_N_ELEMENTS(entries), window);
  GtkWidget *open = gtk_button_new_from_icon_name("document-open-symbolic");
  gtk_widget_set_tooltip_text(open, "Open a trace (Ctrl+O)");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(open), "win.open");
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), open);
  GtkWidget *recent = gtk_menu_button_new();
  gtk_menu_button_set_icon_name(GTK_MENU_BUTTON(recent),
                                "document-open-recent-symbolic");
  gtk_widget_set_tooltip_text(recent, "Recent traces");
  on_recent_changed(NULL, recent);
  g_signal_connect_object(gtk_recent_manager_get_default(), "changed",
                          G_CALLBACK(on_recent_changed), recent, 0);
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), recent);

  GtkDropTarget *target =
      gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect(target, "drop", G_CALLBACK(on_drop), window);
  gtk_widget_add_controller(GTK_WIDGET(window), GTK_EVENT_CONTROLLER(target));
  g_object_set_data(G_OBJECT(window), "mprof-drop-target", target);
}

GtkWidget *mprof_gtk_open_welcome_page(MprofGtkWindow *window) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_valign(box, GTK_ALIGN_CENTER);
  gtk_widget_set_halign(box, GTK_ALIGN_CENTER);
  /* The icon once mprof is installed (data/icons); nothing before. */
  GtkIconTheme *theme = gtk_icon_theme_get_for_display(
      gtk_widget_get_display(GTK_WIDGET(window)));
  if (gtk_icon_theme_has_icon(theme, "mprof")) {
    GtkWidget *icon = gtk_image_new_from_icon_name("mprof");
    gtk_image_set_pixel_size(GTK_IMAGE(icon), 96);
    gtk_box_append(GTK_BOX(box), icon);
  }
  GtkWidget *title = gtk_label_new(NULL);
  gtk_label_set_markup(GTK_LABEL(title),
                       "<span size='x-large' weight='bold'>Open a trace to "
                       "see inside its kernels</span>");
  gtk_box_append(GTK_BOX(box), title);
  GtkWidget *open = gtk_button_new_with_mnemonic("_Open a trace…");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(open), "win.open");
  gtk_widget_add_css_class(open, "suggested-action");
  gtk_widget_set_halign(open, GTK_ALIGN_CENTER);
  gtk_box_append(GTK_BOX(box), open);
  char **paths = mprof_gtk_open_recent(RECENT_MAX);
  if (paths[0]) {
    GtkWidget *label = gtk_label_new("Recent");
    gtk_widget_add_css_class(label, "dim-label");
    gtk_widget_set_margin_top(label, 12);
    gtk_box_append(GTK_BOX(box), label);
  }
  for (char **p = paths; *p; p++) {
    GtkWidget *b = gtk_button_new_with_label(*p);
    gtk_button_set_has_frame(GTK_BUTTON(b), FALSE);
    gtk_actionable_set_action_target_value(GTK_ACTIONABLE(b),
                                           g_variant_new_string(*p));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(b), "win.open-recent");
    gtk_box_append(GTK_BOX(box), b);
  }
  g_strfreev(paths);
  GtkWidget *hint = gtk_label_new("or drop a .mprof or .mkprof file here; "
                                  "mprof record writes them");
  gtk_widget_add_css_class(hint, "dim-label");
  gtk_widget_set_margin_top(hint, 12);
  gtk_box_append(GTK_BOX(box), hint);
  return box;
}
