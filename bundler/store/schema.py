"""The archive index's schema: every migration, in order, from an empty file to today's
tables. ``MIGRATIONS[n]`` takes an index from version ``n`` to ``n + 1``
(``PRAGMA user_version``); ``index.migrate`` runs them, each in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

# the columns of schema 4's bundles table, copied into schema 5's
_V4_COLUMNS = (
    "digest, identity, name, version, title, signer, size, added_at, added_by, tool, "
    "manifest, last_verification, last_result, version_order"
)

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
    # 3 -> 4 (issue 47): each version's order as text (``versions.order``), indexed with its
    # name, so that an add finds the highest stored version of a name by one lookup; the
    # log's records by event, digest and name (``logkeys``), so that add and show read the
    # records they check, not the whole log
    (
        "ALTER TABLE bundles ADD COLUMN version_order TEXT",
        "UPDATE bundles SET version_order = reprobundle_version_order(version)",
        "CREATE INDEX bundles_by_version_order ON bundles (name, version_order)",
        """CREATE TABLE log_keys (
            key TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (key, seq)
        ) WITHOUT ROWID""",
        "CREATE INDEX log_keys_by_seq ON log_keys (seq)",
        "INSERT OR IGNORE INTO log_keys (key, seq) SELECT k.value, a.seq "
        "FROM audit_log a, json_each(reprobundle_log_keys(a.record)) k",
    ),
    # 4 -> 5 (issue 45): one identity may be held as a full copy, redacted copies, or both,
    # each a row of its own keyed by its file digest; ``withheld`` is NULL for the full
    # copy and the number of files withheld for a redacted one. ``UNIQUE (name, version)``
    # becomes "one full copy per NAME@VERSION" (that copies share one identity is the add's
    # rule). SQLite cannot drop a constraint: the table is rebuilt (``index.migrate`` runs
    # a migration with foreign keys off and checks them before it commits). Which rows of an
    # older index are redacted copies is read from their stored objects as the archive
    # opens (``copies.after_migration``), and logged.
    (
        """CREATE TABLE bundles_v5 (
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
            version_order TEXT,
            withheld INTEGER CHECK (withheld IS NULL OR withheld > 0)
        )""",
        f"INSERT INTO bundles_v5 ({_V4_COLUMNS}) SELECT {_V4_COLUMNS} FROM bundles",
        "DROP TABLE bundles",
        "ALTER TABLE bundles_v5 RENAME TO bundles",
        "CREATE UNIQUE INDEX bundles_full_copy ON bundles (name, version) WHERE withheld IS NULL",
        "CREATE INDEX bundles_by_name_version ON bundles (name, version)",
        "CREATE INDEX bundles_by_identity ON bundles (identity)",
        "CREATE INDEX bundles_by_signer ON bundles (signer, name)",
        "CREATE INDEX bundles_by_result ON bundles (last_result, name)",
        "CREATE INDEX bundles_by_added ON bundles (added_at)",
        "CREATE INDEX bundles_by_version_order ON bundles (name, version_order)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
