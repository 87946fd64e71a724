"""inspect-status@1 and @2: a log that says it finished cleanly hides no error.

@1 judges only a ``success`` log, failing when a sample errored or no results are
stated; @2 fails on every errored record, every status other than success, and missing
results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, Reason, Verdict, checker
from .inputs import LOG_ROLE, load, synthetic_header
from .log import InspectLog, Record, to_json_log


def _status_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log whose status is success with one errored sample. Never None."""
    records = (Record("s0", 1, ("1",), "", {}, "planted error", "samples[0]"),)
    log = InspectLog("json", synthetic_header(), records)
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
    example_params=[{}],
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


def _status_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A log of two records, one of them errored, whose header states no scores. Never
    None."""
    records = (
        Record("s0", 1, ("1",), "1", {}, None, "samples[0]"),
        Record("s1", 1, ("1",), "", {}, "planted error", "samples[1]"),
    )
    header = {**synthetic_header(), "results": {"scores": []}}
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
    example_params=[{}],
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
