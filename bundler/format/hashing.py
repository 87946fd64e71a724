"""Streaming SHA-256 with bounded buffers."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20


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
    digest, size, _ = _read_and_hash(path, 0)
    return digest, size


def _read_and_hash(path: str | Path, keep_below: int) -> tuple[str, int, bytes | None]:
    """Digest, size and, for a file of fewer than ``keep_below`` bytes, its bytes. Read on
    a bare descriptor (no file object), asking first for the size it has now and one byte
    more, then to its end: a small file is read whole at once, with no 1 MiB buffer."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            chunk = os.read(fd, min(os.fstat(fd).st_size + 1, CHUNK))
            digest = hashlib.sha256(chunk)
            size = len(chunk)
            first = chunk
            while chunk:
                chunk = os.read(fd, CHUNK)
                digest.update(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise
    return digest.hexdigest(), size, first if size == len(first) < keep_below else None


def sha256_files(paths: Sequence[str | Path]) -> list[tuple[str, int]]:
    """``sha256_file`` of each path, in order, on one thread per core (at most 4).

    Reads and hashlib release the GIL, so two threads hash 20,000 small files 1.5 times
    faster than one; each takes a contiguous share, since a hand-over per file costs more
    than it saves. The first error, in path order, is raised."""
    return [(digest, size) for digest, size, _ in read_and_hash_files(paths)]


def read_and_hash_files(
    paths: Sequence[str | Path], keep_below: int = 0, keep_at_most: int = 0
) -> list[tuple[str, int, bytes | None]]:
    """``sha256_files``, with the bytes of each file of fewer than ``keep_below`` bytes
    while they add up to at most ``keep_at_most`` (None for the others): what a build
    packs without reading those files again."""
    workers = min(4, os.cpu_count() or 1, len(paths) // 64 or 1)
    bounds = [len(paths) * i // workers for i in range(workers + 1)]
    results: list[list[tuple[str, int, bytes | None]] | BaseException] = [
        [] for _ in range(workers)
    ]

    def share(i: int) -> None:
        budget = keep_at_most // workers
        out: list[tuple[str, int, bytes | None]] = []
        try:
            for path in paths[bounds[i] : bounds[i + 1]]:
                hashed = _read_and_hash(path, keep_below if budget > 0 else 0)
                if hashed[2] is not None:
                    budget -= hashed[1]
                out.append(hashed)
        except BaseException as exc:  # raised again on the calling thread, in order
            results[i] = exc
            return
        results[i] = out

    if workers == 1:
        share(0)
    else:
        threads = [threading.Thread(target=share, args=(i,)) for i in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    out: list[tuple[str, int, bytes | None]] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        out += result
    return out


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
