"""Plain data for verdicts, and values shown in messages.

A verdict's details must be JSON data, while loaded evidence may hold what YAML builds
(dates, sets, non-string keys, ``.nan``). Each checker version made its copy in its own
way when it was written, and what a version decides never changes, so the ways are
kept, as options of one function (``plain``) and the older JSON round trip
(``via_json``) that config-change @1 uses (``via_json_finite``: the two in one pass).
``json_native`` tells a value that is already its own copy (what JSON builds), so that a
large one is neither copied nor rendered whole for a message (``brief(native=True)``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import is_
from typing import Any, cast

from .arithmetic import left_sum


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


def brief(value: Any, limit: int = 120, *, native: bool = False) -> str:
    """``value`` as compact JSON for a message, cut to ``limit`` characters.

    ``native``: the caller knows ``json_native(value)``; then only the characters shown
    are rendered (the same text: such a value has nothing ``json.dumps`` could refuse
    beyond the cut), so a message about a large value costs what it shows."""
    if native:
        return _brief_native(value, limit)
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _brief_native(value: Any, limit: int) -> str:
    pieces: list[str] = []
    size = 0
    for piece in _pieces(value):
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            return "".join(pieces)[: limit - 3] + "..."
    return "".join(pieces)


def _pieces(value: Any) -> Iterator[str]:
    """``json.dumps(value, ensure_ascii=False, sort_keys=True)`` of a JSON-native value,
    in pieces, so that a reader can stop early."""
    kind = type(value)
    if kind is dict and value:
        before = "{"
        for key in sorted(value):
            yield before + json.dumps(key, ensure_ascii=False) + ": "
            yield from _pieces(value[key])
            before = ", "
        yield "}"
    elif kind is list and value:
        before = "["
        for item in value:
            yield before
            yield from _pieces(item)
            before = ", "
        yield "]"
    else:
        yield json.dumps(value, ensure_ascii=False)


_NATIVE = frozenset({dict, list, str, int, float, bool, type(None)})
_STR = frozenset({str})
# Deeper values are not called native: json.dumps recurses once a level, and a deep
# value must meet Python's recursion limit where it did before (the inputs' readers
# refuse 200 levels, so this is about values built some other way).
_NATIVE_DEPTH = 100
# Ints json.dumps writes whatever sys.set_int_max_str_digits says (640 digits at least;
# 2 ** 2124 < 10 ** 640): a larger int is not called native.
_INT_BITS = 2124
# After this many items, a container met twice on one level (a cycle, or one value shared)
# is looked for: a value the readers build has none, and checking costs as much as the
# rest; checked beyond it, a cyclic value stops at the size of what it holds.
_SHARED_FROM = 1_000_000


def json_native(value: Any) -> bool:
    """Whether ``value`` is built only of what ``json.loads`` builds: dicts with text keys,
    lists, text, ints of fewer than 640 digits, finite floats, booleans and None, at most
    100 levels deep (and, past a million items, no container twice on one level).

    Such a value is its own copy through json (``via_json``, ``via_json_finite``: the
    same types, values and key order), and ``json.dumps`` cannot fail on it. Checked a
    level at a time by C loops (``map``, ``compress``, ``set``), not a Python walk: a
    JSON document of 10 MB takes less than ``json.dumps`` takes to write it."""
    level, items = [value], 0
    for _ in range(_NATIVE_DEPTH):
        kinds = list(map(type, level))
        seen = set(kinds)
        if not seen <= _NATIVE:
            return False
        if float in seen and not math.isfinite(left_sum(_of(float, level, kinds))):
            return False  # a NaN or an infinity (or a sum too large: then not called native)
        if int in seen and max(map(int.bit_length, _of(int, level, kinds))) > _INT_BITS:
            return False
        dicts = list(_of(dict, level, kinds)) if dict in seen else []
        lists = list(_of(list, level, kinds)) if list in seen else []
        if dicts and not set(map(type, chain.from_iterable(dicts))) <= _STR:
            return False
        items += len(level)
        if items > _SHARED_FROM and len(set(map(id, chain(dicts, lists)))) < len(dicts) + len(
            lists
        ):
            return False  # a container met twice: shared, or a cycle
        level = [*chain.from_iterable(map(dict.values, dicts)), *chain.from_iterable(lists)]
        if not level:
            return True
    return False


def _of(kind: type, level: list[Any], kinds: list[type]) -> Iterator[Any]:
    """The items of ``level`` whose type is ``kind`` (``kinds``: their types)."""
    return compress(level, map(is_, kinds, repeat(kind)))


def few(names: Sequence[str], limit: int) -> str:
    """The first ``limit`` names, then how many more there are."""
    shown = ", ".join(names[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")
