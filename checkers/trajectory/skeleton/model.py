"""The learned model: its states, its skeleton and the record of how it was learned, and
its file (formats 1 and 2), read strictly: a model file must be one ``learn`` could have
written."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...api import CheckerInputError
from .equivalence import Equivalence, is_blank
from .graphs import closure
from .traces import canonical, invalid

MODEL_FORMAT = "trajectory-model/1"
MODEL_FORMAT_2 = "trajectory-model/2"
MODEL_FORMATS = (MODEL_FORMAT, MODEL_FORMAT_2)
START = "start"
SUCCESS = "success"


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
        found = self._by_id.get(state_id)
        if found is None:  # as a search of the states would fail
            raise StopIteration
        return found

    @functools.cached_property
    def _by_id(self) -> dict[str, State]:
        """Each state by id, made once (the first of an id, as a search finds it)."""
        out: dict[str, State] = {}
        for state in self.states:
            out.setdefault(state.id, state)
        return out

    def label(self, state_id: str) -> str:
        return state_id if state_id in (START, SUCCESS) else self.state(state_id).label

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.states if not s.essential)

    def predecessors(self) -> dict[str, set[str]]:
        """Every essential state that must come before each essential state (closure)."""
        before = closure(self.skeleton, [(q, p) for p, q in self.precedence])
        return {s: before[s] for s in self.skeleton}

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
            raise invalid(f"the model file is malformed: {problem}")
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
            raise invalid(f"model params: {exc.message}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise invalid(f"the model file is malformed ({type(exc).__name__}: {exc})") from None


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
        raise invalid(f"a trajectory model starts with format = {wanted}{hint}")


def _check_consistency(model: Model) -> None:
    """A parsed model must be one ``learn`` could have written: its skeleton the essential
    states in an order respecting precedence, every state a distinct, non-empty identity."""
    states, skeleton, precedence = model.states, model.skeleton, model.precedence
    ids = [s.id for s in states]
    if len(set(ids)) != len(ids):
        raise invalid("the model names a state twice")
    essential = {s.id for s in states if s.essential}
    if set(skeleton) != essential or len(skeleton) != len(essential):
        raise invalid("the model's skeleton is not its set of essential states")
    if not all(p in essential and q in essential for p, q in precedence):
        raise invalid("the model's precedence names a state outside the skeleton")
    if not all(p in essential and q in essential and p != q for p, q in model.repeats):
        raise invalid("the model's repeats name a state outside the skeleton")
    order = {s: i for i, s in enumerate(skeleton)}
    if any(order[p] >= order[q] for p, q in precedence):
        raise invalid("the model's skeleton order contradicts its precedence")
    if not skeleton:
        raise invalid("the model's skeleton is empty: it would pass any trace")
    fields = set(model.equivalence.identity)
    odd = [s.id for s in states if set(s.identity) != fields]
    if odd:
        raise invalid(f"state(s) {odd} do not have the identity fields {sorted(fields)}")
    blank = [s.id for s in states if is_blank(s.identity)]
    if blank:
        raise invalid(f"state(s) {blank} have an empty identity: they would match anything")
    keys = [canonical(dict(s.identity)) for s in states]
    if len(set(keys)) != len(keys):
        raise invalid("two states of the model have the same identity")


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


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def read_back(model: Model) -> dict[str, Any]:
    """The model as its file holds it, read back the way ``check`` reads it: a model
    that would be refused, or read differently, raises ``input.invalid`` instead of being
    written."""
    document: dict[str, Any] = json.loads(json.dumps(model.to_dict(), ensure_ascii=False))
    again = Model.from_dict(document, formats=(model.format,))
    if again.to_dict() != document:
        raise invalid("the learned model does not read back as itself (a bug: report it)")
    return document
