/*
 * mprof-gtk — the window's actions and their keys.
 *
 *   win.zoom-in   + = W      zoom time in (around the middle)
 *   win.zoom-out  - S        zoom time out
 *   win.zoom-reset 0         the whole trace (Mega, Density, Activity:
 *                            the kernel's spans)
 *   win.pan-left  A Left     earlier
 *   win.pan-right D Right    later
 *   win.rows-taller / win.rows-shorter   Shift+Up / Shift+Down
 *   win.tab('summary')       Alt+1 .. Alt+8
 *   win.tab('source')        Alt+9
 *   win.find                 Ctrl+F: the search of the tab on screen
 *                            (mprof_gtk_window_find)
 *   win.close                Ctrl+W, Ctrl+Q
 *   win.open                 Ctrl+O (open.c: the dialog)
 *   win.keys                 F1, ?: a window listing the keys (from the
 *                            table in actions.c and the timeline's own)
 *   win.search               Ctrl+F: the Trace's search bar (search.c)
 *   win.show-rows            Ctrl+Shift+H: the Trace's hidden rows back
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_ACTIONS_H
#define MPROF_GTK_ACTIONS_H

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

/* Add the win.* actions to @p window. */
void mprof_gtk_actions_install(MprofGtkWindow *window);
/* Bind their keys on @p app. */
void mprof_gtk_actions_set_accels(GtkApplication *app);
/* The keys and the mouse, a line each, as the keys window and --help
 * (hence mprof-gtk(1)) list them; needs no display. g_free() it. */
char *mprof_gtk_actions_keys_text(void);
/* Turn the actions of keys that type (w, s, 0, ?) off while a text field
 * has the focus (@p typing), on again after. */
void mprof_gtk_actions_set_typing(MprofGtkWindow *window, gboolean typing);
/* The window win.keys (F1, ?) shows, NULL until it was asked for. */
GtkWidget *mprof_gtk_actions_keys_window(MprofGtkWindow *window);

G_END_DECLS

#endif /* MPROF_GTK_ACTIONS_H */
