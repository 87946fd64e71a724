"""One table of codes: every problem code the code base makes is in bundler/codes.py,
every entry there is made somewhere, and manifests/CODES.md is generated from it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bundler.codes import CODES, FILE_LIKE, lookup, reference
from checkers import registry
from checkers.api import COMMON_ERRORS

REPO = Path(__file__).resolve().parent.parent
CODE = re.compile(r"^[a-z][a-z_]*(\.[a-z][a-z_0-9]*)+$")


def codes_made_in(source: str) -> set[str]:
    """String literals where a code is made: a call's argument (also inside a tuple or a
    conditional), a ``code=`` keyword, a dict key, or ``code = ...``."""
    found: set[str] = set()

    def take(node: ast.AST | None) -> None:
        if isinstance(node, ast.IfExp):
            take(node.body)
            take(node.orelse)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and CODE.match(node.value)
            and node.value.rsplit(".", 1)[1] not in FILE_LIKE
        ):
            found.add(node.value)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and not _imports_a_module(node):
            for arg in node.args:
                take(arg)
                for element in arg.elts if isinstance(arg, ast.Tuple) else ():
                    take(element)
            for keyword in node.keywords:
                if keyword.arg == "code":
                    take(keyword.value)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                take(key)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "code" for t in node.targets
        ):
            take(node.value)
    return found


def _imports_a_module(call: ast.Call) -> bool:
    """``importlib.import_module("compression.zstd")``: a module name, not a code."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name == "import_module"


def used_codes() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted((REPO / "bundler").rglob("*.py")):
        if path.name == "codes.py":
            continue
        for code in codes_made_in(path.read_text(encoding="utf-8")):
            out.setdefault(code, str(path.relative_to(REPO)))
    return out


def checker_reasons() -> set[str]:
    """Reason codes declared beside a built-in checker (documented by ``checkers NAME``)."""
    return {code for checker in registry().values() for code in checker.reasons}


def test_every_code_the_tool_makes_is_in_the_table() -> None:
    declared = checker_reasons()
    missing = {
        code: where
        for code, where in used_codes().items()
        if lookup(code) is None and code not in declared
    }
    assert missing == {}, "add these to bundler/codes.py, then run python -m bundler.codes"


def test_every_code_in_the_table_is_made_somewhere() -> None:
    used = used_codes()
    unused = [c for c in CODES if c not in used and c.rsplit(".", 1)[1] not in FILE_LIKE]
    assert unused == [], "remove these from bundler/codes.py, or make them"


def test_the_errors_every_checker_may_return_are_in_the_table() -> None:
    assert [code for code in COMMON_ERRORS if code not in CODES] == []


def test_the_scan_finds_a_code_in_each_form_and_the_table_catches_a_new_one() -> None:
    source = (
        'Problem("x", "alpha.one", "m")\n'
        'problems.append((("files",), "alpha.two", "m"))\n'
        'reject("alpha.three" if x else "alpha.four", "m")\n'
        'code = "alpha.five"\n'
        'REASONS = {"alpha.six": "m"}\n'
        'open("manifest.toml")\n'
        'label = ("bundle.name", value)\n'
    )
    assert codes_made_in(source) == {
        f"alpha.{n}" for n in ("one", "two", "three", "four", "five", "six")
    }
    assert lookup("alpha.one") is None and lookup("file.hash") is not None
    assert lookup("os.ENOSPC") is not None


def test_the_codes_reference_is_generated_from_the_table() -> None:
    committed = (REPO / "manifests" / "CODES.md").read_text(encoding="utf-8")
    assert committed == reference(), "run: python -m bundler.codes > manifests/CODES.md"
