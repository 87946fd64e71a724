"""The archive for later audit: bundles kept by content digest, an SQLite index with
every verification's history, and a tamper-evident audit log with signed checkpoints.

``Archive`` is the API (``archive.py``; one module per operation beside it, every SQL
statement in ``index.py``); the ``reprobundle archive`` commands are a thin shell over it.
Each batch result (``AddReport``, ``Batch``, ``LogReport``) carries its own exit code.
"""

from bundler.store.add import AddReport
from bundler.store.archive import ENV_VAR, Archive
from bundler.store.audit import LogReport
from bundler.store.checkpoint import Checkpoint
from bundler.store.errors import ArchiveError, ArchiveRefused, ArchiveTampered
from bundler.store.index import BundleRow, VerificationRow
from bundler.store.query import Shown
from bundler.store.reverify import EXIT_CODES, RESULTS, Reverification
from bundler.store.verify import Batch

__all__ = [
    "ENV_VAR",
    "EXIT_CODES",
    "RESULTS",
    "AddReport",
    "Archive",
    "ArchiveError",
    "ArchiveRefused",
    "ArchiveTampered",
    "Batch",
    "BundleRow",
    "Checkpoint",
    "LogReport",
    "Reverification",
    "Shown",
    "VerificationRow",
]
