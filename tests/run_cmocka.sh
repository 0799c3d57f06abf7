#!/bin/sh
# run_cmocka.sh TEST [ARG...]: runs one CMocka suite for ctest. CMocka counts
# a skip() as a pass, so ctest would list a suite that skipped tests as
# Passed: this exits 77 (the suites' SKIP_RETURN_CODE) when the suite
# passed but skipped some, and with the suite's own status otherwise, so a
# failure is never hidden behind a skip.
log=$(mktemp "${TMPDIR:-/tmp}/cmocka.XXXXXX") || exit 1
"$@" >"$log" 2>&1
status=$?
cat "$log"
skipped=$(grep '^\[  SKIPPED \] [A-Za-z_]' "$log" | sort -u | wc -l)
rm -f "$log"
[ "$status" -eq 0 ] || exit "$status"
[ "$skipped" -eq 0 ] || {
  echo "run_cmocka: $skipped test(s) skipped"
  exit 77
}
exit 0
