"""Strict reading of an untrusted bundle: every byte hashed, the wanted files written.

Nothing here trusts the archive. This module is the read loop: it moves bytes from the
file through the decompressor (``compression``) and the tar reader (``tarstream``) and
asks ``readrules.ReadRules`` what to do with each member, so every rule (names, types,
order, limits, the reconciliation with the manifest) lives in one object without I/O.
Limits are enforced on the bytes actually decompressed, not on what headers say. Files
are created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` relative to directory descriptors made
here (``writer``), so no name or link can lead a write outside the work folder.

Every payload file is hashed as it streams; only the ones ``wanted`` are written (all of
them by default). Every problem is collected before the bundle is rejected. From a
regular file, a second thread decompresses at most two pieces ahead of the read loop
(``compression.ReadAhead``); it decides nothing.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import BinaryIO

from bundler.container import compression
from bundler.container.readrules import Action, Limits, ReadRules, Stop
from bundler.container.tarstream import TarError, TarReader
from bundler.container.writer import Writer, sha256_of
from bundler.errors import BundleRejected, Problem
from bundler.format.manifest import Manifest, identity
from bundler.format.withheld import Withheld

__all__ = ["BeforePayload", "CheckedBundle", "Extracted", "Limits", "Wanted", "extract"]

MAX_LISTED_PROBLEMS = 200

# Called once the manifest and the signatures are read, before any payload byte is
# written: (manifest bytes, identity, signature files by name). Raises to reject.
BeforePayload = Callable[[bytes, str, dict[str, bytes]], None]
# Called right after: the payload paths to write (None: every file).
Wanted = Callable[[Manifest], Collection[str] | None]


@dataclass(frozen=True)
class CheckedBundle:
    """A bundle whose every byte matched its manifest: what stays true once its work
    folder is gone (``check_integrity`` returns it; ``Verification.extracted`` is one)."""

    manifest: Manifest
    manifest_bytes: bytes
    identity: str  # the SHA-256 of manifest_bytes
    total_bytes: int
    signatures: dict[str, bytes] = field(default_factory=dict)
    codec: compression.Codec = compression.GZIP
    written: frozenset[str] | None = None  # the files written (None: all of them)
    withheld: Withheld | None = None  # a redacted bundle's record of the files left out


@dataclass(frozen=True)
class Extracted(CheckedBundle):
    """A checked bundle while its work folder exists: ``written`` of its files are under
    ``root``. Only the holder of the folder sees one; it hands out ``checked()``."""

    root: Path = field(kw_only=True)

    def checked(self) -> CheckedBundle:
        """The same facts without the folder, which is about to be removed."""
        return CheckedBundle(**{f.name: getattr(self, f.name) for f in fields(CheckedBundle)})


def extract(
    bundle: Path,
    workdir: Path,
    limits: Limits | None = None,
    before_payload: BeforePayload | None = None,
    stream: BinaryIO | None = None,
    wanted: Wanted | None = None,
) -> Extracted:
    """Read ``bundle`` into the empty folder ``workdir``. Raises ``BundleRejected``.

    ``before_payload`` sees the manifest and signatures before any payload byte is
    written (signature checks go there); ``wanted`` then names the files to write. On
    rejection the caller removes ``workdir``. Given ``stream`` (a pipe, say), the bytes
    are read from it and ``bundle`` only names them; either way they are read once, from
    the start, never seeking.
    """
    rules = ReadRules(limits or Limits())
    if stream is None:
        try:
            stream = open(bundle, "rb")  # noqa: SIM115 (closed in the finally below)
        except OSError as exc:
            raise BundleRejected(
                f"cannot read {bundle}: {exc.strerror}",
                [Problem(str(bundle), "archive.unreadable", str(exc.strerror))],
            ) from None
    writer = Writer(workdir)
    source = _Unreadable(stream, str(bundle))
    inflater: compression.ReadAhead | None = None
    try:
        head = _read_up_to(source, 4)
        codec = compression.detect(head)
        if codec is None:
            kind = (
                "empty"
                if not head
                else "a zip file"
                if head[:2] == b"PK"
                else "neither gzip- nor zstd-compressed"
            )
            hint = ""
            if head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{":
                kind = "JSON, not a bundle"
                import shlex

                name = f"./{bundle.name}" if bundle.name.startswith("-") else bundle.name
                hint = (
                    "; if it is a report `verify --json` wrote, render it with "
                    f"`reprobundle report {shlex.quote(name)}`"
                )
            raise Stop(
                "archive.not_compressed_tar",
                str(bundle.name),
                f"is {kind}; a bundle is a compressed tar (*.bundle.tar.gz or "
                f"*.bundle.tar.zst){hint}",
            )
        raw = _Prefixed(head, source)
        plain = compression.inflater(codec, raw, rules.limits.archive_bytes)
        # From a file, decompress ahead on a thread; a pipe is read only as far as needed
        # (a rejected bundle must not wait for a producer that has not written yet).
        if _regular_file(stream):
            inflater = compression.ReadAhead(plain)
        written = _read(rules, inflater or plain, writer, before_payload, wanted)
    except Stop as exc:
        raise BundleRejected("the bundle was rejected", [exc.problem]) from None
    finally:
        if inflater is not None:
            inflater.close()  # before the file it reads is closed
        writer.close()
        with contextlib.suppress(OSError):
            source.close()
    problems = rules.finish()
    if problems:
        shown = problems[:MAX_LISTED_PROBLEMS]
        if len(problems) > len(shown):
            shown.append(
                Problem("", "more", f"... and {len(problems) - len(shown)} more problem(s)")
            )
        raise BundleRejected(
            f"the bundle was rejected: {len(problems)} problem(s) with its contents", shown
        )
    assert rules.manifest is not None  # (``end`` stops when there is none)
    return Extracted(
        root=workdir / rules.top,
        manifest=rules.manifest,
        manifest_bytes=rules.manifest_bytes,
        identity=identity(rules.manifest_bytes),
        total_bytes=rules.total,
        signatures=rules.signatures,
        codec=codec,
        written=written if rules.withheld is None else _present(written, rules),
        withheld=rules.withheld,
    )


def _present(written: frozenset[str] | None, rules: ReadRules) -> frozenset[str]:
    """The files written, never naming a withheld one (they are not in the archive)."""
    assert rules.manifest is not None and rules.withheld is not None
    gone = rules.withheld.paths
    every = {f.path for f in rules.manifest.files} if written is None else written
    return frozenset(p for p in every if p not in gone)


def _read(
    rules: ReadRules,
    inflater: compression.Inflater | compression.ReadAhead,
    writer: Writer,
    before_payload: BeforePayload | None,
    wanted: Wanted | None,
) -> frozenset[str] | None:
    """The read loop; returns the paths written (None: every file)."""
    decompressed = 0

    def pull() -> bytes:
        nonlocal decompressed
        try:
            chunk = inflater.next()
        except compression.StreamError as exc:
            raise Stop(exc.code, "(archive)", exc.message) from None
        decompressed += len(chunk)
        rules.stream(decompressed, inflater.compressed)
        return chunk

    write: frozenset[str] | None = None

    def start_payload() -> None:
        nonlocal write
        manifest = rules.manifest
        assert manifest is not None
        if before_payload is not None:
            before_payload(
                rules.manifest_bytes, identity(rules.manifest_bytes), dict(rules.signatures)
            )
        chosen = wanted(manifest) if wanted is not None else None
        write = None if chosen is None else frozenset(chosen)

    tar = TarReader(pull)
    # (bound once: this loop runs once a member, tens of thousands of times)
    next_member, data, judge, hashed = tar.next, tar.data, rules.member, rules.hashed
    file, manifest, signature = Action.FILE, Action.MANIFEST, Action.SIGNATURE
    record = Action.WITHHELD
    try:
        while (member := next_member()) is not None:
            action, rel, starts = judge(member)
            if starts:
                start_payload()
            if action is file:
                if write is None or rel in write:
                    hashed(rel, writer.write(f"{rules.top}/{rel}", data()))
                else:
                    hashed(rel, sha256_of(data()))
            elif action is manifest:
                rules.manifest_read(b"".join(data()))
            elif action is signature:
                rules.signature_read(rel, b"".join(data()))
            elif action is record:
                rules.withheld_read(b"".join(data()))
        if rules.end():
            start_payload()
    except TarError as exc:
        raise Stop(exc.code, exc.where, exc.message) from None
    except OSError as exc:
        raise Stop("archive.write", "(work directory)", f"cannot write: {exc.strerror}") from None
    return write


def _regular_file(stream: object) -> bool:
    """Whether ``stream`` reads a regular file (never blocks for a writer)."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False


def _read_up_to(stream: _Unreadable, size: int) -> bytes:
    """``size`` bytes, fewer only at the end (a pipe may hand them out piece by piece)."""
    out = b""
    while len(out) < size and (chunk := stream.read(size - len(out))):
        out += chunk
    return out


class _Unreadable:
    """The bundle's bytes: an OS error while reading them (EIO from a failing disk, a
    network file system gone) is a rejection naming the file, never a bare OSError."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self._stream = stream
        self._name = name

    def read(self, size: int = -1) -> bytes:
        try:
            return self._stream.read(size)
        except OSError as exc:
            raise Stop(
                "archive.unreadable", self._name, f"cannot read: {exc.strerror or exc}"
            ) from None

    def close(self) -> None:
        self._stream.close()


class _Prefixed:
    """A stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, rest: _Unreadable) -> None:
        self._head = head
        self._rest = rest

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(size)
        out, self._head = self._head[:size], self._head[size:]
        return out
