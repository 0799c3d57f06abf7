/*
 * mprof-gtk — the application: command line, one window per trace.
 *
 *   mprof-gtk [--kernel NAME] [--tab TAB] [--sidecar FILE] TRACE
 *   mprof-gtk --demo-activity [--rows sm|block|warp] [--depth D]
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_APP_H
#define MPROF_GTK_APP_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define MPROF_GTK_TYPE_APP (mprof_gtk_app_get_type())
G_DECLARE_FINAL_TYPE(MprofGtkApp, mprof_gtk_app, MPROF_GTK, APP, GtkApplication)

/* Run the viewer; returns the process exit status (0, 1 failed, 2 bad
 * usage or input). */
int mprof_gtk_app_run(int argc, char **argv);

/* The exit status the process ends with (the largest one set wins). */
void mprof_gtk_app_set_exit_status(MprofGtkApp *self, int status);

G_END_DECLS

#endif /* MPROF_GTK_APP_H */
