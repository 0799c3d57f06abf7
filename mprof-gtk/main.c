/*
 * mprof-gtk — the viewer's entry point. Everything else is in app.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "app.h"

int main(int argc, char **argv) { return mprof_gtk_app_run(argc, argv); }
