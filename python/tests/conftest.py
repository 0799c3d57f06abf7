"""Shared fixtures: the committed samples and the `mprof` command that the
tests compare the package with (MPROF_CLI, else `mprof` on PATH)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def cli_path() -> str:
    cli = os.environ.get("MPROF_CLI") or shutil.which("mprof")
    if not cli:
        pytest.fail("set MPROF_CLI to the mprof command (build/bin/mprof)")
    return cli


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([cli_path(), *args], capture_output=True,
                          text=True, check=check, timeout=300)


def summary_json(*paths: Path, extra: List[str] = ()) -> Any:
    out = run_cli("summary", "--json", "--all", *extra,
                  *[str(p) for p in paths]).stdout
    return json.loads(out)


def chrome_events(path: Path, tmp_path: Path) -> List[dict]:
    out = tmp_path / "trace.json"
    run_cli("export", "--format", "chrome", "-q", "-o", str(out), str(path))
    data = json.loads(out.read_text())
    return data["traceEvents"] if isinstance(data, dict) else data


def info_sections(path: Path) -> dict:
    """The `sections` line of `mprof info`: {"LAUNCHES": 50, ...}."""
    for line in run_cli("info", str(path)).stdout.splitlines():
        if line.startswith("sections"):
            return {k: int(v) for k, v in
                    (w.split("=") for w in line.split()[1:])}
    raise AssertionError("mprof info printed no sections line")


@pytest.fixture
def samples() -> Path:
    return SAMPLES
