"""Deterministic tar writing: the same inputs give the same bytes on every run.

Entries are regular files only, in a fixed order, with fixed metadata (mtime from
``SOURCE_DATE_EPOCH``, uid/gid 0, no user names, mode 0644), compressed with the
pinned settings of ``compression``.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from . import compression
from .compression import Codec


@dataclass(frozen=True)
class Member:
    """One file to pack: its name inside the archive, and bytes or a file to stream."""

    name: str
    data: bytes | None = None
    source: Path | None = None
    size: int = 0


def _info(name: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = mtime
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def write_tar(
    out: BinaryIO, members: Iterable[Member], mtime: int, codec: Codec = compression.DEFAULT
) -> None:
    """Write members, in the order given, as one compressed POSIX tar."""
    with (
        compression.compressing(codec, out) as packed,
        tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        for member in members:
            if member.data is not None:
                tar.addfile(_info(member.name, len(member.data), mtime), io.BytesIO(member.data))
            elif member.source is not None:
                with member.source.open("rb") as stream:
                    tar.addfile(_info(member.name, member.size, mtime), stream)
            else:
                raise ValueError(f"member {member.name} has no content")
