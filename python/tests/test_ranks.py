"""mprof.ranks on Dask against `mprof ranks`: 8 synthetic ranks (`mprof synth
--steps`) with a straggler planted on rank 5 (gemm_tiled four times slower
in step 2) give the same report through a LocalCluster of two worker
processes as through the CLI, and the report names the rank, the step and
the kernel. The rank table's bytes survive a round trip and bad bytes are
refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

import mprof
from mprof import _ranks as ranks_mod

from conftest import run_cli

pytest.importorskip("distributed")


def synth_job(folder: Path, count: int = 8, straggler: int = 5) -> List[str]:
    folder.mkdir()
    paths = []
    for r in range(count):
        path = folder / f"rank{r}.mprof"
        slow = (["--slowdown", "300", "--slow-kernel", "0", "--slow-step",
                 "2"] if r == straggler else [])
        run_cli("synth", "-o", str(path), "--launches", "2000", "--steps",
                "6", "--seed", "3", "--timing-seed", str(r + 1), "--meta",
                f"rank={r}", "--meta", f"world_size={count}", *slow)
        paths.append(str(path))
    return paths


def test_dask_and_cli_give_the_same_report(tmp_path: Path) -> None:
    paths = synth_job(tmp_path / "job")
    report = mprof.ranks(paths, workers=2)
    cli = run_cli("ranks", "--json", *paths).stdout
    assert report.json == cli
    assert report.xml == run_cli("ranks", "--xml", *paths).stdout
    assert report.text == run_cli("ranks", "--human", "--color=never",
                                  *paths).stdout
    s = report.stragglers
    assert list(s["rank"]) == [5]
    assert list(s["step"]) == [2]
    assert s["kernel"][0].startswith("gemm_tiled")
    assert s["kernel_ns"][0] > 3 * s["median_kernel_ns"][0]
    steps = report.steps
    assert len(steps) == 8 * 6
    assert set(steps["rank"]) == set(range(8))
    assert (steps["busy_ns"] + steps["idle_ns"] == steps["window_ns"]).all()
    assert "rank 5" in report.text and "step 2" in report.text


def test_a_directory_is_its_traces(tmp_path: Path) -> None:
    synth_job(tmp_path / "job", count=3, straggler=1)
    folder = str(tmp_path / "job")
    assert ranks_mod.expand(folder) == [f"{folder}/rank{r}.mprof"
                                        for r in range(3)]
    # The reduce alone, without Dask: the same as the CLI on the folder.
    tables = [ranks_mod.table_bytes(p) for p in ranks_mod.expand(folder)]
    reports = ranks_mod.reduce_tables(tables)
    assert reports["json"] == run_cli("ranks", "--json", folder).stdout
    assert json.loads(reports["json"])["stragglers"][0]["rank"] == 1


def test_bad_table_bytes_are_refused(tmp_path: Path) -> None:
    paths = synth_job(tmp_path / "job", count=2, straggler=1)
    good = ranks_mod.table_bytes(paths[0])
    with pytest.raises(mprof.MprofError) as e:
        ranks_mod.reduce_tables([good, good[:-3]])
    assert e.value.code == "EFORMAT" and "rank table" in str(e.value)
    with pytest.raises(mprof.MprofError) as e:
        ranks_mod.reduce_tables([good, good])
    assert "both rank 0" in str(e.value)
    with pytest.raises(ValueError):
        mprof.ranks([], workers=1)
