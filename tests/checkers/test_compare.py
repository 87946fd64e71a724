"""The comparison of structured documents finds what deepdiff found, word for word.

structured-equal, config change and trajectory models first compared documents with
deepdiff (``DeepDiff(view="tree")``); the comparison now walks the documents itself,
and every checker version must keep its decisions and reason messages. ``_deepdiff``
below is the old comparison, kept here as the reference.
"""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.api import Reason
from checkers.compare import _KINDS, compare_documents, format_path
from checkers.plain import brief


def _deepdiff(actual: Any, expected: Any, *, deepest: bool = False) -> list[Reason]:
    """compare_documents as it was (commit 743d49a): deepdiff over the whole documents."""
    from deepdiff import DeepDiff

    diff = DeepDiff(
        expected,
        actual,
        view="tree",
        verbose_level=2,
        threshold_to_diff_deeper=0.0 if deepest else 0.33,
    )
    reasons: list[tuple[str, str, Reason]] = []
    for kind, levels in diff.items():
        code = _KINDS.get(kind)
        for level in levels:
            path = format_path(level.path(output_format="list"))
            if code is None:
                code = "content.changed"
            if code == "content.added":
                msg = f"{path}: present in actual ({brief(level.t2)}) but not expected"
                details = {"path": path, "actual": level.t2}
            elif code == "content.removed":
                msg = f"{path}: expected ({brief(level.t1)}) but missing from actual"
                details = {"path": path, "expected": level.t1}
            elif code == "content.type_changed":
                msg = (
                    f"{path}: expected {type(level.t1).__name__} {brief(level.t1)}, "
                    f"observed {type(level.t2).__name__} {brief(level.t2)}"
                )
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            else:
                msg = f"{path}: expected {brief(level.t1)}, observed {brief(level.t2)}"
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            reasons.append((path, code, Reason(code, msg, details)))
    reasons.sort(key=lambda item: (item[0], item[1]))
    return [reason for _, _, reason in reasons]


def _words(reasons: list[Reason]) -> list[tuple[str, str, str]]:
    return [(r.code, r.message, repr(r.details)) for r in reasons]


def _both(actual: Any, expected: Any, deepest: bool) -> tuple[Any, Any]:
    """What the comparison and the reference say (or raise: a mapping of text and number
    keys cannot be shown as sorted JSON, then and now)."""
    said: list[Any] = []
    for compare in (compare_documents, _deepdiff):
        try:
            said.append(_words(compare(actual, expected, deepest=deepest)))
        except TypeError:
            # which of two such mappings was described first (and so the order of the
            # types in the message) followed deepdiff's report kinds, a set of text:
            # with some PYTHONHASHSEED values one order, with others the other
            said.append("TypeError")
    return said[0], said[1]


# few keys and values, so that two drawn documents share and differ in many places;
# 1, 1.0 and true (equal in Python, different here), -0.0, NaN, text with a line break
_SCALAR = st.sampled_from(
    [0, 1, 2, 1.0, 0.0, -0.0, 2.5, math.nan, True, False, None, "a", "b", "1", "x\ny", ""]
)
_KEY = st.sampled_from(["a", "b", "c", "d", "e", "1", "not id", "x.y"])


def _documents(scalar: st.SearchStrategy[Any], key: st.SearchStrategy[Any]) -> Any:
    return st.recursive(
        scalar,
        lambda inner: st.lists(inner, max_size=6) | st.dictionaries(key, inner, max_size=6),
        max_leaves=24,
    )


_JSON = _documents(_SCALAR, _KEY)
# what PyYAML builds beyond JSON: dates, bytes, keys that are not text
_YAML = _documents(
    _SCALAR | st.sampled_from([datetime.date(2026, 1, 2), datetime.date(2026, 1, 3), b"a", b"b"]),
    _KEY | st.sampled_from([1, 2, True, None, 1.5]),
)


def _mutated(draw: Any, value: Any) -> Any:
    """``value`` with a few random edits: a changed, added, removed or moved item."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        mapping = dict(value)
        key = draw(st.sampled_from(sorted(mapping, key=repr)))
        choice = draw(st.integers(0, 2))
        if choice == 0:
            del mapping[key]
        elif choice == 1:
            mapping[key] = _mutated(draw, mapping[key])
        else:
            mapping[draw(_KEY)] = draw(_JSON)
        return mapping
    if isinstance(value, list) and value and draw(st.booleans()):
        out = list(value)
        index = draw(st.integers(0, len(out) - 1))
        choice = draw(st.integers(0, 3))
        if choice == 0:
            del out[index]
        elif choice == 1:
            out[index] = _mutated(draw, out[index])
        elif choice == 2:
            out.insert(index, draw(_JSON))
        else:
            out.append(out.pop(index))
        return out
    return draw(_JSON) if draw(st.booleans()) else value


@st.composite
def _pairs(draw: Any, documents: Any) -> tuple[Any, Any]:
    first = draw(documents)
    second = _mutated(draw, first) if draw(st.booleans()) else draw(documents)
    return first, second


@settings(max_examples=1500)
@given(_pairs(_JSON), st.booleans())
def test_differences_of_json_documents_are_worded_as_deepdiff_worded_them(
    pair: tuple[Any, Any], deepest: bool
) -> None:
    new, old = _both(*pair, deepest)
    assert new == old


@settings(max_examples=400)
@given(_pairs(_YAML), st.booleans())
def test_differences_of_yaml_values_are_worded_as_deepdiff_worded_them(
    pair: tuple[Any, Any], deepest: bool
) -> None:
    new, old = _both(*pair, deepest)
    assert new == old


def test_one_value_differing_among_many_rows_is_the_one_difference() -> None:
    rows = [{"id": i, "score": i / 2, "tags": ["a", str(i)]} for i in range(2000)]
    changed = json.loads(json.dumps(rows))
    changed[1234]["score"] = -1.0
    reasons = compare_documents({"rows": changed}, {"rows": rows})
    assert _words(reasons) == _words(_deepdiff({"rows": changed}, {"rows": rows}))
    assert [r.message for r in reasons] == ["rows[1234].score: expected 617.0, observed -1.0"]


def test_numbers_equal_in_python_but_of_another_type_differ() -> None:
    assert [r.code for r in compare_documents({"a": [1, {"b": 1}]}, {"a": [1, {"b": 1.0}]})] == [
        "content.type_changed"
    ]
    assert [r.code for r in compare_documents({"a": True}, {"a": 1})] == ["content.type_changed"]


def _plain_before(value: Any, **options: Any) -> Any:
    """checkers.plain.plain as it was (commit 743d49a), the reference for its fast path."""
    non_finite_as_text = options.get("non_finite_as_text", True)
    key = options.get("key", str)
    other = options.get("other", str)
    sequences = options.get("sequences", (list, tuple))
    if non_finite_as_text and isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {key(k): _plain_before(v, **options) for k, v in value.items()}
    if isinstance(value, sequences):
        return [_plain_before(v, **options) for v in value]
    return other(value)


_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "non_finite_as_text": st.booleans(),
        "key": st.sampled_from([str, repr]),
        "other": st.sampled_from([str, repr]),
        "sequences": st.sampled_from([(list, tuple), (list,), (tuple,)]),
    },
)


@settings(max_examples=500)
@given(_YAML | st.tuples(_YAML, _YAML) | st.sampled_from([math.inf, -math.inf]), _OPTIONS)
def test_plain_copies_as_it_did(value: Any, options: dict[str, Any]) -> None:
    from checkers.plain import plain

    assert repr(plain(value, **options)) == repr(_plain_before(value, **options))
