"""What the archive refuses, and how operating-system failures become clear messages.

A full disk, a read-only mount or a locked index are conditions of the machine, not
bugs: they are reported as ``ArchiveError`` naming the archive and what to do, never
as a traceback. A log or store that no longer matches its own hashes is
``ArchiveTampered`` (exit 3), reported loudly.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from bundler.codes import Ends
from bundler.errors import BundlerError, Problem


class ArchiveError(BundlerError):
    """The archive cannot do what was asked (missing, not writable, full, busy, ...)."""

    ends = Ends.ARCHIVE


class ArchiveRefused(BundlerError):
    """A bundle was refused (integrity, a reused name and version); the refusal is logged."""

    ends = Ends.REJECTED


class ArchiveTampered(BundlerError):
    """The audit log or the store does not match its own hashes or a checkpoint."""

    ends = Ends.TAMPERED


# what a reader of a read-only archive can still do, and how to write to it
_READ_ONLY = (
    "; the commands that only read (list, show, log verify, log show, trust list) work on it "
    "as it is; "
    "to change it, run as a user who may write the folder, or copy the folder somewhere "
    "writable and give that copy with --archive"
)
_OS_HINTS = {
    errno.ENOSPC: "the disk is full; free space and try again (nothing was half-written)",
    errno.EDQUOT: "the disk quota is exhausted; free space and try again",
    errno.EROFS: "the archive is on a read-only file system" + _READ_ONLY,
    errno.EACCES: "permission denied: this user may not write the archive" + _READ_ONLY,
    errno.EPERM: "operation not permitted: this user may not write the archive" + _READ_ONLY,
}


def os_failure(exc: OSError, what: str, where: Path | str) -> ArchiveError:
    """An ``OSError`` met while ``what``, as a message that names the place and the fix."""
    hint = _OS_HINTS.get(exc.errno or 0, exc.strerror or str(exc))
    return ArchiveError(
        f"cannot {what}: {hint}",
        [Problem(str(where), f"os.{errno.errorcode.get(exc.errno or 0, 'error')}", str(exc))],
    )


def db_failure(exc: sqlite3.Error, what: str, where: Path | str) -> ArchiveError:
    """A SQLite error as a clear message (disk full, read-only, locked, corrupt)."""
    text = str(exc)
    lowered = text.lower()
    if "full" in lowered:
        hint = "the disk is full; free space and try again (the index was left unchanged)"
        code = "index.full"
    elif "readonly" in lowered or "read-only" in lowered:
        hint = "the archive index is read-only for this user" + _READ_ONLY
        code = "index.readonly"
    elif "locked" in lowered or "busy" in lowered:
        hint = "the index stayed locked by another process; try again"
        code = "index.busy"
    elif "unable to open" in lowered:
        hint = (
            "the index cannot be opened: it is missing or not readable, or the folder is "
            "read-only (SQLite writes beside the index)" + _READ_ONLY
        )
        code = "index.open"
    elif "malformed" in lowered or "not a database" in lowered:
        hint = "the index file is damaged (not a readable SQLite database)"
        code = "index.corrupt"
    else:
        hint = text
        code = "index.error"
    return ArchiveError(f"cannot {what}: {hint}", [Problem(str(where), code, text)])
