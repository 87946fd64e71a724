"""The content-addressed object store: each bundle file kept once, by its SHA-256.

An object becomes visible only by ``rename`` of a complete, fsynced file from
``tmp/`` into ``objects/``, so a reader (or a crash) never meets half an object. The
same bytes added twice are stored once. Objects are never edited in place; ``check``
re-hashes one to detect bit rot.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from bundler.atomic import publish
from bundler.format.hashing import CHUNK
from bundler.store.errors import ArchiveError, os_failure

DIGEST_RE = re.compile(r"^[0-9a-f]{64}\Z")
STALE_SECONDS = 24 * 3600  # far longer than any add takes


# an object is opened as nothing but a regular file: a link is not followed (a link to
# /dev/zero), and a FIFO cannot hang the open (it is refused once open)
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Unreadable(Exception):
    """A stored object that is missing, not a regular file, or not of its recorded size."""

    def __init__(self, why: str, missing: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.missing = missing


class _Upto(io.RawIOBase):
    """A file read no further than ``left`` bytes."""

    def __init__(self, fd: int, left: int) -> None:
        self._fd, self._left = fd, left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: min(len(buffer), self._left)]
        count = os.readv(self._fd, [view])
        self._left -= count
        return count

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def read_regular(path: Path, max_bytes: int) -> bytes:
    """A small file of the archive folder (a checkpoint, a key): opened only as a regular
    file (a link is followed, but a FIFO or a device is refused without hanging) and
    read no further than ``max_bytes``. Raises ``Unreadable`` (``missing`` when it is not
    there), never a bare OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Unreadable(f"{path} is missing", missing=True) from None
    except OSError as exc:
        raise Unreadable(f"{path} cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{path} is not a regular file (a FIFO, device or folder)")
        if info.st_size > max_bytes:
            raise Unreadable(f"{path} is {info.st_size} bytes, more than {max_bytes}")
        os.set_blocking(fd, True)
        data = os.read(fd, max_bytes + 1)
    except OSError as exc:
        raise Unreadable(f"{path} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise Unreadable(f"{path} is more than {max_bytes} bytes")
    return data


@contextlib.contextmanager
def open_object(path: Path, size: int | None = None) -> Iterator[BinaryIO]:
    """A stored object, opened only if it is a regular file (``_OPEN_FLAGS``) of ``size``
    bytes (its recorded size, when given), and read no further than that. Raises
    ``Unreadable`` saying why not."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise Unreadable(f"the stored object {path} is missing", missing=True) from None
    except OSError as exc:
        raise Unreadable(f"the stored object {path} cannot be read ({exc.strerror})") from None
    info = os.fstat(fd)
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = f"the stored object {path} is not a regular file (a link, FIFO or device)"
    elif size is not None and info.st_size != size:
        why = f"the stored object {path} is {info.st_size} bytes, the archive recorded {size}"
    if why is not None:
        os.close(fd)
        raise Unreadable(why)
    os.set_blocking(fd, True)
    with io.BufferedReader(_Upto(fd, info.st_size if size is None else size), CHUNK) as f:
        yield f


@dataclass(frozen=True)
class Staged:
    """A complete copy under ``tmp/``, hashed while it was written, not yet visible."""

    path: Path
    digest: str
    size: int


class Store:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.objects = root / "objects" / "sha256"
        self.tmp = root / "tmp"

    def create(self) -> None:
        for folder in (self.objects, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)

    def path(self, digest: str) -> Path:
        if not DIGEST_RE.match(digest):
            raise ArchiveError(f"{digest!r} is not a SHA-256 digest (64 lower-case hex digits)")
        return self.objects / digest[:2] / digest

    def reading(
        self, digest: str, size: int | None = None
    ) -> contextlib.AbstractContextManager[BinaryIO]:
        """The stored object (``open_object``)."""
        return open_object(self.path(digest), size)

    def stage(self, source: Path, max_bytes: int) -> Staged:
        """Copy ``source`` into ``tmp/`` while hashing it, fsynced. Refuses past ``max_bytes``."""
        try:
            fd, name = tempfile.mkstemp(prefix="add-", suffix=".partial", dir=self.tmp)
        except OSError as exc:
            raise os_failure(exc, "write into the archive", self.tmp) from None
        staged = Path(name)
        digest = hashlib.sha256()
        size = 0
        try:
            with os.fdopen(fd, "wb") as out, source.open("rb") as stream:
                while chunk := stream.read(CHUNK):
                    size += len(chunk)
                    if size > max_bytes:
                        raise ArchiveError(
                            f"{source} is larger than {max_bytes} bytes (--max-archive-bytes)"
                        )
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            staged.unlink(missing_ok=True)
            if not source.is_file():
                raise ArchiveError(f"{source} is not a readable file ({exc.strerror})") from None
            raise os_failure(exc, "copy the bundle into the archive", self.tmp) from None
        except BaseException:
            staged.unlink(missing_ok=True)
            raise
        return Staged(staged, digest.hexdigest(), size)

    def commit(self, staged: Staged) -> Path:
        """Make a staged copy visible under its digest (atomic rename, then fsync the folder)."""
        target = self.path(staged.digest)
        try:
            target.parent.mkdir(exist_ok=True)
            publish(staged.path, target, mode=0o444)
        except OSError as exc:
            staged.path.unlink(missing_ok=True)
            raise os_failure(exc, "store the bundle in the archive", target) from None
        return target

    def discard(self, staged: Staged) -> None:
        with contextlib.suppress(OSError):
            staged.path.unlink(missing_ok=True)

    def sweep(self, older_than: float = STALE_SECONDS) -> int:
        """Remove staged copies left by adds that were killed, once they are old enough
        that no running add can still own them. Returns how many were removed."""
        removed = 0
        cutoff = time.time() - older_than
        with contextlib.suppress(OSError):
            for leftover in self.tmp.glob("add-*.partial"):
                with contextlib.suppress(OSError):
                    if leftover.stat().st_mtime < cutoff:
                        leftover.unlink()
                        removed += 1
        return removed

    def check(self, digest: str, size: int | None = None) -> str | None:
        """Why the object for ``digest`` is not intact (missing, not a regular file of
        its recorded ``size``, or bit rot), or None."""
        path = self.path(digest)
        try:
            with self.reading(digest, size) as stream:
                hasher = hashlib.sha256()
                while chunk := stream.read(CHUNK):
                    hasher.update(chunk)
        except Unreadable as exc:
            return exc.why
        except OSError as exc:
            return f"the stored object {path} cannot be read ({exc.strerror})"
        observed = hasher.hexdigest()
        if observed != digest:
            return f"bit rot: the stored bytes hash to {observed}, expected {digest}"
        return None

    def digests(self) -> Iterator[str]:
        """Every visible object's name (for consistency checks)."""
        if not self.objects.is_dir():
            return
        for shard in sorted(self.objects.iterdir()):
            if shard.is_dir():
                for item in sorted(shard.iterdir()):
                    yield item.name
