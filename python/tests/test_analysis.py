"""Slice 2: NVTX ranges and API calls, PC samples with SASS and lines, PM
samples, spans and the diagnosis, against the CLI's reports."""

from __future__ import annotations

import json
import math

import pytest

import mprof

from conftest import SAMPLES, info_sections, run_cli, summary_json

SAMPLED = ["demo.mprof", "gemm.mprof", "transformer_forward.mprof",
           "nvtx_step.mprof"]


@pytest.mark.parametrize("name", SAMPLED)
def test_pc_samples_equal_summary(name: str) -> None:
    """Per kernel, the sampled instructions add up to the summary's
    samples and stall mix, and its hot instructions are the top rows with
    the same SASS, file and line."""
    want = summary_json(SAMPLES / name,
                        extra=["--hot", "1000"])["kernels"]["items"]
    with mprof.open(SAMPLES / name) as t:
        pcs = t.pc_samples()
        reasons = t.stall_reasons()
    plain = ["stall_" + r for r, ni in zip(reasons["name"],
                                           reasons["not_issued"])
             if not ni and "stall_" + r in pcs]
    # the plain reasons at an instruction add up to its samples
    assert (pcs[plain].sum(axis=1).values == pcs["samples"].values).all()
    for k, w in enumerate(want):
        mine = pcs[pcs["kernel"] == k]
        assert int(mine["samples"].sum()) == w["samples"], w["name"]
        if not w["samples"]:
            continue
        for r in w["stalls"]["reasons"]:
            assert int(mine["stall_" + r["name"]].sum()) == r["samples"]
        hot = w["hot"]["instructions"]
        assert hot and len(hot) <= len(mine)
        by_offset = mine.set_index(["cubin_crc", "offset"])
        for h in hot:
            row = by_offset.loc[(int(h["cubin_crc"], 16), h["offset"])]
            assert row["samples"] == h["samples"]
            assert row["sass"] == (h.get("sass") or "")
            assert row["file"] == (h.get("file") or "")
            assert row["line"] == (h.get("line") or 0)
        # the hot list is the head of the frame's order
        assert list(mine["samples"][:len(hot)]) == \
            [h["samples"] for h in hot]


def test_pc_samples_without_sidecar_have_no_sass() -> None:
    with mprof.open(SAMPLES / "gemm.mprof", sidecar=False) as t:
        assert not t.has_sidecar
        pcs = t.pc_samples(stalls=False)
    assert len(pcs) and (pcs["sass"] == "").all() and (pcs["line"] == 0).all()
    assert not any(c.startswith("stall_") for c in pcs)


@pytest.mark.parametrize("name", SAMPLED + ["gemm_pm.mprof",
                                            "gemm_source.mprof"])
def test_diagnosis_equals_summary(name: str) -> None:
    """The verdict, its dimension and state, and every dimension's state,
    gain and sentence are the summary's."""
    want = summary_json(SAMPLES / name)["kernels"]["items"]
    with mprof.open(SAMPLES / name) as t:
        diag, dims = t.diagnosis(), t.dimensions()
    for k, w in enumerate(want):
        row = diag.loc[k]
        assert row["name"] == w["name"]
        assert row["verdict"] == w["verdict"]["text"]
        assert row["dimension"] == (w["verdict"]["dimension"] or "")
        assert row["state"] == w["verdict"]["state"]
        assert (row["roof"] or None) == w["verdict"].get("roof")
        if w["verdict"].get("gain") is not None:
            assert round(row["gain"], 4) == pytest.approx(
                w["verdict"]["gain"], abs=1e-4)
            assert row["gain_of"] == w["verdict"]["gain_of"]
        mine = dims[dims["kernel"] == k].set_index("dimension")
        for key, d in w["dimensions"].items():
            assert mine.loc[key, "state"] == d["state"], key
            assert round(mine.loc[key, "cost"], 4) == pytest.approx(
                d["cost"], abs=1e-4), key
            assert round(mine.loc[key, "gain"], 4) == pytest.approx(
                d["gain"], abs=1e-4), key
            assert mine.loc[key, "gain_bound"] == d["gain_bound"], key
            assert mine.loc[key, "detail"] == d["detail"], key


def test_speed_of_light_equals_summary() -> None:
    """PM samples: every record, named by its counter, and each kernel's
    speed of light as the summary's throughput (percent vs fraction)."""
    path = SAMPLES / "gemm_pm.mprof"
    with mprof.open(path) as t:
        pm, diag = t.pm_samples(), t.diagnosis()
    assert len(pm) == info_sections(path)["PM_SAMPLES"] == 921
    assert "sm__cycles_active.avg.pct_of_peak_sustained_elapsed" in pm
    assert (pm["end"] >= pm["start"]).all()
    want = summary_json(path)["kernels"]["items"][0]["throughput"]
    assert diag.loc[0, "pm_samples"] == want["samples"] == 241
    for key in ["dram", "l2", "sm_active", "issue", "tensor"]:
        assert round(diag.loc[0, "sol_" + key] / 100, 4) == \
            pytest.approx(want[key], abs=1e-4), key
    assert math.isnan(diag.loc[0, "sol_fma"]) and want["fma"] is None


def test_spans_of_source_markers() -> None:
    """The 66,048 measured block spans: each in a launch of a kernel, in a
    named region, inside its launch's time."""
    path = SAMPLES / "gemm_source.mprof"
    with mprof.open(path) as t:
        spans, la = t.spans(), t.launches()
    assert len(spans) == info_sections(path)["SPANS"] == 66048
    assert spans["launch"].notna().all() and spans["warp"].isna().all()
    assert set(spans["region"]) == {"load tiles", "fma", "store C"}
    launch = la.loc[spans["launch"].astype(int)]
    assert (spans["kernel"].values == launch["kernel"].values).all()
    assert spans["sm"].nunique() == 132
    # aligned onto the launch's clock within the recorded error (351 ns)
    assert (spans["start"].values + 1000 >= launch["start"].values).all()
    assert (spans["end"].values <= launch["end"].values + 1000).all()


def test_spans_of_mkprof() -> None:
    path = SAMPLES / "gemm_source.mkprof"
    with mprof.open(path) as t:
        assert len(t.spans()) == info_sections(path)["SPANS"]


def test_pytorch_notebook_totals_equal_summary() -> None:
    """A notebook over the PyTorch sample: the frames' totals are the
    summary's (kernel time, launches per kernel, GPU time per NVTX range),
    and every launch finds the API call that issued it."""
    path = SAMPLES / "nvtx_step.mprof"
    summary = summary_json(path)["kernels"]["items"]
    by_range = json.loads(run_cli("summary", "--by-range", "--json", "--all",
                                  str(path)).stdout)
    with mprof.open(path) as t:
        kernels, launches = t.kernels(), t.launches()
        ranges, calls, times = t.ranges(), t.api_calls(), t.range_times()
    assert int(launches["duration_ns"].sum()) == \
        by_range["trace"]["kernel_time_ns"] == \
        sum(k["total_ns"] for k in summary)
    per_kernel = launches.groupby("name")["duration_ns"].sum()
    for k in summary:
        assert per_kernel[k["name"]] == k["total_ns"]
    assert len(ranges) == by_range["trace"]["range_records"] == 57
    assert len(calls) == by_range["trace"]["api_calls"] == 685
    assert launches["correlation_id"].isin(calls["correlation_id"]).all()
    issued = launches.merge(calls, on="correlation_id",
                            suffixes=("", "_call"))
    assert len(issued) == len(launches)
    assert (issued["start_call"] <= issued["start"]).all()
    assert set(calls["name"]) >= {"cudaLaunchKernel", "cudaMemcpyAsync"}
    items = by_range["ranges"]["items"]
    assert len(times) == len(items)
    for (_, row), w in zip(times.iterrows(), items):
        assert row["name"] == w["name"]
        assert row["domain"] == (w["domain"] or "")
        for f in ["kernel_ns", "launches", "copies", "copy_ns", "instances",
                  "host_ns", "inclusive_ns", "inclusive_launches",
                  "inclusive_copies", "inclusive_copy_ns",
                  "borrowed_launches", "depth"]:
            assert row[f] == w[f], (w["name"], f)
        assert row["open_instances"] == w["open_at_cut"]
        assert row["parent"] == w["parent"]
    data = ranges[ranges["domain"] == "data"]
    assert len(data) == 4 and (data["color"] != 0).all()
    # instances per name, from the records, as the report counts them
    counts = ranges.groupby(["name", "domain"]).size()
    for w in items:
        assert counts[(w["name"], w["domain"] or "")] == w["instances"]


def test_trace_without_api_calls_gives_empty_frames() -> None:
    with mprof.open(SAMPLES / "demo.mprof") as t:
        assert len(t.api_calls()) == 0 and len(t.ranges()) == 0
        assert len(t.spans()) == 0 and len(t.pm_samples()) == 0
        assert list(t.api_calls().columns)[:2] == ["name", "api"]


def test_stall_columns_in_the_summary_order() -> None:
    """One kernel: the plain reasons' columns come in the order of the
    summary's stall mix, largest first."""
    want = summary_json(SAMPLES / "gemm.mprof")["kernels"]["items"][0]
    with mprof.open(SAMPLES / "gemm.mprof") as t:
        pcs, reasons = t.pc_samples(), t.stall_reasons()
    plain = set(reasons["name"][~reasons["not_issued"]])
    cols = [c[6:] for c in pcs if c.startswith("stall_") and c[6:] in plain]
    shown = [r["name"] for r in want["stalls"]["reasons"]]
    assert cols[:len(shown)] == shown
