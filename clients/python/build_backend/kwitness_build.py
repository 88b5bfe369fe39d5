# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for the pure-Python kwitness package, in the
standard library alone, so that `pip install ./clients/python` needs no
network (pip would otherwise fetch setuptools into an isolated build
environment). It builds a wheel (PEP 427: the package's files, METADATA,
WHEEL and RECORD) and an sdist. The version is kwitness.__version__ (one
definition); the rest of the metadata is pyproject.toml's [project] table."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "kwitness"
TAG = "py3-none-any"


def _project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    with open(os.path.join(ROOT, PACKAGE, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if m is None:
        raise RuntimeError(f"{PACKAGE}/__init__.py has no __version__")
    project["version"] = m.group(1)
    return project


def _metadata(p: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}",
             f"License: {p['license']['text']}"]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    readme = os.path.join(ROOT, p["readme"])
    with open(readme, encoding="utf-8") as f:
        body = f.read()
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _package_files() -> list[str]:
    out = []
    for name in sorted(os.listdir(os.path.join(ROOT, PACKAGE))):
        if name.endswith(".py") or name == "py.typed":
            out.append(f"{PACKAGE}/{name}")
    return out


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    info = f"{dist}.dist-info"
    files: list[tuple[str, bytes]] = []
    for rel in _package_files():
        with open(os.path.join(ROOT, rel), "rb") as f:
            files.append((rel, f.read()))
    files.append((f"{info}/METADATA", _metadata(p).encode()))
    files.append((f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: kwitness_build\n"
                                   f"Root-Is-Purelib: true\nTag: {TAG}\n").encode()))
    record = [_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{dist}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return name


def build_sdist(sdist_directory, config_settings=None) -> str:
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    name = f"{dist}.tar.gz"
    rels = _package_files() + ["pyproject.toml", "README.md", "build_backend/kwitness_build.py"]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel in rels:
            with open(os.path.join(ROOT, rel), "rb") as f:
                data = f.read()
            ti = tarfile.TarInfo(f"{dist}/{rel}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
            t.addfile(ti, io.BytesIO(data))
        meta = _metadata(p).encode()
        ti = tarfile.TarInfo(f"{dist}/PKG-INFO")
        ti.size, ti.mode, ti.mtime = len(meta), 0o644, 0
        t.addfile(ti, io.BytesIO(meta))
    return name
