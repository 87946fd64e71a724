"""What every `archive` command shares: the exit codes each one names in its help, and
the archive it opens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bundler.cli._shared import exit_help

_WRITE = "2 usage error, or the archive cannot be read or written (full, read-only, damaged)"
_LOG = "3 the audit log no longer holds what its last checkpoint pinned"
ARCHIVE_EXIT_HELP = exit_help(
    "0 done (verify: every bundle supported)",
    "1 a claim contradicted",
    _WRITE,
    "3 refused, bit rot, or the audit log does not match its checkpoints",
    "4 inconclusive",
)
EXITS = {
    "init": exit_help("0 the archive was created", _WRITE),
    "add": exit_help(
        "0 every file added (or already there)",
        _WRITE,
        "3 a file was refused (integrity, signature, a name and version stored with other bytes)",
    ),
    "list": exit_help("0 listed", _WRITE, _LOG),
    "preregister": exit_help(
        "0 recorded",
        _WRITE,
        "3 refused (it does not read as a pre-registration)",
    ),
    "show": exit_help(
        "0 shown", "2 usage error (no such bundle), or the archive cannot be read", _LOG
    ),
    "verify": exit_help(
        "0 every bundle verified supported",
        "1 a claim contradicted",
        _WRITE,
        "3 bit rot, a missing or rejected bundle",
        "4 inconclusive",
    ),
    "export": exit_help(
        "0 exported", _WRITE, "3 the stored file no longer has its digest (bit rot)"
    ),
    "checkpoint": exit_help("0 the checkpoint was written", _WRITE, _LOG),
    "log": exit_help("0 consistent, or shown", _WRITE, "3 the log does not match"),
    "log verify": exit_help(
        "0 the log is consistent",
        _WRITE,
        "3 a record was edited, reordered, removed or rewritten, or a checkpoint does not match",
    ),
    "log show": exit_help("0 shown", _WRITE, _LOG),
}


def given(root: Path | None) -> Path:
    """The archive folder the command was given (--archive or the environment)."""
    from bundler.errors import UsageError
    from bundler.store import ENV_VAR

    if root is None:
        raise UsageError(f"no archive given: pass --archive DIR or set {ENV_VAR}")
    return root


@contextmanager
def opened(
    root: Path | None, /, check_checkpoint: bool = True, read_only: bool = False
) -> Iterator[Any]:
    """The archive, opened for one command; ``read_only`` for the commands that only read,
    so that an auditor with read access (or a read-only mount) can run them."""
    from bundler.store import Archive

    archive = Archive.open(given(root), check_checkpoint=check_checkpoint, read_only=read_only)
    try:
        yield archive
    finally:
        archive.close()
