/*
 * mprof-gtk — the Trace's search bar (Ctrl+F): an entry whose text is the
 * view state's search (the Trace dims what it does not match: kernel and
 * NVTX range names, any case), how many launches and ranges match, and
 * the next or previous match in time (Enter, Ctrl+G / Ctrl+Shift+G, the
 * arrow buttons), which it selects and brings into view. Esc in the entry
 * clears the search and closes the bar.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_SEARCH_H
#define MPROF_GTK_SEARCH_H

#include <gtk/gtk.h>

#include "viewstate.h"

G_BEGIN_DECLS

/* A GtkSearchBar over @p timeline (the Trace's MprofGtkTimeline: its width
 * decides how far a match is zoomed into; Esc gives it the focus back). */
GtkWidget *mprof_gtk_search_new(MprofGtkViewState *state, GtkWidget *timeline);
/* Open the bar with the focus in its entry. */
void mprof_gtk_search_open(GtkWidget *bar);
/* Its entry (a GtkSearchEntry) and the line that counts the matches. */
GtkWidget *mprof_gtk_search_get_entry(GtkWidget *bar);
GtkWidget *mprof_gtk_search_get_count(GtkWidget *bar);
/* Select and show the next match in time after the last one shown (from
 * the left edge of the view at first), or the previous one. FALSE when
 * nothing matches. */
gboolean mprof_gtk_search_step(GtkWidget *bar, gboolean forward);

G_END_DECLS

#endif /* MPROF_GTK_SEARCH_H */
