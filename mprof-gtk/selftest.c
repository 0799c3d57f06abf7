/*
 * mprof-gtk — the scripted smoke test.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "open.h"
#include "selftest.h"
#include "timeline.h"

typedef struct selftest {
  MprofGtkApp *app;
  MprofGtkWindow *window;
  char *dir;
  int step;
  int failures;
  int retries;
  gint64 span_before;
  gboolean welcome; /* started on the welcome page */
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

/* One step per tick, so every screenshot sees a drawn frame. */
static gboolean tick(gpointer data) {
  selftest *t = data;
  MprofGtkViewState *state = mprof_gtk_window_get_state(t->window);
  if (t->welcome) {
    if (welcome(t))
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
    show(t, MPROF_RENDER_HOTSPOTS);
    break;
  }
  case 3:
    SHOT(t, "hotspots");
    show(t, MPROF_RENDER_FLAME);
    break;
  case 4:
    SHOT(t, "flame");
    show(t, MPROF_RENDER_RASTER);
    break;
  case 5:
    SHOT(t, "raster");
    show(t, MPROF_RENDER_MEGA);
    break;
  case 6: {
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
  case 7:
    SHOT(t, "mega-rows");
    show(t, MPROF_RENDER_DENSITY);
    break;
  case 8:
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
  case 9:
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
  case 10: SHOT(t, "summary-second-kernel"); goto finish;
  }
  return G_SOURCE_CONTINUE;
finish:
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
  g_free(t);
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
  g_mkdir_with_parents(dir, 0755);
  /* Give the window time to map and draw its first frame. */
  g_timeout_add(1200, first_tick, t);
}
