"""Deterministic tar writing: the same inputs give the same bytes on every run.

Entries are regular files only, in a fixed order, with fixed metadata (mtime from
``SOURCE_DATE_EPOCH``, uid/gid 0, no user names, mode 0644), compressed with the
pinned settings of ``compression``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from bundler.container import compression
from bundler.container.compression import Codec
from bundler.container.tarstream import BLOCK, end_of_archive, file_header
from bundler.errors import SourceError
from bundler.format.hashing import CHUNK
from bundler.format.manifest import MANIFEST_NAME
from bundler.format.withheld import RECORD_NAME, Withheld

if TYPE_CHECKING:
    from bundler.container.extract import Extracted


@dataclass(frozen=True)
class Member:
    """One file to pack: its name inside the archive, and bytes or a file to stream."""

    name: str
    data: bytes | None = None
    source: str | Path | None = None  # a plain string is cheaper by the ten thousand
    size: int = 0


BATCH = 1 << 20  # headers and small files are gathered before each compressor call
_ZEROS = bytes(BLOCK)


def write_tar(
    out: BinaryIO, members: Iterable[Member], mtime: int, codec: Codec = compression.DEFAULT
) -> None:
    """Write members, in the order given, as one compressed POSIX tar. Each file is read
    once, in bounded pieces; one that cannot be read, or is not of the size given, raises
    SourceError."""
    written = 0
    batch = bytearray()
    with compression.compressing(codec, out) as packed:

        def put(data: bytes | memoryview) -> None:
            nonlocal batch
            if len(batch) + len(data) < BATCH:
                batch += data
                return
            if batch:
                packed.write(batch)
                batch = bytearray()
            packed.write(data)

        for member in members:
            data = member.data
            size = len(data) if data is not None else member.size
            header = file_header(member.name, size, mtime)
            padding = -size % BLOCK
            if data is not None and len(batch) + len(header) + size + padding < BATCH:
                batch += header  # (the three puts below, when all go into the batch)
                batch += data
                batch += _ZEROS[:padding]
            else:
                put(header)
                if data is not None:
                    put(data)
                elif member.source is not None:
                    _copy(member.source, size, put)
                else:
                    raise ValueError(f"member {member.name} has no content")
                put(bytes(padding))
            written += len(header) + size + padding
        put(end_of_archive(written))
        packed.write(batch)


def _copy(source: str | Path, size: int, put: Callable[[bytes | memoryview], None]) -> None:
    """Put the ``size`` bytes of ``source``; SourceError if it cannot be read or is not of
    that size now. A small file is read whole, asking for ``size + 1`` bytes (a file that
    grew gives more), on a bare descriptor: no file object for each of 20,000 tiny files."""
    try:
        fd = os.open(source, os.O_RDONLY)
        try:
            if size < CHUNK:
                data = os.read(fd, size + 1)
                while 0 < len(data) <= size and (more := os.read(fd, size + 1 - len(data))):
                    data += more  # a short read: not yet the end of the file
                changed = len(data) != size
                if not changed:
                    put(data)
            else:
                changed = _copy_large(fd, size, put)
        finally:
            os.close(fd)
    except OSError as exc:
        raise SourceError(f"cannot read {source}: {exc.strerror}") from None
    if changed:
        raise SourceError(f"{source} changed size while the bundle was being built")


def _copy_large(fd: int, size: int, put: Callable[[bytes | memoryview], None]) -> bool:
    """Put ``size`` bytes read from ``fd`` in pieces; whether the file's size changed."""
    left = size
    while left > 0:
        chunk = os.read(fd, min(CHUNK, left))
        if not chunk:
            return True
        put(chunk)
        left -= len(chunk)
    return bool(os.read(fd, 1))


def bundle_members(
    extracted: Extracted, signatures: dict[str, bytes], withheld: Withheld | None
) -> list[Member]:
    """The members of a bundle rewritten from ``extracted`` with these signatures and
    this withheld record, in the format's order: the manifest, the signatures, the record,
    then every listed file that is not withheld, read from the work folder."""
    top = extracted.manifest.top
    members = [Member(f"{top}/{MANIFEST_NAME}", data=extracted.manifest_bytes)]
    members += [Member(f"{top}/{n}", data=signatures[n]) for n in sorted(signatures)]
    gone = withheld.paths if withheld is not None else frozenset()
    if withheld is not None:
        members.append(Member(f"{top}/{RECORD_NAME}", data=withheld.to_bytes()))
    members += [
        Member(f"{top}/{f.path}", source=extracted.root / f.path, size=f.size)
        for f in extracted.manifest.files
        if f.path not in gone
    ]
    return members
