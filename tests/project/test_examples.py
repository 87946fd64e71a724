"""End to end, every example bundle in bundles/: it builds, verifies with every claim
supported and every case reproduced, prints each claim's limits and the bundle's scope,
and a copy with one expected verdict flipped contradicts exactly the claims that case
supports. What only one example shows follows, one section per example.

The bundles are built (and verified) once per session by ``tests/conftest.py``, the same
ones the golden reports (``tests/reports/test_golden_reports.py``) compare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.authoring.templates import copy_template
from bundler.cli import main
from bundler.run.verify import Verification, verify
from tests.golden.regenerate import example_sources
from tests.helpers import REPO, edit_manifest, with_input

BUNDLES = REPO / "bundles"


@dataclass(frozen=True)
class Example:
    """What one example bundle must show."""

    claims: frozenset[str]  # every claim it makes, each supported
    cases: int  # its cases, each reproduced
    flip: str  # a case whose expected verdict is flipped ...
    contradicted: frozenset[str]  # ... contradicts these claims; the others stay supported
    prints: tuple[str, ...] = ()  # text of its limits and scope that verify must print


EXAMPLES = {
    "quickstart": Example(
        claims=frozenset({"accepts-equivalent-content", "order-and-types-matter"}),
        cases=4,
        flip="dropped-rule-is-caught",
        contradicted=frozenset({"accepts-equivalent-content"}),
        prints=("Shown on one config of four rules",),
    ),
    "config-change": Example(
        claims=frozenset(
            {
                "content-check-catches-collateral-deletion",
                "verdict-depends-on-declared-merge-semantics",
                "content-checker-tested-with-known-answers",
                "state-unchanged-at-two-observation-points",
                "write-attempts-are-detected-before-authorization",
                "config-plan-workflow-nine-cases",
                "review-shows-the-servers-answer-and-the-whole-change",
                "string-body-located-at-local-receipt",
            }
        ),
        cases=25,
        flip="content-only-target-request-loses-other-rules",
        contradicted=frozenset(
            {
                "content-check-catches-collateral-deletion",
                "verdict-depends-on-declared-merge-semantics",
            }
        ),
        prints=(
            "not continuous monitoring",  # a limit
            "A model completes the task on a re-run",  # the scope
            "Why the tool call's body became a string",
        ),
    ),
    "config-edits": Example(
        claims=frozenset({"five-of-six-runs-right"}),
        cases=7,
        flip="run-6",
        contradicted=frozenset({"five-of-six-runs-right"}),
    ),
    "intent-router": Example(
        claims=frozenset(
            {
                "suite-meets-its-threshold",
                "one-invented-citation-fails-the-suite",
                "must-ask-cases-ask-the-one-question",
                "complete-requests-are-routed-in-silence",
                "unanswerable-requests-are-stopped",
                "request-defects-are-pointed-out",
                "contamination-check-can-fail",
                "only-the-failure-policy-separates-the-groups",
            }
        ),
        cases=49,
        flip="case.premise-adr-auto",
        contradicted=frozenset({"request-defects-are-pointed-out"}),
    ),
    "inventory-faults": Example(
        claims=frozenset(
            {
                "reference-scenarios-pass-on-normal-service",
                "reference-scenarios-detect-all-three-faults",
                "each-fault-fails-its-targeted-assertion",
                "execution-errors-are-not-detections",
                "pass-at-3-is-not-pass-hat-3",
                "unbiased-pass-at-k-from-harness-samples",
            }
        ),
        cases=24,
        flip="missing-record-detected",
        contradicted=frozenset({"reference-scenarios-detect-all-three-faults"}),
    ),
    "trajectory-skeleton": Example(
        claims=frozenset(
            {
                "noise-is-tolerated",
                "missing-and-misordered-steps-fail",
                "stored-model-is-verified",
                "merge-guard-keeps-required-steps",
                "repeated-saves-are-required",
                "skeleton-beats-self-assessment-here",
            }
        ),
        cases=25,
        flip="labelled-t06",
        contradicted=frozenset(
            {"missing-and-misordered-steps-fail", "skeleton-beats-self-assessment-here"}
        ),
    ),
    "preregistered": Example(
        claims=frozenset({"grader-precision", "grader-recall"}),
        cases=4,
        flip="precision-control",
        contradicted=frozenset({"grader-precision"}),
        prints=("changed after pre-registration",),
    ),
}
NAMES = [source.name for source in example_sources()]


def statuses(bundle_file: Path) -> tuple[int, dict[str, str]]:
    result = verify(bundle_file)
    return result.exit_code, {c.claim.id: c.status for c in result.claims}


def case_of(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in doc["cases"] if c["id"] == case_id)


# -- every example ------------------------------------------------------------------------


def test_every_example_has_its_expectations_here() -> None:
    assert sorted(NAMES) == sorted(EXAMPLES), "add the new example bundle to EXAMPLES"


@pytest.mark.parametrize("name", NAMES)
def test_example_verifies_with_every_claim_supported(
    name: str, example_bundles: dict[str, Path], example_verifications: dict[str, Verification]
) -> None:
    example = EXAMPLES[name]
    result = example_verifications[name]
    assert result.exit_code == 0
    assert {c.claim.id: c.status for c in result.claims} == dict.fromkeys(
        example.claims, "supported"
    )
    assert [r.outcome for r in result.cases] == ["reproduced"] * example.cases
    cli = CliRunner().invoke(main, ["verify", str(example_bundles[name])])
    assert cli.exit_code == 0, cli.output
    assert cli.output.count("  supported     ") == len(example.claims)
    for text in example.prints:
        assert text in cli.output


@pytest.mark.parametrize("name", NAMES)
def test_flipped_expected_verdict_contradicts_its_claims(
    name: str, example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    example = EXAMPLES[name]

    def flip(doc: dict[str, Any]) -> None:
        case = case_of(doc, example.flip)
        case["expect"] = "fail" if case["expect"] == "pass" else "pass"
        if case["expect"] == "pass":  # what only an expected failure has goes too
            case.pop("expect_reasons", None)
            case.pop("kind", None)

    flipped = edit_manifest(example_bundles[name], tmp_path / "flipped.bundle.tar.gz", flip)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["verify", str(flipped), "--json", str(report)])
    assert result.exit_code == 1, result.output
    claims = {c["id"]: c["status"] for c in json.loads(report.read_text())["claims"]}
    assert {c for c, s in claims.items() if s == "contradicted"} == example.contradicted
    assert {c for c, s in claims.items() if s == "supported"} == example.claims - (
        example.contradicted
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_checked_case_has_a_control_with_the_same_checker_and_params(name: str) -> None:
    doc = yaml.safe_load((BUNDLES / name / "bundle.yaml").read_text(encoding="utf-8"))

    def key(case: dict[str, Any]) -> str:
        return case["checker"] + json.dumps(case.get("params", {}), sort_keys=True)

    passing = {key(c) for c in doc["cases"] if c["expect"] == "pass"}
    controls = {key(c) for c in doc["cases"] if c["expect"] == "fail"}
    assert passing and passing <= controls, passing - controls


# -- config-change ------------------------------------------------------------------------

CONFIG_CHANGE = BUNDLES / "config-change"


def test_config_plan_workflow_claim_has_the_nine_cases(
    example_verifications: dict[str, Verification],
) -> None:
    result = example_verifications["config-change"]
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


def test_negative_control_failing_for_another_reason_is_contradicted(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    def other_reason(doc: dict[str, Any]) -> None:
        case_of(doc, "plan-stale-diff")["expect_reasons"] = ["etag.mismatch"]

    bundle = example_bundles["config-change"]
    result = verify(edit_manifest(bundle, tmp_path / "x.bundle.tar.gz", other_reason))
    stale = next(r for r in result.cases if r.case.id == "plan-stale-diff")
    assert stale.outcome == "diverged"
    assert result.exit_code == 1


def test_malformed_trace_line_is_inconclusive_naming_the_line(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    path = "inputs/traces/read-only.jsonl"
    trace = (CONFIG_CHANGE / path).read_bytes()
    broken = trace + b'{"order": 5, "method": "PUT", "path": "/api/v1/config"\n'
    result = verify(
        with_input(example_bundles["config-change"], tmp_path / "x.bundle.tar.gz", path, broken)
    )
    case = next(r for r in result.cases if r.case.id == "trace-read-only-passes")
    assert case.outcome == "inconclusive"
    assert "inputs/traces/read-only.jsonl:5" in case.verdict.message
    assert result.exit_code == 4


def test_string_body_claim_rests_on_three_calls_first_seen_at_local_receipt(
    example_verifications: dict[str, Verification],
) -> None:
    # The case's expectation pins only the code; the claim also says "at local
    # receipt, in each of three runs": hold the bundled evidence to that here.
    result = example_verifications["config-change"]
    case = next(r for r in result.cases if r.case.id == "tool-call-string-body-at-local-receipt")
    stages = [(r.details["path"], r.details["first_stage"]) for r in case.verdict.reasons]
    assert stages == [("body", "local_receipt")] * 3
    assert {r.details["call_id"] for r in case.verdict.reasons} == {
        "run-1/toolu-03",
        "run-2/toolu-03",
        "run-3/toolu-03",
    }


# -- intent-router ------------------------------------------------------------------------

INTENT_ROUTER = BUNDLES / "intent-router"
RUN = "inputs/runs/suite-run.yaml"


def edited_run(edit: Any) -> bytes:
    """The recorded run after ``edit(doc)``, written back as YAML."""
    doc = yaml.safe_load((INTENT_ROUTER / RUN).read_text(encoding="utf-8"))
    edit(doc)
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode()


def test_intent_router_suite_run_reports_each_case_and_the_threshold(
    example_reports: dict[str, dict[str, Any]],
) -> None:
    cases = {c["id"]: c for c in example_reports["intent-router"]["cases"]}
    details = cases["suite-run-meets-its-threshold"]["details"]
    assert details["threshold"] == "10/12"
    rows = {row["case"]: row for row in details["cases"]}
    assert len(rows) == 12
    assert rows["ungrillable"]["result"] == "fail"
    assert rows["ungrillable"]["failed_assertions"] == ["timeout"]
    assert rows["fully-specified-auto-quiet"]["result"] == "pass"
    assert details["summary"]["passed"] == 11 and details["summary"]["timeouts"] == 1


def test_one_invented_citation_in_the_recorded_run_contradicts_the_suite_claim(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    def invent(doc: dict[str, Any]) -> None:
        spec = doc["git-only-fact"]["turns"][0]["spec"]
        spec["trace"].append({"step": "probe", "detail": "x", "evidence": "src/graphql/users.ts"})

    bundle = example_bundles["intent-router"]
    target = tmp_path / "invented.bundle.tar.gz"
    code, claims = statuses(with_input(bundle, target, RUN, edited_run(invent)))
    assert code == 1
    assert {k for k, v in claims.items() if v != "supported"} == {
        "suite-meets-its-threshold",
        "request-defects-are-pointed-out",
    }
    assert claims["suite-meets-its-threshold"] == "contradicted"


def test_a_timeout_is_not_a_pass_but_alone_does_not_sink_the_suite(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    def time_out(doc: dict[str, Any]) -> None:
        doc["vague-no-ask"] = {
            "turns": [{"spec": None, "status": "timeout", "text": "", "exit": 124}],
            "runner_failures": [],
        }

    bundle = example_bundles["intent-router"]
    target = tmp_path / "timeout.bundle.tar.gz"
    code, claims = statuses(with_input(bundle, target, RUN, edited_run(time_out)))
    assert code == 1
    # 10 of 12 still pass with two timeouts: the suite claim stands; the case does not pass
    assert {k for k, v in claims.items() if v != "supported"} == {
        "unanswerable-requests-are-stopped"
    }
    assert claims["unanswerable-requests-are-stopped"] == "contradicted"


# -- inventory-faults ---------------------------------------------------------------------

INVENTORY_FAULTS = BUNDLES / "inventory-faults"


def _set_status(path: str, test: str, status: str) -> tuple[str, bytes]:
    report = json.loads((INVENTORY_FAULTS / path).read_text(encoding="utf-8"))
    record = next(r for r in report["records"] if r["test"] == test)
    assert record["status"] != status
    record["status"] = status
    return path, json.dumps(report, indent=2).encode()


def _set_outcome(path: str, task: str, trial: int, outcome: str) -> tuple[str, bytes]:
    lines = []
    for line in (INVENTORY_FAULTS / path).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["task"] == task and record["trial"] == trial:
            assert record["outcome"] != outcome
            record["outcome"] = outcome
        lines.append(json.dumps(record))
    return path, ("\n".join(lines) + "\n").encode()


DETECT, TARGET = (
    "reference-scenarios-detect-all-three-faults",
    "each-fault-fails-its-targeted-assertion",
)
FLIPS = {
    "normal-service-fails-one": (
        _set_status("inputs/reports/none.json", "test_release_restores_available", "failed"),
        # none.json is also the control that a complete run is not an execution error
        {"reference-scenarios-pass-on-normal-service", "execution-errors-are-not-detections"},
    ),
    "reject-writes-assertion-passes": (
        _set_status(
            "inputs/reports/reject-writes.json",
            "test_reserve_beyond_stock_is_rejected_and_stock_unchanged",
            "passed",
        ),
        {DETECT, TARGET},
    ),
    "double-reserve-scenario-errors": (
        _set_status(
            "inputs/reports/double-reserve.json",
            "test_repeated_reserve_with_same_key_reserves_once",
            "error",
        ),
        {DETECT, TARGET},
    ),
    # three failures: neither the pinned count (4) nor the four named assertions
    "missing-record-conflict-code-passes": (
        _set_status(
            "inputs/reports/missing-record.json",
            "test_same_key_different_quantity_returns_409",
            "passed",
        ),
        {DETECT, TARGET},
    ),
    "connection-error-becomes-a-failure": (
        _set_status(
            "inputs/controls/reject-writes-connection-error.json",
            "test_reserve_beyond_stock_is_rejected_and_stock_unchanged",
            "failed",
        ),
        {DETECT, "execution-errors-are-not-detections"},
    ),
    "one-more-trial-succeeds": (
        _set_outcome("inputs/trials/inventory-tests-v2.jsonl", "release-flow", 2, "success"),
        {"pass-at-3-is-not-pass-hat-3"},
    ),
}


@pytest.mark.parametrize("flip", FLIPS.values(), ids=FLIPS.keys())
def test_flipping_one_recorded_status_contradicts_the_right_claims(
    example_bundles: dict[str, Path], tmp_path: Path, flip: Any
) -> None:
    (path, data), contradicted = flip
    bundle = example_bundles["inventory-faults"]
    code, claims = statuses(with_input(bundle, tmp_path / "edited.bundle.tar.gz", path, data))
    assert code == 1
    assert {c for c, s in claims.items() if s == "contradicted"} == contradicted
    everything = EXAMPLES["inventory-faults"].claims
    assert {c for c, s in claims.items() if s == "supported"} == everything - contradicted


def test_trial_template_builds_and_verifies_as_created(tmp_path: Path) -> None:
    copy_template("trial", tmp_path / "trial-001")
    built = build(tmp_path / "trial-001", tmp_path / "trial.bundle.tar.gz", 1700000000).path
    code, claims = statuses(built)
    assert code == 0
    assert set(claims.values()) == {"supported"}


# -- trajectory-skeleton ------------------------------------------------------------------

TRAJECTORY = BUNDLES / "trajectory-skeleton"


def test_changed_reference_trace_makes_the_stored_model_diverge(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    path = "inputs/search/references/r2.yaml"
    text = (TRAJECTORY / path).read_text(encoding="utf-8")
    changed = text.replace("label: query typed", "label: query pasted")
    assert changed != text
    bundle = example_bundles["trajectory-skeleton"]
    target = tmp_path / "edited.bundle.tar.gz"
    code, claims = statuses(with_input(bundle, target, path, changed.encode()))
    assert code == 1
    assert claims["stored-model-is-verified"] == "contradicted"


def test_predictions_table_matches_the_labelled_cases_and_trace_headers() -> None:
    """The skeleton column is what the re-run cases expect; the self-assessment column
    is what each trace header reports."""
    source = yaml.safe_load((TRAJECTORY / "bundle.yaml").read_text(encoding="utf-8"))
    expected = {
        c["id"].removeprefix("labelled-"): c["expect"]
        for c in source["cases"]
        if c["id"].startswith("labelled-")
    }
    folder = TRAJECTORY / "inputs" / "search"
    table = yaml.safe_load((folder / "predictions.yaml").read_text(encoding="utf-8"))
    assert {i["id"]: i["predictions"]["trajectory-skeleton"] for i in table["items"]} == expected
    for item in table["items"]:
        header = yaml.safe_load((folder / "labelled" / f"{item['id']}.yaml").read_text("utf-8"))
        said = "pass" if header["self_assessment"] == "success" else "fail"
        assert item["predictions"]["self-assessment"] == said


def test_regex_model_that_hides_the_guard_contradicts_the_merge_guard_claim(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    """The merge-guard claim is about learning: its cases must re-learn the regex model.
    A hand-edited model.json that gives the same verdicts but says the dominators alone
    kept both steps (no guard) must not leave the claim supported."""
    path = "inputs/regex/model.json"
    model = json.loads((TRAJECTORY / path).read_text(encoding="utf-8"))
    model["guard"] = []
    for entry in model["skeleton"]:
        entry["why"] = "dominator"
    for state in model["states"]:
        if state["why"] == "guard":
            state["why"] = "dominator"
    bundle = example_bundles["trajectory-skeleton"]
    target = tmp_path / "edited.bundle.tar.gz"
    code, claims = statuses(with_input(bundle, target, path, json.dumps(model, indent=2).encode()))
    assert code == 1
    assert claims["merge-guard-keeps-required-steps"] == "contradicted"
