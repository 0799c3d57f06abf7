#!/bin/sh
# A fault in a thread of the producer's, or of the program's: one report on
# stderr naming the signal, the address and the thread, then the stack, and
# the program still dies of SIGSEGV (status 139 from the shell).
# Usage: crash_report.sh CRASH_REPORT_BINARY
bin=${1:?usage: crash_report.sh CRASH_REPORT_BINARY}
failures=0
check() { # check WHAT WANT_PATTERN FILE
  if grep -q -- "$2" "$3"; then echo "ok   $1"; else
    echo "FAIL $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
for who in producer program; do
  "$bin" "$who" 2>"$tmp/$who.err"
  status=$?
  if [ "$status" -eq 139 ]; then echo "ok   $who: died of SIGSEGV (139)"; else
    echo "FAIL $who: exit status $status, not 139"; failures=$((failures + 1)); fi
  check "$who: the signal and the address" "mprof-cupti: the program got SIGSEGV at address 0x0 in " "$tmp/$who.err"
  check "$who: a stack follows" "crash_report(" "$tmp/$who.err"
done
check "producer: the thread is named as the producer's" "in the drain thread of mprof's producer" "$tmp/producer.err"
check "program: the thread is the program's" "in one of its own threads, the faulting instruction in libc" "$tmp/program.err"
# The test program holds the report's code, as libmprof-cupti.so does.
check "producer: the faulting code is named as mprof's" "of mprof's producer, the faulting instruction mprof's own (crash_report+0x" "$tmp/producer.err"
[ "$failures" -eq 0 ]
