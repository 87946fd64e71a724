"""Every exit code comes from the codes table (``bundler/codes.py``: ``Ends``,
``EXIT_CODES``, ``COMMAND_EXITS``): no module of bundler/ or checkers/ ends a command, or
decides what a run ended with, by a number written in place.

Read from the code (an AST scan): a call of ``sys.exit``, ``exit``, ``os._exit`` or
``SystemExit`` with a number in its arguments; a comparison of an exit code with a number;
a name holding an exit code assigned a number; ``max`` of an exit code and a number.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pytest

from tests.project.test_layers import sources

TABLE = "bundler.codes"
EXITING = {"exit", "_exit", "SystemExit", "Exit"}


def _numbers(node: ast.AST) -> list[int]:
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and type(n.value) is int  # True is no exit code
    ]


def _names_an_exit(node: ast.AST) -> bool:
    """An expression whose name says it holds an exit code (``exc.exit_code``, ``worst``)."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return "exit" in name.lower() or name == "worst"


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def literal_exits(known: Mapping[str, str]) -> list[str]:
    """Each exit code written as a number outside the table: ``module:line code``."""
    found = []
    for name, source in sorted(known.items()):
        if name == TABLE:
            continue
        for node in ast.walk(ast.parse(source)):
            literal = False
            if isinstance(node, ast.Call) and _called(node) in EXITING:
                literal = bool(_numbers(node))
            elif isinstance(node, ast.Call) and _called(node) == "max":
                literal = any(_names_an_exit(a) for a in node.args) and any(
                    isinstance(a, ast.IfExp | ast.Constant) and _numbers(a) for a in node.args
                )
            elif isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                literal = any(_names_an_exit(s) for s in sides) and any(
                    isinstance(s, ast.Constant) and _numbers(s) for s in sides
                )
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                literal = any(_names_an_exit(t) for t in targets) and isinstance(
                    node.value, ast.Constant
                )
                literal = literal and bool(_numbers(node.value))
            if literal:
                found.append(f"{name}:{getattr(node, 'lineno', 0)} {ast.unparse(node)[:60]}")
    return found


def test_every_exit_code_comes_from_the_codes_table() -> None:
    assert literal_exits(sources()) == []


@pytest.mark.parametrize(
    "planted",
    [
        "import sys\nsys.exit(4)\n",
        "import sys\nsys.exit(0 if ok else 1)\n",
        "raise SystemExit(130)\n",
        "result = 'rejected' if exc.exit_code == 3 else 'error'\n",
        "EXIT_USAGE = 2\n",
        "worst = max(worst, 3 if bad else 1)\n",
    ],
)
def test_a_planted_literal_exit_code_is_found(planted: str) -> None:
    known = dict(sources())
    known["bundler.cli.diff"] += planted
    assert [f for f in literal_exits(known) if f.startswith("bundler.cli.diff:")]


def test_the_table_itself_and_exits_from_it_are_not_literals() -> None:
    allowed = (
        "from bundler.codes import COMMAND_EXITS, EXIT_CODES\nimport sys\n"
        "sys.exit(COMMAND_EXITS['failed'])\nsys.exit(exc.exit_code)\n"
        "result = 'rejected' if exc.exit_code == EXIT_CODES['rejected'] else 'error'\n"
        "code = f(1, 2)\n"
    )
    assert literal_exits({"bundler.cli.m": allowed, TABLE: "EXIT_CODES = {'error': 5}\n"}) == []
