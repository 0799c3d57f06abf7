/*
 * mprof CUPTI producer — PM sampling: hardware counters over time.
 *
 * CUPTI's PM sampling API (cupti_pmsampling.h) reads a set of performance
 * counters of a whole GPU at a fixed interval, with no kernel replay. Each
 * device gets one session, opened when its first context is created; a
 * decode thread turns the hardware buffer into PM_SAMPLES records on the
 * trace clock. README.md lists the counters and the settings.
 *
 * The module is C++ because CUPTI's profiler host header is; its interface
 * is C.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_PMSAMPLING_H
#define MPROF_CUPTI_PMSAMPLING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "config.h"
#include "translate.h"

/** Remember where samples go and how to sample. Call once, before any
 * mprof_cupti_pm_device(). */
void mprof_cupti_pm_init(mprof_cupti_translate *tr,
                         const mprof_cupti_config *cfg);

/**
 * Start sampling device @p ordinal unless it already is. Failures (no
 * permission, unsupported GPU, a counter user such as Nsight already on the
 * device) leave the device unsampled and are written to META as
 * `pm.device.<ordinal>.error` and `pm.error`; they never stop the recording.
 */
void mprof_cupti_pm_device(uint32_t ordinal);

/**
 * MPROF_PM=alternate: turn PM sampling of every device seen so far on
 * (@p on: Enable, SetConfig, Start) or off (Stop, the last samples,
 * Disable). Devices first seen while it is off are set up at the next on.
 * PC sampling must be disabled on the GPU while it is on.
 */
void mprof_cupti_pm_phase(int on);

/** Stop every session, decode what is left and release CUPTI's profiler.
 * Call once at exit, before the trace is finished. */
void mprof_cupti_pm_finish(void);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_CUPTI_PMSAMPLING_H */
