"""The two compressions a bundle may use, told apart by their magic bytes.

gzip (``.bundle.tar.gz``) is readable everywhere and stays readable forever; zstd
(``.bundle.tar.zst``) is several times faster to write and read. Both are pinned so that
a rebuild gives the same bytes: gzip level 6 with no name and time 0 in its header; zstd
level 3 in libzstd's multi-threaded mode with one worker (``threads=1``: the worker
compresses while the caller reads the next files; this mode writes the same bytes for any
number of workers, but other bytes than single-threaded ``threads=0``), with a content
checksum and no dictionary.

Reading is bounded: each step hands out at most ``CHUNK`` decompressed bytes, the zstd
window is capped, and no byte may follow the compressed stream. zstd is written with
python-zstandard (pinned above) and read with the standard library's bounded
decompressor (``compression.zstd``, or the ``backports.zstd`` package before Python
3.14): python-zstandard's streaming decompressor cannot bound its output per call.
"""

from __future__ import annotations

import queue
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, NamedTuple, Protocol

from bundler.format.hashing import CHUNK

GZIP_LEVEL = 6
ZSTD_LEVEL = 3
ZSTD_THREADS = 1  # pinned: see above
ZSTD_MAX_WINDOW = 1 << 23  # level 3 uses at most 2 MiB; refuse frames that ask for more


class Codec(NamedTuple):
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


@contextmanager
def compressing(codec: Codec, out: BinaryIO) -> Iterator[BinaryIO]:
    """A writable stream that compresses into ``out`` with the pinned settings."""
    if codec is GZIP:
        import gzip  # only writing: reading inflates with zlib

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
    """One zstd frame, decoded by libzstd through the standard library's bounded
    decompressor (``compression.zstd``; its backport before Python 3.14): each call hands
    out at most CHUNK bytes, whatever the ratio. The frame header is checked here first
    (no dictionary, no reserved bit); libzstd refuses a window above
    ZSTD_MAX_WINDOW, a corrupt block and a wrong checksum, and a frame that stops early
    (its checksum, when it declares one, included) never reaches its end."""

    def __init__(self, raw: Readable, archive_limit: int) -> None:
        super().__init__(raw, archive_limit)
        zstd = _zstd()
        self._error = zstd.ZstdError
        window_log = ZSTD_MAX_WINDOW.bit_length() - 1
        self._z = zstd.ZstdDecompressor(
            options={zstd.DecompressionParameter.window_log_max: window_log}
        )
        self._started = False

    def _header(self) -> bytes:
        head = b""
        while len(head) < 5 and (chunk := self._read_raw(CHUNK)):
            head += chunk
        if len(head) < 5:
            raise StreamError(
                "archive.truncated", "the zstd stream ends early: the file is truncated"
            )
        if head[:4] != ZSTD.magic:
            raise StreamError("archive.corrupt", "not a zstd frame (a skippable or unknown frame)")
        descriptor = head[4]
        if descriptor & 0x08:
            raise StreamError("archive.corrupt", "the zstd frame header sets a reserved bit")
        if descriptor & 0x03:
            raise StreamError(
                "archive.corrupt", "the zstd frame needs a dictionary; bundles use none"
            )
        return head

    def next(self) -> bytes:
        data = b""
        if not self._started:
            data, self._started = self._header(), True
        z = self._z
        while not z.eof:
            if z.needs_input and not data:
                data = self._read_raw(CHUNK)
                if not data:
                    raise StreamError(
                        "archive.truncated", "the zstd stream ends early: the file is truncated"
                    )
            try:
                out: bytes = z.decompress(data, CHUNK)
            except self._error as exc:
                raise StreamError("archive.corrupt", f"the zstd stream is corrupt: {exc}") from None
            data = b""
            if z.eof:
                self._no_trailing_bytes(z.unused_data)
            if out:
                return out
        return b""


def _zstd() -> Any:
    """The standard library's zstd module, or its backport on Pythons before 3.14."""
    import importlib

    try:
        return importlib.import_module("compression.zstd")
    except ImportError:
        return importlib.import_module("backports.zstd")


def inflater(codec: Codec, raw: Readable, archive_limit: int) -> Inflater:
    return (GzipInflater if codec is GZIP else ZstdInflater)(raw, archive_limit)


class ReadAhead:
    """An inflater's pieces, decompressed on a second thread at most ``depth`` pieces
    ahead of the reader: libzstd and zlib release the GIL, so decompressing overlaps with
    hashing (which does too) and the reader's checks. The reader sees exactly what the
    inflater gives, each piece with the compressed count it had then (``compressed``),
    and any exception the inflater raises, in order. ``close`` stops the thread."""

    def __init__(self, inflater: Inflater, depth: int = 2) -> None:
        self._inflater = inflater
        self._queue: queue.Queue[tuple[bytes, int] | BaseException] = queue.Queue(depth)
        self._stop = threading.Event()
        self._over = False
        self.compressed = 0
        self._thread = threading.Thread(target=self._run, name="reprobundle-inflate", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                chunk = self._inflater.next()
                item: tuple[bytes, int] | BaseException = (chunk, self._inflater.compressed)
            except BaseException as exc:  # handed to the reader, raised there
                item, chunk = exc, b""
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if not chunk or self._stop.is_set():
                return

    def next(self) -> bytes:
        if self._over:
            return b""
        item = self._queue.get()
        if isinstance(item, BaseException):
            self._over = True
            raise item
        chunk, self.compressed = item
        self._over = not chunk
        return chunk

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
