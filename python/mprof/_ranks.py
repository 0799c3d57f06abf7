"""The cross-rank report (``mprof ranks``) on Dask.

Each rank's trace is read where it lies: a Dask worker opens it by path
and builds its rank table through libmprof (steps, busy and idle time,
collectives, GPU time per kernel and step), which travels back as a few
kilobytes of bytes, never the trace. One worker then reduces the tables
with libmprof's own reduce, which compares each straggler with its median
rank by opening those two traces again, on that worker, and writes the
report in the three formats of ``mprof ranks``. The CLI and this path run
the same C code on the same tables, so they give the same report. ::

    import mprof
    report = mprof.ranks(["run/0.mprof", "run/1.mprof"])   # a LocalCluster
    report = mprof.ranks(paths, client="tcp://scheduler:8786")
    print(report.text)
    report.steps          # a DataFrame: rank, step, busy_ns, idle_ns, ...
    report.stragglers     # rank, step, kernel, summary, ...
"""

from __future__ import annotations

import glob as _glob
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import pandas as pd

from ._lib import check, ffi, lib, path_bytes

PathLike = Union[str, "os.PathLike[str]"]

#: mprof_report_format: XML, JSON, text.
_FORMATS = {"xml": 0, "json": 1, "text": 2}
_NO_DIFF = 0x1


def expand(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """The traces that ``paths`` name, as ``mprof ranks`` resolves them: a
    directory stands for the .mprof files in it ("DIR/NAME", in name
    order), a pattern that names no file for the files it matches (sorted);
    a path as it is."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: List[str] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p)
                           if len(n) > 6 and n.endswith(".mprof"))
            out.extend(f"{p}/{n}" for n in names)
        elif not os.path.exists(p) and _glob.has_magic(p):
            out.extend(sorted(_glob.glob(p)))
        else:
            out.append(p)
    return out


def table_bytes(path: str) -> bytes:
    """The per-rank work, run on a worker: open the trace at @p path and
    return its rank table as bytes (mprof_rank_table_save())."""
    trace = ffi.new("mprof_trace **")
    check(lib.mprof_trace_open(trace, path_bytes(path), ffi.NULL))
    table = ffi.new("mprof_rank_table **")
    try:
        check(lib.mprof_rank_table_build(table, trace[0]))
    finally:
        lib.mprof_trace_free(trace[0])
    try:
        size = ffi.new("size_t *")
        check(lib.mprof_rank_table_save(table[0], ffi.NULL, 0, size))
        buf = ffi.new("char[]", size[0])
        check(lib.mprof_rank_table_save(table[0], buf, size[0], size))
        return bytes(ffi.buffer(buf, size[0]))
    finally:
        lib.mprof_rank_table_free(table[0])


_libc: Any = None


def _write(ranks: Any, fmt: str, top: Optional[int], hot: int) -> str:
    """mprof_ranks_write() into memory (open_memstream)."""
    global _libc
    if _libc is None:
        _libc = ffi.dlopen(None)  # open_memstream, fclose, free (_cdef.py)
    ro = ffi.new("mprof_report_options *")
    check(lib.mprof_report_options_init(ro, 1))
    ro.format = _FORMATS[fmt]
    ro.max_kernels = top if top is not None else ffi.cast("size_t", -1)
    ro.max_hot = hot
    ptr = ffi.new("char **")
    size = ffi.new("size_t *")
    stream = _libc.open_memstream(ptr, size)
    if stream == ffi.NULL:
        raise MemoryError("open_memstream failed")
    rc = lib.mprof_ranks_write(stream, ranks, ro)
    _libc.fclose(stream)
    try:
        text = ffi.string(ptr[0], size[0]).decode("utf-8", "replace")
    finally:
        _libc.free(ptr[0])
    check(rc)
    return text


def reduce_tables(tables: Sequence[bytes], threshold: float = 0.05,
                  diff: bool = True, top: Optional[int] = 32,
                  hot: int = 3) -> Dict[str, str]:
    """The reduce, run on a worker: load the tables, build the report
    (mprof_ranks_build(), which opens the straggler's and the median
    rank's traces for their diff) and write it as XML, JSON and text."""
    loaded = ffi.new("mprof_rank_table *[]", len(tables))
    keep = []
    try:
        for i, b in enumerate(tables):
            buf = ffi.from_buffer(b)
            keep.append(buf)
            out = ffi.new("mprof_rank_table **")
            check(lib.mprof_rank_table_load(out, buf, len(b)))
            loaded[i] = out[0]
        opts = ffi.new("mprof_ranks_options *")
        check(lib.mprof_ranks_options_init(opts, 2))
        opts.threshold = threshold
        # The stragglers' traces are opened and diagnosed on these many
        # threads at once; the report does not depend on it.
        opts.threads = os.cpu_count() or 1
        if not diff:
            opts.flags |= _NO_DIFF
        ranks = ffi.new("mprof_ranks **")
        check(lib.mprof_ranks_build(ranks, loaded, len(tables), opts))
        try:
            return {"xml": _write(ranks[0], "xml", None, hot),
                    "json": _write(ranks[0], "json", None, hot),
                    "text": _write(ranks[0], "text", top, hot)}
        finally:
            lib.mprof_ranks_free(ranks[0])
    finally:
        for i in range(len(tables)):
            if loaded[i] != ffi.NULL:
                lib.mprof_rank_table_free(loaded[i])


class RanksReport:
    """What ``mprof ranks`` prints, in its three formats (``xml``,
    ``json``, ``text``), and as DataFrames: ``ranks`` (one row per rank),
    ``steps`` (one row per rank and step) and ``stragglers``."""

    def __init__(self, reports: Dict[str, str]) -> None:
        self.xml = reports["xml"]
        self.json = reports["json"]
        self.text = reports["text"]
        self.data = json.loads(self.json)

    def __repr__(self) -> str:
        job = self.data["job"]
        return (f"<mprof.RanksReport {job['ranks']} ranks, {job['steps']} "
                f"steps, {job['stragglers']} stragglers>")

    def __str__(self) -> str:
        return self.text

    @property
    def ranks(self) -> pd.DataFrame:
        rows = [{k: v for k, v in r.items() if k != "steps"}
                for r in self.data["ranks"]]
        return pd.DataFrame(rows)

    @property
    def steps(self) -> pd.DataFrame:
        rows = [dict(rank=r["rank"], path=r["path"], **s)
                for r in self.data["ranks"] for s in r["steps"]]
        return pd.DataFrame(rows)

    @property
    def stragglers(self) -> pd.DataFrame:
        rows = []
        for s in self.data["stragglers"]:
            row = {k: v for k, v in s.items() if k not in ("kernel", "diff")}
            row["kernel"] = s["kernel"].get("short_name")
            row["kernel_ns"] = s["kernel"].get("kernel_ns")
            row["median_kernel_ns"] = s["kernel"].get("median_kernel_ns")
            row["mean_change"] = s["diff"].get("mean_change")
            rows.append(row)
        return pd.DataFrame(rows)


def _client(client: Any, workers: Optional[int]) -> Any:
    """A dask.distributed Client, and whether we own it (to close it)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - depends on the system
        raise ImportError(
            "mprof.ranks needs dask and distributed (Debian: python3-dask "
            "python3-distributed)") from e
    if client is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        return Client(cluster), cluster
    if isinstance(client, str):
        return Client(client), None
    return client, None


def ranks(paths: Union[PathLike, Sequence[PathLike]], client: Any = None, *,
          workers: Optional[int] = None, threshold: float = 0.05,
          diff: bool = True, top: Optional[int] = 32,
          hot: int = 3) -> RanksReport:
    """The cross-rank report of a job's traces (one per rank), computed on
    Dask: ``client`` is a ``distributed.Client``, a scheduler address
    ("tcp://host:8786"), or None for a LocalCluster of ``workers``
    processes (default: one per core) that is closed afterwards. Every
    worker must see the traces at the same paths (a shared filesystem).
    ``threshold`` (0.05: 5%), ``diff``, ``top`` and ``hot`` are
    ``mprof ranks``'s ``--threshold``, ``--no-diff``, ``--top`` and
    ``--hot``."""
    files = expand(paths)
    if not files:
        raise ValueError("mprof.ranks: no traces given (one per rank: "
                         "files, a directory or a glob)")
    c, cluster = _client(client, workers)
    try:
        tables = c.map(table_bytes, files, pure=False)
        result = c.submit(reduce_tables, tables, threshold, diff, top, hot,
                          pure=False)
        return RanksReport(result.result())
    finally:
        if cluster is not None:
            c.close()
            cluster.close()
