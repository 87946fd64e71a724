"""``match`` looks a step's state up once per distinct label and identity texts: on many
seeded traces it finds what looking up every step finds (the rule before the shortcut),
values that compare equal but are different states (1, 1.0, true; 0.0, -0.0) included."""

from __future__ import annotations

import random
from typing import Any

import pytest

from checkers.api import CheckerInputError
from checkers.trajectory.skeleton import Equivalence, learn, match, parse_trace
from checkers.trajectory.skeleton.model import MODEL_FORMAT, MODEL_FORMAT_2
from checkers.trajectory.skeleton.traces import canonical

LABELS = ["editor", "search", "Search\u00a0results 3 s", "saved", "popup"]
VALUES: list[Any] = ["a", " a", "b", None, 1, 1.0, True, 0.0, -0.0, ["a"], {"k": "a"}]


def trace(rng: random.Random, name: str, outcome: str | None, blanks: bool = True) -> Any:
    states = []
    views = VALUES if blanks else [v for v in VALUES if v is not None]
    for _ in range(rng.randint(1, 25)):
        attrs = {"view": rng.choice(views), "shot": rng.random()}
        if blanks and rng.random() < 0.2:
            del attrs["view"]
        states.append({"label": rng.choice(LABELS), "attrs": attrs})
    value: dict[str, Any] = {"trace": name, "states": states}
    if outcome:
        value["outcome"] = outcome
    return parse_trace(value)


def each_step_looked_up(model: Any, checked: Any) -> dict[str, list[int]]:
    by_key = {canonical(dict(s.identity)): s.id for s in model.states}
    found: dict[str, list[int]] = {}
    for step in checked.steps:
        state = by_key.get(canonical(model.equivalence.identify(step)))
        if state is not None:
            found.setdefault(state, []).append(step.number)
    return found


@pytest.mark.parametrize("model_format", [MODEL_FORMAT, MODEL_FORMAT_2])
@pytest.mark.parametrize("identity", [["label"], ["label", "view"], ["view"]])
def test_matching_with_lookups_shared_finds_what_each_lookup_finds(
    model_format: str, identity: list[str]
) -> None:
    rng = random.Random(f"{model_format}{identity}")
    normalise = [{"field": "label", "pattern": r"\s*\d+ s$", "replace": ""}]
    if identity == ["view"]:
        normalise = []
    equivalence = Equivalence.from_params(identity, normalise)
    compared = 0
    for round_ in range(150):
        blanks = identity != ["view"]  # a reference step with no identity is refused
        references = [trace(rng, f"r{i}", "success", blanks) for i in range(rng.randint(2, 4))]
        try:
            model = learn(references, equivalence, model_format)
        except CheckerInputError:  # a blank identity: refused, nothing to match
            continue
        for i in range(4):
            checked = trace(rng, f"t{round_}-{i}", None)
            result = match(model, checked)
            wanted = each_step_looked_up(model, checked)
            expected_positions = _positions(model, wanted)
            assert result.positions == expected_positions
            compared += 1
    assert compared > 200


def _positions(model: Any, occurrences: dict[str, list[int]]) -> dict[str, int | None]:
    """The greedy placement of ``match`` over the occurrences given."""
    before = model.predecessors()
    positions: dict[str, int | None] = {}
    for state in model.skeleton:
        bound = max((positions.get(p) or 0 for p in before[state]), default=0)
        after = [n for n in occurrences.get(state, []) if n > bound]
        positions[state] = after[0] if after else None
    return positions
