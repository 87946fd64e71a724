"""Dependencies inside bundler/ point one way, and the modules without I/O import none.

Read from the code's own imports (an AST scan: nothing is imported or run):

- each subpackage has a layer, and a module imports only from its own layer or lower
  ones: format <- container <- signatures <- run <- authoring/importers <- reports/store
  <- cli;
- a pure module (the manifest and claims rules, the read rules, the diff, the renderers
  of the JSON report) reaches, through every import it makes (in functions too), no
  module that spawns a process or writes a file;
- no module below the CLI runs the command line either, as a process (``python -m
  bundler ...``): the library calls the library.

Imports under ``if TYPE_CHECKING:`` are for the type checker only and are not followed
here (``tests/project/test_import_cycles.py`` counts them); neither are the package ``__init__``
files that Python runs on the way to a module (they only describe their package, or are
the public face over all of it).
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# lowest first; a module may import from its own layer or one below it
LAYERS: dict[str, int] = {
    "bundler.errors": 0,
    "bundler.codes": 0,
    "bundler.atomic": 0,
    "bundler.files": 0,
    "bundler.version": 0,
    "bundler.output": 1,
    "bundler.format": 1,
    "bundler.container": 2,
    "bundler.signatures": 3,
    "bundler.run": 4,
    "bundler.authoring": 5,
    "bundler.importers": 5,
    "bundler.reports": 6,
    "bundler.store": 6,
    "bundler.cli": 7,
    "bundler.__main__": 8,
    "bundler.generate": 8,
}

PURE = (
    "bundler.format.",
    "bundler.container.readrules",
    "bundler.signatures.trust",
    "bundler.signatures.envelope",
    "bundler.reports.cilog",
    "bundler.reports.common",
    "bundler.reports.diff",
    "bundler.reports.difftext",
    "bundler.reports.document",
    "bundler.reports.drawings",
    "bundler.reports.formats",
    "bundler.reports.html",
    "bundler.reports.junit",
    "bundler.reports.markdown",
    "bundler.reports.schema",
    "bundler.reports.text",
    "bundler.reports.view",
    "checkers.vacuity",  # ADR 0005's rules on a checker and its params (issue 44, item 3)
)

# what makes a module one that spawns processes or writes files
SPAWNING_OR_WRITING_MODULES = {
    "subprocess",
    "multiprocessing",
    "concurrent.futures",
    "tempfile",
    "shutil",
    "sqlite3",
    "socket",
}
WRITING_METHODS = {"write_bytes", "write_text", "mkdir", "makedirs", "touch", "unlink", "rmtree"}
OS_CALLS = {"replace", "rename", "remove", "system", "fork", "popen", "write", "execv", "spawnv"}


def sources(root: Path = REPO) -> dict[str, str]:
    """Module name -> source, for bundler/ and checkers/."""
    out = {}
    for package in ("bundler", "checkers"):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


@functools.cache
def _parse(source: str) -> ast.Module:
    return ast.parse(source)


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, except what sits under ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
                continue
            todo.append(child)


def import_graph(known: Mapping[str, str], everywhere: bool = False) -> dict[str, set[str]]:
    """Each module of the tree -> the modules (the tree's and the standard library's) it
    imports; with ``everywhere``, also those under ``if TYPE_CHECKING:``."""
    packages = {name.rpartition(".")[0] for name in known if "." in name}
    return {
        name: imports(name, source, known, name in packages, everywhere)
        for name, source in known.items()
    }


def imports(
    name: str, source: str, known: Mapping[str, str], is_package: bool, everywhere: bool = False
) -> set[str]:
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]
    tree = _parse(source)
    for node in ast.walk(tree) if everywhere else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return found


@functools.cache
def spawns_or_writes(source: str) -> tuple[str, ...]:
    """What in ``source`` spawns a process or writes a file (empty if nothing)."""
    seen = []
    for node in _runtime_nodes(_parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            seen += [f"imports {n}" for n in names if n in SPAWNING_OR_WRITING_MODULES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            if attr in WRITING_METHODS:
                seen.append(f"calls .{attr}() (line {node.lineno})")
            elif attr in OS_CALLS and isinstance(owner, ast.Name) and owner.id == "os":
                seen.append(f"calls os.{attr}() (line {node.lineno})")
        if isinstance(node, ast.Call) and _opens_for_writing(node):
            seen.append(f"opens a file for writing (line {node.lineno})")
    return tuple(seen)


def _opens_for_writing(call: ast.Call) -> bool:
    func = call.func
    named = isinstance(func, ast.Name) and func.id == "open"
    method = isinstance(func, ast.Attribute) and func.attr == "open"
    if not (named or method):
        return False
    modes = [k.value for k in call.keywords if k.arg == "mode"]
    modes += call.args[1:2] if named else call.args[:1]
    return any(
        isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+")
        for m in modes
    )


def layer_of(name: str) -> int | None:
    for prefix, layer in LAYERS.items():
        if name == prefix or name.startswith(prefix + "."):
            return layer
    return None


def layer_problems(known: Mapping[str, str]) -> list[str]:
    """Every import from a lower layer to a higher one."""
    problems = []
    for name, targets in sorted(import_graph(known).items()):
        mine = layer_of(name)
        if mine is None:
            continue
        for target in sorted(targets):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                problems.append(f"{name} (layer {mine}) imports {target} (layer {theirs})")
    return problems


def purity_problems(known: Mapping[str, str]) -> list[str]:
    """Every pure module that reaches, through its imports, one that spawns or writes."""
    problems = []
    graph = import_graph(known)
    for name in sorted(n for n in known if n.startswith(PURE)):
        path, todo, seen = {name: [name]}, [name], {name}
        while todo:
            current = todo.pop()
            what = list(spawns_or_writes(known[current])) if current in known else []
            what += [f"imports {m}" for m in [current] if m in SPAWNING_OR_WRITING_MODULES]
            if what:
                chain = " -> ".join(path[current])
                problems.append(f"{name} reaches {current} ({chain}), which {what[0]}")
                continue
            if current not in known:
                continue
            for target in graph[current]:
                followed = target in known or target in SPAWNING_OR_WRITING_MODULES
                if followed and target not in seen:
                    seen.add(target)
                    path[target] = [*path[current], target]
                    todo.append(target)
    return problems


def cli_runs(known: Mapping[str, str]) -> list[str]:
    """Every module below the CLI that names ``-m bundler...`` in a sequence it builds (the
    arguments of a process that would run reprobundle's command line)."""
    problems = []
    for name, source in sorted(known.items()):
        if (layer_of(name) or 0) >= LAYERS["bundler.cli"]:
            continue
        for node in _runtime_nodes(_parse(source)):
            if isinstance(node, ast.List | ast.Tuple):
                words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
                for flag, module in itertools.pairwise(words):
                    if flag == "-m" and isinstance(module, str) and module.startswith("bundler"):
                        problems.append(f"{name} runs `-m {module}` (line {node.lineno})")
    return problems


def test_no_lower_layer_imports_a_higher_one() -> None:
    assert layer_problems(sources()) == []


def test_modules_without_io_reach_no_module_that_spawns_or_writes() -> None:
    known = sources()
    assert sum(1 for n in known if n.startswith(PURE)) >= 15  # the scan sees them
    assert purity_problems(known) == []


def test_every_subpackage_has_a_layer() -> None:
    names = {n for n in sources() if n.startswith("bundler.")}
    assert [n for n in names if layer_of(n) is None] == []


@pytest.mark.parametrize(
    ("module", "planted", "expected"),
    [
        (
            "bundler.format.claims",
            "from bundler.run.runner import run_cases\n",
            "bundler.format.claims (layer 1) imports bundler.run.runner (layer 4)",
        ),
        (
            "bundler.container.readrules",
            "def f():\n    from bundler.reports import text\n",
            "bundler.container.readrules (layer 2) imports bundler.reports.text (layer 6)",
        ),
    ],
)
def test_a_planted_import_of_a_higher_layer_is_found(
    module: str, planted: str, expected: str
) -> None:
    known = sources()
    known[module] += planted
    assert expected in layer_problems(known)


@pytest.mark.parametrize(
    ("module", "planted", "reached"),
    [
        ("bundler.format.claims", "from bundler.run import sandbox\n", "bundler.run.sandbox"),
        ("bundler.reports.text", "from bundler import output\n", "bundler.output"),
        ("bundler.format.paths", "def f():\n    import subprocess\n", "bundler.format.paths"),
        ("bundler.reports.diff", "def f(p):\n    p.write_text('x')\n", "bundler.reports.diff"),
        ("bundler.format.hashing", "def f(p):\n    open(p, 'wb')\n", "bundler.format.hashing"),
    ],
)
def test_a_planted_io_import_in_a_pure_module_is_found(
    module: str, planted: str, reached: str
) -> None:
    known = sources()
    known[module] += planted
    assert any(p.startswith(f"{module} reaches {reached} ") for p in purity_problems(known))


def test_an_import_only_the_type_checker_sees_is_not_followed() -> None:
    known = sources()
    known["bundler.reports.text"] += (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bundler.run import verify\n"
    )
    assert purity_problems(known) == [] and layer_problems(known) == []


def test_no_module_below_the_cli_runs_the_command_line() -> None:
    """``build`` verifies at home through the library, never ``python -m bundler verify``."""
    known = sources()
    assert cli_runs(known) == []
    assert not any(
        target.startswith("bundler.cli")
        for name, targets in import_graph(known).items()
        if name.startswith("bundler.authoring")
        for target in targets
    )


def test_a_planted_run_of_the_command_line_is_found() -> None:
    known = sources()
    known["bundler.authoring.build"] += (
        "def f(path):\n    return [sys.executable, '-P', '-m', 'bundler', 'verify', path]\n"
    )
    found = [p.partition(" (line")[0] for p in cli_runs(known)]
    assert found == ["bundler.authoring.build runs `-m bundler`"]
