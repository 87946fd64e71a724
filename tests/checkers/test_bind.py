"""``Checker.bind``: the one place a case's params are checked and their defaults filled,
for the runner, the build and the claim rules alike."""

from __future__ import annotations

from typing import Any

import pytest

import checkers
from bundler.format.claims import check_of, effective_params
from bundler.format.manifest import Case
from bundler.run.runner import run_checker
from checkers.api import MAX_TOLERANCE


def _metrics() -> Any:
    found = checkers.get("classification-metrics@1")
    assert found is not None
    return found


def _case(params: dict[str, Any]) -> Case:
    return Case(
        id="c",
        checker="classification-metrics@1",
        inputs={"predictions": "p.yaml"},
        params=params,
        expect="pass",
    )


def test_binding_fills_the_declared_defaults_under_the_given_params() -> None:
    found = _metrics()
    bound = found.bind({"claimed": {"accuracy": 1.0}})
    assert bound.refused is None
    defaults = {p.name: p.default for p in found.params if not p.required}
    assert dict(bound.params) == {**defaults, "claimed": {"accuracy": 1.0}}


def test_the_claim_rules_take_the_bound_params_so_defaults_written_out_are_one_check() -> None:
    found = _metrics()
    omitted = _case({"claimed": {"accuracy": 1.0}})
    written = _case(dict(found.bind(omitted.params).params))
    assert effective_params(omitted) == dict(found.bind(omitted.params).params)
    assert check_of(omitted) == check_of(written)


def test_wrong_params_are_refused_with_the_runners_codes_and_never_reach_the_checker() -> None:
    found = _metrics()
    unknown = found.bind({"claimed": {"accuracy": 1.0}, "nope": 1})
    assert unknown.refused is not None and unknown.refused.codes == ("params.invalid",)
    assert "classification-metrics@1 has no param 'nope'" in unknown.refused.message
    wide = found.bind({"claimed": {"accuracy": 1.0}, "tolerance": MAX_TOLERANCE})
    assert wide.refused is not None and wide.refused.codes == ("params.out_of_range",)
    assert wide.refused.message == (
        "classification-metrics@1: param 'tolerance' is 0.05, outside its range: "
        "a number, at least 0, below 0.05"
    )
    assert run_checker(found, {}, wide.given) == wide.refused
    with pytest.raises(ValueError, match="params refused"):
        wide({})
