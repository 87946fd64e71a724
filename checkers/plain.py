"""Plain data for verdicts, and values shown in messages.

A verdict's details must be JSON data, while loaded evidence may hold what YAML builds
(dates, sets, non-string keys, ``.nan``). Each checker version made its copy in its own
way when it was written, and what a version decides never changes, so the ways are
kept, as options of one function (``plain``) and the older JSON round trip
(``via_json``) that config-change @1 uses (``via_json_finite``: the two in one pass).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast


def _same(value: Any) -> Any:
    return value


SAME = _same  # for ``key`` or ``other``: keep the value as it is


def plain(
    value: Any,
    *,
    non_finite_as_text: bool = True,
    key: Callable[[Any], Any] = str,
    other: Callable[[Any], Any] = str,
    sequences: tuple[type, ...] = (list, tuple),
) -> Any:
    """A copy built of mappings, lists and scalars.

    ``non_finite_as_text``: NaN and infinities become ``'nan'``, ``'inf'`` (JSON cannot
    hold them); ``key`` is applied to mapping keys, ``other`` to anything that is neither
    a scalar, a mapping nor one of ``sequences`` (which become lists).
    """
    lists = issubclass(list, sequences)

    def copy(value: Any) -> Any:
        kind = type(value)
        # the values JSON builds first, by their exact type (the rules below, faster)
        if kind is str or kind is int or kind is bool or value is None:
            return value
        if kind is float:
            return str(value) if non_finite_as_text and not math.isfinite(value) else value
        if kind is dict:
            return {key(k): copy(v) for k, v in value.items()}
        if kind is list and lists:
            return [copy(v) for v in value]
        if non_finite_as_text and isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, Mapping):
            return {key(k): copy(v) for k, v in value.items()}
        if isinstance(value, sequences):
            return [copy(v) for v in cast("Iterable[Any]", value)]
        return other(value)

    return copy(value)


def via_json(value: Any) -> Any:
    """A copy through ``json`` (unknown values as text; keys as JSON writes them)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def via_json_finite(value: Any) -> Any:
    """``plain(via_json(value), key=SAME, other=SAME)`` in one pass of the C codec: the
    copy through ``json``, its NaN and infinities as text (``'nan'``, ``'inf'``,
    ``'-inf'``: ``str`` of the float; ``json`` writes no other non-finite number)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return json.loads(text, parse_constant=_constant_as_text)


def _constant_as_text(name: str) -> str:
    return str(float(name))  # NaN, Infinity, -Infinity: as plain() writes the float


def brief(value: Any, limit: int = 120) -> str:
    """``value`` as compact JSON for a message, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def few(names: Sequence[str], limit: int) -> str:
    """The first ``limit`` names, then how many more there are."""
    shown = ", ".join(names[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")
