/*
 * mprof — the processes of a trace: the PROCESSES records checked and
 * indexed at open (each stream's and device's process, the text of each
 * process's numbers), and for a trace written before the section existed
 * the table its META describes (the compatibility shim below, the only
 * reader of those META keys).
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/processes.h"
#include "format/trace_internal.h"
#include "internal.h"
#include "mprof/trace.h"

/* ---- COMPATIBILITY SHIM: processes from META (format 1.3 and older) ------
 * Everything in this block exists for traces written before PROCESSES; no
 * other code reads the keys it reads. */

/* @p text as a u32 when it is all digits and fits; else @p unknown. */
static uint32_t legacy_u32(const char *text, uint32_t unknown) {
  if (!text || !*text || strspn(text, "0123456789") != strlen(text))
    return unknown;
  unsigned long long v = strtoull(text, NULL, 10);
  return v < UINT32_MAX ? (uint32_t)v : unknown;
}

/* "FIRST COUNT" within [0, @p limit) into *first and *count; left empty
 * when it does not fit. */
static void legacy_range(const char *text, size_t limit, uint32_t *first,
                         uint32_t *count) {
  unsigned long long a, n;
  *first = *count = 0;
  if (sscanf(text, "%llu %llu", &a, &n) == 2 && a <= limit && n <= limit - a) {
    *first = (uint32_t)a;
    *count = (uint32_t)n;
  }
}

/* One key of a process (a trace's own, or process.I.KEY of a set). */
static void legacy_field(mprof_process_record *p, const char *key,
                         const char *value, size_t streams, size_t devices,
                         mprof__intern_fn intern, void *ctx) {
  if (strcmp(key, "pid") == 0)
    p->pid = legacy_u32(value, 0);
  else if (strcmp(key, "ppid") == 0)
    p->ppid = legacy_u32(value, MPROF_INDEX_NONE);
  else if (strcmp(key, "rank") == 0)
    p->rank = legacy_u32(value, MPROF_INDEX_NONE);
  else if (strcmp(key, "local_rank") == 0)
    p->local_rank = legacy_u32(value, MPROF_INDEX_NONE);
  else if (strcmp(key, "host") == 0)
    p->host = intern(ctx, value);
  else if (strcmp(key, "cmdline") == 0)
    p->cmdline = intern(ctx, value);
  else if (strcmp(key, "path") == 0)
    p->path = intern(ctx, value);
  else if (strcmp(key, "clock_shift_ns") == 0)
    p->clock_shift = (int64_t)strtoll(value, NULL, 10);
  else if (strcmp(key, "clock.anchor.trace_ns") == 0)
    p->start = strtoull(value, NULL, 10);
  else if (strcmp(key, "clock.end.trace_ns") == 0)
    p->end = strtoull(value, NULL, 10);
  else if (strcmp(key, "streams") == 0)
    legacy_range(value, streams, &p->first_stream, &p->stream_count);
  else if (strcmp(key, "devices") == 0)
    legacy_range(value, devices, &p->first_device, &p->device_count);
}

/* A clock value moved by @p shift ns; 0 stays unknown. */
static uint64_t legacy_shifted(uint64_t time, int64_t shift) {
  int64_t moved = (int64_t)time + shift;
  return time && moved > 0 ? (uint64_t)moved : 0;
}

int mprof__processes_from_meta(mprof_process_record **out, size_t *count,
                               const char *const *pairs, size_t pair_count,
                               size_t streams, size_t devices,
                               mprof__intern_fn intern, void *ctx) {
  *out = NULL;
  *count = 0;
  const char *merged = NULL;
  for (size_t i = 0; i < pair_count; i++)
    if (strcmp(pairs[2 * i], "merge.processes") == 0)
      merged = pairs[2 * i + 1];
  unsigned long long want = merged ? strtoull(merged, NULL, 10) : 0;
  /* A set has at most one process per META pair: a count past that lies. */
  size_t n = want > 1 && want <= pair_count && want <= UINT32_MAX ? want : 1;
  mprof_process_record *p =
      (mprof_process_record *)calloc(n, sizeof(mprof_process_record));
  if (!p)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    p[i].ppid = p[i].rank = p[i].local_rank = MPROF_INDEX_NONE;
  for (size_t i = 0; i < pair_count; i++) {
    const char *key = pairs[2 * i], *value = pairs[2 * i + 1];
    if (n == 1) {
      legacy_field(p, key, value, streams, devices, intern, ctx);
      continue;
    }
    if (strncmp(key, "process.", 8) != 0 || key[8] < '0' || key[8] > '9')
      continue;
    char *dot;
    unsigned long long at = strtoull(key + 8, &dot, 10);
    if (*dot == '.' && at < n)
      legacy_field(&p[at], dot + 1, value, streams, devices, intern, ctx);
  }
  if (n == 1) {
    /* Its own trace: every stream and device, nothing merged. */
    p->path = 0;
    p->clock_shift = 0;
    p->first_stream = p->first_device = 0;
    p->stream_count = (uint32_t)streams;
    p->device_count = (uint32_t)devices;
  }
  for (size_t i = 0; i < n; i++) {
    p[i].start = legacy_shifted(p[i].start, p[i].clock_shift);
    p[i].end = legacy_shifted(p[i].end, p[i].clock_shift);
  }
  *out = p;
  *count = n;
  return 0;
}

static uint32_t intern_in_writer(void *ctx, const char *text) {
  return mprof_writer_string((mprof_writer *)ctx, text);
}

int mprof__write_processes_from_meta(mprof_writer *w, const char *const *pairs,
                                     size_t pair_count) {
  mprof_process_record *p;
  size_t n;
  int rc = mprof__processes_from_meta(
      &p, &n, pairs, pair_count, mprof_writer_count(w, MPROF_SECTION_STREAMS),
      mprof_writer_count(w, MPROF_SECTION_DEVICES), intern_in_writer, w);
  for (size_t i = 0; !rc && i < n; i++)
    rc = mprof_writer_append(w, NULL, MPROF_SECTION_PROCESSES, &p[i]);
  free(p);
  return rc;
}

/* A META value of the trace being opened: a string ref into its STRINGS. */
static uint32_t intern_in_trace(void *ctx, const char *text) {
  const section_view *s =
      &((const mprof_trace *)ctx)->sections[MPROF_SECTION_STRINGS];
  const char *base = (const char *)s->data;
  return text >= base && text < base + s->length ? (uint32_t)(text - base)
                                                 : MPROF_STR_NONE;
}

/* The table a trace without PROCESSES records gets from its META. */
static int legacy_processes(mprof_trace *t, size_t streams, size_t devices) {
  size_t n;
  const mprof_meta_record *meta = mprof_trace_meta_records(t, &n);
  const char **pairs = (const char **)malloc((n ? 2 * n : 1) * sizeof *pairs);
  if (!pairs)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  for (size_t i = 0; i < n; i++) {
    pairs[2 * i] = mprof_trace_string(t, meta[i].key);
    pairs[2 * i + 1] = mprof_trace_string(t, meta[i].value);
  }
  int rc =
      mprof__processes_from_meta(&t->processes_made, &t->process_count, pairs,
                                 n, streams, devices, intern_in_trace, t);
  free(pairs);
  if (rc)
    return mprof__error_set(rc, "%s: out of memory", t->path);
  t->processes = t->processes_made;
  return 0;
}

/* ---- end of the compatibility shim -------------------------------------- */

/* The text of a process's numbers (mprof_trace_process_meta()), each in a
 * slot of TEXT_SIZE bytes; an empty slot is unknown. */
static const char *const text_keys[] = {"pid", "ppid", "rank", "local_rank",
                                        "clock_shift_ns"};
#define TEXT_FIELDS (sizeof text_keys / sizeof text_keys[0])
#define TEXT_SIZE 24

static void format_text(char *slot, const mprof_process_record *p) {
  const uint32_t values[] = {p->pid, p->ppid, p->rank, p->local_rank};
  const uint32_t unknown[] = {0, MPROF_INDEX_NONE, MPROF_INDEX_NONE,
                              MPROF_INDEX_NONE};
  for (size_t f = 0; f < 4; f++)
    if (values[f] != unknown[f])
      snprintf(slot + f * TEXT_SIZE, TEXT_SIZE, "%" PRIu32, values[f]);
  snprintf(slot + 4 * TEXT_SIZE, TEXT_SIZE, "%" PRId64, p->clock_shift);
}

/* What a reference check cannot say about PROCESSES records. */
static int check_record(const mprof_trace *t, size_t i,
                        const mprof_process_record *p) {
  const section_view *v = &t->sections[MPROF_SECTION_PROCESSES];
  uint64_t at = v->offset + (uint64_t)i * sizeof *p;
  if (p->exit_kind > MPROF_EXIT_SIGNAL)
    return BAD(t, MPROF_SECTION_PROCESSES, at,
               "record %zu: unknown exit kind %u", i, p->exit_kind);
  if (p->end && p->end < p->start)
    return BAD(t, MPROF_SECTION_PROCESSES, at,
               "record %zu ends before it starts", i);
  for (size_t r = 0; r < sizeof p->reserved / sizeof p->reserved[0]; r++)
    if (p->reserved[r])
      return BAD(t, MPROF_SECTION_PROCESSES, at,
                 "record %zu: reserved field is not zero", i);
  return 0;
}

/* owner[first .. first + count) = @p process. Two processes cannot own one
 * record: refused for PROCESSES records (@p strict), the later one wins in
 * the shim's table. */
static int claim(const mprof_trace *t, uint32_t *owner, uint32_t first,
                 uint32_t count, size_t process, int strict, uint32_t section) {
  for (uint32_t i = first; i < first + count; i++) {
    if (strict && owner[i] != MPROF_INDEX_NONE)
      return BAD(t, MPROF_SECTION_PROCESSES,
                 t->sections[MPROF_SECTION_PROCESSES].offset +
                     process * sizeof(mprof_process_record),
                 "record %zu: %s record %u is already process %u's", process,
                 mprof_section_name(section), i, owner[i]);
    owner[i] = (uint32_t)process;
  }
  return 0;
}

int mprof__trace_index_processes(mprof_trace *t) {
  size_t streams, devices;
  mprof_trace_streams(t, &streams);
  mprof_trace_devices(t, &devices);
  const section_view *v = &t->sections[MPROF_SECTION_PROCESSES];
  int strict = v->count > 0;
  int rc = 0;
  if (strict) {
    t->processes = (const mprof_process_record *)v->data;
    t->process_count = v->count;
    for (size_t i = 0; i < v->count && !rc; i++)
      rc = check_record(t, i, &t->processes[i]);
  } else {
    rc = legacy_processes(t, streams, devices);
  }
  if (rc)
    return rc;
  t->stream_process =
      (uint32_t *)malloc((streams ? streams : 1) * sizeof *t->stream_process);
  t->device_process =
      (uint32_t *)malloc((devices ? devices : 1) * sizeof *t->device_process);
  t->process_text = (char *)calloc(t->process_count, TEXT_FIELDS * TEXT_SIZE);
  if (!t->stream_process || !t->device_process || !t->process_text)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory", t->path);
  for (size_t i = 0; i < streams; i++)
    t->stream_process[i] = MPROF_INDEX_NONE;
  for (size_t i = 0; i < devices; i++)
    t->device_process[i] = MPROF_INDEX_NONE;
  for (size_t p = 0; p < t->process_count && !rc; p++) {
    const mprof_process_record *r = &t->processes[p];
    rc = claim(t, t->stream_process, r->first_stream, r->stream_count, p,
               strict, MPROF_SECTION_STREAMS);
    if (!rc)
      rc = claim(t, t->device_process, r->first_device, r->device_count, p,
                 strict, MPROF_SECTION_DEVICES);
    format_text(t->process_text + p * TEXT_FIELDS * TEXT_SIZE, r);
  }
  return rc;
}

void mprof__trace_free_processes(mprof_trace *t) {
  free(t->processes_made);
  free(t->stream_process);
  free(t->device_process);
  free(t->process_text);
}

const mprof_process_record *mprof_trace_processes(const mprof_trace *trace,
                                                  size_t *count) {
  if (count)
    *count = trace ? trace->process_count : 0;
  return trace ? trace->processes : NULL;
}

size_t mprof_trace_process_count(const mprof_trace *trace) {
  return trace ? trace->process_count : 0;
}

const char *mprof_trace_process_meta(const mprof_trace *trace, size_t process,
                                     const char *key) {
  if (!trace || !key || process >= trace->process_count)
    return NULL;
  const mprof_process_record *p = &trace->processes[process];
  for (size_t f = 0; f < TEXT_FIELDS; f++)
    if (strcmp(key, text_keys[f]) == 0) {
      const char *text =
          trace->process_text + (process * TEXT_FIELDS + f) * TEXT_SIZE;
      return *text ? text : NULL;
    }
  const uint32_t *ref = strcmp(key, "host") == 0      ? &p->host
                        : strcmp(key, "cmdline") == 0 ? &p->cmdline
                        : strcmp(key, "path") == 0    ? &p->path
                                                      : NULL;
  if (ref && *ref)
    return mprof_trace_string(trace, *ref);
  if (ref == &p->path && trace->process_count == 1)
    return trace->path; /* its own file, as renamed */
  if (ref)
    return NULL;
  if (trace->process_count == 1)
    return mprof_trace_meta(trace, key);
  char name[256];
  snprintf(name, sizeof name, "process.%zu.%s", process, key);
  return mprof_trace_meta(trace, name);
}

uint32_t mprof_trace_stream_process(const mprof_trace *trace, uint32_t stream) {
  size_t n;
  mprof_trace_streams(trace, &n);
  return trace && stream < n ? trace->stream_process[stream] : MPROF_INDEX_NONE;
}

uint32_t mprof_trace_device_process(const mprof_trace *trace, uint32_t device) {
  size_t n;
  mprof_trace_devices(trace, &n);
  return trace && device < n ? trace->device_process[device] : MPROF_INDEX_NONE;
}
