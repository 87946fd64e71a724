"""The graph steps of learning and matching, on small graphs of states: the immediate
dominators, a shortest path, and the order of essential states (its transitive
reduction, a topological order, the states before or after one).

Each one gives what networkx gives for the same graph (``tests/checkers/
test_trajectory_graphs.py`` holds them to it on many generated graphs): the dominator
tree, the reduction and the closures are unique, the topological order is the one
smallest by its key, and the shortest path is the one networkx's search in both
directions finds, neighbours taken in the order their edges were added. Written out so
that checking a trace does not import networkx (a tenth of a second).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Iterable
from typing import Any, TypeVar

N = TypeVar("N", bound=Hashable)


class Graph:
    """A directed graph: nodes and, per node, its successors and predecessors in the order
    their edges were first added (as networkx's ``DiGraph`` keeps them)."""

    def __init__(self, nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> None:
        self.succ: dict[str, dict[str, None]] = {n: {} for n in nodes}
        self.pred: dict[str, dict[str, None]] = {n: {} for n in self.succ}
        for u, v in edges:
            for node in (u, v):
                if node not in self.succ:
                    self.succ[node], self.pred[node] = {}, {}
            self.succ[u][v] = None
            self.pred[v][u] = None


def immediate_dominators(graph: Graph, start: str) -> dict[str, str]:
    """Each node reachable from ``start`` but ``start`` -> its immediate dominator
    (Cooper, Harvey and Kennedy's iteration over the reverse postorder)."""
    order = _postorder(graph, start)
    number = {node: i for i, node in enumerate(order)}
    idom: dict[str, str] = {start: start}

    def intersect(u: str, v: str) -> str:
        while u != v:
            while number[u] < number[v]:
                u = idom[u]
            while number[u] > number[v]:
                v = idom[v]
        return u

    changed = True
    while changed:
        changed = False
        for node in reversed(order[:-1]):
            done = [p for p in graph.pred[node] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    del idom[start]
    return idom


def _postorder(graph: Graph, start: str) -> list[str]:
    """The nodes reachable from ``start`` in depth-first postorder (``start`` last)."""
    order: list[str] = []
    seen = {start}
    stack = [(start, iter(graph.succ[start]))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child not in seen:
                seen.add(child)
                stack.append((child, iter(graph.succ[child])))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def shortest_path(graph: Graph, source: str, target: str, without: str) -> list[str]:
    """A shortest path from ``source`` to ``target`` avoiding ``without``: the one
    networkx's ``shortest_path`` finds on the subgraph without it (a search from both
    ends, the smaller fringe grown first). Raises ValueError when there is none."""
    if source == without or target == without:
        raise ValueError("no path")
    if source == target:
        return [source]
    pred: dict[str, str | None] = {source: None}
    succ: dict[str, str | None] = {target: None}
    forward, backward = [source], [target]
    meet = None
    while forward and backward and meet is None:
        if len(forward) <= len(backward):
            level, forward = forward, []
            for v in level:
                for w in graph.succ[v]:
                    if w == without:
                        continue
                    if w not in pred:
                        forward.append(w)
                        pred[w] = v
                    if w in succ:
                        meet = w
                        break
                if meet is not None:
                    break
        else:
            level, backward = backward, []
            for v in level:
                for w in graph.pred[v]:
                    if w == without:
                        continue
                    if w not in succ:
                        succ[w] = v
                        backward.append(w)
                    if w in pred:
                        meet = w
                        break
                if meet is not None:
                    break
    if meet is None:
        raise ValueError("no path")
    path: list[str] = []
    node: str | None = meet
    while node is not None:
        path.append(node)
        node = pred[node]
    path.reverse()
    node = succ[path[-1]]
    while node is not None:
        path.append(node)
        node = succ[node]
    return path


def reduction(relation: Collection[tuple[N, N]]) -> set[tuple[N, N]]:
    """The transitive reduction of a strict order given whole (transitively closed, so
    acyclic): the pairs with nothing between them."""
    after: dict[N, set[N]] = {}
    for p, q in relation:
        after.setdefault(p, set()).add(q)
    return {(p, q) for p, q in relation if not any(q in after.get(r, ()) for r in after[p])}


def covers(vectors: dict[N, tuple[int, ...]]) -> set[tuple[N, N]]:
    """The transitive reduction of the order "p before q when every coordinate of p is
    below q's" (coordinates distinct per position), found without the order itself: the
    nodes are swept by their first coordinate, and each p keeps the nodes above it with
    none of its covers found so far below them. A sweep stops once every node left is
    above one of p's covers (suffix minima), so a chain costs a step per node and a
    reduction of E pairs about E times the coordinates; ``reduction`` of the whole order
    gives the same pairs (``tests/checkers/test_trajectory_graphs.py``)."""
    nodes = sorted(vectors, key=lambda n: vectors[n][0])
    width = len(next(iter(vectors.values()), ()))
    suffix: list[tuple[float, ...]] = [(float("inf"),) * width] * (len(nodes) + 1)
    for j in range(len(nodes) - 1, -1, -1):
        suffix[j] = tuple(map(min, suffix[j + 1], vectors[nodes[j]]))
    out: set[tuple[N, N]] = set()
    for i, p in enumerate(nodes):
        low = vectors[p]
        found: list[tuple[int, ...]] = []
        for j in range(i + 1, len(nodes)):
            if any(all(m > c for m, c in zip(suffix[j], r, strict=True)) for r in found):
                break
            high = vectors[nodes[j]]
            if all(a < b for a, b in zip(low, high, strict=True)) and not any(
                all(a < b for a, b in zip(r, high, strict=True)) for r in found
            ):
                found.append(high)
                out.add((p, nodes[j]))
    return out


def topological_order(
    nodes: Iterable[N], relation: Collection[tuple[N, N]], key: Callable[[N], Any]
) -> tuple[N, ...]:
    """The nodes in the order that respects ``relation`` (pairs: first before second) and
    takes, of the nodes ready, the one smallest by ``key`` (keys unique), as networkx's
    ``lexicographical_topological_sort``."""
    waiting: dict[N, int] = dict.fromkeys(nodes, 0)
    after: dict[N, list[N]] = {}
    for p, q in relation:
        waiting[q] += 1
        after.setdefault(p, []).append(q)
    ready = [(key(n), n) for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    out: list[N] = []
    while ready:
        _, node = heapq.heappop(ready)
        out.append(node)
        for q in after.get(node, ()):
            waiting[q] -= 1
            if waiting[q] == 0:
                heapq.heappush(ready, (key(q), q))
    if len(out) != len(waiting):
        raise ValueError("the relation has a cycle")
    return tuple(out)


def closure(nodes: Iterable[N], relation: Iterable[tuple[N, N]]) -> dict[N, set[N]]:
    """Each node -> every node it reaches by the pairs of ``relation``."""
    after: dict[N, list[N]] = {n: [] for n in nodes}
    for p, q in relation:
        after.setdefault(p, []).append(q)
        after.setdefault(q, [])
    out: dict[N, set[N]] = {}
    for node in after:
        seen: set[N] = set()
        stack = list(after[node])
        while stack:
            q = stack.pop()
            if q not in seen:
                seen.add(q)
                stack.extend(after[q])
        out[node] = seen
    return out
