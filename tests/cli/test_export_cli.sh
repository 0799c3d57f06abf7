#!/bin/sh
# `mprof export` as a user meets it: the files it writes, the recap, and
# one-line errors with exit status 2.
# Usage: test_export_cli.sh MPROF TMPDIR SCHEMA_CHECK DOCS SAMPLES
mprof=$1
tmp=${2:-/tmp}/export.$$
schema_check=$3
docs=$4
samples=$5
. "$(dirname "$0")/common.sh"

# expect STATUS PATTERN CMD...: as common.sh's, and a failing command prints
# exactly one line on stderr.
expect() {
  want_status=$1; pattern=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  [ "$status" -eq "$want_status" ] || fail "'$*' exited $status, expected $want_status: $(head -c 300 "$tmp/err")"
  cat "$tmp/out" "$tmp/err" | grep -q -- "$pattern" || fail "'$*' output lacks '$pattern': $(head -c 300 "$tmp/out" "$tmp/err")"
  if [ "$want_status" -ne 0 ]; then
    lines=$(wc -l <"$tmp/err")
    [ "$lines" -eq 1 ] || fail "'$*' printed $lines lines on stderr"
  fi
}

expect 0 "usage: mprof export TRACE" "$mprof" export --help
expect 0 "export .*speedscope" "$mprof" help
expect 2 "no trace given" "$mprof" export -o "$tmp/x.json"
expect 2 "no output file given" "$mprof" export "$samples/gemm.mprof"
expect 2 "--format takes perfetto, chrome, speedscope, sqlite or kineto" "$mprof" export "$samples/gemm.mprof" --format pprof -o "$tmp/x.json"
expect 2 "unknown option '--frob'" "$mprof" export "$samples/gemm.mprof" --frob
expect 2 "no kernel matches 'nothing_like_this'" "$mprof" export "$samples/gemm.mprof" -k nothing_like_this -o "$tmp/x.json"
expect 2 "cannot open" "$mprof" export "$tmp/missing.mprof" -o "$tmp/x.json"
expect 2 "names the sidecar of one trace" "$mprof" export "$samples/gemm.mprof" "$samples/demo.mprof" --sidecar "$samples/gemm.mprof.pc.json" -o "$tmp/x.json"
[ -e "$tmp/x.json" ] && fail "a failed export left $tmp/x.json"

# The default format is perfetto, the protobuf trace (cli_export_perfetto
# decodes it); chrome writes the Trace Event JSON.
expect 0 "wrote $tmp/gemm.pftrace: .* track events (open it at https://ui.perfetto.dev)" "$mprof" export "$samples/gemm.mprof" -o "$tmp/gemm.pftrace"
expect 0 "wrote $tmp/gemm.json: 34 trace events (open it at chrome://tracing" "$mprof" export "$samples/gemm.mprof" --format chrome -o "$tmp/gemm.json"
head -c 1 "$tmp/gemm.pftrace" | od -An -tx1 | grep -q 0a || fail "gemm.pftrace does not start with a Trace packet (field 1, bytes)"
cmp -s "$tmp/gemm.json" "$tmp/gemm.pftrace" && fail "perfetto and chrome exports are the same file"
"$schema_check" "$docs/trace-event.schema.json" "$tmp/gemm.json" || fail "gemm.json does not match the Trace Event schema"
grep -q '"grid":"32x32x1","block":"16x16x1","registers":63,' "$tmp/gemm.json" || fail "gemm.json lacks the launch shape: $(head -c 600 "$tmp/gemm.json")"

# speedscope: the recap counts the profiles; a set of traces is one file.
expect 0 "wrote $tmp/t.speedscope.json: 11 kernel profiles" "$mprof" export "$samples/transformer_forward.mprof" --format=speedscope -o "$tmp/t.speedscope.json"
grep -q '"\$schema":"https://www.speedscope.app/file-format-schema.json"' "$tmp/t.speedscope.json" || fail "no speedscope schema"
"$mprof" export "$samples/demo.mprof" "$samples/gemm.mprof" --format chrome -q -o "$tmp/set.json" >"$tmp/out" 2>&1 || fail "export of a set exited $?"
[ -s "$tmp/out" ] && fail "-q still printed: $(cat "$tmp/out")"
"$schema_check" "$docs/trace-event.schema.json" "$tmp/set.json" || fail "set.json does not match the Trace Event schema"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "export CLI: all checks passed"
