/*
 * mprof — MKPROF1.2, the file format of the Megakernels profiler viewer.
 *
 * Layout (all little-endian; research/INTRAKERNEL-TOOLS.md §1):
 *   "MKPROF1.2\n"
 *   a compact JSON config with no length prefix: its end is the brace that
 *     closes the first one (found honouring JSON strings and escapes)
 *   zero padding to a multiple of 4 bytes from the start of the file
 *   int32  instructions[P * I * instruction_length]   word 0 = opcode
 *   uint32 starts[P * I], ends[P * I]                  ns
 *   uint32 events[P * I * timing_length]                if has_events_flag
 * with P = total_processors (SMs of all GPUs) and I = max_instructions. An
 * event slot packs `type = raw & 0xF` and `time = (raw >> 4) * 16` ns;
 * the functional units' special_events slots hold raw ns and give each
 * unit's bar; an event range is read up to its first zero slot.
 *
 * The reader checks every size against the file and fails with
 * "FILE: at byte N: what is wrong". The exporter writes the spans of a
 * .mprof trace in this format so the Megakernels viewer can show them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_MKPROF_H
#define MPROF_MKPROF_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPROF_MKPROF_MAGIC "MKPROF1.2\n"
#define MPROF_MKPROF_MAGIC_SIZE 10

typedef struct mprof_mkprof mprof_mkprof;

/* The structs up to mprof_mkprof_param_value decode MKPROF1.2, a format of
 * its own that does not change, and some are filled in the caller's memory
 * (arrays of events and parameters), so they are fixed (docs/ABI.md): they
 * never grow. */

/** The numbers of the config. */
typedef struct mprof_mkprof_layout {
  uint32_t num_gpus;
  uint32_t total_processors;   /**< P */
  uint32_t max_instructions;   /**< I */
  uint32_t instruction_length; /**< int32 words per instruction */
  uint32_t timing_length;      /**< event slots per instruction */
  int has_events;              /**< has_events_flag */
  int64_t time_unit_flag;      /**< as written; 0 when absent */
  uint32_t main_unit;     /**< index into units; MPROF_INDEX_NONE when absent */
  uint32_t sms_per_gpu;   /**< ceil(P / num_gpus), as the viewer computes */
  uint64_t config_offset; /**< byte offset of the JSON */
  uint64_t config_size;   /**< its bytes */
  uint64_t data_offset;   /**< byte offset of the instructions array */
} mprof_mkprof_layout;

/** A named instruction parameter: word @p position of the instruction. */
typedef struct mprof_mkprof_param {
  uint32_t position;
  const char *name;
} mprof_mkprof_param;

typedef struct mprof_mkprof_instruction_type {
  int64_t id; /**< the opcode */
  const char *name;
  uint32_t color; /**< 0xAARRGGBB; 0 when none was given */
  size_t param_count;
  const mprof_mkprof_param *params;
} mprof_mkprof_instruction_type;

typedef struct mprof_mkprof_unit {
  int64_t id;
  const char *name;
  uint32_t event_start;   /**< first slot of its event range */
  uint32_t event_end;     /**< last slot (inclusive) */
  int has_special;        /**< special_events given */
  uint32_t special_start; /**< slot of the bar's start (raw ns) */
  uint32_t special_end;   /**< slot of the bar's end (raw ns) */
  double height_multiplier;
  uint32_t role; /**< mprof_region_role guessed from the name */
} mprof_mkprof_unit;

/** An entry of event_types (id = packed type) or of controller_events
 * (id = event slot). */
typedef struct mprof_mkprof_event_type {
  int64_t id;
  const char *name;
  uint32_t color;
  int is_error; /**< the name contains "error", as the viewer tests */
} mprof_mkprof_event_type;

/** One instruction slot of one processor. */
typedef struct mprof_mkprof_instruction {
  uint32_t processor;
  uint32_t gpu; /**< processor / sms_per_gpu */
  uint32_t sm;  /**< processor % sms_per_gpu */
  uint32_t index;
  int32_t opcode;
  uint32_t start, end;  /**< ns */
  int valid;            /**< start > 0 and end > start (the viewer's test) */
  const int32_t *words; /**< instruction_length words; owned by the file */
} mprof_mkprof_instruction;

/** A decoded event. */
typedef struct mprof_mkprof_event {
  uint32_t slot;    /**< index in the instruction's timing slots */
  uint32_t type;    /**< raw & 0xF */
  uint64_t time_ns; /**< (raw >> 4) * 16 */
} mprof_mkprof_event;

/** A decoded parameter value. */
typedef struct mprof_mkprof_param_value {
  const char *name;
  uint32_t position;
  int32_t value;
} mprof_mkprof_param_value;

/**
 * Read and validate @p path. On success *out is the caller's; free it with
 * mprof_mkprof_free(). Errors: MPROF_EFORMAT (and MPROF_EVERSION for
 * another MKPROF version) with "PATH: at byte N: ..." in mprof_error_last().
 */
MPROF_API int mprof_mkprof_open(mprof_mkprof **out, const char *path);

/** Like mprof_mkprof_open() on @p size bytes at @p data (copied); @p name
 * is used in messages. */
MPROF_API int mprof_mkprof_parse(mprof_mkprof **out, const void *data,
                                 size_t size, const char *name);

/** Free @p m. NULL is a no-op. */
MPROF_API void mprof_mkprof_free(mprof_mkprof *m);

/** The config's numbers; owned by @p m. */
MPROF_API const mprof_mkprof_layout *
mprof_mkprof_get_layout(const mprof_mkprof *m);

/** The JSON config text (not NUL-terminated; @p size bytes). */
MPROF_API const char *mprof_mkprof_config_json(const mprof_mkprof *m,
                                               size_t *size);

/** format_version from the config, or "" ; owned by @p m. */
MPROF_API const char *mprof_mkprof_format_version(const mprof_mkprof *m);

/* The config tables, in the order the JSON lists them; owned by @p m. */
MPROF_API const mprof_mkprof_instruction_type *
mprof_mkprof_instruction_types(const mprof_mkprof *m, size_t *count);
MPROF_API const mprof_mkprof_unit *mprof_mkprof_units(const mprof_mkprof *m,
                                                      size_t *count);
MPROF_API const mprof_mkprof_event_type *
mprof_mkprof_event_types(const mprof_mkprof *m, size_t *count);
MPROF_API const mprof_mkprof_event_type *
mprof_mkprof_controller_events(const mprof_mkprof *m, size_t *count);

/** The instruction type with id @p opcode, or NULL. */
MPROF_API const mprof_mkprof_instruction_type *
mprof_mkprof_find_type(const mprof_mkprof *m, int64_t opcode);

/** The event type with id @p type, or NULL. */
MPROF_API const mprof_mkprof_event_type *
mprof_mkprof_find_event_type(const mprof_mkprof *m, int64_t type);

/** Fill @p out with slot @p index of @p processor; MPROF_EINVAL when out of
 * range. */
MPROF_API int mprof_mkprof_instruction_at(const mprof_mkprof *m,
                                          uint32_t processor, uint32_t index,
                                          mprof_mkprof_instruction *out);

/**
 * The bar of unit @p unit (index into the units) for that instruction, from
 * its special_events slots: 1 with *start and *end (ns) when start > 0 and
 * end > start, else 0 (also when the file has no events).
 */
MPROF_API int mprof_mkprof_unit_activity(const mprof_mkprof *m,
                                         uint32_t processor, uint32_t index,
                                         size_t unit, uint32_t *start,
                                         uint32_t *end);

/**
 * The events in unit @p unit's event range of that instruction, up to the
 * first zero slot, skipping slots whose time decodes to 0. Writes at most
 * @p max to @p out (may be NULL) and returns how many there are.
 */
MPROF_API size_t mprof_mkprof_unit_events(const mprof_mkprof *m,
                                          uint32_t processor, uint32_t index,
                                          size_t unit, mprof_mkprof_event *out,
                                          size_t max);

/** The non-zero controller-event slots (those controller_events names) of
 * that instruction; same convention. */
MPROF_API size_t mprof_mkprof_instruction_controller_events(
    const mprof_mkprof *m, uint32_t processor, uint32_t index,
    mprof_mkprof_event *out, size_t max);

/** The instruction's parameters decoded with its type's params; same
 * convention. */
MPROF_API size_t mprof_mkprof_params(const mprof_mkprof *m, uint32_t processor,
                                     uint32_t index,
                                     mprof_mkprof_param_value *out, size_t max);

/** Decode one packed event slot. */
MPROF_API void mprof_mkprof_decode(uint32_t raw, uint32_t *type,
                                   uint64_t *time_ns);

/** Pack @p time_ns (rounded down to 16 ns, kept modulo 2^32) and @p type. */
MPROF_API uint32_t mprof_mkprof_pack(uint64_t time_ns, uint32_t type);

#define MPROF_MKPROF_SUMMARY_VERSION 1

/** Totals over the whole file, in the caller's memory: start from
 * MPROF_MKPROF_SUMMARY_INIT. It grows at a minor version (fields are only
 * appended). */
typedef struct mprof_mkprof_summary {
  unsigned version;       /**< MPROF_MKPROF_SUMMARY_VERSION */
  size_t instructions;    /**< valid instruction slots */
  size_t unit_activities; /**< unit bars */
  size_t events;          /**< unit events */
  size_t error_events;    /**< of those, of an "error" type */
  size_t controller_events;
  uint32_t min_time, max_time; /**< over valid instructions, ns */
  MPROF_GROWABLE_TAIL
} mprof_mkprof_summary;

#define MPROF_MKPROF_SUMMARY_INIT                                              \
  { MPROF_MKPROF_SUMMARY_VERSION }

/** Fill the fields of @p out's version (and nothing after them) with the
 * totals of @p m. MPROF_EINVAL for NULL, MPROF_EVERSION (nothing written)
 * for a version this library does not know. */
MPROF_API int mprof_mkprof_summarize(const mprof_mkprof *m,
                                     mprof_mkprof_summary *out);

/**
 * Write @p m as a .mprof trace at @p path: one DEVICES record per GPU, one
 * pseudo launch per GPU covering its instructions, one REGIONS record per
 * (instruction type, unit) used — named after the type, coloured like it,
 * with the unit's role — and one SPANS record per unit activity (sm, block
 * = instruction index, payload = opcode). META capture.mode = mkprof.
 */
MPROF_API int mprof_mkprof_to_trace(const mprof_mkprof *m, const char *path);

/**
 * Open @p path as a trace, whether it is a .mprof or a MKPROF file: a .mprof
 * opens as mprof_trace_open() opens it; a MKPROF is read and imported as
 * mprof_mkprof_to_trace() does, into a scratch file in $TMPDIR (or /tmp)
 * that is gone once the trace is open. mprof_trace_path() of the result is
 * @p path either way. When @p mkprof is not NULL it receives the MKPROF
 * (NULL for a .mprof), the caller's to free. *out is the caller's; free it
 * with mprof_trace_free().
 */
MPROF_API int mprof_mkprof_open_trace(mprof_trace **out, const char *path,
                                      mprof_mkprof **mkprof);

#define MPROF_MKPROF_EXPORT_OPTIONS_VERSION 1

typedef struct mprof_mkprof_export_options {
  unsigned version;         /**< MPROF_MKPROF_EXPORT_OPTIONS_VERSION */
  const char *kernel_regex; /**< POSIX ERE on kernel names; NULL = all */
  /** Only the N-th (from 0, in time order) of the launches with spans
   * that pass kernel_regex; MPROF_INDEX_NONE = all. */
  uint32_t launch;
  MPROF_GROWABLE_TAIL
} mprof_mkprof_export_options;

#define MPROF_MKPROF_EXPORT_OPTIONS_INIT                                       \
  { MPROF_MKPROF_EXPORT_OPTIONS_VERSION, NULL, MPROF_INDEX_NONE }

#define MPROF_MKPROF_EXPORT_REPORT_VERSION 1

typedef struct mprof_mkprof_export_report {
  unsigned version;        /**< MPROF_MKPROF_EXPORT_REPORT_VERSION */
  size_t spans;            /**< spans exported */
  size_t processors;       /**< P */
  size_t max_instructions; /**< I */
  size_t instructions;     /**< instruction slots used */
  size_t events;           /**< events written */
  size_t events_dropped;   /**< events that did not fit a unit's range */
  uint64_t base_ns;        /**< trace time of mkprof time 0 */
  uint64_t extent_ns;      /**< last end - base */
  MPROF_GROWABLE_TAIL
} mprof_mkprof_export_report;

#define MPROF_MKPROF_EXPORT_REPORT_INIT                                        \
  { MPROF_MKPROF_EXPORT_REPORT_VERSION, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Write the activity spans of @p trace to @p path as MKPROF1.2: one
 * processor per SM (devices side by side), one instruction per (launch,
 * block) on it in order of start, units Loader/Consumer/Storer/Other by
 * region role with their bars in special_events and each span's begin
 * (type = region, up to 14) and end (type 15) in the unit's event range.
 * Times are relative to the first span; more than 4.29 s is MPROF_EINVAL.
 * @p opts and @p report may be NULL. MPROF_ENOTFOUND when no span is left.
 */
MPROF_API int mprof_mkprof_export(const mprof_trace *trace, const char *path,
                                  const mprof_mkprof_export_options *opts,
                                  mprof_mkprof_export_report *report);

#ifdef __cplusplus
}
#endif

#endif /* MPROF_MKPROF_H */
