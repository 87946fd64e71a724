"""A name with one leading underscore belongs to the module that defines it: no other
module of bundler/ or checkers/ imports it (relative imports included) or reaches for it
as an attribute (``archive._append``). A family's helpers that its check modules share
are public names of its model module. The methods of ``NamedTuple`` (``_replace``...) are
public API spelt with an underscore.

Read from the code (an AST scan: nothing is imported or run). An attribute ``obj._x``
is a module's own when that module defines ``_x`` itself (a function, a class, a name or
an attribute it assigns: a class reading its private attribute on another instance of
itself); the scan cannot tell two modules' same-named private attributes apart, so it
misses a module that reaches for another's ``_x`` while defining an ``_x`` of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pytest

from tests.project.test_layers import sources

NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NAMEDTUPLE_API


def defined_in(tree: ast.AST) -> set[str]:
    """Every name the module defines or assigns, as a name or as an attribute."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def borrowed(known: Mapping[str, str]) -> list[str]:
    """Each use of another module's private name: ``module:line what``."""
    found = []
    for name, source in sorted(known.items()):
        tree = ast.parse(source)
        own = defined_in(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith(("bundler", "checkers"))
            ):
                source = "." * node.level + (node.module or "")
                found += [
                    f"{name}:{node.lineno} imports {a.name} from {source}"
                    for a in node.names
                    if private(a.name)
                ]
            elif (
                isinstance(node, ast.Attribute)
                and private(node.attr)
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr not in own
            ):
                found.append(f"{name}:{node.lineno} uses {ast.unparse(node)}")
    return found


def bundler_sources() -> dict[str, str]:
    """bundler/ and checkers/: one rulebook for both."""
    return sources()


def test_no_module_uses_another_modules_private_names() -> None:
    known = bundler_sources()
    assert any(n.startswith("checkers.") for n in known)  # the scan sees checkers/ too
    assert borrowed(known) == []


@pytest.mark.parametrize(
    ("module", "planted", "expected"),
    [
        (
            "bundler.store.export",
            "def f(archive):\n    archive._append('export', {})\n",
            "uses archive._append",
        ),
        (
            "bundler.store.export",
            "from bundler.store.add import _insert\n",
            "imports _insert from bundler.store.add",
        ),
        (  # a family's check module borrowing from its model module, relatively
            "checkers.config_change.state",
            "from .model import _new_helper\n",
            "imports _new_helper from .model",
        ),
        (
            "checkers.fault_injection.trial_stats",
            "from checkers.fault_injection.trials import _hidden\n",
            "imports _hidden from checkers.fault_injection.trials",
        ),
    ],
)
def test_a_planted_use_of_a_private_name_is_found(module: str, planted: str, expected: str) -> None:
    known = bundler_sources()
    known[module] += planted
    found = borrowed(known)
    assert any(f.startswith(f"{module}:") and f.endswith(expected) for f in found), found


def test_a_class_reading_its_own_private_attribute_is_not_borrowing() -> None:
    own = (
        "class A:\n"
        "    def __init__(self):\n        self._x = 1\n"
        "    def same(self, other):\n        return other._x\n"
    )
    assert borrowed({"bundler.m": own}) == []
