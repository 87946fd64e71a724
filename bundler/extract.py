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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from . import compression
from .errors import BundleRejected, Problem
from .manifest import MANIFEST_NAME, SIGNATURES_DIR, Manifest, identity, parse
from .paths import MAX_PATH_BYTES, fold, folders_of, path_problem
from .tarstream import TYPE_NAMES, Header, TarError, TarReader
from .writer import Writer

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
    writer = Writer(workdir)
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
    writer: Writer,
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
                folders = folders_of(expected)
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
    the walk up the name's path stops at the first known folder (as in ``folders_of``)."""
    new = []
    parent = key.rpartition("/")[0]
    while parent and parent not in folders:
        if parent in files:
            return f"needs a folder where {files[parent]!r} is a file"
        new.append(parent)
        parent = parent.rpartition("/")[0]
    if is_file and key in folders:
        return f"is a file, but {folders[key]!r} needs it as a folder"
    for folder in new:
        folders[folder] = name
    if is_file:
        files[key] = name
    else:
        folders.setdefault(key, name)
    return None
