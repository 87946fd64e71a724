"""A yes/no check compiled from a JSON schema, for the common case where a document is valid.

``jsonschema`` walks the schema anew for every node of the document, which costs about
half a second for a manifest of 20,000 files. The closures built here answer the same
question (is the document valid under Draft 2020-12?) an order of magnitude faster; when
the answer is no, the caller asks ``jsonschema`` for the errors, so every message still
comes from one validator. Each keyword is compiled to exactly what ``jsonschema`` decides,
and a keyword this module does not know makes compiling fail, so the schema cannot grow a
rule that is silently skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description"})


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


TYPES: dict[str, Check] = {
    "string": lambda x: isinstance(x, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda x: isinstance(x, bool),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "null": lambda x: x is None,
}


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """A function telling whether a document is valid under ``schema`` (whole, with $defs).
    Raises ValueError for a keyword or reference it cannot compile exactly."""
    compiled: dict[str, Check] = {}

    def ref(pointer: str) -> Check:
        if not pointer.startswith("#/$defs/") or pointer.count("/") != 2:
            raise ValueError(f"only local #/$defs/NAME references are compiled, not {pointer}")
        name = pointer.split("/")[2]
        if name not in compiled:
            compiled[name] = lambda x: compiled[name](x)  # placeholder for recursion
            compiled[name] = node(schema["$defs"][name])
        return lambda x: compiled[name](x)

    def node(sub: Mapping[str, Any] | bool) -> Check:
        if sub is True:
            return lambda x: True
        if sub is False:
            return lambda x: False
        fused = _fused(sub, node)
        if fused is not None:
            return fused
        checks = [_keyword(key, value, sub, node, ref) for key, value in sub.items()]
        return _every([c for c in checks if c is not None])

    return node(schema)


def _fused(sub: Mapping[str, Any], node: Callable[[Any], Check]) -> Check | None:
    """One check for the schemas of which a document holds thousands (a file entry: an
    object of known keys, a string with a length or a pattern, a whole number with
    bounds), deciding what their keywords decide together; None for any other schema."""
    keys = set(sub) - ANNOTATIONS
    kind = sub.get("type")
    if kind == "object" and keys <= {"type", "properties", "required", "additionalProperties"}:
        if sub.get("additionalProperties", False) is not False:
            return None
        props = tuple((name, node(s)) for name, s in sub.get("properties", {}).items())
        known = frozenset(sub.get("properties", {})) if "additionalProperties" in sub else None
        names = frozenset(sub.get("required", ()))

        def fused_object(x: Any) -> bool:
            if not isinstance(x, dict) or (known is not None and not known.issuperset(x)):
                return False
            if not x.keys() >= names:
                return False
            for name, check in props:  # noqa: SIM110 (a loop: see _every)
                if name in x and not check(x[name]):
                    return False
            return True

        return fused_object
    if kind == "string" and keys <= {"type", "minLength", "maxLength", "pattern"}:
        shortest, longest = sub.get("minLength", 0), sub.get("maxLength", math.inf)
        search = _pattern(sub["pattern"]) if "pattern" in sub else None
        if search is None:
            return lambda x: isinstance(x, str) and shortest <= len(x) <= longest
        return lambda x: (
            isinstance(x, str) and shortest <= len(x) <= longest and search(x) is not None
        )
    if kind == "integer" and keys <= {"type", "minimum", "maximum"}:
        least, most = sub.get("minimum", -math.inf), sub.get("maximum", math.inf)
        return lambda x: _is_integer(x) and least <= x <= most
    return None


def _every(checks: list[Check]) -> Check:
    """All of ``checks``; a plain loop, since this runs for every node of the document."""
    if len(checks) == 1:
        return checks[0]

    def every(x: Any) -> bool:
        for check in checks:  # noqa: SIM110 (a loop: all() over a generator is slower)
            if not check(x):
                return False
        return True

    return every


def _keyword(
    key: str,
    value: Any,
    sub: Mapping[str, Any],
    node: Callable[[Any], Check],
    ref: Callable[[str], Check],
) -> Check | None:
    """The check for one keyword of a schema object (None for annotations)."""
    if key in ANNOTATIONS:
        return None
    if key == "$ref":
        return ref(value)
    if key in _OBJECT_KEYWORDS:
        return _object_keyword(key, value, sub, node)
    if key in _STRING_KEYWORDS:
        return _string_keyword(key, value)
    if key in _ARRAY_KEYWORDS:
        return _array_keyword(key, value, node)
    if key in _VALUE_KEYWORDS:
        return _value_keyword(key, value, node)
    raise ValueError(f"the schema keyword {key!r} is not compiled")


_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "required", "minProperties"})
_STRING_KEYWORDS = frozenset({"pattern", "minLength", "maxLength", "enum"})
_ARRAY_KEYWORDS = frozenset({"items", "minItems", "maxItems", "uniqueItems"})
_VALUE_KEYWORDS = frozenset({"type", "minimum", "maximum", "oneOf", "anyOf"})


def _object_keyword(
    key: str, value: Any, sub: Mapping[str, Any], node: Callable[[Any], Check]
) -> Check:
    if key == "properties":
        props = tuple((name, node(s)) for name, s in value.items())

        def properties(x: Any) -> bool:
            if isinstance(x, dict):
                for name, check in props:
                    if name in x and not check(x[name]):
                        return False
            return True

        return properties
    if key == "additionalProperties":
        if set(sub) & {"patternProperties"}:
            raise ValueError("additionalProperties beside patternProperties is not compiled")
        known = frozenset(sub.get("properties", {}))
        if value is False:
            return lambda x: not isinstance(x, dict) or known.issuperset(x)
        extra = node(value)
        return lambda x: (
            not isinstance(x, dict) or all(extra(v) for k, v in x.items() if k not in known)
        )
    if key == "required":
        names = frozenset(value)
        return lambda x: not isinstance(x, dict) or x.keys() >= names
    return lambda x: not isinstance(x, dict) or len(x) >= value  # minProperties


def _string_keyword(key: str, value: Any) -> Check:
    if key == "pattern":
        search = _pattern(value)
        return lambda x: not isinstance(x, str) or search(x) is not None
    if key == "minLength":
        return lambda x: not isinstance(x, str) or len(x) >= value
    if key == "maxLength":
        return lambda x: not isinstance(x, str) or len(x) <= value
    if not all(isinstance(v, str) for v in value):  # enum
        raise ValueError("only enums of strings are compiled")
    allowed = frozenset(value)
    return lambda x: isinstance(x, str) and x in allowed


def _pattern(value: str) -> Callable[[str], re.Match[str] | None]:
    if re.search(r"(?<!\\)(?:\\\\)*\$\)*\Z", value):
        # Python's $ also matches before a final newline: "id\n" would pass as "id"
        raise ValueError(f"pattern {value!r} ends in $; anchor it with \\Z")
    return re.compile(value).search


def _array_keyword(key: str, value: Any, node: Callable[[Any], Check]) -> Check | None:
    if key == "items":
        item = node(value)

        def items(x: Any) -> bool:
            if isinstance(x, list):
                for v in x:
                    if not item(v):
                        return False
            return True

        return items
    if key == "minItems":
        return lambda x: not isinstance(x, list) or len(x) >= value
    if key == "maxItems":
        return lambda x: not isinstance(x, list) or len(x) <= value
    return _unique if value else None  # uniqueItems


def _value_keyword(key: str, value: Any, node: Callable[[Any], Check]) -> Check:
    if key == "type":
        if isinstance(value, str):
            return TYPES[value]
        kinds = [TYPES[v] for v in value]
        return lambda x: any(kind(x) for kind in kinds)
    if key == "minimum":
        return lambda x: not _is_number(x) or x >= value
    if key == "maximum":
        return lambda x: not _is_number(x) or x <= value
    branches = [node(s) for s in value]
    if key == "anyOf":
        return lambda x: any(branch(x) for branch in branches)
    return lambda x: sum(1 for branch in branches if branch(x)) == 1  # oneOf


def _unique(x: Any) -> bool:
    if not isinstance(x, list):
        return True
    if all(isinstance(v, str) for v in x):
        return len(set(x)) == len(x)
    from jsonschema import Draft202012Validator  # exact equality rules for mixed values

    return bool(Draft202012Validator({"uniqueItems": True}).is_valid(x))
