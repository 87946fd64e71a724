"""Learning a skeleton from reference traces: the prefix tree, the merge of equal
identities, the dominators, the merge guard, the order and (format 2) the repeats; the
steps are described in the package doc."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...arithmetic import left_sum
from .equivalence import Equivalence, is_blank
from .graphs import (
    Graph,
    covers,
    immediate_dominators,
    shortest_path,
    topological_order,
)
from .model import MODEL_FORMAT, MODEL_FORMAT_2, START, SUCCESS, Model, State
from .traces import Trace, canonical, invalid


def learn(
    traces: Sequence[Trace], equivalence: Equivalence, model_format: str = MODEL_FORMAT
) -> Model:
    """Learn the skeleton of successful runs from reference traces (see the package doc).

    The result does not depend on the order of ``traces``. Raises ``input.invalid`` for
    fewer than two traces, duplicate trace names or a reference that did not succeed.
    ``model_format`` 2 canonicalises identity text, makes state ids unique by
    construction and records repeated essential steps (the package doc).
    """
    second = model_format == MODEL_FORMAT_2
    if second and not equivalence.canonical:
        equivalence = Equivalence(equivalence.identity, equivalence.normalisers, True)
    ordered = _references(traces)
    tree = _prefix_tree(ordered, equivalence)  # 1.
    nodes: dict[str, list[int]] = {}  # each identity key's prefix-tree nodes, found once
    for node, key in tree.node_key.items():
        nodes.setdefault(key, []).append(node)
    state_of_key = (_state_ids_v2 if second else _state_ids)(  # 2.
        tree.identities, tree.observations, nodes
    )
    graph, edge_runs = _state_graph(tree, state_of_key)
    idom, chain = _dominator_chain(graph)  # 3.
    labels = {
        state_of_key[k]: _display_label(k, tree.identities, tree.observations, nodes)
        for k in state_of_key
    }
    visited = {name: {state_of_key[k] for k in keys} for name, keys in tree.paths.items()}
    guard = _merge_guard(graph, chain, visited, labels)  # 4.
    essential = set(chain) | {g["state"] for g in guard}
    if not essential:
        raise invalid(
            f"the {len(ordered)} reference traces share no state (identity: "
            f"{', '.join(equivalence.identity)}): an empty skeleton would pass any trace"
        )
    reduced, skeleton = _order(tree.paths, state_of_key, essential)  # 5.
    repeats = _repeats(tree.paths, state_of_key, essential) if second else ()

    why = {s: "dominator" for s in chain} | {g["state"]: "guard" for g in guard}
    reached = {
        state: tuple(n for n in sorted(visited) if state in visited[n])
        for state in state_of_key.values()
    }
    states = tuple(
        State(s, labels[s], tree.identities[key], s in essential, why.get(s), reached[s])
        for key, s in sorted(state_of_key.items(), key=lambda item: item[1])
    )
    edges = tuple(
        {
            "from": u,
            "to": v,
            "traces": sorted({name for name, _ in runs}),
            "actions": _distinct([action for _, action in runs if action is not None]),
        }
        for (u, v), runs in sorted(edge_runs.items())
    )
    merges = tuple(
        _merge_record(key, state_of_key[key], tree.identities[key], tree.observations, nodes)
        for key in sorted(state_of_key, key=lambda k: state_of_key[k])
    )
    return Model(
        equivalence=equivalence,
        sources=tuple(
            {"trace": t.name, "sha256": t.sha256, "steps": len(t.steps)} for t in ordered
        ),
        states=states,
        edges=edges,
        skeleton=skeleton,
        precedence=tuple(sorted(reduced)),
        immediate_dominators={n: idom[n] for n in sorted(idom) if n != START},
        guard=tuple(guard),
        merges=merges,
        kept_apart=_kept_apart(states, equivalence),
        prefix_tree={
            "nodes": len(tree.node_key),
            "observations": left_sum(len(o) for o in tree.observations.values()),
            "states": len(state_of_key),
        },
        format=model_format,
        repeats=repeats,
    )


def _references(traces: Sequence[Trace]) -> list[Trace]:
    """At least two successful reference traces of distinct names, in name order."""
    if len(traces) < 2:
        raise invalid(f"learning needs at least 2 reference traces, got {len(traces)}")
    names = [t.name for t in traces]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise invalid(f"reference trace name(s) used twice: {twice}")
    failed = [t.name for t in traces if t.outcome not in (None, "success")]
    if failed:
        raise invalid(f"reference traces must be successful runs; not so: {failed}")
    return sorted(traces, key=lambda t: t.name)


@dataclass
class _PrefixTree:
    """Step 1, the prefix-tree acceptor of the references: node 0 is the empty prefix."""

    node_key: dict[int, str] = field(default_factory=dict)  # node -> identity key
    observations: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    edges: dict[tuple[int, int], list[tuple[str, Any]]] = field(default_factory=dict)
    accepting: dict[int, list[str]] = field(default_factory=dict)  # node -> trace names
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)  # trace -> identity keys


def _prefix_tree(ordered: Sequence[Trace], equivalence: Equivalence) -> _PrefixTree:
    tree = _PrefixTree()
    children: dict[tuple[int, str], int] = {}
    for trace in ordered:
        node = 0
        keys: list[str] = []
        for step in trace.steps:
            identity = equivalence.identify(step)
            if is_blank(identity):
                raise invalid(
                    f"trace {trace.name!r} step {step.number} ({step.label!r}): after "
                    f"normalisation its identity {canonical(identity)} has nothing left to "
                    "identify a state by, so every such screen would be one state and the "
                    "skeleton could pass any trace; check 'identity' and 'normalise'"
                )
            key = canonical(identity)
            tree.identities.setdefault(key, identity)
            keys.append(key)
            child = children.get((node, key))
            if child is None:
                child = len(tree.node_key) + 1
                children[(node, key)] = child
                tree.node_key[child] = key
                tree.observations[child] = []
            tree.observations[child].append(
                {"trace": trace.name, "step": step.number, "raw": equivalence.raw(step)}
            )
            tree.edges.setdefault((node, child), []).append((trace.name, step.action))
            node = child
        tree.accepting.setdefault(node, []).append(trace.name)
        tree.paths[trace.name] = keys
    return tree


def _state_graph(
    tree: _PrefixTree, state_of_key: Mapping[str, str]
) -> tuple[Graph, dict[tuple[str, str], list[tuple[str, Any]]]]:
    """Step 2: prefix-tree nodes of equal identity merged into one state; the graph of
    states (from START, to SUCCESS) and, per edge, the (trace, action) runs that took it."""
    sid = {node: state_of_key[key] for node, key in tree.node_key.items()}
    sid[0] = START
    edge_runs: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for (u, v), runs in tree.edges.items():
        edge_runs.setdefault((sid[u], sid[v]), []).extend(runs)
    for node, trace_names in tree.accepting.items():
        edge_runs.setdefault((sid[node], SUCCESS), []).extend((n, None) for n in trace_names)
    graph = Graph([START, SUCCESS, *sorted(state_of_key.values())], edge_runs)
    return graph, edge_runs


def _dominator_chain(graph: Graph) -> tuple[dict[str, str], list[str]]:
    """Step 3: the immediate dominators, and the states dominating success, in order."""
    idom = immediate_dominators(graph, START)
    chain: list[str] = []
    node_id = idom[SUCCESS]
    while node_id != START:
        chain.append(node_id)
        node_id = idom[node_id]
    chain.reverse()
    return idom, chain


def _merge_guard(
    graph: Graph, chain: list[str], visited: Mapping[str, set[str]], labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Step 4: a state every reference reached must not drop out of the skeleton because
    merging created a path around it: such a state is kept essential, with that path."""
    common = set.intersection(*visited.values())
    guard: list[dict[str, Any]] = []
    for hidden in sorted(common - set(chain)):
        bypass = shortest_path(graph, START, SUCCESS, without=hidden)
        shown = " → ".join(labels.get(n, n) for n in bypass)
        guard.append(
            {
                "state": hidden,
                "label": labels[hidden],
                "bypass": bypass,
                "message": (
                    f"every reference trace ({len(visited)} of {len(visited)}) reached "
                    f"'{labels[hidden]}', but merging created the path {shown}, which no "
                    "reference trace took and which skips it: kept essential"
                ),
            }
        )
    return guard


def _order(
    paths: Mapping[str, list[str]], state_of_key: Mapping[str, str], essential: set[str]
) -> tuple[set[tuple[str, str]], tuple[str, ...]]:
    """Step 5: p before q when p is first reached before q in every reference; that
    order's transitive reduction, and the essential states in an order respecting it."""
    first: dict[str, dict[str, int]] = {}
    for name, keys in paths.items():
        first[name] = {}
        for position, key in enumerate(keys):
            first[name].setdefault(state_of_key[key], position)
    # the order is the intersection of one total order per reference: its reduction is
    # found from the positions (graphs.covers), never the whole order (quadratic in the
    # essential states of a long trace); the topological order of the reduction is the
    # order's (a state is ready when its immediate predecessors are placed)
    reduced = covers({s: tuple(first[n][s] for n in first) for s in essential})
    skeleton = topological_order(
        sorted(essential), reduced, key=lambda s: (left_sum(first[n][s] for n in first), s)
    )
    return reduced, skeleton


def _repeats(
    paths: Mapping[str, list[str]],
    state_of_key: Mapping[str, str],
    essential: set[str],
) -> tuple[tuple[str, str], ...]:
    """Pairs (p, q) of essential states where every reference reaches q at some point
    after it first reaches p, and p does not always come first (that is ``precedence``).
    A pair implied by another is left out: q again after r, where r must follow p."""
    first: dict[str, dict[str, int]] = {}
    last: dict[str, dict[str, int]] = {}
    for name, keys in paths.items():
        first[name], last[name] = {}, {}
        for position, key in enumerate(keys):
            first[name].setdefault(state_of_key[key], position)
            last[name][state_of_key[key]] = position

    def before(p: str, q: str) -> bool:  # (p, q) in the order
        return all(first[n][p] < first[n][q] for n in paths)

    # a q reached after p in every reference but not always first after it is reached
    # before p in some reference and again after it: only states that repeat qualify
    repeating = [q for q in essential if any(first[n][q] != last[n][q] for n in paths)]
    found = {
        (p, q)
        for q in repeating
        for p in essential
        if p != q and not before(p, q) and all(last[n][q] > first[n][p] for n in paths)
    }
    by_q: dict[str, list[str]] = {}
    for r, q in found:
        by_q.setdefault(q, []).append(r)
    kept = {(p, q) for p, q in found if not any(r != q and before(p, r) for r in by_q[q])}
    return tuple(sorted(kept))


def _display_label(
    key: str,
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    nodes: Mapping[str, list[int]],
) -> str:
    """The normalised label when the label is part of the identity, else the most
    frequent raw label among the state's observations (ties: alphabetical)."""
    identity = identities[key]
    if isinstance(identity.get("label"), str):
        return str(identity["label"]).strip() or "(empty label)"
    counts: dict[str, int] = {}
    for node in nodes.get(key, ()):
        for obs in observations[node]:
            raw = obs["raw"].get("label")
            if isinstance(raw, str):
                counts[raw] = counts.get(raw, 0) + 1
    if not counts:
        return canonical(dict(identity))
    return min(counts, key=lambda label: (-counts[label], label))


def _state_ids(
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    nodes: Mapping[str, list[int]],
) -> dict[str, str]:
    """Readable, order-independent ids: the label as a slug, ``-2``… when labels clash."""
    return _slug_ids(identities, observations, nodes, "-")


def _state_ids_v2(
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    nodes: Mapping[str, list[int]],
) -> dict[str, str]:
    """Readable ids, unique by construction: a slug (``[a-z0-9]`` runs joined by one
    ``-``) never holds ``--``, so the ``--2``, ``--3`` of a clash and the ``--state`` of a
    reserved name can never equal another state's id."""
    out = _slug_ids(identities, observations, nodes, "--")
    if len(set(out.values())) != len(out):  # cannot happen; a bug if it does
        raise RuntimeError("state ids are not unique")
    return out


def _slug_ids(
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    nodes: Mapping[str, list[int]],
    joint: str,
) -> dict[str, str]:
    """Each state's label as a slug; ``joint`` joins the suffix of a reserved name
    (``state``) or of a clash (``2``, ``3``… in key order)."""
    by_slug: dict[str, list[str]] = {}
    for key in identities:
        label = _display_label(key, identities, observations, nodes)
        slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "state"
        if slug in (START, SUCCESS):
            slug = f"{slug}{joint}state"
        by_slug.setdefault(slug, []).append(key)
    out: dict[str, str] = {}
    for slug, keys in by_slug.items():
        for i, key in enumerate(sorted(keys)):
            out[key] = slug if i == 0 else f"{slug}{joint}{i + 1}"
    return out


def _distinct(values: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(canonical(value), value)
    return [seen[k] for k in sorted(seen)]


def _merge_record(
    key: str,
    state_id: str,
    identity: Mapping[str, Any],
    observations: Mapping[int, list[dict[str, Any]]],
    by_key: Mapping[str, list[int]],
) -> dict[str, Any]:
    nodes = sorted(by_key.get(key, ()))
    observed = sorted(
        (obs for n in nodes for obs in observations[n]), key=lambda o: (o["trace"], o["step"])
    )
    raws = _distinct([o["raw"] for o in observed])
    if len(nodes) > 1:
        decision = (
            f"merged {len(nodes)} prefix-tree nodes ({len(observed)} observations): "
            f"equal normalised identity {canonical(dict(identity))}"
            + (f" from {len(raws)} different raw value(s)" if len(raws) > 1 else "")
        )
    else:
        decision = f"one prefix-tree node ({len(observed)} observation(s)): nothing to merge"
    return {
        "state": state_id,
        "identity": dict(identity),
        "prefix_tree_nodes": len(nodes),
        "merged": len(nodes) > 1,
        "decision": decision,
        "observations": observed,
    }


def _kept_apart(states: Sequence[State], equivalence: Equivalence) -> tuple[dict[str, Any], ...]:
    """States that share a label but not an identity: the conservative side of merging."""
    by_label: dict[str, list[State]] = {}
    for state in states:
        by_label.setdefault(state.label, []).append(state)
    out = []
    for label, group in sorted(by_label.items()):
        if len(group) > 1:
            differ = [
                name
                for name in equivalence.identity
                if len({canonical(s.identity.get(name)) for s in group}) > 1
            ]
            out.append(
                {
                    "label": label,
                    "states": [s.id for s in group],
                    "differ_on": differ,
                    "decision": f"not merged: the normalised identities differ on {differ}",
                }
            )
    return tuple(out)
