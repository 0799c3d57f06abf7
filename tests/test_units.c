/*
 * mprof tests — the one spelling of numbers for people (mprof/units.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "test_util.h"

#include "mprof/units.h"

static void test_duration(void **state) {
  (void)state;
  char buf[32];
  mprof_format_duration(buf, sizeof buf, 456);
  assert_string_equal(buf, "456 ns");
  mprof_format_duration(buf, sizeof buf, 7800);
  assert_string_equal(buf, "7.8 us");
  mprof_format_duration(buf, sizeof buf, 779852);
  assert_string_equal(buf, "779.9 us");
  mprof_format_duration(buf, sizeof buf, 15597049);
  assert_string_equal(buf, "15.6 ms");
  mprof_format_duration(buf, sizeof buf, 2.5e9);
  assert_string_equal(buf, "2.5 s");
  mprof_format_duration(buf, 4, 15597049);
  assert_string_equal(buf, "15.");
}

static void test_percent_and_count(void **state) {
  (void)state;
  char buf[32];
  mprof_format_percent(buf, sizeof buf, 0.123);
  assert_string_equal(buf, "12.3%");
  mprof_format_percent(buf, sizeof buf, 1.0);
  assert_string_equal(buf, "100%");
  mprof_format_percent(buf, sizeof buf, 0.0);
  assert_string_equal(buf, "0%");
  /* Something, however little, is not 0.0%; not all is not 100.0%. */
  mprof_format_percent(buf, sizeof buf, 1.0 / 4224);
  assert_string_equal(buf, "<0.1%");
  mprof_format_percent(buf, sizeof buf, 0.0006);
  assert_string_equal(buf, "0.1%");
  mprof_format_percent(buf, sizeof buf, 0.9999);
  assert_string_equal(buf, ">99.9%");
  mprof_format_percent(buf, sizeof buf, 0.999);
  assert_string_equal(buf, "99.9%");
  mprof_format_percent(buf, sizeof buf, -0.25);
  assert_string_equal(buf, "-25.0%");
  mprof_format_count(buf, sizeof buf, 1234567);
  assert_string_equal(buf, "1,234,567");
  mprof_format_count(buf, sizeof buf, 999);
  assert_string_equal(buf, "999");
}

static void test_bytes_and_bandwidth(void **state) {
  (void)state;
  char buf[32];
  mprof_format_bytes(buf, sizeof buf, 64.0 * 1024 * 1024);
  assert_string_equal(buf, "64 MiB");
  mprof_format_bytes(buf, sizeof buf, 1536);
  assert_string_equal(buf, "1.5 KiB");
  mprof_format_bytes(buf, sizeof buf, 512);
  assert_string_equal(buf, "512 B");
  mprof_format_bytes(buf, sizeof buf, 1023.9 * 1024);
  assert_string_equal(buf, "1 MiB"); /* not "1024 KiB" */
  mprof_format_bytes(buf, sizeof buf, 10.27 * 1024 * 1024 * 1024);
  assert_string_equal(buf, "10.3 GiB");
  /* 64 MiB in 1.392 ms: 48.2 GB/s, decimal as bandwidth is quoted. */
  mprof_format_bandwidth(buf, sizeof buf, 67108864.0 / 1.392e-3);
  assert_string_equal(buf, "48.2 GB/s");
  mprof_format_bandwidth(buf, sizeof buf, 950e6);
  assert_string_equal(buf, "950 MB/s");
  mprof_format_bandwidth(buf, sizeof buf, 1.5e9);
  assert_string_equal(buf, "1.5 GB/s");
  mprof_format_bandwidth(buf, sizeof buf, 999.7e9);
  assert_string_equal(buf, "1 TB/s");
}

static void test_tick_labels(void **state) {
  (void)state;
  char buf[32];
  /* Short labels at any depth of zoom: the unit of the larger of the
   * offset and the step, the decimals the step needs. */
  mprof_format_tick(buf, sizeof buf, 20000, 10000);
  assert_string_equal(buf, "+20 us");
  mprof_format_tick(buf, sizeof buf, 1500000, 500000);
  assert_string_equal(buf, "+1.5 ms");
  mprof_format_tick(buf, sizeof buf, 2000000, 500000);
  assert_string_equal(buf, "+2.0 ms");
  mprof_format_tick(buf, sizeof buf, 7000070000.0, 10000);
  assert_string_equal(buf, "+7.00007 s");
  mprof_format_tick(buf, sizeof buf, 200, 100);
  assert_string_equal(buf, "+200 ns");
  mprof_format_tick(buf, sizeof buf, -5e6, 1e6);
  assert_string_equal(buf, "-5 ms");
  mprof_format_tick(buf, sizeof buf, 0, 1e6);
  assert_string_equal(buf, "0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_duration),
      cmocka_unit_test(test_percent_and_count),
      cmocka_unit_test(test_bytes_and_bandwidth),
      cmocka_unit_test(test_tick_labels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
