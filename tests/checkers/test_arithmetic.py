"""Defect 8 of issue 43: a checker version's arithmetic gives the same bits on every
supported Python. Since Python 3.12 the built-in ``sum()`` of floats is compensated, so
three golden bundles' reports changed in a figure's last bits on 3.13
(``recomputed.value: expected 0.20000000000000004, got 0.2``)."""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

from checkers.arithmetic import left_sum
from checkers.inspect_log.rules import metric
from checkers.lm_eval.run import mean

CHECKERS = Path(__file__).resolve().parents[2] / "checkers"


def test_checker_sums_give_python_3_11_bits_on_every_python() -> None:
    tenths = [0.1] * 10
    assert left_sum(tenths) == 0.9999999999999999  # sum() on 3.12+: 1.0
    assert metric(tenths, "mean") == 0.09999999999999999  # 3.12+ sum(): 0.1
    assert metric(tenths, "accuracy") == 0.09999999999999999
    assert mean(tenths) == 0.09999999999999999


def test_left_sum_adds_as_sum_did_for_every_kind_of_number() -> None:
    assert left_sum([True, True, False]) == 2
    assert left_sum([1, 2, 3]) == 6 and isinstance(left_sum([1, 2]), int)
    assert left_sum([-0.0]) == 0.0 and str(left_sum([-0.0])) == "0.0"  # starts at int 0
    assert left_sum([Fraction(1, 3)] * 3, Fraction(0)) == 1
    assert left_sum([]) == 0


def test_no_checker_calls_the_builtin_sum() -> None:
    """The rule, not one call site: every checker adds with ``left_sum``."""
    calls = [
        f"{path.relative_to(CHECKERS.parent)}:{node.lineno}"
        for path in sorted(CHECKERS.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.func.id in ("sum", "fsum") or ast.unparse(node.func) == "math.fsum"
    ]
    assert not calls, f"add with checkers.arithmetic.left_sum, not sum(): {calls}"
