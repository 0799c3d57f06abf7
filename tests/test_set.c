/*
 * mprof tests — a set of traces opened as one (mprof_trace_open_merged()):
 * a view over the members that reads as the file mprof_trace_merge()
 * writes, that outlives the caller's handles, and whose join gives the same
 * summary, byte for byte, on one thread and on several.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <malloc.h>
/* Under ASan or TSan, malloc is the sanitizer's: ask it what it holds
 * (sanitizer/allocator_interface.h, which not every compiler ships). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_BY_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HEAP_BY_SANITIZER 1
#endif
#endif
#ifdef HEAP_BY_SANITIZER
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "mprof/mprof.h"
#include "mprof/synth.h"
#include "test_util.h"

#define MEMBERS 4

/* Member @p i of the run: its own seed, timing and process (rank @p i on
 * one host), PC samples, and a slowed kernel on rank 2. */
static const char *make_member(size_t i) {
  static char paths[MEMBERS][1024];
  char name[64];
  snprintf(name, sizeof name, "set-rank%zu.mprof", i);
  snprintf(paths[i], sizeof paths[i], "%s", test_path(name));
  char pid[16], rank[16];
  snprintf(pid, sizeof pid, "%zu", 500 + i);
  snprintf(rank, sizeof rank, "%zu", i);
  const char *meta[] = {"pid", pid, "host", "node1", "rank", rank};
  mprof_synth_options opts = MPROF_SYNTH_OPTIONS_INIT;
  opts.launches = 20000 + 1000 * i;
  opts.kernels = 12;
  opts.streams = 3;
  opts.seed = 7;
  opts.timing_seed = 100 + i;
  opts.slowdown = i == 2 ? 0.4 : 0.0;
  opts.slow_kernels = 1u << 3;
  opts.meta = meta;
  opts.meta_count = 3;
  if (mprof_synth_write(paths[i], &opts) != 0)
    fail_msg("%s", mprof_error_last());
  return paths[i];
}

static void open_members(mprof_trace **t) {
  for (size_t i = 0; i < MEMBERS; i++)
    if (mprof_trace_open(&t[i], make_member(i), NULL) != 0)
      fail_msg("%s", mprof_error_last());
}

/* The members @p in opened as one set named "run". */
static mprof_trace *merge_run(mprof_trace **in) {
  mprof_trace *set;
  assert_int_equal(mprof_trace_open_merged(&set, (const mprof_trace *const *)in,
                                           MEMBERS, "run"),
                   0);
  return set;
}

/* The members opened as one set named "run", which then holds the only
 * references to them. */
static mprof_trace *open_run_set(void) {
  mprof_trace *in[MEMBERS];
  open_members(in);
  mprof_trace *set = merge_run(in);
  for (size_t i = 0; i < MEMBERS; i++)
    mprof_trace_free(in[i]);
  return set;
}

/* The XML summary of @p trace joined on @p threads threads (malloc'd). */
static char *summary_xml(const mprof_trace *trace, unsigned threads,
                         unsigned flags) {
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  jo.threads = threads;
  jo.flags = flags;
  mprof_join *j;
  mprof_diagnosis *d;
  if (mprof_join_build(&j, trace, &jo) != 0 || mprof_diagnose(&d, j, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  assert_non_null(f);
  assert_int_equal(mprof_diagnosis_write(f, d, NULL), 0);
  fclose(f);
  mprof_diagnosis_free(d);
  mprof_join_free(j);
  return text;
}

/* @p xml without its bytes="N" (a set counts its members' files, a merged
 * file itself). */
static void drop_bytes(char *xml) {
  char *at = strstr(xml, " bytes=\"");
  assert_non_null(at);
  char *end = strchr(at + 8, '"');
  assert_non_null(end);
  memmove(at, end + 1, strlen(end + 1) + 1);
}

/* The set reads as the merged file: the same records (strings by their
 * text), META, stream names, processes, and the same summary. */
static void test_set_reads_as_merged_file(void **state) {
  (void)state;
  mprof_trace *in[MEMBERS];
  open_members(in);
  const char *merged_path = test_path("set-merged.mprof");
  assert_int_equal(
      mprof_trace_merge((const mprof_trace *const *)in, MEMBERS, merged_path),
      0);
  mprof_trace *file, *set;
  assert_int_equal(mprof_trace_open(&file, merged_path, NULL), 0);
  /* Named as the file, so that the two summaries name the same trace. */
  assert_int_equal(mprof_trace_open_merged(&set, (const mprof_trace *const *)in,
                                           MEMBERS, merged_path),
                   0);
  assert_string_equal(mprof_trace_path(set), merged_path);
  size_t a, b;
  const mprof_launch_record *la = mprof_trace_launches(file, &a);
  const mprof_launch_record *lb = mprof_trace_launches(set, &b);
  assert_int_equal(a, b);
  assert_int_equal(a, 4 * 20000 + 6000);
  assert_memory_equal(la, lb, a * sizeof *la);
  const mprof_meta_record *ma = mprof_trace_meta_records(file, &a);
  const mprof_meta_record *mb = mprof_trace_meta_records(set, &b);
  assert_int_equal(a, b);
  for (size_t i = 0; i < a; i++) {
    assert_string_equal(mprof_trace_string(file, ma[i].key),
                        mprof_trace_string(set, mb[i].key));
    assert_string_equal(mprof_trace_string(file, ma[i].value),
                        mprof_trace_string(set, mb[i].value));
  }
  const mprof_stream_record *sa = mprof_trace_streams(file, &a);
  const mprof_stream_record *sb = mprof_trace_streams(set, &b);
  assert_int_equal(a, b);
  assert_int_equal(a, MEMBERS * 3);
  for (size_t i = 0; i < a; i++) {
    assert_string_equal(mprof_trace_string(file, sa[i].name),
                        mprof_trace_string(set, sb[i].name));
    assert_int_equal(mprof_trace_stream_launch_count(file, (uint32_t)i),
                     mprof_trace_stream_launch_count(set, (uint32_t)i));
    assert_int_equal(mprof_trace_stream_process(set, (uint32_t)i), i / 3);
  }
  assert_int_equal(mprof_trace_process_count(set), MEMBERS);
  assert_string_equal(mprof_trace_process_meta(set, 3, "rank"), "3");
  assert_string_equal(mprof_trace_process_meta(set, 1, "pid"), "501");
  const mprof_pc_sample_record *pa = mprof_trace_pc_samples(file, &a);
  const mprof_pc_sample_record *pb = mprof_trace_pc_samples(set, &b);
  assert_int_equal(a, b);
  assert_true(a > 0);
  for (size_t i = 0; i < a; i++) {
    assert_string_equal(mprof_trace_string(file, pa[i].function_name),
                        mprof_trace_string(set, pb[i].function_name));
    assert_int_equal(pa[i].samples, pb[i].samples);
    assert_int_equal(pa[i].device, pb[i].device);
  }
  uint64_t fa, fb, ea, eb;
  mprof_trace_time_bounds(file, &fa, &ea);
  mprof_trace_time_bounds(set, &fb, &eb);
  assert_int_equal(fa, fb);
  assert_int_equal(ea, eb);
  /* The summary, per GPU and per process. */
  for (unsigned flags = 0; flags <= MPROF_JOIN_BY_PROCESS; flags++) {
    char *x = summary_xml(file, 1, flags), *y = summary_xml(set, 1, flags);
    drop_bytes(x);
    drop_bytes(y);
    assert_string_equal(x, y);
    free(x);
    free(y);
  }
  mprof_trace_free(set);
  mprof_trace_free(file);
  for (size_t i = 0; i < MEMBERS; i++)
    mprof_trace_free(in[i]);
  unlink(merged_path);
}

typedef struct reader {
  const mprof_trace *set;
  const mprof_launch_record *launches;
  const mprof_launch_record *last_of_stream;
  const void *samples;
} reader;

static void *read_set(void *arg) {
  reader *r = (reader *)arg;
  size_t n;
  r->launches = mprof_trace_launches(r->set, &n);
  size_t on = mprof_trace_stream_launch_count(r->set, 5);
  r->last_of_stream = mprof_trace_stream_launch(r->set, 5, on - 1);
  r->samples = mprof_trace_pc_samples(r->set, &n);
  return NULL;
}

/* A set's event sections are built on first use, once, whichever thread
 * asks first; its members are the traces it was opened from. */
static void test_set_sections_on_first_use(void **state) {
  (void)state;
  mprof_trace *in[MEMBERS];
  open_members(in);
  mprof_trace *set = merge_run(in);
  assert_int_equal(mprof_trace_member_count(set), MEMBERS);
  assert_int_equal(mprof_trace_member_count(in[0]), 0);
  assert_ptr_equal(mprof_trace_member(set, 2), in[2]);
  assert_null(mprof_trace_member(set, MEMBERS));
  assert_null(mprof_trace_member(in[0], 0));
  for (size_t i = 0; i < MEMBERS; i++)
    mprof_trace_free(in[i]);
  pthread_t threads[4];
  reader readers[4];
  for (int i = 0; i < 4; i++) {
    readers[i].set = set;
    assert_int_equal(pthread_create(&threads[i], NULL, read_set, &readers[i]),
                     0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(threads[i], NULL);
  for (int i = 1; i < 4; i++) {
    assert_ptr_equal(readers[i].launches, readers[0].launches);
    assert_ptr_equal(readers[i].last_of_stream, readers[0].last_of_stream);
    assert_ptr_equal(readers[i].samples, readers[0].samples);
  }
  /* Stream 5 is rank 1's stream 2; its last launch, moved into the set. */
  const mprof_trace *rank1 = mprof_trace_member(set, 1);
  size_t on = mprof_trace_stream_launch_count(rank1, 2);
  const mprof_launch_record *own = mprof_trace_stream_launch(rank1, 2, on - 1);
  assert_int_equal(readers[0].last_of_stream->stream, 5);
  assert_int_equal(readers[0].last_of_stream->start, own->start);
  assert_int_equal(readers[0].last_of_stream->correlation_id,
                   own->correlation_id
                       ? own->correlation_id +
                             readers[0].launches[20000].correlation_id -
                             mprof_trace_launches(rank1, NULL)[0].correlation_id
                       : 0);
  mprof_trace_free(set);
}

/* The caller may free its traces once the set is open: the set keeps them
 * open until it is freed itself. */
static void test_set_outlives_its_inputs(void **state) {
  (void)state;
  mprof_trace *in[MEMBERS];
  open_members(in);
  char *alone = summary_xml(in[1], 1, 0);
  mprof_trace *set, *one;
  assert_int_equal(mprof_trace_open_merged(&set, (const mprof_trace *const *)in,
                                           MEMBERS, NULL),
                   0);
  assert_int_equal(mprof_trace_open_merged(
                       &one, (const mprof_trace *const *)in + 1, 1, "one"),
                   0);
  for (size_t i = 0; i < MEMBERS; i++)
    mprof_trace_free(in[i]);
  size_t n;
  mprof_trace_launches(set, &n);
  assert_int_equal(n, 4 * 20000 + 6000);
  /* A set of one summarises as its trace (its streams named after it). */
  char *of_one = summary_xml(one, 2, 0);
  assert_non_null(strstr(alone, "launches=\"21000\""));
  assert_non_null(strstr(of_one, "launches=\"21000\""));
  free(alone);
  free(of_one);
  mprof_trace_free(one);
  mprof_trace_free(set);
}

/* The join of a set on several threads is the join on one: the summary is
 * the same byte for byte (each trace walked on its own, added up in the
 * set's order whatever thread walked it). */
static void test_set_parallel_join_is_serial(void **state) {
  (void)state;
  mprof_trace *set = open_run_set();
  char *serial = summary_xml(set, 1, 0);
  assert_non_null(strstr(serial, "launches=\"86000\""));
  for (unsigned threads = 2; threads <= 8; threads *= 2) {
    char *parallel = summary_xml(set, threads, 0);
    assert_string_equal(serial, parallel);
    free(parallel);
  }
  char *serial_split = summary_xml(set, 0, MPROF_JOIN_BY_PROCESS);
  char *parallel_split = summary_xml(set, 3, MPROF_JOIN_BY_PROCESS);
  assert_string_equal(serial_split, parallel_split);
  free(serial_split);
  free(parallel_split);
  free(serial);
  mprof_trace_free(set);
}

/* A set of sets reads as the set of all their traces: the same summary,
 * with the cubins, launches and samples of every trace in place. */
static void test_set_of_sets(void **state) {
  (void)state;
  mprof_trace *in[MEMBERS];
  open_members(in);
  mprof_trace *flat, *halves[2], *nested;
  assert_int_equal(mprof_trace_open_merged(
                       &flat, (const mprof_trace *const *)in, MEMBERS, "run"),
                   0);
  assert_int_equal(mprof_trace_open_merged(&halves[0],
                                           (const mprof_trace *const *)in, 2,
                                           "first half"),
                   0);
  assert_int_equal(mprof_trace_open_merged(&halves[1],
                                           (const mprof_trace *const *)in + 2,
                                           2, "second half"),
                   0);
  assert_int_equal(mprof_trace_open_merged(
                       &nested, (const mprof_trace *const *)halves, 2, "run"),
                   0);
  mprof_trace_free(halves[0]);
  mprof_trace_free(halves[1]);
  for (size_t i = 0; i < MEMBERS; i++)
    mprof_trace_free(in[i]);
  assert_int_equal(mprof_trace_process_count(nested), MEMBERS);
  assert_int_equal(mprof_trace_file_size(nested), mprof_trace_file_size(flat));
  char *x = summary_xml(flat, 2, 0), *y = summary_xml(nested, 2, 0);
  assert_string_equal(x, y);
  free(x);
  free(y);
  size_t a, b;
  const mprof_launch_record *la = mprof_trace_launches(flat, &a);
  const mprof_launch_record *lb = mprof_trace_launches(nested, &b);
  assert_int_equal(a, b);
  assert_memory_equal(la, lb, a * sizeof *la);
  mprof_trace_free(nested);
  mprof_trace_free(flat);
}

/* Bytes the process's heap holds now (malloc'd and not freed). */
static size_t heap_in_use(void) {
#ifdef HEAP_BY_SANITIZER
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
#endif
}

/* The summary of a set, XML, JSON or text, reads each trace's events in
 * place: it leaves no copy of the set's launches or spans behind (a copy
 * that cost the summary of 8 x 250,000 launches 1.6x its traces' time and
 * 77 MiB of memory). */
static void test_set_summary_copies_no_events(void **state) {
  (void)state;
  mprof_trace *set = open_run_set();
  const size_t launches = 4 * 20000 + 6000;
  const size_t copy = launches * sizeof(mprof_launch_record);
  size_t before = heap_in_use();
  static const unsigned formats[] = {MPROF_REPORT_XML, MPROF_REPORT_JSON,
                                     MPROF_REPORT_TEXT};
  mprof_join_options jo = MPROF_JOIN_OPTIONS_INIT;
  mprof_join *j;
  mprof_diagnosis *d;
  if (mprof_join_build(&j, set, &jo) != 0 || mprof_diagnose(&d, j, NULL) != 0)
    fail_msg("%s", mprof_error_last());
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    mprof_report_options ro = MPROF_REPORT_OPTIONS_INIT;
    ro.format = formats[i];
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    assert_int_equal(mprof_diagnosis_write(null, d, &ro), 0);
    fclose(null);
  }
  mprof_diagnosis_free(d);
  mprof_join_free(j);
  size_t after = heap_in_use();
  size_t kept = after > before ? after - before : 0;
  if (kept >= copy / 4)
    fail_msg("the set's summary kept %zu bytes (a copy of its %zu launches "
             "is %zu)",
             kept, launches, copy);
  /* Asked of the set itself, the launches are built (and kept). */
  size_t n;
  assert_non_null(mprof_trace_launches(set, &n));
  assert_int_equal(n, launches);
  assert_true(heap_in_use() >= before + copy);
  mprof_trace_free(set);
}

/* A join options struct of version 2 (before threads) still joins. */
static void test_join_options_version_2(void **state) {
  (void)state;
  mprof_trace *t;
  assert_int_equal(mprof_trace_open(&t, make_member(0), NULL), 0);
  mprof_join_options jo;
  assert_int_equal(mprof_join_options_init(&jo, 2), 0);
  mprof_join *j;
  assert_int_equal(mprof_join_build(&j, t, &jo), 0);
  assert_int_equal(mprof_join_kernel_count(j), 12);
  mprof_join_free(j);
  assert_int_equal(mprof_join_options_init(&jo, 4), MPROF_EVERSION);
  mprof_trace_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set_reads_as_merged_file),
      cmocka_unit_test(test_set_outlives_its_inputs),
      cmocka_unit_test(test_set_sections_on_first_use),
      cmocka_unit_test(test_set_of_sets),
      cmocka_unit_test(test_set_parallel_join_is_serial),
      cmocka_unit_test(test_set_summary_copies_no_events),
      cmocka_unit_test(test_join_options_version_2),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
