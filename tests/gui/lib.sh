# Sourced by the GUI tests that drive the real window under X (smoke.sh,
# big_trace.sh, source_nav.sh, ranks_nav.sh): counting failures, the
# tools that tell a drawn page from a blank one, and that check.

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# need_tools TOOL:PACKAGE...: each TOOL on PATH, else a FAIL line naming
# its Debian package and exit 1 (without them nothing here could tell a
# blank window from a drawn one).
need_tools() {
  for tool in "$@"; do
    command -v "${tool%%:*}" >/dev/null ||
      { echo "FAIL: ${tool%%:*} is missing: install ${tool#*:} (tools/install-deps.sh does)" >&2; exit 1; }
  done
}

# not_blank FILE: a PNG with more than 40 colours (a drawn page), counted
# by ImageMagick; a missing or blank one is a failure.
not_blank() {
  [ -s "$1" ] || { fail "$1 is missing"; return; }
  n=$(convert "$1" -format "%k" info: 2>/dev/null || echo 0)
  [ "$n" -gt 40 ] || fail "$1 looks blank ($n colours)"
  echo "  $(basename "$1"): $n colours"
}
