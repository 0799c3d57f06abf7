/*
 * mprof-gtk — the Source tab's page: above the Source view (a timeline page
 * of MPROF_RENDER_SOURCE), a bar to go to the hottest line and step
 * through the next hottest ones, a picker of the kernel's files (a kernel
 * inlines headers, templates) and a search of the shown file. The view
 * state holds where it is (mprof_gtk_view_state_source_*), so a click in
 * Hotspots, Flame or Raster lands here too.
 *
 * Keys on the Source view: n the next hottest line, Shift+N the one
 * before, Ctrl+F (win.find) the search; in the search Enter (or Ctrl+G)
 * the next match, Shift+Enter (Ctrl+Shift+G) the one before, Esc back to
 * the view.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_SOURCE_PAGE_H
#define MPROF_GTK_SOURCE_PAGE_H

#include <gtk/gtk.h>

#include "timeline.h"
#include "viewstate.h"

G_BEGIN_DECLS

/* The page: the bar above @p page (the view's grid with its scrollbar),
 * whose view is @p view. */
GtkWidget *mprof_gtk_source_page_new(MprofGtkViewState *state, GtkWidget *page,
                                     GtkWidget *view);

/* Ctrl+F on the Source tab: the search, focused, its text selected. */
void mprof_gtk_source_page_find(GtkWidget *source_page);

/* A key on the Source view, callable from tests: TRUE when it was taken. */
gboolean mprof_gtk_source_page_key(GtkWidget *source_page, guint keyval,
                                   GdkModifierType state);

/* For tests: the search entry, the buttons (0 hottest, 1 previous, 2 next
 * hottest), the file picker, and the line that says what the last step
 * did. */
GtkWidget *mprof_gtk_source_page_search(GtkWidget *source_page);
GtkWidget *mprof_gtk_source_page_button(GtkWidget *source_page, int which);
GtkWidget *mprof_gtk_source_page_files(GtkWidget *source_page);
const char *mprof_gtk_source_page_status(GtkWidget *source_page);

/* The keys of the Source view, for the keys window; ends with {NULL}. */
extern const MprofGtkKeyHelp mprof_gtk_source_page_keys[];

G_END_DECLS

#endif /* MPROF_GTK_SOURCE_PAGE_H */
