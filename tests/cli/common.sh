# Sourced by the command-line test scripts once they have set $tmp (a
# directory of their own): makes it, removes it on exit, and gives them
# failures (a count), fail, expect and expect_one_line.

mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect STATUS PATTERN CMD...: runs CMD, checks its exit status and that
# stdout+stderr match the grep pattern.
expect() {
  want_status=$1; pattern=$2; shift 2
  "$@" >"$tmp/out" 2>&1
  status=$?
  [ "$status" -eq "$want_status" ] || fail "'$*' exited $status, expected $want_status: $(head -c 300 "$tmp/out")"
  grep -q -- "$pattern" "$tmp/out" || fail "'$*' output lacks '$pattern': $(head -c 300 "$tmp/out")"
}

# expect_one_line STATUS PATTERN CMD...: an error is exactly one stderr line
# matching the pattern, and nothing on stdout.
expect_one_line() {
  want_status=$1; pattern=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  [ "$status" -eq "$want_status" ] || fail "'$*' exited $status, expected $want_status: $(cat "$tmp/err")"
  lines=$(wc -l <"$tmp/err")
  [ "$lines" -eq 1 ] || fail "'$*' printed $lines lines on stderr: $(cat "$tmp/err")"
  grep -q -- "$pattern" "$tmp/err" || fail "'$*' stderr lacks '$pattern': $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "'$*' wrote to stdout on error: $(head -c 200 "$tmp/out")"
}

# need TOOL PACKAGE: a tool tools/install-deps.sh installs; without it the
# test fails (a check that did not run is not a pass).
need() {
  command -v "$1" >/dev/null 2>&1 ||
    fail "$1 is missing: install $2 (tools/install-deps.sh does)"
}

# skipped WHY: a part this build cannot run (no renderer, no nvcc-built
# fixtures) is left out; `finish` then exits 77, which ctest lists as
# Skipped (SKIP_RETURN_CODE), not Passed.
skips=0
skipped() { echo "SKIP: $*"; skips=$((skips + 1)); }

# finish WHAT: the script's end: exit 1 after a failure, 77 when a part was
# skipped, 0 when every check ran and passed.
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures $1 checks failed" >&2
    exit 1
  fi
  if [ "$skips" -ne 0 ]; then
    echo "$1 checks passed; $skips part(s) skipped"
    exit 77
  fi
  echo "all $1 checks passed"
  exit 0
}
