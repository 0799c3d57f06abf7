/*
 * mprof — spans measured by source instrumentation (producers/source), and
 * merging them into a CUPTI trace.
 *
 * A program built with producers/source/mprof_source.cuh writes a `.source`
 * file: per-block or per-warp spans stamped with %globaltimer (ns since the
 * UNIX epoch, like CLOCK_REALTIME). mprof_source_merge() puts them into a
 * trace as REGIONS and SPANS on the trace clock:
 *
 *   1. globaltimer → trace clock through the trace's META anchors
 *      (`clock.anchor.*`, and `clock.end.*` for the rate when present);
 *   2. each instrumented launch is matched to a CUPTI launch by kernel name
 *      and order (launch shape checked), else by time;
 *   3. one offset per run: the median over matched launches of
 *      (CUPTI start − earliest span start). The spread of that difference
 *      over launches is the alignment error.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_SOURCE_H
#define MPROF_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "format.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the .source file (little-endian; producers/source/README.md) ------- */

#define MPROF_SOURCE_FILE_MAGIC "MPSRC\x00\r\n"
#define MPROF_SOURCE_FILE_VERSION_MAJOR 1

/** Header: at offset 0, 128 bytes. Tables follow in this order. */
typedef struct mprof_source_file_header {
  char magic[8];              /**< MPROF_SOURCE_FILE_MAGIC */
  uint16_t version_major;     /**< 1 */
  uint16_t version_minor;     /**< 0 */
  uint32_t header_size;       /**< 128 */
  uint32_t region_count;      /**< mprof_source_file_region records */
  uint32_t kernel_count;      /**< mprof_source_file_kernel records */
  uint32_t launch_count;      /**< mprof_source_file_launch records */
  uint32_t record_size;       /**< 48 */
  uint64_t record_count;      /**< mprof_source_file_record records */
  uint64_t overflow_count;    /**< spans that did not fit the buffer */
  uint64_t capacity;          /**< records per device buffer */
  uint32_t strings_size;      /**< bytes of the string table, a multiple of 8 */
  uint32_t timer_step_ns;     /**< smallest %globaltimer step; 0 not measured */
  uint32_t timer_step_max_ns; /**< largest step seen in the probe */
  uint32_t timer_changes;     /**< value changes seen in the probe */
  uint64_t probe_globaltimer_ns;   /**< first read of the probe kernel */
  uint64_t probe_realtime_ns;      /**< host CLOCK_REALTIME around it */
  uint64_t probe_monotonic_raw_ns; /**< host CLOCK_MONOTONIC_RAW around it */
  uint64_t probe_bracket_ns;       /**< host launch-to-sync time */
  /** Version 1.1: bytes per entry of the launch-extension table that
   *  follows the records (one mprof_source_file_launch_ext per launch), or
   *  0 when the file has none (all version 1.0 files). */
  uint32_t launch_ext_size;
  uint8_t reserved[20]; /**< zero */
} mprof_source_file_header;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_header) == 128,
                    "source header is 128 bytes");

/** A named region; its index is the id the device code passes. */
typedef struct mprof_source_file_region {
  uint32_t name;  /**< offset into the string table */
  uint32_t role;  /**< mprof_region_role */
  uint32_t color; /**< 0xAARRGGBB; 0 = choose one */
  uint32_t reserved;
} mprof_source_file_region;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_region) == 16,
                    "source region is 16 bytes");

/** A kernel name as the program wrote it at the launch. */
typedef struct mprof_source_file_kernel {
  uint32_t name; /**< offset into the string table */
  uint32_t reserved;
} mprof_source_file_kernel;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_kernel) == 8,
                    "source kernel is 8 bytes");

/** One instrumented launch, in the order the host made them. */
typedef struct mprof_source_file_launch {
  uint32_t kernel;   /**< index into the kernel table */
  uint32_t device;   /**< CUDA device ordinal */
  uint32_t grid[3];  /**< gridDim */
  uint32_t block[3]; /**< blockDim */
  uint64_t host_ns;  /**< CLOCK_REALTIME when the host prepared it */
} mprof_source_file_launch;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_launch) == 40,
                    "source launch is 40 bytes");

/** Launch-extension flags: dynamic_shared is known; stream is known. */
#define MPROF_SOURCE_LAUNCH_DYNAMIC_SHARED 0x1u
#define MPROF_SOURCE_LAUNCH_STREAM 0x2u

/** Version 1.1: what a producer knows of a launch beyond the launch table
 *  (the block producer: its stream, and the dynamic shared memory the
 *  blocks saw). Entry i belongs to launch i. */
typedef struct mprof_source_file_launch_ext {
  uint32_t stream;         /**< the process's streams in order of first use, per
                              device: 0 the default (NULL) stream, 1, 2, ... */
  uint32_t dynamic_shared; /**< bytes per block */
  uint32_t cluster[3];     /**< cluster dims; zeros when none */
  uint32_t flags;          /**< MPROF_SOURCE_LAUNCH_* */
} mprof_source_file_launch_ext;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_launch_ext) == 24,
                    "source launch extension is 24 bytes");

/** One span, as the device stored it. */
typedef struct mprof_source_file_record {
  uint64_t start;   /**< %globaltimer ns */
  uint64_t end;     /**< %globaltimer ns, >= start */
  uint32_t launch;  /**< index into the launch table */
  uint32_t kernel;  /**< index into the kernel table */
  uint32_t sm;      /**< %smid */
  uint32_t block;   /**< linear block index */
  uint32_t warp;    /**< warp in the block; MPROF_INDEX_NONE for blocks */
  uint32_t region;  /**< region id (may exceed the table: "region N") */
  uint64_t payload; /**< the program's value */
} mprof_source_file_record;
MPROF_STATIC_ASSERT(sizeof(mprof_source_file_record) == 48,
                    "source record is 48 bytes");

typedef struct mprof_source_file mprof_source_file;

/**
 * Read and validate the .source file at @p path: sizes against the file
 * size, reserved bytes, string offsets, every record's launch and kernel
 * index, end >= start. Errors name the file and the byte offset. On success
 * *out is the caller's; free it with mprof_source_file_free().
 */
MPROF_API int mprof_source_file_open(mprof_source_file **out, const char *path);

/** Free @p file. NULL is a no-op. */
MPROF_API void mprof_source_file_free(mprof_source_file *file);

/** The header; owned by @p file. */
MPROF_API const mprof_source_file_header *
mprof_source_file_get_header(const mprof_source_file *file);

/** The string at @p ref ("" when out of range); owned by @p file. */
MPROF_API const char *mprof_source_file_string(const mprof_source_file *file,
                                               uint32_t ref);

/* The tables and their counts; owned by @p file. */
MPROF_API const mprof_source_file_region *
mprof_source_file_regions(const mprof_source_file *file, size_t *count);
MPROF_API const mprof_source_file_kernel *
mprof_source_file_kernels(const mprof_source_file *file, size_t *count);
MPROF_API const mprof_source_file_launch *
mprof_source_file_launches(const mprof_source_file *file, size_t *count);
MPROF_API const mprof_source_file_record *
mprof_source_file_records(const mprof_source_file *file, size_t *count);
/** The launch extensions (version 1.1), one per launch, or NULL (count 0)
 *  when the file has none; owned by @p file. */
MPROF_API const mprof_source_file_launch_ext *
mprof_source_file_launch_exts(const mprof_source_file *file, size_t *count);

/* ---- clocks and alignment ---------------------------------------------- */

/**
 * How %globaltimer (CLOCK_REALTIME-like ns) maps to a trace's clock:
 * trace = anchor_trace_ns + (globaltimer - anchor_realtime_ns) * rate.
 * A value passed in and out of the library, fixed (docs/ABI.md): it never
 * grows; another clock model would be another struct.
 */
typedef struct mprof_source_clock {
  int64_t anchor_trace_ns;    /**< trace time at the anchor */
  int64_t anchor_realtime_ns; /**< CLOCK_REALTIME at the same moment */
  double rate;                /**< trace ns per realtime ns (1 = same rate) */
  int anchored; /**< 0 no anchor: identity; 1 one anchor; 2 two (rate) */
} mprof_source_clock;

/**
 * Fill @p out from the META keys `clock.anchor.trace_ns`,
 * `clock.anchor.realtime_ns` and, for the rate, `clock.end.trace_ns` and
 * `clock.end.realtime_ns` of @p trace. Without anchors the map is the
 * identity (anchored = 0): right when the trace clock is CLOCK_REALTIME.
 */
MPROF_API void mprof_source_clock_from_trace(mprof_source_clock *out,
                                             const mprof_trace *trace);

/** Map %globaltimer value @p globaltimer_ns onto the trace clock. */
MPROF_API int64_t mprof_source_clock_convert(const mprof_source_clock *clock,
                                             uint64_t globaltimer_ns);

#define MPROF_SOURCE_ALIGNMENT_VERSION 1

/** Result of mprof_source_align(), in the caller's memory. It grows at a
 * minor version (fields are only appended): start from
 * MPROF_SOURCE_ALIGNMENT_INIT, whose version says how many fields it has. */
typedef struct mprof_source_alignment {
  unsigned version;         /**< MPROF_SOURCE_ALIGNMENT_VERSION */
  int64_t offset_ns;        /**< median of (reference - measured) */
  uint64_t error_max_ns;    /**< max |difference - offset| */
  uint64_t error_median_ns; /**< median |difference - offset| */
  double drift_ppm; /**< least-squares slope of the difference over time */
  size_t launches;  /**< pairs used */
  MPROF_GROWABLE_TAIL
} mprof_source_alignment;

#define MPROF_SOURCE_ALIGNMENT_INIT                                            \
  { MPROF_SOURCE_ALIGNMENT_VERSION }

/**
 * The per-run offset from @p count pairs: @p reference_ns[i] is a launch's
 * CUPTI start, @p measured_ns[i] its earliest span start already on the
 * trace clock (mprof_source_clock_convert). offset = median of
 * (reference - measured); the errors are the max and median absolute
 * deviation from it; drift_ppm is informational. Fills the fields of
 * @p out's version and nothing after them. MPROF_EINVAL when @p count is 0,
 * MPROF_EVERSION (nothing written) for a version this library does not
 * know.
 */
MPROF_API int mprof_source_align(mprof_source_alignment *out,
                                 const int64_t *reference_ns,
                                 const int64_t *measured_ns, size_t count);

/* ---- merging ------------------------------------------------------------- */

#define MPROF_SOURCE_MERGE_OPTIONS_VERSION 2

/** Use opts->offset_ns instead of calibrating. */
#define MPROF_SOURCE_MERGE_FIXED_OFFSET 0x1u

typedef struct mprof_source_merge_options {
  unsigned version;  /**< MPROF_SOURCE_MERGE_OPTIONS_VERSION (1 or 2) */
  unsigned flags;    /**< MPROF_SOURCE_MERGE_* */
  int64_t offset_ns; /**< with MPROF_SOURCE_MERGE_FIXED_OFFSET */
  /* Version 2: META pairs to add (key, value, key, value, ...), e.g. the
   * counters of the producer that wrote the .source file; owned by the
   * caller. */
  const char *const *meta;
  size_t meta_count; /**< pairs in @p meta */
  MPROF_GROWABLE_TAIL
} mprof_source_merge_options;

#define MPROF_SOURCE_MERGE_OPTIONS_INIT                                        \
  { MPROF_SOURCE_MERGE_OPTIONS_VERSION, 0, 0, NULL, 0 }

#define MPROF_SOURCE_MERGE_REPORT_VERSION 1

/** What a merge did (also written to META as `source.*`), in the caller's
 * memory: start from MPROF_SOURCE_MERGE_REPORT_INIT. It grows at a minor
 * version, with its version number. */
typedef struct mprof_source_merge_report {
  unsigned version;             /**< MPROF_SOURCE_MERGE_REPORT_VERSION */
  size_t launches;              /**< instrumented launches in the file */
  size_t launches_with_spans;   /**< of those, launches with spans */
  size_t matched_by_order;      /**< matched by kernel name and order */
  size_t matched_by_time;       /**< matched by time */
  size_t unmatched;             /**< with spans but no CUPTI launch */
  size_t spans;                 /**< spans written */
  size_t spans_outside_launch;  /**< spans not inside their launch */
  size_t regions;               /**< regions written */
  uint64_t overflow;            /**< spans lost to a full buffer */
  uint32_t globaltimer_step_ns; /**< from the file's probe; 0 unknown */
  /* The alignment: mprof_source_align()'s fields, copied (a growable struct
   * is never embedded in another). */
  int64_t alignment_offset_ns;        /**< the offset applied */
  uint64_t alignment_error_max_ns;    /**< max |difference - offset| */
  uint64_t alignment_error_median_ns; /**< median |difference - offset| */
  double alignment_drift_ppm;         /**< informational */
  size_t alignment_launches;          /**< launches measured; 0 none */
  int64_t anchor_offset_ns;           /**< trace - realtime at the anchor */
  char method[32]; /**< "name+order", "time", "mixed", "anchor", "fixed" */
  MPROF_GROWABLE_TAIL
} mprof_source_merge_report;

#define MPROF_SOURCE_MERGE_REPORT_INIT                                         \
  { MPROF_SOURCE_MERGE_REPORT_VERSION }

/**
 * Write @p out_path: the trace at @p trace_path plus the spans of the
 * .source file at @p source_path, aligned as described above, with META
 * `source.*` keys and a DROPS counter of kind MPROF_DROP_SPAN_OVERFLOW.
 * @p out_path may be @p trace_path (replaced atomically). @p opts and
 * @p report may be NULL. A trace that already holds merged source spans is
 * refused (MPROF_EINVAL).
 */
MPROF_API int mprof_source_merge(const char *trace_path,
                                 const char *source_path, const char *out_path,
                                 const mprof_source_merge_options *opts,
                                 mprof_source_merge_report *report);

/* ---- a trace from a .source file alone ---------------------------------- */

#define MPROF_SOURCE_BUILD_OPTIONS_VERSION 2

/** What a producer knows beside the .source file (all optional). */
typedef struct mprof_source_build_options {
  unsigned version; /**< MPROF_SOURCE_BUILD_OPTIONS_VERSION */
  /* DEVICES records to write (their `name` field is ignored; names come
   * from @p device_names, same order, may be NULL). Without them each
   * device the launches name gets a record with only its SM count, taken
   * from the highest %smid seen. */
  const mprof_device_record *devices;
  const char *const *device_names;
  size_t device_count;
  /* Per .source kernel (same order and count, or NULL): registers per
   * thread, static shared and local memory (the name fields are ignored). */
  const mprof_kernel_record *kernels;
  size_t kernel_count;
  /* META pairs to add (key, value, ...), e.g. the producer's counters. */
  const char *const *meta;
  size_t meta_count;
  /* Version 2: MEMORY_ACCESSES records to write (`record blocks
   * --memory`). Their `kernel` is an index into the .source file's kernels
   * and memory_devices[i] the CUDA ordinal record i was counted on; the
   * trace's kernel is that name on that device. Records of a kernel that
   * has no recorded launch on that device are left out (META
   * `blocks.memory_dropped`). */
  const mprof_memory_access_record *memory;
  const uint32_t *memory_devices;
  size_t memory_count;
  MPROF_GROWABLE_TAIL
} mprof_source_build_options;

#define MPROF_SOURCE_BUILD_OPTIONS_INIT                                        \
  {                                                                            \
    MPROF_SOURCE_BUILD_OPTIONS_VERSION, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, \
        NULL, 0                                                                \
  }

/**
 * Write the trace @p out_path from the .source file @p source_path alone,
 * for a run that had no CUPTI timeline (the block producer cannot share a
 * process with CUPTI): every launch of the file with spans becomes a
 * LAUNCHES record whose start and end are its earliest span start and
 * latest span end (launches without spans, e.g. those that did not fit the
 * device buffer, are only counted: META `source.launches_without_spans`),
 * on the spans' own clock (META
 * `clock` = `globaltimer`: %globaltimer ns, UNIX epoch), so spans and
 * launches need no alignment (`source.alignment_method` = `same clock`,
 * error 0). Streams, dynamic shared memory and clusters come from the
 * file's launch extensions (version 1.1); without them every launch of a
 * device sits on one stream named "all streams". META `capture.mode` =
 * `blocks`, the `source.*` counts, the option's pairs; DROPS span overflow from
 * the file. Returns 0 or a negative mprof_status with mprof_error_last() set.
 */
MPROF_API int mprof_source_build_trace(const char *source_path,
                                       const char *out_path,
                                       const mprof_source_build_options *opts);

/**
 * The identifier of the kernel named by @p name into @p out (NUL-terminated,
 * at most @p size bytes): for an Itanium-mangled name (`_Z...`) the last
 * unqualified name (`_ZN2ns6kernelEv` → "kernel"), for a demangled one the
 * name before its parameters without namespaces or template arguments,
 * else @p name itself. Returns 0, or MPROF_EINVAL when it does not fit.
 */
MPROF_API int mprof_source_kernel_basename(char *out, size_t size,
                                           const char *name);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_SOURCE_H */
