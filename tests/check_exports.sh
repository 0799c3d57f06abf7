#!/bin/sh
# Fails when the shared library exports a symbol outside the mprof_ prefix.
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^mprof_' | grep -v '^_init$' | grep -v '^_fini$')
if [ -n "$bad" ]; then
  echo "symbols exported by $lib outside the mprof_ prefix:" >&2
  echo "$bad" >&2
  exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' T mprof_')
echo "$lib exports $count mprof_ functions and nothing else"
[ "$count" -gt 10 ]
