/*
 * mprof-gtk — the main window.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "copy.h"
#include "open.h"
#include "search.h"
#include "source_page.h"
#include "timeline.h"
#include "window.h"

struct _MprofGtkWindow {
  GtkApplicationWindow parent_instance;
  mprof_render_model *model;
  MprofGtkViewState *state;
  gulong changed_handler;
  GtkWidget *stack, *switcher, *picker, *status, *timeline;
  /* Under the Trace: every kernel of the selected range, as text that can
   * be selected and copied, in a scrolled box shown while there is one. */
  GtkWidget *selection, *selection_box;
  GtkWidget *search; /* the Trace's search bar (Ctrl+F) */
  GtkWidget *timelines[MPROF_RENDER_TAB_COUNT]; /* per timeline tab */
  GtkWidget *rows_switch, *depth_switch;        /* Activity */
  GtkWidget *source_page;                       /* Source */
  char *default_status;
  gboolean syncing_picker;
  gboolean fitted[MPROF_RENDER_TAB_COUNT]; /* span tab fitted to a kernel */
  int fitted_kernel;
  gboolean span_tab_seen; /* a span tab has been shown in this window */
  gboolean keep_kernel;   /* the kernel was named: span tabs keep it */
  gboolean welcome;       /* no trace: the welcome page */
  gboolean loading;       /* the trace is being opened (load.c) */
  GtkWidget *header, *progress, *cancel;
};

G_DEFINE_FINAL_TYPE(MprofGtkWindow, mprof_gtk_window,
                    GTK_TYPE_APPLICATION_WINDOW)

static void set_status(MprofGtkWindow *self, const char *text) {
  gtk_label_set_text(GTK_LABEL(self->status),
                     text && *text ? text : self->default_status);
}

static void on_hover(GtkWidget *widget, const char *text, gpointer data) {
  (void)widget;
  set_status(data, text);
}

static void on_open_kernel(GtkWidget *widget, int kernel, gpointer data) {
  (void)widget;
  MprofGtkWindow *self = data;
  mprof_gtk_view_state_select_kernel(self->state, kernel);
  mprof_gtk_window_set_tab(self, MPROF_RENDER_SUMMARY);
}

/* A click on an instruction (Hotspots, Flame, Raster): its line in the
 * Source tab (a library kernel's Source tab says it has none). */
static void on_open_source(GtkWidget *widget, int kernel, guint offset,
                           gpointer data) {
  (void)widget;
  MprofGtkWindow *self = data;
  mprof_gtk_view_state_source_pc(self->state, kernel, offset);
  mprof_gtk_window_set_tab(self, MPROF_RENDER_SOURCE);
}

/* A click on a Ranks cell: that rank's step on the Trace, its GPU window
 * selected and in view, the rows scrolled to the rank's process. */
static void on_open_rank_step(GtkWidget *widget, int rank, int step,
                              gpointer data) {
  (void)widget;
  MprofGtkWindow *self = data;
  mprof_render_view v = *mprof_gtk_view_state_get_view(self->state);
  if (rank < 0 || step < 0 ||
      mprof_render_view_open_rank_step(
          &v, mprof_gtk_view_state_get_model(self->state), (size_t)rank,
          (size_t)step))
    return;
  mprof_gtk_view_state_set_selection(self->state, v.sel_start_ns, v.sel_end_ns);
  mprof_gtk_view_state_set_range(self->state, v.start_ns, v.end_ns);
  mprof_gtk_window_set_tab(self, MPROF_RENDER_TRACE);
  if (self->timeline)
    gtk_adjustment_set_value(
        mprof_gtk_timeline_get_vadjustment(MPROF_GTK_TIMELINE(self->timeline)),
        v.scroll_y);
}

/* A span tab shows its kernel's spans when it is first shown for a
 * kernel; afterwards the time range is the user's. */
static void fit_span_tab(MprofGtkWindow *self, int tab) {
  if (!mprof_render_tab_is_span(tab) || !self->state)
    return;
  if (!self->span_tab_seen) {
    /* As `mprof view --tab mega` does (mprof_render_view_open_span_tab):
     * a kernel that has spans unless one was named; later picks are the
     * user's, and a kernel without spans shows its projection. */
    self->span_tab_seen = TRUE;
    mprof_gtk_view_state_open_span_tab(self->state, self->keep_kernel);
    memset(self->fitted, 0, sizeof self->fitted);
    self->fitted_kernel = mprof_gtk_view_state_get_view(self->state)->kernel;
    self->fitted[tab] = TRUE;
    return;
  }
  int kernel = mprof_gtk_view_state_get_view(self->state)->kernel;
  if (kernel != self->fitted_kernel) {
    memset(self->fitted, 0, sizeof self->fitted);
    self->fitted_kernel = kernel;
  }
  /* The span tabs share one range: fitted once for all of them. */
  gboolean shared = self->fitted[MPROF_RENDER_MEGA] ||
                    self->fitted[MPROF_RENDER_DENSITY] ||
                    self->fitted[MPROF_RENDER_ACTIVITY];
  self->fitted[tab] = TRUE;
  if (!shared)
    mprof_gtk_view_state_fit_spans(self->state);
}

static void update_selection(MprofGtkWindow *self) {
  if (!self->selection)
    return;
  char *text =
      mprof_render_selection_text(mprof_gtk_view_state_get_model(self->state),
                                  mprof_gtk_view_state_get_view(self->state));
  /* A trace's names are what its writer made them: GTK takes UTF-8. */
  char *valid = text ? g_utf8_make_valid(text, -1) : NULL;
  gtk_label_set_text(GTK_LABEL(self->selection), valid ? valid : "");
  gtk_widget_set_visible(self->selection_box, text != NULL);
  g_free(valid);
  free(text);
}

static void on_state_changed(MprofGtkViewState *state, guint what,
                             gpointer data) {
  MprofGtkWindow *self = data;
  if (what & MPROF_GTK_CHANGED_SELECTION)
    update_selection(self);
  if (!(what & MPROF_GTK_CHANGED_KERNEL))
    return;
  fit_span_tab(self, mprof_gtk_window_get_tab(self));
  int kernel = mprof_gtk_view_state_get_view(state)->kernel;
  self->syncing_picker = TRUE;
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->picker),
                             kernel >= 0 ? (guint)kernel
                                         : GTK_INVALID_LIST_POSITION);
  self->syncing_picker = FALSE;
}

static void on_picker_selected(GObject *picker, GParamSpec *pspec,
                               gpointer data) {
  (void)pspec;
  MprofGtkWindow *self = data;
  if (self->syncing_picker)
    return;
  guint selected = gtk_drop_down_get_selected(GTK_DROP_DOWN(picker));
  if (selected != GTK_INVALID_LIST_POSITION)
    mprof_gtk_view_state_select_kernel(self->state, (int)selected);
}

/* Picker rows: labels that ellipsize, so long C++ names stay readable. */
static void picker_setup(GtkSignalListItemFactory *factory, GtkListItem *item,
                         gpointer data) {
  (void)factory;
  (void)data;
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars(GTK_LABEL(label), 56);
  gtk_list_item_set_child(item, label);
}

static void picker_bind(GtkSignalListItemFactory *factory, GtkListItem *item,
                        gpointer data) {
  (void)factory;
  (void)data;
  GtkStringObject *s = GTK_STRING_OBJECT(gtk_list_item_get_item(item));
  gtk_label_set_text(GTK_LABEL(gtk_list_item_get_child(item)),
                     gtk_string_object_get_string(s));
}

static GtkWidget *make_picker(MprofGtkWindow *self) {
  GtkStringList *names = gtk_string_list_new(NULL);
  size_t devices;
  mprof_trace_devices(mprof_render_model_trace(self->model), &devices);
  for (size_t i = 0; i < mprof_render_kernel_count(self->model); i++) {
    const mprof_render_kernel *k = mprof_render_kernel_at(self->model, i);
    char line[768], name[512], pct[32];
    /* Cut in the middle, never through what tells it apart. */
    mprof_name_set_fit(k->short_names, k->index, name, sizeof name, 96);
    mprof_format_percent(pct, sizeof pct, k->stats->share);
    if (devices > 1) /* the CUDA ordinal, as the Summary and Trace name it */
      snprintf(line, sizeof line, "%s  \u2014  %s (GPU %u)", name, pct,
               k->stats->device_id);
    else
      snprintf(line, sizeof line, "%s  \u2014  %s", name, pct);
    if (k->stats->flags & MPROF_KERNEL_MPROF_OWN) /* last, and says why */
      snprintf(line + strlen(line), sizeof line - strlen(line),
               "  (mprof's own)");
    /* A trace's names are what its writer made them: GTK takes UTF-8. */
    char *valid = g_utf8_make_valid(line, -1);
    gtk_string_list_append(names, valid);
    g_free(valid);
  }
  /* Type to search: the popup filters on the kernel's line. */
  GtkWidget *picker = gtk_drop_down_new(
      G_LIST_MODEL(names),
      gtk_property_expression_new(GTK_TYPE_STRING_OBJECT, NULL, "string"));
  gtk_drop_down_set_enable_search(GTK_DROP_DOWN(picker), TRUE);
#if GTK_CHECK_VERSION(4, 12, 0)
  /* "FillFunctor" finds vectorized_elementwise_kernel<4, FillFunctor...>;
   * before 4.12 the search matches the start of the line. */
  gtk_drop_down_set_search_match_mode(GTK_DROP_DOWN(picker),
                                      GTK_STRING_FILTER_MATCH_MODE_SUBSTRING);
#endif
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(picker_setup), NULL);
  g_signal_connect(factory, "bind", G_CALLBACK(picker_bind), NULL);
  gtk_drop_down_set_factory(GTK_DROP_DOWN(picker), factory);
  g_object_unref(factory);
  gtk_widget_set_tooltip_text(picker, "Kernel (by GPU time)");
  return picker;
}

/* A view with its scrollbars (a page scrolls only down). */
static GtkWidget *tab_page(MprofGtkWindow *self, int tab) {
  GtkWidget *grid = gtk_grid_new();
  GtkWidget *timeline = mprof_gtk_timeline_new(self->state, tab);
  MprofGtkTimeline *t = MPROF_GTK_TIMELINE(timeline);
  gtk_grid_attach(GTK_GRID(grid), timeline, 0, 0, 1, 1);
  gtk_grid_attach(GTK_GRID(grid),
                  gtk_scrollbar_new(GTK_ORIENTATION_VERTICAL,
                                    mprof_gtk_timeline_get_vadjustment(t)),
                  1, 0, 1, 1);
  self->timelines[tab] = timeline;
  if (mprof_render_tab_is_timeline(tab)) {
    gtk_grid_attach(GTK_GRID(grid),
                    gtk_scrollbar_new(GTK_ORIENTATION_HORIZONTAL,
                                      mprof_gtk_timeline_get_hadjustment(t)),
                    0, 1, 1, 1);
  }
  g_signal_connect(timeline, "hover", G_CALLBACK(on_hover), self);
  g_signal_connect(timeline, "open-kernel", G_CALLBACK(on_open_kernel), self);
  g_signal_connect(timeline, "open-source", G_CALLBACK(on_open_source), self);
  g_signal_connect(timeline, "open-rank-step", G_CALLBACK(on_open_rank_step),
                   self);
  if (tab == MPROF_RENDER_TRACE) {
    self->timeline = timeline;
    gtk_widget_set_vexpand(timeline, TRUE);
    gtk_widget_set_hexpand(timeline, TRUE);
    self->selection = gtk_label_new(NULL);
    gtk_label_set_selectable(GTK_LABEL(self->selection), TRUE);
    gtk_label_set_xalign(GTK_LABEL(self->selection), 0);
    gtk_label_set_yalign(GTK_LABEL(self->selection), 0);
    gtk_widget_add_css_class(self->selection, "monospace");
    gtk_widget_set_margin_start(self->selection, 8);
    gtk_widget_set_margin_top(self->selection, 4);
    self->selection_box = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->selection_box),
                                  self->selection);
    gtk_widget_set_size_request(self->selection_box, -1, 140);
    gtk_widget_set_visible(self->selection_box, FALSE);
    gtk_grid_attach(GTK_GRID(grid), self->selection_box, 0, 2, 2, 1);
    /* Above the rows, the search bar Ctrl+F opens. */
    self->search = mprof_gtk_search_new(self->state, timeline);
    gtk_grid_attach(GTK_GRID(grid), self->search, 0, -1, 2, 1);
  }
  return grid;
}

/* The Activity switches: Rows (SM, block, warp) and Depth (auto, phase,
 * instruction). */
static void on_activity_switch(GObject *dropdown, GParamSpec *pspec,
                               gpointer data) {
  (void)dropdown;
  (void)pspec;
  MprofGtkWindow *self = data;
  guint rows = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->rows_switch));
  guint depth = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->depth_switch));
  mprof_gtk_view_state_set_activity(self->state, (int)rows, (int)depth);
}

static GtkWidget *make_switch(MprofGtkWindow *self, const char *title,
                              const char *const *keys, int count,
                              int selected) {
  GtkStringList *items = gtk_string_list_new(NULL);
  for (int i = 0; i < count; i++) {
    char *text = g_strdup_printf("%s: %s", title, keys[i]);
    gtk_string_list_append(items, text);
    g_free(text);
  }
  GtkWidget *dropdown = gtk_drop_down_new(G_LIST_MODEL(items), NULL);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(dropdown), (guint)selected);
  g_signal_connect(dropdown, "notify::selected", G_CALLBACK(on_activity_switch),
                   self);
  return dropdown;
}

static GtkWidget *error_page(const char *path, const char *error) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_valign(box, GTK_ALIGN_CENTER);
  gtk_widget_set_halign(box, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_start(box, 48);
  gtk_widget_set_margin_end(box, 48);
  GtkWidget *icon = gtk_image_new_from_icon_name("dialog-error-symbolic");
  gtk_image_set_pixel_size(GTK_IMAGE(icon), 64);
  gtk_box_append(GTK_BOX(box), icon);
  GtkWidget *title = gtk_label_new(NULL);
  char *markup = g_markup_printf_escaped(
      "<span size='x-large' weight='bold'>Cannot open %s</span>",
      path ? path : "the trace");
  gtk_label_set_markup(GTK_LABEL(title), markup);
  g_free(markup);
  gtk_label_set_wrap(GTK_LABEL(title), TRUE);
  gtk_box_append(GTK_BOX(box), title);
  GtkWidget *message = gtk_label_new(error);
  gtk_label_set_wrap(GTK_LABEL(message), TRUE);
  gtk_label_set_max_width_chars(GTK_LABEL(message), 90);
  gtk_box_append(GTK_BOX(box), message);
  return box;
}

/* Keys that type go to a text field with the focus (the Source search),
 * not to the window's single-key actions. */
static void on_focus_changed(GObject *window, GParamSpec *pspec,
                             gpointer data) {
  (void)pspec;
  (void)data;
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
  mprof_gtk_actions_set_typing(MPROF_GTK_WINDOW(window),
                               focus && GTK_IS_TEXT(focus));
}

static void dispose(GObject *object) {
  MprofGtkWindow *self = MPROF_GTK_WINDOW(object);
  if (self->state && self->changed_handler)
    g_signal_handler_disconnect(self->state, self->changed_handler);
  self->changed_handler = 0;
  G_OBJECT_CLASS(mprof_gtk_window_parent_class)->dispose(object);
  g_clear_object(&self->state);
}

static void finalize(GObject *object) {
  MprofGtkWindow *self = MPROF_GTK_WINDOW(object);
  g_free(self->default_status);
  mprof_render_model_free(self->model);
  G_OBJECT_CLASS(mprof_gtk_window_parent_class)->finalize(object);
}

static void mprof_gtk_window_class_init(MprofGtkWindowClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = dispose;
  G_OBJECT_CLASS(klass)->finalize = finalize;
}

static void mprof_gtk_window_init(MprofGtkWindow *self) { (void)self; }

/* The window without its content: header bar, stack, status line. */
static MprofGtkWindow *window_shell(GtkApplication *app, const char *path) {
  MprofGtkWindow *self =
      g_object_new(MPROF_GTK_TYPE_WINDOW, "application", app, NULL);
  gtk_window_set_default_size(GTK_WINDOW(self), 1280, 800);
  char *base = g_path_get_basename(path ? path : "mprof");
  char *title = g_strdup_printf("%s \u2014 mprof", base);
  gtk_window_set_title(GTK_WINDOW(self), title);
  g_free(title);

  GtkWidget *header = self->header = gtk_header_bar_new();
  gtk_window_set_titlebar(GTK_WINDOW(self), header);
  GtkWidget *content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_window_set_child(GTK_WINDOW(self), content);
  self->stack = gtk_stack_new();
  gtk_stack_set_transition_type(GTK_STACK(self->stack),
                                GTK_STACK_TRANSITION_TYPE_NONE);
  gtk_widget_set_vexpand(self->stack, TRUE);
  gtk_box_append(GTK_BOX(content), self->stack);
  self->status = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->status), 0);
  gtk_label_set_ellipsize(GTK_LABEL(self->status), PANGO_ELLIPSIZE_END);
  gtk_widget_set_margin_start(self->status, 8);
  gtk_widget_set_margin_end(self->status, 8);
  gtk_widget_set_margin_top(self->status, 3);
  gtk_widget_set_margin_bottom(self->status, 3);
  gtk_box_append(GTK_BOX(content), self->status);

  mprof_gtk_open_install(self, header);
  mprof_gtk_actions_install(self);
  g_signal_connect(self, "notify::focus-widget", G_CALLBACK(on_focus_changed),
                   NULL);
  if (path) {
    GtkWidget *file_label = gtk_label_new(base);
    gtk_widget_add_css_class(file_label, "dim-label");
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), file_label);
  }
  g_free(base);
  return self;
}

/* No trace: the welcome page, or the error that kept @p path closed. */
static void show_no_trace(MprofGtkWindow *self, const char *path,
                          const char *error) {
  self->welcome = !error;
  if (self->welcome) {
    gtk_window_set_title(GTK_WINDOW(self), "mprof");
    gtk_stack_add_named(GTK_STACK(self->stack),
                        mprof_gtk_open_welcome_page(self), "welcome");
  } else {
    gtk_stack_add_named(GTK_STACK(self->stack), error_page(path, error),
                        "error");
  }
  g_free(self->default_status);
  self->default_status = g_strdup(error ? error : "No trace open");
  set_status(self, NULL);
}

static void show_model(MprofGtkWindow *self, mprof_render_model *model,
                       const char *path);

MprofGtkWindow *mprof_gtk_window_new(GtkApplication *app,
                                     mprof_render_model *model,
                                     const char *path, const char *error) {
  MprofGtkWindow *self = window_shell(app, path);
  if (model)
    show_model(self, model, path);
  else
    show_no_trace(self, path, error);
  return self;
}

/* The views of @p model (taken), opened from @p path. */
static void show_model(MprofGtkWindow *self, mprof_render_model *model,
                       const char *path) {
  GtkWidget *header = self->header;
  self->model = model;
  self->state = mprof_gtk_view_state_new(model);
  self->fitted_kernel = -2;
  if (mprof_render_model_has_spans(model)) {
    static const char *const rows[] = {"SM", "block", "warp"};
    static const char *const depth[] = {"auto", "phase", "instruction"};
    const mprof_render_view *v0 = mprof_gtk_view_state_get_view(self->state);
    self->rows_switch = make_switch(self, "Rows", rows, 3, v0->activity_rows);
    self->depth_switch =
        make_switch(self, "Depth", depth, 3, v0->activity_depth);
    gtk_widget_set_tooltip_text(self->rows_switch,
                                "One row per SM, block or warp");
    gtk_widget_set_tooltip_text(
        self->depth_switch,
        "The outermost spans (phase), the innermost (instruction), or "
        "phases until they are wide enough to open (auto)");
  }
  for (int tab = 0; tab < MPROF_RENDER_TAB_COUNT; tab++) {
    /* Activity needs spans; Mega and Density project without them. */
    if (tab == MPROF_RENDER_ACTIVITY && !mprof_render_model_has_spans(model))
      continue;
    /* Ranks compares the traces of a set (built when first drawn). */
    if (tab == MPROF_RENDER_RANKS &&
        mprof_trace_member_count(mprof_render_model_trace(model)) < 2)
      continue;
    GtkWidget *page = tab_page(self, tab);
    if (tab == MPROF_RENDER_ACTIVITY) {
      /* The Activity switches above its view. */
      GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
      GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
      gtk_widget_set_margin_start(bar, 8);
      gtk_widget_set_margin_top(bar, 4);
      gtk_widget_set_margin_bottom(bar, 4);
      gtk_box_append(GTK_BOX(bar), self->rows_switch);
      gtk_box_append(GTK_BOX(bar), self->depth_switch);
      gtk_box_append(GTK_BOX(box), bar);
      gtk_widget_set_vexpand(page, TRUE);
      gtk_box_append(GTK_BOX(box), page);
      page = box;
    } else if (tab == MPROF_RENDER_SOURCE) {
      /* Its bar above it: hottest, next hottest, files, search. */
      page = self->source_page =
          mprof_gtk_source_page_new(self->state, page, self->timelines[tab]);
    }
    gtk_stack_add_titled(GTK_STACK(self->stack), page,
                         mprof_render_tab_key(tab),
                         mprof_render_tab_title(tab));
  }
  self->switcher = gtk_stack_switcher_new();
  gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(self->switcher),
                               GTK_STACK(self->stack));
  gtk_header_bar_set_title_widget(GTK_HEADER_BAR(header), self->switcher);
  self->picker = make_picker(self);
  /* Room for a name: eight tabs would squeeze it to an ellipsis. */
  gtk_widget_set_size_request(self->picker, 200, -1);
  gtk_header_bar_pack_end(GTK_HEADER_BAR(header), self->picker);
  mprof_gtk_copy_install(self, header);
  if (mprof_render_model_is_demo(model)) {
    GtkWidget *mark = gtk_label_new("synthetic demo");
    gtk_widget_add_css_class(mark, "error");
    gtk_widget_set_tooltip_text(mark, "mprof --demo-activity: generated "
                                      "data, not recorded on a GPU");
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), mark);
  }
  const mprof_render_view *v = mprof_gtk_view_state_get_view(self->state);
  if (v->kernel >= 0)
    gtk_drop_down_set_selected(GTK_DROP_DOWN(self->picker), (guint)v->kernel);
  g_signal_connect(self->picker, "notify::selected",
                   G_CALLBACK(on_picker_selected), self);
  self->changed_handler = g_signal_connect(self->state, "changed",
                                           G_CALLBACK(on_state_changed), self);

  size_t launches;
  mprof_trace_launches(mprof_render_model_trace(model), &launches);
  char count[32];
  g_snprintf(count, sizeof count, "%zu", launches);
  const char *note = mprof_render_model_note(model);
  self->default_status = g_strdup_printf(
      "%s \u00b7 %s launches \u00b7 %zu kernels%s%s", path, count,
      mprof_render_kernel_count(model), *note ? " \u00b7 " : "", note);
  set_status(self, NULL);
  /* It opens to the Summary of the dominant kernel (a .mkprof to Mega). */
  mprof_gtk_window_set_tab(self, mprof_render_model_first_tab(model));
}

/* ---- loading --------------------------------------------------------------
 */

MprofGtkWindow *mprof_gtk_window_new_loading(GtkApplication *app,
                                             const char *path) {
  MprofGtkWindow *self = window_shell(app, path);
  self->loading = TRUE;
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_valign(box, GTK_ALIGN_CENTER);
  gtk_widget_set_halign(box, GTK_ALIGN_CENTER);
  GtkWidget *title = gtk_label_new(NULL);
  char *markup = g_markup_printf_escaped(
      "<span size='x-large' weight='bold'>Opening %s</span>", path);
  gtk_label_set_markup(GTK_LABEL(title), markup);
  g_free(markup);
  gtk_label_set_wrap(GTK_LABEL(title), TRUE);
  gtk_box_append(GTK_BOX(box), title);
  self->progress = gtk_progress_bar_new();
  gtk_progress_bar_set_show_text(GTK_PROGRESS_BAR(self->progress), TRUE);
  gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress),
                            "Reading the trace");
  gtk_widget_set_size_request(self->progress, 420, -1);
  gtk_box_append(GTK_BOX(box), self->progress);
  self->cancel = gtk_button_new_with_mnemonic("_Cancel");
  gtk_widget_set_halign(self->cancel, GTK_ALIGN_CENTER);
  gtk_box_append(GTK_BOX(box), self->cancel);
  gtk_stack_add_named(GTK_STACK(self->stack), box, "loading");
  self->default_status = g_strdup_printf("Opening %s", path);
  set_status(self, NULL);
  return self;
}

void mprof_gtk_window_show_status(MprofGtkWindow *self, const char *text) {
  set_status(self, text);
}

const char *mprof_gtk_window_get_status(MprofGtkWindow *self) {
  return gtk_label_get_text(GTK_LABEL(self->status));
}

const char *mprof_gtk_window_get_page(MprofGtkWindow *self) {
  return gtk_stack_get_visible_child_name(GTK_STACK(self->stack));
}

gboolean mprof_gtk_window_is_loading(MprofGtkWindow *self) {
  return self->loading;
}

GtkWidget *mprof_gtk_window_get_cancel_button(MprofGtkWindow *self) {
  return self->loading ? self->cancel : NULL;
}

void mprof_gtk_window_set_progress(MprofGtkWindow *self, double done,
                                   const char *step) {
  if (!self->loading)
    return;
  gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), done);
  gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress), step);
}

const char *mprof_gtk_window_get_progress(MprofGtkWindow *self, double *done) {
  if (!self->loading)
    return NULL;
  if (done)
    *done = gtk_progress_bar_get_fraction(GTK_PROGRESS_BAR(self->progress));
  return gtk_progress_bar_get_text(GTK_PROGRESS_BAR(self->progress));
}

void mprof_gtk_window_finish_loading(MprofGtkWindow *self,
                                     mprof_render_model *model,
                                     const char *path, const char *error) {
  if (!self->loading) {
    mprof_render_model_free(model);
    return;
  }
  self->loading = FALSE;
  GtkWidget *page =
      gtk_stack_get_child_by_name(GTK_STACK(self->stack), "loading");
  if (page)
    gtk_stack_remove(GTK_STACK(self->stack), page);
  self->progress = self->cancel = NULL;
  if (model) {
    show_model(self, model, path);
  } else {
    show_no_trace(self, path, error);
    if (!error) { /* cancelled: the welcome page, saying so */
      g_free(self->default_status);
      self->default_status =
          g_strdup_printf("%s was not opened: cancelled", path);
      set_status(self, NULL);
    }
  }
}

gboolean mprof_gtk_window_is_welcome(MprofGtkWindow *self) {
  return self->welcome;
}

MprofGtkViewState *mprof_gtk_window_get_state(MprofGtkWindow *self) {
  return self->state;
}

GtkWidget *mprof_gtk_window_get_selection_list(MprofGtkWindow *self) {
  return self->selection;
}

GtkWidget *mprof_gtk_window_get_search(MprofGtkWindow *self) {
  return self->search;
}

GtkWidget *mprof_gtk_window_get_timeline(MprofGtkWindow *self) {
  return self->timeline;
}

int mprof_gtk_window_get_tab(MprofGtkWindow *self) {
  if (!self->state)
    return -1;
  const char *name = gtk_stack_get_visible_child_name(GTK_STACK(self->stack));
  return mprof_render_tab_parse(name);
}

void mprof_gtk_window_set_tab(MprofGtkWindow *self, int tab) {
  if (!self->state || tab < 0 || tab >= MPROF_RENDER_TAB_COUNT ||
      !gtk_stack_get_child_by_name(GTK_STACK(self->stack),
                                   mprof_render_tab_key(tab)))
    return;
  fit_span_tab(self, tab);
  gtk_stack_set_visible_child_name(GTK_STACK(self->stack),
                                   mprof_render_tab_key(tab));
  if (self->timelines[tab])
    gtk_widget_grab_focus(self->timelines[tab]);
}

GtkWidget *mprof_gtk_window_get_source_page(MprofGtkWindow *self) {
  return self->source_page;
}

void mprof_gtk_window_find(MprofGtkWindow *self) {
  /* Ctrl+F acts on the tab on screen. */
  switch (mprof_gtk_window_get_tab(self)) {
  case MPROF_RENDER_SOURCE:
    mprof_gtk_source_page_find(self->source_page);
    break;
  default: /* kernel and range names, on the Trace */
    if (mprof_gtk_window_get_search(self)) {
      mprof_gtk_window_set_tab(self, MPROF_RENDER_TRACE);
      mprof_gtk_search_open(mprof_gtk_window_get_search(self));
    }
    break;
  }
}

GtkWidget *mprof_gtk_window_get_tab_widget(MprofGtkWindow *self, int tab) {
  return tab >= 0 && tab < MPROF_RENDER_TAB_COUNT ? self->timelines[tab] : NULL;
}

void mprof_gtk_window_keep_kernel(MprofGtkWindow *self) {
  self->keep_kernel = TRUE;
}

void mprof_gtk_window_set_activity(MprofGtkWindow *self, int rows, int depth) {
  if (!self->state)
    return;
  if (self->rows_switch && rows >= 0)
    gtk_drop_down_set_selected(GTK_DROP_DOWN(self->rows_switch), (guint)rows);
  if (self->depth_switch && depth >= 0)
    gtk_drop_down_set_selected(GTK_DROP_DOWN(self->depth_switch), (guint)depth);
  mprof_gtk_view_state_set_activity(self->state, rows, depth);
}

gboolean mprof_gtk_window_save_png(MprofGtkWindow *self, const char *path) {
  GtkWidget *widget = GTK_WIDGET(self);
  int width = gtk_widget_get_width(widget);
  int height = gtk_widget_get_height(widget);
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(self));
  if (width <= 0 || height <= 0 || !renderer) {
    g_printerr("mprof-gtk: %s: the window is not shown yet\n", path);
    return FALSE;
  }
  GdkPaintable *paintable = gtk_widget_paintable_new(widget);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
  g_object_unref(paintable);
  if (!node) {
    g_printerr("mprof-gtk: %s: the window drew nothing\n", path);
    return FALSE;
  }
  GdkTexture *texture = gsk_renderer_render_texture(
      renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
  gsk_render_node_unref(node);
  gboolean ok = texture && gdk_texture_save_to_png(texture, path);
  if (texture)
    g_object_unref(texture);
  if (!ok)
    g_printerr("mprof-gtk: %s: cannot write the screenshot\n", path);
  return ok;
}
