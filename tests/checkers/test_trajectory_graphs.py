"""The graph steps of trajectory learning, written out in ``skeleton/graphs.py`` so that
checking a trace does not import networkx, give what networkx gave (the rule before the
rewrite): each one on many generated graphs, and ``learn`` as a whole on generated
references, against ``learn`` with networkx's functions put back in."""

from __future__ import annotations

import json
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.api import CheckerInputError
from checkers.trajectory.skeleton import Equivalence, learn, parse_trace
from checkers.trajectory.skeleton import learning as learning_module
from checkers.trajectory.skeleton.graphs import (
    Graph,
    closure,
    covers,
    immediate_dominators,
    reduction,
    shortest_path,
    topological_order,
)
from checkers.trajectory.skeleton.model import MODEL_FORMAT, MODEL_FORMAT_2

NAMES = ["start", "success", "a", "b", "c", "d", "e", "f"]
edges_of = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)), max_size=24)


def nx_graph(edges: list[tuple[str, str]]) -> Any:
    graph = nx.DiGraph()
    graph.add_nodes_from(NAMES)
    graph.add_edges_from(edges)
    return graph


@settings(max_examples=400)
@given(edges_of)
def test_immediate_dominators_are_networkx_s(edges: list[tuple[str, str]]) -> None:
    assert immediate_dominators(Graph(NAMES, edges), "start") == nx.immediate_dominators(
        nx_graph(edges), "start"
    )


@settings(max_examples=400)
@given(edges_of, st.sampled_from(NAMES[2:]))
def test_shortest_path_avoiding_a_node_is_the_one_networkx_finds(
    edges: list[tuple[str, str]], without: str
) -> None:
    graph = nx_graph(edges)
    try:
        wanted = nx.shortest_path(graph.subgraph(set(graph) - {without}), "start", "success")
    except nx.NetworkXNoPath:
        with pytest.raises(ValueError):
            shortest_path(Graph(NAMES, edges), "start", "success", without=without)
        return
    assert shortest_path(Graph(NAMES, edges), "start", "success", without=without) == wanted


# a strict order as learning builds one: p before q when p comes first in every ranking
rankings = st.lists(st.permutations(NAMES[:6]), min_size=1, max_size=4)


@settings(max_examples=300)
@given(rankings, st.lists(st.integers(0, 9), min_size=6, max_size=6))
def test_order_reduction_topological_order_and_closure_are_networkx_s(
    ranks: list[list[str]], weights: list[int]
) -> None:
    nodes = NAMES[:6]
    at = [{n: i for i, n in enumerate(r)} for r in ranks]
    order = {(p, q) for p in nodes for q in nodes if p != q and all(a[p] < a[q] for a in at)}
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(order)
    reduced = nx.transitive_reduction(graph)
    assert reduction(order) == set(reduced.edges)
    weight = dict(zip(nodes, weights, strict=True))

    def key(node: str) -> tuple[int, str]:
        return weight[node], node

    assert topological_order(nodes, order, key) == tuple(
        nx.lexicographical_topological_sort(reduced, key=key)
    )
    assert closure(nodes, order) == {n: nx.descendants(graph, n) for n in nodes}
    before = closure(nodes, [(q, p) for p, q in reduced.edges])
    assert before == {n: nx.ancestors(reduced, n) for n in nodes}
    # the reduction found from the positions, without the order (issue 42, item 7)
    assert covers({n: tuple(a[n] for a in at) for n in nodes}) == set(reduced.edges)
    assert topological_order(nodes, covers({n: tuple(a[n] for a in at) for n in nodes}), key) == (
        tuple(nx.lexicographical_topological_sort(reduced, key=key))
    )


@settings(max_examples=200)
@given(st.lists(st.permutations(list(range(12))), min_size=1, max_size=5))
def test_covers_of_positions_are_the_reduction_of_their_order(ranks: list[list[int]]) -> None:
    nodes = [f"s{i}" for i in range(12)]
    vectors = {n: tuple(r[i] for r in ranks) for i, n in enumerate(nodes)}
    order = {
        (p, q)
        for p in nodes
        for q in nodes
        if p != q and all(a < b for a, b in zip(vectors[p], vectors[q], strict=True))
    }
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(order)
    assert covers(vectors) == set(nx.transitive_reduction(graph).edges)


def test_learning_a_long_trace_never_builds_the_whole_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # issue 42, item 7: learn grew as N^2.4 (the whole order, its reduction, its closure);
    # a chain of 400 states has 79,800 ordered pairs and 399 in its reduction
    from checkers.trajectory.skeleton import graphs

    def whole(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the whole order was built")

    monkeypatch.setattr(graphs, "reduction", whole)
    monkeypatch.setattr(graphs, "closure", whole)
    compared = 0
    real_covers = graphs.covers

    def counted(vectors: Any) -> Any:
        nonlocal compared
        out = real_covers(vectors)
        compared = len(out)
        return out

    monkeypatch.setattr(learning_module, "covers", counted)
    states = [{"label": f"state {i}"} for i in range(400)]
    traces = [parse_trace({"trace": f"r{i}", "states": states}) for i in range(2)]
    model = learn(traces, Equivalence(), MODEL_FORMAT_2)
    assert len(model.skeleton) == 400 and len(model.precedence) == 399 == compared


class _NetworkxSteps:
    """``learn``'s graph steps as they were, with networkx."""

    @staticmethod
    def immediate_dominators(graph: Graph, start: str) -> dict[str, str]:
        return dict(nx.immediate_dominators(_as_nx(graph), start))

    @staticmethod
    def shortest_path(graph: Graph, source: str, target: str, without: str) -> list[str]:
        full = _as_nx(graph)
        return list(nx.shortest_path(full.subgraph(set(full) - {without}), source, target))

    @staticmethod
    def covers(vectors: dict[str, tuple[int, ...]]) -> set[tuple[str, str]]:
        graph = nx.DiGraph()
        graph.add_nodes_from(vectors)
        graph.add_edges_from(
            (p, q)
            for p in vectors
            for q in vectors
            if p != q and all(a < b for a, b in zip(vectors[p], vectors[q], strict=True))
        )
        return set(nx.transitive_reduction(graph).edges)

    @staticmethod
    def topological_order(nodes: Any, relation: Any, key: Any) -> tuple[str, ...]:
        graph = nx.DiGraph()
        graph.add_nodes_from(nodes)
        graph.add_edges_from(nx.transitive_reduction(_closed(nodes, relation)).edges)
        return tuple(nx.lexicographical_topological_sort(graph, key=key))


def _closed(nodes: Any, relation: Any) -> Any:
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(relation)
    return graph


class _Recorded(Graph):
    """A graph that keeps its nodes and edges in the order given, as networkx was given them."""

    def __init__(self, nodes: Any, edges: Any) -> None:
        self.given = (list(nodes), list(edges))
        super().__init__(*self.given)


def _as_nx(graph: Graph) -> Any:
    assert isinstance(graph, _Recorded)
    out = nx.DiGraph()
    out.add_nodes_from(graph.given[0])
    out.add_edges_from(graph.given[1])
    return out


LABELS = ["editor", "search", "results", "saved", "popup", "palette", "open"]
references = st.lists(
    st.lists(st.sampled_from(LABELS), min_size=1, max_size=9), min_size=2, max_size=5
)


@settings(max_examples=300)
@given(references, st.sampled_from([MODEL_FORMAT, MODEL_FORMAT_2]))
def test_learning_gives_the_model_networkx_gave(
    labelled: list[list[str]], model_format: str
) -> None:
    traces = [
        parse_trace({"trace": f"r{i}", "states": [{"label": x} for x in labels]})
        for i, labels in enumerate(labelled)
    ]
    ours = _learned(traces, model_format)
    steps = {name: getattr(_NetworkxSteps, name) for name in vars(_NetworkxSteps) if name[0] != "_"}
    steps["Graph"] = _Recorded
    saved = {name: getattr(learning_module, name) for name in steps}
    try:
        for name in saved:
            setattr(learning_module, name, steps[name])
        theirs = _learned(traces, model_format)
    finally:
        for name, function in saved.items():
            setattr(learning_module, name, function)
    assert ours == theirs


def _learned(traces: list[Any], model_format: str) -> str:
    try:
        model = learn(traces, Equivalence(), model_format)
    except CheckerInputError as exc:
        return f"{exc.code}: {exc.message}"
    return json.dumps(model.to_dict())
