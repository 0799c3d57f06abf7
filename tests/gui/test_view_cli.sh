#!/bin/sh
# `mprof view` as a user meets it: --render to PNG and SVG for every tab,
# its one-line errors, the refusal without a display, and the hand-over to
# the viewer (a stand-in viewer prints what it was given).
mprof=$1
tmp=${2:-/tmp}/view.$$
. "$(dirname "$0")/../cli/common.sh"

# png_size FILE: "WIDTH HEIGHT" from the IHDR chunk.
png_size() {
  set -- $(od -An -tu1 -j16 -N8 "$1")
  echo "$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 )) $(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))"
}

is_png() { [ "$(od -An -c -N4 "$1" | tr -d ' ')" = "211PNG" ]; }

"$mprof" synth -o "$tmp/t.mprof" --launches 4000 --kernels 4 --seed 5 --sidecar >/dev/null ||
  fail "synth failed"

expect 0 "usage: mprof view TRACE" "$mprof" help view
expect 0 "wrote $tmp/s.png: Summary, 1600x1000, kernel " "$mprof" view "$tmp/t.mprof" --render "$tmp/s.png"
is_png "$tmp/s.png" || fail "s.png is not a PNG"
[ "$(png_size "$tmp/s.png")" = "1600 1000" ] || fail "s.png is $(png_size "$tmp/s.png"), not 1600x1000"
for tab in trace summary hotspots flame raster; do
  expect 0 "wrote $tmp/$tab.png" "$mprof" view "$tmp/t.mprof" --render "$tmp/$tab.png" --tab "$tab" --size 640x400
  is_png "$tmp/$tab.png" || fail "$tab.png is not a PNG"
  [ "$(png_size "$tmp/$tab.png")" = "640 400" ] || fail "$tab.png is $(png_size "$tmp/$tab.png")"
  [ "$(wc -c <"$tmp/$tab.png")" -gt 5000 ] || fail "$tab.png is nearly empty"
  expect 0 "wrote $tmp/$tab.svg" "$mprof" view "$tmp/t.mprof" --render "$tmp/$tab.svg" --tab "$tab"
  grep -q "<svg" "$tmp/$tab.svg" || fail "$tab.svg is not SVG"
done
# The span views: projected on this PC-only trace (and said so), measured
# on one with spans; the synthetic demo headless.
for tab in mega density; do
  expect 0 "wrote $tmp/$tab.png: .*(projected)" "$mprof" view "$tmp/t.mprof" --render "$tmp/$tab.png" --tab "$tab" --size 640x400
  [ "$(png_size "$tmp/$tab.png")" = "640 400" ] || fail "$tab.png is $(png_size "$tmp/$tab.png")"
done
"$mprof" synth -o "$tmp/s.mprof" --launches 300 --kernels 3 --spans 20000 --span-imbalance 50 >"$tmp/out" 2>&1 ||
  fail "synth --spans failed: $(cat "$tmp/out")"
grep -q "spans$" "$tmp/out" || fail "synth --spans did not count its spans: $(cat "$tmp/out")"
for tab in mega density activity; do
  expect 0 "wrote $tmp/s-$tab.png: .*(measured)" "$mprof" view "$tmp/s.mprof" --render "$tmp/s-$tab.png" --tab "$tab"
  [ "$(wc -c <"$tmp/s-$tab.png")" -gt 5000 ] || fail "s-$tab.png is nearly empty"
done
expect 0 "wrote $tmp/sr.png: Mega" "$mprof" view "$tmp/s.mprof" --tab mega --sm-height 40 --range 0us:50us --render "$tmp/sr.png"
expect 0 "wrote $tmp/d.png: Activity, .*(synthetic demo)" "$mprof" view --demo-activity --render "$tmp/d.png"
expect 0 "wrote $tmp/d2.svg: Activity" "$mprof" --demo-activity --rows warp --depth instruction --render "$tmp/d2.svg"
grep -q "<svg" "$tmp/d2.svg" || fail "d2.svg is not SVG"
expect 0 "wrote $tmp/d3.png: Mega, .*(synthetic demo)" "$mprof" view --demo-activity --tab mega --render "$tmp/d3.png"
expect_one_line 2 "--rows 'threads' is not sm, block or warp" "$mprof" view --demo-activity --rows threads --render "$tmp/x.png"
expect_one_line 2 "--depth 'deep' is not auto" "$mprof" view --demo-activity --depth deep --render "$tmp/x.png"
expect_one_line 2 "--sm-height '0' is not" "$mprof" view "$tmp/s.mprof" --sm-height 0 --render "$tmp/x.png"
expect_one_line 2 "--demo-activity takes no trace" "$mprof" view "$tmp/t.mprof" --demo-activity --render "$tmp/x.png"
expect 0 "sm_load_balance" "$mprof" summary "$tmp/s.mprof" --kernel gemm_tiled
expect 0 "Hotspots, 1600x1000, kernel .*layernorm_fwd" "$mprof" view "$tmp/t.mprof" --kernel layernorm_fwd --tab hotspots --render "$tmp/k.png"
expect 0 "wrote $tmp/r.png: Trace" "$mprof" view "$tmp/t.mprof" --tab trace --range 1ms:1.2ms --render "$tmp/r.png"
expect_one_line 2 "--range '5ms:1ms' is not FROM:TO" "$mprof" view "$tmp/t.mprof" --range 5ms:1ms --render "$tmp/r.png"
expect_one_line 2 "--range 'soon' is not FROM:TO" "$mprof" view "$tmp/t.mprof" --range soon --render "$tmp/r.png"
# Times up to 2^62 ns (4.6e18 is below, 4.7e18 above) either way; beyond,
# or not a number, one line (they used to wrap in the int64 conversion).
expect 0 "wrote $tmp/r.png: Trace" "$mprof" view "$tmp/t.mprof" --tab trace --range -4.6e18ns:4.6e18ns --render "$tmp/r.png"
expect 0 "wrote $tmp/r.png: Trace" "$mprof" view "$tmp/t.mprof" --tab trace --select 0:4.6e18ns --render "$tmp/r.png"
for bad in 0:1e30s 1e30s:2e30s 0:4.7e18ns -4.7e18ns:0 nan:1ms 0:inf; do
  expect_one_line 2 "--range '$bad': a time is beyond 2^62 ns" "$mprof" view "$tmp/t.mprof" --range "$bad" --render "$tmp/r.png"
  expect_one_line 2 "--select '$bad': a time is beyond 2^62 ns" "$mprof" view "$tmp/t.mprof" --select "$bad" --render "$tmp/r.png"
done
# Plain `mprof TRACE` is `mprof view TRACE`.
expect 0 "wrote $tmp/p.png: Flame" "$mprof" "$tmp/t.mprof" --tab flame --render "$tmp/p.png"

# Errors: one line each, 2 for bad usage or input, 1 for a failed write.
expect_one_line 2 "unknown tab 'bogus'" "$mprof" view "$tmp/t.mprof" --tab bogus --render "$tmp/x.png"
expect_one_line 2 "--size '12x9000000'" "$mprof" view "$tmp/t.mprof" --size 12x9000000 --render "$tmp/x.png"
expect_one_line 2 "no kernel matches 'nope'" "$mprof" view "$tmp/t.mprof" --kernel nope --render "$tmp/x.png"
expect_one_line 2 "$tmp/missing.mprof: cannot open" "$mprof" view "$tmp/missing.mprof" --render "$tmp/x.png"
head -c 2000 "$tmp/t.mprof" >"$tmp/cut.mprof"
expect_one_line 2 "$tmp/cut.mprof: header" "$mprof" view "$tmp/cut.mprof" --render "$tmp/x.png"
expect_one_line 2 "must end in .png or .svg" "$mprof" view "$tmp/t.mprof" --render "$tmp/x.jpg"
expect_one_line 2 "no trace given" "$mprof" view
expect_one_line 2 "unknown option '--frob'" "$mprof" view "$tmp/t.mprof" --frob

# Without a display: one line that suggests --render, exit 2.
expect_one_line 2 "no display.*--render" env -u DISPLAY -u WAYLAND_DISPLAY "$mprof" view "$tmp/t.mprof"
expect_one_line 2 "no display" env -u DISPLAY -u WAYLAND_DISPLAY "$mprof" "$tmp/t.mprof"

# With one, view starts the viewer with the trace and the options.
cat >"$tmp/fake-viewer" <<'FAKE'
#!/bin/sh
echo "viewer got: $*"
FAKE
chmod +x "$tmp/fake-viewer"
expect 0 "viewer got: --kernel gemm --tab trace -- $tmp/t.mprof" env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" view "$tmp/t.mprof" --kernel gemm --tab trace
expect 0 "viewer got: -- $tmp/t.mprof" env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" "$tmp/t.mprof"
expect 0 "viewer got: --demo-activity --rows block$" env DISPLAY=:0 MPROF_GTK="$tmp/fake-viewer" "$mprof" --demo-activity --rows block
expect_one_line 2 "no display.*--demo-activity --render" env -u DISPLAY -u WAYLAND_DISPLAY "$mprof" --demo-activity

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all mprof view checks passed"
