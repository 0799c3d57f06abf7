/*
 * mprof-gtk — the view state: what is visible and selected, owned in one
 * place. Widgets observe it ("changed") instead of talking to each other.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_VIEWSTATE_H
#define MPROF_GTK_VIEWSTATE_H

#include <glib-object.h>

#include "mprof-render/render.h"

G_BEGIN_DECLS

#define MPROF_GTK_TYPE_VIEW_STATE (mprof_gtk_view_state_get_type())
G_DECLARE_FINAL_TYPE(MprofGtkViewState, mprof_gtk_view_state, MPROF_GTK,
                     VIEW_STATE, GObject)

/* What a "changed" emission changed (its guint argument). */
typedef enum {
  MPROF_GTK_CHANGED_TIME = 1 << 0,      /* visible time range */
  MPROF_GTK_CHANGED_SELECTION = 1 << 1, /* selected range or launch */
  MPROF_GTK_CHANGED_KERNEL = 1 << 2,    /* selected kernel */
  MPROF_GTK_CHANGED_ROWS = 1 << 3,      /* row height, rows folded */
  MPROF_GTK_CHANGED_SEARCH = 1 << 4,    /* the Trace's search */
  MPROF_GTK_CHANGED_SOURCE = 1 << 5     /* Source: file, marked line, search */
} MprofGtkChange;

/* @p model is borrowed and must outlive the view state. */
MprofGtkViewState *mprof_gtk_view_state_new(const mprof_render_model *model);

const mprof_render_model *
mprof_gtk_view_state_get_model(MprofGtkViewState *self);
/* The current view; owned by @p self, changes on every "changed". */
const mprof_render_view *mprof_gtk_view_state_get_view(MprofGtkViewState *self);
const mprof_render_limits *
mprof_gtk_view_state_get_limits(MprofGtkViewState *self);

/* Time: zoom by @p factor (> 1 in) around @p fraction of the visible range;
 * pan by @p fraction of it; show [start, end); show the whole trace. */
void mprof_gtk_view_state_zoom(MprofGtkViewState *self, double fraction,
                               double factor);
void mprof_gtk_view_state_pan(MprofGtkViewState *self, double fraction);
void mprof_gtk_view_state_set_range(MprofGtkViewState *self, gint64 start_ns,
                                    gint64 end_ns);
void mprof_gtk_view_state_reset(MprofGtkViewState *self);

/* Rows: the height of a stream row, clamped. */
void mprof_gtk_view_state_set_row_height(MprofGtkViewState *self,
                                         double height);
/* Mega and Density: px per SM (0 = fit them all); Activity: px per row
 * (0 = fit), which rows (mprof_render_activity_rows) at which depth
 * (mprof_render_activity_depth). They emit ROWS. */
void mprof_gtk_view_state_set_sm_height(MprofGtkViewState *self, double height);
void mprof_gtk_view_state_set_activity_height(MprofGtkViewState *self,
                                              double height);
void mprof_gtk_view_state_set_activity(MprofGtkViewState *self, int rows,
                                       int depth);
/* Show what the span views draw for the selected kernel
 * (mprof_render_view_fit_spans). */
void mprof_gtk_view_state_fit_spans(MprofGtkViewState *self);
/* The first look at a span tab (mprof_render_view_open_span_tab): a
 * kernel with spans unless @p keep_kernel, fitted to its spans. */
void mprof_gtk_view_state_open_span_tab(MprofGtkViewState *self,
                                        int keep_kernel);

/* Selection: a kernel (-1 none), a launch (index into LAUNCHES, -1 none;
 * selects its kernel too), a time range (end <= start clears it). */
void mprof_gtk_view_state_select_kernel(MprofGtkViewState *self, int kernel);
void mprof_gtk_view_state_select_launch(MprofGtkViewState *self, gint64 launch);
/* The launch under the pointer (-1 none): the Trace draws its flow arrow. */
void mprof_gtk_view_state_hover_launch(MprofGtkViewState *self, gint64 launch);
void mprof_gtk_view_state_set_selection(MprofGtkViewState *self,
                                        gint64 start_ns, gint64 end_ns);

/* The Trace's search (mprof_render_view.search; NULL or "" for none):
 * copied. It emits SEARCH. */
void mprof_gtk_view_state_set_search(MprofGtkViewState *self, const char *text);
/* Trace rows: flip @p flag (MPROF_ROW_COLLAPSED on a band, MPROF_ROW_HIDDEN)
 * of row @p row; show every hidden row again. They emit ROWS. */
void mprof_gtk_view_state_toggle_row(MprofGtkViewState *self, gint row,
                                     guint flag);
void mprof_gtk_view_state_show_rows(MprofGtkViewState *self);
/* The Source tab (mprof_render_view_source_*): mark the hottest line
 * (@p step 0) or the one @p step ranks from the marked one, and return the
 * rank (-1: no sampled line); mark the line of the instruction at
 * @p offset of @p kernel (selected too; FALSE when it has none); show file
 * @p file (a view's source_file) at its hottest line; search the shown
 * file (returns the lines that hold @p text). They emit SOURCE. */
int mprof_gtk_view_state_source_hot(MprofGtkViewState *self, int step);
gboolean mprof_gtk_view_state_source_pc(MprofGtkViewState *self, int kernel,
                                        guint32 offset);
void mprof_gtk_view_state_source_file(MprofGtkViewState *self, int file);
gsize mprof_gtk_view_state_source_find(MprofGtkViewState *self,
                                       const char *text, int direction);

G_END_DECLS

#endif /* MPROF_GTK_VIEWSTATE_H */
