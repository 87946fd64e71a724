"""The archive for later audit: bundles kept by content digest, an SQLite index with
every verification's history, and a tamper-evident audit log with signed checkpoints.

``Archive`` is the API; the ``reprobundle archive`` commands are a thin shell over it.
"""

from bundler.store.archive import (
    ENV_VAR,
    AddReport,
    Archive,
    BundleRow,
    LogReport,
    Shown,
    VerificationRow,
)
from bundler.store.checkpoint import Checkpoint
from bundler.store.errors import ArchiveError, ArchiveRefused, ArchiveTampered
from bundler.store.reverify import EXIT_CODES, RESULTS, Outcome

__all__ = [
    "ENV_VAR",
    "EXIT_CODES",
    "RESULTS",
    "AddReport",
    "Archive",
    "ArchiveError",
    "ArchiveRefused",
    "ArchiveTampered",
    "BundleRow",
    "Checkpoint",
    "LogReport",
    "Outcome",
    "Shown",
    "VerificationRow",
]
