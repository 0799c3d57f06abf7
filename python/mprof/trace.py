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
            opts.version = 2
            opts.sidecar = self._sidecar
            opts.flags = 0
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

    def kernels(self) -> pd.DataFrame:
        """One row per kernel (a mangled name on one GPU), dominant first,
        with the launch statistics of ``mprof summary``: ``launches``,
        ``total_ns``, ``mean_ns``, ``median_ns``, ``p90_ns``, ``share`` of
        all kernel time, the idle gaps before its launches, and its PC
        ``samples``. The index is the kernel number the other frames use.
        """
        join = self._join_handle()
        n = int(lib.mprof_join_kernel_count(join))
        fields = ["launches", "total_ns", "min_ns", "max_ns", "median_ns",
                  "p90_ns", "mean_ns", "stddev_ns", "share", "device_share",
                  "gap_count", "gap_median_ns", "gap_mean_ns", "samples",
                  "not_issued"]
        rows: Dict[str, List[Any]] = {k: [] for k in
                                      ["name", "short_name", "mangled",
                                       "device_id"] + fields}
        buf = ffi.new("char[]", 512)
        # One row per kernel: a trace has few kernels (tens to hundreds).
        for i in range(n):
            k = lib.mprof_join_kernel(join, i)
            rows["name"].append(text(k.name))
            rows["short_name"].append(text(lib.mprof_name_short(buf, 512,
                                                                k.name)))
            rows["mangled"].append(text(k.mangled))
            rows["device_id"].append(
                pd.NA if k.device_id == col.INDEX_NONE else int(k.device_id))
            for f in fields:
                rows[f].append(getattr(k, f))
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
        out = np.full(len(shapes), -1, dtype=np.int64)
        if len(launches) == 0:
            return out
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
