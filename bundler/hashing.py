"""Streaming SHA-256 with bounded buffers."""

from __future__ import annotations

import hashlib
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


def sha256_file(path: Path) -> tuple[str, int]:
    with path.open("rb", buffering=0) as stream:  # unbuffered: one copy less per read
        return sha256_stream(stream)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
