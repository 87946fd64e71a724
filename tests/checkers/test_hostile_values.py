"""Hostile inputs never crash an @2 checker: every value of a valid input replaced by
random JSON (NaN and Infinity included, as the lenient readers allow) gives a pass, a
fail or an input error, never ``checker.raised`` (a traceback)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.run.runner import run_checker
from tests.checkers.checker_calls import full_params, get

NOISE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", " ", "\u00a0", "failed: x", "passed", "2026-13-40T99:00:00Z"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)

SEEDS: dict[str, dict[str, Any]] = {
    "state-unchanged@2": {},
    "no-write-attempts@2": {},
    "review-matches-submission@2": {},
    "fault-report@2": {
        "want": "defect_detected",
        "assertion_failures": True,
        "expected_failures": {"none": 0},
        "failure_causes": {},
    },
    "trial-stats@2": {"k": 2, "claimed": {"pass_at_k": 0.5, "tasks": 2}},
    "classification-metrics@2": {"claimed": {"m": {"f1": 0.5, "n": 2}}},
    "trajectory-skeleton@2": {},
}


def paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*here, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            out += paths(item, (*here, index))
    return out


def mutable(value: Any) -> list[tuple[Any, ...]]:
    """Every place of a value a file could hold; in JSON Lines the runner's own
    ``(line number, record)`` pairs are not the file's, only the records are."""
    jsonl = isinstance(value, list) and value and all(isinstance(v, tuple) for v in value)
    if not jsonl:
        return paths(value)
    return [(i, 1, *rest) for i, (_, record) in enumerate(value) for rest in paths(record)]


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, tuple):
        items = list(value)
        items[head] = replaced(items[head], tuple(rest), new)
        return tuple(items)
    copied = copy.copy(value)
    copied[head] = replaced(value[head], tuple(rest), new)
    return copied


@pytest.mark.parametrize("key", sorted(SEEDS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_mutated_input_never_raises(key: str, data: st.DataObject) -> None:
    check = get(key)
    params = full_params(check, **SEEDS[key])
    assert check.counterexample is not None
    inputs = dict(check.counterexample(params) or {})
    assert inputs
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        role = data.draw(st.sampled_from(sorted(inputs)))
        where = data.draw(st.sampled_from(mutable(inputs[role])))
        inputs[role] = replaced(inputs[role], where, data.draw(NOISE))
    verdict = run_checker(check, inputs, SEEDS[key])
    assert verdict.status in ("pass", "fail", "error")
    assert "checker.raised" not in verdict.codes, verdict.message
    assert "checker.bad_verdict" not in verdict.codes, verdict.message
