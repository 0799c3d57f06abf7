#!/bin/sh
# Run the Python package's pytest suite (python/tests) against the libmprof
# and the mprof command of this build.
#   run.sh LIBMPROF MPROF_CLI TMPDIR [install]
# With "install", first install the package the way users do (pip install
# ./python, into a folder of its own) and test that copy, not the tree.
# The interpreter is the first of $MPROF_PYTHON, /usr/bin/python3 and
# python3 that has the Debian packages tools/install-deps.sh installs.
set -eu
lib=$1 cli=$2 tmp=$3 mode=${4:-tree}
root=$(cd "$(dirname "$0")/../.." && pwd)
py=""
for cand in ${MPROF_PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 &&
     "$cand" -c 'import cffi, numpy, pandas, pytest' >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "python tests: no python3 with cffi, numpy, pandas and pytest;" \
       "run tools/install-deps.sh (python3-cffi python3-numpy" \
       "python3-pandas python3-pytest)" >&2
  exit 1
fi
mkdir -p "$tmp"
pkg="$root/python"
if [ "$mode" = install ]; then
  site="$tmp/python-site"
  rm -rf "$site"
  "$py" -m pip install --quiet --no-deps --no-index --no-cache-dir \
    --target "$site" "$root/python" 2>&1 | grep -v "as the 'root' user" >&2 || true
  [ -f "$site/mprof/__init__.py" ] || { echo "pip install ./python installed nothing" >&2; exit 1; }
  pkg=$site
fi
# An ASan build of libmprof needs the sanitizer runtime loaded first; the
# interpreter's own allocations are not ours to check for leaks.
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
  export LD_PRELOAD="$asan" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi
ubsan=$(ldd "$lib" 2>/dev/null | awk '/libubsan/ {print $3}')
[ -z "$ubsan" ] || export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$ubsan"
export MPROF_LIBRARY="$lib" MPROF_CLI="$cli" PYTHONPATH="$pkg" \
  PYTHONDONTWRITEBYTECODE=1 MPROF_TEST_PACKAGE="$pkg"
cd "$tmp"
exec "$py" -m pytest -q -p no:cacheprovider --rootdir "$root/python" \
  "$root/python/tests"
