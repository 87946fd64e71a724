"""The archive: a store of bundles, their index and history, and the audit log over both.

``Archive`` is the open archive and the API over it. Each operation lives in a module
named after it (``add``, ``verify``, ``export``, ``query``, ``trust``, ``audit``,
``statements``, ``rebuild``) and is handed the archive's ``Context`` (its folder, index
connection and object store, and the one audit-log append); every statement on the
index is in ``index``. Every change is one index transaction that also appends, through
``Context.append``, the audit record describing it, so the log and the state it
describes cannot drift apart, even when a process is killed.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from bundler.errors import Problem, UsageError
from bundler.signatures.trust import Policy, TrustedKey
from bundler.store import add as adding
from bundler.store import (
    audit,
    checkpoint,
    copies,
    index,
    query,
    rebuild,
    signers,
    statements,
    trust,
)
from bundler.store import export as exporting
from bundler.store import verify as verifying
from bundler.store.add import AddReport
from bundler.store.audit import LogReport
from bundler.store.context import INDEX_NAME, KEY_NAME, Context, now
from bundler.store.errors import ArchiveError, db_failure, os_failure
from bundler.store.index import BundleRow, VerificationRow
from bundler.store.objects import Store
from bundler.store.query import MIN_PREFIX, Shown
from bundler.store.statements import Recorded
from bundler.store.verify import Batch

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ENV_VAR = "REPROBUNDLE_ARCHIVE"

__all__ = [
    "ENV_VAR",
    "INDEX_NAME",
    "KEY_NAME",
    "MIN_PREFIX",
    "AddReport",
    "Archive",
    "Batch",
    "BundleRow",
    "LogReport",
    "Shown",
    "VerificationRow",
]

P = ParamSpec("P")
R = TypeVar("R")


def _operation(
    function: Callable[Concatenate[Context, P], R],
) -> Callable[Concatenate[Archive, P], R]:
    """An operation module's function as a method: the archive hands it its context."""

    def method(archive: Archive, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return function(archive.context, *args, **kwargs)

    method.__name__, method.__doc__ = function.__name__, function.__doc__
    return method


class Archive:
    """An open archive. Use ``Archive.init`` or ``Archive.open``; close it (or use ``with``).

    An ``Archive`` belongs to the thread that opened it (it holds one SQLite connection,
    which SQLite lets only that thread use): used from another thread, every operation
    raises ``UsageError`` saying so. Threads that share an archive each open their own
    ``Archive`` on the same folder; SQLite serialises their writes."""

    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self._context = Context(root, conn, Store(root))
        self._thread = threading.get_ident()

    @property
    def context(self) -> Context:
        """What every operation is handed; only in the thread that opened the archive."""
        if threading.get_ident() != self._thread:
            raise UsageError(
                f"the archive {self._context.root} was opened in another thread: an Archive "
                "belongs to the thread that opened it; open one per thread (Archive.open)"
            )
        return self._context

    @property
    def root(self) -> Path:
        return self.context.root

    @property
    def conn(self) -> sqlite3.Connection:
        return self.context.conn

    @property
    def store(self) -> Store:
        return self.context.store

    @property
    def index_path(self) -> Path:
        return self.context.index_path

    @property
    def key_path(self) -> Path:
        return self.context.key_path

    @property
    def checkpoints(self) -> Path:
        return self.context.checkpoints

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def init(cls, root: Path, trusted: Sequence[TrustedKey] = ()) -> Archive:
        """Create a new archive in ``root`` (missing or an empty folder). ``trusted`` keys
        become the archive's trust store (``trust.toml``), used by every add and verify."""
        root = Path(root).absolute()
        public = _make_folder(root, trusted)
        archive = cls(root, index.create(root / INDEX_NAME))
        try:
            index.migrate(archive.conn)
            with index.transaction(archive.conn):
                created = now()
                archive_id = str(uuid.uuid4())
                index.set_meta(archive.conn, "archive", archive_id)
                index.set_meta(archive.conn, "created", created)
                record = {
                    "archive": archive_id,
                    "key": checkpoint.key_id(public),
                    "schema": index.SCHEMA_VERSION,
                    "trust": signers.trusted_ids(Policy(tuple(trusted))),
                    "keys": signers.state(trusted),
                }
                archive.context.append("init", record, created)
        except sqlite3.Error as exc:
            archive.close()
            raise db_failure(exc, "create the archive index", root / INDEX_NAME) from None
        except BaseException:
            archive.close()
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
                with archive.context.writing("upgrade the archive index"):
                    index.migrate(
                        conn,
                        record=lambda old, new: copies.after_migration(archive.context, old, new),
                    )
            if check_checkpoint:
                audit.check_last_checkpoint(conn)
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
        return self.context.archive_id

    # -- the operations -----------------------------------------------------------------

    # each is the operation's own function, handed the archive's context
    add = _operation(adding.add)
    verify = _operation(verifying.verify)
    export = _operation(exporting.export)

    def list_bundles(
        self,
        name: str | None = None,
        version: str | None = None,
        signer: str | None = None,
        status: str | None = None,
        claim_status: str | None = None,
    ) -> list[BundleRow]:
        """Bundles matching every filter given, by name then version (semver order)."""
        return query.list_bundles(self.conn, name, version, signer, status, claim_status)

    def resolve(self, selector: str) -> list[str]:
        """Digests a selector names (``query.resolve``)."""
        return query.resolve(self.conn, selector)

    def resolve_one(self, selector: str) -> str:
        return query.resolve_one(self.conn, selector)

    def select(self, selectors: Sequence[str] = (), all_bundles: bool = False) -> list[str]:
        """The digests that selectors (or ``all_bundles``) name, each once."""
        return query.select(self.conn, selectors, all_bundles)

    def show(self, selector: str) -> Shown:
        """One bundle, its claims and its whole verification history."""
        return query.show(self.conn, selector)

    # -- statements kept beside the bundles ---------------------------------------------

    def preregister(
        self,
        file: Path,
        given: Sequence[TrustedKey] = (),
        timestamp: Path | None = None,
        tsa_roots: Sequence[Path] = (),
    ) -> Recorded:
        """Store a pre-registration and log it: the log's checkpoints then show it existed
        no later than that entry (and an RFC 3161 ``timestamp``, checked against
        ``tsa_roots``, shows when on a third party's clock)."""
        return statements.preregister(self.context, file, tuple(given), timestamp, tuple(tsa_roots))

    def attest(self, file: Path, given: Sequence[TrustedKey] = ()) -> Recorded:
        """Store an attestation of a verification of a bundle the archive holds (signed by
        a trusted key) and log it."""
        return statements.attest(self.context, file, tuple(given))

    def statements(self, name: str | None = None, digest: str | None = None) -> list[Recorded]:
        """Pre-registrations of ``name`` and attestations of the bundle ``digest`` the log
        records, oldest first."""
        return statements.recorded(self.context, name, digest)

    # -- trust --------------------------------------------------------------------------

    def trust(self, given: Sequence[TrustedKey] = ()) -> Policy:
        """The keys trusted for one command: the archive's trust store and ``given``.
        Refuses a trust store that differs from what the log says it is."""
        return trust.policy(self.context, given)

    def trust_keys(self) -> tuple[TrustedKey, ...]:
        """The archive's trusted keys, after checking them against the log."""
        return trust.keys(self.context)

    def change_trust(self, change: str, key: TrustedKey | None = None, name: str = "") -> None:
        """Add a key (``change`` = ``add``), or revoke or remove the key named ``name``,
        logging the change with every key's permissions after it."""
        trust.change(self.context, change, key, name)

    def restore_trust(self) -> tuple[TrustedKey, ...]:
        """Write the trust store back as the log says it is."""
        return trust.restore(self.context)

    # -- the audit log ------------------------------------------------------------------

    def log_records(self, tail: int | None = None) -> list[bytes]:
        """The exact record bytes, oldest first (the last ``tail`` only, when given)."""
        return audit.records(self.conn, tail)

    def checkpoint(self) -> checkpoint.Checkpoint:
        """Sign the log's current size and head hash; remember it, keep a copy in
        ``checkpoints/``, and log that it was issued."""
        return audit.issue(self.context)

    def verify_log(self, extra: Sequence[Path] = ()) -> LogReport:
        """Walk the whole chain, check it against every checkpoint (the ones this archive
        kept and any given), and cross-check the index and the trust store against the
        log. Collects every problem; never raises for what it finds."""
        report = audit.verify_log(self.context, extra)
        report.problems.extend(statements.damaged(self.context))  # the statements kept beside
        return report

    def audit(self) -> None:
        """Refuse (``ArchiveTampered``) when the log's chain is broken or the index or the
        trust store is not what the log says."""
        audit.refuse_unless_consistent(self.context)

    def consistency(self) -> list[Problem]:
        """Store against index: every row's object is present and intact."""
        return audit.consistency(self.context)

    def rebuild(self) -> tuple[int, int]:
        """Replace the index by one rebuilt from the audit log and the store (the old
        file is kept beside it as ``index.sqlite.before-rebuild-TIME``). Refuses a log
        whose chain is broken, and a rebuild that cannot restore every row. Returns the
        number of bundles and verifications rebuilt. Run it while no other archive
        command runs."""
        counts = rebuild.rebuild(self.context)
        self._context = dataclasses.replace(
            self.context, conn=index.connect(self.context.index_path)
        )
        return counts


def _make_folder(root: Path, trusted: Sequence[TrustedKey]) -> Ed25519PublicKey:
    """The archive's folder with its store, key pair and trust store; the public key."""
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
    return public
