"""bundles/inventory-faults builds, verifies with every claim supported, and a flipped
report status or expected verdict contradicts exactly the claim it supports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.authoring.templates import copy_template
from bundler.cli import main
from bundler.run.verify import verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "bundles" / "inventory-faults"
CLAIMS = {
    "reference-scenarios-pass-on-normal-service",
    "reference-scenarios-detect-all-three-faults",
    "each-fault-fails-its-targeted-assertion",
    "execution-errors-are-not-detections",
    "pass-at-3-is-not-pass-hat-3",
    "unbiased-pass-at-k-from-harness-samples",
}


@pytest.fixture(scope="module")
def bundle(example_bundle: Callable[[str], Path]) -> Path:
    return example_bundle("inventory-faults")


def statuses(bundle_file: Path) -> tuple[int, dict[str, str]]:
    result = verify(bundle_file)
    return result.exit_code, {c.claim.id: c.status for c in result.claims}


def test_inventory_faults_verifies_with_every_claim_supported(bundle: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(bundle)])
    assert result.exit_code == 0, result.output
    code, claims = statuses(bundle)
    assert code == 0
    assert claims == dict.fromkeys(CLAIMS, "supported")


def test_flipped_expected_verdict_contradicts_its_claim(bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "missing-record-detected")
        case["expect"] = "fail"

    flipped = edit_manifest(bundle, tmp_path / "flipped.bundle.tar.gz", flip)
    result = CliRunner().invoke(main, ["verify", str(flipped)])
    assert result.exit_code == 1, result.output
    _, claims = statuses(flipped)
    assert claims["reference-scenarios-detect-all-three-faults"] == "contradicted"


def _set_status(path: str, test: str, status: str) -> tuple[str, bytes]:
    report = json.loads((SOURCE / path).read_text(encoding="utf-8"))
    record = next(r for r in report["records"] if r["test"] == test)
    assert record["status"] != status
    record["status"] = status
    return path, json.dumps(report, indent=2).encode()


def _set_outcome(path: str, task: str, trial: int, outcome: str) -> tuple[str, bytes]:
    lines = []
    for line in (SOURCE / path).read_text(encoding="utf-8").splitlines():
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
    bundle: Path, tmp_path: Path, flip: Any
) -> None:
    (path, data), contradicted = flip
    edited = edit_manifest(
        bundle, tmp_path / "edited.bundle.tar.gz", lambda doc: None, {path: data}
    )
    code, claims = statuses(edited)
    assert code == 1
    assert {c for c, s in claims.items() if s == "contradicted"} == contradicted
    assert {c for c, s in claims.items() if s == "supported"} == CLAIMS - contradicted


def test_trial_template_builds_and_verifies_as_created(tmp_path: Path) -> None:
    copy_template("trial", tmp_path / "trial-001")
    built = build(tmp_path / "trial-001", tmp_path / "trial.bundle.tar.gz", 1700000000).path
    code, claims = statuses(built)
    assert code == 0
    assert set(claims.values()) == {"supported"}
