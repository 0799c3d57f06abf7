#!/usr/bin/env python3
"""`mprof export --format perfetto` read back by a decoder of our own.

The decoder below knows the protobuf wire format and the field numbers of
Perfetto's published .proto files (protos/perfetto/trace/: trace.proto,
trace_packet.proto, track_event/track_descriptor.proto, track_event.proto,
debug_annotation.proto, interned_data.proto, process_descriptor.proto,
thread_descriptor.proto); it replays each packet sequence's interning and
defaults as Perfetto's trace processor does, and fails on anything it
cannot account for. Every committed sample is exported and checked against
`mprof summary --json` and `mprof info`: tracks, event counts, names,
times, flows, counters and spans.

Usage: test_export_perfetto.py MPROF SAMPLES_DIR TMPDIR
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys


class DecodeError(Exception):
    pass


def varint(buf, pos):
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("varint runs past the end at byte %d" % pos)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes at byte %d" % pos)


def fields(buf):
    """(field number, wire type, value) of every field of one message."""
    pos, out = 0, []
    while pos < len(buf):
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise DecodeError("field number 0")
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            if pos + 8 > len(buf):
                raise DecodeError("fixed64 runs past the end")
            value = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire == 2:
            n, pos = varint(buf, pos)
            if pos + n > len(buf):
                raise DecodeError("field %d: %d bytes run past the end" %
                                  (field, n))
            value = bytes(buf[pos:pos + n])
            pos += n
        elif wire == 5:
            value = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise DecodeError("wire type %d" % wire)
        out.append((field, wire, value))
    return out


# Field numbers and the wire type each must have (Perfetto's .proto files).
PACKET = {6: 2, 8: 0, 10: 0, 11: 2, 12: 2, 13: 0, 59: 2, 60: 2}
ONEOF_DATA = (6, 11, 60)  # TracePacket's oneof data: one per packet
CLOCK_SNAPSHOT = {1: 2, 2: 0}
CLOCK = {1: 0, 2: 0, 3: 0, 4: 0}
BOOTTIME = 6
TRACK_DESCRIPTOR = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 8: 2}
PROCESS = {1: 0, 2: 2, 6: 2}
THREAD = {1: 0, 2: 0, 5: 2}
TRACK_EVENT = {4: 2, 9: 0, 10: 0, 44: 1, 47: 1, 48: 1}
ANNOTATION = {1: 0, 3: 0, 5: 1, 17: 0}
INTERNED = {2: 2, 3: 2, 29: 2}
SLICE_BEGIN, SLICE_END, COUNTER = 1, 2, 4


def typed(buf, schema, what):
    out = {}
    for field, wire, value in fields(buf):
        if field not in schema:
            raise DecodeError("%s: unexpected field %d" % (what, field))
        if schema[field] != wire:
            raise DecodeError("%s: field %d has wire type %d, the .proto "
                              "says %d" % (what, field, wire, schema[field]))
        out.setdefault(field, []).append(value)
    return out


def one(msg, field, default=None):
    values = msg.get(field)
    return values[-1] if values else default


def decode(data):
    """The tracks and events of a Perfetto trace, as the trace processor
    would see them."""
    tracks, events = {}, []
    sequences = {}  # id -> {"track": uuid, "interned": {table: {iid: str}}}
    last_ts = {}
    for field, wire, packet in fields(data):
        if field != 1 or wire != 2:
            raise DecodeError("Trace: field %d is not a packet" % field)
        p = typed(packet, PACKET, "TracePacket")
        seq_id = one(p, 10)
        if seq_id is None:
            raise DecodeError("a packet without trusted_packet_sequence_id")
        if sum(f in p for f in ONEOF_DATA) > 1:
            raise DecodeError("a packet with more than one of its oneof data")
        if one(p, 13, 0) & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
            sequences[seq_id] = {"track": None, "clock": None, "clocks": {},
                                 "interned": {2: {}, 3: {}, 29: {}}}
            last_ts.pop(seq_id, None)
        seq = sequences.get(seq_id)
        if seq is None:
            raise DecodeError("sequence %d used before its state was "
                              "cleared" % seq_id)
        for d in p.get(59, []):
            defaults = typed(d, {11: 2, 58: 0}, "TracePacketDefaults")
            ted = typed(one(defaults, 11, b""), {11: 0}, "TrackEventDefaults")
            seq["track"] = one(ted, 11)
            seq["clock"] = one(defaults, 58)
        for raw in p.get(6, []):
            snapshot = typed(raw, CLOCK_SNAPSHOT, "ClockSnapshot")
            for c in snapshot.get(1, []):
                clock = typed(c, CLOCK, "Clock")
                seq["clocks"][one(clock, 1)] = (one(clock, 2, 0),
                                                one(clock, 3, 0))
            if BOOTTIME not in seq["clocks"]:
                raise DecodeError("a clock snapshot without BOOTTIME")
        for raw in p.get(12, []):
            interned = typed(raw, INTERNED, "InternedData")
            for table, entries in interned.items():
                for e in entries:
                    entry = typed(e, {1: 0, 2: 2}, "interned entry")
                    iid = one(entry, 1)
                    if iid in seq["interned"][table]:
                        raise DecodeError("iid %d interned twice" % iid)
                    seq["interned"][table][iid] = one(entry, 2).decode()
        for raw in p.get(60, []):
            td = typed(raw, TRACK_DESCRIPTOR, "TrackDescriptor")
            uuid = one(td, 1)
            if uuid in tracks:
                raise DecodeError("track %d described twice" % uuid)
            track = {"uuid": uuid, "parent": one(td, 5),
                     "name": one(td, 2, b"").decode(), "kind": "track"}
            if 3 in td:
                pd = typed(one(td, 3), PROCESS, "ProcessDescriptor")
                track.update(kind="process", pid=one(pd, 1),
                             name=one(pd, 6, b"").decode())
            if 4 in td:
                th = typed(one(td, 4), THREAD, "ThreadDescriptor")
                track.update(kind="thread", pid=one(th, 1), tid=one(th, 2),
                             name=one(th, 5, b"").decode())
            if 8 in td:
                track["kind"] = "counter"
            tracks[uuid] = track
        if 11 in p:
            te = typed(one(p, 11), TRACK_EVENT, "TrackEvent")
            ts = one(p, 8)
            if ts is None:
                raise DecodeError("a track event without a timestamp")
            clock = seq["clock"]
            if clock is not None:
                if clock not in seq["clocks"]:
                    raise DecodeError("clock %d was never defined" % clock)
                base, incremental = seq["clocks"][clock]
                if incremental:  # a delta from the sequence's last value
                    ts += seq.get("raw", base)
                    seq["raw"] = ts
                # map onto BOOTTIME, the trace's clock
                ts += seq["clocks"][BOOTTIME][0] - base
            if ts < last_ts.get(seq_id, 0):
                raise DecodeError("time goes back on sequence %d" % seq_id)
            last_ts[seq_id] = ts
            names = seq["interned"]
            event = {"ts": ts, "type": one(te, 9), "track": seq["track"],
                     "flows": te.get(47, []), "ends_flows": te.get(48, []),
                     "args": {}, "seq": seq_id}
            if 10 in te:
                iid = one(te, 10)
                if iid not in names[2]:
                    raise DecodeError("name iid %d not interned" % iid)
                event["name"] = names[2][iid]
            if 44 in te:
                event["value"] = struct.unpack("<d",
                                               struct.pack("<Q", one(te, 44)))[0]
            for raw in te.get(4, []):
                a = typed(raw, ANNOTATION, "DebugAnnotation")
                name = names[3].get(one(a, 1))
                if name is None:
                    raise DecodeError("annotation name iid not interned")
                if 17 in a:
                    value = names[29].get(one(a, 17))
                    if value is None:
                        raise DecodeError("string value iid not interned")
                elif 5 in a:
                    value = struct.unpack("<d", struct.pack("<Q", one(a, 5)))[0]
                else:
                    value = one(a, 3)
                event["args"][name] = value
            events.append(event)
    for e in events:
        if e["track"] not in tracks:
            raise DecodeError("an event on undescribed track %r" % e["track"])
    for t in tracks.values():
        if t["parent"] is not None and t["parent"] not in tracks:
            raise DecodeError("track %d has an unknown parent" % t["uuid"])
    return tracks, events


def slices(tracks, events):
    """Slices per track from BEGIN/END pairs; fails on an unbalanced track."""
    out, stacks = [], {}
    for e in events:
        if e["type"] == SLICE_BEGIN:
            stacks.setdefault(e["track"], []).append(e)
        elif e["type"] == SLICE_END:
            stack = stacks.get(e["track"])
            if not stack:
                raise DecodeError("an END with nothing open on %s" %
                                  tracks[e["track"]]["name"])
            begin = stack.pop()
            if e["ts"] < begin["ts"]:
                raise DecodeError("a slice ends before it begins")
            out.append(dict(begin, dur=e["ts"] - begin["ts"]))
    for uuid, stack in stacks.items():
        if stack:
            raise DecodeError("%d slices left open on %s" %
                              (len(stack), tracks[uuid]["name"]))
    return out


mprof, samples, tmp_root = sys.argv[1:4]
tmp = os.path.join(tmp_root, "export_perfetto.%d" % os.getpid())
os.makedirs(tmp, exist_ok=True)
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def run(*args):
    return subprocess.run([mprof, *args], capture_output=True, text=True)


def info_sections(path):
    m = re.search(r"^sections\s+(.*)$", run("info", path).stdout, re.M)
    return {k: int(v) for k, v in
            (kv.split("=") for kv in m.group(1).split())} if m else {}


def ancestors(tracks, uuid):
    names = []
    while uuid is not None:
        names.append(tracks[uuid]["name"])
        uuid = tracks[uuid]["parent"]
    return names


def check_sample(name):
    trace = os.path.join(samples, name)
    out = os.path.join(tmp, name + ".pftrace")
    r = run("export", trace, "-o", out)  # perfetto is the default
    if r.returncode != 0:
        fail("%s: export exited %d: %s" % (name, r.returncode, r.stderr))
        return
    m = re.search(r"wrote .*: (\d+) track events", r.stdout)
    with open(out, "rb") as f:
        data = f.read()
    try:
        tracks, events = decode(data)
        sl = slices(tracks, events)
    except DecodeError as e:
        fail("%s: %s" % (name, e))
        return
    if not m or int(m.group(1)) != len(events):
        fail("%s: the recap %r, the file has %d events" %
             (name, r.stdout, len(events)))
    summary = json.loads(run("summary", "--json", "--all", trace).stdout)
    sections = info_sections(trace)

    kernels = [s for s in sl if "kernel" in s["args"]]
    if len(kernels) != summary["trace"]["launches"]:
        fail("%s: %d kernel slices, summary counts %d launches" %
             (name, len(kernels), summary["trace"]["launches"]))
    total = sum(s["dur"] for s in kernels)
    if total != summary["trace"]["kernel_time_ns"]:
        fail("%s: kernel slices last %d ns, summary says %d" %
             (name, total, summary["trace"]["kernel_time_ns"]))
    per_kernel = {}
    for s in kernels:
        per_kernel[s["args"]["kernel"]] = per_kernel.get(s["args"]["kernel"],
                                                         0) + 1
    want = {}
    for k in summary["kernels"]["items"]:
        want[k["name"]] = want.get(k["name"], 0) + k["launches"]
    if per_kernel != want:
        fail("%s: launches per kernel differ from summary" % name)
    verdicts = {k["name"]: k["verdict"]["text"] for k in summary["kernels"]["items"]
                if "verdict" in k}
    for s in kernels:
        v = verdicts.get(s["args"]["kernel"])
        if v is not None and s["args"].get("verdict") != v:
            fail("%s: %s carries verdict %r, summary %r" %
                 (name, s["name"], s["args"].get("verdict"), v))
            break
    # Kernels sit on stream tracks under their GPU.
    for s in kernels[:50]:
        path = ancestors(tracks, s["track"])
        if not path[0].startswith("stream ") or \
                not path[-1].startswith("GPU "):
            fail("%s: a kernel on track %r" % (name, path))
            break
    # The verdict sentence is interned: sent once per sequence, not per
    # launch.
    sentences = set(verdicts.values())
    for v in sentences:
        count = data.count(v.encode())
        streams = len({s["seq"] for s in kernels})
        if count > streams:
            fail("%s: the verdict %r is written %d times for %d stream "
                 "tracks" % (name, v[:40], count, streams))
            break

    ranges = [s for s in sl if tracks[s["track"]]["kind"] == "thread" or
              "thread" in tracks[s["track"]]["name"]]
    calls = [s for s in ranges if s["name"].startswith(("cuda", "cu"))]
    if len(ranges) != sections.get("RANGES", 0) + sections.get("API_CALLS", 0):
        fail("%s: %d slices on host threads, info counts %d ranges and %d "
             "calls" % (name, len(ranges), sections.get("RANGES", 0),
                        sections.get("API_CALLS", 0)))
    for s in ranges:
        t = tracks[s["track"]]
        host = tracks.get(t["parent"]) if t["kind"] != "thread" else t
        if t["kind"] == "thread" and t["pid"] is None:
            fail("%s: thread track without a pid" % name)
            break
    starts = {f for e in events for f in e["flows"]}
    ends = {f for e in events for f in e["ends_flows"]}
    if sections.get("API_CALLS") and (not starts or starts != ends):
        fail("%s: %d flows start, %d end; every flow needs both ends" %
             (name, len(starts), len(ends)))
    if sections.get("API_CALLS") and not calls:
        fail("%s: no API call slices" % name)

    counters = [t for t in tracks.values() if t["kind"] == "counter"]
    if len(counters) != sections.get("PM_METRICS", 0):
        fail("%s: %d counter tracks, info counts %d PM metrics" %
             (name, len(counters), sections.get("PM_METRICS", 0)))
    values = [e for e in events if e["type"] == COUNTER]
    if counters and not values:
        fail("%s: counter tracks without values" % name)
    if any("value" not in e for e in values):
        fail("%s: a counter event without a value" % name)

    spans = [s for s in sl if tracks[s["track"]]["name"].startswith("SM ")]
    if len(spans) != sections.get("SPANS", 0):
        fail("%s: %d span slices, info counts %d spans" %
             (name, len(spans), sections.get("SPANS", 0)))
    for s in spans[:50]:
        if "SMs" not in ancestors(tracks, s["track"])[-1]:
            fail("%s: an SM track outside its GPU's SMs" % name)
            break
    # Times: every kernel starts where the Trace Event export puts it
    # (relative to the first kernel; that export's ts are exact us.ns).
    chrome = os.path.join(tmp, name + ".json")
    if run("export", trace, "--format", "chrome", "-q", "-o",
           chrome).returncode == 0:
        with open(chrome, encoding="utf-8") as f:
            doc = json.load(f, parse_float=str)
        want = sorted(int(str(e["ts"]).replace(".", ""))
                      for e in doc["traceEvents"] if e.get("cat") == "kernel")
        got = sorted(s["ts"] for s in kernels)
        if want and got and [w - want[0] for w in want] != \
                [g - got[0] for g in got]:
            fail("%s: kernel start times differ from the chrome export" %
                 name)
    processes = [t for t in tracks.values() if t["kind"] == "process"]
    if not any(t["name"] == name for t in processes):
        fail("%s: no host process track named after the trace" % name)
    return len(data)


names = sorted(f for f in os.listdir(samples) if f.endswith(".mprof"))
checked = [check_sample(n) for n in names]

# The decoder fails on a cut file, and on bytes that are no protobuf.
gemm = os.path.join(samples, "gemm.mprof")
path = os.path.join(tmp, "gemm.pftrace")
if run("export", gemm, "--format", "perfetto", "-q", "-o", path).returncode:
    fail("gemm export failed")
else:
    with open(path, "rb") as f:
        data = f.read()
    for broken in (data[:len(data) - 3], data[:10] + b"\xff" * 11):
        try:
            decode(broken)
            fail("the decoder accepted a broken file")
        except DecodeError:
            pass
# --kernel keeps the matching kernels' launches; copies stay.
kpath = os.path.join(tmp, "k.pftrace")
if run("export", gemm, "-k", "gemm", "-q", "-o", kpath).returncode:
    fail("export -k gemm failed")
else:
    with open(kpath, "rb") as f:
        tracks, events = decode(f.read())
    kept = {s["args"]["kernel"] for s in slices(tracks, events)
            if "kernel" in s["args"]}
    if not kept or any("gemm" not in n for n in kept):
        fail("export -k gemm kept %r" % kept)

# A run of several traces is one file: each trace's GPUs say which trace.
set_path = os.path.join(tmp, "set.pftrace")
demo = os.path.join(samples, "demo.mprof")
if run("export", demo, gemm, "-q", "-o", set_path).returncode:
    fail("export of a set failed")
else:
    with open(set_path, "rb") as f:
        tracks, events = decode(f.read())
    launches = sum(json.loads(run("summary", "--json", p).stdout)
                   ["trace"]["launches"] for p in (demo, gemm))
    kernels = [s for s in slices(tracks, events) if "kernel" in s["args"]]
    gpus = sorted(t["name"] for t in tracks.values()
                  if t["kind"] == "process" and t["name"].startswith("GPU"))
    if len(kernels) != launches:
        fail("the set holds %d kernel slices for %d launches" %
             (len(kernels), launches))
    if not gpus or not all(g.endswith((" — demo.mprof", " — gemm.mprof"))
                           for g in gpus):
        fail("the set's GPU tracks do not name their traces: %r" % gpus)
    flows = [f for e in events for f in e["flows"]]
    if len(flows) != len(set(flows)):
        fail("flow ids repeat across the set")

# protoc, where installed (tools/install-deps.sh does), decodes the file
# without a schema: a second, independent reader of the wire format.
protoc = shutil.which("protoc")
if protoc:
    with open(path, "rb") as f:
        r = subprocess.run([protoc, "--decode_raw"], stdin=f,
                           capture_output=True)
    text = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        fail("protoc --decode_raw rejects the file: %s" % r.stderr[:200])
    with open(path, "rb") as f:
        _, gemm_events = decode(f.read())
    if text.count("\n  11 {") != len(gemm_events):
        fail("protoc sees %d track events, our decoder %d" %
             (text.count("\n  11 {"), len(gemm_events)))
else:
    print("note: protoc not installed; the second decoder did not run")

# chrome keeps the Trace Event JSON.
r = run("export", gemm, "--format", "chrome", "-q", "-o",
        os.path.join(tmp, "gemm.json"))
with open(os.path.join(tmp, "gemm.json"), encoding="utf-8") as f:
    if r.returncode or json.load(f).get("displayTimeUnit") != "ns":
        fail("--format chrome no longer writes Trace Event JSON")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("Perfetto export: all checks passed on %d samples" % len(names))
