/*
 * mprof-gtk — the Source tab's page (source_page.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "source_page.h"

typedef struct source_page {
  MprofGtkViewState *state;
  GtkWidget *view, *buttons[3], *files, *search, *status;
  GtkStringList *file_names;
  gulong changed_handler;
  int files_kernel; /* whose files the picker lists; -2 none yet */
  int rank;         /* the hot line the last step went to, -1 other */
  guint idle;       /* refresh() after a map */
  gboolean syncing;
} source_page;

#define KEY "mprof-source-page"

static source_page *page_of(GtkWidget *widget) {
  return widget ? g_object_get_data(G_OBJECT(widget), KEY) : NULL;
}

const MprofGtkKeyHelp mprof_gtk_source_page_keys[] = {
    {"N, Shift+N", "Source: the next hottest line, the one before"},
    {"Home", "Source: the hottest line"},
    {"Ctrl+F", "Source: find in the file (Enter: next, Ctrl+Shift+G: back)"},
    {NULL, NULL},
};

/* The line under the bar: where the marked line is and what the last step
 * found. */
static void update_status(source_page *sp) {
  const mprof_render_model *m = mprof_gtk_view_state_get_model(sp->state);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(sp->state);
  GString *text = g_string_new("");
  size_t files = mprof_render_source_file_count(m, v->kernel);
  if (!files) {
    g_string_append(text, "No source lines: this kernel's code has no line "
                          "table (a library kernel, or built without nvcc "
                          "-lineinfo); its sampled SASS is shown");
    if (v->source_pc)
      g_string_append_printf(text, " \u00b7 0x%04x", v->source_pc - 1);
    if (v->source_pc && sp->rank >= 0)
      g_string_append_printf(text, " \u00b7 hot instruction %d of %zu",
                             sp->rank + 1,
                             mprof_render_source_hot_count(m, v->kernel));
  } else if (v->source_line) {
    const char *path = mprof_render_source_file_at(
        m, v->kernel, v->source_file > 0 ? (size_t)v->source_file - 1 : 0,
        NULL);
    char *base = g_path_get_basename(path ? path : "");
    g_string_append_printf(text, "%s:%u", base, v->source_line);
    g_free(base);
    if (sp->rank >= 0)
      g_string_append_printf(text, " \u00b7 hot line %d of %zu", sp->rank + 1,
                             mprof_render_source_hot_count(m, v->kernel));
  }
  if (files && v->source_find[0]) {
    mprof_render_view probe = *v;
    size_t found = mprof_render_view_source_find(&probe, m, v->source_find, 0);
    if (found)
      g_string_append_printf(text, " \u00b7 %zu line%s hold \u201c%s\u201d",
                             found, found == 1 ? "" : "s", v->source_find);
    else
      g_string_append_printf(text, " \u00b7 no line holds \u201c%s\u201d",
                             v->source_find);
  }
  char *valid = g_utf8_make_valid(text->str, -1);
  gtk_label_set_text(GTK_LABEL(sp->status), valid);
  g_free(valid);
  g_string_free(text, TRUE);
}

/* The picker lists the files of the kernel on screen, the shown one
 * selected; the buttons work when it has hot lines. */
static void refresh(source_page *sp) {
  const mprof_render_model *m = mprof_gtk_view_state_get_model(sp->state);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(sp->state);
  sp->syncing = TRUE;
  if (sp->files_kernel != v->kernel) {
    sp->files_kernel = v->kernel;
    guint old = g_list_model_get_n_items(G_LIST_MODEL(sp->file_names));
    size_t n = mprof_render_source_file_count(m, v->kernel);
    char **names = g_new0(char *, n + 1);
    for (size_t f = 0; f < n; f++) {
      double share;
      const char *path = mprof_render_source_file_at(m, v->kernel, f, &share);
      char *base = g_path_get_basename(path);
      char pct[32];
      mprof_format_percent(pct, sizeof pct, share);
      char *line = g_strdup_printf("%s  \u2014  %s", base, pct);
      names[f] = g_utf8_make_valid(line, -1);
      g_free(line);
      g_free(base);
    }
    gtk_string_list_splice(sp->file_names, 0, old, (const char *const *)names);
    g_strfreev(names);
    gtk_widget_set_sensitive(sp->files, n > 1);
    gboolean hot = mprof_render_source_hot_count(m, v->kernel) > 0;
    for (int b = 0; b < 3; b++)
      gtk_widget_set_sensitive(sp->buttons[b], hot);
    gtk_widget_set_sensitive(sp->search, n > 0);
  }
  gtk_drop_down_set_selected(GTK_DROP_DOWN(sp->files),
                             v->source_file > 0 ? (guint)v->source_file - 1
                                                : GTK_INVALID_LIST_POSITION);
  sp->syncing = FALSE;
  update_status(sp);
}

static void on_state_changed(MprofGtkViewState *state, guint what,
                             gpointer data) {
  (void)state;
  source_page *sp = data;
  if (!(what & (MPROF_GTK_CHANGED_KERNEL | MPROF_GTK_CHANGED_SOURCE)))
    return;
  sp->rank = -1;
  /* A kernel's lines are built when its Source tab is shown. */
  if (gtk_widget_get_mapped(sp->status))
    refresh(sp);
}

static gboolean refresh_idle(gpointer data) {
  source_page *sp = data;
  sp->idle = 0;
  refresh(sp);
  return G_SOURCE_REMOVE;
}

/* Shown: the picker and the line follow, once the map is over (new text
 * and sizes inside it would not be drawn in the first frame). */
static void on_map(GtkWidget *widget, gpointer data) {
  source_page *sp = data;
  if (!sp->idle)
    sp->idle = g_idle_add_full(G_PRIORITY_HIGH_IDLE, refresh_idle, sp, NULL);
  (void)widget;
}

static void hot(source_page *sp, int step) {
  int rank = mprof_gtk_view_state_source_hot(sp->state, step);
  sp->rank = rank;
  update_status(sp);
}

static void on_hottest(GtkButton *b, gpointer data) {
  (void)b;
  hot(data, 0);
}

static void on_previous(GtkButton *b, gpointer data) {
  (void)b;
  hot(data, -1);
}

static void on_next(GtkButton *b, gpointer data) {
  (void)b;
  hot(data, 1);
}

static void on_file(GObject *picker, GParamSpec *pspec, gpointer data) {
  (void)pspec;
  source_page *sp = data;
  guint selected = gtk_drop_down_get_selected(GTK_DROP_DOWN(picker));
  if (!sp->syncing && selected != GTK_INVALID_LIST_POSITION)
    mprof_gtk_view_state_source_file(sp->state, (int)selected + 1);
}

static void find(source_page *sp, int direction) {
  const char *text = gtk_editable_get_text(GTK_EDITABLE(sp->search));
  mprof_gtk_view_state_source_find(sp->state, text, direction);
}

static void on_search_changed(GtkSearchEntry *e, gpointer data) {
  (void)e;
  find(data, 0);
}

static void on_search_next(GtkSearchEntry *e, gpointer data) {
  (void)e;
  find(data, 1);
}

static void on_search_previous(GtkSearchEntry *e, gpointer data) {
  (void)e;
  find(data, -1);
}

static void on_search_stop(GtkSearchEntry *e, gpointer data) {
  (void)e;
  source_page *sp = data;
  gtk_widget_grab_focus(sp->view);
}

gboolean mprof_gtk_source_page_key(GtkWidget *source_page_widget, guint keyval,
                                   GdkModifierType state) {
  source_page *sp = page_of(source_page_widget);
  if (!sp || (state & (GDK_CONTROL_MASK | GDK_ALT_MASK)))
    return FALSE;
  switch (keyval) {
  case GDK_KEY_n: hot(sp, 1); return TRUE;
  case GDK_KEY_N: hot(sp, -1); return TRUE;
  case GDK_KEY_Home: hot(sp, 0); return TRUE;
  default: return FALSE;
  }
}

static gboolean on_key(GtkEventControllerKey *key, guint keyval, guint keycode,
                       GdkModifierType state, gpointer data) {
  (void)key;
  (void)keycode;
  return mprof_gtk_source_page_key(data, keyval, state);
}

void mprof_gtk_source_page_find(GtkWidget *source_page_widget) {
  source_page *sp = page_of(source_page_widget);
  if (!sp)
    return;
  gtk_widget_grab_focus(sp->search);
  gtk_editable_select_region(GTK_EDITABLE(sp->search), 0, -1);
}

GtkWidget *mprof_gtk_source_page_search(GtkWidget *w) {
  return page_of(w) ? page_of(w)->search : NULL;
}

GtkWidget *mprof_gtk_source_page_button(GtkWidget *w, int which) {
  return page_of(w) && which >= 0 && which < 3 ? page_of(w)->buttons[which]
                                               : NULL;
}

GtkWidget *mprof_gtk_source_page_files(GtkWidget *w) {
  return page_of(w) ? page_of(w)->files : NULL;
}

const char *mprof_gtk_source_page_status(GtkWidget *w) {
  return page_of(w) ? gtk_label_get_text(GTK_LABEL(page_of(w)->status)) : "";
}

static void free_page(gpointer data) {
  source_page *sp = data;
  if (sp->idle)
    g_source_remove(sp->idle);
  if (sp->changed_handler)
    g_signal_handler_disconnect(sp->state, sp->changed_handler);
  g_object_unref(sp->state);
  g_free(sp);
}

static GtkWidget *button(const char *label, const char *tip) {
  GtkWidget *b = gtk_button_new_with_label(label);
  gtk_widget_set_tooltip_text(b, tip);
  return b;
}

GtkWidget *mprof_gtk_source_page_new(MprofGtkViewState *state, GtkWidget *page,
                                     GtkWidget *view) {
  source_page *sp = g_new0(source_page, 1);
  sp->state = g_object_ref(state);
  sp->view = view;
  sp->files_kernel = -2;
  sp->rank = -1;
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  g_object_set_data_full(G_OBJECT(box), KEY, sp, free_page);
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start(bar, 8);
  gtk_widget_set_margin_end(bar, 8);
  gtk_widget_set_margin_top(bar, 4);
  gtk_widget_set_margin_bottom(bar, 4);
  sp->buttons[0] = button("Hottest line", "The kernel's hottest line (Home)");
  sp->buttons[1] = button("\u25c2", "The hotter line before (Shift+N)");
  sp->buttons[2] =
      button("Next hottest \u25b8", "The next hottest line (N), its file too");
  g_signal_connect(sp->buttons[0], "clicked", G_CALLBACK(on_hottest), sp);
  g_signal_connect(sp->buttons[1], "clicked", G_CALLBACK(on_previous), sp);
  g_signal_connect(sp->buttons[2], "clicked", G_CALLBACK(on_next), sp);
  for (int b = 0; b < 3; b++)
    gtk_box_append(GTK_BOX(bar), sp->buttons[b]);
  sp->file_names = gtk_string_list_new(NULL);
  sp->files = gtk_drop_down_new(G_LIST_MODEL(sp->file_names), NULL);
  gtk_widget_set_tooltip_text(sp->files,
                              "The kernel's files (headers and templates it "
                              "inlines), by share of its samples");
  g_signal_connect(sp->files, "notify::selected", G_CALLBACK(on_file), sp);
  gtk_box_append(GTK_BOX(bar), sp->files);
  sp->search = gtk_search_entry_new();
  g_object_set(sp->search, "placeholder-text", "Find in the file (Ctrl+F)",
               NULL);
#if GTK_CHECK_VERSION(4, 8, 0)
  gtk_search_entry_set_search_delay(GTK_SEARCH_ENTRY(sp->search), 0);
#endif
  g_signal_connect(sp->search, "search-changed", G_CALLBACK(on_search_changed),
                   sp);
  g_signal_connect(sp->search, "activate", G_CALLBACK(on_search_next), sp);
  g_signal_connect(sp->search, "next-match", G_CALLBACK(on_search_next), sp);
  g_signal_connect(sp->search, "previous-match", G_CALLBACK(on_search_previous),
                   sp);
  g_signal_connect(sp->search, "stop-search", G_CALLBACK(on_search_stop), sp);
  gtk_box_append(GTK_BOX(bar), sp->search);
  sp->status = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(sp->status), 0);
  gtk_label_set_ellipsize(GTK_LABEL(sp->status), PANGO_ELLIPSIZE_END);
  gtk_label_set_selectable(GTK_LABEL(sp->status), TRUE);
  gtk_widget_set_hexpand(sp->status, TRUE);
  gtk_box_append(GTK_BOX(bar), sp->status);
  gtk_box_append(GTK_BOX(box), bar);
  gtk_widget_set_vexpand(page, TRUE);
  gtk_box_append(GTK_BOX(box), page);
  g_signal_connect(sp->status, "map", G_CALLBACK(on_map), sp);
  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), box);
  gtk_widget_add_controller(view, keys);
  sp->changed_handler =
      g_signal_connect(state, "changed", G_CALLBACK(on_state_changed), sp);
  return box;
}
