"""Column arrays over the records libmprof hands out.

The typed section accessors of ``trace.h`` return the validated records in
place: an array of fixed-size structs (``format.h``) with the stride of the
headers. numpy views that array through a structured dtype built from the
struct's declaration, and each column is copied out of it in one vectorised
step, so a DataFrame never outlives the trace's mapping and no Python code
runs per record.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

import numpy as np

from ._lib import ffi

_NUMPY = {
    "uint8_t": np.uint8, "uint16_t": np.uint16, "uint32_t": np.uint32,
    "uint64_t": np.uint64, "int32_t": np.int32, "int64_t": np.int64,
    "float": np.float32, "double": np.float64, "char": np.int8,
}

_DTYPES: Dict[str, np.dtype] = {}

#: An index field that refers to nothing (MPROF_INDEX_NONE).
INDEX_NONE = 0xFFFFFFFF
#: mprof_kernel_stats.flags: a kernel of mprof's own (MPROF_KERNEL_MPROF_OWN).
KERNEL_MPROF_OWN = 0x1


def record_dtype(ctype: str) -> np.dtype:
    """The numpy dtype of C struct @p ctype, field for field."""
    dt = _DTYPES.get(ctype)
    if dt is not None:
        return dt
    t = ffi.typeof(ctype)
    names, formats, offsets = [], [], []
    for name, field in t.fields:
        ft = field.type
        if ft.kind == "array":
            fmt: Any = (_NUMPY[ft.item.cname], (ft.length,))
        else:
            fmt = _NUMPY[ft.cname]
        names.append(name)
        formats.append(fmt)
        offsets.append(field.offset)
    dt = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                   "itemsize": ffi.sizeof(t)})
    _DTYPES[ctype] = dt
    return dt


def records(ptr: Any, count: int, ctype: str) -> np.ndarray:
    """A read-only structured view of @p count records at @p ptr.

    The view borrows the library's memory: copy what you keep (``column``).
    """
    dt = record_dtype(ctype)
    if count == 0 or ptr == ffi.NULL:
        return np.zeros(0, dtype=dt)
    buf = ffi.buffer(ffi.cast("char *", ptr), count * dt.itemsize)
    return np.frombuffer(buf, dtype=dt, count=count)


def column(view: np.ndarray, name: str) -> np.ndarray:
    """Field @p name of @p view, copied into an array of its own."""
    return np.ascontiguousarray(view[name]).copy()


def lookup(keys: np.ndarray, resolve: Callable[[int], Any],
           dtype: Any = object) -> np.ndarray:
    """Map each value of @p keys through @p resolve, calling it once per
    distinct value (string references, stream indices): the per-value work
    is proportional to the distinct values, not to the rows."""
    if keys.size == 0:
        return np.empty(0, dtype=dtype)
    uniq, inverse = np.unique(keys, return_inverse=True)
    values = np.empty(uniq.size, dtype=dtype)
    for i, k in enumerate(uniq.tolist()):
        values[i] = resolve(k)
    return values[inverse]


def index_or_nan(values: np.ndarray) -> np.ndarray:
    """uint32 indices with MPROF_INDEX_NONE as a pandas nullable Int64."""
    import pandas as pd
    return pd.arrays.IntegerArray(values.astype(np.int64),
                                  values == INDEX_NONE)

