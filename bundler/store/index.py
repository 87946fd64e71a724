"""The archive's SQLite index: schema, versioned migrations, and the connection rules.

WAL mode lets readers run beside one writer; every change (a bundle row, a
verification, and the audit record describing it) is one ``BEGIN IMMEDIATE``
transaction, so concurrent writers queue instead of interleaving, and a crash leaves
either all of it or none. The schema version lives in ``PRAGMA user_version``;
``MIGRATIONS[n]`` takes an index from version ``n`` to ``n + 1``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from bundler.store.errors import ArchiveError, db_failure

BUSY_TIMEOUT_MS = 60_000

# Each migration is a list of statements run in one transaction. Never edit a
# released migration: add a new one.
MIGRATIONS: Sequence[Sequence[str]] = (
    # 0 -> 1: the tables
    (
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE bundles (
            digest TEXT PRIMARY KEY,
            identity TEXT NOT NULL,
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            title TEXT NOT NULL,
            signer TEXT NOT NULL,
            size INTEGER NOT NULL,
            added_at TEXT NOT NULL,
            added_by TEXT NOT NULL,
            tool TEXT NOT NULL,
            manifest BLOB NOT NULL,
            last_verification INTEGER,
            last_result TEXT NOT NULL DEFAULT 'unverified',
            UNIQUE (name, version)
        )""",
        """CREATE TABLE claims (
            digest TEXT NOT NULL REFERENCES bundles (digest),
            claim_id TEXT NOT NULL,
            statement TEXT NOT NULL,
            PRIMARY KEY (digest, claim_id)
        )""",
        """CREATE TABLE verifications (
            id INTEGER PRIMARY KEY,
            digest TEXT NOT NULL REFERENCES bundles (digest),
            at TEXT NOT NULL,
            tool TEXT NOT NULL,
            result TEXT NOT NULL,
            exit_code INTEGER NOT NULL,
            environment TEXT NOT NULL,
            detail TEXT NOT NULL
        )""",
        """CREATE TABLE claim_results (
            verification INTEGER NOT NULL REFERENCES verifications (id),
            claim_id TEXT NOT NULL,
            status TEXT NOT NULL,
            why TEXT NOT NULL,
            PRIMARY KEY (verification, claim_id)
        )""",
        """CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY,
            record BLOB NOT NULL,
            hash TEXT NOT NULL
        )""",
    ),
    # 1 -> 2: indexes for the queries list/show/verify make, so they stay fast at 100k bundles
    (
        "CREATE INDEX bundles_by_identity ON bundles (identity)",
        "CREATE INDEX bundles_by_signer ON bundles (signer, name)",
        "CREATE INDEX bundles_by_result ON bundles (last_result, name)",
        "CREATE INDEX bundles_by_added ON bundles (added_at)",
        "CREATE INDEX verifications_by_bundle ON verifications (digest, id)",
        "CREATE INDEX claim_results_by_status ON claim_results (status, verification)",
    ),
    # 2 -> 3: every key that signed a bundle, with the trusted key's name when the archive
    # trusted it at the latest check (list --signer NAME|KEYID)
    (
        """CREATE TABLE bundle_signers (
            digest TEXT NOT NULL REFERENCES bundles (digest),
            keyid TEXT NOT NULL,
            trusted_name TEXT,
            PRIMARY KEY (digest, keyid)
        )""",
        "CREATE INDEX bundle_signers_by_keyid ON bundle_signers (keyid)",
        "CREATE INDEX bundle_signers_by_name ON bundle_signers (trusted_name)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


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


def configure(conn: sqlite3.Connection) -> None:
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
    with transaction(conn):
        found = schema_version(conn)
        if found > SCHEMA_VERSION:
            raise ArchiveError(
                f"the archive index has schema version {found}, this reprobundle knows up to "
                f"{SCHEMA_VERSION}; use a newer reprobundle"
            )
        for number in range(found, upto):
            for statement in MIGRATIONS[number]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
        if record is not None and upto > found:
            record(found, upto)
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
