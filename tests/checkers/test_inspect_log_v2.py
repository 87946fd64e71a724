"""inspect-metric, inspect-counts, inspect-status, inspect-rescore @2: the header read and
compared with the samples, on logs written by hand as an attacker would, and on real ones.

Each weakness of the @1 versions (issue 30) is a test here that the @1 version passes and
the @2 version fails: @1 stays registered, trusting its params.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import checkers
from bundler.run.runner import run_checker, vacuity
from checkers.api import COMMON_ERRORS, Verdict
from checkers.inspect_log.log import read_log
from tests.inspect_support import inspect_logs

__all__ = ["inspect_logs"]  # the fixture, used by name

V2 = ("inspect-metric@2", "inspect-counts@2", "inspect-status@2", "inspect-rescore@2")


def run(key: str, data: bytes, **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"log": data}, params)


def sample(
    sid: str,
    completion: str,
    value: str | None,
    target: str = "4",
    epoch: int = 1,
    error: str | None = None,
    score: str = "match",
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": sid,
        "epoch": epoch,
        "target": target,
        "output": {"completion": completion},
        "scores": {} if value is None else {score: {"value": value}},
    }
    if error is not None:
        found["error"] = {"message": error}
    return found


def entry(
    value: float, scored: int, name: str = "match", scorer: str = "match", metric: str = "accuracy"
) -> dict[str, Any]:
    return {
        "name": name,
        "scorer": scorer,
        "reducer": None,
        "scored_samples": scored,
        "unscored_samples": 0,
        "metrics": {metric: {"name": metric, "value": value, "params": {}}},
    }


def log(
    samples: list[dict[str, Any]],
    results: dict[str, Any] | None,
    status: str = "success",
    scorers: list[dict[str, Any]] | None = None,
    error: dict[str, Any] | None = None,
) -> bytes:
    """A .json log written by hand: header fields as Inspect names them, and samples."""
    document: dict[str, Any] = {
        "version": 2,
        "status": status,
        "eval": {
            "task": "hand-written",
            "scorers": scorers if scorers is not None else [{"name": "match", "options": {}}],
            "dataset": {"samples": len({s["id"] for s in samples})},
            "config": {"epochs": 1},
        },
        "samples": samples,
    }
    if results is not None:
        document["results"] = results
    if error is not None:
        document["error"] = error
    return json.dumps(document).encode()


def results(total: int, completed: int, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"total_samples": total, "completed_samples": completed, "scores": list(entries)}


# 10 records, 5 correct; the header says accuracy 0.95 over 1,000 samples
TEN = [sample(f"s{i}", "4" if i < 5 else "5", "C" if i < 5 else "I") for i in range(10)]
FORGED = log(TEN, results(1000, 1000, entry(0.95, 1000)))
HONEST = log(TEN, results(10, 10, entry(0.5, 10)))
FIGURE = {"scorer": "match", "reducer": "", "metric": "accuracy"}


# -- inspect-metric@2 --------------------------------------------------------------------


def test_forged_header_accuracy_that_the_samples_do_not_give_fails_naming_the_figure() -> None:
    # @1 trusts the params: claimed 0.5, as the samples give, passes whatever the header says
    assert run("inspect-metric@1", FORGED, **FIGURE, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", FORGED, **FIGURE, claimed=0.5)
    assert verdict.status == "fail"
    assert verdict.codes == (
        "inspect.claimed_mismatch",
        "inspect.header_metric_mismatch",
        "inspect.header_scored_mismatch",
    )
    header = next(r for r in verdict.reasons if r.code == "inspect.header_metric_mismatch")
    assert header.details == {"figure": "match/-/accuracy", "header": 0.95, "samples": 0.5}
    assert "the header states 0.95, the samples give 0.5 over 10 sample(s)" in header.message
    scored = next(r for r in verdict.reasons if r.code == "inspect.header_scored_mismatch")
    assert scored.details == {
        "figure": "match/-/accuracy",
        "count": "scored_samples",
        "header": 1000,
        "samples": 10,
    }


def test_forged_header_fails_without_any_claimed_param() -> None:
    verdict = run("inspect-metric@2", FORGED, **FIGURE)
    assert verdict.codes == ("inspect.header_metric_mismatch", "inspect.header_scored_mismatch")


def test_honest_header_passes_and_a_claim_restating_it_passes() -> None:
    assert run("inspect-metric@2", HONEST, **FIGURE).status == "pass"
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.5)
    assert verdict.status == "pass", verdict.message
    assert verdict.details["header"] == 0.5


def test_claimed_figure_that_agrees_with_the_samples_but_not_the_header_fails() -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.6)
    assert verdict.codes == ("inspect.claimed_mismatch",)
    assert verdict.reasons[0].details == {
        "figure": "match/-/accuracy",
        "claimed": 0.6,
        "header": 0.5,
        "samples": 0.5,
    }


def test_claimed_figure_rounded_within_the_tolerance_passes() -> None:
    data = log(TEN[3:6], results(3, 3, entry(2 / 3, 3)))
    assert run("inspect-metric@2", data, **FIGURE, claimed=0.67, tolerance=0.005).status == "pass"
    assert run("inspect-metric@2", data, **FIGURE, claimed=0.67).codes == (
        "inspect.claimed_mismatch",
    )


@pytest.mark.parametrize("tolerance", [0.006, 0.5, -0.001, math.nan, math.inf])
def test_tolerance_outside_its_range_is_refused(tolerance: float) -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.5, tolerance=tolerance)
    assert verdict.status == "error" and verdict.codes in (
        ("params.invalid",),
        ("params.out_of_range",),
    )


@pytest.mark.parametrize("claimed", [math.nan, math.inf])
def test_a_claimed_figure_that_is_not_finite_is_refused(claimed: float) -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=claimed)
    assert verdict.status == "error" and verdict.codes in (
        ("params.invalid",),
        ("params.out_of_range",),
    )


def test_header_that_states_no_such_figure_fails() -> None:
    data = log(TEN, results(10, 10, entry(0.5, 10, metric="mean")))
    assert run("inspect-metric@1", data, **FIGURE, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", data, **FIGURE, claimed=0.5)
    assert verdict.codes == ("inspect.header_figure_missing",)
    assert run("inspect-metric@2", log(TEN, None), **FIGURE).codes == (
        "inspect.header_figure_missing",
    )


def test_header_that_states_a_figure_twice_is_refused() -> None:
    data = log(TEN, results(10, 10, entry(0.5, 10), entry(0.95, 10)))
    verdict = run("inspect-metric@2", data, **FIGURE)
    assert verdict.status == "error" and "states 2 results for 'match'" in verdict.message


@pytest.mark.parametrize("value", ["0.5", None, [0.5], True])
def test_header_figure_that_is_not_a_number_is_refused(value: Any) -> None:
    data = log(TEN, results(10, 10, entry(value, 10)))
    verdict = run("inspect-metric@2", data, **FIGURE)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",), verdict.message


def test_header_unscored_count_that_the_samples_do_not_give_fails() -> None:
    forged = entry(0.5, 10)
    forged["unscored_samples"] = 3
    verdict = run("inspect-metric@2", log(TEN, results(10, 10, forged)), **FIGURE)
    assert verdict.codes == ("inspect.header_scored_mismatch",)
    assert verdict.reasons[0].details["count"] == "unscored_samples"


# -- inspect-counts@2 --------------------------------------------------------------------


def test_forged_header_counts_fail_naming_each_count() -> None:
    assert run("inspect-counts@1", FORGED, claimed={"total_samples": 10}).status == "pass"
    verdict = run("inspect-counts@2", FORGED)
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert [r.details for r in verdict.reasons] == [
        {"figure": "total_samples", "header": 1000, "samples": 10},
        {"figure": "completed_samples", "header": 1000, "samples": 10},
    ]


def test_claimed_counts_must_agree_with_header_and_samples() -> None:
    verdict = run("inspect-counts@2", FORGED, claimed={"total_samples": 10})
    assert verdict.codes == ("inspect.claimed_mismatch", "inspect.header_count_mismatch")
    claimed = next(r for r in verdict.reasons if r.code == "inspect.claimed_mismatch")
    assert claimed.details == {
        "figure": "total_samples",
        "claimed": 10,
        "header": 1000,
        "samples": 10,
    }
    assert run("inspect-counts@2", HONEST, claimed={"total_samples": 10}).status == "pass"
    assert run("inspect-counts@2", HONEST, claimed={"errored_samples": 1}).codes == (
        "inspect.claimed_mismatch",
    )


def test_header_completed_count_that_hides_errored_records_fails() -> None:
    errored = [*TEN[:9], sample("s9", "", None, error="boom")]
    verdict = run("inspect-counts@2", log(errored, results(10, 10, entry(5 / 9, 9))))
    assert [r.details["figure"] for r in verdict.reasons] == [
        "completed_samples",
        "errored_samples",
    ]


def test_a_log_with_no_results_is_compared_with_its_planned_total() -> None:
    assert run("inspect-counts@2", log(TEN, None)).status == "pass"
    planned = json.loads(log(TEN, None))
    planned["eval"]["config"]["epochs"] = 3
    verdict = run("inspect-counts@2", json.dumps(planned).encode())
    assert verdict.reasons[0].details == {"figure": "total_samples", "header": 30, "samples": 10}


def test_a_header_with_no_counts_fails() -> None:
    bare = json.loads(log(TEN, None))
    del bare["eval"]["dataset"]
    verdict = run("inspect-counts@2", json.dumps(bare).encode())
    assert verdict.codes == ("inspect.header_counts_missing",)


@pytest.mark.parametrize(
    "claimed", [{}, {"samples": 10}, {"total_samples": -1}, {"total_samples": 1.5}]
)
def test_claimed_counts_outside_their_range_are_refused(claimed: dict[str, Any]) -> None:
    verdict = run("inspect-counts@2", HONEST, claimed=claimed)
    assert verdict.status == "error" and verdict.codes == ("params.invalid",)


# -- inspect-status@2 --------------------------------------------------------------------

THREE_OF_FOUR = [
    sample("s0", "4", "C"),
    *[sample(f"s{i}", "", None, error=f"RuntimeError('boom {i}')") for i in (1, 2, 3)],
]


def test_status_other_than_success_with_three_of_four_records_errored_fails() -> None:
    data = log(THREE_OF_FOUR, results(4, 1, entry(1.0, 1)), status="error")
    old = run("inspect-status@1", data)
    assert old.status == "pass" and "none of 4 sample record(s) errored" in old.message
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.records_errored", "inspect.status_not_success")
    assert verdict.message == "the log says 'error', not success; 3 of 4 sample records errored"
    errored = next(r for r in verdict.reasons if r.code == "inspect.records_errored")
    assert errored.details == {"errored": 3, "records": 4, "status": "error"}
    assert "RuntimeError('boom 1')" in errored.message


def test_success_with_errored_records_fails_with_the_counts() -> None:
    data = log(THREE_OF_FOUR, results(4, 1, entry(1.0, 1)))
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.records_errored",)
    assert verdict.message == "the log says success, but 3 of 4 sample records errored"


def test_cancelled_run_with_no_errored_record_fails_and_says_its_status() -> None:
    data = log(TEN, None, status="cancelled", error={"message": "cancelled by the user"})
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.no_results", "inspect.status_not_success")
    assert verdict.message.startswith("the log says 'cancelled', not success")
    status = next(r for r in verdict.reasons if r.code == "inspect.status_not_success")
    assert "cancelled by the user" in status.message


def test_clean_run_passes_and_a_log_without_records_is_refused() -> None:
    assert run("inspect-status@2", HONEST).status == "pass"
    verdict = run("inspect-status@2", log([], results(0, 0)))
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


# -- inspect-rescore@2 -------------------------------------------------------------------

# match(location="begin") scored these: "4 is it" correct, "it is 4" not
BEGIN = [sample("s1", "4 is it", "C"), sample("s2", "it is 4", "I")]
BEGIN_LOG = log(BEGIN, None, scorers=[{"name": "match", "options": {"location": "begin"}}])


def test_rescore_with_options_differing_from_the_logs_fails() -> None:
    # scores stored as location=end would give them, but the log records location=begin
    as_end = [sample("s1", "4 is it", "I"), sample("s2", "it is 4", "C")]
    data = log(as_end, None, scorers=[{"name": "match", "options": {"location": "begin"}}])
    params = {"scorer": "match", "method": "match", "options": {"location": "end"}}
    assert run("inspect-rescore@1", data, **params).status == "pass"
    verdict = run("inspect-rescore@2", data, **params)
    assert verdict.codes == ("inspect.score_mismatch", "inspect.scorer_mismatch")
    mismatch = next(r for r in verdict.reasons if r.code == "inspect.scorer_mismatch")
    assert mismatch.details == {
        "field": "options",
        "params": {"location": "end"},
        "log": {"location": "begin"},
    }
    assert verdict.details["mismatches"] == 2


def test_rescore_uses_the_logs_options_when_the_params_restate_none() -> None:
    assert run("inspect-rescore@2", BEGIN_LOG, scorer="match").status == "pass"
    verdict = run("inspect-rescore@1", BEGIN_LOG, scorer="match", method="match", options={})
    assert verdict.codes == ("inspect.score_mismatch",)  # @1 judges under the params


def test_options_restated_with_inspects_defaults_agree() -> None:
    restated = {"location": "begin", "ignore_case": True, "numeric": False}
    verdict = run("inspect-rescore@2", BEGIN_LOG, scorer="match", method="match", options=restated)
    assert verdict.status == "pass", verdict.message
    verdict = run(
        "inspect-rescore@2",
        BEGIN_LOG,
        scorer="match",
        options={"location": "begin", "ignore_case": 1},
    )
    assert verdict.codes == ("inspect.scorer_mismatch",)  # 1 is not true


def test_rescore_with_another_method_than_the_log_records_fails() -> None:
    verdict = run("inspect-rescore@2", BEGIN_LOG, scorer="match", method="includes")
    assert verdict.codes == ("inspect.scorer_mismatch",)
    assert verdict.reasons[0].details == {"field": "method", "params": "includes", "log": "match"}


def test_the_scorer_is_found_through_the_result_entry_naming_it() -> None:
    named = [sample(s["id"], s["output"]["completion"], "C", score="mine") for s in BEGIN[:1]]
    header = results(1, 1, entry(1.0, 1, name="mine", scorer="match"))
    data = log(named, header, scorers=[{"name": "match", "options": {"location": "begin"}}])
    assert run("inspect-rescore@2", data, scorer="mine").status == "pass"


@pytest.mark.parametrize(
    ("scorers", "words"),
    [
        ([], "records no scorer 'match'"),
        (
            [{"name": "match", "options": {}}, {"name": "match", "options": {"location": "any"}}],
            "2 times with different options",
        ),
        ([{"name": "match", "options": {"numeric": True}}], "numeric=True"),
        ([{"name": "model_graded_qa", "options": {}}], "not one this checker re-scores"),
    ],
)
def test_a_scorer_the_log_does_not_state_exactly_is_not_rescored(
    scorers: list[dict[str, Any]], words: str
) -> None:
    maker = scorers[0]["name"] if scorers else "match"
    header = results(2, 2, entry(0.5, 2, scorer=maker))
    verdict = run("inspect-rescore@2", log(BEGIN, header, scorers=scorers), scorer="match")
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)
    assert words in verdict.message


# -- real logs ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mixed.eval", "mixed.json"])
def test_every_header_figure_count_and_score_of_a_real_log_follows(
    inspect_logs: Path, name: str
) -> None:
    data = (inspect_logs / name).read_bytes()
    found = read_log(data)
    for e in found.result_scores():
        for metric, value in e["metrics"].items():
            params = {"scorer": e["name"], "reducer": e["reducer"], "metric": metric}
            verdict = run("inspect-metric@2", data, **params, claimed=value["value"])
            assert verdict.status == "pass", (params, verdict.message)
    assert run("inspect-counts@2", data).status == "pass"
    for spec in found.spec["scorers"][:4]:
        verdict = run("inspect-rescore@2", data, scorer=spec["name"])
        assert verdict.status == "pass", verdict.message
    status = run("inspect-status@2", data)
    assert status.codes == ("inspect.records_errored",)
    assert status.message == "the log says success, but 1 of 12 sample records errored"


def test_a_real_log_whose_header_figure_was_edited_fails_under_v2(inspect_logs: Path) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    first = document["results"]["scores"][0]
    first["metrics"]["accuracy"]["value"] = 0.95
    data = json.dumps(document).encode()
    params = {"scorer": first["name"], "reducer": first["reducer"], "metric": "accuracy"}
    assert run("inspect-metric@1", data, **params, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", data, **params, claimed=0.5)
    assert verdict.codes == ("inspect.claimed_mismatch", "inspect.header_metric_mismatch")


# -- every @2 checker can fail: counterexamples ----------------------------------------------

PARAMS: list[tuple[str, dict[str, Any]]] = [
    ("inspect-metric@2", {"scorer": "match", "reducer": "mean", "metric": "accuracy"}),
    ("inspect-metric@2", {**FIGURE, "claimed": 0.5, "tolerance": 0.005}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "pass_at_2", "metric": "stderr", "claimed": 0}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "at_least_3", "metric": "var"}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "mode", "metric": "mean", "claimed": 7.5}),
    ("inspect-counts@2", {}),
    ("inspect-counts@2", {"claimed": {"total_samples": 1, "completed_samples": 1}}),
    ("inspect-counts@2", {"claimed": {"errored_samples": 0}}),
    ("inspect-counts@2", {"claimed": {"total_samples": 10**9}}),
    ("inspect-status@2", {}),
    ("inspect-rescore@2", {"scorer": "match"}),
    ("inspect-rescore@2", {"scorer": "p", "method": "pattern", "options": {"pattern": ".*"}}),
    ("inspect-rescore@2", {"scorer": "e", "method": "exact"}),
    ("inspect-rescore@2", {"scorer": "i", "options": {"ignore_case": False}}),
    ("inspect-rescore@2", {"scorer": "m", "method": "match", "options": {"location": "any"}}),
]


@pytest.mark.parametrize(("key", "params"), PARAMS, ids=lambda v: str(v)[:50])
def test_counterexample_makes_the_v2_checker_fail_for_a_reason_of_its_own(
    key: str, params: dict[str, Any]
) -> None:
    found = checkers.get(key)
    assert found is not None and found.counterexample is not None
    full = {p.name: p.default for p in found.params if not p.required} | params
    inputs = found.counterexample(full)
    assert inputs is not None
    verdict = run_checker(found, inputs, params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(found.reasons) and not set(verdict.codes) & set(COMMON_ERRORS)
    assert vacuity(found, params) is None


@pytest.mark.parametrize(
    ("key", "params"),
    [
        ("inspect-metric@2", {**FIGURE, "tolerance": 0.05}),
        ("inspect-metric@2", {**FIGURE, "claimed": math.nan}),
        ("inspect-counts@2", {"claimed": {"total_samples": -3}}),
        ("inspect-rescore@2", {"scorer": "m", "method": "model_graded_qa"}),
    ],
)
def test_params_outside_their_range_are_refused_before_any_input(
    key: str, params: dict[str, Any]
) -> None:
    found = checkers.get(key)
    assert found is not None
    refused = vacuity(found, params)
    assert refused is not None and refused.codes in (("params.invalid",), ("params.out_of_range",))


def test_every_v2_checker_is_registered_beside_its_v1() -> None:
    registry = checkers.registry()
    for key in V2:
        assert key in registry and key.replace("@2", "@1") in registry
