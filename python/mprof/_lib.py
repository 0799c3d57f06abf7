"""Finding and loading libmprof, and turning its failures into exceptions."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, List, Optional

import cffi

from ._cdef import CDEF

ffi = cffi.FFI()
ffi.cdef(CDEF)

#: The SOVERSION this package is written against (docs/ABI.md).
SONAME = "libmprof.so.0"


class MprofError(Exception):
    """A libmprof call failed.

    ``str(error)`` is the library's own message (``mprof_error_last()``),
    which names the file and, for a malformed trace, the section and the
    byte offset. ``status`` is the negative ``mprof_status`` code and
    ``code`` its short name (``"EFORMAT"``).
    """

    def __init__(self, message: str, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class LibraryNotFoundError(ImportError):
    """libmprof.so could not be found or loaded."""


def _candidates() -> List[str]:
    """Where to look for libmprof, in order (see python/README.md)."""
    env = os.environ.get("MPROF_LIBRARY")
    if env:
        return [env]
    found: List[str] = []
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(
                ["pkg-config", "--variable=libdir", "mprof"],
                check=True, capture_output=True, text=True, timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            found.append(os.path.join(libdir, SONAME))
    found.append(SONAME)  # the dynamic loader's own search path
    return found


def _load() -> Any:
    errors = []
    for path in _candidates():
        try:
            return ffi.dlopen(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    hint = ("set MPROF_LIBRARY to the path of libmprof.so.0 (e.g. "
            "build/lib/libmprof.so.0), or install mprof so that pkg-config "
            "or the dynamic loader finds it")
    if os.environ.get("MPROF_LIBRARY"):
        hint = "MPROF_LIBRARY must name a loadable libmprof.so.0"
    raise LibraryNotFoundError(
        f"mprof: cannot load libmprof ({'; '.join(errors)}); {hint}")


lib = _load()


def text(ptr: Any) -> str:
    """A C string of the library as ``str`` ("" for NULL)."""
    if ptr == ffi.NULL:
        return ""
    return ffi.string(ptr).decode("utf-8", "replace")


def check(rc: int) -> None:
    """Raise MprofError with the library's message when @p rc is a failure."""
    if rc >= 0:
        return
    message = text(lib.mprof_error_last()) or text(lib.mprof_status_name(rc))
    lib.mprof_error_clear()
    raise MprofError(message, rc, text(lib.mprof_status_name(rc)))


def version() -> str:
    """The loaded libmprof's version ("0.1.0")."""
    return text(lib.mprof_version())


def path_bytes(path: "os.PathLike[str] | str") -> bytes:
    return os.fsencode(os.fspath(path))


def optional_text(ptr: Any) -> Optional[str]:
    return None if ptr == ffi.NULL else text(ptr)
