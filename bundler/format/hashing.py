"""Streaming SHA-256 with bounded buffers."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20


def sha256_stream(stream: BinaryIO) -> tuple[str, int]:
    """Hex digest and byte count of everything left in ``stream``."""
    digest = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


class HashingReader:
    """A binary stream that hashes every byte read through it: the digest of exactly the
    bytes a reader consumed (a verified bundle is read to its end, so the whole file)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._digest = hashlib.sha256()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._raw.read(size)
        self._digest.update(chunk)
        self.size += len(chunk)
        return chunk

    def close(self) -> None:
        self._raw.close()

    def fileno(self) -> int:
        """The descriptor read (what it is tells a file from a pipe)."""
        return self._raw.fileno()

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def sha256_file(path: str | Path) -> tuple[str, int]:
    """Hex digest and size of a file; an OSError names the file (a read error too)."""
    try:
        with open(path, "rb", buffering=0) as stream:  # unbuffered: one copy less per read
            return sha256_stream(stream)
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise


def sha256_files(paths: Sequence[str | Path]) -> list[tuple[str, int]]:
    """``sha256_file`` of each path, in order, on one thread per core (at most 4).

    Reads and hashlib release the GIL, so two threads hash 20,000 small files 1.5 times
    faster than one; each takes a contiguous share, since a hand-over per file costs more
    than it saves. The first error, in path order, is raised."""
    workers = min(4, os.cpu_count() or 1, len(paths) // 64 or 1)
    if workers == 1:
        return [sha256_file(path) for path in paths]
    bounds = [len(paths) * i // workers for i in range(workers + 1)]
    results: list[list[tuple[str, int]] | BaseException] = [[] for _ in range(workers)]

    def share(i: int) -> None:
        try:
            results[i] = [sha256_file(path) for path in paths[bounds[i] : bounds[i + 1]]]
        except BaseException as exc:  # raised again on the calling thread, in order
            results[i] = exc

    threads = [threading.Thread(target=share, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out: list[tuple[str, int]] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        out += result
    return out


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
