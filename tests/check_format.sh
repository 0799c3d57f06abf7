#!/bin/sh
# Fails when a C source or header differs from what clang-format would write.
clang_format=$1
root=$2
cd "$root" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/fuzz/corpus/')
[ -n "$files" ] || files=$(find libmprof mprof-cli mprof-render mprof-gtk producers tests bench -name '*.[ch]' 2>/dev/null)
# shellcheck disable=SC2086
exec "$clang_format" --dry-run --Werror $files
