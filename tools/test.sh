#!/bin/bash
# Build mprof and run the whole test suite: the normal build, the same suite
# under AddressSanitizer + UndefinedBehaviorSanitizer, the threaded tests
# under ThreadSanitizer, and the fuzz target (libFuzzer, when clang is
# present) over its seed corpus.
# GPU-only checks skip with a message when no GPU is present; GUI checks run
# under Xvfb, which this script starts when there is no display.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
  Xvfb :97 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY=:97
  sleep 1
fi

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== Debian package: cpack -G DEB, dpkg -i, the installed mprof, dpkg --purge"
tools/test-package.sh build

echo "== build and test under ASan + UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMPROF_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE no-asan

echo "== the threaded tests under ThreadSanitizer (label tsan)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPROF_TSAN=ON \
  -DMPROF_WITH_GTK=OFF -DMPROF_WITH_RENDER=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target tsan_tests
ctest --test-dir build-tsan --output-on-failure -j"$jobs" -L tsan

if command -v clang >/dev/null; then
  echo "== fuzz the trace reader (libFuzzer)"
  tests/fuzz/run.sh build-fuzz 15
fi
echo "== all tests passed"
