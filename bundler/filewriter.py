"""Create, write and hash files on a second process, fed through shared memory: both
ends; and remove many files on two processes.

Verifying a bundle of many small files is bound by Python's per-file cost on one core;
a separate process (not a thread: the GIL would serialise the two) takes the file system
and SHA-256 work off the reading process. It is spawned with ``-I -S`` and runs this
file as a script, so it imports the standard library only.

It never resolves a path the reader did not send, never follows a link (every folder
component and the file itself are opened with ``O_NOFOLLOW``, files with ``O_EXCL``),
and writes only under the folder descriptor it inherits. ``writer`` creates the files it
keeps for itself with the same ``Folders``, ``create`` and ``write_all``.

The stream, reader to writer: per file a header ``>HHQ`` (folder length, name length,
size), the folder and name (file-system bytes), then ``size`` bytes of data; a header
of zero lengths ends it. Writer to reader: ``D`` and a 32-byte SHA-256 per file in
order, or ``E``, a ``>I`` errno and an error message when a write failed.

The stream travels through a ring of ``SLOTS`` slots in a shared memory file, not
through a pipe (copying every byte into and out of a pipe cost the reader more than a
third of its time): the reader fills a slot and sends its number and length (``>II``)
on the writer's standard input; the writer hashes and writes straight from the slot and
hands the slot back with one byte on a second pipe. While more than half the ring
waits for the writer, the reader writes the next files itself (``behind``).

Removing is kernel work that scales with processes (two ``rm`` halve the time on tmpfs;
two threads in one process did not): ``remove_files`` hands nearly half the names to a
second process started with ``--remove``, which reads them NUL-separated from its input.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import mmap
import os
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import BinaryIO

HEADER = struct.Struct(">HHQ")
NOTICE = struct.Struct(">II")  # a filled slot: its number and how many bytes it holds
SLOT = 256 << 10
SLOTS = 16
DIGEST_SIZE = 32


class Folders:
    """Folder descriptors below one root, each component opened without following a link
    (``O_DIRECTORY``: a file or a link where a folder should be fails as an OSError);
    with ``create``, a missing folder is made first.

    At most about ``KEEP`` stay open: a bundle may hold thousands of folders, and a process
    may often open only 1,024 files. Past that, all but the root are closed and opened
    again from the root when needed, just as safely."""

    KEEP = 128

    def __init__(self, root_fd: int, create: bool = False) -> None:
        self._fds: dict[str, int] = {"": root_fd}
        self._create = create

    def get(self, rel: str) -> int:
        fd = self._fds.get(rel)
        if fd is None:
            if len(self._fds) > self.KEEP:
                root = self._fds.pop("")
                self.close()
                self._fds[""] = root
            fd = self._open(rel)
        return fd

    def _open(self, rel: str) -> int:
        if rel in self._fds:
            return self._fds[rel]
        parent, _, name = rel.rpartition("/")
        parent_fd = self._open(parent)
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


class Pieces:
    """A byte stream that arrives in pieces, read in place: ``some`` hands out a view of
    the current piece, valid until the next call; ``take`` copies (a header, a name)."""

    def __init__(self, next_piece: Callable[[], memoryview]) -> None:
        self._next = next_piece  # an empty view at the end
        self._piece = memoryview(b"")

    def some(self, most: int) -> memoryview:
        """Between 1 and ``most`` bytes."""
        if not self._piece:
            self._piece = self._next()
            if not self._piece:
                raise EOFError
        out, self._piece = self._piece[:most], self._piece[most:]
        return out

    def take(self, size: int) -> bytes:
        """Exactly ``size`` bytes."""
        out = b""
        while len(out) < size:
            out += self.some(size - len(out))
        return out


def slots(notices: BinaryIO, credits_fd: int, shared: memoryview) -> Callable[[], memoryview]:
    """The writer's side of the ring: each call hands back the slot read last and waits
    for the next filled one; an empty view once the reader closed its end."""
    done: list[int] = []

    def next_slot() -> memoryview:
        if done:
            os.write(credits_fd, bytes([done.pop()]))
        notice = notices.read(NOTICE.size)
        if len(notice) < NOTICE.size:
            return memoryview(b"")
        slot, used = NOTICE.unpack(notice)
        if slot >= SLOTS or used > SLOT:
            raise OSError(0, f"a notice names slot {slot} with {used} bytes")
        done.append(slot)
        return shared[slot * SLOT : slot * SLOT + used]

    return next_slot


def serve(stream: Pieces, reply: BinaryIO, root_fd: int) -> int:
    """Write every file ``stream`` describes; send the digests (or the error) to ``reply``.
    Returns the exit status."""
    folders = Folders(root_fd)
    digests = []
    try:
        while True:
            folder_len, name_len, size = HEADER.unpack(stream.take(HEADER.size))
            if not name_len:
                break
            folder = os.fsdecode(stream.take(folder_len))
            fd = create(stream.take(name_len), folders.get(folder))
            digest = hashlib.sha256()
            try:
                while size:
                    piece = stream.some(size)
                    size -= len(piece)
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


def _shared_file(size: int) -> int:
    """A file of ``size`` bytes that lives in memory and has no name."""
    try:
        fd = os.memfd_create("reprobundle-files", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux: an unlinked temporary file
        with tempfile.TemporaryFile() as scratch:
            fd = os.dup(scratch.fileno())
    os.ftruncate(fd, size)
    return fd


class FileProcess:
    """The reader's end: files handed to this module on a second process, in order,
    through the ring; their digests come back at ``finish``."""

    def __init__(self, root_fd: int) -> None:
        shared_fd = _shared_file(SLOT * SLOTS)
        credits, credits_w = os.pipe()
        try:
            self._map = mmap.mmap(shared_fd, SLOT * SLOTS)
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, *map(str, (root_fd, shared_fd, credits_w))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=(root_fd, shared_fd, credits_w),
            )
        except OSError:
            os.close(credits)
            raise
        finally:
            os.close(shared_fd)
            os.close(credits_w)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._notices = self._process.stdin.fileno()
        self._credits = credits
        os.set_blocking(credits, False)
        self._free = list(range(SLOTS))
        self._slot = -1  # the slot being filled
        self._used = 0
        self._digests: list[Digest] = []

    def write(self, folder: str, name: str, size: int, chunks: Iterable[memoryview]) -> Digest:
        rel, base = os.fsencode(folder), os.fsencode(name)
        self._put(memoryview(HEADER.pack(len(rel), len(base), size) + rel + base))
        for chunk in chunks:
            self._put(chunk)
        digest = Digest()
        self._digests.append(digest)
        return digest

    def _put(self, data: memoryview) -> None:
        while data:
            if self._slot < 0:
                self._slot, self._used = self._free_slot(), 0
            n = min(len(data), SLOT - self._used)
            at = self._slot * SLOT + self._used
            self._map[at : at + n] = data[:n]
            self._used += n
            data = data[n:]
            if self._used == SLOT:
                self._post()

    def behind(self) -> bool:
        """Whether more than half the ring still waits for the writer (the reader then
        writes the next file itself: neither process idles while the other has work)."""
        if len(self._free) < SLOTS // 2:
            with contextlib.suppress(BlockingIOError):
                self._free.extend(os.read(self._credits, SLOTS))
        return len(self._free) < SLOTS // 2

    def _free_slot(self) -> int:
        if not self._free:
            os.set_blocking(self._credits, True)  # wait for the writer to hand one back
            try:
                freed = os.read(self._credits, SLOTS)
            finally:
                os.set_blocking(self._credits, False)
            if not freed:  # the writer stopped: raise what it reported
                self._answer()
                raise OSError(0, "the file-writing process stopped early")
            self._free.extend(freed)
        return self._free.pop()

    def _post(self) -> None:
        try:
            os.write(self._notices, NOTICE.pack(self._slot, self._used))
        except BrokenPipeError:
            self._answer()
            raise
        self._slot = -1

    def finish(self) -> None:
        """Wait for every file; raises ``OSError`` with the writer's own error."""
        self._put(memoryview(HEADER.pack(0, 0, 0)))
        if self._slot >= 0:  # (a full slot was posted as it filled)
            self._post()
        self._answer()

    def _answer(self) -> None:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        answer = process.stdout.read()
        process.stdout.close()
        status = process.wait()
        self._release()
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
        self._release()

    def _release(self) -> None:
        if not self._map.closed:
            self._map.close()
            os.close(self._credits)


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
    root_fd, shared_fd, credits_fd = (int(arg) for arg in sys.argv[1:4])
    shared = memoryview(mmap.mmap(shared_fd, SLOT * SLOTS))
    reply = io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False))
    status = serve(Pieces(slots(sys.stdin.buffer, credits_fd, shared)), reply, root_fd)
    reply.flush()  # every byte of the answer, however many writes the pipe takes
    sys.exit(status)
