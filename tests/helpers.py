"""Test helpers: build small bundles and take them apart the way an attacker would."""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import tarfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from bundler.authoring.build import build

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "bundles" / "quickstart"


@dataclass
class Entry:
    """One archive member as an attacker may write it."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    size: int | None = None  # header size, when it should lie


def read_entries(bundle: Path) -> list[Entry]:
    out = []
    with tarfile.open(bundle, "r:gz") as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read() if member.isreg() else b""  # type: ignore[union-attr]
            out.append(Entry(member.name, data, member.type, member.linkname))
    return out


def write_entries(entries: list[Entry], target: Path, fmt: int = tarfile.PAX_FORMAT) -> Path:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.type = entry.type
            info.linkname = entry.linkname
            info.mode = 0o644
            if entry.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
                info.size = len(entry.data) if entry.size is None else entry.size
                tar.addfile(info, io.BytesIO(entry.data))
            else:
                tar.addfile(info)
    target.write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    return target


def edit_manifest(
    bundle: Path,
    target: Path,
    edit: Callable[[dict[str, Any]], None],
    files: dict[str, bytes] | None = None,
) -> Path:
    """Rewrite a bundle with an edited manifest (and replaced files), hashes kept honest."""
    entries = read_entries(bundle)
    manifest_entry = entries[0]
    doc = tomllib.loads(manifest_entry.data.decode())
    top = manifest_entry.name.split("/")[0]
    by_path = {e.name[len(top) + 1 :]: e for e in entries[1:]}
    for path, data in (files or {}).items():
        if path in by_path:
            by_path[path].data = data
        else:
            entries.append(Entry(f"{top}/{path}", data))
            doc["files"].append({"path": path, "sha256": "", "size": 0})
    for record in doc["files"]:
        data = by_path[record["path"]].data if record["path"] in by_path else files[record["path"]]  # type: ignore[index]
        record["sha256"] = hashlib.sha256(data).hexdigest()
        record["size"] = len(data)
    edit(doc)
    manifest_entry.data = tomli_w.dumps(doc).encode()
    return write_entries(entries, target)


def build_quickstart(tmp: Path, epoch: int = 1700000000) -> Path:
    return build(QUICKSTART, tmp / "quickstart.bundle.tar.gz", epoch).path


def copy_source(tmp: Path, source: Path = QUICKSTART) -> Path:
    target = tmp / "src"
    shutil.copytree(source, target)
    return target
