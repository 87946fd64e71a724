"""What every archive operation is handed: the archive's folder, its index connection and
object store, and the one way to append to its audit log.

``Archive`` makes a ``Context`` and gives it to each operation module (``add``,
``verify``, ``export``, ...); they import this module, never ``archive``, so the
store's imports point one way. Every new audit record, of every operation, is appended
by ``Context.append``: ``rebuild`` too, which copies the old log into the new index
byte for byte (``index.insert_records``: records already made, not new ones) and then
appends its own record through a context over that index.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bundler.errors import Problem
from bundler.store import auditlog, index
from bundler.store.errors import ArchiveTampered, db_failure, os_failure
from bundler.store.objects import Store
from bundler.version import __version__

INDEX_NAME = "index.sqlite"
KEY_NAME = "archive-ed25519.key"
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
class Context:
    """An open archive's parts, as the operations use them."""

    root: Path
    conn: sqlite3.Connection
    store: Store

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    @property
    def key_path(self) -> Path:
        return self.root / "keys" / KEY_NAME

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def archive_id(self) -> str:
        return index.meta(self.conn, "archive") or ""

    @contextlib.contextmanager
    def writing(self, what: str) -> Iterator[None]:
        """Turn SQLite and OS failures of a write into clear archive errors."""
        try:
            yield
        except sqlite3.Error as exc:
            raise db_failure(exc, what, self.index_path) from None
        except OSError as exc:
            raise os_failure(exc, what, self.root) from None

    @contextlib.contextmanager
    def transaction(self, what: str) -> Iterator[None]:
        """One write transaction on the index, its failures named as ``writing`` names
        them."""
        with self.writing(what), index.transaction(self.conn):
            yield

    def head(self) -> tuple[int, str]:
        """The log's size and head hash, after checking the head record's own hash."""
        row = index.last_record(self.conn)
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

    def append(self, event: str, data: dict[str, Any], at: str | None = None) -> int:
        """Append one audit record (at ``at``, the time the index rows it describes carry;
        default now) and return its number. Call inside a write transaction: the record
        commits with the rows it describes, or neither does."""
        seq, prev = self.head()
        record = auditlog.make_record(seq + 1, prev, at or now(), event, actor(), TOOL, data)
        index.insert_records(
            self.conn, [auditlog.Row(seq + 1, record, auditlog.record_hash(record))]
        )
        return seq + 1

    def log_refusal(self, data: dict[str, Any]) -> None:
        """Record a refusal in a transaction of its own (what was refused stores nothing)."""
        with self.transaction("record the refusal in the audit log"):
            self.append("refuse", data)
