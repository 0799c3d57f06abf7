#!/bin/sh
# mprof/control.h in a program built without mprof: a no-op without the
# producer; with the producer loaded (a stand-in), each call reaches it.
app=$1
fake=$2
status=0
fail() { echo "FAIL: $*"; status=1; }

out=$(env -u CUDA_INJECTION64_PATH "$app" none 2>&1) || fail "without the producer: $out"
[ "$out" = "ok" ] || fail "without the producer it printed: $out"

out=$(CUDA_INJECTION64_PATH=/nonexistent/libmprof-cupti.so "$app" none 2>&1) ||
  fail "with a path to nothing: $out"

out=$(CUDA_INJECTION64_PATH="$fake" "$app" unloaded 2>&1) || fail "with the stand-in: $out"
# Nothing reaches the stand-in before it is loaded; then every call, in order.
want="loading
control v1 op 1 -
control v1 op 3 step
control v1 op 4 -
control v1 op 2 -
control v1 op 3 step
control v1 op 4 -
ok"
[ "$out" = "$want" ] || fail "calls through the stand-in:
$out
--- expected:
$want"
[ $status -eq 0 ] && echo "mprof/control.h: no-op without the producer, reaches it once loaded"
exit $status
