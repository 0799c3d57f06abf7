/*
 * mprof-gtk — a kernel panel: Summary, Hotspots, Flame or Raster, drawn by
 * mprof-render for the view state's selected kernel. Wheel and drag scroll
 * the page; hovering emits "hover" (const char *text).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_PANEL_H
#define MPROF_GTK_PANEL_H

#include <gtk/gtk.h>

#include "viewstate.h"

G_BEGIN_DECLS

#define MPROF_GTK_TYPE_PANEL (mprof_gtk_panel_get_type())
G_DECLARE_FINAL_TYPE(MprofGtkPanel, mprof_gtk_panel, MPROF_GTK, PANEL,
                     GtkDrawingArea)

/* @p tab is an mprof_render_tab other than MPROF_RENDER_TRACE. */
GtkWidget *mprof_gtk_panel_new(MprofGtkViewState *state, int tab);
int mprof_gtk_panel_get_tab(MprofGtkPanel *self);
/* For the vertical scrollbar, in pixels. Owned by the panel. */
GtkAdjustment *mprof_gtk_panel_get_vadjustment(MprofGtkPanel *self);

G_END_DECLS

#endif /* MPROF_GTK_PANEL_H */
