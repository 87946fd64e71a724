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

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bundler.errors import BundleRejected, Problem
from bundler.store import auditlog, reconcile, signers


def manifest_from_store(path: Path) -> bytes:
    """The manifest of a stored bundle file, after checking every byte of it."""
    from bundler.container.extract import extract

    with tempfile.TemporaryDirectory(prefix="reprobundle-rebuild-") as work:
        return extract(path, Path(work)).manifest_bytes


def _old(old: sqlite3.Connection | None, sql: str, args: Iterable[Any]) -> list[Any]:
    """Rows of the old index, or none when it cannot be read (it may be damaged)."""
    if old is None:
        return []
    try:
        return old.execute(sql, tuple(args)).fetchall()
    except sqlite3.Error:
        return []


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
    conn.executemany(
        "INSERT INTO audit_log (seq, record, hash) VALUES (?, ?, ?)",
        [(r.seq, r.record, r.hash) for r in rows],
    )
    meta = {"archive": state.archive, "created": state.created}
    if state.last_checkpoint is not None:
        size, head = state.last_checkpoint
        meta["last_checkpoint"] = json.dumps({"size": size, "head": head})
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)", [(k, v) for k, v in meta.items() if v is not None]
    )
    for facts in state.bundles.values():
        manifest = _manifest(facts, old, stored, problems)
        if manifest is None:
            continue
        try:
            title, claims = reconcile.manifest_facts(manifest)
        except Exception as exc:  # checked bytes that do not parse: named, not fatal
            problems.append(Problem(f"bundle {facts.digest}", "rebuild.manifest", str(exc)))
            continue
        conn.execute(
            "INSERT INTO bundles (digest, identity, name, version, title, signer, size, "
            "added_at, added_by, tool, manifest, last_result, last_verification) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
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
                manifest,
                facts.last_result,
                facts.last_verification,
            ),
        )
        conn.executemany(
            "INSERT INTO claims (digest, claim_id, statement) VALUES (?, ?, ?)",
            [(facts.digest, i, text) for i, text in (facts.claims or claims)],
        )
        keys = facts.keys
        if keys is None:  # format 1: the old rows, where they agree with the signer text
            found = _old(
                old,
                "SELECT keyid, trusted_name FROM bundle_signers WHERE digest = ?",
                [facts.digest],
            )
            keys = [(str(k), n) for k, n in found] if found else []
            if keys and signers.describe(keys) != facts.signer:
                keys = []
        conn.executemany(
            "INSERT INTO bundle_signers (digest, keyid, trusted_name) VALUES (?, ?, ?)",
            [(facts.digest, k, n) for k, n in keys],
        )
    for v in state.verifications.values():
        claims_rows, environment, detail = v.claims, v.environment, v.detail
        if claims_rows is None:  # format 1: from the old row when it agrees with the log
            env_detail = _old(
                old,
                "SELECT environment, detail FROM verifications WHERE id = ? AND digest = ? "
                "AND result = ?",
                [v.id, v.digest, v.result],
            )
            old_claims = [
                (str(c), str(s), str(w))
                for c, s, w in _old(
                    old,
                    "SELECT claim_id, status, why FROM claim_results WHERE verification = ? "
                    "ORDER BY rowid",
                    [v.id],
                )
            ]
            agrees = {c: s for c, s, _ in old_claims} == v.statuses
            claims_rows = old_claims if agrees else [(c, s, "") for c, s in v.statuses.items()]
            environment = json.loads(env_detail[0][0]) if env_detail else {}
            detail = json.loads(env_detail[0][1]) if env_detail else {}
        conn.execute(
            "INSERT INTO verifications (id, digest, at, tool, result, exit_code, environment, "
            "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                v.id,
                v.digest,
                v.at,
                v.tool,
                v.result,
                v.exit_code,
                json.dumps(environment, sort_keys=True),
                json.dumps(detail, sort_keys=True),
            ),
        )
        conn.executemany(
            "INSERT INTO claim_results (verification, claim_id, status, why) VALUES (?, ?, ?, ?)",
            [(v.id, c, s, w) for c, s, w in claims_rows],
        )
    return problems


def _manifest(
    facts: reconcile.BundleFacts,
    old: sqlite3.Connection | None,
    stored: Callable[[str], Path],
    problems: list[Problem],
) -> bytes | None:
    found = _old(old, "SELECT manifest FROM bundles WHERE digest = ?", [facts.digest])
    if found and hashlib.sha256(bytes(found[0][0])).hexdigest() == facts.identity:
        return bytes(found[0][0])
    path = stored(facts.digest)
    try:
        manifest = manifest_from_store(path)
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
