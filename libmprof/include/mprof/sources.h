/*
 * mprof — the text of a kernel's source files: embedded in the trace
 * (SOURCES, docs/FORMAT.md) or read from disk, with build paths mapped to
 * where the files are now.
 *
 * Lines of code are what `summary --by-line` prints and the viewer's
 * Source tab shows. A trace keeps the files its sampled kernels' line
 * tables name (mprof_sources_embed(), run by `mprof record` and `mprof
 * sass`), so it shows its code on a machine without the checkout; a file
 * that was not readable then is listed as missing, never invented.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SOURCES_H
#define MPROF_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mprof_sources mprof_sources;

#define MPROF_SOURCES_OPTIONS_VERSION 1

/** Read only what the trace embeds; never the disk. */
#define MPROF_SOURCES_NO_DISK 0x1u

typedef struct mprof_sources_options {
  unsigned version; /**< MPROF_SOURCES_OPTIONS_VERSION */
  unsigned flags;   /**< MPROF_SOURCES_* */
  /**
   * Where build paths are now (`--source-root`), tried in order before the
   * path itself: "OLD=NEW" puts NEW in place of the leading folder OLD;
   * "DIR" looks for the path's trailing parts under DIR, longest first
   * (/build/app/src/k.cu: DIR/build/app/src/k.cu, DIR/app/src/k.cu,
   * DIR/src/k.cu, DIR/k.cu). Borrowed for the call only.
   */
  const char *const *roots;
  size_t root_count;
  MPROF_GROWABLE_TAIL
} mprof_sources_options;

#define MPROF_SOURCES_OPTIONS_INIT                                             \
  { MPROF_SOURCES_OPTIONS_VERSION, 0, NULL, 0 }

/** Fill @p opts with defaults. Returns MPROF_EVERSION for an unknown version.
 */
MPROF_API int mprof_sources_options_init(mprof_sources_options *opts,
                                         unsigned version);

/** Where a file's text came from (mprof_sources_state()). */
typedef enum mprof_source_state {
  MPROF_SOURCE_UNKNOWN = 0,  /**< not embedded, not found on disk */
  MPROF_SOURCE_EMBEDDED = 1, /**< the trace's copy, as it was at record time */
  MPROF_SOURCE_DISK = 2,     /**< read from disk now (may have changed) */
  /** The trace lists it as missing when sources were embedded, and it is
   * not found on disk now either. */
  MPROF_SOURCE_MISSING = 3
} mprof_source_state;

/**
 * The sources of @p trace (NULL: disk only). @p trace is borrowed and must
 * outlive the result; @p opts may be NULL. Files are read when first asked
 * for, so a mprof_sources is used by one thread at a time. On success *out
 * is the caller's; free it with mprof_sources_free().
 */
MPROF_API int mprof_sources_open(mprof_sources **out, const mprof_trace *trace,
                                 const mprof_sources_options *opts);

/** NULL is a no-op. */
MPROF_API void mprof_sources_free(mprof_sources *sources);

/** Where the text of @p path (as a line table names it) comes from. */
MPROF_API int mprof_sources_state(mprof_sources *sources, const char *path);

/**
 * Line @p line (1-based) of @p path, without its line break, and its length
 * in *length (may be NULL): not NUL-terminated at the line's end. NULL when
 * the file or the line is not there. Owned by @p sources.
 */
MPROF_API const char *mprof_sources_line(mprof_sources *sources,
                                         const char *path, uint32_t line,
                                         size_t *length);

/** Lines in @p path's text (0 when it has none). */
MPROF_API uint32_t mprof_sources_line_count(mprof_sources *sources,
                                            const char *path);

/** A file the trace lists (SOURCES): embedded or missing at record time. */
typedef struct mprof_source_listing {
  const char *path; /**< as the line table names it; owned by the trace */
  uint32_t state;   /**< MPROF_SOURCE_EMBEDDED or MPROF_SOURCE_MISSING */
  uint32_t crc32c;  /**< CRC-32C of its text (0 when missing) */
  uint64_t size;    /**< bytes of its text (0 when missing) */
  uint64_t stored;  /**< bytes it takes in the trace, compressed */
  MPROF_GROWABLE_TAIL
} mprof_source_listing;

/** Files the trace of @p sources lists (0 without a trace or SOURCES). */
MPROF_API size_t mprof_sources_listed(const mprof_sources *sources);

/** Listed file @p index, in the order stored (paths sorted); NULL out of
 * range. Owned by @p sources. */
MPROF_API const mprof_source_listing *
mprof_sources_listed_at(const mprof_sources *sources, size_t index);

#define MPROF_SOURCES_REPORT_VERSION 1

/** What mprof_sources_embed() did. The caller owns it. */
typedef struct mprof_sources_report {
  unsigned version;      /**< MPROF_SOURCES_REPORT_VERSION, set by the caller */
  size_t files;          /**< files the sampled kernels' line tables name */
  size_t embedded;       /**< ... read and embedded */
  size_t missing;        /**< ... not readable: listed as missing */
  uint64_t text_bytes;   /**< bytes of the embedded files */
  uint64_t stored_bytes; /**< what they take in the trace (zlib) */
  MPROF_GROWABLE_TAIL
} mprof_sources_report;

#define MPROF_SOURCES_REPORT_INIT                                              \
  { MPROF_SOURCES_REPORT_VERSION, 0, 0, 0, 0, 0 }

/**
 * Embed in the finished trace at @p trace_path the source files named by
 * the line tables of its sampled functions (their cubins in CUBINS; the
 * call sites of inlined code included), found on disk as
 * mprof_sources_open() finds them (@p opts: roots; MPROF_SOURCES_NO_DISK
 * is ignored), each with its path, size and CRC-32C, compressed with zlib
 * when that makes it smaller, in the section SOURCES (docs/FORMAT.md),
 * replacing the one the trace had. A file that cannot be read is listed as
 * missing, with no text. A trace without sampled code gets no section (an
 * old one is removed). @p opts and @p report may be NULL.
 */
MPROF_API int mprof_sources_embed(const char *trace_path,
                                  const mprof_sources_options *opts,
                                  mprof_sources_report *report);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SOURCES_H */
