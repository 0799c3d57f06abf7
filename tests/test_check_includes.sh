#!/bin/sh
# check_includes.sh passes on this repository, and fails, naming the file
# and the header, on a tree where base includes analysis's internal header
# and the renderer includes libmprof's internal array header.
# Usage: test_check_includes.sh REPO_ROOT TMPDIR
set -u
here=$(dirname "$0")
repo=$1
tmp=$2/check_includes
sh "$here/check_includes.sh" "$repo" || exit 1

rm -rf "$tmp"
mkdir -p "$tmp/libmprof/src/base" "$tmp/libmprof/src/analysis" "$tmp/mprof-render"
: >"$tmp/libmprof/src/analysis/join_internal.h"
printf '#include "analysis/join_internal.h"\n' >"$tmp/libmprof/src/base/x.c"
printf '#include "mprof/trace.h"\n#include "base/array.h"\n' >"$tmp/mprof-render/y.c"
out=$(sh "$here/check_includes.sh" "$tmp" 2>&1)
rc=$?
fail() {
  echo "test_check_includes: $1" >&2
  echo "$out" >&2
  exit 1
}
[ $rc = 1 ] || fail "expected exit 1 on the bad tree, got $rc"
echo "$out" | grep -q 'base/x.c: includes "analysis/join_internal.h" (analysis), which base may not use' ||
  fail "no line for base/x.c"
echo "$out" | grep -q 'mprof-render/y.c: includes "base/array.h", not a public libmprof header' ||
  fail "no line for mprof-render/y.c"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "expected exactly two lines"
echo "test_check_includes: ok"
