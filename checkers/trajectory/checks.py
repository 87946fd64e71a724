"""trajectory-skeleton@1 and @2: a trace reaches the learned essential states in order.

A run of an agent is correct when it reaches the states that every successful run
reaches, in the order they must come, whatever noise lies between (a loading screen,
a detour through the command palette). The states and their order are learned from a
few successful reference traces; the learning and matching live in
:mod:`checkers.trajectory.skeleton`, this module only declares the checkers. @1 reads and
learns format-1 models; @2 reads and learns ``trajectory-model/2``: identity text
canonicalised before the normalisers, state ids unique by construction, and repeated
essential steps required; its verdict also shows the states kept apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import linear
from ..api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from ..compare import compare_documents
from .skeleton import (
    MODEL_FORMAT,
    MODEL_FORMAT_2,
    Equivalence,
    Match,
    Model,
    Observed,
    learn,
    match,
    observe,
    parse_trace,
)

_MAX_SHOWN = 20


def _field_rank(path: str, document: Mapping[str, Any]) -> int:
    """Differences in the model's own field order: sources and params (the likely cause)
    before the skeleton, before the bookkeeping."""
    top = re.split(r"[.\[]", path, maxsplit=1)[0]
    fields = list(document)
    return fields.index(top) if top in fields else len(fields)


_LABELS = ("start", "finish", "Alpha 1", "beta-2", "0", "x", "Z", "é", "_", "a b", "/")


# the roles both versions share: the references a model is learned from, the trace checked
_TRACES = (
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
)


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
        *_TRACES,
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
    counterexample=_skeleton_counterexample,
    example_params=[{"identity": ["label", "view"]}],
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
    trace, model, source, reasons = _skeleton_model(inputs, params, MODEL_FORMAT)
    result = match(model, trace)
    details = {**result.details(), "skeleton_from": source}
    return _verdict(result, reasons, details, "")


def _skeleton_model(
    inputs: Mapping[str, Any], params: Mapping[str, Any], model_format: str
) -> tuple[Observed, Model, str, list[Reason]]:
    """The trace, the model it is checked against (stored, re-learned from the references
    and compared with the stored one, or learned) and where the model came from; a
    stored model that differs from its references' is a ``trajectory.model_mismatch``.
    ``model_format`` is the version's: format 2 canonicalises identity text."""
    second = model_format == MODEL_FORMAT_2
    stored_doc = inputs.get("model")
    raw_refs = inputs.get("references") or []
    if second and not isinstance(raw_refs, list):
        raise CheckerInputError("input.invalid", "`references` must be a list of traces")
    if stored_doc is None and not raw_refs:
        raise CheckerInputError("input.invalid", "give a `model`, `references`, or both")
    trace = observe(inputs["trace"])
    references = [parse_trace(r) for r in raw_refs]
    reasons: list[Reason] = []
    if stored_doc is None:
        equivalence = Equivalence.from_params(
            params["identity"] or ["label"], params["normalise"], canonical=second
        )
        return (
            trace,
            learn(references, equivalence, model_format),
            "model learned from the references",
            reasons,
        )
    stored = Model.from_dict(stored_doc, formats=(model_format,))
    if params["identity"] or params["normalise"]:
        given = Equivalence.from_params(
            params["identity"] or list(stored.equivalence.identity),
            params["normalise"],
            canonical=second,
        )
        if given != stored.equivalence:
            raise CheckerInputError(
                "params.invalid",
                "with a model, leave `identity` and `normalise` empty (the model's are "
                f"used) or equal to the model's {stored.equivalence.to_dict()}",
            )
    if not references:
        return trace, stored, "stored model", reasons
    model = learn(references, stored.equivalence, model_format)
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
    return trace, model, "model re-learned from the references", reasons


def _verdict(
    result: Match, reasons: list[Reason], details: Mapping[str, Any], pass_note: str
) -> Verdict:
    reasons = [*reasons, *(Reason(p.code, p.message, p.details) for p in result.problems)]
    if reasons:
        message = result.explain()
        if any(r.code == "trajectory.model_mismatch" for r in reasons):
            message = f"{reasons[0].message}; against the re-learned model, {message}"
        return Verdict.failed(message, reasons, **details)
    return Verdict.passed(result.explain() + pass_note, **details)


def _trajectory_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """References of two steps, and a trace that skips the first: trajectory.missing.
    Labels are tried until one survives the params' normalisers (checked by running)."""
    identity = params.get("identity") or ["label"]
    if not isinstance(identity, list) or not all(isinstance(n, str) and n for n in identity):
        return None
    for first, last in (("open", "done"), ("state a", "state b"), ("A1", "B2"), ("x", "y")):

        def state(name: str) -> dict[str, Any]:
            return {"label": name, "attrs": {n: name for n in identity if n != "label"}}

        refs = [
            {"trace": f"ref-{i}", "outcome": "success", "states": [state(first), state(last)]}
            for i in (1, 2)
        ]
        inputs = {"references": refs, "trace": {"trace": "candidate", "states": [state(last)]}}
        try:
            verdict = trajectory_skeleton_v2.function(inputs, params)
        except CheckerInputError:
            continue
        if verdict.status == "fail":
            return inputs
    return None


@checker(
    "trajectory-skeleton",
    2,
    roles=[
        Role(
            "model",
            InputKind.DATA,
            "a learned model file (JSON, format trajectory-model/2, written by "
            "`reprobundle trajectory learn`)",
            optional=True,
        ),
        *_TRACES,
    ],
    params=list(trajectory_skeleton.params),
    reasons={
        **trajectory_skeleton.reasons,
        "trajectory.repeat_missing": "an essential state every reference reaches again after "
        "another essential state is not reached again after it",
    },
    counterexample=_trajectory_counterexample,
    example_params=[{}],
)
def trajectory_skeleton_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A trace reaches the essential states of successful runs, in order, repeats included.

    As trajectory-skeleton@1 (the same roles, params, matching and reasons), on models of
    format ``trajectory-model/2``, which differ in three rules:

    - State identity text is canonicalised before the declared normalisers: Unicode NFC,
      no-break and other Unicode spaces read as spaces, whitespace trimmed and
      collapsed; "Search results " with a no-break space and "Search results" are one state.
    - State ids are unique by construction (a clash of slugs gets ``--2``, ``--3``), so
      two labels that slug alike never merge.
    - Repeated essential steps: when every reference reaches essential state q again
      after essential state p (save after "edit title", and save again after "edit
      body"), the model records (p, q) in ``repeats`` and the trace must reach q after
      the step where p matched: ``trajectory.repeat_missing`` otherwise.

    Details add ``kept_apart``: the states that share a label but differ on an identity
    field, as the model records them. A format-1 model is refused (re-learn it, or use
    trajectory-skeleton@1). What a pass does not mean is @1's: states are compared only
    on the declared identity, durations are not checked, and the skeleton is only as
    good as the few references it was learned from.
    """
    trace, model, source, reasons = _skeleton_model(inputs, params, MODEL_FORMAT_2)
    result = match(model, trace)
    details = {
        **result.details(),
        "skeleton_from": source,
        "repeats": [list(pair) for pair in model.repeats],
        "kept_apart": [dict(k) for k in model.kept_apart],
    }
    return _verdict(result, reasons, details, _kept_apart_note(model))


def _kept_apart_note(model: Model) -> str:
    if not model.kept_apart:
        return ""
    labels = ", ".join(f"'{k['label']}'" for k in model.kept_apart)
    return f" States kept apart (same label, different identity): {labels}."


assert trajectory_skeleton_v2.counterexample is not None
trajectory_skeleton_v3 = trajectory_skeleton_v2._replace(
    version=3,
    function=linear.linear_only_version(trajectory_skeleton_v2.function),
    counterexample=linear.linear_only_version(trajectory_skeleton_v2.counterexample),
    example_params=(
        {"identity": ["label", "view"]},
        {},
        {"identity": ["label", "view"], "normalise": [{"field": "label", "pattern": "^o"}]},
    ),
    doc=trajectory_skeleton_v2.doc
    + "\n\nVersion 3 decides as version 2, except that every normaliser (the params' or the "
    "model's) runs on RE2, in time linear in the text: a pattern outside the subset RE2 "
    "reads as Python's `re` does, one that can match the empty text, a replacement holding "
    "a backslash, or a text on which the engines could differ, is not re-run: "
    "`pattern.not_rerun`, the case inconclusive, naming the pattern and why.",
)
