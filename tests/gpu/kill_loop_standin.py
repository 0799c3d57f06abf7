#!/usr/bin/env python3
"""A stand-in for kill_loop_train.py under `mprof record`, for
tests/gpu/kill_loop.sh's dry run (KILL_LOOP_DRY_RUN=1) on a machine without
a GPU: it streams a capture as the CUPTI producer does, through libmprof's
public writer (ctypes), and runs until it is killed.

- a module with real code (a cubin, e.g. tests/data/nvdisasm/
  nvdisasm-kernels.cubin) is written whole at the first checkpoint after
  its kernel first ran, as the producer streams used modules;
- every step: a launch of _Z5callkPf and its API call, PC samples of
  _Z3shkPfi (summed per checkpoint, as the producer does), and NVTX ranges
  "train" > "step N" > "forward" / "backward" / "optimizer";
- every 0.2 s a checkpoint, with the devices and the NVTX ranges open at
  that moment (DEVICES and OPEN_RANGES snapshots).

Prints "step N" (flushed) per step, like the real loop.

KILL_LOOP_BREAK=code leaves the module out, =ranges the open ranges,
=samples the PC samples: what a producer without those would write;
=crash dies of SIGSEGV at its third step, before the kill: so that the
checks are seen to fail.

usage: kill_loop_standin.py LIBMPROF CUBIN OUTPUT

SPDX-License-Identifier: MIT
"""
import ctypes
import os
import signal
import struct
import sys
import time

SECTION = {"DEVICES": 3, "STREAMS": 4, "KERNELS": 5, "SHAPES": 6,
           "LAUNCHES": 7, "RANGES": 9, "STALL_REASONS": 12,
           "PC_SAMPLES": 13, "API_CALLS": 19, "OPEN_RANGES": 22}
NONE = 0xFFFFFFFF
KEPT_WHOLE = 0x1
RANGE_OPEN = 0x1
CRC = 0x5150C0DE
THREAD = 4242


class Writer:
    def __init__(self, lib, path):
        self.lib = lib
        lib.mprof_writer_open.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.c_char_p, ctypes.c_void_p]
        lib.mprof_writer_string.restype = ctypes.c_uint32
        lib.mprof_writer_string.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        for fn in (lib.mprof_writer_append, lib.mprof_writer_intern):
            fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                           ctypes.c_uint32, ctypes.c_char_p]
        lib.mprof_writer_snapshot.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                              ctypes.c_char_p, ctypes.c_size_t]
        lib.mprof_writer_cubin.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                           ctypes.c_char_p, ctypes.c_size_t]
        lib.mprof_writer_checkpoint.argtypes = [ctypes.c_void_p,
                                                ctypes.c_uint64]
        lib.mprof_writer_meta.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                          ctypes.c_char_p]
        self.w = ctypes.c_void_p()
        if lib.mprof_writer_open(ctypes.byref(self.w), path.encode(), None):
            raise SystemExit(f"kill_loop_standin: cannot open {path}")

    def string(self, s):
        return self.lib.mprof_writer_string(self.w, s.encode())

    def add(self, section, record, intern=False):
        index = ctypes.c_uint32()
        fn = self.lib.mprof_writer_intern if intern else \
            self.lib.mprof_writer_append
        if fn(self.w, ctypes.byref(index), SECTION[section], record):
            raise SystemExit(f"kill_loop_standin: cannot add to {section}")
        return index.value

    def snapshot(self, section, records):
        data = b"".join(records)
        self.lib.mprof_writer_snapshot(self.w, SECTION[section], data,
                                       len(records))

    def cubin(self, crc, blob):
        rec = struct.pack("<QQQQII", crc, 0, 0, len(blob), 0, KEPT_WHOLE)
        self.lib.mprof_writer_cubin(self.w, rec, blob, len(blob))

    def checkpoint(self, now):
        self.lib.mprof_writer_checkpoint(self.w, now)


def range_record(w, name, start, end, depth, flags=0):
    return struct.pack("<QQIIIIII", start, end, w.string(name), 0, THREAD,
                       depth, 0, flags)


def main():
    broken = os.environ.get("KILL_LOOP_BREAK", "")
    lib = ctypes.CDLL(sys.argv[1])
    cubin = open(sys.argv[2], "rb").read()
    w = Writer(lib, sys.argv[3])
    lib.mprof_writer_meta(w.w, b"capture.mode", b"kill_loop_standin")
    lib.mprof_writer_meta(w.w, b"clock", b"CLOCK_MONOTONIC")
    device = struct.pack("<18IQI3I", 0, w.string("stand-in GPU"), 9, 0, 132,
                         32, 1024, 2048, 32, 64, 65536, 65536, 232448, 233472,
                         1980000, 2619000, 5120, 52428800, 80 << 30, 0,
                         0, 0, 0)
    stream = w.add("STREAMS", struct.pack("<4I", 0, 1, 7, 0), intern=True)
    kernel = w.add("KERNELS", struct.pack("<IIQIIIIII", w.string("_Z5callkPf"),
                                          0, CRC, NONE, 0, 32, 0, 0, 0),
                   intern=True)
    shape = w.add("SHAPES", struct.pack("<12I", kernel, 132, 1, 1, 256, 1, 1,
                                        0, 0, 0, 0, 0), intern=True)
    w.add("STALL_REASONS", struct.pack(
        "<4I", 0, 0, w.string("smsp__pcsamp_warps_issue_stalled_selected"),
        0))
    launch_call = w.string("cudaLaunchKernel")
    sampled = w.string("_Z3shkPfi")
    now = time.monotonic_ns
    train_start = now()
    open_ranges = [("train", train_start, 0)]
    w.snapshot("DEVICES", [device])
    w.checkpoint(now())
    streamed = False
    samples = 0
    last_checkpoint = now()
    step = corr = 0
    while True:
        step += 1
        if broken == "crash" and step == 3:
            os.kill(os.getpid(), signal.SIGSEGV)  # dies before its kill
        step_start = now()
        open_ranges.append((f"step {step}", step_start, 1))
        for phase in ("forward", "backward", "optimizer"):
            start = now()
            open_ranges.append((phase, start, 2))
            corr += 1
            call = now()
            w.add("API_CALLS", struct.pack("<QQIIII", call, call + 2000, corr,
                                           THREAD, launch_call, 1))
            w.add("LAUNCHES", struct.pack("<QQIIIIQ", call + 3000,
                                          call + 800000, shape, stream, corr,
                                          0, 0))
            samples += 50
            time.sleep(0.005)
            if now() - last_checkpoint >= 200_000_000:
                # What a checkpoint of the producer commits: the samples of
                # the last interval, the module now used, the ranges open.
                if broken != "samples":
                    w.add("PC_SAMPLES", struct.pack(
                        "<QIIIIIIII", CRC, sampled, 21, 0x40, 0, samples, 0,
                        0, step))
                samples = 0
                if not streamed and broken != "code":
                    w.cubin(CRC, cubin)
                    streamed = True
                if broken != "ranges":
                    w.snapshot("OPEN_RANGES",
                               [range_record(w, name, begin, begin, depth,
                                             RANGE_OPEN)
                                for name, begin, depth in open_ranges])
                w.snapshot("DEVICES", [device])
                last_checkpoint = now()
                w.checkpoint(last_checkpoint)
            open_ranges.pop()
            w.add("RANGES", range_record(w, phase, start, now(), 2))
        open_ranges.pop()
        w.add("RANGES", range_record(w, f"step {step}", step_start, now(), 1))
        print(f"step {step}", flush=True)

if __name__ == "__main__":
    main()
