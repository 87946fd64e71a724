"""Write a file so that readers see the old content or the new, never half of it.

The one rule every writer follows (outputs in ``bundler.output``, the archive's
objects, index and trust store): write a temporary file beside the target
(``beside``), then ``publish`` it: fsync it, give it the mode a new file would have
(or the one asked for), rename it over the target, fsync the folder so the rename
survives a crash. ``replacing`` and ``write_atomic`` are the two put together.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def beside(target: Path) -> Path:
    """A new, empty, private (0600) temporary file in ``target``'s folder (made if
    missing), named after it: ``.NAME.XXXX.partial``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    return Path(tmp)


def publish(tmp: Path | str, target: Path, mode: int | None = None) -> None:
    """Put a finished temporary file (in ``target``'s folder) in place of ``target``:
    fsynced, with ``mode`` (default: what a newly created file would have had, as
    temporary files are 0600 while they are written), renamed, and the folder fsynced."""
    with open(tmp, "rb") as stream:
        os.fsync(stream.fileno())
    os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)
    os.replace(tmp, target)
    sync_folder(target.parent)


def sync_folder(folder: Path) -> None:
    """fsync a folder, so that a rename into it is on disk; a file system that cannot
    sync folders (EINVAL) is left as it is."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A temporary file to write ``target``'s new content into; published over
    ``target`` when the block ends without an exception, removed otherwise."""
    target = target.absolute()
    tmp = beside(target)
    try:
        yield tmp
        publish(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)
