/*
 * mprof — compare two diagnosed traces kernel by kernel.
 *
 * The noise model and its thresholds are documented in docs/DIAGNOSIS.md
 * ("Diff"); change both together.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_internal.h"
#include "base/arena.h"
#include "internal.h"
#include "mprof/diff.h"
#include "mprof/units.h"

/* With one launch on a side the spread is unknown: such kernels count as
 * changed only from this multiple of min_change. */
#define UNKNOWN_NOISE_FACTOR 5.0
/* Welch's t above this many degrees of freedom uses the normal tail. */
#define NORMAL_DOF 1000.0

struct mprof_diff {
  const mprof_diagnosis *base, *candidate;
  mprof__arena arena;
  size_t kernel_count;
  mprof_kernel_change *kernels;
};

const char *mprof_change_name(uint32_t change) {
  static const char *const names[] = {"noise", "slower", "faster", "only_base",
                                      "only_candidate"};
  return change < 5 ? names[change] : "";
}

MPROF__VERSIONS(diff_options, "diff options",
                MPROF__END_OF(mprof_diff_options, hot_count));

int mprof_diff_options_init(mprof_diff_options *opts, unsigned version) {
  mprof_diff_options init = MPROF_DIFF_OPTIONS_INIT;
  return mprof__options_init(opts, &init, version, &diff_options);
}

/* ---- Student's t ---------------------------------------------------------
 * Two-sided tail probability through the regularized incomplete beta
 * function (continued fraction, after Numerical Recipes), and the normal
 * tail for large degrees of freedom. */

/* log Gamma(x) for x > 0 (Lanczos, g = 7); lgamma() writes a global. */
static double log_gamma(double x) {
  static const double c[9] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  if (x < 0.5)
    return log(M_PI / fabs(sin(M_PI * x))) - log_gamma(1.0 - x);
  x -= 1.0;
  double a = c[0], t = x + 7.5;
  for (int i = 1; i < 9; i++)
    a += c[i] / (x + i);
  return 0.5 * log(2 * M_PI) + (x + 0.5) * log(t) - t + log(a);
}

/* One term of the modified Lentz method: updates @p c and @p d for the
 * partial numerator @p aa and returns the factor the fraction takes. */
static double lentz_term(double aa, double *c, double *d) {
  const double tiny = 1e-300;
  *d = 1 + aa * *d;
  if (fabs(*d) < tiny)
    *d = tiny;
  *c = 1 + aa / *c;
  if (fabs(*c) < tiny)
    *c = tiny;
  *d = 1 / *d;
  return *d * *c;
}

static double beta_fraction(double a, double b, double x) {
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < 1e-300)
    d = 1e-300;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; m++) {
    int m2 = 2 * m;
    h *= lentz_term(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
    double step =
        lentz_term(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
    h *= step;
    if (fabs(step - 1) < 1e-14)
      break;
  }
  return h;
}

static double beta_regularized(double a, double b, double x) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front = exp(log_gamma(a + b) - log_gamma(a) - log_gamma(b) +
                     a * log(x) + b * log(1 - x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

/* P(|T| >= t) for Student's t with @p dof degrees of freedom. */
static double t_tail(double t, double dof) {
  t = fabs(t);
  if (isinf(t))
    return 0;
  if (dof > NORMAL_DOF)
    return erfc(t / sqrt(2.0));
  return beta_regularized(dof / 2, 0.5, dof / (dof + t * t));
}

/* The t with P(|T| >= t) = alpha. */
static double t_critical(double alpha, double dof) {
  double lo = 0, hi = 1e4;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (t_tail(mid, dof) > alpha)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* ---- matching kernels --------------------------------------------------- */

typedef struct side_kernel {
  const mprof_kernel_diagnosis *k;
  uint32_t device; /* the key's device: the ordinal, or 0 by name only */
} side_kernel;

static int compare_side(const void *a, const void *b) {
  const side_kernel *x = (const side_kernel *)a, *y = (const side_kernel *)b;
  int c = strcmp(x->k->stats->mangled, y->k->stats->mangled);
  if (c)
    return c;
  return x->device < y->device ? -1 : x->device > y->device;
}

/* Launched kernels of @p d, keyed and sorted; *single: one device only. */
static side_kernel *side_list(const mprof_diagnosis *d, size_t *count,
                              int *single) {
  size_t n = mprof_diagnosis_kernel_count(d);
  side_kernel *list = (side_kernel *)malloc((n ? n : 1) * sizeof *list);
  *count = 0;
  *single = 1;
  if (!list)
    return NULL;
  uint32_t first_device = MPROF_INDEX_NONE;
  for (size_t i = 0; i < n; i++) {
    const mprof_kernel_diagnosis *k = mprof_diagnosis_kernel(d, i);
    if (!k->stats->launches)
      continue;
    if (first_device == MPROF_INDEX_NONE)
      first_device = k->stats->device_id;
    else if (k->stats->device_id != first_device)
      *single = 0;
    list[*count].k = k;
    list[*count].device = k->stats->device_id;
    (*count)++;
  }
  return list;
}

static int stall_sampled(const mprof_kernel_diagnosis *k) {
  return k->dimensions[MPROF_DIM_MEMORY_LATENCY].state != MPROF_STATE_UNKNOWN;
}

static int compare_stall_change(const void *a, const void *b) {
  const mprof_stall_change *x = (const mprof_stall_change *)a;
  const mprof_stall_change *y = (const mprof_stall_change *)b;
  double dx = fabs(x->candidate_share - x->base_share);
  double dy = fabs(y->candidate_share - y->base_share);
  if (dx != dy)
    return dx > dy ? -1 : 1;
  return strcmp(x->reason, y->reason);
}

static void compare_stalls(mprof_diff *diff, mprof_kernel_change *c) {
  const mprof_kernel_diagnosis *b = c->base, *k = c->candidate;
  mprof_dimension_change *dims = (mprof_dimension_change *)mprof__arena_alloc(
      &diff->arena, MPROF_DIM_COUNT_ * sizeof *dims);
  if (!dims)
    return;
  for (uint32_t d = 0; d < MPROF_DIM_COUNT_; d++) {
    dims[d].dimension = d;
    dims[d].base_state = b->dimensions[d].state;
    dims[d].candidate_state = k->dimensions[d].state;
    dims[d].base_cost = b->dimensions[d].cost;
    dims[d].candidate_cost = k->dimensions[d].cost;
  }
  c->dimension_changes = dims;
  c->dimension_change_count = MPROF_DIM_COUNT_;
  c->stalls_compared = stall_sampled(b) && stall_sampled(k);
  if (!c->stalls_compared)
    return;
  size_t cap = b->stall_count + k->stall_count;
  mprof_stall_change *list = (mprof_stall_change *)mprof__arena_alloc(
      &diff->arena, (cap ? cap : 1) * sizeof *list);
  if (!list)
    return;
  size_t n = 0;
  for (size_t i = 0; i < b->stall_count; i++) {
    list[n].reason = b->stalls[i].reason;
    list[n].dimension = b->stalls[i].dimension;
    list[n].base_share = b->stalls[i].share;
    n++;
  }
  for (size_t i = 0; i < k->stall_count; i++) {
    size_t j;
    for (j = 0; j < n; j++)
      if (strcmp(list[j].reason, k->stalls[i].reason) == 0)
        break;
    if (j == n) {
      list[n].reason = k->stalls[i].reason;
      list[n].dimension = k->stalls[i].dimension;
      n++;
    }
    list[j].candidate_share = k->stalls[i].share;
  }
  mprof__qsort(list, n, sizeof *list, compare_stall_change);
  c->stall_changes = list;
  c->stall_change_count = n;
}

/* Whether the instruction at @p offset of cubin @p crc, from @p file:@p line
 * (file NULL: no source line), is @p h as @p mode matches the sides. */
static int same_key(uint32_t mode, uint32_t offset, uint64_t crc,
                    const char *file, uint32_t line,
                    const mprof_hot_instruction *h) {
  if (mode == MPROF_HOT_BY_OFFSET)
    return offset == h->offset && crc == h->cubin_crc;
  if (mode == MPROF_HOT_BY_LINE)
    return file && line == h->line && strcmp(file, h->file) == 0;
  return 0;
}

/* The share of the instructions of @p side that match @p h; -1 when the
 * sides' instructions cannot be matched. */
static double side_share(const mprof_join *join,
                         const mprof_kernel_diagnosis *side, uint32_t mode,
                         const mprof_hot_instruction *h) {
  if (mode == MPROF_HOT_UNMATCHED)
    return -1.0;
  size_t count;
  const mprof_pc_stats *pcs = mprof_join_pcs(join, side->kernel, &count);
  uint64_t samples = 0;
  for (size_t i = 0; i < count; i++) {
    const mprof_sass_instruction *in = pcs[i].instruction;
    if (same_key(mode, pcs[i].offset, pcs[i].cubin_crc, in ? in->file : NULL,
                 in ? in->line : 0, h))
      samples += pcs[i].samples;
  }
  return side->stats->samples ? (double)samples / side->stats->samples : 0;
}

static int compare_hot_change(const void *a, const void *b) {
  const mprof_hot_change *x = (const mprof_hot_change *)a;
  const mprof_hot_change *y = (const mprof_hot_change *)b;
  double mx =
      x->base_share > x->candidate_share ? x->base_share : x->candidate_share;
  double my =
      y->base_share > y->candidate_share ? y->base_share : y->candidate_share;
  if (mx != my)
    return mx > my ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Hot instruction @p h of the base side (@p base) or the candidate: its
 * offset, SASS and source line, its share there and @p other, the share
 * of the other side. */
static void hot_change(mprof_hot_change *c, const mprof_hot_instruction *h,
                       int base, double other) {
  c->offset = h->offset;
  c->sass = h->sass;
  c->file = h->file;
  c->line = h->line;
  c->base_share = base ? h->share : other;
  c->candidate_share = base ? other : h->share;
}

static void compare_hot(mprof_diff *diff, mprof_kernel_change *c,
                        size_t hot_count) {
  const mprof_kernel_diagnosis *b = c->base, *k = c->candidate;
  if (!c->stalls_compared)
    return;
  size_t nb = b->hot_count < hot_count ? b->hot_count : hot_count;
  size_t nk = k->hot_count < hot_count ? k->hot_count : hot_count;
  uint32_t mode = MPROF_HOT_UNMATCHED;
  if (b->stats->cubin_crc == k->stats->cubin_crc)
    mode = MPROF_HOT_BY_OFFSET;
  else if (nb && nk && *b->hot[0].file && *k->hot[0].file)
    mode = MPROF_HOT_BY_LINE;
  c->hot_match = mode;
  mprof_hot_change *list = (mprof_hot_change *)mprof__arena_alloc(
      &diff->arena, (nb + nk ? nb + nk : 1) * sizeof *list);
  if (!list)
    return;
  const mprof_join *bj = mprof_diagnosis_join(diff->base);
  const mprof_join *kj = mprof_diagnosis_join(diff->candidate);
  size_t n = 0;
  for (size_t i = 0; i < nk; i++) {
    const mprof_hot_instruction *h = &k->hot[i];
    hot_change(&list[n++], h, 0, side_share(bj, b, mode, h));
  }
  for (size_t i = 0; i < nb; i++) {
    const mprof_hot_instruction *h = &b->hot[i];
    int seen = 0;
    for (size_t j = 0; j < nk && !seen; j++)
      seen =
          same_key(mode, h->offset, h->cubin_crc, h->file, h->line, &k->hot[j]);
    if (!seen)
      hot_change(&list[n++], h, 1, side_share(kj, k, mode, h));
  }
  mprof__qsort(list, n, sizeof *list, compare_hot_change);
  c->hot_changes = list;
  c->hot_change_count = n;
}

static void compare_times(mprof_kernel_change *c,
                          const mprof_diff_options *opts) {
  const mprof_kernel_stats *b = c->base->stats, *k = c->candidate->stats;
  c->base_mean_ns = b->mean_ns;
  c->candidate_mean_ns = k->mean_ns;
  c->total_delta_ns = (int64_t)k->total_ns - (int64_t)b->total_ns;
  c->total_change =
      b->total_ns ? (double)c->total_delta_ns / (double)b->total_ns : 0;
  double delta = k->mean_ns - b->mean_ns;
  c->mean_change = b->mean_ns > 0 ? delta / b->mean_ns : 0;
  c->p_value = 1;
  double rel = fabs(c->mean_change);
  if (b->launches < 2 || k->launches < 2 || b->mean_ns <= 0) {
    c->noise = -1;
    c->significant = rel >= UNKNOWN_NOISE_FACTOR * opts->min_change;
  } else {
    double vb = b->stddev_ns * b->stddev_ns / (double)b->launches;
    double vk = k->stddev_ns * k->stddev_ns / (double)k->launches;
    double se = sqrt(vb + vk);
    double den = vb * vb / (double)(b->launches - 1) +
                 vk * vk / (double)(k->launches - 1);
    c->dof = den > 0 ? (vb + vk) * (vb + vk) / den
                     : (double)(b->launches + k->launches - 2);
    if (se > 0) {
      c->t = delta / se;
      c->p_value = t_tail(c->t, c->dof);
      double band = t_critical(opts->alpha, c->dof) * se / b->mean_ns;
      c->noise = band > opts->min_change ? band : opts->min_change;
    } else {
      /* No spread at all (synthetic data): any change is real. */
      c->t = delta > 0 ? INFINITY : delta < 0 ? -INFINITY : 0;
      c->p_value = delta != 0 ? 0 : 1;
      c->noise = opts->min_change;
    }
    c->significant = c->p_value < opts->alpha && rel >= opts->min_change;
  }
  c->change = !c->significant        ? MPROF_CHANGE_NOISE
              : c->mean_change > 0.0 ? MPROF_CHANGE_SLOWER
                                     : MPROF_CHANGE_FASTER;
}

/* The change of a kernel in one sentence. */
static void summarise(mprof_diff *diff, mprof_kernel_change *c) {
  mprof__arena *a = &diff->arena;
  char x[32], y[32], p[32], q[32], t[32], n[32];
  const mprof_kernel_diagnosis *side = c->base ? c->base : c->candidate;
  if (c->change == MPROF_CHANGE_ONLY_BASE ||
      c->change == MPROF_CHANGE_ONLY_CANDIDATE) {
    mprof_format_count(n, sizeof n, side->stats->launches);
    mprof_format_duration(x, sizeof x, (double)side->stats->total_ns);
    mprof_format_duration(y, sizeof y, side->stats->mean_ns);
    c->summary = mprof__arena_printf(
        a, "%s: %s launch%s, %s of GPU time (%s per launch).",
        c->change == MPROF_CHANGE_ONLY_BASE ? "Gone from the candidate"
                                            : "New in the candidate",
        n, side->stats->launches == 1 ? "" : "es", x, y);
    return;
  }
  mprof_format_duration(x, sizeof x, c->base_mean_ns);
  mprof_format_duration(y, sizeof y, c->candidate_mean_ns);
  snprintf(p, sizeof p, "%+.1f%%", c->mean_change * 100.0);
  if (c->noise >= 0)
    snprintf(q, sizeof q, "noise +/-%.1f%%", c->noise * 100.0);
  else
    snprintf(q, sizeof q, "noise unknown: a single launch");
  mprof_format_duration(t, sizeof t, (double)c->total_delta_ns);
  const char *head = c->change == MPROF_CHANGE_SLOWER   ? "Slower"
                     : c->change == MPROF_CHANGE_FASTER ? "Faster"
                                                        : "Within noise";
  const char *text = mprof__arena_printf(
      a, "%s: %s -> %s per launch (%s, %s); total GPU time %s%s (%+.1f%%).",
      head, x, y, p, q, c->total_delta_ns >= 0 ? "+" : "", t,
      c->total_change * 100.0);
  /* What moved: the verdict, then the largest stall shift. */
  uint32_t bv = c->base->verdict_dimension,
           kv = c->candidate->verdict_dimension;
  if (bv != kv)
    text = mprof__arena_printf(
        a, "%s Verdict: %s -> %s.", text,
        bv < MPROF_DIM_COUNT_ ? mprof_dimension_title(bv) : "none",
        kv < MPROF_DIM_COUNT_ ? mprof_dimension_title(kv) : "none");
  if (c->stalls_compared && c->stall_change_count) {
    const mprof_stall_change *s = &c->stall_changes[0];
    if (fabs(s->candidate_share - s->base_share) >= 0.05) {
      mprof_format_percent(x, sizeof x, s->base_share);
      mprof_format_percent(y, sizeof y, s->candidate_share);
      text = mprof__arena_printf(a, "%s Largest stall shift: %s %s -> %s.",
                                 text, s->reason, x, y);
    }
  }
  c->summary = text ? text : "";
}

static int compare_kernel_change(const void *a, const void *b) {
  const mprof_kernel_change *x = (const mprof_kernel_change *)a;
  const mprof_kernel_change *y = (const mprof_kernel_change *)b;
  uint64_t dx = (uint64_t)(x->total_delta_ns < 0 ? -x->total_delta_ns
                                                 : x->total_delta_ns);
  uint64_t dy = (uint64_t)(y->total_delta_ns < 0 ? -y->total_delta_ns
                                                 : y->total_delta_ns);
  if (dx != dy)
    return dx > dy ? -1 : 1;
  int c = strcmp(x->mangled, y->mangled);
  if (c)
    return c;
  return x->device_id < y->device_id ? -1 : x->device_id > y->device_id;
}

static void fill_one_side(mprof_kernel_change *c,
                          const mprof_kernel_diagnosis *k, int is_base) {
  c->name = k->stats->name;
  c->mangled = k->stats->mangled;
  c->device_id = k->stats->device_id;
  c->noise = -1;
  c->p_value = 1;
  if (is_base) {
    c->base = k;
    c->base_mean_ns = k->stats->mean_ns;
    c->total_delta_ns = -(int64_t)k->stats->total_ns;
    c->total_change = k->stats->total_ns ? -1.0 : 0.0;
    c->change = MPROF_CHANGE_ONLY_BASE;
  } else {
    c->candidate = k;
    c->candidate_mean_ns = k->stats->mean_ns;
    c->total_delta_ns = (int64_t)k->stats->total_ns;
    c->change = MPROF_CHANGE_ONLY_CANDIDATE;
  }
}

int mprof_diff_run(mprof_diff **out, const mprof_diagnosis *base,
                   const mprof_diagnosis *candidate,
                   const mprof_diff_options *opts) {
  mprof_diff_options defaults = MPROF_DIFF_OPTIONS_INIT;
  if (!out || !base || !candidate)
    return mprof__error_set(MPROF_EINVAL, "mprof_diff_run: NULL argument");
  *out = NULL;
  opts = mprof__options_or_defaults(opts, &defaults, MPROF_DIFF_OPTIONS_VERSION,
                                    MPROF_DIFF_OPTIONS_VERSION, "diff");
  if (!opts)
    return MPROF_EVERSION;
  if (!(opts->alpha > 0 && opts->alpha < 1) || !(opts->min_change >= 0))
    return mprof__error_set(MPROF_EINVAL,
                            "diff options: alpha must be in (0, 1) and "
                            "min_change >= 0");
  mprof_diff *diff = (mprof_diff *)calloc(1, sizeof *diff);
  if (!diff)
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  diff->base = base;
  diff->candidate = candidate;
  size_t nb, nk;
  int single_b, single_k;
  side_kernel *lb = side_list(base, &nb, &single_b);
  side_kernel *lk = side_list(candidate, &nk, &single_k);
  if (!lb || !lk) {
    free(lb);
    free(lk);
    mprof_diff_free(diff);
    return mprof__error_set(MPROF_ENOMEM, "out of memory");
  }
  /* One device on each side: compare by name alone. */
  if (single_b && single_k) {
    for (size_t i = 0; i < nb; i++)
      lb[i].device = 0;
    for (size_t i = 0; i < nk; i++)
      lk[i].device = 0;
  }
  mprof__qsort(lb, nb, sizeof *lb, compare_side);
  mprof__qsort(lk, nk, sizeof *lk, compare_side);
  diff->kernels = (mprof_kernel_change *)mprof__arena_alloc(
      &diff->arena, (nb + nk ? nb + nk : 1) * sizeof *diff->kernels);
  size_t i = 0, j = 0;
  while (diff->kernels && (i < nb || j < nk)) {
    mprof_kernel_change *c = &diff->kernels[diff->kernel_count++];
    int cmp = i == nb ? 1 : j == nk ? -1 : compare_side(&lb[i], &lk[j]);
    if (cmp < 0) {
      fill_one_side(c, lb[i++].k, 1);
    } else if (cmp > 0) {
      fill_one_side(c, lk[j++].k, 0);
    } else {
      c->base = lb[i++].k;
      c->candidate = lk[j++].k;
      c->name = c->candidate->stats->name;
      c->mangled = c->candidate->stats->mangled;
      c->device_id = c->candidate->stats->device_id;
      compare_times(c, opts);
      compare_stalls(diff, c);
      compare_hot(diff, c, opts->hot_count);
    }
  }
  free(lb);
  free(lk);
  for (size_t k = 0; k < diff->kernel_count; k++)
    summarise(diff, &diff->kernels[k]);
  if (diff->arena.failed || !diff->kernels) {
    mprof_diff_free(diff);
    return mprof__error_set(MPROF_ENOMEM, "out of memory while comparing");
  }
  mprof__qsort(diff->kernels, diff->kernel_count, sizeof *diff->kernels,
               compare_kernel_change);
  *out = diff;
  return 0;
}

void mprof_diff_free(mprof_diff *diff) {
  if (!diff)
    return;
  mprof__arena_free(&diff->arena);
  free(diff);
}

size_t mprof_diff_kernel_count(const mprof_diff *diff) {
  return diff ? diff->kernel_count : 0;
}

const mprof_kernel_change *mprof_diff_kernel(const mprof_diff *diff,
                                             size_t index) {
  return diff && index < diff->kernel_count ? &diff->kernels[index] : NULL;
}

const mprof_stall_change *
mprof_kernel_change_stall(const mprof_kernel_change *kernel, size_t index) {
  return kernel && index < kernel->stall_change_count
             ? &kernel->stall_changes[index]
             : NULL;
}

const mprof_dimension_change *
mprof_kernel_change_dimension(const mprof_kernel_change *kernel, size_t index) {
  return kernel && index < kernel->dimension_change_count
             ? &kernel->dimension_changes[index]
             : NULL;
}

const mprof_hot_change *
mprof_kernel_change_hot(const mprof_kernel_change *kernel, size_t index) {
  return kernel && index < kernel->hot_change_count
             ? &kernel->hot_changes[index]
             : NULL;
}

void mprof_diff_totals(const mprof_diff *diff, uint64_t *base_ns,
                       uint64_t *candidate_ns) {
  if (base_ns)
    *base_ns =
        diff ? mprof_join_kernel_time(mprof_diagnosis_join(diff->base)) : 0;
  if (candidate_ns)
    *candidate_ns =
        diff ? mprof_join_kernel_time(mprof_diagnosis_join(diff->candidate))
             : 0;
}

size_t mprof_diff_gate(const mprof_diff *diff, double percent) {
  size_t tripped = 0;
  for (size_t i = 0; diff && i < diff->kernel_count; i++) {
    const mprof_kernel_change *c = &diff->kernels[i];
    if (c->change == MPROF_CHANGE_SLOWER && c->mean_change * 100.0 > percent)
      tripped++;
  }
  return tripped;
}

void mprof__diff_sides(const mprof_diff *diff, const mprof_diagnosis **base,
                       const mprof_diagnosis **candidate) {
  *base = diff->base;
  *candidate = diff->candidate;
}
