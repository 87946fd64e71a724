"""Matching a trace against a skeleton: the essential states as an ordered subsequence
of the trace's states, every problem collected."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress, count, repeat
from typing import Any

from ...arithmetic import left_sum
from .model import Model
from .traces import Observed, Step, Trace, canonical


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
        return left_sum(1 for p in self.positions.values() if p is not None)

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


_TEXT = frozenset({str, type(None)})


def match(model: Model, trace: Trace | Observed) -> Match:
    """Find the essential states of ``model`` in ``trace`` as an ordered subsequence.

    Each essential state is matched at its first occurrence after every state that must
    precede it (greedy; this finds a match whenever one exists). Steps that match no
    essential state are noise. Every problem is collected, not just the first.
    """
    observed = Observed.of(trace) if isinstance(trace, Trace) else trace
    occurrences = _occurrences(model, observed)
    direct: dict[str, list[str]] = {}  # each state's immediate predecessors (precedence)
    for p, q in model.precedence:
        direct.setdefault(q, []).append(p)
    # the latest-placed state of all that must precede each one, found from its immediate
    # predecessors' (the skeleton is in an order that respects precedence): linear in the
    # precedence, where a walk over every predecessor is quadratic in a long skeleton;
    # the same bound and anchor (placed steps are distinct)
    latest: dict[str, tuple[int, str | None]] = {}
    at = {state: i for i, state in enumerate(model.skeleton)}
    ordered = all(p in at and q in at and at[p] < at[q] for p, q in model.precedence)
    before = {} if ordered else model.predecessors()  # (a model written otherwise)
    positions: dict[str, int | None] = {}
    problems: list[Problem] = []
    for state in model.skeleton:
        bound, anchor = 0, None  # the latest-placed state that must precede this one
        for p in direct.get(state, ()) if ordered else before[state]:
            placed = positions.get(p)
            if placed is not None and placed > bound:
                bound, anchor = placed, p
            if ordered and latest[p][0] > bound:
                bound, anchor = latest[p]
        latest[state] = (bound, anchor)
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
        trace=observed.name,
        skeleton=tuple((s, model.label(s)) for s in model.skeleton),
        positions=positions,
        problems=tuple(problems),
        steps=len(observed.labels),
    )


def _occurrences(model: Model, trace: Observed) -> dict[str, list[int]]:
    """Each state of ``model`` the trace reaches -> the steps (from 1) where it does.

    Only the steps whose first identity field can be a state's are looked at: when that
    field is text (or null) in every step, its distinct values are normalised once and
    the other steps passed over in C (a step is a state only if each field is). A step's
    state follows from its label and identity attributes alone: when these are all texts
    (or nulls), steps with the same ones share one lookup, found once (other values are
    looked up step by step: 1, 1.0 and true are equal keys but different states)."""
    by_key = {canonical(dict(s.identity)): s.id for s in model.states}
    equivalence = model.equivalence
    others = [name for name in equivalence.identity if name != "label"]
    labels, attrs = trace.labels, trace.attrs
    first = equivalence.identity[0]
    column = labels if first == "label" else list(map(dict.get, attrs, repeat(first)))
    numbers: Iterable[int] = range(1, len(labels) + 1)
    if set(map(type, column)) <= _TEXT:
        wanted = {canonical(s.identity.get(first)) for s in model.states}
        possible = {
            value
            for value in set(column)
            if canonical(equivalence.normalised(first, value)) in wanted
        }
        numbers = compress(count(1), map(possible.__contains__, column))
    known: dict[tuple[str | None, ...], str | None] = {}
    occurrences: dict[str, list[int]] = {}
    for number in numbers:
        step = Step(number, labels[number - 1], attrs[number - 1])
        raw = (step.label, *[step.attrs.get(name) for name in others])
        if _TEXT.issuperset(map(type, raw)):
            if raw in known:
                state = known[raw]
            else:
                state = known[raw] = by_key.get(canonical(equivalence.identify(step)))
        else:
            state = by_key.get(canonical(equivalence.identify(step)))
        if state is not None:
            occurrences.setdefault(state, []).append(number)
    return occurrences


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
