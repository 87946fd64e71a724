"""A data file's text -> its value: JSON, JSON Lines or YAML, read strictly, within caps.

The runner loads a case's inputs with it and ``reprobundle trajectory`` its traces and
models, so a file reads alike wherever it is read, and a problem is worded alike:
``NAME[:LINE]: what is wrong``. Pure: the caller reads the bytes.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from checkers import strictjson

Kind = Literal["json", "jsonl", "yaml"]
SUFFIXES: dict[str, Kind] = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml"}


class DocumentProblem(ValueError):
    """A document that cannot be read; the message names it (and the line)."""


class Caps(NamedTuple):
    """What one document may hold; None is no cap beyond the readers' own."""

    values: int | None = None  # JSON and JSON Lines
    yaml_values: int | None = None
    depth: int | None = None
    yaml_aliases: bool = False  # expand anchors and aliases (bounded) instead of refusing
    json_constants: bool = False  # NaN and Infinity read as numbers instead of refused
    lines_at_newline: bool = False  # JSON Lines split at "\n" only (Reading.lines_at_newline)


def kind_of(name: str) -> Kind | None:
    """The kind a file name says (``.json``, ``.jsonl``, ``.yaml``/``.yml``), or None."""
    dot = name.rfind(".")
    return SUFFIXES.get(name[dot:]) if dot >= 0 else None


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentProblem(f"{name} is not UTF-8 text (byte {exc.start})") from None


def parse(text: str, name: str, kind: Kind, caps: Caps = Caps()) -> Any:  # noqa: B008 (immutable)
    """The document's value (JSON Lines as ``(line, value)`` pairs); raises
    DocumentProblem."""
    try:
        return _parse(text, name, kind, caps)
    except RecursionError:
        from checkers.yamlfile import TOO_DEEP

        raise DocumentProblem(f"{name}: {TOO_DEEP}") from None


def _parse(text: str, name: str, kind: Kind, caps: Caps) -> Any:
    if kind == "jsonl":
        try:
            return strictjson.loads_lines(
                text,
                caps.values,
                constants=caps.json_constants,
                huge_numbers=True,
                newline_only=caps.lines_at_newline,
            )
        except ValueError as exc:
            raise DocumentProblem(f"{name}:{exc}") from None
    if kind == "json":
        try:
            depth = strictjson.MAX_DEPTH if caps.depth is None else caps.depth
            return strictjson.loads(
                text, depth, caps.values, constants=caps.json_constants, huge_numbers=True
            )
        except ValueError as exc:
            raise DocumentProblem(f"{name}: not valid JSON: {exc}") from None
    from checkers import yamlfile  # PyYAML takes 12 ms to import; only YAML documents need it

    try:
        value, _ = yamlfile.load(
            text, aliases=caps.yaml_aliases, max_values=caps.yaml_values, max_depth=caps.depth
        )
    except yamlfile.YamlProblem as exc:
        line = f":{exc.line}" if exc.line else ""
        hint = " (large data reads better as JSON)" if "values" in exc.message else ""
        raise DocumentProblem(f"{name}{line}: {exc.message}{hint}") from None
    return value
