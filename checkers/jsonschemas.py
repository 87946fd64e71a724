"""Checking a JSON Schema document against its metaschema, once per distinct document;
and a validator whose regular expressions run in time linear in the text
(``linear_validator``).

The cases of one bundle usually share a schema (an intent suite: one IntentSpec schema for
every case; a tool list: the same tools in every call), and the metaschema check walks
the whole metaschema each time (~60 ms for the IntentSpec schema), always with the same
answer. The answer is remembered per *exact* document: two documents share an entry only
if they are equal value for value and type for type (``1`` is not ``1.0`` nor ``True``,
``"1"`` is not ``1``), so remembering never changes what a checker decides.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import exceptions as jsonschema_exceptions

from . import linear

_REMEMBERED = 64  # distinct (validator, schema) pairs kept; the oldest is forgotten first
_LARGEST = 20_000  # values in a remembered schema (IntentSpec's has ~1,000): memory stays small
_seen: dict[tuple[Any, Any], jsonschema_exceptions.SchemaError | None] = {}


class _NotPlainData(Exception):
    """The document holds a value that is not plain JSON/YAML data, or is too large to
    keep: not remembered."""


def _exact(value: Any, budget: list[int]) -> Any:
    """A hashable value equal for two documents exactly when they are the same data."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _NotPlainData
    kind = type(value)
    if kind is dict:
        return (
            "map",
            frozenset((_exact(k, budget), _exact(v, budget)) for k, v in value.items()),
        )
    if kind is list:
        return ("list", tuple(_exact(item, budget) for item in value))
    if kind is float:
        return ("float", repr(value))  # -0.0 and 0.0 apart; every NaN alike (same answer)
    if kind in (str, int, bool) or value is None:
        return (kind.__name__, value)
    raise _NotPlainData


def check_schema(cls: Any, schema: Mapping[str, Any]) -> None:
    """``cls.check_schema(schema)``, answered from memory for a document seen before.

    Raises the same ``SchemaError`` (same message) the check raised the first time."""
    try:
        key = (cls, _exact(schema, [_LARGEST]))
    except (_NotPlainData, RecursionError):
        cls.check_schema(schema)
        return
    if key not in _seen:
        try:
            cls.check_schema(schema)
            _seen[key] = None
        except jsonschema_exceptions.SchemaError as exc:
            _seen[key] = exc
        if len(_seen) > _REMEMBERED:
            del _seen[next(iter(_seen))]
    problem = _seen[key]
    if problem is not None:
        raise problem.with_traceback(None)


# keywords whose values are data, not schemas: a "pattern" inside them is not a pattern
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _patterns(schema: Any) -> Iterator[tuple[str, str]]:
    """(keyword, pattern) for every ``pattern`` and ``patternProperties`` key in ``schema``
    (data keywords skipped); also ("unevaluatedProperties", "") where that keyword is."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                yield "pattern", value
            elif key == "patternProperties" and isinstance(value, Mapping):
                yield from (("patternProperties", str(p)) for p in value)
            elif key == "unevaluatedProperties":
                yield "unevaluatedProperties", ""
            stack.append(value)


def linear_validator(schema: Mapping[str, Any], where: str, cls: Any = None) -> Any:
    """A validator for ``schema`` (``validator_for``'s class) whose ``pattern``,
    ``patternProperties`` and ``additionalProperties`` keywords run their regular
    expressions on RE2 (``checkers/linear.py``), so validation is linear in each string.

    Raises ``linear.not_rerun`` (``pattern.not_rerun``) for a schema holding a pattern
    outside the subset RE2 reads as Python's ``re`` (jsonschema's engine) does, or one that
    reads ``patternProperties`` through ``unevaluatedProperties`` (jsonschema runs those on
    ``re`` itself); validation raises it for a string on which the two engines could
    differ. ``where``: the schema's place, for the message."""
    from jsonschema import validators

    found = list(_patterns(schema))
    for keyword, pattern in found:
        if keyword != "unevaluatedProperties":
            linear.require(pattern)
    if any(k == "patternProperties" for k, _ in found) and any(
        k == "unevaluatedProperties" for k, _ in found
    ):
        raise linear.not_rerun(
            next(p for k, p in found if k == "patternProperties"),
            f"{where} reads patternProperties through unevaluatedProperties, which jsonschema "
            "matches with Python's engine",
        )
    cls = cls or validators.validator_for(schema)
    mine = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    keywords = {k: f for k, f in mine.items() if k in cls.VALIDATORS}
    return validators.extend(cls, keywords)(schema)


def _found(pattern: str, text: str) -> bool:
    return linear.search_linear(pattern, text, where=f"the string {text[:80]!r}") is not None


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    """jsonschema's ``pattern`` (a ``re.search``), by RE2."""
    if validator.is_type(instance, "string") and not _found(pattern, instance):
        yield jsonschema_exceptions.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, _schema: Any
) -> Iterator[Any]:
    """jsonschema's ``patternProperties``: each property a pattern finds, against its schema."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _found(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    """jsonschema's ``additionalProperties``, the properties no pattern finds chosen by RE2
    (a search of the patterns joined by ``|`` finds a name when one of them does)."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = {
        name
        for name in instance
        if name not in properties and not any(_found(p, name) for p in patterns)
    }
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            names = ", ".join(repr(e) for e in sorted(extras))
            listed = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            yield jsonschema_exceptions.ValidationError(
                f"{names} {verb} not match any of the regexes: {listed}"
            )
        else:
            ordered = ", ".join(repr(e) for e in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield jsonschema_exceptions.ValidationError(
                f"Additional properties are not allowed ({ordered} {verb} unexpected)"
            )
