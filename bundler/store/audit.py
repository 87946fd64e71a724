"""The audit log as the archive keeps it: appending, checkpoints, and the checks of the
index and the trust store against the log. (``auditlog`` holds the pure rules of the
record chain; ``reconcile`` what the log says the index holds.)
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bundler import __version__
from bundler.atomic import write_atomic
from bundler.errors import Problem
from bundler.store import auditlog, checkpoint, index, reconcile, trust
from bundler.store.errors import ArchiveError, ArchiveTampered
from bundler.store.objects import DIGEST_RE, Unreadable, read_regular

if TYPE_CHECKING:
    from bundler.store.archive import Archive

TOOL = f"reprobundle {__version__}"


def now() -> str:
    """The local clock, in UTC, to the microsecond. Not a trusted time source."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def actor() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()}"


@dataclass(frozen=True)
class LogReport:
    """What ``log verify`` found: the log's size and head, how many checkpoints it was
    checked against, and every problem (none: consistent)."""

    size: int
    head: str
    checkpoints: int
    problems: list[Problem]

    @property
    def exit_code(self) -> int:
        return ArchiveTampered.exit_code if self.problems else 0

    @property
    def summary(self) -> str:
        if self.problems:
            return (
                f"the audit log is NOT consistent: {len(self.problems)} problem(s) "
                f"({self.size} records read)"
            )
        return (
            f"audit log consistent: {self.size} records, head {self.head}, "
            f"checked against {self.checkpoints} checkpoint(s)"
        )

    def failure(self) -> ArchiveTampered | None:
        """The problems as the error to report (None when the log is consistent)."""
        return ArchiveTampered(self.summary, self.problems) if self.problems else None


# -- appending -------------------------------------------------------------------------------


def head(conn: sqlite3.Connection) -> tuple[int, str]:
    """The log's size and head hash, after checking the head record's own hash."""
    row = index.last_record(conn)
    if row is None:
        return 0, auditlog.GENESIS
    actual = auditlog.record_hash(row.record)
    if actual != row.hash:
        raise ArchiveTampered(
            "the audit log's last record was edited; refusing to extend it",
            [
                Problem(
                    f"audit log record {row.seq}",
                    "log.edited",
                    f"hashes to {actual}, stored {row.hash}",
                )
            ],
        )
    return row.seq, actual


def append(conn: sqlite3.Connection, event: str, data: dict[str, Any], at: str | None) -> int:
    """Append one record (at ``at``, the time the index rows it describes carry; default
    now). Call inside a write transaction."""
    seq, prev = head(conn)
    record = auditlog.make_record(seq + 1, prev, at or now(), event, actor(), TOOL, data)
    index.insert_records(conn, [auditlog.Row(seq + 1, record, auditlog.record_hash(record))])
    return seq + 1


def records(conn: sqlite3.Connection, tail: int | None = None) -> list[bytes]:
    """The exact record bytes, oldest first (the last ``tail`` only, when given)."""
    if tail is None:
        return [r.record for r in index.records(conn)]
    return index.last_records(conn, tail)


# -- checkpoints -----------------------------------------------------------------------------


def last_checkpoint(conn: sqlite3.Connection) -> tuple[int, str] | None:
    """The size and head of the last checkpoint this archive issued, if any."""
    text = index.meta(conn, "last_checkpoint")
    if not text:
        return None
    try:
        last = json.loads(text)
        return int(last["size"]), str(last["head"])
    except (ValueError, TypeError, KeyError):
        raise ArchiveTampered(
            "the record of the last checkpoint this archive issued is damaged",
            [Problem("index meta", "log.checkpoint_record", f"observed {text[:200]!r}")],
        ) from None


def check_last_checkpoint(conn: sqlite3.Connection) -> None:
    """The quick check every command makes: the log still holds the record the last
    issued checkpoint pinned, with the same hash."""
    last = last_checkpoint(conn)
    if last is None:
        return
    size, pinned = last
    record = index.record_at(conn, size)
    observed = auditlog.record_hash(record) if record is not None else None
    if record is None or observed != pinned or index.records_upto(conn, size) != size:
        raise ArchiveTampered(
            "the audit log no longer matches the last checkpoint this archive issued; "
            "run 'reprobundle archive log verify' with a checkpoint kept elsewhere",
            [
                Problem(
                    "last checkpoint",
                    "log.checkpoint_mismatch",
                    f"record {size} should hash to {pinned}, observed "
                    f"{observed or 'no such record'}",
                )
            ],
        )


def issue(archive: Archive) -> checkpoint.Checkpoint:
    """Sign the log's current size and head hash; remember it, keep a copy in
    ``checkpoints/``, and log that it was issued."""
    key = checkpoint.load_private(archive.key_path)
    with archive._write("issue a checkpoint"), index.transaction(archive.conn):
        size, last = head(archive.conn)
        issued = checkpoint.issue(key, archive.archive_id, size, last, now())
        index.set_meta(archive.conn, "last_checkpoint", json.dumps({"size": size, "head": last}))
        archive._append("checkpoint", {"size": size, "head": last})
        archive.checkpoints.mkdir(exist_ok=True)
        write_atomic(
            archive.checkpoints / f"{size:010d}-{last[:16]}.json", issued.to_json().encode()
        )
    return issued


def _pinned(
    archive: Archive, extra: Sequence[Path], problems: list[Problem]
) -> list[tuple[str, checkpoint.Checkpoint]]:
    """The checkpoints the archive kept and those given, each checked against the
    archive's key (the ones that cannot be read are problems, not checkpoints); one given
    that the archive also kept (a copy of the same bytes) is one checkpoint, not two."""
    public = checkpoint.load_public(archive.key_path.with_suffix(".pub"))
    pinned = []
    seen: set[bytes] = set()
    kept = sorted(archive.checkpoints.glob("*.json")) if archive.checkpoints.is_dir() else []
    for path in [*kept, *extra]:
        where = f"checkpoint {path}"
        try:  # a regular file, bounded, parsed strictly: the archive folder is untrusted
            text = read_regular(Path(path), checkpoint.MAX_FILE_BYTES)
        except Unreadable as exc:
            if path not in kept:
                raise ArchiveError(f"cannot read the checkpoint: {exc.why}") from None
            problems.append(Problem(where, "checkpoint.format", exc.why))
            continue
        try:
            if text in seen:
                continue
            seen.add(text)
            issued = checkpoint.parse(text, where)
        except ArchiveTampered as exc:
            problems.extend(exc.problems)
            continue
        problems.extend(checkpoint.check(issued, public, archive.archive_id, where))
        pinned.append((where, issued))
    return pinned


# -- the checks ------------------------------------------------------------------------------


def verify_log(archive: Archive, extra: Sequence[Path] = ()) -> LogReport:
    """Walk the whole chain, check it against every checkpoint (the ones this archive
    kept and any given), and cross-check the index against the log. Collects every
    problem; never raises for what it finds."""
    problems: list[Problem] = []
    pinned = _pinned(archive, extra, problems)
    with index.snapshot(archive.conn):  # the log and the rows as of one moment
        try:
            remembered = last_checkpoint(archive.conn)
        except ArchiveTampered as exc:
            problems.extend(exc.problems)
            remembered = None
        sizes = [c.size for _, c in pinned] + ([remembered[0]] if remembered else [])
        state = auditlog.walk(index.records(archive.conn), sizes)
        problems.extend(state.problems)
        for where, issued in pinned:
            problems.extend(auditlog.against_checkpoint(state, issued.size, issued.head, where))
        if remembered:
            problems.extend(
                auditlog.against_checkpoint(state, *remembered, "the last checkpoint issued")
            )
        problems.extend(against_log(archive, state.records))
    return LogReport(state.size, state.head, len(pinned), problems)


def against_log(archive: Archive, records: list[dict[str, Any]]) -> list[Problem]:
    """Every index row and the trust store, checked against what the log says."""
    derived = reconcile.replay(records)
    problems = reconcile.compare(archive.conn, derived)
    problems.extend(trust.differences(archive, derived.trust, derived.trust_ids))
    return problems


def refuse_unless_consistent(archive: Archive) -> None:
    """Refuse (``ArchiveTampered``) when the log's chain is broken or the index or the
    trust store is not what the log says: run before trusting either."""
    with index.snapshot(archive.conn):
        state = auditlog.walk(index.records(archive.conn))
        problems = state.problems + against_log(archive, state.records)
    if problems:
        raise ArchiveTampered(
            "the archive's index or trust store does not match its audit log; nothing "
            "was run ('reprobundle archive log verify' lists every difference; "
            "'reprobundle archive rebuild' rebuilds the index from the log and the store)",
            problems,
        )


def consistency(archive: Archive) -> list[Problem]:
    """Store against index: every row's object is present and intact, and no
    half-written object is visible. (Objects no row names are leftovers of an
    interrupted add: harmless, not problems.)"""
    problems = []
    for digest in index.digests(archive.conn):
        why = archive.store.check(digest)
        if why:
            problems.append(Problem(f"bundle {digest}", "store.object", why))
    for name in archive.store.digests():
        if not DIGEST_RE.match(name):
            problems.append(Problem(name, "store.partial", "a non-object file in the store"))
    return problems
