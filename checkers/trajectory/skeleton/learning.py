"""Trajectory skeletons (seed 003): what a successful run must pass through.

An agent that drives a user interface reaches the same result by different paths: a
loading screen shows up or not, a run opens the search through the command palette,
a notification pops up in between. Comparing a new run step by step with a recorded
one fails on that noise. This module learns, from a few successful *reference traces*,
the states every successful run must reach and in which order (the *skeleton*), and
checks a new trace against it. It is pure: data in, data out; no I/O, no printing.

The steps, each one inspectable in the model file it produces:

1. **State equivalence** (:class:`Equivalence`). A state's identity is the value of a
   declared list of fields (``label`` and/or attribute names) after declared
   normalisers (regular expressions that strip timestamps, counters, ids). Two
   observations are the same state only when their normalised identities are equal:
   conservative and deterministic, no model is called.
2. **Prefix-tree acceptor**. The reference traces are inserted into a tree whose
   nodes are prefixes of observed identities.
3. **Merging**. Prefix-tree nodes with equal identity are merged into one state,
   which gives a graph with one ``start`` and one ``success`` node (every reference
   trace ends in ``success``). Every merge decision is recorded in the model.
4. **Dominators**. A state is essential when it dominates ``success``: every path from
   ``start`` to ``success`` passes through it (``networkx.immediate_dominators``).
5. **Merge guard**. Merging creates paths no reference trace took; then a state that
   every reference passed through can drop out of the dominators, and a run that skips
   it would pass. Such a state is kept essential, and the model names the path that
   would have hidden it. (Every reference trace is a path of the merged graph, so the
   dominators are always among the states all references passed through; with the
   guard the essential states are exactly those, and the dominator tree explains why.)
6. **Order**. Essential state ``p`` must precede ``q`` when ``p`` is first reached
   before ``q`` in every reference trace (for dominators this is the dominator
   chain). The skeleton is the essential states in an order that respects this.

A trace passes when its states contain the skeleton as an ordered subsequence: extra
states anywhere are noise. It fails with ``trajectory.missing`` (an essential state is
never reached) or ``trajectory.order`` (it is reached only before a state that must
precede it).

Model format 2 (``trajectory-model/2``, learned with ``format=MODEL_FORMAT_2``; format 1
is learned and matched exactly as before) adds three rules:

- identity text is canonicalised before the declared normalisers: Unicode NFC, no-break
  and other Unicode spaces as spaces, whitespace trimmed and collapsed;
- state ids are unique by construction: a clash of slugs gets ``--2``, ``--3`` (a slug
  never holds ``--``), so two labels that slug alike never share an id;
- repeated essential steps: when every reference reaches essential state ``q`` at some
  point after it first reaches essential state ``p`` although ``p`` does not always come
  first (save after "edit title", save again after "edit body"), the pair is recorded in
  ``repeats`` and a trace must too (``trajectory.repeat_missing``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ...api import CheckerInputError

MODEL_FORMAT = "trajectory-model/1"
MODEL_FORMAT_2 = "trajectory-model/2"
MODEL_FORMATS = (MODEL_FORMAT, MODEL_FORMAT_2)
START = "start"
SUCCESS = "success"
_STEP_KEYS = frozenset({"label", "attrs", "action", "at", "note"})
_RULE_KEYS = frozenset({"field", "pattern", "replace"})


def canonical(value: Any) -> str:
    """The canonical JSON text of a value: sorted keys, no spaces, UTF-8 kept. YAML
    timestamps become ISO 8601 text; any other non-JSON value its ``repr``."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_as_text
    )


def _as_text(value: Any) -> str:
    if isinstance(value, datetime.date):  # also datetime.datetime
        return value.isoformat()
    return repr(value)


def _invalid(message: str) -> CheckerInputError:
    return CheckerInputError("input.invalid", message)


def _bad_params(message: str) -> CheckerInputError:
    return CheckerInputError("params.invalid", message)


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class Step:
    """One observed state of a trace, and the action that led to it."""

    number: int  # 1-based position in the trace
    label: str
    attrs: Mapping[str, Any]
    action: Any = None


@dataclass(frozen=True)
class Trace:
    """A parsed trace. ``sha256`` is the hash of its canonical JSON document, so the
    same trace written as YAML, JSON or JSON Lines has the same hash."""

    name: str
    steps: tuple[Step, ...]
    outcome: str | None
    sha256: str
    header: Mapping[str, Any] = field(default_factory=dict)


def parse_trace(value: Any) -> Trace:
    """A trace from a loaded YAML/JSON document or from JSON Lines records.

    Document: ``{trace: NAME, states: [STATE, ...], outcome?: success|failure, ...}``.
    JSON Lines (a list of ``(line number, value)`` pairs): the first record is the
    header (``{"trace": NAME, ...}``), every following record is one STATE.
    STATE: ``{label: TEXT, attrs?: {NAME: VALUE}, action?: VALUE, at?: TIME, note?: TEXT}``
    where ``action`` is what led from the previous state to this one.
    Raises ``CheckerInputError('input.invalid')`` naming the first problem found.
    """
    places: list[str]
    if isinstance(value, list) and value and all(_is_record(v) for v in value):
        (first_line, header), *rest = value
        if not isinstance(header, dict) or "label" in header:
            raise _invalid(f"line {first_line}: the first record must be the trace header")
        document = {**header, "states": [record for _, record in rest]}
        places = [f"line {number}" for number, _ in rest]
    elif isinstance(value, dict):
        document = value
        raw_states = value.get("states")
        count = len(raw_states) if isinstance(raw_states, list) else 0
        places = [f"states[{i}]" for i in range(count)]
    else:
        raise _invalid("a trace is a mapping with 'trace' and 'states' (or JSON Lines records)")
    # plain JSON data from here on: YAML timestamps become text, so the model file, the
    # hash and the comparison with a stored model see the same values
    document = json.loads(json.dumps(document, ensure_ascii=False, default=_as_text))
    name = document.get("trace")
    if not isinstance(name, str) or not name.strip():
        raise _invalid("a trace needs a non-empty 'trace' name")
    states = document.get("states")
    if not isinstance(states, list) or not states:
        raise _invalid(f"trace {name!r}: 'states' must be a non-empty list")
    outcome = document.get("outcome")
    if outcome is not None and not isinstance(outcome, str):
        raise _invalid(f"trace {name!r}: 'outcome' must be text")
    steps = tuple(_parse_step(name, places[i], i + 1, record) for i, record in enumerate(states))
    header = {k: v for k, v in document.items() if k not in ("trace", "states")}
    digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
    return Trace(name, steps, outcome, digest, header)


def _is_record(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int)


def _parse_step(trace: str, where: str, number: int, record: Any) -> Step:
    if not isinstance(record, dict):
        raise _invalid(f"trace {trace!r} {where}: a state must be a mapping")
    unknown = sorted(set(record) - _STEP_KEYS)
    if unknown:
        raise _invalid(
            f"trace {trace!r} {where}: unknown field(s) {unknown}; a state has {sorted(_STEP_KEYS)}"
        )
    label = record.get("label")
    if not isinstance(label, str) or not label.strip():
        raise _invalid(f"trace {trace!r} {where}: a state needs a non-empty 'label'")
    attrs = record.get("attrs", {})
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise _invalid(f"trace {trace!r} {where}: 'attrs' must be a mapping of names")
    return Step(number, label, attrs, record.get("action"))


# ------------------------------------------------------------------ equivalence


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclass(frozen=True)
class Normaliser:
    """``re.sub(pattern, replace, value)`` on a string identity field (``*`` = every one)."""

    pattern: str
    replace: str = ""
    field: str = "*"

    def applies_to(self, name: str) -> bool:
        return self.field in ("*", name)

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "pattern": self.pattern, "replace": self.replace}


@dataclass(frozen=True)
class Equivalence:
    """When two observed states are the same state.

    ``identity`` names the fields that define a state: ``label`` is the state's label,
    any other name an attribute (absent and null are the same value). Normalisers run in
    order on string values. Attributes not named are ignored (screenshot ids, timings).
    """

    identity: tuple[str, ...] = ("label",)
    normalisers: tuple[Normaliser, ...] = ()
    canonical: bool = False  # model format 2: canonical_text() before the normalisers

    @classmethod
    def from_params(cls, identity: Any, normalise: Any, canonical: bool = False) -> Equivalence:
        """Validate the ``identity`` and ``normalise`` params (``params.invalid`` if wrong)."""
        if not isinstance(identity, list | tuple) or not identity:
            raise _bad_params("'identity' must be a non-empty list of field names")
        names: list[str] = []
        for name in identity:
            if not isinstance(name, str) or not name:
                raise _bad_params(f"'identity' entries must be field names, got {name!r}")
            if name in names:
                raise _bad_params(f"'identity' names {name!r} twice")
            names.append(name)
        if not isinstance(normalise, list | tuple):
            raise _bad_params("'normalise' must be a list of {field, pattern, replace} rules")
        rules: list[Normaliser] = []
        for i, rule in enumerate(normalise):
            if not isinstance(rule, dict):
                raise _bad_params(f"normalise[{i}] must be a mapping")
            unknown = sorted(set(rule) - _RULE_KEYS)
            if unknown:
                raise _bad_params(f"normalise[{i}]: unknown key(s) {unknown}")
            pattern = rule.get("pattern")
            replace = rule.get("replace", "")
            target = rule.get("field", "*")
            if not isinstance(pattern, str) or not pattern:
                raise _bad_params(f"normalise[{i}] needs a 'pattern' (a regular expression)")
            if not isinstance(replace, str) or not isinstance(target, str):
                raise _bad_params(f"normalise[{i}]: 'field' and 'replace' must be text")
            if target != "*" and target not in names:
                raise _bad_params(
                    f"normalise[{i}] targets {target!r}, which is not an identity field {names}"
                )
            try:
                _compiled(pattern)
            except re.error as exc:
                raise _bad_params(
                    f"normalise[{i}]: bad regular expression {pattern!r}: {exc}"
                ) from None
            rules.append(Normaliser(pattern, replace, target))
        return cls(tuple(names), tuple(rules), canonical)

    @classmethod
    def from_dict(cls, value: Any, canonical: bool = False) -> Equivalence:
        if not isinstance(value, dict):
            raise _bad_params("params must be a mapping with 'identity' and 'normalise'")
        return cls.from_params(value.get("identity"), value.get("normalise", []), canonical)

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": list(self.identity),
            "normalise": [rule.to_dict() for rule in self.normalisers],
        }

    def raw(self, step: Step) -> dict[str, Any]:
        """The identity fields of a step before normalisation."""
        return {
            name: step.label if name == "label" else step.attrs.get(name) for name in self.identity
        }

    def identify(self, step: Step) -> dict[str, Any]:
        """The normalised identity of a step."""
        out: dict[str, Any] = {}
        for name, value in self.raw(step).items():
            if isinstance(value, str):
                if self.canonical:
                    value = canonical_text(value)
                for rule in self.normalisers:
                    if rule.applies_to(name):
                        value = _compiled(rule.pattern).sub(rule.replace, value)
            out[name] = value
        return out


def canonical_text(value: str) -> str:
    """Text as a person reads it: NFC, every Unicode space (no-break ones included) a
    space, trimmed and collapsed. ``"Search\u00a0 results "`` is ``"Search results"``."""
    return " ".join(unicodedata.normalize("NFC", value).split())


# ------------------------------------------------------------------------ model


@dataclass(frozen=True)
class State:
    """A state of the merged graph."""

    id: str
    label: str
    identity: Mapping[str, Any]
    essential: bool
    why: str | None  # "dominator", "guard", or None for an optional state
    traces: tuple[str, ...]  # reference traces that reached it

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "identity": dict(self.identity),
            "essential": self.essential,
            "why": self.why,
            "traces": list(self.traces),
        }


@dataclass(frozen=True)
class Model:
    """A learned skeleton and everything a reviewer needs to see how it was learned.

    ``skeleton`` lists the essential states in an order that respects ``precedence``
    (pairs ``[p, q]``: p must come before q; the transitive reduction). ``merges``,
    ``kept_apart`` and ``guard`` record the decisions; ``graph`` the merged graph;
    ``immediate_dominators`` the dominator tree. Round-trips through :meth:`to_dict`.
    """

    equivalence: Equivalence
    sources: tuple[Mapping[str, Any], ...]
    states: tuple[State, ...]
    edges: tuple[Mapping[str, Any], ...]
    skeleton: tuple[str, ...]
    precedence: tuple[tuple[str, str], ...]
    immediate_dominators: Mapping[str, str]
    guard: tuple[Mapping[str, Any], ...]
    merges: tuple[Mapping[str, Any], ...]
    kept_apart: tuple[Mapping[str, Any], ...]
    prefix_tree: Mapping[str, int]
    format: str = MODEL_FORMAT
    repeats: tuple[tuple[str, str], ...] = ()  # format 2: (p, q): q reached again after p

    def state(self, state_id: str) -> State:
        return next(s for s in self.states if s.id == state_id)

    def label(self, state_id: str) -> str:
        return state_id if state_id in (START, SUCCESS) else self.state(state_id).label

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.states if not s.essential)

    def predecessors(self) -> dict[str, set[str]]:
        """Every essential state that must come before each essential state (closure)."""
        import networkx as nx  # imported here: it is slow to import

        graph = nx.DiGraph()
        graph.add_nodes_from(self.skeleton)
        graph.add_edges_from(self.precedence)
        return {s: set(nx.ancestors(graph, s)) for s in self.skeleton}

    def to_dict(self) -> dict[str, Any]:
        out = self._to_dict()
        if self.format == MODEL_FORMAT_2:
            at = list(out).index("precedence") + 1
            items = list(out.items())
            items.insert(at, ("repeats", [list(pair) for pair in self.repeats]))
            out = dict(items)
        return out

    def _to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "params": self.equivalence.to_dict(),
            "sources": [dict(s) for s in self.sources],
            "skeleton": [
                {"state": s, "label": self.label(s), "why": self.state(s).why}
                for s in self.skeleton
            ],
            "precedence": [list(pair) for pair in self.precedence],
            "optional": list(self.optional),
            "guard": [dict(g) for g in self.guard],
            "states": [s.to_dict() for s in self.states],
            "edges": [dict(e) for e in self.edges],
            "immediate_dominators": dict(self.immediate_dominators),
            "merges": [dict(m) for m in self.merges],
            "kept_apart": [dict(k) for k in self.kept_apart],
            "prefix_tree": dict(self.prefix_tree),
        }

    @classmethod
    def from_dict(cls, value: Any, formats: Sequence[str] = (MODEL_FORMAT,)) -> Model:
        """Parse a model file (``input.invalid`` naming the problem if malformed) of one
        of ``formats``."""
        _check_format(value, formats)
        model = cls._parsed(value)
        _check_consistency(model)
        problem = _bookkeeping_problem(model)
        if problem:
            raise _invalid(f"the model file is malformed: {problem}")
        return model

    @classmethod
    def _parsed(cls, value: dict[str, Any]) -> Model:
        """The model a file of a known format holds; a missing or mistyped field is
        ``input.invalid``."""
        model_format = value["format"]
        second = model_format == MODEL_FORMAT_2
        try:
            equivalence = Equivalence.from_dict(value["params"], canonical=second)
            states = tuple(
                State(
                    _text(s["id"]),
                    _text(s["label"]),
                    dict(s["identity"]),
                    bool(s["essential"]),
                    s["why"] if s["why"] in ("dominator", "guard") else None,
                    tuple(_text(t) for t in s["traces"]),
                )
                for s in value["states"]
            )
            skeleton = tuple(_text(entry["state"]) for entry in value["skeleton"])
            precedence = tuple((_text(p), _text(q)) for p, q in value["precedence"])
            return cls(
                equivalence=equivalence,
                sources=tuple(dict(s) for s in value["sources"]),
                states=states,
                edges=tuple(dict(e) for e in value["edges"]),
                skeleton=skeleton,
                precedence=precedence,
                immediate_dominators=dict(value["immediate_dominators"]),
                guard=tuple(dict(g) for g in value["guard"]),
                merges=tuple(dict(m) for m in value["merges"]),
                kept_apart=tuple(dict(k) for k in value["kept_apart"]),
                prefix_tree=dict(value["prefix_tree"]),
                format=model_format,
                repeats=(
                    tuple((_text(p), _text(q)) for p, q in value["repeats"]) if second else ()
                ),
            )
        except CheckerInputError as exc:
            raise _invalid(f"model params: {exc.message}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise _invalid(f"the model file is malformed ({type(exc).__name__}: {exc})") from None


def _check_format(value: Any, formats: Sequence[str]) -> None:
    """A model file is a mapping whose ``format`` is one of ``formats``."""
    if not isinstance(value, dict) or value.get("format") not in formats:
        found = value.get("format") if isinstance(value, dict) else None
        hint = (
            f" (this one is {found!r}: learn it again with `reprobundle trajectory learn`, "
            "or use the checker version that reads it)"
            if isinstance(found, str) and found in MODEL_FORMATS
            else ""
        )
        wanted = " or ".join(repr(f) for f in formats)
        raise _invalid(f"a trajectory model starts with format = {wanted}{hint}")


def _check_consistency(model: Model) -> None:
    """A parsed model must be one ``learn`` could have written: its skeleton the essential
    states in an order respecting precedence, every state a distinct, non-empty identity."""
    states, skeleton, precedence = model.states, model.skeleton, model.precedence
    ids = [s.id for s in states]
    if len(set(ids)) != len(ids):
        raise _invalid("the model names a state twice")
    essential = {s.id for s in states if s.essential}
    if set(skeleton) != essential or len(skeleton) != len(essential):
        raise _invalid("the model's skeleton is not its set of essential states")
    if not all(p in essential and q in essential for p, q in precedence):
        raise _invalid("the model's precedence names a state outside the skeleton")
    if not all(p in essential and q in essential and p != q for p, q in model.repeats):
        raise _invalid("the model's repeats name a state outside the skeleton")
    order = {s: i for i, s in enumerate(skeleton)}
    if any(order[p] >= order[q] for p, q in precedence):
        raise _invalid("the model's skeleton order contradicts its precedence")
    if not skeleton:
        raise _invalid("the model's skeleton is empty: it would pass any trace")
    fields = set(model.equivalence.identity)
    odd = [s.id for s in states if set(s.identity) != fields]
    if odd:
        raise _invalid(f"state(s) {odd} do not have the identity fields {sorted(fields)}")
    blank = [s.id for s in states if _blank(s.identity)]
    if blank:
        raise _invalid(f"state(s) {blank} have an empty identity: they would match anything")
    keys = [canonical(dict(s.identity)) for s in states]
    if len(set(keys)) != len(keys):
        raise _invalid("two states of the model have the same identity")


# The record-keeping fields of a model file: what each entry must hold (the drawings and
# summaries read them), as field -> (key, accepted types).
_RECORDS: dict[str, tuple[tuple[str, type], ...]] = {
    "edges": (("from", str), ("to", str), ("traces", list), ("actions", list)),
    "merges": (("state", str), ("merged", bool), ("decision", str)),
    "guard": (("state", str), ("label", str), ("bypass", list), ("message", str)),
    "kept_apart": (("label", str), ("states", list), ("decision", str)),
}


def _bookkeeping_problem(model: Model) -> str | None:
    """The first malformed record-keeping entry, named; None if all are well formed."""
    entries: dict[str, tuple[Mapping[str, Any], ...]] = {
        "edges": model.edges,
        "merges": model.merges,
        "guard": model.guard,
        "kept_apart": model.kept_apart,
    }
    for name, wanted in _RECORDS.items():
        for i, entry in enumerate(entries[name]):
            for key, kind in wanted:
                value = entry.get(key)
                if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                    return f"{name}[{i}].{key} is missing or not {_kind_name(kind)}"
    for key in ("nodes", "observations", "states"):
        value = model.prefix_tree.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"prefix_tree.{key} is missing or not a whole number"
    return None


def _kind_name(kind: type) -> str:
    return {str: "text", bool: "true/false", list: "a list"}.get(kind, kind.__name__)


def _blank(identity: Mapping[str, Any]) -> bool:
    """No identity field holds anything (null or empty text): not a state one can name."""
    return all(v is None or (isinstance(v, str) and not v.strip()) for v in identity.values())


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------- learning


def learn(
    traces: Sequence[Trace], equivalence: Equivalence, model_format: str = MODEL_FORMAT
) -> Model:
    """Learn the skeleton of successful runs from reference traces (see the module doc).

    The result does not depend on the order of ``traces``. Raises ``input.invalid`` for
    fewer than two traces, duplicate trace names or a reference that did not succeed.
    ``model_format`` 2 canonicalises identity text, makes state ids unique by
    construction and records repeated essential steps (the module doc).
    """
    second = model_format == MODEL_FORMAT_2
    if second and not equivalence.canonical:
        equivalence = Equivalence(equivalence.identity, equivalence.normalisers, True)
    ordered = _references(traces)
    tree = _prefix_tree(ordered, equivalence)  # 1.
    state_of_key = (_state_ids_v2 if second else _state_ids)(  # 2.
        tree.identities, tree.observations, tree.node_key
    )
    graph, edge_runs = _state_graph(tree, state_of_key)
    idom, chain = _dominator_chain(graph)  # 3.
    labels = {
        state_of_key[k]: _display_label(k, tree.identities, tree.observations, tree.node_key)
        for k in state_of_key
    }
    visited = {name: {state_of_key[k] for k in keys} for name, keys in tree.paths.items()}
    guard = _merge_guard(graph, chain, visited, labels)  # 4.
    essential = set(chain) | {g["state"] for g in guard}
    if not essential:
        raise _invalid(
            f"the {len(ordered)} reference traces share no state (identity: "
            f"{', '.join(equivalence.identity)}): an empty skeleton would pass any trace"
        )
    order_graph, reduced, skeleton = _order(tree.paths, state_of_key, essential)  # 5.
    repeats = _repeats(tree.paths, state_of_key, essential, order_graph) if second else ()

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
        _merge_record(
            key, state_of_key[key], tree.identities[key], tree.observations, tree.node_key
        )
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
        precedence=tuple(sorted(reduced.edges)),
        immediate_dominators={n: idom[n] for n in sorted(idom) if n != START},
        guard=tuple(guard),
        merges=merges,
        kept_apart=_kept_apart(states, equivalence),
        prefix_tree={
            "nodes": len(tree.node_key),
            "observations": sum(len(o) for o in tree.observations.values()),
            "states": len(state_of_key),
        },
        format=model_format,
        repeats=repeats,
    )


def _references(traces: Sequence[Trace]) -> list[Trace]:
    """At least two successful reference traces of distinct names, in name order."""
    if len(traces) < 2:
        raise _invalid(f"learning needs at least 2 reference traces, got {len(traces)}")
    names = [t.name for t in traces]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _invalid(f"reference trace name(s) used twice: {twice}")
    failed = [t.name for t in traces if t.outcome not in (None, "success")]
    if failed:
        raise _invalid(f"reference traces must be successful runs; not so: {failed}")
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
            if _blank(identity):
                raise _invalid(
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
) -> tuple[Any, dict[tuple[str, str], list[tuple[str, Any]]]]:
    """Step 2: prefix-tree nodes of equal identity merged into one state; the graph of
    states (from START, to SUCCESS) and, per edge, the (trace, action) runs that took it."""
    import networkx as nx  # imported here: it is slow to import

    sid = {node: state_of_key[key] for node, key in tree.node_key.items()}
    sid[0] = START
    graph = nx.DiGraph()
    graph.add_nodes_from([START, SUCCESS, *sorted(state_of_key.values())])
    edge_runs: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for (u, v), runs in tree.edges.items():
        edge_runs.setdefault((sid[u], sid[v]), []).extend(runs)
    for node, trace_names in tree.accepting.items():
        edge_runs.setdefault((sid[node], SUCCESS), []).extend((n, None) for n in trace_names)
    graph.add_edges_from(edge_runs)
    return graph, edge_runs


def _dominator_chain(graph: Any) -> tuple[dict[str, str], list[str]]:
    """Step 3: the immediate dominators, and the states dominating success, in order."""
    import networkx as nx

    idom: dict[str, str] = nx.immediate_dominators(graph, START)
    chain: list[str] = []
    node_id = idom[SUCCESS]
    while node_id != START:
        chain.append(node_id)
        node_id = idom[node_id]
    chain.reverse()
    return idom, chain


def _merge_guard(
    graph: Any, chain: list[str], visited: Mapping[str, set[str]], labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Step 4: a state every reference reached must not drop out of the skeleton because
    merging created a path around it: such a state is kept essential, with that path."""
    import networkx as nx

    common = set.intersection(*visited.values())
    guard: list[dict[str, Any]] = []
    for hidden in sorted(common - set(chain)):
        bypass = nx.shortest_path(graph.subgraph(set(graph) - {hidden}), START, SUCCESS)
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
) -> tuple[Any, Any, tuple[str, ...]]:
    """Step 5: p before q when p is first reached before q in every reference; the order
    graph, its transitive reduction, and the essential states in an order respecting it."""
    import networkx as nx

    first: dict[str, dict[str, int]] = {}
    for name, keys in paths.items():
        first[name] = {}
        for position, key in enumerate(keys):
            first[name].setdefault(state_of_key[key], position)
    order_graph = nx.DiGraph()
    order_graph.add_nodes_from(essential)
    order_graph.add_edges_from(
        (p, q)
        for p in essential
        for q in essential
        if p != q and all(first[n][p] < first[n][q] for n in first)
    )
    reduced = nx.transitive_reduction(order_graph)
    skeleton = tuple(
        nx.lexicographical_topological_sort(
            reduced, key=lambda s: (sum(first[n][s] for n in first), s)
        )
    )
    return order_graph, reduced, skeleton


def _repeats(
    paths: Mapping[str, list[str]],
    state_of_key: Mapping[str, str],
    essential: set[str],
    order: Any,
) -> tuple[tuple[str, str], ...]:
    """Pairs (p, q) of essential states where every reference reaches q at some point
    after it first reaches p, and p does not always come first (that is ``precedence``).
    A pair implied by another is left out: q again after r, where r must follow p."""
    import networkx as nx

    first: dict[str, dict[str, int]] = {}
    last: dict[str, dict[str, int]] = {}
    for name, keys in paths.items():
        first[name], last[name] = {}, {}
        for position, key in enumerate(keys):
            first[name].setdefault(state_of_key[key], position)
            last[name][state_of_key[key]] = position
    found = {
        (p, q)
        for p in essential
        for q in essential
        if p != q and not order.has_edge(p, q) and all(last[n][q] > first[n][p] for n in paths)
    }
    later = {p: nx.descendants(order, p) for p in essential}
    kept = {(p, q) for p, q in found if not any((r, q) in found for r in later[p] if r != q)}
    return tuple(sorted(kept))


def _display_label(
    key: str,
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    node_key: Mapping[int, str],
) -> str:
    """The normalised label when the label is part of the identity, else the most
    frequent raw label among the state's observations (ties: alphabetical)."""
    identity = identities[key]
    if isinstance(identity.get("label"), str):
        return str(identity["label"]).strip() or "(empty label)"
    counts: dict[str, int] = {}
    for node, k in node_key.items():
        if k == key:
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
    node_key: Mapping[int, str],
) -> dict[str, str]:
    """Readable, order-independent ids: the label as a slug, ``-2``… when labels clash."""
    return _slug_ids(identities, observations, node_key, "-")


def _state_ids_v2(
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    node_key: Mapping[int, str],
) -> dict[str, str]:
    """Readable ids, unique by construction: a slug (``[a-z0-9]`` runs joined by one
    ``-``) never holds ``--``, so the ``--2``, ``--3`` of a clash and the ``--state`` of a
    reserved name can never equal another state's id."""
    out = _slug_ids(identities, observations, node_key, "--")
    if len(set(out.values())) != len(out):  # cannot happen; a bug if it does
        raise RuntimeError("state ids are not unique")
    return out


def _slug_ids(
    identities: Mapping[str, Mapping[str, Any]],
    observations: Mapping[int, list[dict[str, Any]]],
    node_key: Mapping[int, str],
    joint: str,
) -> dict[str, str]:
    """Each state's label as a slug; ``joint`` joins the suffix of a reserved name
    (``state``) or of a clash (``2``, ``3``… in key order)."""
    by_slug: dict[str, list[str]] = {}
    for key in identities:
        label = _display_label(key, identities, observations, node_key)
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
    node_key: Mapping[int, str],
) -> dict[str, Any]:
    nodes = sorted(n for n, k in node_key.items() if k == key)
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


# --------------------------------------------------------------------- checking


@dataclass(frozen=True)
class Problem:
    """Why a trace does not match the skeleton."""

    code: str  # trajectory.missing | trajectory.order
    state: str
    message: str
    details: Mapping[str, Any]


@dataclass(frozen=True)
class Match:
    """The result of matching a trace against a skeleton."""

    trace: str
    skeleton: tuple[tuple[str, str], ...]  # (state id, label), in skeleton order
    positions: Mapping[str, int | None]  # essential state -> step number (1-based)
    problems: tuple[Problem, ...]
    steps: int

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def matched(self) -> int:
        return sum(1 for p in self.positions.values() if p is not None)

    @property
    def coverage(self) -> float:
        return self.matched / len(self.skeleton) if self.skeleton else 1.0

    def explain(self) -> str:
        """One sentence a tester understands."""
        total = len(self.skeleton)
        if self.passed:
            reached = sorted(self.skeleton, key=lambda item: self.positions[item[0]] or 0)
            path = " → ".join(f"{label} (step {self.positions[s]})" for s, label in reached)
            noise = self.steps - total
            return (
                f"trace '{self.trace}' passes: all {total} essential states reached in order: "
                f"{path}; {noise} other step(s) are allowed noise."
            )
        reasons = "; ".join(p.message for p in self.problems)
        return (
            f"trace '{self.trace}' fails: {reasons} "
            f"(coverage {self.matched} of {total} essential states)."
        )

    def details(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "coverage": {
                "matched": self.matched,
                "essential": len(self.skeleton),
                "share": round(self.coverage, 6),
            },
            "positions": [
                {"state": s, "label": label, "step": self.positions[s]}
                for s, label in self.skeleton
            ],
        }


def match(model: Model, trace: Trace) -> Match:
    """Find the essential states of ``model`` in ``trace`` as an ordered subsequence.

    Each essential state is matched at its first occurrence after every state that must
    precede it (greedy; this finds a match whenever one exists). Steps that match no
    essential state are noise. Every problem is collected, not just the first.
    """
    by_key = {canonical(dict(s.identity)): s.id for s in model.states}
    occurrences: dict[str, list[int]] = {}
    for step in trace.steps:
        state = by_key.get(canonical(model.equivalence.identify(step)))
        if state is not None:
            occurrences.setdefault(state, []).append(step.number)
    before = model.predecessors()
    positions: dict[str, int | None] = {}
    problems: list[Problem] = []
    for state in model.skeleton:
        bound, anchor = 0, None  # the latest-placed state that must precede this one
        for p in before[state]:
            placed = positions.get(p)
            if placed is not None and placed > bound:
                bound, anchor = placed, p
        seen = occurrences.get(state, [])
        after = [n for n in seen if n > bound]
        if after:
            positions[state] = after[0]
            continue
        positions[state] = None
        label = model.label(state)
        if not seen:
            where = f" after '{model.label(anchor)}'" if anchor else ""
            problems.append(
                Problem(
                    "trajectory.missing",
                    state,
                    f"state '{label}' never reached{where}",
                    {"state": state, "label": label, "after": anchor, "after_step": bound or None},
                )
            )
        else:
            assert anchor is not None  # seen but not after the bound: bound > 0
            problems.append(
                Problem(
                    "trajectory.order",
                    state,
                    f"state '{label}' came only before '{model.label(anchor)}', which must "
                    f"precede it ('{label}' at step(s) {', '.join(map(str, seen))}, "
                    f"'{model.label(anchor)}' at step {bound})",
                    {
                        "state": state,
                        "label": label,
                        "steps": seen,
                        "must_follow": anchor,
                        "must_follow_step": bound,
                    },
                )
            )
    problems.extend(_repeat_problems(model, positions, occurrences))
    return Match(
        trace=trace.name,
        skeleton=tuple((s, model.label(s)) for s in model.skeleton),
        positions=positions,
        problems=tuple(problems),
        steps=len(trace.steps),
    )


def _repeat_problems(
    model: Model, positions: Mapping[str, int | None], occurrences: Mapping[str, list[int]]
) -> list[Problem]:
    """``trajectory.repeat_missing`` for each recorded repeat the trace lacks. Positions
    are the earliest possible, so "q after p" is checked where it is easiest to meet."""
    problems = []
    for p, q in model.repeats:
        at = positions.get(p)
        if at is None or positions.get(q) is None:
            continue  # p or q is already reported missing or misordered
        if any(n > at for n in occurrences.get(q, [])):
            continue
        label, after = model.label(q), model.label(p)
        problems.append(
            Problem(
                "trajectory.repeat_missing",
                q,
                f"state '{label}' not reached again after '{after}' (step {at}); every "
                f"reference reaches '{label}' after '{after}'",
                {"state": q, "label": label, "after": p, "after_step": at},
            )
        )
    return problems


def read_back(model: Model) -> dict[str, Any]:
    """The model as its file holds it, read back the way ``check`` reads it: a model
    that would be refused, or read differently, raises ``input.invalid`` instead of being
    written."""
    document: dict[str, Any] = json.loads(json.dumps(model.to_dict(), ensure_ascii=False))
    again = Model.from_dict(document, formats=(model.format,))
    if again.to_dict() != document:
        raise _invalid("the learned model does not read back as itself (a bug: report it)")
    return document
