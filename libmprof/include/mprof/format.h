/*
 * mprof — the .mprof v1 on-disk format.
 *
 * This header mirrors docs/FORMAT.md exactly. Every record is fixed-size,
 * little-endian, naturally aligned and pinned by a static assertion, so a
 * reader can use the records in place from an mmap. Reserved fields are
 * written as zero and checked by the reader.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_FORMAT_H
#define MPROF_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__cplusplus)
#define MPROF_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define MPROF_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
/* C99: a negative array size fails the build just as well. */
#define MPROF_STATIC_ASSERT_JOIN2(a, b) a##b
#define MPROF_STATIC_ASSERT_JOIN(a, b) MPROF_STATIC_ASSERT_JOIN2(a, b)
#define MPROF_STATIC_ASSERT(cond, msg)                                         \
  typedef char MPROF_STATIC_ASSERT_JOIN(mprof_static_assert_,                  \
                                        __LINE__)[(cond) ? 1 : -1]
#endif

/** The eight bytes every .mprof file starts with. */
#define MPROF_FORMAT_MAGIC "MPROF\x00\r\n"
#define MPROF_FORMAT_MAGIC_SIZE 8
#define MPROF_FORMAT_VERSION_MAJOR 1
#define MPROF_FORMAT_VERSION_MINOR 6

/** String reference 0 is always the empty string. */
#define MPROF_STR_NONE 0u
/** An index field that refers to nothing. */
#define MPROF_INDEX_NONE 0xffffffffu

/** File header: at offset 0, 64 bytes. */
typedef struct mprof_file_header {
  char magic[8];             /**< MPROF_FORMAT_MAGIC */
  uint16_t version_major;    /**< a reader refuses a major it does not know */
  uint16_t version_minor;    /**< additions only; older readers skip them */
  uint32_t flags;            /**< MPROF_FILE_FLAG_*; unknown bits are refused */
  uint64_t directory_offset; /**< byte offset of the section directory */
  uint32_t section_count;    /**< entries in the directory */
  uint32_t directory_checksum; /**< CRC-32C of the directory bytes */
  uint64_t file_size;          /**< total size of the file in bytes */
  uint32_t header_checksum;    /**< CRC-32C of bytes 0..39 of this header */
  uint8_t reserved[20];        /**< zero */
} mprof_file_header;
MPROF_STATIC_ASSERT(sizeof(mprof_file_header) == 64, "header is 64 bytes");

/** Launch records are sorted by (stream, start): no index is needed. */
#define MPROF_FILE_FLAG_LAUNCHES_SORTED 0x1u
/** The file is a capture being streamed (or cut short): after the header
 *  come chunks, not sections and a directory. See "Streamed files" in
 *  docs/FORMAT.md. */
#define MPROF_FILE_FLAG_STREAMED 0x2u
#define MPROF_FILE_FLAGS_KNOWN 0x3u

/** Section types. Values are pinned; readers skip types they do not know. */
typedef enum mprof_section_type {
  MPROF_SECTION_STRINGS = 1,  /**< NUL-terminated UTF-8; refs are offsets */
  MPROF_SECTION_META = 2,     /**< mprof_meta_record */
  MPROF_SECTION_DEVICES = 3,  /**< mprof_device_record */
  MPROF_SECTION_STREAMS = 4,  /**< mprof_stream_record */
  MPROF_SECTION_KERNELS = 5,  /**< mprof_kernel_record */
  MPROF_SECTION_SHAPES = 6,   /**< mprof_shape_record */
  MPROF_SECTION_LAUNCHES = 7, /**< mprof_launch_record */
  MPROF_SECTION_MEMOPS = 8,   /**< mprof_memop_record */
  MPROF_SECTION_RANGES = 9,   /**< mprof_range_record */
  MPROF_SECTION_REGIONS = 10, /**< mprof_region_record */
  MPROF_SECTION_SPANS = 11,   /**< mprof_span_record */
  MPROF_SECTION_STALL_REASONS = 12, /**< mprof_stall_reason_record */
  MPROF_SECTION_PC_SAMPLES = 13,    /**< mprof_pc_sample_record */
  MPROF_SECTION_CUBINS = 14,        /**< mprof_cubin_record */
  MPROF_SECTION_BLOBS = 15,      /**< raw bytes referenced by cubin records */
  MPROF_SECTION_DROPS = 16,      /**< mprof_drop_record */
  MPROF_SECTION_PM_METRICS = 17, /**< mprof_pm_metric_record */
  MPROF_SECTION_PM_SAMPLES = 18, /**< mprof_pm_sample_record */
  MPROF_SECTION_API_CALLS = 19,  /**< mprof_api_call_record */
  MPROF_SECTION_MEMORY_ACCESSES = 20, /**< mprof_memory_access_record */
  MPROF_SECTION_PROCESSES = 21,       /**< mprof_process_record */
  /** mprof_range_record: the NVTX ranges open at a checkpoint. Streamed
   *  files only, as SNAPSHOT chunks; a reader turns the last one into
   *  RANGES records flagged MPROF_RANGE_FLAG_OPEN. */
  MPROF_SECTION_OPEN_RANGES = 22,
  MPROF_SECTION_CAPTURE = 23, /**< mprof_capture_record */
  /** Source files of the sampled kernels: mprof_source_entry headers, each
   *  followed by its path and its text (bytes; format 1.5). */
  MPROF_SECTION_SOURCES = 24,
  /** The Megakernels MKPROF1.2 file a trace was imported from, verbatim
   *  (bytes; format 1.6), so that `mprof mkprof export` gives it back
   *  whole: names, params, event types, controller events and every
   *  event, which the spans do not hold. */
  MPROF_SECTION_MKPROF = 25,
  MPROF_SECTION_TYPE_MAX_ = 25
} mprof_section_type;

/** Directory entry: 32 bytes, one per section, at directory_offset. */
typedef struct mprof_section_entry {
  uint32_t type;        /**< mprof_section_type */
  uint32_t version;     /**< record layout version of this section (1) */
  uint64_t offset;      /**< byte offset, 8-byte aligned */
  uint64_t length;      /**< bytes; a multiple of record_size */
  uint32_t record_size; /**< bytes per record; 1 for STRINGS and BLOBS */
  uint32_t checksum;    /**< CRC-32C of the section's bytes */
} mprof_section_entry;
MPROF_STATIC_ASSERT(sizeof(mprof_section_entry) == 32, "entry is 32 bytes");

/** META: key/value pairs, both string refs. Keys are documented in FORMAT.md.
 */
typedef struct mprof_meta_record {
  uint32_t key;
  uint32_t value;
} mprof_meta_record;
MPROF_STATIC_ASSERT(sizeof(mprof_meta_record) == 8, "meta is 8 bytes");

/** The most SMs a DEVICES record may claim: a reader refuses a larger
 *  `sm_count` (the largest GPU of 2026 has 148; the views size their SM
 *  rows by it). 0 is allowed: not known. */
#define MPROF_DEVICE_SM_MAX 1024u

/** DEVICES: one per GPU, indexed by `device` fields elsewhere. */
typedef struct mprof_device_record {
  uint32_t id;   /**< CUDA device ordinal */
  uint32_t name; /**< string ref */
  uint32_t cc_major;
  uint32_t cc_minor;
  uint32_t sm_count; /**< 0 unknown; at most MPROF_DEVICE_SM_MAX */
  uint32_t warp_size;
  uint32_t max_threads_per_block;
  uint32_t max_threads_per_sm;
  uint32_t max_blocks_per_sm;
  uint32_t max_warps_per_sm;
  uint32_t max_regs_per_block;
  uint32_t max_regs_per_sm;
  uint32_t max_shared_per_block; /**< bytes, opt-in maximum */
  uint32_t max_shared_per_sm;    /**< bytes */
  uint32_t core_clock_khz;
  uint32_t memory_clock_khz;
  uint32_t memory_bus_width; /**< bits */
  uint32_t l2_size;          /**< bytes */
  uint64_t global_memory;    /**< bytes */
  uint32_t uuid_lo;          /**< first 4 bytes of the device UUID */
  uint32_t reserved[3];
} mprof_device_record;
MPROF_STATIC_ASSERT(sizeof(mprof_device_record) == 96, "device is 96 bytes");

/** STREAMS: every (device, context, stream) a record refers to. */
typedef struct mprof_stream_record {
  uint32_t device;     /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t context_id; /**< CUPTI context id */
  uint32_t stream_id;  /**< CUPTI stream id */
  uint32_t name;       /**< string ref; may be empty */
} mprof_stream_record;
MPROF_STATIC_ASSERT(sizeof(mprof_stream_record) == 16, "stream is 16 bytes");

/** KERNELS: one per distinct kernel function. */
typedef struct mprof_kernel_record {
  uint32_t mangled_name;     /**< string ref */
  uint32_t demangled_name;   /**< string ref; empty until demangled */
  uint64_t cubin_crc;        /**< cuptiGetCubinCrc of its module; 0 unknown */
  uint32_t function_index;   /**< .symtab index in the cubin; NONE unknown */
  uint32_t device;           /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t registers;        /**< per thread */
  uint32_t static_shared;    /**< bytes */
  uint32_t local_per_thread; /**< bytes */
  uint32_t reserved;
} mprof_kernel_record;
MPROF_STATIC_ASSERT(sizeof(mprof_kernel_record) == 40, "kernel is 40 bytes");

/** SHAPES: a distinct launch configuration of a kernel; launches share it. */
typedef struct mprof_shape_record {
  uint32_t kernel; /**< index into KERNELS */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t cluster[3];     /**< zeros when no cluster was requested */
  uint32_t dynamic_shared; /**< bytes */
  uint32_t launch_type;    /**< 0 regular, 1 cooperative (single device), 2
                              cooperative (multi) */
} mprof_shape_record;
MPROF_STATIC_ASSERT(sizeof(mprof_shape_record) == 48, "shape is 48 bytes");

/** LAUNCHES: one per kernel execution, 40 bytes. */
typedef struct mprof_launch_record {
  uint64_t start;          /**< ns, trace clock */
  uint64_t end;            /**< ns, trace clock; >= start */
  uint32_t shape;          /**< index into SHAPES */
  uint32_t stream;         /**< index into STREAMS */
  uint32_t correlation_id; /**< CUPTI correlation id; 0 unknown */
  uint32_t graph_id;       /**< 0 when not launched from a graph */
  uint64_t graph_node_id;  /**< 0 when not launched from a graph */
} mprof_launch_record;
MPROF_STATIC_ASSERT(sizeof(mprof_launch_record) == 40, "launch is 40 bytes");

typedef enum mprof_memop_kind {
  MPROF_MEMOP_MEMCPY = 1,
  MPROF_MEMOP_MEMSET = 2
} mprof_memop_kind;

/** Copy directions for MEMCPY records (CUPTI's memcpy kinds, renamed). */
typedef enum mprof_copy_kind {
  MPROF_COPY_UNKNOWN = 0,
  MPROF_COPY_HTOD = 1,
  MPROF_COPY_DTOH = 2,
  MPROF_COPY_DTOD = 3,
  MPROF_COPY_HTOH = 4,
  MPROF_COPY_PTOP = 5
} mprof_copy_kind;

/** MEMOPS: memcpy and memset activity. */
typedef struct mprof_memop_record {
  uint64_t start;
  uint64_t end;
  uint64_t bytes;
  uint32_t stream; /**< index into STREAMS */
  uint32_t correlation_id;
  uint16_t kind;       /**< mprof_memop_kind */
  uint16_t copy_kind;  /**< mprof_copy_kind; 0 for memset */
  uint32_t value;      /**< memset value; 0 for memcpy */
  uint32_t src_device; /**< device ordinal or MPROF_INDEX_NONE (host) */
  uint32_t dst_device; /**< device ordinal or MPROF_INDEX_NONE (host) */
} mprof_memop_record;
MPROF_STATIC_ASSERT(sizeof(mprof_memop_record) == 48, "memop is 48 bytes");

/** Range flags. */
/** Still open when the capture was cut (or ended): `end` is the time of the
 *  cut (the last checkpoint, or the last timestamp seen at exit), not the
 *  range's own end. Format 1.4; older files have 0 here. */
#define MPROF_RANGE_FLAG_OPEN 0x1u

/** RANGES: NVTX push/pop or start/end ranges on a host thread. */
typedef struct mprof_range_record {
  uint64_t start;
  uint64_t end;
  uint32_t name;      /**< string ref */
  uint32_t domain;    /**< string ref; empty = default domain */
  uint32_t thread_id; /**< host thread id */
  uint32_t depth;     /**< nesting depth at push, 0 for start/end ranges */
  uint32_t color;     /**< 0xAARRGGBB; 0 when none was given */
  uint32_t flags;     /**< MPROF_RANGE_FLAG_*; reserved (0) before 1.4 */
} mprof_range_record;
MPROF_STATIC_ASSERT(sizeof(mprof_range_record) == 40, "range is 40 bytes");

/** Which CUDA API an API_CALLS record's function belongs to. */
typedef enum mprof_api_kind {
  MPROF_API_RUNTIME = 1, /**< cudaLaunchKernel, cudaMemcpyAsync, ... */
  MPROF_API_DRIVER = 2   /**< cuLaunchKernel, cuMemcpyAsync, ... */
} mprof_api_kind;

/** API_CALLS: the host call that issued a launch, copy, memset or graph
 *  launch. `correlation_id` is the one of the LAUNCHES/MEMOPS record it
 *  issued; `thread_id` is in the same id space as RANGES `thread_id`, so
 *  the ranges and the calls of one thread line up. */
typedef struct mprof_api_call_record {
  uint64_t start; /**< API entry, trace clock */
  uint64_t end;   /**< API exit, trace clock */
  uint32_t correlation_id;
  uint32_t thread_id; /**< host thread id, as RANGES thread_id */
  uint32_t name;      /**< string ref, e.g. "cudaLaunchKernel" */
  uint32_t kind;      /**< mprof_api_kind: 1 runtime, 2 driver */
} mprof_api_call_record;
MPROF_STATIC_ASSERT(sizeof(mprof_api_call_record) == 32,
                    "api call is 32 bytes");

/** MEMORY_ACCESSES flags: what the instruction's accesses were (the
 *  Compute Sanitizer's Sanitizer_DeviceMemoryFlags, same values). */
#define MPROF_MEMORY_READ 0x1u
#define MPROF_MEMORY_WRITE 0x2u
#define MPROF_MEMORY_ATOMIC_SYSTEM 0x4u /**< a system-scoped atomic */
#define MPROF_MEMORY_PREFETCH 0x8u
#define MPROF_MEMORY_FLAGS_KNOWN 0xfu

/** MEMORY_ACCESSES: the global-memory accesses of one instruction of a
 *  kernel, counted on the device over the recorded launches (`mprof record
 *  blocks --memory`). Sector efficiency = bytes / (32 * sectors). */
typedef struct mprof_memory_access_record {
  uint32_t kernel;          /**< index into KERNELS */
  uint32_t pc_offset;       /**< bytes into the function, as PC_SAMPLES */
  uint32_t flags;           /**< MPROF_MEMORY_* */
  uint32_t access_size;     /**< largest access of one thread, bytes */
  uint64_t warp_accesses;   /**< executions of the instruction by a warp */
  uint64_t thread_accesses; /**< ... by a thread (active lanes) */
  uint64_t bytes;           /**< bytes the threads asked for */
  uint64_t sectors;         /**< distinct 32-byte sectors each warp execution
                                 touched, summed */
} mprof_memory_access_record;
MPROF_STATIC_ASSERT(sizeof(mprof_memory_access_record) == 48,
                    "memory access is 48 bytes");

/** How a process ended (mprof_process_record.exit_kind). */
typedef enum mprof_exit_kind {
  MPROF_EXIT_UNKNOWN = 0, /**< still running when the trace was cut, or not
                               knowable */
  MPROF_EXIT_STATUS = 1,  /**< exited; exit_value is its status (0..255) */
  MPROF_EXIT_SIGNAL = 2   /**< killed; exit_value is the signal number */
} mprof_exit_kind;

/** PROCESSES: one per process whose records the trace holds (one for a
 *  producer's trace, one per process of a merged set). A process owns the
 *  contiguous STREAMS records [first_stream, first_stream + stream_count)
 *  and DEVICES records [first_device, first_device + device_count). */
typedef struct mprof_process_record {
  uint64_t start;        /**< ns, trace clock: the capture began; 0 unknown */
  uint64_t end;          /**< ns, trace clock: the capture ended; 0 unknown */
  int64_t clock_shift;   /**< ns a merge moved its times by; 0 */
  uint32_t pid;          /**< 0 unknown */
  uint32_t ppid;         /**< MPROF_INDEX_NONE unknown */
  uint32_t rank;         /**< MPROF_INDEX_NONE: not launched as a rank */
  uint32_t local_rank;   /**< MPROF_INDEX_NONE unknown */
  uint32_t host;         /**< string ref; empty unknown */
  uint32_t cmdline;      /**< string ref: arguments joined by spaces */
  uint32_t path;         /**< string ref: the trace a merge took it from;
                              empty: this file */
  uint32_t exit_kind;    /**< mprof_exit_kind */
  uint32_t exit_value;   /**< exit status or signal number; 0 unknown */
  uint32_t first_stream; /**< index into STREAMS */
  uint32_t stream_count;
  uint32_t first_device; /**< index into DEVICES */
  uint32_t device_count;
  uint32_t reserved[3]; /**< zero */
} mprof_process_record;
MPROF_STATIC_ASSERT(sizeof(mprof_process_record) == 88, "process is 88 bytes");

/** What opened a capture window (mprof_capture_record.trigger). */
typedef enum mprof_capture_trigger {
  MPROF_CAPTURE_WHOLE = 0,        /**< the run itself (--delay, --duration,
                                       --max-size only) */
  MPROF_CAPTURE_PROFILER_API = 1, /**< cudaProfilerStart/Stop pairs */
  MPROF_CAPTURE_NVTX = 2,         /**< NVTX ranges of one name */
  MPROF_CAPTURE_KERNELS = 3       /**< --kernel-skip/--kernel-count */
} mprof_capture_trigger;

/** Why a capture window ended (mprof_capture_record.end_reason). */
typedef enum mprof_capture_end {
  MPROF_CAPTURE_END_OPEN = 0,         /**< still open when the trace was cut */
  MPROF_CAPTURE_END_EXIT = 1,         /**< the program ended */
  MPROF_CAPTURE_END_RANGE_COUNT = 2,  /**< --range-count ranges recorded */
  MPROF_CAPTURE_END_KERNEL_COUNT = 3, /**< --kernel-count launches recorded */
  MPROF_CAPTURE_END_DURATION = 4,     /**< --duration elapsed */
  MPROF_CAPTURE_END_MAX_SIZE = 5,     /**< the file reached --max-size */
  MPROF_CAPTURE_END_NEVER_OPENED = 6  /**< the program ended first */
} mprof_capture_end;

/** CAPTURE: the part of a process's run its records cover, one per process
 *  recorded with a window (none: the whole run). Outside [start, end] and
 *  between the pieces nothing but code and metadata was recorded. */
typedef struct mprof_capture_record {
  uint64_t start;      /**< ns, trace clock: recording first on; 0 never */
  uint64_t end;        /**< ns, trace clock: last off; 0 still on */
  uint64_t delay;      /**< ns asked for (--delay); 0 none */
  uint64_t duration;   /**< ns asked for (--duration); 0 none */
  uint64_t max_bytes;  /**< asked for (--max-size); 0 none */
  uint64_t skip;       /**< ranges or launches asked to skip */
  uint64_t count;      /**< ranges or launches asked to record; 0 all */
  uint64_t recorded;   /**< ranges or matching launches recorded */
  uint64_t seen;       /**< matching ranges or launches after the delay */
  uint32_t process;    /**< index into PROCESSES */
  uint32_t trigger;    /**< mprof_capture_trigger */
  uint32_t end_reason; /**< mprof_capture_end */
  uint32_t pieces;     /**< times recording turned on */
  uint32_t spec;       /**< string ref: the range ("nvtx:step@*") or the
                            kernel regex; empty none */
  uint32_t reserved;   /**< zero */
} mprof_capture_record;
MPROF_STATIC_ASSERT(sizeof(mprof_capture_record) == 96, "capture is 96 bytes");

/** Region roles, after the Megakernels rows. */
typedef enum mprof_region_role {
  MPROF_ROLE_OTHER = 0,
  MPROF_ROLE_SEPARATOR = 1,
  MPROF_ROLE_LOADER = 2,
  MPROF_ROLE_CONSUMER = 3,
  MPROF_ROLE_STORER = 4
} mprof_region_role;

/** REGIONS: named regions that activity spans refer to. */
typedef struct mprof_region_record {
  uint32_t name;  /**< string ref */
  uint32_t color; /**< 0xAARRGGBB; 0 = choose one */
  uint32_t role;  /**< mprof_region_role */
  uint32_t reserved;
} mprof_region_record;
MPROF_STATIC_ASSERT(sizeof(mprof_region_record) == 16, "region is 16 bytes");

/** Span flags. */
#define MPROF_SPAN_FLAG_WARP 0x1u /**< recorded per warp (else per block) */
#define MPROF_SPAN_FLAG_OPEN 0x2u /**< end never recorded; end = launch end */

/** SPANS: activity measured inside a kernel, on the trace clock. */
typedef struct mprof_span_record {
  uint64_t start;
  uint64_t end;
  uint32_t launch;  /**< index into LAUNCHES, or MPROF_INDEX_NONE */
  uint32_t sm;      /**< %smid */
  uint32_t block;   /**< linear block index */
  uint32_t warp;    /**< warp within the block; NONE for block spans */
  uint32_t region;  /**< index into REGIONS */
  uint32_t flags;   /**< MPROF_SPAN_FLAG_* */
  uint64_t payload; /**< user value */
} mprof_span_record;
MPROF_STATIC_ASSERT(sizeof(mprof_span_record) == 48, "span is 48 bytes");

/** STALL_REASONS: the table a device reported, in its index order. */
typedef struct mprof_stall_reason_record {
  uint32_t device; /**< index into DEVICES */
  uint32_t index;  /**< CUPTI stall reason index */
  uint32_t name; /**< string ref, e.g. smsp__pcsamp_warps_issue_stalled_wait */
  uint32_t reserved;
} mprof_stall_reason_record;
MPROF_STATIC_ASSERT(sizeof(mprof_stall_reason_record) == 16,
                    "stall reason is 16 bytes");

/** PC_SAMPLES: samples of one stall reason at one PC, as CUPTI delivered. */
typedef struct mprof_pc_sample_record {
  uint64_t cubin_crc;
  uint32_t function_name;  /**< string ref (mangled) */
  uint32_t function_index; /**< .symtab index */
  uint32_t pc_offset;      /**< byte offset inside the function */
  uint32_t stall_reason;   /**< CUPTI stall reason index */
  uint32_t samples;
  uint32_t correlation_id; /**< 0 in continuous mode */
  uint32_t device;         /**< index into DEVICES */
  uint32_t drain;          /**< sequence number of the drain that read it */
} mprof_pc_sample_record;
MPROF_STATIC_ASSERT(sizeof(mprof_pc_sample_record) == 40,
                    "pc sample is 40 bytes");

/** Cubin flags: what of the module the trace kept. */
#define MPROF_CUBIN_KEPT_WHOLE 0x1u /**< blob holds the whole ELF */
#define MPROF_CUBIN_OMITTED 0x2u    /**< no blob: nothing in it was used */
/** blob is the ELF with only the used functions' code: the sections of the
 * others are SHT_NOBITS (indices and offsets in kept sections unchanged) */
#define MPROF_CUBIN_TRIMMED 0x4u

/** CUBINS: captured module code, deduplicated by CRC. */
typedef struct mprof_cubin_record {
  uint64_t crc;         /**< cuptiGetCubinCrc */
  uint64_t blob_offset; /**< byte offset into BLOBS */
  uint64_t blob_size;   /**< bytes in BLOBS; 0 when omitted */
  uint64_t module_size; /**< size of the module as loaded */
  uint32_t device;      /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint32_t flags;       /**< MPROF_CUBIN_* */
} mprof_cubin_record;
MPROF_STATIC_ASSERT(sizeof(mprof_cubin_record) == 40, "cubin is 40 bytes");

/** A SOURCES entry's state. */
#define MPROF_SOURCE_ENTRY_EMBEDDED 1u /**< its text follows its path */
/** Named by a line table but not readable when embedding: no text. */
#define MPROF_SOURCE_ENTRY_MISSING 2u

/** How a SOURCES entry's text is stored. */
#define MPROF_SOURCE_STORED_PLAIN 0u /**< as it is */
#define MPROF_SOURCE_STORED_ZLIB 1u  /**< a zlib stream (RFC 1950) */

/** SOURCES: a run of entries, each this header, then path_size bytes of
 * path (no NUL), then stored_size bytes of text, then zero bytes up to
 * entry_size (a multiple of 8). */
typedef struct mprof_source_entry {
  uint32_t entry_size;  /**< bytes of the whole entry, header included */
  uint32_t path_size;   /**< bytes of the path, as the line table names it */
  uint32_t state;       /**< MPROF_SOURCE_ENTRY_* */
  uint32_t stored;      /**< MPROF_SOURCE_STORED_* */
  uint64_t size;        /**< bytes of the text; 0 when missing */
  uint64_t stored_size; /**< bytes stored; 0 when missing */
  uint32_t crc32c;      /**< CRC-32C of the text; 0 when missing */
  uint32_t reserved;    /**< zero */
} mprof_source_entry;
MPROF_STATIC_ASSERT(sizeof(mprof_source_entry) == 40,
                    "source entry is 40 bytes");

/** What a drop counter counts. Values are pinned. */
typedef enum mprof_drop_kind {
  MPROF_DROP_ACTIVITY_RECORDS = 1, /**< cuptiActivityGetNumDroppedRecords */
  MPROF_DROP_ACTIVITY_NO_TIMESTAMP = 2, /**< records with start or end 0 */
  MPROF_DROP_PC_HW_BUFFER_FULL = 3,   /**< drains that saw hardwareBufferFull */
  MPROF_DROP_PC_DROPPED_SAMPLES = 4,  /**< droppedSamples */
  MPROF_DROP_PC_NON_USER_SAMPLES = 5, /**< nonUsrKernelsTotalSamples (info) */
  MPROF_DROP_SPAN_OVERFLOW = 6,       /**< device span buffer overflow */
  MPROF_DROP_WRITER_RECORDS = 7,      /**< records the writer could not store */
  MPROF_DROP_PC_TOTAL_SAMPLES = 8,    /**< totalSamples (info, for shares) */
  MPROF_DROP_PM_OVERFLOW =
      9, /**< PM decodes that found the buffer overflowed */
  MPROF_DROP_PM_SAMPLES = 10, /**< PM samples decoded but not stored */
  MPROF_DROP_KIND_MAX_ = 10
} mprof_drop_kind;

/** DROPS: one counter per (kind, device). */
typedef struct mprof_drop_record {
  uint32_t kind;   /**< mprof_drop_kind */
  uint32_t device; /**< index into DEVICES, or MPROF_INDEX_NONE */
  uint64_t count;
} mprof_drop_record;
MPROF_STATIC_ASSERT(sizeof(mprof_drop_record) == 16, "drop is 16 bytes");

/** Columns of a PM sample: the most counters one device is sampled with. */
#define MPROF_PM_MAX_METRICS 12

/** PM_METRICS: the counters a device was sampled with, one per column. */
typedef struct mprof_pm_metric_record {
  uint32_t device;      /**< index into DEVICES */
  uint32_t column;      /**< index into mprof_pm_sample_record.value */
  uint32_t name;        /**< string ref: the CUPTI metric name */
  uint32_t unit;        /**< string ref: e.g. "percent", "byte/second" */
  uint64_t interval_ns; /**< sampling interval the device was set to */
  uint64_t reserved;
} mprof_pm_metric_record;
MPROF_STATIC_ASSERT(sizeof(mprof_pm_metric_record) == 32,
                    "pm metric is 32 bytes");

/** PM_SAMPLES: counter values of one device averaged over [start, end). */
typedef struct mprof_pm_sample_record {
  uint64_t start;  /**< ns, trace clock */
  uint64_t end;    /**< ns, trace clock; >= start */
  uint32_t device; /**< index into DEVICES */
  uint32_t reserved;
  float value[MPROF_PM_MAX_METRICS]; /**< by column; NaN = not measured */
} mprof_pm_sample_record;
MPROF_STATIC_ASSERT(sizeof(mprof_pm_sample_record) == 72,
                    "pm sample is 72 bytes");

/* ---- streamed files (MPROF_FILE_FLAG_STREAMED) ----------------------------
 */

/** The four bytes every chunk starts with: "MPCK". */
#define MPROF_CHUNK_MAGIC 0x4b43504du

/** What a chunk holds. Values are pinned. */
typedef enum mprof_chunk_kind {
  /** Bytes appended to a section (its records continue). */
  MPROF_CHUNK_APPEND = 1,
  /** The whole content of a section, standing for it until an APPEND chunk
   *  of the same section is committed; a later SNAPSHOT replaces it. */
  MPROF_CHUNK_SNAPSHOT = 2,
  /** A commit point: every chunk before it belongs to the capture. */
  MPROF_CHUNK_CHECKPOINT = 3
} mprof_chunk_kind;

/** Chunk header: 32 bytes, followed by `length` bytes of payload and zero
 *  padding to the next 8-byte boundary. */
typedef struct mprof_chunk_header {
  uint32_t magic;           /**< MPROF_CHUNK_MAGIC */
  uint32_t kind;            /**< mprof_chunk_kind */
  uint32_t section;         /**< mprof_section_type; 0 for checkpoints */
  uint32_t record_size;     /**< the section's record size */
  uint64_t length;          /**< payload bytes */
  uint32_t checksum;        /**< CRC-32C of the payload */
  uint32_t header_checksum; /**< CRC-32C of bytes 0..27 of this header */
} mprof_chunk_header;
MPROF_STATIC_ASSERT(sizeof(mprof_chunk_header) == 32, "chunk is 32 bytes");

/** Payload of a CHECKPOINT chunk. */
typedef struct mprof_checkpoint_record {
  uint32_t sequence;   /**< 1, 2, ... */
  uint32_t file_flags; /**< header flags of the file as of this point */
  uint64_t time;       /**< trace-clock ns when it was written; 0 unknown */
  uint32_t signal;     /**< signal that forced it (0: periodic or final) */
  uint32_t final;      /**< 1: written by a writer that finished */
  uint64_t reserved;   /**< zero */
} mprof_checkpoint_record;
MPROF_STATIC_ASSERT(sizeof(mprof_checkpoint_record) == 32,
                    "checkpoint is 32 bytes");

#ifdef __cplusplus
}
#endif

#endif /* MPROF_FORMAT_H */
