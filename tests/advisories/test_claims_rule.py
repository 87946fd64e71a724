"""The one advisory rule (``bundler.format.claims``), on cases built in memory: a claim
whose passing cases rest on an advised checker version is inconclusive unless its
advisory is accepted; nothing else about the claim changes."""

from __future__ import annotations

from typing import Literal

import pytest

from bundler.errors import UsageError
from bundler.format.claims import accepted_advisories, judge_claim, overall
from bundler.format.manifest import Case, Claim
from bundler.format.results import CaseResult, judge
from checkers.api import Reason, Verdict

ADVISED, FIXED = "no-write-attempts@1", "no-write-attempts@2"  # RB-2026-0009
ID = "RB-2026-0009"
PASSED = Verdict.passed("ok")
WRITE = Verdict.failed("no", [Reason("trace.write_attempt", "PUT")])


def case(case_id: str, checker: str, expect: Literal["pass", "fail"]) -> Case:
    reasons = ("trace.write_attempt",) if expect == "fail" else ()
    return Case(case_id, checker, {"trace": "t.jsonl"}, {}, expect, reasons)


def result(c: Case, verdict: Verdict) -> CaseResult:
    outcome, why = judge(c, verdict)
    return CaseResult(c, verdict, outcome, why)


def claim_of(
    passing: str, control: str, passed: Verdict = PASSED
) -> tuple[Claim, dict[str, CaseResult]]:
    p, f = case("p", passing, "pass"), case("f", control, "fail")
    return Claim("c", "s", ("p", "f"), ()), {"p": result(p, passed), "f": result(f, WRITE)}


def test_a_passing_case_on_an_advised_version_never_counts_as_support() -> None:
    judged = judge_claim(*claim_of(ADVISED, ADVISED))
    assert judged.status == "inconclusive" and overall([judged]) == "inconclusive"
    assert ID in judged.why and FIXED in judged.why and f"--accept-advisory {ID}" in judged.why
    assert judged.reproduced == 2 and judged.inconclusive == 0  # the cases are as before
    assert [(u.advisory.id, u.checker, u.cases, u.accepted) for u in judged.advisories] == [
        (ID, ADVISED, ("p",), False)
    ]


def test_accepting_the_advisory_restores_the_old_judgement_and_says_so() -> None:
    claim, results = claim_of(ADVISED, ADVISED)
    judged = judge_claim(claim, results, accepted=[ID])
    assert judged.status == "supported"
    assert judged.why.endswith(f"advisory {ID} accepted by the reviewer")
    assert [u.accepted for u in judged.advisories] == [True]


def test_accepting_another_advisory_changes_nothing() -> None:
    judged = judge_claim(*claim_of(ADVISED, ADVISED), accepted=["RB-2026-0001"])
    assert judged.status == "inconclusive"


def test_the_fixed_version_is_judged_as_before() -> None:
    judged = judge_claim(*claim_of(FIXED, FIXED))
    assert judged.status == "supported" and judged.advisories == ()


def test_a_control_on_an_advised_version_is_not_a_claim_resting_on_it() -> None:
    # an advisory describes a false pass; a case expected to fail is not helped by one
    claim, results = claim_of(FIXED, ADVISED)
    judged = judge_claim(claim, results)
    assert judged.advisories == ()
    assert judged.status == "inconclusive" and "no negative control" in judged.why


def test_a_contradicted_claim_stays_contradicted() -> None:
    judged = judge_claim(*claim_of(ADVISED, ADVISED, passed=WRITE))
    assert judged.status == "contradicted" and ID not in judged.why


def test_an_unknown_id_is_refused_and_none_parses_nothing() -> None:
    assert accepted_advisories([]) == ()
    assert accepted_advisories([ID, ID]) == (ID,)
    with pytest.raises(UsageError, match="RB-2026-0999: no such advisory"):
        accepted_advisories(["RB-2026-0999"])


def test_a_finding_on_an_advised_version_never_counts_as_support() -> None:
    # a finding rests on its checker's fail as a passing case on its pass: an advised
    # version can fail what the fixed one would not (inspect-counts@2 fails every
    # unfinished run), so "the output is wrong" is as forgeable as "it is right"
    finding = Case(
        "f", ADVISED, {"trace": "t.jsonl"}, {}, "fail", ("trace.write_attempt",), "finding"
    )
    claim = Claim("c", "the agent attempted a write", ("f",), ())
    judged = judge_claim(claim, {"f": result(finding, WRITE)})
    assert judged.status == "inconclusive" and ID in judged.why
    assert [(u.checker, u.cases) for u in judged.advisories] == [(ADVISED, ("f",))]
    assert judge_claim(claim, {"f": result(finding, WRITE)}, accepted=[ID]).status == "supported"
