"""The checkers' import rules hold (checkers/README.md, "Layout"), read from the source.

Dependencies point one way: bundler imports checkers, never the reverse; a checker is a
pure function, so nothing under checkers/ imports what reads files, runs processes,
reads the clock or draws random numbers, nor calls ``open`` or ``print``; shared modules
import no family; a family imports no other family; a family's model modules import none
of its check modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import checkers
from bundler import generate

ROOT = Path(checkers.__file__).parent

# what a module without I/O never needs: files, processes, network, clock, randomness
NO_IO = {
    "asyncio", "concurrent", "fileinput", "glob", "http", "mmap", "multiprocessing", "os",
    "pathlib", "random", "requests", "secrets", "shutil", "signal", "socket", "sqlite3",
    "subprocess", "sys", "tempfile", "threading", "time", "urllib",
}  # fmt: skip
NO_CALLS = {"open", "print", "input", "breakpoint"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(text: str, package: str) -> set[str]:
    """Every module ``text`` imports, absolute (``from . import x`` names ``package.x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            stem = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


def called(text: str) -> set[str]:
    return {
        node.func.id
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def imports_of(path: Path) -> set[str]:
    return imported(path.read_text(encoding="utf-8"), package_of(path))


def family_of(name: str) -> str | None:
    """``checkers.intent.cases`` -> ``intent``; a shared module or another package: None."""
    parts = name.split(".")
    return (
        parts[1]
        if parts[0] == "checkers" and len(parts) > 1 and (ROOT / parts[1]).is_dir()
        else None
    )


def families_imported(names: set[str]) -> set[str]:
    return {f for f in map(family_of, names) if f}


SOURCES = sorted(ROOT.rglob("*.py"))
FAMILY_DIRS = sorted(p.parent for p in ROOT.glob("*/__init__.py"))


def check_modules() -> set[str]:
    """The modules that declare a checker (a ``Checker`` whose function they define)."""
    return set(generate.declared().values())


def test_every_checker_is_declared_in_a_family_package() -> None:
    assert {family_of(m) for m in checkers.MODULE_OF.values()} == {p.name for p in FAMILY_DIRS}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_checker_module_imports_bundler_or_io(path: Path) -> None:
    names = imports_of(path)
    assert not {n for n in names if n.split(".")[0] == "bundler"}
    assert not {n for n in names if n.split(".")[0] in NO_IO}
    assert not called(path.read_text(encoding="utf-8")) & NO_CALLS


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_import_only_shared_modules_and_their_own_family(path: Path) -> None:
    own = family_of(module_name(path))
    found = families_imported(imports_of(path))
    assert found <= ({own} if own else set()), f"{path.name} imports families {found}"


def test_model_modules_import_no_check_module() -> None:
    checks = check_modules()
    assert {"checkers.config_change.merge", "checkers.structured.checks"} <= checks
    for path in SOURCES:
        name = module_name(path)
        if name in checks or path.name == "__init__.py" or family_of(name) is None:
            continue
        assert not imports_of(path) & checks, f"{name} (a model) imports a check module"


def test_the_scan_sees_each_import_the_rules_forbid() -> None:
    """Else the tests above would pass on anything."""
    text = "import os\nfrom bundler import yamlfile\nfrom ..metrics import model\nprint(1)\n"
    names = imported(text, "checkers.intent")
    assert {"os", "bundler.yamlfile", "checkers.metrics.model"} <= names
    assert families_imported(names) == {"metrics"}
    assert families_imported(imported("from ..plain import brief", "checkers.intent")) == set()
    assert "print" in called(text)
    assert "checkers.intent.cases" in imported("from .cases import x", "checkers.intent")
