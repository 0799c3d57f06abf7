/*
 * mprof-render — the model every view draws from: a trace, its PC sidecar,
 * and what is derived from them once at open.
 *
 * Kernels are grouped per (device, mangled name), as libmprof's join does,
 * and ordered by total time, so index 0 is the dominant kernel. PC samples
 * come from the trace (per device) or, when it has none, from the sidecar;
 * SASS and source lines come from the sidecar. Nothing here is per launch
 * except one pass over the launches to sum them up: drawing uses the
 * trace's per-stream arrays directly.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render_internal.h"

/* Kernel colours by rank: distinct, readable under white text. */
static const uint32_t kernel_palette[] = {
    0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948,
    0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d, 0x499894, 0xd37295};
#define PALETTE_SIZE (sizeof kernel_palette / sizeof kernel_palette[0])

/* ---- a (device, name) -> index hash ------------------------------------
 */

typedef struct name_slot {
  const char *name; /* NULL: empty */
  uint32_t device;
  int32_t value;
} name_slot;

typedef struct name_map {
  name_slot *slots;
  size_t capacity; /* power of two */
  size_t used;
} name_map;

static uint64_t hash_name(const char *s, uint32_t device) {
  uint64_t h = 1469598103934665603ull ^ device;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int map_grow(name_map *m) {
  size_t cap = m->capacity ? m->capacity * 2 : 64;
  name_slot *slots = (name_slot *)calloc(cap, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; i < m->capacity; i++) {
    if (!m->slots[i].name)
      continue;
    size_t at = hash_name(m->slots[i].name, m->slots[i].device) & (cap - 1);
    while (slots[at].name)
      at = (at + 1) & (cap - 1);
    slots[at] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->capacity = cap;
  return 0;
}

/* The value for (device, name), or -1. */
static int32_t map_get(const name_map *m, uint32_t device, const char *name) {
  if (!m->capacity)
    return -1;
  size_t at = hash_name(name, device) & (m->capacity - 1);
  while (m->slots[at].name) {
    if (m->slots[at].device == device && strcmp(m->slots[at].name, name) == 0)
      return m->slots[at].value;
    at = (at + 1) & (m->capacity - 1);
  }
  return -1;
}

static int map_put(name_map *m, uint32_t device, const char *name,
                   int32_t value) {
  if ((m->used + 1) * 2 > m->capacity && map_grow(m))
    return -1;
  size_t at = hash_name(name, device) & (m->capacity - 1);
  while (m->slots[at].name)
    at = (at + 1) & (m->capacity - 1);
  m->slots[at].name = name;
  m->slots[at].device = device;
  m->slots[at].value = value;
  m->used++;
  return 0;
}

/* ---- building ------------------------------------------------------------
 */

typedef struct group {
  mprof_render_kernel k;
  size_t index; /* before ranking */
  uint32_t best_shape;
  uint64_t best_shape_time;
} group;

typedef struct triple {
  uint32_t group;
  uint32_t offset;
  uint32_t reason;
  uint64_t samples;
} triple;

typedef struct builder {
  mprof_render_model *m;
  name_map kernels;
  group *groups;
  size_t group_count, group_cap;
  triple *triples;
  size_t triple_count, triple_cap;
  size_t reason_cap;
} builder;

static int oom(void) { return mprof_render__fail("out of memory"); }

static int32_t group_for(builder *b, uint32_t device, const char *name,
                         const mprof_kernel_record *record) {
  int32_t g = map_get(&b->kernels, device, name);
  if (g >= 0) {
    if (!b->groups[g].k.record && record)
      b->groups[g].k.record = record;
    return g;
  }
  if (b->group_count == b->group_cap) {
    size_t cap = b->group_cap ? b->group_cap * 2 : 32;
    group *grown = (group *)realloc(b->groups, cap * sizeof *grown);
    if (!grown)
      return -1;
    b->groups = grown;
    b->group_cap = cap;
  }
  group *gr = &b->groups[b->group_count];
  memset(gr, 0, sizeof *gr);
  gr->k.mangled = name;
  gr->k.device = device;
  gr->k.record = record;
  gr->best_shape = MPROF_INDEX_NONE;
  if (map_put(&b->kernels, device, name, (int32_t)b->group_count))
    return -1;
  return (int32_t)b->group_count++;
}

/* The model reason called @p name (prefix stripped), added when new. */
static int32_t reason_for(builder *b, const char *name) {
  mprof_render_model *m = b->m;
  const char *s = mprof_stall_reason_short_name(name);
  for (size_t i = 0; i < m->reason_count; i++)
    if (strcmp(m->reasons[i].name, s) == 0)
      return (int32_t)i;
  if (m->reason_count == b->reason_cap) {
    size_t cap = b->reason_cap ? b->reason_cap * 2 : 64;
    mprof_render_reason *r =
        (mprof_render_reason *)realloc(m->reasons, cap * sizeof *r);
    if (!r)
      return -1;
    m->reasons = r;
    char **names = (char **)realloc(m->reason_names, cap * sizeof *names);
    if (!names)
      return -1;
    m->reason_names = names;
    b->reason_cap = cap;
  }
  char *copy = strdup(s);
  if (!copy)
    return -1;
  mprof_render_reason *r = &m->reasons[m->reason_count];
  m->reason_names[m->reason_count] = copy;
  r->name = copy;
  size_t len = strlen(copy);
  r->not_issued = len > 11 && strcmp(copy + len - 11, "_not_issued") == 0;
  r->family = (uint32_t)mprof_render_reason_family(copy);
  r->color = 0;
  return (int32_t)m->reason_count++;
}

static int32_t reason_unnamed(builder *b, uint32_t index) {
  char name[48];
  snprintf(name, sizeof name, "reason_%u", index);
  return reason_for(b, name);
}

static int add_triple(builder *b, uint32_t g, uint32_t offset, uint32_t reason,
                      uint64_t samples) {
  if (b->triple_count == b->triple_cap) {
    size_t cap = b->triple_cap ? b->triple_cap * 2 : 1024;
    triple *t = (triple *)realloc(b->triples, cap * sizeof *t);
    if (!t)
      return -1;
    b->triples = t;
    b->triple_cap = cap;
  }
  b->triples[b->triple_count++] = (triple){g, offset, reason, samples};
  return 0;
}

static int by_group_offset(const void *a, const void *b) {
  const triple *x = (const triple *)a, *y = (const triple *)b;
  if (x->group != y->group)
    return x->group < y->group ? -1 : 1;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  return 0;
}

/* Samples from the trace's PC_SAMPLES, per (device, function name). */
static int collect_trace_samples(builder *b) {
  const mprof_trace *t = b->m->trace;
  size_t n, devices;
  mprof_trace_devices(t, &devices);
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(t, &n);
  /* (device, CUPTI index) -> model reason, as a dense table per device. */
  uint32_t max_index = 0;
  for (size_t i = 0; i < n; i++)
    if (sr[i].index + 1 > max_index && sr[i].index < 4096)
      max_index = sr[i].index + 1;
  size_t table_devices = devices ? devices : 1;
  int32_t *table = NULL;
  if (max_index) {
    table = (int32_t *)malloc(table_devices * max_index * sizeof *table);
    if (!table)
      return oom();
    for (size_t i = 0; i < table_devices * max_index; i++)
      table[i] = -1;
    for (size_t i = 0; i < n; i++) {
      if (sr[i].index >= max_index || sr[i].device >= table_devices)
        continue;
      int32_t r = reason_for(b, mprof_trace_string(t, sr[i].name));
      if (r < 0) {
        free(table);
        return oom();
      }
      table[(size_t)sr[i].device * max_index + sr[i].index] = r;
    }
  }
  const mprof_pc_sample_record *pc = mprof_trace_pc_samples(t, &n);
  for (size_t i = 0; i < n; i++) {
    if (!pc[i].samples)
      continue;
    const char *name = mprof_trace_string(t, pc[i].function_name);
    int32_t g = group_for(b, pc[i].device, name, NULL);
    int32_t r = -1;
    if (pc[i].stall_reason < max_index && pc[i].device < table_devices)
      r = table[(size_t)pc[i].device * max_index + pc[i].stall_reason];
    if (r < 0)
      r = reason_unnamed(b, pc[i].stall_reason);
    if (g < 0 || r < 0 ||
        add_triple(b, (uint32_t)g, pc[i].pc_offset, (uint32_t)r,
                   pc[i].samples)) {
      free(table);
      return oom();
    }
  }
  free(table);
  return 0;
}

/* Samples from the sidecar, for traces that keep none themselves. */
static int collect_sidecar_samples(builder *b) {
  const mprof_sidecar *sc = b->m->sidecar;
  size_t reasons = mprof_sidecar_stall_reason_count(sc);
  int32_t *table = (int32_t *)malloc((reasons ? reasons : 1) * sizeof *table);
  if (!table)
    return oom();
  for (size_t i = 0; i < reasons; i++) {
    const char *name = mprof_sidecar_stall_reason(sc, (uint32_t)i);
    table[i] = *name ? reason_for(b, name) : reason_unnamed(b, (uint32_t)i);
  }
  size_t functions = mprof_sidecar_function_count(sc);
  for (size_t f = 0; f < functions; f++) {
    const mprof_sidecar_function *fn = mprof_sidecar_function_at(sc, f);
    if (!fn->pc_count)
      continue;
    int32_t g = -1;
    if (fn->device != MPROF_INDEX_NONE) {
      g = group_for(b, fn->device, fn->name, NULL);
    } else {
      /* Seen on several devices: the first kernel of that name. */
      for (size_t i = 0; i < b->group_count && g < 0; i++)
        if (strcmp(b->groups[i].k.mangled, fn->name) == 0)
          g = (int32_t)i;
      if (g < 0)
        g = group_for(b, MPROF_INDEX_NONE, fn->name, NULL);
    }
    if (g < 0) {
      free(table);
      return oom();
    }
    for (size_t p = 0; p < fn->pc_count; p++) {
      const mprof_sidecar_pc *pc = &fn->pcs[p];
      for (uint32_t r = 0; r < pc->reason_count; r++) {
        if (!pc->counts[r])
          continue;
        int32_t mr = r < reasons ? table[r] : reason_unnamed(b, r);
        if (mr < 0 || add_triple(b, (uint32_t)g, pc->offset, (uint32_t)mr,
                                 pc->counts[r])) {
          free(table);
          return oom();
        }
      }
    }
  }
  free(table);
  return 0;
}

static int by_rank(const void *a, const void *b) {
  const group *x = (const group *)a, *y = (const group *)b;
  if (x->k.total_ns != y->k.total_ns)
    return x->k.total_ns > y->k.total_ns ? -1 : 1;
  if (x->k.samples != y->k.samples)
    return x->k.samples > y->k.samples ? -1 : 1;
  int c = strcmp(x->k.mangled, y->k.mangled);
  if (c)
    return c;
  return x->k.device < y->k.device ? -1 : x->k.device > y->k.device;
}

/* Sort context for the hot lists (qsort has no user pointer in C11). */
static const mprof_render_pc *hot_pcs;

static int by_samples(const void *a, const void *b) {
  const mprof_render_pc *x = &hot_pcs[*(const uint32_t *)a];
  const mprof_render_pc *y = &hot_pcs[*(const uint32_t *)b];
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int build_pcs(builder *b) {
  mprof_render_model *m = b->m;
  if (b->triple_count)
    qsort(b->triples, b->triple_count, sizeof *b->triples, by_group_offset);
  /* Count distinct (group, offset) pairs. */
  size_t pcs = 0;
  for (size_t i = 0; i < b->triple_count; i++)
    if (i == 0 || b->triples[i].group != b->triples[i - 1].group ||
        b->triples[i].offset != b->triples[i - 1].offset)
      pcs++;
  size_t reasons = m->reason_count ? m->reason_count : 1;
  m->pc_storage =
      (mprof_render_pc *)calloc(pcs ? pcs : 1, sizeof(*m->pc_storage));
  m->hot_storage = (uint32_t *)calloc(pcs ? pcs : 1, sizeof(uint32_t));
  m->reason_storage =
      (uint64_t *)calloc((pcs ? pcs : 1) * reasons, sizeof(uint64_t));
  if (!m->pc_storage || !m->hot_storage || !m->reason_storage)
    return oom();
  size_t at = (size_t)-1;
  for (size_t i = 0; i < b->triple_count; i++) {
    const triple *t = &b->triples[i];
    group *g = &b->groups[t->group];
    if (i == 0 || t->group != b->triples[i - 1].group ||
        t->offset != b->triples[i - 1].offset) {
      at++;
      mprof_render_pc *pc = &m->pc_storage[at];
      pc->offset = t->offset;
      pc->category = MPROF_CAT_OTHER;
      pc->reasons = &m->reason_storage[at * reasons];
      if (!g->k.pcs)
        g->k.pcs = pc;
      g->k.pc_count++;
    }
    mprof_render_pc *pc = &m->pc_storage[at];
    ((uint64_t *)pc->reasons)[t->reason] += t->samples;
    const mprof_render_reason *r = &m->reasons[t->reason];
    if (!r->not_issued) {
      pc->samples += t->samples;
      pc->family[r->family] += t->samples;
      g->k.samples += t->samples;
      g->k.family[r->family] += t->samples;
    }
  }
  return 0;
}

static void finish_kernel(mprof_render_model *m, mprof_render_kernel *k,
                          uint64_t kernel_time) {
  k->mean_ns = k->launches ? (double)k->total_ns / (double)k->launches : 0;
  k->share = kernel_time ? (double)k->total_ns / (double)kernel_time : 0;
  if (k->launches == 0)
    k->min_ns = 0;
  /* The sidecar function: by name and CRC, else by name alone. */
  if (m->sidecar) {
    uint64_t crc = k->record ? k->record->cubin_crc : 0;
    k->function = mprof_sidecar_find(m->sidecar, k->mangled, crc);
    if (!k->function && crc)
      k->function = mprof_sidecar_find(m->sidecar, k->mangled, 0);
  }
  for (size_t p = 0; p < k->pc_count; p++) {
    mprof_render_pc *pc = (mprof_render_pc *)&k->pcs[p];
    pc->insn =
        k->function ? mprof_sidecar_instruction(k->function, pc->offset) : NULL;
    pc->category = (uint32_t)mprof_render_opcode_category(
        pc->insn ? pc->insn->opcode : NULL);
  }
  if (k->pc_count) {
    uint32_t *hot = m->hot_storage + (k->pcs - m->pc_storage);
    for (size_t p = 0; p < k->pc_count; p++)
      hot[p] = (uint32_t)p;
    hot_pcs = k->pcs;
    qsort(hot, k->pc_count, sizeof *hot, by_samples);
    k->hot = hot;
  }
}

static const char *display_name(mprof_render_model *m, mprof_render_kernel *k,
                                size_t index) {
  if (k->record) {
    const char *d = mprof_trace_string(m->trace, k->record->demangled_name);
    if (*d)
      return d;
  }
  char *demangled = NULL;
  if (mprof_sass_demangle(&demangled, k->mangled) == 0 && demangled) {
    m->owned_names[index] = demangled;
    return demangled;
  }
  mprof_error_clear();
  return k->mangled;
}

static int stream_cmp_device(const mprof_stream_record *s, uint32_t a,
                             uint32_t b) {
  const mprof_stream_record *x = &s[a], *y = &s[b];
  uint32_t dx = x->device, dy = y->device;
  if (dx != dy)
    return dx < dy ? -1 : 1; /* MPROF_INDEX_NONE sorts last */
  if (x->context_id != y->context_id)
    return x->context_id < y->context_id ? -1 : 1;
  if (x->stream_id != y->stream_id)
    return x->stream_id < y->stream_id ? -1 : 1;
  return a < b ? -1 : a > b;
}

static const mprof_stream_record *sort_streams;
static int by_stream(const void *a, const void *b) {
  return stream_cmp_device(sort_streams, *(const uint32_t *)a,
                           *(const uint32_t *)b);
}

static const mprof_memop_record *sort_memops;
static int by_memop_start(const void *a, const void *b) {
  const mprof_memop_record *x = &sort_memops[*(const uint32_t *)a];
  const mprof_memop_record *y = &sort_memops[*(const uint32_t *)b];
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return 0;
}

static int build_rows(mprof_render_model *m) {
  size_t streams, devices, memops;
  const mprof_stream_record *st = mprof_trace_streams(m->trace, &streams);
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  const mprof_memop_record *mo = mprof_trace_memops(m->trace, &memops);

  m->memop_first = (size_t *)calloc(streams + 1, sizeof(size_t));
  m->memop_order = (uint32_t *)malloc((memops ? memops : 1) * sizeof(uint32_t));
  m->memop_longest =
      (uint64_t *)calloc(streams ? streams : 1, sizeof(uint64_t));
  if (!m->memop_first || !m->memop_order || !m->memop_longest)
    return oom();
  for (size_t i = 0; i < memops; i++) {
    m->memop_first[mo[i].stream + 1]++;
    uint64_t d = mo[i].end - mo[i].start;
    if (d > m->memop_longest[mo[i].stream])
      m->memop_longest[mo[i].stream] = d;
  }
  for (size_t s = 0; s < streams; s++)
    m->memop_first[s + 1] += m->memop_first[s];
  size_t *fill = (size_t *)malloc((streams + 1) * sizeof(size_t));
  if (!fill)
    return oom();
  memcpy(fill, m->memop_first, (streams + 1) * sizeof(size_t));
  for (size_t i = 0; i < memops; i++)
    m->memop_order[fill[mo[i].stream]++] = (uint32_t)i;
  free(fill);
  sort_memops = mo;
  for (size_t s = 0; s < streams; s++)
    qsort(m->memop_order + m->memop_first[s],
          m->memop_first[s + 1] - m->memop_first[s], sizeof(uint32_t),
          by_memop_start);

  uint32_t *order = (uint32_t *)malloc((streams ? streams : 1) * sizeof *order);
  if (!order)
    return oom();
  size_t used = 0;
  for (size_t s = 0; s < streams; s++)
    if (mprof_trace_stream_launch_count(m->trace, (uint32_t)s) ||
        m->memop_first[s + 1] > m->memop_first[s])
      order[used++] = (uint32_t)s;
  sort_streams = st;
  qsort(order, used, sizeof *order, by_stream);
  /* Count contexts per device to decide whether labels need them. */
  m->rows = (mprof_render_row *)calloc(2 * used + 1, sizeof *m->rows);
  m->row_labels = (char **)calloc(2 * used + 1, sizeof(char *));
  if (!m->rows || !m->row_labels) {
    free(order);
    return oom();
  }
  uint32_t current = MPROF_INDEX_NONE - 1; /* no device yet */
  for (size_t i = 0; i < used; i++) {
    const mprof_stream_record *s = &st[order[i]];
    char label[256];
    if (s->device != current) {
      current = s->device;
      mprof_render_row *r = &m->rows[m->row_count];
      r->kind = MPROF_ROW_DEVICE;
      r->device = s->device;
      if (s->device < devices)
        snprintf(label, sizeof label, "GPU %u  %s", dev[s->device].id,
                 mprof_trace_string(m->trace, dev[s->device].name));
      else
        snprintf(label, sizeof label, "Unknown device");
      m->row_labels[m->row_count] = strdup(label);
      r->label = m->row_labels[m->row_count++];
    }
    int many_contexts = 0;
    for (size_t j = 0; j < used; j++)
      if (st[order[j]].device == s->device &&
          st[order[j]].context_id != s->context_id)
        many_contexts = 1;
    const char *name = mprof_trace_string(m->trace, s->name);
    if (*name)
      snprintf(label, sizeof label, "%s", name);
    else if (many_contexts)
      snprintf(label, sizeof label, "stream %u (ctx %u)", s->stream_id,
               s->context_id);
    else
      snprintf(label, sizeof label, "stream %u", s->stream_id);
    mprof_render_row *r = &m->rows[m->row_count];
    r->kind = MPROF_ROW_STREAM;
    r->device = s->device;
    r->stream = order[i];
    m->row_labels[m->row_count] = strdup(label);
    r->label = m->row_labels[m->row_count++];
  }
  free(order);
  for (size_t i = 0; i < m->row_count; i++)
    if (!m->row_labels[i])
      return oom();
  return 0;
}

static int build(mprof_render_model *m) {
  builder b;
  memset(&b, 0, sizeof b);
  b.m = m;
  const mprof_trace *t = m->trace;
  size_t kernels, shapes, launches, samples;
  const mprof_kernel_record *kr = mprof_trace_kernels(t, &kernels);
  const mprof_shape_record *sh = mprof_trace_shapes(t, &shapes);
  const mprof_launch_record *la = mprof_trace_launches(t, &launches);
  mprof_trace_pc_samples(t, &samples);
  int rc = -1;
  int32_t *kernel_group =
      (int32_t *)malloc((kernels ? kernels : 1) * sizeof(int32_t));
  uint64_t *shape_time =
      (uint64_t *)calloc(shapes ? shapes : 1, sizeof(uint64_t));
  m->shape_kernel = (int32_t *)malloc((shapes ? shapes : 1) * sizeof(int32_t));
  if (!kernel_group || !shape_time || !m->shape_kernel) {
    oom();
    goto done;
  }
  for (size_t i = 0; i < kernels; i++) {
    kernel_group[i] = group_for(
        &b, kr[i].device, mprof_trace_string(t, kr[i].mangled_name), &kr[i]);
    if (kernel_group[i] < 0) {
      oom();
      goto done;
    }
  }
  for (size_t i = 0; i < shapes; i++)
    m->shape_kernel[i] = kernel_group[sh[i].kernel];
  /* The one pass over the launches. */
  for (size_t i = 0; i < launches; i++) {
    group *g = &b.groups[m->shape_kernel[la[i].shape]];
    uint64_t d = la[i].end - la[i].start;
    if (!g->k.launches || d < g->k.min_ns)
      g->k.min_ns = d;
    if (d > g->k.max_ns)
      g->k.max_ns = d;
    g->k.launches++;
    g->k.total_ns += d;
    shape_time[la[i].shape] += d;
  }
  for (size_t s = 0; s < shapes; s++) {
    group *g = &b.groups[m->shape_kernel[s]];
    if (g->best_shape == MPROF_INDEX_NONE ||
        shape_time[s] > g->best_shape_time) {
      g->best_shape = (uint32_t)s;
      g->best_shape_time = shape_time[s];
    }
  }
  if (samples ? collect_trace_samples(&b)
              : (m->sidecar ? collect_sidecar_samples(&b) : 0))
    goto done;
  if (build_pcs(&b))
    goto done;

  /* Rank the kernels and point shapes at their new places. */
  size_t count = b.group_count;
  size_t *rank_of = (size_t *)malloc((count ? count : 1) * sizeof(size_t));
  if (!rank_of) {
    oom();
    goto done;
  }
  for (size_t i = 0; i < count; i++)
    b.groups[i].index = i;
  if (count)
    qsort(b.groups, count, sizeof *b.groups, by_rank);
  for (size_t i = 0; i < count; i++)
    rank_of[b.groups[i].index] = i;
  for (size_t s = 0; s < shapes; s++)
    m->shape_kernel[s] = (int32_t)rank_of[m->shape_kernel[s]];
  free(rank_of);

  m->kernels =
      (mprof_render_kernel *)calloc(count ? count : 1, sizeof *m->kernels);
  m->owned_names = (char **)calloc(count ? count : 1, sizeof(char *));
  if (!m->kernels || !m->owned_names) {
    oom();
    goto done;
  }
  uint64_t kernel_time = 0;
  for (size_t i = 0; i < count; i++)
    kernel_time += b.groups[i].k.total_ns;
  size_t names = 0; /* distinct names so far: the palette index */
  for (size_t i = 0; i < count; i++) {
    mprof_render_kernel *k = &m->kernels[i];
    *k = b.groups[i].k;
    /* The same kernel on another GPU keeps its colour. */
    const mprof_render_kernel *twin = NULL;
    for (size_t j = 0; j < i && !twin; j++)
      if (strcmp(m->kernels[j].mangled, k->mangled) == 0)
        twin = &m->kernels[j];
    k->shape = b.groups[i].best_shape != MPROF_INDEX_NONE
                   ? &sh[b.groups[i].best_shape]
                   : NULL;
    k->name = display_name(m, k, i);
    finish_kernel(m, k, kernel_time);
    k->color = twin ? twin->color : kernel_palette[names++ % PALETTE_SIZE];
  }
  m->kernel_count = count;
  /* Reason colours: the family hue, shaded by rank inside the family. */
  int seen[MPROF_FAM_COUNT] = {0};
  for (size_t i = 0; i < m->reason_count; i++) {
    mprof_render_reason *r = &m->reasons[i];
    uint32_t base = mprof_render_family_color((int)r->family);
    if (r->not_issued) {
      r->color = rd_lighten(base, 0.6);
      continue;
    }
    int n = seen[r->family]++;
    r->color = n % 2 ? rd_lighten(base, 0.25 * ((n + 1) / 2))
                     : rd_darken(base, 0.18 * (n / 2));
  }
  rc = build_rows(m);
done:
  free(kernel_group);
  free(shape_time);
  free(b.groups);
  free(b.triples);
  free(b.kernels.slots);
  return rc;
}

/* A scratch file in $TMPDIR (or /tmp) named after @p what; the caller
 * unlinks it. 0 with the name in @p path. */
static int scratch_file(char *path, size_t size, const char *what,
                        const char *suffix) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  snprintf(path, size, "%s/mprof-%s-XXXXXX%s", dir, what, suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0)
    return mprof_render__fail("%s: cannot create a scratch file: %s", path,
                              strerror(errno));
  close(fd);
  return 0;
}

/* 1 when the file at @p path starts like MKPROF. */
static int is_mkprof(const char *path) {
  char head[MPROF_MKPROF_MAGIC_SIZE];
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return got >= 6 && memcmp(head, "MKPROF", 6) == 0;
}

/* Open @p path: a .mprof, or a .mkprof imported into a scratch trace
 * (kept, for its instruction params, in m->mkprof). */
static int open_trace(mprof_render_model *m, const char *path) {
  if (!is_mkprof(path)) {
    if (mprof_trace_open(&m->trace, path, NULL))
      return mprof_render__fail("%s", mprof_error_last());
    return 0;
  }
  if (mprof_mkprof_open(&m->mkprof, path))
    return mprof_render__fail("%s", mprof_error_last());
  char scratch[4096];
  if (scratch_file(scratch, sizeof scratch, "mkprof", ".mprof"))
    return -1;
  int rc = mprof_mkprof_to_trace(m->mkprof, scratch);
  if (!rc)
    rc = mprof_trace_open(&m->trace, scratch, NULL);
  if (rc)
    mprof_render__fail("%s: %s", path, mprof_error_last());
  /* The mapping stays valid once the name is gone. */
  unlink(scratch);
  return rc ? -1 : 0;
}

/* A trace imported from MKPROF names its source: load it too, when it is
 * still there, for the decoded instruction params in tooltips. */
static void attach_mkprof(mprof_render_model *m, const char *trace_path) {
  const char *mode = mprof_trace_meta(m->trace, "capture.mode");
  const char *source = mprof_trace_meta(m->trace, "mkprof.source");
  if (m->mkprof || !mode || strcmp(mode, "mkprof") != 0 || !source || !*source)
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s", source);
  if (source[0] != '/' && access(path, R_OK) != 0) {
    const char *slash = strrchr(trace_path, '/');
    if (slash)
      snprintf(path, sizeof path, "%.*s/%s", (int)(slash - trace_path),
               trace_path, source);
  }
  if (access(path, R_OK) != 0 || mprof_mkprof_open(&m->mkprof, path)) {
    m->mkprof = NULL;
    mprof_error_clear();
  }
}

static int model_open(mprof_render_model **out, const char *trace_path,
                      const char *sidecar_path, int demo);

int mprof_render_model_open(mprof_render_model **out, const char *trace_path,
                            const char *sidecar_path) {
  return model_open(out, trace_path, sidecar_path, 0);
}

int mprof_render_model_open_demo(mprof_render_model **out) {
  if (!out)
    return mprof_render__fail("mprof_render_model_open_demo: NULL argument");
  *out = NULL;
  char trace[4096], sidecar[4200];
  if (scratch_file(trace, sizeof trace, "demo-activity", ".mprof"))
    return -1;
  snprintf(sidecar, sizeof sidecar, "%s.pc.json", trace);
  /* 8 SMs, two blocks at a time each, 4 warps per block, phases with
   * instructions inside: an SM / block / warp hierarchy small enough to
   * read row by row. */
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.seed = 7;
  opts.launches = 3;
  opts.kernels = 1;
  opts.streams = 1;
  opts.spans = 20000;
  opts.span_warps = 4;
  opts.span_sms = 8;
  opts.span_imbalance = 0.3;
  opts.span_nested = 1;
  int rc = mprof_synth_write(trace, &opts);
  if (!rc)
    rc = mprof_synth_write_sidecar(trace, sidecar);
  if (rc) {
    mprof_render__fail("the demo: %s", mprof_error_last());
    unlink(trace);
    unlink(sidecar);
    return -1;
  }
  rc = model_open(out, trace, sidecar, 1);
  unlink(trace);
  unlink(sidecar);
  return rc;
}

static int model_open(mprof_render_model **out, const char *trace_path,
                      const char *sidecar_path, int demo) {
  if (!out || !trace_path)
    return mprof_render__fail("mprof_render_model_open: NULL argument");
  *out = NULL;
  mprof_render_model *m = (mprof_render_model *)calloc(1, sizeof *m);
  if (!m)
    return oom();
  m->demo = demo;
  if (open_trace(m, trace_path)) {
    mprof_mkprof_free(m->mkprof);
    free(m);
    return -1;
  }
  attach_mkprof(m, trace_path);
  char default_sidecar[4096];
  if (!sidecar_path) {
    snprintf(default_sidecar, sizeof default_sidecar, "%s.pc.json", trace_path);
    sidecar_path = default_sidecar;
  }
  size_t pc_records;
  mprof_trace_pc_samples(m->trace, &pc_records);
  if (access(sidecar_path, F_OK) == 0) {
    if (mprof_sidecar_load(&m->sidecar, sidecar_path)) {
      snprintf(m->note, sizeof m->note, "sidecar ignored: %s",
               mprof_error_last());
      m->sidecar = NULL;
      mprof_error_clear();
    }
  } else if (pc_records) {
    snprintf(m->note, sizeof m->note,
             "no SASS or source lines: %s is missing ('mprof sass TRACE' "
             "writes it)",
             sidecar_path);
  }
  uint64_t start, end;
  mprof_trace_time_bounds(m->trace, &start, &end);
  m->start_ns = start > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)start;
  m->end_ns = end > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)end;
  if (build(m) || mprof_render__build_spans(m)) {
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", trace_path,
             mprof_render_error());
    mprof_render_model_free(m);
    return mprof_render__fail("%s", message);
  }
  *out = m;
  return 0;
}

void mprof_render_model_free(mprof_render_model *m) {
  if (!m)
    return;
  mprof_diagnosis_free(m->diagnosis);
  mprof_join_free(m->join);
  for (size_t i = 0; m->owned_names && i < m->kernel_count; i++)
    free(m->owned_names[i]);
  free(m->owned_names);
  for (size_t i = 0; i < m->reason_count; i++)
    free(m->reason_names[i]);
  free(m->reason_names);
  free(m->reasons);
  for (size_t i = 0; m->row_labels && i < m->row_count; i++)
    free(m->row_labels[i]);
  free(m->row_labels);
  free(m->rows);
  free(m->memop_first);
  free(m->memop_order);
  free(m->memop_longest);
  free(m->pc_storage);
  free(m->hot_storage);
  free(m->reason_storage);
  free(m->kernels);
  free(m->shape_kernel);
  mprof_render__free_spans(m);
  mprof_sidecar_free(m->sidecar);
  mprof_trace_free(m->trace);
  free(m);
}

/* ---- accessors ---------------------------------------------------------
 */

const mprof_trace *mprof_render_model_trace(const mprof_render_model *m) {
  return m ? m->trace : NULL;
}

const mprof_sidecar *mprof_render_model_sidecar(const mprof_render_model *m) {
  return m ? m->sidecar : NULL;
}

const char *mprof_render_model_note(const mprof_render_model *m) {
  return m ? m->note : "";
}

void mprof_render_model_bounds(const mprof_render_model *m, int64_t *start,
                               int64_t *end) {
  *start = m ? m->start_ns : 0;
  *end = m ? m->end_ns : 0;
}

size_t mprof_render_kernel_count(const mprof_render_model *m) {
  return m ? m->kernel_count : 0;
}

const mprof_render_kernel *mprof_render_kernel_at(const mprof_render_model *m,
                                                  size_t index) {
  return m && index < m->kernel_count ? &m->kernels[index] : NULL;
}

int mprof_render_launch_kernel(const mprof_render_model *m, size_t launch) {
  size_t n;
  const mprof_launch_record *l = mprof_trace_launches(m->trace, &n);
  return launch < n ? m->shape_kernel[l[launch].shape] : -1;
}

int mprof_render_kernel_find(const mprof_render_model *m, const char *name) {
  if (!m || !name || !*name)
    return -1;
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strcmp(m->kernels[i].mangled, name) == 0 ||
        strcmp(m->kernels[i].name, name) == 0)
      return (int)i;
  char buf[1024];
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strcmp(rd_short_name(buf, sizeof buf, m->kernels[i].name), name) == 0)
      return (int)i;
  /* "gemm_tiled" finds "gemm_tiled<64, 64, 8>(...)". */
  for (size_t i = 0; i < m->kernel_count; i++) {
    rd_short_name(buf, sizeof buf, m->kernels[i].name);
    size_t n = strlen(name);
    if (strncmp(buf, name, n) == 0 && (buf[n] == '<' || buf[n] == '\0'))
      return (int)i;
  }
  for (size_t i = 0; i < m->kernel_count; i++)
    if (strstr(m->kernels[i].name, name) || strstr(m->kernels[i].mangled, name))
      return (int)i;
  return -1;
}

size_t mprof_render_reason_count(const mprof_render_model *m) {
  return m ? m->reason_count : 0;
}

const mprof_render_reason *mprof_render_reason_at(const mprof_render_model *m,
                                                  size_t index) {
  return m && index < m->reason_count ? &m->reasons[index] : NULL;
}

size_t mprof_render_row_count(const mprof_render_model *m) {
  return m ? m->row_count : 0;
}

const mprof_render_row *mprof_render_row_at(const mprof_render_model *m,
                                            size_t index) {
  return m && index < m->row_count ? &m->rows[index] : NULL;
}

/* ---- the diagnosis -------------------------------------------------------
 */

int mprof_render__diagnosis(const mprof_render_model *cm, int kernel,
                            render_diagnosis *out) {
  memset(out, 0, sizeof *out);
  out->occupancy = -1;
  out->waves = -1;
  out->limiter = "";
  mprof_render_model *m = (mprof_render_model *)cm; /* a cache, built once */
  if (!m || kernel < 0 || (size_t)kernel >= m->kernel_count)
    return -1;
  if (!m->diagnosis_tried) {
    m->diagnosis_tried = 1;
    mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
    jo.sidecar = m->sidecar;
    if (mprof_join_build(&m->join, m->trace, &jo) ||
        mprof_diagnose(&m->diagnosis, m->join, NULL)) {
      mprof_join_free(m->join);
      m->join = NULL;
      m->diagnosis = NULL;
      mprof_error_clear();
    }
  }
  if (!m->diagnosis)
    return -1;
  const mprof_render_kernel *k = &m->kernels[kernel];
  size_t devices;
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  uint32_t device_id =
      k->device < devices ? dev[k->device].id : MPROF_INDEX_NONE;
  uint32_t index = mprof_join_find_kernel(m->join, k->mangled, device_id);
  const mprof_kernel_diagnosis *d =
      index == MPROF_INDEX_NONE ? NULL
                                : mprof_diagnosis_kernel(m->diagnosis, index);
  if (!d)
    return -1;
  out->verdict = d->verdict;
  out->verdict_state = (int)d->verdict_state;
  for (size_t i = 0; i < d->dimension_count && out->dimension_count < 16; i++) {
    /* The span dimensions only for a trace with spans, as the reports. */
    if (d->dimensions[i].id >= MPROF_DIM_FIRST_SPAN && !m->span_total)
      continue;
    render_dimension *r = &out->dimensions[out->dimension_count++];
    r->title = mprof_dimension_title(d->dimensions[i].id);
    r->state = (int)d->dimensions[i].state;
    r->detail = d->dimensions[i].detail;
  }
  out->occupancy = d->occupancy.known ? d->occupancy.theoretical : -1;
  out->limiter = d->occupancy.known
                     ? mprof_occupancy_limiter_name(d->occupancy.limiter)
                     : "";
  out->waves = d->occupancy.known ? d->occupancy.waves : -1;
  if (d->stats) {
    out->median_ns = d->stats->median_ns;
    out->p90_ns = d->stats->p90_ns;
  }
  for (size_t i = 0; i < d->note_count && out->note_count < 8; i++)
    out->notes[out->note_count++] = d->notes[i];
  return 0;
}
