"""state-unchanged@2 makes its reasons' details plain data in one copy through json
(``via_json_finite``) where it took two (``via_json``, then ``plain``): on many seeded
observations, values JSON cannot hold among them (NaN, infinities, dates, sets, tuples,
keys that are not text), its verdict is the one the two copies gave, to the type."""

from __future__ import annotations

import datetime
import math
import random
from typing import Any

import pytest

from checkers.api import CheckerInputError, Verdict
from checkers.config_change import state
from checkers.config_change.model import _plain_verdict
from checkers.plain import SAME, plain, via_json, via_json_finite

SCALARS: list[Any] = [
    "a",
    "",
    "é\u2028",
    0,
    1,
    -1,
    10**30,
    0.0,
    -0.0,
    1.5,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    None,
    datetime.date(2026, 1, 2),
    datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
]
KEYS: list[Any] = ["k", "", 1, 2.5, True, None, math.nan, datetime.date(2026, 1, 2)]


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return rng.choice(SCALARS)
    items = [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind < 0.6:
        return items
    if kind < 0.7:
        return tuple(items)
    if kind < 0.75:
        return {rng.choice(["x", "y", 3])}
    return {rng.choice(KEYS): item for item in items}


def two_copies(monkeypatch: pytest.MonkeyPatch) -> Any:
    """@2 as it was: the reasons' details copied by ``via_json``, then the whole verdict
    through ``plain()`` (``_plain_verdict``; on the rest of the details a second time,
    which changes nothing)."""

    def run(inputs: Any, params: dict[str, Any]) -> Verdict:
        with monkeypatch.context() as patch:
            patch.setattr(state, "via_json_finite", via_json)
            verdict = state.state_unchanged_v2.function(inputs, params)
        return _plain_verdict(verdict)

    return run


def outcome(run: Any, inputs: Any, params: dict[str, Any]) -> str:
    try:
        return repr(run(inputs, params))
    except CheckerInputError as exc:
        return f"raised {exc.code}: {exc.message}"
    except TypeError as exc:  # a key json cannot write (a date): checker.raised, both ways
        return f"raised {exc}"


@pytest.mark.parametrize("seed", range(8))
def test_one_copy_through_json_gives_the_verdict_two_copies_gave(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_way = two_copies(monkeypatch)
    rng = random.Random(seed)
    failed = 0
    for _ in range(300):
        names = [f"f{i}" for i in range(rng.randint(1, 3))]
        before = {name: value(rng) for name in names}
        after = {name: value(rng) if rng.random() < 0.5 else before[name] for name in names}
        inputs = {
            "before": {"observed_at": "2026-01-01T00:00:00+00:00", "fields": before},
            "after": {"observed_at": "2026-01-01T01:30:00+00:00", "fields": after},
        }
        params = {"fields": names if rng.random() < 0.5 else []}
        new = outcome(state.state_unchanged_v2.function, inputs, params)
        old = outcome(old_way, inputs, params)
        assert new == old
        failed += "status='fail'" in new
    assert failed > 20  # the reasons, where the copies differ, were compared


def test_via_json_finite_is_via_json_then_plain() -> None:
    rng = random.Random(0)
    copied = 0
    for _ in range(2000):
        item = value(rng)
        assert outcome(lambda v, _: via_json_finite(v), item, {}) == outcome(
            lambda v, _: plain(via_json(v), key=SAME, other=SAME), item, {}
        )
        copied += not outcome(lambda v, _: via_json_finite(v), item, {}).startswith("raised")
    assert copied > 1000
