"""The counterexamples of the checker versions added for the seed leftovers (issue 30,
item 7): for the params accepted, they make the checker fail for one of its own reasons;
where they give none, no input could (checked by hand on the params that admit none)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from v2_support import full_params, get, run

from bundler.run.runner import vacuity
from checkers.fault_injection.report import JUDGEMENTS
from checkers.fault_injection.trials import FIGURES_V2

CASES: list[tuple[str, dict[str, Any]]] = [
    ("structured-equal@2", {}),
    *(("fault-report@3", {"want": want}) for want in JUDGEMENTS),
    (
        "fault-report@3",
        {
            "want": "defect_detected",
            "assertion_failures": True,
            "expected_failures": {"none": 0, "missing-record": 4},
            "planned": 10,
        },
    ),
    ("trial-stats@3", {"k": 3, "claimed": {"pass_at_k": 0.8}}),
    ("trial-stats@3", {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}),
    (
        "trial-stats@3",
        {
            "k": 1,
            "claimed": {"tasks": 2},
            "fields": {"task": "task_id", "sample": "", "outcome": "passed", "config": ""},
        },
    ),
    (
        "trial-stats@3",
        {
            "k": 2,
            "claimed": {"pass_hat_k": 0.5},
            "fields": {"task": "task_id", "sample": "sample_index", "outcome": "result"},
            "first_sample": 0,
        },
    ),
    ("trial-stats@3", {"k": 1000, "claimed": {"environment_failures": 0}}),
    ("trial-stats@3", {"k": 2, "claimed": {"tasks_excluded": 0}}),
]


@pytest.mark.parametrize(("key", "params"), CASES, ids=lambda v: str(v)[:50])
def test_counterexample_makes_the_checker_fail_with_its_own_reason(
    key: str, params: dict[str, Any]
) -> None:
    check = get(key)
    assert check.counterexample is not None
    inputs = check.counterexample(full_params(check, **params))
    assert inputs is not None, f"{key}: no counterexample for {params}"
    verdict = run(check, inputs, **params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(check.reasons)
    assert vacuity(check, params) is None


def test_trial_stats_3_counterexample_contradicts_the_claim_not_the_config() -> None:
    # @2's counterexample fails only on two configurations, so with no config field it
    # had none; @3's contradicts a claimed figure, config or not
    params = {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}
    old = vacuity(get("trial-stats@2"), params)
    assert old is not None and old.codes == ("params.vacuous",)
    inputs = get("trial-stats@3").counterexample(full_params("trial-stats@3", **params))
    assert inputs is not None
    assert run("trial-stats@3", inputs, **params).codes == ("stats.mismatch",)


def test_a_claim_no_trial_set_can_contradict_is_refused_as_vacuous() -> None:
    # k = 1 with environment failures counted as failures: every task holds one counted
    # sample, so none is ever left out and "no task left out" shows nothing
    params = {"k": 1, "claimed": {"tasks_excluded": 0}, "environment_failures": "count_as_failure"}
    refused = vacuity(get("trial-stats@3"), params)
    assert refused is not None and refused.codes == ("params.vacuous",)
    assert vacuity(get("trial-stats@3"), {**params, "k": 2}) is None


@pytest.mark.parametrize("k", [0, 1001])
def test_trial_stats_3_k_outside_its_range_has_no_counterexample_and_is_invalid(k: int) -> None:
    params = {"k": k, "claimed": {"tasks": 1}}
    assert get("trial-stats@3").counterexample(full_params("trial-stats@3", **params)) is None
    assert run("trial-stats@3", {"trials": []}, **params).codes == ("params.invalid",)


FRACTIONS = [name for name, (count, _) in FIGURES_V2.items() if not count]
COUNTS = [name for name, (count, _) in FIGURES_V2.items() if count]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fractions=st.dictionaries(st.sampled_from(FRACTIONS), st.floats(0, 1, allow_nan=False)),
    counts=st.dictionaries(st.sampled_from(COUNTS), st.integers(0, 12)),
    tolerance=st.floats(0, 0.0499, allow_nan=False),
    k=st.integers(1, 4),
    rule=st.sampled_from(["exclude", "count_as_failure"]),
    config=st.sampled_from(["config", "", "cfg"]),
)
def test_trial_stats_3_counterexample_contradicts_any_claimed_fraction(
    fractions: dict[str, float],
    counts: dict[str, int],
    tolerance: float,
    k: int,
    rule: str,
    config: str,
) -> None:
    claimed = {**fractions, **counts}
    if not claimed:
        return
    params = {
        "k": k,
        "claimed": claimed,
        "tolerance": tolerance,
        "environment_failures": rule,
        "fields": {"config": config},
    }
    check = get("trial-stats@3")
    inputs = check.counterexample(full_params(check, **params))
    refused = vacuity(check, params)
    if inputs is None:
        # only a claim made of counts no small trial set moves can have none
        assert not fractions
        assert refused is not None and refused.codes == ("params.vacuous",)
        return
    verdict = run(check, inputs, **params)
    assert verdict.codes == ("stats.mismatch",), verdict.message
    # each stated figure must be able to fail on its own (issue 30 item 3): a claimed
    # fraction always can; a count no small trial set moves (tasks_excluded: 0 with
    # count_as_failure) makes the params vacuous, naming that count
    if refused is not None:
        assert refused.codes == ("params.vacuous",)
        assert any(f"claimed.{name}" in refused.message for name in counts), refused.message
