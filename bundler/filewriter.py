"""Create, write and hash files on a second process, fed through a pipe: both ends;
and remove many files on two processes.

Verifying a bundle of many small files is bound by Python's per-file cost on one core;
a separate process (not a thread: the GIL would serialise the two) takes the file system
and SHA-256 work off the reading process. It is spawned with ``-I -S`` and runs this
file as a script, so it imports the standard library only.

It never resolves a path the reader did not send, never follows a link (every folder
component and the file itself are opened with ``O_NOFOLLOW``, files with ``O_EXCL``),
and writes only under the folder descriptor it inherits. ``writer`` creates the files it
keeps for itself with the same ``Folders``, ``create`` and ``write_all``.

The protocol, reader to writer: per file a header ``>HHQ`` (folder length, name length,
size), the folder and name (file-system bytes), then ``size`` bytes of data; a header
of zero lengths ends the stream. Writer to reader: ``D`` and a 32-byte SHA-256 per file
in order, or ``E``, a ``>I`` errno and an error message when a write failed.

Removing is kernel work that scales with processes (two ``rm`` halve the time on tmpfs;
two threads in one process did not): ``remove_files`` hands half the names to a second
process started with ``--remove``, which reads them NUL-separated from its input.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import Protocol

HEADER = struct.Struct(">HHQ")
PIECE = 1 << 20
DIGEST_SIZE = 32


class Source(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...


class Sink(Protocol):
    def write(self, data: bytes, /) -> int | None: ...


class Folders:
    """Folder descriptors below one root, each component opened without following a link
    (``O_DIRECTORY``: a file or a link where a folder should be fails as an OSError);
    with ``create``, a missing folder is made first."""

    def __init__(self, root_fd: int, create: bool = False) -> None:
        self._fds: dict[str, int] = {"": root_fd}
        self._create = create

    def get(self, rel: str) -> int:
        if rel in self._fds:
            return self._fds[rel]
        parent, _, name = rel.rpartition("/")
        parent_fd = self.get(parent)
        if self._create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=parent_fd)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        self._fds[rel] = fd
        return fd

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def create(name: str | bytes, folder_fd: int) -> int:
    """A new file, never an existing one and never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    return os.open(name, flags, 0o644, dir_fd=folder_fd)


def write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data) :]


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
    folders = Folders(root_fd)
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
            fd = create(name, folders.get(os.fsdecode(folder)))
            digest = hashlib.sha256()
            try:
                while size:
                    piece = buffer[: min(size, PIECE)]
                    size -= len(piece)
                    _read_exactly(source, piece)
                    digest.update(piece)
                    write_all(fd, piece)
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


class Digest:
    """The SHA-256 of a file written by the second process, known once it answered."""

    def __init__(self) -> None:
        self.value = b""

    def hexdigest(self) -> str:
        return self.value.hex()


class FileProcess:
    """The reader's end: files handed to this module on a second process, in order,
    through a pipe; their digests come back at ``finish``."""

    BATCH_BYTES = 1 << 20
    BATCH_PIECES = 512  # os.writev takes at most IOV_MAX (1024 on Linux) buffers

    def __init__(self, root_fd: int) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, str(root_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=(root_fd,),
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._pipe = self._process.stdin.fileno()
        with contextlib.suppress(AttributeError, OSError):  # fewer rounds: Linux only
            fcntl.fcntl(self._pipe, fcntl.F_SETPIPE_SZ, self.BATCH_BYTES)
        self._pending: list[bytes | memoryview] = []
        self._bytes = 0
        self._digests: list[Digest] = []

    def write(self, folder: str, name: str, size: int, chunks: Iterable[memoryview]) -> Digest:
        rel, base = os.fsencode(folder), os.fsencode(name)
        self._pending.append(HEADER.pack(len(rel), len(base), size) + rel + base)
        for chunk in chunks:
            self._pending.append(chunk)
            self._bytes += len(chunk)
            if self._bytes >= self.BATCH_BYTES or len(self._pending) >= self.BATCH_PIECES:
                self._send()
        digest = Digest()
        self._digests.append(digest)
        return digest

    def _send(self) -> None:
        pending, self._pending, self._bytes = self._pending, [], 0
        done = 0
        try:
            while done < len(pending):
                written = os.writev(self._pipe, pending[done : done + self.BATCH_PIECES])
                while done < len(pending) and written >= len(pending[done]):
                    written -= len(pending[done])
                    done += 1
                if written:
                    pending[done] = memoryview(pending[done])[written:]
        except BrokenPipeError:
            self._answer()  # the writer stopped: raise what it reported

    def finish(self) -> None:
        """Wait for every file; raises ``OSError`` with the writer's own error."""
        self._pending.append(HEADER.pack(0, 0, 0))
        self._send()
        self._answer()

    def _answer(self) -> None:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        answer = process.stdout.read()
        process.stdout.close()
        status = process.wait()
        if answer[:1] == b"D" and len(answer) == 1 + DIGEST_SIZE * len(self._digests):
            for i, digest in enumerate(self._digests):
                digest.value = answer[1 + DIGEST_SIZE * i : 1 + DIGEST_SIZE * (i + 1)]
            return
        if answer[:1] == b"E" and len(answer) >= 5:
            errno = int.from_bytes(answer[1:5], "big")
            raise OSError(errno, answer[5:].decode("utf-8", "replace"))
        raise OSError(0, f"the file-writing process ended unexpectedly (exit status {status})")

    def close(self) -> None:
        """Stop the writer if it is still running (the bundle was rejected midway)."""
        process = self._process
        if process.returncode is None:
            assert process.stdin is not None and process.stdout is not None
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()


REMOVE_SPLIT = 2000  # fewer files go faster on one process than by starting a second


def unlink_all(root_fd: int, rels: Iterable[str | bytes]) -> None:
    """Unlink each file ``rels`` names below ``root_fd`` (folders opened without following
    a link), then close ``root_fd``; a file that is gone or unreachable is left for a
    later ``rmtree``."""
    folders = Folders(root_fd)
    try:
        for rel in rels:
            folder, _, name = os.fsdecode(rel).rpartition("/")
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folders.get(folder))
    finally:
        folders.close()


def remove_files(root: str, rels: Sequence[str]) -> None:
    """Unlink the files ``rels`` (relative to ``root``), nearly half of them on a second
    process when there are many. Best effort: the caller removes whatever is left."""
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    # the second process starts some 20 ms later, so it takes a little less than half
    mine = len(rels) * 11 // 20 if len(rels) >= REMOVE_SPLIT else len(rels)
    helper = None
    if mine < len(rels):
        with contextlib.suppress(OSError):
            helper = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, "--remove", str(root_fd)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(root_fd,),
            )
    if helper is None:
        unlink_all(root_fd, rels)
        return
    names = b"\0".join(os.fsencode(rel) for rel in rels[mine:])
    feed = threading.Thread(target=helper.communicate, args=(names,), daemon=True)
    feed.start()
    unlink_all(root_fd, rels[:mine])
    feed.join()


if __name__ == "__main__":
    if sys.argv[1] == "--remove":
        unlink_all(int(sys.argv[2]), sys.stdin.buffer.read().split(b"\0"))
        sys.exit(0)
    source = io.BufferedReader(io.FileIO(sys.stdin.fileno(), "rb", closefd=False), PIECE)
    reply = io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False))
    status = serve(source, reply, int(sys.argv[1]))
    reply.flush()  # every byte of the answer, however many writes the pipe takes
    sys.exit(status)
