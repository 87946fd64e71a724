"""Full-content comparison of structured documents (seed 000, "content").

Shared by the families that compare documents: structured-equal, config change and
trajectory models.

"The API accepted the change" says nothing about the rest of the config: the check
that catches a silently deleted rule compares the *whole* candidate with an
independently prepared expected candidate. Formatting and mapping key order carry no
meaning and are ignored; list order can carry meaning (rule precedence) and is kept.

What is a difference, and how it is worded, was first decided by deepdiff 8 (``DeepDiff``
with ``view="tree"``), and every checker version keeps that decision. The walk below
finds the same differences in time linear in the documents: two equal documents are
recognised by ``==`` and their JSON text (which tells 1, 1.0 and true apart, as deepdiff
does) without importing anything; a difference is looked for only inside the parts that
differ. Values JSON and PyYAML's plain reading do not build (dates, sets, bytes, mappings
with keys other than text) are handed to deepdiff itself, which is imported only then.
"""

from __future__ import annotations

import difflib
import json
import marshal
from collections.abc import Iterable
from itertools import chain, compress, count, zip_longest
from operator import eq, not_
from typing import Any

from .api import Reason
from .plain import brief

# deepdiff report kinds -> our stable codes
_KINDS = {
    "dictionary_item_added": "content.added",
    "iterable_item_added": "content.added",
    "attribute_added": "content.added",
    "dictionary_item_removed": "content.removed",
    "iterable_item_removed": "content.removed",
    "attribute_removed": "content.removed",
    "values_changed": "content.changed",
    "type_changes": "content.type_changed",
}

# One difference: deepdiff's kind, the path as a list of keys and indexes, the expected
# value and the actual one (_ABSENT on the side where it is missing).
_Found = tuple[str, list[Any], Any, Any]
_ABSENT: Any = object()
_SCALARS = (str, int, float, bool, type(None))
_PLAIN = {*_SCALARS, dict, list}
_TEXT = json.JSONEncoder(sort_keys=True, check_circular=False, allow_nan=True).encode


def format_path(parts: list[Any]) -> str:
    """``['decisions', 1, 'name']`` -> ``decisions[1].name``; the root is ``$``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "$"


def compare_documents(actual: Any, expected: Any, *, deepest: bool = False) -> list[Reason]:
    """Every difference between two loaded documents, as reasons in path order.

    ``expected`` is the reference: "added" means present in ``actual`` only.
    By default (structured-equal@1) a mapping that shares few keys with its
    counterpart is reported as one changed value; ``deepest=True`` names every
    differing path instead (the same documents are equal either way).
    """
    if _same(expected, actual):
        return []
    # 0.33 is deepdiff 8's default, written out so structured-equal@1's reason paths do
    # not move with a deepdiff release; 0 always diffs deeper.
    found: list[_Found] = []
    _Walk(0.0 if deepest else 0.33, found).diff(expected, actual, [])
    reasons = [
        (format_path(parts), *_describe(kind, format_path(parts), t1, t2))
        for kind, parts, t1, t2 in found
    ]
    reasons.sort(key=lambda item: (item[0], item[1]))
    return [reason for _, _, reason in reasons]


def _describe(kind: str, path: str, t1: Any, t2: Any) -> tuple[str, Reason]:
    code = _KINDS.get(kind, "content.changed")  # a kind we do not map: still a difference
    if code == "content.added":
        msg = f"{path}: present in actual ({brief(t2)}) but not expected"
        details = {"path": path, "actual": t2}
    elif code == "content.removed":
        msg = f"{path}: expected ({brief(t1)}) but missing from actual"
        details = {"path": path, "expected": t1}
    elif code == "content.type_changed":
        msg = (
            f"{path}: expected {type(t1).__name__} {brief(t1)}, "
            f"observed {type(t2).__name__} {brief(t2)}"
        )
        details = {"path": path, "expected": t1, "actual": t2}
    else:
        msg = f"{path}: expected {brief(t1)}, observed {brief(t2)}"
        details = {"path": path, "expected": t1, "actual": t2}
    return code, Reason(code, msg, details)


def _same(t1: Any, t2: Any) -> bool:
    """Whether two values are equal with every type alike (1, 1.0 and true differ), as
    far as ``==`` and their serialised forms can tell; False when they cannot."""
    return t1 is t2 or (t1 == t2 and _alike(t1, t2))


def _alike(t1: Any, t2: Any) -> bool:
    """Whether two values that are ``==`` have the same types throughout. ``marshal``
    writes each type its own way, in C (its text may differ for alike values: mapping
    keys in another order, an object shared in one of them); then sorted JSON, which
    tells 1, 1.0 and true apart too. False when neither can tell."""
    try:
        if marshal.dumps(t1) == marshal.dumps(t2):
            return True
    except ValueError:  # a type marshal does not write (a date), or too deep
        pass
    try:
        return bool(_TEXT(t1) == _TEXT(t2))
    except (TypeError, ValueError, RecursionError):
        return False


def _differing(xs: list[Any], ys: list[Any]) -> Iterable[int]:
    """The positions at which two lists of one length may differ: those not ``==``, when
    the rest are alike (found in C); every position otherwise."""
    equal = list(map(eq, xs, ys))
    if _alike(list(compress(xs, equal)), list(compress(ys, equal))):
        return compress(count(), map(not_, equal))
    return range(len(xs))


class _Walk:
    """deepdiff's comparison (its defaults, ``threshold_to_diff_deeper`` as given) of
    JSON-like values, visiting only what differs."""

    def __init__(self, threshold: float, found: list[_Found]) -> None:
        self.threshold = threshold
        self.found = found

    def diff(self, t1: Any, t2: Any, parts: list[Any], out: list[_Found] | None = None) -> None:
        out = self.found if out is None else out
        if t1 is t2:
            return
        kind = type(t1)
        if kind is not type(t2):
            out.append(("type_changes", parts, t1, t2))
        elif kind is dict:
            if all(type(k) is str for k in t1) and all(type(k) is str for k in t2):
                self._dict(t1, t2, parts, out)
            else:
                self._deepdiff(t1, t2, parts, out)
        elif kind is list:
            self._list(t1, t2, parts, out)
        elif kind in _SCALARS:
            if t1 != t2:
                out.append(("values_changed", parts, t1, t2))
        else:
            self._deepdiff(t1, t2, parts, out)

    def _child(self, t1: Any, t2: Any, parts: list[Any], out: list[_Found]) -> None:
        if type(t1) in (dict, list) and _same(t1, t2):
            return
        self.diff(t1, t2, parts, out)

    def _dict(
        self, t1: dict[str, Any], t2: dict[str, Any], parts: list[Any], out: list[_Found]
    ) -> None:
        common = [key for key in t2 if key in t1]
        if self.threshold:
            union = len(t1) + len(t2) - len(common)
            if union > 1 and len(common) / union < self.threshold:
                out.append(("values_changed", parts, t1, t2))
                return
        for key in t2:
            if key not in t1:
                out.append(("dictionary_item_added", [*parts, key], _ABSENT, t2[key]))
        for key in t1:
            if key not in t2:
                out.append(("dictionary_item_removed", [*parts, key], t1[key], _ABSENT))
        values1 = list(map(t1.__getitem__, common))
        values2 = list(map(t2.__getitem__, common))
        for n in _differing(values1, values2):
            self._child(values1[n], values2[n], [*parts, common[n]], out)

    def _list(self, t1: list[Any], t2: list[Any], parts: list[Any], out: list[_Found]) -> None:
        kinds = set(map(type, chain(t1, t2)))
        if not kinds <= _PLAIN:
            self._deepdiff(t1, t2, parts, out)
            return
        if dict in kinds or list in kinds:
            self._pairs(t1, t2, parts, 0, 0, len(t1), len(t2), out)
            return
        # deepdiff aligns lists of plain values with difflib, and keeps the alignment
        # only when it names fewer differences than comparing item by item
        by_difflib: list[_Found] = []
        matcher = difflib.SequenceMatcher(None, t1, t2, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "replace":
                self._pairs(t1, t2, parts, i1, j1, i2, j2, by_difflib)
            elif tag == "delete":
                for i in range(i1, i2):
                    by_difflib.append(("iterable_item_removed", [*parts, i], t1[i], _ABSENT))
            elif tag == "insert":
                for j in range(j1, j2):
                    by_difflib.append(("iterable_item_added", [*parts, j], _ABSENT, t2[j]))
        if len(by_difflib) > 1:
            by_position: list[_Found] = []
            self._pairs(t1, t2, parts, 0, 0, len(t1), len(t2), by_position)
            if len(by_difflib) >= len(by_position):
                out.extend(by_position)
                return
        out.extend(_added_and_removed_as_changed(by_difflib))

    def _pairs(
        self,
        t1: list[Any],
        t2: list[Any],
        parts: list[Any],
        i1: int,
        j1: int,
        i2: int,
        j2: int,
        out: list[_Found],
    ) -> None:
        xs, ys = t1[i1:i2], t2[j1:j2]
        if i1 == j1:  # by position: no item can have moved; look only where they differ
            both = min(len(xs), len(ys))
            for n in _differing(xs[:both], ys[:both]):
                self._child(xs[n], ys[n], [*parts, n + i1], out)
            xs, ys, i1, j1 = xs[both:], ys[both:], i1 + both, j1 + both
        for n, (x, y) in enumerate(zip_longest(xs, ys, fillvalue=_ABSENT)):
            i, j = n + i1, n + j1
            if y is _ABSENT:
                out.append(("iterable_item_removed", [*parts, i], x, _ABSENT))
            elif x is _ABSENT:
                out.append(("iterable_item_added", [*parts, j], _ABSENT, y))
            elif i != j and x == y:
                out.append(("iterable_item_moved", [*parts, i], x, y))
            else:
                self._child(x, y, [*parts, i], out)

    def _deepdiff(self, t1: Any, t2: Any, parts: list[Any], out: list[_Found]) -> None:
        """What deepdiff says of values the walk does not know, their paths under ``parts``."""
        from deepdiff import DeepDiff  # imported here: only values JSON cannot hold need it

        diff = DeepDiff(
            t1, t2, view="tree", verbose_level=2, threshold_to_diff_deeper=self.threshold
        )
        for kind, levels in diff.items():
            for level in levels:
                out.append((kind, [*parts, *level.path(output_format="list")], level.t1, level.t2))


def _added_and_removed_as_changed(found: list[_Found]) -> list[_Found]:
    """deepdiff's last step: an item removed and an item added at one index of a list are
    one changed value (the removed item's before, the added item's after)."""
    added = {tuple(parts): t2 for kind, parts, _, t2 in found if kind == "iterable_item_added"}
    removed = {tuple(parts): t1 for kind, parts, t1, _ in found if kind == "iterable_item_removed"}
    both = added.keys() & removed.keys()
    if not both:
        return found
    kept = [
        item
        for item in found
        if not (
            item[0] in ("iterable_item_added", "iterable_item_removed") and tuple(item[1]) in both
        )
    ]
    return kept + [("values_changed", list(path), removed[path], added[path]) for path in both]
