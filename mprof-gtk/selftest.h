/*
 * mprof-gtk — `--smoke-test DIR`: drive the real window through every tab,
 * zoom and pan it, save a screenshot per step into DIR (GTK's own
 * snapshot of the widget tree), check what the state says, and quit. The
 * GUI smoke test (tests/gui/smoke.sh) runs it under Xvfb.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_GTK_SELFTEST_H
#define MPROF_GTK_SELFTEST_H

#include "app.h"
#include "window.h"

void mprof_gtk_selftest_start(MprofGtkApp *app, MprofGtkWindow *window,
                              const char *dir);

#endif /* MPROF_GTK_SELFTEST_H */
