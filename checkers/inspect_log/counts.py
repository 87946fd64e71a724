"""inspect-counts@1 and @2: the sample counts re-derived from the log's own samples.

@1 compares the counts the params claim with the stored records, never reading the
header's; @2 reads the header's ``results.total_samples`` and ``completed_samples`` (or the
planned total) and compares them with the records.
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
