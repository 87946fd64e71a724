"""End to end: the config-change example bundle builds, verifies with every claim
supported, and a copy with one expected verdict flipped is contradicted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.run.verify import verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "bundles" / "config-change"


@pytest.fixture(scope="module")
def bundle(example_bundle: Callable[[str], Path]) -> Path:
    return example_bundle("config-change")


def case_of(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in doc["cases"] if c["id"] == case_id)


def test_config_change_bundle_verifies_with_every_claim_supported(bundle: Path) -> None:
    result = verify(bundle)
    assert result.exit_code == 0
    assert {c.claim.id: c.status for c in result.claims} == {
        "content-check-catches-collateral-deletion": "supported",
        "verdict-depends-on-declared-merge-semantics": "supported",
        "content-checker-tested-with-known-answers": "supported",
        "state-unchanged-at-two-observation-points": "supported",
        "write-attempts-are-detected-before-authorization": "supported",
        "config-plan-workflow-nine-cases": "supported",
        "review-shows-the-servers-answer-and-the-whole-change": "supported",
        "string-body-located-at-local-receipt": "supported",
    }
    assert [r.outcome for r in result.cases] == ["reproduced"] * 25


def test_config_plan_workflow_claim_has_the_nine_cases(bundle: Path) -> None:
    result = verify(bundle)
    workflow = next(c for c in result.claims if c.claim.id == "config-plan-workflow-nine-cases")
    assert (workflow.total, workflow.reproduced, workflow.negative_controls) == (9, 9, 6)
    by_id = {r.case.id: r for r in result.cases}
    detected = {
        "plan-request-not-reviewed-content": ("diff.incomplete", "review.mismatch"),
        "plan-stale-diff": ("diff.stale",),
        "plan-rejected-write-attempt": ("trace.write_attempt",),
        "plan-wrong-candidate-etag": ("etag.mismatch",),
    }
    for case_id, codes in detected.items():
        assert by_id[case_id].verdict.codes == codes


def test_verify_prints_claims_limits_and_scope(bundle: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(bundle)])
    assert result.exit_code == 0, result.output
    assert result.output.count("  supported     ") == 8
    assert "not continuous monitoring" in result.output  # a limit
    assert "A model completes the task on a re-run" in result.output  # the scope
    assert "Why the tool call's body became a string" in result.output


def test_flipped_collateral_deletion_verdict_is_contradicted(bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case = case_of(doc, "content-only-target-request-loses-other-rules")
        case["expect"] = "pass"
        del case["expect_reasons"]

    flipped = edit_manifest(bundle, tmp_path / "flipped.bundle.tar.gz", flip)
    result = verify(flipped)
    assert result.exit_code == 1
    contradicted = {c.claim.id for c in result.claims if c.status == "contradicted"}
    assert contradicted == {
        "content-check-catches-collateral-deletion",
        "verdict-depends-on-declared-merge-semantics",
    }
    code = CliRunner().invoke(main, ["verify", str(flipped)]).exit_code
    assert code == 1


def test_negative_control_failing_for_another_reason_is_contradicted(
    bundle: Path, tmp_path: Path
) -> None:
    def other_reason(doc: dict[str, Any]) -> None:
        case_of(doc, "plan-stale-diff")["expect_reasons"] = ["etag.mismatch"]

    result = verify(edit_manifest(bundle, tmp_path / "x.bundle.tar.gz", other_reason))
    stale = next(r for r in result.cases if r.case.id == "plan-stale-diff")
    assert stale.outcome == "diverged"
    assert result.exit_code == 1


def test_malformed_trace_line_is_inconclusive_naming_the_line(bundle: Path, tmp_path: Path) -> None:
    trace = (SOURCE / "inputs/traces/read-only.jsonl").read_bytes()
    broken = trace + b'{"order": 5, "method": "PUT", "path": "/api/v1/config"\n'
    copy = edit_manifest(
        bundle,
        tmp_path / "x.bundle.tar.gz",
        lambda doc: None,
        files={"inputs/traces/read-only.jsonl": broken},
    )
    result = verify(copy)
    case = next(r for r in result.cases if r.case.id == "trace-read-only-passes")
    assert case.outcome == "inconclusive"
    assert "inputs/traces/read-only.jsonl:5" in case.verdict.message
    assert result.exit_code == 4


def test_string_body_claim_rests_on_three_calls_first_seen_at_local_receipt(bundle: Path) -> None:
    # The case's expectation pins only the code; the claim also says "at local
    # receipt, in each of three runs": hold the bundled evidence to that here.
    result = verify(bundle)
    case = next(r for r in result.cases if r.case.id == "tool-call-string-body-at-local-receipt")
    stages = [(r.details["path"], r.details["first_stage"]) for r in case.verdict.reasons]
    assert stages == [("body", "local_receipt")] * 3
    assert {r.details["call_id"] for r in case.verdict.reasons} == {
        "run-1/toolu-03",
        "run-2/toolu-03",
        "run-3/toolu-03",
    }
