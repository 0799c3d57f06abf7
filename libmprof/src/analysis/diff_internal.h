/*
 * mprof — internal: what the diff report reads of a diff.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_ANALYSIS_DIFF_INTERNAL_H
#define MPROF_ANALYSIS_DIFF_INTERNAL_H

#include "mprof/diagnose.h"
#include "mprof/diff.h"

/* The two diagnoses a diff compares (borrowed). */
void mprof__diff_sides(const mprof_diff *diff, const mprof_diagnosis **base,
                       const mprof_diagnosis **candidate);

#endif /* MPROF_ANALYSIS_DIFF_INTERNAL_H */
