"""Strict reading of an untrusted bundle into a new, empty work directory.

Nothing here trusts the archive: member names, types and sizes are checked before a
byte is written; files are created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` relative to
directory descriptors this module created itself, so no name or link can lead a write
outside the work directory; limits are enforced on the bytes actually decompressed,
not on what headers say. Every file is hashed while it is written, and every problem is
collected before the bundle is rejected. The tar stream is read by ``tarstream``, which
sees every byte once; ``tarfile`` is not used.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from . import compression, filewriter
from .errors import BundleRejected, Problem
from .manifest import MANIFEST_NAME, SIGNATURES_DIR, Manifest, identity, parse
from .paths import MAX_PATH_BYTES, fold, path_problem
from .tarstream import TYPE_NAMES, Header, TarError, TarReader

MAX_LISTED_PROBLEMS = 200
# pax keywords this reader understands; any other (GNU sparse maps, charsets, ...) rejects
PAX_KEYS = frozenset({"path", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"})

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


class _Stream:
    """The decompressed tar stream: bounded pieces from an inflater, counted against the
    limits before the tar reader sees them."""

    def __init__(self, inflater: compression.Inflater, limits: Limits) -> None:
        self._inflater = inflater
        self._limits = limits
        self.decompressed = 0

    def pull(self) -> bytes:
        try:
            chunk = self._inflater.next()
        except compression.StreamError as exc:
            raise _Reject(exc.code, "(archive)", exc.message) from None
        self.decompressed += len(chunk)
        self._check_ratio()
        return chunk

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
            self._inflater.compressed, 1
        ):
            raise _Reject(
                "limit.ratio",
                "(archive)",
                f"decompresses more than {limits.ratio}:1 (a compression bomb?); "
                "raise with --max-ratio",
            )


def _member_problem(member: Header) -> str | None:
    kind = TYPE_NAMES.get(member.type)
    if member.type in (b"1", b"2"):
        return f"is {kind} (to {member.linkname!r}); bundles hold regular files only"
    if kind:
        return f"is {kind}"
    if not (member.is_file or member.is_folder):
        return f"has an unsupported member type {member.type.decode('latin-1')!r}"
    unknown = sorted(set(member.pax) - PAX_KEYS)
    if unknown:
        return f"has pax header fields this reader does not support: {unknown}"
    return None


class _Hasher:
    """SHA-256 on a second thread, beside decompressing and writing on the first
    (hashlib and os.write release the GIL). The queue is short, so memory stays bounded."""

    THRESHOLD = 1 << 20  # smaller files are hashed in line: handing over costs more (measured)

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Any, memoryview] | None] = queue.Queue(maxsize=64)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            item[0].update(item[1])

    def update(self, digest: Any, chunk: memoryview) -> None:
        self._queue.put((digest, chunk))

    def finish(self) -> None:
        """Wait until every handed-over piece is hashed."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


class _Digest:
    """The SHA-256 of a file written by the second process, known once it answered."""

    def __init__(self) -> None:
        self.value = b""

    def hexdigest(self) -> str:
        return self.value.hex()


class _FileProcess:
    """Small files handed to ``filewriter`` on a second process, in order, through a pipe;
    their digests come back at ``finish``."""

    BATCH_BYTES = 1 << 20
    BATCH_PIECES = 512  # os.writev takes at most IOV_MAX (1024 on Linux) buffers

    def __init__(self, root_fd: int) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", filewriter.__file__, str(root_fd)],
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
        self._digests: list[_Digest] = []

    def write(self, folder: str, name: str, size: int, chunks: Iterable[memoryview]) -> _Digest:
        rel, base = os.fsencode(folder), os.fsencode(name)
        self._pending.append(filewriter.HEADER.pack(len(rel), len(base), size) + rel + base)
        for chunk in chunks:
            self._pending.append(chunk)
            self._bytes += len(chunk)
            if self._bytes >= self.BATCH_BYTES or len(self._pending) >= self.BATCH_PIECES:
                self._send()
        digest = _Digest()
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
        self._pending.append(filewriter.HEADER.pack(0, 0, 0))
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
        if answer[:1] == b"D" and len(answer) == 1 + 32 * len(self._digests):
            for i, digest in enumerate(self._digests):
                digest.value = answer[1 + 32 * i : 33 + 32 * i]
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


class _Writer:
    """Creates folders and files under one root without ever following a link.

    Folders are made here (a clash must stop the read at once). Once a bundle has shown
    it holds many small files, the next ones are written and hashed by a second process
    (``_FileProcess``); large ones are written here and hashed on a second thread.
    """

    PROCESS_AFTER = 256  # small files written here before the second process pays off

    def __init__(self, root: Path) -> None:
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self._dirs: dict[str, int] = {"": self.root_fd}
        self._hasher: _Hasher | None = None
        self._process: _FileProcess | None = None
        self._small = 0

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

    def write(self, rel: str, size: int, chunks: Iterable[memoryview]) -> Any:
        """Create ``rel`` from ``chunks``; returns its SHA-256 object, complete once
        ``finish`` has returned."""
        import hashlib

        parent, _, name = rel.rpartition("/")
        dir_fd = self._dir(parent)
        if size < _Hasher.THRESHOLD:
            self._small += 1
            if self._small == self.PROCESS_AFTER + 1 and os.path.isfile(filewriter.__file__):
                with contextlib.suppress(OSError):  # one try; without it, write here
                    self._process = _FileProcess(self.root_fd)
            if self._process is not None:
                return self._process.write(parent, name, size, chunks)
        fd = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd
        )
        digest = hashlib.sha256()
        update: Callable[[memoryview], None]
        if size >= _Hasher.THRESHOLD:
            self._hasher = self._hasher or _Hasher()
            update = partial(self._hasher.update, digest)
        else:
            update = digest.update
        try:
            for chunk in chunks:
                update(chunk)
                while chunk:
                    chunk = chunk[os.write(fd, chunk) :]
        finally:
            os.close(fd)
        return digest

    def finish(self) -> None:
        """Wait until every file is written and hashed; raises the first write error."""
        if self._hasher is not None:
            self._hasher.finish()
        if self._process is not None:
            self._process.finish()

    def close(self) -> None:
        if self._hasher is not None:
            self._hasher.finish()
        if self._process is not None:
            self._process.close()
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()


def extract(
    bundle: Path,
    workdir: Path,
    limits: Limits | None = None,
    before_payload: BeforePayload | None = None,
    stream: BinaryIO | None = None,
) -> Extracted:
    """Read ``bundle`` into the empty folder ``workdir``. Raises ``BundleRejected``.

    ``before_payload`` sees the manifest and signatures before any payload byte is
    written (signature checks go there). On rejection the caller removes ``workdir``.
    Given ``stream`` (a pipe, say), the bytes are read from it and ``bundle`` only
    names them; either way they are read once, from the start, never seeking.
    """
    limits = limits or Limits()
    if stream is None:
        try:
            stream = open(bundle, "rb")  # noqa: SIM115 (closed in the finally below)
        except OSError as exc:
            raise BundleRejected(
                f"cannot read {bundle}: {exc.strerror}",
                [Problem(str(bundle), "archive.unreadable", str(exc.strerror))],
            ) from None
    writer = _Writer(workdir)
    try:
        head = _read_up_to(stream, 4)
        codec = compression.detect(head)
        if codec is None:
            kind = (
                "empty"
                if not head
                else "a zip file"
                if head[:2] == b"PK"
                else "neither gzip- nor zstd-compressed"
            )
            raise _Reject(
                "archive.not_compressed_tar",
                str(bundle.name),
                f"is {kind}; a bundle is a compressed tar (*.bundle.tar.gz or *.bundle.tar.zst)",
            )
        raw = _Prefixed(head, stream)
        pieces = _Stream(compression.inflater(codec, raw, limits.archive_bytes), limits)
        extracted = _read(pieces, writer, workdir, limits, before_payload)
        extracted.codec = codec
        return extracted
    except _Reject as exc:
        raise BundleRejected("the bundle was rejected", [exc.problem]) from None
    finally:
        writer.close()
        stream.close()


def _read_up_to(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes, fewer only at the end (a pipe may hand them out piece by piece)."""
    out = b""
    while len(out) < size and (chunk := stream.read(size - len(out))):
        out += chunk
    return out


class _Prefixed:
    """A stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(size)
        out, self._head = self._head[:size], self._head[size:]
        return out


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
    digests: dict[str, Any] = {}  # hashlib objects, complete after writer.finish()
    signatures: dict[str, bytes] = {}
    total = 0
    count = 0
    payload_started = False
    folded_files: dict[str, str] = {}
    folded_folders: dict[str, str] = {}

    def start_payload() -> None:
        nonlocal payload_started
        if not payload_started and before_payload is not None and manifest is not None:
            before_payload(manifest_bytes, identity(manifest_bytes), dict(signatures))
        payload_started = True

    tar = TarReader(stream.pull)
    try:
        while (member := tar.next()) is not None:
            count += 1
            if count > limits.members:
                raise _Reject(
                    "limit.members",
                    "(archive)",
                    f"more than {limits.members} members (raise with --max-members)",
                )
            name = member.name
            where = name
            # The name of a file the manifest lists is portable: its top folder came with
            # the manifest's own name, the rest was checked when the manifest was read.
            listed = (
                name[len(top) + 1 :] in expected
                and name.startswith(top + "/")
                and member.is_file
                and PAX_KEYS.issuperset(member.pax)
                and len(name.encode()) <= MAX_PATH_BYTES
            )
            why = None if listed else path_problem(name) or _member_problem(member)
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
            clash = _clash(key, name, member.is_file, folded_files, folded_folders)
            if clash:
                problems.append(Problem(where, "member.file_and_folder", clash))
                continue
            if manifest is None:
                if (
                    not name.endswith("/" + MANIFEST_NAME)
                    or name.count("/") != 1
                    or not member.is_file
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
                manifest_bytes = b"".join(tar.data())
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
            if member.is_folder:
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
                signatures[rel] = b"".join(tar.data())
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
            digests[rel] = writer.write(f"{top}/{rel}", member.size, tar.data())
        if manifest is None:
            raise _Reject("archive.empty", "(archive)", "the archive holds no manifest")
        start_payload()
        writer.finish()
    except TarError as exc:
        raise _Reject(exc.code, exc.where, exc.message) from None
    except OSError as exc:
        raise _Reject(
            "archive.write", "(work directory)", f"cannot write: {exc.strerror}"
        ) from None

    named = {p.where for p in problems}
    for rel, (want_hash, _) in expected.items():
        digest = digests.get(rel)
        if digest is None:
            if f"{top}/{rel}" not in named:
                problems.append(
                    Problem(f"{top}/{rel}", "file.missing", "is listed in the manifest but missing")
                )
        elif (got := digest.hexdigest()) != want_hash:
            problems.append(
                Problem(
                    f"{top}/{rel}", "file.hash", f"SHA-256 is {got}, the manifest says {want_hash}"
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
    """Why a (folded) name is a file where another needs a folder, or the reverse.

    Every folder in ``folders`` has all its ancestors there too and none in ``files``, so
    a name whose parent is known needs no walk up its path."""
    known = key.rpartition("/")[0] in folders
    parts = () if known else key.split("/")
    if not known:
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if folder in files:
                return f"needs a folder where {files[folder]!r} is a file"
    if is_file and key in folders:
        return f"is a file, but {folders[key]!r} needs it as a folder"
    if not known:
        for i in range(1, len(parts)):
            folders.setdefault("/".join(parts[:i]), name)
    if is_file:
        files[key] = name
    else:
        folders.setdefault(key, name)
    return None
