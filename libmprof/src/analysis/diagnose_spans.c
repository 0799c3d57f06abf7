/*
 * mprof — the diagnosis: SM load balance and the SM tail, from activity spans
 * (docs/DIAGNOSIS.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "internal.h"
#include "mprof/diagnose.h"
#include "mprof/units.h"

#include "diagnose_internal.h"

/* ---- SM load balance and tail, from activity spans ----------------------- */

typedef struct span_item {
  uint32_t launch, sm;
  uint64_t start, end;
} span_item;

static int by_launch_sm_start(const void *a, const void *b) {
  const span_item *x = (const span_item *)a, *y = (const span_item *)b;
  MPROF__ORDER_BY(launch);
  MPROF__ORDER_BY(sm);
  MPROF__ORDER_BY(start);
  return x->end < y->end ? -1 : x->end > y->end;
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* One launch's SMs: busy (the union of its spans) and finish (last end),
 * folded into its kernel's balance. */
static void fold_launch(span_balance *b, const uint64_t *busy,
                        const uint64_t *finish, const uint32_t *sm_ids,
                        size_t sms, uint32_t device_sms, uint64_t start,
                        uint64_t spans, uint64_t *scratch) {
  if (!sms)
    return;
  uint64_t max_busy = 0, sum = 0, last = 0;
  uint32_t busiest = sm_ids[0], last_sm = sm_ids[0];
  for (size_t i = 0; i < sms; i++) {
    sum += busy[i];
    if (busy[i] > max_busy) {
      max_busy = busy[i];
      busiest = sm_ids[i];
    }
    if (finish[i] > last) {
      last = finish[i];
      last_sm = sm_ids[i];
    }
  }
  double mean = (double)sum / (double)sms;
  memcpy(scratch, finish, sms * sizeof *scratch);
  qsort(scratch, sms, sizeof *scratch, by_u64);
  uint64_t median = scratch[(sms - 1) / 2]; /* nearest rank, lower */
  double extent = last > start ? (double)(last - start) : 0.0;
  if (extent <= 0 || mean <= 0)
    return;
  double imbalance = (double)max_busy / mean;
  double tail = (double)(last - median) / extent;
  double all_sms = (double)(device_sms > sms ? device_sms : sms);
  b->launches++;
  b->spans += spans;
  b->weight += extent;
  b->imbalance += extent * imbalance;
  b->tail += extent * tail;
  b->busy_share += (double)sum / all_sms; /* extent * sum / (all * extent) */
  if (spans > b->top_spans) {
    b->top_spans = spans;
    b->sms = (uint32_t)sms;
    b->busiest_sm = busiest;
    b->last_sm = last_sm;
    b->device_sms = device_sms;
    b->max_busy_ns = (double)max_busy;
    b->mean_busy_ns = mean;
    b->tail_ns = (double)(last - median);
    b->extent_ns = extent;
  }
}

/* Per kernel of the join: what its launches' spans say. */
int mprof__diagnose_make_balance(mprof_diagnosis *d) {
  const mprof_trace *t = mprof_join_trace(d->join);
  size_t n, launches;
  const mprof_span_record *sp = mprof_trace_spans(t, &n);
  d->trace_spans = n;
  if (!n || !d->kernel_count)
    return 0;
  const mprof_launch_record *lr = mprof_trace_launches(t, &launches);
  size_t stream_count, device_count;
  const mprof_stream_record *streams = mprof_trace_streams(t, &stream_count);
  const mprof_device_record *devices = mprof_trace_devices(t, &device_count);
  d->balance = (span_balance *)calloc(d->kernel_count, sizeof *d->balance);
  span_item *items = (span_item *)malloc(n * sizeof *items);
  uint64_t *busy = (uint64_t *)malloc(n * sizeof(uint64_t));
  uint64_t *finish = (uint64_t *)malloc(n * sizeof(uint64_t));
  uint64_t *scratch = (uint64_t *)malloc(n * sizeof(uint64_t));
  uint32_t *sm_ids = (uint32_t *)malloc(n * sizeof(uint32_t));
  int rc = 0;
  if (!d->balance || !items || !busy || !finish || !scratch || !sm_ids) {
    rc = mprof__error_set(MPROF_ENOMEM, "out of memory");
    goto done;
  }
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    if (sp[i].launch >= launches || sp[i].end < sp[i].start)
      continue;
    items[count++] =
        (span_item){sp[i].launch, sp[i].sm, sp[i].start, sp[i].end};
  }
  qsort(items, count, sizeof *items, by_launch_sm_start);
  for (size_t i = 0; i < count;) {
    size_t j = i;
    while (j < count && items[j].launch == items[i].launch)
      j++;
    uint32_t kernel = mprof_join_launch_kernel(d->join, items[i].launch);
    uint64_t start = lr[items[i].launch].start;
    size_t sms = 0;
    for (size_t x = i; x < j;) {
      size_t y = x;
      uint64_t covered = 0, cs = items[x].start, ce = items[x].end, last = 0;
      while (y < j && items[y].sm == items[x].sm) {
        if (items[y].start > ce) {
          covered += ce - cs;
          cs = items[y].start;
          ce = items[y].end;
        } else if (items[y].end > ce) {
          ce = items[y].end;
        }
        if (items[y].end > last)
          last = items[y].end;
        if (items[y].start < start)
          start = items[y].start; /* alignment slack: count from the span */
        y++;
      }
      covered += ce - cs;
      busy[sms] = covered;
      finish[sms] = last;
      sm_ids[sms] = items[x].sm;
      sms++;
      x = y;
    }
    uint32_t device_sms = 0;
    if (lr[items[i].launch].stream < stream_count &&
        streams[lr[items[i].launch].stream].device < device_count)
      device_sms = devices[streams[lr[items[i].launch].stream].device].sm_count;
    if (kernel < d->kernel_count)
      fold_launch(&d->balance[kernel], busy, finish, sm_ids, sms, device_sms,
                  start, (uint64_t)(j - i), scratch);
    i = j;
  }
  for (size_t k = 0; k < d->kernel_count; k++)
    if (d->balance[k].weight > 0) {
      d->balance[k].imbalance /= d->balance[k].weight;
      d->balance[k].tail /= d->balance[k].weight;
      d->balance[k].busy_share /= d->balance[k].weight;
    }
done:
  free(items);
  free(busy);
  free(finish);
  free(scratch);
  free(sm_ids);
  return rc;
}

/* With spans, the tail effect is judged from the measured SM time rather
 * than projected from the grid; the projection stays as metrics. */
static void measured_tail_effect(kernel_work *w, const span_balance *b) {
  mprof_dimension *t = &w->dims[MPROF_DIM_TAIL];
  const mprof_occupancy *occ = w->out->occupancy;
  double busy = b->busy_share;
  if (busy > 1.0)
    busy = 1.0;
  char p[32], idle[32];
  pct(p, sizeof p, busy);
  pct(idle, sizeof idle, 1.0 - busy);
  uint32_t state = judge_below(busy, TAIL_MINOR, TAIL_ISSUE);
  add_metric(t, "measured_efficiency", busy, "fraction");
  add_metric(t, "measured_launches", (double)b->launches, "count");
  /* A grid smaller than one wave leaves block slots empty while the SMs
   * still look busy (a block or two each): the spans measure SM time, not
   * slots, so they cannot clear that finding, only add to it. */
  int grid_small =
      t->state != MPROF_STATE_UNKNOWN && occ->blocks_per_sm && occ->waves < 1.0;
  if (grid_small && state < t->state) {
    t->detail = mprof__arena_printf(
        &w->d->arena,
        "%s Measured over %llu launch%s of block spans, SMs are busy %s of "
        "the time, each with fewer blocks than it could hold.",
        t->detail, (unsigned long long)b->launches,
        b->launches == 1 ? "" : "es", p);
    return;
  }
  t->state = state;
  t->cost = 1.0 - busy;
  w->tail_measured = 1;
  w->persistent =
      b->device_sms && occ->grid_blocks && occ->grid_blocks <= b->device_sms;
  w->tail_busy = busy;
  /* The projection only where the device limits let one be made. */
  t->detail = mprof__arena_printf(
      &w->d->arena,
      "Measured over %llu launch%s of block spans: SMs are busy %s of the "
      "time from the first block's start to the last block's end (%s idle, "
      "waiting for the last blocks).%s%s",
      (unsigned long long)b->launches, b->launches == 1 ? "" : "es", p, idle,
      occ->known ? " Projected from the grid: " : "",
      occ->known ? t->detail : "");
}

void mprof__diagnose_judge_spans(kernel_work *w, const span_balance *b,
                                 size_t trace_spans) {
  mprof_dimension *bal = &w->dims[MPROF_DIM_SM_BALANCE];
  mprof_dimension *tail = &w->dims[MPROF_DIM_SM_TAIL];
  if (!b || !b->launches) {
    bal->state = tail->state = MPROF_STATE_UNKNOWN;
    bal->detail = tail->detail =
        trace_spans ? "No activity spans for this kernel."
                    : "No activity spans: record the kernel with `mprof "
                      "record blocks` (every block, no source changes) or "
                      "source instrumentation (`mprof record source`), or "
                      "import a "
                      ".mkprof to judge SM load balance.";
    add_metric(bal, "spans", 0, "count");
    add_metric(tail, "spans", 0, "count");
    return;
  }
  char p[32], mb[32], mean[32], tn[32], ext[32];
  bal->state = judge(b->imbalance, BALANCE_MINOR, BALANCE_ISSUE);
  bal->cost = b->imbalance > 1 ? 1.0 - 1.0 / b->imbalance : 0.0;
  add_metric(bal, "imbalance", b->imbalance, "ratio");
  add_metric(bal, "idle_share", bal->cost, "fraction");
  add_metric(bal, "max_busy_ns", b->max_busy_ns, "ns");
  add_metric(bal, "mean_busy_ns", b->mean_busy_ns, "ns");
  add_metric(bal, "busiest_sm", b->busiest_sm, "count");
  add_metric(bal, "sms", b->sms, "count");
  add_metric(bal, "launches", (double)b->launches, "count");
  add_metric(bal, "spans", (double)b->spans, "count");
  mprof_format_duration(mb, sizeof mb, b->max_busy_ns);
  mprof_format_duration(mean, sizeof mean, b->mean_busy_ns);
  pct(p, sizeof p, bal->cost);
  if (bal->state == MPROF_STATE_OK)
    bal->detail = mprof__arena_printf(
        &w->d->arena,
        "Busy time per SM from spans: the busiest (SM %u, %s) works %.2fx "
        "the mean of %u SM%s (%s).",
        b->busiest_sm, mb, b->imbalance, b->sms, mprof__plural(b->sms), mean);
  else
    bal->detail = mprof__arena_printf(
        &w->d->arena,
        "Uneven work across SMs: the busiest (SM %u) is busy %s against a "
        "mean of %s over %u SM%s (%.2fx), so %s of the SM time waits on "
        "it; spread the work more evenly (%s).",
        b->busiest_sm, mb, mean, b->sms, mprof__plural(b->sms), b->imbalance, p,
        b->device_sms && w->out->occupancy->grid_blocks &&
                w->out->occupancy->grid_blocks <= b->device_sms
            ? "the kernel is persistent, one block per SM: move work from "
              "the busiest SM's queue to the others"
            : "smaller or dynamically scheduled tiles");
  measured_tail_effect(w, b);
  tail->state = judge(b->tail, SM_TAIL_MINOR, SM_TAIL_ISSUE);
  tail->cost = b->tail * 0.5;
  add_metric(tail, "tail_fraction", b->tail, "fraction");
  add_metric(tail, "tail_ns", b->tail_ns, "ns");
  add_metric(tail, "extent_ns", b->extent_ns, "ns");
  add_metric(tail, "last_sm", b->last_sm, "count");
  add_metric(tail, "launches", (double)b->launches, "count");
  mprof_format_duration(tn, sizeof tn, b->tail_ns);
  mprof_format_duration(ext, sizeof ext, b->extent_ns);
  pct(p, sizeof p, b->tail);
  if (tail->state == MPROF_STATE_OK)
    tail->detail = mprof__arena_printf(
        &w->d->arena,
        "The last SM (%u) finishes %s after the median SM, %s of the "
        "launch (%s).",
        b->last_sm, tn, p, ext);
  else
    tail->detail = mprof__arena_printf(
        &w->d->arena,
        "A tail: the last SM (%u) finishes %s after the median SM, %s of the "
        "launch's %s, while half the SMs or more sit idle.",
        b->last_sm, tn, p, ext);
}

/* The verdict sentence of the dominant dimension. */
