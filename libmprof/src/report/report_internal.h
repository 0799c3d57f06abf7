/*
 * mprof — what the report and export sources share: kernel selection,
 * report options, speed-of-light fields and labels, the text panel's
 * colours. Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_REPORT_INTERNAL_H
#define MPROF_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/text.h"
#include "internal.h"
#include "mprof/units.h"
#include "mprof/diagnose.h"
#include "mprof/diff.h"

/* ---- selection of kernels for a report ---------------------------------- */

/* The display and mangled names of item @p i of @p ctx. */
typedef void (*mprof__names_fn)(const void *ctx, size_t i, const char **name,
                                const char **mangled);

/*
 * Which of @p count kernels a report shows: those whose mangled or display
 * name equals @p pattern when one does, else those that match it as a
 * POSIX extended regular expression; all when @p pattern is NULL or "".
 * *out (caller frees) gets their indices in order. MPROF_EINVAL (message
 * set) for a bad expression; MPROF_ENOTFOUND, no message, when none
 * matches.
 */
int mprof__select(size_t **out, size_t *found, size_t count,
                  mprof__names_fn names, const void *ctx, const char *pattern);
/* The same over the kernels of @p join, with a message when none matches. */
int mprof__select_kernels(size_t **out, size_t *count, const mprof_join *join,
                          const char *pattern);

/* *opts, or the defaults when NULL. MPROF_EVERSION or MPROF_EINVAL
 * (message set) for options a report writer cannot take; 0 otherwise. */
int mprof__report_options_check(const mprof_report_options **opts);

/* 0 once @p out, a report's output, is flushed without error; otherwise
 * MPROF_EIO with "cannot write the @p what: output error". */
int mprof__report_flush(FILE *out, const char *what);

/* A report's root: XML element or JSON object @p root with schema 1 and
 * the version of mprof that wrote it, after its "kind" (JSON only) when
 * @p kind is set. */
void mprof__report_document(mprof__fields *doc, FILE *f, int json,
                            const char *root, int kind);

/* Writes record @p i of a list: its fields, in @p o. */
typedef void (*mprof__record_fn)(mprof__fields *o, const void *ctx, size_t i);

/* @p count records of @p fields: XML elements @p element in @p parent,
 * the JSON array @p name. */
void mprof__report_records(mprof__fields *parent, const char *element,
                           const char *name, size_t count,
                           mprof__record_fn fields, const void *ctx);

/* The counts of a list that shows @p shown of its @p count items: "shown"
 * (XML only: the JSON array says how many are shown) and "omitted". */
void mprof__report_shown(mprof__fields *o, size_t shown, size_t count);

/* The dimension key of a stall reason: "other" for one outside them. */
const char *mprof__report_reason_dimension(uint32_t dimension);

/* A kernel's names in @p o, the same in every report: "name",
 * "short_name" (@p short_name, the join's unique one; NULL: mprof_name_short
 * of @p name), "mangled" and "device" (empty for MPROF_INDEX_NONE). */
void mprof__report_kernel_names(mprof__fields *o, const char *name,
                                const char *short_name, const char *mangled,
                                uint32_t device_id);

/* analysis/ranges.c: the path of the trace a mprof_range_times came from. */
struct mprof_range_times;
const char *mprof__range_times_path(const struct mprof_range_times *times);

/* ---- speed of light ----------------------------------------------------- */

/* A kernel's measured throughput, the same in the JSON and the XML
 * reports (summary and diff; summary_fields.c): the record "throughput" in
 * @p parent. */
void mprof__summary_throughput(mprof__fields *parent,
                               const mprof_kernel_throughput *t);

/* The counters the text reports show, with their labels ("DRAM", "SMs");
 * summary_view.c. */
typedef struct mprof__sol_label {
  uint32_t counter;
  const char *label;
} mprof__sol_label;
#define MPROF__SOL_TEXT_COUNT 10
extern const mprof__sol_label mprof__sol_text[MPROF__SOL_TEXT_COUNT];

/* ---- ANSI colours for the text panel ------------------------------------ */

typedef struct mprof__style {
  const char *bold, *dim, *red, *yellow, *green, *cyan, *reset;
} mprof__style;

void mprof__style_init(mprof__style *style, int color);
/* The colour of a mprof_state. */
const char *mprof__state_color(const mprof__style *style, uint32_t state);

#endif /* MPROF_REPORT_INTERNAL_H */
