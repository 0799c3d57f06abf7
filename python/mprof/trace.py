"""Traces opened through libmprof, and their records as pandas DataFrames."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _columns as col
from ._lib import MprofError, check, ffi, lib, path_bytes, text

PathLike = Union[str, "os.PathLike[str]"]

# Section types (format.h, mprof_section_type); values are pinned.
_SECTIONS = {
    "META": (2, "mprof_meta_record"),
    "DEVICES": (3, "mprof_device_record"),
    "STREAMS": (4, "mprof_stream_record"),
    "KERNELS": (5, "mprof_kernel_record"),
    "SHAPES": (6, "mprof_shape_record"),
    "LAUNCHES": (7, "mprof_launch_record"),
    "MEMOPS": (8, "mprof_memop_record"),
    "RANGES": (9, "mprof_range_record"),
    "REGIONS": (10, "mprof_region_record"),
    "SPANS": (11, "mprof_span_record"),
    "STALL_REASONS": (12, "mprof_stall_reason_record"),
    "PC_SAMPLES": (13, "mprof_pc_sample_record"),
    "PM_METRICS": (17, "mprof_pm_metric_record"),
    "PM_SAMPLES": (18, "mprof_pm_sample_record"),
    "API_CALLS": (19, "mprof_api_call_record"),
}

_MEMCPY, _MEMSET = 1, 2


class Trace:
    """A trace (``.mprof``), a Megakernels ``.mkprof`` file, or a set of
    traces of one run opened as one, as ``mprof summary`` opens them.

    Use :func:`mprof.open`. The DataFrame methods copy what they return, so
    the frames stay valid after :meth:`close`. Times are nanoseconds on the
    trace's clock (``uint64``).
    """

    def __init__(self, paths: Sequence[PathLike],
                 sidecar: Union[None, bool, PathLike] = None) -> None:
        if not paths:
            raise ValueError("mprof.open needs at least one path")
        self._trace: Any = ffi.NULL
        self._sidecar: Any = ffi.NULL
        self._join: Any = ffi.NULL
        self._join_opts: Any = None
        self._diagnosis: Any = None
        self._sidecar_path: Optional[bytes] = None
        self.paths: List[str] = [os.fspath(p) for p in paths]
        self._open(sidecar)

    # ---- opening and closing ------------------------------------------

    def _open(self, sidecar: Union[None, bool, PathLike]) -> None:
        out = ffi.new("mprof_trace **")
        if len(self.paths) == 1:
            check(lib.mprof_mkprof_open_trace(out, path_bytes(self.paths[0]),
                                              ffi.NULL))
            self._trace = out[0]
        else:
            opened = []
            try:
                for p in self.paths:
                    one = ffi.new("mprof_trace **")
                    check(lib.mprof_mkprof_open_trace(one, path_bytes(p),
                                                      ffi.NULL))
                    opened.append(one[0])
                arr = ffi.new("mprof_trace *[]", opened)
                name = f"{self.paths[0]} + {len(self.paths) - 1} more"
                check(lib.mprof_trace_open_merged(out, arr, len(opened),
                                                  name.encode()))
                self._trace = out[0]
            finally:
                for t in opened:
                    lib.mprof_trace_free(t)
        self._load_sidecar(sidecar)

    def _load_sidecar(self, sidecar: Union[None, bool, PathLike]) -> None:
        if sidecar is False:
            return
        if sidecar is None or sidecar is True:
            buf = ffi.new("char[]", 4096)
            if lib.mprof_sidecar_path_of(self._trace, buf, 4096) != 0:
                if sidecar is True:
                    raise MprofError(f"{self.path}: no sidecar "
                                     f"({self.path}.pc.json) beside it",
                                     -6, "ENOTFOUND")
                return
            spath = ffi.string(buf)
        else:
            spath = path_bytes(sidecar)
        out = ffi.new("mprof_sidecar **")
        check(lib.mprof_sidecar_load(out, spath))
        self._sidecar_path = spath
        self._sidecar = out[0]
        # SASS that `mprof record` left for the first reader, as the CLI
        # does: from the code kept in the trace whose sidecar this is.
        owner = spath[:-8] if spath.endswith(b".pc.json") else \
            path_bytes(self.paths[0])
        check(lib.mprof_sass_complete(self._sidecar, owner, spath, ffi.NULL,
                                      ffi.NULL))

    def close(self) -> None:
        """Free the trace and everything built on it. Idempotent."""
        if self._diagnosis is not None:
            self._diagnosis.close()
            self._diagnosis = None
        if self._join != ffi.NULL:
            lib.mprof_join_free(self._join)
            self._join = ffi.NULL
        if self._sidecar != ffi.NULL:
            lib.mprof_sidecar_free(self._sidecar)
            self._sidecar = ffi.NULL
        if self._trace != ffi.NULL:
            lib.mprof_trace_free(self._trace)
            self._trace = ffi.NULL

    def __enter__(self) -> "Trace":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._trace == ffi.NULL else \
            f"{len(self._section('LAUNCHES'))} launches"
        return f"<mprof.Trace {self.path!r}: {state}>"

    # ---- what the trace is ----------------------------------------------

    def _handle(self) -> Any:
        if self._trace == ffi.NULL:
            raise ValueError("the trace is closed")
        return self._trace

    @property
    def path(self) -> str:
        """The path the trace was opened from (a set: its name)."""
        return text(lib.mprof_trace_path(self._handle()))

    @property
    def has_sidecar(self) -> bool:
        """Whether a ``.pc.json`` sidecar (SASS, source lines) was loaded."""
        return self._sidecar != ffi.NULL

    def meta(self, key: str) -> Optional[str]:
        """The value of META key @p key (``"capture.mode"``), or None."""
        p = lib.mprof_trace_meta(self._handle(), key.encode())
        return None if p == ffi.NULL else text(p)

    @property
    def process_count(self) -> int:
        """Processes the trace holds: 1, or N for a set of N."""
        return int(lib.mprof_trace_process_count(self._handle()))

    def _section(self, name: str) -> np.ndarray:
        stype, ctype = _SECTIONS[name]
        count = ffi.new("size_t *")
        ptr = lib.mprof_trace_section(self._handle(), stype, count)
        return col.records(ptr, int(count[0]), ctype)

    def _strings(self, refs: np.ndarray) -> np.ndarray:
        t = self._handle()
        return col.lookup(refs, lambda r: text(lib.mprof_trace_string(t, r)))

    def _join_handle(self) -> Any:
        if self._join == ffi.NULL:
            opts = ffi.new("mprof_join_options *")
            opts.version = 3
            opts.sidecar = self._sidecar
            opts.flags = 0
            # A set's traces are joined on these many threads at once; the
            # result does not depend on it.
            opts.threads = os.cpu_count() or 1
            out = ffi.new("mprof_join **")
            check(lib.mprof_join_build(out, self._handle(), opts))
            self._join, self._join_opts = out[0], opts
        return self._join

    def _stream_columns(self, stream: np.ndarray) -> Dict[str, Any]:
        """Device ordinal, context and stream id of STREAMS indices."""
        streams = self._section("STREAMS")
        devices = self._section("DEVICES")
        dev_ids = np.append(col.column(devices, "id").astype(np.int64), -1)
        sdev = col.column(streams, "device").astype(np.int64)
        sdev = np.where(sdev == col.INDEX_NONE, len(devices), sdev)
        stream_device = dev_ids[sdev] if len(streams) else \
            np.empty(0, np.int64)
        return {
            "device_id": stream_device[stream],
            "context_id": col.column(streams, "context_id")[stream],
            "stream_id": col.column(streams, "stream_id")[stream],
        }

    # ---- DataFrames ------------------------------------------------------

    def devices(self) -> pd.DataFrame:
        """One row per GPU (DEVICES): ``id`` (CUDA ordinal), ``name``,
        ``cc`` ("9.0"), ``sm_count``, clocks in kHz, memory and the
        per-SM and per-block limits the occupancy is computed from."""
        d = self._section("DEVICES")
        cc = [f"{a}.{b}" for a, b in zip(col.column(d, "cc_major").tolist(),
                                         col.column(d, "cc_minor").tolist())]
        df = pd.DataFrame({"id": col.column(d, "id"),
                           "name": self._strings(col.column(d, "name")),
                           "cc": np.array(cc, dtype=object)})
        for f in ["sm_count", "warp_size", "core_clock_khz",
                  "memory_clock_khz", "memory_bus_width", "l2_size",
                  "global_memory", "max_threads_per_block",
                  "max_threads_per_sm", "max_blocks_per_sm",
                  "max_warps_per_sm", "max_regs_per_block",
                  "max_regs_per_sm", "max_shared_per_block",
                  "max_shared_per_sm"]:
            df[f] = col.column(d, f)
        return df.rename_axis("device")

    def kernels(self) -> pd.DataFrame:
        """One row per kernel (a mangled name on one GPU), dominant first,
        with the launch statistics of ``mprof summary``: ``launches``,
        ``total_ns``, ``mean_ns``, ``median_ns``, ``p90_ns``, ``share`` of
        all kernel time, the idle gaps before its launches, and its PC
        ``samples``; ``mprof_own`` marks mprof's own kernels (its timer
        probe), which come after the program's. The index is the kernel
        number the other frames use.
        """
        join = self._join_handle()
        n = int(lib.mprof_join_kernel_count(join))
        fields = ["launches", "total_ns", "min_ns", "max_ns", "median_ns",
                  "p90_ns", "mean_ns", "stddev_ns", "share", "device_share",
                  "gap_count", "gap_median_ns", "gap_mean_ns", "samples",
                  "not_issued"]
        rows: Dict[str, List[Any]] = {k: [] for k in
                                      ["name", "short_name", "mangled",
                                       "device_id", "mprof_own"] + fields}
        # One row per kernel: a trace has few kernels (tens to hundreds).
        for i in range(n):
            k = lib.mprof_join_kernel(join, i)
            rows["name"].append(text(k.name))
            # Unique within the trace, as summary and the viewer show it.
            rows["short_name"].append(text(lib.mprof_join_kernel_short(join,
                                                                       i)))
            rows["mangled"].append(text(k.mangled))
            rows["device_id"].append(
                pd.NA if k.device_id == col.INDEX_NONE else int(k.device_id))
            for f in fields:
                rows[f].append(getattr(k, f))
            # mprof's own (its timer probe): ranked after the program's.
            rows["mprof_own"].append(bool(k.flags & col.KERNEL_MPROF_OWN))
        df = pd.DataFrame(rows, index=pd.RangeIndex(n, name="kernel"))
        df["device_id"] = df["device_id"].astype("Int64")
        for f in ["launches", "total_ns", "min_ns", "max_ns", "median_ns",
                  "p90_ns", "gap_count", "gap_median_ns", "samples",
                  "not_issued"]:
            df[f] = df[f].astype(np.uint64)
        return df

    def _shape_kernels(self) -> np.ndarray:
        """The join's kernel of each SHAPES record (-1 when unused)."""
        join = self._join_handle()
        launches = self._section("LAUNCHES")
        shapes = self._section("SHAPES")
        if len(launches) == 0 or len(shapes) == 0:
            return np.full(len(shapes), -1, dtype=np.int64)
        shape_record = col.column(shapes, "kernel").astype(np.int64)
        record_of_launch = shape_record[col.column(launches, "shape")]
        # A KERNELS record (one function on one device) is one kernel of
        # the join, so the first launch of each record places all of
        # them: one call per kernel function, not per launch or shape.
        records, first = np.unique(record_of_launch, return_index=True)
        kernel_of_record = np.full(int(shape_record.max()) + 1, -1,
                                   dtype=np.int64)
        for r, li in zip(records.tolist(), first.tolist()):
            k = lib.mprof_join_launch_kernel(join, li)
            kernel_of_record[r] = -1 if k == col.INDEX_NONE else k
        return kernel_of_record[shape_record]
        shape_of = col.column(launches, "shape")
        # The first launch of each shape stands for all of them: a shape
        # belongs to one KERNELS record, which is one kernel of the join.
        uniq, first = np.unique(shape_of, return_index=True)
        for s, li in zip(uniq.tolist(), first.tolist()):
            k = lib.mprof_join_launch_kernel(join, li)
            out[s] = -1 if k == col.INDEX_NONE else k
        return out

    def launches(self) -> pd.DataFrame:
        """One row per kernel launch (LAUNCHES), in the trace's order:
        ``kernel`` (index into :meth:`kernels`), ``name``, ``start``,
        ``end``, ``duration_ns``, where it ran (``device_id``,
        ``context_id``, ``stream_id``), its ``correlation_id`` and graph
        ids, and its shape (``grid_x`` ... ``block_z``, ``dynamic_shared``).
        """
        lv = self._section("LAUNCHES")
        shapes = self._section("SHAPES")
        shape = col.column(lv, "shape").astype(np.int64)
        start, end = col.column(lv, "start"), col.column(lv, "end")
        kernel = self._shape_kernels()[shape] if len(lv) else \
            np.empty(0, np.int64)
        kdf_names = self._kernel_names()
        df = pd.DataFrame({
            "kernel": kernel,
            "name": kdf_names[kernel] if len(lv) else
            np.empty(0, dtype=object),
            "start": start, "end": end,
            "duration_ns": end - start,
            **self._stream_columns(col.column(lv, "stream").astype(np.int64)),
            "stream": col.column(lv, "stream"),
            "correlation_id": col.column(lv, "correlation_id"),
            "graph_id": col.column(lv, "graph_id"),
            "graph_node_id": col.column(lv, "graph_node_id"),
        })
        grid, block = col.column(shapes, "grid"), col.column(shapes, "block")
        for i, axis in enumerate("xyz"):
            df[f"grid_{axis}"] = grid[shape, i] if len(lv) else []
        for i, axis in enumerate("xyz"):
            df[f"block_{axis}"] = block[shape, i] if len(lv) else []
        df["dynamic_shared"] = col.column(shapes, "dynamic_shared")[shape] \
            if len(lv) else []
        df.index.name = "launch"
        return df

    def _kernel_names(self) -> np.ndarray:
        join = self._join_handle()
        n = int(lib.mprof_join_kernel_count(join))
        names = np.empty(n + 1, dtype=object)
        for i in range(n):
            names[i] = text(lib.mprof_join_kernel(join, i).name)
        names[n] = ""  # kernel -1: a launch the join could not place
        return names

    def _memops(self, kind: int) -> pd.DataFrame:
        mv = self._section("MEMOPS")
        keep = col.column(mv, "kind") == kind
        m = mv[keep]
        start, end = col.column(m, "start"), col.column(m, "end")
        stream = col.column(m, "stream").astype(np.int64)
        df = pd.DataFrame({
            "start": start, "end": end, "duration_ns": end - start,
            "bytes": col.column(m, "bytes"),
            **self._stream_columns(stream),
            "stream": col.column(m, "stream"),
            "correlation_id": col.column(m, "correlation_id"),
        }, index=pd.Index(np.flatnonzero(keep), name="memop"))
        if kind == _MEMCPY:
            df.insert(0, "kind", col.lookup(
                col.column(m, "copy_kind"),
                lambda k: text(lib.mprof_copy_kind_name(k))))
            df["src_device"] = col.index_or_nan(col.column(m, "src_device"))
            df["dst_device"] = col.index_or_nan(col.column(m, "dst_device"))
        else:
            df["value"] = col.column(m, "value")
        return df

    def copies(self) -> pd.DataFrame:
        """One row per memcpy (MEMOPS of kind memcpy): ``kind`` ("HtoD",
        "DtoH", ...), ``start``, ``end``, ``duration_ns``, ``bytes``, where
        it ran, ``correlation_id``, and the source and destination device
        ordinals (NA for the host)."""
        return self._memops(_MEMCPY)

    def memsets(self) -> pd.DataFrame:
        """One row per memset: ``start``, ``end``, ``duration_ns``,
        ``bytes``, where it ran, ``correlation_id`` and the ``value``."""
        return self._memops(_MEMSET)

    # ---- host side: NVTX ranges and API calls -----------------------------

    def ranges(self) -> pd.DataFrame:
        """One row per NVTX range (RANGES): ``name``, ``domain`` ("" for
        the default domain), ``start``, ``end``, ``duration_ns`` (host
        clock), ``thread_id``, ``depth``, ``color`` (0xAARRGGBB, 0 none)
        and ``open`` (still open when the capture ended; its end is the
        cut)."""
        r = self._section("RANGES")
        start, end = col.column(r, "start"), col.column(r, "end")
        return pd.DataFrame({
            "name": self._strings(col.column(r, "name")),
            "domain": self._strings(col.column(r, "domain")),
            "start": start, "end": end, "duration_ns": end - start,
            "thread_id": col.column(r, "thread_id"),
            "depth": col.column(r, "depth"),
            "color": col.column(r, "color"),
            "open": (col.column(r, "flags") & 1) != 0,
        }).rename_axis("range")

    def api_calls(self) -> pd.DataFrame:
        """One row per host API call that issued work (API_CALLS):
        ``name`` ("cudaLaunchKernel"), ``api`` ("runtime" or "driver"),
        ``start``, ``end``, ``duration_ns``, ``thread_id`` (as in
        :meth:`ranges`) and ``correlation_id`` (as in :meth:`launches`
        and :meth:`copies`). Empty for a trace recorded before API calls
        were."""
        a = self._section("API_CALLS")
        start, end = col.column(a, "start"), col.column(a, "end")
        kind = col.column(a, "kind")
        api = np.where(kind == 1, "runtime",
                       np.where(kind == 2, "driver", "")).astype(object)
        return pd.DataFrame({
            "name": self._strings(col.column(a, "name")),
            "api": api, "start": start, "end": end,
            "duration_ns": end - start,
            "thread_id": col.column(a, "thread_id"),
            "correlation_id": col.column(a, "correlation_id"),
        }).rename_axis("call")

    def range_times(self) -> pd.DataFrame:
        """GPU time per named NVTX range, as ``mprof summary --by-range``:
        one row per (name, domain), parent first, with ``instances``,
        ``host_ns``, exclusive ``launches``, ``kernel_ns``, ``copies``,
        ``copy_ns``, ``share`` of all kernel time, ``open_instances``,
        the inclusive ``inclusive_launches``, ``inclusive_ns``,
        ``inclusive_copies``, ``inclusive_copy_ns``, ``inclusive_share``,
        ``borrowed_launches`` (issued by a thread with no range open and
        charged here through another thread's range), and the hierarchy:
        ``parent``, ``parent_domain`` (None at the top) and ``depth``."""
        out = ffi.new("mprof_range_times **")
        check(lib.mprof_range_times_build(out, self._handle()))
        times = out[0]
        try:
            fields = ["instances", "host_ns", "launches", "kernel_ns",
                      "copies", "copy_ns", "share", "open_instances",
                      "inclusive_launches", "inclusive_ns",
                      "inclusive_copies", "inclusive_copy_ns",
                      "inclusive_share", "borrowed_launches", "depth"]
            rows: Dict[str, List[Any]] = {k: [] for k in
                                          ["name", "domain", "parent",
                                           "parent_domain"] + fields}
            # One row per distinct range name: tens, not per record.
            for i in range(int(lib.mprof_range_times_count(times))):
                r = lib.mprof_range_times_get(times, i)
                rows["name"].append(text(r.name))
                rows["domain"].append(text(r.domain))
                rows["parent"].append(text(r.parent) if r.parent else None)
                rows["parent_domain"].append(
                    text(r.parent_domain) if r.parent_domain else None)
                for f in fields:
                    rows[f].append(getattr(r, f))
        finally:
            lib.mprof_range_times_free(times)
        df = pd.DataFrame(rows)
        for f in fields:
            if f not in ("share", "inclusive_share"):
                df[f] = df[f].astype(np.uint64)
        return df

    # ---- inside kernels: PC samples, PM samples, spans ---------------------

    def _pc_column(self, column: int, dtype: Any) -> np.ndarray:
        join = self._join_handle()
        n = int(lib.mprof_join_pc_rows(join))
        out = np.zeros(n, dtype=dtype)
        if n:
            check(lib.mprof_join_pc_column(ffi.from_buffer(out), n, join,
                                           column))
        return out

    def _pc_reason_column(self, column: int, dtype: Any) -> np.ndarray:
        join = self._join_handle()
        n = int(lib.mprof_join_pc_reason_rows(join))
        out = np.zeros(n, dtype=dtype)
        if n:
            check(lib.mprof_join_pc_reason_column(ffi.from_buffer(out), n,
                                                  join, column))
        return out

    def stall_reasons(self) -> pd.DataFrame:
        """The join's stall-reason table: ``name`` (prefix stripped),
        ``full_name``, ``not_issued`` (an X_not_issued twin, never added
        into shares) and its ``dimension`` key ("" for "other")."""
        join = self._join_handle()
        rows = []
        for i in range(int(lib.mprof_join_reason_count(join))):
            r = lib.mprof_join_reason(join, i)
            rows.append((text(r.name), text(r.full_name), bool(r.not_issued),
                         text(lib.mprof_dimension_key(r.dimension))))
        return pd.DataFrame(rows, columns=["name", "full_name", "not_issued",
                                           "dimension"]).rename_axis("reason")

    def pc_samples(self, stalls: bool = True) -> pd.DataFrame:
        """The sampled instructions of every kernel, kernel by kernel
        (dominant first), each kernel's most-sampled first: ``kernel``,
        ``name``, ``cubin_crc``, ``function_index``, ``offset``,
        ``samples`` (plain reasons), ``not_issued``, and from the sidecar
        ``sass`` ("@P0 LDG.E R4, [R2.64]"), ``file`` and ``line`` ("" and 0
        unknown). With @p stalls, one more column per stall reason
        (``stall_long_scoreboard``, ...) with its samples there."""
        kernel = self._pc_column(0, np.uint32).astype(np.int64)
        df = pd.DataFrame({
            "kernel": kernel,
            "name": self._kernel_names()[kernel] if kernel.size else
            np.empty(0, dtype=object),
            "cubin_crc": self._pc_column(1, np.uint64),
            "function_index": self._pc_column(2, np.uint32),
            "offset": self._pc_column(3, np.uint32),
            "samples": self._pc_column(4, np.uint64),
            "not_issued": self._pc_column(5, np.uint64),
        })
        insn = self._pc_column(7, np.uintp)
        buf = ffi.new("char[]", 512)

        def sass(p: int) -> str:
            if not p:
                return ""
            ins = ffi.cast("const mprof_sass_instruction *", p)
            return text(lib.mprof_sass_instruction_text(buf, 512, ins))

        def file(p: int) -> str:
            return text(ffi.cast("const mprof_sass_instruction *", p).file) \
                if p else ""

        df["sass"] = col.lookup(insn, sass)
        df["file"] = col.lookup(insn, file)
        df["line"] = self._pc_column(6, np.uint32)
        if stalls:
            reasons = self.stall_reasons()
            row = self._pc_reason_column(0, np.uint64).astype(np.int64)
            reason = self._pc_reason_column(1, np.uint32).astype(np.int64)
            count = self._pc_reason_column(2, np.uint64)
            matrix = np.zeros((len(df), len(reasons)), dtype=np.uint64)
            matrix[row, reason] = count  # one (row, reason) pair each
            # Columns in order of samples, largest first, as the summary
            # lists its stall mix.
            totals = matrix.sum(axis=0)
            present = np.unique(reason)
            order = present[np.argsort(-totals[present].astype(np.float64),
                                       kind="stable")]
            for r in order.tolist():
                df["stall_" + reasons["name"].iat[r]] = matrix[:, r]
        return df.rename_axis("pc")

    def pm_samples(self) -> pd.DataFrame:
        """Hardware-counter samples (PM_SAMPLES): ``device_id``,
        ``start``, ``end``, and one float column per counter the device
        was sampled with, named as CUPTI names it (PM_METRICS); NaN where
        a device did not measure it."""
        s = self._section("PM_SAMPLES")
        metrics = self._section("PM_METRICS")
        devices = self._section("DEVICES")
        dev = col.column(s, "device").astype(np.int64)
        values = col.column(s, "value")
        start, end = col.column(s, "start"), col.column(s, "end")
        df = pd.DataFrame({
            "device_id": col.column(devices, "id")[dev] if len(s) else
            np.empty(0, np.uint32),
            "start": start, "end": end, "duration_ns": end - start,
        })
        names = self._strings(col.column(metrics, "name"))
        mdev = col.column(metrics, "device")
        mcol = col.column(metrics, "column")
        for name in dict.fromkeys(names.tolist()):
            out = np.full(len(s), np.nan, dtype=np.float32)
            for d, c in zip(mdev[names == name].tolist(),
                            mcol[names == name].tolist()):
                rows = dev == d
                out[rows] = values[rows, c]
            df[name] = out
        return df.rename_axis("sample")

    def spans(self) -> pd.DataFrame:
        """Activity measured inside kernels (SPANS: per block or per warp,
        from source markers, the block producer or a .mkprof):
        ``launch`` (row of :meth:`launches`, NA none), ``kernel``,
        ``sm``, ``block``, ``warp`` (NA for a block span), ``region``
        name, ``start``, ``end``, ``duration_ns``, ``open`` (its end was
        never recorded) and ``payload``."""
        s = self._section("SPANS")
        regions = self._section("REGIONS")
        region_names = np.append(
            self._strings(col.column(regions, "name")), "")
        launch = col.column(s, "launch")
        none = launch == col.INDEX_NONE
        kernel_of_launch = self._launch_kernels()
        kernel = np.where(none, -1, kernel_of_launch[
            np.where(none, 0, launch).astype(np.int64)]) if len(s) and \
            len(kernel_of_launch) else np.full(len(s), -1, np.int64)
        region = col.column(s, "region").astype(np.int64)
        region = np.where(region >= len(regions), len(regions), region)
        start, end = col.column(s, "start"), col.column(s, "end")
        flags = col.column(s, "flags")
        return pd.DataFrame({
            "launch": col.index_or_nan(launch),
            "kernel": kernel,
            "sm": col.column(s, "sm"),
            "block": col.column(s, "block"),
            "warp": col.index_or_nan(col.column(s, "warp")),
            "region": region_names[region] if len(s) else
            np.empty(0, dtype=object),
            "start": start, "end": end, "duration_ns": end - start,
            "open": (flags & 2) != 0,
            "payload": col.column(s, "payload"),
        }).rename_axis("span")

    def _launch_kernels(self) -> np.ndarray:
        lv = self._section("LAUNCHES")
        if not len(lv):
            return np.empty(0, np.int64)
        return self._shape_kernels()[col.column(lv, "shape").astype(np.int64)]

    # ---- the diagnosis --------------------------------------------------

    def _diagnosis_handle(self) -> Any:
        if self._diagnosis is None:
            self._diagnosis = _Diagnosis(self._join_handle())
        return self._diagnosis.handle

    def diagnosis(self) -> pd.DataFrame:
        """The verdict of each kernel, as ``mprof summary``: ``verdict``
        (one sentence), the ``dimension`` it names and that dimension's
        ``state`` and ``gain`` (the share of the kernel's own time a fix
        could recover, of the stream's time when ``gain_of`` is "stream";
        NaN at a roof), ``gain_bound`` ("estimate", "at_least", "at_most",
        "unknown"), ``saved_ns`` (the time the fix saves the program),
        ``issue_active``, the theoretical ``occupancy`` and
        its ``limiter``, ``waves``, ``tensor_core``, ``library``, the
        measured ``roof`` and the speed of light from PM samples
        (``sol_dram``, ``sol_l2``, ... in percent; NaN unmeasured)."""
        d = self._diagnosis_handle()
        rows = []
        for i in range(int(lib.mprof_diagnosis_kernel_count(d))):
            k = lib.mprof_diagnosis_kernel(d, i)
            dim = k.verdict_dimension
            occ = k.occupancy
            row = {
                "name": text(k.stats.name),
                "verdict": text(k.verdict),
                "dimension": text(lib.mprof_dimension_key(dim)),
                "state": text(lib.mprof_state_name(k.verdict_state)),
                "gain": k.gain,
                "gain_bound": text(lib.mprof_gain_bound_name(k.gain_bound)),
                "gain_of": "stream" if k.gain_of_stream else "kernel",
                "saved_ns": k.saved_ns,
                "issue_active": k.issue_active if k.issue_active >= 0
                else np.nan,
                "occupancy": occ.theoretical if occ.known else np.nan,
                "limiter": text(lib.mprof_occupancy_limiter_name(
                    occ.limiter)),
                "waves": occ.waves if occ.known else np.nan,
                "weighted_occupancy": k.weighted_occupancy,
                "tensor_core": bool(k.tensor_core),
                "library": bool(k.library),
                "roof": None if k.roof == ffi.NULL else text(k.roof),
                "notes": [text(k.notes[j]) for j in range(k.note_count)],
                "pm_samples": int(k.throughput.samples),
            }
            for c in range(14):  # MPROF_COUNTER_COUNT_ of these headers
                row["sol_" + text(lib.mprof_counter_key(c))] = \
                    k.throughput.value[c]
            rows.append(row)
        return pd.DataFrame(rows, index=pd.RangeIndex(len(rows),
                                                      name="kernel"))

    def dimensions(self) -> pd.DataFrame:
        """Every judged dimension of every kernel, one row each:
        ``kernel``, ``dimension`` (key: "memory_latency", ...),
        ``title``, ``state`` ("unknown", "ok", "minor", "issue"),
        ``cost`` (the estimated gain as a share of the kernel's stream
        time, which ranks them), ``gain`` (the same of the kernel's own
        time; of the stream's for launch overhead), ``gain_bound``,
        ``saved_ns`` (the time the fix saves the program), ``detail`` (the sentence with its numbers) and ``metrics`` (a
        dict of the numbers behind it)."""
        d = self._diagnosis_handle()
        rows = []
        for i in range(int(lib.mprof_diagnosis_kernel_count(d))):
            k = lib.mprof_diagnosis_kernel(d, i)
            for j in range(k.dimension_count):
                dm = lib.mprof_kernel_diagnosis_dimension(k, j)
                metrics = {}
                for m in range(dm.metric_count):
                    mt = lib.mprof_dimension_metric(dm, m)
                    metrics[text(mt.name)] = mt.value
                rows.append((i, text(lib.mprof_dimension_key(dm.id)),
                             text(lib.mprof_dimension_title(dm.id)),
                             text(lib.mprof_state_name(dm.state)), dm.cost,
                             dm.gain,
                             text(lib.mprof_gain_bound_name(dm.gain_bound)),
                             dm.saved_ns, text(dm.detail), metrics))
        return pd.DataFrame(rows, columns=["kernel", "dimension", "title",
                                           "state", "cost", "gain",
                                           "gain_bound", "saved_ns", "detail",
                                           "metrics"])

    def notes(self) -> pd.DataFrame:
        """What is missing in the whole trace and how to get it: ``key``
        ("no_sidecar", ...) and ``text``."""
        d = self._diagnosis_handle()
        rows = []
        for i in range(int(lib.mprof_diagnosis_note_count(d))):
            n = lib.mprof_diagnosis_note(d, i)
            rows.append((text(n.key), text(n.text)))
        return pd.DataFrame(rows, columns=["key", "text"])


    # ---- one kernel, and its picture ------------------------------------

    def kernel(self, key: Union[int, str] = 0) -> "Kernel":
        """Kernel @p key: its index in :meth:`kernels` (0, the dominant
        one, by default), or its name, short name or mangled name (the
        first match in that order). In Jupyter it shows as its rendered
        Summary."""
        k = self.kernels()
        if isinstance(key, str):
            hits = [i for c in ("name", "short_name", "mangled")
                    for i in np.flatnonzero(k[c].values == key).tolist()]
            if not hits:
                raise KeyError(f"{self.path}: no kernel named {key!r}")
            key = hits[0]
        if not 0 <= int(key) < len(k):
            raise IndexError(f"{self.path}: kernel {key} is out of range "
                             f"(the trace has {len(k)})")
        return Kernel(self, int(key), k.loc[int(key)])

    def render_png(self, kernel: int = -1, tab: str = "summary",
                   width: int = 1600, height: int = 1000) -> bytes:
        """Tab @p tab ("summary", "hotspots", "flame", "raster", "mega",
        "density", "activity", "trace") of kernel @p kernel (index into
        :meth:`kernels`; -1 the dominant one) drawn by mprof's renderer, as
        PNG bytes: what ``mprof view --render OUT.png --tab TAB`` writes.
        Needs libmprof-render-png.so.0 (built with Cairo; found through
        MPROF_RENDER_LIBRARY, beside libmprof, or the loader's path):
        :class:`mprof.LibraryNotFoundError` without it. The renderer opens
        the trace's files itself, with the sidecar this trace loaded (or,
        for one opened with ``sidecar=False``, ``TRACE.pc.json`` when it
        exists)."""
        from ._lib import (LibraryNotFoundError, render_ffi, render_library,
                           render_library_error)
        rl = render_library()
        if rl is None:
            raise LibraryNotFoundError(
                "mprof: cannot load libmprof-render-png.so.0 ("
                f"{render_library_error()}); build mprof with Cairo or set "
                "MPROF_RENDER_LIBRARY")
        self._handle()
        keep = [render_ffi.new("char[]", path_bytes(p)) for p in self.paths]
        paths = render_ffi.new("const char *[]", keep)
        out = render_ffi.new("unsigned char **")
        size = render_ffi.new("size_t *")
        sidecar = render_ffi.NULL if self._sidecar_path is None else \
            self._sidecar_path
        rc = rl.mprof_render_png(out, size, paths, len(keep), sidecar,
                                 tab.encode(), kernel, width, height)
        if rc != 0:
            raise MprofError(text(rl.mprof_render_png_error()), rc, "ERENDER")
        try:
            return bytes(render_ffi.buffer(out[0], size[0]))
        finally:
            rl.mprof_render_png_free(out[0])


class Kernel:
    """One kernel of a trace: its row of :meth:`Trace.kernels`, its
    diagnosis and sampled instructions, and in Jupyter its rendered
    Summary (``_repr_png_``) when mprof's renderer library is present."""

    def __init__(self, trace: Trace, index: int, stats: pd.Series) -> None:
        self.trace = trace
        self.index = index
        self.stats = stats
        self.name: str = stats["name"]
        self._summary_png: Optional[bytes] = None

    def __repr__(self) -> str:
        s = self.stats
        return (f"<mprof.Kernel {self.index} {s['short_name']}: "
                f"{s['launches']} launches, {s['total_ns']} ns, "
                f"{s['share']:.1%} of kernel time>")

    def diagnosis(self) -> pd.Series:
        """Its row of :meth:`Trace.diagnosis`."""
        return self.trace.diagnosis().loc[self.index]

    def dimensions(self) -> pd.DataFrame:
        """Its rows of :meth:`Trace.dimensions`."""
        d = self.trace.dimensions()
        return d[d["kernel"] == self.index].reset_index(drop=True)

    def pc_samples(self) -> pd.DataFrame:
        """Its rows of :meth:`Trace.pc_samples`, most-sampled first."""
        p = self.trace.pc_samples()
        return p[p["kernel"] == self.index]

    def png(self, tab: str = "summary", width: int = 1600,
            height: int = 1000) -> bytes:
        """Its @p tab as PNG bytes (:meth:`Trace.render_png`)."""
        return self.trace.render_png(self.index, tab, width, height)

    def _repr_png_(self) -> Optional[bytes]:
        """Jupyter's rich display: the rendered Summary, or None (the
        text repr) when the renderer library is not installed."""
        from ._lib import render_library
        if render_library() is None:
            return None
        if self._summary_png is None:  # a notebook asks on every display
            self._summary_png = self.png()
        return self._summary_png


class _Diagnosis:
    """Owns a mprof_diagnosis (freed before the join it borrows)."""

    def __init__(self, join: Any) -> None:
        out = ffi.new("mprof_diagnosis **")
        check(lib.mprof_diagnose(out, join, ffi.NULL))
        self.handle = out[0]

    def close(self) -> None:
        if self.handle != ffi.NULL:
            lib.mprof_diagnosis_free(self.handle)
            self.handle = ffi.NULL


def open(*paths: PathLike,  # noqa: A001 - mirrors builtins.open on purpose
         sidecar: Union[None, bool, PathLike] = None) -> Trace:
    """Open a trace, a ``.mkprof`` file, or several traces of one run as
    one set (``mprof.open("run.%p.0.mprof", "run.%p.1.mprof")``).

    @p sidecar: ``None`` loads ``TRACE.pc.json`` when it exists (SASS,
    source lines), a path loads that file, ``False`` loads none and
    ``True`` requires one. Raises :class:`mprof.MprofError` with the
    library's message when a file is missing or malformed.
    """
    return Trace(paths, sidecar=sidecar)
