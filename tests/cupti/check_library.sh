#!/bin/sh
# The injection library must stay small in what it drags into the profiled
# process: NEEDED lists libcupti and the libc family only, and the dynamic
# symbol table exports exactly the two injection entry points and
# mprof_control (mprof/control.h).
lib=$1
[ -f "$lib" ] || { echo "no library: $lib"; exit 1; }
status=0

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
for so in $needed; do
  case $so in
    libcupti.so.*|libc.so.*|libpthread.so.*|libdl.so.*|ld-linux*) ;;
    # MPROF_SANITIZE builds add the sanitizer runtimes to every target.
    libasan.so.*|libubsan.so.*) ;;
    *) echo "unexpected NEEDED entry: $so"; status=1 ;;
  esac
done
echo "$needed" | grep -q '^libcupti\.so' || { echo "libcupti is not in NEEDED"; status=1; }

exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | sort -u)
echo "exported: $(echo $exported)"
expected=$(printf 'InitializeInjection\nInitializeInjectionNvtx2\nmprof_control\n')
if [ "$exported" != "$expected" ]; then
  echo "exports differ from: $(echo $expected)"
  status=1
fi
exit $status
