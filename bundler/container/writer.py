"""Writing an untrusted bundle's files under one new folder, hashing them as they go.

Folders and files are created relative to directory descriptors made here, never
following a link, files with ``O_EXCL``; nothing here decides what may be written (the
rules in ``readrules`` do). A file no case reads is only hashed (``sha256_of``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path


class Folders:
    """Folder descriptors below one root, each component opened without following a link
    (``O_DIRECTORY``: a file or a link where a folder should be fails as an OSError);
    with ``create``, a missing folder is made first.

    At most about ``KEEP`` stay open: a bundle may hold thousands of folders, and a process
    may often open only 1,024 files. Past that, all but the root are closed and opened
    again from the root when needed, just as safely."""

    KEEP = 128

    def __init__(self, root_fd: int, create: bool = False) -> None:
        self._fds: dict[str, int] = {"": root_fd}
        self._create = create

    def get(self, rel: str) -> int:
        fd = self._fds.get(rel)
        if fd is None:
            if len(self._fds) > self.KEEP:
                root = self._fds.pop("")
                self.close()
                self._fds[""] = root
            fd = self._open(rel)
        return fd

    def _open(self, rel: str) -> int:
        if rel in self._fds:
            return self._fds[rel]
        parent, _, name = rel.rpartition("/")
        parent_fd = self._open(parent)
        if self._create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=parent_fd)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        self._fds[rel] = fd
        return fd

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def create(name: str | bytes, folder_fd: int) -> int:
    """A new file, never an existing one and never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    return os.open(name, flags, 0o644, dir_fd=folder_fd)


def write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data) :]


def sha256_of(chunks: Iterable[memoryview]) -> str:
    """The SHA-256 (hex) of bytes that are not written anywhere."""
    if type(chunks) is tuple and len(chunks) == 1:  # a small file: one piece
        return hashlib.sha256(chunks[0]).hexdigest()
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


class Writer:
    """Creates folders and files under one root without ever following a link."""

    def __init__(self, root: Path) -> None:
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self._folders = Folders(self.root_fd, create=True)

    def write(self, rel: str, chunks: Iterable[memoryview]) -> str:
        """Create ``rel`` from ``chunks``; returns the SHA-256 (hex) of what was written."""
        parent, _, name = rel.rpartition("/")
        fd = create(name, self._folders.get(parent))
        digest = hashlib.sha256()
        try:
            for chunk in chunks:
                digest.update(chunk)
                write_all(fd, chunk)
        finally:
            os.close(fd)
        return digest.hexdigest()

    def close(self) -> None:
        self._folders.close()
