"""The numbers a caller of the library gives (limits, budgets, ``jobs``), checked as the
command line's option types check them: a NaN, an infinity, a negative number, a bool or
a fraction where a count is meant is refused with a ``UsageError`` naming the argument,
never taken (a NaN compares false with everything, so a NaN deadline is no deadline)."""

from __future__ import annotations

import math

from bundler.errors import UsageError


def count(name: str, value: object, minimum: int = 0) -> int:
    """``value`` when it is a whole number of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {value}")
    return value


def seconds(name: str, value: object, minimum: float = 0.0) -> float:
    """``value`` when it is a finite number of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number, got {value!r}")
    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum:g}, got {value:g}")
    return float(value)
