"""mprof: within-kernel GPU profiles as pandas DataFrames.

A thin layer over libmprof's stable C ABI (through cffi): the library
opens, validates and joins the trace; this package hands its column arrays
to pandas. ::

    import mprof
    with mprof.open("samples/gemm.mprof") as t:
        print(t.kernels()[["name", "launches", "total_ns", "share"]])
        print(t.launches().groupby("name")["duration_ns"].sum())
"""

from ._lib import LibraryNotFoundError, MprofError, version
from ._ranks import RanksReport, ranks
from .trace import Kernel, Trace, open

__all__ = ["open", "ranks", "Trace", "Kernel", "RanksReport", "MprofError",
           "LibraryNotFoundError", "version"]
__version__ = "0.1.0"
