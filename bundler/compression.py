"""The two compressions a bundle may use, told apart by their magic bytes.

gzip (``.bundle.tar.gz``) is readable everywhere and stays readable forever; zstd
(``.bundle.tar.zst``) is several times faster to write and read. Both are pinned so that
a rebuild gives the same bytes: gzip level 6 with no name and time 0 in its header; zstd
level 3 in libzstd's multi-threaded mode with one worker (``threads=1``: the worker
compresses while the caller reads the next files; this mode writes the same bytes for any
number of workers, but other bytes than single-threaded ``threads=0``), with a content
checksum and no dictionary.

Reading is bounded: each step hands out at most ``CHUNK`` decompressed bytes, the zstd
window is capped, and no byte may follow the compressed stream.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from .hashing import CHUNK

GZIP_LEVEL = 6
ZSTD_LEVEL = 3
ZSTD_THREADS = 1  # pinned: see above
ZSTD_MAX_WINDOW = 1 << 23  # level 3 uses at most 2 MiB; refuse frames that ask for more


@dataclass(frozen=True)
class Codec:
    name: str
    suffix: str
    magic: bytes


GZIP = Codec("gzip", ".bundle.tar.gz", b"\x1f\x8b")
ZSTD = Codec("zstd", ".bundle.tar.zst", b"\x28\xb5\x2f\xfd")
CODECS = {codec.name: codec for codec in (GZIP, ZSTD)}
DEFAULT = ZSTD


class Readable(Protocol):
    """Where compressed bytes come from: a file, a pipe, anything with ``read``."""

    def read(self, size: int = -1, /) -> bytes: ...


class StreamError(Exception):
    """The compressed stream is corrupt, truncated or followed by other bytes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def detect(head: bytes) -> Codec | None:
    return next((c for c in CODECS.values() if head.startswith(c.magic)), None)


def codec_for(path_name: str) -> Codec:
    """The codec a file name asks for (``.tar.zst`` -> zstd, anything else gzip)."""
    return ZSTD if path_name.endswith(".zst") else GZIP


@contextmanager
def compressing(codec: Codec, out: BinaryIO) -> Iterator[BinaryIO]:
    """A writable stream that compresses into ``out`` with the pinned settings."""
    if codec is GZIP:
        with gzip.GzipFile(
            filename="", mode="wb", fileobj=out, compresslevel=GZIP_LEVEL, mtime=0
        ) as gz:
            yield gz  # type: ignore[misc]
        return
    import zstandard

    compressor = zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, threads=ZSTD_THREADS, write_checksum=True
    )
    with compressor.stream_writer(out, closefd=False) as writer:
        yield writer


class Inflater:
    """Decompressed bytes of one stream, a bounded piece at a time."""

    def __init__(self, raw: Readable, archive_limit: int) -> None:
        self._raw = raw
        self._limit = archive_limit
        self.compressed = 0

    def _read_raw(self, size: int) -> bytes:
        chunk = self._raw.read(size)
        self.compressed += len(chunk)
        if self.compressed > self._limit:
            raise StreamError(
                "limit.archive_size",
                f"the file is larger than {self._limit} bytes (raise with --max-archive-bytes)",
            )
        return chunk

    def next(self) -> bytes:
        """Up to CHUNK more decompressed bytes; b"" at the end of the stream."""
        raise NotImplementedError

    def _no_trailing_bytes(self, unused: bytes) -> None:
        if unused or self._raw.read(1):
            raise StreamError(
                "archive.trailing_data",
                "there are bytes after the end of the compressed stream "
                "(a second stream, or another format appended)",
            )


class GzipInflater(Inflater):
    def __init__(self, raw: Readable, archive_limit: int) -> None:
        super().__init__(raw, archive_limit)
        self._z = zlib.decompressobj(wbits=31)

    def next(self) -> bytes:
        while True:
            if self._z.eof:
                return b""
            chunk = self._z.unconsumed_tail or self._read_raw(CHUNK)
            if not chunk:
                raise StreamError(
                    "archive.truncated", "the gzip stream ends early: the file is truncated"
                )
            try:
                out = self._z.decompress(chunk, CHUNK)
            except zlib.error as exc:
                raise StreamError("archive.corrupt", f"the gzip stream is corrupt: {exc}") from None
            if self._z.eof:
                self._no_trailing_bytes(self._z.unused_data)
            if out:
                return out


class ZstdInflater(Inflater):
    """One zstd frame, walked block by block.

    The frame layout (RFC 8878) is read here so that each call decodes whole blocks whose
    output is bounded by their headers (a compressed block gives at most 128 KiB, whatever
    its ratio), a truncated frame or a missing checksum is an error, and bytes after the
    frame are seen. The blocks themselves are decoded, and the checksum checked, by libzstd.
    """

    MAX_BLOCK = 128 << 10
    GATHER = 64 << 10  # one call hands out less than GATHER + MAX_BLOCK bytes

    def __init__(self, raw: Readable, archive_limit: int) -> None:
        super().__init__(raw, archive_limit)
        import zstandard

        self._error = zstandard.ZstdError
        self._z = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).decompressobj()
        self._pending = b""
        self._pos = 0  # bytes of _pending already used
        self._checksum = 0
        self._started = False
        self._done = False

    def _ensure(self, size: int) -> None:
        """At least ``size`` unused compressed bytes in ``_pending``."""
        if len(self._pending) - self._pos < size:
            rest = self._pending[self._pos :]
            chunks = [rest]
            have = len(rest)
            while have < size:
                chunk = self._read_raw(max(CHUNK, size - have))
                if not chunk:
                    raise StreamError(
                        "archive.truncated", "the zstd stream ends early: the file is truncated"
                    )
                chunks.append(chunk)
                have += len(chunk)
            self._pending, self._pos = b"".join(chunks), 0

    def _take(self, size: int) -> memoryview:
        """The next ``size`` compressed bytes (a view, valid until the next call)."""
        self._ensure(size)
        view = memoryview(self._pending)[self._pos : self._pos + size]
        self._pos += size
        return view

    def _feed(self, data: bytes | memoryview) -> bytes:
        try:
            out: bytes = self._z.decompress(data)
        except self._error as exc:
            raise StreamError("archive.corrupt", f"the zstd stream is corrupt: {exc}") from None
        return out

    def _header(self) -> None:
        magic = bytes(self._take(4))
        if magic != ZSTD.magic:
            raise StreamError("archive.corrupt", "not a zstd frame (a skippable or unknown frame)")
        descriptor = self._take(1)[0]
        if descriptor & 0x08:
            raise StreamError("archive.corrupt", "the zstd frame header sets a reserved bit")
        if descriptor & 0x03:
            raise StreamError(
                "archive.corrupt", "the zstd frame needs a dictionary; bundles use none"
            )
        single_segment = bool(descriptor & 0x20)
        self._checksum = 4 if descriptor & 0x04 else 0
        fcs_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        rest = self._take((0 if single_segment else 1) + fcs_size)
        self._feed(magic + bytes([descriptor]) + rest)

    def next(self) -> bytes:
        """Whole blocks, decoded in one call once they may give ``GATHER`` bytes or more:
        a block alone can be a few hundred bytes, and each call costs a round in Python."""
        if not self._started:
            self._header()
            self._started = True
        out = b""
        while not out and not self._done:
            span = bound = last = 0
            while not last and bound < self.GATHER and span < CHUNK:
                self._ensure(span + 3)
                at = self._pos + span
                value = int.from_bytes(self._pending[at : at + 3], "little")
                last, kind, size = value & 1, (value >> 1) & 3, value >> 3
                if kind == 3 or size > self.MAX_BLOCK:
                    raise StreamError(
                        "archive.corrupt", "the zstd stream has an invalid block header"
                    )
                span += 3 + (1 if kind == 1 else size)  # an RLE block stores one byte
                bound += self.MAX_BLOCK if kind == 2 else size  # 2: compressed
            out = self._feed(self._take(span))
            if last:
                out += self._feed(self._take(self._checksum)) if self._checksum else b""
                if not self._z.eof:
                    raise StreamError(
                        "archive.corrupt", "the zstd frame does not end where its blocks do"
                    )
                self._no_trailing_bytes(self._pending[self._pos :])
                self._done = True
        return out


def inflater(codec: Codec, raw: Readable, archive_limit: int) -> Inflater:
    return (GzipInflater if codec is GZIP else ZstdInflater)(raw, archive_limit)
