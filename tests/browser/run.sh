#!/bin/sh
# The exports in the real viewers: every sample exported to speedscope and
# Trace Event JSON, the speedscope files checked against speedscope's own
# file-format schema, then both loaded in speedscope in headless chromium
# (check_exports.mjs says what is asserted).
# Needs node, chromium and `npm ci` in tests/browser (tools/install-deps.sh
# does all three). Without them it skips with a message (exit 77), except
# under CI, where they must be there.
# Usage: run.sh MPROF SCHEMA_CHECK SOURCE_DIR TMPDIR
mprof=$1
schema_check=$2
src=$3
out=${4:-/tmp}/browser
here=$src/tests/browser
chromium=${MPROF_CHROMIUM:-/usr/bin/chromium}

missing=""
command -v node >/dev/null 2>&1 || missing="node"
[ -x "$chromium" ] || missing="$missing chromium ($chromium)"
[ -d "$here/node_modules/speedscope/dist/release" ] && [ -d "$here/node_modules/playwright-core" ] ||
  missing="$missing the npm packages (npm ci --prefix tests/browser)"
if [ -n "$missing" ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: the browser checks need:$missing; tools/install-deps.sh installs them" >&2
    exit 1
  fi
  echo "skipping the browser checks: missing$missing (tools/install-deps.sh installs them)"
  exit 77
fi

rm -rf "$out"
mkdir -p "$out"
node "$here/check_exports.mjs" "$mprof" "$src/samples" "$out" || exit 1
schema=$here/node_modules/speedscope/dist/release/file-format-schema.json
for f in "$out"/*.speedscope.json; do
  "$schema_check" "$schema" "$f" || { echo "FAIL: $f does not match speedscope's file-format schema" >&2; exit 1; }
done
echo "browser: speedscope files match speedscope's schema"
