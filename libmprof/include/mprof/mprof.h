/*
 * mprof — umbrella header: the whole public C API of libmprof.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_MPROF_H
#define MPROF_MPROF_H

#include <mprof/api.h>
#include <mprof/diagnose.h>
#include <mprof/diff.h>
#include <mprof/error.h>
#include <mprof/export.h>
#include <mprof/format.h>
#include <mprof/join.h>
#include <mprof/lines.h>
#include <mprof/mkprof.h>
#include <mprof/names.h>
#include <mprof/ranks.h>
#include <mprof/ranges.h>
#include <mprof/reasons.h>
#include <mprof/sass.h>
#include <mprof/sidecar.h>
#include <mprof/source.h>
#include <mprof/sources.h>
#include <mprof/status.h>
#include <mprof/throughput.h>
#include <mprof/trace.h>
#include <mprof/units.h>
#include <mprof/version.h>
#include <mprof/writer.h>

#endif /* MPROF_MPROF_H */
