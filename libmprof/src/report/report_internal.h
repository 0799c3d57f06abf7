/*
 * mprof — helpers shared by the analysis and report sources (join,
 * diagnose, diff, report*). Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_REPORT_INTERNAL_H
#define MPROF_REPORT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "mprof/diagnose.h"
#include "mprof/diff.h"

/* qsort() that accepts an empty or NULL array (glibc declares the base
 * nonnull even for zero elements). */
static inline void mprof__qsort(void *base, size_t count, size_t size,
                                int (*compare)(const void *, const void *)) {
  if (count > 1)
    qsort(base, count, size, compare);
}

/* ---- arena: many small allocations freed at once ------------------------ */

typedef struct mprof__arena_chunk mprof__arena_chunk;

typedef struct mprof__arena {
  mprof__arena_chunk *head;
  int failed; /* an allocation failed; later ones return NULL too */
} mprof__arena;

/* Zeroed, 16-byte aligned memory owned by @p arena; NULL when out of
 * memory (and arena->failed is set). */
void *mprof__arena_alloc(mprof__arena *arena, size_t size);
/* A copy of @p text in the arena ("" for NULL); NULL on failure. */
char *mprof__arena_strdup(mprof__arena *arena, const char *text);
char *mprof__arena_printf(mprof__arena *arena, const char *fmt, ...)
    MPROF__PRINTF(2, 3);
void mprof__arena_free(mprof__arena *arena);

/* ---- formatting for people ---------------------------------------------- */

/* "1.23 ms", "456 ns", "7.8 us" ("us" in ASCII so every terminal shows it). */
void mprof__format_ns(char *buf, size_t size, double ns);
/* "12.3%" for 0.123. */
void mprof__format_pct(char *buf, size_t size, double fraction);
/* "1,234,567". */
void mprof__format_count(char *buf, size_t size, uint64_t value);

/* ---- XML and JSON ------------------------------------------------------- */

/* Write @p text as XML character data or an attribute value: escapes
 * & < > " ', drops characters XML 1.0 forbids and replaces invalid UTF-8
 * with U+FFFD. */
void mprof__xml_escape(FILE *out, const char *text);
/* ` name="value"` with the value escaped. */
void mprof__xml_attr(FILE *out, const char *name, const char *value);
void mprof__xml_attr_u64(FILE *out, const char *name, uint64_t value);
/* A finite number with up to @p digits decimals; NaN/inf are omitted. */
void mprof__xml_attr_num(FILE *out, const char *name, double value, int digits);

/* A JSON string literal for @p text (NULL gives null), escaping quotes,
 * backslashes and control characters; invalid UTF-8 becomes U+FFFD. */
void mprof__json_string(FILE *out, const char *text);
/* A JSON number; NaN and infinities give null. */
void mprof__json_num(FILE *out, double value, int digits);

/* ---- selection of kernels for a report ---------------------------------- */

/* A --kernel filter: exact name when some kernel has that name, else a
 * POSIX extended regular expression. */
typedef struct mprof__matcher {
  const char *pattern; /* NULL: matches everything */
  int regex;
  void *compiled; /* regex_t, when regex */
} mprof__matcher;

/* @p exact: whether some kernel's name equals @p pattern. MPROF_EINVAL
 * (with the message set) for a bad expression. */
int mprof__matcher_init(mprof__matcher *m, const char *pattern, int exact);
int mprof__matcher_test(const mprof__matcher *m, const char *name,
                        const char *mangled);
void mprof__matcher_free(mprof__matcher *m);

/*
 * Which kernels of @p join a report shows: those whose mangled or display
 * name equals @p pattern, else matches it as a POSIX extended regular
 * expression; all when @p pattern is NULL or "". *out (caller frees) gets
 * the kernel indices in join order. MPROF_ENOTFOUND when none matches.
 */
int mprof__select_kernels(size_t **out, size_t *count, const mprof_join *join,
                          const char *pattern);

/* The two diagnoses a diff compares (borrowed). */
const mprof_diagnosis *mprof__diff_base(const mprof_diff *diff);
const mprof_diagnosis *mprof__diff_candidate(const mprof_diff *diff);

/* ---- ANSI colours for the text panel ------------------------------------ */

typedef struct mprof__style {
  const char *bold, *dim, *red, *yellow, *green, *cyan, *reset;
} mprof__style;

void mprof__style_init(mprof__style *style, int color);
/* The colour of a mprof_state. */
const char *mprof__state_color(const mprof__style *style, uint32_t state);

#endif /* MPROF_REPORT_INTERNAL_H */
