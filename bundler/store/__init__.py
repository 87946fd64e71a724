"""The archive for later audit: bundles kept by content digest, an SQLite index with
every verification's history, and a tamper-evident audit log with signed checkpoints.

``Archive`` is the API (``archive.py``; one module per operation beside it, every SQL
statement in ``index.py``); the ``reprobundle archive`` commands are a thin shell over it.
Each batch result (``AddReport``, ``Batch``, ``LogReport``) carries its own exit code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# name -> the module that defines it. Resolved on first use (PEP 562), so a process that
# needs one operation (an archive or Dask worker imports ``bundler.store.reverify``) does
# not load them all (with cryptography and the audit log: ~0.2 s per worker process).
_EXPORTS = {
    "ENV_VAR": "bundler.store.archive",
    "EXIT_CODES": "bundler.store.reverify",
    "RESULTS": "bundler.store.reverify",
    "AddReport": "bundler.store.add",
    "Archive": "bundler.store.archive",
    "ArchiveError": "bundler.store.errors",
    "ArchiveRefused": "bundler.store.errors",
    "ArchiveTampered": "bundler.store.errors",
    "Batch": "bundler.store.verify",
    "BundleRow": "bundler.store.index",
    "Checkpoint": "bundler.store.checkpoint",
    "LogReport": "bundler.store.audit",
    "Outcome": "bundler.store.reverify",
    "Shown": "bundler.store.query",
    "VerificationRow": "bundler.store.index",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from bundler.store.add import AddReport
    from bundler.store.archive import ENV_VAR, Archive
    from bundler.store.audit import LogReport
    from bundler.store.checkpoint import Checkpoint
    from bundler.store.errors import ArchiveError, ArchiveRefused, ArchiveTampered
    from bundler.store.index import BundleRow, VerificationRow
    from bundler.store.query import Shown
    from bundler.store.reverify import EXIT_CODES, RESULTS, Outcome
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
    "Outcome",
    "Shown",
    "VerificationRow",
]
