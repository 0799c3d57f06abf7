/*
 * mprof-render — the rows of the Trace view: a band per host thread with
 * its NVTX rows (tracks.c lays them out), then a band per device with its
 * counter tracks and its streams (those with launches or memory
 * operations), and each stream's memcpy/memset operations by start. In a
 * set of processes every process has its own devices: their bands go by
 * host, then process, and name the process. Copies the trace gives no
 * stream (MEMOPS stream NONE: `info` and `summary` count them) are drawn
 * too, on a row of their own in a last band, "No stream": a copy that
 * happened belongs on the timeline, and no GPU's band can claim it. Built
 * once at open.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"

/* In a set of processes: each device's place when bands go by host, then
 * process, then device (NULL: by device). */
static _Thread_local const uint32_t *sort_device_rank;
static _Thread_local size_t sort_device_count;

static _Thread_local const mprof_stream_record *sort_streams;
static int by_stream(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  const mprof_stream_record *x = &sort_streams[i], *y = &sort_streams[j];
  uint32_t dx = x->device, dy = y->device;
  if (sort_device_rank) {
    dx = dx < sort_device_count ? sort_device_rank[dx] : dx;
    dy = dy < sort_device_count ? sort_device_rank[dy] : dy;
  }
  if (dx != dy)
    return dx < dy ? -1 : 1; /* MPROF_INDEX_NONE sorts last */
  RS_ORDER_BY(context_id);
  RS_ORDER_BY(stream_id);
  return i < j ? -1 : i > j;
}

static _Thread_local const mprof_trace *sort_trace;
static int by_host_process(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  uint32_t px = mprof_trace_device_process(sort_trace, x);
  uint32_t py = mprof_trace_device_process(sort_trace, y);
  const char *hx = mprof_trace_process_meta(sort_trace, px, "host");
  const char *hy = mprof_trace_process_meta(sort_trace, py, "host");
  int c = strcmp(hx ? hx : "", hy ? hy : "");
  if (c)
    return c;
  if (px != py)
    return px < py ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* "  · pid 4100, rank 0 on node1": process @p p of a set, after a band's
 * name in @p out ("GPU 0  NVIDIA H200", "Thread 7"); nothing for a trace
 * of one process or an unknown process. */
static void process_suffix(char *out, size_t size, const mprof_trace *t,
                           uint32_t p) {
  if (mprof_trace_process_count(t) < 2 || p == MPROF_INDEX_NONE)
    return;
  const char *pid = mprof_trace_process_meta(t, p, "pid");
  const char *rank = mprof_trace_process_meta(t, p, "rank");
  const char *host = mprof_trace_process_meta(t, p, "host");
  size_t n = strlen(out);
  snprintf(out + n, size - n, "  \u00b7 pid %s%s%s%s%s", pid ? pid : "?",
           rank ? ", rank " : "", rank ? rank : "", host ? " on " : "",
           host ? host : "");
}

/* A host thread's rows: runs [run_first, run_end) of the NVTX rows and
 * [call_first, call_end) of the API rows; its process in a set. */
typedef struct host_thread {
  uint32_t thread_id, process;
  size_t run_first, run_end, call_first, call_end;
} host_thread;

/* By host, then process (threads of no known process last), then id. */
static int by_thread_process(const void *a, const void *b) {
  const host_thread *x = (const host_thread *)a, *y = (const host_thread *)b;
  if ((x->process == MPROF_INDEX_NONE) != (y->process == MPROF_INDEX_NONE))
    return x->process == MPROF_INDEX_NONE ? 1 : -1;
  const char *hx = mprof_trace_process_meta(sort_trace, x->process, "host");
  const char *hy = mprof_trace_process_meta(sort_trace, y->process, "host");
  int c = strcmp(hx ? hx : "", hy ? hy : "");
  if (c)
    return c;
  RS_ORDER_BY(process);
  return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

static _Thread_local const mprof_memop_record *sort_memops;
static int by_memop_start(const void *a, const void *b) {
  const mprof_memop_record *x = &sort_memops[*(const uint32_t *)a];
  const mprof_memop_record *y = &sort_memops[*(const uint32_t *)b];
  RS_ORDER_BY(start);
  return 0;
}

/* The next row, of @p kind on @p device, labelled @p label (copied). */
static mprof_render_row *add_row(mprof_render_model *m,
                                 mprof_render_row_kind kind, uint32_t device,
                                 const char *label) {
  mprof_render_row *r = &m->rows[m->row_count];
  r->kind = kind;
  r->device = device;
  m->row_labels[m->row_count] = strdup(label);
  r->label = m->row_labels[m->row_count++];
  return r;
}

/* The next row: one depth of host thread @p thread's NVTX ranges or CUDA
 * API calls (@p run), labelled @p name at depth 0 and @p deeper (a format
 * taking the level) below. */
static void run_row(mprof_render_model *m, mprof_render_row_kind kind,
                    uint32_t thread, const rs_range_run *run, const char *name,
                    const char *deeper) {
  char label[64];
  if (run->depth)
    snprintf(label, sizeof label, deeper, run->depth + 1);
  else
    snprintf(label, sizeof label, "%s", name);
  mprof_render_row *r = add_row(m, kind, MPROF_INDEX_NONE, label);
  r->thread_id = thread;
  r->depth = run->depth;
  r->first = run->first;
  r->count = run->count;
}

int mprof_render__build_rows(mprof_render_model *m) {
  size_t streams, devices, memops;
  const mprof_stream_record *st = mprof_trace_streams(m->trace, &streams);
  const mprof_device_record *dev = mprof_trace_devices(m->trace, &devices);
  const mprof_memop_record *mo = mprof_trace_memops(m->trace, &memops);

  /* Slot `streams` holds the copies of no stream. */
  size_t slots = streams + 1;
  m->memop_slots = slots;
  m->memop_first = (size_t *)calloc(slots + 1, sizeof(size_t));
  m->memop_order = (uint32_t *)malloc((memops ? memops : 1) * sizeof(uint32_t));
  m->memop_longest = (int64_t *)calloc(slots, sizeof(int64_t));
  if (!m->memop_first || !m->memop_order || !m->memop_longest)
    return mprof_render__oom();
  for (size_t i = 0; i < memops; i++) {
    size_t s = mo[i].stream < streams ? mo[i].stream : streams;
    m->memop_first[s + 1]++;
    int64_t d = rs_clamp_end(mo[i].start, mo[i].end) - rs_clamp_ns(mo[i].start);
    if (d > m->memop_longest[s])
      m->memop_longest[s] = d;
  }
  for (size_t s = 0; s < slots; s++)
    m->memop_first[s + 1] += m->memop_first[s];
  size_t *fill = (size_t *)malloc((slots + 1) * sizeof(size_t));
  if (!fill)
    return mprof_render__oom();
  memcpy(fill, m->memop_first, (slots + 1) * sizeof(size_t));
  for (size_t i = 0; i < memops; i++)
    m->memop_order[fill[mo[i].stream < streams ? mo[i].stream : streams]++] =
        (uint32_t)i;
  free(fill);
  sort_memops = mo;
  for (size_t s = 0; s < slots; s++)
    qsort(m->memop_order + m->memop_first[s],
          m->memop_first[s + 1] - m->memop_first[s], sizeof(uint32_t),
          by_memop_start);

  uint32_t *order = (uint32_t *)malloc((streams ? streams : 1) * sizeof *order);
  uint32_t *rank = NULL, *by = NULL;
  rs_range_run *runs = NULL, *calls = NULL;
  size_t run_count = 0, call_count = 0;
  host_thread *threads = NULL;
  int rc = -1;
  if (!order)
    goto oom;
  size_t used = 0;
  for (size_t s = 0; s < streams; s++)
    if (mprof_trace_stream_launch_count(m->trace, (uint32_t)s) ||
        m->memop_first[s + 1] > m->memop_first[s])
      order[used++] = (uint32_t)s;
  /* A set's devices by host, then process (each process has its own). */
  if (mprof_trace_process_count(m->trace) > 1 && devices) {
    by = (uint32_t *)malloc(devices * sizeof *by);
    rank = (uint32_t *)malloc(devices * sizeof *rank);
    if (!by || !rank)
      goto oom;
    for (size_t d = 0; d < devices; d++)
      by[d] = (uint32_t)d;
    sort_trace = m->trace;
    qsort(by, devices, sizeof *by, by_host_process);
    for (size_t d = 0; d < devices; d++)
      rank[by[d]] = (uint32_t)d;
  }
  sort_streams = st;
  sort_device_rank = rank;
  sort_device_count = devices;
  qsort(order, used, sizeof *order, by_stream);
  sort_device_rank = NULL;
  size_t apis;
  mprof_trace_api_calls(m->trace, &apis);
  m->api_row = (uint32_t *)malloc((apis ? apis : 1) * sizeof(uint32_t));
  m->stream_row =
      (uint32_t *)malloc((streams ? streams : 1) * sizeof(uint32_t));
  if (!m->api_row || !m->stream_row)
    goto oom;
  for (size_t s = 0; s < streams; s++)
    m->stream_row[s] = MPROF_INDEX_NONE;
  if (mprof_render__build_ranges(m, &runs, &run_count) ||
      mprof_render__build_api(m, &calls, &call_count) ||
      mprof_render__build_counters(m))
    goto done;
  size_t cap = 2 * used + 2 * (run_count + call_count) +
               devices * (RS_TRACK_COUNTERS + 1) + 3;
  m->rows = (mprof_render_row *)calloc(cap, sizeof *m->rows);
  m->row_labels = (char **)calloc(cap, sizeof(char *));
  if (!m->rows || !m->row_labels)
    goto oom;
  char label[256];
  /* Host threads: a band each, then a row per nesting level of NVTX
   * ranges, then its CUDA API calls (a row per level where they nest); by
   * id, and in a set by host and process first, like the GPUs. */
  size_t thread_count = 0;
  threads = (host_thread *)calloc(run_count + call_count + 1, sizeof *threads);
  if (!threads)
    goto oom;
  for (size_t ri = 0, ci = 0; ri < run_count || ci < call_count;) {
    uint32_t thread = ri < run_count ? runs[ri].thread_id : UINT32_MAX;
    if (ci < call_count && (ri >= run_count || calls[ci].thread_id < thread))
      thread = calls[ci].thread_id;
    host_thread *h = &threads[thread_count++];
    h->thread_id = thread;
    h->process = MPROF_INDEX_NONE;
    h->run_first = ri;
    while (ri < run_count && runs[ri].thread_id == thread)
      ri++;
    h->run_end = ri;
    h->call_first = ci;
    while (ci < call_count && calls[ci].thread_id == thread)
      ci++;
    h->call_end = ci;
    /* Its process: the one whose launch its first linked call issued. */
    for (size_t c = h->call_first;
         c < h->call_end && m->api_count && h->process == MPROF_INDEX_NONE; c++)
      for (size_t i = 0; i < calls[c].count; i++) {
        int64_t launch =
            mprof_render_api_call_launch(m, m->api_order[calls[c].first + i]);
        if (launch < 0)
          continue;
        const mprof_launch_record *l = mprof_trace_launches(m->trace, NULL);
        h->process = mprof_trace_stream_process(m->trace, l[launch].stream);
        break;
      }
  }
  if (mprof_trace_process_count(m->trace) > 1) {
    sort_trace = m->trace;
    qsort(threads, thread_count, sizeof *threads, by_thread_process);
  }
  for (size_t t = 0; t < thread_count; t++) {
    const host_thread *h = &threads[t];
    snprintf(label, sizeof label, "Thread %u", h->thread_id);
    process_suffix(label, sizeof label, m->trace, h->process);
    add_row(m, MPROF_ROW_THREAD, MPROF_INDEX_NONE, label)->thread_id =
        h->thread_id;
    for (size_t ri = h->run_first; ri < h->run_end; ri++)
      run_row(m, MPROF_ROW_RANGES, h->thread_id, &runs[ri], "NVTX",
              "NVTX \u00b7 level %u");
    for (size_t ci = h->call_first; ci < h->call_end; ci++) {
      const rs_range_run *run = &calls[ci];
      for (size_t i = 0; i < run->count; i++)
        m->api_row[m->api_order[run->first + i]] = (uint32_t)m->row_count;
      run_row(m, MPROF_ROW_API, h->thread_id, run, "CUDA API",
              "CUDA API \u00b7 %u");
    }
  }
  uint32_t current = MPROF_INDEX_NONE - 1; /* no device yet */
  for (size_t i = 0; i < used; i++) {
    const mprof_stream_record *s = &st[order[i]];
    if (s->device != current) {
      current = s->device;
      if (s->device < devices) {
        snprintf(label, sizeof label, "GPU %u  %s", dev[s->device].id,
                 mprof_trace_string(m->trace, dev[s->device].name));
        process_suffix(label, sizeof label, m->trace,
                       mprof_trace_device_process(m->trace, s->device));
      } else {
        snprintf(label, sizeof label, "Unknown device");
      }
      add_row(m, MPROF_ROW_DEVICE, s->device, label);
      /* Its counter tracks, when it was PM-sampled. */
      size_t samples = s->device < devices
                           ? m->pm_first[s->device + 1] - m->pm_first[s->device]
                           : 0;
      for (int c = 0; samples && c < RS_TRACK_COUNTERS; c++) {
        int column =
            mprof_throughput_column(mprof_diagnosis_throughput(m->diagnosis),
                                    s->device, rs_track_counters[c]);
        if (column < 0)
          continue;
        snprintf(label, sizeof label, "%s",
                 mprof_counter_title(rs_track_counters[c]));
        if (label[0] >= 'a' && label[0] <= 'z')
          label[0] = (char)(label[0] - 'a' + 'A');
        mprof_render_row *r = add_row(m, MPROF_ROW_COUNTER, s->device, label);
        r->counter = rs_track_counters[c];
        r->column = column;
        r->first = m->pm_first[s->device];
        r->count = samples;
      }
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
    m->stream_row[order[i]] = (uint32_t)m->row_count;
    add_row(m, MPROF_ROW_STREAM, s->device, label)->stream = order[i];
  }
  /* The copies of no stream, last: a band and their row. */
  if (m->memop_first[streams + 1] > m->memop_first[streams]) {
    add_row(m, MPROF_ROW_DEVICE, MPROF_INDEX_NONE, "No stream");
    add_row(m, MPROF_ROW_STREAM, MPROF_INDEX_NONE, "copies")->stream =
        MPROF_INDEX_NONE;
  }
  for (size_t i = 0; i < m->row_count; i++)
    if (!m->row_labels[i])
      goto oom;
  rc = 0;
  goto done;
oom:
  rc = mprof_render__oom();
done:
  free(order);
  free(by);
  free(rank);
  free(runs);
  free(calls);
  free(threads);
  return rc;
}

int64_t rs_stream_memops(const mprof_render_model *m, uint32_t stream,
                         size_t *first, size_t *last) {
  size_t s = stream < m->memop_slots - 1 ? stream : m->memop_slots - 1;
  *first = m->memop_first[s];
  *last = m->memop_first[s + 1];
  return m->memop_longest[s];
}

uint32_t mprof_render_row_item(const mprof_render_model *m,
                               const mprof_render_row *row, size_t i) {
  if (!m || !row || i >= row->count)
    return MPROF_INDEX_NONE;
  switch (row->kind) {
  case MPROF_ROW_RANGES: return m->range_order[row->first + i];
  case MPROF_ROW_COUNTER: return m->pm_order[row->first + i];
  case MPROF_ROW_API: return m->api_order[row->first + i];
  default: return MPROF_INDEX_NONE;
  }
}
