"""The index as the audit log says it must be, and every row that differs from it.

The log is the archive's source of truth: replaying its records (``replay``) gives every
fact the index may hold (a bundle row, its signer and last result, each verification with
its claim results, the trusted keys, the archive's id and last checkpoint). ``compare``
checks the index against that, row by row and column by column; ``rebuild`` writes it
into a fresh index. One mechanism for both, so whatever ``log verify`` accepts is exactly
what a rebuild would produce.

Facts the log does not hold are derived from what it does: a bundle's title and claims
from its manifest bytes, which must hash to the identity the log recorded; an exit code
from the result. Records of format 1 (written before this module) carry less: their
verification's environment, detail and claim reasons, and their times to the
microsecond, cannot be checked (``LEGACY`` below says which).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bundler.errors import BundlerError, Problem
from bundler.store import index
from bundler.store.reverify import EXIT_CODES
from bundler.store.signers import describe

# What a format-1 record leaves unchecked (documented in manifests/ARCHIVE.md).
LEGACY = "environment, detail and claim reasons of a verification; times to the second"


@dataclass
class BundleFacts:
    digest: str
    identity: str
    name: str
    version: str
    size: int | None
    added_at: str
    added_by: str
    tool: str
    signer: str
    keys: list[tuple[str, str | None]] | None  # None: the record did not list them
    title: str | None  # None: read it from the manifest
    claims: list[tuple[str, str]] | None
    exact: bool  # format 2: times match exactly
    last_result: str = "unverified"
    last_verification: int | None = None
    withheld: int | None = None  # a redacted copy's files withheld (None: the full copy)
    copy_logged: bool = False  # False: the log does not say which copy (an add before 5)


@dataclass
class VerificationFacts:
    id: int
    digest: str
    at: str
    tool: str
    result: str
    statuses: dict[str, str]
    claims: list[tuple[str, str, str]] | None  # id, status, why (None: format 1)
    environment: dict[str, Any] | None
    detail: dict[str, Any] | None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.result, -1)


@dataclass
class Derived:
    """Everything the log says the index holds."""

    archive: str | None = None
    created: str | None = None
    bundles: dict[str, BundleFacts] = field(default_factory=dict)
    verifications: dict[int, VerificationFacts] = field(default_factory=dict)
    trust: list[dict[str, Any]] | None = None  # the trusted keys, as the last trust event says
    trust_ids: list[str] = field(default_factory=list)
    last_checkpoint: tuple[int, str] | None = None


def _keys(value: Any) -> list[tuple[str, str | None]] | None:
    if not isinstance(value, list):
        return None
    return sorted((str(k.get("keyid")), k.get("trusted")) for k in value if isinstance(k, dict))


def replay(records: Iterable[Mapping[str, Any]]) -> Derived:
    """The index facts the records describe, in log order (later events win)."""
    replaying = Replay()
    for record in records:
        replaying.feed(record)
    return replaying.state


class Replay:
    """``replay`` a record at a time. ``verified``, when given, receives each verification
    instead of the state keeping it: a log of a million verifications is then checked in
    memory that grows with its bundles only (``Verifications``)."""

    def __init__(self, verified: Callable[[VerificationFacts], object] | None = None) -> None:
        self.state = Derived()
        self.verified = verified

    def feed(self, record: Mapping[str, Any]) -> None:
        state = self.state
        event, data = record.get("event"), record.get("data", {})
        exact = record.get("v") == 2
        if event == "init":
            state.archive = str(data.get("archive"))
            state.created = str(record.get("at"))
            state.trust_ids = sorted(data.get("trust", []))
            if isinstance(data.get("keys"), list):
                state.trust = data["keys"]
        elif event == "trust" and isinstance(data.get("keys"), list):
            state.trust = data["keys"]
            state.trust_ids = sorted(k["keyid"][:16] for k in data["keys"] if not k["revoked"])
        elif event == "add":
            claims = data.get("claims")
            state.bundles[str(data.get("digest"))] = BundleFacts(
                digest=str(data.get("digest")),
                identity=str(data.get("identity")),
                name=str(data.get("name")),
                version=str(data.get("version")),
                size=data.get("size") if isinstance(data.get("size"), int) else None,
                added_at=str(record.get("at")),
                added_by=str(record.get("actor")),
                tool=str(record.get("tool")),
                signer=str(data.get("signer", "unknown")),
                keys=_keys(data.get("keys")),
                title=data.get("title") if isinstance(data.get("title"), str) else None,
                claims=[(str(c["id"]), str(c["statement"])) for c in claims]
                if isinstance(claims, list)
                else None,
                exact=exact,
            )
            withheld = data.get("withheld")
            if isinstance(withheld, int) and not isinstance(withheld, bool):
                added = state.bundles[str(data.get("digest"))]
                added.withheld, added.copy_logged = withheld or None, True
        elif event == "migrate":
            _copies_found(state, data)
        elif event == "verify" and isinstance(data.get("verification"), int):
            digest = str(data.get("digest"))
            outcome = data.get("outcome") if isinstance(data.get("outcome"), dict) else None
            facts = VerificationFacts(
                id=data["verification"],
                digest=digest,
                at=str(record.get("at")),
                tool=str(record.get("tool")),
                result=str(data.get("result")),
                statuses={str(k): str(v) for k, v in dict(data.get("claims", {})).items()},
                claims=[(str(c["id"]), str(c["status"]), str(c["why"])) for c in outcome["claims"]]
                if outcome
                else None,
                environment=outcome["environment"] if outcome else None,
                detail=outcome["detail"] if outcome else None,
            )
            if self.verified is None:
                state.verifications[facts.id] = facts
            else:
                self.verified(facts)
            bundle = state.bundles.get(digest)
            if bundle is not None:
                bundle.last_result, bundle.last_verification = facts.result, facts.id
                if "signer" in data:
                    bundle.signer = str(data["signer"])
                    bundle.keys = _keys(data.get("keys"))
        elif event == "checkpoint":
            state.last_checkpoint = (int(data.get("size", 0)), str(data.get("head")))


def _copies_found(state: Derived, data: Mapping[str, Any]) -> None:
    """A migration to schema 5 read which stored bundles were redacted copies (the adds
    before it did not say): every bundle added before it is then known, but those whose
    objects could not be read."""
    before, after = data.get("from"), data.get("to")
    if not (isinstance(before, int) and isinstance(after, int) and before < 5 <= after):
        return
    found_in: Any = data.get("redacted")
    redacted: Mapping[str, Any] = found_in if isinstance(found_in, dict) else {}
    listed: Any = data.get("unread")
    unread = {str(d) for d in listed} if isinstance(listed, list) else set()
    for digest, facts in state.bundles.items():
        if facts.copy_logged or digest in unread:
            continue
        found = redacted.get(digest)
        facts.withheld = found if isinstance(found, int) and found > 0 else None
        facts.copy_logged = True


def logged_bundle(conn: sqlite3.Connection, digest: str) -> index.BundleRow:
    """The index row of ``digest``, once the log's records of it (its ``add``, and each
    ``verify``) say the same as every row of the bundle the index holds (its bundle row,
    claims, signing keys and manifest; each of its verifications with its claim results,
    as ``log verify`` compares them), and each of those records is intact and still linked
    into the chain: an index edited apart from the log (two version columns swapped) is
    refused before its row is used, at the cost of this bundle's records, not the whole
    log. Raises ``ArchiveError`` (no such row) or ``ArchiveTampered``."""
    from bundler.store.errors import ArchiveTampered

    row, problems = bundle_differences(conn, digest)
    if problems:
        raise ArchiveTampered(
            f"the archive's index does not match its audit log for {digest}; nothing was "
            "used ('reprobundle archive log verify' lists every difference; "
            "'reprobundle archive rebuild' rebuilds the index from the log and the store)",
            problems,
        )
    return row


def bundle_differences(
    conn: sqlite3.Connection, digest: str
) -> tuple[index.BundleRow, list[Problem]]:
    """The index row of ``digest`` and how it differs from the log's records of the bundle
    (``logged_bundle`` says what is checked): one lookup of the bundle's own records
    (``log_keys``), whatever the log's length. Raises ``ArchiveError`` (no such row)."""
    from bundler.store import auditlog, logkeys
    from bundler.store.errors import ArchiveError

    row = index.bundle(conn, digest)
    if row is None:
        raise ArchiveError(f"no bundle with digest {digest} in the archive")
    where = f"bundle {digest}"
    diff = _Diff()
    mine: list[Mapping[str, Any]] = []
    for record in logkeys.records_with(conn, f"digest:{digest}"):
        value, why = auditlog.decode(record)
        if value is None or auditlog.record_hash(record.record) != record.hash:
            diff.add(
                f"audit log record {record.seq}",
                "log.edited",
                why or "its bytes do not hash to the stored hash (edited in place)",
            )
            continue
        following = index.record_at(conn, record.seq + 1)
        later, _ = auditlog.decode(auditlog.Row(record.seq + 1, following or b"", ""))
        if following is not None and (later is None or later["prev"] != record.hash):
            diff.add(
                f"audit log record {record.seq + 1}",
                "log.chain",
                f"does not link to record {record.seq} (a record was edited, removed or moved)",
            )
        if value["event"] in ("add", "verify") and value["data"].get("digest") == digest:
            mine.append(value)
    state = replay(mine)
    facts = state.bundles.get(digest)
    if facts is None and not diff.problems:
        diff.add(
            where,
            "index.unlogged",
            f"{row.name}@{row.version} is in the index but was never logged as added",
        )
    elif facts is not None:
        _bundle_row(
            diff,
            row,
            index.manifest_of(conn, digest) or b"",
            facts,
            index.signers_of(conn, digest),
            index.claims_of(conn, digest),
        )
    checking = Verifications(conn, diff)
    for logged in state.verifications.values():
        if logged.digest == digest:
            checking.compare(logged)
    for vid in index.verification_ids_of(conn, digest):
        if vid not in state.verifications:
            diff.add(
                f"verification {vid}", "index.unlogged", "is in the history but was never logged"
            )
    return row, diff.problems


def manifest_facts(manifest: bytes) -> tuple[str, list[tuple[str, str]]]:
    """A stored manifest's title and claims (id, statement). Raises ``BundlerError``."""
    from bundler.format.manifest import parse

    parsed = parse(manifest)
    return parsed.title, [(c.id, c.statement) for c in parsed.claims]


class _Diff:
    """Collects one problem per differing column, naming the row."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, where: str, code: str, message: str) -> None:
        self.problems.append(Problem(where, code, message))

    def column(self, where: str, column: str, index: Any, log: Any) -> None:
        if index != log:
            self.add(
                where, "index.altered", f"{column}: the index says {index!r}, the log says {log!r}"
            )


def _same_second(index: str, log: str) -> bool:
    try:
        a = datetime.fromisoformat(index.replace("Z", "+00:00"))
        b = datetime.fromisoformat(log.replace("Z", "+00:00"))
    except ValueError:
        return False
    return abs((a - b).total_seconds()) < 1


def compare(
    conn: sqlite3.Connection, state: Derived, streamed: Verifications | None = None
) -> list[Problem]:
    """Every row of the index that the log does not describe, describes differently, or
    describes but the index lacks. Reads the index; never writes. ``streamed``: the
    verifications were checked as the log was replayed (``Replay(verified=...)``)."""
    diff = streamed.diff if streamed is not None else _Diff()
    meta = index.all_meta(conn)
    diff.column("index meta 'archive'", "value", meta.get("archive"), state.archive)
    if state.created is not None:
        created = meta.get("created")
        if created != state.created and not _same_second(str(created), state.created):
            diff.column("index meta 'created'", "value", created, state.created)
    remembered: tuple[int, str] | None = None
    if meta.get("last_checkpoint"):
        try:
            last = json.loads(meta["last_checkpoint"])
            remembered = (int(last["size"]), str(last["head"]))
        except (ValueError, TypeError, KeyError):
            remembered = state.last_checkpoint  # reported as log.checkpoint_record
    diff.column("index meta 'last_checkpoint'", "size and head", remembered, state.last_checkpoint)

    _bundles(conn, state, diff)
    if streamed is None:
        _verifications(conn, state, diff)
    else:
        streamed.finish()
    return diff.problems


def _bundles(conn: sqlite3.Connection, state: Derived, diff: _Diff) -> None:
    seen: set[str] = set()
    signers: dict[str, list[tuple[str, str | None]]] = {}
    for digest, keyid, name in index.all_signers(conn):
        signers.setdefault(digest, []).append((keyid, name))
    claims: dict[str, list[tuple[str, str]]] = {}
    for digest, claim_id, statement in index.all_claims(conn):
        claims.setdefault(digest, []).append((claim_id, statement))
    for row, manifest in index.all_bundles(conn):
        digest = str(row.digest)
        seen.add(digest)
        where = f"bundle {digest}"
        facts = state.bundles.get(digest)
        if facts is None:
            diff.add(
                where,
                "index.unlogged",
                f"{row.name}@{row.version} is in the index but was never logged as added",
            )
            continue
        _bundle_row(diff, row, manifest, facts, signers.get(digest, []), claims.get(digest, []))
    for digest, facts in state.bundles.items():
        if digest not in seen:
            diff.add(
                f"bundle {digest}",
                "index.missing",
                f"the log says {facts.name}@{facts.version} was added; the index has no row for it",
            )
    for digest in sorted(set(claims) - seen):
        diff.add(
            f"claims of bundle {digest}",
            "index.unlogged",
            "claims of a bundle the index does not hold",
        )
    for digest, version in index.misordered(conn):  # what add's rollback warning reads
        diff.add(
            f"bundle {digest}",
            "index.altered",
            f"version_order: not the order of its version {version!r} (the column was edited)",
        )


def _bundle_row(
    diff: _Diff,
    row: index.BundleRow,
    manifest: bytes,
    facts: BundleFacts,
    signer_rows: Sequence[tuple[str, str | None]],
    claim_rows: Sequence[tuple[str, str]],
) -> None:
    """One bundle's rows (its row, manifest, signing keys and claims) against the log's
    facts of it: what ``log verify`` checks of every bundle, and ``logged_bundle`` of one."""
    digest = str(row.digest)
    where = f"bundle {digest}"
    for column in (
        "identity",
        "name",
        "version",
        "added_by",
        "tool",
        "signer",
        "last_result",
        "last_verification",
    ):
        diff.column(where, column, getattr(row, column), getattr(facts, column))
    if facts.size is not None:
        diff.column(where, "size", row.size, facts.size)
    if facts.copy_logged:
        diff.column(where, "withheld", row.withheld, facts.withheld)
    if facts.exact or not _same_second(str(row.added_at), facts.added_at):
        diff.column(where, "added_at", row.added_at, facts.added_at)
    observed = hashlib.sha256(manifest).hexdigest()
    if observed != facts.identity:
        diff.add(
            where,
            "index.altered",
            f"manifest: the stored manifest hashes to {observed}, the log says the "
            f"identity is {facts.identity} (the manifest was replaced)",
        )
        expected_title, expected_claims = facts.title, facts.claims
    elif facts.title is None or facts.claims is None:
        try:
            expected_title, expected_claims = manifest_facts(bytes(manifest))
        except BundlerError as exc:
            diff.add(where, "index.altered", f"manifest: cannot be read ({exc.headline})")
            expected_title, expected_claims = None, None
    else:
        expected_title, expected_claims = facts.title, facts.claims
    if expected_title is not None:
        diff.column(where, "title", row.title, expected_title)
    if expected_claims is not None:
        _rows(diff, f"claims of bundle {digest}", claim_rows, expected_claims)
    rows = sorted(signer_rows)
    if facts.keys is not None:
        diff.column(where, "signing keys (bundle_signers)", rows, facts.keys)
    elif rows and describe(rows) != row.signer:
        diff.column(where, "signing keys (bundle_signers)", describe(rows), row.signer)


def _rows(diff: _Diff, where: str, index: Sequence[Any], log: Sequence[Any]) -> None:
    """Two lists of rows keyed by their first column: each extra, missing or changed row."""
    mine, theirs = {r[0]: r for r in index}, {r[0]: r for r in log}
    for key in sorted(set(mine) | set(theirs), key=str):
        if key not in theirs:
            diff.add(
                f"{where}: {key}", "index.unlogged", f"the index holds {mine[key]!r}, the log none"
            )
        elif key not in mine:
            diff.add(
                f"{where}: {key}",
                "index.missing",
                f"the log says {theirs[key]!r}, the index has no row",
            )
        else:
            diff.column(f"{where}: {key}", "row", tuple(mine[key]), tuple(theirs[key]))


def _verifications(conn: sqlite3.Connection, state: Derived, diff: _Diff) -> None:
    checking = Verifications(conn, diff)
    for facts in state.verifications.values():
        checking(facts)
    checking.finish()


class Verifications:
    """The index's verifications against the log's, one logged verification at a time (a
    lookup by id each), then the rows no record named: a bit per id held, whatever the
    log's length."""

    def __init__(self, conn: sqlite3.Connection, diff: _Diff | None = None) -> None:
        self.conn = conn
        self.diff = diff or _Diff()
        self.seen = bytearray()
        self.sparse: set[int] = set()
        self.logged = 0

    def __call__(self, facts: VerificationFacts) -> None:
        vid = facts.id
        self.logged += 1
        if 0 <= vid < max(1 << 20, 4 * self.logged):  # a log's ids are dense: a bit each
            if vid >= len(self.seen):
                self.seen.extend(bytes(vid + 1 - len(self.seen)))
            self.seen[vid] = 1
        else:  # a forged id far off: kept apart, so the bits cannot be made to grow
            self.sparse.add(vid)
        self.compare(facts)

    def compare(self, facts: VerificationFacts) -> None:
        """The index's row of one logged verification, and its claim results, against the
        log's (without noting it seen: ``logged_bundle`` checks one bundle's alone)."""
        vid, diff = facts.id, self.diff
        where = f"verification {vid}"
        row = index.verification_row(self.conn, vid)
        if row is None:
            diff.add(
                where,
                "index.missing",
                f"the log says {facts.digest} was verified ({facts.result}); "
                "the history has no row",
            )
            return
        digest, at, tool, result, exit_code, environment, detail = row
        diff.column(where, "digest", digest, facts.digest)
        diff.column(where, "result", result, facts.result)
        diff.column(where, "exit_code", exit_code, facts.exit_code)
        diff.column(where, "tool", tool, facts.tool)
        statuses = index.claim_results_of(self.conn, vid)
        if facts.claims is None:
            if not _same_second(str(at), facts.at):
                diff.column(where, "at", at, facts.at)
            diff.column(where, "claim statuses", {c: s for c, s, _ in statuses}, facts.statuses)
            return
        diff.column(where, "at", at, facts.at)
        diff.column(where, "environment", _json(environment), facts.environment)
        diff.column(where, "detail", _json(detail), facts.detail)
        _rows(diff, f"claim results of verification {vid}", statuses, facts.claims)

    def finish(self) -> list[Problem]:
        """The rows no logged verification named; every problem found."""
        for vid in index.verification_ids(self.conn):
            if not (0 <= vid < len(self.seen) and self.seen[vid]) and vid not in self.sparse:
                self.diff.add(
                    f"verification {vid}",
                    "index.unlogged",
                    "is in the history but was never logged",
                )
        for vid in index.orphan_claim_results(self.conn):
            self.diff.add(
                f"claim results of verification {vid}",
                "index.unlogged",
                "results of a verification the index does not hold",
            )
        return self.diff.problems


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text
