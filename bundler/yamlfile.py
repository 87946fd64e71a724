"""Strict YAML reading: duplicate keys and aliases are errors, and every node's line is kept.

PyYAML's ``safe_load`` silently keeps the last of two duplicate keys and expands
aliases (the "billion laughs" shape). Evidence must not be read differently from how
its author wrote it, so both are refused. Keys are compared as they are built, not as
they are spelt: ``1`` and ``0x1``, ``true`` and ``yes`` are one key of the mapping.
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


def load(text: str) -> tuple[Any, dict[Locator, int]]:
    """Parse one YAML document. Returns the data and a map of locator -> 1-based line."""
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
            _walk(loader, node, (), marks, set())
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise YamlProblem(None, f"cannot read YAML value: {exc}") from None
        except RecursionError:
            raise YamlProblem(None, TOO_DEEP) from None
        return data, marks
    finally:
        loader.dispose()


def _built_equal(built: Any, keys: dict[Any, tuple[str, int]]) -> tuple[str, int] | None:
    """The (text, line) of an earlier key the parser would merge with ``built``: Python
    dict equality, which is what building the mapping will apply."""
    try:
        return keys.get(built)
    except TypeError:  # an unhashable value cannot be a dict key at all
        raise YamlProblem(None, f"mapping key {built!r} cannot be a key") from None


def _walk(
    loader: Any, node: yaml.Node, where: Locator, marks: dict[Locator, int], seen: set[int]
) -> None:
    line = node.start_mark.line + 1
    if id(node) in seen:
        raise YamlProblem(line, "YAML aliases (*name) are not allowed; write the value out")
    seen.add(id(node))
    marks[where] = line
    if isinstance(node, yaml.MappingNode):
        keys: dict[Any, tuple[str, int]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem(key_node.start_mark.line + 1, "mapping keys must be scalars")
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(
                    key_node.start_mark.line + 1, "YAML merge keys (<<) are not allowed"
                )
            key = key_node.value
            key_line = key_node.start_mark.line + 1
            # compared as the parser will build them: 1 and 0x1, true and yes, 1 and 1.0
            # are one key of the dict however differently they are spelt
            built = loader.construct_object(key_node)
            same = _built_equal(built, keys)
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
            keys[built] = (key, key_line)
            _walk(loader, value_node, (*where, key), marks, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(loader, item, (*where, index), marks, seen)
