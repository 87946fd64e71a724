"""How a claimed figure meets the one a checker re-derives: at the decimals it is stated with.

A figure a checker re-derives exactly from counts (an accuracy of 86 of 100 items, a
pass@k from each task's n and c) needs no tolerance: a claim states its rounding
("0.86", "86.0%"), so the claim holds when it is the re-derived figure rounded to the
decimals it is stated with (within half a unit of the last one), and a figure stated
without decimals must equal it at float precision. A tolerance below 0.05 let "0.90"
hold where the counts give 0.86 (issue 41, item 7: lm-eval-metric@2 first, then
classification-metrics@3 and trial-stats@4 share this rule).
"""

from __future__ import annotations

from typing import Any

from .api import CheckerInputError, Param

# a figure computed in floats differs from the exact fraction by rounding at most
FLOAT_NOISE = 1e-9
MAX_DECIMALS = 12


def decimals_param(what: str) -> Param:
    """The ``decimals`` param: how many decimals ``what`` is stated with (unset: exact)."""
    return Param(
        "decimals",
        f"the decimals {what} stated with (`0.90` and `90.0%`: 2 and 3); unset, each must "
        "equal the re-derived figure at float precision",
        (int,),
        default=None,
        at_least=0,
        at_most=MAX_DECIMALS,
    )


def stated_decimals(decimals: Any, claimed: float, where: str) -> None:
    """``params.invalid`` unless ``decimals`` is 0..MAX_DECIMALS (or None) and ``claimed``
    has no more decimals than that: 0.8999 is not a figure stated with 2."""
    if decimals is None:
        return
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise CheckerInputError("params.invalid", f"decimals {decimals!r} must be a whole number")
    if not 0 <= decimals <= MAX_DECIMALS:
        raise CheckerInputError(
            "params.invalid", f"decimals {decimals!r} must be a whole number, 0 to {MAX_DECIMALS}"
        )
    if abs(round(claimed, decimals) - claimed) > FLOAT_NOISE:
        raise CheckerInputError(
            "params.invalid",
            f"{where}: claimed {claimed!r} has more than the {decimals} decimals it is said to "
            "be stated with",
        )


def half_unit(decimals: int | None) -> float:
    """How far a figure stated with ``decimals`` decimals may be from what it rounds."""
    return 0.0 if decimals is None else 0.5 * 10.0**-decimals


def agrees(claimed: float, derived: float, decimals: int | None) -> bool:
    """``claimed`` is ``derived`` as stated with ``decimals`` decimals (None: exactly)."""
    return abs(float(claimed) - derived) <= half_unit(decimals) + FLOAT_NOISE


def precision_text(decimals: int | None) -> str:
    """``at 2 decimals`` or ``at full precision``, for the claimed figure in a message."""
    return "at full precision" if decimals is None else f"at {decimals} decimals"
