/*
 * mprof-gtk — the timeline widget of the tabs whose x axis is time: Trace
 * (launches on stream rows under a time ruler), Mega, Density and
 * Activity (the spans of the selected kernel by SM), drawn by
 * mprof-render. The other tabs (Summary, Hotspots, Flame, Raster, Source)
 * are pages of the selected kernel in the same widget: wheel and drag
 * scroll them, hovering tells what is under the pointer, and a click on an
 * instruction of Hotspots, Flame or Raster opens its source line.
 *
 * Mouse: wheel zooms time around the pointer, Shift+wheel changes the row
 * height, Ctrl+wheel zooms rows around the pointer (in Mega, Density and
 * Activity both make SMs or rows taller, and Mega opens tall SMs into
 * their rows), horizontal wheel and drag pan, Shift+drag selects a time
 * range; hovering a launch (or the CUDA API call that issued it) draws
 * the arrow from the call to the launch; a click selects a launch or the
 * launch of a call (on empty space: clears the selection),
 * a double-click opens its kernel (in Mega: opens the SM under the
 * pointer into its rows, or back to bars); on the Trace, a click on a
 * device or thread band folds its rows, a right-click on a row hides it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_TIMELINE_H
#define MPROF_GTK_TIMELINE_H

#include <gtk/gtk.h>

#include "viewstate.h"

G_BEGIN_DECLS

#define MPROF_GTK_TYPE_TIMELINE (mprof_gtk_timeline_get_type())
G_DECLARE_FINAL_TYPE(MprofGtkTimeline, mprof_gtk_timeline, MPROF_GTK, TIMELINE,
                     GtkDrawingArea)

/* Signals: "open-kernel" (int kernel) on a double-click; "hover" (const
 * char *text) when the pointer moves over something, "" when it leaves;
 * "open-source" (int kernel, guint offset) on a click on an instruction
 * of Hotspots, Flame or Raster. The Source page scrolls its marked line
 * into view whenever it changes. */
GtkWidget *mprof_gtk_timeline_new(MprofGtkViewState *state, int tab);

/* For the scrollbars: time (in ns from the start of the limits) and rows
 * (in pixels). Owned by the timeline. */
GtkAdjustment *mprof_gtk_timeline_get_hadjustment(MprofGtkTimeline *self);
GtkAdjustment *mprof_gtk_timeline_get_vadjustment(MprofGtkTimeline *self);

/* What the mouse does, callable from tests and keys: wheel steps @p dy at
 * (@p x, @p y) with GDK modifier @p state. */
void mprof_gtk_timeline_scroll(MprofGtkTimeline *self, double x, double y,
                               double dx, double dy, GdkModifierType state);
/* A drag from (@p x, @p y) by (@p dx, @p dy) with modifier @p state, as
 * the mouse does it: Shift selects a time range, else it pans; on a page,
 * one that does not move is a click. */
void mprof_gtk_timeline_drag(MprofGtkTimeline *self, double x, double y,
                             double dx, double dy, GdkModifierType state);
/* The keys a timeline takes itself, for the keys window; ends with
 * {NULL, NULL}. */
typedef struct MprofGtkKeyHelp {
  const char *keys, *what;
} MprofGtkKeyHelp;
extern const MprofGtkKeyHelp mprof_gtk_timeline_keys[];

/* A key on a timeline with the focus, callable from tests: F or Enter
 * zooms to the selected time range (else to the selected launch, with a
 * little room around it), Esc clears the selected range and launch.
 * TRUE when it did something; FALSE leaves the key to the window. */
gboolean mprof_gtk_timeline_key(MprofGtkTimeline *self, guint keyval,
                                GdkModifierType state);
/* A click (@p n_press 2: a double-click) of mouse button @p button at
 * (@p x, @p y), as the mouse does it: on the Trace, a click on a device or
 * thread band folds its rows into it (or back out), a right-click on a row
 * opens its menu (hide it, show the hidden ones). */
void mprof_gtk_timeline_click(MprofGtkTimeline *self, double x, double y,
                              int n_press, guint button);
/* That menu (a GtkPopover), NULL until a right-click opened it. */
GtkWidget *mprof_gtk_timeline_get_row_menu(MprofGtkTimeline *self);
/* The pointer moving to (@p x, @p y), as the mouse does it. */
void mprof_gtk_timeline_hover(MprofGtkTimeline *self, double x, double y);

G_END_DECLS

#endif /* MPROF_GTK_TIMELINE_H */
