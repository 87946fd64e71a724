"""Reading a file a user names, bounded: the one reader of small files the tool is handed
(a key, a trust store, a signature, a pre-registration, an attestation, a log).

Beside ``bundler.output`` (every file a command writes) and ``bundler.atomic``: the
reading side. A FIFO, device or folder is refused (it could hang or never end), and a
huge file is never read whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bundler.errors import UsageError


def read_bounded(path: Path, max_bytes: int, what: str) -> bytes:
    """At most ``max_bytes + 1`` bytes of the regular file ``path`` (so that a caller
    can tell a file at the cap from a larger one). Raises ``UsageError`` naming the path
    and ``what`` it was to be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"cannot read {what} {path}: not a regular file")
        os.set_blocking(fd, True)
        chunks, left = [], max_bytes + 1
        while left and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
