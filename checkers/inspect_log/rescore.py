"""inspect-rescore@1, @2 and @3: every stored score follows from completion and target.

The deterministic scorers (``match``, ``includes``, ``exact``, ``pattern``) are re-applied
to each stored completion and target; nothing is re-run and a model-graded score is not
judged. @1 re-scores under the scorer and options the params state; @2 under the ones the
log records (``eval.scorers``), the params only restating them; @3 as @2, but a ``pattern``
runs on RE2 only (``checkers/linear.py``), and one outside the subset is not re-run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import linear
from ..api import CheckerInputError, Param, Reason, Verdict, checker
from .inputs import LOG_ROLE, load, synthetic_header
from .log import InspectLog, Record, Score, is_scalar, to_json_log
from .rules import (
    RESCORERS,
    effective_options,
    recorded_scorer,
    rescore,
    rescore_problem,
)


def _rescore_params(params: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    method = params["method"].removeprefix("inspect_ai/")
    problem = rescore_problem(method, params["options"])
    if problem:
        raise CheckerInputError("params.invalid", problem)
    return params["scorer"], method, params["options"]


def _rescore_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """One record stored as correct whose completion does not contain its target: no
    scorer finds it there. Never None."""
    scorer, _, _ = _rescore_params(params)
    # no scorer finds the target in a completion that does not contain it
    return _stored_correct(scorer, completion="zzz", target="qqq")


def _stored_correct(scorer: str, completion: str, target: str) -> Mapping[str, Any]:
    """A record stored as correct whose completion does not contain its target."""
    records = (
        Record("s0", 1, (target,), completion, {scorer: Score("C", None)}, None, "samples[0]"),
    )
    log = InspectLog("json", synthetic_header(), records)
    return {"log": to_json_log(log, records)}


@checker(
    "inspect-rescore",
    1,
    roles=[LOG_ROLE],
    params=[
        Param("scorer", "the score's name in the samples", (str,)),
        Param("method", f"the scorer that made it: {', '.join(RESCORERS)}", (str,)),
        Param(
            "options",
            "the scorer's options as the log records them (eval.scorers[].options)",
            (dict,),
        ),
    ],
    reasons={
        "inspect.score_mismatch": "a stored score is not what the scorer gives for the stored "
        "completion and target",
    },
    counterexample=_rescore_counterexample,
    example_params=[{"scorer": "match", "method": "match", "options": {}}],
)
def inspect_rescore(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored score follows from completion and target under the params' scorer.

    Trusts the params: it re-scores with the `method` and `options` the case states, never
    reading those the log records (`eval.scorers`), so a case naming other options than the
    run used is judged under them (`inspect-rescore@2` reads the log's). Re-applies
    Inspect's `match` (location, ignore_case; not numeric), `includes`, `exact` or `pattern`
    (pattern, ignore_case, match_all) to each stored completion and target, and compares the
    C/I value with the stored one (the `answer` text is not compared). A pass shows that the
    scores follow from the stored outputs under the scorer's rules as of inspect-ai 0.3; it
    says nothing of whether the model would give those outputs again.
    """
    scorer, method, options = _rescore_params(params)
    return _rescore_verdict(load(inputs), scorer, method, options, [])


def _rescore_verdict(
    log: InspectLog,
    scorer: str,
    method: str,
    options: Mapping[str, Any],
    reasons: list[Reason],
    linear_only: bool = False,
) -> Verdict:
    """Each stored ``scorer`` score against ``method`` with ``options`` re-applied; fails
    with ``reasons`` (found before) and one reason per score that does not follow.
    ``linear_only``: a pattern outside the linear subset raises ``pattern.not_rerun``."""
    scored = [r for r in log.records if scorer in r.scores]
    if not scored:
        raise CheckerInputError("input.invalid", f"no sample of the log has a score {scorer!r}")
    mismatches = 0
    for r in scored:
        stored = r.scores[scorer].value
        if not is_scalar(stored):
            raise CheckerInputError(
                "input.invalid",
                f"{r.where}: score {scorer!r} holds a {type(stored).__name__}, not the C/I "
                f"value {method} gives: it was not made by {method}",
            )
        again = rescore(method, options, r.completion, r.target, linear_only, r.label)
        if stored != again:
            mismatches += 1
            reasons.append(
                Reason(
                    "inspect.score_mismatch",
                    f"{r.label}: stored {stored!r}, {method} gives {again!r} for completion "
                    f"{r.completion[:80]!r} and target {list(r.target)!r}",
                    {"sample": r.sample_id, "epoch": r.epoch, "stored": stored, "rescored": again},
                )
            )
    if mismatches:
        restated = "" if mismatches == len(reasons) else "; the params misstate the scorer"
        return Verdict.failed(
            f"{mismatches} of {len(scored)} stored {scorer!r} score(s) do not follow from "
            f"their completion{restated}",
            reasons[:50],
            mismatches=mismatches,
        )
    if reasons:
        return Verdict.failed(
            f"the params do not restate the scorer the log records for {scorer!r}; every "
            f"stored score follows from its completion under the log's {method}",
            reasons,
            mismatches=0,
            records=len(scored),
        )
    return Verdict.passed(
        f"all {len(scored)} stored {scorer!r} scores follow from completion and target "
        f"under {method}",
        records=len(scored),
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal as JSON (True is not 1)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _restated_scorer(params: Mapping[str, Any]) -> str | None:
    """The params' method, checked as @1 checks it (with its options, if any)."""
    if params["method"] is None:
        return None
    method: str = params["method"].removeprefix("inspect_ai/")
    problem = rescore_problem(method, params["options"] or {})
    if problem:
        raise CheckerInputError("params.invalid", problem)
    return method


def _rescore_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log recording the restated scorer (else `includes`), whose one record is stored
    correct though its completion does not contain its target."""
    method = _restated_scorer(params) or "includes"
    options = dict(params["options"] or ({"pattern": "(z+)"} if method == "pattern" else {}))
    records = (Record("s0", 1, ("qqq",), "zzz", {params["scorer"]: Score("C", None)}, None, "s0"),)
    header = {
        **synthetic_header(),
        "eval": {"task": "counterexample", "scorers": [{"name": method, "options": options}]},
        "results": {"scores": [{"name": params["scorer"], "scorer": method, "metrics": {}}]},
    }
    return {"log": to_json_log(InspectLog("json", header, records), records)}


@checker(
    "inspect-rescore",
    2,
    roles=[LOG_ROLE],
    params=[
        Param("scorer", "the score's name in the samples", (str,)),
        Param(
            "method",
            f"optional: the scorer restated ({', '.join(RESCORERS)}); it must be the one the "
            "log records",
            (str,),
            default=None,
        ),
        Param(
            "options",
            "optional: its options restated; with Inspect's defaults filled in they must "
            "equal those the log records (eval.scorers[].options)",
            (dict,),
            default=None,
        ),
    ],
    reasons={
        "inspect.score_mismatch": "a stored score is not what the log's scorer gives for the "
        "stored completion and target",
        "inspect.scorer_mismatch": "the params' method or options are not those the log records",
    },
    counterexample=_rescore_counterexample_v2,
    example_params=[{"scorer": "match", "method": "match", "options": {}}],
)
def inspect_rescore_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored score follows from completion and target under the log's own scorer.

    Finds the scorer that made the score (the `scorer` of its result entry, else the
    score's name) in the log's `eval.scorers`, with the options recorded there, and
    re-scores each record with them as `inspect-rescore@1` does. `method` and
    `options`, when given, only restate the log's: any difference (defaults filled in)
    fails `inspect.scorer_mismatch`, and the scores are still judged under the log's.
    A log that does not record the scorer, records it twice with different options, or
    records one not re-implemented here (model-graded, `match` numeric) is
    `input.invalid`: it is not re-scored. A pass says nothing of whether the model would
    give those outputs again.
    """
    return _rescore_under_log(inputs, params, linear_only=False)


def _rescore_under_log(
    inputs: Mapping[str, Any], params: Mapping[str, Any], linear_only: bool
) -> Verdict:
    """@2's and @3's check (``linear_only``: @3's patterns, RE2 only)."""
    scorer = params["scorer"]
    said = _restated_scorer(params)
    log = load(inputs)
    method, options = recorded_scorer(log, scorer)
    problem = rescore_problem(method, options)
    if problem:
        raise CheckerInputError(
            "input.invalid", f"the log's scorer for {scorer!r} is not re-scored: {problem}"
        )
    reasons = []
    if said is not None and said != method:
        reasons.append(
            Reason(
                "inspect.scorer_mismatch",
                f"the params say {scorer!r} was made by {said!r}; the log records {method!r}",
                {"field": "method", "params": said, "log": method},
            )
        )
    restated = params["options"]
    if restated is not None and not _same(
        effective_options(method, restated), effective_options(method, options)
    ):
        reasons.append(
            Reason(
                "inspect.scorer_mismatch",
                f"the params give {method} the options {dict(restated)!r}; the log records "
                f"{dict(options)!r}",
                {"field": "options", "params": dict(restated), "log": dict(options)},
            )
        )
    if linear_only and method == "pattern":
        linear.require(str(options["pattern"]), bool(options.get("ignore_case", True)))
    return _rescore_verdict(log, scorer, method, options, reasons, linear_only)


@checker(
    "inspect-rescore",
    3,
    roles=[LOG_ROLE],
    params=list(inspect_rescore_v2.params),
    reasons=inspect_rescore_v2.reasons,
    counterexample=_rescore_counterexample_v2,
    example_params=[
        {"scorer": "match", "method": "match", "options": {}},
        {"scorer": "p", "method": "pattern", "options": {"pattern": "(a+)+$"}},
    ],
)
def inspect_rescore_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored score follows from completion and target under the log's own scorer,
    a `pattern` scorer's pattern run in time linear in the completion.

    As `inspect-rescore@2`, except that a `pattern` scorer's pattern runs on RE2 only: a
    pattern outside the subset RE2 reads as Python's `re` does (a lookaround, a
    back-reference, a quantified group that can match nothing; `checkers/linear.py`), or a
    completion on which the two could differ (not ASCII for a pattern with `\\w` or
    ignoring case, ending in a newline for one with `$`), is not re-run:
    `pattern.not_rerun`, the case inconclusive, naming the pattern and why. Inside the
    subset the verdicts are @2's.
    """
    return _rescore_under_log(inputs, params, linear_only=True)
