"""Trajectory skeleton checker (seed 003).

A run of an agent is correct when it reaches the states that every successful run
reaches, in the order they must come, whatever noise lies between (a loading screen,
a detour through the command palette). The states and their order are learned from a
few successful reference traces; the learning and matching live in
:mod:`checkers.skeleton`, this module only declares the checker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from .skeleton import Equivalence, Model, learn, match, parse_trace
from .structured import compare_documents

_MAX_SHOWN = 20


def _field_rank(path: str, document: Mapping[str, Any]) -> int:
    """Differences in the model's own field order: sources and params (the likely cause)
    before the skeleton, before the bookkeeping."""
    top = re.split(r"[.\[]", path, maxsplit=1)[0]
    fields = list(document)
    return fields.index(top) if top in fields else len(fields)


_LABELS = ("start", "finish", "Alpha 1", "beta-2", "0", "x", "Z", "é", "_", "a b", "/")


def _skeleton_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Two references reaching two states, and a trace that skips the second: it fails
    unless the normaliser makes every label one state (or none), in which case there is
    no trace to reject. Learns from references, so the params apply as given."""
    identity = params["identity"] or ["label"]
    if not isinstance(identity, list) or not all(isinstance(f, str) for f in identity):
        return None

    def state(value: str) -> dict[str, Any]:
        attrs = {field: value for field in identity if field != "label"}
        return {"label": value if "label" in identity else "screen", "attrs": attrs}

    def trace(name: str, values: tuple[str, ...]) -> dict[str, Any]:
        return {"trace": name, "states": [state(v) for v in values]}

    candidates = (
        {
            "references": [trace("r1", (first, second)), trace("r2", (first, second))],
            "trace": trace("t", (first,)),
        }
        for first in _LABELS
        for second in _LABELS
        if first != second
    )
    return first_failing(trajectory_skeleton.function, params, candidates)


@checker(
    "trajectory-skeleton",
    1,
    roles=[
        Role(
            "model",
            InputKind.DATA,
            "a learned model file (JSON, written by `reprobundle trajectory learn`)",
            optional=True,
        ),
        Role(
            "references",
            InputKind.DATA,
            "successful reference traces (YAML/JSON): learn at verify time, and when a "
            "model is given too, re-learn it and compare",
            many=True,
            optional=True,
            compared=True,
        ),
        Role("trace", InputKind.DATA, "the trace to check (YAML/JSON)", compared=True),
    ],
    params=[
        Param(
            "identity",
            "fields that define a state (`label` or attribute names); [] = the model's, "
            "or ['label'] when learning from references alone",
            (list,),
            default=[],
        ),
        Param(
            "normalise",
            "rules {field, pattern, replace} applied to identity fields before comparing "
            "(field '*' or absent = every identity field); [] with a model = the model's",
            (list,),
            default=[],
        ),
    ],
    reasons={
        "trajectory.missing": "an essential state is never reached (after the states "
        "that must precede it)",
        "trajectory.order": "an essential state is reached only before a state that must "
        "precede it",
        "trajectory.model_mismatch": "the stored model is not what its reference traces give",
    },
    libraries=("networkx",),
    counterexample=_skeleton_counterexample,
)
def trajectory_skeleton(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A trace reaches the essential states of successful runs, in order.

    The essential states (the skeleton) come from a stored `model`, or are learned from
    `references` at verify time (prefix tree, conservative merging by normalised
    identity, dominators of success, and a guard that keeps essential any state every
    reference reached when merging opened a path around it). With both, the model is
    re-learned from the references with the model's params and must be identical
    (`trajectory.model_mismatch` otherwise), so a stored model is itself verified; the
    trace is then checked against the re-learned model.

    Pass: every essential state occurs in the trace after the states that must precede
    it; any other states in between are noise. Fail: `trajectory.missing` (never
    reached) or `trajectory.order` (reached only too early), one reason per essential
    state. Details: coverage (essential states matched in order, of all) and the step
    of each match. What a pass does not mean: states are compared only on the declared
    identity fields, durations are not checked, and the skeleton is only as good as the
    few references it was learned from.
    """
    stored_doc = inputs.get("model")
    raw_refs = inputs.get("references") or []
    if stored_doc is None and not raw_refs:
        raise CheckerInputError("input.invalid", "give a `model`, `references`, or both")
    trace = parse_trace(inputs["trace"])
    references = [parse_trace(r) for r in raw_refs]
    reasons: list[Reason] = []
    if stored_doc is not None:
        stored = Model.from_dict(stored_doc)
        if params["identity"] or params["normalise"]:
            given = Equivalence.from_params(
                params["identity"] or list(stored.equivalence.identity), params["normalise"]
            )
            if given != stored.equivalence:
                raise CheckerInputError(
                    "params.invalid",
                    "with a model, leave `identity` and `normalise` empty (the model's are "
                    f"used) or equal to the model's {stored.equivalence.to_dict()}",
                )
        model = stored
        source = "stored model"
        if references:
            model = learn(references, stored.equivalence)
            source = "model re-learned from the references"
            relearned = model.to_dict()
            diffs = sorted(
                compare_documents(stored_doc, relearned),
                key=lambda r: _field_rank(r.details.get("path", ""), relearned),
            )
            if diffs:
                shown = [d.message for d in diffs[:_MAX_SHOWN]]
                reasons.append(
                    Reason(
                        "trajectory.model_mismatch",
                        f"the stored model is not what its {len(references)} reference traces "
                        f"give: {len(diffs)} difference(s), first: {shown[0]}",
                        {"differences": shown, "count": len(diffs)},
                    )
                )
    else:
        equivalence = Equivalence.from_params(params["identity"] or ["label"], params["normalise"])
        model = learn(references, equivalence)
        source = "model learned from the references"
    result = match(model, trace)
    reasons.extend(Reason(p.code, p.message, p.details) for p in result.problems)
    details = {**result.details(), "skeleton_from": source}
    if reasons:
        message = result.explain()
        if any(r.code == "trajectory.model_mismatch" for r in reasons):
            message = f"{reasons[0].message}; against the re-learned model, {message}"
        return Verdict.failed(message, reasons, **details)
    return Verdict.passed(result.explain(), **details)
