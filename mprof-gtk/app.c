/*
 * mprof-gtk — the application.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "actions.h"
#include "app.h"
#include "load.h"
#include "open.h"
#include "selftest.h"
#include "window.h"

struct _MprofGtkApp {
  GtkApplication parent_instance;
  int exit_status;
  gboolean options_parsed; /* GLib accepted the command line */
};

G_DEFINE_FINAL_TYPE(MprofGtkApp, mprof_gtk_app, GTK_TYPE_APPLICATION)

static const GOptionEntry options[] = {
    {"kernel", 'k', 0, G_OPTION_ARG_STRING, NULL,
     "Open on this kernel (mangled or demangled name, or a part of it)",
     "NAME"},
    {"tab", 't', 0, G_OPTION_ARG_STRING, NULL,
     "Open on this tab: trace, summary (the default; mega for a .mkprof), "
     "hotspots, flame, raster, mega, density, activity, source, ranks "
     "(several traces, one per rank)",
     "TAB"},
    {"demo-activity", 0, 0, G_OPTION_ARG_NONE, NULL,
     "Open a synthetic SM/block/warp activity hierarchy instead of a trace",
     NULL},
    {"rows", 0, 0, G_OPTION_ARG_STRING, NULL,
     "Activity rows: sm (default), block, warp", "ROWS"},
    {"depth", 0, 0, G_OPTION_ARG_STRING, NULL,
     "Activity depth: auto (default), phase, instruction", "DEPTH"},
    {"sidecar", 0, 0, G_OPTION_ARG_FILENAME, NULL,
     "PC sidecar (default: TRACE.pc.json)", "FILE"},
    {"smoke-test", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, NULL,
     "Visit every tab, zoom, save screenshots into DIR, quit", "DIR"},
    {"version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version", NULL},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, NULL,
     "TRACE"},
    {NULL, 0, 0, 0, NULL, NULL, NULL}};

void mprof_gtk_app_set_exit_status(MprofGtkApp *self, int status) {
  if (status > self->exit_status)
    self->exit_status = status;
}

/* What the command line asked for once its trace is open. */
typedef struct opening {
  MprofGtkApp *app;
  char *kernel;
  char *recent; /* one trace: it joins the recent files; else NULL */
  int rows, depth, tab;
} opening;

static void opening_free(gpointer data) {
  opening *o = data;
  g_object_unref(o->app);
  g_free(o->kernel);
  g_free(o->recent);
  g_free(o);
}

static void on_loaded(MprofGtkWindow *window, MprofGtkLoadOutcome outcome,
                      const char *error, gpointer data) {
  (void)error; /* the window and stderr have it */
  opening *o = data;
  if (outcome == MPROF_GTK_LOAD_FAILED)
    mprof_gtk_app_set_exit_status(o->app, 2);
  if (outcome != MPROF_GTK_LOADED)
    return;
  MprofGtkViewState *state = mprof_gtk_window_get_state(window);
  const mprof_render_model *model = mprof_gtk_view_state_get_model(state);
  if (o->recent)
    mprof_gtk_open_note_recent(o->recent);
  if (o->kernel) {
    int k = mprof_render_kernel_find(model, o->kernel);
    if (k < 0)
      g_printerr("mprof-gtk: no kernel matches '%s'; showing the dominant "
                 "kernel\n",
                 o->kernel);
    else {
      mprof_gtk_view_state_select_kernel(state, k);
      mprof_gtk_window_keep_kernel(window); /* the span tabs too */
    }
  }
  mprof_gtk_window_set_activity(window, o->rows, o->depth);
  mprof_gtk_window_set_tab(
      window, o->tab >= 0 ? o->tab : mprof_render_model_first_tab(model));
}

static int command_line(GApplication *application,
                        GApplicationCommandLine *cmdline) {
  MprofGtkApp *self = MPROF_GTK_APP(application);
  GVariantDict *opts = g_application_command_line_get_options_dict(cmdline);
  const char *kernel = NULL, *tab_name = NULL, *sidecar = NULL, *smoke = NULL;
  const char *rows_name = NULL, *depth_name = NULL;
  gboolean demo = FALSE;
  const char **files = NULL;
  g_variant_dict_lookup(opts, "kernel", "&s", &kernel);
  g_variant_dict_lookup(opts, "tab", "&s", &tab_name);
  g_variant_dict_lookup(opts, "sidecar", "^&ay", &sidecar);
  g_variant_dict_lookup(opts, "smoke-test", "^&ay", &smoke);
  g_variant_dict_lookup(opts, G_OPTION_REMAINING, "^a&ay", &files);
  g_variant_dict_lookup(opts, "demo-activity", "b", &demo);
  g_variant_dict_lookup(opts, "rows", "&s", &rows_name);
  g_variant_dict_lookup(opts, "depth", "&s", &depth_name);
  if (!demo && (!files || !files[0])) {
    /* Started without a trace (a desktop launcher): the welcome page. */
    MprofGtkWindow *window =
        mprof_gtk_window_new(GTK_APPLICATION(self), NULL, NULL, NULL);
    gtk_window_present(GTK_WINDOW(window));
    if (smoke)
      mprof_gtk_selftest_start(self, window, smoke);
    g_free(files);
    return self->exit_status;
  }
  if (demo && files && files[0]) {
    g_application_command_line_printerr(
        cmdline, "usage: mprof-gtk [--kernel NAME] [--tab TAB] "
                 "[--sidecar FILE] [TRACE...]\n"
                 "       mprof-gtk --demo-activity [--rows R] [--depth D]\n");
    goto bad_input;
  }
  int tab = demo ? MPROF_RENDER_ACTIVITY : -1; /* -1: the trace's first */
  int rows = 0, depth = 0;
  if (tab_name && (tab = mprof_render_tab_parse(tab_name)) < 0) {
    g_application_command_line_printerr(
        cmdline,
        "mprof-gtk: unknown tab '%s' (trace, summary, hotspots, flame, "
        "raster, mega, density, activity, source, ranks)\n",
        tab_name);
    goto bad_input;
  }
  if ((rows_name && (rows = mprof_render_activity_rows_parse(rows_name)) < 0) ||
      (depth_name &&
       (depth = mprof_render_activity_depth_parse(depth_name)) < 0)) {
    g_application_command_line_printerr(
        cmdline, "mprof-gtk: --rows takes sm, block or warp; --depth auto, "
                 "phase or instruction\n");
    goto bad_input;
  }
  /* Several traces are one run (one per process), opened as one. */
  size_t count = 0;
  while (!demo && files[count])
    count++;
  /* The same trace twice would count its launches twice (as `mprof view`
   * refuses it). */
  for (size_t i = 1; i < count; i++) {
    struct stat a, b;
    if (stat(files[i], &a) != 0)
      continue;
    for (size_t k = 0; k < i; k++)
      if (stat(files[k], &b) == 0 && a.st_dev == b.st_dev &&
          a.st_ino == b.st_ino) {
        g_application_command_line_printerr(
            cmdline,
            "mprof-gtk: %s is given twice (as %s too); name each trace of "
            "a run once\n",
            files[i], files[k]);
        goto bad_input;
      }
  }
  char set_name[1024];
  snprintf(set_name, sizeof set_name, "%s + %zu more", demo ? "" : files[0],
           count ? count - 1 : 0);
  const char *path = demo         ? "demo-activity (synthetic)"
                     : count == 1 ? files[0]
                                  : set_name;
  MprofGtkWindow *window;
  if (demo) {
    /* The demo is small: opened here. */
    mprof_render_model *model = NULL;
    if (mprof_render_model_open_demo(&model)) {
      /* The error goes to the window and to stderr, in one line. */
      const char *error = mprof_render_error();
      g_application_command_line_printerr(cmdline, "mprof-gtk: %s\n", error);
      mprof_gtk_app_set_exit_status(self, 2);
      window = mprof_gtk_window_new(GTK_APPLICATION(self), NULL, path, error);
    } else {
      window = mprof_gtk_window_new(GTK_APPLICATION(self), model, path, NULL);
      mprof_gtk_window_set_activity(window, rows, depth);
      mprof_gtk_window_set_tab(window, tab);
    }
  } else {
    /* A trace opens on a worker: the window answers meanwhile, shows the
     * steps and can cancel; the options apply once it is open. */
    opening *o = g_new0(opening, 1);
    o->app = g_object_ref(self);
    o->kernel = g_strdup(kernel);
    o->rows = rows;
    o->depth = depth;
    o->tab = tab;
    o->recent = count == 1 ? g_strdup(path) : NULL;
    window = mprof_gtk_window_new_loading(GTK_APPLICATION(self), path);
    if (smoke && g_getenv("MPROF_SELFTEST_LOAD"))
      mprof_gtk_load_hold(TRUE); /* the self-test lets it go */
    mprof_gtk_load_start(window, files, count, path, sidecar, on_loaded, o,
                         opening_free);
  }
  gtk_window_present(GTK_WINDOW(window));
  if (smoke)
    mprof_gtk_selftest_start(self, window, smoke);
  g_free(files);
  return self->exit_status;
bad_input: /* the line above says what was wrong */
  g_free(files);
  mprof_gtk_app_set_exit_status(self, 2);
  return 2;
}

/* Before any display is opened: --version needs none. */
static int handle_local_options(GApplication *application, GVariantDict *dict) {
  MPROF_GTK_APP(application)->options_parsed = TRUE;
  if (g_variant_dict_contains(dict, "version")) {
    printf("mprof-gtk %s\n", MPROF_VERSION_STRING);
    return 0;
  }
  return -1;
}

static void startup(GApplication *application) {
  G_APPLICATION_CLASS(mprof_gtk_app_parent_class)->startup(application);
  mprof_gtk_actions_set_accels(GTK_APPLICATION(application));
  /* A click in a scrollbar's trough jumps there. */
  g_object_set(gtk_settings_get_default(), "gtk-primary-button-warps-slider",
               TRUE, NULL);
  /* Tab buttons as narrow as their titles: the theme's minimum width for
   * eight tabs would push the window past 1280 px. */
  GdkDisplay *display = gdk_display_get_default();
  if (display) {
    GtkCssProvider *css = gtk_css_provider_new();
    gtk_css_provider_load_from_data(
        css,
        "stackswitcher > button { min-width: 0; padding-left: 10px; "
        "padding-right: 10px; }",
        -1);
    gtk_style_context_add_provider_for_display(
        display, GTK_STYLE_PROVIDER(css),
        GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(css);
  }
}

static void mprof_gtk_app_class_init(MprofGtkAppClass *klass) {
  G_APPLICATION_CLASS(klass)->command_line = command_line;
  G_APPLICATION_CLASS(klass)->handle_local_options = handle_local_options;
  G_APPLICATION_CLASS(klass)->startup = startup;
}

static void mprof_gtk_app_init(MprofGtkApp *self) {
  g_application_add_main_option_entries(G_APPLICATION(self), options);
  g_application_set_option_context_summary(
      G_APPLICATION(self), "The mprof viewer: kernels on a timeline, and "
                           "inside each kernel where its warps stall.");
  /* The keys, after the options (tools/gen-man.sh makes them the man
   * page's KEYS): the table the keys window (F1, ?) shows. */
  char *keys = mprof_gtk_actions_keys_text();
  char *description = g_strdup_printf("Keys:\n%s", keys);
  g_application_set_option_context_description(G_APPLICATION(self),
                                               description);
  g_free(description);
  g_free(keys);
}

static int wants_display(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
        strncmp(argv[i], "--help-", 7) == 0 ||
        strcmp(argv[i], "--version") == 0)
      return 0;
  return 1;
}

int mprof_gtk_app_run(int argc, char **argv) {
  const char *x11 = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
  if (wants_display(argc, argv) && !(x11 && *x11) && !(wayland && *wayland)) {
    fprintf(stderr, "mprof-gtk: no display (DISPLAY and WAYLAND_DISPLAY are "
                    "unset); draw offscreen with 'mprof view TRACE --render "
                    "OUT.png'\n");
    return 2;
  }
  MprofGtkApp *app = g_object_new(
      MPROF_GTK_TYPE_APP, "application-id", "org.mprof.Viewer", "flags",
      G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE, NULL);
  int status = g_application_run(G_APPLICATION(app), argc, argv);
  /* GLib refuses an unknown option with its own line and status 1; a bad
   * argument is 2 here, as everywhere in mprof. */
  if (!app->options_parsed && status == 1)
    status = 2;
  if (app->exit_status > status)
    status = app->exit_status;
  g_object_unref(app);
  return status;
}
