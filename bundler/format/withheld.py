"""The withheld record of a redacted bundle: which files left it, bound by the manifest.

A redacted bundle is a bundle whose author left some payload files out after it was
built (``reprobundle redact``). The manifest is unchanged (so the identity and every
signature still hold) and still names each file with its SHA-256 and size; the member
``NAME-VERSION/withheld.json``, right after the manifest and the signatures, says which
files are absent on purpose and why. It is not listed in the manifest: it cannot be,
since listing it would change the manifest. Its own name is the marker a verifier that
predates it meets: such a verifier rejects the bundle, naming ``withheld.json`` as a
member the manifest does not list and each withheld file as missing (exit 3), and never
judges a claim from what is left.

The record is read strictly (``parse``): exactly the keys below, a known format, each
entry a file the manifest lists with the manifest's own digest and size, read by a case,
and none twice. Pure: no I/O beyond the bytes given.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.errors import Problem
from bundler.format.manifest import MANIFEST_NAME, SIGNATURES_DIR, Manifest
from checkers import strictjson

__all__ = [
    "FORMAT",
    "RECORD_NAME",
    "Withheld",
    "WithheldFile",
    "parse",
    "read_by_cases",
    "withheld_paths_of_case",
]

RECORD_NAME = "withheld.json"
FORMAT = "reprobundle-withheld/1"
MAX_REASON = 2000  # characters
_FORMAT = re.compile(r"reprobundle-withheld/([0-9]+)(?:\.([0-9]+))?\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_KEYS = frozenset({"format", "files"})
_FILE_KEYS = frozenset({"path", "size", "sha256", "reason"})


@dataclass(frozen=True)
class WithheldFile:
    """One file left out of the bundle: its path, the manifest's size and digest, why."""

    path: str
    size: int
    sha256: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "reason": self.reason}


@dataclass(frozen=True)
class Withheld:
    """A bundle's withheld record: its files, sorted by path."""

    files: tuple[WithheldFile, ...]

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.files)

    def to_bytes(self) -> bytes:
        """The record as written into a redacted bundle (sorted, one line per file)."""
        lines = ",\n".join(
            "  " + strictjson.canonical(f.to_dict()) for f in sorted(self.files, key=_path)
        )
        return f'{{"format": "{FORMAT}", "files": [\n{lines}\n]}}\n'.encode()


def _path(f: WithheldFile) -> str:
    return f.path


class RecordError(ValueError):
    """The record does not hold; ``problems`` names each thing wrong."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


def parse(data: bytes, manifest: Manifest, read_by_cases: Collection[str], where: str) -> Withheld:
    """The record in ``data``, checked against ``manifest``; ``RecordError`` listing every
    problem otherwise. ``read_by_cases``: the files some case reads (only those may be
    withheld); ``where``: the member's name, for messages."""
    try:
        # UTF-8 and nothing else (``json.loads`` of bytes would also read UTF-16 and a
        # byte-order mark, which no record is written with)
        if data.startswith(b"\xef\xbb\xbf"):
            raise ValueError("it starts with a byte-order mark")
        raw = strictjson.loads(data.decode("utf-8"), max_depth=4)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(
            [Problem(where, "withheld.format", f"is not valid JSON: {exc}")]
        ) from None
    problems: list[Problem] = []

    def bad(message: str, code: str = "withheld.format") -> None:
        problems.append(Problem(where, code, message))

    if not isinstance(raw, dict):
        raise RecordError([Problem(where, "withheld.format", "is not a JSON object")])
    extra = sorted(set(raw) - _KEYS)
    if extra:
        bad(f"has keys this verifier does not know: {extra}; expected exactly {sorted(_KEYS)}")
    fmt = raw.get("format")
    found = _FORMAT.match(fmt) if isinstance(fmt, str) else None
    if found is None or found.group(1) != "1":
        raise RecordError(
            [
                *problems,
                Problem(
                    where,
                    "withheld.format",
                    f"format is {fmt!r}, expected {FORMAT!r}: a withheld record of another "
                    "format needs another verifier",
                ),
            ]
        )
    entries = raw.get("files")
    if not isinstance(entries, list) or not entries:
        raise RecordError(
            [*problems, Problem(where, "withheld.format", "files must be a non-empty list")]
        )
    listed = {f.path: f for f in manifest.files}
    files: list[WithheldFile] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        at = f"files[{i}]"
        if not isinstance(entry, dict):
            bad(f"{at} is not an object")
            continue
        keys = set(entry)
        if keys != _FILE_KEYS:
            bad(f"{at} has keys {sorted(keys)}, expected exactly {sorted(_FILE_KEYS)}")
            continue
        path, size, sha256, reason = (entry[k] for k in ("path", "size", "sha256", "reason"))
        if not isinstance(path, str) or not isinstance(reason, str):
            bad(f"{at}: path and reason must be strings")
            continue
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size < 1 << 63:
            bad(f"{at}: size must be a whole number of bytes")
            continue
        if not isinstance(sha256, str) or not _SHA256.match(sha256):
            bad(f"{at}: sha256 must be 64 lower-case hex digits")
            continue
        if not reason.strip() or len(reason) > MAX_REASON:
            bad(f"{at}: reason must be non-empty, at most {MAX_REASON} characters")
            continue
        problem = _entry_problem(path, size, sha256, listed, read_by_cases)
        if problem:
            code, message = problem
            bad(f"{at} ({path!r}) {message}", code)
            continue
        if path in seen:
            bad(f"{at} ({path!r}) is withheld twice", "withheld.duplicate")
            continue
        seen.add(path)
        files.append(WithheldFile(path, size, sha256, reason))
    if problems:
        raise RecordError(problems)
    return Withheld(tuple(sorted(files, key=_path)))


def _entry_problem(
    path: str,
    size: int,
    sha256: str,
    listed: Mapping[str, Any],
    read_by_cases: Collection[str],
) -> tuple[str, str] | None:
    """Why one entry cannot be withheld: (code, message), or None."""
    top = path.split("/")[0]
    if path in (MANIFEST_NAME, RECORD_NAME) or top == SIGNATURES_DIR:
        return "withheld.reserved", (
            "cannot be withheld: the manifest, the signatures and the record itself are "
            "what a verifier checks the rest with"
        )
    entry = listed.get(path)
    if entry is None:
        return "withheld.unlisted", "is not a file the manifest lists"
    if entry.sha256 != sha256 or entry.size != size:
        code = "withheld.digest"
        return code, (
            f"observed sha256 {sha256} and size {size}, the manifest says sha256 "
            f"{entry.sha256} and size {entry.size}"
        )
    if path not in read_by_cases:
        return "withheld.unread", (
            "is read by no case: only evidence a case reads may be withheld (the rest of "
            "the bundle is what a reader needs to understand it)"
        )
    return None


def withheld_paths_of_case(
    inputs: Mapping[str, str | Sequence[str]], files: Collection[str]
) -> list[str]:
    """The withheld ``files`` a case with these inputs reads (a folder input reads every
    file under it), sorted."""
    named = {p for ref in inputs.values() for p in _paths(ref)}
    folders = tuple(p.rstrip("/") + "/" for p in named)
    return sorted(f for f in files if f in named or f.startswith(folders))


def read_by_cases(manifest: Manifest) -> set[str]:
    """The files some case names as an input, or that lie under a folder a case names."""
    listed = {f.path for f in manifest.files}
    named = {p for c in manifest.cases for ref in c.inputs.values() for p in _paths(ref)}
    folders = tuple(p.rstrip("/") + "/" for p in named - listed)
    return (named & listed) | ({p for p in listed if p.startswith(folders)} if folders else set())


def _paths(ref: str | Sequence[str]) -> Sequence[str]:
    return [ref] if isinstance(ref, str) else ref
