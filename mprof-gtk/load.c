/*
 * mprof-gtk — opening a trace on a worker thread.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "load.h"

typedef struct load {
  /* Not a reference: a window closed while it loads must go, and its
   * "destroy" cancels the load. NULL once gone. */
  MprofGtkWindow *window;
  GApplication *app; /* held while the worker runs; a reference */
  char **paths;
  size_t count;
  char *name, *sidecar;
  GCancellable *cancellable;
  MprofGtkLoaded done;
  gpointer data;
  GDestroyNotify free_data;
  gboolean reported;        /* done was called (main thread only) */
  GtkWidget *cancel_button; /* the window's, while it loads */
  gulong clicked, destroyed;
  /* The worker's result, read on the main thread once it ended. */
  mprof_render_model *model;
  char *error;
  /* The step last begun, posted to the main thread. */
  GMutex lock;
  double step_done;
  char step[128];
  gboolean step_posted;
} load;

static guint running;    /* main thread only */
static GMutex hold_lock; /* guards hold and wakes held workers */
static GCond hold_cond;
static gboolean hold;

static void load_free(load *l) {
  g_strfreev(l->paths);
  g_free(l->name);
  g_free(l->sidecar);
  g_object_unref(l->cancellable);
  mprof_render_model_free(l->model);
  g_free(l->error);
  g_mutex_clear(&l->lock);
  if (l->free_data)
    l->free_data(l->data);
  if (l->app)
    g_object_unref(l->app);
}

static void load_release(gpointer data) {
  g_atomic_rc_box_release_full(data, (GDestroyNotify)load_free);
}

/* Main thread, once: the window no longer tied to the load, shows what
 * came of it (unless it is going: @p shown FALSE), and done is called.
 * @p model is taken. */
static void report(load *l, MprofGtkLoadOutcome outcome,
                   mprof_render_model *model, gboolean shown) {
  if (l->reported) {
    mprof_render_model_free(model);
    return;
  }
  l->reported = TRUE;
  g_clear_signal_handler(&l->destroyed, l->window);
  if (l->cancel_button)
    g_clear_signal_handler(&l->clicked, l->cancel_button);
  l->cancel_button = NULL;
  const char *error = outcome == MPROF_GTK_LOAD_FAILED ? l->error : NULL;
  if (error)
    g_printerr("mprof-gtk: %s\n", error);
  if (shown)
    mprof_gtk_window_finish_loading(l->window, model, l->name, error);
  else
    mprof_render_model_free(model);
  if (l->done)
    l->done(l->window, outcome, error, l->data);
}

static gboolean show_step(gpointer data) {
  load *l = data;
  char step[sizeof l->step];
  g_mutex_lock(&l->lock);
  double done = l->step_done;
  memcpy(step, l->step, sizeof step);
  l->step_posted = FALSE;
  g_mutex_unlock(&l->lock);
  if (!l->reported)
    mprof_gtk_window_set_progress(l->window, done, step);
  return G_SOURCE_REMOVE;
}

/* Worker: post the step to the main thread (one post in flight at a time:
 * the latest step wins); nonzero once cancelled. */
static int on_step(void *data, double done, const char *step) {
  load *l = data;
  g_mutex_lock(&l->lock);
  l->step_done = done;
  g_strlcpy(l->step, step, sizeof l->step);
  gboolean post = !l->step_posted;
  l->step_posted = TRUE;
  g_mutex_unlock(&l->lock);
  if (post)
    g_idle_add_full(G_PRIORITY_DEFAULT, show_step, g_atomic_rc_box_acquire(l),
                    load_release);
  if (done >= 0.9) { /* the self-test's hold, before the layout */
    g_mutex_lock(&hold_lock);
    while (hold && !g_cancellable_is_cancelled(l->cancellable))
      g_cond_wait(&hold_cond, &hold_lock);
    g_mutex_unlock(&hold_lock);
  }
  return g_cancellable_is_cancelled(l->cancellable);
}

/* Main thread: the worker ended. */
static gboolean finish(gpointer data) {
  load *l = data;
  running--;
  if (l->app)
    g_application_release(l->app);
  /* Cancelled: report() drops the model. */
  mprof_render_model *model = l->model;
  l->model = NULL;
  report(l, model ? MPROF_GTK_LOADED : MPROF_GTK_LOAD_FAILED, model, TRUE);
  return G_SOURCE_REMOVE;
}

static gpointer work(gpointer data) {
  load *l = data;
  if (mprof_render_model_open_progress(&l->model, (const char *const *)l->paths,
                                       l->count, l->name, l->sidecar, on_step,
                                       l))
    l->error = g_strdup(mprof_render_error()); /* this thread's */
  g_idle_add_full(G_PRIORITY_DEFAULT, finish, l, load_release);
  return NULL;
}

static void wake_held(void) {
  g_mutex_lock(&hold_lock);
  g_cond_broadcast(&hold_cond);
  g_mutex_unlock(&hold_lock);
}

static void on_cancel(GtkButton *button, gpointer data) {
  (void)button;
  load *l = data;
  g_cancellable_cancel(l->cancellable);
  wake_held();
  /* At once: the worker stops at its next step and its result is
   * dropped. */
  report(l, MPROF_GTK_LOAD_CANCELLED, NULL, TRUE);
}

static void on_destroy(GtkWidget *window, gpointer data) {
  (void)window;
  load *l = data;
  g_cancellable_cancel(l->cancellable);
  wake_held();
  l->cancel_button = NULL; /* gone with the window's other children */
  report(l, MPROF_GTK_LOAD_CANCELLED, NULL, FALSE);
  l->window = NULL;
}

void mprof_gtk_load_start(MprofGtkWindow *window, const char *const *paths,
                          size_t count, const char *name, const char *sidecar,
                          MprofGtkLoaded done, gpointer data,
                          GDestroyNotify free_data) {
  load *l = g_atomic_rc_box_new0(load);
  l->window = window;
  l->paths = g_new0(char *, count + 1);
  for (size_t i = 0; i < count; i++)
    l->paths[i] = g_strdup(paths[i]);
  l->count = count;
  l->name = g_strdup(name);
  l->sidecar = g_strdup(sidecar);
  l->cancellable = g_cancellable_new();
  l->done = done;
  l->data = data;
  l->free_data = free_data;
  g_mutex_init(&l->lock);
  GtkWidget *cancel = mprof_gtk_window_get_cancel_button(window);
  if (cancel)
    l->clicked = g_signal_connect(cancel, "clicked", G_CALLBACK(on_cancel), l);
  l->cancel_button = cancel;
  l->destroyed = g_signal_connect(window, "destroy", G_CALLBACK(on_destroy), l);
  running++;
  /* The application stays until the worker ended, even with its window
   * closed: a cancelled worker stops at its next step. */
  GtkApplication *app = gtk_window_get_application(GTK_WINDOW(window));
  if (app) {
    l->app = G_APPLICATION(g_object_ref(app));
    g_application_hold(l->app);
  }
  /* The worker holds a reference of its own until finish() ran. */
  g_thread_unref(g_thread_new("mprof-load", work, g_atomic_rc_box_acquire(l)));
  load_release(l);
}

guint mprof_gtk_load_running(void) { return running; }

void mprof_gtk_load_hold(gboolean on) {
  g_mutex_lock(&hold_lock);
  hold = on;
  g_cond_broadcast(&hold_cond);
  g_mutex_unlock(&hold_lock);
}
