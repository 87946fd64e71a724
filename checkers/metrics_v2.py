"""Classification figures (seed 003, evaluation), second version: F1 as its formula says.

``classification-metrics@1`` (:mod:`checkers.metrics`) calls F1 undefined whenever
precision or recall is, which refuses a defined value: with no positive item but a false
alarm, F1 = 2TP / (2TP + FP + FN) = 0 / FP = 0. Version 2 computes F1 from that formula
and calls it undefined only when it is 0/0 (no positive item and no positive
prediction). Everything else is @1's: the same input, params and reasons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from . import metrics as v1
from .api import CheckerInputError, InputKind, Role, Verdict, checker

__all__ = ["ConfusionV2", "classification_metrics_v2"]


class ConfusionV2(v1.Confusion):
    """@1's confusion matrix with F1 undefined only when 2TP + FP + FN is 0."""

    def figures(self) -> dict[str, dict[str, Any]]:
        out = super().figures()
        num, den = 2 * self.tp, 2 * self.tp + self.fp + self.fn
        out["f1"] = {
            "value": num / den if den else None,
            "numerator": num,
            "denominator": den,
            **({} if den else {"undefined": "no positive item and no positive prediction"}),
        }
        return out


def _metrics_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
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
            verdict = classification_metrics_v2.function(inputs, params)
        except CheckerInputError:
            return None
        if verdict.status == "fail":
            return inputs
    return None


@checker(
    "classification-metrics",
    2,
    roles=[
        Role(
            "predictions",
            InputKind.DATA,
            "labelled items: {items: [{id, truth, predictions: {METHOD: LABEL}}]}",
        )
    ],
    params=list(v1.classification_metrics.params),
    reasons=dict(v1.classification_metrics.reasons),
    counterexample=_metrics_counterexample,
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
    if not math.isfinite(tolerance) or not 0 <= tolerance < v1.MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"`tolerance` {tolerance} must be a number >= 0 and below {v1.MAX_TOLERANCE} "
            "(5 percentage points)",
        )
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "`claimed` is empty: nothing would be checked")
    counts, total = v1.confusions(inputs["predictions"], positive, negative)
    table = {m: ConfusionV2(c.tp, c.fp, c.fn, c.tn) for m, c in counts.items()}
    return v1.judge_claimed(claimed, table, total, positive, tolerance)
