"""Checking a JSON Schema document against its metaschema, once per distinct document.

The cases of one bundle usually share a schema (an intent suite: one IntentSpec schema for
every case; a tool list: the same tools in every call), and the metaschema check walks
the whole metaschema each time (~60 ms for the IntentSpec schema), always with the same
answer. The answer is remembered per *exact* document: two documents share an entry only
if they are equal value for value and type for type (``1`` is not ``1.0`` nor ``True``,
``"1"`` is not ``1``), so remembering never changes what a checker decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import exceptions as jsonschema_exceptions

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
