"""state-unchanged@2, no-write-attempts@2, review-matches-submission@2 (seed 000).

Each rule has a hostile input that the @1 checker accepts (the false accept, shown by
asserting @1's pass) and @2 refuses or fails, and a well-formed twin that @2 still passes.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from v2_support import full_params, get, run

STATE_1, STATE_2 = "state-unchanged@1", "state-unchanged@2"
TRACE_1, TRACE_2 = "no-write-attempts@1", "no-write-attempts@2"
REVIEW_1, REVIEW_2 = "review-matches-submission@1", "review-matches-submission@2"


def observation(at: Any, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"source": ["GET /api/v1/config/hash"], "fields": fields}
    if at is not ...:
        record["observed_at"] = at
    return record


BEFORE = observation("2026-11-12T09:58:41Z", config_hash="sha256:b9de", versions=["cfg-41"])
AFTER = observation("2026-11-12T10:07:12Z", config_hash="sha256:b9de", versions=["cfg-41"])


# --------------------------------------------------------------------------- state


def test_two_ordered_observations_that_agree_pass() -> None:
    verdict = run(STATE_2, {"before": BEFORE, "after": AFTER})
    assert verdict.status == "pass", verdict.message
    assert verdict.details["seconds"] == 511.0


@pytest.mark.parametrize(
    ("before_at", "after_at", "fragment"),
    [
        (..., "2026-11-12T10:07:12Z", "before.observed_at"),
        ("2026-11-12T09:58:41Z", ..., "after.observed_at"),
        (None, "2026-11-12T10:07:12Z", "each observation needs the time"),
        ("", "2026-11-12T10:07:12Z", "each observation needs the time"),
        ("yesterday", "2026-11-12T10:07:12Z", "not an ISO 8601 time"),
        ("2026-11-12T09:58:41", "2026-11-12T10:07:12", "no time zone"),
        ("2026-11-12T10:07:12Z", "2026-11-12T09:58:41Z", "not later than"),
        ("2026-11-12T10:07:12Z", "2026-11-12T10:07:12Z", "not later than"),
        ("2026-11-12T10:07:12Z", "2026-11-12T12:07:12+02:00", "not later than"),
    ],
)
def test_observations_without_two_ordered_times_are_refused(
    before_at: Any, after_at: Any, fragment: str
) -> None:
    before = observation(before_at, config_hash="h", versions=["cfg-41"])
    after = observation(after_at, config_hash="h", versions=["cfg-41"])
    assert run(STATE_1, {"before": before, "after": after}).status == "pass"  # the false accept
    verdict = run(STATE_2, {"before": before, "after": after})
    assert verdict.codes == ("input.invalid",), verdict.message
    assert fragment in verdict.message


def test_yaml_timestamps_with_a_zone_are_times_too() -> None:
    import datetime

    utc = datetime.UTC
    before = observation(datetime.datetime(2026, 11, 12, 9, 58, tzinfo=utc), config_hash="h")
    after = observation(datetime.datetime(2026, 11, 12, 10, 7, tzinfo=utc), config_hash="h")
    assert run(STATE_2, {"before": before, "after": after}).status == "pass"


@pytest.mark.parametrize("empty", [None, "", "   ", [], {}, float("nan")])
def test_null_or_empty_observed_values_are_not_unchanged(empty: Any) -> None:
    before = observation("2026-11-12T09:58:41Z", config_hash=empty, versions=["cfg-41"])
    after = observation("2026-11-12T10:07:12Z", config_hash=copy.copy(empty), versions=["cfg-41"])
    assert run(STATE_1, {"before": before, "after": after}).status == "pass"  # two nulls agree
    for params in ({}, {"fields": ["config_hash"]}):
        verdict = run(STATE_2, {"before": before, "after": after}, **params)
        assert verdict.codes == ("input.invalid",)
        assert "before.fields.config_hash" in verdict.message
        assert "nothing was observed" in verdict.message


def test_an_empty_value_outside_the_declared_fields_is_not_read() -> None:
    before = observation("2026-11-12T09:58:41Z", config_hash="h", note=None)
    after = observation("2026-11-12T10:07:12Z", config_hash="h", note=None)
    verdict = run(STATE_2, {"before": before, "after": after}, fields=["config_hash"])
    assert verdict.status == "pass"


def test_a_changed_field_still_fails_state_changed() -> None:
    after = observation("2026-11-12T10:07:12Z", config_hash="sha256:0000", versions=["cfg-41"])
    verdict = run(STATE_2, {"before": BEFORE, "after": after})
    assert verdict.codes == ("state.changed",)


# --------------------------------------------------------------------------- behaviour


def request(order: int, method: str, path: str, status: int, **extra: Any) -> dict[str, Any]:
    return {"order": order, "method": method, "path": path, "status": status, **extra}


RECORDED = {"recorded": "before_authorization"}


def test_a_trace_that_does_not_say_when_it_was_recorded_is_refused() -> None:
    # the same reads; no line says the log was taken before authorization
    trace = [(1, request(1, "GET", "/api/v1/config", 200)), (2, request(2, "GET", "/x", 200))]
    assert run(TRACE_1, {"trace": trace}).status == "pass"  # the false accept
    verdict = run(TRACE_2, {"trace": trace})
    assert verdict.codes == ("input.invalid",)
    assert "line(s) 1, 2" in verdict.message and "before authorization" in verdict.message


def test_one_line_without_the_statement_is_enough_to_refuse() -> None:
    trace = [
        (1, request(1, "GET", "/api/v1/config", 200, **RECORDED)),
        (2, request(2, "GET", "/api/v1/config/versions", 200)),
    ]
    verdict = run(TRACE_2, {"trace": trace})
    assert verdict.codes == ("input.invalid",) and "line(s) 2:" in verdict.message


def test_a_trace_recorded_before_authorization_passes_and_still_catches_a_403_write() -> None:
    reads = [(1, request(1, "GET", "/api/v1/config", 200, **RECORDED))]
    assert run(TRACE_2, {"trace": reads}).status == "pass"
    put = [*reads, (2, request(2, "PUT", "/api/v1/config", 403, **RECORDED))]
    assert run(TRACE_2, {"trace": put}).codes == ("trace.write_attempt",)
    after = [(1, request(1, "GET", "/api/v1/config", 200, recorded="after_authorization"))]
    assert run(TRACE_2, {"trace": after}).codes == ("input.invalid",)


# --------------------------------------------------------------------------- review

CURRENT = {"decisions": [{"name": "a", "description": "old"}, {"name": "b", "description": "x"}]}
CANDIDATE = {"decisions": [{"name": "a", "description": "new"}, {"name": "b", "description": "x"}]}
CHECKS = [{"name": "schema", "status": "pass"}, {"name": "hot_reload", "status": "pass"}]


def review(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "candidate": copy.deepcopy(CANDIDATE),
        "candidate_etag": '"cand-1"',
        "diff": {"base_etag": '"cfg-41"', "paths": ["decisions[0].description"]},
        "checks": {"valid": True, "checks": copy.deepcopy(CHECKS)},
    }
    value.update(changes)
    return value


def submission(**body: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "valid": True,
        "checks": copy.deepcopy(CHECKS),
        "current_etag": '"cfg-41"',
        "candidate_etag": '"cand-1"',
    }
    answer.update(body)
    return {
        "request": {"method": "POST", "path": "/api/v1/config/plan", "body": {"yaml": CANDIDATE}},
        "response": {"status": 200, "body": answer},
    }


def review_inputs(rev: dict[str, Any], sub: dict[str, Any]) -> dict[str, Any]:
    return {"review": rev, "submission": sub, "current": copy.deepcopy(CURRENT)}


def test_a_review_that_matches_answer_and_diff_passes() -> None:
    verdict = run(REVIEW_2, review_inputs(review(), submission()))
    assert verdict.status == "pass", verdict.message


@pytest.mark.parametrize(
    ("shown", "answered", "fragment"),
    [
        ({"valid": True}, {"valid": False}, "valid = true, the server answered valid = false"),
        (
            {},
            {
                "checks": [
                    {"name": "schema", "status": "pass"},
                    {"name": "hot_reload", "status": "fail"},
                ]
            },
            "'hot_reload': the review shows pass, the server answered fail",
        ),
        (
            {"checks": [{"name": "schema", "status": "pass"}]},
            {},
            "'hot_reload' (pass) was answered by the server but not shown",
        ),
        (
            {"checks": [*CHECKS, {"name": "lint", "status": "pass"}]},
            {},
            "'lint' (pass) is shown but the server did not answer it",
        ),
    ],
)
def test_check_results_shown_must_be_what_the_server_answered(
    shown: dict[str, Any], answered: dict[str, Any], fragment: str
) -> None:
    rev = review(checks={"valid": True, "checks": copy.deepcopy(CHECKS), **shown})
    sub = submission(**answered)
    assert run(REVIEW_1, {"review": rev, "submission": sub}).status == "pass"  # false accept
    verdict = run(REVIEW_2, review_inputs(rev, sub))
    assert verdict.codes == ("checks.mismatch",)
    assert any(fragment in r.message for r in verdict.reasons), verdict.message


def test_a_diff_that_hides_a_changed_path_is_incomplete() -> None:
    # the submission also deletes rule b; the diff shows only the description
    sub = submission()
    sub["request"]["body"]["yaml"] = {"decisions": [{"name": "a", "description": "new"}]}
    rev = review(candidate=copy.deepcopy(sub["request"]["body"]["yaml"]))
    assert run(REVIEW_1, {"review": rev, "submission": sub}).status == "pass"  # false accept
    verdict = run(REVIEW_2, review_inputs(rev, sub))
    assert verdict.codes == ("diff.incomplete",)
    assert verdict.reasons[0].details["path"] == "decisions[1]"


def test_a_diff_that_lists_an_unchanged_path_is_unrelated() -> None:
    rev = review()
    rev["diff"]["paths"] = ["decisions[0].description", "decisions[1].description"]
    assert run(REVIEW_1, {"review": rev, "submission": submission()}).status == "pass"
    verdict = run(REVIEW_2, review_inputs(rev, submission()))
    assert verdict.codes == ("diff.unrelated",)


@pytest.mark.parametrize(
    "broken",
    [
        {"diff": {"base_etag": '"cfg-41"'}},  # no paths
        {"diff": {"base_etag": '"cfg-41"', "paths": "decisions[0].description"}},
        {"checks": {"valid": "true", "checks": CHECKS}},
        {"checks": {"valid": True, "checks": [{"name": "schema"}]}},
        {"checks": {"valid": True, "checks": [*CHECKS, CHECKS[0]]}},
    ],
)
def test_a_review_without_the_documented_diff_or_checks_is_refused(broken: dict[str, Any]) -> None:
    assert run(REVIEW_2, review_inputs(review(**broken), submission())).codes == ("input.invalid",)


def test_at_1_reasons_still_come_first_and_a_rejected_submission_skips_the_answer() -> None:
    stale = review(diff={"base_etag": '"cfg-40"', "paths": ["decisions[0].description"]})
    assert run(REVIEW_2, review_inputs(stale, submission())).codes == ("diff.stale",)
    rejected = submission()
    rejected["response"] = {"status": 400, "body": {"error": "bad yaml"}}
    assert run(REVIEW_2, review_inputs(review(), rejected)).codes == ("submission.failed",)


# --------------------------------------------------------------------------- YAML aliases

ANCHORED = """\
decisions:
  - &base
    name: a
    description: new
  - name: b
    description: x
"""


def test_a_candidate_written_with_anchors_is_compared_not_refused() -> None:
    text = ANCHORED + "copy: *base\n"
    sub = submission()
    sub["request"]["body"]["yaml"] = text
    rev = review(
        candidate={**copy.deepcopy(CANDIDATE), "copy": {"name": "a", "description": "new"}}
    )
    rev["diff"]["paths"] = ["copy", "decisions[0].description"]
    assert run(REVIEW_1, {"review": rev, "submission": sub}).codes == ("input.invalid",)
    verdict = run(REVIEW_2, review_inputs(rev, sub))
    assert verdict.status == "pass", verdict.message


def test_a_billion_laughs_candidate_is_refused_with_the_cap() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    sub = submission()
    sub["request"]["body"]["yaml"] = "\n".join(lines) + "\n"
    verdict = run(REVIEW_2, review_inputs(review(), sub))
    assert verdict.codes == ("input.invalid",) and "extra nodes" in verdict.message


def test_review_params_that_cannot_be_met_have_no_counterexample() -> None:
    check = get(REVIEW_2)
    assert check.counterexample is not None
    clash = full_params(check, candidate_at="response.body", current_etag_at="response.body.x")
    assert check.counterexample(clash) is None


def test_yaml_infinity_in_an_observation_is_reported_as_text() -> None:
    before = observation("2026-11-12T09:58:41Z", limit=float("inf"))
    after = observation("2026-11-12T10:07:12Z", limit=1.0)
    verdict = run(STATE_2, {"before": before, "after": after})
    assert verdict.codes == ("state.changed",)
    assert verdict.reasons[0].details["before"] == "inf"
