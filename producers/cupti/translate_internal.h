/*
 * mprof CUPTI producer — what the translator's files share: its state and
 * the helpers every part uses. Internal to producers/cupti/translate*.c.
 *
 * translate.c          lifecycle, devices, names, errors, checkpoints, finish
 * translate_activity.c kernels, copies, memsets, NVTX ranges, activity records
 * translate_pc.c       PC and PM sampling data
 * translate_cubins.c   modules: loads, symbols, which code is kept, CUBINS
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_TRANSLATE_INTERNAL_H
#define MPROF_CUPTI_TRANSLATE_INTERNAL_H

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>

#include "base/map.h"
#include "cubin.h"
#include "translate.h"

/* How many distinct error messages META takes before it only counts them:
 * a failure repeated on every drain must not flood the trace. */
#define MAX_ERRORS 64
/* Guard against a corrupt stallReasonCount walking off CUPTI's array. */
#define MAX_STALL_REASONS_PER_PC 256

/* ---- devices ------------------------------------------------------------ */

typedef struct device_slot {
  uint32_t ordinal;
  int have_driver;
  int have_activity;
  int stall_reasons_written;
  mprof_device_record from_driver;   /* name holds a string ref */
  mprof_device_record from_activity; /* name holds a string ref */
} device_slot;

/* ---- names: one entry per distinct function name ------------------------ */

typedef struct name_entry {
  char *name;
  uint64_t hash;
  uint32_t str; /* string ref; valid when str_done */
  uint8_t str_done;
  int8_t match;          /* -1 not decided yet, 0 rejected, 1 kept */
  uint8_t launched;      /* a kernel record named it */
  uint32_t module_count; /* modules whose symbol table has this name */
  uint32_t module_capacity;
  uint32_t *modules;       /* indices into modules[] */
  uint32_t function_index; /* .symtab index in modules[modules[0]] */
} name_entry;

typedef struct name_map {
  name_entry **entries; /* in order of first sight */
  size_t count;
  size_t capacity;
  mprof__map index; /* hash of the name -> entries[] */
} name_map;

/* ---- modules ------------------------------------------------------------ */

typedef struct module {
  uint64_t crc;
  uint64_t size;
  uint64_t spill_offset;
  uint32_t device; /* DEVICES index of the first load */
  uint8_t spilled; /* the image is in the spill file */
  uint8_t multi_device;
  uint8_t used;             /* holds a launched or sampled function */
  uint8_t streamed;         /* its whole image is in the streamed file */
  uint32_t streamed_device; /* the CUBINS device it was streamed under */
  uint32_t *sampled;        /* .symtab indices named by PC records */
  size_t sampled_count;
  size_t sampled_capacity;
} module;

/* ---- NVTX ranges still waiting for their END ------------------------------
 */

/* How many ranges a thread has open: the depth of its next one. */
typedef struct thread_depth {
  uint32_t thread_id;
  uint32_t open;
} thread_depth;

typedef struct open_range {
  uint32_t id;
  uint64_t start;
  uint32_t name;
  uint32_t domain;
  uint32_t thread_id;
  uint32_t depth;
  uint32_t color;
} open_range;

struct mprof_cupti_translate {
  pthread_mutex_t lock;
  mprof_writer *w;
  int finished;
  /* The writer as signal handlers see it, without the lock: finish takes
   * it away and waits until no handler still uses it before it frees it. */
  _Atomic(mprof_writer *) signal_writer;
  atomic_int signal_users;

  int have_regex;
  regex_t regex;
  int keep_sass;
  int whole_modules;

  device_slot *devices;
  size_t device_count;

  /* This process's PROCESSES record (mprof_cupti_translate_process()):
   * snapshotted at checkpoints, appended at finish. */
  mprof_process_record process;
  int have_process;
  /* The capture window (mprof_cupti_translate_capture()): snapshotted at
   * checkpoints, appended at finish. */
  mprof_capture_record capture;
  int have_capture;

  name_map names;

  module *modules;
  size_t module_count;
  size_t module_capacity;
  mprof__map crcs; /* cubin CRC -> modules[] */
  mprof_cupti_spill spill;
  int spill_failed;

  /* Ranges waiting for their END, in no particular order (an END takes
   * its range's place with the last one); found by id through open_ids,
   * so a long run with many ranges open at once costs O(1) a marker. */
  open_range *open;
  size_t open_count;
  size_t open_capacity;
  mprof__map open_ids;  /* marker id -> open[] */
  thread_depth *depths; /* one per thread that opened a range */
  size_t depth_count;
  size_t depth_capacity;
  mprof__map depth_ids;       /* thread id -> depths[] */
  uint64_t last_timestamp;    /* latest time seen; ends ranges never closed */
  size_t open_snapshot_count; /* ranges in the last OPEN_RANGES snapshot */

  char *errors[MAX_ERRORS];
  size_t error_count;
  uint64_t errors_suppressed;

  /* API function names (string refs) by callback id: [0] runtime,
   * [1] driver; 0 where none was registered. */
  uint32_t *api_names[2];
  uint32_t api_name_count[2];
  /* Driver calls not yet known to be the program's own: a runtime call's
   * driver calls reach CUPTI's buffer before the runtime call itself. */
  mprof_api_call_record *pending;
  size_t pending_count;
  size_t pending_capacity;

  /* PC records since the last checkpoint, summed per (function, PC, stall
   * reason, correlation id, device): a hot PC is one record a second, not
   * one per drain. Written at each checkpoint and at finish. */
  mprof_pc_sample_record *pc_pending;
  size_t pc_pending_count;
  size_t pc_pending_capacity;
  mprof__map pc_keys; /* hash of the key -> pc_pending[] */

  uint32_t drain_seq;
  mprof_cupti_translate_stats stats;
  uint64_t strings_meta_ns;          /* checkpoint that last wrote writer.* */
  uint64_t strings_meta_generations; /* writer.string_generations then */
};

/* ---- shared helpers (translate.c unless said otherwise) ------------------ */

uint64_t tr_hash_string(const char *s);
uint64_t tr_mix64(uint64_t x);
uint32_t tr_clamp_u32(int64_t value);
void tr_note_time(mprof_cupti_translate *t, uint64_t ts);
/* Errors found while the lock is held; the public wrapper takes the lock. */
int tr_error_locked(mprof_cupti_translate *t, const char *message);
uint32_t tr_device_locked(mprof_cupti_translate *t, uint32_t ordinal);
/* The entry for @p name, created when new; NULL only when memory runs out. */
name_entry *tr_name_get(mprof_cupti_translate *t, const char *name);
uint32_t tr_name_string(mprof_cupti_translate *t, name_entry *e);
int tr_name_matches(mprof_cupti_translate *t, name_entry *e);

/* translate_activity.c: append one finished NVTX range; @p flags are
 * MPROF_RANGE_FLAG_* (OPEN for a range never closed). */
int tr_range_append(mprof_cupti_translate *t, const open_range *r, uint64_t end,
                    uint32_t flags);

/* translate_activity.c: the ranges open now as the OPEN_RANGES snapshot
 * the next checkpoint commits (checkpoint); an empty one at finish. */
int tr_open_ranges_snapshot_locked(mprof_cupti_translate *t, int finishing);

/* translate_activity.c: end every range still open at @p end, in the order
 * they started (finish). */
void tr_ranges_close_all(mprof_cupti_translate *t, uint64_t end);

/* translate_activity.c: free the open-range tables. */
void tr_ranges_free(mprof_cupti_translate *t);

/* translate_activity.c: write the driver calls still held back (finish). */
void tr_api_flush_locked(mprof_cupti_translate *t);

/* translate_pc.c: write the summed PC records (checkpoint, finish). */
void tr_pc_flush_locked(mprof_cupti_translate *t);

/* translate_cubins.c */
int tr_crc_find(const mprof_cupti_translate *t, uint64_t crc, uint32_t *index);
/* Each used module not yet streamed, whole, into the writer (checkpoint). */
void tr_stream_cubins_locked(mprof_cupti_translate *t);
void tr_write_cubins_locked(mprof_cupti_translate *t);

#endif
