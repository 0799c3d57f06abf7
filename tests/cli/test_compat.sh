#!/bin/sh
# A trace written by a newer mprof reads as the original does: every sample
# (and a synthetic trace with spans), rewritten by future-trace with every
# record 12 bytes longer at layout version 2, the next format minor, unknown
# sections and unknown META keys, finished and streamed, gives the same
# `mprof summary --json` as the original (its size aside). A file whose
# records are shorter than any layout is refused in one line.
# (docs/FORMAT.md, "Compatibility")
# Usage: test_compat.sh MPROF FUTURE_TRACE TMPDIR SAMPLES
mprof=$1
future=$2
tmp=${3:-/tmp}/compat.$$
samples=$4
. "$(dirname "$0")/common.sh"

# summary --json of DIR/NAME.mprof, run in DIR so that the paths agree, with
# the file's size taken out.
summary() {
  (cd "$1" && "$mprof" summary --json --all "$2.mprof") | sed 's/"bytes":[0-9]*,//'
}

mkdir -p "$tmp/today" "$tmp/future" "$tmp/streamed" "$tmp/today-streamed"
"$mprof" synth -o "$tmp/today/synth.mprof" --launches 400 --spans 2000 \
  --span-warps 2 >/dev/null || fail "synth exited $?"
for trace in "$samples"/*.mprof "$tmp/today/synth.mprof"; do
  name=$(basename "$trace" .mprof)
  if [ "$trace" != "$tmp/today/$name.mprof" ]; then
    cp "$trace" "$tmp/today/"
    [ ! -f "$trace.pc.json" ] || cp "$trace.pc.json" "$tmp/today/"
  fi
  summary "$tmp/today" "$name" >"$tmp/$name.today.json" ||
    fail "summary $name exited $?"
  for kind in future streamed today-streamed; do
    case $kind in
    future) opts= ;;
    streamed) opts=--streamed ;;
    today-streamed) opts="--streamed --today" ;;
    esac
    # shellcheck disable=SC2086
    "$future" "$trace" "$tmp/$kind/$name.mprof" $opts || fail "future-trace $name $kind exited $?"
    # The sidecar goes with the trace, as it would.
    [ ! -f "$trace.pc.json" ] || cp "$trace.pc.json" "$tmp/$kind/"
    summary "$tmp/$kind" "$name" >"$tmp/$name.$kind.json" ||
      fail "summary of the $kind $name exited $?: $(cat "$tmp/$name.$kind.json")"
    if ! cmp -s "$tmp/$name.today.json" "$tmp/$name.$kind.json"; then
      tr , '\n' <"$tmp/$name.today.json" >"$tmp/today.lines"
      tr , '\n' <"$tmp/$name.$kind.json" >"$tmp/$kind.lines"
      fail "the $kind $name reads differently: $(diff "$tmp/today.lines" "$tmp/$kind.lines" | head -c 600)"
    fi
  done
done
# The summaries compared hold the kernels, not an empty page.
grep -q '"launches":[1-9]' "$tmp/demo.today.json" || fail "demo summary has no launches"

# Records shorter than any layout (LAUNCHES, section 7, by 16 bytes of the
# future's 52: 36 < 40): one line, exit 2, finished and streamed.
"$future" "$samples/demo.mprof" "$tmp/short.mprof" --short 7:16 || fail "future-trace --short"
expect_one_line 2 'short.mprof: directory at byte [0-9]*: section LAUNCHES has records of 36 bytes, shorter than the 40 bytes this mprof reads (the file is corrupt; record it again)$' \
  "$mprof" summary "$tmp/short.mprof"
"$future" "$samples/demo.mprof" "$tmp/short.partial.mprof" --short 7:16 --streamed || fail "future-trace --short --streamed"
expect_one_line 2 'short.partial.mprof: LAUNCHES at byte [0-9]*: a chunk has records of 36 bytes, shorter than the 40 bytes this mprof reads' \
  "$mprof" summary "$tmp/short.partial.mprof"

[ "$failures" -eq 0 ] || { echo "$failures failures" >&2; exit 1; }
echo "compat: ok"
