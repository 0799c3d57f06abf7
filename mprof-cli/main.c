/*
 * mprof — the command-line entry point: dispatch to subcommands.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "mprof/mprof.h"

static const cli_command commands[] = {
    {"record", "run a CUDA program and record a trace",
     "usage: mprof record [-o FILE] [--pc-mode continuous|serialized|off]\n"
     "                    [--pc-period N] [--pc-buffer SIZE] [--kernel REGEX]\n"
     "                    [--pm on|off|both|alternate] [--alternate-every N]\n"
     "                    [--pm-interval DURATION] [--pm-counters SET]\n"
     "                    [--no-sass] [--sass-now] [--drop-code] [-q]\n"
     "                    [--capture-range RANGE [--range-skip N]\n"
     "                    [--range-count M]] [--kernel-skip N]\n"
     "                    [--kernel-count M] [--delay S] [--duration S]\n"
     "                    [--max-size SIZE] [--no-source]\n"
     "                    [--source-root DIR|OLD=NEW]... -- CMD [ARGS]\n"
     "       mprof record source [OPTIONS] -- CMD [ARGS]\n"
     "       mprof record blocks [-o FILE] [--kernel REGEX [--memory]] -- CMD\n"
     "\n"
     "Run CMD with the CUPTI producer injected (CUDA_INJECTION64_PATH), then\n"
     "write FILE (default trace.mprof) and FILE.pc.json. The exit status is\n"
     "CMD's, or 1 when CMD succeeded but its trace could not be written (a\n"
     "full disk: what it streamed is kept as FILE, and one line says what it\n"
     "holds). FILE keeps the code of the kernels that ran; the first summary,\n"
     "view, diff or export of FILE disassembles the sampled ones with\n"
     "nvdisasm and saves their SASS in FILE.pc.json (--sass-now does it\n"
     "before record returns: use it before taking FILE to a machine without\n"
     "the CUDA toolkit; 'mprof sass FILE' does it later, for every kernel).\n"
     "\n"
     "'record source' also collects the spans of kernels built with\n"
     "producers/source/mprof_source.cuh and -DMPROF_SOURCE: CMD writes them\n"
     "to FILE.source (MPROF_SOURCE_OUTPUT), and they are merged into FILE,\n"
     "aligned on the CUPTI timeline (see 'mprof help source').\n"
     "\n"
     "'record blocks' records instead when every thread block of every\n"
     "kernel ran and on which SM, with no source changes: the block producer\n"
     "(libmprof-blocks.so, Compute Sanitizer API) patches each module as it\n"
     "loads. It runs without the CUPTI producer, which cannot share the\n"
     "process: launch times are the blocks' own (first entry to last exit),\n"
     "and there are no copies, NVTX ranges, PC samples or SASS (record the\n"
     "same command without 'blocks' for those). --kernel limits it to\n"
     "matching kernels; MPROF_BLOCKS_CAPACITY sets the device buffer (block\n"
     "slots per context, default 16M = 384 MiB). Launches keep their stream,\n"
     "grid, block, cluster and dynamic shared memory. With --memory (and\n"
     "--kernel) it also counts every global-memory access of the matching\n"
     "kernels per instruction: accesses, bytes asked for and 32-byte sectors\n"
     "touched per warp (sector efficiency), shown in the Hotspots tab and by\n"
     "'summary --kernel'. See producers/sanitizer/README.md.\n"
     "\n"
     "Every process that starts CUDA under CMD writes its own trace. By\n"
     "default the first writes FILE and each other one FILE with its pid\n"
     "before the extension (trace.4242.mprof). A process that did no CUDA\n"
     "work (a launcher, a compiler worker) leaves no trace when others did\n"
     "some; when one process alone did, its trace is FILE. A trace is\n"
     "streamed to disk every second: a program that crashes or is killed\n"
     "leaves a partial trace holding everything up to the last flush.\n"
     "SIGINT, SIGTERM and SIGHUP sent to mprof record are passed on to CMD\n"
     "(Ctrl-C in a terminal reaches CMD directly); a list at the end says\n"
     "which file each process wrote and how it ended.\n"
     "\n"
     "  -o FILE         output, a pattern: %p the pid of each process,\n"
     "                  %h the host name, %q{VAR} the value of environment\n"
     "                  variable VAR in that process (e.g. %q{RANK},\n"
     "                  %q{SLURM_PROCID}), %% a percent sign\n"
     "  --pc-mode M     continuous (default): PC samples per function while\n"
     "                  kernels run concurrently; serialized: per launch, at\n"
     "                  ~0.8 ms per launch; off: timeline only\n"
     "  --pc-period N   one sample per SM every 2^N cycles, 5..31 (default "
     "14;\n"
     "                  see producers/cupti/README.md)\n"
     "  --pc-buffer SZ  PC sampling hardware buffer, e.g. 2G (default 512M)\n"
     "  --kernel REGEX  sample and keep code only for matching kernels\n"
     "  --memory        (record blocks) per-instruction global-memory "
     "accesses\n"
     "                  and sector efficiency of the --kernel kernels\n"
     "  --pm on|off|both PM sampling: DRAM, L2, SM and pipe throughput of\n"
     "                  the whole GPU over time, no kernel replay. Default\n"
     "                  off; on turns PC sampling off (the two failed\n"
     "                  together on the H200); both runs CMD twice, PC-\n"
     "                  sampled into FILE then PM-sampled into FILE.pm.mprof\n"
     "                  (run.mprof -> run.pm.mprof), to open as one set\n"
     "                  (mprof summary A B) for stall reasons and throughput;\n"
     "                  alternate (with a --capture-range that repeats):\n"
     "                  one run, its repeats take turns, PC-sampled then\n"
     "                  PM-sampled, so one trace gets stall reasons and\n"
     "                  measured throughput (recap: turns and switch cost)\n"
     "  --alternate-every N  repeats a turn lasts (default: half of\n"
     "                  --range-count, rounded up, so one switch; 10\n"
     "                  without it). CUPTI attributes PC samples only in\n"
     "                  modules loaded while PC sampling is on: a PC turn\n"
     "                  after a PM turn may lose kernels loaded meanwhile\n"
     "  --pm-interval D PM sampling interval, 1us..1s (default 100us)\n"
     "  --pm-counters SET  the counters PM sampling reads: default (DRAM, L2\n"
     "                  sectors, SMs active, issue, tensor pipe), sol (ncu's\n"
     "                  speed of light: those but the L2's sectors, which\n"
     "                  CUPTI evaluates wrong beside its counters, and\n"
     "                  L1/TEX and SM throughput; 'mprof summary SOL\n"
     "                  DEFAULT' of a sol run and a default one gives all\n"
     "                  of it), or a comma list of CUPTI metric names\n"
     "                  (docs/DIAGNOSIS.md); decoding takes 35-130 us of\n"
     "                  host time a sample, so a run with over a second\n"
     "                  of samples may lose some (record says so): use\n"
     "                  --pm-interval 200us there\n"
     "  --no-sass       keep no kernel code (smaller traces; no SASS)\n"
     "  --sass-now      disassemble the sampled kernels before returning\n"
     "  --drop-code     once SASS is in FILE.pc.json, drop the captured code\n"
     "                  from the trace (cuBLAS alone is ~14 MB)\n"
     "  --no-source     embed no source files. By default FILE keeps the\n"
     "                  source files its sampled kernels' line tables name\n"
     "                  (built with -lineinfo), compressed, so that FILE\n"
     "                  copied alone shows its code; a file that cannot be\n"
     "                  read is listed as missing\n"
     "  --source-root DIR|OLD=NEW  where build paths are now: DIR is\n"
     "                  searched for a path's trailing parts, OLD=NEW\n"
     "                  replaces its leading folder OLD (repeatable)\n"
     "  -q, --quiet     no recap\n"
     "\n"
     "Capture window: record part of a long run. Outside the window PC\n"
     "sampling and activity records are off, and the program pays only for\n"
     "the callbacks the window listens to; modules are still captured, so\n"
     "kernels loaded before the window keep their SASS. The trace says\n"
     "which window it holds ('mprof info'), and record's recap how and why\n"
     "it ended. C and C++ programs can mark steps and start or stop\n"
     "recording with the header-only mprof/control.h.\n"
     "  --capture-range R  cudaProfilerApi: between cudaProfilerStart and\n"
     "                  cudaProfilerStop (torch.cuda.profiler.start/stop);\n"
     "                  nvtx:NAME[@DOMAIN]: inside NVTX ranges named NAME\n"
     "                  (whole name; nvtx:/REGEX/ for a POSIX extended\n"
     "                  regex, unanchored), of the default domain, of\n"
     "                  DOMAIN, or of any domain with @*; only the\n"
     "                  outermost matching range counts; none (default):\n"
     "                  the whole run\n"
     "  --range-skip N  leave the first N ranges alone (default 0)\n"
     "  --range-count M record M ranges, then stop for good (default: all);\n"
     "                  recording is off between them\n"
     "  --kernel-skip N, --kernel-count M  as ncu's --launch-skip and\n"
     "                  --launch-count: count the launches of kernels\n"
     "                  --kernel matches (all without it); recording starts\n"
     "                  before launch N+1 and stops before launch N+M+1\n"
     "  --delay S       count nothing for the first S seconds\n"
     "  --duration S    stop S seconds after recording started\n"
     "  --max-size SIZE stop when the trace reaches SIZE (e.g. 500M)\n"
     "\n"
     "PyTorch: wrap the steps to record in torch.cuda.profiler.start() and\n"
     "stop() and pass --capture-range cudaProfilerApi; or mark every step\n"
     "with 'with torch.cuda.nvtx.range(\"step\"):' and record steps\n"
     "1001-1004:\n"
     "  mprof record --capture-range nvtx:step --range-skip 1000 \\\n"
     "               --range-count 4 -- python train.py\n"
     "Stall reasons and throughput of those steps from the one run:\n"
     "  mprof record --capture-range nvtx:step --range-skip 1000 \\\n"
     "               --range-count 4 --pm alternate -- python train.py\n",
     cmd_record,
     "sub:source sub:blocks arg:command -o:file "
     "--pc-mode:continuous,serialized,off --pc-period:value --pc-buffer:size "
     "--kernel:value --memory --pm:on,off,both,alternate "
     "--alternate-every:value "
     "--pm-interval:duration --pm-counters:default,sol "
     "--no-sass --sass-now --drop-code --no-source --source-root:dir -q "
     "--quiet --capture-range:value --range-skip:value --range-count:value "
     "--kernel-skip:value --kernel-count:value --delay:duration "
     "--duration:duration --max-size:size"},
    {"doctor", "check that this machine can capture",
     "usage: mprof doctor\n"
     "\n"
     "Check the NVIDIA driver and GPUs, the CUDA toolkit, libcupti, the\n"
     "producer, nvdisasm and the profiling permission; print one line per\n"
     "check with the fix. Exit status 0 only when capture can work.\n",
     cmd_doctor, ""},
    {"setup", "build the CUPTI producer if this install lacks it",
     "usage: mprof setup\n"
     "\n"
     "Say where the CUPTI producer is, or build it against the local CUDA\n"
     "toolkit into ~/.local/share/mprof/libmprof-cupti.so.\n",
     cmd_setup, ""},
    {"info", "print what a trace holds",
     "usage: mprof info TRACE...\n"
     "\n"
     "Validate TRACE and print its processes (pid, host, rank, command,\n"
     "how long each was recorded, how it ended, its streams and devices),\n"
     "metadata, devices, section sizes, the captured code (modules\n"
     "trimmed to the functions that ran, whole, or without code),\n"
     "kernels (by launch count) and drop counters. TRACE may be a .mprof\n"
     "or a MKPROF file (.mkprof), read as `mprof mkprof import` reads it.\n"
     "Several traces, a directory (its .mprof files: the processes of\n"
     "one run) or a quoted glob ('run/*.mprof') print a line per process\n"
     "first, then each trace. A trace\n"
     "cut short (killed, crashed) says it is partial and how much it\n"
     "holds.\n",
     cmd_info, "arg:trace"},
    {"summary", "which kernel hurts and why (XML, JSON or a panel)",
     "usage: mprof summary TRACE... [--kernel NAME|REGEX] [--top N] [--hot N]\n"
     "                     [--all] [--xml|--json|--human] [--detail]\n"
     "                     [--full-names] [--color=WHEN] [--by-process]\n"
     "                     [--sort time|saved] [--sidecar FILE|--no-sidecar]\n"
     "       mprof summary TRACE --by-range [--top N|--all]\n"
     "                     [--kernel NAME|REGEX] [--xml|--json|--human]\n"
     "                     [--color=WHEN]\n"
     "       mprof summary TRACE --by-line [--kernel PAT] [--top N] [--hot N]\n"
     "                     [--source-root DIR|OLD=NEW]...\n"
     "                     [--xml|--json|--human]\n"
     "\n"
     "Diagnose every kernel of TRACE, dominant first: launch statistics,\n"
     "launch shapes with theoretical occupancy and waves, one verdict\n"
     "sentence, ten dimensions judged ok/minor/issue with their numbers\n"
     "(docs/DIAGNOSIS.md; two more, SM load balance and SM tail, when the\n"
     "trace has activity spans), the stall mix and the hot instructions\n"
     "with SASS and source lines from the sidecar TRACE.pc.json when it\n"
     "exists. TRACE may be a .mprof or a MKPROF file (.mkprof).\n"
     "\n"
     "Several traces, a directory (its .mprof files) or a quoted glob are\n"
     "one run (one trace per process, as `mprof record` writes them), merged\n"
     "on one clock as `mprof merge` does: a kernel's launches in every\n"
     "process on the same GPU are one row; the sidecar is that of the first\n"
     "trace that has one.\n"
     "\n"
     "  --by-process  one row per kernel and process (pid, host, rank);\n"
     "                also --split process\n"
     "  --kernel PAT  only kernels whose mangled or demangled name is PAT,\n"
     "                else matches PAT as an extended regular expression\n"
     "  --top N       show N kernels (default 5); --all shows every one\n"
     "  --hot N       show N hot instructions per kernel (default 5)\n"
     "  --xml         XML, documented in docs/SUMMARY-SCHEMA.md (default)\n"
     "  --json        JSON, schema in docs/summary.schema.json\n"
     "  --human       for people: one line per kernel (share, launches,\n"
     "                mean, verdict, estimated gain as a share of the\n"
     "                kernel's time, or of the stream's for idle gaps,\n"
     "                and the time its fix saves the program; the top 20,\n"
     "                --all for every one); with --kernel, --top N or\n"
     "                --detail a panel per kernel.\n"
     "                Coloured on a terminal unless\n"
     "                NO_COLOR is set (--color=always|never|auto)\n"
     "  --full-names  --human prints whole kernel names, not the short form\n"
     "                (function name, template arguments elided); XML and\n"
     "                JSON carry both (name, short_name); short\n"
     "                names are unique in the trace: kernels that would\n"
     "                share one keep the template arguments that differ\n"
     "  --sort KEY    rank kernels by GPU time (time, the default) or by\n"
     "                the estimated time their verdict's fix saves (saved:\n"
     "                kernel time x gain; unknown savings last)\n"
     "  --sidecar F   read SASS and lines from F; --no-sidecar ignores it\n"
     "  --by-range    GPU time per NVTX range instead, inclusive (nested\n"
     "                ranges too) and exclusive, as a tree: each launch,\n"
     "                copy and memset counts for the innermost named range\n"
     "                open on the thread of the API call that issued it\n"
     "                (e.g. torch.cuda.nvtx.range), or, when that thread\n"
     "                had none open (PyTorch's autograd thread), for the\n"
     "                innermost open on any thread of its process; the 20\n"
     "                first, --top N or --all; with --kernel PAT, each\n"
     "                range's kernels that match. A trace without ranges\n"
     "                or API calls says so in one line\n"
     "  --by-line     the hottest source lines of a kernel instead (the\n"
     "                dominant sampled one; --kernel PAT, --top N or --all\n"
     "                for others): share of its PC samples, stall mix, the\n"
     "                line's code and its sampled SASS, and where inlined\n"
     "                code was inlined at; lines of headers and of the .cu\n"
     "                file are kept apart. --hot N lines (default 10). The\n"
     "                code comes from the trace when it embeds it, else from\n"
     "                disk; a kernel without a line table says so\n"
     "  --source-root DIR|OLD=NEW  with --by-line: where build paths are\n"
     "                now. DIR is searched for the path's trailing parts;\n"
     "                OLD=NEW replaces the leading folder OLD (repeatable)\n"
     "\n"
     "Output is bounded: what is left out is counted (omitted=...).\n"
     "Exit status: 0 ok, 1 failed, 2 bad usage or bad input.\n",
     cmd_summary,
     "arg:trace --kernel:value --top:value --hot:value --all --xml --json "
     "--human --detail --full-names --color=:auto,always,never --by-process "
     "--sort:time,saved "
     "--split:process --sidecar:file --no-sidecar --by-range --by-line "
     "--source-root:dir"},
    {"diff", "compare two traces kernel by kernel (a CI gate)",
     "usage: mprof diff BASE CAND [--fail-above PCT] [--top N] [--hot N]\n"
     "                  [--xml|--json|--human] [--color=WHEN] [--no-sidecar]\n"
     "                  [--allow-disjoint] [--full-names]\n"
     "\n"
     "BASE and CAND are each a trace, or a run's traces as a directory or a\n"
     "quoted glob ('base/*.mprof'), opened as one (see `mprof help\n"
     "summary`).\n"
     "\n"
     "Join BASE and CAND by kernel (name and device) and report, per kernel,\n"
     "the change in mean time per launch and in total GPU time, whether the\n"
     "change is outside the launch-to-launch noise (Welch's t-test, 99.9%;\n"
     "changes under 1% count as noise), kernels on one side only, and how\n"
     "the stall profile and the hot instructions moved. Either side may be\n"
     "a .mprof or a MKPROF file (.mkprof).\n"
     "\n"
     "  --fail-above PCT  exit 3 when a kernel's mean time per launch rose\n"
     "                    by more than PCT percent, outside the noise\n"
     "  --top N           show N kernels (default 10), largest change first\n"
     "  --xml|--json|--human  as for summary (docs/diff.schema.json)\n"
     "  --full-names      --human prints whole kernel names\n"
     "  --allow-disjoint  report traces that share no kernel; without it\n"
     "                    such a diff is refused (exit 2) as comparing\n"
     "                    nothing\n"
     "\n"
     "Exit status: 0 ok, 1 failed, 2 bad usage or bad input, 3 the gate\n"
     "tripped.\n",
     cmd_diff,
     "arg:trace --fail-above:value --top:value --hot:value --xml --json "
     "--human --color=:auto,always,never --no-sidecar --allow-disjoint "
     "--full-names"},
    {"ranks", "which rank of a multi-GPU job is slow, in which step, and why",
     "usage: mprof ranks TRACE... [--xml|--json|--human] [--color=WHEN]\n"
     "                   [--top N|--all] [--hot N] [--threshold PCT]\n"
     "                   [--no-diff] [-j N]\n"
     "\n"
     "TRACE... are the traces of one job, one per rank (as `mprof record -o\n"
     "'run/%q{RANK}.mprof'` writes them), or a directory or a quoted glob of\n"
     "them. Each trace is read on its own thread (-j N threads; default one\n"
     "per core), then the ranks are compared step by step.\n"
     "\n"
     "Steps are the NVTX ranges named like steps ('step 3', 'ProfilerStep#3',\n"
     "'iteration 3'), else the repeating launch pattern. Per rank and step:\n"
     "GPU busy and idle time, the host call in progress while the GPU was\n"
     "idle (API calls; none recorded: the host was busy elsewhere), time in\n"
     "collectives (kernels named nccl...) and how much of it overlapped\n"
     "other GPU work. A rank straggles in a step when its own work (GPU time\n"
     "outside collectives, plus its idle time when the job has collectives:\n"
     "a rank that waits on another waits inside its collective) exceeds the\n"
     "median rank's by more than PCT percent (default 5) and 10 us. For each\n"
     "straggler: its slowest step, the kernel whose time in that step grew\n"
     "most over the median rank's, and that kernel in a diff of the two\n"
     "traces (mean per launch, noise, stall reasons, as `mprof diff`).\n"
     "\n"
     "  --xml|--json|--human  as for summary (docs/SUMMARY-SCHEMA.md, "
     "\"ranks\")\n"
     "  --top N|--all     ranks listed by --human (default 32)\n"
     "  --hot N           stall reasons per straggler (default 3)\n"
     "  --threshold PCT   how far above the median a straggler is (5)\n"
     "  --no-diff         name stragglers without opening their traces again\n"
     "  -j, --jobs N      threads that read the traces, and the stragglers' "
     "again\n"
     "                    (default: one per core; the report is the same)\n"
     "\n"
     "The Python package runs the same report on Dask: mprof.ranks(paths).\n"
     "Exit status: 0 ok, 1 failed, 2 bad usage or bad input.\n",
     cmd_ranks,
     "arg:trace --xml --json --human --color=:auto,always,never --top:value "
     "--all --hot:value --threshold:value --no-diff -j:value --jobs:value"},
    {"merge", "write the traces of a multi-process run as one trace",
     "usage: mprof merge TRACE... -o FILE\n"
     "\n"
     "Write the traces of one run (one per process, as `mprof record`\n"
     "writes them; a directory or a quoted glob stands for its .mprof\n"
     "files) to FILE as one trace. Every process keeps its own devices\n"
     "and streams (named after their process: \"pid N\", then the\n"
     "stream); times move onto the first trace's clock through the clock\n"
     "anchors each trace stores (traces of one host\n"
     "share their clock and do not move); each process is one record of\n"
     "FILE's PROCESSES (a trace that is itself a set brings each of its\n"
     "processes), its metadata kept as process.I.KEY. FILE is partial\n"
     "when any trace is.\n",
     cmd_merge, "arg:trace -o:file"},
    {"export",
     "write traces for Perfetto, chrome://tracing, speedscope, "
     "SQLite or Kineto",
     "usage: mprof export TRACE... -o FILE [--format "
     "perfetto|chrome|speedscope|sqlite|kineto]\n"
     "                    [--kernel NAME|REGEX] [--sidecar FILE|--no-sidecar]\n"
     "                    [-q]\n"
     "\n"
     "Write TRACE (or the traces of a multi-process run, one process each,\n"
     "on one time axis; a directory or a quoted glob stands for its traces)\n"
     "to FILE for the viewers traces are shared in.\n"
     "\n"
     "perfetto (the default) writes Perfetto's protobuf trace, which\n"
     "ui.perfetto.dev opens: process and thread tracks with NVTX ranges and\n"
     "API calls, a track per GPU stream with its kernels and copies, flows\n"
     "from each API call to its kernel, PM counter tracks and per-SM span\n"
     "tracks; each kernel carries its launch shape and the verdict of\n"
     "'mprof summary', sent once per track (interned), not per launch.\n"
     "\n"
     "chrome writes the same as Trace Event Format JSON, which\n"
     "chrome://tracing and ui.perfetto.dev open (several times larger).\n"
     "\n"
     "speedscope writes one sampled profile per kernel with PC samples:\n"
     "kernel, source line and SASS instruction as a stack, weighted by\n"
     "samples; open it at https://www.speedscope.app.\n"
     "\n"
     "sqlite writes an SQLite database whose tables for what Nsight Systems\n"
     "also records carry its names (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY,\n"
     "_MEMSET, _RUNTIME, NVTX_EVENTS, StringIds, TARGET_INFO_GPU, ...), so\n"
     "queries written for 'nsys export --type sqlite' run on it; PC samples,\n"
     "SASS, PM samples, spans and the diagnosis go in MPROF_* tables.\n"
     "\n"
     "kineto writes one process's trace as torch.profiler's Kineto JSON, for\n"
     "Holistic Trace Analysis: kernels, copies, runtime calls with their\n"
     "correlation ids, deviceProperties, distributedInfo (the rank) and\n"
     "ProfilerStep#N spans from NVTX ranges named like 'step N', else from\n"
     "the repeating launch pattern.\n"
     "\n"
     "  -o FILE         output (written whole, then renamed into place; an\n"
     "                  existing FILE is replaced)\n"
     "  --format F      perfetto, chrome, speedscope, sqlite or kineto\n"
     "  --kernel PAT    only kernels whose name is PAT, else matches the\n"
     "                  extended regular expression PAT\n"
     "  --sidecar F     SASS and source lines from F (one trace only);\n"
     "                  --no-sidecar ignores TRACE.pc.json\n"
     "  -q, --quiet     no recap and no progress\n"
     "\n"
     "The file layouts and the SQLite tables are described in docs/EXPORT.md.\n"
     "Exit status: 0 ok, 1 failed, 2 bad usage or bad input.\n",
     cmd_export,
     "arg:trace -o:file "
     "--format:perfetto,chrome,speedscope,sqlite,kineto --kernel:value "
     "--sidecar:file --no-sidecar -q --quiet"},
    {"synth", "write a deterministic synthetic trace",
     "usage: mprof synth [-o FILE] [--launches N] [--kernels M] [--streams S]\n"
     "                   [--devices D] [--pcs P] [--seed X] [--scenario NAME]\n"
     "                   [--slowdown PCT] [--slow-kernel K] [--slow-scenario "
     "NAME]\n"
     "                   [--slow-device D] [--timing-seed X] [--sidecar]\n"
     "                   [--spans N] [--span-warps W] [--span-sms S]\n"
     "                   [--span-imbalance PCT] [--span-nested]\n"
     "                   [--steps N] [--slow-step S] [--steps-unmarked]\n"
     "                   [--meta KEY=VALUE]...\n"
     "\n"
     "Write a synthetic trace (default synth.mprof) shaped like an H200\n"
     "capture: N launches (default 10000) over M kernels (8) on S streams (2)\n"
     "per device, D devices (1), P sampled PCs per kernel (24; 0 = no PC\n"
     "samples). The same options and seed always give the same file.\n"
     "Scenarios plant one bottleneck in every kernel: mixed (default),\n"
     "memory-latency, compute, barrier, occupancy, tail, launch-gaps.\n"
     "\n"
     "Regressions for `mprof diff`: --slowdown PCT makes the kernels named\n"
     "by --slow-kernel K (repeatable; default kernel 0) PCT percent slower,\n"
     "--slow-scenario NAME gives them another stall profile, --slow-device\n"
     "D (repeatable; default every device) limits both to device D, and\n"
     "--timing-seed X draws new launch-to-launch jitter for the same\n"
     "kernels, like a second run of the same program. --sidecar also\n"
     "writes FILE.pc.json with made-up SASS and source lines.\n"
     "\n"
     "Activity spans for the Mega and Density views: --spans N puts about N\n"
     "spans (load, mma and store phases of every block) into the launches\n"
     "of kernel 0; --span-warps W records them per warp (W warps per block)\n"
     "instead of per block, --span-sms S on S SMs only, --span-imbalance PCT\n"
     "makes the last SM's blocks PCT percent slower than the first's (an SM\n"
     "load imbalance and a tail), --span-nested puts instruction spans\n"
     "inside every phase.\n"
     "\n"
     "One rank of a data-parallel training job, for `mprof ranks`: --steps N\n"
     "splits the launches into N steps that repeat one kernel order, each an\n"
     "NVTX range 'step K' closed by an NCCL all-reduce kernel, with the\n"
     "cudaLaunchKernel calls that issued them and 30 us of host time\n"
     "between steps; --slow-step S applies --slowdown in step S (from 0)\n"
     "only; --steps-unmarked leaves the step ranges out (the launch pattern\n"
     "still shows the steps). A straggler rank of 8: --meta rank=3\n"
     "--meta world_size=8 --steps 10 --slow-step 4 --slowdown 300\n"
     "--slow-kernel 2.\n"
     "\n"
     "--meta KEY=VALUE (repeatable) adds a META entry, after the generator's\n"
     "own, so it wins: one process of a made-up run, e.g. --meta pid=101\n"
     "--meta host=node1 --meta rank=0 --meta clock=CLOCK_MONOTONIC_RAW\n"
     "--meta clock.anchor.trace_ns=N --meta clock.anchor.realtime_ns=M.\n",
     cmd_synth,
     "-o:file --launches:value --kernels:value --streams:value "
     "--devices:value --pcs:value --seed:value "
     "--scenario:mixed,memory-latency,compute,barrier,occupancy,tail,launch-"
     "gaps --slowdown:value --slow-kernel:value "
     "--slow-scenario:mixed,memory-latency,compute,barrier,occupancy,tail,"
     "launch-gaps --slow-device:value --timing-seed:value --sidecar "
     "--spans:value --span-warps:value --span-sms:value --span-imbalance:value "
     "--span-nested --steps:value --slow-step:value --steps-unmarked "
     "--meta:value"},
    {"sass", "attach SASS and source lines to a trace's PC sidecar",
     "usage: mprof sass [--rebuild] [--nvdisasm PATH] [--cuobjdump PATH]\n"
     "                  [--no-disassembly] [--no-source]\n"
     "                  [--source-root DIR|OLD=NEW]... TRACE [FILE...]\n"
     "\n"
     "Complete TRACE.pc.json, the sidecar that holds TRACE's PC samples per\n"
     "function and instruction, with SASS (from nvdisasm) and source lines\n"
     "(from the cubins' line tables; build with -lineinfo). Without a\n"
     "sidecar, or with --rebuild, it is first built from TRACE. Functions\n"
     "still without SASS are then looked up by mangled name in each FILE: a\n"
     "cubin, a fatbin, or an executable or shared library built with nvcc\n"
     "(its .nv_fatbin section; compressed cubins need cuobjdump). Prints\n"
     "what is still missing and why.\n"
     "\n"
     "nvdisasm and cuobjdump are looked up in $MPROF_NVDISASM and\n"
     "$MPROF_CUOBJDUMP, PATH, $CUDA_HOME/bin and /usr/local/cuda/bin.\n"
     "--no-disassembly keeps to samples and source lines.\n"
     "\n"
     "Then the source files that the sampled kernels' line tables name are\n"
     "embedded in TRACE (replacing those it had), as 'mprof record' does:\n"
     "--source-root DIR|OLD=NEW says where build paths are now, a file not\n"
     "found is listed as missing; --no-source leaves TRACE as it is.\n",
     cmd_sass,
     "arg:trace --rebuild --nvdisasm:file --cuobjdump:file --no-disassembly "
     "--no-source --source-root:dir"},
    {"view", "open a trace in the viewer, or draw a view to PNG/SVG",
     "usage: mprof view TRACE... [--kernel NAME] [--tab TAB] [--sidecar FILE]\n"
     "       mprof view TRACE... --render OUT.png|OUT.svg [--tab TAB]\n"
     "                  [--kernel NAME] [--size WxH] [--range FROM:TO]\n"
     "                  [--select FROM:TO] [--sm-height PX] [--rows R]\n"
     "                  [--depth D] [--line [FILE:]N] [--hot RANK]\n"
     "                  [--find TEXT]\n"
     "       mprof view --demo-activity [--render OUT.png] [--rows R]\n"
     "                  [--depth D]\n"
     "       mprof TRACE | mprof DIR\n"
     "       mprof --demo-activity\n"
     "\n"
     "Open TRACE (a .mprof, or a .mkprof) in the GTK viewer (mprof-gtk, next\n"
     "to mprof) on the Summary of its dominant kernel, or of NAME (mangled\n"
     "or demangled name, or the start of it); a .mkprof opens on Mega.\n"
     "Tabs: trace, summary, hotspots, flame, raster, mega, density,\n"
     "activity, source, ranks (one trace per rank: a rank x step heat map\n"
     "of each step's time against the step's median rank, stragglers\n"
     "marked; a click on a cell opens that rank's step on the Trace).\n"
     "\n"
     "Several traces, a directory or a quoted glob are one run (one trace\n"
     "per process, or a `record blocks` trace with a `record` trace of the\n"
     "same command), merged on one clock: every launch keeps its process\n"
     "(pid, host, rank) and a kernel is one across processes.\n"
     "\n"
     "--render draws one tab offscreen instead (no display needed), to PNG\n"
     "or SVG by the extension, at --size (default 1600x1000); --range shows\n"
     "that part of the trace (times after the start of its GPU activity,\n"
     "for the span views after the kernel's first span: 150ms:210ms; units\n"
     "ns, us, ms, s; at most 2^62 ns either way). On the Trace tab,\n"
     "--select FROM:TO selects a range as Shift+drag does in the viewer:\n"
     "its kernels with launches, GPU time and share, in a panel. Mega,\n"
     "Density and Activity show the activity spans of a kernel that has\n"
     "them (measured; without spans Mega and Density are projected from\n"
     "launches and PC samples, and say so), fitted to them unless --range\n"
     "is given; --sm-height PX gives each SM (or Activity row) that many\n"
     "pixels instead of fitting them all. Activity shows one row per SM,\n"
     "block or warp (--rows sm|block|warp) at --depth\n"
     "auto|phase|instruction.\n"
     "\n"
     "The Source tab opens on the file of the kernel's hottest line, that\n"
     "line marked; --hot RANK marks the RANKth hottest instead (2: the next\n"
     "hottest, as n steps in the viewer), --line [FILE:]N line N of FILE\n"
     "(its path as the line table names it, or its last components:\n"
     "math.cuh:12), --find TEXT marks the lines that hold TEXT (case\n"
     "ignored) and goes to the first from the marked line, as Ctrl+F does.\n"
     "A kernel without a line table (cuBLAS, cuDNN) says so and shows its\n"
     "sampled SASS, the hottest instruction marked (--hot: the RANKth).\n"
     "\n"
     "--demo-activity opens (or renders) a synthetic SM/block/warp activity\n"
     "hierarchy instead of a trace, on the Activity tab, marked synthetic.\n"
     "Without a display and without --render, view says so and exits 2.\n",
     cmd_view,
     "arg:trace --kernel:value "
     "--tab:trace,summary,hotspots,flame,raster,mega,density,activity,source,"
     "ranks "
     "--sidecar:file --render:file --size:value --range:value --select:value "
     "--sm-height:value --rows:sm,block,warp --depth:auto,phase,instruction "
     "--line:value --hot:value --find:value --demo-activity"},
    /* mprof source, mprof mkprof: cmd_source.c, cmd_mkprof.c */
    {"source", "inspect or merge source-instrumentation spans",
     "usage: mprof source info FILE.source\n"
     "       mprof source merge TRACE [FILE.source] [-o OUT] [--offset NS]\n"
     "\n"
     "info prints what a .source file (written by a program built with\n"
     "producers/source/mprof_source.cuh) holds: spans per region, launches\n"
     "per kernel, overflow and the measured %globaltimer step.\n"
     "\n"
     "merge puts its spans into TRACE (or OUT), as 'mprof record source'\n"
     "does: %globaltimer is mapped onto the trace clock through the META\n"
     "anchor, each instrumented launch is matched to a CUPTI launch by\n"
     "kernel name and order (else by time), and one offset per run, the\n"
     "median of (CUPTI start - first span start), aligns them. META\n"
     "source.alignment_offset_ns and source.alignment_error_ns record it;\n"
     "--offset NS (at most 2^62 either way) imposes an offset instead.\n"
     "FILE.source defaults to TRACE.source.\n",
     cmd_source, "sub:info sub:merge arg:file -o:file --offset:value"},
    {"mkprof", "read, export and import MKPROF1.2 (Megakernels) files",
     "usage: mprof mkprof info FILE.mkprof [--instructions N]\n"
     "       mprof mkprof export TRACE -o OUT.mkprof [--kernel REGEX]\n"
     "                           [--launch N]\n"
     "       mprof mkprof import FILE.mkprof -o OUT.mprof\n"
     "\n"
     "info validates FILE and prints its configuration (instruction types,\n"
     "functional units, event types), what it holds per unit and, with\n"
     "--instructions N, the first N instructions decoded with their\n"
     "parameters and events.\n"
     "\n"
     "export writes the activity spans of TRACE as MKPROF1.2, the format of\n"
     "the Megakernels viewer: one processor per SM, one instruction per\n"
     "block that ran there, loader/consumer/storer units from the regions'\n"
     "roles. Times are relative and must fit 4.29 s: --kernel REGEX keeps\n"
     "the kernels it matches, --launch N only the N-th launch (from 0, in\n"
     "time order) of those with spans. A trace that `mkprof import` wrote\n"
     "keeps the file it came from: without --kernel and --launch, export\n"
     "gives that file back whole, byte for byte (names, parameters, event\n"
     "types, controller events and every event).\n"
     "\n"
     "import converts FILE into a trace with one region per (instruction\n"
     "type, unit) and one span per unit activity, and keeps FILE in it.\n",
     cmd_mkprof,
     "sub:info sub:export sub:import arg:trace -o:file --instructions:value "
     "--kernel:value --launch:value"},
};

const cli_command *cli_commands(size_t *count) {
  *count = sizeof commands / sizeof commands[0];
  return commands;
}

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

int cli_fail(int rc) {
  const char *msg = mprof_error_last();
  fprintf(stderr, "mprof: %s\n", *msg ? msg : mprof_status_name(rc));
  return cli_exit_status(rc);
}

int cli_exit_status(int rc) {
  switch (rc) {
  case MPROF_EFORMAT:
  case MPROF_EVERSION:
  case MPROF_ENOTFOUND:
  case MPROF_EINVAL: return CLI_EXIT_USAGE;
  default: return CLI_EXIT_FAILED;
  }
}

int cli_usage_error(const char *command, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "mprof %s: ", command);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'mprof help %s')\n", command);
  return CLI_EXIT_USAGE;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void cli_print_usage(const char *command, FILE *out) {
  const cli_command *c = find_command(command);
  if (c)
    fputs(c->usage, out);
}

int cli_parse_u64(const char *text, unsigned long long *out) {
  char *end;
  /* strtoull skips spaces and negates a '-' after them: " -1" is 2^64-1. */
  if (!text || *text < '0' || *text > '9')
    return -1;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}

int cli_valid_pm_interval(const char *text) {
  char *end;
  if (!text || !*text || *text == '-')
    return 0;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text)
    return 0;
  if (strcmp(end, "us") == 0)
    v *= 1e3;
  else if (strcmp(end, "ms") == 0)
    v *= 1e6;
  else if (*end && strcmp(end, "ns") != 0)
    return 0;
  return v >= 1e3 && v <= 1e9;
}

static void print_overview(FILE *out) {
  fprintf(out, "usage: mprof [--version] [--help] COMMAND [ARGS]\n"
               "\n"
               "mprof is a within-kernel timeline profiler for CUDA.\n"
               "\n"
               "Commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].synopsis);
  fprintf(out, "\nRun 'mprof help COMMAND' for the options of one command.\n");
}

static int run_help(int argc, char **argv) {
  if (argc < 3) {
    print_overview(stdout);
    return CLI_EXIT_OK;
  }
  const cli_command *c = find_command(argv[2]);
  if (!c) {
    fprintf(stderr, "mprof help: unknown command '%s'\n\n", argv[2]);
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  fputs(c->usage, stdout);
  return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("mprof %s (library %s, trace format %d.%d)\n", MPROF_VERSION_STRING,
           mprof_version(), MPROF_FORMAT_VERSION_MAJOR,
           MPROF_FORMAT_VERSION_MINOR);
    return CLI_EXIT_OK;
  }
  if (cli_is_help(name)) {
    print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(name, "help") == 0)
    return run_help(argc, argv);
  if (strcmp(name, "--complete-spec") == 0) {
    /* Hidden: one line per command, "NAME SPEC", for gen-completion.sh. */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
      printf("%s %s\n", commands[i].name, commands[i].complete);
    return CLI_EXIT_OK;
  }
  if (strcmp(name, "--demo-activity") == 0)
    return cmd_view(argc, argv); /* mprof --demo-activity [--render ...] */
  const cli_command *c = find_command(name);
  struct stat st;
  if (!c && name[0] != '-' && stat(name, &st) == 0 &&
      (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
    return cmd_view(argc, argv); /* mprof TRACE or mprof DIR: open it */
  if (!c) {
    if (name[0] == '-')
      fprintf(stderr, "mprof: unknown option '%s'\n\n", name);
    else
      fprintf(stderr, "mprof: unknown command '%s'\n\n", name);
    print_overview(stderr);
    return CLI_EXIT_USAGE;
  }
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      break;
    if (cli_is_help(argv[i])) {
      fputs(c->usage, stdout);
      return CLI_EXIT_OK;
    }
  }
  return c->run(argc - 1, argv + 1);
}
