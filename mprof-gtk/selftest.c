/*
 * mprof-gtk — the scripted smoke test.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "load.h"
#include "open.h"
#include "search.h"
#include "selftest.h"
#include "source_page.h"
#include "timeline.h"

typedef struct selftest {
  MprofGtkApp *app;
  MprofGtkWindow *window;
  char *dir;
  int step;
  int failures;
  int retries;
  gint64 span_before;
  char *search;       /* what the Trace's search was given */
  gint64 first_match; /* the launch Enter selected first */
  gboolean welcome;   /* started on the welcome page */
  gboolean source;    /* $MPROF_SELFTEST_SOURCE: the Source tab's tour */
  /* $MPROF_SELFTEST_RANKS ("RANK:STEP", the straggler planted): the Ranks
   * tab's hottest cell is that rank's step, and a click opens it. */
  const char *ranks;
  int ranks_rank, ranks_step; /* the cell clicked (mprof_render_hit) */
  uint32_t line;              /* Source tour: the line marked before a step */
  /* $MPROF_SELFTEST_LOAD (wait, cancel or close): the load of a big
   * trace, let go, cancelled, or its window closed. */
  const char *load_mode;
  gint64 load_begin, last_ping, longest_gap, cancelled_at;
  int pings_while_loading;
  int held_pings; /* pings until the worker reached the hold */
  gboolean released, loaded;
  guint ping_source;
  double progress_seen;
  char *progress_text;
} selftest;

static void check(selftest *t, gboolean ok, const char *what) {
  printf("selftest: %s: %s\n", ok ? "ok" : "FAILED", what);
  fflush(stdout);
  if (!ok)
    t->failures++;
}

/* FALSE when the window has no frame to give yet: the caller tries again
 * on the next tick (a few times). */
static gboolean shot(selftest *t, const char *name) {
  char *path = g_strdup_printf("%s/%s.png", t->dir, name);
  gboolean ok = mprof_gtk_window_save_png(t->window, path);
  if (ok || ++t->retries > 5) {
    check(t, ok, path);
    t->retries = 0;
    ok = TRUE;
  }
  g_free(path);
  return ok;
}

#define SHOT(t, name)                                                          \
  do {                                                                         \
    if (!shot(t, name)) {                                                      \
      t->step--;                                                               \
      return G_SOURCE_CONTINUE;                                                \
    }                                                                          \
  } while (0)

static gint64 span(selftest *t) {
  const mprof_render_view *v =
      mprof_gtk_view_state_get_view(mprof_gtk_window_get_state(t->window));
  return v->end_ns - v->start_ns;
}

static gboolean has_accel(selftest *t, const char *action, const char *key) {
  char **accels =
      gtk_application_get_accels_for_action(GTK_APPLICATION(t->app), action);
  gboolean found = accels && g_strv_contains((const char *const *)accels, key);
  g_strfreev(accels);
  return found;
}

static void act(selftest *t, const char *action) {
  gtk_widget_activate_action(GTK_WIDGET(t->window), action, NULL);
}

static void show(selftest *t, int tab) {
  mprof_gtk_window_set_tab(t->window, tab);
  check(t, mprof_gtk_window_get_tab(t->window) == tab,
        mprof_render_tab_key(tab));
}

/* The welcome page of a window started without a trace: the Open dialog
 * (Ctrl+O), then a file dropped on it ($MPROF_SELFTEST_DROP) opens in a
 * window that replaces it and joins the recent traces. TRUE while there
 * are steps left. */
static gboolean welcome(selftest *t) {
  switch (t->step++) {
  case 0: {
    SHOT(t, "welcome");
    check(t, has_accel(t, "win.open", "<Control>o"), "Ctrl+O opens");
    act(t, "win.open");
    GtkNativeDialog *dialog = mprof_gtk_open_dialog(t->window);
    check(t, dialog && gtk_native_dialog_get_visible(dialog),
          "win.open shows the open dialog");
    return TRUE;
  }
  case 1: {
    /* Cancel the dialog, as its Cancel button does. */
    GtkNativeDialog *dialog = mprof_gtk_open_dialog(t->window);
    if (dialog)
      gtk_native_dialog_hide(dialog);
    const char *drop = g_getenv("MPROF_SELFTEST_DROP");
    if (!drop)
      return FALSE;
    GFile *file = g_file_new_for_path(drop);
    GValue value = G_VALUE_INIT;
    g_value_init(&value, GDK_TYPE_FILE_LIST);
    g_value_take_boxed(&value, gdk_file_list_new_from_array(&file, 1));
    gboolean handled = FALSE;
    /* Through the window's own drop target, as a drag from a file manager
     * delivers it; the welcome window closes. */
    g_signal_emit_by_name(mprof_gtk_open_drop_target(t->window), "drop", &value,
                          100.0, 100.0, &handled);
    g_value_unset(&value);
    g_object_unref(file);
    check(t, handled, "a dropped trace is taken");
    return TRUE;
  }
  case 2: {
    const char *drop = g_getenv("MPROF_SELFTEST_DROP");
    GList *windows = gtk_application_get_windows(GTK_APPLICATION(t->app));
    for (GList *l = windows; l; l = l->next)
      if (MPROF_GTK_IS_WINDOW(l->data) &&
          mprof_gtk_window_is_loading(l->data)) {
        t->step--; /* opened on a worker: not yet */
        return TRUE;
      }
    t->window = NULL;
    int welcome_pages = 0;
    for (GList *l = windows; l; l = l->next) {
      if (!MPROF_GTK_IS_WINDOW(l->data))
        continue; /* the open dialog */
      if (mprof_gtk_window_get_state(l->data))
        t->window = l->data;
      welcome_pages += mprof_gtk_window_is_welcome(l->data);
    }
    printf("selftest: %s, %d welcome page(s) left\n",
           t->window ? "a window with the trace" : "no window with the trace",
           welcome_pages);
    check(t, t->window != NULL && welcome_pages == 0,
          "the dropped trace replaced the welcome page");
    char **recent = mprof_gtk_open_recent(8);
    char *abs = g_canonicalize_filename(drop, NULL);
    check(t, recent[0] && strcmp(recent[0], abs) == 0,
          "the dropped trace is the first recent trace");
    g_free(abs);
    g_strfreev(recent);
    return t->window != NULL;
  }
  default: SHOT(t, "dropped"); return FALSE;
  }
}

/* ---- the Trace's search and rows ---------------------------------------- */

/* Ctrl+F: the search bar opens over the Trace with the focus in its
 * entry, which gets a kernel's name in capitals (the search ignores
 * case); the entry applies it after its typing delay, on the next tick. */
static void search_open(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  check(t, has_accel(t, "win.find", "<Control>f"), "Ctrl+F is bound");
  act(t, "win.find");
  GtkWidget *bar = mprof_gtk_window_get_search(t->window);
  GtkWidget *entry = bar ? mprof_gtk_search_get_entry(bar) : NULL;
  GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(t->window));
  check(t,
        bar && mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_TRACE &&
            gtk_search_bar_get_search_mode(GTK_SEARCH_BAR(bar)) && focus &&
            (focus == entry || gtk_widget_is_ancestor(focus, entry)),
        "Ctrl+F opens the Trace's search with the focus in it");
  /* The second kernel, not the one selected. */
  const mprof_render_kernel *k =
      mprof_render_kernel_at(m, mprof_render_kernel_count(m) > 1 ? 1 : 0);
  g_free(t->search);
  t->search = g_ascii_strup(k ? k->short_name : "", -1);
  if (entry)
    gtk_editable_set_text(GTK_EDITABLE(entry), t->search);
}

/* Enter selects the first match and brings it into view, Enter again the
 * next one in time; F zooms to it. FALSE while the entry has not applied
 * the text yet (its typing delay, on a loaded machine): the caller tries
 * again on the next tick, a few times. */
static gboolean search_enter(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  GtkWidget *bar = mprof_gtk_window_get_search(t->window);
  if (!bar)
    return TRUE;
  GtkWidget *entry = mprof_gtk_search_get_entry(bar);
  if (!v->search && ++t->retries <= 10)
    return FALSE;
  t->retries = 0;
  check(t, v->search && g_ascii_strcasecmp(v->search, t->search) == 0,
        "typing in the search bar searches the Trace");
  const char *count =
      gtk_label_get_text(GTK_LABEL(mprof_gtk_search_get_count(bar)));
  printf("selftest: search '%s': %s\n", t->search, count);
  check(t, strstr(count, " of 1 kernel,") != NULL,
        "the search bar counts the matches");
  g_signal_emit_by_name(entry, "activate");
  size_t n;
  const mprof_launch_record *l =
      mprof_trace_launches(mprof_render_model_trace(m), &n);
  gint64 first = v->launch;
  check(t,
        first >= 0 && (size_t)first < n &&
            mprof_render_kernel_matches(
                m, mprof_render_launch_kernel(m, (size_t)first), t->search) &&
            (gint64)l[first].start >= v->start_ns &&
            (gint64)l[first].end <= v->end_ns,
        "Enter selects the first match and shows it");
  g_signal_emit_by_name(entry, "activate");
  gint64 second = v->launch;
  check(t,
        second >= 0 && second != first && (size_t)second < n &&
            mprof_render_kernel_matches(
                m, mprof_render_launch_kernel(m, (size_t)second), t->search) &&
            l[second].start >= l[first].start &&
            (gint64)l[second].start >= v->start_ns &&
            (gint64)l[second].end <= v->end_ns,
        "Enter again selects the next match in time");
  t->first_match = first;
  MprofGtkTimeline *tl =
      MPROF_GTK_TIMELINE(mprof_gtk_window_get_timeline(t->window));
  check(t,
        second >= 0 && mprof_gtk_timeline_key(tl, GDK_KEY_f, 0) &&
            v->start_ns < (gint64)l[second].start &&
            v->end_ns > (gint64)l[second].end &&
            v->end_ns - v->start_ns <
                2 * (gint64)(l[second].end - l[second].start) + 1000,
        "F zooms to the match");
  return TRUE;
}

/* The row under the middle of row @p row, in the timeline's pixels. */
static double row_y(selftest *t, size_t row) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  double h, top = MPROF_RENDER_RULER - v->scroll_y +
                  mprof_render_row_top(mprof_gtk_view_state_get_model(state), v,
                                       row, &h);
  return top + h / 2;
}

/* Esc in the entry clears the search and closes the bar; a click on the
 * GPU band folds its streams, another unfolds them; a right-click on a
 * stream's label offers to hide it, Ctrl+Shift+H shows it again. */
static void search_close_and_fold(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  GtkWidget *bar = mprof_gtk_window_get_search(t->window);
  if (bar)
    g_signal_emit_by_name(mprof_gtk_search_get_entry(bar), "stop-search");
  check(t,
        bar && !v->search &&
            !gtk_search_bar_get_search_mode(GTK_SEARCH_BAR(bar)) &&
            gtk_window_get_focus(GTK_WINDOW(t->window)) ==
                mprof_gtk_window_get_timeline(t->window),
        "Esc clears the search and closes the bar");
  size_t band = 0, rows = mprof_render_row_count(m);
  while (band < rows && mprof_render_row_at(m, band)->kind != MPROF_ROW_DEVICE)
    band++;
  size_t stream = band + 1;
  if (stream >= rows) {
    check(t, FALSE, "the trace has a GPU band with streams");
    return;
  }
  MprofGtkTimeline *tl =
      MPROF_GTK_TIMELINE(mprof_gtk_window_get_timeline(t->window));
  double content = mprof_render_content_height(m, v, MPROF_RENDER_TRACE, 1000);
  mprof_gtk_timeline_click(tl, 60, row_y(t, band), 1, GDK_BUTTON_PRIMARY);
  check(t,
        !mprof_render_row_shown(m, v, stream) &&
            mprof_render_content_height(m, v, MPROF_RENDER_TRACE, 1000) <
                content,
        "a click on the GPU band folds its streams");
  mprof_gtk_timeline_click(tl, 60, row_y(t, band), 1, GDK_BUTTON_PRIMARY);
  check(t, mprof_render_row_shown(m, v, stream), "another click unfolds them");
  mprof_gtk_timeline_click(tl, 60, row_y(t, stream), 1, GDK_BUTTON_SECONDARY);
  GtkWidget *menu = mprof_gtk_timeline_get_row_menu(tl);
  GtkWidget *box = menu ? gtk_popover_get_child(GTK_POPOVER(menu)) : NULL;
  GtkWidget *hide = box ? gtk_widget_get_first_child(box) : NULL;
  check(t, menu && gtk_widget_get_visible(menu) && hide,
        "a right-click on a row opens its menu");
  if (hide)
    g_signal_emit_by_name(hide, "clicked");
  check(t,
        !mprof_render_row_shown(m, v, stream) &&
            mprof_render_band_hidden(m, v, band) == 1,
        "Hide this row hides it");
  act(t, "win.show-rows");
  check(t, mprof_render_row_shown(m, v, stream),
        "Ctrl+Shift+H shows the hidden rows");
}

/* ---- the Source tab's tour ($MPROF_SELFTEST_SOURCE) -------------------- */

/* What libmprof says about kernel @p kernel's instruction at @p offset:
 * its line and file (""), for checking where the viewer went. */
static uint32_t line_of(selftest *t, int kernel, uint32_t offset, char *file,
                        size_t size) {
  const mprof_render_model *m =
      mprof_gtk_view_state_get_model(mprof_gtk_window_get_state(t->window));
  mprof_lines *lines = NULL;
  uint32_t line = 0;
  file[0] = '\0';
  if (mprof_lines_build(&lines, mprof_render_model_join(m), (size_t)kernel,
                        NULL) == 0) {
    const mprof_line_instruction *in =
        mprof_lines_instruction_find(lines, offset);
    const mprof_line_stats *s =
        in ? mprof_lines_at(lines, in->line_index) : NULL;
    if (s) {
      line = s->line;
      g_strlcpy(file, s->file, size);
    }
  }
  mprof_lines_free(lines);
  return line;
}

/* Kernel @p kernel's @p rank-th hottest line with a number (0 hottest),
 * from libmprof; 0 when none. */
static uint32_t hot_line(selftest *t, int kernel, size_t rank, char *file,
                         size_t size) {
  const mprof_render_model *m =
      mprof_gtk_view_state_get_model(mprof_gtk_window_get_state(t->window));
  mprof_lines *lines = NULL;
  uint32_t line = 0;
  file[0] = '\0';
  if (mprof_lines_build(&lines, mprof_render_model_join(m), (size_t)kernel,
                        NULL) == 0)
    for (size_t i = 0, seen = 0; i < mprof_lines_count(lines) && !line; i++) {
      const mprof_line_stats *s = mprof_lines_at(lines, i);
      if (s->line && s->samples && seen++ == rank) {
        line = s->line;
        g_strlcpy(file, s->file, size);
      }
    }
  mprof_lines_free(lines);
  return line;
}

/* The file the Source tab shows (its path). */
static const char *shown_file(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  const char *path = mprof_render_source_file_at(
      mprof_gtk_view_state_get_model(state), v->kernel,
      v->source_file > 0 ? (size_t)v->source_file - 1 : 0, NULL);
  return path ? path : "";
}

/* TRUE when the marked line is on the Source view's screen: scrolling to
 * it would not move. */
static gboolean marked_on_screen(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  GtkWidget *view =
      mprof_gtk_window_get_tab_widget(t->window, MPROF_RENDER_SOURCE);
  mprof_render_view v = *mprof_gtk_view_state_get_view(state);
  v.scroll_y = gtk_adjustment_get_value(
      mprof_gtk_timeline_get_vadjustment(MPROF_GTK_TIMELINE(view)));
  double before = v.scroll_y;
  mprof_render_view_source_scroll(&v, mprof_gtk_view_state_get_model(state),
                                  gtk_widget_get_height(view));
  return (v.source_line || v.source_pc) && gtk_widget_get_height(view) > 0 &&
         v.scroll_y == before;
}

/* The code of the marked line holds @p text (case ignored). */
static gboolean marked_holds(selftest *t, const char *text) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  mprof_sources *sources = NULL;
  gboolean holds = FALSE;
  if (mprof_sources_open(
          &sources,
          mprof_render_model_trace(mprof_gtk_view_state_get_model(state)),
          NULL) == 0) {
    size_t len = 0;
    const char *code =
        mprof_sources_line(sources, shown_file(t), v->source_line, &len);
    char *line = code ? g_ascii_strdown(code, (gssize)len) : NULL;
    char *want = g_ascii_strdown(text, -1);
    holds = line && strstr(line, want);
    g_free(line);
    g_free(want);
  }
  mprof_sources_free(sources);
  return holds;
}

/* Click the first instruction found on tab @p tab, at least @p skip rows
 * down; its offset in *offset. FALSE when none is there. */
static gboolean click_instruction(selftest *t, int tab, double skip,
                                  uint32_t *offset) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  GtkWidget *w = mprof_gtk_window_get_tab_widget(t->window, tab);
  int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
  mprof_render_view v = *mprof_gtk_view_state_get_view(state);
  for (double y = skip; y < height; y += 3)
    for (double x = 40; x < width; x += 24) {
      mprof_render_hit hit;
      mprof_render_hit_test(m, &v, tab, width, height, x, y, &hit);
      const mprof_render_kernel *k =
          mprof_render_kernel_at(m, (size_t)hit.kernel);
      if (hit.kind != MPROF_HIT_PC || !k || hit.pc < 0)
        continue;
      *offset = k->pcs[hit.pc].offset;
      /* A click: a drag that does not move. */
      mprof_gtk_timeline_drag(MPROF_GTK_TIMELINE(w), x, y, 0, 0, 0);
      return TRUE;
    }
  return FALSE;
}

/* Hotspots row -> Source at its line; hottest, next hottest (N), back
 * (Shift+N); Ctrl+F and a search as typed, Enter for the next match; a
 * Flame instruction -> its line; a library kernel says it has no lines.
 * Opened with --tab hotspots on a kernel with lines. TRUE while there are
 * steps left. */
static gboolean source_tour(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  GtkWidget *page = mprof_gtk_window_get_source_page(t->window);
  char file[1024];
  switch (t->step++) {
  case 0: {
    SHOT(t, "hotspots");
    check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_HOTSPOTS,
          "the tour starts on Hotspots");
    uint32_t offset = 0;
    /* The third row or below: not the hottest line by chance. */
    check(t,
          click_instruction(t, MPROF_RENDER_HOTSPOTS, 88 + 2 * 22 + 4, &offset),
          "a Hotspots row is clicked");
    uint32_t line = line_of(t, v->kernel, offset, file, sizeof file);
    printf("selftest: Hotspots row 0x%04x -> %s:%u, shown %s:%u\n", offset,
           file, line, shown_file(t), v->source_line);
    check(t,
          mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_SOURCE && line &&
              v->source_line == line && strcmp(shown_file(t), file) == 0,
          "a Hotspots row opens the Source tab at its line");
    return TRUE;
  }
  case 1:
    SHOT(t, "source-from-hotspots");
    check(t, marked_on_screen(t), "the row's line is on screen");
    g_signal_emit_by_name(mprof_gtk_source_page_button(page, 0), "clicked");
    check(t,
          v->source_line == hot_line(t, v->kernel, 0, file, sizeof file) &&
              strcmp(shown_file(t), file) == 0 && marked_on_screen(t),
          "Hottest line goes to the kernel's hottest line");
    check(t,
          mprof_gtk_source_page_key(page, GDK_KEY_n, 0) &&
              v->source_line == hot_line(t, v->kernel, 1, file, sizeof file) &&
              strcmp(shown_file(t), file) == 0,
          "N goes to the next hottest line");
    check(t,
          strstr(mprof_gtk_source_page_status(page), "hot line 2 of") != NULL,
          "the bar says which hot line it is");
    check(t, marked_on_screen(t), "the next hottest line is on screen");
    return TRUE;
  case 2:
    SHOT(t, "source-next");
    check(t,
          mprof_gtk_source_page_key(page, GDK_KEY_N, GDK_SHIFT_MASK) &&
              v->source_line == hot_line(t, v->kernel, 0, file, sizeof file),
          "Shift+N goes back to the hottest line");
    check(t, has_accel(t, "win.find", "<Control>f"), "Ctrl+F is bound");
    act(t, "win.find");
    {
      GtkWidget *entry = mprof_gtk_source_page_search(page);
      GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(t->window));
      check(t,
            focus && (focus == entry || gtk_widget_is_ancestor(focus, entry)),
            "Ctrl+F on the Source tab focuses its search");
      /* Typing in it: the window's single-key actions let the keys by. */
      GAction *zoom =
          g_action_map_lookup_action(G_ACTION_MAP(t->window), "zoom-in");
      check(t, zoom && !g_action_get_enabled(zoom),
            "w types into the search instead of zooming");
      t->line = v->source_line;
      gtk_editable_set_text(GTK_EDITABLE(entry),
                            g_getenv("MPROF_SELFTEST_SOURCE"));
      /* What the entry emits once its typing delay is over: now, not on a
       * timer a loaded machine might not have run by the next step. */
      g_signal_emit_by_name(entry, "search-changed");
    }
    return TRUE;
  case 3: {
    const char *text = g_getenv("MPROF_SELFTEST_SOURCE");
    printf("selftest: find \"%s\" -> line %u (%s)\n", text, v->source_line,
           mprof_gtk_source_page_status(page));
    check(t,
          strcmp(v->source_find, text) == 0 && marked_holds(t, text) &&
              marked_on_screen(t),
          "the search marks a line that holds the text, on screen");
    check(t, strstr(mprof_gtk_source_page_status(page), "lines hold") != NULL,
          "the bar counts the lines that hold it");
    t->line = v->source_line;
    g_signal_emit_by_name(mprof_gtk_source_page_search(page), "activate");
    check(t,
          v->source_line != t->line && marked_holds(t, text) &&
              marked_on_screen(t),
          "Enter goes to the next line that holds it");
    return TRUE;
  }
  case 4: {
    SHOT(t, "source-find");
    /* The file picker: the kernel's second file (a header), at its
     * hottest line. */
    GtkWidget *files = mprof_gtk_source_page_files(page);
    if (mprof_render_source_file_count(m, v->kernel) > 1) {
      gtk_drop_down_set_selected(GTK_DROP_DOWN(files), 1);
      const char *second = mprof_render_source_file_at(m, v->kernel, 1, NULL);
      uint32_t want = 0;
      for (size_t r = 0; !want; r++) {
        uint32_t line = hot_line(t, v->kernel, r, file, sizeof file);
        if (!line)
          break;
        if (strcmp(file, second) == 0)
          want = line;
      }
      printf("selftest: file picker -> %s:%u (want %u)\n", shown_file(t),
             v->source_line, want);
      check(t,
            v->source_file == 2 && strcmp(shown_file(t), second) == 0 && want &&
                v->source_line == want && marked_on_screen(t),
            "the file picker shows a header at its hottest line");
    }
    gtk_widget_grab_focus(
        mprof_gtk_window_get_tab_widget(t->window, MPROF_RENDER_SOURCE));
    {
      GAction *zoom =
          g_action_map_lookup_action(G_ACTION_MAP(t->window), "zoom-in");
      check(t, zoom && g_action_get_enabled(zoom),
            "out of the search, w zooms again");
    }
    show(t, MPROF_RENDER_FLAME);
    return TRUE;
  }
  case 5: {
    SHOT(t, "flame");
    uint32_t offset = 0;
    check(t, click_instruction(t, MPROF_RENDER_FLAME, 0, &offset),
          "a Flame instruction is clicked");
    uint32_t line = line_of(t, v->kernel, offset, file, sizeof file);
    check(t,
          mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_SOURCE && line &&
              v->source_line == line && strcmp(shown_file(t), file) == 0,
          "a Flame instruction opens the Source tab at its line");
    /* A kernel without a line table (cuBLAS): it says so, its SASS kept. */
    const char *library = g_getenv("MPROF_SELFTEST_LIBRARY");
    int k = library ? mprof_render_kernel_find(m, library) : -1;
    if (k >= 0) {
      mprof_gtk_view_state_select_kernel(state, k);
      check(t,
            mprof_render_source_file_count(m, k) == 0 &&
                g_str_has_prefix(mprof_gtk_source_page_status(page),
                                 "No source lines") &&
                mprof_render_content_height(m, v, MPROF_RENDER_SOURCE, 1000) >
                    400,
            "a library kernel says it has no source lines, its SASS kept");
    }
    return k >= 0;
  }
  case 6: {
    SHOT(t, "source-library");
    /* Its hottest instruction marked; N steps to the next hottest. */
    const mprof_render_kernel *k = mprof_render_kernel_at(m, (size_t)v->kernel);
    check(t,
          k && k->pc_count > 1 &&
              v->source_pc == k->pcs[k->hot[0]].offset + 1 &&
              marked_on_screen(t),
          "a library kernel's hottest instruction is marked, on screen");
    check(t,
          k && k->pc_count > 1 &&
              mprof_gtk_source_page_key(page, GDK_KEY_n, 0) &&
              v->source_pc == k->pcs[k->hot[1]].offset + 1 &&
              marked_on_screen(t) &&
              strstr(mprof_gtk_source_page_status(page),
                     "hot instruction 2 of") != NULL,
          "N goes to a library kernel's next hottest instruction");
    show(t, MPROF_RENDER_HOTSPOTS);
    return TRUE;
  }
  case 7: {
    uint32_t offset = 0;
    check(t,
          click_instruction(t, MPROF_RENDER_HOTSPOTS, 88 + 4 * 22 + 4, &offset),
          "a library kernel's Hotspots row is clicked");
    t->line = offset;
    return TRUE;
  }
  case 8: {
    /* The next step: the Source page scrolls once it is shown. */
    uint32_t offset = t->line;
    check(t,
          mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_SOURCE &&
              v->source_pc == offset + 1 && !v->source_line &&
              marked_on_screen(t),
          "a library kernel's Hotspots row opens its SASS at that "
          "instruction");
    return TRUE;
  }
  default: SHOT(t, "source-library-row"); return FALSE;
  }
}

static void end(selftest *t) {
  if (t->ping_source)
    g_source_remove(t->ping_source);
  printf("selftest: %d failure(s)\n", t->failures);
  if (t->failures)
    mprof_gtk_app_set_exit_status(t->app, 1);
  if (t->window)
    gtk_window_close(GTK_WINDOW(t->window));
  /* Closing the last window usually ends the application, but on the CI
   * machine the process once stayed up after "0 failure(s)" until killed:
   * end the run explicitly (the exit status is kept by the app). */
  g_application_quit(G_APPLICATION(t->app));
  g_free(t->dir);
  g_free(t->search);
  g_free(t->progress_text);
  g_free(t);
}

/* ---- a big trace opens on a worker ---------------------------------------
 *
 * The main loop's heartbeat while the trace loads: every 10 ms, the time
 * since the last beat and the progress the window shows. The worker is
 * held before its last step (mprof_gtk_load_hold) until the checks ran: a
 * load on the main thread would never let a beat through, nor end. */
static gboolean ping(gpointer data) {
  selftest *t = data;
  if (!t->window || !mprof_gtk_window_is_loading(t->window))
    return G_SOURCE_CONTINUE;
  gint64 now = g_get_monotonic_time();
  if (t->last_ping && now - t->last_ping > t->longest_gap)
    t->longest_gap = now - t->last_ping;
  t->last_ping = now;
  t->pings_while_loading++;
  double done = 0;
  const char *text = mprof_gtk_window_get_progress(t->window, &done);
  if (text && done > t->progress_seen) {
    t->progress_seen = done;
    g_free(t->progress_text);
    t->progress_text = g_strdup(text);
  }
  return G_SOURCE_CONTINUE;
}

/* Copy tab @p tab as text (win.copy-text) and save what the clipboard
 * then holds as @p name in the screenshot folder, for the test to compare
 * with `mprof summary`. */
static void copy_tab(selftest *t, int tab, const char *name) {
  char **accels = gtk_application_get_accels_for_action(GTK_APPLICATION(t->app),
                                                        "win.copy-text");
  guint key = 0;
  GdkModifierType mods = 0;
  if (accels && accels[0])
    gtk_accelerator_parse(accels[0], &key, &mods);
  g_strfreev(accels);
  check(t, key == GDK_KEY_c && mods == (GDK_CONTROL_MASK | GDK_SHIFT_MASK),
        "Ctrl+Shift+C copies the tab");
  show(t, tab);
  act(t, "win.copy-text");
  GdkContentProvider *content = gdk_clipboard_get_content(
      gtk_widget_get_clipboard(GTK_WIDGET(t->window)));
  GValue value = G_VALUE_INIT;
  g_value_init(&value, G_TYPE_STRING);
  gboolean ok =
      content && gdk_content_provider_get_value(content, &value, NULL);
  const char *text = ok ? g_value_get_string(&value) : NULL;
  char *what =
      g_strdup_printf("the %s copies as text", mprof_render_tab_title(tab));
  check(t,
        text && *text &&
            g_str_has_prefix(mprof_gtk_window_get_status(t->window),
                             "Copied the "),
        what);
  g_free(what);
  char *path = g_build_filename(t->dir, name, NULL);
  if (text)
    g_file_set_contents(path, text, -1, NULL);
  g_free(path);
  g_value_unset(&value);
}

static gboolean load_tick(gpointer data) {
  selftest *t = data;
  gboolean cancel = strcmp(t->load_mode, "cancel") == 0;
  gboolean close = strcmp(t->load_mode, "close") == 0;
  gint64 now = g_get_monotonic_time();
  if (close && !t->window) {
    /* Closed while loading: the worker ends, the application stays
     * until then. */
    if (mprof_gtk_load_running() && now - t->cancelled_at < 30 * G_USEC_PER_SEC)
      return G_SOURCE_CONTINUE;
    check(t, mprof_gtk_load_running() == 0,
          "the worker of a closed window stops at its next step");
    end(t);
    return G_SOURCE_REMOVE;
  }
  if (now - t->load_begin > 120 * G_USEC_PER_SEC) {
    check(t, FALSE, "the trace loads within 120 s");
    end(t);
    return G_SOURCE_REMOVE;
  }
  if (mprof_gtk_window_is_loading(t->window)) {
    if (t->progress_seen < 0.9 || t->released)
      return G_SOURCE_CONTINUE; /* not yet at the hold, or let go */
    if (!t->held_pings) {
      t->held_pings = t->pings_while_loading;
      printf("selftest: %d pings answered while the trace was read and "
             "joined\n",
             t->held_pings);
    }
    /* Held: the main loop goes on answering, the page shows the step. */
    if (t->pings_while_loading < t->held_pings + 5 &&
        now - t->load_begin < 60 * G_USEC_PER_SEC)
      return G_SOURCE_CONTINUE;
    if (!shot(t, "loading"))
      return G_SOURCE_CONTINUE;
    printf("selftest: while loading, %d pings answered (longest gap %.0f "
           "ms), progress shown: '%s' at %.0f%%\n",
           t->pings_while_loading, t->longest_gap / 1e3, t->progress_text,
           100 * t->progress_seen);
    check(t, t->pings_while_loading >= t->held_pings + 5,
          "the window answers while the trace loads");
    check(t,
          t->progress_text && *t->progress_text &&
              g_strcmp0(mprof_gtk_window_get_page(t->window), "loading") == 0,
          "the loading page shows the step");
    if (!cancel && !close) {
      t->released = TRUE;
      mprof_gtk_load_hold(FALSE);
      return G_SOURCE_CONTINUE;
    }
    if (close) {
      /* The application would end with the worker: kept for the check. */
      g_application_hold(G_APPLICATION(t->app));
      gtk_window_destroy(GTK_WINDOW(t->window));
      t->window = NULL;
      t->cancelled_at = now;
      return G_SOURCE_CONTINUE;
    }
    GtkWidget *button = mprof_gtk_window_get_cancel_button(t->window);
    check(t, button && gtk_widget_get_visible(button),
          "the loading page has a Cancel button");
    if (button)
      g_signal_emit_by_name(button, "clicked");
    t->cancelled_at = now;
    check(t,
          !mprof_gtk_window_is_loading(t->window) &&
              mprof_gtk_window_is_welcome(t->window) &&
              g_strcmp0(mprof_gtk_window_get_page(t->window), "welcome") == 0 &&
              !mprof_gtk_window_get_state(t->window),
          "Cancel shows the welcome page at once");
    return G_SOURCE_CONTINUE;
  }
  if (cancel) {
    if (mprof_gtk_load_running() && now - t->cancelled_at < 30 * G_USEC_PER_SEC)
      return G_SOURCE_CONTINUE;
    check(t, mprof_gtk_load_running() == 0,
          "the cancelled worker stops at its next step");
    if (!shot(t, "cancelled"))
      return G_SOURCE_CONTINUE;
  } else {
    MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
    size_t launches = 0;
    if (state)
      mprof_trace_launches(
          mprof_render_model_trace(mprof_gtk_view_state_get_model(state)),
          &launches);
    if (!t->loaded) {
      t->loaded = TRUE;
      printf("selftest: opened %zu launches\n", launches);
      check(t, state && launches > 0, "the big trace opens");
      check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_SUMMARY,
            "it opens on the Summary");
    }
    if (!shot(t, "loaded"))
      return G_SOURCE_CONTINUE;
    if (state) {
      const mprof_render_kernel *k = mprof_render_kernel_at(
          mprof_gtk_view_state_get_model(state),
          (size_t)mprof_gtk_view_state_get_view(state)->kernel);
      printf("selftest: copying kernel %s\n", k ? k->stats->mangled : "-");
      copy_tab(t, MPROF_RENDER_SUMMARY, "summary.txt");
      copy_tab(t, MPROF_RENDER_HOTSPOTS, "hotspots.txt");
    }
  }
  end(t);
  return G_SOURCE_REMOVE;
}

/* ---- the Ranks tab ($MPROF_SELFTEST_RANKS) ------------------------------- */

/* Opened with --tab ranks on one trace per rank: the hottest cell (the
 * largest time against its step's median) is the planted straggler's
 * step; a click on it shows the Trace zoomed to that step's GPU window,
 * selected, the rows scrolled to that rank's process. TRUE while there
 * are steps left. */
static gboolean ranks_tour(selftest *t) {
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  const mprof_render_model *m = mprof_gtk_view_state_get_model(state);
  switch (t->step++) {
  case 0: {
    SHOT(t, "ranks");
    check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_RANKS,
          "the tour starts on Ranks");
    GtkWidget *w =
        mprof_gtk_window_get_tab_widget(t->window, MPROF_RENDER_RANKS);
    int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
    mprof_render_view view = *v;
    mprof_render_hit hit, best = {0};
    double bx = -1, by = -1;
    for (double y = 0; y < height; y += 4)
      for (double x = 0; x < width; x += 8) {
        mprof_render_hit_test(m, &view, MPROF_RENDER_RANKS, width, height, x, y,
                              &hit);
        if (hit.kind == MPROF_HIT_RANK_STEP &&
            (bx < 0 || hit.value > best.value)) {
          best = hit;
          bx = x;
          by = y;
        }
      }
    check(t, bx >= 0, "Ranks has cells to click");
    if (bx < 0)
      return FALSE;
    char text[512], want[64];
    mprof_render_hit_describe(m, &best, text, sizeof text);
    int rank = -1, step = -1;
    sscanf(t->ranks, "%d:%d", &rank, &step);
    snprintf(want, sizeof want, "rank %d, step %d ", rank, step);
    printf("selftest: the hottest cell: %s\n", text);
    check(t,
          strncmp(text, want, strlen(want)) == 0 && strstr(text, "straggler"),
          "the hottest cell is the planted straggler's step");
    t->ranks_rank = (int)best.rank_index;
    t->ranks_step = (int)best.step_index;
    /* A click: a drag that does not move. */
    mprof_gtk_timeline_drag(MPROF_GTK_TIMELINE(w), bx, by, 0, 0, 0);
    return TRUE;
  }
  case 1: {
    SHOT(t, "ranks-trace");
    check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_TRACE,
          "a click on a cell shows the Trace");
    int64_t start = 0, end = 0;
    check(t,
          mprof_render_rank_step_range(m, (size_t)t->ranks_rank,
                                       (size_t)t->ranks_step, &start,
                                       &end) == 0 &&
              v->sel_start_ns == start && v->sel_end_ns == end,
          "the step's GPU window is selected");
    check(t,
          v->start_ns <= start && v->end_ns >= end &&
              v->end_ns - v->start_ns < 2 * (end - start),
          "the Trace is zoomed to the step");
    /* The rank's GPU band is on screen, scrolled to (not the first). */
    GtkWidget *w =
        mprof_gtk_window_get_tab_widget(t->window, MPROF_RENDER_TRACE);
    mprof_render_view view = *v;
    view.scroll_y = gtk_adjustment_get_value(
        mprof_gtk_timeline_get_vadjustment(MPROF_GTK_TIMELINE(w)));
    const mprof_trace *trace = mprof_render_model_trace(m);
    int want = -1, band = -1;
    sscanf(t->ranks, "%d", &want);
    for (size_t i = 0; band < 0 && i < mprof_render_row_count(m); i++) {
      const mprof_render_row *row = mprof_render_row_at(m, i);
      uint32_t process = row->kind == MPROF_ROW_DEVICE
                             ? mprof_trace_device_process(trace, row->device)
                             : MPROF_INDEX_NONE;
      const char *rank = process != MPROF_INDEX_NONE
                             ? mprof_trace_process_meta(trace, process, "rank")
                             : NULL;
      if (rank && atoi(rank) == want)
        band = (int)i;
    }
    double h = 0, top = band >= 0
                            ? mprof_render_row_top(m, &view, (size_t)band, &h)
                            : -1;
    printf("selftest: rank %d's band at %.0f px, rows scrolled %.0f px\n", want,
           top, view.scroll_y);
    check(t,
          band >= 0 && view.scroll_y > 0 && top >= view.scroll_y &&
              top + h <=
                  view.scroll_y + gtk_widget_get_height(w) - MPROF_RENDER_RULER,
          "the Trace's rows are scrolled to the rank's process");
    return FALSE;
  }
  }
  return FALSE;
}

/* One step per tick, so every screenshot sees a drawn frame. */
static gboolean tick(gpointer data) {
  selftest *t = data;
  if (t->window && mprof_gtk_window_is_loading(t->window))
    return G_SOURCE_CONTINUE; /* opened on a worker: not yet */
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  if (t->welcome) {
    if (welcome(t))
      return G_SOURCE_CONTINUE;
    goto finish;
  }
  if (t->source && state) {
    if (source_tour(t))
      return G_SOURCE_CONTINUE;
    goto finish;
  }
  if (t->ranks && state) {
    if (ranks_tour(t))
      return G_SOURCE_CONTINUE;
    goto finish;
  }
  if (!state) {
    if (!shot(t, "error"))
      return G_SOURCE_CONTINUE;
    goto finish;
  }
  const mprof_render_view *v = mprof_gtk_view_state_get_view(state);
  switch (t->step++) {
  case 0:
    if (mprof_render_model_is_demo(mprof_gtk_view_state_get_model(state)))
      check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_ACTIVITY,
            "the demo opens on Activity");
    else if (mprof_render_model_first_tab(
                 mprof_gtk_view_state_get_model(state)) == MPROF_RENDER_MEGA)
      check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_MEGA,
            "a .mkprof opens on Mega");
    else
      check(t, mprof_gtk_window_get_tab(t->window) == MPROF_RENDER_SUMMARY,
            "it opens on the Summary");
    check(t,
          has_accel(t, "win.zoom-in", "w") &&
              has_accel(t, "win.zoom-in", "plus") &&
              has_accel(t, "win.zoom-out", "s") &&
              has_accel(t, "win.zoom-out", "minus") &&
              has_accel(t, "win.zoom-reset", "0") &&
              has_accel(t, "win.pan-left", "a") &&
              has_accel(t, "win.pan-right", "d"),
          "keys +/-/0 and W/A/S/D are bound");
    /* F1 and ? list the keys, the timeline's too, in text that can be
     * selected. */
    check(t,
          has_accel(t, "win.keys", "F1") &&
              has_accel(t, "win.keys", "question"),
          "F1 and ? are bound");
    act(t, "win.keys");
    {
      GtkWidget *keys = mprof_gtk_actions_keys_window(t->window);
      GtkWidget *label = keys ? gtk_window_get_child(GTK_WINDOW(keys)) : NULL;
      const char *text = label ? gtk_label_get_text(GTK_LABEL(label)) : "";
      check(t,
            keys && gtk_widget_get_visible(keys) && strstr(text, "Alt+1") &&
                strstr(text, "Esc") && strstr(text, "F, Enter") &&
                gtk_label_get_selectable(GTK_LABEL(label)),
            "the keys window lists the keys");
      if (keys)
        gtk_window_close(GTK_WINDOW(keys));
    }
    {
      const mprof_render_kernel *k = mprof_render_kernel_at(
          mprof_gtk_view_state_get_model(state), (size_t)v->kernel);
      printf("selftest: kernel #%d %s\n", (int)v->kernel,
             k ? k->stats->mangled : "(none)");
    }
    SHOT(t, mprof_render_tab_key(mprof_gtk_window_get_tab(t->window)));
    show(t, MPROF_RENDER_TRACE);
    break;
  case 1:
    SHOT(t, "trace");
    t->span_before = span(t);
    /* Keys (their actions), then the wheel at the middle of the time
     * area, Shift+wheel (row height) and Ctrl+wheel (row zoom). */
    act(t, "win.zoom-in");
    act(t, "win.zoom-in");
    act(t, "win.pan-right");
    act(t, "win.pan-left");
    {
      MprofGtkTimeline *tl =
          MPROF_GTK_TIMELINE(mprof_gtk_window_get_timeline(t->window));
      double x =
          MPROF_RENDER_GUTTER +
          (gtk_widget_get_width(GTK_WIDGET(tl)) - MPROF_RENDER_GUTTER) / 2.0;
      double rows_before = v->row_height;
      mprof_gtk_timeline_scroll(tl, x, 80, 0, -3, 0);
      mprof_gtk_timeline_scroll(tl, x, 80, 0, -4, GDK_SHIFT_MASK);
      check(t, v->row_height > rows_before, "Shift+wheel makes rows taller");
      mprof_gtk_timeline_scroll(tl, x, 80, 0, -1, GDK_CONTROL_MASK);
    }
    check(t, span(t) < t->span_before / 4, "zoomed in");
    {
      /* Close enough to see launches one by one, with the inset of the
       * selected kernel inside its launches. */
      const mprof_trace *trace =
          mprof_render_model_trace(mprof_gtk_view_state_get_model(state));
      size_t streams;
      mprof_trace_streams(trace, &streams);
      uint32_t s = 0;
      while (s < streams && !mprof_trace_stream_launch_count(trace, s))
        s++;
      size_t n = mprof_trace_stream_launch_count(trace, s);
      const mprof_launch_record *a = mprof_trace_stream_launch(trace, s, 0);
      const mprof_launch_record *b =
          n ? mprof_trace_stream_launch(trace, s, n > 3 ? 3 : n - 1) : NULL;
      if (a && b) {
        mprof_gtk_view_state_set_range(state, (gint64)a->start, (gint64)b->end);
        size_t launches;
        mprof_trace_launches(trace, &launches);
        mprof_gtk_view_state_select_launch(
            state, (gint64)(mprof_trace_stream_launch(trace, s, n > 1 ? 1 : 0) -
                            mprof_trace_launches(trace, &launches)));
        mprof_gtk_view_state_set_row_height(state, 72);
        /* Shift+drag over the middle third of the time area selects that
         * third of the view, and the Trace lists what ran in it. */
        MprofGtkTimeline *tl =
            MPROF_GTK_TIMELINE(mprof_gtk_window_get_timeline(t->window));
        double tw = gtk_widget_get_width(GTK_WIDGET(tl)) - MPROF_RENDER_GUTTER;
        gint64 third = (gint64)(b->end - a->start) / 3;
        double ns_per_px = (double)(b->end - a->start) / tw;
        mprof_gtk_timeline_drag(tl, MPROF_RENDER_GUTTER + tw / 3, 200, tw / 3,
                                0, GDK_SHIFT_MASK);
        check(t,
              llabs(v->sel_start_ns - ((gint64)a->start + third)) <=
                      2 * ns_per_px + 1 &&
                  llabs(v->sel_end_ns - ((gint64)a->start + 2 * third)) <=
                      2 * ns_per_px + 1,
              "Shift+drag selects the time range under it");
        check(t, v->start_ns == (gint64)a->start, "Shift+drag does not pan");
        {
          /* Under the Trace, every kernel of the range, as text to copy. */
          GtkWidget *list = mprof_gtk_window_get_selection_list(t->window);
          const char *text = list ? gtk_label_get_text(GTK_LABEL(list)) : "";
          check(t,
                list && gtk_label_get_selectable(GTK_LABEL(list)) &&
                    gtk_widget_get_visible(
                        gtk_widget_get_parent(gtk_widget_get_parent(list))) &&
                    strstr(text, " selected: "),
                "the selected range's kernels are listed as text");
        }
        mprof_window *w = NULL;
        if (mprof_window_build(
                &w,
                mprof_render_model_join(mprof_gtk_view_state_get_model(state)),
                (uint64_t)v->sel_start_ns, (uint64_t)v->sel_end_ns) == 0) {
          check(t, mprof_window_totals_of(w)->launches > 0,
                "the selected range holds launches");
          /* The list under the Trace has a line for every one of them. */
          GtkWidget *list = mprof_gtk_window_get_selection_list(t->window);
          const char *text = list ? gtk_label_get_text(GTK_LABEL(list)) : "";
          size_t lines = 0;
          for (const char *p = strstr(text, " \u00d7 "); p;
               p = strstr(p + 1, " \u00d7 "))
            lines++;
          check(t, lines == mprof_window_kernel_count(w),
                "every kernel of the range is listed");
          mprof_window_free(w);
        }
        /* Hovering the selected launch's neighbour makes it the hovered
         * launch (its flow arrow, when the trace has API calls). */
        mprof_render_timemap map;
        mprof_render_trace_timemap(&map, v,
                                   gtk_widget_get_width(GTK_WIDGET(tl)));
        const mprof_launch_record *first =
            mprof_trace_stream_launch(trace, s, 0);
        double hx = (mprof_render_time_to_x(&map, (int64_t)first->start) +
                     mprof_render_time_to_x(&map, (int64_t)first->end)) /
                    2;
        const mprof_render_model *model = mprof_gtk_view_state_get_model(state);
        int row = -1;
        for (size_t i = 0; i < mprof_render_row_count(model); i++)
          if (mprof_render_row_at(model, i)->kind == MPROF_ROW_STREAM &&
              mprof_render_row_at(model, i)->stream == s)
            row = (int)i;
        double rh;
        double top = MPROF_RENDER_RULER - v->scroll_y +
                     mprof_render_row_top(model, v, (size_t)row, &rh);
        mprof_gtk_timeline_hover(tl, hx, top + rh / 2);
        check(t,
              v->hover_launch ==
                  (gint64)(first - mprof_trace_launches(trace, &launches)),
              "hovering a launch makes it the hovered launch");
      }
    }
    break;
  case 2: {
    SHOT(t, "trace-zoomed");
    /* F zooms to the range Shift+drag selected, Esc clears it and the
     * selected launch; with nothing selected Esc is left to the window;
     * Enter zooms to a selected launch. */
    MprofGtkTimeline *tl =
        MPROF_GTK_TIMELINE(mprof_gtk_window_get_timeline(t->window));
    gint64 a = v->sel_start_ns, b = v->sel_end_ns;
    check(t,
          b > a && mprof_gtk_timeline_key(tl, GDK_KEY_f, 0) &&
              v->start_ns == a && v->end_ns == b,
          "F zooms to the selected range");
    check(t,
          mprof_gtk_timeline_key(tl, GDK_KEY_Escape, 0) &&
              v->sel_end_ns <= v->sel_start_ns && v->launch == -1,
          "Esc clears the selection");
    {
      GtkWidget *list = mprof_gtk_window_get_selection_list(t->window);
      check(t,
            list && !gtk_widget_get_visible(
                        gtk_widget_get_parent(gtk_widget_get_parent(list))),
            "without a selection the list is hidden");
    }
    check(t, !mprof_gtk_timeline_key(tl, GDK_KEY_Escape, 0),
          "Esc with nothing selected is left to the window");
    mprof_gtk_view_state_select_launch(state, 0);
    {
      size_t n;
      const mprof_launch_record *l0 = mprof_trace_launches(
          mprof_render_model_trace(mprof_gtk_view_state_get_model(state)), &n);
      check(t,
            n && mprof_gtk_timeline_key(tl, GDK_KEY_Return, 0) &&
                v->start_ns < (gint64)l0->start &&
                v->end_ns > (gint64)l0->end &&
                v->end_ns - v->start_ns <
                    2 * (gint64)(l0->end - l0->start) + 1000,
            "Enter zooms to the selected launch");
    }
    act(t, "win.zoom-reset");
    {
      const mprof_render_limits *l = mprof_gtk_view_state_get_limits(state);
      check(t, span(t) == l->max_ns - l->min_ns,
            "0 shows the whole trace again");
    }
    search_open(t);
    break;
  }
  case 3:
    /* The search tour walks the launches of one kernel; a .mkprof has one
     * launch per GPU, each its own kernel. */
    if (mprof_trace_is_mkprof(
            mprof_render_model_trace(mprof_gtk_view_state_get_model(state)))) {
      printf("selftest: skip: the search tour (a .mkprof has one launch "
             "per GPU)\n");
      break;
    }
    if (!search_enter(t)) {
      t->step--;
      return G_SOURCE_CONTINUE;
    }
    break;
  case 4:
    SHOT(t, "trace-search");
    search_close_and_fold(t);
    act(t, "win.zoom-reset");
    show(t, MPROF_RENDER_HOTSPOTS);
    break;
  case 5:
    SHOT(t, "hotspots");
    show(t, MPROF_RENDER_FLAME);
    break;
  case 6:
    SHOT(t, "flame");
    show(t, MPROF_RENDER_RASTER);
    break;
  case 7:
    SHOT(t, "raster");
    show(t, MPROF_RENDER_MEGA);
    break;
  case 8: {
    SHOT(t, "mega");
    /* Ctrl+wheel makes SMs taller until Mega opens them into rows. */
    MprofGtkTimeline *tl = MPROF_GTK_TIMELINE(
        mprof_gtk_window_get_tab_widget(t->window, MPROF_RENDER_MEGA));
    check(t, tl != NULL, "Mega has a timeline");
    if (tl) {
      double x =
          MPROF_RENDER_GUTTER +
          (gtk_widget_get_width(GTK_WIDGET(tl)) - MPROF_RENDER_GUTTER) / 2.0;
      mprof_gtk_timeline_scroll(tl, x, 120, 0, -20, GDK_CONTROL_MASK);
      check(t, v->sm_height >= 30, "Ctrl+wheel makes SMs taller in Mega");
    }
    break;
  }
  case 9:
    SHOT(t, "mega-rows");
    show(t, MPROF_RENDER_DENSITY);
    break;
  case 10:
    SHOT(t, "density");
    if (mprof_render_model_has_spans(mprof_gtk_view_state_get_model(state))) {
      show(t, MPROF_RENDER_ACTIVITY);
      mprof_gtk_window_set_activity(t->window, MPROF_ACTIVITY_WARP,
                                    MPROF_ACTIVITY_INSTRUCTION);
      check(t,
            v->activity_rows == MPROF_ACTIVITY_WARP &&
                v->activity_depth == MPROF_ACTIVITY_INSTRUCTION,
            "the Rows and Depth switches");
    }
    break;
  case 11:
    if (mprof_render_model_has_spans(mprof_gtk_view_state_get_model(state)))
      SHOT(t, "activity");
    if (mprof_render_kernel_count(mprof_gtk_view_state_get_model(state)) > 1) {
      /* The kernel picker switches the kernel of every view. */
      gtk_widget_activate_action(GTK_WIDGET(t->window), "win.tab", "s",
                                 "summary");
      mprof_gtk_view_state_select_kernel(state, 1);
      check(t, v->kernel == 1, "the second kernel is selected");
    }
    break;
  case 12: SHOT(t, "summary-second-kernel"); goto finish;
  }
  return G_SOURCE_CONTINUE;
finish:
  end(t);
  return G_SOURCE_REMOVE;
}

static gboolean first_tick(gpointer data) {
  g_timeout_add(400, tick, data);
  return G_SOURCE_REMOVE;
}

void mprof_gtk_selftest_start(MprofGtkApp *app, MprofGtkWindow *window,
                              const char *dir) {
  selftest *t = g_new0(selftest, 1);
  t->app = app;
  t->window = window;
  t->dir = g_strdup(dir);
  t->welcome = mprof_gtk_window_is_welcome(window);
  t->source = g_getenv("MPROF_SELFTEST_SOURCE") != NULL;
  t->ranks = g_getenv("MPROF_SELFTEST_RANKS");
  g_mkdir_with_parents(dir, 0755);
  t->load_mode = g_getenv("MPROF_SELFTEST_LOAD");
  if (t->load_mode && mprof_gtk_window_is_loading(window)) {
    t->load_begin = g_get_monotonic_time();
    t->ping_source = g_timeout_add(10, ping, t);
    g_timeout_add(50, load_tick, t);
    return;
  }
  t->load_mode = NULL;
  /* Give the window time to map and draw its first frame. */
  g_timeout_add(1200, first_tick, t);
}
