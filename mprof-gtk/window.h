/*
 * mprof-gtk — the main window: a top bar of tabs (Trace | Summary |
 * Hotspots | Flame | Raster | Mega | Density, and Activity for a trace with
 * spans) and a kernel picker over a stack of views, the Activity switches
 * (Rows, Depth) when there are spans, and a status line. A trace that
 * cannot be opened shows its error here.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_WINDOW_H
#define MPROF_GTK_WINDOW_H

#include <gtk/gtk.h>

#include "viewstate.h"

G_BEGIN_DECLS

#define MPROF_GTK_TYPE_WINDOW (mprof_gtk_window_get_type())
G_DECLARE_FINAL_TYPE(MprofGtkWindow, mprof_gtk_window, MPROF_GTK, WINDOW,
                     GtkApplicationWindow)

/* A window on @p model (taken: the window frees it), opened from @p path;
 * with @p model NULL, a window that shows @p error instead, or with
 * @p error NULL too, the welcome page (Open, recent traces, drop here). */
MprofGtkWindow *mprof_gtk_window_new(GtkApplication *app,
                                     mprof_render_model *model,
                                     const char *path, const char *error);

/* A window that shows @p path being opened: a progress bar and a Cancel
 * button (load.c runs the open on a worker and reports here). */
MprofGtkWindow *mprof_gtk_window_new_loading(GtkApplication *app,
                                             const char *path);
/* Say @p text on the status line (until the pointer moves over a view);
 * what it says now. */
void mprof_gtk_window_show_status(MprofGtkWindow *self, const char *text);
const char *mprof_gtk_window_get_status(MprofGtkWindow *self);
/* The page shown: "loading", "welcome", "error" or a tab's key. */
const char *mprof_gtk_window_get_page(MprofGtkWindow *self);
/* TRUE until mprof_gtk_window_finish_loading(). */
gboolean mprof_gtk_window_is_loading(MprofGtkWindow *self);
/* The loading page's Cancel button, NULL when not loading. */
GtkWidget *mprof_gtk_window_get_cancel_button(MprofGtkWindow *self);
/* Show that the step @p step began, @p done (0 to 1) of the way. */
void mprof_gtk_window_set_progress(MprofGtkWindow *self, double done,
                                   const char *step);
/* The step shown while loading (owned by the window), NULL when not
 * loading; @p done (may be NULL) gets the fraction shown. */
const char *mprof_gtk_window_get_progress(MprofGtkWindow *self, double *done);
/* The open ended: the views of @p model (taken), or @p error, or with
 * both NULL (cancelled) the welcome page, saying it was cancelled. */
void mprof_gtk_window_finish_loading(MprofGtkWindow *self,
                                     mprof_render_model *model,
                                     const char *path, const char *error);

/* TRUE for the welcome page of a window started without a trace. */
gboolean mprof_gtk_window_is_welcome(MprofGtkWindow *self);

/* NULL when the window shows an error or the welcome page. */
MprofGtkViewState *mprof_gtk_window_get_state(MprofGtkWindow *self);
/* The timeline widget (MprofGtkTimeline), or NULL. */
GtkWidget *mprof_gtk_window_get_timeline(MprofGtkWindow *self);
/* The Trace's search bar (search.h), or NULL. */
GtkWidget *mprof_gtk_window_get_search(MprofGtkWindow *self);
/* Under the Trace, the selected range's kernels, every one, as selectable
 * text (a GtkLabel in a scrolled box, hidden without a selection). */
GtkWidget *mprof_gtk_window_get_selection_list(MprofGtkWindow *self);

/* The view of a tab (a timeline, or the page of a panel), or NULL. */
GtkWidget *mprof_gtk_window_get_tab_widget(MprofGtkWindow *self, int tab);
/* The Source tab's page (source_page.h), or NULL. */
GtkWidget *mprof_gtk_window_get_source_page(MprofGtkWindow *self);
/* Ctrl+F: the search of the tab on screen (Source: in its file). */
void mprof_gtk_window_find(MprofGtkWindow *self);
/* Set the Activity switches (-1 keeps one). */
void mprof_gtk_window_set_activity(MprofGtkWindow *self, int rows, int depth);
/* The kernel was named (--kernel): the span tabs show it too, spans or
 * not, as `mprof view --kernel K --tab mega` does. */
void mprof_gtk_window_keep_kernel(MprofGtkWindow *self);

/* The visible tab (mprof_render_tab), -1 while showing an error. */
int mprof_gtk_window_get_tab(MprofGtkWindow *self);
void mprof_gtk_window_set_tab(MprofGtkWindow *self, int tab);

/* Save what the window shows to a PNG through GTK's own snapshot of the
 * widget tree. FALSE (with a message on stderr) on failure. */
gboolean mprof_gtk_window_save_png(MprofGtkWindow *self, const char *path);

G_END_DECLS

#endif /* MPROF_GTK_WINDOW_H */
