"""state-unchanged@2 makes its reasons' details plain data in one copy through json
(``via_json_finite``) where it took two (``via_json``, then ``plain``): on many seeded
observations, values JSON cannot hold among them (NaN, infinities, dates, sets, tuples,
keys that are not text), its verdict is the one the two copies gave, to the type.

Since issue 33 both versions copy no value JSON builds (``json_native``: it is its own
copy) and render of each value only what the message shows; their verdicts, as the
checker returns them and as the report carries them, are the ones the copies gave."""

from __future__ import annotations

import datetime
import math
import random
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.run.runner import run_checker
from checkers import plain as plain_module
from checkers.api import CheckerInputError, Reason, Verdict
from checkers.compare import compare_documents
from checkers.config_change import state
from checkers.config_change.model import plain_verdict
from checkers.plain import SAME, brief, json_native, plain, via_json, via_json_finite
from tests.checkers.checker_calls import get

SCALARS: list[Any] = [
    "a",
    "",
    "é\u2028",
    0,
    1,
    -1,
    10**30,
    0.0,
    -0.0,
    1.5,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    None,
    datetime.date(2026, 1, 2),
    datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
]
KEYS: list[Any] = ["k", "", 1, 2.5, True, None, math.nan, datetime.date(2026, 1, 2)]


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return rng.choice(SCALARS)
    items = [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind < 0.6:
        return items
    if kind < 0.7:
        return tuple(items)
    if kind < 0.75:
        return {rng.choice(["x", "y", 3])}
    return {rng.choice(KEYS): item for item in items}


def two_copies(monkeypatch: pytest.MonkeyPatch) -> Any:
    """@2 as it was: the reasons' details copied by ``via_json``, then the whole verdict
    through ``plain()`` (``plain_verdict``; on the rest of the details a second time,
    which changes nothing)."""

    def run(inputs: Any, params: dict[str, Any]) -> Verdict:
        with monkeypatch.context() as patch:
            patch.setattr(state, "via_json_finite", via_json)
            verdict = state.state_unchanged_v2.function(inputs, params)
        return plain_verdict(verdict)

    return run


def outcome(run: Any, inputs: Any, params: dict[str, Any]) -> str:
    try:
        return repr(run(inputs, params))
    except CheckerInputError as exc:
        return f"raised {exc.code}: {exc.message}"
    except TypeError as exc:  # a key json cannot write (a date): checker.raised, both ways
        return f"raised {exc}"


@pytest.mark.parametrize("seed", range(8))
def test_one_copy_through_json_gives_the_verdict_two_copies_gave(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_way = two_copies(monkeypatch)
    rng = random.Random(seed)
    failed = 0
    for _ in range(300):
        names = [f"f{i}" for i in range(rng.randint(1, 3))]
        before = {name: value(rng) for name in names}
        after = {name: value(rng) if rng.random() < 0.5 else before[name] for name in names}
        inputs = {
            "before": {"observed_at": "2026-01-01T00:00:00+00:00", "fields": before},
            "after": {"observed_at": "2026-01-01T01:30:00+00:00", "fields": after},
        }
        params = {"fields": names if rng.random() < 0.5 else []}
        new = outcome(state.state_unchanged_v2.function, inputs, params)
        old = outcome(old_way, inputs, params)
        assert new == old
        failed += "status='fail'" in new
    assert failed > 20  # the reasons, where the copies differ, were compared


def test_via_json_finite_is_via_json_then_plain() -> None:
    rng = random.Random(0)
    copied = 0
    for _ in range(2000):
        item = value(rng)
        assert outcome(lambda v, _: via_json_finite(v), item, {}) == outcome(
            lambda v, _: plain(via_json(v), key=SAME, other=SAME), item, {}
        )
        copied += not outcome(lambda v, _: via_json_finite(v), item, {}).startswith("raised")
    assert copied > 1000


# -- issue 33: values as JSON builds them are their own copy, and a message renders only
# what it shows. ``_copied_changes`` is the reasons as they were made before (every value
# copied, both briefs rendered whole), the reference.


def _copied_changes(
    names: list[str], bf: Mapping[str, Any], af: Mapping[str, Any], copy: Callable[[Any], Any]
) -> list[Reason]:
    reasons: list[Reason] = []
    for name in names:
        differences = compare_documents(af[name], bf[name], deepest=True)
        if differences:
            reasons.append(
                Reason(
                    "state.changed",
                    f"{name} changed: before {brief(bf[name])}, after {brief(af[name])}",
                    copy(
                        {
                            "field": name,
                            "before": bf[name],
                            "after": af[name],
                            "differences": [r.message for r in differences],
                        }
                    ),
                )
            )
    return reasons


_TEXT = st.text(st.sampled_from(["a", "é", '"', "\\", "\n", "\u2028", "\ud800", "0"]), max_size=6)
_NUMBERS = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 1e308]),
    st.integers(0, 3).map(lambda n: 10**4400 + n),  # more digits than json writes
)
_NATIVE_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    _TEXT,
    st.integers(-5, 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)
# what JSON builds, with long lists and text (so that a brief is cut), and what YAML or a
# caller may add: NaN and infinities, huge ints, dates, tuples, sets, keys not text
_NATIVE = st.recursive(
    _NATIVE_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=40), st.dictionaries(_TEXT, inner, max_size=8)
    ),
    max_leaves=120,
)
_ANY = st.recursive(
    st.one_of(_NATIVE_LEAVES, _NUMBERS, st.sampled_from(SCALARS)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.tuples(inner, inner),
        st.dictionaries(
            st.one_of(_TEXT, st.sampled_from(KEYS), st.integers(0, 12)), inner, max_size=4
        ),
        st.frozensets(st.integers(0, 3)).map(set),
    ),
    max_leaves=40,
)
_VALUES = st.one_of(_NATIVE, _ANY)


def _outcome(run: Any, inputs: Any, params: dict[str, Any]) -> str:
    try:
        return repr(run(inputs, params))
    except Exception as exc:  # an input error, or what the runner calls checker.raised
        return f"raised {type(exc).__name__}: {exc}"


def _observations(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {
        "before": {"observed_at": "2026-01-01T00:00:00+00:00", "fields": before},
        "after": {"observed_at": "2026-01-01T01:30:00+00:00", "fields": after},
    }


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["f0", "f1", "f2"]), _VALUES, min_size=1),
    st.dictionaries(st.sampled_from(["f0", "f1", "f2"]), _VALUES),
    st.sampled_from(["state-unchanged@1", "state-unchanged@2"]),
    st.booleans(),
)
def test_changed_fields_are_reported_as_the_copies_reported_them(
    before: dict[str, Any], changes: dict[str, Any], key: str, declared: bool
) -> None:
    after = {**before, **{k: v for k, v in changes.items() if k in before}}
    inputs = _observations(before, after)
    params = {"fields": sorted(before) if declared else []}
    found = get(key)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "_changes", _copied_changes)
        old = _outcome(found.function, inputs, params)
        old_policed = run_checker(found, inputs, params)
    assert _outcome(found.function, inputs, params) == old  # the checker's own verdict
    assert repr(run_checker(found, inputs, params)) == repr(old_policed)  # as reported


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_a_json_native_value_is_its_own_copy_and_renders_as_json_dumps(value: Any) -> None:
    if not json_native(value):
        return
    assert repr(via_json(value)) == repr(value)
    assert repr(via_json_finite(value)) == repr(value)
    for limit in (5, 40, 120, 10_000):
        assert brief(value, limit, native=True) == brief(value, limit)


def test_what_json_cannot_copy_unchanged_is_not_native() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    doubling: list[Any] = []
    doubling += [doubling, doubling]
    deep: Any = 1
    for _ in range(150):
        deep = [deep]
    refused = [
        math.nan,
        [1.5, math.inf],
        {1: "a"},
        {"a": {None: 1}},
        (1, 2),
        {"a": {1, 2}},
        [datetime.date(2026, 1, 2)],
        10**4400,
        cycle,
        doubling,
        deep,
        MappingProxyType({"a": 1}),
        [True, "é", {"k": [None, 0.5, -(10**4400)]}],
    ]
    assert [json_native(value) for value in refused] == [False] * len(refused)
    assert json_native([True, "é", {"k": [None, 0.5, -(10**20)], "": {}}, []])


def test_a_report_of_two_large_values_renders_neither_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [{"id": i, "name": f"row-{i}", "tags": ["a", str(i)]} for i in range(2000)]
    changed = [*rows[:1000], {**rows[1000], "name": "changed"}, *rows[1001:]]
    inputs = _observations({"config": {"rows": rows}}, {"config": {"rows": changed}})
    written: list[int] = []
    dumps = plain_module.json.dumps

    def counted(value: Any, **options: Any) -> str:
        text = dumps(value, **options)
        written.append(len(text))
        return str(text)

    monkeypatch.setattr(plain_module.json, "dumps", counted)
    verdict = state.state_unchanged_v2.function(inputs, {"fields": []})
    (reason,) = verdict.reasons
    assert reason.details["before"] is inputs["before"]["fields"]["config"]  # not copied
    assert sum(written) < 2_000  # the briefs: no whole value written (before: 4 of 80,000)
    assert reason.message.startswith('config changed: before {"rows": [{"id": 0, "name"')
