"""Classification figures recomputed from a labelled table: the confusion matrix per method
(@1's and @2's F1), and how a claimed figure is judged against the recomputation.

A figure whose denominator is zero is *undefined* and is reported so: never silently 0
or 100%.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..api import (
    CheckerInputError,
    Reason,
    Verdict,
)
from ..precision import agrees, precision_text, stated_decimals

FIGURES = ("accuracy", "precision", "recall", "f1")
COUNTS = ("tp", "fp", "fn", "tn", "n")
UNDEFINED = "undefined"


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


def judge_claimed(
    claimed: Mapping[str, Any],
    table: Mapping[str, Confusion],
    total: int,
    positive: str,
    tolerance: float,
) -> Verdict:
    """Each claimed figure against the recomputed confusion table within ``tolerance``
    (@1 and @2: they differ in how a figure is computed, not judged)."""
    return _judge(
        claimed,
        table,
        total,
        positive,
        lambda method, name, value, confusion: (
            _compare(method, name, value, confusion, tolerance),
            "",
        ),
    )


def judge_claimed_at(
    claimed: Mapping[str, Any],
    table: Mapping[str, Confusion],
    total: int,
    positive: str,
    decimals: int | None,
) -> Verdict:
    """Each claimed figure against the recomputed confusion table at the ``decimals`` the
    claim states its fractions with (@3: a figure of counts needs no tolerance)."""
    return _judge(
        claimed,
        table,
        total,
        positive,
        lambda method, name, value, confusion: _compare_at(
            method, name, value, confusion, decimals
        ),
    )


# a claimed figure judged: a reason if it is off, and the text showing it beside the
# recomputed one (@3; "" for @1 and @2, whose messages do not show it)
Compare = Callable[[str, str, Any, Confusion], "tuple[Reason | None, str]"]
SHOWN = 5


def _judge(
    claimed: Mapping[str, Any],
    table: Mapping[str, Confusion],
    total: int,
    positive: str,
    compare: Compare,
) -> Verdict:
    recomputed = {m: {**c.to_dict(), "figures": c.figures()} for m, c in table.items()}
    reasons: list[Reason] = []
    shown: list[str] = []
    failing: list[str] = []
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
            problem, text = compare(method, name, value, table[method])
            checked += 1
            if text:
                shown.append(text)
            if problem is not None:
                reasons.append(problem)
                if text:
                    failing.append(text)
    details = {"items": total, "positive": positive, "methods": recomputed, "checked": checked}
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {checked} claimed figure(s) differ from the recomputed ones"
            + _listed(failing),
            reasons,
            **details,
        )
    return Verdict.passed(
        f"all {checked} claimed figure(s) match the recomputation over {total} items"
        + _listed(shown),
        **details,
    )


def _listed(texts: list[str]) -> str:
    """``: a; b; c`` for the first SHOWN texts (and how many more), or nothing."""
    if not texts:
        return ""
    more = f" (+{len(texts) - SHOWN} more)" if len(texts) > SHOWN else ""
    return ": " + "; ".join(texts[:SHOWN]) + more


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
    _require_fraction(method, name, claimed)
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


# what a figure's numerator and denominator count, for a message
_PARTS = {
    "accuracy": ("right", "items"),
    "precision": ("true positives", "predicted positive"),
    "recall": ("true positives", "positive items"),
    "f1": ("2·TP", "2·TP + FP + FN"),
}


def _require_fraction(method: str, name: str, claimed: Any) -> None:
    """A claimed figure is a fraction from 0 to 1 (NaN is not), else ``params.invalid``."""
    if isinstance(claimed, bool) or not isinstance(claimed, int | float) or not 0 <= claimed <= 1:
        raise CheckerInputError(
            "params.invalid",
            f"claimed {method} {name} must be a fraction 0..1 or 'undefined', got {claimed!r}",
        )


def _compare_at(
    method: str, name: str, claimed: Any, confusion: Confusion, decimals: int | None
) -> tuple[Reason | None, str]:
    """``_compare`` with the claimed fraction taken at the decimals it is stated with; and
    the claimed figure beside the recomputed one."""
    if name in COUNTS:
        problem = _compare(method, name, claimed, confusion, 0.0)
        return (
            problem,
            f"{method} {name}: claimed {claimed!r}, re-derived {confusion.to_dict()[name]}",
        )
    if claimed == UNDEFINED or name not in FIGURES:
        problem = _compare(method, name, claimed, confusion, 0.0)
        return (
            problem,
            problem.message if problem else f"{method} {name}: claimed and re-derived undefined",
        )
    _require_fraction(method, name, claimed)
    stated_decimals(decimals, float(claimed), f"claimed {method} {name}")
    figure = confusion.figures()[name]
    value = figure["value"]
    num, den = figure["numerator"], figure["denominator"]
    counted, over = _PARTS[name]
    shown = (
        f"{value!r} from {num} {counted} of {den} {over}"
        if value is not None
        else f"undefined ({num} {counted} of {den} {over}: {figure['undefined']})"
    )
    text = f"{method} {name}: claimed {claimed!r} ({precision_text(decimals)}), re-derived {shown}"
    if value is not None and agrees(claimed, value, decimals):
        return None, text
    return Reason(
        "metrics.mismatch",
        text,
        {
            "method": method,
            "figure": name,
            "claimed": claimed,
            "decimals": decimals,
            "recomputed": value,
            "numerator": num,
            "denominator": den,
        },
    ), text


class ConfusionV2(Confusion):
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
