/*
 * mprof — a trace's activity spans as MKPROF1.2, the format of the
 * Megakernels viewer.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/text.h"
#include "internal.h"
#include "mprof/mkprof.h"
#include "mprof/trace.h"

/* ---- trace → MKPROF ----------------------------------------------------- */

/* The Megakernels layout: 128 timing slots, units 0..3 as its viewer
 * expects them (it draws units 0, 1, 2 as loader, consumer, storer rows). */
#define EXPORT_TIMING_LENGTH 128
#define EXPORT_INSTRUCTION_LENGTH 8
#define EXPORT_END_TYPE 15
#define EXPORT_REGION_TYPES 14 /* types 0..13 name regions, 14 the rest */

static const struct {
  const char *name;
  uint32_t event_start, event_end, special_start, special_end;
  double height;
} export_units[4] = {
    {"Loader", 16, 47, 8, 9, 1.0},
    {"Consumer", 48, 79, 12, 13, 2.0},
    {"Storer", 112, 127, 14, 15, 1.0},
    {"Other", 80, 111, 10, 11, 1.0},
};

static uint32_t export_unit_of(uint32_t role) {
  switch (role) {
  case MPROF_ROLE_LOADER: return 0;
  case MPROF_ROLE_CONSUMER: return 1;
  case MPROF_ROLE_STORER: return 2;
  default: return 3;
  }
}

typedef struct export_span {
  uint64_t start, end;
  uint32_t processor;
  uint32_t launch;
  uint32_t block;
  uint32_t region;
  uint32_t group; /* instruction group, after grouping */
} export_span;

static int cmp_export_span(const void *a, const void *b) {
  const export_span *x = (const export_span *)a, *y = (const export_span *)b;
  MPROF__ORDER_BY(processor);
  MPROF__ORDER_BY(launch);
  MPROF__ORDER_BY(block);
  MPROF__ORDER_BY(start);
  return x->end < y->end ? -1 : x->end > y->end;
}

/* Whether sorted span @p i begins a (processor, launch, block) group. */
static int starts_group(const export_span *es, size_t i) {
  return i == 0 || es[i].processor != es[i - 1].processor ||
         es[i].launch != es[i - 1].launch || es[i].block != es[i - 1].block;
}

typedef struct export_group {
  uint64_t start, end;
  uint32_t processor;
  size_t first, count; /* range in the sorted spans */
  uint32_t slot;       /* instruction index on its processor */
  uint32_t opcode;     /* its kernel's instruction type */
} export_group;

static int cmp_export_group(const void *a, const void *b) {
  const export_group *x = (const export_group *)a, *y = (const export_group *)b;
  MPROF__ORDER_BY(processor);
  MPROF__ORDER_BY(start);
  return x->first < y->first ? -1 : x->first > y->first;
}

typedef struct export_event {
  uint64_t time;
  uint32_t type;
} export_event;

static int cmp_export_event(const void *a, const void *b) {
  const export_event *x = (const export_event *)a, *y = (const export_event *)b;
  MPROF__ORDER_BY(time);
  return x->type < y->type ? -1 : x->type > y->type;
}

static const uint32_t export_palette[] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
    0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0xaec7e8, 0xffbb78,
    0x98df8a, 0xff9896, 0xc5b0d5, 0xc49c94};

typedef struct export_ctx {
  const mprof_trace *trace;
  uint8_t *kernel_ok; /* per KERNELS record; NULL: no kernel filter */
  uint32_t launch;    /* the LAUNCHES index opts->launch picked, or NONE */
} export_ctx;

/* The record of launch @p launch, or NULL when it names none. */
static const mprof_launch_record *launch_at(const mprof_trace *t,
                                            uint32_t launch) {
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(t, &n);
  return launch == MPROF_INDEX_NONE || launch >= n ? NULL : &l[launch];
}

/* The kernel of launch @p launch, or MPROF_INDEX_NONE. */
static uint32_t launch_kernel(const mprof_trace *t, uint32_t launch) {
  size_t n;
  const mprof_launch_record *l = launch_at(t, launch);
  return l ? mprof_trace_shapes(t, &n)[l->shape].kernel : MPROF_INDEX_NONE;
}

static const char *kernel_label(const mprof_trace *t, uint32_t kernel) {
  size_t n;
  const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
  if (kernel == MPROF_INDEX_NONE || kernel >= n)
    return "unknown kernel";
  const char *d = mprof_trace_string(t, k[kernel].demangled_name);
  return *d ? d : mprof_trace_string(t, k[kernel].mangled_name);
}

static int export_keep(const export_ctx *c, const mprof_span_record *sp) {
  if (c->launch != MPROF_INDEX_NONE && sp->launch != c->launch)
    return 0;
  if (c->kernel_ok) {
    uint32_t k = launch_kernel(c->trace, sp->launch);
    return k != MPROF_INDEX_NONE && c->kernel_ok[k];
  }
  return 1;
}

/* --kernel REGEX: the kernels whose mangled or demangled name matches. */
static int filter_kernels(export_ctx *c, const char *pattern) {
  size_t n;
  const mprof_kernel_record *kernels = mprof_trace_kernels(c->trace, &n);
  regex_t re;
  int err = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
  if (err) {
    char msg[256];
    regerror(err, &re, msg, sizeof msg);
    return mprof__error_set(MPROF_EINVAL, "bad kernel regex '%s': %s", pattern,
                            msg);
  }
  c->kernel_ok = (uint8_t *)calloc(n ? n : 1, 1);
  for (size_t k = 0; c->kernel_ok && k < n; k++) {
    const char *mangled = mprof_trace_string(c->trace, kernels[k].mangled_name);
    const char *name = mprof_trace_string(c->trace, kernels[k].demangled_name);
    c->kernel_ok[k] = regexec(&re, mangled, 0, NULL, 0) == 0 ||
                      regexec(&re, name, 0, NULL, 0) == 0;
  }
  regfree(&re);
  return c->kernel_ok ? 0 : mprof__error_set(MPROF_ENOMEM, "out of memory");
}

/* --launch N: the N-th launch, in time order, of those with spans that
 * pass the kernel filter. */
static int pick_launch(export_ctx *c, uint32_t nth) {
  size_t nspans, nlaunches, with = 0;
  const mprof_span_record *spans = mprof_trace_spans(c->trace, &nspans);
  const mprof_launch_record *launches =
      mprof_trace_launches(c->trace, &nlaunches);
  uint8_t *has = (uint8_t *)calloc(nlaunches ? nlaunches : 1, 1);
  export_event *order = (export_event *)malloc(
      (nlaunches ? nlaunches : 1) * sizeof *order); /* (start, index) */
  if (!has || !order) {
    free(has);
    free(order);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < nspans; i++)
    if (spans[i].launch != MPROF_INDEX_NONE && export_keep(c, &spans[i]))
      has[spans[i].launch] = 1;
  for (size_t i = 0; i < nlaunches; i++)
    if (has[i]) {
      order[with].time = launches[i].start;
      order[with++].type = (uint32_t)i;
    }
  qsort(order, with, sizeof *order, cmp_export_event);
  if (nth < with)
    c->launch = order[nth].type;
  free(order);
  free(has);
  if (nth < with)
    return 0;
  return mprof__error_set(
      MPROF_EINVAL, "%s: there is no launch %u: %zu launches have spans%s",
      mprof_trace_path(c->trace), nth, with,
      c->kernel_ok ? " and match the kernel filter" : "");
}

/* An instruction or event type, its name and colour; the caller closes it. */
static void put_type(mprof__fields *o, mprof__fields *types, size_t key,
                     const char *name, uint32_t rgb) {
  char text[24];
  snprintf(text, sizeof text, "%zu", key);
  mprof__fields_open(o, types, NULL, text);
  mprof__fields_str(o, "name", name);
  snprintf(text, sizeof text, "#%06x", rgb & 0xffffffu);
  mprof__fields_str(o, "color", text);
}

static void put_range(mprof__fields *unit, const char *name, uint32_t start,
                      uint32_t end) {
  mprof__fields o;
  mprof__fields_open(&o, unit, NULL, name);
  mprof__fields_u64(&o, "start", start);
  mprof__fields_u64(&o, "end", end);
  mprof__fields_close(&o);
}

/* The JSON config. Kernel k's instruction type is opcode k + 1. */
static void put_config(FILE *f, const mprof_trace *t,
                       const uint32_t *opcode_kernel, size_t opcodes,
                       uint32_t processors, uint32_t max_instructions,
                       uint32_t gpus) {
  static const char *const params[] = {"launch", "block", "spans",
                                       "events_dropped"};
  size_t nr;
  const mprof_region_record *regions = mprof_trace_regions(t, &nr);
  mprof__fields root = {f, 1, 0}, list, o, x;
  char key[24];
  fputc('{', f);
  mprof__fields_str(&root, "format_version", "1.2");
  mprof__fields_open(&list, &root, NULL, "instruction_types");
  for (size_t i = 0; i <= opcodes; i++) { /* 0: "No Op" */
    put_type(&o, &list, i, i ? kernel_label(t, opcode_kernel[i - 1]) : "No Op",
             i ? export_palette[(i - 1) % 16] : 0x808080);
    mprof__fields_open(&x, &o, NULL, "params");
    for (size_t p = 0; i && p < 4; p++) {
      snprintf(key, sizeof key, "%zu", p + 1);
      mprof__fields_str(&x, key, params[p]);
    }
    mprof__fields_close(&x);
    mprof__fields_close(&o);
  }
  mprof__fields_close(&list);
  mprof__fields_open(&o, &root, NULL, "instruction_format");
  mprof__fields_u64(&o, "instruction_length", EXPORT_INSTRUCTION_LENGTH);
  mprof__fields_u64(&o, "timing_length", EXPORT_TIMING_LENGTH);
  mprof__fields_close(&o);
  mprof__fields_open(&list, &root, NULL, "functional_units");
  for (int u = 0; u < 4; u++) {
    snprintf(key, sizeof key, "%d", u);
    mprof__fields_open(&o, &list, NULL, key);
    mprof__fields_str(&o, "name", export_units[u].name);
    put_range(&o, "event_range", export_units[u].event_start,
              export_units[u].event_end);
    snprintf(key, sizeof key, "%.1f", export_units[u].height);
    mprof__fields_raw(&o, "height_multiplier", key);
    put_range(&o, "special_events", export_units[u].special_start,
              export_units[u].special_end);
    mprof__fields_close(&o);
  }
  mprof__fields_close(&list);
  mprof__fields_u64(&root, "main_functional_unit", 1);
  mprof__fields_open(&list, &root, NULL, "event_types");
  for (size_t r = 0; r < nr && r < EXPORT_REGION_TYPES; r++) {
    char name[160];
    snprintf(name, sizeof name, "%.140s begins",
             mprof_trace_string(t, regions[r].name));
    put_type(&o, &list, r, name,
             regions[r].color ? regions[r].color
                              : export_palette[(r + 3) % 16]);
    mprof__fields_close(&o);
  }
  if (nr > EXPORT_REGION_TYPES) {
    put_type(&o, &list, EXPORT_REGION_TYPES, "other region begins", 0xcccccc);
    mprof__fields_close(&o);
  }
  put_type(&o, &list, EXPORT_END_TYPE, "span ends", 0xffffff);
  mprof__fields_close(&o);
  mprof__fields_close(&list);
  mprof__fields_open(&o, &root, NULL, "controller_events");
  mprof__fields_close(&o);
  mprof__fields_u64(&root, "num_gpus", gpus);
  mprof__fields_u64(&root, "total_processors", processors);
  mprof__fields_u64(&root, "max_instructions", max_instructions);
  mprof__fields_u64(&root, "time_unit_flag", 1);
  mprof__fields_u64(&root, "has_events_flag", 1);
  fputc('}', f);
}

static int write_all(FILE *f, const void *data, size_t size) {
  return size == 0 || fwrite(data, 1, size, f) == size;
}

MPROF__VERSIONS(report_versions, "mkprof export report",
                MPROF__END_OF(mprof_mkprof_export_report, extent_ns));

/* A trace imported from MKPROF, exported whole: the file it came from,
 * checked as mprof_mkprof_open() checks one. 1 when done (or failed: *rc
 * says), 0 when the trace holds no MKPROF file. */
static int export_imported(const mprof_trace *t, const char *path,
                           mprof_mkprof_export_report *rep, int *rc) {
  size_t size;
  const void *bytes = mprof_trace_section(t, MPROF_SECTION_MKPROF, &size);
  if (!bytes || !size)
    return 0;
  mprof_mkprof *m = NULL;
  *rc = mprof_mkprof_parse(&m, bytes, size, mprof_trace_path(t));
  if (*rc)
    return 1;
  const mprof_mkprof_layout *l = mprof_mkprof_get_layout(m);
  mprof_mkprof_summary sum = MPROF_MKPROF_SUMMARY_INIT;
  mprof_mkprof_summarize(m, &sum);
  mprof_trace_spans(t, &rep->spans);
  rep->processors = l->total_processors;
  rep->max_instructions = l->max_instructions;
  rep->instructions = sum.instructions;
  rep->events = sum.events + sum.controller_events;
  rep->base_ns = 0;
  rep->extent_ns = sum.max_time;
  mprof_mkprof_free(m);
  mprof__file_out fo = {NULL, NULL, NULL};
  *rc = mprof__file_out_open(&fo, path);
  if (*rc)
    return 1;
  if (fwrite(bytes, 1, size, fo.f) != size)
    *rc = mprof__error_set(MPROF_EIO, "%s: cannot write: %s", path,
                           strerror(errno));
  int closed = mprof__file_out_close(&fo, !*rc);
  *rc = *rc ? *rc : closed;
  return 1;
}

int mprof_mkprof_export(const mprof_trace *t, const char *path,
                        const mprof_mkprof_export_options *opts,
                        mprof_mkprof_export_report *report) {
  if (!t || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_export: NULL");
  static const mprof_mkprof_export_options defaults =
      MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  opts = mprof__options_or_defaults(
      opts, &defaults, MPROF_MKPROF_EXPORT_OPTIONS_VERSION,
      MPROF_MKPROF_EXPORT_OPTIONS_VERSION, "mkprof export");
  if (!opts || mprof__result_check(report, &report_versions))
    return MPROF_EVERSION;
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  int whole = !opts->kernel_regex && opts->launch == MPROF_INDEX_NONE;
  int imported_rc = 0;
  if (whole && export_imported(t, path, &rep, &imported_rc)) {
    if (!imported_rc && report)
      mprof__result_store(report, &rep, &report_versions);
    return imported_rc;
  }
  size_t nspans, nkernels, ndevices, nregions, nstreams;
  const mprof_span_record *spans = mprof_trace_spans(t, &nspans);
  const mprof_stream_record *streams = mprof_trace_streams(t, &nstreams);
  const mprof_device_record *devices = mprof_trace_devices(t, &ndevices);
  const mprof_region_record *regions = mprof_trace_regions(t, &nregions);
  mprof_trace_kernels(t, &nkernels);
  export_ctx c = {t, NULL, MPROF_INDEX_NONE};
  int rc = opts->kernel_regex ? filter_kernels(&c, opts->kernel_regex) : 0;
  if (!rc && opts->launch != MPROF_INDEX_NONE)
    rc = pick_launch(&c, opts->launch);
  if (rc) {
    free(c.kernel_ok);
    return rc;
  }

  /* Processors: the devices side by side, each as wide as its SM count or
   * the highest SM a span names. */
  size_t dev_slots = ndevices ? ndevices : 1;
  uint32_t *dev_width = (uint32_t *)calloc(dev_slots, sizeof *dev_width);
  uint32_t *dev_base = (uint32_t *)calloc(dev_slots, sizeof *dev_base);
  export_span *es = (export_span *)malloc((nspans ? nspans : 1) * sizeof *es);
  uint32_t *opcode_of = (uint32_t *)calloc(nkernels + 1, sizeof *opcode_of);
  uint32_t *opcode_kernel =
      (uint32_t *)malloc((nkernels + 1) * sizeof *opcode_kernel);
  export_group *groups = NULL;
  uint32_t *words = NULL;
  mprof__file_out fo = {NULL, NULL, NULL};
  if (!dev_width || !dev_base || !es || !opcode_of || !opcode_kernel) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t d = 0; d < ndevices; d++)
    dev_width[d] = devices[d].sm_count;
  size_t n = 0;
  for (size_t i = 0; i < nspans; i++) {
    if (!export_keep(&c, &spans[i]))
      continue;
    /* its launch's device, or the first */
    const mprof_launch_record *l = launch_at(t, spans[i].launch);
    uint32_t d = l ? streams[l->stream].device : 0;
    if (d >= dev_slots)
      d = 0;
    if (spans[i].sm >= dev_width[d])
      dev_width[d] = spans[i].sm + 1;
    es[n].start = spans[i].start;
    es[n].end = spans[i].end;
    es[n].processor = d; /* the device for now */
    es[n].launch = spans[i].launch;
    es[n].block = spans[i].block;
    es[n].region = spans[i].region;
    es[n].group = spans[i].sm;
    n++;
  }
  if (n == 0) {
    rc = mprof__error_set(MPROF_ENOTFOUND, "%s: no activity spans to export%s",
                          mprof_trace_path(t),
                          nspans ? " (none matches the filter)" : "");
    goto done;
  }
  uint64_t processors = 0;
  for (size_t d = 0; d < dev_slots; d++) {
    dev_base[d] = (uint32_t)processors;
    processors += dev_width[d];
  }
  if (processors > UINT32_MAX) {
    rc = mprof__error_set(MPROF_EINVAL, "too many SMs");
    goto done;
  }
  uint64_t base = UINT64_MAX, last = 0;
  for (size_t i = 0; i < n; i++) {
    es[i].processor = dev_base[es[i].processor] + es[i].group;
    base = es[i].start < base ? es[i].start : base;
    last = es[i].end > last ? es[i].end : last;
  }
  /* Time 0 means "absent" in MKPROF: start the first span at 16 ns. */
  base = base >= 16 ? base - 16 : 0;
  if (last - base > UINT32_MAX) {
    rc = mprof__error_set(
        MPROF_EINVAL,
        "%s: the spans cover %.3f s; MKPROF times are 32-bit ns (4.29 s): "
        "export one kernel (--kernel) or one launch (--launch)",
        mprof_trace_path(t), (double)(last - base) / 1e9);
    goto done;
  }
  qsort(es, n, sizeof *es, cmp_export_span);
  /* Instructions: (processor, launch, block) groups, ordered by start on
   * each processor. */
  size_t group_count = 0;
  for (size_t i = 0; i < n; i++)
    group_count += starts_group(es, i);
  groups = (export_group *)calloc(group_count, sizeof *groups);
  if (!groups) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && starts_group(es, i))
      g++;
    export_group *gr = &groups[g];
    if (gr->count == 0) {
      gr->first = i;
      gr->processor = es[i].processor;
      gr->start = es[i].start;
    }
    gr->count++;
    gr->start = es[i].start < gr->start ? es[i].start : gr->start;
    gr->end = es[i].end > gr->end ? es[i].end : gr->end;
  }
  qsort(groups, group_count, sizeof *groups, cmp_export_group);
  uint32_t max_instructions = 0;
  for (size_t i = 0; i < group_count; i++) {
    groups[i].slot = i > 0 && groups[i].processor == groups[i - 1].processor
                         ? groups[i - 1].slot + 1
                         : 0;
    if (groups[i].slot + 1 > max_instructions)
      max_instructions = groups[i].slot + 1;
  }
  /* Opcodes: kernels in order of first appearance. */
  size_t opcodes = 0;
  for (size_t i = 0; i < group_count; i++) {
    uint32_t k = launch_kernel(t, es[groups[i].first].launch);
    size_t slot = k == MPROF_INDEX_NONE ? nkernels : k;
    if (!opcode_of[slot]) {
      opcode_kernel[opcodes] = k;
      opcode_of[slot] = (uint32_t)++opcodes;
    }
    groups[i].opcode = opcode_of[slot];
  }
  uint64_t slots = (uint64_t)processors * max_instructions;
  uint64_t slot_words = EXPORT_INSTRUCTION_LENGTH + 2 + EXPORT_TIMING_LENGTH;
  if (slots > SIZE_MAX / 4 / slot_words) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  /* One allocation: instructions, starts, ends, events, as in the file. */
  size_t word_count = (size_t)(slots * slot_words);
  words = (uint32_t *)calloc(word_count ? word_count : 1, 4);
  if (!words) {
    rc = mprof__error_set(
        MPROF_ENOMEM, "out of memory for %" PRIu64 " instruction slots", slots);
    goto done;
  }
  uint32_t *ins = words;
  uint32_t *starts = ins + slots * EXPORT_INSTRUCTION_LENGTH;
  uint32_t *ends = starts + slots;
  uint32_t *events = ends + slots;
  export_event ev[4][64];
  size_t ev_count[4];
  for (size_t i = 0; i < group_count; i++) {
    const export_group *gr = &groups[i];
    uint64_t slot = (uint64_t)gr->processor * max_instructions + gr->slot;
    uint32_t *w = ins + slot * EXPORT_INSTRUCTION_LENGTH;
    uint32_t *e = events + slot * EXPORT_TIMING_LENGTH;
    const export_span *first_span = &es[gr->first];
    uint64_t unit_start[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    uint64_t unit_end[4] = {0, 0, 0, 0};
    size_t dropped = 0;
    memset(ev_count, 0, sizeof ev_count);
    for (size_t s = gr->first; s < gr->first + gr->count; s++) {
      uint32_t role = es[s].region < nregions ? regions[es[s].region].role
                                              : MPROF_ROLE_OTHER;
      uint32_t u = export_unit_of(role);
      uint64_t a = es[s].start - base, b = es[s].end - base;
      unit_start[u] = a < unit_start[u] ? a : unit_start[u];
      unit_end[u] = b > unit_end[u] ? b : unit_end[u];
      uint32_t type = es[s].region < EXPORT_REGION_TYPES ? es[s].region
                                                         : EXPORT_REGION_TYPES;
      for (int half = 0; half < 2; half++) {
        if (ev_count[u] < 64) {
          ev[u][ev_count[u]].time = half ? b : a;
          ev[u][ev_count[u]].type = half ? EXPORT_END_TYPE : type;
          ev_count[u]++;
        } else {
          dropped++;
        }
      }
    }
    for (uint32_t u = 0; u < 4; u++) {
      if (unit_start[u] == UINT64_MAX)
        continue;
      e[export_units[u].special_start] = (uint32_t)unit_start[u];
      e[export_units[u].special_end] = (uint32_t)unit_end[u];
      qsort(ev[u], ev_count[u], sizeof ev[u][0], cmp_export_event);
      size_t room = export_units[u].event_end - export_units[u].event_start + 1;
      for (size_t j = 0; j < ev_count[u]; j++) {
        if (j < room) {
          e[export_units[u].event_start + j] =
              mprof_mkprof_pack(ev[u][j].time, ev[u][j].type);
          rep.events++;
        } else {
          dropped++;
        }
      }
    }
    e[0] = gr->opcode;
    e[1] = gr->processor;
    w[0] = gr->opcode;
    w[1] = first_span->launch;
    w[2] = first_span->block;
    w[3] = (uint32_t)gr->count;
    w[4] = (uint32_t)dropped;
    starts[slot] = (uint32_t)(gr->start - base);
    ends[slot] = (uint32_t)(gr->end - base);
    rep.events_dropped += dropped;
  }
  rep.spans = n;
  rep.processors = (size_t)processors;
  rep.max_instructions = max_instructions;
  rep.instructions = group_count;
  rep.base_ns = base;
  rep.extent_ns = last - base;

  rc = mprof__file_out_open(&fo, path);
  if (rc)
    goto done;
  static const char zeros[4] = {0, 0, 0, 0};
  FILE *f = fo.f;
  int ok = write_all(f, MPROF_MKPROF_MAGIC, MPROF_MKPROF_MAGIC_SIZE);
  put_config(f, t, opcode_kernel, opcodes, (uint32_t)processors,
             max_instructions, ndevices ? (uint32_t)ndevices : 1);
  long end = ftell(f); /* the words start at a multiple of 4 */
  ok = ok && end >= 0 && write_all(f, zeros, (size_t)((4 - end % 4) % 4)) &&
       write_all(f, words, word_count * 4);
  if (!ok)
    rc = mprof__error_set(MPROF_EIO, "%s: cannot write: %s", path,
                          strerror(errno));
  int closed = mprof__file_out_close(&fo, !rc);
  rc = rc ? rc : closed;
  if (rc)
    goto done;
  if (report)
    mprof__result_store(report, &rep, &report_versions);
done:
  if (fo.f)
    mprof__file_out_close(&fo, 0);
  free(words);
  free(groups);
  free(opcode_of);
  free(opcode_kernel);
  free(es);
  free(dev_width);
  free(dev_base);
  free(c.kernel_ok);
  return rc;
}
