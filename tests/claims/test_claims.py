from __future__ import annotations

from bundler.format.claims import judge_claim, overall
from bundler.format.manifest import Case, Claim
from bundler.format.results import CaseResult, judge
from checkers.api import Reason, Verdict

PASS_CASE = Case("p", "structured-equal@1", {"actual": "a", "expected": "b"}, {}, "pass")
FAIL_CASE = Case(
    "f", "structured-equal@1", {"actual": "a", "expected": "b"}, {}, "fail", ("content.removed",)
)
PASSED = Verdict.passed("ok")
REMOVED = Verdict.failed("no", [Reason("content.removed", "x")])
CHANGED = Verdict.failed("no", [Reason("content.changed", "x")])
ERROR = Verdict.errored("checker.raised", "boom")


def result(case: Case, verdict: Verdict) -> CaseResult:
    outcome, why = judge(case, verdict)
    return CaseResult(case, verdict, outcome, why)


def test_expected_reasons_must_match_exactly() -> None:
    assert judge(FAIL_CASE, REMOVED)[0] == "reproduced"
    assert judge(FAIL_CASE, CHANGED)[0] == "diverged"
    both = Verdict.failed("no", [Reason("content.removed", "x"), Reason("content.changed", "y")])
    assert judge(FAIL_CASE, both)[0] == "diverged"


def test_negative_control_that_passes_diverges() -> None:
    assert judge(FAIL_CASE, PASSED) == ("diverged", "expected fail, observed pass")


def test_error_is_inconclusive_whatever_was_expected() -> None:
    assert judge(PASS_CASE, ERROR)[0] == "inconclusive"
    assert judge(FAIL_CASE, ERROR)[0] == "inconclusive"


def test_supported_needs_all_reproduced_and_a_negative_control() -> None:
    claim = Claim("c", "s", ("p", "f"), ())
    results = {"p": result(PASS_CASE, PASSED), "f": result(FAIL_CASE, REMOVED)}
    judged = judge_claim(claim, results)
    assert judged.status == "supported"
    assert (judged.reproduced, judged.total, judged.negative_controls) == (2, 2, 1)


def test_claim_without_negative_control_is_inconclusive_at_verify_time() -> None:
    claim = Claim("c", "s", ("p",), ())
    judged = judge_claim(claim, {"p": result(PASS_CASE, PASSED)})
    assert judged.status == "inconclusive"
    assert "no negative control" in judged.why


def test_waiver_allows_support_and_is_reported() -> None:
    claim = Claim("c", "s", ("p",), (), negative_control_waiver="no failing input exists")
    judged = judge_claim(claim, {"p": result(PASS_CASE, PASSED)})
    assert judged.status == "supported"
    assert judged.waiver == "no failing input exists"
    assert "waived" in judged.why


def test_inconclusive_never_counts_as_support_or_contradiction() -> None:
    claim = Claim("c", "s", ("p", "f"), ())
    judged = judge_claim(claim, {"p": result(PASS_CASE, ERROR), "f": result(FAIL_CASE, REMOVED)})
    assert judged.status == "inconclusive"
    assert (judged.reproduced, judged.inconclusive, judged.diverged) == (1, 1, 0)
    assert judged.why == "1 of 2 cases reproduced; 1 inconclusive (p)"


def test_diverged_beats_inconclusive() -> None:
    claim = Claim("c", "s", ("p", "f"), ())
    judged = judge_claim(claim, {"p": result(PASS_CASE, ERROR), "f": result(FAIL_CASE, PASSED)})
    assert judged.status == "contradicted"


def test_overall_of_nothing_is_not_supported() -> None:
    assert overall([]) == "inconclusive"
