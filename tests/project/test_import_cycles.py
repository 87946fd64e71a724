"""No two modules of bundler/ or checkers/ import each other, directly or around a circle.

Read from the code's own imports (an AST scan: nothing is imported or run). Every import
counts, wherever it is written: at the top of a module, under ``if TYPE_CHECKING:`` (a
type the checker must resolve is a dependency all the same) and inside a function (a
deferred import is deferred, not absent). ``from bundler import __version__`` counts too.

An import names the module it loads: ``from bundler.store import index`` is an edge to
``bundler.store.index``, ``from bundler.store import Archive`` one to the package
``bundler.store``. The package ``__init__`` files Python runs on the way to a module are
not edges of their own (every module would otherwise depend on its package, and every
package that re-exports its modules would be a circle).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from tests.project.test_layers import import_graph, sources


def graph_of(known: Mapping[str, str]) -> dict[str, set[str]]:
    """Every import counts here, those for the type checker and in functions included."""
    graph = import_graph(known, everywhere=True)
    return {name: {m for m in found if m in known and m != name} for name, found in graph.items()}


def groups(graph: Mapping[str, set[str]]) -> list[set[str]]:
    """Each group of two or more modules that all reach each other (Tarjan's strongly
    connected components)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(start: str) -> None:  # iterative: the graph is a few hundred modules deep
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], order[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(group)

    for name in sorted(graph):
        if name not in order:
            visit(name)
    return found


def circle(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    """The shortest circle from the group's first module back to it (breadth first)."""
    start = min(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for target in sorted(graph[node] & group):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                todo.append(target)
    raise AssertionError(f"no circle in a strongly connected group: {sorted(group)}")


def described(known: Mapping[str, str]) -> list[str]:
    """Each group as one of its circles, and every module in it when there are more."""
    graph = graph_of(known)
    out = []
    for group in groups(graph):
        text = " -> ".join(circle(graph, group))
        if len(group) > 2:
            text += f" (all {len(group)} reach each other: {', '.join(sorted(group))})"
        out.append(text)
    return sorted(out)


def bundler_sources() -> dict[str, str]:
    """bundler/ and checkers/: one rulebook for both (checkers/ imports no bundler module,
    so a circle is within one of them)."""
    return sources()


def test_no_import_cycle_in_bundler_or_checkers() -> None:
    known = bundler_sources()
    assert len([n for n in known if n.startswith("checkers.")]) > 50  # the scan sees both
    assert len([n for n in known if n.startswith("bundler.")]) > 50
    assert described(known) == []


@pytest.mark.parametrize(
    ("module", "planted", "circle"),
    [
        (  # at the top
            "bundler.format.hashing",
            "from bundler.format import manifest\n",
            "bundler.format.hashing -> bundler.format.manifest -> bundler.format.hashing",
        ),
        (  # for the type checker only
            "bundler.store.objects",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from bundler.store.archive import Archive\n",
            "bundler.store.archive",
        ),
        (  # inside a function
            "bundler.errors",
            "def f():\n    from bundler.format import manifest\n",
            "bundler.errors -> bundler.format.manifest -> bundler.errors",
        ),
        (  # a relative import in checkers/: a model module importing its check module
            "checkers.config_change.model",
            "def f():\n    from .merge import reconstruct\n",
            "checkers.config_change.merge -> checkers.config_change.model",
        ),
        (  # the version, from the package that re-exports the library
            "bundler.format.manifest",
            "from bundler import __version__\n",
            "bundler -> ",
        ),
    ],
)
def test_a_planted_import_cycle_is_found_and_named(module: str, planted: str, circle: str) -> None:
    known = bundler_sources()
    known[module] += planted
    found = described(known)
    assert any(circle in c and module in c for c in found), found


def test_a_chain_that_does_not_return_is_no_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}
    assert groups(graph) == []
    closed = {**graph, "c": {"a"}}
    assert groups(closed) == [{"a", "b", "c"}]
    assert circle(closed, {"a", "b", "c"}) == ["a", "b", "c", "a"]
