/*
 * mprof-gtk — opening traces from the viewer itself: the Open button and
 * dialog (Ctrl+O), the Recent menu, dropping a file on a window, and the
 * welcome page of a window started without a trace.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_OPEN_H
#define MPROF_GTK_OPEN_H

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

/* Open @p path in a new window of @p app, on a worker (load.c): the
 * window shows the steps and a Cancel button, then the views, or the error
 * that kept it from opening (the line `mprof summary` would print). A
 * trace that opened joins the recent files. A welcome window @p replace
 * (may be NULL) closes once the new one is up. */
MprofGtkWindow *mprof_gtk_open_path(GtkApplication *app, const char *path,
                                    MprofGtkWindow *replace);

/* Remember @p path in the recent files (GtkRecentManager). */
void mprof_gtk_open_note_recent(const char *path);

/* The recent traces (.mprof, .mkprof) mprof opened, newest first, at most
 * @p max; free with g_strfreev(). */
char **mprof_gtk_open_recent(int max);

/* Put the Open button and the Recent menu into @p header, add win.open
 * and win.open-recent, and accept files dropped on @p window. */
void mprof_gtk_open_install(MprofGtkWindow *window, GtkWidget *header);

/* The page of a window without a trace: Open, the recent traces, and the
 * hint that a file can be dropped there. */
GtkWidget *mprof_gtk_open_welcome_page(MprofGtkWindow *window);

/* For the smoke test: the window's drop target and its open dialog (NULL
 * until win.open ran). */
GtkDropTarget *mprof_gtk_open_drop_target(MprofGtkWindow *window);
GtkNativeDialog *mprof_gtk_open_dialog(MprofGtkWindow *window);

G_END_DECLS

#endif /* MPROF_GTK_OPEN_H */
