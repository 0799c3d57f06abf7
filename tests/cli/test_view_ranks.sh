#!/bin/sh
# The Ranks tab through `mprof view --tab ranks --render` on 8 synthetic
# ranks (`mprof synth --steps`) where rank 3 runs gemm_tiled four times
# slower in step 4: its cell is the hottest colour of the heat map (the
# legend's top), no other cell is, the rank and step labels are drawn (as
# text in the SVG), rank 3 is named the straggler; one trace is one line,
# exit 2.
# usage: test_view_ranks.sh MPROF TMPDIR
mprof=$1
tmp=${2:-/tmp}/view_ranks.$$
. "$(dirname "$0")/common.sh"
mkdir -p "$tmp/run"

for r in 0 1 2 3 4 5 6 7; do
  slow=""
  [ "$r" = 3 ] && slow="--slowdown 300 --slow-kernel 0 --slow-step 4 --slow-scenario barrier"
  # shellcheck disable=SC2086
  "$mprof" synth -o "$tmp/run/rank$r.mprof" --launches 4000 --steps 10 \
    --seed 7 --timing-seed $((r + 1)) --meta rank="$r" --meta world_size=8 \
    $slow >/dev/null || fail "synth of rank $r failed"
done

expect 0 "wrote $tmp/ranks.png: Ranks, 1200x700$" \
  "$mprof" view --tab ranks --size 1200x700 --render "$tmp/ranks.png" "$tmp/run"
expect 0 "wrote $tmp/ranks.svg: Ranks" \
  "$mprof" view --tab ranks --size 1200x700 --render "$tmp/ranks.svg" "$tmp/run"

# Where the labels are (SVG text), and the pixels under them (PNG).
python3 - "$tmp/ranks.svg" "$tmp/ranks.png" <<'PY' || fail "the heat map is wrong"
import re, struct, sys, zlib

svg = open(sys.argv[1]).read()
texts = [(float(x), float(y), t) for x, y, t in
         re.findall(r'<text x="([0-9.]+)" y="([0-9.]+)"[^>]*>([^<]*)</text>', svg)]
names = [t for _, _, t in texts]
ranks = {t: y for x, y, t in texts if re.fullmatch(r"rank \d", t)}
assert sorted(ranks) == ["rank %d" % r for r in range(8)], names
step_row = [y for x, y, t in texts if t == "step"]
assert step_row, names
steps = {t: x for x, y, t in texts if y == step_row[0] and t.isdigit()}
assert sorted(steps, key=int) == [str(s) for s in range(10)], names
assert any("rank 3 in step 4" in t for t in names), names
top = [(x, y) for x, y, t in texts if t.endswith("the step's median rank")]
assert top, names

# A PNG of 8-bit RGB(A) rows, undone filter by filter.
data = open(sys.argv[2], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
at, idat, w = 8, b"", 0
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
        bpp = 4 if ctype == 6 else 3
    elif kind == b"IDAT":
        idat += body
    at += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
rows, prev = [], bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def px(x, y):
    x, y = int(x), int(y)
    return tuple(rows[y][x * bpp:x * bpp + 3])

# The legend's hottest end: its last column, 6 px left of its label.
hottest = px(top[0][0] - 7, top[0][1] - 4)
# A cell's centre: its step label's column, its rank label's line.
cell = {(r, s): px(steps[str(s)] + 3, ranks["rank %d" % r] - 4)
        for r in range(8) for s in range(10)}
assert cell[(3, 4)] == hottest, (cell[(3, 4)], hottest)
others = [k for k, v in cell.items() if k != (3, 4) and v == hottest]
assert not others, others
# The rest are warm but cooler: not the background, not the hottest.
assert len({v for k, v in cell.items() if k != (3, 4)}) >= 1
assert all(v != px(2, h - 2) for v in cell.values()), "a cell not drawn"
PY

# One trace is no set of ranks.
expect_one_line 2 "give one trace per rank" \
  "$mprof" view --tab ranks --render "$tmp/one.png" "$tmp/run/rank0.mprof"
[ -e "$tmp/one.png" ] && fail "view --tab ranks of one trace wrote a file"
DISPLAY='' WAYLAND_DISPLAY='' expect_one_line 2 "give one trace per rank" \
  "$mprof" view --tab ranks "$tmp/run/rank0.mprof"

[ "$failures" = 0 ] || exit 1
echo "view ranks: ok"
