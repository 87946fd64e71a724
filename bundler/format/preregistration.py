"""Pre-registrations: a bundle's claims and checks, fixed before its evidence exists.

A pre-registration holds what a bundle source says it will check (name and version, every
claim with its statement, limits and cases, every case's checker, params, inputs,
expectation and reasons, the scope) and the names of the inputs the cases will read, but
no input content. It is written in the manifest's own shape, so that it is read by the
manifest's schema and consistency rules and compared with a later bundle by ``diff``'s
rules: one set of rules, not two. Its identity is the SHA-256 of its canonical bytes.

Pure: values in, values or ``ValueError`` out. Signing is ``signatures.envelope``'s.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bundler.format.manifest import (
    Manifest,
    consistency_problems,
    dotted,
    format_for,
    from_dict,
    schema_errors,
    unbuilt_environment,
)

PREREGISTRATION_FORMAT = "reprobundle-preregistration/1"
# 1.1 adds ``files`` (the digests of chosen reference inputs and of bundled code, fixed in
# advance) and ``code`` (the bundled checkers, as the manifest declares them)
PREREGISTRATION_FORMAT_FIXED = "reprobundle-preregistration/1.1"
_FORMATS = {
    PREREGISTRATION_FORMAT: {"written"},
    PREREGISTRATION_FORMAT_FIXED: {"written", "files", "code"},
}
_SHA256 = re.compile(r"[0-9a-f]{64}")
PAYLOAD_TYPE = "application/vnd.reprobundle.preregistration+json"
FILE_NAME = "preregistration.json"  # its place in a bundle, beside manifest.toml
_BUNDLE_KEYS = ("name", "version", "title", "description")
_PLACEHOLDER = "0" * 64
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def from_document(
    document: Mapping[str, Any],
    written: str | None = None,
    fixed: Mapping[str, tuple[str, int]] | None = None,
) -> dict[str, Any]:
    """The pre-registration of a manifest-shaped document (``authoring.source``'s);
    ``written``: when, by the author's clock (RFC 3339, UTC), stated and never attested;
    ``fixed``: path -> (SHA-256, size) of the files whose content it fixes (reference
    inputs the author chose, bundled code). A document with bundled code, or with files
    fixed, is written in format 1.1, with its ``code`` and ``files``."""
    cases = [dict(c) for c in document["cases"]]
    doc = ({"written": written} if written else {}) | {
        "format": PREREGISTRATION_FORMAT,
        "bundle": {k: document["bundle"][k] for k in _BUNDLE_KEYS if k in document["bundle"]},
        "cases": cases,
        "claims": [dict(c) for c in document["claims"]],
        "scope": dict(document.get("scope") or {"cannot_support": []}),
        "inputs": sorted(input_names(cases)),
    }
    if fixed or document.get("code"):
        doc["format"] = PREREGISTRATION_FORMAT_FIXED
        doc["files"] = [
            {"path": path, "sha256": sha, "size": size}
            for path, (sha, size) in sorted((fixed or {}).items())
        ]
        doc["code"] = [dict(c) for c in document.get("code") or ()]
    return doc


def fixed_files(doc: Mapping[str, Any]) -> dict[str, str]:
    """Path -> SHA-256 of each file whose content a (parsed) pre-registration fixes."""
    return {f["path"]: f["sha256"] for f in doc.get("files", ())}


def input_names(cases: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every path a case names as an input (a file, or a folder for a tree role)."""
    names: set[str] = set()
    for case in cases:
        for ref in case.get("inputs", {}).values():
            names.update([ref] if isinstance(ref, str) else ref)
    return names


def canonical(doc: Mapping[str, Any]) -> bytes:
    """The bytes whose SHA-256 is a pre-registration's identity."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def identity(doc: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(doc)).hexdigest()


def _as_manifest(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest-shaped document a pre-registration stands for: its inputs listed as
    files with placeholder hashes (the real ones where it fixes them), its bundled code,
    an empty environment."""
    fixed = {f["path"]: f for f in doc.get("files", ())}
    files = [fixed.get(p) or {"path": p, "sha256": _PLACEHOLDER, "size": 0} for p in doc["inputs"]]
    files += [f for p, f in sorted(fixed.items()) if p not in set(doc["inputs"])]
    shaped = {
        "format": format_for(doc["cases"], bool(doc.get("code"))),
        "bundle": {"title": "", "description": "", **doc["bundle"]},
        "environment": unbuilt_environment(),
        "files": files,
        "cases": doc["cases"],
        "claims": doc["claims"],
        "scope": doc["scope"],
    }
    return shaped | ({"code": doc["code"]} if doc.get("code") else {})


def _files_problem(doc: Mapping[str, Any]) -> str | None:
    """Why a pre-registration's ``files`` (its fixed digests) are not well formed."""
    files = doc.get("files", [])
    if not isinstance(files, list) or not isinstance(doc.get("code", []), list):
        return "files and code must be lists"
    paths = set()
    for item in files:
        if not (
            isinstance(item, dict)
            and set(item) == {"path", "sha256", "size"}
            and isinstance(item["path"], str)
            and isinstance(item["sha256"], str)
            and _SHA256.fullmatch(item["sha256"])
            and type(item["size"]) is int
            and item["size"] >= 0
        ):
            return "each of files is {path, sha256 (64 lower-case hex digits), size}"
        if item["path"] in paths:
            return f"files lists {item['path']!r} twice"
        paths.add(item["path"])
    return None


def parse(payload: bytes) -> tuple[dict[str, Any], Manifest]:
    """Read a pre-registration's canonical bytes strictly: its own keys, then the
    manifest's schema and consistency rules on what it stands for. Returns the document
    and its cases and claims as a ``Manifest`` (no files, no environment). Raises
    ``ValueError`` naming the first problem."""
    from checkers import strictjson

    try:
        doc = strictjson.loads(payload.decode("utf-8"), max_values=2_000_000)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not strict JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if doc.get("format") not in _FORMATS:
        raise ValueError(
            f"format is {str(doc.get('format'))[:80]!r}, expected {PREREGISTRATION_FORMAT!r} "
            f"or {PREREGISTRATION_FORMAT_FIXED!r}"
        )
    optional = _FORMATS[doc["format"]]
    expected = {"format", "bundle", "cases", "claims", "scope", "inputs"}
    if not expected <= set(doc) <= expected | optional:
        also = ", ".join(sorted(optional))
        raise ValueError(f"has keys {sorted(doc)}, expected {sorted(expected)} (and {also})")
    written = doc.get("written")
    if written is not None and not (isinstance(written, str) and _RFC3339.fullmatch(written)):
        raise ValueError("written must be an RFC 3339 UTC time stamp (YYYY-MM-DDTHH:MM:SSZ)")
    problem = _files_problem(doc)
    if problem:
        raise ValueError(problem)
    if canonical(doc) != payload:
        raise ValueError("its bytes are not canonical JSON (sorted keys, no spaces)")
    inputs = doc["inputs"]
    if not isinstance(inputs, list) or not all(isinstance(p, str) for p in inputs):
        raise ValueError("inputs must be a list of paths")
    if not isinstance(doc["bundle"], dict) or not isinstance(doc["cases"], list):
        raise ValueError("bundle must be a mapping and cases a list")
    shaped = _as_manifest(doc)
    errors = schema_errors(shaped)
    if errors:
        first = errors[0]
        raise ValueError(f"{dotted(first.absolute_path)}: {first.message[:200]}")
    if set(inputs) != input_names(doc["cases"]):
        raise ValueError("inputs must list exactly the paths the cases name")
    problems = consistency_problems(shaped)
    if problems:
        where, _, message = problems[0]
        raise ValueError(f"{dotted(where)}: {message}")
    view = from_dict(shaped, ())
    code = {p for c in view.code for p in c.code_files(fixed_files(doc))}
    stray = sorted(set(fixed_files(doc)) - set(inputs) - code)
    if stray:
        raise ValueError(
            f"files fixes {stray[0]!r}, which is neither a file a case names as an input nor "
            "a file of its bundled code"
        )
    return doc, view


# a pre-registration stated as written more than this before the bundle's build time is
# flagged: what it fixed was fixed long ago, and may not be what the author meant to test
LONG_BEFORE = dt.timedelta(days=365)


def time_warnings(written: str | None, at: dt.datetime, built_epoch: int) -> list[str]:
    """What a reader should know about a pre-registration's stated ``written`` time (its
    author's clock: stated, never attested), judged at ``at``: written after the
    verification (a clock or a statement that is wrong), or more than ``LONG_BEFORE``
    before the build time the bundle states (``source_date_epoch``; 0: not stated)."""
    if written is None or not _RFC3339.fullmatch(written):
        return []
    when = dt.datetime.strptime(written, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    found = []
    if when > at:
        found.append(
            f"it says it was written {written}, after this verification "
            f"({at.strftime('%Y-%m-%dT%H:%M:%SZ')}): its author's clock or statement is wrong, "
            "and it shows nothing about what was fixed in advance"
        )
    if built_epoch > 0:
        built = dt.datetime.fromtimestamp(built_epoch, dt.UTC)
        if built - when > LONG_BEFORE:
            found.append(
                f"it says it was written {written}, {(built - when).days} days before the "
                f"bundle's stated build time ({built.strftime('%Y-%m-%dT%H:%M:%SZ')}, "
                "SOURCE_DATE_EPOCH)"
            )
    return found
