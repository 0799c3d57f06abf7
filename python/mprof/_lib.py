"""Finding and loading libmprof, and turning its failures into exceptions."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, List

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


#: The path libmprof was loaded from (a file name for the loader's path).
loaded_from = ""


def _load() -> Any:
    global loaded_from
    errors = []
    for path in _candidates():
        try:
            handle = ffi.dlopen(path)
            loaded_from = path
            return handle
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


# ---- the renderer's PNG library (optional) --------------------------------

render_ffi = cffi.FFI()
render_ffi.cdef("""
int mprof_render_png(unsigned char **out, size_t *size,
                     const char *const *paths, size_t count,
                     const char *sidecar, const char *tab, int kernel,
                     int width, int height);
void mprof_render_png_free(unsigned char *png);
const char *mprof_render_png_error(void);
""")

RENDER_SONAME = "libmprof-render-png.so.0"
_render: Any = None
_render_error = ""


def render_library() -> Any:
    """libmprof-render-png.so.0, or None when it is not installed: from
    MPROF_RENDER_LIBRARY, else beside the libmprof that was loaded, else
    the loader's path."""
    global _render, _render_error
    if _render is not None or _render_error:
        return _render
    env = os.environ.get("MPROF_RENDER_LIBRARY")
    if env:
        candidates = [env]
    else:
        candidates = []
        if os.sep in loaded_from:
            candidates.append(os.path.join(os.path.dirname(loaded_from),
                                           RENDER_SONAME))
        candidates.append(RENDER_SONAME)
    errors = []
    for path in candidates:
        try:
            _render = render_ffi.dlopen(path)
            return _render
        except OSError as e:
            errors.append(f"{path}: {e}")
    _render_error = "; ".join(errors)
    return None


def render_library_error() -> str:
    """Why render_library() found nothing ("" when it did)."""
    return _render_error
