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
  mprof_format_count(buf, sizeof buf, 1234567);
  assert_string_equal(buf, "1,234,567");
  mprof_format_count(buf, sizeof buf, 999);
  assert_string_equal(buf, "999");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_duration),
      cmocka_unit_test(test_percent_and_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
