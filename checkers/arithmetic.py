"""Arithmetic a checker version can promise to repeat bit for bit on every Python.

Python 3.12 made the built-in ``sum()`` of floats compensated (Neumaier): the same
values give a closer result, so ``sum([0.1] * 10)`` is ``1.0`` on 3.12 and
``0.9999999999999999`` on 3.11. A checker that compared a recomputed figure with a
stated one would then decide differently, and a golden report would change, with the
Python it runs on. Checker versions are forever, so the checkers add their own way,
left to right with one rounding per addition, which is what ``sum()`` did up to 3.11
(the results of every bundle built so far). ``tests/checkers/test_arithmetic.py``
refuses the built-in ``sum`` anywhere under ``checkers/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar, overload

T = TypeVar("T")


@overload
def left_sum(values: Iterable[int]) -> int: ...
@overload
def left_sum(values: Iterable[float]) -> float: ...
@overload
def left_sum(values: Iterable[T], start: T) -> T: ...


def left_sum(values: Iterable[Any], start: Any = 0) -> Any:
    """``start + v1 + v2 + ...`` added left to right, one rounding per addition: the
    result of Python 3.11's ``sum(values, start)`` for ints, bools, floats and Fractions
    alike, on every Python."""
    total = start
    for value in values:
        total = total + value
    return total
