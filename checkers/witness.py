"""A line a regex matches, found by reading the regex: how a checker shows that a
pattern in its params can match something.

``example`` walks the parsed pattern (``re._parser``), builds a few candidate strings
(every branch, the shortest and one longer repetition, a few characters per class) and
returns the first one the compiled regex really finds in one line. Lookarounds, anchors
and back-references are not modelled, only checked: a pattern whose every candidate
fails is reported as matching nothing we could find, which is the safe answer for a
check that must be able to fail. Candidates are bounded in number and length.
"""

from __future__ import annotations

import itertools
import re
import re._constants as sre  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import linear

_CANDIDATES = 400  # candidate strings tried per pattern
_LONGEST = 1 << 16  # characters in one candidate
_POOL = ("a", "Z", "0", " ", "-", "_", "/", ".", "é", "\t")
_CATEGORY = {
    sre.CATEGORY_DIGIT: "0",
    sre.CATEGORY_NOT_DIGIT: "a",
    sre.CATEGORY_SPACE: " ",
    sre.CATEGORY_NOT_SPACE: "a",
    sre.CATEGORY_WORD: "a",
    sre.CATEGORY_NOT_WORD: "-",
}


def example(pattern: str, flags: int = 0, linear_only: bool = False) -> str | None:
    """A string without a line break in which ``pattern`` finds a match, or None when
    none of the candidates is one (the pattern may match nothing at all).
    ``linear_only``: candidates are tried on RE2 only (``checkers/linear.py``), and a
    pattern outside the subset raises ``linear.not_rerun``."""
    return next(examples(pattern, flags, linear_only), None)


def examples(pattern: str, flags: int = 0, linear_only: bool = False) -> Iterator[str]:
    """Every candidate without a line break in which ``pattern`` finds a match."""
    try:
        rx = re.compile(pattern, flags)
        parsed = sre_parse.parse(pattern, flags)
    except (re.error, RecursionError, OverflowError):
        return
    found: Callable[[str], object] = rx.search
    if linear_only:
        found = _linear_search(linear.require(pattern, bool(flags & re.IGNORECASE)))
    try:
        for text in itertools.islice(_sequence(list(parsed)), _CANDIDATES):
            if "\n" not in text and found(text):
                yield text
    except RecursionError:
        return


def _linear_search(compiled: linear.Linear) -> Callable[[str], bool]:
    """RE2's search, a candidate on which the engines could differ counting as no match."""

    def found(text: str) -> bool:
        try:
            return compiled.search(text) is not None
        except linear.NotInSubset:
            return False

    return found


def _sequence(items: Sequence[tuple[Any, Any]]) -> Iterator[str]:
    if not items:
        yield ""
        return
    run = 0  # a run of literals is one head, so a long literal does not recurse deeply
    while run < len(items) and items[run][0] is sre.LITERAL:
        run += 1
    if run:
        heads, rest = ["".join(chr(av) for _, av in items[:run])], items[run:]
    else:
        heads, rest = list(itertools.islice(_item(*items[0]), 8)), items[1:]
    tails = list(itertools.islice(_sequence(rest), 8))
    for head in heads:
        for tail in tails:
            if len(head) + len(tail) <= _LONGEST:
                yield head + tail


def _item(op: Any, av: Any) -> Iterator[str]:
    if op is sre.LITERAL:
        yield chr(av)
    elif op is sre.NOT_LITERAL:
        yield from (c for c in _POOL if ord(c) != av)
    elif op is sre.ANY:
        yield from _POOL[:3]
    elif op is sre.IN:
        yield from _in(av)
    elif op is sre.BRANCH:
        for branch in av[1]:
            yield from itertools.islice(_sequence(list(branch)), 8)
    elif op is sre.SUBPATTERN:
        yield from _sequence(list(av[-1]))
    elif op is sre.ATOMIC_GROUP:
        yield from _sequence(list(av))
    elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = av
        counts = [low] if high == low else [low, low + 1]
        for part in itertools.islice(_sequence(list(body)), 4):
            for count in counts:
                if len(part) * count <= _LONGEST:
                    yield part * count
    else:  # anchors, lookarounds, back-references: nothing added, the regex decides
        yield ""


def _in(members: Sequence[tuple[Any, Any]]) -> Iterator[str]:
    if members and members[0][0] is sre.NEGATE:
        yield from _POOL  # the compiled regex tells which of them the set excludes
        return
    for op, av in members:
        if op is sre.LITERAL:
            yield chr(av)
        elif op is sre.RANGE:
            yield chr(av[0])
            yield chr(av[1])
        elif op is sre.CATEGORY:
            yield _CATEGORY.get(av, "a")
