#!/usr/bin/env python3
"""Mutation testing of libmprof: does the suite notice a wrong library?

Each mutant of tools/mutants.txt changes one operator or constant of
libmprof's validation, join or diagnosis. For each, this script compiles the
changed sources (and those that include a changed header) from a scratch
copy of libmprof/src, with the compile commands of an existing build
(compile_commands.json), links a mutant libmprof.so.0 from them and the
build's other objects, and runs the build's non-GPU tests against it
(LD_LIBRARY_PATH, ahead of the executables' RUNPATH). The working tree and
the build are never touched. A mutant is killed when a test fails or times
out; it survives when every test passes.

  tools/mutate.sh [--build DIR] [--list FILE] [--only ID,...] [--ci]
                  [--jobs N] [--timeout S] [--report FILE]

--ci runs only the mutants marked `ci: yes`, and only the tests named in
their `kill:` line (seconds each): the sample ctest runs as `mutation_sample`.
Without it every mutant runs: first its `kill:` tests, then, if it lived,
every non-GPU test, so that a survivor is a survivor of the whole suite.

Exit status: 0 when every mutant was killed or is a listed survivor
(`survives:` with the reason), 1 otherwise (a survivor, a mutant that no
longer applies or does not compile, tests that fail without a mutant), 77
when this build cannot be mutated (no compile_commands.json, an ASan build).
"""

import argparse
import concurrent.futures
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77

# Tests that do not run libmprof's behaviour (formatting, layering, headers,
# the man pages), or need what the scratch library cannot give (a GPU, a
# display, a browser, the sanitizers' own build, the installed tree).
EXCLUDED_LABELS = {"gpu", "gpu-selftest", "gui", "browser", "no-asan",
                   "mutation"}
EXCLUDED_NAMES = re.compile(
    r"^(clang_format|include_layers|header_.*|render_layers|"
    r"exports_only_mprof|cli_docs)$")


def parse_list(path):
    """The mutants of @path: blocks of `key: value` lines, blank-separated."""
    mutants, current = [], None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                current = None
                continue
            if line.startswith("#"):
                continue
            key, sep, value = line.partition(": ")
            if not sep and line.endswith(":"):
                key, value = line[:-1], ""
            elif not sep:
                sys.exit(f"{path}:{number}: not `key: value`: {line}")
            if key == "id":
                current = {"id": value, "line": number}
                mutants.append(current)
            elif current is None:
                sys.exit(f"{path}:{number}: `{key}` before an `id:` line")
            elif key in ("file", "find", "replace", "why", "kill", "ci",
                         "survives"):
                current[key] = value
            else:
                sys.exit(f"{path}:{number}: unknown key `{key}`")
    seen = set()
    for m in mutants:
        for key in ("file", "find", "replace", "why"):
            if key not in m:
                sys.exit(f"{path}:{m['line']}: mutant {m['id']} has no `{key}`")
        if m["id"] in seen:
            sys.exit(f"{path}:{m['line']}: mutant {m['id']} appears twice")
        seen.add(m["id"])
        # \n in find/replace stands for a line break.
        m["find"] = m["find"].replace("\\n", "\n")
        m["replace"] = m["replace"].replace("\\n", "\n")
    return mutants


class CannotMutate(Exception):
    """This build has nothing to mutate (exit 77, skipped)."""


class Library:
    """libmprof's objects in a build, and how to compile and link them."""

    def __init__(self, build):
        self.build = build
        path = os.path.join(build, "compile_commands.json")
        if not os.path.exists(path):
            raise CannotMutate(f"no {path}")
        with open(path, encoding="utf-8") as f:
            commands = json.load(f)
        self.src = os.path.realpath(os.path.join(ROOT, "libmprof", "src"))
        self.entries = {}  # source path relative to libmprof/src -> entry
        for e in commands:
            args = e.get("arguments") or shlex.split(e["command"])
            out = args[args.index("-o") + 1]
            if not re.search(r"/(mprof|mprof_writer_obj)\.dir/", out):
                continue
            source = os.path.realpath(e["file"])
            if not source.startswith(self.src + os.sep):
                continue
            if any(a.startswith("-fsanitize") for a in args):
                raise CannotMutate("a sanitizer build: mutate the plain one")
            rel = os.path.relpath(source, self.src)
            self.entries[rel] = {
                "directory": e["directory"], "args": args,
                "object": os.path.join(e["directory"], out),
            }
        if not self.entries:
            raise CannotMutate(f"no libmprof objects in {path}")

    def compile(self, rel, scratch_src, out):
        """Compile libmprof/src/@rel from @scratch_src to @out."""
        e = self.entries[rel]
        args = list(e["args"])
        args[args.index("-o") + 1] = out
        source = os.path.join(scratch_src, rel)
        args = [a if os.path.realpath(a) != os.path.join(self.src, rel)
                else source for a in args]
        # The scratch tree's headers before the tree's own.
        args = [a if a != "-I" + self.src else "-I" + scratch_src
                for a in args]
        if shutil.which("ccache") and os.environ.get("MPROF_MUTATE_CCACHE",
                                                     "1") != "0":
            args = ["ccache"] + args
        return subprocess.run(args, cwd=e["directory"], capture_output=True,
                              text=True)

    def link(self, objects, out):
        """libmprof.so.0 at @out from the build's objects, some replaced."""
        objs = [objects.get(rel, e["object"])
                for rel, e in sorted(self.entries.items())]
        compiler = next(iter(self.entries.values()))["args"][0]
        modules = ["json-c", "libelf", "zlib"]
        # The SQLite export, where the build has it.
        if any("-DMPROF_HAVE_SQLITE" in e["args"]
               for e in self.entries.values()):
            modules.append("sqlite3")
        libs = subprocess.run(["pkg-config", "--libs"] + modules,
                              capture_output=True, text=True)
        if libs.returncode:
            sys.exit("mutate: pkg-config --libs %s failed" % " ".join(modules))
        args = ([compiler, "-shared", "-fPIC", "-Wl,-soname,libmprof.so.0",
                 "-Wl,--no-undefined", "-o", out] + objs +
                shlex.split(libs.stdout) + ["-lpthread", "-lm", "-lstdc++"])
        return subprocess.run(args, capture_output=True, text=True)


def includers(src, rel):
    """Files under @src that include @rel, directly or through others."""
    graph = {}
    for dirpath, _, files in os.walk(src):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            here = os.path.relpath(path, src)
            with open(path, encoding="utf-8", errors="replace") as f:
                for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"',
                                      f.read(), re.M):
                    local = os.path.normpath(
                        os.path.join(os.path.dirname(here), inc))
                    target = local if os.path.exists(
                        os.path.join(src, local)) else inc
                    graph.setdefault(target, set()).add(here)
    found, todo = set(), [rel]
    while todo:
        for user in graph.get(todo.pop(), ()):
            if user not in found:
                found.add(user)
                todo.append(user)
    return found


class Tests:
    """The build's tests, run by this script (not ctest, which would share
    the build's Testing/ logs with a ctest that may be running this)."""

    def __init__(self, build, jobs, timeout, scratch):
        # ctest writes Testing/Temporary/LastTest.log even to list tests: it
        # lists them from a folder of its own that includes the build's, so
        # that a ctest running in the build keeps its log.
        listing = os.path.join(scratch, "ctest")
        os.makedirs(listing, exist_ok=True)
        with open(os.path.join(listing, "CTestTestfile.cmake"), "w",
                  encoding="utf-8") as f:
            f.write('subdirs("%s")\n' % build.replace("\\", "/"))
        out = subprocess.run(["ctest", "--test-dir", listing,
                              "--show-only=json-v1"],
                             capture_output=True, text=True)
        if out.returncode:
            sys.exit("mutate: ctest --show-only failed:\n" + out.stderr)
        self.tests = {}
        for t in json.loads(out.stdout)["tests"]:
            props = {p["name"]: p["value"] for p in t.get("properties", [])}
            if "command" not in t:
                continue
            self.tests[t["name"]] = {
                "command": t["command"],
                "cwd": props.get("WORKING_DIRECTORY", build),
                "env": props.get("ENVIRONMENT", []),
                "labels": set(props.get("LABELS", [])),
                "skip": props.get("SKIP_RETURN_CODE"),
                "timeout": float(props.get("TIMEOUT", timeout) or timeout),
            }
        self.jobs = jobs
        self.timeout = timeout

    def suite(self):
        return [n for n, t in self.tests.items()
                if not (t["labels"] & EXCLUDED_LABELS)
                and not EXCLUDED_NAMES.match(n)]

    def matching(self, pattern):
        return [n for n in self.tests if re.search(pattern, n)]

    def run(self, names, lib):
        """Run @names against the library in @lib, in parallel; stop at the
        first failure. Returns (failed test or None, what it said)."""
        stop = threading.Event()
        lock = threading.Lock()
        running = {}
        result = [None, ""]

        def one(name):
            if stop.is_set():
                return
            t = self.tests[name]
            env = dict(os.environ)
            for kv in t["env"]:
                k, _, v = kv.partition("=")
                env[k] = v
            env["LD_LIBRARY_PATH"] = lib + (
                ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                else "")
            p = subprocess.Popen(t["command"], cwd=t["cwd"], env=env,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT,
                                 start_new_session=True)
            with lock:
                running[name] = p
            try:
                out, _ = p.communicate(timeout=min(t["timeout"],
                                                   self.timeout))
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
                rc = "timeout"
            with lock:
                running.pop(name, None)
            if stop.is_set():
                return
            if rc != 0 and rc != t["skip"]:
                with lock:
                    if result[0] is None:
                        result[0] = name
                        result[1] = (out or b"").decode(errors="replace")
                        if rc == "timeout":
                            result[1] += "\n(timed out)"
                    stop.set()
                    for other in running.values():
                        try:
                            os.killpg(other.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass

        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(one, names))
        return result[0], result[1]


def apply(m, text):
    count = text.count(m["find"])
    if count != 1:
        return None, (f"`find` occurs {count} times in {m['file']} "
                      "(the code moved: update tools/mutants.txt)")
    if m["find"] == m["replace"]:
        return None, "`replace` is `find`"
    return text.replace(m["find"], m["replace"]), None


def main():
    ap = argparse.ArgumentParser(
        description="Mutation testing of libmprof (docs/TESTING.md).")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--list", default=os.path.join(ROOT, "tools",
                                                    "mutants.txt"))
    ap.add_argument("--only", help="mutant ids, comma-separated")
    ap.add_argument("--ci", action="store_true",
                    help="the `ci: yes` sample, against its `kill:` tests")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a test may run (a mutant may hang it)")
    ap.add_argument("--report", help="write the results as Markdown here")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    mutants = parse_list(args.list)
    if args.only:
        wanted = set(args.only.split(","))
        mutants = [m for m in mutants if m["id"] in wanted]
        missing = wanted - {m["id"] for m in mutants}
        if missing:
            sys.exit("mutate: no mutant " + ", ".join(sorted(missing)))
    if args.ci:
        mutants = [m for m in mutants if m.get("ci") == "yes"]
        for m in mutants:
            if not m.get("kill"):
                sys.exit(f"mutate: CI mutant {m['id']} names no `kill:` tests")
    try:
        lib = Library(build)
    except CannotMutate as e:
        print(f"mutate: {e}: nothing to mutate here")
        return SKIP
    scratch = os.path.join(build, "mutate")
    os.makedirs(scratch, exist_ok=True)
    lock = open(os.path.join(scratch, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one run per build at a time
    tests = Tests(build, args.jobs, args.timeout, scratch)
    scratch_src = os.path.join(scratch, "src", "libmprof", "src")
    objdir = os.path.join(scratch, "obj")
    libdir = os.path.join(scratch, "lib")
    shutil.rmtree(os.path.join(scratch, "src"), ignore_errors=True)
    shutil.copytree(lib.src, scratch_src)
    for d in (objdir, libdir):
        os.makedirs(d, exist_ok=True)
    so = os.path.join(libdir, "libmprof.so.0")

    suite = tests.suite()
    if args.ci:
        baseline = sorted({n for m in mutants
                           for n in tests.matching(m["kill"])})
    else:
        baseline = suite
    # Without a mutant, the relinked library passes what will be run.
    started = time.time()
    out = lib.link({}, so)
    if out.returncode:
        sys.exit("mutate: linking the library failed:\n" + out.stderr)
    # The tests must load the scratch library, not the build's (a RUNPATH,
    # not an RPATH, which LD_LIBRARY_PATH would not override).
    cli = os.path.join(build, "bin", "mprof")
    if shutil.which("ldd") and os.path.exists(cli):
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        ldd = subprocess.run(["ldd", cli], env=env, capture_output=True,
                             text=True).stdout
        if so not in ldd:
            sys.exit(f"mutate: {cli} does not load {so} with LD_LIBRARY_PATH "
                     "set (an RPATH?): the mutants would not be tested")
    failed, said = tests.run(baseline, libdir)
    if failed:
        print(said[-3000:])
        sys.exit(f"mutate: {failed} fails without a mutant: fix it first")
    print(f"mutate: {len(mutants)} mutants; {len(baseline)} tests pass on "
          f"the relinked library ({time.time() - started:.0f} s)")

    results = []
    for i, m in enumerate(mutants, 1):
        t0 = time.time()
        rel = os.path.relpath(os.path.realpath(os.path.join(ROOT, m["file"])),
                              lib.src)
        path = os.path.join(scratch_src, rel)
        with open(os.path.join(lib.src, rel), encoding="utf-8") as f:
            original = f.read()
        mutated, problem = apply(m, original)
        outcome, by, detail = "error", "", problem or ""
        if mutated is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutated)
            sources = ({rel} if rel.endswith(".c") else set()) | {
                r for r in includers(scratch_src, rel) if r in lib.entries}
            sources &= set(lib.entries)
            objects = {}
            for s in sorted(sources):
                obj = os.path.join(objdir, s.replace("/", "_") + ".o")
                c = lib.compile(s, scratch_src, obj)
                if c.returncode:
                    detail = f"does not compile: {c.stderr.strip()[:500]}"
                    break
                objects[s] = obj
            else:
                if not sources:
                    detail = f"{m['file']} is not compiled into libmprof"
                else:
                    c = lib.link(objects, so)
                    if c.returncode:
                        detail = f"does not link: {c.stderr.strip()[:500]}"
                    else:
                        first = tests.matching(m["kill"]) if m.get(
                            "kill") else []
                        failed, said = tests.run(first, libdir)
                        if not failed and not args.ci:
                            rest = [n for n in suite if n not in first]
                            failed, said = tests.run(rest, libdir)
                        if failed:
                            outcome, by = "killed", failed
                            detail = ""
                        else:
                            outcome = ("justified" if m.get("survives")
                                       else "survived")
                            detail = m.get("survives", "")
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        elapsed = time.time() - t0
        results.append((m, outcome, by, detail, elapsed))
        note = f"by {by}" if by else detail
        if outcome == "killed" and m.get("survives"):
            note += " (listed as a survivor: update tools/mutants.txt)"
        print(f"[{i:2}/{len(mutants)}] {m['id']:<32} {outcome:<9} "
              f"{note[:120]} ({elapsed:.1f} s)", flush=True)

    # Put the library back as it was for the next run's baseline.
    lib.link({}, so)
    counts = {k: sum(1 for r in results if r[1] == k)
              for k in ("killed", "survived", "justified", "error")}
    print(f"mutate: {counts['killed']} killed, {counts['survived']} survived, "
          f"{counts['justified']} listed survivors, {counts['error']} errors "
          f"of {len(results)} ({time.time() - started:.0f} s)")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write("| mutant | file | result | why it is a mutant |\n"
                    "|---|---|---|---|\n")
            for m, outcome, by, detail, _ in results:
                what = f"killed by `{by}`" if by else outcome
                if outcome in ("survived", "justified", "error"):
                    what += ": " + detail
                f.write(f"| `{m['id']}` | `{m['file']}` | {what} | "
                        f"{m['why']} |\n")
    bad = counts["survived"] + counts["error"]
    for m, outcome, by, detail, _ in results:
        if outcome in ("survived", "error"):
            print(f"mutate: {m['id']} {outcome}: {detail or m['why']}",
                  file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
