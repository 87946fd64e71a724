"""Strict YAML reading: duplicate keys and aliases are errors, and every node's line is kept.

PyYAML's ``safe_load`` silently keeps the last of two duplicate keys and expands
aliases (the "billion laughs" shape). Evidence must not be read differently from how
its author wrote it, so both are refused. Keys are compared as they are built, not as
they are spelt: ``1`` and ``0x1``, ``true`` and ``yes`` are one key of the mapping.

Inputs are read as YAML 1.1, the version PyYAML implements (``yes``/``no``/``on``/``off``
are booleans, ``010`` is octal 8, ``1:20`` is sexagesimal 80). A document that declares
another version (``%YAML 1.2``) is refused when read with ``aliases=True`` (the reading of
checker versions that opt in), since its author expected other rules.

``aliases=True`` (opt-in per checker version, so what older checker versions decide
never changes): anchors and aliases are formatting, so they are expanded, but the
expansion may add at most ``MAX_ALIAS_NODES`` nodes to the document and may not refer
to itself; merge keys (``<<``) stay refused (they are not in YAML 1.2, and readers
disagree on their override rules).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

Locator = tuple[str | int, ...]

# libyaml's parser when PyYAML was built with it (about 10x faster); same rules either way.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlProblem(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


# What a document nested deeper than the reader goes says, whichever reader stopped it:
# libyaml's own limit (PyYAML 6.0.4 and later: "exceeded maximum nesting depth") or
# Python's recursion limit (older libyaml, the pure-Python parser, or the walk below).
TOO_DEEP = "nested too deeply to read"

# How many nodes alias expansion may add to a document (a "billion laughs" document adds
# billions): enough for configs that reuse a block a few hundred times.
MAX_ALIAS_NODES = 100_000


def load(
    text: str,
    *,
    aliases: bool = False,
    max_values: int | None = None,
    max_depth: int | None = None,
) -> tuple[Any, dict[Locator, int]]:
    """Parse one YAML document. Returns the data and a map of locator -> 1-based line.

    ``aliases``: expand anchors and aliases under ``MAX_ALIAS_NODES`` instead of refusing
    them (and refuse a ``%YAML`` directive other than 1.1). Given caps, a document of more
    values or deeper nesting is refused; a long text is first scanned as a stream of events
    (flat memory) so that it is refused before the node tree, about 1 KiB a value in
    PyYAML, is built."""
    if aliases:
        _check_version(text)
    if max_values is not None and len(text) > 2 * max_values:
        _scan(text, max_values, max_depth)
    data, marks = _load(text, aliases)
    if max_values is not None and len(marks) > max_values:
        raise YamlProblem(None, f"holds more than {max_values} values")
    if max_depth is not None and marks and max(map(len, marks)) >= max_depth:
        raise YamlProblem(None, f"nested deeper than {max_depth} levels")
    return data, marks


def _scan(text: str, max_values: int, max_depth: int | None) -> None:
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.NodeEvent):
                values += 1
                if values > max_values:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    raise YamlProblem(line, f"holds more than {max_values} values")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if max_depth is not None and depth >= max_depth:
                    raise YamlProblem(None, f"nested deeper than {max_depth} levels")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return  # the full read below says what is wrong, with its line


TAB = (
    "not valid YAML: a tab where YAML reads indentation or a value's start; YAML indents "
    "with spaces only: replace the tab with spaces"
)


def _load(text: str, aliases: bool) -> tuple[Any, dict[Locator, int]]:
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else None
            if "nesting depth" in str(exc.problem):
                raise YamlProblem(line, TOO_DEEP) from None
            if mark is not None and text[mark.index : mark.index + 1] == "\t":
                raise YamlProblem(line, TAB) from None
            raise YamlProblem(line, f"not valid YAML: {exc.problem or exc}") from None
        except yaml.YAMLError as exc:
            raise YamlProblem(None, f"not valid YAML: {exc}") from None
        except RecursionError:
            raise YamlProblem(None, TOO_DEEP) from None
        if node is None:
            return None, {}
        marks: dict[Locator, int] = {}
        try:
            if aliases:
                _Expander(loader, marks).walk(node, (), ())
            else:
                _walk(loader, node, (), marks, set())
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise YamlProblem(None, f"cannot read YAML value: {exc}") from None
        except (ValueError, OverflowError) as exc:
            # an unquoted date or time that does not exist (2026-13-40): YAML 1.1 reads
            # it as a timestamp and Python refuses to build it
            raise YamlProblem(
                None, f"cannot read YAML value: {exc} (quote a date or time to keep it as text)"
            ) from None
        except RecursionError:
            raise YamlProblem(None, TOO_DEEP) from None
        return data, marks
    finally:
        loader.dispose()


# the line breaks of str.splitlines
_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines()`` one line at a time: the directives are read from the first
    lines without a list of all of them (as large as the text) built first."""
    start = 0
    for found in _BREAK.finditer(text):
        yield text[start : found.start()]
        start = found.end()
    if start < len(text):
        yield text[start:]


def _check_version(text: str) -> None:
    for number, line in enumerate(_lines(text), start=1):
        if line.startswith("%YAML"):
            declared = line.split()[1:2]
            if declared != ["1.1"]:
                raise YamlProblem(
                    number,
                    f"the document declares YAML {' '.join(declared) or '(no version)'}; "
                    "inputs are read as YAML 1.1 (yes/no/on/off are booleans, 010 is octal): "
                    "remove the directive or write %YAML 1.1",
                )
        elif line.strip() and not line.startswith("#"):
            return  # directives come before the document


class _Expander:
    """The walk of ``aliases=True``: every alias is followed (so duplicate keys inside it
    are found and its paths get lines), counting the nodes it adds."""

    def __init__(self, loader: Any, marks: dict[Locator, int]) -> None:
        self.loader = loader
        self.marks = marks
        self.seen: set[int] = set()
        self.added = 0

    def walk(self, node: yaml.Node, where: Locator, inside: tuple[int, ...]) -> None:
        line = node.start_mark.line + 1
        if id(node) in inside:
            raise YamlProblem(line, "a YAML alias refers to a node that contains it")
        if id(node) in self.seen:
            self.added += 1
            if self.added > MAX_ALIAS_NODES:
                raise YamlProblem(
                    line,
                    f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} extra nodes; "
                    "write the repeated values out or reuse fewer of them",
                )
        self.seen.add(id(node))
        self.marks[where] = line
        inside = (*inside, id(node))
        if isinstance(node, yaml.MappingNode):
            keys = _keys(self.loader, node)
            for (key, _), (_, value_node) in zip(keys, node.value, strict=True):
                self.walk(value_node, (*where, key), inside)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, (*where, index), inside)


def _keys(loader: Any, node: yaml.MappingNode) -> list[tuple[Any, int]]:
    """The mapping's scalar keys (as written) with their lines; merge keys refused, and
    duplicates refused as the parser will build them: 1 and 0x1, true and yes, 1 and 1.0
    are one key of the dict however differently they are spelt."""
    keys: list[tuple[Any, int]] = []
    built_keys: dict[Any, tuple[str, int]] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise YamlProblem(key_node.start_mark.line + 1, "mapping keys must be scalars")
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise YamlProblem(key_node.start_mark.line + 1, "YAML merge keys (<<) are not allowed")
        key, key_line = key_node.value, key_node.start_mark.line + 1
        built = loader.construct_object(key_node)
        try:
            same = built_keys.get(built)
        except TypeError:  # an unhashable value cannot be a dict key at all
            raise YamlProblem(key_line, f"mapping key {key!r} cannot be a key") from None
        if same is not None:
            first_text, first_line = same
            spelt = (
                ""
                if first_text == key
                else f", spelt {first_text!r}: both build the same key, and the reader "
                "would keep only the last value"
            )
            raise YamlProblem(
                key_line, f"duplicate key {key!r} (first on line {first_line}{spelt})"
            )
        built_keys[built] = (key, key_line)
        keys.append((key, key_line))
    return keys


def _walk(
    loader: Any, node: yaml.Node, where: Locator, marks: dict[Locator, int], seen: set[int]
) -> None:
    line = node.start_mark.line + 1
    if id(node) in seen:
        raise YamlProblem(line, "YAML aliases (*name) are not allowed; write the value out")
    seen.add(id(node))
    marks[where] = line
    if isinstance(node, yaml.MappingNode):
        keys = _keys(loader, node)
        for (key, _), (_, value_node) in zip(keys, node.value, strict=True):
            _walk(loader, value_node, (*where, key), marks, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(loader, item, (*where, index), marks, seen)
