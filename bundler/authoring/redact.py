"""Redact a bundle: leave files out, keep their digests (``reprobundle redact``).

The new bundle holds the same manifest bytes (so the same identity, and every signature
still holds), the same signatures, then the withheld record (``withheld.json``, see
``bundler.format.withheld``) naming each file left out with the manifest's size and
digest and the author's reason, then the rest of the payload. It is compressed as the
bundle was, written atomically, and read back strictly before it is put in place.

Only evidence a case reads may be withheld: the manifest, a signature, the record itself,
and files no case reads (the README, a pre-registration, bundled code) are refused, as is
a pattern that matches no file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bundler.authoring.source import glob_regex
from bundler.container.extract import Extracted, Limits, extract
from bundler.container.pack import bundle_members, write_tar
from bundler.errors import Problem, UsageError
from bundler.format.manifest import MANIFEST_NAME, SIGNATURES_DIR, FileEntry
from bundler.format.withheld import RECORD_NAME, Withheld, WithheldFile, read_by_cases
from bundler.output import staged
from bundler.signatures.trust import Policy, check_signatures

__all__ = ["DEFAULT_REASON", "Redacted", "redact"]

DEFAULT_REASON = "withheld by the bundle's author"


@dataclass(frozen=True)
class Redacted:
    """What ``redact`` wrote: the file, the bundle's identity, and every file withheld in
    it (earlier redactions' too)."""

    path: Path
    identity: str
    withheld: Withheld
    added: tuple[str, ...]  # the files this redaction withheld


def redact(
    bundle: Path,
    patterns: Sequence[str],
    out: Path,
    reason: str = DEFAULT_REASON,
    limits: Limits | None = None,
) -> Redacted:
    """Write ``out``: ``bundle`` without the files ``patterns`` match (globs over the
    manifest's paths; ``**`` crosses folders, a folder takes what is under it). Raises
    ``UsageError`` naming every problem, ``BundleRejected`` when ``bundle`` does not read."""
    bundle, out = Path(bundle).absolute(), Path(out).absolute()
    if not patterns:
        raise UsageError("give at least one --withhold PATTERN")
    if not reason.strip():
        raise UsageError("--reason must say something")
    with tempfile.TemporaryDirectory(prefix="reprobundle-redact-") as work:
        extracted = _read(bundle, Path(work), limits)
        chosen = _chosen(extracted, patterns)
        entries = {f.path: f for f in extracted.manifest.files}
        earlier = extracted.withheld.files if extracted.withheld else ()
        record = Withheld(
            tuple(
                sorted(
                    [*earlier, *(_entry(entries[p], reason) for p in chosen)],
                    key=lambda f: f.path,
                )
            )
        )
        members = bundle_members(extracted, extracted.signatures, record)
        mtime = int(extracted.manifest.environment.get("source_date_epoch", 0))
        with staged(out, "the redacted bundle") as tmp:
            with tmp.open("wb") as stream:
                write_tar(stream, members, mtime, extracted.codec)
            with tempfile.TemporaryDirectory(prefix="reprobundle-redact-check-") as check:
                again = _read(tmp, Path(check), limits)
            if again.manifest_bytes != extracted.manifest_bytes:  # pragma: no cover
                raise UsageError("internal: the manifest changed while redacting")
    return Redacted(out, extracted.identity, record, tuple(chosen))


def _read(bundle: Path, work: Path, limits: Limits | None) -> Extracted:
    def signatures_hold(manifest_bytes: bytes, identity: str, found: dict[str, bytes]) -> None:
        check_signatures(manifest_bytes, identity, found, Policy())  # a bad one rejects

    return extract(bundle, work, limits, signatures_hold)


def _chosen(extracted: Extracted, patterns: Sequence[str]) -> list[str]:
    """The listed files the patterns withhold, sorted; ``UsageError`` naming every pattern
    that matches nothing or something that may not be withheld."""
    manifest = extracted.manifest
    listed = [f.path for f in manifest.files]
    if RECORD_NAME in listed:
        raise UsageError(
            f"{manifest.top}/{RECORD_NAME} is one of the bundle's files, and a redacted "
            "bundle keeps its withheld record under that name: this bundle cannot be "
            "redacted (rename the file in the source and build again)"
        )
    already = extracted.withheld.paths if extracted.withheld else frozenset()
    read = read_by_cases(manifest)
    reserved = [MANIFEST_NAME, RECORD_NAME, *(sorted(extracted.signatures) or [SIGNATURES_DIR])]
    problems: list[Problem] = []
    chosen: set[str] = set()
    for pattern in patterns:
        where = f"--withhold {pattern}"
        regex = glob_regex(pattern)
        hits = [p for p in reserved if regex.match(p)]
        if hits:
            problems.append(
                Problem(
                    where,
                    "withheld.reserved",
                    f"matches {', '.join(hits)}: the manifest, the signatures and the "
                    "withheld record are what a verifier checks the rest with, and are "
                    "never withheld",
                )
            )
            continue
        matched = [p for p in listed if regex.match(p)]
        if not matched:
            problems.append(Problem(where, "withheld.unlisted", "matches no file of the bundle"))
            continue
        new = [p for p in matched if p not in already]
        if not new:
            problems.append(
                Problem(where, "withheld.unlisted", "matches only files already withheld")
            )
            continue
        unread = [p for p in new if p not in read]
        if unread:
            problems.append(
                Problem(
                    where,
                    "withheld.unread",
                    f"matches file(s) no case reads ({', '.join(unread[:5])}"
                    f"{', ...' if len(unread) > 5 else ''}): only evidence a case reads may "
                    "be withheld; narrow the pattern",
                )
            )
            continue
        chosen.update(new)
    if problems:
        raise UsageError(
            f"cannot redact {extracted.manifest.top}: {len(problems)} problem(s)", problems
        )
    return sorted(chosen)


def _entry(file: FileEntry, reason: str) -> WithheldFile:
    return WithheldFile(file.path, file.size, file.sha256, reason)
