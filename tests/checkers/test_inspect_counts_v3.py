"""inspect-counts@3: a run's sample counts, finished or not, from its plan and its records.

@2 compares the header's total with the records, so a run that did not finish (its header
states the planned total) always fails it, and the importer fell back to the advised @1
(RB-2026-0002). @3 compares the header's total with the plan and its completed count with
the records, each sample and epoch counted once; what never ran is a count of its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import checkers
from bundler.run.runner import run_checker
from checkers.api import Verdict
from checkers.inspect_log.log import InspectLog, Record, to_json_log

SIX = [f"s{i}" for i in range(1, 7)]


def run(key: str, data: bytes, **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"log": data}, params)


def rec(sid: str, epoch: int = 1, error: str | None = None) -> Record:
    return Record(sid, epoch, ("4",), "4", {}, error, f"{sid}_{epoch}")


def log_of(
    *records: Record,
    status: str = "success",
    results: dict[str, Any] | None = None,
    ids: list[str] | None = None,
    samples: int | None = None,
    epochs: int = 1,
) -> bytes:
    """A log whose plan is ``ids`` (else ``samples``) x ``epochs``."""
    dataset: dict[str, Any] = {}
    if ids is not None:
        dataset.update(samples=len(ids), sample_ids=ids)
    if samples is not None:
        dataset["samples"] = samples
    spec = {"task": "t", "dataset": dataset, "config": {"epochs": epochs}}
    header = {"version": 2, "status": status, "eval": spec, "results": results}
    return to_json_log(InspectLog("json", header, records), records)


def stated(total: int | None, completed: int | None) -> dict[str, Any]:
    return {"total_samples": total, "completed_samples": completed, "scores": []}


# a cancelled run of s1-s6: s1-s3 completed, s4 cancelled mid-sample, s5 and s6 never ran
CANCELLED = (rec("s1"), rec("s2"), rec("s3"), rec("s4", error="CancelledError()"))


def test_an_unfinished_run_passes_with_what_never_ran_counted() -> None:
    data = log_of(*CANCELLED, status="cancelled", results=stated(6, 3), ids=SIX)
    assert run("inspect-counts@2", data).codes == ("inspect.header_count_mismatch",)
    verdict = run("inspect-counts@3", data)
    assert verdict.status == "pass", verdict.message
    assert verdict.details["samples"] == {
        "total_samples": 6,
        "records": 4,
        "duplicates": 0,
        "completed_samples": 3,
        "errored_samples": 1,
        "not_run": 2,
    }
    assert "status cancelled" in verdict.message and "not_run 2" in verdict.message
    claimed = {"total_samples": 6, "records": 4, "completed_samples": 3, "not_run": 2}
    assert run("inspect-counts@3", data, claimed=claimed).status == "pass"


@pytest.mark.parametrize("status", ["error", "cancelled", "started"])
def test_an_unfinished_run_cannot_be_claimed_to_have_run_everything(status: str) -> None:
    data = log_of(*CANCELLED, status=status, ids=SIX)
    verdict = run("inspect-counts@3", data, claimed={"not_run": 0, "records": 6})
    assert verdict.codes == ("inspect.claimed_mismatch",)
    assert [r.details for r in verdict.reasons] == [
        {"figure": "not_run", "claimed": 0, "samples": 2},
        {"figure": "records", "claimed": 6, "samples": 4},
    ]


def test_a_forged_completed_count_on_an_unfinished_run_fails() -> None:
    """The header of a cancelled run says all 6 completed; 3 did. @1, with the counts the
    records give (what the importer used to write for an unfinished run), passes."""
    forged = log_of(*CANCELLED, status="cancelled", results=stated(6, 6), ids=SIX)
    old = {"total_samples": 4, "completed_samples": 3, "errored_samples": 1}
    assert run("inspect-counts@1", forged, claimed=old).status == "pass"
    verdict = run("inspect-counts@3", forged)
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert verdict.reasons[0].details == {
        "figure": "completed_samples",
        "header": 6,
        "samples": 3,
    }


def test_a_forged_total_that_shrinks_the_plan_fails() -> None:
    """A cancelled run of 6 whose header says it planned the 4 it holds; a finished one
    whose header says 4 where its plan chose 6: each passes @2."""
    forged = log_of(*CANCELLED, status="cancelled", results=stated(4, 3), ids=SIX)
    verdict = run("inspect-counts@3", forged)
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert verdict.reasons[0].details == {"figure": "total_samples", "header": 4, "samples": 6}
    finished = log_of(*CANCELLED, results=stated(4, 3), ids=SIX)
    assert run("inspect-counts@2", finished).status == "pass"
    verdict = run("inspect-counts@3", finished)
    assert verdict.codes == ("inspect.header_count_mismatch", "inspect.planned_not_run")
    assert verdict.reasons[1].details == {"not_run": 2, "planned": 6}


def test_one_record_written_three_times_counts_once_and_two_samples_never_ran() -> None:
    """A finished run of s1-s3 whose log holds s1's record three times, its header saying
    3 of 3 completed: @2 passes it."""
    thrice = log_of(rec("s1"), rec("s1"), rec("s1"), results=stated(3, 3), ids=["s1", "s2", "s3"])
    assert run("inspect-counts@2", thrice).status == "pass"
    verdict = run("inspect-counts@3", thrice)
    assert verdict.codes == ("inspect.header_count_mismatch", "inspect.planned_not_run")
    assert verdict.details["samples"]["duplicates"] == 2
    assert verdict.details["samples"]["completed_samples"] == 1
    assert verdict.details["samples"]["not_run"] == 2


def test_a_duplicate_that_errored_makes_its_sample_and_epoch_errored() -> None:
    data = log_of(
        rec("s1"), rec("s1", error="boom"), rec("s2"), results=stated(2, 2), ids=["s1", "s2"]
    )
    verdict = run("inspect-counts@3", data)
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert verdict.reasons[0].details == {"figure": "completed_samples", "header": 2, "samples": 1}


def test_a_plan_without_sample_ids_counts_what_never_ran_by_number() -> None:
    data = log_of(rec("a"), rec("b"), status="error", samples=5, epochs=2)
    verdict = run("inspect-counts@3", data)
    assert verdict.status == "pass"
    assert (verdict.details["samples"]["total_samples"], verdict.details["samples"]["not_run"]) == (
        10,
        8,
    )


@pytest.mark.parametrize(
    ("records", "shown"),
    [
        ((rec("s1"), rec("s9")), "s9 epoch 1"),  # a sample the plan did not choose
        ((rec("s1"), rec("s2", epoch=2)), "s2 epoch 2"),  # an epoch past the plan's
    ],
)
def test_records_outside_the_plan_fail(records: tuple[Record, ...], shown: str) -> None:
    data = log_of(*records, status="cancelled", ids=["s1", "s2", "s3"])
    verdict = run("inspect-counts@3", data)
    assert verdict.codes == ("inspect.records_outside_plan",)
    assert shown in verdict.reasons[0].message


def test_more_distinct_records_than_an_unnamed_plan_fail() -> None:
    data = log_of(rec("a"), rec("b"), rec("c"), status="cancelled", samples=2)
    assert run("inspect-counts@3", data).codes == ("inspect.records_outside_plan",)


def test_a_header_with_no_plan_and_no_total_fails() -> None:
    data = log_of(rec("s1"), status="cancelled")
    assert run("inspect-counts@3", data).codes == ("inspect.header_counts_missing",)
    # with no plan, the header's total stands as the planned total
    verdict = run("inspect-counts@3", log_of(rec("s1"), status="cancelled", results=stated(3, 1)))
    assert verdict.status == "pass" and verdict.details["samples"]["not_run"] == 2


@pytest.mark.parametrize(
    "claimed", [{}, {"samples": 3}, {"not_run": -1}, {"records": 1.5}, {"records": True}]
)
def test_claimed_counts_outside_their_range_are_refused(claimed: dict[str, Any]) -> None:
    data = log_of(*CANCELLED, status="cancelled", ids=SIX)
    verdict = run("inspect-counts@3", data, claimed=claimed)
    assert verdict.status == "error" and verdict.codes == ("params.invalid",)


@pytest.mark.parametrize("ids", ["s1,s2", {"s1": 1}])
def test_sample_ids_that_are_not_a_list_are_refused(ids: Any) -> None:
    data = log_of(rec("s1"), status="cancelled", samples=2)
    assert b'"samples": 2' in data
    spec_replaced = data.replace(
        b'"samples": 2', b'"samples": 2, "sample_ids": ' + json.dumps(ids).encode()
    )
    verdict = run("inspect-counts@3", spec_replaced)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


@pytest.mark.parametrize("bad", [{"a": 1}, ["s1"], True, None, 1.5])
def test_a_sample_id_in_the_plan_that_is_not_one_is_refused(bad: Any) -> None:
    """An unhashable id used to reach a set (a traceback); a float or boolean is no id."""
    data = json.loads(log_of(rec("s1"), status="cancelled", ids=["s1", "s2"]))
    data["eval"]["dataset"]["sample_ids"][1] = bad
    verdict = run("inspect-counts@3", json.dumps(data).encode())
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)
    assert "eval.dataset.sample_ids[1]" in verdict.message
