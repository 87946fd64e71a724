"""Writing an untrusted bundle's files under one new folder, and hashing them as they go.

Folders and files are created relative to directory descriptors made here, never
following a link, files with ``O_EXCL``; nothing here decides what may be written (the
reader in ``extract`` does). Large files are hashed on a second thread; once a bundle has
shown many small files, the rest are created and hashed on a second process
(``filewriter``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from . import filewriter


class Hasher:
    """SHA-256 on a second thread, beside decompressing and writing on the first
    (hashlib and os.write release the GIL). The queue is short, so memory stays bounded."""

    THRESHOLD = 1 << 20  # smaller files are hashed in line: handing over costs more (measured)

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Any, memoryview] | None] = queue.Queue(maxsize=64)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            item[0].update(item[1])

    def update(self, digest: Any, chunk: memoryview) -> None:
        self._queue.put((digest, chunk))

    def finish(self) -> None:
        """Wait until every handed-over piece is hashed."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


class Writer:
    """Creates folders and files under one root without ever following a link.

    Folders are made here (a clash must stop the read at once). Once a bundle has shown
    it holds many small files, the next ones are written and hashed by a second process
    (``filewriter``), except while it lags behind; large ones are written here and
    hashed on a second thread.
    """

    PROCESS_AFTER = 256  # small files written here before the second process pays off

    def __init__(self, root: Path) -> None:
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self._folders = filewriter.Folders(self.root_fd, create=True)
        self._hasher: Hasher | None = None
        self._process: filewriter.FileProcess | None = None
        self._small = 0

    def write(self, rel: str, size: int, chunks: Iterable[memoryview]) -> Any:
        """Create ``rel`` from ``chunks``; returns its SHA-256 object, complete once
        ``finish`` has returned."""
        parent, _, name = rel.rpartition("/")
        dir_fd = self._folders.get(parent)
        if size < Hasher.THRESHOLD:
            self._small += 1
            if self._small == self.PROCESS_AFTER + 1 and os.path.isfile(filewriter.__file__):
                with contextlib.suppress(OSError):  # one try; without it, write here
                    self._process = filewriter.FileProcess(self.root_fd)
            if self._process is not None and not self._process.behind():
                return self._process.write(parent, name, size, chunks)
        fd = filewriter.create(name, dir_fd)
        digest = hashlib.sha256()
        update: Callable[[memoryview], None]
        if size >= Hasher.THRESHOLD:
            self._hasher = self._hasher or Hasher()
            update = partial(self._hasher.update, digest)
        else:
            update = digest.update
        try:
            for chunk in chunks:
                update(chunk)
                filewriter.write_all(fd, chunk)
        finally:
            os.close(fd)
        return digest

    def finish(self) -> None:
        """Wait until every file is written and hashed; raises the first write error."""
        if self._hasher is not None:
            self._hasher.finish()
        if self._process is not None:
            self._process.finish()

    def close(self) -> None:
        if self._hasher is not None:
            self._hasher.finish()
        if self._process is not None:
            self._process.close()
        self._folders.close()
