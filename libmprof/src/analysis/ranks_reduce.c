/*
 * mprof — the reduce of the rank tables (mprof/ranks.h): every rank's
 * steps side by side, the median rank of each step, the stragglers, and a
 * diff of each straggler against its median rank.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mprof/error.h"
#include "mprof/join.h"
#include "mprof/names.h"
#include "mprof/ranks.h"
#include "mprof/units.h"
#include "analysis/ranks_internal.h"
#include "base/array.h"
#include "base/pool.h"

/* A rank's trace, opened, joined and diagnosed for the stragglers' diffs
 * (open while the changes are read). A median rank is often the median of
 * several stragglers: it is opened once. */
typedef struct rank_open {
  mprof_trace *trace;
  mprof_join *join;
  mprof_diagnosis *diagnosis;
  char *error; /* owned: why it could not be, or NULL */
} rank_open;

struct mprof_ranks {
  const mprof_rank_table **tables; /* by rank; borrowed strings copied */
  mprof_rank_info *ranks;
  mprof_rank_step **steps; /* per rank, by step number */
  mprof_straggler *stragglers;
  size_t count, straggler_count;
  rank_open *opened;  /* by rank; only the diffs' ranks are opened */
  mprof_diff **diffs; /* by straggler */
  char **texts;       /* summaries and diff errors, owned */
  size_t text_count;
  mprof_rank_table **copies; /* the tables, loaded as our own copies */
};

static const mprof_ranks_options default_options = MPROF_RANKS_OPTIONS_INIT;

MPROF__VERSIONS(ranks_options, "ranks options",
                MPROF__END_OF(mprof_ranks_options, max_diffs),
                MPROF__END_OF(mprof_ranks_options, threads));

int mprof_ranks_options_init(mprof_ranks_options *opts, unsigned version) {
  mprof_ranks_options init = MPROF_RANKS_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &ranks_options);
}

void mprof_ranks_free(mprof_ranks *r) {
  if (!r)
    return;
  for (size_t i = 0; r->diffs && i < r->straggler_count; i++)
    mprof_diff_free(r->diffs[i]);
  for (size_t i = 0; r->opened && i < r->count; i++) {
    rank_open *o = &r->opened[i];
    mprof_diagnosis_free(o->diagnosis);
    mprof_join_free(o->join);
    mprof_trace_free(o->trace);
    free(o->error);
  }
  free(r->opened);
  for (size_t i = 0; r->steps && i < r->count; i++)
    free(r->steps[i]);
  for (size_t i = 0; i < r->text_count; i++)
    free(r->texts[i]);
  for (size_t i = 0; r->copies && i < r->count; i++)
    mprof_rank_table_free(r->copies[i]);
  free(r->copies);
  free(r->texts);
  free(r->diffs);
  free(r->steps);
  free(r->stragglers);
  free(r->ranks);
  free(r->tables);
  free(r);
}

size_t mprof_ranks_count(const mprof_ranks *r) { return r ? r->count : 0; }

const mprof_rank_info *mprof_ranks_rank(const mprof_ranks *r, size_t i) {
  return r && i < r->count ? &r->ranks[i] : NULL;
}

const mprof_rank_step *mprof_ranks_step(const mprof_ranks *r, size_t i,
                                        size_t step) {
  return r && i < r->count && step < r->ranks[i].step_count ? &r->steps[i][step]
                                                            : NULL;
}

size_t mprof_ranks_straggler_count(const mprof_ranks *r) {
  return r ? r->straggler_count : 0;
}

const mprof_straggler *mprof_ranks_straggler(const mprof_ranks *r, size_t i) {
  return r && i < r->straggler_count ? &r->stragglers[i] : NULL;
}

/* A string the result owns; NULL when out of memory. */
static const char *own_text(mprof_ranks *r, const char *text) {
  char **grown =
      (char **)realloc(r->texts, (r->text_count + 1) * sizeof *grown);
  if (!grown)
    return NULL;
  r->texts = grown;
  char *copy = strdup(text);
  if (!copy)
    return NULL;
  r->texts[r->text_count++] = copy;
  return copy;
}

static int table_order(const void *a, const void *b) {
  const mprof_rank_table *x = *(const mprof_rank_table *const *)a;
  const mprof_rank_table *y = *(const mprof_rank_table *const *)b;
  if ((x->rank < 0) != (y->rank < 0))
    return x->rank < 0 ? 1 : -1;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return strcmp(mprof__rank_table_string(x, x->path),
                mprof__rank_table_string(y, y->path));
}

/* The step of rank @p i numbered @p number, or NULL. */
static const mprof_rank_step *step_numbered(const mprof_ranks *r, size_t i,
                                            uint64_t number) {
  const mprof_rank_step *s = r->steps[i];
  size_t n = r->ranks[i].step_count, at;
  MPROF__LOWER_BOUND(at, n, mid, s[mid].step < number);
  return at < n && s[at].step == number ? &s[at] : NULL;
}

static int step_number_order(const void *a, const void *b) {
  const mprof_rank_step *x = (const mprof_rank_step *)a;
  const mprof_rank_step *y = (const mprof_rank_step *)b;
  return x->step < y->step ? -1 : x->step > y->step;
}

/* Rank @p i's table as public steps and totals. */
static int fill_rank(mprof_ranks *r, size_t i, int any_comm) {
  const mprof_rank_table *t = r->tables[i];
  mprof_rank_info *info = &r->ranks[i];
  info->path = mprof__rank_table_string(t, t->path);
  info->rank = t->rank;
  info->host = mprof__rank_table_string(t, t->host);
  info->step_source = t->source;
  info->step_count = t->step_count;
  info->launches = t->launches;
  r->steps[i] = (mprof_rank_step *)calloc(t->step_count ? t->step_count : 1,
                                          sizeof **r->steps);
  if (!r->steps[i])
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t s = 0; s < t->step_count; s++) {
    const mprof__rank_step *row = &t->steps[s];
    mprof_rank_step *out = &r->steps[i][s];
    out->step = row->number;
    out->window_ns = row->window;
    out->window_start_ns = row->start;
    out->busy_ns = row->busy;
    out->compute_ns = row->compute;
    out->comm_ns = row->comm;
    out->overlap_ns = row->overlap;
    out->idle_ns = row->idle;
    out->idle_cause = mprof__rank_table_string(t, row->cause);
    out->idle_cause_ns = row->cause_ns;
    out->idle_in_calls_ns = row->idle_in_calls;
    out->launches = row->launches;
    out->score_ns = row->compute + (any_comm ? row->idle : 0);
    info->window_ns += row->window;
    info->busy_ns += row->busy;
    info->compute_ns += row->compute;
    info->comm_ns += row->comm;
    info->overlap_ns += row->overlap;
    info->idle_ns += row->idle;
  }
  qsort(r->steps[i], t->step_count, sizeof **r->steps, step_number_order);
  info->overlap_share =
      info->comm_ns ? (double)info->overlap_ns / (double)info->comm_ns : -1.0;
  return MPROF_OK;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct scored {
  uint64_t score;
  size_t rank;
} scored;

static int scored_order(const void *a, const void *b) {
  const scored *x = (const scored *)a, *y = (const scored *)b;
  MPROF__ORDER_BY(score);
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* GPU time of kernel @p k (by mangled name) of rank @p i in step index
 * @p s. */
static uint64_t cell_ns(const mprof_rank_table *t, size_t s,
                        const char *mangled) {
  size_t at;
  MPROF__LOWER_BOUND(at, t->cell_count, mid, t->cells[mid].step < s);
  for (; at < t->cell_count && t->cells[at].step == s; at++)
    if (strcmp(mprof__rank_table_string(
                   t, t->kernels[t->cells[at].kernel].mangled),
               mangled) == 0)
      return t->cells[at].ns;
  return 0;
}

/* The index of step @p number among table @p t's rows. */
static size_t row_of(const mprof_rank_table *t, uint64_t number) {
  for (size_t s = 0; s < t->step_count; s++)
    if (t->steps[s].number == number)
      return s;
  return (size_t)-1;
}

/* The kernel that grew most in that step over the median rank. */
static void slow_kernel(mprof_straggler *g, const mprof_rank_table *slow,
                        const mprof_rank_table *median) {
  size_t s = row_of(slow, g->step), m = row_of(median, g->step);
  uint64_t best = 0;
  if (s == (size_t)-1 || m == (size_t)-1)
    return;
  size_t at;
  MPROF__LOWER_BOUND(at, slow->cell_count, mid, slow->cells[mid].step < s);
  for (; at < slow->cell_count && slow->cells[at].step == s; at++) {
    const mprof__rank_kernel *k = &slow->kernels[slow->cells[at].kernel];
    if (k->collective)
      continue;
    const char *mangled = mprof__rank_table_string(slow, k->mangled);
    uint64_t mine = slow->cells[at].ns, theirs = cell_ns(median, m, mangled);
    if (mine > theirs && mine - theirs > best) {
      best = mine - theirs;
      g->kernel = mprof__rank_table_string(slow, k->name);
      g->kernel_mangled = mangled;
      g->kernel_ns = mine;
      g->median_kernel_ns = theirs;
    }
  }
}

/* The ranks to open (the marked ones) and the pool's task over them. */
typedef struct open_work {
  mprof_ranks *r;
  size_t *ranks;
} open_work;

/* Open, join and diagnose one rank's trace. A failure is kept as the
 * rank's error text (the straggler's diff_error), not returned: only
 * running out of memory fails the build. */
static int open_task(void *ctx, size_t task) {
  open_work *w = (open_work *)ctx;
  size_t i = w->ranks[task];
  rank_open *o = &w->r->opened[i];
  int rc = mprof_trace_open(&o->trace, w->r->ranks[i].path, NULL);
  if (!rc)
    rc = mprof_join_build(&o->join, o->trace, NULL);
  if (!rc)
    rc = mprof_diagnose(&o->diagnosis, o->join, NULL);
  if (rc == MPROF_ENOMEM)
    return rc;
  if (rc && !(o->error = strdup(mprof_error_last())))
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  return MPROF_OK;
}

/* Open the traces of the stragglers to diff, and of their median ranks,
 * on up to @p threads threads (each trace once). */
static int open_ranks(mprof_ranks *r, size_t diff_count, unsigned threads) {
  r->opened = (rank_open *)calloc(r->count, sizeof *r->opened);
  size_t *ranks = (size_t *)malloc((2 * diff_count + 1) * sizeof *ranks);
  unsigned char *want = (unsigned char *)calloc(r->count, 1);
  int rc = r->opened && ranks && want
               ? MPROF_OK
               : mprof__error_set(MPROF_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t k = 0; !rc && k < diff_count; k++) {
    if (!r->stragglers[k].kernel)
      continue;
    size_t side[2] = {r->stragglers[k].median_index,
                      r->stragglers[k].rank_index};
    for (int s = 0; s < 2; s++)
      if (!want[side[s]]) {
        want[side[s]] = 1;
        ranks[n++] = side[s];
      }
  }
  open_work w = {r, ranks};
  if (!rc)
    rc = mprof__pool_run(threads, n, open_task, &w);
  free(ranks);
  free(want);
  return rc;
}

/* Diff a straggler against its median rank (both opened); the change of
 * the straggler's kernel. A failure is kept as text, not returned. */
static int diff_straggler(mprof_ranks *r, size_t index) {
  mprof_straggler *g = &r->stragglers[index];
  const rank_open *side[2] = {&r->opened[g->median_index],
                              &r->opened[g->rank_index]};
  for (int s = 0; s < 2; s++)
    if (side[s]->error) {
      g->diff_error = side[s]->error;
      return MPROF_OK;
    }
  int rc = mprof_diff_run(&r->diffs[index], side[0]->diagnosis,
                          side[1]->diagnosis, NULL);
  if (rc == MPROF_ENOMEM)
    return rc;
  if (rc) {
    g->diff_error = own_text(r, mprof_error_last());
    return g->diff_error ? MPROF_OK
                         : mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  const mprof_diff *d = r->diffs[index];
  for (size_t k = 0; k < mprof_diff_kernel_count(d); k++) {
    const mprof_kernel_change *c = mprof_diff_kernel(d, k);
    if (c->mangled && g->kernel_mangled &&
        strcmp(c->mangled, g->kernel_mangled) == 0) {
      g->change = c;
      break;
    }
  }
  return MPROF_OK;
}

/* "rank 3", or the trace's file name for a trace without a rank. */
static void rank_label(char *out, size_t size, int64_t rank, const char *path) {
  const char *slash = strrchr(path, '/');
  if (rank >= 0)
    snprintf(out, size, "rank %lld", (long long)rank);
  else
    snprintf(out, size, "%s", slash ? slash + 1 : path);
}

static int summarize(mprof_ranks *r, mprof_straggler *g) {
  char text[1024], a[32], b[32], slow[96], median[96];
  size_t n = 0;
  rank_label(slow, sizeof slow, g->rank, r->ranks[g->rank_index].path);
  rank_label(median, sizeof median, g->median_rank,
             r->ranks[g->median_index].path);
  mprof_format_duration(a, sizeof a, (double)g->score_ns);
  mprof_format_duration(b, sizeof b, (double)g->median_score_ns);
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "%s is %.0f%% slower than the median, %s, in step %llu "
                        "(%s of its own work against %s)",
                        slow, 100.0 * g->excess, median,
                        (unsigned long long)g->step, a, b);
  if (g->kernel && n < sizeof text) {
    char name[128];
    mprof_name_short(name, sizeof name, g->kernel);
    mprof_format_duration(a, sizeof a, (double)g->kernel_ns);
    mprof_format_duration(b, sizeof b, (double)g->median_kernel_ns);
    n += (size_t)snprintf(text + n, sizeof text - n, ": %s took %s against %s",
                          name, a, b);
  }
  if (g->idle_ns > g->median_idle_ns + (g->score_ns - g->median_score_ns) / 2 &&
      n < sizeof text) {
    mprof_format_duration(a, sizeof a, (double)g->idle_ns);
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "%sthe GPU was idle %s while the host was in %s",
                          g->kernel ? "; " : ": ", a,
                          *g->idle_cause ? g->idle_cause
                                         : "no recorded CUDA call");
  }
  if (g->change && n < sizeof text) {
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "; over the whole trace its mean per launch changed "
                          "%+.0f%% (%s)",
                          100.0 * g->change->mean_change,
                          g->change->significant ? "outside the noise"
                                                 : "within the noise");
    /* The stall reason that grew most. */
    const mprof_stall_change *s = NULL;
    for (size_t k = 0; k < g->change->stall_change_count; k++) {
      const mprof_stall_change *c = mprof_kernel_change_stall(g->change, k);
      if (!s || c->candidate_share - c->base_share >
                    s->candidate_share - s->base_share)
        s = c;
    }
    if (s && s->candidate_share - s->base_share >= 0.05 && n < sizeof text)
      n += (size_t)snprintf(text + n, sizeof text - n,
                            " and its %s stalls went from %.0f%% to %.0f%%",
                            s->reason, 100.0 * s->base_share,
                            100.0 * s->candidate_share);
  }
  if (n < sizeof text)
    snprintf(text + n, sizeof text - n, ".");
  g->summary = own_text(r, text);
  return g->summary ? MPROF_OK
                    : mprof__error_set(MPROF_ENOMEM, "out of memory");
}

static int straggler_order(const void *a, const void *b) {
  const mprof_straggler *x = (const mprof_straggler *)a;
  const mprof_straggler *y = (const mprof_straggler *)b;
  uint64_t dx = x->score_ns - x->median_score_ns;
  uint64_t dy = y->score_ns - y->median_score_ns;
  if (dx != dy)
    return dx > dy ? -1 : 1;
  return x->rank_index < y->rank_index ? -1 : x->rank_index > y->rank_index;
}

/* For every step number, the median rank (the lower median, a rank that
 * ran) and the ranks above it by more than the threshold; each rank's
 * worst such step makes it a straggler. */
static int find_stragglers(mprof_ranks *r, const mprof_ranks_options *opts) {
  size_t total = 0;
  for (size_t i = 0; i < r->count; i++)
    total += r->ranks[i].step_count;
  uint64_t *numbers = (uint64_t *)malloc((total ? total : 1) * sizeof *numbers);
  scored *row = (scored *)malloc(r->count * sizeof *row);
  mprof_straggler *worst = (mprof_straggler *)calloc(r->count, sizeof *worst);
  if (!numbers || !row || !worst) {
    free(numbers);
    free(row);
    free(worst);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  size_t n = 0;
  for (size_t i = 0; i < r->count; i++)
    for (size_t s = 0; s < r->ranks[i].step_count; s++)
      numbers[n++] = r->steps[i][s].step;
  qsort(numbers, n, sizeof *numbers, u64_cmp);
  for (size_t k = 0; k < n; k++) {
    if (k && numbers[k] == numbers[k - 1])
      continue;
    size_t m = 0;
    for (size_t i = 0; i < r->count; i++) {
      const mprof_rank_step *st = step_numbered(r, i, numbers[k]);
      if (st)
        row[m++] = (scored){st->score_ns, i};
    }
    if (m < 2)
      continue;
    qsort(row, m, sizeof *row, scored_order);
    const scored *med = &row[(m - 1) / 2];
    const mprof_rank_step *med_step = step_numbered(r, med->rank, numbers[k]);
    for (size_t j = (m - 1) / 2 + 1; j < m; j++) {
      uint64_t excess = row[j].score - med->score;
      if (excess <= opts->min_excess_ns ||
          (double)excess <= opts->threshold * (double)med->score)
        continue;
      size_t i = row[j].rank;
      mprof_straggler *g = &worst[i];
      g->slow_steps++;
      if (g->slow_steps > 1 && excess <= g->score_ns - g->median_score_ns)
        continue;
      const mprof_rank_step *st = step_numbered(r, i, numbers[k]);
      g->rank_index = i;
      g->rank = r->ranks[i].rank;
      g->step = numbers[k];
      g->score_ns = row[j].score;
      g->median_score_ns = med->score;
      g->excess = (double)excess / (double)(med->score ? med->score : 1);
      g->median_index = med->rank;
      g->median_rank = r->ranks[med->rank].rank;
      g->idle_cause = st->idle_cause;
      g->idle_ns = st->idle_ns;
      g->median_idle_ns = med_step->idle_ns;
    }
  }
  free(numbers);
  free(row);
  size_t found = 0;
  for (size_t i = 0; i < r->count; i++)
    if (worst[i].slow_steps)
      worst[found++] = worst[i];
  qsort(worst, found, sizeof *worst, straggler_order);
  r->stragglers = worst;
  r->straggler_count = found;
  r->diffs = (mprof_diff **)calloc(found ? found : 1, sizeof *r->diffs);
  if (!r->diffs)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  for (size_t k = 0; k < found; k++) {
    mprof_straggler *g = &worst[k];
    g->diff_error = "";
    r->ranks[g->rank_index].straggler = 1;
    slow_kernel(g, r->tables[g->rank_index], r->tables[g->median_index]);
  }
  /* The first max_diffs stragglers with a slow kernel are diffed; their
   * traces are opened first, in parallel, then diffed in order. */
  size_t diff_count = opts->flags & MPROF_RANKS_NO_DIFF ? 0
                      : found < opts->max_diffs         ? found
                                                        : opts->max_diffs;
  int rc = open_ranks(r, diff_count, opts->version >= 2 ? opts->threads : 0);
  for (size_t k = 0; k < found && !rc; k++) {
    if (k < diff_count && worst[k].kernel)
      rc = diff_straggler(r, k);
    if (!rc)
      rc = summarize(r, &worst[k]);
  }
  return rc;
}

int mprof_ranks_build(mprof_ranks **out, const mprof_rank_table *const *tables,
                      size_t count, const mprof_ranks_options *opts) {
  if (!out || !tables || !count)
    return mprof__error_set(MPROF_EINVAL,
                            "mprof_ranks_build: no rank tables given");
  *out = NULL;
  opts = (const mprof_ranks_options *)mprof__options_or_defaults(
      opts, &default_options, 1, MPROF_RANKS_OPTIONS_VERSION, "ranks");
  if (!opts)
    return MPROF_EVERSION;
  if (!(opts->threshold >= 0))
    return mprof__error_set(MPROF_EINVAL,
                            "ranks options: threshold must be 0 or more");
  mprof_ranks *r = (mprof_ranks *)calloc(1, sizeof *r);
  if (!r)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  r->count = count;
  r->tables = (const mprof_rank_table **)malloc(count * sizeof *r->tables);
  r->copies = (mprof_rank_table **)calloc(count, sizeof *r->copies);
  r->ranks = (mprof_rank_info *)calloc(count, sizeof *r->ranks);
  r->steps = (mprof_rank_step **)calloc(count, sizeof *r->steps);
  int rc = r->tables && r->copies && r->ranks && r->steps
               ? MPROF_OK
               : mprof__error_set(MPROF_ENOMEM, "out of memory");
  /* Our own copies: the caller may free its tables after the build. */
  for (size_t i = 0; !rc && i < count; i++) {
    size_t size;
    void *bytes = NULL;
    rc = tables[i]
             ? mprof_rank_table_save(tables[i], NULL, 0, &size)
             : mprof__error_set(MPROF_EINVAL,
                                "mprof_ranks_build: table %zu is NULL", i);
    if (!rc)
      rc = (bytes = malloc(size))
               ? mprof_rank_table_save(tables[i], bytes, size, &size)
               : mprof__error_set(MPROF_ENOMEM, "out of memory");
    if (!rc)
      rc = mprof_rank_table_load(&r->copies[i], bytes, size);
    free(bytes);
    if (!rc)
      r->tables[i] = r->copies[i];
  }
  if (!rc)
    qsort(r->tables, count, sizeof *r->tables, table_order);
  for (size_t i = 1; !rc && i < count; i++)
    if (r->tables[i]->rank >= 0 && r->tables[i]->rank == r->tables[i - 1]->rank)
      rc = mprof__error_set(
          MPROF_EINVAL, "%s and %s are both rank %lld: give one trace per rank",
          mprof__rank_table_string(r->tables[i - 1], r->tables[i - 1]->path),
          mprof__rank_table_string(r->tables[i], r->tables[i]->path),
          (long long)r->tables[i]->rank);
  int any_comm = 0;
  for (size_t i = 0; !rc && i < count; i++)
    for (size_t s = 0; s < r->tables[i]->step_count; s++)
      any_comm |= r->tables[i]->steps[s].comm != 0;
  for (size_t i = 0; !rc && i < count; i++)
    rc = fill_rank(r, i, any_comm);
  if (!rc)
    rc = find_stragglers(r, opts);
  if (rc) {
    mprof_ranks_free(r);
    return rc;
  }
  *out = r;
  return MPROF_OK;
}
