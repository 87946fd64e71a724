"""trajectory-skeleton@1 and @2 read the trace they check where it lies when it is plain
JSON data (``observe``), and look its steps up a column at a time; before, every trace
was copied through JSON text and made into per-step objects (``parse_trace``) and each
step looked up in turn. On many generated traces, well formed or not, with values YAML
or a caller may give (dates, tuples, sets, keys that are not text, huge ints, cycles),
both versions give the verdict they gave before, byte for byte, errors included."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker
from checkers.trajectory import checks
from checkers.trajectory.skeleton import Model, Observed, matching, parse_trace
from checkers.trajectory.skeleton.traces import Step, canonical

ROOT = Path(__file__).resolve().parents[2]
SEARCH_MODEL = json.loads(
    (ROOT / "bundles/trajectory-skeleton/inputs/search/model.json").read_text()
)
V1 = checkers.get("trajectory-skeleton@1")
V2 = checkers.get("trajectory-skeleton@2")

_TEXT = frozenset({str, type(None)})


def _old_occurrences(model: Model, trace: Observed) -> dict[str, list[int]]:
    """``match``'s lookup as it was: step by step, texts remembered."""
    by_key = {canonical(dict(s.identity)): s.id for s in model.states}
    equivalence = model.equivalence
    others = [name for name in equivalence.identity if name != "label"]
    known: dict[tuple[str | None, ...], str | None] = {}
    occurrences: dict[str, list[int]] = {}
    for number, (label, attrs) in enumerate(zip(trace.labels, trace.attrs, strict=True), 1):
        step = Step(number, label, attrs)
        raw = (step.label, *[attrs.get(name) for name in others])
        if _TEXT.issuperset(map(type, raw)):
            if raw in known:
                state = known[raw]
            else:
                state = known[raw] = by_key.get(canonical(equivalence.identify(step)))
        else:
            state = by_key.get(canonical(equivalence.identify(step)))
        if state is not None:
            occurrences.setdefault(state, []).append(step.number)
    return occurrences


def _old_observe(value: Any) -> Observed:
    """The trace as it was read: copied through JSON text, one object per step."""
    return Observed.of(parse_trace(value))


# the two steps this round changed, and how they were before
_BEFORE = {(checks, "observe"): _old_observe, (matching, "_occurrences"): _old_occurrences}


def before(found: Any, inputs: dict[str, Any], params: dict[str, Any]) -> str:
    """The verdict of a version as the code before gave it."""
    saved = {place: getattr(*place) for place in _BEFORE}
    try:
        for (module, name), old in _BEFORE.items():
            setattr(module, name, old)
        return repr(run_checker(found, inputs, params))
    finally:
        for (module, name), now in saved.items():
            setattr(module, name, now)


LABELS = ["editor", "search", "Search\u00a0results 3 s", "saved", "popup", "open"]
VIEWS = ["editor", "search", " search", None, "popup"]
texts = st.sampled_from(["a", " a", "", "editor", "é", "\ud800"])
scalars = st.one_of(
    texts,
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(allow_nan=True, allow_infinity=True),
)
odd_values = st.one_of(
    st.dates(),
    st.datetimes(),
    st.tuples(texts),
    st.frozensets(st.integers(0, 2), max_size=2),
    st.binary(max_size=2),
    st.just(2**2100),
    st.just(-(10**700)),
)
odd_keys = st.one_of(st.integers(0, 2), st.booleans(), st.none(), st.dates(), st.tuples(texts))
keys = st.one_of(st.sampled_from(["view", "shot", "k"]), odd_keys)


def values(odd: bool) -> Any:
    leaves = st.one_of(scalars, odd_values) if odd else scalars
    names = keys if odd else st.sampled_from(["view", "shot", "k"])
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)
        ),
        max_leaves=5,
    )


def states(odd: bool) -> Any:
    plain_attrs = st.fixed_dictionaries(
        {"view": st.sampled_from(VIEWS)}, optional={"shot": values(False), "line": scalars}
    )
    label = st.sampled_from(LABELS)
    if odd:
        label = st.one_of(label, scalars, st.dates())
    attrs = st.one_of(plain_attrs, st.dictionaries(keys, values(True))) if odd else plain_attrs
    optional = {"attrs": attrs, "action": values(odd), "at": values(odd), "note": values(odd)}
    if odd:
        optional["extra"] = values(True)
    state = st.fixed_dictionaries({"label": label}, optional=optional)
    return st.one_of(state, values(True)) if odd else state


def traces(odd: bool) -> Any:
    header: dict[str, Any] = {"trace": st.sampled_from(["t", " ", "ref"])}
    if odd:
        header["trace"] = st.one_of(header["trace"], scalars, st.dates())
    optional = {
        "outcome": st.one_of(st.sampled_from(["success", "failure"]), scalars),
        "task": values(odd),
    }
    documents = st.fixed_dictionaries(
        {**header, "states": st.lists(states(odd), min_size=0 if odd else 1, max_size=12)},
        optional=optional,
    )
    lines = documents.map(_as_lines)
    return st.one_of(documents, lines, values(True)) if odd else st.one_of(documents, lines)


def _as_lines(document: dict[str, Any]) -> list[tuple[int, Any]]:
    header = {k: v for k, v in document.items() if k != "states"}
    return [(1, header), *((n, s) for n, s in enumerate(document["states"], start=2))]


def reference(name: str, labels: list[str], views: list[str | None]) -> dict[str, Any]:
    return {
        "trace": name,
        "states": [
            {"label": label, "attrs": {"view": view}}
            for label, view in zip(labels, views, strict=True)
        ],
    }


IDENTITIES = [["label"], ["label", "view"], ["view"]]
NORMALISE = [[], [{"field": "label", "pattern": r"\s*\d+ s$"}]]


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.booleans(),
    st.booleans().flatmap(lambda odd: traces(odd=odd)),
    st.lists(st.sampled_from(LABELS), min_size=2, max_size=5),
    st.sampled_from(IDENTITIES),
    st.sampled_from(NORMALISE),
)
def test_any_trace_gets_the_verdict_it_got_before(
    stored: bool,
    trace: Any,
    labels: list[str],
    identity: list[str],
    normalise: list[Any],
) -> None:
    # plain traces (read where they lie) and odd ones (dates, tuples, sets, non-text keys,
    # huge ints, malformed parts, JSON Lines: read as before)
    _compare(stored, trace, labels, identity, normalise)


def _compare(
    stored: bool,
    trace: Any,
    labels: list[str],
    identity: list[str],
    normalise: list[Any],
) -> None:
    views = [VIEWS[len(label) % 3] for label in labels]
    refs = [reference("r1", labels, views), reference("r2", labels[::-1], views[::-1])]
    cases: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [
        (
            found,
            {"references": refs, "trace": trace},
            {"identity": identity, "normalise": normalise},
        )
        for found in (V1, V2)
    ]
    if stored:  # the seed's stored model, its params
        cases.append((V2, {"model": SEARCH_MODEL, "trace": trace}, {}))
    for found, inputs, params in cases:
        assert repr(run_checker(found, inputs, params)) == before(found, inputs, params)


def _cycle() -> dict[str, Any]:
    attrs: dict[str, Any] = {"view": "editor"}
    attrs["self"] = [attrs]
    return {"trace": "t", "states": [{"label": "editor", "attrs": attrs}]}


def _deep(levels: int) -> dict[str, Any]:
    note: Any = "x"
    for _ in range(levels):
        note = [note]
    return {"trace": "t", "states": [{"label": "editor", "note": note}]}


class _Text(str):
    pass


@pytest.mark.parametrize(
    "trace",
    [
        _cycle(),
        _deep(99),
        _deep(150),
        _deep(1500),
        {"trace": "t", "states": [{"label": "editor", "note": {datetime.date(2026, 1, 1): 1}}]},
        {"trace": "t", "states": [{"label": "editor", "attrs": {1: "x", "view": "editor"}}]},
        {"trace": "t", "states": [{"label": "editor", "attrs": {_Text("view"): "editor"}}]},
        {"trace": "t", "states": [{_Text("label"): "editor"}]},
        {"trace": "t", "states": [{"label": _Text("editor")}]},
        {"trace": "t", "states": [{"label": "editor", "at": 2**7000}]},
        {"trace": "t", "states": [{"label": "editor", "at": 10**5000}]},
        {"trace": "t", "states": [{"label": "editor", "attrs": {"view": ("editor",)}}]},
        {"trace": "t", "states": [{"label": "editor", "attrs": {"view": float("nan")}}]},
        {"trace": "t", "outcome": datetime.date(2026, 1, 1), "states": [{"label": "editor"}]},
        [(1, {"trace": "t"}), (2, {"label": "editor"}), (True, {"label": "search"})],
        [(1, {"trace": "t", "label": "x"}), (2, {"label": "editor"})],
    ],
)
def test_values_no_json_reader_gives_get_the_verdict_they_got_before(trace: Any) -> None:
    assert V1 is not None and V2 is not None
    refs = [reference("r1", ["editor", "search"], ["editor", "search"])]
    refs.append(reference("r2", ["editor", "saved", "search"], ["editor", "a", "search"]))
    for found in (V1, V2):
        for identity in IDENTITIES:
            inputs = {"references": refs, "trace": trace}
            params = {"identity": identity, "normalise": []}
            assert repr(run_checker(found, inputs, params)) == before(found, inputs, params)
