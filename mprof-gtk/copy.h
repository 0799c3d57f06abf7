/*
 * mprof-gtk — copying a tab as text: the Copy button and win.copy-text
 * (Ctrl+Shift+C) put what the visible tab shows on the clipboard as text
 * (mprof_render_tab_text(): the Summary's panel, the Hotspots table, the
 * Trace's selected range), since those tabs are painted, not labels.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_COPY_H
#define MPROF_GTK_COPY_H

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

/* Add win.copy-text to @p window (a window with a trace) and its button
 * to @p header; its key is in actions.c's table. */
void mprof_gtk_copy_install(MprofGtkWindow *window, GtkWidget *header);

G_END_DECLS

#endif /* MPROF_GTK_COPY_H */
