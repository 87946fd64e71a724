"""The archive's SQLite index: schema, versioned migrations, the connection rules, and
every statement the archive runs on it (the rest of the store calls these by name).

WAL mode lets readers run beside one writer; every change (a bundle row, a
verification, and the audit record describing it) is one ``BEGIN IMMEDIATE``
transaction, so concurrent writers queue instead of interleaving, and a crash leaves
either all of it or none. The schema version lives in ``PRAGMA user_version``;
``MIGRATIONS[n]`` (``schema``) takes an index from version ``n`` to ``n + 1``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.store import logkeys, versions
from bundler.store.auditlog import Row
from bundler.store.errors import ArchiveError, db_failure
from bundler.store.schema import MIGRATIONS as MIGRATIONS
from bundler.store.schema import SCHEMA_VERSION as SCHEMA_VERSION

BUSY_TIMEOUT_MS = 60_000


def connect(path: Path) -> sqlite3.Connection:
    """Open the index (it must exist) with the archive's pragmas."""
    if not path.is_file():
        raise ArchiveError(
            f"{path.parent} is not an archive (no {path.name}); create one with "
            "'reprobundle archive init'"
        )
    return _open(path, "open the archive index")


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the index for reading only, writing nothing beside it. SQLite reads a WAL
    index read-only when its ``-shm`` file exists or can be made; an index a writer has
    closed cleanly has neither ``-wal`` nor ``-shm``, and is then read as immutable
    (correct while no writer starts meanwhile: an auditor's copy, a read-only mount)."""
    if not path.is_file():
        connect(path)  # the same message for a folder that is not an archive
    wal = path.with_name(path.name + "-wal")
    modes = ["mode=ro"]
    if not wal.exists() or wal.stat().st_size == 0:
        modes.append("immutable=1")
    failure: sqlite3.Error | None = None
    for mode in modes:
        try:
            conn = sqlite3.connect(
                f"{path.as_uri()}?{mode}",
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
            )
        except sqlite3.Error as exc:
            failure = exc
            continue
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            _functions(conn)
            return conn
        except sqlite3.Error as exc:
            conn.close()
            failure = exc
    assert failure is not None
    raise db_failure(failure, "read the archive index", path) from None


def check_schema(conn: sqlite3.Connection) -> None:
    """A read-only index must be at this tool's schema: it cannot be migrated."""
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise ArchiveError(
            f"the archive index has schema version {found}, this reprobundle knows up to "
            f"{SCHEMA_VERSION}; use a newer reprobundle"
        )
    if found < SCHEMA_VERSION:
        raise ArchiveError(
            f"the archive index has schema version {found}, older than this reprobundle's "
            f"{SCHEMA_VERSION}, and is opened read-only; run a command that writes (such as "
            "'reprobundle archive verify') once with write access to migrate it"
        )


def create(path: Path) -> sqlite3.Connection:
    return _open(path, "create the archive index")


def _open(path: Path, what: str) -> sqlite3.Connection:
    """Connect and configure; a connection that cannot be configured (a damaged file, a
    read-only folder) is closed at once rather than left to the garbage collector."""
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise db_failure(exc, what, path) from None
    try:
        configure(conn)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error):
            raise db_failure(exc, what, path) from None
        raise
    return conn


def _functions(conn: sqlite3.Connection) -> None:  # ours, called in SQL
    conn.create_function("reprobundle_version_order", 1, versions.order, deterministic=True)
    conn.create_function("reprobundle_log_keys", 1, logkeys.keys_as_json, deterministic=True)


def configure(conn: sqlite3.Connection) -> None:
    _functions(conn)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise sqlite3.OperationalError(f"cannot switch the index to WAL mode (got {mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection,
    upto: int = SCHEMA_VERSION,
    record: Callable[[int, int], object] | None = None,
) -> tuple[int, int]:
    """Bring the index to schema ``upto``. Returns (from, to). Refuses a newer schema.
    ``record(from, to)`` runs inside the same transaction when a migration happened (the
    archive logs it there, so a migration is never left unlogged)."""
    if schema_version(conn) == upto:
        return upto, upto  # the common case: no write lock taken
    # a migration may rebuild a table others refer to (SQLite's way to change a
    # constraint): foreign keys are off while it runs (the pragma is a no-op inside a
    # transaction) and checked, all of them, before it commits
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        with transaction(conn):
            found = schema_version(conn)
            if found > SCHEMA_VERSION:
                raise ArchiveError(
                    f"the archive index has schema version {found}, this reprobundle knows "
                    f"up to {SCHEMA_VERSION}; use a newer reprobundle"
                )
            for number in range(found, upto):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise ArchiveError(
                    f"the archive index cannot be migrated: {len(broken)} row(s) refer to "
                    f"rows it does not hold (first: table {broken[0][0]}, row {broken[0][1]}); "
                    "'reprobundle archive rebuild' rebuilds it from the log"
                )
            if record is not None and upto > found:
                record(found, upto)
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return found, max(found, upto)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (``BEGIN IMMEDIATE``) so writers queue."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: every query inside sees the index as of its first read, so a
    check that reads the log and then the rows never sees an add committed between them
    (the connection is in autocommit mode; WAL keeps the snapshot without blocking
    writers). Inside a transaction already, that one is the snapshot."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("COMMIT")


# -- the rows --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BundleRow:
    """One stored bundle, as the index lists it (every column but the manifest)."""

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
    withheld: int | None = None  # a redacted copy: how many files it withholds

    @property
    def copy(self) -> str:
        """Which copy of its identity this row is: ``full`` or ``redacted``."""
        return "full" if self.withheld is None else "redacted"

    @property
    def copy_text(self) -> str:
        """``full``, or ``redacted: N files withheld``."""
        return "full" if self.withheld is None else f"redacted: {self.withheld} files withheld"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "copy": self.copy}


@dataclass(frozen=True)
class VerificationRow:
    """One verification in a bundle's history, with its claim results."""

    id: int
    at: str
    tool: str
    result: str
    exit_code: int
    environment: dict[str, Any]
    detail: dict[str, Any]
    claims: list[dict[str, str]]  # id, status, why

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_BUNDLE_COLUMNS = (
    "digest, identity, name, version, title, signer, size, added_at, added_by, tool, "
    "last_result, last_verification, withheld"
)


# -- meta --------------------------------------------------------------------------------------


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def all_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


# -- the audit log's rows ----------------------------------------------------------------------


def last_record(conn: sqlite3.Connection) -> Row | None:
    row = conn.execute(
        "SELECT seq, record, hash FROM audit_log ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    return None if row is None else Row(int(row[0]), bytes(row[1]), str(row[2]))


def records(conn: sqlite3.Connection) -> Iterator[Row]:
    """Every record, in ``seq`` order."""
    for seq, record, stored in conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq"):
        yield Row(int(seq), bytes(record), str(stored))


def last_records(conn: sqlite3.Connection, count: int) -> list[bytes]:
    """The last ``count`` records' bytes, oldest first."""
    rows = conn.execute(
        "SELECT record FROM audit_log ORDER BY seq DESC LIMIT ?", (count,)
    ).fetchall()
    return [bytes(r[0]) for r in reversed(rows)]


def record_at(conn: sqlite3.Connection, seq: int) -> bytes | None:
    row = conn.execute("SELECT record FROM audit_log WHERE seq = ?", (seq,)).fetchone()
    return None if row is None else bytes(row[0])


def insert_records(conn: sqlite3.Connection, rows: Iterable[Row]) -> None:
    """Records into the log, and their keys into its lookup table (``logkeys``)."""
    rows = list(rows)
    conn.executemany(
        "INSERT INTO audit_log (seq, record, hash) VALUES (?, ?, ?)",
        [(r.seq, r.record, r.hash) for r in rows],
    )
    logkeys.insert(conn, rows)


# -- bundles -----------------------------------------------------------------------------------


def bundle(conn: sqlite3.Connection, digest: str) -> BundleRow | None:
    row = conn.execute(
        f"SELECT {_BUNDLE_COLUMNS} FROM bundles WHERE digest = ?", (digest,)
    ).fetchone()
    return None if row is None else BundleRow(*row)


def copies_of(conn: sqlite3.Connection, name: str, version: str) -> list[BundleRow]:
    """Every stored copy of NAME@VERSION: the full one first, then the redacted ones in
    the order added (they share one identity: ``add`` refuses another)."""
    return [
        BundleRow(*r)
        for r in conn.execute(
            f"SELECT {_BUNDLE_COLUMNS} FROM bundles WHERE name = ? AND version = ? "
            "ORDER BY withheld IS NOT NULL, added_at, digest",
            (name, version),
        )
    ]


def set_withheld(conn: sqlite3.Connection, digest: str, withheld: int | None) -> None:
    conn.execute("UPDATE bundles SET withheld = ? WHERE digest = ?", (withheld, digest))


def highest_version(conn: sqlite3.Connection, name: str) -> str | None:
    """The highest stored semver of ``name`` (None: none): one lookup, however many."""
    row = conn.execute(
        "SELECT version FROM bundles WHERE name = ? AND version_order IS NOT NULL "
        "ORDER BY version_order DESC LIMIT 1",
        (name,),
    ).fetchone()
    return None if row is None else str(row[0])


def misordered(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The bundles (digest, version) whose ``version_order`` is not their version's."""
    return [
        (str(d), str(v))
        for d, v in conn.execute(
            "SELECT digest, version FROM bundles "
            "WHERE version_order IS NOT reprobundle_version_order(version)"
        )
    ]


def digests(conn: sqlite3.Connection) -> list[str]:
    """Every stored bundle's digest (each copy of each identity), by name."""
    return [str(d) for (d,) in conn.execute("SELECT digest FROM bundles ORDER BY name")]


def entry_digests(conn: sqlite3.Connection) -> list[str]:
    """One digest per stored identity, by name: its full copy when held, else its
    redacted copy added first."""
    return [
        str(d)
        for (d,) in conn.execute(
            "SELECT digest FROM bundles b WHERE digest = (SELECT c.digest FROM bundles c "
            "WHERE c.identity = b.identity "
            "ORDER BY c.withheld IS NOT NULL, c.added_at, c.digest LIMIT 1) ORDER BY name"
        )
    ]


def digests_with_prefix(conn: sqlite3.Connection, prefix: str) -> set[str]:
    """Digests of the bundles whose digest or identity begins with ``prefix`` (lower-case
    hex); two at most of each, enough to tell a unique prefix from an ambiguous one."""
    return {
        str(d)
        for column in ("digest", "identity")
        for (d,) in conn.execute(
            f"SELECT digest FROM bundles WHERE {column} >= ? AND {column} < ? LIMIT 2",
            (prefix, prefix + "g"),
        )
    }


def signer_selector(value: str, keyid_prefix: bool) -> tuple[str, list[str]]:
    """SQL selecting the digests whose signer matches ``value``: the recorded text, a
    trusted key's name, or a key id (``keyid_prefix``: or the beginning of one)."""
    lowered = value.lower()
    sql = (
        "SELECT digest FROM bundles WHERE signer = ? "
        "UNION SELECT digest FROM bundle_signers WHERE trusted_name = ? OR keyid = ?"
    )
    args = [value, value, lowered]
    if keyid_prefix:
        sql += " UNION SELECT digest FROM bundle_signers WHERE keyid >= ? AND keyid < ?"
        args += [lowered, lowered + "g"]
    return sql, args


def find_bundles(
    conn: sqlite3.Connection,
    equal: Iterable[tuple[str, str | None]] = (),
    signer: tuple[str, list[str]] | None = None,
    claim_status: str | None = None,
) -> list[BundleRow]:
    """Bundles whose columns ``equal`` the values given (a None value: any), signed as
    ``signer`` (a ``signer_selector``) selects, with a claim of ``claim_status`` in their
    latest verification. In no particular order."""
    where: list[str] = []
    args: list[str] = []
    for column, value in equal:
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if signer is not None:
        where.append(f"digest IN ({signer[0]})")
        args += signer[1]
    if claim_status is not None:
        where.append(
            "last_verification IN (SELECT verification FROM claim_results WHERE status = ?)"
        )
        args.append(claim_status)
    sql = f"SELECT {_BUNDLE_COLUMNS} FROM bundles"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return [BundleRow(*r) for r in conn.execute(sql, args)]


def insert_bundle(conn: sqlite3.Connection, row: BundleRow, manifest: bytes) -> None:
    conn.execute(
        f"INSERT INTO bundles ({_BUNDLE_COLUMNS}, manifest, version_order) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*row.__dict__.values(), manifest, versions.order(row.version)),
    )


def manifest_of(conn: sqlite3.Connection, digest: str) -> bytes | None:
    row = conn.execute("SELECT manifest FROM bundles WHERE digest = ?", (digest,)).fetchone()
    return None if row is None else bytes(row[0])


def all_bundles(conn: sqlite3.Connection) -> Iterator[tuple[BundleRow, bytes]]:
    """Every bundle row with its manifest bytes."""
    for row in conn.execute(f"SELECT {_BUNDLE_COLUMNS}, manifest FROM bundles"):
        yield BundleRow(*row[:-1]), bytes(row[-1])


def set_last_result(conn: sqlite3.Connection, digest: str, result: str, verification: int) -> None:
    conn.execute(
        "UPDATE bundles SET last_result = ?, last_verification = ? WHERE digest = ?",
        (result, verification, digest),
    )


# -- claims and signers ------------------------------------------------------------------------


def insert_claims(conn: sqlite3.Connection, digest: str, claims: Iterable[tuple[str, str]]) -> None:
    """A bundle's claims (id, statement), in the manifest's order."""
    conn.executemany(
        "INSERT INTO claims (digest, claim_id, statement) VALUES (?, ?, ?)",
        [(digest, claim_id, statement) for claim_id, statement in claims],
    )


def claims_of(conn: sqlite3.Connection, digest: str) -> list[tuple[str, str]]:
    return [
        (str(i), str(s))
        for i, s in conn.execute(
            "SELECT claim_id, statement FROM claims WHERE digest = ? ORDER BY rowid", (digest,)
        )
    ]


def all_claims(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str]]:
    """Every claim (digest, id, statement), in the order added."""
    for digest, claim_id, statement in conn.execute(
        "SELECT digest, claim_id, statement FROM claims ORDER BY rowid"
    ):
        yield str(digest), str(claim_id), str(statement)


def set_signer(
    conn: sqlite3.Connection, digest: str, text: str, keys: Iterable[tuple[str, str | None]]
) -> None:
    """Record who signed a bundle: its signer text and each key (id, trusted name or None)."""
    conn.execute("UPDATE bundles SET signer = ? WHERE digest = ?", (text, digest))
    conn.execute("DELETE FROM bundle_signers WHERE digest = ?", (digest,))
    insert_signers(conn, digest, keys)


def insert_signers(
    conn: sqlite3.Connection, digest: str, keys: Iterable[tuple[str, str | None]]
) -> None:
    conn.executemany(
        "INSERT INTO bundle_signers (digest, keyid, trusted_name) VALUES (?, ?, ?)",
        [(digest, keyid, name) for keyid, name in keys],
    )


def signers_of(conn: sqlite3.Connection, digest: str) -> list[tuple[str, str | None]]:
    return [
        (str(k), n)
        for k, n in conn.execute(
            "SELECT keyid, trusted_name FROM bundle_signers WHERE digest = ?", (digest,)
        )
    ]


def all_signers(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str | None]]:
    """Every signing key of every bundle (digest, key id, trusted name or None)."""
    for digest, keyid, name in conn.execute(
        "SELECT digest, keyid, trusted_name FROM bundle_signers"
    ):
        yield str(digest), str(keyid), name


# -- verifications -----------------------------------------------------------------------------


def insert_verification(
    conn: sqlite3.Connection,
    digest: str,
    at: str,
    tool: str,
    result: str,
    exit_code: int,
    environment: Any,  # JSON values (a dict, unless a log was forged)
    detail: Any,
    claims: Iterable[tuple[str, str, str]],
    id: int | None = None,
) -> int:
    """A verification with its claim results (id, status, why); returns its id (a new one
    unless ``id`` is given)."""
    cursor = conn.execute(
        "INSERT INTO verifications (id, digest, at, tool, result, exit_code, environment, "
        "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            id,
            digest,
            at,
            tool,
            result,
            exit_code,
            json.dumps(environment, sort_keys=True, allow_nan=False),
            json.dumps(detail, sort_keys=True, allow_nan=False),
        ),
    )
    vid = int(cursor.lastrowid or 0) if id is None else id
    conn.executemany(
        "INSERT INTO claim_results (verification, claim_id, status, why) VALUES (?, ?, ?, ?)",
        [(vid, c, s, w) for c, s, w in claims],
    )
    return vid


def claim_results_of(conn: sqlite3.Connection, verification: int) -> list[tuple[str, str, str]]:
    return [
        (str(c), str(s), str(w))
        for c, s, w in conn.execute(
            "SELECT claim_id, status, why FROM claim_results WHERE verification = ? ORDER BY rowid",
            (verification,),
        )
    ]


def history(conn: sqlite3.Connection, digest: str) -> list[VerificationRow]:
    """A bundle's verifications, oldest first."""
    return [
        VerificationRow(
            int(vid),
            at,
            tool,
            result,
            int(code),
            _stored_json(env, f"verification {vid}"),
            _stored_json(detail, f"verification {vid}"),
            [{"id": c, "status": s, "why": w} for c, s, w in claim_results_of(conn, int(vid))],
        )
        for vid, at, tool, result, code, env, detail in conn.execute(
            "SELECT id, at, tool, result, exit_code, environment, detail FROM verifications "
            "WHERE digest = ? ORDER BY id",
            (digest,),
        ).fetchall()
    ]


def verification_of(
    conn: sqlite3.Connection, verification: int, digest: str, result: str
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The environment and detail of a verification, if it is of ``digest`` with ``result``."""
    row = conn.execute(
        "SELECT environment, detail FROM verifications WHERE id = ? AND digest = ? AND result = ?",
        (verification, digest, result),
    ).fetchone()
    if row is None:
        return None
    where = f"verification {verification}"
    return _stored_json(row[0], where), _stored_json(row[1], where)


def _stored_json(text: str, where: str) -> Any:
    """A JSON column, read strictly (bounded depth): the index file is untrusted."""
    from bundler.errors import Problem
    from bundler.store.errors import ArchiveTampered
    from checkers import strictjson

    try:
        return strictjson.loads(text)
    except (TypeError, ValueError) as exc:
        raise ArchiveTampered(
            "the archive's index holds a damaged row; 'reprobundle archive rebuild' "
            "rebuilds it from the log",
            [Problem(where, "index.altered", f"not strict JSON ({exc})")],
        ) from None


def verification_row(conn: sqlite3.Connection, vid: int) -> tuple[Any, ...] | None:
    """One verification as stored (digest, at, tool, result, exit code, and the environment
    and detail text, not decoded: they may be damaged), or None."""
    return conn.execute(  # type: ignore[no-any-return]
        "SELECT digest, at, tool, result, exit_code, environment, detail FROM verifications "
        "WHERE id = ?",
        (vid,),
    ).fetchone()


def verification_ids(conn: sqlite3.Connection) -> Iterator[int]:
    for (vid,) in conn.execute("SELECT id FROM verifications ORDER BY id"):
        yield int(vid)


def verification_ids_of(conn: sqlite3.Connection, digest: str) -> list[int]:
    """The ids of one bundle's verifications, oldest first (``verifications_by_bundle``)."""
    return [
        int(vid)
        for (vid,) in conn.execute(
            "SELECT id FROM verifications WHERE digest = ? ORDER BY id", (digest,)
        )
    ]


def orphan_claim_results(conn: sqlite3.Connection) -> list[int]:
    """The verification ids of claim results whose verification the index does not hold."""
    return [
        int(vid)
        for (vid,) in conn.execute(
            "SELECT DISTINCT verification FROM claim_results "
            "WHERE verification NOT IN (SELECT id FROM verifications) ORDER BY verification"
        )
    ]
