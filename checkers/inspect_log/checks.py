"""inspect-metric@1, inspect-counts@1, inspect-status@1, inspect-rescore@1: the header's
figures re-derived from the log's own samples.

A log's header states the headline figures (``results``); each sample and epoch is stored
beside it with its target, completion, scores and error. These checkers recompute, from
the samples alone, what the header claims: each figure per scorer and reducer, the sample
counts, and the deterministic scores (``match``, ``includes``, ``exact``, ``pattern``)
from completion and target. They re-check arithmetic and string rules; they never re-run
the model, and they say nothing about a model-graded score beyond its arithmetic.
``inspect-metric@1`` reports the same figure with errors counted as failures, and the
pooled rate, beside Inspect's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker
from .log import (
    InspectLog,
    LogError,
    Record,
    Score,
    is_scalar,
    read_log,
    to_json_log,
)
from .rules import (
    _REDUCER,
    COUNTS,
    METRICS,
    RESCORERS,
    close,
    counts,
    figure,
    known_reducer,
    pooled,
    rescore,
    rescore_problem,
)

LOG_ROLE = Role(
    "log",
    InputKind.BYTES,
    "an Inspect AI log as Inspect wrote it: a .eval file (zip of zstd JSON) or a .json log",
)

MAX_TOLERANCE = 0.05


def load(inputs: Mapping[str, Any]) -> InspectLog:
    try:
        return read_log(inputs["log"])
    except LogError as exc:
        raise CheckerInputError("input.invalid", str(exc)) from None


def _tolerance(params: Mapping[str, Any]) -> float:
    tolerance = float(params["tolerance"])
    if not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"tolerance {tolerance} must be at least 0 and below {MAX_TOLERANCE}",
        )
    return tolerance


def _metric_params(params: Mapping[str, Any]) -> tuple[str, str | None, str]:
    reducer = params["reducer"] or None
    if not known_reducer(reducer):
        raise CheckerInputError(
            "params.invalid",
            f"reducer {reducer!r} is not one this checker recomputes "
            "(mean, median, mode, max, pass_at_K, at_least_K)",
        )
    if params["metric"] not in METRICS:
        raise CheckerInputError(
            "params.invalid",
            f"metric {params['metric']!r} is not one this checker recomputes "
            f"({', '.join(METRICS)})",
        )
    return params["scorer"], reducer, params["metric"]


def _metric_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log of two samples whose figure is not the claimed one."""
    scorer, reducer, name = params["scorer"], params["reducer"] or None, params["metric"]
    if not known_reducer(reducer) or name not in METRICS:
        return None
    claimed = float(params["claimed"])
    tolerance = float(params["tolerance"])
    k = 1
    if reducer and (found := _REDUCER.match(reducer)) and (found.group(2) or found.group(3)):
        k = int(found.group(2) or found.group(3))
    for pattern in (("C", "I"), ("C", "C"), ("I", "I")):
        records = tuple(
            Record(f"s{i}", e, ("1",), "1", {scorer: Score(v, None)}, None, f"samples[{i}]")
            for i, v in enumerate(pattern)
            for e in range(1, k + 1)
        )
        log = InspectLog("json", _synthetic_header(), records)
        if not close(figure(log, scorer, reducer, name)["value"], claimed, tolerance):
            return {"log": to_json_log(log, records)}
    return None


def _synthetic_header(status: str = "success") -> dict[str, Any]:
    return {"version": 2, "status": status, "eval": {"task": "counterexample"}, "results": None}


@checker(
    "inspect-metric",
    1,
    roles=[LOG_ROLE],
    params=[
        Param("scorer", "the score's name in the log (results.scores[].name)", (str,)),
        Param(
            "reducer",
            "the epoch reducer as the log names it (mean, median, mode, max, pass_at_K, "
            "at_least_K); empty for a log with no reducer",
            (str,),
        ),
        Param("metric", f"the metric: one of {', '.join(METRICS)}", (str,)),
        Param(
            "claimed",
            "the figure the header states",
            (float, int),
            states=("inspect.figure_mismatch",),
        ),
        Param(
            "scored_samples",
            "the header's count of samples this figure averages (omit to leave unchecked)",
            (int,),
            default=None,
            at_least=0,
        ),
        Param(
            "tolerance",
            "largest accepted |claimed - recomputed| (the header holds full precision; below 0.05)",
            (float, int),
            default=1e-9,
            at_least=0,
            below=MAX_TOLERANCE,
        ),
    ],
    reasons={
        "inspect.figure_mismatch": "the figure recomputed from the samples is not the claimed one",
        "inspect.scored_mismatch": "the number of samples behind the figure is not the claimed one",
    },
    counterexample=_metric_counterexample,
)
def inspect_metric(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A figure of the log's header equals the one recomputed from its samples.

    Reduces each sample's scored epochs with the named reducer, then applies the metric
    across samples, with Inspect's rules (an errored epoch is dropped; a sample with no
    reducible value, or fewer epochs than pass@k needs, is left out). Details give the
    figure both ways (errors dropped, errors counted as failures), the pooled rate over
    epochs, and every denominator. A pass means the arithmetic holds on the stored
    scores; it does not re-score them (`inspect-rescore@1`) nor re-run the model.
    """
    scorer, reducer, name = _metric_params(params)
    tolerance = _tolerance(params)
    log = load(inputs)
    if not log.records:
        raise CheckerInputError("input.invalid", "the log holds no samples to recompute from")
    if not any(scorer in r.scores for r in log.records) and not log.errored:
        raise CheckerInputError("input.invalid", f"no sample of the log has a score {scorer!r}")
    dropped = figure(log, scorer, reducer, name)
    counted = figure(log, scorer, reducer, name, errors_fail=True)
    details = {
        "recomputed": dropped,
        "errors_counted_as_failures": counted,
        "pooled": pooled(log, scorer),
        "claimed": params["claimed"],
    }
    what = f"{scorer}/{reducer or '-'}/{name}"
    reasons = []
    if not close(dropped["value"], float(params["claimed"]), tolerance):
        reasons.append(
            Reason(
                "inspect.figure_mismatch",
                f"{what}: claimed {params['claimed']}, recomputed {dropped['value']:.6g} "
                f"over {dropped['scored_samples']} sample(s)",
                {"claimed": params["claimed"], "recomputed": dropped["value"]},
            )
        )
    if (
        params["scored_samples"] is not None
        and params["scored_samples"] != dropped["scored_samples"]
    ):
        reasons.append(
            Reason(
                "inspect.scored_mismatch",
                f"{what}: claimed {params['scored_samples']} scored sample(s), the log has "
                f"{dropped['scored_samples']}",
            )
        )
    if reasons:
        return Verdict.failed(f"{what} does not follow from the samples", reasons, **details)
    return Verdict.passed(
        f"{what} = {dropped['value']:.6g} over {dropped['scored_samples']} sample(s), as "
        f"claimed; with errors counted as failures it is {counted['value']:.6g}",
        **details,
    )


def _claimed_counts(params: Mapping[str, Any]) -> dict[str, int]:
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "claimed must name at least one count")
    for key, value in claimed.items():
        if key not in COUNTS:
            raise CheckerInputError(
                "params.invalid", f"claimed count {key!r} is not one of {', '.join(COUNTS)}"
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckerInputError("params.invalid", f"claimed {key} must be a count")
    return dict(claimed)


def _counts_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log whose first claimed count is one more than claimed."""
    key, value = next(iter(_claimed_counts(params).items()))
    n = value + 1
    ids, epochs = (1, n) if key == "epochs" else (n, 1)
    error = "planted error" if key == "errored_samples" else None
    records = tuple(
        Record(f"s{i}", e, ("1",), "1", {}, error, f"samples[{i}]")
        for i in range(ids)
        for e in range(1, epochs + 1)
    )
    log = InspectLog("json", _synthetic_header(), records)
    return {"log": to_json_log(log, records)}


@checker(
    "inspect-counts",
    1,
    roles=[LOG_ROLE],
    params=[
        Param(
            "claimed",
            f"the counts the header states: a table of {', '.join(COUNTS)} -> integer "
            "(total_samples counts sample x epoch records, as Inspect's header does)",
            (dict,),
            states=("inspect.count_mismatch",),
        )
    ],
    reasons={
        "inspect.count_mismatch": "a count recomputed from the samples differs from the claimed one"
    },
    counterexample=_counts_counterexample,
)
def inspect_counts(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The sample counts the header states equal those of the stored samples.

    `total_samples` and `completed_samples` count sample x epoch records as Inspect's
    header does; `errored_samples` are the records with an error; `samples` the distinct
    sample ids; `epochs` the highest epoch. A log written without its samples has
    nothing to count (`input.invalid`).
    """
    claimed = _claimed_counts(params)
    log = load(inputs)
    observed = counts(log)
    reasons = [
        Reason(
            "inspect.count_mismatch",
            f"{key}: claimed {value}, the samples give {observed[key]}",
            {"count": key, "claimed": value, "observed": observed[key]},
        )
        for key, value in claimed.items()
        if observed[key] != value
    ]
    if reasons:
        return Verdict.failed("the header's counts do not match the samples", reasons, **observed)
    shown = ", ".join(f"{k} {v}" for k, v in claimed.items())
    return Verdict.passed(f"the samples give {shown}, as claimed", **observed)


def _status_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    records = (Record("s0", 1, ("1",), "", {}, "planted error", "samples[0]"),)
    log = InspectLog("json", _synthetic_header(), records)
    return {"log": to_json_log(log, records)}


@checker(
    "inspect-status",
    1,
    roles=[LOG_ROLE],
    reasons={
        "inspect.errors_under_success": "the log's status is success while some samples errored",
        "inspect.no_results": "the log's status is success but it states no results",
    },
    counterexample=_status_counterexample,
)
def inspect_status(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The log's status tells the whole story: success only if no sample errored.

    Inspect marks a run `success` when it finished, even if samples errored (they are
    then left out of every figure), and even if every sample errored (then `results` is
    null). This checker fails on both, naming how many records errored; a bundle
    records that as a finding. A pass means no stored record has an error.
    """
    log = load(inputs)
    errored = log.errored
    reasons = []
    if log.status == "success" and errored:
        first = ", ".join(r.label for r in errored[:5])
        reasons.append(
            Reason(
                "inspect.errors_under_success",
                f"status success while {len(errored)} of {len(log.records)} sample "
                f"record(s) errored (first: {first}); they are left out of every figure",
                {"errored": len(errored), "records": len(log.records)},
            )
        )
    if log.status == "success" and log.results is None:
        reasons.append(
            Reason("inspect.no_results", "status success, but the log states no results")
        )
    if reasons:
        return Verdict.failed(f"the log says {log.status}, but", reasons)
    return Verdict.passed(
        f"status {log.status}; none of {len(log.records)} sample record(s) errored"
    )


def _rescore_params(params: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    method = params["method"].removeprefix("inspect_ai/")
    problem = rescore_problem(method, params["options"])
    if problem:
        raise CheckerInputError("params.invalid", problem)
    return params["scorer"], method, params["options"]


def _rescore_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    scorer, _, _ = _rescore_params(params)
    # no scorer finds the target in a completion that does not contain it
    return _stored_correct(scorer, completion="zzz", target="qqq")


def _stored_correct(scorer: str, completion: str, target: str) -> Mapping[str, Any]:
    """A record stored as correct whose completion does not contain its target."""
    records = (
        Record("s0", 1, (target,), completion, {scorer: Score("C", None)}, None, "samples[0]"),
    )
    log = InspectLog("json", _synthetic_header(), records)
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
)
def inspect_rescore(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored score of a deterministic scorer follows from completion and target.

    Re-applies Inspect's `match` (location, ignore_case; not numeric), `includes`,
    `exact` or `pattern` (pattern, ignore_case, match_all) to each stored completion and
    target, and compares the C/I value with the stored one (the `answer` text is not
    compared). A pass shows that the scores follow from the stored outputs under the
    scorer's rules as of inspect-ai 0.3; it says nothing of whether the model would give
    those outputs again.
    """
    scorer, method, options = _rescore_params(params)
    log = load(inputs)
    scored = [r for r in log.records if scorer in r.scores]
    if not scored:
        raise CheckerInputError("input.invalid", f"no sample of the log has a score {scorer!r}")
    reasons = []
    for r in scored:
        stored = r.scores[scorer].value
        if not is_scalar(stored):
            raise CheckerInputError(
                "input.invalid",
                f"{r.where}: score {scorer!r} holds a {type(stored).__name__}, not the C/I "
                f"value {method} gives: it was not made by {method}",
            )
        again = rescore(method, options, r.completion, r.target)
        if stored != again:
            reasons.append(
                Reason(
                    "inspect.score_mismatch",
                    f"{r.label}: stored {stored!r}, {method} gives {again!r} for completion "
                    f"{r.completion[:80]!r} and target {list(r.target)!r}",
                    {"sample": r.sample_id, "epoch": r.epoch, "stored": stored, "rescored": again},
                )
            )
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {len(scored)} stored {scorer!r} score(s) do not follow from "
            "their completion",
            reasons[:50],
            mismatches=len(reasons),
        )
    return Verdict.passed(
        f"all {len(scored)} stored {scorer!r} scores follow from completion and target "
        f"under {method}",
        records=len(scored),
    )
