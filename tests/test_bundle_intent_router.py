"""bundles/intent-router builds and verifies with every claim supported; a flipped
expected verdict or a changed recorded run moves exactly the claims it supports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bundler.cli import main
from bundler.run.verify import verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "bundles" / "intent-router"
RUN = "inputs/runs/suite-run.yaml"
CLAIMS = {
    "suite-meets-its-threshold",
    "one-invented-citation-fails-the-suite",
    "must-ask-cases-ask-the-one-question",
    "complete-requests-are-routed-in-silence",
    "unanswerable-requests-are-stopped",
    "request-defects-are-pointed-out",
    "contamination-check-can-fail",
    "only-the-failure-policy-separates-the-groups",
}


@pytest.fixture(scope="module")
def bundle(example_bundle: Callable[[str], Path]) -> Path:
    return example_bundle("intent-router")


def statuses(bundle_file: Path) -> tuple[int, dict[str, str]]:
    result = verify(bundle_file)
    return result.exit_code, {c.claim.id: c.status for c in result.claims}


def edited_run(edit: Any) -> dict[str, bytes]:
    """The recorded run after ``edit(doc)``, written back as YAML."""
    doc = yaml.safe_load((SOURCE / RUN).read_text(encoding="utf-8"))
    edit(doc)
    return {RUN: yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode()}


def test_intent_router_verifies_with_every_claim_supported(bundle: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["verify", str(bundle), "--json", str(report)])
    assert result.exit_code == 0, result.output
    code, claims = statuses(bundle)
    assert code == 0
    assert claims == dict.fromkeys(CLAIMS, "supported")
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    details = cases["suite-run-meets-its-threshold"]["details"]
    assert details["threshold"] == "10/12"
    rows = {row["case"]: row for row in details["cases"]}
    assert len(rows) == 12
    assert rows["ungrillable"]["result"] == "fail"
    assert rows["ungrillable"]["failed_assertions"] == ["timeout"]
    assert rows["fully-specified-auto-quiet"]["result"] == "pass"
    assert details["summary"]["passed"] == 11 and details["summary"]["timeouts"] == 1


def test_every_checked_case_has_a_control_with_the_same_checker_and_params() -> None:
    doc = yaml.safe_load((SOURCE / "bundle.yaml").read_text(encoding="utf-8"))

    def key(case: dict[str, Any]) -> str:
        return case["checker"] + json.dumps(case.get("params", {}), sort_keys=True)

    passing = {key(c) for c in doc["cases"] if c["expect"] == "pass"}
    controls = {key(c) for c in doc["cases"] if c["expect"] == "fail"}
    assert passing and passing <= controls, passing - controls


def test_flipped_expected_verdict_contradicts_its_claim(bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "case.premise-adr-auto")
        case["expect"] = "fail"

    flipped = edit_manifest(bundle, tmp_path / "flipped.bundle.tar.gz", flip)
    result = CliRunner().invoke(main, ["verify", str(flipped)])
    assert result.exit_code == 1, result.output
    _, claims = statuses(flipped)
    assert {k for k, v in claims.items() if v != "supported"} == {"request-defects-are-pointed-out"}
    assert claims["request-defects-are-pointed-out"] == "contradicted"


def test_one_invented_citation_in_the_recorded_run_contradicts_the_suite_claim(
    bundle: Path, tmp_path: Path
) -> None:
    def invent(doc: dict[str, Any]) -> None:
        spec = doc["git-only-fact"]["turns"][0]["spec"]
        spec["trace"].append({"step": "probe", "detail": "x", "evidence": "src/graphql/users.ts"})

    tampered = edit_manifest(
        bundle, tmp_path / "invented.bundle.tar.gz", lambda d: None, edited_run(invent)
    )
    code, claims = statuses(tampered)
    assert code == 1
    assert {k for k, v in claims.items() if v != "supported"} == {
        "suite-meets-its-threshold",
        "request-defects-are-pointed-out",
    }
    assert claims["suite-meets-its-threshold"] == "contradicted"


def test_a_timeout_is_not_a_pass_but_alone_does_not_sink_the_suite(
    bundle: Path, tmp_path: Path
) -> None:
    def time_out(doc: dict[str, Any]) -> None:
        doc["vague-no-ask"] = {
            "turns": [{"spec": None, "status": "timeout", "text": "", "exit": 124}],
            "runner_failures": [],
        }

    tampered = edit_manifest(
        bundle, tmp_path / "timeout.bundle.tar.gz", lambda d: None, edited_run(time_out)
    )
    code, claims = statuses(tampered)
    assert code == 1
    # 10 of 12 still pass with two timeouts: the suite claim stands; the case does not pass
    assert {k for k, v in claims.items() if v != "supported"} == {
        "unanswerable-requests-are-stopped"
    }
    assert claims["unanswerable-requests-are-stopped"] == "contradicted"
