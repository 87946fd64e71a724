"""JSON Schema patterns run in time linear in the string (issue 42, item 4, JSON Schema):
call-args-schema@3 runs a tool schema's ``pattern``, ``patternProperties`` and the
``additionalProperties`` they decide on RE2, and refuses what is outside the subset as
not re-run; inside it, its verdicts are @2's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker
from checkers import linear
from checkers.api import Verdict
from tests.checkers.test_linear_patterns import patterns
from tests.helpers import refuse_backtracking


def calls(version: int, schema: dict[str, Any], arguments: Any) -> Verdict:
    found = checkers.get(f"call-args-schema@{version}")
    assert found is not None
    record = {"call_id": "c1", "stage": "model_output", "tool": "t", "arguments": arguments}
    tools = {"tools": [{"name": "t", "input_schema": schema}]}
    return run_checker(found, {"tools": tools, "calls": [(1, record)]}, {})


def _no_backtracking(monkeypatch: pytest.MonkeyPatch) -> None:
    from jsonschema import _keywords, _utils

    backtracking = refuse_backtracking(monkeypatch, _keywords.re)
    assert _utils.re.search is backtracking  # the same module


def test_out_of_subset_schema_pattern_is_not_rerun_under_call_args_schema_v3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "(?=a)a"}}}
    assert calls(2, schema, {"x": "b"}).codes == ("args.invalid",)
    _no_backtracking(monkeypatch)
    verdict = calls(3, schema, {"x": "b"})
    assert verdict.status == "error" and verdict.codes == ("pattern.not_rerun",)
    assert "'(?=a)a' is not re-run" in verdict.message and "group syntax" in verdict.message


def test_backtracking_schema_pattern_runs_on_re2_under_call_args_schema_v3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(a+)+$"}}}
    _no_backtracking(monkeypatch)
    verdict = calls(3, schema, {"x": "a" * 5000 + "b"})
    assert verdict.codes == ("args.invalid",)
    assert calls(3, schema, {"x": "a" * 5000}).status == "pass"


def test_out_of_subset_pattern_property_is_not_rerun_under_call_args_schema_v3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {"type": "object", "patternProperties": {r"(x)\1": {"type": "integer"}}}
    _no_backtracking(monkeypatch)
    assert calls(3, schema, {"xx": 1}).codes == ("pattern.not_rerun",)


def test_pattern_properties_read_through_unevaluated_properties_are_not_rerun() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "patternProperties": {"^a": {"type": "integer"}},
        "unevaluatedProperties": False,
    }
    verdict = calls(3, schema, {"ab": 1})
    assert verdict.codes == ("pattern.not_rerun",)
    assert "unevaluatedProperties" in verdict.message


def test_string_outside_the_subset_is_not_rerun_under_call_args_schema_v3() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": r"^\w+$"}}}
    verdict = calls(3, schema, {"x": "café"})
    assert verdict.codes == ("pattern.not_rerun",) and "not ASCII" in verdict.message


@settings(max_examples=300, deadline=None)
@given(
    pattern=patterns(),
    value=st.text(alphabet="abAB9 .-", max_size=8),
    name=st.text(alphabet="abAB9 .-", max_size=6),
    additional=st.sampled_from([None, False, {"type": "integer"}]),
)
def test_call_args_schema_v3_gives_v2_verdicts_for_every_in_subset_pattern(
    pattern: str, value: str, name: str, additional: Any
) -> None:
    try:
        compiled = linear.compile(pattern)
        compiled.search(value), compiled.search(name)
    except linear.NotInSubset:
        return
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"x": {"type": "string", "pattern": pattern}},
        "patternProperties": {pattern: {"type": "string"}},
    }
    if additional is not None:
        schema["additionalProperties"] = additional
    arguments = {"x": value, name: value}
    old, new = calls(2, schema, arguments), calls(3, schema, arguments)
    assert (new.status, new.codes, new.message, new.reasons) == (
        old.status,
        old.codes,
        old.message,
        old.reasons,
    ), (pattern, arguments)
