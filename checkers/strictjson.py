"""Strict JSON reading: a duplicate key or NaN/Infinity is an error, never a silent choice.

``json.loads`` keeps the last of two equal keys and accepts NaN; evidence, signatures and
reports must be read exactly as written, so both raise ``ValueError`` here. A checker
version may opt in to reading NaN/Infinity (``constants=True``: real runners write them in
fields such as durations); it must then refuse them wherever its verdict reads a number.
The way out is one rule too: ``canonical`` text and ``plain`` data.

This is the one JSON reader of the project: bundler reads every JSON document with it and
so do the checkers (which never import bundler: it lives in ``checkers/``). What a
checker version read before it became the reader stays an option of it: ``constants``
and ``huge_numbers`` read NaN, infinities and ``1e999`` as ``json.loads`` does, and
``max_depth=None`` sets no depth of its own (Python's ``RecursionError`` is raised as it
is), so that the version's messages and verdicts never change.
"""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from itertools import accumulate
from typing import Any

from checkers.arithmetic import left_sum


class DuplicateKey(ValueError):
    """One object gives a key twice: which value counts would be a silent choice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # built in C; a key given twice leaves it shorter than the pairs
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


# A number too large for a float (``1e999``) is read by ``json.loads`` as an infinity:
# refused like ``Infinity`` itself, by reading floats through ``_finite`` when the text may
# hold one. A literal of at least 1e309 has an exponent of three digits or more, or 210
# digits before its exponent (digits + exponent >= 309 with an exponent <= 99); the text
# is searched for either with every digit read as 0 (a few passes in C: ``1e100`` and
# ``3e000`` alike make ``_finite`` read the floats, which only costs time).
_ZEROED = bytes.maketrans(b"123456789E", b"000000000e")
_LONG_DIGITS = b"0" * 210


def _may_hold_huge(text: str | bytes) -> bool:
    """Whether ``text`` may hold a number that a float reads as infinity."""
    if isinstance(text, bytes) and b"\0" in text:
        return True  # UTF-16 or UTF-32, which json.loads also reads: every float checked
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    zeroed = raw.translate(_ZEROED)
    return b"e000" in zeroed or b"e+000" in zeroed or _LONG_DIGITS in zeroed


def _finite(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise ValueError(f"number {literal[:40]} is too large (it would be read as infinity)")
    return value


# ``loads``'s decoder of a text it reads as it is (NaN and infinities only with
# ``constants``), made once: a line of JSON Lines is read by it
_DECODERS = {
    constants: json.JSONDecoder(
        object_pairs_hook=_no_duplicates, parse_constant=None if constants else _no_constant
    )
    for constants in (False, True)
}
_UNREAD = object()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while JSON values are built, as it was after.

    JSON values hold no cycle, so the collector, which runs about every 700 new containers
    and over all of them each time they grow by a quarter, finds nothing to free in them:
    it cost about a third of reading a file of small records."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


# Deeper documents are refused by name (Python's own limit, about 1,000, would raise
# RecursionError somewhere later: in a checker, a report, a renderer).
MAX_DEPTH = 200


def loads(
    text: str | bytes,
    max_depth: int | None = MAX_DEPTH,
    max_values: int | None = None,
    *,
    constants: bool = False,
    huge_numbers: bool = False,
) -> Any:
    """Parse one JSON document strictly, at most ``max_depth`` deep and, if given, of at
    most ``max_values`` values; NaN and infinities (a ``1e999`` too) only with
    ``constants``. ``huge_numbers`` reads ``1e999`` as infinity as ``json.loads`` does
    (evidence only: checker versions decide on what they were given). ``max_depth=None``
    sets no depth of its own: a document deeper than Python's recursion allows raises
    ``RecursionError`` as ``json.loads`` does. Raises ValueError naming what was wrong
    (``DuplicateKey`` for a key given twice in one object)."""
    opening = _opening(text)  # each count scans the whole text: counted once
    over = max_values is not None and opening + _commas(text) + 1 > max_values  # bound()
    if over and count_values(text) > (max_values or 0):
        raise ValueError(f"holds more than {max_values} values")
    check = not (constants or huge_numbers) and _may_hold_huge(text)
    try:
        with _collector_paused():
            value = json.loads(
                text,
                object_pairs_hook=_no_duplicates,
                parse_constant=None if constants else _no_constant,
                parse_float=_finite if check else None,
            )
    except RecursionError:
        if max_depth is None:
            raise
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    if max_depth is None:
        if over:
            _check_size(value, None, max_values)
        return value
    if (opening > max_depth and _deepest(text) >= max_depth) or over:
        _check_size(value, max_depth, max_values)
    return value


# a byte outside the strings of a JSON text -> how it moves the nesting depth
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_NOT_BRACKET = bytes(b for b in range(256) if not _STEP[b])
_NOT_BRACKET_OR_QUOTE = _NOT_BRACKET.replace(b'"', b"")


def _deepest(text: str | bytes) -> int:
    """How many containers are open at most at once in a well-formed JSON text (a value
    inside the deepest one is one level deeper), found in C without walking the parsed
    value: only a text that may be too deep is then walked exactly. With the escaped
    backslashes and quotes taken out, every quote left opens or closes a string.

    Read a chunk at a time (memory bounded whatever the text's size): a chunk never ends
    inside a run of backslashes, and whether it starts inside a string is carried over."""
    if isinstance(text, bytes) and b"\0" in text:
        return len(text)  # UTF-16 or UTF-32, which json.loads also reads: walked exactly
    backslash: Any = b"\\" if isinstance(text, bytes) else "\\"
    run: Any = _run(type(text))
    data: Any = text
    deepest: int | None = None
    level, inside, start, size = 0, False, 0, len(data)
    while start < size:
        end = next_start = start + _CHUNK
        chunk = data[start:end]
        if chunk[-1:] == backslash and end < size:  # the chunk stops before the run
            end -= len(chunk) - len(chunk.rstrip(backslash))
            chunk = chunk[: end - start]
            next_start = run.match(data, end).end()
            if (next_start - end) % 2 and data[next_start : next_start + 1] in ('"', b'"'):
                next_start += 1  # an escaped quote, taken out with its backslash
        chunk = chunk if isinstance(chunk, bytes) else chunk.encode("utf-8", "surrogatepass")
        chunk = chunk.replace(b"\\\\", b"").replace(b'\\"', b"")
        # two quotes side by side enclose nothing, inside a string or between two: taking
        # them out keeps every other quote's side, and leaves few strings to split at
        parts = chunk.translate(None, _NOT_BRACKET_OR_QUOTE).replace(b'""', b"").split(b'"')
        steps = list(map(_STEP.__getitem__, b"".join(parts[inside::2])))
        if steps:
            top = max(
                accumulate(steps, initial=level) if deepest is not None else accumulate(steps)
            )
            deepest = top if deepest is None else max(deepest, top)
            level += steps.count(1) - steps.count(-1)  # every step is one of them
        inside ^= len(parts) % 2 == 0
        start = next_start
    return 0 if deepest is None else deepest


@cache
def _run(kind: type) -> re.Pattern[Any]:
    """A run of backslashes in a text of ``kind`` (compiled when a deep text first needs it)."""
    return re.compile(b"\\\\*" if kind is bytes else r"\\*")


def _check_size(value: Any, max_depth: int | None, max_values: int | None) -> None:
    """The exact depth and number of values, walked without recursion."""
    stack = [(value, 1)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if max_depth is not None and depth > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels")
        if max_values is not None and count > max_values:
            raise ValueError(f"holds more than {max_values} values")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def loads_lines(
    text: str,
    max_values: int | None = None,
    *,
    constants: bool = False,
    huge_numbers: bool = False,
    newline_only: bool = False,
) -> list[tuple[int, Any]]:
    """JSON Lines: ``(line number, value)`` for each non-blank line. A bad line raises
    ValueError whose message starts with ``LINE:``; ``max_values`` bounds all lines.
    Lines end at every Unicode line break, or with ``newline_only`` at ``\n`` alone (a
    ``\r`` before it dropped), as JSON Lines specifies."""
    # each line holds a value more than its commas and brackets say (``bound`` counts one
    # for the first value of the text only): the lines are counted too
    over = max_values is not None and bound(text) + _lines_bound(text, newline_only) > max_values
    filled = _filled_lines(text, newline_only) if over else 0
    if max_values is not None and over and count_values(text, filled) > max_values:
        # refused before a list of the lines (as large as the text) is built
        raise ValueError(f"1: the lines hold more than {max_values} values")
    lines = text.split("\n") if newline_only else text.splitlines()
    if newline_only:
        lines = [line.removesuffix("\r") for line in lines]
    with _collector_paused():
        records = _read_lines(lines, constants, huge_numbers)
    if max_values is not None and over:
        try:
            _check_size([value for _, value in records], MAX_DEPTH + 1, max_values + 1)
        except ValueError:
            raise ValueError(f"1: the lines hold more than {max_values} values") from None
    return records


def _read_lines(lines: list[str], constants: bool, huge_numbers: bool) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each line that is not blank, read by ``loads``'s rules.

    One decoder reads every line (``json.loads`` with hooks builds one a call): a line it
    reads as ``loads`` would (no huge number to look for, too few brackets to be too deep)
    is read by it; any other line, and any line it refuses, by ``loads`` itself, which
    gives the value or the error."""
    records = []
    decode = _DECODERS[constants].decode
    look_for_huge = not (constants or huge_numbers)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        value: Any = _UNREAD
        try:
            if not (look_for_huge and _may_hold_huge(line)) and _opening(line) <= MAX_DEPTH:
                value = decode(line)
        except (ValueError, RecursionError):
            value = _UNREAD
        if value is _UNREAD:
            try:
                value = loads(line, constants=constants, huge_numbers=huge_numbers)
            except ValueError as exc:
                raise ValueError(f"{number}: not a JSON value: {exc}") from None
        records.append((number, value))
    return records


@cache
def _line_patterns(newline_only: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The rest of a line from a character that is not blank, and a line break: of
    str.splitlines, or ``\\n`` alone (every line break is blank: one match a line that
    strip() leaves non-empty). Compiled when a large text first needs them."""
    if newline_only:
        return re.compile(r"\S()[^\n]*"), re.compile("\n")
    return (
        re.compile(r"\S()[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*"),
        re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"),
    )


def _lines_bound(text: str, newline_only: bool) -> int:
    """At least the number of lines of ``text`` (counted in C)."""
    if newline_only:
        return text.count("\n") + 1
    return left_sum(map(text.count, "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")) + 1


def _filled_lines(text: str, newline_only: bool) -> int:
    """How many lines of ``text`` are not blank, as ``loads_lines`` splits them, counted
    a chunk of lines at a time (memory bounded whatever the text's size)."""
    filled, breaks = _line_patterns(newline_only)
    count = start = 0
    while start < len(text):
        found = breaks.search(text, start + _CHUNK)
        end = found.end() if found else len(text)
        count += len(filled.findall(text, start, end))
        start = end
    return count


def _opening(text: str | bytes) -> int:
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def bound(text: str | bytes) -> int:
    """At least the number of values in a JSON text: each one opens a container, follows
    a comma, or is the first (counted in C, so nearly free)."""
    return _opening(text) + _commas(text) + 1


def _commas(text: str | bytes) -> int:
    return text.count(b",") if isinstance(text, bytes) else text.count(",")


# a JSON string (escapes included; one left open runs to the end, so no start is tried
# twice: linear time whatever the text) and an empty container, found in C; a run of text
# and whole strings (a string still open where the run must stop is left out), a
# container opened last with only blanks after it, and blanks
_COUNTING_PATTERNS = (
    (r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL),
    (r"\[\s*\]|\{\s*\}", 0),
    (r'(?:[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL),
    (r"([\[{])\s*\Z", re.DOTALL),
    (r"\s*", re.DOTALL),
)


@cache
def _counting(kind: type) -> tuple[Any, ...]:
    """Per type of text (compiled when a large text first needs them): string, empty
    container, closed run, open last, blanks, and a blank string."""
    if kind is bytes:
        return (*(re.compile(p.encode(), f) for p, f in _COUNTING_PATTERNS), b'""')
    return (*(re.compile(p, f) for p, f in _COUNTING_PATTERNS), '""')


_CLOSERS = {"[": "]", "{": "}", b"[": b"]", b"{": b"}"}

# how much of a text ``count_values`` blanks at once: its memory, whatever the text's size
_CHUNK = 1 << 16


def count_values(text: str | bytes, documents: int = 1) -> int:
    """The number of values in ``documents`` well-formed JSON texts (as ``_check_size``
    counts them: object keys are not values), without parsing: with every string
    blanked, each value but a document's first follows a comma or opens a non-empty
    container. Lets a caller refuse a document before the parser builds it.

    The text is blanked a chunk at a time, in memory bounded whatever its size: a chunk
    ends outside every string (before a string that runs past it) and an empty container
    cut in two by its end is counted across it, so the counts add up to the whole's."""
    string, empty, closed, open_last, blanks, blanked = _counting(
        bytes if isinstance(text, bytes) else str
    )
    data: Any = text
    count, start, size = documents, 0, len(data)
    while start < size:
        end = start + _CHUNK
        blank = string.sub(blanked, data[start:end])
        if end < size and blank[-2:] == blanked:  # the last string may run on past the chunk
            end = closed.match(data, start, end).end()
            if end == start:  # one string longer than a chunk: it holds no value
                start = string.match(data, start).end()
                continue
        # blank is now that of data[start:end], or that and one string's ("") after it
        count += bound(blank) - 1 - len(empty.findall(blank))
        start = end
        opened = open_last.search(blank)
        if opened:
            start = blanks.match(data, start).end()
            if data[start : start + 1] == _CLOSERS[opened.group(1)]:
                count -= 1  # an empty container across the chunk's end
    return count


def canonical(value: Any, *, allow_nan: bool = True) -> str:
    """One text for equal data whatever its key order (keys sorted, no escapes); values
    JSON has no type for (a date, a path) as their ``str``. Raises ValueError for a
    non-finite number when not ``allow_nan``, and for a value that contains itself."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str, allow_nan=allow_nan)


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (what reports carry: dicts, lists, strings, finite
    numbers, booleans, None); dates and the like become text. Raises ValueError for
    what JSON cannot carry."""
    text = canonical(value, allow_nan=False)
    with _collector_paused():  # a copy of a parsed input would be walked as it grows
        return json.loads(text)
