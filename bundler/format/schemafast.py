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
        checks = [_keyword(key, value, sub, node, ref) for key, value in sub.items()]
        return _every([c for c in checks if c is not None])

    return node(schema)


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
    if key == "type":
        if isinstance(value, str):
            return TYPES[value]
        kinds = [TYPES[v] for v in value]
        return lambda x: any(kind(x) for kind in kinds)
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
    if key == "minProperties":
        return lambda x: not isinstance(x, dict) or len(x) >= value
    if key == "pattern":
        if re.search(r"(?<!\\)(?:\\\\)*\$\)*\Z", value):
            # Python's $ also matches before a final newline: "id\n" would pass as "id"
            raise ValueError(f"pattern {value!r} ends in $; anchor it with \\Z")
        search = re.compile(value).search
        return lambda x: not isinstance(x, str) or search(x) is not None
    if key == "minLength":
        return lambda x: not isinstance(x, str) or len(x) >= value
    if key == "maxLength":
        return lambda x: not isinstance(x, str) or len(x) <= value
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
    if key == "minimum":
        return lambda x: not _is_number(x) or x >= value
    if key == "maximum":
        return lambda x: not _is_number(x) or x <= value
    if key == "uniqueItems":
        return _unique if value else None
    if key == "enum":
        if not all(isinstance(v, str) for v in value):
            raise ValueError("only enums of strings are compiled")
        allowed = frozenset(value)
        return lambda x: isinstance(x, str) and x in allowed
    if key in ("oneOf", "anyOf"):
        branches = [node(s) for s in value]
        if key == "anyOf":
            return lambda x: any(branch(x) for branch in branches)
        return lambda x: sum(1 for branch in branches if branch(x)) == 1
    raise ValueError(f"the schema keyword {key!r} is not compiled")


def _unique(x: Any) -> bool:
    if not isinstance(x, list):
        return True
    if all(isinstance(v, str) for v in x):
        return len(set(x)) == len(x)
    from jsonschema import Draft202012Validator  # exact equality rules for mixed values

    return bool(Draft202012Validator({"uniqueItems": True}).is_valid(x))
