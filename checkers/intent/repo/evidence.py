"""Evidence pointers as the grader judges them: every evidence value of a spec, its form
(a whitelist of pointer shapes) and whether the path it names is a file of the workspace."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..cases import input_invalid
from .format import as_list

# evidence pointers that are not workspace paths and need no file (run.py EVIDENCE_TOKEN_OK,
# decision 6/7): git:<sha 7-40 hex> | git:#<pr> | user:delegated | record:<system>/<id>...
# | doc:<slug>[#section]; and the general pointer path[:line[-line]][#anchor]
_RESERVED = (
    r"git:(?:#\d+|[0-9a-f]{7,40})",
    r"user:delegated",
    r"record:[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+",
    r"doc:[A-Za-z0-9._-]+(?:#\S+)?",
)
_POINTER = r"[^\s:#]+(?::\d+(?:-\d+)?)?(?:#\S+)?"
# ``$`` as the grader writes it: it also matches before one trailing newline
_TOKEN = re.compile("^(?:" + "|".join((*_RESERVED, _POINTER)) + ")$")
_RESERVED_PREFIXES = ("git:", "record:", "doc:")
# tokens that parse but are not repository content: the root, git internals, the
# installed skill copies, the skill's saved specs, the harness config (NON_POINTER_*)
NOT_POINTERS_EXACT = (".",)
NOT_POINTER_PREFIXES = ("./", ".git/", ".claude/", ".agents/", ".intent/", "opencode.json")
# ``ns:rest`` where ns has no "/" and no ".": a namespace, unless ``ns`` is a file and
# ``rest`` a line number (``Makefile:3``)
_NAMESPACE = re.compile(r"^([A-Za-z0-9._-]+):(.+)$")
_LINES = re.compile(r"\d+(?:-\d+)?")
_LINE_SUFFIX = re.compile(r":\d+(?:-\d+)?\s*$")


def evidence_items(spec: Mapping[str, Any]) -> list[str]:
    """Every evidence value of the spec: constraints, then trace steps (falsy ones skipped)."""
    items: list[str] = []
    for key in ("constraints", "trace"):
        for entry in as_list(spec.get(key)):
            if isinstance(entry, Mapping) and entry.get("evidence"):
                items.append(str(entry["evidence"]))
    return items


def classify_evidence(pointer: str, files: frozenset[str]) -> tuple[str, str]:
    """``(kind, why)`` for one evidence value: ``path``, ``reserved``, ``form`` or
    ``hallucinated`` (only the last fails the whole suite).

    As the grader (run.py check_turn, decision 7): form is decided by a whitelist first —
    a single whitespace-free token in one of the reserved forms or ``path[:line[-line]]
    [#anchor]``, and not the repository root, ``./...``, ``.git/``, ``.claude/``,
    ``.agents/``, ``.intent/`` or ``opencode.json``. ``ns:digits`` whose ``ns`` (no "/",
    no ".") is not a file is a mistyped namespace (form, never a hallucination);
    ``ns:other`` is a form violation. Then a path (anchor and line range removed) that is
    not a file of the workspace is a hallucination. Line numbers are never compared with
    the file's length, and a folder is not a file.
    """
    if " " in pointer or not _TOKEN.match(pointer):
        return "form", "not a single pointer token (prose, or no form the grader allows)"
    if pointer in NOT_POINTERS_EXACT or pointer.startswith(NOT_POINTER_PREFIXES):
        return (
            "form",
            "the repository root, .git/, a skill copy, a saved spec or the harness config",
        )
    if pointer.startswith(_RESERVED_PREFIXES) or pointer == "user:delegated":
        return "reserved", "a reserved non-path form"
    shape = _NAMESPACE.match(pointer)
    if shape and "/" not in shape[1] and "." not in shape[1]:
        if not _LINES.fullmatch(shape[2]):
            return "form", f"unknown namespace {shape[1]!r}"
        if shape[1] not in files:
            return "form", f"{shape[1]!r} is neither a file nor a known namespace"
    path = _LINE_SUFFIX.sub("", pointer.split("#", 1)[0]).strip()
    if path in files:
        return "path", ""
    return "hallucinated", f"no file {path} in the workspace"


def workspace_files(tree: Any, fixture: str) -> frozenset[str]:
    """The files evidence may name: the fixture's files, ``.git/`` internals excluded.

    The grader checks against a freshly prepared workspace; what it adds besides the
    fixture (``.git/``, the skill copies, ``opencode.json``) is excluded from evidence
    by form, so the fixture's own files are the whole set. ``empty`` has none.
    """
    if fixture == "empty":
        return frozenset()
    if not isinstance(tree, Mapping):
        raise input_invalid(f"fixture: case fixture {fixture!r} needs the fixture folder input")
    prefix = fixture + "/"
    files = frozenset(
        path[len(prefix) :]
        for path in tree
        if isinstance(path, str)
        and path.startswith(prefix)
        and not path.startswith(prefix + ".git/")
    )
    if not files:
        raise input_invalid(f"fixture not found: no files under {prefix} in the fixture folder")
    return files
