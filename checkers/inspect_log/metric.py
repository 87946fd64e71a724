"""inspect-metric, inspect-counts, inspect-status, inspect-rescore (@1 and @2): the header's
figures re-derived from the log's own samples.

A log's header states the headline figures (``results``); each sample and epoch is stored
beside it with its target, completion, scores and error. These checkers recompute, from
the samples alone, what the header claims: each figure per scorer and reducer, the sample
counts, and the deterministic scores (``match``, ``includes``, ``exact``, ``pattern``)
from completion and target. They re-check arithmetic and string rules; they never re-run
the model, and they say nothing about a model-graded score beyond its arithmetic.
``inspect-metric`` reports the same figure with errors counted as failures, and the
pooled rate, beside Inspect's.

The ``@1`` versions trust the params: they compare the samples with the figures, counts
and scorer options the case states, and never read the header's own. The ``@2`` versions
read the header (``results``, ``eval.scorers``) and compare it with the samples, whoever
wrote the params; a param that restates the header must agree with both.
"""

from __future__ import annotations

import json
import math
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
    effective_options,
    figure,
    header_count,
    header_counts,
    header_entry,
    header_metric,
    known_reducer,
    pooled,
    recorded_scorer,
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


def _scored_log(inputs: Mapping[str, Any], scorer: str) -> InspectLog:
    """The log, if it holds samples and some has a ``scorer`` score (or errored)."""
    log = load(inputs)
    if not log.records:
        raise CheckerInputError("input.invalid", "the log holds no samples to recompute from")
    if not any(scorer in r.scores for r in log.records) and not log.errored:
        raise CheckerInputError("input.invalid", f"no sample of the log has a score {scorer!r}")
    return log


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
    for log in _two_sample_logs(scorer, reducer, _synthetic_header()):
        if not close(figure(log, scorer, reducer, name)["value"], claimed, tolerance):
            return {"log": to_json_log(log, log.records)}
    return None


def _two_sample_logs(scorer: str, reducer: str | None, header: dict[str, Any]) -> list[InspectLog]:
    """Logs of two samples (as many epochs as the reducer needs), scored C/I, C/C, I/I."""
    k = 1
    if reducer and (found := _REDUCER.match(reducer)) and (found.group(2) or found.group(3)):
        k = int(found.group(2) or found.group(3))
    logs = []
    for pattern in (("C", "I"), ("C", "C"), ("I", "I")):
        records = tuple(
            Record(f"s{i}", e, ("1",), "1", {scorer: Score(v, None)}, None, f"samples[{i}]")
            for i, v in enumerate(pattern)
            for e in range(1, k + 1)
        )
        logs.append(InspectLog("json", header, records))
    return logs


FIGURE_PARAMS = [
    Param("scorer", "the score's name in the log (results.scores[].name)", (str,)),
    Param(
        "reducer",
        "the epoch reducer as the log names it (mean, median, mode, max, pass_at_K, "
        "at_least_K); empty for a log with no reducer",
        (str,),
    ),
    Param("metric", f"the metric: one of {', '.join(METRICS)}", (str,)),
]


def _synthetic_header(status: str = "success") -> dict[str, Any]:
    return {"version": 2, "status": status, "eval": {"task": "counterexample"}, "results": None}


@checker(
    "inspect-metric",
    1,
    roles=[LOG_ROLE],
    params=[
        *FIGURE_PARAMS,
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
    """The figure the params claim equals the one recomputed from the samples (header unread).

    Trusts the params: `claimed` and `scored_samples` are compared with the samples;
    the figure the log's header states is never read, so a header that disagrees with
    its samples passes when the params restate the samples (`inspect-metric@2` reads it).
    Reduces each sample's scored epochs with the named reducer, then applies the metric
    across samples, with Inspect's rules (an errored epoch is dropped; a sample with no
    reducible value, or fewer epochs than pass@k needs, is left out). Details give the
    figure both ways (errors dropped, errors counted as failures), the pooled rate over
    epochs, and every denominator. A pass means the arithmetic holds on the stored
    scores; it does not re-score them (`inspect-rescore@1`) nor re-run the model.
    """
    scorer, reducer, name = _metric_params(params)
    tolerance = _tolerance(params)
    log = _scored_log(inputs, scorer)
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


def _claimed_counts(params: Mapping[str, Any], known: tuple[str, ...] = COUNTS) -> dict[str, int]:
    claimed = params["claimed"]
    if not claimed:
        raise CheckerInputError("params.invalid", "claimed must name at least one count")
    for key, value in claimed.items():
        if key not in known:
            raise CheckerInputError(
                "params.invalid", f"claimed count {key!r} is not one of {', '.join(known)}"
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
    """The sample counts the params claim equal those of the stored samples (header unread).

    Trusts the params: the counts of `claimed` are compared with the records; the header's
    own `results.total_samples` and `completed_samples` are never read (`inspect-counts@2`
    reads them). `total_samples` and `completed_samples` count sample x epoch records as
    Inspect's header does; `errored_samples` are the records with an error; `samples` the
    distinct sample ids; `epochs` the highest epoch. A log written without its samples has
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
    """A `success` status hides no errored sample (other statuses are not judged).

    Judges only a log whose status is `success`: a log of any other status passes, with a
    message saying none errored, whatever its records hold (`inspect-status@2` fails on
    every errored record and every status other than success). Inspect marks a run `success`
    when it finished, even if samples errored (they are then left out of every figure), and
    even if every sample errored (then `results` is null). This checker fails on both,
    naming how many records errored; a bundle records that as a finding. A pass of a
    `success` log means no stored record has an error.
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
) -> Verdict:
    """Each stored ``scorer`` score against ``method`` with ``options`` re-applied; fails
    with ``reasons`` (found before) and one reason per score that does not follow."""
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
        again = rescore(method, options, r.completion, r.target)
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


# -- @2: the header's own figures, counts and scorer options, compared with the samples --------

# The header holds each figure at full precision: it is compared with the samples up to
# floating-point noise, never a param's slack. A restated `claimed` may be rounded to two
# decimals, no more: a wider tolerance would admit a figure and its neighbour.
HEADER_TOLERANCE = 1e-9
MAX_CLAIMED_TOLERANCE = 0.005


def _in_range(name: str, value: float, low: float, high: float) -> float:
    """``value`` if ``low <= value <= high`` (NaN never is), else ``params.invalid``."""
    if not low <= value <= high:
        raise CheckerInputError(
            "params.invalid", f"{name} {value} is out of its range [{low:g}, {high:g}]"
        )
    return value


def _claimed_figure(params: Mapping[str, Any]) -> float | None:
    if params["claimed"] is None:
        return None
    claimed = float(params["claimed"])
    if not math.isfinite(claimed):
        raise CheckerInputError("params.invalid", f"claimed {claimed} is not a finite number")
    return claimed


def _header_results(scorer: str, reducer: str | None, name: str, value: float) -> dict[str, Any]:
    """A header's ``results`` stating one figure (for counterexamples)."""
    metrics = {name: {"name": name, "value": value, "params": {}}}
    entry = {"name": scorer, "scorer": scorer, "reducer": reducer, "metrics": metrics}
    return {"scores": [entry]}


def _metric_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log whose header states the claimed figure (or another) and whose two samples
    give a different one."""
    scorer, reducer, name = _metric_params(params)
    claimed = _claimed_figure(params)
    _in_range("tolerance", float(params["tolerance"]), 0, MAX_CLAIMED_TOLERANCE)
    logs = _two_sample_logs(scorer, reducer, _synthetic_header())
    values = [figure(log, scorer, reducer, name)["value"] for log in logs]
    stated = values[0] if claimed is None else claimed
    for log, value in zip(logs, values, strict=True):
        if not close(value, stated, HEADER_TOLERANCE):
            header = {**log.header, "results": _header_results(scorer, reducer, name, stated)}
            return {"log": to_json_log(InspectLog("json", header, log.records), log.records)}
    return None


@checker(
    "inspect-metric",
    2,
    roles=[LOG_ROLE],
    params=[
        *FIGURE_PARAMS,
        Param(
            "claimed",
            "optional: the figure restated (any finite number); it must agree with the "
            "header's and with the samples'",
            (float, int),
            default=None,
        ),
        Param(
            "tolerance",
            "largest accepted |claimed - figure| for a restated, rounded `claimed`; range "
            f"0 to {MAX_CLAIMED_TOLERANCE} (the header itself is compared with the samples "
            f"up to {HEADER_TOLERANCE:g})",
            (float, int),
            default=1e-9,
            at_least=0,
            at_most=MAX_CLAIMED_TOLERANCE,
        ),
    ],
    reasons={
        "inspect.header_metric_mismatch": "the figure the header states is not the one the "
        "samples give",
        "inspect.header_scored_mismatch": "the number of samples the header says the figure "
        "averages (scored or unscored) is not the samples'",
        "inspect.header_figure_missing": "the header states no such figure",
        "inspect.claimed_mismatch": "the claimed figure disagrees with the header's or the "
        "samples'",
    },
    counterexample=_metric_counterexample_v2,
)
def inspect_metric_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A figure the log's header states equals the one recomputed from its samples.

    Reads the header's entry for the scorer and reducer (`results.scores[]`): the
    metric's value, `scored_samples` and `unscored_samples`; recomputes them from the
    samples with Inspect's rules (as `inspect-metric@1`), and fails on any difference,
    naming the figure, whoever wrote the params. A header that does not state the
    figure fails (`inspect.header_figure_missing`); one that states it twice, or as
    something other than a finite number, is `input.invalid`. `claimed` (optional) must
    agree with both header and samples, within `tolerance` (0 to 0.005). A pass means
    the header's arithmetic holds on the stored scores; it does not re-score them
    (`inspect-rescore@2`) nor re-run the model.
    """
    scorer, reducer, name = _metric_params(params)
    claimed = _claimed_figure(params)
    tolerance = _in_range("tolerance", float(params["tolerance"]), 0, MAX_CLAIMED_TOLERANCE)
    log = _scored_log(inputs, scorer)
    what = f"{scorer}/{reducer or '-'}/{name}"
    entry = header_entry(log, scorer, reducer)
    stated = header_metric(entry, name) if entry is not None else None
    dropped = figure(log, scorer, reducer, name)
    counted = figure(log, scorer, reducer, name, errors_fail=True)
    details = {
        "figure": what,
        "header": stated,
        "recomputed": dropped,
        "errors_counted_as_failures": counted,
        "pooled": pooled(log, scorer),
        "claimed": claimed,
    }
    if entry is None or stated is None:
        return Verdict.failed(
            f"the header states no {what}",
            [
                Reason(
                    "inspect.header_figure_missing",
                    f"the header's results state no {name} for {scorer!r} with reducer "
                    f"{reducer or 'none'}: there is no figure to compare with the samples",
                    {"figure": what},
                )
            ],
            **details,
        )
    reasons = []
    agrees = close(stated, dropped["value"], HEADER_TOLERANCE)
    if not agrees:
        reasons.append(
            Reason(
                "inspect.header_metric_mismatch",
                f"{what}: the header states {stated:.6g}, the samples give "
                f"{dropped['value']:.6g} over {dropped['scored_samples']} sample(s)",
                {"figure": what, "header": stated, "samples": dropped["value"]},
            )
        )
    for key in ("scored_samples", "unscored_samples"):
        said = header_count(entry, key, f"results.scores[{scorer}/{reducer or '-'}]")
        if said is not None and said != dropped[key]:
            reasons.append(
                Reason(
                    "inspect.header_scored_mismatch",
                    f"{what}: the header states {said} {key.replace('_', ' ')}, the samples "
                    f"give {dropped[key]}",
                    {"figure": what, "count": key, "header": said, "samples": dropped[key]},
                )
            )
    # claimed must agree with both; where the header already disagrees with the samples,
    # that is the header's mismatch, reported above
    if claimed is not None and (
        not close(claimed, stated, tolerance)
        or (agrees and not close(claimed, dropped["value"], tolerance))
    ):
        reasons.append(
            Reason(
                "inspect.claimed_mismatch",
                f"{what}: claimed {claimed:g}, the header states {stated:.6g}, the samples "
                f"give {dropped['value']:.6g}",
                {"figure": what, "claimed": claimed, "header": stated, "samples": dropped["value"]},
            )
        )
    if reasons:
        return Verdict.failed(
            f"{what}: the header's figure does not follow from the samples"
            if not agrees
            else f"{what}: the header and the samples do not agree with every stated figure",
            reasons,
            **details,
        )
    return Verdict.passed(
        f"{what} = {dropped['value']:.6g} over {dropped['scored_samples']} sample(s), as the "
        f"header states; with errors counted as failures it is "
        f"{counted['value']:.6g}",
        **details,
    )


COUNTS_V2 = ("total_samples", "completed_samples", "errored_samples")


def _claimed_counts_v2(params: Mapping[str, Any]) -> dict[str, int]:
    return {} if params["claimed"] is None else _claimed_counts(params, COUNTS_V2)


def _counts_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log whose header states the claimed counts (else a total of 2) over one or two
    records that differ from them."""
    claimed = _claimed_counts_v2(params)
    total = claimed.get("total_samples", 2)
    completed = claimed.get("completed_samples", total - claimed.get("errored_samples", 0))
    results = {"total_samples": total, "completed_samples": completed, "scores": []}
    held = 2 if total == 1 else 1
    records = tuple(Record(f"s{i}", 1, ("1",), "1", {}, None, f"s{i}") for i in range(held))
    header = {**_synthetic_header(), "results": results}
    return {"log": to_json_log(InspectLog("json", header, records), records)}


@checker(
    "inspect-counts",
    2,
    roles=[LOG_ROLE],
    params=[
        Param(
            "claimed",
            f"optional: counts restated, a table of {', '.join(COUNTS_V2)} -> integer >= 0; "
            "each must equal the header's and the samples'",
            (dict,),
            default=None,
        )
    ],
    reasons={
        "inspect.header_count_mismatch": "a count the header states differs from the samples'",
        "inspect.header_counts_missing": "the header states no sample counts",
        "inspect.claimed_mismatch": "a claimed count differs from the header's or the samples'",
    },
    counterexample=_counts_counterexample_v2,
)
def inspect_counts_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The sample counts the log's header states equal those of its stored records.

    Reads `results.total_samples` and `completed_samples` (errored: their difference);
    a log with no `results` states only its plan's total, `eval.dataset.samples` x
    `eval.config.epochs`. Each is compared with the records (sample x epoch; completed
    = without an error) and fails naming the count, whoever wrote the params. A header
    that states no count fails (`inspect.header_counts_missing`). `claimed` (optional)
    must equal both. A log written without its samples has nothing to count
    (`input.invalid`).
    """
    claimed = _claimed_counts_v2(params)
    log = load(inputs)
    if not log.records:
        raise CheckerInputError(
            "input.invalid", "the log holds no sample records (written without samples?)"
        )
    stated = header_counts(log)
    observed = {k: v for k, v in counts(log).items() if k in COUNTS_V2}
    details = {"header": stated, "samples": observed}
    if not stated:
        reason = Reason(
            "inspect.header_counts_missing",
            "the header states no sample counts (no results, no planned total)",
        )
        return Verdict.failed("the header states no counts to compare", [reason], **details)
    reasons = [
        Reason(
            "inspect.header_count_mismatch",
            f"{key}: the header states {value}, the samples give {observed[key]}",
            {"figure": key, "header": value, "samples": observed[key]},
        )
        for key, value in stated.items()
        if observed[key] != value
    ]
    # claimed must agree with both; a header that disagrees is reported above
    reasons += [
        Reason(
            "inspect.claimed_mismatch",
            f"{key}: claimed {value}, the header states {stated.get(key, 'none')}, the "
            f"samples give {observed[key]}",
            {"figure": key, "claimed": value, "header": stated.get(key), "samples": observed[key]},
        )
        for key, value in claimed.items()
        if stated.get(key) != value
    ]
    if reasons:
        return Verdict.failed("the header's counts do not match the samples", reasons, **details)
    shown = ", ".join(f"{k} {v}" for k, v in stated.items())
    return Verdict.passed(f"the header states {shown}, and the samples give them", **details)


def _status_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    records = (
        Record("s0", 1, ("1",), "1", {}, None, "samples[0]"),
        Record("s1", 1, ("1",), "", {}, "planted error", "samples[1]"),
    )
    header = {**_synthetic_header(), "results": {"scores": []}}
    return {"log": to_json_log(InspectLog("json", header, records), records)}


@checker(
    "inspect-status",
    2,
    roles=[LOG_ROLE],
    reasons={
        "inspect.records_errored": "some sample records errored (whatever the status)",
        "inspect.status_not_success": "the run's status is not success",
        "inspect.no_results": "the log states no results",
    },
    counterexample=_status_counterexample_v2,
)
def inspect_status_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The run finished cleanly: status success, results stated, no record errored.

    Fails whenever any stored record errored, with the counts (N of M records, the
    first five named, the first error's message), whatever the status; whenever the
    status is not `success` (naming it and the header's error); and when the log states
    no results. Inspect calls a run `success` even if samples errored (they are then
    left out of every figure), so a bundle records such a log as a finding. A log
    holding no records is `input.invalid`: whether any errored cannot be told.
    """
    log = load(inputs)
    if not log.records:
        raise CheckerInputError(
            "input.invalid",
            "the log holds no sample records (written without samples?): whether any "
            "errored cannot be told",
        )
    errored, n = log.errored, len(log.records)
    reasons, what = [], []
    if log.status != "success":
        error = log.header.get("error")
        said = error.get("message") if isinstance(error, dict) else None
        reasons.append(
            Reason(
                "inspect.status_not_success",
                f"the run ended with status {log.status!r}, not success"
                + (f": {str(said)[:200]}" if said else ""),
                {"status": log.status},
            )
        )
    if errored:
        first = errored[0]
        reasons.append(
            Reason(
                "inspect.records_errored",
                f"{len(errored)} of {n} sample record(s) errored (first: "
                f"{', '.join(r.label for r in errored[:5])}; {first.label}: "
                f"{str(first.error)[:120]!r}); Inspect leaves them out of every figure",
                {"errored": len(errored), "records": n, "status": log.status},
            )
        )
        what.append(f"{len(errored)} of {n} sample records errored")
    if log.results is None:
        reasons.append(Reason("inspect.no_results", "the log states no results"))
        what.append("it states no results")
    if reasons:
        said = (
            "the log says success, but "
            if log.status == "success"
            else f"the log says {log.status!r}, not success" + ("; " if what else "")
        )
        return Verdict.failed(said + "; ".join(what), reasons, errored=len(errored), records=n)
    return Verdict.passed(
        f"status success, results stated, and none of the {n} sample record(s) errored",
        errored=0,
        records=n,
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
        **_synthetic_header(),
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
    return _rescore_verdict(log, scorer, method, options, reasons)
