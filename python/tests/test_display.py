"""Slice 3: a kernel's rich display in Jupyter is its rendered Summary,
byte for byte what `mprof view --render` draws, when the renderer's
library is present."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mprof
from mprof import _lib

from conftest import SAMPLES, run_cli

needs_renderer = pytest.mark.skipif(
    _lib.render_library() is None and not os.environ.get(
        "MPROF_RENDER_LIBRARY"),
    reason="mprof was built without the renderer (Cairo)")


def cli_png(tmp_path: Path, trace: Path, *args: str) -> bytes:
    out = tmp_path / "cli.png"
    run_cli("view", str(trace), "--render", str(out), *args)
    return out.read_bytes()


@needs_renderer
def test_dominant_kernel_shows_its_summary(tmp_path: Path) -> None:
    with mprof.open(SAMPLES / "gemm.mprof") as t:
        png = t.kernel()._repr_png_()
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png == cli_png(tmp_path, SAMPLES / "gemm.mprof", "--tab",
                          "summary")


@needs_renderer
def test_any_kernel_and_tab(tmp_path: Path) -> None:
    """A kernel other than the dominant one, found by its short name, and
    another tab at another size."""
    path = SAMPLES / "transformer_forward.mprof"
    with mprof.open(path) as t:
        row = t.kernels().iloc[2]
        k = t.kernel(row["short_name"])
        assert k.index == 2 and k.name == row["name"]
        summary = k._repr_png_()
        hot = k.png("hotspots", 800, 600)
    assert summary == cli_png(tmp_path, path, "--kernel", row["mangled"])
    assert hot == cli_png(tmp_path, path, "--kernel", row["mangled"],
                          "--tab", "hotspots", "--size", "800x600")
    assert summary != hot


@needs_renderer
def test_render_errors_carry_the_message() -> None:
    with mprof.open(SAMPLES / "demo.mprof") as t:
        with pytest.raises(mprof.MprofError, match="unknown tab 'flames'"):
            t.render_png(0, "flames")
        with pytest.raises(mprof.MprofError, match="out of range"):
            t.render_png(0, "summary", 8, 8)


def test_kernel_lookup() -> None:
    with mprof.open(SAMPLES / "demo.mprof") as t:
        assert t.kernel("pointer_chase").index == 0
        assert t.kernel("_Z5saxpyfPKfPfi").name.startswith("saxpy(")
        assert "pointer_chase: 10 launches" in repr(t.kernel(0))
        assert t.kernel(1).diagnosis()["verdict"]
        assert len(t.kernel(0).dimensions()) == 12
        assert int(t.kernel(0).pc_samples()["samples"].sum()) == \
            t.kernels().loc[0, "samples"]
        with pytest.raises(KeyError, match="no kernel named 'nope'"):
            t.kernel("nope")
        with pytest.raises(IndexError, match="kernel 4 is out of range"):
            t.kernel(4)


def test_without_renderer_display_falls_back_to_text(tmp_path: Path) -> None:
    """No renderer library: the display is the text repr (None from
    _repr_png_), and render_png() names the fix."""
    code = (
        "import mprof\n"
        f"t = mprof.open({str(SAMPLES / 'demo.mprof')!r})\n"
        "assert t.kernel()._repr_png_() is None\n"
        "try:\n"
        "    t.render_png()\n"
        "except mprof.LibraryNotFoundError as e:\n"
        "    print(e)\n")
    env = dict(os.environ,
               MPROF_RENDER_LIBRARY=str(tmp_path / "libmprof-render-png.so"),
               PYTHONPATH=str(Path(mprof.__file__).resolve().parents[1]))
    if os.sep in _lib.loaded_from:
        env["MPROF_LIBRARY"] = os.path.abspath(_lib.loaded_from)
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "cannot load libmprof-render-png.so.0" in r.stdout
    assert "MPROF_RENDER_LIBRARY" in r.stdout
