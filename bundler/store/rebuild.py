"""Rebuild the index from the audit log and the store.

The new index holds the log's records byte for byte and every other row as
``reconcile.replay`` derives it, so ``log verify`` on it finds nothing to report. What
the log does not hold is taken from where it can be checked: a manifest from the old
index when its bytes hash to the logged identity, otherwise from the stored object
(read and checked as ``add`` reads it). What a format-1 record lacks (a verification's
environment, detail and claim reasons, a bundle's signing keys) is taken from the old
index where that row agrees with the log, and left empty otherwise.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bundler.errors import BundleRejected, Problem
from bundler.store import auditlog, index, reconcile, signers
from bundler.store.context import Context, now
from bundler.store.copies import withheld_of_object
from bundler.store.errors import ArchiveError, ArchiveTampered
from bundler.store.index import BundleRow
from bundler.store.objects import Unreadable, open_object

T = TypeVar("T")


def manifest_from_store(path: Path, size: int | None = None) -> bytes:
    """The manifest of a stored bundle file (a regular file of its recorded ``size``, read
    no further: ``open_object``), after checking every byte of it. Raises
    ``BundleRejected``."""
    from bundler.container.extract import extract

    try:
        with (
            open_object(path, size) as stored,
            tempfile.TemporaryDirectory(prefix="reprobundle-rebuild-") as work,
        ):
            return extract(path, Path(work), stream=stored).manifest_bytes
    except Unreadable as exc:
        raise BundleRejected(exc.why, [Problem(str(path), "store.object", exc.why)]) from None


def _old(old: sqlite3.Connection | None, read: Callable[[sqlite3.Connection], T]) -> T | None:
    """``read`` of the old index, or None when it cannot be read (it may be damaged)."""
    if old is None:
        return None
    try:
        return read(old)
    except sqlite3.Error:
        return None


def rebuild(context: Context) -> tuple[int, int]:
    """See ``Archive.rebuild``: the new index is filled beside the old one, then renamed
    over it; the old one is kept as ``index.sqlite.before-rebuild-TIME``. Closes
    ``context.conn`` once the new index is complete: the caller opens the new one."""
    state = auditlog.walk(index.records(context.conn))
    if state.problems:
        raise ArchiveTampered(
            "the audit log's chain is broken; an index cannot be rebuilt from it",
            state.problems,
        )
    rows = list(index.records(context.conn))
    fresh = context.index_path.with_name(f"{context.index_path.name}.rebuild")
    for leftover in (fresh, *(fresh.with_name(fresh.name + s) for s in ("-wal", "-shm"))):
        leftover.unlink(missing_ok=True)
    rebuilt = dataclasses.replace(context, conn=index.create(fresh))  # appends to the new log
    try:
        with context.writing("rebuild the index"):
            index.migrate(rebuilt.conn)
            with index.transaction(rebuilt.conn):
                problems = fill(rebuilt.conn, rows, state.records, context.conn, context.store.path)
                if problems:
                    raise ArchiveError(
                        "the index was not rebuilt: some rows cannot be restored "
                        "(the old index is unchanged)",
                        problems,
                    )
                derived = reconcile.replay(state.records)
                counts = len(derived.bundles), len(derived.verifications)
                rebuilt.append("rebuild", {"bundles": counts[0], "verifications": counts[1]})
    except BaseException:
        rebuilt.conn.close()
        fresh.unlink(missing_ok=True)
        raise
    rebuilt.conn.close()
    _replace(context, fresh)
    return counts


def _replace(context: Context, fresh: Path) -> None:
    """Put the rebuilt index in place of the old one, which is kept beside it."""
    context.conn.close()
    stamp = now().replace(":", "").replace("-", "")
    kept = context.index_path.with_name(f"{context.index_path.name}.before-rebuild-{stamp}")
    with context.writing("put the rebuilt index in place"):
        os.replace(context.index_path, kept)
        os.replace(fresh, context.index_path)


def fill(
    conn: sqlite3.Connection,
    rows: list[auditlog.Row],
    records: list[dict[str, Any]],
    old: sqlite3.Connection | None,
    stored: Callable[[str], Path],
) -> list[Problem]:
    """Write the index the log describes into ``conn`` (a new, migrated, empty index),
    inside the caller's transaction. Returns the rows that could not be rebuilt (then the
    caller must not use the new index)."""
    state = reconcile.replay(records)
    problems: list[Problem] = []
    index.insert_records(conn, rows)
    _meta(conn, state)
    for facts in state.bundles.values():
        if _bundle(conn, facts, old, stored, problems):
            index.insert_signers(conn, facts.digest, _signing_keys(facts, old))
    for v in state.verifications.values():
        _verification(conn, v, old)
    return problems


def _meta(conn: sqlite3.Connection, state: reconcile.Derived) -> None:
    meta = {"archive": state.archive, "created": state.created}
    if state.last_checkpoint is not None:
        size, head = state.last_checkpoint
        meta["last_checkpoint"] = json.dumps({"size": size, "head": head})
    for key, value in meta.items():
        if value is not None:
            index.set_meta(conn, key, value)


def _bundle(
    conn: sqlite3.Connection,
    facts: reconcile.BundleFacts,
    old: sqlite3.Connection | None,
    stored: Callable[[str], Path],
    problems: list[Problem],
) -> bool:
    """The bundle row and its claims (False, with a problem, when its manifest is lost)."""
    manifest = _manifest(facts, old, stored, problems)
    if manifest is None:
        return False
    try:
        title, claims = reconcile.manifest_facts(manifest)
    except Exception as exc:  # checked bytes that do not parse: named, not fatal
        problems.append(Problem(f"bundle {facts.digest}", "rebuild.manifest", str(exc)))
        return False
    row = BundleRow(
        facts.digest,
        facts.identity,
        facts.name,
        facts.version,
        facts.title if facts.title is not None else title,
        facts.signer,
        facts.size if facts.size is not None else _size(stored(facts.digest)),
        facts.added_at,
        facts.added_by,
        facts.tool,
        facts.last_result,
        facts.last_verification,
        _withheld(facts, old, stored),
    )
    index.insert_bundle(conn, row, manifest)
    index.insert_claims(conn, facts.digest, facts.claims or claims)
    return True


def _withheld(
    facts: reconcile.BundleFacts, old: sqlite3.Connection | None, stored: Callable[[str], Path]
) -> int | None:
    """Which copy a bundle is (files withheld; None: full): as the log says; for an add the
    log does not say it of (an older record whose object a migration could not read),
    from its stored object, else from the old row of the same identity, else full."""
    if facts.copy_logged:
        return facts.withheld
    try:
        return withheld_of_object(stored(facts.digest), facts.size)
    except BundleRejected:
        row = _old(old, lambda c: index.bundle(c, facts.digest))
        return row.withheld if row is not None and row.identity == facts.identity else None


def _signing_keys(
    facts: reconcile.BundleFacts, old: sqlite3.Connection | None
) -> list[tuple[str, str | None]]:
    """The logged keys; for format 1, the old rows where they agree with the signer text."""
    if facts.keys is not None:
        return facts.keys
    keys = _old(old, lambda c: index.signers_of(c, facts.digest)) or []
    if keys and signers.describe(keys) != facts.signer:
        return []
    return keys


def _verification(
    conn: sqlite3.Connection, v: reconcile.VerificationFacts, old: sqlite3.Connection | None
) -> None:
    claims_rows, environment, detail = v.claims, v.environment, v.detail
    if claims_rows is None:  # format 1: from the old row when it agrees with the log
        env_detail = _old(old, lambda c: index.verification_of(c, v.id, v.digest, v.result))
        old_claims = _old(old, lambda c: index.claim_results_of(c, v.id)) or []
        agrees = {c: s for c, s, _ in old_claims} == v.statuses
        claims_rows = old_claims if agrees else [(c, s, "") for c, s in v.statuses.items()]
        environment, detail = env_detail or ({}, {})
    index.insert_verification(
        conn,
        v.digest,
        v.at,
        v.tool,
        v.result,
        v.exit_code,
        environment,
        detail,
        claims_rows,
        id=v.id,
    )


def _manifest(
    facts: reconcile.BundleFacts,
    old: sqlite3.Connection | None,
    stored: Callable[[str], Path],
    problems: list[Problem],
) -> bytes | None:
    found = _old(old, lambda c: index.manifest_of(c, facts.digest))
    if found is not None and hashlib.sha256(found).hexdigest() == facts.identity:
        return found
    path = stored(facts.digest)
    try:
        manifest = manifest_from_store(path, facts.size)
    except BundleRejected as exc:
        problems.append(
            Problem(
                f"bundle {facts.digest}",
                "rebuild.object",
                f"{facts.name}@{facts.version}: the index's manifest does not hash to the "
                f"logged identity and the stored object cannot be read ({exc.headline}); "
                "re-add the original bundle file, then rebuild",
            )
        )
        return None
    if hashlib.sha256(manifest).hexdigest() != facts.identity:
        problems.append(
            Problem(
                f"bundle {facts.digest}",
                "rebuild.object",
                "the stored object's manifest does not hash to the logged identity "
                f"{facts.identity}",
            )
        )
        return None
    return manifest


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
