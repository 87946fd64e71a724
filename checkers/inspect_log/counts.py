"""inspect-counts@1, @2 and @3: the sample counts re-derived from the log's own samples.

@1 compares the counts the params claim with the stored records, never reading the
header's; @2 reads the header's ``results.total_samples`` and ``completed_samples`` (or the
planned total) and compares them with the records, so it cannot describe a run that did
not finish; @3 compares the header's planned total with the plan and its completed count
with the records (each sample and epoch once), for finished and unfinished runs alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, Param, Reason, Verdict, checker
from .inputs import LOG_ROLE, load, synthetic_header
from .log import InspectLog, Record, to_json_log
from .rules import (
    COUNTS,
    counts,
    header_count,
    header_counts,
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
    log = InspectLog("json", synthetic_header(), records)
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
    example_params=[{"claimed": {"total_samples": 4, "errored_samples": 1}}],
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


def with_records(inputs: Mapping[str, Any]) -> InspectLog:
    """The log, which must hold sample records: one written without them has nothing to
    count (``input.invalid``)."""
    log = load(inputs)
    if not log.records:
        raise CheckerInputError(
            "input.invalid", "the log holds no sample records (written without samples?)"
        )
    return log


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
    header = {**synthetic_header(), "results": results}
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
    example_params=[{"claimed": {"total_samples": 4, "errored_samples": 1}}],
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
    log = with_records(inputs)
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


COUNTS_V3 = (
    "total_samples",
    "records",
    "duplicates",
    "completed_samples",
    "errored_samples",
    "not_run",
)


def _plan(log: InspectLog) -> tuple[int | None, list[Any] | None, int]:
    """The sample records the run planned (its samples x its epochs), the sample ids it
    chose if the spec names them (fewer than the dataset's under --limit), and its epochs."""
    dataset = log.spec.get("dataset") or {}
    config = log.spec.get("config") or {}
    epochs = header_count(config, "epochs", "eval.config") or 1
    ids = dataset.get("sample_ids")
    if ids is not None and not isinstance(ids, list):
        raise CheckerInputError(
            "input.invalid", f"the header's eval.dataset.sample_ids is {ids!r}, not a list"
        )
    for i, sample in enumerate(ids or []):
        if isinstance(sample, bool) or not isinstance(sample, str | int):
            raise CheckerInputError(
                "input.invalid",
                f"the header's eval.dataset.sample_ids[{i}] is {str(sample)[:40]!r}, not a "
                "sample id (text or an integer)",
            )
    samples = len(ids) if ids is not None else header_count(dataset, "samples", "eval.dataset")
    return (None if samples is None else samples * epochs), ids, epochs


def records_against_plan(log: InspectLog) -> dict[str, Any]:
    """The log's records against its run's plan: each (sample, epoch) counted once
    (a record written twice for one is a duplicate); completed = with no errored record;
    outside = not a (sample, epoch) the plan names; not_run = planned with no record."""
    planned, ids, epochs = _plan(log)
    pairs: dict[tuple[Any, int], bool] = {}  # (sample, epoch) -> errored
    for record in log.records:
        key = (record.sample_id, record.epoch)
        pairs[key] = pairs.get(key, False) or record.error is not None
    chosen = None if ids is None else {(i, e) for i in ids for e in range(1, epochs + 1)}
    outside = [
        p for p in pairs if (chosen is not None and p not in chosen) or not 1 <= p[1] <= epochs
    ]
    inside = len(pairs) - len(outside)
    errored = len([bad for bad in pairs.values() if bad])
    return {
        "planned": planned,
        "records": len(log.records),
        "duplicates": len(log.records) - len(pairs),
        "completed_samples": len(pairs) - errored,
        "errored_samples": errored,
        "not_run": None if planned is None else max(planned - inside, 0),
        "outside": [f"{s} epoch {e}" for s, e in outside],
        "over_plan": planned is not None and inside > planned,
    }


def _counts_counterexample_v3(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A finished run planned as the claimed total (at least 2) whose log holds one record
    fewer, its header stating the claimed counts."""
    claimed = dict(params["claimed"] or {})
    total = max(claimed.get("total_samples", 2), 2)
    completed = claimed.get("completed_samples", total)
    results = {"total_samples": total, "completed_samples": completed, "scores": []}
    ids = [f"s{i}" for i in range(total)]
    records = tuple(Record(i, 1, ("1",), "1", {}, None, i) for i in ids[:-1])
    spec = {"task": "counterexample", "dataset": {"samples": total, "sample_ids": ids}}
    header = {**synthetic_header(), "eval": spec, "results": results}
    return {"log": to_json_log(InspectLog("json", header, records), records)}


@checker(
    "inspect-counts",
    3,
    roles=[LOG_ROLE],
    params=[
        Param(
            "claimed",
            f"optional: counts restated, a table of {', '.join(COUNTS_V3)} -> integer >= 0 "
            "(total_samples: the planned sample x epoch records; records: those the log "
            "holds; duplicates: records beyond the first of a sample and epoch; completed "
            "and errored: distinct sample x epoch; not_run: planned with no record); each "
            "must equal the log's",
            (dict,),
            default=None,
        )
    ],
    reasons={
        "inspect.header_count_mismatch": "a count the header states differs from its plan's "
        "or its records'",
        "inspect.header_counts_missing": "the header states no planned total",
        "inspect.records_outside_plan": "a record is of a sample or epoch the plan does not name",
        "inspect.planned_not_run": "the run says success, but planned sample records have none",
        "inspect.claimed_mismatch": "a claimed count differs from the log's",
    },
    counterexample=_counts_counterexample_v3,
    example_params=[
        {},
        {"claimed": {"total_samples": 1}},
        {"claimed": {"total_samples": 6, "records": 4, "completed_samples": 2, "not_run": 2}},
    ],
)
def inspect_counts_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The sample counts of a run, finished or not, re-derived from its plan and records.

    The planned total is the plan's, `eval.dataset.sample_ids` (else `samples`) x
    `eval.config.epochs`; `results.total_samples`, if stated, must equal it (with no plan,
    it is the planned total; with neither, `inspect.header_counts_missing`). Each
    (sample, epoch) counts once: a record written twice for one is a duplicate, and it is
    completed only if none of its records errored. A record of a sample or epoch outside
    the plan fails (`inspect.records_outside_plan`); `results.completed_samples`, if
    stated, must equal the completed count; a run whose status is success must hold every
    planned record (`inspect.planned_not_run`). An unfinished run (error, cancelled,
    started) passes with what never ran counted as `not_run`. `claimed` (optional) must
    equal the log's counts. A log written without its samples has nothing to count
    (`input.invalid`).
    """
    claimed = {} if params["claimed"] is None else _claimed_counts(params, COUNTS_V3)
    log = with_records(inputs)
    found = records_against_plan(log)
    results = log.results or {}
    stated_total = header_count(results, "total_samples", "results")
    stated_completed = header_count(results, "completed_samples", "results")
    planned = found.pop("planned")
    outside, over = found.pop("outside"), found.pop("over_plan")
    if planned is None and stated_total is not None:
        planned = stated_total
        found["not_run"] = max(planned - (len(log.records) - found["duplicates"]), 0)
    observed = {"total_samples": planned, **found}
    details = {
        "status": log.status,
        "header": {"total_samples": stated_total, "completed_samples": stated_completed},
        "samples": observed,
    }
    if planned is None:
        reason = Reason(
            "inspect.header_counts_missing",
            "the header states no planned total (no eval.dataset samples, no results)",
        )
        return Verdict.failed("the header states no counts to compare", [reason], **details)
    reasons = []
    if stated_total is not None and stated_total != planned:
        reasons.append(
            Reason(
                "inspect.header_count_mismatch",
                f"total_samples: the header states {stated_total}, its plan gives {planned}",
                {"figure": "total_samples", "header": stated_total, "samples": planned},
            )
        )
    if stated_completed is not None and stated_completed != found["completed_samples"]:
        reasons.append(
            Reason(
                "inspect.header_count_mismatch",
                f"completed_samples: the header states {stated_completed}, the records give "
                f"{found['completed_samples']}",
                {
                    "figure": "completed_samples",
                    "header": stated_completed,
                    "samples": found["completed_samples"],
                },
            )
        )
    if outside or over:
        shown = ", ".join(outside[:5]) + (
            f" and {len(outside) - 5} more" if len(outside) > 5 else ""
        )
        reasons.append(
            Reason(
                "inspect.records_outside_plan",
                f"records the plan does not name: {shown}"
                if outside
                else f"the log holds more distinct sample records than the {planned} planned",
                {"outside": outside[:20], "planned": planned},
            )
        )
    if log.status == "success" and observed["not_run"]:
        reasons.append(
            Reason(
                "inspect.planned_not_run",
                f"the run says success, but {observed['not_run']} of its {planned} planned "
                "sample records have no record in the log",
                {"not_run": observed["not_run"], "planned": planned},
            )
        )
    reasons += [
        Reason(
            "inspect.claimed_mismatch",
            f"{key}: claimed {value}, the log gives {observed[key]}",
            {"figure": key, "claimed": value, "samples": observed[key]},
        )
        for key, value in claimed.items()
        if observed[key] != value
    ]
    if reasons:
        return Verdict.failed("the log's counts do not agree", reasons, **details)
    shown = ", ".join(f"{k} {v}" for k, v in observed.items())
    return Verdict.passed(f"status {log.status}; the plan and the records give {shown}", **details)
