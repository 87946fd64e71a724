"""Test helpers: build small bundles and take them apart the way an attacker would.

The one place that builds hostile bundles: read a bundle's members (gzip or zstd), change
them, add to them or splice raw tar bytes in, and write the result compressed as its
file name says (``.zst``: zstd, else gzip)."""

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
import zstandard

from bundler.authoring.build import build

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "bundles" / "quickstart"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass
class Entry:
    """One archive member as an attacker may write it."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    size: int | None = None  # header size, when it should lie


def decompress(data: bytes) -> bytes:
    """The tar stream inside a gzip or zstd bundle's bytes."""
    if data.startswith(ZSTD_MAGIC):
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    return gzip.decompress(data)


def compress(raw: bytes, zstd: bool) -> bytes:
    if zstd:
        return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(raw)
    return gzip.compress(raw, mtime=0)


def raw_tar(bundle: Path) -> bytes:
    """The tar stream inside a gzip or zstd bundle."""
    return decompress(bundle.read_bytes())


def put(target: Path, raw: bytes) -> Path:
    """Write a tar stream compressed as ``target``'s name says (``.zst``, else gzip)."""
    target.write_bytes(compress(raw, target.name.endswith(".zst")))
    return target


def read_entries(bundle: Path) -> list[Entry]:
    out = []
    with tarfile.open(fileobj=io.BytesIO(raw_tar(bundle))) as tar:
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
    return put(target, raw.getvalue())


def with_entries(bundle: Path, target: Path, *extra: Entry, fmt: int = tarfile.PAX_FORMAT) -> Path:
    """``bundle`` with ``extra`` members after its own."""
    return write_entries([*read_entries(bundle), *extra], target, fmt)


def tar_end(raw: bytes) -> int:
    """Where the end-of-archive marker of a tar stream starts (after the last member)."""
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        last = tar.getmembers()[-1]
    return last.offset_data + -(-last.size // 512) * 512


def with_raw_member(bundle: Path, target: Path, member: bytes) -> Path:
    """``bundle`` with raw tar bytes (headers tarfile would not write) before its end."""
    raw = raw_tar(bundle)
    return put(target, raw[: tar_end(raw)] + member + bytes(1024))


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


def with_input(bundle: Path, target: Path, path: str, data: bytes) -> Path:
    """``bundle`` with one case input replaced, its hash and size kept honest: what an
    author (or an attacker who builds their own bundle) can put before a checker."""
    return edit_manifest(bundle, target, lambda doc: None, {path: data})


def build_quickstart(tmp: Path, epoch: int = 1700000000, suffix: str = ".tar.gz") -> Path:
    return build(QUICKSTART, tmp / f"quickstart.bundle{suffix}", epoch).path


def copy_source(tmp: Path, source: Path = QUICKSTART) -> Path:
    target = tmp / "src"
    shutil.copytree(source, target)
    return target


def key_files(folder: Path, *names: str) -> dict[str, Path]:
    """An unencrypted Ed25519 key pair per name: ``NAME.key`` and ``NAME.pub`` in
    ``folder``; each name maps to ``folder/NAME`` (add the suffix you need)."""
    from bundler.signatures.signing import new_private_key, private_key_pem, public_of

    out = {}
    for name in names:
        key = new_private_key()
        (folder / f"{name}.key").write_bytes(private_key_pem(key, None))
        (folder / f"{name}.pub").write_text(public_of(key).pem())
        out[name] = folder / name
    return out


def refuse_backtracking(
    monkeypatch: Any, target: object, name: str = "search"
) -> Callable[..., Any]:
    """``target.name`` replaced, for the test, by a function that fails it: a pattern
    must never reach Python's backtracking engine there. Returns the replacement."""

    def backtracking(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Python's backtracking engine was used")

    monkeypatch.setattr(target, name, backtracking)
    return backtracking
