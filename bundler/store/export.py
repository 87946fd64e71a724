"""Exporting a stored bundle: its bytes copied out atomically, their digest checked on
the way (a rotted object is refused, and the refusal logged, never exported)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from bundler.errors import Problem
from bundler.format.hashing import CHUNK
from bundler.output import staged as staged_output
from bundler.store import index, query
from bundler.store.errors import ArchiveError, ArchiveTampered, os_failure
from bundler.store.index import BundleRow

if TYPE_CHECKING:
    from bundler.store.archive import Archive


def export(archive: Archive, selector: str, out: Path) -> BundleRow:
    """Copy a stored bundle to ``out`` atomically, checking its digest on the way."""
    bundle = archive._bundle(query.resolve_one(archive.conn, selector))
    out = Path(out).absolute()
    if out.is_dir():
        raise ArchiveError(f"{out} is a folder; -o takes the path of the file to write")
    source = archive.store.path(bundle.digest)
    refused = f"refusing to export {bundle.name}@{bundle.version}"
    try:
        with staged_output(out, "the exported bundle") as tmp:
            observed = _copy(source, tmp)
            if observed != bundle.digest:
                why = f"bit rot: the stored bytes hash to {observed}, expected {bundle.digest}"
                archive._log_refusal(
                    {
                        "action": "export",
                        "digest": bundle.digest,
                        "to": str(out),
                        "codes": ["store.rotted"],
                    }
                )
                raise ArchiveTampered(refused, [Problem(str(source), "store.rotted", why)])
    except FileNotFoundError as exc:
        if exc.filename == str(source):
            raise ArchiveTampered(
                refused, [Problem(str(source), "store.missing", "the stored object is missing")]
            ) from None
        raise os_failure(exc, "write the exported bundle", out) from None
    except OSError as exc:
        raise os_failure(exc, "write the exported bundle", out) from None
    with archive._write("record the export"), index.transaction(archive.conn):
        archive._append("export", {"digest": bundle.digest, "to": str(out)})
    return bundle


def _copy(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target``; the SHA-256 of the bytes copied."""
    hasher = hashlib.sha256()
    with target.open("wb") as stream, source.open("rb") as stored:
        while chunk := stored.read(CHUNK):
            hasher.update(chunk)
            stream.write(chunk)
    return hasher.hexdigest()
