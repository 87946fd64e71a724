"""The copies of one identity the archive holds: its full bundle, redacted copies of it
(``reprobundle redact``: the same manifest, so the same identity, some files withheld),
or both, each stored by its own file digest.

``add`` stores a redacted copy beside the full one (or the reverse) under the identity
they share; a copy of NAME@VERSION with another identity is refused as before. Where one
copy is meant (``show``, ``verify``, ``export`` of NAME@VERSION, an identity, ``--all``),
it is the full copy when held (``preferred``); a file digest names its copy. An index
migrated from schema 4 learns which of its rows are redacted copies from their stored
objects (``after_migration``), and logs what it found, so that a replay of the log
knows it too.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bundler.errors import BundleRejected, Problem
from bundler.store import index
from bundler.store.context import Context
from bundler.store.errors import ArchiveError
from bundler.store.index import BundleRow
from bundler.store.objects import Unreadable, open_object

# the schema from which the index records which copy each row is
COPIES_SCHEMA = 5
COPIES = ("full", "redacted")

__all__ = [
    "COPIES",
    "COPIES_SCHEMA",
    "after_migration",
    "chosen",
    "describe",
    "preferred",
    "withheld_of_object",
]


def withheld_of_object(path: Path, size: int | None = None) -> int | None:
    """How many files a stored bundle file withholds (None: it is a full bundle), read
    and checked as ``add`` reads it. Raises ``BundleRejected``."""
    from bundler.container.extract import extract

    try:
        with (
            open_object(path, size) as stored,
            tempfile.TemporaryDirectory(prefix="reprobundle-copy-") as work,
        ):
            record = extract(path, Path(work), stream=stored, wanted=lambda _: ()).withheld
    except Unreadable as exc:
        raise BundleRejected(exc.why, [Problem(str(path), "store.object", exc.why)]) from None
    return None if record is None else len(record.files)


def after_migration(context: Context, old: int, new: int) -> None:
    """Log a migration (inside its transaction); from below schema 5, first read which
    rows are redacted copies from their objects and record each in the row and in the log
    record (``redacted``: digest -> files withheld; ``unread``: the objects that could not
    be read, left as full copies until a rebuild reads them)."""
    data: dict[str, Any] = {"from": old, "to": new}
    if old < COPIES_SCHEMA <= new:
        redacted: dict[str, int] = {}
        unread: list[str] = []
        for row, _ in index.all_bundles(context.conn):
            try:
                withheld = withheld_of_object(context.store.path(row.digest), row.size)
            except BundleRejected:
                unread.append(row.digest)
                continue
            if withheld is not None:
                index.set_withheld(context.conn, row.digest, withheld)
                redacted[row.digest] = withheld
        if redacted:
            data["redacted"] = dict(sorted(redacted.items()))
        if unread:
            data["unread"] = sorted(unread)
    context.append("migrate", data)


def preferred(rows: Sequence[BundleRow]) -> BundleRow:
    """The copy that stands for an identity: the full one when held, else the redacted
    one added first."""
    return min(rows, key=lambda r: (r.withheld is not None, r.added_at, r.digest))


def describe(rows: Sequence[BundleRow]) -> str:
    """Which copies are held: ``full``, ``redacted: N files withheld``, or both."""
    return ", ".join(r.copy_text for r in sorted(rows, key=_order))


def chosen(rows: Sequence[BundleRow], copy: str | None, selector: str) -> BundleRow:
    """The copy asked for among ``rows`` (one identity's): ``full``, ``redacted``, or None
    (the preferred one). Raises ``ArchiveError`` when it is not held, or when several
    redacted copies are (then its file digest names it)."""
    if copy is None:
        return preferred(rows)
    if copy not in COPIES:
        raise ArchiveError(f"--copy {copy}: give one of {', '.join(COPIES)}")
    found = sorted((r for r in rows if r.copy == copy), key=_order)
    if not found:
        raise ArchiveError(
            f"the archive holds no {copy} copy of {selector} (it holds: {describe(rows)})"
        )
    if len(found) > 1:
        raise ArchiveError(
            f"the archive holds {len(found)} {copy} copies of {selector} "
            f"({', '.join(r.digest[:16] for r in found)}); name one by its file digest"
        )
    return found[0]


def _order(row: BundleRow) -> tuple[bool, str, str]:
    return row.withheld is not None, row.added_at, row.digest
