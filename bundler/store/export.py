"""Exporting a stored bundle: its bytes copied out atomically, their digest checked on
the way (a rotted object is refused, and the refusal logged, never exported)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import BinaryIO

from bundler.errors import Problem
from bundler.format.hashing import CHUNK
from bundler.output import staged as staged_output
from bundler.store import index, query
from bundler.store.context import Context
from bundler.store.copies import chosen
from bundler.store.errors import ArchiveError, ArchiveTampered, os_failure
from bundler.store.index import BundleRow
from bundler.store.objects import Unreadable
from bundler.store.reconcile import logged_bundle


def export(context: Context, selector: str, out: Path, copy: str | None = None) -> BundleRow:
    """Copy a stored bundle to ``out`` atomically, checking its row against the log
    first and its digest on the way. ``copy`` (``full`` or ``redacted``) picks that copy
    of the identity the selector names; by default the full one when held, or the copy
    a file digest names."""
    digest = query.resolve_one(context.conn, selector)
    if copy is not None:
        named = query.bundle(context.conn, digest)
        held = index.copies_of(context.conn, named.name, named.version)
        digest = chosen([r for r in held if r.identity == named.identity], copy, selector).digest
    bundle = logged_bundle(context.conn, digest)
    out = Path(out).absolute()
    if out.is_dir():
        raise ArchiveError(f"{out} is a folder; -o takes the path of the file to write")
    source = context.store.path(bundle.digest)
    refused = f"refusing to export {bundle.name}@{bundle.version}"
    try:
        with (
            context.store.reading(bundle.digest, bundle.size) as stored,
            staged_output(out, "the exported bundle") as tmp,
        ):
            observed = _copy(stored, tmp)
            if observed != bundle.digest:
                why = f"bit rot: the stored bytes hash to {observed}, expected {bundle.digest}"
                context.log_refusal(
                    {
                        "action": "export",
                        "digest": bundle.digest,
                        "to": str(out),
                        "codes": ["store.rotted"],
                    }
                )
                raise ArchiveTampered(refused, [Problem(str(source), "store.rotted", why)])
    except Unreadable as exc:
        code = "store.missing" if exc.missing else "store.object"
        raise ArchiveTampered(refused, [Problem(str(source), code, exc.why)]) from None
    except OSError as exc:
        raise os_failure(exc, "write the exported bundle", out) from None
    with context.transaction("record the export"):
        context.append("export", {"digest": bundle.digest, "to": str(out), "copy": bundle.copy})
    return bundle


def _copy(stored: BinaryIO, target: Path) -> str:
    """Copy ``stored`` to ``target``; the SHA-256 of the bytes copied."""
    hasher = hashlib.sha256()
    with target.open("wb") as stream:
        while chunk := stored.read(CHUNK):
            hasher.update(chunk)
            stream.write(chunk)
    return hasher.hexdigest()
