"""A test never monkeypatches a module-level limit (issue 44, item 3): a limit a test
needs smaller is passed in, as a value of the code's own limits type (``LoadLimits``,
``ImportLimits``, ``CaseBudget``, ``LogLimits``...), so the code under test takes its
limits as parameters and no test changes them for every other caller in the process.

A module-level limit is an upper-case module name of bundler/ or checkers/ whose name
says it is one (``MAX_...``, ``..._LIMITS``, ``..._BYTES``, ``..._MEMORY``,
``..._SECONDS``...) or whose value is a limits value (a type named ``...Limits`` or
``...Budget``). Read from the tests' code (an AST scan): every ``X.setattr(owner,
"NAME", value)`` and ``X.setattr("module.NAME", value)``."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).parents[1]
PACKAGES = ("bundler", "checkers")
LIMIT_NAME = re.compile(
    r"^_?(MAX_\w+|\w*LIMITS?|\w+_(BYTES|MEMORY|SECONDS|DEPTH|VALUES|MEMBERS|CAP))$"
)


def _modules(tree: ast.Module) -> dict[str, str]:
    """Each name the test module binds to a module of bundler/ or checkers/ (or to a name
    inside one), mapped to what it names, dotted."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in PACKAGES
        ):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _resolve(dotted: str) -> Any:
    """The object ``dotted`` names (a module, or an attribute of one), or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part, None)
        return found
    return None


def _is_limit(owner: Any, name: str) -> bool:
    if not (name.lstrip("_")[:1].isupper() and name.upper() == name):
        return False  # not a module-level constant
    if isinstance(owner, ModuleType) and owner.__name__.split(".")[0] not in PACKAGES:
        return False
    if LIMIT_NAME.match(name):
        return True
    kind = type(getattr(owner, name, None)).__name__
    return kind.endswith(("Limits", "Budget"))


def monkeypatched_limits(path: str, source: str) -> list[str]:
    """Each place in ``source`` (a test module) that monkeypatches a module-level limit."""
    tree = ast.parse(source)
    bound = _modules(tree)
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setattr"
            and node.args
        ):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            module, _, name = first.value.rpartition(".")
            owner = _resolve(module) if module.split(".")[0] in PACKAGES else None
        elif len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            name = str(node.args[1].value)
            owner_text = ast.unparse(first)
            head, _, rest = owner_text.partition(".")
            if head not in bound:
                continue
            owner = _resolve(bound[head] + (f".{rest}" if rest else ""))
        else:
            continue
        if owner is not None and _is_limit(owner, name):
            found.append(f"{path}:{node.lineno} {name}: {ast.unparse(node)[:90]}")
    return found


def test_no_test_monkeypatches_a_module_level_limit() -> None:
    found = []
    for file in sorted(TESTS.rglob("*.py")):
        relative = file.relative_to(TESTS.parent).as_posix()
        found += monkeypatched_limits(relative, file.read_text(encoding="utf-8"))
    assert found == [], "pass the limit in instead:\n" + "\n".join(found)


PLANTED = """
import pytest
from bundler.run import inputs, limits
from bundler.importers import untrusted
from bundler.run import runner
from checkers.inspect_log import log as inspect_format
import bundler.run.limits

def test_planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "LOAD_LIMITS", inputs.LoadLimits(bytes=10))
    monkeypatch.setattr(limits, "CASE_MEMORY", 1 << 20)
    monkeypatch.setattr("bundler.run.limits.CASE_SECONDS", 1)
    monkeypatch.setattr(inspect_format, "MAX_MEMBER_BYTES", 10)
    monkeypatch.setattr(untrusted, "AT_VERIFY", untrusted.ImportLimits())
    monkeypatch.setattr(bundler.run.limits, "VERIFY_SECONDS", 1)
    monkeypatch.setattr(runner, "PARALLEL_FROM", 1)  # when cases go parallel: not a limit
    monkeypatch.setattr(inputs, "parse_input", None)  # a function: not a limit
"""


def test_a_planted_monkeypatched_limit_is_found() -> None:
    found = monkeypatched_limits("tests/planted.py", PLANTED)
    names = [line.split()[1].rstrip(":") for line in found]
    assert names == [
        "LOAD_LIMITS",
        "CASE_MEMORY",
        "CASE_SECONDS",
        "MAX_MEMBER_BYTES",
        "AT_VERIFY",  # by its value: an ImportLimits
        "VERIFY_SECONDS",
    ]
