"""The cffi declarations (mprof/_cdef.py) against the C headers: every
struct the package reads has the size and field offsets the compiler
gives the real header's struct, so a header change that the declarations
miss fails here instead of reading the wrong bytes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mprof._lib import ffi

from conftest import ROOT

HEADERS = ["format.h", "trace.h", "sidecar.h", "join.h", "diagnose.h",
           "throughput.h", "ranges.h", "ranks.h"]


def test_struct_layouts_match_the_headers(tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler to read the headers with")
    structs = [n for n in ffi.list_types()[0]
               if ffi.typeof(n).kind == "struct" and
               ffi.typeof(n).fields is not None]  # not the opaque handles
    assert "mprof_launch_record" in structs and \
        "mprof_kernel_diagnosis" in structs
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += [f'#include "mprof/{h}"' for h in HEADERS]
    lines.append("int main(void) {")
    want = []
    for name in structs:
        lines.append(f'  printf("{name} %zu\\n", sizeof({name}));')
        want.append(f"{name} {ffi.sizeof(name)}")
        for field, f in ffi.typeof(name).fields:
            lines.append(f'  printf("{name}.{field} %zu\\n", '
                         f'offsetof({name}, {field}));')
            want.append(f"{name}.{field} {f.offset}")
    lines.append("  return 0;\n}")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", str(ROOT / "libmprof/include"),
                    "-o", str(exe), str(src)], check=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True,
                         text=True).stdout.split("\n")[:-1]
    assert got == want

