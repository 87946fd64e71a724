"""Strict YAML reading: duplicate keys and aliases are errors, and every node's line is kept.

PyYAML's ``safe_load`` silently keeps the last of two duplicate keys and expands
aliases (the "billion laughs" shape). Evidence must not be read differently from how
its author wrote it, so both are refused.
"""

from __future__ import annotations

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


def load(
    text: str, max_values: int | None = None, max_depth: int | None = None
) -> tuple[Any, dict[Locator, int]]:
    """Parse one YAML document. Returns the data and a map of locator -> 1-based line.
    Given caps, a document of more values or deeper nesting is refused; a long text is
    first scanned as a stream of events (flat memory) so that it is refused before the
    node tree, about 1 KiB a value in PyYAML, is built."""
    if max_values is not None and len(text) > 2 * max_values:
        _scan(text, max_values, max_depth)
    data, marks = _load(text)
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


def _load(text: str) -> tuple[Any, dict[Locator, int]]:
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else None
            if "nesting depth" in str(exc.problem):
                raise YamlProblem(line, TOO_DEEP) from None
            raise YamlProblem(line, f"not valid YAML: {exc.problem or exc}") from None
        except yaml.YAMLError as exc:
            raise YamlProblem(None, f"not valid YAML: {exc}") from None
        except RecursionError:
            raise YamlProblem(None, TOO_DEEP) from None
        if node is None:
            return None, {}
        marks: dict[Locator, int] = {}
        try:
            _walk(node, (), marks, set())
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise YamlProblem(None, f"cannot read YAML value: {exc}") from None
        except RecursionError:
            raise YamlProblem(None, TOO_DEEP) from None
        return data, marks
    finally:
        loader.dispose()


def _walk(node: yaml.Node, where: Locator, marks: dict[Locator, int], seen: set[int]) -> None:
    line = node.start_mark.line + 1
    if id(node) in seen:
        raise YamlProblem(line, "YAML aliases (*name) are not allowed; write the value out")
    seen.add(id(node))
    marks[where] = line
    if isinstance(node, yaml.MappingNode):
        keys: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem(key_node.start_mark.line + 1, "mapping keys must be scalars")
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(
                    key_node.start_mark.line + 1, "YAML merge keys (<<) are not allowed"
                )
            key = key_node.value
            key_line = key_node.start_mark.line + 1
            if key in keys:
                raise YamlProblem(key_line, f"duplicate key {key!r} (first on line {keys[key]})")
            keys[key] = key_line
            _walk(value_node, (*where, key), marks, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*where, index), marks, seen)
