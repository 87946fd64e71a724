"""One table of codes: every problem code the code base makes is in bundler/codes.py,
every entry there is made somewhere, and manifests/CODES.md is generated from it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bundler.codes import CODES, EXIT_CODES, FILE_LIKE, Ends, lookup, reference
from bundler.errors import UsageError
from checkers import registry
from checkers.api import COMMON_ERRORS

REPO = Path(__file__).resolve().parents[2]
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

    tree = ast.parse(source)
    tree.body = [n for n in tree.body if not _declares_meanings(n)]
    for node in ast.walk(tree):
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


def _declares_meanings(node: ast.stmt) -> bool:
    """``COMMON_ERRORS = {...}`` (checkers/api.py) says what codes mean; it makes none."""
    target = node.target if isinstance(node, ast.AnnAssign) else None
    return isinstance(target, ast.Name) and target.id == "COMMON_ERRORS"


def _imports_a_module(call: ast.Call) -> bool:
    """``importlib.import_module("compression.zstd")``: a module name, not a code."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name == "import_module"


def used_codes() -> dict[str, str]:
    out: dict[str, str] = {}
    # the runner's codes, and checkers/api.py, where a checker's params are checked
    # (and checkers/vacuity.py, ADR 0005's rules beside Checker.bind)
    checkers_side = [REPO / "checkers" / "api.py", REPO / "checkers" / "vacuity.py"]
    for path in [*sorted((REPO / "bundler").rglob("*.py")), *checkers_side]:
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
    assert missing == {}, "add these to bundler/codes.py, then run python -m bundler.generate"


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
    assert committed == reference(), "manifests/CODES.md is stale: run python -m bundler.generate"


def test_each_golden_run_ends_as_the_table_says() -> None:
    """The exit code of each golden ``verify`` is the one the table gives the code it
    names (or, for a run that ends with a claim status, the one ``EXIT_CODES`` gives
    that status): the table is what decides, and a run that did otherwise fails here."""
    import json

    from tests.golden.regenerate_cli import CLI, GOLDENS

    for name, spec in GOLDENS.items():
        observed = json.loads((CLI / f"{name}.json").read_text(encoding="utf-8"))["exit_code"]
        status = name.split("-", 1)[1]
        if spec.code is not None:
            entry = lookup(spec.code)
            assert entry is not None and entry.ends.exit == observed, (name, entry)
        elif status in EXIT_CODES:
            assert EXIT_CODES[status] == observed, name
        else:
            assert observed == UsageError.exit_code == Ends.USAGE.exit, name


def test_the_error_types_and_results_take_their_exit_codes_from_the_table() -> None:
    from bundler.errors import BuildRefused, BundleRejected
    from bundler.store.errors import ArchiveError, ArchiveRefused, ArchiveTampered
    from bundler.store.reverify import Reverification

    assert [e.exit_code for e in (BundleRejected, BuildRefused, ArchiveError)] == [3, 1, 2]
    assert (ArchiveRefused.exit_code, ArchiveTampered.exit_code) == (3, 3)
    for error in (UsageError, BundleRejected, BuildRefused, ArchiveRefused, ArchiveTampered):
        assert error.exit_code == error.ends.exit
    by_result = {r: Reverification("x", r, {}, [], {}).exit_code for r in EXIT_CODES}
    assert by_result == {
        "supported": 0,
        "contradicted": 1,
        "inconclusive": 4,
        "rejected": 3,
        "missing": 3,
        "rotted": 3,
        "error": 5,
    }
    assert by_result["missing"] == CODES["store.missing"].ends.exit
    assert by_result["inconclusive"] == CODES["input.unreadable"].ends.exit
    with pytest.raises(ValueError, match="NOTE does not end a command"):
        _ = Ends.NOTE.exit_code


def test_the_meanings_of_the_errors_every_checker_may_return_are_written_once() -> None:
    from bundler.codes import CODE_ERRORS

    assert {c: CODES[c].meaning for c in COMMON_ERRORS} == dict(COMMON_ERRORS)
    assert set(CODE_ERRORS) == {
        "code.not_allowed",
        "code.timeout",
        "code.crashed",
        "code.raised",
        "code.processes",
    }
