/*
 * mprof-gtk — the Trace's search bar.
 *
 * SPDX-License-Identifier: MIT
 */
#include "search.h"

/* A match narrower than this many pixels is zoomed into, to a third of the
 * view; one wider than most of the view is zoomed out of. */
#define MATCH_MIN_PX 4.0

typedef struct search {
  MprofGtkViewState *state; /* a reference */
  GtkWidget *timeline, *entry, *count;
  mprof_render_match current; /* the match shown last; kind NONE: none */
} search;

static void search_free(gpointer data) {
  search *s = data;
  g_clear_object(&s->state);
  g_free(s);
}

static search *search_of(GtkWidget *bar) {
  return g_object_get_data(G_OBJECT(bar), "mprof-search");
}

static void update_count(search *s, const char *text) {
  if (!text || !*text) {
    gtk_label_set_text(GTK_LABEL(s->count), "");
    return;
  }
  size_t kernels, ranges;
  size_t launches = mprof_render_search_count(
      mprof_gtk_view_state_get_model(s->state), text, &kernels, &ranges);
  if (!launches && !ranges) {
    gtk_label_set_text(GTK_LABEL(s->count), "no kernel or range matches");
    return;
  }
  char count[32];
  mprof_format_count(count, sizeof count, launches);
  char *line =
      g_strdup_printf("%s launch%s of %zu kernel%s, %zu range%s", count,
                      launches == 1 ? "" : "es", kernels,
                      kernels == 1 ? "" : "s", ranges, ranges == 1 ? "" : "s");
  gtk_label_set_text(GTK_LABEL(s->count), line);
  g_free(line);
}

static void on_changed(GtkSearchEntry *entry, gpointer data) {
  search *s = data;
  const char *text = gtk_editable_get_text(GTK_EDITABLE(entry));
  s->current.kind = MPROF_HIT_NONE;
  mprof_gtk_view_state_set_search(s->state, text);
  update_count(s, text);
}

/* Bring [a, b) into view: where it is already whole and wide enough to
 * see, nothing moves; else it is centred, the view zoomed in on a sliver
 * or out of a match wider than most of it. */
static void show(search *s, int64_t a, int64_t b) {
  const mprof_render_view *v = mprof_gtk_view_state_get_view(s->state);
  int64_t span = v->end_ns - v->start_ns, length = b - a;
  double width = gtk_widget_get_width(s->timeline) - MPROF_RENDER_GUTTER;
  if (width < 100)
    width = 100;
  double px = (double)length * width / (double)(span > 0 ? span : 1);
  if (a >= v->start_ns && b <= v->end_ns && px >= MATCH_MIN_PX &&
      length <= span * 0.8)
    return;
  if (length > span * 0.8)
    span = length + length / 4 + 1;
  else if (px < MATCH_MIN_PX)
    span = 3 * length > 1000 ? 3 * length : 1000;
  int64_t middle = a + length / 2;
  mprof_gtk_view_state_set_range(s->state, middle - span / 2,
                                 middle - span / 2 + span);
}

gboolean mprof_gtk_search_step(GtkWidget *bar, gboolean forward) {
  search *s = search_of(bar);
  const char *text = gtk_editable_get_text(GTK_EDITABLE(s->entry));
  /* The search as typed, even before the entry's delay has passed. */
  mprof_gtk_view_state_set_search(s->state, text);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(s->state);
  mprof_render_match from = s->current, next;
  if (from.kind == MPROF_HIT_NONE) {
    /* From the left edge of the view. */
    from.kind = forward ? MPROF_HIT_LAUNCH : MPROF_HIT_RANGE;
    from.index = forward ? -1 : G_MAXINT64;
    from.start_ns = forward ? v->start_ns - 1 : v->start_ns;
  }
  if (!mprof_render_search_next(mprof_gtk_view_state_get_model(s->state), text,
                                &from, forward, &next)) {
    gtk_widget_error_bell(s->entry);
    return FALSE;
  }
  s->current = next;
  if (next.kind == MPROF_HIT_LAUNCH) {
    /* The launch, selected: outlined, described, its kernel picked. */
    mprof_gtk_view_state_set_selection(s->state, 0, 0);
    mprof_gtk_view_state_select_launch(s->state, next.index);
  } else {
    /* A range: its time, selected, lists what ran in it. */
    mprof_gtk_view_state_select_launch(s->state, -1);
    mprof_gtk_view_state_set_selection(s->state, next.start_ns, next.end_ns);
  }
  show(s, next.start_ns, next.end_ns);
  return TRUE;
}

static void on_activate(GtkSearchEntry *entry, gpointer bar) {
  (void)entry;
  mprof_gtk_search_step(bar, TRUE);
}

static void on_next(GtkWidget *widget, gpointer bar) {
  (void)widget;
  mprof_gtk_search_step(bar, TRUE);
}

static void on_previous(GtkWidget *widget, gpointer bar) {
  (void)widget;
  mprof_gtk_search_step(bar, FALSE);
}

static void on_stop(GtkSearchEntry *entry, gpointer bar) {
  search *s = search_of(bar);
  gtk_editable_set_text(GTK_EDITABLE(entry), "");
  s->current.kind = MPROF_HIT_NONE;
  mprof_gtk_view_state_set_search(s->state, NULL);
  update_count(s, NULL);
  gtk_search_bar_set_search_mode(GTK_SEARCH_BAR(bar), FALSE);
  gtk_widget_grab_focus(s->timeline);
}

/* The bar closed by its button: the search goes with it. */
static void on_mode(GObject *object, GParamSpec *pspec, gpointer data) {
  (void)pspec;
  search *s = data;
  if (gtk_search_bar_get_search_mode(GTK_SEARCH_BAR(object)))
    return;
  s->current.kind = MPROF_HIT_NONE;
  if (*gtk_editable_get_text(GTK_EDITABLE(s->entry)))
    gtk_editable_set_text(GTK_EDITABLE(s->entry), "");
  mprof_gtk_view_state_set_search(s->state, NULL);
  update_count(s, NULL);
}

static GtkWidget *arrow(const char *icon, const char *tip, GCallback fn,
                        GtkWidget *bar) {
  GtkWidget *b = gtk_button_new_from_icon_name(icon);
  gtk_widget_set_tooltip_text(b, tip);
  g_signal_connect(b, "clicked", fn, bar);
  return b;
}

GtkWidget *mprof_gtk_search_new(MprofGtkViewState *state, GtkWidget *timeline) {
  search *s = g_new0(search, 1);
  s->state = g_object_ref(state);
  s->timeline = timeline;
  s->current.kind = MPROF_HIT_NONE;
  GtkWidget *bar = gtk_search_bar_new();
  g_object_set_data_full(G_OBJECT(bar), "mprof-search", s, search_free);
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  s->entry = gtk_search_entry_new();
  g_object_set(s->entry, "placeholder-text", "Kernel or NVTX range name", NULL);
  gtk_editable_set_width_chars(GTK_EDITABLE(s->entry), 32);
  s->count = gtk_label_new("");
  gtk_widget_add_css_class(s->count, "dim-label");
  gtk_box_append(GTK_BOX(box), s->entry);
  gtk_box_append(GTK_BOX(box),
                 arrow("go-up-symbolic", "Previous match (Ctrl+Shift+G)",
                       G_CALLBACK(on_previous), bar));
  gtk_box_append(GTK_BOX(box),
                 arrow("go-down-symbolic", "Next match (Enter, Ctrl+G)",
                       G_CALLBACK(on_next), bar));
  gtk_box_append(GTK_BOX(box), s->count);
  gtk_search_bar_set_child(GTK_SEARCH_BAR(bar), box);
  gtk_search_bar_connect_entry(GTK_SEARCH_BAR(bar), GTK_EDITABLE(s->entry));
  gtk_search_bar_set_show_close_button(GTK_SEARCH_BAR(bar), TRUE);
  g_signal_connect(s->entry, "search-changed", G_CALLBACK(on_changed), s);
  g_signal_connect(s->entry, "activate", G_CALLBACK(on_activate), bar);
  g_signal_connect(s->entry, "next-match", G_CALLBACK(on_activate), bar);
  g_signal_connect(s->entry, "previous-match", G_CALLBACK(on_previous), bar);
  g_signal_connect(s->entry, "stop-search", G_CALLBACK(on_stop), bar);
  g_signal_connect(bar, "notify::search-mode-enabled", G_CALLBACK(on_mode), s);
  return bar;
}

void mprof_gtk_search_open(GtkWidget *bar) {
  search *s = search_of(bar);
  gtk_search_bar_set_search_mode(GTK_SEARCH_BAR(bar), TRUE);
  gtk_widget_grab_focus(s->entry);
}

GtkWidget *mprof_gtk_search_get_entry(GtkWidget *bar) {
  return search_of(bar)->entry;
}

GtkWidget *mprof_gtk_search_get_count(GtkWidget *bar) {
  return search_of(bar)->count;
}
