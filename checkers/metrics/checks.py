"""classification-metrics@1, @2 and @3: claimed figures follow from the labelled table.

A report says "our checker: accuracy 100%, F1 100%; the agent's self-assessment:
accuracy 82.2%, F1 69.8%". Those figures are only as good as the table behind them: the
checker recomputes them from the table (per item: the ground truth and each method's
verdict) and compares them with the claimed ones. @2 differs only in F1: with no positive
item but a false alarm, F1 = 2TP / (2TP + FP + FN) = 0 (@1: undefined because recall is);
it is undefined only when that is 0/0. @3 takes a claimed fraction at the decimals it is
stated with, never within a tolerance (issue 41, item 7; advisories RB-2026-0046 and
RB-2026-0047 on @1 and @2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from ..api import (
    MAX_TOLERANCE,
    CheckerInputError,
    InputKind,
    Param,
    Role,
    Verdict,
    checker,
    first_failing,
)
from ..precision import decimals_param
from .model import ConfusionV2, confusions, judge_claimed, judge_claimed_at


def _metrics_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A table of one or two items on which some claimed figure is off: every method
    gives the same verdicts, every combination of truth and verdict is tried. None when
    no such table contradicts any claimed figure."""
    claimed = params["claimed"]
    if not isinstance(claimed, Mapping):
        return None
    labels = (params["positive"], params["negative"])
    pairs = [(truth, verdict) for truth in labels for verdict in labels]

    def table(rows: tuple[tuple[Any, Any], ...]) -> dict[str, Any]:
        items = [
            {"id": f"i{n}", "truth": truth, "predictions": dict.fromkeys(claimed, verdict)}
            for n, (truth, verdict) in enumerate(rows, start=1)
        ]
        return {"predictions": {"items": items}}

    candidates = (table(rows) for size in (1, 2) for rows in itertools.product(pairs, repeat=size))
    return first_failing(classification_metrics.function, params, candidates)


@checker(
    "classification-metrics",
    1,
    roles=[
        Role(
            "predictions",
            InputKind.DATA,
            "labelled items: {items: [{id, truth, predictions: {METHOD: LABEL}}]}",
        )
    ],
    params=[
        Param(
            "claimed",
            "the figures the report claims: {METHOD: {FIGURE: number or 'undefined'}}; "
            "FIGURE is accuracy, precision, recall, f1 (fractions 0..1) or tp, fp, fn, "
            "tn, n (counts, exact)",
            (dict,),
            states=("metrics.mismatch",),
        ),
        Param("positive", "the label counted as positive", (str,), default="fail"),
        Param("negative", "the other label", (str,), default="pass"),
        Param(
            "tolerance",
            "largest accepted |claimed - recomputed| for a fraction (0.0005: a "
            "percentage rounded to one decimal); must be below 0.05",
            (float, int),
            default=0.0005,
            at_least=0,
            below=MAX_TOLERANCE,
        ),
    ],
    reasons={"metrics.mismatch": "a claimed figure differs from the recomputed one"},
    counterexample=_metrics_counterexample,
    example_params=[{"claimed": {"m": {"accuracy": 0.5, "n": 2}}}],
)
def classification_metrics(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed accuracy, precision, recall and F1 match the labelled predictions.

    Recomputes, per method, the confusion matrix against the ground truth and the four
    figures with their numerators and denominators, then compares every claimed figure:
    fractions within `tolerance`, counts exactly. One `metrics.mismatch` per differing
    figure. A figure with a zero denominator (precision with no predicted positive,
    recall with no positive item, F1 when either is undefined) is undefined: it matches
    only a claim of 'undefined', never 0 or 1. Passing says the arithmetic is right for
    this table; it says nothing about whether the labels themselves are right.
    """
    positive, negative = params["positive"], params["negative"]
    if positive == negative:
        raise CheckerInputError("params.invalid", "`positive` and `negative` must differ")
    tolerance = float(params["tolerance"])
    if not math.isfinite(tolerance) or tolerance < 0:
        raise CheckerInputError("params.invalid", "`tolerance` must be a number >= 0")
    if tolerance >= MAX_TOLERANCE:
        # a tolerance of 0.5 accepts a claimed 0.5 whatever the table says, 1 any claim
        raise CheckerInputError(
            "params.invalid",
            f"`tolerance` {tolerance} is too wide to check a figure: it must be below "
            f"{MAX_TOLERANCE} (5 percentage points)",
        )
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "`claimed` is empty: nothing would be checked")
    table, total = confusions(inputs["predictions"], positive, negative)
    return judge_claimed(claimed, table, total, positive, tolerance)


def _metrics_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Three tables whose figures differ (every verdict right, every one wrong, every one
    right with one more item): no claim holds on all three. None when nothing is claimed."""
    return _three_tables(params, classification_metrics_v2.function)


def _three_tables(params: Mapping[str, Any], function: Any) -> Mapping[str, Any] | None:
    """The first of ``_metrics_counterexample_v2``'s three tables that ``function`` fails."""
    claimed = params.get("claimed")
    positive, negative = params.get("positive", "fail"), params.get("negative", "pass")
    if not isinstance(claimed, Mapping) or not claimed:
        return None
    # Tables whose figures differ (all right, all wrong, all right with one more item): no
    # claim matches all three, and 'undefined' matches none (every figure is defined).
    right = [(positive, positive), (negative, negative)]
    wrong = [(positive, negative), (negative, positive)]
    longer = [*right, (negative, negative)]  # for a claim of n alone
    for table in (right, wrong, longer):
        items = [
            {"id": f"i{n}", "truth": truth, "predictions": dict.fromkeys(claimed, said)}
            for n, (truth, said) in enumerate(table)
        ]
        inputs = {"predictions": {"items": items}}
        try:
            verdict = function(inputs, params)
        except CheckerInputError:
            return None
        if verdict.status == "fail":
            return inputs
    return None


@checker(
    "classification-metrics",
    2,
    roles=list(classification_metrics.roles),
    params=list(classification_metrics.params),
    reasons=dict(classification_metrics.reasons),
    counterexample=_metrics_counterexample_v2,
    example_params=[{"claimed": {"trajectory-skeleton": {"recall": 1.0}}, "positive": "fail"}],
)
def classification_metrics_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed accuracy, precision, recall and F1 match the labelled predictions.

    As classification-metrics@1 (same table, params, tolerance cap and reason), except
    F1: it is 2·TP / (2·TP + FP + FN), undefined only when that is 0/0 (no positive item
    and no positive prediction). So a method that raises false alarms on a table with no
    positive item has F1 0 (recall undefined, precision 0), where @1 said undefined.
    Precision and recall stay undefined with a zero denominator; an undefined figure
    matches only a claim of 'undefined'.
    """
    positive, negative = params["positive"], params["negative"]
    if positive == negative:
        raise CheckerInputError("params.invalid", "`positive` and `negative` must differ")
    tolerance = float(params["tolerance"])
    if not math.isfinite(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"`tolerance` {tolerance} must be a number >= 0 and below {MAX_TOLERANCE} "
            "(5 percentage points)",
        )
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "`claimed` is empty: nothing would be checked")
    counts, total = confusions(inputs["predictions"], positive, negative)
    table = {m: ConfusionV2(c.tp, c.fp, c.fn, c.tn) for m, c in counts.items()}
    return judge_claimed(claimed, table, total, positive, tolerance)


def _metrics_counterexample_v3(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """@2's three tables, judged by @3."""
    return _three_tables(params, classification_metrics_v3.function)


@checker(
    "classification-metrics",
    3,
    roles=list(classification_metrics.roles),
    params=[
        *(p for p in classification_metrics.params if p.name != "tolerance"),
        decimals_param("every claimed fraction is"),
    ],
    reasons=dict(classification_metrics.reasons),
    counterexample=_metrics_counterexample_v3,
    example_params=[
        {"claimed": {"trajectory-skeleton": {"recall": 1.0}}, "positive": "fail"},
        {"claimed": {"m": {"accuracy": 0.86, "n": 100}}, "decimals": 2},
    ],
)
def classification_metrics_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed accuracy, precision, recall and F1 are the labelled predictions' figures.

    As classification-metrics@2 (same table, F1 and reason), except how a claimed fraction
    is compared: every figure is a ratio of counts, exact, so it needs no tolerance. A
    claimed fraction must be the recomputed one rounded to `decimals`, the decimals the
    claim states its fractions with (`0.86`: 2, `86.0%` as 0.860: 3), that is within half
    a unit of the last decimal; unset, it must equal the recomputed one at float
    precision. A claimed fraction with more decimals than `decimals` is `params.invalid`.
    @1 and @2 took any `tolerance` below 0.05, so "accuracy 0.90" held where the table
    gives 0.86 (advisories RB-2026-0046, RB-2026-0047); @3 has no `tolerance` param.
    Each `metrics.mismatch` gives the claimed figure at its decimals beside the
    recomputed one with its numerator and denominator. Counts are compared exactly; an
    undefined figure matches only a claim of 'undefined'.
    """
    positive, negative = params["positive"], params["negative"]
    if positive == negative:
        raise CheckerInputError("params.invalid", "`positive` and `negative` must differ")
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "`claimed` is empty: nothing would be checked")
    counts, total = confusions(inputs["predictions"], positive, negative)
    table = {m: ConfusionV2(c.tp, c.fp, c.fn, c.tn) for m, c in counts.items()}
    return judge_claimed_at(claimed, table, total, positive, params["decimals"])
