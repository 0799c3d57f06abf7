#!/bin/sh
# `mprof record` with several processes, crashes and signals, on a machine
# without a GPU: process_app loads the producer as cuInit would (it records
# no kernels here, but it claims its file, streams it and reports to
# `record` exactly as under CUDA).
# usage: test_record_processes.sh MPROF PRODUCER PROCESS_APP TMPDIR
mprof=$1
export MPROF_CUPTI_LIB=$2
app=$3
tmp=${4:-/tmp}/record-processes.$$
. "$(dirname "$0")/../cli/common.sh"

# run NAME STATUS CMD...: run CMD, keep its output in $tmp/NAME.out, check
# the exit status.
run() {
  name=$1; want=$2; shift 2
  "$@" >"$tmp/$name.out" 2>&1
  got=$?
  [ "$got" -eq "$want" ] || fail "$name: exit status $got, expected $want: $(head -c 400 "$tmp/$name.out")"
}
has() { grep -q -- "$2" "$tmp/$1.out" || fail "$1: output lacks '$2': $(head -c 600 "$tmp/$1.out")"; }
meta() { "$mprof" info "$1" | sed -n "s/^meta       $2 = //p"; }

# Two processes, one started by the other: two traces, the default name for
# the first, the pid added for the second; each says who it was.
mkdir "$tmp/two"
run two 0 "$mprof" record -o "$tmp/two/trace.mprof" -- "$app" init spawn init exit 0
has two "2 processes recorded"
set -- "$tmp"/two/trace.*.mprof
[ -f "$tmp/two/trace.mprof" ] && [ -f "$1" ] || fail "two: expected trace.mprof and trace.PID.mprof: $(ls "$tmp/two")"
parent=$(meta "$tmp/two/trace.mprof" pid)
child=$(meta "$1" pid)
[ -n "$parent" ] && [ "$parent" != "$child" ] || fail "two: pids '$parent' and '$child'"
[ "$(meta "$1" ppid)" = "$parent" ] || fail "two: the second trace's ppid is not the first's pid"
[ "$1" = "$tmp/two/trace.$child.mprof" ] || fail "two: second trace is $1, not trace.$child.mprof"
ls "$tmp/two" | grep -q partial && fail "two: a .partial file was left: $(ls "$tmp/two")"
# Each trace's process record: who it was and how it ended.
"$mprof" info "$1" >"$tmp/child.info" 2>&1 || fail "two: info on the second trace fails"
grep -q "^process 0  pid $child on .*, parent $parent: .*process_app" "$tmp/child.info" ||
  fail "two: info does not show the process: $(grep '^process' "$tmp/child.info")"
grep -q "^           .*exited with status 0; " "$tmp/child.info" ||
  fail "two: info does not show the exit: $(grep -A1 '^process' "$tmp/child.info")"
# The run as a set: info lists both processes; merge joins them.
"$mprof" info "$tmp/two" >"$tmp/set.out" 2>&1 || fail "set: info on the directory fails"
grep -q "^set        2 traces" "$tmp/set.out" || fail "set: info does not list 2 traces: $(head -c 300 "$tmp/set.out")"
grep -q "pid $child" "$tmp/set.out" || fail "set: info does not name pid $child"
"$mprof" merge "$tmp/two" -o "$tmp/merged.mprof" >"$tmp/merge.out" 2>&1 || fail "merge fails: $(cat "$tmp/merge.out")"
[ "$(meta "$tmp/merged.mprof" merge.processes)" = 2 ] || fail "merge: merge.processes is not 2"
pids="$(meta "$tmp/merged.mprof" process.0.pid) $(meta "$tmp/merged.mprof" process.1.pid)"
for p in "$parent" "$child"; do
  case " $pids " in *" $p "*) ;; *) fail "merge: processes are '$pids', not $parent and $child" ;; esac
done

# Processes that started CUDA and did no work on the GPU (a launcher and
# its worker, as torch.compile's), beside one that did: stand-in producers
# (`mprof synth` writes each trace, with 0 launches for the idle ones, and
# it reports through the manifest as the producer does). The empty traces
# go, each named in one line; alone, an empty trace stays and is called
# empty. process_app's own traces are not empty: CUPTI refuses it here
# (no GPU), which is not having done nothing.
cat >"$tmp/standin" <<EOF
#!/bin/sh
# PID PPID PATH LAUNCHES: one process of the run, written and reported.
"$mprof" synth -o "\$3" --launches "\$4" --meta pid="\$1" \\
  --meta cmdline="worker \$1" >/dev/null &&
  echo "start \$1 \$2 \$3" >>"\$MPROF_MANIFEST" &&
  echo "end \$1 0 \$3" >>"\$MPROF_MANIFEST"
EOF
chmod +x "$tmp/standin"
mkdir "$tmp/empty"
run empty 0 "$mprof" record -o "$tmp/empty/trace.mprof" -- sh -c '
  "$1" init exit 0 && "$2" 70 1 "$3/launcher.mprof" 0 &&
    "$2" 71 70 "$3/compile_worker.mprof" 0 && "$2" 72 70 "$3/work.mprof" 20' \
  sh "$app" "$tmp/standin" "$tmp/empty"
has empty "4 processes recorded"
for p in 70:launcher 71:compile_worker; do
  grep -q "^mprof record: pid ${p%%:*} (worker ${p%%:*}) ran no CUDA work (no kernel, copy or memset): its empty trace $tmp/empty/${p#*:}.mprof was removed$" "$tmp/empty.out" ||
    fail "empty: pid ${p%%:*} is not named as empty and removed: $(cat "$tmp/empty.out")"
done
[ "$(grep -c "ran no CUDA work" "$tmp/empty.out")" -eq 2 ] ||
  fail "empty: more than the two idle processes called empty: $(cat "$tmp/empty.out")"
[ -f "$tmp/empty/work.mprof" ] && [ -f "$tmp/empty/trace.mprof" ] ||
  fail "empty: the working trace or process_app's is gone: $(ls "$tmp/empty")"
ls "$tmp/empty" | grep -q '^\(launcher\|compile_worker\)' &&
  fail "empty: leftovers of the empty traces: $(ls "$tmp/empty")"
has empty "work.mprof: 8 kernels, 20 launches"
mkdir "$tmp/alone"
run alone 0 "$mprof" record -o "$tmp/alone/trace.mprof" -- \
  "$tmp/standin" 80 1 "$tmp/alone/idle.mprof" 0
has alone "^mprof record: pid 80 ran no CUDA work: $tmp/alone/idle.mprof holds no kernel, copy or memset"
[ -f "$tmp/alone/idle.mprof" ] || fail "alone: the only trace was removed"

# Processes that follow each other: an idle worker took the name asked
# for, the program's own process wrote NAME.PID; the idle trace goes and
# the working one takes the name, its PC-sample sidecar with it.
mkdir "$tmp/renamed"
run renamed 0 "$mprof" record -o "$tmp/renamed/trace.mprof" -- sh -c '
  "$1" 90 1 "$2/trace.mprof" 0 && "$1" 91 1 "$2/trace.91.mprof" 20 &&
    echo "{}" >"$2/trace.91.mprof.pc.json"' sh "$tmp/standin" "$tmp/renamed"
has renamed "^mprof record: pid 90 (worker 90) ran no CUDA work"
has renamed "^mprof record: pid 91 was the one process with CUDA work; its trace $tmp/renamed/trace.91.mprof is now $tmp/renamed/trace.mprof$"
[ "$(ls "$tmp/renamed")" = "$(printf 'trace.mprof\ntrace.mprof.pc.json')" ] ||
  fail "renamed: expected trace.mprof and its sidecar alone: $(ls "$tmp/renamed")"
[ "$(meta "$tmp/renamed/trace.mprof" pid)" = 91 ] ||
  fail "renamed: trace.mprof is not the working process's"

# A child forked after CUDA started shares nothing: one trace, the parent's.
mkdir "$tmp/fork"
run fork 0 "$mprof" record -o "$tmp/fork/trace.mprof" -- "$app" init fork sleep 200 exit 0
[ "$(ls "$tmp/fork" | grep -c '\.mprof$')" -eq 1 ] || fail "fork: expected one trace: $(ls "$tmp/fork")"
"$mprof" info "$tmp/fork/trace.mprof" >/dev/null 2>&1 || fail "fork: the trace does not open"

# The status the program exits with is in its record, as record passes it on.
mkdir "$tmp/status"
run status 3 "$mprof" record -o "$tmp/status/trace.mprof" -- "$app" init exit 3
"$mprof" info "$tmp/status/trace.mprof" >"$tmp/status.info" 2>&1 || fail "status: info fails"
grep -q "^           .*exited with status 3; " "$tmp/status.info" ||
  fail "status: info does not show exit status 3: $(grep -A1 '^process' "$tmp/status.info")"

# Naming: %q{VAR} and %p.
mkdir "$tmp/names"
FAKE_RANK=3 run rank 0 "$mprof" record -o "$tmp/names/r%q{FAKE_RANK}.mprof" -- "$app" init exit 0
[ -f "$tmp/names/r3.mprof" ] || fail "rank: r3.mprof not written: $(ls "$tmp/names")"
run pid 0 "$mprof" record -o "$tmp/names/p-%p.mprof" -- "$app" init exit 0
set -- "$tmp"/names/p-*.mprof
[ "$1" = "$tmp/names/p-$(meta "$1" pid).mprof" ] || fail "pid: $1 does not carry its pid"

# Crashes: the exit status is the program's, the trace opens and is marked
# partial, and one line says what happened.
for case in abort:134:6:SIGABRT segv:139:11:SIGSEGV kill:137:9:SIGKILL term:143:15:SIGTERM; do
  step=${case%%:*}; rest=${case#*:}; status=${rest%%:*}; rest=${rest#*:}
  signo=${rest%%:*}; signame=${rest#*:}
  mkdir "$tmp/$step"
  run "$step" "$status" "$mprof" record -o "$tmp/$step/trace.mprof" -- "$app" init "$step"
  has "$step" "killed by signal $signo"
  has "$step" "is partial"
  [ -f "$tmp/$step/trace.mprof" ] || fail "$step: no trace: $(ls "$tmp/$step")"
  "$mprof" info "$tmp/$step/trace.mprof" >"$tmp/$step.info" 2>&1 || fail "$step: info fails: $(head -c 300 "$tmp/$step.info")"
  grep -q "partial" "$tmp/$step.info" || fail "$step: info does not say partial"
  # Its process record is there, with the signal `record` learnt from
  # waitpid (the producer could not write it: SIGKILL is never caught).
  grep -q "^process 0  pid [0-9]* on " "$tmp/$step.info" || fail "$step: info shows no process"
  grep -q "^           killed by signal $signo ($signame); " "$tmp/$step.info" ||
    fail "$step: info does not say how the process ended: $(grep -A1 '^process' "$tmp/$step.info")"
done
# A program whose trace reached `record` without the producer's word (an
# older producer; here `mprof synth` writes it, naming the shell's pid,
# which then dies of SIGKILL): its process still gets the signal.
mkdir "$tmp/oldkill"
run oldkill 137 "$mprof" record -o "$tmp/oldkill/trace.mprof" -- sh -c \
  '"$0" synth -o "$1" --meta pid=$$ >/dev/null && kill -9 $$' "$mprof" "$tmp/oldkill/trace.mprof"
"$mprof" info "$tmp/oldkill/trace.mprof" >"$tmp/oldkill.info" 2>&1 || fail "oldkill: info fails"
grep -q "^           killed by signal 9 (SIGKILL); " "$tmp/oldkill.info" ||
  fail "oldkill: info does not say SIGKILL: $(grep -A1 '^process' "$tmp/oldkill.info")"

# The injected producer's own handler reports a crash once, naming the
# signal, the address, the thread and whose code faulted (the program's
# here), then the stack (process_app's main
# segfaults or aborts); no report for a signal that is no crash, nor for
# one it cannot catch. The statuses (139, 134) were checked above.
has segv "^mprof-cupti: the program got SIGSEGV at address 0x0 in one of its own threads, the faulting instruction in process_app+0x[0-9a-f]*; its stack:$"
has abort "^mprof-cupti: the program got SIGABRT in one of its own threads; its stack:$"
for step in segv abort; do
  [ "$(grep -c '^mprof-cupti: the program got' "$tmp/$step.out")" -eq 1 ] ||
    fail "$step: not one crash report: $(cat "$tmp/$step.out")"
  sed -n '/the program got/,$p' "$tmp/$step.out" | grep -q "process_app(+0x[0-9a-f]*)" ||
    fail "$step: the stack does not reach process_app: $(cat "$tmp/$step.out")"
done
for step in term kill; do
  grep -q "the program got" "$tmp/$step.out" && fail "$step: a crash report: $(cat "$tmp/$step.out")"
done
# The producer saw the signals it can catch.
[ "$(meta "$tmp/abort/trace.mprof" capture.signal)" = 6 ] || fail "abort: capture.signal is not 6"

# SIGTERM to `mprof record` goes on to the program; its status comes back.
mkdir "$tmp/sigterm"
"$mprof" record -o "$tmp/sigterm/trace.mprof" -- "$app" init sleep 20000 >"$tmp/sigterm.out" 2>&1 &
record=$!
sleep 1
kill -TERM "$record"
wait "$record"
got=$?
[ "$got" -eq 143 ] || fail "sigterm: record exited $got, expected 143: $(cat "$tmp/sigterm.out")"
has sigterm "killed by signal 15"
"$mprof" info "$tmp/sigterm/trace.mprof" >/dev/null 2>&1 || fail "sigterm: the trace does not open"

# A full disk: the finished copy cannot be written (NAME.finishing leads to
# /dev/full, so write(2) fails with ENOSPC), and the capture is not lost:
# the streamed file becomes the trace, one line says so, status 1.
mkdir "$tmp/full"
ln -s /dev/full "$tmp/full/trace.mprof.finishing"
run full 1 "$mprof" record -o "$tmp/full/trace.mprof" -- "$app" init exit 0
has full "pid [0-9]* exited with status 0 but could not write its trace (No space left on device); $tmp/full/trace.mprof holds the whole capture from its streamed file: 0 launches"
[ "$(grep -c "could not write" "$tmp/full.out")" -eq 1 ] || fail "full: the failure is not said in exactly one line: $(cat "$tmp/full.out")"
"$mprof" info "$tmp/full/trace.mprof" >"$tmp/full.info" 2>&1 || fail "full: the kept trace does not open: $(head -c 300 "$tmp/full.info")"
[ -e "$tmp/full/trace.mprof.partial" ] && fail "full: the streamed file was left beside the trace"
[ -e "$tmp/full/trace.mprof.finishing" ] && fail "full: the failed copy was left"
# The disk fills while the program runs (RLIMIT_FSIZE: writes past the
# streamed file's size fail with EFBIG): the final checkpoint cannot be
# written either, and the trace holds the checkpoints before.
mkdir "$tmp/fsize"
run fsize 1 "$mprof" record -o "$tmp/fsize/trace.mprof" -- "$app" init fsize-of "$tmp/fsize/trace.mprof.partial" exit 0
has fsize "exited with status 0 but could not write its trace (File too large); $tmp/fsize/trace.mprof holds the capture up to checkpoint 1 (the first"
"$mprof" info "$tmp/fsize/trace.mprof" >"$tmp/fsize.info" 2>&1 || fail "fsize: the kept trace does not open: $(head -c 300 "$tmp/fsize.info")"
grep -q "partial" "$tmp/fsize.info" || fail "fsize: info does not say partial"
# The program's own status still comes first.
mkdir "$tmp/full3"
ln -s /dev/full "$tmp/full3/trace.mprof.finishing"
run full3 3 "$mprof" record -o "$tmp/full3/trace.mprof" -- "$app" init exit 3
has full3 "exited with status 3 but could not write its trace (No space left on device)"

[ "$failures" -eq 0 ] && echo "record processes: all checks passed"
exit "$failures"
