/*
 * mprof — helpers shared across libmprof's source files. Never installed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_INTERNAL_H
#define MPROF_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "mprof/status.h"

#if defined(__GNUC__)
#define MPROF__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MPROF__PRINTF(a, b)
#endif

/** In a qsort comparator over @c x and @c y: order by field @p f first. */
#define MPROF__ORDER_BY(f)                                                     \
  if (x->f != y->f)                                                            \
  return x->f < y->f ? -1 : 1
/** The same, largest first. */
#define MPROF__ORDER_BY_DESC(f)                                                \
  if (x->f != y->f)                                                            \
  return x->f > y->f ? -1 : 1

/** Set this thread's error message and return @p status (for `return`). */
int mprof__error_set(int status, const char *fmt, ...) MPROF__PRINTF(2, 3);

/**
 * 0 when @p version is one from @p oldest to @p current; else
 * MPROF_EVERSION with the one message every versioned struct gives:
 * "@p what version V is not supported (this mprof reads ...)".
 */
int mprof__version_check(const char *what, unsigned version, unsigned oldest,
                         unsigned current);

/**
 * Bytes from the start of @p type to the end of @p field: the size of a
 * versioned struct (one that starts with `unsigned version`, docs/ABI.md)
 * whose version ends with @p field. A caller's struct of that version has
 * exactly these fields; sizeof would count fields a later version appended
 * and overrun the struct of a caller built against older headers.
 */
#define MPROF__END_OF(type, field)                                             \
  (offsetof(type, field) + sizeof(((type *)0)->field))

/** The versions of a versioned struct: its name in messages ("diagnose
 * options", "occupancy") and where each version ends, ends[v - 1] for
 * version v (MPROF__END_OF its last field; 0 for a version no longer
 * read). The last is the current version. */
typedef struct mprof__versions {
  const char *what;
  const size_t *ends;
  unsigned count;
} mprof__versions;

/** Declare the mprof__versions @p name of struct @p what, versions ending at
 * the size_t values that follow (MPROF__END_OF(type, last field) each). */
#define MPROF__VERSIONS(name, what, ...)                                       \
  static const size_t name##_ends[] = {__VA_ARGS__};                           \
  static const mprof__versions name = {                                        \
      what, name##_ends, sizeof name##_ends / sizeof name##_ends[0]}

/**
 * The size of version @p version of @p v's struct; 0, with MPROF_EVERSION's
 * message "WHAT version V is not supported (this mprof reads ...)", for a
 * version it does not know.
 */
size_t mprof__version_size(const mprof__versions *v, unsigned version);

/**
 * The body of every mprof_*_options_init(): when @p version is one @p v
 * knows, the fields of that version in @p opts (and nothing after them)
 * become @p init's, with @p version in the leading `unsigned version`;
 * else MPROF_EINVAL or MPROF_EVERSION with "WHAT version ...".
 */
int mprof__options_init(void *opts, const void *init, unsigned version,
                        const mprof__versions *v);

/**
 * 0 when @p out (may be NULL: nothing to fill) is a struct in the caller's
 * memory of a version @p v knows (its leading `unsigned version`); else
 * MPROF_EVERSION with the standard message. For a result struct, before the
 * work that fills it.
 */
int mprof__result_check(const void *out, const mprof__versions *v);

/**
 * Copy @p full, the library's own struct (of the current version, filled
 * in), into the caller's @p out (checked by mprof__result_check()): only
 * the fields of the caller's version, keeping that version. Every function
 * that fills a versioned struct in the caller's memory ends with this,
 * never with a struct assignment or a memset of sizeof.
 */
void mprof__result_store(void *out, const void *full, const mprof__versions *v);

/**
 * The options an entry point reads: @p opts, or @p defaults when NULL. NULL,
 * with MPROF_EVERSION's message "@p what options version ...", when their
 * version (options structs start with `unsigned version`) is not one from
 * @p oldest to @p current.
 */
const void *mprof__options_or_defaults(const void *opts, const void *defaults,
                                       unsigned oldest, unsigned current,
                                       const char *what);

/** mprof__error_set() of "NAME: at byte AT: MESSAGE", for a file @p name
 * whose byte @p at is wrong. */
int mprof__error_at(int status, const char *name, uint64_t at, const char *fmt,
                    ...) MPROF__PRINTF(4, 5);

/** Prefix this thread's current message with "PREFIX: ". */
void mprof__error_prefix(const char *fmt, ...) MPROF__PRINTF(1, 2);

struct mprof_throughput;
/** How many kernels had a counter CUPTI evaluated out of scale (a
 * percentage beyond 101%), left unknown for them; *@p counter the first
 * such counter (analysis/throughput.c). */
size_t mprof__throughput_out_of_scale(const struct mprof_throughput *t,
                                      uint32_t *counter);
/** Whether a device was sampled with TriageCompute counters, beside which
 * the L2's sectors are not read, and no device of the set read them
 * (analysis/throughput.c). */
int mprof__throughput_l2_left_out(const struct mprof_throughput *t);

/** 64-bit FNV-1a over bytes; used for deduplication tables. */
static inline uint64_t mprof__hash64(const void *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/** The record size of a section of @p type (1 for byte sections), 0 for a
 * type this version does not know: format/writer.c, for the writer and the
 * reader alike. */
uint32_t mprof__record_size(uint32_t type);

struct mprof_file_header;
struct mprof_section_entry;

/** The header of a file with @p flags whose directory, @p count @p entries
 * at @p directory_offset, ends it (a streamed file's: none, at 0), with its
 * checksums: format/writer.c, for the writer and the reader alike. */
void mprof__file_header(struct mprof_file_header *h, uint32_t flags,
                        uint64_t directory_offset,
                        const struct mprof_section_entry *entries,
                        uint32_t count);

struct mprof_trace;

/** Name @p trace after @p path in messages and mprof_trace_path() (a trace
 * opened from a scratch copy, e.g. an imported MKPROF). */
int mprof__trace_set_path(struct mprof_trace *trace, const char *path);

/** "s" after a count of @p n things unless it is one: "%llu block%s". */
static inline const char *mprof__plural(uint64_t n) {
  return n == 1 ? "" : "s";
}

#endif /* MPROF_INTERNAL_H */
