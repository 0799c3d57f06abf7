#!/bin/sh
# Mutation testing of libmprof: tools/mutate.py does the work (its --help and
# docs/TESTING.md, "Mutation testing", say how); this finds Python for it.
#   tools/mutate.sh [--build DIR] [--only ID,...] [--ci] [--report FILE]
# Exit 77 (skipped) where Python 3 or pkg-config is missing.
for tool in python3 pkg-config; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "mutate: $tool is missing: cannot mutate here" >&2
    exit 77
  fi
done
exec python3 -B "$(dirname "$0")/mutate.py" "$@"
