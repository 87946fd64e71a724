"""Signed statements an archive keeps beside its bundles: pre-registrations and
attestations of verifications.

Each is stored in the object store under the SHA-256 of its bytes and recorded in the
audit log (events ``preregister`` and ``attest``), so the log's signed checkpoints show
that it existed no later than that entry: the one thing a pre-registration cannot show
by itself. Both are read as ``verify`` and ``attestation verify`` read them; an
attestation is kept only when a trusted key signed it and it is about a bundle the
archive holds (its file digest and identity), and a pre-registration is kept signed or
not, with the trusted keys that signed it named in its record.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.errors import Problem
from bundler.signatures.envelope import MAX_ENVELOPE, EnvelopeProblem
from bundler.signatures.trust import TrustedKey
from bundler.signatures.trust import now as now_utc
from bundler.store import auditlog, index, logkeys, query, trust
from bundler.store.context import Context, now
from bundler.store.errors import ArchiveError, ArchiveRefused, os_failure
from bundler.store.objects import DIGEST_RE


@dataclass(frozen=True)
class Recorded:
    """One statement as the log records it."""

    event: str  # preregister | attest
    seq: int
    at: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, "seq": self.seq, "at": self.at, **self.data}


def _read(file: Path) -> bytes:
    """A regular file's bytes, one more than any envelope holds at most (a larger one is
    refused as too large; a FIFO or device is refused, never waited on)."""
    from bundler.files import read_bounded

    return read_bounded(Path(file), MAX_ENVELOPE, "file")


def _refused(file: Path, exc: EnvelopeProblem, what: str) -> ArchiveRefused:
    return ArchiveRefused(
        f"the {what} was not recorded", [Problem(str(file), exc.code, exc.message)]
    )


def preregister(
    context: Context,
    file: Path,
    given: tuple[TrustedKey, ...] = (),
    timestamp: Path | None = None,
    tsa_roots: tuple[Path, ...] = (),
) -> Recorded:
    """Store and log a pre-registration (``reprobundle preregister``'s file); with
    ``timestamp``, an RFC 3161 response over the file's bytes, checked against the
    authority's root certificates ``tsa_roots`` and kept with it."""
    from bundler.format.preregistration import PAYLOAD_TYPE
    from bundler.signatures.preregistration import open_preregistration

    data = _read(file)
    trusted = trust.policy(context, given).trusted
    try:
        found = open_preregistration(data, trusted, now_utc())
    except EnvelopeProblem as exc:
        raise _refused(file, exc, "pre-registration") from None
    stamp = _stamp(data, timestamp, tsa_roots) if timestamp is not None else None
    record: dict[str, Any] = {
        "sha256": _store(context, file, data),
        "payload_type": PAYLOAD_TYPE,
        "identity": found.identity,
        "name": found.view.name,
        "version": found.view.version,
        "claims": [c.id for c in found.view.claims],
        "signers": list(found.signers),
    }
    if stamp is not None and timestamp is not None:
        record["timestamp"] = {**stamp, "sha256": _store(context, timestamp, _read(timestamp))}
    return _log(context, "preregister", record)


def _stamp(data: bytes, token: Path, roots: tuple[Path, ...]) -> dict[str, Any]:
    """A time-stamp token over ``data``, checked (``signatures.timestamps``)."""
    from bundler.signatures.timestamps import TimestampProblem, check

    try:
        stamp = check(_read(token), data, [_read(root) for root in roots])
    except TimestampProblem as exc:
        raise ArchiveRefused(
            "the pre-registration was not recorded: its time-stamp does not hold",
            [Problem(str(token), exc.code, exc.message)],
        ) from None
    return {"time": stamp.time, "authority": stamp.authority, "serial": stamp.serial}


def attest(context: Context, file: Path, given: tuple[TrustedKey, ...] = ()) -> Recorded:
    """Store and log an attestation of a verification of a bundle the archive holds."""
    from bundler.signatures import attestation as att

    data = _read(file)
    trusted = trust.policy(context, given).trusted
    try:
        checked = att.read(data, trusted, now_utc())
    except EnvelopeProblem as exc:
        raise _refused(file, exc, "attestation") from None
    subjects = checked.sha256s
    held = [d for d in subjects if index.bundle(context.conn, d)]
    if not held:
        raise ArchiveRefused(
            "the attestation was not recorded",
            [
                Problem(
                    str(file),
                    "attestation.subject",
                    "none of its subjects is a bundle file this archive holds (add the "
                    "bundle first)",
                )
            ],
        )
    row = query.bundle(context.conn, held[0])
    if row.identity not in subjects:
        raise ArchiveRefused(
            "the attestation was not recorded",
            [
                Problem(
                    str(file),
                    "attestation.subject",
                    f"it names the bundle file {row.digest} but not its identity {row.identity}",
                )
            ],
        )
    record = {
        "sha256": _store(context, file, data),
        "digest": row.digest,
        "name": row.name,
        "version": row.version,
        "predicate": checked.predicate_type,
        "result": checked.result,
        "signers": list(checked.signers),
    }
    return _log(context, "attest", record)


def _store(context: Context, file: Path, data: bytes) -> str:
    staged = context.store.stage(Path(file), MAX_ENVELOPE)
    try:
        if staged.digest != hashlib.sha256(data).hexdigest():
            raise ArchiveError(f"{file} changed while it was read; try again")
        context.store.commit(staged)
    except BaseException:
        context.store.discard(staged)
        raise
    return staged.digest


def _log(context: Context, event: str, record: dict[str, Any]) -> Recorded:
    at = now()
    try:
        with index.transaction(context.conn):
            seq = context.append(event, record, at)
    except sqlite3.Error as exc:
        raise ArchiveError(f"cannot record the {event} in the archive log: {exc}") from None
    except OSError as exc:
        raise os_failure(exc, f"record the {event}", context.root) from None
    return Recorded(event, seq, at, record)


def recorded(
    context: Context, name: str | None = None, digest: str | None = None
) -> list[Recorded]:
    """The statements the log records, oldest first: pre-registrations of ``name`` and
    attestations of the bundle ``digest`` (every one when neither is given)."""
    wanted = {"preregister": ("name", name), "attest": ("digest", digest)}
    everything = name is None and digest is None
    if everything:  # found by the log's lookup table (logkeys), decoded to be sure
        rows = list(logkeys.records_with_any(context.conn, ["event:preregister", "event:attest"]))
    else:
        rows = []
        if name is not None:
            rows += logkeys.records_with(context.conn, f"preregister/name:{name}")
        if digest is not None:
            rows += logkeys.records_with(context.conn, f"attest/digest:{digest}")
    out = []
    for row in sorted(rows, key=lambda r: r.seq):
        value, _ = auditlog.decode(row)
        if value is None or value["event"] not in wanted:
            continue
        key, match = wanted[value["event"]]
        if everything or (match is not None and value["data"].get(key) == match):
            out.append(Recorded(value["event"], value["seq"], value["at"], value["data"]))
    return out


def damaged(context: Context) -> list[Problem]:
    """Every logged statement whose stored copy is missing or no longer its bytes."""
    problems = []
    for kept in recorded(context):
        digest = kept.data.get("sha256")
        why = (
            context.store.check(digest)
            if isinstance(digest, str) and DIGEST_RE.match(digest)
            else "its record names no SHA-256"
        )
        if why:
            problems.append(Problem(f"log record #{kept.seq} ({kept.event})", "store.object", why))
    return problems
