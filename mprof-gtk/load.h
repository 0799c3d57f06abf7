/*
 * mprof-gtk — opening a trace on a worker thread: the window shows the
 * steps as they begin and a Cancel button, and keeps answering while the
 * trace is read, joined and laid out. GTK is called on the main thread
 * only: the worker posts its steps and its result there (g_idle_add).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_LOAD_H
#define MPROF_GTK_LOAD_H

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

typedef enum {
  MPROF_GTK_LOADED,        /* the window shows the trace */
  MPROF_GTK_LOAD_FAILED,   /* the window shows the error */
  MPROF_GTK_LOAD_CANCELLED /* Cancel: the welcome page; or the window closed */
} MprofGtkLoadOutcome;

/* On the main thread, once the open ended; @p error is the one line the
 * window shows (MPROF_GTK_LOAD_FAILED only). */
typedef void (*MprofGtkLoaded)(MprofGtkWindow *window,
                               MprofGtkLoadOutcome outcome, const char *error,
                               gpointer data);

/* Open the @p count traces @p paths (one run, named @p name) with
 * @p sidecar (may be NULL) on a worker thread, for @p window, a window of
 * mprof_gtk_window_new_loading(). @p done (may be NULL) is called once,
 * with @p data; @p free_data (may be NULL) frees it afterwards. */
void mprof_gtk_load_start(MprofGtkWindow *window, const char *const *paths,
                          size_t count, const char *name, const char *sidecar,
                          MprofGtkLoaded done, gpointer data,
                          GDestroyNotify free_data);

/* Workers that have not ended yet, cancelled ones included. */
guint mprof_gtk_load_running(void);

/* For the self-test: with @p hold TRUE, workers wait before their last
 * step (the layout) until it is FALSE again or their open is cancelled. */
void mprof_gtk_load_hold(gboolean hold);

G_END_DECLS

#endif /* MPROF_GTK_LOAD_H */
