"""Strict reading of an untrusted bundle into a new, empty work directory.

Nothing here trusts the archive: member names, types and sizes are checked before a
byte is written; files are created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` relative to
directory descriptors this module created itself, so no name or link can lead a write
outside the work directory; limits are enforced on the bytes actually decompressed,
not on what headers say. Every file is hashed while it is written, and every problem is
collected before the bundle is rejected. ``tarfile`` is used only to parse headers; its
extraction (and its filters) are never used.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import compression
from .errors import BundleRejected, Problem
from .hashing import CHUNK
from .manifest import MANIFEST_NAME, SIGNATURES_DIR, Manifest, identity, parse
from .paths import fold, path_problem

MAX_LISTED_PROBLEMS = 200
# pax keywords this reader understands; any other (GNU sparse maps, charsets, ...) rejects
PAX_KEYS = frozenset({"path", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"})
WINDOW = 4 << 20  # recent decompressed bytes kept to check tar padding is zero
MAX_HEADER_DATA = 1 << 20  # pax and GNU long-name headers are read into memory whole

# Called once the manifest and the signatures are read, before any payload byte is
# written: (manifest bytes, identity, signature files by name). Raises to reject.
BeforePayload = Callable[[bytes, str, dict[str, bytes]], None]


@dataclass(frozen=True)
class Limits:
    """What a verifier accepts before it refuses to read further. Raise them by flag."""

    archive_bytes: int = 16 << 30
    members: int = 200_000
    file_bytes: int = 8 << 30
    total_bytes: int = 32 << 30
    manifest_bytes: int = 16 << 20
    ratio: int = 200  # decompressed / compressed, checked once past ``ratio_floor``
    ratio_floor: int = 64 << 20


@dataclass
class Extracted:
    """A bundle whose every byte matched its manifest, unpacked under ``root``."""

    root: Path
    manifest: Manifest
    manifest_bytes: bytes
    identity: str
    total_bytes: int
    signatures: dict[str, bytes] = field(default_factory=dict)
    codec: compression.Codec = compression.GZIP


class _Reject(Exception):
    """Stop reading at once (a limit, a corrupt stream)."""

    def __init__(self, code: str, where: str, message: str) -> None:
        super().__init__(message)
        self.problem = Problem(where, code, message)


class _Stream(io.RawIOBase):
    """The decompressed tar stream: bounded pieces from an inflater, counted against the
    limits, with a window of recent bytes kept to check padding."""

    def __init__(self, inflater: compression.Inflater, limits: Limits) -> None:
        self._inflater = inflater
        self._limits = limits
        self._buffer = memoryview(b"")  # a view, so handing out a slice copies nothing
        self.decompressed = 0
        self.given = 0  # bytes handed to the tar reader
        self._window = bytearray()
        self._window_start = 0

    @property
    def compressed(self) -> int:
        return self._inflater.compressed

    def readable(self) -> bool:
        return True

    def readinto(self, target: memoryview) -> int:  # type: ignore[override]
        if not self._buffer:
            try:
                self._buffer = memoryview(self._inflater.next())
            except compression.StreamError as exc:
                raise _Reject(exc.code, "(archive)", exc.message) from None
            self.decompressed += len(self._buffer)
            self._check_ratio()
            if not self._buffer:
                return 0
        n = min(len(target), len(self._buffer))
        target[:n] = self._buffer[:n]
        self._window += self._buffer[:n]
        self.given += n
        self._buffer = self._buffer[n:]
        if len(self._window) > 2 * WINDOW:
            cut = len(self._window) - WINDOW
            del self._window[:cut]
            self._window_start += cut
        return n

    def all_zero(self, start: int, end: int) -> bool:
        """Whether the bytes at stream offsets [start, end) already handed out are all zero.

        ``tarfile`` skips the padding after each member and reads ahead, so whatever an
        archive hides there is checked here, on the bytes actually decompressed.
        """
        end = min(end, self.given)
        if start >= end:
            return True
        if start < self._window_start:
            raise _Reject("archive.corrupt", "(archive)", "the tar stream jumps backwards")
        chunk = self._window[start - self._window_start : end - self._window_start]
        return not chunk.strip(b"\0")

    def _check_ratio(self) -> None:
        limits = self._limits
        if self.decompressed > limits.total_bytes + (1 << 20):
            raise _Reject(
                "limit.total_size",
                "(archive)",
                f"decompresses to more than {limits.total_bytes} bytes "
                "(raise with --max-total-bytes)",
            )
        if self.decompressed > limits.ratio_floor and self.decompressed > limits.ratio * max(
            self.compressed, 1
        ):
            raise _Reject(
                "limit.ratio",
                "(archive)",
                f"decompresses more than {limits.ratio}:1 (a compression bomb?); "
                "raise with --max-ratio",
            )

    def drain(self) -> bytes:
        """Whatever follows the tar end-of-archive marker (must be zero padding)."""
        rest = bytearray()
        while chunk := self.read(CHUNK):
            rest += chunk
            if len(rest) > 1 << 20:
                break
        return bytes(rest)


class _StrictTarInfo(tarfile.TarInfo):
    """Refuses, before tarfile reads them into memory, extended headers that are too large
    and GNU sparse headers."""

    def _too_large(self) -> None:
        if self.size > MAX_HEADER_DATA:
            raise _Reject(
                "limit.header_size",
                "(archive)",
                f"an extended tar header of {self.size} bytes (at most {MAX_HEADER_DATA})",
            )

    def _proc_pax(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        self._too_large()
        return super()._proc_pax(archive)  # type: ignore[misc, no-any-return]

    def _proc_gnulong(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        self._too_large()
        return super()._proc_gnulong(archive)  # type: ignore[misc, no-any-return]

    def _proc_sparse(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        # GNU sparse headers may chain any number of extension blocks: refuse at once
        raise _Reject("member.type", self.name, "is a sparse file")


def _member_problem(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return f"is a symbolic link (to {member.linkname!r}); bundles hold regular files only"
    if member.islnk():
        return f"is a hard link (to {member.linkname!r}); bundles hold regular files only"
    if member.ischr() or member.isblk():
        return "is a device file"
    if member.isfifo():
        return "is a FIFO"
    if member.issparse():
        return "is a sparse file"
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
        return f"has an unsupported member type {member.type!r}"
    unknown = sorted(set(member.pax_headers) - PAX_KEYS)
    if unknown:
        return f"has pax header fields this reader does not support: {unknown}"
    return None


class _Writer:
    """Creates folders and files under one root without ever following a link."""

    def __init__(self, root: Path) -> None:
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self._dirs: dict[str, int] = {"": self.root_fd}

    def _dir(self, rel: str) -> int:
        if rel in self._dirs:
            return self._dirs[rel]
        parent, _, name = rel.rpartition("/")
        parent_fd = self._dir(parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise _Reject("member.not_folder", rel, "is used as a folder but is not one")
        self._dirs[rel] = fd
        return fd

    def write(self, rel: str, chunks: Iterator[bytes]) -> tuple[str, int]:
        import hashlib

        parent, _, name = rel.rpartition("/")
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
            0o644,
            dir_fd=self._dir(parent),
        )
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        return digest.hexdigest(), size

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()


def _data(tar: tarfile.TarFile, member: tarfile.TarInfo) -> Iterator[bytes]:
    """The bytes of a regular member of a streamed tar, in bounded chunks."""
    stream = tar.extractfile(member)
    if stream is None:
        raise _Reject("member.type", member.name, "has no data")
    left = member.size
    while left:
        chunk = stream.read(min(CHUNK, left))
        if not chunk:
            raise _Reject("archive.truncated", member.name, "the archive ends inside this member")
        left -= len(chunk)
        yield chunk


def extract(
    bundle: Path,
    workdir: Path,
    limits: Limits | None = None,
    before_payload: BeforePayload | None = None,
) -> Extracted:
    """Read ``bundle`` into the empty folder ``workdir``. Raises ``BundleRejected``.

    ``before_payload`` sees the manifest and signatures before any payload byte is
    written (signature checks go there). On rejection the caller removes ``workdir``.
    """
    limits = limits or Limits()
    try:
        raw = open(bundle, "rb")  # noqa: SIM115 (closed in the finally below)
    except OSError as exc:
        raise BundleRejected(
            f"cannot read {bundle}: {exc.strerror}",
            [Problem(str(bundle), "archive.unreadable", str(exc.strerror))],
        ) from None
    writer = _Writer(workdir)
    try:
        codec = compression.detect(raw.read(4))
        raw.seek(0)
        if codec is None:
            raw.seek(0)
            kind = "a zip file" if raw.read(2) == b"PK" else "neither gzip- nor zstd-compressed"
            raise _Reject(
                "archive.not_compressed_tar",
                str(bundle.name),
                f"is {kind}; a bundle is a compressed tar (*.bundle.tar.gz or *.bundle.tar.zst)",
            )
        stream = _Stream(compression.inflater(codec, raw, limits.archive_bytes), limits)
        extracted = _read(stream, writer, workdir, limits, before_payload)
        extracted.codec = codec
        return extracted
    except _Reject as exc:
        raise BundleRejected("the bundle was rejected", [exc.problem]) from None
    finally:
        writer.close()
        raw.close()


def _read(
    stream: _Stream,
    writer: _Writer,
    workdir: Path,
    limits: Limits,
    before_payload: BeforePayload | None,
) -> Extracted:
    problems: list[Problem] = []
    manifest: Manifest | None = None
    manifest_bytes = b""
    top = ""
    expected: dict[str, tuple[str, int]] = {}
    seen: dict[str, str] = {}
    folders: set[str] = set()
    written: dict[str, tuple[str, int]] = {}
    signatures: dict[str, bytes] = {}
    total = 0
    count = 0
    payload_started = False
    end_of_last = 0  # stream offset where the last member's data ended
    folded_files: dict[str, str] = {}
    folded_folders: dict[str, str] = {}

    def start_payload() -> None:
        nonlocal payload_started
        if not payload_started and before_payload is not None and manifest is not None:
            before_payload(manifest_bytes, identity(manifest_bytes), dict(signatures))
        payload_started = True

    try:
        tar = tarfile.open(  # noqa: SIM115 (closed with the stream)
            fileobj=stream,
            mode="r|",
            encoding="utf-8",
            errors="surrogateescape",
            tarinfo=_StrictTarInfo,
        )
    except tarfile.ReadError as exc:
        raise _Reject(
            "archive.not_tar", "(archive)", f"the gzip stream does not hold a tar archive: {exc}"
        ) from None
    try:
        for member in _members(tar):
            count += 1
            if count > limits.members:
                raise _Reject(
                    "limit.members",
                    "(archive)",
                    f"more than {limits.members} members (raise with --max-members)",
                )
            if tar.pax_headers:
                raise _Reject(
                    "archive.global_header",
                    member.name,
                    "a pax global header precedes this member; bundles have none",
                )
            if not stream.all_zero(end_of_last, member.offset):
                raise _Reject(
                    "archive.hidden_data",
                    member.name,
                    "non-zero bytes hide in the padding before this member's header "
                    "(a member larger than its declared size?)",
                )
            # where tarfile resumes after this member (it skips the data of these types)
            has_data = member.isreg() or member.type not in tarfile.SUPPORTED_TYPES
            end_of_last = member.offset_data + (member.size if has_data else 0)
            name = member.name
            where = name
            why = path_problem(name) or _member_problem(member)
            if why:
                problems.append(
                    Problem(where, "member.name" if path_problem(name) else "member.type", why)
                )
                continue
            key = fold(name)
            if key in seen:
                same = "appears twice" if seen[key] == name else f"collides with {seen[key]!r}"
                problems.append(
                    Problem(
                        where,
                        "member.duplicate",
                        f"{same} (case or Unicode folding)" if seen[key] != name else same,
                    )
                )
                continue
            seen[key] = name
            clash = _clash(key, name, member.isreg(), folded_files, folded_folders)
            if clash:
                problems.append(Problem(where, "member.file_and_folder", clash))
                continue
            if manifest is None:
                if (
                    not name.endswith("/" + MANIFEST_NAME)
                    or name.count("/") != 1
                    or not member.isreg()
                ):
                    raise _Reject(
                        "archive.layout",
                        where,
                        f"the first member must be NAME-VERSION/{MANIFEST_NAME}",
                    )
                if member.size > limits.manifest_bytes:
                    raise _Reject(
                        "limit.manifest_size",
                        where,
                        f"the manifest is larger than {limits.manifest_bytes} bytes "
                        "(raise with --max-manifest-bytes)",
                    )
                manifest_bytes = b"".join(_data(tar, member))
                manifest = parse(manifest_bytes)
                top = name.split("/")[0]
                if top != manifest.top:
                    raise _Reject(
                        "archive.layout",
                        where,
                        f"the top folder is {top!r} but the manifest names {manifest.top!r}",
                    )
                expected = {f.path: (f.sha256, f.size) for f in manifest.files}
                for path in expected:
                    for i in range(1, path.count("/") + 1):
                        folders.add("/".join(path.split("/")[:i]))
                continue
            if not name.startswith(top + "/"):
                problems.append(Problem(where, "member.outside_top", f"is not inside {top}/"))
                continue
            rel = name[len(top) + 1 :]
            if member.isdir():
                if rel not in folders:
                    problems.append(
                        Problem(where, "member.unlisted", "is a folder the manifest does not list")
                    )
                continue
            if rel.startswith(SIGNATURES_DIR + "/") and rel.count("/") == 1:
                if payload_started:
                    raise _Reject(
                        "archive.layout",
                        where,
                        "a signature after the payload began; signatures/*.json come "
                        "right after the manifest",
                    )
                if not rel.endswith(".json"):
                    problems.append(
                        Problem(where, "member.unlisted", "signature files are named *.json")
                    )
                    continue
                if member.size > limits.manifest_bytes:
                    raise _Reject(
                        "limit.signature_size",
                        where,
                        f"the signature file is larger than {limits.manifest_bytes} bytes",
                    )
                signatures[rel] = b"".join(_data(tar, member))
                continue
            start_payload()
            if rel not in expected:
                problems.append(Problem(where, "member.unlisted", "is not listed in the manifest"))
                continue
            want_hash, want_size = expected[rel]
            if member.size != want_size:
                problems.append(
                    Problem(
                        where,
                        "member.size",
                        f"observed {member.size} bytes, the manifest says {want_size}",
                    )
                )
                continue
            if member.size > limits.file_bytes:
                raise _Reject(
                    "limit.file_size",
                    where,
                    f"larger than {limits.file_bytes} bytes (raise with --max-file-bytes)",
                )
            total += member.size
            if total > limits.total_bytes:
                raise _Reject(
                    "limit.total_size",
                    where,
                    f"the files add up to more than {limits.total_bytes} bytes "
                    "(raise with --max-total-bytes)",
                )
            written[rel] = writer.write(f"{top}/{rel}", _data(tar, member))
        if manifest is None:
            raise _Reject("archive.empty", "(archive)", "the archive holds no manifest")
        start_payload()
        tail_ok = stream.all_zero(end_of_last, stream.given)
        tail = stream.drain()
        if not tail_ok or tail.strip(b"\0"):
            raise _Reject(
                "archive.trailing_data",
                "(archive)",
                "there are bytes after the tar end-of-archive marker",
            )
    except tarfile.TarError as exc:
        raise _Reject(
            "archive.corrupt", "(archive)", f"the tar stream is corrupt or truncated: {exc}"
        ) from None
    except EOFError:
        raise _Reject("archive.truncated", "(archive)", "the file is truncated") from None
    except OSError as exc:
        raise _Reject(
            "archive.write", "(work directory)", f"cannot write: {exc.strerror}"
        ) from None

    for rel, (want_hash, _) in expected.items():
        if rel not in written:
            if not any(p.where == f"{top}/{rel}" for p in problems):
                problems.append(
                    Problem(f"{top}/{rel}", "file.missing", "is listed in the manifest but missing")
                )
        elif written[rel][0] != want_hash:
            problems.append(
                Problem(
                    f"{top}/{rel}",
                    "file.hash",
                    f"SHA-256 is {written[rel][0]}, the manifest says {want_hash}",
                )
            )
    if problems:
        shown = problems[:MAX_LISTED_PROBLEMS]
        if len(problems) > len(shown):
            shown.append(
                Problem("", "more", f"... and {len(problems) - len(shown)} more problem(s)")
            )
        raise BundleRejected(
            f"the bundle was rejected: {len(problems)} problem(s) with its contents", shown
        )
    return Extracted(
        root=workdir / top,
        manifest=manifest,
        manifest_bytes=manifest_bytes,
        identity=identity(manifest_bytes),
        total_bytes=total,
        signatures=signatures,
    )


def _clash(
    key: str, name: str, is_file: bool, files: dict[str, str], folders: dict[str, str]
) -> str | None:
    """Why a (folded) name is a file where another needs a folder, or the reverse."""
    parts = key.split("/")
    for i in range(1, len(parts)):
        folder = "/".join(parts[:i])
        if folder in files:
            return f"needs a folder where {files[folder]!r} is a file"
    if is_file and key in folders:
        return f"is a file, but {folders[key]!r} needs it as a folder"
    for i in range(1, len(parts)):
        folders.setdefault("/".join(parts[:i]), name)
    if is_file:
        files[key] = name
    else:
        folders.setdefault(key, name)
    return None


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        try:
            member = tar.next()
        except (_Reject, tarfile.TarError, EOFError, OSError):
            raise
        except Exception as exc:  # tarfile's header parsing raises ValueError & co on hostile input
            raise _Reject(
                "archive.corrupt",
                "(archive)",
                f"a tar header cannot be parsed ({type(exc).__name__}: {exc})",
            ) from None
        if member is None:
            return
        yield member
