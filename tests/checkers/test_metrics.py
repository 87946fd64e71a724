"""classification-metrics@1: figures recomputed from labelled predictions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker
from checkers.metrics.model import Confusion

METRICS = checkers.get("classification-metrics@1")
assert METRICS is not None

# truth, checker, self-assessment; "fail" (a failed run) is the positive class
ROWS = [
    ("pass", "pass", "pass"),
    ("pass", "pass", "pass"),
    ("pass", "pass", "fail"),
    ("fail", "fail", "pass"),
    ("fail", "fail", "pass"),
    ("fail", "fail", "fail"),
    ("pass", "pass", "pass"),
    ("fail", "fail", "pass"),
    ("pass", "pass", "pass"),
    ("fail", "fail", "fail"),
]


def table(rows: list[tuple[str, str, str]] = ROWS) -> dict[str, Any]:
    return {
        "items": [
            {
                "id": f"t{i:02d}",
                "truth": truth,
                "predictions": {"checker": ours, "self-assessment": theirs},
            }
            for i, (truth, ours, theirs) in enumerate(rows, start=1)
        ]
    }


def run(predictions: Any, **params: Any) -> Any:
    return run_checker(METRICS, {"predictions": predictions}, params)


def test_recomputes_the_hand_counted_confusion_matrix_and_figures() -> None:
    verdict = run(
        table(),
        claimed={
            "checker": {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0},
            "self-assessment": {
                "accuracy": 0.6,
                "precision": 0.667,
                "recall": 0.4,
                "f1": 0.5,
                "tp": 2,
                "fp": 1,
                "fn": 3,
                "tn": 4,
                "n": 10,
            },
        },
    )
    assert verdict.status == "pass", verdict.message
    assert "all 13 claimed figure(s) match" in verdict.message
    ours = verdict.details["methods"]["self-assessment"]
    assert (ours["tp"], ours["fp"], ours["fn"], ours["tn"]) == (2, 1, 3, 4)
    assert ours["figures"]["f1"] == {"value": 0.5, "numerator": 4, "denominator": 8}
    assert ours["figures"]["precision"]["denominator"] == 3


def test_each_misstated_figure_is_its_own_mismatch() -> None:
    # the seed's figures, from its own data set, claimed for this table
    verdict = run(
        table(), claimed={"self-assessment": {"accuracy": 0.822, "f1": 0.698, "recall": 0.4}}
    )
    assert verdict.status == "fail"
    assert verdict.codes == ("metrics.mismatch",)
    assert sorted(r.details["figure"] for r in verdict.reasons) == ["accuracy", "f1"]
    accuracy = next(r for r in verdict.reasons if r.details["figure"] == "accuracy")
    assert accuracy.message.startswith("self-assessment accuracy: claimed 0.822, recomputed 6/10")


def test_tolerance_accepts_rounding_and_nothing_more() -> None:
    assert run(table(), claimed={"self-assessment": {"precision": 0.667}}).status == "pass"
    assert run(table(), claimed={"self-assessment": {"precision": 0.66}}).status == "fail"
    assert (
        run(table(), claimed={"self-assessment": {"precision": 0.66}}, tolerance=0.01).status
        == "pass"
    )


def test_counts_are_compared_exactly() -> None:
    verdict = run(table(), claimed={"self-assessment": {"tp": 3}})
    assert verdict.codes == ("metrics.mismatch",)
    assert verdict.reasons[0].message == "self-assessment tp: claimed 3, recomputed 2"


def test_figures_with_no_positive_items_are_undefined_never_zero_or_one() -> None:
    only_passes = table([r for r in ROWS if r[0] == "pass"])
    fine = run(
        only_passes,
        claimed={
            "checker": {"precision": "undefined", "recall": "undefined", "f1": "undefined"},
            "self-assessment": {"precision": 0.0, "recall": "undefined", "f1": "undefined"},
        },
    )
    assert fine.status == "pass", fine.message
    recall = fine.details["methods"]["checker"]["figures"]["recall"]
    assert recall["value"] is None and recall["denominator"] == 0
    assert "no item is positive" in recall["undefined"]
    for claimed in (0.0, 1.0):
        wrong = run(only_passes, claimed={"checker": {"recall": claimed}})
        assert wrong.codes == ("metrics.mismatch",)
        assert "undefined" in wrong.reasons[0].message


def test_claiming_undefined_for_a_defined_figure_is_a_mismatch() -> None:
    verdict = run(table(), claimed={"checker": {"recall": "undefined"}})
    assert verdict.codes == ("metrics.mismatch",)


def test_f1_is_zero_not_undefined_when_nothing_is_caught_but_both_are_defined() -> None:
    figures = Confusion(tp=0, fp=2, fn=3, tn=5).figures()
    assert figures["precision"]["value"] == 0.0
    assert figures["recall"]["value"] == 0.0
    assert figures["f1"]["value"] == 0.0


@pytest.mark.parametrize(
    ("predictions", "fragment"),
    [
        ({"items": []}, "empty"),
        ([1, 2], "a list 'items'"),
        ({"items": [{"id": "a", "truth": "ok", "predictions": {"m": "pass"}}]}, "truth 'ok'"),
        (
            {
                "items": [
                    {"id": "a", "truth": "pass", "predictions": {"m": "pass"}},
                    {"id": "b", "truth": "fail", "predictions": {"n": "fail"}},
                ]
            },
            "(a): no verdict from method 'n'",
        ),
        (
            {
                "items": [
                    {"id": "a", "truth": "pass", "predictions": {"m": "pass"}},
                    {"id": "a", "truth": "pass", "predictions": {"m": "pass"}},
                ]
            },
            "unique",
        ),
        (
            {"items": [{"id": "a", "truth": "pass", "predictions": {"m": "ok"}}]},
            "method 'm' gave 'ok'",
        ),
    ],
)
def test_malformed_table_is_input_invalid(predictions: Any, fragment: str) -> None:
    verdict = run(predictions, claimed={"m": {"accuracy": 1.0}})
    assert (verdict.status, verdict.codes) == ("error", ("input.invalid",))
    assert fragment in verdict.message


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"claimed": {}}, "nothing would be checked"),
        ({"claimed": {"oracle": {"f1": 1.0}}}, "has no predictions"),
        ({"claimed": {"checker": {"auc": 1.0}}}, "unknown figure"),
        ({"claimed": {"checker": {"f1": "high"}}}, "fraction"),
        ({"claimed": {"checker": {"tp": 1.5}}}, "integer count"),
        ({"claimed": {"checker": {"f1": 1.0}}, "positive": "pass"}, "must differ"),
        # a percentage where a fraction is documented: failing on it would be a negative
        # control that fails for the wrong reason
        ({"claimed": {"self-assessment": {"accuracy": 82.2}}}, "fraction 0..1"),
        ({"claimed": {"self-assessment": {"f1": -0.1}}}, "fraction 0..1"),
        ({"claimed": {"self-assessment": {"f1": float("nan")}}}, "fraction 0..1"),
    ],
)
def test_bad_claims_are_params_invalid(params: dict[str, Any], fragment: str) -> None:
    verdict = run(table(), **params)
    assert (verdict.status, verdict.codes) == ("error", ("params.invalid",))
    assert fragment in verdict.message


@pytest.mark.parametrize(
    ("tolerance", "fragment"),
    [
        (-1, "at least 0"),
        # a tolerance this wide accepts any claimed fraction: the check could not fail
        (1, "below 0.05"),
        (0.5, "below 0.05"),
    ],
)
def test_a_tolerance_outside_its_range_is_params_out_of_range(
    tolerance: float, fragment: str
) -> None:
    verdict = run(table(), claimed={"checker": {"f1": 0.5}}, tolerance=tolerance)
    assert (verdict.status, verdict.codes) == ("error", ("params.out_of_range",))
    assert fragment in verdict.message and "'tolerance'" in verdict.message


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))
def test_f1_is_the_harmonic_mean_of_precision_and_recall_when_defined(
    tp: int, fp: int, fn: int, tn: int
) -> None:
    figures = Confusion(tp, fp, fn, tn).figures()
    p, r, f1 = (figures[k]["value"] for k in ("precision", "recall", "f1"))
    if p is None or r is None:
        assert f1 is None
    elif p + r == 0:
        assert f1 == 0.0
    else:
        assert f1 == pytest.approx(2 * p * r / (p + r))
    for figure in figures.values():
        assert figure["value"] is None or 0.0 <= figure["value"] <= 1.0
