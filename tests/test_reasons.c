/*
 * mprof tests — the stall-reason table against the map docs/DIAGNOSIS.md
 * publishes ("Stall reasons"), read from the page: each reason's dimension
 * and Raster family, the join and the diagnosis on a real H200 trace, the
 * synthetic generator. (The viewer's lanes are checked against the table in
 * test_render.)
 *
 * SPDX-License-Identifier: MIT
 */
#include "analysis_util.h"

#include <math.h>
#include "mprof/synth.h"

/* ---- the page's map --------------------------------------------------------
 * "| reason | dimension | why |" rows after "The map, from NVIDIA's
 * description of each reason:", dimensions named as the page names them. */

static const struct {
  const char *title;
  uint32_t dim;
} page_dimensions[] = {
    {"memory latency", MPROF_DIM_MEMORY_LATENCY},
    {"memory throughput", MPROF_DIM_MEMORY_THROUGHPUT},
    {"shared memory / MIO", MPROF_DIM_SHARED_MIO},
    {"compute pipes", MPROF_DIM_COMPUTE},
    {"synchronisation", MPROF_DIM_SYNC},
    {"instruction fetch / branching", MPROF_DIM_FETCH_BRANCH},
    {"scheduling", MPROF_DIM_SCHEDULING},
};

typedef struct page_row {
  char reason[64];
  uint32_t dim;
} page_row;

static page_row page_map[64];
static size_t page_rows;

static void read_page_map(void) {
  if (page_rows)
    return;
  size_t size = 0;
  char *page = (char *)test_read_file(tt_doc("DIAGNOSIS.md"), &size);
  assert_non_null(page);
  page = (char *)realloc(page, size + 1);
  page[size] = 0;
  const char *at = strstr(page, "The map, from NVIDIA's description");
  assert_non_null(at);
  at = strstr(at, "|---|---|---|\n");
  assert_non_null(at);
  at += strlen("|---|---|---|\n");
  while (*at == '|') {
    char reason[64], title[64];
    if (sscanf(at, "| %63[^ |] | %63[^|]|", reason, title) != 2)
      fail_msg("docs/DIAGNOSIS.md: a map row that is not \"| reason | "
               "dimension | why |\": %.60s",
               at);
    size_t n = strlen(title);
    while (n && title[n - 1] == ' ')
      title[--n] = 0;
    uint32_t dim = MPROF_DIM_NONE;
    for (size_t d = 0; d < sizeof page_dimensions / sizeof page_dimensions[0];
         d++)
      if (strcmp(page_dimensions[d].title, title) == 0)
        dim = page_dimensions[d].dim;
    if (dim == MPROF_DIM_NONE)
      fail_msg("docs/DIAGNOSIS.md maps %s to \"%s\", not a stall dimension",
               reason, title);
    assert_true(page_rows < sizeof page_map / sizeof page_map[0]);
    snprintf(page_map[page_rows].reason, sizeof page_map[0].reason, "%s",
             reason);
    page_map[page_rows++].dim = dim;
    at = strchr(at, '\n');
    assert_non_null(at);
    at++;
  }
  free(page);
  assert_int_equal(page_rows, 19); /* what CUPTI reports on the H200 */
}

/* The page's dimension of @p reason (a short name), MPROF_DIM_NONE when the
 * page does not list it. */
static uint32_t page_dimension(const char *reason) {
  read_page_map();
  for (size_t i = 0; i < page_rows; i++)
    if (strcmp(page_map[i].reason, reason) == 0)
      return page_map[i].dim;
  return MPROF_DIM_NONE;
}

/* The library's table holds the page's map, no more and no less: every
 * reason in the dimension the page gives it, by each spelling. */
static void test_table_is_the_page(void **state) {
  (void)state;
  read_page_map();
  assert_int_equal(mprof_stall_reason_info_count(), page_rows);
  for (size_t i = 0; i < page_rows; i++) {
    const char *reason = page_map[i].reason;
    const mprof_stall_reason_info *row = mprof_stall_reason_info_find(reason);
    if (!row)
      fail_msg("docs/DIAGNOSIS.md maps %s; the table lacks it", reason);
    char spelled[160];
    snprintf(spelled, sizeof spelled, "%s%.63s%s", MPROF_STALL_REASON_PREFIX,
             reason, MPROF_STALL_NOT_ISSUED_SUFFIX);
    uint32_t got[3] = {mprof_stall_reason_dimension(reason), row->dimension,
                       mprof_stall_reason_dimension(spelled)};
    for (int s = 0; s < 3; s++)
      if (got[s] != page_map[i].dim)
        fail_msg("%s: dimension %s, docs/DIAGNOSIS.md says %s", reason,
                 mprof_dimension_key(got[s]),
                 mprof_dimension_key(page_map[i].dim));
  }
}

/* Rows are well formed: the three spellings of a name agree, the dimension
 * is a stall dimension, and names are unique. */
static void test_table_rows(void **state) {
  (void)state;
  size_t n = mprof_stall_reason_info_count();
  assert_int_equal(n, 19); /* what CUPTI reports on the H200 */
  assert_null(mprof_stall_reason_info_at(n));
  for (size_t i = 0; i < n; i++) {
    const mprof_stall_reason_info *row = mprof_stall_reason_info_at(i);
    char want[128];
    snprintf(want, sizeof want, "%s%s", MPROF_STALL_REASON_PREFIX,
             row->short_name);
    assert_string_equal(row->name, want);
    snprintf(want, sizeof want, "%s%s%s", MPROF_STALL_REASON_PREFIX,
             row->short_name, MPROF_STALL_NOT_ISSUED_SUFFIX);
    assert_string_equal(row->not_issued, want);
    assert_true(row->dimension <= MPROF_DIM_SCHEDULING);
    assert_true(row->family < MPROF_STALL_FAMILY_COUNT_);
    for (size_t j = 0; j < i; j++)
      assert_string_not_equal(mprof_stall_reason_info_at(j)->short_name,
                              row->short_name);
  }
}

/* The Raster's family of a reason is the page's dimension, with the
 * issuing warp (selected) drawn apart from the rest of compute ("The
 * viewer's Raster and Flame lanes are the seven stall dimensions with
 * `selected` drawn apart as *Issued*"). */
static void test_family_is_the_page(void **state) {
  (void)state;
  read_page_map();
  for (size_t i = 0; i < page_rows; i++) {
    const char *reason = page_map[i].reason;
    uint32_t want = strcmp(reason, "selected") == 0
                        ? (uint32_t)MPROF_STALL_FAMILY_ISSUED
                        : page_map[i].dim;
    uint32_t got = mprof_stall_reason_family(reason);
    if (got != want)
      fail_msg("%s: family %u, the page's dimension gives %u", reason, got,
               want);
  }
  /* The reason the two used to disagree on: a ready warp another warp beat
   * to the scheduler is issue bound (docs/DIAGNOSIS.md). */
  assert_int_equal(page_dimension("not_selected"), MPROF_DIM_COMPUTE);
  assert_int_equal(mprof_stall_reason_family("not_selected"),
                   MPROF_STALL_FAMILY_COMPUTE);
}

/* Every spelling finds its row; unknown names are "other" to the diagnosis
 * and scheduling to the viewer. */
static void test_lookup(void **state) {
  (void)state;
  for (size_t i = 0; i < mprof_stall_reason_info_count(); i++) {
    const mprof_stall_reason_info *row = mprof_stall_reason_info_at(i);
    char plain_ni[96];
    snprintf(plain_ni, sizeof plain_ni, "%s%s", row->short_name,
             MPROF_STALL_NOT_ISSUED_SUFFIX);
    assert_ptr_equal(mprof_stall_reason_info_find(row->name), row);
    assert_ptr_equal(mprof_stall_reason_info_find(row->short_name), row);
    assert_ptr_equal(mprof_stall_reason_info_find(row->not_issued), row);
    assert_ptr_equal(mprof_stall_reason_info_find(plain_ni), row);
    assert_int_equal(mprof_stall_reason_dimension(row->not_issued),
                     row->dimension);
    assert_int_equal(mprof_stall_reason_family(row->not_issued), row->family);
    assert_false(mprof_stall_reason_is_not_issued(row->name));
    assert_true(mprof_stall_reason_is_not_issued(row->not_issued));
    assert_string_equal(mprof_stall_reason_short_name(row->name),
                        row->short_name);
  }
  assert_null(mprof_stall_reason_info_find("tensor_throttle"));
  assert_null(mprof_stall_reason_info_find("_not_issued"));
  assert_null(mprof_stall_reason_info_find(NULL));
  assert_int_equal(mprof_stall_reason_dimension(REASON("some_future_reason")),
                   MPROF_DIM_NONE);
  assert_int_equal(mprof_stall_reason_family("some_future_reason"),
                   MPROF_STALL_FAMILY_SCHEDULING);
  assert_false(mprof_stall_reason_is_not_issued(MPROF_STALL_NOT_ISSUED_SUFFIX));
  assert_string_equal(mprof_stall_reason_short_name(NULL), "");
}

/* A real H200 trace: every reason it names is in the table; the join gives
 * each the table's dimension and pairs every twin; the diagnosis adds the
 * shares of each dimension's reasons and nothing else. */
static void test_join_and_diagnosis_read_the_table(void **state) {
  (void)state;
  const char *root = getenv("MPROF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/samples/gemm.mprof", root ? root : ".");
  mprof_trace *trace;
  assert_int_equal(mprof_trace_open(&trace, path, NULL), 0);
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  mprof_join *join;
  assert_int_equal(mprof_join_build(&join, trace, &jo), 0);
  /* CUPTI's list also holds two counters that are not stall reasons
   * (smsp__pcsamp_sample_count, smsp__pcsamp_samples_data_dropped). */
  size_t reasons = mprof_join_reason_count(join), stalls = 0;
  for (size_t r = 0; r < reasons; r++) {
    const mprof_stall_reason *sr = mprof_join_reason(join, r);
    if (strcmp(sr->name, sr->full_name) == 0)
      continue;
    stalls++;
    const mprof_stall_reason_info *row =
        mprof_stall_reason_info_find(sr->full_name);
    if (!row)
      fail_msg("the H200 reports %s, which the table lacks", sr->full_name);
    uint32_t want = page_dimension(mprof_stall_reason_short_name(row->name));
    if (sr->dimension != want)
      fail_msg("the join puts %s in %s; docs/DIAGNOSIS.md in %s", sr->name,
               mprof_dimension_key(sr->dimension), mprof_dimension_key(want));
    assert_int_equal(sr->not_issued,
                     (uint32_t)mprof_stall_reason_is_not_issued(sr->name));
    assert_true(sr->plain < reasons);
    assert_string_equal(mprof_join_reason(join, sr->plain)->full_name,
                        row->name);
  }
  assert_int_equal(stalls, 2 * mprof_stall_reason_info_count());

  mprof_diagnosis *diagnosis;
  assert_int_equal(mprof_diagnose(&diagnosis, join, NULL), 0);
  const mprof_kernel_diagnosis *kd = mprof_diagnosis_kernel(diagnosis, 0);
  assert_non_null(kd);
  double by_dimension[MPROF_DIM_SCHEDULING + 1] = {0};
  for (size_t s = 0; s < kd->stall_count; s++) {
    const mprof_reason_share *share = &kd->stalls[s];
    assert_int_equal(share->dimension, page_dimension(share->reason));
    assert_true(share->dimension <= MPROF_DIM_SCHEDULING);
    by_dimension[share->dimension] += share->share;
  }
  assert_true(fabs(kd->other_share) < 1e-12);
  for (uint32_t d = 0; d <= MPROF_DIM_SCHEDULING; d++) {
    const mprof_dimension *dm = &kd->dimensions[d];
    double share = NAN;
    for (size_t m = 0; m < dm->metric_count; m++)
      if (strcmp(dm->metrics[m].name, "share") == 0)
        share = dm->metrics[m].value;
    if (!(fabs(share - by_dimension[d]) <= 1e-9))
      fail_msg("%s: share %.6f, its reasons add to %.6f",
               mprof_dimension_key(d), share, by_dimension[d]);
    /* The estimated gain never exceeds the share of samples. */
    if (dm->cost > share + 1e-9)
      fail_msg("%s: gain %.6f above its share %.6f", mprof_dimension_key(d),
               dm->cost, share);
  }
  /* The accessors reach the same elements, and NULL past the end. */
  assert_ptr_equal(mprof_kernel_diagnosis_stall(kd, 0), &kd->stalls[0]);
  assert_null(mprof_kernel_diagnosis_stall(kd, kd->stall_count));
  assert_ptr_equal(mprof_kernel_diagnosis_dimension(kd, MPROF_DIM_COMPUTE),
                   &kd->dimensions[MPROF_DIM_COMPUTE]);
  assert_null(mprof_kernel_diagnosis_dimension(kd, MPROF_DIM_COUNT_));
  assert_ptr_equal(mprof_kernel_diagnosis_hot(kd, 1), &kd->hot[1]);
  assert_null(mprof_kernel_diagnosis_hot(kd, kd->hot_count));
  assert_ptr_equal(mprof_kernel_diagnosis_shape(kd, 0), &kd->shapes[0]);
  assert_null(mprof_kernel_diagnosis_shape(NULL, 0));
  size_t shapes, pcs, kreasons;
  assert_ptr_equal(mprof_join_shape(join, 0, 0),
                   mprof_join_shapes(join, 0, &shapes));
  assert_null(mprof_join_shape(join, 0, shapes));
  assert_ptr_equal(mprof_join_pc(join, 0, 2),
                   mprof_join_pcs(join, 0, &pcs) + 2);
  assert_null(mprof_join_pc(join, 0, pcs));
  assert_ptr_equal(mprof_join_kernel_reason(join, 0, 0),
                   mprof_join_kernel_reasons(join, 0, &kreasons));
  assert_null(mprof_join_kernel_reason(join, 1, 0));
  const mprof_pc_stats *pc = mprof_join_pc(join, 0, 0);
  assert_ptr_equal(mprof_pc_stats_reason(pc, 0), &pc->reasons[0]);
  assert_null(mprof_pc_stats_reason(pc, pc->reason_count));
  const mprof_dimension *compute =
      mprof_kernel_diagnosis_dimension(kd, MPROF_DIM_COMPUTE);
  assert_ptr_equal(mprof_dimension_metric(compute, 0), &compute->metrics[0]);
  assert_null(mprof_dimension_metric(compute, compute->metric_count));
  const mprof_hot_instruction *hot = mprof_kernel_diagnosis_hot(kd, 0);
  assert_ptr_equal(mprof_hot_instruction_reason(hot, 0), &hot->reasons[0]);
  assert_null(mprof_hot_instruction_reason(hot, hot->reason_count));
  assert_null(mprof_hot_instruction_reason(NULL, 0));
  mprof_diagnosis_free(diagnosis);
  mprof_join_free(join);
  mprof_trace_free(trace);
}

/* The generator writes the table: every reason and its twin, in order. */
static void test_synth_writes_the_table(void **state) {
  (void)state;
  const char *path = test_path("reasons.mprof");
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 200;
  assert_int_equal(mprof_synth_write(path, &opts), 0);
  mprof_trace *trace;
  assert_int_equal(mprof_trace_open(&trace, path, NULL), 0);
  size_t n;
  const mprof_stall_reason_record *sr = mprof_trace_stall_reasons(trace, &n);
  assert_int_equal(n, 2 * mprof_stall_reason_info_count());
  for (size_t r = 0; r < n; r++) {
    const mprof_stall_reason_info *row = mprof_stall_reason_info_at(r / 2);
    assert_string_equal(mprof_trace_string(trace, sr[r].name),
                        (r & 1) ? row->not_issued : row->name);
  }
  mprof_trace_free(trace);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_rows),
      cmocka_unit_test(test_table_is_the_page),
      cmocka_unit_test(test_family_is_the_page),
      cmocka_unit_test(test_lookup),
      cmocka_unit_test(test_join_and_diagnosis_read_the_table),
      cmocka_unit_test(test_synth_writes_the_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
