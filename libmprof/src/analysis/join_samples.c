/*
 * mprof — the join: PC samples per kernel, instruction and stall reason, joined
 * to the SASS and lines of the sidecar.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/map.h"
#include "base/pool.h"
#include "format/set.h"
#include "internal.h"
#include "mprof/join.h"

#include "join_internal.h"

/* ---- stall reasons ------------------------------------------------------ */

/* The reason named @p name (@p len bytes), or MPROF_INDEX_NONE. */
static uint32_t reason_named(const mprof_join *j, const char *name, size_t len,
                             uint64_t hash) {
  size_t cursor = 0;
  uint32_t at;
  while ((at = mprof__map_next(&j->reason_map, hash, &cursor)) !=
         MPROF__MAP_NONE)
    if (strncmp(j->reasons[at].name, name, len) == 0 &&
        j->reasons[at].name[len] == 0)
      return at;
  return MPROF_INDEX_NONE;
}

/* The reason named @p short_name, added when new. Strings are borrowed
 * from the trace or the sidecar, which outlive the join. */
static int reason_add(mprof_join *j, uint32_t *out, const char *full_name,
                      const char *short_name) {
  size_t len = strlen(short_name);
  uint64_t hash = mprof__hash64(short_name, len);
  *out = reason_named(j, short_name, len, hash);
  if (*out != MPROF_INDEX_NONE)
    return 0;
  if (j->reason_count >= UINT32_MAX - 1)
    return MPROF_ENOMEM;
  if (MPROF__GROW(j->reasons, j->reason_cap, j->reason_count + 1) ||
      mprof__map_add(&j->reason_map, hash, (uint32_t)j->reason_count))
    return MPROF_ENOMEM;
  mprof_stall_reason *r = &j->reasons[j->reason_count];
  r->name = short_name;
  r->full_name = full_name;
  r->not_issued = (uint32_t)mprof_stall_reason_is_not_issued(short_name);
  r->plain = r->not_issued ? MPROF_INDEX_NONE : (uint32_t)j->reason_count;
  r->dimension = mprof_stall_reason_dimension(short_name);
  *out = (uint32_t)j->reason_count++;
  return 0;
}

/* Pair every X_not_issued with its X (looked up through the hash). */
static void reason_link(mprof_join *j) {
  for (size_t r = 0; r < j->reason_count; r++) {
    mprof_stall_reason *x = &j->reasons[r];
    if (!x->not_issued)
      continue;
    size_t len = strlen(x->name) - (sizeof MPROF_STALL_NOT_ISSUED_SUFFIX - 1);
    uint32_t plain = reason_named(j, x->name, len, mprof__hash64(x->name, len));
    if (plain != MPROF_INDEX_NONE)
      x->plain = plain;
  }
}

/* (device, CUPTI index) -> reason, sorted for binary search. */
typedef struct reason_key {
  uint64_t key;
  uint32_t reason;
} reason_key;

static int compare_reason_key(const void *a, const void *b) {
  uint64_t x = ((const reason_key *)a)->key, y = ((const reason_key *)b)->key;
  return x < y ? -1 : x > y;
}

static uint32_t reason_find(const reason_key *keys, size_t count,
                            uint32_t device, uint32_t index) {
  uint64_t key = ((uint64_t)device << 32) | index;
  size_t lo;
  MPROF__LOWER_BOUND(lo, count, mid, keys[mid].key < key);
  return lo < count && keys[lo].key == key ? keys[lo].reason : MPROF_INDEX_NONE;
}

static int unnamed_reason(mprof_join *j, uint32_t *out) {
  if (j->unnamed_reason == MPROF_INDEX_NONE) {
    int rc = reason_add(j, &j->unnamed_reason, "", "unnamed");
    if (rc)
      return rc;
  }
  *out = j->unnamed_reason;
  return 0;
}

/* The reason of CUPTI's name @p full: "unnamed" when it has no short name. */
static int reason_of(mprof_join *j, uint32_t *out, const char *full) {
  const char *short_name = mprof_stall_reason_short_name(full);
  return *short_name ? reason_add(j, out, full, short_name)
                     : unnamed_reason(j, out);
}

/* ---- PC samples --------------------------------------------------------- */

typedef struct pc_sort_ctx {
  const mprof_pc_sample_record *records;
} pc_sort_ctx;

static int compare_pc_records(const void *a, const void *b, void *ctx) {
  const mprof_pc_sample_record *r = ((const pc_sort_ctx *)ctx)->records;
  const mprof_pc_sample_record *x = &r[*(const uint32_t *)a];
  const mprof_pc_sample_record *y = &r[*(const uint32_t *)b];
  MPROF__ORDER_BY(device);
  MPROF__ORDER_BY(function_name);
  MPROF__ORDER_BY(cubin_crc);
  MPROF__ORDER_BY(function_index);
  MPROF__ORDER_BY(pc_offset);
  return 0;
}

/* Growable arrays of PCs and their reason lists while building. */
typedef struct pc_builder {
  pc_build *pcs;
  size_t count, cap;
  mprof_reason_samples *reasons;
  size_t reason_count, reason_cap;
  uint64_t *scratch; /* dense per-reason counts of the current PC */
  uint32_t *touched;
  size_t touched_count, touched_cap, scratch_cap;
} pc_builder;

static int builder_reserve_scratch(pc_builder *b, size_t reason_count) {
  size_t zeroed = b->scratch_cap;
  if (MPROF__GROW(b->touched, b->touched_cap, reason_count) ||
      MPROF__GROW(b->scratch, b->scratch_cap, reason_count))
    return MPROF_ENOMEM;
  memset(b->scratch + zeroed, 0,
         (b->scratch_cap - zeroed) * sizeof *b->scratch);
  return 0;
}

static void builder_count(pc_builder *b, uint32_t reason, uint64_t samples) {
  if (!samples)
    return;
  if (!b->scratch[reason])
    b->touched[b->touched_count++] = reason;
  b->scratch[reason] += samples;
}

static int compare_reason_samples(const void *a, const void *b) {
  const mprof_reason_samples *x = (const mprof_reason_samples *)a;
  const mprof_reason_samples *y = (const mprof_reason_samples *)b;
  MPROF__ORDER_BY_DESC(samples);
  return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* Emit the scratch counts as a reason list; fills *plain and *not_issued. */
static int builder_flush(pc_builder *b, const mprof_join *j, size_t *first,
                         size_t *count, uint64_t *plain, uint64_t *not_issued) {
  *first = b->reason_count;
  *count = 0;
  *plain = *not_issued = 0;
  if (MPROF__GROW(b->reasons, b->reason_cap,
                  b->reason_count + b->touched_count))
    return MPROF_ENOMEM;
  for (size_t i = 0; i < b->touched_count; i++) {
    uint32_t reason = b->touched[i];
    uint64_t samples = b->scratch[reason];
    b->scratch[reason] = 0;
    if (!samples)
      continue;
    b->reasons[b->reason_count].reason = reason;
    b->reasons[b->reason_count].samples = samples;
    b->reason_count++;
    (*count)++;
    if (j->reasons[reason].not_issued)
      *not_issued += samples;
    else
      *plain += samples;
  }
  b->touched_count = 0;
  if (*count > 1)
    qsort(b->reasons + *first, *count, sizeof *b->reasons,
          compare_reason_samples);
  return 0;
}

static int builder_add_pc(pc_builder *b, const mprof_join *j, uint32_t kernel,
                          uint64_t crc, uint32_t function_index,
                          uint32_t offset) {
  if (MPROF__GROW(b->pcs, b->cap, b->count + 1))
    return MPROF_ENOMEM;
  pc_build *p = &b->pcs[b->count];
  memset(p, 0, sizeof *p);
  p->kernel = kernel;
  p->pub.cubin_crc = crc;
  p->pub.function_index = function_index;
  p->pub.offset = offset;
  size_t first, count;
  int rc =
      builder_flush(b, j, &first, &count, &p->pub.samples, &p->pub.not_issued);
  if (rc)
    return rc;
  p->reason_first = first;
  p->pub.reason_count = count;
  if (p->pub.samples || p->pub.not_issued)
    b->count++;
  else
    b->reason_count = first;
  return 0;
}

static void builder_free(pc_builder *b) {
  free(b->pcs);
  free(b->reasons);
  free(b->scratch);
  free(b->touched);
}

/* The PC samples of one trace (a set's member, in place, or the trace
 * itself), in the order they are added up: by device, function, cubin,
 * function index and offset. */
typedef struct pc_part {
  const mprof_trace *trace;
  const mprof_pc_sample_record *records;
  size_t count;
  uint32_t device_base; /* added to its devices: the set's numbering */
  uint32_t *order;
} pc_part;

static int sort_part(void *ctx, size_t task) {
  pc_part *p = &((pc_part *)ctx)[task];
  p->records = mprof_trace_pc_samples(p->trace, &p->count);
  if (p->count > UINT32_MAX)
    return mprof__error_set(MPROF_EFORMAT, "%s: too many PC sample records",
                            mprof_trace_path(p->trace));
  p->order = (uint32_t *)malloc((p->count ? p->count : 1) * sizeof *p->order);
  if (!p->order)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory",
                            mprof_trace_path(p->trace));
  for (size_t i = 0; i < p->count; i++)
    p->order[i] = (uint32_t)i;
  pc_sort_ctx by = {p->records};
  qsort_r(p->order, p->count, sizeof *p->order, compare_pc_records, &by);
  return 0;
}

/* PC samples from the trace's PC_SAMPLES section. A set's traces are
 * sorted each on its own, on the join's threads, and added up in the set's
 * order: its devices come trace after trace, so that is the order of the
 * set's records sorted as one. */
static int collect_trace_samples(mprof_join *j, pc_builder *b) {
  const mprof_trace *t = j->trace;
  size_t table_count;
  const mprof_stall_reason_record *table =
      mprof_trace_stall_reasons(t, &table_count);
  size_t members = mprof__set_member_count(t);
  size_t part_count = members ? members : 1;
  reason_key *keys =
      (reason_key *)malloc((table_count ? table_count : 1) * sizeof *keys);
  pc_part *parts = (pc_part *)calloc(part_count, sizeof *parts);
  int rc = 0;
  if (!keys || !parts) {
    rc = MPROF_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < part_count; i++) {
    const mprof__move *move = NULL;
    parts[i].trace = members ? mprof__set_member(t, i, &move) : t;
    parts[i].device_base = move ? move->base[MPROF_SECTION_DEVICES] : 0;
  }
  for (size_t i = 0; i < table_count; i++) {
    keys[i].key = ((uint64_t)table[i].device << 32) | table[i].index;
    rc = reason_of(j, &keys[i].reason, mprof_trace_string(t, table[i].name));
    if (rc)
      goto done;
  }
  mprof__qsort(keys, table_count, sizeof *keys, compare_reason_key);
  if ((rc = mprof__pool_run(j->threads, part_count, sort_part, parts)) != 0)
    goto done;
  uint32_t kernel = MPROF_INDEX_NONE;
  for (size_t p = 0; p < part_count; p++) {
    const pc_part *part = &parts[p];
    const mprof_pc_sample_record *r = part->records;
    const uint32_t *order = part->order;
    size_t n = part->count;
    pc_sort_ctx ctx = {r};
    for (size_t i = 0; i < n; i++) {
      const mprof_pc_sample_record *x = &r[order[i]];
      const mprof_pc_sample_record *prev = i ? &r[order[i - 1]] : NULL;
      uint32_t device = x->device + part->device_base;
      if (!prev || prev->device != x->device ||
          prev->function_name != x->function_name) {
        const char *name = mprof_trace_string(part->trace, x->function_name);
        if ((rc = mprof__join_kernel_lookup(j, &kernel, name, device, 1)) != 0)
          goto done;
      }
      uint32_t reason = reason_find(keys, table_count, device, x->stall_reason);
      if (reason == MPROF_INDEX_NONE && (rc = unnamed_reason(j, &reason)) != 0)
        goto done;
      if ((rc = builder_reserve_scratch(b, j->reason_count)) != 0)
        goto done;
      builder_count(b, reason, x->samples);
      if (i + 1 == n || compare_pc_records(&order[i], &order[i + 1], &ctx) != 0)
        if ((rc = builder_add_pc(b, j, kernel, x->cubin_crc, x->function_index,
                                 x->pc_offset)) != 0)
          goto done;
    }
  }
done:
  for (size_t i = 0; parts && i < part_count; i++)
    free(parts[i].order);
  free(parts);
  free(keys);
  return rc;
}

/* PC samples from the sidecar, for traces that carry none themselves. */
static int collect_sidecar_samples(mprof_join *j, pc_builder *b) {
  const mprof_sidecar *sc = j->sidecar;
  size_t reason_names = mprof_sidecar_stall_reason_count(sc);
  uint32_t *map =
      (uint32_t *)malloc((reason_names ? reason_names : 1) * sizeof *map);
  if (!map)
    return MPROF_ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < reason_names && !rc; i++)
    rc = reason_of(j, &map[i], mprof_sidecar_stall_reason(sc, (uint32_t)i));
  size_t device_count;
  mprof_trace_devices(j->trace, &device_count);
  size_t fn_count = mprof_sidecar_function_count(sc);
  for (size_t f = 0; f < fn_count && !rc; f++) {
    const mprof_sidecar_function *fn = mprof_sidecar_function_at(sc, f);
    if (!fn || !fn->pc_count)
      continue;
    uint32_t device = fn->device < device_count ? fn->device : MPROF_INDEX_NONE;
    uint32_t kernel;
    if ((rc = mprof__join_kernel_lookup(j, &kernel, fn->name, device, 0)) != 0)
      break;
    if (kernel == MPROF_INDEX_NONE)
      for (size_t k = 0; k < j->kernel_count; k++)
        if (strcmp(j->kernels[k].mangled, fn->name) == 0) {
          kernel = (uint32_t)k;
          break;
        }
    if (kernel == MPROF_INDEX_NONE &&
        (rc = mprof__join_kernel_lookup(j, &kernel, fn->name, device, 1)) != 0)
      break;
    if ((rc = builder_reserve_scratch(b, j->reason_count + 1)) != 0)
      break;
    for (size_t p = 0; p < fn->pc_count && !rc; p++) {
      const mprof_sidecar_pc *pc = &fn->pcs[p];
      for (uint32_t r = 0; r < pc->reason_count && !rc; r++) {
        if (!pc->counts[r])
          continue;
        uint32_t reason;
        if (r < reason_names)
          reason = map[r];
        else if ((rc = unnamed_reason(j, &reason)) != 0)
          break;
        if ((rc = builder_reserve_scratch(b, j->reason_count)) != 0)
          break;
        builder_count(b, reason, pc->counts[r]);
      }
      if (!rc)
        rc = builder_add_pc(b, j, kernel, fn->cubin_crc, fn->function_index,
                            pc->offset);
    }
  }
  free(map);
  return rc;
}

static int compare_pc_build(const void *a, const void *b) {
  const pc_build *x = (const pc_build *)a, *y = (const pc_build *)b;
  MPROF__ORDER_BY(kernel);
  MPROF__ORDER_BY_DESC(pub.samples);
  MPROF__ORDER_BY(pub.cubin_crc);
  MPROF__ORDER_BY(pub.function_index);
  return x->pub.offset < y->pub.offset ? -1 : x->pub.offset > y->pub.offset;
}

static const mprof_sidecar_function *
sidecar_function(const mprof_join *j, const char *name, uint64_t crc) {
  if (!j->sidecar)
    return NULL;
  const mprof_sidecar_function *fn = mprof_sidecar_find(j->sidecar, name, crc);
  return fn ? fn : mprof_sidecar_find(j->sidecar, name, 0);
}

int mprof__join_build_samples(mprof_join *j) {
  pc_builder b;
  memset(&b, 0, sizeof b);
  size_t records = mprof__trace_records(j->trace, MPROF_SECTION_PC_SAMPLES);
  int rc = 0;
  if (records)
    rc = collect_trace_samples(j, &b);
  else if (j->sidecar)
    rc = collect_sidecar_samples(j, &b);
  if (rc) {
    builder_free(&b);
    return rc;
  }
  reason_link(j);
  mprof__qsort(b.pcs, b.count, sizeof *b.pcs, compare_pc_build);
  j->pcs = (mprof_pc_stats *)malloc((b.count ? b.count : 1) * sizeof *j->pcs);
  /* The PCs' reasons are the join's; the builder's list starts again for
   * the kernels' totals. */
  j->pc_reasons = b.reasons;
  b.reasons = NULL;
  b.reason_count = b.reason_cap = 0;
  if (!j->pcs) {
    builder_free(&b);
    return MPROF_ENOMEM;
  }
  /* Per-kernel reason totals, and which function carries most samples. */
  if ((rc = builder_reserve_scratch(&b, j->reason_count + 1)) != 0) {
    builder_free(&b);
    return rc;
  }
  for (size_t i = 0; i < b.count;) {
    uint32_t kernel = b.pcs[i].kernel;
    kernel_extra *e = &j->extra[kernel];
    mprof_kernel_stats *ks = &j->kernels[kernel];
    e->pc_first = i;
    /* Distinct functions (few: usually one) and the most-sampled one. */
    enum { TRACKED = 16 };
    uint64_t fn_crc[TRACKED], fn_samples[TRACKED];
    uint32_t fn_index[TRACKED];
    size_t fn_count = 0;
    size_t start = i;
    for (; i < b.count && b.pcs[i].kernel == kernel; i++) {
      pc_build *p = &b.pcs[i];
      j->pcs[i] = p->pub;
      j->pcs[i].reasons = j->pc_reasons + p->reason_first;
      for (size_t r = 0; r < p->pub.reason_count; r++)
        builder_count(&b, j->pcs[i].reasons[r].reason,
                      j->pcs[i].reasons[r].samples);
      ks->samples += p->pub.samples;
      ks->not_issued += p->pub.not_issued;
      size_t f;
      for (f = 0; f < fn_count; f++)
        if (fn_crc[f] == p->pub.cubin_crc &&
            fn_index[f] == p->pub.function_index)
          break;
      if (f == fn_count && fn_count < TRACKED) {
        fn_crc[f] = p->pub.cubin_crc;
        fn_index[f] = p->pub.function_index;
        fn_samples[f] = 0;
        fn_count++;
      }
      if (f < fn_count)
        fn_samples[f] += p->pub.samples;
    }
    ks->pc_count = i - start;
    ks->function_count = fn_count;
    uint64_t best = 0;
    for (size_t f = 0; f < fn_count; f++)
      if (f == 0 || fn_samples[f] > best) {
        best = fn_samples[f];
        ks->cubin_crc = fn_crc[f];
      }
    j->sample_total += ks->samples;
    if (!ks->launches)
      j->unmatched += ks->samples;
    /* Flush the kernel's totals into the kernel reason array. */
    uint64_t plain, not_issued;
    if (builder_flush(&b, j, &e->reason_first, &e->reason_count, &plain,
                      &not_issued)) {
      builder_free(&b);
      return MPROF_ENOMEM;
    }
  }
  j->kernel_reasons = b.reasons;
  b.reasons = NULL;
  builder_free(&b);
  return 0;
}

/* SASS and source lines from the sidecar. */
void mprof__join_attach_sidecar(mprof_join *j) {
  if (!j->sidecar)
    return;
  for (size_t k = 0; k < j->kernel_count; k++) {
    mprof_kernel_stats *ks = &j->kernels[k];
    kernel_extra *e = &j->extra[k];
    ks->function = sidecar_function(j, ks->mangled, ks->cubin_crc);
    const mprof_sidecar_function *fn = ks->function;
    uint64_t fn_crc = fn ? fn->cubin_crc : 0;
    for (size_t p = e->pc_first; p < e->pc_first + ks->pc_count; p++) {
      mprof_pc_stats *pc = &j->pcs[p];
      if (!fn || (pc->cubin_crc && fn_crc && pc->cubin_crc != fn_crc)) {
        fn = sidecar_function(j, ks->mangled, pc->cubin_crc);
        fn_crc = fn ? fn->cubin_crc : 0;
      }
      pc->instruction = fn ? mprof_sidecar_instruction(fn, pc->offset) : NULL;
    }
  }
}
