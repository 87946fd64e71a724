"""Create, write and hash files on a second process, fed through a pipe.

Verifying a bundle of many small files is bound by Python's per-file cost on one core;
a separate process (not a thread: the GIL would serialise the two) takes the file system
and SHA-256 work off the reading process. It is spawned with ``-I -S`` and runs this
file as a script, so it imports the standard library only.

It never resolves a path the reader did not send, never follows a link (every folder
component and the file itself are opened with ``O_NOFOLLOW``, files with ``O_EXCL``),
and writes only under the folder descriptor it inherits.

The protocol, reader to writer: per file a header ``>HHQ`` (folder length, name length,
size), the folder and name (file-system bytes), then ``size`` bytes of data; a header
of zero lengths ends the stream. Writer to reader: ``D`` and a 32-byte SHA-256 per file
in order, or ``E``, a ``>I`` errno and an error message when a write failed.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import sys
from typing import Protocol

HEADER = struct.Struct(">HHQ")
PIECE = 1 << 20
DIGEST_SIZE = 32


class Source(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...


class Sink(Protocol):
    def write(self, data: bytes, /) -> int | None: ...


class _Folders:
    """Folder descriptors below one root, each component opened without following links."""

    def __init__(self, root_fd: int) -> None:
        self._fds: dict[bytes, int] = {b"": root_fd}

    def get(self, rel: bytes) -> int:
        if rel in self._fds:
            return self._fds[rel]
        parent, _, name = rel.rpartition(b"/")
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=self.get(parent))
        if not stat.S_ISDIR(os.fstat(fd).st_mode):  # pragma: no cover (O_DIRECTORY refuses)
            os.close(fd)
            raise NotADirectoryError(20, "not a folder")
        self._fds[rel] = fd
        return fd


def _read_exactly(source: Source, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = source.readinto(view[got:])
        if not n:
            raise EOFError
        got += n


def serve(source: Source, reply: Sink, root_fd: int) -> int:
    """Write every file ``source`` describes; send the digests (or the error) to ``reply``.
    Returns the exit status."""
    folders = _Folders(root_fd)
    digests = []
    header = memoryview(bytearray(HEADER.size))
    buffer = memoryview(bytearray(PIECE))
    try:
        while True:
            _read_exactly(source, header)
            folder_len, name_len, size = HEADER.unpack(header)
            if not name_len:
                break
            names = memoryview(bytearray(folder_len + name_len))
            _read_exactly(source, names)
            folder, name = bytes(names[:folder_len]), bytes(names[folder_len:])
            fd = os.open(
                name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                0o644,
                dir_fd=folders.get(folder),
            )
            digest = hashlib.sha256()
            try:
                while size:
                    piece = buffer[: min(size, PIECE)]
                    size -= len(piece)
                    _read_exactly(source, piece)
                    digest.update(piece)
                    while piece:
                        piece = piece[os.write(fd, piece) :]
            finally:
                os.close(fd)
            digests.append(digest.digest())
    except EOFError:
        return 0  # the reader stopped early (it rejected the bundle): nothing to answer
    except OSError as exc:
        message = (exc.strerror or str(exc)).encode("utf-8", "replace")
        reply.write(b"E" + struct.pack(">I", exc.errno or 0) + message)
        return 1
    reply.write(b"D" + b"".join(digests))
    return 0


if __name__ == "__main__":
    source = io.BufferedReader(io.FileIO(sys.stdin.fileno(), "rb", closefd=False), PIECE)
    reply = io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False))
    status = serve(source, reply, int(sys.argv[1]))
    reply.flush()  # every byte of the answer, however many writes the pipe takes
    sys.exit(status)
