/*
 * mprof — per-kernel speed of light from PM samples (see throughput.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "mprof/throughput.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "internal.h"

/* The metric names each counter is read from, first choice first. */
static const struct {
  const char *key;
  const char *title;
  const char *unit;
  const char *metrics[3];
  /* Its TriageCompute configuration ("LTS.TriageCompute.lts__...") reads
   * another quantity, so those names are not read into it. */
  int triage_differs;
} counters[MPROF_COUNTER_COUNT_] = {
    {"dram",
     "DRAM throughput",
     "percent",
     {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL}},
    {"dram_bytes_per_second",
     "DRAM bandwidth",
     "bytes_per_second",
     {"dram__bytes.sum.per_second", NULL, NULL}},
    {"l2",
     "L2 sector throughput",
     "percent",
     {"lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
      "lts__t_sector_throughput.avg.pct_of_peak_sustained_elapsed", NULL}},
    {"l2_bytes_per_second",
     "L2 bandwidth",
     "bytes_per_second",
     {"lts__t_bytes.sum.per_second", NULL, NULL}},
    {"sm_active",
     "SMs active",
     "percent",
     {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__cycles_active.avg.per_cycle_elapsed", NULL}},
    {"warps_active",
     "warp slots occupied",
     "percent",
     {"sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
      "tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", NULL}},
    {"issue",
     "instruction issue",
     "percent",
     {"sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed", NULL,
      NULL}},
    {"tensor",
     "tensor pipe",
     "percent",
     {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_"
      "elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_"
      "sustained_elapsed",
      NULL}},
    {"fma",
     "FMA pipe",
     "percent",
     {"sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL}},
    {"alu",
     "ALU pipe",
     "percent",
     {"sm__inst_executed_pipe_alu_realtime.avg.pct_of_peak_sustained_elapsed",
      NULL, NULL}},
    {"clock",
     "SM clock",
     "hertz",
     {"gpc__cycles_elapsed.avg.per_second", NULL, NULL}},
    {"l2_throughput",
     "L2 throughput",
     "percent",
     {"lts__throughput.avg.pct_of_peak_sustained_elapsed", NULL, NULL},
     /* the busiest of other L2 units: a DRAM stream 33.9% where ncu reads
      * 79.0% (docs/validation/H100.md) */
     1},
    {"l1tex",
     "L1/shared-memory throughput",
     "percent",
     {"l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
      "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_"
      "elapsed",
      "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed"}},
    {"sm_throughput",
     "SM throughput",
     "percent",
     {"sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL, NULL}},
};

const char *mprof_counter_key(uint32_t c) {
  return c < MPROF_COUNTER_COUNT_ ? counters[c].key : "";
}
const char *mprof_counter_title(uint32_t c) {
  return c < MPROF_COUNTER_COUNT_ ? counters[c].title : "";
}
const char *mprof_counter_unit(uint32_t c) {
  return c < MPROF_COUNTER_COUNT_ ? counters[c].unit : "";
}
uint32_t mprof_counter_bandwidth(uint32_t c) {
  return c == MPROF_COUNTER_DRAM ? MPROF_COUNTER_DRAM_BYTES
         : c == MPROF_COUNTER_L2 ? MPROF_COUNTER_L2_BYTES
                                 : MPROF_INDEX_NONE;
}

/* The counter @p metric is read into, with in *rank which of the
 * counter's names it is (lower wins); MPROF_INDEX_NONE for none. */
static uint32_t counter_of(const char *metric, int *rank) {
  if (!metric)
    return MPROF_INDEX_NONE;
  /* "TPC.TriageCompute.sm__..." names the same counter as "sm__...", but
   * where the table says its TriageCompute configuration differs. */
  const char *triage = strstr(metric, "TriageCompute.");
  if (triage)
    metric = triage + strlen("TriageCompute.");
  for (uint32_t c = 0; c < MPROF_COUNTER_COUNT_; c++)
    for (int m = 0; m < 3 && counters[c].metrics[m]; m++)
      if (strcmp(metric, counters[c].metrics[m]) == 0) {
        if (triage && counters[c].triage_differs)
          return MPROF_INDEX_NONE;
        *rank = m;
        return c;
      }
  return MPROF_INDEX_NONE;
}

/* 100 for a ratio read into a percentage ("...per_cycle_elapsed": the
 * share of cycles), else 1. */
static double ratio_scale(const char *metric) {
  static const char suffix[] = ".per_cycle_elapsed";
  size_t n = metric ? strlen(metric) : 0;
  return n >= sizeof suffix - 1 &&
                 strcmp(metric + n - (sizeof suffix - 1), suffix) == 0
             ? 100.0
             : 1.0;
}

uint32_t mprof_counter_from_metric(const char *metric) {
  int rank;
  return counter_of(metric, &rank);
}

/* Per trace device: which column holds each counter. */
typedef struct device_map {
  int sampled;
  uint64_t interval_ns;
  int column[MPROF_COUNTER_COUNT_];   /* -1 absent */
  int rank[MPROF_COUNTER_COUNT_];     /* which name matched; lower wins */
  double scale[MPROF_COUNTER_COUNT_]; /* to the counter's unit */
  int triage;                         /* sampled with a TriageCompute counter */
} device_map;

typedef struct launch_ref {
  uint64_t start, end;
  uint32_t kernel;
} launch_ref;

struct mprof_throughput {
  const mprof_join *join;
  size_t kernel_count;
  mprof_kernel_throughput *kernels;
  /* MPROF_COUNTER_COUNT_ per kernel: what each kernel's `value` points at
   * (an array, not a field, so that counters can be added). */
  double *values;
  int available;
  uint64_t interval_ns;
  char missing[256];
  size_t out_of_scale;           /* kernels with a counter read out of scale */
  uint32_t out_of_scale_counter; /* the first such counter */
  size_t device_count;
  device_map *maps; /* per device: the column of each counter */
};

static int compare_launch(const void *a, const void *b) {
  const launch_ref *x = (const launch_ref *)a, *y = (const launch_ref *)b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* One kernel's sums of each counter, over one device's windows or over
 * every device's. */
typedef struct counter_sums {
  double sum[MPROF_COUNTER_COUNT_];
  double weight_of[MPROF_COUNTER_COUNT_];
  /* Windows at a run's edge that no other kernel or memory operation
   * overlapped: the counts they hold over the time the kernel ran in
   * them. */
  double edge_sum[MPROF_COUNTER_COUNT_];
  double edge_weight_of[MPROF_COUNTER_COUNT_];
  unsigned char out_of_scale[MPROF_COUNTER_COUNT_];
} counter_sums;

/* Sums for one kernel while the samples are walked, a device at a time. */
typedef struct accum {
  double weight;
  double shared;
  counter_sums all;    /* the devices' sums that were in scale */
  counter_sums device; /* the device being walked */
  int touched;         /* by the device being walked */
} accum;

/* After one device's windows: a counter that device read out of scale for
 * a kernel is no measurement there (its in-scale windows are left out
 * too), so the kernel's value comes from the devices that read it in
 * scale: in a set of a `--pm-counters sol` run and a default one, SMs
 * active from the first where the second's plain counter left the scale. */
static void fold_device(accum *a) {
  for (int c = 0; c < MPROF_COUNTER_COUNT_; c++) {
    if (a->device.out_of_scale[c]) {
      a->all.out_of_scale[c] = 1;
      continue;
    }
    a->all.sum[c] += a->device.sum[c];
    a->all.weight_of[c] += a->device.weight_of[c];
    a->all.edge_sum[c] += a->device.edge_sum[c];
    a->all.edge_weight_of[c] += a->device.edge_weight_of[c];
  }
  memset(&a->device, 0, sizeof a->device);
  a->touched = 0;
}

/* A launch_ref's kernel for a memory operation: neither a kernel of the
 * join nor MPROF_INDEX_NONE. */
#define MEMOP_KERNEL (MPROF_INDEX_NONE - 1)

/* A percentage of peak beyond this is no measurement: on GH100 CUPTI
 * evaluated sm__cycles_active at 100% for the first 3 ms of a program's
 * one long-running kernel and at 62,113% for the rest (docs/validation/
 * H100.md). The counter is then unknown for the kernel, neither clamped
 * nor averaged over its other windows: those were its ramp and tail, and
 * gave a kernel at ncu's 82% SMs active 29.9%. */
#define PERCENT_MAX 101.0

static void why_missing(mprof_throughput *t, const mprof_trace *trace) {
  const char *mode = mprof_trace_meta(trace, "pm.mode");
  const char *error = mprof_trace_meta(trace, "pm.error");
  if (error && *error)
    snprintf(t->missing, sizeof t->missing,
             "PM sampling failed (%s), so throughput was not measured", error);
  else if (mode && strcmp(mode, "off") == 0)
    snprintf(t->missing, sizeof t->missing,
             "recorded with --pm off, so throughput was not measured");
  else if (mode)
    snprintf(t->missing, sizeof t->missing,
             "PM sampling produced no samples, so throughput was not "
             "measured");
  else
    snprintf(t->missing, sizeof t->missing,
             "the trace has no hardware counters (recorded without PM "
             "sampling), so throughput was not measured");
}

int mprof_throughput_build(mprof_throughput **out, const mprof_join *join) {
  if (!out || !join)
    return mprof__error_set(MPROF_EINVAL, "throughput: no join given");
  *out = NULL;
  const mprof_trace *trace = mprof_join_trace(join);
  mprof_throughput *t = (mprof_throughput *)calloc(1, sizeof *t);
  if (!t)
    return mprof__error_set(MPROF_ENOMEM, "throughput: out of memory");
  t->join = join;
  t->kernel_count = mprof_join_kernel_count(join);
  t->kernels = (mprof_kernel_throughput *)calloc(
      t->kernel_count ? t->kernel_count : 1, sizeof *t->kernels);
  t->values = (double *)malloc((t->kernel_count ? t->kernel_count : 1) *
                               MPROF_COUNTER_COUNT_ * sizeof *t->values);
  size_t device_count = 0, metric_count = 0, sample_count = 0;
  size_t launch_count = 0, stream_count = 0, memop_count = 0;
  mprof_trace_devices(trace, &device_count);
  const mprof_pm_metric_record *metrics =
      mprof_trace_pm_metrics(trace, &metric_count);
  const mprof_pm_sample_record *samples =
      mprof_trace_pm_samples(trace, &sample_count);
  /* Launches only with samples to join them to (a set builds them). */
  const mprof_launch_record *launches =
      sample_count ? mprof_trace_launches(trace, &launch_count) : NULL;
  const mprof_memop_record *memops =
      sample_count ? mprof_trace_memops(trace, &memop_count) : NULL;
  const mprof_stream_record *streams =
      mprof_trace_streams(trace, &stream_count);
  device_map *maps =
      (device_map *)calloc(device_count ? device_count : 1, sizeof *maps);
  accum *acc =
      (accum *)calloc(t->kernel_count ? t->kernel_count : 1, sizeof *acc);
  /* The kernels the device being walked gave a window. */
  uint32_t *touched = (uint32_t *)malloc(
      (t->kernel_count ? t->kernel_count : 1) * sizeof *touched);
  /* One device's launches at a time (below), when there are samples. */
  size_t room = sample_count && launch_count ? launch_count + memop_count : 1;
  launch_ref *refs = (launch_ref *)malloc(room * sizeof *refs);
  uint64_t *max_end = (uint64_t *)malloc(room * sizeof *max_end);
  if (!t->kernels || !t->values || !maps || !acc || !touched || !refs ||
      !max_end) {
    free(maps);
    free(acc);
    free(touched);
    free(refs);
    free(max_end);
    mprof_throughput_free(t);
    return mprof__error_set(MPROF_ENOMEM, "throughput: out of memory");
  }
  for (size_t k = 0; k < t->kernel_count; k++) {
    t->kernels[k].value = &t->values[k * MPROF_COUNTER_COUNT_];
    for (int c = 0; c < MPROF_COUNTER_COUNT_; c++)
      t->values[k * MPROF_COUNTER_COUNT_ + c] = NAN;
  }
  for (size_t d = 0; d < device_count; d++)
    for (int c = 0; c < MPROF_COUNTER_COUNT_; c++)
      maps[d].column[c] = -1;
  for (size_t i = 0; i < metric_count; i++) {
    const mprof_pm_metric_record *m = &metrics[i];
    if (m->device >= device_count)
      continue;
    int rank = 0;
    const char *name = mprof_trace_string(trace, m->name);
    uint32_t c = counter_of(name, &rank);
    device_map *map = &maps[m->device];
    map->sampled = 1;
    map->interval_ns = m->interval_ns;
    if (name && strstr(name, "TriageCompute."))
      map->triage = 1;
    if (c == MPROF_INDEX_NONE)
      continue;
    if (map->column[c] < 0 || rank < map->rank[c]) {
      map->column[c] = (int)m->column;
      map->rank[c] = rank;
      map->scale[c] = ratio_scale(mprof_trace_string(trace, m->name));
    }
  }
  /* Beside TriageCompute counters CUPTI evaluated the L2's sectors out of
   * scale, or in scale and wrong (99-949% where ncu read 1.5%; 5.7% where
   * it read 0.0%: docs/validation/H100.md and H200.md), whether by their
   * plain name or the L2's TriageCompute one: such a device gives no L2
   * counter. */
  for (size_t d = 0; d < device_count; d++)
    if (maps[d].triage)
      maps[d].column[MPROF_COUNTER_L2] =
          maps[d].column[MPROF_COUNTER_L2_BYTES] =
              maps[d].column[MPROF_COUNTER_L2_THROUGHPUT] = -1;
  for (size_t d = 0; d < device_count; d++)
    if (maps[d].sampled && !t->interval_ns)
      t->interval_ns = maps[d].interval_ns;
  t->available = sample_count > 0;
  if (!t->available)
    why_missing(t, trace);

  /* The counters whose values are percentages of peak (PERCENT_MAX). */
  int percent[MPROF_COUNTER_COUNT_];
  for (int c = 0; c < MPROF_COUNTER_COUNT_; c++)
    percent[c] = strcmp(counters[c].unit, "percent") == 0;

  /* Launches per device, by start, with the running maximum of their ends
   * so that a window finds every launch that overlaps it. */
  for (size_t d = 0; d < device_count && t->available; d++) {
    if (!maps[d].sampled)
      continue;
    size_t n = 0, touched_count = 0;
    for (size_t i = 0; i < launch_count; i++) {
      if (launches[i].stream >= stream_count ||
          streams[launches[i].stream].device != d)
        continue;
      refs[n] = (launch_ref){launches[i].start, launches[i].end,
                             mprof_join_launch_kernel(join, i)};
      /* The interval of the device the launch ran on: in a merged set a
       * kernel's PM samples may come from another process's device. */
      if (refs[n].kernel < t->kernel_count)
        t->kernels[refs[n].kernel].interval_ns = maps[d].interval_ns;
      n++;
    }
    /* Memory operations share a window's counters as another kernel
     * would. */
    for (size_t i = 0; i < memop_count; i++)
      if (memops[i].stream < stream_count &&
          streams[memops[i].stream].device == d &&
          memops[i].end > memops[i].start)
        refs[n++] = (launch_ref){memops[i].start, memops[i].end, MEMOP_KERNEL};
    qsort(refs, n, sizeof *refs, compare_launch);
    for (size_t i = 0; i < n; i++)
      max_end[i] =
          i && max_end[i - 1] > refs[i].end ? max_end[i - 1] : refs[i].end;
    for (size_t s = 0; s < sample_count; s++) {
      const mprof_pm_sample_record *w = &samples[s];
      if (w->device != d || w->end <= w->start)
        continue;
      /* The last launch starting before the window ends. */
      size_t lo;
      MPROF__LOWER_BOUND(lo, n, mid, refs[mid].start < w->end);
      uint32_t inside = MPROF_INDEX_NONE;
      int others = 0;
      uint32_t first_kernel = MPROF_INDEX_NONE;
      int seen = 0;
      uint64_t ran = 0; /* ns of the window the first kernel ran in */
      for (size_t i = lo; i-- > 0;) {
        if (max_end[i] <= w->start)
          break;
        const launch_ref *l = &refs[i];
        if (l->end <= w->start)
          continue;
        if (!seen)
          first_kernel = l->kernel, seen = 1;
        else if (l->kernel != first_kernel)
          others = 1;
        if (l->kernel == first_kernel)
          ran += (l->end < w->end ? l->end : w->end) -
                 (l->start > w->start ? l->start : w->start);
        if (l->start <= w->start && l->end >= w->end)
          inside = l->kernel;
        else if (l->kernel < t->kernel_count)
          t->kernels[l->kernel].partial++;
      }
      double len = (double)(w->end - w->start);
      /* A window at the edge of one kernel's runs, alone on the device:
       * what it counted was that kernel's, over the time it ran there. */
      int edge = inside == MPROF_INDEX_NONE && !others &&
                 first_kernel < t->kernel_count;
      if (edge)
        inside = first_kernel;
      if (inside == MPROF_INDEX_NONE || inside >= t->kernel_count)
        continue;
      double ran_ns = ran > w->end - w->start ? len : (double)ran;
      accum *a = &acc[inside];
      if (!a->touched) {
        a->touched = 1;
        touched[touched_count++] = inside;
      }
      counter_sums *sums = &a->device;
      if (!edge) {
        a->weight += len;
        if (others)
          a->shared += len;
        t->kernels[inside].samples++;
        t->kernels[inside].covered_ns += w->end - w->start;
      }
      for (int c = 0; c < MPROF_COUNTER_COUNT_; c++) {
        int col = maps[d].column[c];
        if (col < 0 || col >= MPROF_PM_MAX_METRICS)
          continue;
        double v = w->value[col] * maps[d].scale[c];
        if (isnan(v))
          continue;
        if (percent[c] && (v > PERCENT_MAX || v < -1.0)) {
          sums->out_of_scale[c] = 1;
          continue;
        }
        if (edge) {
          sums->edge_sum[c] += v * len;
          sums->edge_weight_of[c] += ran_ns;
        } else {
          sums->sum[c] += v * len;
          sums->weight_of[c] += len;
        }
      }
    }
    for (size_t i = 0; i < touched_count; i++)
      fold_device(&acc[touched[i]]);
  }
  free(touched);
  free(refs);
  free(max_end);
  for (size_t k = 0; k < t->kernel_count; k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(join, k);
    mprof_kernel_throughput *kt = &t->kernels[k];
    if (!kt->interval_ns && ks && ks->device < device_count &&
        maps[ks->device].sampled)
      kt->interval_ns = maps[ks->device].interval_ns;
    if (acc[k].weight > 0)
      kt->shared = acc[k].shared / acc[k].weight;
    int scaled_out = 0;
    const counter_sums *all = &acc[k].all;
    for (int c = 0; c < MPROF_COUNTER_COUNT_; c++) {
      if (all->weight_of[c] > 0) {
        /* A kernel measured by windows inside its runs; those at their
         * edges add its ramp and tail, as ncu's whole-launch figures
         * count them (docs/DIAGNOSIS.md). */
        t->values[k * MPROF_COUNTER_COUNT_ + c] =
            (all->sum[c] + all->edge_sum[c]) /
            (all->weight_of[c] + all->edge_weight_of[c]);
      } else if (all->out_of_scale[c]) {
        if (!t->out_of_scale && !scaled_out)
          t->out_of_scale_counter = (uint32_t)c;
        scaled_out = 1;
      }
    }
    t->out_of_scale += (size_t)scaled_out;
  }
  free(acc);
  t->maps = maps;
  t->device_count = device_count;
  *out = t;
  return 0;
}

void mprof_throughput_free(mprof_throughput *t) {
  if (!t)
    return;
  free(t->kernels);
  free(t->values);
  free(t->maps);
  free(t);
}

int mprof_throughput_available(const mprof_throughput *t) {
  return t && t->available;
}

uint64_t mprof_throughput_interval(const mprof_throughput *t) {
  return t ? t->interval_ns : 0;
}

const mprof_kernel_throughput *
mprof_throughput_kernel(const mprof_throughput *t, size_t kernel) {
  return t && kernel < t->kernel_count ? &t->kernels[kernel] : NULL;
}

int mprof_throughput_column(const mprof_throughput *t, uint32_t device,
                            uint32_t counter) {
  if (!t || device >= t->device_count || counter >= MPROF_COUNTER_COUNT_ ||
      !t->maps[device].sampled)
    return -1;
  int col = t->maps[device].column[counter];
  return col >= 0 && col < MPROF_PM_MAX_METRICS ? col : -1;
}

int mprof__throughput_l2_left_out(const mprof_throughput *t) {
  int triage = 0, l2 = 0;
  for (size_t d = 0; t && d < t->device_count; d++) {
    triage |= t->maps[d].sampled && t->maps[d].triage;
    l2 |= t->maps[d].sampled && t->maps[d].column[MPROF_COUNTER_L2] >= 0;
  }
  /* In a set with a run of the default counters the L2 is measured. */
  return triage && !l2;
}

size_t mprof__throughput_out_of_scale(const mprof_throughput *t,
                                      uint32_t *counter) {
  if (t && t->out_of_scale && counter)
    *counter = t->out_of_scale_counter;
  return t ? t->out_of_scale : 0;
}

const char *mprof_throughput_missing(const mprof_throughput *t) {
  return t && !t->available ? t->missing : NULL;
}
