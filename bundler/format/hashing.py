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


# hashlib releases the GIL only while it hashes more than 2 KiB: files smaller than that
# on average are hashed on the calling thread (the GIL changing hands at every read of a
# tiny file costs more than a second core gains: 20,000 files of 64-1,024 B take 1.5 times
# as long on two threads as on one, and twice the CPU)
THREADS_FROM = 2048
PROBE = 64  # files read first, on the calling thread, to tell which kind they are


def sha256_files(paths: Sequence[str | Path]) -> list[tuple[str, int]]:
    """``sha256_file`` of each path, in order; files of some kilobytes on one thread per
    core (at most 4), each taking a contiguous share, since a hand-over per file costs
    more than it saves (two threads hash 5,000 files of 4-64 KiB 1.5 times faster than
    one). The first error, in path order, is raised."""
    return [(digest, size) for digest, size, _ in read_and_hash_files(paths)]


def read_and_hash_files(
    paths: Sequence[str | Path], keep_below: int = 0, keep_at_most: int = 0
) -> list[tuple[str, int, bytes | None]]:
    """``sha256_files``, with the bytes of each file of fewer than ``keep_below`` bytes
    while they add up to at most ``keep_at_most`` (None for the others): what a build
    packs without reading those files again."""
    budget = [keep_at_most]

    def hash_all(
        share: Sequence[str | Path], budget: list[int]
    ) -> list[tuple[str, int, bytes | None]]:
        out = []
        for path in share:
            hashed = _read_and_hash(path, keep_below if budget[0] > 0 else 0)
            if hashed[2] is not None:
                budget[0] -= hashed[1]
            out.append(hashed)
        return out

    first = hash_all(paths[:PROBE], budget)
    rest = paths[PROBE:]
    small = sum(size for _, size, _ in first) < THREADS_FROM * len(first)
    workers = 1 if small else min(4, os.cpu_count() or 1, len(rest) // 64 or 1)
    if workers == 1:
        return first + hash_all(rest, budget)
    bounds = [len(rest) * i // workers for i in range(workers + 1)]
    results: list[list[tuple[str, int, bytes | None]] | BaseException] = [
        [] for _ in range(workers)
    ]

    def share(i: int) -> None:
        try:
            results[i] = hash_all(rest[bounds[i] : bounds[i + 1]], [budget[0] // workers])
        except BaseException as exc:  # raised again on the calling thread, in order
            results[i] = exc

    threads = [threading.Thread(target=share, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
        first += result
    return first


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
