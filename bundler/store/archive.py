"""The archive: a store of bundles, their index and history, and the audit log over both.

Every change is one index transaction that also appends the audit record describing
it, so the log and the state it describes cannot drift apart, even when a process is
killed: an object is made visible (renamed into the store) before the row naming it
commits, so a crash can leave an unreferenced object behind, never a row without its
object.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import hashlib
import json
import os
import socket
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bundler import __version__
from bundler.container.extract import Limits, extract
from bundler.errors import BundleRejected, Problem, UsageError
from bundler.format.hashing import CHUNK
from bundler.format.manifest import Manifest
from bundler.output import staged as staged_output
from bundler.signatures.trust import Policy, SignatureCheck, TrustedKey, check_signatures
from bundler.store import auditlog, checkpoint, index, reconcile, reverify, signers, versions
from bundler.store import rebuild as rebuilder
from bundler.store.errors import (
    ArchiveError,
    ArchiveRefused,
    ArchiveTampered,
    db_failure,
    os_failure,
)
from bundler.store.objects import DIGEST_RE, Staged, Store

INDEX_NAME = "index.sqlite"
KEY_NAME = "archive-ed25519.key"
ENV_VAR = "REPROBUNDLE_ARCHIVE"
MIN_PREFIX = 8  # hex digits of a digest or identity prefix
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
class BundleRow:
    digest: str
    identity: str
    name: str
    version: str
    title: str
    signer: str
    size: int
    added_at: str
    added_by: str
    tool: str
    last_result: str
    last_verification: int | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class VerificationRow:
    id: int
    at: str
    tool: str
    result: str
    exit_code: int
    environment: dict[str, Any]
    detail: dict[str, Any]
    claims: list[dict[str, str]]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Shown:
    bundle: BundleRow
    claims: list[dict[str, str]]  # id, statement
    history: list[VerificationRow]  # oldest first


@dataclass
class AddReport:
    added: list[BundleRow] = field(default_factory=list)
    already: list[BundleRow] = field(default_factory=list)
    repaired: list[BundleRow] = field(default_factory=list)  # a rotted object put back
    warnings: list[Problem] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class LogReport:
    size: int
    head: str
    checkpoints: int
    problems: list[Problem]


_BUNDLE_COLUMNS = (
    "digest, identity, name, version, title, signer, size, added_at, added_by, tool, "
    "last_result, last_verification"
)


def _bundle(row: Sequence[Any]) -> BundleRow:
    return BundleRow(*row)


class Archive:
    """An open archive. Use ``Archive.init`` or ``Archive.open``; close it (or use ``with``)."""

    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root = root
        self.store = Store(root)
        self.conn = conn
        self.index_path = root / INDEX_NAME
        self.key_path = root / "keys" / KEY_NAME
        self.checkpoints = root / "checkpoints"

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def init(cls, root: Path, trusted: Sequence[TrustedKey] = ()) -> Archive:
        """Create a new archive in ``root`` (missing or an empty folder). ``trusted`` keys
        become the archive's trust store (``trust.toml``), used by every add and verify."""
        root = Path(root).absolute()
        if (root / INDEX_NAME).exists():
            raise ArchiveError(f"{root} is already an archive")
        try:
            if root.exists() and (not root.is_dir() or any(root.iterdir())):
                raise ArchiveError(f"{root} exists and is not an empty folder; give a new one")
            root.mkdir(parents=True, exist_ok=True)
            Store(root).create()
            # readable by all (an auditor needs the public key); the private key is 0600
            (root / "keys").mkdir(mode=0o755, exist_ok=True)
            (root / "checkpoints").mkdir(exist_ok=True)
            public = checkpoint.generate_key(root / "keys" / KEY_NAME)
            if trusted:
                signers.write(root, trusted)
        except OSError as exc:
            raise os_failure(exc, "create the archive", root) from None
        conn = index.create(root / INDEX_NAME)
        archive = cls(root, conn)
        archive_id = str(uuid.uuid4())
        try:
            index.migrate(conn)
            with index.transaction(conn):
                created = now()
                conn.execute("INSERT INTO meta VALUES ('archive', ?)", (archive_id,))
                conn.execute("INSERT INTO meta VALUES ('created', ?)", (created,))
                archive._append(
                    "init",
                    {
                        "archive": archive_id,
                        "key": checkpoint.key_id(public),
                        "schema": index.SCHEMA_VERSION,
                        "trust": signers.trusted_ids(Policy(tuple(trusted))),
                        "keys": signers.state(trusted),
                    },
                    created,
                )
        except sqlite3.Error as exc:
            conn.close()
            raise db_failure(exc, "create the archive index", root / INDEX_NAME) from None
        except BaseException:
            conn.close()
            raise
        return archive

    @classmethod
    def open(cls, root: Path, check_checkpoint: bool = True, read_only: bool = False) -> Archive:
        """Open an archive, migrating an older index, and check the log against the last
        checkpoint this archive issued (fails loudly when it no longer matches).
        ``read_only`` opens it for reading only (an auditor's copy, a read-only mount):
        nothing is written, not even the files SQLite keeps beside the index."""
        root = Path(root).absolute()
        conn = (index.connect_read_only if read_only else index.connect)(root / INDEX_NAME)
        archive = cls(root, conn)
        try:
            if read_only:
                index.check_schema(conn)
            else:
                with archive._write("upgrade the archive index"):
                    index.migrate(
                        conn,
                        record=lambda old, new: archive._append(
                            "migrate", {"from": old, "to": new}
                        ),
                    )
            if check_checkpoint:
                archive._check_last_checkpoint()
        except BaseException:
            conn.close()
            raise
        return archive

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def archive_id(self) -> str:
        return self._meta("archive") or ""

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[None]:
        """Turn SQLite and OS failures of a write into clear archive errors."""
        try:
            yield
        except sqlite3.Error as exc:
            raise db_failure(exc, what, self.index_path) from None
        except OSError as exc:
            raise os_failure(exc, what, self.root) from None

    # -- the audit log -----------------------------------------------------------------

    def _head(self) -> tuple[int, str]:
        """The log's size and head hash, after checking the head record's own hash."""
        row = self.conn.execute(
            "SELECT seq, record, hash FROM audit_log ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return 0, auditlog.GENESIS
        seq, record, stored = int(row[0]), bytes(row[1]), str(row[2])
        actual = auditlog.record_hash(record)
        if actual != stored:
            raise ArchiveTampered(
                "the audit log's last record was edited; refusing to extend it",
                [
                    Problem(
                        f"audit log record {seq}",
                        "log.edited",
                        f"hashes to {actual}, stored {stored}",
                    )
                ],
            )
        return seq, actual

    def _append(self, event: str, data: dict[str, Any], at: str | None = None) -> int:
        """Append one record (at ``at``, the time the index rows it describes carry).
        Call inside a write transaction."""
        seq, head = self._head()
        record = auditlog.make_record(seq + 1, head, at or now(), event, actor(), TOOL, data)
        self.conn.execute(
            "INSERT INTO audit_log (seq, record, hash) VALUES (?, ?, ?)",
            (seq + 1, record, auditlog.record_hash(record)),
        )
        return seq + 1

    def _log_refusal(self, data: dict[str, Any]) -> None:
        with self._write("record the refusal in the audit log"), index.transaction(self.conn):
            self._append("refuse", data)

    def log_records(self, tail: int | None = None) -> list[bytes]:
        """The exact record bytes, oldest first (the last ``tail`` only, when given)."""
        if tail is None:
            return [r.record for r in self._rows()]
        rows = self.conn.execute(
            "SELECT record FROM audit_log ORDER BY seq DESC LIMIT ?", (tail,)
        ).fetchall()
        return [bytes(r[0]) for r in reversed(rows)]

    def _rows(self) -> Iterator[auditlog.Row]:
        cursor = self.conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq")
        for seq, record, stored in cursor:
            yield auditlog.Row(int(seq), bytes(record), str(stored))

    def _last_checkpoint(self) -> tuple[int, str] | None:
        """The size and head of the last checkpoint this archive issued, if any."""
        text = self._meta("last_checkpoint")
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

    def _check_last_checkpoint(self) -> None:
        last = self._last_checkpoint()
        if last is None:
            return
        size, head = last
        row = self.conn.execute("SELECT record FROM audit_log WHERE seq = ?", (size,)).fetchone()
        count = self.conn.execute(
            "SELECT count(*) FROM audit_log WHERE seq <= ?", (size,)
        ).fetchone()
        observed = auditlog.record_hash(bytes(row[0])) if row else None
        if row is None or observed != head or int(count[0]) != size:
            raise ArchiveTampered(
                "the audit log no longer matches the last checkpoint this archive issued; "
                "run 'reprobundle archive log verify' with a checkpoint kept elsewhere",
                [
                    Problem(
                        "last checkpoint",
                        "log.checkpoint_mismatch",
                        f"record {size} should hash to {head}, observed "
                        f"{observed or 'no such record'}",
                    )
                ],
            )

    # -- add -------------------------------------------------------------------------------

    def trust(self, given: Sequence[TrustedKey] = ()) -> Policy:
        """The keys trusted for one command: the archive's trust store and ``given``.
        Refuses a trust store that differs from what the log says it is."""
        archive_keys = signers.load(self.root)  # a damaged store is a usage error (exit 2)
        logged, ids = self._logged_trust()
        problems = self._trust_differences(logged, ids)
        if problems:
            raise ArchiveTampered(
                f"the archive's trust store ({self.root / signers.TRUST_NAME}) is not what its "
                "audit log says; nothing was run (undo the edit, or change trust with "
                "'reprobundle archive trust', which logs it)",
                problems,
            )
        return signers.merged(archive_keys, given)

    def _trust_differences(
        self, logged: list[dict[str, Any]] | None, ids: list[str]
    ) -> list[Problem]:
        try:
            found = signers.state(signers.load(self.root))
        except UsageError as exc:
            return [Problem(str(self.root / signers.TRUST_NAME), "trust.format", exc.headline)]
        return signers.differences(found, logged, ids, str(self.root / signers.TRUST_NAME))

    def _logged_trust(self) -> tuple[list[dict[str, Any]] | None, list[str]]:
        """The trusted keys as the last init or trust record says (None: ids only)."""
        cursor = self.conn.execute(
            "SELECT seq, record, hash FROM audit_log WHERE CAST(record AS TEXT) LIKE ? "
            "OR CAST(record AS TEXT) LIKE ? ORDER BY seq DESC",
            ('%"event":"trust"%', '%"event":"init"%'),
        )
        for seq, record, stored in cursor:
            value, _ = auditlog.decode(auditlog.Row(int(seq), bytes(record), str(stored)))
            if value is not None and value["event"] in ("init", "trust"):
                derived = reconcile.replay([value])
                return derived.trust, derived.trust_ids
        return [], []

    def change_trust(self, change: str, key: TrustedKey | None = None, name: str = "") -> None:
        """Add a key (``change`` = ``add``), or revoke or remove the key named ``name``,
        in the trust store, logging the change with every key's permissions after it."""
        current = list(self.trust_keys())
        names = [k.name for k in current]
        if change == "add":
            assert key is not None
            if key.name in names or any(k.key.raw == key.key.raw for k in current):
                raise UsageError(
                    f"the archive already trusts a key named {key.name!r} or this same key; "
                    "give another --name, or remove the old key first"
                )
            after = [*current, key]
            name = key.name
        elif name not in names:
            raise UsageError(
                f"the archive trusts no key named {name!r} (trusted: {', '.join(names) or 'none'})"
            )
        elif change == "revoke":
            after = [dataclasses.replace(k, revoked=True) if k.name == name else k for k in current]
        else:
            after = [k for k in current if k.name != name]
        with self._write("change the archive's trust store"), index.transaction(self.conn):
            self._append("trust", {"change": change, "name": name, "keys": signers.state(after)})
            signers.write(self.root, after)

    def restore_trust(self) -> tuple[TrustedKey, ...]:
        """Write the trust store back as the log says it is (after an edit behind the
        log's back, or a crash between writing it and logging the change)."""
        logged, _ = self._logged_trust()
        if logged is None:
            raise ArchiveError(
                "this archive's log names its trusted keys by id only (it predates trust "
                "events), so the trust store cannot be restored from it; restore trust.toml "
                "from a backup"
            )
        keys = tuple(signers.from_state(entry) for entry in logged)
        with self._write("restore the archive's trust store"), index.transaction(self.conn):
            self._append("trust", {"change": "restore", "name": "", "keys": signers.state(keys)})
            signers.write(self.root, keys)
        return keys

    def trust_keys(self) -> tuple[TrustedKey, ...]:
        """The archive's trusted keys, after checking them against the log."""
        self.trust()
        return signers.load(self.root)

    def add(
        self,
        files: Iterable[Path],
        limits: Limits | None = None,
        trusted: Sequence[TrustedKey] = (),
    ) -> AddReport:
        """Check each file (strict read, signatures, every hash) and store it. Collects
        every refusal. Signatures are judged as ``verify`` judges them, against the
        archive's trusted keys and ``trusted``: a bad signature refuses the bundle."""
        limits = limits or Limits()
        policy = self.trust(trusted)
        paths = [Path(file).absolute() for file in files]
        missing = [
            Problem(str(p), "add.not_a_file", "is not a file") for p in paths if not p.is_file()
        ]
        if missing:
            raise UsageError("nothing was added: some of the files given are not files", missing)
        self.store.sweep()
        report = AddReport()
        for path in paths:
            try:
                self._add_one(path, limits, policy, report)
            except ArchiveRefused as exc:
                report.refused.extend(exc.problems)
            except ArchiveError as exc:
                done = [f"{b.name}@{b.version}" for b in report.added]
                if done:
                    exc.problems.append(
                        Problem("", "add.partial", f"stored before this: {', '.join(done)}")
                    )
                raise
        return report

    def _add_one(self, file: Path, limits: Limits, policy: Policy, report: AddReport) -> None:
        staged = self.store.stage(file, limits.archive_bytes)
        checked: list[SignatureCheck] = []

        def judge_signatures(manifest_bytes: bytes, identity: str, found: dict[str, bytes]) -> None:
            checked.append(check_signatures(manifest_bytes, identity, found, policy))

        try:
            try:
                with tempfile.TemporaryDirectory(prefix="reprobundle-archive-") as work:
                    extracted = extract(
                        staged.path, Path(work), limits, judge_signatures, wanted=lambda _: ()
                    )
            except OSError as exc:
                raise os_failure(
                    exc, "unpack the bundle to check it", tempfile.gettempdir()
                ) from None
            except BundleRejected as exc:
                codes = sorted({p.code for p in exc.problems})
                self._log_refusal(
                    {
                        "action": "add",
                        "file": str(file),
                        "digest": staged.digest,
                        "reason": exc.headline,
                        "codes": codes,
                    }
                )

                def named(text: str) -> str:  # the file the user gave, not our staged copy
                    return text.replace(str(staged.path), str(file)).replace(
                        staged.path.name, file.name
                    )

                raise ArchiveRefused(
                    exc.headline,
                    [
                        Problem(
                            str(file),
                            p.code,
                            named(f"{p.where}: {p.message}" if p.where else p.message),
                        )
                        for p in exc.problems
                    ],
                ) from None
            self._store(
                file,
                staged,
                extracted.manifest_bytes,
                extracted.identity,
                extracted.manifest,
                signers.judge(checked[0], extracted.signatures, policy),
                signers.trusted_ids(policy),
                report,
            )
        finally:
            self.store.discard(staged)

    def _store(
        self,
        file: Path,
        staged: Staged,
        manifest_bytes: bytes,
        identity: str,
        manifest: Manifest,
        signed: signers.Signed,
        trusted_ids: list[str],
        report: AddReport,
    ) -> None:
        name, version = manifest.name, manifest.version
        refusal: Problem | None = None
        with self._write("add the bundle to the archive"), index.transaction(self.conn):
            existing = self.conn.execute(
                "SELECT digest FROM bundles WHERE name = ? AND version = ?", (name, version)
            ).fetchone()
            if existing is not None and existing[0] != staged.digest:
                refusal = Problem(
                    str(file),
                    "add.version_reused",
                    f"{name}@{version} is already stored with other bytes (digest "
                    f"{existing[0]}, this file {staged.digest}); a published version never "
                    "changes: give the new bundle a new version",
                )
                self._append(
                    "refuse",
                    {
                        "action": "add",
                        "file": str(file),
                        "digest": staged.digest,
                        "name": name,
                        "version": version,
                        "stored": existing[0],
                        "codes": ["add.version_reused"],
                    },
                )
            elif existing is not None:
                if self.store.check(staged.digest) is not None:
                    self.store.commit(staged)  # the stored copy rotted: put back good bytes
                    self._append("repair", {"digest": staged.digest, "file": str(file)})
                    report.repaired.append(self._bundle(staged.digest))
                    return
                else:
                    self._append(
                        "add.duplicate",
                        {
                            "digest": staged.digest,
                            "file": str(file),
                            "name": name,
                            "version": version,
                        },
                    )
                report.already.append(self._bundle(staged.digest))
            else:
                warnings = self._rollback_warning(file, name, version)
                added_at = now()
                self.store.commit(staged)
                self.conn.execute(
                    f"INSERT INTO bundles ({_BUNDLE_COLUMNS}, manifest) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'unverified', NULL, ?)",
                    (
                        staged.digest,
                        identity,
                        name,
                        version,
                        manifest.title,
                        signed.text,
                        staged.size,
                        added_at,
                        actor(),
                        TOOL,
                        manifest_bytes,
                    ),
                )
                self.conn.executemany(
                    "INSERT INTO claims (digest, claim_id, statement) VALUES (?, ?, ?)",
                    [(staged.digest, c.id, c.statement) for c in manifest.claims],
                )
                self._set_signer(staged.digest, signed)
                self._append(
                    "add",
                    {
                        "digest": staged.digest,
                        "identity": identity,
                        "name": name,
                        "version": version,
                        "size": staged.size,
                        "file": str(file),
                        "signer": signed.text,
                        "keys": [{"keyid": k, "trusted": n} for k, n in signed.keys],
                        "trust": trusted_ids,
                        "warnings": [w.code for w in warnings],
                        "title": manifest.title,
                        "claims": [{"id": c.id, "statement": c.statement} for c in manifest.claims],
                    },
                    added_at,
                )
                report.warnings.extend(warnings)
                report.added.append(self._bundle(staged.digest))
        if refusal is not None:
            raise ArchiveRefused("a bundle was refused", [refusal])

    def _set_signer(self, digest: str, signed: signers.Signed) -> None:
        """Record who signed a bundle (inside a write transaction)."""
        self.conn.execute("UPDATE bundles SET signer = ? WHERE digest = ?", (signed.text, digest))
        self.conn.execute("DELETE FROM bundle_signers WHERE digest = ?", (digest,))
        self.conn.executemany(
            "INSERT INTO bundle_signers (digest, keyid, trusted_name) VALUES (?, ?, ?)",
            [(digest, keyid, name) for keyid, name in signed.keys],
        )

    def _rollback_warning(self, file: Path, name: str, version: str) -> list[Problem]:
        seen = [
            str(v)
            for (v,) in self.conn.execute("SELECT version FROM bundles WHERE name = ?", (name,))
        ]
        if not seen:
            return []
        highest = max(seen, key=versions.key)
        if versions.key(version) < versions.key(highest):
            return [
                Problem(
                    str(file),
                    "add.rollback",
                    f"{name}@{version} is lower than {name}@{highest}, the highest version "
                    "already stored (added anyway; check this is not a rollback)",
                )
            ]
        return []

    # -- queries -----------------------------------------------------------------------

    def _bundle(self, digest: str) -> BundleRow:
        row = self.conn.execute(
            f"SELECT {_BUNDLE_COLUMNS} FROM bundles WHERE digest = ?", (digest,)
        ).fetchone()
        if row is None:
            raise ArchiveError(f"no bundle with digest {digest} in the archive")
        return _bundle(row)

    def list_bundles(
        self,
        name: str | None = None,
        version: str | None = None,
        signer: str | None = None,
        status: str | None = None,
        claim_status: str | None = None,
    ) -> list[BundleRow]:
        """Bundles matching every filter given, by name then version (semver order).
        ``signer`` matches the recorded signer text (``unsigned``), a trusted key's name,
        or the id of a key that signed (or a prefix of 8+ hex digits)."""
        where: list[str] = []
        args: list[str] = []
        for column, value in (
            ("name", name),
            ("version", version),
            ("last_result", status),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if signer is not None:
            sql, more = signers.selector(signer)
            where.append(f"digest IN ({sql})")
            args += more
        if claim_status is not None:
            where.append(
                "last_verification IN (SELECT verification FROM claim_results WHERE status = ?)"
            )
            args.append(claim_status)
        sql = f"SELECT {_BUNDLE_COLUMNS} FROM bundles"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = [_bundle(r) for r in self.conn.execute(sql, args)]
        return sorted(rows, key=lambda b: (b.name, versions.sort_key(b.version), b.digest))

    def resolve(self, selector: str) -> list[str]:
        """Digests a selector names: a file digest or an identity (the SHA-256 of the
        manifest, which a report's appendix prints), whole or a unique prefix of at least
        ``MIN_PREFIX`` hex digits, with or without ``sha256:``; ``NAME@VERSION``; or
        ``NAME`` (every version)."""
        text = selector.removeprefix("sha256:").lower()
        hexadecimal = bool(text) and all(c in "0123456789abcdef" for c in text)
        if hexadecimal and len(text) >= MIN_PREFIX:
            found = sorted(
                {
                    str(d)
                    for column in ("digest", "identity")
                    for (d,) in self.conn.execute(
                        f"SELECT digest FROM bundles WHERE {column} >= ? AND {column} < ? LIMIT 2",
                        (text, text + "g"),
                    )
                }
            )
            if len(found) > 1:
                raise ArchiveError(
                    f"{text} is the beginning of the digest or identity of more than one bundle "
                    f"({', '.join(d[:16] for d in found)}…); give more hex digits"
                )
            if found:
                return found
            if len(text) == 64 or selector.startswith("sha256:"):
                raise ArchiveError(
                    f"no bundle in the archive has the file digest or identity {text}"
                )
        name, _, version = selector.partition("@")
        digests = [b.digest for b in self.list_bundles(name=name, version=version or None)]
        if not digests:
            short = (
                f"; a digest or identity prefix needs at least {MIN_PREFIX} hex digits"
                if hexadecimal and len(text) < MIN_PREFIX
                else ""
            )
            raise ArchiveError(
                f"no bundle {selector} in the archive (give a file digest or identity, or a "
                f"unique prefix of {MIN_PREFIX}+ hex digits, NAME@VERSION or NAME; see "
                f"'reprobundle archive list'){short}"
            )
        return digests

    def resolve_one(self, selector: str) -> str:
        digests = self.resolve(selector)
        if len(digests) > 1:
            choices = ", ".join(f"{b.name}@{b.version}" for b in map(self._bundle, digests))
            raise ArchiveError(f"{selector} names {len(digests)} bundles ({choices}); give one")
        return digests[0]

    def show(self, selector: str) -> Shown:
        bundle = self._bundle(self.resolve_one(selector))
        claims = [
            {"id": str(i), "statement": str(s)}
            for i, s in self.conn.execute(
                "SELECT claim_id, statement FROM claims WHERE digest = ? ORDER BY rowid",
                (bundle.digest,),
            )
        ]
        history = []
        for vid, at, tool, result, code, env, detail in self.conn.execute(
            "SELECT id, at, tool, result, exit_code, environment, detail FROM verifications "
            "WHERE digest = ? ORDER BY id",
            (bundle.digest,),
        ).fetchall():
            statuses = [
                {"id": str(c), "status": str(s), "why": str(w)}
                for c, s, w in self.conn.execute(
                    "SELECT claim_id, status, why FROM claim_results WHERE verification = ? "
                    "ORDER BY rowid",
                    (vid,),
                )
            ]
            history.append(
                VerificationRow(
                    int(vid),
                    at,
                    tool,
                    result,
                    int(code),
                    json.loads(env),
                    json.loads(detail),
                    statuses,
                )
            )
        return Shown(bundle, claims, history)

    # -- verify ------------------------------------------------------------------------

    def select(self, selectors: Sequence[str] = (), all_bundles: bool = False) -> list[str]:
        """The digests that selectors (or ``all_bundles``) name, each once."""
        if all_bundles == bool(selectors):
            raise ArchiveError("give bundles to verify (digest, NAME@VERSION, NAME) or --all")
        if all_bundles:
            return [
                str(d) for (d,) in self.conn.execute("SELECT digest FROM bundles ORDER BY name")
            ]
        return list(dict.fromkeys(d for s in selectors for d in self.resolve(s)))

    def verify(
        self,
        selectors: Sequence[str] = (),
        all_bundles: bool = False,
        jobs: int = 1,
        limits: Limits | None = None,
        on_result: Callable[[reverify.Outcome, BundleRow], None] | None = None,
        trusted: Sequence[TrustedKey] = (),
        scheduler: str | None = None,
        on_note: Callable[[str], None] | None = None,
        function: Callable[[reverify.Job], reverify.Outcome] = reverify.verify_one,
    ) -> list[reverify.Outcome]:
        """Re-verify bundles in ``jobs`` worker processes, or on the Dask cluster whose
        scheduler is at ``scheduler`` (``cluster.run``), recording each result as it comes;
        only this process writes the index and the log. Signatures are judged against the
        archive's trusted keys and ``trusted``; a verification that judged them records
        the signer (it replaces the bundle's). ``on_note`` hears of refused workers."""
        self.audit()
        digests = self.select(selectors, all_bundles)
        policy = self.trust(trusted)
        work = [reverify.Job(str(self.root), d, limits or Limits(), policy) for d in digests]

        def failed(job: reverify.Job, why: str) -> reverify.Outcome:
            return reverify.Outcome(job.digest, "error", {}, [], {"message": why})

        if scheduler is not None:
            from bundler.store import cluster

            results = cluster.run(work, scheduler, failed, function, on_note)
        else:
            results = reverify.run(work, jobs, failed, function)
        outcomes = []
        for outcome in results:
            self._record(outcome)
            outcomes.append(outcome)
            if on_result is not None:
                on_result(outcome, self._bundle(outcome.digest))
        return outcomes

    def _record(self, outcome: reverify.Outcome) -> None:
        at = now()
        with self._write("record the verification"), index.transaction(self.conn):
            cursor = self.conn.execute(
                "INSERT INTO verifications (digest, at, tool, result, exit_code, environment, "
                "detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    outcome.digest,
                    at,
                    TOOL,
                    outcome.result,
                    outcome.exit_code,
                    json.dumps(outcome.environment, sort_keys=True),
                    json.dumps(outcome.detail, sort_keys=True),
                ),
            )
            vid = cursor.lastrowid
            self.conn.executemany(
                "INSERT INTO claim_results (verification, claim_id, status, why) "
                "VALUES (?, ?, ?, ?)",
                [(vid, c["id"], c["status"], c["why"]) for c in outcome.claims],
            )
            self.conn.execute(
                "UPDATE bundles SET last_result = ?, last_verification = ? WHERE digest = ?",
                (outcome.result, vid, outcome.digest),
            )
            data: dict[str, Any] = {
                "digest": outcome.digest,
                "verification": vid,
                "result": outcome.result,
                "claims": {c["id"]: c["status"] for c in outcome.claims},
                "outcome": {
                    "claims": outcome.claims,
                    "environment": outcome.environment,
                    "detail": outcome.detail,
                },
            }
            signed = outcome.signed
            if signed is not None:
                self._set_signer(outcome.digest, signed)
                data["signer"] = signed.text
                data["keys"] = [{"keyid": k, "trusted": n} for k, n in signed.keys]
                data["trust"] = outcome.detail.get("trust", [])
            self._append("verify", data, at)

    # -- export ------------------------------------------------------------------------

    def export(self, selector: str, out: Path) -> BundleRow:
        """Copy a stored bundle to ``out`` atomically, checking its digest on the way."""
        bundle = self._bundle(self.resolve_one(selector))
        out = Path(out).absolute()
        if out.is_dir():
            raise ArchiveError(f"{out} is a folder; -o takes the path of the file to write")
        source = self.store.path(bundle.digest)
        try:
            with staged_output(out, "the exported bundle") as tmp:
                hasher = hashlib.sha256()
                with tmp.open("wb") as stream, source.open("rb") as stored:
                    while chunk := stored.read(CHUNK):
                        hasher.update(chunk)
                        stream.write(chunk)
                if hasher.hexdigest() != bundle.digest:
                    why = (
                        f"bit rot: the stored bytes hash to {hasher.hexdigest()}, "
                        f"expected {bundle.digest}"
                    )
                    self._log_refusal(
                        {
                            "action": "export",
                            "digest": bundle.digest,
                            "to": str(out),
                            "codes": ["store.rotted"],
                        }
                    )
                    raise ArchiveTampered(
                        f"refusing to export {bundle.name}@{bundle.version}",
                        [Problem(str(source), "store.rotted", why)],
                    )
        except FileNotFoundError as exc:
            if exc.filename == str(source):
                raise ArchiveTampered(
                    f"refusing to export {bundle.name}@{bundle.version}",
                    [Problem(str(source), "store.missing", "the stored object is missing")],
                ) from None
            raise os_failure(exc, "write the exported bundle", out) from None
        except OSError as exc:
            raise os_failure(exc, "write the exported bundle", out) from None
        with self._write("record the export"), index.transaction(self.conn):
            self._append("export", {"digest": bundle.digest, "to": str(out)})
        return bundle

    # -- checkpoints and log verification -------------------------------------------------

    def checkpoint(self) -> checkpoint.Checkpoint:
        """Sign the log's current size and head hash; remember it, keep a copy in
        ``checkpoints/``, and log that it was issued."""
        key = checkpoint.load_private(self.key_path)
        with self._write("issue a checkpoint"), index.transaction(self.conn):
            size, head = self._head()
            issued = checkpoint.issue(key, self.archive_id, size, head, now())
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('last_checkpoint', ?)",
                (json.dumps({"size": size, "head": head}),),
            )
            self._append("checkpoint", {"size": size, "head": head})
            self.checkpoints.mkdir(exist_ok=True)
            from bundler.atomic import write_atomic

            write_atomic(
                self.checkpoints / f"{size:010d}-{head[:16]}.json", issued.to_json().encode()
            )
        return issued

    def verify_log(self, extra: Sequence[Path] = ()) -> LogReport:
        """Walk the whole chain, check it against every checkpoint (the ones this archive
        kept and any given), and cross-check the index against the log. Collects every
        problem; never raises for what it finds."""
        public = checkpoint.load_public(self.key_path.with_suffix(".pub"))
        problems: list[Problem] = []
        pinned: list[tuple[str, checkpoint.Checkpoint]] = []
        sources = sorted(self.checkpoints.glob("*.json")) if self.checkpoints.is_dir() else []
        for path in [*sources, *extra]:
            where = f"checkpoint {path}"
            try:
                issued = checkpoint.parse(Path(path).read_bytes(), where)
            except ArchiveTampered as exc:
                problems.extend(exc.problems)
                continue
            except OSError as exc:
                raise os_failure(exc, "read the checkpoint", path) from None
            problems.extend(checkpoint.check(issued, public, self.archive_id, where))
            pinned.append((where, issued))
        try:
            remembered = self._last_checkpoint()
        except ArchiveTampered as exc:
            problems.extend(exc.problems)
            remembered = None
        sizes = [c.size for _, c in pinned] + ([remembered[0]] if remembered else [])
        state = auditlog.walk(self._rows(), sizes)
        problems.extend(state.problems)
        for where, issued in pinned:
            problems.extend(auditlog.against_checkpoint(state, issued.size, issued.head, where))
        if remembered:
            problems.extend(
                auditlog.against_checkpoint(state, *remembered, "the last checkpoint issued")
            )
        problems.extend(self._against_log(state.records))
        return LogReport(state.size, state.head, len(pinned), problems)

    def _against_log(self, records: list[dict[str, Any]]) -> list[Problem]:
        """Every index row and the trust store, checked against what the log says."""
        derived = reconcile.replay(records)
        problems = reconcile.compare(self.conn, derived)
        problems.extend(self._trust_differences(derived.trust, derived.trust_ids))
        return problems

    def audit(self) -> None:
        """Refuse (``ArchiveTampered``) when the log's chain is broken or the index or the
        trust store is not what the log says: run before trusting either."""
        state = auditlog.walk(self._rows())
        problems = state.problems + self._against_log(state.records)
        if problems:
            raise ArchiveTampered(
                "the archive's index or trust store does not match its audit log; nothing "
                "was run ('reprobundle archive log verify' lists every difference; "
                "'reprobundle archive rebuild' rebuilds the index from the log and the store)",
                problems,
            )

    def rebuild(self) -> tuple[int, int]:
        """Replace the index by one rebuilt from the audit log and the store (the old
        file is kept beside it as ``index.sqlite.before-rebuild-TIME``). Refuses a log
        whose chain is broken, and a rebuild that cannot restore every row. Returns the
        number of bundles and verifications rebuilt. Run it while no other archive
        command runs."""
        state = auditlog.walk(self._rows())
        if state.problems:
            raise ArchiveTampered(
                "the audit log's chain is broken; an index cannot be rebuilt from it",
                state.problems,
            )
        rows = list(self._rows())
        fresh = self.root / f"{INDEX_NAME}.rebuild"
        for leftover in (fresh, *(fresh.with_name(fresh.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        conn = index.create(fresh)
        try:
            with self._write("rebuild the index"):
                index.migrate(conn)
                with index.transaction(conn):
                    problems = rebuilder.fill(conn, rows, state.records, self.conn, self.store.path)
                    if problems:
                        raise ArchiveError(
                            "the index was not rebuilt: some rows cannot be restored "
                            "(the old index is unchanged)",
                            problems,
                        )
                    derived = reconcile.replay(state.records)
                    counts = len(derived.bundles), len(derived.verifications)
                    rebuilt = Archive(self.root, conn)
                    rebuilt._append("rebuild", {"bundles": counts[0], "verifications": counts[1]})
        except BaseException:
            conn.close()
            fresh.unlink(missing_ok=True)
            raise
        conn.close()
        self.conn.close()
        stamp = now().replace(":", "").replace("-", "")
        with self._write("put the rebuilt index in place"):
            os.replace(
                self.index_path, self.index_path.with_name(f"{INDEX_NAME}.before-rebuild-{stamp}")
            )
            os.replace(fresh, self.index_path)
        self.conn = index.connect(self.index_path)
        return counts

    def consistency(self) -> list[Problem]:
        """Store against index: every row's object is present and intact, and no
        half-written object is visible. (Objects no row names are leftovers of an
        interrupted add: harmless, not problems.)"""
        problems = []
        for (digest,) in self.conn.execute("SELECT digest FROM bundles"):
            why = self.store.check(str(digest))
            if why:
                problems.append(Problem(f"bundle {digest}", "store.object", why))
        for name in self.store.digests():
            if not DIGEST_RE.match(name):
                problems.append(Problem(name, "store.partial", "a non-object file in the store"))
        return problems
