"""The content-addressed object store: each bundle file kept once, by its SHA-256.

An object becomes visible only by ``rename`` of a complete, fsynced file from
``tmp/`` into ``objects/``, so a reader (or a crash) never meets half an object. The
same bytes added twice are stored once. Objects are never edited in place; ``check``
re-hashes one to detect bit rot.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bundler.atomic import publish
from bundler.format.hashing import CHUNK
from bundler.store.errors import ArchiveError, os_failure

DIGEST_RE = re.compile(r"^[0-9a-f]{64}\Z")
STALE_SECONDS = 24 * 3600  # far longer than any add takes


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

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

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

    def check(self, digest: str) -> str | None:
        """Why the object for ``digest`` is not intact (missing, or bit rot), or None."""
        path = self.path(digest)
        try:
            with path.open("rb") as stream:
                hasher = hashlib.sha256()
                while chunk := stream.read(CHUNK):
                    hasher.update(chunk)
        except FileNotFoundError:
            return f"the stored object {path} is missing"
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
