"""A claimed figure of counts is compared at the decimals it is stated with, never within a
tolerance (issue 41, item 7: the sibling of lm-eval-metric@2's rule in the seed checkers).

classification-metrics@1/@2 and trial-stats@1..@3 took any tolerance below 0.05, so a
claimed 0.90 held where the counts give 0.86 (advisories RB-2026-0046 to RB-2026-0050);
classification-metrics@3 and trial-stats@4 take the claim at its stated `decimals`.
"""

from __future__ import annotations

from typing import Any

import pytest

import checkers
from checkers.api import Checker, CheckerInputError, Verdict
from checkers.precision import agrees, half_unit, stated_decimals


def _checker(key: str) -> Checker:
    found = checkers.get(key)
    assert found is not None, key
    return found


def _run(key: str, inputs: dict[str, Any], params: dict[str, Any]) -> Verdict:
    bound = _checker(key).bind({k: v for k, v in params.items() if v is not None})
    assert bound.refused is None, bound.refused
    return bound(inputs)


def table(right: int, n: int) -> dict[str, Any]:
    """n labelled runs, alternately failed and passed; the detector right on the first ``right``."""
    items = []
    for i in range(n):
        truth = "fail" if i % 2 == 0 else "pass"
        said = truth if i < right else ("pass" if truth == "fail" else "fail")
        items.append({"id": f"run-{i}", "truth": truth, "predictions": {"detector": said}})
    return {"predictions": {"items": items}}


def trials(successes: int, n: int) -> dict[str, Any]:
    """One trial of each of n tasks, the first ``successes`` succeeded (one configuration)."""
    rows = [
        {"task": f"t{i}", "trial": 1, "outcome": "success" if i < successes else "failure"}
        for i in range(n)
    ]
    return {"trials": [(line, {**row, "config": {}}) for line, row in enumerate(rows, 1)]}


# -- classification-metrics ---------------------------------------------------------------


@pytest.mark.parametrize("key", ["classification-metrics@1", "classification-metrics@2"])
def test_tolerance_0049_makes_accuracy_090_of_a_table_giving_086_supported_before_v3(
    key: str,
) -> None:
    params = {"claimed": {"detector": {"accuracy": 0.90}}, "tolerance": 0.049}
    assert _run(key, table(43, 50), params).status == "pass"  # the advised weakness
    assert _run(key, table(42, 50), params).status == "fail"  # 0.06 away: beyond it


def test_accuracy_090_of_a_table_giving_086_is_a_mismatch_under_v3() -> None:
    verdict = _run(
        "classification-metrics@3",
        table(43, 50),
        {"claimed": {"detector": {"accuracy": 0.90}}, "decimals": 2},
    )
    assert verdict.status == "fail" and verdict.codes == ("metrics.mismatch",)
    (reason,) = verdict.reasons
    assert reason.message == (
        "detector accuracy: claimed 0.9 (at 2 decimals), re-derived 0.86 from 43 right of 50 items"
    )
    assert reason.details["recomputed"] == 0.86 and reason.details["decimals"] == 2


def test_classification_metrics_v3_takes_no_tolerance() -> None:
    bound = _checker("classification-metrics@3").bind(
        {"claimed": {"detector": {"accuracy": 0.90}}, "tolerance": 0.049}
    )
    assert bound.refused is not None and bound.refused.codes == ("params.invalid",)
    assert "no param 'tolerance'" in bound.refused.message


@pytest.mark.parametrize(
    ("claimed", "decimals", "status"),
    [
        (0.86, 2, "pass"),
        (0.9, 1, "pass"),  # 0.86 stated with one decimal is 0.9
        (0.8, 1, "fail"),
        (1.0, 0, "pass"),  # 0.86 stated with no decimal is 1
        (0.86, None, "pass"),  # exact at float precision
        (0.860, 3, "pass"),
        (0.861, 3, "fail"),  # within a tolerance of 0.0005 would be 0.8605 at most
        (0.865, 3, "fail"),
    ],
)
def test_classification_v3_accepts_only_the_figure_rounded_to_its_stated_decimals(
    claimed: float, decimals: int | None, status: str
) -> None:
    params = {"claimed": {"detector": {"accuracy": claimed}}, "decimals": decimals}
    assert _run("classification-metrics@3", table(43, 50), params).status == status


def test_classification_v3_without_decimals_wants_the_exact_figure() -> None:
    third = table(1, 3)  # 1 right of 3
    exact = {"claimed": {"detector": {"accuracy": 1 / 3}}}
    assert _run("classification-metrics@3", third, exact).status == "pass"
    rounded = {"claimed": {"detector": {"accuracy": 0.333}}}
    verdict = _run("classification-metrics@3", third, rounded)
    assert verdict.status == "fail"
    assert "claimed 0.333 (at full precision), re-derived 0.3333333333333333" in verdict.message
    stated = {"claimed": {"detector": {"accuracy": 0.333}}, "decimals": 3}
    assert _run("classification-metrics@3", third, stated).status == "pass"


def test_classification_v3_refuses_a_claim_with_more_decimals_than_it_states() -> None:
    bound = _checker("classification-metrics@3").bind(
        {"claimed": {"detector": {"accuracy": 0.8649}}, "decimals": 2}
    )
    with pytest.raises(CheckerInputError, match="more than the 2 decimals"):
        bound(table(43, 50))


def test_classification_v3_keeps_v2s_f1_and_undefined_figures() -> None:
    # no positive item, one false alarm: F1 0 (as @2), recall undefined
    items = {"items": [{"id": "a", "truth": "pass", "predictions": {"m": "fail"}}]}
    params = {"claimed": {"m": {"f1": 0.0, "recall": "undefined", "tp": 0}}}
    assert _run("classification-metrics@3", {"predictions": items}, params).status == "pass"
    assert _run("classification-metrics@2", {"predictions": items}, params).status == "pass"


# -- trial-stats -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["trial-stats@1", "trial-stats@2", "trial-stats@3"])
def test_tolerance_0049_makes_pass_at_1_090_of_trials_giving_086_supported_before_v4(
    key: str,
) -> None:
    params = {"k": 1, "claimed": {"pass_at_k": 0.90}, "tolerance": 0.049}
    assert _run(key, trials(43, 50), params).status == "pass"  # the advised weakness
    assert _run(key, trials(42, 50), params).status == "fail"


def test_pass_at_1_090_of_trials_giving_086_is_a_mismatch_under_v4() -> None:
    verdict = _run(
        "trial-stats@4",
        trials(43, 50),
        {"k": 1, "claimed": {"pass_at_k": 0.90, "success_rate": 0.9, "tasks": 50}, "decimals": 2},
    )
    assert verdict.status == "fail" and set(verdict.codes) == {"stats.mismatch"}
    messages = sorted(r.message for r in verdict.reasons)
    assert messages == [
        "pass_at_k: claimed 0.9 (at 2 decimals), re-derived 0.86, the mean of 50 tasks' estimates",
        "success_rate: claimed 0.9 (at 2 decimals), re-derived 0.86 from 43 of 50 samples",
    ]
    assert verdict.details["decimals"] == 2


def test_trial_stats_v4_takes_no_tolerance() -> None:
    bound = _checker("trial-stats@4").bind(
        {"k": 1, "claimed": {"pass_at_k": 0.90}, "tolerance": 0.049}
    )
    assert bound.refused is not None and bound.refused.codes == ("params.invalid",)
    assert "no param 'tolerance'" in bound.refused.message


@pytest.mark.parametrize(
    ("claimed", "decimals", "status"),
    [
        (0.86, 2, "pass"),
        (0.9, 1, "pass"),
        (0.8, 1, "fail"),
        (0.86, None, "pass"),
        (0.861, 3, "fail"),
    ],
)
def test_trial_stats_v4_accepts_only_the_figure_rounded_to_its_stated_decimals(
    claimed: float, decimals: int | None, status: str
) -> None:
    params = {"k": 1, "claimed": {"pass_at_k": claimed, "tasks": 50}, "decimals": decimals}
    assert _run("trial-stats@4", trials(43, 50), params).status == status


def test_trial_stats_v4_pass_at_k_unrounded_needs_its_decimals() -> None:
    # 3 tasks, k 2 of n 3 samples, 1 success each: pass@2 = 1 - C(2,2)/C(3,2) = 2/3
    rows = [
        (line, {"task": f"t{t}", "trial": s, "outcome": s == 1, "config": {}})
        for line, (t, s) in enumerate(((t, s) for t in range(3) for s in (1, 2, 3)), 1)
    ]
    inputs = {"trials": rows}
    params: dict[str, Any] = {"k": 2, "claimed": {"pass_at_k": 0.667}}
    assert _run("trial-stats@4", inputs, params).status == "fail"
    assert _run("trial-stats@4", inputs, {**params, "decimals": 3}).status == "pass"
    assert (
        _run(
            "trial-stats@4", inputs, {**params, "claimed": {"pass_at_k": 0.67}, "decimals": 3}
        ).status
        == "fail"
    )


def test_trial_stats_v4_refuses_a_claim_with_more_decimals_than_it_states() -> None:
    bound = _checker("trial-stats@4").bind(
        {"k": 1, "claimed": {"pass_at_k": 0.8649}, "decimals": 2}
    )
    with pytest.raises(CheckerInputError, match="more than the 2 decimals"):
        bound(trials(43, 50))


# -- the shared rule -------------------------------------------------------------------------


def test_a_stated_figure_agrees_within_half_a_unit_of_its_last_decimal_only() -> None:
    assert half_unit(None) == 0.0 and half_unit(2) == 0.005
    assert agrees(0.86, 0.855, 2) and agrees(0.86, 0.8649, 2)
    assert not agrees(0.86, 0.8651, 2) and not agrees(0.86, 0.8549, 2)
    assert agrees(0.5, 0.5, None) and not agrees(0.333, 1 / 3, None)
    with pytest.raises(CheckerInputError):
        stated_decimals(13, 0.5, "x")
    with pytest.raises(CheckerInputError):
        stated_decimals(True, 0.5, "x")
