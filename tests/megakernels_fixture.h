/*
 * mprof tests — a .mkprof written the way the Megakernels project's
 * converter (timings.py) writes one, from a simulated persistent megakernel.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_TESTS_MEGAKERNELS_FIXTURE_H
#define MPROF_TESTS_MEGAKERNELS_FIXTURE_H

/* The shape of the simulated run. */
#define MEGAKERNELS_GPUS 2
#define MEGAKERNELS_SMS_PER_GPU 16
#define MEGAKERNELS_INSTRUCTIONS 24 /* slots per SM, all used */
#define MEGAKERNELS_TYPES 10        /* "No Op" and 9 kinds of work */

/* Write the file at @p path: 0 on success, -1 (with errno) on failure. */
int megakernels_fixture_write(const char *path);

#endif
