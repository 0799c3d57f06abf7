/*
 * mprof — a trace's activity spans as MKPROF1.2, the format of the
 * Megakernels viewer.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/mkprof.h"
#include "mprof/trace.h"
#include "mprof/writer.h"

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
  if (x->processor != y->processor)
    return x->processor < y->processor ? -1 : 1;
  if (x->launch != y->launch)
    return x->launch < y->launch ? -1 : 1;
  if (x->block != y->block)
    return x->block < y->block ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

typedef struct export_group {
  uint64_t start, end;
  uint32_t processor;
  size_t first, count; /* range in the sorted spans */
  uint32_t slot;       /* instruction index on its processor */
} export_group;

static int cmp_export_group(const void *a, const void *b) {
  const export_group *x = (const export_group *)a, *y = (const export_group *)b;
  if (x->processor != y->processor)
    return x->processor < y->processor ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

typedef struct export_event {
  uint64_t time;
  uint32_t type;
} export_event;

static int cmp_export_event(const void *a, const void *b) {
  const export_event *x = (const export_event *)a, *y = (const export_event *)b;
  if (x->time != y->time)
    return x->time < y->time ? -1 : 1;
  return x->type < y->type ? -1 : x->type > y->type;
}

static const uint32_t export_palette[] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
    0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0xaec7e8, 0xffbb78,
    0x98df8a, 0xff9896, 0xc5b0d5, 0xc49c94};

static void json_color(json_object *obj, uint32_t rgb) {
  char text[8];
  snprintf(text, sizeof text, "#%06x", rgb & 0xffffffu);
  json_object_object_add(obj, "color", json_object_new_string(text));
}

static json_object *json_range(uint32_t start, uint32_t end) {
  json_object *r = json_object_new_object();
  json_object_object_add(r, "start", json_object_new_int64(start));
  json_object_object_add(r, "end", json_object_new_int64(end));
  return r;
}

typedef struct export_ctx {
  const mprof_trace *trace;
  const mprof_mkprof_export_options *opts;
  regex_t regex;
  int have_regex;
  uint8_t *kernel_ok; /* per KERNELS record */
  uint32_t launch;    /* the LAUNCHES index opts->launch picked, or NONE */
} export_ctx;

/* The kernel of launch @p launch, or MPROF_INDEX_NONE. */
static uint32_t launch_kernel(const mprof_trace *t, uint32_t launch) {
  size_t nl, ns;
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_shape_record *s = mprof_trace_shapes(t, &ns);
  if (launch == MPROF_INDEX_NONE || launch >= nl)
    return MPROF_INDEX_NONE;
  return s[l[launch].shape].kernel;
}

static uint32_t launch_device_index(const mprof_trace *t, uint32_t launch) {
  size_t nl, ns;
  const mprof_launch_record *l = mprof_trace_launches(t, &nl);
  const mprof_stream_record *s = mprof_trace_streams(t, &ns);
  if (launch == MPROF_INDEX_NONE || launch >= nl)
    return MPROF_INDEX_NONE;
  return s[l[launch].stream].device;
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
  if (c->have_regex) {
    uint32_t k = launch_kernel(c->trace, sp->launch);
    return k != MPROF_INDEX_NONE && c->kernel_ok[k];
  }
  return 1;
}

/* Build the JSON config. Kernel k's instruction type is opcode k + 1. */
static char *export_config(const mprof_trace *t, const uint32_t *opcode_kernel,
                           size_t opcodes, uint32_t processors,
                           uint32_t max_instructions, uint32_t gpus) {
  size_t nr;
  const mprof_region_record *regions = mprof_trace_regions(t, &nr);
  json_object *root = json_object_new_object();
  json_object_object_add(root, "format_version", json_object_new_string("1.2"));
  json_object *types = json_object_new_object();
  json_object *noop = json_object_new_object();
  json_object_object_add(noop, "name", json_object_new_string("No Op"));
  json_color(noop, 0x808080);
  json_object_object_add(noop, "params", json_object_new_object());
  json_object_object_add(types, "0", noop);
  for (size_t i = 0; i < opcodes; i++) {
    json_object *ty = json_object_new_object();
    json_object_object_add(
        ty, "name", json_object_new_string(kernel_label(t, opcode_kernel[i])));
    json_color(ty, export_palette[i % 16]);
    json_object *params = json_object_new_object();
    json_object_object_add(params, "1", json_object_new_string("launch"));
    json_object_object_add(params, "2", json_object_new_string("block"));
    json_object_object_add(params, "3", json_object_new_string("spans"));
    json_object_object_add(params, "4",
                           json_object_new_string("events_dropped"));
    json_object_object_add(ty, "params", params);
    char key[24];
    snprintf(key, sizeof key, "%zu", i + 1);
    json_object_object_add(types, key, ty);
  }
  json_object_object_add(root, "instruction_types", types);
  json_object *format = json_object_new_object();
  json_object_object_add(format, "instruction_length",
                         json_object_new_int64(EXPORT_INSTRUCTION_LENGTH));
  json_object_object_add(format, "timing_length",
                         json_object_new_int64(EXPORT_TIMING_LENGTH));
  json_object_object_add(root, "instruction_format", format);
  json_object *units = json_object_new_object();
  for (int u = 0; u < 4; u++) {
    json_object *unit = json_object_new_object();
    json_object_object_add(unit, "name",
                           json_object_new_string(export_units[u].name));
    json_object_object_add(
        unit, "event_range",
        json_range(export_units[u].event_start, export_units[u].event_end));
    json_object_object_add(unit, "height_multiplier",
                           json_object_new_double(export_units[u].height));
    json_object_object_add(
        unit, "special_events",
        json_range(export_units[u].special_start, export_units[u].special_end));
    char key[4];
    snprintf(key, sizeof key, "%d", u);
    json_object_object_add(units, key, unit);
  }
  json_object_object_add(root, "functional_units", units);
  json_object_object_add(root, "main_functional_unit",
                         json_object_new_int64(1));
  json_object *events = json_object_new_object();
  for (size_t r = 0; r < nr && r < EXPORT_REGION_TYPES; r++) {
    json_object *e = json_object_new_object();
    char name[160];
    snprintf(name, sizeof name, "%.140s begins",
             mprof_trace_string(t, regions[r].name));
    json_object_object_add(e, "name", json_object_new_string(name));
    json_color(e, regions[r].color ? regions[r].color
                                   : export_palette[(r + 3) % 16]);
    char key[8];
    snprintf(key, sizeof key, "%zu", r);
    json_object_object_add(events, key, e);
  }
  if (nr > EXPORT_REGION_TYPES) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "name",
                           json_object_new_string("other region begins"));
    json_color(e, 0xcccccc);
    json_object_object_add(events, "14", e);
  }
  json_object *end = json_object_new_object();
  json_object_object_add(end, "name", json_object_new_string("span ends"));
  json_color(end, 0xffffff);
  json_object_object_add(events, "15", end);
  json_object_object_add(root, "event_types", events);
  json_object_object_add(root, "controller_events", json_object_new_object());
  json_object_object_add(root, "num_gpus", json_object_new_int64(gpus));
  json_object_object_add(root, "total_processors",
                         json_object_new_int64(processors));
  json_object_object_add(root, "max_instructions",
                         json_object_new_int64(max_instructions));
  json_object_object_add(root, "time_unit_flag", json_object_new_int64(1));
  json_object_object_add(root, "has_events_flag", json_object_new_int64(1));
  const char *text = json_object_to_json_string_ext(
      root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *copy = text ? strdup(text) : NULL;
  json_object_put(root);
  return copy;
}

static int write_all(FILE *f, const void *data, size_t size) {
  return size == 0 || fwrite(data, 1, size, f) == size;
}

int mprof_mkprof_export(const mprof_trace *t, const char *path,
                        const mprof_mkprof_export_options *opts,
                        mprof_mkprof_export_report *report) {
  if (!t || !path)
    return mprof__error_set(MPROF_EINVAL, "mprof_mkprof_export: NULL");
  mprof_mkprof_export_options defaults = MPROF_MKPROF_EXPORT_OPTIONS_INIT;
  if (!opts)
    opts = &defaults;
  if (opts->version != MPROF_MKPROF_EXPORT_OPTIONS_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "mprof_mkprof_export: options version %u unknown",
                            opts->version);
  if (report && report->version != MPROF_MKPROF_EXPORT_REPORT_VERSION)
    return mprof__error_set(MPROF_EVERSION,
                            "mprof_mkprof_export: report version %u unknown",
                            report->version);
  mprof_mkprof_export_report rep = MPROF_MKPROF_EXPORT_REPORT_INIT;
  size_t nspans, nkernels, ndevices, nlaunches, nregions;
  const mprof_span_record *spans = mprof_trace_spans(t, &nspans);
  const mprof_kernel_record *kernels = mprof_trace_kernels(t, &nkernels);
  const mprof_device_record *devices = mprof_trace_devices(t, &ndevices);
  const mprof_region_record *regions = mprof_trace_regions(t, &nregions);
  const mprof_launch_record *launches = mprof_trace_launches(t, &nlaunches);
  export_ctx c;
  memset(&c, 0, sizeof c);
  c.trace = t;
  c.opts = opts;
  c.launch = MPROF_INDEX_NONE;
  if (opts->kernel_regex) {
    int err = regcomp(&c.regex, opts->kernel_regex, REG_EXTENDED | REG_NOSUB);
    if (err) {
      char msg[256];
      regerror(err, &c.regex, msg, sizeof msg);
      return mprof__error_set(MPROF_EINVAL, "bad kernel regex '%s': %s",
                              opts->kernel_regex, msg);
    }
    c.have_regex = 1;
    c.kernel_ok = (uint8_t *)calloc(nkernels ? nkernels : 1, 1);
    if (!c.kernel_ok) {
      regfree(&c.regex);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < nkernels; k++)
      c.kernel_ok[k] =
          regexec(&c.regex, mprof_trace_string(t, kernels[k].mangled_name), 0,
                  NULL, 0) == 0 ||
          regexec(&c.regex, mprof_trace_string(t, kernels[k].demangled_name), 0,
                  NULL, 0) == 0;
  }

  /* --launch N: the N-th launch, in time order, of those with spans that
   * pass the kernel filter. */
  if (opts->launch != MPROF_INDEX_NONE) {
    uint8_t *has = (uint8_t *)calloc(nlaunches ? nlaunches : 1, 1);
    if (!has) {
      free(c.kernel_ok);
      if (c.have_regex)
        regfree(&c.regex);
      return mprof__error_set(MPROF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nspans; i++)
      if (spans[i].launch != MPROF_INDEX_NONE && export_keep(&c, &spans[i]))
        has[spans[i].launch] = 1;
    size_t with = 0;
    export_event *order = (export_event *)malloc(
        (nlaunches ? nlaunches : 1) * sizeof *order); /* (start, index) */
    for (size_t i = 0; order && i < nlaunches; i++)
      if (has[i]) {
        order[with].time = launches[i].start;
        order[with++].type = (uint32_t)i;
      }
    if (order) {
      qsort(order, with, sizeof *order, cmp_export_event);
      if (opts->launch < with)
        c.launch = order[opts->launch].type;
    }
    int no_memory = !order;
    free(order);
    free(has);
    if (no_memory || opts->launch >= with) {
      free(c.kernel_ok);
      if (c.have_regex)
        regfree(&c.regex);
      if (no_memory)
        return mprof__error_set(MPROF_ENOMEM, "out of memory");
      return mprof__error_set(MPROF_EINVAL,
                              "%s: there is no launch %u: %zu launches have "
                              "spans%s",
                              mprof_trace_path(t), opts->launch, with,
                              c.have_regex ? " and match the kernel filter"
                                           : "");
    }
  }

  /* Processors: the devices side by side, each as wide as its SM count or
   * the highest SM a span names. */
  size_t dev_slots = ndevices ? ndevices : 1;
  uint32_t *dev_width = (uint32_t *)calloc(dev_slots, sizeof *dev_width);
  uint32_t *dev_base = (uint32_t *)calloc(dev_slots, sizeof *dev_base);
  export_span *es = (export_span *)malloc((nspans ? nspans : 1) * sizeof *es);
  uint32_t *opcode_of = (uint32_t *)malloc((nkernels + 1) * sizeof *opcode_of);
  uint32_t *opcode_kernel =
      (uint32_t *)malloc((nkernels + 1) * sizeof *opcode_kernel);
  export_group *groups = NULL;
  char *config = NULL;
  uint32_t *words = NULL;
  FILE *f = NULL;
  char *partial = NULL;
  int rc = 0;
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
    uint32_t d = launch_device_index(t, spans[i].launch);
    if (d == MPROF_INDEX_NONE || d >= dev_slots)
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
    group_count += i == 0 || es[i].processor != es[i - 1].processor ||
                   es[i].launch != es[i - 1].launch ||
                   es[i].block != es[i - 1].block;
  groups = (export_group *)calloc(group_count, sizeof *groups);
  if (!groups) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 &&
        (es[i].processor != es[i - 1].processor ||
         es[i].launch != es[i - 1].launch || es[i].block != es[i - 1].block))
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
  for (size_t k = 0; k <= nkernels; k++)
    opcode_of[k] = 0;
  for (size_t i = 0; i < group_count; i++) {
    uint32_t k = launch_kernel(t, es[groups[i].first].launch);
    size_t slot = k == MPROF_INDEX_NONE ? nkernels : k;
    if (!opcode_of[slot]) {
      opcode_kernel[opcodes] = k;
      opcode_of[slot] = (uint32_t)++opcodes;
    }
  }
  uint32_t gpus = ndevices ? (uint32_t)ndevices : 1;
  config = export_config(t, opcode_kernel, opcodes, (uint32_t)processors,
                         max_instructions, gpus);
  uint64_t slots = (uint64_t)processors * max_instructions;
  uint64_t slot_words = EXPORT_INSTRUCTION_LENGTH + 2 + EXPORT_TIMING_LENGTH;
  if (!config || slots > SIZE_MAX / 4 / slot_words) {
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
    uint32_t k = launch_kernel(t, first_span->launch);
    uint32_t opcode = opcode_of[k == MPROF_INDEX_NONE ? nkernels : k];
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
    e[0] = opcode;
    e[1] = gr->processor;
    w[0] = opcode;
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

  size_t plen = strlen(path);
  partial = (char *)malloc(plen + sizeof ".partial");
  if (!partial) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  memcpy(partial, path, plen);
  memcpy(partial + plen, ".partial", sizeof ".partial");
  f = fopen(partial, "wb");
  if (!f) {
    rc = mprof__error_set(MPROF_EIO, "%s: %s", partial, strerror(errno));
    goto done;
  }
  size_t clen = strlen(config);
  size_t pad = (4 - (MPROF_MKPROF_MAGIC_SIZE + clen) % 4) % 4;
  static const char zeros[4] = {0, 0, 0, 0};
  int ok = write_all(f, MPROF_MKPROF_MAGIC, MPROF_MKPROF_MAGIC_SIZE) &&
           write_all(f, config, clen) && write_all(f, zeros, pad) &&
           write_all(f, words, word_count * 4);
  if (fclose(f) != 0)
    ok = 0;
  f = NULL;
  if (!ok || rename(partial, path) != 0) {
    rc = mprof__error_set(MPROF_EIO, "%s: %s", path, strerror(errno));
    remove(partial);
    goto done;
  }
  if (report)
    *report = rep;
done:
  if (f)
    fclose(f);
  free(partial);
  free(words);
  free(config);
  free(groups);
  free(opcode_of);
  free(opcode_kernel);
  free(es);
  free(dev_width);
  free(dev_base);
  free(c.kernel_ok);
  if (c.have_regex)
    regfree(&c.regex);
  return rc;
}
