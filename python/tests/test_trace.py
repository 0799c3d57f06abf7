"""Slice 1: traces, kernels, launches, copies and memsets against the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mprof

from conftest import (SAMPLES, chrome_events, info_sections, run_cli,
                      summary_json)

TRACES = ["demo.mprof", "gemm.mprof", "transformer_forward.mprof",
          "nvtx_step.mprof", "multi_gpu.mprof"]


@pytest.mark.parametrize("name", TRACES)
def test_kernels_equal_summary(name: str) -> None:
    """Every kernel of `mprof summary --json --all`, in its order, with the
    same name, device, launches, times and share."""
    want = summary_json(SAMPLES / name)["kernels"]["items"]
    with mprof.open(SAMPLES / name) as t:
        k = t.kernels()
    assert len(k) == len(want)
    for (i, row), w in zip(k.iterrows(), want):
        assert w["rank"] == i + 1
        assert row["name"] == w["name"]
        assert row["short_name"] == w["short_name"]
        assert row["mangled"] == w["mangled"]
        assert row["device_id"] == w["device"]
        for f in ["launches", "total_ns", "median_ns", "p90_ns", "min_ns",
                  "max_ns", "samples"]:
            assert row[f] == w[f], f
        assert round(row["mean_ns"]) == w["mean_ns"]
        assert round(row["share"], 4) == pytest.approx(w["share"], abs=1e-4)


def test_mprofs_own_kernel_last() -> None:
    """gemm_source's timer probe took most of the GPU time but is mprof's
    own: the program's kernel comes first, as in `mprof summary`."""
    want = summary_json(SAMPLES / "gemm_source.mprof")["kernels"]["items"]
    with mprof.open(SAMPLES / "gemm_source.mprof") as t:
        k = t.kernels()
    assert list(k["short_name"]) == ["sgemm_tiled",
                                     "mprof__source_timer_probe_kernel"]
    assert list(k["mprof_own"]) == [False, True]
    assert [w.get("mprof_own", False) for w in want] == [False, True]
    assert k["share"].iloc[1] > k["share"].iloc[0]


@pytest.mark.parametrize("name", TRACES)
def test_launches_add_up_to_kernels(name: str) -> None:
    """One row per LAUNCHES record (`mprof info`), whose durations sum per
    kernel to the kernel's total time."""
    with mprof.open(SAMPLES / name) as t:
        k, la = t.kernels(), t.launches()
    assert len(la) == info_sections(SAMPLES / name)["LAUNCHES"]
    assert (la["end"] >= la["start"]).all()
    per_kernel = la.groupby("kernel")["duration_ns"].agg(["sum", "count"])
    assert (per_kernel["sum"].values == k["total_ns"].values).all()
    assert (per_kernel["count"].values == k["launches"].values).all()
    assert (la["name"] == k["name"].values[la["kernel"]]).all()


def test_launches_equal_export(tmp_path: Path) -> None:
    """Each launch of the demo matches its event in the Trace Event export
    (joined by correlation id): kernel, stream, grid, block, duration."""
    with mprof.open(SAMPLES / "demo.mprof") as t:
        la = t.launches().set_index("correlation_id")
    events = [e for e in chrome_events(SAMPLES / "demo.mprof", tmp_path)
              if e.get("cat") == "kernel"]
    assert len(events) == len(la) == 50
    for e in events:
        row = la.loc[e["args"]["correlation_id"]]
        assert row["name"] == e["args"]["kernel"]
        assert row["stream_id"] == e["args"]["stream"]
        assert f"{row.grid_x}x{row.grid_y}x{row.grid_z}" == e["args"]["grid"]
        assert f"{row.block_x}x{row.block_y}x{row.block_z}" == \
            e["args"]["block"]
        assert row["duration_ns"] == pytest.approx(e["dur"] * 1000, abs=1)


def test_copies_and_memsets_equal_export(tmp_path: Path) -> None:
    """The demo's 7 copies and 3 memsets, each matching the export's event
    by correlation id: direction, bytes, duration, memset value."""
    with mprof.open(SAMPLES / "demo.mprof") as t:
        cp, ms = t.copies(), t.memsets()
    assert len(cp) + len(ms) == info_sections(SAMPLES / "demo.mprof")["MEMOPS"]
    assert list(cp["kind"]) == ["HtoD"] * 3 + ["DtoH"] * 4
    assert cp["src_device"].isna().sum() == 3   # from the host
    events = chrome_events(SAMPLES / "demo.mprof", tmp_path)
    by_id = {e["args"]["correlation_id"]: e for e in events
             if e.get("cat") in ("memcpy", "memset")}
    assert len(by_id) == 10
    for _, row in cp.iterrows():
        e = by_id[row["correlation_id"]]
        assert e["cat"] == "memcpy" and e["args"]["kind"] == row["kind"]
        assert e["args"]["bytes"] == row["bytes"]
        assert row["duration_ns"] == pytest.approx(e["dur"] * 1000, abs=1)
    for _, row in ms.iterrows():
        e = by_id[row["correlation_id"]]
        assert e["cat"] == "memset" and e["args"]["bytes"] == row["bytes"]
        assert e["args"]["value"] == row["value"]


def test_columns_are_numbers() -> None:
    """Times stay exact unsigned nanoseconds, not floats."""
    with mprof.open(SAMPLES / "gemm.mprof") as t:
        la = t.launches()
    for c in ["start", "end", "duration_ns"]:
        assert la[c].dtype == np.uint64


def test_frames_outlive_the_trace() -> None:
    """DataFrames are copies: closing the trace leaves them intact."""
    t = mprof.open(SAMPLES / "demo.mprof")
    la = t.launches()
    total = int(la["duration_ns"].sum())
    t.close()
    t.close()  # twice is fine
    assert int(la["duration_ns"].sum()) == total
    with pytest.raises(ValueError, match="closed"):
        t.launches()


def test_set_equals_summary_of_set() -> None:
    """Two traces of one run open as one set, as `mprof summary A B`."""
    paths = [SAMPLES / "bottlenecks.mprof", SAMPLES / "bottlenecks.pm.mprof"]
    want = summary_json(*paths)["kernels"]["items"]
    with mprof.open(*paths) as t:
        assert t.process_count == 2
        k = t.kernels()
    assert list(k["name"]) == [w["name"] for w in want]
    assert list(k["total_ns"]) == [w["total_ns"] for w in want]


def test_mkprof_opens_as_trace() -> None:
    """A Megakernels .mkprof opens as `mprof info` opens it."""
    path = SAMPLES / "gemm_source.mkprof"
    with mprof.open(path) as t:
        assert len(t.launches()) == info_sections(path)["LAUNCHES"]
        assert t.meta("capture.mode") == "mkprof"


def cli_error(path: Path) -> str:
    r = run_cli("info", str(path), check=False)
    assert r.returncode == 2
    return r.stderr.strip().removeprefix("mprof: ")


def test_missing_file_raises_library_message(tmp_path: Path) -> None:
    missing = tmp_path / "nope.mprof"
    with pytest.raises(mprof.MprofError) as e:
        mprof.open(missing)
    assert str(e.value) == cli_error(missing)
    assert str(missing) in str(e.value)
    assert e.value.status < 0 and e.value.code == "ENOTFOUND"


def test_truncated_file_raises_library_message(tmp_path: Path) -> None:
    cut = tmp_path / "cut.mprof"
    cut.write_bytes((SAMPLES / "demo.mprof").read_bytes()[:5000])
    with pytest.raises(mprof.MprofError) as e:
        mprof.open(cut)
    assert str(e.value) == cli_error(cut)
    assert e.value.code == "EFORMAT"


def test_not_a_trace(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mprof"
    junk.write_text("hello\n" * 100)
    with pytest.raises(mprof.MprofError, match="not an mprof trace") as e:
        mprof.open(junk)
    assert str(e.value) == cli_error(junk)


def test_library_not_found_names_the_fix(tmp_path: Path) -> None:
    env = dict(os.environ, MPROF_LIBRARY=str(tmp_path / "libmprof.so.0"),
               PYTHONPATH=str(Path(mprof.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, "-c", "import mprof"], env=env,
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode != 0
    assert "LibraryNotFoundError" in r.stderr
    assert "MPROF_LIBRARY must name a loadable libmprof.so.0" in r.stderr


def test_package_under_test() -> None:
    """The suite tests the copy it was pointed at (the tree, or what
    `pip install ./python` installed)."""
    want = os.environ.get("MPROF_TEST_PACKAGE")
    if want:
        assert Path(mprof.__file__).resolve().is_relative_to(
            Path(want).resolve())


def test_hostile_sidecar_raises_library_message(tmp_path: Path) -> None:
    """A sidecar that is not what it claims: the library's one line, as
    `mprof summary --sidecar` prints it."""
    bad = tmp_path / "bad.pc.json"
    bad.write_text('{"version": 1, "functions": [{"name": 7}]}')
    r = run_cli("summary", "--sidecar", str(bad), str(SAMPLES / "demo.mprof"),
                check=False)
    assert r.returncode == 2
    with pytest.raises(mprof.MprofError) as e:
        mprof.open(SAMPLES / "demo.mprof", sidecar=bad)
    assert str(e.value) == r.stderr.strip().removeprefix("mprof: ")
    assert str(bad) in str(e.value) and e.value.code == "EFORMAT"


def test_sidecar_required_but_missing(tmp_path: Path) -> None:
    lone = tmp_path / "lone.mprof"
    lone.write_bytes((SAMPLES / "demo.mprof").read_bytes())
    with pytest.raises(mprof.MprofError, match="no sidecar") as e:
        mprof.open(lone, sidecar=True)
    assert e.value.code == "ENOTFOUND"
    with mprof.open(lone) as t:
        assert not t.has_sidecar and len(t.kernels()) == 4


def test_library_found_through_pkg_config(tmp_path: Path) -> None:
    """Without MPROF_LIBRARY, pkg-config's libdir for mprof is where the
    package looks (an install with --prefix: set PKG_CONFIG_PATH)."""
    import shutil
    from mprof import _lib
    if not shutil.which("pkg-config") or os.sep not in _lib.loaded_from:
        pytest.skip("no pkg-config, or libmprof came from the loader's path")
    libdir = tmp_path / "lib"
    libdir.mkdir()
    (libdir / "libmprof.so.0").symlink_to(os.path.abspath(_lib.loaded_from))
    (tmp_path / "mprof.pc").write_text(
        f"libdir={libdir}\nName: mprof\nDescription: x\nVersion: 0.1.0\n"
        "Libs: -L${libdir} -lmprof\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPROF_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(PKG_CONFIG_PATH=str(tmp_path),
               PYTHONPATH=str(Path(mprof.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, "-c",
                        "import mprof._lib as l; print(l.loaded_from)"],
                       env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(libdir / "libmprof.so.0")


@pytest.mark.parametrize("name", ["demo.mprof", "multi_gpu.mprof"])
def test_devices_equal_info(name: str) -> None:
    """`mprof info`'s device line: name, compute capability, SMs, clock."""
    lines = [ln for ln in run_cli("info", str(SAMPLES / name)).stdout
             .splitlines() if ln.startswith("device ")]
    with mprof.open(SAMPLES / name) as t:
        dev = t.devices()
    assert len(dev) == len(lines)
    for (_, d), line in zip(dev.iterrows(), lines):
        ghz = d["core_clock_khz"] / 1e6
        cc = d["cc"].replace(".", "")
        assert line.split(None, 2)[2] == \
            f"{d['name']} (sm_{cc}, {d['sm_count']} SMs, {ghz:.2f} GHz)"
