"""A PEP 517 build backend for the pure-Python mprof package.

It needs nothing but the standard library, so ``pip install ./python``
works on a machine that cannot download setuptools into pip's isolated
build environment: the wheel is the ``mprof`` folder plus its metadata.
"""

import base64
import hashlib
import os
import zipfile

NAME = "mprof"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: mprof traces as pandas DataFrames, over libmprof's C ABI
License: MIT
Requires-Python: >=3.9
Requires-Dist: cffi
Requires-Dist: numpy
Requires-Dist: pandas
Provides-Extra: dask
Requires-Dist: dask; extra == "dask"
Requires-Dist: distributed; extra == "dask"

mprof's Python package: see README.md beside pyproject.toml.
"""

WHEEL = f"""Wheel-Version: 1.0
Generator: mprof_build
Root-Is-Purelib: true
Tag: {TAG}
"""


def _digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + h.rstrip(b"=").decode()


def _files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(pkg, name), "rb") as f:
                yield f"{NAME}/{name}", f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    dist_info = f"{NAME}-{VERSION}.dist-info"
    filename = f"{NAME}-{VERSION}-{TAG}.whl"
    entries = list(_files())
    entries.append((f"{dist_info}/METADATA", METADATA.encode()))
    entries.append((f"{dist_info}/WHEEL", WHEEL.encode()))
    record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    path = os.path.join(wheel_directory, filename)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)),
                       data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", NAME, "build_backend"]:
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}",
                  filter=lambda i: None if "__pycache__" in i.name else i)
        info = METADATA.encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(info)
        import io
        t.addfile(ti, io.BytesIO(info))
    return filename
