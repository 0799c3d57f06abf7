/*
 * mprof — join launches, kernel functions, PC samples, SASS and lines.
 *
 * Cost: a pass over the launches in stream order for counts, sums,
 * extremes and idle gaps, then usually two more that narrow the medians and
 * p90s to exact values with small histograms (no per-launch memory), and a
 * sort of the PC sample records.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/map.h"
#include "internal.h"
#include "mprof/join.h"
#include "mprof/error.h"
#include "mprof/sass.h"

#include "join_internal.h"

MPROF__VERSIONS(join_options, "join options",
                MPROF__END_OF(mprof_join_options, sidecar),
                MPROF__END_OF(mprof_join_options, flags),
                MPROF__END_OF(mprof_join_options, threads));

int mprof_join_options_init(mprof_join_options *opts, unsigned version) {
  mprof_join_options init = MPROF_JOIN_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &join_options);
}

/* ---- devices ------------------------------------------------------------ */

/* Two values of a device fact agree when either is unknown. */
static int agree(const char *a, const char *b) {
  return !a || !b || !*a || !*b || strcmp(a, b) == 0;
}

static int agree_u32(uint32_t a, uint32_t b) { return !a || !b || a == b; }

/* Whether devices @p a and @p b of a merged set are of two processes and
 * the same kind of GPU (name, compute capability, SMs); with @p same_id
 * also the same ordinal on the same host. */
static int same_kind(const mprof_trace *t, const mprof_device_record *dev,
                     uint32_t a, uint32_t b, int same_id) {
  const mprof_device_record *x = &dev[a], *y = &dev[b];
  uint32_t pa = mprof_trace_device_process(t, a);
  uint32_t pb = mprof_trace_device_process(t, b);
  if (pa == MPROF_INDEX_NONE || pb == MPROF_INDEX_NONE || pa == pb)
    return 0;
  if (!agree(mprof_trace_string(t, x->name), mprof_trace_string(t, y->name)) ||
      !agree_u32(x->cc_major, y->cc_major) ||
      !agree_u32(x->sm_count, y->sm_count) ||
      (x->cc_major && y->cc_major && x->cc_minor != y->cc_minor))
    return 0;
  return !same_id ||
         (x->id == y->id && agree(mprof_trace_process_meta(t, pa, "host"),
                                  mprof_trace_process_meta(t, pb, "host")));
}

/* In a merged set, each process's device counts as the first device of an
 * earlier process that is the same kind of GPU: the same ordinal on the
 * same host when there is one (two processes sharing a GPU), else any (the
 * ranks of one job, a GPU each), so a kernel is one across processes. */
static int build_devices(mprof_join *j, unsigned flags) {
  const mprof_device_record *dev =
      mprof_trace_devices(j->trace, &j->device_count);
  j->device_as = (uint32_t *)malloc((j->device_count ? j->device_count : 1) *
                                    sizeof *j->device_as);
  if (!j->device_as)
    return MPROF_ENOMEM;
  /* Pairs are compared: past 4096 devices (512 ranks of 8 GPUs each, and
   * more) each process's devices stay their own rather than cost minutes. */
  int merge = !(flags & MPROF_JOIN_BY_PROCESS) &&
              mprof_trace_process_count(j->trace) > 1 &&
              j->device_count <= 4096;
  for (size_t d = 0; d < j->device_count; d++) {
    j->device_as[d] = (uint32_t)d;
    for (int same_id = 1; merge && same_id >= 0; same_id--) {
      size_t e = 0;
      while (e < d &&
             !(j->device_as[e] == e &&
               same_kind(j->trace, dev, (uint32_t)e, (uint32_t)d, same_id)))
        e++;
      if (e < d) {
        j->device_as[d] = (uint32_t)e;
        break;
      }
    }
  }
  return 0;
}

/* ---- kernels ------------------------------------------------------------ */

static uint64_t kernel_key_hash(const char *name, uint32_t device) {
  return mprof__hash64(name, strlen(name)) ^
         ((uint64_t)device * 0x9e3779b97f4a7c15ull);
}

/* The kernel for (@p device, @p mangled), created when @p create. */
int mprof__join_kernel_lookup(mprof_join *j, uint32_t *out, const char *mangled,
                              uint32_t device, int create) {
  *out = MPROF_INDEX_NONE;
  uint32_t own = device; /* the record's own device: its process */
  if (device < j->device_count)
    device = j->device_as[device];
  uint64_t h = kernel_key_hash(mangled, device);
  size_t cursor = 0;
  uint32_t at;
  while ((at = mprof__map_next(&j->kernel_map, h, &cursor)) !=
         MPROF__MAP_NONE) {
    const mprof_kernel_stats *k = &j->kernels[at];
    if (k->device == device && strcmp(k->mangled, mangled) == 0) {
      *out = at;
      return 0;
    }
  }
  if (!create)
    return 0;
  if (j->kernel_count >= UINT32_MAX - 1)
    return mprof__error_set(MPROF_EFORMAT, "%s: too many kernels",
                            mprof_trace_path(j->trace));
  if (MPROF__GROW(j->kernels, j->kernel_cap, j->kernel_count + 1) ||
      MPROF__GROW(j->extra, j->extra_cap, j->kernel_count + 1))
    return MPROF_ENOMEM;
  if (mprof__map_add(&j->kernel_map, h, (uint32_t)j->kernel_count))
    return MPROF_ENOMEM;
  size_t index = j->kernel_count++;
  mprof_kernel_stats *k = &j->kernels[index];
  memset(k, 0, sizeof *k);
  memset(&j->extra[index], 0, sizeof j->extra[index]);
  k->name = mangled;
  k->mangled = mangled;
  k->device = device;
  k->device_id = MPROF_INDEX_NONE;
  size_t device_count;
  const mprof_device_record *dev = mprof_trace_devices(j->trace, &device_count);
  if (device < device_count)
    k->device_id = dev[device].id;
  k->process = mprof_trace_device_process(j->trace, own);
  k->process_count = k->process != MPROF_INDEX_NONE;
  j->extra[index].last_process = k->process;
  *out = (uint32_t)index;
  return 0;
}

/* ---- ordering ----------------------------------------------------------- */

/* mprof's own kernels are named mprof__* (demangled, or the mangled
 * name's identifier after _Z and its length). */
static int is_mprofs_own(const char *name, const char *mangled) {
  static const char own[] = "mprof__";
  if (strncmp(name, own, sizeof own - 1) == 0 ||
      strncmp(mangled, own, sizeof own - 1) == 0)
    return 1;
  if (strncmp(mangled, "_Z", 2) != 0)
    return 0;
  const char *p = mangled + 2;
  while (*p >= '0' && *p <= '9')
    p++;
  return p > mangled + 2 && strncmp(p, own, sizeof own - 1) == 0;
}

static int compare_kernel_rank(const void *a, const void *b, void *ctx) {
  const mprof_kernel_stats *k = (const mprof_kernel_stats *)ctx;
  const mprof_kernel_stats *x = &k[*(const uint32_t *)a];
  const mprof_kernel_stats *y = &k[*(const uint32_t *)b];
  int x_own = (x->flags & MPROF_KERNEL_MPROF_OWN) != 0;
  int y_own = (y->flags & MPROF_KERNEL_MPROF_OWN) != 0;
  if (x_own != y_own)
    return x_own - y_own;
  MPROF__ORDER_BY_DESC(total_ns);
  MPROF__ORDER_BY_DESC(samples);
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  MPROF__ORDER_BY(device_id);
  return x->device < y->device ? -1 : x->device > y->device;
}

static int compare_shape_total(const void *a, const void *b) {
  const mprof_shape_stats *x = (const mprof_shape_stats *)a;
  const mprof_shape_stats *y = (const mprof_shape_stats *)b;
  MPROF__ORDER_BY_DESC(total_ns);
  return x->shape_record < y->shape_record ? -1
                                           : x->shape_record > y->shape_record;
}

/* Drop kernels with neither launches nor samples, and order the rest. */
static int order_kernels(mprof_join *j) {
  size_t n = j->kernel_count;
  uint32_t *order = (uint32_t *)malloc((n ? n : 1) * sizeof *order);
  uint32_t *rank = (uint32_t *)malloc((n ? n : 1) * sizeof *rank);
  mprof_kernel_stats *k = (mprof_kernel_stats *)malloc((n ? n : 1) * sizeof *k);
  kernel_extra *e = (kernel_extra *)malloc((n ? n : 1) * sizeof *e);
  mprof_shape_stats *shapes = (mprof_shape_stats *)malloc(
      (j->shape_count ? j->shape_count : 1) * sizeof *shapes);
  if (!order || !rank || !k || !e || !shapes) {
    free(order);
    free(rank);
    free(k);
    free(e);
    free(shapes);
    return MPROF_ENOMEM;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    mprof_kernel_stats *s = &j->kernels[i];
    if (is_mprofs_own(s->name, s->mangled))
      s->flags |= MPROF_KERNEL_MPROF_OWN;
    if (s->launches || s->samples || s->not_issued)
      order[kept++] = (uint32_t)i;
  }
  qsort_r(order, kept, sizeof *order, compare_kernel_rank, j->kernels);
  for (size_t i = 0; i < n; i++)
    rank[i] = MPROF_INDEX_NONE;
  size_t shape_fill = 0;
  for (size_t r = 0; r < kept; r++) {
    rank[order[r]] = (uint32_t)r;
    k[r] = j->kernels[order[r]];
    e[r] = j->extra[order[r]];
    /* Shapes of this kernel, largest total first. */
    size_t first = shape_fill;
    for (size_t s = 0; s < k[r].shape_count; s++)
      shapes[shape_fill++] = j->shapes[e[r].shape_first + s];
    if (k[r].shape_count > 1)
      qsort(shapes + first, k[r].shape_count, sizeof *shapes,
            compare_shape_total);
    e[r].shape_first = first;
  }
  for (size_t i = 0; i < j->shape_record_count; i++)
    j->shape_kernel[i] = rank[j->shape_kernel[i]];
  for (size_t i = 0; i < j->kernel_record_count; i++)
    j->record_kernel[i] = rank[j->record_kernel[i]];
  free(order);
  free(rank);
  free(j->kernels);
  free(j->extra);
  free(j->shapes);
  j->kernels = k;
  j->extra = e;
  j->shapes = shapes;
  j->shape_count = shape_fill;
  j->kernel_count = kept;
  j->kernel_cap = j->extra_cap = n ? n : 1;
  free(j->shape_group);
  j->shape_group = NULL;
  /* Rebuild the name map for the new order. */
  mprof__map_free(&j->kernel_map);
  if (mprof__map_reserve(&j->kernel_map, kept))
    return MPROF_ENOMEM;
  for (size_t r = 0; r < kept; r++)
    if (mprof__map_add(&j->kernel_map,
                       kernel_key_hash(k[r].mangled, k[r].device), (uint32_t)r))
      return MPROF_ENOMEM;
  return 0;
}

/* A kernel seen only in PC samples (launched by another kernel, which
 * CUPTI does not record, or before the capture began) has no KERNELS
 * record to name it: demangle its symbol here. */
static int name_unlaunched(mprof_join *j) {
  for (size_t i = 0; i < j->kernel_count; i++) {
    mprof_kernel_stats *k = &j->kernels[i];
    char *demangled;
    if (k->launches || k->name != k->mangled ||
        strncmp(k->mangled, "_Z", 2) != 0 ||
        mprof_sass_demangle(&demangled, k->mangled) != 0)
      continue;
    k->name = mprof__arena_strdup(&j->names, demangled);
    free(demangled);
    if (!k->name)
      return MPROF_ENOMEM;
  }
  return 0;
}

/* The kernels' short names, unique within the trace, in kernel order: of
 * the demangled name, demangled here when the trace kept only the mangled
 * one (as the viewer shows it). */
static int build_short_names(mprof_join *j) {
  const char **names = (const char **)malloc(
      (j->kernel_count ? j->kernel_count : 1) * sizeof *names);
  if (!names)
    return MPROF_ENOMEM;
  for (size_t i = 0; i < j->kernel_count; i++) {
    const mprof_kernel_stats *k = &j->kernels[i];
    char *demangled = NULL;
    names[i] = k->name;
    if (strcmp(k->name, k->mangled) != 0 || strncmp(k->mangled, "_Z", 2) != 0)
      continue;
    if (mprof_sass_demangle(&demangled, k->mangled) != 0 || !demangled) {
      mprof_error_clear();
      continue;
    }
    names[i] = mprof__arena_strdup(&j->names, demangled);
    free(demangled);
    if (!names[i]) {
      free(names);
      return MPROF_ENOMEM;
    }
  }
  int rc = mprof_name_set_build(&j->short_names, names, j->kernel_count);
  free(names);
  return rc;
}

int mprof_join_build(mprof_join **out, const mprof_trace *trace,
                     const mprof_join_options *opts) {
  mprof_join_options defaults = MPROF_JOIN_OPTIONS_INIT;
  if (!out || !trace)
    return mprof__error_set(MPROF_EINVAL, "mprof_join_build: NULL argument");
  *out = NULL;
  opts = mprof__options_or_defaults(opts, &defaults, 1,
                                    MPROF_JOIN_OPTIONS_VERSION, "join");
  if (!opts)
    return MPROF_EVERSION;
  unsigned flags = opts->version >= 2 ? opts->flags : 0;
  mprof_join *j = (mprof_join *)calloc(1, sizeof *j);
  if (!j)
    return mprof__error_set(MPROF_ENOMEM, "%s: out of memory",
                            mprof_trace_path(trace));
  j->trace = trace;
  j->sidecar = opts->sidecar;
  j->threads = opts->version >= 3 ? opts->threads : 0;
  j->unnamed_reason = MPROF_INDEX_NONE;
  int rc = build_devices(j, flags);
  if (!rc)
    rc = mprof__join_build_kernels(j);
  if (!rc)
    rc = mprof__join_build_launches(j);
  if (!rc)
    rc = mprof__join_build_samples(j);
  if (!rc)
    rc = name_unlaunched(j);
  if (!rc)
    rc = order_kernels(j);
  if (!rc)
    mprof__join_attach_sidecar(j);
  if (!rc)
    rc = mprof__join_build_memory(j);
  if (!rc)
    rc = build_short_names(j);
  if (rc) {
    mprof_join_free(j);
    if (rc == MPROF_ENOMEM)
      return mprof__error_set(MPROF_ENOMEM, "%s: out of memory while joining",
                              mprof_trace_path(trace));
    return rc;
  }
  *out = j;
  return 0;
}

void mprof_join_free(mprof_join *join) {
  if (!join)
    return;
  free(join->kernels);
  free(join->extra);
  free(join->device_as);
  mprof__map_free(&join->kernel_map);
  free(join->record_kernel);
  free(join->shape_kernel);
  free(join->shape_group);
  free(join->shapes);
  free(join->pcs);
  free(join->memory);
  free(join->pc_reasons);
  free(join->kernel_reasons);
  free(join->reasons);
  mprof__map_free(&join->reason_map);
  mprof__arena_free(&join->names);
  mprof_name_set_free(join->short_names);
  free(join);
}

const mprof_trace *mprof_join_trace(const mprof_join *join) {
  return join ? join->trace : NULL;
}

uint32_t mprof_join_device_as(const mprof_join *join, uint32_t device) {
  return join && device < join->device_count ? join->device_as[device]
                                             : MPROF_INDEX_NONE;
}

const mprof_name_set *mprof_join_kernel_names(const mprof_join *join) {
  return join ? join->short_names : NULL;
}

const char *mprof_join_kernel_short(const mprof_join *join, size_t index) {
  return mprof_name_set_short(join ? join->short_names : NULL, index);
}

const mprof_sidecar *mprof_join_sidecar(const mprof_join *join) {
  return join ? join->sidecar : NULL;
}

uint64_t mprof_join_kernel_time(const mprof_join *join) {
  return join ? join->kernel_time : 0;
}

uint64_t mprof_join_sample_total(const mprof_join *join) {
  return join ? join->sample_total : 0;
}

uint64_t mprof_join_unmatched_samples(const mprof_join *join) {
  return join ? join->unmatched : 0;
}

size_t mprof_join_gpu_count(const mprof_join *join) {
  size_t n = 0;
  for (size_t d = 0; join && d < join->device_count; d++)
    n += join->device_as[d] == d;
  return n;
}

size_t mprof_join_kernel_count(const mprof_join *join) {
  return join ? join->kernel_count : 0;
}

const mprof_kernel_stats *mprof_join_kernel(const mprof_join *join,
                                            size_t index) {
  return join && index < join->kernel_count ? &join->kernels[index] : NULL;
}

uint32_t mprof_join_launch_kernel(const mprof_join *join, size_t launch) {
  size_t n;
  if (!join)
    return MPROF_INDEX_NONE;
  const mprof_launch_record *l = mprof_trace_launches(join->trace, &n);
  if (launch >= n)
    return MPROF_INDEX_NONE;
  return join->shape_kernel[l[launch].shape];
}

uint32_t mprof_join_find_kernel(const mprof_join *join, const char *name,
                                uint32_t device_id) {
  if (!join || !name)
    return MPROF_INDEX_NONE;
  for (size_t k = 0; k < join->kernel_count; k++) {
    const mprof_kernel_stats *ks = &join->kernels[k];
    if (device_id != MPROF_INDEX_NONE && ks->device_id != device_id)
      continue;
    if (strcmp(ks->mangled, name) == 0 || strcmp(ks->name, name) == 0)
      return (uint32_t)k;
  }
  return MPROF_INDEX_NONE;
}

const mprof_shape_stats *mprof_join_shapes(const mprof_join *join,
                                           size_t kernel, size_t *count) {
  size_t n = join && kernel < join->kernel_count
                 ? join->kernels[kernel].shape_count
                 : 0;
  if (count)
    *count = n;
  return n ? join->shapes + join->extra[kernel].shape_first : NULL;
}

const mprof_pc_stats *mprof_join_pcs(const mprof_join *join, size_t kernel,
                                     size_t *count) {
  size_t n =
      join && kernel < join->kernel_count ? join->kernels[kernel].pc_count : 0;
  if (count)
    *count = n;
  return n ? join->pcs + join->extra[kernel].pc_first : NULL;
}

const mprof_reason_samples *mprof_join_kernel_reasons(const mprof_join *join,
                                                      size_t kernel,
                                                      size_t *count) {
  size_t n = join && kernel < join->kernel_count
                 ? join->extra[kernel].reason_count
                 : 0;
  if (count)
    *count = n;
  return n ? join->kernel_reasons + join->extra[kernel].reason_first : NULL;
}

size_t mprof_join_reason_count(const mprof_join *join) {
  return join ? join->reason_count : 0;
}

const mprof_stall_reason *mprof_join_reason(const mprof_join *join,
                                            size_t index) {
  return join && index < join->reason_count ? &join->reasons[index] : NULL;
}

const mprof_shape_stats *mprof_join_shape(const mprof_join *join, size_t kernel,
                                          size_t index) {
  size_t count;
  const mprof_shape_stats *all = mprof_join_shapes(join, kernel, &count);
  return index < count ? &all[index] : NULL;
}

const mprof_pc_stats *mprof_join_pc(const mprof_join *join, size_t kernel,
                                    size_t index) {
  size_t count;
  const mprof_pc_stats *all = mprof_join_pcs(join, kernel, &count);
  return index < count ? &all[index] : NULL;
}

const mprof_reason_samples *
mprof_join_kernel_reason(const mprof_join *join, size_t kernel, size_t index) {
  size_t count;
  const mprof_reason_samples *all =
      mprof_join_kernel_reasons(join, kernel, &count);
  return index < count ? &all[index] : NULL;
}

const mprof_reason_samples *mprof_pc_stats_reason(const mprof_pc_stats *pc,
                                                  size_t index) {
  return pc && index < pc->reason_count ? &pc->reasons[index] : NULL;
}

/* ---- the sampled instructions as columns ------------------------------- */

size_t mprof_join_pc_rows(const mprof_join *join) {
  size_t rows = 0;
  for (size_t k = 0; join && k < join->kernel_count; k++)
    rows += join->kernels[k].pc_count;
  return rows;
}

size_t mprof_join_pc_reason_rows(const mprof_join *join) {
  size_t rows = 0;
  for (size_t k = 0; join && k < join->kernel_count; k++) {
    size_t n;
    const mprof_pc_stats *pcs = mprof_join_pcs(join, k, &n);
    for (size_t i = 0; i < n; i++)
      rows += pcs[i].reason_count;
  }
  return rows;
}

static int column_args(const void *out, size_t count, size_t rows,
                       const char *what, unsigned column, unsigned columns) {
  if (!out && count)
    return mprof__error_set(MPROF_EINVAL, "%s column: no array", what);
  if (column >= columns)
    return mprof__error_set(MPROF_EINVAL,
                            "%s column %u is not known (this mprof has "
                            "columns 0 to %u)",
                            what, column, columns - 1);
  if (count != rows)
    return mprof__error_set(MPROF_EINVAL,
                            "%s column: the array has %zu elements, the "
                            "join %zu rows",
                            what, count, rows);
  return 0;
}

int mprof_join_pc_column(void *out, size_t count, const mprof_join *join,
                         unsigned column) {
  if (!join)
    return mprof__error_set(MPROF_EINVAL, "pc column: no join");
  int rc = column_args(out, count, mprof_join_pc_rows(join), "pc", column,
                       MPROF_PC_COLUMN_COUNT_);
  if (rc)
    return rc;
  uint32_t *u32 = (uint32_t *)out;
  uint64_t *u64 = (uint64_t *)out;
  const mprof_sass_instruction **insn = (const mprof_sass_instruction **)out;
  size_t row = 0;
  for (size_t k = 0; k < join->kernel_count; k++) {
    size_t n;
    const mprof_pc_stats *pcs = mprof_join_pcs(join, k, &n);
    for (size_t i = 0; i < n; i++, row++) {
      const mprof_pc_stats *pc = &pcs[i];
      switch ((mprof_pc_column)column) {
      case MPROF_PC_COLUMN_KERNEL: u32[row] = (uint32_t)k; break;
      case MPROF_PC_COLUMN_CUBIN_CRC: u64[row] = pc->cubin_crc; break;
      case MPROF_PC_COLUMN_FUNCTION_INDEX: u32[row] = pc->function_index; break;
      case MPROF_PC_COLUMN_OFFSET: u32[row] = pc->offset; break;
      case MPROF_PC_COLUMN_SAMPLES: u64[row] = pc->samples; break;
      case MPROF_PC_COLUMN_NOT_ISSUED: u64[row] = pc->not_issued; break;
      case MPROF_PC_COLUMN_LINE:
        u32[row] = pc->instruction ? pc->instruction->line : 0;
        break;
      case MPROF_PC_COLUMN_INSTRUCTION: insn[row] = pc->instruction; break;
      case MPROF_PC_COLUMN_COUNT_: break;
      }
    }
  }
  return 0;
}

int mprof_join_pc_reason_column(void *out, size_t count, const mprof_join *join,
                                unsigned column) {
  if (!join)
    return mprof__error_set(MPROF_EINVAL, "pc reason column: no join");
  int rc = column_args(out, count, mprof_join_pc_reason_rows(join), "pc reason",
                       column, MPROF_PC_REASON_COLUMN_COUNT_);
  if (rc)
    return rc;
  uint32_t *u32 = (uint32_t *)out;
  uint64_t *u64 = (uint64_t *)out;
  size_t row = 0, pc_row = 0;
  for (size_t k = 0; k < join->kernel_count; k++) {
    size_t n;
    const mprof_pc_stats *pcs = mprof_join_pcs(join, k, &n);
    for (size_t i = 0; i < n; i++, pc_row++)
      for (size_t r = 0; r < pcs[i].reason_count; r++, row++) {
        const mprof_reason_samples *rs = &pcs[i].reasons[r];
        if (column == MPROF_PC_REASON_COLUMN_ROW)
          u64[row] = pc_row;
        else if (column == MPROF_PC_REASON_COLUMN_REASON)
          u32[row] = rs->reason;
        else
          u64[row] = rs->samples;
      }
  }
  return 0;
}
