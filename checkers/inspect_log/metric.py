"""inspect-metric@1 and @2: a figure re-derived from the log's own samples.

Each figure is recomputed per scorer and reducer from the samples alone, with Inspect's
rules; the same figure with errors counted as failures, and the pooled rate, are reported
beside it. @1 compares it with the figure the params claim, never reading the header's;
@2 reads the header's own figure (``results``) and compares it with the samples, whoever
wrote the params; a restated ``claimed`` must agree with both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..api import MAX_TOLERANCE, CheckerInputError, Param, Reason, Verdict, checker
from ..arithmetic import left_sum
from .inputs import LOG_ROLE, load, synthetic_header
from .log import InspectLog, Record, Score, to_json_log
from .rules import (
    METRICS,
    REDUCER,
    close,
    figure,
    header_count,
    header_entry,
    header_metric,
    known_reducer,
    pooled,
)


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
    for log in _two_sample_logs(scorer, reducer, synthetic_header()):
        if not close(figure(log, scorer, reducer, name)["value"], claimed, tolerance):
            return {"log": to_json_log(log, log.records)}
    return None


def _two_sample_logs(scorer: str, reducer: str | None, header: dict[str, Any]) -> list[InspectLog]:
    """Logs of two samples (as many epochs as the reducer needs), scored C/I, C/C, I/I."""
    k = 1
    if reducer and (found := REDUCER.match(reducer)) and (found.group(2) or found.group(3)):
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
    example_params=[{"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5}],
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
    logs = _two_sample_logs(scorer, reducer, synthetic_header())
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
    example_params=[{"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5}],
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


SHOWN_REPEATS = 5  # repeated (sample, epoch) pairs named in a message


def repeated_records(log: InspectLog) -> tuple[int, list[str]]:
    """How many records repeat a (sample, epoch) already recorded, and the first pairs
    that do, each with where its records are. Inspect runs each sample once per epoch and
    writes one record for it (a retried sample's entry, written again in the ``.eval``
    zip, is read once: the last, as Inspect reads it)."""
    where: dict[tuple[str, int], list[str]] = {}
    for record in log.records:
        where.setdefault((str(record.sample_id), record.epoch), []).append(record.where)
    twice = [(pair, at) for pair, at in where.items() if len(at) > 1]
    extra = left_sum(len(at) - 1 for _, at in twice)
    named = [
        f"{sample!r} epoch {epoch} ({len(at)} records: {', '.join(at[:SHOWN_REPEATS])}"
        + (", ...)" if len(at) > SHOWN_REPEATS else ")")
        for (sample, epoch), at in twice[:SHOWN_REPEATS]
    ]
    return extra, named


@checker(
    "inspect-metric",
    4,
    roles=[LOG_ROLE],
    params=list(inspect_metric_v2.params),
    reasons={
        **inspect_metric_v2.reasons,
        "inspect.record_repeated": "the log records one sample in one epoch more than once "
        "(Inspect writes one record for each)",
    },
    counterexample=_metric_counterexample_v2,
    example_params=[{"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5}],
)
def inspect_metric_v4(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A figure the header states equals the one recomputed from samples, each recorded once.

    As inspect-metric@2 (the same params, figures and reasons), and each (sample, epoch)
    is recorded once: Inspect runs each sample once per epoch and writes one record for
    it (a retried sample's `.eval` entry, written again by `eval_retry`, is read once,
    the last, as Inspect reads it). A (sample, epoch) recorded more than once fails
    (`inspect.record_repeated`, naming the pairs and records) whatever the header says:
    @2 averaged a record written seven times as seven epochs, so a header edited to
    match (accuracy 0.625 for a run whose records give 0.5) passed.
    """
    verdict = inspect_metric_v2.function(inputs, params)
    extra, named = repeated_records(load(inputs))
    if not extra:
        return verdict
    repeated = Reason(
        "inspect.record_repeated",
        f"{extra} record(s) repeat a sample and epoch already recorded: {'; '.join(named)}",
        {"repeated_records": extra},
    )
    details = {**verdict.details, "repeated_records": extra}
    if verdict.status == "fail":
        return Verdict.failed(verdict.message, [repeated, *verdict.reasons], **details)
    return Verdict.failed(
        "the log records a sample and epoch more than once", [repeated], **details
    )
