"""A case's inputs as its checker receives them: each file re-hashed as it is read, parsed
strictly within ``LOAD_LIMITS`` (the caps importers apply too, so no log is imported that
verify would refuse to read)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from bundler.format import documents
from bundler.format.manifest import Case
from checkers import strictjson
from checkers.api import STRICT, Checker, InputKind, Reading


class LoadError(Exception):
    """An input that cannot be given to its checker: ``code`` is the case's error code."""

    def __init__(self, message: str, code: str = "input.unreadable") -> None:
        super().__init__(message)
        self.code = code


class LoadLimits(NamedTuple):
    """Caps on what a built-in case's input may make the verifier hold, checked before
    (or, for what only parsing can tell, while) the input is parsed."""

    bytes: int = 256 << 20  # per input file
    values: int = 5_000_000  # JSON and JSON Lines: values in one input
    yaml_values: int = 200_000  # YAML builds about 1 KiB of nodes per value
    depth: int = strictjson.MAX_DEPTH


LOAD_LIMITS = LoadLimits()


def _read(root: Path, path: str, sha256: str, limits: LoadLimits) -> bytes:
    """An input's bytes, re-hashed as they are read: whatever changed the work folder
    since it was checked (another process, a bundle's code) is caught, not believed."""
    import hashlib

    try:
        fd = os.open(root / path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > limits.bytes:
                raise LoadError(f"{path} is {size} bytes; an input is at most {limits.bytes}")
            # the size it has, and a byte more to see it grew: asking for the cap instead
            # made Python allocate 256 MiB for every input, however small
            data = stream.read(size + 1)
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise LoadError(
            f"{path} changed after it was checked (its SHA-256 no longer matches the "
            "manifest): input tampered",
            "input.tampered",
        )
    return data


def _load_one(
    root: Path,
    path: str,
    kind: InputKind,
    listed: Mapping[str, str],
    reading: Reading,
    limits: LoadLimits,
) -> Any:
    if kind is InputKind.TREE:
        prefix = path.rstrip("/") + "/"
        return {
            p[len(prefix) :]: _read(root, p, digest, limits)
            for p, digest in sorted(listed.items())
            if p.startswith(prefix)
        }
    if path not in listed:
        raise LoadError(f"{path} is not a file of the bundle")
    data = _read(root, path, listed[path], limits)
    try:
        return parse_input(data, path, kind, reading, listed[path], limits)
    except documents.DocumentProblem as exc:
        raise LoadError(str(exc)) from None


def parse_input(
    data: bytes,
    path: str,
    kind: InputKind,
    reading: Reading = STRICT,
    sha256: str = "",
    limits: LoadLimits | None = None,
) -> Any:
    """A file's bytes as a role of ``kind`` receives them, read as verify reads them
    (strictly, within ``limits``, by default ``LOAD_LIMITS``): importers read logs with it
    before writing cases. ``sha256`` (of ``data``) keys the YAML memory. Raises
    ``documents.DocumentProblem``."""
    limits = limits or LOAD_LIMITS
    if len(data) > limits.bytes:
        raise documents.DocumentProblem(
            f"{path} is {len(data)} bytes; an input is at most {limits.bytes}"
        )
    if kind is InputKind.BYTES:
        return data
    caps = documents.Caps(
        values=limits.values,
        yaml_values=limits.yaml_values,
        depth=limits.depth,
        yaml_aliases=reading.yaml_aliases,
        json_constants=reading.json_constants,
        lines_at_newline=reading.lines_at_newline,
    )
    text = documents.decode(data, path)
    if kind is InputKind.TEXT:
        return text
    if kind is InputKind.JSONL:
        return documents.parse(text, path, "jsonl", caps)
    if path.endswith(".json"):
        return documents.parse(text, path, "json", caps)
    if not sha256:
        import hashlib

        sha256 = hashlib.sha256(data).hexdigest()
    return _parse_yaml(sha256, text, path, caps)


# YAML inputs parsed before, by content (SHA-256, as re-checked on reading) and caps: the
# cases of a bundle often share one YAML file (forty cases, one cases.yaml), and PyYAML
# builds each value in Python (~20 us). Kept like _VACUITY_CACHE (emptied when full): at
# most 16 files of at most 64 Ki characters and 20,000 values each.
_PARSED: dict[tuple[str, documents.Caps], Any] = {}
_PARSED_FILES = 16
_PARSED_CHARACTERS = 64 << 10
_PARSED_VALUES = 20_000  # aliases expanded


def _at_most(value: Any, limit: int) -> bool:
    """Whether ``value`` holds at most ``limit`` values (mapping keys and items counted)."""
    pending = [value]
    while pending:
        limit -= 1
        if limit < 0:
            return False
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _parse_yaml(sha256: str, text: str, path: str, caps: documents.Caps) -> Any:
    """The document's value; every caller gets its own copy, so a checker that changes
    what it was given changes nothing another case reads."""
    import copy

    key = (sha256, caps)
    if key in _PARSED:
        return copy.deepcopy(_PARSED[key])
    value = documents.parse(text, path, "yaml", caps)
    if len(text) > _PARSED_CHARACTERS or not _at_most(value, _PARSED_VALUES):
        return value  # aliases can make a small file a large value: not kept
    if len(_PARSED) >= _PARSED_FILES:
        _PARSED.clear()
    _PARSED[key] = value
    return copy.deepcopy(value)


def load_inputs(
    found: Checker,
    case: Case,
    root: Path,
    listed: Mapping[str, str],
    limits: LoadLimits | None = None,
) -> dict[str, Any]:
    """The loaded value of each role, each file within ``limits`` (by default
    ``LOAD_LIMITS``); raises LoadError naming the file (and line)."""
    limits = limits or LOAD_LIMITS
    loaded: dict[str, Any] = {}
    for role_name, ref in case.inputs.items():
        role = found.role(role_name)
        if role is None:
            raise LoadError(f"{found.key} has no input {role_name!r}")
        if role.many != (not isinstance(ref, str)):
            raise LoadError(
                f"input {role_name!r} must be {'a list of paths' if role.many else 'one path'}"
            )
        paths = [ref] if isinstance(ref, str) else list(ref)
        values = [_load_one(root, p, role.kind, listed, role.reading, limits) for p in paths]
        loaded[role_name] = values if role.many else values[0]
    missing = [r.name for r in found.roles if not r.optional and r.name not in loaded]
    if missing:
        raise LoadError(f"{found.key} needs input(s) {', '.join(missing)}")
    return loaded
