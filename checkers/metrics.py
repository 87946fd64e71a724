"""Classification figures recomputed from labelled predictions (seed 003, evaluation).

A report says "our checker: accuracy 100%, F1 100%; the agent's self-assessment:
accuracy 82.2%, F1 69.8%". Those figures are only as good as the table behind them.
This checker recomputes them from the table (per item: the ground truth and each
method's verdict) and compares them with the claimed ones. A figure whose denominator
is zero is *undefined* and is reported so: never silently 0 or 100%.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)

FIGURES = ("accuracy", "precision", "recall", "f1")
COUNTS = ("tp", "fp", "fn", "tn", "n")
UNDEFINED = "undefined"
MAX_TOLERANCE = 0.05


@dataclass(frozen=True)
class Confusion:
    """The confusion matrix of one method against the ground truth."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def figures(self) -> dict[str, dict[str, Any]]:
        """Each figure with its numerator and denominator; ``value`` None if undefined."""
        precision_ok = self.tp + self.fp > 0
        recall_ok = self.tp + self.fn > 0
        parts = {
            "accuracy": (self.tp + self.tn, self.n, "no items"),
            "precision": (self.tp, self.tp + self.fp, "no item was predicted positive"),
            "recall": (self.tp, self.tp + self.fn, "no item is positive in the ground truth"),
            "f1": (
                2 * self.tp,
                2 * self.tp + self.fp + self.fn,
                "precision or recall is undefined",
            ),
        }
        out: dict[str, dict[str, Any]] = {}
        for name, (num, den, why) in parts.items():
            defined = den > 0 and (name != "f1" or (precision_ok and recall_ok))
            out[name] = {
                "value": num / den if defined else None,
                "numerator": num,
                "denominator": den,
                **({} if defined else {"undefined": why}),
            }
        return out

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn, "n": self.n}


def confusions(document: Any, positive: str, negative: str) -> tuple[dict[str, Confusion], int]:
    """Per method, the confusion matrix of its verdicts; and the number of items.

    ``document``: ``{items: [{id, truth, predictions: {METHOD: LABEL}}]}``; every item
    must have a verdict from every method, and every label must be ``positive`` or
    ``negative`` (``input.invalid`` otherwise: a missing verdict is never guessed).
    """
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise CheckerInputError("input.invalid", "predictions: a mapping with a list 'items'")
    items = document["items"]
    if not items:
        raise CheckerInputError("input.invalid", "predictions: 'items' is empty")
    labels = (positive, negative)
    methods: list[str] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("predictions"), dict):
            methods.extend(m for m in item["predictions"] if m not in methods)
    counts = {m: [0, 0, 0, 0] for m in methods}
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"items[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("predictions"), dict):
            raise CheckerInputError("input.invalid", f"{where}: needs 'truth' and 'predictions'")
        ident = item.get("id")
        if not isinstance(ident, str) or ident in seen:
            raise CheckerInputError("input.invalid", f"{where}: needs a unique text 'id'")
        seen.add(ident)
        truth = item.get("truth")
        if truth not in labels:
            raise CheckerInputError(
                "input.invalid", f"{where} ({ident}): truth {truth!r} is not one of {labels}"
            )
        for method in methods:
            verdict = item["predictions"].get(method)
            if verdict is None:
                raise CheckerInputError(
                    "input.invalid", f"{where} ({ident}): no verdict from method {method!r}"
                )
            if verdict not in labels:
                raise CheckerInputError(
                    "input.invalid",
                    f"{where} ({ident}): method {method!r} gave {verdict!r}, "
                    f"expected one of {labels}",
                )
            cell = (
                (0 if truth == positive else 1)
                if verdict == positive
                else (2 if truth == positive else 3)
            )
            counts[method][cell] += 1
    return {m: Confusion(*c) for m, c in counts.items()}, len(items)


def _metrics_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A table of one or two items on which some claimed figure is off: every method
    gives the same verdicts, every combination of truth and verdict is tried."""
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
        ),
        Param("positive", "the label counted as positive", (str,), default="fail"),
        Param("negative", "the other label", (str,), default="pass"),
        Param(
            "tolerance",
            "largest accepted |claimed - recomputed| for a fraction (0.0005: a "
            "percentage rounded to one decimal); must be below 0.05",
            (float, int),
            default=0.0005,
        ),
    ],
    reasons={"metrics.mismatch": "a claimed figure differs from the recomputed one"},
    counterexample=_metrics_counterexample,
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


def judge_claimed(
    claimed: Mapping[str, Any],
    table: Mapping[str, Confusion],
    total: int,
    positive: str,
    tolerance: float,
) -> Verdict:
    """Each claimed figure against the recomputed confusion table (shared by every version
    of classification-metrics: they differ in how a figure is computed, not judged)."""
    recomputed = {m: {**c.to_dict(), "figures": c.figures()} for m, c in table.items()}
    reasons: list[Reason] = []
    checked = 0
    for method, figures in sorted(claimed.items()):
        if method not in table:
            raise CheckerInputError(
                "params.invalid",
                f"claimed method {method!r} has no predictions (methods: {sorted(table)})",
            )
        if not isinstance(figures, dict) or not figures:
            raise CheckerInputError(
                "params.invalid", f"claimed[{method!r}] must map figure names to values"
            )
        for name, value in sorted(figures.items()):
            problem = _compare(method, name, value, table[method], tolerance)
            checked += 1
            if problem is not None:
                reasons.append(problem)
    details = {"items": total, "positive": positive, "methods": recomputed, "checked": checked}
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {checked} claimed figure(s) differ from the recomputed ones",
            reasons,
            **details,
        )
    return Verdict.passed(
        f"all {checked} claimed figure(s) match the recomputation over {total} items",
        **details,
    )


def _compare(
    method: str, name: str, claimed: Any, confusion: Confusion, tolerance: float
) -> Reason | None:
    if name in COUNTS:
        actual = confusion.to_dict()[name]
        if isinstance(claimed, bool) or not isinstance(claimed, int):
            raise CheckerInputError(
                "params.invalid", f"claimed {method} {name} must be an integer count"
            )
        if claimed == actual:
            return None
        return Reason(
            "metrics.mismatch",
            f"{method} {name}: claimed {claimed}, recomputed {actual}",
            {"method": method, "figure": name, "claimed": claimed, "recomputed": actual},
        )
    if name not in FIGURES:
        raise CheckerInputError(
            "params.invalid",
            f"claimed {method}: unknown figure {name!r} (known: {[*FIGURES, *COUNTS]})",
        )
    figure = confusion.figures()[name]
    value = figure["value"]
    shown = f"{figure['numerator']}/{figure['denominator']}" + (
        f" = {value:.4f}" if value is not None else f", undefined: {figure['undefined']}"
    )
    base = {
        "method": method,
        "figure": name,
        "claimed": claimed,
        "recomputed": value,
        "numerator": figure["numerator"],
        "denominator": figure["denominator"],
    }
    if claimed == UNDEFINED:
        if value is None:
            return None
        return Reason(
            "metrics.mismatch",
            f"{method} {name}: claimed undefined, recomputed {shown}",
            base,
        )
    if (
        isinstance(claimed, bool)
        or not isinstance(claimed, int | float)
        or not 0 <= claimed <= 1  # also refuses NaN
    ):
        raise CheckerInputError(
            "params.invalid",
            f"claimed {method} {name} must be a fraction 0..1 or 'undefined', got {claimed!r}",
        )
    if value is None:
        return Reason(
            "metrics.mismatch", f"{method} {name}: claimed {claimed}, recomputed {shown}", base
        )
    if abs(float(claimed) - value) <= tolerance + 1e-12:
        return None
    return Reason(
        "metrics.mismatch",
        f"{method} {name}: claimed {claimed}, recomputed {shown} "
        f"(differs by {abs(float(claimed) - value):.4f}, tolerance {tolerance})",
        base,
    )
